"""A view of pyqtgraph plots with a turn cursor the view draws itself, over a picture it keeps of the plots.

A cursor that is an item of the plots' scene (pyqtgraph's ``InfiniteLine``) costs a step about 2.5 ms: moving it
dirties two strips of the view, and Qt asks each of the scene's items under them for its bounds in Python
(pyqtgraph's) before painting them, however small the strips. :class:`CursorView` keeps a picture of the scene
instead, refreshed only where the scene changed (Qt's ``QGraphicsScene.changed``), and paints a step as that
picture's strips and the cursor lines drawn with a QPainter: no item is asked anything. The cursor stays a control:
dragging it (the mouse within :data:`GRAB_PX` of the line) asks for the turn under the mouse, hovering it
highlights it and shows a tooltip; the rest of the view pans and zooms as pyqtgraph's does.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRect, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QPixmap,
    QRegion,
    QResizeEvent,
)
from PySide6.QtWidgets import QToolTip, QWidget

CURSOR_COLOUR = "#263238"
CURSOR_HOVER_COLOUR = "#ffb300"
CURSOR_WIDTH, CURSOR_HOVER_WIDTH = 2, 5
GRAB_PX = 4  # how near the line the mouse grabs it
LABEL_AT = 0.12  # where the label sits up the labelled plot's height, from the bottom
LABEL_PAD = 4
TOOLTIP = "Drag to change the turn"
SCENE_MARGIN = 2  # pixels around a changed scene rectangle repainted too (antialiased edges)


class CursorView(pg.GraphicsLayoutWidget):
    """A ``GraphicsLayoutWidget`` whose plots (:meth:`set_cursor_plots`) show a vertical cursor at
    :attr:`turn`, the first with a "turn N" label. ``turnDragged`` gives the whole turn the cursor is dragged to,
    within the bounds set."""

    turnDragged = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.turn: float | None = None
        self._plots: list[pg.PlotItem] = []
        self._bounds = (0.0, 0.0)
        self._axes: list[tuple[QRectF, float, float] | None] | None = None  # see _axis; None: to be measured
        self._kept: QPixmap | None = None  # the scene as painted, without the cursor
        self._stale = QRegion()  # the parts of the kept picture the scene changed since (viewport pixels)
        self._hovered = False
        self._dragging = False
        self._label_font = QFont()
        self.scene().changed.connect(self._scene_changed)
        self.viewport().setMouseTracking(True)  # moves without a button too: the cursor's hover

    # ---- the cursor ---------------------------------------------------------------------------------------
    def set_cursor_plots(self, plots: Sequence[pg.PlotItem], low: float, high: float) -> None:
        """Draw the cursor in ``plots`` (none: no cursor), dragged within ``low``..``high``."""
        self._plots, self._bounds, self._axes = list(plots), (low, high), None
        self.viewport().update()

    def set_turn(self, turn: float | None) -> None:
        """Move the cursor to ``turn`` (None: hide it), repainting only the strips it leaves and enters."""
        if turn == self.turn:
            return
        before = self._cursor_region()
        self.turn = turn
        self.viewport().update(before.united(self._cursor_region()))

    def cursor_x(self, plot: int) -> float | None:
        """Where the cursor stands in plot number ``plot``, in the viewport's pixels (None: not drawn there)."""
        lines = self._lines()
        line = lines[plot] if plot < len(lines) else None
        return line[0] if line is not None else None

    def _lines(self) -> list[tuple[float, QRectF] | None]:
        """Per cursor plot: the cursor's x and the plot area it spans (viewport pixels), or None out of view."""
        if self.turn is None:
            return []
        if self._axes is None:  # measured once while the scene stands still: pyqtgraph's mapping is Python
            self._axes = [self._axis(plot) for plot in self._plots]
        lines: list[tuple[float, QRectF] | None] = []
        for axis in self._axes:
            line = None
            if axis is not None:
                area, scale, offset = axis
                x = scale * self.turn + offset
                line = (x, area) if area.left() <= x <= area.right() else None
            lines.append(line)
        return lines

    def _axis(self, plot: pg.PlotItem) -> tuple[QRectF, float, float] | None:
        """A plot's area (viewport pixels) and its turn axis's scale and offset there (None: hidden)."""
        if not plot.isVisible():
            return None
        box, to_viewport = plot.getViewBox(), self.viewportTransform()
        area = to_viewport.mapRect(box.sceneBoundingRect())
        start, end = (to_viewport.map(box.mapViewToScene(QPointF(turn, 0))).x() for turn in (0.0, 1.0))
        return area, end - start, start

    def _label(self, x: float, area: QRectF) -> tuple[QRectF, str]:
        """The "turn N" label's box beside the line and its text."""
        text = f"turn {self.turn:.0f}"
        metrics = QFontMetrics(self._label_font)
        width, height = metrics.horizontalAdvance(text) + 2 * LABEL_PAD, metrics.height() + 2 * LABEL_PAD
        middle = area.bottom() - LABEL_AT * area.height()
        left = x if x + width <= area.right() else x - width  # on the line's left near the plot's right edge
        return QRectF(left, middle - height / 2, width, height), text

    def _cursor_region(self) -> QRegion:
        """The viewport pixels the cursor covers now (lines at their hovered width, the label)."""
        region = QRegion()
        for k, line in enumerate(self._lines()):
            if line is None:
                continue
            x, area = line
            half = CURSOR_HOVER_WIDTH
            region = region.united(QRect(round(x - half), round(area.top()), 2 * half + 1, round(area.height()) + 1))
            if k == 0:
                box, _text = self._label(x, area)
                region = region.united(box.toAlignedRect().adjusted(-1, -1, 1, 1))
        return region

    def _paint_cursor(self, painter: QPainter) -> None:
        colour = QColor(CURSOR_HOVER_COLOUR if self._hovered or self._dragging else CURSOR_COLOUR)
        width = CURSOR_HOVER_WIDTH if self._hovered or self._dragging else CURSOR_WIDTH
        for k, line in enumerate(self._lines()):
            if line is None:
                continue
            x, area = line
            painter.setPen(QPen(colour, width))
            painter.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()))
            if k == 0:
                box, text = self._label(x, area)
                painter.fillRect(box, QColor(CURSOR_COLOUR))
                painter.setPen(QColor("#ffffff"))
                painter.setFont(self._label_font)
                painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)

    # ---- painting -----------------------------------------------------------------------------------------
    def _scene_changed(self, rects: list[QRectF]) -> None:
        self._axes = None  # a plot's range or place may have changed
        for rect in rects:
            shown = self.mapFromScene(rect).boundingRect()
            self._stale = self._stale.united(shown.adjusted(-SCENE_MARGIN, -SCENE_MARGIN, SCENE_MARGIN, SCENE_MARGIN))

    def _refresh(self) -> QPixmap:
        """The kept picture, its stale parts painted again from the scene."""
        viewport = self.viewport()
        ratio = viewport.devicePixelRatioF()
        size = viewport.size() * ratio
        if self._kept is None or self._kept.size() != size or self._kept.devicePixelRatioF() != ratio:
            self._kept = QPixmap(size)
            self._kept.setDevicePixelRatio(ratio)
            self._stale = QRegion(viewport.rect())
        if not self._stale.isEmpty():  # (pyqtgraph's render settles its views' ranges first, as a paint does)
            painter = QPainter(self._kept)
            painter.setClipRegion(self._stale)
            bounds = self._stale.boundingRect()
            self.render(painter, QRectF(bounds), bounds)
            painter.end()
            self._stale = QRegion()
        return self._kept

    def paintEvent(self, event: QPaintEvent) -> None:
        kept = self._refresh()
        painter = QPainter(self.viewport())
        painter.setClipRegion(event.region())
        painter.drawPixmap(0, 0, kept)
        self._paint_cursor(painter)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._kept, self._axes = None, None

    def setBackground(self, background: object) -> None:
        super().setBackground(background)
        self._kept = None

    # ---- dragging and hovering ----------------------------------------------------------------------------
    def _grabbed(self, position: QPointF) -> int | None:
        """The cursor plot whose line is within :data:`GRAB_PX` of ``position``, or None."""
        for k, line in enumerate(self._lines()):
            if line is not None:
                x, area = line
                if abs(position.x() - x) <= GRAB_PX and area.top() <= position.y() <= area.bottom():
                    return k
        return None

    def _turn_at(self, position: QPointF) -> int:
        low, high = self._bounds
        box = self._plots[0].getViewBox()
        turn = float(box.mapSceneToView(self.mapToScene(position.toPoint())).x())
        return round(min(max(turn, low), high))

    def _set_hovered(self, hovered: bool) -> None:
        if hovered != self._hovered:
            self._hovered = hovered
            self.viewport().update(self._cursor_region())

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self._grabbed(event.position()) is not None:
            self._dragging = True
            self.viewport().update(self._cursor_region())
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._dragging:
            self.turnDragged.emit(self._turn_at(event.position()))
            event.accept()
            return
        self._set_hovered(self._grabbed(event.position()) is not None)
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._dragging and event.button() == Qt.MouseButton.LeftButton:
            self.turnDragged.emit(self._turn_at(event.position()))
            self._dragging = False
            self._set_hovered(self._grabbed(event.position()) is not None)
            self.viewport().update(self._cursor_region())
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def leaveEvent(self, event: QEvent) -> None:
        self._set_hovered(False)
        super().leaveEvent(event)

    def viewportEvent(self, event: QEvent) -> bool:
        tip = event.type() == QEvent.Type.ToolTip
        if tip and isinstance(event, QHelpEvent) and self._grabbed(QPointF(event.pos())) is not None:
            QToolTip.showText(event.globalPos(), TOOLTIP, self.viewport())
            return True
        return bool(super().viewportEvent(event))
