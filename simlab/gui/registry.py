"""From a world family to how the app shows it (napari's registry from model type to view type).

The window is built around this table, not around blocks: a family contributes its 3D scene builder, its
camera presets (with the one to start from) and the function that renders an observation's images for the
agent panels. The rooms world adds its own entry here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from PIL import Image

from simlab.core.episode import Episode
from simlab.render.scene import CameraPose, SceneItem

SceneBuilder = Callable[..., list[SceneItem]]  # (episode, turn, show_target=..., target_style=...) -> items
ImagesFor = Callable[[Mapping[str, Any], Episode, int], dict[str, Image.Image]]  # (observation, episode, turn)


@dataclass(frozen=True)
class WorldViews:
    """How one family is drawn: its scene, its camera presets for an episode (name -> pose, in button order)
    and the one to start from, the pictures of an observation, what the overlay toggle is called, and
    whether the pictures change with the turn (rooms outline the objects the current message names)."""

    scene: SceneBuilder
    cameras: Callable[[Episode], Mapping[str, CameraPose]]
    default_camera: str
    images_for: ImagesFor
    overlay_label: str = "Target"
    images_follow_turn: bool = False


def _blocks() -> WorldViews:
    from simlab.render.blocks_images import observation_images
    from simlab.render.blocks_scene import CAMERAS, blocks_scene

    return WorldViews(blocks_scene, lambda _e: CAMERAS, "free", lambda obs, _e, _t: observation_images(obs))


def _rooms() -> WorldViews:
    from simlab.render.rooms_scene import observation_pictures, rooms_cameras, rooms_scene

    return WorldViews(rooms_scene, rooms_cameras, "free", observation_pictures, "Visibility", True)


_FACTORIES: dict[str, Callable[[], WorldViews]] = {"blocks": _blocks, "rooms": _rooms}
_CACHE: dict[str, WorldViews] = {}


def views_for(world: str) -> WorldViews | None:
    """The views of a family, or None when the app has no views for it yet (the window then says so)."""
    if world not in _CACHE and world in _FACTORIES:
        _CACHE[world] = _FACTORIES[world]()
    return _CACHE.get(world)


def views_for_episode(episode: Episode | None) -> WorldViews | None:
    return views_for(episode.world) if episode is not None else None
