"""How the boards world is drawn in the app and in exports (the family's :class:`FamilyViews`).

The 3D view shows the robot's board after a turn with the target as its overlay (missing pieces as ghosts or
wireframes, extra and wrong pieces outlined); the agent panels re-render the pictures a model was given
(target, layer-wise targets, the robot's board, the legend) from the recorded observation, and annotated the
board and target a text condition gave as text; exports add the robot's board per turn, marked against the
target, and the target once.
"""

from __future__ import annotations

from PIL import Image

from simlab.core.episode import Episode
from simlab.core.family import FamilyViews, Layer, from_observation
from simlab.worlds.boards.images import (
    DIFF_LABELS,
    DIFF_RGB,
    annotated_images,
    board_image,
    observation_images,
    target_image,
)
from simlab.worlds.boards.scene import board_at, boards_cameras, boards_scene, target_board


def turn_pictures(episode: Episode, turn: int) -> dict[str, Image.Image]:
    """The robot's board after ``turn``, each cell that differs from the target marked."""
    target = target_board(episode).to_json()
    return {"board": board_image(board_at(episode, turn).to_json(), target_json=target)}


def episode_pictures(episode: Episode) -> dict[str, Image.Image]:
    """The target board, all levels."""
    return {"target": target_image(target_board(episode).to_json())}


LAYERS = (
    Layer(
        "Target",
        ("target",),
        (("missing target piece", (200, 200, 200)),),
        "The target's pieces with a place still empty, as ghosts or wireframes (the Target menu)",
    ),
    Layer(
        "Differences",
        ("difference",),
        tuple((DIFF_LABELS[kind], DIFF_RGB[kind]) for kind in ("extra", "wrong")),
        "An outline around each place holding a piece the target does not have there",
    ),
    Layer("Pieces", ("piece",), help="The pieces on the board after the turn"),
    Layer("Numbers", ("label",), help="Row and column numbers, as the programmer and robot name places"),
)
"""The boards view's layers: the target overlay, the differences, the pieces and the grid numbers."""

VIEWS = FamilyViews(
    observation_images=from_observation(observation_images),
    images_without_vtk=True,  # Pillow's drawing: the app draws a step's next turn's on its frame thread
    turn_pictures=turn_pictures,
    scene=boards_scene,
    cameras=boards_cameras,
    default_camera="close",
    overlay_label="Target",
    overlay_help="The target: its pieces still missing as translucent ghosts or wireframes (or hidden); extra "
    "pieces outlined in magenta, wrong ones in black",
    episode_pictures=episode_pictures,
    layers=LAYERS,
    annotated_images=from_observation(annotated_images),
)
