"""The cobot paper's measures of one board against its target: progress per turn and the failure types at
the end (location, extra, missing, colour, stacking order; section 5 and appendix A of the paper).

Pieces are compared as the text listing names them (a bridge is two halves), level by level.
"""

from __future__ import annotations

from collections import Counter

from simlab.worlds.boards.model import Board
from simlab.worlds.boards.text import differences

FAILURE_TYPES = ("location", "extra", "missing", "colour", "order")
"""Why a final board is wrong; several can hold at once."""


def distance(board: Board, target: Board) -> int:
    """How many (cell, level) places differ from the target."""
    return len(differences(target, board))


def progress(board: Board, target: Board) -> dict[str, float]:
    """Per-turn scores: ``correct_pieces`` (share of the target's pieces in place), ``extra_pieces`` (pieces
    the target lacks), ``differences`` and ``match`` (1.0 when every cell matches in order)."""
    diffs = differences(target, board)
    wanted = sum(1 for _ in target.pieces())
    wrong = sum(d.kind in ("missing", "wrong") for d in diffs)
    return {
        "correct_pieces": (wanted - wrong) / wanted if wanted else 1.0,
        "extra_pieces": float(sum(d.kind == "extra" for d in diffs)),
        "differences": float(len(diffs)),
        "match": float(board == target),
    }


PLACEMENT_MISTAKES = ("wrong-colour", "wrong-piece", "wrong-place")
"""What a piece the robot's code put down can be against the target at that cell and level (as blocks
flags a placed block of the wrong colour or place)."""


def placement_mistakes(before: Board, after: Board, target: Board) -> list[str]:
    """The mistakes of the pieces ``after`` holds where ``before`` held another or none, in board order: the
    target holds the same piece in another colour there (``wrong-colour``), another piece (``wrong-piece``),
    or nothing at that cell and level (``wrong-place``). A bridge's two halves are one mistake."""
    had = {(cell, level): piece for cell, level, piece in before.pieces()}
    wanted = {(cell, level): piece for cell, level, piece in target.pieces()}
    found: list[str] = []
    seen_bridges: set[tuple[str, str, int]] = set()
    for cell, level, piece in after.pieces():
        if had.get((cell, level)) == piece or wanted.get((cell, level)) == piece:
            continue
        if piece.shape != piece.name:  # a bridge half: its other half is the same mistake
            bridge = (piece.shape, piece.colour, level)
            if bridge in seen_bridges:
                continue
            seen_bridges.add(bridge)
        goal = wanted.get((cell, level))
        if goal is None:
            found.append("wrong-place")
        else:
            found.append("wrong-colour" if goal.shape == piece.shape else "wrong-piece")
    return found


def failure_types(board: Board, target: Board) -> dict[str, bool]:
    """Which of :data:`FAILURE_TYPES` a final board shows (all False when it matches):

    * colour: a place holds the right piece in the wrong colour;
    * order: a cell holds the right pieces in another stacking order;
    * location: a piece the target has is on the board, but at another cell;
    * missing / extra: fewer / more pieces of a kind (name and colour) than the target has.
    """
    places = {(cell, level): piece for cell, level, piece in board.pieces()}
    wanted = {(cell, level): piece for cell, level, piece in target.pieces()}
    colour = any(
        (p := places.get(key)) is not None and p.name == w.name and p.colour != w.colour for key, w in wanted.items()
    )
    order = any(
        board.stack(*cell) != target.stack(*cell) and Counter(board.stack(*cell)) == Counter(target.stack(*cell))
        for cell in target.cells()
    )
    have, need = Counter(places.values()), Counter(wanted.values())
    at = {piece: {cell for (cell, _level), p in places.items() if p == piece} for piece in have}
    home = {piece: {cell for (cell, _level), p in wanted.items() if p == piece} for piece in need}
    location = any(at.get(piece, set()) - home[piece] for piece in need)
    return {
        "location": location,
        "extra": any(have[p] > need.get(p, 0) for p in have),
        "missing": any(need[p] > have.get(p, 0) for p in need),
        "colour": colour,
        "order": order,
    }
