"""What each agent was given and what it did, at the playback's turn.

:class:`AgentPanels` holds one :class:`AgentPanel` per role of the episode (in its family's order, in its
palette's colour) side by side in a grid that follows the dock's size (:func:`grid_columns`: the fewest
columns at which every panel fits, at most as many as leave each ``MIN_PANEL_WIDTH``; when they still do not
fit, the pictures shrink so every row does, never narrower than ``MIN_PICTURE_WIDTH``: below that the dock
scrolls, each panel no taller than the dock), and redraws them when the
:class:`~simlab.gui.playback.PlaybackModel` turn changes. A panel shows the role's observation pictures, its
public message and action at this turn in bold, and, collapsed by default, the observation text, the private
reasoning and the conversation its model was sent (every call of the shown turn, re-asks included, as
:mod:`simlab.render.model_calls` draws them; a role that called no model says so). A role that did not act at
this turn gets a grey note and its last observation, dimmed. The status, message and pictures are painted by one
:class:`~simlab.gui.turn_sheet.TurnSheet` (hovering tells more, its menu copies the message or a picture); the
sections are widgets.

The pictures have two modes, switched above the panels (and remembered in the settings given):

* **as sent** (the default): exactly the pictures the recorded observation gave the role, re-drawn by the
  family's ``observation_images``, in the order its model got them, nothing drawn on them; a caption says
  when a picture is byte for byte the PNG a model call recorded (its sha256) or differs from it, and a panel
  whose observation sent none says "No pictures were sent";
* **annotated**: the family's researcher pictures too (named objects outlined, the right answer, pictures
  for a text-only condition), each marked NOT SENT on the picture itself
  (:func:`~simlab.render.episode_pictures.agent_pictures` composes both). While a person plays, the panels
  stay as sent.

Pictures are cached per (episode, role, turn, mode), so stepping is cheap. :meth:`AgentPanels.grab_whole`
pictures every panel, scrolled out of view or not.
"""

from __future__ import annotations

import bisect
import html
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from PIL import Image
from PySide6.QtCore import QEvent, QSettings, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QImage, QPainter, QPaintEvent, QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QButtonGroup,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.core.family import RGB, FamilyViews, hex_colour
from simlab.gui import frame_thread
from simlab.gui.dialogue import ERROR_COLOUR, MUTED_COLOUR, OK_COLOUR, pil_to_qimage
from simlab.gui.playback import PlaybackModel
from simlab.gui.scroll_bars import KeptScrollBar
from simlab.gui.turn_sheet import (
    GAP,
    SheetPicture,
    TurnContent,
    TurnSheet,
    picture_height,
    picture_width,
    scaled_to_width,
)
from simlab.render.episode_pictures import NOT_SENT_RGB, AgentPicture, AgentPictures, agent_pictures, views_of
from simlab.render.formatting import episode_colours, episode_roles, event_line
from simlab.render.model_calls import ModelCall, calls_html, model_calls

AS_SENT, ANNOTATED = "as sent", "annotated"
MODES = (AS_SENT, ANNOTATED)
MODE_KEY = "agents/pictures"  # where the chosen mode is remembered
MODE_HELP = {  # (beside the switch, its tooltip)
    AS_SENT: (
        "exactly what each agent was given",
        "The recorded observation's pictures as its model got them, nothing drawn on them",
    ),
    ANNOTATED: (
        "with what was drawn for you, marked NOT SENT",
        "Named objects outlined, right answers, pictures for text-only conditions: none of them sent to the agent",
    ),
}
NO_PICTURES = "No pictures were sent"
NOT_SENT_COLOUR = hex_colour(NOT_SENT_RGB)
MODE_COLOUR = {AS_SENT: "#3b4048", ANNOTATED: NOT_SENT_COLOUR}  # a checked switch's: annotated as its marks

MIN_PICTURE_WIDTH = 240  # narrower, a wall's letters and a board's numbers cannot be read: the dock scrolls
MIN_PANEL_WIDTH = MIN_PICTURE_WIDTH + 30  # such a picture, the panel's margins and its coloured edge
GRID_SPACING = 6
ROW_SLACK = 120  # px a row keeps when a turn needs less (a line or two of message): see AgentPanels._steady
PictureKey = tuple[str, str, int, str, int]  # episode, role, the observation's turn, mode, playback turn or -1
MEASURES_KEPT = 4096  # a label's measures kept (per text and width); past them it starts again
MEASURES_CHANGE = (QEvent.Type.FontChange, QEvent.Type.StyleChange, QEvent.Type.ContentsRectChange)
MESSAGE_CHARS = 240  # a panel shows this much of a message; the dialogue and the tooltip show all of it
Measure = TypeVar("Measure", int, QSize)


QWIDGETSIZE_MAX = (1 << 24) - 1  # Qt's "no maximum"


def set_collapsed(widget: QWidget, collapsed: bool) -> None:
    """Collapse ``widget`` to no height, or give it back its height. A section that comes and goes with the turn
    is collapsed, not hidden: showing a widget makes Qt activate every layout above it at once (a panel's and
    the panels' grid: about 5 ms a widget) and sends show events to all its children, where a collapse asks only
    for the one layout pass the step's new texts ask for anyway, and repaints only what moved. A collapsed
    widget takes no room but the layout's spacing around it, so the layouts it sits in have none: each section
    carries its gap above it inside itself (``GAP``), and a collapsed one loses it with its height."""
    height = 0 if collapsed else QWIDGETSIZE_MAX
    if widget.maximumHeight() == height:
        return  # as it was (most sections at most steps): nothing to set
    widget.setMaximumHeight(height)
    if isinstance(widget, Collapsible):  # a collapsed section's toggle, out of sight, takes no keyboard focus
        widget.button.setFocusPolicy(Qt.FocusPolicy.NoFocus if collapsed else Qt.FocusPolicy.TabFocus)
        if collapsed and widget.button.hasFocus():
            widget.button.clearFocus()


def pil_to_pixmap(image: Image.Image) -> QPixmap:
    """A QPixmap holding a copy of ``image``."""
    return QPixmap.fromImage(pil_to_qimage(image))


def grid_columns(heights: Sequence[Callable[[int], int]], width: int, height: int, min_width: int) -> int:
    """How many columns to lay panels out in: the fewest at which the grid fits ``height`` (``heights`` give
    each panel's height at a column width), else the most that leave every column ``min_width``."""
    most = max(1, min(len(heights), (width + GRID_SPACING) // (min_width + GRID_SPACING)))
    for columns in range(1, most + 1):
        if grid_height(heights, columns, width) <= height:
            return columns
    return most


def grid_height(heights: Sequence[Callable[[int], int]], columns: int, width: int) -> int:
    """The height of panels laid out in ``columns`` columns across ``width`` (rows as tall as their tallest)."""
    cell = column_width(columns, width)
    rows = [heights[k : k + columns] for k in range(0, len(heights), columns)]
    return sum(max(h(cell) for h in row) for row in rows) + GRID_SPACING * max(0, len(rows) - 1)


def column_width(columns: int, width: int) -> int:
    return max(1, (width - GRID_SPACING * (columns - 1)) // columns)


# ---- what a role saw and did (pure, no widgets) -------------------------------------------------------------


@dataclass
class RoleTurn:
    """What one role's panel shows at one turn."""

    role: str
    turn: int
    observation: Event | None = None  # the latest observation at or before ``turn``
    said: list[str] = field(default_factory=list)  # public messages at ``turn``
    did: list[str] = field(default_factory=list)  # actions at ``turn`` (compact text)
    outcomes: list[tuple[bool, str]] = field(default_factory=list)  # (ok, text) of results / protocol errors
    reasoning: list[str] = field(default_factory=list)  # private reasoning at the shown turn
    calls: list[ModelCall] = field(default_factory=list)  # the role's model calls at the shown turn
    calls_model: bool = False  # the role called a model somewhere in the episode

    @property
    def shown_turn(self) -> int | None:
        return self.observation.turn if self.observation is not None else None

    @property
    def acted(self) -> bool:
        return self.shown_turn == self.turn or bool(self.said or self.did)


class EpisodeIndex:
    """Per-role lookups over an episode's events, built once per episode; what a role saw and did at a turn is
    worded once (a step back and forth words no event again)."""

    def __init__(self, episode: Episode) -> None:
        self.episode = episode
        self.observations: dict[str, list[Event]] = {}
        for event in episode.events:
            if event.kind == "observation" and event.role:
                self.observations.setdefault(event.role, []).append(event)
        self._obs_turns = {role: [e.turn for e in evs] for role, evs in self.observations.items()}
        self.by_turn: dict[int, list[Event]] = {}
        for event in episode.events:
            self.by_turn.setdefault(event.turn, []).append(event)
        self.calls: dict[tuple[str, int | None], list[ModelCall]] = {}
        for call in model_calls(episode.raw):
            self.calls.setdefault((call.role, call.turn), []).append(call)
        self.model_roles = {role for role, _turn in self.calls}
        self._role_turns: dict[tuple[str, int, bool], RoleTurn] = {}

    def roles(self) -> list[str]:
        """The episode's roles in its family's order (the agents it recorded, else the observed roles)."""
        return episode_roles(self.episode)

    def role_turn(self, role: str, turn: int, as_told: bool = False) -> RoleTurn:
        """What ``role`` was given and did at ``turn``; ``as_told`` words results only as the engine tells the
        roles (while a person plays: no mistake judged against the hidden target). Worded once per episode and
        shared: callers do not change it."""
        key = (role, turn, as_told)
        if key not in self._role_turns:
            self._role_turns[key] = self._word_role_turn(role, turn, as_told)
        return self._role_turns[key]

    def _word_role_turn(self, role: str, turn: int, as_told: bool) -> RoleTurn:
        out = RoleTurn(role, turn)
        turns = self._obs_turns.get(role, [])
        k = bisect.bisect_right(turns, turn) - 1
        out.observation = self.observations[role][k] if k >= 0 else None
        events = self.by_turn.get(turn, [])
        for event in events:
            line = event_line(event, as_told) if event.role == role else None
            if line is None:
                continue
            if line.kind == "message":
                out.said.append(line.text)
            elif line.kind == "action":
                out.did.append(line.text)
            elif line.kind == "protocol_error":
                out.outcomes.append((False, line.plain()))
        if out.did:
            out.outcomes.extend(_results(events, as_told))
        shown = out.shown_turn
        out.calls = self.calls.get((role, shown), []) if shown is not None else []
        out.calls_model = role in self.model_roles
        if shown is not None:
            out.reasoning = [
                str(e.data.get("text", ""))
                for e in self.by_turn.get(shown, [])
                if e.kind == "reasoning" and e.role == role
            ]
        return out


def _results(events: list[Event], as_told: bool = False) -> list[tuple[bool, str]]:
    """(ok, the engine's words) of the turn's results, as the one formatter words them."""
    lines = [event_line(e, as_told) for e in events if e.kind == "result"]
    return [(line.tone == "ok", line.plain()) for line in lines if line is not None]


# ---- widgets ------------------------------------------------------------------------------------------------


class ImageView(QWidget):
    """A picture scaled smoothly to the widget's width (keeping its aspect), centred; height follows width, up
    to ``max_height`` and ``max_width`` when set (the grid narrows pictures so every panel fits the dock)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._pixmap = QPixmap()
        self._scaled = QPixmap()
        self._max_height: int | None = None
        self._max_width: int | None = None
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def pixmap(self) -> QPixmap:
        return self._pixmap

    def set_pixmap(self, pixmap: QPixmap) -> None:
        if pixmap.cacheKey() == self._pixmap.cacheKey():
            return
        self._pixmap = pixmap
        self._redraw()

    def _redraw(self) -> None:
        """Scale the picture again on the next paint, and ask the layout for the new size."""
        self._scaled = QPixmap()
        self.updateGeometry()
        self.update()

    def set_max_height(self, height: int | None) -> None:
        """Keep the picture at most ``height`` pixels tall (None: as tall as the width makes it)."""
        if height != self._max_height:
            drawn = self._target_width(self.width())
            self._max_height = height
            self._resized(drawn)

    def _resized(self, drawn: int) -> None:
        """After a bound changed: repaint only when the picture is drawn at another width than ``drawn`` (the
        grid lifts the bounds and fits them again on every re-layout, mostly to what they were)."""
        if self._target_width(self.width()) != drawn:
            self._redraw()
        else:
            self.updateGeometry()  # the height for other widths may differ all the same

    def shown_width(self) -> int:
        """How wide the picture is drawn now, in pixels (0 without one)."""
        return 0 if self._pixmap.isNull() else self._target_width(self.width())

    def set_max_width(self, width: int | None) -> None:
        """Draw the picture at most ``width`` pixels wide (None: as wide as the widget allows)."""
        if width != self._max_width:
            drawn = self._target_width(self.width())
            self._max_width = width
            self._resized(drawn)

    def _target_width(self, width: int) -> int:
        return picture_width(self._pixmap, width, self._max_width, self._max_height)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        if self._pixmap.isNull():
            return 0
        return picture_height(self._pixmap, self._target_width(width))

    def sizeHint(self) -> QSize:
        if self._pixmap.isNull():
            return QSize(0, 0)
        return QSize(320, self.heightForWidth(320))

    def minimumSizeHint(self) -> QSize:
        return QSize(120, self.heightForWidth(120) if not self._pixmap.isNull() else 0)

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._scaled = QPixmap()
        super().resizeEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        if self._pixmap.isNull():
            return
        width = self._target_width(self.width())
        ratio = self.devicePixelRatioF()
        if self._scaled.isNull() or self._scaled.width() != round(width * ratio):
            self._scaled = scaled_to_width(self._pixmap, round(width * ratio))
            self._scaled.setDevicePixelRatio(ratio)
        painter = QPainter(self)
        painter.drawPixmap((self.width() - width) // 2, 0, self._scaled)


def _shortened(text: str) -> str:
    """``text`` cut to ``MESSAGE_CHARS`` (a report of many objects would make its panel a column of JSON)."""
    if len(text) <= MESSAGE_CHARS:
        return text
    return text[:MESSAGE_CHARS].rstrip() + " \u2026 (all of it in the Dialogue)"


class SettledLabel(QLabel):
    """A word-wrapped rich-text label that a step paints once. A QLabel lays its rich text out at every width it
    is measured at (a layout asking its height for a width) and again at its own when it paints, and each time
    asks for a repaint of itself, though what it shows has not changed: after every step the layouts' measuring
    (handled after the step's frame) made a second frame of the same pixels.
    Those requests are dropped; a paint of part of what can be seen of the label's text keeps its own (the rest
    may need the new layout). A label cut by the dock's edge, or whose new text repaints its text but not its
    padding, is painted whole as far as its text can be seen: it drops them too."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self._text = text
        self._look: tuple[object, ...] | None = None  # what but the text its measures follow; None: to be asked
        self._heights: dict[tuple[object, ...], int] = {}
        self._hints: dict[tuple[object, ...], QSize] = {}

    def setText(self, text: str) -> None:
        self._text = text  # kept: asking Qt for it converts it at each of a step's some 60 measures
        super().setText(text)

    def clear(self) -> None:
        self._text = ""
        super().clear()

    def setWordWrap(self, on: bool) -> None:
        self._look = None
        super().setWordWrap(on)

    def setTextFormat(self, text_format: Qt.TextFormat) -> None:
        self._look = None
        super().setTextFormat(text_format)

    def setIndent(self, indent: int) -> None:
        self._look = None
        super().setIndent(indent)

    def setMargin(self, margin: int) -> None:
        self._look = None
        super().setMargin(margin)

    def heightForWidth(self, width: int) -> int:
        return self._measure(self._heights, width, lambda: super(SettledLabel, self).heightForWidth(width))

    def sizeHint(self) -> QSize:
        return QSize(self._measure(self._hints, "size", super().sizeHint))

    def minimumSizeHint(self) -> QSize:
        return QSize(self._measure(self._hints, "minimum", super().minimumSizeHint))

    def _measure(
        self, kept: dict[tuple[object, ...], Measure], what: object, measure: Callable[[], Measure]
    ) -> Measure:
        """Qt's measure ``what`` of the label as it is now, kept per text: a step's layouts ask a label's height
        at the same widths again and again (some 60 times a step), and a QLabel lays its rich text out afresh at
        each, and whenever its text changed, though stepping back and forth shows the same texts again."""
        if self._look is None:
            self._look = (self.wordWrap(), self.textFormat(), self.indent(), self.margin())
        key = (what, self._text, self._look)
        if key not in kept:
            if len(kept) >= MEASURES_KEPT:
                kept.clear()
            with _no_repaint(self):
                kept[key] = measure()
        return kept[key]

    def changeEvent(self, event: QEvent) -> None:
        """Measures taken in another font, style or margins are forgotten."""
        if event.type() in MEASURES_CHANGE:
            self._heights.clear()
            self._hints.clear()
        super().changeEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        seen = self.visibleRegion().intersected(self.contentsRect())  # where the label's text is drawn
        with _no_repaint(self, seen.subtracted(event.region()).isEmpty()):
            super().paintEvent(event)


@contextmanager
def _no_repaint(widget: QWidget, drop: bool = True) -> Iterator[None]:
    """``widget``'s update() calls do nothing inside (when ``drop``). The attribute, unlike setUpdatesEnabled,
    asks for no repaint when it is set back."""
    if not drop or widget.testAttribute(Qt.WidgetAttribute.WA_UpdatesDisabled):
        yield
        return
    widget.setAttribute(Qt.WidgetAttribute.WA_UpdatesDisabled, True)
    try:
        yield
    finally:
        widget.setAttribute(Qt.WidgetAttribute.WA_UpdatesDisabled, False)


class Collapsible(QWidget):
    """A header arrow button that shows or hides a plain-text body (collapsed by default)."""

    def __init__(self, title: str, parent: QWidget | None = None, monospace: bool = False, rich: bool = False) -> None:
        super().__init__(parent)
        self.button = QToolButton(self)
        self.button.setText(title)
        self.button.setCheckable(True)
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.button.setArrowType(Qt.ArrowType.RightArrow)
        self.button.setAutoRaise(True)
        self.button.setStyleSheet("QToolButton { padding: 0px; }")
        self.button.toggled.connect(self.set_expanded)
        self.body = QLabel(self)
        self.body.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
        self.body.setWordWrap(True)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.body.setContentsMargins(18, 2, 4, 4)
        if monospace:
            self.body.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.body.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, GAP, 0, 0)  # the gap above it in its panel: see set_collapsed
        layout.setSpacing(0)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.body)

    @property
    def expanded(self) -> bool:
        return self.button.isChecked()

    def set_expanded(self, expanded: bool) -> None:
        """Open or close the body (nothing to do when it is so already: a step closes every panel's disabled
        sections again, and each call to the button crosses into Qt)."""
        if self.button.isChecked() != expanded:
            self.button.setChecked(expanded)
            return
        if self.body.isHidden() != expanded:
            return
        self.button.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        self.body.setVisible(expanded)

    def set_text(self, text: str) -> None:
        self.body.setText(text)

    def set_title(self, title: str, enabled: bool = True) -> None:
        """Rename the header; a disabled one cannot be opened (there is nothing to show)."""
        self.button.setText(title)
        self.button.setEnabled(enabled)
        if not enabled:
            self.set_expanded(False)


@dataclass(frozen=True)
class PanelPictures:
    """One observation's pictures as a panel shows them: what :func:`agent_pictures` found, a pixmap each."""

    found: AgentPictures
    pixmaps: tuple[QPixmap, ...]


@dataclass(frozen=True)
class DrawnPictures:
    """What :func:`draw_pictures` drew, before pixmaps are made of its images (on the GUI thread only)."""

    found: AgentPictures
    images: tuple[QImage, ...]


def draw_pictures(
    views: FamilyViews | None, info: RoleTurn, episode: Episode, turn: int, annotated: bool
) -> DrawnPictures:
    """The pictures of the role's shown observation at the playback's ``turn``, as QImages: no widget or pixmap
    is touched, so it may run on the frame thread (for a family whose images are drawn without VTK)."""
    assert info.observation is not None
    found = agent_pictures(views, info.observation, episode, turn, annotated, _digests(info.calls))
    return DrawnPictures(found, tuple(pil_to_qimage(picture.image) for picture in found.pictures))


def _caption(picture: AgentPicture) -> tuple[str, str, str]:
    """What a picture's caption says after its name (what the picture is), in which colour, and its tooltip."""
    if not picture.sent:
        return "NOT SENT", NOT_SENT_COLOUR, "Drawn for you: the agent was not sent this picture"
    if picture.verified is None:
        return "", MUTED_COLOUR, "The picture the agent was sent, re-drawn from the recording"
    if picture.verified:
        return "as sent (sha256 checked)", MUTED_COLOUR, "Byte for byte the PNG the model call recorded (its sha256)"
    why = "Re-drawn here, this picture is not byte for byte the PNG the model call recorded (its sha256 differs)"
    return "differs from the PNG sent", ERROR_COLOUR, why


def _digests(calls: Sequence[ModelCall]) -> dict[str, str]:
    """Picture name -> sha256 of the PNG the role's model was sent, in the order it got them."""
    return {ref.name: ref.sha256 for call in calls for m in call.messages for ref in m.images if ref.sha256}


class AgentPanel(QFrame):
    """One role: title, then what it saw and did at the turn (status, message and action, the observation's
    pictures under their captions: a :class:`~simlab.gui.turn_sheet.TurnSheet`), then its (collapsed)
    observation text, reasoning and the conversation its model was sent."""

    sectionToggled = Signal()  # a section opened or closed: the panel's height changed

    def __init__(
        self,
        role: str,
        title: str,
        colour: str,
        parent: QWidget | None = None,
        colours: Mapping[str, RGB] | None = None,
    ) -> None:
        super().__init__(parent)
        self.role = role
        self._colours = dict(colours or {})
        self._shown_turn: int | None = None
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName("agentPanel")
        self.setStyleSheet(f"#agentPanel {{ border: 1px solid #d5d9df; border-left: 4px solid {colour}; }}")
        self.title = SettledLabel(
            f'<span style="color:{colour}; font-size:11pt; font-weight:700">{html.escape(title)}</span>'
        )
        self.title.setWordWrap(True)
        self.sheet = TurnSheet(self)
        self._turn: WordedTurn | None = None
        self.observation_text = Collapsible("Observation text", self, monospace=True)
        self.reasoning = Collapsible("Private reasoning", self)
        self.reasoning.body.setStyleSheet(f"color: {MUTED_COLOUR}; font-style: italic")
        self.conversation = Collapsible("Conversation sent", self, rich=True)
        self.conversation.setToolTip("The messages this role's model was sent at the shown turn, and its replies")
        self._calls: list[ModelCall] = []
        layout = self._layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.setSpacing(0)  # each widget below the title carries its GAP above it: see set_collapsed
        sections = self.sections = (self.observation_text, self.reasoning, self.conversation)
        for widget in (self.title, self.sheet, *sections):
            layout.addWidget(widget)
        for collapsing in sections:  # they come and go with the turn: collapsed until needed
            set_collapsed(collapsing, True)
        layout.addStretch(1)  # a panel beside a taller one keeps its lines together at the top
        for section in sections:
            section.button.toggled.connect(lambda _open: self.sectionToggled.emit())

    # ---- for tests and callers ----------------------------------------------------------------------------
    @property
    def shown_turn(self) -> int | None:
        """The turn whose observation is displayed (None before the role's first observation)."""
        return self._shown_turn

    @property
    def acted(self) -> bool:
        """Whether the role acted at the turn shown (else its status is in italics, its pictures dimmed)."""
        return self.sheet.content.acted

    def status_text(self) -> str:
        """The status line: the turn, or that the role did not act or has observed nothing yet."""
        return self.sheet.content.status

    def message_text(self) -> str:
        """The role's public message(s) and action(s) at the current turn, as plain text."""
        return self._turn.message if self._turn is not None else ""

    def notes(self) -> str:
        """The note above the pictures: that none were sent, or which cannot be re-drawn ("" when none)."""
        return self.sheet.content.notes if self.sheet.content.pictures is not None else ""

    def pixmaps(self) -> list[QPixmap]:
        """The observation pictures currently shown."""
        return [picture.pixmap for picture in self.sheet.content.pictures or ()]

    def picture_widths(self) -> list[int]:
        """How wide each picture is drawn now, in pixels."""
        return self.sheet.picture_widths()

    def pictures(self) -> list[AgentPicture]:
        """The pictures currently shown: names, images (as drawn, NOT SENT marks included), sent or not."""
        turn = self._turn
        return list(turn.shown.found.pictures) if turn is not None and turn.shown is not None else []

    def captions(self) -> list[str]:
        """The captions of the pictures shown, as plain text."""
        return list(self._turn.captions) if self._turn is not None else []

    def calls(self) -> list[ModelCall]:
        """The model calls whose conversation is shown (the role's, at the shown turn)."""
        return list(self._calls)

    @property
    def pictures_width(self) -> int | None:
        """How wide the pictures are drawn at most (None: as wide as the panel)."""
        return self.sheet.max_width

    def set_pictures_width(self, width: int | None) -> None:
        """Draw the pictures at most ``width`` pixels wide (None: as wide as the panel), whatever pictures
        come next."""
        self.sheet.set_max_width(width)
        # layouts cache heights for widths and refresh them only on the next event loop pass: the grid asks now
        self._layout.invalidate()

    def fit_pictures(self, width: int, height: int) -> None:
        """Narrow the pictures so the panel is at most ``height`` tall at ``width``, but never below
        ``MIN_PICTURE_WIDTH`` (past that they cannot be read: the dock scrolls instead)."""
        self.set_pictures_width(None)
        margins = self._layout.contentsMargins()
        inner = width - margins.left() - margins.right()
        budget = height - (self.heightForWidth(width) - self.sheet.pictures_height(inner))
        low, high = min(MIN_PICTURE_WIDTH, inner), inner
        best = low
        while low <= high:  # the widest pictures that fit: their height grows with their width
            middle = (low + high) // 2
            if self.sheet.pictures_height(middle) <= budget:
                best, low = middle, middle + 1
            else:
                high = middle - 1
        self.set_pictures_width(best if best < inner else None)

    # ---- drawing ------------------------------------------------------------------------------------------
    def show_turn(self, info: RoleTurn, pictures: PanelPictures | None) -> None:
        """Display ``info`` (what the role saw and did) with its observation's ``pictures``; the sections it
        leaves empty are collapsed."""
        self._shown_turn = info.shown_turn
        self._turn = word_turn(info, pictures)
        self.sheet.set_content(self._turn.content)
        observation = info.observation
        self.observation_text.set_text(str(observation.data.get("text", "")) if observation is not None else "")
        set_collapsed(self.observation_text, observation is None)
        self.reasoning.set_text("\n\n".join(info.reasoning))
        set_collapsed(self.reasoning, not info.reasoning)
        self._set_conversation(info)

    def lay_out_now(self) -> None:
        """Lay the panel's sections out for what they show now, innermost first, instead of a pass of the event
        loop per level (Qt handles a layout request posted while it handles posted events a pass later): the
        step's frame then shows the turn's layout, not pictures cut short and sections where the last turn's
        message left them."""
        for layout in (*(section.layout() for section in self.sections), self._layout):
            if layout is not None:
                layout.activate()

    def _set_conversation(self, info: RoleTurn) -> None:
        """The exact messages of the role's model calls at the shown turn, or a plain word that there were none."""
        self._calls = info.calls
        if info.calls:
            calls = f" ({len(info.calls)} calls)" if len(info.calls) > 1 else ""  # a re-ask is a second call
            self.conversation.set_title(f"Conversation sent{calls}")
            self.conversation.set_text(calls_html(info.calls, self._colours, full_system=True))
        elif info.calls_model:
            self.conversation.set_title(f"No model call at turn {info.shown_turn}", enabled=False)
        else:
            self.conversation.set_title("No model calls", enabled=False)  # scripted, oracle, a person...
        set_collapsed(self.conversation, info.observation is None)


@dataclass(frozen=True)
class WordedTurn:
    """What a panel shows of one role's turn: the sheet's content, the pictures ``shown`` and, as plain text, the
    role's message and action and the pictures' captions."""

    shown: PanelPictures | None
    content: TurnContent
    message: str
    captions: tuple[str, ...]


def word_turn(info: RoleTurn, shown: PanelPictures | None) -> WordedTurn:
    """What the sheet shows of ``info``: status, message and action in bold with the engine's answers, and
    ``shown``'s pictures under their captions."""
    message = "\n".join([f"\u201c{text}\u201d" for text in info.said] + info.did)
    outcomes = tuple(f"\u2192 {text}" for _ok, text in info.outcomes)
    lines = [f"<b>\u201c{html.escape(_shortened(t))}\u201d</b>" for t in info.said]
    lines += [f"<b><code>{html.escape(_shortened(t))}</code></b>" for t in info.did]
    for ok, text in info.outcomes:
        lines.append(f'<span style="color:{OK_COLOUR if ok else ERROR_COLOUR}">\u2192 {html.escape(text)}</span>')
    found = shown.found.pictures if shown is not None else ()
    pictures = [_sheet_picture(p, x) for p, x in zip(found, shown.pixmaps, strict=True)] if shown is not None else None
    content = TurnContent(
        status=_status(info),
        acted=info.acted,
        message="<br>".join(lines),
        message_tip=message if message != _shortened(message) else "",
        pictures=tuple(picture for picture, _caption in pictures) if pictures is not None else None,
        notes=_notes(shown),
        copied="\n".join([message, *outcomes]).strip(),
    )
    return WordedTurn(shown, content, message, tuple(caption for _p, caption in pictures or ()))


def _sheet_picture(picture: AgentPicture, pixmap: QPixmap) -> tuple[SheetPicture, str]:
    """``picture`` under its caption: its name, then what it is (checked as sent, or NOT SENT); and the caption
    as plain text."""
    note, colour, tip = _caption(picture)
    weight = "400" if colour == MUTED_COLOUR else "700"
    said = f' <span style="color:{colour}; font-weight:{weight}">\u00b7 {note}</span>' if note else ""
    plain = f"{picture.name} \u00b7 {note}" if note else picture.name
    return SheetPicture(html.escape(picture.name) + said, pixmap, tip), plain


def _status(info: RoleTurn) -> str:
    if info.observation is None:
        return f"Nothing observed yet at turn {info.turn}"
    if info.acted:
        return f"Turn {info.turn}"
    return f"Did not act in turn {info.turn}; showing turn {info.shown_turn}"


def _notes(shown: PanelPictures | None) -> str:
    """That the observation sent no picture, or which it sent that cannot be re-drawn here ("" when none)."""
    notes = []
    if shown is not None and not shown.found.sent:
        notes.append(NO_PICTURES)
    if shown is not None and shown.found.missing:
        notes.append(f"Sent, but not re-drawn here: {', '.join(shown.found.missing)}")
    return "\n".join(notes)


@dataclass(frozen=True)
class GridLayout:
    """How the grid laid its shown panels out: in how many columns, each panel's pictures' width (None: as wide
    as the panel) and the height each row is kept at."""

    columns: int
    pictures_widths: tuple[int | None, ...]
    heights: tuple[int, ...]


def _cell_of(grid: QGridLayout, index: int) -> tuple[int, int]:
    """The (row, column) of the grid's item number ``index``."""
    position: tuple[int, int, int, int] = grid.getItemPosition(index)  # type: ignore[assignment]  # stub: object
    return position[0], position[1]


class AgentPanels(QWidget):
    """One :class:`AgentPanel` per role of the playback's episode in a grid that follows the widget's size,
    redrawn on every turn change, under the switch between the pictures "as sent" and "annotated"."""

    def __init__(
        self,
        playback: PlaybackModel,
        parent: QWidget | None = None,
        cache_size: int = 512,
        settings: QSettings | None = None,
    ) -> None:
        super().__init__(parent)
        self._playback = playback
        self._settings = settings
        remembered = settings.value(MODE_KEY, AS_SENT) if settings is not None else AS_SENT
        self._mode = remembered if remembered in MODES else AS_SENT
        self._views: FamilyViews | None = None
        self._turn = 0
        self._cache: dict[PictureKey, PanelPictures] = {}
        self._ahead: frame_thread.Ahead[PictureKey, DrawnPictures] = frame_thread.Ahead()  # the next turn's
        self._after_frame = frame_thread.AfterFrame(self)  # the next turn's asked for once a step is painted
        self._cache_size = cache_size
        self._index: EpisodeIndex | None = None
        self._panels: dict[str, AgentPanel] = {}
        self._only: frozenset[str] | None = None  # while a person plays: their roles' panels alone
        self._columns = 1
        self._laid_out: tuple[object, ...] | None = None  # the content key of the grid as last laid out
        self._layouts: dict[tuple[object, ...], GridLayout] = {}  # content key -> the grid laid out for it
        self._rows_for: tuple[object, ...] | None = None  # the context (see _context) the rows were set in
        self.mode_bar = self._make_mode_bar()
        self._content = QWidget()
        self._grid = QGridLayout(self._content)
        self._grid.setContentsMargins(GRID_SPACING, GRID_SPACING, GRID_SPACING, GRID_SPACING)
        self._grid.setSpacing(GRID_SPACING)
        self._placeholder = QLabel("No episode loaded", self._content)
        self._placeholder.setStyleSheet(f"color: {MUTED_COLOUR}")
        self._grid.addWidget(self._placeholder, 0, 0)
        self.scroll_area = QScrollArea(self)
        self.scroll_area.setVerticalScrollBar(KeptScrollBar())  # a step mostly changes the panels' height
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll_area.setWidget(self._content)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.mode_bar)
        layout.addWidget(self.scroll_area)
        playback.episodeChanged.connect(self._on_episode)
        playback.turnChanged.connect(self._on_turn)
        self._on_episode(playback.episode)

    def _make_mode_bar(self) -> QWidget:
        """The switch between the two modes: a pair of exclusive buttons, each saying what it shows."""
        bar = QWidget(self)
        row = QHBoxLayout(bar)
        row.setContentsMargins(GRID_SPACING, 4, GRID_SPACING, 0)
        row.setSpacing(2)
        row.addWidget(QLabel("Pictures:", bar))
        group = QButtonGroup(bar)
        self.mode_buttons: dict[str, QToolButton] = {}
        for mode in MODES:
            button = self.mode_buttons[mode] = QToolButton(bar)
            button.setText(mode.capitalize())
            button.setCheckable(True)
            button.setChecked(mode == self._mode)
            button.setToolTip(MODE_HELP[mode][1])
            button.setStyleSheet(
                "QToolButton { padding: 1px 8px; border: 1px solid #b8bec6; background: #f6f7f9; }"
                f"QToolButton:checked {{ color: white; background: {MODE_COLOUR[mode]}; "
                "border-color: transparent; font-weight: 600; }"
            )
            button.clicked.connect(lambda _checked, mode=mode: self.set_mode(mode))
            group.addButton(button)
            row.addWidget(button)
        self.mode_note = QLabel(MODE_HELP[self._mode][0], bar)
        self.mode_note.setStyleSheet(f"color: {MUTED_COLOUR}; padding-left: 6px")
        row.addWidget(self.mode_note)
        row.addStretch(1)
        # its width never sets the dock's minimum (nor the window's, which must tile beside its forks): clipped
        bar.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        return bar

    # ---- public API ---------------------------------------------------------------------------------------
    def roles(self) -> list[str]:
        """The roles shown, in reading order (left to right, then top to bottom)."""
        return list(self._panels)

    @property
    def columns(self) -> int:
        """How many columns the panels are laid out in."""
        return self._columns

    @property
    def mode(self) -> str:
        """How pictures are shown: ``AS_SENT`` or ``ANNOTATED`` (as sent, whatever was chosen, while a person
        plays: they see only what their role was given)."""
        return AS_SENT if self._only is not None else self._mode

    def set_mode(self, mode: str) -> None:
        """Show the pictures ``AS_SENT`` or ``ANNOTATED`` (remembered in the settings, when given)."""
        if mode not in MODES:
            raise ValueError(f"unknown picture mode {mode!r}; expected one of {', '.join(MODES)}")
        self._mode = mode
        self._show_mode()
        if self._settings is not None:
            self._settings.setValue(MODE_KEY, mode)
        self._on_turn(self._turn)

    def _show_mode(self) -> None:
        """The switch and its note as the mode in force is."""
        self.mode_buttons[self.mode].setChecked(True)
        self.mode_note.setText(MODE_HELP[self.mode][0])

    def grab_whole(self) -> QPixmap:
        """A picture of every panel shown, those scrolled out of view included, under the mode switch, which
        says whether its pictures are as sent or annotated (File > Export Panel)."""
        bar, panels = self.mode_bar.grab(), self._content.grab()
        ratio = panels.devicePixelRatio()
        size = QSize(max(bar.width(), panels.width()), bar.height() + panels.height())
        whole = QPixmap(size)
        whole.setDevicePixelRatio(ratio)
        whole.fill(self.palette().window().color())
        painter = QPainter(whole)
        painter.drawPixmap(0, 0, bar)
        painter.drawPixmap(0, round(bar.height() / ratio), panels)
        painter.end()
        return whole

    def panel(self, role: str) -> AgentPanel:
        """The panel of ``role`` (KeyError when the episode has no such role)."""
        return self._panels[role]

    def show_only(self, roles: Iterable[str] | None) -> None:
        """Show the panels of ``roles`` alone (a person playing sees only what their roles were given, as sent),
        or every role's again, in the chosen mode, with None."""
        self._only = frozenset(roles) if roles is not None else None
        self.mode_bar.setEnabled(self._only is None)
        self._show_mode()
        for role, panel in self._panels.items():
            panel.setVisible(self._only is None or role in self._only)
        self._on_turn(self._turn)  # the panels shown now may never have been drawn

    # ---- model -> view ------------------------------------------------------------------------------------
    def _on_episode(self, episode: Episode | None) -> None:
        for panel in self._panels.values():  # hidden at once: deleteLater waits for the event loop, and a
            self._grid.removeWidget(panel)  # panel still drawn meanwhile showed under the new one's header
            panel.hide()
            panel.deleteLater()
        self._panels = {}
        self._laid_out = None  # new panels: in no grid yet, whatever their keys
        self._layouts.clear()
        self._cache.clear()
        self._ahead.drop()
        self._index = EpisodeIndex(episode) if episode is not None else None
        self._views = views_of(episode) if episode is not None else None
        self._placeholder.setVisible(self._index is None)
        if self._index is None:
            return
        roles = self._index.roles()
        colours = episode_colours(self._index.episode)
        for role in roles:
            panel = AgentPanel(role, self._title(role), hex_colour(colours[role]), self._content, colours)
            panel.sectionToggled.connect(lambda: QTimer.singleShot(0, self._reflow))
            self._panels[role] = panel
            panel.setVisible(self._only is None or role in self._only)
        self._on_turn(self._playback.turn)

    def _title(self, role: str) -> str:
        assert self._index is not None
        spec = self._index.episode.agents.get(role)
        note = self._views.role_note(self._index.episode, role) if self._views is not None else ""
        title = f"{role} \u2013 {spec}" if spec else role
        return f"{title} ({note})" if note else title

    def _on_turn(self, turn: int) -> None:
        self._turn = turn
        if self._index is None:
            return
        for role in self._shown_roles():  # another's not even rendered: their pictures stay out of the caches
            info = self._index.role_turn(role, turn, as_told=self._only is not None)
            panel = self._panels[role]
            panel.show_turn(info, self._pictures(info, turn))
        self._lay_out()
        for panel in self._shown_panels():  # again where the grid gave their pictures another width (else at once)
            panel.lay_out_now()
        self._after_frame.call(lambda: self._draw_ahead(self._turn + 1))  # the turn shown then

    # ---- the grid -----------------------------------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._reflow()

    def _shown_roles(self) -> list[str]:
        """The roles whose panels are shown (all but those a person playing a role may not see)."""
        return [role for role in self._panels if self._only is None or role in self._only]

    def _shown_panels(self) -> list[AgentPanel]:
        return [self._panels[role] for role in self._shown_roles()]

    def _grid_area(self) -> tuple[int, int]:
        """The width and height the grid lays panels out in."""
        viewport = self.scroll_area.maximumViewportSize()
        margins = 2 * GRID_SPACING
        scroll_bar = self.scroll_area.verticalScrollBar().sizeHint().width()  # kept free: a bar never re-flows
        return viewport.width() - margins - scroll_bar, viewport.height() - margins

    def _content_key(self) -> tuple[object, ...]:
        """Everything the grid's layout follows: its context (:meth:`_context`) and the turn."""
        return (self._context(), self._turn)

    def _context(self) -> tuple[object, ...]:
        """What the grid's layout follows but the turn: its area, the episode as long as it is now, the mode, the
        roles shown and which sections are open."""
        episode = self._index.episode if self._index is not None else None
        shown = (episode.episode_id, len(episode.events)) if episode is not None else None
        opened = tuple(section.expanded for panel in self._shown_panels() for section in panel.sections)
        return (self._grid_area(), shown, self.mode, self._only, opened)

    def _lay_out(self) -> None:
        """Lay the grid out for what the panels show now: as it was laid out for the same content and area
        before (stepping back and forth through an episode), else afresh. Laying out afresh (columns tried,
        pictures fitted: each panel's height computed again and again) cost more than drawing the step."""
        key = self._content_key()
        if key == self._laid_out:
            return
        known = self._layouts.get(key)
        if known is None:
            self._reflow()
        else:
            self._apply(known)
            self._laid_out = key

    def _reflow(self) -> None:
        """Lay the shown panels out in as many columns as the size calls for (:func:`grid_columns`), and shrink
        their pictures when even the most columns leave the grid taller than the dock; remembered for
        :meth:`_lay_out`."""
        self._laid_out = None
        panels = self._shown_panels()
        width, height = self._grid_area()
        for panel in panels:
            panel.set_pictures_width(None)
        heights = [panel.heightForWidth for panel in panels]
        self._columns = grid_columns(heights, width, height, MIN_PANEL_WIDTH) if panels else 1
        self._place(panels)
        if not panels:
            return
        self._stretch(len(panels))
        if grid_height(heights, self._columns, width) > height:
            self._fit_pictures(panels, width, height)
        cell = column_width(self._columns, width)
        needed = [panel.heightForWidth(cell) for panel in panels]
        rows = tuple(max(needed[k : k + self._columns]) for k in range(0, len(panels), self._columns))
        self._set_row_heights(rows)
        key = self._laid_out = self._content_key()
        if len(self._layouts) >= self._cache_size:
            self._layouts.pop(next(iter(self._layouts)))
        widths = tuple(panel.pictures_width for panel in panels)
        self._layouts[key] = GridLayout(self._columns, widths, rows)

    def _apply(self, laid: GridLayout) -> None:
        """Lay the shown panels out as ``laid`` says (what :meth:`_reflow` found for the same content)."""
        panels = self._shown_panels()
        self._columns = laid.columns
        self._place(panels)
        self._stretch(len(panels))
        for panel, width in zip(panels, laid.pictures_widths, strict=True):
            if width != panel.pictures_width:  # setting it makes the panel's layout compute every height again
                panel.set_pictures_width(width)
        self._set_row_heights(laid.heights)

    def row_heights(self) -> list[int]:
        """How tall each row of the grid is kept at least (its tallest panel's height at the column width)."""
        return [self._grid.rowMinimumHeight(row) for row in range(self._grid.rowCount())]

    def _set_row_heights(self, heights: Sequence[int]) -> None:
        """Keep each row of the grid at least as tall as ``heights`` says (rows past them at no height), so the
        grid never squeezes a panel to its share of the viewport: the dock scrolls instead. The rows' minimums
        are the grid's own: a panel's minimum height, set while it was smaller, resized it at once and laid it
        out twice, once at that call and again when the grid placed it.

        When rows change, the panels' area is resized to hold them at once: left to the event loop, each layout
        up the chain waits for the next pass (Qt handles the events posted while it handles posted events a pass
        later), so the step's frame showed panels squeezed into the last turn's heights, and a second frame the
        turn's own."""
        heights = self._steady(heights)
        changed = False
        for row in range(max(self._grid.rowCount(), len(heights))):
            height = heights[row] if row < len(heights) else 0
            if self._grid.rowMinimumHeight(row) != height:
                self._grid.setRowMinimumHeight(row, height)
                changed = True
        if changed:  # what the scroll area does when its widget asks for another size, now: the panels' area
            # takes the grid's new size (the grid lays the panels out once, at it, before the frame is painted)
            QApplication.sendEvent(self.scroll_area, QEvent(QEvent.Type.LayoutRequest))
            # an area that kept its size (the dock did not start or stop scrolling) was not laid out again: the
            # grid's own request waited for the event loop, and the step's frame showed the panels at the last
            # turn's heights, a second frame at these
            self._grid.activate()
            # a scroll bar it showed asked for its first paint by a posted event, which Qt handles after the
            # step's frame: a second frame for the bar. Asked now, it is painted
            # in the step's frame.
            QApplication.sendPostedEvents(None, QEvent.Type.UpdateLater)

    def _steady(self, heights: Sequence[int]) -> list[int]:
        """``heights``, but a row that a turn needs at most ``ROW_SLACK`` pixels less of keeps its height (in the
        same context: episode, area, mode, sections). Stepping, a director's message comes and goes: its row kept
        at its height, the panels below stay where they were, and the dock is not laid out again nor its scroll
        bar repainted at each turn. A turn needing much less (its pictures gone) shrinks the row."""
        context = self._context()
        if context != self._rows_for:
            self._rows_for = context
            return list(heights)
        kept = self.row_heights()
        return [
            kept[row] if row < len(kept) and 0 <= kept[row] - height <= ROW_SLACK else height
            for row, height in enumerate(heights)
        ]

    def _stretch(self, panels: int) -> None:
        """Share the width among the columns in use, and leave the room left over below the last row."""
        for column in range(self._grid.columnCount()):
            self._grid.setColumnStretch(column, 1 if column < self._columns else 0)
        rows = -(-panels // self._columns)
        for row in range(self._grid.rowCount()):  # the room left over goes below the last row, not into panels
            self._grid.setRowStretch(row, 1 if row == rows else 0)
        self._grid.setRowStretch(rows, 1)

    def _place(self, panels: list[AgentPanel]) -> None:
        """Put ``panels`` in the grid's cells, reading order, in the current columns (nothing moves when they
        are already there: taking every panel out and in again re-laid the whole dock out)."""
        places = {panel: (k // self._columns, k % self._columns) for k, panel in enumerate(panels)}
        for panel in self._panels.values():
            index = self._grid.indexOf(panel)
            if index >= 0 and _cell_of(self._grid, index) != places.get(panel):
                self._grid.removeWidget(panel)
        for panel, (row, column) in places.items():
            if self._grid.indexOf(panel) < 0:
                self._grid.addWidget(panel, row, column)

    def _fit_pictures(self, panels: list[AgentPanel], width: int, height: int) -> None:
        """Give each row an equal share of ``height`` by narrowing its panels' pictures, not below
        ``MIN_PICTURE_WIDTH``. When even that leaves the grid too tall, the dock scrolls: each panel is then
        only kept as short as the dock, so it can be seen whole, its pictures as large as that allows."""
        cell = column_width(self._columns, width)
        rows = -(-len(panels) // self._columns)
        share = (height - GRID_SPACING * (rows - 1)) // rows
        for panel in panels:  # less a spacing: frames and rounding take a few pixels the estimate does not see
            panel.fit_pictures(cell, share - GRID_SPACING)
        if grid_height([panel.heightForWidth for panel in panels], self._columns, width) > height:
            for panel in panels:
                panel.fit_pictures(cell, height - GRID_SPACING)

    def _picture_key(self, info: RoleTurn, turn: int) -> PictureKey | None:
        """What the pictures of the role's shown observation at ``turn`` are kept by (None: it has none)."""
        if info.observation is None or self._index is None:
            return None
        follow = self.mode == ANNOTATED and self._views is not None and self._views.images_follow_turn
        return (self._index.episode.episode_id, info.role, info.observation.turn, self.mode, turn if follow else -1)

    def _pictures(self, info: RoleTurn, turn: int) -> PanelPictures | None:
        """The pictures of the role's shown observation at ``turn`` in the current mode (cached: stepping back is
        free; drawn ahead on the frame thread, stepping on mostly is)."""
        key = self._picture_key(info, turn)
        if key is None or self._index is None:
            return None
        cached = self._cache.get(key)
        if cached is None:
            coming = self._ahead.take(key)  # drawn ahead (or being drawn: waited for)
            if coming is not None:
                drawn = coming.result()
            else:
                drawn = draw_pictures(self._views, info, self._index.episode, turn, self.mode == ANNOTATED)
            cached = self._keep(key, drawn)
        return cached

    def _keep(self, key: PictureKey, drawn: DrawnPictures) -> PanelPictures:
        """Keep ``drawn`` (pixmaps made of it) for ``key``, the oldest kept going first past ``cache_size``."""
        if len(self._cache) >= self._cache_size:
            self._cache.pop(next(iter(self._cache)))
        kept = self._cache[key] = PanelPictures(drawn.found, tuple(QPixmap.fromImage(image) for image in drawn.images))
        return kept

    def _draw_ahead(self, turn: int) -> None:
        """Have the frame thread draw the pictures the shown panels will need at ``turn`` (the next one), when
        the family draws them without VTK and the panels are shown; those drawn for another turn and not taken are
        kept all the same."""
        views, index = self._views, self._index
        wanted: dict[PictureKey, Callable[[], DrawnPictures]] = {}
        coming = index is not None and turn <= index.episode.last_turn and self.isVisible()  # hidden: none shown
        if views is not None and views.images_without_vtk and index is not None and coming:
            annotated = self.mode == ANNOTATED
            for role in self._shown_roles():
                info = index.role_turn(role, turn, as_told=self._only is not None)
                key = self._picture_key(info, turn)
                if key is not None and key not in self._cache:
                    wanted[key] = partial(draw_pictures, views, info, index.episode, turn, annotated)
        for key, drawn in self._ahead.want(wanted).items():
            self._keep(key, drawn)
