"""The Cosmic game master: conformance, alternation, early end, the answer parse, invalid answers, metrics."""

from __future__ import annotations

import pytest

from simlab.core.world import Reply
from simlab.testing import check_world, play
from simlab.worlds import get_family
from simlab.worlds.rooms.world import ANSWERER, HELPER, RoomsWorld, parse_answer

FAMILY = get_family("rooms")


@pytest.fixture(scope="module")
def task():
    return FAMILY.tasks.generate(1, 0, groups=["counting"])[0]


def test_rooms_world_passes_the_conformance_suite():
    check_world("rooms", agents=["answerer=oracle", "helper=oracle"], n_tasks=2)


@pytest.mark.parametrize(
    ("text", "letters", "expected"),
    [
        ("B", ["A", "B", "C", "D"], "B"),
        ("(C)", ["A", "B", "C", "D"], "C"),
        ("Answer: D.", ["A", "B", "C", "D"], "D"),
        ("A or B", ["A", "B", "C", "D"], None),
        ("I am not sure", ["A", "B", "C", "D"], None),
        ("Yes, the map is right.", ["yes", "no"], "yes"),
        ("no", ["yes", "no"], "no"),
        ("yes and no", ["yes", "no"], None),
    ],
)
def test_parse_answer(text, letters, expected):
    assert parse_answer(text, letters) == expected


def test_messages_alternate_from_the_answerer_up_to_ten_then_the_answer(task):
    world = RoomsWorld(task)
    world.reset(0)
    speakers = []
    while world.phase == "dialogue":
        speakers.append(world.agent_selection)
        world.step(Reply(message=f"message {len(speakers)}"))
    assert speakers == [ANSWERER, HELPER] * 5
    assert world.agent_selection == ANSWERER and world.observe(ANSWERER).data["phase"] == "answer"
    events = world.step(Reply(message=world.question.answer))
    assert world.finished and world.agent_selection is None
    result = next(e for e in events if e.kind == "result")
    assert result.data["correct"] is True and world.summary()["outcome"] == "success"


def test_the_answerer_may_end_early(task):
    world = RoomsWorld(task)
    world.reset(0)
    world.step(Reply(message="What do you see?"))
    world.step(Reply(message="A red chair."))
    world.step(Reply(message="Thanks, that is enough.", action={"action": "end"}))
    assert world.phase == "answer" and len(world.history) == 3


def test_an_unreadable_answer_is_recorded_as_invalid(task):
    world = RoomsWorld(task)
    world.reset(0)
    world.step(Reply(message="hi", action={"action": "end"}))
    events = world.step(Reply(message="maybe the second or the third one"))
    assert [e.data["code"] for e in events if e.kind == "protocol_error"] == ["invalid_answer"]
    summary = world.summary()
    assert summary["outcome"] == "abort" and summary["metrics"]["invalid"] == 1.0


def test_the_helper_never_gets_the_question(task):
    world = RoomsWorld(task)
    world.reset(0)
    world.step(Reply(message="hello"))
    helper = world.observe(HELPER)
    assert "question" not in helper.data and world.question.text not in helper.text
    assert set(helper.images) == {"view"}


def test_mentions_are_resolved_for_the_speaker_and_scored_per_message(task):
    world = RoomsWorld(task)
    seen = world.scene.object(world.views.helper_visible[0])
    said = f"I see a {seen.color} {seen.category.replace('_', ' ')} here"
    assert world.mentions(said, HELPER).count == 1 and world.mentions("nothing of note", HELPER).count == 0
    assert world.mentions(f"I see no {seen.category.replace('_', ' ')}", HELPER).objects == ()
    world.reset(0)
    world.step(Reply(message="What do you see?"))
    events = world.step(Reply(message=said))
    assert [e.data["metrics"]["mentions"] for e in events if e.kind == "score"] == [1.0]
    assert world.summary()["metrics"]["mentions_per_message"] == 0.5


def test_oracle_pair_and_random_answerer_on_every_task():
    for name in ("anchor", "counting", "distance", "direction", "mapping"):
        item = FAMILY.tasks.generate(1, 0, groups=[name])[0]
        assert play(FAMILY, item, [], 0, None).summary["metrics"]["accuracy"] == 1.0, name
        guess = play(FAMILY, item, ["answerer=random"], 0, None).summary
        assert guess["metrics"]["invalid"] == 0.0
