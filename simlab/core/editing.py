"""The editor's contract: a document a family lets people author (a room and its cameras, a target structure),
changed only by edits that can be undone. No Qt here: every edit runs the same in a test as in the app.

* An :class:`EditorDocument` holds what is being authored as *entities*, each a JSON object under an id (an
  object of a room, a camera, a block). :meth:`EditorDocument.put` is its one way to change: it sets or removes
  one entity and keeps whatever the document derives from them (visibility, warnings) up to date.
* An :class:`Edit` is data: for each entity it touches, the state before and after. Undo puts the befores back
  (in reverse), redo the afters. Every operation of a document (add, change fields, move, remove, duplicate, a
  click on a cell) *returns* an edit, or raises :class:`EditError` saying why it cannot be done; applying it is
  the caller's: :class:`History` in scripts and tests, a ``QUndoStack`` in the app (one ``QUndoCommand`` per
  edit). Consecutive edits with the same ``merge_key`` (the steps of one drag) become one undo step.
* A family declares its editor as ``WorldFamily.editor`` (``"module:attribute"`` of an :class:`EditorKind`,
  imported when someone edits): how to start an empty document, how to open a file, and what it is called.

The document also says what the app shows: its 3D scene items (with visibility overlays), the camera presets,
the pictures of each agent's view, a one-line summary, warnings on entities, the palette of things to add and
the fields of the selected entity (:class:`~simlab.core.forms.FormField`, so the app builds the form), and
the actions it offers (make questions, export, play).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from simlab.core.errors import SimlabError
from simlab.core.writing import check_output_file, write_atomic

if TYPE_CHECKING:
    from PIL import Image

    from simlab.core.forms import FormField
    from simlab.render.scene import CameraPose, SceneItem

State = dict[str, Any]
"""One entity as JSON (an object's category, colour, size, position and yaw; a camera's pose; a block)."""
Point = tuple[float, float, float]


class EditError(SimlabError):
    """An edit that cannot be made, and why (``a sofa does not fit there: it would cross the wall``)."""


@dataclass(frozen=True)
class Change:
    """One entity before and after an edit (None: it does not exist on that side)."""

    entity: str
    before: State | None
    after: State | None


@dataclass(frozen=True)
class Edit:
    """What one user action changed: ``text`` is what Undo says (``Move sofa_0``); ``merge_key`` joins the
    steps of one gesture (a drag) into one undo step; ``select`` is the entity to select after it."""

    text: str
    changes: tuple[Change, ...]
    merge_key: str | None = None
    select: str | None = None

    def redo(self, document: EditorDocument) -> None:
        for change in self.changes:
            document.put(change.entity, change.after)

    def undo(self, document: EditorDocument) -> None:
        for change in reversed(self.changes):
            document.put(change.entity, change.before)

    def merged(self, later: Edit) -> Edit | None:
        """This edit followed by ``later`` as one, when both are steps of the same gesture; else None."""
        if self.merge_key is None or later.merge_key != self.merge_key:
            return None
        first = {c.entity: c.before for c in self.changes}
        last = {c.entity: c.after for c in self.changes} | {c.entity: c.after for c in later.changes}
        order = [c.entity for c in self.changes] + [c.entity for c in later.changes if c.entity not in first]
        befores = first | {c.entity: c.before for c in later.changes if c.entity not in first}
        changes = tuple(Change(e, befores[e], last[e]) for e in order)
        return Edit(later.text, changes, self.merge_key, later.select)


def change(document: EditorDocument, entity: str, after: State | None) -> Change:
    """The change that sets ``entity`` to ``after`` from what it is now."""
    return Change(entity, document.state(entity), after)


T = TypeVar("T")


def crossed(points: Sequence[Point], cell_at: Callable[[Point], T]) -> list[T]:
    """The cells a drag passes over, each once, in the order it reaches them: ``cell_at`` names the cell under a
    point and raises EditError off the board (those points are skipped)."""
    out: list[T] = []
    for point in points:
        try:
            cell = cell_at(point)
        except EditError:
            continue
        if cell not in out:
            out.append(cell)
    return out


class EntityStore(dict[str, T]):
    """Entities kept as values under their ids, turned to JSON and back by ``to_state`` and ``from_state``: the
    ``state`` and ``put`` of a document whose entities are pieces (``noun`` names one in messages)."""

    def __init__(
        self,
        noun: str,
        to_state: Callable[[T], State],
        from_state: Callable[[State], T],
        items: Mapping[str, T] | None = None,
    ) -> None:
        super().__init__(items or {})
        self.noun, self.to_state, self.from_state = noun, to_state, from_state

    def state(self, entity: str) -> State | None:
        """The JSON of ``entity`` (None when there is none)."""
        value = self.get(entity)
        return self.to_state(value) if value is not None else None

    def set_state(self, entity: str, state: State | None) -> None:
        """Set ``entity`` from its JSON (None removes it)."""
        if state is None:
            self.pop(entity, None)
        else:
            self[entity] = self.from_state(state)

    def find(self, entity: str) -> T:
        """The value of ``entity``; EditError when there is none."""
        if entity not in self:
            raise EditError(f"there is no {self.noun} {entity!r}")
        return self[entity]


class History:
    """Undo and redo without Qt (scripts, tests): ``push`` applies an edit; a step of the same gesture as the
    last one is merged into it. ``dirty`` says whether the document differs from its last save."""

    def __init__(self, document: EditorDocument) -> None:
        self.document = document
        self.done: list[Edit] = []
        self.undone: list[Edit] = []
        self._clean: int | None = 0  # len(done) at the last save; None when that state was undone and replaced

    def push(self, edit: Edit) -> None:
        edit.redo(self.document)
        joined = self.done[-1].merged(edit) if self.done and not self.undone else None
        if joined is not None and self._clean != len(self.done):
            self.done[-1] = joined
        else:
            if self._clean is not None and self._clean > len(self.done):
                self._clean = None  # the saved state was undone and is now out of reach
            self.done.append(edit)
        self.undone.clear()

    def undo(self) -> Edit | None:
        if not self.done:
            return None
        edit = self.done.pop()
        edit.undo(self.document)
        self.undone.append(edit)
        return edit

    def redo(self) -> Edit | None:
        if not self.undone:
            return None
        edit = self.undone.pop()
        edit.redo(self.document)
        self.done.append(edit)
        return edit

    def mark_saved(self) -> None:
        self._clean = len(self.done)

    @property
    def dirty(self) -> bool:
        return self._clean != len(self.done)


@dataclass(frozen=True)
class Entity:
    """One row of the editor's list: its id, what to call it, its group (``objects``, ``cameras``, ``blocks``)
    and a warning when something is wrong with it (empty when not)."""

    id: str
    label: str
    group: str
    warning: str = ""


@dataclass(frozen=True)
class PaletteEntry:
    """Something the person can add: its name (what :meth:`EditorDocument.add` takes), the group it is shown
    in, and a one-line help."""

    name: str
    group: str
    help: str = ""


@dataclass(frozen=True)
class Proposal:
    """What an action proposes for the person to keep or discard before it is saved (questions made for a room):
    ``items`` are (id, text) pairs, ``save(kept ids, path)`` writes the kept ones and returns what it wrote."""

    title: str
    items: tuple[tuple[str, str], ...]
    save: Callable[[Sequence[str], Path], Path]
    suffix: str = ""


@dataclass(frozen=True)
class DocumentAction:
    """An action the document offers (``Make questions for this room``): a name and what it does."""

    name: str
    help: str


class EditorDocument(ABC):
    """What a family's editor edits. Subclasses keep their model as entities (see the module docstring)."""

    family: str = ""
    """The world family the document belongs to."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path

    # ---- entities (the one mutation is put) ----------------------------------------------------------
    @abstractmethod
    def entities(self) -> list[Entity]:
        """Every entity, in list order, with its warning."""

    @abstractmethod
    def state(self, entity: str) -> State | None:
        """The JSON of ``entity`` (None when there is none)."""

    @abstractmethod
    def put(self, entity: str, state: State | None) -> None:
        """Set ``entity`` to ``state`` (None removes it) and bring every derived fact up to date."""

    # ---- what edits a person can make ---------------------------------------------------------------
    @abstractmethod
    def palette(self) -> list[PaletteEntry]:
        """What can be added."""

    @abstractmethod
    def add(self, name: str, at: Point | None = None) -> Edit:
        """Add a ``name`` from the palette (at ``at``, else where the document finds room)."""

    @abstractmethod
    def fields(self, entity: str) -> tuple[FormField, ...]:
        """The fields of ``entity``'s form (the app builds it; :meth:`values` fills it)."""

    @abstractmethod
    def values(self, entity: str) -> dict[str, Any]:
        """The current values of ``entity``'s fields."""

    @abstractmethod
    def set_values(self, entity: str, values: Mapping[str, Any]) -> Edit:
        """Change ``entity``'s fields (EditError naming the field and what was expected)."""

    def remove(self, entity: str) -> Edit:
        """Delete ``entity``."""
        if self.state(entity) is None:
            raise EditError(f"there is no {entity!r} to delete")
        return Edit(f"Delete {entity}", (change(self, entity, None),))

    def duplicate(self, entity: str) -> Edit:
        """A copy of ``entity`` beside it (EditError when it cannot be copied)."""
        raise EditError(f"{entity!r} cannot be duplicated")

    def move(self, entity: str, to: Point, gesture: str | None = None) -> Edit:
        """Move ``entity`` so that it stands at world point ``to`` (a drag: ``gesture`` names it, so its steps
        merge into one undo step)."""
        raise EditError(f"{entity!r} cannot be moved by dragging")

    def click(self, key: str, point: Point, tool: str | None = None) -> Edit | None:
        """A click on scene item ``key`` at world ``point`` with palette entry ``tool`` chosen: by default the
        tool is added there (a block editor stacks on the clicked block instead); None when the click only
        selects."""
        return self.add(tool, point) if tool is not None else None

    def stroke(self, points: Sequence[Point], tool: str | None = None) -> Edit | None:
        """A drag with palette entry ``tool`` across world ``points`` (a domino laid across two cells); by
        default the click at its first point."""
        return self.click("", points[0], tool) if points else None

    def entity_of(self, key: str) -> str | None:
        """The entity a scene item ``key`` draws (what a click selects), or None."""
        return key if self.state(key) is not None else None

    # ---- what the app shows --------------------------------------------------------------------------
    @abstractmethod
    def scene_items(self, selected: str | None = None) -> list[SceneItem]:
        """The 3D scene, with the document's overlays and ``selected`` marked."""

    def cameras(self) -> dict[str, CameraPose]:
        """Camera presets of the 3D view, in button order."""
        return {}

    @abstractmethod
    def pictures(self) -> dict[str, Image.Image]:
        """What each agent would be shown now (camera views, director walls), by caption."""

    def agent_views(self) -> dict[str, CameraPose]:
        """Agents' cameras the app can draw live from :meth:`agent_scene` (caption -> pose), instead of asking
        :meth:`pictures` to render the same views off screen after every edit; none by default."""
        return {}

    def agent_scene(self) -> list[SceneItem]:
        """What the agents' cameras see: the world without the editor's overlays (for :meth:`agent_views`)."""
        return []

    def summary(self) -> str:
        """One line on the state of the document (``the Answerer sees 7 objects, the Helper 6, 3 shared``)."""
        return ""

    def inspect(self, entity: str) -> list[str]:
        """Facts about ``entity`` (who sees it and why), shown when it is selected."""
        return []

    # ---- actions and files ---------------------------------------------------------------------------
    def actions(self) -> list[DocumentAction]:
        """Actions the document offers besides editing."""
        return []

    def run(self, action: str) -> Proposal | str:
        """Run ``action``: a :class:`Proposal` to review, or a sentence saying what was done."""
        raise EditError(f"no action {action!r}")

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """The document as the file it is saved as (the editor's own state included)."""

    def save(self, path: Path | None = None) -> Path:
        """Write the document to ``path`` (or where it came from); returns the path."""
        target = path or self.path
        if target is None:
            raise EditError("the document has no file yet: choose where to save it")
        write_json(check_output_file(target, "save to"), self.to_json())
        self.path = target
        return target

    def autosave_path(self) -> Path | None:
        """Where unsaved changes are kept meanwhile: beside the file (``.name.autosave``)."""
        return self.path.with_name(f".{self.path.name}.autosave") if self.path is not None else None

    @abstractmethod
    def playable(self) -> dict[str, Any]:
        """A task of the family made from the document, to play it (EditError when it cannot be played yet)."""


@dataclass(frozen=True)
class EditorKind:
    """How a family's editor starts: ``new()`` an empty document (``options`` from :attr:`new_fields`),
    ``open(path)`` a file (EditError naming the file and what is wrong), ``can_open(path)`` whether a file is
    one of this family's (so ``python main.py edit FILE`` finds the family), and the file's description."""

    new: Callable[[Mapping[str, Any]], EditorDocument]
    open: Callable[[Path], EditorDocument]
    can_open: Callable[[Path], bool]
    file_filter: str
    new_fields: tuple[FormField, ...] = field(default_factory=tuple)


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` beside ``path`` first and rename it over, so a crash never leaves half a file; never
    through a link (:func:`~simlab.core.writing.write_atomic`: a folder from elsewhere may hold one where the
    file or its autosave goes)."""
    write_atomic(path.parent, path.name, json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
