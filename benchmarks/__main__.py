"""``make bench``: speed of the blocks engine, oracle and scripted episodes; then rooms, boards, live agents, large
runs (issue 27), the app.

Each figure is printed with a baseline measured in the same process, so the ratio means something on any
machine: engine moves against a bare board copy, our oracle against brute force (try every legal move and
keep those that reduce the distance), a scripted episode against an episode of oracle builders (no language).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from benchmarks import timed
from simlab.core.recording import dumps
from simlab.testing import play
from simlab.worlds import get_family
from simlab.worlds.blocks.agents import legal_moves
from simlab.worlds.blocks.generator import build_order, generate_structures
from simlab.worlds.blocks.model import Board
from simlab.worlds.blocks.oracle import distance, oracle_moves


def row(name: str, seconds: float, baseline_name: str, baseline: float, unit: str = "ms") -> None:
    scale = 1000 if unit == "ms" else 1e6
    print(
        f"{name:<38} {seconds * scale:10.3f} {unit}   baseline {baseline_name:<28} "
        f"{baseline * scale:10.3f} {unit}   ratio {seconds / baseline:6.2f}x"
    )


def brute_force_oracle(board: Board, target: Board) -> list[object]:
    """The obvious oracle: every legal move whose result is closer to the target."""
    here = distance(board, target)
    out = []
    for move in legal_moves(board):
        trial = board.copy()
        trial.apply(move)
        if distance(trial, target) < here:
            out.append(move)
    return out


def bench_engine(structures: list) -> None:
    orders = [(s.board, build_order(s)) for s in structures]
    moves = sum(len(order) for _, order in orders)

    def build_all() -> None:
        for _, order in orders:
            board = Board()
            for move in order:
                board.apply(move)

    def copy_boards() -> None:
        for _ in range(moves):
            Board().copy()

    t = timed(build_all, 20) / moves
    row("engine: one legal move (apply)", t, "board copy", timed(copy_boards, 20) / moves, "us")
    print(f"{'':38} {1 / t:10.0f} moves/s")


def bench_oracle(structures: list) -> None:
    states = []
    for s in structures:
        board = Board()
        for move in build_order(s)[:8]:
            board.apply(move)
            states.append((board.copy(), s.board))
    ours = timed(lambda: [oracle_moves(b, t) for b, t in states], 10) / len(states)
    brute = timed(lambda: [brute_force_oracle(b, t) for b, t in states], 3) / len(states)
    row("oracle: one call", ours, "brute-force oracle", brute)


def bench_episodes() -> None:
    family = get_family("blocks")
    tasks = family.tasks.generate(10, 0)

    def episodes(agents: list[str]) -> Callable[[], None]:
        return lambda: [play(family, task, agents, 0, {"turns": 20}) for task in tasks]

    scripted = timed(episodes(["director=oracle", "builder=scripted"]), 3) / len(tasks)
    oracle = timed(episodes(["director=silent", "builder=oracle"]), 3) / len(tasks)
    row("scripted 20-turn episode", scripted, "silent directors+oracle", oracle)
    print(f"{'':38} {1 / scripted:10.1f} episodes/s")
    episode = play(family, tasks[0], ["director=oracle", "builder=scripted"], 0, {"turns": 20})
    size = len(dumps(episode.to_json()))
    print(f"{'recorded episode size':<38} {size / 1024:10.1f} KiB ({len(episode.events)} events)")


def main() -> int:
    structures = generate_structures(20, 0)
    print(f"SimLab benchmarks (Python {sys.version.split()[0]}); medians, baselines run in this process\n")
    bench_engine(structures)
    bench_oracle(structures)
    bench_episodes()
    print()
    from benchmarks import rooms

    rooms.main()
    from benchmarks import editor

    editor.main()
    print()
    from benchmarks import boards

    boards.main()
    print()
    from benchmarks import live

    live.main()
    print()
    from benchmarks import search

    search.main()
    from benchmarks import runs

    runs.main()
    bench_gui()
    return 0


def bench_gui() -> None:
    """The desktop app's figures, when a display and the GUI packages are there."""
    import os

    if not os.environ.get("DISPLAY"):
        print("\n(desktop app benchmarks skipped: no display; `make bench` runs them under Xvfb)")
        return
    from benchmarks import gui

    print()
    gui.main()


if __name__ == "__main__":
    sys.exit(main())
