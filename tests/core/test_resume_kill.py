"""Crash safety end to end: a run killed with SIGKILL mid-way, or stopped with Ctrl-C, resumes to exactly the
episodes of an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simlab.core.recording import EPISODES_DIR, INDEX_FILE, load_episode, load_run
from simlab.runner.batch import RunConfig, run
from simlab.testing.openai_server import FakeOpenAIServer
from tests.core.test_batch_concurrency import episodes_by_id, index_ids, slow_registry

REPO_ROOT = Path(__file__).resolve().parents[2]
EPISODES = 40
MODEL_CALL_S = 40.0  # a slow model's call, as long as the one that held a second Ctrl-C for 37 s

DRIVER = """
import sys
from pathlib import Path

from simlab.runner.batch import run
from tests.core.test_batch_concurrency import slow_registry
from tests.core.test_resume_kill import slow_config

out, plugin_dir, mode = sys.argv[1:4]
config = None if mode == "resume" else slow_config()
run(config, out, resume=mode == "resume", registry=slow_registry(Path(plugin_dir)), concurrency=4)
"""


def slow_config() -> RunConfig:
    """What the driver plays: 40 blocks episodes of 20 turns with the (test-only) slowed scripted builder."""
    return RunConfig("blocks", seed=0, episodes=EPISODES, agents=["builder=slowbuilder"], settings={"turns": 20})


def _index_lines(run_dir: Path) -> int:
    index = run_dir / INDEX_FILE
    return len(index.read_text(encoding="utf-8").splitlines()) if index.exists() else 0


def _wait_for_lines(proc: subprocess.Popen, run_dir: Path, lines: int, limit: float = 60.0) -> None:
    """Poll until the index has ``lines`` lines; fail if the process ends or time runs out first."""
    deadline = time.monotonic() + limit
    while _index_lines(run_dir) < lines:
        assert proc.poll() is None, f"the run ended before its index reached {lines} lines"
        assert time.monotonic() < deadline, "the run is too slow"
        time.sleep(0.01)


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO_ROOT), **extra}


def _driver(tmp_path: Path, out: Path, mode: str, **env: str) -> subprocess.Popen:
    script = tmp_path / "driver.py"
    script.write_text(DRIVER, encoding="utf-8")
    command = [sys.executable, str(script), str(out), str(tmp_path / "plugin"), mode]
    return subprocess.Popen(command, cwd=REPO_ROOT, env=_env(**env))


def test_a_run_killed_with_sigkill_resumes_to_the_same_episodes_as_a_clean_run(tmp_path, monkeypatch):
    out = tmp_path / "killed"
    proc = _driver(tmp_path, out, "new", SIMLAB_TEST_AGENT_DELAY="0.04")
    try:
        _wait_for_lines(proc, out, 10)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert _index_lines(out) < EPISODES
    (out / EPISODES_DIR / ".structure_039-r0.json.0abc1234.tmp").write_text('{"format": "simlab.ep')  # cut mid-write

    resumed = _driver(tmp_path, out, "resume")
    assert resumed.wait(timeout=120) == 0

    ids = index_ids(out)
    assert len(ids) == EPISODES
    assert len(set(ids)) == EPISODES
    assert load_run(out).problems == []
    assert not list((out / EPISODES_DIR).glob("*.tmp")) and not list((out / EPISODES_DIR).glob(".*.tmp"))
    for path in (out / EPISODES_DIR).iterdir():
        load_episode(path)
    monkeypatch.delenv("SIMLAB_TEST_AGENT_DELAY", raising=False)
    clean = tmp_path / "clean"
    run(slow_config(), clean, registry=slow_registry(tmp_path / "plugin"), concurrency=1)
    assert episodes_by_id(out) == episodes_by_id(clean)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_in_the_cli_finishes_the_episodes_in_flight_and_exits_130(tmp_path):
    out = tmp_path / "stopped"
    command = [sys.executable, "main.py", "run", "--world", "blocks", "--agent", "builder=scripted"]
    command += ["--episodes", "60", "--turns", "20", "--concurrency", "2", "--out", str(out)]
    proc = subprocess.Popen(command, cwd=REPO_ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for_lines(proc, out, 2)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr.decode()
    done = _index_lines(out)
    assert done < 60
    assert f"stopped: {done} of 60 episodes done; resume with --resume" in stdout.decode()
    assert load_run(out).problems == []
    assert len(set(index_ids(out))) == done

    command = [sys.executable, "main.py", "run", "--resume", "--out", str(out)]
    resumed = subprocess.run(command, cwd=REPO_ROOT, env=_env(), capture_output=True)
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert "run complete: 60 episodes" in resumed.stdout.decode()
    assert sorted(index_ids(out)) == sorted(set(index_ids(out)))
    assert len(index_ids(out)) == 60
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["runtime"]["concurrency"] == 2


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_second_ctrl_c_ends_the_process_without_waiting_for_the_model_call_in_flight(tmp_path):
    out = tmp_path / "dropped"
    command = [sys.executable, "main.py", "run", "--world", "blocks", "--episodes", "3", "--turns", "3"]
    command += ["--agent", "builder=openai:fake-model", "--out", str(out)]
    with FakeOpenAIServer(latency_ms=MODEL_CALL_S * 1000) as server:  # every call answers long after the test
        for key, value in (("base_url", server.base_url), ("api_key_env", "SIMLAB_KILL_KEY"), ("text_only", "true")):
            command += ["--agent-setting", f"builder.{key}={value}"]
        env, port = _env(SIMLAB_KILL_KEY="sk-kill"), server.port
        proc = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 60
            while server.stats.in_flight == 0:  # the builder's first call is waiting for its answer
                assert proc.poll() is None and time.monotonic() < deadline, "the run never called the model"
                time.sleep(0.05)
            proc.send_signal(signal.SIGINT)  # the first: finish the episode in flight (its call waits)
            time.sleep(0.5)
            proc.send_signal(signal.SIGINT)  # the second: drop it, now
            _, stderr = proc.communicate(timeout=MODEL_CALL_S / 4)  # never waits for the call to be answered
        finally:
            proc.kill()
        assert server.stats.in_flight == 1  # the call was still unanswered when the process had ended
    assert proc.returncode == 130, stderr.decode()
    assert "interrupted; finished episodes are saved" in stderr.decode()
    assert _index_lines(out) == 0 and (out / "run.json").exists()
    with FakeOpenAIServer(lambda body: "CLARIFY: which block?", port=port):  # the endpoint back, quick now
        resume = [sys.executable, "main.py", "run", "--resume", "--out", str(out)]
        resumed = subprocess.run(resume, cwd=REPO_ROOT, env=env, capture_output=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert sorted(index_ids(out)) == ["structure_000-r0", "structure_001-r0", "structure_002-r0"]
