"""The boards editor: a cobot target board authored piece by piece, every edit checked by the game's rules.

Entities are the pieces, each under its scene key at its anchor cell (``piece:3,4:2``;
:func:`~simlab.worlds.boards.scene.piece_key`) with the JSON ``{"shape", "colour", "x", "y", "level"}``: a
washer, nut or screw on one cell, a ``bridge-h`` over (x, y) and (x, y + 1), a ``bridge-v`` over (x, y) and
(x + 1, y); ``x`` is the row and ``y`` the column, both 1-based, levels count from 1.

Placing. The palette holds each shape in each colour (``red washer``, ``blue bridge``). A click with a washer,
nut or screw puts it on top of the stack of the cell under the clicked point (the scene's geometry: cell (row,
col) is the unit square around ``(col - 0.5, rows - row + 0.5)``, so a click on a piece stacks on it); a bridge
is laid by a drag (:meth:`TargetDocument.stroke`) across two neighbouring cells, horizontal or vertical as the
drag goes (``red bridge-h`` / ``red bridge-v`` also place by a click, anchored at the clicked cell). Each
placement is the robot's ``put`` under the current rules (:func:`~simlab.worlds.boards.model.put`: a bridge
only at levels 1 and 2 on two stacks of the same height, nothing on a screw, no shape twice in a stack, no
colour on itself, at most 4 levels); a refused one raises :class:`EditError` with the rule's message (what the
robot is told), and nothing changes. Changing a piece's shape or colour rebuilds the whole board with the rules,
so a change that breaks a piece above it is refused too.

Removing. As the robot's ``remove``: only the top piece of a stack, a bridge only when both halves are on top.

Files. A document is saved as a targets file (``{"format": "simlab.boards.targets", "version": 1, "targets":
[...]}``, as ``generate boards`` writes) that ``python main.py run --world boards --tasks FILE`` plays. Opening
a file of several targets edits the first and writes the others back unchanged. A target needs a piece, so an
empty board cannot be saved (the family's loader refuses empty targets).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from PIL import Image

from simlab.core.editing import (
    DocumentAction,
    Edit,
    EditError,
    EditorDocument,
    EditorKind,
    Entity,
    EntityStore,
    PaletteEntry,
    Point,
    State,
    change,
    crossed,
)
from simlab.core.errors import FormatError
from simlab.core.family import FormField
from simlab.core.reading import check_version, read_json
from simlab.core.recording import SAFE_ID
from simlab.render.scene import CameraPose, SceneItem
from simlab.worlds.boards.images import Solid, target_image
from simlab.worlds.boards.model import (
    BRIDGES,
    COLOURS,
    COLS,
    LEVELS,
    ROWS,
    Board,
    BoardError,
    Cell,
    Placement,
    build,
    placements_of,
    put,
    second_cell,
)
from simlab.worlds.boards.scene import MARGIN, cameras_for, describe, floor_items, piece_item, piece_key, place_box
from simlab.worlds.boards.targets import TARGETS_FILE, TARGETS_FORMAT, TARGETS_VERSION, Target
from simlab.worlds.boards.text import listing

DEFAULT_ID = "board_edited"
SINGLE = ("washer", "nut", "screw")
BRIDGE = "bridge"
"""A palette bridge: horizontal or vertical as the drag that lays it goes."""
CHECK = "Check against the rules"
LISTING = "Show the programmer's text view"
SELECTED_RGB = (0.0, 0.75, 1.0)  # cyan: no piece colour, no difference marker
SIZE_LIMITS = (2, 20)  # what a target may be (Target.from_json)


def parse_tool(tool: str) -> tuple[str, str]:
    """``(shape, colour)`` of a palette name (``red washer``, ``blue bridge``, ``green bridge-h``)."""
    colour, _, shape = tool.strip().lower().partition(" ")
    if colour not in COLOURS or shape not in (*SINGLE, BRIDGE, *BRIDGES):
        raise EditError(f"unknown piece {tool!r}; use a colour ({', '.join(COLOURS)}) and a shape, like 'red nut'")
    return shape, colour


def _palette_entry(shape: str, colour: str) -> PaletteEntry:
    if shape == BRIDGE:
        return PaletteEntry(f"{colour} bridge", "bridges", "two neighbouring cells, levels 1-2 only: drag across them")
    return PaletteEntry(f"{colour} {shape}", f"{shape}s", "one cell: click a cell or the piece to stack on")


def whole_field(data: Mapping[str, Any], name: str, low: int, high: int, default: int | None = None) -> int:
    """``data[name]`` as a whole number in ``low..high``; EditError naming the field otherwise."""
    value = data.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise EditError(f"field {name!r}: expected a whole number from {low} to {high}, got {value!r:.40}")
    return value


def solid_of(state: Mapping[str, Any]) -> Solid:
    """The piece an entity's JSON describes; EditError naming the field that is wrong."""
    shape, colour = state.get("shape"), state.get("colour")
    if shape not in (*SINGLE, *BRIDGES):
        raise EditError(f"field 'shape': expected one of {', '.join((*SINGLE, *BRIDGES))}, got {shape!r:.40}")
    if colour not in COLOURS:
        raise EditError(f"field 'colour': expected one of {', '.join(COLOURS)}, got {colour!r:.40}")
    x, y = (whole_field(state, name, 1, SIZE_LIMITS[1]) for name in ("x", "y"))
    level = whole_field(state, "level", 1, LEVELS)
    cells = ((x, y), second_cell(shape, x, y)) if shape in BRIDGES else ((x, y),)
    return Solid(shape, colour, level, cells)


def state_of(solid: Solid) -> State:
    """An entity's JSON: the piece's ``put`` arguments and its level."""
    (x, y), *_ = solid.cells
    return {"shape": solid.shape, "colour": solid.colour, "x": x, "y": y, "level": solid.level}


def replay(pieces: Sequence[Solid], rows: int, cols: int) -> tuple[Board, str]:
    """The board the pieces make when the robot puts them level by level, and the first refusal ("" when the
    rules take every one: the target can be built)."""
    board = Board(rows, cols)
    for solid in sorted(pieces, key=lambda s: (s.level, s.cells[0])):
        (x, y), *_ = solid.cells
        if board.height(x, y) != solid.level - 1:
            return board, f"{describe(solid)}: level {solid.level - 1} below it is empty"
        try:
            put(board, solid.shape, solid.colour, x, y)
        except BoardError as exc:
            return board, f"{describe(solid)}: {exc.message}"
    return board, ""


def laid(target: Target) -> dict[str, Solid]:
    """The target's pieces by entity id, in the order of its placements."""
    board, out = Board(target.rows, target.cols), {}
    for p in target.placements:
        put(board, p.shape, p.colour, p.x, p.y)
        solid = Solid(p.shape, p.colour, board.height(p.x, p.y), p.cells())
        out[piece_key(solid)] = solid
    return out


class TargetDocument(EditorDocument):
    """A target board being authored (see the module docstring)."""

    family = "boards"

    def __init__(
        self,
        target: Target,
        others: Sequence[Mapping[str, Any]] = (),
        path: Path | None = None,
    ) -> None:
        super().__init__(path)
        self.target_id, self.source = target.id, target.source
        self.rows, self.cols = target.rows, target.cols
        self.others = [dict(t) for t in others]
        self._pieces = EntityStore("piece", state_of, solid_of, laid(target))
        self._rank = {key: k for k, key in enumerate(self._pieces)}  # the file's order, kept when saving
        self._derive()

    def _derive(self) -> None:
        """Rebuild the board the pieces make under the rules, and the first rule any of them breaks."""
        self.board, self.problem = replay(list(self._pieces.values()), self.rows, self.cols)

    # ---- entities --------------------------------------------------------------------------------------------
    def entities(self) -> list[Entity]:
        """Every piece, level by level in row order, grouped by level."""
        ordered = sorted(self._pieces.items(), key=lambda kv: (kv[1].level, kv[1].cells[0]))
        return [Entity(key, describe(s), f"level {s.level}") for key, s in ordered]

    def state(self, entity: str) -> State | None:
        return self._pieces.state(entity)

    def put(self, entity: str, state: State | None) -> None:
        self._pieces.set_state(entity, state)
        self._derive()

    # ---- placing and removing ------------------------------------------------------------------------------
    def palette(self) -> list[PaletteEntry]:
        """Each shape in each colour, washers first and bridges last."""
        return [_palette_entry(shape, colour) for shape in (*SINGLE, BRIDGE) for colour in COLOURS]

    def place(self, shape: str, colour: str, cell: Cell) -> Edit:
        """``put`` ``shape`` of ``colour`` anchored at ``cell`` on its stack's first free level; EditError with
        the rule's message when the rules refuse it."""
        if shape == BRIDGE:
            raise EditError("a bridge covers two neighbouring cells: drag across them to lay it")
        trial = self.board.copy()
        try:
            put(trial, shape, colour, *cell)
        except BoardError as exc:
            raise EditError(exc.message) from None
        cells = (cell, second_cell(shape, *cell)) if shape in BRIDGES else (cell,)
        solid = Solid(shape, colour, trial.height(*cell), cells)
        key = piece_key(solid)
        return Edit(f"Place {describe(solid)}", (change(self, key, state_of(solid)),), select=key)

    def add(self, name: str, at: Point | None = None) -> Edit:
        """Place ``name`` at ``at``, else on the lowest place the rules allow (row order among equals; a bridge
        tries horizontal first)."""
        if at is not None:
            return self.place(*parse_tool(name), self.cell_at(at))
        shape, colour = parse_tool(name)
        shapes = BRIDGES if shape == BRIDGE else (shape,)
        cells = sorted(((x, y) for x in range(1, self.rows + 1) for y in range(1, self.cols + 1)), key=self._height)
        for cell in cells:
            for each in shapes:
                try:
                    return self.place(each, colour, cell)
                except EditError:
                    continue
        raise EditError(f"no room for a {name} anywhere on the board")

    def _height(self, cell: Cell) -> tuple[int, Cell]:
        return self.board.height(*cell), cell

    def cell_at(self, point: Point) -> Cell:
        """The board cell under world ``point`` (the scene's geometry); EditError when it is off the board."""
        cell = (self.rows - math.floor(point[1]), math.floor(point[0]) + 1)
        if not self.board.inside(*cell):
            raise EditError(f"({point[0]:.1f}, {point[1]:.1f}) is off the {self.rows}x{self.cols} board")
        return cell

    def click(self, key: str, point: Point, tool: str | None = None) -> Edit | None:
        """With a piece chosen, put it on the stack under ``point``; without one the click only selects."""
        return None if tool is None else self.place(*parse_tool(tool), self.cell_at(point))

    def stroke(self, points: Sequence[Point], tool: str | None = None) -> Edit | None:
        """A bridge across the first two cells the drag crosses (``bridge-h`` along a row, ``bridge-v`` along a
        column, anchored at the left or top one); any other piece on the first cell."""
        if tool is None or not points:
            return None
        shape, colour = parse_tool(tool)
        cells = crossed(points, self.cell_at) or [self.cell_at(points[0])]  # never on the board: say why
        if shape not in (BRIDGE, *BRIDGES) or len(cells) < 2:
            return self.place(shape, colour, cells[0])
        first, second = sorted(cells[:2])
        if first[0] == second[0] and second[1] == first[1] + 1:
            return self.place("bridge-h", colour, first)
        if first[1] == second[1] and second[0] == first[0] + 1:
            return self.place("bridge-v", colour, first)
        where = " and ".join(f"row {x}, col {y}" for x, y in (first, second))
        raise EditError(f"a bridge covers two cells side by side, and {where} are not")

    def remove(self, entity: str) -> Edit:
        """Take a piece off, as the robot's ``remove``: only a top piece (a bridge with both halves on top)."""
        solid = self._pieces.find(entity)
        for x, y in solid.cells:
            above = self.board.stack(x, y)[solid.level :]
            if above:
                raise EditError(
                    f"only the top piece of a stack comes off: a {above[0].colour} {above[0].shape} sits on it "
                    f"at row {x}, col {y}"
                )
        return Edit(f"Remove {describe(solid)}", (change(self, entity, None),))

    # ---- the selected piece's form ---------------------------------------------------------------------------
    def fields(self, entity: str) -> tuple[FormField, ...]:
        """Colour, and the shape of a one-cell piece (a bridge stays a bridge: its cells depend on it)."""
        solid = self._pieces.find(entity)
        colour = FormField("colour", "choice", "Colour", choices=COLOURS, value=solid.colour)
        if solid.shape in BRIDGES:
            return (colour,)
        return (FormField("shape", "choice", "Shape", choices=SINGLE, value=solid.shape), colour)

    def values(self, entity: str) -> dict[str, Any]:
        return {f.name: f.value for f in self.fields(entity)}

    def set_values(self, entity: str, values: Mapping[str, Any]) -> Edit:
        """Change a piece's shape or colour; the whole board is rebuilt with the rules, so EditError names the
        field and the rule the change breaks (for this piece or one above it)."""
        solid = self._pieces.find(entity)
        allowed = {f.name: f.choices for f in self.fields(entity)}
        for name, value in values.items():
            if name not in allowed:
                raise EditError(f"field {name!r}: this piece has only {', '.join(map(repr, allowed))}")
            if value not in allowed[name]:
                raise EditError(f"field {name!r}: expected one of {', '.join(allowed[name])}, got {value!r:.40}")
        after = replace(solid, **values)
        _board, problem = replay([*(s for k, s in self._pieces.items() if k != entity), after], self.rows, self.cols)
        if problem:
            raise EditError(f"field {', '.join(map(repr, values))}: {problem}")
        return Edit(f"Change {describe(solid)}", (change(self, entity, state_of(after)),), select=entity)

    # ---- what the app shows --------------------------------------------------------------------------------
    def scene_items(self, selected: str | None = None) -> list[SceneItem]:
        """The numbered plate, the pieces and an outline around each place the selected piece fills."""
        items = [*floor_items(self.rows, self.cols), *(piece_item(s, self.rows) for s in self._pieces.values())]
        solid = self._pieces.get(selected or "")
        return items + ([] if solid is None else [self._outline(solid, cell) for cell in solid.cells])

    def _outline(self, solid: Solid, cell: Cell) -> SceneItem:
        box = place_box(cell, solid.level, self.rows)
        tooltip = f"selected: {describe(solid)}"
        key = f"selected:{cell[0]},{cell[1]}"
        return SceneItem(key, "selection", box, SELECTED_RGB, style="wireframe", tooltip=tooltip, line_width=4.0)

    def cameras(self) -> dict[str, CameraPose]:
        """Three-quarter, top, front and side views of the whole board."""
        return cameras_for(-MARGIN, float(self.cols), 0.0, self.rows + MARGIN)

    def pictures(self) -> dict[str, Image.Image]:
        """The target as the programmer is shown it: the top-down image, and the layer-wise images (levels 1
        to k for each level k) of ``target_view=layers``."""
        target = self.board.to_json()
        out = {"target": target_image(target)}
        top = self.board.top_level()
        out.update({f"target, levels 1 to {k}": target_image(target, k) for k in range(1, top + 1) if top > 1})
        return out

    def summary(self) -> str:
        """Pieces, components, levels and whether the rules allow the board."""
        bridges = sum(s.shape in BRIDGES for s in self._pieces.values())
        legal = f"breaks the rules: {self.problem}" if self.problem else "legal under the rules"
        return (
            f"components: {len(self._pieces)} (the paper's targets have 2-5), bridges: {bridges}, levels: "
            f"{self.board.top_level()}, on the {self.rows}x{self.cols} board; {legal}"
        )

    def inspect(self, entity: str) -> list[str]:
        """What the piece is, the robot's call that puts it, and whether it can come off."""
        solid = self._pieces.find(entity)
        (x, y), *_ = solid.cells
        on_top = all(self.board.height(*c) == solid.level for c in solid.cells)
        return [
            describe(solid),
            f"the robot places it with put(board, '{solid.shape}', '{solid.colour}', {x}, {y})",
            "on top: it can be removed" if on_top else "covered: remove the pieces above it first",
        ]

    # ---- actions and files ---------------------------------------------------------------------------------
    def actions(self) -> list[DocumentAction]:
        return [
            DocumentAction(CHECK, "Build the board with the robot's put calls and say what the rules find"),
            DocumentAction(LISTING, "The target as a text-mode programmer reads it"),
        ]

    def run(self, action: str) -> str:
        """The rules' verdict with the calls that build the board, or the programmer's text listing."""
        if action == LISTING:
            return listing(self.board)
        if action != CHECK:
            raise EditError(f"no action {action!r}")
        if self.problem:
            return f"The rules refuse the board: {self.problem}"
        calls = [p.code() for p in self.placements()]
        return f"Legal: {len(calls)} put calls build it from an empty board:\n" + "\n".join(calls)

    def placements(self) -> list[Placement]:
        """The ``put`` calls that build the board: the opened file's pieces in its order (so an unedited target
        is saved as it was, its combination name too), then new ones level by level; all level by level when
        edits left that order unbuildable."""
        last = len(self._rank)
        ranked = sorted(self._pieces.items(), key=lambda kv: (self._rank.get(kv[0], last), kv[1].level, kv[1].cells))
        out = [Placement(s.shape, s.colour, *s.cells[0]) for _key, s in ranked]
        try:
            build(out, self.rows, self.cols)
        except BoardError:
            return placements_of(self.board)
        return out

    def target(self) -> Target:
        """The board as a target (no placements while it is empty); EditError when it breaks the rules."""
        if self.problem:
            raise EditError(f"the board breaks the rules: {self.problem}")
        return Target(self.target_id, tuple(self.placements()), self.rows, self.cols, self.source)

    def _task(self) -> Target:
        """The target as a task: EditError while it is empty, since the family's loader refuses empty targets."""
        target = self.target()
        if not target.placements:
            raise EditError("the board is empty: a target needs at least one piece")
        return target

    def to_json(self) -> dict[str, Any]:
        """A targets file (``run --tasks FILE`` plays it): this target, then any others the file held. An empty
        board is written too (the app's autosave); :meth:`save` refuses it."""
        targets = [self.target().to_json(), *self.others]
        return {"format": TARGETS_FORMAT, "version": TARGETS_VERSION, "targets": targets}

    def save(self, path: Path | None = None) -> Path:
        """Write the targets file; EditError for an empty board, which the CLI could not play."""
        self._task()
        return super().save(path)

    def playable(self) -> dict[str, Any]:
        """The board as a boards task."""
        return self._task().to_json()


# ---- starting a document ----------------------------------------------------------------------------------------
NEW_FIELDS: tuple[FormField, ...] = (
    FormField("id", "text", "Target id (the episodes' name)", value=DEFAULT_ID),
    FormField("rows", "int", "Rows", low=SIZE_LIMITS[0], high=SIZE_LIMITS[1], value=ROWS),
    FormField("cols", "int", "Columns", low=SIZE_LIMITS[0], high=SIZE_LIMITS[1], value=COLS),
)


def empty_target(options: Mapping[str, Any]) -> Target:
    """An empty target board (``options``: ``id``, ``rows``, ``cols``, ``source``); EditError naming the field
    that is wrong."""
    rows, cols = (
        whole_field(options, name, *SIZE_LIMITS, default) for name, default in (("rows", ROWS), ("cols", COLS))
    )
    target_id = str(options.get("id") or DEFAULT_ID)
    if not SAFE_ID.match(target_id):
        raise EditError(f"field 'id': {target_id!r:.40} is not a plain file name (letters, digits, '.', '_', '-')")
    return Target(target_id, (), rows, cols, str(options.get("source", "edited")))


def new_document(options: Mapping[str, Any]) -> TargetDocument:
    """An empty board (``options``: ``id``, ``rows``, ``cols``; see :data:`NEW_FIELDS`)."""
    return TargetDocument(empty_target(options))


def _targets_file(path: Path) -> Path:
    return path / TARGETS_FILE if path.is_dir() else path


def open_document(path: Path) -> TargetDocument:
    """A targets file (or a folder holding ``targets.json``) as a document on its first target; EditError
    naming the file and the field that is wrong."""
    file = _targets_file(path)
    try:
        data = read_json(file)
    except FormatError as exc:
        raise EditError(str(exc)) from None
    entries = data.get("targets") if isinstance(data, Mapping) else None
    if not isinstance(entries, list) or not entries or data.get("format", TARGETS_FORMAT) != TARGETS_FORMAT:
        raise EditError(f"{file}, field 'targets': expected a {TARGETS_FORMAT} file with at least one target")
    declared = {"format": TARGETS_FORMAT, "version": TARGETS_VERSION, **data}  # a file made by hand may omit them
    try:
        check_version(declared, TARGETS_FORMAT, TARGETS_VERSION, file)
    except FormatError as exc:
        raise EditError(str(exc)) from None
    targets = [_read_target(file, k, entry) for k, entry in enumerate(entries)]
    return TargetDocument(targets[0], [t.to_json() for t in targets[1:]], file)


def _read_target(file: Path, k: int, entry: Any) -> Target:
    try:
        if k == 0 and isinstance(entry, Mapping) and entry.get("placements") == []:
            return empty_target(entry)  # a board being edited (an autosave): only the editor reads it empty
        return Target.from_json(entry)
    except (ValueError, EditError) as exc:
        raise EditError(f"{file}, targets[{k}]: {exc}") from None


def can_open(path: Path) -> bool:
    """Whether ``path`` is a boards targets file (or a folder holding one)."""
    file = _targets_file(path)
    try:
        data = read_json(file) if file.suffix == ".json" else None
    except FormatError:
        return False
    return isinstance(data, Mapping) and data.get("format") == TARGETS_FORMAT and isinstance(data.get("targets"), list)


EDITOR = EditorKind(
    new=new_document,
    open=open_document,
    can_open=can_open,
    file_filter="Boards targets (*.json)",
    new_fields=NEW_FIELDS,
)
"""The boards family's editor: target boards (registered as ``WorldFamily.editor``)."""
