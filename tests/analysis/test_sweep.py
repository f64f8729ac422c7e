"""The numbers behind the Sweep dock: which fields plot and group, the series per group, histogram bins equal
to numpy's, seeded jitter, and filter expressions that keep exactly a bin's or a group's episodes."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from simlab.analysis.sweep import (
    JITTER,
    LINEUP,
    MAX_BINS,
    MAX_GROUPS,
    RUN,
    SweepTable,
    bin_edges,
    bin_of,
    bin_where,
    counts,
    group_where,
    jittered,
    select,
    sweep_table,
    where_name,
)
from simlab.analysis.where import parse_where
from simlab.core.recording import load_run
from simlab.core.run_table import RunTable
from simlab.runner.demo import DEMO_RUN


def _summary(k: int, rng: random.Random, builder: str) -> dict[str, Any]:
    """A summary of every kind a sweep holds: a missing metric, a null, a true/false field, a name that needs
    backquotes, an integer count, a field naming every episode apart and one of too many values to group by."""
    out: dict[str, Any] = {
        "episode_id": f"ep-{k}",
        "task_id": f"task-{k % 20}",
        "outcome": rng.choice(["success", "failure", "abort"]),
        "score": rng.random(),
        "turns": rng.randint(1, 20),
        "group": rng.choice(["simple", "complex"]),
        "metrics": {"iou": rng.choice([rng.random(), None]), "tax_engine-layer": rng.random()},
        "agents": {"D1": rng.choice(["oracle", "silent"]), "builder": builder},
    }
    if k % 3:
        out["stopped"] = k % 2 == 0
        out["abort_cause"] = rng.choice(["strikes", "format"])
    return out


def _run(seed: int, n: int, builder: str) -> RunTable:
    rng = random.Random(seed)
    return RunTable.from_summaries([_summary(k, rng, builder) for k in range(n)])


TWO = sweep_table([("qwen", _run(0, 120, "openai:qwen")), ("gpt", _run(1, 80, "openai:gpt"))])
ONE = sweep_table([("qwen", _run(0, 120, "openai:qwen"))])


def _kept(table: SweepTable, run: int, text: str) -> np.ndarray:
    """The rows (of ``table``) of run number ``run`` that filter ``text`` keeps there, as the browser would."""
    run_table = table.runs[run][1]
    offset = sum(t.n for _, t in table.runs[:run])
    return offset + np.flatnonzero(parse_where(text).bind(run_table.columns).mask(run_table))


def test_every_number_plots_and_few_valued_text_groups():
    metrics = TWO.metrics()
    assert metrics[:2] == ["score", "turns"]  # top-level numbers first, then the metrics
    assert {"metrics.iou", "metrics.tax_engine-layer"} <= set(metrics)
    assert "stopped" in metrics  # true/false plots as 0/1
    groupings = TWO.groupings()
    assert groupings[:2] == [RUN, LINEUP]
    assert {"outcome", "group", "agents.D1", "agents.builder", "stopped", "abort_cause"} <= set(groupings)
    assert "episode_id" not in groupings and "task_id" not in groupings  # every episode apart; 20 > MAX_GROUPS
    assert MAX_GROUPS < 20
    assert RUN not in ONE.groupings() and "agents.builder" not in ONE.groupings()  # one value: nothing to split


def test_series_per_group_hold_their_rows_and_count_what_is_missing():
    selection = select(TWO, "metrics.iou", group="outcome")
    iou = TWO.numbers("metrics.iou")
    outcomes = TWO.labels("outcome")
    assert [s.label for s in selection.series] == ["abort", "failure", "success"]
    for s in selection.series:
        code = outcomes[1].index(s.label)
        expected = np.flatnonzero((outcomes[0] == code) & ~np.isnan(iou))
        assert s.rows.tolist() == expected.tolist()
        assert s.x.tolist() == iou[expected].tolist()
    missing = int(np.isnan(iou).sum())
    assert missing and selection.missing == {"metrics.iou": missing}
    assert selection.note() == f"{missing} episodes have no metrics.iou: left out"
    assert sum(len(s.rows) for s in selection.series) == TWO.n - missing


def test_a_scatter_leaves_out_what_either_axis_lacks_and_a_missing_group_value_is_a_group():
    selection = select(TWO, "score", "metrics.iou", "abort_cause")
    assert [s.label for s in selection.series] == ["format", "strikes", "(no abort_cause)"]
    assert all(np.isfinite(s.y).all() for s in selection.series if s.y is not None)
    assert selection.missing == {"score": 0, "metrics.iou": int(np.isnan(TWO.numbers("metrics.iou")).sum())}


def test_runs_and_lineups_group_across_runs_and_keys_name_the_run():
    by_run = TWO.groups(RUN)
    assert [(g.label, len(g.rows)) for g in by_run] == [("qwen", 120), ("gpt", 80)]
    lineups = TWO.groups(LINEUP)
    labels = [g.label for g in lineups]
    assert labels == sorted(labels) and len(labels) == 4  # D1 oracle/silent x two builders
    assert "D1=silent builder=openai:gpt" in labels
    assert TWO.key(0) == ("qwen", "ep-0") and TWO.key(120) == ("gpt", "ep-0") and TWO.key(199) == ("gpt", "ep-79")
    with pytest.raises(IndexError):
        TWO.key(200)


@pytest.mark.parametrize("seed", range(5))
def test_bins_count_as_numpy_does(seed):
    values = np.random.default_rng(seed).normal(size=1000)
    edges = bin_edges(values)
    assert np.array_equal(edges, np.histogram_bin_edges(values, "auto"))
    assert counts(values, edges).tolist() == np.histogram(values, edges)[0].tolist()
    assert bin_of(np.array([edges[-1], edges[0], edges[-1] + 1]), edges).tolist() == [len(edges) - 2, 0, -1]


def test_whole_numbers_get_whole_bins_centred_on_them_and_bins_are_bounded():
    turns = TWO.numbers("turns")
    edges = bin_edges(turns, integer=True)
    assert edges[0] == turns.min() - 0.5 and np.all(np.diff(edges) >= 1) and edges[-1] >= turns.max() + 0.5
    assert counts(turns, edges).sum() == TWO.n
    wide = np.random.default_rng(0).pareto(0.5, 100_000)
    assert len(bin_edges(wide)) == MAX_BINS + 1
    spread = np.arange(0.0, 10_000)
    assert len(bin_edges(spread, integer=True)) <= MAX_BINS + 1


def test_jitter_is_seeded_bounded_and_follows_the_episode_not_the_grouping():
    rows = np.arange(TWO.n)
    first, again = jittered(TWO, "turns", rows), jittered(TWO, "turns", rows)
    assert np.array_equal(first, again)
    offsets = first - TWO.numbers("turns")
    assert np.all(np.abs(offsets) <= JITTER) and np.std(offsets) > JITTER / 4
    for group in TWO.groups("outcome"):
        assert np.array_equal(jittered(TWO, "turns", group.rows), first[group.rows])
    assert np.array_equal(jittered(TWO, "score", rows), TWO.numbers("score"))  # not whole numbers: as they are


@pytest.mark.parametrize("metric", ["score", "turns", "metrics.tax_engine-layer", "metrics.iou"])
def test_a_bins_filter_keeps_exactly_the_episodes_it_counts(metric):
    values = ONE.numbers(metric)
    present = ~np.isnan(values)
    edges = bin_edges(values[present], ONE.integer(metric))
    index = np.full(ONE.n, -1)
    index[present] = bin_of(values[present], edges)
    for k in range(len(edges) - 1):
        assert _kept(ONE, 0, bin_where(metric, edges, k)).tolist() == np.flatnonzero(index == k).tolist()


@pytest.mark.parametrize("grouping", [LINEUP, "outcome", "stopped", "abort_cause", "agents.D1"])
def test_a_groups_filter_keeps_exactly_its_episodes(grouping):
    for run in range(len(TWO.runs)):
        offset = sum(t.n for _, t in TWO.runs[:run])
        for group in TWO.groups(grouping):
            mine = group.rows[(group.rows >= offset) & (group.rows < offset + TWO.runs[run][1].n)]
            if len(mine):
                assert _kept(TWO, run, group_where(TWO, grouping, group.rows)).tolist() == mine.tolist()
    assert group_where(TWO, RUN, TWO.groups(RUN)[0].rows) == ""  # a run is chosen in the browser's run menu


def test_names_are_backquoted_when_the_parser_needs_it():
    assert where_name("metrics.iou") == "metrics.iou"
    assert where_name("metrics.tax_engine-layer") == "`metrics.tax_engine-layer`"
    assert where_name("metrics.in") == "`metrics.in`" and where_name("true") == "`true`"


def test_the_demo_run():
    run = load_run(DEMO_RUN)
    table = sweep_table([("demo", run.table())])
    assert table.title() == "demo · 6 episodes"
    assert "version" not in table.metrics() and "score" in table.metrics()
    assert table.groupings() == ["task_id", "group", "outcome"]  # three tasks played twice each
    assert [table.key(k)[1] for k in range(table.n)] == [s["episode_id"] for s in run.summaries]
