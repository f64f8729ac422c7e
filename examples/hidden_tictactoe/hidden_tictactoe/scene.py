"""The board in 3D at one turn, as plain :class:`~simlab.render.scene.SceneItem` s, and the camera presets.

World coordinates: ``x`` = column ``j``, ``y`` = ``2 - i`` (row 0 is the far side, the top of the screen in
the top view), ``z`` up. Each cell is a grey tile; the player's X is two crossed bars, an O is a torus, a mine
stepped on is a red ball. The overlay (the view's "Mines & safe line" toggle) adds what only the seer knows:
the hidden mines as red ghosts and the safe line as green tiles. This turn's mark is outlined in magenta; a
rejected one is a red box whose tooltip is the engine's reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import pyvista as pv
from simlab.core.episode import Episode
from simlab.render.scene import CameraPose, RGBf, SceneItem, text_label

from hidden_tictactoe.board import CELLS, LINES, SIZE, Cell, cell_text, on_board, parse_cell
from hidden_tictactoe.roles import PALETTE, PLAYER

TILE_RGB: RGBf = (0.86, 0.87, 0.88)
PLATE_RGB: RGBf = (0.55, 0.57, 0.60)
X_RGB: RGBf = (PALETTE[PLAYER][0] / 255, PALETTE[PLAYER][1] / 255, PALETTE[PLAYER][2] / 255)
O_RGB: RGBf = (0.22, 0.24, 0.28)
MINE_RGB: RGBf = (0.85, 0.12, 0.12)
SAFE_RGB: RGBf = (0.30, 0.75, 0.35)
HIGHLIGHT_RGB: RGBf = (1.0, 0.0, 0.85)


def centre(cell: Cell) -> tuple[float, float]:
    """World ``(x, y)`` of the centre of cell ``(i, j)``."""
    return float(cell[1]), float(SIZE - 1 - cell[0])


def _cell_box(cell: Cell, size: float, z0: float, z1: float) -> pv.PolyData:
    x, y = centre(cell)
    half = size / 2
    return pv.Box(bounds=(x - half, x + half, y - half, y + half, z0, z1))


def _cells(values: Any) -> list[Cell]:
    out = []
    for value in values or []:
        try:
            cell = parse_cell(value)
        except ValueError:
            continue
        if on_board(cell):
            out.append(cell)
    return out


# ---- pieces -----------------------------------------------------------------------------------------------
def x_item(cell: Cell) -> SceneItem:
    """The player's X: two crossed flat bars."""
    x, y = centre(cell)
    bar = pv.Box(bounds=(x - 0.38, x + 0.38, y - 0.07, y + 0.07, 0.05, 0.17))
    mesh = bar.rotate_z(45, point=(x, y, 0)).append_polydata(bar.rotate_z(-45, point=(x, y, 0)))
    return SceneItem(f"x:{cell[0]},{cell[1]}", "mark", mesh, X_RGB, tooltip=f"X at {cell_text(cell)}")


def o_item(cell: Cell) -> SceneItem:
    """An opponent's O: a torus lying on the tile."""
    x, y = centre(cell)
    mesh = pv.ParametricTorus(ringradius=0.27, crosssectionradius=0.07).translate((x, y, 0.12))
    return SceneItem(f"o:{cell[0]},{cell[1]}", "blocked", mesh, O_RGB, tooltip=f"O at {cell_text(cell)} (taken)")


def mine_item(cell: Cell, hidden: bool, style: str = "ghost") -> SceneItem:
    """A mine: solid once stepped on; a ghost or a wireframe while only the seer knows it."""
    x, y = centre(cell)
    ball = pv.Sphere(radius=0.24, center=(x, y, 0.28), theta_resolution=18, phi_resolution=18)
    if not hidden:
        return SceneItem(f"mine:{cell[0]},{cell[1]}", "mine", ball, MINE_RGB, tooltip=f"mine at {cell_text(cell)}")
    wire = style == "wireframe"
    return SceneItem(
        f"hidden:{cell[0]},{cell[1]}",
        "hidden",
        ball,
        MINE_RGB,
        opacity=0.7 if wire else 0.3,
        style="wireframe" if wire else "surface",
        tooltip=f"hidden mine at {cell_text(cell)} (only the seer knows)",
    )


def safe_items(line: str, style: str) -> list[SceneItem]:
    """The safe line's tiles in green (the seer's goal for the player)."""
    wire = style == "wireframe"
    return [
        SceneItem(
            f"safe:{c[0]},{c[1]}",
            "safe",
            _cell_box(c, 0.94, 0.0, 0.03),
            SAFE_RGB,
            opacity=0.8 if wire else 0.45,
            style="wireframe" if wire else "surface",
            tooltip=f"{line}: the safe line",
            line_width=2.0,
            cull_back=True,  # a translucent tile veils what is below it once
        )
        for c in LINES.get(line, ())
    ]


@cache
def board_items() -> tuple[SceneItem, ...]:
    """The plate, nine tiles and the row/column numbers (they never change)."""
    plate = pv.Box(bounds=(-0.55, 2.55, -0.55, 2.55, -0.12, -0.02))
    items = [SceneItem("plate", "floor", plate, PLATE_RGB, tooltip="the 3x3 board")]
    items += [
        SceneItem(f"tile:{c[0]},{c[1]}", "floor", _cell_box(c, 0.92, -0.02, 0.0), TILE_RGB, tooltip=cell_text(c))
        for c in CELLS
    ]
    for k in range(SIZE):
        items.append(text_label(f"label:row{k}", (-1.0, SIZE - 1 - k, 0.0), f"row {k}", PLATE_RGB))
        items.append(text_label(f"label:col{k}", (k, SIZE - 0.3, 0.0), f"col {k}", PLATE_RGB))
    return tuple(items)


# ---- this turn's move -------------------------------------------------------------------------------------
def move_items(episode: Episode, turn: int) -> list[SceneItem]:
    """The magenta outline of this turn's mark, or a red box where a rejected mark was tried."""
    events = episode.events_of_turn(turn)
    result = next((e.data for e in events if e.kind == "result"), None)
    if result is None:
        return []
    cells = _cells([result.get("cell")])
    if not cells:
        return []
    cell, message = cells[0], str(result.get("message", ""))
    if result.get("ok"):
        box = _cell_box(cell, 1.0, 0.0, 0.25)
        return [SceneItem("move", "highlight", box, HIGHLIGHT_RGB, style="wireframe", tooltip=message, line_width=5.0)]
    tooltip = f"FAILED: {message} [{result.get('error', '')}]"
    return [
        SceneItem("move:failed", "failed", _cell_box(cell, 0.96, 0.0, 0.4), (0.92, 0.05, 0.05), 0.3, tooltip=tooltip)
    ]


# ---- the scene --------------------------------------------------------------------------------------------
def tictactoe_scene(episode: Episode, turn: int, overlay: bool = True, style: str = "ghost") -> list[SceneItem]:
    """Everything to draw after ``turn``: the board, the O's, the X's, the mines stepped on, with ``overlay``
    the hidden mines and the safe line (``style`` ``ghost`` or ``wireframe``), and this turn's move."""
    task: Mapping[str, Any] = episode.task
    state = episode.state_at(turn) or {}
    revealed = _cells(state.get("revealed"))
    items = [*board_items(), *(o_item(c) for c in _cells(task.get("blocked")))]
    items += [x_item(c) for c in _cells(state.get("marks"))]
    items += [mine_item(c, hidden=False) for c in revealed]
    if overlay:
        items += safe_items(str(task.get("line", "")), style)
        items += [mine_item(c, True, style) for c in _cells(task.get("mines")) if c not in revealed]
    return items + move_items(episode, turn)


CAMERAS: dict[str, CameraPose] = {
    "free": CameraPose("free", (2.4, -3.0, 5.0), (1.0, 1.0, 0.0), (0.0, 0.0, 1.0), view_angle=34.0),
    "player": CameraPose(
        "player", (1.0, 1.0, 10.0), (1.0, 1.0, 0.0), (0.0, 1.0, 0.0), parallel=True, parallel_scale=1.9
    ),
    "seer": CameraPose("seer", (-2.6, -2.2, 2.4), (1.1, 1.1, 0.0), (0.0, 0.0, 1.0), view_angle=38.0),
}
"""Named viewpoints, in button order: a three-quarter view, the player's top view (row 0 at the top of the
screen, orthographic, like the pictures) and a low view from the near-left corner, the seer's seat."""
