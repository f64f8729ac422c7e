"""The export guard: no export or save, of the command line or the app, replaces a recording or joins a run's
own files; what is not a recording is written as asked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from simlab.cli import main
from simlab.core.errors import ConfigError
from simlab.core.exports import export_into, recording_format, refuse_overwriting_a_recording
from simlab.core.judging import JUDGMENTS_DIR
from simlab.core.recording import EPISODES_DIR, INDEX_FILE, RUN_FILE


@pytest.fixture
def run_dir(record, tmp_path) -> Path:
    """A copy of a small recorded blocks run, with a judgments file as ``judge`` writes one."""
    run = shutil.copytree(record(episodes=2, turns=3), tmp_path / "run")
    (run / JUDGMENTS_DIR).mkdir()
    (run / JUDGMENTS_DIR / "structure_000-r0.jsonl").write_text('{"format":"simlab.judgment"}\n', "utf-8")
    return run


def _files(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    ("target", "why"),
    [
        (RUN_FILE, f"the {RUN_FILE} of the run"),
        (INDEX_FILE, f"the {INDEX_FILE} of the run"),
        (f"{EPISODES_DIR}/structure_000-r0.json", f"in the {EPISODES_DIR} folder"),
        (f"{EPISODES_DIR}/transcript.html", f"in the {EPISODES_DIR} folder"),  # a new file among the run's
        (f"{JUDGMENTS_DIR}/structure_000-r0.jsonl", f"in the {JUDGMENTS_DIR} folder"),
    ],
)
def test_a_runs_own_files_are_refused_and_left_as_they_were(run_dir, target, why):
    before = _files(run_dir)
    with pytest.raises(ConfigError, match="would overwrite a SimLab recording") as refused:
        refuse_overwriting_a_recording(run_dir / target)
    assert why in str(refused.value) and str(run_dir) in str(refused.value)
    assert _files(run_dir) == before


def test_a_recording_elsewhere_or_behind_a_link_is_refused(run_dir, tmp_path):
    copy = shutil.copy(run_dir / EPISODES_DIR / "structure_001-r0.json", tmp_path / "mine.json")
    with pytest.raises(ConfigError, match=r"it is a simlab\.episode file"):
        refuse_overwriting_a_recording(Path(copy))
    link = tmp_path / "picture.png"
    link.symlink_to(run_dir / INDEX_FILE)
    with pytest.raises(ConfigError, match=f"the {INDEX_FILE} of the run"):
        refuse_overwriting_a_recording(link)
    with pytest.raises(ConfigError, match="is a folder; name the file to write"):
        refuse_overwriting_a_recording(run_dir / EPISODES_DIR)


def test_what_is_not_a_recording_may_be_written(run_dir, tmp_path):
    refuse_overwriting_a_recording(run_dir / "transcript.html")  # beside a run, not of it
    refuse_overwriting_a_recording(tmp_path / "figures" / "new.png")
    old = tmp_path / "old.html"
    old.write_text('<html>{"format": "simlab.episode"}</html>', "utf-8")  # quotes a recording, is none
    refuse_overwriting_a_recording(old)
    report = tmp_path / "report.json"
    report.write_text('{\n  "format": "simlab.validity", "version": 1}', "utf-8")
    assert recording_format(report) == "simlab.validity" and recording_format(old) is None
    refuse_overwriting_a_recording(report, replaces="simlab.validity")  # a previous report of that kind
    with pytest.raises(ConfigError, match=r"simlab\.validity"):
        refuse_overwriting_a_recording(report)


def _two_files(scratch: Path) -> list[Path]:
    out = [scratch / "figure.csv", scratch / "figure.png"]
    for path in out:
        path.write_text(path.name, "utf-8")
    return out


def test_export_into_writes_every_file_or_none(run_dir, tmp_path):
    folder = tmp_path / "figs"
    assert export_into(folder, _two_files) == [folder / "figure.csv", folder / "figure.png"]
    assert (folder / "figure.png").read_text("utf-8") == "figure.png"
    (run_dir / EPISODES_DIR / "figure.csv").write_text("mine", "utf-8")
    before = _files(run_dir)
    with pytest.raises(ConfigError, match="would overwrite a SimLab recording"):
        export_into(run_dir / EPISODES_DIR, _two_files)
    assert _files(run_dir) == before  # not one of them written


def test_the_command_line_uses_the_guard(run_dir, tmp_path, capsys):
    episode = run_dir / EPISODES_DIR / "structure_000-r0.json"
    before = _files(run_dir)
    new_in_run = run_dir / EPISODES_DIR / "t.html"
    assert main(["replay", str(episode), "--export", "html", "--out", str(new_in_run)]) == 2
    assert "would overwrite a SimLab recording" in capsys.readouterr().err and _files(run_dir) == before
    into_run = run_dir / "t.html"  # not a recording, yet inside the run folder: exports go beside runs
    assert main(["replay", str(run_dir), "--export", "html", "--out", str(into_run)]) == 2
    assert "already holds a run" in capsys.readouterr().err and _files(run_dir) == before
    beside = run_dir.parent / "t.html"
    assert main(["replay", str(run_dir), "--export", "html", "--out", str(beside)]) == 0
    assert main(["replay", str(run_dir), "--export", "html", "--out", str(beside)]) == 0  # its own export again
