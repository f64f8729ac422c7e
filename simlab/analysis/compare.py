"""``report RUN_A RUN_B ...``: runs of one world side by side, with a paired test where they played the same tasks.

A *column* is a run, or one agent lineup of a run that holds several (``role=agent ...``, the label figures
use). Each column summarises ``success_rate`` (1 for a success, 0 for any other outcome), ``score`` and every
metric as :func:`~simlab.analysis.stats.mean_sem_ci` seeded by its run's seed, so a run's column holds the
numbers its own ``report`` prints. Rows: the family's headline metrics first, then the rest by name; a metric
named like a fixed row is shown as ``metric:NAME`` (as ``report`` does for ``score``).

The first column is the baseline. Every other column is paired with it by ``(task_id, repeat)``, where both
runs' ``run.json`` hold the same task under that id (:mod:`simlab.analysis.pairing`, the test the app pairs
episodes by too: generated ids such as ``structure_000`` name other tasks under another seed; a run that does
not record its tasks is taken at its word). For each row,
the pairs where both have a value, the mean difference (column minus baseline) with a bootstrap CI seeded by
the baseline's seed, and a p-value: an exact McNemar test (a binomial test on the discordant pairs) for
``success_rate``, a Wilcoxon signed-rank test for the rest (exact up to 50 distinct nonzero differences, or
13 nonzero ones among ties or zeros; beyond, the normal approximation, which says so). All-zero differences
and no discordant pairs give p = 1 and say so; a column that shares no task with the baseline says ``no shared
tasks`` and has no tests.

Everything is ordered (columns as given, episodes by id naturally), so the same runs give the same bytes.
Output forms: ``to_json()`` (format ``simlab.comparison``, docs/FORMATS.md), ``to_csv()`` and ``to_table()``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import binomtest, permutation_test, rankdata, wilcoxon

from simlab.analysis.pairing import TaskKey, pair_by_task, recorded_tasks, task_key
from simlab.analysis.report import (
    SCORE,
    EpisodeRow,
    ci_cell,
    csv_cell,
    episode_row,
    format_table,
    natural_key,
    num_cell,
)
from simlab.analysis.stats import Summary, finite_or_none, mean_sem_ci
from simlab.core.errors import SimlabError
from simlab.core.family import lineup_of
from simlab.core.reading import resolved
from simlab.core.recording import Run
from simlab.worlds import get_family

COMPARISON_FORMAT = "simlab.comparison"
COMPARISON_VERSION = 1
SUCCESS_RATE = "success_rate"
FIXED_ROWS = (SUCCESS_RATE, SCORE)
RUN_SEPARATOR = " · "  # between a run's name and its lineup, as in the figures' series labels
MCNEMAR = "exact McNemar"
WILCOXON = "Wilcoxon signed-rank"
NO_SHARED_TASKS = "no shared tasks"
NO_PAIRS = "no pairs with a value"
NO_DISCORDANT = "no discordant pairs"
ALL_ZERO = "all differences zero"
APPROXIMATE = "normal approximation"
EXACT_PAIRS = 50  # distinct nonzero differences: scipy's exact signed-rank distribution up to this many
EXHAUSTIVE_PAIRS = 13  # tied or zero differences: every sign flip (8,192 at most) up to this many nonzero ones
UNKNOWN_AGENTS = "(unknown agents)"
CSV_COLUMNS = ("section", "column", "baseline", "metric", "n", "mean", "sem", "ci_low", "ci_high", "p_value", "test")
CSV_COLUMNS_NOTE = (*CSV_COLUMNS, "note")


@dataclass(frozen=True)
class Column:
    """The episodes of one run, or of one lineup of it, with a Summary per row."""

    name: str
    run: str
    path: str
    lineup: str  # its episodes' agents, role=agent ... (as figures label a lineup)
    seed: int
    episodes: tuple[EpisodeRow, ...]
    keys: tuple[TaskKey | None, ...]  # each episode's (task_id, repeat); None without a task id
    stats: dict[str, Summary]
    tasks: Mapping[str, str]  # the run's tasks by id (pairing.recorded_tasks; empty: it does not record them)

    def to_json(self) -> dict[str, Any]:
        """``{"name", "run", "path", "lineup", "seed", "n", "stats": {ROW: Summary}}``."""
        return {
            "name": self.name,
            "run": self.run,
            "path": self.path,
            "lineup": self.lineup,
            "seed": self.seed,
            "n": len(self.episodes),
            "stats": {row: s.to_json() for row, s in self.stats.items()},
        }


@dataclass(frozen=True)
class Paired:
    """One row's paired comparison: pairs with a value, mean difference with its CI, and the test's p-value."""

    diff: Summary  # of (column - baseline) over the pairs
    p_value: float | None
    test: str | None
    note: str | None = None  # why the p-value is 1 (or missing) without a test having been computed

    def to_json(self) -> dict[str, Any]:
        """``{"pairs", "mean_diff", "sem", "ci_low", "ci_high", "p_value", "test", "note"}``."""
        return {
            "pairs": self.diff.n,
            "mean_diff": finite_or_none(self.diff.mean),
            "sem": finite_or_none(self.diff.sem),
            "ci_low": finite_or_none(self.diff.ci_low),
            "ci_high": finite_or_none(self.diff.ci_high),
            "p_value": finite_or_none(self.p_value),
            "test": self.test,
            "note": self.note,
        }


@dataclass(frozen=True)
class Comparison:
    """One column against the baseline: the number of shared tasks and a Paired per row (none when 0).

    ``different`` counts the (task_id, repeat) both have whose task ids name different tasks (not paired)."""

    baseline: str
    column: str
    shared: int
    different: int
    rows: dict[str, Paired]

    @property
    def note(self) -> str | None:
        """``no shared tasks`` (and why, when task ids matched) for a column that could not be paired."""
        if self.shared:
            return None
        if self.different:
            return f"{NO_SHARED_TASKS} ({self.different} with the same task id and repeat hold different tasks)"
        return NO_SHARED_TASKS

    def to_json(self) -> dict[str, Any]:
        """``{"baseline", "column", "shared_tasks", "different_tasks", "note", "rows": {ROW: Paired}}``."""
        return {
            "baseline": self.baseline,
            "column": self.column,
            "shared_tasks": self.shared,
            "different_tasks": self.different,
            "note": self.note,
            "rows": {row: p.to_json() for row, p in self.rows.items()},
        }


@dataclass(frozen=True)
class RunComparison:
    """Columns side by side, and each column after the first compared with the first."""

    world: str
    rows: list[str]
    columns: list[Column]
    comparisons: list[Comparison]
    level: float
    resamples: int

    def to_json(self) -> dict[str, Any]:
        """A strict-JSON dict of format ``simlab.comparison`` (see docs/FORMATS.md)."""
        return {
            "format": COMPARISON_FORMAT,
            "version": COMPARISON_VERSION,
            "world": self.world,
            "level": self.level,
            "resamples": self.resamples,
            "rows": list(self.rows),
            "columns": [c.to_json() for c in self.columns],
            "comparisons": [c.to_json() for c in self.comparisons],
        }

    def to_csv(self) -> str:
        """Long form: a ``summary`` line per (column, row), a ``paired`` line per (compared column, row); a
        column without shared tasks has one ``paired`` line with its note."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS_NOTE)
        for col in self.columns:
            for row, s in col.stats.items():
                writer.writerow(
                    [csv_cell(v) for v in ("summary", col.name, "", row, s.n, s.mean, s.sem, s.ci_low, s.ci_high)]
                    + ["", "", ""]
                )
        for comp in self.comparisons:
            if not comp.shared:
                writer.writerow(["paired", comp.column, comp.baseline, "", "0", *[""] * 6, comp.note])
            for row, p in comp.rows.items():
                d = p.diff
                cells = ("paired", comp.column, comp.baseline, row, d.n, d.mean, d.sem, d.ci_low, d.ci_high)
                writer.writerow([csv_cell(v) for v in (*cells, p.p_value, p.test, p.note)])
        return out.getvalue()

    def to_table(self) -> str:
        """Fixed-width text: the columns side by side (``mean [CI]``), then each paired comparison."""
        ci_label = f"{round(self.level * 100, 1):g}% CI"
        header = ["metric", *(c.name for c in self.columns)]
        body = [["n", *(str(len(c.episodes)) for c in self.columns)]]
        body += [[row, *(_mean_ci(c.stats[row]) for c in self.columns)] for row in self.rows]
        title = (
            f"{self.world}, {len(self.columns)} columns: mean [{ci_label}] (bootstrap of {self.resamples:,} "
            "resamples, seeded by each run's seed)"
        )
        parts = [f"{title}\n" + format_table(header, body, left_columns=1)]
        parts += [_comparison_block(comp, ci_label) for comp in self.comparisons]
        return "\n".join(parts)


def name_runs(runs: Sequence[Run]) -> list[tuple[str, Run]]:
    """Each run with its name, after checking they are all of one world family.

    A run's name is its folder's name; runs whose folders share a name are told apart by as many parent
    folders as it takes (``a/run``, ``b/run``), and one folder given twice gets ``(2)``, ``(3)``... Raises
    SimlabError naming the first two runs of different worlds."""
    first = runs[0]
    for other in runs[1:]:
        if other.config.get("world") != first.config.get("world"):
            raise SimlabError(
                f"cannot compare runs of different worlds: {first.path} is {first.config.get('world')!r}, "
                f"{other.path} is {other.config.get('world')!r}"
            )
    return list(zip(unique_names([r.path for r in runs]), runs, strict=True))


def unique_names(paths: Sequence[Path]) -> list[str]:
    """The shortest trailing part of each resolved path that no other path ends with (see ``name_runs``)."""
    parts = [resolved(p).parts for p in paths]
    names = []
    for mine in parts:
        others = [theirs for theirs in parts if theirs != mine]  # the same folder again is numbered below
        depth = 1
        while depth < len(mine) and any(theirs[-depth:] == mine[-depth:] for theirs in others):
            depth += 1
        names.append("/".join(mine[-depth:]).lstrip("/"))
    counts: dict[str, int] = {}
    for k, name in enumerate(names):  # the same folder given again: numbered by its place among its repeats
        counts[name] = counts.get(name, 0) + 1
        if counts[name] > 1:
            names[k] = f"{name} ({counts[name]})"
    return names


def compare_runs(named: Sequence[tuple[str, Run]], resamples: int = 1000, level: float = 0.95) -> RunComparison:
    """Columns for ``named`` runs (see :func:`name_runs`), in order, and each compared with the first."""
    world = str(named[0][1].config.get("world"))
    rows = row_names([s for _, run in named for s in run.summaries], get_family(world).headline_metrics)
    columns = [col for name, run in named for col in run_columns(name, run, rows, resamples, level)]
    base = columns[0]
    comparisons = [compare_columns(base, col, rows, resamples, level) for col in columns[1:]]
    return RunComparison(world, rows, columns, comparisons, level, resamples)


def run_columns(name: str, run: Run, rows: Sequence[str], resamples: int, level: float) -> list[Column]:
    """A run's column, or one per lineup when it holds several: named ``RUN · role=agent ...`` with only the
    roles whose agent differs within the run."""
    lineups = split_lineups(run.summaries)
    if len(lineups) == 1:
        return [make_column(name, name, run, *lineups[0], rows, resamples, level)]
    labels = [label for label, _ in lineups]
    return [
        make_column(
            f"{name}{RUN_SEPARATOR}{differing_parts(label, labels)}", name, run, label, members, rows, resamples, level
        )
        for label, members in lineups
    ]


def summary_lineup(summary: Mapping[str, Any]) -> str:
    """The agents of an episode's summary as :func:`simlab.core.family.lineup` labels the episode."""
    agents = summary.get("agents")
    return lineup_of(agents) if isinstance(agents, Mapping) else UNKNOWN_AGENTS


def split_lineups(summaries: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """Summaries grouped by lineup, in lineup order (a run of one lineup gives one group)."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for summary in summaries:
        groups.setdefault(summary_lineup(summary), []).append(summary)
    return sorted(groups.items()) or [(UNKNOWN_AGENTS, [])]


def row_names(summaries: Sequence[Mapping[str, Any]], headline: Sequence[str]) -> list[str]:
    """``success_rate``, ``score``, the headline metrics present, then every other metric by name."""
    present = {str(name) for s in summaries if isinstance(s.get("metrics"), Mapping) for name in s["metrics"]}
    first = [m for m in dict.fromkeys(headline) if m in present]
    rest = sorted(present - set(first))
    return [*FIXED_ROWS, *(metric_row(m) for m in [*first, *rest])]


def metric_row(name: str) -> str:
    """A metric's row name: itself, or ``metric:NAME`` when that is a fixed row's name."""
    return f"metric:{name}" if name in FIXED_ROWS else name


def row_value(row: str) -> Callable[[EpisodeRow], float | None]:
    """How a row reads one episode: success as 1/0, the score, or a metric (``None`` when absent)."""
    if row == SUCCESS_RATE:
        return lambda e: 1.0 if e.outcome == "success" else 0.0
    if row == SCORE:
        return lambda e: e.score
    name = row.removeprefix("metric:")
    if name not in FIXED_ROWS:  # only a fixed row's name was prefixed: any other row is the metric's own name
        name = row
    return lambda e: e.metrics.get(name)


def make_column(
    name: str,
    run_name: str,
    run: Run,
    lineup: str,
    summaries: Sequence[Mapping[str, Any]],
    rows: Sequence[str],
    resamples: int,
    level: float,
) -> Column:
    """The column of ``summaries`` (episodes by id, naturally), every row summarised with the run's seed."""
    ordered = sorted(summaries, key=lambda s: natural_key(str(s.get("episode_id", ""))))
    episodes = tuple(episode_row(s) for s in ordered)
    keys = tuple(task_key(s) for s in ordered)
    seed = int(run.config.get("seed", 0))
    stats = {row: mean_sem_ci([row_value(row)(e) for e in episodes], resamples, seed, level) for row in rows}
    return Column(name, run_name, str(run.path), lineup, seed, episodes, keys, stats, recorded_tasks(run.config))


def differing_parts(lineup: str, siblings: Sequence[str]) -> str:
    """The ``role=agent`` parts of ``lineup`` that not every sibling lineup holds (all of it if none differ)."""
    shared = set.intersection(*(set(s.split(" ")) for s in siblings))
    parts = [p for p in lineup.split(" ") if p not in shared]
    return " ".join(parts) or lineup


def compare_columns(base: Column, col: Column, rows: Sequence[str], resamples: int, level: float) -> Comparison:
    """``col`` against ``base`` over the episodes that played the same task (:func:`pair_by_task`: the same
    ``(task_id, repeat)`` and the same recorded task; the first of each, by id, when one holds a key twice)."""
    pairing = pair_by_task(
        zip(base.keys, base.episodes, strict=True), base.tasks, zip(col.keys, col.episodes, strict=True), col.tasks
    )
    different = len(pairing.differing)
    if not pairing.pairs:
        return Comparison(base.name, col.name, 0, different, {})
    out = {row: paired_row(row, pairing.pairs, base.seed, resamples, level) for row in rows}
    return Comparison(base.name, col.name, len(pairing.pairs), different, out)


def paired_row(
    row: str, pairs: Sequence[tuple[EpisodeRow, EpisodeRow]], seed: int, resamples: int, level: float
) -> Paired:
    """The differences of one row over the pairs where both episodes have a value, and their test."""
    value = row_value(row)
    both = [(b, c) for b, c in ((value(b), value(c)) for b, c in pairs) if b is not None and c is not None]
    diffs = [c - b for b, c in both]
    diff = mean_sem_ci(diffs, resamples, seed, level)
    if not diffs:
        return Paired(diff, None, None, NO_PAIRS)
    if row == SUCCESS_RATE:
        return mcnemar(diff, [b for b, _ in both], [c for _, c in both])
    return signed_rank(diff, diffs)


def signed_rank(diff: Summary, diffs: Sequence[float]) -> Paired:
    """Wilcoxon signed-rank, as scipy's default computes it where that is exact, and exact further.

    Distinct nonzero differences: scipy's exact distribution (up to 50 pairs). Tied or zero ones: every sign
    flip of the nonzero differences, as scipy does up to 13 pairs, here with the statistic computed over all
    flips at once (scipy computes it once per flip: about a second a row) and up to 13 nonzero differences
    whatever the zeros. Beyond: the normal approximation with scipy's tie and zero corrections, which the
    note says."""
    if all(d == 0 for d in diffs):  # the signed-rank test has no ranks to compare: nothing differs
        return Paired(diff, 1.0, WILCOXON, ALL_ZERO)
    nonzero = np.array([d for d in diffs if d != 0])
    if len(nonzero) == 1:  # its two signs are equally likely: the exact two-sided p-value is 1
        return Paired(diff, 1.0, WILCOXON)
    ranks = rankdata(np.abs(nonzero))
    ties_or_zeros = len(nonzero) < len(diffs) or len(np.unique(ranks)) < len(ranks)
    if ties_or_zeros and len(nonzero) <= EXHAUSTIVE_PAIRS:
        flips = permutation_test(
            (nonzero,),
            lambda d, axis: np.sum(ranks * (d > 0), axis=axis),  # W+: ranks of |d| stay, only signs flip
            permutation_type="samples",
            vectorized=True,
            n_resamples=np.inf,
        )
        return Paired(diff, float(flips.pvalue), WILCOXON)
    if not ties_or_zeros and len(diffs) <= EXACT_PAIRS:
        return Paired(diff, float(wilcoxon(diffs, method="exact").pvalue), WILCOXON)
    return Paired(diff, float(wilcoxon(diffs, method="asymptotic").pvalue), WILCOXON, APPROXIMATE)


def mcnemar(diff: Summary, base: Sequence[float], other: Sequence[float]) -> Paired:
    """Exact McNemar: under no difference, each discordant pair favours either side with probability 1/2."""
    base_only = sum(1 for b, c in zip(base, other, strict=True) if b > c)
    other_only = sum(1 for b, c in zip(base, other, strict=True) if c > b)
    if base_only + other_only == 0:
        return Paired(diff, 1.0, MCNEMAR, NO_DISCORDANT)
    return Paired(diff, float(binomtest(other_only, base_only + other_only, 0.5).pvalue), MCNEMAR)


def _mean_ci(s: Summary) -> str:
    return "-" if s.mean is None else f"{num_cell(s.mean)} {ci_cell(s)}"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def _p_cell(p: float | None) -> str:
    if p is None:
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _comparison_block(comp: Comparison, ci_label: str) -> str:
    title = f"{comp.column} vs {comp.baseline} (baseline)"
    if not comp.shared:
        return f"{title}: {comp.note}\n"
    header = ["metric", "pairs", "mean diff", ci_label, "p"]
    body = [
        [row, str(p.diff.n), _signed(p.diff.mean), ci_cell(p.diff), _p_cell(p.p_value)] for row, p in comp.rows.items()
    ]
    table = _with_text_column(
        format_table(header, body, left_columns=1), "test", [_test_cell(p) for p in comp.rows.values()]
    )
    tasks = f"{comp.shared} shared task{'s' if comp.shared != 1 else ''} (task, repeat)"
    return f"{title}: {tasks}\n" + table


def _with_text_column(table: str, title: str, cells: Sequence[str]) -> str:
    """``table`` (header, rule, a line per cell) with a last, left-aligned column of words."""
    header, rule, *lines = table.splitlines()
    width = max(len(c) for c in [title, *cells])
    extended = [f"{header.ljust(len(rule))}  {title}", f"{rule}  {'-' * width}"]
    extended += [f"{line.ljust(len(rule))}  {cell}".rstrip() for line, cell in zip(lines, cells, strict=True)]
    return "\n".join(extended) + "\n"


def _test_cell(p: Paired) -> str:
    if p.test is None:
        return p.note or "-"
    return f"{p.test} ({p.note})" if p.note else p.test
