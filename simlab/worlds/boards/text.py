"""The boards' text renderings, exactly as the reference game words them (1-based rows and columns):
the layered listing a text-mode model reads, and the difference grid a text-mode programmer gets. One
departure: an empty board, which the reference prints as ``None`` (its listing returns no string), is said
in words (:data:`EMPTY_LISTING`)."""

from __future__ import annotations

from dataclasses import dataclass

from simlab.worlds.boards.model import Board, Cell, Piece

LISTING_HEAD = "Grid levels (bottom to top):"
DIFF_HEAD = "Differences between target grid and player's grid (bottom to top):"
EMPTY_LISTING = "Empty: no pieces on the board."


def piece_text(piece: Piece) -> str:
    """``{'shapes': ['washer'], 'colors': ['yellow']}``: one piece as the reference prints a cell's level."""
    return f"{{'shapes': ['{piece.name}'], 'colors': ['{piece.colour}']}}"


def at_level(board: Board, cell: Cell, level: int) -> Piece | None:
    stack = board.stack(*cell)
    return stack[level - 1] if len(stack) >= level else None


def listing(board: Board) -> str:
    """The layered listing (:data:`EMPTY_LISTING` for an empty board)::

    Grid levels (bottom to top):
    Level 1:
    \trow: 7, col: 3: {'shapes': ['washer'], 'colors': ['yellow']}
    """
    cells = board.cells()
    if not cells:
        return EMPTY_LISTING
    lines = [LISTING_HEAD]
    for level in range(1, max(board.height(*c) for c in cells) + 1):
        lines.append(f"Level {level}:")
        for cell in cells:
            piece = at_level(board, cell, level)
            if piece is not None:
                lines.append(f"\trow: {cell[0]}, col: {cell[1]}: {piece_text(piece)}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Difference:
    """One cell at one level where the boards differ: ``kind`` is missing (only the target has a piece),
    extra (only the current board) or wrong (both, not the same piece)."""

    cell: Cell
    level: int
    kind: str
    expected: Piece | None
    current: Piece | None


def differences(target: Board, current: Board) -> list[Difference]:
    """Every (cell, level) where ``current`` differs from ``target``, level by level, in row order."""
    out = []
    for level, cell, expected, now in _compared(target, current):
        if expected == now:
            continue
        kind = "missing" if now is None else "extra" if expected is None else "wrong"
        out.append(Difference(cell, level, kind, expected, now))
    return out


def _compared(target: Board, current: Board) -> list[tuple[int, Cell, Piece | None, Piece | None]]:
    cells = sorted(set(target.cells()) | set(current.cells()))
    top = max((max(target.height(*c), current.height(*c)) for c in cells), default=0)
    out = []
    for level in range(1, top + 1):
        for cell in cells:
            expected, now = at_level(target, cell, level), at_level(current, cell, level)
            if expected is not None or now is not None:
                out.append((level, cell, expected, now))
    return out


def difference_grid(target: Board, current: Board) -> str:
    """The difference grid, levels up to the higher of the two boards: ``Identical``, ``- Expected`` /
    ``- Current Status``, ``- Missing`` or ``- Extra`` per occupied cell and level."""
    lines = [DIFF_HEAD]
    level_now = 0
    for level, (x, y), expected, now in _compared(target, current):
        if level != level_now:
            lines.append(f"Level {level}:")
            level_now = level
        where = f"\trow: {x}, col: {y}:"
        if expected == now:
            lines.append(f"{where} Identical")
        elif expected is not None and now is not None:
            lines += [where, f"\t\t- Expected: {piece_text(expected)}", f"\t\t- Current Status: {piece_text(now)}"]
        elif expected is not None:
            lines += [where, f"\t\t- Missing: {piece_text(expected)}"]
        elif now is not None:
            lines += [where, f"\t\t- Extra: {piece_text(now)}"]
    return "\n".join(lines)
