"""Procedural furnished rooms: a room type's anchors and groups first, then weighted extras until a target count.

Placement rules: doors and windows sit flush in a wall (doors keep a swing zone clear); wall furniture stands
back to a wall, facing into the room; free-standing furniture keeps a walking gap; small plants, table lamps
and monitors stand on the tops of shelves, tables, cabinets and desks; wall art and mirrors hang above the
furniture below them or at eye level. No two solid objects' bounding boxes overlap (a rug lies flat under
furniture), furniture covers at most half the floor, and every random choice comes from
``simlab.core.seeding.rng(seed, "rooms", index)``, so a (seed, index) pair gives the same scene in any process.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from simlab.core.seeding import rng
from simlab.worlds.rooms.catalog import CATEGORIES, COLORS, COVERINGS, compute_bbox
from simlab.worlds.rooms.materials import MATERIALS
from simlab.worlds.rooms.model import ROOM_TYPES, SIZE_CLASSES, RoomObject, Scene, Vec3

Box = tuple[Vec3, Vec3]

ROOM_WEIGHTS: dict[str, float] = {"living room": 3, "bedroom": 3, "bathroom": 1.5, "kitchen": 2, "dining room": 1.5}
ROOM_DIMS: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {
    "living room": ((4.2, 7.0), (3.6, 6.5)),
    "bedroom": ((3.4, 5.8), (3.2, 5.2)),
    "bathroom": ((2.6, 4.2), (2.4, 3.6)),
    "kitchen": ((3.2, 5.8), (3.0, 5.0)),
    "dining room": ((3.6, 6.2), (3.2, 5.6)),
}
TARGET_MEAN: dict[str, float] = {"living room": 22, "bedroom": 20, "bathroom": 13, "kitchen": 19.5, "dining room": 19.5}
# Anchors each room type tries first: (category, probability).
ANCHORS: dict[str, tuple[tuple[str, float], ...]] = {
    "living room": (("sofa", 0.95), ("TV", 0.6), ("rug", 0.5), ("armchair", 0.4)),
    "bedroom": (("bed", 1.0), ("wardrobe", 0.6), ("rug", 0.4), ("desk", 0.3)),
    "bathroom": (("sink", 1.0), ("toilet", 0.9), ("bathtub", 0.6), ("mirror", 0.4)),
    "kitchen": (("fridge", 0.9), ("oven", 0.9), ("sink", 0.9), ("cabinet", 0.9), ("dishwasher", 0.5)),
    "dining room": (("dining table", 1.0), ("cabinet", 0.6), ("rug", 0.3)),
}
FLOOR_COVERAGE_MAX = 0.5
WALL_GAP = 0.03  # between neighbours along a wall
WALK_GAP = 0.45  # around free-standing furniture
CURTAIN_COLORS = (
    "beige",
    "white",
    "red",
    "blue",
    "green",
    "gray",
    "brown",
    "navy",
    "yellow",
    "teal",
    "pink",
    "purple",
    "maroon",
    "olive",
    "orange",
)
FLOOR_RGBS, WALL_RGBS = MATERIALS.floors, MATERIALS.walls  # what a room's floor and walls pick from

_WALL_YAW = (0.0, math.pi / 2, math.pi, -math.pi / 2)  # yaw of an object backed to the south/east/north/west wall
_ROT = ((1, 0), (0, 1), (-1, 0), (0, -1))  # (cos, sin) of each of those yaws, exact


def _yaw_index(yaw: float) -> int:
    return round(yaw / (math.pi / 2)) % 4


def _rotate(k: int, lx: float, ly: float) -> tuple[float, float]:
    c, s = _ROT[k % 4]
    return c * lx - s * ly, s * lx + c * ly


def _overlap(a: Box, b: Box, margin: float = 0.0) -> bool:
    """True when ``a`` grown by ``margin`` in x and y intersects ``b`` with positive volume."""
    (alo, ahi), (blo, bhi) = a, b
    for i in range(3):
        m = margin if i < 2 else 0.0
        if alo[i] - m >= bhi[i] - 1e-9 or blo[i] >= ahi[i] + m - 1e-9:
            return False
    return True


@dataclass
class _Placed:
    obj: RoomObject
    margin: float
    clear: Box | None


@dataclass
class _Room:
    """A room being furnished: its extents, its random stream and what is placed so far."""

    room_type: str
    width: float
    depth: float
    height: float
    r: random.Random
    placed: list[_Placed] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def wall_length(self, k: int) -> float:
        return self.width if k % 2 == 0 else self.depth

    def wall_point(self, k: int, t: float, s: float) -> tuple[float, float]:
        """The floor point ``t`` along wall ``k`` (from its left corner seen from inside) and ``s`` into the room."""
        w, d = self.width, self.depth
        return ((t, s), (w - s, t), (w - t, d - s), (s, d - t))[k]

    def along(self, obj: RoomObject) -> tuple[int, float]:
        """The wall an object is backed to and its position along it."""
        k, (x, y) = _yaw_index(obj.yaw), obj.position[:2]
        return k, (x, y, self.width - x, self.depth - y)[k]

    def of(self, category: str) -> list[RoomObject]:
        return [p.obj for p in self.placed if p.obj.category == category]

    def pick_size(self, category: str, size_class: str | None = None) -> tuple[str, Vec3]:
        cat = CATEGORIES[category]
        size_class = size_class or self.r.choices(SIZE_CLASSES, (0.3, 0.45, 0.25))[0]
        w, d, h = (round(self.r.uniform(*rng_), 3) for rng_ in cat.sizes[size_class])
        return size_class, (w, d, h)

    def pick_color(self, category: str) -> str:
        """Sometimes a colour a same-category object already has, otherwise one it does not."""
        allowed = CATEGORIES[category].colors
        used = sorted({o.color for o in self.of(category)})
        fresh = [c for c in allowed if c not in used]
        if used and (not fresh or self.r.random() < 0.45):
            return self.r.choice(used)
        return self.r.choice(fresh)

    def make(
        self,
        category: str,
        size_class: str,
        size: Vec3,
        xy: tuple[float, float],
        z: float,
        k: int,
        support: str = "floor",
        params: dict[str, Any] | None = None,
        color: str | None = None,
    ) -> RoomObject:
        """A new object (not yet placed); ``k`` is the yaw index (0: faces +y, 1: -x, 2: -y, 3: +x)."""
        color = color or self.pick_color(category)
        if CATEGORIES[category].placement in ("in_wall", "wall_hang"):
            support = "wall"
        position = (round(xy[0], 4), round(xy[1], 4), round(z, 4))
        yaw = _WALL_YAW[k % 4]
        bbox = compute_bbox(category, size, position, yaw, position[2], params)
        n = self.counts.get(category, 0) + 1
        oid = f"{category.replace(' ', '_').lower()}_{n}"
        return RoomObject(
            oid, category, color, COLORS[color], size_class, position, yaw, size, bbox, support, dict(params or {})
        )

    def clear_box(self, obj: RoomObject) -> Box | None:
        depth = CATEGORIES[obj.category].clearance
        if depth <= 0:
            return None
        w, d, _ = obj.size
        k = _yaw_index(obj.yaw)
        pts = [_rotate(k, lx, ly) for lx in (-w / 2, w / 2) for ly in (d / 2, d / 2 + depth)]
        xs, ys = [obj.position[0] + p[0] for p in pts], [obj.position[1] + p[1] for p in pts]
        return (min(xs), min(ys), 0.0), (max(xs), max(ys), 1.8)

    def fits(self, obj: RoomObject, margin: float, attach: Sequence[str] = ()) -> bool:
        """Inside the room, clear of every solid object (and their swing/access zones), coverage allowed."""
        (lo, hi), cat = obj.bbox, CATEGORIES[obj.category]
        if min(lo[0], lo[1]) < -1e-9 or hi[0] > self.width + 1e-9 or hi[1] > self.depth + 1e-9:
            return False
        if hi[2] > self.height - 0.08:
            return False
        if cat.flat:  # a rug lies under furniture
            return True
        clear, on_top = self.clear_box(obj), obj.support not in ("floor", "wall")
        for p in self.placed:
            other = CATEGORIES[p.obj.category]
            if other.flat or p.obj.id == obj.support:
                continue
            if p.obj.id in attach:
                if _overlap(obj.bbox, p.obj.bbox):
                    return False
                continue
            if _overlap(obj.bbox, p.obj.bbox, max(margin, p.margin)):
                return False
            if not on_top and p.clear is not None and _overlap(obj.bbox, p.clear):
                return False
            if clear is not None and p.obj.support in ("floor", "wall") and _overlap(clear, p.obj.bbox):
                return False
        return self.coverage(obj) <= FLOOR_COVERAGE_MAX

    def coverage(self, extra: RoomObject | None = None) -> float:
        objs = [p.obj for p in self.placed] + ([extra] if extra else [])
        area = sum(_footprint(o) for o in objs if o.support == "floor" and not CATEGORIES[o.category].flat)
        return area / (self.width * self.depth)

    def add(self, obj: RoomObject, margin: float, attach: Sequence[str] = ()) -> RoomObject | None:
        if not self.fits(obj, margin, attach):
            return None
        self.placed.append(_Placed(obj, margin, self.clear_box(obj)))
        self.counts[obj.category] = self.counts.get(obj.category, 0) + 1
        return obj


def _footprint(obj: RoomObject) -> float:
    (lo, hi) = obj.bbox
    return (hi[0] - lo[0]) * (hi[1] - lo[1])


# ----------------------------------------------------------------------------------------------- placements


def _on_wall(
    room: _Room,
    category: str,
    size_class: str | None = None,
    gap: float = 0.0,
    z: float = 0.0,
    params: dict[str, Any] | None = None,
) -> RoomObject | None:
    """Back to a random wall (longer walls likelier), facing into the room."""
    size_class, size = room.pick_size(category, size_class)
    k = room.r.choices(range(4), [room.wall_length(i) for i in range(4)])[0]
    length = room.wall_length(k)
    if size[0] + 0.04 > length:
        return None
    t = room.r.uniform(size[0] / 2 + 0.02, length - size[0] / 2 - 0.02)
    obj = room.make(category, size_class, size, room.wall_point(k, t, size[1] / 2 + gap), z, k, params=params)
    return room.add(obj, WALL_GAP)


def _door(room: _Room) -> RoomObject | None:
    return _on_wall(room, "door")


def _window(room: _Room) -> RoomObject | None:
    used = sorted({str(o.params.get("covering_color")) for o in room.of("window")})
    covering = room.r.choices(COVERINGS, (0.5, 0.25, 0.25))[0]
    pool = [c for c in CURTAIN_COLORS if c not in used]
    cover = room.r.choice(used) if used and room.r.random() < 0.35 else room.r.choice(pool)
    sill = round(room.r.uniform(0.8, 1.0), 3)
    size_class, size = room.pick_size("window")
    height = min(size[2], round(room.height - 0.25 - sill, 3))
    k = room.r.choices(range(4), [room.wall_length(i) for i in range(4)])[0]
    length = room.wall_length(k)
    if size[0] + 0.3 > length:
        return None
    t = room.r.uniform(size[0] / 2 + 0.15, length - size[0] / 2 - 0.15)
    params = {"covering": covering, "covering_color": cover}
    obj = room.make(
        "window", size_class, (size[0], size[1], height), room.wall_point(k, t, size[1] / 2), sill, k, params=params
    )
    return room.add(obj, 0.15)


def _free(room: _Room, category: str, size_class: str | None = None, centre: float = 0.5) -> RoomObject | None:
    """Free-standing, within ``centre`` (a fraction of the room) of the room centre, any right-angle yaw."""
    size_class, size = room.pick_size(category, size_class)
    k = room.r.randrange(4)
    ex, ey = (size[0], size[1]) if k % 2 == 0 else (size[1], size[0])
    span_x, span_y = (room.width - ex) / 2 - WALK_GAP, (room.depth - ey) / 2 - WALK_GAP
    if span_x < 0 or span_y < 0:
        return None
    x = room.width / 2 + room.r.uniform(-span_x, span_x) * centre
    y = room.depth / 2 + room.r.uniform(-span_y, span_y) * centre
    return room.add(room.make(category, size_class, size, (x, y), 0.0, k), WALK_GAP)


def _attach(
    room: _Room,
    anchor: RoomObject,
    category: str,
    offset: Callable[[Vec3], tuple[float, float]],
    dk: int,
    size_class: str | None = None,
    color: str | None = None,
    margin: float = 0.1,
) -> RoomObject | None:
    """Next to ``anchor``: ``offset(size)`` gives the new object's centre in the anchor's frame, ``dk`` its turn."""
    size_class, size = room.pick_size(category, size_class)
    k = _yaw_index(anchor.yaw)
    dx, dy = _rotate(k, *offset(size))
    xy = (anchor.position[0] + dx, anchor.position[1] + dy)
    obj = room.make(category, size_class, size, xy, 0.0, k + dk, color=color)
    return room.add(obj, margin, attach=(anchor.id,))


def _on_surface(room: _Room, category: str, size_class: str | None = None) -> RoomObject | None:
    """On the top of a random supporting object, within its top face."""
    cat = CATEGORIES[category]
    supports = [p.obj for p in room.placed if p.obj.category in cat.supports]
    if not supports:
        return None
    base = room.r.choice(supports)
    size_class, size = room.pick_size(category, size_class)
    (lo, hi), k = base.bbox, _yaw_index(base.yaw)
    ex, ey = (size[0], size[1]) if k % 2 == 0 else (size[1], size[0])
    room_x, room_y = (hi[0] - lo[0]) - ex - 0.04, (hi[1] - lo[1]) - ey - 0.04
    if room_x < 0 or room_y < 0:
        return None
    x = lo[0] + 0.02 + ex / 2 + room.r.uniform(0, room_x)
    y = lo[1] + 0.02 + ey / 2 + room.r.uniform(0, room_y)
    obj = room.make(category, size_class, size, (x, y), hi[2], k, support=base.id)
    return room.add(obj, 0.02)


def _hang(room: _Room, category: str, wall: tuple[int, float] | None = None) -> RoomObject | None:
    """On a wall above the furniture below it, or at eye level; ``wall`` fixes (wall, position along it)."""
    size_class, size = room.pick_size(category)
    k, t = wall if wall else (room.r.randrange(4), -1.0)
    length = room.wall_length(k)
    if size[0] + 0.1 > length:
        return None
    if t < 0:
        t = room.r.uniform(size[0] / 2 + 0.05, length - size[0] / 2 - 0.05)
    t = min(max(t, size[0] / 2 + 0.05), length - size[0] / 2 - 0.05)
    xy = room.wall_point(k, t, size[1] / 2)
    probe = room.make(category, size_class, size, xy, 0.0, k)
    zone = _zone_below(probe.bbox, k, room.height)
    under = [p.obj for p in room.placed if _overlap(zone, p.obj.bbox, 0.05)]
    if any(CATEGORIES[o.category].placement in ("in_wall", "wall_hang") for o in under):
        return None  # nothing above doors, windows or other hung objects
    below = [o.bbox[1][2] for o in under if not CATEGORIES[o.category].flat]
    z = max(below) + room.r.uniform(0.15, 0.35) if below else room.r.uniform(1.45, 1.6) - size[2] / 2
    return room.add(room.make(category, size_class, size, xy, z, k, color=probe.color), 0.05)


def _zone_below(box: Box, k: int, height: float) -> Box:
    """The space in front of a hung object's wall patch, floor to ceiling and 0.8 m deep (what stands below it)."""
    (lo, hi) = box
    gx, gy = (0.0, 0.8) if k % 2 == 0 else (0.8, 0.0)
    return (lo[0] - gx, lo[1] - gy, 0.0), (hi[0] + gx, hi[1] + gy, height)


# ---------------------------------------------------------------------------------------------------- groups


def _beside(room: _Room, anchor: RoomObject, category: str, side: int, color: str | None = None) -> RoomObject | None:
    """``category`` at the ``side`` (-1 left, +1 right) end of ``anchor``, backs aligned."""
    aw, ad, _ = anchor.size
    return _attach(
        room,
        anchor,
        category,
        lambda s: (side * (aw / 2 + 0.06 + s[0] / 2), -ad / 2 + s[1] / 2),
        0,
        color=color,
        margin=0.06,
    )


def _in_front(
    room: _Room, anchor: RoomObject, category: str, gap: float, dk: int, lx: float = 0.0, size_class: str | None = None
) -> RoomObject | None:
    """``category`` ``gap`` in front of ``anchor`` (behind it when ``gap`` < 0, facing it when ``dk`` is 2)."""
    side = 1 if gap >= 0 else -1
    ad = anchor.size[1]
    if side < 0:
        dk = (dk + 2) % 4
    return _attach(
        room,
        anchor,
        category,
        lambda s: (lx, side * (ad / 2 + abs(gap) + s[1] / 2)),
        dk,
        size_class=size_class,
        margin=0.05,
    )


def _sofa_group(room: _Room, sofa: RoomObject) -> None:
    if room.r.random() < 0.65 and not room.of("centre table"):
        _in_front(room, sofa, "centre table", room.r.uniform(0.35, 0.5), 0)
    color = None
    for side in (-1, 1):
        if room.r.random() < 0.5 and (table := _beside(room, sofa, "side table", side, color)):
            color = table.color if room.r.random() < 0.7 else None


def _bed_group(room: _Room, bed: RoomObject) -> None:
    color = None
    for side in (-1, 1):
        if room.r.random() < 0.8 and (table := _beside(room, bed, "side table", side, color)):
            color = table.color if room.r.random() < 0.8 else None
            if room.r.random() < 0.5:
                _on_surface(room, "lamp")


def _desk_group(room: _Room, desk: RoomObject) -> None:
    if room.r.random() < 0.85:
        _in_front(room, desk, "chair", 0.06, 2, room.r.uniform(-0.1, 0.1))
    if room.r.random() < 0.75:
        _on_surface(room, "monitor", room.r.choice(SIZE_CLASSES))


def _seat_offset(table: Vec3, lx: float, side: float, dk: int) -> Callable[[Vec3], tuple[float, float]]:
    """Where a chair of size ``s`` sits at a seat of a ``table``-sized table: past its end (``dk`` 1 or 3), else
    along the side ``side`` at ``lx``."""
    tw, td, _ = table
    if dk in (1, 3):
        return lambda s: (lx * (tw / 2 + 0.08 + s[1] / 2), 0.0)
    return lambda s: (lx, side * (td / 2 + 0.08 + s[1] / 2))


def _table_group(room: _Room, table: RoomObject) -> None:
    """Chairs round a dining table, usually a matching set."""
    tw = table.size[0]
    seats: list[tuple[float, float, int]] = []
    per_side = max(1, min(3, int(tw / 0.6)))
    for i in range(per_side):
        lx = -tw / 2 + tw * (i + 0.5) / per_side
        seats += [(lx, -1, 0), (lx, 1, 2)]
    if tw > 1.1:
        seats += [(-1, 0, 3), (1, 0, 1)]
    n = room.r.randint(2, len(seats))
    color = None
    for lx, side, dk in room.r.sample(seats, n):
        offset = _seat_offset(table.size, lx, side, dk)
        chair = _attach(room, table, "chair", offset, dk, size_class="medium", color=color, margin=0.05)
        if chair and color is None:
            color = chair.color if room.r.random() < 0.75 else None


def _maybe_beside(room: _Room, anchor: RoomObject, p: float) -> None:
    if room.r.random() < p:
        _beside(room, anchor, "side table", room.r.choice((-1, 1)))


def _sink_group(room: _Room, sink: RoomObject) -> None:
    if room.room_type == "bathroom" and room.r.random() < 0.75 and not room.of("mirror"):
        _hang(room, "mirror", room.along(sink))


_GROUPS: dict[str, Callable[[_Room, RoomObject], None]] = {
    "sofa": _sofa_group,
    "armchair": lambda room, chair: _maybe_beside(room, chair, 0.3),
    "bed": _bed_group,
    "desk": _desk_group,
    "dining table": _table_group,
    "sink": _sink_group,
}


# ------------------------------------------------------------------------------------------------- dispatch


def _place(room: _Room, category: str) -> RoomObject | None:
    """Place one ``category`` object where that kind of object goes (and its group); None when it did not fit."""
    cat, r = CATEGORIES[category], room.r
    if category == "door":
        obj = _door(room)
    elif category == "window":
        obj = _window(room)
    elif cat.placement == "wall_hang":
        obj = _hang(room, category)
    elif cat.placement == "surface":
        obj = _on_surface(room, category)
    elif cat.supports and r.random() < 0.45:
        obj = _on_surface(room, category, "small")
    elif cat.placement == "wall":
        obj = _on_wall(room, category)
    else:
        obj = _floor(room, category)
    if obj is not None and category in _GROUPS:
        _GROUPS[category](room, obj)
    return obj


def _floor(room: _Room, category: str) -> RoomObject | None:
    r = room.r
    if category == "rug":
        return _rug(room)
    if category == "dining table":
        return _free(room, category, centre=0.35)
    hosts = room.of("sofa") + room.of("bed") + room.of("armchair")
    if category == "side table" and hosts:
        return _beside(room, r.choice(hosts), category, r.choice((-1, 1)))
    if category == "centre table" and (sofas := room.of("sofa")):
        return _in_front(room, sofas[0], category, r.uniform(0.35, 0.5), 0)
    if category == "chair" and (tables := room.of("dining table") + room.of("desk")):
        table = r.choice(tables)
        return _in_front(room, table, "chair", 0.08 if table.category == "desk" else -0.08, 2, r.uniform(-0.3, 0.3))
    if category in ("plant container", "lamp", "chair", "side table") or r.random() < 0.5:
        return _on_wall(room, category, r.choice(("medium", "large")), gap=r.uniform(0.02, 0.12))
    return _free(room, category)


def _rug(room: _Room) -> RoomObject | None:
    """Under the centre table, dining table or the foot of the bed when there is one, else near the centre."""
    hosts = room.of("centre table") + room.of("dining table") + room.of("bed")
    if not hosts:
        return _free(room, "rug", centre=0.3)
    host = hosts[0]
    size_class, size = room.pick_size("rug")
    k = _yaw_index(host.yaw)
    shift = host.size[1] * 0.25 if host.category == "bed" else 0.0
    dx, dy = _rotate(k, 0.0, shift)
    obj = room.make("rug", size_class, size, (host.position[0] + dx, host.position[1] + dy), 0.0, k)
    return room.add(obj, 0.0)


def _fill(room: _Room, target: int) -> None:
    weights = {n: c.rooms[room.room_type] for n, c in CATEGORIES.items() if room.room_type in c.rooms}
    for category in ("door", "window"):
        weights.pop(category, None)
    failures: dict[str, int] = {}
    for _ in range(200):
        if len(room.placed) >= target or not weights:
            return
        names = list(weights)
        category = room.r.choices(names, [weights[n] for n in names])[0]
        if room.counts.get(category, 0) >= CATEGORIES[category].max_per_room or _place(room, category) is None:
            failures[category] = failures.get(category, 0) + 1
            if failures[category] >= 4 or room.counts.get(category, 0) >= CATEGORIES[category].max_per_room:
                weights.pop(category)


def _openings(room: _Room) -> None:
    """One door (sometimes two) and usually one to three windows."""
    doors = 2 if room.r.random() < 0.2 else 1
    for _ in range(40):
        if room.counts.get("door", 0) >= doors:
            break
        _door(room)
    windows = room.r.choices((0, 1, 2, 3), (0.08, 0.4, 0.37, 0.15))[0]
    for _ in range(30):
        if room.counts.get("window", 0) >= windows:
            break
        _window(room)


# ------------------------------------------------------------------------------------------------ public API


def generate_scene(seed: int, index: int, room_type: str | None = None) -> Scene:
    """Scene ``index`` of a run seeded with ``seed`` (id ``room_0000``); ``room_type`` forces the type."""
    r = rng(seed, "rooms", index)
    kind = r.choices(ROOM_TYPES, [ROOM_WEIGHTS[t] for t in ROOM_TYPES])[0]
    room_type = room_type or kind
    if room_type not in ROOM_TYPES:
        raise ValueError(f"unknown room type {room_type!r}; choose from {', '.join(ROOM_TYPES)}")
    (w0, w1), (d0, d1) = ROOM_DIMS[room_type]
    room = _Room(room_type, round(r.uniform(w0, w1), 2), round(r.uniform(d0, d1), 2), round(r.uniform(2.6, 3.0), 2), r)
    _openings(room)
    for category, p in ANCHORS[room_type]:
        if r.random() < p:
            for _ in range(8):
                if _place(room, category):
                    break
    target = min(31, max(6, round(r.gauss(TARGET_MEAN[room_type], 4.5))))
    _fill(room, target)
    return Scene(
        id=f"room_{index:04d}",
        room_type=room_type,
        width=room.width,
        depth=room.depth,
        height=room.height,
        objects=tuple(p.obj for p in room.placed),
        floor_rgb=r.choice(FLOOR_RGBS),
        wall_rgb=r.choice(WALL_RGBS),
    )


def generate_scenes(n: int, seed: int) -> list[Scene]:
    """Scenes ``0 .. n-1`` of the run seeded with ``seed``."""
    return [generate_scene(seed, i) for i in range(n)]
