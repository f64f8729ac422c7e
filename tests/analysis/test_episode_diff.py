"""Two episodes lined up: every turn from the first, turns one episode did not play, and how values read."""

from __future__ import annotations

from simlab.analysis.episode_diff import episode_diff, value_text
from simlab.analysis.report import num_cell
from simlab.core import events as ev
from simlab.core.episode import Episode


def _episode(said: list[str], summary: dict) -> Episode:
    events = [ev.message(turn, "D1", text) for turn, text in enumerate(said, start=1)]
    return Episode("e", "blocks", 0, {}, events=events, summary=summary)


def test_every_turn_from_one_is_lined_up_and_a_turn_only_one_played_differs():
    a = _episode(["hello", "place red"], {"score": 1.0})
    b = _episode(["hello", "place red", "place blue"], {"score": 0.5})
    diff = episode_diff(a, b)
    assert [(t.turn, t.same) for t in diff.turns] == [(1, True), (2, True), (3, False)]
    assert diff.turns[2].a == () and diff.turns[2].b == ("D1: place blue",)
    assert diff.first_difference == 3 and diff.differing == 1
    assert ("score", 1.0, 0.5) in diff.outcome


def test_a_value_reads_as_report_prints_a_float_and_as_it_is_otherwise():
    assert value_text(0.08347) == num_cell(0.08347) == "0.083"  # not 0.0835: three decimals wherever it is shown
    assert value_text(1.0) == "1.000" and value_text(19) == "19" and value_text("success") == "success"
    assert value_text(None) == "-" and value_text(True) == "True"
