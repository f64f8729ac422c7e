"""COMMA's error taxonomy judge on recorded puzzles runs: items only for conversations that failed or had a
strike, contexts holding the manual, the start and every action with its result, categories read from
realistic replies, and the judge end to end against the local OpenAI-compatible server."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from simlab.agents.openai_agent import AgentSettings
from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.core.judging import JudgeItem, load_run_judgments, make_record, read_verdict
from simlab.core.recording import load_run
from simlab.runner.batch import RunConfig, run
from simlab.runner.judging import judge_run
from simlab.testing import judge_test
from simlab.testing.openai_server import FakeOpenAIServer, last_user_text
from simlab.worlds import get_family
from simlab.worlds.puzzles.judges import CONVERSATION_TURNS, JUDGES, error_items, went_wrong
from simlab.worlds.puzzles.puzzle import puzzle_class

(ERRORS,) = JUDGES


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A random solver that fails (strikes included) and the scripted solver with the oracle expert, who solve."""
    folder = tmp_path_factory.mktemp("puzzles")
    configs = {
        "random": RunConfig("puzzles", seed=0, episodes=10, agents=["solver=random"], settings={"turns": 6}),
        "solved": RunConfig("puzzles", seed=0, episodes=4),
    }
    for name, config in configs.items():
        run(config, folder / name)
    return {name: folder / name for name in configs}


@pytest.fixture(scope="module")
def episodes(runs) -> list[Episode]:
    return [e for path in runs.values() for e in load_run(path).episodes()]


def strikes(episode: Episode) -> int:
    return sum(e.kind == "result" and e.data.get("error") == "mistake" for e in episode.events)


def test_the_family_declares_the_error_judge_and_it_passes_the_contract_check(episodes):
    assert [j.name for j in get_family("puzzles").load_judges()] == ["comma-errors"]
    scale = ERRORS.questions[0].scale
    assert list(scale.labels) == ["roleplay", "misinterpretation", "repetition_loop", "miscommunication", "none"]
    assert scale.categorical and ERRORS.runs == 1
    wrong = sum(went_wrong(e) for e in episodes)
    assert judge_test("puzzles", episodes) == {"comma-errors": wrong}


def test_only_conversations_that_failed_or_had_a_strike_are_rated(episodes):
    outcomes = {e.summary["outcome"] for e in episodes}
    assert {"success", "failure"} <= outcomes and any(strikes(e) for e in episodes)
    for episode in episodes:
        expected = episode.summary["outcome"] != "success" or strikes(episode) > 0
        assert [(i.turn, i.subject) for i in error_items(episode)] == ([(episode.last_turn, "")] if expected else [])
    solved = next(e for e in episodes if e.summary["outcome"] == "success" and not strikes(e))
    struck = Event("result", 1, "engine", {"ok": False, "kind": "mistake", "message": "BOOM", "error": "mistake"})
    assert len(error_items(replace(solved, events=[*solved.events, struck]))) == 1  # solved, but with a strike
    unfinished = replace(solved, summary={})
    assert error_items(unfinished) == []  # no outcome and no strike: nothing known to have gone wrong


def test_the_context_holds_the_manual_the_start_and_every_action_with_its_result(episodes):
    rated = [e for e in episodes if error_items(e)]
    assert rated
    for episode in rated:
        (item,) = error_items(episode)
        kind = puzzle_class(episode.task["puzzle"])
        assert kind.manual() in item.context and f"Puzzle: {kind.title}" in item.context
        start = next(e.data["data"] for e in episode.events if e.kind == "observation" and e.role == "solver")
        assert ", ".join(start["actions"])[:200] in item.context
        for e in episode.events:
            if e.kind in ("action", "message"):
                assert e.data["text"] in item.context
            if e.kind == "result":
                assert f"-> {e.data['kind']}: {e.data['message']}" in item.context
        assert f"{strikes(episode)} strike(s)" in item.context


def test_private_values_are_given_to_the_judge(episodes):
    atm = next(e for e in episodes if e.task["puzzle"] == "atm" and error_items(e))
    (item,) = error_items(atm)
    pin = atm.task["instance"]["pin"]
    assert f"PIN {pin}" in item.context and "balance $" in item.context


def test_a_long_episode_keeps_its_last_turns(episodes):
    episode = next(e for e in episodes if error_items(e))
    chatter = [Event("message", t, "solver", {"text": f"still thinking {t}"}) for t in range(1, 70)]
    (item,) = error_items(replace(episode, events=[*episode.events[:2], *chatter]))
    assert f"(turns 1 to {69 - CONVERSATION_TURNS} left out)" in item.context
    assert "still thinking 69" in item.context and "still thinking 39\n" not in item.context


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ("ERR: repetition_loop | pressed Clear twice on the same screen", "repetition_loop"),
        ("**ERR**: Repetition loop - it cut the same wire again", "repetition_loop"),
        ("Error analysis:\n- ERR: miscommunication. The solver ignored the expert's instruction.", "miscommunication"),
        ("ERR - Roleplay (the expert claims to see the wires)", "roleplay"),
        ("ERR: MISINTERPRETATION | read blue as black", "misinterpretation"),
        ("ERR: none | the turns ran out", "none"),
    ],
)
def test_error_categories_are_read_from_realistic_replies(reply, label):
    record = make_record(ERRORS, "m", "e", JudgeItem(4, "", "c"), 0, "sha", reply)
    assert record.labels == {"ERR": label} and record.values == {"ERR": None} and record.unreadable is None


def test_a_reply_naming_no_category_is_unreadable():
    for reply in ("I think the solver misread the module.", "ERR: confusion | the agents were confused"):
        verdict = read_verdict(ERRORS, reply)
        assert verdict.labels == {} and "roleplay / misinterpretation" in str(verdict.unreadable)


def test_the_judge_runs_end_to_end_against_the_local_server(runs, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("JUDGE_KEY", "sk-test")
    recorded = load_run(runs["random"])

    def answer(body: dict) -> str:
        text = last_user_text(body)
        return "**ERR**: Repetition loop | the same press again" if "Clear" in text else "ERR: misinterpretation"

    with FakeOpenAIServer(answer) as server:
        settings = AgentSettings(model="judge", base_url=server.base_url, api_key_env="JUDGE_KEY")
        outcome = judge_run(recorded, [ERRORS], settings, concurrency=2)
    rated = [e for e in recorded.episodes() if went_wrong(e)]
    assert (outcome.asked, outcome.unreadable, outcome.failure) == (len(rated), 0, None)
    records, problems = load_run_judgments(recorded.path)
    assert problems == [] and sorted(r.episode_id for r in records) == sorted(e.episode_id for e in rated)
    assert {r.labels["ERR"] for r in records} == {"repetition_loop", "misinterpretation"}
    assert all(r.values == {"ERR": None} and r.turn > 0 and r.subject == "" for r in records)
