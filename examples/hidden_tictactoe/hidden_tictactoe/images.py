"""The board as a picture (Pillow), from an observation's ``data`` or a state plus the task's layout.

One function draws both roles' pictures: whatever the data holds is drawn, so the seer's data (with
``mines`` and ``target``) gives the seer's full board and the player's data gives the player's board. The
agent panels re-render a recorded observation from its ``data`` alone, so they show exactly what was seen.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from PIL import Image, ImageDraw
from simlab.render.images import text_font

from hidden_tictactoe.board import LINES, SIZE, Cell, parse_cell
from hidden_tictactoe.roles import PALETTE, PLAYER

CELL_PX = 96
MARGIN = 28
BACKGROUND = (250, 250, 247)
GRID = (90, 96, 104)
X_RGB = PALETTE[PLAYER]
O_RGB = (55, 60, 70)
MINE_RGB = (205, 35, 35)
SAFE_RGB = (200, 236, 200)
LABEL_RGB = (122, 127, 135)


def _cells(data: Mapping[str, Any], name: str) -> list[Cell]:
    out = []
    for value in data.get(name) or []:
        try:
            out.append(parse_cell(value))
        except ValueError:
            continue  # a damaged recording still draws what it can
    return out


def _box(cell: Cell, pad: int = 0) -> tuple[int, int, int, int]:
    x, y = MARGIN + cell[1] * CELL_PX, MARGIN + cell[0] * CELL_PX
    return (x + pad, y + pad, x + CELL_PX - pad, y + CELL_PX - pad)


def board_picture(data: Mapping[str, Any], cell_px: int = CELL_PX) -> Image.Image:
    """The board ``data`` describes (``blocked``, ``marks``, ``revealed`` and, for the seer, ``mines`` and
    ``target``), with row and column numbers; ``cell_px`` scales the result."""
    side = 2 * MARGIN + SIZE * CELL_PX
    image = Image.new("RGB", (side, side), BACKGROUND)
    draw = ImageDraw.Draw(image)
    for cell in _cells(data, "target"):
        draw.rectangle(_box(cell), fill=SAFE_RGB)
    _grid(draw)
    _draw_all(draw, _cells(data, "mines"), _mine, hidden=True)
    _draw_all(draw, _cells(data, "revealed"), _mine, hidden=False)
    _draw_all(draw, _cells(data, "blocked"), _o_mark)
    _draw_all(draw, _cells(data, "marks"), _x_mark)
    if cell_px != CELL_PX:
        scaled = round(side * cell_px / CELL_PX)
        image = image.resize((scaled, scaled), Image.Resampling.LANCZOS)
    return image


def _grid(draw: ImageDraw.ImageDraw) -> None:
    end = MARGIN + SIZE * CELL_PX
    for k in range(SIZE + 1):
        at = MARGIN + k * CELL_PX
        draw.line((at, MARGIN, at, end), fill=GRID, width=3)
        draw.line((MARGIN, at, end, at), fill=GRID, width=3)
    for k in range(SIZE):
        middle = MARGIN + k * CELL_PX + CELL_PX // 2
        draw.text((middle, MARGIN // 2), str(k), fill=LABEL_RGB, font=text_font(16), anchor="mm")
        draw.text((MARGIN // 2, middle), str(k), fill=LABEL_RGB, font=text_font(16), anchor="mm")


def _draw_all(draw: ImageDraw.ImageDraw, cells: Iterable[Cell], paint: Any, **options: Any) -> None:
    for cell in cells:
        if 0 <= cell[0] < SIZE and 0 <= cell[1] < SIZE:
            paint(draw, cell, **options)


def _x_mark(draw: ImageDraw.ImageDraw, cell: Cell) -> None:
    x0, y0, x1, y1 = _box(cell, 20)
    draw.line((x0, y0, x1, y1), fill=X_RGB, width=10)
    draw.line((x0, y1, x1, y0), fill=X_RGB, width=10)


def _o_mark(draw: ImageDraw.ImageDraw, cell: Cell) -> None:
    draw.ellipse(_box(cell, 20), outline=O_RGB, width=9)


def _mine(draw: ImageDraw.ImageDraw, cell: Cell, hidden: bool) -> None:
    """A hidden mine is an outlined red disc with an M; a mine stepped on is a solid one with a star."""
    box = _box(cell, 26)
    if hidden:
        draw.ellipse(box, outline=MINE_RGB, width=5)
        draw.text(_centre(cell), "M", fill=MINE_RGB, font=text_font(28), anchor="mm")
    else:
        draw.ellipse(box, fill=MINE_RGB)
        draw.text(_centre(cell), "*", fill=(255, 255, 255), font=text_font(40), anchor="mm")


def _centre(cell: Cell) -> tuple[int, int]:
    x0, y0, x1, y1 = _box(cell)
    return ((x0 + x1) // 2, (y0 + y1) // 2)


def layout_data(task: Mapping[str, Any], state: Mapping[str, Any] | None, hidden: bool) -> dict[str, Any]:
    """What :func:`board_picture` needs from a task and a recorded state: the seer's view when ``hidden``
    (mines and the safe line added), else the player's."""
    data: dict[str, Any] = {"blocked": task.get("blocked") or [], **dict(state or {})}
    if hidden:
        data["mines"] = task.get("mines") or []
        data["target"] = [list(c) for c in LINES.get(str(task.get("line")), ())]
    return data
