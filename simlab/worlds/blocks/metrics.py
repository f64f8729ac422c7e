"""Task metrics and the turn-level failure taxonomy of the CRAFT paper.

Progress metrics (paper appendix B.5) are matched to the reference ``TaskProgressTracker.calculate_progress``
of csu-signal/CRAFT, which the logged ``progress_data.metrics`` come from:

* ``iou``: per cell, the block codes are turned into *sets* (a stack ``[gs, gs]`` counts once);
  ``sum |A ∩ B| / sum |A ∪ B|`` over the nine cells, and **0.0 when both boards are empty** (the paper's
  formula is 0/0 there).
* ``completion``: layer-exact matches ``current[k] == target[k]`` over every target entry (lists, so a
  repeated code counts each time and a large block counts once per cell); **0.0 for an empty target**.
* ``position_accuracy``: cells whose code *sets* are equal, over 9; an empty cell matches an empty target.
* ``overall_progress``: the unweighted mean of the three.
* ``distance``: the reference's extra ``distance_score`` (1 - symmetric set difference over the summed set
  sizes, 1.0 when both are empty); logged but not used by the paper.

The failure taxonomy (appendix C) is computed from :class:`MoveError` codes rather than message substrings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate
from typing import Literal

from simlab.core.episode import Episode
from simlab.worlds.blocks.model import CELLS, Action, Board, Cell, Move, MoveError

METRIC_KEYS: tuple[str, ...] = ("iou", "completion", "position_accuracy", "overall_progress", "distance")

TAXONOMY: tuple[str, ...] = (
    "no-oracle",
    "clarify",
    "engine-layer",
    "engine-span",
    "engine-other",
    "wrong-position",
    "wrong-colour",
    "wrong-span",
    "correct",
)


# ---- progress metrics ----------------------------------------------------------------------------------


def progress(board: Board, target: Board) -> dict[str, float]:
    """Progress of ``board`` toward ``target``; see the module docstring for the exact definitions."""
    return progress_from_codes({c: board.codes(c) for c in CELLS}, {c: target.codes(c) for c in CELLS})


def progress_from_codes(
    current: Mapping[Cell, Sequence[str]], target: Mapping[Cell, Sequence[str]]
) -> dict[str, float]:
    """Progress metrics on per-cell code lists (bottom to top, large blocks listed in both cells).

    Works on boards the engine would reject (a logged board need not be legal). Cells missing from either
    mapping are empty; keys outside the 3x3 grid are ignored, as the reference does.
    """
    cur = {c: list(current.get(c, ())) for c in CELLS}
    tgt = {c: list(target.get(c, ())) for c in CELLS}
    iou = _ratio(sum(len(set(cur[c]) & set(tgt[c])) for c in CELLS), sum(len(set(cur[c]) | set(tgt[c])) for c in CELLS))
    correct = sum(_layer_matches(cur[c], tgt[c]) for c in CELLS)
    completion = _ratio(correct, sum(len(tgt[c]) for c in CELLS))
    position_accuracy = sum(set(cur[c]) == set(tgt[c]) for c in CELLS) / len(CELLS)
    return {
        "iou": iou,
        "completion": completion,
        "position_accuracy": position_accuracy,
        "overall_progress": (iou + completion + position_accuracy) / 3,
        "distance": _distance(cur, tgt),
    }


def _ratio(num: int, den: int) -> float:
    # The reference returns 0.0 rather than failing (or 1.0) when there is nothing to compare.
    return num / den if den > 0 else 0.0


def _layer_matches(current: list[str], target: list[str]) -> int:
    return sum(1 for k, code in enumerate(target) if k < len(current) and current[k] == code)


def _distance(cur: dict[Cell, list[str]], tgt: dict[Cell, list[str]]) -> float:
    diff = sum(len(set(cur[c]) ^ set(tgt[c])) for c in CELLS)
    total = sum(len(set(cur[c])) + len(set(tgt[c])) for c in CELLS)
    return 1.0 - diff / total if total > 0 else 1.0


# ---- engine error texts --------------------------------------------------------------------------------

# Messages of the reference engine (agents/environment.py ``_validate_move``) mapped to our codes. Checked in
# order, so the specific patterns win over the generic "layer"/"span" fallback below.
_ERROR_PATTERNS: tuple[tuple[str, MoveError], ...] = (
    (r"missing fields|unknown action", MoveError.NOT_A_MOVE),
    (
        r"coordinate|position format|position normalization|span_to format|span_to normalization",
        MoveError.BAD_COORDINATES,
    ),
    (r"not in available blocks|unknown block", MoveError.UNKNOWN_BLOCK),
    (r"stack full|already full|is full", MoveError.STACK_FULL),
    (r"wrong layer|next block goes on layer", MoveError.WRONG_LAYER),
    (r"span_to cannot be same|not adjacent|not next to", MoveError.SPAN_NOT_ADJACENT),
    (r"needs span_to|must also specify span_to|name the second cell", MoveError.SPAN_MISSING),
    (r"same height", MoveError.SPAN_HEIGHT_MISMATCH),
    (r"stack is empty|is empty", MoveError.EMPTY_STACK),
    (r"must remove top block|only the top block|remove the block above", MoveError.NOT_TOP),
    (r"span partner|incorrect span_to|not a block spanning", MoveError.SPAN_MISMATCH),
    (r"small block and covers one cell", MoveError.SPAN_ON_SMALL),
)


def move_error_from_text(text: str | None) -> MoveError | None:
    """Our error code for an engine message (reference wording or ours), or None when nothing fits.

    After the specific patterns, the paper's own rule is the fallback: a message mentioning "layer" is a
    WRONG_LAYER, one mentioning "span" a SPAN_MISMATCH (both only stand for their taxonomy family).
    """
    if not text:
        return None
    low = text.lower()
    for pattern, code in _ERROR_PATTERNS:
        if re.search(pattern, low):
            return code
    if "layer" in low:
        return MoveError.WRONG_LAYER
    if "span" in low:
        return MoveError.SPAN_MISMATCH
    return None


# ---- failure taxonomy ----------------------------------------------------------------------------------


def classify_turn(move: Move | None, result_ok: bool, error: MoveError | str | None, oracle: Sequence[Move]) -> str:
    """The appendix-C category of one builder turn.

    Order: ``no-oracle`` when there were no candidates (the paper only classifies oracle-labelled turns);
    ``clarify`` for a clarification; then an engine rejection by error family (``engine-layer`` /
    ``engine-span`` / ``engine-other``; a missing move counts as ``engine-other``, like the reference's
    "Missing fields" rejection); then the comparison with the candidates: no candidate with the same action,
    cell and layer -> ``wrong-position``; none of those with the same block code -> ``wrong-colour`` (a
    size mismatch lands here too, the taxonomy having no size class); none of those with the same span ->
    ``wrong-span``; else ``correct``.
    """
    if not oracle:
        return "no-oracle"
    if move is not None and move.action is Action.CLARIFY:
        return "clarify"
    if move is None or not result_ok:
        return "engine-" + _family(error)
    same_place = [m for m in oracle if _same_position(m, move)]
    if not same_place:
        return "wrong-position"
    same_block = [m for m in same_place if m.block == move.block]
    if not same_block:
        return "wrong-colour"
    if not any(_same_span(m, move) for m in same_block):
        return "wrong-span"
    return "correct"


def _family(error: MoveError | str | None) -> str:
    code = error if isinstance(error, MoveError) else move_error_from_text(error)
    return code.family if code is not None else "other"


def _same_position(a: Move, b: Move) -> bool:
    return a.action is b.action and a.cell == b.cell and a.layer == b.layer


def _same_span(a: Move, b: Move) -> bool:
    return a.span_to == b.span_to


def matches_oracle(move: Move | None, oracle: Iterable[Move]) -> bool:
    """True when ``move`` is one of the candidates exactly (action, cell, layer, block and span)."""
    return move is not None and any(
        _same_position(m, move) and m.block == move.block and _same_span(m, move) for m in oracle
    )


def is_communication_failure(oracle: Sequence[Move], move: Move | None, ok: bool) -> bool:
    """Paper definition 4.1: candidates were available but the builder did not select one.

    A clarification (or no move at all) on a turn with candidates *is* a failure: the builder had a correct
    move in view and did not take it. A move that matches a candidate but was rejected is one too (it was
    not the verified candidate as executed). Turns without candidates are never failures.
    """
    return bool(oracle) and not (ok and matches_oracle(move, oracle))


# ---- removes and failed moves (tables 1 and 8) --------------------------------------------------------------

RemoveTurn = tuple[Action | str | None, Sequence[Move]]
"""One turn for :func:`remove_gap`: the attempted action (None or CLARIFY when no move) and the candidates."""
OracleRate = Literal["share", "any"]


def remove_rate(actions: Sequence[Action | str | None]) -> float:
    """Attempted remove rate (table 1's REMOVE, table 8's Att_Remove): the fraction of all turns whose
    attempted action was REMOVE; clarifications and missing moves count as non-removes. 0.0 for no turns."""
    return sum(is_remove(action) for action in actions) / len(actions) if actions else 0.0


def oracle_remove_rate(oracles: Sequence[Sequence[Move]], mode: OracleRate = "share") -> float:
    """Oracle remove rate (table 8's Orc_Remove) over the turns with candidates (0.0 when there are none).

    ``"share"`` (default): per such turn the fraction of candidates that are removes
    (:func:`oracle_remove_share`), averaged -- the reading of "oracle-prescribed moves are 95.4% placements".
    ``"any"``: the fraction of such turns where at least one candidate is a remove -- the reading of "the
    fraction of turns requiring any removal". The reference script behind the paper's figure is not public,
    so both are offered.
    """
    labelled = [o for o in oracles if o]
    if not labelled:
        return 0.0
    if mode == "any":
        return sum(any(m.action is Action.REMOVE for m in o) for o in labelled) / len(labelled)
    if mode != "share":
        raise ValueError(f"oracle_rate must be 'share' or 'any', got {mode!r}")
    shares = [oracle_remove_share(o) for o in labelled]
    return sum(share for share in shares if share is not None) / len(labelled)


def oracle_remove_share(oracle: Sequence[Move]) -> float | None:
    """The fraction of one turn's candidates that are removes; None when the turn has none."""
    return sum(m.action is Action.REMOVE for m in oracle) / len(oracle) if oracle else None


def remove_gap(turns: Sequence[RemoveTurn], oracle_rate: OracleRate = "share") -> float:
    """Attempted remove rate minus oracle remove rate (paper section 5.2 and table 8; positive = over-removal):
    :func:`remove_rate` of the actions minus :func:`oracle_remove_rate` of the candidates. 0.0 for no turns."""
    actions = [action for action, _ in turns]
    return remove_rate(actions) - oracle_remove_rate([oracle for _, oracle in turns], oracle_rate)


def is_remove(action: Action | str | None) -> bool:
    """True for a REMOVE action, given as an :class:`Action` or its recorded text."""
    return _action_name(action) == Action.REMOVE.value


def failed_move(action: Action | str | None, ok: bool) -> float | None:
    """Table 1's Fail for one turn: 1.0 when the engine rejected the attempted move, 0.0 when it executed it,
    None when the turn holds no move attempt (no move, or a CLARIFY).

    The paper excludes "turns with no recorded move attempt" from FAIL (appendix F, "Failed Moves"), and
    contrasts asking for clarification with attempting moves ("builders consistently attempt moves rather
    than request additional information"), so a clarification is not an attempt either.
    """
    if _action_name(action) in (None, Action.CLARIFY.value):
        return None
    return 0.0 if ok else 1.0


def _action_name(action: Action | str | None) -> str | None:
    # Live logs hold the Action's value, imported ones may hold its text in another case.
    return None if action is None else str(getattr(action, "value", action)).lower()


# ---- per-turn series for the plots (from a recording) ---------------------------------------------------


def attempted_removes(episode: Episode) -> list[float | None]:
    """Cumulative count of the builder's ``remove`` actions, per turn 0..last_turn."""
    per_turn = [0] * (episode.last_turn + 1)
    for event in episode.events:
        action = event.data.get("action") if event.kind == "action" else None
        if isinstance(action, Mapping) and action.get("action") == "remove":
            per_turn[event.turn] += 1
    return [float(v) for v in accumulate(per_turn)]


def oracle_removes(episode: Episode) -> list[float | None]:
    """Cumulative count of turns whose oracle set (the result's ``oracle`` list, or for an imported run log
    the ``candidates`` it logged) holds a remove: turns where removing was verified progress. All None when
    no result records an oracle set (CRAFT's per-turn records): unknown, not zero."""
    per_turn = [0] * (episode.last_turn + 1)
    known = False
    for event in (e for e in episode.events if e.kind == "result"):
        raw = event.data["oracle"] if "oracle" in event.data else event.data.get("candidates")
        known = known or isinstance(raw, list)
        moves = raw if isinstance(raw, list) else []
        if any(isinstance(m, Mapping) and m.get("action") == "remove" for m in moves):
            per_turn[event.turn] = 1
    if not known:
        return [None] * len(per_turn)
    return [float(v) for v in accumulate(per_turn)]
