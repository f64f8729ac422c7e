"""Tests for simlab.analysis.report: rows, aggregates, grouping and the JSON, CSV and table forms."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest

from simlab.analysis.report import build_report, paper_table
from simlab.analysis.stats import mean_sem_ci


def summary(i: int, outcome: str, score: float, group: str, **metrics: float | None) -> dict[str, Any]:
    """A blocks-like index summary."""
    return {
        "format": "simlab.index",
        "version": 1,
        "episode_id": f"ep_{i}",
        "file": f"episodes/ep_{i}.json",
        "world": "blocks",
        "task_id": f"structure_{i % 2:03d}",
        "agents": {"builder": "rule", "oracle": f"llm:{group}"},
        "outcome": outcome,
        "score": score,
        "turns": 10 + i,
        "errors": i % 3,
        "metrics": metrics,
        "group": group,
        "repeat": i,
    }


@pytest.fixture
def summaries() -> list[dict[str, Any]]:
    return [
        summary(10, "success", 1.0, "simple", overall_progress=1.0, iou=0.9, completion=1.0),
        summary(2, "failure", 0.25, "complex", overall_progress=0.25, iou=0.2, completion=None),
        summary(1, "success", 0.75, "simple", overall_progress=0.75, iou=0.5, completion=0.5),
        summary(3, "abort", 0.0, "complex", overall_progress=0.0, iou=None, tax_correct=0.5),
    ]


def test_rows_are_sorted_naturally_and_carry_every_metric(summaries: list[dict[str, Any]]) -> None:
    report = build_report(summaries)
    assert [r.episode_id for r in report.episodes] == ["ep_1", "ep_2", "ep_3", "ep_10"]
    assert report.metric_names == ["completion", "iou", "overall_progress", "tax_correct"]
    row = report.episodes[0]
    assert (row.task_id, row.outcome, row.turns, row.errors, row.score) == ("structure_001", "success", 11, 1, 0.75)
    assert row.metrics == {"completion": 0.5, "iou": 0.5, "overall_progress": 0.75}


def test_aggregate_counts_rates_and_means(summaries: list[dict[str, Any]]) -> None:
    agg = build_report(summaries).aggregate
    assert agg.n == 4
    assert agg.outcomes == {"success": 2, "failure": 1, "abort": 1}
    assert agg.success_rate == pytest.approx(0.5)
    assert list(agg.metrics) == ["score", "completion", "iou", "overall_progress", "tax_correct"]
    assert agg.metrics["score"].mean == pytest.approx(0.5)
    assert agg.metrics["completion"].n == 2  # the None and the missing value are left out
    assert agg.metrics["tax_correct"].n == 1


def test_aggregate_uses_the_seeded_bootstrap(summaries: list[dict[str, Any]]) -> None:
    report = build_report(summaries, seed=4)
    scores_in_id_order = [0.75, 0.25, 0.0, 1.0]  # ep_1, ep_2, ep_3, ep_10
    assert report.aggregate.metrics["score"] == mean_sem_ci(scores_in_id_order, seed=4)


def test_report_is_deterministic_and_independent_of_input_order(summaries: list[dict[str, Any]]) -> None:
    first = build_report(summaries, group_by="group").to_json()
    assert build_report(list(reversed(summaries)), group_by="group").to_json() == first


def test_json_keys_and_strictness(summaries: list[dict[str, Any]]) -> None:
    data = build_report(summaries).to_json()
    assert data["format"] == "simlab.report" and data["version"] == 1
    assert {"episodes", "aggregate", "groups"} <= data.keys()
    assert data["groups"] == {}
    assert data["aggregate"].keys() == {"n", "outcomes", "success_rate", "metrics"}
    assert data["aggregate"]["metrics"]["score"].keys() == {"mean", "sem", "ci_low", "ci_high", "n"}
    assert data["aggregate"]["metrics"]["overall_progress"]["n"] == 4
    assert data["episodes"][0]["metrics"]["iou"] == 0.5
    assert json.loads(json.dumps(data, allow_nan=False)) == data


def test_grouping_by_a_summary_field(summaries: list[dict[str, Any]]) -> None:
    report = build_report(summaries, group_by="group")
    assert list(report.groups) == ["complex", "simple"]
    simple = report.groups["simple"]
    assert simple.n == 2 and simple.success_rate == 1.0
    assert simple.metrics["score"].mean == pytest.approx(0.875)
    assert report.groups["complex"].outcomes == {"success": 0, "failure": 1, "abort": 1}
    assert {r.episode_id: r.group for r in report.episodes}["ep_3"] == "complex"
    assert report.to_json()["groups"]["simple"]["metrics"]["iou"]["n"] == 2


def test_grouping_by_agents_task_and_numbers(summaries: list[dict[str, Any]]) -> None:
    assert list(build_report(summaries, group_by="agents").groups) == [
        "builder=rule, oracle=llm:complex",
        "builder=rule, oracle=llm:simple",
    ]
    assert list(build_report(summaries, group_by="task_id").groups) == ["structure_000", "structure_001"]
    assert list(build_report(summaries, group_by="repeat").groups) == ["1", "2", "3", "10"]
    assert list(build_report(summaries, group_by="nonexistent").groups) == ["(none)"]


def test_csv_parses_back_to_the_same_numbers(summaries: list[dict[str, Any]]) -> None:
    report = build_report(summaries, group_by="group")
    rows = list(csv.DictReader(io.StringIO(report.to_csv())))
    assert [r["episode_id"] for r in rows] == ["ep_1", "ep_2", "ep_3", "ep_10"]  # no aggregate rows
    for parsed, row in zip(rows, report.episodes, strict=True):
        assert float(parsed["score"]) == row.score
        assert int(parsed["turns"]) == row.turns and parsed["group"] == row.group
        for name in report.metric_names:
            value = row.metrics.get(name)
            if value is None:
                assert parsed[name] == ""
            else:
                assert float(parsed[name]) == value


def test_aggregates_csv_has_one_row_per_group_and_metric(summaries: list[dict[str, Any]]) -> None:
    report = build_report(summaries, group_by="group")
    rows = list(csv.DictReader(io.StringIO(report.aggregates_csv())))
    assert len(rows) == 3 * (1 + len(report.metric_names))
    by_key = {(r["group"], r["metric"]): r for r in rows}
    score = report.groups["simple"].metrics["score"]
    parsed = by_key[("simple", "score")]
    assert int(parsed["n"]) == score.n
    assert (float(parsed["mean"]), float(parsed["sem"])) == (score.mean, score.sem)
    assert (float(parsed["ci_low"]), float(parsed["ci_high"])) == (score.ci_low, score.ci_high)
    assert by_key[("(all)", "tax_correct")]["sem"] == "0.0"


def test_table_lists_every_episode_and_aggregate_row(summaries: list[dict[str, Any]]) -> None:
    report = build_report(summaries, group_by="group")
    table = report.to_table(headline=["overall_progress", "iou"])
    for row in report.episodes:
        assert row.episode_id in table
    assert "metric" in table and "SEM" in table and "95% CI" in table
    for name in ["score", *report.metric_names]:
        assert any(line.startswith(name + " ") for line in table.splitlines())
    assert "group = simple" in table and "group = complex" in table
    assert f"{report.aggregate.metrics['score'].mean:.3f}" in table
    header = table.splitlines()[1]
    assert header.split() == ["episode", "task", "outcome", "turns", "errors", "score", "overall_progress", "iou"]


def test_table_default_headline_is_first_four_metrics(summaries: list[dict[str, Any]]) -> None:
    extra = [*summaries, summary(4, "success", 0.5, "simple", zeta=1.0)]
    header = build_report(extra).to_table().splitlines()[1].split()
    assert header[5:] == ["score", "completion", "iou", "overall_progress", "tax_correct"]


def test_table_columns_are_aligned(summaries: list[dict[str, Any]]) -> None:
    lines = build_report(summaries).to_table().splitlines()
    header, rule = lines[1], lines[2]
    assert len(rule) >= len(header.rstrip())
    assert all(len(line) <= len(rule) for line in lines[3:7])


def test_empty_summaries_give_a_clear_report() -> None:
    report = build_report([], group_by="group")
    assert "no finished episodes" in report.to_table()
    data = report.to_json()
    assert data["episodes"] == [] and data["groups"] == {}
    assert data["aggregate"]["n"] == 0 and data["aggregate"]["success_rate"] is None
    assert data["aggregate"]["metrics"]["score"] == {"mean": None, "sem": None, "ci_low": None, "ci_high": None, "n": 0}
    assert report.to_csv().strip() == "episode_id,task_id,outcome,turns,errors,group,score"
    json.dumps(data, allow_nan=False)


def test_sparse_and_malformed_summaries_do_not_crash() -> None:
    report = build_report([{"episode_id": "a"}, {"episode_id": "b", "metrics": None, "score": "n/a", "turns": 3}])
    assert report.aggregate.n == 2
    assert report.aggregate.outcomes["unknown"] == 2
    assert report.aggregate.metrics["score"].n == 0
    assert "a" in report.to_table() and "-" in report.to_table()


def test_metric_named_score_does_not_overwrite_the_headline_score() -> None:
    entry = summary(1, "success", 0.5, "g")
    entry["metrics"] = {"score": 0.1}
    report = build_report([entry])
    assert report.aggregate.metrics["score"].mean == 0.5
    assert report.aggregate.metrics["metric:score"].mean == 0.1
    assert "metric:score" in report.to_csv().splitlines()[0].split(",")


def test_model_usage_is_summed_over_the_run_and_printed() -> None:
    from simlab.analysis.report import build_report

    summaries = [
        {
            "episode_id": "e1",
            "outcome": "success",
            "score": 1.0,
            "metrics": {},
            "usage": {"requests": 3, "prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120, "cost": 0.5},
        },
        {
            "episode_id": "e2",
            "outcome": "failure",
            "score": 0.0,
            "metrics": {},
            "usage": {"requests": 2, "prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
        },
    ]
    report = build_report(summaries)
    assert report.to_json()["usage"] == {
        "requests": 5.0,
        "prompt_tokens": 150.0,
        "completion_tokens": 30.0,
        "total_tokens": 180.0,
        "cost": 0.5,
    }
    assert "model calls: 5 requests, 180 tokens (150 prompt + 30 completion), cost 0.5000" in report.to_table()
    assert build_report(summaries[:0]).to_json()["usage"] == {}
    summaries[1]["usage"].update(
        calls=4, reasks=2, unreadable=1, truncated=1, failed_requests=1, latency_s=19.0, ttfb_s=3.5
    )
    assert (
        "model calls: 4 calls (2 re-asks, 1 unreadable, 1 cut off), 5 requests (1 failed), 19.0 s "
        "(first byte 3.50 s), 180 tokens" in build_report(summaries).to_table()
    )
    summaries[1]["usage"].update(latency_s=0.042, ttfb_s=0.0)  # a local model: not "0.0 s"
    assert "5 requests (1 failed), 0.04 s, 180 tokens" in build_report(summaries).to_table()


# ---- aborts caused by a model endpoint ----------------------------------------------------------------------
def with_infrastructure(entry: dict[str, Any], error: str = "APIConnectionError on 6 attempts") -> dict[str, Any]:
    """``entry`` as an abort a model endpoint's failure caused (the summary field EpisodeRun writes)."""
    infra = {"role": "builder", "endpoint": "http://127.0.0.1:1/v1", "status": None, "error": error}
    return {**entry, "outcome": "abort", "infrastructure": infra}


def test_infrastructure_aborts_are_counted_apart_from_other_aborts(summaries: list[dict[str, Any]]) -> None:
    kept = [
        *summaries,
        with_infrastructure(summary(4, "abort", 0.0, "simple")),
        with_infrastructure(summary(5, "x", 0, "simple")),
    ]
    report = build_report(kept, group_by="group")
    assert report.aggregate.n == 6
    assert report.aggregate.outcomes == {"success": 2, "failure": 1, "abort": 1, "infrastructure": 2}
    assert report.groups["simple"].outcomes == {"success": 2, "failure": 0, "abort": 0, "infrastructure": 2}
    assert report.groups["complex"].outcomes == {"success": 0, "failure": 1, "abort": 1}  # none there: no key

    data = report.to_json()
    assert data["aggregate"]["outcomes"]["infrastructure"] == 2 and data["aggregate"]["outcomes"]["abort"] == 1
    rows = {row["episode_id"]: row for row in data["episodes"]}
    assert rows["ep_4"]["outcome"] == "abort" and rows["ep_4"]["infrastructure"] == "APIConnectionError on 6 attempts"
    assert "infrastructure" not in rows["ep_3"]
    json.dumps(data, allow_nan=False)

    table = report.to_table()
    assert "6 episodes, success 2 (33.3%), failure 1, abort 1, abort (infrastructure) 2" in table
    lines = {line.split()[0]: line for line in table.splitlines() if line.startswith("ep_")}
    assert "abort (infrastructure)" in lines["ep_4"] and "infrastructure" not in lines["ep_3"]


def test_the_report_command_counts_infrastructure_aborts_a_run_kept(tmp_path, capsys) -> None:
    from simlab.cli import main
    from simlab.core.episode import Episode
    from simlab.core.recording import RunWriter

    config = {"world": "blocks", "seed": 0, "repeats": 1, "agents": {}, "settings": {}, "tasks": []}
    writer = RunWriter(tmp_path / "run", config)
    base = {"world": "blocks", "task_id": "t", "score": 0.0, "turns": 1, "errors": 0, "metrics": {}}
    for k, outcome in enumerate(["success", "abort", "abort"]):
        summary_ = {**base, "outcome": outcome}
        if k == 2:
            summary_ = with_infrastructure(summary_, "HTTP 401 AuthenticationError: bad key [redacted]")
        writer.add(Episode(f"e{k}", "blocks", 0, {"id": "t"}, {}, {}, [], [], summary_))

    assert main(["report", str(tmp_path / "run"), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["aggregate"]["outcomes"] == {"success": 1, "failure": 0, "abort": 1, "infrastructure": 1}
    assert main(["report", str(tmp_path / "run")]) == 0
    assert "abort 1, abort (infrastructure) 1" in capsys.readouterr().out


def test_a_list_field_puts_an_episode_in_each_of_its_groups():
    rows = [summary(i, "success" if i % 2 else "failure", 100.0 * (i % 2), "x", sr=100.0 * (i % 2)) for i in range(4)]
    rows[0]["categories"] = ["memory", "multi-step reasoning"]
    rows[1]["categories"] = ["memory"]
    rows[2]["categories"] = ["grounding", "multi-step reasoning"]
    rows[3]["categories"] = ["grounding"]
    report = build_report(rows, group_by="categories")
    assert list(report.groups) == ["grounding", "memory", "multi-step reasoning"]
    assert {name: agg.n for name, agg in report.groups.items()} == {
        "grounding": 2,
        "memory": 2,
        "multi-step reasoning": 2,
    }
    assert report.aggregate.n == 4  # overall counts each episode once


def test_the_papers_table_layout_prints_mean_and_binomial_se():
    rows = [
        summary(i, "success" if i < 3 else "failure", 0.0, "wire" if i < 4 else "who", sr=100.0 * (i < 3))
        for i in range(8)
    ]
    text = paper_table(build_report(rows, group_by="group"), ["sr"])
    header, _rule, line, *_ = text.splitlines()
    assert header.split() == ["metric", "who", "wire", "Overall"]
    # wire: p = 0.75 over 4 -> 75 ± sqrt(.75 * .25 / 4) * 100 = 21.65; who: 0 ± 0; overall 3/8
    assert line.split() == ["sr", "0.00", "±", "0.00", "75.00", "±", "21.65", "37.50", "±", "17.12"]
    assert "binomial SE" in text


def test_the_text_report_lists_the_first_thousand_episodes_and_counts_them_all():
    summaries = [
        {"episode_id": f"ep-{k:04d}", "task_id": "t", "outcome": "success" if k % 2 else "failure", "score": k / 1005}
        for k in range(1005)
    ]
    report = build_report(summaries, resamples=50)
    text = report.to_table()
    assert "episodes (1,005; the first 1,000 listed, --format csv or json lists all)" in text
    assert "ep-0999" in text and "ep-1000" not in text  # by id, the first thousand
    assert "all episodes: 1005 episodes, success 502 (50.0%), failure 503" in text  # the aggregates count all
    assert len(report.episodes) == 1005  # csv and json list every one
    assert len(list(csv.reader(io.StringIO(report.to_csv())))) == 1006
