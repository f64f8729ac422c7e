"""A run's episode summaries as columns: what the app's browser, ``report --where``, exports and notebooks
read when a run holds 100,000 episodes.

Every field of a summary becomes a column named by its path: top-level fields by their name (``score``,
``outcome``), nested objects flattened with dots (``metrics.iou``, ``agents.builder``, ``usage.cost``,
``usage.roles.builder.calls``). A column is one of four kinds:

* ``number``: a float64 array, NaN where the episode has no value (integers up to 2**53 are exact);
* ``bool``: a float64 array of 0 and 1, NaN where missing;
* ``text``: int32 codes into ``categories`` (sorted), -1 where missing: a run repeats a few dozen distinct
  strings (outcomes, tasks, agents) however many episodes it holds;
* ``other``: the values themselves, a list (lists such as a puzzle's categories, or a field whose values are
  of different kinds in different episodes).

100,000 summaries held as dicts take several hundred MB; as columns a few tens.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    import pandas

Kind = Literal["number", "bool", "text", "other"]
MAX_FLAT_DEPTH = 4
"""Nested objects are flattened this many levels deep (usage.roles.ROLE.calls); deeper ones stay values."""


def value_kind(value: Any) -> Kind | None:
    """The kind of one value: None when it is missing (None, or a NaN number)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return None if value != value else "number"
    return "text" if isinstance(value, str) else "other"


@dataclass
class Column:
    """One column: its path in a summary, its kind and its data (see the module docstring)."""

    path: tuple[str, ...]
    kind: Kind
    data: np.ndarray | list[Any]
    categories: list[str] = field(default_factory=list)
    integer: bool = False  # a number column whose values were all integers (turns, errors): Int64 in pandas

    @property
    def name(self) -> str:
        return ".".join(self.path)

    def present(self) -> np.ndarray:
        """True where the episode has a value."""
        if self.kind in ("number", "bool"):
            return np.asarray(~np.isnan(np.asarray(self.data)), dtype=bool)
        if self.kind == "text":
            return np.asarray(np.asarray(self.data) >= 0, dtype=bool)
        return np.array([value_kind(v) is not None for v in self.data], dtype=bool)

    def values(self) -> list[Any]:
        """The column as Python values (None where missing), as the summaries hold them."""
        if self.kind == "text":
            lookup = [*self.categories, None]
            return [lookup[c] for c in np.asarray(self.data).tolist()]
        if self.kind == "bool":
            return [None if v != v else bool(v) for v in np.asarray(self.data).tolist()]
        if self.kind == "number":
            cast = int if self.integer else float
            return [None if v != v else cast(v) for v in np.asarray(self.data).tolist()]
        return list(self.data)

    def take(self, rows: np.ndarray) -> Column:
        """The column at ``rows`` (indices or a boolean mask)."""
        if self.kind == "other":
            picked = np.arange(len(self.data))[rows]
            return Column(self.path, self.kind, [self.data[k] for k in picked.tolist()])
        return Column(self.path, self.kind, np.asarray(self.data)[rows], self.categories, self.integer)


@dataclass
class RunTable:
    """The summaries of a run as columns (see the module docstring), in the order of the index."""

    n: int
    columns: dict[str, Column]

    @classmethod
    def from_summaries(cls, summaries: Sequence[Mapping[str, Any]]) -> RunTable:
        """The table of ``summaries`` (``Run.summaries``, or any list of summary dicts)."""
        raw: _Raw = {}
        tally = [0, 0]  # leaves appended by this summary, fields seen in all
        for row, summary in enumerate(summaries):
            tally[0] = 0
            _collect(raw, row, summary, (), tally)
            if tally[0] == tally[1]:
                continue  # every field seen so far is in this summary (the common case): nothing to pad
            for fields in raw.values():
                for values in fields.values():  # a field this summary lacks
                    if len(values) == row:
                        values.append(None)
        columns = [_column((*path, key), values) for path, fields in raw.items() for key, values in fields.items()]
        return cls(len(summaries), {c.name: c for c in columns})

    def __len__(self) -> int:
        return self.n

    @property
    def names(self) -> list[str]:
        return list(self.columns)

    def resolve(self, name: str) -> Column | None:
        """The column ``name`` names: a top-level field (or dotted path), else a metric of that name."""
        return self.columns.get(name) or self.columns.get(f"metrics.{name}")

    def take(self, rows: np.ndarray) -> RunTable:
        """The episodes at ``rows`` (indices, or a boolean mask such as a where-filter's)."""
        picked = {name: c.take(rows) for name, c in self.columns.items()}
        n = int(np.count_nonzero(rows)) if np.asarray(rows).dtype == bool else len(rows)
        return RunTable(n, picked)

    def argsort(self, name: str, descending: bool = False) -> np.ndarray:
        """Row order by column ``name`` (stable; missing values last, either way)."""
        column = self.resolve(name)
        if column is None:
            raise KeyError(name)
        if column.kind == "other":
            keys = np.array([str(v) for v in column.data], dtype=object)
            order = np.argsort(keys, kind="stable")
            return order[::-1] if descending else order
        key = np.asarray(column.data, dtype=float)
        if column.kind == "text":
            key = np.where(key < 0, np.nan, key)  # codes follow the sorted categories
        signed = -key if descending else key
        return np.argsort(signed, kind="stable")  # NaN sorts last

    @classmethod
    def concat(cls, tables: Sequence[RunTable]) -> RunTable:
        """The rows of ``tables`` one after another (a run read in chunks, or as it grows): a field some of
        them lack is missing in their rows, and a field of different kinds in different tables is ``other``."""
        names = list(dict.fromkeys(name for table in tables for name in table.columns))
        sizes = [table.n for table in tables]
        columns = [_joined([table.columns.get(name) for table in tables], sizes) for name in names]
        return cls(sum(sizes), {c.name: c for c in columns})

    def rows_of(self, name: str, value: str) -> np.ndarray:
        """The rows whose text column ``name`` holds ``value`` (a binary search of its categories, then one
        comparison of the codes); empty when there are none."""
        column = self.columns.get(name)
        if column is None or column.kind != "text":
            return np.empty(0, dtype=np.int64)
        code = bisect_left(column.categories, value)
        if code == len(column.categories) or column.categories[code] != value:
            return np.empty(0, dtype=np.int64)
        return np.flatnonzero(np.asarray(column.data) == code)

    def latest_rows(self, name: str) -> np.ndarray | None:
        """Where the text column ``name`` (an episode id) repeats, the rows to keep: each value once, in the
        place it first took, with the values of its last row (a later index line wins); None when nothing
        repeats."""
        column = self.columns.get(name)
        if column is None or column.kind != "text":
            return None
        codes = np.asarray(column.data)
        _, first = np.unique(codes, return_index=True)
        if len(first) == len(codes):
            return None
        _, from_end = np.unique(codes[::-1], return_index=True)  # the same values, in the same order
        last = len(codes) - 1 - from_end
        rows: np.ndarray = last[np.argsort(first, kind="stable")]
        return rows

    def to_pandas(self) -> pandas.DataFrame:
        """A DataFrame, one row per episode, one column per field (text as pandas categoricals)."""
        import pandas as pd

        data: dict[str, Any] = {}
        for name, c in self.columns.items():
            if c.kind == "text":
                data[name] = pd.Categorical.from_codes(np.asarray(c.data), categories=c.categories)
            elif c.kind == "bool":
                data[name] = pd.array(c.values(), dtype="boolean")
            elif c.kind == "number":
                data[name] = pd.array(c.values(), dtype="Int64") if c.integer else np.asarray(c.data)
            else:
                data[name] = pd.Series(c.data, dtype=object)
        return pd.DataFrame(data)

    def nbytes(self) -> int:
        """Bytes held by the arrays (object columns counted by their list only)."""
        return sum(c.data.nbytes if isinstance(c.data, np.ndarray) else 8 * len(c.data) for c in self.columns.values())


_Raw = dict[tuple[str, ...], dict[str, list[Any]]]
"""Values gathered so far: the path of an object -> its field -> the values of the rows read."""


def _collect(raw: _Raw, row: int, obj: Mapping[str, Any], path: tuple[str, ...], tally: list[int]) -> None:
    """Append the fields of ``obj`` (an object at ``path`` of summary number ``row``) to their columns, objects
    flattened up to :data:`MAX_FLAT_DEPTH` levels, counting in ``tally`` the leaves appended and the fields
    first seen. Keyed per object, so a leaf costs no new tuple: 100,000 summaries of 60 fields each are 6
    million leaves."""
    fields = raw.get(path)
    if fields is None:
        fields = raw[path] = {}
    deeper = len(path) + 1 < MAX_FLAT_DEPTH
    nested = 0
    for key, item in obj.items():
        if deeper and (type(item) is dict or (type(item) not in _SCALARS and isinstance(item, Mapping))):
            _collect(raw, row, item, (*path, str(key)), tally)
            nested += 1
            continue
        values = fields.get(key)
        if values is None:  # a field first seen here: missing in the rows before
            values = fields[key] = [None] * row
            tally[1] += 1
        values.append(item)
    tally[0] += len(obj) - nested


_SCALARS = frozenset((str, int, float, bool, type(None)))
_KIND_OF_TYPE: dict[type, Kind | None] = {str: "text", int: "number", float: "number", bool: "bool", type(None): None}


def _column(path: tuple[str, ...], values: list[Any]) -> Column:
    """The column of one field's values, of the one kind they share (``other`` when they do not)."""
    types = set(map(type, values))  # C speed; a type not in the table (a list, a float subclass) looks closer
    if types <= _KIND_OF_TYPE.keys():
        kinds = {_KIND_OF_TYPE[t] for t in types} - {None}
    else:
        kinds = {value_kind(v) for v in values} - {None}
    found = kinds.pop() if len(kinds) == 1 else "other" if kinds else "number"
    kind: Kind = found or "number"
    if kind in ("number", "bool"):
        present = values if type(None) not in types else [np.nan if v is None else v for v in values]
        floats = np.array(present, dtype=np.float64)  # from a list: C speed, where a generator is not
        integer = kind == "number" and types <= {int, type(None)}
        return Column(path, kind, floats, integer=integer)
    if kind == "text":
        distinct = set(values)
        distinct.discard(None)
        categories = sorted(distinct)
        code: dict[str | None, int] = {c: k for k, c in enumerate(categories)}
        code[None] = -1
        codes = np.fromiter(map(code.__getitem__, values), dtype=np.int32, count=len(values))
        return Column(path, kind, codes, categories)
    return Column(path, kind, values)


def _joined(parts: Sequence[Column | None], sizes: Sequence[int]) -> Column:
    """One column from its parts in consecutive tables of ``sizes`` rows (None: a table without it)."""
    present = [p for p in parts if p is not None]
    path, kinds = present[0].path, {p.kind for p in present}
    kind = kinds.pop() if len(kinds) == 1 else "other"
    if kind in ("number", "bool"):
        arrays = [np.full(n, np.nan) if p is None else np.asarray(p.data) for p, n in zip(parts, sizes, strict=True)]
        return Column(path, kind, np.concatenate(arrays), integer=all(p.integer for p in present))
    if kind == "text":
        categories = sorted({c for p in present for c in p.categories})
        position = {c: k for k, c in enumerate(categories)}
        arrays = [_recoded(p, n, position) for p, n in zip(parts, sizes, strict=True)]
        return Column(path, kind, np.concatenate(arrays).astype(np.int32), categories)
    values = [v for p, n in zip(parts, sizes, strict=True) for v in ([None] * n if p is None else p.values())]
    return Column(path, "other", values)


def _recoded(part: Column | None, n: int, position: dict[str, int]) -> np.ndarray:
    """The codes of a text column's part as codes into the joined categories (``position``: category -> its
    code there, a superset of the part's own), -1 kept. A dict, not a search: an episode id column has as
    many categories as rows."""
    if part is None:
        return np.full(n, -1, dtype=np.int32)
    lookup = np.array([*(position[c] for c in part.categories), -1], dtype=np.int32)
    codes: np.ndarray = lookup[np.asarray(part.data)]  # -1 takes the last slot: missing stays missing
    return codes
