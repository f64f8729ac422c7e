"""``python main.py judge``: the papers' judges by name against the local server, a rerun that costs nothing,
the report that includes them, and clear errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from simlab.cli import main
from simlab.core.judging import JUDGMENTS_DIR, load_run_judgments
from simlab.testing.openai_server import FakeOpenAIServer, last_user_text

KEY = "sk-cli-judge-secret-42"


def craft_judge(body: dict) -> str:
    """Answers every CRAFT question asked, Yes to odd question numbers and No to even ones."""
    text = last_user_text(body)
    codes = [line.split(":")[0] for line in text.splitlines() if line[:2] in ("SG", "MM", "PS") and ":" in line]
    return "\n".join(f"{c}: {'Yes' if int(c[2:]) % 2 else 'No'} | because" for c in codes)


@pytest.fixture
def judged_run(record, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    source = record("D1=oracle", "D2=oracle", "D3=oracle", "builder=scripted:0.5", episodes=2, turns=3)
    shutil.copytree(source, tmp_path / "run")
    return tmp_path / "run"


def test_judge_by_name_then_rerun_asks_nothing_and_report_includes_the_verdicts(judged_run, capsys):
    with FakeOpenAIServer(craft_judge) as server:
        args = ["judge", str(judged_run), "--judge", "craft-ps", "--model", "judge-m", "--base-url", server.base_url]
        assert main(args) == 0
        first = capsys.readouterr().out
        asked = server.stats.served
        assert main(args) == 0
        again = capsys.readouterr().out
        assert server.stats.served == asked > 0
    assert f"asked {asked}, already answered 0, unreadable replies 0" in first
    assert f"asked 0, already answered {asked}" in again
    assert "judge craft-ps (Pragmatic sufficiency (PS)" in first
    records, _ = load_run_judgments(judged_run)
    assert len(records) == asked and all(r.labels["PS1"] == "Yes" and r.labels["PS2"] == "No" for r in records)
    assert not any(KEY in p.read_text(encoding="utf-8") for p in (judged_run / JUDGMENTS_DIR).iterdir())

    assert main(["report", str(judged_run)]) == 0
    report = capsys.readouterr().out
    assert "judge.craft-ps" in report  # the per-episode metric, in the aggregate table
    assert "judge craft-ps" in report and "PS1" in report


def test_a_judge_of_another_world_or_an_unknown_one_is_refused_with_the_known_ones(judged_run, capsys):
    assert main(["judge", str(judged_run), "--judge", "cosmic-repair", "--model", "m"]) == 2
    assert "judges 'rooms' episodes, but this run is a 'blocks' run" in capsys.readouterr().err
    assert main(["judge", str(judged_run), "--judge", "nope", "--model", "m"]) == 2
    assert "known: craft-sg, craft-mm, craft-ps" in capsys.readouterr().err


def test_an_endpoint_that_refuses_the_key_stops_with_status_3_and_says_to_rerun(judged_run, capsys):
    from simlab.testing.openai_server import FaultPlan

    with FakeOpenAIServer(craft_judge, faults=FaultPlan(rates={"401": 1.0})) as server:
        code = main(["judge", str(judged_run), "--judge", "all", "--model", "m", "--base-url", server.base_url])
    err = capsys.readouterr().err
    assert code == 3 and "HTTP 401" in err and "run the same command again" in err and KEY not in err


def test_report_draws_a_figure_per_judge_and_correlates_features_with_a_metric(judged_run, capsys, tmp_path):
    import csv

    with FakeOpenAIServer(craft_judge) as server:
        assert (
            main(["judge", str(judged_run), "--judge", "craft-ps", "--model", "m", "--base-url", server.base_url]) == 0
        )
    capsys.readouterr()
    figures = tmp_path / "figures"
    assert main(["report", str(judged_run), "--figures", str(figures), "--correlate", "overall_progress"]) == 0
    out = capsys.readouterr().out
    assert "correlations with overall_progress across 1 agent lineups" in out
    with (figures / "judge_craft-ps.csv").open(encoding="utf-8") as f:
        rows = {r["x"]: float(r["y"]) for r in csv.DictReader(f)}
    assert rows["PS1"] == 1.0 and rows["PS2"] == 0.0 and rows["overall"] == 0.5  # odd questions Yes, even No
    assert (figures / "judge_craft-ps.png").stat().st_size > 0
    assert main(["report", str(judged_run), "--correlate", "nothing_like_this"]) == 2
    assert "--correlate: no episode has the metric 'nothing_like_this'" in capsys.readouterr().err
