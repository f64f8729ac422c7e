"""Whole batch runs of openai-plugin agents through the real ``openai`` client against the fake server: a
50-episode run with 30% of the calls failing in assorted ways completes with every fault accounted for, and
the API key reaches the server but never a file of the run folder or a log line."""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simlab.core.plugins import discover
from simlab.core.recording import INDEX_FILE
from simlab.runner.batch import RunConfig, run
from simlab.testing.openai_server import FakeOpenAIServer, FaultPlan, scripted_replies
from simlab.testing.scripts import BLOCKS_SCRIPT as SCRIPT

KEY_ENV, KEY = "SIMLAB_LIVE_RUN_KEY", "sk-live-run-SECRET-9f3a"
MODEL = "fake-model"
FAULTS = ("429", "500", "503", "drop", "timeout", "malformed", "empty")
CLIENT_TIMEOUT_S = 1.0
MAX_RETRIES = 10  # a request failing on every attempt stops the run (InfrastructureError): with 30% faults and
# ~300 requests a run, 6 attempts would fail all of them in about one run of five; 11 attempts, one in 2,000
OUTCOMES = {"success", "failure", "abort"}
RETRIED_ERRORS = {"RateLimitError", "InternalServerError", "APIConnectionError", "APITimeoutError", "JSONDecodeError"}


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


@pytest.fixture
def faulty_server() -> Iterator[FakeOpenAIServer]:
    """30% of the calls fail, spread over every error kind; a "timeout" hangs just past the client timeout."""
    plan = FaultPlan.uniform(0.3, kinds=FAULTS, seed=11, retry_after_s=0, hang_s=CLIENT_TIMEOUT_S + 0.1)
    with FakeOpenAIServer(scripted_replies(SCRIPT, default=None), faults=plan) as server:
        yield server


def blocks_run(
    server: FakeOpenAIServer, out: Path, episodes: int, concurrency: int, processes: int | None = None
) -> None:
    """A blocks run (two turns, text only) with every role played by ``openai:fake-model``."""
    settings = {
        "base_url": server.base_url,
        "api_key_env": KEY_ENV,
        "timeout": CLIENT_TIMEOUT_S,
        "max_retries": MAX_RETRIES,
        "backoff_s": 0.001,
        "max_backoff_s": 0.01,
        "text_only": True,
    }
    config = RunConfig(
        "blocks",
        seed=0,
        episodes=episodes,
        agents=[f"director=openai:{MODEL}", f"builder=openai:{MODEL}"],
        settings={"turns": 2},
        agent_settings={"director": settings, "builder": settings},
    )
    run(config, out, registry=discover(), concurrency=concurrency, processes=processes)


def read_run(out: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The index lines and the episode files of a run folder."""
    index = [json.loads(line) for line in (out / INDEX_FILE).read_text(encoding="utf-8").splitlines()]
    episodes = [json.loads((out / entry["file"]).read_text(encoding="utf-8")) for entry in index]
    return index, episodes


def attempt_errors(records: list[dict[str, Any]]) -> Counter[str]:
    """How many failed attempts of each error type the raw records hold."""
    return Counter(a["error"] for r in records for a in r["attempts"])


def check_record(record: dict[str, Any], following: dict[str, Any] | None) -> None:
    """A request of a finished episode succeeded (possibly after retries: one failing past them would have
    ended its episode as an infrastructure failure, never indexed); an unreadable answer to a first call was
    re-asked once by a second call of the same role and turn."""
    assert record["error"] is None and record["response"] is not None
    assert len(record["attempts"]) <= MAX_RETRIES
    if record["parse_error"] and record["call"] == 1:
        assert following is not None
        assert (following["role"], following["turn"], following["call"]) == (record["role"], record["turn"], 2)


def test_a_50_episode_run_survives_30_percent_failures(faulty_server, tmp_path):
    blocks_run(faulty_server, tmp_path, episodes=50, concurrency=8)
    index, episodes = read_run(tmp_path)
    stats = faulty_server.stats

    assert len(index) == 50 and len({e["episode_id"] for e in index}) == 50
    assert {e["summary"]["outcome"] for e in episodes} <= OUTCOMES
    assert stats.max_in_flight > 1  # (a "timeout" may still hang at the server: it outlives the client)
    records = [r for e in episodes for r in e["raw"]]
    for k, record in enumerate(records):
        check_record(record, records[k + 1] if k + 1 < len(records) else None)

    # every request the server saw is one recorded attempt: a failure, or the answer that ended the retries
    errors = attempt_errors(records)
    answered = sum(r["response"] is not None for r in records)
    assert sum(errors.values()) + answered == stats.requests
    assert set(errors) <= RETRIED_ERRORS
    faulted = Counter(stats.faulted)
    assert set(faulted) == set(FAULTS)  # every kind was injected at least once
    assert errors["RateLimitError"] == faulted["429"]
    assert errors["InternalServerError"] == faulted["500"] + faulted["503"]
    assert errors["JSONDecodeError"] == faulted["malformed"]
    assert errors["APIConnectionError"] + errors["APITimeoutError"] >= faulted["drop"] + faulted["timeout"]
    assert errors["APITimeoutError"] >= faulted["timeout"]
    # an empty answer is no transport error: the protocol re-asks
    empty = [r for r in records if r["response"] is not None and r["response"]["content"] == ""]
    assert len(empty) == faulted["empty"] and all(r["parse_error"] for r in empty)


def test_worker_processes_send_the_key_to_the_server_and_write_it_nowhere(faulty_server, tmp_path, capfd):
    blocks_run(faulty_server, tmp_path, episodes=6, concurrency=4, processes=2)
    assert faulty_server.saw_authorization and set(faulty_server.saw_authorization) == {f"Bearer {KEY}"}
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert sum(p.parent.name == "episodes" for p in files) == 6
    assert [p.name for p in files if KEY.encode() in p.read_bytes()] == []
    out, err = capfd.readouterr()  # the workers' output too (their file descriptors are this process's)
    assert KEY not in out and KEY not in err


def test_the_key_reaches_the_server_and_nothing_else(faulty_server, tmp_path, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    blocks_run(faulty_server, tmp_path, episodes=6, concurrency=3)
    captured = capsys.readouterr()

    assert faulty_server.saw_authorization and set(faulty_server.saw_authorization) == {f"Bearer {KEY}"}
    files = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    names = {p.relative_to(tmp_path).as_posix() for p in files}
    assert {"run.json", INDEX_FILE} <= names and sum(n.startswith("episodes/") for n in names) == 6
    leaks = [p.name for p in files if KEY.encode() in p.read_bytes()]
    assert leaks == []
    assert any("retry" in r.getMessage() for r in caplog.records)  # the retries were logged, and so was
    assert any(r.name.startswith("openai") and r.levelno == logging.DEBUG for r in caplog.records)  # the client
    assert caplog.records and KEY not in caplog.text  # and no log line holds the key
    assert all(KEY not in r.getMessage() and KEY not in str(r.args) for r in caplog.records)
    assert KEY not in captured.out and KEY not in captured.err
