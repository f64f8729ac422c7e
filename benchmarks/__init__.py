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
