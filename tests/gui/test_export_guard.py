"""Every export and save of the app goes through the export guard: pointed at a recording (the open episode's
file, another episode, the index, run.json, a judgments file, a new file in the run's episodes folder, a link
to one of them) it writes nothing, the file is as it was, and the window says why."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog, QMessageBox

from simlab.analysis.stats import mean_sem_ci
from simlab.analysis.validity import ValidityReport
from simlab.core.judging import JUDGMENTS_DIR
from simlab.core.recording import EPISODES_DIR, INDEX_FILE, RUN_FILE, load_run
from simlab.gui.figures_view import FiguresPanel
from simlab.gui.main_window import MainWindow
from simlab.gui.validity_view import ValidityDialog
from simlab.runner.demo import DEMO_RUN
from tests.gui.test_main_window import make_window

REFUSED = "would overwrite a SimLab recording"
EXPORTS: dict[str, Callable[[MainWindow, Path], bool]] = {
    "png": lambda window, path: window.export_png(path),
    "panel png": lambda window, path: window.export_png(path, window.plots),
    "html": lambda window, path: window.export_html(path),
    "animation": lambda window, path: window.export_animation(path, 0, 1),
}


@pytest.fixture
def run_dir(tmp_path) -> Path:
    """A copy of the demo run, with a judgments file."""
    run = shutil.copytree(DEMO_RUN, tmp_path / "run")
    (run / JUDGMENTS_DIR).mkdir()
    (run / JUDGMENTS_DIR / "structure_002-r0.jsonl").write_text('{"format":"simlab.judgment"}\n', "utf-8")
    return run


@pytest.fixture
def window(qtbot, tmp_path, run_dir):
    win = make_window(qtbot, tmp_path)
    assert win.open_path(run_dir) and win.open_episode_id("structure_002-r0")
    yield win
    win.close()


def _files(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _targets(run_dir: Path, tmp_path: Path) -> list[Path]:
    link = tmp_path / "link.html"
    link.symlink_to(run_dir / EPISODES_DIR / "structure_002-r0.json")
    return [
        run_dir / EPISODES_DIR / "structure_002-r0.json",  # the open episode's own file
        run_dir / EPISODES_DIR / "structure_003-r1.json",
        run_dir / INDEX_FILE,
        run_dir / RUN_FILE,
        run_dir / JUDGMENTS_DIR / "structure_002-r0.jsonl",
        run_dir / EPISODES_DIR / "transcript.gif",  # new, but among the run's episodes
        link,
    ]


@pytest.mark.parametrize("export", list(EXPORTS))
def test_an_export_onto_a_recording_is_refused_and_the_file_is_unchanged(window, run_dir, tmp_path, export):
    for target in _targets(run_dir, tmp_path):
        before = _files(run_dir)
        assert not EXPORTS[export](window, target), target
        assert REFUSED in window.last_error and str(target) in window.last_error
        assert _files(run_dir) == before
    boxes = [box for box in window.findChildren(QMessageBox) if box.isVisible()]
    assert boxes and REFUSED in boxes[-1].text()
    free = tmp_path / f"free{'.gif' if export == 'animation' else '.html' if export == 'html' else '.png'}"
    assert EXPORTS[export](window, free) and free.stat().st_size > 0  # elsewhere it writes as before


def test_the_figures_export_into_a_runs_folder_writes_nothing(qtbot, run_dir, monkeypatch):
    panel = FiguresPanel()
    qtbot.addWidget(panel)
    panel.show()
    with qtbot.waitSignal(panel.ready, timeout=30000):
        panel.set_runs([("run", load_run(run_dir))])
    warned: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda _parent, _title, text, *_args: warned.append(text))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_args: str(run_dir / EPISODES_DIR))
    before = _files(run_dir)
    panel.export_button.click()
    assert warned and REFUSED in warned[0] and _files(run_dir) == before
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_args: str(run_dir / "figures"))
    panel.export_button.click()  # a new folder, but inside the run: refused too (exports go beside runs)
    assert len(warned) == 2 and "is inside the run folder" in warned[1] and not (run_dir / "figures").exists()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_args: str(run_dir.parent / "figures"))
    panel.export_button.click()  # a folder of the user's beside the run: written
    assert len(warned) == 2 and len(list((run_dir.parent / "figures").iterdir())) == 3


def test_the_validity_report_is_never_saved_among_a_runs_recordings(qtbot, run_dir, tmp_path):
    summary = mean_sem_ci([1.0, 0.0, 1.0])
    report = ValidityReport("bench", ("oracle",), {"oracle": "both views"}, {"g": {"oracle": summary}}, {"g": summary})
    dialog = ValidityDialog(report)
    qtbot.addWidget(dialog)
    before = _files(run_dir)
    for target in (run_dir / INDEX_FILE, run_dir / EPISODES_DIR / "report.json"):
        assert dialog.ask_save(target) is None and str(target) in dialog.message.text()
    assert REFUSED in dialog.message.text() and _files(run_dir) == before
    saved = tmp_path / "report.json"
    assert dialog.ask_save(saved) == saved and dialog.ask_save(saved) == saved  # its own report is replaced
