"""A 3D view rendered off screen by VTK and painted by a plain QWidget.

A QOpenGLWidget anywhere in a window makes Qt compose the whole window through OpenGL at every frame, whatever
part of it is repainted (17-20 ms a frame under Xvfb's software GL, 1.5 ms without one). So the scene is rendered
by VTK into framebuffers of its own, with a GL context of Qt's on an off-screen surface, read back once per render
and painted as an image: :class:`OffscreenPlotter` is a pyvista plotter (its actor and camera API unchanged) whose
:attr:`~OffscreenPlotter.interactor` is a :class:`PaintedView`. The view renders only when the scene or the camera
changed since the frame it holds: in its paint event, or ahead of it when its owner knows the scene is complete
(:meth:`PaintedView.render_ahead`), then on a thread of its own while the GUI thread goes on (see
:func:`wait_for_render`). Qt's mouse and wheel events go to a VTK interactor without an event loop of its
own (:class:`vtkGenericRenderWindowInteractor`), whose render requests become repaints. Key events never reach VTK,
so its one-letter keys (``w`` wireframe, ``3`` stereo, ``e``/``q`` close...) do nothing.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

import numpy as np
import pyvista as pv
import shiboken6
import vtk
from PySide6.QtCore import QAbstractAnimation, QCoreApplication, QEvent, QObject, QPoint, QRectF, QSize, Qt, QThread
from PySide6.QtGui import (
    QCursor,
    QEnterEvent,
    QGuiApplication,
    QImage,
    QMouseEvent,
    QOffscreenSurface,
    QOpenGLContext,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QSurfaceFormat,
    QWheelEvent,
)
from PySide6.QtWidgets import QSizePolicy, QWidget
from pyvista.plotting.plotter import BasePlotter
from pyvista.plotting.render_window_interactor import RenderWindowInteractor
from vtkmodules.util.numpy_support import vtk_to_numpy

from simlab.gui.background import collector_paused

P = ParamSpec("P")
T = TypeVar("T")

WHEEL_STEP = 120  # Qt's angle delta of one wheel notch: VTK zooms by one step a notch


class PaintedView(QWidget):
    """The widget showing an :class:`OffscreenPlotter`'s frames. ``scale`` n renders 1/n of its device pixels,
    the frame stretched (a draft); ``text_scale`` n draws texts n times smaller (the
    render window's DPI follows it: VTK sizes texts by it), so a stretched draft keeps their size on the screen."""

    def __init__(self, parent: QWidget | None, plotter: OffscreenPlotter) -> None:
        super().__init__(parent)
        self._plotter = plotter
        self.setMouseTracking(True)  # moves without a button too: the hover tooltips
        self.setFocusPolicy(Qt.FocusPolicy.WheelFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.scale: float = 1
        self.text_scale: float = 1
        self._frame: QImage | None = None
        self._pixels = vtk.vtkUnsignedCharArray()
        self._stale = True
        self._unread = False  # rendered, not read back yet (see render_ahead)
        self._camera_time = -1  # the camera's modification time when the frame was rendered
        self._buttons: Qt.MouseButton = Qt.MouseButton.NoButton
        self._wheel = 0

    def sizeHint(self) -> QSize:
        return QSize(400, 400)

    def request(self) -> None:
        """The scene changed: render it at the next paint, and ask Qt for one."""
        wait_for_render()  # its end would mark the frame fresh
        self._stale = True
        self.update()

    def fit(self) -> None:
        """Size the render window to the widget's device pixels at :attr:`scale`, its DPI to match."""
        wait_for_render()
        window = self._plotter.render_window
        if window is None or self._plotter.iren is None:
            return
        ratio = self.devicePixelRatioF()
        width = max(1, round(self.width() * ratio / self.scale))
        height = max(1, round(self.height() * ratio / self.scale))
        self._plotter.iren.interactor.UpdateSize(width, height)  # the interactor's size and the window's
        window.SetDPI(round(72 * ratio / self.text_scale))
        self.request()

    def display_point(self, position: QPoint) -> tuple[int, int]:
        """A widget position as the render window's pixels (origin bottom left; a draft's fewer)."""
        ratio = self.devicePixelRatioF() / self.scale
        return round(position.x() * ratio), round((self.height() - 1 - position.y()) * ratio)

    # ---- painting ------------------------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        wait_for_render()
        painter = QPainter(self)
        window = self._plotter.render_window
        if window is None:  # closed
            painter.fillRect(self.rect(), Qt.GlobalColor.white)
            return
        if self._stale or self._camera() != self._camera_time or (self._frame is None and not self._unread):
            self._render(window)
        if self._unread:
            self._frame = self._read(window)
        assert self._frame is not None  # none yet: rendered and read just above
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, self.scale != 1)  # a draft is stretched
        painter.drawImage(QRectF(self.rect()), self._frame)

    def _camera(self) -> int:
        return int(self._plotter.renderer.GetActiveCamera().GetMTime())

    def render_ahead(self, beside: bool = False) -> None:
        """Render the changed scene now, when shown; the next paint reads the frame back.

        Software GL rasterizes on threads of its own for some milliseconds after ``Render`` returns, and reading
        the frame back waits for them: rendered as soon as the scene is complete (a step's first slot), that
        time overlaps the other panels' updates and paints instead of adding to them. ``beside``: render on the
        render thread, the GUI thread going on at once (the caller knows that nothing until the paint uses VTK
        but through this view's plotter and canvas, which wait for it: see :func:`wait_for_render`)."""
        window = self._plotter.render_window
        if window is None or not self._stale or not self.isVisible():
            return
        if beside:
            self._plotter.render_beside(self._rendered)
        else:
            self._render(window)

    def _render(self, window: Any) -> None:
        window.Render()
        self._rendered()

    def _rendered(self) -> None:
        """Note that the frame was rendered (in whichever thread rendered it)."""
        self._stale, self._camera_time = False, self._camera()  # a render resets the clipping range: after it
        self._unread = True

    def _read(self, window: Any) -> QImage:
        """The rendered frame, read back: the front buffer, where VTK resolved its multisampling (rendering
        again, as pyvista's ``screenshot`` does, would double the cost)."""
        self._unread = False
        width, height = window.GetSize()
        window.GetRGBACharPixelData(0, 0, width - 1, height - 1, 1, self._pixels)
        rows = np.ascontiguousarray(vtk_to_numpy(self._pixels).reshape(height, width, 4)[::-1])  # VTK: bottom up
        rows[:, :, 3] = 255  # VTK's background is transparent: a grab of the window would be too
        # Converted (a copy: ``rows`` may go) to the raster engine's own format, a draft's frame stretches to the
        # widget in 0.8 ms instead of 2.8 (and a full one paints in 0.25 ms instead of 0.45, conversion included).
        frame = QImage(rows.data, width, height, 4 * width, QImage.Format.Format_RGBX8888)
        return frame.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)

    # ---- mouse and wheel to VTK ----------------------------------------------------------------------------
    def _inform(self, event: QMouseEvent | QWheelEvent | QEnterEvent | None = None) -> Any:
        """The VTK interactor, told where the mouse is (VTK's pixels) and which modifiers are down; None once the
        plotter is closed (Qt still delivers the mouse leaving a closing window)."""
        iren = self._plotter.iren
        if iren is None or iren.interactor is None:
            return None
        position = event.position().toPoint() if event is not None else self.mapFromGlobal(QCursor.pos())
        modifiers = event.modifiers() if event is not None else Qt.KeyboardModifier.NoModifier
        x, y = self.display_point(position)
        ctrl = bool(modifiers & Qt.KeyboardModifier.ControlModifier)
        shift = bool(modifiers & Qt.KeyboardModifier.ShiftModifier)
        repeat = int(isinstance(event, QMouseEvent) and event.type() == QMouseEvent.Type.MouseButtonDblClick)
        iren.interactor.SetEventInformation(x, y, ctrl, shift, "\0", repeat, None)
        return iren.interactor

    def _forward(self, call: str | None, event: QMouseEvent | QWheelEvent | QEnterEvent | None = None) -> None:
        """Call the interactor's ``call`` (``MouseMoveEvent``...) for ``event``, unless closed or no call."""
        interactor = self._inform(event)
        if interactor is not None and call is not None:
            getattr(interactor, call)()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._buttons = event.button()
        self._forward(_PRESS.get(event.button()), event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        release, self._buttons = _RELEASE.get(self._buttons), Qt.MouseButton.NoButton
        self._forward(release, event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        self._forward("MouseMoveEvent", event)

    def wheelEvent(self, event: QWheelEvent) -> None:
        self._wheel += event.angleDelta().y()
        if abs(self._wheel) >= WHEEL_STEP:
            self._forward("MouseWheelForwardEvent" if self._wheel > 0 else "MouseWheelBackwardEvent", event)
            self._wheel = 0

    def enterEvent(self, event: QEnterEvent) -> None:
        self._forward("EnterEvent", event)

    def leaveEvent(self, event: Any) -> None:
        self._forward("LeaveEvent")

    def resizeEvent(self, event: QResizeEvent) -> None:
        self.fit()


_PRESS = {
    Qt.MouseButton.LeftButton: "LeftButtonPressEvent",
    Qt.MouseButton.RightButton: "RightButtonPressEvent",
    Qt.MouseButton.MiddleButton: "MiddleButtonPressEvent",
}
_RELEASE = {
    Qt.MouseButton.LeftButton: "LeftButtonReleaseEvent",
    Qt.MouseButton.RightButton: "RightButtonReleaseEvent",
    Qt.MouseButton.MiddleButton: "MiddleButtonReleaseEvent",
}


class OffscreenPlotter(BasePlotter):
    """A pyvista plotter rendering off screen, shown by its :attr:`interactor` (a :class:`PaintedView`), set up as
    pyvistaqt's ``QtInteractor`` was: a generic render window (its GL context an off-screen one of Qt's, see
    :class:`_Context`), multisampling, wide lines drawn by VTK's own shader, the trackball camera (left button
    rotates, middle or shift pans, the wheel zooms). :meth:`render` renders now (pyvista's meaning: a screenshot
    follows); to show a change, :meth:`PaintedView.request` a paint."""

    interactor: PaintedView

    def __init__(self, parent: QWidget | None) -> None:
        super().__init__()
        window = vtk.vtkGenericOpenGLRenderWindow()
        window.SetMultiSamples(pv.global_theme.multi_samples)
        for renderer in self.renderers:
            renderer.view_isometric()
            window.AddRenderer(renderer)
        self.ren_win = window
        self.interactor = PaintedView(parent, self)
        self._context = _Context(window, self.interactor)
        interactor = vtk.vtkGenericRenderWindowInteractor()
        interactor.SetRenderWindow(window)
        self.iren = RenderWindowInteractor(self, interactor=interactor)
        self.iren.initialize()
        self.iren.enable_trackball_style()
        interactor.EnableRenderOff()  # its render requests (a camera dragged) become paints
        self._render_request = interactor.AddObserver("RenderEvent", lambda *_args: self.interactor.request())
        self.background_color = pv.global_theme.background
        self._first_time = False  # as pyvistaqt's: pyvista would reset an unset camera at the first render

    def __getattribute__(self, name: str) -> Any:
        if _in_flight is not None:  # every use of the plotter (a step's next scene, a test's screenshot, a
            wait_for_render()  # camera preset) waits for the render in flight
        return super().__getattribute__(name)

    def render_beside(self, rendered: Callable[[], None]) -> None:
        """Render on the render thread (see :func:`wait_for_render`), then call ``rendered`` there; return once
        the render has begun."""
        _render_beside(self._context, rendered)

    @property
    def events(self) -> RenderWindowInteractor:
        """pyvista's interactor, which Qt's mouse events go to (there is one until :meth:`close`)."""
        assert self.iren is not None, "the plotter is closed"
        return self.iren

    def close(self) -> None:
        """Release the render window and its GL context (the view paints white from then on)."""
        wait_for_render()
        if getattr(self, "_closed", False):
            return
        if self.iren is not None and self.iren.interactor is not None:
            self.iren.interactor.RemoveObserver(self._render_request)  # VTK would hold the view past its window
        super().close()  # finalizes the window: its GL objects are freed with the context current
        self._context.release()


class _Context:
    """A Qt OpenGL context on an off-screen surface that a generic VTK render window renders with (made current
    whenever VTK asks), the surface owned by the view's widget, the context by this object and freed with the
    surface (Qt moves no object with a parent to another thread, and the context is lent to the render thread:
    :meth:`lend`). Not an X window of VTK's own: VTK's X render window lets the GL driver draw lines wider than a
    pixel, and Mesa's software rasterizer drops the ones running up the screen when multisampled (a board's grid
    lost its lines across the view); a generic window told the hardware draws no wide lines draws them as
    triangles, as pyvistaqt's did."""

    def __init__(self, window: Any, owner: QObject) -> None:
        self._window = window
        self.context = QOpenGLContext()
        self.context.setFormat(_surface_format())
        self.surface = QOffscreenSurface(None, owner)
        self.surface.destroyed.connect(self._drop_context)
        self.surface.setFormat(self.context.format())
        self.surface.create()
        if not self.context.create() or not self.surface.isValid():
            raise RuntimeError("no OpenGL context for the 3D view")
        self._observers: list[int] = []
        self._serve()
        window.SetFrameBlitModeToNoBlit()  # the frame is read back from VTK's own framebuffer
        window.SetOwnContext(0)
        self._make_current()
        window.SetOpenGLSymbolLoader2(_gl_proc_address(), 0)
        window.OpenGLInit()  # the context's GL functions loaded, VTK's state set up
        window.SetForceMaximumHardwareLineWidth(1)
        window.SetReadyForRendering(True)

    def _serve(self) -> None:
        """Answer the render window's asks to make the context current, and whether it is."""
        if self._observers:
            return  # serving already
        self._observers = [
            self._window.AddObserver("WindowMakeCurrentEvent", self._make_current),
            self._window.AddObserver("WindowIsCurrentEvent", self._is_current),
        ]

    def _stop_serving(self) -> None:
        for tag in self._observers:
            self._window.RemoveObserver(tag)
        self._observers = []

    def lend(self, thread: QThread) -> None:
        """Hand the context to ``thread`` (from the GUI thread): Qt makes a context current only in its own."""
        self.context.doneCurrent()
        self.context.moveToThread(thread)

    def render_here(self, home: QThread, begun: threading.Event) -> None:
        """Render the window in this thread (the context lent to it), then hand the context back to ``home``.
        ``begun`` is set once the Python observers called at a render's start have run (the canvas's lighting);
        VTK renders without Python from there on. The context is made current once, and VTK told so instead of
        asking: an ask is a call into Python, which waits for the GUI thread to let go of Python's lock (up to
        5 ms each)."""
        renderer = self._window.GetRenderers().GetFirstRenderer()
        tag = None
        try:
            self.context.makeCurrent(self.surface)
            self._stop_serving()
            self._window.SetIsCurrent(True)
            tag = renderer.AddObserver("StartEvent", lambda *_args: begun.set(), LAST_OBSERVER)
            self._window.Render()
        finally:  # whatever failed, the context goes home and is served there again
            if tag is not None:
                renderer.RemoveObserver(tag)
            self._serve()
            self.context.doneCurrent()
            self.context.moveToThread(home)

    def _make_current(self, *_args: Any) -> None:
        if shiboken6.isValid(self.context):  # else deleted with its widget: VTK finds no context current
            self.context.makeCurrent(self.surface)

    def _is_current(self, *_args: Any) -> None:
        # VTK's bool* calldata is out of Python's reach: the answer goes where the event reads it back
        current = shiboken6.isValid(self.context) and QOpenGLContext.currentContext() is self.context
        self._window.SetIsCurrent(current)

    def _drop_context(self) -> None:
        """Free the context (its widget and surface are gone, or going): it goes with them, as a child would."""
        wait_for_render()
        if shiboken6.isValid(self.context):
            if QOpenGLContext.currentContext() is self.context:
                self.context.doneCurrent()
            shiboken6.delete(self.context)

    def release(self) -> None:
        """Stop serving the render window (VTK holds these observers) and free the context and its surface now,
        after the window was finalized: at a known point in the GUI thread, not in a deferred deletion or a
        garbage collection, which may run inside another Qt object's destructor."""
        self._stop_serving()
        self._drop_context()
        if shiboken6.isValid(self.surface):
            shiboken6.delete(self.surface)


# ---- the render thread ---------------------------------------------------------------------------------------
# A step's 3D scene is rendered beside the GUI thread (``PaintedView.render_ahead(beside=True)``): VTK's wrappers
# let go of Python's lock while VTK renders, so the other panels update and paint meanwhile, and the view's paint
# waits for the frame. VTK is not thread-safe, and its garbage collector takes a lock of its own and then
# Python's: a GUI thread making or freeing a VTK object during a render can deadlock both (seen with a frame
# thread that rendered). So one render at a time is in flight, the GUI thread uses no VTK while it is, and
# everything that could waits for it first (:func:`wait_for_render`): the view's paint, size, requests and mouse;
# its plotter (any attribute), its canvas and closing; and the events that run the app's code from outside the
# step's slots, which an application event filter holds back while a render is in flight (input, timers and
# their garbage collections, deferred deletions). Python's automatic collection is held off meanwhile
# (``collector_paused``).

LAST_OBSERVER = -1000.0  # a VTK observer priority: called after those of the default priority (0)

_renders = ThreadPoolExecutor(max_workers=1, thread_name_prefix="simlab-render")
_in_flight: Future[None] | None = None  # the render begun beside the GUI thread, until waited for
_render_ident: int | None = None  # the render thread's, once started
_WAITING_EVENTS = frozenset(
    {
        QEvent.Type.MouseButtonPress,
        QEvent.Type.MouseButtonRelease,
        QEvent.Type.MouseButtonDblClick,
        QEvent.Type.MouseMove,
        QEvent.Type.KeyPress,
        QEvent.Type.ShortcutOverride,
        QEvent.Type.Shortcut,
        QEvent.Type.Wheel,
        QEvent.Type.Enter,
        QEvent.Type.Leave,
        QEvent.Type.ContextMenu,
        QEvent.Type.ToolTip,
        QEvent.Type.WhatsThis,
        QEvent.Type.DragEnter,
        QEvent.Type.DragMove,
        QEvent.Type.DragLeave,
        QEvent.Type.Drop,
        QEvent.Type.TouchBegin,
        QEvent.Type.TouchUpdate,
        QEvent.Type.TouchEnd,
        QEvent.Type.TouchCancel,
        QEvent.Type.TabletPress,
        QEvent.Type.TabletMove,
        QEvent.Type.TabletRelease,
        QEvent.Type.NativeGesture,
        QEvent.Type.Gesture,
        QEvent.Type.InputMethod,
        QEvent.Type.Timer,
        QEvent.Type.DeferredDelete,
        QEvent.Type.Close,
        QEvent.Type.Quit,
        QEvent.Type.SockAct,
        QEvent.Type.SockClose,
    }
)
"""Events that wait for the render in flight before they are delivered: those that run the app's code from
outside a step's own slots (input, timers and the garbage collections they run, sockets, deferred deletions,
closing). A key's release runs none of it; paints and layouts run Qt's, the 3D view's own paint and resize wait,
and queued calls (Qt's own, as a graphics scene's updates; a background job's results) reach VTK only through a
canvas or a plotter, which wait."""


def wait_for_render() -> None:
    """Wait until the render in flight beside the GUI thread (if any) is done. Anything that may use VTK calls
    this first; in the render thread itself (a VTK observer of the render) it returns at once."""
    global _in_flight
    job = _in_flight
    if job is None or threading.get_ident() == _render_ident:
        return
    _in_flight = None
    app = QCoreApplication.instance()
    if app is not None:
        app.removeEventFilter(_waiting)
    job.result()


def waits_for_render(method: Callable[P, T]) -> Callable[P, T]:
    """``method``, waiting for the render in flight first (a method that uses VTK)."""

    @functools.wraps(method)
    def waiting(*args: P.args, **kwargs: P.kwargs) -> T:
        wait_for_render()
        return method(*args, **kwargs)

    return waiting


def _render_beside(context: _Context, rendered: Callable[[], None]) -> None:
    """Render ``context``'s window on the render thread, then call ``rendered`` there; return once it has
    begun (handed Python's lock straight away, the render thread starts now, not at the GUI thread's next
    switch, up to 5 ms later)."""
    global _in_flight
    wait_for_render()
    begun = threading.Event()
    home = context.context.thread()
    context.lend(_render_thread())
    _in_flight = _renders.submit(_render_job, context, home, begun, rendered)
    app = QCoreApplication.instance()
    if app is not None:
        app.installEventFilter(_waiting)
    begun.wait()


def _render_job(context: _Context, home: QThread, begun: threading.Event, rendered: Callable[[], None]) -> None:
    try:
        with collector_paused():
            context.render_here(home, begun)
            rendered()
    finally:  # whatever failed before the render began (the context home again), the GUI thread goes on
        begun.set()


def _render_thread() -> QThread:
    """The render thread's QThread (Qt adopts it at the first ask), for contexts to be moved to."""
    if not _adopted:
        _adopted.append(_renders.submit(_adopt).result())
    return _adopted[0]


def _adopt() -> QThread:
    global _render_ident
    _render_ident = threading.get_ident()
    return QThread.currentThread()


_adopted: list[QThread] = []


class _WaitOnEvents(QObject):
    """The application's event filter while a render is in flight: events that may run code using VTK wait."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in _WAITING_EVENTS and not _qt_own_deletion(watched, event):
            wait_for_render()
        return False


def _qt_own_deletion(watched: QObject, event: QEvent) -> bool:
    """Whether ``event`` deletes one of Qt's animations, which runs none of the app's code: the main window
    animates a dock it lays out again and deletes the animation after (an episode's first open resizes the
    Plots dock: its paints waited for the first render, some 70 ms, instead of going on beside it)."""
    return event.type() == QEvent.Type.DeferredDelete and isinstance(watched, QAbstractAnimation)


_waiting = _WaitOnEvents()


def _surface_format() -> QSurfaceFormat:
    """Desktop OpenGL 3.2 core, as VTK's shaders need (multisampling happens in VTK's own framebuffers)."""
    surface = QSurfaceFormat()
    surface.setRenderableType(QSurfaceFormat.RenderableType.OpenGL)
    surface.setProfile(QSurfaceFormat.OpenGLContextProfile.CoreProfile)
    surface.setVersion(3, 2)
    return surface


def _gl_proc_address() -> int:
    """The address of the platform's GL function loader, for VTK's: VTK calls GL through pointers of its own. 0
    where there is none of these libraries (not Linux): VTK then finds its functions itself."""
    platform = QGuiApplication.platformName()
    library, name = (
        ("libEGL.so.1", "eglGetProcAddress")
        if platform.startswith("wayland")
        else ("libGL.so.1", "glXGetProcAddressARB")
    )
    try:
        loader = getattr(ctypes.CDLL(library), name)
    except (OSError, AttributeError):
        return 0
    return int(ctypes.cast(loader, ctypes.c_void_p).value or 0)
