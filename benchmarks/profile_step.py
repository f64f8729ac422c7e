"""Where a step of the app's playback spends its time: cProfile of the step key (every panel updated) for each
world family ``benchmarks/gui.py`` ``bench_step`` times, on the same runs.

Run ``xvfb-run -a python -m benchmarks.profile_step [--family NAME] [--steps N] [--top N] [--sort cumulative]
[--runs DIR]``; it prints, per family, the functions with the most own time (or cumulative time) over the
steps, so a change to the panels can be aimed at what costs. ``--paints`` prints instead what Qt repaints on a
step: per widget (its class and its parents'), the paint events and the pixels of their regions per step, and
the widgets shown, hidden or laid out again, so a panel that repaints or re-lays out for nothing shows up, and
the window's dirty area per step: the union of every paint event's region in the window (what Qt's backing
store repaints and, with a GL view in the window, uploads before it composes the frame) and their sum (parents
painted under children count again).
``--late`` lists instead the paints left for the passes of the event loop after a step's own (each a second frame),
per widget and per turn stepped to.
``--area`` times instead what a frame costs against the area it dirties beside the 3D view: an opaque patch of
each size repainted with the world view's redraw, against the redraw alone, in the same window.
``--warm`` steps through the episode once first, unprofiled (a step the bench times has mostly been drawn
before: pictures and panel layouts are remembered per turn). ``--time N`` runs ``make bench``'s own
``bench_step`` N times per family instead, in this one process (each line its median, against its baseline).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QSettings, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QRegion
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget

from benchmarks import repaint
from benchmarks.gui import STEP_AGENTS, bench_step, step_run
from simlab.gui import frame_thread
from simlab.gui.main_window import MainWindow

FAMILIES = ("blocks", *STEP_AGENTS)


WATCHED = (QEvent.Type.Paint, QEvent.Type.LayoutRequest, QEvent.Type.Show, QEvent.Type.Hide, QEvent.Type.Resize)


class PaintCounter(QObject):
    """Counts, while ``on``, the watched events each widget gets (keyed by its class and its parents'), the
    pixels of its paint events' regions and, per step (:meth:`end_step`), the window's dirty area: the union of
    the regions painted in ``window`` and the part of it outside ``apart`` (the world view, which the bench's
    baseline repaints too)."""

    def __init__(self, window: QWidget, apart: QWidget) -> None:
        super().__init__()
        self.on = False
        self.window, self.apart = window, apart
        self.events: Counter[tuple[str, str]] = Counter()
        self.pixels: Counter[str] = Counter()
        self.dirty = QRegion()
        self.summed = 0
        self.steps: list[tuple[int, int, int]] = []  # per step: union, union outside ``apart``, sum

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if self.on and isinstance(watched, QWidget) and event.type() in WATCHED:
            name = widget_path(watched)
            self.events[(event.type().name, name)] += 1
            if isinstance(event, QPaintEvent):
                self.pixels[name] += area(event.region())
                if watched.window() is self.window:
                    self.summed += area(event.region())
                    self.dirty = self.dirty.united(event.region().translated(watched.mapTo(self.window, QPoint())))
        return False

    def end_step(self) -> None:
        """Note the step's dirty area and start the next step's."""
        apart = QRect(self.apart.mapTo(self.window, QPoint()), self.apart.size())
        self.steps.append((area(self.dirty), area(self.dirty.subtracted(QRegion(apart))), self.summed))
        self.dirty, self.summed = QRegion(), 0

    def report(self, steps: int, top: int) -> None:
        """Per step: the window's dirty area, the widgets painted (most pixels first), then the other events."""
        union, beyond, summed = (statistics.median(column) / 1000 for column in zip(*self.steps, strict=True))
        print(
            f"dirty kpixels per step (median): union {union:.1f}, outside the world view {beyond:.1f}, "
            f"sum of paint regions {summed:.1f}"
        )
        painted = [(n, name) for (kind, name), n in self.events.items() if kind == "Paint"]
        print(f"{'paints':>7} {'kpixels':>8}  widget (per step)")
        for n, name in sorted(painted, key=lambda pair: -self.pixels[pair[1]])[:top]:
            print(f"{n / steps:7.2f} {self.pixels[name] / steps / 1000:8.1f}  {name}")
        print(f"{'events':>7} {'kind':>13}  widget (per step)")
        others = [(n, kind, name) for (kind, name), n in self.events.items() if kind != "Paint"]
        for n, kind, name in sorted(others, key=lambda row: (-row[0], row[1], row[2]))[:top]:
            print(f"{n / steps:7.2f} {kind:>13}  {name}")


def area(region: QRegion) -> int:
    """The pixels of ``region`` (its rectangles do not overlap)."""
    return sum(rect.width() * rect.height() for rect in region)


def widget_path(widget: QWidget | None, depth: int = 4) -> str:
    """``widget``'s class (and object name) and its parents', innermost first."""
    parts = []
    while widget is not None and len(parts) < depth:
        parts.append(type(widget).__name__ + (f"#{widget.objectName()}" if widget.objectName() else ""))
        widget = widget.parentWidget()
    return " < ".join(parts)


def profile_steps(
    app: QApplication,
    window: MainWindow,
    steps: int,
    counter: PaintCounter | None = None,
    warm: bool = False,
    timer: TimingApp | None = None,
) -> cProfile.Profile:
    """Steps through the open run's first episode (wrapping to turn 0) under cProfile, each painted (with
    ``counter``, it counts the events instead of profiling; with ``timer``, it times each widget's events in
    the step and in the baseline's redraw after it; ``warm``: after a first pass unprofiled)."""
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
        frame_thread.drain()  # as bench_step: the pictures drawn ahead are made, nothing else runs
        if counter is not None:
            counter.on = True
        elif timer is not None:
            timer.phase = "step"
        else:
            profiler.enable()
        window.playback.step(1)  # what the step key does (a key needs an active window, which Xvfb may not give)
        app.processEvents()  # the panels paint here
        profiler.disable()
        if counter is not None:
            counter.on = False
            counter.end_step()
        if timer is not None:
            frame_thread.drain()
            timer.phase = "base"
            window.world.redraw()  # as bench_step's baseline
            repaint(window.world.stack.currentWidget())
            app.processEvents()
            timer.phase = ""
    return profiler


TIMED = (QEvent.Type.Paint, QEvent.Type.LayoutRequest, QEvent.Type.UpdateRequest, QEvent.Type.Resize)


class TimingApp(QApplication):
    """An application that times, while ``phase`` is set, each event of :data:`TIMED` a widget gets (a paint
    event is sent for each widget in turn, never inside its parent's, so each one's time is its own paint; the
    window's UpdateRequest holds the whole frame: every paint, then the composition)."""

    def __init__(self) -> None:
        super().__init__([])
        self.phase = ""
        self.spent: Counter[tuple[str, str, str]] = Counter()

    def notify(self, receiver: QObject, event: QEvent) -> bool:
        if not self.phase or event.type() not in TIMED or not isinstance(receiver, QWidget):
            return super().notify(receiver, event)
        phase, kind, name = self.phase, event.type().name, widget_path(receiver)
        start = time.perf_counter()
        try:
            return super().notify(receiver, event)
        finally:
            self.spent[(phase, kind, name)] += time.perf_counter() - start

    def report(self, steps: int, top: int) -> None:
        """Per step, the ms each widget's events took in the step and in the baseline's redraw."""
        print(f"{'step ms':>8} {'base ms':>8} {'event':>13}  widget (per step)")
        rows = {(kind, name) for _phase, kind, name in self.spent}
        ms = {key: (self.spent[("step", *key)], self.spent[("base", *key)]) for key in rows}
        for (kind, name), (step, base) in sorted(ms.items(), key=lambda item: -item[1][0])[:top]:
            print(f"{step / steps * 1000:8.2f} {base / steps * 1000:8.2f} {kind:>13}  {name}")


class LatePaints(QObject):
    """Records, while ``on``, the widget (class and parents') of each paint event, with the turn it was after."""

    def __init__(self) -> None:
        super().__init__()
        self.on = False
        self.turn = 0
        self.painted: Counter[str] = Counter()
        self.turns: Counter[int] = Counter()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if self.on and isinstance(watched, QWidget) and event.type() == QEvent.Type.Paint:
            self.painted[widget_path(watched)] += 1
            self.turns[self.turn] += 1
        return False


def late_paints(app: QApplication, window: MainWindow, rounds: int = 2) -> None:
    """Step through the open run's first episode ``rounds`` times; after each step's own pass of the event loop
    (its frame), count the paints the next three passes make, and print them per widget and per turn."""
    window.open_episode_id(window.browser.visible_episode_ids()[0])
    window.statusBar().clearMessage()  # its timeout would repaint the status bar in a later pass
    late = LatePaints()
    app.installEventFilter(late)
    for _ in range(rounds):
        window.playback.first()
        for _ in range(3):
            app.processEvents()
        for turn in range(1, window.playback.last_turn + 1):
            window.playback.seek(turn)
            app.processEvents()  # the step's frame
            late.on, late.turn = True, turn
            for _ in range(3):
                app.processEvents()
            late.on = False
    app.removeEventFilter(late)
    print(f"paints after the step's frame, by turn stepped to: {dict(sorted(late.turns.items())) or 'none'}")
    for name, n in late.painted.most_common():
        print(f"{n:5d}  {name}")


PATCHES = ((0, 0), (100, 100), (300, 200), (600, 400), (1000, 600))  # sizes of the area dirtied beside the view


class Patch(QWidget):
    """An opaque widget painting its region in one colour, another at each paint: the cheapest paint of an area."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.shade = 0

    def paintEvent(self, event: QPaintEvent) -> None:
        self.shade = (self.shade + 40) % 256
        painter = QPainter(self)
        painter.fillRect(event.rect(), QColor(self.shade, 128, 160))
        painter.end()


def time_areas(app: QApplication, window: MainWindow, frames: int) -> None:
    """Median ms of a frame in which the world view redraws (the bench's baseline) and a patch of each of
    :data:`PATCHES` sizes over the docks repaints, against the redraw alone and the patch alone, alternating."""
    window.open_episode_id(window.browser.visible_episode_ids()[0])
    patch = Patch(window)
    print(f"{'patch':>9} {'kpixels':>8} {'redraw':>8} {'+patch':>8} {'extra':>7} {'patch alone':>11}  ms, median")
    for width, height in PATCHES:
        patch.setGeometry(window.width() - width - 8, window.height() - height - 40, width, height)
        patch.setVisible(width > 0)
        patch.raise_()
        app.processEvents()
        times: dict[str, list[float]] = {"redraw": [], "both": [], "patch": []}
        for _ in range(frames):
            for what in times:
                start = time.perf_counter()
                if what != "patch":
                    window.world.redraw()  # as bench_step's baseline
                    repaint(window.world.stack.currentWidget())
                if what != "redraw":
                    patch.update()
                app.processEvents()
                times[what].append(time.perf_counter() - start)
        redraw, both, alone = (statistics.median(times[what]) * 1000 for what in ("redraw", "both", "patch"))
        print(
            f"{width:>4}x{height:<4} {width * height / 1000:8.1f} {redraw:8.1f} {both:8.1f} {both - redraw:7.1f} "
            f"{alone:11.1f}"
        )
    patch.deleteLater()


def time_steps(
    app: QApplication, window: MainWindow, families: list[str], times: int, runs: Path, cpu: int = 0
) -> None:
    """``bench_step`` ``times`` times per family, the families taken in turn, as ``make bench`` runs it (its key
    presses need the window active); ``cpu``: the same steps and redraws timed in the process's CPU time too
    (all its threads, software GL's included), which other processes on a loaded machine disturb less, each
    over ``cpu`` passes of the event loop (more than one: what a pass leaves for the next is counted where it
    was caused, as the app's event loop runs them all before the person sees the step settled)."""
    window.activateWindow()
    deadline = time.time() + 5
    while not window.isActiveWindow() and time.time() < deadline:
        app.processEvents()
    for _ in range(times):
        for family in families:
            window.open_path(step_run(runs, family))
            if cpu:
                cpu_step(app, window, family, cpu)
            else:
                bench_step(app, window, family)
    window.close()


def cpu_step(app: QApplication, window: MainWindow, family: str, passes: int = 1, steps: int = 100) -> None:
    """Median wall and CPU ms of a step key until every panel painted, and of the world view's redraw alone
    after it (``bench_step``'s loop), each over ``passes`` passes of the event loop, with their ratios."""
    window.open_episode_id(window.browser.visible_episode_ids()[0])
    spent: dict[str, list[tuple[float, float]]] = {"step": [], "base": []}
    for _ in range(steps):
        if window.playback.turn >= window.playback.last_turn:
            window.playback.first()
            app.processEvents()
        for what in spent:
            frame_thread.drain()
            wall, cpu = time.perf_counter(), time.process_time()
            if what == "step":
                QTest.keyClick(window, Qt.Key.Key_Right)
            else:
                window.world.redraw()
                repaint(window.world.stack.currentWidget())
            for _ in range(passes):
                app.processEvents()
            spent[what].append((time.perf_counter() - wall, time.process_time() - cpu))
    (step_wall, step_cpu), (base_wall, base_cpu) = (
        (statistics.median(w for w, _ in spent[what]) * 1000, statistics.median(c for _, c in spent[what]) * 1000)
        for what in ("step", "base")
    )
    print(
        f"{family} ({passes} pass{'es' if passes > 1 else ''}): step {step_wall:6.1f} ms (CPU {step_cpu:6.1f}), "
        f"redraw alone {base_wall:6.1f} ms "
        f"(CPU {base_cpu:6.1f}): ratio {step_wall / base_wall:5.2f}x, in CPU time {step_cpu / base_cpu:5.2f}x"
    )


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
    parser.add_argument(
        "--cpu", type=int, default=0, metavar="PASSES", help="with --time: wall and CPU time, over PASSES passes"
    )
    parser.add_argument("--events", action="store_true", help="time each widget's paints and layouts instead")
    parser.add_argument("--late", action="store_true", help="list the paints after each step's frame instead")
    parser.add_argument("--area", type=int, metavar="N", help="time N frames per dirtied area instead")
    args = parser.parse_args()
    app = TimingApp() if args.events else QApplication([])
    timer = app if isinstance(app, TimingApp) else None
    with tempfile.TemporaryDirectory() as tmp:
        window = MainWindow(QSettings(str(Path(tmp) / "s.ini"), QSettings.Format.IniFormat))
        window.resize(1600, 1000)
        window.show()
        if args.area:
            for family in args.family or FAMILIES:
                window.open_path(step_run(args.runs or Path(tmp), family))
                print(f"---- {family}")
                time_areas(app, window, args.area)
            return
        if args.late:
            for family in args.family or FAMILIES:
                window.open_path(step_run(args.runs or Path(tmp), family))
                print(f"---- {family}")
                late_paints(app, window)
            return
        if args.time:
            time_steps(app, window, args.family or FAMILIES, args.time, args.runs or Path(tmp), args.cpu)
            return
        for family in args.family or FAMILIES:
            window.open_path(step_run(args.runs or Path(tmp), family))
            counter = PaintCounter(window, window.world) if args.paints else None
            if counter is not None:
                app.installEventFilter(counter)
            profiler = profile_steps(app, window, args.steps, counter, args.warm, timer)
            print(f"---- {family} ({args.steps} steps)")
            if timer is not None:
                timer.report(args.steps, args.top)
                timer.spent.clear()
            elif counter is not None:
                app.removeEventFilter(counter)
                counter.report(args.steps, args.top)
            else:
                pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.top)
        window.close()


if __name__ == "__main__":
    main()
