"""Full-text search of a run (issue 27): the index of a 2,000-episode blocks run built, brought up to date
when nothing changed, when a few episodes landed and when notes changed, and queries, against reading every
episode file and looking for the word (what finding a word takes without the index).

Baselines run in the same process, so the ratios mean something on any machine.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from pathlib import Path

from benchmarks import row, timed
from simlab.analysis.search import SEARCH_FILE, open_index, update_index
from simlab.core.notes import change_notes
from simlab.core.recording import RunWriter, load_run
from simlab.runner.batch import RunConfig, run

EPISODES = 2_000
QUERIES = ("misheard", "wrong_layer", '"large green block"', "kind:error AND role:engine", "span*", "odd")
NOTED = 100


def make_run(folder: Path, episodes: int = EPISODES) -> Path:
    """A blocks run of ``episodes`` played episodes, 5 turns each (oracle directors, a scripted builder that
    mishears, so there are errors to find)."""
    out = folder / "run"
    config = RunConfig("blocks", seed=0, episodes=episodes, agents=["director=oracle", "builder=scripted:0.15"])
    run(dataclasses.replace(config, settings={"turns": 5}), out, concurrency=1)
    return out


def scan(run_dir: Path, word: str) -> int:
    """The baseline: every episode file read and parsed, the word looked for in its texts."""
    found = 0
    run_ = load_run(run_dir)
    for summary in run_.summaries:
        episode = run_.load_episode(str(summary["episode_id"]))
        found += sum(word in str(e.data.get("text", "")) for e in episode.events)
    return found


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="simlab-bench-search-") as tmp:
        start = time.perf_counter()
        run_dir = make_run(Path(tmp))
        print(f"{'run of 2,000 5-turn episodes played':<38} {time.perf_counter() - start:10.1f} s")
        start = time.perf_counter()
        built = update_index(run_dir)
        build = time.perf_counter() - start
        size = os.stat(run_dir / SEARCH_FILE).st_size
        said = f"{len(built.indexed)} episodes, {size / 2**20:.1f} MiB"
        print(f"{'index built (2,000 episodes)':<38} {build:10.2f} s   {said}")
        row("index up to date: nothing new", timed(lambda: update_index(run_dir), 5), "index built", build)
        bench_landed(run_dir, build)
        bench_noted(run_dir, build)
        bench_queries(run_dir)


def bench_landed(run_dir: Path, build: float) -> None:
    """Ten episodes land (played again under new ids), then the index is brought up to date."""
    run_ = load_run(run_dir)
    writer = RunWriter(run_dir, run_.config, resume=True)
    for k, summary in enumerate(run_.summaries[:10]):
        episode = run_.load_episode(str(summary["episode_id"]))
        writer.add(dataclasses.replace(episode, episode_id=f"landed_{k:02d}-r0"))
    start = time.perf_counter()
    update = update_index(run_dir)
    row(f"index update: {len(update.indexed)} episodes landed", time.perf_counter() - start, "index built", build)


def bench_noted(run_dir: Path, build: float) -> None:
    """A researcher tags a turn of each of 100 episodes (as the app does, one change at a time), then the
    index takes the notes in (only their rows are written again)."""
    summaries = load_run(run_dir).summaries[:NOTED]
    for summary in summaries:
        change_notes(run_dir, lambda notes, e=str(summary["episode_id"]): notes.add_tag(e, 3, "odd"))
    start = time.perf_counter()
    update = update_index(run_dir)
    row(f"index update: {update.notes} notes changed", time.perf_counter() - start, "index built", build)


def bench_queries(run_dir: Path) -> None:
    with open_index(run_dir) as index:
        baseline = timed(lambda: scan(run_dir, "misheard"), 1)
        for query in QUERIES:
            hits = index.search(query, 20)
            row(
                f"query {query[:24]} ({len(hits)} hits)",
                timed(lambda q=query: index.search(q, 20), 20),
                "read every episode",
                baseline,
            )
