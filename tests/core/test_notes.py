"""Notes, tags and bookmarks on episodes and turns (simlab/core/notes.py), kept in RUN/notes.json."""

from __future__ import annotations

import hashlib
import json

import pytest

from simlab.core.errors import ConfigError, FormatError
from simlab.core.notes import NOTES_FILE, RunNotes, change_notes
from simlab.core.writing import WriteRefused, sidecar_path
from tests.said_run import demo_copy

EPISODE = "structure_002-r0"


@pytest.fixture
def run_dir(tmp_path):
    return demo_copy(tmp_path)


def _digests(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((folder / "episodes").iterdir())}


def test_notes_tags_and_bookmarks_survive_reopening_the_run(run_dir):
    before = _digests(run_dir)
    notes = RunNotes.load(run_dir)
    notes.add_tag(EPISODE, None, "misheard")
    notes.add_tag(EPISODE, 4, "colour")
    notes.add_tag(EPISODE, 4, "colour")  # once is enough
    notes.set_note(EPISODE, 4, "the builder heard red")
    assert notes.toggle_bookmark(EPISODE, 7) is True
    notes.save()
    again = RunNotes.load(run_dir)
    assert again.tags_of(EPISODE) == ["colour", "misheard"]
    assert again.marked_turns(EPISODE) == [4, 7]
    assert again.get(EPISODE, 4).note == "the builder heard red" and again.get(EPISODE, 7).bookmark
    assert [m.turn for m in again.marks(tag="colour")] == [4]
    assert _digests(run_dir) == before  # never inside a recording


def test_a_mark_left_empty_is_dropped(run_dir):
    notes = change_notes(run_dir, lambda n: n.add_tag(EPISODE, 3, "x"))
    notes = change_notes(run_dir, lambda n: n.remove_tag(EPISODE, 3, "x"))
    assert len(RunNotes.load(run_dir)) == 0 and notes.get(EPISODE, 3) is None


def test_a_notes_file_of_a_newer_version_is_refused_by_name(run_dir):
    (run_dir / NOTES_FILE).write_text(json.dumps({"format": "simlab.notes", "version": 2, "marks": []}))
    with pytest.raises(FormatError, match=r"notes.json, field 'version': simlab.notes version 2 is newer"):
        RunNotes.load(run_dir)


@pytest.mark.parametrize(
    ("marks", "where"),
    [
        ([{"episode_id": "../x", "turn": None}], "marks.0.episode_id"),
        ([{"episode_id": "e", "turn": -1}], "marks.0.turn"),
        ([{"episode_id": "e", "tags": ["two words"]}], "marks.0.tags.0"),
        ([{"episode_id": "e", "bookmark": "yes"}], "marks.0.bookmark"),
        ([{"episode_id": "e", "colour": "red"}], "marks.0.colour"),
        ([{"episode_id": "e", "turn": 2}, {"episode_id": "e", "turn": 2}], "marks[1]"),
    ],
)
def test_a_bad_notes_file_is_refused_naming_the_field(run_dir, marks, where):
    (run_dir / NOTES_FILE).write_text(json.dumps({"format": "simlab.notes", "version": 1, "marks": marks}))
    with pytest.raises(FormatError, match=where.replace("[", r"\[")):
        RunNotes.load(run_dir)


@pytest.mark.parametrize("tag", ["", "two words", "x" * 65, "a\nb", "<b>"])
def test_a_tag_must_be_one_short_word(run_dir, tag):
    with pytest.raises(ConfigError, match="tag"):
        RunNotes.load(run_dir).add_tag(EPISODE, None, tag)


def test_a_link_planted_at_the_notes_file_is_refused_and_its_target_left_alone(run_dir, tmp_path):
    mine = tmp_path / "mine.txt"
    mine.write_text("my file")
    (run_dir / NOTES_FILE).symlink_to(mine)
    notes = RunNotes(run_dir)
    notes.add_tag(EPISODE, None, "x")
    with pytest.raises(WriteRefused, match="symbolic link"):
        notes.save()
    assert mine.read_text() == "my file"


def test_sidecars_are_written_only_by_name_and_only_into_a_run(run_dir, tmp_path):
    with pytest.raises(WriteRefused, match="not a file SimLab keeps"):
        sidecar_path(run_dir, "run.json")
    with pytest.raises(WriteRefused, match="not a run folder"):
        RunNotes(tmp_path).save()
    assert not (tmp_path / NOTES_FILE).exists()
