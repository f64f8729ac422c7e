"""Profile a rooms benchmark build with pictures in one process (cProfile): where does a room's time go?

    python -m benchmarks.profile_rooms_build --rooms 20 --per-task 4 --top 40

Before issue 28 (20 rooms, one process, on the shared 2-core machine): 76% of the time drew the pictures
(each view made its room's scene items and actors afresh: 54%, of which adding about 80 actors 21% and
splitting meshes by colour 11%; PNG encoding 24%), 14% sampled views (the pixel filter's id renders 9%). Now
a room's items and actors are made once for both views and both id renders of an attempt share one mesh, and
``build_benchmark`` spreads rooms and pictures over worker processes (``benchmarks/rooms.py`` times that).
cProfile slows Python-heavy code (pyvista's ``add_mesh``) more than VTK's C++ render, so read the shares, not
the seconds.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
import time
from pathlib import Path

from simlab.worlds.rooms.benchmark import build_benchmark


def profile(rooms: int, per_task: int, top: int) -> None:
    """Build ``rooms`` rooms' benchmark with pictures in this process under cProfile and print the ``top``
    functions by cumulative time."""
    with tempfile.TemporaryDirectory() as tmp:
        profiler = cProfile.Profile()
        start = time.perf_counter()
        profiler.runcall(build_benchmark, Path(tmp) / "bench", rooms, per_task, 0, images=True, workers=1)
        print(f"{rooms} rooms, {per_task} per task, pictures, one process: {time.perf_counter() - start:.1f} s\n")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=20)
    parser.add_argument("--per-task", type=int, default=4)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    profile(args.rooms, args.per_task, args.top)


if __name__ == "__main__":
    main()
