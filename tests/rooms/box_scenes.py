"""Tiny rooms made of boxes for visibility and rendering tests, independent of the furniture catalog.

:func:`use_boxes` points the mesh hooks of :mod:`simlab.worlds.rooms.visibility` (used by the renderer too) at
plain boxes: every object is its bounding box in its colour, the floor a slab under z = 0, the walls 10 cm
thick outside the floor rectangle.
"""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from simlab.worlds.rooms import visibility
from simlab.worlds.rooms.model import RoomObject, Scene

WALL = 0.1


def box(object_id: str, lo, hi, rgb=(200, 30, 30), category: str = "box", support: str = "floor") -> RoomObject:
    """A box-shaped object filling the world box ``lo``..``hi``."""
    lo, hi = tuple(float(v) for v in lo), tuple(float(v) for v in hi)
    size = (hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2])
    position = ((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, lo[2])
    return RoomObject(object_id, category, "red", tuple(rgb), "medium", position, 0.0, size, (lo, hi), support)


def room(objects, width: float = 6.0, depth: float = 5.0, height: float = 2.6, scene_id: str = "boxes") -> Scene:
    return Scene(scene_id, "living room", width, depth, height, tuple(objects))


def box_mesh(obj: RoomObject) -> trimesh.Trimesh:
    return _solid(obj.bbox[0], obj.bbox[1], obj.rgb)


def box_shell(scene: Scene) -> list[tuple[str, trimesh.Trimesh, tuple[int, int, int]]]:
    w, d, h, t = scene.width, scene.depth, scene.height, WALL
    walls = {
        "wall_south": ((-t, -t, 0), (w + t, 0, h)),
        "wall_north": ((-t, d, 0), (w + t, d + t, h)),
        "wall_west": ((-t, 0, 0), (0, d, h)),
        "wall_east": ((w, 0, 0), (w + t, d, h)),
    }
    shell = [("floor", _solid((-t, -t, -t), (w + t, d + t, 0), scene.floor_rgb), scene.floor_rgb)]
    shell += [(name, _solid(lo, hi, scene.wall_rgb), scene.wall_rgb) for name, (lo, hi) in walls.items()]
    return shell


def _solid(lo, hi, rgb) -> trimesh.Trimesh:
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    mesh = trimesh.creation.box(extents=hi - lo)
    mesh.apply_translation((lo + hi) / 2)
    mesh.visual.face_colors = [*rgb, 255]
    return mesh


def use_boxes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Build meshes as plain boxes for the rest of the test."""
    monkeypatch.setattr(visibility, "object_mesh", box_mesh)
    monkeypatch.setattr(visibility, "room_shell", box_shell)


def random_room(seed: int, count: int = 6) -> Scene:
    """``count`` random boxes, some on the floor and some floating, in a 6 x 5 m room."""
    r = np.random.default_rng(seed)
    objects = []
    for k in range(count):
        size = r.uniform(0.2, 1.0, 3)
        lo = np.array([r.uniform(0.1, 5.9 - size[0]), r.uniform(0.1, 4.9 - size[1]), r.choice([0.0, r.uniform(0, 1)])])
        objects.append(box(f"box_{k}", lo, lo + size, rgb=tuple(int(v) for v in r.integers(0, 256, 3))))
    return room(objects, scene_id=f"random_{seed}")
