"""Per-turn values of a blocks episode, read from its recorded events: the units of CRAFT's table 8.

Table 8 sets turn-level features against "full oracle adherence as outcome (n=5382)" with Spearman's rho
(Gap -0.543, Att_Remove -0.569). ``report RUN --correlate followed_oracle --unit turn`` does the same over
every builder turn of a run (``WorldFamily.turn_metrics``). Per builder turn (a turn with the builder's
``action``, its ``protocol_error`` or the engine's ``result``):

* ``followed_oracle``: 1 when the builder's executed move is one of the turn's oracle moves, 0 when it is not
  (a clarification, a rejected move, no move), None when the turn has no oracle moves; an imported CRAFT log's
  own ``builder_followed_oracle`` is taken as logged;
* ``attempted_remove``: 1 when the builder attempted a REMOVE, else 0 (every turn, as table 8's Att_Remove);
* ``oracle_remove_share``: the share of the oracle moves that are removes (None without oracle moves);
* ``remove_gap``: ``attempted_remove - oracle_remove_share``;
* ``failed``: 1 when the engine rejected the attempted move, 0 when it executed it, None for a turn with no
  move attempt (no move, or a CLARIFY), as table 1's Fail (:func:`~simlab.worlds.blocks.metrics.failed_move`);
* ``progress_gain``: overall progress after the turn minus before it;
* ``director_words``: the words of the directors' public messages of the turn.

The oracle moves of a turn are the result's ``oracle`` list (every verified-progress move, the set the
episode summary's taxonomy, communication failure and remove gap use), or, in an imported CRAFT log that
records only the candidates shown, its ``candidates``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.worlds.blocks.metrics import failed_move, is_communication_failure, is_remove, oracle_remove_share
from simlab.worlds.blocks.model import Move
from simlab.worlds.blocks.world import BUILDER, DIRECTORS

OUTCOME = "followed_oracle"
"""Table 8's outcome, "full oracle adherence"."""


def turn_values(episode: Episode) -> list[dict[str, float | None]]:
    """One mapping per builder turn of ``episode``, in turn order (see the module docstring)."""
    progress = episode.metric_series("overall_progress")
    by_turn: dict[int, list[Event]] = {}
    for event in episode.events:
        by_turn.setdefault(event.turn, []).append(event)
    return [
        _values(events, _gain(progress, turn))
        for turn, events in sorted(by_turn.items())
        if turn > 0 and any(_is_builder_turn(e) for e in events)
    ]


def _is_builder_turn(event: Event) -> bool:
    return event.kind == "result" or (event.role == BUILDER and event.kind in ("action", "protocol_error"))


def _values(events: Sequence[Event], progress_gain: float | None) -> dict[str, float | None]:
    move = next((_move(e.data.get("action")) for e in events if e.kind == "action" and e.role == BUILDER), None)
    result = next((e.data for e in events if e.kind == "result"), {})
    ok = bool(result.get("ok"))
    oracle = _oracle(result)
    attempted = 1.0 if move is not None and is_remove(move.action) else 0.0
    share = oracle_remove_share(oracle)
    return {
        OUTCOME: _followed(result, oracle, move, ok),
        "attempted_remove": attempted,
        "oracle_remove_share": share,
        "remove_gap": None if share is None else attempted - share,
        "failed": failed_move(move.action if move is not None else None, ok),
        "progress_gain": progress_gain,
        "director_words": float(sum(_words(e) for e in events if e.kind == "message" and e.role in DIRECTORS)),
    }


def _followed(result: Mapping[str, Any], oracle: Sequence[Move], move: Move | None, ok: bool) -> float | None:
    logged = result.get("followed_oracle")
    if isinstance(logged, bool):  # the reference's own verdict on an imported turn
        return float(logged)
    if not oracle:
        return None
    return 0.0 if is_communication_failure(oracle, move, ok) else 1.0


def _oracle(result: Mapping[str, Any]) -> list[Move]:
    raw = result["oracle"] if "oracle" in result else result.get("candidates")
    moves = [_move(m) for m in raw] if isinstance(raw, list) else []
    return [m for m in moves if m is not None]


def _move(raw: Any) -> Move | None:
    """A recorded move, or None when there is none or it cannot be read (an unreadable reply)."""
    if not isinstance(raw, Mapping):
        return None
    try:
        return Move.from_json(raw)
    except ValueError:
        return None


def _gain(progress: Sequence[float | None], turn: int) -> float | None:
    before, after = progress[turn - 1], progress[turn]
    return None if before is None or after is None else after - before


def _words(event: Event) -> int:
    return len(str(event.data.get("text", "")).split())
