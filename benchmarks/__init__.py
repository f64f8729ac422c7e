"""``make bench``: speed measurements, each against a baseline run in the same process."""

import cProfile
import pstats
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def timed(fn: Callable[[], object], repeats: int) -> float:
    """Median seconds per call over ``repeats`` calls (after one warm-up call)."""
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def paired(fn: Callable[[], object], baseline: Callable[[], object], wanted_s: float = 1.0) -> tuple[float, float]:
    """Median seconds per call of ``fn`` and of ``baseline``, timed in turn, sample after sample, each sample a
    batch of calls lasting about a millisecond, for about ``wanted_s`` in all. For calls of a fraction of a
    millisecond: timed apart, 20 calls of one and then 200 of the other, a ratio of about 5 came out anywhere
    from 3.3 to 6.6 on one machine (the clock's speed moved between the two); timed in turn it stays within a
    few percent."""
    fn(), baseline()  # warmed up
    batches = [max(1, round(1e-3 / max(timed(f, 5), 1e-7))) for f in (fn, baseline)]
    spent: tuple[list[float], list[float]] = ([], [])
    rounds = max(10, round(wanted_s / 2e-3))
    for _ in range(rounds):
        for f, batch, samples in zip((fn, baseline), batches, spent, strict=True):
            start = time.perf_counter()
            for _ in range(batch):
                f()
            samples.append((time.perf_counter() - start) / batch)
    return statistics.median(spent[0]), statistics.median(spent[1])


def repaint(widget: Any) -> None:
    """Ask ``widget`` to paint again; a 3D view, which renders only when its scene or camera changed, to render
    too: the baselines mean the 3D view's redraw."""
    from PySide6.QtWidgets import QWidget

    from simlab.gui.offscreen_view import PaintedView

    if isinstance(widget, PaintedView):
        widget.request()
    else:
        QWidget.update(widget)


def row(name: str, seconds: float, baseline_name: str, baseline: float, unit: str = "ms") -> None:
    """One figure and its baseline on a line, with their ratio."""
    scale = 1000 if unit == "ms" else 1e6
    print(
        f"{name:<38} {seconds * scale:10.3f} {unit}   baseline {baseline_name:<28} "
        f"{baseline * scale:10.3f} {unit}   ratio {seconds / baseline:6.2f}x"
    )


def profile(name: str, gesture: Callable[[], object], repeats: int, top: int, sort: str = "tottime") -> None:
    """Run ``gesture`` ``repeats`` times under cProfile and print its ``top`` functions by ``sort`` (the
    ``profile_*`` scripts' report)."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(repeats):
        gesture()
    profiler.disable()
    print(f"---- {name} ({repeats} runs)")
    pstats.Stats(profiler).sort_stats(sort).print_stats(top)


def rss_mb() -> float:
    """Resident memory of this process, in MB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")
