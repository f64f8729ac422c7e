"""The CRAFT block world: blocks, moves, the board and the engine's rules.

Coordinates follow the CRAFT paper (appendix B.2): a cell is ``(i, j)`` with row ``i`` from 0 (far) to 2
(near) and column ``j`` from 0 (left) to 2 (right). Layers count from 0 at the bottom; a stack holds at
most three blocks. A block is a colour and a size; its code is the colour's letter plus ``s`` or ``l``
(``gs``, ``bl``...). A large block covers two orthogonally adjacent cells on the same layer and is stored
once, as one :class:`Piece` that sits in both stacks.

The engine never half-applies a move: :meth:`Board.apply` either changes the board or returns a
:class:`MoveResult` with a stable :class:`MoveError` code and leaves the board exactly as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, TypeGuard

GRID = 3
MAX_HEIGHT = 3
COLORS: tuple[str, ...] = ("green", "blue", "red", "yellow", "orange")
COLOR_LETTERS: dict[str, str] = {c[0]: c for c in COLORS}
SIZES: dict[str, str] = {"s": "small", "l": "large"}
BLOCK_CODES: tuple[str, ...] = tuple(c[0] + s for c in COLORS for s in "sl")

Cell = tuple[int, int]
CELLS: tuple[Cell, ...] = tuple((i, j) for i in range(GRID) for j in range(GRID))
_CELL_SET = frozenset(CELLS)


def color_of(code: str) -> str:
    """Colour name of a block code (``"bl"`` -> ``"blue"``)."""
    return COLOR_LETTERS[code[0]]


def is_large(code: str) -> bool:
    """True for a two-cell block code (a code too short to say is not one)."""
    return code[1:2] == "l"


def is_block_code(code: object) -> TypeGuard[str]:
    """True when ``code`` is one of the ten block codes."""
    return isinstance(code, str) and code in BLOCK_CODES


def in_grid(cell: object) -> bool:
    """True when ``cell`` is an ``(i, j)`` pair of ints inside the 3x3 grid."""
    # Exact type checks: (True, 0) equals (1, 0) but is not a cell. This runs for every move checked.
    return (
        type(cell) is tuple and len(cell) == 2 and type(cell[0]) is int and type(cell[1]) is int and cell in _CELL_SET
    )


def adjacent(a: Cell, b: Cell) -> bool:
    """True when two cells share an edge."""
    return abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1


def cell_key(cell: Cell) -> str:
    """JSON key of a cell: ``"i,j"``."""
    return f"{cell[0]},{cell[1]}"


def parse_cell(value: Any) -> Cell:
    """Read a cell from ``"i,j"``, ``"(i,j)"`` or ``[i, j]``; raise ValueError otherwise."""
    if isinstance(value, str):
        parts = value.strip().strip("()[]").split(",")
        if len(parts) != 2:
            raise ValueError(f"expected a cell like '1,2', got {value!r:.60}")
        try:
            cell = (int(parts[0]), int(parts[1]))
        except ValueError:
            raise ValueError(f"expected a cell like '1,2', got {value!r:.60}") from None
    elif isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, int) for v in value):
        cell = (int(value[0]), int(value[1]))
    else:
        raise ValueError(f"expected a cell like '1,2' or [1, 2], got {value!r:.60}")
    return cell


@dataclass(frozen=True)
class Piece:
    """One block on the board: its code, the cells it covers (one, or two sorted) and its layer."""

    code: str
    cells: tuple[Cell, ...]
    layer: int

    @property
    def large(self) -> bool:
        return len(self.cells) == 2

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "cells": [list(c) for c in self.cells], "layer": self.layer}


class Action(str, Enum):  # noqa: UP042 -- StrEnum needs 3.11; the project supports 3.10
    PLACE = "place"
    REMOVE = "remove"
    CLARIFY = "clarify"


@dataclass(frozen=True)
class Move:
    """A builder move. ``block`` is set for PLACE; ``span_to`` names a large block's second cell;
    ``text`` is the question of a CLARIFY."""

    action: Action
    cell: Cell | None = None
    layer: int | None = None
    block: str | None = None
    span_to: Cell | None = None
    text: str = ""

    @classmethod
    def place(cls, block: str, cell: Cell, layer: int, span_to: Cell | None = None) -> Move:
        return cls(Action.PLACE, cell, layer, block, span_to)

    @classmethod
    def remove(cls, cell: Cell, layer: int, span_to: Cell | None = None) -> Move:
        return cls(Action.REMOVE, cell, layer, None, span_to)

    @classmethod
    def clarify(cls, text: str) -> Move:
        return cls(Action.CLARIFY, text=text)

    def describe(self) -> str:
        """The compact form the CRAFT paper shows builders: ``PLACE bl @ (1,0) layer 0 -> (2,0)``."""
        if self.action is Action.CLARIFY:
            return f"CLARIFY {self.text!r}"
        head = "PLACE " + str(self.block) if self.action is Action.PLACE else "REMOVE"
        out = f"{head} @ ({_fmt(self.cell)}) layer {self.layer}"
        return out + (f" -> ({_fmt(self.span_to)})" if self.span_to else "")

    def reply_line(self) -> str:
        """The move in the builder's reply format, whole, so a model copies a large block with both cells:
        ``PLACE:bl:(1,0):0:(2,0)``, ``REMOVE:(0,2):1``, ``CLARIFY:text``."""
        if self.action is Action.CLARIFY:
            return f"CLARIFY:{self.text}"
        head = f"PLACE:{self.block}" if self.action is Action.PLACE else "REMOVE"
        out = f"{head}:({_fmt(self.cell)}):{self.layer}"
        return out + (f":({_fmt(self.span_to)})" if self.span_to else "")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action.value}
        if self.action is Action.CLARIFY:
            out["text"] = self.text
            return out
        if self.block is not None:
            out["block"] = self.block
        out["cell"] = list(self.cell) if self.cell is not None else None
        out["layer"] = self.layer
        if self.span_to is not None:
            out["span_to"] = list(self.span_to)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Move:
        """Inverse of :meth:`to_json`; raises ValueError naming the bad field."""
        try:
            action = Action(str(data.get("action", "")).lower())
        except ValueError:
            raise ValueError(f"field 'action': expected place, remove or clarify, got {data.get('action')!r}") from None
        if action is Action.CLARIFY:
            return cls.clarify(str(data.get("text", "")))
        cell = _field_cell(data, "cell")
        span = _field_cell(data, "span_to") if data.get("span_to") is not None else None
        layer = data.get("layer")
        if not isinstance(layer, int) or isinstance(layer, bool):
            raise ValueError(f"field 'layer': expected an integer, got {layer!r}")
        block = data.get("block")
        if action is Action.PLACE and not isinstance(block, str):
            raise ValueError(f"field 'block': expected a block code like 'gs', got {block!r}")
        return cls(action, cell, layer, block if action is Action.PLACE else None, span)


def _span(k: int, span: Any) -> tuple[int, Cell, Cell]:
    """One ``[layer, [i,j], [i,j]]`` of a board's spans; ValueError naming it otherwise."""
    ok = isinstance(span, (list, tuple)) and len(span) == 3
    layer = span[0] if ok else None
    if not ok or isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < MAX_HEIGHT:
        raise ValueError(f"field 'spans[{k}]': expected [layer 0-{MAX_HEIGHT - 1}, [i,j], [i,j]], got {span!r:.60}")
    try:
        return layer, parse_cell(span[1]), parse_cell(span[2])
    except ValueError:
        raise ValueError(f"field 'spans[{k}]': expected [layer, [i,j], [i,j]], got {span!r:.60}") from None


def _fmt(cell: Cell | None) -> str:
    return "?" if cell is None else f"{cell[0]},{cell[1]}"


def _field_cell(data: Mapping[str, Any], name: str) -> Cell:
    try:
        return parse_cell(data.get(name))
    except ValueError as exc:
        raise ValueError(f"field '{name}': {exc}") from None


class MoveError(str, Enum):  # noqa: UP042 -- as Action
    """Stable codes for rejected moves; the values are what recordings store."""

    BAD_COORDINATES = "bad_coordinates"
    UNKNOWN_BLOCK = "unknown_block"
    STACK_FULL = "stack_full"
    WRONG_LAYER = "wrong_layer"
    SPAN_MISSING = "span_missing"
    SPAN_ON_SMALL = "span_on_small"
    SPAN_NOT_ADJACENT = "span_not_adjacent"
    SPAN_HEIGHT_MISMATCH = "span_height_mismatch"
    SPAN_MISMATCH = "span_mismatch"
    EMPTY_STACK = "empty_stack"
    NOT_TOP = "not_top"
    NOT_A_MOVE = "not_a_move"

    @property
    def family(self) -> str:
        """Failure-taxonomy family (CRAFT appendix C): ``layer``, ``span`` or ``other``."""
        if self in (MoveError.WRONG_LAYER, MoveError.STACK_FULL, MoveError.NOT_TOP, MoveError.EMPTY_STACK):
            return "layer"
        if self.value.startswith("span"):
            return "span"
        return "other"


@dataclass(frozen=True)
class MoveResult:
    """What the engine said about a move: ``ok`` or an error code with a message a model can act on."""

    ok: bool
    message: str
    error: MoveError | None = None
    piece: Piece | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok, "message": self.message}
        if self.error is not None:
            out["error"] = self.error.value
        if self.piece is not None:
            out["piece"] = self.piece.to_json()
        return out


def _reject(error: MoveError, message: str) -> MoveResult:
    return MoveResult(False, message, error)


@dataclass
class Board:
    """Nine stacks of pieces. A large piece appears in both of its cells' stacks."""

    stacks: dict[Cell, list[Piece]] = field(default_factory=lambda: {c: [] for c in CELLS})

    # ---- queries -------------------------------------------------------------------------------
    def height(self, cell: Cell) -> int:
        return len(self.stacks[cell])

    def top(self, cell: Cell) -> Piece | None:
        stack = self.stacks[cell]
        return stack[-1] if stack else None

    def at(self, cell: Cell, layer: int) -> Piece | None:
        stack = self.stacks[cell]
        return stack[layer] if 0 <= layer < len(stack) else None

    def codes(self, cell: Cell) -> list[str]:
        """Block codes of a cell bottom to top, a large block listed in both cells (CRAFT's form)."""
        return [p.code for p in self.stacks[cell]]

    def pieces(self) -> Iterator[Piece]:
        """Every piece once, ordered by layer then cells."""
        seen = sorted({p for stack in self.stacks.values() for p in stack}, key=lambda p: (p.layer, p.cells))
        yield from seen

    def block_count(self) -> int:
        """Occupied cell-layers: a large block counts twice (the paper's "total blocks")."""
        return sum(len(s) for s in self.stacks.values())

    def copy(self) -> Board:
        return Board({c: list(s) for c, s in self.stacks.items()})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Board) and self.stacks == other.stacks

    # ---- the rules -----------------------------------------------------------------------------
    def check(self, move: Move) -> MoveResult:
        """Validate a move without changing the board."""
        if move.action is Action.CLARIFY:
            return _reject(MoveError.NOT_A_MOVE, "a clarification does not change the board")
        if not in_grid(move.cell) or (move.span_to is not None and not in_grid(move.span_to)):
            return _reject(MoveError.BAD_COORDINATES, "cells must be (row, column) with each in 0..2")
        if not isinstance(move.layer, int) or isinstance(move.layer, bool) or not 0 <= move.layer < MAX_HEIGHT:
            return _reject(MoveError.WRONG_LAYER, f"layer must be 0, 1 or 2, got {move.layer!r}")
        if move.action is Action.PLACE:
            return self._check_place(move)
        return self._check_remove(move)

    def _check_place(self, move: Move) -> MoveResult:
        cell, layer, code, span = move.cell, move.layer, move.block, move.span_to
        assert cell is not None and layer is not None
        if not is_block_code(code):
            known = ", ".join(BLOCK_CODES)
            return _reject(MoveError.UNKNOWN_BLOCK, f"unknown block {code!r}; use one of {known}")
        h = self.height(cell)
        if h >= MAX_HEIGHT:
            return _reject(MoveError.STACK_FULL, f"stack ({_fmt(cell)}) is full (3 blocks)")
        if layer != h:
            return _reject(
                MoveError.WRONG_LAYER,
                f"stack ({_fmt(cell)}) has {h} blocks, so the next block goes on layer {h}, not {layer}",
            )
        if not is_large(code):
            if span is not None:
                return _reject(MoveError.SPAN_ON_SMALL, f"{code} is a small block and covers one cell; drop span_to")
            piece = Piece(code, (cell,), layer)
            return MoveResult(True, f"placed {code} at ({_fmt(cell)}) layer {layer}", piece=piece)
        if span is None:
            return _reject(MoveError.SPAN_MISSING, f"{code} is a large block; name the second cell with span_to")
        if not adjacent(cell, span):
            return _reject(
                MoveError.SPAN_NOT_ADJACENT,
                f"({_fmt(span)}) is not next to ({_fmt(cell)}); a large block covers two cells that share an edge",
            )
        hs = self.height(span)
        if hs != h:
            return _reject(
                MoveError.SPAN_HEIGHT_MISMATCH,
                f"a large block needs both stacks at the same height: ({_fmt(cell)}) has {h}, ({_fmt(span)}) has {hs}",
            )
        piece = Piece(code, tuple(sorted((cell, span))), layer)
        message = f"placed {code} at ({_fmt(cell)}) layer {layer} spanning to ({_fmt(span)})"
        return MoveResult(True, message, piece=piece)

    def _check_remove(self, move: Move) -> MoveResult:
        cell, layer, span = move.cell, move.layer, move.span_to
        assert cell is not None and layer is not None
        h = self.height(cell)
        if h == 0:
            return _reject(MoveError.EMPTY_STACK, f"stack ({_fmt(cell)}) is empty; nothing to remove")
        if layer != h - 1:
            return _reject(
                MoveError.NOT_TOP,
                f"only the top block of ({_fmt(cell)}) can be removed; it is on layer {h - 1}, not {layer}",
            )
        piece = self.stacks[cell][-1]
        if span is not None and (not piece.large or span not in piece.cells or span == cell):
            return _reject(
                MoveError.SPAN_MISMATCH,
                f"the top block of ({_fmt(cell)}) is {piece.code} covering {_cells_text(piece.cells)}, "
                f"not a block spanning to ({_fmt(span)})",
            )
        for other in piece.cells:
            if self.stacks[other][-1] is not piece:
                return _reject(
                    MoveError.NOT_TOP,
                    f"the large {piece.code} at ({_fmt(cell)}) is covered at ({_fmt(other)}); "
                    "remove the block above it first",
                )
        return MoveResult(True, f"removed {piece.code} from {_cells_text(piece.cells)} layer {layer}", piece=piece)

    def apply(self, move: Move) -> MoveResult:
        """Check a move and, when legal, carry it out. A rejected move changes nothing."""
        result = self.check(move)
        if result.ok:
            assert result.piece is not None
            for c in result.piece.cells:
                if move.action is Action.PLACE:
                    self.stacks[c].append(result.piece)
                else:
                    self.stacks[c].pop()
        return result

    # ---- serialisation -------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """``{"stacks": {"i,j": [codes bottom to top]}, "spans": [[layer, [i,j], [i,j]], ...]}``."""
        spans = [[p.layer, list(p.cells[0]), list(p.cells[1])] for p in self.pieces() if p.large]
        return {"stacks": {cell_key(c): self.codes(c) for c in CELLS}, "spans": spans}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Board:
        """Inverse of :meth:`to_json`. Raises ValueError naming the cell or span that is wrong."""
        stacks = data.get("stacks")
        if not isinstance(stacks, Mapping):
            raise ValueError("field 'stacks': expected an object mapping 'i,j' to block codes")
        raw_spans = data.get("spans") or []
        if not isinstance(raw_spans, list) or len(raw_spans) > len(CELLS) * MAX_HEIGHT:
            raise ValueError(f"field 'spans': expected a list of [layer, [i,j], [i,j]], got {raw_spans!r:.60}")
        spans = [_span(k, span) for k, span in enumerate(raw_spans)]
        codes: dict[Cell, list[str]] = {}
        for key, value in stacks.items():
            cell = parse_cell(key)
            if not in_grid(cell):
                raise ValueError(f"field 'stacks': cell {key!r:.40} is outside the 3x3 grid")
            if not isinstance(value, list) or not all(isinstance(code, str) for code in value):
                raise ValueError(f"field 'stacks': cell {key!r:.40} holds {value!r:.60}, expected a list of codes")
            codes[cell] = list(value)
        return cls.from_codes(codes, spans)

    @classmethod
    def from_codes(cls, codes: Mapping[Cell, Iterable[str]], spans: Iterable[tuple[int, Cell, Cell]]) -> Board:
        """Build a board from per-cell code lists (large codes listed in both cells) and the large blocks'
        ``(layer, cell_a, cell_b)`` pairs. Raises ValueError when the two disagree."""
        board = cls()
        partner: dict[tuple[Cell, int], Cell] = {}
        for layer, a, b in spans:
            if not (in_grid(a) and in_grid(b) and adjacent(a, b)):
                raise ValueError(f"span at layer {layer}: cells {a} and {b} are not adjacent grid cells")
            partner[(a, layer)], partner[(b, layer)] = b, a
        made: dict[tuple[Cell, int], Piece] = {}
        for cell in CELLS:
            stack = list(codes.get(cell, []))
            if len(stack) > MAX_HEIGHT:
                raise ValueError(f"cell ({_fmt(cell)}): {len(stack)} blocks, at most {MAX_HEIGHT} allowed")
            for layer, code in enumerate(stack):
                if not is_block_code(code):
                    raise ValueError(f"cell ({_fmt(cell)}) layer {layer}: unknown block code {code!r}")
                other = partner.get((cell, layer))
                if is_large(code) != (other is not None):
                    what = "has no span partner" if is_large(code) else "is small but listed in a span"
                    raise ValueError(f"cell ({_fmt(cell)}) layer {layer}: {code} {what}")
                if other is None:
                    piece = Piece(code, (cell,), layer)
                elif (cell, layer) in made:
                    piece = made[(cell, layer)]
                    if piece.code != code:
                        raise ValueError(
                            f"cell ({_fmt(cell)}) layer {layer}: {code} does not match its partner's {piece.code}"
                        )
                else:
                    piece = Piece(code, tuple(sorted((cell, other))), layer)
                    made[(other, layer)] = piece
                board.stacks[cell].append(piece)
        for (cell, layer), piece in made.items():
            if board.at(cell, layer) is not piece:
                raise ValueError(f"cell ({_fmt(cell)}) layer {layer}: the other half of {piece.code} is missing")
        # A span naming an empty cell-layer would otherwise be dropped silently and break the round trip.
        for cell, layer in partner:
            if board.at(cell, layer) is None:
                raise ValueError(f"span at layer {layer}: cell ({_fmt(cell)}) has no block on that layer")
        return board


def _cells_text(cells: tuple[Cell, ...]) -> str:
    return " and ".join(f"({_fmt(c)})" for c in cells)
