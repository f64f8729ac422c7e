import json
import math
import os

import pytest

from simlab.core import events as ev
from simlab.core.episode import Episode
from simlab.core.errors import FormatError
from simlab.core.recording import (
    EPISODES_DIR,
    INDEX_FILE,
    RUN_FILE,
    RunWriter,
    load_episode,
    load_run,
    write_json_atomic,
)

CONFIG = {"world": "blocks", "seed": 3, "repeats": 1, "agents": {"builder": "scripted"}, "settings": {}, "tasks": []}


def _episode(k: int, score: float = 0.5) -> Episode:
    return Episode(
        episode_id=f"ep{k}",
        world="blocks",
        seed=100 + k,
        task={"id": f"s{k}"},
        events=[ev.state(0, {"board": k}), ev.score(0, {"p": 0.0}), ev.message(1, "D1", f"hello {k}")],
        summary={
            "world": "blocks",
            "task_id": f"s{k}",
            "outcome": "failure",
            "score": score,
            "turns": 1,
            "errors": 0,
            "metrics": {"p": score},
        },
    )


def _index_lines(run_dir):
    return (run_dir / INDEX_FILE).read_text(encoding="utf-8").splitlines()


@pytest.fixture
def run3(tmp_path):
    run_dir = tmp_path / "run"
    writer = RunWriter(run_dir, CONFIG)
    for k in range(3):
        writer.add(_episode(k, score=k / 4))
    return run_dir


def test_run_writer_and_load_run_round_trip(run3):
    run = load_run(run3)
    assert run.config == CONFIG
    assert run.problems == []
    assert [s["episode_id"] for s in run.summaries] == ["ep0", "ep1", "ep2"]
    assert [s["score"] for s in run.summaries] == [0.0, 0.25, 0.5]
    assert [s["file"] for s in run.summaries] == [f"{EPISODES_DIR}/ep{k}.json" for k in range(3)]
    assert [e.to_json() for e in run.episodes()] == [_episode(k, k / 4).to_json() for k in range(3)]
    assert run.load_episode("ep1") == _episode(1, 0.25)


def test_a_new_run_writes_its_runtime_with_its_config_in_one_file(tmp_path):
    runtime = {"concurrency": 8, "episode_timeout": None}
    RunWriter(tmp_path / "run", CONFIG, runtime=runtime)
    text = (tmp_path / "run" / RUN_FILE).read_text(encoding="utf-8")
    assert json.loads(text) == {"format": "simlab.run", "version": 1, "config": CONFIG, "runtime": runtime}
    assert text.startswith('{\n  "format": "simlab.run"')  # indented, as every run.json before


def test_run_load_episode_unknown_id_raises_key_error(run3):
    with pytest.raises(KeyError, match="nope"):
        load_run(run3).load_episode("nope")


def test_index_line_is_written_after_the_episode_file(tmp_path):
    run_dir = tmp_path / "run"
    writer = RunWriter(run_dir, CONFIG)
    assert not (run_dir / INDEX_FILE).exists()
    for k in range(2):
        entry = writer.add(_episode(k))
        lines = _index_lines(run_dir)
        assert len(lines) == k + 1
        assert json.loads(lines[-1]) == entry
        assert (run_dir / entry["file"]).is_file()
        assert load_episode(run_dir / entry["file"]).episode_id == f"ep{k}"
    assert writer.done == {"ep0", "ep1"}


def test_truncated_last_index_line_is_a_problem_and_the_rest_loads(run3):
    whole = _index_lines(run3)[-1]
    with (run3 / INDEX_FILE).open("a", encoding="utf-8") as f:
        f.write(whole[: len(whole) // 2])
    run = load_run(run3)
    assert [s["episode_id"] for s in run.summaries] == ["ep0", "ep1", "ep2"]
    assert len(run.problems) == 1
    assert "line 4" in run.problems[0]
    assert len(run.episodes()) == 3


def test_resume_after_a_truncated_index_line_starts_a_fresh_line(run3):
    with (run3 / INDEX_FILE).open("a", encoding="utf-8") as f:
        f.write('{"format":"simlab.index","vers')
    writer = RunWriter(run3, {}, resume=True)
    assert writer.config == CONFIG
    assert writer.done == {"ep0", "ep1", "ep2"}
    writer.add(_episode(3))
    lines = _index_lines(run3)
    assert json.loads(lines[-1])["episode_id"] == "ep3"
    run = load_run(run3)
    assert [s["episode_id"] for s in run.summaries] == ["ep0", "ep1", "ep2", "ep3"]
    assert len(run.problems) == 1


def test_indexing_episodes_together_writes_the_lines_of_indexing_them_one_by_one(run3, tmp_path):
    with (run3 / INDEX_FILE).open("a", encoding="utf-8") as f:
        f.write('{"format":"simlab.index","vers')  # a line cut short: the lines that follow start clean
    together = tmp_path / "together"
    RunWriter(together, CONFIG)
    (together / INDEX_FILE).write_bytes((run3 / INDEX_FILE).read_bytes())
    one_by_one, at_once = RunWriter(run3, {}, resume=True), RunWriter(together, {}, resume=True)
    episodes = [_episode(k) for k in (5, 3, 4)]
    for episode in episodes:
        one_by_one.save(episode)
        at_once.save(episode)
    entries = [one_by_one.index(episode) for episode in episodes]
    assert at_once.index_all(episodes) == entries
    assert (together / INDEX_FILE).read_bytes() == (run3 / INDEX_FILE).read_bytes()
    assert at_once.done == one_by_one.done == {"ep0", "ep1", "ep2", "ep3", "ep4", "ep5"}
    assert [s["episode_id"] for s in load_run(together).summaries][-3:] == ["ep5", "ep3", "ep4"]


def test_duplicate_index_entry_keeps_the_later_one(run3):
    writer = RunWriter(run3, {}, resume=True)
    writer.add(_episode(1, score=0.9))
    run = load_run(run3)
    assert len(_index_lines(run3)) == 4
    assert [s["episode_id"] for s in run.summaries] == ["ep0", "ep1", "ep2"]
    assert run.summaries[1]["score"] == 0.9
    assert run.load_episode("ep1").summary["score"] == 0.9


def test_index_line_of_a_newer_version_is_a_problem_not_an_error(run3):
    with (run3 / INDEX_FILE).open("a", encoding="utf-8") as f:
        f.write(json.dumps({"format": "simlab.index", "version": 99, "episode_id": "x", "file": "x"}) + "\n")
    run = load_run(run3)
    assert len(run.summaries) == 3
    assert len(run.problems) == 1
    assert "newer" in run.problems[0]


def test_newer_episode_version_is_a_format_error_naming_file_and_version(tmp_path):
    path = tmp_path / "future.json"
    obj = _episode(0).to_json()
    obj["version"] = 7
    path.write_text(json.dumps(obj), encoding="utf-8")
    with pytest.raises(FormatError) as info:
        load_episode(path)
    message = str(info.value)
    assert str(path) in message
    assert "version" in message
    assert "newer" in message


def test_wrong_episode_format_is_a_format_error(tmp_path):
    path = tmp_path / "other.json"
    obj = _episode(0).to_json()
    obj["format"] = "simlab.run"
    path.write_text(json.dumps(obj), encoding="utf-8")
    with pytest.raises(FormatError, match=r"field 'format'.*simlab\.episode"):
        load_episode(path)


def test_episode_file_with_a_bad_field_is_a_format_error(tmp_path):
    path = tmp_path / "bad.json"
    obj = _episode(0).to_json()
    obj["seed"] = "x"
    path.write_text(json.dumps(obj), encoding="utf-8")
    with pytest.raises(FormatError, match="field 'seed'") as info:
        load_episode(path)
    assert info.value.path == str(path)


def test_malformed_json_is_a_format_error_naming_line_and_column(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n  "format": "simlab.episode",\n  "version": 1,,\n}', encoding="utf-8")
    with pytest.raises(FormatError) as info:
        load_episode(path)
    assert info.value.where == "line 3 column 16"
    assert str(path) in str(info.value)


def test_missing_run_json_is_a_format_error(tmp_path):
    (tmp_path / "notarun").mkdir()
    with pytest.raises(FormatError, match=RUN_FILE):
        load_run(tmp_path / "notarun")


def test_load_run_on_a_missing_folder_is_a_format_error(tmp_path):
    with pytest.raises(FormatError, match="run folder"):
        load_run(tmp_path / "absent")


def test_run_writer_refuses_an_existing_run_without_resume(run3):
    before = (run3 / RUN_FILE).read_bytes()
    with pytest.raises(FormatError, match="already holds a run"):
        RunWriter(run3, {"world": "other"})
    assert (run3 / RUN_FILE).read_bytes() == before


def test_write_json_atomic_replaces_and_leaves_no_temp_files(tmp_path):
    path = tmp_path / "sub" / "data.json"
    write_json_atomic(path, {"a": 1})
    write_json_atomic(path, {"b": [1, 2]}, indent=2)
    assert json.loads(path.read_text(encoding="utf-8")) == {"b": [1, 2]}
    assert os.listdir(path.parent) == ["data.json"]


def test_write_json_atomic_keeps_the_old_file_when_writing_fails(tmp_path):
    path = tmp_path / "data.json"
    write_json_atomic(path, {"ok": True})
    with pytest.raises(ValueError):
        write_json_atomic(path, {"bad": math.nan})
    with pytest.raises(TypeError):
        write_json_atomic(path, {"bad": object()})
    assert json.loads(path.read_text(encoding="utf-8")) == {"ok": True}
    assert os.listdir(tmp_path) == ["data.json"]


def test_nan_in_a_summary_raises_and_writes_no_partial_file(tmp_path):
    run_dir = tmp_path / "run"
    writer = RunWriter(run_dir, CONFIG)
    writer.add(_episode(0))
    with pytest.raises(ValueError):
        writer.add(_episode(1, score=math.nan))
    assert not (run_dir / EPISODES_DIR / "ep1.json").exists()
    assert len(_index_lines(run_dir)) == 1
    assert not [p for p in (run_dir / EPISODES_DIR).iterdir() if p.name != "ep0.json"]
    assert load_run(run_dir).problems == []
