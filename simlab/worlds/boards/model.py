"""The cobot board: an 8x8 grid of stacks of at most 4 pieces, and every rule of the reference game.

Coordinates are 1-based as in the paper and the robot API: ``x`` is the row (1 at the top), ``y`` the column
(1 at the left). A cell's stack is contiguous from level 1. Pieces are washers, nuts and screws (one cell) and
bridges over two cells (``bridge-h``: (x, y) and (x, y+1); ``bridge-v``: (x, y) and (x+1, y)), whose halves
are listed as ``bridge-h-left``/``bridge-h-right`` and ``bridge-v-top``/``bridge-v-bottom``. A bridge is two
halves at the same level of neighbouring cells; the pairing is unambiguous (a left half's partner is the right
half just right of it), so no piece needs an id.

``put``, ``remove``, ``move`` and ``clear`` change a :class:`Board` in place and raise :class:`BoardError`
with a stable ``code`` and the reference's message (docs/BOARDS.md lists them). The checks of ``put`` run in
the reference's order, so the first broken rule is the one reported. Where the reference is broken
(V1's move shifts coordinates and breaks on stacking, undo does nothing) we do what was intended.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

SHAPES = ("washer", "nut", "screw", "bridge-h", "bridge-v")
"""What ``put`` places."""
COLOURS = ("red", "green", "blue", "yellow")
BRIDGES = ("bridge-h", "bridge-v")
HALVES = {"bridge-h": ("bridge-h-left", "bridge-h-right"), "bridge-v": ("bridge-v-top", "bridge-v-bottom")}
"""A bridge's anchor half and second half, as the text listing names them."""
HALF_OF = {half: (bridge, k) for bridge, halves in HALVES.items() for k, half in enumerate(halves)}
PIECE_NAMES = ("washer", "nut", "screw", *HALF_OF)
"""Every name a cell's stack can list."""
ROWS = 8
COLS = 8
LEVELS = 4

Messages = Literal["v2", "v1"]
RuleSet = Literal["current", "alternate"]

Cell = tuple[int, int]


class BoardError(ValueError):
    """A move the rules refuse: ``code`` is stable (``depth_mismatch``, ``same_colour``, ...), ``message`` is
    what the robot is told (the reference's words)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


ERROR_KINDS: Mapping[str, str] = {
    "out_of_bounds": "out of bounds",
    "bridge_out_of_bounds": "out of bounds",
    "unknown_shape": "unknown shape or colour",
    "bridge_half": "unknown shape or colour",
    "unknown_colour": "unknown shape or colour",
    "no_space": "no space",
    "bridge_level": "bridge level",
    "on_screw": "screw",
    "bridge_on_screw": "screw",
    "same_shape": "same shape",
    "same_colour": "same colour",
    "depth_mismatch": "depth mismatch",
    "remove_out_of_bounds": "remove",
    "nothing_to_remove": "remove",
    "remove_mismatch": "remove",
    "bridge_incomplete": "remove",
    "move_source": "move",
    "move_destination": "move",
    "move_same": "move",
    "move_empty_list": "move",
    "move_not_enough": "move",
    "move_no_space": "move",
}
"""The paper's error kinds (abort causes) for each rule's code."""


@dataclass(frozen=True)
class Piece:
    """One piece in a stack: ``name`` is one of :data:`PIECE_NAMES` (a bridge half for bridges)."""

    name: str
    colour: str

    @property
    def shape(self) -> str:
        """What ``put`` calls it: a half's bridge, else the name."""
        return HALF_OF[self.name][0] if self.name in HALF_OF else self.name

    def to_json(self) -> list[str]:
        return [self.name, self.colour]


@dataclass(frozen=True)
class Placement:
    """One ``put`` as data: a shape of a colour anchored at (x, y)."""

    shape: str
    colour: str
    x: int
    y: int

    def cells(self) -> tuple[Cell, ...]:
        """The cells it covers: the anchor, and a bridge's second cell."""
        return (self.x, self.y), *((second_cell(self.shape, self.x, self.y),) if self.shape in BRIDGES else ())

    def to_json(self) -> dict[str, Any]:
        return {"shape": self.shape, "colour": self.colour, "x": self.x, "y": self.y}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Placement:
        """A placement from its JSON; ValueError naming the field that is not what it should be."""
        shape, colour = data["shape"], data["colour"]
        if not isinstance(shape, str) or not isinstance(colour, str):
            raise ValueError(f"shape and colour must be strings, got {shape!r} and {colour!r}")
        return cls(shape, colour, whole(data["x"], "x"), whole(data["y"], "y"))

    def code(self) -> str:
        """The robot API call that makes it."""
        return f"put(board, '{self.shape}', '{self.colour}', {self.x}, {self.y})"


def whole(value: Any, field: str) -> int:
    """``value`` when it is a whole number (JSON ints only: not a bool, a float or a string)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{field}: expected a whole number, got {value!r:.40}")
    return value


def second_cell(bridge: str, x: int, y: int) -> Cell:
    """The cell a bridge anchored at (x, y) also covers."""
    return (x, y + 1) if bridge == "bridge-h" else (x + 1, y)


@dataclass(frozen=True)
class Rules:
    """Which rule set and which messages: ``messages`` v2 (descriptive, the default) or v1 (every placement
    error is ``Placement not possible``); ``rule_set`` current, or the older variant (the same shape may not
    sit on the same shape one or two levels below it, no colour rule; our reading of the older 0-based code's
    "same shape at alternate levels")."""

    messages: Messages = "v2"
    rule_set: RuleSet = "current"

    def refuse(self, code: str, message: str) -> BoardError:
        """The error for a broken placement rule, in the configured wording."""
        return BoardError(code, "Placement not possible" if self.messages == "v1" and code in PUT_CODES else message)


PUT_CODES = frozenset(
    {
        "out_of_bounds",
        "unknown_shape",
        "bridge_half",
        "unknown_colour",
        "no_space",
        "bridge_out_of_bounds",
        "bridge_level",
        "on_screw",
        "same_shape",
        "bridge_on_screw",
        "same_colour",
        "depth_mismatch",
    }
)


@dataclass
class Board:
    """Stacks of pieces on a ``rows`` x ``cols`` grid, at most ``levels`` high."""

    rows: int = ROWS
    cols: int = COLS
    levels: int = LEVELS
    stacks: dict[Cell, list[Piece]] = field(default_factory=dict)

    # ---- reading ---------------------------------------------------------------------------------------
    def inside(self, x: int, y: int) -> bool:
        return 1 <= x <= self.rows and 1 <= y <= self.cols

    def stack(self, x: int, y: int) -> list[Piece]:
        """The pieces at (x, y), bottom first (an empty list for an empty cell)."""
        return self.stacks.get((x, y), [])

    def height(self, x: int, y: int) -> int:
        return len(self.stack(x, y))

    def cells(self) -> list[Cell]:
        """The non-empty cells, row by row."""
        return sorted(c for c, pieces in self.stacks.items() if pieces)

    def pieces(self) -> Iterator[tuple[Cell, int, Piece]]:
        """Every piece as ((x, y), level, piece), level 1-based, cell by cell."""
        for cell in self.cells():
            for level, piece in enumerate(self.stacks[cell], start=1):
                yield cell, level, piece

    def count(self) -> int:
        """How many pieces the board holds (a bridge counts once)."""
        return sum(piece.name not in HALF_OF or HALF_OF[piece.name][1] == 0 for _cell, _level, piece in self.pieces())

    def top_level(self) -> int:
        """The highest occupied level (0 for an empty board)."""
        return max((len(p) for p in self.stacks.values()), default=0)

    def up_to(self, level: int) -> Board:
        """The board's levels 1..``level`` (a layer-wise target)."""
        return Board(self.rows, self.cols, self.levels, {c: p[:level] for c, p in self.stacks.items() if p[:level]})

    def copy(self) -> Board:
        return Board(self.rows, self.cols, self.levels, {c: list(p) for c, p in self.stacks.items() if p})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Board):
            return NotImplemented
        mine = {c: p for c, p in self.stacks.items() if p}
        theirs = {c: p for c, p in other.stacks.items() if p}
        return (self.rows, self.cols, mine) == (other.rows, other.cols, theirs)

    __hash__ = None  # type: ignore[assignment]  # mutable

    # ---- JSON -----------------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """``{"rows", "cols", "levels", "cells": [[x, y, [[name, colour], ...]], ...]}`` in row order."""
        return {
            "rows": self.rows,
            "cols": self.cols,
            "levels": self.levels,
            "cells": [[x, y, [p.to_json() for p in self.stacks[(x, y)]]] for x, y in self.cells()],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Board:
        """A board from :meth:`to_json`; ValueError naming the first bad field (bridges must be whole)."""
        board = cls(
            whole(data.get("rows", ROWS), "rows"),
            whole(data.get("cols", COLS), "cols"),
            whole(data.get("levels", LEVELS), "levels"),
        )
        for k, entry in enumerate(data.get("cells") or []):
            x, y, pieces = entry
            x, y = whole(x, f"cells[{k}] x"), whole(y, f"cells[{k}] y")
            if not board.inside(x, y):
                raise ValueError(f"cells[{k}]: ({x}, {y}) is off the {board.rows}x{board.cols} board")
            if len(pieces) > board.levels:
                raise ValueError(f"cells[{k}]: {len(pieces)} pieces, at most {board.levels}")
            for name, colour in pieces:
                if name not in PIECE_NAMES or colour not in COLOURS:
                    raise ValueError(f"cells[{k}]: unknown piece {name!r} of colour {colour!r}")
            board.stacks[(x, y)] = [Piece(str(n), str(c)) for n, c in pieces]
        broken = board.broken_bridges()
        if broken:
            (x, y), level = broken[0]
            raise ValueError(f"cells: the bridge half at ({x}, {y}) level {level} has no other half")
        return board

    def broken_bridges(self) -> list[tuple[Cell, int]]:
        """Bridge halves whose other half is missing: ((x, y), level) each."""
        out = []
        for (x, y), level, piece in self.pieces():
            if piece.name in HALF_OF:
                bridge, k = HALF_OF[piece.name]
                dx, dy = (0, 1) if bridge == "bridge-h" else (1, 0)
                px, py = (x + dx, y + dy) if k == 0 else (x - dx, y - dy)
                partner = self.stack(px, py)
                if len(partner) < level or partner[level - 1] != Piece(HALVES[bridge][1 - k], piece.colour):
                    out.append(((x, y), level))
        return out


# ---- put -------------------------------------------------------------------------------------------------
def normalised(value: Any) -> Any:
    """Shape and colour names are read case-insensitively ([REF-BUG] the reference silently never matched
    "Red"); other values pass through."""
    return value.strip().lower() if isinstance(value, str) else value


def put(board: Board, shape: str, colour: str, x: int, y: int, rules: Rules = Rules()) -> Placement:
    """Place ``shape`` of ``colour`` anchored at (x, y) on the first free level; BoardError for the first rule
    it breaks, in the reference's order (the board is then unchanged)."""
    shape, colour = normalised(shape), normalised(colour)
    check_put(board, shape, colour, x, y, rules)
    placement = Placement(shape, colour, x, y)
    if shape in BRIDGES:
        first, second = HALVES[shape]
        board.stacks.setdefault((x, y), []).append(Piece(first, colour))
        board.stacks.setdefault(second_cell(shape, x, y), []).append(Piece(second, colour))
    else:
        board.stacks.setdefault((x, y), []).append(Piece(shape, colour))
    return placement


def check_put(board: Board, shape: str, colour: str, x: int, y: int, rules: Rules = Rules()) -> None:
    """The placement rules of ``put`` in the reference's order (docs/BOARDS.md); BoardError for the first."""
    if not board.inside(x, y):
        raise rules.refuse("out_of_bounds", "x,y coordinates out of bounds")
    if shape in HALF_OF:
        raise rules.refuse("bridge_half", "Use 'bridge-h' or 'bridge-v' for shape placement")
    if shape not in SHAPES:
        raise rules.refuse(
            "unknown_shape", "Unknown shape used in put(). Use only screw, washer, nut, bridge-h, and bridge-v shapes"
        )
    if colour not in COLOURS:
        raise rules.refuse(
            "unknown_colour", "Unknown color used in put(). Use only red, green, blue, and yellow colors"
        )
    anchor = board.stack(x, y)
    if len(anchor) >= board.levels:
        raise rules.refuse("no_space", f"No more space to place shapes at this location ({x},{y})")
    bridge = shape in BRIDGES
    other: list[Piece] = []
    if bridge:
        sx, sy = second_cell(shape, x, y)
        if not board.inside(sx, sy):
            axis = "y" if shape == "bridge-h" else "x"
            raise rules.refuse("bridge_out_of_bounds", f"while placing {shape}, {axis} coordinate out of bounds")
        if len(anchor) >= 2:
            raise rules.refuse("bridge_level", f"{shape} can only be placed at levels 1 and 2")
        other = board.stack(sx, sy)
    if anchor:
        _check_stacking(anchor, other, shape, colour, (x, y), bridge, rules)
    if bridge:
        if len(other) >= board.levels:
            raise rules.refuse("no_space", f"No more space to place shapes at this location ({sx},{sy})")
        if len(other) != len(anchor):
            raise rules.refuse(
                "depth_mismatch", f"depth mismatch while placing {shape}, adjacent cell has different depth"
            )


def _check_stacking(
    anchor: Sequence[Piece], other: Sequence[Piece], shape: str, colour: str, at: Cell, bridge: bool, rules: Rules
) -> None:
    """Rules 7-10: what the new piece may sit on (only checked when the anchor cell is not empty)."""
    x, y = at
    if anchor[-1].name == "screw":
        raise rules.refuse("on_screw", "Cannot place a shape on top of a screw")
    name = HALVES[shape][0] if bridge else shape
    below = anchor if rules.rule_set == "current" else anchor[-2:]  # older rules: the two levels below
    if any(piece.name == name for piece in below):
        raise rules.refuse("same_shape", f"Cannot stack same shapes on top of each other at location ({x},{y})")
    if bridge and other and other[-1].name == "screw":
        raise rules.refuse("bridge_on_screw", "Cannot place a bridge on top of a screw")
    if rules.rule_set == "current":
        tops = [anchor[-1], *(other[-1:] if bridge else [])]
        if any(piece.colour == colour for piece in tops):
            raise rules.refuse("same_colour", f"Cannot stack same colors on top of each other at location ({x},{y})")


# ---- remove, move, clear -----------------------------------------------------------------------------
def remove(board: Board, x: int, y: int, shape: str, colour: str) -> Placement:
    """Take the top piece at (x, y) off when it is ``shape`` of ``colour``; a bridge (named by its shape or
    either half, from either cell) is taken off whole, and only when both halves are on top."""
    shape, colour = normalised(shape), normalised(colour)
    if not board.inside(x, y):
        raise BoardError("remove_out_of_bounds", "Removal not possible")
    stack = board.stack(x, y)
    if not stack:
        raise BoardError("nothing_to_remove", "No shapes to remove at the specified location")
    top = stack[-1]
    wanted = HALF_OF[shape][0] if shape in HALF_OF else shape
    if top.shape != wanted or top.colour != colour:
        raise BoardError(
            "remove_mismatch", "Shape or color at source location does not match the provided shape and color"
        )
    if top.name not in HALF_OF:
        stack.pop()
        return Placement(top.name, colour, x, y)
    anchor, level = bridge_anchor(top, x, y), len(stack)
    ax, ay = anchor
    sx, sy = second_cell(top.shape, ax, ay)
    if board.height(ax, ay) != level or board.height(sx, sy) != level:
        raise BoardError("bridge_incomplete", "Bridge shape incomplete at source location")
    board.stacks[(ax, ay)].pop()
    board.stacks[(sx, sy)].pop()
    return Placement(top.shape, colour, ax, ay)


def bridge_anchor(half: Piece, x: int, y: int) -> Cell:
    """The anchor cell of the bridge whose ``half`` is at (x, y)."""
    bridge, k = HALF_OF[half.name]
    if k == 0:
        return x, y
    return (x, y - 1) if bridge == "bridge-h" else (x - 1, y)


def move(
    board: Board,
    x1: int,
    y1: int,
    x2: int,
    y2: int,
    shapes_list: Sequence[tuple[str, str]] | None = None,
    rules: Rules = Rules(),
) -> list[Placement]:
    """Move the top piece at (x1, y1), or the top ``len(shapes_list)`` pieces named bottom to top, onto
    (x2, y2), all or nothing: every piece is re-checked by ``put``'s rules at the destination, and on any
    error the board is left as it was. Returns the placements made at the destination.

    [REF-BUG] V1's move shifts coordinates by one and breaks on stacking; this is what it was meant to do."""
    if not board.inside(x1, y1):
        raise BoardError("move_source", "Source location out of bounds")
    if not board.inside(x2, y2):
        raise BoardError("move_destination", "Destination location out of bounds")
    if (x1, y1) == (x2, y2):
        raise BoardError("move_same", "Source and destination locations are the same")
    if shapes_list is not None and len(shapes_list) == 0:
        raise BoardError("move_empty_list", "Shapes list cannot be empty")
    stack = board.stack(x1, y1)
    n = 1 if shapes_list is None else len(shapes_list)
    if len(stack) < n:
        raise BoardError("move_not_enough", "Not enough shapes at source location to move")
    moving = stack[len(stack) - n :]
    named = [(p.shape, p.colour) for p in moving] if shapes_list is None else [tuple(s) for s in shapes_list]
    if board.height(x2, y2) + n > board.levels:
        raise BoardError("move_no_space", f"Not enough space at destination location ({x2},{y2})")
    if [(p.shape, p.colour) for p in moving] != [(normalised(s), normalised(c)) for s, c in named]:
        raise BoardError(
            "remove_mismatch", "Shape or color at source location does not match the provided shape and color"
        )
    work = board.copy()
    for piece in reversed(moving):
        remove(work, x1, y1, piece.shape, piece.colour)
    done = [put(work, str(shape), str(colour), x2, y2, rules) for shape, colour in named]
    board.stacks = work.stacks
    return done


def clear(board: Board) -> None:
    """Take every piece off."""
    board.stacks = {}


# ---- building and comparing ------------------------------------------------------------------------------
def build(placements: Iterable[Placement], rows: int = ROWS, cols: int = COLS, rules: Rules = Rules()) -> Board:
    """The board ``placements`` make on an empty one, in order; BoardError for the first refused."""
    board = Board(rows, cols)
    for p in placements:
        put(board, p.shape, p.colour, p.x, p.y, rules)
    return board


def placements_of(board: Board) -> list[Placement]:
    """Placements that rebuild ``board`` level by level (row order within a level), each bridge once at its
    anchor: what an oracle robot types."""
    out = []
    for level in range(1, board.levels + 1):
        for cell in board.cells():
            pieces = board.stacks[cell]
            if len(pieces) < level:
                continue
            piece = pieces[level - 1]
            if piece.name in HALF_OF and HALF_OF[piece.name][1] == 1:
                continue  # the anchor half places the bridge
            out.append(Placement(piece.shape, piece.colour, *cell))
    return out
