"""Where the room editor puts an object: building it from a few choices, and the snapping rules of a drag.

Snapping (:func:`snap`, used by a drag, by adding at a point and by duplicating), applied to the point the
object is dropped at (only its x and y count):

* doors, windows, wall art and mirrors (catalog placements ``in_wall`` and ``wall_hang``) go to the nearest
  wall, back flush against it and facing into the room, at the height they had (a new one: a door on the
  floor, a window's sill at 0.9 m, a picture centred at 1.5 m);
* anything else dropped over the top of an object that can carry it (the catalog's ``surface`` flag and the
  category's ``supports`` list: a lamp on a side table, a monitor on a desk) stands on that top, kept within
  it when it fits; the highest such top wins;
* otherwise it stands on the floor, inside the room; a side that ends up within :data:`WALL_SNAP` of a wall
  (or through it) is pushed flush against that wall, so a drag can line a cabinet up with a wall but never
  push it out of the room.

A drag keeps the object's yaw; what stands on an object moves with it (see the document's ``move``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from simlab.worlds.rooms.catalog import CATEGORIES, COLORS, compute_bbox
from simlab.worlds.rooms.model import SIZE_CLASSES, RoomObject, Scene, Vec3

WALL_SNAP = 0.08
"""Metres: a side this close to a wall (or through it) is pushed flush against it."""
HANGING = ("in_wall", "wall_hang")
DEFAULT_HEIGHTS = {"door": 0.0, "window": 0.9}
HANG_CENTRE = 1.5  # metres: where a new picture or mirror is centred
FREE_STEP = 0.25  # metres between the floor points tried when looking for a free spot
_WALL_YAWS = (0.0, math.pi / 2, math.pi, -math.pi / 2)  # backed to the south, east, north, west wall


def class_size(category: str, size_class: str) -> Vec3:
    """The middle of ``category``'s ``size_class`` ranges, to the centimetre."""
    ranges = CATEGORIES[category].sizes[size_class]
    w, d, h = (round((lo + hi) / 2, 2) for lo, hi in ranges)
    return (w, d, h)


def default_params(category: str) -> dict[str, Any]:
    """Category details a new object starts with (a window's curtains)."""
    return {"covering": "curtains", "covering_color": "beige"} if category == "window" else {}


def build(
    object_id: str,
    category: str,
    color: str,
    size_class: str,
    size: Vec3,
    at: Vec3,
    yaw: float,
    support: str = "floor",
    params: dict[str, Any] | None = None,
) -> RoomObject:
    """An object standing at ``at`` (footprint centre; z is its support height), its box computed."""
    position = (round(at[0], 4), round(at[1], 4), round(at[2], 4))
    bbox = compute_bbox(category, size, position, yaw, position[2], params)
    return RoomObject(
        object_id, category, color, COLORS[color], size_class, position, yaw, size, bbox, support, dict(params or {})
    )


def rebuilt(obj: RoomObject, **changes: Any) -> RoomObject:
    """``obj`` with some of :func:`build`'s arguments changed (its box follows)."""
    args = {
        "object_id": obj.id,
        "category": obj.category,
        "color": obj.color,
        "size_class": obj.size_class,
        "size": obj.size,
        "at": obj.position,
        "yaw": obj.yaw,
        "support": obj.support,
        "params": dict(obj.params),
    }
    return build(**{**args, **changes})


def new_object(scene: Scene, category: str) -> RoomObject:
    """A ``category`` object with its first colour and size class, at the room's centre (not yet snapped)."""
    cat = CATEGORIES[category]
    size_class = SIZE_CLASSES[0]
    z = DEFAULT_HEIGHTS.get(category, 0.0)
    if cat.placement == "wall_hang":
        z = HANG_CENTRE - class_size(category, size_class)[2] / 2
    centre = (scene.width / 2, scene.depth / 2, z)
    support = "wall" if cat.placement in HANGING else "floor"
    size = class_size(category, size_class)
    params = default_params(category)
    return build(new_id(scene, category), category, cat.colors[0], size_class, size, centre, 0.0, support, params)


def new_id(scene: Scene, category: str, taken: Iterable[str] = ()) -> str:
    """``sofa_3``: the category's name and one more than the highest number its objects have."""
    stem = category.replace(" ", "_").lower()
    used = {o.id for o in scene.objects} | set(taken)
    numbered = (re.fullmatch(rf"{re.escape(stem)}_([0-9]{{1,9}})", i) for i in used)  # not '²', not 5,000 digits
    numbers = [int(found.group(1)) for found in numbered if found]
    return f"{stem}_{max(numbers, default=0) + 1}"


def snap(scene: Scene, obj: RoomObject, point: Sequence[float]) -> RoomObject:
    """``obj`` dropped at ``point`` (see the module docstring for the rules)."""
    if CATEGORIES[obj.category].placement in HANGING:
        return _on_nearest_wall(scene, obj, point)
    surface = _surface_under(scene, obj, point)
    if surface is not None:
        return _on_top(obj, surface, point)
    return _on_floor(scene, obj, point)


def _on_nearest_wall(scene: Scene, obj: RoomObject, point: Sequence[float]) -> RoomObject:
    x, y = point[0], point[1]
    gaps = (y, scene.width - x, scene.depth - y, x)  # to the south, east, north, west wall
    k = min(range(4), key=lambda i: (gaps[i], i))
    half_w, half_d = obj.size[0] / 2, obj.size[1] / 2
    length = scene.width if k % 2 == 0 else scene.depth
    along = min(max(x if k % 2 == 0 else y, half_w), max(length - half_w, half_w))
    xy = ((along, half_d), (scene.width - half_d, along), (along, scene.depth - half_d), (half_d, along))[k]
    return rebuilt(obj, at=(xy[0], xy[1], obj.position[2]), yaw=_WALL_YAWS[k], support="wall")


def _surface_under(scene: Scene, obj: RoomObject, point: Sequence[float]) -> RoomObject | None:
    """The highest top at ``point`` that ``obj``'s category may stand on (never itself or what it carries)."""
    carriers = CATEGORIES[obj.category].supports
    tops = [
        o
        for o in scene.objects
        if o.id != obj.id
        and o.support != obj.id
        and o.category in carriers
        and CATEGORIES[o.category].surface
        and o.bbox[0][0] <= point[0] <= o.bbox[1][0]
        and o.bbox[0][1] <= point[1] <= o.bbox[1][1]
    ]
    return max(tops, key=lambda o: (o.bbox[1][2], o.id), default=None)


def _on_top(obj: RoomObject, surface: RoomObject, point: Sequence[float]) -> RoomObject:
    (lo, hi), (half_x, half_y) = surface.bbox, _half_extents(obj)
    x = _within(point[0], lo[0] + half_x, hi[0] - half_x)
    y = _within(point[1], lo[1] + half_y, hi[1] - half_y)
    return rebuilt(obj, at=(x, y, hi[2]), support=surface.id)


def _on_floor(scene: Scene, obj: RoomObject, point: Sequence[float]) -> RoomObject:
    half_x, half_y = _half_extents(obj)
    x = _flush(point[0], half_x, scene.width)
    y = _flush(point[1], half_y, scene.depth)
    return rebuilt(obj, at=(x, y, 0.0), support="floor")


def _half_extents(obj: RoomObject) -> tuple[float, float]:
    """Half the object's box in x and y (its yaw kept), measured from its footprint centre."""
    lo, hi = obj.bbox
    return (hi[0] - lo[0]) / 2, (hi[1] - lo[1]) / 2


def _within(value: float, low: float, high: float) -> float:
    """``value`` kept in ``low..high``; the middle when the range is empty (the thing is larger than the top)."""
    return (low + high) / 2 if low > high else min(max(value, low), high)


def _flush(centre: float, half: float, length: float) -> float:
    """A centre along one room axis: a side within :data:`WALL_SNAP` of a wall (or through it) goes flush."""
    if centre - half < WALL_SNAP:
        centre = half
    if centre + half > length - WALL_SNAP:
        centre = length - half
    return centre if half * 2 <= length else length / 2


def floor_points(scene: Scene) -> list[tuple[float, float]]:
    """Floor points :data:`FREE_STEP` apart, nearest the room's centre first (ties by x, then y)."""
    nx, ny = int(scene.width / FREE_STEP), int(scene.depth / FREE_STEP)
    points = [((i + 0.5) * scene.width / nx, (j + 0.5) * scene.depth / ny) for i in range(nx) for j in range(ny)]
    cx, cy = scene.width / 2, scene.depth / 2
    return sorted(points, key=lambda p: (round(math.hypot(p[0] - cx, p[1] - cy), 6), p))
