"""Digit runs Python's ``int()`` refuses or misreads, and inputs past a run's bounds, through the real CLI (the
self-attack of issue 26): a CRAFT layer written '²' or with 5,000 digits, a 5,000-digit group or task id, an
index past the most episodes a run holds, thousands of unreadable index lines. Each is read or refused with
one clear line, never an internal error."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from simlab.core import recording
from simlab.core.recording import INDEX_FILE, RUN_FILE
from tests.fuzz.hostile import assert_handled

REPO = Path(__file__).resolve().parents[2]
CRAFT_STRUCTURES = REPO / "assets" / "reference" / "craft" / "structures_dataset_20.json"
DIGIT_RUNS = {"superscript two": "\u00b2", "arabic-indic three": "\u0663", "5,000 digits": "7" * 5_000}


@pytest.fixture
def small_run(record) -> Path:
    """A recorded blocks run of three episodes (shared by the session; copied before it is spoiled)."""
    return record(episodes=3, turns=2)


def _copy_run(small_run: Path, root: Path) -> Path:
    run = root / "run"
    run.mkdir()
    for name in (RUN_FILE, INDEX_FILE):
        (run / name).write_bytes((small_run / name).read_bytes())
    (run / "episodes").mkdir()
    for episode in (small_run / "episodes").iterdir():
        (run / "episodes" / episode.name).write_bytes(episode.read_bytes())
    return run


def _edit_index(run: Path, edit: Any) -> None:
    lines = [json.loads(line) for line in (run / INDEX_FILE).read_text(encoding="utf-8").splitlines()]
    (run / INDEX_FILE).write_text("".join(json.dumps(edit(obj)) + "\n" for obj in lines), encoding="utf-8")


@pytest.mark.parametrize("layer", list(DIGIT_RUNS.values()), ids=list(DIGIT_RUNS))
def test_a_craft_layer_that_is_not_a_plain_number_is_refused_by_name(tmp_path, capsys, layer):
    data = json.loads(CRAFT_STRUCTURES.read_text(encoding="utf-8"))[:1]
    data[0]["spans"] = {layer: [["(0,0)", "(0,1)"]]}
    tasks = tmp_path / "craft.json"
    tasks.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["run", "--world", "blocks", "--tasks", tasks, "--out", out]
    _, err = assert_handled(capsys, tmp_path, argv, codes=(2,))
    assert "spans" in err and "expected a layer number" in err and not out.exists()


@pytest.mark.parametrize("group", list(DIGIT_RUNS.values()), ids=list(DIGIT_RUNS))
def test_a_group_of_any_digits_is_reported(small_run, tmp_path, capsys, group):
    run = _copy_run(small_run, tmp_path)
    _edit_index(run, lambda obj: {**obj, "group": group})
    assert_handled(capsys, tmp_path, ["report", run, "--group-by", "group", "--format", "json"], codes=(0,))


def test_a_task_id_of_thousands_of_digits_resumes_with_reference_personas(small_run, tmp_path, capsys):
    run = _copy_run(small_run, tmp_path)
    recorded = json.loads((run / RUN_FILE).read_text(encoding="utf-8"))
    recorded["config"]["settings"]["personas"] = "reference"
    recorded["config"]["tasks"][0]["id"] = "s" + "1" * 5_000
    (run / RUN_FILE).write_text(json.dumps(recorded), encoding="utf-8")
    (run / INDEX_FILE).write_text("", encoding="utf-8")
    assert_handled(capsys, tmp_path, ["run", "--out", run, "--resume"], allowed_writes=[run])


def test_an_index_past_the_most_episodes_a_run_holds_is_read_up_to_it(small_run, tmp_path, monkeypatch):
    monkeypatch.setattr(recording, "MAX_RUN_EPISODES", 2)
    run = _copy_run(small_run, tmp_path)
    loaded = recording.load_run(run)
    assert len(loaded.summaries) == 2
    assert loaded.problems == [f"{run / INDEX_FILE}, line 3: a run holds at most 2 episodes; this line and the rest "
                               "of the index were not read"]  # fmt: skip


def test_unreadable_index_lines_are_named_then_counted(small_run, tmp_path, monkeypatch):
    monkeypatch.setattr(recording, "MAX_PROBLEMS", 2)
    run = _copy_run(small_run, tmp_path)
    with (run / INDEX_FILE).open("a", encoding="utf-8") as index:
        index.write("not json\n" * 5)
    loaded = recording.load_run(run)
    assert len(loaded.summaries) == 3 and len(loaded.problems) == 3
    assert "line 4" in loaded.problems[0] and "line 5" in loaded.problems[1]
    assert loaded.problems[2] == f"{run / INDEX_FILE}: 3 more unreadable lines" and loaded.problem_count == 5


CRAFT_LOG = REPO / "tests" / "blocks" / "fixtures" / "craft_log_small.json"


@pytest.mark.parametrize(
    ("place", "value"),
    [
        (("experiment_info", "max_turns"), math.nan),  # the reference writes NaN and Infinity; we record JSON
        (("experiment_info", "timestamp"), math.inf),
        (("games", 0, "complexity"), math.nan),
        (("games", 0, "turns", 0, "builder_followed_oracle"), math.inf),
        (("games", 0, "turns", 0, "structure_before", "(0,0)"), ["a", "b"]),  # codes too short to be blocks
    ],
)
def test_a_craft_log_with_odd_values_imports_with_them_noted_or_dropped(tmp_path, capsys, place, value):
    data = json.loads(CRAFT_LOG.read_text(encoding="utf-8"))
    parent = data
    for key in place[:-1]:
        parent = parent[key]
    parent[place[-1]] = value
    log = tmp_path / "log.json"
    log.write_text(json.dumps(data), encoding="utf-8")  # NaN and Infinity as the reference writes them
    out = tmp_path / "out"
    assert_handled(capsys, tmp_path, ["import", "craft", log, "--out", out], allowed_writes=[out], codes=(0,))
