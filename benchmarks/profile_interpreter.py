"""Where the boards robot-code interpreter spends its time: cProfile of the two gestures ``benchmarks/boards.py``
times (a code turn of 5 puts through ``execute``, and the 400-step loop through ``run_program``), then the
loop's floor: the same loop through the generic closures (every fast path off), through the fast paths, and
with each statement a plain copy (``total = i``: one closure call per statement and nothing computed, what
any closure interpreter pays at least), each against the loop in plain Python in the same process.

Run ``python -m benchmarks.profile_interpreter [--top N]``; it prints the functions with the most own time for
each gesture, so a change to the interpreter can be aimed at what costs, then the floor's ratios (medians of
``--repeats`` rounds).
"""

from __future__ import annotations

import argparse
import statistics

from benchmarks import profile, timed
from benchmarks.boards import LOOP, five_puts
from simlab.worlds.boards import interpreter
from simlab.worlds.boards.api import execute
from simlab.worlds.boards.interpreter import DEFAULT_LIMITS, run_program
from simlab.worlds.boards.model import Board, Rules

COPIES = "total = 0\nfor i in range(400):\n    total = i\n    total = i\n"


def native() -> None:
    """The benchmark's loop in plain Python: the baseline."""
    total = 0
    for i in range(400):
        total = total + i * 2
        total = total - i


def floor(repeats: int) -> None:
    """The loop's ratios to plain Python: generic closures, fast paths, and one closure call per statement."""
    generic = interpreter._compiled(LOOP, (), (), DEFAULT_LIMITS, False)
    gestures = {
        "generic closures (fused=False)": lambda: generic.run({}, {}),
        "fast paths (run_program)": lambda: run_program(LOOP, {}, {}),
        "floor: each statement a copy": lambda: run_program(COPIES, {}, {}),
    }
    ratios: dict[str, list[float]] = {name: [] for name in gestures}
    for _ in range(repeats):
        for name, gesture in gestures.items():
            ratios[name].append(timed(gesture, 30) / timed(native, 100))
    print(f"---- 400-step loop against plain Python (median of {repeats} rounds)")
    for name, values in ratios.items():
        print(f"{name:<34} {statistics.median(values):6.2f}x  ({min(values):.2f}-{max(values):.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--top", type=int, default=15, help="functions shown per gesture")
    parser.add_argument("--repeats", type=int, default=7, help="rounds of the floor's measurements")
    arguments = parser.parse_args()
    source = five_puts()

    def turn() -> object:
        return execute(Board(), source, Rules())

    def loop() -> object:
        return run_program(LOOP, {}, {})

    for gesture in (turn, loop):
        gesture()  # warm-up: the compiled programs cached, as for the app's second and later turns
    profile("code turn: 5 puts", turn, 500, arguments.top)
    profile("400-step loop", loop, 50, arguments.top)
    floor(arguments.repeats)


if __name__ == "__main__":
    main()
