"""The dialogue of an episode, turn by turn, bound to the :class:`~simlab.gui.playback.PlaybackModel`.

:class:`DialoguePane` has three tabs. *Dialogue* is a :class:`QTextBrowser` holding the whole episode as HTML: a
heading per turn (``<a name="turn-N">``), public messages with the speaker in a stable colour, builder actions
in monospace, engine results (ok in green, FAILED in red with the error code, MISTAKE in red when the engine
took a move that works against the task), protocol errors in red and, when "Show private reasoning" is on,
private reasoning in grey italics. While people play (:meth:`DialoguePane.set_players`) it shows only what
their roles are told: public messages, and their own actions and results worded as the engine tells them (no
mistake and no tag, which the engine judged against the hidden target).
Every piece of model output is HTML-escaped: it is data, never markup. The HTML is rebuilt only when the
episode, the reasoning toggle or that wording changes; a turn change only moves the highlight (an extra
selection) and, when the turn's section is not already wholly in view, scrolls its heading to the top.
Clicking a message seeks the playback to its turn. Ctrl+F opens a search bar. *Raw* shows the episode's model
calls, for the current turn or for all turns, as chats
(:mod:`simlab.render.model_calls`): per call its turn, role, model, tokens, latency, retries and why, cost,
errors in red, then the messages sent as bubbles (system prompts shortened until "Full system prompts" is
ticked, pictures as thumbnails re-rendered from the recording and marked when they are byte for byte the ones
sent) and the reply; the episode's totals above. "JSON" shows the same records as pretty JSON. The Raw tab is
drawn only while it is shown. *Judges* shows what LLM judges said about the turn (or every turn), run by run
with their reasons (:mod:`simlab.render.judgments`), from the judgments stored beside the run's episodes.
"""

from __future__ import annotations

import bisect
import html
import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from PIL import Image
from PySide6.QtCore import QEvent, QObject, QRect, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QImage,
    QKeyEvent,
    QKeySequence,
    QShortcut,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QStackedWidget,
    QTabWidget,
    QTextBrowser,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from simlab.core.episode import Episode
from simlab.core.family import hex_colour
from simlab.core.judging import Judge, JudgmentRecord
from simlab.core.notes import Mark, mark_words
from simlab.gui.playback import PlaybackModel
from simlab.gui.scroll_bars import KeptScrollBar
from simlab.render.formatting import FAILED_RGB, LINK_SCHEME, MUTED_RGB, OK_RGB, TEXT_RGB, episode_colours, event_html
from simlab.render.judgments import judgments_html
from simlab.render.model_calls import ImageRef, ModelCall, call_pictures, calls_html, model_calls, total_line

JUDGES_TAB = 2
OK_COLOUR = hex_colour(OK_RGB)
ERROR_COLOUR = hex_colour(FAILED_RGB)
MUTED_COLOUR = hex_colour(MUTED_RGB)
TEXT_COLOUR = hex_colour(TEXT_RGB)
TURN_TINT = QColor(255, 236, 179, 150)
HIT_TINT = QColor(255, 213, 79)
MESSAGE_SCHEME = LINK_SCHEME
NOTE_BACKGROUND = "#fff3c4"


def dialogue_html(
    episode: Episode | None,
    show_reasoning: bool = False,
    players: Collection[str] | None = None,
    notes: Mapping[int, Mark] | None = None,
) -> str:
    """The whole episode as HTML: a ``turn-N`` anchor and heading per turn that has something to show, each
    event worded and coloured by the one formatter the exports use too, and under a heading the researcher's
    mark on that turn (``notes``: turn -> mark). While people play ``players`` (the roles they play), only
    what those roles are told is shown: everyone's public messages, and their own actions and results worded
    as the engine tells them (another role's actions, results and errors are not necessarily sent to them,
    and no mistake judged against the hidden target is)."""
    if episode is None:
        return f'<p style="color:{MUTED_COLOUR}">No episode loaded.</p>'
    colours = episode_colours(episode)
    by_turn: dict[int, list[str]] = {}
    as_told, actor = players is not None, None
    for index, event in enumerate(episode.events):
        actor = event.role if event.kind == "observation" else actor
        owner = event.role if event.role in episode.agents else actor  # the engine's result: the role that acted
        if players is not None and event.kind != "message" and owner not in players:
            continue
        part = event_html(event, colours, show_reasoning, link=index, as_told=as_told)
        if part:
            by_turn.setdefault(event.turn, []).append(part)
    notes = notes or {}
    parts = []
    for turn in sorted({*by_turn, *(t for t in notes if 0 <= t <= episode.last_turn)}):
        parts.append(
            f'<h3 style="margin:12px 0 4px 0"><a name="turn-{turn}" style="color:{TEXT_COLOUR}">Turn {turn}</a></h3>'
        )
        if turn in notes:
            parts.append(_note_html(notes[turn]))
        parts.extend(by_turn.get(turn, []))
    if not parts:
        parts.append(f'<p style="color:{MUTED_COLOUR}">Nobody said or did anything in this episode.</p>')
    return "<html><body>" + "\n".join(parts) + "</body></html>"


def _note_html(mark: Mark) -> str:
    """The researcher's mark on a turn, set apart from what the episode recorded (escaped: it is data)."""
    star = "\u2605 " if mark.bookmark else ""
    return (
        f'<p style="background:{NOTE_BACKGROUND}; margin:2px 0"><b>{star}Note</b> {html.escape(mark_words(mark))}</p>'
    )


def raw_text(episode: Episode | None, turn: int | None) -> str:
    """Pretty JSON of the raw model stream, for one turn (``turn``) or all of it (``None``)."""
    missing = _no_calls(episode, turn)
    if missing or episode is None:
        return missing
    return json.dumps([r for r in episode.raw if turn is None or r.get("turn") == turn], indent=2, ensure_ascii=False)


def raw_totals(episode: Episode | None, turn: int | None) -> str:
    """The episode's model-call totals, and the turn's when one turn is shown ('' without calls)."""
    if episode is None or not episode.raw:
        return ""
    text = f"Episode: {total_line(episode.raw)}"
    if turn is not None:
        text += f"\nTurn {turn}: {total_line([r for r in episode.raw if r.get('turn') == turn])}"
    return text


def _no_calls(episode: Episode | None, turn: int | None) -> str:
    """Why there is nothing to show for ``turn`` (None: all turns), or '' when there are calls."""
    if episode is None or not episode.raw:
        return "No model calls recorded for this episode"
    if turn is not None and not any(r.get("turn") == turn for r in episode.raw):
        return f"No model calls in turn {turn} ({len(episode.raw)} in the episode; tick 'All turns')"
    return ""


def pil_to_qimage(image: Image.Image) -> QImage:
    """A QImage holding a copy of ``image``: an opaque one as RGB32, the raster engine's own format, which it
    paints and makes a pixmap of without converting it (four times faster for a panel's picture than through
    RGBA); one with transparency (an alpha band, a transparent colour or palette) keeps it."""
    if image.has_transparency_data:
        rgba = image.convert("RGBA")
        qimage = QImage(rgba.tobytes(), rgba.width, rgba.height, 4 * rgba.width, QImage.Format.Format_RGBA8888)
        return qimage.copy()
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    packed = QImage(rgb.tobytes(), rgb.width, rgb.height, 3 * rgb.width, QImage.Format.Format_RGB888)
    return packed.convertToFormat(QImage.Format.Format_RGB32)  # a copy: the bytes go with this call


# ---- widgets ---------------------------------------------------------------------------------------------------


class _SearchBar(QWidget):
    """A find bar: the query, previous/next buttons and a "3 of 12" label. Enter = next, Shift+Enter = previous,
    Escape hides it."""

    nextRequested = Signal()
    previousRequested = Signal()
    queryChanged = Signal(str)
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.edit = QLineEdit(self)
        self.edit.setPlaceholderText("Find in dialogue (Enter: next, Shift+Enter: previous)")
        self.edit.setClearButtonEnabled(True)
        self.edit.installEventFilter(self)
        self.edit.textChanged.connect(self.queryChanged)
        self.label = QLabel("", self)
        self.label.setMinimumWidth(70)
        self.label.setStyleSheet(f"color: {MUTED_COLOUR}")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.label)
        for text, tip, signal in (
            ("\u25b2", "Previous match", self.previousRequested),
            ("\u25bc", "Next match", self.nextRequested),
        ):
            button = QToolButton(self)
            button.setText(text)
            button.setToolTip(tip)
            button.clicked.connect(signal)
            layout.addWidget(button)
        close = QToolButton(self)
        close.setText("\u2715")
        close.setToolTip("Close (Escape)")
        close.clicked.connect(self.close_bar)
        layout.addWidget(close)

    def open_bar(self) -> None:
        self.show()
        self.edit.setFocus()
        self.edit.selectAll()

    def close_bar(self) -> None:
        self.hide()
        self.closed.emit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.edit and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
                (self.previousRequested if shift else self.nextRequested).emit()
                return True
            if event.key() == Qt.Key.Key_Escape:
                self.close_bar()
                return True
        return super().eventFilter(watched, event)


class ChatBrowser(QTextBrowser):
    """A text browser that serves pictures from memory: ``pictures`` maps an ``img`` source to its image."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pictures: dict[str, QImage] = {}
        self.setOpenLinks(False)

    def loadResource(self, kind: int, name: QUrl | str) -> Any:
        picture = self.pictures.get(name.toString() if isinstance(name, QUrl) else name)
        if kind == QTextDocument.ResourceType.ImageResource.value and picture is not None:
            return picture
        return super().loadResource(kind, name)


class DialoguePane(QWidget):
    """The dialogue and raw model stream of the playback's episode; follows and drives the playback turn."""

    def __init__(self, playback: PlaybackModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._playback = playback
        self._episode: Episode | None = None
        self._turn_starts: list[tuple[int, int]] = []  # (document position, turn), by position
        self._selected_turn = 0
        self._hits: list[tuple[int, int]] = []
        self._hit_index = -1
        self._following_hit = False
        self._pictures: dict[int, dict[str, tuple[QImage, bool]]] = {}  # raw index -> re-rendered pictures
        self._judges: list[Judge] = []
        self._judgments: list[JudgmentRecord] = []  # the open episode's
        self._players: frozenset[str] | None = None  # the roles people play now: only what they are told
        self._notes: dict[int, Mark] = {}  # the researcher's marks on the open episode's turns
        self._build_ui()
        playback.episodeChanged.connect(self._on_episode)
        playback.turnChanged.connect(self._on_turn)
        self._on_episode(playback.episode)

    # ---- construction ------------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self._build_dialogue_tab(), "Dialogue")
        self.tabs.addTab(self._build_raw_tab(), "Raw")
        self.tabs.addTab(self._build_judges_tab(), "Judges")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        find = QShortcut(QKeySequence(QKeySequence.StandardKey.Find), self)
        find.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        find.activated.connect(self.open_search)

    def _build_dialogue_tab(self) -> QWidget:
        page = QWidget(self)
        self.reasoning_box = QCheckBox("Show private reasoning", page)
        self.reasoning_box.setToolTip("Private reasoning is never shown to other roles; grey italics here")
        self.reasoning_box.toggled.connect(self._rebuild)
        self.search_bar = _SearchBar(page)
        self.search_bar.hide()
        self.search_bar.queryChanged.connect(self._on_query)
        self.search_bar.nextRequested.connect(self.next_hit)
        self.search_bar.previousRequested.connect(self.previous_hit)
        self.search_bar.closed.connect(self._on_search_closed)
        self.browser = QTextBrowser(page)
        self.browser.setVerticalScrollBar(KeptScrollBar())  # it moves to the turn at every step
        self.browser.setOpenLinks(False)
        self.browser.setOpenExternalLinks(False)
        self.browser.anchorClicked.connect(self._on_anchor)
        self.browser.viewport().installEventFilter(self)
        self.browser.document().setDefaultStyleSheet("a { text-decoration: none; }")
        layout = QVBoxLayout(page)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.reasoning_box)
        layout.addWidget(self.search_bar)
        layout.addWidget(self.browser, 1)
        return page

    def _build_raw_tab(self) -> QWidget:
        page = QWidget(self)
        self.all_turns_box = QCheckBox("All turns", page)
        self.system_box = QCheckBox("Full system prompts", page)
        self.system_box.setToolTip("System prompts show their first lines until this is ticked")
        self.json_button = QToolButton(page)
        self.json_button.setText("JSON")
        self.json_button.setCheckable(True)
        self.json_button.setToolTip("The same records as the episode file holds them, as pretty JSON")
        for toggle in (self.all_turns_box, self.system_box, self.json_button):
            toggle.toggled.connect(self._refresh_raw)
        self.raw_totals = QLabel(page)
        self.raw_totals.setWordWrap(True)
        self.raw_totals.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.raw_totals.setStyleSheet(f"color: {MUTED_COLOUR}")
        self.raw_chat = ChatBrowser(page)
        self.raw_view = QPlainTextEdit(page)
        self.raw_view.setReadOnly(True)
        self.raw_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.raw_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.raw_stack = QStackedWidget(page)
        self.raw_stack.addWidget(self.raw_chat)
        self.raw_stack.addWidget(self.raw_view)
        bar = QHBoxLayout()
        for widget in (self.all_turns_box, self.system_box):
            bar.addWidget(widget)
        bar.addStretch(1)
        bar.addWidget(self.json_button)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.raw_totals)
        layout.addWidget(self.raw_stack, 1)
        self.tabs.currentChanged.connect(lambda _index: self._refresh_raw())
        return page

    def _build_judges_tab(self) -> QWidget:
        page = QWidget(self)
        self.judges_all_box = QCheckBox("All turns", page)
        self.judges_all_box.toggled.connect(self._refresh_judges)
        self.judges_view = QTextBrowser(page)
        self.judges_view.setOpenLinks(False)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.judges_all_box)
        layout.addWidget(self.judges_view, 1)
        self.tabs.currentChanged.connect(lambda _index: self._refresh_judges())
        return page

    # ---- public API --------------------------------------------------------------------------------------
    def set_judgments(self, judges: Sequence[Judge], records: Sequence[JudgmentRecord]) -> None:
        """The judges' verdicts about the open episode (``python main.py judge`` stores them beside the run's
        episodes); the Judges tab shows those about the playback's turn."""
        self._judges, self._judgments = list(judges), list(records)
        self._refresh_judges()

    @property
    def selected_turn(self) -> int:
        """The turn currently highlighted (always the playback's turn)."""
        return self._selected_turn

    @property
    def show_reasoning(self) -> bool:
        return self.reasoning_box.isChecked()

    def set_show_reasoning(self, show: bool) -> None:
        """Show or hide private reasoning (rebuilds the document)."""
        self.reasoning_box.setChecked(show)

    @property
    def as_told(self) -> bool:
        """Whether people are playing, so only what their roles are told is shown."""
        return self._players is not None

    def set_players(self, roles: Collection[str] | None) -> None:
        """While people play ``roles``, show only what those roles are told (see :func:`dialogue_html`); None
        shows everything again (rebuilds the document when it changes)."""
        players = frozenset(roles) if roles is not None else None
        if players != self._players:
            self._players = players
            self._rebuild()

    def set_notes(self, marks: Mapping[int, Mark]) -> None:
        """The researcher's marks on the open episode's turns (turn -> mark), shown under the turn headings
        (rebuilds the document when they change)."""
        if dict(marks) != self._notes:
            self._notes = dict(marks)
            self._rebuild()

    def turn_position(self, turn: int) -> int | None:
        """Document position of the heading of ``turn``, or None when the turn has no heading."""
        for position, t in self._turn_starts:
            if t == turn:
                return position
        return None

    def open_search(self) -> None:
        """Show the search bar and focus it (Ctrl+F)."""
        self.tabs.setCurrentIndex(0)
        self.search_bar.open_bar()

    def search(self, text: str) -> int:
        """Find every case-insensitive occurrence of ``text``; highlights them and returns the count."""
        self._hits = self._find_all(text)
        self._hit_index = -1
        self._update_hit_label()
        self._apply_selections()
        return len(self._hits)

    def next_hit(self) -> None:
        """Go to the next match (wrapping) and seek the playback to its turn."""
        self._go_to_hit(+1)

    def previous_hit(self) -> None:
        """Go to the previous match (wrapping) and seek the playback to its turn."""
        self._go_to_hit(-1)

    @property
    def hit_count(self) -> int:
        return len(self._hits)

    @property
    def current_hit(self) -> int:
        """Index of the current match (-1 before the first next/previous)."""
        return self._hit_index

    def turn_at(self, position: int) -> int | None:
        """The turn whose section holds document ``position``."""
        index = bisect.bisect_right([p for p, _ in self._turn_starts], position) - 1
        return self._turn_starts[index][1] if index >= 0 else None

    # ---- model -> view -----------------------------------------------------------------------------------
    def _on_episode(self, episode: Episode | None) -> None:
        self._episode = episode
        self._notes = {}  # another episode's: its own come with set_notes
        self._pictures = {}
        self.raw_chat.pictures = {}
        self._rebuild()
        self._refresh_judges()

    def _rebuild(self) -> None:
        self.browser.setHtml(dialogue_html(self._episode, self.show_reasoning, self._players, self._notes))
        self._turn_starts = self._scan_turn_anchors()
        if self.search_bar.isVisible() and self.search_bar.edit.text():
            self.search(self.search_bar.edit.text())
        else:
            self._hits, self._hit_index = [], -1
        self._show_turn(self._playback.turn)
        self._refresh_raw()

    def _scan_turn_anchors(self) -> list[tuple[int, int]]:
        out = []
        block = self.browser.document().begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                for name in fragment.charFormat().anchorNames():
                    if name.startswith("turn-"):
                        out.append((fragment.position(), int(name[5:])))
                it += 1
            block = block.next()
        return sorted(set(out))

    def _on_turn(self, turn: int) -> None:
        self._show_turn(turn)
        self._refresh_raw()
        self._refresh_judges()

    def _show_turn(self, turn: int) -> None:
        self._selected_turn = turn
        self._apply_selections()
        if self._following_hit:
            self.browser.ensureCursorVisible()
            return
        self._clear_text_selection()
        if self.turn_position(turn) is not None:
            self._follow_turn(turn)
        elif turn == 0:
            self.browser.verticalScrollBar().setValue(0)

    def _follow_turn(self, turn: int) -> None:
        """Bring ``turn``'s heading to the top unless its whole section is already in view with a line to spare
        below, as an editor follows its cursor: a turn already in view needs only its highlight. (Scrolling no
        further than needed, the new turn's last line at the bottom, saved nothing: Qt scrolls by copying
        pixels, but a turn's section is half the dock's height, and the old and new highlights repainted
        nearly the whole view at every step instead of every other one.)"""
        if not self.turn_in_view(turn):
            self.browser.scrollToAnchor(f"turn-{turn}")

    def turn_in_view(self, turn: int) -> bool:
        """Whether ``turn``'s section, from its heading to its last line, lies wholly in the dialogue's view
        with a free line below it (False for a turn without a heading)."""
        span = self._turn_range(turn)
        if span is None:
            return False
        top, bottom = (self._line_rect(position) for position in span)
        spare = self.browser.fontMetrics().lineSpacing()
        return top.top() >= 0 and bottom.bottom() + spare <= self.browser.viewport().height()

    def _line_rect(self, position: int) -> QRect:
        """The rectangle of the line holding document ``position``, in the dialogue's view."""
        cursor = QTextCursor(self.browser.document())
        cursor.setPosition(position)
        return self.browser.cursorRect(cursor)

    def _turn_range(self, turn: int) -> tuple[int, int] | None:
        for k, (position, t) in enumerate(self._turn_starts):
            if t == turn:
                end = self._turn_starts[k + 1][0] if k + 1 < len(self._turn_starts) else None
                last = self.browser.document().characterCount() - 1
                return position, (end - 1 if end is not None else last)
        return None

    def _apply_selections(self) -> None:
        """Tint the selected turn's section and mark every search hit (no HTML rebuild)."""
        selections = []
        span = self._turn_range(self._selected_turn)
        if span is not None:
            selections.append(self._selection(span[0], span[1], TURN_TINT, full_width=True))
        for start, end in self._hits:
            selections.append(self._selection(start, end, HIT_TINT))
        self.browser.setExtraSelections(selections)

    def _selection(self, start: int, end: int, colour: QColor, full_width: bool = False) -> QTextEdit.ExtraSelection:
        selection = QTextEdit.ExtraSelection()
        cursor = QTextCursor(self.browser.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        selection.cursor = cursor
        selection.format.setBackground(colour)
        if full_width:
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        return selection

    def _refresh_raw(self) -> None:
        """Redraw the Raw tab for the playback's turn (or all turns): only while it is shown, as re-rendering
        the pictures of a turn's calls takes tens of milliseconds."""
        if self.tabs.currentIndex() != 1:
            return
        turn = None if self.all_turns_box.isChecked() else self._playback.turn
        self.raw_totals.setText(raw_totals(self._episode, turn))
        self.raw_totals.setVisible(bool(self.raw_totals.text()))
        as_json = self.json_button.isChecked()
        self.raw_stack.setCurrentWidget(self.raw_view if as_json else self.raw_chat)
        if as_json:
            self.raw_view.setPlainText(raw_text(self._episode, turn))
            return
        missing = _no_calls(self._episode, turn)
        if missing or self._episode is None:
            self.raw_chat.setHtml(f'<p style="color:{MUTED_COLOUR}">{html.escape(missing)}</p>')
            return
        calls = model_calls(self._episode.raw, turn)
        colours = episode_colours(self._episode)
        self.raw_chat.setHtml(calls_html(calls, colours, self._picture_source, self.system_box.isChecked()))

    def _refresh_judges(self) -> None:
        """Redraw the Judges tab for the playback's turn (or all turns), only while it is shown."""
        if self.tabs.currentIndex() != JUDGES_TAB:
            return
        turn = None if self.judges_all_box.isChecked() else self._playback.turn
        shown = self._episode.episode_id if self._episode is not None else None
        records = [r for r in self._judgments if r.episode_id == shown]
        self.judges_view.setHtml(judgments_html(self._judges, records, turn))

    def _picture_source(self, call: ModelCall, ref: ImageRef) -> tuple[str, bool] | None:
        """A call's picture for the chat, re-rendered once per episode and served from memory."""
        if self._episode is None:
            return None
        if call.index not in self._pictures:
            found = call_pictures(self._episode, call)
            self._pictures[call.index] = {name: (pil_to_qimage(p.image), p.same) for name, p in found.items()}
        picture = self._pictures[call.index].get(ref.name)
        if picture is None:
            return None
        source = f"picture:{call.index}/{ref.name}"
        self.raw_chat.pictures[source] = picture[0]
        return source, picture[1]

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """After the dialogue re-wraps (a resize), bring the selected turn back into view."""
        if watched is self.browser.viewport() and event.type() == QEvent.Type.Resize:
            QTimer.singleShot(0, self._rescroll)
        return super().eventFilter(watched, event)

    def _rescroll(self) -> None:
        if self.browser.textCursor().hasSelection():
            self.browser.ensureCursorVisible()  # a search hit is being shown
        elif self.turn_position(self._selected_turn) is not None:
            self._follow_turn(self._selected_turn)

    # ---- view -> model -----------------------------------------------------------------------------------
    def _on_anchor(self, url: QUrl) -> None:
        """A clicked message seeks the playback to its turn."""
        if url.scheme() != MESSAGE_SCHEME or self._episode is None:
            return
        try:
            index = int(url.path())
        except ValueError:
            return
        if 0 <= index < len(self._episode.events):
            self._playback.seek(self._episode.events[index].turn)

    # ---- search ------------------------------------------------------------------------------------------
    def _find_all(self, text: str) -> list[tuple[int, int]]:
        if not text:
            return []
        document = self.browser.document()
        hits = []
        cursor = document.find(text, 0)
        while not cursor.isNull():
            hits.append((cursor.selectionStart(), cursor.selectionEnd()))
            cursor = document.find(text, cursor)
        return hits

    def _on_query(self, text: str) -> None:
        if self.search(text):
            self.next_hit()

    def _clear_text_selection(self) -> None:
        cursor = self.browser.textCursor()
        if cursor.hasSelection():
            cursor.clearSelection()
            self.browser.setTextCursor(cursor)

    def _on_search_closed(self) -> None:
        self._clear_text_selection()
        self._hits, self._hit_index = [], -1
        self._apply_selections()
        self.browser.setFocus()

    def _go_to_hit(self, step: int) -> None:
        if not self._hits:
            return
        if self._hit_index < 0:
            self._hit_index = 0 if step > 0 else len(self._hits) - 1
        else:
            self._hit_index = (self._hit_index + step) % len(self._hits)
        start, end = self._hits[self._hit_index]
        cursor = QTextCursor(self.browser.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        self.browser.setTextCursor(cursor)
        self._update_hit_label()
        turn = self.turn_at(start)
        self._following_hit = True
        try:
            if turn is not None:
                self._playback.seek(turn)
            self.browser.ensureCursorVisible()
        finally:
            self._following_hit = False

    def _update_hit_label(self) -> None:
        if not self.search_bar.edit.text() and not self._hits:
            self.search_bar.label.setText("")
        elif not self._hits:
            self.search_bar.label.setText("no matches")
        elif self._hit_index < 0:
            self.search_bar.label.setText(f"{len(self._hits)} matches")
        else:
            self.search_bar.label.setText(f"{self._hit_index + 1} of {len(self._hits)}")
