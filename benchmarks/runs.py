"""Large runs (issue 27): opening runs of 1,000 / 10,000 / 100,000 episodes, a filter and a sort on the largest,
and ``report`` over it.

The runs are the demo run with its index lines copied under new episode ids (as benchmarks/gui.py builds its
large run). Baselines run in the same process: ``json.loads`` over the same index lines for reading, a
Python list comprehension over the summaries for the filter and ``sorted`` over them for the sort.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import rss_mb, timed
from simlab.analysis.where import parse_where
from simlab.cli import main as cli
from simlab.core.recording import INDEX_FILE, load_run
from simlab.core.run_table import RunTable
from simlab.runner.demo import DEMO_RUN

SIZES = (1_000, 10_000, 100_000)
WHERE = 'score < 0.3 and errors > 2 and outcome == "failure"'


def big_run(folder: Path, n: int) -> Path:
    """The demo run with ``n`` index lines: its own lines in turn, each under a new id and score."""
    run = folder / f"run-{n}"
    shutil.copytree(DEMO_RUN, run)
    lines = [json.loads(line) for line in (run / INDEX_FILE).read_text(encoding="utf-8").splitlines()]
    with (run / INDEX_FILE).open("w", encoding="utf-8") as f:
        for k in range(n):
            f.write(json.dumps({**lines[k % len(lines)], "episode_id": f"ep-{k:06d}", "score": k / n}) + "\n")
    return run


def once(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """Seconds, MB of resident memory added while the result is held, and the result."""
    gc.collect()
    before = rss_mb()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, rss_mb() - before, result


def json_lines(run: Path) -> list[Any]:
    with (run / INDEX_FILE).open("rb") as f:
        return [json.loads(line) for line in f]


def row(name: str, seconds: float, baseline_name: str, baseline: float, extra: str = "") -> None:
    print(
        f"{name:<38} {seconds * 1000:10.1f} ms   baseline {baseline_name:<28} {baseline * 1000:10.1f} ms   "
        f"ratio {seconds / baseline:6.3g}x{extra}"
    )


def bench_open(run: Path, n: int) -> Any:
    base, base_mb, lines = once(lambda: json_lines(run))
    del lines
    read, read_mb, loaded = once(lambda: load_run(run))
    row(f"open a {n:,}-episode run (load_run)", read, "json.loads over its lines", base,
        f"   memory +{read_mb:.0f} MB (json.loads +{base_mb:.0f} MB)")  # fmt: skip
    built, table_mb, table = once(lambda: RunTable.from_summaries(loaded.summaries))
    print(f"{'  + its columns (RunTable)':<38} {built * 1000:10.1f} ms   memory +{table_mb:.0f} MB")
    return loaded, table


def bench_filter_and_sort(summaries: list[dict[str, Any]], table: RunTable) -> None:
    """The filter and the sort the app's browser runs, against doing them over the summaries in Python."""
    bound = parse_where(WHERE).bind(table.columns)
    mask = timed(lambda: bound.mask(table), 5)
    python = timed(
        lambda: [s for s in summaries if s["score"] < 0.3 and s["errors"] > 2 and s["outcome"] == "failure"], 3
    )
    row(f"where over {table.n:,} rows (numpy)", mask, "a list comprehension", python)
    order = timed(lambda: table.argsort("metrics.iou", descending=True), 5)
    by = timed(lambda: sorted(summaries, key=lambda s: -(s["metrics"].get("iou") or 0.0)), 3)
    row(f"sort {table.n:,} rows by metrics.iou", order, "sorted() over the summaries", by)


def bench_report(run: Path, n: int) -> None:
    base = timed(lambda: json_lines(run), 1)
    start = time.perf_counter()
    cpu = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = cli(["report", str(run)])
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert code == 0
    row(f"report over {n:,} episodes", seconds, "json.loads over its lines", base,
        f"   ({cpu:.1f} s CPU; the bar: under 10 s)")  # fmt: skip


def main() -> None:
    print("large runs (issue 27)")
    with tempfile.TemporaryDirectory() as tmp:
        for n in SIZES:
            run = big_run(Path(tmp), n)
            loaded, table = bench_open(run, n)
            if n == SIZES[-1]:
                bench_filter_and_sort(loaded.summaries, table)
                del loaded, table
                bench_report(run, n)
            shutil.rmtree(run)


if __name__ == "__main__":
    main()
