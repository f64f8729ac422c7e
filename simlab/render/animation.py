"""Animated replays: one frame per turn of the 3D scene, written as GIF or MP4 with imageio."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from simlab.core.episode import Episode
from simlab.core.errors import SimlabError
from simlab.render.blocks_images import TEXT
from simlab.render.blocks_scene import CAMERAS, blocks_scene
from simlab.render.images import text_font
from simlab.render.scene import render_items

FORMATS: tuple[str, ...] = (".gif", ".mp4")


def turn_frame(episode: Episode, turn: int, camera: str = "free", size: tuple[int, int] = (800, 600)) -> Image.Image:
    """The 3D scene after ``turn`` from ``camera`` with a "turn N of M" caption in the top-left corner."""
    if camera not in CAMERAS:
        raise SimlabError(f"unknown camera {camera!r}; expected one of {', '.join(CAMERAS)}")
    image = render_items(blocks_scene(episode, turn), CAMERAS[camera], size)
    draw = ImageDraw.Draw(image)
    draw.text(
        (12, 10),
        f"{episode.episode_id}  turn {turn} of {episode.last_turn}",
        font=text_font(max(12, size[1] // 30)),
        fill=TEXT,
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
    camera: str = "free",
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
