"""A run as tables for other tools: ``export RUN --format parquet`` and ``load_run(RUN).to_pandas()``.

* ``episodes.parquet``: one row per episode summary, a column per field, nested objects flattened with dots
  (``metrics.iou``, ``agents.builder``), as :class:`~simlab.core.run_table.RunTable` holds them (text columns
  as dictionary-encoded strings, lists and mixed fields as JSON text);
* ``events.parquet``: one row per event of every episode: ``episode_id``, ``index`` (its place in the
  episode), ``turn``, ``role``, ``kind``, ``text`` (a message's or reasoning's words; null for other kinds)
  and ``data`` (the event's data as JSON text). Episodes are read one at a time and written as they are
  read, so a run of any size exports in bounded memory.

pyarrow is imported only here, when a table is written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from simlab.core.recording import Run, load_episode
from simlab.core.run_table import Column, RunTable

if TYPE_CHECKING:
    import pyarrow

EPISODES_FILE = "episodes.parquet"
EVENTS_FILE = "events.parquet"
EVENTS_BATCH = 50_000
"""Events gathered before a row group is written: bounds memory whatever the run's size."""


def episodes_table(table: RunTable) -> pyarrow.Table:
    """The episode summaries as an Arrow table (see the module docstring)."""
    import pyarrow as pa

    return pa.table({name: _arrow_column(c) for name, c in table.columns.items()})


def _arrow_column(column: Column) -> pyarrow.Array:
    import pyarrow as pa

    if column.kind == "number":
        data = np.asarray(column.data)
        missing = np.isnan(data)
        if column.integer:  # turns, errors, repeat: integers in the file too
            return pa.array(np.where(missing, 0, data).astype(np.int64), mask=missing)
        return pa.array(data, mask=missing)
    if column.kind == "bool":
        return pa.array(column.values(), type=pa.bool_())
    if column.kind == "text":
        codes = np.asarray(column.data)
        indices = pa.array(codes, mask=codes < 0, type=pa.int32())
        return pa.DictionaryArray.from_arrays(indices, pa.array(column.categories, type=pa.string()))
    return pa.array([None if v is None else json.dumps(v, ensure_ascii=False) for v in column.data], pa.string())


EVENT_SCHEMA_FIELDS: tuple[tuple[str, str], ...] = (
    ("episode_id", "string"),
    ("index", "int32"),
    ("turn", "int32"),
    ("role", "string"),
    ("kind", "string"),
    ("text", "string"),
    ("data", "string"),
)


def write_parquet(run: Run, summaries: Sequence[dict[str, Any]], folder: Path) -> list[Path]:
    """Write ``episodes.parquet`` and ``events.parquet`` of ``summaries`` (episodes of ``run``) into
    ``folder`` (a scratch folder: the caller puts the files in place); returns the files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    episodes = folder / EPISODES_FILE
    pq.write_table(episodes_table(RunTable.from_summaries(summaries)), episodes)
    schema = pa.schema([(name, getattr(pa, kind)()) for name, kind in EVENT_SCHEMA_FIELDS])
    events = folder / EVENTS_FILE
    with pq.ParquetWriter(events, schema) as writer:
        rows: list[tuple[Any, ...]] = []
        for summary in summaries:
            rows.extend(_event_rows(run, summary))
            if len(rows) >= EVENTS_BATCH:
                writer.write_table(_rows_table(rows, schema))
                rows = []
        writer.write_table(_rows_table(rows, schema))
    return [episodes, events]


def _event_rows(run: Run, summary: dict[str, Any]) -> list[tuple[Any, ...]]:
    episode = load_episode(run.episode_path(summary))
    out = []
    for index, event in enumerate(episode.events):
        said = event.data.get("text") if event.kind in ("message", "reasoning") else None
        text = said if isinstance(said, str) else None
        data = json.dumps(event.data, ensure_ascii=False, allow_nan=False)
        out.append((episode.episode_id, index, event.turn, event.role, event.kind, text, data))
    return out


def _rows_table(rows: list[tuple[Any, ...]], schema: pyarrow.Schema) -> pyarrow.Table:
    import pyarrow as pa

    columns = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
    return pa.table([pa.array(list(values), type=f.type) for values, f in zip(columns, schema, strict=True)], schema)
