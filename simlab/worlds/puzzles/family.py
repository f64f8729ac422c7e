"""The puzzles family (COMMA) as the rest of SimLab sees it: a task is one instance of one of ten puzzles,
the roles are the solver and the expert. Everything here is declared through
:class:`~simlab.core.family.WorldFamily`."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from simlab.core.errors import FormatError
from simlab.core.family import PlotSpec, Progress, SeriesSpec, Settings, TaskSource, WorldFamily
from simlab.core.reading import check_version, read_json
from simlab.core.seeding import rng
from simlab.core.writing import write_atomic
from simlab.worlds.puzzles import protocol
from simlab.worlds.puzzles.agents import AGENTS
from simlab.worlds.puzzles.figures import FIGURES
from simlab.worlds.puzzles.puzzle import PUZZLES, puzzle_class
from simlab.worlds.puzzles.world import PALETTE, ROLES, PuzzlesSettings, PuzzlesWorld

TASKS_FILE = "puzzles.json"
TASKS_FORMAT = "simlab.puzzles.tasks"
TASKS_VERSION = 1


class PuzzlesOptions(Settings):
    """Generate options of the puzzles."""

    telehealth_data: str | None = Field(
        None,
        description="folder of the PAD-UFES-20 dataset (metadata.csv and its images) for Telehealth; without it "
        "Telehealth uses clearly labelled synthetic stand-ins",
    )


def task_for(name: str, index: int, seed: int, options: Mapping[str, Any]) -> dict[str, Any]:
    """Instance ``index`` of puzzle ``name`` for ``seed``: the same on any machine."""
    instance = puzzle_class(name).generate(rng(seed, "puzzle-instance", name, index), options)
    return {"id": f"{name}_{index:03d}", "puzzle": name, "index": index, "instance": instance}


def generate(
    n: int, seed: int, options: BaseModel | None = None, groups: Sequence[str] = (), progress: Progress | None = None
) -> list[dict[str, Any]]:
    """``n`` tasks cycling through the puzzles (only ``groups`` when given), so 1,000 tasks are the paper's
    100 fixed instances of each of the ten."""
    names = list(groups) or list(PUZZLES)
    values = options.model_dump() if options is not None else {}
    out = []
    for k in range(n):
        out.append(task_for(names[k % len(names)], k // len(names), seed, values))
        if progress is not None:
            progress(k + 1, n, out[-1]["id"])
    return out


def write(
    out_dir: Path,
    n: int,
    seed: int,
    options: BaseModel | None = None,
    groups: Sequence[str] = (),
    progress: Progress | None = None,
) -> str:
    """``generate puzzles``: ``puzzles.json`` in ``out_dir``, which ``run --tasks`` reads."""
    tasks = generate(n, seed, options, groups, progress)
    body = {"format": TASKS_FORMAT, "version": TASKS_VERSION, "seed": seed, "tasks": tasks}
    write_atomic(out_dir, TASKS_FILE, json.dumps(body, indent=1))
    counts = Counter(t["puzzle"] for t in tasks)
    return (
        f"wrote {len(tasks)} puzzle instances to {out_dir / TASKS_FILE} ("
        + ", ".join(f"{counts[p]} {p}" for p in PUZZLES if counts[p])
        + ")"
    )


def load(path: Path) -> list[dict[str, Any]]:
    """Tasks from a folder holding ``puzzles.json`` or such a file; FormatError naming the bad entry."""
    file = path / TASKS_FILE if path.is_dir() else path
    data = read_json(file)
    check_version(data, TASKS_FORMAT, TASKS_VERSION, file)
    tasks = data.get("tasks")
    if not isinstance(tasks, list):
        raise FormatError(file, "field 'tasks'", "expected a list of puzzle instances")
    for k, task in enumerate(tasks):
        try:
            validate(task)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise FormatError(file, f"tasks[{k}]", str(exc)) from None
    return tasks


def validate(task: Mapping[str, Any]) -> None:
    """ValueError naming what is wrong with a task."""
    if not isinstance(task, Mapping) or not isinstance(task.get("instance"), Mapping):
        raise ValueError("expected an object with puzzle, id and instance")
    puzzle_class(str(task.get("puzzle"))).validate(task["instance"])


PLOTS = (
    PlotSpec(
        "Progress per turn (PSR)",
        "progress",
        (SeriesSpec.of_metric("progress", (46, 125, 50), "progress"),),
        y_range=(0.0, 100.0),
    ),
    PlotSpec(
        "Strikes and leaks",
        "count",
        (
            SeriesSpec.of_metric("strikes", (198, 40, 40), "strikes"),
            SeriesSpec.of_metric("private values revealed", (123, 31, 162), "leaks"),
        ),
        steps=True,
    ),
)

FAMILY = WorldFamily(
    name="puzzles",
    description="COMMA: a solver sees a puzzle module, an expert holds its manual; ten puzzles",
    world=PuzzlesWorld,
    roles=ROLES,
    tasks=TaskSource(
        generate=generate,
        load=load,
        write=write,
        validate=validate,
        options=PuzzlesOptions,
        groups=tuple(PUZZLES),
        group_of=lambda task: str(task.get("puzzle")),
        group_label="puzzle",
        n_help="how many puzzle instances (cycling through the puzzles; 1000 = 100 of each)",
    ),
    settings=PuzzlesSettings,
    agents=AGENTS,
    default_agents={"solver": "scripted", "expert": "oracle"},
    protocol=protocol.protocol,
    reply_form=protocol.reply_form,
    views="simlab.worlds.puzzles.presentation:VIEWS",
    palette=PALETTE,
    plots=PLOTS,
    headline_metrics=("sr", "psr", "mistakes", "acl", "leak"),
    figures=FIGURES,
    judges="simlab.worlds.puzzles.judges:JUDGES",
    spaces="simlab.worlds.puzzles.spaces:spaces",
)
