"""The boards editor without a window: pieces placed by clicks and bridges by drags in the scene's geometry,
every edit checked by the game's rules, undo and redo, the programmer's pictures following the edits, and
targets files the CLI plays."""

from __future__ import annotations

import json

import numpy as np
import pytest

from simlab.cli import main
from simlab.core.editing import EditError, History, write_json
from simlab.core.recording import load_run
from simlab.testing import document_snapshot, entity_states
from simlab.worlds import get_family
from simlab.worlds.boards.editing import EDITOR, TargetDocument
from simlab.worlds.boards.model import Cell
from simlab.worlds.boards.scene import LEVEL_HEIGHT, cell_centre
from simlab.worlds.boards.targets import generate_targets, save_targets


def at(cell: Cell, level: int = 0, rows: int = 8) -> tuple[float, float, float]:
    """A world point over ``cell`` on top of ``level`` pieces (0: the plate)."""
    x, y = cell_centre(cell, rows)
    return (x, y, level * LEVEL_HEIGHT)


@pytest.fixture
def doc() -> TargetDocument:
    return EDITOR.new({})


def test_the_family_declares_the_editor_and_the_palette_holds_every_shape_in_every_colour():
    assert get_family("boards").load_editor() is EDITOR
    palette = EDITOR.new({}).palette()
    assert len(palette) == 16 and palette[0].name == "red washer" and palette[-1].name == "yellow bridge"
    assert {e.group for e in palette} == {"washers", "nuts", "screws", "bridges"}


def test_clicks_stack_pieces_level_by_level_and_removal_takes_only_the_top(doc):
    history = History(doc)
    history.push(doc.click("floor", at((2, 5)), "red washer"))
    history.push(doc.click("piece:2,5:1", at((2, 5), 1), "blue nut"))  # on the washer's top
    history.push(doc.click("piece:2,5:2", at((2, 5), 2), "green screw"))
    assert doc.state("piece:2,5:2") == {"shape": "nut", "colour": "blue", "x": 2, "y": 5, "level": 2}
    assert [e.group for e in doc.entities()] == ["level 1", "level 2", "level 3"]
    with pytest.raises(EditError, match="Cannot place a shape on top of a screw"):
        doc.click("piece:2,5:3", at((2, 5), 3), "yellow washer")
    with pytest.raises(EditError, match="only the top piece of a stack comes off: a blue nut sits on it"):
        doc.remove("piece:2,5:1")
    for level in (3, 2, 1):
        history.push(doc.remove(f"piece:2,5:{level}"))
    assert doc.entities() == []


def test_a_bridge_is_laid_by_a_drag_across_two_cells_along_a_row_or_a_column(doc):
    history = History(doc)
    history.push(doc.click("floor", at((4, 4)), "red washer"))
    history.push(doc.click("floor", at((4, 3)), "red nut"))
    history.push(doc.stroke([at((4, 4), 1), (3.0, 4.5, 0.3), at((4, 3), 1)], "blue bridge"))  # right to left
    assert doc.state("piece:4,3:2") == {"shape": "bridge-h", "colour": "blue", "x": 4, "y": 3, "level": 2}
    history.push(doc.stroke([at((7, 1)), at((6, 1))], "green bridge"))
    assert doc.state("piece:6,1:1") == {"shape": "bridge-v", "colour": "green", "x": 6, "y": 1, "level": 1}
    assert doc.board.stack(7, 1)[0].name == "bridge-v-bottom"
    with pytest.raises(EditError, match="drag across them"):
        doc.click("floor", at((1, 1)), "red bridge")
    with pytest.raises(EditError, match="row 1, col 1 and row 2, col 2 are not"):
        doc.stroke([at((1, 1)), at((2, 2))], "red bridge")
    with pytest.raises(EditError, match="only the top piece of a stack comes off: a blue bridge-h sits on it"):
        doc.remove("piece:4,4:1")


def test_an_illegal_placement_is_refused_with_the_rules_reason_and_changes_nothing(doc):
    history = History(doc)
    history.push(doc.click("floor", at((3, 3)), "red washer"))
    history.push(doc.click("floor", at((3, 3)), "blue nut"))
    before = document_snapshot(doc)
    refusals = [
        (lambda: doc.stroke([at((3, 3)), at((3, 4))], "green bridge"), "bridge-h can only be placed at levels 1"),
        (lambda: doc.click("floor", at((3, 3)), "green washer"), r"Cannot stack same shapes .* \(3,3\)"),
        (lambda: doc.click("floor", at((3, 3)), "blue screw"), r"Cannot stack same colors .* \(3,3\)"),
        (lambda: doc.stroke([at((3, 2)), at((3, 3))], "green bridge"), "adjacent cell has different depth"),
        (lambda: doc.click("floor", (9.5, 4.0, 0.0), "red nut"), "off the 8x8 board"),
        (lambda: doc.click("floor", at((1, 1)), "purple nut"), "unknown piece"),
    ]
    for attempt, reason in refusals:
        with pytest.raises(EditError, match=reason):
            attempt()
    assert document_snapshot(doc) == before and len(history.done) == 2
    assert doc.click("floor", at((1, 1))) is None  # without a tool a click only selects


def test_a_change_of_shape_or_colour_is_checked_against_the_whole_stack(doc):
    history = History(doc)
    history.push(doc.click("floor", at((5, 5)), "red washer"))
    history.push(doc.click("floor", at((5, 5)), "blue nut"))
    assert [f.name for f in doc.fields("piece:5,5:1")] == ["shape", "colour"] and doc.values("piece:5,5:1") == {
        "shape": "washer",
        "colour": "red",
    }
    with pytest.raises(EditError, match=r"field 'shape': blue nut at row 5, col 5, level 2: Cannot place .* screw"):
        doc.set_values("piece:5,5:1", {"shape": "screw"})
    with pytest.raises(EditError, match=r"field 'colour': .*Cannot stack same colors"):
        doc.set_values("piece:5,5:1", {"colour": "blue"})
    with pytest.raises(EditError, match="field 'level'"):
        doc.set_values("piece:5,5:1", {"level": 3})
    history.push(doc.set_values("piece:5,5:1", {"colour": "yellow"}))
    assert doc.board.stack(5, 5)[0].colour == "yellow"


def test_undo_and_redo_walk_the_edits_back_and_forth(doc):
    history = History(doc)
    history.push(doc.add("red nut"))
    history.push(doc.add("green bridge"))
    history.push(doc.remove("piece:1,1:1"))
    assert dict(entity_states(doc)) == {
        "piece:1,2:1": {"shape": "bridge-h", "colour": "green", "x": 1, "y": 2, "level": 1}
    }
    history.undo()
    history.undo()
    assert list(dict(entity_states(doc))) == ["piece:1,1:1"]
    history.undo()
    assert dict(entity_states(doc)) == {} and history.undo() is None
    history.redo()
    history.redo()
    assert doc.summary() == (
        "components: 2 (the paper's targets have 2-5), bridges: 1, levels: 1, on the 8x8 board; legal under the rules"
    )


def test_the_programmers_pictures_follow_every_edit(doc):
    history = History(doc)
    assert list(doc.pictures()) == ["target"]
    empty = np.asarray(doc.pictures()["target"])
    history.push(doc.click("floor", at((1, 1)), "red washer"))
    history.push(doc.click("floor", at((1, 1)), "green nut"))
    assert list(doc.pictures()) == ["target", "target, levels 1 to 1", "target, levels 1 to 2"]
    assert not np.array_equal(np.asarray(doc.pictures()["target"]), empty)
    history.undo()
    history.undo()
    assert np.array_equal(np.asarray(doc.pictures()["target"]), empty)
    assert "row: 1" not in doc.run("Show the programmer's text view")


def test_the_scene_shows_the_board_and_outlines_the_selection(doc):
    history = History(doc)
    history.push(doc.stroke([at((2, 2)), at((3, 2))], "yellow bridge"))
    keys = {item.key for item in doc.scene_items("piece:2,2:1")}
    assert {"floor", "label:row:8", "piece:2,2:1", "selected:2,2", "selected:3,2"} <= keys
    assert doc.entity_of("piece:2,2:1") == "piece:2,2:1" and doc.entity_of("floor") is None
    assert set(doc.cameras()) == {"iso", "top", "front", "side"}
    assert doc.inspect("piece:2,2:1")[1] == "the robot places it with put(board, 'bridge-v', 'yellow', 2, 2)"


def test_a_saved_target_plays_from_the_command_line(doc, tmp_path):
    history = History(doc)
    history.push(doc.click("floor", at((2, 2)), "red washer"))
    history.push(doc.click("floor", at((2, 3)), "blue nut"))
    history.push(doc.stroke([at((2, 2), 1), at((2, 3), 1)], "green bridge"))
    assert doc.run("Check against the rules").startswith("Legal: 3 put calls build it")
    path = doc.save(tmp_path / "mine.json")
    get_family("boards").tasks.validate(doc.playable())
    out = tmp_path / "run"
    assert main(["run", "--world", "boards", "--tasks", str(path), "--out", str(out)]) == 0
    (episode,) = load_run(out).episodes()
    assert episode.task["id"] == "board_edited" and episode.summary["outcome"] == "success"


def test_open_edits_the_first_target_and_save_keeps_the_others(tmp_path):
    targets = generate_targets(3, seed=5)
    folder = tmp_path / "bench"
    file = save_targets(targets, folder, format="simlab.boards.targets", version=1)
    assert EDITOR.can_open(folder) and EDITOR.can_open(file)
    doc = EDITOR.open(folder)
    assert doc.path == file and doc.board == targets[0].board() and doc.target_id == targets[0].id
    copy = doc.save(tmp_path / "copy.json")
    assert json.loads(copy.read_text())["targets"] == json.loads(file.read_text())["targets"]  # unedited: as it was
    top = max(doc.entities(), key=lambda e: doc.state(e.id)["level"])
    History(doc).push(doc.remove(top.id))
    saved = json.loads(doc.save().read_text())
    assert [t["id"] for t in saved["targets"]] == [t.id for t in targets]
    assert saved["targets"][1:] == [t.to_json() for t in targets[1:]]
    assert len(saved["targets"][0]["placements"]) == targets[0].components - 1
    assert get_family("boards").tasks.load(copy)[0] == doc.playable() == EDITOR.open(copy).playable()


def test_an_empty_board_is_autosaved_but_neither_saved_nor_played(doc, tmp_path):
    with pytest.raises(EditError, match="a target needs at least one piece"):
        doc.save(tmp_path / "empty.json")
    with pytest.raises(EditError, match="a target needs at least one piece"):
        doc.playable()
    autosave = tmp_path / ".empty.json.autosave"
    write_json(autosave, EDITOR.new({"rows": 5, "id": "wip"}).to_json())  # what the app's autosave writes
    restored = EDITOR.open(autosave)
    assert restored.entities() == [] and restored.rows == 5 and restored.target_id == "wip"
    small = EDITOR.new({"rows": 3, "cols": 4, "id": "tiny"})
    assert small.board.rows == 3 and small.cell_at(at((3, 4), rows=3)) == (3, 4)
    for bad, field in (({"rows": 40}, "rows"), ({"cols": "8"}, "cols"), ({"id": "a/b"}, "id")):
        with pytest.raises(EditError, match=f"field '{field}'"):
            EDITOR.new(bad)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("[1, 2", "line 1"),
        ('{"format": "simlab.blocks.structure", "targets": []}', "field 'targets'"),
        ('{"targets": [{"id": "x"}]}', r"targets\[0\]: .*expected id and placements"),
        (
            '{"targets": [{"id": "x", "placements": [{"shape": "screw", "colour": "red", "x": 1, "y": 1}, '
            '{"shape": "nut", "colour": "blue", "x": 1, "y": 1}]}]}',
            r"targets\[0\]: .*Cannot place a shape on top of a screw",
        ),
    ],
)
def test_bad_files_are_refused_naming_the_file_and_the_field(tmp_path, content, problem):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(EditError, match=problem) as caught:
        EDITOR.open(path)
    assert str(path) in str(caught.value)
    assert not EDITOR.can_open(path) or "format" not in content
