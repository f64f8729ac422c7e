"""What an agent panel shows of a turn (its status line, public message, the observation's pictures under their
captions), painted by one widget, :class:`TurnSheet`, from a layout kept per content and width.

A panel made of a label per line and a widget per picture cost a step more in Qt's widget machinery (every
label measured at every width the layouts tried, each laid out, moved and repainted on its own) than in
drawing: about 0.09 of blocks' step against its 3D redraw, where painting the panels whole costs 0.03. The
sheet lays its texts out once per text and width (``QStaticText``, whose glyphs are kept) and its pictures by
arithmetic, keeps each turn's layout (stepping back and forth lays nothing out again) and repaints only the
places whose drawing changed. It is still a widget in the panel's layout, with a height for each width.

A picture is drawn smoothly scaled to the sheet's width (never blown up past ``MAX_UPSCALE``, nor wider than
the grid allows), centred; the pictures of a role that did not act at the turn are dimmed. Hovering a picture
tells what it is (as sent, checked against its sha256, or drawn only for the researcher), hovering a
shortened message shows it whole, and the context menu copies the message or the picture under the mouse.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QCursor,
    QFont,
    QGuiApplication,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPixmap,
    QPixmapCache,
    QRegion,
    QResizeEvent,
    QStaticText,
    QTransform,
)
from PySide6.QtWidgets import QMenu, QSizePolicy, QWidget

from simlab.gui.dialogue import MUTED_COLOUR

GAP = 2  # pixels between the lines of a panel: panels sit side by side in a dock, every line of chrome is a
# line of picture less
MAX_UPSCALE = 1.25  # never blow a picture up by more than this: beyond it the pixels show
DIMMED_OPACITY = 0.4  # the pictures of a role that did not act at the turn (its last observation's)
SCALED_CACHE_KB = 64 * 1024  # Qt's pixmap cache, least recently used first out: a few hundred panel pictures
TEXTS_KEPT = 4096  # texts laid out (per text, width and font) kept; past them it starts again
LAYOUTS_KEPT = 512  # a sheet's layouts kept (per content and width); past them it starts again
MIN_SHEET_WIDTH = 120  # what a sheet asks of its panel at least


def scaled_to_width(pixmap: QPixmap, width: int, dimmed_over: str = "") -> QPixmap:
    """``pixmap`` smoothly scaled to ``width`` pixels, kept in Qt's pixmap cache: stepping back and forth shows
    the same pictures at the same sizes, and scaling one smoothly costs several milliseconds. ``dimmed_over`` a
    colour: the picture dimmed (``DIMMED_OPACITY``) over that background.

    A dimmed picture is blended here once, not drawn with the painter's opacity at each paint: a translucent
    picture took six times as long to draw as an opaque one, and Qt's raster engine blends one drawn with an
    opacity through a region of several rectangles a unit apart from one drawn through a single rectangle (a
    part of a panel repainted showed other pixels than the panel painted whole)."""
    key = f"simlab-scaled:{pixmap.cacheKey()}:{width}:{dimmed_over}"
    scaled = QPixmap()
    if not QPixmapCache.find(key, scaled):
        scaled = pixmap.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)
        if dimmed_over:
            scaled = _dimmed(scaled, QColor(dimmed_over))
        QPixmapCache.setCacheLimit(max(QPixmapCache.cacheLimit(), SCALED_CACHE_KB))
        QPixmapCache.insert(key, scaled)
    return scaled


def _dimmed(pixmap: QPixmap, background: QColor) -> QPixmap:
    """``pixmap`` drawn at ``DIMMED_OPACITY`` over ``background``: an opaque picture."""
    out = QPixmap(pixmap.size())
    out.fill(background)
    painter = QPainter(out)
    painter.setOpacity(DIMMED_OPACITY)
    painter.drawPixmap(0, 0, pixmap)
    painter.end()
    return out


def picture_width(pixmap: QPixmap, width: int, max_width: int | None = None, max_height: int | None = None) -> int:
    """How wide ``pixmap`` is drawn in ``width`` pixels: as wide as they allow, but at most ``MAX_UPSCALE`` its
    own width, ``max_width`` and as wide as ``max_height`` pixels of height allow (at least 1)."""
    widest = min(width, round(pixmap.width() * MAX_UPSCALE))
    if max_height is not None:
        widest = min(widest, max_height * pixmap.width() // max(1, pixmap.height()))
    if max_width is not None:
        widest = min(widest, max_width)
    return max(1, widest)


def picture_height(pixmap: QPixmap, width: int) -> int:
    """The height of ``pixmap`` drawn ``width`` pixels wide (its aspect kept)."""
    return round(width * pixmap.height() / max(1, pixmap.width()))


# ---- what a sheet shows -------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class SheetPicture:
    """A picture under its caption (rich text), and what hovering it tells."""

    caption: str
    pixmap: QPixmap
    tip: str = ""


@dataclass(frozen=True, eq=False)
class TurnContent:
    """What a sheet shows: the status line (italic when the role did not act, its pictures dimmed then), the
    message (rich text; empty: none), what hovering it tells, the observation's pictures (None before the role's
    first observation: the pictures' area keeps only its gap) with notes above them (plain, italic; empty: none),
    and what "Copy message" copies."""

    status: str
    acted: bool = True
    message: str = ""
    message_tip: str = ""
    pictures: tuple[SheetPicture, ...] | None = None
    notes: str = ""
    copied: str = ""
    # everything laid out (what is drawn and what hovering tells): equal keys are laid out the same
    key: tuple[object, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        pictures = None
        if self.pictures is not None:
            pictures = tuple((p.caption, p.pixmap.cacheKey(), p.tip) for p in self.pictures)
        key = (self.status, self.acted, self.message, self.message_tip, pictures, self.notes)
        object.__setattr__(self, "key", key)


# ---- its layout (no widget) ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Placed:
    """One thing drawn on a sheet, where: a text (laid out for its width, in its font and colour) or a picture
    (drawn at the place's width); ``look`` is what it draws, so equal looks at equal places paint the same."""

    rect: QRect
    look: tuple[object, ...]
    text: QStaticText | None = None
    font: QFont | None = None
    colour: str = ""
    pixmap: QPixmap | None = None
    dimmed: bool = False
    tip: str = ""

    place: tuple[object, ...] = field(init=False, repr=False)  # where and what it draws, dimmed or not: equal
    # places paint the same pixels

    def __post_init__(self) -> None:
        r = self.rect
        object.__setattr__(self, "place", (r.x(), r.y(), r.width(), r.height(), self.look, self.dimmed))


@dataclass(frozen=True)
class SheetLayout:
    """What a sheet draws at one width, top to bottom, and its height."""

    items: tuple[Placed, ...]
    height: int

    def at(self, point: QPoint) -> Placed | None:
        """The item under ``point`` (None: none)."""
        return next((item for item in self.items if item.rect.contains(point)), None)


_texts: dict[tuple[object, ...], QStaticText] = {}


def laid_text(text: str, rich: bool, width: int, font: QFont) -> QStaticText:
    """``text`` laid out to wrap at ``width`` in ``font``, kept: a step shows the texts of another turn, mostly
    seen before."""
    key = (text, rich, width, font.key())
    laid = _texts.get(key)
    if laid is None:
        if len(_texts) >= TEXTS_KEPT:
            _texts.clear()
        laid = _texts[key] = QStaticText(text)
        laid.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
        laid.setTextWidth(width)
        laid.prepare(QTransform(), font)
    return laid


@dataclass(frozen=True)
class SheetLook:
    """The fonts and colours a sheet draws in."""

    plain: QFont
    italic: QFont
    text: str  # the palette's text colour
    muted: str  # status, captions and notes
    background: str  # the palette's window colour: the sheet fills its area with it
    key: tuple[object, ...] = field(init=False, repr=False)  # all of it, as a key of the layouts kept

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", (self.plain.key(), self.text, self.muted, self.background))


def lay_out(content: TurnContent, width: int, max_width: int | None, look: SheetLook) -> SheetLayout:
    """Where ``content``'s lines and pictures go across ``width`` pixels, pictures at most ``max_width`` wide.
    Each line below the first carries its gap above it, as the widgets of a panel did; before an observation
    the pictures' area is its gap alone."""
    items: list[Placed] = []
    y = GAP

    def text(line: str, rich: bool, font: QFont, colour: str, dimmed: bool = False, tip: str = "") -> None:
        nonlocal y
        laid = laid_text(line, rich, width, font)
        height = math.ceil(laid.size().height())
        rect = QRect(0, y, width, height)
        drawn = ("text", line, font.key(), colour)
        items.append(Placed(rect, drawn, laid, font, colour, dimmed=dimmed, tip=tip))
        y += height

    text(content.status, False, look.plain if content.acted else look.italic, look.muted)
    if content.message:
        y += GAP
        text(content.message, True, look.plain, look.text, tip=content.message_tip)
    y += GAP
    if content.pictures is None:
        return SheetLayout(tuple(items), y)
    dimmed = not content.acted
    first = True
    if content.notes:
        text(content.notes, False, look.italic, look.muted, dimmed)
        first = False
    for picture in content.pictures:
        y += 0 if first else GAP
        text(picture.caption, True, look.plain, look.muted, dimmed, picture.tip)
        y += GAP
        wide = picture_width(picture.pixmap, width, max_width)
        height = picture_height(picture.pixmap, wide)
        rect = QRect((width - wide) // 2, y, wide, height)
        drawn = ("picture", picture.pixmap.cacheKey())
        items.append(Placed(rect, drawn, pixmap=picture.pixmap, dimmed=dimmed, tip=picture.tip))
        y += height
        first = False
    return SheetLayout(tuple(items), y)


def pictures_height(content: TurnContent, width: int) -> int:
    """The height of ``content``'s pictures alone, each drawn as wide as ``width`` allows."""
    pixmaps = [p.pixmap for p in content.pictures or ()]
    return sum(picture_height(pixmap, picture_width(pixmap, width)) for pixmap in pixmaps)


def changed_region(old: SheetLayout, new: SheetLayout) -> QRegion:
    """Where ``new`` draws otherwise than ``old``: the places of the items either draws and the other does not."""
    before = {item.place: item.rect for item in old.items}
    after = {item.place: item.rect for item in new.items}
    region = QRegion()
    for place in before.keys() ^ after.keys():
        region = region.united(before.get(place) or after[place])
    return region


# ---- the widget ---------------------------------------------------------------------------------------------


class TurnSheet(QWidget):
    """Paints a :class:`TurnContent` as :func:`lay_out` places it, with a height for each width."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._content = TurnContent("")
        self._max_width: int | None = None
        self._layouts: dict[tuple[object, ...], SheetLayout] = {}
        self._look: SheetLook | None = None
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        # a resize repaints only what it uncovers: a step's new height is painted by set_content, a width by
        # resizeEvent; and the sheet fills what it paints, so the panel under it is not painted first
        self.setAttribute(Qt.WidgetAttribute.WA_StaticContents)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.setMouseTracking(True)  # the tooltip follows the mouse: see mouseMoveEvent

    @property
    def content(self) -> TurnContent:
        return self._content

    @property
    def max_width(self) -> int | None:
        """How wide pictures are drawn at most (None: as wide as the sheet)."""
        return self._max_width

    def set_content(self, content: TurnContent) -> None:
        """Show ``content``: only the places whose drawing changed are repainted (nothing when it draws the same),
        and the layouts above are asked for the sheet's heights again."""
        if content.key == self._content.key:
            self._content = content  # the same layout (what "Copy message" copies may differ)
            return
        old = self.layout_at(self.width())
        self._content = content
        self._changed(old)

    def set_max_width(self, width: int | None) -> None:
        """Draw pictures at most ``width`` pixels wide (None: as wide as the sheet)."""
        if width != self._max_width:
            old = self.layout_at(self.width())
            self._max_width = width
            self._changed(old)

    def _changed(self, old: SheetLayout) -> None:
        new = self.layout_at(self.width())
        self.update(changed_region(old, new))
        self.updateGeometry()  # heights at other widths may differ though this one's does not
        if self.underMouse():  # a step under a resting mouse: the tooltip of what is there now
            self._tip_at(self.mapFromGlobal(QCursor.pos()))

    def layout_at(self, width: int) -> SheetLayout:
        """What the sheet draws at ``width``, kept per content and width."""
        look = self._look_now()
        key = (self._content.key, width, self._max_width, look.key)
        laid = self._layouts.get(key)
        if laid is None:
            if len(self._layouts) >= LAYOUTS_KEPT:
                self._layouts.clear()
            laid = self._layouts[key] = lay_out(self._content, max(1, width), self._max_width, look)
        return laid

    def _look_now(self) -> SheetLook:
        if self._look is None:
            italic = QFont(self.font())
            italic.setItalic(True)
            palette = self.palette()
            text = palette.color(QPalette.ColorRole.WindowText).name()
            window = palette.color(QPalette.ColorRole.Window).name()
            self._look = SheetLook(self.font(), italic, text, MUTED_COLOUR, window)
        return self._look

    def changeEvent(self, event: QEvent) -> None:
        """A new font or palette: laid out and painted afresh."""
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.PaletteChange, QEvent.Type.StyleChange):
            self._look = None
            self._layouts.clear()
            self.updateGeometry()
            self.update()
        super().changeEvent(event)

    def pictures_height(self, width: int) -> int:
        """The height of the pictures alone, each drawn as wide as ``width`` allows (no maximum width)."""
        return pictures_height(self._content, width)

    def picture_widths(self) -> list[int]:
        """How wide each picture is drawn now, in pixels."""
        return [item.rect.width() for item in self.layout_at(self.width()).items if item.pixmap is not None]

    # ---- Qt -----------------------------------------------------------------------------------------------
    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self.layout_at(width).height

    def sizeHint(self) -> QSize:
        return QSize(320, self.heightForWidth(320))

    def minimumSizeHint(self) -> QSize:
        """Narrow enough for any panel, with no height of its own: its height follows its width (the grid keeps
        each row as tall as its panels need at theirs). A height at the narrowest width, texts wrapped into
        many lines, made the panels' area taller than its rows and changed it at steps that changed no row."""
        return QSize(MIN_SHEET_WIDTH, 0)

    def resizeEvent(self, event: QResizeEvent) -> None:
        if event.size().width() != event.oldSize().width():
            self.update()  # wrapped and centred anew
        super().resizeEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        region = event.region()
        ratio = self.devicePixelRatioF()
        background = self._look_now().background
        painter.fillRect(event.rect(), QColor(background))
        for item in self.layout_at(self.width()).items:
            if not region.intersects(item.rect):
                continue
            if item.text is not None and item.font is not None:
                painter.setOpacity(DIMMED_OPACITY if item.dimmed else 1.0)  # in the pen's colour: any clip alike
                painter.setFont(item.font)
                painter.setPen(QColor(item.colour))
                painter.drawStaticText(QPointF(item.rect.topLeft()), item.text)
            elif item.pixmap is not None:
                dimmed_over = background if item.dimmed else ""
                scaled = scaled_to_width(item.pixmap, round(item.rect.width() * ratio), dimmed_over)
                scaled.setDevicePixelRatio(ratio)
                painter.setOpacity(1.0)
                painter.drawPixmap(item.rect.topLeft(), scaled)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        """Hovering tells what is under the mouse (Qt shows a widget's tooltip): set here, where the mouse moves,
        not in an override of ``event``, which every event of a step would have gone through in Python."""
        self._tip_at(event.position().toPoint())
        super().mouseMoveEvent(event)

    def _tip_at(self, point: QPoint) -> None:
        item = self.layout_at(self.width()).at(point)
        tip = item.tip if item is not None else ""
        if tip != self.toolTip():
            self.setToolTip(tip)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = self.context_menu(event.pos())
        if not menu.isEmpty():
            menu.exec(event.globalPos())

    def context_menu(self, point: QPoint) -> QMenu:
        """The actions at ``point``: copy the message, and the picture there (as the agent was given it, not
        scaled nor dimmed)."""
        menu = QMenu(self)
        copied = self._content.copied
        if copied:
            menu.addAction("Copy message", lambda: QGuiApplication.clipboard().setText(copied))
        item = self.layout_at(self.width()).at(point)
        if item is not None and item.pixmap is not None:
            pixmap = item.pixmap
            menu.addAction("Copy picture", lambda: QGuiApplication.clipboard().setPixmap(pixmap))
        return menu
