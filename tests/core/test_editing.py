"""The editor's contract without any family: edits undo and redo, a gesture is one undo step, dirty tracks saves."""

from __future__ import annotations

import json
from typing import Any

import pytest

from simlab.core.editing import Change, Edit, EditError, EditorDocument, Entity, History, change, write_json


class Notes(EditorDocument):
    """The smallest document: named notes with a position; enough to drive the history."""

    family = "notes"

    def __init__(self) -> None:
        super().__init__()
        self.notes: dict[str, dict[str, Any]] = {}
        self.puts = 0

    def entities(self):
        return [Entity(k, k, "notes") for k in sorted(self.notes)]

    def state(self, entity):
        return dict(self.notes[entity]) if entity in self.notes else None

    def put(self, entity, state):
        self.puts += 1
        if state is None:
            self.notes.pop(entity, None)
        else:
            self.notes[entity] = dict(state)

    def palette(self):
        return []

    def add(self, name, at=None):
        return Edit(f"Add {name}", (change(self, name, {"x": 0.0}),), select=name)

    def fields(self, entity):
        return ()

    def values(self, entity):
        return self.state(entity) or {}

    def set_values(self, entity, values):
        return Edit(f"Change {entity}", (change(self, entity, {**self.values(entity), **values}),))

    def move(self, entity, to, gesture=None):
        return Edit(f"Move {entity}", (change(self, entity, {"x": to[0]}),), merge_key=gesture)

    def scene_items(self, selected=None):
        return []

    def pictures(self):
        return {}

    def to_json(self):
        return {"notes": self.notes}

    def playable(self):
        raise EditError("notes are not a world")


def test_undo_and_redo_walk_the_edits_back_and_forth():
    doc = Notes()
    history = History(doc)
    history.push(doc.add("a"))
    history.push(doc.set_values("a", {"x": 2.0}))
    history.push(doc.remove("a"))
    assert doc.notes == {}
    assert history.undo().text == "Delete a" and doc.notes == {"a": {"x": 2.0}}
    assert history.undo().text == "Change a" and doc.notes == {"a": {"x": 0.0}}
    assert history.redo().text == "Change a" and doc.notes == {"a": {"x": 2.0}}
    history.push(doc.set_values("a", {"x": 5.0}))  # a new edit drops what was undone
    assert history.redo() is None and doc.notes == {"a": {"x": 5.0}}
    with pytest.raises(EditError, match="no 'b' to delete"):
        doc.remove("b")


def test_the_steps_of_one_drag_are_one_undo_step_and_another_drag_is_another():
    doc = Notes()
    history = History(doc)
    history.push(doc.add("a"))
    for x in (0.5, 1.0, 1.5):
        history.push(doc.move("a", (x, 0.0, 0.0), gesture="drag-1"))
    history.push(doc.move("a", (3.0, 0.0, 0.0), gesture="drag-2"))
    assert len(history.done) == 3 and doc.notes["a"] == {"x": 3.0}
    history.undo()
    assert doc.notes["a"] == {"x": 1.5}
    history.undo()  # the whole first drag at once
    assert doc.notes["a"] == {"x": 0.0}


def test_merging_keeps_the_first_before_and_the_last_after_of_every_entity():
    first = Edit("Move a", (Change("a", {"x": 0}, {"x": 1}),), merge_key="g")
    later = Edit("Move a and b", (Change("a", {"x": 1}, {"x": 2}), Change("b", None, {"x": 9})), merge_key="g")
    joined = first.merged(later)
    assert joined is not None and joined.changes == (Change("a", {"x": 0}, {"x": 2}), Change("b", None, {"x": 9}))
    assert first.merged(Edit("other", (), merge_key="h")) is None and Edit("x", ()).merged(first) is None


def test_dirty_follows_saves_undos_and_a_saved_state_replaced():
    doc = Notes()
    history = History(doc)
    assert not history.dirty
    history.push(doc.add("a"))
    assert history.dirty
    history.mark_saved()
    assert not history.dirty
    history.push(doc.move("a", (1.0, 0, 0), gesture="g"))
    history.push(doc.move("a", (2.0, 0, 0), gesture="g"))
    assert history.dirty and len(history.done) == 2  # a drag after a save is not merged into the saved edit
    history.undo()
    assert not history.dirty
    history.undo()
    history.push(doc.add("b"))  # the saved state is now out of reach: dirty for good
    assert history.dirty
    history.undo()
    assert history.dirty


def test_files_are_written_whole_and_autosave_sits_beside_them(tmp_path):
    doc = Notes()
    with pytest.raises(EditError, match="choose where to save"):
        doc.save()
    doc.notes = {"a": {"x": 1.0}}
    path = doc.save(tmp_path / "deep" / "notes.json")
    assert json.loads(path.read_text()) == {"notes": {"a": {"x": 1.0}}}
    assert doc.autosave_path() == tmp_path / "deep" / ".notes.json.autosave"
    write_json(path, {"notes": {}})
    assert not list(path.parent.glob("*.partial"))
