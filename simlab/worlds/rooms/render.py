"""Pictures of the rooms world: egocentric views, object-id renders and top-down maps. Headless (no GUI toolkit).

* :func:`room_scene_items` turns a scene into :class:`~simlab.render.scene.SceneItem` s (the GUI's 3D view
  and the off-screen renders share them);
* :func:`render_view` is an agent's egocentric RGB image (what a model is shown);
* :func:`render_ids` renders each object in a flat, unlit colour encoding its index and decodes it back,
  so :func:`pixel_counts` can count the pixels each object covers;
* :func:`topdown_map` draws the cognitive-mapping map (Pillow), turned so that the Answerer looks up;
* :func:`render_view_overlay` marks the bounding-box corners used for visibility on a view.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import numpy as np
import pyvista as pv
import trimesh
from PIL import Image, ImageDraw

# Imported from its module, not looked up as pv.Color: pyvista loads its plotting module on the first such look-up,
# and a thread looking one up while another loads it fails (a rooms batch draws in threads).
from pyvista.plotting.colors import Color
from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
from vtkmodules.vtkRenderingCore import vtkActor, vtkPolyDataMapper

from simlab.render.images import text_font
from simlab.render.scene import (
    CameraPose,
    SceneItem,
    camera_lights,
    face_normals,
    flat_shade,
    offscreen_plotter,
    set_camera,
)
from simlab.worlds.rooms import visibility
from simlab.worlds.rooms.materials import MAP_COLOURS, MATERIALS
from simlab.worlds.rooms.model import Camera, RoomObject, Scene
from simlab.worlds.rooms.visibility import CornerRay, camera_frame

RGB = tuple[int, int, int]
Point = tuple[float, float]

MAP_BACKGROUND, MAP_FLOOR, MAP_WALL, MAP_TEXT, MARKER = (MATERIALS.map[name] for name in MAP_COLOURS)
CORNER_COLOURS: dict[str, RGB] = MATERIALS.corners
FLAT_LIT_KEPT = 512
"""How many items' :class:`FlatLit` parts are kept for drawing the same item objects again (a few rooms')."""


# ---- 3D items ----------------------------------------------------------------------------------------


def to_polydata(mesh: trimesh.Trimesh) -> pv.PolyData:
    """A triangle mesh as pyvista PolyData (no colours)."""
    faces = np.hstack([np.full((len(mesh.faces), 1), 3), np.asarray(mesh.faces)]).astype(np.int64)
    return pv.PolyData(np.asarray(mesh.vertices, dtype=float), faces.ravel())


def colour_parts(mesh: trimesh.Trimesh, fallback: RGB) -> list[tuple[trimesh.Trimesh, RGB]]:
    """``mesh`` split by face colour (in a fixed order: the most faces first), or whole in ``fallback``."""
    colours = _face_rgb(mesh)
    if colours is None:
        return [(mesh, fallback)]
    unique, inverse, counts = np.unique(colours, axis=0, return_inverse=True, return_counts=True)
    order = sorted(range(len(unique)), key=lambda k: (-counts[k], tuple(unique[k])))
    parts = []
    for k in order:
        part = _face_subset(mesh, np.flatnonzero(inverse.ravel() == k))
        parts.append((part, (int(unique[k][0]), int(unique[k][1]), int(unique[k][2]))))
    return parts


def _face_subset(mesh: trimesh.Trimesh, faces: np.ndarray) -> trimesh.Trimesh:
    """The triangles ``faces`` of ``mesh`` with only the vertices they use, in their order: the vertices and
    faces of ``mesh.submesh([faces], append=True)``, made without the visuals, normals and metadata it copies
    (a tenth of a room's picture went there; only the geometry is drawn)."""
    current = np.asarray(mesh.faces)[faces]
    used, remapped = np.unique(current.reshape(-1), return_inverse=True)
    vertices = np.asarray(mesh.vertices)[used]
    return trimesh.Trimesh(vertices=vertices, faces=remapped.reshape(-1, 3), process=False)


def _face_rgb(mesh: trimesh.Trimesh) -> np.ndarray | None:
    visual = getattr(mesh, "visual", None)
    if visual is None or getattr(visual, "kind", None) != "face":
        return None
    return np.asarray(visual.face_colors)[:, :3]


def _rgbf(rgb: Sequence[int]) -> tuple[float, float, float]:
    return (rgb[0] / 255.0, rgb[1] / 255.0, rgb[2] / 255.0)


def object_items(obj: RoomObject, mesh: trimesh.Trimesh | None = None) -> list[SceneItem]:
    """One item per colour of ``obj``'s mesh (``mesh`` when already built); a single-coloured object gets key
    ``object:{id}``."""
    parts = colour_parts(mesh if mesh is not None else visibility.object_mesh(obj), obj.rgb)
    tooltip = f"{obj.id}: {obj.color} {obj.category}"
    if len(parts) == 1:
        return [SceneItem(f"object:{obj.id}", "object", to_polydata(parts[0][0]), _rgbf(parts[0][1]), tooltip=tooltip)]
    return [
        SceneItem(f"object:{obj.id}:{k}", "object", to_polydata(mesh), _rgbf(rgb), tooltip=tooltip)
        for k, (mesh, rgb) in enumerate(parts)
    ]


def shell_items(scene: Scene, wall_opacity: float = 1.0) -> list[SceneItem]:
    """The floor (kind ``floor``) and walls (kind ``wall``, drawn with ``wall_opacity``) of ``scene``."""
    return [_shell_item(name, to_polydata(mesh), rgb, wall_opacity) for name, mesh, rgb in visibility.room_shell(scene)]


def _shell_item(name: str, mesh: pv.PolyData, rgb: RGB, wall_opacity: float) -> SceneItem:
    kind = "floor" if name.startswith("floor") else "wall"
    opacity = 1.0 if kind == "floor" else wall_opacity
    return SceneItem(f"shell:{name}", kind, mesh, _rgbf(rgb), opacity=opacity)


def room_scene_items(scene: Scene, wall_opacity: float = 1.0) -> list[SceneItem]:
    """The whole room as scene items: the shell, then every object (split by colour)."""
    items = shell_items(scene, wall_opacity)
    for obj in scene.objects:
        items.extend(object_items(obj))
    return items


def camera_pose(camera: Camera, name: str = "agent") -> CameraPose:
    """``camera`` as a perspective :class:`CameraPose` (focal point one metre ahead)."""
    p, f = camera.position, camera.forward
    focal = (p[0] + f[0], p[1] + f[1], p[2] + f[2])
    return CameraPose(name, p, focal, camera.up, parallel=False, view_angle=camera.fov)


# ---- renders -----------------------------------------------------------------------------------------


def render_view(scene: Scene, camera: Camera, size: tuple[int, int] = (1024, 768)) -> Image.Image:
    """The egocentric RGB view from ``camera`` (walls and floor drawn, colours kept true by mostly ambient
    and diffuse light with no specular highlight), without anti-aliasing (see :func:`without_anti_aliasing`)."""
    return render_view_items(room_scene_items(scene), camera, size)


def render_view_items(items: Sequence[SceneItem], camera: Camera, size: tuple[int, int]) -> Image.Image:
    """:func:`render_view` of a room already turned into ``items`` (the editor keeps them between edits)."""
    return render_views_of_items(items, [camera], size)[0]


def render_views(scene: Scene, cameras: Sequence[Camera], size: tuple[int, int] = (1024, 768)) -> list[Image.Image]:
    """:func:`render_view` from each of ``cameras``, pixel for pixel, the room made and added to the plotter
    once (a benchmark build renders both agents' views of every room): as :func:`room_flat_parts`, one actor
    per run of surfaces drawn alike, not an item and an actor per part of each object."""
    return _render_parts(room_flat_parts(scene), cameras, size)


def render_views_of_items(
    items: Sequence[SceneItem], cameras: Sequence[Camera], size: tuple[int, int]
) -> list[Image.Image]:
    """The room ``items`` (plain surfaces, as :func:`room_scene_items` makes them) from each of ``cameras``.

    Each face is drawn unlit in the colour VTK's flat lighting would give it (:class:`FlatLit`): the same
    picture within one level of 255 in a few pixels, at a third of the cost on software GL, where the
    fragment shader's five lights were most of a view's time."""
    return _render_parts([_flat_lit(item) for item in items], cameras, size)


def _render_parts(parts: Sequence[FlatLit], cameras: Sequence[Camera], size: tuple[int, int]) -> list[Image.Image]:
    """``parts`` (made before taking the shared plotter: others may render meanwhile) from each of ``cameras``."""
    with offscreen_plotter(size) as plotter, without_anti_aliasing(plotter):
        plotter.clear_actors()
        plotter.renderer.set_background("white")
        for part in parts:
            plotter.renderer.AddActor(part.actor)
        try:
            return [_flat_snapshot(plotter, parts, camera) for camera in cameras]
        finally:  # taken off again: the next user of the plotter finds it as clear_actors leaves it
            for part in parts:
                plotter.renderer.RemoveActor(part.actor)


def room_flat_parts(scene: Scene) -> list[FlatLit]:
    """The faces of :func:`room_scene_items` (shell, then each object's colours), in the order its items draw
    them, merged into one :class:`FlatLit` per run of items with the same opacity and culling: the same
    triangles drawn in the same order give the same pixels, and a room costs three actors instead of about 80
    (making the items and their actors was a third of a build's picture)."""
    runs: list[tuple[tuple[float, bool], list[np.ndarray], list[np.ndarray], list[np.ndarray]]] = []
    for (points, triangles, rgb), look in _room_surfaces(scene):
        if not runs or runs[-1][0] != look:
            runs.append((look, [], [], []))
        _, run_points, run_triangles, run_rgb = runs[-1]
        run_triangles.append(triangles + sum(len(p) for p in run_points))
        run_points.append(points)
        run_rgb.append(rgb)
    return [
        FlatLit(np.concatenate(points), np.concatenate(triangles), np.concatenate(rgb), *look)
        for look, points, triangles, rgb in runs
    ]


Surface = tuple[np.ndarray, np.ndarray, np.ndarray]
"""Points (m, 3), triangles (n, 3) drawn in their order, each face's colour (n, 3, 0-1)."""


def _room_surfaces(scene: Scene) -> Iterator[tuple[Surface, tuple[float, bool]]]:
    """Every surface of :func:`room_scene_items` with its (opacity, culled): the shell as in
    :func:`shell_items` (opaque walls), then each object's faces grouped by colour as :func:`colour_parts`
    splits them."""
    for name, mesh, rgb in visibility.room_shell(scene):
        item = _shell_item(name, pv.PolyData(), rgb, 1.0)  # its look only: the mesh goes into the run
        yield _surface(mesh, np.asarray(rgb)), (item.opacity, item.culled)
    for obj in scene.objects:
        yield _surface(visibility.object_mesh(obj), np.asarray(obj.rgb)), (1.0, False)


def _surface(mesh: trimesh.Trimesh, fallback: np.ndarray) -> Surface:
    """``mesh``'s faces in :func:`colour_parts` order (its colours by most faces first, each one's faces in
    their order) with their colours, or all in ``fallback`` when its faces have none."""
    faces, points = np.asarray(mesh.faces), np.asarray(mesh.vertices, dtype=float)
    colours = _face_rgb(mesh)
    if colours is None:
        return points, faces, np.tile(fallback / 255.0, (len(faces), 1))
    unique, inverse, counts = np.unique(colours, axis=0, return_inverse=True, return_counts=True)
    order = sorted(range(len(unique)), key=lambda k: (-counts[k], tuple(unique[k])))
    rank = np.empty(len(unique), dtype=np.int64)
    rank[order] = np.arange(len(unique))
    drawn = np.argsort(rank[inverse.ravel()], kind="stable")
    return points, faces[drawn], colours[drawn] / 255.0


class FlatLit:
    """Room surfaces as an unlit VTK actor whose faces are coloured here, per camera, as VTK's flat lighting
    colours them: a face's colour times the ambient factor, plus times the diffuse factor the sum over the
    lights of each light's colour and intensity times the cosine between the face's normal (turned towards the
    eye: lighting is two-sided) and the direction to the light."""

    def __init__(
        self, points: np.ndarray, triangles: np.ndarray, rgb: np.ndarray, opacity: float, culled: bool
    ) -> None:
        """``triangles`` (n, 3) indexing ``points`` (m, 3), drawn in their order; ``rgb``: the colour (0-1) of
        every face (n, 3) or of all (3,), in 8 bits a channel as ``add_mesh`` sets colours."""
        self.anchors = points[triangles[:, 0]]
        self.normals = face_normals(points, triangles)
        self.rgb = rgb
        self.colours = np.zeros((len(triangles), 3), dtype=np.uint8)
        self.array = numpy_to_vtk(self.colours, deep=False)  # shares self.colours: written in place per camera
        poly = vtkPolyData()  # VTK's own classes: pyvista's wrappers cost more than the render here
        poly.SetPoints(pv.vtk_points(points, deep=True))
        poly.SetPolys(_vtk_triangles(triangles))
        poly.GetCellData().SetScalars(self.array)
        mapper = vtkPolyDataMapper()
        mapper.SetInputData(poly)
        mapper.SetScalarModeToUseCellData()
        mapper.SetColorModeToDirectScalars()
        self.actor = vtkActor()
        self.actor.SetMapper(mapper)
        look = self.actor.GetProperty()
        look.LightingOff()
        look.SetOpacity(opacity)
        look.SetBackfaceCulling(culled)

    @classmethod
    def of_item(cls, item: SceneItem) -> FlatLit:
        """``item`` (a surface of triangles, as :func:`to_polydata` makes them) in its one colour."""
        cells = np.asarray(item.mesh.faces).reshape(-1, 4)
        assert (cells[:, 0] == 3).all(), "rooms meshes are triangles (to_polydata)"
        rgb = np.asarray(Color(item.color).float_rgb)
        return cls(np.asarray(item.mesh.points, dtype=float), cells[:, 1:], rgb, item.opacity, item.culled)

    def light(self, eye: np.ndarray, towards: np.ndarray, intensities: np.ndarray) -> None:
        """Colour the faces as seen from ``eye`` under lights in unit directions ``towards`` (n, 3) with
        ``intensities`` (n, 3): colour times intensity per channel."""
        self.colours[:] = flat_shade(self.rgb, self.normals, eye - self.anchors, towards, intensities)
        self.array.Modified()


def _vtk_triangles(triangles: np.ndarray) -> vtkCellArray:
    """``triangles`` (n, 3) as VTK cells."""
    cells = vtkCellArray()
    offsets = np.arange(0, 3 * len(triangles) + 1, 3, dtype=np.int64)
    cells.SetData(numpy_to_vtkIdTypeArray(offsets, deep=True), numpy_to_vtkIdTypeArray(triangles.ravel(), deep=True))
    return cells


_FLAT_LIT: OrderedDict[int, tuple[SceneItem, FlatLit]] = OrderedDict()  # id(item) -> the item, its part
_FLAT_LIT_LOCK = threading.Lock()


def _flat_lit(item: SceneItem) -> FlatLit:
    """``item``'s :class:`FlatLit`, made once for the same item object and kept (least recently used first
    out): the editor keeps a room's items between edits and draws both agents' pictures from them after each
    one, and making a part (its normals, its VTK actor) cost half of a 480x360 picture. Items are frozen and
    their meshes never changed in place, so a kept part still shows its item."""
    with _FLAT_LIT_LOCK:
        kept = _FLAT_LIT.get(id(item))
        if kept is not None and kept[0] is item:
            _FLAT_LIT.move_to_end(id(item))
            return kept[1]
    part = FlatLit.of_item(item)
    with _FLAT_LIT_LOCK:
        _FLAT_LIT[id(item)] = (item, part)  # the item is held too: its id stays its own while kept
        while len(_FLAT_LIT) > FLAT_LIT_KEPT:
            _FLAT_LIT.popitem(last=False)
    return part


def _flat_snapshot(plotter: pv.Plotter, parts: Sequence[FlatLit], camera: Camera) -> Image.Image:
    set_camera(plotter, camera_pose(camera))
    towards, intensities = camera_lights(plotter.renderer)
    eye = np.asarray(camera.position, dtype=float)
    for part in parts:
        part.light(eye, towards, intensities)
    plotter.render()
    return Image.fromarray(np.asarray(plotter.screenshot(return_img=True))[:, :, :3].astype(np.uint8), "RGB")


@contextmanager
def without_anti_aliasing(plotter: pv.Plotter) -> Iterator[pv.Plotter]:
    """``plotter`` (a shared off-screen one) without multisampling, then with as many samples as before, as
    its other users expect.

    An id render must decode exactly, and the rooms views skip it for speed: Mesa's software GL (llvmpipe)
    spends more on 4x multisampling than on the rest of a 1024x768 view (a benchmark build draws two views a
    room). Edges step by a pixel, which a model reading the picture does not need smoothed (README,
    Performance)."""
    window = plotter.render_window
    assert window is not None  # the cached plotters stay open until close_plotters
    samples = window.GetMultiSamples()
    window.SetMultiSamples(0)
    try:
        yield plotter
    finally:
        window.SetMultiSamples(samples)


def encode_index(index: int) -> RGB:
    """The flat colour of object ``index`` in an id render (0 is reserved for background and shell)."""
    code = index + 1
    return ((code >> 16) & 255, (code >> 8) & 255, code & 255)


def decode_ids(pixels: np.ndarray) -> np.ndarray:
    """Object indices (-1 for background and shell) from an (H, W, 3) id render."""
    rgb = pixels[:, :, :3].astype(np.int64)
    return (rgb[:, :, 0] << 16 | rgb[:, :, 1] << 8 | rgb[:, :, 2]) - 1


def render_ids(
    scene: Scene, camera: Camera, size: tuple[int, int] = (640, 480), geom: visibility.SceneGeometry | None = None
) -> np.ndarray:
    """An (H, W) int array: the index in ``scene.objects`` of the object seen at each pixel, -1 elsewhere.

    Every object is drawn unlit in :func:`encode_index` colour, the shell in black (it hides what is behind
    it), without anti-aliasing, so every pixel decodes exactly. ``geom``: the scene's merged triangles when
    the caller has them (view sampling renders both cameras of many attempts from one)."""
    return render_ids_many(*_id_mesh(scene, geom), [camera], size)[0]


def render_ids_many(
    mesh: trimesh.Trimesh, owners: np.ndarray, cameras: Sequence[Camera], size: tuple[int, int]
) -> list[np.ndarray]:
    """:func:`render_ids` of the room merged into ``mesh`` (``owners``: each face's object index) from each of
    ``cameras``, the id mesh added once (view sampling counts both cameras of an attempt)."""
    with offscreen_plotter(size) as plotter, without_anti_aliasing(plotter):
        _show_id_mesh(plotter, mesh, owners)
        return [decode_ids(_id_pixels(plotter, camera)) for camera in cameras]


_ID_MESHES: weakref.WeakKeyDictionary[pv.Plotter, tuple[trimesh.Trimesh, np.ndarray, vtkActor]] = (
    weakref.WeakKeyDictionary()
)
"""Per plotter (gone with it): the room mesh and owners whose id actor it last showed, and that actor."""


def _show_id_mesh(plotter: pv.Plotter, mesh: trimesh.Trimesh, owners: np.ndarray) -> None:
    """Put ``mesh``'s id actor alone on ``plotter``: the one it holds already when it shows the same mesh
    (view sampling renders a room's pixel filter for up to three samplings, each from the room's geometry)."""
    plotter.renderer.set_background("black")
    kept = _ID_MESHES.get(plotter)
    if (
        kept is not None
        and kept[0] is mesh
        and kept[1] is owners
        and list(plotter.renderer.actors.values()) == [kept[2]]
    ):
        return
    _ID_MESHES[plotter] = (mesh, owners, _add_id_mesh(plotter, id_polydata(mesh, owners)))


def _id_mesh(scene: Scene, geom: visibility.SceneGeometry | None) -> tuple[trimesh.Trimesh, np.ndarray]:
    """The room's merged triangles and each face's owner: ``geom``'s when the caller built it."""
    return (geom.mesh, geom.face_owner) if geom is not None else visibility.scene_mesh(scene)


def id_polydata(mesh: trimesh.Trimesh, owners: np.ndarray) -> pv.PolyData:
    """``mesh`` with each face coloured by its owner's :func:`encode_index` (black for the shell, owner -1):
    one actor for the whole room, which renders several times faster than an actor per object."""
    poly = to_polydata(mesh)
    codes = np.asarray(owners, dtype=np.int64) + 1
    poly.cell_data["ids"] = np.stack([(codes >> 16) & 255, (codes >> 8) & 255, codes & 255], axis=1).astype(np.uint8)
    return poly


def _add_id_mesh(plotter: pv.Plotter, poly: pv.PolyData) -> vtkActor:
    plotter.clear_actors()
    return plotter.add_mesh(
        poly,
        scalars="ids",
        rgb=True,
        preference="cell",
        lighting=False,
        smooth_shading=False,
        reset_camera=False,
        render=False,
    )


def _id_pixels(plotter: pv.Plotter, camera: Camera) -> np.ndarray:
    set_camera(plotter, camera_pose(camera))
    plotter.render()
    return np.asarray(plotter.screenshot(return_img=True))


def project(camera: Camera, points: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Pixel coordinates (n, 2) of world ``points`` in a view of ``size``; NaN for points behind the camera."""
    local = camera_frame(camera, points)
    focal = size[1] / 2 / math.tan(math.radians(camera.fov) / 2)
    depth = np.where(-local[:, 2] > 1e-9, -local[:, 2], np.nan)
    return np.stack([size[0] / 2 + focal * local[:, 0] / depth, size[1] / 2 - focal * local[:, 1] / depth], axis=1)


def render_view_overlay(
    scene: Scene, camera: Camera, rays: Sequence[CornerRay], size: tuple[int, int] = (1024, 768)
) -> Image.Image:
    """:func:`render_view` with each corner ray's corner marked: green in the frustum and unblocked, red
    blocked, grey outside the frustum."""
    image = render_view(scene, camera, size)
    if not rays:
        return image
    draw = ImageDraw.Draw(image)
    pixels = project(camera, np.array([r.corner for r in rays], dtype=float), size)
    radius = max(3, size[0] // 160)
    for ray, (u, v) in zip(rays, pixels, strict=True):
        if not np.isfinite(u):
            continue
        draw.ellipse(
            (u - radius, v - radius, u + radius, v + radius), fill=CORNER_COLOURS[ray.state], outline=(0, 0, 0)
        )
    return image


# ---- top-down map ------------------------------------------------------------------------------------


class MapFrame:
    """World floor coordinates to map pixels, turned so ``camera``'s facing direction points up."""

    def __init__(self, scene: Scene, camera: Camera, size: tuple[int, int], margin: float = 0.08) -> None:
        self.yaw, self.size = camera.yaw, size
        self.centre = (scene.width / 2, scene.depth / 2)
        corners = [(0.0, 0.0), (scene.width, 0.0), (scene.width, scene.depth), (0.0, scene.depth)]
        turned = [self._turn(p) for p in corners]
        span_u = max(abs(u) for u, _ in turned) * 2
        span_v = max(abs(v) for _, v in turned) * 2
        self.scale = min(size[0] * (1 - 2 * margin) / span_u, size[1] * (1 - 2 * margin) / span_v)

    def _turn(self, p: Point) -> Point:
        """(right, ahead) offsets of floor point ``p`` from the room centre, as the camera faces."""
        dx, dy = p[0] - self.centre[0], p[1] - self.centre[1]
        return (dx * math.sin(self.yaw) - dy * math.cos(self.yaw), dx * math.cos(self.yaw) + dy * math.sin(self.yaw))

    def pixel(self, p: Point) -> Point:
        u, v = self._turn(p)
        return (self.size[0] / 2 + u * self.scale, self.size[1] / 2 - v * self.scale)


def footprint(obj: RoomObject, centre: Point | None = None, least: float = 0.0) -> list[Point]:
    """The four floor corners of ``obj``'s rotated footprint (its own width and depth, each at least
    ``least`` metres, turned by its yaw), centred on its bounding box centre or on ``centre``."""
    cx, cy = centre if centre is not None else obj.center[:2]
    hw, hd = max(obj.size[0], least) / 2, max(obj.size[1], least) / 2
    c, s = math.cos(obj.yaw), math.sin(obj.yaw)
    return [(cx + x * c - y * s, cy + x * s + y * c) for x, y in ((-hw, -hd), (hw, -hd), (hw, hd), (-hw, hd))]


def _map_centres(scene: Scene, object_ids: Sequence[str], swap: Sequence[tuple[str, str]] | None) -> dict[str, Point]:
    """Where each object is drawn: its own centre, or its partner's when the pair is swapped."""
    centres = {i: (scene.object(i).center[0], scene.object(i).center[1]) for i in object_ids}
    for a, b in swap or ():
        if a in centres and b in centres:
            centres[a], centres[b] = centres[b], centres[a]
    return centres


def topdown_map(
    scene: Scene,
    object_ids: Sequence[str],
    up_camera: Camera,
    size: tuple[int, int] = (768, 768),
    swap: Sequence[tuple[str, str]] | None = None,
    labels: Mapping[str, str] | None = None,
) -> Image.Image:
    """The cognitive-mapping map: the room outline turned so ``up_camera`` faces up, each listed object's
    footprint filled in its colour with a dark outline and a label (its category, or ``labels[id]``), and a
    red arrow at the Answerer's position. With ``swap``, each pair's positions are exchanged (a distractor)."""
    frame = MapFrame(scene, up_camera, size)
    image = Image.new("RGB", size, MAP_BACKGROUND)
    draw = ImageDraw.Draw(image)
    room = [(0.0, 0.0), (scene.width, 0.0), (scene.width, scene.depth), (0.0, scene.depth)]
    draw.polygon([frame.pixel(p) for p in room], fill=MAP_FLOOR, outline=MAP_WALL, width=max(3, size[0] // 150))
    centres = _map_centres(scene, object_ids, swap)
    objects = sorted((scene.object(i) for i in object_ids), key=lambda o: (-o.size[0] * o.size[1], o.id))
    for obj in objects:
        _draw_footprint(draw, frame, obj, centres[obj.id])
    _draw_marker(draw, frame, up_camera)
    placed: list[tuple[float, float, float, float]] = []
    for obj in objects:
        text = (labels or {}).get(obj.id, obj.category.replace("_", " "))
        _draw_label(draw, frame.pixel(centres[obj.id]), text, placed, max(12, size[1] // 48))
    return image


def _draw_footprint(draw: ImageDraw.ImageDraw, frame: MapFrame, obj: RoomObject, centre: Point) -> None:
    points = [frame.pixel(p) for p in footprint(obj, centre, least=12 / frame.scale)]  # thin things stay visible
    outline = tuple(int(c * 0.45) for c in obj.rgb)
    draw.polygon(points, fill=tuple(obj.rgb), outline=outline, width=2)


def _draw_marker(draw: ImageDraw.ImageDraw, frame: MapFrame, camera: Camera) -> None:
    """An upward arrow (the Answerer faces up in the map) at ``camera``'s floor position."""
    x, y = frame.pixel((camera.position[0], camera.position[1]))
    r = max(10, frame.size[0] // 40)
    draw.ellipse((x - r * 0.55, y - r * 0.55, x + r * 0.55, y + r * 0.55), fill=MARKER, outline=(90, 0, 0))
    draw.polygon([(x, y - 1.9 * r), (x - 0.7 * r, y - 0.6 * r), (x + 0.7 * r, y - 0.6 * r)], fill=MARKER)
    draw.text((x, y + r * 0.8), "you", fill=MARKER, font=text_font(max(12, frame.size[1] // 48)), anchor="mt")


def _draw_label(draw: ImageDraw.ImageDraw, at: Point, text: str, placed: list, font_size: int) -> None:
    """``text`` on a pale box near ``at``, nudged up or down until it clears earlier labels."""
    font = text_font(font_size)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    w, h = right - left + 6, bottom - top + 4
    box = (at[0] - w / 2, at[1] - h / 2, at[0] + w / 2, at[1] + h / 2)
    for shift in (0, 1, -1, 2, -2, 3, -3):
        trial = (box[0], box[1] + shift * h, box[2], box[3] + shift * h)
        if not any(_overlap(trial, other) for other in placed):
            box = trial
            break
    placed.append(box)
    draw.rounded_rectangle(box, radius=3, fill=(255, 255, 255), outline=(120, 120, 120))
    draw.text(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), text, fill=MAP_TEXT, font=font, anchor="mm")


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


# ---- pixel counts -------------------------------------------------------------------------------------


def min_pixels(size: tuple[int, int]) -> int:
    """The reference's 1,000-pixel threshold at 1280x720, scaled to an image of ``size`` by pixel area."""
    area = visibility.REFERENCE_SIZE[0] * visibility.REFERENCE_SIZE[1]
    return max(1, round(visibility.REFERENCE_MIN_PIXELS * size[0] * size[1] / area))


def pixel_counts(
    scene: Scene, camera: Camera, size: tuple[int, int] = (640, 480), geom: visibility.SceneGeometry | None = None
) -> dict[str, int]:
    """How many pixels of an id render of ``size`` each object covers (0 when hidden), by id."""
    return pixel_counts_many(scene, [camera], size, geom)[0]


def pixel_counts_many(
    scene: Scene, cameras: Sequence[Camera], size: tuple[int, int], geom: visibility.SceneGeometry | None = None
) -> list[dict[str, int]]:
    """:func:`pixel_counts` from each of ``cameras``, the id mesh added once."""
    out = []
    for ids in render_ids_many(*_id_mesh(scene, geom), cameras, size):
        counts = np.bincount(ids[ids >= 0].ravel(), minlength=len(scene.objects))
        out.append({obj.id: int(counts[k]) for k, obj in enumerate(scene.objects)})
    return out


def agreement(
    scene: Scene, camera: Camera, size: tuple[int, int] = (640, 480), geom: visibility.SceneGeometry | None = None
) -> float:
    """Share of the scene's objects on which corner visibility and "covers >= min_pixels(size)" agree."""
    if not scene.objects:
        return 1.0
    by_corners = set(visibility.visible_objects(geom or visibility.SceneGeometry(scene), camera))
    threshold = min_pixels(size)
    counts = pixel_counts(scene, camera, size)
    same = sum((obj.id in by_corners) == (counts[obj.id] >= threshold) for obj in scene.objects)
    return same / len(scene.objects)
