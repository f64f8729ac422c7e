"""How hidden tic-tac-toe is drawn in the app and in exports: the family's :class:`FamilyViews`.

SimLab imports this module by name (``"hidden_tictactoe.presentation:VIEWS"``) only when something is drawn,
so running episodes never loads pyvista or VTK.

* agent panels: each role's board re-drawn from its recorded observation ``data`` (the seer's with the mines
  and the safe line, the player's without);
* exports: both boards after each turn beside the 3D scene;
* the 3D view: :func:`~hidden_tictactoe.scene.tictactoe_scene` with the cameras ``free``, ``player``, ``seer``;
  its overlay toggle ("Mines & safe line") shows what only the seer knows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PIL import Image
from simlab.core.episode import Episode
from simlab.core.family import FamilyViews

from hidden_tictactoe.images import board_picture, layout_data
from hidden_tictactoe.scene import CAMERAS, tictactoe_scene


def observation_images(observation: Mapping[str, Any], episode: Episode, turn: int) -> dict[str, Image.Image]:
    """The board a recorded observation showed its role (drawn from the observation's own data)."""
    return {"board": board_picture(observation.get("data") or {})}


def turn_pictures(episode: Episode, turn: int) -> dict[str, Image.Image]:
    """Both roles' boards after ``turn``."""
    state = episode.state_at(turn)
    return {
        "seer's board": board_picture(layout_data(episode.task, state, hidden=True), 72),
        "player's board": board_picture(layout_data(episode.task, state, hidden=False), 72),
    }


VIEWS = FamilyViews(
    observation_images=observation_images,
    turn_pictures=turn_pictures,
    scene=tictactoe_scene,
    cameras=lambda _episode: CAMERAS,
    default_camera="free",
    overlay_label="Mines & safe line",
)
