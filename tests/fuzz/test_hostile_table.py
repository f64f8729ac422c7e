"""The hand-made hostile inputs found by trying SimLab as an attacker would (issue 9), each through the real CLI:
an answer of exit 0 or 2 with one clear line, nothing written outside the folder named, no input changed."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from simlab.core.recording import INDEX_FILE, RUN_FILE, load_run
from tests.fuzz.hostile import assert_handled, run_cli, write_json

REPO = Path(__file__).resolve().parents[2]
CRAFT_LOG = REPO / "tests" / "blocks" / "fixtures" / "craft_log_small.json"


# ---- material: a blocks run, a rooms question, a CRAFT log --------------------------------------------------


@pytest.fixture(scope="module")
def blocks_run(tmp_path_factory) -> Path:
    from simlab.cli import main

    out = tmp_path_factory.mktemp("material") / "run"
    assert main(["run", "--episodes", "2", "--turns", "3", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def structure(blocks_run) -> dict[str, Any]:
    return load_run(blocks_run).config["tasks"][0]


@pytest.fixture(scope="module")
def question(record_rooms) -> dict[str, Any]:
    return load_run(record_rooms).config["tasks"][0]


@pytest.fixture
def root(tmp_path) -> Path:
    """The folder holding every input of a case; the run it may write goes to ``root/out``."""
    return tmp_path


def structure_file(path: Path, structure: dict[str, Any]) -> Path:
    """A structure file as `generate blocks` writes it."""
    return write_json(path, {"format": "simlab.blocks.structure", "version": 1, **structure})


def _run_tasks(capsys, root: Path, tasks_file: Path, world: str = "blocks", *more: str) -> tuple[int, str]:
    out = root / "out"
    code, err = assert_handled(capsys, root, ["run", "--world", world, "--tasks", tasks_file, "--out", out, *more])
    if code == 2:
        assert not out.exists(), "a refused run must write nothing"
    return code, err


# ---- names that become paths ---------------------------------------------------------------------------------


@pytest.mark.parametrize("bad_id", ["../../../ESCAPED", "/tmp/ESCAPED", "a/b", ".hidden", "nul\x00l", "x" * 300, ""])
def test_a_structure_id_never_becomes_a_path_outside_the_run(capsys, root, structure, bad_id):
    tasks = structure_file(root / "tasks.json", {**structure, "id": bad_id})
    code, err = _run_tasks(capsys, root, tasks)
    assert code == 2 and ("task id" in err or "field 'id'" in err)
    assert not list(root.parent.rglob("ESCAPED*"))


def test_a_rooms_question_id_never_becomes_a_path(capsys, root, question):
    tasks = write_json(root / "q.json", {**question, "id": "../../ESCAPED"})
    code, err = _run_tasks(capsys, root, tasks, "rooms")
    assert code == 2 and "task id" in err


def test_a_craft_structure_id_never_becomes_a_path(capsys, root):
    log = json.loads(CRAFT_LOG.read_text("utf-8"))
    log["games"][0]["structure_id"] = "../../../ESCAPED"
    path = write_json(root / "log.json", log)
    code, err = assert_handled(capsys, root, ["import", "craft", path, "--out", root / "out"])
    assert code == 2 and "games[0].structure_id" in err and not (root / "out").exists()
    assert not list(root.parent.rglob("ESCAPED*"))


# ---- the user's own files --------------------------------------------------------------------------------------


def test_a_run_never_writes_into_a_folder_of_other_files(capsys, root):
    mine = root / "mine"
    (mine / "episodes").mkdir(parents=True)
    (mine / "episodes" / "structure_000-r0.json").write_text("my notes", encoding="utf-8")
    (mine / INDEX_FILE).write_text("my index\n", encoding="utf-8")
    code, err = assert_handled(capsys, root, ["run", "--episodes", "1", "--turns", "1", "--out", mine])
    assert code == 2 and "holds other files" in err


@pytest.mark.parametrize("target", ["episode", "run.json", "index", "other-episode"])
def test_an_export_never_overwrites_a_recording(capsys, root, blocks_run, target):
    run = shutil.copytree(blocks_run, root / "run")
    episode = next((run / "episodes").glob("*.json"))
    out = {
        "episode": episode,
        "run.json": run / RUN_FILE,
        "index": run / INDEX_FILE,
        "other-episode": sorted((run / "episodes").glob("*.json"))[-1],
    }[target]
    for export in ("html", "png"):
        code, err = assert_handled(capsys, root, ["replay", episode, "--export", export, "--out", out])
        assert code == 2 and "would overwrite a SimLab recording" in err


def test_an_export_into_a_folder_path_is_refused(capsys, root, blocks_run):
    run = shutil.copytree(blocks_run, root / "run")
    code, err = assert_handled(capsys, root, ["replay", run, "--export", "html", "--out", run / "episodes"])
    assert code == 2 and "is a folder" in err


# ---- a damaged index -------------------------------------------------------------------------------------------


def test_an_index_line_that_is_not_utf8_damages_only_itself(capsys, root, blocks_run):
    run = shutil.copytree(blocks_run, root / "run")
    with (run / INDEX_FILE).open("ab") as f:
        f.write(b'{"format": "simlab.index", "episode_id": "\xff\xfe"}\n')
    code, err = assert_handled(capsys, root, ["report", run])
    assert (code == 0 and "not UTF-8" in err) or "UTF-8" in err
    assert len(load_run(run).summaries) == 2
    out = root / "sheet.png"
    assert assert_handled(capsys, root, ["replay", run, "--export", "png", "--out", out], [out])[0] == 0
    assert assert_handled(capsys, root, ["run", "--resume", "--out", run], [run])[0] == 0


# ---- rooms question files ----------------------------------------------------------------------------------------


def _break(question: dict[str, Any], how: str) -> dict[str, Any]:
    q = copy.deepcopy(question)
    first = q["scene"]["objects"][0]
    changes = {
        "negative width": lambda: q["scene"].update(width=-5),
        "answer Z": lambda: q["question"].update(answer="Z"),
        "NaN position": lambda: first.update(position=[float("nan"), 1.0, 0.0]),
        "infinite size": lambda: first.update(size=[float("inf"), 1.0, 1.0]),
        "RGB 300": lambda: first.update(rgb=[300, 0, 0]),
        "size 1e6": lambda: first.update(size=[1e6, 1.0, 1.0]),
        "unknown category": lambda: first.update(category="spaceship"),
        "unknown object seen": lambda: q["views"]["answerer_visible"].append("ghost_9"),
        "question about another room": lambda: q["question"].update(scene_id="elsewhere"),
        "nine options": lambda: q["question"].update(options=["x"] * 9),
        "camera fov 0": lambda: q["views"]["answerer"].update(fov=0),
        "camera 10^6 pixels wide": lambda: q["views"]["helper"].update(width=10**6),
        "objects a dict": lambda: q["scene"].update(objects={"a": 1}),
        "two objects one id": lambda: q["scene"]["objects"].append(dict(first)),
        "scene missing": lambda: q.pop("scene"),
        "question a list": lambda: q.update(question=[1, 2]),
    }
    changes[how]()
    return q


@pytest.mark.parametrize(
    "how",
    [
        "negative width",
        "answer Z",
        "NaN position",
        "infinite size",
        "RGB 300",
        "size 1e6",
        "unknown category",
        "unknown object seen",
        "question about another room",
        "nine options",
        "camera fov 0",
        "camera 10^6 pixels wide",
        "objects a dict",
        "two objects one id",
        "scene missing",
        "question a list",
    ],
)
def test_a_broken_rooms_question_is_refused_before_the_run_starts(capsys, root, question, how):
    tasks = root / "q.json"
    tasks.write_text(json.dumps(_break(question, how), allow_nan=True), encoding="utf-8")
    code, err = _run_tasks(capsys, root, tasks, "rooms")
    assert code == 2, err


def test_a_rooms_benchmark_of_a_newer_version_is_refused(capsys, root, question):
    folder = root / "bench"
    write_json(folder / "questions" / f"{question['id']}.json", question)
    write_json(
        folder / "benchmark.json", {"format": "simlab.rooms.benchmark", "version": 2, "questions": [question["id"]]}
    )
    code, err = _run_tasks(capsys, root, folder, "rooms")
    assert code == 2 and "version 2 is newer" in err


# ---- unbounded work ----------------------------------------------------------------------------------------------


def test_an_event_at_turn_a_billion_is_refused_not_followed(capsys, root, blocks_run):
    episode_file = next((blocks_run / "episodes").glob("*.json"))
    obj = json.loads(episode_file.read_text("utf-8"))
    obj["events"].append({"kind": "message", "turn": 10**9, "role": "D1", "data": {"text": "late"}})
    path = write_json(root / "late.json", obj)
    code, err = assert_handled(capsys, root, ["replay", path, "--export", "html", "--out", root / "t.html"])
    assert code == 2 and "turn" in err and not (root / "t.html").exists()


def test_a_craft_turn_number_of_a_billion_is_noted_not_played(capsys, root):
    log = json.loads(CRAFT_LOG.read_text("utf-8"))
    log["games"][0]["turns"][0]["turn_number"] = 10**9
    path = write_json(root / "log.json", log)
    out = root / "out"
    code, _ = assert_handled(capsys, root, ["import", "craft", path, "--out", out], [out])
    assert code == 0
    assert max(e.turn for ep in load_run(out).episodes() for e in ep.events) < 100


@pytest.mark.parametrize(
    "flags",
    [
        ["--episodes", "1000000000"],
        ["--episodes", "1", "--turns", "1000000000"],
        ["--episodes", "1", "--repeats", "1000000000"],
        ["--world", "rooms", "--episodes", "1", "--set", "image_width=1000000"],
    ],
)
def test_counts_past_the_bounds_are_refused_at_once(capsys, root, flags):
    code, err = assert_handled(capsys, root, ["run", *flags, "--out", root / "out"])
    assert code == 2 and not (root / "out").exists() and ("expected" in err or "less than or equal" in err)


# ---- no work --------------------------------------------------------------------------------------------------


def test_no_work_is_an_error(capsys, root, structure):
    empty = write_json(
        root / "structures" / "structures.json", {"format": "simlab.blocks.structures", "version": 1, "structures": []}
    )
    assert _run_tasks(capsys, root, empty.parent)[0] == 2
    tasks = structure_file(root / "one.json", structure)
    code, err = _run_tasks(
        capsys, root, tasks, "blocks", "--group", "complex" if structure["tier"] != "complex" else "simple"
    )
    assert code == 2 and "no tasks of" in err


def test_two_tasks_with_one_id_are_refused(capsys, root, blocks_run):
    task = load_run(blocks_run).config["tasks"][0]
    folder = root / "twins"
    structure_file(folder / f"{task['id']}.json", task)
    index = {"format": "simlab.blocks.structures", "version": 1, "structures": [task["id"], task["id"]]}
    write_json(folder / "structures.json", index)
    code, err = _run_tasks(capsys, root, folder)
    assert code == 2 and "names two tasks" in err


def test_the_app_without_a_display_says_how_to_get_one(capsys, root, monkeypatch):
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    code, err = assert_handled(capsys, root, ["gui"])
    assert code == 2 and "xvfb-run" in err


def test_a_command_that_cannot_be_parsed_says_so(capsys, root):
    code, _out, err = run_cli(capsys, ["run", "--concurrency", "many", "--out", root / "x"])
    assert code == 2 and "invalid int value" in err


@pytest.mark.parametrize(
    "flags",
    [["--agent", "builder=random"], ["--episodes", "9"], ["--set", "turns=2"], ["--world", "rooms"], ["--seed", "4"]],
)
def test_resume_refuses_options_that_would_change_the_run(capsys, root, blocks_run, flags):
    """They were silently ignored."""
    run = shutil.copytree(blocks_run, root / "run")
    code, err = assert_handled(capsys, root, ["run", "--resume", *flags, "--out", run])
    assert code == 2 and "would change it: " + flags[0] in err
    assert assert_handled(capsys, root, ["run", "--resume", "--concurrency", "2", "--out", run], [run])[0] == 0
