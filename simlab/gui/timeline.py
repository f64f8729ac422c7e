"""The timeline: transport buttons and a scrubber that follow the one :class:`PlaybackModel`.

Neither widget keeps the current turn: they read ``model.turn`` when they draw and call model methods when
the user acts. The scrubber's ticks come from :func:`simlab.core.playback.turn_marks`, the same facts reports
use; while people play (:meth:`TimelineWidget.set_as_told`) only what the engine tells the roles is marked: no
mistakes and no score changes, which are judged against the hidden target, and no error jumps. Keyboard
shortcuts (Space, arrows, Home/End, Ctrl+E) belong to the main window; the buttons only name them in their
tooltips. The researcher's marks (``RUN/notes.json``: a bookmark, tags, a note) are diamonds on the track,
given by :meth:`TimelineScrubber.set_notes`, their words in the turn's tooltip.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, replace

from PySide6.QtCore import QEvent, QPointF, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QHelpEvent, QMouseEvent, QPainter, QPaintEvent, QPen, QPolygonF, QWheelEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QStyle,
    QToolButton,
    QToolTip,
    QWidget,
)

from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.core.notes import Mark, mark_words
from simlab.core.playback import TurnMarks, turn_marks
from simlab.gui.layouts import fix_label_size
from simlab.gui.playback import PlaybackModel
from simlab.render.formatting import headline_metrics

SPEECH_COLOUR = "#1e6fd9"
ACTION_COLOUR = "#7a7a7a"
ERROR_COLOUR = "#d32f2f"
SCORE_COLOURS = {"gain": "#2e9e4f", "drop": "#e65100", "change": "#7a7a7a"}
SCORE_WORDS = {"gain": "score rose", "drop": "score fell", "change": "metrics changed"}
NOTE_COLOUR = "#e0a800"
LEGEND_HTML = (
    "<b>Timeline marks</b><br>"
    f"<span style='color:{SPEECH_COLOUR}'>▮</span> speech: someone sent a message (above the track)<br>"
    f"<span style='color:{ACTION_COLOUR}'>▮</span> action: a move was taken (below the track)<br>"
    f"<span style='color:{ERROR_COLOUR}'>▮</span> error: engine or protocol error, or a mistake (tall red)<br>"
    f"<span style='color:{SCORE_COLOURS['gain']}'>●</span> score rose "
    f"<span style='color:{SCORE_COLOURS['drop']}'>●</span> score fell "
    f"(the family's leading metric) <span style='color:{SCORE_COLOURS['change']}'>●</span> other metrics changed<br>"
    f"<span style='color:{NOTE_COLOUR}'>◆</span> bookmarked <span style='color:{NOTE_COLOUR}'>◇</span> tagged or "
    "noted (your notes, Ctrl+B / Ctrl+T / Ctrl+Shift+N)"
)
MIN_SPEED, MAX_SPEED = 0.25, 20.0


@dataclass(frozen=True)
class _TurnInfo:
    """What the scrubber shows about one turn: its marks and a one-line description."""

    marks: TurnMarks
    text: str


def _describe_turn(marks: TurnMarks, events: list[Event]) -> str:
    """``turn 7: 2 messages, action, engine error, score rose``."""
    parts: list[str] = []
    messages = sum(1 for e in events if e.kind == "message")
    if messages:
        parts.append(f"{messages} message{'s' if messages != 1 else ''}")
    if marks.action:
        parts.append("action")
    if any(e.kind == "result" and not e.data.get("ok", True) for e in events):
        parts.append("engine error")
    protocol = sum(1 for e in events if e.kind == "protocol_error")
    if protocol:
        parts.append(f"protocol error{f' x{protocol}' if protocol > 1 else ''}")
    checks = sum(1 for e in events if e.kind == "check")
    if checks:
        parts.append(f"{checks} check finding{'s' if checks != 1 else ''}")
    if marks.score_change:
        parts.append(SCORE_WORDS[marks.score_change])
    return f"turn {marks.turn}: {', '.join(parts) if parts else 'no messages or actions'}"


def _told_error(event: Event) -> bool:
    """Whether ``event`` is an error the roles are told of: a refused reply or a broken protocol (a mistake,
    a reply the engine took that works against the target, is judged against what the roles cannot see)."""
    return event.kind == "protocol_error" or (event.kind == "result" and not event.data.get("ok", True))


def _turn_infos(episode: Episode | None, as_told: bool = False) -> list[_TurnInfo]:
    """Each turn's marks and description; ``as_told`` keeps only what the engine tells the roles."""
    if episode is None:
        return []
    by_turn: dict[int, list[Event]] = {}
    for e in episode.events:
        by_turn.setdefault(e.turn, []).append(e)
    marks = turn_marks(episode, headline_metrics(episode))
    if as_told:
        marks = [
            replace(m, error=any(_told_error(e) for e in by_turn.get(m.turn, [])), score_change=None) for m in marks
        ]
    return [_TurnInfo(m, _describe_turn(m, by_turn.get(m.turn, []))) for m in marks]


class TimelineScrubber(QWidget):
    """A track with one slot per turn and ticks for speech, actions, errors and score changes.

    Click or drag seeks the model to the nearest turn; the mouse wheel steps one turn per notch. Hovering
    shows what happened in that turn, plus a colour legend.
    """

    MARGIN = 10  # room for the handle at both ends
    TRACK_Y = 22  # the track's centre; the marks span 19 px above and below it
    NUMBERS_FROM = 56  # turn numbers are drawn under the marks when the widget is at least this tall
    HANDLE = 6  # the handle's radius
    REACH = 20  # what is drawn about a turn reaches this far either side of its slot's centre (its number's box)

    def __init__(self, model: PlaybackModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self._infos: list[_TurnInfo] = []
        self._notes: dict[int, Mark] = {}
        self._as_told = False
        self._dragging = False
        self._wheel = 0
        self._drawn_turn = model.turn  # where the handle was last asked to be painted
        # It paints its own background: a step then repaints a strip of it alone, not the dock beneath it too.
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.setMinimumHeight(self.NUMBERS_FROM)  # turn numbers always fit under the marks
        self.setMinimumWidth(80)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(False)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        model.episodeChanged.connect(self._episode_changed)
        model.turnChanged.connect(self._turn_changed)
        self._episode_changed(model.episode)

    # ---- geometry (public for tests and other panels) -----------------------------------------------
    def sizeHint(self) -> QSize:
        return QSize(400, 60)

    def turn_count(self) -> int:
        """Slots on the track: turns 0..last_turn, or 0 with no episode."""
        return len(self._infos)

    def _slot_width(self) -> float:
        return max(1e-6, (self.width() - 2 * self.MARGIN) / max(1, self.turn_count()))

    def x_for_turn(self, turn: int) -> float:
        """The x (widget pixels) of the centre of ``turn``'s slot."""
        return self.MARGIN + (turn + 0.5) * self._slot_width()

    def turn_at(self, x: float) -> int:
        """The turn whose slot holds ``x`` (the nearest slot centre), clamped to the episode."""
        turn = int((x - self.MARGIN) // self._slot_width())
        return max(0, min(turn, self.turn_count() - 1))

    def error_turns(self) -> list[int]:
        """Turns marked with an engine or protocol error (or a mistake, unless marking only what is told)."""
        return [i.marks.turn for i in self._infos if i.marks.error]

    @property
    def as_told(self) -> bool:
        """Whether only what the engine tells the roles is marked (see :meth:`set_as_told`)."""
        return self._as_told

    def set_as_told(self, as_told: bool) -> None:
        """Mark only what the engine tells the roles (True, while people play), or every fact again."""
        self._as_told = as_told
        self._describe(self.model.episode)

    def tooltip_for_turn(self, turn: int) -> str:
        """One line on what happened in ``turn`` ("turn 7: 2 messages, action, engine error"), and the
        researcher's mark on it ("noted: tags odd, bookmarked: heard red")."""
        if not 0 <= turn < len(self._infos):
            return ""
        mark = self._notes.get(turn)
        return self._infos[turn].text + (f"; noted: {mark_words(mark)}" if mark is not None else "")

    def set_notes(self, marks: Mapping[int, Mark]) -> None:
        """The researcher's marks on the open episode's turns (turn -> mark), drawn as diamonds on the track."""
        self._notes = dict(marks)
        self.update()

    def noted_turns(self) -> list[int]:
        """The turns drawn with a mark, in order."""
        return sorted(t for t in self._notes if 0 <= t < len(self._infos))

    # ---- model reactions -----------------------------------------------------------------------------
    def _episode_changed(self, episode: Episode | None) -> None:
        self._notes = {}  # another episode's: its own come with set_notes
        self._describe(episode)

    def _describe(self, episode: Episode | None) -> None:
        self._infos = _turn_infos(episode, self._as_told)
        self._drawn_turn = self.model.turn
        self.update()

    def _turn_changed(self, turn: int) -> None:
        """Repaint only the strip between the handle's old and new places: a step changes nothing else of the
        track (the played part and the handle), and every pixel repainted is uploaded again for the frame."""
        before, self._drawn_turn = self._drawn_turn, turn
        if not self._infos:
            self.update()
            return
        self.update(self.turns_strip(before, turn))

    def turns_strip(self, first: int, last: int) -> QRect:
        """The strip of the widget from ``first``'s slot to ``last``'s (either order), with the handle's reach."""
        left, right = sorted((self.x_for_turn(first), self.x_for_turn(last)))
        reach = self.HANDLE + 2  # the handle's pen and antialiased edge
        return QRectF(left - reach, 0, right - left + 2 * reach, self.height()).toAlignedRect()

    # ---- input ---------------------------------------------------------------------------------------
    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self._infos:
            self._dragging = True
            self.model.seek(self.turn_at(event.position().x()))
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._dragging:
            self.model.seek(self.turn_at(event.position().x()))
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        self._dragging = False
        super().mouseReleaseEvent(event)

    def wheelEvent(self, event: QWheelEvent) -> None:
        delta = event.angleDelta()
        self._wheel += delta.y() or delta.x()
        notches = int(self._wheel / 120)
        if notches:
            self._wheel -= notches * 120
            self.model.step(-notches)  # wheel down (negative) steps forward
        event.accept()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            self._show_tooltip(event)
            return True
        return super().event(event)

    def _show_tooltip(self, event: QHelpEvent) -> None:
        if not self._infos:
            QToolTip.showText(event.globalPos(), LEGEND_HTML, self)
            return
        turn = self.turn_at(event.pos().x())
        text = f"<b>{html.escape(self.tooltip_for_turn(turn))}</b><br><br><small>{LEGEND_HTML}</small>"
        # a rect per slot: moving to another turn updates the tooltip instead of keeping a stale one
        x = self.x_for_turn(turn) - self._slot_width() / 2
        rect = QRectF(x, 0, self._slot_width(), self.height()).toAlignedRect()
        QToolTip.showText(event.globalPos(), text, self, rect)

    # ---- painting ------------------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(event.rect(), self.palette().window())  # opaque: what the dock would have painted
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        mid = self.TRACK_Y if self.height() >= self.NUMBERS_FROM else self.height() / 2
        self._paint_track(painter, mid)
        if self._infos:
            turns = self._turns_in(event.rect())
            if self.height() >= self.NUMBERS_FROM:
                self._paint_numbers(painter, turns)
            self._paint_marks(painter, mid, turns)
            self._paint_notes(painter, mid, turns)
            self._paint_handle(painter, mid)
        painter.end()

    def _turns_in(self, rect: QRect) -> range:
        """The turns whose marks or number may reach into ``rect`` (a step repaints a strip of a few slots)."""
        return range(self.turn_at(rect.left() - self.REACH), self.turn_at(rect.right() + self.REACH) + 1)

    def _number_step(self) -> int:
        """Label every 1, 2, 5, 10, 20, 50... turns so labels stay about 36 px apart."""
        for step in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000):
            if step * self._slot_width() >= 36:
                return step
        return 10000

    def _paint_numbers(self, painter: QPainter, turns: range) -> None:
        font = painter.font()
        font.setPointSizeF(max(6.5, font.pointSizeF() * 0.8))
        painter.setFont(font)
        painter.setPen(self.palette().color(self.palette().ColorRole.PlaceholderText))
        step = self._number_step()
        for turn in (t for t in turns if t % step == 0):
            rect = QRectF(self.x_for_turn(turn) - self.REACH, self.height() - 16, 2 * self.REACH, 14)
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, str(turn))

    def _paint_track(self, painter: QPainter, mid: float) -> None:
        palette = self.palette()
        left, right = self.MARGIN, self.width() - self.MARGIN
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(palette.color(palette.ColorRole.Mid))
        painter.drawRoundedRect(QRectF(left, mid - 2, right - left, 4), 2, 2)
        if self._infos:
            played = self.x_for_turn(self.model.turn)
            painter.setBrush(palette.color(palette.ColorRole.Highlight))
            painter.drawRoundedRect(QRectF(left, mid - 2, played - left, 4), 2, 2)

    def _paint_marks(self, painter: QPainter, mid: float, turns: range) -> None:
        width = max(1.0, min(3.0, self._slot_width() * 0.5))
        for info in (self._infos[turn] for turn in turns):
            m, x = info.marks, self.x_for_turn(info.marks.turn)
            if m.speech:
                _vline(painter, SPEECH_COLOUR, width, x, mid - 13, mid - 5)
            if m.action:
                _vline(painter, ACTION_COLOUR, width, x, mid + 5, mid + 13)
            if m.error:  # drawn over speech and action: an error is what a researcher scans for
                _vline(painter, ERROR_COLOUR, width + 1, x, mid - 19, mid + 13)
            if m.score_change:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(QColor(SCORE_COLOURS[m.score_change]))
                painter.drawEllipse(QPointF(x, mid + 17), 2.5, 2.5)

    def _paint_notes(self, painter: QPainter, mid: float, turns: range) -> None:
        """A diamond on the track per marked turn, between the speech and action ticks: filled when
        bookmarked, hollow when only tagged or noted."""
        painter.setPen(QPen(QColor(NOTE_COLOUR), 2.0))
        for turn in (t for t in self.noted_turns() if t in turns):
            painter.setBrush(QColor(NOTE_COLOUR) if self._notes[turn].bookmark else QColor("white"))
            x = self.x_for_turn(turn)
            painter.drawPolygon(
                QPolygonF([QPointF(x, mid - 4.5), QPointF(x + 4.5, mid), QPointF(x, mid + 4.5), QPointF(x - 4.5, mid)])
            )

    def _paint_handle(self, painter: QPainter, mid: float) -> None:
        x = self.x_for_turn(self.model.turn)
        highlight = self.palette().color(self.palette().ColorRole.Highlight)
        painter.setPen(QPen(QColor("white"), 1.5))
        painter.setBrush(highlight)
        painter.drawEllipse(QPointF(x, mid), self.HANDLE, self.HANDLE)


def _vline(painter: QPainter, colour: str, width: float, x: float, y0: float, y1: float) -> None:
    pen = QPen(QColor(colour), width)
    pen.setCapStyle(Qt.PenCapStyle.FlatCap)
    painter.setPen(pen)
    painter.drawLine(QPointF(x, y0), QPointF(x, y1))


class TimelineWidget(QWidget):
    """Transport controls, speed, loop, the scrubber and a "turn 7 of 20" label, all driving one model."""

    def __init__(self, model: PlaybackModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.first_button = self._button(QStyle.StandardPixmap.SP_MediaSkipBackward, "First", "First turn (Home)")
        self.back_button = self._button(QStyle.StandardPixmap.SP_MediaSeekBackward, "Back", "Previous turn (Left)")
        self.play_button = self._button(QStyle.StandardPixmap.SP_MediaPlay, "Play", "Play (Space)")
        self.forward_button = self._button(QStyle.StandardPixmap.SP_MediaSeekForward, "Forward", "Next turn (Right)")
        self.last_button = self._button(QStyle.StandardPixmap.SP_MediaSkipForward, "Last", "Last turn (End)")
        self.error_button = self._error_button()
        self.previous_error_button = self._error_button("\u25c2 Error", "Ctrl+Shift+E", "previous")
        self.speed_spin = self._speed_spin()
        self.loop_check = QCheckBox("Loop", self)
        self.loop_check.setToolTip("Start again from turn 0 after the last turn when playing")
        self.loop_check.setChecked(model.loop)
        self.scrubber = TimelineScrubber(model, self)
        self.turn_label = QLabel(self)
        self.turn_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.turn_label.setAutoFillBackground(True)  # its new text each step: the dock is not painted beneath it
        self._layout()
        self._connect()
        self._episode_changed(model.episode)
        self._playing_changed(model.playing)

    # ---- construction ----------------------------------------------------------------------------------
    def _button(self, icon: QStyle.StandardPixmap, text: str, tooltip: str) -> QToolButton:
        button = QToolButton(self)
        button.setIcon(self.style().standardIcon(icon))
        button.setText(text)
        button.setToolTip(tooltip)
        button.setAutoRaise(True)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        return button

    def _error_button(self, text: str = "Error \u25b8", keys: str = "Ctrl+E", which: str = "next") -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(
            f"Jump to the {which} turn with an engine error, a mistake (a wrong answer, a misplaced block) or a "
            f"protocol error, wrapping around ({keys})"
        )
        button.setAutoRaise(True)
        button.setStyleSheet(f"QToolButton:enabled {{ color: {ERROR_COLOUR}; }}")
        return button

    def _speed_spin(self) -> QDoubleSpinBox:
        spin = QDoubleSpinBox(self)
        spin.setRange(MIN_SPEED, MAX_SPEED)
        spin.setDecimals(2)
        spin.setSingleStep(0.25)
        spin.setSuffix(" turns/s")
        spin.setValue(min(MAX_SPEED, max(MIN_SPEED, self.model.speed)))
        spin.setToolTip("Playback speed in turns per second")
        spin.setKeyboardTracking(False)
        return spin

    def _layout(self) -> None:
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.setSpacing(2)
        for button in (self.first_button, self.back_button, self.play_button, self.forward_button):
            layout.addWidget(button)
        layout.addWidget(self.last_button)
        layout.addSpacing(6)
        layout.addWidget(self.previous_error_button)
        layout.addWidget(self.error_button)
        layout.addSpacing(6)
        layout.addWidget(self.speed_spin)
        layout.addWidget(self.loop_check)
        layout.addSpacing(6)
        layout.addWidget(self.scrubber, 1)
        layout.addWidget(self.turn_label)

    def _connect(self) -> None:
        m = self.model
        self.first_button.clicked.connect(m.first)
        self.back_button.clicked.connect(lambda: m.step(-1))
        self.play_button.clicked.connect(m.toggle_play)
        self.forward_button.clicked.connect(lambda: m.step(1))
        self.last_button.clicked.connect(m.last)
        self.error_button.clicked.connect(m.next_error)
        self.previous_error_button.clicked.connect(m.previous_error)
        self.speed_spin.valueChanged.connect(m.set_speed)
        self.loop_check.toggled.connect(self._loop_toggled)
        m.episodeChanged.connect(self._episode_changed)
        m.turnChanged.connect(self._turn_changed)
        m.playingChanged.connect(self._playing_changed)

    # ---- public API ------------------------------------------------------------------------------------
    def label_text(self) -> str:
        """The turn label as shown ("turn 7 of 20", or "no episode")."""
        return self.turn_label.text()

    def set_as_told(self, as_told: bool) -> None:
        """While people play (True): the scrubber marks only what the engine tells the roles, and the error
        buttons are off, as they jump to mistakes too (the playback model's error turns); False undoes it."""
        self.scrubber.set_as_told(as_told)
        self._turn_changed(self.model.turn)

    # ---- model reactions -------------------------------------------------------------------------------
    def _loop_toggled(self, checked: bool) -> None:
        self.model.loop = checked

    def _episode_changed(self, episode: Episode | None) -> None:
        widest = max(888, episode.last_turn if episode is not None else 0)  # at least "turn 888 of 888"
        fix_label_size(self.turn_label, f"turn {widest} of {widest}", room=6)
        has = episode is not None
        for w in (self.first_button, self.back_button, self.play_button, self.forward_button, self.last_button):
            w.setEnabled(has)
        self._turn_changed(self.model.turn)

    def _turn_changed(self, turn: int) -> None:
        episode = self.model.episode
        if episode is None:
            self.turn_label.setText("no episode")
            for button in (self.error_button, self.previous_error_button):
                button.setEnabled(False)
            return
        self.turn_label.setText(f"turn {turn} of {self.model.last_turn}")
        errors = self.scrubber.error_turns()
        jumps = not self.scrubber.as_told
        for button in (self.error_button, self.previous_error_button):  # they wrap: any error will do
            button.setEnabled(jumps and bool(errors) and errors != [turn])

    def _playing_changed(self, playing: bool) -> None:
        icon = QStyle.StandardPixmap.SP_MediaPause if playing else QStyle.StandardPixmap.SP_MediaPlay
        self.play_button.setIcon(self.style().standardIcon(icon))
        self.play_button.setText("Pause" if playing else "Play")
        self.play_button.setToolTip("Pause (Space)" if playing else "Play (Space)")


__all__ = ["LEGEND_HTML", "TimelineScrubber", "TimelineWidget"]
