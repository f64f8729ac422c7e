"""Where the Answerer and the Helper stand: camera pairs sampled until their views meet the paper's constraints.

:func:`sample_views` places both agents at eye level with a fixed pitch and a uniform yaw and resamples until
the two visibility sets (:mod:`simlab.worlds.rooms.visibility`) overlap but each keeps objects of its own
(paper 7.1). The paper's exact eye height was lost in our copy of the text; 1.6 m (a standing adult's eyes)
is the default. With the pixel filter on, objects covering too few pixels of an id render are dropped too:
only then is VTK imported (:mod:`simlab.worlds.rooms.render`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from simlab.core.seeding import rng
from simlab.worlds.rooms.model import Camera, Scene
from simlab.worlds.rooms.visibility import SceneGeometry, ViewPair, coverage_pool, is_flat, visible_for_cameras

DEFAULT_VIEW_SETTINGS: dict[str, Any] = {
    "eye_height": 1.6,
    "pitch_deg": -10.0,
    "fov": 60.0,
    "image_size": (1024, 768),
    "wall_clearance": 0.4,
    "object_clearance": 0.15,
    "min_separation": 1.0,
    "min_shared": 2,
    "min_exclusive": 2,
    "coverage": 0.6,
    "stand_back": 8,
    "max_attempts": 200,
    "pixel_filter": True,
    "id_size": (512, 384),
    "min_corners": 3,
}
"""Settings of :func:`sample_views`. ``eye_height`` is our choice (the paper's number is missing from our copy)."""


def sample_views(
    scene: Scene, seed: int, settings: Mapping[str, Any] | None = None, geom: SceneGeometry | None = None
) -> ViewPair | None:
    """Answerer and Helper cameras whose visibility sets satisfy the paper's constraints, or None.

    Each attempt draws, from ``rng(seed, scene.id, "views", attempt)``, a uniform yaw per camera and
    ``stand_back`` free floor spots (``wall_clearance`` from the walls, outside the footprint, grown by
    ``object_clearance``, of every non-flat object reaching below eye level, ``min_separation`` from the other
    camera), and keeps the spot with the most room ahead: like a photographer stepping back, which makes an
    acceptable pair about ten times likelier than a uniform spot at a 60-degree field of view. The pair is kept
    when it shares >= ``min_shared`` objects, each camera sees >= ``min_exclusive`` of its own and together
    they see >= ``coverage`` of :func:`coverage_pool`. With ``pixel_filter`` the sets also drop objects
    under :func:`min_pixels` in an id render of ``id_size`` (too small or mostly occluded) and the
    constraints are checked again. ``geom``: the scene's geometry when the caller has it (a benchmark build
    samples a room up to three times)."""
    return sample_views_counted(scene, seed, settings, geom)[0]


def sample_views_counted(
    scene: Scene, seed: int, settings: Mapping[str, Any] | None = None, geom: SceneGeometry | None = None
) -> tuple[ViewPair | None, int]:
    """:func:`sample_views` and the number of attempts it drew (for statistics)."""
    cfg = {**DEFAULT_VIEW_SETTINGS, **(settings or {})}
    geom = geom if geom is not None else SceneGeometry(scene)
    pool = set(coverage_pool(scene))
    for attempt, cameras, seen in corner_accepted(geom, seed, cfg, pool):
        if cfg["pixel_filter"]:
            seen = pixel_filtered(geom, cameras, seen, tuple(cfg["id_size"]))
            if not acceptable(seen, pool, cfg):
                continue
        return ViewPair(cameras[0], cameras[1], seen[0], seen[1]), attempt + 1
    return None, int(cfg["max_attempts"])


def corner_accepted(
    geom: SceneGeometry, seed: int, cfg: Mapping[str, Any], pool: set[str]
) -> Iterator[tuple[int, list[Camera], list[list[str]]]]:
    """:func:`sample_views`' attempts (``cfg``: every setting) whose corner-visible sets meet the constraints
    over the coverage ``pool``: each attempt's number, its two cameras and their sets, before the pixel filter."""
    for attempt in range(int(cfg["max_attempts"])):
        cameras = _draw_cameras(geom.scene, rng(seed, geom.scene.id, "views", attempt), cfg)
        if cameras is None:
            continue
        seen = visible_for_cameras(geom, cameras, int(cfg["min_corners"]))
        if acceptable(seen, pool, cfg):
            yield attempt, cameras, seen


def view_constraints(pair: ViewPair, scene: Scene, settings: Mapping[str, Any] | None = None) -> bool:
    """True when ``pair``'s visibility sets meet :func:`sample_views`' overlap and coverage constraints."""
    cfg = {**DEFAULT_VIEW_SETTINGS, **(settings or {})}
    return acceptable([pair.answerer_visible, pair.helper_visible], set(coverage_pool(scene)), cfg)


def acceptable(seen: Sequence[Sequence[str]], pool: set[str], cfg: Mapping[str, Any]) -> bool:
    """True when the two visibility sets ``seen`` meet the overlap constraints and cover enough of ``pool``."""
    a, b = set(seen[0]), set(seen[1])
    if len(a & b) < cfg["min_shared"] or min(len(a - b), len(b - a)) < cfg["min_exclusive"]:
        return False
    return len((a | b) & pool) >= float(cfg["coverage"]) * len(pool)


def pixel_filtered(
    geom: SceneGeometry, cameras: Sequence[Camera], seen: Sequence[Sequence[str]], size: tuple[int, int]
) -> list[list[str]]:
    """Each camera's ``seen`` ids that cover at least :func:`min_pixels` of an id render of ``size``."""
    from simlab.worlds.rooms.render import min_pixels, pixel_counts_many  # VTK only with the pixel filter on

    threshold = min_pixels(size)
    counts = pixel_counts_many(geom.scene, cameras, size, geom)
    return [[i for i in ids if n[i] >= threshold] for ids, n in zip(seen, counts, strict=True)]


def _draw_cameras(scene: Scene, r: random.Random, cfg: Mapping[str, Any]) -> list[Camera] | None:
    """Two cameras from one attempt's stream, or None when no free floor spot is found."""
    width, height = cfg["image_size"]
    eye, pitch, fov = float(cfg["eye_height"]), math.radians(float(cfg["pitch_deg"])), float(cfg["fov"])
    cameras: list[Camera] = []
    for _ in range(2):
        yaw = r.uniform(0.0, 2 * math.pi)
        other = cameras[0].position[:2] if cameras else None
        spots = [p for p in (_free_spot(scene, r, cfg, other) for _ in range(int(cfg["stand_back"]))) if p]
        if not spots:
            return None
        x, y = max(spots, key=lambda p: _room_ahead(scene, p, yaw))
        cameras.append(Camera((x, y, eye), yaw, pitch, fov, int(width), int(height)))
    return cameras


def _room_ahead(scene: Scene, spot: tuple[float, float], yaw: float) -> float:
    """Distance from ``spot`` to the wall straight ahead along ``yaw``."""
    c, s = math.cos(yaw), math.sin(yaw)
    reach = [(scene.width - spot[0]) / c if c > 1e-9 else (-spot[0] / c if c < -1e-9 else math.inf)]
    reach.append((scene.depth - spot[1]) / s if s > 1e-9 else (-spot[1] / s if s < -1e-9 else math.inf))
    return min(reach)


def _free_spot(
    scene: Scene, r: random.Random, cfg: Mapping[str, Any], other: tuple[float, float] | None, tries: int = 40
) -> tuple[float, float] | None:
    """A floor point away from walls, floor objects and ``other``; None after ``tries`` misses."""
    margin, clear = float(cfg["wall_clearance"]), float(cfg["object_clearance"])
    if scene.width <= 2 * margin or scene.depth <= 2 * margin:
        return None
    eye = float(cfg["eye_height"])
    blockers = [o.bbox for o in scene.objects if not is_flat(o) and o.bbox[0][2] < eye]
    for _ in range(tries):
        x, y = r.uniform(margin, scene.width - margin), r.uniform(margin, scene.depth - margin)
        if any(lo[0] - clear <= x <= hi[0] + clear and lo[1] - clear <= y <= hi[1] + clear for lo, hi in blockers):
            continue
        if other is not None and math.hypot(x - other[0], y - other[1]) < float(cfg["min_separation"]):
            continue
        return (x, y)
    return None
