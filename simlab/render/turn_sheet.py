"""A "window-like" picture of one turn, made without any window: the 3D scene, the builder's board, the
directors' walls and what was said and done, under a title bar. The CLI's ``replay --export png`` uses it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping

from PIL import Image, ImageDraw

from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.render.blocks_images import BACKGROUND, MUTED, STRIP, TEXT, board_image, wall_image
from simlab.render.blocks_scene import CAMERAS, blocks_scene, board_json_at, director_walls
from simlab.render.images import text_font
from simlab.render.scene import render_items
from simlab.render.transcript import FAILED_RGB, OK_RGB, RGB, role_colors

TITLE_RGB: RGB = (40, 46, 56)
_Box = tuple[int, int, int, int]


def _fit(image: Image.Image, width: int, height: int) -> Image.Image:
    """``image`` scaled down (never up) to fit ``width`` x ``height``, keeping its aspect."""
    scale = min(width / image.width, height / image.height, 1.0)
    return image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))), Image.LANCZOS)


def _event_line(e: Event) -> tuple[str, str, RGB | None] | None:
    """``(who, text, colour override)`` for the events a sheet lists; None for the rest."""
    if e.kind in ("message", "action"):
        return str(e.role), str(e.data.get("text", "")), None
    if e.kind == "result":
        if e.data.get("ok"):
            return "engine", f"ok: {e.data.get('message', '')}", OK_RGB
        code = e.data.get("error")
        return "engine", f"FAILED{f' [{code}]' if code else ''}: {e.data.get('message', '')}", FAILED_RGB
    if e.kind == "protocol_error":
        return (
            str(e.role or "engine"),
            f"PROTOCOL ERROR [{e.data.get('code')}]: {e.data.get('message', '')}",
            FAILED_RGB,
        )
    return None


def _draw_text_panel(image: Image.Image, box: _Box, lines: list[tuple[str, str, RGB]], size: int) -> None:
    """Wrapped ``who: text`` lines inside ``box``; what does not fit ends with an ellipsis line."""
    draw = ImageDraw.Draw(image)
    x0, y0, x1, y1 = box
    draw.rectangle(box, fill=(255, 255, 255), outline=STRIP)
    step, y = round(size * 1.35), y0 + 8
    chars = max(20, int((x1 - x0 - 24) / (size * 0.52)))
    for who, text, color in lines:
        wrapped = textwrap.wrap(f"{who}: {text}", chars) or [f"{who}:"]
        for k, part in enumerate(wrapped):
            if y + step > y1 - 4:
                draw.text((x0 + 12, y), "...", font=text_font(size), fill=MUTED)
                return
            draw.text((x0 + (12 if k == 0 else 28), y), part, font=text_font(size), fill=color)
            y += step
    if not lines:
        draw.text((x0 + 12, y), "(nothing said or done this turn)", font=text_font(size), fill=MUTED)


def _right_column(image: Image.Image, episode: Episode, turn: int, box: _Box) -> None:
    """The builder's board on top, the three walls below it."""
    x0, y0, x1, y1 = box
    width, height = x1 - x0, y1 - y0
    target = episode.task.get("board")
    board = _fit(board_image(board_json_at(episode, turn), 96, target_json=target), width, round(height * 0.58))
    image.paste(board, (x0 + (width - board.width) // 2, y0))
    walls = [wall_image(view, 72, target_json=target) for view in director_walls(episode).values()]
    top = y0 + board.height + 10
    for k, wall in enumerate(walls):
        small = _fit(wall, (width - 16) // max(1, len(walls)), y1 - top)
        image.paste(small, (x0 + k * (width // max(1, len(walls))), top))


def _title(image: Image.Image, episode: Episode, turn: int, height: int) -> None:
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, image.width, height), fill=TITLE_RGB)
    outcome = episode.summary.get("outcome", "unfinished")
    text = f"{episode.episode_id}  -  turn {turn} of {episode.last_turn}  -  {outcome}"
    metrics = episode.metrics_at(turn) or {}
    if isinstance(metrics.get("overall_progress"), (int, float)):
        text += f"  -  progress {metrics['overall_progress']:.2f}"
    draw.text((16, height // 2), text, font=text_font(round(height * 0.45)), fill=(255, 255, 255), anchor="lm")


def turn_lines(episode: Episode, turn: int, colors: Mapping[str, RGB]) -> list[tuple[str, str, RGB]]:
    """What a sheet lists for ``turn``: messages, actions, results and protocol errors, each with its colour."""
    out = []
    for e in episode.events_of_turn(turn):
        line = _event_line(e)
        if line is not None:
            who, text, color = line
            out.append((who, text, color or colors.get(who, TEXT)))
    return out


def turn_sheet(episode: Episode, turn: int, size: tuple[int, int] = (1600, 1000)) -> Image.Image:
    """One turn as a single image of ``size``: a title bar ("episode - turn N of M - outcome"), the 3D scene
    (free camera) large on the left, the builder's board and the directors' walls on the right, and the
    turn's messages, actions and engine result as wrapped text below."""
    width, height = size
    image = Image.new("RGB", size, BACKGROUND)
    bar, pad = max(28, height // 22), max(8, width // 100)
    _title(image, episode, turn, bar)
    scene_w, scene_h = round(width * 0.6), round(height * 0.68)
    scene = render_items(blocks_scene(episode, turn), CAMERAS["free"], (scene_w, scene_h))
    image.paste(scene, (pad, bar + pad))
    _right_column(image, episode, turn, (scene_w + 2 * pad, bar + pad, width - pad, bar + pad + scene_h))
    text_box = (pad, bar + 2 * pad + scene_h, width - pad, height - pad)
    _draw_text_panel(image, text_box, turn_lines(episode, turn, role_colors(episode)), max(11, height // 60))
    return image
