"""The one interactive 3D canvas that the world view and the editor draw scene items on, rendered off screen and
painted by a plain widget (:mod:`simlab.gui.offscreen_view`).

:meth:`SceneCanvas.show` draws a list of :class:`~simlab.render.scene.SceneItem`: only items whose look
changed since the last call are removed and added (a step usually moves one block, and re-adding every actor
costs more than rendering the frame); an item that only moved (the same mesh shifted, as an object dragged in
the editor) keeps its actor, moved by the actor's own position (a user transform), and one that looks as before
but changed its shape (a selected object's rays) keeps it too, given the new mesh. While a gesture is in
progress a canvas may draw drafts (:meth:`SceneCanvas.set_draft`: fewer pixels, no multisampling, the frame
stretched to the widget, the items that have not changed since it began merged into one actor a look) and
full-quality frames once it ends, as 3D editors refine progressively. Hovering an
item with a tooltip shows it after the mouse rests, so picking never runs on every mouse move; a press and
release without a drag emits :attr:`SceneCanvas.clicked` with the item's key. VTK's own one-letter keys never
reach it. Points under the mouse come in VTK display pixels (origin bottom left); :meth:`display_point`
converts a Qt position.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import vtk
from PySide6.QtCore import QObject, QPoint, QTimer, Signal
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QToolTip, QWidget
from vtkmodules.util.numpy_support import vtk_to_numpy

from simlab.gui.offscreen_view import OffscreenPlotter, PaintedView, waits_for_render
from simlab.render.scene import (
    CameraPose,
    FlatMerged,
    SceneItem,
    actor_look,
    add_items,
    camera_lights,
    is_text,
    mergeable,
    paint_actor,
    set_camera,
)

HOVER_DELAY_MS = 250
SPARE_ACTORS = 64  # hidden actors kept per look for items to come (a step back brings a turn's blocks back)
MOVE_TOLERANCE = 1e-6  # metres: a mesh whose every point moved by one offset, to this, is the same mesh moved
CLICK_SLOP_PX = 4  # a press and release closer than this is a click, farther a camera drag
DRAFT_TEXT_SHRINK = 2  # a draft draws its texts at most this much smaller: smaller ones stretched blur past reading

Point = tuple[float, float, float]


class SceneCanvas(QObject):
    """A pyvista view of scene items with hover tooltips, click signals and picking."""

    clicked = Signal(str, int, int)  # the key under the mouse ("" over empty space), VTK display x and y

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.plotter = OffscreenPlotter(parent)
        self.plotter.renderer.set_background("white")
        self.items: list[SceneItem] = []
        self._shown: dict[str, _Shown] = {}  # key -> what is on screen for it
        self._spare: dict[tuple[Any, ...], list[Any]] = {}  # look -> hidden actors kept for items to come
        self.draft_scale: float = 1
        """1: full quality; n: frames are rendered at 1/n of the widget's resolution, without multisampling."""
        self._samples: int = self._window.GetMultiSamples()
        self._changed: set[str] = set()  # keys shown anew since the draft began: drawn alone, not merged
        self._merged: dict[tuple[Any, ...], _Merged] = {}  # look -> its unchanged items drawn as one actor
        self._tooltips: dict[str, str] = {}  # actor address -> tooltip
        self._keys: dict[str, str] = {}  # actor address -> item key, for clicks
        self._press: tuple[int, int] | None = None
        self._hover = QTimer(self, singleShot=True, interval=HOVER_DELAY_MS)
        self._hover.timeout.connect(self._show_tooltip)
        self.plotter.events.add_observer("MouseMoveEvent", lambda *_args: self._hover.start())
        self.plotter.events.add_observer("LeftButtonPressEvent", self._on_press)
        self.plotter.events.add_observer("LeftButtonReleaseEvent", self._on_release)
        self._lighting = self.plotter.renderer.AddObserver("StartEvent", self._light_merged)

    @property
    def widget(self) -> PaintedView:
        """The Qt widget to put in a layout."""
        return self.plotter.interactor

    @waits_for_render
    def show(self, items: list[SceneItem]) -> None:
        """Draw ``items``, replacing what is on screen; unchanged items stay as they are. An item that looks as
        before keeps its actor (moved by a user transform, or given its new mesh: an editor's drag), and an actor
        whose item went is handed on to a new item of the same look, its mesh and colour swapped in (a step), or
        kept hidden for one to come (up to ``SPARE_ACTORS`` a look); making an actor (a prototype copied) costs
        about 0.25 ms, swapping a mesh nothing."""
        self.items = items
        wanted = {item.key: item for item in items}
        stale = [key for key, shown in self._shown.items() if not shown.shows(wanted.get(key))]
        kept = [key for key in stale if self._shown[key].reuse(wanted.get(key))]
        spare = self._take_off([key for key in stale if key not in kept])
        fresh = [item for key, item in wanted.items() if key not in self._shown]
        if not stale and not fresh:
            return  # nothing changed: no repaint (an agent's view is not redrawn for a selection in the list)
        made = [item for item in fresh if not self._hand_on(item, spare)]
        self._keep_spare(spare)
        for key, actor in add_items(self.plotter, made, unique_names=True).items():
            self._shown[key] = _Shown(wanted[key], actor)
        if fresh:  # a handed-on actor may carry the line width of another draft scale (or none)
            self._fit_lines(self._shown[item.key] for item in fresh)
        flattened = False
        if self.draft_scale != 1:
            self._merge({*stale, *(item.key for item in fresh)})
            flattened = self._flatten()
        if stale != kept or fresh or flattened:  # a reused actor keeps its address, key and tooltip
            pickable = {k: (shown.picked, wanted[k]) for k, shown in self._shown.items() if wanted[k].tooltip}
            self._tooltips = {_address(a): item.tooltip for a, item in pickable.values()}
            self._keys = {_address(a): k for k, (a, _item) in pickable.items()}
        self.widget.request()  # rendered once, in the paint

    def _take_off(self, keys: list[str]) -> dict[tuple[Any, ...], list[Any]]:
        """Forget the items of ``keys``; their mesh actors by look, to hand on (the rest are removed)."""
        spare: dict[tuple[Any, ...], list[Any]] = {}
        for key in keys:
            shown = self._shown.pop(key)
            self._unflatten(shown)
            if shown.actor.IsA("vtkActor"):  # a text's is a 2D actor with a label mapper: never handed on
                spare.setdefault(_actor_look(shown.item), []).append(shown.actor)
            else:
                self.plotter.remove_actor(shown.actor, render=False)
        return spare

    def _keep_spare(self, spare: dict[tuple[Any, ...], list[Any]]) -> None:
        """Hide the actors no item took, kept by look for items to come (a hidden actor is neither drawn nor
        picked nor counted in the scene's bounds); past ``SPARE_ACTORS`` a look they are removed."""
        for look, actors in spare.items():
            kept = self._spare.setdefault(look, [])
            for actor in actors:
                if len(kept) < SPARE_ACTORS:
                    actor.VisibilityOff()
                    kept.append(actor)
                else:
                    self.plotter.remove_actor(actor, render=False)

    def _hand_on(self, item: SceneItem, spare: dict[tuple[Any, ...], list[Any]]) -> bool:
        """Show ``item`` on a spare actor of its look, its mesh and colour swapped in, when there is one: one
        whose item went in this change, else one kept hidden (a text keeps its own: its words are not a mesh)."""
        look = _actor_look(item)
        actors = spare.get(look) or self._spare.get(look)
        if not actors or is_text(item):
            return False
        actor = actors.pop()
        actor.VisibilityOn()
        paint_actor(actor, item)
        actor.SetPosition(0.0, 0.0, 0.0)  # it may have been moved by a drag: the new mesh is where it is
        self._shown[item.key] = _Shown(item, actor)
        return True

    def _merge(self, changed: set[str]) -> None:
        """While drafting, draw the items unchanged since the draft began merged into one actor a look (a look of
        one item too: a room's floor), their own actors hidden (one draw call for a room's hundred objects: a tenth
        of a draft's render measured), unlit, their faces coloured as the lights light them
        (:class:`~simlab.render.scene.FlatMerged`: per-pixel lighting was most of a draft's render); the items
        ``changed`` now or before in the draft (a dragged object's) stay alone (:meth:`_flatten`)."""
        if changed <= self._changed:
            return  # only items already drawn alone changed (a drag's later steps): the merged ones stand
        self._changed |= changed
        wanted: dict[tuple[Any, ...], list[str]] = {}
        for key, shown in self._shown.items():
            if key not in self._changed and shown.actor.IsA("vtkActor") and mergeable(shown.item):
                wanted.setdefault(_actor_look(shown.item), []).append(key)
        for look in [*self._merged, *(look for look in wanted if look not in self._merged)]:  # no set order
            keys = tuple(wanted.get(look, ()))
            if look in self._merged and self._merged[look].keys == keys:
                continue
            self._unmerge(look)
            if keys:
                self._merged[look] = _Merged(keys, FlatMerged(self.plotter, [self._shown[key].item for key in keys]))
                for key in keys:
                    self._shown[key].actor.VisibilityOff()

    def _flatten(self) -> bool:
        """While drafting, draw each item drawn alone (changed since the draft began: a dragged object's) that
        :func:`~simlab.render.scene.mergeable` allows by an unlit actor of its own, its faces coloured as the
        lights light them and moved as its lit actor is, which stays hidden (the lit actors of a dragged chair
        cost a third of a draft's render). Whether any was made (their addresses are then picked)."""
        made = False
        for key, shown in self._shown.items():
            if key not in self._changed or not shown.actor.IsA("vtkActor") or not mergeable(shown.drawn):
                continue
            if shown.flat is None or shown.flat_of is not shown.drawn:
                self._unflatten(shown)
                shown.flat, shown.flat_of = FlatMerged(self.plotter, [shown.drawn], name=key), shown.drawn
                shown.flat.actor.SetPickable(shown.actor.GetPickable())
                made = True
            shown.flat.actor.SetPosition(shown.actor.GetPosition())
            shown.flat.actor.GetProperty().SetLineWidth(shown.actor.GetProperty().GetLineWidth())
            shown.actor.VisibilityOff()
        return made

    def _unflatten(self, shown: _Shown) -> None:
        """Draw ``shown`` by its own lit actor again, its unlit one (:meth:`_flatten`) removed."""
        if shown.flat is not None:
            self.plotter.remove_actor(shown.flat.actor, render=False)
            shown.flat = shown.flat_of = None
            shown.actor.VisibilityOn()

    def _unmerge(self, look: tuple[Any, ...]) -> None:
        """Remove the merged actor of ``look``; its items still shown are drawn by their own actors again."""
        merged = self._merged.pop(look, None)
        if merged is None:
            return
        self.plotter.remove_actor(merged.faces.actor, render=False)
        for key in merged.keys:
            if key in self._shown:
                self._shown[key].actor.VisibilityOn()

    def _light_merged(self, *_args: Any) -> None:
        """Before each render: the merged actors' faces coloured as the lights light them from the camera now
        (they are drawn unlit; a drag moves no camera, so this is nothing most frames)."""
        faces = [merged.faces for merged in self._merged.values()]
        faces += [shown.flat for shown in self._shown.values() if shown.flat is not None]
        if faces:
            renderer = self.plotter.renderer
            lights = camera_lights(renderer)  # once for all (a dragged chair's parts are a dozen actors)
            for each in faces:
                each.light(renderer, lights)

    @waits_for_render
    def clear(self) -> None:
        """Remove every item (the next :meth:`show` adds all of them afresh)."""
        self.plotter.clear_actors()
        self._shown.clear()
        self._spare.clear()
        self._merged.clear()
        self._changed.clear()
        self.items = []
        self.widget.request()

    @waits_for_render
    def in_view(self, items: list[SceneItem]) -> list[SceneItem]:
        """The items whose bounding box reaches into the camera's view (the rest cannot change the picture,
        so leaving them out spares a repaint when only they moved)."""
        width, height = self.widget.width(), self.widget.height()
        planes = [0.0] * 24
        self.plotter.renderer.GetActiveCamera().GetFrustumPlanes(width / max(height, 1), planes)
        normals = np.array(planes, dtype=float).reshape(6, 4)
        outside = _outside(normals, [item.mesh.GetBounds() for item in items])  # VTK's own: pyvista's wraps it
        return [item for item, out in zip(items, outside, strict=True) if not out]

    def count(self, kind: str) -> int:
        """How many drawn items are of ``kind``."""
        return sum(1 for item in self.items if item.kind == kind)

    @waits_for_render
    def set_camera(self, pose: CameraPose) -> None:
        set_camera(self.plotter, pose)
        self.widget.request()

    @property
    def _window(self) -> Any:
        """The VTK render window (there is one until :meth:`close`)."""
        return self.plotter.ren_win

    @waits_for_render
    def set_draft(self, scale: float) -> None:
        """Render at 1/``scale`` of the widget's resolution without multisampling or order-independent
        translucency (translucent items blended in drawing order), the frame stretched to the widget (a draft
        while a gesture is in progress), lines and texts drawn smaller by as much so they keep their size on the
        screen (texts by :data:`DRAFT_TEXT_SHRINK` at most), and from the next :meth:`show` on the items it leaves
        as they were merged into one actor a look; 1 goes back to full quality, each item drawn by its own actor.
        Repaints when it changes."""
        if scale == self.draft_scale:
            return
        self.draft_scale = scale
        if scale == 1:
            for look in list(self._merged):
                self._unmerge(look)
            for shown in self._shown.values():
                self._unflatten(shown)
            self._changed.clear()
        window = self._window
        window.SetMultiSamples(self._samples if scale == 1 else 0)
        self.plotter.renderer.SetUseOIT(scale == 1)  # its extra full-frame passes cost a draft 10-15%
        self._fit_lines(self._shown.values())
        self.widget.scale, self.widget.text_scale = scale, min(scale, DRAFT_TEXT_SHRINK)
        self.widget.fit()  # the window's pixels and DPI (VTK sizes a text's points by it); repaints

    def _fit_lines(self, shown: Iterable[_Shown]) -> None:
        """Lines as wide on the screen in a draft as at full quality (the draft's pixels are stretched)."""
        for each in shown:
            if each.actor.IsA("vtkActor"):
                each.actor.GetProperty().SetLineWidth(each.item.line_width / self.draft_scale)

    # ---- what is under the mouse ---------------------------------------------------------------------
    def display_point(self, position: QPoint) -> tuple[int, int]:
        """A Qt widget position as VTK display pixels (origin bottom left, device pixels; a draft's fewer)."""
        return self.widget.display_point(position)

    @waits_for_render
    def key_at(self, x: int, y: int) -> str:
        """The key of the pickable item under display point (x, y), or ''."""
        actor = self._pick(x, y)
        return self._keys.get(_address(actor), "") if actor is not None else ""

    @waits_for_render
    def tooltip_at(self, x: int, y: int) -> str:
        """The tooltip of the item under display point (x, y), or ''."""
        actor = self._pick(x, y)
        return self._tooltips.get(_address(actor), "") if actor is not None else ""

    @waits_for_render
    def surface_point(self, x: int, y: int) -> tuple[str, Point] | None:
        """The pickable item under (x, y) and the world point hit on its surface, or None."""
        picker = vtk.vtkCellPicker()
        picker.SetTolerance(0.0005)
        if not picker.Pick(x, y, 0, self.plotter.renderer) or picker.GetActor() is None:
            return None
        key = self._keys.get(_address(picker.GetActor()), "")
        px, py, pz = picker.GetPickPosition()
        return (key, (px, py, pz)) if key else None

    @waits_for_render
    def plane_point(self, x: int, y: int, height: float = 0.0) -> Point | None:
        """Where the ray under (x, y) meets the horizontal plane at ``height`` (the floor), or None when it
        runs parallel or away from it."""
        renderer = self.plotter.renderer
        ends = []
        for depth in (0.0, 1.0):
            renderer.SetDisplayPoint(x, y, depth)
            renderer.DisplayToWorld()
            wx, wy, wz, w = renderer.GetWorldPoint()
            ends.append(np.array([wx, wy, wz]) / (w or 1.0))
        near, far = ends
        direction = far - near
        if abs(direction[2]) < 1e-9:
            return None
        t = (height - near[2]) / direction[2]
        if t < 0:
            return None
        hit = near + t * direction
        return (float(hit[0]), float(hit[1]), float(hit[2]))

    def _pick(self, x: int, y: int) -> Any:
        picker = vtk.vtkPropPicker()
        picker.Pick(x, y, 0, self.plotter.renderer)
        return picker.GetActor()

    # ---- clicks and hovering -------------------------------------------------------------------------
    def _on_press(self, *_args: Any) -> None:
        self._press = self.plotter.events.get_event_position()

    def _on_release(self, *_args: Any) -> None:
        x, y = self.plotter.events.get_event_position()
        press, self._press = self._press, None
        if press is not None and abs(x - press[0]) + abs(y - press[1]) <= CLICK_SLOP_PX:
            self.clicked.emit(self.key_at(x, y), x, y)

    def _show_tooltip(self) -> None:
        x, y = self.plotter.events.get_event_position()
        text = self.tooltip_at(x, y) if not self._merged else ""  # a merged actor hides its items from the picker
        if text:
            QToolTip.showText(QCursor.pos(), text, self.widget)
        else:
            QToolTip.hideText()

    @waits_for_render
    def close(self) -> None:
        """Release the render window and its GL context (the widget paints white from then on)."""
        self._hover.stop()
        self.plotter.renderer.RemoveObserver(self._lighting)  # VTK would hold this canvas past its window
        self.plotter.close()
        self.widget.update()


def _outside(planes: np.ndarray, bounds: list[tuple[float, ...]]) -> np.ndarray:
    """Per box (x0, x1, y0, y1, z0, z1), whether it lies wholly on the outer side of one of the frustum's
    planes (a*x + b*y + c*z + d < 0 is outside, as VTK gives them)."""
    boxes = np.asarray(bounds, dtype=float).reshape(-1, 3, 2)
    pick = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)])  # the eight corners' ends
    corners = boxes[:, np.arange(3), pick]  # (boxes, 8, 3)
    corners = np.concatenate([corners, np.ones((*corners.shape[:2], 1))], axis=2)
    return np.asarray(np.any(np.all(corners @ planes.T < 0, axis=1), axis=1), dtype=bool)


def _look(item: SceneItem) -> tuple[Any, ...]:
    """What makes an item look the way it does, but where it is: an item of the same key and look keeps its
    actor, moved or given its new mesh."""
    return (_actor_look(item), item.color, item.tooltip)


def _actor_look(item: SceneItem) -> tuple[Any, ...]:
    """An actor's properties as ``add_items`` sets them but its mesh and colours, and whether it is pickable
    (whether the item has a tooltip): an actor of one look shows any item of that look once they are swapped in."""
    return (*actor_look(item), bool(item.tooltip))


class _Merged:
    """The faces drawing the items of ``keys`` merged while drafting."""

    def __init__(self, keys: tuple[str, ...], faces: FlatMerged) -> None:
        self.keys, self.faces = keys, faces


class _Shown:
    """An item's actor on screen: the item it was made from (its mesh is the actor's), the item it shows now and
    what that one looks like where it is (its look and bounds)."""

    def __init__(self, item: SceneItem, actor: Any) -> None:
        self.drawn, self.actor = item, actor
        self.flat: FlatMerged | None = None  # while drafting: the unlit actor drawing it instead (of flat_of)
        self.flat_of: SceneItem | None = None
        # a text label is a 2D actor, whose position is on the screen: it is made again when it moves
        self.movable = isinstance(actor, vtk.vtkProp3D)
        self._points: np.ndarray | None = None  # the drawn mesh's points and cells, read when it first moves
        self._cells: tuple[np.ndarray, ...] = ()
        self._now(item)

    @property
    def picked(self) -> Any:
        """The actor a picker finds for this item: the one drawing it."""
        return self.actor if self.flat is None else self.flat.actor

    def _now(self, item: SceneItem) -> None:
        self.item, self.signature = item, (_look(item), _bounds(item.mesh))

    def shows(self, item: SceneItem | None) -> bool:
        """Whether the screen already shows ``item`` (the same look and the same bounds)."""
        return item is not None and (item is self.item or (_look(item), _bounds(item.mesh)) == self.signature)

    def reuse(self, item: SceneItem | None) -> bool:
        """Show ``item`` with this actor when it looks the same but where or what it is: moved by a user
        transform when its mesh is the drawn one moved by one offset, else given the mesh as its data (the
        selected object's rays); False when its look changed or the actor is a 2D one."""
        if item is None or not self.movable or _look(item) != self.signature[0]:
            return False
        if self._points is None:
            self._points, self._cells = _shape(self.drawn.mesh)
        offset = _offset(self._points, () if _shares_cells(self.drawn.mesh, item.mesh) else self._cells, item.mesh)
        if offset is None:
            self.actor.GetMapper().SetInputData(item.mesh)
            self.actor.SetPosition(0.0, 0.0, 0.0)
            self.drawn, self._points = item, None
        else:
            self.actor.SetPosition(*offset)
        self._now(item)
        return True


# A drag step compares the meshes of a moved object's items with the drawn ones through VTK's own methods,
# called on the class: every attribute of a pyvista mesh goes through a Python __getattribute__ (35,000 calls a
# drag step of a 30-object room, measured), and its ``points`` and ``bounds`` wrap what VTK returns.
_CELLS = (vtk.vtkPolyData.GetPolys, vtk.vtkPolyData.GetLines, vtk.vtkPolyData.GetVerts, vtk.vtkPolyData.GetStrips)


def _bounds(mesh: Any) -> tuple[float, ...]:
    """A mesh's bounds (x0, x1, y0, y1, z0, z1)."""
    return tuple(vtk.vtkDataSet.GetBounds(mesh))


def _points(mesh: Any) -> np.ndarray:
    """A mesh's points, (n, 3), a view of VTK's array."""
    points = vtk.vtkPointSet.GetPoints(mesh)
    return np.empty((0, 3)) if points is None else vtk_to_numpy(points.GetData())


def _shape(mesh: Any) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """A mesh's points and its cells (faces, lines, vertices, strips)."""
    cells = tuple(np.asarray(getattr(mesh, kind)) for kind in ("faces", "lines", "verts", "strips"))
    return _points(mesh), cells


def _shares_cells(drawn: Any, mesh: Any) -> bool:
    """Whether ``mesh`` holds the very cell arrays of the ``drawn`` one (a shallow copy with points of its own,
    as an editor moves a dragged object's meshes): its cells are then the same without comparing them."""
    # VTK hands out one Python object per VTK object while it is referenced: the same array, the same object
    return all(cells(drawn) is cells(mesh) for cells in _CELLS)


def _offset(points: np.ndarray, cells: tuple[np.ndarray, ...], mesh: Any) -> tuple[float, float, float] | None:
    """The one offset that takes every point of a drawn mesh (its ``points`` and ``cells``; no cells: known to
    be the same) to ``mesh``'s, with the same cells; else None."""
    after = _points(mesh)
    if after.shape != points.shape or len(points) == 0:
        return None
    shift = after - points
    offset = shift[0]
    if np.abs(shift - offset).max() > MOVE_TOLERANCE:
        return None
    if cells and not all(np.array_equal(a, b) for a, b in zip(cells, _shape(mesh)[1], strict=True)):
        return None
    return (float(offset[0]), float(offset[1]), float(offset[2]))


def _address(actor: Any) -> str:
    # Pickers hand back a fresh Python wrapper of the same VTK actor, so match on the C++ object.
    return str(actor.GetAddressAsString("vtkObject"))
