"""Where the app's episode gestures spend their time: cProfile of the three ``benchmarks/gui.py`` times (opening
an episode until every panel painted, forking a 12-turn episode at turn 3 until the fork's window is painted,
exporting an episode's HTML transcript), on the same runs.

Run ``xvfb-run -a python -m benchmarks.profile_app_gestures [--top N] [--sort cumulative|tottime]``; it prints
the functions that cost most for each gesture (first open and later opens apart, since caches change the
picture), so a change can be aimed at what costs.
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
from pathlib import Path
from typing import cast

from PySide6.QtWidgets import QApplication

from benchmarks import profile
from benchmarks.gui import FORK_TURN, fork_and_paint, gesture_runs, gesture_window, open_and_paint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--top", type=int, default=25, help="functions shown per gesture")
    parser.add_argument("--sort", default="cumulative", choices=["cumulative", "tottime"])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each later gesture")
    args = parser.parse_args()
    app = cast(QApplication, QApplication.instance() or QApplication([]))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        runs = gesture_runs(folder)
        for family, path in runs.items():
            window = gesture_window(app, folder)
            window.open_path(path)
            ids = window.browser.visible_episode_ids()
            profile(f"{family}: first open", lambda: open_and_paint(app, window, ids[0]), 1, args.top, args.sort)  # noqa: B023
            order = itertools.cycle([ids[1], ids[0]])
            later = lambda: open_and_paint(app, window, next(order))  # noqa: B023, E731
            profile(f"{family}: later opens", later, args.repeats, args.top, args.sort)
            out = folder / f"{family}.html"
            export = lambda: window.export_html(out)  # noqa: B023, E731
            profile(f"{family}: HTML transcript", export, args.repeats, args.top, args.sort)
            if family == "blocks":
                window.playback.seek(FORK_TURN)
                app.processEvents()
                fork = lambda: fork_and_paint(app, window).close()  # noqa: B023, E731
                profile(f"{family}: fork at turn {FORK_TURN}", fork, args.repeats, args.top, args.sort)
            window.close()


if __name__ == "__main__":
    main()
