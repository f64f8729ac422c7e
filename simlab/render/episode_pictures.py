"""The pictures of an episode that exports show, from whatever its family declares (no family named here).

A family's :class:`~simlab.core.family.FamilyViews` gives an optional 3D scene with camera presets, the 2D
pictures of each turn and those shown once; :func:`main_picture` is the big picture of a turn (the 3D scene,
or for a family without one its turn pictures side by side), used by the turn sheet and the animations.
"""

from __future__ import annotations

from PIL import Image

from simlab.core.episode import Episode
from simlab.core.errors import ConfigError, SimlabError
from simlab.core.family import FamilyViews
from simlab.render.images import BACKGROUND, fit

GAP = 12


def views_of(episode: Episode) -> FamilyViews | None:
    """The views of the episode's family, or None for a world this SimLab does not know."""
    from simlab.worlds import get_family

    try:
        return get_family(episode.world).load_views()
    except ConfigError:
        return None


def scene_picture(
    episode: Episode, turn: int, size: tuple[int, int], camera: str | None = None, overlay: bool = True
) -> Image.Image | None:
    """The 3D scene after ``turn`` from ``camera`` (default: the family's), or None without a 3D scene."""
    from simlab.render.scene import render_items

    views = views_of(episode)
    if views is None or views.scene is None:
        return None
    cameras = views.cameras(episode)
    name = camera or views.default_camera
    if name not in cameras:
        raise SimlabError(f"unknown camera {name!r}; expected one of {', '.join(cameras)}")
    return render_items(views.scene(episode, turn, overlay=overlay), cameras[name], size)


def turn_pictures(episode: Episode, turn: int) -> dict[str, Image.Image]:
    """The family's 2D pictures of ``turn`` (empty for an unknown world)."""
    views = views_of(episode)
    return views.turn_pictures(episode, turn) if views is not None else {}


def once_pictures(episode: Episode) -> dict[str, Image.Image]:
    """The family's pictures shown once per episode (empty for an unknown world)."""
    views = views_of(episode)
    return views.episode_pictures(episode) if views is not None else {}


def side_by_side(images: list[Image.Image], size: tuple[int, int]) -> Image.Image:
    """``images`` scaled into equal columns of one picture of ``size``, centred."""
    canvas = Image.new("RGB", size, BACKGROUND)
    if not images:
        return canvas
    column = (size[0] - GAP * (len(images) - 1)) // len(images)
    for k, image in enumerate(images):
        small = fit(image, column, size[1])
        canvas.paste(small, (k * (column + GAP) + (column - small.width) // 2, (size[1] - small.height) // 2))
    return canvas


def main_picture(
    episode: Episode, turn: int, size: tuple[int, int], camera: str | None = None
) -> tuple[Image.Image, bool]:
    """The big picture of ``turn``: the 3D scene, or the turn pictures side by side for a family without one.
    The flag says whether it was the 3D scene (the turn pictures are then still to be shown)."""
    scene = scene_picture(episode, turn, size, camera)
    if scene is not None:
        return scene, True
    return side_by_side(list(turn_pictures(episode, turn).values()), size), False
