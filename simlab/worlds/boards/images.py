"""Pictures of the cobot board seen from above: the target (whole, or levels 1..k), the robot's board
(optionally marked against the target) and a legend of the shapes and colours. Pillow only.

Every function takes the JSON form (``Board.to_json()``), so recordings re-render exactly what a model was
shown, and returns an RGB :class:`PIL.Image.Image`. The same input always gives the same pixels.

The drawing follows the reference game's pictures: white cells with black edges, row 1 at
the top and column 1 at the left, both numbered 1-based on the margins; levels are drawn bottom to top, so a
higher piece hides what is under it. A washer is a diamond through the cell-edge midpoints, a nut a centred
square of 0.8 cell, a screw a centred circle of radius 1/3 cell, a bridge one 1.6 x 0.6 cell rectangle over
its two cells. Because a top-down picture hides what is underneath, every occupied cell carries its stack
height in a small badge at its top-left corner (the text listing stays the exact record).

Colours: red, green, blue and yellow. The reference draws yellow as orange; we draw it as a deep golden
yellow instead, because a model shown orange names the colour "orange", which the robot API refuses (it
knows only the four names). Every piece has a darker outline, so yellow stays visible on white.

At 64 px per cell (the default) an 8x8 board is 559 x 605 px (559 x 630 with the difference key) and the
legend 640 x 353: small enough for any vision model's input, and the numbers stay legible scaled to 512 px.
Text uses Pillow's bundled font (:func:`simlab.render.images.text_font`), as every SimLab picture does, so
the pixels are the same on every machine.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from PIL import Image, ImageDraw

from simlab.render.images import text_font
from simlab.worlds.boards.model import HALF_OF, Board, Cell, second_cell
from simlab.worlds.boards.text import differences

RGB = tuple[int, int, int]
Box = tuple[int, int, int, int]

CELL_PX = 64
COLOUR_RGB: dict[str, RGB] = {
    "red": (214, 39, 40),
    "green": (44, 160, 44),
    "blue": (31, 100, 210),
    "yellow": (242, 196, 0),
}
"""Fill of each piece colour: four hues far apart (yellow drawn yellow, not the reference's orange)."""

WHITE: RGB = (255, 255, 255)
PAGE: RGB = (252, 252, 250)
EDGE: RGB = (0, 0, 0)
TEXT: RGB = (34, 38, 44)
MUTED: RGB = (96, 102, 110)
SAMPLE: RGB = (150, 154, 160)
"""The neutral grey of the legend's shape samples (a shape is the same in every colour)."""

DIFF_RGB: dict[str, RGB] = {"missing": (118, 42, 214), "extra": (226, 0, 140), "wrong": (20, 20, 20)}
"""Marker colour of each kind of difference: violet, magenta and black, none of them a piece colour."""
DIFF_LABELS: dict[str, str] = {"missing": "missing piece", "extra": "extra piece", "wrong": "wrong piece"}
DIFF_ORDER = ("wrong", "missing", "extra")
"""Which kind a cell shows when several levels differ (a wrong piece matters most)."""

BADGE_NOTE = "Corner number = pieces stacked in the cell; only the top one is seen from above."


@dataclass(frozen=True)
class Solid:
    """One piece as drawn: ``shape`` is what ``put`` calls it (a bridge is one solid over ``cells``, its
    anchor first), ``level`` is 1-based."""

    shape: str
    colour: str
    level: int
    cells: tuple[Cell, ...]


def solids(board: Board) -> list[Solid]:
    """The board's pieces bottom level first (row order within a level), each bridge once, from its anchor."""
    out = []
    for cell, level, piece in board.pieces():
        if piece.name in HALF_OF:
            bridge, k = HALF_OF[piece.name]
            if k == 0:
                out.append(Solid(bridge, piece.colour, level, (cell, second_cell(bridge, *cell))))
            continue
        out.append(Solid(piece.name, piece.colour, level, (cell,)))
    return sorted(out, key=lambda s: (s.level, s.cells[0]))


def cell_differences(board: Board, target: Board) -> dict[Cell, str]:
    """Each cell that differs from the target and how: ``wrong`` (some level holds another piece), else
    ``missing`` (the target's stack goes higher) or ``extra`` (the board's does)."""
    kinds: dict[Cell, set[str]] = {}
    for diff in differences(target, board):
        kinds.setdefault(diff.cell, set()).add(diff.kind)
    return {cell: next(k for k in DIFF_ORDER if k in found) for cell, found in sorted(kinds.items())}


# ---- small helpers ----------------------------------------------------------------------------------------


def _mix(a: RGB, b: RGB, t: float) -> RGB:
    """``a`` blended towards ``b`` by ``t`` (0 = a, 1 = b)."""
    return (round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t))


def _outline(rgb: RGB) -> RGB:
    return _mix(rgb, (0, 0, 0), 0.5)


def _centre(box: Box) -> tuple[float, float]:
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


def _union(a: Box, b: Box) -> Box:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def _text_width(text: str, size: int) -> int:
    left, _, right, _ = text_font(size).getbbox(text)
    return int(right - left)


# ---- layout -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    """Where everything goes in a board picture of ``rows`` x ``cols`` cells of ``cell`` pixels."""

    rows: int
    cols: int
    cell: int
    grid_x: int
    grid_y: int
    width: int
    height: int
    title_h: int
    notes_y: int
    text: int


def _layout(rows: int, cols: int, cell_px: int, note_lines: int) -> _Layout:
    text = max(11, round(cell_px * 0.21))
    title_h = round(text * 2.3)
    left = round(cell_px * 0.55)  # row numbers
    top = title_h + round(text * 1.7)  # column numbers under the title
    margin = max(8, cell_px // 5)
    width = max(left + cols * cell_px + margin, _text_width(BADGE_NOTE, text - 1) + 2 * margin)
    notes_y = top + rows * cell_px + round(text * 0.8)
    height = notes_y + note_lines * round(text * 1.9) + margin // 2
    grid_x = left + (width - left - margin - cols * cell_px) // 2
    return _Layout(rows, cols, cell_px, grid_x, top, width, height, title_h, notes_y, text)


def _cell_box(lay: _Layout, cell: Cell) -> Box:
    """Pixel box of the 1-based cell (row, column)."""
    x, y = lay.grid_x + (cell[1] - 1) * lay.cell, lay.grid_y + (cell[0] - 1) * lay.cell
    return (x, y, x + lay.cell, y + lay.cell)


def cell_box(cell: Cell, rows: int = 8, cols: int = 8, cell_px: int = CELL_PX, marked: bool = False) -> Box:
    """Pixel box ``(x0, y0, x1, y1)`` of the 1-based cell (row, column) in a :func:`target_image` or
    :func:`board_image` of a ``rows`` x ``cols`` board at ``cell_px`` (``marked``: a board image given a
    target, whose key adds a line); for hit-testing and tests."""
    return _cell_box(_layout(rows, cols, cell_px, 2 if marked else 1), cell)


# ---- drawing the board ------------------------------------------------------------------------------------


def _draw_frame(draw: ImageDraw.ImageDraw, lay: _Layout, title: str) -> None:
    """Title, white cells with black edges, row numbers on the left and column numbers on top."""
    draw.text((lay.width // 2, lay.title_h // 2 + 2), title, font=text_font(lay.text + 3), fill=TEXT, anchor="mm")
    numbers = text_font(lay.text + 2)
    for row in range(1, lay.rows + 1):
        for col in range(1, lay.cols + 1):
            draw.rectangle(_cell_box(lay, (row, col)), fill=WHITE, outline=EDGE, width=1)
    for row in range(1, lay.rows + 1):
        x0, y0, _, y1 = _cell_box(lay, (row, 1))
        draw.text((x0 - lay.text // 2, (y0 + y1) // 2), str(row), font=numbers, fill=TEXT, anchor="rm")
    for col in range(1, lay.cols + 1):
        x0, y0, x1, _ = _cell_box(lay, (1, col))
        draw.text(((x0 + x1) // 2, y0 - lay.text // 2), str(col), font=numbers, fill=TEXT, anchor="md")
    x1, y1 = lay.grid_x + lay.cols * lay.cell, lay.grid_y + lay.rows * lay.cell
    draw.rectangle((lay.grid_x, lay.grid_y, x1, y1), outline=EDGE, width=2)


def _shape_box(shape: str, box: Box, cell: int) -> Box:
    """The bounding box of ``shape`` drawn in ``box`` (one cell, or a bridge's two cells)."""
    cx, cy = _centre(box)
    if shape == "washer":
        half_w = half_h = cell / 2 - max(2, cell // 24)  # the tips stop just short of the black edges
    elif shape == "nut":
        half_w = half_h = 0.4 * cell
    elif shape == "screw":
        half_w = half_h = cell / 3
    elif shape == "bridge-h":
        half_w, half_h = 0.8 * cell, 0.3 * cell
    else:
        half_w, half_h = 0.3 * cell, 0.8 * cell
    return (round(cx - half_w), round(cy - half_h), round(cx + half_w), round(cy + half_h))


def draw_shape(draw: ImageDraw.ImageDraw, shape: str, box: Box, cell: int, fill: RGB) -> None:
    """One piece of ``shape`` filling ``fill`` with a darker outline, centred in ``box``."""
    x0, y0, x1, y1 = _shape_box(shape, box, cell)
    width = max(2, cell // 24)
    if shape == "washer":
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        draw.polygon([(cx, y0), (x1, cy), (cx, y1), (x0, cy)], fill=fill, outline=_outline(fill), width=width)
    elif shape == "screw":
        draw.ellipse((x0, y0, x1, y1), fill=fill, outline=_outline(fill), width=width)
    else:
        draw.rectangle((x0, y0, x1, y1), fill=fill, outline=_outline(fill), width=width)


def _solid_box(lay: _Layout, solid: Solid) -> Box:
    box = _cell_box(lay, solid.cells[0])
    for cell in solid.cells[1:]:
        box = _union(box, _cell_box(lay, cell))
    return box


def _draw_badge(draw: ImageDraw.ImageDraw, box: Box, cell: int, height: int) -> None:
    """The stack height in a small white tag at the cell's top-left corner."""
    size = max(12, round(cell * 0.3))
    x0, y0 = box[0] + 2, box[1] + 2
    draw.rounded_rectangle((x0, y0, x0 + size, y0 + size), radius=size // 4, fill=WHITE, outline=TEXT, width=1)
    draw.text(
        (x0 + size / 2, y0 + size / 2 + 1), str(height), font=text_font(round(size * 0.8)), fill=TEXT, anchor="mm"
    )


def _draw_board(draw: ImageDraw.ImageDraw, lay: _Layout, board: Board) -> None:
    """Every piece, bottom level first so higher ones cover lower ones, then the height badges."""
    for solid in solids(board):
        draw_shape(draw, solid.shape, _solid_box(lay, solid), lay.cell, COLOUR_RGB[solid.colour])
    for cell in board.cells():
        _draw_badge(draw, _cell_box(lay, cell), lay.cell, board.height(*cell))


def _draw_note(draw: ImageDraw.ImageDraw, lay: _Layout, line: int, text: str) -> None:
    y = lay.notes_y + line * round(lay.text * 1.9)
    draw.text((lay.width // 2, y), text, font=text_font(lay.text - 1), fill=MUTED, anchor="ma")


def _picture(board: Board, title: str, cell_px: int, note_lines: int = 1) -> tuple[Image.Image, _Layout]:
    """The common picture: title, numbered grid, pieces, badges and the badge note."""
    lay = _layout(board.rows, board.cols, cell_px, note_lines)
    image = Image.new("RGB", (lay.width, lay.height), PAGE)
    draw = ImageDraw.Draw(image)
    _draw_frame(draw, lay, title)
    _draw_board(draw, lay, board)
    _draw_note(draw, lay, 0, BADGE_NOTE)
    return image, lay


def _target_title(board: Board, up_to_level: int | None) -> str:
    top = board.top_level()
    if up_to_level is None or up_to_level >= top:
        return "Target board" if up_to_level is None else f"Target board: levels 1 to {top} (all)"
    if up_to_level <= 1:
        return f"Target board: level 1 only (of {top})"
    return f"Target board: levels 1 to {up_to_level} (of {top})"


def target_image(board_json: Mapping[str, Any], up_to_level: int | None = None, cell_px: int = CELL_PX) -> Image.Image:
    """The target seen from above; with ``up_to_level`` only levels 1..that (the paper's layer-wise targets:
    image k shows levels 1..k)."""
    board = Board.from_json(board_json)
    shown = board if up_to_level is None else board.up_to(up_to_level)
    return _picture(shown, _target_title(board, up_to_level), cell_px)[0]


# ---- differences ------------------------------------------------------------------------------------------


def _dashed_rectangle(draw: ImageDraw.ImageDraw, box: Box, fill: RGB, width: int, dash: int) -> None:
    x0, y0, x1, y1 = box
    for a in range(x0, x1, 2 * dash):
        draw.line([(a, y0), (min(a + dash, x1), y0)], fill=fill, width=width)
        draw.line([(a, y1), (min(a + dash, x1), y1)], fill=fill, width=width)
    for a in range(y0, y1, 2 * dash):
        draw.line([(x0, a), (x0, min(a + dash, y1))], fill=fill, width=width)
        draw.line([(x1, a), (x1, min(a + dash, y1))], fill=fill, width=width)


def _draw_symbol(draw: ImageDraw.ImageDraw, kind: str, box: Box, width: int) -> None:
    """A white ``+`` (missing), ``-`` (extra) or ``≠`` (wrong) drawn with lines, so no font is needed."""
    cx, cy = _centre(box)
    arm = (box[2] - box[0]) * 0.3
    if kind == "missing":
        draw.line([(cx, cy - arm), (cx, cy + arm)], fill=WHITE, width=width)
    if kind in ("missing", "extra"):
        draw.line([(cx - arm, cy), (cx + arm, cy)], fill=WHITE, width=width)
        return
    gap = arm * 0.45
    draw.line([(cx - arm, cy - gap), (cx + arm, cy - gap)], fill=WHITE, width=width)
    draw.line([(cx - arm, cy + gap), (cx + arm, cy + gap)], fill=WHITE, width=width)
    draw.line([(cx + arm * 0.55, cy - arm * 1.1), (cx - arm * 0.55, cy + arm * 1.1)], fill=WHITE, width=width)


def draw_marker(draw: ImageDraw.ImageDraw, kind: str, box: Box, cell: int) -> None:
    """A cell's difference marker: a frame just inside the cell (dashed for missing, thick for wrong) and a
    tag with the kind's symbol at the bottom-right corner."""
    rgb, width = DIFF_RGB[kind], max(3, cell // 18)
    if kind == "missing":  # dashes are centred on their line, a rectangle's outline grows inwards
        inset = 1 + width // 2
        inner = (box[0] + inset, box[1] + inset, box[2] - inset, box[3] - inset)
        _dashed_rectangle(draw, inner, rgb, width, max(4, cell // 9))
    else:
        inner = (box[0] + 1, box[1] + 1, box[2] - 1, box[3] - 1)
        draw.rectangle(inner, outline=rgb, width=width + (1 if kind == "wrong" else 0))
    size = max(14, round(cell * 0.3))
    tag = (box[2] - 2 - size, box[3] - 2 - size, box[2] - 2, box[3] - 2)
    draw.rectangle(tag, fill=rgb)
    _draw_symbol(draw, kind, tag, max(2, size // 6))


def _draw_key(draw: ImageDraw.ImageDraw, lay: _Layout, line: int) -> None:
    """One small marked cell and the name of its kind per kind of difference, side by side."""
    size, text = round(lay.cell * 0.55), lay.text - 1
    labels = [(kind, DIFF_LABELS[kind]) for kind in ("missing", "extra", "wrong")]
    widths = [size + 6 + _text_width(label, text) for _, label in labels]
    gap = round(lay.cell * 0.5)
    x = (lay.width - sum(widths) - gap * (len(labels) - 1)) // 2
    y = lay.notes_y + line * round(lay.text * 1.9) - round(size * 0.2)
    for (kind, label), width in zip(labels, widths, strict=True):
        box = (x, y, x + size, y + size)
        draw.rectangle(box, fill=WHITE, outline=EDGE)
        draw_marker(draw, kind, box, size)
        draw.text((x + size + 6, y + size // 2), label, font=text_font(text), fill=TEXT, anchor="lm")
        x += width + gap


def board_image(
    board_json: Mapping[str, Any],
    cell_px: int = CELL_PX,
    target_json: Mapping[str, Any] | None = None,
    title: str = "Robot's board",
) -> Image.Image:
    """The robot's board seen from above, drawn like the target. With ``target_json`` every cell that
    differs from the target is marked (missing, extra or wrong piece, named in a key under the board)."""
    board = Board.from_json(board_json)
    if target_json is None:
        return _picture(board, title, cell_px)[0]
    target = Board.from_json(target_json)
    image, lay = _picture(board, f"{title} (marked against the target)", cell_px, note_lines=2)
    draw = ImageDraw.Draw(image)
    for cell, kind in cell_differences(board, target).items():
        draw_marker(draw, kind, _cell_box(lay, cell), lay.cell)
    _draw_key(draw, lay, 1)
    return image


# ---- the legend -------------------------------------------------------------------------------------------

LEGEND_SHAPES: tuple[tuple[str, str, str], ...] = (
    ("washer", "washer", ""),
    ("nut", "nut", ""),
    ("screw", "screw", "(nothing on it)"),
    ("bridge-h", "bridge-h", "(horizontal)"),
    ("bridge-v", "bridge-v", "(vertical)"),
)
"""(shape, name, note) of each sample in the legend's first row."""
EXAMPLE_STACK = (("washer", "red"), ("nut", "blue"), ("screw", "green"))
"""The legend's stacking example, bottom to top (legal under the rules)."""


def _footprint(shape: str) -> tuple[int, int]:
    """(columns, rows) of cells a shape covers."""
    return {"bridge-h": (2, 1), "bridge-v": (1, 2)}.get(shape, (1, 1))


def _sample_cells(draw: ImageDraw.ImageDraw, x: int, y: int, cols: int, rows: int, cell: int) -> Box:
    """White cells with black edges at (x, y); returns their union."""
    for r in range(rows):
        for c in range(cols):
            draw.rectangle(
                (x + c * cell, y + r * cell, x + (c + 1) * cell, y + (r + 1) * cell), fill=WHITE, outline=EDGE
            )
    return (x, y, x + cols * cell, y + rows * cell)


def _legend_shapes(draw: ImageDraw.ImageDraw, top: int, width: int, cell: int, text: int) -> int:
    """The five shapes in grey, each over its cells, named underneath; returns the y below the names."""
    gap = round(cell * 0.45)
    total = sum(_footprint(s)[0] for s, _, _ in LEGEND_SHAPES) * cell + gap * (len(LEGEND_SHAPES) - 1)
    x = (width - total) // 2
    names_y = top + 2 * cell + text // 2
    for shape, name, note in LEGEND_SHAPES:
        cols, rows = _footprint(shape)
        y = top + (2 - rows) * cell  # one-cell samples sit on the line their names hang from
        box = _sample_cells(draw, x, y, cols, rows, cell)
        draw_shape(draw, shape, box, cell, SAMPLE)
        middle = x + cols * cell // 2
        draw.text((middle, names_y), name, font=text_font(text + 1), fill=TEXT, anchor="ma")
        if note:
            draw.text((middle, names_y + round(text * 1.5)), note, font=text_font(text - 2), fill=MUTED, anchor="ma")
        x += cols * cell + gap
    return names_y + round(text * 3.2)


def _legend_colours(draw: ImageDraw.ImageDraw, top: int, width: int, cell: int, text: int) -> int:
    """The four colours as swatches with their names; returns the y below them."""
    size, font = round(cell * 0.5), text_font(text + 1)
    label = "Colours:"
    items = [(name, size + 8 + _text_width(name, text + 1)) for name in COLOUR_RGB]
    gap = round(cell * 0.4)
    total = _text_width(label, text + 1) + gap + sum(w for _, w in items) + gap * (len(items) - 1)
    x = (width - total) // 2
    draw.text((x, top + size // 2), label, font=font, fill=TEXT, anchor="lm")
    x += _text_width(label, text + 1) + gap
    for name, item_width in items:
        rgb = COLOUR_RGB[name]
        draw.rectangle((x, top, x + size, top + size), fill=rgb, outline=_outline(rgb), width=max(2, cell // 24))
        draw.text((x + size + 8, top + size // 2), name, font=font, fill=TEXT, anchor="lm")
        x += item_width + gap
    return top + size + round(text * 1.6)


def _legend_stack(draw: ImageDraw.ImageDraw, top: int, width: int, cell: int, text: int) -> int:
    """A three-piece stack as the board shows it, and what the picture means; returns the y below it."""
    lines = (
        "A stack, bottom to top: red washer, blue nut, green screw.",
        "Higher pieces hide lower ones; the corner number counts the pieces.",
    )
    text_w = max(_text_width(line, text) for line in lines)
    x = (width - cell - 14 - text_w) // 2
    box = _sample_cells(draw, x, top, 1, 1, cell)
    for shape, colour in EXAMPLE_STACK:
        draw_shape(draw, shape, box, cell, COLOUR_RGB[colour])
    _draw_badge(draw, box, cell, len(EXAMPLE_STACK))
    for k, line in enumerate(lines):
        y = top + cell // 2 + round((k - 0.5) * text * 1.6)
        draw.text((x + cell + 14, y), line, font=text_font(text), fill=TEXT, anchor="lm")
    return top + cell + text


def legend_image(cell_px: int = CELL_PX) -> Image.Image:
    """Names every shape (washer, nut, screw, horizontal and vertical bridge) with its drawing, the four
    colours, and how a stack looks from above."""
    text = max(11, round(cell_px * 0.21))
    width = max(10 * cell_px, _text_width(BADGE_NOTE, text) + 2 * text)
    title_h = round(text * 2.6)
    image = Image.new("RGB", (width, 1), PAGE)  # measured first, then drawn at its height
    for final in (False, True):
        draw = ImageDraw.Draw(image)
        draw.text(
            (width // 2, title_h // 2),
            "Legend: the pieces seen from above",
            font=text_font(text + 3),
            fill=TEXT,
            anchor="mm",
        )
        y = _legend_shapes(draw, title_h, width, cell_px, text)
        y = _legend_colours(draw, y, width, cell_px, text)
        y = _legend_stack(draw, y, width, cell_px, text)
        if not final:
            image = Image.new("RGB", (width, y + text), PAGE)
    return image


# ---- observations -----------------------------------------------------------------------------------------


def _level_of(name: str) -> int | None:
    """K of a ``target_level_K`` picture name, else None."""
    head, _, tail = name.rpartition("_")
    return int(tail) if head == "target_level" and re.fullmatch("[0-9]{1,9}", tail) else None


def _observation_picture(name: str, data: Mapping[str, Any]) -> Image.Image | None:
    """One picture an observation names, from its ``data`` (None when its source is not recorded)."""
    board, target, level = data.get("board"), data.get("target"), _level_of(name)
    if name == "legend":
        return legend_image()
    if name == "board" and isinstance(board, Mapping):
        return board_image(board)
    if (name == "target" or level is not None) and isinstance(target, Mapping):
        return target_image(target, level)
    return None


def observation_images(observation_json: Mapping[str, Any]) -> dict[str, Image.Image]:
    """Re-render the pictures a recorded observation names (``images``) from its ``data``, as the world drew
    them: the robot's ``board``, the ``target``, the target's levels 1..K (``target_level_K``) and the
    ``legend``. None for a text condition or a text-only agent."""
    return _drawn(observation_json.get("images") or [], observation_json.get("data") or {})


def annotated_images(observation_json: Mapping[str, Any]) -> dict[str, Image.Image]:
    """For the researcher: the robot's board and the target as pictures where the observation gave them as
    text (a text condition, a text-only agent), drawn from its recorded ``data``; the sent ones are left out."""
    sent = {str(name) for name in observation_json.get("images") or []}
    target_sent = any(name == "target" or _level_of(name) is not None for name in sent)
    wanted = [*(["board"] if "board" not in sent else []), *(["target"] if not target_sent else [])]
    return _drawn(wanted, observation_json.get("data") or {})


def _drawn(names: Iterable[Any], data: Mapping[str, Any]) -> dict[str, Image.Image]:
    out: dict[str, Image.Image] = {}
    for name in names:
        picture = _observation_picture(str(name), data)
        if picture is not None:
            out[str(name)] = picture
    return out
