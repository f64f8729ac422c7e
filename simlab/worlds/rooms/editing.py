"""The rooms editor's document (:class:`~simlab.core.editing.EditorDocument`): a furnished room and the two
agents' cameras, with who sees what kept up to date after every edit. No Qt: the app's editor window drives
it, and so do the tests and ``benchmarks/editor.py``.

* Entities: every object (its id; its state is the scene JSON of the object) and the two cameras
  (``camera:answerer``, ``camera:helper``; their state is :meth:`Camera.to_json`). Objects keep the order they
  were first put in, so deleting one and undoing puts it back where it was and the file comes out the same.
* After every :meth:`~RoomDocument.put` the visible sets of both agents are computed again by the corner rule
  (:mod:`~simlab.worlds.rooms.visibility`: at least ``min_corners`` of an object's eight box corners in the
  frustum and unblocked, one Embree query for both cameras). The pixel filter that the benchmark generator
  adds on top (an id render per camera) is *not* used: it would cost an off-screen render per agent and
  edit, make every drag step wait for VTK, and it drops only objects a few pixels wide, which the corner
  rule's verdict and its rays explain better while authoring. Questions made here use the same sets.
* Incremental work (:mod:`~simlab.worlds.rooms.editing_views`): a moved object is meshed again alone, the
  ray-casting geometry is reassembled from the kept meshes (a camera move reuses it as is), its scene items
  are rebuilt alone, and a picture is re-rendered only when its camera moved or the object may show in it.
* Placement and snapping: :mod:`~simlab.worlds.rooms.editing_place`; warnings:
  :mod:`~simlab.worlds.rooms.editing_checks`; questions: :mod:`~simlab.worlds.rooms.editing_questions`.

The file is the scene JSON (``scene_io.load_scene`` and the rest of SimLab read it as any scene) with one
more field, ``editor``, holding the cameras.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from PIL import Image

from simlab.core.editing import (
    DocumentAction,
    Edit,
    EditError,
    EditorDocument,
    EditorKind,
    Entity,
    PaletteEntry,
    Point,
    Proposal,
    State,
    change,
)
from simlab.core.errors import FormatError, SimlabError
from simlab.core.family import FormField
from simlab.core.reading import check_version, read_json
from simlab.render.scene import CameraPose, SceneItem
from simlab.worlds.rooms import editing_place as place
from simlab.worlds.rooms import visibility
from simlab.worlds.rooms.cameras import DEFAULT_VIEW_SETTINGS, sample_views
from simlab.worlds.rooms.catalog import CATEGORIES
from simlab.worlds.rooms.describe import describe_objects
from simlab.worlds.rooms.editing_checks import Crossings, warnings_by_entity
from simlab.worlds.rooms.editing_fields import camera_fields, camera_values, object_fields, object_values, parse_values
from simlab.worlds.rooms.editing_questions import first_task, proposal
from simlab.worlds.rooms.editing_views import WALL_OPACITY, RoomParts, visible_sets
from simlab.worlds.rooms.inspection import corner_verdicts, object_id_of, who_sees
from simlab.worlds.rooms.model import ROOM_TYPES, SCENE_FORMAT, Camera, RoomObject, Scene
from simlab.worlds.rooms.observations import ANSWERER, HELPER
from simlab.worlds.rooms.render import camera_pose
from simlab.worlds.rooms.scene import camera_presets
from simlab.worlds.rooms.scene_io import export_gltf, scene_from_json
from simlab.worlds.rooms.visibility import ViewPair

ROLES = (ANSWERER, HELPER)
CAMERA = {ANSWERER: "camera:answerer", HELPER: "camera:helper"}
ROLE_OF = {entity: role for role, entity in CAMERA.items()}
NAMES = {ANSWERER: "Answerer", HELPER: "Helper"}
EDITOR_FORMAT = "simlab.rooms.editor"
EDITOR_VERSION = 1
MAKE_QUESTIONS = "Make questions for this room"
EXPORT_GLTF = "Export glTF"
NEW_ROOM_ID = "authored_room"
ROOM_HEIGHT = 2.8
CAMERA_MARGIN = 0.1  # metres a dragged camera keeps from the walls


class RoomDocument(EditorDocument):
    """A rooms scene and the Answerer's and Helper's cameras, being edited (see the module docstring)."""

    family = "rooms"

    def __init__(self, scene: Scene, cameras: Mapping[str, Camera], path: Path | None = None) -> None:
        super().__init__(path)
        self.room = replace(scene, objects=())
        self.objects: dict[str, RoomObject] = {o.id: o for o in scene.objects}
        self._order = [o.id for o in scene.objects]  # deleted ids stay, so an undone delete keeps its place
        self.cams = {role: cameras[role] for role in ROLES}
        self.parts = RoomParts()
        self.crossings = Crossings()
        self.min_corners = int(DEFAULT_VIEW_SETTINGS["min_corners"])
        self._forget(geometry=True)

    # ---- derived facts -------------------------------------------------------------------------------
    @property
    def scene(self) -> Scene:
        """The room as it is now."""
        return replace(self.room, objects=tuple(self.objects[i] for i in self._order if i in self.objects))

    @property
    def views(self) -> ViewPair:
        """Both cameras and what each sees now."""
        return ViewPair(self.cams[ANSWERER], self.cams[HELPER], self.visible[ANSWERER], self.visible[HELPER])

    def _forget(self, geometry: bool) -> None:
        """What the current state derives is worked out again when next asked for (an edit that puts several
        entities, a move with what stands on it, works it out once); ``geometry``: objects changed."""
        if geometry:
            self._geometry: visibility.SceneGeometry | None = None
        self._visible: dict[str, list[str]] | None = None
        self._warnings: dict[str, str] | None = None

    @property
    def geometry(self) -> visibility.SceneGeometry:
        """The room's ray-casting geometry, reassembled from the kept meshes after objects changed."""
        if self._geometry is None:
            self._geometry = self.parts.geometry(self.scene)
        return self._geometry

    @property
    def visible(self) -> dict[str, list[str]]:
        """What each role sees now, by the corner rule."""
        if self._visible is None:
            seen = visible_sets(self.geometry, [self.cams[r] for r in ROLES], self.min_corners)
            self._visible = dict(zip(ROLES, seen, strict=True))
        return self._visible

    @property
    def warnings(self) -> dict[str, str]:
        """Every entity's warning now (pairs of objects judged again only when one of them changed)."""
        if self._warnings is None:
            self._warnings = warnings_by_entity(self.scene, self.cams, CAMERA, self.crossings)
        return self._warnings

    # ---- entities ------------------------------------------------------------------------------------
    def entities(self) -> list[Entity]:
        """The objects in file order, then the two cameras, each with its warning."""
        rows = [
            Entity(o.id, f"{o.id}: {o.color} {o.category}", "objects", self.warnings.get(o.id, ""))
            for o in self.scene.objects
        ]
        rows += [Entity(CAMERA[r], f"{NAMES[r]}'s camera", "cameras", self.warnings.get(CAMERA[r], "")) for r in ROLES]
        return rows

    def state(self, entity: str) -> State | None:
        """An object's scene JSON or a camera's JSON; None when there is no such entity."""
        if entity in ROLE_OF:
            return self.cams[ROLE_OF[entity]].to_json()
        obj = self.objects.get(entity)
        return obj.to_json() if obj is not None else None

    def put(self, entity: str, state: State | None) -> None:
        """Set an object (None deletes it) or a camera, then recompute who sees what and the warnings."""
        if entity in ROLE_OF:
            self._put_camera(ROLE_OF[entity], state)
            return
        before = self.objects.get(entity)
        after = None if state is None else _parse_object(entity, state)
        if after is None:
            self.objects.pop(entity, None)
        else:
            self.objects[entity] = after
            if entity not in self._order:
                self._order.append(entity)
        self.parts.object_changed(before, after, self.cams)
        self._forget(geometry=True)

    def _put_camera(self, role: str, state: State | None) -> None:
        if state is None:
            raise EditError(f"the {NAMES[role]}'s camera cannot be deleted")
        try:
            self.cams[role] = Camera.from_json(state)
        except (ValueError, TypeError) as exc:
            raise EditError(f"{CAMERA[role]}: {exc}") from None
        self.parts.camera_changed(role)
        self._forget(geometry=False)  # the room did not change: the geometry stands

    # ---- edits -----------------------------------------------------------------------------------------
    def palette(self) -> list[PaletteEntry]:
        """Every catalog category, grouped by where it goes."""
        groups = {"in_wall": "doors and windows", "wall_hang": "on walls", "surface": "on tops"}
        return [
            PaletteEntry(name, groups.get(cat.placement, "furniture"), _palette_help(name))
            for name, cat in CATEGORIES.items()
        ]

    def add(self, name: str, at: Point | None = None) -> Edit:
        """A ``name`` with its first colour and size, dropped at ``at`` (snapped), else on the free spot
        nearest the room's centre."""
        if name not in CATEGORIES:
            raise EditError(f"there is no {name!r} to add; choose one of the palette")
        scene = self.scene
        obj = place.new_object(scene, name)
        placed = place.snap(scene, obj, at) if at is not None else self._free_spot(obj)
        return Edit(f"Add {placed.id}", (change(self, placed.id, placed.to_json()),), select=placed.id)

    def _free_spot(self, obj: RoomObject, points: list[tuple[float, float]] | None = None) -> RoomObject:
        """``obj`` snapped at the first of ``points`` (default: the floor from the centre out) where it
        crosses nothing; EditError when there is none."""
        scene = self.scene
        for point in points if points is not None else place.floor_points(scene):
            trial = place.snap(scene, obj, point)
            probe = replace(scene, objects=(*scene.objects, trial))
            if "goes into" not in warnings_by_entity(probe, {}, CAMERA, self.crossings).get(trial.id, ""):
                return trial
        raise EditError(f"no free spot for {obj.category} {obj.id}: make room or drop it somewhere")

    def fields(self, entity: str) -> tuple[FormField, ...]:
        """An object's category, colour, size, x, y and yaw; a camera's x, y, eye height, yaw, pitch and fov."""
        if entity in ROLE_OF:
            return camera_fields(self.room)
        return object_fields(self._object(entity), self.room)

    def values(self, entity: str) -> dict[str, Any]:
        """The fields' current values (angles in degrees)."""
        if entity in ROLE_OF:
            return camera_values(self.cams[ROLE_OF[entity]])
        return object_values(self._object(entity))

    def set_values(self, entity: str, values: Mapping[str, Any]) -> Edit:
        """Change fields (EditError naming the field and what it expects); x and y are set exactly, not snapped."""
        merged = {**self.values(entity), **parse_values(self.fields(entity), values)}
        if entity in ROLE_OF:
            after = _camera_from_values(self.cams[ROLE_OF[entity]], merged)
        else:
            after = _object_from_values(self._object(entity), merged).to_json()
        return Edit(f"Change {entity}", (change(self, entity, after),), select=entity)

    def remove(self, entity: str) -> Edit:
        """Delete an object (what stood on it stays, with a warning); the cameras cannot be deleted."""
        if entity in ROLE_OF:
            raise EditError(f"the {NAMES[ROLE_OF[entity]]}'s camera cannot be deleted, only moved")
        return super().remove(entity)

    def duplicate(self, entity: str) -> Edit:
        """A copy beside the object (right, left, behind or in front of it, where it crosses nothing)."""
        if entity in ROLE_OF:
            raise EditError("there are two cameras, one per agent: move them instead")
        obj = self._object(entity)
        lo, hi = obj.bbox
        gap_x, gap_y = hi[0] - lo[0] + 0.1, hi[1] - lo[1] + 0.1
        cx, cy = obj.position[0], obj.position[1]
        sides = [(cx + gap_x, cy), (cx - gap_x, cy), (cx, cy + gap_y), (cx, cy - gap_y)]
        copy = replace(obj, id=place.new_id(self.scene, obj.category))
        placed = self._free_spot(copy, sides)
        return Edit(f"Duplicate {entity}", (change(self, placed.id, placed.to_json()),), select=placed.id)

    def move(self, entity: str, to: Point, gesture: str | None = None) -> Edit:
        """Drag an object to floor point ``to`` (snapped; what stands on it comes along) or a camera to stand
        over ``to`` at its eye height; the steps of one ``gesture`` are one undo step."""
        if entity in ROLE_OF:
            camera = self.cams[ROLE_OF[entity]]
            x = min(max(to[0], CAMERA_MARGIN), self.room.width - CAMERA_MARGIN)
            y = min(max(to[1], CAMERA_MARGIN), self.room.depth - CAMERA_MARGIN)
            moved = replace(camera, position=(round(x, 4), round(y, 4), camera.position[2]))
            return Edit(f"Move {entity}", (change(self, entity, moved.to_json()),), gesture, entity)
        obj = self._object(entity)
        moved_obj = place.snap(self.scene, obj, to)
        shift = [b - a for a, b in zip(obj.position, moved_obj.position, strict=True)]
        changes = [change(self, entity, moved_obj.to_json())]
        for child in (o for o in self.scene.objects if o.support == entity):
            at = tuple(p + d for p, d in zip(child.position, shift, strict=True))
            changes.append(change(self, child.id, place.rebuilt(child, at=at).to_json()))
        return Edit(f"Move {entity}", tuple(changes), gesture, entity)

    def entity_of(self, key: str) -> str | None:
        """The object a scene item draws (its mesh, tint, outline, rays) or the camera (frustum, label)."""
        kind, _, rest = key.partition(":")
        if kind in ("frustum", "label") and rest in CAMERA:
            return CAMERA[rest]
        if kind == "selected":
            rest = rest.split(":", 1)[0]
            return rest if rest in self.objects else None
        object_id = object_id_of(key)
        return object_id if object_id in self.objects else None

    def _object(self, entity: str) -> RoomObject:
        if entity not in self.objects:
            raise EditError(f"there is no object {entity!r}")
        return self.objects[entity]

    # ---- what the app shows ------------------------------------------------------------------------------
    def scene_items(self, selected: str | None = None) -> list[SceneItem]:
        """The room (walls translucent), both frustums, the objects tinted by who sees them and, when an
        object is selected, its outline and its corner rays from both eyes."""
        scene, views = self.scene, self.views
        items = self.parts.items(scene, WALL_OPACITY)
        for role in ROLES:
            items += self.parts.frustum(role, self.cams[role])
        items += self.parts.tints(scene, views)
        if selected in self.objects:
            obj = self.objects[selected]
            items += [self.parts.outline(obj), *corner_verdicts(views, self.geometry, obj)[1]]
        return items

    def cameras(self) -> dict[str, CameraPose]:
        """Each agent's eye, top and free."""
        return camera_presets(self.room, self.cams[ANSWERER], self.cams[HELPER])

    def agent_views(self) -> dict[str, CameraPose]:
        """Each agent's eye, for the app to draw live (the same views :meth:`pictures` renders off screen)."""
        return {f"{NAMES[role]}'s view": camera_pose(self.cams[role], NAMES[role]) for role in ROLES}

    def agent_scene(self) -> list[SceneItem]:
        """The room as the agents see it: opaque walls, no tints, rays or frustums."""
        return self.parts.items(self.scene, 1.0)

    def pictures(self) -> dict[str, Image.Image]:
        """Each agent's camera picture at :data:`~simlab.worlds.rooms.editing_views.PICTURE_SIZE`."""
        shots = self.parts.pictures(self.scene, self.cams)
        return {f"{NAMES[role]}'s view": shots[role] for role in ROLES}

    def summary(self) -> str:
        """``Answerer sees 7 objects, Helper 6, 3 shared`` (and how many warnings there are)."""
        views = self.views
        line = f"Answerer sees {len(views.answerer_visible)} objects, Helper {len(views.helper_visible)}, "
        line += f"{len(views.shared)} shared"
        return line + (f"; {len(self.warnings)} with warnings" if self.warnings else "")

    def inspect(self, entity: str) -> list[str]:
        """An object: what it is, how questions name it, each agent's verdict with its corner counts; a
        camera: where it stands and how much it sees."""
        if entity in ROLE_OF:
            return self._inspect_camera(ROLE_OF[entity])
        obj = self._object(entity)
        named = describe_objects(self.scene, [obj.id]).get(obj.id)
        lines = [f"{obj.id}: {obj.size_class} {obj.color} {obj.category}, on {obj.support}"]
        lines.append(f"questions call it: the {named}" if named else "no description singles it out")
        lines += who_sees(self.views, self.geometry, obj)[0]
        return lines + ([f"warning: {self.warnings[entity]}"] if entity in self.warnings else [])

    def _inspect_camera(self, role: str) -> list[str]:
        cam, seen = self.cams[role], self.visible[role]
        x, y, z = cam.position
        lines = [
            f"{NAMES[role]}'s eye at ({x:.2f}, {y:.2f}) m, {z:.2f} m high, facing {math.degrees(cam.yaw):.0f} deg, "
            f"pitch {math.degrees(cam.pitch):.0f} deg, field of view {cam.fov:.0f} deg",
            f"sees {len(seen)} objects: {', '.join(seen) or 'none'}",
        ]
        return lines + ([f"warning: {self.warnings[CAMERA[role]]}"] if CAMERA[role] in self.warnings else [])

    # ---- actions and files ---------------------------------------------------------------------------
    def actions(self) -> list[DocumentAction]:
        """Make questions (a proposal to keep or discard, saved as a benchmark) and export glTF."""
        return [
            DocumentAction(MAKE_QUESTIONS, "Questions of the five Cosmic tasks on this room and these views"),
            DocumentAction(EXPORT_GLTF, "Write the room as binary glTF (.glb) beside its file"),
        ]

    def run(self, action: str) -> Proposal | str:
        """Run one of :meth:`actions`."""
        if action == MAKE_QUESTIONS:
            return proposal(self.scene, self.views)
        if action == EXPORT_GLTF:
            if self.path is None:
                raise EditError("save the room first: the glTF file is written beside it")
            target = self.path.with_suffix(".glb")
            export_gltf(self.scene, target)
            return f"wrote {target}"
        return super().run(action)

    def to_json(self) -> dict[str, Any]:
        """The scene JSON plus ``editor``: the cameras."""
        cameras = {role: self.cams[role].to_json() for role in ROLES}
        return {**self.scene.to_json(), "editor": {"format": EDITOR_FORMAT, "version": EDITOR_VERSION, **cameras}}

    def playable(self) -> dict[str, Any]:
        """The first question the room makes, as a task (EditError saying why when there is none)."""
        return first_task(self.scene, self.views)


# ---- building documents ------------------------------------------------------------------------------


def _parse_object(entity: str, state: State) -> RoomObject:
    try:
        obj = RoomObject.from_json(state)
    except (ValueError, TypeError) as exc:
        raise EditError(f"{entity}: {exc}") from None
    if obj.id != entity:
        raise EditError(f"{entity}: the state is of {obj.id!r}")
    if obj.category not in CATEGORIES:
        raise EditError(f"{entity}: unknown category {obj.category!r}")
    return obj


def _palette_help(name: str) -> str:
    cat = CATEGORIES[name]
    where = {"in_wall": "in a wall", "wall_hang": "on a wall", "surface": "on a top", "wall": "against a wall"}
    return f"a {name} ({where.get(cat.placement, 'on the floor')}; {len(cat.colors)} colours)"


def _object_from_values(obj: RoomObject, values: Mapping[str, Any]) -> RoomObject:
    category, size_class = values["category"], values["size"]
    cat = CATEGORIES[category]
    color = values["color"] if values["color"] in cat.colors else cat.colors[0]
    same = category == obj.category
    size = obj.size if same and size_class == obj.size_class else place.class_size(category, size_class)
    params = dict(obj.params) if same else place.default_params(category)
    at = (float(values["x"]), float(values["y"]), obj.position[2])
    yaw = math.radians(float(values["yaw"]))
    changed = {"category": category, "color": color, "size_class": size_class, "size": size, "params": params}
    return place.rebuilt(obj, at=at, yaw=yaw, **changed)


def _camera_from_values(camera: Camera, values: Mapping[str, Any]) -> State:
    position = (float(values["x"]), float(values["y"]), float(values["eye_height"]))
    pitch, yaw = math.radians(float(values["pitch"])), math.radians(float(values["yaw"]))
    return replace(camera, position=position, yaw=yaw, pitch=pitch, fov=float(values["fov"])).to_json()


def default_cameras(scene: Scene, eye: float, pitch_deg: float) -> dict[str, Camera]:
    """Cameras for a room that has none: the pair the benchmark would sample (corner rule), else the Answerer
    in one corner and the Helper in the opposite one, each looking across the room past the centre."""
    settings = {"eye_height": eye, "pitch_deg": pitch_deg, "pixel_filter": False}
    sampled = sample_views(scene, 0, settings) if scene.objects else None
    if sampled is not None:
        return {ANSWERER: sampled.answerer, HELPER: sampled.helper}
    w, d = scene.width, scene.depth
    size = DEFAULT_VIEW_SETTINGS["image_size"]
    spots = {ANSWERER: ((0.2 * w, 0.25 * d), (0.7 * w, 0.75 * d)), HELPER: ((0.8 * w, 0.75 * d), (0.3 * w, 0.25 * d))}
    fov = float(DEFAULT_VIEW_SETTINGS["fov"])
    return {
        role: Camera((x, y, eye), math.atan2(ty - y, tx - x), math.radians(pitch_deg), fov, size[0], size[1])
        for role, ((x, y), (tx, ty)) in spots.items()
    }


def new_room(options: Mapping[str, Any]) -> RoomDocument:
    """An empty room of ``room_type``, ``width`` x ``depth`` metres, with cameras at ``eye_height`` and
    ``pitch`` (degrees); missing options take the defaults of :data:`NEW_FIELDS`."""
    values = {f.name: f.value for f in NEW_FIELDS} | parse_values(NEW_FIELDS, options)
    scene = Scene(NEW_ROOM_ID, values["room_type"], float(values["width"]), float(values["depth"]), ROOM_HEIGHT, ())
    return RoomDocument(scene, default_cameras(scene, float(values["eye_height"]), float(values["pitch"])))


def open_room(path: Path) -> RoomDocument:
    """A scene file (the editor's own, or any rooms scene: then the default cameras) or a rooms question
    instance (its scene and cameras); EditError naming the file and the field that is wrong."""
    data = _read(path)
    try:
        if data.get("format") == SCENE_FORMAT:
            scene, where, cameras = scene_from_json(data, path), "editor", data.get("editor")
            if cameras is not None:
                check_version(cameras, EDITOR_FORMAT, EDITOR_VERSION, path, "editor")
        else:
            scene, where, cameras = scene_from_json(data.get("scene"), path, "scene"), "views", data.get("views")
    except SimlabError as exc:
        raise EditError(str(exc)) from None
    if cameras is None:
        eye, pitch = float(DEFAULT_VIEW_SETTINGS["eye_height"]), float(DEFAULT_VIEW_SETTINGS["pitch_deg"])
        return RoomDocument(scene, default_cameras(scene, eye, pitch), path)
    return RoomDocument(scene, _cameras(cameras, path, where), path)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = read_json(path)
    except FormatError as exc:
        raise EditError(f"not a readable JSON file: {exc}") from None
    if not isinstance(data, dict) or not (data.get("format") == SCENE_FORMAT or "scene" in data):
        raise EditError(f"{path}: expected a rooms scene (format {SCENE_FORMAT!r}) or a rooms question instance")
    return data


def _cameras(data: Any, path: Path, where: str) -> dict[str, Camera]:
    if not isinstance(data, Mapping):
        raise EditError(f"{path}, field {where!r}: expected the two cameras as an object")
    out = {}
    for role in ROLES:
        try:
            out[role] = Camera.from_json(data.get(role))
        except (ValueError, TypeError) as exc:
            raise EditError(f"{path}, field '{where}.{role}': {exc}") from None
    return out


def can_open(path: Path) -> bool:
    """Whether ``path`` is a rooms scene or question instance (what :func:`open_room` reads)."""
    try:
        _read(path)
    except EditError:
        return False
    return True


NEW_FIELDS: tuple[FormField, ...] = (
    FormField("room_type", "choice", "Room type", ROOM_TYPES, value=ROOM_TYPES[0]),
    FormField("width", "number", "Width (m)", low=2, high=12, value=5.0),
    FormField("depth", "number", "Depth (m)", low=2, high=12, value=4.0),
    FormField(
        "eye_height", "number", "Cameras' eye height (m)", low=0, high=3, value=DEFAULT_VIEW_SETTINGS["eye_height"]
    ),
    FormField(
        "pitch", "number", "Cameras' pitch (degrees)", low=-89, high=89, value=DEFAULT_VIEW_SETTINGS["pitch_deg"]
    ),
)

EDITOR = EditorKind(
    new=new_room,
    open=open_room,
    can_open=can_open,
    file_filter="Rooms scenes (*.json)",
    new_fields=NEW_FIELDS,
)
"""The rooms family's editor (``WorldFamily.editor``)."""
