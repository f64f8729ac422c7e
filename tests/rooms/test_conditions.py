"""The rooms conditions without a dialogue (Cosmic section 5.1, fig. 6 right), the ``condition`` setting:
``both-views`` gives the Answerer its own view and the Helper's at once, ``answerer-alone`` its own only; the
Helper never acts and the Answerer answers at turn 1.

Played through the real runner (the command line) by scripted agents and by the live model agent against
the local OpenAI-compatible server, and through PettingZoo; what each condition gives the Answerer, and what
it must not, is read straight off the observation."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test

from simlab.cli import main
from simlab.core.recording import load_run
from simlab.core.world import Observation
from simlab.pettingzoo import env
from simlab.testing import check_world
from simlab.testing.openai_server import FakeOpenAIServer, scripted_replies
from simlab.worlds import get_family
from simlab.worlds.rooms.observations import (
    ANSWERER,
    ANSWERER_ALONE,
    BOTH_VIEWS,
    DIALOGUE,
    HELPER,
    HELPER_FRAME,
    HELPER_VIEW,
    view_in_words,
)
from simlab.worlds.rooms.scene import PANEL_SIZE, agent_view, annotated_pictures, sent_pictures
from simlab.worlds.rooms.tasks import TASKS
from simlab.worlds.rooms.world import RoomsWorld

FAMILY = get_family("rooms")
SMALL = {"image_width": 64, "image_height": 48}  # rendering the views is the slow part
KEY_ENV, KEY = "SIMLAB_TEST_KEY", "sk-test-SECRET-123"


@pytest.fixture(scope="module")
def tasks() -> dict[str, dict[str, Any]]:
    """One generated question of each task (anchor, counting, distance, direction, mapping)."""
    made = {t["task"]: t for t in FAMILY.tasks.generate(len(TASKS), 0)}
    assert set(made) == set(TASKS)
    return made


def observe(task: Mapping[str, Any], condition: str, role: str = ANSWERER) -> Observation:
    """``role``'s first observation of ``task`` under ``condition`` (small pictures)."""
    world = RoomsWorld(task, {**SMALL, "condition": condition})
    world.reset(0)
    return world.observe(role)


def pixels(image: Any) -> np.ndarray:
    return np.asarray(image.convert("RGB"))


def run_cli(capsys: pytest.CaptureFixture[str], out: Path, *args: str) -> tuple[int, str]:
    """``python main.py run --world rooms ... --out OUT``: the exit status and what it printed to stderr."""
    code = main(["run", "--world", "rooms", "--out", str(out), *args])
    return code, capsys.readouterr().err


def episodes_of(out: Path) -> list[Any]:
    run = load_run(out)
    return [run.load_episode(s["episode_id"]) for s in run.summaries]


def with_another_helper(task: Mapping[str, Any], same_objects: bool = False) -> dict[str, Any]:
    """``task`` with the Helper standing where the Answerer stands, seeing what it sees (or, with
    ``same_objects``, still its own objects): another Helper view, the same question."""
    moved = copy.deepcopy(dict(task))
    moved["views"]["helper"] = moved["views"]["answerer"]
    if not same_objects:
        moved["views"]["helper_visible"] = list(moved["views"]["answerer_visible"])
    return moved


# ---- end to end through the runner ----------------------------------------------------------------------
def test_both_views_oracle_answers_every_question_at_once_and_the_helper_never_acts(capsys, tmp_path):
    out = tmp_path / "both"
    code, err = run_cli(capsys, out, "--episodes", "10", "--seed", "4", "--set", "condition=both-views")
    assert code == 0, err
    episodes = episodes_of(out)
    assert {e.task["task"] for e in episodes} == set(TASKS)
    for episode in episodes:
        summary = episode.summary
        assert summary["metrics"]["accuracy"] == 1.0 and summary["outcome"] == "success", episode.episode_id
        assert summary["turns"] == 1 and summary["condition"] == BOTH_VIEWS
        assert episode.settings["condition"] == BOTH_VIEWS
        acted = [(e.turn, e.role) for e in episode.events if e.kind == "observation"]
        assert acted == [(1, ANSWERER)] and not any(e.kind == "message" for e in episode.events)
    assert load_run(out).config["settings"]["condition"] == BOTH_VIEWS


def test_answerer_alone_is_played_by_the_single_view_agent_and_reported_per_condition(capsys, tmp_path):
    out = tmp_path / "alone"
    args = ["--episodes", "5", "--seed", "4", "--set", "condition=answerer-alone", "--agent", "answerer=single-view"]
    code, err = run_cli(capsys, out, *args)
    assert code == 0, err
    dialogue = tmp_path / "dialogue"
    assert run_cli(capsys, dialogue, "--episodes", "1", "--seed", "4", "--agent", "answerer=single-view")[0] == 0
    same_metrics = set(episodes_of(dialogue)[0].summary["metrics"])
    for episode in episodes_of(out):
        summary = episode.summary
        assert summary["outcome"] in ("success", "failure") and summary["turns"] == 1
        assert set(summary["metrics"]) == same_metrics and summary["metrics"]["invalid"] == 0.0
        assert [e.role for e in episode.events if e.kind == "observation"] == [ANSWERER]
    assert main(["report", str(out), "--group-by", "condition", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert list(report["groups"]) == [ANSWERER_ALONE] and report["groups"][ANSWERER_ALONE]["n"] == 5


def test_combinations_that_make_no_sense_are_refused_naming_the_setting(capsys, tmp_path):
    code, err = run_cli(capsys, tmp_path / "oracle", "--episodes", "1", "--set", "condition=answerer-alone")
    assert code == 2 and "answerer=oracle" in err and "condition=answerer-alone" in err and "single-view" in err
    code, err = run_cli(capsys, tmp_path / "typo", "--episodes", "1", "--set", "condition=both")
    assert code == 2 and "setting 'condition'" in err and "both-views" in err
    assert not (tmp_path / "typo").exists()


@pytest.mark.parametrize(("condition", "answerer"), [(BOTH_VIEWS, "oracle"), (ANSWERER_ALONE, "single-view")])
def test_the_conditions_pass_the_conformance_suite(condition, answerer):
    """Same seed same episode (in another process too), recordings round-trip, every picture renders."""
    check_world("rooms", agents=[f"answerer={answerer}"], n_tasks=1, settings={**SMALL, "condition": condition})


def test_the_dialogue_records_nothing_new(tasks):
    """Runs made before the setting existed and the dialogue's runs now are the same bytes: the setting is
    left out of recorded settings when it is the dialogue, and nothing of it reaches the observations."""
    assert "condition" not in FAMILY.check_settings({}) and FAMILY.check_settings({"condition": DIALOGUE}) == (
        FAMILY.check_settings({})
    )
    assert FAMILY.check_settings({"condition": BOTH_VIEWS})["condition"] == BOTH_VIEWS
    world = RoomsWorld(tasks["counting"], {"condition": DIALOGUE})
    assert world.reset(0)[0].data == {"state": {"phase": "dialogue"}}
    data = world.observe(ANSWERER).data
    assert "condition" not in data and HELPER_VIEW not in data and "condition" not in world.summary()


# ---- what each condition gives ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", TASKS)
def test_both_views_gives_the_helpers_picture_words_and_objects_and_nothing_else(tasks, name):
    task = tasks[name]
    given, dialogue, helper = observe(task, BOTH_VIEWS), observe(task, DIALOGUE), observe(task, DIALOGUE, HELPER)
    data, before = given.data, dialogue.data
    assert set(data) == {*before, HELPER_VIEW, "condition"} and data["phase"] == "answer"
    assert {k: v for k, v in data.items() if k not in (HELPER_VIEW, "condition", "phase")} == {
        k: v for k, v in before.items() if k != "phase"
    }
    # the Helper's own objects in its own frame, without the ids that would say which objects both views share
    assert data[HELPER_VIEW] == [{k: v for k, v in e.items() if k != "id"} for e in helper.data["view"]]
    assert all({"world_center", "world_size", "camera_xyz"} <= set(e) for e in data[HELPER_VIEW])
    pictures = ["view", HELPER_VIEW, *(["map"] if name == "mapping" else [])]
    assert list(given.images) == pictures == list(given.image_texts)
    assert np.array_equal(pixels(given.images[HELPER_VIEW]), pixels(helper.images["view"]))
    assert np.array_equal(pixels(given.images["view"]), pixels(dialogue.images["view"]))
    words = given.image_texts[HELPER_VIEW]
    assert words == view_in_words(data[HELPER_VIEW], HELPER_FRAME) and words.startswith("From the Helper's position")
    assert "your" not in words and given.image_texts["view"] == dialogue.image_texts["view"]
    assert "answer now" in given.text and "Conversation" not in given.text and data["question"] in given.text


def test_both_views_prompt_says_which_picture_is_whose_and_to_answer_now(tasks):
    given = observe(tasks["direction"], BOTH_VIEWS)
    system = FAMILY.protocol(ANSWERER, given, {**SMALL, "condition": BOTH_VIEWS}).system
    assert "two views of the same room" in system and "two different positions" in system
    assert '"view", is what you see from your own position' in system and '"helper_view"' in system
    assert '"your perspective" mean your own position' in system and "answer now" in system
    assert "Reply with only your final answer: one of A/B/C/D." in system
    alone = FAMILY.protocol(ANSWERER, observe(tasks["direction"], ANSWERER_ALONE), {"condition": ANSWERER_ALONE})
    assert "helper_view" not in alone.system and "not given the Helper's view" in alone.system
    assert "answer now" in alone.system


@pytest.mark.parametrize("name", TASKS)
def test_answerer_alone_gives_nothing_of_the_helpers_view(tasks, name):
    """The Answerer's observation does not change when the Helper stands elsewhere (another view, other
    objects): nothing of that view reaches it. A mapping question keeps the Helper's objects: its map, the
    question itself, draws every object either agent sees (as in the dialogue and for the necessity filter's
    single-view solver), so only the Helper's camera moves there."""
    task = tasks[name]
    other_helper = with_another_helper(task, same_objects=name == "mapping")
    given, other = observe(task, ANSWERER_ALONE), observe(other_helper, ANSWERER_ALONE)
    assert given.data == other.data and given.text == other.text and given.image_texts == other.image_texts
    assert list(given.images) == ["view", *(["map"] if name == "mapping" else [])] == list(given.image_texts)
    assert np.array_equal(pixels(given.images["view"]), pixels(other.images["view"]))
    before = observe(task, DIALOGUE).data
    assert set(given.data) == {*before, "condition"} and HELPER_VIEW not in given.data
    assert {k: v for k, v in given.data.items() if k not in ("condition", "phase")} == {
        k: v for k, v in before.items() if k != "phase"
    }
    system = FAMILY.protocol(ANSWERER, given, {"condition": ANSWERER_ALONE}).system
    assert HELPER_VIEW not in given.text + system and "Helper's position" not in "".join(given.image_texts.values())


# ---- a live model agent -----------------------------------------------------------------------------------
@pytest.mark.parametrize("text_only", [False, True])
def test_a_live_model_in_both_views_is_sent_both_views_and_its_answer_is_read(capsys, tmp_path, monkeypatch, text_only):
    monkeypatch.setenv(KEY_ENV, KEY)
    reply = scripted_replies({"There is no conversation: answer now": "My answer is (C)."}, default=None)
    out = tmp_path / "live"
    with FakeOpenAIServer(reply) as server:
        code, err = run_cli(
            capsys,
            out,
            *("--episodes", "1", "--group", "direction", "--set", "condition=both-views"),
            *("--set", "image_width=64", "--set", "image_height=48", "--agent", "answerer=openai:fake-model"),
            *(
                "--agent-setting",
                f"answerer.base_url={server.base_url}",
                "--agent-setting",
                f"answerer.api_key_env={KEY_ENV}",
            ),
            *(
                "--agent-setting",
                "answerer.backoff_s=0.001",
                "--agent-setting",
                f"answerer.text_only={json.dumps(text_only)}",
            ),
        )
        sent = server.requests
    assert code == 0, err
    assert len(sent) == 1  # the Answerer, once: the Helper is never asked
    system, user = sent[0]["messages"]
    assert "helper_view" in system["content"] and "two views of the same room" in system["content"]
    if text_only:
        assert isinstance(user["content"], str)
        assert "[view]\nYou see:" in user["content"] and "[helper_view]\nFrom the Helper's position" in user["content"]
    else:
        parts = user["content"]
        assert [p["type"] for p in parts] == ["text", "image_url", "image_url"]
        assert "(Attached, in this order: view, helper_view.)" in parts[0]["text"]
    episode = episodes_of(out)[0]
    result = next(e for e in episode.events if e.kind == "result")
    assert result.data["answer"] == "C" and episode.summary["replies"] == {ANSWERER: {"acts": 1, "unreadable": 0}}
    seen = next(e for e in episode.events if e.kind == "observation")
    assert seen.data["images"] == ([] if text_only else [HELPER_VIEW, "view"])


# ---- PettingZoo and the app -------------------------------------------------------------------------------
@pytest.mark.parametrize("condition", [BOTH_VIEWS, ANSWERER_ALONE])
def test_pettingzoo_plays_the_conditions(tasks, condition):
    task = tasks["counting"]
    api_test(env("rooms", task=task, settings={**SMALL, "condition": condition}), num_cycles=20)
    game = env("rooms", task=task, settings={**SMALL, "condition": condition})
    game.reset(seed=0)
    assert game.agent_selection == ANSWERER
    images = game.observe(ANSWERER)["images"]
    assert set(images) == ({"view", HELPER_VIEW} if condition == BOTH_VIEWS else {"view"})
    assert all(picture.any() for picture in images.values())
    letter = task["question"]["answer"]
    game.step(game.roles[ANSWERER].action({"answer": letter}))
    assert all(game.terminations.values()) and game.rewards[ANSWERER] == 1.0


def test_the_agent_panel_shows_both_pictures_as_sent_and_annotated_each_captioned(capsys, tmp_path):
    out = tmp_path / "both"
    assert run_cli(capsys, out, "--episodes", "1", "--group", "distance", "--set", "condition=both-views")[0] == 0
    episode = episodes_of(out)[0]
    seen = next(e for e in episode.events if e.kind == "observation")
    assert list(sent_pictures(seen.data, episode, seen.turn)) == ["view", HELPER_VIEW]  # as the model got them
    pictures = annotated_pictures(seen.data, episode, seen.turn)
    assert list(pictures) == ["view", HELPER_VIEW, "question"]
    for name, role in (("view", ANSWERER), (HELPER_VIEW, HELPER)):
        band = pictures[name].height - PANEL_SIZE[1]
        body = pictures[name].crop((0, band, *pictures[name].size))
        assert band > 0 and np.array_equal(pixels(body), pixels(agent_view(episode, role, seen.turn)))
