"""The cobot board in 3D after one turn of an episode, as :class:`~simlab.render.scene.SceneItem` lists.

World coordinates: ``x`` grows with the column, ``y`` towards row 1 (the top of the 2D pictures is the far
side), ``z`` up. Cell (row, col) is the unit square centred on ``(col - 0.5, rows - row + 0.5)``, so the
board covers ``[0, cols] x [0, rows]``. Level k occupies ``z`` in ``[(k - 1) * LEVEL_HEIGHT, k *
LEVEL_HEIGHT]``: levels are the game's discrete stacking places, so every piece is drawn the same height
whatever its shape (a bridge rests on two cells of the same level count, not of the same material).

Pieces keep their top-down outlines from the 2D pictures: a washer is a flat ring, a nut a hexagonal prism
with a hole, a screw a thin shaft with a round head, a bridge a long slab over its two cells. The overlay is
the target: target pieces missing from the board as ghosts (or wireframes), and an outlined box around each
place (cell and level) holding an extra piece or a wrong one, in the 2D pictures' marker colours.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from functools import cache, lru_cache

import pyvista as pv

from simlab.core.episode import Episode
from simlab.render.scene import CameraPose, RGBf, SceneItem, Vec3, line_segments
from simlab.worlds.boards.images import COLOUR_RGB, DIFF_RGB, Solid, solids
from simlab.worlds.boards.model import Board, Cell
from simlab.worlds.boards.targets import Target
from simlab.worlds.boards.text import Difference, differences

LEVEL_HEIGHT = 0.3
PIECE_HEIGHT = 0.26
"""A piece is a little lower than its level, so stacked pieces stay apart by a visible seam."""
PLATE_RGB: RGBf = (0.97, 0.97, 0.96)
GRID_RGB: RGBf = (0.1, 0.1, 0.1)
NUMBER_RGB: RGBf = (0.25, 0.27, 0.3)
MARGIN = 0.75
"""Plate beyond the grid on the left and far side, where the row and column numbers lie."""
GHOST_OPACITY = 0.3
WIRE_OPACITY = 0.7
VIEW_ANGLE = 30.0
FIT = 0.75
"""A preset's distance: the framed square's half-diagonal is about 0.85 of the view's half-height."""
CLOSE_FIT = 0.6
"""The close-up frames a few cells tightly: their stacks rise out of the square, so nothing is cut off."""


def _rgb(rgb: tuple[int, int, int]) -> RGBf:
    return (rgb[0] / 255, rgb[1] / 255, rgb[2] / 255)


PIECE_RGB: dict[str, RGBf] = {name: _rgb(rgb) for name, rgb in COLOUR_RGB.items()}
MARKER_RGB: dict[str, RGBf] = {kind: _rgb(rgb) for kind, rgb in DIFF_RGB.items()}


# ---- geometry ---------------------------------------------------------------------------------------------


def cell_centre(cell: Cell, rows: int = 8) -> tuple[float, float]:
    """World ``(x, y)`` of the centre of the 1-based cell (row, col)."""
    return cell[1] - 0.5, rows - cell[0] + 0.5


def level_base(level: int) -> float:
    """The height where 1-based ``level`` starts."""
    return (level - 1) * LEVEL_HEIGHT


def _centre_of(solid: Solid, rows: int) -> tuple[float, float]:
    points = [cell_centre(c, rows) for c in solid.cells]
    return sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points)


def _prism(x: float, y: float, z: float, inner: float, outer: float, sides: int) -> pv.PolyData:
    """A flat ring of ``sides`` sides (a circle for many) standing on height ``z``, closed top and bottom."""
    disc = pv.Disc(center=(x, y, z), inner=inner, outer=outer, normal=(0.0, 0.0, 1.0), r_res=1, c_res=sides)
    ring: pv.PolyData = disc.extrude((0.0, 0.0, PIECE_HEIGHT), capping=True)
    return ring


def _screw(x: float, y: float, z: float) -> pv.PolyData:
    """A thin shaft rising from ``z`` to a round head (nothing may stand on a screw, so it may be taller)."""
    shaft_h, head_h = PIECE_HEIGHT * 1.2, PIECE_HEIGHT * 0.4
    shaft = pv.Cylinder(center=(x, y, z + shaft_h / 2), direction=(0, 0, 1), radius=0.1, height=shaft_h)
    head = pv.Cylinder(center=(x, y, z + shaft_h + head_h / 2), direction=(0, 0, 1), radius=0.3, height=head_h)
    screw: pv.PolyData = shaft.merge(head)
    return screw


def _slab(x: float, y: float, z: float, horizontal: bool) -> pv.PolyData:
    """A bridge: 1.7 x 0.6 cells over its two cells."""
    half_x, half_y = (0.85, 0.3) if horizontal else (0.3, 0.85)
    return pv.Box(bounds=(x - half_x, x + half_x, y - half_y, y + half_y, z, z + PIECE_HEIGHT))


def solid_mesh(solid: Solid, rows: int = 8) -> pv.PolyData:
    """The mesh of one piece at its cells and level: one mesh per shape and place, shared by every turn's
    items (never changed in place), as making a washer or a screw costs about 10 ms and a board holds dozens."""
    x, y = _centre_of(solid, rows)
    return _shape_mesh(solid.shape, x, y, level_base(solid.level))


@lru_cache(maxsize=4096)  # shapes x places x levels of one board size: a few thousand at most
def _shape_mesh(shape: str, x: float, y: float, z: float) -> pv.PolyData:
    if shape == "washer":
        return _prism(x, y, z, 0.17, 0.46, 40)
    if shape == "nut":
        return _prism(x, y, z, 0.14, 0.44, 6)
    if shape == "screw":
        return _screw(x, y, z)
    return _slab(x, y, z, shape == "bridge-h")


def place_box(cell: Cell, level: int, rows: int) -> pv.PolyData:
    """The outline of one place (a cell at a level), a little larger than what it holds."""
    x, y = cell_centre(cell, rows)
    z = level_base(level)
    return pv.Box(bounds=(x - 0.49, x + 0.49, y - 0.49, y + 0.49, z - 0.01, z + LEVEL_HEIGHT + 0.01))


# ---- words ------------------------------------------------------------------------------------------------


def _where(cells: tuple[Cell, ...], level: int) -> str:
    at = " and ".join(f"row {r}, col {c}" for r, c in cells)
    return f"{at}, level {level}"


def describe(solid: Solid) -> str:
    """``red nut at row 3, col 2, level 2``: what a hover says."""
    return f"{solid.colour} {solid.shape} at {_where(solid.cells, solid.level)}"


def _key(kind: str, cell: Cell, level: int) -> str:
    return f"{kind}:{cell[0]},{cell[1]}:{level}"


# ---- the board and its target -----------------------------------------------------------------------------


@cache
def floor_items(rows: int = 8, cols: int = 8) -> tuple[SceneItem, ...]:
    """The plate, the black cell edges and the row and column numbers (row 1 on the far side)."""
    plate = pv.Box(bounds=(-MARGIN, cols + 0.15, -0.15, rows + MARGIN, -0.08, -0.002))
    segments = [((float(k), 0.0, 0.01), (float(k), float(rows), 0.01)) for k in range(cols + 1)]
    segments += [((0.0, float(k), 0.01), (float(cols), float(k), 0.01)) for k in range(rows + 1)]
    items = [
        SceneItem("floor", "floor", plate, PLATE_RGB, tooltip=f"the {rows}x{cols} board"),
        SceneItem("floor:grid", "floor", line_segments(segments), GRID_RGB, line_width=1.5),
    ]
    for row in range(1, rows + 1):
        mesh = pv.Text3D(str(row), depth=0.0, height=0.34, center=(-MARGIN / 2, rows - row + 0.5, 0.01))
        items.append(SceneItem(f"label:row:{row}", "label", mesh, NUMBER_RGB))
    for col in range(1, cols + 1):
        mesh = pv.Text3D(str(col), depth=0.0, height=0.34, center=(col - 0.5, rows + MARGIN / 2, 0.01))
        items.append(SceneItem(f"label:col:{col}", "label", mesh, NUMBER_RGB))
    return tuple(items)


def piece_key(solid: Solid) -> str:
    """The scene key of a piece: ``piece:x,y:LEVEL`` at its anchor cell (the editor's entity id too)."""
    return _key("piece", solid.cells[0], solid.level)


def piece_item(solid: Solid, rows: int) -> SceneItem:
    """A solid piece; flat-faced ones get darker edges, round ones none (their facets would be noise)."""
    return SceneItem(
        piece_key(solid),
        "piece",
        solid_mesh(solid, rows),
        PIECE_RGB[solid.colour],
        tooltip=describe(solid),
        edges=solid.shape in ("nut", "bridge-h", "bridge-v"),
    )


def _ghost_item(solid: Solid, rows: int, style: str) -> SceneItem:
    wire = style == "wireframe"
    return SceneItem(
        _key("target", solid.cells[0], solid.level),
        "target",
        solid_mesh(solid, rows),
        PIECE_RGB[solid.colour],
        opacity=WIRE_OPACITY if wire else GHOST_OPACITY,
        style="wireframe" if wire else "surface",
        tooltip=f"target, missing: {describe(solid)}",
        line_width=1.5,
    )


def _marker_item(diff: Difference, rows: int) -> SceneItem:
    """An outlined box around a place holding an extra or a wrong piece, saying what the target wants."""
    got = f"{diff.current.colour} {diff.current.name}" if diff.current else "nothing"
    wanted = f"{diff.expected.colour} {diff.expected.name}" if diff.expected else "nothing"
    return SceneItem(
        _key(diff.kind, diff.cell, diff.level),
        "difference",
        place_box(diff.cell, diff.level, rows),
        MARKER_RGB[diff.kind],
        style="wireframe",
        tooltip=f"{diff.kind} at {_where((diff.cell,), diff.level)}: {got}, the target has {wanted}",
        line_width=4.0,
    )


def target_items(board: Board, target: Board, style: str = "ghost") -> list[SceneItem]:
    """The overlay: ghosts of target pieces with a place still empty on the board, and a marker around every
    place holding an extra or a wrong piece."""
    diffs = differences(target, board)
    missing = {(d.cell, d.level) for d in diffs if d.kind == "missing"}
    ghosts = [s for s in solids(target) if any((c, s.level) in missing for c in s.cells)]
    items = [_ghost_item(s, target.rows, style) for s in ghosts]
    return items + [_marker_item(d, target.rows) for d in diffs if d.kind != "missing"]


def board_at(episode: Episode, turn: int) -> Board:
    """The board after ``turn`` (the latest state event at or before it); an empty board of the target's
    size before any."""
    board = (episode.state_at(turn) or {}).get("board")
    if isinstance(board, Mapping):
        return Board.from_json(board)
    target = target_board(episode)
    return Board(target.rows, target.cols)


def target_board(episode: Episode) -> Board:
    """The episode's target board, built from its task."""
    return Target.from_json(episode.task).board()


def boards_scene(episode: Episode, turn: int, overlay: bool = True, style: str = "ghost") -> list[SceneItem]:
    """Everything to draw after ``turn``: the plate, the board's pieces and, with ``overlay``, the target
    (``style`` ``ghost`` or ``wireframe``) with the differences marked."""
    board = board_at(episode, turn)
    items = [*floor_items(board.rows, board.cols), *(piece_item(s, board.rows) for s in solids(board))]
    if overlay:
        items += target_items(board, target_board(episode), style)
    return items


def count_pieces(items: Iterable[SceneItem]) -> int:
    """How many pieces a scene holds (a bridge is one)."""
    return sum(1 for item in items if item.kind == "piece")


# ---- cameras ----------------------------------------------------------------------------------------------


def _orbit(name: str, centre: Vec3, span: float, azimuth: float, elevation: float, fit: float = FIT) -> CameraPose:
    """A perspective camera looking at ``centre`` from ``azimuth`` degrees east of due south (the near
    side) and ``elevation`` degrees up, far enough that a square of side ``span`` fills most of the view
    (``fit`` smaller: closer)."""
    az, el = math.radians(azimuth), math.radians(elevation)
    distance = fit * span / math.sin(math.radians(VIEW_ANGLE / 2))
    ray = (math.sin(az) * math.cos(el), -math.cos(az) * math.cos(el), math.sin(el))
    position = (centre[0] + distance * ray[0], centre[1] + distance * ray[1], centre[2] + distance * ray[2])
    return CameraPose(name, position, centre, (0.0, 0.0, 1.0), view_angle=VIEW_ANGLE)


def cameras_for(x0: float, x1: float, y0: float, y1: float) -> dict[str, CameraPose]:
    """Presets framing the area ``[x0, x1] x [y0, y1]`` of the plate."""
    centre, span = ((x0 + x1) / 2, (y0 + y1) / 2, LEVEL_HEIGHT), max(x1 - x0, y1 - y0)
    top = CameraPose(
        "top", (centre[0], centre[1], 4 * span), (centre[0], centre[1], 0.0), (0.0, 1.0, 0.0), True, 0.56 * span
    )
    return {
        "iso": _orbit("iso", centre, span, 30.0, 45.0),
        "top": top,
        "front": _orbit("front", centre, span, 0.0, 35.0),
        "side": _orbit("side", centre, span, 90.0, 35.0),
    }


CAMERAS: dict[str, CameraPose] = cameras_for(-MARGIN, 8.0, 0.0, 8.0 + MARGIN)
"""Named viewpoints of the whole 8x8 board: a three-quarter view from the near right, straight down
(row 1 at the top of the screen, orthographic, like the 2D pictures), from the near side and from the right."""


def _used_cells(episode: Episode) -> set[Cell]:
    """Every cell the target uses or any recorded board ever held a piece on."""
    cells = set(target_board(episode).cells())
    for event in episode.events:
        board = event.data.get("state", {}).get("board") if event.kind == "state" else None
        if isinstance(board, Mapping):
            cells |= {(int(x), int(y)) for x, y, pieces in board.get("cells") or () if pieces}
    return cells


def boards_cameras(episode: Episode) -> dict[str, CameraPose]:
    """The whole-board presets for the episode's board size, and ``close``: a three-quarter view of the
    cells the target and every recorded board use (where everything of this episode happens)."""
    target = target_board(episode)
    whole = cameras_for(-MARGIN, float(target.cols), 0.0, target.rows + MARGIN)
    centres = [cell_centre(c, target.rows) for c in _used_cells(episode)]
    x0, x1 = min(x for x, _ in centres) - 1.0, max(x for x, _ in centres) + 1.0  # the cells and half a cell
    y0, y1 = min(y for _, y in centres) - 1.0, max(y for _, y in centres) + 1.0
    centre = ((x0 + x1) / 2, (y0 + y1) / 2, 1.5 * LEVEL_HEIGHT)
    return {**whole, "close": _orbit("close", centre, max(x1 - x0, y1 - y0, 3.0), 30.0, 45.0, CLOSE_FIT)}
