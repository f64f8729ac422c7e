"""The CRAFT block world in 3D at one turn of an episode, as :class:`~simlab.render.scene.SceneItem` lists.

World coordinates: ``x`` = column ``j`` (left to right), ``y`` = ``2 - i`` (row 0, the far side, is +y),
``z`` = layer. A cell is the unit square centred on ``(j, 2 - i)``; a small block is a 0.94 box centred in its
cell at height ``layer + 0.5``; a large block is one box over both of its cells. Around the 3x3 floor stand
the three directors' walls (D1 left, D2 far, D3 right) with each director's eye drawn as a camera frustum.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache, lru_cache
from typing import Any

import numpy as np
import pyvista as pv

from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.render.scene import CameraPose, RGBf, SceneItem, darker, line_segments, text_label
from simlab.worlds.blocks.images import COLOR_RGB, color_name
from simlab.worlds.blocks.model import CELLS, Board, Cell, Piece, in_grid, parse_cell
from simlab.worlds.blocks.simulation import is_simulation_event
from simlab.worlds.blocks.world import DIRECTORS, PALETTE

BLOCK_SIZE = 0.94
GHOST_SIZE = 0.9
EYE_HEIGHT = 1.5
EYE_DISTANCE = 3.0
CENTRE: tuple[float, float, float] = (1.0, 1.0, 1.2)
FLOOR_RGB: RGBf = (0.86, 0.87, 0.88)
GRID_RGB: RGBf = (0.55, 0.57, 0.60)
HIGHLIGHT_RGB: RGBf = (1.0, 0.0, 0.85)
FAILED_RGB: RGBf = (0.92, 0.05, 0.05)
WALL_RGB: dict[str, RGBf] = {d: (r / 255, g / 255, b / 255) for d, (r, g, b) in PALETTE.items() if d in DIRECTORS}
WALL_NAMES: dict[str, str] = {"D1": "left", "D2": "far", "D3": "right"}
# (axis, coordinate of the panel, the way the director looks from outside)
_WALLS: dict[str, tuple[int, float, tuple[float, float, float]]] = {
    "D1": (0, -0.6, (1.0, 0.0, 0.0)),
    "D2": (1, 2.6, (0.0, -1.0, 0.0)),
    "D3": (0, 2.6, (-1.0, 0.0, 0.0)),
}


def block_rgb(code: str) -> RGBf:
    """0-1 RGB of a block code's colour (the same colours as the 2D images)."""
    rgb = COLOR_RGB[color_name(code) or "green"]
    return (rgb[0] / 255, rgb[1] / 255, rgb[2] / 255)


# ---- geometry -----------------------------------------------------------------------------------------


def cell_centre(cell: Cell) -> tuple[float, float]:
    """World ``(x, y)`` of the centre of board cell ``(i, j)``."""
    return float(cell[1]), float(2 - cell[0])


def block_bounds(cells: Sequence[Cell], layer: int, size: float = BLOCK_SIZE) -> tuple[float, ...]:
    """``(x0, x1, y0, y1, z0, z1)`` of a box of side ``size`` per cell covering ``cells`` on ``layer``."""
    half = size / 2
    xs = [cell_centre(c)[0] for c in cells]
    ys = [cell_centre(c)[1] for c in cells]
    z = layer + 0.5
    return (min(xs) - half, max(xs) + half, min(ys) - half, max(ys) + half, z - half, z + half)


def _box(cells: Sequence[Cell], layer: int, size: float = BLOCK_SIZE) -> pv.PolyData:
    """A box over ``cells`` on ``layer``; one mesh per place and size, shared by every turn's items (never
    changed in place): making a pyvista box costs about a millisecond, and a turn's scene has dozens."""
    return _cached_box(tuple(cells), layer, size)


@lru_cache(maxsize=4096)  # a 3x3 board has a few hundred places and sizes: the bound is never reached
def _cached_box(cells: tuple[Cell, ...], layer: int, size: float) -> pv.PolyData:
    return pv.Box(bounds=block_bounds(cells, layer, size))


def _cells_text(cells: Sequence[Cell]) -> str:
    return "-".join(f"({c[0]},{c[1]})" for c in cells)


def _key(kind: str, cells: Sequence[Cell], layer: int) -> str:
    return f"{kind}:{'-'.join(f'{c[0]},{c[1]}' for c in cells)}:{layer}"


# ---- the board ----------------------------------------------------------------------------------------


def board_from(state: Mapping[str, Any] | None) -> Board | None:
    """The legal board of a state (``{"board": board JSON}``), or None when it has none."""
    board = (state or {}).get("board")
    if not isinstance(board, Mapping):
        return None
    try:
        return Board.from_json(board)
    except (ValueError, TypeError, KeyError):
        return None


def _raw_codes(state: Mapping[str, Any] | None) -> dict[Cell, list[str]]:
    """Per-cell codes of an imported board that is not legal (``{"board": null, "codes": {...}}``)."""
    out: dict[Cell, list[str]] = {}
    for key, codes in ((state or {}).get("codes") or {}).items():
        try:
            cell = parse_cell(key)
        except ValueError:
            continue
        if in_grid(cell) and isinstance(codes, list):
            out[cell] = [str(c) for c in codes]
    return out


def _pieces(state: Mapping[str, Any] | None) -> list[Piece]:
    """The pieces of a state: a legal board's pieces, or every drawable raw code as a small block."""
    board = board_from(state)
    if board is not None:
        return list(board.pieces())
    out = []
    for cell, codes in sorted(_raw_codes(state).items()):
        out += [Piece(code, (cell,), layer) for layer, code in enumerate(codes[:4]) if color_name(code)]
    return out


def piece_key(piece: Piece) -> str:
    """The scene key of a placed block: ``block:i,j[-i,j]:LAYER`` (the editor's entity id too)."""
    return _key("block", piece.cells, piece.layer)


def piece_item(piece: Piece) -> SceneItem:
    """A placed block: a solid box in its colour over its cells on its layer."""
    tooltip = f"{piece.code} at {_cells_text(piece.cells)} layer {piece.layer}"
    return SceneItem(
        piece_key(piece),
        "block",
        _box(piece.cells, piece.layer),
        block_rgb(piece.code),
        tooltip=tooltip,
    )


def _target_items(target: list[Piece], current: list[Piece], style: str) -> list[SceneItem]:
    """Target pieces not already on the board, as faint ghosts or wireframes."""
    have = {(p.code, p.cells, p.layer) for p in current}
    items = []
    for p in target:
        if (p.code, p.cells, p.layer) in have:
            continue
        wire = style == "wireframe"
        items.append(
            SceneItem(
                _key("target", p.cells, p.layer),
                "target",
                _box(p.cells, p.layer, BLOCK_SIZE if wire else GHOST_SIZE),
                block_rgb(p.code),
                opacity=0.6 if wire else 0.14,
                style="wireframe" if wire else "surface",
                tooltip=f"target: {p.code} at {_cells_text(p.cells)} layer {p.layer}",
                line_width=1.5,
            )
        )
    return items


# ---- this turn's move -----------------------------------------------------------------------------------


def _move_of_turn(events: list[Event]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """``(action, result)`` of the turn's place/remove, if the builder made one and the engine answered."""
    events = [e for e in events if not is_simulation_event(e)]  # dry runs changed nothing
    action = next((e.data.get("action") for e in events if e.kind == "action"), None)
    result = next((e.data for e in events if e.kind == "result"), None)
    if not isinstance(action, Mapping) or result is None or action.get("action") not in ("place", "remove"):
        return None
    return dict(action), dict(result)


def _move_cells(action: Mapping[str, Any]) -> tuple[Cell, ...] | None:
    """The cells a move names (the cell, and ``span_to`` if any), or None when they are not on the grid."""
    try:
        cells = [parse_cell(action.get("cell"))]
        if action.get("span_to") is not None:
            cells.append(parse_cell(action.get("span_to")))
    except ValueError:
        return None
    return tuple(sorted(cells)) if all(in_grid(c) for c in cells) else None


def _moved_piece(episode: Episode, turn: int, action: Mapping[str, Any], result: Mapping[str, Any]) -> Piece | None:
    """The piece a successful move placed or removed: from the result, else from the boards around it."""
    data = result.get("piece")
    if isinstance(data, Mapping):
        try:
            cells = tuple(parse_cell(c) for c in data["cells"])
            return Piece(str(data["code"]), cells, int(data["layer"]))
        except (KeyError, TypeError, ValueError):
            pass
    moved, layer = _move_cells(action), action.get("layer")
    if moved is None or not isinstance(layer, int):
        return None
    before = episode.state_at(turn - 1) if action.get("action") == "remove" else episode.state_at(turn)
    board = board_from(before)
    found = board.at(moved[0], layer) if board is not None and 0 <= layer < 3 else None
    return found or Piece(str(action.get("block") or "gs"), moved, layer)


def _highlight_item(piece: Piece, removed: bool, message: str) -> SceneItem:
    verb = "removed" if removed else "placed"
    return SceneItem(
        _key("highlight", piece.cells, piece.layer),
        "highlight",
        _box(piece.cells, piece.layer, 1.02),
        HIGHLIGHT_RGB,
        style="wireframe",
        tooltip=message or f"{verb} {piece.code} at {_cells_text(piece.cells)} layer {piece.layer}",
        line_width=5.0,
    )


def _failed_items(action: Mapping[str, Any], result: Mapping[str, Any]) -> list[SceneItem]:
    """A red translucent ghost where a rejected place/remove was attempted (layer clamped to 0-3), with a thick
    bright outline so it never passes for a red block; nothing when the cells are off the grid."""
    cells, layer = _move_cells(action), action.get("layer")
    if cells is None:
        return []
    layer = min(max(layer if isinstance(layer, int) else 0, 0), 3)
    code = result.get("error") or "rejected"
    tooltip = f"FAILED {action.get('action')}: {result.get('message') or ''} [{code}]"
    key = _key("failed", cells, layer)
    return [
        SceneItem(key, "failed", _box(cells, layer), FAILED_RGB, 0.3, tooltip=tooltip),
        SceneItem(
            f"{key}:outline",
            "failed",
            _box(cells, layer, 1.0),
            (1.0, 0.1, 0.1),
            style="wireframe",
            tooltip=tooltip,
            line_width=4.0,
        ),
    ]


def move_items(episode: Episode, turn: int) -> list[SceneItem]:
    """The highlight of this turn's successful move, or the red ghost (and its outline) of a rejected one."""
    found = _move_of_turn(episode.events_of_turn(turn))
    if found is None:
        return []
    action, result = found
    if not result.get("ok"):
        return _failed_items(action, result)
    piece = _moved_piece(episode, turn, action, result)
    if piece is None:
        return []
    return [_highlight_item(piece, action.get("action") == "remove", str(result.get("message") or ""))]


# ---- surroundings ---------------------------------------------------------------------------------------


@cache
def floor_items(cell_labels: bool = False) -> tuple[SceneItem, ...]:
    """A light grey plate under the 3x3 grid, thin lines between cells and, optionally, ``i,j`` labels."""
    plate = pv.Box(bounds=(-0.55, 2.55, -0.55, 2.55, -0.08, -0.002))
    segments = [((k - 0.5, -0.5, 0.001), (k - 0.5, 2.5, 0.001)) for k in range(4)]
    segments += [((-0.5, k - 0.5, 0.001), (2.5, k - 0.5, 0.001)) for k in range(4)]
    items = [
        SceneItem("floor", "floor", plate, FLOOR_RGB, tooltip="the 3x3 board"),
        SceneItem("floor:grid", "floor", line_segments(segments), GRID_RGB, line_width=1.5),
    ]
    if cell_labels:
        for cell in CELLS:
            x, y = cell_centre(cell)
            text = pv.Text3D(f"{cell[0]},{cell[1]}", depth=0.0, height=0.16, center=(x + 0.3, y + 0.36, 0.004))
            items.append(SceneItem(f"label:cell:{cell[0]},{cell[1]}", "label", text, GRID_RGB))
    return tuple(items)


def _wall_panel(director: str) -> pv.PolyData:
    axis, at, _ = _WALLS[director]
    if axis == 0:
        return pv.Box(bounds=(at - 0.02, at + 0.02, -0.5, 2.5, 0.0, 3.0))
    return pv.Box(bounds=(-0.5, 2.5, at - 0.02, at + 0.02, 0.0, 3.0))


def eye_point(director: str) -> tuple[float, float, float]:
    """Where a director's eye is: ``EYE_DISTANCE`` outside the middle of its wall at ``EYE_HEIGHT``."""
    axis, at, facing = _WALLS[director]
    point = [1.0, 1.0, EYE_HEIGHT]
    point[axis] = at - facing[axis] * EYE_DISTANCE
    return (point[0], point[1], point[2])


def _frustum(director: str, depth: float = 0.7, half_w: float = 0.42, half_h: float = 0.3) -> pv.PolyData:
    """A pyramid of lines: apex at the eye, base rectangle ``depth`` towards the wall."""
    _, _, facing = _WALLS[director]
    eye = np.asarray(eye_point(director))
    ahead = np.asarray(facing)
    right = np.cross(ahead, (0.0, 0.0, 1.0))
    up = np.array([0.0, 0.0, 1.0])
    base = [
        eye + ahead * depth + right * sx * half_w + up * sy * half_h for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))
    ]
    segments = [(eye, corner) for corner in base]
    segments += [(base[k], base[(k + 1) % 4]) for k in range(4)]
    segments.append((base[2] + up * 0.08 - right * half_w * 0.5, base[2] + up * 0.08 + right * half_w * 0.5))
    return line_segments(segments)


def _wall_label(director: str, rgb: RGBf) -> SceneItem:
    axis, at, _ = _WALLS[director]
    centre = [1.0, 1.0, 3.3]
    centre[axis] = at
    return text_label(f"label:{director}", (centre[0], centre[1], centre[2]), director, darker(rgb, 0.2))


@cache
def director_items() -> tuple[SceneItem, ...]:
    """Each director's wall (a thin translucent panel just outside it), its name and its eye frustum."""
    items = []
    for director, rgb in WALL_RGB.items():
        name = f"{director} - {WALL_NAMES[director]} wall"
        items += [
            SceneItem(f"wall:{director}", "wall", _wall_panel(director), rgb, 0.12, tooltip=name),
            _wall_label(director, rgb),
            SceneItem(
                f"frustum:{director}",
                "frustum",
                _frustum(director),
                rgb,
                style="wireframe",
                tooltip=f"{director}'s eye",
                line_width=2.5,
            ),
        ]
    return tuple(items)


# ---- the scene ------------------------------------------------------------------------------------------


def _target_pieces(episode: Episode) -> list[Piece]:
    board = episode.task.get("board")
    return _pieces({"board": board} if isinstance(board, Mapping) and "stacks" in board else None)


def blocks_scene(
    episode: Episode, turn: int, overlay: bool = True, style: str = "ghost", cell_labels: bool = False
) -> list[SceneItem]:
    """Everything to draw at ``turn``: floor, walls and eyes, the board's blocks, the target blocks not yet
    matched (the overlay; ``style`` ``ghost`` or ``wireframe``), and this turn's move (highlight or failed
    ghost)."""
    current = _pieces(episode.state_at(turn))
    items = [*floor_items(cell_labels), *director_items()]  # built once: these never change
    items += [piece_item(p) for p in current]
    if overlay:
        items += _target_items(_target_pieces(episode), current, style)
    return items + move_items(episode, turn)


def count_blocks(items: Iterable[SceneItem]) -> int:
    """How many solid blocks a scene holds (a large block is one)."""
    return sum(1 for item in items if item.kind == "block")


def _director_camera(director: str) -> CameraPose:
    axis, at, _ = _WALLS[director]
    focal = [1.0, 1.0, 1.4]
    focal[axis] = at
    return CameraPose(director, eye_point(director), (focal[0], focal[1], focal[2]), (0.0, 0.0, 1.0), view_angle=62.0)


CAMERAS: dict[str, CameraPose] = {
    **{d: _director_camera(d) for d in WALL_RGB},
    "builder": CameraPose(
        "builder", (1.0, 1.0, 12.0), (1.0, 1.0, 0.0), (0.0, 1.0, 0.0), parallel=True, parallel_scale=1.85
    ),
    "free": CameraPose("free", (2.6, -10.4, 8.2), (1.0, 1.4, 1.35), (0.0, 0.0, 1.0), view_angle=30.0),
}
"""Named viewpoints: each director looking at its wall from its eye, the builder from straight above (far at
the top of the screen, orthographic) and a three-quarter view that frames everything."""


# ---- 2D companions (board and walls) ----------------------------------------------------------------------


def board_json_at(episode: Episode, turn: int) -> dict[str, Any]:
    """The board after ``turn`` as board JSON for :func:`~simlab.worlds.blocks.images.board_image`; an imported
    illegal board (``{"board": null, "codes": ...}``) gives its raw codes with no spans."""
    state = episode.state_at(turn) or {}
    board = state.get("board")
    if isinstance(board, Mapping):
        return dict(board)
    return {"stacks": {f"{c[0]},{c[1]}": codes for c, codes in _raw_codes(state).items()}, "spans": []}


def director_walls(episode: Episode) -> dict[str, dict[str, Any]]:
    """Each director's wall view JSON, from its first observation; computed from the task's target when the
    episode recorded none (imported logs). Empty when the target is not a legal board."""
    walls: dict[str, dict[str, Any]] = {}
    for e in episode.events:
        view = e.data.get("data", {}).get("view") if e.kind == "observation" else None
        if isinstance(view, Mapping) and e.role in WALL_RGB and e.role not in walls:
            walls[e.role] = dict(view)
    target = board_from({"board": episode.task.get("board")})
    if len(walls) == len(WALL_RGB) or target is None:
        return {d: walls[d] for d in WALL_RGB if d in walls}
    from simlab.worlds.blocks.views import DIRECTORS as WALLS
    from simlab.worlds.blocks.views import Interior, director_view

    interior: Interior = "reference" if episode.settings.get("interior") == "reference" else "paper"
    return {d: walls.get(d) or director_view(target, d, interior).to_json() for d in WALLS}
