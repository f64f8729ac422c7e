"""Live-model runs against the loopback test server: what concurrency buys, and SimLab's own cost per call.

* Wall time of 200 blocks episodes (one turn, one director speaking: two model calls each, text only) with
  every call taking 200 ms at the server, at concurrency 64 against concurrency 1. Concurrency 1 plays 10
  episodes and is scaled to 200 (200 one-at-a-time episodes would take minutes); the line says so. The batch
  at concurrency 64 runs as ``run`` runs it by default: its threads spread over one worker process per core
  (``run --processes``); a second line times it in worker processes against all in this one, alternated,
  medians of :data:`REPEATS`, with what starting the workers costs.
* SimLab's overhead per model call: the same kind of run with no server latency, (wall time - time inside
  the HTTP calls as the agent records it in ``latency_s``) / calls, against a bare ``openai`` client calling
  the same server in a loop (the client's own cost plus the loopback server's).

The server runs in a child process, as a real endpoint would: in this process it would compete with the
agents for the interpreter lock and its own work would count as ours.

Run it with ``python -m benchmarks.live``; ``python -m benchmarks.profile_live`` shows where a concurrent
batch's time goes (each episode's phases, every thread's CPU, the server alone with a bare client).
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks import timed
from simlab.core.plugins import discover
from simlab.core.processes import start_method
from simlab.core.recording import INDEX_FILE
from simlab.runner.batch import RunConfig, default_processes, run
from simlab.runner.process_pool import ProcessEpisodePool
from simlab.testing.openai_server import FakeOpenAIServer, scripted_replies
from simlab.testing.scripts import BLOCKS_SCRIPT as SCRIPT
from simlab.worlds import get_family

KEY_ENV = "SIMLAB_BENCH_KEY"
MODEL = "fake-model"
EPISODES, SERIAL_EPISODES, CONCURRENCY = 200, 10, 64
LATENCY_MS = 200.0
REPEATS = 3


def row(name: str, seconds: float, baseline_name: str, baseline: float, note: str = "") -> None:
    """One line in the format of ``benchmarks/__main__.py`` (milliseconds), with an optional note."""
    print(
        f"{name:<38} {seconds * 1000:10.3f} ms   baseline {baseline_name:<28} "
        f"{baseline * 1000:10.3f} ms   ratio {seconds / baseline:6.2f}x{note}"
    )


def _serve(latency_ms: float, conn: Any, stop: Any) -> None:
    """The child process: serve the scripted replies until ``stop`` is set, then send back the peak load and
    the CPU seconds the server spent."""
    with FakeOpenAIServer(scripted_replies(SCRIPT, default=None), latency_ms=latency_ms) as server:
        conn.send(server.base_url)
        stop.wait()
        times = os.times()
        conn.send((server.stats.max_in_flight, times.user + times.system))


@contextlib.contextmanager
def server_process(latency_ms: float, peak: list[tuple[int, float]] | None = None) -> Iterator[str]:
    """The test server in a child process; yields its base URL and appends (its peak requests in flight, its CPU
    seconds) once stopped."""
    context = multiprocessing.get_context("spawn")
    here, there = context.Pipe()
    stop = context.Event()
    child = context.Process(target=_serve, args=(latency_ms, there, stop), daemon=True)
    child.start()
    there.close()  # the child's end: recv() raises EOFError if the child dies instead of blocking
    try:
        yield here.recv()
    finally:
        stop.set()
        if peak is not None and here.poll(10):
            peak.append(here.recv())
        child.join(10)


def play(
    base_url: str, tasks: list[dict[str, Any]], concurrency: int, processes: int | None = None
) -> tuple[float, float, int]:
    """A blocks run of ``tasks`` against the server (in a temporary folder, removed after) in ``processes``
    worker processes (None: ``run``'s default): wall seconds, seconds inside HTTP calls (the agents'
    ``latency_s`` records) and the number of calls."""
    agent = {"base_url": base_url, "api_key_env": KEY_ENV, "timeout": 30, "text_only": True}
    config = RunConfig(
        "blocks",
        seed=0,
        agents=[f"director=openai:{MODEL}", f"builder=openai:{MODEL}"],
        settings={"turns": 1, "speakers": [1, 1]},
        tasks=tasks,
        agent_settings={"director": agent, "builder": agent},
    )
    with tempfile.TemporaryDirectory(prefix="simlab-bench-live-") as folder:
        start = time.perf_counter()
        run(config, folder, registry=discover(), concurrency=concurrency, processes=processes)
        wall = time.perf_counter() - start
        return (wall, *http_seconds(Path(folder)))


def http_seconds(out: Path) -> tuple[float, int]:
    """Seconds spent inside HTTP calls (the agents' ``latency_s`` records) and the number of calls of a run."""
    total, calls = 0.0, 0
    for line in (out / INDEX_FILE).read_text(encoding="utf-8").splitlines():
        episode = json.loads((out / json.loads(line)["file"]).read_text(encoding="utf-8"))
        for record in episode["raw"]:
            total += float(record["latency_s"])
            calls += 1
    return total, calls


def bench_concurrency(tasks: list[dict[str, Any]]) -> None:
    """200 episodes at concurrency 64 against 10 at concurrency 1 scaled to 200."""
    peak: list[tuple[int, float]] = []
    with server_process(LATENCY_MS, peak) as base_url:
        play(base_url, tasks[:2], 2)  # warm-up: imports, the plugin, the first connections
        serial, _, _ = play(base_url, tasks[:SERIAL_EPISODES], 1)
        spread, alone = [], []
        for _ in range(REPEATS):  # alternated, so a neighbour's load falls on both alike
            wall, _, calls = play(base_url, tasks, CONCURRENCY)
            spread.append(wall)
            alone.append(play(base_url, tasks, CONCURRENCY, processes=1)[0])
    parallel, scaled, workers = statistics.median(spread), serial * len(tasks) / SERIAL_EPISODES, default_processes(64)
    row(
        f"{len(tasks)} live episodes, concurrency {CONCURRENCY}",
        parallel,
        f"concurrency 1 (x{len(tasks) // SERIAL_EPISODES})",
        scaled,
        f" ({scaled / parallel:.1f}x faster; {calls} calls of {LATENCY_MS:.0f} ms, peak {peak[0][0] if peak else 0} "
        f"in flight; {workers} worker process(es), median of {REPEATS}; "
        f"concurrency 1 timed on {SERIAL_EPISODES} episodes and scaled to {len(tasks)})",
    )
    row(
        f"  the same in {workers} worker process(es)",
        parallel,
        "all in this process",
        statistics.median(alone),
        f" (starting and ending {workers} idle worker(s): {pool_startup(workers) * 1000:.0f} ms)",
    )


def pool_startup(processes: int) -> float:
    """Median seconds to start ``processes`` idle episode workers and end them (a fork, the world family)."""
    config = {"world": "blocks", "seed": 0, "agents": {}, "settings": {}}

    def cycle() -> None:
        with tempfile.TemporaryDirectory(prefix="simlab-bench-pool-") as folder:
            ProcessEpisodePool(config, None, None, 2 * processes, processes, Path(folder), lambda: False).shutdown()

    return timed(cycle, 5)


def raw_client_call(base_url: str, calls: int) -> float:
    """Median seconds of ``calls`` bare ``openai`` client requests (one client, like SimLab's messages)."""
    import openai

    client = openai.OpenAI(api_key=os.environ[KEY_ENV], base_url=base_url, max_retries=0)
    messages = [{"role": "system", "content": "You are the builder."}, {"role": "user", "content": "Your move?"}]

    def loop() -> None:
        for _ in range(calls):
            client.chat.completions.create(model=MODEL, messages=messages)

    try:
        return timed(loop, 3) / calls
    finally:
        client.close()


def bench_overhead(tasks: list[dict[str, Any]]) -> None:
    """(wall - HTTP time) / calls of a run with no server latency, against a bare client call."""
    with server_process(0.0) as base_url:
        play(base_url, tasks[:2], 1)
        wall, inside, calls = play(base_url, tasks, 1)
        baseline = raw_client_call(base_url, 100)
    overhead = (wall - inside) / calls
    row(
        "SimLab overhead per model call",
        overhead,
        "bare openai client call",
        baseline,
        f" ({len(tasks)} episodes, {calls} calls, {inside / calls * 1000:.2f} ms/call inside HTTP, concurrency 1)",
    )


def main() -> None:
    """Print the live-run figures, taken in a process that has not rendered, as ``simlab run`` plays."""
    if start_method().get_start_method() != "fork":  # ``make bench`` drew rooms before: workers would not fork
        subprocess.run([sys.executable, "-m", "benchmarks.live"], check=True)
        return
    os.environ.setdefault(KEY_ENV, "sk-bench-not-a-secret")
    tasks = get_family("blocks").tasks.generate(EPISODES, 0)
    bench_concurrency(tasks)
    bench_overhead(tasks[:40])


if __name__ == "__main__":
    main()
