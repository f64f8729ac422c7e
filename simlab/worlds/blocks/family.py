"""The blocks family as the engine sees it: tasks are target structures, roles D1-D3 and the builder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simlab.worlds import WorldFamily
from simlab.worlds.blocks.agents import AGENTS
from simlab.worlds.blocks.generator import generate_structures, load_structures
from simlab.worlds.blocks.world import BUILDER, DEFAULT_SETTINGS, DIRECTORS, BlocksWorld, check_settings


def _generate(n: int, seed: int, options: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return [s.to_json() for s in generate_structures(n, seed)]


def _load(path: Path) -> list[dict[str, Any]]:
    return [s.to_json() for s in load_structures(path)]


FAMILY = WorldFamily(
    name="blocks",
    world=BlocksWorld,
    roles=(*DIRECTORS, BUILDER),
    role_groups={"director": DIRECTORS, "directors": DIRECTORS},
    generate=_generate,
    load_tasks=_load,
    agents=AGENTS,
    default_agents={"director": "oracle", "builder": "scripted"},
    check_settings=check_settings,
    headline_metrics=("overall_progress", "completion", "iou", "position_accuracy"),
    default_settings=DEFAULT_SETTINGS,
)
