"""Where a drag step in the rooms editor spends its time: cProfile of the gesture ``benchmarks/gui.py``
``bench_editor`` times (one step of dragging an object in a 30-object room, until the 3D view, its overlays
and both agents' live views have painted), then of the release (the full-quality views and the panels left
alone during the drag), and what one frame of a drag costs part by part, in wall and CPU time (CPU time of
this process, llvmpipe's threads included, stays put on a loaded machine where wall time does not), each view's
VTK render alone included (the rest of its paint is the blit to the widget and Qt composing the window).

The Python of a drag step is then timed part by part (the document's facts, items and the views' shows). Then
a draft's 3D view rendered with only one kind of its actors shown at a time (unlit faces, lit faces, lines,
texts: where llvmpipe's time goes), and ``--composition`` measures what Qt's composition of a window costs with
0, 1 and 3 GL views in it (a label repainted in a 1500x950 window, alternated), the cost no view can save.

Run ``xvfb-run -a python -m benchmarks.profile_editor_drag [--top N] [--steps N] [--composition]``; it prints the
functions with the most cumulative and own time, so a change to the drag path can be aimed at what costs.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from PySide6.QtOpenGLWidgets import QOpenGLWidget
from PySide6.QtWidgets import QApplication, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from benchmarks import repaint
from benchmarks.editor import room_file
from simlab.gui.editor import DRAFT_SCALE, EditorWindow
from simlab.worlds import open_document
from simlab.worlds.rooms.editing import RoomDocument


def profile_drag(app: QApplication, window: EditorWindow, target: str, steps: int, top: int) -> None:
    """``steps`` drag steps of ``target`` under cProfile, then the release, each printed."""
    doc = cast(RoomDocument, window.document)
    x, y, z = doc.objects[target].position
    window.begin_drag()
    window.push_op(doc.move, target, (x + 0.1, y, z), "profile-warm-up")  # caches filled as in a real drag
    app.processEvents()
    profiler = cProfile.Profile()
    profiler.enable()
    for k in range(steps):
        window.push_op(doc.move, target, (x + 0.1 * (k % 2), y, z), "profile-drag")
        app.processEvents()  # the views paint here
    profiler.disable()
    _print(f"drag {target}: {steps} steps", profiler, top)
    profiler = cProfile.Profile()
    profiler.enable()
    window.end_drag()
    app.processEvents()
    profiler.disable()
    _print(f"release after dragging {target}", profiler, top)


def python_parts(app: QApplication, window: EditorWindow, target: str, repeats: int) -> None:
    """Median wall ms of each part of a drag step's Python (what ``EditorWindow.refresh`` asks for during a drag),
    called one by one on the document as a drag step leaves it, the views painted between steps: where the
    11-14 ms of Python before anything paints go."""
    doc = cast(RoomDocument, window.document)
    x, y, z = doc.objects[target].position
    window.select(target)  # a drag selects what it moves: its outline and corner rays are drawn at every step
    window.begin_drag()
    times: dict[str, list[float]] = {}

    def timed(name: str, part: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        made = part()
        times.setdefault(name, []).append(time.perf_counter() - start)
        return made

    for k in range(repeats):
        to = (x + 0.1 * (k % 2), y, z)
        edit = timed("the move (document operation)", lambda: doc.move(target, to, "parts"))  # noqa: B023
        timed("the edit applied (put)", lambda: edit.redo(doc))  # noqa: B023 - called at once
        timed("ray-casting geometry", lambda: doc.geometry)
        timed("visible sets (corner rays)", lambda: doc.visible)
        items = timed("3D scene items (overlays)", lambda: doc.scene_items(window.selected))
        timed("3D view: show (items compared)", lambda: window.canvas.show(items))  # noqa: B023
        live = timed("agents' scene items", doc.agent_scene)
        timed("live views: show", lambda: window.pictures.show_live(live, doc.agent_views()))  # noqa: B023
        timed("warnings and summary", lambda: window.summary.setText(doc.summary()))
        for _ in range(3):
            app.processEvents()  # the views paint
    window.end_drag()  # the steps went around the undo stack: the document is as the last one left it
    for name, samples in times.items():
        print(f"{name:<42} {statistics.median(samples) * 1000:8.2f} ms wall")
    print(f"{'all of them':<42} {sum(statistics.median(v) for v in times.values()) * 1000:8.2f} ms wall")


def frame_anatomy(app: QApplication, window: EditorWindow, target: str, repeats: int) -> None:
    """Median wall and CPU ms of the parts of a drag step of ``target``: the edit and the panels before anything
    paints; the window composed again for a label alone (Qt composes a window holding GL views through GL on
    every frame); and each view's draft paint, that composition included."""
    doc = cast(RoomDocument, window.document)
    x, y, z = doc.objects[target].position
    moves = iter(range(10**6))
    window.begin_drag()
    _parts(app, repeats, {"edit and panels, nothing painted": lambda: window.push_op(
        doc.move, target, (x + 0.1 * (next(moves) % 2), y, z), "anatomy")}, paint=False)  # fmt: skip
    window.end_drag()
    window.canvas.set_draft(DRAFT_SCALE)  # drafts held without a drag: no rest timer brings full quality back
    window.pictures.set_draft(True)
    # a draft's step, what it left alone drawn merged: a move to where the object is would change nothing
    back = (x, y, z) if tuple(doc.objects[target].position) != (x, y, z) else (x + 0.1, y, z)
    window.push_op(doc.move, target, back, "anatomy")
    app.processEvents()
    parts: dict[str, Callable[[], object]] = {"the window composed (a label repainted)": window.summary.update}
    for name, canvas in {"3D view": window.canvas, **window.pictures.live}.items():
        parts[f"{name} painted (draft)"] = lambda widget=canvas.widget: repaint(widget)
    _parts(app, repeats, parts, paint=True)
    # VTK's render alone, finished (llvmpipe draws in threads): the rest of a paint is the blit and the window
    views = {"3D view": window.canvas, **window.pictures.live}
    renders = {f"{name} rendered alone (draft)": _render(canvas.plotter.ren_win) for name, canvas in views.items()}
    _parts(app, repeats, renders, paint=False)
    render_by_kind(window.canvas.plotter, repeats)
    window.canvas.set_draft(1)
    window.pictures.set_draft(False)
    app.processEvents()


def render_by_kind(plotter: Any, repeats: int) -> None:
    """Median ms of a render of ``plotter`` with only each kind of its shown actors left visible."""
    renderer = plotter.renderer
    props = [renderer.GetViewProps().GetItemAsObject(k) for k in range(renderer.GetViewProps().GetNumberOfItems())]
    shown = [prop for prop in props if prop.GetVisibility()]
    kinds: dict[str, list[Any]] = {}
    for prop in shown:
        kinds.setdefault(_kind(prop), []).append(prop)
    render = _render(plotter.ren_win)
    for kind, members in {"all": shown, **kinds}.items():
        for prop in shown:
            prop.SetVisibility(prop in members)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            render()
            times.append(time.perf_counter() - start)
        name = f"3D view draft, only {kind} ({len(members)} actors)"
        print(f"{name:<42} {statistics.median(times) * 1000:8.1f} ms wall")
    for prop in shown:
        prop.VisibilityOn()


def _kind(prop: Any) -> str:
    if not prop.IsA("vtkActor"):
        return "texts"
    if not prop.GetMapper().GetInput().GetNumberOfPolys():
        return "lines"
    return "lit faces" if prop.GetProperty().GetLighting() else "unlit faces"


def composition(app: QApplication, rounds: int = 5) -> None:
    """Median ms of a label's repaint in a 1500x950 window holding 0, 1 and 3 QOpenGLWidgets, alternated: Qt
    composes a window holding any GL view through GL, every pixel of it, at every frame."""
    windows = {count: _window_with_gl(app, count) for count in (0, 1, 3)}
    times: dict[int, list[float]] = {count: [] for count in windows}
    for _ in range(rounds):
        for count, (window, label) in windows.items():
            for other, _label in windows.values():
                other.setVisible(other is window)
            for k in range(20):
                app.processEvents()
                start = time.perf_counter()
                label.setText(str(k))
                app.processEvents()
                times[count].append(time.perf_counter() - start)
    for count, samples in times.items():
        name = f"a window with {count} GL views composed"
        print(f"{name:<42} {statistics.median(samples) * 1000:8.1f} ms wall (a label repainted)")
    for window, _label in windows.values():
        window.close()


def _window_with_gl(app: QApplication, count: int) -> tuple[QWidget, QLabel]:
    window = QWidget()
    window.resize(1500, 950)
    row = QHBoxLayout(window)
    label = QLabel("0")
    row.addWidget(label)
    column = QVBoxLayout()
    row.addLayout(column)
    for _ in range(count):
        view = QOpenGLWidget()
        view.setMinimumSize(300, 225)
        column.addWidget(view)
    window.show()
    for _ in range(5):
        app.processEvents()
    return window, label


def _render(window: Any) -> Callable[[], object]:
    return lambda: (window.Render(), window.WaitForCompletion())


def _parts(app: QApplication, repeats: int, parts: dict[str, Callable[[], object]], paint: bool) -> None:
    """Each part's median wall and CPU ms, what it makes Qt paint included when ``paint``."""
    for name, part in parts.items():
        wall, cpu = [], []
        for _ in range(repeats):
            app.processEvents()
            start, start_cpu = time.perf_counter(), time.process_time()
            part()
            if paint:
                app.processEvents()
            wall.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        print(f"{name:<42} {statistics.median(wall) * 1000:8.1f} ms wall {statistics.median(cpu) * 1000:8.1f} ms CPU")


def _print(name: str, profiler: cProfile.Profile, top: int) -> None:
    print(f"---- {name}: by cumulative time")
    pstats.Stats(profiler).sort_stats(pstats.SortKey.CUMULATIVE).print_stats(top)
    print(f"---- {name}: by own time")
    pstats.Stats(profiler).sort_stats(pstats.SortKey.TIME).print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--top", type=int, default=25, help="functions shown per listing")
    parser.add_argument("--steps", type=int, default=10, help="drag steps profiled per object")
    parser.add_argument("--composition", action="store_true", help="only time Qt's composition with 0, 1, 3 GL views")
    args = parser.parse_args()
    app = cast(QApplication, QApplication.instance() or QApplication([]))
    if args.composition:
        composition(app)
        return
    with tempfile.TemporaryDirectory() as tmp:
        window = EditorWindow(open_document(room_file(Path(tmp))))
        window.show()
        app.processEvents()
        doc = cast(RoomDocument, window.document)
        for target in (doc.views.shared[0], doc.views.helper_only[0]):
            profile_drag(app, window, target, args.steps, args.top)
        for target in (doc.views.shared[0], doc.views.helper_only[0]):
            print(f"---- the Python of one drag step of {target}, part by part")
            python_parts(app, window, target, 4 * args.steps)
        print(f"---- one drag step of {doc.views.shared[0]}, part by part")
        frame_anatomy(app, window, doc.views.shared[0], args.steps)
        window.undo_stack.setClean()
        window.close()


if __name__ == "__main__":
    main()
