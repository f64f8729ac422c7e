"""Oracle moves: every move that makes verified progress from a board towards a target (CRAFT appendix B.1).

Per cell the oracle compares the current stack with the target stack through the cell's *grounded prefix*:
the longest run of bottom layers whose pieces equal the target's pieces (same code, same cells, same layer)
and, for a large piece, whose other cell is grounded up to that layer too. Then:

* placement: the stack is exactly its grounded prefix and shorter than the target, so the next target block
  goes on top. A large one also needs its partner cell to be a grounded prefix of the same height; until it
  is, the placement is not offered (the partner's own moves come first).
* removal: the stack is longer than its grounded prefix (excess blocks, a wrong block on top, or a wrong
  block buried lower down), so its top block comes off. A large top block comes off only when it is the
  top of both its cells.

Nothing is ever stacked on a block that must later come off, and every candidate is checked with
:meth:`Board.check`.

Why "grounded" rather than the plain per-cell comparison of the reference: with plain comparison the oracle
can deadlock. Example: target (0,0) = [gs, bl->(0,1)], (0,1) = [rs, bl->(0,0), ys]; board (0,0) = [os (wrong),
bl->(0,1)], (0,1) = [rs, bl->(0,0), ys]. Per cell, (0,1) matches its target exactly and (0,0) needs its wrong
``os`` exposed, but the large ``bl`` on top of it is covered at (0,1) by ``ys``, so the reference's rules offer
no move although the board is incomplete. Under the grounded prefix, ``bl`` is not grounded (it rests on a
wrong block), so neither is ``ys``, and the oracle offers to remove ``ys``.

Progress potential (:func:`distance`): sum over cells of ``(len(current) - g) + (len(target) - g)`` with ``g``
the grounded prefix. It is 0 exactly when the board equals the target, and every oracle move lowers it by
exactly one per cell the moved block covers. Moreover, **an incomplete board always has an oracle move**:
a cell longer than its grounded prefix has a removable top somewhere along the chain of large blocks above it
(each step of the chain climbs a layer, so it ends at a free top); when every stack is grounded, the lowest
unfinished cell can always take its next block (a large one's partner must then be a grounded stack of the
same height). So there is no board on which the oracle has no move while the structure is incomplete;
following the oracle from any board finishes in at most ``distance`` moves.
"""

from __future__ import annotations

from typing import Any

from simlab.core.seeding import rng
from simlab.worlds.blocks.model import CELLS, Action, Board, Cell, Move, Piece


def grounded_prefix(board: Board, target: Board) -> dict[Cell, int]:
    """Per cell, how many bottom layers are correct and rest (through any large block) on correct layers only."""
    prefix = {c: _plain_prefix(board, target, c) for c in CELLS}
    changed = True
    while changed:  # shrinking only, so this ends; a large block is grounded only if grounded in both cells
        changed = False
        for cell in CELLS:
            for layer in range(prefix[cell]):
                piece = board.at(cell, layer)
                assert piece is not None
                if any(prefix[other] <= layer for other in piece.cells):
                    prefix[cell] = layer
                    changed = True
                    break
    return prefix


def _plain_prefix(board: Board, target: Board, cell: Cell) -> int:
    n = 0
    while board.at(cell, n) is not None and board.at(cell, n) == target.at(cell, n):
        n += 1
    return n


def distance(board: Board, target: Board) -> int:
    """Progress potential: blocks to take off plus blocks to put on, counted per cell; 0 iff complete."""
    prefix = grounded_prefix(board, target)
    return sum(board.height(c) + target.height(c) - 2 * prefix[c] for c in CELLS)


def is_complete(board: Board, target: Board) -> bool:
    """True when the board holds exactly the target's pieces."""
    return board == target


def oracle_moves(board: Board, target: Board) -> list[Move]:
    """Every legal move that makes verified progress, deduplicated, sorted by cell, layer and action."""
    prefix = grounded_prefix(board, target)
    moves: set[Move] = set()
    for cell in CELLS:
        move = _candidate(board, target, prefix, cell)
        if move is not None and _verified(board, target, move):
            moves.add(move)
    return sorted(moves, key=_order_key)


def _candidate(board: Board, target: Board, prefix: dict[Cell, int], cell: Cell) -> Move | None:
    """The one progress move a cell asks for, or None (complete, or a large placement not yet available)."""
    height = board.height(cell)
    if height > prefix[cell]:
        top = board.top(cell)
        assert top is not None
        return _canonical(Action.REMOVE, top)
    wanted = target.at(cell, height)
    if wanted is None:
        return None
    if any(board.height(c) != height or prefix[c] != height for c in wanted.cells):
        return None  # the partner cell is not ready for the large block yet
    return _canonical(Action.PLACE, wanted)


def _canonical(action: Action, piece: Piece) -> Move:
    """One spelling per move: the first of the sorted cells, span_to the second for a large block."""
    span = piece.cells[1] if piece.large else None
    if action is Action.PLACE:
        return Move.place(piece.code, piece.cells[0], piece.layer, span)
    return Move.remove(piece.cells[0], piece.layer, span)


def _verified(board: Board, target: Board, move: Move) -> bool:
    """Simulate on the engine; a placement must also put down exactly the target's piece."""
    result = board.check(move)
    if not result.ok or result.piece is None:
        return False
    if move.action is Action.PLACE:
        return target.at(result.piece.cells[0], result.piece.layer) == result.piece
    return True


def _order_key(move: Move) -> tuple[Any, ...]:
    return (move.cell, move.layer, move.action.value)


def sample_candidates(board: Board, target: Board, n: int, *seed_parts: Any) -> list[Move]:
    """Up to ``n`` oracle moves drawn with ``rng(*seed_parts)`` (e.g. structure id and turn), in oracle order."""
    return sample_moves(oracle_moves(board, target), n, *seed_parts)


def sample_moves(moves: list[Move], n: int, *seed_parts: Any) -> list[Move]:
    """Up to ``n`` of already enumerated oracle ``moves``, drawn with ``rng(*seed_parts)``, in their order."""
    if len(moves) <= n:
        return moves
    picked = rng(*seed_parts).sample(range(len(moves)), max(n, 0))
    return [moves[i] for i in sorted(picked)]
