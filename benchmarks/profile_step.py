"""Where a step of the app's playback spends its time: cProfile of the step key (every panel updated) for each
world family ``benchmarks/gui.py`` ``bench_step`` times, on the same runs.

Run ``xvfb-run -a python -m benchmarks.profile_step [--family NAME] [--steps N] [--top N] [--sort cumulative]
[--runs DIR]``; it prints, per family, the functions with the most own time (or cumulative time) over the
steps, so a change to the panels can be aimed at what costs. ``--paints`` prints instead what Qt repaints on a
step: per widget (its class and its parents'), the paint events and the pixels of their regions per step, and
the widgets shown, hidden or laid out again, so a panel that repaints or re-lays out for nothing shows up.
``--warm`` steps through the episode once first, unprofiled (a step the bench times has mostly been drawn
before: pictures and panel layouts are remembered per turn). ``--time N`` runs ``make bench``'s own
``bench_step`` N times per family instead, in this one process (each line its median, against its baseline).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
import time
from collections import Counter
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QSettings
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QApplication, QWidget

from benchmarks.gui import STEP_AGENTS, bench_step, step_run
from simlab.gui.main_window import MainWindow

FAMILIES = ("blocks", *STEP_AGENTS)


WATCHED = (QEvent.Type.Paint, QEvent.Type.LayoutRequest, QEvent.Type.Show, QEvent.Type.Hide, QEvent.Type.Resize)


class PaintCounter(QObject):
    """Counts, while ``on``, the watched events each widget gets (keyed by its class and its parents'), and the
    pixels of its paint events' regions."""

    def __init__(self) -> None:
        super().__init__()
        self.on = False
        self.events: Counter[tuple[str, str]] = Counter()
        self.pixels: Counter[str] = Counter()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if self.on and isinstance(watched, QWidget) and event.type() in WATCHED:
            name = widget_path(watched)
            self.events[(event.type().name, name)] += 1
            if isinstance(event, QPaintEvent):
                self.pixels[name] += sum(rect.width() * rect.height() for rect in event.region())
        return False

    def report(self, steps: int, top: int) -> None:
        """Per step: the widgets painted (most pixels first), then the other events."""
        painted = [(n, name) for (kind, name), n in self.events.items() if kind == "Paint"]
        print(f"{'paints':>7} {'kpixels':>8}  widget (per step)")
        for n, name in sorted(painted, key=lambda pair: -self.pixels[pair[1]])[:top]:
            print(f"{n / steps:7.2f} {self.pixels[name] / steps / 1000:8.1f}  {name}")
        print(f"{'events':>7} {'kind':>13}  widget (per step)")
        others = [(n, kind, name) for (kind, name), n in self.events.items() if kind != "Paint"]
        for n, kind, name in sorted(others, key=lambda row: (-row[0], row[1], row[2]))[:top]:
            print(f"{n / steps:7.2f} {kind:>13}  {name}")


def widget_path(widget: QWidget | None, depth: int = 4) -> str:
    """``widget``'s class (and object name) and its parents', innermost first."""
    parts = []
    while widget is not None and len(parts) < depth:
        parts.append(type(widget).__name__ + (f"#{widget.objectName()}" if widget.objectName() else ""))
        widget = widget.parentWidget()
    return " < ".join(parts)


def profile_steps(
    app: QApplication, window: MainWindow, steps: int, counter: PaintCounter | None = None, warm: bool = False
) -> cProfile.Profile:
    """Steps through the open run's first episode (wrapping to turn 0) under cProfile, each painted (with
    ``counter``, it counts the events instead of profiling; ``warm``: after a first pass unprofiled)."""
    window.open_episode_id(window.browser.visible_episode_ids()[0])
    app.processEvents()
    if warm:
        for _ in range(window.playback.last_turn):
            window.playback.step(1)
            app.processEvents()
    profiler = cProfile.Profile()
    for _ in range(steps):
        if window.playback.turn >= window.playback.last_turn:
            window.playback.first()
            app.processEvents()
        if counter is None:
            profiler.enable()
        else:
            counter.on = True
        window.playback.step(1)  # what the step key does (a key needs an active window, which Xvfb may not give)
        app.processEvents()  # the panels paint here
        profiler.disable()
        if counter is not None:
            counter.on = False
    return profiler


def time_steps(app: QApplication, window: MainWindow, families: list[str], times: int, runs: Path) -> None:
    """``bench_step`` ``times`` times per family, the families taken in turn, as ``make bench`` runs it (its key
    presses need the window active)."""
    window.activateWindow()
    deadline = time.time() + 5
    while not window.isActiveWindow() and time.time() < deadline:
        app.processEvents()
    for _ in range(times):
        for family in families:
            window.open_path(step_run(runs, family))
            bench_step(app, window, family)
    window.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--family", choices=FAMILIES, action="append", help="only these (default: all)")
    parser.add_argument("--steps", type=int, default=60, help="steps profiled per family")
    parser.add_argument("--top", type=int, default=25, help="functions shown per family")
    parser.add_argument("--sort", default="tottime", choices=("tottime", "cumulative"), help="order of the list")
    parser.add_argument("--runs", type=Path, help="keep the runs played here, for the next profile (default: none)")
    parser.add_argument("--paints", action="store_true", help="count what Qt repaints and lays out instead")
    parser.add_argument("--warm", action="store_true", help="step through the episode once before profiling")
    parser.add_argument("--time", type=int, metavar="N", help="run make bench's bench_step N times instead")
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    with tempfile.TemporaryDirectory() as tmp:
        window = MainWindow(QSettings(str(Path(tmp) / "s.ini"), QSettings.Format.IniFormat))
        window.resize(1600, 1000)
        window.show()
        if args.time:
            time_steps(app, window, args.family or FAMILIES, args.time, args.runs or Path(tmp))
            return
        for family in args.family or FAMILIES:
            window.open_path(step_run(args.runs or Path(tmp), family))
            counter = PaintCounter() if args.paints else None
            if counter is not None:
                app.installEventFilter(counter)
            profiler = profile_steps(app, window, args.steps, counter, args.warm)
            print(f"---- {family} ({args.steps} steps)")
            if counter is not None:
                app.removeEventFilter(counter)
                counter.report(args.steps, args.top)
            else:
                pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.top)
        window.close()


if __name__ == "__main__":
    main()
