"""Which objects each agent sees: bounding-box corner ray casting (Cosmic, supplementary 7.1).

An object is visible from a camera when at least three of the eight corners of its axis-aligned bounding box
are inside the camera's frustum and a ray from the camera to the corner is not blocked by other geometry. A
ray is unblocked when its first hit is no nearer than the corner minus :data:`CORNER_EPSILON` (corners lie on
the floor, on walls, or on the object's own surface) or when the first hit is the object itself.

:class:`SceneGeometry` concatenates the catalog meshes and the room shell once per scene and keeps a BVH
(Embree through ``embreex``); every corner ray of every object is then cast in one ``intersects_first`` call.
:func:`naive_visible_objects` is the per-triangle Möller–Trumbore baseline that gives the same answer.

:mod:`simlab.worlds.rooms.cameras` places the two agents with these sets; pixel counts from an id render
live in :mod:`simlab.worlds.rooms.render` (this module never needs VTK).
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import trimesh

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


def scene_mesh(scene: Scene, meshes: Sequence[trimesh.Trimesh] | None = None) -> tuple[trimesh.Trimesh, np.ndarray]:
    """All object meshes and the shell as one mesh, and each face's owner: object index, or -1 for the shell.
    ``meshes`` are the objects' meshes in scene order when the caller already has them (the editor keeps
    them between edits), else they are built."""
    parts = list(meshes) if meshes is not None else [object_mesh(obj) for obj in scene.objects]
    owners = [np.full(len(mesh.faces), k, dtype=np.int64) for k, mesh in enumerate(parts)]
    for _, mesh, _ in room_shell(scene):
        parts.append(mesh)
        owners.append(np.full(len(mesh.faces), SHELL, dtype=np.int64))
    return join_meshes(parts), np.concatenate(owners)


def join_meshes(parts: Sequence[trimesh.Trimesh]) -> trimesh.Trimesh:
    """``parts`` as one mesh, their faces in order."""
    # Joined with numpy as trimesh.util.concatenate joins them (the same vertices, faces and each part's face
    # normals), without the colours and metadata it also merges, which nothing here reads: 6 ms of the 7 it took
    # for a 30-object room
    starts = np.cumsum([0, *(len(mesh.vertices) for mesh in parts[:-1])])
    vertices = np.concatenate([np.asarray(mesh.vertices, dtype=float) for mesh in parts])
    faces = np.concatenate(
        [np.asarray(mesh.faces, dtype=np.int64) + start for mesh, start in zip(parts, starts, strict=True)]
    )
    normals = np.concatenate([np.asarray(mesh.face_normals, dtype=float) for mesh in parts])
    return trimesh.Trimesh(vertices, faces, face_normals=normals, process=False)


class RayLayer:
    """Triangles and their ray intersector (a BVH), built once: a :class:`SceneGeometry` casts at one or more.
    :meth:`moved` gives the same triangles moved, cast at through the same BVH."""

    def __init__(self, mesh: trimesh.Trimesh) -> None:
        self._built = mesh
        self.faces = len(mesh.faces)
        self.shift = np.zeros(3)
        self.intersector, self.backend = _intersector(mesh)
        self._normals = np.asarray(mesh.face_normals, dtype=float)
        self._anchors = np.asarray(mesh.triangles[:, 0, :], dtype=float)

    def moved(self, shift: np.ndarray) -> RayLayer:
        """This layer's triangles moved by ``shift`` (metres): rays are cast at the BVH built once, moved back by
        as much. An editor's dragged object keeps the BVH made at its first step (a BVH's build was most of a
        step's ray casting). Embree casts in single precision relative to the mesh's lowest corner and its scale,
        which a move shifts alike: it casts at the triangles a BVH built where they now are would hold, but for
        double-precision rounding of the shift, far below single precision."""
        layer = copy.copy(self)
        layer.shift = self.shift + np.asarray(shift, dtype=float)
        layer.__dict__.pop("mesh", None)  # a mesh made for the old place
        return layer

    @functools.cached_property
    def mesh(self) -> trimesh.Trimesh:
        """The triangles where they are (made on demand for a moved layer: casting never needs it)."""
        if not self.shift.any():
            return self._built
        moved = np.asarray(self._built.vertices, dtype=float) + self.shift
        return trimesh.Trimesh(moved, self._built.faces, face_normals=self._normals, process=False)

    def first_hits(self, origins: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Distance to the first hit (inf when none) and the face hit (-1 when none), one query for all rays."""
        if self.shift.any():
            origins = origins - self.shift
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


class SceneGeometry:
    """A scene's triangles, the owner of each face and a ray intersector, built once per scene.

    ``backend`` is ``"embree"`` when embreex is installed, else ``"python"`` (trimesh's ray_triangle module,
    about a thousand times slower). ``meshes``: the objects' meshes when already built (see :func:`scene_mesh`).
    :meth:`of_layers` makes one from several :class:`RayLayer` (an editor keeps what a drag leaves alone in one
    and casts at the dragged object's own), which casts as the joined triangles do."""

    def __init__(self, scene: Scene, meshes: Sequence[trimesh.Trimesh] | None = None) -> None:
        mesh, face_owner = scene_mesh(scene, meshes)
        self._setup(scene, [RayLayer(mesh)], face_owner)

    @classmethod
    def of_layers(cls, scene: Scene, layers: Sequence[RayLayer], face_owner: np.ndarray) -> SceneGeometry:
        """The geometry of ``scene`` cast at ``layers``; ``face_owner``: the owner of each of their faces, the
        layers' faces one after the other (object index in ``scene``, or :data:`SHELL`)."""
        geom = cls.__new__(cls)
        geom._setup(scene, layers, face_owner)
        return geom

    def _setup(self, scene: Scene, layers: Sequence[RayLayer], face_owner: np.ndarray) -> None:
        self.scene, self.layers, self.face_owner = scene, list(layers), face_owner
        self.backend = self.layers[0].backend
        self._offsets = np.cumsum([0, *(layer.faces for layer in self.layers[:-1])])

    @property
    def mesh(self) -> trimesh.Trimesh:
        """All the triangles as one mesh, in the order of :attr:`face_owner`."""
        if len(self.layers) == 1:
            return self.layers[0].mesh
        return join_meshes([layer.mesh for layer in self.layers])

    def first_hits(self, origins: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Distance to the first hit (inf when none) and the face hit (-1 when none), one query a layer for all
        rays: the nearest of the layers' first hits (a tie goes to the earlier layer)."""
        distance, faces = self.layers[0].first_hits(origins, directions)
        for layer, offset in zip(self.layers[1:], self._offsets[1:], strict=True):
            near, hit = layer.first_hits(origins, directions)
            nearer = near < distance
            distance, faces = np.where(nearer, near, distance), np.where(nearer, hit + offset, faces)
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


def _moller_trumbore(
    origin: np.ndarray, direction: np.ndarray, v0: np.ndarray, e1: np.ndarray, e2: np.ndarray
) -> np.ndarray:
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

    @property
    def state(self) -> str:
        """``outside`` the frustum, ``blocked`` on the way, or ``visible``: how views colour the ray."""
        return "outside" if not self.in_frustum else "blocked" if self.blocked else "visible"


def camera_frame(camera: Camera, points: np.ndarray) -> np.ndarray:
    """``points`` (n, 3) in the camera's frame: x right, y up, z backwards (as :meth:`Camera.to_camera_frame`)."""
    basis = np.array([camera.right, camera.up, camera.forward], dtype=float)
    local: np.ndarray = (np.asarray(points, dtype=float) - np.asarray(camera.position, dtype=float)) @ basis.T
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
    inside_frustum: np.ndarray = (depth > 1e-9) & inside
    return inside_frustum


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
    def of(cls, scene: Scene, cameras: Sequence[Camera], indices: Sequence[int]) -> list[_Rays]:
        """The corner rays of the objects at ``indices`` from each of ``cameras`` (the corners worked out once)."""
        corners = np.array([c for k in indices for c in scene.objects[k].corners()], dtype=float).reshape(-1, 3)
        owner = np.repeat(np.asarray(indices, dtype=np.int64), 8)
        return [cls(corners, owner, frustum_mask(camera, corners)) for camera in cameras]


def _judge(
    origins: np.ndarray, targets: np.ndarray, owner: np.ndarray, first_hits: FirstHits, face_owner: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Cast one ray per (origin, target); returns (reached-or-hit-itself flags, owner of each first hit)."""
    offsets = targets - origins
    reach = np.linalg.norm(offsets, axis=1)
    distance, faces = first_hits(origins, offsets / np.maximum(reach, 1e-12)[:, None])
    hit_owner = np.where(faces >= 0, face_owner[np.maximum(faces, 0)], NO_HIT)
    return (distance >= reach - CORNER_EPSILON) | (hit_owner == owner), hit_owner


def _visible_ids(
    scene: Scene, cameras: Sequence[Camera], first_hits: FirstHits, face_owner: np.ndarray, min_corners: int
) -> list[list[str]]:
    """Visible object ids for each camera; the in-frustum corner rays of all cameras go in one query."""
    indices = range(len(scene.objects))
    batches = _Rays.of(scene, cameras, indices)
    starts = np.concatenate(
        [np.tile(c.position, (int(b.inside.sum()), 1)) for c, b in zip(cameras, batches, strict=True)]
    )
    targets = np.concatenate([b.corners[b.inside] for b in batches])
    owner = np.concatenate([b.owner[b.inside] for b in batches])
    good, _ = _judge(starts.reshape(-1, 3), targets.reshape(-1, 3), owner, first_hits, face_owner)
    result: list[list[str]] = []
    start = 0
    for b in batches:
        count = int(b.inside.sum())
        votes = np.bincount(b.owner[b.inside][good[start : start + count]], minlength=len(scene.objects))
        result.append(sorted(scene.objects[k].id for k in np.flatnonzero(votes >= min_corners)))
        start += count
    return result


def corner_rays(geom: SceneGeometry, camera: Camera, obj: RoomObject) -> list[CornerRay]:
    """The eight corner rays of ``obj`` from ``camera``; corners outside the frustum are still cast."""
    return corner_rays_from(geom, [camera], obj)[0]


def corner_rays_from(geom: SceneGeometry, cameras: Sequence[Camera], obj: RoomObject) -> list[list[CornerRay]]:
    """:func:`corner_rays` from each of ``cameras``, all cast in one query (both agents' at once: a query's fixed
    cost is most of eight rays')."""
    k = next(i for i, o in enumerate(geom.scene.objects) if o.id == obj.id)
    batches = _Rays.of(geom.scene, cameras, [k])
    origins = np.repeat(np.array([camera.position for camera in cameras], dtype=float), 8, axis=0)
    corners = np.concatenate([b.corners for b in batches])
    unblocked, hit_owner = _judge(origins, corners, np.repeat(k, len(corners)), geom.first_hits, geom.face_owner)
    inside = np.concatenate([b.inside for b in batches])
    names = {SHELL: "shell", NO_HIT: None}
    rays = [
        CornerRay(
            corner=(float(c[0]), float(c[1]), float(c[2])),
            in_frustum=bool(within),
            blocked=not bool(free),
            hit_object=names[int(h)] if h < 0 else geom.scene.objects[int(h)].id,
        )
        for c, within, free, h in zip(corners, inside, unblocked, hit_owner, strict=True)
    ]
    return [rays[8 * j : 8 * j + 8] for j in range(len(cameras))]


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
        """Inverse of :meth:`to_json`; ValueError naming the field that is missing or wrong."""
        if not isinstance(data, Mapping):
            raise ValueError(f"expected the two views as an object, got {type(data).__name__}")
        seen = {}
        for name in ("answerer_visible", "helper_visible"):
            ids = data.get(name)
            if not isinstance(ids, list) or not all(isinstance(x, str) for x in ids):
                raise ValueError(f"field {name!r}: expected a list of object ids")
            seen[name] = list(ids)
        for name in ("answerer", "helper"):
            if name not in data:
                raise ValueError(f"field {name!r} is missing")
        return cls(Camera.from_json(data["answerer"]), Camera.from_json(data["helper"]), *seen.values())


def is_flat(obj: RoomObject) -> bool:
    """A floor covering (rug, mat): lower than :data:`FLAT_HEIGHT`."""
    return obj.bbox[1][2] - obj.bbox[0][2] < FLAT_HEIGHT


def coverage_pool(scene: Scene) -> list[str]:
    """The objects coverage is measured over: all but floor coverings, which lie under furniture and are
    rarely the point of a question (they may still be visible and be asked about)."""
    return [obj.id for obj in scene.objects if not is_flat(obj)]
