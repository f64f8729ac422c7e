"""The episode browser: a sortable, filterable table of the index lines of one run or of several.

It reads only the summaries (``Run.summaries``) and the unreadable index lines (``Run.problems``), never an
episode file, so runs of thousands of episodes open at once. Episode ids repeat across runs (two runs of the
same tasks), so a row is known by its :class:`EpisodeKey`, (run, episode id), never by the id alone; with more
than one run a *Run* column and a run filter appear. A task id can name different tasks in different runs
(generated ids name other structures under another seed): by the test ``report`` pairs episodes by
(:func:`~simlab.analysis.pairing.same_task`), such a row's task reads ``structure_001 (≠ B)`` and the task menu
lists each task apart, so episodes of different tasks are never shown as one task. Choosing an episode emits
:attr:`EpisodeBrowser.episodeActivated`; what happens next (loading it into the playback model) is the main
window's business.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QFont, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from simlab.analysis.episode_diff import value_text
from simlab.analysis.pairing import TASKS_DIFFER, same_task
from simlab.core.errors import SimlabError
from simlab.worlds import get_family

OUTCOMES = ("success", "failure", "abort")
# Foreground colours readable on light and dark rows, and a faint tint of the same hue for the cell.
OUTCOME_COLOURS = {"success": "#1b7f3b", "failure": "#b45f06", "abort": "#c62828"}
OUTCOME_TINT_ALPHA = 28
ALL_TASKS = "All tasks"
ALL_RUNS = "All runs"
GROUP = "group:"
"""The task menu's data for a whole group of tasks (``group:counting``) rather than one task id."""
ModelIndex = QModelIndex | QPersistentModelIndex


class EpisodeKey(NamedTuple):
    """One row of the browser: the name the window gave its run (``""`` for a lone run or episode) and the
    episode id."""

    run: str
    episode_id: str


@dataclass(frozen=True)
class Column:
    """One table column: its header, the summary field it shows, and whether it is a number."""

    title: str
    key: str
    numeric: bool = False
    metric: bool = False  # read from the summary's metrics (a family's headline metric), not a top field
    tip: str = ""  # the header's tooltip: what the column counts, where another view counts differently


COLUMNS = (  # what decides which episode to open first: outcome and score next to the id
    Column("Episode", "episode_id"),
    Column("Outcome", "outcome"),
    Column("Score", "score", numeric=True),
    Column("Turns", "turns", numeric=True),
    Column(
        "Errors",
        "errors",
        numeric=True,
        tip="The errors the world counts in its summary (what counts is the family's rule). The timeline's red "
        "ticks mark every refused reply, broken protocol and mistake of a turn, so the two can differ.",
    ),
    Column("Task", "task_id"),
    Column("Group", "group"),
    Column("Agents", "agents"),
    Column("World", "world"),
)
COLUMN_INDEX = {c.key: i for i, c in enumerate(COLUMNS)}
"""Where the fixed columns stand when one run adds none (a family's metric columns follow Errors)."""
METRICS_AFTER = COLUMN_INDEX["errors"]
RUN_COLUMN = Column("Run", "run")
"""First when several runs are open: which run played the row (its episode id may repeat in the others)."""


def family_columns(summaries: Sequence[Mapping[str, Any]], several_runs: bool = False) -> tuple[Column, ...]:
    """The columns for a run's summaries: the fixed ones, with its family's headline metrics after Errors
    (blocks: overall progress, completion...; puzzles: sr, psr...), and the Run column first when they come
    from several runs. A world SimLab does not know adds no metrics."""
    world = next((str(s["world"]) for s in summaries if s.get("world")), None)
    try:
        headline = get_family(world).headline_metrics if world else ()
    except SimlabError:
        headline = ()
    metrics = tuple(Column(name.replace("_", " "), name, numeric=True, metric=True) for name in headline)
    run = (RUN_COLUMN,) if several_runs else ()
    return (*run, *COLUMNS[: METRICS_AFTER + 1], *metrics, *COLUMNS[METRICS_AFTER + 1 :])


# ---- text helpers (pure) ------------------------------------------------------------------------------------
def natural_key(text: str) -> str:
    """A string that sorts ``ep-2`` before ``ep-10``: digit runs are zero-padded, letters case-folded."""
    return re.sub(r"\d+", lambda m: m.group(0).zfill(12), text.casefold())


def _split_role(role: str) -> tuple[str, int | None]:
    m = re.fullmatch(r"(.*?)(\d+)", role)
    return (m.group(1), int(m.group(2))) if m else (role, None)


def _compact_roles(roles: Sequence[str]) -> str:
    """``D1 D2 D3`` -> ``D1-3``; ``D1 D3`` -> ``D1/D3``; other names are joined with ``/``."""
    parts = [_split_role(r) for r in roles]
    prefixes = {p for p, _ in parts}
    numbers = [n for _, n in parts]
    if len(roles) > 1 and len(prefixes) == 1 and None not in numbers:
        ordered = sorted(n for n in numbers if n is not None)
        if ordered == list(range(ordered[0], ordered[-1] + 1)):
            return f"{parts[0][0]}{ordered[0]}-{ordered[-1]}"
    return "/".join(roles)


def compact_agents(agents: Mapping[str, Any] | None) -> str:
    """``{"D1": "oracle", "D2": "oracle", "D3": "oracle", "builder": "random"}`` -> ``D1-3=oracle, builder=random``."""
    groups: dict[str, list[str]] = {}
    for role, spec in (agents or {}).items():
        groups.setdefault(str(spec), []).append(str(role))
    return ", ".join(f"{_compact_roles(roles)}={spec}" for spec, roles in groups.items())


def full_agents(agents: Mapping[str, Any] | None) -> str:
    """One ``role = spec`` line per role, for a tooltip."""
    return "\n".join(f"{role} = {spec}" for role, spec in (agents or {}).items()) or "no agents recorded"


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return float("-inf")  # missing values sort first
    return float(value)


def _display(column: Column, value: Any) -> str:
    if value is None:
        return ""
    if column.key == "agents":
        return compact_agents(value if isinstance(value, Mapping) else {})
    if column.key == "score" or column.metric:
        return value_text(value)  # as the Compare dock and a fork's diff show the same number
    return str(value)


def _sort_value(column: Column, value: Any) -> float | str:
    if column.numeric:
        return _number(value)
    return natural_key(_display(column, value))


@dataclass(frozen=True)
class _Row:
    """What the table needs of one summary, computed once in :meth:`RunIndexModel.set_runs`."""

    key: EpisodeKey
    task: str  # what the Task column and menu say: the id, marked when it names another task in other runs
    task_note: str  # why it is marked (the Task cell's tooltip), or ""
    outcome: str
    group: str
    display: tuple[str, ...]
    sort: tuple[float | str, ...]
    agents_tooltip: str
    haystack: str


def _value(summary: Mapping[str, Any], column: Column) -> Any:
    if column.metric:
        metrics = summary.get("metrics")
        return metrics.get(column.key) if isinstance(metrics, Mapping) else None
    return summary.get(column.key)


def task_label(task_id: str, other_runs: Sequence[str]) -> str:
    """What the browser calls task ``task_id`` of a run when ``other_runs`` hold another task under that id."""
    return f"{task_id} (≠ {', '.join(other_runs)})" if other_runs else task_id


def _make_row(
    run: str, summary: Mapping[str, Any], columns: Sequence[Column] = COLUMNS, differs_in: Sequence[str] = ()
) -> _Row:
    """The row of ``summary`` of run ``run``, whose task id names another task in the runs ``differs_in``."""
    task_id = _task_id(summary)
    task = task_label(task_id, differs_in)
    values = [run if c is RUN_COLUMN else task if c.key == "task_id" else _value(summary, c) for c in columns]
    display = tuple(_display(c, v) for c, v in zip(columns, values, strict=True))
    episode_id = str(summary.get("episode_id", ""))
    outcome = str(summary.get("outcome", "") or "")
    agents = compact_agents(summary.get("agents") if isinstance(summary.get("agents"), Mapping) else {})
    runs = "run" if len(differs_in) == 1 else "runs"
    note = f"{task_id} of run {run} is another task than {task_id} of {runs} {', '.join(differs_in)}: {TASKS_DIFFER}"
    return _Row(
        key=EpisodeKey(run, episode_id),
        task=task,
        task_note=note if differs_in else "",
        outcome=outcome,
        group=str(summary.get("group") or ""),
        display=display,
        sort=tuple(_sort_value(c, v) for c, v in zip(columns, values, strict=True)),
        agents_tooltip=full_agents(summary.get("agents") if isinstance(summary.get("agents"), Mapping) else None),
        haystack=" ".join((episode_id, task_id, agents, outcome, *_words(summary))).casefold(),
    )


def _task_id(summary: Mapping[str, Any]) -> str:
    return str(summary.get("task_id", "") or "")


def _words(summary: Mapping[str, Any]) -> list[str]:
    """The other text a search finds an episode by: its group and every text or list-of-text field a family
    adds to its summary (a puzzle's categories, a board's abort cause)."""
    out = []
    for key, value in summary.items():
        if key in ("episode_id", "task_id", "outcome", "file", "format", "world"):
            continue
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            out.extend(value)
    return out


# ---- the model ---------------------------------------------------------------------------------------------
class RunIndexModel(QAbstractTableModel):
    """A read-only table over the summary dicts of one run or several, one row per episode.

    DisplayRole is the text shown, UserRole a sortable value (floats for numbers, a natural-sort key for
    text), ToolTipRole the full agent list on the Agents column, and the Outcome column is coloured.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[_Row] = []
        self._summaries: list[dict[str, Any]] = []
        self._row_of: dict[EpisodeKey, int] = {}
        self.runs: tuple[str, ...] = ()  # the runs' names, in the order they were given
        self.columns: tuple[Column, ...] = COLUMNS  # the fixed ones and the run's family metrics
        self._bold = QFont()
        self._bold.setBold(True)
        self._fg = {k: QBrush(QColor(v)) for k, v in OUTCOME_COLOURS.items()}
        self._bg = {k: QBrush(_tint(v)) for k, v in OUTCOME_COLOURS.items()}

    def set_summaries(self, summaries: Iterable[Mapping[str, Any]]) -> None:
        """Replace every row by one run's (named ``""``)."""
        self.set_runs([("", summaries)])

    def set_runs(
        self,
        runs: Sequence[tuple[str, Iterable[Mapping[str, Any]]]],
        tasks: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        """Replace every row by the summaries of each ``(run name, summaries)``, run after run (a model reset:
        views keep no stale rows). Names must differ: they tell apart the episodes whose ids repeat. ``tasks``
        holds each run's recorded tasks (:func:`~simlab.analysis.pairing.recorded_tasks`, by run name): a task
        id naming different tasks in two runs is marked in both (a run left out is taken at its word)."""
        self.beginResetModel()
        self.runs = tuple(name for name, _ in runs)
        owned = [(name, dict(s)) for name, summaries in runs for s in summaries]
        self._summaries = [s for _, s in owned]
        self.columns = family_columns(self._summaries, several_runs=len(self.runs) > 1)
        differs = _differing_runs(owned, tasks or {})
        self._rows = [_make_row(name, s, self.columns, differs.get((name, _task_id(s)), ())) for name, s in owned]
        self._row_of = {}
        for row, r in enumerate(self._rows):
            self._row_of.setdefault(r.key, row)
        self.endResetModel()

    def summary(self, row: int) -> dict[str, Any]:
        """The summary dict behind source row ``row``."""
        return self._summaries[row]

    def key(self, row: int) -> EpisodeKey:
        """The (run, episode id) of source row ``row``."""
        return self._rows[row].key

    def episode_id(self, row: int) -> str:
        return self._rows[row].key.episode_id

    def row_of(self, episode_id: str, run: str = "") -> int | None:
        """The source row of an episode of run ``run`` (``""``: a lone run), or None."""
        return self._row_of.get(EpisodeKey(run, episode_id))

    def tasks(self) -> list[str]:
        """Distinct tasks as the Task column names them (an id once per task it names), in natural order."""
        return sorted({r.task for r in self._rows if r.task}, key=natural_key)

    def groups(self) -> list[str]:
        """Distinct task groups (a blocks tier, a rooms question type, a puzzle) in natural order."""
        return sorted({r.group for r in self._rows if r.group}, key=natural_key)

    def outcome_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self._rows:
            out[r.outcome] = out.get(r.outcome, 0) + 1
        return out

    def matches(self, row: int, outcomes: set[str] | None, task: str, text: str, run: str | None = None) -> bool:
        """Whether source row ``row`` passes a filter (``text`` already case-folded; ``run`` None: any run)."""
        r = self._rows[row]
        return (
            (run is None or r.key.run == run)
            and (outcomes is None or r.outcome in outcomes)
            and (not task or (r.group == task[len(GROUP) :] if task.startswith(GROUP) else r.task == task))
            and (not text or text in r.haystack)
        )

    # ---- QAbstractTableModel ---------------------------------------------------------------------------
    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.columns):
            return None
        column = self.columns[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.title
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _alignment(column)
        if role == Qt.ItemDataRole.ToolTipRole and column.tip:
            return column.tip
        return None

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, col = self._rows[index.row()], index.column()
        column = self.columns[col]
        if role == Qt.ItemDataRole.DisplayRole:
            return row.display[col]
        if role == Qt.ItemDataRole.UserRole:
            return row.sort[col]
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _alignment(column)
        if column.key == "agents" and role == Qt.ItemDataRole.ToolTipRole:
            return row.agents_tooltip
        if column.key == "task_id" and role == Qt.ItemDataRole.ToolTipRole:
            return row.task_note or None
        if column.key == "outcome":
            return self._outcome_data(row.outcome, role)
        return None

    def _outcome_data(self, outcome: str, role: int) -> Any:
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._fg.get(outcome)
        if role == Qt.ItemDataRole.BackgroundRole:
            return self._bg.get(outcome)
        if role == Qt.ItemDataRole.FontRole and outcome in self._fg:
            return self._bold
        return None

    def flags(self, index: ModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren


def _differing_runs(
    owned: Sequence[tuple[str, Mapping[str, Any]]], tasks: Mapping[str, Mapping[str, str]]
) -> dict[tuple[str, str], tuple[str, ...]]:
    """For each (run, task id) of the rows, the other runs that hold another task under that id (by
    :func:`~simlab.analysis.pairing.same_task`, the test ``report`` pairs episodes by); only non-empty ones."""
    runs_of: dict[str, list[str]] = {}
    for run, summary in owned:
        task_id = _task_id(summary)
        if task_id and run not in runs_of.setdefault(task_id, []):
            runs_of[task_id].append(run)
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    for task_id, runs in runs_of.items():
        for run in runs:
            mine = tasks.get(run, {})
            others = tuple(o for o in runs if o != run and not same_task(task_id, mine, tasks.get(o, {})))
            if others:
                out[run, task_id] = others
    return out


def _tint(colour: str) -> QColor:
    c = QColor(colour)
    c.setAlpha(OUTCOME_TINT_ALPHA)
    return c


def _alignment(column: Column) -> int:
    horizontal = Qt.AlignmentFlag.AlignRight if column.numeric else Qt.AlignmentFlag.AlignLeft
    return int(horizontal | Qt.AlignmentFlag.AlignVCenter)


# ---- the filter --------------------------------------------------------------------------------------------
class EpisodeFilterProxy(QSortFilterProxyModel):
    """Filters a :class:`RunIndexModel` by run, outcome, task and a case-insensitive text search; sorts by
    UserRole."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._run: str | None = None
        self._outcomes: set[str] | None = None
        self._task = ""
        self._text = ""
        self.setSortRole(Qt.ItemDataRole.UserRole)
        self.setDynamicSortFilter(True)

    def set_run(self, run: str | None) -> None:
        """Show one run's episodes only; None shows every run's."""
        self._change_filter(run=run)

    def set_outcomes(self, outcomes: Iterable[str] | None) -> None:
        """Show only these outcomes; None shows every outcome (including ones this GUI does not know)."""
        self._change_filter(outcomes=None if outcomes is None else set(outcomes))

    def set_task(self, task_id: str) -> None:
        """Show one task (exact id), a whole group (``group:NAME``), or every task for ``""``."""
        self._change_filter(task=task_id or "")

    def set_text(self, text: str) -> None:
        """Case-insensitive substring over episode id, task, agents, outcome, group and the other text fields of
        the summary (a puzzle's categories, a board's abort cause)."""
        self._change_filter(text=text.strip().casefold())

    def _change_filter(self, **changes: Any) -> None:
        self.beginFilterChange()
        if "outcomes" in changes:
            self._outcomes = changes["outcomes"]
        if "run" in changes:
            self._run = changes["run"]
        self._task = changes.get("task", self._task)
        self._text = changes.get("text", self._text)
        self.endFilterChange()

    def filterAcceptsRow(self, source_row: int, source_parent: ModelIndex) -> bool:
        model = self.sourceModel()
        if not isinstance(model, RunIndexModel):
            return True
        return model.matches(source_row, self._outcomes, self._task, self._text, self._run)


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
    search box and, with several runs, a run menu.

    Emits :attr:`episodeActivated` with the run's name and the episode id on Enter/Return or a double-click.
    """

    episodeActivated = Signal(str, str)

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
            f" background: {_tint(colour).name(QColor.NameFormat.HexArgb)}; }}"
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
        layout.addWidget(self.problems_label)
        layout.addWidget(self.table, 1)

    def _connect(self) -> None:
        for button in self.outcome_buttons.values():
            button.toggled.connect(self._outcomes_changed)
        self.task_combo.currentIndexChanged.connect(self._task_changed)
        self.run_combo.currentIndexChanged.connect(self._run_changed)
        self.search_edit.textChanged.connect(self._text_changed)
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
    ) -> None:
        """Show the summaries of each ``(run name, summaries)`` and any unreadable index lines, a task id that
        names different tasks in the runs' ``tasks`` (see :meth:`RunIndexModel.set_runs`) marked; filters stay
        as the user left them (a run filter on a run no longer open shows every run again)."""
        self.model.set_runs(runs, tasks)
        self._fill_runs()
        self._fill_tasks()
        self._fill_outcome_counts()
        self.set_problems(problems)
        self._fit_columns()
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
        self.count_label.setText(f"{self.proxy.rowCount()} of {self.model.rowCount()} episodes{runs}")

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
