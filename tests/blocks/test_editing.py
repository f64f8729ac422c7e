"""The blocks editor without a window: blocks placed by clicks and drags in the scene's geometry, every edit
checked by the engine, undo and redo, the directors' walls following the edits, and files the CLI plays."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from simlab.cli import main
from simlab.core.editing import EditError, History
from simlab.core.recording import load_run
from simlab.testing import document_snapshot, entity_states
from simlab.worlds import get_family
from simlab.worlds.blocks.editing import EDITOR, StructureDocument
from simlab.worlds.blocks.generator import load_structures
from simlab.worlds.blocks.model import Cell
from simlab.worlds.blocks.scene import cell_centre

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "scenes" / "blocks" / "demo_structures"


def at(cell: Cell, z: float = 0.0) -> tuple[float, float, float]:
    """A world point over ``cell`` at height ``z`` (0: the floor; layer k's top face is at about k + 1)."""
    x, y = cell_centre(cell)
    return (x, y, z)


@pytest.fixture
def doc() -> StructureDocument:
    return EDITOR.new({})


def test_the_family_declares_the_editor_and_the_palette_names_every_block():
    assert get_family("blocks").load_editor() is EDITOR
    names = [entry.name for entry in EDITOR.new({}).palette()]
    assert len(names) == 10 and names[0] == "small green" and "large green (domino)" in names
    assert all(not name.startswith("large") for name in names[:5])


def test_clicks_stack_blocks_layer_by_layer_and_removal_takes_only_the_top(doc):
    history = History(doc)
    history.push(doc.click("floor", at((0, 0)), "small green"))
    history.push(doc.click("block:0,0:0", at((0, 0), 0.97), "small red"))  # on the green block's top face
    history.push(doc.click("block:0,0:1", at((0, 0), 1.97), "bs"))  # a code works as a tool too
    assert [e.id for e in doc.entities()] == ["block:0,0:0", "block:0,0:1", "block:0,0:2"]
    assert doc.state("block:0,0:1") == {"code": "rs", "cells": [[0, 0]], "layer": 1}
    with pytest.raises(EditError, match=r"stack \(0,0\) is full"):
        doc.click("block:0,0:2", at((0, 0), 2.97), "small yellow")
    with pytest.raises(EditError, match=r"only the top block of \(0,0\) can be removed"):
        doc.remove("block:0,0:0")
    for layer in (2, 1, 0):
        history.push(doc.remove(f"block:0,0:{layer}"))
    assert doc.entities() == []


def test_a_domino_is_laid_by_a_drag_across_two_cells(doc):
    history = History(doc)
    history.push(doc.stroke([at((1, 0)), (0.3, 1.0, 0.0), at((1, 1))], "large orange (domino)"))
    assert doc.state("block:1,0-1,1:0") == {"code": "ol", "cells": [[1, 0], [1, 1]], "layer": 0}
    history.push(doc.click("floor", at((2, 0)), "small blue"))
    history.push(doc.click("floor", at((2, 1)), "small blue"))
    # a drag reaching into the next row lays the block on top of both small ones
    history.push(doc.stroke([at((2, 1), 1.0), at((2, 0), 1.0), at((1, 0), 1.0)], "large yellow (domino)"))
    assert doc.state("block:2,0-2,1:1") == {"code": "yl", "cells": [[2, 0], [2, 1]], "layer": 1}
    with pytest.raises(EditError, match=r"is a large block.*drag across two adjacent cells"):
        doc.click("floor", at((0, 2)), "large green (domino)")
    with pytest.raises(EditError, match="not next to"):
        doc.stroke([at((0, 0)), at((1, 1))], "large green (domino)")
    history.push(doc.click("floor", at((0, 0)), "small red"))
    history.push(doc.stroke([at((0, 0), 1.0), at((1, 0), 1.0)], "large green (domino)"))
    with pytest.raises(EditError, match=r"the large ol at \(1,1\) is covered at \(1,0\)"):
        doc.remove("block:1,0-1,1:0")


def test_a_click_through_a_directors_wall_places_on_the_stack_against_it(doc):
    history = History(doc)
    history.push(doc.click("wall:D2", (2.2, 2.6, 0.4), "small red"))  # from D2's eye, through the far wall
    history.push(doc.click("wall:D1", (-0.6, 0.1, 1.2), "small blue"))
    # a drag along the plate's near edge (past the cells) lays a domino on the near row
    history.push(doc.stroke([(2.2, -0.55, 0.0), (1.6, -0.55, 0.0), (1.1, -0.55, 0.0)], "large green (domino)"))
    assert [e.id for e in doc.entities()] == ["block:0,2:0", "block:2,0:0", "block:2,1-2,2:0"]


def test_an_illegal_placement_is_refused_with_the_engines_reason_and_changes_nothing(doc):
    history = History(doc)
    history.push(doc.click("floor", at((0, 0)), "small green"))
    before = document_snapshot(doc)
    with pytest.raises(EditError, match=r"needs both stacks at the same height: \(0,0\) has 1, \(0,1\) has 0"):
        doc.stroke([at((0, 0)), at((0, 1))], "large red (domino)")
    with pytest.raises(EditError, match="off the 3x3 board"):
        doc.click("frustum:D1", (-3.6, 1.0, 1.5), "small red")
    with pytest.raises(EditError, match="unknown block"):
        doc.click("floor", at((1, 1)), "purple")
    assert document_snapshot(doc) == before and len(history.done) == 1
    assert doc.click("floor", at((1, 1))) is None  # without a tool a click only selects


def test_undo_and_redo_walk_the_edits_back_and_forth(doc):
    history = History(doc)
    history.push(doc.click("floor", at((0, 1)), "small green"))
    history.push(doc.click("floor", at((0, 2)), "small red"))
    history.push(doc.stroke([at((0, 1), 1.0), at((0, 2), 1.0)], "large blue (domino)"))
    history.push(doc.set_values("block:0,1-0,2:1", {"code": "large yellow (domino)"}))
    full = dict(entity_states(doc))
    assert history.undo().text.startswith("Make large blue (domino)")
    assert doc.state("block:0,1-0,2:1")["code"] == "bl"
    history.undo()
    assert "block:0,1-0,2:1" not in dict(entity_states(doc)) and "legal" in doc.summary()
    history.undo()
    history.undo()
    assert dict(entity_states(doc)) == {} and history.undo() is None
    for _ in range(4):
        history.redo()
    assert dict(entity_states(doc)) == full and doc.board.codes((0, 2)) == ["rs", "yl"]


def test_a_directors_wall_follows_every_edit(doc):
    history = History(doc)
    wall = "D1: left wall"
    empty_view, empty_picture = doc.views()["D1"], np.asarray(doc.pictures()[wall])
    history.push(doc.click("floor", at((2, 0)), "small orange"))
    assert doc.views()["D1"]["layers"][0] == [None, None, {"color": "orange", "size": 1}]
    assert not np.array_equal(np.asarray(doc.pictures()[wall]), empty_picture)
    history.undo()
    assert doc.views()["D1"] == empty_view
    assert np.array_equal(np.asarray(doc.pictures()[wall]), empty_picture)
    assert set(doc.pictures()) == {"D1: left wall", "D2: far wall", "D3: right wall", "builder: board from above"}


def test_blocks_no_director_sees_are_warned_about(doc):
    history = History(doc)
    history.push(doc.click("floor", at((1, 1)), "small green"))
    history.push(doc.click("floor", at((1, 1)), "small red"))
    hidden = [e for e in doc.entities() if e.warning]
    assert [e.id for e in hidden] == ["block:1,1:0"]
    assert doc.summary() == (
        "blocks: 2 (2 pieces, 0 large), tier simple; hidden from every director: (1,1) layer 0; legal under the rules"
    )
    assert doc.inspect("block:1,1:1")[1:] == ["seen by D2 (far wall)", "on top: it can be removed"]
    assert doc.inspect("block:1,1:0")[1:] == ["no director sees it", "covered: remove the blocks above it first"]
    doc.interior = "reference"  # the released code: nobody looks into the middle
    assert [e.id for e in doc.entities() if e.warning] == ["block:1,1:0", "block:1,1:1"]
    assert "interior" not in doc.views()["D2"]


def test_fields_recolour_a_block_of_the_same_size_only(doc):
    History(doc).push(doc.click("floor", at((0, 0)), "small green"))
    (field,) = doc.fields("block:0,0:0")
    assert field.kind == "choice" and field.choices[0] == "small green" and len(field.choices) == 5
    assert doc.values("block:0,0:0") == {"code": "small green"}
    assert doc.set_values("block:0,0:0", {"code": "bs"}).changes[0].after["code"] == "bs"
    with pytest.raises(EditError, match="field 'code': a small block can only become another small one"):
        doc.set_values("block:0,0:0", {"code": "large blue (domino)"})
    with pytest.raises(EditError, match="field 'layer'"):
        doc.set_values("block:0,0:0", {"layer": 2})


def test_add_finds_the_lowest_place_and_the_scene_outlines_the_selection(doc):
    history = History(doc)
    history.push(doc.add("small green"))
    history.push(doc.add("large red (domino)"))
    assert [e.id for e in doc.entities()] == ["block:0,0:0", "block:0,1-0,2:0"]
    keys = {item.key for item in doc.scene_items("block:0,0:0")}
    assert {"floor", "wall:D1", "frustum:D3", "block:0,0:0", "block:0,1-0,2:0", "selected:block:0,0:0"} <= keys
    assert doc.entity_of("block:0,0:0") == "block:0,0:0" and doc.entity_of("wall:D2") is None
    assert set(doc.cameras()) >= {"D1", "D2", "D3", "builder", "free"}
    assert doc.run("Check against the rules").startswith("Legal: the builder can make it in 2 moves")


def test_a_saved_structure_plays_from_the_command_line(doc, tmp_path):
    history = History(doc)
    for cell in ((0, 0), (0, 1), (1, 0)):
        history.push(doc.click("floor", at(cell), "small green"))
    history.push(doc.stroke([at((0, 0), 1.0), at((0, 1), 1.0)], "large red (domino)"))
    path = doc.save(tmp_path / "mine.json")
    get_family("blocks").tasks.validate(doc.playable())
    out = tmp_path / "run"
    assert main(["run", "--world", "blocks", "--tasks", str(path), "--out", str(out)]) == 0
    (episode,) = load_run(out).episodes()
    assert episode.task["id"] == "structure_edited" and episode.task["board"] == doc.board.to_json()
    assert episode.summary["outcome"] == "success"


def test_open_and_save_round_trip_a_generated_structure(tmp_path):
    source = DEMO / "structure_002.json"
    assert EDITOR.can_open(source) and not EDITOR.can_open(DEMO / "structures.json")
    doc = EDITOR.open(source)
    (original,) = load_structures(source)
    assert doc.board == original.board and doc.structure_id == "structure_002" and doc.path == source
    doc.interior = "reference"
    copy = doc.save(tmp_path / "copy.json")
    again = EDITOR.open(copy)
    assert dict(entity_states(again)) == dict(entity_states(doc)) and again.interior == "reference"
    saved = json.loads(copy.read_text())
    original_json = json.loads(source.read_text())
    assert {k: v for k, v in saved.items() if k != "editor"} == original_json


def test_an_empty_structure_saves_but_does_not_play(doc, tmp_path):
    assert EDITOR.open(doc.save(tmp_path / "empty.json")).entities() == []
    with pytest.raises(EditError, match="place at least one block"):
        doc.playable()
    with pytest.raises(EditError, match="field 'id'"):
        EDITOR.new({"id": "../escape"})


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "line 1"),
        ('{"format": "simlab.rooms.scene", "version": 1}', "field 'format': expected 'simlab.blocks.structure'"),
        (
            '{"format": "simlab.blocks.structures", "version": 1, "structures": ["a"]}',
            "field 'format': an index of several structures",
        ),
        ('{"format": "simlab.blocks.structure", "version": 1, "id": "x", "board": {}}', "field 'stacks'"),
        (
            '{"format": "simlab.blocks.structure", "version": 1, "id": "x", '
            '"board": {"stacks": {"0,0": ["gl"]}, "spans": []}}',
            r"cell \(0,0\) layer 0: gl has no span partner",
        ),
        (
            '{"format": "simlab.blocks.structure", "version": 1, "id": "x", '
            '"board": {"stacks": {}, "spans": []}, "editor": {"interior": "x-ray"}}',
            "field 'editor.interior'",
        ),
    ],
)
def test_bad_files_are_refused_naming_the_file_and_the_field(tmp_path, content, problem):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(EditError, match=problem) as caught:
        EDITOR.open(path)
    assert str(path) in str(caught.value)
    assert not EDITOR.can_open(tmp_path / "missing.json")
