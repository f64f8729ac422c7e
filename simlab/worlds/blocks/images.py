"""Pictures of the CRAFT block world: a director's wall seen face-on and the builder's top-down board.

Both functions take the JSON forms (``WallView.to_json()`` and ``Board.to_json()``), so they work on
recordings as well as on live objects, and they return a :class:`PIL.Image.Image`. Output is
deterministic: the same input always gives the same pixels, and :func:`to_png_bytes` the same bytes.

Colour is never the only cue: every block carries its colour's letter (G, B, R, Y, O), and the board
view also prints each stack's codes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from PIL import Image, ImageDraw

from simlab.render.images import text_font

RGB = tuple[int, int, int]
Box = tuple[int, int, int, int]
Cell = tuple[int, int]

COLOR_RGB: dict[str, RGB] = {
    "green": (44, 160, 72),
    "blue": (38, 110, 206),
    "red": (206, 44, 52),
    "yellow": (246, 204, 40),
    "orange": (240, 120, 20),
}
"""Fill colour of each block colour; chosen to stay apart in lightness as well as hue."""

BACKGROUND: RGB = (252, 252, 250)
STRIP: RGB = (236, 238, 242)
GRID_LINE: RGB = (208, 211, 216)
FLOOR: RGB = (120, 124, 130)
TEXT: RGB = (34, 38, 44)
MUTED: RGB = (112, 118, 126)
MATCH: RGB = (0, 122, 110)
UNSEEN: RGB = (228, 230, 234)

# Board directions as (di, dj): row i grows towards the near side, column j towards the right.
FACING: dict[Cell, str] = {(0, 1): "right", (0, -1): "left", (-1, 0): "the far side", (1, 0): "the near side"}
END_NAMES: dict[Cell, str] = {(0, 1): "right", (0, -1): "left", (-1, 0): "far", (1, 0): "near"}
WALL_LEGEND = (
    "Block across two columns = one long block lying along this wall.",
    "Dashed outline = a long block seen end-on (it runs away from you).",
)
BOARD_LEGEND = (
    "Big number = stack height; chips = blocks bottom to top.",
    "Dashed outline = top is half of a long block (other half covered).",
)
MATCH_LEGEND = "Green ring + tick = stack already matches the target."


# ---- small helpers -----------------------------------------------------------------------------------


def _mix(a: RGB, b: RGB, t: float) -> RGB:
    """Blend ``a`` towards ``b`` by ``t`` (0 = a, 1 = b)."""
    return (round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t))


def _outline(rgb: RGB) -> RGB:
    return _mix(rgb, (0, 0, 0), 0.42)


def _ink_on(rgb: RGB) -> RGB:
    """Dark or white text, whichever reads better on ``rgb``."""
    luma = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]
    return TEXT if luma > 135 else (255, 255, 255)


def color_name(value: Any) -> str | None:
    """Colour name from ``"green"``, ``"g"``, ``"gs"`` or ``"GREEN"``; None for empty/unknown."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().lower()
    if text in COLOR_RGB:
        return text
    for name in COLOR_RGB:
        if text[0] == name[0] and (len(text) == 1 or text[1:] in ("s", "l")):
            return name
    return None


def _text_width(text: str, size: int) -> int:
    left, _, right, _ = text_font(size).getbbox(text)
    return int(right - left)


def _dashed_edges(draw: ImageDraw.ImageDraw, box: Box, fill: RGB, width: int, dash: int, corner: int) -> None:
    """Dashes along the four straight edges of ``box``, keeping ``corner`` pixels clear at each end."""
    x0, y0, x1, y1 = box
    edges = (
        (x0 + corner, x1 - corner, y0, True),
        (x0 + corner, x1 - corner, y1, True),
        (y0 + corner, y1 - corner, x0, False),
        (y0 + corner, y1 - corner, x1, False),
    )
    for start, end, fixed, horizontal in edges:
        for a in range(start + dash // 2, end - dash // 2, 2 * dash):
            b = min(a + dash, end)
            draw.line([(a, fixed), (b, fixed)] if horizontal else [(fixed, a), (fixed, b)], fill=fill, width=width)


def _draw_block(
    draw: ImageDraw.ImageDraw, box: Box, color: str, cell_px: int, end_on: bool = False, letter: bool = True
) -> None:
    """A solid rounded block with a darker outline, a subtle colour letter and, if ``end_on``, a dashed edge."""
    rgb = COLOR_RGB[color]
    radius = max(4, cell_px // 9)
    width = max(2, cell_px // 36) + (1 if end_on else 0)
    draw.rounded_rectangle(box, radius=radius, fill=rgb, outline=_outline(rgb), width=width)
    if end_on:
        half = width // 2
        edge = (box[0] + half, box[1] + half, box[2] - half - 1, box[3] - half - 1)
        _dashed_edges(draw, edge, (255, 255, 255), width, max(4, cell_px // 14), radius)
    if not letter:
        return
    letter_size = max(9, cell_px // 6)
    draw.text(
        (box[0] + radius // 2 + max(3, cell_px // 24), box[1] + max(2, cell_px // 30)),
        color[0].upper(),
        font=text_font(letter_size),
        fill=_mix(rgb, _ink_on(rgb), 0.6),
    )


def _title_strip(draw: ImageDraw.ImageDraw, width: int, height: int, text: str, size: int) -> None:
    draw.rectangle((0, 0, width - 1, height - 1), fill=STRIP)
    draw.text((width // 2, height // 2), text, font=text_font(size), fill=TEXT, anchor="mm")


def _legend(draw: ImageDraw.ImageDraw, width: int, top: int, lines: Iterable[str], size: int) -> None:
    for k, line in enumerate(lines):
        draw.text((width // 2, top + k * round(size * 1.45)), line, font=text_font(size), fill=MUTED, anchor="ma")


# ---- wall views --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _WallCell:
    color: str
    size: int
    end_on: bool


@dataclass(frozen=True)
class _Interior:
    cell: Cell
    color: str | None
    size: int
    layer: int | None


@dataclass(frozen=True)
class _Wall:
    director: str
    wall: str
    positions: tuple[Cell, ...]
    layers: tuple[tuple[_WallCell | None, ...], ...]  # layer 0 (bottom) first
    interior: tuple[_Interior, ...]


def _is_end_on(raw: Mapping[str, Any], size: int) -> bool:
    """A size-1 face of a large block, when the view says so (``end_on``, ``large`` or a ``...l`` code)."""
    if size != 1:
        return False
    code = raw.get("code")
    return bool(raw.get("end_on") or raw.get("large") or (isinstance(code, str) and code.endswith("l")))


def _read_wall_cell(raw: Any) -> _WallCell | None:
    if not isinstance(raw, Mapping):
        return None
    color = color_name(raw.get("color")) or color_name(raw.get("code"))
    if color is None:
        return None
    size = 2 if raw.get("size") == 2 else 1
    return _WallCell(color, size, _is_end_on(raw, size))


def _read_interior(raw: Mapping[str, Any]) -> _Interior:
    """An interior top: ``{"cell": [i, j], "top": {"color", "size", "layer"} | None}`` or the same fields flat."""
    cell = raw.get("cell") or (0, 0)
    top = raw.get("top") if "top" in raw else raw
    top = top if isinstance(top, Mapping) else {}
    layer = top.get("layer")
    color = color_name(top.get("color")) or color_name(top.get("code"))
    size = 2 if top.get("size") == 2 else 1
    return _Interior((int(cell[0]), int(cell[1])), color, size, layer if isinstance(layer, int) else None)


def _cell_pair(value: Any) -> tuple[int, int] | None:
    """``[row, column]`` as whole numbers, or None for anything else (a damaged recording's position)."""
    if isinstance(value, list | tuple) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return int(value[0]), int(value[1])
    return None


def _read_wall(view: Mapping[str, Any], target_json: Mapping[str, Any] | None = None) -> _Wall:
    """The one place that knows ``WallView.to_json()``; tolerant of missing optional fields.

    With the target board, a size-1 face whose block is large is marked as seen end-on."""
    positions = tuple(pair for p in view.get("positions") or () if (pair := _cell_pair(p)) is not None)
    layers = tuple(tuple(_read_wall_cell(c) for c in row) for row in view.get("layers", ()))
    if target_json is not None:
        stacks = _read_stacks(target_json)
        layers = tuple(
            tuple(_mark_end_on(cell, stacks.get(pos, []), layer) for cell, pos in zip(row, positions, strict=False))
            for layer, row in enumerate(layers)
        )
    interior = tuple(_read_interior(x) for x in view.get("interior") or () if isinstance(x, Mapping))
    wall = str(view.get("wall") or "")
    return _Wall(str(view.get("director") or ""), wall, positions, layers, interior)


def _mark_end_on(cell: _WallCell | None, codes: Sequence[str], layer: int) -> _WallCell | None:
    if cell is None or cell.size != 1 or layer >= len(codes) or not codes[layer].endswith("l"):
        return cell
    return _WallCell(cell.color, 1, True)


def _wall_runs(row: Sequence[_WallCell | None]) -> list[tuple[int, int, _WallCell]]:
    """``(start, length, cell)`` per block in a layer: two neighbouring size-2 halves of one colour join."""
    runs: list[tuple[int, int, _WallCell]] = []
    k = 0
    while k < len(row):
        cell, nxt = row[k], row[k + 1] if k + 1 < len(row) else None
        if cell is not None and cell.size == 2 and nxt is not None and nxt.size == 2 and nxt.color == cell.color:
            runs.append((k, 2, cell))
            k += 2
            continue
        if cell is not None:
            runs.append((k, 1, cell))
        k += 1
    return runs


def _wall_title(wall: _Wall) -> str:
    """``"D1 - left wall (you face right, far end on your left)"``, read off the positions' order."""
    head = f"{wall.director or '?'} - {wall.wall or '?'} wall"
    frame = _frame(wall)
    if frame is None:
        return head
    right, facing = frame
    return f"{head} (you face {FACING[facing]}, {END_NAMES[(-right[0], -right[1])]} end on your left)"


@dataclass(frozen=True)
class _WallLayout:
    cell: int
    width: int
    height: int
    title_h: int
    grid_x: int
    grid_y: int
    inset_x: int
    legend_y: int
    text: int


def _wall_layout(wall: _Wall, cell_px: int, legend: Sequence[str]) -> _WallLayout:
    text = max(10, cell_px // 7)
    title_h = round(cell_px * 0.5)
    axis_w = round(cell_px * 0.45)
    margin = max(8, cell_px // 6)
    inset_w = round(cell_px * 1.85) if wall.interior else 0
    content_w = axis_w + 3 * cell_px + (margin + inset_w if inset_w else 0)
    lines = [_wall_title(wall), *legend]
    text_w = max(_text_width(line, text + (2 if k == 0 else -1)) for k, line in enumerate(lines))
    width = max(content_w, text_w) + 2 * margin
    grid_x = (width - content_w) // 2 + axis_w
    grid_y = title_h + margin
    legend_y = grid_y + 3 * cell_px + round(text * 2.2)
    height = legend_y + round(text * 1.45) * len(legend) + margin // 2
    return _WallLayout(cell_px, width, height, title_h, grid_x, grid_y, grid_x + 3 * cell_px + margin, legend_y, text)


def _draw_wall_grid(draw: ImageDraw.ImageDraw, wall: _Wall, lay: _WallLayout) -> None:
    """Light cell outlines, the floor line, layer labels on the left and position labels underneath."""
    c, gx, gy = lay.cell, lay.grid_x, lay.grid_y
    for layer in range(3):
        y = gy + (2 - layer) * c
        for k in range(3):
            draw.rectangle((gx + k * c, y, gx + (k + 1) * c, y + c), outline=GRID_LINE, width=1)
        draw.text((gx - lay.text // 2, y + c // 2), f"L{layer}", font=text_font(lay.text), fill=MUTED, anchor="rm")
    floor_y = gy + 3 * c
    draw.line([(gx - 2, floor_y), (gx + 3 * c + 2, floor_y)], fill=FLOOR, width=max(2, c // 32))
    for k, (i, j) in enumerate(wall.positions[:3]):
        label = f"({i},{j})"
        draw.text(
            (gx + k * c + c // 2, floor_y + lay.text // 2), label, font=text_font(lay.text), fill=TEXT, anchor="ma"
        )


def _draw_wall_blocks(draw: ImageDraw.ImageDraw, wall: _Wall, lay: _WallLayout) -> None:
    c, pad = lay.cell, max(3, lay.cell // 16)
    for layer, row in enumerate(wall.layers[:3]):
        y = lay.grid_y + (2 - layer) * c
        for start, length, cell in _wall_runs(row[:3]):
            x = lay.grid_x + start * c
            box = (x + pad, y + pad, x + length * c - pad, y + c - pad)
            _draw_block(draw, box, cell.color, c, end_on=cell.end_on and length == 1)


def _frame(wall: _Wall) -> tuple[Cell, Cell] | None:
    """``(right, facing)``: the board step to the viewer's right hand and the way they face, from the
    positions' left-to-right order; None when the positions do not form a straight line of neighbours."""
    if len(wall.positions) < 2:
        return None
    right = (wall.positions[1][0] - wall.positions[0][0], wall.positions[1][1] - wall.positions[0][1])
    if abs(right[0]) + abs(right[1]) != 1:
        return None
    return right, (-right[1], right[0])


def _draw_interior_inset(draw: ImageDraw.ImageDraw, wall: _Wall, lay: _WallLayout) -> None:
    """A small from-above map of the whole grid turned the way the director faces (up = ahead)."""
    frame = _frame(wall)
    if not wall.interior or frame is None:
        return
    (right, facing), origin = frame, wall.positions[0]
    size, small = round(lay.cell * 0.6), max(9, lay.text - 2)
    x0, bottom = lay.inset_x, lay.grid_y + 3 * lay.cell
    top = bottom - 3 * size
    draw.text((x0, top - small * 3), "From above", font=text_font(lay.text), fill=TEXT)
    draw.text((x0, top - round(small * 1.5)), "up = the way you face", font=text_font(small), fill=MUTED)
    offsets = {c: (c[0] - origin[0], c[1] - origin[1]) for c in ((i, j) for i in range(3) for j in range(3))}
    ahead = {c: d[0] * facing[0] + d[1] * facing[1] for c, d in offsets.items()}
    most = max(ahead.values())
    boxes: dict[Cell, Box] = {}
    for cell, d in offsets.items():
        col, row = d[0] * right[0] + d[1] * right[1], most - ahead[cell]
        box = (x0 + col * size, top + row * size, x0 + (col + 1) * size, top + (row + 1) * size)
        draw.rectangle(box, fill=UNSEEN if cell in wall.positions else BACKGROUND, outline=GRID_LINE, width=1)
        _corner_label(draw, box, cell, MUTED, small - 1)
        boxes[cell] = box
    for group in _interior_groups(wall.interior):
        _draw_inset_top(draw, [boxes[t.cell] for t in group if t.cell in boxes], group, size, small)


def _interior_groups(tops: Sequence[_Interior]) -> list[list[_Interior]]:
    """Interior tops one by one, except two size-2 halves of one colour and layer, which form one block."""
    if len(tops) == 2 and all(t.size == 2 and t.color for t in tops):
        a, b = tops
        if a.color == b.color and a.layer == b.layer and abs(a.cell[0] - b.cell[0]) + abs(a.cell[1] - b.cell[1]) == 1:
            return [[a, b]]
    return [[t] for t in tops]


def _corner_label(draw: ImageDraw.ImageDraw, box: Box, cell: Cell, fill: RGB, size: int) -> None:
    """Cell coordinates ``i,j`` in small text at the top-right of ``box``."""
    inset = max(3, (box[2] - box[0]) // 12)
    draw.text((box[2] - inset, box[1] + inset), f"{cell[0]},{cell[1]}", font=text_font(size), fill=fill, anchor="ra")


def _draw_inset_top(draw: ImageDraw.ImageDraw, boxes: list[Box], group: list[_Interior], size: int, text: int) -> None:
    """One interior top (possibly over two inset cells): its colour and layer, or "empty"."""
    top = group[0]
    if not boxes:
        return
    box = (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))
    centre = ((box[0] + box[2]) // 2, (box[1] + box[3]) // 2)
    if top.color is None:
        draw.text(centre, "empty", font=text_font(text - 1), fill=MUTED, anchor="mm")
        return
    pad = max(2, size // 12)
    _draw_block(draw, (box[0] + pad, box[1] + pad, box[2] - pad, box[3] - pad), top.color, size)
    rgb = COLOR_RGB[top.color]
    for part, cell_box in zip(group, boxes, strict=False):
        _corner_label(draw, cell_box, part.cell, _mix(rgb, _ink_on(rgb), 0.75), text - 1)
    label = "L?" if top.layer is None else f"L{top.layer}"
    for cell_box in boxes:
        middle = ((cell_box[0] + cell_box[2]) // 2, (cell_box[1] + cell_box[3]) // 2 + size // 8)
        draw.text(middle, label, font=text_font(text + 2), fill=_ink_on(rgb), anchor="mm")


def _wall_legend(marked: bool) -> tuple[str, ...]:
    if marked:
        return WALL_LEGEND
    return (WALL_LEGEND[0], "Single square = one visible face (a small block, or a long block seen end-on).")


def wall_image(
    view_json: Mapping[str, Any], cell_px: int = 96, *, target_json: Mapping[str, Any] | None = None
) -> Image.Image:
    """A director's wall seen face-on: three positions left to right, layer 0 at the bottom.

    ``view_json`` is ``WallView.to_json()``. A large block with both halves on the wall is drawn as one
    two-cell block. Given the target board (``Board.to_json()``), a large block seen end-on gets a dashed
    inner edge (the director alone cannot tell it from a small block). D2's interior tops (paper mode)
    appear in a small from-above inset on the right.
    """
    wall = _read_wall(view_json, target_json)
    legend = _wall_legend(target_json is not None)
    lay = _wall_layout(wall, cell_px, legend)
    image = Image.new("RGB", (lay.width, lay.height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    _title_strip(draw, lay.width, lay.title_h, _wall_title(wall), lay.text + 2)
    _draw_wall_grid(draw, wall, lay)
    _draw_wall_blocks(draw, wall, lay)
    _draw_interior_inset(draw, wall, lay)
    _legend(draw, lay.width, lay.legend_y, legend, lay.text - 1)
    return image


def wall_cell_box(
    view_json: Mapping[str, Any],
    position: int,
    layer: int,
    cell_px: int = 96,
    *,
    target_json: Mapping[str, Any] | None = None,
) -> tuple[int, int, int, int]:
    """Pixel box ``(x0, y0, x1, y1)`` of wall position ``position`` (0 = left) at ``layer`` (0 = bottom) in
    the image :func:`wall_image` makes from the same arguments; for hit-testing and tests."""
    lay = _wall_layout(_read_wall(view_json), cell_px, _wall_legend(target_json is not None))
    x, y = lay.grid_x + position * cell_px, lay.grid_y + (2 - layer) * cell_px
    return (x, y, x + cell_px, y + cell_px)


# ---- the builder's board -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _BoardLayout:
    cell: int
    width: int
    height: int
    grid_x: int
    grid_y: int
    legend_y: int
    text: int


def _read_stacks(board_json: Mapping[str, Any] | None) -> dict[Cell, list[str]]:
    stacks: dict[Cell, list[str]] = {(i, j): [] for i in range(3) for j in range(3)}
    for key, codes in ((board_json or {}).get("stacks") or {}).items():
        parts = str(key).strip("()[] ").split(",")
        cell = (int(parts[0]), int(parts[1]))
        if cell in stacks:
            stacks[cell] = [str(c) for c in codes]
    return stacks


def _read_spans(board_json: Mapping[str, Any]) -> list[tuple[int, Cell, Cell]]:
    spans = []
    for span in board_json.get("spans") or ():
        layer, a, b = span
        spans.append((int(layer), (int(a[0]), int(a[1])), (int(b[0]), int(b[1]))))
    return spans


def _board_layout(cell_px: int, legend_lines: int) -> _BoardLayout:
    text = max(10, cell_px // 7)
    side = round(cell_px * 0.6)
    top = round(cell_px * 0.5)
    width = max(2 * side + 3 * cell_px, max(_text_width(x, text - 1) for x in (*BOARD_LEGEND, MATCH_LEGEND)) + 24)
    grid_x = (width - 3 * cell_px) // 2
    legend_y = top + 3 * cell_px + round(text * 2.2)
    height = legend_y + round(text * 1.45) * legend_lines + max(6, cell_px // 12)
    return _BoardLayout(cell_px, width, height, grid_x, top, legend_y, text)


def board_cell_box(cell: tuple[int, int], cell_px: int = 96) -> tuple[int, int, int, int]:
    """Pixel box ``(x0, y0, x1, y1)`` of board cell ``(i, j)`` in a :func:`board_image` of the same
    ``cell_px`` (with or without a target); for hit-testing and tests."""
    return _cell_box(_board_layout(cell_px, len(BOARD_LEGEND)), cell)


def _cell_box(lay: _BoardLayout, cell: Cell) -> Box:
    x, y = lay.grid_x + cell[1] * lay.cell, lay.grid_y + cell[0] * lay.cell
    return (x, y, x + lay.cell, y + lay.cell)


def _draw_board_frame(draw: ImageDraw.ImageDraw, lay: _BoardLayout) -> None:
    """Cell outlines, coordinates in each corner and the far / near / left / right labels."""
    c = lay.cell
    for i in range(3):
        for j in range(3):
            draw.rectangle(_cell_box(lay, (i, j)), outline=GRID_LINE, width=1)
    gx, gy, side = lay.grid_x, lay.grid_y, 3 * c
    draw.rectangle((gx, gy, gx + side, gy + side), outline=FLOOR, width=max(2, c // 40))
    font = text_font(lay.text)
    draw.text((gx + side // 2, gy - lay.text // 2), "far", font=font, fill=TEXT, anchor="md")
    draw.text((gx + side // 2, gy + side + lay.text // 2), "near (builder)", font=font, fill=TEXT, anchor="ma")
    draw.text((gx - lay.text // 2, gy + side // 2), "left", font=font, fill=TEXT, anchor="rm")
    draw.text((gx + side + lay.text // 2, gy + side // 2), "right", font=font, fill=TEXT, anchor="lm")


def _joined_tops(stacks: Mapping[Cell, list[str]], spans: Iterable[tuple[int, Cell, Cell]]) -> list[tuple[Cell, Cell]]:
    """Large blocks that are the top block in both of their cells."""
    return [(a, b) for layer, a, b in spans if len(stacks[a]) == layer + 1 == len(stacks[b])]


def _draw_board_tops(
    draw: ImageDraw.ImageDraw, lay: _BoardLayout, stacks: Mapping[Cell, list[str]], joined: list
) -> None:
    """Fill every non-empty cell with its top block; a large top over both its cells is one block."""
    pad = max(4, lay.cell // 12)
    in_pair = {cell for pair in joined for cell in pair}
    for a, b in joined:
        box_a, box_b = _cell_box(lay, a), _cell_box(lay, b)
        box = (
            min(box_a[0], box_b[0]) + pad,
            min(box_a[1], box_b[1]) + pad,
            max(box_a[2], box_b[2]) - pad,
            max(box_a[3], box_b[3]) - pad,
        )
        _draw_block(draw, box, color_name(stacks[a][-1]) or "green", lay.cell, letter=False)
    for cell, codes in stacks.items():
        if codes and cell not in in_pair and color_name(codes[-1]):
            x0, y0, x1, y1 = _cell_box(lay, cell)
            end_on = codes[-1].endswith("l")
            _draw_block(
                draw,
                (x0 + pad, y0 + pad, x1 - pad, y1 - pad),
                color_name(codes[-1]) or "green",
                lay.cell,
                end_on,
                False,
            )


def _draw_stack_text(draw: ImageDraw.ImageDraw, lay: _BoardLayout, cell: Cell, codes: list[str]) -> None:
    """Coordinates, the height as a big number and the codes bottom to top as small colour chips."""
    x0, y0, x1, y1 = _cell_box(lay, cell)
    c, small = lay.cell, max(9, lay.text - 3)
    top_rgb = COLOR_RGB.get(color_name(codes[-1]) or "", BACKGROUND) if codes else BACKGROUND
    ink = _ink_on(top_rgb)
    draw.text(
        (x1 - c // 8, y0 + c // 10),
        f"{cell[0]},{cell[1]}",
        font=text_font(small),
        fill=_mix(top_rgb, ink, 0.6),
        anchor="ra",
    )
    if not codes:
        return
    draw.text(
        ((x0 + x1) // 2, y0 + round(c * 0.45)), str(len(codes)), font=text_font(round(c * 0.36)), fill=ink, anchor="mm"
    )
    _draw_chips(draw, ((x0 + x1) // 2, y1 - round(c * 0.22)), codes, c)


def _draw_chips(draw: ImageDraw.ImageDraw, centre: tuple[int, int], codes: list[str], cell_px: int) -> None:
    """Codes bottom to top, each on a small white pill with a colour swatch, centred on ``centre``."""
    size = max(9, cell_px // 9)
    font = text_font(size)
    chip_w = _text_width("ww", size) + size
    gap = max(2, cell_px // 48)
    total = len(codes) * chip_w + (len(codes) - 1) * gap
    x = centre[0] - total // 2
    half = round(size * 0.75)
    for code in codes:
        rgb = COLOR_RGB.get(color_name(code) or "", MUTED)
        draw.rounded_rectangle(
            (x, centre[1] - half, x + chip_w, centre[1] + half),
            radius=half // 2,
            fill=(255, 255, 255),
            outline=_outline(rgb),
        )
        draw.rectangle((x + 2, centre[1] - half + 2, x + size // 2, centre[1] + half - 2), fill=rgb)
        draw.text((x + size // 2 + (chip_w - size // 2) // 2, centre[1]), code, font=font, fill=TEXT, anchor="mm")
        x += chip_w + gap


def _matching_cells(stacks: Mapping[Cell, list[str]], target_json: Mapping[str, Any]) -> list[Cell]:
    """Cells whose non-empty stack equals the target's stack code for code."""
    target = _read_stacks(target_json)
    return [cell for cell, codes in stacks.items() if codes and codes == target[cell]]


def _draw_match_ring(draw: ImageDraw.ImageDraw, lay: _BoardLayout, cell: Cell) -> None:
    """A thin ring just inside the cell (drawn under the blocks, so a joined block hides it)."""
    x0, y0, x1, y1 = _cell_box(lay, cell)
    w = max(2, lay.cell // 40)
    draw.rectangle((x0 + w, y0 + w, x1 - w, y1 - w), outline=MATCH, width=w)


def _draw_match_tick(draw: ImageDraw.ImageDraw, lay: _BoardLayout, cell: Cell) -> None:
    """A small tick on a corner flag at the cell's top-left."""
    x0, y0, _, _ = _cell_box(lay, cell)
    w = max(2, lay.cell // 40)
    s = max(6, lay.cell // 9)
    tx, ty = x0 + 2 * w, y0 + 2 * w
    draw.polygon([(tx, ty), (tx + 2 * s, ty), (tx, ty + 2 * s)], fill=MATCH)
    tick = [(tx + s // 4, ty + s // 2), (tx + s // 2, ty + 3 * s // 4), (tx + s, ty + s // 5)]
    draw.line(tick, fill=(255, 255, 255), width=max(2, w))


def board_image(
    board_json: Mapping[str, Any], cell_px: int = 96, target_json: Mapping[str, Any] | None = None
) -> Image.Image:
    """The builder's top-down view: row 0 (far) at the top, column 0 on the left.

    Each cell shows its top block's colour, the stack height as a big number and the codes bottom to
    top. A large block that is the top in both its cells is drawn across them. With ``target_json``
    (another ``Board.to_json()``), cells whose non-empty stack already equals the target's get a marker.
    """
    stacks = _read_stacks(board_json)
    lay = _board_layout(cell_px, len(BOARD_LEGEND) + (1 if target_json is not None else 0))
    image = Image.new("RGB", (lay.width, lay.height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    _draw_board_frame(draw, lay)
    matches = _matching_cells(stacks, target_json) if target_json is not None else []
    for cell in matches:
        _draw_match_ring(draw, lay, cell)
    _draw_board_tops(draw, lay, stacks, _joined_tops(stacks, _read_spans(board_json)))
    for cell, codes in stacks.items():
        _draw_stack_text(draw, lay, cell, codes)
    for cell in matches:
        _draw_match_tick(draw, lay, cell)
    lines = [*BOARD_LEGEND, MATCH_LEGEND] if target_json is not None else list(BOARD_LEGEND)
    _legend(draw, lay.width, lay.legend_y, lines, lay.text - 1)
    return image


OBSERVATION_IMAGE_SOURCES: dict[str, tuple[str, Callable[[Any], Image.Image]]] = {
    "wall": ("view", wall_image),
    "board": ("board", board_image),
}
"""Image name -> (key in a blocks observation's ``data``, renderer)."""


def observation_images(observation: Mapping[str, Any]) -> dict[str, Image.Image]:
    """Re-render the pictures a blocks observation event names (``images``) from its recorded ``data``, as
    the world drew them: a director's wall (``view``), the builder's ``board``. None for a text-only agent."""
    data = observation.get("data") or {}
    return _drawn(observation.get("images") or [], data)


def annotated_images(observation: Mapping[str, Any]) -> dict[str, Image.Image]:
    """For the researcher, when an agent was given text only: the picture its role would have been shown
    (a director's wall, the builder's board), drawn from the recorded ``data``; nothing when it was sent."""
    if observation.get("images"):
        return {}
    data = observation.get("data") or {}
    return _drawn(["wall" if "director" in data else "board"], data)


def _drawn(names: Iterable[str], data: Mapping[str, Any]) -> dict[str, Image.Image]:
    out: dict[str, Image.Image] = {}
    for name in names:
        source = OBSERVATION_IMAGE_SOURCES.get(name)
        if source is not None and data.get(source[0]) is not None:
            out[name] = source[1](data[source[0]])
    return out
