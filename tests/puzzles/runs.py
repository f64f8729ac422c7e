"""Whole episodes of one puzzle's 100 evaluation instances (seed 0), for the per-puzzle tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from simlab.testing import play
from simlab.worlds import get_family
from simlab.worlds.puzzles.family import task_for

MANUAL = ("solver=scripted", "expert=manual")
RANDOM = ("solver=random", "expert=silent")
PAPER_METRICS = ("sr", "psr", "mistakes", "acl")


def summaries(
    puzzle: str, agents: Sequence[str], settings: Mapping[str, Any] | None = None, n: int = 100
) -> list[dict[str, Any]]:
    """The summary of each of the first ``n`` instances played by ``agents``."""
    family = get_family("puzzles")
    return [play(family, task_for(puzzle, k, 0, {}), list(agents), 0, dict(settings or {})).summary for k in range(n)]


def random_row(puzzle: str) -> dict[str, float]:
    """The random solver's SR, PSR, mistakes and conversation length over the 100 instances: the paper's
    Random row for this puzzle."""
    runs = [s["metrics"] for s in summaries(puzzle, RANDOM)]
    return {m: sum(float(r[m]) for r in runs) / len(runs) for m in PAPER_METRICS}
