"""A scroll bar that paints each of its looks once.

Fusion draws a scroll bar with gradients and antialiased outlines: a bar as tall as the Agents dock costs 1.5 ms
of the raster engine at each paint, and a step that changes what a dock holds changes the bar's range, so it is
painted at nearly every step. Stepping back and forth shows the same layouts again, so the bar's picture is kept
by what it looks like (its size, where the handle is, its state) and blitted when that look comes back.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPixmap, QPixmapCache
from PySide6.QtWidgets import QScrollBar, QStyle, QStyleOptionSlider


class KeptScrollBar(QScrollBar):
    """A :class:`QScrollBar` whose idle looks are painted by the style once and kept in Qt's pixmap cache. While
    the mouse is over it or drags it, it paints as any scroll bar (the style then shows which part is hovered or
    pressed, which only the bar itself knows)."""

    def paintEvent(self, event: QPaintEvent) -> None:
        if self.underMouse() or self.isSliderDown():
            super().paintEvent(event)
            return
        option = QStyleOptionSlider()
        self.initStyleOption(option)
        option.subControls = QStyle.SubControl.SC_All
        style = self.style()
        slider = QStyle.SubControl.SC_ScrollBarSlider
        handle = style.subControlRect(QStyle.ComplexControl.CC_ScrollBar, option, slider, self)
        ratio = self.devicePixelRatioF()
        key = (
            f"simlab-bar:{style.name()}:{self.width()}x{self.height()}@{ratio}:{handle.getRect()}:"
            f"{option.state.value}:{option.orientation.value}:{option.direction.value}:{option.palette.cacheKey()}"
        )
        picture = QPixmap()
        if not QPixmapCache.find(key, picture):
            picture = QPixmap(round(self.width() * ratio), round(self.height() * ratio))
            picture.setDevicePixelRatio(ratio)
            picture.fill(Qt.GlobalColor.transparent)
            painter = QPainter(picture)
            style.drawComplexControl(QStyle.ComplexControl.CC_ScrollBar, option, painter, self)
            painter.end()
            QPixmapCache.insert(key, picture)
        QPainter(self).drawPixmap(0, 0, picture)
