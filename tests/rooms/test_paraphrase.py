"""The paraphrase step through the real ``openai`` client against the fake server: a good JSON reply rewords
the question and options and keeps the template; anything else keeps the template and records why."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from simlab.testing.openai_server import FakeOpenAIServer, FaultPlan, last_user_text
from simlab.worlds.rooms.paraphrase import ParaphraseError, paraphrase_question, parse_paraphrase
from simlab.worlds.rooms.tasks import Question, make_question
from tests.rooms.handmade import living_room

KEY_ENV, KEY = "SIMLAB_PARAPHRASE_KEY", "sk-paraphrase-SECRET-77"
REWORDED = {
    "Which of the following objects is closest to the blue chair?": "Which object sits nearest the blue chair?",
    "green chair": "the green seat",
    "lamp": "the light",
    "cabinet": "the cupboard",
    "window with blue curtains": "the window that has blue curtains",
}


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


def reworded(body: dict[str, Any]) -> str:
    """A well-behaved paraphraser: every known phrase reworded, in the order given."""
    asked = json.loads(last_user_text(body))
    options = [REWORDED.get(o, f"{o} (reworded)") for o in asked["options"]]
    return json.dumps(
        {"question": REWORDED.get(asked["question"], asked["question"] + " Please say."), "options": options}
    )


def settings(server: FakeOpenAIServer, **more: Any) -> dict[str, Any]:
    return {"base_url": server.base_url, "model": "fake-model", "api_key_env": KEY_ENV, "timeout": 5, **more}


@pytest.fixture
def question() -> Question:
    objects = {"A": "chair_2", "B": "lamp_0", "C": "cabinet_0", "D": "window_1"}
    options = ("green chair", "lamp", "cabinet", "window with blue curtains")
    text = "Which of the following objects is closest to the blue chair?"
    details = {"mode": "closest"}
    return Question("room-0-distance-s0", "distance", "room-0", text, options, "A", objects, "chair_1", details=details)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(reworded) as fake:
        yield fake


def test_a_good_reply_rewords_the_question_and_keeps_the_template(server, question):
    out = paraphrase_question(question, settings(server, temperature=0.3))
    assert out.text == "Which object sits nearest the blue chair?"
    assert out.options == ("the green seat", "the light", "the cupboard", "the window that has blue curtains")
    assert out.details["template_text"] == question.text
    assert out.details["template_options"] == list(question.options)
    assert "paraphrase_error" not in out.details
    # the answer, what each letter stands for and everything else stay as they were
    assert (out.answer, out.option_objects, out.id, out.target) == (
        question.answer,
        question.option_objects,
        question.id,
        question.target,
    )
    assert {k: v for k, v in out.details.items() if not k.startswith(("template_", "paraphrase_"))} == question.details
    assert Question.from_json(out.to_json()) == out
    (sent,) = server.requests
    assert sent["temperature"] == 0.3 and json.loads(sent["messages"][-1]["content"])["options"] == list(
        question.options
    )
    assert server.saw_authorization == [f"Bearer {KEY}"] and KEY not in json.dumps(out.to_json())


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ("Sure! Here is the question reworded: Which object is nearest?", "not JSON"),
        ('{"question": "Which is nearest?", "options": ["a", "b", "c"]}', "expected 4"),
        ('["Which is nearest?"]', "expected {"),
        ('{"question": "Which is nearest?", "options": ["a", "a", "b", "c"]}', "read the same"),
    ],
)
def test_an_unusable_reply_keeps_the_template_and_records_why(question, reply, error):
    with FakeOpenAIServer(lambda body: reply) as fake:
        out = paraphrase_question(question, settings(fake))
    assert (out.text, out.options, out.answer) == (question.text, question.options, question.answer)
    assert error in out.details["paraphrase_error"] and "template_text" not in out.details


def test_api_errors_are_retried_then_keep_the_template(question):
    plan = FaultPlan(schedule={1: "503", 3: "malformed", 4: "malformed", 5: "500", 6: "500"})
    with FakeOpenAIServer(reworded, faults=plan) as fake:
        quick = settings(fake, max_retries=1, backoff_s=0.01)
        retried = paraphrase_question(question, quick)  # 503, then the answer
        assert retried.options[0] == "the green seat" and fake.stats.requests == 2
        malformed = paraphrase_question(question, quick)
        failed = paraphrase_question(question, quick)
    assert "response body is not JSON on 2 attempts" in malformed.details["paraphrase_error"]
    assert "HTTP 500 InternalServerError on 2 attempts" in failed.details["paraphrase_error"]
    assert malformed.text == question.text and failed.options == question.options
    assert KEY not in failed.details["paraphrase_error"]


def test_a_dripping_server_is_cut_at_the_timeout(question):
    with FakeOpenAIServer(reworded, faults=FaultPlan(rates={"drip": 1.0}, drip_ms=500)) as fake:
        out = paraphrase_question(question, settings(fake, timeout=1, max_retries=0))
    assert "APITimeoutError" in out.details["paraphrase_error"] and out.text == question.text


def test_yes_no_options_and_numbers_are_kept():
    mapping = make_question("mapping", *living_room(), 0)
    counting = Question(
        "c",
        "counting",
        "room-0",
        "How many chairs?",
        ("3", "5", "2", "4"),
        "A",
        dict(zip("ABCD", (3, 5, 2, 4), strict=True)),
    )
    assert mapping is not None
    with FakeOpenAIServer(reworded) as fake:
        out = paraphrase_question(mapping, settings(fake))
        assert json.loads(last_user_text(fake.requests[0]))["options"] == []
    assert out.options == ("yes", "no") and out.text.endswith("Please say.") and out.answer == mapping.answer
    with pytest.raises(ParaphraseError, match="changed its numbers"):
        parse_paraphrase('{"question": "How many chairs?", "options": ["three", "5", "2", "4"]}', "q", counting.options)
    text, options = parse_paraphrase(
        '```json\n{"question": "How many chairs are there?", "options": [" 3 chairs", "5", "2", "4"]}\n```',
        counting.text,
        counting.options,
    )
    assert options == ("3 chairs", "5", "2", "4") and text == "How many chairs are there?"


def test_a_missing_key_or_model_keeps_the_template(question, monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    out = paraphrase_question(question, {"model": "m", "api_key_env": KEY_ENV, "base_url": "http://127.0.0.1:9/v1"})
    assert KEY_ENV in out.details["paraphrase_error"] and out.text == question.text
    monkeypatch.setenv(KEY_ENV, KEY)
    assert "no paraphrase model" in paraphrase_question(question, {"api_key_env": KEY_ENV}).details["paraphrase_error"]


def test_generate_rooms_with_a_paraphrase_model_keeps_both_forms(server, tmp_path, capsys):
    from simlab.cli import main
    from simlab.worlds.rooms.benchmark import load_questions

    args = ["generate", "rooms", "--n", "4", "--questions-per-task", "1", "--no-images", "--out", str(tmp_path / "b")]
    more = ["--paraphrase-model", "fake-model", "--paraphrase-base-url", server.base_url]
    assert main([*args, *more, "--paraphrase-key-env", KEY_ENV]) == 0
    items = load_questions(tmp_path / "b")
    assert items and all("template_text" in q["question"]["details"] for q in items)
    assert any(q["question"]["text"] != q["question"]["details"]["template_text"] for q in items)
    assert all(KEY not in path.read_text(encoding="utf-8") for path in (tmp_path / "b").rglob("*.json"))
