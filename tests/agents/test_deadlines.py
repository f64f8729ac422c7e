"""Deadlines and untrusted numbers against the local server: a server that sends its headers and then drips
its body a byte at a time is cut at the documented bound (``timeout x (max_retries + 1) + max_wait_s``) for a
live agent, streamed or not, and for a judge; an unstreamed body is read only up to its bound; an episode's
timeout cuts the call in flight (or a retry's wait) and the run goes on; ``usage`` numbers that are not
whole counts (NaN, 1e400, a 100,000-digit integer...) are dropped and noted while the run completes.

Elapsed times are only checked against a generous upper bound (the documented bound plus ``SLACK``): the
point is that a request stops instead of hanging, not how fast it does."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from simlab.agents import openai_agent
from simlab.agents.openai_agent import AgentSettings
from simlab.cli import main
from simlab.core.errors import InfrastructureError
from simlab.core.judging import load_run_judgments
from simlab.core.recording import EPISODES_DIR, load_run
from simlab.runner.batch import RunConfig, run
from simlab.runner.judging import find_judges, judge_run
from simlab.testing.openai_server import FakeOpenAIServer, FaultPlan, scripted_replies
from simlab.testing.scripts import BLOCKS_SCRIPT
from tests.agents.live_agents import BUILDER_OBS, KEY_ENV, MODEL, blocks_agent

TIMEOUT, RETRIES, MAX_WAIT = 1, 1, 1
BOUND = TIMEOUT * (RETRIES + 1) + MAX_WAIT
"""The documented bound of one call, in seconds (docs/LIVE_MODELS.md)."""
EPISODE_S = 1
"""``--episode-timeout`` of the runs whose calls it cuts."""
SLACK = 5.0
"""Seconds allowed past a bound before a test calls it a hang: far more than a loaded 2-core machine needs."""
LIMITS = {"timeout": TIMEOUT, "max_retries": RETRIES, "max_wait_s": MAX_WAIT, "backoff_s": 0.5, "max_backoff_s": 1}
CUT = f"no complete answer within the {TIMEOUT} s timeout (connect, headers and body)"
COUNTS = "from 0 to 1,000,000,000,000"
PLACED = {"action": "place", "block": "gs", "cell": [0, 1], "layer": 0}
USAGES = {
    "NaN": "NaN",
    "Infinity": "Infinity",
    "-Infinity": "-Infinity",
    "1e400": "1e400",
    "100,000 digits": "1" + "0" * 100_000,
    "negative": "-3",
    "fractional": "12.5",
}


def dripping(drip_ms: float = 200.0) -> FakeOpenAIServer:
    """A server answering every request with its headers, then a byte every ``drip_ms``."""
    return FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT), faults=FaultPlan(rates={"drip": 1.0}, drip_ms=drip_ms))


def usage_json(count: str) -> str:
    """A usage object whose prompt count is ``count`` (JSON text), the others whole counts."""
    return f'{{"prompt_tokens": {count}, "completion_tokens": 5, "total_tokens": 17}}'


def strict_json(value: Any) -> str:
    """What a recording may hold: strict JSON (raises on NaN or infinities)."""
    return json.dumps(value, allow_nan=False)


def cli(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def run_argv(world: str, role: str, base_url: str, out: Path, episodes: int, *options: str, **agent: Any) -> list[str]:
    """``run`` with ``role`` played by ``openai:fake-model`` at ``base_url`` (text only), the rest built in."""
    settings = {"base_url": base_url, "api_key_env": KEY_ENV, "text_only": "true", **agent}
    argv = ["run", "--world", world, "--agent", f"{role}=openai:{MODEL}"]
    for name, value in settings.items():
        argv += ["--agent-setting", f"{role}.{name}={value}"]
    return [*argv, "--episodes", str(episodes), *options, "--out", str(out)]


def episodes(out: Path) -> list[dict[str, Any]]:
    """Every episode file of a run folder, read as strict JSON (no NaN or Infinity)."""
    files = sorted((out / EPISODES_DIR).glob("*.json"))
    return [json.loads(p.read_text(encoding="utf-8"), parse_constant=_no_constant) for p in files]


def _no_constant(name: str) -> None:
    raise AssertionError(f"{name} in a recording")


# ---- a request is cut at its deadline, however the bytes come ---------------------------------------------
@pytest.mark.parametrize("drip_ms", [200, 3000], ids=["a byte every 0.2 s", "a byte every 3 s"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_dripping_answer_is_cut_at_the_documented_bound(stream, drip_ms):
    with dripping(drip_ms) as server:
        agent = blocks_agent(server, stream=stream, **LIMITS)
        began = time.monotonic()
        with pytest.raises(InfrastructureError) as caught:
            agent.act(BUILDER_OBS)
        elapsed = time.monotonic() - began
    assert elapsed < BOUND + SLACK
    failure = caught.value
    assert failure.reason == f"APITimeoutError on {RETRIES + 1} attempts: {CUT}"
    (record,) = failure.records
    assert [(a["error"], a["detail"]) for a in record["attempts"]] == [("APITimeoutError", CUT)] * (RETRIES + 1)
    assert record["error"] == "APITimeoutError" and record["response"] is None
    assert record["total_s"] <= BOUND + SLACK and sum(a["waited_s"] for a in record["attempts"]) <= MAX_WAIT
    assert server.stats.requests == RETRIES + 1


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_an_answer_that_drips_within_the_deadline_is_read(stream):
    with dripping(0.2) as server:  # a few thousand bytes, each read apart: well within 30 s
        reply = blocks_agent(server, stream=stream, timeout=30).act(BUILDER_OBS)
    assert reply.action == PLACED and reply.raw[0]["attempts"] == []


def test_a_judge_against_a_dripping_server_stops_at_the_bound(judged: Path):
    with dripping() as server:
        settings = AgentSettings(model="judge-model", base_url=server.base_url, api_key_env=KEY_ENV, **LIMITS)
        began = time.monotonic()
        outcome = judge_run(load_run(judged), find_judges("blocks", ["craft-ps"]), settings, concurrency=2)
        elapsed = time.monotonic() - began
    assert elapsed < BOUND + SLACK  # the requests queued behind the failed one are not asked
    assert outcome.failure is not None and f"APITimeoutError on {RETRIES + 1} attempts: {CUT}" in outcome.failure
    assert outcome.asked == 0 and load_run_judgments(judged) == ([], [])


def test_the_judge_command_takes_the_request_limits_as_flags(judged: Path, capsys, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    with dripping() as server:
        limits = ["--timeout", TIMEOUT, "--max-retries", RETRIES, "--max-wait-s", MAX_WAIT]
        argv = ["judge", judged, "--judge", "craft-ps", "--model", "m", "--base-url", server.base_url, *limits]
        began = time.monotonic()
        code, _, err = cli(capsys, [*map(str, argv), "--api-key-env", KEY_ENV])
        elapsed = time.monotonic() - began
    assert code == 3 and f"APITimeoutError on {RETRIES + 1} attempts" in err and elapsed < BOUND + SLACK


def test_a_name_lookup_that_never_answers_is_cut_at_the_deadline(monkeypatch):
    """The system's resolver takes no timeout: a lookup that hangs is cut like a connect that does."""
    looked_up: list[str] = []
    released = threading.Event()

    def hanging(host: str, *args: Any, **kwargs: Any) -> Any:
        looked_up.append(host)
        released.wait(60)
        raise OSError("the test is over")

    monkeypatch.setattr(openai_agent.socket, "getaddrinfo", hanging)
    with dripping() as server:
        slow = server.base_url.replace("127.0.0.1", "model.invalid")
        agent = blocks_agent(server, base_url=slow, **LIMITS)
        began = time.monotonic()
        with pytest.raises(InfrastructureError) as caught:
            agent.act(BUILDER_OBS)
    released.set()
    assert time.monotonic() - began < BOUND + SLACK and looked_up[0] == "model.invalid"
    assert caught.value.reason.startswith("APITimeoutError") and server.stats.requests == 0


def test_a_server_named_by_its_host_name_is_reached():
    with FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT)) as server:
        reply = blocks_agent(server, base_url=server.base_url.replace("127.0.0.1", "localhost")).act(BUILDER_OBS)
    assert reply.action == PLACED and server.stats.served == 1


def test_an_unstreamed_body_past_its_bound_is_not_read_whole(monkeypatch):
    monkeypatch.setattr(openai_agent, "BODY_BYTES", 300)  # a completion of the fake server is about 400 bytes
    with FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT)) as server, pytest.raises(InfrastructureError) as caught:
        blocks_agent(server, max_retries=1).act(BUILDER_OBS)
    (record,) = caught.value.records
    bound = "the body passed 300 bytes: the rest was not read"
    assert [(a["error"], a["detail"]) for a in record["attempts"]] == [("MalformedResponse", bound)] * 2


# ---- an episode's timeout cuts the call in flight -----------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_an_episode_timeout_cuts_a_dripping_call_and_the_run_completes(tmp_path, capsys, stream):
    out = tmp_path / "run"
    options = ("--set", "rounds=2", "--episode-timeout", str(EPISODE_S))
    with dripping() as server:  # the request's own timeout (300 s) would never end it in time
        argv = run_argv("boards", "robot", server.base_url, out, 2, *options, stream=str(stream).lower())
        began = time.monotonic()
        code, stdout, stderr = cli(capsys, argv)
        elapsed = time.monotonic() - began
    assert code == 0 and "run complete" in stdout, stderr
    assert elapsed < 2 * EPISODE_S + SLACK
    assert len(episodes(out)) == 2
    for episode in episodes(out):
        summary = episode["summary"]
        assert summary["outcome"] == "abort" and summary["timeout"] == EPISODE_S and "infrastructure" not in summary
        cut = episode["raw"][-1]
        assert cut["role"] == "robot" and cut["error"] == "EpisodeTimeout" and cut["response"] is None
        assert cut["attempts"][-1]["detail"] == f"the episode's timeout of {EPISODE_S} s passed during the request"


def test_a_retry_never_waits_past_the_episode_timeout(tmp_path, capsys):
    out = tmp_path / "run"
    with FakeOpenAIServer(faults=FaultPlan(rates={"500": 1.0})) as server:  # 30 s waits between 5 retries
        argv = run_argv(
            "boards",
            "robot",
            server.base_url,
            out,
            1,
            "--episode-timeout",
            str(EPISODE_S),
            backoff_s=30,
            max_backoff_s=30,
        )
        began = time.monotonic()
        code, stdout, stderr = cli(capsys, argv)
        elapsed = time.monotonic() - began
    assert code == 0 and "run complete" in stdout, stderr
    assert elapsed < EPISODE_S + SLACK
    (episode,) = episodes(out)
    assert episode["summary"]["timeout"] == EPISODE_S
    (record,) = episode["raw"]
    failed, cut = record["attempts"]  # the wait ends with the episode, and the next attempt is cut at once
    assert failed["status"] == 500 and 0 < failed["waited_s"] <= EPISODE_S and cut["error"] == "EpisodeTimeout"
    assert server.stats.requests == 1


def test_a_boards_run_against_a_dripping_server_stops_at_the_bound(tmp_path, capsys):
    """The report's case: before, ``timeout=3, max_retries=1, max_wait_s=3`` was still running at 240 s."""
    out = tmp_path / "run"
    with dripping() as server:
        argv = run_argv("boards", "robot", server.base_url, out, 2, "--set", "rounds=2", **LIMITS)
        began = time.monotonic()
        code, _, stderr = cli(capsys, argv)
        elapsed = time.monotonic() - began
    assert elapsed < BOUND + SLACK
    assert code == 3 and f"failed: APITimeoutError on {RETRIES + 1} attempts: {CUT}" in stderr
    (episode,) = episodes(out)
    assert episode["summary"]["infrastructure"]["error"] == f"APITimeoutError on {RETRIES + 1} attempts: {CUT}"


# ---- usage numbers that are not whole counts ------------------------------------------------------------
@pytest.mark.parametrize("count", list(USAGES.values()), ids=list(USAGES))
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_usage_that_is_not_a_whole_count_is_dropped_and_noted(stream, count):
    with FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT), usage_json=usage_json(count)) as server:
        agent = blocks_agent(server, stream=stream, max_retries=0)
        reply = agent.act(BUILDER_OBS)
    assert reply.action == PLACED
    (record,) = reply.raw
    assert record["attempts"] == [] and record["usage"] == {"completion_tokens": 5, "total_tokens": 17}
    (note,) = [n for n in record["notes"] if "usage.prompt_tokens" in n]
    assert note.startswith("'usage.prompt_tokens' ignored: ") and len(note) < 200
    strict_json([record, agent.usage])


def test_a_run_whose_usage_holds_nan_1e400_and_huge_integers_completes_with_the_notes(tmp_path, capsys):
    counts = f'{{"prompt_tokens": NaN, "completion_tokens": 1e400, "total_tokens": {"9" * 100_000}}}'
    out = tmp_path / "run"
    with FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT), usage_json=counts) as server:
        code, stdout, stderr = cli(capsys, run_argv("blocks", "builder", server.base_url, out, 2, "--turns", "2"))
    assert code == 0 and "run complete" in stdout, stderr
    assert len(episodes(out)) == 2
    for episode in episodes(out):
        assert episode["raw"] and episode["summary"]["usage"]["total_tokens"] == 0
        for record in episode["raw"]:
            notes = " ".join(record["notes"])
            assert record["usage"] == {} and "nan is not" in notes and "inf is not" in notes
            assert "a 100,000-digit integer is not" in notes


def test_a_judge_reply_with_nan_usage_is_stored_with_the_note(judged: Path):
    reply = scripted_replies({}, default=lambda body: "PS1: Yes | fine")
    with FakeOpenAIServer(reply, usage_json=usage_json("NaN")) as server:
        settings = AgentSettings(model="judge-model", base_url=server.base_url, api_key_env=KEY_ENV)
        outcome = judge_run(load_run(judged), find_judges("blocks", ["craft-ps"]), settings, concurrency=2)
    assert outcome.failure is None and outcome.asked > 0
    records, problems = load_run_judgments(judged)
    assert len(records) == outcome.asked and not problems
    for record in records:
        assert record.call["usage"] == {"completion_tokens": 5, "total_tokens": 17}
        assert record.call["notes"] == [f"'usage.prompt_tokens' ignored: nan is not a whole count {COUNTS}"]


@pytest.fixture
def judged(tmp_path: Path) -> Path:
    """A small recorded blocks run (oracle directors, a scripted builder) to judge."""
    out = tmp_path / "judged"
    run(RunConfig("blocks", seed=3, episodes=1, agents=["builder=scripted:0.5"], settings={"turns": 2}), out)
    return out
