"""Profile a rooms benchmark build with pictures: where does a room's time go?

    python -m benchmarks.profile_rooms_build --rooms 20 --per-task 4 --top 40     # cProfile, one process
    python -m benchmarks.profile_rooms_build --phases --rooms 36 --per-task 10    # CPU-ms a room per phase
    python -m benchmarks.profile_rooms_build --timeline --rooms 240 --per-task 67 # the parent's wall timeline

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

Then (``--phases``, 36 rooms, 35 with pictures, CPU-ms a room, before -> after): stage 1 80 -> 68-72 (the
room's geometry 12.6 -> 5.5: built once for its three samplings; the pixel filter's id renders 42-46, two
512x384 frames of llvmpipe a sampling, left as they are); stage 2 168 -> 74 (the items and their actors 31
and 36 -> 10: a room's surfaces merged into three actors, the same pixels; both views' frames 56 -> 33-38;
PNG 40 -> 23: PNG's up filter in numpy instead of Pillow's five filters a row; zlib levels 4 and 5 took as
long as 6, 1 to 3 half as long for files 70% bigger); in all 255 -> 149.
``--timeline`` (240 rooms, two workers) showed the parent's serial work between the stages: choosing the
questions 2.8 s (now 0.8: the balance's terms kept between picks; 9.8 s at 900 rooms before), writing the
question files 2-10 s (now in a thread while the workers draw), and 7 s before the first picture while new
workers imported VTK again (now one pool of workers serves both stages).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks.rooms import cpu_seconds
from simlab.render import images
from simlab.worlds.rooms import benchmark, cameras, render
from simlab.worlds.rooms.benchmark import build_benchmark

PHASES: list[tuple[ModuleType, str, str]] = [
    (benchmark, "room_offers", "stage 1: a room's views, candidates, features"),
    (benchmark, "generate_scene", "  room generation"),
    (benchmark, "SceneGeometry", "  geometry (meshes, ray intersector)"),
    (benchmark, "sample_views", "  view sampling, pixel filter included"),
    (cameras, "pixel_filtered", "    pixel filter (id renders)"),
    (benchmark, "candidates", "  candidates"),
    (benchmark, "room_pictures", "stage 2: a room's pictures"),
    (render, "room_flat_parts", "  surfaces and their actors"),
    (render, "_render_parts", "  both views' frames"),
    (render, "topdown_map", "  maps"),
    (images, "_png_up", "  PNG encoding"),
]
"""What ``--phases`` times: (module, function, label), looked up in the module at call time."""


def profile(rooms: int, per_task: int, top: int) -> None:
    """Build ``rooms`` rooms' benchmark with pictures in this process under cProfile and print the ``top``
    functions by cumulative time."""
    with tempfile.TemporaryDirectory() as tmp:
        profiler = cProfile.Profile()
        start = time.perf_counter()
        profiler.runcall(build_benchmark, Path(tmp) / "bench", rooms, per_task, 0, images=True, workers=1)
        print(f"{rooms} rooms, {per_task} per task, pictures, one process: {time.perf_counter() - start:.1f} s\n")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(top)


def phases(rooms: int, per_task: int) -> None:
    """Build in this process and print each phase's CPU time (``time.process_time``: every thread, llvmpipe's
    included) per room of the build."""
    spent: dict[str, float] = defaultdict(float)
    for module, name, label in PHASES:
        setattr(module, name, _timed(getattr(module, name), label, spent))
    start = time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        build_benchmark(Path(tmp) / "bench", rooms, per_task, 0, images=True, workers=1)
    total = time.process_time() - start
    print(f"{rooms} rooms, {per_task} per task, one process: {total * 1000 / rooms:.0f} CPU-ms a room")
    for _module, _name, label in PHASES:
        print(f"{label:<46} {spent[label] * 1000 / rooms:7.1f} CPU-ms a room")


def timeline(rooms: int, per_task: int, workers: int) -> None:
    """Build with ``workers`` processes and print when each of the parent's phases ran and how fast rooms and
    pictures came back: a stage with idle workers, or serial work in the parent, shows as a gap."""
    origin = time.perf_counter()
    marks: list[tuple[str, float, float]] = []
    came: dict[str, list[float]] = defaultdict(list)
    for name in ("room_pool", "select", "_write_pictures"):
        setattr(benchmark, name, _marked(getattr(benchmark, name), name, marks, origin))

    def progress(done: int, total: int, text: str) -> None:
        came[text.split()[0]].append(time.perf_counter() - origin)

    with tempfile.TemporaryDirectory() as tmp:
        cpu = cpu_seconds()
        build_benchmark(Path(tmp) / "bench", rooms, per_task, 0, progress=progress, workers=workers)
        wall, cpu = time.perf_counter() - origin, cpu_seconds() - cpu
    print(f"{rooms} rooms, {workers} workers: {wall:.1f} s wall, {cpu:.1f} CPU-s in all processes")
    for name, start, end in marks:
        print(f"  {name:<16} {start:7.2f} -> {end:7.2f} s")
    for what, times in came.items():
        quarters = [times[min(len(times) - 1, k * len(times) // 4)] for k in range(5)]
        print(f"  {what:<16} first, each quarter, last at " + " ".join(f"{t:.1f}" for t in quarters) + " s")


def _timed(fn: Callable[..., Any], label: str, spent: dict[str, float]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[label] += time.process_time() - start

    return timed


def _marked(
    fn: Callable[..., Any], name: str, marks: list[tuple[str, float, float]], origin: float
) -> Callable[..., Any]:
    def marked(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter() - origin
        try:
            return fn(*args, **kwargs)
        finally:
            marks.append((name, start, time.perf_counter() - origin))

    return marked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=20)
    parser.add_argument("--per-task", type=int, default=4)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--phases", action="store_true", help="CPU-ms a room per phase, one process")
    parser.add_argument("--timeline", action="store_true", help="the parent's phases in wall time, with workers")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if args.phases:
        phases(args.rooms, args.per_task)
    elif args.timeline:
        timeline(args.rooms, args.per_task, args.workers)
    else:
        profile(args.rooms, args.per_task, args.top)


if __name__ == "__main__":
    main()
