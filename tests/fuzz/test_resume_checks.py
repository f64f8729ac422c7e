"""``run --resume`` on a run folder that was changed since it was written: ``run.json`` edited past what a new
run's options allow, an index that lists what the plan does not hold or files that are gone, a folder where an
episode file goes, hard links. Each is refused with exit 2 naming the file before anything is written (the
folder stays exactly as it was, mtimes included); only SimLab's own temporary files are cleared."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from simlab.core.recording import EPISODES_DIR, INDEX_FILE, RUN_FILE
from simlab.core.writing import WriteRefused, open_for_writing, refuse_links
from tests.fuzz.hostile import recorded_run, run_cli
from tests.fuzz.test_writing_path import fingerprint, interrupted


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A blocks run of three episodes recorded through the command line."""
    return recorded_run(tmp_path_factory, "--world", "blocks", "--episodes", "3", "--turns", "3")


def edit_config(**changes: Any) -> Callable[[dict[str, Any]], None]:
    """An edit of run.json's ``config``: top-level values replaced."""
    return lambda obj: obj["config"].update(changes)


def edit_task(k: int, task: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda obj: obj["config"]["tasks"].__setitem__(k, task)


def edit_setting(name: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda obj: obj["config"]["settings"].__setitem__(name, value)


def edit_runtime(**runtime: Any) -> Callable[[dict[str, Any]], None]:
    return lambda obj: obj.__setitem__("runtime", runtime)


EDITS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    # (the edit, what the refusal says)
    "repeats 10**12": (edit_config(repeats=10**12), "--repeats"),
    "repeats 10**6": (edit_config(repeats=10**6), "--repeats"),
    "seed below 0": (edit_config(seed=-5), "--seed"),
    "a setting unknown": (edit_setting("interior_x", 1), "unknown blocks setting"),
    "turns 10**9": (edit_setting("turns", 10**9), "turns"),
    "a task cut to its id": (edit_task(1, {"id": "structure_001"}), "task 1"),
    "a task id that leaves the folder": (lambda obj: obj["config"]["tasks"][2].update(id="../../evil"), "task id"),
    "a role without an agent": (edit_config(agents={"builder": "scripted"}), "expected an agent for each role"),
    "an agent unknown": (edit_config(agents={"D1": "nope", "D2": "oracle", "D3": "oracle", "builder": "x"}), "agent"),
    "an imported run": (edit_config(imported_from={"tool": "CRAFT", "file": "log.json"}), "import from CRAFT"),
    "runtime timeout a word": (edit_runtime(concurrency=1, episode_timeout="abc"), "field runtime"),
    "runtime concurrency 10**6": (edit_runtime(concurrency=10**6), "field runtime"),
}


@pytest.mark.parametrize("edit", EDITS)
def test_resume_refuses_a_run_json_no_new_run_could_record_and_writes_nothing(finished, edit, tmp_path, capsys):
    run, _missing = interrupted(finished, tmp_path / "run")
    obj = json.loads((run / RUN_FILE).read_text("utf-8"))
    change, said = EDITS[edit]
    change(obj)
    (run / RUN_FILE).write_text(json.dumps(obj), "utf-8")
    before = fingerprint(run)
    code, _out, err = run_cli(capsys, ["run", "--out", run, "--resume"])
    assert code == 2, err
    assert f"{run / RUN_FILE}" in err and said in err, err
    assert fingerprint(run) == before  # run.json not rewritten, no lock file, no episode


def stray_line(run: Path) -> str:
    """A line (and its file) of an episode the plan does not hold, as another run's index would have."""
    line = json.loads((run / INDEX_FILE).read_text("utf-8").splitlines()[0])
    shutil.copy(run / line["file"], run / EPISODES_DIR / "zzz-r0.json")
    line.update(episode_id="zzz-r0", file=f"{EPISODES_DIR}/zzz-r0.json")
    with open(run / INDEX_FILE, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
    return "does not plan (zzz-r0)"


def episode_gone(run: Path) -> str:
    (run / EPISODES_DIR / "structure_000-r0.json").unlink()
    return "files are missing (episodes/structure_000-r0.json)"


def episode_cut_short(run: Path) -> str:
    path = run / EPISODES_DIR / "structure_001-r0.json"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])  # a copy that stopped half way
    return "files are cut short or are not episodes (episodes/structure_001-r0.json)"


def folder_for_a_file(run: Path) -> str:
    (run / EPISODES_DIR / "structure_002-r0.json").mkdir()  # the very file resuming writes
    return "expected an episode file"


def episodes_a_file(run: Path) -> str:
    shutil.rmtree(run / EPISODES_DIR)
    (run / EPISODES_DIR).write_text("", "utf-8")
    return "expected the folder of the run's episode files"


INDEX_DAMAGE = {
    "an index line of another run": stray_line,
    "an indexed episode file gone": episode_gone,
    "an indexed episode file cut short": episode_cut_short,
    "a folder where an episode file goes": folder_for_a_file,
    "episodes/ a file": episodes_a_file,
}


@pytest.mark.parametrize("damage", INDEX_DAMAGE)
def test_resume_refuses_an_index_that_would_call_episodes_done_that_are_not(finished, damage, tmp_path, capsys):
    run, _missing = interrupted(finished, tmp_path / "run")
    said = INDEX_DAMAGE[damage](run)
    before = fingerprint(run)
    code, _out, err = run_cli(capsys, ["run", "--out", run, "--resume"])
    assert code == 2 and said in err, err
    assert fingerprint(run) == before


def test_resume_clears_simlab_temporary_files_only(finished, tmp_path, capsys):
    run, missing = interrupted(finished, tmp_path / "run")
    stale = run / EPISODES_DIR / f".{missing}.json.0123abcd.tmp"  # what a killed writer leaves
    stale.write_text("{half", "utf-8")
    mine = run / ".notes.tmp"  # a user's file that merely ends like one
    mine.write_text("the user's own notes\n", "utf-8")
    code, _out, err = run_cli(capsys, ["run", "--out", run, "--resume"])
    assert code == 0, err
    assert not stale.exists() and mine.read_text("utf-8") == "the user's own notes\n"
    assert (run / EPISODES_DIR / f"{missing}.json").is_file() and not (run / ".lock").exists()


def test_resume_refuses_an_index_with_a_hard_link_outside(finished, tmp_path, capsys):
    run, _missing = interrupted(finished, tmp_path / "run")
    victim = tmp_path / "victim.jsonl"
    os.link(run / INDEX_FILE, victim)
    before = victim.read_bytes()
    code, _out, err = run_cli(capsys, ["run", "--out", run, "--resume"])
    assert code == 2 and f"{run / INDEX_FILE} has 1 other name(s) (hard links)" in err, err
    assert victim.read_bytes() == before


def test_appending_refuses_hard_links_and_files_that_are_not_regular(tmp_path):
    folder = tmp_path / "judgments"
    folder.mkdir()
    (folder / "a.jsonl").write_text("", "utf-8")
    os.link(folder / "a.jsonl", tmp_path / "mine.jsonl")
    with pytest.raises(WriteRefused, match="hard links"):
        refuse_links(tmp_path, ["judgments"])  # checked before a judge writes any file of the folder
    with pytest.raises(WriteRefused, match="hard links"):
        open_for_writing(folder, "a.jsonl")
    os.mkfifo(folder / "b.jsonl")  # opening a FIFO to write would wait for a reader forever
    with pytest.raises(WriteRefused, match="expected a regular file"):
        open_for_writing(folder, "b.jsonl")
    (folder / "a.jsonl").unlink()
    with open_for_writing(folder, "a.jsonl") as f:  # one name again: appended as ever
        f.write(b"{}\n")
    assert (folder / "a.jsonl").read_bytes() == b"{}\n"


def test_resume_with_the_options_of_a_group_the_run_lacks_names_the_option(finished, tmp_path, capsys):
    run, _missing = interrupted(finished, tmp_path / "run")
    argv = ["run", "--world", "blocks", "--episodes", "3", "--turns", "3", "--out", run, "--group", "simple"]
    code, _out, err = run_cli(capsys, [*argv, "--resume"])
    assert code == 2 and "--group simple: the recorded run has no task of it" in err, err
