"""What the room editor keeps between edits so an edit redoes only its share: each object's mesh and scene
items (rebuilt when that object changes; moved along when only where it stands changed, as in a drag), its
visibility tint (when it or who sees it changes) and each agent's picture (re-rendered when its camera moves,
or when an object that changed may show in it: its box before or after the edit reaches into the picture's
frustum).

Rendering dominates an edit (a 480x360 picture takes 100-200 ms, the visibility of both agents a few ms), so
a drag of an object only one agent can see re-renders one picture, and a camera drag re-renders only that
camera's. The frustum test is conservative: a box is skipped only when all its corners lie outside one of
the frustum's planes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Generic, TypeVar

import numpy as np
import pyvista as pv
import trimesh
import vtk
from PIL import Image
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy

from simlab.render.scene import SceneItem
from simlab.worlds.rooms import visibility
from simlab.worlds.rooms.inspection import selected_outline
from simlab.worlds.rooms.model import Camera, RoomObject, Scene, Vec3
from simlab.worlds.rooms.render import object_items, render_view_items, shell_items
from simlab.worlds.rooms.scene import frustum_items, tint_items
from simlab.worlds.rooms.visibility import ViewPair, camera_frame

PICTURE_SIZE = (480, 360)
"""Each agent's picture in the editor's panels (the agents' own 1024x768 at a panel's size)."""
WALL_OPACITY = 0.35  # the 3D view sees the room through its walls, as the episode view does


def state_key(obj: RoomObject) -> str:
    """Everything that shapes ``obj``, as text: equal keys, equal meshes."""
    return json.dumps(obj.to_json(), sort_keys=True)


def shape_key(obj: RoomObject) -> str:
    """Everything that shapes ``obj`` but where it stands: equal keys, the same items moved."""
    state = obj.to_json()
    del state["position"], state["bbox"]
    return json.dumps(state, sort_keys=True)


T = TypeVar("T")


@dataclass
class _Kept(Generic[T]):
    """What was made for one object as it was (``obj``, and its :func:`state_key`)."""

    obj: RoomObject
    key: str
    made: T


def _kept(table: dict[str, _Kept[T]], obj: RoomObject, make: Callable[[_Kept[T] | None], T]) -> T:
    """What ``table`` keeps for ``obj`` when it was made for the same object or one equal to it, else what
    ``make`` makes of what was kept (kept in its place). The state key is worked out once a call, and not at
    all for the very object kept (a drag step's moved objects cost two JSON dumps a call, not four)."""
    kept = table.get(obj.id)
    if kept is not None and kept.obj is obj:
        return kept.made
    key = state_key(obj)
    if kept is None or kept.key != key:
        kept = table[obj.id] = _Kept(obj, key, make(kept))
    kept.obj = obj  # an equal object: the next call finds it by identity
    return kept.made


class RoomParts:
    """Meshes, scene items and pictures of a room being edited, each rebuilt only when what it shows changed."""

    def __init__(self, size: tuple[int, int] = PICTURE_SIZE) -> None:
        self.size = size
        self._meshes: dict[str, _Kept[trimesh.Trimesh]] = {}
        self._items: dict[str, _Kept[list[SceneItem]]] = {}
        self._shell: dict[float, list[SceneItem]] = {}
        self._pictures: dict[str, Image.Image] = {}
        self._tints: dict[str, tuple[RoomObject, tuple[bool, bool], SceneItem]] = {}
        self._still: _Still | None = None
        self._frustums: dict[str, tuple[Camera, list[SceneItem]]] = {}
        self._last: dict[str, RoomObject] = {}  # the objects of the geometry made last
        self._layers: dict[str, _Kept[visibility.RayLayer]] = {}
        self._outline: tuple[RoomObject, SceneItem] | None = None  # the selected object's, as it was made
        self.renders = 0
        """How many pictures were rendered so far (what the caches saved shows in tests and the benchmark)."""

    def mesh(self, obj: RoomObject) -> trimesh.Trimesh:
        """``obj``'s world mesh, built again only when the object changed."""
        return _kept(self._meshes, obj, lambda _kept: visibility.object_mesh(obj))

    def geometry(self, scene: Scene) -> visibility.SceneGeometry:
        """The scene's ray-casting geometry from the kept meshes (only changed objects are meshed again): the
        objects left alone since the geometry before are cast at in a kept layer (its BVH built once, at the
        first step of a drag), each of the others in a layer of its own (:meth:`ray_layer`: a dragged object's
        is the one made at the drag's first step, moved)."""
        now = {o.id: o for o in scene.objects}
        still = self._still
        if still is None or not still.holds(scene, now):
            unchanged = [o for o in scene.objects if o.id not in self._last or _same(self._last[o.id], o)]
            still = self._still = _Still.of(scene, {o.id: (o, self.mesh(o)) for o in unchanged})
        self._last = now
        return still.geometry(scene, self.ray_layer)

    def ray_layer(self, obj: RoomObject) -> visibility.RayLayer:
        """``obj``'s triangles as a ray layer: the one made for it before, moved, when only where it stands
        changed since (no mesh nor BVH made for a drag step), else one made afresh."""
        kept = self._layers.get(obj.id)
        if kept is None or (kept.obj is not obj and kept.key != shape_key(obj)):
            kept = self._layers[obj.id] = _Kept(obj, shape_key(obj), visibility.RayLayer(self.mesh(obj)))
        return kept.made if kept.obj is obj else kept.made.moved(np.subtract(obj.position, kept.obj.position))

    def items(self, scene: Scene, wall_opacity: float) -> list[SceneItem]:
        """The room as scene items (:func:`~simlab.worlds.rooms.render.room_scene_items`), from the kept ones."""
        if wall_opacity not in self._shell:
            self._shell[wall_opacity] = shell_items(scene, wall_opacity)
        out = list(self._shell[wall_opacity])
        for obj in scene.objects:
            made: list[SceneItem] = _kept(self._items, obj, partial(self._object_items, obj))
            out += made
        return out

    def _object_items(self, obj: RoomObject, kept: _Kept[list[SceneItem]] | None) -> list[SceneItem]:
        """``obj``'s items: those ``kept`` moved along when only where it stands changed (a drag step), else
        made from its mesh."""
        if kept is None or shape_key(kept.obj) != shape_key(obj):
            return object_items(obj, self.mesh(obj))
        shift = np.subtract(obj.position, kept.obj.position)
        return [replace(item, mesh=_moved(item.mesh, shift)) for item in kept.made]

    def frustum(self, role: str, camera: Camera) -> list[SceneItem]:
        """:func:`~simlab.worlds.rooms.scene.frustum_items` of ``role``, made again only when its camera changed
        (the same items while an object is dragged: the views keep them as they are)."""
        kept = self._frustums.get(role)
        if kept is None or kept[0] != camera:
            kept = self._frustums[role] = (camera, frustum_items(role, camera))
        return list(kept[1])

    def tints(self, scene: Scene, views: ViewPair) -> list[SceneItem]:
        """:func:`~simlab.worlds.rooms.scene.tint_items` from the kept ones: an object's tint is made again only
        when the object or who sees it changed, and moved along when only where its box is changed (a drag)."""
        objects = {o.id: o for o in scene.objects}
        answerer, helper = set(views.answerer_visible), set(views.helper_visible)
        who = {i: (i in answerer, i in helper) for i in _tinted(views)}

        def kept(i: str) -> bool:
            tint = self._tints.get(i)
            return tint is not None and tint[0] is objects[i] and tint[1] == who[i]

        wanted = {i for i in who if not kept(i)}
        for i in [i for i in wanted if self._tints.get(i, (None, None))[1] == who[i]]:
            before, seen, item = self._tints[i]
            shift = _box_shift(before, objects[i])
            if shift is not None:  # the same box elsewhere: a tint is its box, so the kept one moved is the one made
                self._tints[i] = (objects[i], seen, replace(item, mesh=_moved(item.mesh, shift)))
                wanted.discard(i)
        if wanted:
            part = replace(
                views,
                answerer_visible=[i for i in views.answerer_visible if i in wanted],
                helper_visible=[i for i in views.helper_visible if i in wanted],
            )
            for item, i in zip(tint_items(scene, part), _tinted(part), strict=True):
                self._tints[i] = (objects[i], who[i], item)
        return [self._tints[i][2] for i in who]

    def outline(self, obj: RoomObject) -> SceneItem:
        """The selected ``obj``'s outline (:func:`~simlab.worlds.rooms.inspection.selected_outline`), the one made
        before moved along when only where its box is changed (a drag of the selected object)."""
        kept = self._outline
        if kept is not None and kept[0] is obj:
            return kept[1]
        shift = _box_shift(kept[0], obj) if kept is not None and kept[0].id == obj.id else None
        if kept is None or shift is None:
            made = selected_outline(obj)
        else:
            made = replace(kept[1], mesh=_moved(kept[1].mesh, shift))
        self._outline = (obj, made)
        return made

    def object_changed(
        self, before: RoomObject | None, after: RoomObject | None, cameras: Mapping[str, Camera]
    ) -> None:
        """Forget the pictures the changed object may show in, before or after the edit."""
        boxes = [o.bbox for o in (before, after) if o is not None]
        for role, camera in cameras.items():
            if role not in self._pictures:
                continue  # nothing to forget (the app draws live views and renders no picture): no frustum test
            if any(may_show(camera, box, self.size) for box in boxes):
                self._pictures.pop(role, None)

    def camera_changed(self, role: str) -> None:
        """Forget ``role``'s picture."""
        self._pictures.pop(role, None)

    def pictures(self, scene: Scene, cameras: Mapping[str, Camera]) -> dict[str, Image.Image]:
        """Each role's picture from its camera, rendering only those forgotten since the last call."""
        for role, camera in cameras.items():
            if role not in self._pictures:
                self._pictures[role] = render_view_items(self.items(scene, 1.0), camera, self.size)
                self.renders += 1
        return {role: self._pictures[role] for role in cameras}


def _box_shift(before: RoomObject, now: RoomObject) -> np.ndarray | None:
    """How far ``now``'s bounding box is from ``before``'s when it is the same size (to rounding), else None."""
    (lo, hi), (now_lo, now_hi) = before.bbox, now.bbox
    shift = [b - a for a, b in zip(lo, now_lo, strict=True)]
    same = all(abs(b - a - d) <= 1e-9 for a, b, d in zip(hi, now_hi, shift, strict=True))
    return np.array(shift) if same else None


def _same(before: RoomObject, now: RoomObject) -> bool:
    """Whether ``now`` is ``before`` or an equal object (an undo puts an equal one back)."""
    return before is now or state_key(before) == state_key(now)


@dataclass
class _Still:
    """The ray layer of the room's shell and the objects an edit left alone, with the objects it holds."""

    room: Scene
    objects: dict[str, RoomObject]
    layer: visibility.RayLayer
    owner: np.ndarray  # each face's object, as its place in ``objects``, or SHELL

    @classmethod
    def of(cls, scene: Scene, held: dict[str, tuple[RoomObject, trimesh.Trimesh]]) -> _Still:
        """The layer of ``scene``'s shell and the objects of ``held`` (id -> the object and its mesh)."""
        part = replace(scene, objects=tuple(o for o in scene.objects if o.id in held))
        mesh, owner = visibility.scene_mesh(part, [held[o.id][1] for o in part.objects])
        objects = {o.id: held[o.id][0] for o in part.objects}
        return cls(replace(scene, objects=()), objects, visibility.RayLayer(mesh), owner)

    def holds(self, scene: Scene, now: Mapping[str, RoomObject]) -> bool:
        """Whether every object of the layer is in ``scene`` (``now``: its objects by id) as it was, and the room."""
        if self.room != replace(scene, objects=()):
            return False
        return all(i in now and _same(o, now[i]) for i, o in self.objects.items())

    def geometry(self, scene: Scene, layer_of: Callable[[RoomObject], visibility.RayLayer]) -> visibility.SceneGeometry:
        """``scene``'s geometry: this layer, then one for each object not in it (``layer_of`` gives it)."""
        index = {o.id: k for k, o in enumerate(scene.objects)}
        # the layer's object places to the scene's; SHELL (-1) picks the last entry, itself
        places = np.array([*(index[i] for i in self.objects), visibility.SHELL], dtype=np.int64)
        layers, owners = [self.layer], [places[self.owner]]
        for k, obj in enumerate(scene.objects):
            if obj.id not in self.objects:
                layers.append(layer_of(obj))
                owners.append(np.full(layers[-1].faces, k, dtype=np.int64))
        return visibility.SceneGeometry.of_layers(scene, layers, np.concatenate(owners))


def _moved(mesh: pv.PolyData, shift: np.ndarray) -> pv.PolyData:
    """``mesh`` moved by ``shift``: new points, the cells shared (pyvista's translate costs ten times more)."""
    # VTK's own methods, called on the class: pyvista's copy and points wrappers cost three times as much
    moved = type(mesh)()
    vtk.vtkPolyData.ShallowCopy(moved, mesh)
    points = vtk.vtkPoints()  # points of their own: the shallow copy shares the vtkPoints of ``mesh``
    points.SetData(numpy_to_vtk(vtk_to_numpy(vtk.vtkPointSet.GetPoints(mesh).GetData()) + shift, deep=True))
    vtk.vtkPointSet.SetPoints(moved, points)
    return moved


def may_show(camera: Camera, box: tuple[Vec3, Vec3], size: tuple[int, int]) -> bool:
    """False only when ``box`` is surely outside ``camera``'s frustum in a picture of ``size``: all eight
    corners behind the eye, or all beyond one side of the view."""
    lo, hi = box
    corners = np.array([(x, y, z) for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
    local = camera_frame(camera, corners)
    depth = -local[:, 2]
    tan_v = math.tan(math.radians(camera.fov) / 2)
    tan_h = tan_v * size[0] / size[1]
    outside = (
        depth <= 0,
        local[:, 0] > tan_h * depth,
        local[:, 0] < -tan_h * depth,
        local[:, 1] > tan_v * depth,
        local[:, 1] < -tan_v * depth,
    )
    return not any(bool(np.all(side)) for side in outside)


def _tinted(views: ViewPair) -> list[str]:
    """The objects either agent sees, in the order :func:`~simlab.worlds.rooms.scene.tint_items` tints them."""
    return [*views.answerer_only, *views.helper_only, *views.shared]


def visible_sets(geometry: visibility.SceneGeometry, cameras: Sequence[Camera], min_corners: int) -> list[list[str]]:
    """Each camera's visible ids by the corner rule (none in an empty room, where there is nothing to cast at)."""
    if not geometry.scene.objects:
        return [[] for _ in cameras]
    return visibility.visible_for_cameras(geometry, cameras, min_corners)
