"""The tool-using builder's ``simulate`` call: a move tried on a copy of the board, answered in words.

The CRAFT reference (``agents/builder_tools.py: simulate_move``, called from
``agents/builder_agent.py: BuilderAgent.generate_move_with_tools``) lets its builder dry-run up to
``max_simulations`` = 3 moves per turn on a deep copy of the game state before it commits one. Its answer is
``ok`` and, for a legal move, ``blocks_correct`` / ``blocks_total``, ``overall_progress`` and ``correctness``
(``structurePlacement``: the block is the target's at that cell and layer, or a removed block is not;
``sidePlacement``: the same judged on a director's wall); for an illegal one, the engine's error and a hint.

Here a simulation is an action of its own, ``{"action": "simulate", "move": "place" | "remove", ...}`` with
the move's other fields beside it (flat, so a person's reply form can build it too). The world answers it with
:func:`answer`: the engine's verdict on the move, the stacks it would leave, and with ``feedback="reference"``
also the reference's target check. The answer is recorded as a ``result`` event marked ``simulation`` whose
``ok`` says the call was answered (a simulated illegal move is information, not an engine error), with the
simulated verdict under ``would``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from simlab.core.events import Event
from simlab.worlds.blocks import metrics
from simlab.worlds.blocks.model import CELLS, Action, Board, Cell, Move, MoveError, MoveResult, Piece, cell_key

SIMULATE = "simulate"
Feedback = Literal["reference", "engine"]


def simulate_action(move: Move) -> dict[str, Any]:
    """The action that simulates ``move`` (a place or a remove)."""
    return {**move.to_json(), "action": SIMULATE, "move": move.action.value}


def is_simulation(action: Mapping[str, Any] | None) -> bool:
    """Whether an action (a reply's or a recorded one) is a simulate call."""
    return isinstance(action, Mapping) and action.get("action") == SIMULATE


def is_simulation_event(event: Event) -> bool:
    """Whether a recorded event is a simulate call or its answer: readers of a turn's move skip these."""
    if event.kind == "action":
        return is_simulation(event.data.get("action"))
    return event.kind == "result" and bool(event.data.get("simulation"))


def read_simulated(action: Mapping[str, Any]) -> tuple[Move | None, str | None]:
    """The place or remove a simulate action names, or None and why it is not one."""
    kind = str(action.get("move", "")).lower()
    if kind not in (Action.PLACE.value, Action.REMOVE.value):
        return None, f"field 'move': a simulation tries a place or a remove, got {action.get('move')!r}"
    try:
        return Move.from_json({**action, "action": kind}), None
    except ValueError as exc:
        return None, str(exc)


def answer(
    board: Board, target: Board, move: Move | None, problem: str | None, feedback: Feedback, seen: set[tuple[Cell, int]]
) -> dict[str, Any]:
    """The answer to one simulate call (the data of its ``result`` event; ``message`` is what the builder reads).

    ``problem`` says why the call named no move; ``seen`` are the target cell-layers some director sees (the
    reference's ``sidePlacement``). ``board`` is left as it is."""
    if move is None:
        verdict = MoveResult(False, f"not a move: {problem}", MoveError.NOT_A_MOVE)
        return _answer(verdict, "SIMULATED (an unreadable move)", {})
    after = board.copy()
    verdict = after.apply(move)
    head = f"SIMULATED {move.describe()}"
    out = _answer(verdict, head, {"move": move.to_json()})
    if not verdict.ok or verdict.piece is None:
        return out
    out["board"] = after.to_json()
    out["message"] += " " + _stacks_text(after, verdict.piece.cells)
    if feedback == "reference":
        check = target_check(board, after, target, move, verdict.piece, seen)
        out["feedback"] = check
        out["message"] += " " + _feedback_text(check)
    return out


def _answer(verdict: MoveResult, head: str, extra: dict[str, Any]) -> dict[str, Any]:
    if verdict.ok:
        said = f"{head} (the board is unchanged): it would be legal: {verdict.message}."
    else:
        code = verdict.error.value if verdict.error is not None else "not_a_move"
        said = (
            f"{head} (the board is unchanged): it would FAIL ({code}): {verdict.message}. Fix only the field at "
            "fault; do not play a move that failed in simulation."
        )
    return {"ok": True, "simulation": True, **extra, "would": verdict.to_json(), "message": said}


def target_check(
    before: Board, after: Board, target: Board, move: Move, piece: Piece, seen: set[tuple[Cell, int]]
) -> dict[str, Any]:
    """The reference's feedback on a legal simulated move: right target cell-layers after it, overall progress,
    whether the move is right for the target there (``structure_placement``) and whether a director's wall
    shows that (``side_placement``)."""
    wanted = target.at(piece.cells[0], piece.layer)
    right = wanted == piece if move.action is Action.PLACE else wanted != piece
    shown = any((c, piece.layer) in seen for c in piece.cells)
    return {
        "blocks_correct": _right_entries(after, target),
        "blocks_total": sum(target.height(c) for c in CELLS),
        "overall_progress": metrics.progress(after, target)["overall_progress"],
        "structure_placement": right,
        "side_placement": right and shown,
    }


def _right_entries(board: Board, target: Board) -> int:
    """Target cell-layers holding their target block (a large block counts in both cells, as CRAFT counts)."""
    return sum(1 for c in CELLS for k in range(target.height(c)) if board.at(c, k) == target.at(c, k))


def _stacks_text(board: Board, cells: Iterable[Cell]) -> str:
    held = "; ".join(f"({cell_key(c)}) would hold: {', '.join(board.codes(c)) or 'nothing'}" for c in cells)
    return held + "."


def _feedback_text(check: Mapping[str, Any]) -> str:
    def yes(flag: Any) -> str:
        return "yes" if flag else "no"

    return (
        f"Target check: right for the target there: {yes(check['structure_placement'])}; right on a director's "
        f"wall: {yes(check['side_placement'])}; {check['blocks_correct']} of {check['blocks_total']} "
        f"target cell-layers right; overall progress {check['overall_progress']:.3f}."
    )
