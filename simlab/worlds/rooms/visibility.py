"""Which objects each agent sees: bounding-box corner ray casting (Cosmic, supplementary 7.1) and view sampling.

An object is visible from a camera when at least three of the eight corners of its axis-aligned bounding box
are inside the camera's frustum and a ray from the camera to the corner is not blocked by other geometry. A
ray is unblocked when its first hit is no nearer than the corner minus :data:`CORNER_EPSILON` (corners lie on
the floor, on walls, or on the object's own surface) or when the first hit is the object itself.

:class:`SceneGeometry` concatenates the catalog meshes and the room shell once per scene and keeps a BVH
(Embree through ``embreex``); every corner ray of every object is then cast in one ``intersects_first`` call.
:func:`naive_visible_objects` is the per-triangle Möller–Trumbore baseline that gives the same answer.

:func:`sample_views` places the Answerer and the Helper at eye level with a fixed pitch and a uniform yaw and
resamples until the two visibility sets overlap but each keeps objects of its own (paper 7.1). The paper's
exact eye height was lost in our copy of the text; 1.6 m (a standing adult's eyes) is the default.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import trimesh

from simlab.core.seeding import rng
from simlab.worlds.rooms.model import Camera, RoomObject, Scene, Vec3

CORNER_EPSILON = 0.05
"""A corner counts as reached when the first hit is at most this much (metres) nearer than the corner."""
REFERENCE_SIZE: tuple[int, int] = (1280, 720)
REFERENCE_MIN_PIXELS = 1000
"""The reference pipeline keeps objects covering at least 1,000 pixels of a 1280x720 view."""
FLAT_HEIGHT = 0.05
"""Floor objects lower than this (rugs, mats) neither block a camera position nor count towards coverage."""
SHELL = -1
NO_HIT = -2

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

FirstHits = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
"""``(origins, unit directions) -> (distance to first hit or inf, face index or -1)`` for a batch of rays."""


# ---- meshes ------------------------------------------------------------------------------------------


def object_mesh(obj: RoomObject) -> trimesh.Trimesh:
    """The catalog mesh of ``obj`` in world coordinates (face colours set). Tests may replace this hook."""
    from simlab.worlds.rooms import catalog

    return catalog.object_mesh(obj)


def room_shell(scene: Scene) -> list[tuple[str, trimesh.Trimesh, tuple[int, int, int]]]:
    """The room's floor and walls as ``(name, mesh, rgb)``. Tests may replace this hook."""
    from simlab.worlds.rooms import catalog

    return catalog.room_shell(scene)


def scene_mesh(scene: Scene) -> tuple[trimesh.Trimesh, np.ndarray]:
    """All object meshes and the shell as one mesh, and each face's owner: object index, or -1 for the shell."""
    parts = [object_mesh(obj) for obj in scene.objects]
    owners = [np.full(len(mesh.faces), k, dtype=np.int64) for k, mesh in enumerate(parts)]
    for _, mesh, _ in room_shell(scene):
        parts.append(mesh)
        owners.append(np.full(len(mesh.faces), SHELL, dtype=np.int64))
    merged = trimesh.util.concatenate(parts)
    return merged, np.concatenate(owners)


class SceneGeometry:
    """A scene's triangles, the owner of each face and a ray intersector, built once per scene.

    ``backend`` is ``"embree"`` when embreex is installed, else ``"python"`` (trimesh's ray_triangle module,
    about a thousand times slower)."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self.mesh, self.face_owner = scene_mesh(scene)
        self.intersector, self.backend = _intersector(self.mesh)
        self._normals = np.asarray(self.mesh.face_normals, dtype=float)
        self._anchors = np.asarray(self.mesh.triangles[:, 0, :], dtype=float)

    def first_hits(self, origins: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Distance to the first hit (inf when none) and the face hit (-1 when none), one query for all rays."""
        faces = np.asarray(self.intersector.intersects_first(origins, directions), dtype=np.int64)
        distance = np.full(len(faces), np.inf)
        hit = faces >= 0
        if hit.any():
            n = self._normals[faces[hit]]
            along = np.einsum("ij,ij->i", n, directions[hit])
            gap = np.einsum("ij,ij->i", n, self._anchors[faces[hit]] - origins[hit])
            with np.errstate(divide="ignore", invalid="ignore"):
                distance[hit] = np.where(np.abs(along) > 1e-12, gap / along, 0.0)
        return distance, faces


def _intersector(mesh: trimesh.Trimesh) -> tuple[Any, str]:
    try:
        from trimesh.ray.ray_pyembree import RayMeshIntersector

        return RayMeshIntersector(mesh), "embree"
    except ImportError:  # trimesh's embree module imports embreex at the top
        from trimesh.ray.ray_triangle import RayMeshIntersector as PythonIntersector

        return PythonIntersector(mesh), "python"


def naive_first_hits(triangles: np.ndarray) -> FirstHits:
    """A :data:`FirstHits` testing every ray against every triangle (Möller–Trumbore, one ray at a time)."""
    v0 = triangles[:, 0, :]
    e1 = triangles[:, 1, :] - v0
    e2 = triangles[:, 2, :] - v0

    def first_hits(origins: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        distance = np.full(len(origins), np.inf)
        faces = np.full(len(origins), -1, dtype=np.int64)
        for k, (origin, direction) in enumerate(zip(origins, directions, strict=True)):
            t = _moller_trumbore(origin, direction, v0, e1, e2)
            best = int(np.argmin(t))
            if np.isfinite(t[best]):
                distance[k], faces[k] = t[best], best
        return distance, faces

    return first_hits


def _moller_trumbore(origin: np.ndarray, direction: np.ndarray, v0: np.ndarray, e1: np.ndarray, e2: np.ndarray):
    """Distance along the ray to each triangle (inf where missed), vectorised over triangles."""
    p = np.cross(direction, e2)
    det = np.einsum("ij,ij->i", e1, p)
    ok = np.abs(det) > 1e-12
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    s = origin - v0
    u = np.einsum("ij,ij->i", s, p) * inv
    q = np.cross(s, e1)
    v = (q @ direction) * inv
    t = np.einsum("ij,ij->i", e2, q) * inv
    hit = ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 1e-9)
    return np.where(hit, t, np.inf)


# ---- frustum and corner rays -------------------------------------------------------------------------


@dataclass(frozen=True)
class CornerRay:
    """One bounding-box corner as seen from a camera: inside the frustum?, blocked?, and what the ray hit
    first (an object id, ``"shell"``, or None when it hit nothing)."""

    corner: Vec3
    in_frustum: bool
    blocked: bool
    hit_object: str | None


def camera_frame(camera: Camera, points: np.ndarray) -> np.ndarray:
    """``points`` (n, 3) in the camera's frame: x right, y up, z backwards (as :meth:`Camera.to_camera_frame`)."""
    basis = np.array([camera.right, camera.up, camera.forward], dtype=float)
    local = (np.asarray(points, dtype=float) - np.asarray(camera.position, dtype=float)) @ basis.T
    local[:, 2] *= -1.0
    return local


def frustum_mask(camera: Camera, points: np.ndarray) -> np.ndarray:
    """Which ``points`` (n, 3) lie inside ``camera``'s viewing frustum (vertical fov, aspect width/height)."""
    local = camera_frame(camera, points)
    depth = -local[:, 2]
    tan_v = math.tan(math.radians(camera.fov) / 2)
    tan_h = tan_v * camera.width / camera.height
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = (np.abs(local[:, 0]) <= tan_h * depth) & (np.abs(local[:, 1]) <= tan_v * depth)
    return (depth > 1e-9) & inside


def in_frustum(camera: Camera, point: Vec3) -> bool:
    """True when ``point`` is in front of ``camera`` and inside its field of view."""
    return bool(frustum_mask(camera, np.asarray([point], dtype=float))[0])


@dataclass(frozen=True)
class _Rays:
    """Corner rays of many objects from one camera: targets, owner object index, frustum flags."""

    corners: np.ndarray
    owner: np.ndarray
    inside: np.ndarray

    @classmethod
    def of(cls, scene: Scene, camera: Camera, indices: Sequence[int]) -> _Rays:
        corners = np.array([c for k in indices for c in scene.objects[k].corners()], dtype=float).reshape(-1, 3)
        owner = np.repeat(np.asarray(indices, dtype=np.int64), 8)
        return cls(corners, owner, frustum_mask(camera, corners))


def _judge(origins: np.ndarray, targets: np.ndarray, owner: np.ndarray, first_hits: FirstHits, face_owner):
    """Cast one ray per (origin, target); returns (reached-or-hit-itself flags, owner of each first hit)."""
    offsets = targets - origins
    reach = np.linalg.norm(offsets, axis=1)
    distance, faces = first_hits(origins, offsets / np.maximum(reach, 1e-12)[:, None])
    hit_owner = np.where(faces >= 0, face_owner[np.maximum(faces, 0)], NO_HIT)
    return (distance >= reach - CORNER_EPSILON) | (hit_owner == owner), hit_owner


def _visible_ids(scene: Scene, cameras: Sequence[Camera], first_hits: FirstHits, face_owner, min_corners: int):
    """Visible object ids for each camera; the in-frustum corner rays of all cameras go in one query."""
    indices = range(len(scene.objects))
    batches = [_Rays.of(scene, camera, indices) for camera in cameras]
    starts = np.concatenate(
        [np.tile(c.position, (int(b.inside.sum()), 1)) for c, b in zip(cameras, batches, strict=True)]
    )
    targets = np.concatenate([b.corners[b.inside] for b in batches])
    owner = np.concatenate([b.owner[b.inside] for b in batches])
    good, _ = _judge(starts.reshape(-1, 3), targets.reshape(-1, 3), owner, first_hits, face_owner)
    result, start = [], 0
    for b in batches:
        count = int(b.inside.sum())
        votes = np.bincount(b.owner[b.inside][good[start : start + count]], minlength=len(scene.objects))
        result.append(sorted(scene.objects[k].id for k in np.flatnonzero(votes >= min_corners)))
        start += count
    return result


def corner_rays(geom: SceneGeometry, camera: Camera, obj: RoomObject) -> list[CornerRay]:
    """The eight corner rays of ``obj`` from ``camera``; corners outside the frustum are still cast."""
    k = next(i for i, o in enumerate(geom.scene.objects) if o.id == obj.id)
    rays = _Rays.of(geom.scene, camera, [k])
    origins = np.tile(np.asarray(camera.position, dtype=float), (8, 1))
    unblocked, hit_owner = _judge(origins, rays.corners, rays.owner, geom.first_hits, geom.face_owner)
    names = {SHELL: "shell", NO_HIT: None}
    return [
        CornerRay(
            corner=(float(c[0]), float(c[1]), float(c[2])),
            in_frustum=bool(inside),
            blocked=not bool(free),
            hit_object=names[int(h)] if h < 0 else geom.scene.objects[int(h)].id,
        )
        for c, inside, free, h in zip(rays.corners, rays.inside, unblocked, hit_owner, strict=True)
    ]


def visible_objects(geom: SceneGeometry, camera: Camera, min_corners: int = 3) -> list[str]:
    """Sorted ids of the objects with at least ``min_corners`` corners in the frustum and unblocked."""
    return visible_for_cameras(geom, [camera], min_corners)[0]


def visible_for_cameras(geom: SceneGeometry, cameras: Sequence[Camera], min_corners: int = 3) -> list[list[str]]:
    """:func:`visible_objects` for several cameras with a single ray query (both agents at once)."""
    return _visible_ids(geom.scene, cameras, geom.first_hits, geom.face_owner, min_corners)


def naive_visible_objects(scene: Scene, camera: Camera, min_corners: int = 3) -> list[str]:
    """:func:`visible_objects` without a BVH: every ray tested against every triangle (the benchmark baseline)."""
    mesh, face_owner = scene_mesh(scene)
    first_hits = naive_first_hits(np.asarray(mesh.triangles, dtype=float))
    return _visible_ids(scene, [camera], first_hits, face_owner, min_corners)[0]


# ---- pixels ------------------------------------------------------------------------------------------


def min_pixels(size: tuple[int, int]) -> int:
    """The reference's 1,000-pixel threshold at 1280x720, scaled to an image of ``size`` by pixel area."""
    area = REFERENCE_SIZE[0] * REFERENCE_SIZE[1]
    return max(1, round(REFERENCE_MIN_PIXELS * size[0] * size[1] / area))


def pixel_counts(scene: Scene, camera: Camera, size: tuple[int, int] = (640, 480)) -> dict[str, int]:
    """How many pixels of an id render of ``size`` each object covers (0 when hidden), by id."""
    from simlab.render.rooms_render import render_ids

    ids = render_ids(scene, camera, size)
    counts = np.bincount(ids[ids >= 0].ravel(), minlength=len(scene.objects))
    return {obj.id: int(counts[k]) for k, obj in enumerate(scene.objects)}


def agreement(
    scene: Scene, camera: Camera, size: tuple[int, int] = (640, 480), geom: SceneGeometry | None = None
) -> float:
    """Share of the scene's objects on which corner visibility and "covers >= min_pixels(size)" agree."""
    if not scene.objects:
        return 1.0
    by_corners = set(visible_objects(geom or SceneGeometry(scene), camera))
    threshold = min_pixels(size)
    counts = pixel_counts(scene, camera, size)
    same = sum((obj.id in by_corners) == (counts[obj.id] >= threshold) for obj in scene.objects)
    return same / len(scene.objects)


# ---- view pairs --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ViewPair:
    """The Answerer's and the Helper's cameras and the (sorted) ids each sees."""

    answerer: Camera
    helper: Camera
    answerer_visible: list[str]
    helper_visible: list[str]

    @property
    def shared(self) -> list[str]:
        return sorted(set(self.answerer_visible) & set(self.helper_visible))

    @property
    def answerer_only(self) -> list[str]:
        return sorted(set(self.answerer_visible) - set(self.helper_visible))

    @property
    def helper_only(self) -> list[str]:
        return sorted(set(self.helper_visible) - set(self.answerer_visible))

    def to_json(self) -> dict[str, Any]:
        return {
            "answerer": self.answerer.to_json(),
            "helper": self.helper.to_json(),
            "answerer_visible": list(self.answerer_visible),
            "helper_visible": list(self.helper_visible),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ViewPair:
        return cls(
            Camera.from_json(data["answerer"]),
            Camera.from_json(data["helper"]),
            [str(x) for x in data["answerer_visible"]],
            [str(x) for x in data["helper_visible"]],
        )


def is_flat(obj: RoomObject) -> bool:
    """A floor covering (rug, mat): lower than :data:`FLAT_HEIGHT`."""
    return obj.bbox[1][2] - obj.bbox[0][2] < FLAT_HEIGHT


def coverage_pool(scene: Scene) -> list[str]:
    """The objects coverage is measured over: all but floor coverings, which lie under furniture and are
    rarely the point of a question (they may still be visible and be asked about)."""
    return [obj.id for obj in scene.objects if not is_flat(obj)]


def sample_views(scene: Scene, seed: int, settings: Mapping[str, Any] | None = None) -> ViewPair | None:
    """Answerer and Helper cameras whose visibility sets satisfy the paper's constraints, or None.

    Each attempt draws, from ``rng(seed, scene.id, "views", attempt)``, a uniform yaw per camera and
    ``stand_back`` free floor spots (``wall_clearance`` from the walls, outside the footprint, grown by
    ``object_clearance``, of every non-flat object reaching below eye level, ``min_separation`` from the other
    camera), and keeps the spot with the most room ahead: like a photographer stepping back, which makes an
    acceptable pair about ten times likelier than a uniform spot at a 60-degree field of view. The pair is kept
    when it shares >= ``min_shared`` objects, each camera sees >= ``min_exclusive`` of its own and together
    they see >= ``coverage`` of :func:`coverage_pool`. With ``pixel_filter`` the sets also drop objects
    under :func:`min_pixels` in an id render of ``id_size`` (too small or mostly occluded) and the
    constraints are checked again."""
    return sample_views_counted(scene, seed, settings)[0]


def sample_views_counted(
    scene: Scene, seed: int, settings: Mapping[str, Any] | None = None
) -> tuple[ViewPair | None, int]:
    """:func:`sample_views` and the number of attempts it drew (for statistics)."""
    cfg = {**DEFAULT_VIEW_SETTINGS, **(settings or {})}
    geom = SceneGeometry(scene)
    pool = set(coverage_pool(scene))
    for attempt in range(int(cfg["max_attempts"])):
        cameras = _draw_cameras(scene, rng(seed, scene.id, "views", attempt), cfg)
        if cameras is None:
            continue
        seen = visible_for_cameras(geom, cameras, int(cfg["min_corners"]))
        if not _acceptable(seen, pool, cfg):
            continue
        if cfg["pixel_filter"]:
            seen = [
                _pixel_filtered(scene, cam, ids, tuple(cfg["id_size"])) for cam, ids in zip(cameras, seen, strict=True)
            ]
            if not _acceptable(seen, pool, cfg):
                continue
        return ViewPair(cameras[0], cameras[1], seen[0], seen[1]), attempt + 1
    return None, int(cfg["max_attempts"])


def view_constraints(pair: ViewPair, scene: Scene, settings: Mapping[str, Any] | None = None) -> bool:
    """True when ``pair``'s visibility sets meet :func:`sample_views`' overlap and coverage constraints."""
    cfg = {**DEFAULT_VIEW_SETTINGS, **(settings or {})}
    return _acceptable([pair.answerer_visible, pair.helper_visible], set(coverage_pool(scene)), cfg)


def _acceptable(seen: Sequence[Sequence[str]], pool: set[str], cfg: Mapping[str, Any]) -> bool:
    a, b = set(seen[0]), set(seen[1])
    if len(a & b) < cfg["min_shared"] or min(len(a - b), len(b - a)) < cfg["min_exclusive"]:
        return False
    return len((a | b) & pool) >= cfg["coverage"] * len(pool)


def _pixel_filtered(scene: Scene, camera: Camera, ids: Sequence[str], size: tuple[int, int]) -> list[str]:
    counts = pixel_counts(scene, camera, size)
    threshold = min_pixels(size)
    return [i for i in ids if counts[i] >= threshold]


def _draw_cameras(scene: Scene, r: Any, cfg: Mapping[str, Any]) -> list[Camera] | None:
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


def _free_spot(scene: Scene, r: Any, cfg: Mapping[str, Any], other: tuple[float, float] | None, tries: int = 40):
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
