"""Animated replays: one frame per turn, written as GIF or MP4 with imageio.

A frame is the turn's big picture (:func:`simlab.render.episode_pictures.main_picture`): the family's 3D
scene from a camera preset, or its turn pictures side by side for a family without a 3D scene. With
``dialogue`` the frame also shows, beside the picture, what was said and done that turn and the engine's
results (private reasoning stays out), under a bar with the turn, the family's headline metric at that turn
and, on the episode's last turn, its outcome: a frame a researcher can put in a talk as it is."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
from PIL import Image, ImageDraw

from simlab.core.episode import Episode
from simlab.core.errors import SimlabError
from simlab.core.limits import MAX_FRAMES
from simlab.core.writing import write_through_scratch
from simlab.render.episode_pictures import main_picture
from simlab.render.formatting import TEXT_RGB, episode_colours
from simlab.render.images import BACKGROUND, text_font
from simlab.render.turn_sheet import text_panel, title_bar, turn_lines

FORMATS: tuple[str, ...] = (".gif", ".mp4")


DIALOGUE_SHARE = 0.75
"""The dialogue panel's width beside the picture, as a share of the picture's."""


def turn_frame(
    episode: Episode, turn: int, camera: str | None = None, size: tuple[int, int] = (800, 600), dialogue: bool = False
) -> Image.Image:
    """The picture of ``turn`` (the 3D scene from ``camera``, default the family's) with a "turn N of M"
    caption in the top-left corner; with ``dialogue``, the turn's dialogue and outcome beside it (see the
    module docstring)."""
    if dialogue:
        return _dialogue_frame(episode, turn, camera, size)
    image, _ = main_picture(episode, turn, size, camera)
    draw = ImageDraw.Draw(image)
    draw.text(
        (12, 10),
        f"{episode.episode_id}  turn {turn} of {episode.last_turn}",
        font=text_font(max(12, size[1] // 30)),
        fill=TEXT_RGB,
    )
    return image


def _dialogue_frame(episode: Episode, turn: int, camera: str | None, size: tuple[int, int]) -> Image.Image:
    width, height = size
    bar, pad = max(28, height // 20), max(8, width // 80)
    frame = Image.new("RGB", (width + round(width * DIALOGUE_SHARE), height + bar), BACKGROUND)
    title_bar(frame, episode, turn, bar, outcome=turn == episode.last_turn)
    picture, _ = main_picture(episode, turn, size, camera)
    frame.paste(picture, (0, bar))
    lines = turn_lines(episode, turn, episode_colours(episode))
    text_panel(frame, (width + pad, bar + pad, frame.width - pad, frame.height - pad), lines, max(12, height // 40))
    return frame


def _check_range(episode: Episode, first: int, last: int) -> None:
    if not 0 <= first <= last <= episode.last_turn:
        raise SimlabError(
            f"turns {first}..{last}: expected 0 <= first <= last <= {episode.last_turn} (episode {episode.episode_id})"
        )
    if last - first + 1 > MAX_FRAMES:
        raise SimlabError(f"turns {first}..{last}: an animation holds at most {MAX_FRAMES} frames (a turn each)")


def _check_mp4_plugin(path: Path) -> None:
    try:
        import imageio_ffmpeg  # noqa: F401 -- only to check the plugin is there
    except ImportError:
        raise SimlabError(f"{path}: writing MP4 needs the ffmpeg plugin: pip install imageio-ffmpeg") from None


def _write_mp4(path: Path, frames: list[np.ndarray], fps: float) -> None:
    import imageio.v2 as iio2

    images: list[npt.ArrayLike] = list(frames)  # imageio asks for a list of array-likes (lists are invariant)
    iio2.mimwrite(path, images, fps=fps, macro_block_size=8)


def _write_gif(path: Path, frames: list[np.ndarray], fps: float) -> None:
    import imageio.v3 as iio

    iio.imwrite(path, frames, extension=".gif", plugin="pillow", duration=round(1000 / fps), loop=0)


def write_animation(
    episode: Episode,
    first: int,
    last: int,
    path: str | Path,
    fps: float = 2.0,
    camera: str | None = None,
    size: tuple[int, int] = (800, 600),
    dialogue: bool = False,
) -> Path:
    """Write turns ``first``..``last`` (inclusive, one frame each) to ``path``: a looping GIF (Pillow) or an
    MP4 (needs ``imageio-ffmpeg``), chosen by the suffix; ``dialogue`` puts each turn's dialogue and outcome
    beside its picture. Returns the path."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise SimlabError(f"{path}: expected a file ending in {' or '.join(FORMATS)}")
    _check_range(episode, first, last)
    if path.suffix.lower() == ".mp4":
        _check_mp4_plugin(path)
    frames = [np.asarray(turn_frame(episode, t, camera, size, dialogue)) for t in range(first, last + 1)]
    encode = _write_mp4 if path.suffix.lower() == ".mp4" else _write_gif
    return write_through_scratch(path, lambda out: encode(out, frames, fps))  # never through a link at ``path``
