"""Boards world speed: the robot-code interpreter against the same API calls made directly from Python, its
statement rate on a loop program, and a scripted episode against one where the oracle robot builds at once.

Baselines run in the same process, so the ratios mean something on any machine.
"""

from __future__ import annotations

from collections.abc import Callable

from benchmarks import paired, row, timed
from simlab.testing import play
from simlab.worlds import get_family
from simlab.worlds.boards.api import execute
from simlab.worlds.boards.interpreter import run_program
from simlab.worlds.boards.model import Board, Placement, Rules, placements_of, put
from simlab.worlds.boards.targets import generate_targets

LOOP = "total = 0\nfor i in range(400):\n    total = total + i * 2\n    total = total - i\n"


def five_placements() -> list[Placement]:
    """The placements of the first generated 5-component target, bottom to top."""
    return placements_of(next(t for t in generate_targets(50, 0) if t.components == 5).board())


def five_puts() -> str:
    """The robot's code that builds that target: one put per line."""
    return "\n".join(p.code() for p in five_placements())


def bench_code() -> None:
    """A code turn that builds a 5-component target, through the interpreter and directly."""
    source = five_puts()
    placements = five_placements()

    def direct() -> None:
        board = Board()
        for p in placements:
            put(board, p.shape, p.colour, p.x, p.y)

    interpreted, called = paired(lambda: execute(Board(), source, Rules()), direct)
    row("code turn: 5 puts (interpreter)", interpreted, "the same puts called directly", called, "us")


def bench_statements() -> None:
    def native() -> None:
        total = 0
        for i in range(400):
            total = total + i * 2
            total = total - i

    seconds, plain = paired(lambda: run_program(LOOP, {}, {}), native)
    row("interpreter: 400-step loop", seconds, "the loop in Python", plain)
    steps = run_program(LOOP, {}, {}).statements  # as the interpreter counts them against its limit
    print(f"{'':38} {steps / seconds:10.0f} statements/s")


def bench_episodes() -> None:
    family = get_family("boards")
    tasks = family.tasks.generate(20, 0)

    def episodes(agents: list[str]) -> Callable[[], None]:
        return lambda: [play(family, task, agents, 0, {}) for task in tasks]

    scripted = timed(episodes(["programmer=oracle", "robot=scripted"]), 3) / len(tasks)
    oracle = timed(episodes(["programmer=oracle", "robot=oracle"]), 3) / len(tasks)
    row("scripted boards episode", scripted, "oracle robot (one code turn)", oracle)
    print(f"{'':38} {1 / scripted:10.1f} episodes/s")


def main() -> None:
    print("boards")
    bench_code()
    bench_statements()
    bench_episodes()
