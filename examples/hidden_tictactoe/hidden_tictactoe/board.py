"""The board and its rules: cells, the eight lines, a task's hidden layout and what a move does.

Cells are ``(row, column)`` with rows 0-2 from the top and columns 0-2 from the left. A task hides mines and
puts the opponent's marks (``O``, visible to both roles) so that exactly one line stays free: the safe line.
The player wins by marking every cell of any line (only the safe line can be completed); each mine stepped on
costs a life. Everything here is plain data and pure functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Cell = tuple[int, int]
SIZE = 3
CELLS: tuple[Cell, ...] = tuple((i, j) for i in range(SIZE) for j in range(SIZE))
LINES: dict[str, tuple[Cell, ...]] = {
    **{f"row {i}": tuple((i, j) for j in range(SIZE)) for i in range(SIZE)},
    **{f"column {j}": tuple((i, j) for i in range(SIZE)) for j in range(SIZE)},
    "diagonal": tuple((k, k) for k in range(SIZE)),
    "anti-diagonal": tuple((k, SIZE - 1 - k) for k in range(SIZE)),
}
"""The eight lines by name, each cell in reading order."""
LINE_KINDS: tuple[str, ...] = ("row", "column", "diagonal")


def line_kind(name: str) -> str:
    """``"row 2"`` -> ``"row"``, ``"anti-diagonal"`` -> ``"diagonal"``."""
    return "diagonal" if name.endswith("diagonal") else name.split()[0]


def parse_cell(value: Any) -> Cell:
    """A cell from JSON ``[i, j]``; ValueError saying what is wrong (off-board cells are allowed here)."""
    ok = isinstance(value, (list, tuple)) and len(value) == 2
    if not ok or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ValueError(f"expected a cell [row, column] of two whole numbers, got {value!r}")
    return (int(value[0]), int(value[1]))


def on_board(cell: Cell) -> bool:
    """Whether ``cell`` is one of the nine cells."""
    return 0 <= cell[0] < SIZE and 0 <= cell[1] < SIZE


def cell_text(cell: Cell) -> str:
    """``(1, 2)`` -> ``"(1,2)"``, the way every message and prompt writes a cell."""
    return f"({cell[0]},{cell[1]})"


def cells_text(cells: Iterable[Cell]) -> str:
    """Cells joined by spaces, or ``none``."""
    return " ".join(cell_text(c) for c in cells) or "none"


def cells_json(cells: Iterable[Cell]) -> list[list[int]]:
    """Cells as JSON lists."""
    return [[c[0], c[1]] for c in cells]


def completed_line(marks: Iterable[Cell]) -> str | None:
    """The first line (in :data:`LINES` order) whose three cells are all marked, or None."""
    have = set(marks)
    return next((name for name, cells in LINES.items() if all(c in have for c in cells)), None)


@dataclass(frozen=True)
class Layout:
    """What a task fixes: the opponent's marks (seen by both), the hidden mines and the safe line's name."""

    blocked: tuple[Cell, ...]
    mines: tuple[Cell, ...]
    line: str

    @property
    def target(self) -> tuple[Cell, ...]:
        """The cells of the safe line."""
        return LINES[self.line]

    @classmethod
    def from_task(cls, task: Mapping[str, Any]) -> Layout:
        """The layout of a task JSON; ValueError naming the first bad field."""
        line = task.get("line")
        if not isinstance(line, str) or line not in LINES:
            raise ValueError(f"field 'line': expected one of {', '.join(LINES)}, got {line!r:.60}")
        layout = cls(_cells(task, "blocked"), _cells(task, "mines"), str(line))
        layout.check()
        return layout

    def check(self) -> None:
        """ValueError when cells repeat or a hazard lies on the safe line."""
        hazards = [*self.blocked, *self.mines]
        if len(set(hazards)) != len(hazards):
            raise ValueError("fields 'blocked' and 'mines': a cell is listed twice")
        on_line = [c for c in hazards if c in self.target]
        if on_line:
            raise ValueError(f"field 'line': {self.line} holds {cells_text(on_line)}; the safe line must be free")

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "blocked": cells_json(self.blocked), "mines": cells_json(self.mines)}


def _cells(task: Mapping[str, Any], name: str) -> tuple[Cell, ...]:
    value = task.get(name)
    if not isinstance(value, list):
        raise ValueError(f"field {name!r}: expected a list of cells, got {value!r}")
    try:
        cells = tuple(parse_cell(v) for v in value)
    except ValueError as exc:
        raise ValueError(f"field {name!r}: {exc}") from None
    off = [c for c in cells if not on_board(c)]
    if off:
        raise ValueError(f"field {name!r}: {cells_text(off)} is off the 3x3 board")
    return cells


def free_lines(layout: Layout) -> list[str]:
    """The lines holding neither a mine nor an opponent's mark (the generator leaves exactly one)."""
    hazards = {*layout.blocked, *layout.mines}
    return [name for name, cells in LINES.items() if not hazards & set(cells)]


@dataclass(frozen=True)
class Verdict:
    """What the engine says about one move: ``error`` is a stable code when not ``ok``."""

    ok: bool
    message: str
    error: str | None = None

    def to_json(self, cell: Sequence[int]) -> dict[str, Any]:
        """The engine's ``result`` event data for a move on ``cell``."""
        out: dict[str, Any] = {"ok": self.ok, "message": self.message, "cell": list(cell)}
        return out | ({"error": self.error} if self.error else {})


def judge(layout: Layout, marks: Sequence[Cell], revealed: Sequence[Cell], cell: Cell) -> Verdict:
    """The verdict on marking ``cell``: off the board, taken (by O, by X, by a mine already found), a mine, or
    a new mark."""
    where = cell_text(cell)
    if not on_board(cell):
        return Verdict(False, f"{where} is off the board", "off_board")
    if cell in layout.blocked:
        return Verdict(False, f"{where} already holds an O", "blocked")
    if cell in marks or cell in revealed:
        return Verdict(False, f"{where} is already taken", "occupied")
    if cell in layout.mines:
        return Verdict(False, f"BOOM: {where} was a hidden mine", "mine")
    return Verdict(True, f"marked {where}")


def grid_text(layout: Layout, marks: Sequence[Cell], revealed: Sequence[Cell], hidden: bool) -> str:
    """The board as text rows; ``hidden`` adds what only the seer knows (mines ``M``, safe cells ``+``)."""
    rows = ["    0 1 2"]
    for i in range(SIZE):
        rows.append(f" {i}  " + " ".join(_symbol(layout, marks, revealed, (i, j), hidden) for j in range(SIZE)))
    return "\n".join(rows)


def _symbol(layout: Layout, marks: Sequence[Cell], revealed: Sequence[Cell], cell: Cell, hidden: bool) -> str:
    if cell in marks:
        return "X"
    if cell in layout.blocked:
        return "O"
    if cell in revealed:
        return "*"
    if hidden and cell in layout.mines:
        return "M"
    if hidden and cell in layout.target:
        return "+"
    return "."
