"""Tasks: one task is one board layout (the safe line, the opponent's marks, the hidden mines) as JSON::

    {"id": "board_000", "group": "row", "line": "row 0", "blocked": [[1, 1]], "mines": [[2, 0], [1, 2]]}

``generate`` draws them from ``(seed, index)``; ``write`` saves a folder (one file per board and an index)
that ``load`` reads back; ``validate`` names the first bad field. Groups are the kind of the safe line.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from simlab.core.errors import ConfigError, FormatError
from simlab.core.family import Progress
from simlab.core.reading import check_version, read_json
from simlab.core.recording import write_json_atomic
from simlab.core.seeding import rng

from hidden_tictactoe.board import CELLS, LINE_KINDS, LINES, Cell, Layout, free_lines, line_kind

INDEX_FILE = "tasks.json"
INDEX_FORMAT = "hidden-tictactoe.tasks"
INDEX_VERSION = 1


class GenerateOptions(BaseModel):
    """Options of ``generate tictactoe`` (flags ``--mines`` and ``--blocked``)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    mines: int = Field(2, ge=1, le=6, description="hidden mines per board (only the seer sees them)")
    blocked: int = Field(1, ge=0, le=5, description="opponent's marks per board (both roles see them)")


def make_task(seed: int, index: int, options: GenerateOptions, groups: Sequence[str] = ()) -> dict[str, Any]:
    """Board ``index`` of ``seed``: a safe line (of ``groups`` only, when given), then hazards off it chosen
    among every placement that leaves that line the only free one. ConfigError when none does."""
    r = rng(seed, "tictactoe-board", index)
    line = r.choice([name for name in LINES if not groups or line_kind(name) in groups])
    others = [c for c in CELLS if c not in LINES[line]]
    count = options.mines + options.blocked
    fits = [combo for combo in itertools.combinations(others, count) if _only_free(line, combo)]
    if not fits:
        raise ConfigError(
            f"{options.mines} mines and {options.blocked} O's cannot leave {line} the only free line "
            "(it takes 3 to 6 of them in all)"
        )
    hazards = list(r.choice(fits))
    blocked = sorted(r.sample(hazards, options.blocked))
    mines = sorted(c for c in hazards if c not in blocked)
    task_id = f"board_{index:03d}"
    return {"id": task_id, "group": line_kind(line), **Layout(tuple(blocked), tuple(mines), line).to_json()}


def _only_free(line: str, hazards: Sequence[Cell]) -> bool:
    return free_lines(Layout((), tuple(hazards), line)) == [line]


def _options(options: BaseModel | None) -> GenerateOptions:
    return options if isinstance(options, GenerateOptions) else GenerateOptions()


def generate(
    n: int, seed: int, options: BaseModel | None = None, groups: Sequence[str] = (), progress: Progress | None = None
) -> list[dict[str, Any]]:
    """``n`` boards (ids ``board_000``...) from ``seed``; with ``groups`` every safe line is of those kinds."""
    out = []
    for index in range(n):
        out.append(make_task(seed, index, _options(options), groups))
        if progress is not None:
            progress(index + 1, n, out[-1]["id"])
    return out


def write(
    out_dir: Path,
    n: int,
    seed: int,
    options: BaseModel | None = None,
    groups: Sequence[str] = (),
    progress: Progress | None = None,
) -> str:
    """``generate tictactoe``: one ``board_NNN.json`` per task and the index ``tasks.json``; returns a summary."""
    tasks = generate(n, seed, options, groups, progress)
    for task in tasks:
        write_json_atomic(Path(out_dir) / f"{task['id']}.json", task, 2)
    index = {"format": INDEX_FORMAT, "version": INDEX_VERSION, "seed": seed, "tasks": [t["id"] for t in tasks]}
    write_json_atomic(Path(out_dir) / INDEX_FILE, index, 2)
    kinds = ", ".join(f"{sum(t['group'] == k for t in tasks)} {k}" for k in LINE_KINDS)
    return f"wrote {len(tasks)} boards to {out_dir} (safe line: {kinds})"


def load(path: Path) -> list[dict[str, Any]]:
    """Tasks from a folder (through ``tasks.json``, else every ``board_*.json``), an index, a list or one task
    file. FormatError names the file and the bad field."""
    path = Path(path)
    if path.is_dir():
        index = path / INDEX_FILE
        files = _index_files(index) if os.path.lexists(index) else sorted(path.glob("board_*.json"))
        return [task for f in files for task in load(f)]
    data = read_json(path)
    if isinstance(data, Mapping) and data.get("format") == INDEX_FORMAT:
        return [task for f in _index_files(path) for task in load(f)]
    items = data if isinstance(data, list) else [data]
    return [_checked(path, k, item) for k, item in enumerate(items)]


def _index_files(index: Path) -> list[Path]:
    data = read_json(index)
    check_version(data, INDEX_FORMAT, INDEX_VERSION, index)  # an unknown format or a newer version is refused
    ids = data.get("tasks")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise FormatError(index, "field 'tasks'", "expected a list of board ids")
    return [index.parent / f"{task_id}.json" for task_id in ids]


def _checked(path: Path, k: int, item: Any) -> dict[str, Any]:
    try:
        validate(item)
    except ValueError as exc:
        raise FormatError(path, f"task {k}", str(exc)) from None
    return dict(item)


def validate(task: Mapping[str, Any]) -> None:
    """ValueError naming the first bad field of a task JSON."""
    if not isinstance(task, Mapping):
        raise ValueError(f"expected a task object, got {type(task).__name__}")
    if not isinstance(task.get("id"), str) or not task["id"]:
        raise ValueError(f"field 'id': expected a non-empty string, got {task.get('id')!r}")
    layout = Layout.from_task(task)
    if task.get("group", line_kind(layout.line)) != line_kind(layout.line):
        raise ValueError(f"field 'group': expected {line_kind(layout.line)!r} for {layout.line}")


def group_of(task: Mapping[str, Any]) -> str | None:
    """The kind of a task's safe line (``row``, ``column``, ``diagonal``)."""
    group = task.get("group")
    return str(group) if group is not None else None
