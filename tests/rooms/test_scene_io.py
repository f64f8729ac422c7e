"""Rooms scene files: exact round trip, errors naming file and field, glTF export."""

from __future__ import annotations

import json

import numpy as np
import pytest
import trimesh

from simlab.core.errors import FormatError
from simlab.worlds.rooms.generator import generate_scene
from simlab.worlds.rooms.model import SCENE_FORMAT
from simlab.worlds.rooms.scene_io import export_gltf, load_scene, save_scene


@pytest.fixture(scope="module")
def scene():
    return generate_scene(0, 2, "living room")


def test_save_load_round_trip_is_exact(scene, tmp_path):
    path = tmp_path / "scene.json"
    save_scene(scene, path)
    loaded = load_scene(path)
    assert loaded == scene
    assert json.loads(path.read_text())["format"] == SCENE_FORMAT


def _broken(scene, tmp_path, edit) -> str:
    data = scene.to_json()
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(FormatError) as info:
        load_scene(path)
    assert str(path) in str(info.value)
    return str(info.value)


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d["objects"][3].update(bbox=[[0, 0], [1, 1, 1]]), "bbox[0]"),
        (lambda d: d["objects"][1].pop("size"), "size"),
        (lambda d: d["objects"][0].update(category="spaceship"), "objects[0].category"),
        (lambda d: d.update(version=99), "version"),
        (lambda d: d.update(format="simlab.episode"), "format"),
        (lambda d: d.update(width=-1), "width"),
        (lambda d: d.pop("room_type"), "room_type"),
        (lambda d: d.update(room_type="garage"), "room_type"),
    ],
)
def test_bad_scene_files_name_the_file_and_field(scene, tmp_path, edit, field):
    assert field in _broken(scene, tmp_path, edit)


def test_syntax_error_names_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"format": "simlab.rooms.scene",\n "version": 1,,}')
    with pytest.raises(FormatError, match="line 2"):
        load_scene(path)


@pytest.mark.parametrize("suffix", [".glb", ".gltf"])
def test_gltf_export_loads_back_with_one_geometry_per_object(scene, tmp_path, suffix):
    path = tmp_path / f"scene{suffix}"
    export_gltf(scene, path)
    loaded = trimesh.load(path)
    assert set(loaded.geometry) == {o.id for o in scene.objects} | {
        "floor",
        "wall_south",
        "wall_east",
        "wall_north",
        "wall_west",
    }
    door = next(o for o in scene.objects if o.category == "door")
    assert np.allclose(loaded.geometry[door.id].bounds, np.array(door.bbox), atol=1e-4)
