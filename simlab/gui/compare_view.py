"""The *Compare* dock: the open episode's task as another open run played it, turn by turn, side by side.

For the episode the window shows, :class:`CompareView` finds the same task in the other open runs by the test
``report`` pairs episodes by (:func:`~simlab.analysis.pairing.pair_by_task`: the same task id and repeat, and
the same task in both runs' ``run.json``); a menu picks which of them to compare with (only runs that played
the task are listed). A run whose episode has the same task id and repeat but holds another task (generated
ids name other structures under another seed) is never compared: the headline says so. Both episodes are lined
up by :func:`~simlab.analysis.episode_diff.episode_diff`, the alignment a fork's diff uses too: every turn from
1, one row each, the turns whose lines differ tinted and the first of them marked, and beside them the
summaries and every metric, differences tinted. The view follows the window's playback (the current turn's
row selected and scrolled to) and a click on a row moves the playback there. The other run's episode opens in
this window or in a second one beside it (:attr:`CompareView.openRequested`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from simlab.analysis.episode_diff import EpisodeDiff, TurnDiff, episode_diff, value_text
from simlab.analysis.pairing import TASKS_DIFFER, pair_by_task, recorded_tasks, task_key
from simlab.analysis.report import natural_key
from simlab.core.episode import Episode
from simlab.core.errors import SimlabError
from simlab.core.recording import Run
from simlab.gui.fork_view import DIFFERENT
from simlab.gui.playback import PlaybackModel

FIRST_MARK = "first difference"
NO_EPISODE = "Open an episode to compare it with the same task played by the other open runs."
NOT_FROM_RUN = "This episode is not from an open run: there is nothing to compare it with."
ONE_RUN = "Only one run is open: File > Add Run... opens another beside it to compare the same tasks."


class CompareView(QWidget):
    """The open episode against the same task in another open run (see the module's docstring).

    The window tells it the open runs (:meth:`set_runs`) and which run the open episode came from
    (:meth:`show_episode`); it follows the playback's turn by itself. Emits :attr:`openRequested` with the
    other run's name, its episode id and whether a new window is wanted.
    """

    openRequested = Signal(str, str, bool)

    def __init__(self, playback: PlaybackModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.playback = playback
        self.runs: dict[str, Run] = {}
        self.tasks: dict[str, dict[str, str]] = {}  # each open run's recorded tasks (pairing.recorded_tasks)
        self.run: str | None = None  # the open episode's run
        self.episode: Episode | None = None
        self.other: tuple[str, Episode] | None = None  # the run compared with, and its episode of the task
        self.diff: EpisodeDiff | None = None
        self.partners: dict[str, Mapping[str, Any]] = {}  # other runs' summaries of the open episode's task
        self.differing: dict[str, Mapping[str, Any]] = {}  # ... of its task id and repeat holding another task
        self._preferred: str | None = None  # the run last chosen to compare with, kept while it applies
        self._loaded: dict[tuple[str, str], Episode] = {}  # the other run's episode last read, by (run, id)
        self.partner_combo = QComboBox(self)
        self.partner_combo.setToolTip("The open run to compare with (only those that played this task)")
        self.partner_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.open_here = QPushButton("Open Here", self)
        self.open_here.setToolTip("Show the other run's episode in this window, at this turn")
        self.open_beside = QPushButton("Open in New Window", self)
        self.open_beside.setToolTip("Show the other run's episode in a window beside this one, playback linked")
        self.headline = QLabel(self)
        self.headline.setWordWrap(True)
        self.headline.setTextFormat(Qt.TextFormat.PlainText)
        self.headline.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)  # alone, it stays on top
        self.turns = _table(("Turn", "", ""))
        self.summary = _table(("", "", ""))
        self.summary.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self._layout()
        self.partner_combo.currentIndexChanged.connect(self._partner_changed)
        self.open_here.clicked.connect(lambda: self._request(new_window=False))
        self.open_beside.clicked.connect(lambda: self._request(new_window=True))
        self.turns.cellClicked.connect(self._row_clicked)
        playback.turnChanged.connect(self._follow_turn)
        self._refresh()

    def _layout(self) -> None:
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(QLabel("Compare with:", self))
        bar.addWidget(self.partner_combo)
        bar.addStretch(1)
        bar.addWidget(self.open_here)
        bar.addWidget(self.open_beside)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(self.turns)
        self.splitter.addWidget(self.summary)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.headline)
        layout.addWidget(self.splitter, 1)

    # ---- what the window tells it ---------------------------------------------------------------------
    def set_runs(self, runs: Mapping[str, Run]) -> None:
        """The open runs by name (the browser's names); the comparison is made again on them."""
        self.runs = dict(runs)
        self.tasks = {name: recorded_tasks(run.config) for name, run in self.runs.items()}
        self._loaded = {key: e for key, e in self._loaded.items() if key[0] in self.runs}
        if self.run is not None and self.run not in self.runs:  # its run was closed
            self.run, self.episode = None, None
        self._refresh()

    def show_episode(self, run: str | None, episode: Episode | None) -> None:
        """The window shows ``episode`` of open run ``run`` (None: no episode, or one of no open run)."""
        self.run, self.episode = run, episode
        self._refresh()

    # ---- what it offers ---------------------------------------------------------------------------------
    def partner_runs(self) -> list[str]:
        """The other open runs that played the open episode's task, in the order the runs were opened."""
        return list(self.partners)

    def _counterparts(self) -> tuple[dict[str, Mapping[str, Any]], dict[str, Mapping[str, Any]]]:
        """Each other open run's episode of the open episode's task id and repeat (the first by id), split by
        :func:`pair_by_task` into those of the same task and those holding another task under that id."""
        same: dict[str, Mapping[str, Any]] = {}
        differ: dict[str, Mapping[str, Any]] = {}
        if self.episode is None or self.run not in self.runs:
            return same, differ
        mine = self.episode.summary
        key = task_key(mine)
        for name, run in self.runs.items():
            if name == self.run or key is None:
                continue
            theirs = sorted((s for s in run.summaries if task_key(s) == key), key=_by_id)
            pairing = pair_by_task([(key, mine)], self.tasks[self.run], [(key, s) for s in theirs], self.tasks[name])
            if pairing.pairs:
                same[name] = pairing.pairs[0][1]
            elif pairing.differing:
                differ[name] = pairing.differing[0][1]
        return same, differ

    def choose(self, run: str) -> bool:
        """Compare with ``run``; False when it did not play this task."""
        index = self.partner_combo.findData(run)
        if index < 0:
            return False
        self._preferred = run
        self.partner_combo.setCurrentIndex(index)
        return True

    def row_of_turn(self, turn: int) -> int | None:
        """The table row of ``turn``, or None (turn 0, before the first move, has none)."""
        if self.diff is None:
            return None
        row = turn - self.diff.from_turn
        return row if 0 <= row < len(self.diff.turns) else None

    def headline_text(self) -> str:
        return self.headline.text()

    # ---- building ---------------------------------------------------------------------------------------
    def _refresh(self) -> None:
        """Pair the open episode with the other runs' again, refill the run menu, then compare with the chosen
        run."""
        self.partners, self.differing = self._counterparts()
        partners = self.partner_runs()
        choice = self._preferred if self._preferred in partners else (partners[0] if partners else None)
        self.partner_combo.blockSignals(True)
        self.partner_combo.clear()
        for name in partners:
            self.partner_combo.addItem(name, name)
        self.partner_combo.setCurrentIndex(partners.index(choice) if choice is not None else -1)
        self.partner_combo.blockSignals(False)
        self._compare(choice)

    def _partner_changed(self) -> None:
        choice = self.partner_combo.currentData()
        if isinstance(choice, str):
            self._preferred = choice
            self._compare(choice)

    def _compare(self, partner: str | None) -> None:
        self.other, self.diff = None, None
        reason = self._why_not()
        if partner is not None and self.episode is not None:
            try:
                self.other = partner, self._episode_of(partner)
                self.diff = episode_diff(self.episode, self.other[1])
            except (SimlabError, KeyError) as exc:  # a damaged file in the other run: said, not raised
                self.other, reason = None, f"Could not read run {partner}'s episode of this task:\n{exc}"
        if self.diff is None:
            self.headline.setText(reason)
        self._fill()

    def _episode_of(self, partner: str) -> Episode:
        """``partner``'s episode of the open episode's task (the last one read is kept, so a run added or
        closed does not read it again)."""
        key = (partner, str(self.partners[partner]["episode_id"]))
        if key not in self._loaded:
            self._loaded = {key: self.runs[partner].load_episode(key[1])}
        return self._loaded[key]

    def _why_not(self) -> str:
        """The headline when no other run's episode is shown."""
        if self.episode is None:
            return NO_EPISODE
        if self.run is None:
            return NOT_FROM_RUN
        if len(self.runs) < 2:
            return ONE_RUN
        if self.differing:
            return self._differing_text()
        return f"No other open run played task {self.episode.summary.get('task_id') or '?'}."

    def _differing_text(self) -> str:
        """A line per other run whose episode of this task id and repeat holds another task."""
        task = self.episode.summary.get("task_id") if self.episode is not None else None
        return "\n".join(
            f"{summary.get('episode_id')} of {name} has task id {task} too, but run {name} recorded another task "
            f"under that id: {TASKS_DIFFER}."
            for name, summary in self.differing.items()
        )

    def _fill(self) -> None:
        diff, other = self.diff, self.other
        self.open_here.setEnabled(other is not None)
        self.open_beside.setEnabled(other is not None)
        self.splitter.setVisible(diff is not None)  # no empty tables headed by the runs last compared
        if diff is None or other is None or self.episode is None or self.run is None:
            self.turns.setRowCount(0)
            self.summary.setRowCount(0)
            return
        headline = _headline(self.run, self.episode, other, diff)
        if self.differing:  # a third run's episode of this task id that is another task: said, not compared
            headline += "\n" + self._differing_text()
        self.headline.setText(headline)
        names = (self.run, other[0])
        self.turns.setHorizontalHeaderLabels(("Turn", *names))
        self.summary.setHorizontalHeaderLabels(("", *names))
        _fill_rows(self.turns, [_turn_row(t, t.turn == diff.first_difference) for t in diff.turns])
        _fill_rows(self.summary, [_summary_row(row) for row in diff.outcome])
        self._fit_summary()
        self._follow_turn(self.playback.turn)

    def _fit_summary(self) -> None:
        """Widen the summaries to show their names and numbers whole (up to half the dock), unless they are
        wider already (dragged so)."""
        sizes = self.splitter.sizes()
        header = self.summary.horizontalHeader()
        wanted = header.length() + self.summary.verticalScrollBar().sizeHint().width() + 2 * self.summary.frameWidth()
        total = sum(sizes)
        if total and sizes[1] < wanted:
            self.splitter.setSizes([max(total - wanted, total // 2), min(wanted, total // 2)])

    # ---- reactions ----------------------------------------------------------------------------------------
    def _follow_turn(self, turn: int) -> None:
        row = self.row_of_turn(turn) if self.playback.episode is self.episode else None
        if row is None:
            self.turns.clearSelection()
            return
        self.turns.selectRow(row)
        self.turns.scrollTo(self.turns.model().index(row, 0), QAbstractItemView.ScrollHint.EnsureVisible)

    def _row_clicked(self, row: int, _column: int) -> None:
        if self.diff is not None and self.playback.episode is self.episode:
            self.playback.seek(self.diff.turns[row].turn)

    def _request(self, new_window: bool) -> None:
        if self.other is None or self.episode is None:
            return
        run, episode = self.other
        if not new_window:
            self._preferred = self.run  # shown here next, the episode now open is the one to compare with
        self.openRequested.emit(run, episode.episode_id, new_window)


# ---- the tables (pure helpers) ------------------------------------------------------------------------------
Cell = tuple[str, bool]
"""A cell's text and whether its row differs (tinted)."""


def _table(headers: Sequence[str]) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(list(headers))
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setWordWrap(True)
    table.verticalHeader().setVisible(False)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
    # rows as tall as their wrapped lines at the columns' current widths (a narrower dock makes them taller)
    table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    return table


def _turn_row(turn: TurnDiff, first: bool) -> tuple[list[str], bool, bool]:
    """A turn's cells (its number, marked when it differs, and each episode's lines), whether it differs and
    whether it is the first to."""
    mark = "" if turn.same else (f" ≠ {FIRST_MARK}" if first else " ≠")
    lines = ["\n".join(side) or "(nothing)" for side in (turn.a, turn.b)]
    return [f"{turn.turn}{mark}", *lines], not turn.same, first


def _summary_row(row: tuple[str, Any, Any]) -> tuple[list[str], bool, bool]:
    name, a, b = row
    return [name.replace("_", " "), value_text(a), value_text(b)], a != b, False


def _fill_rows(table: QTableWidget, rows: Sequence[tuple[list[str], bool, bool]]) -> None:
    tint = QBrush(QColor(DIFFERENT))
    bold = QFont()
    bold.setBold(True)
    table.setRowCount(len(rows))
    for r, (cells, differs, first) in enumerate(rows):
        for c, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setTextAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
            if differs:
                item.setBackground(tint)
            if first and c == 0:  # the turn's number: bold lines in both columns read heavily
                item.setFont(bold)
            table.setItem(r, c, item)


def _by_id(summary: Mapping[str, Any]) -> tuple[tuple[int, int, str], ...]:
    """Episodes in id order, digits by value, as ``report`` orders a run's (the first of a task is paired)."""
    return natural_key(str(summary.get("episode_id", "")))


def _headline(run: str, episode: Episode, other: tuple[str, Episode], diff: EpisodeDiff) -> str:
    mine = f"{episode.episode_id} of {run}"
    theirs = f"{other[1].episode_id} of {other[0]}"
    first = diff.first_difference
    if first is None:
        return f"{mine} and {theirs}: every turn is the same."
    return (
        f"{mine} against {theirs}: they first differ at turn {first} (marked); "
        f"{diff.differing} of {len(diff.turns)} turns differ (tinted)."
    )
