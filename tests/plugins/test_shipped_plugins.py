"""The plugins shipped in ``plugins/``, found in that folder as a user's plugins are: ``plugins`` lists them,
the ``replay`` agent reproduces a recorded run and plays its replies under changed rules, and the
``plain-speech`` judge judges a run on the local test server, its judgments read back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from simlab.cli import main
from simlab.core.episode import Episode
from simlab.core.judging import load_run_judgments
from simlab.core.plugins import REPO_PLUGINS_DIR, discover
from simlab.core.recording import Run, load_run
from simlab.runner.episode import UNREADABLE
from simlab.testing.openai_server import FakeOpenAIServer, last_user_text

RECORDED_TURNS = 4


@pytest.fixture
def recorded(record) -> Path:
    """Two blocks episodes of oracle directors and a scripted builder that sometimes mishears."""
    return record("builder=scripted:0.5", episodes=2, turns=RECORDED_TURNS)


def test_plugins_lists_the_shipped_plugins_from_the_plugins_folder(capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert f"replay: ok, agents replay  ({REPO_PLUGINS_DIR / 'replay' / 'plugin.toml'})" in out
    assert (
        f"plainspeech: ok, agents -, judges plain-speech  ({REPO_PLUGINS_DIR / 'plainspeech' / 'plugin.toml'})" in out
    )
    assert "broken" not in out and "BROKEN" not in out


def replay(recorded: Path, out: Path, *extra: str, episodes: int = 2) -> Run:
    """A blocks run whose builder plays back ``recorded``'s builder, with ``extra`` options."""
    args = ["run", "--world", "blocks", "--episodes", str(episodes), "--out", str(out), "--agent", "builder=replay"]
    assert main([*args, "--agent-setting", f"builder.run={recorded}", *extra]) == 0
    return load_run(out)


def events(episode: Episode) -> list[dict]:
    return [event.to_json() for event in episode.events]


def builder_actions(episode: Episode) -> list[tuple[int, dict]]:
    return [(e.turn, e.data["action"]) for e in episode.events if e.kind == "action" and e.role == "builder"]


def test_replay_reproduces_the_recorded_episodes(recorded, tmp_path):
    source, played = load_run(recorded), replay(recorded, tmp_path / "replayed", "--set", f"turns={RECORDED_TURNS}")
    assert [s["episode_id"] for s in played.summaries] == [s["episode_id"] for s in source.summaries]
    for was, now in zip(source.summaries, played.summaries, strict=True):
        before, after = source.load_episode(was["episode_id"]), played.load_episode(now["episode_id"])
        assert len(builder_actions(before)) == RECORDED_TURNS  # there was something to play back
        assert events(after) == events(before)  # the same moves, results, scores and words
        assert (now["outcome"], now["score"], now["metrics"]) == (was["outcome"], was["score"], was["metrics"])
        assert now["agents"]["builder"] == "replay" and was["agents"]["builder"] == "scripted:0.5"


def test_replay_under_a_shorter_turn_budget_scores_the_recorded_moves_by_the_new_rule(recorded, tmp_path):
    source, played = load_run(recorded), replay(recorded, tmp_path / "short", "--set", "turns=2")
    for was, now in zip(source.summaries, played.summaries, strict=True):
        before, after = source.load_episode(was["episode_id"]), played.load_episode(now["episode_id"])
        assert builder_actions(after) == builder_actions(before)[:2]
        assert now["turns"] == 2 and after.metrics_at(2) == before.metrics_at(2)
        assert now["score"] != was["score"]  # the same two moves, scored as a two-turn game


def test_replay_under_a_longer_turn_budget_says_when_the_recording_ran_out(recorded, tmp_path):
    source, played = load_run(recorded), replay(recorded, tmp_path / "long", "--set", "turns=6")
    for was, now in zip(source.summaries, played.summaries, strict=True):
        before, after = source.load_episode(was["episode_id"]), played.load_episode(now["episode_id"])
        assert builder_actions(after)[:RECORDED_TURNS] == builder_actions(before)
        gave_up = [e for e in after.events if e.kind == "protocol_error" and e.data.get("code") == UNREADABLE]
        assert [e.turn for e in gave_up] == [5, 6]
        assert all(
            f"episode {was['episode_id']} of run {recorded} has no more replies for builder (it recorded 4)"
            in e.data["message"]
            for e in gave_up
        )
        assert now["replies"]["builder"] == {"acts": 6, "unreadable": 2}


def test_replay_episode_map_plays_one_recorded_episode_for_every_repeat(recorded, tmp_path):
    mapping = json.dumps({"structure_000": "structure_000-r0", "structure_001": "structure_001-r0"})
    extra = ("--set", f"turns={RECORDED_TURNS}", "--repeats", "2", "--agent-setting", f"builder.episode_map={mapping}")
    source, played = load_run(recorded), replay(recorded, tmp_path / "mapped", *extra)
    assert len(played.summaries) == 4
    for summary in played.summaries:
        recorded_id = f"{summary['task_id']}-r0"
        assert builder_actions(played.load_episode(summary["episode_id"])) == builder_actions(
            source.load_episode(recorded_id)
        )


REPLAY = ("run", "--world=blocks", "--episodes=2", "--agent", "builder=replay", "--agent-setting", "builder.run={run}")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (REPLAY[:-2], "agent builder=replay: replay needs the recorded run: --agent-setting builder.run=PATH"),
        ((*REPLAY, "--episodes", "3"), "run {run} has no episode of task 'structure_002' repeat 0"),
        ((*REPLAY, "--seed", "5"), "task 'structure_000' in run {run} (episode structure_000-r0) is not the task"),
        ((*REPLAY, "--agent-setting", 'builder.episode_map={{"structure_000": "x"}}'), "run {run} has no episode 'x'"),
        ((*REPLAY, "--agent-setting", "builder.pace=2"), "builder.pace: builder plays replay, which takes episode_map"),
        (
            (
                "run",
                "--world",
                "rooms",
                "--episodes",
                "1",
                "--agent",
                "answerer=replay",
                "--agent-setting",
                "answerer.run={run}",
            ),
            "agent answerer=replay: run {run} is a 'blocks' run, this one plays 'rooms'",
        ),
    ],
)
def test_replay_refuses_what_it_cannot_play_back_naming_the_run_and_the_task(recorded, tmp_path, capsys, args, said):
    assert main([*(part.format(run=recorded) for part in args), "--out", str(tmp_path / "refused")]) == 2
    assert said.format(run=recorded) in capsys.readouterr().err


# ---- the plain-speech judge --------------------------------------------------------------------------------
def plain_judge(body: dict) -> str:
    """Yes to every question, but No to hedging (PL2) for a message to rate that opens with "Please"."""
    rated = last_user_text(body).split("The message to rate", 1)[1].split("\n", 2)[1]
    return "\n".join(
        f"{code}: {'No' if code == 'PL2' and rated.startswith('Please') else 'Yes'} | because"
        for code in ("PL1", "PL2", "PL3")
    )


def test_plain_speech_judges_a_run_and_its_judgments_are_read_back(recorded, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-plugin-judge-test")
    run_dir = tmp_path / "run"
    shutil.copytree(recorded, run_dir)
    judge = discover().load_judge("plain-speech")
    run = load_run(run_dir)
    items = {
        (s["episode_id"], i.turn, i.subject): i
        for s in run.summaries
        for i in judge.items(run.load_episode(s["episode_id"]))
    }
    assert items and all(subject.startswith("D") for _, _, subject in items)  # the directors speak, the builder acts

    with FakeOpenAIServer(plain_judge) as server:
        args = ["judge", str(run_dir), "--judge", "plain-speech", "--model", "judge-m", "--base-url", server.base_url]
        assert main(args) == 0
    assert f"asked {len(items)}, already answered 0, unreadable replies 0" in capsys.readouterr().out

    records, problems = load_run_judgments(run_dir)
    assert not problems and sorted((r.episode_id, r.turn, r.subject) for r in records) == sorted(items)
    for record in records:
        message = items[record.episode_id, record.turn, record.subject].context.rsplit("\n", 1)[1]
        hedged = "No" if message.startswith("Please") else "Yes"
        assert record.judge == "plain-speech" and record.model == "judge-m"
        assert record.labels == {"PL1": "Yes", "PL2": hedged, "PL3": "Yes"}
    assert {r.labels["PL2"] for r in records} == {"Yes", "No"}  # both answers occur, so the check could fail

    assert main(["report", str(run_dir)]) == 0
    report = capsys.readouterr().out
    assert "judge.plain-speech" in report and "PL2" in report
