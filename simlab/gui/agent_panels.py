"""What each agent was given and what it did, at the playback's turn.

:class:`AgentPanels` holds one :class:`AgentPanel` per role of the episode (in its family's order, in its
palette's colour) side by side in a grid that follows the dock's size (:func:`grid_columns`: the fewest
columns at which every panel fits, at most as many as leave each ``MIN_PANEL_WIDTH``; when they still do not
fit, the pictures shrink so every row does, down to ``MIN_PICTURES_HEIGHT``), and redraws them when the
:class:`~simlab.gui.playback.PlaybackModel` turn changes. A panel shows the role's observation images
(re-rendered by the family's ``observation_images``, or an injected function), its public message and action
at this turn in bold, and, collapsed by default, the observation text, the private reasoning and the
conversation its model was sent (every call of the shown turn, re-asks included, as
:mod:`simlab.render.model_calls` draws them; a role that called no model says so). A role that did not act at
this turn gets a grey note and its last observation, dimmed. Pixmaps are cached per (episode, role, turn), so
stepping is cheap. :meth:`AgentPanels.grab_whole` pictures every panel, scrolled out of view or not.
"""

from __future__ import annotations

import bisect
import html
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from PIL import Image
from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QPainter, QPaintEvent, QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QGraphicsOpacityEffect,
    QGridLayout,
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
from simlab.gui.dialogue import ERROR_COLOUR, MUTED_COLOUR, OK_COLOUR, pil_to_qimage
from simlab.gui.playback import PlaybackModel
from simlab.render.episode_pictures import views_of
from simlab.render.formatting import episode_colours, episode_roles, event_line
from simlab.render.model_calls import ModelCall, calls_html, model_calls

ImagesFor = Callable[[Mapping[str, Any]], dict[str, Image.Image]]
"""Renders an observation event's data (``text``, ``images``, ``data``) to named pictures."""

DIMMED_OPACITY = 0.4
MAX_UPSCALE = 1.25  # never blow a picture up by more than this: beyond it the pixels show
MIN_PANEL_WIDTH = 200  # narrower, a title and its status wrap to many lines and the pictures are stamps
MIN_PICTURES_HEIGHT = 90  # a panel's pictures never shrink below this to fit the dock: scroll instead
GRID_SPACING = 6
MESSAGE_CHARS = 240  # a panel shows this much of a message; the dialogue and the tooltip show all of it


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
    """Per-role lookups over an episode's events, built once per episode."""

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

    def roles(self) -> list[str]:
        """The episode's roles in its family's order (the agents it recorded, else the observed roles)."""
        return episode_roles(self.episode)

    def role_turn(self, role: str, turn: int) -> RoleTurn:
        out = RoleTurn(role, turn)
        turns = self._obs_turns.get(role, [])
        k = bisect.bisect_right(turns, turn) - 1
        out.observation = self.observations[role][k] if k >= 0 else None
        events = self.by_turn.get(turn, [])
        for event in events:
            line = event_line(event) if event.role == role else None
            if line is None:
                continue
            if line.kind == "message":
                out.said.append(line.text)
            elif line.kind == "action":
                out.did.append(line.text)
            elif line.kind == "protocol_error":
                out.outcomes.append((False, line.plain()))
        if out.did:
            out.outcomes.extend(_results(events))
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


def _results(events: list[Event]) -> list[tuple[bool, str]]:
    """(ok, the engine's words) of the turn's results, as the one formatter words them."""
    lines = [event_line(e) for e in events if e.kind == "result"]
    return [(line.tone == "ok", line.plain()) for line in lines if line is not None]


# ---- widgets ------------------------------------------------------------------------------------------------


class ImageView(QWidget):
    """A picture scaled smoothly to the widget's width (keeping its aspect), centred; height follows width, up
    to ``max_height`` when one is set (the grid shrinks pictures so every panel fits the dock)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._pixmap = QPixmap()
        self._scaled = QPixmap()
        self._max_height: int | None = None
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def pixmap(self) -> QPixmap:
        return self._pixmap

    def set_pixmap(self, pixmap: QPixmap) -> None:
        if pixmap.cacheKey() == self._pixmap.cacheKey():
            return
        self._pixmap = pixmap
        self._scaled = QPixmap()
        self.updateGeometry()
        self.update()

    def set_max_height(self, height: int | None) -> None:
        """Keep the picture at most ``height`` pixels tall (None: as tall as the width makes it)."""
        if height != self._max_height:
            self._max_height = height
            self._scaled = QPixmap()
            self.updateGeometry()
            self.update()

    def _target_width(self, width: int) -> int:
        widest = min(width, round(self._pixmap.width() * MAX_UPSCALE))
        if self._max_height is not None:
            widest = min(widest, self._max_height * self._pixmap.width() // max(1, self._pixmap.height()))
        return max(1, widest)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        if self._pixmap.isNull():
            return 0
        return round(self._target_width(width) * self._pixmap.height() / self._pixmap.width())

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
            self._scaled = self._pixmap.scaledToWidth(round(width * ratio), Qt.TransformationMode.SmoothTransformation)
            self._scaled.setDevicePixelRatio(ratio)
        painter = QPainter(self)
        painter.drawPixmap((self.width() - width) // 2, 0, self._scaled)


def _shortened(text: str) -> str:
    """``text`` cut to ``MESSAGE_CHARS`` (a report of many objects would make its panel a column of JSON)."""
    if len(text) <= MESSAGE_CHARS:
        return text
    return text[:MESSAGE_CHARS].rstrip() + " \u2026 (all of it in the Dialogue)"


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
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.body)

    @property
    def expanded(self) -> bool:
        return self.button.isChecked()

    def set_expanded(self, expanded: bool) -> None:
        """Open or close the body."""
        if self.button.isChecked() != expanded:
            self.button.setChecked(expanded)
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


class AgentPanel(QFrame):
    """One role: title, status, what it said/did this turn, its observation images and (collapsed) text,
    reasoning and the conversation its model was sent."""

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
        self._message_text = ""
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName("agentPanel")
        self.setStyleSheet(f"#agentPanel {{ border: 1px solid #d5d9df; border-left: 4px solid {colour}; }}")
        self.title = QLabel(
            f'<span style="color:{colour}; font-size:11pt; font-weight:700">{html.escape(title)}</span>'
        )
        self.title.setWordWrap(True)
        self.status = QLabel(self)
        self.status.setStyleSheet(f"color: {MUTED_COLOUR}")
        self.message = QLabel(self)
        self.message.setTextFormat(Qt.TextFormat.RichText)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.images = QWidget(self)
        self._image_layout = QVBoxLayout(self.images)
        self._image_layout.setContentsMargins(0, 0, 0, 0)
        self._image_views: list[ImageView] = []
        self._dim = QGraphicsOpacityEffect(self.images)
        self._dim.setOpacity(1.0)
        self.images.setGraphicsEffect(self._dim)
        self.observation_text = Collapsible("Observation text", self, monospace=True)
        self.reasoning = Collapsible("Private reasoning", self)
        self.reasoning.body.setStyleSheet(f"color: {MUTED_COLOUR}; font-style: italic")
        self.conversation = Collapsible("Conversation sent", self, rich=True)
        self.conversation.setToolTip("The messages this role's model was sent at the shown turn, and its replies")
        self._calls: list[ModelCall] = []
        self.status.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.setSpacing(2)  # panels sit side by side in a dock: every line of chrome is a line of picture less
        sections = (self.observation_text, self.reasoning, self.conversation)
        for widget in (self.title, self.status, self.message, self.images, *sections):
            layout.addWidget(widget)
        layout.addStretch(1)  # a panel beside a taller one keeps its lines together at the top
        for section in sections:
            section.button.toggled.connect(lambda _open: self.sectionToggled.emit())

    # ---- for tests and callers ----------------------------------------------------------------------------
    @property
    def shown_turn(self) -> int | None:
        """The turn whose observation is displayed (None before the role's first observation)."""
        return self._shown_turn

    def message_text(self) -> str:
        """The role's public message(s) and action(s) at the current turn, as plain text."""
        return self._message_text

    def pixmaps(self) -> list[QPixmap]:
        """The observation pictures currently shown."""
        return [view.pixmap() for view in self._visible_views()]

    def calls(self) -> list[ModelCall]:
        """The model calls whose conversation is shown (the role's, at the shown turn)."""
        return list(self._calls)

    def set_pictures_height(self, height: int | None) -> None:
        """Keep the pictures together at most ``height`` pixels tall (None: as the width makes them)."""
        views = self._visible_views()
        for view in views:
            view.set_max_height(None if height is None else max(1, height // len(views)))
        # layouts cache heights for widths and refresh them only on the next event loop pass: the grid asks now
        self._image_layout.invalidate()
        self.images.updateGeometry()
        self.layout().invalidate()

    def pictures_height(self, width: int) -> int:
        """How tall the pictures are at a panel ``width`` (the rest of the panel does not shrink)."""
        inner = width - sum(self.layout().getContentsMargins()[::2])
        return sum(view.heightForWidth(inner) for view in self._visible_views())

    def _visible_views(self) -> list[ImageView]:
        return [view for view in self._image_views if not view.isHidden()]

    # ---- drawing ------------------------------------------------------------------------------------------
    def show_turn(self, info: RoleTurn, pixmaps: Mapping[str, QPixmap]) -> None:
        """Display ``info`` (what the role saw and did) with its observation ``pixmaps``."""
        self._shown_turn = info.shown_turn
        self._set_status(info)
        self._set_message(info)
        self._set_images(pixmaps)
        self._dim.setOpacity(1.0 if info.acted else DIMMED_OPACITY)
        observation = info.observation
        self.observation_text.set_text(str(observation.data.get("text", "")) if observation is not None else "")
        self.observation_text.setVisible(observation is not None)
        self.reasoning.set_text("\n\n".join(info.reasoning))
        self.reasoning.setVisible(bool(info.reasoning))
        self._set_conversation(info)

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
        self.conversation.setVisible(info.observation is not None)

    def _set_status(self, info: RoleTurn) -> None:
        if info.observation is None:
            self.status.setText(f"Nothing observed yet at turn {info.turn}")
        elif info.acted:
            self.status.setText(f"Turn {info.turn}")
        else:
            self.status.setText(f"Did not act in turn {info.turn}; showing turn {info.shown_turn}")
        self.status.setStyleSheet(f"color: {MUTED_COLOUR}" + ("" if info.acted else "; font-style: italic"))

    def _set_message(self, info: RoleTurn) -> None:
        parts = [f"\u201c{text}\u201d" for text in info.said] + info.did
        self._message_text = "\n".join(parts)
        lines = [f"<b>\u201c{html.escape(_shortened(t))}\u201d</b>" for t in info.said]
        lines += [f"<b><code>{html.escape(_shortened(t))}</code></b>" for t in info.did]
        self.message.setToolTip(self._message_text if self._message_text != _shortened(self._message_text) else "")
        for ok, text in info.outcomes:
            lines.append(f'<span style="color:{OK_COLOUR if ok else ERROR_COLOUR}">\u2192 {html.escape(text)}</span>')
        self.message.setText("<br>".join(lines))
        self.message.setVisible(bool(lines))

    def _set_images(self, pixmaps: Mapping[str, QPixmap]) -> None:
        while len(self._image_views) < len(pixmaps):
            view = ImageView(self.images)
            self._image_layout.addWidget(view)
            self._image_views.append(view)
        for view, pixmap in zip(self._image_views, pixmaps.values(), strict=False):
            view.set_pixmap(pixmap)
            view.setVisible(True)
        for view in self._image_views[len(pixmaps) :]:
            view.setVisible(False)


class AgentPanels(QWidget):
    """One :class:`AgentPanel` per role of the playback's episode in a grid that follows the widget's size,
    redrawn on every turn change."""

    def __init__(
        self,
        playback: PlaybackModel,
        images_for: ImagesFor | None = None,
        parent: QWidget | None = None,
        cache_size: int = 512,
    ) -> None:
        super().__init__(parent)
        self._playback = playback
        self._images_for = images_for
        self._views: FamilyViews | None = None
        self._turn = 0
        self._cache: dict[tuple[str, str, int], dict[str, QPixmap]] = {}
        self._cache_size = cache_size
        self._index: EpisodeIndex | None = None
        self._panels: dict[str, AgentPanel] = {}
        self._only: frozenset[str] | None = None  # while a person plays: their roles' panels alone
        self._columns = 1
        self._content = QWidget()
        self._grid = QGridLayout(self._content)
        self._grid.setContentsMargins(GRID_SPACING, GRID_SPACING, GRID_SPACING, GRID_SPACING)
        self._grid.setSpacing(GRID_SPACING)
        self._placeholder = QLabel("No episode loaded", self._content)
        self._placeholder.setStyleSheet(f"color: {MUTED_COLOUR}")
        self._grid.addWidget(self._placeholder, 0, 0)
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.setWidget(self._content)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.scroll)
        playback.episodeChanged.connect(self._on_episode)
        playback.turnChanged.connect(self._on_turn)
        self._on_episode(playback.episode)

    # ---- public API ---------------------------------------------------------------------------------------
    def roles(self) -> list[str]:
        """The roles shown, in reading order (left to right, then top to bottom)."""
        return list(self._panels)

    @property
    def columns(self) -> int:
        """How many columns the panels are laid out in."""
        return self._columns

    def grab_whole(self) -> QPixmap:
        """A picture of every panel shown, those scrolled out of view included (File > Export Panel)."""
        return self._content.grab()

    def panel(self, role: str) -> AgentPanel:
        """The panel of ``role`` (KeyError when the episode has no such role)."""
        return self._panels[role]

    def show_only(self, roles: Iterable[str] | None) -> None:
        """Show the panels of ``roles`` alone (a person playing sees only what their roles were given), or
        every role's again with None."""
        self._only = frozenset(roles) if roles is not None else None
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
        self._cache.clear()
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
        for role, panel in self._panels.items():
            if self._only is not None and role not in self._only:
                continue  # not even rendered: another role's pictures stay out of the process's caches too
            info = self._index.role_turn(role, turn)
            panel.show_turn(info, self._pixmaps(info))
        self._reflow()

    # ---- the grid -----------------------------------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._reflow()

    def _shown_panels(self) -> list[AgentPanel]:
        return [panel for role, panel in self._panels.items() if self._only is None or role in self._only]

    def _reflow(self) -> None:
        """Lay the shown panels out in as many columns as the size calls for (:func:`grid_columns`), and shrink
        their pictures when even the most columns leave the grid taller than the dock."""
        for panel in self._panels.values():
            self._grid.removeWidget(panel)
        panels = self._shown_panels()
        if not panels:
            return
        viewport = self.scroll.maximumViewportSize()
        margins = 2 * GRID_SPACING
        scroll_bar = self.scroll.verticalScrollBar().sizeHint().width()  # kept free, so a scroll bar never re-flows
        width, height = viewport.width() - margins - scroll_bar, viewport.height() - margins
        for panel in panels:
            panel.set_pictures_height(None)
        heights = [panel.heightForWidth for panel in panels]
        self._columns = grid_columns(heights, width, height, MIN_PANEL_WIDTH)
        for k, panel in enumerate(panels):
            self._grid.addWidget(panel, k // self._columns, k % self._columns)
        for column in range(self._grid.columnCount()):
            self._grid.setColumnStretch(column, 1 if column < self._columns else 0)
        rows = -(-len(panels) // self._columns)
        for row in range(self._grid.rowCount()):  # the room left over goes below the last row, not into panels
            self._grid.setRowStretch(row, 1 if row == rows else 0)
        self._grid.setRowStretch(rows, 1)
        if grid_height(heights, self._columns, width) > height:
            self._fit_pictures(panels, width, height)
        cell = column_width(self._columns, width)
        for panel in panels:  # the grid would squeeze a panel to its share of the viewport: scroll instead
            panel.setMinimumHeight(panel.heightForWidth(cell))

    def _fit_pictures(self, panels: list[AgentPanel], width: int, height: int) -> None:
        """Give each row an equal share of ``height`` by shrinking its panels' pictures (not below
        ``MIN_PICTURES_HEIGHT``: past that the dock scrolls)."""
        cell = column_width(self._columns, width)
        rows = -(-len(panels) // self._columns)
        share = (height - GRID_SPACING * (rows - 1)) // rows
        for panel in panels:
            pictures = panel.pictures_height(cell)
            rest = panel.heightForWidth(cell) - pictures
            # less a spacing: frames and rounding take a few pixels the estimate does not see
            panel.set_pictures_height(min(pictures, max(MIN_PICTURES_HEIGHT, share - rest - GRID_SPACING)))

    def _render_images(self, observation: Mapping[str, Any]) -> dict[str, Image.Image]:
        if self._images_for is not None:
            return self._images_for(observation)
        if self._views is None or self._index is None:
            return {}
        return self._views.observation_images(observation, self._index.episode, self._turn)

    def _pixmaps(self, info: RoleTurn) -> dict[str, QPixmap]:
        if info.observation is None or self._index is None:
            return {}
        follow = self._views is not None and self._views.images_follow_turn
        key = (self._index.episode.episode_id, info.role, info.observation.turn, self._turn if follow else -1)
        cached = self._cache.get(key)
        if cached is None:
            images = self._render_images(dict(info.observation.data))
            cached = {name: pil_to_pixmap(image) for name, image in images.items()}
            if len(self._cache) >= self._cache_size:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = cached
        return cached
