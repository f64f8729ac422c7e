"""Two episodes lined up turn by turn: a fork against its original, or the same task played by another run.

:func:`episode_diff` words each turn of both episodes as the transcript does
(:func:`~simlab.render.formatting.event_line`: messages, moves, engine results, protocol errors; private
reasoning left out), marks the turns that differ and the first of them, and compares the summaries: outcome,
score, turns, errors and every metric either one has. Which episode of another run played the same task is
:mod:`simlab.analysis.pairing`'s business, so a comparison across runs pairs like with like.
:func:`value_text` is how the app shows a summary's value wherever it shows one (the browser, the Compare
dock, a fork's diff), so one metric reads the same in each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from simlab.analysis.report import num_cell
from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.render.formatting import event_line

SUMMARY_FIELDS = ("outcome", "score", "turns", "errors")


@dataclass(frozen=True)
class TurnDiff:
    """One turn of both episodes: each one's lines (``who: words``) and whether they are the same."""

    turn: int
    a: tuple[str, ...]
    b: tuple[str, ...]

    @property
    def same(self) -> bool:
        return self.a == self.b


@dataclass(frozen=True)
class EpisodeDiff:
    """Both episodes' turns from ``from_turn`` on, and their summaries side by side (``outcome``: ``(name, a,
    b)`` rows; None where one has no value, as for an episode still running)."""

    from_turn: int
    turns: tuple[TurnDiff, ...]
    outcome: tuple[tuple[str, Any, Any], ...]

    @property
    def first_difference(self) -> int | None:
        """The first turn whose lines differ, or None when the episodes are the same so far."""
        return next((t.turn for t in self.turns if not t.same), None)

    @property
    def differing(self) -> int:
        """How many turns differ."""
        return sum(1 for t in self.turns if not t.same)


def turn_lines(episode: Episode, turn: int) -> tuple[str, ...]:
    """The public lines of ``turn`` as the transcript words them (reasoning is private: not compared)."""
    return _lines(episode.events_of_turn(turn))


def episode_diff(a: Episode, b: Episode, from_turn: int = 1) -> EpisodeDiff:
    """Both episodes' turns from ``from_turn`` to the later one's last turn (a turn one of them did not play
    has no lines there), and their summaries compared."""
    lines_a, lines_b = _lines_by_turn(a), _lines_by_turn(b)
    turns = tuple(
        TurnDiff(turn, lines_a.get(turn, ()), lines_b.get(turn, ()))
        for turn in range(from_turn, max(a.last_turn, b.last_turn) + 1)
    )
    return EpisodeDiff(from_turn, turns, summary_rows(a.summary, b.summary))


def _lines(events: Iterable[Event]) -> tuple[str, ...]:
    lines = (event_line(e) for e in events)
    return tuple(f"{line.who}: {line.plain()}" for line in lines if line is not None and line.tone != "private")


def _lines_by_turn(episode: Episode) -> dict[int, tuple[str, ...]]:
    """Every turn's lines in one pass over the events (a long episode is not scanned once per turn)."""
    by_turn: dict[int, list[Event]] = {}
    for event in episode.events:
        by_turn.setdefault(event.turn, []).append(event)
    return {turn: _lines(events) for turn, events in by_turn.items()}


def summary_rows(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[tuple[str, Any, Any], ...]:
    """``(name, a's value, b's value)`` for the outcome, score, turns, errors, then every metric either
    summary has (in name order)."""
    rows = [(name, a.get(name), b.get(name)) for name in SUMMARY_FIELDS]
    metrics_a, metrics_b = a.get("metrics") or {}, b.get("metrics") or {}
    names = sorted({*metrics_a, *metrics_b})
    return (*rows, *((name, metrics_a.get(name), metrics_b.get(name)) for name in names))


def value_text(value: Any) -> str:
    """A summary's value as the app shows it: a float to three decimals as ``report`` prints it, an integer or
    a word as it is, ``-`` for none (an episode still running, a metric only one episode has)."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return num_cell(value)
    return str(value)
