"""A benchmark's validity report from the editor's World menu (and the app's Run menu), as a researcher uses it:
the table holds the numbers ``python main.py validity`` prints, tinted where a baseline differs from chance; a
folder that is not a benchmark says why and opens nothing; the JSON saved is the command's and never replaces
a recording."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QMenu

from simlab.analysis.stats import Summary
from simlab.cli import main
from simlab.gui.editor import EditorWindow
from simlab.gui.main_window import MainWindow
from simlab.gui.validity_view import ABOVE, BELOW, ValidityDialog, versus_chance
from simlab.worlds import open_document
from simlab.worlds.rooms.editing import EDITOR
from tests.gui.conftest import wait_shown

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "scenes" / "rooms" / "example_room_000.json"
DEMO_RUN = ROOT / "scenes" / "blocks" / "demo_run"
ENTRY = "&Validity Report..."
WAIT_MS = 60000


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    """A small rooms benchmark (8 rooms tried, 3 questions per task) written by the command line."""
    folder = tmp_path_factory.mktemp("validity") / "bench"
    args = ["generate", "rooms", "--n", "8", "--questions-per-task", "3", "--no-images", "--seed", "4"]
    assert main([*args, "--out", str(folder)]) == 0
    return folder


@pytest.fixture
def editor(qtbot):
    window = EditorWindow(EDITOR.open(EXAMPLE))
    window.show()
    wait_shown(qtbot, window)
    yield window
    window.undo_stack.setClean()
    window.close()


def cli(capsys, *args: str) -> str:
    """What ``python main.py ARGS`` prints (the run's other output, if any, dropped first)."""
    capsys.readouterr()
    assert main(list(args)) == 0
    return capsys.readouterr().out


def world_entry(window) -> object:
    """The World menu's "Validity Report..." action, or None."""
    world = next(a.menu() for a in window.menuBar().actions() if a.text() == "&World")
    return next((a for a in world.actions() if a.text() == ENTRY), None)


def trigger_entry(window):
    """Choose World > Validity Report... as a person would; returns the job it started (None: none)."""
    world_entry(window).trigger()
    return window.validity.job


def choose_folder(monkeypatch, folder: Path | None) -> list[str]:
    """Make the folder dialog answer ``folder`` (None: cancelled); returns the start folders it was offered."""
    offered: list[str] = []

    def answer(_parent, _caption, start="", *_args):
        offered.append(start)
        return str(folder) if folder is not None else ""

    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(answer))
    return offered


def open_report(qtbot, launcher, start) -> ValidityDialog:
    """Run ``start()`` (which begins a report) and wait for the dialog it opens."""
    with qtbot.waitSignal(launcher.opened, timeout=WAIT_MS) as opened:
        job = start()
        assert job is not None
        assert launcher.window.findChildren(ValidityDialog) == []  # computed off the GUI thread: not there yet
    dialog = opened.args[0]
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def table_rows(text: str) -> list[list[str]]:
    """The rows of a ``validity`` table (header first), its cells split where two spaces part them."""
    lines = text.splitlines()
    head = next(k for k, line in enumerate(lines) if line.startswith("group "))
    body = lines[head + 2 : lines.index("", head)]  # after the dashes, up to the blank line
    return [re.split(r"\s{2,}", line.strip()) for line in [lines[head], *body]]


def test_the_world_menu_shows_the_report_the_command_prints(editor, bench, qtbot, monkeypatch, capsys):
    choose_folder(monkeypatch, bench)
    dialog = open_report(qtbot, editor.validity, lambda: trigger_entry(editor))
    assert dialog.rows() == table_rows(cli(capsys, "validity", str(bench)))
    data = json.loads(cli(capsys, "validity", str(bench), "--format", "json"))
    assert dialog.rows()[0] == ["group", "n", *data["baselines"]]
    for r, (group, row) in enumerate(data["groups"].items()):
        assert dialog.table.item(r, 0).text() == group
        for c, name in enumerate(data["baselines"], start=2):
            s = row[name]
            assert dialog.table.item(r, c).text() == f"{s['mean']:.2f} [{s['ci_low']:.2f}, {s['ci_high']:.2f}]"
    assert f"questions: {data['facts']['questions']}" in dialog.facts.text()
    assert f"distinct rooms: {data['facts']['distinct rooms']}" in dialog.facts.text()
    shown = dialog.notes.toPlainText()
    assert all(text in shown for text in [*data["legend"].values(), *data["notes"]])
    assert "Validity report of" in editor.statusBar().currentMessage()


def test_cells_whose_ci_excludes_chance_are_tinted_and_say_so(editor, bench, qtbot, capsys):
    dialog = open_report(qtbot, editor.validity, lambda: editor.ask_validity(bench))
    data = json.loads(cli(capsys, "validity", str(bench), "--format", "json"))
    marks = []
    for r, row in enumerate(data["groups"].values()):
        chance = row["chance"]["mean"]
        for c, name in enumerate(data["baselines"][1:], start=3):
            s, item = row[name], dialog.table.item(r, c)
            side = "above" if s["ci_low"] > chance + 1e-9 else "below" if s["ci_high"] < chance - 1e-9 else None
            tint = {"above": ABOVE, "below": BELOW}.get(side)
            assert (item.background().color() == tint) if tint else item.background().style().name == "NoBrush"
            assert ("differs from chance" in item.toolTip()) == (side is not None)
            marks.append(side)
    assert "above" in marks and None in marks  # the oracle is above chance; not every baseline is


def test_only_an_interval_wholly_off_chance_differs_from_it():
    chance = Summary(300, 0.25, 0.025, 0.2, 0.3)
    assert versus_chance(Summary(300, 0.4, 0.03, 0.3, 0.5), chance) == 1
    assert versus_chance(Summary(300, 0.1, 0.02, 0.05, 0.15), chance) == -1
    assert versus_chance(Summary(300, 0.3, 0.03, 0.25, 0.35), chance) == 0  # touches chance: not excluded
    guess = 0.25 + 1e-15  # a solver left to guess scores chance, summed in another order
    assert versus_chance(Summary(300, guess, 0.0, guess, guess), chance) == 0
    assert versus_chance(Summary(1, 1.0, 0.0, 1.0, 1.0), chance) == 0  # one question: no interval to judge


def test_a_folder_that_is_not_a_benchmark_says_why_and_opens_no_dialog(editor, qtbot, tmp_path):
    with qtbot.waitSignal(editor.validity.failed, timeout=WAIT_MS):
        editor.ask_validity(DEMO_RUN)  # a run folder, chosen by mistake
    said = editor.statusBar().currentMessage()
    assert str(DEMO_RUN / "benchmark.json") in said and "file not found" in said
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    (wrong / "benchmark.json").write_text(json.dumps({"format": "simlab.run", "version": 1}))
    with qtbot.waitSignal(editor.validity.failed, timeout=WAIT_MS):
        editor.ask_validity(wrong)
    said = editor.statusBar().currentMessage()
    assert str(wrong / "benchmark.json") in said and "expected" in said and "simlab.run" in said
    qtbot.wait(50)  # anything queued after the failure has run
    assert editor.findChildren(ValidityDialog) == [] and editor.validity.job is None


def test_the_folder_asked_starts_where_the_questions_were_last_saved(editor, qtbot, tmp_path, monkeypatch):
    proposal = editor.run_action("Make questions for this room")
    assert proposal is not None
    saved = editor.save_proposal(proposal, tmp_path / "mine")
    proposal.close()
    offered = choose_folder(monkeypatch, None)  # the person cancels: nothing is computed
    assert trigger_entry(editor) is None and offered == [str(saved)]
    choose_folder(monkeypatch, saved)
    dialog = open_report(qtbot, editor.validity, lambda: trigger_entry(editor))
    assert dialog.report.facts["distinct rooms"] == 1 and dialog.report.source == str(saved)


def test_only_a_family_with_a_validity_report_offers_it(qtbot):
    window = EditorWindow(open_document("blocks"))
    assert world_entry(window) is None and window.validity is None
    window.close()


def test_saving_writes_the_commands_json_and_never_replaces_another_file(editor, bench, qtbot, tmp_path, capsys):
    dialog = open_report(qtbot, editor.validity, lambda: editor.ask_validity(bench))
    expected = json.loads(cli(capsys, "validity", str(bench), "--format", "json"))
    target = tmp_path / "report.json"
    assert dialog.ask_save(target) == target and json.loads(target.read_text()) == expected
    assert dialog.ask_save(target) == target  # a previous report is replaced
    episode = tmp_path / "episode.json"
    shutil.copy(next((DEMO_RUN / "episodes").glob("*.json")), episode)
    before = episode.read_bytes()
    assert dialog.ask_save(episode) is None and episode.read_bytes() == before
    assert str(episode) in dialog.message.text() and "not a validity report" in dialog.message.text()
    assert dialog.ask_save(tmp_path) is None and "is a folder" in dialog.message.text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["episode.json", "report.json"]  # no temporary left


def test_copy_table_puts_the_commands_text_on_the_clipboard(editor, bench, qtbot, capsys):
    dialog = open_report(qtbot, editor.validity, lambda: editor.ask_validity(bench))
    dialog.copy_button.click()
    assert QGuiApplication.clipboard().text() == cli(capsys, "validity", str(bench)).rstrip("\n")


def test_the_app_offers_it_for_a_run_of_a_family_that_has_it(qtbot, bench, tmp_path):
    window = MainWindow()
    window.remembers_layout = False
    qtbot.addWidget(window)
    action = window.actions_by_name["validity"]
    run_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Run")
    assert isinstance(run_menu, QMenu) and action in run_menu.actions()
    assert window.open_run(DEMO_RUN) and not action.isEnabled()  # blocks has no validity report
    out = tmp_path / "run"
    assert main(["run", "--world", "rooms", "--tasks", str(bench), "--out", str(out), "--episodes", "2"]) == 0
    assert window.open_run(out) and action.isEnabled()
    dialog = open_report(qtbot, window.validity, lambda: window.ask_validity(bench))
    assert dialog.report.source == str(bench) and dialog.rows()[0][:3] == ["group", "n", "chance"]
