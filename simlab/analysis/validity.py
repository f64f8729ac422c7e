"""A benchmark's validity report: what simple baselines score on it, per group, each with a bootstrap CI.

A family that can say whether its tasks measure what they claim declares ``WorldFamily.validity``: a
function from its task instances to a :class:`ValidityReport`. ``python main.py validity BENCH`` prints it as a
table or JSON. This module only holds and formats the numbers; which baselines there are (chance, a blind
prior solver, single-view solvers, ...) is the family's to say.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from simlab.analysis.stats import Summary, finite_or_none, mean_sem_ci

if TYPE_CHECKING:
    from simlab.core.family import WorldFamily

VALIDITY_FORMAT = "simlab.validity"
VALIDITY_VERSION = 1
RESAMPLES = 2000


@dataclass(frozen=True)
class ValidityReport:
    """Per group (a rooms task), each baseline's accuracy over the group's questions.

    ``baselines`` names the columns in order with a line each saying what the baseline sees (``legend``);
    ``chance`` is the expected accuracy of a uniform guess per group; ``extra`` holds JSON facts per group
    (the right letters' shares, questions one view can narrow, ...) and ``facts`` about the whole benchmark
    (its distinct rooms, ...); ``notes`` are sentences a reader needs to read the numbers right."""

    source: str
    baselines: tuple[str, ...]
    legend: Mapping[str, str]
    groups: Mapping[str, Mapping[str, Summary]]
    chance: Mapping[str, Summary]
    extra: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    facts: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The report as strict JSON (format ``simlab.validity``)."""
        groups = {
            g: {"chance": self.chance[g].to_json()}
            | {b: s.to_json() for b, s in row.items()}
            | {"extra": dict(self.extra.get(g, {}))}
            for g, row in self.groups.items()
        }
        return {
            "format": VALIDITY_FORMAT,
            "version": VALIDITY_VERSION,
            "source": self.source,
            "baselines": ["chance", *self.baselines],
            "legend": dict(self.legend),
            "facts": dict(self.facts),
            "groups": groups,
            "notes": list(self.notes),
        }

    def to_table(self) -> str:
        """A fixed-width table: a row per group, ``mean [low, high]`` per baseline, then the legend."""
        columns = ["chance", *self.baselines]
        rows = [["group", "n", *columns]]
        for g, row in self.groups.items():
            cells = [cell(self.chance[g])] + [cell(row[b]) for b in self.baselines]
            rows.append([g, str(self.chance[g].n), *cells])
        widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        facts = [f"{k}: {v}" for k, v in self.facts.items()]
        legend = [f"  {name}: {text}" for name, text in self.legend.items()]
        head = "mean [95% bootstrap CI] accuracy per question"
        return "\n".join([*facts, "", *lines, "", head, *legend, *self.notes])


def cell(s: Summary) -> str:
    """``mean [low, high]`` with two decimals, ``-`` when there is no value (the table's cell)."""
    if s.mean is None:
        return "-"
    return f"{s.mean:.2f} [{s.ci_low:.2f}, {s.ci_high:.2f}]"


def compute_validity(family: WorldFamily, source: Path, seed: int = 0) -> ValidityReport:
    """The family's validity report of ``source`` (a benchmark folder or task file that ``run --tasks`` plays);
    ConfigError naming the source, the task and its field when a task cannot be read."""
    from simlab.core.errors import ConfigError

    tasks = family.tasks.load(source)
    for k, task in enumerate(tasks):
        try:
            family.tasks.validate(task)
        except (ValueError, TypeError, KeyError) as exc:
            raise ConfigError(f"{source}: task {k} ({str(task.get('id', '?'))[:80]}): {exc}") from None
    report = family.load_validity()(tasks, str(source), seed)
    if not isinstance(report, ValidityReport):  # a family's bug, said in its terms rather than as a crash later
        raise TypeError(f"the {family.name} validity report is a {type(report).__name__}, expected a ValidityReport")
    return report


def accuracy(values: Sequence[float], seed: int) -> Summary:
    """Mean accuracy over questions with a seeded percentile bootstrap CI."""
    return mean_sem_ci(list(values), resamples=RESAMPLES, seed=seed)


def chance_summary(probabilities: Sequence[float], seed: int) -> Summary:
    """What a uniform guesser scores: the expected accuracy (mean of each question's 1/options) and the 95%
    range its score would fall in over these questions (percentiles of simulated guessers), so a baseline
    inside that range is indistinguishable from guessing."""
    p = np.asarray(probabilities, dtype=float)
    if p.size == 0:
        return Summary(0, None, None, None, None)
    rng = np.random.default_rng(seed)
    scores = (rng.random((RESAMPLES, p.size)) < p).mean(axis=1)
    low, high = np.quantile(scores, [0.025, 0.975])
    sem = float(np.sqrt((p * (1 - p)).sum()) / p.size)
    return Summary(int(p.size), float(p.mean()), sem, finite_or_none(float(low)), finite_or_none(float(high)))
