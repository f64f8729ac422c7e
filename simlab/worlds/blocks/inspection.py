"""The blocks 3D view's layer list and what a click on a block says: what it is, how it stands against the
target, and which directors see that place of the target (CRAFT 4.1: each director sees one wall).

A director sees a cell-layer of the target when it lies on their wall (D2, with the paper's interior setting,
also sees the top of the two interior cells). Clicking a block or a target ghost names it, says whether the
board matches the target there and which directors can describe it, and draws a sight line from each of those
directors' eyes to it: what the builder can be told about that place, and by whom.
"""

from __future__ import annotations

import pyvista as pv

from simlab.core.episode import Episode
from simlab.core.family import Inspection, Layer
from simlab.render.scene import SceneItem, line_segments, rgb255
from simlab.worlds.blocks.model import MAX_HEIGHT, Board, Cell, Piece, in_grid, parse_cell
from simlab.worlds.blocks.scene import FAILED_RGB, HIGHLIGHT_RGB, WALL_RGB, block_bounds, board_from, eye_point
from simlab.worlds.blocks.views import (
    DIRECTORS,
    LAYER_NAMES,
    POSITION_NAMES,
    WALL_NAMES,
    WALL_POSITIONS,
    Interior,
    block_phrase,
    visible_cell_layers,
)

SIGHT_RGB = (0.1, 0.7, 0.2)
SELECTED_RGB = (0.0, 0.0, 0.0)
_KEY_KINDS = ("block", "target", "highlight", "failed")  # "KIND:i,j[-i,j]:LAYER[:outline]"


LAYERS: tuple[Layer, ...] = (
    Layer(
        "Target",
        ("target",),
        (("missing target block", (200, 200, 200)),),
        "The target's blocks the board does not have yet, as ghosts or wireframes (the Target menu)",
    ),
    Layer("Placed blocks", ("block",), help="The blocks on the builder's board after the turn"),
    Layer(
        "This turn's move",
        ("highlight", "failed"),
        (("placed or removed this turn", rgb255(HIGHLIGHT_RGB)), ("rejected move", rgb255(FAILED_RGB))),
        "The turn's move: an outline where it took effect, a red ghost where the engine refused it",
    ),
    Layer(
        "Directors",
        ("wall", "frustum", "label"),
        tuple((f"{d}: {WALL_NAMES[d]} wall", rgb255(WALL_RGB[d])) for d in DIRECTORS),
        "Each director's wall and eye: a director sees the target's blocks on that wall",
    ),
)
"""The blocks view's layers: the target overlay, the board, the turn's move and the directors."""


def place_of(key: str) -> tuple[str, tuple[Cell, ...], int] | None:
    """``(kind, cells, layer)`` of a block item key, or None when the key names no block."""
    parts = key.split(":")
    if len(parts) < 3 or parts[0] not in _KEY_KINDS:
        return None
    try:
        cells = tuple(parse_cell(text) for text in parts[1].split("-"))
        layer = int(parts[2])
    except ValueError:
        return None
    return (parts[0], cells, layer) if all(in_grid(c) for c in cells) and 0 <= layer < MAX_HEIGHT + 1 else None


def inspect_item(episode: Episode, turn: int, key: str) -> Inspection | None:
    """What the view says of the block or ghost ``key`` names at ``turn``: the board and the target there,
    and which directors see that place of the target (with sight lines from their eyes); None for other keys."""
    found = place_of(key)
    if found is None:
        return None
    kind, cells, layer = found
    board, target = board_from(episode.state_at(turn)), board_from({"board": episode.task.get("board")})
    here, wanted = _piece(board, cells[0], layer), _piece(target, cells[0], layer)
    lines = [_against_target(here, wanted)]
    items = [_outline(cells, layer)]
    if target is not None:
        seers = _seers(target, cells, layer, str(episode.settings.get("interior", "paper")))
        lines += [_seen_line(d, cells, layer, d in seers) for d in DIRECTORS]
        if not seers:
            lines.append("No director sees this place of the target: nobody can tell the builder about it")
        items += [_sight_line(d, cells, layer) for d in seers]
    return Inspection(_title(kind, here, wanted, cells, layer), tuple(lines), tuple(items))


def _piece(board: Board | None, cell: Cell, layer: int) -> Piece | None:
    return board.at(cell, layer) if board is not None and 0 <= layer < MAX_HEIGHT else None


def _title(kind: str, here: Piece | None, wanted: Piece | None, cells: tuple[Cell, ...], layer: int) -> str:
    where = f"{'-'.join(f'({i},{j})' for i, j in cells)}, {_layer_name(layer)}"
    if kind == "target" and wanted is not None:
        return f"Target: {block_phrase(wanted.code)} ({wanted.code}) at {where}"
    if here is not None:
        return f"{block_phrase(here.code).capitalize()} ({here.code}) at {where}"
    return f"Nothing on the board at {where}"


def _against_target(here: Piece | None, wanted: Piece | None) -> str:
    if wanted is None:
        return "The target has nothing here" + (": this block is not part of it" if here is not None else "")
    if here is None:
        return f"Still missing: the target has {block_phrase(wanted.code)} ({wanted.code}) here"
    if (here.code, here.cells) == (wanted.code, wanted.cells):
        return "Matches the target"
    return f"Does not match: the target has {block_phrase(wanted.code)} ({wanted.code}) here"


def _seers(target: Board, cells: tuple[Cell, ...], layer: int, interior: str) -> list[str]:
    mode: Interior = "reference" if interior == "reference" else "paper"
    return [d for d in DIRECTORS if any((c, layer) in visible_cell_layers(target, d, mode) for c in cells)]


def _seen_line(director: str, cells: tuple[Cell, ...], layer: int, seen: bool) -> str:
    wall = WALL_NAMES[director]
    if not seen:
        return f"{director} does not see it: not on the {wall} wall"
    on_wall = [POSITION_NAMES[WALL_POSITIONS[director].index(c)] for c in cells if c in WALL_POSITIONS[director]]
    where = f"{' and '.join(on_wall)} position" if on_wall else "from above, in the interior"
    return f"{director} sees it on the {wall} wall: {where}, {_layer_name(layer)}"


def _layer_name(layer: int) -> str:
    """``bottom layer``...; a rejected move may name the layer above the top (its ghost is drawn there)."""
    return f"{LAYER_NAMES[layer]} layer" if layer < len(LAYER_NAMES) else f"layer {layer}, above the top"


def _centre(cells: tuple[Cell, ...], layer: int) -> tuple[float, float, float]:
    x0, x1, y0, y1, z0, z1 = block_bounds(cells, layer)
    return ((x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2)


def _sight_line(director: str, cells: tuple[Cell, ...], layer: int) -> SceneItem:
    segment = [(eye_point(director), _centre(cells, layer))]
    return SceneItem(f"selected:sight:{director}", "selection", line_segments(segment), SIGHT_RGB, line_width=4.0)


def _outline(cells: tuple[Cell, ...], layer: int) -> SceneItem:
    box = pv.Box(bounds=block_bounds(cells, layer, 1.06))
    return SceneItem("selected:outline", "selection", box, SELECTED_RGB, style="wireframe", line_width=5.0)
