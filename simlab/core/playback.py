"""What a timeline shows about each turn of an episode: who spoke, what was done, what failed, what scored.

Headless so that reports, exports and the GUI's scrubber read the same facts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from simlab.core.episode import Episode

ScoreChange = Literal["gain", "drop", "change"]
"""A turn's score moved: the family's leading metric rose or fell, or other metrics changed (``change``)."""


@dataclass(frozen=True)
class TurnMarks:
    """Facts about one turn for a scrubber's ticks."""

    turn: int
    speech: bool  # someone sent a public message
    action: bool  # an action was taken
    error: bool  # the engine rejected an action, a reply broke the protocol, or a move worked against the task
    score_change: ScoreChange | None  # how the score moved this turn, if it did


def turn_marks(episode: Episode, headline: Sequence[str] = ()) -> list[TurnMarks]:
    """One entry per turn 0..last_turn. ``headline`` are the family's headline metrics: the first of them the
    score events carry tells a gain from a drop (families lead with a metric where more is better: progress,
    accuracy, correct pieces); without one a moved score is only a ``change``."""
    speech, action, error = set(), set(), set()
    for e in episode.events:
        if e.kind == "message":
            speech.add(e.turn)
        elif e.kind == "action":
            action.add(e.turn)
        elif e.kind == "protocol_error" or (e.kind == "result" and is_failure(e.data)):
            error.add(e.turn)
    changed = _score_changes(episode, headline)
    return [TurnMarks(t, t in speech, t in action, t in error, changed.get(t)) for t in range(episode.last_turn + 1)]


def _score_changes(episode: Episode, headline: Sequence[str]) -> dict[int, ScoreChange]:
    out: dict[int, ScoreChange] = {}
    previous: Mapping[str, Any] | None = None
    for e in episode.events:
        if e.kind != "score":
            continue
        metrics = e.data.get("metrics")
        metrics = metrics if isinstance(metrics, Mapping) else {}
        if previous is not None and metrics != previous:
            out[e.turn] = _direction(previous, metrics, headline)
        previous = metrics
    return out


def _direction(before: Mapping[str, Any], after: Mapping[str, Any], headline: Sequence[str]) -> ScoreChange:
    """``gain`` or ``drop`` by the first headline metric both hold as numbers, ``change`` when it did not move
    (or none is there)."""
    for name in headline:
        old, new = before.get(name), after.get(name)
        if isinstance(old, int | float) and isinstance(new, int | float):
            return "gain" if new > old else "drop" if new < old else "change"
    return "change"


def is_failure(result: Mapping[str, Any]) -> bool:
    """Whether a result event's data is a failure: the engine refused the move (``ok`` false), or accepted a
    move that works against the task (``mistake``: a wrong answer, a block in the wrong place)."""
    return not result.get("ok", True) or bool(result.get("mistake"))


def error_turns(episode: Episode) -> list[int]:
    """Turns holding an engine error, a mistake or a protocol error, in order."""
    return [m.turn for m in turn_marks(episode) if m.error]


def next_error_turn(episode: Episode, after: int) -> int | None:
    """The first error turn strictly after ``after``, or None."""
    return next((t for t in error_turns(episode) if t > after), None)


def previous_error_turn(episode: Episode, before: int) -> int | None:
    """The last error turn strictly before ``before``, or None."""
    return next((t for t in reversed(error_turns(episode)) if t < before), None)
