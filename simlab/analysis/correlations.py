"""Which features of the agents' communication go with task success: CRAFT's table 7, for any run.

The unit is the agent lineup (CRAFT correlates over its 15 models): for each lineup the mean of a target
metric (``overall_progress_t20`` for CRAFT's "progress at turn 20") is set against the mean of every feature:

* behavioural: every other episode metric the summaries hold (the remove gap among them);
* judge: each judge's overall score and each numeric question (SG3, MM5...), averaged over the lineup's items
  with the runs combined as the judge says (:mod:`simlab.analysis.judgments`);
* surface: the mean words per public message.

For each feature: Pearson's r and Spearman's rho with their two-sided p-values (scipy), over the lineups that
have both values; fewer than three such lineups, or a feature that does not vary, gives no coefficient.
Features are ordered by the absolute Pearson r, largest first, as the paper orders them.

**Turn-level** (CRAFT's table 8, ``report --correlate NAME --unit turn``): the unit is one turn of one
episode. A family that declares ``WorldFamily.turn_metrics`` gives per turn a mapping of values read from its
events (blocks: oracle adherence, attempted removes, the remove gap, failed moves...); one of them is the
outcome and every other is a feature, correlated over all turns of all episodes where both have a value
(n = those turns), ordered by the absolute Spearman rho, the coefficient the paper reports there.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from simlab.analysis.figures import given, write_figure
from simlab.analysis.judgments import item_scores
from simlab.analysis.report import format_table, num_cell
from simlab.core.episode import Episode
from simlab.core.family import FigureData, FigurePoint, FigureSeries, FigureSpec, lineup_of
from simlab.core.judging import Judge, JudgmentRecord
from simlab.core.recording import Run
from simlab.core.writing import write_atomic
from simlab.worlds import get_family

FeatureKind = Literal["behavioural", "judge", "surface", "turn"]
CorrelationUnit = Literal["lineup", "turn"]
MIN_LINEUPS = 3  # fewer units than this (lineups or turns) give no coefficient
WORDS_FEATURE = "words per message"
CSV_COLUMNS = ("feature", "kind", "n", "pearson_r", "pearson_p", "spearman_rho", "spearman_p")
FIGURE_NAME = "feature_correlations"
TURN_FIGURE_NAME = "turn_correlations"
TurnRows = Callable[[Episode], Sequence[Mapping[str, "float | None"]]]
"""A family's ``turn_metrics``: per turn of an episode, its values by name."""


@dataclass(frozen=True)
class Correlation:
    """One feature against the target across lineups; the coefficients are None when they cannot be computed."""

    feature: str
    kind: FeatureKind
    n: int
    pearson_r: float | None
    pearson_p: float | None
    spearman_rho: float | None
    spearman_p: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "feature": self.feature,
            "kind": self.kind,
            "n": self.n,
            "pearson_r": self.pearson_r,
            "pearson_p": self.pearson_p,
            "spearman_rho": self.spearman_rho,
            "spearman_p": self.spearman_p,
        }


def message_words(episode: Episode) -> float | None:
    """Mean words per public message of ``episode`` (None when nobody spoke)."""
    counts = [len(str(e.data.get("text", "")).split()) for e in episode.events if e.kind == "message"]
    return sum(counts) / len(counts) if counts else None


@dataclass(frozen=True)
class RunFeatures:
    """One run's part of a correlation: its episode summaries, its stored judgments and, per episode id, the
    :func:`message_words` (None: not computed). Episodes are told apart by run, so ids may repeat across runs;
    the same lineup in several runs is pooled (the same agents, more episodes)."""

    summaries: Sequence[Mapping[str, Any]]
    records: Sequence[JudgmentRecord] = ()
    words: Mapping[str, float | None] | None = None


Unit = tuple[int, str]  # (run number, episode id)


def feature_correlations(runs: Sequence[RunFeatures], target: str, judges: Sequence[Judge] = ()) -> list[Correlation]:
    """Every feature's correlation with metric ``target`` across the lineups of ``runs`` (see the module
    docstring). ValueError when no episode has ``target``."""
    summaries = {(k, str(s.get("episode_id"))): s for k, run in enumerate(runs) for s in run.summaries}
    lineups = {unit: lineup_of(s.get("agents") or {}) for unit, s in summaries.items()}
    y = _by_lineup({u: _metric(s, target) for u, s in summaries.items()}, lineups)
    metrics = sorted({m for s in summaries.values() for m in (s.get("metrics") or {})})
    if not y:
        raise ValueError(f"no episode has the metric {target!r}; metrics: {', '.join(metrics) or 'none'}")
    features: list[tuple[str, FeatureKind, dict[str, float]]] = []
    for name in metrics:
        if name != target:
            features.append(
                (name, "behavioural", _by_lineup({u: _metric(s, name) for u, s in summaries.items()}, lineups))
            )
    for judge in judges:
        features += _judge_features(judge, runs, lineups)
    if any(run.words is not None for run in runs):
        words = {(k, e): w for k, run in enumerate(runs) for e, w in (run.words or {}).items()}
        features.append((WORDS_FEATURE, "surface", _by_lineup(words, lineups)))
    out = [_correlate(name, kind, x, y) for name, kind, x in features]
    return sorted(out, key=lambda c: _strongest_first(c.pearson_r, c.feature))


def lineup_count(runs: Sequence[RunFeatures]) -> int:
    """How many distinct agent lineups ``runs`` hold (the n of the correlations)."""
    return len({lineup_of(s.get("agents") or {}) for run in runs for s in run.summaries})


def _strongest_first(coefficient: float | None, feature: str) -> tuple[float, str]:
    """Sort key: the largest absolute coefficient first, features without one last, ties by name."""
    return (-abs(coefficient) if coefficient is not None else 1.0, feature)


@dataclass(frozen=True)
class TurnCorrelations:
    """CRAFT's table 8 for a set of episodes: every per-turn value against ``outcome`` over their ``turns``
    (``with_outcome`` of them have an outcome value), ordered by the absolute Spearman rho."""

    outcome: str
    episodes: int
    turns: int
    with_outcome: int
    correlations: list[Correlation]


def turn_correlations(episodes: Sequence[Episode], turn_metrics: TurnRows, outcome: str) -> TurnCorrelations:
    """Every per-turn value ``turn_metrics`` gives for the turns of ``episodes`` against the value ``outcome``,
    over the turns where both exist. ValueError naming the per-turn values when no turn has ``outcome``."""
    rows = [row for episode in episodes for row in turn_metrics(episode)]
    names = list(dict.fromkeys(name for row in rows for name in row))  # in the order the family gives them
    y = [_number(row.get(outcome)) for row in rows]
    if all(value is None for value in y):
        raise ValueError(f"no turn has a value for {outcome!r}; per-turn values: {', '.join(names) or 'none'}")
    features = [name for name in names if name != outcome]
    out = [_coefficients(name, "turn", *_pairs([_number(row.get(name)) for row in rows], y)) for name in features]
    ordered = sorted(out, key=lambda c: _strongest_first(c.spearman_rho, c.feature))
    return TurnCorrelations(outcome, len(episodes), len(rows), sum(v is not None for v in y), ordered)


def run_turn_correlations(runs: Sequence[Run], outcome: str) -> TurnCorrelations:
    """:func:`turn_correlations` over every episode of ``runs`` (at least one) with the per-turn values their
    world (the first run's) declares. ValueError when it declares none, or as :func:`turn_correlations` says."""
    world = str(runs[0].config.get("world"))
    turn_metrics = get_family(world).turn_metrics
    if turn_metrics is None:
        raise ValueError(f"world {world!r} declares no per-turn values (WorldFamily.turn_metrics)")
    return turn_correlations([e for run in runs for e in run.episodes()], turn_metrics, outcome)


def _pairs(xs: Sequence[float | None], ys: Sequence[float | None]) -> tuple[list[float], list[float]]:
    """The values of the positions where both sides have one."""
    both = [(x, y) for x, y in zip(xs, ys, strict=True) if x is not None and y is not None]
    return [x for x, _ in both], [y for _, y in both]


def _metric(summary: Mapping[str, Any], name: str) -> float | None:
    return _number((summary.get("metrics") or {}).get(name))


def _number(value: Any) -> float | None:
    """``value`` as a float when it is a finite number (not a bool), else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _by_lineup(per_unit: Mapping[Unit, float | None], lineups: Mapping[Unit, str]) -> dict[str, float]:
    """The mean per lineup of the episodes' values that exist."""
    sums: dict[str, list[float]] = {}
    for unit, value in per_unit.items():
        if value is not None and unit in lineups:
            sums.setdefault(lineups[unit], []).append(value)
    return {lineup: sum(v) / len(v) for lineup, v in sums.items()}


def _judge_features(
    judge: Judge, runs: Sequence[RunFeatures], lineups: Mapping[Unit, str]
) -> list[tuple[str, FeatureKind, dict[str, float]]]:
    """The judge's overall score and numeric questions per lineup (means over its items there)."""
    items = [(k, item) for k, run in enumerate(runs) for item in item_scores(judge, run.records)[0]]
    out: list[tuple[str, FeatureKind, dict[str, float]]] = []
    columns = [("overall", None)] + [(q.code, q) for q in judge.questions if not q.scale.categorical]
    for code, question in columns:
        values: dict[Unit, list[float]] = {}
        for k, item in items:
            value = item.overall if question is None else item.values.get(code)
            if value is not None:
                values.setdefault((k, item.episode_id), []).append(value)
        per_episode = {unit: sum(v) / len(v) for unit, v in values.items()}
        label = f"{judge.name} overall" if question is None else f"{question.label} ({code})"
        out.append((label, "judge", _by_lineup(per_episode, lineups)))
    return out


def _correlate(name: str, kind: FeatureKind, x: Mapping[str, float], y: Mapping[str, float]) -> Correlation:
    shared = sorted(set(x) & set(y))
    return _coefficients(name, kind, [x[k] for k in shared], [y[k] for k in shared])


def _coefficients(name: str, kind: FeatureKind, xs: Sequence[float], ys: Sequence[float]) -> Correlation:
    """Pearson and Spearman of paired values; none when there are too few pairs or one side is constant."""
    from scipy import stats

    if len(xs) < MIN_LINEUPS or len(set(xs)) < 2 or len(set(ys)) < 2:
        return Correlation(name, kind, len(xs), None, None, None, None)
    with warnings.catch_warnings():  # near-constant inputs warn; their coefficients are still defined
        warnings.simplefilter("ignore")
        pearson = stats.pearsonr(xs, ys)
        spearman = stats.spearmanr(xs, ys)
    return Correlation(
        name, kind, len(xs), _finite(pearson.statistic), _finite(pearson.pvalue),
        _finite(spearman.statistic), _finite(spearman.pvalue),
    )  # fmt: skip


def _finite(value: Any) -> float | None:
    number = float(value)
    return number if math.isfinite(number) else None


def stars(p: float | None) -> str:
    """The paper's significance marks: * p < 0.05, ** p < 0.01, *** p < 0.001."""
    if p is None:
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


def correlations_table(correlations: Sequence[Correlation], target: str, lineups: int) -> str:
    """Fixed-width text in the layout of CRAFT's table 7."""
    title = f"correlations with {target} across {lineups} agent lineups"
    return _table(correlations, title)


def turn_correlations_table(found: TurnCorrelations) -> str:
    """Fixed-width text of the turn-level correlations (CRAFT table 8): the same columns as table 7's, n the
    turns where the feature and the outcome both have a value."""
    title = (
        f"turn-level correlations with {found.outcome} across the {found.with_outcome} turns that have it "
        f"(of {found.turns} turns in {found.episodes} episodes; n: turns with both values)"
    )
    return _table(found.correlations, title)


def _table(correlations: Sequence[Correlation], title: str) -> str:
    rows = [
        [c.feature, c.kind, str(c.n), _coefficient(c.pearson_r, c.pearson_p), num_cell(c.pearson_p),
         _coefficient(c.spearman_rho, c.spearman_p), num_cell(c.spearman_p)]
        for c in correlations
    ]  # fmt: skip
    header = ["feature", "kind", "n", "Pearson r", "p", "Spearman rho", "p"]
    return f"{title} (* p<0.05, ** p<0.01, *** p<0.001)\n" + format_table(header, rows, left_columns=2)


def _coefficient(value: float | None, p: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}{stars(p)}"


def correlation_figure(correlations: Sequence[Correlation], unit: CorrelationUnit = "lineup") -> FigureData:
    """The correlations as bars, Pearson r and Spearman rho per feature (those with coefficients), in the
    table's order: the figure ``report --correlate METRIC --figures DIR`` draws and the app shows; ``unit``
    says what they were computed over."""
    shown = [c for c in correlations if c.pearson_r is not None and c.spearman_rho is not None]
    pearson = tuple(FigurePoint(c.feature, c.pearson_r) for c in shown if c.pearson_r is not None)
    spearman = tuple(FigurePoint(c.feature, c.spearman_rho) for c in shown if c.spearman_rho is not None)
    series = (FigureSeries("Pearson r", pearson), FigureSeries("Spearman rho", spearman))
    return FigureData("bar", "feature", f"correlation with the target across {unit}s", series, (-1.0, 1.0))


def correlations_csv(correlations: Sequence[Correlation]) -> str:
    """The whole table, one row per feature: feature, kind, n, pearson_r, pearson_p, spearman_rho, spearman_p."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for c in correlations:
        row = c.to_json()
        writer.writerow(
            ["" if row[k] is None else (repr(row[k]) if isinstance(row[k], float) else row[k]) for k in CSV_COLUMNS]
        )
    return out.getvalue()


def write_correlation_figure(
    target: str, correlations: Sequence[Correlation], out_dir: Path, unit: CorrelationUnit = "lineup"
) -> list[Path]:
    """The correlations as bars (NAME.csv with the plotted numbers, NAME.png, NAME.svg) and the whole table
    beside them (NAME_table.csv), NAME from :func:`correlation_spec`; the paths written."""
    data = correlation_figure(correlations, unit)
    spec = correlation_spec(target, data, unit)
    written = write_figure(spec, data, out_dir)
    return [*written, write_atomic(out_dir, f"{spec.name}_table.csv", correlations_csv(correlations))]


def correlation_spec(target: str, data: FigureData, unit: CorrelationUnit = "lineup") -> FigureSpec:
    """The correlations figure as ``report --correlate TARGET [--unit turn] --figures`` names and titles it
    (and the app): ``feature_correlations`` across lineups, ``turn_correlations`` across turns."""
    if unit == "turn":
        title = f"Per-turn values against {target} across turns (CRAFT table 8)"
        return FigureSpec(TURN_FIGURE_NAME, title, functools.partial(given, data))
    title = f"Features against {target} across lineups (CRAFT table 7)"
    return FigureSpec(FIGURE_NAME, title, functools.partial(given, data))
