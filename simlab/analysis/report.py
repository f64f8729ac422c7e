"""Reports over a run's episode summaries: per-episode rows and aggregates with SEM and bootstrap CIs.

``build_report(run.summaries)`` works for any world: metric names are read from the summaries, never
assumed. Episodes are ordered by id (naturally, so ``ep_2`` comes before ``ep_10``) and the bootstrap is
seeded, so the same summaries always give the same report, whatever order the episodes finished in.

Output forms: ``to_json()`` (a dict, strict-JSON safe), ``to_csv()`` (one row per episode),
``aggregates_csv()`` (one row per group and metric) and ``to_table()`` (fixed-width text for a terminal).

An abort whose summary carries ``infrastructure`` (a model endpoint failed, not the model) is counted apart
from the other aborts: under ``outcomes["infrastructure"]`` (present when there is one), in the table as
"abort (infrastructure)", and its JSON row says why under ``infrastructure``. Batch runs do not index such
episodes (``--resume`` plays them again); runs written otherwise may hold them.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from simlab.analysis.stats import Summary, finite_or_none, mean_sem_cis

REPORT_FORMAT = "simlab.report"
REPORT_VERSION = 1
SCORE = "score"
STANDARD_OUTCOMES = ("success", "failure", "abort")
INFRASTRUCTURE = "infrastructure"  # the outcome count of aborts caused by a model endpoint's failure
ALL_GROUP = "(all)"
NO_EPISODES = "no finished episodes"
MAX_LISTED = 1_000
"""Episodes the text report lists one by one (the aggregates always count every episode)."""
MISSING_GROUP = "(none)"
HEADLINE_DEFAULT_COUNT = 4
EPISODE_FIELDS = ("episode_id", "task_id", "outcome", "turns", "errors")
# Flat (CSV) column names a metric may not take; a clashing metric is written as "metric:NAME" there.
RESERVED_COLUMNS = (*EPISODE_FIELDS, SCORE, "group")


@dataclass(frozen=True)
class EpisodeRow:
    """One finished episode: its identifying fields, headline score and every metric (``None`` if absent)."""

    episode_id: str
    task_id: str | None
    outcome: str | None
    turns: int | None
    errors: int | None
    score: float | None
    metrics: dict[str, float | None]
    group: str | None = None
    infrastructure: str | None = None  # why a model endpoint's failure ended the episode (None: it did not)
    memberships: tuple[str, ...] = ()  # the groups it counts in: one, or each item of a list field (categories)

    @property
    def outcome_label(self) -> str | None:
        """The outcome as counted and shown: an endpoint's failure is ``infrastructure``, not an abort."""
        return INFRASTRUCTURE if self.infrastructure is not None else self.outcome

    def to_json(self) -> dict[str, Any]:
        """JSON-safe dict; ``group`` appears only when the report is grouped, ``infrastructure`` only when a
        model endpoint's failure ended the episode."""
        out: dict[str, Any] = {
            "episode_id": self.episode_id,
            "task_id": self.task_id,
            "outcome": self.outcome,
            "turns": self.turns,
            "errors": self.errors,
            "score": finite_or_none(self.score),
            "metrics": {k: finite_or_none(v) for k, v in self.metrics.items()},
        }
        if self.group is not None:
            out["group"] = self.group
        if self.infrastructure is not None:
            out["infrastructure"] = self.infrastructure
        return out


@dataclass(frozen=True)
class Aggregate:
    """Figures over a set of episodes: count, outcome counts, success rate and a Summary per metric.

    ``metrics`` holds ``"score"`` first, then every metric name in sorted order.
    """

    n: int
    outcomes: dict[str, int]
    success_rate: float | None
    metrics: dict[str, Summary]

    def to_json(self) -> dict[str, Any]:
        """``{"n", "outcomes", "success_rate", "metrics": {name: {"mean", "sem", "ci_low", "ci_high", "n"}}}``."""
        return {
            "n": self.n,
            "outcomes": dict(self.outcomes),
            "success_rate": finite_or_none(self.success_rate),
            "metrics": {name: s.to_json() for name, s in self.metrics.items()},
        }


@dataclass(frozen=True)
class Report:
    """Episode rows plus aggregates over all episodes and, when ``group_by`` is set, per group."""

    episodes: list[EpisodeRow]
    metric_names: list[str]
    aggregate: Aggregate
    group_by: str | None = None
    groups: dict[str, Aggregate] = field(default_factory=dict)
    level: float = 0.95
    usage: dict[str, float] = field(default_factory=dict)  # model calls summed over the run (empty: none)
    roles: dict[str, dict[str, float]] = field(default_factory=dict)  # per role: acts, give-ups, calls (see role_stats)

    def to_json(self) -> dict[str, Any]:
        """A strict-JSON dict; see the module docstring of ``simlab.analysis.report`` for the shape."""
        return {
            "format": REPORT_FORMAT,
            "version": REPORT_VERSION,
            "group_by": self.group_by,
            "level": self.level,
            "episodes": [row.to_json() for row in self.episodes],
            "aggregate": self.aggregate.to_json(),
            "groups": {name: agg.to_json() for name, agg in self.groups.items()},
            "usage": dict(self.usage),
            "roles": {role: dict(stats) for role, stats in self.roles.items()},
        }

    def csv_columns(self) -> list[str]:
        """Header of ``to_csv``: the episode fields, ``group`` when grouped, score, then every metric."""
        group = ["group"] if self.group_by is not None else []
        return [*EPISODE_FIELDS, *group, SCORE, *(csv_metric_column(m) for m in self.metric_names)]

    def to_csv(self) -> str:
        """One row per episode (no aggregate rows); missing values are empty cells, floats keep full precision."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.csv_columns())
        for row in self.episodes:
            group = [row.group] if self.group_by is not None else []
            fields = [row.episode_id, row.task_id, row.outcome, row.turns, row.errors]
            metrics = [row.metrics.get(m) for m in self.metric_names]
            writer.writerow([csv_cell(v) for v in [*fields, *group, row.score, *metrics]])
        return out.getvalue()

    def aggregates_csv(self) -> str:
        """One row per (group, metric): group (``(all)`` for every episode), metric, n, mean, sem, ci_low, ci_high."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["group", "metric", "n", "mean", "sem", "ci_low", "ci_high"])
        for group, agg in [(ALL_GROUP, self.aggregate), *self.groups.items()]:
            for name, s in agg.metrics.items():
                writer.writerow([csv_cell(v) for v in (group, name, s.n, s.mean, s.sem, s.ci_low, s.ci_high)])
        return out.getvalue()

    def headline_metrics(self, headline: Sequence[str] | None = None) -> list[str]:
        """Metric columns for the episodes table: ``headline`` (minus score, always shown) or the first 4 sorted."""
        if headline is None:
            return self.metric_names[:HEADLINE_DEFAULT_COUNT]
        return [m for m in dict.fromkeys(headline) if m != SCORE]

    def to_table(self, headline: Sequence[str] | None = None) -> str:
        """Fixed-width text: the episodes table, then the aggregate table overall and per group (3 decimals).

        ``headline`` names the metric columns of the episodes table (score is always shown); a name no
        episode has shows as ``-``. The aggregate tables list every metric.
        """
        if not self.episodes:
            return f"{NO_EPISODES}\n"
        parts = [self._episodes_table(self.headline_metrics(headline))]
        parts.append(self._aggregate_block("all episodes", self.aggregate))
        for name, agg in self.groups.items():
            parts.append(self._aggregate_block(f"{self.group_by} = {name}", agg))
        if self.usage:
            parts.append(usage_line(self.usage))
        if any(stats.get("calls") or stats.get("unreadable") for stats in self.roles.values()):
            parts.append(roles_table(self.roles))
        return "\n".join(parts)

    def _episodes_table(self, metrics: list[str]) -> str:
        """A row per episode, the first :data:`MAX_LISTED` by id (a sweep's 100,000 rows are no reading; the
        csv and json formats list every one)."""
        header = ["episode", "task", "outcome", "turns", "errors", SCORE, *metrics]
        rows = [
            [r.episode_id, text_cell(r.task_id), outcome_cell(r), text_cell(r.turns), text_cell(r.errors)]
            + [num_cell(r.score)]
            + [num_cell(r.metrics.get(m)) for m in metrics]
            for r in self.episodes[:MAX_LISTED]
        ]
        total = len(self.episodes)
        left = f"; the first {MAX_LISTED:,} listed, --format csv or json lists all" if total > MAX_LISTED else ""
        return f"episodes ({total:,}{left})\n" + format_table(header, rows, left_columns=3)

    def _aggregate_block(self, title: str, agg: Aggregate) -> str:
        ci_label = f"{round(self.level * 100, 1):g}% CI"
        header = ["metric", "n", "mean", "SEM", ci_label]
        rows = [[name, str(s.n), num_cell(s.mean), num_cell(s.sem), ci_cell(s)] for name, s in agg.metrics.items()]
        return f"{title}: {outcome_line(agg)}\n" + format_table(header, rows, left_columns=1)


def build_report(
    summaries: Sequence[Mapping[str, Any]],
    group_by: str | None = None,
    seed: int = 0,
    resamples: int = 1000,
    level: float = 0.95,
) -> Report:
    """Build a Report from episode summaries (e.g. ``load_run(path).summaries``).

    ``group_by`` names a summary field (``"group"``, ``"task_id"``, ``"agents"``, ``"repeat"``...); its
    value is turned into a group name (a mapping such as ``agents`` becomes ``"role=spec, ..."``, a missing
    value ``"(none)"``); a list value (a puzzle's ``categories``) puts the episode in each of its groups.
    Every aggregate uses the same ``seed``, ``resamples`` and ``level``.
    """
    rows = sorted(
        (episode_row(s, group_by) for s in summaries),
        key=lambda r: natural_key(r.episode_id),
    )
    metric_names = sorted({name for r in rows for name in r.metrics})
    agg = aggregate(rows, metric_names, seed, resamples, level)
    groups: dict[str, Aggregate] = {}
    if group_by is not None:
        names = sorted({g for r in rows for g in r.memberships}, key=natural_key)
        for name in names:
            members = [r for r in rows if name in r.memberships]
            groups[name] = aggregate(members, metric_names, seed, resamples, level)
    return Report(rows, metric_names, agg, group_by, groups, level, run_usage(summaries), role_stats(summaries))


PAPER_CAPTION = (
    "mean ± SE per group and over all episodes; SE is the standard deviation over sqrt(n) (ddof 0), which for a "
    "0/100 rate is the binomial SE sqrt(p(1-p)/n) the papers print"
)


def paper_table(report: Report, metrics: Sequence[str]) -> str:
    """The papers' layout: one row per metric, one column per group and ``Overall``, cells ``mean ± SE``."""
    groups = list(report.groups)
    header = ["metric", *groups, "Overall"]
    rows = []
    for name in metrics:
        cells = [_mean_se([r.metrics.get(name) for r in report.episodes if g in r.memberships]) for g in groups]
        rows.append([name, *cells, _mean_se([r.metrics.get(name) for r in report.episodes])])
    return format_table(header, rows, left_columns=1) + f"\n({PAPER_CAPTION})"


def _mean_se(values: Sequence[float | None]) -> str:
    x = [v for v in values if v is not None and not math.isnan(v)]
    if not x:
        return "-"
    mean = sum(x) / len(x)
    se = math.sqrt(sum((v - mean) ** 2 for v in x) / len(x)) / math.sqrt(len(x))
    return f"{mean:.2f} ± {se:.2f}"


def run_usage(summaries: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Model calls summed over every episode's ``usage`` (requests, tokens and, when priced, cost)."""
    totals: dict[str, float] = {}
    for summary in summaries:
        _add(totals, summary.get("usage") or {})
    return totals


def _add(totals: dict[str, float], values: Mapping[str, Any]) -> None:
    for name, value in values.items():
        kind = type(value)  # exact types first: called for every role of every episode
        if kind is int or kind is float or (isinstance(value, (int, float)) and not isinstance(value, bool)):
            totals[name] = totals.get(name, 0.0) + float(value)


def role_stats(summaries: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Per role over the run: ``acts``, ``unreadable`` (replies its give-up rule answered for) and their
    ``give_up_rate``, and from the model calls ``calls``, ``requests``, ``failed_requests``, ``reasks``,
    ``parse_errors``, ``truncated``, tokens, ``latency_s``, ``ttfb_s`` and their means per call."""
    out: dict[str, dict[str, float]] = {}
    for summary in summaries:
        for role, counts in (summary.get("replies") or {}).items():
            if isinstance(counts, Mapping):
                _add(out.setdefault(str(role), {}), counts)
        for role, usage in ((summary.get("usage") or {}).get("roles") or {}).items():
            if isinstance(usage, Mapping):  # the replies count every act, the model's and any other agent's
                _add(out.setdefault(str(role), {}), {k: v for k, v in usage.items() if k != "unreadable"})
    for stats in out.values():
        acts, calls = stats.get("acts", 0.0), stats.get("calls", 0.0)
        stats["give_up_rate"] = stats.get("unreadable", 0.0) / acts if acts else 0.0
        stats["mean_latency_s"] = stats.get("latency_s", 0.0) / calls if calls else 0.0
        stats["mean_ttfb_s"] = stats.get("ttfb_s", 0.0) / calls if calls else 0.0
    return dict(sorted(out.items()))


ROLE_COLUMNS = (
    ("acts", "acts", ",.0f"),
    ("give-ups", "unreadable", ",.0f"),
    ("rate", "give_up_rate", ".3f"),
    ("calls", "calls", ",.0f"),
    ("re-asks", "reasks", ",.0f"),
    ("cut off", "truncated", ",.0f"),
    ("failed req", "failed_requests", ",.0f"),
    ("latency s", "mean_latency_s", ".2f"),
    ("first byte s", "mean_ttfb_s", ".2f"),
    ("prompt tok", "prompt_tokens", ",.0f"),
    ("completion tok", "completion_tokens", ",.0f"),
)
ROLES_CAPTION = (
    "per role (give-ups: replies that could not be read, answered by the protocol's rule; latency and first "
    "byte: mean seconds per call)"
)


def roles_rows(roles: Mapping[str, Mapping[str, float]]) -> tuple[list[str], list[list[str]]]:
    """The per-role table's header and rows, formatted (the report and the HTML transcript show the same)."""
    header = ["role", *(title for title, _, _ in ROLE_COLUMNS)]
    rows = [
        [role, *(format(stats.get(key, 0), spec) for _, key, spec in ROLE_COLUMNS)] for role, stats in roles.items()
    ]
    return header, rows


def roles_table(roles: Mapping[str, Mapping[str, float]]) -> str:
    """Per role: acts, give-ups (replies that could not be read), model calls, re-asks, cut-off replies,
    failed requests, mean latency and time to first byte per call, and tokens."""
    header, rows = roles_rows(roles)
    return ROLES_CAPTION + "\n" + format_table(header, rows, left_columns=1)


USAGE_FAULTS = (("reasks", "re-asks"), ("unreadable", "unreadable"), ("truncated", "cut off"))


def usage_line(usage: Mapping[str, float]) -> str:
    """``model calls: 120 calls (6 re-asks, 3 unreadable, 2 cut off), 126 requests (6 failed), 45.1 s (first byte
    20.3 s), 456,789 tokens (...), cost 1.2345``: the run's totals (each part only when there is something to say)."""
    faults = ", ".join(f"{usage[key]:,.0f} {name}" for key, name in USAGE_FAULTS if usage.get(key))
    calls = ""
    if usage.get("calls"):
        calls = f"{usage['calls']:,.0f} calls" + (f" ({faults})" if faults else "") + ", "
    failed = f" ({usage['failed_requests']:,.0f} failed)" if usage.get("failed_requests") else ""
    first = f" (first byte {_seconds(usage['ttfb_s'])})" if usage.get("ttfb_s") else ""
    seconds = f", {_seconds(usage['latency_s'])}{first}" if usage.get("latency_s") else ""
    line = (
        f"model calls: {calls}{usage.get('requests', 0):,.0f} requests{failed}{seconds}, "
        f"{usage.get('total_tokens', 0):,.0f} tokens "
        f"({usage.get('prompt_tokens', 0):,.0f} prompt + {usage.get('completion_tokens', 0):,.0f} completion)"
    )
    return line + (f", cost {usage['cost']:.4f}" if "cost" in usage else "")


def _seconds(value: float) -> str:
    """``45.1 s``; under ten seconds with two decimals, so a local model's calls do not all read 0.0 s."""
    return f"{value:,.1f} s" if value >= 10 else f"{value:.2f} s"


def episode_row(summary: Mapping[str, Any], group_by: str | None = None) -> EpisodeRow:
    """The row of one summary; numbers that are missing or not numeric become ``None``."""
    raw_metrics = summary.get("metrics")
    metrics = raw_metrics if isinstance(raw_metrics, Mapping) else {}
    return EpisodeRow(
        episode_id=str(summary.get("episode_id", "")),
        task_id=optional_str(summary.get("task_id")),
        outcome=optional_str(summary.get("outcome")),
        turns=as_int(summary.get("turns")),
        errors=as_int(summary.get("errors")),
        score=as_float(summary.get(SCORE)),
        metrics={str(k): as_float(metrics[k]) for k in _name_order(tuple(metrics))},
        group=group_name(summary.get(group_by)) if group_by is not None else None,
        infrastructure=infrastructure_reason(summary.get("infrastructure")),
        memberships=memberships(summary.get(group_by)) if group_by is not None else (),
    )


@functools.lru_cache(maxsize=64)
def _name_order(names: tuple[Any, ...]) -> tuple[Any, ...]:
    """Metric names sorted as text: the episodes of a run share one set of names, so it is sorted once."""
    return tuple(sorted(names, key=str))


def memberships(value: Any) -> tuple[str, ...]:
    """The groups a summary field's value puts an episode in: each item of a list, else the one value."""
    if isinstance(value, list | tuple) and value:
        return tuple(dict.fromkeys(group_name(v) for v in value))
    return (group_name(value),)


def infrastructure_reason(value: Any) -> str | None:
    """The reason a summary's ``infrastructure`` field gives (None when the field is absent or empty)."""
    if not value:
        return None
    if isinstance(value, Mapping):
        said = value.get("error")
        return str(said) if said else "model endpoint failure"
    return str(value)


def aggregate(
    rows: Sequence[EpisodeRow], metric_names: Sequence[str], seed: int, resamples: int, level: float
) -> Aggregate:
    """Count, outcome counts, success rate and a Summary for score and each metric over ``rows``."""
    counts = Counter(r.outcome_label if r.outcome_label is not None else "unknown" for r in rows)
    infrastructure = (INFRASTRUCTURE,) if counts.get(INFRASTRUCTURE) else ()
    extra = sorted(o for o in counts if o not in (*STANDARD_OUTCOMES, INFRASTRUCTURE))
    outcomes = {o: counts.get(o, 0) for o in (*STANDARD_OUTCOMES, *infrastructure, *extra)}
    success_rate = outcomes["success"] / len(rows) if rows else None
    keys = [SCORE, *(name if name != SCORE else f"metric:{name}" for name in metric_names)]
    columns = [[r.score for r in rows], *([r.metrics.get(name) for r in rows] for name in metric_names)]
    metrics = dict(zip(keys, mean_sem_cis(columns, resamples, seed, level), strict=True))
    return Aggregate(len(rows), outcomes, success_rate, metrics)


def group_name(value: Any) -> str:
    """A readable, stable group name for any summary field value."""
    if value is None:
        return MISSING_GROUP
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={group_name(v)}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0])))
    if isinstance(value, list | tuple):
        return ", ".join(group_name(v) for v in value)
    return str(value)


def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key that orders digit runs by value: ``ep_2`` < ``ep_10``. A run compares by its length without
    leading zeros, then its digits: never ``int()``, which refuses runs of thousands of digits."""
    parts = re.split(r"([0-9]+)", text)
    return tuple((0, len(p.lstrip("0")), p.lstrip("0")) if p[0] in _DIGITS else (1, 0, p) for p in parts if p)


_DIGITS = frozenset("0123456789")


def optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def as_float(value: Any) -> float | None:
    """A number as float; ``None``, NaN and non-numbers (strings, lists...) become ``None``."""
    kind = type(value)
    if kind is float:  # the common case first: a report of 100,000 episodes asks millions of times
        return None if value != value else value
    if kind is int:
        return float(value)
    if isinstance(value, bool | int | float) and not (isinstance(value, float) and math.isnan(value)):
        return float(value)
    return None


def as_int(value: Any) -> int | None:
    number = as_float(value)
    return int(number) if number is not None and math.isfinite(number) else None


def csv_metric_column(name: str) -> str:
    """A metric's CSV column: its name, or ``metric:NAME`` when that would clash with a fixed column."""
    return f"metric:{name}" if name in RESERVED_COLUMNS else name


def csv_cell(value: Any) -> str:
    """Empty for missing, ``repr`` for floats (so they parse back exactly), ``str`` otherwise."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def outcome_cell(row: EpisodeRow) -> str:
    return "abort (infrastructure)" if row.infrastructure is not None else text_cell(row.outcome)


def text_cell(value: Any) -> str:
    return "-" if value is None else str(value)


def num_cell(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.3f}"


def ci_cell(s: Summary) -> str:
    if s.ci_low is None or s.ci_high is None:
        return "-"
    return f"[{num_cell(s.ci_low)}, {num_cell(s.ci_high)}]"


def outcome_line(agg: Aggregate) -> str:
    """E.g. ``12 episodes, success 8 (66.7%), failure 3, abort 1``."""
    if agg.n == 0:
        return NO_EPISODES
    labels = {INFRASTRUCTURE: "abort (infrastructure)"}
    counts = ", ".join(
        f"{labels.get(o, o)} {c}" + (f" ({agg.success_rate:.1%})" if o == "success" else "")
        for o, c in agg.outcomes.items()
    )
    return f"{agg.n} episode{'s' if agg.n != 1 else ''}, {counts}"


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]], left_columns: int) -> str:
    """Fixed-width text: the first ``left_columns`` columns left-aligned, the rest right-aligned."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        padded = [
            c.ljust(w) if i < left_columns else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(padded).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(r) for r in rows)]) + "\n"
