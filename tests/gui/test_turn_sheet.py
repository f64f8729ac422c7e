"""The painted sheet of an agent panel: what it draws where, what a change repaints, what hovering tells and
what its menu copies. Real widgets under Xvfb, pictures compared pixel by pixel."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QObject, QPoint
from PySide6.QtGui import QColor, QCursor, QGuiApplication, QImage, QPainter, QPalette, QPixmap, QRegion
from PySide6.QtWidgets import QWidget

from simlab.gui.turn_sheet import (
    DIMMED_OPACITY,
    GAP,
    MAX_UPSCALE,
    SheetPicture,
    TurnContent,
    TurnSheet,
    changed_region,
    scaled_to_width,
)
from tests.gui.conftest import wait_shown

WIDTH = 300


def _picture(width: int, height: int, colour: str) -> QPixmap:
    """A picture with a diagonal, so a scaled or shifted copy differs from it."""
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor(colour))
    painter = QPainter(image)
    painter.setPen(QColor("black"))
    painter.drawLine(0, 0, width - 1, height - 1)
    painter.end()
    return QPixmap.fromImage(image)


def _pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine() // 4, 4)
    return rows[:, : image.width(), :3].astype(int)


@pytest.fixture
def sheet(qtbot) -> Iterator[TurnSheet]:
    """A sheet shown, ``WIDTH`` wide."""
    host = QWidget()
    qtbot.addWidget(host)
    sheet = TurnSheet(host)
    host.resize(WIDTH, 700)
    sheet.setGeometry(0, 0, WIDTH, 700)
    host.show()
    wait_shown(qtbot, sheet)  # (the host shows nothing of its own: the opaque sheet covers it)
    yield sheet  # the host kept alive meanwhile (qtbot keeps only a weak reference)


@functools.cache
def _wall() -> QPixmap:
    return _picture(200, 100, "#4a90d9")


@functools.cache
def _board() -> QPixmap:
    return _picture(400, 200, "#d94a4a")


def _content(turn: int, acted: bool = True, message: str = "", pictures: tuple[QPixmap, ...] = ()) -> TurnContent:
    pictures = pictures or (_wall(),)
    shown = tuple(SheetPicture(f"picture {k}", pixmap, f"tip {k}") for k, pixmap in enumerate(pictures))
    return TurnContent(f"Turn {turn}", acted, message, pictures=shown, copied=message)


def _items(sheet: TurnSheet) -> list:
    return list(sheet.layout_at(sheet.width()).items)


def test_pictures_are_drawn_scaled_to_the_width_never_blown_up_past_the_limit(sheet, qtbot):
    sheet.set_content(_content(1, pictures=(_wall(), _board())))
    wall, board = [item for item in _items(sheet) if item.pixmap is not None]
    assert wall.rect.width() == round(200 * MAX_UPSCALE) and board.rect.width() == WIDTH
    assert wall.rect.left() == (WIDTH - wall.rect.width()) // 2  # centred
    assert board.rect.height() == WIDTH // 2  # the aspect kept
    shot = _pixels(sheet.grab().toImage())
    for item in (wall, board):
        r = item.rect
        expected = _pixels(scaled_to_width(item.pixmap, r.width()).toImage())
        assert np.array_equal(shot[r.top() : r.bottom() + 1, r.left() : r.right() + 1], expected)
    sheet.set_max_width(160)  # the grid narrows the pictures to fit the dock
    assert [item.rect.width() for item in _items(sheet) if item.pixmap is not None] == [160, 160]
    assert sheet.heightForWidth(WIDTH) == _items(sheet)[-1].rect.bottom() + 1


def test_a_role_that_did_not_act_has_its_status_in_italics_and_its_pictures_dimmed(sheet, qtbot):
    sheet.set_content(_content(2, acted=False))
    status, caption, picture = _items(sheet)
    assert status.font.italic() and not status.dimmed and caption.dimmed and picture.dimmed
    r = picture.rect
    drawn = _pixels(sheet.grab().toImage())[r.top() : r.bottom() + 1, r.left() : r.right() + 1]
    full = _pixels(scaled_to_width(_wall(), r.width()).toImage())
    window = sheet.palette().color(QPalette.ColorRole.Window)  # the sheet's background
    expected = DIMMED_OPACITY * full + (1 - DIMMED_OPACITY) * np.array([window.blue(), window.green(), window.red()])
    assert np.abs(drawn - expected).max() <= 2


def test_lines_are_stacked_a_gap_apart_and_nothing_is_drawn_for_what_is_not_there(sheet):
    sheet.set_content(_content(3, message="<b>\u201cPut the red block on the left\u201d</b>"))
    items = _items(sheet)
    assert [item.look[0] for item in items] == ["text", "text", "text", "picture"]
    for upper, lower in itertools.pairwise(items):
        assert lower.rect.top() == upper.rect.bottom() + 1 + GAP
    sheet.set_content(TurnContent("Nothing observed yet at turn 0", pictures=None))
    assert [item.look[0] for item in _items(sheet)] == ["text"]
    assert sheet.heightForWidth(WIDTH) == _items(sheet)[0].rect.bottom() + 1 + GAP  # the pictures' gap alone


class RegionCatcher(QObject):
    """The regions of the paint events ``watched`` gets."""

    def __init__(self, watched: QWidget) -> None:
        super().__init__()
        self.regions: list[QRegion] = []
        watched.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.regions.append(QRegion(event.region()))
        return False


def _on_screen(sheet: TurnSheet) -> np.ndarray:
    """What the screen shows of ``sheet`` (the frame composed, not a fresh paint as ``grab`` gives)."""
    corner = sheet.mapTo(sheet.window(), QPoint(0, 0))
    window = sheet.window().winId()
    return _pixels(sheet.screen().grabWindow(window, corner.x(), corner.y(), sheet.width(), sheet.height()).toImage())


def _repainted(qtbot, sheet: TurnSheet, catcher: RegionCatcher, content: TurnContent) -> QRegion:
    """Show ``content``; the region the sheet then repaints."""
    catcher.regions.clear()
    sheet.set_content(content)
    qtbot.waitUntil(lambda: bool(catcher.regions))
    qtbot.wait(20)
    return catcher.regions[-1]


def test_a_step_repaints_only_what_changed_and_shows_what_a_whole_paint_does(sheet, qtbot):
    sheet.set_content(_content(4, message="<b>\u201chello\u201d</b>"))
    qtbot.wait(20)
    catcher = RegionCatcher(sheet)
    painted = _repainted(qtbot, sheet, catcher, _content(5, message="<b>\u201chello\u201d</b>"))  # the status only
    status, _message, _caption, picture = _items(sheet)
    assert painted.contains(status.rect) and not painted.intersects(picture.rect)
    painted = _repainted(qtbot, sheet, catcher, _content(5, acted=False, message="<b>\u201chello\u201d</b>"))
    assert painted.contains(picture.rect)  # in place, but dimmed now
    painted = _repainted(qtbot, sheet, catcher, _content(6, acted=False))  # the message gone: the rest moves up
    assert all(painted.contains(item.rect) for item in _items(sheet))
    stepped = _on_screen(sheet)
    sheet.update()  # painted whole: the same pixels
    qtbot.wait(50)
    assert np.array_equal(stepped, _on_screen(sheet))


def test_changed_region_is_empty_for_the_same_drawing_and_a_new_tip_is_laid_out(sheet):
    sheet.set_content(_content(7))
    laid = sheet.layout_at(WIDTH)
    sheet.set_content(_content(7))  # another object, the same drawing
    assert changed_region(laid, sheet.layout_at(WIDTH)).isEmpty()
    long = "<b>" + "x" * 50 + "</b>"  # two long messages shortened alike: the tips tell them apart
    sheet.set_content(TurnContent("Turn 7", message=long, message_tip="the first, whole"))
    sheet.set_content(TurnContent("Turn 7", message=long, message_tip="the second, whole"))
    message = _items(sheet)[1]
    assert message.tip == "the second, whole"
    assert changed_region(laid, sheet.layout_at(WIDTH)).contains(message.rect)  # the message is new


def _tooltip_at(qtbot, sheet: TurnSheet, point: QPoint) -> str:
    """What hovering ``point`` shows: the mouse moved there."""
    qtbot.mouseMove(sheet, point)
    qtbot.waitUntil(lambda: sheet.mapFromGlobal(QCursor.pos()) == point)
    qtbot.wait(50)  # the move's event delivered
    return sheet.toolTip()


def test_hovering_a_picture_or_a_shortened_message_tells_more(sheet, qtbot):
    content = _content(8, message="<b>short</b>")
    sheet.set_content(
        TurnContent(content.status, message=content.message, message_tip="all of it", pictures=content.pictures)
    )
    status, message, caption, picture = _items(sheet)
    assert _tooltip_at(qtbot, sheet, picture.rect.center()) == "tip 0"
    assert _tooltip_at(qtbot, sheet, caption.rect.center()) == "tip 0"
    assert _tooltip_at(qtbot, sheet, message.rect.center()) == "all of it"
    assert _tooltip_at(qtbot, sheet, status.rect.center()) == ""
    _tooltip_at(qtbot, sheet, picture.rect.center())
    sheet.set_content(TurnContent("Turn 9", pictures=content.pictures))  # a step, the mouse resting: the message
    assert sheet.toolTip() == ("tip 0" if _items(sheet)[-1].rect.contains(picture.rect.center()) else "")  # gone


def test_the_menu_copies_the_message_and_the_picture_under_the_mouse_as_given(sheet):
    sheet.set_content(_content(9, message="<b>\u201chello\u201d</b>", pictures=(_board(),)))
    picture = next(item for item in _items(sheet) if item.pixmap is not None)
    menu = sheet.context_menu(picture.rect.center())
    actions = {action.text(): action for action in menu.actions()}
    assert list(actions) == ["Copy message", "Copy picture"]
    actions["Copy picture"].trigger()
    copied = QGuiApplication.clipboard().pixmap()
    assert copied.size() == _board().size()  # the picture itself, not as scaled on screen
    assert np.array_equal(_pixels(copied.toImage()), _pixels(_board().toImage()))
    actions["Copy message"].trigger()
    assert QGuiApplication.clipboard().text() == "<b>\u201chello\u201d</b>"
    assert [a.text() for a in sheet.context_menu(QPoint(1, 1)).actions()] == ["Copy message"]
    sheet.set_content(_content(9))
    assert sheet.context_menu(QPoint(1, 1)).isEmpty()


def test_a_new_font_lays_the_sheet_out_again(sheet, qtbot):
    sheet.set_content(_content(10, message="a message long enough to wrap at this width " * 3))
    before = sheet.heightForWidth(WIDTH)
    font = sheet.font()
    font.setPointSizeF(font.pointSizeF() * 2)
    sheet.setFont(font)
    assert sheet.heightForWidth(WIDTH) > before
    assert all(item.font.pointSizeF() == font.pointSizeF() for item in _items(sheet) if item.font is not None)
