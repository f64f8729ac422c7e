"""A generic off-screen 3D scene: a list of :class:`SceneItem` drawn with pyvista, seen from a :class:`CameraPose`.

Every world builds its scene as plain items (a mesh, a colour, an opacity, a style, a tooltip) so the same
list feeds the desktop app's interactive view (:func:`add_items` on any pyvista plotter) and headless exports
(:func:`render_items`, one off-screen plotter reused per image size). No GUI toolkit is imported here.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import weakref
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyvista as pv
import vtk
from PIL import Image

# Imported from its module, not looked up as pv.Color: pyvista loads its plotting module on the first such look-up,
# and a thread looking one up while another loads it fails (a rooms batch draws in threads).
from pyvista.plotting.colors import Color
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy

Vec3 = tuple[float, float, float]
RGBf = tuple[float, float, float]

EDGED_KINDS: frozenset[str] = frozenset({"block", "failed"})
"""Kinds drawn with visible (darker) edges by default, so neighbouring solids stay distinct."""
FRONT_ONLY_KINDS: frozenset[str] = frozenset({"target", "wall"})
"""Translucent kinds drawn with back faces culled by default, so a ghost veils what is behind it once."""

EDGE_DARKENING = 0.55
"""How much darker than its colour an edged item's outline is drawn."""
SURFACE_LIGHTING: dict[str, float] = {"ambient": 0.5, "diffuse": 0.55, "specular": 0.0}
"""How surfaces are lit: mostly ambient plus diffuse, no specular highlight, so colours stay true (the rooms
world colours its faces by these factors itself)."""
_PLOTTERS: dict[tuple[int, int], pv.Plotter] = {}
_RENDER_LOCK = threading.RLock()
_LOOKS: dict[int, dict[str, tuple[tuple[Any, ...], Any]]] = {}
"""Per cached plotter (by id): item key -> (its look, its actor), for the actors :func:`render_items` left."""
_SERIALS = itertools.count()
_PROTOTYPES: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], Any]] = weakref.WeakKeyDictionary()
"""Per plotter: an actor made by ``add_mesh`` for each look (:func:`actor_look`), copied by :func:`add_items`."""


@dataclass(frozen=True)
class SceneItem:
    """One drawable thing. ``key`` is unique in a scene (re-adding a key replaces the actor); ``kind`` groups
    items (``block``, ``target``, ``highlight``, ``failed``, ``frustum``, ``wall``, ``floor``, ``label``);
    ``color`` is 0-1 RGB; ``style`` is ``surface`` or ``wireframe``; ``tooltip`` is what a hover shows.
    ``edges`` (darker outlines) and ``cull_back`` (back faces hidden) default by kind (:data:`EDGED_KINDS`,
    :data:`FRONT_ONLY_KINDS`); a family sets them to draw its own kinds the same way."""

    key: str
    kind: str
    mesh: pv.PolyData
    color: RGBf
    opacity: float = 1.0
    style: str = "surface"
    tooltip: str = ""
    line_width: float = 1.0
    edges: bool | None = None
    cull_back: bool | None = None

    @property
    def edged(self) -> bool:
        """Drawn with darker edges: as set, else by kind (surfaces only)."""
        wanted = self.kind in EDGED_KINDS if self.edges is None else self.edges
        return wanted and self.style == "surface"

    @property
    def culled(self) -> bool:
        """Drawn with back faces culled: as set, else by kind (surfaces only)."""
        wanted = self.kind in FRONT_ONLY_KINDS if self.cull_back is None else self.cull_back
        return wanted and self.style == "surface"


@dataclass(frozen=True)
class CameraPose:
    """A named viewpoint. ``parallel`` selects an orthographic projection whose half-height is
    ``parallel_scale``; ``view_angle`` is the vertical field of view of a perspective camera, in degrees."""

    name: str
    position: Vec3
    focal_point: Vec3
    view_up: Vec3
    parallel: bool = False
    parallel_scale: float = 2.0
    view_angle: float = 30.0


def rgb255(color: RGBf) -> tuple[int, int, int]:
    """A 0-1 scene colour as 0-255 RGB (legends, swatches)."""
    return (round(color[0] * 255), round(color[1] * 255), round(color[2] * 255))


def darker(color: RGBf, amount: float = 0.5) -> RGBf:
    """``color`` blended towards black by ``amount``."""
    return (color[0] * (1 - amount), color[1] * (1 - amount), color[2] * (1 - amount))


def add_items(plotter: Any, items: Iterable[SceneItem], unique_names: bool = False) -> dict[str, Any]:
    """Add every item to ``plotter`` and return the actors by key. Each actor is named by its item's key (with
    ``unique_names`` by its key and a serial number, for a caller that tracks its actors itself and may show
    another key on one); an actor already there under a name is not replaced: the caller takes off what it
    redraws.

    Lighting is mostly ambient plus diffuse with no specular highlight, so colours stay true; blocks and
    failed moves get a darker edge outline. An item's actor is a copy of a prototype made by pyvista's
    ``add_mesh`` once per plotter and look (:func:`_prototype`), its mesh and colours swapped in: the same
    pixels, at a twentieth of the cost (``add_mesh`` spends about 5 ms on an actor, mostly in Python: a
    room's 90 items took half a second to add)."""
    actors: dict[str, Any] = {}
    for item in items:
        name = f"{item.key}#{next(_SERIALS)}" if unique_names else item.key
        if is_text(item):
            actors[item.key] = _add_text(plotter, item, name)
            continue
        actor = vtk.vtkActor()
        prototype = _prototype(plotter, item)
        mapper = vtk.vtkDataSetMapper()
        mapper.ShallowCopy(prototype.GetMapper())
        actor.SetMapper(mapper)
        actor.GetProperty().DeepCopy(prototype.GetProperty())
        actor.SetPickable(bool(item.tooltip))
        actor.name = name  # pyvista's renderer lists its actors by this name
        paint_actor(actor, item)
        plotter.renderer.AddActor(actor)
        actors[item.key] = actor
    return actors


def paint_actor(actor: Any, item: SceneItem) -> None:
    """Give a mesh actor ``item``'s mesh and colours (its other properties stay): a copied prototype, or an
    actor handed on to another item of its look. Colours go through pyvista's :class:`~pyvista.Color`, as
    ``add_mesh`` sets them (8 bits a channel), so the pixels are those of a fresh ``add_mesh``."""
    actor.GetMapper().SetInputData(item.mesh)
    look = actor.GetProperty()
    look.SetColor(Color(item.color).float_rgb)
    if item.edged:
        look.SetEdgeColor(Color(darker(item.color, EDGE_DARKENING)).float_rgb)


def mergeable(item: SceneItem) -> bool:
    """Whether ``item`` can be drawn merged with others of its look (:class:`FlatMerged`): a mesh of faces only."""
    mesh = item.mesh
    return not is_text(item) and mesh.GetNumberOfPolys() == mesh.GetNumberOfCells() > 0


class FlatMerged:
    """The faces of ``items`` (all :func:`mergeable`, of one :func:`actor_look`) as one unlit actor whose faces
    are coloured here, each in its item's colour (8 bits a channel, as :func:`paint_actor` rounds it) lit as the
    items' own actors are lit (:func:`flat_shade` under the renderer's lights, again
    when the camera moves: :meth:`light`): one draw call, and no per-pixel lighting, most of a frame's cost on
    software GL (a draft of the editor's room: 0.38x with lighting off). It cannot be picked."""

    def __init__(self, plotter: Any, items: Sequence[SceneItem], name: str = "merged") -> None:
        meshes = [item.mesh for item in items]
        # one item's (a dragged object's part) is shared, a shallow copy of it taking the colours added here
        mesh = _merged_faces(meshes) if len(meshes) > 1 else pv.PolyData(meshes[0], deep=False)
        points = np.asarray(mesh.points, dtype=float)
        polys = mesh.GetPolys()
        firsts = vtk_to_numpy(polys.GetConnectivityArray())[_ids(polys.GetOffsetsArray())[:-1, None] + [0, 1, 2]]
        self.anchors = points[firsts[:, 0]]
        self.normals = face_normals(points, firsts)
        colours = np.array([Color(item.color).int_rgb for item in items], dtype=np.uint8)
        self.rgb = np.repeat(colours, [item.mesh.n_cells for item in items], axis=0) / 255.0
        self.colours = np.zeros((len(firsts), 3), dtype=np.uint8)
        self.array = numpy_to_vtk(self.colours, deep=False)  # shares self.colours: written in place per camera
        self.array.SetName("lit")
        mesh.GetCellData().AddArray(self.array)
        self.actor = add_items(plotter, [replace(items[0], key=name, mesh=mesh, tooltip="")], unique_names=True)[name]
        mapper = self.actor.GetMapper()
        mapper.SetScalarModeToUseCellFieldData()
        mapper.SelectColorArray("lit")
        mapper.SetColorModeToDirectScalars()
        mapper.ScalarVisibilityOn()
        look = self.actor.GetProperty()
        look.LightingOff()  # VTK then draws a face's colour times the ambient and diffuse factors' sum
        look.SetAmbient(0.0)
        look.SetDiffuse(1.0)
        self._pose: tuple[Any, ...] = ()

    def light(self, renderer: Any, lights: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Colour the faces as ``renderer``'s lights light them from its camera, when the camera or the actor has
        moved; ``lights``: its :func:`camera_lights`, when the caller lights several actors (looked up once)."""
        camera = renderer.GetActiveCamera()
        parallel = camera.GetParallelProjection()
        shift = self.actor.GetPosition()  # moved by a user transform (a dragged object's faces)
        eye = (camera.GetPosition(), camera.GetFocalPoint(), camera.GetViewUp(), parallel)
        pose = eye if parallel else (shift, *eye)  # seen along one direction, a shift changes no colour
        if pose == self._pose:
            return
        self._pose = pose
        if parallel:  # every face seen from the one direction the view looks along
            toward_eye = -np.asarray(camera.GetDirectionOfProjection(), dtype=float)[None, :]
        else:
            toward_eye = np.asarray(camera.GetPosition(), dtype=float) - self.anchors - shift
        towards, intensities = lights if lights is not None else camera_lights(renderer)
        self.colours[:] = flat_shade(self.rgb, self.normals, toward_eye, towards, intensities)
        self.array.Modified()


def face_normals(points: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Unit normals of faces given by three of their corners each (``corners`` (n, 3) indexing ``points``);
    a degenerate face's is zero."""
    anchors = points[corners[:, 0]]
    normals = np.cross(points[corners[:, 1]] - anchors, points[corners[:, 2]] - anchors)
    lengths = np.linalg.norm(normals, axis=1, keepdims=True)
    unit: np.ndarray = np.divide(normals, lengths, out=np.zeros_like(normals), where=lengths > 0)
    return unit


def flat_shade(
    rgb: np.ndarray, normals: np.ndarray, toward_eye: np.ndarray, towards: np.ndarray, intensities: np.ndarray
) -> np.ndarray:
    """Faces' colours (0-255) as VTK's flat lighting under :data:`SURFACE_LIGHTING` gives them: a face's colour
    ``rgb`` (n, 3, 0-1) times the ambient factor, plus times the diffuse factor the sum over the lights (unit
    directions ``towards`` (k, 3), colour times intensity ``intensities`` (k, 3)) of the cosine between the face's
    normal, turned towards the eye (lighting is two-sided; ``toward_eye``: from each face, or one direction for
    all), and the light's direction."""
    facing = np.einsum("ij,ij->i", normals, np.broadcast_to(toward_eye, normals.shape)) >= 0
    turned = np.where(facing[:, None], normals, -normals)
    diffuse = np.maximum(turned @ towards.T, 0.0) @ intensities
    shade = rgb * SURFACE_LIGHTING["ambient"] + diffuse * rgb * SURFACE_LIGHTING["diffuse"]
    return np.asarray(np.rint(np.clip(shade, 0.0, 1.0) * 255), dtype=np.uint8)


def camera_lights(renderer: Any) -> tuple[np.ndarray, np.ndarray]:
    """The directions towards ``renderer``'s lights that are on (unit vectors, world frame, the camera lights
    moved with the current camera) and each one's colour times its intensity."""
    renderer.UpdateLightsGeometryToFollowCamera()
    towards, intensities = [], []
    lights = renderer.GetLights()
    for k in range(lights.GetNumberOfItems()):
        light = lights.GetItemAsObject(k)
        if light.GetSwitch():
            direction = np.subtract(light.GetTransformedPosition(), light.GetTransformedFocalPoint())
            towards.append(direction / np.linalg.norm(direction))
            intensities.append(np.asarray(light.GetDiffuseColor()) * light.GetIntensity())
    return np.asarray(towards, dtype=float).reshape(-1, 3), np.asarray(intensities, dtype=float).reshape(-1, 3)


def _merged_faces(meshes: Sequence[pv.PolyData]) -> pv.PolyData:
    """The faces of ``meshes`` as one mesh, in order (no point data: faces are drawn flat)."""
    starts = np.cumsum([0, *(mesh.n_points for mesh in meshes[:-1])])
    polys = [mesh.GetPolys() for mesh in meshes]
    connectivity = [
        vtk_to_numpy(p.GetConnectivityArray()).astype(np.int64) + s for p, s in zip(polys, starts, strict=True)
    ]
    ends = np.cumsum([0, *(len(c) for c in connectivity)])
    offsets = [_ids(p.GetOffsetsArray())[:-1] + end for p, end in zip(polys, ends[:-1], strict=True)]
    cells = vtk.vtkCellArray()
    cells.SetData(
        numpy_to_vtk(np.concatenate([*offsets, ends[-1:]]), deep=True, array_type=vtk.VTK_ID_TYPE),
        numpy_to_vtk(np.concatenate(connectivity), deep=True, array_type=vtk.VTK_ID_TYPE),
    )
    merged = pv.PolyData()  # built empty: a PolyData made from points alone gets a vertex cell for each
    merged.points = np.concatenate([np.asarray(mesh.points, dtype=float) for mesh in meshes])
    merged.SetPolys(cells)
    return merged


def _ids(array: Any) -> np.ndarray:
    return np.asarray(vtk_to_numpy(array), dtype=np.int64)


def actor_look(item: SceneItem) -> tuple[Any, ...]:
    """What an item's mesh actor is made with besides its mesh and colours: items of one look can share an
    actor's prototype, or take over each other's actor."""
    return (item.style, item.opacity, item.line_width, item.edged, item.culled, type(item.mesh).__name__)


def _prototype(plotter: Any, item: SceneItem) -> Any:
    """The actor ``add_mesh`` makes for ``item``'s look on ``plotter``, made once and kept off screen (copies
    of it are shown, so nothing done to a shown actor reaches it)."""
    kept = _PROTOTYPES.setdefault(plotter, {})
    look = actor_look(item)
    if look not in kept:
        edged = item.edged
        prototype = plotter.add_mesh(
            item.mesh,
            color=item.color,
            opacity=item.opacity,
            style=item.style,
            line_width=item.line_width,
            show_edges=edged,
            edge_color=darker(item.color, EDGE_DARKENING) if edged else None,
            smooth_shading=False,
            culling="back" if item.culled else None,
            reset_camera=False,
            render=False,
            **SURFACE_LIGHTING,
        )
        plotter.remove_actor(prototype, reset_camera=False, render=False)
        kept[look] = prototype
    return kept[look]


def line_segments(segments: Iterable[tuple[Any, Any]]) -> pv.PolyData:
    """Line segments ``(start, end)`` (3D points) as one PolyData: one actor for any number of lines."""
    points = [point for segment in segments for point in segment]
    cells = [value for k in range(len(points) // 2) for value in (2, 2 * k, 2 * k + 1)]
    return pv.PolyData(np.asarray(points, dtype=float).reshape(-1, 3), lines=np.asarray(cells, dtype=np.int64))


def text_label(key: str, position: Vec3, text: str, color: RGBf) -> SceneItem:
    """A screen-facing text (kind ``label``) anchored at ``position``; it is never hidden by other items."""
    return SceneItem(key, "label", pv.PolyData(np.asarray([position], dtype=float)), color, tooltip=text)


def is_text(item: SceneItem) -> bool:
    """A label made by :func:`text_label`: a single point carrying its text in ``tooltip``."""
    return item.kind == "label" and item.mesh.n_points == 1 and bool(item.tooltip)


def _add_text(plotter: Any, item: SceneItem, name: str) -> Any:
    return plotter.add_point_labels(
        item.mesh.points,
        [item.tooltip],
        font_size=18,
        bold=True,
        text_color=item.color,
        shape=None,
        show_points=False,
        always_visible=True,
        name=name,
        render=False,
    )


def set_camera(plotter: Any, pose: CameraPose) -> None:
    """Point ``plotter``'s camera as ``pose`` says and refit the clipping range."""
    # The renderer's camera, marked set: pyvista's ``plotter.camera`` resets an unset camera first, which
    # renders a frame (60-250 ms in a new window) only for every value to be replaced below.
    camera = plotter.renderer.camera
    camera.is_set = True
    camera.position = pose.position
    camera.focal_point = pose.focal_point
    camera.up = pose.view_up
    camera.parallel_projection = pose.parallel
    if pose.parallel:
        camera.parallel_scale = pose.parallel_scale
    else:
        camera.view_angle = pose.view_angle
    plotter.renderer.ResetCameraClippingRange()


def _plotter(size: tuple[int, int]) -> pv.Plotter:
    """The cached off-screen plotter for ``size`` (creating the GL context costs about a second)."""
    key = (int(size[0]), int(size[1]))
    plotter = _PLOTTERS.get(key)
    if plotter is None:
        plotter = pv.Plotter(off_screen=True, window_size=list(key), lighting="light kit")
        _PLOTTERS[key] = plotter
    return plotter


def render_items(
    items: Iterable[SceneItem], camera: CameraPose, size: tuple[int, int] = (800, 600), background: str = "white"
) -> Image.Image:
    """Render ``items`` off screen from ``camera`` into an RGB image of ``size`` (width, height).

    One plotter per size is kept and cleared between calls, so only the first image pays for the GL set-up.
    The same items and camera give the same pixels."""
    with offscreen_plotter(size) as plotter:
        return _render_on(plotter, items, camera, background)


@contextmanager
def offscreen_plotter(size: tuple[int, int]) -> Iterator[pv.Plotter]:
    """The cached off-screen plotter for ``size``, held exclusively: episodes running concurrently share
    these plotters and take turns."""
    with _RENDER_LOCK:
        yield _plotter(size)


def _render_on(plotter: pv.Plotter, items: Iterable[SceneItem], camera: CameraPose, background: str) -> Image.Image:
    plotter.renderer.set_background(background)
    _keep_and_add(plotter, list(items))
    set_camera(plotter, camera)
    plotter.render()
    pixels = np.asarray(plotter.screenshot(return_img=True))
    return Image.fromarray(pixels[:, :, :3].astype(np.uint8), "RGB")


def _keep_and_add(plotter: pv.Plotter, items: list[SceneItem]) -> None:
    """Put exactly ``items`` on ``plotter``, in their order: an actor already there for an item of the same key
    and look (every property and the mesh's bytes) stays, the others are removed and the new ones added.

    Consecutive renders (the turns of an export, an agent's view after an edit) share most items, and adding an
    actor through pyvista costs several times rendering it. The renderer's props are put back in the items'
    order, so translucent items blend as they would when added afresh: the pixels are the same."""
    kept = _LOOKS.setdefault(id(plotter), {})
    present = plotter.renderer.actors
    for name in [name for name, (_look_, actor) in kept.items() if present.get(name) is not actor]:
        del kept[name]  # taken off by another user of the plotter (an id render clears it): made again
    looks = {item.key: _look(item) for item in items}
    for name, actor in present.items():
        if name not in kept or kept[name][0] != looks.get(name):
            plotter.remove_actor(actor, render=False)
            kept.pop(name, None)
    fresh = [item for item in items if item.key not in kept]
    for key, actor in add_items(plotter, fresh).items():
        kept[key] = (looks[key], actor)
    renderer = plotter.renderer
    renderer.RemoveAllViewProps()
    for item in items:
        renderer.AddViewProp(kept[item.key][1])


def _look(item: SceneItem) -> tuple[Any, ...]:
    """Everything that decides how ``item`` is drawn, its mesh as a digest of its arrays."""
    mesh = item.mesh
    digest = hashlib.blake2b(digest_size=16)
    cells = [(name, getattr(mesh, name, ())) for name in ("verts", "lines", "faces", "strips")]
    for name, array in [("points", mesh.points), *cells, *mesh.point_data.items(), *mesh.cell_data.items()]:
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    style = (item.color, item.opacity, item.style, item.tooltip, item.line_width, item.edged, item.culled)
    return (item.kind, *style, is_text(item), digest.hexdigest())


def clear_kept_actors() -> None:
    """Take every actor off the cached off-screen plotters: the next render adds all its items afresh (what a
    renderer without :func:`_keep_and_add` would do; a benchmark's baseline)."""
    with _RENDER_LOCK:
        for plotter in _PLOTTERS.values():
            plotter.clear_actors()


def close_plotters() -> None:
    """Close the cached off-screen plotters (tests and long-running exporters may call this at the end)."""
    while _PLOTTERS:
        _, plotter = _PLOTTERS.popitem()
        _LOOKS.pop(id(plotter), None)
        plotter.close()
