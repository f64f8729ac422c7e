"""Batch runs against a model endpoint one does not control, through ``python main.py run`` in-process, the real
``openai`` client and the local server: refused keys, an endpoint killed or hung mid-run, and bodies of any
shape. An endpoint failure is never recorded as the model's behaviour: the run stops with exit 3 and one
scrubbed line, and ``--resume`` plays exactly the episodes not done once the endpoint is back."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simlab.cli import main
from simlab.core.recording import EPISODES_DIR, INDEX_FILE, load_run
from simlab.runner.batch import episode_ids
from simlab.testing.openai_server import FakeOpenAIServer, FaultPlan, scripted_replies
from simlab.testing.scripts import BLOCKS_SCRIPT

KEY_ENV = "SIMLAB_ENDPOINT_RUN_KEY"
KEY = "endpoint-run-key-4b7f20c9e1"  # no sk- look: only the key in use being known can redact its echo
MODEL = "fake-model"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT, default=None)) as fake:
        yield fake


def run_args(base_url: str, out: Path, episodes: int, concurrency: int = 1, **agent: Any) -> list[str]:
    """``run``: oracle directors and an ``openai:fake-model`` builder at ``base_url`` (text only, tiny backoff)."""
    settings = {"base_url": base_url, "api_key_env": KEY_ENV, "text_only": "true", "backoff_s": "0.001", **agent}
    args = ["run", "--agent", f"builder=openai:{MODEL}", "--episodes", str(episodes), "--turns", "2"]
    for name, value in settings.items():
        args += ["--agent-setting", f"builder.{name}={value}"]
    return [*args, "--concurrency", str(concurrency), "--out", str(out)]


def cli(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def indexed(out: Path) -> list[str]:
    """The episode ids of the index, in order (duplicates kept)."""
    if not (out / INDEX_FILE).exists():
        return []
    return [json.loads(line)["episode_id"] for line in (out / INDEX_FILE).read_text(encoding="utf-8").splitlines()]


def episode_files(out: Path) -> dict[str, dict[str, Any]]:
    """Every episode file of the run folder (indexed or not), read as strict UTF-8 JSON."""
    return {p.stem: json.loads(p.read_bytes().decode("utf-8")) for p in (out / EPISODES_DIR).glob("*.json")}


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error:")]


# ---- refused ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("refusal", ["401", "403", "404", "wrong path"])
def test_a_refusal_exits_3_with_one_scrubbed_line_and_the_key_nowhere(server, tmp_path, capsys, caplog, refusal):
    caplog.set_level(logging.DEBUG)
    server.faults = FaultPlan(rates={} if refusal == "wrong path" else {refusal: 1.0}, echo_auth=True)
    base_url = server.base_url + ("/nowhere" if refusal == "wrong path" else "")
    out = tmp_path / "run"
    code, stdout, stderr = cli(capsys, run_args(base_url, out, episodes=3, max_retries=3))

    assert code == 3
    status = "404" if refusal == "wrong path" else refusal
    (line,) = error_lines(stderr)
    assert line.startswith(f"error: the model endpoint at {base_url} failed: HTTP {status} ")
    assert line.endswith("; 0 of 3 episodes done; resume with --resume")
    assert "[redacted]" in line and "Traceback" not in stderr
    assert server.stats.requests == (0 if refusal == "wrong path" else 1)  # refused: not retried, no new episode
    assert server.saw_authorization == [f"Bearer {KEY}"] * server.stats.requests

    assert KEY not in stdout and KEY not in stderr and KEY not in caplog.text
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files and [p.name for p in files if KEY.encode() in p.read_bytes()] == []
    assert indexed(out) == []
    (kept,) = episode_files(out).values()  # the failed episode's file is kept for inspection
    assert kept["summary"]["outcome"] == "abort"
    assert kept["summary"]["infrastructure"]["role"] == "builder"
    assert kept["summary"]["infrastructure"]["status"] == int(status)

    code, _, stderr = cli(capsys, ["run", "--resume", "--out", str(out)])  # still refused: again one line
    assert code == 3 and len(error_lines(stderr)) == 1 and KEY not in stderr


# ---- killed -------------------------------------------------------------------------------------------------
def stop_when_indexed(server: FakeOpenAIServer, out: Path, count: int, done: threading.Event) -> threading.Thread:
    """A thread that kills ``server`` once the index of ``out`` holds ``count`` lines."""

    def watch() -> None:
        while not done.is_set():
            if len(indexed(out)) >= count:
                server.stop()
                return
            time.sleep(0.005)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_an_endpoint_killed_mid_run_stops_it_and_resume_finishes_every_episode_once(server, tmp_path, capsys):
    out, total, concurrency, base_url = tmp_path / "run", 24, 2, server.base_url
    finished = threading.Event()
    watcher = stop_when_indexed(server, out, 8, finished)
    code, _, stderr = cli(capsys, run_args(base_url, out, episodes=total, concurrency=concurrency))
    finished.set()
    watcher.join()

    assert code == 3
    first = indexed(out)
    assert 8 <= len(first) < total and len(set(first)) == len(first)
    (line,) = error_lines(stderr)
    assert line.startswith(f"error: the model endpoint at {base_url} failed: APIConnectionError on 6 attempts")
    assert line.endswith(f"; {len(first)} of {total} episodes done; resume with --resume")
    files = episode_files(out)
    failed = {i: f for i, f in files.items() if i not in first}
    assert failed and len(failed) <= 2 * concurrency  # the episodes in flight; none started after the failure
    assert len(files) < total
    for episode in failed.values():
        assert episode["summary"]["infrastructure"]["error"].startswith("APIConnectionError")
        assert episode["events"]  # the events up to the failure are kept
    for episode_id in first:  # what was indexed is the model's own play, every call answered
        summary = files[episode_id]["summary"]
        assert "infrastructure" not in summary and all(r["error"] is None for r in files[episode_id]["raw"])

    server.start()  # the endpoint is back, on the same port
    assert server.base_url == base_url
    played_before = server.stats.requests
    code, stdout, _ = cli(capsys, ["run", "--resume", "--out", str(out)])
    assert code == 0 and f"run complete: {total} episodes" in stdout
    ids = indexed(out)
    assert ids[: len(first)] == first and Counter(ids) == Counter(i for i, _, _ in episode_ids(load_run(out).config))
    assert len(ids) == total and set(episode_files(out)) == set(ids)
    assert all("infrastructure" not in s for s in load_run(out).summaries)
    assert server.stats.requests > played_before


# ---- hung ---------------------------------------------------------------------------------------------------
def test_an_endpoint_that_stops_answering_stops_the_run_after_the_timeouts(server, tmp_path, capsys):
    server.stop_answering()
    out = tmp_path / "run"
    args = run_args(server.base_url, out, episodes=4, timeout="0.3", max_retries="2")
    code, stdout, stderr = cli(capsys, args)

    assert code == 3 and "run complete" not in stdout
    (line,) = error_lines(stderr)
    assert "failed: APITimeoutError on 3 attempts: no complete answer within the 0.3 s timeout" in line
    assert "(connect, headers and body); 0 of 4 episodes done" in line
    assert server.stats.requests == 3 == server.stats.faulted["silent"]  # one act's attempts, then nothing more
    assert indexed(out) == []
    (kept,) = episode_files(out).values()
    (record,) = kept["raw"]
    assert [a["error"] for a in record["attempts"]] == ["APITimeoutError"] * 3
    assert kept["summary"]["usage"]["total_tokens"] == 0

    server.answer_again()
    code, stdout, _ = cli(capsys, ["run", "--resume", "--out", str(out)])
    assert code == 0 and "run complete: 4 episodes" in stdout
    assert sorted(indexed(out)) == sorted(set(indexed(out))) and len(indexed(out)) == 4


# ---- any body -----------------------------------------------------------------------------------------------
def completion(content: str, usage: str = '{"prompt_tokens": 3, "completion_tokens": 1}') -> bytes:
    return (
        '{"id": "c", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", '
        f'"content": {content}}}, "finish_reason": "stop"}}], "usage": {usage}}}'
    ).encode()


BAD_ANSWERS = {
    "a lone surrogate": completion('"CLARIFY:which one? \\ud800"'),
    "not UTF-8": completion('"CLARIFY:which one? @@"').replace(b"@@", b"\xff\xfe"),
    "usage of many": completion('"CLARIFY:which one?"', usage='"many"'),
    "usage of 1e400": completion('"CLARIFY:which one?"', usage='{"prompt_tokens": 1e400}'),
    "a JSON list": b"[1, 2]",
    "choices of x": b'{"choices": "x"}',
}


@pytest.mark.parametrize("name", list(BAD_ANSWERS))
def test_one_bad_answer_never_stops_a_batch(server, tmp_path, capsys, name):
    server.faults = FaultPlan(schedule={2: "raw_body"}, raw_body=BAD_ANSWERS[name])
    out = tmp_path / "run"
    code, stdout, stderr = cli(capsys, run_args(server.base_url, out, episodes=3))
    assert code == 0, stderr
    assert "run complete: 3 episodes" in stdout and "Traceback" not in stderr
    assert len(indexed(out)) == 3 and server.stats.faulted == {"raw_body": 1}
    records = [r for episode in episode_files(out).values() for r in episode["raw"]]
    touched = [r for r in records if r["notes"] or r["attempts"]]
    assert len(touched) == 1  # the one bad answer: read with a note, or a malformed attempt then retried
    assert all(r["error"] is None for r in records)
    summaries = load_run(out).summaries
    assert all(s["usage"]["total_tokens"] < 1e6 for s in summaries)
    code, stdout, _ = cli(capsys, ["report", str(out), "--format", "json"])
    assert code == 0 and json.loads(stdout)["aggregate"]["n"] == 3
