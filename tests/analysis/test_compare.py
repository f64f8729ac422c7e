"""``report RUN_A RUN_B ...``: runs side by side and paired, from small scripted blocks runs.

A careful builder (no slips) and a sloppy one (half its moves misheard) play the same simple structures twice
each; a third run of another seed holds other structures under the same ids. Every number is recomputed here
from the index summaries and checked against scipy directly."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest, wilcoxon

from simlab.analysis.compare import (
    ALL_ZERO,
    APPROXIMATE,
    MCNEMAR,
    NO_DISCORDANT,
    NO_PAIRS,
    NO_SHARED_TASKS,
    WILCOXON,
    compare_runs,
    name_runs,
    signed_rank,
    unique_names,
)
from simlab.analysis.figures import figure_csv, run_figures, write_figures, write_run_figures
from simlab.analysis.report import build_report, natural_key
from simlab.analysis.stats import mean_sem_ci
from simlab.cli import main
from simlab.core.errors import SimlabError
from simlab.core.family import lineup
from simlab.core.recording import INDEX_FILE, RUN_FILE, Run, load_run
from simlab.runner.batch import RunConfig, run
from simlab.worlds import get_family


def simple(builder: str) -> RunConfig:
    """Six simple structures played twice each with 20 turns: the careful builder wins some of them."""
    return RunConfig(
        "blocks", seed=1, episodes=6, repeats=2, agents=[builder], groups=["simple"], settings={"turns": 20}
    )


CAREFUL, SLOPPY = simple("builder=scripted:0"), simple("builder=scripted:0.5")
OTHER_SEED = RunConfig("blocks", seed=7, episodes=5, agents=["builder=scripted:0"], settings={"turns": 6})


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Run folders by name: careful, sloppy, other (another seed) and mixed (careful's and sloppy's episodes
    in one run, two lineups)."""
    root = tmp_path_factory.mktemp("compare")
    for name, config in (("careful", CAREFUL), ("sloppy", SLOPPY), ("other", OTHER_SEED)):
        run(config, root / name)
    merge(root / "careful", root / "sloppy", root / "mixed")
    return {name: root / name for name in ("careful", "sloppy", "other", "mixed")}


def merge(first: Path, second: Path, out: Path) -> None:
    """A run holding both runs' episodes (the second's ids prefixed ``b-``), with the first's run.json."""
    (out / "episodes").mkdir(parents=True)
    shutil.copy(first / RUN_FILE, out / RUN_FILE)
    lines = []
    for source, prefix in ((first, ""), (second, "b-")):
        for line in (source / INDEX_FILE).read_text(encoding="utf-8").splitlines():
            summary = json.loads(line)
            episode = json.loads((source / summary["file"]).read_text(encoding="utf-8"))
            summary["episode_id"] = episode["episode_id"] = prefix + summary["episode_id"]
            summary["file"] = f"episodes/{summary['episode_id']}.json"
            (out / summary["file"]).write_text(json.dumps(episode), encoding="utf-8")
            lines.append(json.dumps(summary))
    (out / INDEX_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")


def loaded(*paths: Path) -> list[tuple[str, Run]]:
    return name_runs([load_run(p) for p in paths])


def by_task(path: Path) -> dict[tuple[str, int], dict]:
    return {(s["task_id"], s["repeat"]): s for s in load_run(path).summaries}


def value(summary: dict, row: str) -> float | None:
    """The row's value of one episode; None where the metric is undefined (``fail`` without a move attempt)."""
    if row == "success_rate":
        return 1.0 if summary["outcome"] == "success" else 0.0
    found = summary["score"] if row == "score" else summary["metrics"][row]
    return None if found is None else float(found)


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["report", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_each_column_holds_its_runs_own_numbers(runs):
    comparison = compare_runs(loaded(runs["careful"], runs["sloppy"]))
    assert [c.name for c in comparison.columns] == ["careful", "sloppy"]
    for column, name in zip(comparison.columns, ("careful", "sloppy"), strict=True):
        summaries = load_run(runs[name]).summaries
        assert column.stats["success_rate"].n == len(summaries) == 12
        wins = sum(s["outcome"] == "success" for s in summaries)
        assert column.stats["success_rate"].mean == pytest.approx(wins / 12)
        assert column.stats["iou"].mean == pytest.approx(np.mean([s["metrics"]["iou"] for s in summaries]))
        own = build_report(summaries, seed=1).aggregate.metrics  # what `report RUN` prints for that run
        assert column.stats["score"] == own["score"]
        assert column.stats["completion"] == own["completion"]
    assert comparison.columns[0].stats["success_rate"].mean > comparison.columns[1].stats["success_rate"].mean


def test_rows_are_success_score_then_the_headline_metrics_then_the_rest_by_name(runs):
    rows = compare_runs(loaded(runs["careful"], runs["sloppy"])).rows
    headline = list(get_family("blocks").headline_metrics)
    assert rows[: 2 + len(headline)] == ["success_rate", "score", *headline]
    rest = rows[2 + len(headline) :]
    assert rest == sorted(rest) and set(rest) == set(load_run(runs["careful"]).summaries[0]["metrics"]) - set(headline)


def test_paired_differences_and_p_values_match_scipy(runs):
    comparison = compare_runs(loaded(runs["careful"], runs["sloppy"]))
    (paired,) = comparison.comparisons
    careful, sloppy = by_task(runs["careful"]), by_task(runs["sloppy"])
    assert paired.shared == len(careful.keys() & sloppy.keys()) == 12
    tied = 0
    for row in comparison.rows[1:]:  # with 12 pairs scipy's default p-value is exact, ties and zeros or not
        both = [(value(sloppy[k], row), value(careful[k], row)) for k in sorted(careful)]
        diffs = [b - a for b, a in both if b is not None and a is not None]  # pairs where both have a value
        result = paired.rows[row]
        assert result.diff.n == len(diffs) >= 10
        assert result.diff.mean == pytest.approx(np.mean(diffs))
        assert result.test == WILCOXON
        if all(d == 0 for d in diffs):
            assert (result.p_value, result.note) == (1.0, ALL_ZERO)
        else:
            assert (result.p_value, result.note) == (pytest.approx(wilcoxon(diffs).pvalue), None), row
            tied += len({abs(d) for d in diffs}) < len(diffs)
    assert tied > 0  # the rows include tied or zero differences, the case scipy answers one sign flip at a time
    assert paired.rows["score"].diff.mean < 0  # slips cost progress
    assert paired.rows["score"].diff.ci_high < 0


def test_success_is_compared_with_an_exact_mcnemar_test_on_the_discordant_pairs(runs):
    (paired,) = compare_runs(loaded(runs["careful"], runs["sloppy"])).comparisons
    careful, sloppy = by_task(runs["careful"]), by_task(runs["sloppy"])
    won = {k for k, s in careful.items() if s["outcome"] == "success"}
    won_sloppy = {k for k, s in sloppy.items() if s["outcome"] == "success"}
    only_careful, only_sloppy = len(won - won_sloppy), len(won_sloppy - won)
    assert only_careful > 0  # the runs do differ, so the test is a real one
    result = paired.rows["success_rate"]
    assert result.test == MCNEMAR
    assert result.p_value == pytest.approx(binomtest(only_sloppy, only_careful + only_sloppy, 0.5).pvalue)
    assert result.diff.mean == pytest.approx((only_sloppy - only_careful) / 12)
    (same,) = compare_runs(loaded(runs["careful"], runs["careful"])).comparisons
    assert (same.rows["success_rate"].p_value, same.rows["success_rate"].note) == (1.0, NO_DISCORDANT)


def test_runs_of_other_tasks_under_the_same_ids_are_not_paired(runs, capsys):
    (paired,) = compare_runs(loaded(runs["careful"], runs["other"])).comparisons
    shared_ids = by_task(runs["careful"]).keys() & by_task(runs["other"]).keys()
    assert shared_ids  # structure ids repeat across seeds: only the recorded tasks tell them apart
    assert (paired.shared, paired.different, paired.rows) == (0, len(shared_ids), {})
    status, out, _ = cli(capsys, str(runs["careful"]), str(runs["other"]))
    assert status == 0
    assert f"other vs careful (baseline): {NO_SHARED_TASKS} ({len(shared_ids)} with" in out
    document = json.loads(cli(capsys, str(runs["careful"]), str(runs["other"]), "--format", "json")[1])
    assert document["comparisons"][0]["note"].startswith(NO_SHARED_TASKS)
    assert document["comparisons"][0]["rows"] == {}


def test_a_run_of_two_lineups_gives_a_column_per_lineup(runs):
    comparison = compare_runs(loaded(runs["mixed"], runs["careful"]))
    names = [c.name for c in comparison.columns]
    assert names == ["mixed · builder=scripted:0", "mixed · builder=scripted:0.5", "careful"]
    episodes = load_run(runs["careful"]).episodes()
    assert comparison.columns[0].lineup == comparison.columns[2].lineup == lineup(episodes[0])
    apart = compare_runs(loaded(runs["careful"], runs["sloppy"]))
    assert comparison.columns[1].stats == apart.columns[1].stats
    lineups, again = comparison.comparisons
    assert lineups.rows["score"] == apart.comparisons[0].rows["score"]
    assert again.shared == 12 and again.rows["score"].note == ALL_ZERO


def test_json_and_csv_hold_the_same_numbers(runs, capsys):
    args = (str(runs["careful"]), str(runs["sloppy"]))
    document = json.loads(cli(capsys, *args, "--format", "json")[1])
    assert (document["format"], document["version"], document["world"]) == ("simlab.comparison", 1, "blocks")
    assert [c["name"] for c in document["columns"]] == ["careful", "sloppy"]
    assert list(document["columns"][0]["stats"]) == document["rows"]
    (comparison,) = document["comparisons"]
    assert (comparison["baseline"], comparison["column"], comparison["shared_tasks"]) == ("careful", "sloppy", 12)
    lines = list(csv.DictReader(io.StringIO(cli(capsys, *args, "--format", "csv")[1])))
    assert len(lines) == 3 * len(document["rows"])  # a summary line per column and row, a paired line per row
    summary = {(r["column"], r["metric"]): r for r in lines if r["section"] == "summary"}
    for column in document["columns"]:
        for row, stats in column["stats"].items():
            assert float(summary[(column["name"], row)]["mean"]) == stats["mean"]
    paired = {r["metric"]: r for r in lines if r["section"] == "paired"}
    for row, result in comparison["rows"].items():
        assert float(paired[row]["p_value"]) == result["p_value"]
        assert paired[row]["baseline"] == "careful"


def test_the_same_runs_print_the_same_bytes(runs, capsys):
    args = (str(runs["careful"]), str(runs["sloppy"]), str(runs["other"]))
    for fmt in ("table", "csv", "json"):
        first = cli(capsys, *args, "--format", fmt)
        assert first[0] == 0 and first[1]
        assert cli(capsys, *args, "--format", fmt) == first


def test_one_run_prints_its_report_as_before(runs, capsys):
    path = runs["careful"]
    report = build_report(load_run(path).summaries, seed=1)
    table = report.to_table(headline=list(get_family("blocks").headline_metrics))
    assert cli(capsys, str(path)) == (0, table + "\n", "")
    assert cli(capsys, str(path), "--format", "csv") == (0, report.to_csv(), "")
    document = json.loads(cli(capsys, str(path), "--format", "json")[1])
    document.pop("judges", None)  # what judges said of the run (none here), added beside the report
    assert document == report.to_json()


def test_the_table_shows_cells_with_cis_and_the_tests(runs, capsys):
    status, out, _ = cli(capsys, str(runs["careful"]), str(runs["sloppy"]))
    assert status == 0
    careful = compare_runs(loaded(runs["careful"], runs["sloppy"])).columns[0].stats["score"]
    score_line = next(line for line in out.splitlines() if line.startswith("score "))
    assert f"{careful.mean:.3f} [{careful.ci_low:.3f}, {careful.ci_high:.3f}]" in score_line
    assert "sloppy vs careful (baseline): 12 shared tasks (task, repeat)" in out
    assert MCNEMAR in out and WILCOXON in out


def test_runs_of_different_worlds_and_missing_folders_are_refused(runs, record_rooms, capsys, tmp_path):
    with pytest.raises(SimlabError, match="different worlds") as refused:
        loaded(runs["careful"], record_rooms)
    assert all(part in str(refused.value) for part in (str(runs["careful"]), str(record_rooms), "'blocks'", "'rooms'"))
    status, out, err = cli(capsys, str(runs["careful"]), str(record_rooms))
    assert (status, out) == (2, "") and "'rooms'" in err
    missing = tmp_path / "nothing-here"
    status, _, err = cli(capsys, str(runs["careful"]), str(missing))
    assert status == 2 and f"{missing}: expected a run folder" in err


def test_options_of_one_run_are_refused_for_several(runs, capsys):
    args = (str(runs["careful"]), str(runs["sloppy"]))
    status, out, err = cli(capsys, *args, "--format", "paper")
    assert (status, out) == (2, "") and "--format paper lays out one run" in err
    status, _, err = cli(capsys, *args, "--group-by", "group")
    assert status == 2 and "--group-by works on one run" in err


def test_runs_in_folders_of_the_same_name_are_told_apart(record, capsys):
    first, second = record("builder=scripted", turns=4), record("builder=random", turns=4)
    assert first.name == second.name == "run"
    names = [name for name, _ in loaded(first, second)]
    assert names == [f"{first.parent.name}/run", f"{second.parent.name}/run"]
    assert unique_names([first, second, first]) == [*names, f"{names[0]} (2)"]
    assert unique_names([first, first]) == ["run", "run (2)"]
    status, out, _ = cli(capsys, str(first), str(second))
    assert status == 0 and f"{names[1]} vs {names[0]} (baseline)" in out


def test_figures_of_two_runs_hold_each_runs_own_rows_under_prefixed_series(runs, tmp_path, capsys):
    for name in ("careful", "sloppy"):
        write_figures(load_run(runs[name]), tmp_path / name)
    status, _, err = cli(capsys, str(runs["careful"]), str(runs["sloppy"]), "--figures", str(tmp_path / "both"))
    assert status == 0 and f"wrote {tmp_path / 'both' / 'blocks_turn_outcomes.svg'}" in err
    for spec in get_family("blocks").figures:
        both = list(csv.reader((tmp_path / "both" / f"{spec.name}.csv").open(encoding="utf-8")))
        expected = [both[0]]
        for name in ("careful", "sloppy"):
            own = list(csv.reader((tmp_path / name / f"{spec.name}.csv").open(encoding="utf-8")))
            expected += [[f"{name} · {row[0]}", *row[1:]] for row in own[1:]]
        assert both == expected, spec.name
        assert (tmp_path / "both" / f"{spec.name}.png").stat().st_size > 0


def test_run_figures_of_one_run_are_the_figures_own(runs):
    family = get_family("blocks")
    episodes = load_run(runs["sloppy"]).episodes()
    by_id = sorted(episodes, key=lambda e: natural_key(e.episode_id))
    assert by_id != episodes  # the index lists repeat 0 of every task first
    figures = run_figures([("sloppy", list(reversed(episodes)))], family)
    assert [spec.name for spec, _ in figures] == [spec.name for spec in family.figures]
    for spec, data in figures:
        assert data == spec.make(by_id)
    with pytest.raises(ValueError, match="at least one run"):
        run_figures([], family)


def test_written_figures_of_several_runs_are_the_same_bytes_again(runs, tmp_path):
    named = loaded(runs["careful"], runs["sloppy"])
    first = write_run_figures(named, tmp_path / "a")
    second = write_run_figures(named, tmp_path / "b")
    for a, b in zip(first, second, strict=True):
        if a.suffix in (".csv", ".svg"):
            assert a.read_bytes() == b.read_bytes(), a.name
    data = {spec.name: d for spec, d in run_figures([(n, r.episodes()) for n, r in named], get_family("blocks"))}
    for name, figure in data.items():
        assert (tmp_path / "a" / f"{name}.csv").read_text(encoding="utf-8") == figure_csv(figure)


def test_a_metric_one_run_lacks_is_shown_empty_and_not_tested(runs, tmp_path, capsys):
    stripped = tmp_path / "stripped"
    shutil.copytree(runs["careful"], stripped)
    lines = [json.loads(line) for line in (stripped / INDEX_FILE).read_text(encoding="utf-8").splitlines()]
    for summary in lines:
        del summary["metrics"]["iou"]
    (stripped / INDEX_FILE).write_text("".join(json.dumps(s) + "\n" for s in lines), encoding="utf-8")
    comparison = compare_runs(loaded(stripped, runs["sloppy"]))
    assert comparison.columns[0].stats["iou"].n == 0 and comparison.columns[1].stats["iou"].n == 12
    iou = comparison.comparisons[0].rows["iou"]
    assert (iou.diff.n, iou.p_value, iou.test, iou.note) == (0, None, None, NO_PAIRS)
    out = cli(capsys, str(stripped), str(runs["sloppy"]))[1]
    assert [line.split()[:3] for line in out.splitlines() if line.startswith("iou ")] == [
        ["iou", "-", f"{comparison.columns[1].stats['iou'].mean:.3f}"],
        ["iou", "0", "-"],
    ]


def test_signed_rank_p_values_stay_exact_past_scipys_small_sample_limit():
    nonzero = [0.5, 0.5, -0.25, 1.0, 0.75, 0.5, 1.5, -0.5, 2.0, 0.25, 1.25, 0.75]  # ties, 12 of them
    diffs = [0.0] * 8 + nonzero  # 20 pairs: scipy alone would fall back to the normal approximation
    tied = signed_rank(mean_sem_ci(diffs), diffs)
    assert (tied.p_value, tied.note) == (wilcoxon(nonzero).pvalue, None)  # every sign flip, as scipy does to 13
    assert tied.p_value != wilcoxon(diffs).pvalue
    many = list(np.random.default_rng(0).normal(0.3, 1.0, 60))
    approximate = signed_rank(mean_sem_ci(many), many)
    assert (approximate.p_value, approximate.note) == (wilcoxon(many).pvalue, APPROXIMATE)
    single = signed_rank(mean_sem_ci([0.0, 0.0, 0.4]), [0.0, 0.0, 0.4])
    assert (single.p_value, single.note) == (1.0, None)
