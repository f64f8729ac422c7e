"""What each director sees of the target, and the builder's plain view of the board (CRAFT 4.1, B.4).

Walls. D1 sees the left column (j = 0), D2 the far row (i = 0), D3 the right column (j = 2), each as three
layers (bottom to top) of three positions. Left-to-right order, fixed by the paper's Figure 7 caption for
structure_016 (D1's bottom layer "small orange, red, green" has (0,0) first; D3's layers start at (0,2),
which D2 shows last):

* D1: (0,0), (1,0), (2,0) -- far to near. D1 stands outside the left wall looking in (towards +j), so the far
  side is on their left hand.
* D2: (0,0), (0,1), (0,2) -- left to right as the builder sees it: D2 faces the far wall from the builder's
  side (towards -i).
* D3: (0,2), (1,2), (2,2) -- far to near. D3 faces the same way as D1 (towards +j), i.e. looks at the right
  wall from the inside; reading it from outside would reverse it, and the caption rules that out.

Apparent size: on a wall a large block shows as size 2 only when both of its cells lie on that wall; otherwise
the director sees one face, size 1. An interior top seen from above is size 2 when its other half is also
visible to D2 (on the far wall or the other interior top).

Interior. With ``interior="paper"`` D2 also looks down into the optional cells (1,1) and (2,1) and sees only
the topmost block of each (colour, apparent size, layer), as the Figure 7 caption describes. With
``interior="reference"`` (the released code) nobody sees the interior. :func:`hidden_cells` lists the
target cell-layers that no director sees under a setting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from simlab.worlds.blocks.model import CELLS, MAX_HEIGHT, Board, Cell, Move, Piece, cell_key, color_of

Director = Literal["D1", "D2", "D3"]
Interior = Literal["paper", "reference"]
DIRECTORS: tuple[Director, ...] = ("D1", "D2", "D3")
WALL_NAMES: dict[str, str] = {"D1": "left", "D2": "far", "D3": "right"}
WALL_POSITIONS: dict[str, tuple[Cell, ...]] = {
    "D1": ((0, 0), (1, 0), (2, 0)),
    "D2": ((0, 0), (0, 1), (0, 2)),
    "D3": ((0, 2), (1, 2), (2, 2)),
}
INTERIOR_CELLS: tuple[Cell, ...] = ((1, 1), (2, 1))
INTERIOR_VIEWER = "D2"
POSITION_NAMES: tuple[str, ...] = ("left", "middle", "right")
POSITION_PLACES: tuple[str, ...] = ("on the left", "in the middle", "on the right")
LAYER_NAMES: tuple[str, ...] = ("bottom", "middle", "top")


@dataclass(frozen=True)
class ViewCell:
    """One visible block face: its colour and apparent size (2 only when the whole domino is visible)."""

    color: str
    size: int

    def to_json(self) -> dict[str, Any]:
        """``{"color": ..., "size": 1|2}``."""
        return {"color": self.color, "size": self.size}


@dataclass(frozen=True)
class InteriorTop:
    """The topmost block of an interior cell seen from above, or ``cell`` alone when it is empty."""

    cell: Cell
    block: ViewCell | None = None
    layer: int | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"cell": [i, j], "top": {"color", "size", "layer"} | null}``."""
        out: dict[str, Any] = {"cell": list(self.cell)}
        if self.block is None:
            out["top"] = None
        else:
            out["top"] = {**self.block.to_json(), "layer": self.layer}
        return out


@dataclass(frozen=True)
class WallView:
    """A director's private projection of the target."""

    director: str
    wall: str
    positions: tuple[Cell, ...]
    layers: tuple[tuple[ViewCell | None, ...], ...]  # bottom to top, each left to right
    interior: tuple[InteriorTop, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Compact JSON: director, wall, positions left to right, layers bottom to top, D2's interior tops."""
        out: dict[str, Any] = {
            "director": self.director,
            "wall": self.wall,
            "positions": [list(c) for c in self.positions],
            "layers": [[v.to_json() if v else None for v in row] for row in self.layers],
        }
        if self.interior:
            out["interior"] = [top.to_json() for top in self.interior]
        return out

    def segments(self, layer: int) -> list[tuple[int, int, ViewCell | None]]:
        """Runs ``(first, last, cell)`` of one layer; a size-2 block is one run over two positions."""
        row = self.layers[layer]
        runs: list[tuple[int, int, ViewCell | None]] = []
        k = 0
        while k < len(row):
            cell = row[k]
            pair = k + 1 < len(row) and cell is not None and cell.size == 2 and cell == row[k + 1]
            runs.append((k, k + 1 if pair else k, cell))
            k += 2 if pair else 1
        return runs

    def to_text(self) -> str:
        """Plain English, top layer first, then (D2 with the paper setting) the interior."""
        lines = [_layer_sentence(self, layer) for layer in reversed(range(len(self.layers)))]
        if self.interior:
            lines.append(_interior_sentence(self.interior))
        return "\n".join(lines)


# ---- visibility ---------------------------------------------------------------------------------------------
def visible_cell_layers(target: Board, director: str, interior: Interior = "paper") -> set[tuple[Cell, int]]:
    """Every (cell, layer) of the target that ``director`` can see, empty or not."""
    seen = {(c, layer) for c in WALL_POSITIONS[director] for layer in range(MAX_HEIGHT)}
    if director == INTERIOR_VIEWER and interior == "paper":
        for cell in INTERIOR_CELLS:
            if target.height(cell):
                seen.add((cell, target.height(cell) - 1))
    return seen


def hidden_cells(target: Board, interior: Interior = "paper") -> list[tuple[Cell, int]]:
    """Target cell-layers holding a block that no director can see, sorted."""
    seen = set().union(*(visible_cell_layers(target, d, interior) for d in DIRECTORS))
    return [(c, layer) for c in CELLS for layer in range(target.height(c)) if (c, layer) not in seen]


def sees_move(move: Move, visible: set[tuple[Cell, int]]) -> bool:
    """True when a director with these visible cell-layers sees any part of the block a move concerns: a large
    block seen end-on on a wall is still that director's to describe (an oracle director knows its extent)."""
    cells = [move.cell] + ([move.span_to] if move.span_to is not None else [])
    return any((c, move.layer) in visible for c in cells)


def reachable_board(target: Board, interior: Interior = "paper") -> Board:
    """The most of ``target`` that directors can get built: from the empty board, keep applying oracle moves
    that some director sees (:func:`sees_move`) until none is left. Blocks resting on hidden ones stay out.

    From the empty board every oracle move places the next target block of its cells (the board stays a part of
    the target, so nothing comes off), and placing one never takes another's place. So the end is the same
    whatever the order: every target block some director sees whose cells are built up to its layer. Built
    here in one pass by layer (a world is made per episode; following the oracle took 2 ms of a live episode's
    11); tests pin it against following the oracle move by move."""
    seen = set().union(*(visible_cell_layers(target, d, interior) for d in DIRECTORS))
    board = Board()
    for piece in target.pieces():  # by layer: the blocks beneath a block are decided before it
        built_up_to_it = all(board.height(c) == piece.layer for c in piece.cells)
        if built_up_to_it and any((c, piece.layer) in seen for c in piece.cells):
            for cell in piece.cells:
                board.stacks[cell].append(piece)
    return board


def _view_cell(piece: Piece | None, seen: set[tuple[Cell, int]]) -> ViewCell | None:
    if piece is None:
        return None
    whole = piece.large and all((c, piece.layer) in seen for c in piece.cells)
    return ViewCell(color_of(piece.code), 2 if whole else 1)


def director_view(target: Board, director: Director, interior: Interior = "paper") -> WallView:
    """The private view ``director`` gets of ``target``."""
    if director not in WALL_POSITIONS:
        raise ValueError(f"unknown director {director!r}; expected one of {', '.join(DIRECTORS)}")
    if interior not in ("paper", "reference"):
        raise ValueError(f"interior must be 'paper' or 'reference', got {interior!r}")
    positions = WALL_POSITIONS[director]
    # On the wall a block is size 2 only when both halves are on the wall (B.4), so a size-2 face always
    # pairs with its neighbour on the same row.
    wall = {(c, layer) for c in positions for layer in range(MAX_HEIGHT)}
    layers = tuple(tuple(_view_cell(target.at(c, layer), wall) for c in positions) for layer in range(MAX_HEIGHT))
    seen = visible_cell_layers(target, director, interior)
    tops: tuple[InteriorTop, ...] = ()
    if director == INTERIOR_VIEWER and interior == "paper":
        tops = tuple(_interior_top(target, c, seen) for c in INTERIOR_CELLS)
    return WallView(director, WALL_NAMES[director], positions, layers, tops)


def _interior_top(target: Board, cell: Cell, seen: set[tuple[Cell, int]]) -> InteriorTop:
    piece = target.top(cell)
    if piece is None:
        return InteriorTop(cell)
    return InteriorTop(cell, _view_cell(piece, seen), piece.layer)


# ---- English ------------------------------------------------------------------------------------------------
def block_phrase(code: str, apparent_size: int | None = None) -> str:
    """``"a small yellow block"`` / ``"a large blue block"``; the size is the apparent one when given."""
    size = apparent_size if apparent_size is not None else (2 if code[1] == "l" else 1)
    return f"a {'large' if size == 2 else 'small'} {color_of(code)} block"


def _view_phrase(cell: ViewCell) -> str:
    return block_phrase(cell.color[0] + ("l" if cell.size == 2 else "s"), cell.size)


def _layer_sentence(view: WallView, layer: int) -> str:
    parts = []
    for first, last, cell in view.segments(layer):
        if first == last:
            where = POSITION_PLACES[first]
        else:
            where = f"across the {POSITION_NAMES[first]} and {POSITION_NAMES[last]}"
        parts.append(f"{_view_phrase(cell)} {where}" if cell else f"empty {where}")
    return f"Layer {layer} ({LAYER_NAMES[layer]}): {', '.join(parts)}."


def _interior_sentence(tops: tuple[InteriorTop, ...]) -> str:
    parts = []
    for top in tops:
        name = f"({top.cell[0]},{top.cell[1]})"
        if top.block is None:
            parts.append(f"{name} is empty")
        else:
            parts.append(f"{name} shows {_view_phrase(top.block)} on top at layer {top.layer}")
    return f"Looking down into the middle: {'; '.join(parts)}."


def board_text(board: Board) -> str:
    """The builder's view: every cell's stack bottom to top with its height; large blocks name their partner."""
    lines = ["Current board (row 0 is far, column 0 is left; stacks bottom to top):"]
    for cell in CELLS:
        stack = board.stacks[cell]
        items = [_piece_text(p, cell) for p in stack]
        lines.append(f"({cell[0]},{cell[1]}) height {len(stack)}: {', '.join(items) if items else 'empty'}")
    return "\n".join(lines)


def _piece_text(piece: Piece, cell: Cell) -> str:
    if not piece.large:
        return piece.code
    other = next(c for c in piece.cells if c != cell)
    return f"{piece.code} (large, with ({other[0]},{other[1]}))"


def board_json(board: Board) -> dict[str, Any]:
    """:meth:`Board.to_json` plus each cell's height, for prompts and recordings."""
    return {**board.to_json(), "heights": {cell_key(c): board.height(c) for c in CELLS}}
