"""CRAFT table 1's Fail and REMOVE columns (and table 8's oracle remove rate) in the episode summary and the
report: Fail read at the paper's turn 20, REMOVE over all turns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simlab.analysis.report import build_report
from simlab.cli import main
from simlab.core.recording import load_run
from simlab.runner.batch import RunConfig, run
from simlab.worlds.blocks.craft_run import import_craft_run
from simlab.worlds.blocks.metrics import oracle_remove_rate, remove_gap, remove_rate
from simlab.worlds.blocks.model import Move, MoveError
from simlab.worlds.blocks.world import summarize, turn_record

PLACE = Move.place("ys", (1, 0), 0)
REMOVE = Move.remove((2, 2), 1)
CLARIFY = Move.clarify("which layer?")
ORACLE = [PLACE, Move.place("gs", (0, 0), 0), REMOVE, Move.place("rs", (0, 2), 0)]  # a quarter removes
FINAL = {"iou": 0.5, "completion": 0.5, "position_accuracy": 0.5, "overall_progress": 0.5, "distance": 0.5}
NEW = ("fail", "remove_rate", "oracle_remove_rate")


def summary(turns: list[tuple[Move | None, bool]], oracle: list[Move] = ORACLE) -> dict[str, float | None]:
    """The summary metrics of an episode whose builder made ``turns`` (move, executed), turn 1 first."""
    log = [
        turn_record(t, move, ok, None if ok else MoveError.WRONG_LAYER, oracle, t / 100)
        for t, (move, ok) in enumerate(turns, start=1)
    ]
    metrics: dict[str, float | None] = summarize({"id": "s"}, log, FINAL, False)["metrics"]
    return metrics


def placed(n: int) -> list[tuple[Move | None, bool]]:
    return [(PLACE, True)] * n


def test_fail_is_the_turn_20_move_rejected_executed_or_not_attempted() -> None:
    assert summary([*placed(19), (PLACE, False)])["fail"] == 1.0
    assert summary(placed(20))["fail"] == 0.0
    assert summary([*placed(19), (None, False)])["fail"] is None  # no move recorded: excluded
    assert summary([*placed(19), (CLARIFY, True)])["fail"] is None  # a question, not a move attempt


def test_fail_reads_turn_20_under_a_longer_budget_and_the_last_turn_of_a_shorter_game() -> None:
    longer = summary([*placed(19), (PLACE, False), *placed(5)])
    assert longer["fail"] == 1.0 and longer["overall_progress_t20"] == 0.2  # both read at turn 20
    assert summary([*placed(11), (REMOVE, False)])["fail"] == 1.0
    assert summary(placed(12))["fail"] == 0.0
    assert summary([])["fail"] is None and summary([])["overall_progress_t20"] == 0.5


def test_remove_rate_is_over_all_turns_and_the_gap_is_it_minus_the_oracle_rate() -> None:
    turns: list[tuple[Move | None, bool]] = [(REMOVE, True), (PLACE, True), (CLARIFY, True), (None, False)]
    metrics = summary(turns)
    assert metrics["remove_rate"] == 0.25  # clarifications and missing moves are non-removes
    assert metrics["oracle_remove_rate"] == 0.25
    assert metrics["remove_gap"] == metrics["remove_rate"] - metrics["oracle_remove_rate"]
    actions = [m.action if m is not None else None for m, _ in turns]
    assert remove_rate(actions) == 0.25 and remove_rate([]) == 0.0
    assert oracle_remove_rate([ORACLE, [], [REMOVE]]) == pytest.approx((0.25 + 1.0) / 2)  # turns with candidates
    assert remove_gap([(a, ORACLE) for a in actions]) == 0.0


def test_the_report_counts_fail_only_where_it_is_defined_and_copes_with_old_summaries() -> None:
    rows = [
        {"episode_id": "a", "metrics": summary([*placed(19), (PLACE, False)])},
        {"episode_id": "b", "metrics": summary(placed(20))},
        {"episode_id": "c", "metrics": summary([*placed(19), (None, False)])},
        {"episode_id": "old", "metrics": {"overall_progress": 0.3}},  # recorded before these columns existed
    ]
    report = build_report(rows)
    fail = report.aggregate.metrics["fail"]
    assert (fail.n, fail.mean) == (2, 0.5)
    assert report.aggregate.metrics["remove_rate"].n == 3
    out = report.to_json()
    assert out["episodes"][2]["metrics"]["fail"] is None
    assert all(name in out["aggregate"]["metrics"] for name in NEW)
    assert all(f"\n{name} " in report.to_table() for name in NEW)


@pytest.fixture(scope="module")
def live_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("columns") / "run"
    run(RunConfig("blocks", seed=3, episodes=2, agents=["builder=scripted:0.5"], settings={"turns": 6}), folder)
    return folder


def test_report_prints_and_keys_the_new_columns_for_a_live_run(live_run: Path, capsys) -> None:
    assert main(["report", str(live_run)]) == 0
    text = capsys.readouterr().out
    assert all(any(line.startswith(f"{name} ") for line in text.splitlines()) for name in NEW)
    assert main(["report", str(live_run), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert all(out["aggregate"]["metrics"][name]["n"] >= 1 for name in ("remove_rate", "oracle_remove_rate"))
    assert all(name in episode["metrics"] for episode in out["episodes"] for name in NEW)


def test_imported_craft_games_carry_the_columns(tmp_path: Path) -> None:
    import_craft_run(Path(__file__).parent / "fixtures" / "craft_log_small.json", tmp_path / "run")
    metrics = {s["task_id"]: s["metrics"] for s in load_run(tmp_path / "run").summaries}
    # fixture_001: six turns, the last a remove the engine executed (its README); fixture_002: no move
    assert metrics["fixture_001"]["fail"] == 0.0
    assert metrics["fixture_001"]["remove_rate"] == pytest.approx(1 / 6)
    assert metrics["fixture_002"]["fail"] is None


def test_the_paper_layout_lists_table_1s_columns_in_its_order(live_run: Path, capsys) -> None:
    """Prog., Comp., Pos. Acc., Dist. at turn 20, Fail, REMOVE, Gap: the rows of ``report --format paper``."""
    assert main(["report", str(live_run), "--format", "paper"]) == 0
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines()[2:] if line.strip()]
    table_1 = ["overall_progress_t20", "completion", "position_accuracy", "distance", "fail", "remove_rate"]
    assert rows[:7] == [*table_1, "remove_gap"]
