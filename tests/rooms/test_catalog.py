"""The rooms catalog: enough recognisable categories, low-poly coloured meshes whose bounds equal their bbox."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from simlab.worlds.rooms.catalog import CATEGORIES, COLORS, COVERINGS, PLACEMENTS, compute_bbox, object_mesh, room_shell
from simlab.worlds.rooms.model import ROOM_TYPES, SIZE_CLASSES, RoomObject, Scene


def _object(category: str, size_class: str, r: random.Random, yaw: float, params: dict | None = None) -> RoomObject:
    cat = CATEGORIES[category]
    size = tuple(round(r.uniform(*rng), 3) for rng in cat.sizes[size_class])
    position = (r.uniform(1, 4), r.uniform(1, 4), r.choice((0.0, 0.75)))
    bbox = compute_bbox(category, size, position, yaw, position[2], params)
    color = cat.colors[0]
    return RoomObject(
        f"{category}_1", category, color, COLORS[color], size_class, position, yaw, size, bbox, params=params or {}
    )


def test_catalog_has_enough_categories_and_colours():
    assert len(CATEGORIES) >= 23
    assert 14 <= len(COLORS) <= 20 and len(set(COLORS.values())) == len(COLORS)
    for cat in CATEGORIES.values():
        assert cat.placement in PLACEMENTS
        assert set(cat.sizes) == set(SIZE_CLASSES)
        assert cat.colors and set(cat.colors) <= set(COLORS)
        assert set(cat.rooms) <= set(ROOM_TYPES) and cat.max_per_room >= 1
        assert set(cat.supports) <= set(CATEGORIES)
        for lo_hi in (r for s in cat.sizes.values() for r in s):
            assert 0 < lo_hi[0] <= lo_hi[1]
    assert {"door", "window", "plant container", "monitor", "chair", "rug", "mirror"} <= set(CATEGORIES)


@pytest.mark.parametrize("category", sorted(CATEGORIES))
def test_mesh_bounds_match_bbox_for_random_sizes_and_yaws(category):
    r = random.Random(category)
    for size_class in SIZE_CLASSES:
        for yaw in (0.0, math.pi / 2, math.pi, -math.pi / 2, r.uniform(-math.pi, math.pi)):
            params = {"covering": r.choice(COVERINGS), "covering_color": "red"} if category == "window" else None
            obj = _object(category, size_class, r, yaw, params)
            mesh = object_mesh(obj)
            assert np.allclose(mesh.bounds, np.array(obj.bbox), atol=1e-3), (size_class, yaw)
            assert len(mesh.faces) <= 600
            colors = np.asarray(mesh.visual.face_colors)
            assert colors.shape == (len(mesh.faces), 4)
            assert tuple(colors[:, :3].tolist()).count(list(obj.rgb)) > 0 or category == "window"


def test_window_covering_is_drawn_in_its_own_colour():
    r = random.Random(1)
    for covering in COVERINGS:
        obj = _object("window", "medium", r, 0.0, {"covering": covering, "covering_color": "red"})
        colors = {tuple(c) for c in np.asarray(object_mesh(obj).visual.face_colors)[:, :3].tolist()}
        assert COLORS["red"] in colors and obj.rgb in colors


def test_room_shell_has_floor_and_four_walls_outside_the_floor():
    scene = Scene("room_0000", "bedroom", 4.0, 3.0, 2.7, ())
    parts = {name: mesh for name, mesh, _ in room_shell(scene)}
    assert set(parts) == {"floor", "wall_south", "wall_east", "wall_north", "wall_west"}
    assert parts["wall_south"].bounds[1][1] == pytest.approx(0.0)
    assert parts["wall_east"].bounds[0][0] == pytest.approx(4.0)
    assert parts["wall_north"].bounds[1][2] == pytest.approx(2.7)
    with_ceiling = room_shell(Scene("room_0000", "bedroom", 4.0, 3.0, 2.7, (), ceiling=True))
    assert [name for name, _, _ in with_ceiling][-1] == "ceiling"
