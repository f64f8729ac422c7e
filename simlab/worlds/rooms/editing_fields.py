"""The forms of the room editor: an object's category, colour, size, position and yaw; a camera's pose and
field of view; and the check of what a person typed (an EditError naming the field and what it expects).
Angles are in degrees on the forms, radians in the scene."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from simlab.core.editing import EditError
from simlab.core.family import FormField
from simlab.worlds.rooms.catalog import CATEGORIES
from simlab.worlds.rooms.model import SIZE_CLASSES, Camera, RoomObject, Scene


def _position_fields(room: Scene) -> tuple[FormField, ...]:
    return (
        FormField("x", "number", "x (m, from the west wall)", low=0, high=math.ceil(room.width)),
        FormField("y", "number", "y (m, from the south wall)", low=0, high=math.ceil(room.depth)),
    )


def object_fields(obj: RoomObject, room: Scene) -> tuple[FormField, ...]:
    """Category, the category's colours and size classes, x, y and yaw."""
    return (
        FormField("category", "choice", "Category", tuple(CATEGORIES)),
        FormField("color", "choice", "Colour", CATEGORIES[obj.category].colors),
        FormField("size", "choice", "Size", SIZE_CLASSES),
        *_position_fields(room),
        FormField("yaw", "number", "Yaw (degrees, 0: its front faces +y)", low=-180, high=180),
    )


def object_values(obj: RoomObject) -> dict[str, Any]:
    """The object's field values."""
    return {
        "category": obj.category,
        "color": obj.color,
        "size": obj.size_class,
        "x": round(obj.position[0], 4),
        "y": round(obj.position[1], 4),
        "yaw": _degrees(obj.yaw),
    }


def camera_fields(room: Scene) -> tuple[FormField, ...]:
    """x, y, eye height, yaw, pitch and field of view."""
    return (
        *_position_fields(room),
        FormField("eye_height", "number", "Eye height (m)", low=0, high=math.ceil(room.height)),
        FormField("yaw", "number", "Yaw (degrees, 0 looks along +x)", low=-180, high=180),
        FormField("pitch", "number", "Pitch (degrees, negative looks down)", low=-89, high=89),
        FormField("fov", "number", "Vertical field of view (degrees)", low=10, high=120),
    )


def camera_values(camera: Camera) -> dict[str, Any]:
    """The camera's field values."""
    x, y, z = camera.position
    return {
        "x": round(x, 4),
        "y": round(y, 4),
        "eye_height": round(z, 4),
        "yaw": _degrees(camera.yaw),
        "pitch": _degrees(camera.pitch),
        "fov": camera.fov,
    }


def _degrees(radians: float) -> float:
    """Degrees in (-180, 180], to the hundredth."""
    turned = math.degrees(radians) % 360.0
    return round(turned - 360.0 if turned > 180.0 else turned, 2)


def parse_values(fields: Sequence[FormField], values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` checked against ``fields``: EditError naming the first unknown field or bad value."""
    by_name = {f.name: f for f in fields}
    out = {}
    for name, value in values.items():
        spec = by_name.get(name)
        if spec is None:
            raise EditError(f"no field {name!r}; the fields are {', '.join(by_name)}")
        out[name] = _checked(spec, value)
    return out


def _checked(spec: FormField, value: Any) -> Any:
    if spec.kind == "choice":
        if value not in spec.choices:
            raise EditError(f"field {spec.name!r}: expected one of {', '.join(spec.choices)}, got {value!r:.40}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise EditError(f"field {spec.name!r}: expected a number, got {value!r:.40}")
    if not spec.low <= value <= spec.high:
        raise EditError(f"field {spec.name!r}: expected {spec.low} to {spec.high}, got {value}")
    return float(value)
