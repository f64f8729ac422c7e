"""``make bench``: speed measurements, each against a baseline run in the same process."""

import statistics
import time
from collections.abc import Callable
from pathlib import Path


def timed(fn: Callable[[], object], repeats: int) -> float:
    """Median seconds per call over ``repeats`` calls (after one warm-up call)."""
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def rss_mb() -> float:
    """Resident memory of this process, in MB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")
