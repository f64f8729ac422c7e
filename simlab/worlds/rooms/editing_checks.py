"""What the room editor warns about, per entity (empty: nothing wrong).

* two objects interpenetrate: their footprints (the real turned rectangles, not the axis-aligned boxes)
  overlap by more than :data:`TOLERANCE` and so do their height ranges; an object standing on another's top
  touches it without overlapping, a rug lies under furniture and a door or window sits in its wall;
* an object is outside the room (beyond :data:`TOLERANCE`) or rests on an object that is not under it;
* no description singles an object out any more (:func:`~simlab.worlds.rooms.describe.describe_objects`):
  questions never ask about such an object;
* a camera is inside an object or outside the room.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from simlab.worlds.rooms.catalog import CATEGORIES
from simlab.worlds.rooms.describe import describe_objects
from simlab.worlds.rooms.model import Camera, RoomObject, Scene
from simlab.worlds.rooms.render import footprint

TOLERANCE = 0.02
"""Metres of overlap (or of reaching past a wall) not worth a warning: the catalog's boxes are approximate."""
Point = tuple[float, float]


class Crossings:
    """Which pairs of objects interpenetrate, kept between edits: only the pairs of an object that is no longer
    the one judged are judged again (an editor's drag step judges the dragged object against the rest, and
    looks no other pair up)."""

    def __init__(self) -> None:
        self._judged: dict[str, RoomObject] = {}  # the objects judged, by id
        self._into: dict[str, set[str]] = {}  # id -> the ids of the judged objects it goes into
        self._prints: dict[str, tuple[RoomObject, list[Point]]] = {}  # id -> the object and its footprint

    def into(self, solid: Sequence[RoomObject]) -> dict[str, set[str]]:
        """For each of ``solid``, the ids of the others it interpenetrates (:func:`_cross`, symmetric)."""
        now = {o.id: o for o in solid}
        stale = [i for i, o in self._judged.items() if now.get(i) is not o]
        for i in stale:
            for j in self._into.pop(i):
                self._into[j].discard(i)
            del self._judged[i]
        for obj in solid:
            if obj.id in self._judged:
                continue
            # against the objects judged so far: a pair of two new ones is judged once, by the later one
            found = {o.id for o in self._judged.values() if _cross(obj, o, self._footprint)}
            for i in found:
                self._into[i].add(obj.id)
            self._judged[obj.id], self._into[obj.id] = obj, found
        return self._into

    def _footprint(self, obj: RoomObject) -> list[Point]:
        """``obj``'s footprint, worked out again only when the object changed (a drag step judges the dragged
        object against every other: their footprints are the ones worked out before)."""
        kept = self._prints.get(obj.id)
        if kept is None or kept[0] is not obj:
            kept = self._prints[obj.id] = (obj, footprint(obj))
        return kept[1]


def object_warnings(scene: Scene, crossings: Crossings | None = None) -> dict[str, str]:
    """A warning for each object that has something wrong (see the module docstring), by id; ``crossings``
    keeps the verdicts on pairs between calls."""
    described = describe_objects(scene, [o.id for o in scene.objects])
    ids = {o.id for o in scene.objects}
    solid = [o for o in scene.objects if not _ignored(o)]
    into = (crossings or Crossings()).into(solid)
    order = {o.id: k for k, o in enumerate(solid)}
    out = {}
    for obj in scene.objects:
        crossed = sorted(into.get(obj.id, ()), key=order.__getitem__)  # in scene order
        found = [_outside(scene, obj), _floating(scene, obj, ids), *(f"it goes into {i}" for i in crossed)]
        if obj.id not in described:
            found.append("no description singles it out: questions will leave it out")
        text = "; ".join(f for f in found if f)
        if text:
            out[obj.id] = text
    return out


def camera_warning(scene: Scene, camera: Camera) -> str:
    """Why ``camera`` cannot stand where it is: inside an object, or outside the room ("" when it can)."""
    x, y, z = camera.position
    if not (0 < x < scene.width and 0 < y < scene.depth and 0 < z < scene.height):
        return "the camera is outside the room"
    inside = [o.id for o in scene.objects if all(o.bbox[0][k] < camera.position[k] < o.bbox[1][k] for k in range(3))]
    return f"the camera is inside {', '.join(inside)}" if inside else ""


def _outside(scene: Scene, obj: RoomObject) -> str:
    lo, hi = obj.bbox
    inside = (
        lo[0] >= -TOLERANCE
        and lo[1] >= -TOLERANCE
        and lo[2] >= -TOLERANCE
        and hi[0] <= scene.width + TOLERANCE
        and hi[1] <= scene.depth + TOLERANCE
        and hi[2] <= scene.height + TOLERANCE
    )
    return "" if inside else "it reaches outside the room"


def _floating(scene: Scene, obj: RoomObject, ids: set[str]) -> str:
    """When ``obj`` says it stands on an object: that the object is gone, or not under it."""
    if obj.support in ("floor", "wall"):
        return ""
    if obj.support not in ids:
        return f"it stood on {obj.support}, which is gone"
    base = scene.object(obj.support)
    (lo, hi), (cx, cy, _) = base.bbox, obj.center
    under = lo[0] <= cx <= hi[0] and lo[1] <= cy <= hi[1] and abs(obj.bbox[0][2] - hi[2]) <= TOLERANCE
    return "" if under else f"it is not on {base.id} any more"


def _ignored(obj: RoomObject) -> bool:
    """Rugs lie under furniture; doors and windows are in a wall, with what stands in front of them."""
    cat = CATEGORIES.get(obj.category)
    return cat is not None and (cat.flat or cat.placement == "in_wall")


def _cross(a: RoomObject, b: RoomObject, outline: Callable[[RoomObject], list[Point]] = footprint) -> bool:
    """Height ranges and turned footprints (``outline`` gives them) both overlap by more than :data:`TOLERANCE`."""
    height = min(a.bbox[1][2], b.bbox[1][2]) - max(a.bbox[0][2], b.bbox[0][2])
    if height <= TOLERANCE:
        return False
    p, q = outline(a), outline(b)
    return _boxes_overlap(p, q) and penetration(p, q) > TOLERANCE


def _boxes_overlap(p: Sequence[Point], q: Sequence[Point]) -> bool:
    """Whether the axis-aligned boxes around ``p`` and ``q`` overlap by :data:`TOLERANCE` along both axes, less a
    nanometre for rounding. When they do not, the polygons' :func:`penetration` is no deeper (a shift by that
    overlap separates them), so the pair cannot cross: most pairs of a room end here, before the
    separating-axes test, which an editor's drag runs for the dragged object against every other each step."""
    for axis in (0, 1):
        overlap = min(max(v[axis] for v in p), max(v[axis] for v in q)) - max(
            min(v[axis] for v in p), min(v[axis] for v in q)
        )
        if overlap < TOLERANCE - 1e-9:
            return False
    return True


def penetration(p: Sequence[Point], q: Sequence[Point]) -> float:
    """How deep two convex polygons overlap (separating axes: the least overlap along their edge normals);
    0 or less when they are apart."""
    depth = float("inf")
    for poly in (p, q):
        for k in range(len(poly)):
            ex, ey = poly[(k + 1) % len(poly)][0] - poly[k][0], poly[(k + 1) % len(poly)][1] - poly[k][1]
            axis = (-ey, ex)
            norm = (axis[0] ** 2 + axis[1] ** 2) ** 0.5 or 1.0
            a = [(v[0] * axis[0] + v[1] * axis[1]) / norm for v in p]
            b = [(v[0] * axis[0] + v[1] * axis[1]) / norm for v in q]
            depth = min(depth, min(max(a), max(b)) - max(min(a), min(b)))
    return depth


def warnings_by_entity(
    scene: Scene,
    cameras: Mapping[str, Camera],
    camera_entity: Mapping[str, str],
    crossings: Crossings | None = None,
) -> dict[str, str]:
    """Every entity's warning: objects by id, cameras by their entity id (``camera_entity[role]``)."""
    out = object_warnings(scene, crossings)
    for role, camera in cameras.items():
        text = camera_warning(scene, camera)
        if text:
            out[camera_entity[role]] = text
    return out
