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
ImagesFor = Callable[[Mapping[str, Any]], dict[str, Image.Image]]


@dataclass(frozen=True)
class WorldViews:
    """How one family is drawn: scene, camera presets (name -> pose, in menu order), default camera, images."""

    scene: SceneBuilder
    cameras: Mapping[str, CameraPose]
    default_camera: str
    images_for: ImagesFor
    target_label: str = "Target"


def _blocks() -> WorldViews:
    from simlab.render.blocks_images import observation_images
    from simlab.render.blocks_scene import CAMERAS, blocks_scene

    return WorldViews(blocks_scene, CAMERAS, "free", observation_images, "Target structure")


_FACTORIES: dict[str, Callable[[], WorldViews]] = {"blocks": _blocks}
_CACHE: dict[str, WorldViews] = {}


def views_for(world: str) -> WorldViews | None:
    """The views of a family, or None when the app has no views for it yet (the window then says so)."""
    if world not in _CACHE and world in _FACTORIES:
        _CACHE[world] = _FACTORIES[world]()
    return _CACHE.get(world)


def views_for_episode(episode: Episode | None) -> WorldViews | None:
    return views_for(episode.world) if episode is not None else None
