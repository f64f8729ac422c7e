"""A batch spread over worker processes: the same run folder byte for byte, failures and resume, options."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from simlab.cli import main
from simlab.core.episode import Episode
from simlab.core.errors import ConfigError
from simlab.core.plugins import Registry
from simlab.core.recording import EPISODES_DIR, INDEX_FILE, RUN_FILE, load_run
from simlab.runner import process_pool
from simlab.runner.batch import RunConfig, default_processes, episode_ids, run
from simlab.runner.process_pool import ProcessEpisodePool, WorkerDied, shares
from simlab.worlds import get_family
from tests.core.test_batch_concurrency import agent_plugin_registry, index_ids
from tests.core.test_resume_kill import REPO_ROOT, _env, _wait_for_lines

AGENTS = ("director=oracle", "builder=scripted:0.3")  # a builder that mishears: episodes differ from each other
N = 10

FAILING_AGENT_MODULE = "simlab_test_failing_agents"
FAILING_AGENT_SOURCE = '''
"""Test-only agent: the blocks scripted builder, which on the task named by the spec's argument either ends
its whole process (``exit:TASK``) or raises (``raise:TASK``; ``*``: on every task), unless
$SIMLAB_TEST_AGENT_CURED is set."""

import os

from simlab.worlds.blocks.agents import make_scripted


class FailingBuilder:
    def __init__(self, inner, how, task_id):
        self.inner, self.how, self.task_id = inner, how, task_id

    def reset(self, seed, role, task):
        if self.task_id in ("*", task.get("id")) and not os.environ.get("SIMLAB_TEST_AGENT_CURED"):
            if self.how == "exit":
                os._exit(7)
            raise ValueError(f"builder refused {self.task_id}")
        self.inner.reset(seed, role, task)

    def act(self, observation):
        return self.inner.act(observation)


def make(role, arg, settings):
    how, task_id = arg.split(":", 1)
    return FailingBuilder(make_scripted(role, None, settings), how, task_id)
'''


def failing_registry(folder: Path) -> Registry:
    """A registry whose only plugin provides ``failingbuilder`` (module written into ``folder``)."""
    return agent_plugin_registry(folder, "failtest", "failingbuilder", FAILING_AGENT_MODULE, FAILING_AGENT_SOURCE)


def _config(**kw: object) -> RunConfig:
    return RunConfig("blocks", **{"seed": 5, "episodes": N, "agents": AGENTS, "settings": {"turns": 6}, **kw})


def folder_bytes(run_dir: Path) -> dict[str, bytes]:
    """Every file of a run folder, the index's lines sorted (they are written in the order episodes finish)."""
    files = {f"{EPISODES_DIR}/{p.name}": p.read_bytes() for p in sorted((run_dir / EPISODES_DIR).iterdir())}
    files[RUN_FILE] = (run_dir / RUN_FILE).read_bytes()
    files[INDEX_FILE] = b"".join(sorted((run_dir / INDEX_FILE).read_bytes().splitlines(keepends=True)))
    return files


@pytest.fixture(scope="module")
def threads_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("batch") / "threads"
    run(_config(), out, registry=Registry(), concurrency=4, processes=1)
    return out


@pytest.mark.parametrize("processes", [2, 3])
def test_worker_processes_write_the_same_run_folder_byte_for_byte(threads_run, tmp_path, processes):
    out = tmp_path / f"processes-{processes}"
    written: list[tuple[int, str]] = []
    run(
        _config(),
        out,
        registry=Registry(),
        concurrency=4,
        processes=processes,
        progress=lambda k, n, e: written.append((k, e.episode_id)),
    )
    assert folder_bytes(out) == folder_bytes(threads_run)
    assert len(folder_bytes(out)) == N + 2
    assert [k for k, _ in written] == list(range(1, N + 1))  # progress once per episode, as they are indexed
    assert sorted(i for _, i in written) == sorted(i for i, _, _ in episode_ids(load_run(out).config))


def test_a_process_that_cannot_fork_starts_workers_from_a_fork_server_and_writes_the_same_folder(tmp_path, monkeypatch):
    """A process that has rendered (the app) may not fork: its workers come from a fork server, their arguments
    pickled, and load the plugins themselves."""
    config, registry = _config(agents=("builder=failingbuilder:raise:no_such_task",)), failing_registry(tmp_path)
    run(config, tmp_path / "threads", registry=registry, concurrency=4, processes=1)
    monkeypatch.setattr(process_pool, "start_method", lambda: multiprocessing.get_context("spawn"))
    run(config, tmp_path / "served", registry=registry, concurrency=4, processes=2)
    assert folder_bytes(tmp_path / "served") == folder_bytes(tmp_path / "threads")
    assert process_pool._context().get_start_method() == "forkserver"
    # the fork server outlives the batch; the next batch's workers see the environment as it is now
    monkeypatch.setenv("SIMLAB_TEST_AGENT_CURED", "")
    config = _config(agents=("builder=failingbuilder:raise:structure_001",))
    with pytest.raises(ValueError, match="builder refused structure_001"):
        run(config, tmp_path / "refused", registry=registry, concurrency=4, processes=2)
    monkeypatch.setenv("SIMLAB_TEST_AGENT_CURED", "1")
    run(config, tmp_path / "cured", registry=registry, concurrency=4, processes=2)
    assert len(load_run(tmp_path / "cured").summaries) == N


def test_a_killed_worker_loses_no_finished_episode_and_resume_plays_the_rest(threads_run, tmp_path, monkeypatch):
    monkeypatch.delenv("SIMLAB_TEST_AGENT_CURED", raising=False)
    registry, out = failing_registry(tmp_path / "plugin"), tmp_path / "killed"
    config = _config(agents=("director=oracle", "builder=failingbuilder:exit:structure_006"))
    written: list[str] = []
    with pytest.raises(WorkerDied, match="exit code 7"):
        run(
            config,
            out,
            registry=registry,
            concurrency=4,
            processes=2,
            progress=lambda k, n, e: written.append(e.episode_id),
        )
    indexed = load_run(out)
    assert indexed.problems == []
    assert sorted(s["episode_id"] for s in indexed.summaries) == sorted(written)
    assert "structure_006-r0" not in written
    for summary in indexed.summaries:  # every episode the index lists is whole, as the thread pool wrote it
        assert indexed.load_episode(summary["episode_id"]).summary["outcome"] == summary["outcome"]
    monkeypatch.setenv("SIMLAB_TEST_AGENT_CURED", "1")
    resumed: list[str] = []
    run(
        None,
        out,
        resume=True,
        registry=registry,
        concurrency=4,
        processes=2,
        progress=lambda k, n, e: resumed.append(e.episode_id),
    )
    assert sorted(written + resumed) == sorted(i for i, _, _ in episode_ids(load_run(out).config))


def test_when_every_worker_dies_the_run_ends_with_nothing_written_and_resume_plays_it_all(tmp_path, monkeypatch):
    monkeypatch.delenv("SIMLAB_TEST_AGENT_CURED", raising=False)
    registry, out = failing_registry(tmp_path / "plugin"), tmp_path / "all-dead"
    config = _config(agents=("director=oracle", "builder=failingbuilder:exit:*"))
    with pytest.raises(WorkerDied, match="exit code 7"):
        run(config, out, registry=registry, concurrency=2, processes=2)
    assert load_run(out).summaries == [] and list((out / EPISODES_DIR).iterdir()) == []
    monkeypatch.setenv("SIMLAB_TEST_AGENT_CURED", "1")
    run(None, out, resume=True, registry=registry, concurrency=2, processes=2)
    assert len(load_run(out).summaries) == N


def test_an_episode_that_raises_in_a_worker_is_raised_here_after_the_others_are_written(tmp_path, monkeypatch):
    monkeypatch.delenv("SIMLAB_TEST_AGENT_CURED", raising=False)
    config = _config(agents=("director=oracle", "builder=failingbuilder:raise:structure_002"))
    out = tmp_path / "raised"
    with pytest.raises(ValueError, match="builder refused structure_002"):
        run(config, out, registry=failing_registry(tmp_path / "plugin"), concurrency=4, processes=2)
    ids = [s["episode_id"] for s in load_run(out).summaries]
    assert ids and "structure_002-r0" not in ids
    assert sorted(p.stem for p in (out / EPISODES_DIR).iterdir()) == sorted(ids)


def test_a_stop_event_ends_a_process_batch_early_and_resume_plays_exactly_the_rest(threads_run, tmp_path):
    out, stop = tmp_path / "stopped", threading.Event()

    def stop_after_two(k: int, n: int, episode: Episode) -> None:
        if k == 2:
            stop.set()

    run(_config(), out, registry=Registry(), concurrency=2, processes=2, progress=stop_after_two, stop=stop)
    first = [s["episode_id"] for s in load_run(out).summaries]
    assert 2 <= len(first) < N
    run(None, out, resume=True, concurrency=4, processes=2)
    assert folder_bytes(out) == folder_bytes(threads_run) | {RUN_FILE: folder_bytes(out)[RUN_FILE]}
    runtime = json.loads((out / RUN_FILE).read_text(encoding="utf-8"))["runtime"]
    assert runtime == {"concurrency": 4, "episode_timeout": None}  # the processes are the machine's, not recorded


@pytest.mark.parametrize(("processes", "executor"), [(0, "local"), (65, "local"), (True, "local"), (2, "ray")])
def test_bad_process_counts_are_config_errors_before_anything_is_written(tmp_path, processes, executor):
    with pytest.raises(ConfigError, match="--processes"):
        run(_config(), tmp_path / "run", concurrency=4, processes=processes, executor=executor)
    assert not (tmp_path / "run").exists()


def test_threads_are_shared_evenly_and_the_default_keeps_small_batches_in_one_process():
    assert shares(64, 2) == [32, 32]
    assert shares(10, 3) == [4, 3, 3]
    assert shares(2, 4) == [1, 1]  # never a worker without a thread
    assert default_processes(1) == default_processes(8) == 1
    assert 1 <= default_processes(256) <= 64


def test_cli_run_takes_processes(tmp_path, capsys):
    out = tmp_path / "cli"
    args = ["run", "--episodes", "4", "--turns", "2", "--concurrency", "4", "--processes", "2", "--out", str(out)]
    assert main(args) == 0
    assert "run complete: 4 episodes" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:
        main(["run", "--episodes", "4", "--processes", "0", "--out", str(tmp_path / "bad")])
    assert refused.value.code == 2
    assert "--processes: expected at least 1 (1 to 64)" in capsys.readouterr().err


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_to_the_process_group_lets_the_workers_finish_their_episodes(tmp_path):
    """A terminal's Ctrl-C reaches the workers too: they finish what they play, the run stops with 130."""
    out = tmp_path / "stopped"
    command = [sys.executable, "main.py", "run", "--world", "blocks", "--agent", "builder=scripted", "--episodes"]
    command += ["60", "--turns", "20", "--concurrency", "4", "--processes", "2", "--out", str(out)]
    proc = subprocess.Popen(command, cwd=REPO_ROOT, env=_env(), start_new_session=True, stdout=subprocess.PIPE)
    try:
        _wait_for_lines(proc, out, 2)
        os.killpg(proc.pid, signal.SIGINT)
        stdout, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    done = len(load_run(out).summaries)
    assert proc.returncode == 130
    assert f"stopped: {done} of 60 episodes done" in stdout.decode()
    assert load_run(out).problems == [] and done < 60
    assert sorted(p.stem for p in (out / EPISODES_DIR).iterdir()) == sorted(index_ids(out))  # none lost
    resumed = subprocess.run([*command[:2], "run", "--resume", "--out", str(out)], cwd=REPO_ROOT, env=_env())
    assert resumed.returncode == 0
    assert sorted(index_ids(out)) == sorted(i for i, _, _ in episode_ids(load_run(out).config))


def test_a_worker_ignores_ctrl_c_and_plays_on(tmp_path):
    """Without the command line's handler (a script calling ``run``), Ctrl-C would end a worker mid-episode."""
    config = _config().to_json(get_family("blocks"))
    (tmp_path / EPISODES_DIR).mkdir()
    plan = episode_ids(config)
    pool = ProcessEpisodePool(config, Registry(), None, 2, 2, tmp_path, lambda: False)
    try:
        assert [f.result(60).episode_id for f in [pool.submit(item) for item in plan[:2]]] == [
            i for i, _, _ in plan[:2]
        ]
        for worker in pool.workers:  # both are up: each played one
            os.kill(worker.process.pid, signal.SIGINT)
        later = [pool.submit(item) for item in plan[2:4]]
        assert [f.result(60).episode_id for f in later] == [i for i, _, _ in plan[2:4]]
        assert all(worker.process.is_alive() for worker in pool.workers)
    finally:
        pool.shutdown()
    assert [worker.process.exitcode for worker in pool.workers] == [0] * len(pool.workers)
