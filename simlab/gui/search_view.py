"""The Search dock: everything said in the open runs, searched with the full-text index of
:mod:`simlab.analysis.search` (``RUN/search.sqlite``), each result a click away from its episode and turn.

A query box and a list of results: per hit its episode, turn, role and kind on one line, the text around
the match under it with the matched words highlighted. A result clicked or activated with Enter asks the
window to open that episode at that turn (:attr:`SearchPanel.openRequested`).

The index is made and brought up to date off the GUI thread, one job at a time on the panel's own thread
pool, so the window never waits on it; the dock says how far indexing has got. A run is indexed again
(only its new or changed episodes and notes are read) when the runs open change, when its notes change and
when the dock is shown again after that; nothing is indexed while the dock is hidden. Queries are FTS5
syntax; one that is not is searched as a phrase, and the dock says so, and one past the length bound is
refused with the reason.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from PySide6.QtCore import (
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRunnable,
    QSize,
    Qt,
    QThreadPool,
    QTimer,
    Signal,
)
from PySide6.QtGui import QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QLabel,
    QLineEdit,
    QListView,
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from simlab.analysis.search import CLOSE, OPEN, Cancelled, Hit, QueryError, SearchIndex, Update, open_index
from simlab.core.errors import SimlabError
from simlab.core.recording import Run
from simlab.gui.background import collector_paused

LIMIT = 200
"""Hits shown for a query, best first, over every open run."""
TYPE_DELAY_MS = 300
"""A query is searched once typing pauses this long (Enter searches at once)."""
HIT_BACKGROUND = "#ffd54f"
MUTED = "#6b6b6b"
ERROR = "#c62828"
HINT = (
    'Search every message, reasoning, error, mistake and note of the open runs: words, "a phrase", a OR b, '
    "prefix*, kind:error, role:builder, an error code (same_colour) or a tag."
)


@dataclass(frozen=True)
class RunHit:
    """A hit and the name of the open run it is in."""

    run: str
    hit: Hit


@dataclass
class _Outcome:
    """What a job did: the hits of its query, what it says, the runs it brought up to date (name -> the
    version of their data it saw)."""

    generation: int
    query: str
    hits: list[RunHit] = field(default_factory=list)
    said: str = ""
    error: str = ""
    refreshed: dict[str, int] = field(default_factory=dict)


class _Signals(QObject):
    progress = Signal(int, str)
    finished = Signal(object)


class _Job(QRunnable):
    """Bring the indexes of the open runs up to date (those asked for), then search them: run on the panel's
    one-thread pool, so jobs never overlap and the indexes are only touched there."""

    def __init__(self, panel: SearchPanel, generation: int, query: str, refresh: dict[str, int]) -> None:
        super().__init__()
        self.panel, self.generation, self.query, self.refresh = panel, generation, query, refresh
        self.runs = dict(panel.runs)
        self.cancel = panel.cancel_event

    def run(self) -> None:
        with collector_paused():  # see gui/background.py: a collection here could deadlock the GUI thread
            self._run()

    def _run(self) -> None:
        outcome = _Outcome(self.generation, self.query)
        try:
            self._index(outcome)
            if self.query and self.generation == self.panel.generation:  # a newer query will answer instead
                self._search(outcome)
        except Cancelled:
            outcome.said = "Indexing stopped"
        self.panel.signals.finished.emit(outcome)

    def _index(self, outcome: _Outcome) -> None:
        indexes = self.panel.indexes
        for name in [n for n in indexes if n not in self.runs or indexes[n].run_dir != self.runs[n].path]:
            indexes.pop(name).close()
        for name, run in self.runs.items():
            if name in indexes and name not in self.refresh:
                continue
            try:
                index = open_index(run.path, run=run, progress=partial(self._progress, name))
            except (SimlabError, OSError) as exc:  # unreadable or unwritable: said, the other runs still searched
                outcome.error = f"{name} could not be indexed: {exc}"
                continue
            if name in indexes:
                indexes.pop(name).close()
            indexes[name] = index
            outcome.refreshed[name] = self.refresh.get(name, 0)
            outcome.said = _update_words(name, index.update)

    def _progress(self, name: str, done: int, total: int) -> None:
        if self.cancel.is_set():
            raise Cancelled
        if done == total or done % max(1, total // 100) == 0:
            try:
                self.panel.signals.progress.emit(self.generation, f"Indexing {name}: {done:,} of {total:,} episodes…")
            except RuntimeError:  # the panel is gone (the app is quitting): stop indexing
                raise Cancelled from None

    def _search(self, outcome: _Outcome) -> None:
        found: list[RunHit] = []
        phrase = ""
        for name, index in self.panel.indexes.items():
            try:
                result = index.find(self.query, LIMIT)
            except QueryError as exc:
                outcome.error = str(exc)
                return
            found += [RunHit(name, hit) for hit in result.hits]
            phrase = phrase or (result.as_phrase or "")
        found.sort(key=lambda h: h.hit.rank)  # bm25 ranks: lower is better; a stable sort keeps each run's order
        outcome.hits = found[:LIMIT]
        episodes = len({(h.run, h.hit.episode_id) for h in outcome.hits})
        counted = f"{len(outcome.hits)} hits in {episodes} episodes" if outcome.hits else "No matches"
        outcome.said = f"{counted}{' (the best ' + str(LIMIT) + ')' if len(found) > LIMIT else ''}"
        outcome.said += f"; {phrase[0].upper()}{phrase[1:]}" if phrase else ""


def _update_words(name: str, update: Update) -> str:
    """What bringing a run's index up to date did, in a few words."""
    done = f"{name}: {len(update.indexed):,} episodes indexed now, {update.kept:,} already were"
    return done + (f"; {len(update.problems)} could not be read" if update.problems else "")


class _HitDelegate(QStyledItemDelegate):
    """Draws a result's HTML (its place on one line, the text with the match highlighted under it)."""

    def _document(self, text: str, width: int, colour: str) -> QTextDocument:
        document = QTextDocument()
        document.setDocumentMargin(4)
        document.setDefaultStyleSheet(f"body {{ color: {colour}; }}")
        document.setHtml(f"<body>{text}</body>")
        document.setTextWidth(max(width, 120))
        return document

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        view = QStyleOptionViewItem(option)
        self.initStyleOption(view, index)
        selected = bool(view.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        document = self._document(view.text, view.rect.width(), view.palette.color(role).name())
        view.text = ""
        style = view.widget.style() if view.widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, view, painter, view.widget)
        painter.save()
        painter.translate(view.rect.topLeft())
        document.drawContents(painter)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        document = self._document(str(index.data()), option.rect.width(), "black")
        return QSize(int(document.idealWidth()), int(document.size().height()))


def hit_html(item: RunHit, several_runs: bool) -> str:
    """A result as HTML: episode, turn, role and kind (and run, when several are open), then the text around
    the match with the matched words highlighted. Everything recorded is escaped: it is data."""
    hit = item.hit
    place = [f"<b>{html.escape(hit.episode_id)}</b>", f"turn {hit.turn}", html.escape(hit.role), html.escape(hit.kind)]
    if several_runs:
        place.insert(0, html.escape(item.run))
    snippet = html.escape(hit.snippet.replace("\n", " "))
    snippet = snippet.replace(OPEN, f'<span style="background:{HIT_BACKGROUND}">').replace(CLOSE, "</span>")
    return f"{' · '.join(place)}<br><span>{snippet}</span>"


class SearchPanel(QWidget):
    """The Search dock's widget: ``set_runs`` gives it the open runs, ``search`` (or typing) asks, and a result
    activated asks for its turn with ``openRequested(run, episode_id, turn)``."""

    openRequested = Signal(str, str, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runs: dict[str, Run] = {}
        self.indexes: dict[str, SearchIndex] = {}  # by run name; touched only by jobs (on the pool's one thread)
        self.hits: list[RunHit] = []
        self.generation = 0  # the latest query's number: a job's outcome for an older one is dropped
        self.shown = False  # on the screen (set_shown), not merely visible behind another tab
        self.cancel_event = threading.Event()
        self.signals = _Signals(self)
        self.signals.progress.connect(self._on_progress)
        self.signals.finished.connect(self._on_finished)
        self._wanted: dict[str, int] = {}  # per run, the version of its data the index must have seen
        self._seen: dict[str, int] = {}  # per run, the version its index was last brought up to date with
        self._asked: dict[str, int] = {}  # per run, the version a job queued or running brings it up to
        self._counted: dict[str, int] = {}  # per run, its episodes when a job was last asked to index it
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._busy = 0  # jobs queued or running
        self._typing = QTimer(self, singleShot=True, interval=TYPE_DELAY_MS)
        self._typing.timeout.connect(lambda: self.search(self.query_edit.text()))
        self._build_ui()

    def _build_ui(self) -> None:
        self.query_edit = QLineEdit(self)
        self.query_edit.setPlaceholderText('Search the run: words, "a phrase", kind:error, role:D1, a tag…')
        self.query_edit.setClearButtonEnabled(True)
        self.query_edit.setToolTip(HINT)
        self.query_edit.textEdited.connect(lambda _text: self._typing.start())
        self.query_edit.returnPressed.connect(lambda: self.search(self.query_edit.text()))
        self.status = QLabel(HINT, self)
        self.status.setWordWrap(True)
        self.status.setStyleSheet(f"color: {MUTED}")
        self.results = QListWidget(self)
        self.results.setItemDelegate(_HitDelegate(self.results))
        self.results.setResizeMode(QListView.ResizeMode.Adjust)
        self.results.setVerticalScrollMode(QListView.ScrollMode.ScrollPerPixel)
        self.results.setAlternatingRowColors(True)
        self.results.itemClicked.connect(self._activate)
        self.results.itemActivated.connect(self._activate)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.query_edit)
        layout.addWidget(self.status)
        layout.addWidget(self.results, 1)

    # ---- public API -------------------------------------------------------------------------------------
    def set_runs(self, runs: Mapping[str, Run]) -> None:
        """The open runs (name -> run): each is indexed again, now when the dock is shown, else once it is;
        indexing still going for runs no longer open stops."""
        if {n: r.path for n, r in runs.items()} != {n: r.path for n, r in self.runs.items()}:
            self.cancel_event.set()  # the runs indexed now may be closed: stop, the next job indexes what is open
            self.cancel_event = threading.Event()
            self.hits = []
            self.results.clear()
        self.runs = dict(runs)
        for name in self.runs:
            self._wanted[name] = self._wanted.get(name, 0) + 1
        self._refresh_if_shown()

    def notes_changed(self, run_dir: Path) -> None:
        """The notes of the run in ``run_dir`` changed: its index takes them in before the next search (the
        query shown is searched again)."""
        for name, run in self.runs.items():
            if run.path == run_dir:
                self._wanted[name] = self._wanted.get(name, 0) + 1
        self._refresh_if_shown()

    def search(self, query: str) -> None:
        """Search the open runs for ``query`` (their indexes brought up to date first, off the GUI thread);
        the results replace those shown when the search ends."""
        self._typing.stop()
        if self.query_edit.text() != query:
            self.query_edit.setText(query)
        self._start(query)

    @property
    def busy(self) -> bool:
        """Whether indexing or a search is under way."""
        return self._busy > 0

    def activate(self, row: int) -> None:
        """Open result ``row`` (as a click does)."""
        self._activate(self.results.item(row))

    def shutdown(self) -> None:
        """Stop indexing, wait for the job under way and close the indexes (the window is closing)."""
        self.cancel_event.set()
        self._pool.clear()
        self._pool.waitForDone()
        for index in self.indexes.values():
            index.close()
        self.indexes.clear()

    # ---- jobs -------------------------------------------------------------------------------------------
    def _stale(self) -> dict[str, int]:
        """The runs whose index no job has been asked to bring up to date yet (name -> version); a run that
        lists more or fewer episodes than then (it is being played, its index followed) is one."""
        for name, run in self.runs.items():
            if name in self._counted and self._counted[name] != len(run.summaries):
                self._wanted[name] = self._wanted.get(name, 0) + 1
        done = {n: max(self._seen.get(n, 0), self._asked.get(n, 0)) for n in self.runs}
        return {n: v for n, v in self._wanted.items() if n in self.runs and done[n] < v}

    def set_shown(self, shown: bool) -> None:
        """Whether the panel is on the screen (its dock's ``visibilityChanged``: a dock tabbed behind another
        still says ``isVisible()``); the runs are indexed only then, so opening a sweep of 100,000 episodes
        reads no episode file until the dock is brought forward."""
        self.shown = shown
        if shown and self._stale():
            self._start(self.query_edit.text())

    def _refresh_if_shown(self) -> None:
        if self.shown and self.runs and (self._stale() or self.query_edit.text().strip()):
            self._start(self.query_edit.text())

    def _start(self, query: str) -> None:
        if not self.runs:
            self._say("Open a run to search it", error=False)
            return
        self.generation += 1
        self._busy += 1
        refresh = self._stale()
        self._asked.update(refresh)
        self._counted.update({name: len(self.runs[name].summaries) for name in refresh})
        self._pool.start(_Job(self, self.generation, query.strip(), refresh))

    def _on_progress(self, generation: int, text: str) -> None:
        if self.busy:
            self._say(text, error=False)

    def _on_finished(self, outcome: _Outcome) -> None:
        self._busy -= 1
        for name, version in outcome.refreshed.items():
            self._seen[name] = max(self._seen.get(name, 0), version)
        if outcome.generation != self.generation:
            return  # an older query's: the newer one's outcome follows
        if outcome.query:
            self._show_hits(outcome.hits)
        self._say(outcome.error or outcome.said or HINT, error=bool(outcome.error))

    def _show_hits(self, hits: list[RunHit]) -> None:
        self.hits = hits
        self.results.clear()
        several = len({h.run for h in hits}) > 1 or len(self.runs) > 1
        for row, hit in enumerate(hits):
            item = QListWidgetItem(hit_html(hit, several))
            item.setData(Qt.ItemDataRole.UserRole, row)
            item.setToolTip(f"Open {hit.hit.episode_id} at turn {hit.hit.turn} (click or Enter)")
            self.results.addItem(item)

    def _say(self, text: str, error: bool) -> None:
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {ERROR if error else MUTED}")

    def _activate(self, item: QListWidgetItem | None) -> None:
        if item is None:
            return
        found = self.hits[int(item.data(Qt.ItemDataRole.UserRole))]
        self.openRequested.emit(found.run, found.hit.episode_id, found.hit.turn)
