"""The blocks family (CRAFT) as the rest of SimLab sees it: tasks are target structures, roles D1-D3 and the
builder. Everything here is declared through :class:`~simlab.core.family.WorldFamily`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import count
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from simlab.core.family import Importer, ImporterOption, PlotSpec, Progress, SeriesSpec, TaskSource, WorldFamily
from simlab.worlds.blocks import protocol
from simlab.worlds.blocks.agents import AGENTS
from simlab.worlds.blocks.craft_structures import structures_in
from simlab.worlds.blocks.figures import FIGURES
from simlab.worlds.blocks.generator import (
    TIER_SHARES,
    TIERS,
    Structure,
    generate_structure,
    save_structures,
)
from simlab.worlds.blocks.metrics import attempted_removes, oracle_removes
from simlab.worlds.blocks.turns import turn_values
from simlab.worlds.blocks.views import hidden_cells
from simlab.worlds.blocks.world import BUILDER, DIRECTORS, PALETTE, BlocksSettings, BlocksWorld

MAX_TRIES_PER_TASK = 200  # structures drawn per wanted one when only some tiers are asked for


def generate(
    n: int, seed: int, options: BaseModel | None = None, groups: Sequence[str] = (), progress: Progress | None = None
) -> list[dict[str, Any]]:
    """``n`` structures (ids ``structure_000``...) in the index order of the seed; with ``groups`` only those
    tiers, drawn in that order until ``n`` are found."""
    out: list[dict[str, Any]] = []
    for index in count():
        if len(out) == n or (groups and index >= n * MAX_TRIES_PER_TASK):
            break
        structure = generate_structure(seed, index)
        if not groups or structure.tier in groups:
            out.append(structure.to_json())
            if progress is not None:
                progress(len(out), n, structure.id)
    return out


def write(
    out_dir: Path,
    n: int,
    seed: int,
    options: BaseModel | None = None,
    groups: Sequence[str] = (),
    progress: Progress | None = None,
) -> str:
    """``generate blocks``: the structures as a folder ``run --structures`` reads, and a summary with the
    blocks no director can see (docs/BLOCKS.md)."""
    structures = [Structure.from_json(t) for t in generate(n, seed, options, groups, progress)]
    save_structures(structures, out_dir, seed=seed)
    tiers = ", ".join(f"{sum(s.tier == t for s in structures)} {t}" for t in TIERS)
    return f"wrote {len(structures)} structures to {out_dir} ({tiers})\n{domino_report(structures)}\n" + (
        hidden_report(structures)
    )


REFERENCE_DOMINOES = 11.7
"""Large-block cells per structure in CRAFT's published 100 (structures_dataset_v2.json)."""


def domino_report(structures: Sequence[Structure]) -> str:
    """Large-block cells per structure and the tier shares, beside CRAFT's published 100."""
    cells = [2 * sum(p.large for p in s.board.pieces()) for s in structures]
    mean = sum(cells) / len(cells) if cells else 0.0
    shares = " / ".join(f"{100 * sum(s.tier == t for s in structures) / max(1, len(structures)):.0f}" for t in TIERS)
    reference = " / ".join(str(TIER_SHARES[t]) for t in TIERS)
    return (
        f"large-block cells per structure: {mean:.1f} (CRAFT's published 100: {REFERENCE_DOMINOES}); "
        f"tiers simple / medium / complex %: {shares} (published: {reference})"
    )


def hidden_report(structures: Sequence[Structure]) -> str:
    """Which target blocks no director can see, under both interior settings."""
    lines = ["blocks no director can see (cell@layer):"]
    for interior in ("paper", "reference"):
        hidden = {s.id: hidden_cells(s.board, interior) for s in structures}
        total = sum(len(h) for h in hidden.values())
        affected = sum(bool(h) for h in hidden.values())
        lines.append(f"  interior={interior}: {total} blocks in {affected} of {len(structures)} structures")
        listed = [(sid, cells) for sid, cells in hidden.items() if cells] if interior == "paper" else []
        lines.extend(f"    {sid}: " + ", ".join(f"({c[0]},{c[1]})@{k}" for c, k in cells) for sid, cells in listed[:10])
        if len(listed) > 10:
            lines.append(f"    ... and {len(listed) - 10} more structures")
    return "\n".join(lines)


def _load(path: Path) -> list[dict[str, Any]]:
    """SimLab's structure files (one, an index, a folder) or CRAFT's own published list of structures."""
    structures, from_craft = structures_in(path)
    if from_craft:  # each keeps its place in the file: the reference's persona draw needs it
        return [{**s.to_json(), "craft_index": k} for k, s in enumerate(structures)]
    return [s.to_json() for s in structures]


def _validate(task: Mapping[str, Any]) -> None:
    Structure.from_json(task)


def _import_craft(path: Path, out_dir: Path, options: Mapping[str, str]) -> Any:
    from simlab.worlds.blocks.craft_run import import_craft_run

    return import_craft_run(path, out_dir, options.get("structures"))


CRAFT_IMPORTER = Importer(
    "craft",
    "CRAFT's logs: run logs of run_craft.py and per-turn records (divergenceData), a file or a folder",
    _import_craft,
    (
        ImporterOption(
            "structures",
            "FILE",
            "the structures file holding the targets of per-turn records "
            "(default: CRAFT's 20 evaluation structures, shipped with SimLab)",
        ),
    ),
)


PROGRESS_PLOT = PlotSpec(
    "Progress metrics per turn",
    "progress",
    (
        SeriesSpec.of_metric("overall progress", (31, 95, 191), "overall_progress"),
        SeriesSpec.of_metric("completion", (46, 125, 50), "completion"),
        SeriesSpec.of_metric("IoU", (210, 105, 30), "iou"),
        SeriesSpec.of_metric("position accuracy", (123, 63, 181), "position_accuracy"),
    ),
    y_range=(0.0, 1.0),
)
REMOVES_PLOT = PlotSpec(
    "Removes: builder's attempts vs the oracle's",
    "removes (cumulative)",
    (
        SeriesSpec("turns the oracle offered a remove", (69, 90, 100), oracle_removes),
        SeriesSpec("removes the builder attempted", (198, 40, 40), attempted_removes),
    ),
    steps=True,
)

FAMILY = WorldFamily(
    name="blocks",
    description="CRAFT: three directors, each seeing one wall of a 3D block structure, guide a builder",
    world=BlocksWorld,
    roles=(*DIRECTORS, BUILDER),
    role_groups={"director": DIRECTORS, "directors": DIRECTORS},
    tasks=TaskSource(
        generate=generate,
        load=_load,
        write=write,
        validate=_validate,
        groups=TIERS,
        group_of=lambda task: task.get("tier"),
        group_label="tier",
        n_help="how many target structures",
    ),
    settings=BlocksSettings,
    agents=AGENTS,
    default_agents={"director": "oracle", "builder": "scripted"},
    protocol=protocol.protocol,
    reply_form=protocol.reply_form,
    views="simlab.worlds.blocks.presentation:VIEWS",
    editor="simlab.worlds.blocks.editing:EDITOR",
    palette=PALETTE,
    plots=(PROGRESS_PLOT, REMOVES_PLOT),
    figures=FIGURES,
    headline_metrics=("overall_progress", "completion", "iou", "position_accuracy"),
    # CRAFT's table 1: Prog., Comp., Pos. Acc., Dist. at turn 20, Fail, REMOVE, Gap
    paper_metrics=(
        "overall_progress_t20",
        "completion",
        "position_accuracy",
        "distance",
        "fail",
        "remove_rate",
        "remove_gap",
    ),
    importers={"craft": CRAFT_IMPORTER},
    judges="simlab.worlds.blocks.judges:JUDGES",
    spaces="simlab.worlds.blocks.spaces:spaces",
    turn_metrics=turn_values,
)
