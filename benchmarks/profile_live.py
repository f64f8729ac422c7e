"""Where a live batch at concurrency 64 spends its wall time (``benchmarks/live.py`` ``bench_concurrency``).

Three views of the same run (200 blocks episodes, two model calls each, a server in a child process answering
every call in 200 ms):

* ``--bare``: the server alone, driven by a bare ``openai`` client (one, shared by 64 threads) making the
  same calls two in a row per "episode": what the server and the client give at best, against the ideal
  (rounds of ``concurrency`` episodes x 2 x latency: 1.6 s for 200 at 64);
* the timeline: wall-clock stamps per episode (started, each call sent and answered, played, file written,
  indexed), summed into phases, so the time beyond the server's latency shows where it goes;
* ``--profile``: cProfile of every thread of the run on each thread's own CPU clock
  (``time.thread_time``: waiting for the server or for the interpreter lock is not counted), merged: the
  CPU work done under the GIL per episode.

Run ``python -m benchmarks.profile_live [--bare] [--profile] [--top N] [--runs N]``. Stamps and profiles
are taken by wrapping SimLab's functions here, in this process only: the runs here play every episode in this
process (``processes=1``), not in the worker processes ``run`` spreads them over by default
(``benchmarks/live.py`` times both).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import math
import os
import pstats
import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from benchmarks.live import CONCURRENCY, EPISODES, KEY_ENV, LATENCY_MS, MODEL, play, server_process
from simlab.agents import openai_agent
from simlab.core.recording import RunWriter
from simlab.runner import batch
from simlab.worlds import get_family

Stamps = dict[str, dict[str, list[float]]]
"""episode id -> stamp name -> times (perf_counter seconds)."""


def bare_client(base_url: str, episodes: int, concurrency: int) -> float:
    """Wall seconds of ``episodes`` pairs of calls in a row, ``concurrency`` pairs at once, one shared client."""
    import openai

    client = openai.OpenAI(api_key=os.environ[KEY_ENV], base_url=base_url, max_retries=0)
    messages = [{"role": "system", "content": "You are the builder."}, {"role": "user", "content": "Your move?"}]

    def pair(_: int) -> None:
        for _call in range(2):
            client.chat.completions.create(model=MODEL, messages=messages)  # type: ignore[arg-type]

    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(pair, range(4)))  # warm-up
        start = time.perf_counter()
        list(pool.map(pair, range(episodes)))
        wall = time.perf_counter() - start
    client.close()
    return wall


@contextlib.contextmanager
def patched(owner: Any, name: str, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Iterator[None]:
    """``owner.name`` replaced by ``wrap(original)`` inside the block."""
    original = getattr(owner, name)
    setattr(owner, name, wrap(original))
    try:
        yield
    finally:
        setattr(owner, name, original)


class Timeline:
    """Stamps per episode, taken by wrapping the batch's and the agent's functions."""

    def __init__(self) -> None:
        self.stamps: Stamps = defaultdict(lambda: defaultdict(list))
        self.current = threading.local()  # the episode id the thread is playing
        self.lock = threading.Lock()

    def stamp(self, episode_id: str, name: str) -> None:
        with self.lock:
            self.stamps[episode_id][name].append(time.perf_counter())

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        timeline = self

        def play_one(original: Callable[..., Any]) -> Callable[..., Any]:
            def wrapped(self: Any, item: Any) -> Any:
                timeline.current.episode = item[0]
                timeline.stamp(item[0], "started")
                out = original(self, item)
                timeline.stamp(item[0], "played")
                return out

            return wrapped

        def create(original: Callable[..., Any]) -> Callable[..., Any]:
            def wrapped(self: Any, *args: Any) -> Any:
                timeline.stamp(timeline.current.episode, "sent")
                out = original(self, *args)
                timeline.stamp(timeline.current.episode, "answered")
                return out

            return wrapped

        def around(name: str, many: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
            def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
                def wrapped(self: Any, episodes: Any) -> Any:
                    ids = [e.episode_id for e in (episodes if many else [episodes])]
                    for episode_id in ids:
                        timeline.stamp(episode_id, f"{name} began")
                    out = original(self, episodes)
                    for episode_id in ids:
                        timeline.stamp(episode_id, name)
                    return out

                return wrapped

            return wrap

        with (
            patched(batch._Batch, "play_one", play_one),
            patched(openai_agent.ChatCaller, "_create", create),
            patched(RunWriter, "save", around("saved")),
            patched(RunWriter, "index_all", around("indexed", many=True)),
        ):
            yield

    def report(self, wall: float, origin: float) -> None:
        """Phases summed over the episodes, and when (after ``origin``, the call of ``run``) the first and last
        episodes started and ended."""
        phases: dict[str, list[float]] = defaultdict(list)
        for s in self.stamps.values():
            sent, answered = s["sent"], s["answered"]
            phases["started -> first call sent"].append(sent[0] - s["started"][0])
            inside = sum(a - b for a, b in zip(answered, sent, strict=True))
            phases["inside calls (server latency and client)"].append(inside)
            phases["between calls"].append(sum(b - a for a, b in zip(answered, sent[1:], strict=False)))
            phases["last answer -> played (summary)"].append(s["played"][0] - answered[-1])
            phases["writing the file (fsynced)"].append(s["saved"][0] - s["saved began"][0])
            phases["file written -> indexing began"].append(s["indexed began"][0] - s["saved"][0])
            phases["indexing (line appended, fsynced)"].append(s["indexed"][0] - s["indexed began"][0])
        print(f"wall {wall:.3f} s, {len(self.stamps)} episodes; per episode (ms): median, 90th percentile, total s")
        for name, values in phases.items():
            ordered = sorted(values)
            p90 = ordered[int(0.9 * (len(ordered) - 1))]
            print(f"  {name:<44} {statistics.median(values) * 1000:8.1f} {p90 * 1000:8.1f} {sum(values):8.2f}")
        starts = sorted(s["started"][0] - origin for s in self.stamps.values())
        ends = sorted(s["indexed"][0] - origin for s in self.stamps.values())
        print(f"  episodes started from {starts[0]:.3f} to {starts[-1]:.3f} s after run() was called;", end=" ")
        print(f"indexed from {ends[0]:.3f} to {ends[-1]:.3f} s")


class ThreadProfiles:
    """One cProfile per thread on the thread's CPU clock, merged at the end."""

    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []
        self.local = threading.local()
        self.lock = threading.Lock()

    def own(self) -> cProfile.Profile:
        if not hasattr(self.local, "profile"):
            self.local.profile = cProfile.Profile(time.thread_time)
            with self.lock:
                self.profiles.append(self.local.profile)
        profile: cProfile.Profile = self.local.profile
        return profile

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        profiles = self

        def profiled(original: Callable[..., Any]) -> Callable[..., Any]:
            def wrapped(self: Any, *args: Any) -> Any:
                profile = profiles.own()
                profile.enable()
                try:
                    return original(self, *args)
                finally:
                    profile.disable()

            return wrapped

        caller = self.own()  # the calling thread: planning, scheduling, index lines
        caller.enable()
        try:
            with (
                patched(batch._Batch, "_play_and_watch", profiled),  # the threads playing episodes
                patched(batch._ThreadPool, "_write", profiled),  # those writing their files
            ):
                yield
        finally:
            caller.disable()

    def report(self, top: int, sort: str) -> None:
        stats = pstats.Stats(self.profiles[0])
        for profile in self.profiles[1:]:
            stats.add(profile)
        print(f"---- CPU of every thread ({len(self.profiles)} threads), by {sort}")
        stats.sort_stats(sort).print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bare", action="store_true", help="also time the server alone with a bare client")
    parser.add_argument("--profile", action="store_true", help="also profile every thread's CPU")
    parser.add_argument("--runs", type=int, default=1, help="timelines to take")
    parser.add_argument("--top", type=int, default=30, help="functions shown")
    parser.add_argument("--sort", default="tottime", choices=("tottime", "cumulative"), help="order of the list")
    args = parser.parse_args()
    os.environ.setdefault(KEY_ENV, "sk-bench-not-a-secret")
    tasks = get_family("blocks").tasks.generate(EPISODES, 0)
    # Episodes of two calls in a row all take about as long: they run in rounds of CONCURRENCY (200 at 64: four,
    # the last of 8), so the work spread evenly (200 x 2 x 200 ms / 64 = 1.25 s) is not reachable.
    rounds = math.ceil(len(tasks) / CONCURRENCY)
    ideal = rounds * 2 * LATENCY_MS / 1000
    print(
        f"ideal {ideal:.3f} s ({len(tasks)} episodes at {CONCURRENCY} at once: {rounds} rounds x 2 calls x "
        f"{LATENCY_MS:.0f} ms)"
    )
    if args.bare:
        bare_server(len(tasks), ideal)
    with server_process(LATENCY_MS) as base_url:
        play(base_url, tasks[:2], 2)  # warm-up
        for _ in range(args.runs):
            timeline = Timeline()
            before, origin = os.times(), time.perf_counter()
            with timeline.recording():
                wall, _, _ = play(base_url, tasks, CONCURRENCY, processes=1)
            after = os.times()
            timeline.report(wall, origin)
            cpu = after.user + after.system - before.user - before.system
            print(f"  this process's CPU {cpu:.3f} s, {cpu / wall:.0%} of the wall time (the GIL: ~100% at most)")
        if args.profile:
            profiles = ThreadProfiles()
            with profiles.recording():
                wall, _, _ = play(base_url, tasks, CONCURRENCY, processes=1)
            print(f"profiled run: {wall:.3f} s")
            profiles.report(args.top, args.sort)


def bare_server(episodes: int, ideal: float) -> None:
    """The server alone (a server process of its own) under a bare client: wall time and the server's CPU."""
    served: list[tuple[int, float]] = []
    with server_process(LATENCY_MS, served) as base_url:
        wall = bare_client(base_url, episodes, CONCURRENCY)
    (peak, server_cpu), calls = served[0], 2 * (episodes + 4)
    print(
        f"bare client (one, shared), {episodes} pairs of calls at concurrency {CONCURRENCY}: {wall:.3f} s "
        f"(ideal {ideal:.3f} s); the server: peak {peak} in flight, {server_cpu / calls * 1000:.2f} ms CPU a call"
    )


if __name__ == "__main__":
    main()
