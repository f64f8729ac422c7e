"""The episode browser's Qt models: the rows of one run or several as columns, sorted and filtered with numpy.

:class:`RunIndexModel` is a read-only table over each run's :class:`~simlab.core.run_table.RunTable` (numbers
as float arrays, text as codes into a few categories): no Python object per row and no string made before a
cell is drawn, so a run of 100,000 episodes fills at once. The columns a table does not hold are made once
per change as text columns of the same kind: the Run, the Task (marked where a task id names another task
in another run), the Agents (one line-up per distinct combination) and the Tags (from ``RUN/notes.json``).

:class:`EpisodeFilterProxy` shows a permutation of those rows: a boolean mask per filter (run, outcome, task,
text, a filter expression) and a stable ``argsort`` of the sorted column, where ``QSortFilterProxyModel``
would call Python once per row to filter and once per comparison to sort (seconds at 100,000 rows).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from PySide6.QtCore import QAbstractProxyModel, QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QWidget

from simlab.analysis.episode_diff import value_text
from simlab.analysis.pairing import TASKS_DIFFER, same_task
from simlab.analysis.where import Bound
from simlab.core import run_table
from simlab.core.errors import SimlabError
from simlab.core.notes import RunNotes
from simlab.core.run_table import RunTable
from simlab.worlds import get_family

OUTCOMES = ("success", "failure", "abort")
# Foreground colours readable on light and dark rows, and a faint tint of the same hue for the cell.
OUTCOME_COLOURS = {"success": "#1b7f3b", "failure": "#b45f06", "abort": "#c62828"}
OUTCOME_TINT_ALPHA = 28
GROUP = "group:"
"""The task menu's data for a whole group of tasks (``group:counting``) rather than one task id."""
BOOKMARK = "★"
TAG_FIELD = "tag."
"""Filter expressions see each tag as a true/false field ``tag.NAME`` (and ``bookmarked``)."""
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
    Column("Tags", "tags", tip=f"Tags on the episode or its turns ({BOOKMARK}: bookmarked); right-click to tag"),
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
SEARCHED = ("episode_id", "task_id", "agents", "outcome")
"""What the text box searches besides every other top-level text field of a summary (a puzzle's categories, a
board's abort cause): never the file, format or world."""
NOT_SEARCHED = frozenset(("file", "format", "world"))


def family_columns(world: str | None, several_runs: bool = False) -> tuple[Column, ...]:
    """The columns for runs of ``world``: the fixed ones, with its family's headline metrics after Errors
    (blocks: overall progress, completion...; puzzles: sr, psr...), and the Run column first when they come
    from several runs. A world SimLab does not know adds no metrics."""
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


def task_label(task_id: str, other_runs: Sequence[str]) -> str:
    """What the browser calls task ``task_id`` of a run when ``other_runs`` hold another task under that id."""
    return f"{task_id} (≠ {', '.join(other_runs)})" if other_runs else task_id


def tags_text(notes: RunNotes, episode_id: str) -> str:
    """The Tags cell of an episode: a star when it or one of its turns is bookmarked, then every tag."""
    marks = notes.marks_of(episode_id)
    star = [BOOKMARK] if any(m.bookmark for m in marks) else []
    return " ".join([*star, ", ".join(notes.tags_of(episode_id))]).strip()


def _text_column(name: str, labels: Sequence[str]) -> run_table.Column:
    """A text column holding ``labels`` row by row (``""``: missing)."""
    categories = sorted(set(labels) - {""})
    code = {c: k for k, c in enumerate(categories)} | {"": -1}
    return run_table.Column(
        (name,), "text", np.fromiter(map(code.__getitem__, labels), np.int32, len(labels)), categories
    )


def _recode(codes: np.ndarray, labels: Sequence[str], name: str) -> run_table.Column:
    """A text column whose row holds ``labels[code]`` for its code in ``codes`` (-1: missing)."""
    categories = sorted(set(labels) - {""})
    code = {c: k for k, c in enumerate(categories)} | {"": -1}
    lookup = np.array([*(code[label] for label in labels), -1], dtype=np.int32)
    return run_table.Column((name,), "text", lookup[codes], categories)


def _texts(column: run_table.Column | None, n: int) -> list[str]:
    """A text column's values ("" where missing; all "" without the column)."""
    if column is None or column.kind != "text":
        return [""] * n
    lookup = [*column.categories, ""]
    return [lookup[c] for c in np.asarray(column.data).tolist()]


# ---- the model ---------------------------------------------------------------------------------------------
class RunIndexModel(QAbstractTableModel):
    """A read-only table over the summaries of one run or several, one row per episode, run after run.

    DisplayRole is the text shown, UserRole a sortable value (a float for numbers, a natural-sort key for
    text), ToolTipRole the full agent list on the Agents column, and the Outcome column is coloured.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runs: tuple[str, ...] = ()  # the runs' names, in the order they were given
        self.columns: tuple[Column, ...] = COLUMNS  # the fixed ones and the run's family metrics
        self.table = RunTable(0, {})  # every run's rows, run after run
        self._parts: list[tuple[Sequence[Mapping[str, Any]], RunTable]] = []  # per run: summaries, table
        self._starts = np.zeros(1, dtype=np.int64)  # the first row of each run, then the row count
        self._tasks: Mapping[str, Mapping[str, str]] = {}
        self._notes: dict[str, RunNotes] = {}
        self._shown: dict[str, run_table.Column] = {}  # per column key, what it shows
        self._sort_keys: dict[str, np.ndarray] = {}
        self._bold = QFont()
        self._bold.setBold(True)
        self._fg = {k: QBrush(QColor(v)) for k, v in OUTCOME_COLOURS.items()}
        self._bg = {k: QBrush(tint(v)) for k, v in OUTCOME_COLOURS.items()}

    # ---- filling -----------------------------------------------------------------------------------------
    def set_summaries(self, summaries: Iterable[Mapping[str, Any]]) -> None:
        """Replace every row by one run's (named ``""``)."""
        self.set_runs([("", summaries)])

    def set_runs(
        self,
        runs: Sequence[tuple[str, Iterable[Mapping[str, Any]]]],
        tasks: Mapping[str, Mapping[str, str]] | None = None,
        tables: Mapping[str, RunTable] | None = None,
    ) -> None:
        """Replace every row by the summaries of each ``(run name, summaries)``, run after run (a model reset:
        views keep no stale rows). Names must differ: they tell apart the episodes whose ids repeat. ``tables``
        holds runs' summaries already as columns (``Run.table()``; the others are made here). ``tasks`` holds
        each run's recorded tasks (:func:`~simlab.analysis.pairing.recorded_tasks`, by run name): a task id
        naming different tasks in two runs is marked in both (a run left out is taken at its word)."""
        self.beginResetModel()
        self.runs = tuple(name for name, _ in runs)
        self._parts = [_part(summaries, (tables or {}).get(name)) for name, summaries in runs]
        self._tasks = tasks or {}
        self._notes = {name: notes for name, notes in self._notes.items() if name in self.runs}
        self._rebuild()
        self.endResetModel()

    def replace_run(self, name: str, summaries: Sequence[Mapping[str, Any]], table: RunTable) -> None:
        """Run ``name`` now holds ``summaries`` (``table`` their columns): rows inserted when it only grew (a
        run still being played), else a model reset."""
        k = self.runs.index(name)
        start, end = int(self._starts[k]), int(self._starts[k + 1])
        grew = table.n > end - start and _texts(table.columns.get("episode_id"), table.n)[: end - start] == (
            _texts(self._parts[k][1].columns.get("episode_id"), end - start)
        )
        if not grew:
            self.beginResetModel()
        self._parts[k] = (summaries, table)
        if grew:
            self.beginInsertRows(QModelIndex(), end, end + table.n - (end - start) - 1)
        self._rebuild()
        self.endInsertRows() if grew else self.endResetModel()

    def set_notes(self, name: str, notes: RunNotes) -> None:
        """The notes of run ``name`` (its Tags column and its ``tag.NAME`` fields) changed."""
        self._notes[name] = notes
        self._shown["tags"] = self._tags_column()
        self._sort_keys.pop("tags", None)
        column = next((k for k, c in enumerate(self.columns) if c.key == "tags"), None)
        if column is not None and self.rowCount():
            self.dataChanged.emit(self.index(0, column), self.index(self.rowCount() - 1, column))

    def _rebuild(self) -> None:
        """The combined table and every column made from it (after the runs or one run's rows changed)."""
        tables = [table for _, table in self._parts]
        self.table = tables[0] if len(tables) == 1 else RunTable.concat(tables)
        self._starts = np.cumsum([0, *(t.n for t in tables)], dtype=np.int64)
        worlds = self.table.columns.get("world")
        world = worlds.categories[0] if worlds is not None and worlds.kind == "text" and worlds.categories else None
        self.columns = family_columns(world, several_runs=len(self.runs) > 1)
        self._shown = {c.key: found for c in self.columns if (found := self._table_column(c)) is not None}
        self._shown.update(run=self._run_column(), task_id=self._task_column(), agents=self._agents_column())
        self._shown["tags"] = self._tags_column()
        self._sort_keys = {}

    def _table_column(self, column: Column) -> run_table.Column | None:
        return self.table.columns.get(f"metrics.{column.key}" if column.metric else column.key)

    def _run_column(self) -> run_table.Column:
        run_of = np.repeat(np.arange(len(self.runs), dtype=np.int32), np.diff(self._starts))
        return _recode(run_of, list(self.runs), "run")

    def _task_column(self) -> run_table.Column:
        """Task ids as the Task column names them: marked where the id names another task in another run."""
        tasks = self.table.columns.get("task_id")
        if tasks is None or tasks.kind != "text":
            return _text_column("task", [""] * self.table.n)
        codes = np.asarray(tasks.data)
        present = [set(np.unique(codes[s:e]).tolist()) - {-1} for s, e in self._segments()]
        labels: list[str] = []
        lookup: dict[tuple[int, int], int] = {}
        for k, run in enumerate(self.runs):
            for code in sorted(present[k]):
                task_id = tasks.categories[code]
                mine = self._tasks.get(run, {})
                others = [o for j, o in enumerate(self.runs) if j != k and code in present[j]]
                differs = [o for o in others if not same_task(task_id, mine, self._tasks.get(o, {}))]
                lookup[k, code] = len(labels)
                labels.append(task_label(task_id, differs))
        label_codes = np.full(self.table.n, len(labels), dtype=np.int64)  # the last slot: no task
        for k, (s, e) in enumerate(self._segments()):
            table = np.array([lookup.get((k, c), len(labels)) for c in range(len(tasks.categories))] + [len(labels)])
            label_codes[s:e] = table[codes[s:e]]
        return _recode(label_codes, [*labels, ""], "task")

    def _agents_column(self) -> run_table.Column:
        """Each row's line-up in short (``D1-3=oracle, builder=random``), made once per distinct line-up."""
        roles = [c for name, c in self.table.columns.items() if name.startswith("agents.") and c.kind == "text"]
        if not roles:
            return _text_column("agents", [""] * self.table.n)
        stacked = np.stack([np.asarray(c.data) for c in roles], axis=1)
        lineups, inverse = np.unique(stacked, axis=0, return_inverse=True)
        labels = [
            compact_agents({c.path[-1]: c.categories[k] for c, k in zip(roles, lineup.tolist(), strict=True) if k >= 0})
            for lineup in lineups
        ]
        return _recode(np.asarray(inverse).reshape(-1), labels, "agents")

    def _tags_column(self) -> run_table.Column:
        labels = [""] * self.table.n
        for (run, episode_id), text in self._marked().items():
            for row in self._rows_of(episode_id, run):
                labels[row] = text
        return _text_column("tags", labels)

    def _marked(self) -> dict[EpisodeKey, str]:
        """The Tags text of every episode that has a mark, by (run, episode id)."""
        return {
            EpisodeKey(run, episode_id): tags_text(notes, episode_id)
            for run, notes in self._notes.items()
            for episode_id in dict.fromkeys(m.episode_id for m in notes.marks())
        }

    def _segments(self) -> list[tuple[int, int]]:
        return [(int(self._starts[k]), int(self._starts[k + 1])) for k in range(len(self.runs))]

    def _rows_of(self, episode_id: str, run: str) -> list[int]:
        if run not in self.runs:
            return []
        k = self.runs.index(run)
        return [int(self._starts[k]) + int(r) for r in self._parts[k][1].rows_of("episode_id", episode_id)]

    # ---- rows ----------------------------------------------------------------------------------------------
    def summary(self, row: int) -> Mapping[str, Any]:
        """The summary dict behind source row ``row``."""
        k = int(np.searchsorted(self._starts, row, side="right")) - 1
        return self._parts[k][0][row - int(self._starts[k])]

    def key(self, row: int) -> EpisodeKey:
        """The (run, episode id) of source row ``row``."""
        k = int(np.searchsorted(self._starts, row, side="right")) - 1
        return EpisodeKey(self.runs[k], self._text("episode_id", row))

    def episode_id(self, row: int) -> str:
        return self._text("episode_id", row)

    def row_of(self, episode_id: str, run: str = "") -> int | None:
        """The source row of an episode of run ``run`` (``""``: a lone run), or None."""
        rows = self._rows_of(episode_id, run)
        return rows[0] if rows else None

    def tasks(self) -> list[str]:
        """Distinct tasks as the Task column names them (an id once per task it names), in natural order."""
        return sorted(self._shown["task_id"].categories, key=natural_key)

    def groups(self) -> list[str]:
        """Distinct task groups (a blocks tier, a rooms question type, a puzzle) in natural order."""
        return sorted(self._present("group"), key=natural_key)

    def notes_of(self, run: str) -> RunNotes | None:
        """The notes of open run ``run`` as the Tags column shows them (None: none read)."""
        return self._notes.get(run)

    def tags(self) -> list[str]:
        """Every tag of the open runs' notes, sorted."""
        return sorted({tag for notes in self._notes.values() for mark in notes.marks() for tag in mark.tags})

    def outcome_counts(self) -> dict[str, int]:
        column = self.table.columns.get("outcome")
        if column is None or column.kind != "text":
            return {"": self.table.n} if self.table.n else {}
        counts = np.bincount(np.asarray(column.data) + 1, minlength=len(column.categories) + 1)
        return {name: int(n) for name, n in zip(["", *column.categories], counts.tolist(), strict=True) if n}

    def _present(self, name: str) -> list[str]:
        column = self.table.columns.get(name)
        if column is None or column.kind != "text":
            return []
        return [column.categories[c] for c in np.unique(np.asarray(column.data)).tolist() if c >= 0]

    # ---- filtering and sorting ---------------------------------------------------------------------------
    def where_table(self) -> RunTable:
        """The rows as a filter expression sees them: every summary field, ``tag.NAME`` and ``bookmarked``."""
        extra: dict[str, run_table.Column] = {}
        for name in (f"{TAG_FIELD}{tag}" for tag in self.tags()):
            extra[name] = run_table.Column((name,), "bool", np.zeros(self.table.n))
        extra["bookmarked"] = run_table.Column(("bookmarked",), "bool", np.zeros(self.table.n))
        for run, notes in self._notes.items():
            for mark in notes.marks():
                rows = self._rows_of(mark.episode_id, run)
                for name in (*(f"{TAG_FIELD}{t}" for t in mark.tags), *(["bookmarked"] if mark.bookmark else [])):
                    np.asarray(extra[name].data)[rows] = 1.0
        return RunTable(self.table.n, {**self.table.columns, **extra})

    def mask(
        self,
        run: str | None = None,
        outcomes: set[str] | None = None,
        task: str = "",
        text: str = "",
        where: Bound | None = None,
    ) -> np.ndarray:
        """Which rows pass every filter: run (None: any), outcomes (None: any, even one this GUI does not know),
        task (an exact Task label, ``group:NAME`` or ``""``), text (case-folded) and an expression."""
        keep = np.ones(self.table.n, dtype=bool)
        if run is not None:
            keep &= self._text_mask(self._shown["run"], lambda v: v == run)
        if outcomes is not None:
            keep &= self._text_mask(self.table.columns.get("outcome"), lambda v: v in outcomes)
        if task.startswith(GROUP):
            keep &= self._text_mask(self.table.columns.get("group"), lambda v: v == task[len(GROUP) :])
        elif task:
            keep &= self._text_mask(self._shown["task_id"], lambda v: v == task)
        if text:
            keep &= self._search(text)
        if where is not None:
            keep &= where.mask(self.where_table())
        return keep

    def _text_mask(self, column: run_table.Column | None, test: Any) -> np.ndarray:
        """``test`` of each row's text (``""`` where missing), once per category."""
        if column is None or column.kind != "text":
            return np.full(self.table.n, bool(test("")))
        lookup = np.array([*(bool(test(c)) for c in column.categories), bool(test(""))], dtype=bool)
        result: np.ndarray = lookup[np.asarray(column.data)]
        return result

    def _search(self, text: str) -> np.ndarray:
        """Rows where ``text`` (case-folded) is part of the id, task, agents, outcome or any other top-level text
        field, or of an item of a list of text (a puzzle's categories)."""
        found = np.zeros(self.table.n, dtype=bool)
        searched = [self._shown.get(key) or self.table.columns.get(key) for key in SEARCHED]
        others = [c for c in self.table.columns.values() if len(c.path) == 1 and c.name not in NOT_SEARCHED]
        for column in (*searched, *others):
            if column is None or column.kind == "number" or column.kind == "bool":
                continue
            if column.kind == "text":
                found |= self._text_mask(column, lambda v: text in v.casefold())
            else:
                found |= np.fromiter((_has_text(v, text) for v in column.data), bool, self.table.n)
        return found

    def sort_key(self, column: int) -> np.ndarray:
        """Column ``column`` as floats that sort as its cells do: numbers by value (missing first), text in
        natural order (``ep-2`` before ``ep-10``)."""
        spec = self.columns[column]
        if spec.key not in self._sort_keys:
            self._sort_keys[spec.key] = self._make_sort_key(spec)
        return self._sort_keys[spec.key]

    def _make_sort_key(self, spec: Column) -> np.ndarray:
        shown = self._shown.get(spec.key)
        if shown is None:
            return np.zeros(self.table.n)
        if spec.numeric:
            if shown.kind not in ("number", "bool"):
                return np.full(self.table.n, -np.inf)
            values: np.ndarray = np.nan_to_num(np.asarray(shown.data, dtype=float), nan=-np.inf)
            return values
        if shown.kind == "text":
            order = sorted(range(len(shown.categories)), key=lambda k: natural_key(shown.categories[k]))
            rank = np.empty(len(order) + 1)
            rank[order] = np.arange(len(order))
            rank[-1] = -1  # missing: as the empty text, first
            result: np.ndarray = rank[np.asarray(shown.data)]
            return result
        texts = [natural_key(self._text(spec.key, row)) for row in range(self.table.n)]
        _, inverse = np.unique(np.array(texts, dtype=object), return_inverse=True)
        return np.asarray(inverse, dtype=float).reshape(-1)

    # ---- QAbstractTableModel ---------------------------------------------------------------------------
    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else self.table.n

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
        row, column = index.row(), self.columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cell(column, row)
        if role == Qt.ItemDataRole.UserRole:
            value = float(self.sort_key(index.column())[row])
            return value if column.numeric else natural_key(self._cell(column, row))
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _alignment(column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(column, row)
        if column.key == "outcome":
            return self._outcome_data(self._text("outcome", row), role)
        return None

    def _tooltip(self, column: Column, row: int) -> str | None:
        if column.key == "agents":
            roles = {n[len("agents.") :]: c for n, c in self.table.columns.items() if n.startswith("agents.")}
            return full_agents({role: v for role, c in roles.items() if (v := _value(c, row)) is not None})
        if column.key == "task_id":
            return self._task_note(row)
        return None

    def _task_note(self, row: int) -> str | None:
        """Why a Task cell is marked (its task id names another task in other runs), or None."""
        label, task_id = self._text("task_id", row), self.table.columns.get("task_id")
        plain = _value(task_id, row) if task_id is not None else None
        if plain is None or label == plain:
            return None
        run = self.key(row).run
        others = label[len(plain) + len(" (≠ ") : -1]
        runs = "runs" if ", " in others else "run"
        return f"{plain} of run {run} is another task than {plain} of {runs} {others}: {TASKS_DIFFER}"

    def _text(self, key: str, row: int) -> str:
        column = self._shown.get(key) or self.table.columns.get(key)
        value = _value(column, row) if column is not None else None
        return "" if value is None else str(value)

    def _cell(self, column: Column, row: int) -> str:
        shown = self._shown.get(column.key)
        value = _value(shown, row) if shown is not None else None
        if value is None:
            return ""
        if column.key == "score" or column.metric:
            return value_text(value)  # as the Compare dock and a fork's diff show the same number
        return str(value)

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


def _part(
    summaries: Iterable[Mapping[str, Any]], table: RunTable | None
) -> tuple[Sequence[Mapping[str, Any]], RunTable]:
    """A run's summaries and their columns (made now when not given)."""
    held = summaries if isinstance(summaries, Sequence) else list(summaries)
    return held, table if table is not None else RunTable.from_summaries(held)


def _value(column: run_table.Column, row: int) -> Any:
    """The value of one cell as the summary held it (None: missing)."""
    if column.kind == "text":
        code = int(column.data[row])
        return column.categories[code] if code >= 0 else None
    if column.kind == "other":
        return column.data[row]
    value = float(column.data[row])
    if value != value:
        return None
    if column.kind == "bool":
        return bool(value)
    return int(value) if column.integer else value


def _has_text(value: Any, text: str) -> bool:
    """Whether ``text`` is part of a text value or of an item of a list of text."""
    if isinstance(value, str):
        return text in value.casefold()
    return (
        isinstance(value, list) and all(isinstance(v, str) for v in value) and any(text in v.casefold() for v in value)
    )


def tint(colour: str) -> QColor:
    """``colour`` faint, for a cell's background behind text of that colour."""
    c = QColor(colour)
    c.setAlpha(OUTCOME_TINT_ALPHA)
    return c


def _alignment(column: Column) -> int:
    horizontal = Qt.AlignmentFlag.AlignRight if column.numeric else Qt.AlignmentFlag.AlignLeft
    return int(horizontal | Qt.AlignmentFlag.AlignVCenter)


# ---- the filter --------------------------------------------------------------------------------------------
class EpisodeFilterProxy(QAbstractProxyModel):
    """The rows of a :class:`RunIndexModel` that pass its filters (run, outcome, task, text, expression), in
    the order of the sorted column: a permutation of source rows, computed with numpy."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._filters: dict[str, Any] = {"run": None, "outcomes": None, "task": "", "text": "", "where": None}
        self._sort: tuple[int, bool] | None = None  # column, descending
        self._rows = np.zeros(0, dtype=np.int64)  # source rows, in the order shown
        self._position = np.zeros(0, dtype=np.int64)  # per source row: where it is shown, or -1

    def setSourceModel(self, model: QAbstractTableModel) -> None:  # type: ignore[override]
        super().setSourceModel(model)
        model.modelReset.connect(self._source_reset)
        model.rowsInserted.connect(self._source_grew)
        model.dataChanged.connect(self._source_changed)

    @property
    def source(self) -> RunIndexModel:
        model = self.sourceModel()
        assert isinstance(model, RunIndexModel)
        return model

    # ---- filters ---------------------------------------------------------------------------------------
    def set_run(self, run: str | None) -> None:
        """Show one run's episodes only; None shows every run's."""
        self._change(run=run)

    def set_outcomes(self, outcomes: Iterable[str] | None) -> None:
        """Show only these outcomes; None shows every outcome (including ones this GUI does not know)."""
        self._change(outcomes=None if outcomes is None else set(outcomes))

    def set_task(self, task_id: str) -> None:
        """Show one task (exact id), a whole group (``group:NAME``), or every task for ``""``."""
        self._change(task=task_id or "")

    def set_text(self, text: str) -> None:
        """Case-insensitive substring over episode id, task, agents, outcome, group and the other text fields of
        the summary (a puzzle's categories, a board's abort cause)."""
        self._change(text=text.strip().casefold())

    def set_where(self, where: Bound | None) -> None:
        """Show only the rows a filter expression keeps (bound to :meth:`RunIndexModel.where_table`); None: all."""
        self._change(where=where)

    def _change(self, **changes: Any) -> None:
        self._filters.update(changes)
        self.refresh()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Order the rows by ``column`` (stable: ties keep index order); -1 is the index order."""
        self._sort = None if column < 0 else (column, order == Qt.SortOrder.DescendingOrder)
        self.refresh()

    def refresh(self) -> None:
        """Filter and sort again (the filters, the sort or the rows changed), keeping the selection."""
        model = self.source
        order = np.arange(model.rowCount(), dtype=np.int64)
        if self._sort is not None and self._sort[0] < model.columnCount():
            key = model.sort_key(self._sort[0])
            order = np.argsort(-key if self._sort[1] else key, kind="stable")
        self._show(order[model.mask(**self._filters)[order]])

    def _show(self, rows: np.ndarray) -> None:
        """Show ``rows``: as rows inserted when only new ones follow those shown, else as a new layout that moves
        the selection and the current row with their episodes."""
        old = self._rows
        if len(rows) >= len(old) and np.array_equal(rows[: len(old)], old):
            if len(rows) > len(old):
                self.beginInsertRows(QModelIndex(), len(old), len(rows) - 1)
                self._set_rows(rows)
                self.endInsertRows()
            return
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        sources = [(int(old[i.row()]), i.column()) for i in persistent]
        self._set_rows(rows)
        moved = [self._shown_at(source, column) for source, column in sources]
        self.changePersistentIndexList(persistent, moved)
        self.layoutChanged.emit()

    def _shown_at(self, source: int, column: int) -> QModelIndex:
        position = int(self._position[source]) if source < len(self._position) else -1
        return self.index(position, column) if position >= 0 else QModelIndex()

    def _set_rows(self, rows: np.ndarray) -> None:
        self._rows = rows
        self._position = np.full(self.source.rowCount(), -1, dtype=np.int64)
        self._position[rows] = np.arange(len(rows))

    def _source_reset(self) -> None:
        self.beginResetModel()
        self._rows = np.zeros(0, dtype=np.int64)
        self.endResetModel()
        self.refresh()

    def _source_grew(self, _parent: QModelIndex, first: int, last: int) -> None:
        """Rows ``first``..``last`` were inserted into the source: the rows shown after them moved down."""
        self._rows = np.where(self._rows >= first, self._rows + (last - first + 1), self._rows)
        self.refresh()

    def _source_changed(self, top_left: QModelIndex, bottom_right: QModelIndex) -> None:
        """Cells changed (the Tags column): shown again, and filtered and sorted again if that counts."""
        self.refresh()
        if self.rowCount():
            self.dataChanged.emit(
                self.index(0, top_left.column()), self.index(self.rowCount() - 1, bottom_right.column())
            )

    # ---- QAbstractProxyModel -------------------------------------------------------------------------------
    def mapToSource(self, proxy_index: ModelIndex) -> QModelIndex:
        if not proxy_index.isValid() or proxy_index.row() >= len(self._rows):
            return QModelIndex()
        return self.source.index(int(self._rows[proxy_index.row()]), proxy_index.column())

    def mapFromSource(self, source_index: ModelIndex) -> QModelIndex:
        if not source_index.isValid():
            return QModelIndex()
        return self._shown_at(source_index.row(), source_index.column())

    def index(self, row: int, column: int, parent: ModelIndex = QModelIndex()) -> QModelIndex:  # noqa: B008
        if parent.isValid() or not (0 <= row < len(self._rows) and 0 <= column < self.columnCount()):
            return QModelIndex()
        return self.createIndex(row, column)

    def parent(self, _index: ModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        return QModelIndex()  # a flat table

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() or self.sourceModel() is None else self.source.columnCount()

    def hasChildren(self, parent: ModelIndex = QModelIndex()) -> bool:  # noqa: B008 - Qt's signature
        return not parent.isValid()
