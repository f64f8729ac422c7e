"""Progress of long work (generating tasks, playing a run), drawn by rich.

On a terminal the bar is redrawn in place; anywhere else (a log file, CI) the same line is printed every ~5%
of the work or every 10 seconds, and at the end, so a log shows how far a run got::

    run blocks ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 37/200 18% 0:00:12 0:00:52 3.1 it/s ok 30 fail 5 abort 2
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from simlab.core.episode import Episode

LOG_WIDTH = 140
SHOWN_OUTCOMES = (("success", "ok"), ("failure", "fail"), ("abort", "abort"))
"""Outcome -> its label on the line; other outcomes are counted under "other" when there are any."""


class ProgressReport:
    """A progress bar for ``description``; call :meth:`step` (generation) or :meth:`episode` (runs)."""

    def __init__(
        self,
        description: str,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        every_fraction: float = 0.05,
        every_seconds: float = 10.0,
    ) -> None:
        self.console = Console(file=stream if stream is not None else sys.stderr, highlight=False)
        self.live = self.console.is_terminal
        if not self.live:  # a log file: room for the bar and the counts on one line
            self.console.width = max(self.console.width, LOG_WIDTH)
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(show_speed=True),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[note]}"),
            console=self.console,
            disable=not self.live,
            get_time=clock,
        )
        self.task: TaskID = self.progress.add_task(description, total=None, note="")
        self.clock, self.every_fraction, self.every_seconds = clock, every_fraction, every_seconds
        self.outcomes: Counter[str] = Counter()
        self._last_step, self._last_time, self._printed = -1, clock(), -1
        self._stepped = False  # nothing is printed for work that never began (a config error, say)

    def __enter__(self) -> ProgressReport:
        self.progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def step(self, done: int, total: int | None, note: str = "") -> None:
        """``done`` of ``total`` (None: unknown) items finished; ``note`` says what is going on."""
        self.progress.update(self.task, completed=done, total=total, note=note)
        self._stepped = True
        if not self.live and self._due(done, total):
            self._print(done)

    def episode(self, written: int, total: int, episode: Episode) -> None:
        """Usable as ``run(..., progress=report.episode)``: one more episode written, counted by outcome."""
        self.outcomes[str(episode.summary.get("outcome"))] += 1
        self.step(written, total, self.counts())

    def counts(self) -> str:
        """``ok 30 fail 5 abort 2`` (and ``other N`` when an outcome is none of those)."""
        parts = [f"{label} {self.outcomes[outcome]}" for outcome, label in SHOWN_OUTCOMES]
        other = sum(self.outcomes.values()) - sum(self.outcomes[outcome] for outcome, _ in SHOWN_OUTCOMES)
        return " ".join(parts + ([f"other {other}"] if other else []))

    def close(self) -> None:
        """Stop the live bar; elsewhere print the latest line unless it was just printed (a stopped run)."""
        self.progress.stop()
        done = int(self.progress.tasks[0].completed)
        if not self.live and self._stepped and self._printed != done:
            self._print(done)

    def _due(self, done: int, total: int | None) -> bool:
        """At every new ~5% step, after ``every_seconds`` of silence, and at the end."""
        step = int(done / max((total or 0) * self.every_fraction, 1.0))
        now = self.clock()
        if step > self._last_step or now - self._last_time >= self.every_seconds or (total and done >= total):
            self._last_step, self._last_time = step, now
            return True
        return False

    def _print(self, done: int) -> None:
        self.console.print(self.progress.make_tasks_table(self.progress.tasks), soft_wrap=True)
        self._printed = done


def progress_bar(description: str) -> ProgressReport:
    """A :class:`ProgressReport` on standard error, to use as a context manager."""
    return ProgressReport(description)
