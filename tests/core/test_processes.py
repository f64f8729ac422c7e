"""ordered_map gives results in the jobs' order, whatever order the worker processes finish them in."""

from __future__ import annotations

import os
import time
from functools import partial
from pathlib import Path

from simlab.core.processes import ordered_map, process_pool

WAIT_S = 60.0
"""How long job 0 waits at most for job 1 to finish first (only a stalled machine takes more than a moment)."""


def _job(folder: Path, k: int) -> tuple[int, bool]:
    """``k`` and, for job 0, whether job 1 had finished before it (job 1 leaves a file; job 0 waits for it)."""
    if k == 1:
        (folder / "one-done").write_text("1")
        return k, True
    if k == 0:
        deadline = time.monotonic() + WAIT_S
        while not (folder / "one-done").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return k, (folder / "one-done").exists()
    return k, True


def test_results_come_in_job_order_though_the_first_job_finishes_last(tmp_path: Path) -> None:
    results = list(ordered_map(partial(_job, tmp_path), range(4), 2))
    assert results == [(0, True), (1, True), (2, True), (3, True)]


def test_one_worker_runs_the_jobs_here_in_order(tmp_path: Path) -> None:
    (tmp_path / "one-done").write_text("1")  # in one process job 0 comes first: nothing to wait for
    assert list(ordered_map(partial(_job, tmp_path), range(3), 1)) == [(0, True), (1, True), (2, True)]


def _pid_of(k: int) -> tuple[int, int]:
    return k, os.getpid()


def test_a_kept_pool_runs_two_maps_in_its_own_processes_in_job_order(tmp_path: Path) -> None:
    with process_pool(2) as pool:
        first = list(ordered_map(partial(_job, tmp_path), range(4), pool))
        (tmp_path / "one-done").unlink()
        again = list(ordered_map(partial(_job, tmp_path), range(4), pool))
        pids = [list(ordered_map(_pid_of, range(6), pool)) for _ in range(2)]
    assert first == again == [(0, True), (1, True), (2, True), (3, True)]
    assert [k for k, _ in pids[0]] == list(range(6))
    workers = {pid for run in pids for _, pid in run}
    assert os.getpid() not in workers and len(workers) <= 2  # the same two processes served every map
