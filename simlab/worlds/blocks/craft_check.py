"""Replay an imported CRAFT game through SimLab's engine, move by move, and list where the two disagree.

The log is the truth about what happened in the game; our engine is asked, at every logged turn, whether it
would have judged the move the same way. Each disagreement names the turn, a stable code and the reason:

``legal_there_refused_here``
    the reference engine made the move; ours refuses it (the reason is our engine's message)
``refused_there_legal_here``
    the reference engine refused the move; ours would have made it
``board_after_differs``
    both made the move (or there was none) but the logged board after is not ours
``board_before_differs``
    the logged board before a turn is not the board after the turn before it (when turns between are
    missing from the log, a changed board is only noted: those turns changed it)
``not_a_board``
    a logged board breaks our rules (a large block without an adjacent half, a stack over three)

A failed large-block move whose second cell the log does not give cannot be judged (the reference may have
refused it for that very span): it is noted, not counted. After a disagreement the replay goes on from the
logged board, so one difference is counted once and not at every later turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from simlab.worlds.blocks.craft_import import Codes, CraftGame, CraftTurn, board_from_codes
from simlab.worlds.blocks.model import CELLS, Action, Board, Move, in_grid, is_large

CODES = (
    "legal_there_refused_here",
    "refused_there_legal_here",
    "board_after_differs",
    "board_before_differs",
    "not_a_board",
)


@dataclass(frozen=True)
class Disagreement:
    """One turn where SimLab's engine and the logged game differ."""

    turn: int
    code: str
    message: str


def codes_of(board: Board) -> Codes:
    """A board's per-cell code lists, as the logs give them."""
    return {c: board.codes(c) for c in CELLS}


def check_game(game: CraftGame, notes: list[str] | None = None) -> list[Disagreement]:
    """Every disagreement of ``game``, in turn order; what cannot be judged goes to ``notes``. Fills each
    turn's ``board_before``/``board_after`` with the boards of the replay (legal boards with their large blocks
    paired) for the recording."""
    out: list[Disagreement] = []
    sink = notes if notes is not None else []
    board: Board | None = None
    previous: int | None = None
    for turn in game.turns:
        board = _board_before(turn, board, previous, out, sink)
        previous = turn.number
        if board is None:
            continue
        turn.board_before = board.copy()
        judged = len(out)
        ours = _judge(turn, board, out, sink)
        board = _board_after(turn, ours, out, counted=len(out) > judged)
        turn.board_after = board.copy() if board is not None else None
    return out


def _board_before(
    turn: CraftTurn, board: Board | None, previous: int | None, out: list[Disagreement], notes: list[str]
) -> Board | None:
    """Our board at the start of ``turn``: the replay's, or the logged one when they differ. A difference
    after the turn logged just before is a disagreement; after turns missing from the log, only a note (the
    missing turns changed the board, which is no judgement of either engine)."""
    if board is not None and codes_of(board) == turn.codes_before:
        return board
    if board is not None and previous == turn.number - 1:
        message = f"the logged board before turn {turn.number} is not the board after turn {previous}"
        out.append(Disagreement(turn.number, "board_before_differs", message))
    elif board is not None:
        notes.append(f"turn {turn.number}: the board changed in turns missing from the log; replay goes on from it")
    logged = turn.board_before or board_from_codes(turn.codes_before)
    if logged is None:
        out.append(Disagreement(turn.number, "not_a_board", "the logged board before the turn breaks our rules"))
    return logged


def _judge(turn: CraftTurn, board: Board, out: list[Disagreement], notes: list[str]) -> Board:
    """Our engine's board after the logged move, recording where it judges the move otherwise."""
    move, after = turn.move, board.copy()
    if move is None or move.action is Action.CLARIFY:
        return after
    if _unjudgeable(move, turn, board):
        notes.append(f"turn {turn.number}: a refused large-block move without its second cell is not checked")
        return after
    result = board.check(move)
    if turn.executed and not result.ok:
        out.append(
            Disagreement(
                turn.number,
                "legal_there_refused_here",
                f"the log made {move.describe()}; our engine refuses it: {result.message}",
            )
        )
    elif not turn.executed and result.ok:
        out.append(
            Disagreement(
                turn.number,
                "refused_there_legal_here",
                f"the log's engine refused {move.describe()}; ours accepts it: {result.message}",
            )
        )
    elif turn.executed:
        after.apply(move)
    return after


def _unjudgeable(move: Move, turn: CraftTurn, board: Board) -> bool:
    """A refused large-block move whose second cell the log does not give: the reference demands that cell
    (for removes too) and may have refused the move for it, where our engine would pick or not need one."""
    if turn.executed or move.span_to is not None:
        return False
    if move.action is Action.PLACE:
        return move.block is not None and is_large(move.block)
    top = board.top(move.cell) if move.cell is not None and in_grid(move.cell) else None
    return top is not None and top.large


def _board_after(turn: CraftTurn, ours: Board, out: list[Disagreement], counted: bool) -> Board | None:
    """The board the replay goes on from: ours when it matches the log, else the logged one (noted)."""
    if turn.codes_after is None or codes_of(ours) == turn.codes_after:
        return ours
    if not counted:  # a move already judged otherwise is one difference, counted once
        out.append(
            Disagreement(
                turn.number,
                "board_after_differs",
                f"the logged board after differs from ours at {_changed_cells(codes_of(ours), turn.codes_after)}",
            )
        )
    logged = board_from_codes(turn.codes_after)
    if logged is None:
        out.append(Disagreement(turn.number, "not_a_board", "the logged board after the turn breaks our rules"))
    return logged


def _changed_cells(ours: Codes, logged: Codes) -> str:
    cells = [c for c in CELLS if ours.get(c, []) != logged.get(c, [])]
    return ", ".join(f"({r},{c}): ours {ours.get((r, c), [])} logged {logged.get((r, c), [])}" for r, c in cells)
