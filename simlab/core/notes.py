"""Notes, tags and bookmarks on a run's episodes and turns, kept beside the run in ``RUN/notes.json`` (format
``simlab.notes``, version 1), never inside a recording: a recording stays what the episode did, and the
researcher's reading of it can change.

A *mark* belongs to an episode (``turn`` null) or to one turn of it, and holds tags (short words, kept
sorted), a note (free text) and a bookmark flag; a mark with none of them is dropped. The file is read
through :mod:`simlab.core.reading` (its bounds, a newer version refused by name) and written whole through
:func:`simlab.core.writing.write_sidecar` (never through a link).

Each change is made on the file as it is on disk (:func:`change_notes` loads, changes and saves), so the
command line and the app can both note things in one run; two changes at the very same moment keep the
later one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from simlab.core.errors import ConfigError, FormatError
from simlab.core.events import MAX_TURN
from simlab.core.reading import check_version, read_json
from simlab.core.recording import SAFE_ID, dumps
from simlab.core.records import checked
from simlab.core.writing import write_sidecar

NOTES_FILE = "notes.json"
NOTES_FORMAT = "simlab.notes"
NOTES_VERSION = 1
MAX_NOTES_BYTES = 64 * 2**20
"""A notes file is written by people: 64 MiB is far more than any run's notes."""
MAX_MARKS = 100_000
MAX_TAGS = 64
"""Tags on one episode or turn."""
MAX_NOTE_CHARS = 20_000
TAG_PATTERN = r"^[\w.:/+#-]{1,64}$"
"""A tag is one word of letters, digits and ``_ . : / + # -`` (so it can be typed after ``--tag`` and shown
in a column), at most 64 characters."""

Tag = Annotated[str, StringConstraints(pattern=TAG_PATTERN)]
Key = tuple[str, int | None]
"""(episode id, turn or None for the episode itself)."""


class Mark(BaseModel):
    """What a researcher put on an episode (``turn`` null) or one of its turns."""

    model_config = ConfigDict(extra="forbid", strict=True)

    episode_id: Annotated[str, StringConstraints(pattern=SAFE_ID.pattern)]
    turn: int | None = Field(None, ge=0, le=MAX_TURN)
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    note: str = Field("", max_length=MAX_NOTE_CHARS)
    bookmark: bool = False

    @property
    def key(self) -> Key:
        return (self.episode_id, self.turn)

    @property
    def empty(self) -> bool:
        return not self.tags and not self.note and not self.bookmark


class NotesFile(BaseModel):
    """The whole ``notes.json``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    format: Literal["simlab.notes"]
    version: int
    marks: list[Mark] = Field(default_factory=list, max_length=MAX_MARKS)


class RunNotes:
    """The notes of one run, in memory; :meth:`save` writes them back."""

    def __init__(self, run_dir: Path, marks: dict[Key, Mark] | None = None) -> None:
        self.run_dir = Path(run_dir)
        self._marks: dict[Key, Mark] = dict(marks or {})

    # ---- reading and writing ----------------------------------------------------------------------------
    @classmethod
    def load(cls, run_dir: Path) -> RunNotes:
        """The notes of the run ``run_dir`` (none yet: empty). FormatError naming the file and field when
        ``notes.json`` is not a notes file of a version this SimLab reads."""
        path = Path(run_dir) / NOTES_FILE
        if not os.path.lexists(path):
            return cls(run_dir)
        obj = read_json(path, MAX_NOTES_BYTES)
        check_version(obj, NOTES_FORMAT, NOTES_VERSION, path)
        notes = checked(NotesFile, obj, path)
        assert isinstance(notes, NotesFile)
        marks: dict[Key, Mark] = {}
        for k, mark in enumerate(notes.marks):
            if mark.key in marks:
                turn = "the episode" if mark.turn is None else f"turn {mark.turn}"
                raise FormatError(path, f"marks[{k}]", f"expected one mark per episode and turn ({turn} again)")
            marks[mark.key] = mark
        return cls(run_dir, marks)

    def to_json(self) -> dict[str, object]:
        marks = [m.model_dump() for m in self.marks()]
        return {"format": NOTES_FORMAT, "version": NOTES_VERSION, "marks": marks}

    def save(self) -> Path:
        """Write ``RUN/notes.json`` whole (WriteRefused when it is a link or the folder holds no run)."""
        return write_sidecar(self.run_dir, NOTES_FILE, dumps(self.to_json(), indent=2) + "\n")

    # ---- changes ----------------------------------------------------------------------------------------
    def add_tag(self, episode_id: str, turn: int | None, tag: str) -> None:
        """Tag an episode (``turn`` None) or a turn; ConfigError for a tag that is not one word."""
        mark = self._mark(episode_id, turn)
        self._put(mark.model_copy(update={"tags": sorted({*mark.tags, check_tag(tag)})}))

    def remove_tag(self, episode_id: str, turn: int | None, tag: str) -> None:
        mark = self._mark(episode_id, turn)
        self._put(mark.model_copy(update={"tags": [t for t in mark.tags if t != tag]}))

    def set_note(self, episode_id: str, turn: int | None, text: str) -> None:
        """The note of an episode or turn ("" removes it); ConfigError past :data:`MAX_NOTE_CHARS`."""
        if len(text) > MAX_NOTE_CHARS:
            raise ConfigError(f"a note holds at most {MAX_NOTE_CHARS:,} characters, got {len(text):,}")
        self._put(self._mark(episode_id, turn).model_copy(update={"note": text}))

    def set_bookmark(self, episode_id: str, turn: int | None, on: bool) -> None:
        self._put(self._mark(episode_id, turn).model_copy(update={"bookmark": on}))

    def toggle_bookmark(self, episode_id: str, turn: int | None) -> bool:
        """Bookmark the episode or turn, or remove its bookmark; whether it is bookmarked now."""
        on = not self._mark(episode_id, turn).bookmark
        self.set_bookmark(episode_id, turn, on)
        return on

    def _mark(self, episode_id: str, turn: int | None) -> Mark:
        key = (episode_id, turn)
        if key in self._marks:
            return self._marks[key]
        if not SAFE_ID.match(episode_id):
            raise ConfigError(f"episode {episode_id[:80]!r}: not an episode id")
        if turn is not None and not 0 <= turn <= MAX_TURN:
            raise ConfigError(f"turn {turn}: expected 0 to {MAX_TURN:,}")
        return Mark(episode_id=episode_id, turn=turn)

    def _put(self, mark: Mark) -> None:
        if mark.empty:
            self._marks.pop(mark.key, None)
        elif mark.key in self._marks or len(self._marks) < MAX_MARKS:
            self._marks[mark.key] = Mark.model_validate(mark.model_dump())  # checked again: tags, lengths
        else:
            raise ConfigError(f"a run holds at most {MAX_MARKS:,} notes; remove some first")

    # ---- queries ----------------------------------------------------------------------------------------
    def get(self, episode_id: str, turn: int | None = None) -> Mark | None:
        return self._marks.get((episode_id, turn))

    def marks(self, tag: str | None = None) -> list[Mark]:
        """Every mark (with ``tag``: those holding it), by episode id, the episode's own first, then turns."""
        found = (m for m in self._marks.values() if tag is None or tag in m.tags)
        return sorted(found, key=_order)

    def marks_of(self, episode_id: str) -> list[Mark]:
        """The episode's own mark (if any) first, then its turns' in order."""
        return sorted((m for m in self._marks.values() if m.episode_id == episode_id), key=_order)

    def marked_turns(self, episode_id: str) -> list[int]:
        """The turns of ``episode_id`` that hold a note, a tag or a bookmark (the timeline marks them)."""
        return [m.turn for m in self.marks_of(episode_id) if m.turn is not None]

    def tags_of(self, episode_id: str) -> list[str]:
        """Every tag on the episode or any of its turns, sorted (the browser's column)."""
        return sorted({tag for m in self.marks_of(episode_id) for tag in m.tags})

    def __iter__(self) -> Iterator[Mark]:
        return iter(self.marks())

    def __len__(self) -> int:
        return len(self._marks)


def check_tag(tag: str) -> str:
    """``tag`` when it is one (see :data:`TAG_PATTERN`); ConfigError otherwise."""
    if not re.fullmatch(TAG_PATTERN, tag):
        raise ConfigError(
            f"tag {tag[:80]!r}: expected one word of letters, digits and _ . : / + # - (at most 64 characters)"
        )
    return tag


def mark_words(mark: Mark) -> str:
    """A mark on one line: ``tags colour misheard, bookmarked: the builder heard red``; the note's control
    characters as spaces (a run from elsewhere shows safely in a terminal or a tooltip)."""
    said = [f"tags {' '.join(mark.tags)}" if mark.tags else "", "bookmarked" if mark.bookmark else ""]
    note = ": " + re.sub(r"[\x00-\x1f\x7f-\x9f]", " ", mark.note) if mark.note else ""
    return ", ".join(s for s in said if s) + note


def episode_marks(run_dir: Path | None, episode_id: str) -> list[Mark]:
    """The run's marks on ``episode_id`` (the episode's own first, then its turns'); none without a run folder
    (an episode file opened on its own has no notes). FormatError when ``notes.json`` cannot be read."""
    return RunNotes.load(run_dir).marks_of(episode_id) if run_dir is not None and Path(run_dir).is_dir() else []


def change_notes(run_dir: Path, change: Callable[[RunNotes], object]) -> RunNotes:
    """Load the run's notes as they are on disk, apply ``change`` and save them; the notes after."""
    notes = RunNotes.load(run_dir)
    change(notes)
    notes.save()
    return notes


def _order(mark: Mark) -> tuple[str, int]:
    return (mark.episode_id, -1 if mark.turn is None else mark.turn)
