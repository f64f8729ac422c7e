"""One writing path for every output (docs/FORMATS.md, "Where SimLab writes"): links planted in a run folder,
outputs aimed into a run or a system folder, a link where an export, a judgment or an editor's file goes.
Every case is refused with exit 2 naming what would have been touched, and nothing outside changes; normal
use writes as before."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from simlab.cli import main
from simlab.core.editing import write_json
from simlab.core.recording import EPISODES_DIR, INDEX_FILE, RUN_FILE
from simlab.core.writing import (
    WriteRefused,
    check_output_file,
    check_output_folder,
    open_for_writing,
    write_atomic,
)
from simlab.testing.openai_server import FakeOpenAIServer
from simlab.worlds import open_document
from tests.cli.test_cli import CRAFT_LOG
from tests.cli.test_judge_cli import craft_judge
from tests.fuzz.hostile import run_cli, snapshot

FAMILIES = {
    "blocks": ["--agent", "builder=scripted:0.4", "--turns", "4"],
    "rooms": ["--agent", "answerer=oracle", "--agent", "helper=oracle"],
    "boards": ["--agent", "robot=random"],
    "puzzles": ["--agent", "solver=random", "--turns", "4"],
}
LINKED = "is a symbolic link to"
SYSTEM = ["/", "/etc", "/etc/simlab-figures", "/usr/local/simlab", "/bin", "/lib", "/lib64/x", "/boot", "/dev/x"]
SYSTEM += ["/proc/simlab", "/sys/simlab", "/var", "/var/lib/simlab", "/sbin/x"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Per family, a run of two episodes recorded through the command line."""
    runs = {}
    for family, agents in FAMILIES.items():
        out = tmp_path_factory.mktemp(family) / "run"
        assert main(["run", "--world", family, "--episodes", "2", *agents, "--out", str(out)]) == 0
        runs[family] = out
    return runs


def interrupted(finished: Path, into: Path) -> tuple[Path, str]:
    """A copy of ``finished`` as a run killed before its last episode was indexed: (the run, that episode)."""
    run = Path(shutil.copytree(finished, into))
    lines = (run / INDEX_FILE).read_text("utf-8").splitlines(keepends=True)
    (run / INDEX_FILE).write_text("".join(lines[:-1]), "utf-8")
    missing = json.loads(lines[-1])["episode_id"]
    (run / EPISODES_DIR / f"{missing}.json").unlink()
    return run, missing


def fingerprint(folder: Path) -> dict[str, tuple[str, int]]:
    """Every entry under ``folder``: a digest of a file's bytes and its modification time (a folder's too)."""
    return {
        str(p.relative_to(folder)): (
            hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "",
            p.stat().st_mtime_ns,
        )
        for p in sorted(folder.rglob("*"))
    }


def outside_folder(tmp_path: Path) -> Path:
    """A folder of the user's outside every run: a file of theirs in it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("the user's own file\n", "utf-8")
    return outside


def plant_index(run: Path, _missing: str, outside: Path) -> str:
    shutil.move(run / INDEX_FILE, outside / "victim.jsonl")  # the run's own lines: resuming would append there
    (run / INDEX_FILE).symlink_to(outside / "victim.jsonl")
    return INDEX_FILE


def plant_episodes(run: Path, _missing: str, outside: Path) -> str:
    shutil.move(run / EPISODES_DIR, outside / "episodes")
    (run / EPISODES_DIR).symlink_to(outside / "episodes")
    return EPISODES_DIR


def plant_run_file(run: Path, _missing: str, outside: Path) -> str:
    shutil.move(run / RUN_FILE, outside / "run.json")  # resuming rewrites run.json (its runtime)
    (run / RUN_FILE).symlink_to(outside / "run.json")
    return RUN_FILE


def plant_episode_file(run: Path, missing: str, outside: Path) -> str:
    name = f"{EPISODES_DIR}/{missing}.json"  # the very file resuming writes
    (run / name).symlink_to(outside / "victim.txt")
    return name


PLANTS: dict[str, Callable[[Path, str, Path], str]] = {
    "index.jsonl": plant_index,
    "episodes/": plant_episodes,
    "run.json": plant_run_file,
    "an episode file": plant_episode_file,
}


# ---- run --resume ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("plant", PLANTS)
def test_resume_refuses_a_link_planted_in_the_run_and_changes_nothing_outside(
    finished, family, plant, tmp_path, capsys
):
    run, missing = interrupted(finished[family], tmp_path / "run")
    outside = outside_folder(tmp_path)
    name = PLANTS[plant](run, missing, outside)
    before = fingerprint(outside)
    code, _out, err = run_cli(capsys, ["run", "--out", run, "--resume"])
    assert code == 2, err
    assert f"error: {run / name} {LINKED} " in err and "refusing to write through it" in err
    assert fingerprint(outside) == before


@pytest.mark.parametrize("family", FAMILIES)
def test_resume_without_links_finishes_the_run(finished, family, tmp_path, capsys):
    run, missing = interrupted(finished[family], tmp_path / "run")
    code, _out, err = run_cli(capsys, ["run", "--out", run, "--resume"])
    assert code == 0, err
    assert (run / EPISODES_DIR / f"{missing}.json").is_file()
    assert len((run / INDEX_FILE).read_text("utf-8").splitlines()) == 2


def test_a_new_run_is_never_made_inside_another(finished, tmp_path, capsys):
    run = Path(shutil.copytree(finished["blocks"], tmp_path / "run"))
    before = snapshot(run)
    code, _out, err = run_cli(capsys, ["run", "--world", "blocks", "--episodes", "1", "--out", run / "inner"])
    assert code == 2 and f"is inside the run folder {run}" in err
    assert snapshot(run) == before and not (run / "inner").exists()


# ---- report --figures -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("target", [".", EPISODES_DIR, "figures", "episodes/new"])
def test_figures_are_never_written_into_the_run_they_draw(finished, family, target, tmp_path, capsys):
    run = Path(shutil.copytree(finished[family], tmp_path / "run"))
    before = fingerprint(run)
    code, _out, err = run_cli(capsys, ["report", run, "--figures", run / target])
    assert code == 2 and ("already holds a run" in err or f"inside the run folder {run}" in err), err
    assert fingerprint(run) == before


def test_figures_through_a_link_to_a_run_or_into_another_run_are_refused(finished, tmp_path, capsys):
    run = Path(shutil.copytree(finished["blocks"], tmp_path / "run"))
    other = Path(shutil.copytree(finished["boards"], tmp_path / "other"))
    (tmp_path / "figs").symlink_to(run)
    before = fingerprint(run), fingerprint(other)
    code, _out, err = run_cli(capsys, ["report", run, "--figures", tmp_path / "figs"])
    assert code == 2 and f"{tmp_path / 'figs'} already holds a run" in err
    code, _out, err = run_cli(capsys, ["report", run, "--figures", other / "figures"])
    assert code == 2 and f"inside the run folder {other}" in err
    assert (fingerprint(run), fingerprint(other)) == before


@pytest.fixture
def no_drawing(monkeypatch) -> list[str]:
    """Every figure write and drawing recorded instead of done: a refusal must come before any of them."""
    import simlab.analysis.correlations as correlations
    import simlab.analysis.figures as figures

    calls: list[str] = []
    monkeypatch.setattr(figures, "draw", lambda *a: calls.append("draw") or [])
    monkeypatch.setattr(figures, "write_atomic", lambda *a: calls.append("write") or Path())
    monkeypatch.setattr(correlations, "write_atomic", lambda *a: calls.append("write") or Path())
    return calls


@pytest.mark.parametrize("folder", SYSTEM)
def test_figures_into_a_system_folder_are_refused_before_anything_is_written(finished, folder, no_drawing, capsys):
    existed = Path(folder).exists()
    code, _out, err = run_cli(capsys, ["report", finished["blocks"], "--figures", folder, "--correlate", "score"])
    assert code == 2 and "system folder" in err, err
    assert no_drawing == [] and Path(folder).exists() == existed


def test_the_home_folder_itself_is_refused_and_a_folder_in_it_is_not(finished, tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    code, _out, err = run_cli(capsys, ["report", finished["blocks"], "--figures", home])
    assert code == 2 and "home folder itself" in err and list(home.iterdir()) == []
    code, _out, err = run_cli(capsys, ["report", finished["blocks"], "--figures", home / "figures"])
    assert code == 0, err
    assert {p.suffix for p in (home / "figures").iterdir()} == {".csv", ".png", ".svg"}


def test_figures_into_a_fresh_folder_beside_the_run_are_written(finished, tmp_path, capsys):
    run = Path(shutil.copytree(finished["blocks"], tmp_path / "run"))
    before = fingerprint(run)
    code, _out, err = run_cli(capsys, ["report", run, "--figures", tmp_path / "figures"])
    assert code == 0, err
    names = sorted(p.name for p in (tmp_path / "figures").iterdir())
    assert names and len(names) % 3 == 0 and all(not (tmp_path / "figures" / n).is_symlink() for n in names)
    assert fingerprint(run) == before


# ---- replay --export ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(("export", "target"), [("html", "t.html"), ("png", "episodes/t.png"), ("gif", "a/b.gif")])
def test_replay_never_exports_into_a_run(finished, family, export, target, tmp_path, capsys):
    run = Path(shutil.copytree(finished[family], tmp_path / "run"))
    before = fingerprint(run)
    code, _out, err = run_cli(capsys, ["replay", run, "--export", export, "--out", run / target])
    assert code == 2 and str(run) in err, err
    assert fingerprint(run) == before


def test_replay_export_through_a_planted_link_is_refused(finished, tmp_path, capsys):
    outside = outside_folder(tmp_path)
    link = tmp_path / "t.html"
    link.symlink_to(outside / "victim.txt")
    before = fingerprint(outside)
    code, _out, err = run_cli(capsys, ["replay", finished["blocks"], "--export", "html", "--out", link])
    assert code == 2 and f"{link} {LINKED} {outside / 'victim.txt'}" in err
    assert fingerprint(outside) == before and link.is_symlink()


@pytest.mark.parametrize("folder", ["/etc", "/usr/share", "/"])
def test_replay_into_a_system_folder_is_refused_before_rendering(finished, folder, capsys):
    target = Path(folder) / "simlab-replay.html"
    code, _out, err = run_cli(capsys, ["replay", finished["blocks"], "--export", "html", "--out", target])
    assert code == 2 and "system folder" in err and not target.exists()


@pytest.mark.parametrize("family", FAMILIES)
def test_replay_exports_beside_the_run(finished, family, tmp_path, capsys):
    run = Path(shutil.copytree(finished[family], tmp_path / "run"))
    out = tmp_path / "transcript.html"
    code, _out, err = run_cli(capsys, ["replay", run, "--export", "html", "--out", out])
    assert code == 0, err
    assert "<html" in out.read_text("utf-8").lower() and not list(tmp_path.glob(".*.tmp"))


# ---- judge ----------------------------------------------------------------------------------------------------


def judge(run: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, int]:
    """``judge RUN`` against a local server: (exit status, stderr, requests the server answered)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-writing-path")
    with FakeOpenAIServer(craft_judge) as server:
        argv = ["judge", run, "--judge", "craft-ps", "--model", "m", "--base-url", server.base_url]
        code, _out, err = run_cli(capsys, argv)
    return code, err, server.stats.served


@pytest.fixture
def judged(record, tmp_path) -> Path:
    source = record("D1=oracle", "D2=oracle", "D3=oracle", "builder=scripted:0.5", episodes=2, turns=3)
    return Path(shutil.copytree(source, tmp_path / "run"))


def test_judge_refuses_a_link_planted_among_the_judgments(judged, tmp_path, capsys, monkeypatch):
    outside = outside_folder(tmp_path)
    (judged / "judgments").mkdir()
    (judged / "judgments" / "structure_000-r0.jsonl").symlink_to(outside / "victim.txt")
    before = fingerprint(outside)
    code, err, asked = judge(judged, capsys, monkeypatch)
    assert code == 2 and f"{judged / 'judgments' / 'structure_000-r0.jsonl'} {LINKED}" in err
    assert asked == 0 and fingerprint(outside) == before


def test_judge_refuses_a_judgments_folder_linked_elsewhere(judged, tmp_path, capsys, monkeypatch):
    outside = outside_folder(tmp_path)
    (judged / "judgments").symlink_to(outside)
    before = fingerprint(outside)
    code, err, asked = judge(judged, capsys, monkeypatch)
    assert code == 2 and f"{judged / 'judgments'} {LINKED} {outside}" in err
    assert asked == 0 and fingerprint(outside) == before


def test_judge_writes_its_judgments_beside_the_episodes_as_documented(judged, capsys, monkeypatch):
    code, err, asked = judge(judged, capsys, monkeypatch)
    assert code == 0 and asked > 0, err
    assert sorted(p.name for p in (judged / "judgments").iterdir()) == [
        "structure_000-r0.jsonl",
        "structure_001-r0.jsonl",
    ]


# ---- generate -------------------------------------------------------------------------------------------------


def test_generate_never_writes_into_a_run_or_a_system_folder(finished, tmp_path, capsys):
    run = Path(shutil.copytree(finished["blocks"], tmp_path / "run"))
    before = fingerprint(run)
    code, _out, err = run_cli(capsys, ["generate", "blocks", "--n", "2", "--out", run / "tasks"])
    assert code == 2 and f"inside the run folder {run}" in err and fingerprint(run) == before
    code, _out, err = run_cli(capsys, ["generate", "boards", "--n", "2", "--out", "/etc/simlab-tasks"])
    assert code == 2 and "system folder /etc" in err and not Path("/etc/simlab-tasks").exists()


def test_generate_refuses_a_linked_folder_it_would_resume_into(tmp_path, capsys):
    outside = outside_folder(tmp_path)
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "necessity").symlink_to(outside)  # what an interrupted `generate rooms --filter-model` resumes
    before = fingerprint(outside)
    code, _out, err = run_cli(capsys, ["generate", "rooms", "--n", "1", "--out", bench])
    assert code == 2 and f"{bench / 'necessity'} {LINKED}" in err and fingerprint(outside) == before


def test_import_never_writes_into_a_run(finished, tmp_path, capsys):
    run = Path(shutil.copytree(finished["blocks"], tmp_path / "run"))
    before = fingerprint(run)
    code, _out, err = run_cli(capsys, ["import", "craft", CRAFT_LOG, "--out", run / "imported"])
    assert code == 2 and f"inside the run folder {run}" in err and fingerprint(run) == before
    code, _out, err = run_cli(capsys, ["import", "craft", CRAFT_LOG, "--out", tmp_path / "imported"])
    assert code == 0 and (tmp_path / "imported" / RUN_FILE).is_file(), err


# ---- the editor -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["blocks", "rooms"])
def test_an_editor_save_or_autosave_through_a_link_is_refused(family, tmp_path):
    outside = outside_folder(tmp_path)
    document = open_document(family)
    link = tmp_path / "mine.json"
    link.symlink_to(outside / "victim.txt")
    before = fingerprint(outside)
    with pytest.raises(WriteRefused, match=f"{link} {LINKED}"):
        document.save(link)
    saved = document.save(tmp_path / "scene.json")  # a plain file: saved as before
    assert json.loads(saved.read_text("utf-8")) == json.loads(json.dumps(document.to_json()))
    autosave = document.autosave_path()
    assert autosave is not None
    autosave.symlink_to(outside / "victim.txt")  # planted beside a file someone sent
    with pytest.raises(WriteRefused, match=LINKED):
        write_json(autosave, document.to_json())
    assert fingerprint(outside) == before


def test_an_editor_document_is_never_saved_into_a_run(finished, tmp_path):
    run = Path(shutil.copytree(finished["blocks"], tmp_path / "run"))
    before = fingerprint(run)
    with pytest.raises(WriteRefused, match="already holds a run"):
        open_document("blocks").save(run / "structure.json")
    assert fingerprint(run) == before


# ---- the module's own rules -----------------------------------------------------------------------------------


def test_a_link_inside_the_named_folder_may_be_followed_one_leaving_it_may_not(tmp_path):
    folder, outside = tmp_path / "named", outside_folder(tmp_path)
    (folder / "real").mkdir(parents=True)
    (folder / "within").symlink_to(folder / "real")
    (folder / "away").symlink_to(outside)
    assert write_atomic(folder, "within/a.txt", "a") == folder / "within" / "a.txt"
    assert (folder / "real" / "a.txt").read_text("utf-8") == "a"
    before = fingerprint(outside)
    for relative in ("away/a.txt", "away/deeper/a.txt", "../outside/a.txt", "/etc/passwd"):
        with pytest.raises(WriteRefused):
            write_atomic(folder, relative, "x")
    with pytest.raises(WriteRefused, match=LINKED):
        open_for_writing(folder, "away/log.jsonl", "ab")
    assert fingerprint(outside) == before


def test_appending_refuses_a_link_and_writes_a_plain_file(tmp_path):
    outside = outside_folder(tmp_path)
    (tmp_path / "log.jsonl").symlink_to(outside / "victim.txt")
    with pytest.raises(WriteRefused, match=LINKED):
        open_for_writing(tmp_path, "log.jsonl", "ab+")
    with open_for_writing(tmp_path, "sub/log.jsonl", "ab") as f:
        f.write(b"one\n")
    with open_for_writing(tmp_path, "sub/log.jsonl", "ab") as f:
        f.write(b"two\n")
    assert (tmp_path / "sub" / "log.jsonl").read_bytes() == b"one\ntwo\n"
    assert (outside / "victim.txt").read_text("utf-8") == "the user's own file\n"


def test_output_folders_inside_an_input_or_equal_to_it_are_refused(tmp_path):
    source = tmp_path / "tasks"
    source.mkdir()
    with pytest.raises(WriteRefused, match="which this command reads"):
        check_output_folder(source / "out", "--out", inputs=[source])
    with pytest.raises(WriteRefused, match="it is what this command reads"):
        check_output_file(source / "t.json", "--out", inputs=[source / "t.json"])
    assert check_output_folder(tmp_path / "out", "--out", inputs=[source]) == tmp_path / "out"
    assert check_output_folder(Path("/var/tmp/simlab-out"), "--out") == Path("/var/tmp/simlab-out")
