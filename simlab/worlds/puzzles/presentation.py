"""How the puzzles are drawn in the app and in exports: no 3D scene; the module as the solver sees it, with
the action just taken highlighted, stands in its place. The agent panels show the solver's module as sent
(annotated: the module a text-only solver was given in words)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PIL import Image

from simlab.core.episode import Episode
from simlab.core.family import FamilyViews, from_observation
from simlab.worlds.puzzles.puzzle import puzzle_class


def _module(state: Mapping[str, Any]) -> Image.Image:
    """The module a recorded state or observation holds, its ``highlight`` (the action just taken) marked."""
    return puzzle_class(str(state["puzzle"])).draw(state["snapshot"], state.get("highlight"))


def turn_pictures(episode: Episode, turn: int) -> dict[str, Image.Image]:
    """The module after ``turn``, the action taken in it highlighted."""
    state = episode.state_at(turn)
    return {"module": _module(state)} if state else {}


def observation_images(observation: Mapping[str, Any]) -> dict[str, Image.Image]:
    """The solver's picture of the module, re-drawn from the snapshot its observation recorded, when it was
    sent; the expert has none, nor has a text-only solver."""
    return _module_of(observation) if "module" in (observation.get("images") or []) else {}


def annotated_images(observation: Mapping[str, Any]) -> dict[str, Image.Image]:
    """For the researcher: the module a text-only solver was given in words, drawn from its snapshot."""
    return {} if "module" in (observation.get("images") or []) else _module_of(observation)


def _module_of(observation: Mapping[str, Any]) -> dict[str, Image.Image]:
    """The module as the solver's observation recorded it (none in the expert's, which has no snapshot)."""
    data = observation.get("data") or {}
    if "snapshot" not in data:
        return {}
    return {"module": _module(data)}  # the observation records no highlight: drawn as the world drew it


VIEWS = FamilyViews(
    observation_images=from_observation(observation_images),
    images_without_vtk=True,  # Pillow's drawing: the app draws a step's next turn's on its frame thread
    turn_pictures=turn_pictures,
    images_follow_turn=False,
    annotated_images=from_observation(annotated_images),
)
