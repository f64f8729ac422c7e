"""A fork's continuation against the original's: turns lined up, the first difference, the summaries."""

from __future__ import annotations

from simlab.analysis.episode_diff import turn_lines
from simlab.analysis.fork_diff import fork_diff
from simlab.core import events as ev
from simlab.core.episode import Episode
from simlab.core.events import Event


def _episode(episode_id: str, said: list[str], summary: dict) -> Episode:
    events: list[Event] = []
    for turn, text in enumerate(said, start=1):
        events += [ev.message(turn, "D1", text), ev.reasoning(turn, "D1", f"thinking {episode_id} {turn}")]
    return Episode(episode_id, "blocks", 0, {}, events=events, summary=summary)


def test_the_turns_before_the_first_difference_are_the_same_and_reasoning_is_not_compared():
    original = _episode("a", ["place red", "place blue", "done"], {"outcome": "success", "metrics": {"iou": 1.0}})
    fork = _episode("b", ["place red", "place green"], {"outcome": "failure", "score": 0.5, "metrics": {"x": 2.0}})
    diff = fork_diff(original, fork, 1)
    assert [t.turn for t in diff.turns] == [1, 2, 3]
    assert diff.turns[0].same  # the reasoning differs, but it is private: not part of the comparison
    assert diff.first_difference == 2 and diff.differing == 2
    assert diff.turns[2].b == () and diff.turns[2].a == ("D1: done",)
    rows = {name: (a, b) for name, a, b in diff.outcome}
    assert rows["outcome"] == ("success", "failure") and rows["score"] == (None, 0.5)
    assert rows["iou"] == (1.0, None) and rows["x"] == (None, 2.0)


def test_identical_continuations_have_no_first_difference():
    episode = _episode("a", ["hello"], {})
    assert fork_diff(episode, episode, 0).first_difference is None
    assert turn_lines(episode, 1) == ("D1: hello",)
