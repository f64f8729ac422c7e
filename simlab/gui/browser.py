"""The episode browser: a sortable, filterable table of the index lines of one run or of several.

It reads only the summaries, as columns (``Run.table()``; :mod:`simlab.gui.browser_model`), and the unreadable
index lines (``Run.problems``), never an episode file, so runs of 100,000 episodes open at once. Episode ids
repeat across runs (two runs of the same tasks), so a row is known by its :class:`EpisodeKey`, (run, episode
id), never by the id alone; with more than one run a *Run* column and a run filter appear. A task id can name
different tasks in different runs (generated ids name other structures under another seed): by the test
``report`` pairs episodes by (:func:`~simlab.analysis.pairing.same_task`), such a row's task reads
``structure_001 (≠ B)`` and the task menu lists each task apart, so episodes of different tasks are never shown
as one task. Besides the outcome toggles, the task menu and the search box, a filter expression (the syntax of
``report --where``, :mod:`simlab.analysis.where`) narrows the rows, and the Tags column shows the runs' notes
(``RUN/notes.json``), which a row's context menu adds to. Choosing an episode emits
:attr:`EpisodeBrowser.episodeActivated`; what happens next (loading it into the playback model) is the main
window's business.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMenu,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from simlab.analysis.where import STANDARD_FIELDS, WhereError, parse_where
from simlab.core.errors import SimlabError
from simlab.core.notes import RunNotes, change_notes
from simlab.core.run_table import RunTable
from simlab.gui.browser_model import (
    COLUMN_INDEX,
    COLUMNS,
    GROUP,
    OUTCOME_COLOURS,
    OUTCOMES,
    TAG_FIELD,
    EpisodeFilterProxy,
    EpisodeKey,
    RunIndexModel,
    compact_agents,
    natural_key,
    task_label,
    tint,
)

__all__ = [
    "ALL_RUNS",
    "ALL_TASKS",
    "COLUMNS",
    "COLUMN_INDEX",
    "EpisodeBrowser",
    "EpisodeFilterProxy",
    "EpisodeKey",
    "RunIndexModel",
    "compact_agents",
    "natural_key",
    "task_label",
]

ALL_TASKS = "All tasks"
ALL_RUNS = "All runs"
WHERE_DELAY_MS = 600
"""A filter expression is applied on Enter, or this long after the last key (a pause, not every letter)."""


# ---- the widget --------------------------------------------------------------------------------------------
class _EpisodeTable(QTableView):
    """A table view whose Enter/Return reports the current row on every platform."""

    rowActivated = Signal(QModelIndex)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.currentIndex().isValid():
            self.rowActivated.emit(self.currentIndex())
            event.accept()
            return
        super().keyPressEvent(event)


class EpisodeBrowser(QWidget):
    """The episodes of one run or several as a sortable, filterable table with outcome toggles, a task menu, a
    search box, a filter expression, a Tags column and, with several runs, a run menu.

    Emits :attr:`episodeActivated` with the run's name and the episode id on Enter/Return or a double-click.
    """

    episodeActivated = Signal(str, str)
    notesChanged = Signal(object)  # the folder of a run whose notes a row's menu changed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = RunIndexModel(self)
        self.proxy = EpisodeFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.table = self._make_table()
        self.outcome_buttons = {name: self._make_outcome_button(name) for name in OUTCOMES}
        self.task_combo = QComboBox(self)
        self.task_combo.setToolTip("Show one task only")
        self.task_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.task_combo.addItem(ALL_TASKS, "")
        self.run_combo = QComboBox(self)
        self.run_combo.setToolTip("Show one run's episodes only")
        self.run_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.run_combo.setVisible(False)  # only when several runs are open
        self.search_edit = QLineEdit(self)
        self.search_edit.setPlaceholderText("Search episodes...")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.setToolTip("Case-insensitive search in episode id, task, agents and outcome")
        self.where_edit = QLineEdit(self)
        self.where_edit.setPlaceholderText('Filter: score < 0.3 and errors > 2 and outcome == "failure"')
        self.where_edit.setClearButtonEnabled(True)
        self.where_error = QLabel(self)
        self.where_error.setStyleSheet("QLabel { color: #c62828; }")
        self.where_error.setTextFormat(Qt.TextFormat.PlainText)
        self.where_error.setWordWrap(True)
        self.where_error.hide()
        self._where_timer = QTimer(self)
        self._where_timer.setSingleShot(True)
        self._where_timer.setInterval(WHERE_DELAY_MS)
        self.folders: dict[str, Path] = {}  # each run's folder, where its notes are kept
        self.tag_dialog: QInputDialog | None = None  # the open "Add tag" question, if any
        self.count_label = QLabel(self)
        self.problems_label = self._make_banner()
        self._layout()
        self._connect()
        self._update_count()

    # ---- construction ----------------------------------------------------------------------------------
    def _make_table(self) -> _EpisodeTable:
        table = _EpisodeTable(self)
        table.setModel(self.proxy)
        table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # index order at first
        table.setSortingEnabled(True)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        table.setAlternatingRowColors(True)
        table.setWordWrap(False)
        table.setTextElideMode(Qt.TextElideMode.ElideRight)
        table.verticalHeader().setVisible(False)
        table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 8)
        header = table.horizontalHeader()
        header.setResizeContentsPrecision(200)  # sample rows for widths, so 10,000 rows stay instant
        header.setHighlightSections(False)
        header.setStretchLastSection(False)
        return table

    def _make_outcome_button(self, name: str) -> QToolButton:
        button = QToolButton(self)
        button.setText(name)
        button.setCheckable(True)
        button.setChecked(True)
        button.setToolTip(f"Show {name} episodes")
        colour = OUTCOME_COLOURS[name]
        button.setStyleSheet(
            "QToolButton { padding: 2px 8px; border: 1px solid palette(mid); border-radius: 3px; }"
            f"QToolButton:checked {{ color: {colour}; font-weight: bold; border-color: {colour};"
            f" background: {tint(colour).name(QColor.NameFormat.HexArgb)}; }}"
            "QToolButton:!checked { color: palette(mid); }"
        )
        return button

    def _make_banner(self) -> QLabel:
        label = QLabel(self)
        label.setStyleSheet(
            "QLabel { background: #fff3cd; color: #664d03; border: 1px solid #e6c86e;"
            " border-radius: 3px; padding: 4px 6px; }"
        )
        label.setWordWrap(False)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.hide()
        return label

    def _layout(self) -> None:
        # two rows: the outcome toggles and the count, then the task menu and the search box, so the search
        # stays usable in the dock's default 400 px (one row squeezed it to "S...")
        toggles = QHBoxLayout()
        toggles.setContentsMargins(0, 0, 0, 0)
        for button in self.outcome_buttons.values():
            toggles.addWidget(button)
        toggles.addStretch(1)
        toggles.addWidget(self.count_label)
        filters = QHBoxLayout()
        filters.setContentsMargins(0, 0, 0, 0)
        filters.addWidget(self.run_combo)
        filters.addWidget(self.task_combo)
        filters.addWidget(self.search_edit, 1)
        self.search_edit.setMinimumWidth(160)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(toggles)
        layout.addLayout(filters)
        layout.addWidget(self.where_edit)
        layout.addWidget(self.where_error)
        layout.addWidget(self.problems_label)
        layout.addWidget(self.table, 1)

    def _connect(self) -> None:
        for button in self.outcome_buttons.values():
            button.toggled.connect(self._outcomes_changed)
        self.task_combo.currentIndexChanged.connect(self._task_changed)
        self.run_combo.currentIndexChanged.connect(self._run_changed)
        self.search_edit.textChanged.connect(self._text_changed)
        self.where_edit.returnPressed.connect(self.apply_where)
        self.where_edit.textEdited.connect(lambda _text: self._where_timer.start())
        self.where_edit.textChanged.connect(lambda text: text or self.apply_where())  # the clear button
        self._where_timer.timeout.connect(self.apply_where)
        self.table.customContextMenuRequested.connect(self._context_menu)
        self.table.rowActivated.connect(self._activate)
        self.table.doubleClicked.connect(self._activate)
        self.proxy.rowsInserted.connect(self._update_count)
        self.proxy.rowsRemoved.connect(self._update_count)
        self.proxy.modelReset.connect(self._update_count)
        self.proxy.layoutChanged.connect(self._update_count)

    # ---- public API ------------------------------------------------------------------------------------
    def set_run(self, summaries: Iterable[Mapping[str, Any]], problems: Sequence[str] = ()) -> None:
        """Show one run's summaries (its rows' run is ``""``) and any unreadable index lines."""
        self.set_runs([("", summaries)], problems)

    def set_runs(
        self,
        runs: Sequence[tuple[str, Iterable[Mapping[str, Any]]]],
        problems: Sequence[str] = (),
        tasks: Mapping[str, Mapping[str, str]] | None = None,
        tables: Mapping[str, RunTable] | None = None,
        folders: Mapping[str, Path] | None = None,
    ) -> None:
        """Show the summaries of each ``(run name, summaries)`` (``tables``: those already read as columns) and
        any unreadable index lines, a task id that names different tasks in the runs' ``tasks`` (see
        :meth:`RunIndexModel.set_runs`) marked; ``folders`` are the runs' folders, whose notes the Tags column
        shows. Filters stay as the user left them (a run filter on a run no longer open shows every run
        again)."""
        self.model.set_runs(runs, tasks, tables)
        self.folders = dict(folders or {})
        notes_problems = [problem for name in self.folders if (problem := self._load_notes(name))]
        problems = [*problems, *notes_problems]
        self._bind_where()
        self._fill_runs()
        self._fill_tasks()
        self._fill_outcome_counts()
        self.set_problems(problems)
        self._fit_columns()
        self._update_count()

    def update_run(
        self, name: str, summaries: Sequence[Mapping[str, Any]], table: RunTable, problems: Sequence[str]
    ) -> None:
        """Open run ``name`` changed on disk (a run still being played grew): its rows, the menus and the
        counts follow; the filters, the sort and the selection stay."""
        self.model.replace_run(name, summaries, table)
        self._fill_tasks()
        self._fill_outcome_counts()
        self.set_problems(problems)
        self._update_count()

    def set_problems(self, problems: Sequence[str]) -> None:
        """Show a yellow banner naming unreadable index lines (hidden when there are none)."""
        problems = list(problems)
        if not problems:
            self.problems_label.hide()
            self.problems_label.clear()
            return
        noun = "index line" if len(problems) == 1 else "index lines"
        first = problems[0] if len(problems[0]) <= 140 else problems[0][:139] + "…"
        self.problems_label.setText(f"⚠ {len(problems)} {noun} could not be read: {first}")
        self.problems_label.setToolTip("\n".join(problems))
        self.problems_label.show()

    def select_episode(self, episode_id: str, run: str = "") -> bool:
        """Select the row of episode ``episode_id`` of run ``run`` and scroll to it; False when it is not there
        or filtered out."""
        row = self.model.row_of(episode_id, run)
        if row is None:
            return False
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        if not index.isValid():
            return False
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.table.selectionModel().setCurrentIndex(index, flags)
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.EnsureVisible)
        return True

    def visible_keys(self) -> list[EpisodeKey]:
        """(run, episode id) of each row in the order the table shows them, after filtering and sorting."""
        return [
            self.model.key(self.proxy.mapToSource(self.proxy.index(r, 0)).row()) for r in range(self.proxy.rowCount())
        ]

    def visible_episode_ids(self) -> list[str]:
        """Episode ids in the order the table shows them (with several runs an id may come more than once)."""
        return [key.episode_id for key in self.visible_keys()]

    def count_text(self) -> str:
        return self.count_label.text()

    # ---- the filter expression -------------------------------------------------------------------------
    def apply_where(self) -> bool:
        """Filter by the expression in the box (empty: no expression); False, with the parser's message shown
        under the box and the rows left as they were, when it cannot be used."""
        self._where_timer.stop()
        ok = self._bind_where()
        if ok:
            self._update_count()
        return ok

    def _bind_where(self) -> bool:
        text = self.where_edit.text()
        try:
            bound = parse_where(text).bind(self.model.where_table().columns) if text.strip() else None
        except WhereError as exc:
            self._show_where_error(exc)
            return False
        self.where_error.hide()
        self.where_edit.setStyleSheet("")
        self.proxy.set_where(bound)
        return True

    def _show_where_error(self, exc: WhereError) -> None:
        caret = " " * (exc.offset - 1) + "^"
        said, listed, fields = exc.expected.partition("; the fields are: ")  # a long list: in the tooltip
        self.where_error.setText(f"column {exc.offset}: {said}" + ("; hover here for the fields" if listed else ""))
        self.where_error.setToolTip(f"{exc.text}\n{caret}\n{fields if listed else said}")
        self.where_error.show()
        self.where_edit.setStyleSheet("QLineEdit { border: 1px solid #c62828; }")

    def where_fields(self) -> list[str]:
        """The names a filter expression can use on the rows shown: summary fields, metrics, tags."""
        names = {*self.model.where_table().columns, *STANDARD_FIELDS}
        return sorted(n[len("metrics.") :] if n.startswith("metrics.") else n for n in names)

    def _where_tooltip(self) -> str:
        fields = self.where_fields()
        shown = ", ".join(fields[:80]) + (f" and {len(fields) - 80} more" if len(fields) > 80 else "")
        return (
            "A filter expression, as report --where takes it (Enter applies it):\n"
            'score < 0.3 and errors > 2 and agents.builder == "scripted:0.15"\n'
            f'outcome in ["failure", "abort"] and not iou > 0.5      {TAG_FIELD}odd or bookmarked\n'
            "and, or, not, ==, !=, <, <=, >, >=, in [...]; a name with other characters in `backquotes`.\n\n"
            f"Fields: {shown}"
        )

    # ---- tags ------------------------------------------------------------------------------------------
    def _load_notes(self, name: str) -> str:
        """Read run ``name``'s notes into the Tags column; the problem when they cannot be read, else ""."""
        try:
            notes = RunNotes.load(self.folders[name])
        except SimlabError as exc:
            return f"notes of run {name or self.folders[name].name}: {exc}"
        self.model.set_notes(name, notes)
        return ""

    def _tag_remover(self, key: EpisodeKey, tag: str) -> Callable[[], bool]:
        """A menu action's slot that takes ``tag`` off the episode (bound here, not in a loop's lambda)."""
        return lambda: self.change_tags(key, remove=tag)

    def change_tags(self, key: EpisodeKey, add: str = "", remove: str = "", bookmark: bool | None = None) -> bool:
        """Tag an episode, take a tag off it or set its bookmark, in its run's ``notes.json`` (as ``note`` does
        on the command line); the Tags column shows it at once. False, said in the banner, when it cannot be
        written (no run folder, a tag that is not one word)."""
        folder = self.folders.get(key.run)
        if folder is None:
            self.set_problems([f"{key.episode_id} is not from a run folder: there is no notes file to tag it in"])
            return False

        def change(notes: RunNotes) -> None:
            if add:
                notes.add_tag(key.episode_id, None, add)
            if remove:
                notes.remove_tag(key.episode_id, None, remove)
            if bookmark is not None:
                notes.set_bookmark(key.episode_id, None, bookmark)

        try:
            self.model.set_notes(key.run, change_notes(folder, change))
        except SimlabError as exc:
            self.set_problems([f"notes of {key.episode_id}: {exc}"])
            return False
        self._bind_where()  # a new tag is a new tag.NAME field
        self._update_count()
        self.notesChanged.emit(folder)
        return True

    def notes_changed(self, run_dir: Path) -> None:
        """The notes of the run in ``run_dir`` changed elsewhere (a turn tagged in the app): the Tags column and
        the filter's tag fields read them again."""
        for name, folder in self.folders.items():
            if folder == run_dir:
                self._load_notes(name)
        self._bind_where()
        self._update_count()

    def row_menu(self, key: EpisodeKey) -> QMenu:
        """The context menu of a row: add a tag, take one off, bookmark."""
        menu = QMenu(self)
        folder = self.folders.get(key.run)
        notes = self.model.notes_of(key.run)
        mark = notes.get(key.episode_id) if notes is not None else None
        add = menu.addAction("Add Tag...", lambda: self.ask_tag(key))
        remove = menu.addMenu("Remove Tag")
        for tag in mark.tags if mark is not None else []:
            remove.addAction(tag, self._tag_remover(key, tag))
        remove.setEnabled(bool(mark and mark.tags))
        marked = bool(mark and mark.bookmark)
        star = menu.addAction(
            "Remove Bookmark" if marked else "Bookmark", lambda: self.change_tags(key, bookmark=not marked)
        )
        for action in (add, star):
            action.setEnabled(folder is not None)
        return menu

    def ask_tag(self, key: EpisodeKey) -> QInputDialog:
        """Ask for a tag for ``key`` (a window-modal question: OK tags the episode)."""
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Add Tag")
        dialog.setLabelText(f"Tag for {key.episode_id} (one word: letters, digits, _ . : / + # -):")
        dialog.setComboBoxEditable(True)
        dialog.setComboBoxItems(self.model.tags())
        dialog.setTextValue("")
        dialog.textValueSelected.connect(lambda tag: tag.strip() and self.change_tags(key, add=tag.strip()))
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.open()
        self.tag_dialog = dialog
        return dialog

    def _context_menu(self, position: QPoint) -> None:
        index = self.table.indexAt(position)
        if index.isValid():
            menu = self.row_menu(self.model.key(self.proxy.mapToSource(index).row()))
            menu.popup(self.table.viewport().mapToGlobal(position))

    # ---- reactions -------------------------------------------------------------------------------------
    def _outcomes_changed(self) -> None:
        allowed = {name for name, b in self.outcome_buttons.items() if b.isChecked()}
        self.proxy.set_outcomes(None if allowed == set(OUTCOMES) else allowed)
        self._update_count()

    def _run_changed(self) -> None:
        run = self.run_combo.currentData()
        self.proxy.set_run(run if isinstance(run, str) else None)
        self._update_count()

    def _task_changed(self) -> None:
        self.proxy.set_task(self.task_combo.currentData() or "")
        self._update_count()

    def _text_changed(self, text: str) -> None:
        self.proxy.set_text(text)
        self._update_count()

    def _activate(self, index: QModelIndex) -> None:
        if index.isValid():
            source = self.proxy.mapToSource(index)
            self.episodeActivated.emit(*self.model.key(source.row()))

    def _update_count(self) -> None:
        runs = f" in {len(self.model.runs)} runs" if len(self.model.runs) > 1 else ""
        self.count_label.setText(f"{self.proxy.rowCount():,} of {self.model.rowCount():,} episodes{runs}")
        self.where_edit.setToolTip(self._where_tooltip())

    def _fill_runs(self) -> None:
        """The run menu: every run when there are several (hidden otherwise), keeping the one chosen."""
        current = self.run_combo.currentData()
        self.run_combo.blockSignals(True)
        self.run_combo.clear()
        self.run_combo.addItem(ALL_RUNS, None)
        for name in self.model.runs:
            self.run_combo.addItem(name, name)
        found = self.run_combo.findData(current) if isinstance(current, str) else -1
        self.run_combo.setCurrentIndex(max(0, found))
        self.run_combo.blockSignals(False)
        self.run_combo.setVisible(len(self.model.runs) > 1)
        self._run_changed()

    def _fill_tasks(self) -> None:
        current = self.task_combo.currentData() or ""
        choices = [(f"all {g} tasks", GROUP + g) for g in self.model.groups()]  # a tier, a question type
        choices += [(task, task) for task in self.model.tasks()]
        self.task_combo.blockSignals(True)
        self.task_combo.clear()
        self.task_combo.addItem(ALL_TASKS, "")
        for label, data in choices:
            self.task_combo.addItem(label, data)
        found = self.task_combo.findData(current) if current else -1
        self.task_combo.setCurrentIndex(max(0, found))
        self.task_combo.blockSignals(False)
        self._task_changed()

    def _fill_outcome_counts(self) -> None:
        counts = self.model.outcome_counts()
        for name, button in self.outcome_buttons.items():
            button.setText(f"{name} {counts.get(name, 0)}")

    def _fit_columns(self) -> None:
        self.table.resizeColumnsToContents()
        header = self.table.horizontalHeader()
        columns = self.model.columns
        agents = next(k for k, c in enumerate(columns) if c.key == "agents")
        header.resizeSection(agents, min(header.sectionSize(agents), 320))
        for col, column in enumerate(columns):
            if not column.numeric:
                header.resizeSection(col, header.sectionSize(col) + 4)  # room to breathe, not to fill
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
