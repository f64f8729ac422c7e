"""Animated replays: one frame per turn, written as GIF or MP4 with imageio.

A frame is the turn's big picture (:func:`simlab.render.episode_pictures.main_picture`): the family's 3D
scene from a camera preset, or its turn pictures side by side for a family without a 3D scene."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from simlab.core.episode import Episode
from simlab.core.errors import SimlabError
from simlab.render.episode_pictures import main_picture
from simlab.render.formatting import TEXT_RGB
from simlab.render.images import text_font

FORMATS: tuple[str, ...] = (".gif", ".mp4")


def turn_frame(
    episode: Episode, turn: int, camera: str | None = None, size: tuple[int, int] = (800, 600)
) -> Image.Image:
    """The picture of ``turn`` (the 3D scene from ``camera``, default the family's) with a "turn N of M"
    caption in the top-left corner."""
    image, _ = main_picture(episode, turn, size, camera)
    draw = ImageDraw.Draw(image)
    draw.text(
        (12, 10),
        f"{episode.episode_id}  turn {turn} of {episode.last_turn}",
        font=text_font(max(12, size[1] // 30)),
        fill=TEXT_RGB,
    )
    return image


def _check_range(episode: Episode, first: int, last: int) -> None:
    if not 0 <= first <= last <= episode.last_turn:
        raise SimlabError(
            f"turns {first}..{last}: expected 0 <= first <= last <= {episode.last_turn} (episode {episode.episode_id})"
        )


def _check_mp4_plugin(path: Path) -> None:
    try:
        import imageio_ffmpeg  # noqa: F401 -- only to check the plugin is there
    except ImportError:
        raise SimlabError(f"{path}: writing MP4 needs the ffmpeg plugin: pip install imageio-ffmpeg") from None


def _write_mp4(path: Path, frames: list[np.ndarray], fps: float) -> None:
    import imageio.v2 as iio2

    iio2.mimwrite(path, frames, fps=fps, macro_block_size=8)  # type: ignore[arg-type]


def write_animation(
    episode: Episode,
    first: int,
    last: int,
    path: str | Path,
    fps: float = 2.0,
    camera: str | None = None,
    size: tuple[int, int] = (800, 600),
) -> Path:
    """Write turns ``first``..``last`` (inclusive, one frame each) to ``path``: a looping GIF (Pillow) or an
    MP4 (needs ``imageio-ffmpeg``), chosen by the suffix. Returns the path."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise SimlabError(f"{path}: expected a file ending in {' or '.join(FORMATS)}")
    _check_range(episode, first, last)
    if path.suffix.lower() == ".mp4":
        _check_mp4_plugin(path)
    frames = [np.asarray(turn_frame(episode, t, camera, size)) for t in range(first, last + 1)]
    if path.suffix.lower() == ".mp4":
        _write_mp4(path, frames, fps)
        return path
    import imageio.v3 as iio

    iio.imwrite(path, frames, extension=".gif", plugin="pillow", duration=round(1000 / fps), loop=0)
    return path
