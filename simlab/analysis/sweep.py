"""Plots of a sweep, without a window: which per-episode fields can be plotted and grouped, the arrays per group,
histogram bins and scatter jitter, from the :class:`~simlab.core.run_table.RunTable` columns of the open runs.

The app's *Sweep* dock (``simlab/gui/sweep_plots.py``) draws what this module computes, so the numbers can be
tested (and used from a notebook) without Qt. Rows are numbered across the runs in the order given, each run's
rows in its index order; :meth:`SweepTable.key` gives a row's (run name, episode id).

* A **metric** is any number or true/false field that some episode has (``score``, ``turns``, ``errors``,
  ``metrics.iou``, ``usage.cost``, ``replies.builder.acts``...), true/false counted as 1/0.
* A **grouping** is any text or true/false field with 2 to :data:`MAX_GROUPS` distinct values across the runs
  (``outcome``, ``group``, ``agents.builder``...; not one that names every episode apart, such as its id), the
  agents' whole *lineup* (``D1=oracle builder=scripted``,
  as the Figures dock names its series) and, when several runs are open, the *run*. An episode without a
  value of the field is put in a group of its own, ``(no FIELD)``.

Histogram bins are :func:`numpy.histogram_bin_edges` ``"auto"`` over every group's values together, so the
groups share their bins; integer-valued metrics get whole-number bins centred on the values. Scatter points of
an integer-valued metric are spread by a small jitter drawn from a generator seeded by the metric's name, one
draw per row of the table, so the same runs draw the same picture and a point keeps its place whatever the
grouping.
"""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from simlab.core.family import lineup_of
from simlab.core.run_table import Column, RunTable
from simlab.core.seeding import stable_seed

MAX_GROUPS = 12
"""A grouping has at most this many values: more series than that are not told apart by colour."""
MAX_BINS = 200
"""At most this many histogram bins: ``"auto"`` over 100,000 values of a wide range asks for thousands."""
JITTER = 0.2
"""Half the width of an integer metric's jitter, in units of the metric: points of 3 stay between 2.8 and 3.2."""
RUN = "run"
"""The grouping by open run (offered when several are open)."""
LINEUP = "lineup"
"""The grouping by the agents that played (every ``agents.ROLE`` together)."""
AGENTS = "agents."
NOT_METRICS = frozenset({"version"})
"""Number fields that are not measurements (the index line's format version)."""
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass(frozen=True)
class Group:
    """One series: its label and the rows (into the :class:`SweepTable`) it holds, in table order."""

    label: str
    rows: np.ndarray


@dataclass(frozen=True)
class SweepTable:
    """The summaries of the open runs, as ``(run name, table)`` pairs, read as one set of rows."""

    runs: tuple[tuple[str, RunTable], ...]

    @property
    def n(self) -> int:
        return sum(table.n for _, table in self.runs)

    def title(self) -> str:
        """The runs' name (or how many) and the episode count, for a plot's title."""
        names = [name for name, _ in self.runs]
        which = names[0] if len(names) == 1 else f"{len(names)} runs"
        return f"{which} · {self.n:,} episode{'s' if self.n != 1 else ''}"

    def _columns(self, name: str) -> list[Column | None]:
        return [table.columns.get(name) for _, table in self.runs]

    def _first_seen(self) -> list[Column]:
        """One column per name over the runs, in the order the runs first have them."""
        seen: dict[str, Column] = {}
        for _, table in self.runs:
            for name, column in table.columns.items():
                seen.setdefault(name, column)
        return list(seen.values())

    def metrics(self) -> list[str]:
        """Every plottable field: top-level numbers, then ``metrics.*``, then the other nested numbers."""
        names = [
            c.name
            for c in self._first_seen()
            if c.kind in ("number", "bool") and c.name not in NOT_METRICS and self.present(c.name).any()
        ]
        return sorted(names, key=lambda name: 0 if "." not in name else 1 if name.startswith("metrics.") else 2)

    def groupings(self) -> list[str]:
        """Every field to group by (see the module docstring), the run and lineup first when they apply."""
        fixed = [RUN] if len(self.runs) > 1 else []
        if any(name.startswith(AGENTS) for name in self.names()):
            fixed.append(LINEUP)
        fields = [c.name for c in self._first_seen() if c.kind in ("text", "bool") and self._few(c.name)]
        return [name for name in [*fixed, *fields] if 2 <= len(self.labels(name)[1]) <= min(MAX_GROUPS, self.n - 1)]

    def _few(self, name: str) -> bool:
        """Whether field ``name`` has at most :data:`MAX_GROUPS` values, known without reading its rows."""
        return len({label for c in self._columns(name) for label in _categories(c)}) <= MAX_GROUPS

    def names(self) -> list[str]:
        return [c.name for c in self._first_seen()]

    def numbers(self, name: str) -> np.ndarray:
        """Field ``name`` as float64 over every row, NaN where an episode has no number there."""
        parts = [
            np.asarray(c.data, dtype=np.float64)
            if c is not None and c.kind in ("number", "bool")
            else np.full(t.n, np.nan)
            for c, (_, t) in zip(self._columns(name), self.runs, strict=True)
        ]
        return np.concatenate(parts) if parts else np.zeros(0)

    def present(self, name: str) -> np.ndarray:
        return np.asarray(~np.isnan(self.numbers(name)), dtype=bool)

    def integer(self, name: str) -> bool:
        """Whether every value of ``name`` is a whole number (turns, errors, true/false)."""
        values = self.numbers(name)
        values = values[~np.isnan(values)]
        return bool(np.all(values == np.round(values)))

    def labels(self, name: str) -> tuple[np.ndarray, list[str]]:
        """Field ``name`` as int codes into the sorted labels of its values (-1 where missing)."""
        if name == RUN:
            codes = np.repeat(np.arange(len(self.runs)), [t.n for _, t in self.runs])
            return codes, [run for run, _ in self.runs]
        if name == LINEUP:
            return self._lineups()
        columns = self._columns(name)
        labels = sorted({label for c in columns for label in _categories(c)})
        code = {label: k for k, label in enumerate(labels)}
        parts = [_codes(c, t.n, code) for c, (_, t) in zip(columns, self.runs, strict=True)]
        return (np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)), labels

    def kind(self, name: str) -> str | None:
        """The kind of field ``name`` (``number``, ``bool``, ``text``, ``other``) in the first run having it."""
        return next((c.kind for c in self._columns(name) if c is not None), None)

    def _lineups(self) -> tuple[np.ndarray, list[str]]:
        """Codes of each row's agents together (every ``agents.ROLE``), labelled as the Figures dock labels a
        lineup; the labels sorted."""
        fields = {role: self.labels(role) for role in self.agent_fields()}
        stacked = np.stack([codes for codes, _ in fields.values()], axis=1)
        combos, inverse = np.unique(stacked, axis=0, return_inverse=True)
        labels = [
            lineup_of(
                {
                    role[len(AGENTS) :]: names[c]
                    for (role, (_, names)), c in zip(fields.items(), combo, strict=True)
                    if c >= 0
                }
            )
            for combo in combos.tolist()
        ]
        order = np.argsort(np.array(labels, dtype=object), kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        return rank[inverse.reshape(-1)], [labels[k] for k in order.tolist()]

    def agent_fields(self) -> list[str]:
        """The ``agents.ROLE`` fields, by name."""
        return sorted(name for name in self.names() if name.startswith(AGENTS))

    def value(self, name: str, row: int) -> str | None:
        """The label of grouping field ``name`` at ``row`` (None where missing)."""
        codes, labels = self.labels(name)
        return labels[codes[row]] if codes[row] >= 0 else None

    def groups(self, name: str | None) -> list[Group]:
        """The rows per value of grouping ``name`` (None: one group of every row), in label order, the rows
        without a value last."""
        if name is None:
            return [Group("all episodes", np.arange(self.n))]
        codes, labels = self.labels(name)
        out = [Group(label, np.flatnonzero(codes == k)) for k, label in enumerate(labels)]
        missing = np.flatnonzero(codes < 0)
        return [g for g in out if len(g.rows)] + ([Group(f"(no {name})", missing)] if len(missing) else [])

    def key(self, row: int) -> tuple[str, str]:
        """(run name, episode id) of ``row``."""
        for name, table in self.runs:
            if row < table.n:
                column = table.columns["episode_id"]
                return name, column.categories[int(np.asarray(column.data)[row])]
            row -= table.n
        raise IndexError(row)


def _categories(column: Column | None) -> list[str]:
    """The labels a text or true/false column holds (none for another kind)."""
    if column is None or column.kind not in ("text", "bool"):
        return []
    if column.kind == "text":
        return column.categories
    data = np.asarray(column.data)
    return [label for label, value in (("false", 0.0), ("true", 1.0)) if (data == value).any()]


def _codes(column: Column | None, n: int, code: dict[str, int]) -> np.ndarray:
    """A column's values as codes into the labels ``code`` numbers (-1 where missing or of another kind)."""
    if column is None or column.kind not in ("text", "bool"):
        return np.full(n, -1, dtype=np.int64)
    if column.kind == "bool":
        data = np.asarray(column.data)
        out = np.full(n, -1, dtype=np.int64)
        for label, value in (("false", 0.0), ("true", 1.0)):
            out[data == value] = code.get(label, -1)
        return out
    remap = np.array([*(code[c] for c in column.categories), -1], dtype=np.int64)
    return np.asarray(remap[np.asarray(column.data)])  # a missing value's code -1 picks the trailing -1


def sweep_table(runs: Sequence[tuple[str, RunTable]]) -> SweepTable:
    """The :class:`SweepTable` of ``(run name, table)`` pairs (e.g. ``(name, run.table())``)."""
    return SweepTable(tuple(runs))


# ---- what the plots draw ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Series:
    """A group's points: the rows with a value of every plotted metric, and the values (x, and y when two)."""

    label: str
    rows: np.ndarray
    x: np.ndarray
    y: np.ndarray | None = None


@dataclass(frozen=True)
class Selection:
    """What a plot shows: a series per group and how many episodes each plotted field leaves out."""

    series: tuple[Series, ...]
    missing: dict[str, int]

    def note(self) -> str:
        """ "12 episodes have no metrics.iou; 1 episode has no turns" ("" when nothing was left out)."""
        said = [
            f"{count:,} episode{' has' if count == 1 else 's have'} no {name}"
            for name, count in self.missing.items()
            if count
        ]
        return "; ".join(said) + (": left out" if said else "")


def select(table: SweepTable, x: str, y: str | None = None, group: str | None = None) -> Selection:
    """The series of metric ``x`` (and ``y``) per value of ``group``, episodes without a value left out."""
    xs = table.numbers(x)
    ys = table.numbers(y) if y is not None else None
    keep = ~np.isnan(xs) if ys is None else ~np.isnan(xs) & ~np.isnan(ys)
    missing = {x: int(np.isnan(xs).sum())}
    if ys is not None and y is not None and y != x:
        missing[y] = int(np.isnan(ys).sum())
    series = []
    for g in table.groups(group):
        rows = g.rows[keep[g.rows]]
        series.append(Series(g.label, rows, xs[rows], ys[rows] if ys is not None else None))
    return Selection(tuple(series), missing)


def bin_edges(values: np.ndarray, integer: bool = False) -> np.ndarray:
    """Histogram edges for ``values`` (every group's together): numpy's ``"auto"``, at most :data:`MAX_BINS`
    bins; for whole numbers, bins of a whole width centred on them (``"auto"`` would leave empty bins between)."""
    values = np.asarray(values, dtype=np.float64)
    if not len(values):
        return np.array([0.0, 1.0])
    edges = np.histogram_bin_edges(values, bins="auto")
    if len(edges) > MAX_BINS + 1:
        edges = np.histogram_bin_edges(values, bins=MAX_BINS)
    if not integer:
        return edges
    low, high = float(values.min()), float(values.max())
    whole = high - low + 1  # the values' span, a bin each
    width = float(max(1.0, np.ceil(edges[1] - edges[0]), np.ceil(whole / MAX_BINS)))
    return low - 0.5 + width * np.arange(int(np.ceil(whole / width)) + 1)


def bin_of(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The bin of each value as :func:`numpy.histogram` counts it (the last bin holds its right edge; -1 for
    a value outside every bin)."""
    index = np.searchsorted(edges, values, side="right") - 1
    index[values == edges[-1]] = len(edges) - 2
    index[(values < edges[0]) | (values > edges[-1])] = -1
    return index


def counts(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """How many of ``values`` fall in each bin (equal to ``numpy.histogram(values, edges)[0]``)."""
    index = bin_of(values, edges)
    return np.bincount(index[index >= 0], minlength=len(edges) - 1)


def jittered(table: SweepTable, name: str, rows: np.ndarray) -> np.ndarray:
    """Metric ``name`` at ``rows``, spread by ±:data:`JITTER` when every value is whole (stacked points apart),
    from a generator seeded by the name: one draw per row of the table, so a point keeps its place."""
    values = np.asarray(table.numbers(name)[rows], dtype=np.float64)
    if not table.integer(name):
        return values
    spread = np.random.default_rng(stable_seed("sweep jitter", name)).uniform(-JITTER, JITTER, table.n)
    return np.asarray(values + spread[rows], dtype=np.float64)


# ---- filter expressions for what a plot shows ---------------------------------------------------------------


def where_name(name: str) -> str:
    """``name`` as a filter expression writes it (backquoted unless a plain dotted name of no keyword)."""
    plain = _PLAIN_NAME.fullmatch(name) and not any(keyword.iskeyword(part) for part in name.split("."))
    return name if plain and name not in ("true", "false", "null") else f"`{name}`"


def bin_where(name: str, edges: np.ndarray, k: int) -> str:
    """The filter expression of bin ``k`` of metric ``name``: ``low <= name < high`` (``<=`` for the last bin),
    the edges written exactly so it keeps the episodes the bin counts."""
    field, low, high = where_name(name), float(edges[k]), float(edges[k + 1])
    closing = "<=" if k == len(edges) - 2 else "<"
    return f"{field} >= {low!r} and {field} {closing} {high!r}"


def group_where(table: SweepTable, name: str | None, rows: np.ndarray) -> str:
    """The filter expression that keeps the group of grouping ``name`` holding ``rows`` ("" for every episode
    or a whole run, which the browser's run menu chooses)."""
    if name is None or name == RUN or not len(rows):
        return ""
    fields = table.agent_fields() if name == LINEUP else [name]
    row = int(rows[0])  # every row of a group has the same values of its fields
    return " and ".join(_equals(field, table.value(field, row), table.kind(field) == "bool") for field in fields)


def _equals(name: str, value: str | None, boolean: bool) -> str:
    if value is None:
        return f"{where_name(name)} == None"
    return f"{where_name(name)} == {value if boolean else _quoted(value)}"


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a Python string literal, as the parser reads it
