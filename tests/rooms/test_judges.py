"""Cosmic's dialogue repair judge on recorded rooms runs: one item per conversation holding the task, the
ground truth and both views in words, the repair rate, and the -1/0/1 labels read from realistic replies."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.core.judging import JudgeItem, make_record, read_verdict
from simlab.core.recording import load_run
from simlab.runner.batch import RunConfig, run
from simlab.testing import judge_test
from simlab.worlds import get_family
from simlab.worlds.rooms.judges import CONVERSATION_TURNS, JUDGES, repair_items, repair_rate
from simlab.worlds.rooms.observations import map_in_words, view_in_words

REPAIR = next(j for j in JUDGES if j.name == "cosmic-repair")


@pytest.fixture(scope="module")
def episodes(record_rooms: Path) -> list[Episode]:
    return load_run(record_rooms).episodes()


@pytest.fixture(scope="module")
def mapping(tmp_path_factory: pytest.TempPathFactory) -> Episode:
    """A cognitive-mapping episode: the Answerer is also shown a top-down map."""
    out = tmp_path_factory.mktemp("mapping") / "run"
    run(RunConfig("rooms", seed=0, episodes=1, groups=["mapping"], agents=["answerer=oracle", "helper=oracle"]), out)
    return load_run(out).episodes()[0]


def first_seen(episode: Episode, role: str) -> dict:
    """The data of the role's first recorded observation (what the world gave it)."""
    return next(e.data["data"] for e in episode.events if e.kind == "observation" and e.role == role)


def test_the_family_declares_the_repair_judge_and_it_passes_the_contract_check(episodes, mapping):
    assert [j.name for j in get_family("rooms").load_judges()] == ["cosmic-repair", "cosmic-failures"]
    assert (REPAIR.runs, REPAIR.combine, REPAIR.rate_label) == (2, "agree", "repair rate")
    assert dict(REPAIR.questions[0].scale.labels) == {"-1": -1.0, "0": 0.0, "1": 1.0}
    assert judge_test("rooms", [*episodes, mapping]) == {"cosmic-repair": len(episodes) + 1, "cosmic-failures": 0}


def test_one_item_per_conversation_with_the_task_the_answer_both_views_and_the_transcript(episodes):
    for episode in episodes:
        (item,) = repair_items(episode)
        assert (item.turn, item.subject) == (episode.last_turn, "")
        question = episode.task["question"]
        assert question["text"] in item.context
        letters = ["A", "B", "C", "D"]
        assert all(f"({k}) {o}" in item.context for k, o in zip(letters, question["options"], strict=False))
        right = question["answer"]
        assert f"Correct answer: ({right}) {question['options'][letters.index(right)]}" in item.context
        for role in ("answerer", "helper"):
            assert view_in_words(first_seen(episode, role)["view"]) in item.context  # as a text-only agent reads it
        for e in episode.events:
            if e.kind == "message":
                assert f"[turn {e.turn}] {e.role}: {e.data['text'][:300]}" in item.context
            if e.kind == "reasoning":
                assert e.data["text"] not in item.context  # the transcript is what was said, not thought
        answer = next(
            e.data["action"]["answer"] for e in episode.events if e.kind == "action" and "answer" in e.data["action"]
        )
        assert f"[turn {episode.last_turn}] answerer: (final answer) {answer}" in item.context


def test_a_mapping_conversation_shows_the_map_the_answerer_was_given(mapping):
    (item,) = repair_items(mapping)
    seen = first_seen(mapping, "answerer")
    assert map_in_words(seen["map_objects"]) in item.context
    assert f"Correct answer: {mapping.task['question']['answer']}" in item.context and "yes / no" in item.context


def test_no_item_for_a_conversation_without_messages_and_a_long_one_is_cut(episodes):
    episode = episodes[0]
    silent = replace(episode, events=[e for e in episode.events if e.kind != "message"])
    assert repair_items(silent) == []
    chatter = [
        Event("message", t, ("answerer", "helper")[t % 2], {"text": f"message number {t}"}) for t in range(1, 90)
    ]
    long = replace(episode, events=[*episode.events[:1], *chatter])
    (item,) = repair_items(long)
    assert f"(turns 1 to {89 - CONVERSATION_TURNS} left out)" in item.context
    assert "message number 89" in item.context and "message number 49" not in item.context
    assert "[turn 1] " not in item.context


def test_the_repair_rate_counts_repaired_among_flawed_conversations():
    labels = [{"DR": "1"}, {"DR": "-1"}, {"DR": "0"}, {"DR": "1"}, {"DR": "0"}]
    assert repair_rate(labels) == pytest.approx(2 / 3)
    assert repair_rate([{"DR": "-1"}, {"DR": "-1"}]) == 0.0
    assert repair_rate([{"DR": "0"}, {"DR": "0"}]) is None  # nothing flawed: no rate, not 0 or 1
    assert repair_rate([]) is None
    assert repair_rate([{}, {"DR": "1"}]) == 1.0  # an item without the label does not count


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ("DR: -1 | the Helper's black chair was never matched to the Answerer's", "-1"),
        ("**DR**: 1 — they caught the left/right mix-up at turn 4", "1"),
        ("Looking at the dialogue...\n\ndr - 0 (no flawed trajectory)", "0"),
        ("DR: 1\nDR: -1", "1"),  # the first answer counts
    ],
)
def test_repair_labels_are_read_from_realistic_replies(reply, label):
    record = make_record(REPAIR, "m", "e", JudgeItem(3, "", "c"), 0, "sha", reply)
    assert record.labels == {"DR": label} and record.unreadable is None
    assert record.values == {"DR": float(label)}


@pytest.mark.parametrize(
    "reply", ["Label: -1", "DR: minus one", "The agents repaired their mistake, so I would say 1.", ""]
)
def test_a_reply_without_a_readable_label_is_unreadable(reply):
    verdict = read_verdict(REPAIR, reply)
    assert verdict.labels == {} and verdict.unreadable
