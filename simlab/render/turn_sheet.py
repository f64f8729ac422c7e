"""A "window-like" picture of one turn, made without any window: the big picture of the turn, the family's
other pictures beside it, and what was said and done, under a title bar. The CLI's ``replay --export png``
uses it; what is drawn is whatever the episode's family declares (see :mod:`simlab.render.episode_pictures`).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping

from PIL import Image, ImageDraw

from simlab.core.episode import Episode
from simlab.core.family import RGB
from simlab.render.episode_pictures import main_picture, once_pictures, turn_pictures
from simlab.render.formatting import MUTED_RGB, TEXT_RGB, TONE_RGB, episode_colours, event_line, headline_metrics
from simlab.render.images import BACKGROUND, fit, text_font

TITLE_RGB: RGB = (40, 46, 56)
STRIP_RGB: RGB = (236, 238, 242)
_Box = tuple[int, int, int, int]


CAPTION = 15  # pixel height of a picture's caption


def _captioned(image: Image.Image, name: str, picture: Image.Image, at: tuple[int, int], box: tuple[int, int]) -> int:
    """``picture`` fitted into ``box`` (width, height) under its caption at ``at``; returns the height used."""
    small = fit(picture, box[0], max(1, box[1] - CAPTION))
    draw = ImageDraw.Draw(image)
    draw.text((at[0] + (box[0] - small.width) // 2, at[1]), name, font=text_font(CAPTION - 3), fill=MUTED_RGB)
    image.paste(small, (at[0] + (box[0] - small.width) // 2, at[1] + CAPTION))
    return small.height + CAPTION


def _column(image: Image.Image, pictures: Mapping[str, Image.Image], box: _Box) -> int:
    """``pictures`` stacked top-down in ``box`` under their names, each fitted to the width and a fair share
    of the height; returns the y below the last one."""
    x0, y0, x1, y1 = box
    y = y0
    for k, (name, picture) in enumerate(pictures.items()):
        y += _captioned(image, name, picture, (x0, y), (x1 - x0, (y1 - y) // (len(pictures) - k))) + 8
    return y


def _row(image: Image.Image, pictures: Mapping[str, Image.Image], box: _Box) -> None:
    """``pictures`` side by side in equal cells of ``box``, under their names."""
    x0, y0, x1, y1 = box
    if not pictures or y1 - y0 < 40:
        return
    cell = (x1 - x0) // len(pictures)
    for k, (name, picture) in enumerate(pictures.items()):
        _captioned(image, name, picture, (x0 + k * cell, y0), (cell - 8, y1 - y0))


def title_bar(image: Image.Image, episode: Episode, turn: int, height: int, outcome: bool = True) -> None:
    """A dark bar across the top: "episode - turn N of M - outcome - headline metric" (the outcome left out
    with ``outcome`` False, as an animation does until its last turn)."""
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, image.width, height), fill=TITLE_RGB)
    text = f"{episode.episode_id}  -  turn {turn} of {episode.last_turn}"
    if outcome:
        text += f"  -  {episode.summary.get('outcome', 'unfinished')}"
    metrics = episode.metrics_at(turn) or {}
    metric = next((m for m in headline_metrics(episode) if isinstance(metrics.get(m), (int, float))), None)
    if metric is not None:
        text += f"  -  {metric} {metrics[metric]:.2f}"
    draw.text((16, height // 2), text, font=text_font(round(height * 0.45)), fill=(255, 255, 255), anchor="lm")


def turn_lines(episode: Episode, turn: int, colours: Mapping[str, RGB]) -> list[tuple[str, str, RGB]]:
    """What a sheet lists for ``turn``: ``(who, text, colour)`` for each message, action, result and protocol
    error (private reasoning stays out), worded by the one event formatter."""
    out = []
    for event in episode.events_of_turn(turn):
        line = event_line(event)
        if line is not None and line.kind != "reasoning":
            colour = TONE_RGB.get(line.tone) or colours.get(line.who, TEXT_RGB)
            out.append((line.who, line.plain(), colour))
    return out


def text_panel(image: Image.Image, box: _Box, lines: list[tuple[str, str, RGB]], size: int) -> None:
    """Wrapped ``who: text`` lines inside ``box``; what does not fit ends with an ellipsis line."""
    draw = ImageDraw.Draw(image)
    x0, y0, x1, y1 = box
    draw.rectangle(box, fill=(255, 255, 255), outline=STRIP_RGB)
    step, y = round(size * 1.35), y0 + 8
    chars = max(20, int((x1 - x0 - 24) / (size * 0.52)))
    for who, text, colour in lines:
        wrapped = textwrap.wrap(f"{who}: {text}", chars) or [f"{who}:"]
        for k, part in enumerate(wrapped):
            if y + step > y1 - 4:
                draw.text((x0 + 12, y), "...", font=text_font(size), fill=MUTED_RGB)
                return
            draw.text((x0 + (12 if k == 0 else 28), y), part, font=text_font(size), fill=colour)
            y += step
    if not lines:
        draw.text((x0 + 12, y), "(nothing said or done this turn)", font=text_font(size), fill=MUTED_RGB)


def turn_sheet(episode: Episode, turn: int, size: tuple[int, int] = (1600, 1000)) -> Image.Image:
    """One turn as a single image of ``size``: a title bar ("episode - turn N of M - outcome - headline
    metric"), the big picture of the turn on the left (the 3D scene, or the family's turn pictures), the
    family's other pictures on the right (the turn's above those shown once), and the turn's messages,
    actions, engine results and protocol errors as wrapped text below."""
    width, height = size
    image = Image.new("RGB", size, BACKGROUND)
    bar, pad = max(28, height // 22), max(8, width // 100)
    title_bar(image, episode, turn, bar)
    main_w, main_h = round(width * 0.6), round(height * 0.68)
    picture, was_scene = main_picture(episode, turn, (main_w, main_h))
    image.paste(picture, (pad, bar + pad))
    right: _Box = (main_w + 2 * pad, bar + pad, width - pad, bar + pad + main_h)
    once = once_pictures(episode)
    if was_scene:
        stacked = turn_pictures(episode, turn)
        split = right[1] + round(main_h * (0.58 if once else 1.0))
        below = _column(image, stacked, (right[0], right[1], right[2], split))
        _row(image, once, (right[0], below, right[2], right[3]))
    else:
        _column(image, once, right)
    text_box = (pad, bar + 2 * pad + main_h, width - pad, height - pad)
    text_panel(image, text_box, turn_lines(episode, turn, episode_colours(episode)), max(11, height // 60))
    return image
