"""Where a drag step in the rooms editor spends its time: cProfile of the gesture ``benchmarks/gui.py``
``bench_editor`` times (one step of dragging an object in a 30-object room, until the 3D view, its overlays
and both agents' live views have painted), then of the release (the full-quality views and the panels left
alone during the drag).

Run ``xvfb-run -a python -m benchmarks.profile_editor_drag [--top N] [--steps N]``; it prints the functions
with the most cumulative and own time, so a change to the drag path can be aimed at what costs.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
from pathlib import Path
from typing import cast

from PySide6.QtWidgets import QApplication

from benchmarks.editor import room_file
from simlab.gui.editor import EditorWindow
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


def _print(name: str, profiler: cProfile.Profile, top: int) -> None:
    print(f"---- {name}: by cumulative time")
    pstats.Stats(profiler).sort_stats(pstats.SortKey.CUMULATIVE).print_stats(top)
    print(f"---- {name}: by own time")
    pstats.Stats(profiler).sort_stats(pstats.SortKey.TIME).print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--top", type=int, default=25, help="functions shown per listing")
    parser.add_argument("--steps", type=int, default=10, help="drag steps profiled per object")
    args = parser.parse_args()
    app = cast(QApplication, QApplication.instance() or QApplication([]))
    with tempfile.TemporaryDirectory() as tmp:
        window = EditorWindow(open_document(room_file(Path(tmp))))
        window.show()
        app.processEvents()
        doc = cast(RoomDocument, window.document)
        for target in (doc.views.shared[0], doc.views.helper_only[0]):
            profile_drag(app, window, target, args.steps, args.top)
        window.undo_stack.setClean()
        window.close()


if __name__ == "__main__":
    main()
