"""Concurrent batch runs: same episodes as one at a time, stopping, resuming, episode timeouts, progress."""

from __future__ import annotations

import io
import json
import os
import signal
import textwrap
import threading
from pathlib import Path

import pytest

from simlab.cli import _stop_on_first_sigint, main
from simlab.core.episode import Episode
from simlab.core.errors import ConfigError
from simlab.core.plugins import Plugin, Registry
from simlab.core.recording import INDEX_FILE, RUN_FILE, load_run
from simlab.runner.batch import RunConfig, _ThreadPool, episode_ids, run
from simlab.runner.progress import ProgressReport

AGENTS = ("director=oracle", "builder=scripted")
N = 12

SLOW_AGENT_MODULE = "simlab_test_slow_agents"
SLOW_AGENT_SOURCE = '''
"""Test-only agent: the blocks scripted builder, sleeping before every move.

The delay is the spec's argument (``slowbuilder:0.2``) or else $SIMLAB_TEST_AGENT_DELAY (seconds, default 0),
so a slowed run and a fast one record the same agent spec."""

import os
import time

from simlab.worlds.blocks.agents import make_scripted


class SlowBuilder:
    def __init__(self, inner, delay):
        self.inner, self.delay = inner, delay

    def reset(self, seed, role, task):
        self.inner.reset(seed, role, task)

    def act(self, observation):
        time.sleep(self.delay)
        return self.inner.act(observation)


def make(role, arg, settings):
    delay = float(arg) if arg else float(os.environ.get("SIMLAB_TEST_AGENT_DELAY", "0"))
    return SlowBuilder(make_scripted(role, None, settings), delay)
'''


def agent_plugin_registry(folder: Path, plugin: str, agent: str, module: str, source: str) -> Registry:
    """A registry whose only plugin, ``plugin``, provides ``agent``: ``make`` of ``module``, written into
    ``folder`` from ``source``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return Registry(plugins={plugin: Plugin(plugin, agents={agent: f"{module}:make"}, path=str(folder))})


def slow_registry(folder: Path) -> Registry:
    """A registry whose only plugin provides ``slowbuilder`` (module written into ``folder``)."""
    return agent_plugin_registry(folder, "slowtest", "slowbuilder", SLOW_AGENT_MODULE, SLOW_AGENT_SOURCE)


def _config(**kw: object) -> RunConfig:
    return RunConfig("blocks", **{"seed": 3, "episodes": N, "agents": AGENTS, "settings": {"turns": 8}, **kw})


def episodes_by_id(run_dir: Path) -> dict[str, dict]:
    """Every episode of a run folder as JSON, by episode id (the index's order does not matter)."""
    return {e.episode_id: e.to_json() for e in load_run(run_dir).episodes()}


def index_ids(run_dir: Path) -> list[str]:
    lines = (run_dir / INDEX_FILE).read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["episode_id"] for line in lines]


@pytest.fixture(scope="module")
def sequential_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("batch") / "sequential"
    run(_config(), out, registry=Registry())
    return out


def test_eight_at_a_time_records_the_same_episodes_as_one_at_a_time(sequential_run, tmp_path):
    out = tmp_path / "parallel"
    calls: list[tuple[int, int, str]] = []
    run(_config(), out, registry=Registry(), concurrency=8, progress=lambda k, n, e: calls.append((k, n, e.episode_id)))
    assert episodes_by_id(out) == episodes_by_id(sequential_run)
    assert sorted(index_ids(out)) == sorted(index_ids(sequential_run))
    assert load_run(out).config == load_run(sequential_run).config
    assert [(k, n) for k, n, _ in calls] == [(k, N) for k in range(1, N + 1)]  # once per episode
    assert sorted(i for _, _, i in calls) == sorted(index_ids(sequential_run))
    runtime = json.loads((out / RUN_FILE).read_text(encoding="utf-8"))["runtime"]
    assert runtime == {"concurrency": 8, "episode_timeout": None}


def test_a_stop_event_ends_the_run_early_and_resume_plays_exactly_the_rest(sequential_run, tmp_path):
    out, stop = tmp_path / "stopped", threading.Event()

    def stop_after_three(k: int, n: int, episode: Episode) -> None:
        if k == 3:
            stop.set()

    writer = run(_config(), out, registry=Registry(), concurrency=2, progress=stop_after_three, stop=stop)
    first = index_ids(out)
    assert 3 <= len(first) < N
    assert writer.done == set(first)
    assert load_run(out).problems == []
    played: list[str] = []
    run(None, out, resume=True, concurrency=3, progress=lambda k, n, e: played.append(e.episode_id))
    assert sorted(played) == sorted({i for i, _, _ in episode_ids(load_run(out).config)} - set(first))
    assert len(index_ids(out)) == len(set(index_ids(out))) == N
    assert episodes_by_id(out) == episodes_by_id(sequential_run)
    runtime = json.loads((out / RUN_FILE).read_text(encoding="utf-8"))["runtime"]
    assert runtime["concurrency"] == 3  # the latest session's options, for information


def test_an_episode_over_its_timeout_is_recorded_as_an_abort_and_the_run_goes_on(tmp_path):
    config = _config(episodes=3, agents=["builder=slowbuilder:0.2"], settings={"turns": 20})
    out = tmp_path / "slow"
    run(config, out, registry=slow_registry(tmp_path / "plugin"), concurrency=3, episode_timeout=0.5)
    summaries = load_run(out).summaries
    assert len(summaries) == 3
    for summary in summaries:
        assert summary["outcome"] == "abort"
        assert summary["timeout"] == 0.5
        assert summary["errors"] == 1
        episode = load_run(out).load_episode(summary["episode_id"])
        actions = [e for e in episode.events if e.kind == "action" and e.role == "builder"]
        assert 2 <= len(actions) <= 4  # 0.2 s a move, cut at the first step past 0.5 s
        assert episode.summary["outcome"] == "abort"
        assert episode.events[-1].turn >= 2  # the events up to the cut are kept


def test_a_thread_that_played_an_episode_plays_the_next_while_its_file_is_written():
    """One at a time: the second episode starts while the first one's file is still being written (a save
    waiting for it would otherwise wait in vain), and each future is done only once its file is."""
    second_began, written = threading.Event(), []

    def play(item):
        if item[0] == "b":
            second_began.set()
        return item[0]

    def save(episode):
        if episode == "a":
            written.append(("a", second_began.wait(30)))
        else:
            written.append((episode, True))

    pool = _ThreadPool(play, 1, save)
    futures = [pool.submit((name, {}, 0)) for name in ("a", "b")]
    assert [f.result(60) for f in futures] == ["a", "b"]
    pool.shutdown()
    assert sorted(written) == [("a", True), ("b", True)]


def test_a_failing_save_fails_its_episode_future():
    def save(episode):
        raise OSError(f"disk full writing {episode}")

    pool = _ThreadPool(lambda item: item[0], 2, save)
    future = pool.submit(("a", {}, 0))
    with pytest.raises(OSError, match="disk full writing a"):
        future.result(60)
    pool.shutdown()


@pytest.mark.parametrize(("concurrency", "timeout"), [(0, None), (2, 0.0), (2, -1.0)])
def test_bad_runtime_options_are_config_errors_before_anything_is_written(tmp_path, concurrency, timeout):
    with pytest.raises(ConfigError):
        run(_config(), tmp_path / "run", concurrency=concurrency, episode_timeout=timeout)
    assert not (tmp_path / "run").exists()


def test_cli_run_takes_concurrency_and_resume_reuses_the_recorded_runtime(tmp_path, capsys):
    out = tmp_path / "cli"
    args = ["run", "--episodes", "3", "--turns", "2", "--concurrency", "3", "--episode-timeout", "30"]
    assert main([*args, "--out", str(out)]) == 0
    assert "run complete: 3 episodes" in capsys.readouterr().out
    (out / INDEX_FILE).write_text((out / INDEX_FILE).read_text(encoding="utf-8").splitlines()[0] + "\n")
    assert main(["run", "--resume", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "run complete: 3 episodes" in captured.out
    assert "2/2 100%" in captured.err and "ok 0 fail 2 abort 0" in captured.err
    runtime = json.loads((out / RUN_FILE).read_text(encoding="utf-8"))["runtime"]
    assert runtime == {"concurrency": 3, "episode_timeout": 30.0}


def test_first_sigint_sets_stop_and_the_second_interrupts():
    stop = threading.Event()
    with _stop_on_first_sigint(stop):
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.is_set()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# ---- progress ---------------------------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def _episode(outcome: str) -> Episode:
    return Episode("e", "blocks", 0, {}, {}, {}, [], [], {"outcome": outcome})


def _feed(report: ProgressReport, total: int, outcomes: dict[str, int], start: int = 0) -> int:
    done = start
    for outcome, count in outcomes.items():
        for _ in range(count):
            done += 1
            report.episode(done, total, _episode(outcome))
    return done


def test_progress_counts_episodes_by_outcome():
    report = ProgressReport("run", io.StringIO(), clock=FakeClock())
    _feed(report, 200, {"success": 30, "failure": 5, "abort": 2})
    assert report.counts() == "ok 30 fail 5 abort 2"
    report.episode(38, 200, _episode("timeout?"))
    assert report.counts() == "ok 30 fail 5 abort 2 other 1"


def test_progress_on_a_plain_stream_prints_a_line_every_five_percent_and_at_the_end():
    clock, stream = FakeClock(), io.StringIO()
    with ProgressReport("run", stream, clock=clock) as report:
        done = _feed(report, 200, {"success": 199})
        clock.now += 1.0
        _feed(report, 200, {"failure": 1}, start=done)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 21  # the first episode (work has begun), then every 5%
    assert "1/200" in lines[0] and "10/200" in lines[1] and "ok 10 fail 0 abort 0" in lines[1]
    assert "200/200" in lines[-1] and "100%" in lines[-1] and "ok 199 fail 1 abort 0" in lines[-1]
    assert "\r" not in stream.getvalue()


def test_progress_on_a_plain_stream_also_prints_after_ten_quiet_seconds():
    clock, stream = FakeClock(), io.StringIO()
    report = ProgressReport("run", stream, clock=clock)
    report.step(0, 1000)  # the first line: work has begun
    done = _feed(report, 1000, {"success": 3})
    assert len(stream.getvalue().splitlines()) == 1
    clock.now += 10.5
    done = _feed(report, 1000, {"success": 1}, start=done)
    assert "4/1000" in stream.getvalue().splitlines()[-1]
    _feed(report, 1000, {"failure": 1}, start=done)
    report.close()  # a stopped run: the latest count is printed once more, at the end
    report.close()
    last = stream.getvalue().splitlines()[2:]
    assert len(last) == 1 and "5/1000" in last[0] and "ok 4 fail 1 abort 0" in last[0]


def test_progress_on_a_terminal_redraws_one_live_line():
    clock, stream = FakeClock(), FakeTTY()
    with ProgressReport("run", stream, clock=clock) as report:
        clock.now += 1.0
        _feed(report, 3, {"success": 2, "abort": 1})
    text = stream.getvalue()
    assert "\x1b[" in text  # drawn in place with terminal control codes
    assert "3/3" in text and "ok 2 fail 0 abort 1" in text
