"""What a run's stored judgments say: per item, per judge and model, and per episode.

The papers' way, generically: a judge's runs of one item are combined first (``mean``: each question's value
averaged over the runs that answered it; ``agree``: the item is kept only when every run gave the same labels,
as Cosmic keeps the conversations both runs agree on), an item's overall score is the mean of its questions'
values (questions answered "N/A" or with a category count apart), and a judge's figures are the mean and SEM
over its items ("across all structure-turn-director observations", CRAFT table 6). A categorical question
(COMMA's error taxonomy) is reported as the share of items per label.

When a recording or a prompt changed after an item was judged, the item has answers under several prompt
digests; only the last written digest counts (files are appended, so it is the newest).
"""

from __future__ import annotations

import contextlib
import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simlab.analysis.report import format_table, natural_key, num_cell
from simlab.analysis.stats import Summary, finite_or_none, mean_sem_ci
from simlab.core.family import FigureData, FigurePoint, FigureSeries, lineup_of
from simlab.core.judging import Judge, JudgmentRecord, judgments_path, load_run_judgments, read_judgments

if TYPE_CHECKING:
    from simlab.core.plugins import Registry

ItemKey = tuple[str, str, str, int, str]  # judge, model, episode, turn, subject
METRIC_PREFIX = "judge."


@dataclass(frozen=True)
class ItemScore:
    """One judged item with its runs combined: per question the value (None: not applicable or categorical)
    and the label (the agreed or most frequent one), the overall score, and how many runs were read."""

    judge: str
    model: str
    episode_id: str
    turn: int
    subject: str
    runs: int
    values: dict[str, float | None]
    labels: dict[str, str]
    overall: float | None


@dataclass
class JudgeSummary:
    """A judge's figures over a run for one model (see the module docstring)."""

    judge: Judge
    model: str
    items: int
    runs: int
    unreadable: int
    disagreements: int
    overall: Summary
    questions: dict[str, Summary] = field(default_factory=dict)
    shares: dict[str, dict[str, float]] = field(default_factory=dict)  # categorical code -> label -> share
    rate: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "judge": self.judge.name,
            "model": self.model,
            "items": self.items,
            "answers": self.runs,
            "unreadable": self.unreadable,
            "disagreements": self.disagreements,
            "overall": self.overall.to_json(),
            "questions": {code: s.to_json() for code, s in self.questions.items()},
            "shares": {code: dict(v) for code, v in self.shares.items()},
            self.judge.rate_label or "rate": finite_or_none(self.rate),
        }


def latest(records: Sequence[JudgmentRecord]) -> list[JudgmentRecord]:
    """The records of each item under its last written prompt digest, in their order."""
    newest: dict[ItemKey, str] = {}
    for r in records:
        newest[_item_key(r)] = r.prompt_sha256
    return [r for r in records if newest[_item_key(r)] == r.prompt_sha256]


def _item_key(r: JudgmentRecord) -> ItemKey:
    return (r.judge, r.model, r.episode_id, r.turn, r.subject)


def item_scores(judge: Judge, records: Sequence[JudgmentRecord]) -> tuple[list[ItemScore], int]:
    """``judge``'s items from its records (any model; a reply read in part counts for the questions it
    answered), runs combined; and the number of items an
    ``agree`` judge dropped because its runs disagreed. Items come in episode, turn, subject order."""
    groups: dict[ItemKey, dict[int, JudgmentRecord]] = {}
    for r in latest([r for r in records if r.judge == judge.name and r.labels]):
        groups.setdefault(_item_key(r), {})[r.run] = r  # a run answered twice (retried) counts once: the last
    out: list[ItemScore] = []
    dropped = 0
    for key in sorted(groups, key=lambda k: (k[1], natural_key(k[2]), k[3], k[4])):
        runs = [groups[key][n] for n in sorted(groups[key])]
        score = _combine(judge, key, runs)
        if score is None:
            dropped += 1
        else:
            out.append(score)
    return out, dropped


def _combine(judge: Judge, key: ItemKey, runs: Sequence[JudgmentRecord]) -> ItemScore | None:
    labels: dict[str, str] = {}
    values: dict[str, float | None] = {}
    for q in judge.questions:
        said = [r.labels[q.code] for r in runs if q.code in r.labels]
        if not said:
            continue
        if judge.combine == "agree" and len(set(said)) > 1:
            return None
        labels[q.code] = Counter(said).most_common(1)[0][0]
        numbers = [n for s in said if (n := q.scale.labels.get(s)) is not None]
        values[q.code] = sum(numbers) / len(numbers) if numbers else None
    present = [v for v in values.values() if v is not None]
    overall = sum(present) / len(present) if present else None
    return ItemScore(*key, len(runs), values, labels, overall)


def summarize(judges: Sequence[Judge], records: Sequence[JudgmentRecord], seed: int = 0) -> list[JudgeSummary]:
    """One summary per judge and model that has records, judges in the given order, models sorted."""
    out: list[JudgeSummary] = []
    for judge in judges:
        mine = [r for r in records if r.judge == judge.name]
        for model in sorted({r.model for r in mine}):
            theirs = [r for r in mine if r.model == model]
            out.append(_summary(judge, model, theirs, seed))
    return out


def _summary(judge: Judge, model: str, records: Sequence[JudgmentRecord], seed: int) -> JudgeSummary:
    items, dropped = item_scores(judge, records)
    questions: dict[str, Summary] = {}
    shares: dict[str, dict[str, float]] = {}
    for q in judge.questions:
        if q.scale.categorical:
            counts = Counter(i.labels[q.code] for i in items if q.code in i.labels)
            total = sum(counts.values())
            shares[q.code] = {label: counts[label] / total for label in q.scale.labels if total}
        else:
            questions[q.code] = mean_sem_ci([i.values.get(q.code) for i in items], seed=seed)
    rate = judge.rate([i.labels for i in items]) if judge.rate is not None else None
    return JudgeSummary(
        judge, model, len(items), len(latest(records)), sum(r.unreadable is not None for r in latest(records)),
        dropped, mean_sem_ci([i.overall for i in items], seed=seed), questions, shares, rate,
    )  # fmt: skip


def episode_metrics(judges: Sequence[Judge], records: Sequence[JudgmentRecord]) -> dict[str, dict[str, float]]:
    """Per episode, each judge's mean overall score over its items there, as report metrics:
    ``judge.NAME`` when one model judged, ``judge.NAME@MODEL`` for each when several did."""
    out: dict[str, dict[str, float]] = {}
    for judge in judges:
        items, _ = item_scores(judge, records)
        models = sorted({i.model for i in items})
        for model in models:
            name = METRIC_PREFIX + judge.name + (f"@{model}" if len(models) > 1 else "")
            per_episode: dict[str, list[float]] = {}
            for i in items:
                if i.model == model and i.overall is not None:
                    per_episode.setdefault(i.episode_id, []).append(i.overall)
            for episode_id, scores in per_episode.items():
                out.setdefault(episode_id, {})[name] = sum(scores) / len(scores)
    return out


def with_judge_metrics(
    summaries: Sequence[Mapping[str, Any]], metrics: Mapping[str, Mapping[str, float]]
) -> list[dict[str, Any]]:
    """``summaries`` with each episode's judge metrics added to its ``metrics`` (copies; nothing is written)."""
    out = []
    for summary in summaries:
        extra = metrics.get(str(summary.get("episode_id")), {})
        out.append({**summary, "metrics": {**(summary.get("metrics") or {}), **extra}} if extra else dict(summary))
    return out


def judges_table(summaries: Sequence[JudgeSummary]) -> str:
    """Fixed-width text: per judge and model, the items, the overall score and each question, mean ± SEM."""
    blocks = []
    for s in summaries:
        head = f"judge {s.judge.name} ({s.judge.title}), model {s.model}: {s.items} items from {s.runs} answers"
        notes = [f"{s.unreadable} unreadable"] if s.unreadable else []
        notes += [f"{s.disagreements} items dropped: runs disagreed"] if s.disagreements else []
        if s.rate is not None or s.judge.rate is not None:
            notes.append(f"{s.judge.rate_label or 'rate'} {num_cell(s.rate)}")
        rows = [["overall", "", str(s.overall.n), num_cell(s.overall.mean), num_cell(s.overall.sem)]]
        for code, summary in s.questions.items():
            q = s.judge.question(code)
            rows.append([code, q.label if q else "", str(summary.n), num_cell(summary.mean), num_cell(summary.sem)])
        for code, shares in s.shares.items():
            rows += [[code, label, "", num_cell(share), ""] for label, share in shares.items()]
        table = format_table(["question", "", "n", "mean", "SEM"], rows, left_columns=2)
        blocks.append(head + (f" ({'; '.join(notes)})" if notes else "") + "\n" + table)
    return "\n".join(blocks)


def figure_table(title: str, data: FigureData) -> str:
    """A figure's numbers as fixed-width text: a row per x value, a column per series."""
    xs = list(dict.fromkeys(str(p.x) for s in data.series for p in s.points))
    values = {(s.label, str(p.x)): p.y for s in data.series for p in s.points}
    rows = [[x, *(num_cell(values.get((s.label, x))) for s in data.series)] for x in xs]
    return f"{title}\n" + format_table([data.x_label, *(s.label for s in data.series)], rows, left_columns=1)


def known_judges(world: str, registry: Registry | None = None) -> dict[str, Judge]:
    """Every judge of ``world`` by name: the family's own in declared order, then plugins' judging it, from
    ``registry`` (default: the plugins discovered once per process, as the app asks at every episode it opens).
    A plugin that fails to load is left out; ``python main.py plugins`` says why."""
    from simlab.worlds import get_family

    out = {judge.name: judge for judge in get_family(world).load_judges()}
    for name, judge in (_plugin_judges(registry) if registry is not None else _discovered_judges()).items():
        if judge.world == world:
            out.setdefault(name, judge)
    return out


@functools.cache
def _discovered_judges() -> dict[str, Judge]:
    from simlab.core.plugins import discover

    return _plugin_judges(discover())


def _plugin_judges(registry: Registry) -> dict[str, Judge]:
    """Every judge the plugins of ``registry`` offer that loads, by name."""
    from simlab.core.errors import ConfigError

    out = {}
    for name in sorted(registry.judge_names()):
        with contextlib.suppress(ConfigError):  # recorded in registry.problems
            out[name] = registry.load_judge(name)
    return out


@dataclass
class RunJudgments:
    """A run's stored judgments read back: the judges that gave them, the records, and the problems met
    (unreadable lines, judges no longer known)."""

    judges: list[Judge]
    records: list[JudgmentRecord]
    problems: list[str]

    def summaries(self, seed: int = 0) -> list[JudgeSummary]:
        return summarize(self.judges, self.records, seed)

    def for_episode(self, episode_id: str) -> list[JudgmentRecord]:
        return [r for r in self.records if r.episode_id == episode_id]


def run_judgments(run_dir: Path, world: str) -> RunJudgments:
    """The judgments stored in ``run_dir`` (a run of ``world``), with the judges that made them."""
    return _with_judges(*load_run_judgments(run_dir), run_dir, world)


def episode_judgments(run_dir: Path, world: str, episode_id: str) -> RunJudgments:
    """The judgments about one episode of ``run_dir`` (only its file is read), with the judges that made them."""
    return _with_judges(*read_judgments(judgments_path(run_dir, episode_id)), run_dir, world)


def _with_judges(records: list[JudgmentRecord], problems: list[str], run_dir: Path, world: str) -> RunJudgments:
    known = known_judges(world) if records else {}
    names = list(dict.fromkeys(r.judge for r in records))
    for name in names:
        if name not in known:
            problems.append(f"{run_dir}: judgments by {name!r}, a judge this installation does not know, left out")
    judges = [known[n] for n in known if n in names]
    return RunJudgments(judges, [r for r in records if r.judge in known], problems)


def judge_figure(judge: Judge, records: Sequence[JudgmentRecord], summaries: Sequence[Mapping[str, Any]]) -> FigureData:
    """CRAFT's figures 4 and 15 for any judge: per question (and overall) the mean over items with SEM error
    bars, a series per agent lineup (and judging model, when several judged); a categorical question gives
    its labels' shares instead. A judge that declares its own ``figure`` gets that one."""
    if judge.figure is not None:
        return judge.figure(judge, records, summaries)
    lineups = {str(s.get("episode_id")): lineup_of(s.get("agents") or {}) for s in summaries}
    items, _ = item_scores(judge, records)
    models = sorted({i.model for i in items})
    series = []
    for lineup in sorted(set(lineups.values())):
        for model in models:
            mine = [i for i in items if i.model == model and lineups.get(i.episode_id) == lineup]
            label = lineup + (f" · judged by {model}" if len(models) > 1 else "")
            points = _question_points(judge, mine)
            if points:
                series.append(FigureSeries(label, tuple(points)))
    categorical = all(q.scale.categorical for q in judge.questions)
    y_label = "share of items" if categorical else "mean score (± SEM over items)"
    return FigureData("bar", "question", y_label, tuple(series), (0.0, 1.0) if not _signed(judge) else None)


def _question_points(judge: Judge, items: Sequence[ItemScore]) -> list[FigurePoint]:
    points = []
    for q in judge.questions:
        if q.scale.categorical:
            said = [i.labels[q.code] for i in items if q.code in i.labels]
            points += [
                FigurePoint(f"{q.code} {label}", said.count(label) / len(said)) for label in q.scale.labels if said
            ]
            continue
        s = mean_sem_ci([i.values.get(q.code) for i in items])
        if s.mean is not None:
            points.append(FigurePoint(q.code, s.mean, s.sem))
    overall = mean_sem_ci([i.overall for i in items])
    if overall.mean is not None and len([q for q in judge.questions if not q.scale.categorical]) > 1:
        points.append(FigurePoint("overall", overall.mean, overall.sem))
    return points


def _signed(judge: Judge) -> bool:
    return any(v is not None and v < 0 for q in judge.questions for v in q.scale.labels.values())
