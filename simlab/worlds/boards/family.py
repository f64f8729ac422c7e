"""The boards family (cobot structure building) as the rest of SimLab sees it: tasks are target boards, roles
the programmer and the robot. Everything here is declared through :class:`~simlab.core.family.WorldFamily`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from simlab.core.errors import FormatError
from simlab.core.family import Importer, PlotSpec, Progress, SeriesSpec, TaskSource, WorldFamily
from simlab.core.reading import check_version, read_json
from simlab.worlds.boards import protocol
from simlab.worlds.boards.agents import AGENTS
from simlab.worlds.boards.clembench import is_sb_so, read_targets
from simlab.worlds.boards.figures import FIGURES
from simlab.worlds.boards.targets import (
    GROUPS,
    TARGETS_FILE,
    TARGETS_FORMAT,
    TARGETS_VERSION,
    Target,
    generate_targets,
    save_targets,
)
from simlab.worlds.boards.world import PALETTE, ROLES, BoardsSettings, BoardsWorld


def generate(
    n: int, seed: int, options: BaseModel | None = None, groups: Sequence[str] = (), progress: Progress | None = None
) -> list[dict[str, Any]]:
    """``n`` target boards in the paper's proportions of 2-5 components (only ``groups`` when given)."""
    out = []
    for k, target in enumerate(generate_targets(n, seed, groups), start=1):
        out.append(target.to_json())
        if progress is not None:
            progress(k, n, target.id)
    return out


def write(
    out_dir: Path,
    n: int,
    seed: int,
    options: BaseModel | None = None,
    groups: Sequence[str] = (),
    progress: Progress | None = None,
) -> str:
    """``generate boards``: ``targets.json`` in ``out_dir``, which ``run --tasks`` reads."""
    targets = [Target.from_json(t) for t in generate(n, seed, options, groups, progress)]
    save_targets(targets, out_dir, format=TARGETS_FORMAT, version=TARGETS_VERSION, seed=seed)
    counts = Counter(t.components for t in targets)
    spread = ", ".join(f"{counts[int(g)]} of {g} components" for g in GROUPS)
    return f"wrote {len(targets)} target boards to {out_dir / TARGETS_FILE} ({spread})"


def load(path: Path) -> list[dict[str, Any]]:
    """Targets from a folder holding ``targets.json``, such a file, or a reference target file (clembench's
    ``sb_so_*.json``); FormatError naming the file and the bad field."""
    file = path / TARGETS_FILE if path.is_dir() else path
    data = read_json(file)
    if is_sb_so(data):
        return [t.to_json() for t in read_targets(file, data)]
    check_version(data, TARGETS_FORMAT, TARGETS_VERSION, file)
    entries = data.get("targets")
    if not isinstance(entries, list):
        raise FormatError(file, "field 'targets'", "expected a list of target boards (or a clembench sb_so file)")
    out = []
    for k, entry in enumerate(entries):
        try:
            out.append(Target.from_json(entry).to_json())
        except (ValueError, TypeError, AttributeError) as exc:
            raise FormatError(file, f"targets[{k}]", str(exc)) from None
    return out


def _validate(task: Mapping[str, Any]) -> None:
    Target.from_json(task)


def _import_clembench(path: Path, out_dir: Path, options: Mapping[str, str]) -> str:
    """``import clembench sb_so_test.json --out DIR``: the reference's target boards as a targets folder."""
    targets = read_targets(path)
    if out_dir.exists() and any(out_dir.iterdir()):
        raise FormatError(out_dir, "", "expected a new or empty folder to write the targets into")
    save_targets(targets, out_dir, format=TARGETS_FORMAT, version=TARGETS_VERSION, imported_from=str(path))
    counts = Counter(t.components for t in targets)
    spread = ", ".join(f"{counts[k]} of {k} components" for k in sorted(counts))
    return (
        f"wrote {len(targets)} target boards from {path} to {out_dir / TARGETS_FILE} ({spread}); play them with "
        f"`python main.py run --world boards --tasks {out_dir}`"
    )


PROGRESS_PLOT = PlotSpec(
    "Board against the target, per round",
    "share",
    (
        SeriesSpec.of_metric("target pieces in place", (46, 125, 50), "correct_pieces"),
        SeriesSpec.of_metric("exact match", (31, 95, 191), "match"),
    ),
    y_range=(0.0, 1.0),
)
DIFF_PLOT = PlotSpec(
    "Differences and extra pieces, per round",
    "count",
    (
        SeriesSpec.of_metric("places that differ", (198, 40, 40), "differences"),
        SeriesSpec.of_metric("extra pieces", (210, 105, 30), "extra_pieces"),
    ),
    steps=True,
)

FAMILY = WorldFamily(
    name="boards",
    description="cobot structure building: a programmer who sees the target guides a robot that writes code",
    world=BoardsWorld,
    roles=ROLES,
    tasks=TaskSource(
        generate=generate,
        load=load,
        write=write,
        validate=_validate,
        groups=GROUPS,
        group_of=lambda task: str(len(task.get("placements") or [])),
        group_label="component count",
        n_help="how many target boards",
    ),
    settings=BoardsSettings,
    agents=AGENTS,
    default_agents={"programmer": "oracle", "robot": "scripted"},
    protocol=protocol.protocol,
    reply_form=protocol.reply_form,
    views="simlab.worlds.boards.presentation:VIEWS",
    editor="simlab.worlds.boards.editing:EDITOR",
    spaces="simlab.worlds.boards.spaces:spaces",
    palette=PALETTE,
    plots=(PROGRESS_PLOT, DIFF_PLOT),
    headline_metrics=("success", "abort", "correct_pieces", "clarified", "corrected"),
    figures=FIGURES,
    importers={
        "clembench": Importer("clembench", "target boards of the reference game (sb_so_*.json)", _import_clembench)
    },
)
