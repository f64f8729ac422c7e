"""LLM judges end to end against the local OpenAI-compatible server: stored judgments, reruns that ask nothing,
resume after kill -9, unreadable replies, endpoint failures, the key never sent in a prompt nor stored, and the
combination of runs (mean, agree, N/A, categories)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simlab.agents.openai_agent import AgentSettings
from simlab.analysis.judgments import episode_metrics, item_scores, summarize, with_judge_metrics
from simlab.core.episode import Episode
from simlab.core.judging import (
    JUDGMENTS_DIR,
    YES_NO_UNCLEAR_NA,
    Judge,
    JudgeItem,
    JudgmentRecord,
    Question,
    Scale,
    judge_messages,
    load_run_judgments,
    read_judgments,
    read_verdict,
)
from simlab.core.recording import Run, load_run
from simlab.runner.batch import RunConfig, run
from simlab.runner.judging import judge_run
from simlab.testing.openai_server import FakeOpenAIServer, FaultPlan, last_user_text

REPO_ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-judge-secret-0123456789abcdef"
TURNS = 4


def turn_items(episode: Episode) -> list[JudgeItem]:
    """One item per played turn, its context naming the episode and turn (what the fake judge answers on)."""
    last = max(e.turn for e in episode.events)
    return [JudgeItem(t, "", f"episode {episode.episode_id}, turn {t}") for t in range(1, last + 1)]


TEST_JUDGE = Judge(
    "test-judge",
    "blocks",
    "Test judge",
    "asks two questions per turn",
    "You grade a turn of a block-building dialogue.",
    (Question("Q1", "first", "Is the turn fine?"), Question("Q2", "second", "Is it clear?", YES_NO_UNCLEAR_NA)),
    turn_items,
    runs=2,
)


def answer(body: dict) -> str:
    """The fake judge: turn 2 is answered with prose nobody can read; every other turn in the asked form."""
    text = last_user_text(body)
    if "turn 2" in text:
        return "Hard to say, really."
    return "Q1: Yes | the move is right\n**Q2** - N/A, nothing to clarify"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("judged") / "run"
    run(RunConfig("blocks", seed=3, episodes=3, agents=["builder=scripted:0.5"], settings={"turns": TURNS}), out)
    return out


@pytest.fixture
def fresh(recorded: Path, tmp_path: Path) -> Run:
    """A copy of the recorded run with no judgments yet."""
    import shutil

    shutil.copytree(recorded, tmp_path / "run")
    return load_run(tmp_path / "run")


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("JUDGE_KEY", KEY)
    return KEY


def settings(server: FakeOpenAIServer, **extra) -> AgentSettings:
    return AgentSettings(model="judge-model", base_url=server.base_url, api_key_env="JUDGE_KEY", **extra)


def expected_requests(run: Run) -> int:
    return sum(len(turn_items(e)) for e in run.episodes()) * TEST_JUDGE.runs


def test_a_judge_run_stores_every_answer_and_a_rerun_asks_nothing(fresh, key):
    with FakeOpenAIServer(answer) as server:
        first = judge_run(fresh, [TEST_JUDGE], settings(server), concurrency=3)
        served = server.stats.served
        again = judge_run(fresh, [TEST_JUDGE], settings(server), concurrency=3)
        assert server.stats.served == served  # nothing asked twice
    total = expected_requests(fresh)
    assert (first.asked, first.cached, first.failure) == (total, 0, None)
    assert (again.asked, again.cached) == (0, total)
    records, problems = load_run_judgments(fresh.path)
    assert problems == [] and len(records) == total
    turn2 = [r for r in records if r.turn == 2]
    assert turn2 and all(r.unreadable and "no question answered" in r.unreadable for r in turn2)
    assert first.unreadable == len(turn2)
    fine = next(r for r in records if r.turn == 1)
    assert fine.labels == {"Q1": "Yes", "Q2": "N/A"}
    assert fine.values == {"Q1": 1.0, "Q2": None}
    assert fine.reasons["Q1"] == "the move is right"
    files = sorted(p.name for p in (fresh.path / JUDGMENTS_DIR).iterdir())
    assert files == sorted(f"{s['episode_id']}.jsonl" for s in fresh.summaries)


def test_the_two_runs_of_an_item_get_different_seeds_and_the_same_prompt(fresh, key):
    with FakeOpenAIServer(answer) as server:
        judge_run(fresh, [TEST_JUDGE], settings(server), concurrency=1)
        bodies = server.requests
    by_prompt: dict[str, set[int]] = {}
    for body in bodies:
        by_prompt.setdefault(json.dumps(body["messages"]), set()).add(body["seed"])
    assert len(by_prompt) == expected_requests(fresh) // 2
    assert all(len(seeds) == 2 for seeds in by_prompt.values())


def test_the_key_reaches_the_endpoint_only_in_its_header(fresh, key):
    with FakeOpenAIServer(answer, faults=FaultPlan(rates={"500": 0.3}, seed=2)) as server:
        judge_run(fresh, [TEST_JUDGE], settings(server, backoff_s=0.0, max_backoff_s=0.0), concurrency=2)
        assert server.saw_authorization and all(KEY in a for a in server.saw_authorization)
        assert not any(KEY in json.dumps(body) for body in server.requests)
    for path in (fresh.path / JUDGMENTS_DIR).iterdir():
        assert KEY not in path.read_text(encoding="utf-8")


def test_a_refused_key_stops_the_run_without_recording_anything(fresh, key):
    with FakeOpenAIServer(answer, faults=FaultPlan(rates={"401": 1.0})) as server:
        outcome = judge_run(fresh, [TEST_JUDGE], settings(server), concurrency=2)
        asked = server.stats.requests
    assert outcome.failure is not None and "401" in outcome.failure
    assert KEY not in outcome.failure
    assert asked <= 4  # the requests already in flight, then nothing new
    assert load_run_judgments(fresh.path)[0] == []


def test_an_endpoint_that_dies_mid_run_keeps_what_was_answered_and_a_rerun_finishes(fresh, key):
    total = expected_requests(fresh)
    server = FakeOpenAIServer(answer).start()
    try:
        first = judge_run(
            fresh,
            [TEST_JUDGE],
            settings(server, max_retries=0),
            concurrency=1,
            progress=lambda o: server.stop() if o.asked == 5 else None,
        )
        assert first.failure is not None and first.asked == 5
        server.start()
        second = judge_run(fresh, [TEST_JUDGE], settings(server), concurrency=2)
    finally:
        server.stop()
    assert (second.cached, second.asked, second.failure) == (5, total - 5, None)
    assert len(load_run_judgments(fresh.path)[0]) == total


def test_a_missing_key_is_said_before_anything_is_asked(fresh, monkeypatch):
    monkeypatch.delenv("JUDGE_KEY", raising=False)
    with FakeOpenAIServer(answer) as server, pytest.raises(Exception, match="JUDGE_KEY is not set"):
        judge_run(fresh, [TEST_JUDGE], settings(server))


def test_retry_unreadable_asks_again_only_where_a_reply_could_not_be_read(fresh, key):
    with FakeOpenAIServer(answer) as server:
        first = judge_run(fresh, [TEST_JUDGE], settings(server))
        again = judge_run(fresh, [TEST_JUDGE], settings(server), retry_unreadable=True)
    assert again.asked == first.unreadable > 0
    assert again.cached == first.asked - first.unreadable


# ---- kill -9 ------------------------------------------------------------------------------------------------

DRIVER = """
import sys
from simlab.agents.openai_agent import AgentSettings
from simlab.core.recording import load_run
from simlab.runner.judging import judge_run
from tests.analysis.test_judging import TEST_JUDGE

run_dir, base_url = sys.argv[1:3]
settings = AgentSettings(model="judge-model", base_url=base_url, api_key_env="JUDGE_KEY")
outcome = judge_run(load_run(run_dir), [TEST_JUDGE], settings, concurrency=2)
print(outcome.asked, outcome.cached)
print(outcome.failure, outcome.problems, file=sys.stderr)
"""


def _stored(run_dir: Path) -> int:
    folder = run_dir / JUDGMENTS_DIR
    return sum(len(read_judgments(p)[0]) for p in folder.glob("*.jsonl")) if folder.is_dir() else 0


def test_a_judge_run_killed_with_sigkill_resumes_without_asking_answered_items_again(fresh, key, tmp_path):
    total = expected_requests(fresh)
    script = tmp_path / "driver.py"
    script.write_text(DRIVER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "JUDGE_KEY": KEY}
    with FakeOpenAIServer(answer, latency_ms=60) as server:
        proc = subprocess.Popen([sys.executable, str(script), str(fresh.path), server.base_url], cwd=REPO_ROOT, env=env)
        try:
            deadline = time.monotonic() + 60
            while _stored(fresh.path) < 6:
                assert proc.poll() is None, "the judge run ended before it was killed"
                assert time.monotonic() < deadline
                time.sleep(0.01)
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        kept = _stored(fresh.path)
        assert 6 <= kept < total
        victim = next((fresh.path / JUDGMENTS_DIR).glob("*.jsonl"))
        with victim.open("ab") as f:
            f.write(b'{"format": "simlab.judgment", "judge": "te')  # a line cut by the kill mid-write
        before = server.stats.served
        resumed = subprocess.run(
            [sys.executable, str(script), str(fresh.path), server.base_url],
            cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        asked_after = server.stats.served - before
    asked, cached = map(int, resumed.stdout.split())
    assert (asked, cached) == (total - kept, kept) == (asked_after, kept), resumed.stderr
    records, problems = load_run_judgments(fresh.path)
    assert problems == [] and len(records) == total
    assert len({r.key() for r in records}) == total  # every request answered exactly once


# ---- reading replies and combining runs ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "labels", "unreadable"),
    [
        ("Q1: Yes | ok\nQ2: No | vague", {"Q1": "Yes", "Q2": "No"}, None),
        ("- **Q1**: unclear — both fit\n> Q2 = n/a", {"Q1": "Unclear", "Q2": "N/A"}, None),
        ("Q1) No\nQ2 Yes because", {"Q1": "No", "Q2": "Yes"}, None),
        ("Q12: Yes\nQ1: Yesterday\nQ2: no", {"Q2": "No"}, "no answer to Q1"),
        ("", {}, "the reply is empty"),
        ("I think it is fine overall.", {}, "no question answered"),
    ],
)
def test_replies_are_read_line_by_line_and_what_is_missing_is_named(reply, labels, unreadable):
    verdict = read_verdict(TEST_JUDGE, reply)
    assert verdict.labels == labels
    assert (verdict.unreadable is None) == (unreadable is None)
    if unreadable:
        assert unreadable in verdict.unreadable


def test_a_signed_scale_reads_minus_one_apart_from_one():
    repair = Scale({"-1": -1.0, "0": 0.0, "1": 1.0})
    judge = Judge("r", "rooms", "R", "", "x", (Question("REPAIR", "repair", "?", repair),), turn_items, 2, "agree")
    assert read_verdict(judge, "REPAIR: -1 | never noticed").labels == {"REPAIR": "-1"}
    assert read_verdict(judge, "REPAIR: 1 | fixed at turn 4").labels == {"REPAIR": "1"}


def record(judge: Judge, episode: str, turn: int, run: int, labels: dict[str, str], sha: str = "a", model="m"):
    values = {c: judge.question(c).scale.labels[v] for c, v in labels.items()}
    return JudgmentRecord(judge.name, model, episode, turn, "", run, sha, labels, {}, None, "", values)


def test_mean_combination_averages_runs_then_questions_leaving_na_out():
    records = [
        record(TEST_JUDGE, "e1", 1, 0, {"Q1": "Yes", "Q2": "N/A"}),
        record(TEST_JUDGE, "e1", 1, 1, {"Q1": "No", "Q2": "Yes"}),
        record(TEST_JUDGE, "e1", 2, 0, {"Q1": "Unclear", "Q2": "No"}),
    ]
    items, dropped = item_scores(TEST_JUDGE, records)
    assert dropped == 0
    assert [(i.turn, i.values, i.overall) for i in items] == [
        (1, {"Q1": 0.5, "Q2": 1.0}, 0.75),
        (2, {"Q1": 0.5, "Q2": 0.0}, 0.25),
    ]
    (summary,) = summarize([TEST_JUDGE], records)
    assert summary.items == 2 and summary.overall.mean == pytest.approx(0.5)
    assert summary.questions["Q2"].mean == pytest.approx(0.5)
    assert episode_metrics([TEST_JUDGE], records) == {"e1": {"judge.test-judge": pytest.approx(0.5)}}


def test_agree_combination_drops_items_whose_runs_disagree_and_the_rate_counts_the_rest():
    repair = Scale({"-1": -1.0, "0": 0.0, "1": 1.0})

    def repair_rate(labels):
        counted = [x["REPAIR"] for x in labels if x.get("REPAIR") in ("1", "-1")]
        return counted.count("1") / len(counted) if counted else None

    judge = Judge(
        "rep", "rooms", "Repair", "", "x", (Question("REPAIR", "repair", "?", repair),), turn_items, 2, "agree",
        rate=repair_rate, rate_label="repair rate",
    )  # fmt: skip
    records = [record(judge, e, 5, r, {"REPAIR": lab}) for e, labs in
               (("e1", "11"), ("e2", "1-"), ("e3", "--"), ("e4", "00")) for r, lab in enumerate(
                   {"1": "1", "-": "-1", "0": "0"}[c] for c in labs)]  # fmt: skip
    (summary,) = summarize([judge], records)
    assert (summary.items, summary.disagreements) == (3, 1)
    assert summary.rate == pytest.approx(0.5)  # e1 repaired, e3 not; e4 had nothing to repair


def test_categorical_questions_are_shares_of_items_not_means():
    errors = Scale({"roleplay": None, "repetition_loop": None, "none": None})
    judge = Judge("err", "puzzles", "Errors", "", "x", (Question("ERROR", "error", "?", errors),), turn_items)
    records = [record(judge, f"e{k}", 3, 0, {"ERROR": lab}) for k, lab in enumerate(["roleplay", "none", "roleplay"])]
    (summary,) = summarize([judge], records)
    assert summary.shares == {"ERROR": {"roleplay": pytest.approx(2 / 3), "repetition_loop": 0.0, "none": 1 / 3}}
    assert summary.overall.n == 0  # nothing to average


def test_only_the_newest_prompt_of_an_item_counts_and_models_are_kept_apart():
    records = [
        record(TEST_JUDGE, "e1", 1, 0, {"Q1": "No", "Q2": "No"}, sha="old"),
        record(TEST_JUDGE, "e1", 1, 0, {"Q1": "Yes", "Q2": "Yes"}, sha="new"),
        record(TEST_JUDGE, "e1", 1, 0, {"Q1": "No", "Q2": "No"}, model="other"),
    ]
    summaries = summarize([TEST_JUDGE], records)
    assert [(s.model, s.overall.mean) for s in summaries] == [("m", 1.0), ("other", 0.0)]
    metrics = episode_metrics([TEST_JUDGE], records)
    assert metrics == {"e1": {"judge.test-judge@m": 1.0, "judge.test-judge@other": 0.0}}
    summary = {"episode_id": "e1", "metrics": {"score": 0.5}}
    assert with_judge_metrics([summary], metrics)[0]["metrics"]["judge.test-judge@m"] == 1.0
    assert summary["metrics"] == {"score": 0.5}  # the summary given is not changed


def test_the_prompt_holds_the_instructions_context_questions_and_choices():
    system, user = judge_messages(TEST_JUDGE, JudgeItem(3, "D1", "the context"))
    assert system == {"role": "system", "content": "You grade a turn of a block-building dialogue."}
    assert user["content"].startswith("the context\n\nQuestions:\nQ1: Is the turn fine? (Yes / No / Unclear)")
    assert "Q2: Is it clear? (Yes / No / Unclear / N/A)" in user["content"]
