"""A run as data (issue 27): report --where, export --format parquet, Run.to_pandas()."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import simlab
from simlab.cli import main
from simlab.core.recording import load_episode, load_run
from simlab.runner.demo import DEMO_RUN


def _run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_report_where_keeps_only_the_matching_episodes_and_says_how_many(capsys):
    summaries = load_run(DEMO_RUN).summaries
    failures = [s for s in summaries if s["outcome"] == "failure"]
    code, out, err = _run(capsys, "report", DEMO_RUN, "--where", 'outcome == "failure"', "--format", "json")
    assert code == 0
    report = json.loads(out)
    assert [e["episode_id"] for e in report["episodes"]] == sorted(s["episode_id"] for s in failures)
    assert report["aggregate"]["n"] == len(failures) < len(summaries)
    assert f"--where kept {len(failures)} of {len(summaries)} episodes" in err


def test_report_where_over_several_runs_filters_each(capsys, tmp_path):
    other = shutil.copytree(DEMO_RUN, tmp_path / "other")
    code, _, err = _run(capsys, "report", DEMO_RUN, other, "--where", "score >= 1")
    assert code == 0 and err.count("--where kept 2 of 6 episodes") == 2


def test_report_where_with_a_bad_expression_exits_2_naming_the_column(capsys):
    code, out, err = _run(capsys, "report", DEMO_RUN, "--where", "score < 1 and __import__('os')")
    assert code == 2 and out == ""
    assert "--where" in err and "column 15" in err and "a call" in err


def test_export_parquet_round_trips_summaries_and_events(capsys, tmp_path):
    out = tmp_path / "tables"
    code, _, err = _run(capsys, "export", DEMO_RUN, "--format", "parquet", "--out", out)
    assert code == 0 and "episodes.parquet" in err
    run = load_run(DEMO_RUN)
    episodes = pq.read_table(out / "episodes.parquet").to_pylist()
    assert [e["episode_id"] for e in episodes] == [s["episode_id"] for s in run.summaries]
    for row, summary in zip(episodes, run.summaries, strict=True):
        assert row["score"] == summary["score"] and row["turns"] == summary["turns"]
        assert row["outcome"] == summary["outcome"] and row["agents.builder"] == summary["agents"]["builder"]
        assert {k: row[f"metrics.{k}"] for k in summary["metrics"]} == summary["metrics"]
    events = pq.read_table(out / "events.parquet").to_pylist()
    first = load_episode(run.episode_path(run.summaries[0]))
    mine = [e for e in events if e["episode_id"] == first.episode_id]
    assert [(e["index"], e["turn"], e["role"], e["kind"]) for e in mine] == [
        (k, ev.turn, ev.role, ev.kind) for k, ev in enumerate(first.events)
    ]
    assert [json.loads(e["data"]) for e in mine] == [dict(ev.data) for ev in first.events]
    messages = [e for e in mine if e["kind"] == "message"]
    assert messages and all(e["text"] == json.loads(e["data"])["text"] for e in messages)
    assert all(e["text"] is None for e in mine if e["kind"] == "state")


def test_export_where_exports_only_the_kept_episodes(capsys, tmp_path):
    code, _, _ = _run(capsys, "export", DEMO_RUN, "--out", tmp_path, "--where", "errors == 0")
    assert code == 0
    kept = {s["episode_id"] for s in load_run(DEMO_RUN).summaries if s["errors"] == 0}
    assert {r["episode_id"] for r in pq.read_table(tmp_path / "episodes.parquet").to_pylist()} == kept
    assert {r["episode_id"] for r in pq.read_table(tmp_path / "events.parquet").to_pylist()} == kept


@pytest.mark.parametrize("where", ["inside the run", "a link to the run", "system"])
def test_export_refuses_a_run_folder_links_and_system_folders(capsys, tmp_path, where):
    run = shutil.copytree(DEMO_RUN, tmp_path / "run")
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    if where == "inside the run":
        out = run / "tables"
    elif where == "a link to the run":
        out = tmp_path / "link"
        os.symlink(run, out)
    else:
        out = Path("/etc/simlab-tables")
    code, _, err = _run(capsys, "export", run, "--out", out)
    assert code == 2 and err.startswith("error: export --out")
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == before and not Path("/etc/simlab-tables").exists()


def test_to_pandas_is_the_summaries_as_a_data_frame():
    run = simlab.load_run(DEMO_RUN)
    frame = run.to_pandas()
    assert list(frame["episode_id"]) == [s["episode_id"] for s in run.summaries]
    assert list(frame["metrics.iou"]) == [s["metrics"]["iou"] for s in run.summaries]
    assert str(frame["turns"].dtype) == "Int64" and str(frame["outcome"].dtype) == "category"
    failed = frame[frame["outcome"] == "failure"]
    assert len(failed) == sum(s["outcome"] == "failure" for s in run.summaries)


def test_integer_fields_stay_integers_in_the_file(capsys, tmp_path):
    assert _run(capsys, "export", DEMO_RUN, "--out", tmp_path)[0] == 0
    schema = pq.read_schema(tmp_path / "episodes.parquet")
    assert str(schema.field("turns").type) == "int64" and str(schema.field("score").type) == "double"


def test_a_table_sorts_with_missing_values_last_and_takes_rows():
    from simlab.core.run_table import RunTable

    table = RunTable.from_summaries([{"x": 2.0, "t": "b"}, {"t": "a"}, {"x": 1.0}, {"x": 3.0, "t": "c"}])
    assert table.argsort("x").tolist() == [2, 0, 3, 1]
    assert table.argsort("x", descending=True).tolist() == [3, 0, 2, 1]
    assert table.argsort("t").tolist() == [1, 0, 3, 2]
    picked = table.take(table.argsort("x")[:2])
    assert picked.n == 2 and picked.columns["t"].values() == [None, "b"]
