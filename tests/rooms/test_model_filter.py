"""Cosmic's model filter through our agent, end to end: `generate rooms --filter-model` against a real local
OpenAI-compatible server, the calls recorded as runs beside the benchmark, resumable, the key never written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from simlab.core.recording import load_run
from simlab.testing.openai_server import FakeOpenAIServer
from simlab.worlds.rooms.benchmark import load_questions

ROOT = Path(__file__).resolve().parents[2]
KEY_ENV, KEY = "SIMLAB_FILTER_KEY", "sk-filter-SECRET-31"


def always_a(body: dict) -> str:
    """A model with a position bias: it answers A to every question (and cannot say yes or no)."""
    return "A"


def generate(out: Path, server: FakeOpenAIServer) -> subprocess.CompletedProcess[str]:
    args = ["generate", "rooms", "--n", "40", "--questions-per-task", "4", "--no-images", "--seed", "8"]
    args += ["--filter-model", "fake-model", "--filter-base-url", server.base_url, "--filter-key-env", KEY_ENV]
    args += ["--filter-tries", "2", "--out", str(out)]
    env = {**os.environ, KEY_ENV: KEY}
    return subprocess.run(
        [sys.executable, "main.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )


def test_questions_the_model_answers_alone_are_replaced_and_a_rerun_asks_nothing(tmp_path):
    out = tmp_path / "b"
    with FakeOpenAIServer(always_a) as server:
        done = generate(out, server)
        assert done.returncode == 0, done.stderr
        asked = len(server.requests)
        written = {p.name: p.read_text() for p in (out / "questions").iterdir()}
        for path in [*out.iterdir()]:  # as if the build had stopped after asking the model everything
            if path.name != "necessity":
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        again = generate(out, server)
        assert again.returncode == 0, again.stderr
        assert len(server.requests) == asked  # every answer was recorded: the rerun resumes and asks nothing
        assert {p.name: p.read_text() for p in (out / "questions").iterdir()} == written
        assert generate(out, server).returncode == 2  # a finished benchmark is never written over
    rounds = json.loads((out / "benchmark.json").read_text())["stats"]["model_filter"]
    assert rounds[0]["asked"] == 20 and rounds[0]["answered_alone"] > 0
    assert "model filter, round 1: asked 20" in done.stdout
    first = load_run(out / "necessity" / "round-1")
    assert first.config["settings"]["condition"] == "answerer-alone" and first.config["repeats"] == 2
    # every kept question was asked about as it stands, and the model did not get it right in both tries
    runs = [load_run(out / "necessity" / f"round-{k}") for k in range(1, len(rounds) + 1)]
    assert [len(run.summaries) for run in runs] == [2 * r["asked"] for r in rounds]  # two tries of each
    for item in load_questions(out):
        verdicts = [
            [s["outcome"] == "success" for s in run.summaries if s["task_id"] == item["id"]]
            for run in runs
            if any(t["id"] == item["id"] and t["question"] == item["question"] for t in run.config["tasks"])
        ]
        assert verdicts and not all(verdicts[-1]), item["id"]
    for path in out.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path
