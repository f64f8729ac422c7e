"""Rooms scene files: JSON (format ``simlab.rooms.scene``) and a glTF export for any 3D viewer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trimesh

from simlab.core.errors import FormatError
from simlab.core.reading import check_version, read_json
from simlab.core.recording import write_json_atomic
from simlab.core.writing import write_atomic
from simlab.worlds.rooms.catalog import CATEGORIES, object_mesh, room_shell
from simlab.worlds.rooms.model import ROOM_TYPES, SCENE_FORMAT, SCENE_VERSION, Scene


def save_scene(scene: Scene, path: str | Path) -> None:
    """Write ``scene`` as JSON atomically (floats are written exactly, so a load gives an equal Scene)."""
    write_json_atomic(Path(path), scene.to_json(), indent=1)


def load_scene(path: str | Path) -> Scene:
    """Read a scene file; raises FormatError naming the file and the first bad field."""
    path = Path(path)
    return scene_from_json(read_json(path), path)


def scene_from_json(obj: Any, path: Path, where: str = "") -> Scene:
    """The scene in ``obj`` (read from ``path``; ``where`` is its place in the file, e.g. ``scene`` in a
    question instance); raises FormatError naming the file and the first bad field."""
    check_version(obj, SCENE_FORMAT, SCENE_VERSION, path, where)
    try:
        scene = Scene.from_json(obj)
    except (ValueError, TypeError) as exc:
        raise FormatError(path, where, str(exc)) from None
    _validate(scene, path)
    return scene


def _validate(scene: Scene, path: Path) -> None:
    if scene.room_type not in ROOM_TYPES:
        raise FormatError(
            path, "field 'room_type'", f"expected one of {', '.join(ROOM_TYPES)}, got {scene.room_type!r}"
        )
    for name in ("width", "depth", "height"):
        if not getattr(scene, name) > 0:
            raise FormatError(path, f"field {name!r}", f"expected a positive length, got {getattr(scene, name)!r}")
    for k, obj in enumerate(scene.objects):
        if obj.category not in CATEGORIES:
            raise FormatError(path, f"objects[{k}].category", f"unknown category {obj.category!r}")
        if any(not s > 0 for s in obj.size):
            raise FormatError(path, f"objects[{k}].size", f"expected three positive lengths, got {list(obj.size)}")


def scene_meshes(scene: Scene) -> list[tuple[str, trimesh.Trimesh]]:
    """Every mesh of the scene, named: the room shell parts, then each object by its id."""
    return [(name, mesh) for name, mesh, _ in room_shell(scene)] + [(o.id, object_mesh(o)) for o in scene.objects]


def export_gltf(scene: Scene, path: str | Path) -> None:
    """Write the scene (shell and objects, with face colours) as binary glTF (``.glb``) or ``.gltf`` (atomic)."""
    path = Path(path)
    tscene = trimesh.Scene()
    for name, mesh in scene_meshes(scene):
        tscene.add_geometry(mesh, node_name=name, geom_name=name)
    file_type = "gltf" if path.suffix.lower() == ".gltf" else "glb"
    data = (
        tscene.export(file_type=file_type, embed_buffers=True)
        if file_type == "gltf"
        else tscene.export(file_type="glb")
    )
    payload = data if isinstance(data, bytes) else data["model.gltf"]
    write_atomic(path.parent, path.name, payload)
