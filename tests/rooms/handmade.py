"""Hand-made rooms and view pairs for the rooms tests: no generator, no ray casting."""

from __future__ import annotations

import math

from simlab.worlds.rooms.model import Camera, RoomObject, Scene, Vec3
from simlab.worlds.rooms.visibility import ViewPair

FakeViews = ViewPair  # a view pair given by hand: both cameras and the ids each one sees


def box(
    object_id: str,
    color: str,
    center: Vec3,
    size: Vec3 = (0.5, 0.5, 0.9),
    size_class: str = "medium",
    **params: str,
) -> RoomObject:
    """An object whose category is its id without the ``_N`` suffix, with an axis-aligned box at ``center``."""
    lo = tuple(c - s / 2 for c, s in zip(center, size, strict=True))
    hi = tuple(c + s / 2 for c, s in zip(center, size, strict=True))
    return RoomObject(
        id=object_id,
        category=object_id.rsplit("_", 1)[0],
        color=color,
        rgb=(128, 128, 128),
        size_class=size_class,
        position=(center[0], center[1], lo[2]),
        yaw=0.0,
        size=size,
        bbox=(lo, hi),  # type: ignore[arg-type]
        params=params,
    )


def room(*objects: RoomObject, scene_id: str = "room-0") -> Scene:
    return Scene(scene_id, "living room", 8.0, 6.0, 3.0, tuple(objects))


ANSWERER_CAMERA = Camera((1.0, 3.0, 1.6), 0.0)  # looks along +x
HELPER_CAMERA = Camera((7.0, 3.0, 1.6), math.pi)  # looks along -x


def living_room() -> tuple[Scene, FakeViews]:
    """Shared: sofa, table, blue chair. Answerer only: red chair, lamp, two windows. Helper only: green chair,
    plant container, cabinet (behind-right of the Answerer), bookshelf (behind it), door (front-right)."""
    scene = room(
        box("sofa_0", "gray", (4.0, 4.5, 0.4), (2.0, 0.9, 0.8)),
        box("table_0", "brown", (4.0, 3.0, 0.38), (1.2, 0.8, 0.75)),
        box("chair_0", "red", (2.5, 1.0, 0.45)),
        box("chair_1", "blue", (4.0, 1.5, 0.45)),
        box("chair_2", "green", (6.0, 1.0, 0.45)),
        box("lamp_0", "yellow", (2.5, 5.5, 0.8), (0.4, 0.4, 1.6)),
        box("plant_container_0", "green", (6.5, 5.5, 0.5), (0.5, 0.5, 1.0)),
        box("cabinet_0", "white", (0.4, 2.0, 0.5), (0.6, 1.0, 1.0)),
        box("bookshelf_0", "brown", (0.3, 3.0, 1.0), (0.4, 1.0, 2.0)),
        box("window_0", "white", (7.95, 1.5, 1.5), (0.1, 1.2, 1.2), covering="curtains", covering_color="beige"),
        box("window_1", "white", (7.95, 4.5, 1.5), (0.1, 1.2, 1.2), covering="curtains", covering_color="blue"),
        box("door_0", "purple", (3.0, 0.05, 1.0), (0.9, 0.1, 2.0)),
    )
    views = FakeViews(
        ANSWERER_CAMERA,
        HELPER_CAMERA,
        ["chair_0", "chair_1", "lamp_0", "sofa_0", "table_0", "window_0", "window_1"],
        ["bookshelf_0", "cabinet_0", "chair_1", "chair_2", "door_0", "plant_container_0", "sofa_0", "table_0"],
    )
    return scene, views
