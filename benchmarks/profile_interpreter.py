"""Where the boards robot-code interpreter spends its time: cProfile of the two gestures ``benchmarks/boards.py``
times (a code turn of 5 puts through ``execute``, and the 400-step loop through ``run_program``).

Run ``python -m benchmarks.profile_interpreter [--top N]``; it prints the functions with the most own time for
each gesture, so a change to the interpreter can be aimed at what costs.
"""

from __future__ import annotations

import argparse

from benchmarks import profile
from benchmarks.boards import LOOP, five_puts
from simlab.worlds.boards.api import execute
from simlab.worlds.boards.interpreter import run_program
from simlab.worlds.boards.model import Board, Rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--top", type=int, default=15, help="functions shown per gesture")
    top = parser.parse_args().top
    source = five_puts()

    def turn() -> object:
        return execute(Board(), source, Rules())

    def loop() -> object:
        return run_program(LOOP, {}, {})

    for gesture in (turn, loop):
        gesture()  # warm-up: the compiled programs cached, as for the app's second and later turns
    profile("code turn: 5 puts", turn, 500, top)
    profile("400-step loop", loop, 50, top)


if __name__ == "__main__":
    main()
