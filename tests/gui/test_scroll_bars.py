"""A kept scroll bar paints each look once: it shows what a plain scroll bar shows, a look that comes back is
blitted without the style drawing it again, and under the mouse the style draws it (hovered parts)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPixmapCache
from PySide6.QtWidgets import QProxyStyle, QScrollBar, QStyle, QStyleFactory

from simlab.gui.scroll_bars import KeptScrollBar
from tests.gui.conftest import wait_shown


class CountingStyle(QProxyStyle):
    """Fusion, counting the scroll bars it draws."""

    def __init__(self) -> None:
        super().__init__(QStyleFactory.create("fusion"))
        self.bars = 0

    def drawComplexControl(self, control, option, painter, widget=None):
        if control == QStyle.ComplexControl.CC_ScrollBar:
            self.bars += 1
        super().drawComplexControl(control, option, painter, widget)


def _bar(qtbot, kind: type[QScrollBar], style: QStyle) -> QScrollBar:
    bar = kind(Qt.Orientation.Vertical)
    qtbot.addWidget(bar)
    bar.setStyle(style)
    bar.resize(15, 400)
    bar.setPageStep(400)
    bar.show()
    wait_shown(qtbot, bar)
    return bar


def _pixels(bar: QScrollBar) -> np.ndarray:
    image = bar.grab().toImage().convertToFormat(QImage.Format.Format_RGBA8888)
    rows = np.frombuffer(bytes(image.constBits()), np.uint8).reshape(image.height(), image.bytesPerLine())
    return rows[:, : 4 * image.width()].astype(int)


@pytest.mark.parametrize(("maximum", "value"), [(0, 0), (600, 0), (600, 300), (5000, 4200)])
def test_a_kept_bar_shows_what_a_plain_one_shows(qtbot, maximum, value):
    style = QStyleFactory.create("fusion")
    kept, plain = _bar(qtbot, KeptScrollBar, style), _bar(qtbot, QScrollBar, style)
    for bar in (kept, plain):
        bar.setRange(0, maximum)
        bar.setValue(value)
    # composed over the background through a transparent picture: antialiased edges may round one level apart
    assert np.abs(_pixels(kept) - _pixels(plain)).max() <= 2


def test_a_look_that_comes_back_is_not_drawn_again(qtbot):
    QPixmapCache.clear()  # looks kept by the test before
    style = CountingStyle()
    bar = _bar(qtbot, KeptScrollBar, style)
    for maximum in (600, 900, 600, 900, 600):
        bar.setRange(0, maximum)
        bar.grab()  # painted now, whether or not the window is exposed yet
    assert style.bars == 2
    bar.setAttribute(Qt.WidgetAttribute.WA_UnderMouse, True)  # hovered: the style shows which part is
    bar.grab()
    assert style.bars == 3
