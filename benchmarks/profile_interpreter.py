"""Where the boards robot-code interpreter spends its time: cProfile of the two gestures ``benchmarks/boards.py``
times (a code turn of 5 puts through ``execute``, and the 400-step loop through ``run_program``).

Run ``python -m benchmarks.profile_interpreter [--top N]``; it prints the functions with the most own time for
each gesture, so a change to the interpreter can be aimed at what costs.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
from collections.abc import Callable

from benchmarks.boards import LOOP, five_puts
from simlab.worlds.boards.api import execute
from simlab.worlds.boards.interpreter import run_program
from simlab.worlds.boards.model import Board, Rules


def profile(name: str, gesture: Callable[[], object], repeats: int, top: int) -> None:
    """Run ``gesture`` ``repeats`` times under cProfile and print its ``top`` functions by own time."""
    gesture()  # warm-up: caches filled as in the app's second and later turns
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(repeats):
        gesture()
    profiler.disable()
    print(f"---- {name} ({repeats} runs)")
    pstats.Stats(profiler).sort_stats(pstats.SortKey.TIME).print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--top", type=int, default=15, help="functions shown per gesture")
    top = parser.parse_args().top
    source = five_puts()
    profile("code turn: 5 puts", lambda: execute(Board(), source, Rules()), 500, top)
    profile("400-step loop", lambda: run_program(LOOP, {}, {}), 50, top)


if __name__ == "__main__":
    main()
