"""How a fork's continuation differs from the original's: turn by turn, and in the outcome.

A fork replays the original up to its turn and then plays on with other agents
(:mod:`simlab.runner.fork`). :func:`fork_diff` lines the two episodes up turn by turn from the fork's turn on,
each turn as the transcript words it (:func:`~simlab.render.formatting.event_line`: messages, moves, engine
results, protocol errors; private reasoning left out), marks the turns that differ and the first of them,
and compares the summaries: outcome, score, turns, errors and every metric either one has.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from simlab.core.episode import Episode
from simlab.render.formatting import event_line

SUMMARY_FIELDS = ("outcome", "score", "turns", "errors")


@dataclass(frozen=True)
class TurnDiff:
    """One turn of both continuations: each one's lines (``who: words``) and whether they are the same."""

    turn: int
    original: tuple[str, ...]
    fork: tuple[str, ...]

    @property
    def same(self) -> bool:
        return self.original == self.fork


@dataclass(frozen=True)
class ForkDiff:
    """The two continuations from ``from_turn`` on, and their summaries side by side (``(name, original,
    fork)``; None where one has no value, as for an episode still running)."""

    from_turn: int
    turns: tuple[TurnDiff, ...]
    outcome: tuple[tuple[str, Any, Any], ...]

    @property
    def first_difference(self) -> int | None:
        """The first turn whose lines differ, or None when the continuations are the same so far."""
        return next((t.turn for t in self.turns if not t.same), None)

    @property
    def differing(self) -> int:
        """How many turns differ."""
        return sum(1 for t in self.turns if not t.same)


def turn_lines(episode: Episode, turn: int) -> tuple[str, ...]:
    """The public lines of ``turn`` as the transcript words them (reasoning is private: not compared)."""
    lines = (event_line(e) for e in episode.events_of_turn(turn))
    return tuple(f"{line.who}: {line.plain()}" for line in lines if line is not None and line.tone != "private")


def fork_diff(original: Episode, fork: Episode, from_turn: int) -> ForkDiff:
    """Both episodes' turns from ``from_turn`` to the later one's last turn, and their summaries compared."""
    last = max(original.last_turn, fork.last_turn)
    turns = tuple(
        TurnDiff(turn, turn_lines(original, turn), turn_lines(fork, turn)) for turn in range(from_turn, last + 1)
    )
    return ForkDiff(from_turn, turns, _summaries(original.summary, fork.summary))


def _summaries(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[tuple[str, Any, Any], ...]:
    rows = [(name, a.get(name), b.get(name)) for name in SUMMARY_FIELDS]
    metrics_a, metrics_b = a.get("metrics") or {}, b.get("metrics") or {}
    names = sorted({*metrics_a, *metrics_b})
    return (*rows, *((name, metrics_a.get(name), metrics_b.get(name)) for name in names))
