"""What each agent was given and what it did, at the playback's turn.

:class:`AgentPanels` holds one :class:`AgentPanel` per role of the episode (in its family's order, in its
palette's colour) in a vertical scroll area, and redraws them when the
:class:`~simlab.gui.playback.PlaybackModel` turn changes. A panel shows the role's observation images
(re-rendered by the family's ``observation_images``, or an injected function), its public message and action
at this turn in bold, and, collapsed by default, the observation text and the private reasoning. A role that
did not act at this turn gets a grey note and its last observation, dimmed. Pixmaps are cached per (episode,
role, turn), so stepping is cheap.
"""

from __future__ import annotations

import bisect
import html
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from PIL import Image
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontDatabase, QImage, QPainter, QPaintEvent, QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QGraphicsOpacityEffect,
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
from simlab.core.family import FamilyViews, hex_colour
from simlab.gui.dialogue import ERROR_COLOUR, MUTED_COLOUR, OK_COLOUR
from simlab.gui.playback import PlaybackModel
from simlab.render.episode_pictures import views_of
from simlab.render.formatting import episode_colours, episode_roles, event_line

ImagesFor = Callable[[Mapping[str, Any]], dict[str, Image.Image]]
"""Renders an observation event's data (``text``, ``images``, ``data``) to named pictures."""

DIMMED_OPACITY = 0.4
MAX_UPSCALE = 1.25  # never blow a picture up by more than this: beyond it the pixels show


def pil_to_pixmap(image: Image.Image) -> QPixmap:
    """A QPixmap holding a copy of ``image``."""
    rgba = image.convert("RGBA")
    qimage = QImage(rgba.tobytes(), rgba.width, rgba.height, 4 * rgba.width, QImage.Format.Format_RGBA8888)
    return QPixmap.fromImage(qimage.copy())


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
    """A picture scaled smoothly to the widget's width (keeping its aspect), centred; height follows width."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._pixmap = QPixmap()
        self._scaled = QPixmap()
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

    def _target_width(self, width: int) -> int:
        return max(1, min(width, round(self._pixmap.width() * MAX_UPSCALE)))

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


class Collapsible(QWidget):
    """A header arrow button that shows or hides a plain-text body (collapsed by default)."""

    def __init__(self, title: str, parent: QWidget | None = None, monospace: bool = False) -> None:
        super().__init__(parent)
        self.button = QToolButton(self)
        self.button.setText(title)
        self.button.setCheckable(True)
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.button.setArrowType(Qt.ArrowType.RightArrow)
        self.button.setAutoRaise(True)
        self.button.toggled.connect(self.set_expanded)
        self.body = QLabel(self)
        self.body.setTextFormat(Qt.TextFormat.PlainText)
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


class AgentPanel(QFrame):
    """One role: title, status, what it said/did this turn, its observation images and (collapsed) text and
    reasoning."""

    def __init__(self, role: str, title: str, colour: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.role = role
        self._shown_turn: int | None = None
        self._message_text = ""
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName("agentPanel")
        self.setStyleSheet(f"#agentPanel {{ border: 1px solid #d5d9df; border-left: 4px solid {colour}; }}")
        self.title = QLabel(
            f'<span style="color:{colour}; font-size:13pt; font-weight:700">{html.escape(title)}</span>'
        )
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
        self.status.setWordWrap(True)
        self.status.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        header = QHBoxLayout()
        header.addWidget(self.title)
        header.addWidget(self.status, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.setSpacing(4)
        layout.addLayout(header)
        for widget in (self.message, self.images, self.observation_text, self.reasoning):
            layout.addWidget(widget)

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
        return [view.pixmap() for view in self._image_views if view.isVisibleTo(self)]

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
        lines = [f"<b>\u201c{html.escape(t)}\u201d</b>" for t in info.said]
        lines += [f"<b><code>{html.escape(t)}</code></b>" for t in info.did]
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
            view.show()
        for view in self._image_views[len(pixmaps) :]:
            view.hide()


class AgentPanels(QWidget):
    """One :class:`AgentPanel` per role of the playback's episode, redrawn on every turn change."""

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
        self._content = QWidget()
        self._content_layout = QVBoxLayout(self._content)
        self._content_layout.setContentsMargins(6, 6, 6, 6)
        self._content_layout.setSpacing(10)
        self._content_layout.addStretch(1)
        self._placeholder = QLabel("No episode loaded", self._content)
        self._placeholder.setStyleSheet(f"color: {MUTED_COLOUR}")
        self._content_layout.insertWidget(0, self._placeholder)
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
        """The roles shown, top to bottom."""
        return list(self._panels)

    def panel(self, role: str) -> AgentPanel:
        """The panel of ``role`` (KeyError when the episode has no such role)."""
        return self._panels[role]

    def show_only(self, roles: Iterable[str] | None) -> None:
        """Show the panels of ``roles`` alone (a person playing sees only what their roles were given), or
        every role's again with None."""
        self._only = frozenset(roles) if roles is not None else None
        for role, panel in self._panels.items():
            panel.setVisible(self._only is None or role in self._only)

    # ---- model -> view ------------------------------------------------------------------------------------
    def _on_episode(self, episode: Episode | None) -> None:
        for panel in self._panels.values():
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
        for k, role in enumerate(roles):
            panel = AgentPanel(role, self._title(role), hex_colour(colours[role]), self._content)
            self._content_layout.insertWidget(k + 1, panel)
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
