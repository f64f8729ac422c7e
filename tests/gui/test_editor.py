"""The editor window driven as a person would: place with a tool by clicking in the 3D view, undo and redo,
edit a block's fields, delete, save, autosave, restore, ask before closing, play what was authored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from simlab.gui.editor import EditorWindow, offer_autosave
from simlab.worlds import open_document
from simlab.worlds.blocks.scene import CAMERAS, cell_centre
from tests.gui.conftest import wait_shown
from tests.gui.editing import click_world


@pytest.fixture
def editor(qtbot):
    window = EditorWindow(open_document("blocks"))
    window.show()
    wait_shown(qtbot, window)
    window.canvas.set_camera(CAMERAS["builder"])  # straight down: a cell is where it is drawn
    window.canvas.plotter.render()
    yield window
    window.undo_stack.setClean()  # nothing to ask about: closed here, not by qtbot (it closes before this)
    window.close()


def test_a_click_with_a_tool_places_a_block_there_and_undo_redo_walk_it(editor, qtbot):
    editor.add_panel.choose("small red")
    x, y = cell_centre((1, 2))
    click_world(qtbot, editor, (x, y, 0.0))
    assert [e.label for e in editor.document.entities()] == ["small red at (1,2) layer 0"]
    assert editor.selected == "block:1,2:0" and editor.canvas.count("block") == 1
    assert editor.windowTitle().endswith("*")
    click_world(qtbot, editor, (x, y, 0.0))  # on the same cell: stacked on it
    assert editor.document.state("block:1,2:1") is not None
    editor.undo_stack.undo()
    editor.undo_stack.undo()
    assert editor.document.entities() == [] and editor.canvas.count("block") == 0
    editor.undo_stack.redo()
    assert editor.canvas.count("block") == 1 and editor.undo_stack.undoText() == "Place small red at (1,2) layer 0"


def test_a_refused_placement_says_why_and_changes_nothing(editor, qtbot):
    editor.add_panel.choose("large blue (domino)")
    click_world(qtbot, editor, (*cell_centre((0, 0)), 0.0))  # a domino needs two cells: a click is not enough
    assert editor.document.entities() == [] and editor.undo_stack.count() == 0
    assert "drag across two adjacent cells" in editor.statusBar().currentMessage()


def test_the_properties_form_changes_the_selected_block_and_delete_removes_it(editor):
    assert editor.add("small green") and editor.selected is not None
    form = editor.properties.form
    assert form is not None and form.isVisible()
    form.set_values({"code": "small yellow"} if "code" in form.editors else {next(iter(form.editors)): "small yellow"})
    editor.properties.apply_button.click()
    assert "yellow" in editor.entity_list.topLevelItem(0).child(0).text(0)
    editor.delete_action.trigger()
    assert editor.document.entities() == [] and editor.selected is None
    editor.undo_stack.undo()
    assert len(editor.document.entities()) == 1


def test_the_agents_pictures_follow_the_edits(editor):
    before = {caption: view.pixmap().toImage() for caption, view in editor.pictures.views.items()}
    assert len(before) == 4  # each director's wall and the builder's board
    editor.add("small green")
    after = {caption: view.pixmap().toImage() for caption, view in editor.pictures.views.items()}
    assert any(after[c] != before[c] for c in before)


def test_saving_autosave_and_restoring_unsaved_changes(editor, qtbot, tmp_path, monkeypatch):
    editor.add("small green")
    path = editor.save(tmp_path / "tower.json")
    assert path is not None and not editor.dirty and not editor.windowTitle().endswith("*")
    assert json.loads(path.read_text())["format"]
    editor.add("small blue")
    autosave = editor.autosave()
    assert autosave == tmp_path / ".tower.json.autosave" and autosave.exists()
    reopened = EditorWindow(open_document(path))
    monkeypatch.setattr(QMessageBox, "question", lambda *_args: QMessageBox.StandardButton.Yes)
    assert offer_autosave(reopened)
    assert len(reopened.document.entities()) == 2 and reopened.dirty and reopened.document.path == path
    assert reopened.save() == path and not autosave.exists()  # saving drops the autosave
    reopened.close()


def test_closing_with_unsaved_changes_asks_and_cancel_keeps_the_window(editor, monkeypatch):
    editor.add("small green")
    answers = [QMessageBox.StandardButton.Cancel]
    monkeypatch.setattr(QMessageBox, "question", lambda *_args: answers.pop(0))
    assert not editor.close() and editor.isVisible()
    untitled = editor.autosave()
    assert untitled is not None and untitled.name == "untitled-blocks.json"
    answers.append(QMessageBox.StandardButton.Discard)
    assert editor.close() and not untitled.exists()


def test_play_this_starts_a_live_episode_on_the_authored_structure(editor, qtbot):
    from simlab.gui.editor_play import PlayDialog

    for name in ("small green", "small blue", "small red"):
        editor.add(name)
    dialog = PlayDialog(editor.document, editor)
    dialog.accept()
    assert dialog.main_window is not None
    qtbot.addWidget(dialog.main_window)
    session = dialog.main_window.live.session
    qtbot.waitUntil(lambda: session.state in ("finished", "failed"), timeout=30000)
    assert session.state == "finished" and session.episode.task["board"]["stacks"]["0,0"]
    dialog.main_window.close()


def test_the_cli_names_a_bad_target_before_any_window(capsys):
    from simlab.cli import main

    assert main(["edit", "puzzles"]) == 2
    assert "has nothing to author" in capsys.readouterr().err
    assert main(["edit", str(Path("no/such/file.json"))]) == 2
    assert "no such file" in capsys.readouterr().err


def test_selecting_another_kind_of_entity_shows_one_form_not_two_overlapping(editor):
    from simlab.gui.forms import ActionForm

    editor.add("small green")
    small = editor.selected
    editor.add("large blue (domino)")  # its form offers other choices: the form is rebuilt
    editor.select(small)
    shown = [form for form in editor.properties.findChildren(ActionForm) if form.isVisible()]
    assert shown == [editor.properties.form]


def test_a_long_summary_leaves_the_side_docks_their_width(editor, qtbot):
    """A structure's summary runs long: it wraps on its own line instead of widening the 3D view until the
    Scene and Add docks are slivers."""
    widths = {name: editor.docks[name].width() for name in ("Scene", "Add")}
    editor.summary.setText("; ".join(f"{k} blocks of a long structure summary" for k in range(40)))
    editor.centralWidget().layout().activate()
    qtbot.wait(50)
    assert editor.centralWidget().minimumSizeHint().width() < 600
    assert all(editor.docks[name].width() >= min(widths[name], 150) for name in widths)
