"""A one-line progress report for batch runs.

On a terminal the line is redrawn in place; anywhere else (a log file, CI) a plain line is printed every
~5% of the episodes or every 10 seconds, and at the end::

    [ 37/200] 18.5% | ok 30 fail 5 abort 2 | 3.1 ep/s | ETA 0:00:52
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from typing import TextIO

from simlab.core.episode import Episode

SHOWN_OUTCOMES = (("success", "ok"), ("failure", "fail"), ("abort", "abort"))
"""Outcome -> its label on the line; other outcomes are counted under "other" when there are any."""


class ProgressBar:
    """Counts finished episodes by outcome and reports rate and ETA on ``stream``."""

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        every_fraction: float = 0.05,
        every_seconds: float = 10.0,
    ) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.every_fraction, self.every_seconds = every_fraction, every_seconds
        self.started = clock()
        self.done = 0
        self.outcomes: Counter[str] = Counter()
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_step = 0
        self._last_time = self.started
        self._drawn = 0  # width of the line on screen (terminal only)
        self._printed = 0  # episodes counted in the latest plain line (other streams)

    def update(self, episode: Episode) -> None:
        """Count one finished episode and report if it is time to."""
        self.done += 1
        self.outcomes[str(episode.summary.get("outcome"))] += 1
        if self.tty:
            self._redraw(self.line())
        elif self._due():
            self._print()

    def close(self) -> None:
        """End the terminal line; elsewhere print the latest count if it was not printed yet (a stopped run)."""
        if self.tty and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = 0
        elif not self.tty and self._printed != self.done:
            self._print()

    def line(self) -> str:
        """E.g. ``[ 37/200] 18.5% | ok 30 fail 5 abort 2 | 3.1 ep/s | ETA 0:00:52``."""
        width = len(str(self.total))
        percent = 100.0 * self.done / self.total if self.total else 100.0
        rate = self.rate()
        return (
            f"[{self.done:>{width}}/{self.total}] {percent:.1f}% | {self._counts()} | "
            f"{rate:.1f} ep/s | ETA {self._eta(rate)}"
        )

    def rate(self) -> float:
        """Episodes per second since the bar started."""
        elapsed = self.clock() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def _counts(self) -> str:
        parts = [f"{label} {self.outcomes[outcome]}" for outcome, label in SHOWN_OUTCOMES]
        other = self.done - sum(self.outcomes[outcome] for outcome, _ in SHOWN_OUTCOMES)
        return " ".join(parts + ([f"other {other}"] if other else []))

    def _eta(self, rate: float) -> str:
        left = max(self.total - self.done, 0)
        if not left:
            return "0:00:00"
        return str(timedelta(seconds=round(left / rate))) if rate > 0 else "?"

    def _due(self) -> bool:
        """Non-terminal streams: at every new ~5% step, after ``every_seconds`` of silence, and at the end."""
        step = int(self.done / max(self.total * self.every_fraction, 1.0))
        now = self.clock()
        if step > self._last_step or now - self._last_time >= self.every_seconds or self.done >= self.total:
            self._last_step, self._last_time = step, now
            return True
        return False

    def _print(self) -> None:
        self.stream.write(self.line() + "\n")
        self.stream.flush()
        self._printed = self.done

    def _redraw(self, text: str) -> None:
        self.stream.write("\r" + text + " " * max(self._drawn - len(text), 0))
        self.stream.flush()
        self._drawn = len(text)

    def __call__(self, done: int, total: int, episode: Episode) -> None:
        """Usable directly as ``run(..., progress=bar)``; takes the total from the run (episodes left to play)."""
        self.total = total
        self.update(episode)
