"""The 3D canvas is rendered off screen and painted by a plain widget: the widget shows exactly the pixels VTK
rendered, the mouse and the wheel move the camera through VTK's trackball style as pyvistaqt's widget did, a
click still names the item under it, and no window of the app holds a QOpenGLWidget (with one, Qt composes the
whole window through OpenGL at every frame)."""

from __future__ import annotations

from threading import get_ident

import numpy as np
import pytest
import pyvista as pv
from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QPropertyAnimation, Qt
from PySide6.QtGui import QImage, QMouseEvent, QWheelEvent
from PySide6.QtOpenGLWidgets import QOpenGLWidget
from PySide6.QtWidgets import QApplication, QWidget

from simlab.gui import offscreen_view
from simlab.gui.editor import EditorWindow
from simlab.gui.scene_canvas import SceneCanvas
from simlab.render.scene import CameraPose, SceneItem
from simlab.runner.demo import DEMO_RUN
from simlab.worlds.rooms.editing import EDITOR
from tests.gui.conftest import shown_canvas, shown_window, wait_shown

SLANTED = CameraPose("slanted", (4.0, -5.0, 4.0), (0.0, 0.0, 0.0), (0.0, 0.0, 1.0))


@pytest.fixture
def canvas(qtbot):
    with shown_canvas(qtbot, SLANTED) as made:
        made.show([SceneItem("a", "object", pv.Box(), (0.8, 0.2, 0.2), tooltip="a")])
        yield made


def grabbed(canvas: SceneCanvas) -> np.ndarray:
    """The widget's pixels as Qt paints them (RGB)."""
    image = canvas.widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB888)
    rows = np.frombuffer(bytes(image.constBits()), dtype=np.uint8).reshape(image.height(), image.bytesPerLine())
    return rows[:, : 3 * image.width()].reshape(image.height(), image.width(), 3).astype(int)


def rendered(canvas: SceneCanvas) -> np.ndarray:
    """The same scene rendered again by VTK and read by pyvista (RGB, top row first)."""
    canvas.plotter.render()
    return np.asarray(canvas.plotter.screenshot(return_img=True), dtype=int)[:, :, :3]


def send_mouse(widget: QWidget, kind: QMouseEvent.Type, at: QPoint, buttons: Qt.MouseButton) -> None:
    button = Qt.MouseButton.NoButton if kind == QMouseEvent.Type.MouseMove else Qt.MouseButton.LeftButton
    position = QPointF(at)
    event = QMouseEvent(kind, position, widget.mapToGlobal(position), button, buttons, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, event)


def test_the_widget_paints_the_pixels_vtk_rendered(canvas):
    painted = grabbed(canvas)
    assert painted.shape == (300, 400, 3)
    assert (painted != 255).any(axis=2).sum() > 5000  # the box is there, not a blank or stale frame
    assert np.abs(painted - rendered(canvas)).max() <= 1


def test_a_step_renders_the_3d_view_before_the_other_panels_update_and_paints_that_frame(qtbot, tmp_path):
    """The world view renders a step's scene in the step's first slot (software GL finishes it while the other
    panels update); its paint reads that frame back without rendering again, and shows the new turn."""
    win = shown_window(qtbot, tmp_path, DEMO_RUN)
    win.open_episode_id(win.browser.visible_episode_ids()[0])
    canvas = win.world.canvas
    qtbot.waitUntil(lambda: not canvas.widget._stale)
    QApplication.processEvents()
    before = grabbed(canvas)
    order: list[str] = []
    threads: list[int] = []
    window = canvas.plotter.render_window
    tag = window.AddObserver("StartEvent", lambda *_args: (order.append("render"), threads.append(get_ident())))
    win.playback.turnChanged.connect(lambda _turn: order.append("last slot"))  # connected last: called last
    win.playback.seek(5)
    assert order == ["render", "last slot"]
    QApplication.processEvents()  # the frame: the view's paint reads the frame back
    assert order == ["render", "last slot"]
    assert threads != [get_ident()]  # blocks' panels draw without VTK: rendered beside the GUI thread
    window.RemoveObserver(tag)
    painted = grabbed(canvas)
    assert (painted != before).any(axis=2).sum() > 500  # blocks placed by turn 5
    assert np.abs(painted - rendered(canvas)).max() <= 1
    win.close()


def test_what_may_use_vtk_waits_for_the_render_in_flight_beside_the_gui_thread(qtbot, tmp_path):
    """While a step's scene renders on the render thread, the GUI thread uses no VTK: the plotter (any attribute),
    the canvas, the view's paint and the events that run the app's code from outside the step wait for it; the
    GL context comes back to the GUI thread."""
    win = shown_window(qtbot, tmp_path, DEMO_RUN)
    win.open_episode_id(win.browser.visible_episode_ids()[0])
    canvas = win.world.canvas
    QApplication.processEvents()
    context = canvas.plotter._context.context
    home = context.thread()
    for touch in (
        lambda: canvas.plotter.renderer,
        lambda: canvas.in_view(canvas.items),
        lambda: canvas.widget.repaint(),
        lambda: QApplication.sendEvent(
            win.plots,
            QMouseEvent(
                QMouseEvent.Type.MouseMove,
                QPointF(3, 3),
                QPointF(3, 3),
                Qt.MouseButton.NoButton,
                Qt.MouseButton.NoButton,
                Qt.KeyboardModifier.NoModifier,
            ),
        ),
    ):
        _step_to_a_render(win)
        touch()
        assert offscreen_view._in_flight is None
        assert context.thread() is home
    _step_to_a_render(win)
    QApplication.processEvents()  # the step's frame: its paint waited
    assert offscreen_view._in_flight is None and not canvas.widget._stale
    win.close()


def test_qt_deleting_its_own_animation_goes_on_beside_the_render(qtbot, tmp_path):
    """The main window deletes the animation of a dock it laid out again (an episode's first open resizes the
    Plots dock): that runs none of the app's code, so it does not wait for the render in flight; deleting any
    other object does."""
    win = shown_window(qtbot, tmp_path, DEMO_RUN)
    win.open_episode_id(win.browser.visible_episode_ids()[0])
    QApplication.processEvents()
    _step_to_a_render(win)
    animation = QPropertyAnimation(win.plots, b"geometry")
    QApplication.sendEvent(animation, QEvent(QEvent.Type.DeferredDelete))
    assert offscreen_view._in_flight is not None
    QApplication.sendEvent(QObject(), QEvent(QEvent.Type.DeferredDelete))
    assert offscreen_view._in_flight is None
    win.close()


def _step_to_a_render(win) -> None:
    """Step on (from turn 0 at the end) until a step changed the scene: its render is then in flight."""
    for _ in range(2 * win.playback.last_turn):
        if win.playback.turn == win.playback.last_turn:
            win.playback.first()
            QApplication.processEvents()
        win.playback.step()
        if offscreen_view._in_flight is not None:
            return  # begun, not waited for
        QApplication.processEvents()
    raise AssertionError("no step changed the scene")


def test_a_mouse_drag_rotates_the_camera_and_the_wheel_zooms(canvas):
    camera = canvas.plotter.renderer.GetActiveCamera()
    before = camera.GetPosition()
    widget = canvas.widget
    send_mouse(widget, QMouseEvent.Type.MouseButtonPress, QPoint(200, 150), Qt.MouseButton.LeftButton)
    for x in range(205, 300, 5):
        send_mouse(widget, QMouseEvent.Type.MouseMove, QPoint(x, 150), Qt.MouseButton.LeftButton)
    send_mouse(widget, QMouseEvent.Type.MouseButtonRelease, QPoint(300, 150), Qt.MouseButton.NoButton)
    after = camera.GetPosition()
    assert np.linalg.norm(np.subtract(after, before)) > 1.0  # turned around the focal point
    assert np.linalg.norm(after) == pytest.approx(np.linalg.norm(before), rel=0.01)  # at the same distance
    assert np.abs(grabbed(canvas) - rendered(canvas)).max() <= 1  # the paint shows the turned camera
    distance = camera.GetDistance()
    at = QPointF(200, 150)
    wheel = QWheelEvent(
        at, widget.mapToGlobal(at), QPoint(), QPoint(0, 120), Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False,
    )  # fmt: skip
    QApplication.sendEvent(widget, wheel)
    assert camera.GetDistance() < distance  # a notch forward comes closer


def test_a_click_names_the_item_under_the_mouse(canvas, qtbot):
    renderer = canvas.plotter.renderer
    renderer.SetWorldPoint(0.0, 0.0, 0.5, 1.0)  # the middle of the box's top face
    renderer.WorldToDisplay()
    x, y, _z = renderer.GetDisplayPoint()
    on_box = QPoint(round(x), round(canvas.widget.height() - 1 - y))
    with qtbot.waitSignal(canvas.clicked) as clicked:
        qtbot.mouseClick(canvas.widget, Qt.MouseButton.LeftButton, pos=on_box)
    assert clicked.args[0] == "a"
    with qtbot.waitSignal(canvas.clicked) as clicked:
        qtbot.mouseClick(canvas.widget, Qt.MouseButton.LeftButton, pos=QPoint(3, 3))
    assert clicked.args[0] == ""


def test_no_window_holds_an_opengl_widget(qtbot, tmp_path):
    window = shown_window(qtbot, tmp_path, DEMO_RUN)
    assert window.open_episode_id(window.browser.visible_episode_ids()[0])
    window.playback.seek(window.playback.last_turn)
    assert window.world.count("block") > 0
    assert window.findChildren(QOpenGLWidget) == []
    window.close()
    editor = EditorWindow(EDITOR.new({"room_type": "living room", "width": 6.0, "depth": 5.0}))
    editor.show()
    wait_shown(qtbot, editor)
    assert editor.findChildren(QOpenGLWidget) == []
    editor.undo_stack.setClean()
    editor.close()
