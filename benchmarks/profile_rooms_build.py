"""Profile a rooms benchmark build with pictures in one process (cProfile): where does a room's time go?

    python -m benchmarks.profile_rooms_build --rooms 20 --per-task 4 --top 40

Before issue 28 (20 rooms, one process, on the shared 2-core machine): 76% of the time drew the pictures
(each view made its room's scene items and actors afresh: 54%, of which adding about 80 actors 21% and
splitting meshes by colour 11%; PNG encoding 24%), 14% sampled views (the pixel filter's id renders 9%). Now
a room's items and actors are made once for both views and both id renders of an attempt share one mesh, and
``build_benchmark`` spreads rooms and pictures over worker processes (``benchmarks/rooms.py`` times that).
cProfile slows Python-heavy code (pyvista's ``add_mesh``) more than VTK's C++ render, so read the shares, not
the seconds.

Then (issue 28, last row), in CPU-seconds a room measured with ``time.process_time`` (every thread of the
process, llvmpipe's included; medians, the shared machine at load 7-10): the two 1024x768 views cost 0.27 to
render lit by VTK with 4x MSAA, 0.13 lit without MSAA, 0.05 unlit (llvmpipe's five-light fragment shader
and multisampling were the cost; a merged mesh per room or fewer actors changed nothing: draw calls are
cheap); their PNGs 0.15 with ``optimize`` and 0.04 at zlib level 6; the room's items 0.03; stage 1 (views
sampled, pixel filter, candidates) 0.09, of which the pixel filter's id renders 0.045. ``LP_NUM_THREADS`` at
0 or 1 changed no CPU figure beyond the noise. Now the views are coloured per face on the CPU and drawn
unlit without MSAA, the files written at level 6: a build in one process went from 0.67-0.72 to 0.27-0.31
CPU-s a room (24 rooms).
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
