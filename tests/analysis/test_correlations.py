"""CRAFT's table 7 for any run: features of each agent lineup (episode metrics, judge questions, words per
message) correlated with a target metric, checked against scipy on means computed here another way; and
table 8's turn-level form, every turn a unit."""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy import stats

from simlab.analysis.correlations import (
    WORDS_FEATURE,
    RunFeatures,
    correlations_table,
    feature_correlations,
    lineup_count,
    message_words,
    turn_correlations,
    turn_correlations_table,
)
from simlab.core.episode import Episode
from simlab.core.judging import JudgmentRecord
from simlab.core.recording import load_run
from simlab.runner.batch import RunConfig, run
from tests.analysis.test_judging import TEST_JUDGE

SKILLS = ("0.1", "0.4", "0.7", "0.95")
TARGET = "overall_progress"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Four blocks runs of the same tasks, each with a builder of another skill: four lineups."""
    out = []
    for skill in SKILLS:
        folder = tmp_path_factory.mktemp(f"skill{skill}") / "run"
        run(
            RunConfig("blocks", seed=2, episodes=3, agents=[f"builder=scripted:{skill}"], settings={"turns": 6}), folder
        )
        out.append(folder)
    return out


def judged(summaries, q1_yes: bool) -> list[JudgmentRecord]:
    """Two runs' answers per episode at turn 1: Q1 Yes (or No) twice, Q2 Yes then No (0.5 once combined)."""
    out = []
    for s in summaries:
        for number, q2 in enumerate(("Yes", "No")):
            labels = {"Q1": "Yes" if q1_yes else "No", "Q2": q2}
            values = {"Q1": 1.0 if q1_yes else 0.0, "Q2": 1.0 if q2 == "Yes" else 0.0}
            out.append(
                JudgmentRecord("test-judge", "m", s["episode_id"], 1, "", number, "sha", labels, {}, None, "", values)
            )
    return out


def mean(values):
    return sum(values) / len(values)


def test_features_correlate_with_the_target_across_lineups_as_scipy_says(runs):
    loaded = [load_run(r) for r in runs]
    features = []
    for k, recorded in enumerate(loaded):
        words = {e.episode_id: message_words(e) for e in recorded.episodes()}
        features.append(RunFeatures(recorded.summaries, judged(recorded.summaries, q1_yes=k >= 2), words))
    found = {c.feature: c for c in feature_correlations(features, TARGET, [TEST_JUDGE])}
    assert lineup_count(features) == 4

    target = [mean([s["metrics"][TARGET] for s in r.summaries]) for r in loaded]
    gap = [mean([s["metrics"]["remove_gap"] for s in r.summaries]) for r in loaded]
    r, p = stats.pearsonr(gap, target)
    rho, _ = stats.spearmanr(gap, target)
    assert found["remove_gap"].kind == "behavioural" and found["remove_gap"].n == 4
    assert found["remove_gap"].pearson_r == pytest.approx(r) and found["remove_gap"].pearson_p == pytest.approx(p)
    assert found["remove_gap"].spearman_rho == pytest.approx(rho)

    q1 = [0.0, 0.0, 1.0, 1.0]
    assert found["first (Q1)"].pearson_r == pytest.approx(stats.pearsonr(q1, target).statistic)
    overall = [mean([v, 0.5]) for v in q1]
    assert found["test-judge overall"].pearson_r == pytest.approx(stats.pearsonr(overall, target).statistic)
    assert found["second (Q2)"].pearson_r is None  # 0.5 for every lineup: nothing varies

    words = [mean([message_words(e) for e in r.episodes()]) for r in loaded]
    assert found[WORDS_FEATURE].kind == "surface"
    expected = stats.pearsonr(words, target).statistic if len(set(words)) > 1 else None
    assert found[WORDS_FEATURE].pearson_r == (pytest.approx(expected) if expected is not None else None)

    ordered = [abs(c.pearson_r) for c in found.values() if c.pearson_r is not None]
    assert list(found.values())[: len(ordered)] == [c for c in found.values() if c.pearson_r is not None]
    assert ordered == sorted(ordered, reverse=True)
    assert TARGET not in found


def test_fewer_than_three_lineups_give_no_coefficient_and_an_unknown_target_is_named(runs):
    two = [RunFeatures(load_run(r).summaries) for r in runs[:2]]
    assert all(c.pearson_r is None and c.n == 2 for c in feature_correlations(two, TARGET))
    with pytest.raises(ValueError, match=r"no episode has the metric 'progress'; metrics: .*overall_progress"):
        feature_correlations(two, "progress")


def test_the_table_marks_significance_like_the_paper(runs):
    features = [RunFeatures(load_run(r).summaries) for r in runs]
    correlations = feature_correlations(features, TARGET)
    text = correlations_table(correlations, TARGET, lineup_count(features))
    assert text.startswith(f"correlations with {TARGET} across 4 agent lineups")
    line = next(ln for ln in text.splitlines() if ln.startswith("overall_progress_t20"))
    assert "+1.000***" in line  # the same number under another name: a perfect correlation


def test_report_correlate_writes_the_figure_and_the_whole_table_holding_the_printed_numbers(runs, tmp_path, capsys):
    import csv

    from simlab.cli import main

    assert main(["report", *map(str, runs), "--correlate", TARGET, "--figures", str(tmp_path / "f")]) == 0
    printed = capsys.readouterr().out
    with (tmp_path / "f" / "feature_correlations_table.csv").open(encoding="utf-8") as f:
        table = {r["feature"]: r for r in csv.DictReader(f)}
    with (tmp_path / "f" / "feature_correlations.csv").open(encoding="utf-8") as f:
        bars = {(r["series"], r["x"]): float(r["y"]) for r in csv.DictReader(f)}
    gap = table["remove_gap"]
    assert gap["n"] == "4" and bars[("Pearson r", "remove_gap")] == float(gap["pearson_r"])
    assert bars[("Spearman rho", "remove_gap")] == float(gap["spearman_rho"])
    line = next(ln for ln in printed.splitlines() if ln.startswith("remove_gap ") and "behavioural" in ln)
    assert f"{float(gap['pearson_r']):+.3f}" in line
    assert (tmp_path / "f" / "feature_correlations.png").stat().st_size > 0


# ---- turn level (CRAFT table 8) ------------------------------------------------------------------------------


def turn_rows(episode: Episode) -> list[dict[str, float | None]]:
    """Per turn: the outcome, a feature rising with it, one falling with it (undefined on every third turn), and
    a constant: the relation each has with the outcome is known."""
    outcome = [float(t % 3 == 0) + 0.1 * t for t in range(episode.seed, episode.seed + 5)]
    return [{"outcome": y, "up": 2 * y + 1, "down": -y if k % 3 else None, "flat": 1.0} for k, y in enumerate(outcome)]


def test_turn_level_correlations_pool_every_turn_of_every_episode_as_scipy_says() -> None:
    episodes = [Episode(f"e{k}", "blocks", k, {}) for k in range(4)]
    found = turn_correlations(episodes, turn_rows, "outcome")
    assert (found.episodes, found.turns, found.with_outcome) == (4, 20, 20)
    by_name = {c.feature: c for c in found.correlations}
    ys = [row["outcome"] for e in episodes for row in turn_rows(e)]
    downs = [(row["down"], row["outcome"]) for e in episodes for row in turn_rows(e) if row["down"] is not None]
    assert by_name["up"].n == 20 and by_name["up"].spearman_rho == pytest.approx(1.0)
    assert by_name["down"].n == len(downs) == 12 and by_name["down"].spearman_rho == pytest.approx(-1.0)
    expected = stats.pearsonr([2 * y + 1 for y in ys], ys)
    assert by_name["up"].pearson_r == pytest.approx(expected.statistic) and by_name["up"].kind == "turn"
    assert by_name["flat"].spearman_rho is None  # constant: no coefficient
    assert [c.feature for c in found.correlations] == ["down", "up", "flat"]  # |rho| ties by name, none last
    text = turn_correlations_table(found)
    assert text.startswith("turn-level correlations with outcome across the 20 turns that have it")


def test_turn_level_correlations_name_the_values_when_the_outcome_is_unknown() -> None:
    with pytest.raises(ValueError, match=r"no turn has a value for 'nope'; per-turn values: outcome, up, down, flat"):
        turn_correlations([Episode("e", "blocks", 0, {})], turn_rows, "nope")


def test_report_turn_unit_says_when_the_world_declares_no_per_turn_values(tmp_path: Path, capsys) -> None:
    from simlab.cli import main

    folder = tmp_path / "puzzles"
    run(RunConfig("puzzles", seed=0, episodes=1, settings={"turns": 2}), folder)
    assert main(["report", str(folder), "--correlate", "sr", "--unit", "turn"]) != 0
    assert "world 'puzzles' declares no per-turn values" in capsys.readouterr().err
    assert main(["report", str(folder), "--unit", "turn"]) != 0
    assert "--unit says what --correlate correlates over" in capsys.readouterr().err
