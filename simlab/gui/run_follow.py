"""Following runs that are still being played: new episodes appear as their index lines land.

A :class:`RunFollower` polls each open run's ``index.jsonl`` (a ``stat`` every :data:`POLL_MS`; a
``QFileSystemWatcher`` is not enough on its own: it misses appends on some file systems and coalesces bursts)
and reads only the bytes appended since (:meth:`simlab.core.recording.Run.follow`; a line still being written
waits for the next poll, an index replaced or cut short is read again whole). It emits :attr:`grew` with the
run's name when its episodes or problems changed. The index is always what is shown: nothing is cached
beyond the offset read up to.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from PySide6.QtCore import QObject, QTimer, Signal

from simlab.core.errors import SimlabError
from simlab.core.recording import INDEX_FILE, Run

POLL_MS = 500


class RunFollower(QObject):
    """Polls the open runs' indexes and reads what was appended (see the module docstring)."""

    grew = Signal(str)
    failed = Signal(str, str)  # run name, why its index could not be read again

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runs: dict[str, Run] = {}
        self._sizes: dict[str, tuple[int, int, int]] = {}  # per run: the index's (size, inode, mtime) last seen
        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self.poll)

    def set_runs(self, runs: Mapping[str, Run]) -> None:
        """Follow ``runs`` (those read with columns, :func:`~simlab.core.recording.load_run_table`)."""
        self.runs = {name: run for name, run in runs.items() if run.tail is not None}
        self._sizes = {name: _signature(run) for name, run in self.runs.items()}
        self.timer.start() if self.runs else self.timer.stop()

    def poll(self) -> list[str]:
        """Read what each run's index gained since the last poll; the runs that changed (each emitted)."""
        changed = []
        for name, run in self.runs.items():
            signature = _signature(run)
            if signature == self._sizes.get(name):
                continue  # untouched: not even opened
            self._sizes[name] = signature
            if signature == GONE:  # moved or deleted while open: what was read stays shown, said once
                self.failed.emit(name, f"{run.path / INDEX_FILE} is gone; the episodes read so far stay shown")
                continue
            try:
                grew = run.follow()
            except (SimlabError, OSError) as exc:
                self.failed.emit(name, str(exc))
                continue
            if grew:
                changed.append(name)
                self.grew.emit(name)
        return changed


GONE = (-1, -1, -1)
"""The signature of an index that is not there."""


def _signature(run: Run) -> tuple[int, int, int]:
    try:
        st = os.stat(run.path / INDEX_FILE)
    except OSError:
        return GONE
    return (st.st_size, st.st_ino, st.st_mtime_ns)


def planned_episodes(run: Run) -> int | None:
    """How many episodes the run's config plans (its tasks times its repeats), or None when it does not say."""
    tasks, repeats = run.config.get("tasks"), run.config.get("repeats", 1)
    if not isinstance(tasks, list) or type(repeats) is not int:
        return None
    return len(tasks) * repeats


def progress_text(runs: Mapping[str, Run]) -> str:
    """``412 / 1,000 episodes, 37 failed`` over the runs that hold fewer episodes than they plan (still being
    played, or stopped); "" when every run is complete."""
    done = planned = failed = 0
    for run in runs.values():
        total = planned_episodes(run)
        table = run.table()
        if total is None or table.n >= total:
            continue
        done, planned = done + table.n, planned + total
        failed += len(table.rows_of("outcome", "failure")) + len(table.rows_of("outcome", "abort"))
    if not planned:
        return ""
    return f"{done:,} / {planned:,} episodes, {failed:,} failed"
