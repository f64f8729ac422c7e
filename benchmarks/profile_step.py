"""Where a step of the app's playback spends its time: cProfile of the step key (every panel updated) for each
world family ``benchmarks/gui.py`` ``bench_step`` times, on the same runs.

Run ``xvfb-run -a python -m benchmarks.profile_step [--family NAME] [--steps N] [--top N] [--sort cumulative]
[--runs DIR]``; it prints, per family, the functions with the most own time (or cumulative time) over the
steps, so a change to the panels can be aimed at what costs.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from benchmarks.gui import STEP_AGENTS, step_run
from simlab.gui.main_window import MainWindow

FAMILIES = ("blocks", *STEP_AGENTS)


def profile_steps(app: QApplication, window: MainWindow, steps: int) -> cProfile.Profile:
    """Steps through the open run's first episode (wrapping to turn 0) under cProfile, each painted."""
    window.open_episode_id(window.browser.visible_episode_ids()[0])
    app.processEvents()
    profiler = cProfile.Profile()
    for _ in range(steps):
        if window.playback.turn >= window.playback.last_turn:
            window.playback.first()
            app.processEvents()
        profiler.enable()
        window.playback.step(1)  # what the step key does (a key needs an active window, which Xvfb may not give)
        app.processEvents()  # the panels paint here
        profiler.disable()
    return profiler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--family", choices=FAMILIES, action="append", help="only these (default: all)")
    parser.add_argument("--steps", type=int, default=60, help="steps profiled per family")
    parser.add_argument("--top", type=int, default=25, help="functions shown per family")
    parser.add_argument("--sort", default="tottime", choices=("tottime", "cumulative"), help="order of the list")
    parser.add_argument("--runs", type=Path, help="keep the runs played here, for the next profile (default: none)")
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    with tempfile.TemporaryDirectory() as tmp:
        window = MainWindow(QSettings(str(Path(tmp) / "s.ini"), QSettings.Format.IniFormat))
        window.resize(1600, 1000)
        window.show()
        for family in args.family or FAMILIES:
            window.open_path(step_run(args.runs or Path(tmp), family))
            profiler = profile_steps(app, window, args.steps)
            print(f"---- {family} ({args.steps} steps)")
            pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.top)
        window.close()


if __name__ == "__main__":
    main()
