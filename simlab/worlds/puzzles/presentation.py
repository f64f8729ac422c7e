"""How the puzzles are drawn in the app and in exports: no 3D scene; the module as the solver sees it, with
the action just taken highlighted, stands in its place."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PIL import Image

from simlab.core.episode import Episode
from simlab.core.family import FamilyViews
from simlab.worlds.puzzles.puzzle import puzzle_class


def _module(state: Mapping[str, Any]) -> Image.Image:
    return puzzle_class(str(state["puzzle"])).draw(state["snapshot"], state.get("highlight"))


def turn_pictures(episode: Episode, turn: int) -> dict[str, Image.Image]:
    """The module after ``turn``, the action taken in it highlighted."""
    state = episode.state_at(turn)
    return {"module": _module(state)} if state else {}


def observation_images(observation: Mapping[str, Any], episode: Episode, turn: int) -> dict[str, Image.Image]:
    """The solver's picture, re-drawn from the snapshot its observation recorded; the expert has none."""
    data = observation.get("data") or {}
    if "snapshot" not in data:
        return {}
    return {"module": puzzle_class(str(data["puzzle"])).draw(data["snapshot"])}


VIEWS = FamilyViews(observation_images=observation_images, turn_pictures=turn_pictures, images_follow_turn=False)
