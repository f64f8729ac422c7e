"""The one interactive 3D canvas (pyvistaqt) that the world view and the editor draw scene items on.

:meth:`SceneCanvas.show` draws a list of :class:`~simlab.render.scene.SceneItem`: only items whose look
changed since the last call are removed and added (a step usually moves one block, and re-adding every actor
costs more than rendering the frame). Hovering an item with a tooltip shows it after the mouse rests, so
picking never runs on every mouse move; a press and release without a drag emits :attr:`SceneCanvas.clicked`
with the item's key. VTK's own one-letter keys are swallowed. Points under the mouse come in VTK display
pixels (origin bottom left); :meth:`display_point` converts a Qt position.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import vtk
from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QToolTip, QWidget
from pyvista import Color
from pyvistaqt import QtInteractor

from simlab.render.scene import EDGE_DARKENING, CameraPose, SceneItem, add_items, darker, is_text, set_camera

HOVER_DELAY_MS = 250
CLICK_SLOP_PX = 4  # a press and release closer than this is a click, farther a camera drag

Point = tuple[float, float, float]


class SceneCanvas(QObject):
    """A pyvista view of scene items with hover tooltips, click signals and picking."""

    clicked = Signal(str, int, int)  # the key under the mouse ("" over empty space), VTK display x and y

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.plotter = QtInteractor(parent, auto_update=False)
        self.plotter.set_background("white")
        self.items: list[SceneItem] = []
        self._shown: dict[str, tuple[tuple[Any, ...], Any]] = {}  # key -> (signature, actor) on screen
        self._tooltips: dict[str, str] = {}  # actor address -> tooltip
        self._keys: dict[str, str] = {}  # actor address -> item key, for clicks
        self._press: tuple[int, int] | None = None
        self._hover = QTimer(self, singleShot=True, interval=HOVER_DELAY_MS, timeout=self._show_tooltip)
        self.plotter.iren.add_observer("MouseMoveEvent", lambda *_args: self._hover.start())
        self.plotter.iren.add_observer("LeftButtonPressEvent", self._on_press)
        self.plotter.iren.add_observer("LeftButtonReleaseEvent", self._on_release)
        self._vtk_keys = _SwallowVtkKeys(self)
        self.plotter.interactor.installEventFilter(self._vtk_keys)

    @property
    def widget(self) -> QWidget:
        """The Qt widget to put in a layout."""
        return self.plotter.interactor

    def show(self, items: list[SceneItem]) -> None:
        """Draw ``items``, replacing what is on screen; unchanged items stay as they are, and an actor whose
        item went is given to a new item of the same look (its mesh and colour swapped in) rather than removed
        and made again (making one costs about 10 ms, swapping a mesh nothing)."""
        self.items = items
        wanted = {item.key: (_signature(item), item) for item in items}
        stale = [k for k, (sig, _a) in self._shown.items() if wanted.get(k, (None,))[0] != sig]
        spare = self._take_off(stale)
        fresh = [item for key, (_sig, item) in wanted.items() if key not in self._shown]
        if not stale and not fresh:
            return  # nothing changed: no repaint (an agent's view is not redrawn for a selection in the list)
        made = [item for item in fresh if not self._reuse(item, wanted[item.key][0], spare)]
        for actor in (actor for actors in spare.values() for actor in actors):
            self.plotter.remove_actor(actor, render=False)
        for key, actor in add_items(self.plotter, made, unique_names=True).items():
            self._shown[key] = (wanted[key][0], actor)
        pickable = {k: (a, wanted[k][1]) for k, (_s, a) in self._shown.items() if wanted[k][1].tooltip}
        self._tooltips = {_address(a): item.tooltip for a, item in pickable.values()}
        self._keys = {_address(a): k for k, (a, _item) in pickable.items()}
        # Ask Qt for a repaint: paintGL renders the scene once. pyvistaqt's render() would render now and
        # again in the paint it triggers (measured: two 33 ms renders per step under Xvfb).
        QWidget.update(self.plotter.interactor)

    def _take_off(self, keys: list[str]) -> dict[tuple[Any, ...], list[Any]]:
        """Forget the items of ``keys``; their mesh actors by look, to hand on (the rest are removed)."""
        spare: dict[tuple[Any, ...], list[Any]] = {}
        for key in keys:
            signature, actor = self._shown.pop(key)
            if actor.IsA("vtkActor"):  # a text's is a 2D actor with a label mapper: never handed on
                spare.setdefault(signature[0], []).append(actor)
            else:
                self.plotter.remove_actor(actor, render=False)
        return spare

    def _reuse(self, item: SceneItem, signature: tuple[Any, ...], spare: dict[tuple[Any, ...], list[Any]]) -> bool:
        """Show ``item`` on a spare actor of its look, its mesh and colour swapped in, when there is one (a text
        keeps its own: its words are not a mesh)."""
        actors = spare.get(signature[0])
        if not actors or is_text(item):
            return False
        actor = actors.pop()
        actor.GetMapper().SetInputData(item.mesh)
        look = actor.GetProperty()  # colours through pyvista's, as add_mesh sets them (8 bits a channel)
        look.SetColor(Color(item.color).float_rgb)
        if item.edged:
            look.SetEdgeColor(Color(darker(item.color, EDGE_DARKENING)).float_rgb)
        self._shown[item.key] = (signature, actor)
        return True

    def clear(self) -> None:
        """Remove every item (the next :meth:`show` adds all of them afresh)."""
        self.plotter.clear_actors()
        self._shown.clear()
        self.items = []

    def in_view(self, items: list[SceneItem]) -> list[SceneItem]:
        """The items whose bounding box reaches into the camera's view (the rest cannot change the picture,
        so leaving them out spares a repaint when only they moved)."""
        width, height = self.widget.width(), self.widget.height()
        planes = [0.0] * 24
        self.plotter.renderer.GetActiveCamera().GetFrustumPlanes(width / max(height, 1), planes)
        normals = np.array(planes, dtype=float).reshape(6, 4)
        return [item for item in items if not _outside(normals, item.mesh.bounds)]

    def count(self, kind: str) -> int:
        """How many drawn items are of ``kind``."""
        return sum(1 for item in self.items if item.kind == kind)

    def set_camera(self, pose: CameraPose) -> None:
        set_camera(self.plotter, pose)
        QWidget.update(self.plotter.interactor)

    # ---- what is under the mouse ---------------------------------------------------------------------
    def display_point(self, position: QPoint) -> tuple[int, int]:
        """A Qt widget position as VTK display pixels (origin bottom left, device pixels)."""
        ratio = self.widget.devicePixelRatioF()
        return round(position.x() * ratio), round((self.widget.height() - 1 - position.y()) * ratio)

    def key_at(self, x: int, y: int) -> str:
        """The key of the pickable item under display point (x, y), or ''."""
        actor = self._pick(x, y)
        return self._keys.get(_address(actor), "") if actor is not None else ""

    def tooltip_at(self, x: int, y: int) -> str:
        """The tooltip of the item under display point (x, y), or ''."""
        actor = self._pick(x, y)
        return self._tooltips.get(_address(actor), "") if actor is not None else ""

    def surface_point(self, x: int, y: int) -> tuple[str, Point] | None:
        """The pickable item under (x, y) and the world point hit on its surface, or None."""
        picker = vtk.vtkCellPicker()
        picker.SetTolerance(0.0005)
        if not picker.Pick(x, y, 0, self.plotter.renderer) or picker.GetActor() is None:
            return None
        key = self._keys.get(_address(picker.GetActor()), "")
        px, py, pz = picker.GetPickPosition()
        return (key, (px, py, pz)) if key else None

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
        self._press = self.plotter.iren.get_event_position()

    def _on_release(self, *_args: Any) -> None:
        x, y = self.plotter.iren.get_event_position()
        press, self._press = self._press, None
        if press is not None and abs(x - press[0]) + abs(y - press[1]) <= CLICK_SLOP_PX:
            self.clicked.emit(self.key_at(x, y), x, y)

    def _show_tooltip(self) -> None:
        x, y = self.plotter.iren.get_event_position()
        text = self.tooltip_at(x, y)
        if text:
            QToolTip.showText(QCursor.pos(), text, self.plotter.interactor)
        else:
            QToolTip.hideText()

    def close(self) -> None:
        """Release the render window before Qt deletes the widget (pyvistaqt needs this order), and the GL
        context and surface pyvistaqt keeps: its Python wrapper of the widget's QSurface (not a QObject, so
        PySide never learns that Qt deleted it) otherwise stays registered at a freed address, and PySide later
        handed it out for a new object living there (pyqtgraph, building a plot, met a "QSurface" child)."""
        self._hover.stop()
        self.plotter.close()
        forget = getattr(self.plotter, "_forget_context", None)  # pyvistaqt >= 0.13; older ones keep no surface
        if forget is not None:
            forget()


def _outside(planes: np.ndarray, bounds: tuple[float, ...]) -> bool:
    """Whether a box lies wholly on the outer side of one of the frustum's planes (a*x + b*y + c*z + d < 0
    is outside, as VTK gives them)."""
    x0, x1, y0, y1, z0, z1 = bounds
    corners = np.array([[x, y, z, 1.0] for x in (x0, x1) for y in (y0, y1) for z in (z0, z1)])
    return bool(np.any(np.all(corners @ planes.T < 0, axis=0)))


def _signature(item: SceneItem) -> tuple[Any, ...]:
    """What makes an item look the way it does: its actor's look (:func:`_look`, first), its colour, its tooltip
    and where it is; an item whose signature is unchanged stays on screen."""
    return (_look(item), item.color, item.tooltip, item.mesh.bounds)


def _look(item: SceneItem) -> tuple[Any, ...]:
    """An actor's properties as ``add_items`` sets them but its colour: an actor of one look shows any item of
    that look once its mesh and colour are swapped in (the tooltip only decides whether it is pickable)."""
    return (
        item.kind,
        item.opacity,
        item.style,
        bool(item.tooltip),
        item.line_width,
        item.edged,
        item.culled,
    )


def _address(actor: Any) -> str:
    # Pickers hand back a fresh Python wrapper of the same VTK actor, so match on the C++ object.
    return actor.GetAddressAsString("vtkObject")


class _SwallowVtkKeys(QObject):
    """Keeps VTK's own one-letter keys away from the 3D view: ``w`` would turn every block to wireframe (they
    then look like target ghosts), ``3`` switches to red/blue stereo, ``e``/``q`` close the render window,
    ``p``/``f``/``j``/``t``/``r``/``u`` pick, fly, change the style or reset. The app's shortcuts (F1) still work:
    Qt matches them before the widget gets the key."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            key = event  # a QKeyEvent
            chord = (
                Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.MetaModifier
            )
            plain = not (key.modifiers() & chord)  # type: ignore[attr-defined]
            if plain and key.text() and key.text().isprintable():  # type: ignore[attr-defined]
                return True
        return False
