"""The Ray executor: same episodes as the local thread pool, resume across executors, bounded tasks in flight.

One local Ray instance (2 CPUs) serves the whole module; skipped when ray is not installed.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from simlab.cli import main  # noqa: E402
from simlab.core.errors import ConfigError  # noqa: E402
from simlab.core.plugins import Plugin, Registry  # noqa: E402
from simlab.core.recording import EPISODES_DIR, INDEX_FILE, RUN_FILE, load_run  # noqa: E402
from simlab.runner.batch import RunConfig, run  # noqa: E402

AGENTS = ("director=oracle", "builder=scripted")
PLUGIN_MODULE = "simlab_test_ray_agents"
PLUGIN_SOURCE = '''
"""Test-only agents for the Ray executor tests (imported inside Ray workers from the plugin's folder)."""

import os
import time

from simlab.worlds.blocks.agents import make_scripted


class LoggedBuilder:
    """The scripted builder, appending "task-id time" to $LOG (arg) at reset and at every move."""

    def __init__(self, inner, log):
        self.inner, self.log, self.task_id = inner, log, None

    def note(self):
        with open(self.log, "a", encoding="utf-8") as f:
            f.write(f"{self.task_id} {time.time()}\\n")

    def reset(self, seed, role, task):
        self.task_id = task["id"]
        self.note()
        self.inner.reset(seed, role, task)

    def act(self, observation):
        time.sleep(0.02)
        self.note()
        return self.inner.act(observation)


class Failing:
    def reset(self, seed, role, task):
        pass

    def act(self, observation):
        raise ValueError("agent failed on purpose")


def make_logged(role, arg, settings):
    return LoggedBuilder(make_scripted(role, None, settings), arg)


def make_failing(role, arg, settings):
    return Failing()
'''


@pytest.fixture(scope="module", autouse=True)
def ray_instance() -> Iterator[None]:
    """One local Ray instance for the module, shut down (with its processes) at the end."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield
    ray.shutdown()


def _config(episodes: int = 6, agents: tuple[str, ...] = AGENTS) -> RunConfig:
    return RunConfig("blocks", seed=3, episodes=episodes, agents=agents, settings={"turns": 8})


def _registry(folder: Path) -> Registry:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{PLUGIN_MODULE}.py").write_text(textwrap.dedent(PLUGIN_SOURCE), encoding="utf-8")
    agents = {"loggedbuilder": f"{PLUGIN_MODULE}:make_logged", "failing": f"{PLUGIN_MODULE}:make_failing"}
    return Registry(plugins={"raytest": Plugin("raytest", agents=agents, path=str(folder))})


def _episodes(run_dir: Path) -> dict[str, dict]:
    return {e.episode_id: e.to_json() for e in load_run(run_dir).episodes()}


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ray") / "local"
    run(_config(), out, registry=Registry(), concurrency=2)
    return out


def test_ray_run_records_the_same_episodes_as_a_local_run(local_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "ray"
    run(_config(), out, registry=Registry(), concurrency=2, executor="ray")
    assert _episodes(out) == _episodes(local_run)
    assert len(_episodes(out)) == 6
    assert load_run(out).config == load_run(local_run).config
    runtime = json.loads((out / RUN_FILE).read_text(encoding="utf-8"))["runtime"]
    assert runtime == {"concurrency": 2, "episode_timeout": None, "executor": "ray"}


def test_ray_resumes_a_local_run(local_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "resumed"
    run(_config(), out, registry=Registry())
    index = out / INDEX_FILE
    lines = index.read_text(encoding="utf-8").splitlines()
    for line in lines[2:4]:
        (out / EPISODES_DIR / f"{json.loads(line)['episode_id']}.json").unlink()
    index.write_text("".join(f"{line}\n" for line in lines[:2] + lines[4:]), encoding="utf-8")
    run(None, out, resume=True, registry=Registry(), concurrency=2, executor="ray")
    assert len(index.read_text(encoding="utf-8").splitlines()) == 6
    assert _episodes(out) == _episodes(local_run)


def test_plugin_agents_run_in_workers_and_concurrency_bounds_tasks_in_flight(tmp_path: Path) -> None:
    log = tmp_path / "moves.log"
    agents = ("director=oracle", f"builder=loggedbuilder:{log}")
    run(_config(4, agents), tmp_path / "run", registry=_registry(tmp_path / "plugin"), executor="ray")
    spans: dict[str, list[float]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        task_id, when = line.split()
        spans.setdefault(task_id, []).append(float(when))
    assert len(spans) == 4
    intervals = sorted((min(times), max(times)) for times in spans.values())
    assert all(end <= start for (_, end), (start, _) in pairwise(intervals))  # one at a time


def test_an_agent_error_in_a_worker_is_raised_as_itself(tmp_path: Path) -> None:
    config = _config(2, ("director=oracle", "builder=failing"))
    with pytest.raises(ValueError, match="agent failed on purpose"):
        run(config, tmp_path / "run", registry=_registry(tmp_path / "plugin"), concurrency=2, executor="ray")


def test_cli_run_takes_the_ray_executor(local_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "cli"
    args = ["run", "--world", "blocks", "--seed", "3", "--episodes", "6", "--turns", "8", "--out", str(out)]
    agents = [x for a in AGENTS for x in ("--agent", a)]
    assert main([*args, *agents, "--concurrency", "2", "--executor", "ray"]) == 0
    assert "run complete: 6 episodes" in capsys.readouterr().out
    assert _episodes(out) == _episodes(local_run)


def test_without_ray_the_executor_is_a_config_error_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails
    monkeypatch.delitem(sys.modules, "simlab.runner.ray_executor", raising=False)
    with pytest.raises(ConfigError, match=r"pip install 'simlab\[cluster\]'"):
        run(_config(), tmp_path / "run", registry=Registry(), executor="ray")
    assert not (tmp_path / "run").exists()


def test_an_unknown_executor_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--executor 'dask'"):
        run(_config(), tmp_path / "run", registry=Registry(), executor="dask")
