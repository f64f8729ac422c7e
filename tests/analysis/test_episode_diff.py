"""Two episodes lined up: every turn from the first, turns one episode did not play, and pairing by task."""

from __future__ import annotations

from simlab.analysis.episode_diff import episode_diff, same_task
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


def test_same_task_pairs_the_task_and_its_repeat_when_both_record_one():
    others = [
        {"episode_id": "t1-r0", "task_id": "t1", "repeat": 0},
        {"episode_id": "t2-r0", "task_id": "t2", "repeat": 0},
        {"episode_id": "t2-r1", "task_id": "t2", "repeat": 1},
    ]
    assert same_task({"task_id": "t2", "repeat": 1}, others) == others[2]
    assert same_task({"task_id": "t2"}, others) == others[1]  # no repeat recorded: the first of the task
    assert same_task({"task_id": "t1", "repeat": 1}, others) is None  # the task, but not that repeat
    assert same_task({"task_id": "t3", "repeat": 0}, others) is None
    assert same_task({"task_id": "t1", "repeat": 0}, [{"episode_id": "x", "task_id": "t1"}])["episode_id"] == "x"
    assert same_task({}, others) is None
