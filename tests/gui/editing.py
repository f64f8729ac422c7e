"""Helpers for driving the editor window with the real mouse: where a world point is drawn in its 3D view."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from simlab.gui.editor import EditorWindow


def widget_point(window: EditorWindow, point: tuple[float, float, float]) -> QPoint:
    """The Qt position in the 3D view where world ``point`` is drawn."""
    renderer = window.canvas.plotter.renderer
    renderer.SetWorldPoint(*point, 1.0)
    renderer.WorldToDisplay()
    x, y, _z = renderer.GetDisplayPoint()
    ratio = window.canvas.widget.devicePixelRatioF()
    return QPoint(round(x / ratio), round(window.canvas.widget.height() - 1 - y / ratio))


def click_world(qtbot, window: EditorWindow, point: tuple[float, float, float]) -> None:
    """A real left click on the 3D view where ``point`` is drawn."""
    qtbot.mouseClick(window.canvas.widget, Qt.MouseButton.LeftButton, pos=widget_point(window, point))


def drag_world(qtbot, window: EditorWindow, points: list[tuple[float, float, float]]) -> None:
    """A real left-button drag in the 3D view through the places where ``points`` are drawn."""
    widget = window.canvas.widget
    first, *rest = [widget_point(window, p) for p in points]
    qtbot.mousePress(widget, Qt.MouseButton.LeftButton, pos=first)
    for position in rest:
        qtbot.mouseMove(widget, position)
    qtbot.mouseRelease(widget, Qt.MouseButton.LeftButton, pos=rest[-1] if rest else first)
