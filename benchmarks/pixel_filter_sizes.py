"""The rooms pixel filter's id render at several sizes: which is the smallest whose verdicts are today's?

``sample_views`` drops from each camera's corner-visible set the objects that cover fewer than
``min_pixels(size)`` pixels of an id render of ``id_size`` (too small or mostly hidden). This replays its
attempts on ``--rooms`` rooms exactly as it draws them and, at every attempt that reaches the pixel filter
(until the one the reference size accepts, where sampling stops), compares each camera's kept set at every
size with the reference size's. A size whose kept sets are all identical gives the same views, hence the same
benchmark, byte for byte. Also the median time of one id render at each size.

    python -m benchmarks.pixel_filter_sizes --rooms 300 --workers 2
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from simlab.core.processes import ordered_map
from simlab.worlds.rooms.cameras import DEFAULT_VIEW_SETTINGS, acceptable, corner_accepted, pixel_filtered
from simlab.worlds.rooms.generator import generate_scene
from simlab.worlds.rooms.visibility import SceneGeometry, coverage_pool

REFERENCE = (512, 384)
"""The id render size the benchmark was built with until the sizes were measured (issue 28)."""
SIZES = ((512, 384), (448, 336), (384, 288), (320, 240), (256, 192), (192, 144), (128, 96))


@dataclass(frozen=True)
class RoomVerdicts:
    """One room: camera verdicts compared per size (how many differ from the reference), render times."""

    cameras: int
    differing: dict[tuple[int, int], int]
    seconds: dict[tuple[int, int], list[float]]


def room_verdicts(seed: int, index: int, sizes: Sequence[tuple[int, int]] = SIZES) -> RoomVerdicts:
    """Replay ``sample_views`` on room ``index`` and compare every pixel-filter verdict at each size."""
    scene = generate_scene(seed, index)
    cfg = dict(DEFAULT_VIEW_SETTINGS)
    geom, pool = SceneGeometry(scene), set(coverage_pool(scene))
    differing = {size: 0 for size in sizes}
    seconds: dict[tuple[int, int], list[float]] = {size: [] for size in sizes}
    cameras_seen = 0
    for _, cameras, seen in corner_accepted(geom, seed, cfg, pool):
        kept = {}
        for size in sizes:
            start = time.perf_counter()
            kept[size] = pixel_filtered(geom, cameras, seen, size)
            seconds[size].append((time.perf_counter() - start) / len(cameras))
        cameras_seen += len(cameras)
        for size in sizes:
            differing[size] += sum(a != b for a, b in zip(kept[size], kept[REFERENCE], strict=True))
        if acceptable(kept[REFERENCE], pool, cfg):
            break  # sample_views stops here: later attempts are never drawn
    return RoomVerdicts(cameras_seen, differing, seconds)


def measure(rooms: int, seed: int, workers: int) -> None:
    """Print, per size, the camera verdicts that differ from the reference's and an id render's median time."""
    results = list(ordered_map(partial(room_verdicts, seed), range(rooms), workers))
    cameras = sum(r.cameras for r in results)
    print(f"pixel filter verdicts on {rooms} rooms (seed {seed}): {cameras} camera verdicts, reference {REFERENCE}")
    for size in SIZES:
        wrong = sum(r.differing[size] for r in results)
        rooms_off = sum(1 for r in results if r.differing[size])
        median = statistics.median(t for r in results for t in r.seconds[size])
        print(
            f"  id render {size[0]}x{size[1]}: {wrong:4d} verdicts differ, in {rooms_off:3d} rooms; "
            f"{median * 1000:6.2f} ms a camera (median)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    measure(args.rooms, args.seed, args.workers)


if __name__ == "__main__":
    main()
