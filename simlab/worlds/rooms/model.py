"""The rooms world's data: a furnished room, its objects, and an agent's camera.

Coordinates: metres, right-handed, z up. The floor is the rectangle ``0 <= x <= width``, ``0 <= y <= depth``
at ``z = 0``; walls stand on its four edges and the ceiling is at ``z = height``. An object's ``yaw`` turns
it about z (radians, counter-clockwise from +x); ``position`` is the centre of its footprint on its support
(the floor, a surface or a wall), and ``bbox`` is its axis-aligned world bounding box ``[min, max]``.

A scene is plain data: every mesh is rebuilt from ``category``, ``size`` and ``params`` by the catalog, so
the JSON form is small, exact and reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SCENE_FORMAT = "simlab.rooms.scene"
SCENE_VERSION = 1
ROOM_TYPES: tuple[str, ...] = ("living room", "bedroom", "bathroom", "kitchen", "dining room")
SIZE_CLASSES: tuple[str, ...] = ("small", "medium", "large")

Vec3 = tuple[float, float, float]
MAX_COORD = 1000.0  # metres: no room is a kilometre across; a larger number is a broken file
MAX_OBJECTS = 500
MAX_ROOM = 100.0


@dataclass(frozen=True)
class RoomObject:
    """One object in a room.

    ``id`` is unique in the scene (``"chair_2"``); ``category`` names a catalog entry; ``color`` is a colour
    name and ``rgb`` its 0-255 value; ``size`` holds the object's own extents (width along its local x,
    depth along local y, height), ``size_class`` is small, medium or large within its category; ``support``
    says what it rests on (``"floor"``, ``"wall"``, or another object's id); ``params`` holds category
    details such as a window's ``{"covering": "curtains", "covering_color": "beige"}``.
    """

    id: str
    category: str
    color: str
    rgb: tuple[int, int, int]
    size_class: str
    position: Vec3
    yaw: float
    size: Vec3
    bbox: tuple[Vec3, Vec3]
    support: str = "floor"
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def center(self) -> Vec3:
        lo, hi = self.bbox
        return ((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2)

    def corners(self) -> list[Vec3]:
        """The eight corners of the world bounding box."""
        lo, hi = self.bbox
        return [(x, y, z) for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "color": self.color,
            "rgb": list(self.rgb),
            "size_class": self.size_class,
            "position": list(self.position),
            "yaw": self.yaw,
            "size": list(self.size),
            "bbox": [list(self.bbox[0]), list(self.bbox[1])],
            "support": self.support,
            "params": dict(self.params),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RoomObject:
        """Inverse of :meth:`to_json`; raises ValueError naming the field that is wrong."""
        if not isinstance(data, Mapping):
            raise ValueError(f"expected an object, got {type(data).__name__}")
        try:
            size = _vec3(data["size"], "size")
            bbox = data["bbox"]
            if not isinstance(bbox, (list, tuple)) or len(bbox) != 2:
                raise ValueError(f"field 'bbox': expected [[x, y, z], [x, y, z]], got {bbox!r:.60}")
            obj = cls(
                id=_text(data["id"], "id"),
                category=_text(data["category"], "category"),
                color=_text(data["color"], "color"),
                rgb=_ints3(data["rgb"], "rgb"),
                size_class=_choice(data["size_class"], SIZE_CLASSES, "size_class"),
                position=_vec3(data["position"], "position"),
                yaw=_number(data["yaw"], "yaw"),
                size=size,
                bbox=(_vec3(bbox[0], "bbox[0]"), _vec3(bbox[1], "bbox[1]")),
                support=_text(data.get("support", "floor"), "support"),
                params=_mapping(data.get("params") or {}, "params"),
            )
        except KeyError as exc:
            raise ValueError(f"field {exc.args[0]!r} is missing") from None
        if not all(0 < v <= MAX_ROOM for v in size) or any(lo > hi for lo, hi in zip(*obj.bbox, strict=True)):
            raise ValueError(f"field 'size'/'bbox': expected positive extents up to {MAX_ROOM:g} m and lo <= hi")
        return obj


@dataclass(frozen=True)
class Camera:
    """An agent's eye: position, yaw (radians about z, 0 looks along +x), pitch (radians, negative looks
    down), vertical field of view (degrees) and image size in pixels."""

    position: Vec3
    yaw: float
    pitch: float = math.radians(-10.0)
    fov: float = 60.0
    width: int = 1024
    height: int = 768

    @property
    def forward(self) -> Vec3:
        cp = math.cos(self.pitch)
        return (cp * math.cos(self.yaw), cp * math.sin(self.yaw), math.sin(self.pitch))

    @property
    def right(self) -> Vec3:
        return (math.sin(self.yaw), -math.cos(self.yaw), 0.0)

    @property
    def up(self) -> Vec3:
        f, r = self.forward, self.right
        return (r[1] * f[2] - r[2] * f[1], r[2] * f[0] - r[0] * f[2], r[0] * f[1] - r[1] * f[0])

    def to_camera_frame(self, point: Vec3) -> Vec3:
        """``point`` in the camera's frame: x right, y up, z backwards (the camera looks down -z)."""
        d = (point[0] - self.position[0], point[1] - self.position[1], point[2] - self.position[2])
        f, r, u = self.forward, self.right, self.up
        return (_dot(d, r), _dot(d, u), -_dot(d, f))

    def to_json(self) -> dict[str, Any]:
        return {
            "position": list(self.position),
            "yaw": self.yaw,
            "pitch": self.pitch,
            "fov": self.fov,
            "width": self.width,
            "height": self.height,
        }

    @classmethod
    def from_json(cls, data: object) -> Camera:
        """Inverse of :meth:`to_json`; ValueError naming the field that is wrong (or that it is no object)."""
        if not isinstance(data, Mapping):
            raise ValueError(f"expected a camera object, got {type(data).__name__}")
        try:
            camera = cls(
                _vec3(data["position"], "position"),
                _number(data["yaw"], "yaw"),
                _number(data.get("pitch", math.radians(-10.0)), "pitch"),
                _number(data.get("fov", 60.0), "fov"),
                _int(data.get("width", 1024), "width"),
                _int(data.get("height", 768), "height"),
            )
        except KeyError as exc:
            raise ValueError(f"camera field {exc.args[0]!r} is missing") from None
        if not 1.0 <= camera.fov <= 170.0 or not (16 <= camera.width <= 8192 and 16 <= camera.height <= 8192):
            raise ValueError("camera: expected a field of view of 1-170 degrees and an image of 16-8192 pixels a side")
        return camera


@dataclass(frozen=True)
class Scene:
    """A furnished room: type, extents and objects (doors and windows included, as objects in walls)."""

    id: str
    room_type: str
    width: float
    depth: float
    height: float
    objects: tuple[RoomObject, ...]
    floor_rgb: tuple[int, int, int] = (196, 178, 150)
    wall_rgb: tuple[int, int, int] = (232, 228, 218)
    ceiling: bool = False

    def has(self, object_id: str) -> bool:
        """Whether the room holds an object with this id."""
        return any(obj.id == object_id for obj in self.objects)

    def object(self, object_id: str) -> RoomObject:
        for obj in self.objects:
            if obj.id == object_id:
                return obj
        raise KeyError(f"scene {self.id}: no object {object_id!r}")

    def to_json(self) -> dict[str, Any]:
        return {
            "format": SCENE_FORMAT,
            "version": SCENE_VERSION,
            "id": self.id,
            "room_type": self.room_type,
            "width": self.width,
            "depth": self.depth,
            "height": self.height,
            "floor_rgb": list(self.floor_rgb),
            "wall_rgb": list(self.wall_rgb),
            "ceiling": self.ceiling,
            "objects": [o.to_json() for o in self.objects],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Scene:
        """Inverse of :meth:`to_json` (format and version checked by the file loader); raises ValueError with
        the path of the first bad field, e.g. ``objects[3].bbox[1]``."""
        if not isinstance(data, Mapping):
            raise ValueError(f"expected a scene object, got {type(data).__name__}")
        raw_objects = data.get("objects") or []
        if not isinstance(raw_objects, list) or len(raw_objects) > MAX_OBJECTS:
            raise ValueError(f"field 'objects': expected a list of at most {MAX_OBJECTS} objects")
        objects = []
        for k, item in enumerate(raw_objects):
            try:
                objects.append(RoomObject.from_json(item))
            except (ValueError, TypeError, IndexError) as exc:
                raise ValueError(f"objects[{k}]: {exc}") from None
        if len({o.id for o in objects}) != len(objects):
            raise ValueError("field 'objects': two objects share an id")
        try:
            scene = cls(
                id=_text(data["id"], "id"),
                room_type=_text(data["room_type"], "room_type"),
                width=_number(data["width"], "width"),
                depth=_number(data["depth"], "depth"),
                height=_number(data["height"], "height"),
                objects=tuple(objects),
                floor_rgb=_ints3(data.get("floor_rgb", (196, 178, 150)), "floor_rgb"),
                wall_rgb=_ints3(data.get("wall_rgb", (232, 228, 218)), "wall_rgb"),
                ceiling=bool(data.get("ceiling", False)),
            )
        except KeyError as exc:
            raise ValueError(f"field {exc.args[0]!r} is missing") from None
        if not all(0.5 <= v <= MAX_ROOM for v in (scene.width, scene.depth, scene.height)):
            raise ValueError(f"fields 'width', 'depth', 'height': expected 0.5 to {MAX_ROOM:g} metres")
        return scene


def _dot(a: Vec3, b: Vec3) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _number(value: Any, name: str) -> float:
    """A finite number no larger than :data:`MAX_COORD` in size."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"field {name!r}: expected a finite number, got {value!r:.60}")
    if abs(value) > MAX_COORD:
        raise ValueError(f"field {name!r}: expected at most {MAX_COORD:g} in size, got {value!r:.60}")
    return float(value)


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"field {name!r}: expected a whole number, got {value!r:.60}")
    return value


def _text(value: Any, name: str, longest: int = 200) -> str:
    if not isinstance(value, str) or not value or len(value) > longest:
        raise ValueError(f"field {name!r}: expected a text of 1-{longest} characters, got {value!r:.60}")
    return value


def _choice(value: Any, choices: tuple[str, ...], name: str) -> str:
    if value not in choices:
        raise ValueError(f"field {name!r}: expected one of {', '.join(choices)}, got {value!r:.60}")
    return str(value)


def _mapping(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(f"field {name!r}: expected an object, got {type(value).__name__}")
    return dict(value)


def _vec3(value: Any, name: str) -> Vec3:
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise ValueError(f"field {name!r}: expected three numbers, got {value!r:.60}")
    return (_number(value[0], name), _number(value[1], name), _number(value[2], name))


def _ints3(value: Any, name: str) -> tuple[int, int, int]:
    ok = isinstance(value, (list, tuple)) and len(value) == 3
    if not ok or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in value):
        raise ValueError(f"field {name!r}: expected three integers 0-255, got {value!r:.60}")
    return (int(value[0]), int(value[1]), int(value[2]))
