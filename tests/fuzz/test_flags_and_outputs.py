"""Flags and outputs a hostile or careless command line gives: an empty path or one holding a newline, a file
where a folder goes, two values for one setting, a --group-by no episode has, an api_key_env that is not a
variable's name, a temporary folder set to a system folder, a build refused before it began, worker
processes whose parent is killed. Each is refused with exit 2 naming the flag, or handled, leaving nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import simlab.core.writing as writing
from simlab.core.writing import WriteRefused, check_output_folder
from tests.fuzz.hostile import recorded_run, run_cli


@pytest.fixture(scope="module")
def blocks_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return recorded_run(tmp_path_factory, "--world", "blocks", "--episodes", "2", "--turns", "3")


@pytest.mark.parametrize("path", ["", "fig\nures", "fig\x1bures"])
def test_an_empty_path_or_one_with_a_control_character_is_refused_naming_the_flag(blocks_run, tmp_path, path, capsys):
    os.chdir(tmp_path)
    code, _out, err = run_cli(capsys, ["report", blocks_run, "--figures", path])
    assert code == 2 and "argument --figures: expected a path" in err, err
    assert list(tmp_path.iterdir()) == []  # nothing written into the working folder


def test_a_file_where_an_output_folder_goes_is_refused_before_the_report(blocks_run, tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("mine\n", "utf-8")
    code, out, err = run_cli(capsys, ["report", blocks_run, "--figures", afile])
    assert code == 2 and f"--figures {afile}: {afile} is a file; expected a folder" in err, err
    assert out == "" and afile.read_text("utf-8") == "mine\n"


def test_two_turn_budgets_on_one_command_line_are_refused(tmp_path, capsys):
    argv = ["run", "--world", "blocks", "--episodes", "1", "--turns", "3", "--set", "turns=5", "--out", tmp_path / "o"]
    code, _out, err = run_cli(capsys, argv)
    assert code == 2 and "--turns 3 and --set turns=5 say two budgets" in err, err
    assert not (tmp_path / "o").exists()
    argv[8] = "turns=3"  # the same budget twice says one thing
    assert run_cli(capsys, argv)[0] == 0


def test_group_by_a_field_no_episode_has_is_refused_with_the_fields(blocks_run, capsys):
    code, out, err = run_cli(capsys, ["report", blocks_run, "--group-by", "grup"])
    assert code == 2 and "--group-by grup: no episode's summary has this field" in err, err
    assert "group" in err.split("fields:")[1] and out == ""


@pytest.mark.parametrize("value", ["", "my key", "1BAD"])
def test_an_api_key_env_that_is_no_variable_name_says_so(tmp_path, capsys, value):
    argv = ["run", "--world", "blocks", "--episodes", "1", "--agent", "builder=openai:m"]
    argv += ["--agent-setting", f"builder.api_key_env={value}", "--out", tmp_path / "o"]
    code, _out, err = run_cli(capsys, argv)
    assert code == 2 and "api_key_env: expected the name of an environment variable" in err, err
    assert "credential" not in err


def test_a_temporary_folder_set_to_a_system_folder_makes_it_no_scratch_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(writing, "SCRATCH_FOLDERS", (Path("/var/tmp"), Path("/usr")))  # as TMPDIR=/usr makes it
    with pytest.raises(WriteRefused, match="system folder /usr"):
        check_output_folder(Path("/usr/simlab-out"), "generate --out")
    check_output_folder(tmp_path / "out", "generate --out")  # /tmp stays a place for outputs
    check_output_folder(Path("/var/tmp/simlab-out"), "generate --out")


def test_a_build_refused_before_it_began_leaves_no_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("NOPE_KEY", raising=False)
    out = tmp_path / "g"
    argv = ["generate", "rooms", "--n", "1", "--no-images", "--questions-per-task", "1", "--filter-model", "m"]
    argv += ["--filter-base-url", "http://127.0.0.1:9/v1", "--filter-key-env", "NOPE_KEY", "--out", out]
    code, _out, err = run_cli(capsys, argv)
    assert code == 2 and "NOPE_KEY is not set" in err, err
    assert not out.exists()


POOL_CHILD = """
import os, time
from simlab.core.processes import process_pool

def pid():
    time.sleep(0.5)  # long enough that both workers take one
    return os.getpid()

pool = process_pool(2)
pids = {f.result() for f in [pool.submit(pid) for _ in range(2)]}
print(" ".join(map(str, sorted(pids))), flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped has ended: it counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_worker_processes_end_when_their_parent_is_killed(sig):
    parent = subprocess.Popen([sys.executable, "-c", POOL_CHILD], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        workers = [int(p) for p in parent.stdout.readline().split()]
        assert len(workers) == 2 and all(_alive(p) for p in workers)
        os.kill(parent.pid, sig)
        parent.wait(timeout=60)
        deadline = time.monotonic() + 30  # a correctness wait (they end at once on Linux), not a timing bound
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(p) for p in workers)
    finally:
        parent.kill()
