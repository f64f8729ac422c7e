"""The blocks editor: a CRAFT target structure authored block by block, every edit checked by the engine.

Entities are the placed blocks, each under its scene key (``block:0,0:1``, ``block:0,0-0,1:2`` for a large
one; :func:`~simlab.worlds.blocks.scene.piece_key`) with the JSON of a :class:`~simlab.worlds.blocks.model.Piece`:
``{"code": "gs", "cells": [[0, 0]], "layer": 1}``.

Placing. The palette holds every block, named for a person (``small green``, ``large green (domino)``); a block
code (``gs``) works as a tool too. A click with a tool puts that block on top of the stack of the cell under the
clicked point (the 3D scene's geometry: cell (i, j) is the unit square around ``(j, 2 - i)``, so a click on a
block's top face stacks on that block); a drag (:meth:`StructureDocument.stroke`) lays a large block across the
first two cells it crosses, on top of the first one's stack. Each placement is the builder's ``PLACE`` move and
:meth:`~simlab.worlds.blocks.model.Board.check` decides: a refused one raises :class:`EditError` with the
engine's message (what a model is told), and nothing changes.

Removing. Only what the builder's ``REMOVE`` may take: the top block of its stack, a large block only when it is
the top in both cells. Anything else is refused with the engine's reason; the editor never pulls a block out
from under another (remove the ones above first).

Files. A document is saved as one structure file (``format`` ``simlab.blocks.structure``, as ``generate blocks``
writes per structure) with the editor's ``interior`` setting under ``editor``; ``python main.py run --world
blocks --tasks FILE`` plays it as a one-structure benchmark. :data:`EDITOR` opens such a file (not the folder's
``structures.json`` index: open one structure of it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyvista as pv
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
from simlab.core.reading import read_json
from simlab.core.recording import SAFE_ID
from simlab.render.scene import CameraPose, SceneItem
from simlab.worlds.blocks.generator import (
    INDEX_FORMAT,
    INDEX_VERSION,
    STRUCTURE_FORMAT,
    Structure,
    build_order,
    load_structures,
    tier_of,
)
from simlab.worlds.blocks.images import board_image, wall_image
from simlab.worlds.blocks.model import (
    BLOCK_CODES,
    CELLS,
    MAX_HEIGHT,
    Board,
    Cell,
    Move,
    MoveError,
    Piece,
    adjacent,
    color_of,
    in_grid,
    is_large,
    parse_cell,
)
from simlab.worlds.blocks.scene import (
    CAMERAS,
    HIGHLIGHT_RGB,
    block_bounds,
    director_items,
    floor_items,
    piece_item,
    piece_key,
)
from simlab.worlds.blocks.views import (
    DIRECTORS,
    LAYER_NAMES,
    WALL_NAMES,
    Interior,
    director_view,
    hidden_cells,
    visible_cell_layers,
)

DEFAULT_ID = "structure_edited"
INTERIORS: tuple[Interior, ...] = ("paper", "reference")
CHECK = "Check against the rules"
WALL_REACH = 0.65  # the walls stand 0.6 beyond the outer cells' centres (scene.py)
SELECTED_SIZE = 1.04  # the selection outline sits just outside the block's 0.94 box
PAIRS: tuple[tuple[Cell, Cell], ...] = tuple((a, b) for a in CELLS for b in CELLS if a < b and adjacent(a, b))


def tool_name(code: str) -> str:
    """What the palette calls a block code: ``small green``, ``large green (domino)``."""
    return f"large {color_of(code)} (domino)" if is_large(code) else f"small {color_of(code)}"


TOOLS: dict[str, str] = {tool_name(code): code for code in BLOCK_CODES}
"""Palette name -> block code."""


def code_of(tool: str) -> str:
    """The block code of a palette name or of a code itself; EditError for anything else."""
    code = TOOLS.get(tool, tool)
    if code not in BLOCK_CODES:
        raise EditError(f"unknown block {tool!r}; use one of: {', '.join(TOOLS)}")
    return code


def _palette_entry(code: str) -> PaletteEntry:
    if is_large(code):
        return PaletteEntry(tool_name(code), "large blocks", f"{code}: covers two adjacent cells; drag across them")
    return PaletteEntry(tool_name(code), "small blocks", f"{code}: covers one cell; click a cell or a block")


def describe(piece: Piece) -> str:
    """``large green (domino) at (0,0)-(0,1) layer 1``: how lists and undo name a block."""
    cells = "-".join(f"({i},{j})" for i, j in piece.cells)
    return f"{tool_name(piece.code)} at {cells} layer {piece.layer}"


def piece_of(state: Mapping[str, Any]) -> Piece:
    """The block an entity's JSON describes; EditError naming the field that is wrong."""
    code, layer, cells = state.get("code"), state.get("layer"), state.get("cells")
    if code not in BLOCK_CODES:
        raise EditError(f"field 'code': expected a block code like 'gs', got {code!r:.40}")
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < MAX_HEIGHT:
        raise EditError(f"field 'layer': expected 0, 1 or 2, got {layer!r:.40}")
    try:
        parsed = tuple(sorted(parse_cell(c) for c in cells)) if isinstance(cells, list) else ()
    except ValueError as exc:
        raise EditError(f"field 'cells': {exc}") from None
    if len(parsed) != (2 if is_large(code) else 1) or not all(in_grid(c) for c in parsed):
        raise EditError(f"field 'cells': {code} needs {2 if is_large(code) else 1} grid cell(s), got {cells!r:.60}")
    return Piece(code, parsed, layer)


def cell_at(point: Point) -> Cell:
    """The board cell under world ``point`` (the scene's geometry). A point just outside the board, on a
    director's wall (a click through it from that director's eye), means the nearest cell: the stack against
    that wall. EditError when the point is farther off."""
    x, y = point[0], point[1]
    if not (-WALL_REACH <= x <= 2 + WALL_REACH and -WALL_REACH <= y <= 2 + WALL_REACH):
        raise EditError(f"({x:.1f}, {y:.1f}) is off the 3x3 board: click a cell or a block on it")
    return 2 - min(max(math.floor(y + 0.5), 0), 2), min(max(math.floor(x + 0.5), 0), 2)


def replay(pieces: Sequence[Piece]) -> tuple[Board, str]:
    """The board the pieces make when the engine places them layer by layer, and the first refusal's message
    ("" when every placement is legal: the structure can be built under the rules)."""
    board = Board()
    for piece in sorted(pieces, key=lambda p: (p.layer, p.cells)):
        span = piece.cells[1] if piece.large else None
        result = board.apply(Move.place(piece.code, piece.cells[0], piece.layer, span))
        if not result.ok:
            return board, f"{describe(piece)}: {result.message}"
    return board, ""


class StructureDocument(EditorDocument):
    """A target structure being authored (see the module docstring)."""

    family = "blocks"

    def __init__(
        self,
        pieces: Sequence[Piece] = (),
        structure_id: str = DEFAULT_ID,
        interior: Interior = "paper",
        path: Path | None = None,
    ) -> None:
        super().__init__(path)
        self.structure_id = structure_id
        self._interior: Interior = _interior(interior, "interior")
        self._pieces = EntityStore("block", Piece.to_json, piece_of, {piece_key(p): p for p in pieces})
        self._derive()

    @property
    def interior(self) -> Interior:
        """What D2 sees of the middle cells (the ``interior`` setting): the visibility the editor shows."""
        return self._interior

    @interior.setter
    def interior(self, value: Interior) -> None:
        self._interior = _interior(value, "interior")
        self._derive()

    def _derive(self) -> None:
        """Rebuild what the pieces imply: the engine's board, any rule broken, the blocks nobody sees."""
        self.board, self.problem = replay(list(self._pieces.values()))
        self.hidden = set(hidden_cells(self.board, self.interior))

    # ---- entities --------------------------------------------------------------------------------------------
    def entities(self) -> list[Entity]:
        """Every block, bottom layer first, grouped by layer; a block no director sees carries a warning."""
        out = []
        for key, piece in sorted(self._pieces.items(), key=lambda kv: (kv[1].layer, kv[1].cells)):
            unseen = all((c, piece.layer) in self.hidden for c in piece.cells)
            warning = "no director sees this block, so nobody can describe it to the builder" if unseen else ""
            group = f"layer {piece.layer} ({LAYER_NAMES[piece.layer]})"
            out.append(Entity(key, describe(piece), group, warning))
        return out

    def state(self, entity: str) -> State | None:
        return self._pieces.state(entity)

    def put(self, entity: str, state: State | None) -> None:
        self._pieces.set_state(entity, state)
        self._derive()

    # ---- placing and removing ------------------------------------------------------------------------------
    def palette(self) -> list[PaletteEntry]:
        """Every block: the small ones (one cell, placed by a click), then the large ones (a drag)."""
        return [_palette_entry(code) for code in sorted(BLOCK_CODES, key=is_large)]

    def place(self, code: str, cell: Cell, span_to: Cell | None = None) -> Edit:
        """Put ``code`` on top of ``cell``'s stack (a large block also over ``span_to``), as the builder's PLACE
        move; EditError with the engine's reason when the rules refuse it."""
        # A full stack's next layer (3) does not exist; asking for its top layer lets the engine say it is full.
        move = Move.place(code, cell, min(self.board.height(cell), MAX_HEIGHT - 1), span_to)
        result = self.board.check(move)
        if not result.ok or result.piece is None:
            hint = ": drag across two adjacent cells to lay one" if result.error is MoveError.SPAN_MISSING else ""
            raise EditError(result.message + hint)
        key = piece_key(result.piece)
        return Edit(f"Place {describe(result.piece)}", (change(self, key, result.piece.to_json()),), select=key)

    def add(self, name: str, at: Point | None = None) -> Edit:
        """Place block ``name`` at ``at``, else on the lowest place the rules allow (grid order among equals)."""
        if at is not None:
            return self._click_place(name, at)
        code = code_of(name)
        places = PAIRS if is_large(code) else tuple((c, None) for c in CELLS)
        for cell, span in sorted(places, key=lambda p: (self.board.height(p[0]), p[0])):
            try:
                return self.place(code, cell, span)
            except EditError:
                continue
        raise EditError(f"no room for a {tool_name(code)} anywhere on the board")

    def click(self, key: str, point: Point, tool: str | None = None) -> Edit | None:
        """With a block chosen, place it on the stack under ``point``; without one the click only selects."""
        return None if tool is None else self._click_place(tool, point)

    def _click_place(self, tool: str, point: Point) -> Edit:
        return self.place(code_of(tool), cell_at(point))

    def stroke(self, points: Sequence[Point], tool: str | None = None) -> Edit | None:
        """A large block across the first two cells the drag crosses (on the first one's layer); a small block
        on the first cell."""
        if tool is None or not points:
            return None
        code, cells = code_of(tool), crossed(points, cell_at)
        if not cells:
            cell_at(points[0])  # says why: the drag never touched the board
        span = cells[1] if is_large(code) and len(cells) > 1 else None
        return self.place(code, cells[0], span)

    def remove(self, entity: str) -> Edit:
        """Take a block off, as the builder's REMOVE: only a top block (a large one only when it is the top in
        both its cells); EditError with the engine's reason otherwise."""
        piece = self._pieces.find(entity)
        # Named from a cell where it is on top, if any, so the engine's refusal names the cell that covers it.
        cell = next((c for c in piece.cells if self.board.height(c) == piece.layer + 1), piece.cells[0])
        span = next((c for c in piece.cells if c != cell), None)
        move = Move.remove(cell, piece.layer, span)
        result = self.board.check(move)
        if not result.ok:
            raise EditError(result.message)
        return Edit(f"Remove {describe(piece)}", (change(self, entity, None),))

    # ---- the selected block's form ---------------------------------------------------------------------------
    def fields(self, entity: str) -> tuple[FormField, ...]:
        """The block's colour, as one of the blocks of its size (a small block stays small)."""
        piece = self._pieces.find(entity)
        choices = tuple(name for name, code in TOOLS.items() if is_large(code) == piece.large)
        return (FormField("code", "choice", "Block", choices=choices, value=tool_name(piece.code)),)

    def values(self, entity: str) -> dict[str, Any]:
        return {"code": tool_name(self._pieces.find(entity).code)}

    def set_values(self, entity: str, values: Mapping[str, Any]) -> Edit:
        """Recolour a block (``code``: a palette name or a block code of the same size)."""
        piece = self._pieces.find(entity)
        unknown = sorted(set(values) - {"code"})
        if unknown:
            raise EditError(f"field {unknown[0]!r}: a block has only the field 'code'")
        code = code_of(str(values.get("code", piece.code)))
        if is_large(code) != piece.large:
            size = "large" if piece.large else "small"
            raise EditError(
                f"field 'code': a {size} block can only become another {size} one; delete it and place anew"
            )
        after = Piece(code, piece.cells, piece.layer)
        return Edit(f"Make {describe(piece)} {color_of(code)}", (change(self, entity, after.to_json()),), select=entity)

    # ---- what the app shows --------------------------------------------------------------------------------
    def scene_items(self, selected: str | None = None) -> list[SceneItem]:
        """The board with its cell labels, the directors' walls and eyes, the blocks and the selection."""
        items = [*floor_items(True), *director_items(), *(piece_item(p) for p in self._pieces.values())]
        piece = self._pieces.get(selected or "")
        if piece is not None:
            box = pv.Box(bounds=block_bounds(piece.cells, piece.layer, SELECTED_SIZE))
            items.append(
                SceneItem(
                    f"selected:{selected}",
                    "selection",
                    box,
                    HIGHLIGHT_RGB,
                    style="wireframe",
                    tooltip=f"selected: {describe(piece)}",
                    line_width=5.0,
                )
            )
        return items

    def cameras(self) -> dict[str, CameraPose]:
        """Each director at its wall, the builder from above and a three-quarter view."""
        return dict(CAMERAS)

    def views(self) -> dict[str, dict[str, Any]]:
        """Each director's view of the structure now (``WallView.to_json()``): what its wall picture draws."""
        return {d: director_view(self.board, d, self.interior).to_json() for d in DIRECTORS}

    def pictures(self) -> dict[str, Image.Image]:
        """Each director's wall as that director is shown it, and the structure as the builder's board view."""
        target = self.board.to_json()
        out = {f"{d}: {WALL_NAMES[d]} wall": wall_image(v, 72, target_json=target) for d, v in self.views().items()}
        out["builder: board from above"] = board_image(target, 72)
        return out

    def summary(self) -> str:
        """Blocks, tier, the blocks no director sees and whether the rules allow the structure."""
        count = self.board.block_count()
        large = sum(p.large for p in self._pieces.values())
        hidden = ", ".join(f"({c[0]},{c[1]}) layer {k}" for c, k in sorted(self.hidden)) or "none"
        legal = f"breaks the rules: {self.problem}" if self.problem else "legal under the rules"
        return (
            f"blocks: {count} ({len(self._pieces)} pieces, {large} large), tier {tier_of(count)}; "
            f"hidden from every director: {hidden}; {legal}"
        )

    def inspect(self, entity: str) -> list[str]:
        """Who sees the block and whether it can come off."""
        piece = self._pieces.find(entity)
        seers = [
            f"{d} ({WALL_NAMES[d]} wall)"
            for d in DIRECTORS
            if any((c, piece.layer) in visible_cell_layers(self.board, d, self.interior) for c in piece.cells)
        ]
        on_top = all(self.board.height(c) == piece.layer + 1 for c in piece.cells)
        return [
            describe(piece),
            f"seen by {', '.join(seers)}" if seers else "no director sees it",
            "on top: it can be removed" if on_top else "covered: remove the blocks above it first",
        ]

    # ---- actions and files ---------------------------------------------------------------------------------
    def actions(self) -> list[DocumentAction]:
        return [DocumentAction(CHECK, "Build the structure move by move with the engine and say what it finds")]

    def run(self, action: str) -> str:
        """``Check against the rules``: the engine's verdict on building the structure from an empty board."""
        if action != CHECK:
            raise EditError(f"no action {action!r}")
        if self.problem:
            return f"The engine refuses the structure: {self.problem}"
        return f"Legal: the builder can make it in {len(build_order(self.board))} moves from an empty board"

    def structure(self) -> Structure:
        """The structure as the family's tasks hold it; EditError when it breaks the rules."""
        if self.problem:
            raise EditError(f"the structure breaks the rules: {self.problem}")
        return Structure(self.structure_id, self.board, tier_of(self.board.block_count()))

    def to_json(self) -> dict[str, Any]:
        """A structure file (``run --tasks FILE`` plays it) with the editor's interior setting."""
        body = self.structure().to_json()
        return {"format": STRUCTURE_FORMAT, "version": INDEX_VERSION, **body, "editor": {"interior": self.interior}}

    def playable(self) -> dict[str, Any]:
        """The structure as a blocks task; EditError while it is empty or breaks the rules."""
        if not self._pieces:
            raise EditError("the structure is empty: place at least one block to play it")
        return self.structure().to_json()


# ---- starting a document ----------------------------------------------------------------------------------------
NEW_FIELDS: tuple[FormField, ...] = (
    FormField("id", "text", "Structure id (the episodes' name)", value=DEFAULT_ID),
    FormField("interior", "choice", "What D2 sees of the middle cells", choices=INTERIORS, value="paper"),
)


def _interior(value: Any, where: str) -> Interior:
    for known in INTERIORS:
        if value == known:
            return known
    raise EditError(f"{where}: expected one of {', '.join(INTERIORS)}, got {value!r:.40}")


def new_document(options: Mapping[str, Any]) -> StructureDocument:
    """An empty 3x3 board (``options``: ``id``, ``interior``; see :data:`NEW_FIELDS`)."""
    sid = str(options.get("id") or DEFAULT_ID)
    if not SAFE_ID.match(sid):
        raise EditError(f"field 'id': {sid!r:.40} is not a plain file name (letters, digits, '.', '_', '-')")
    return StructureDocument((), sid, _interior(options.get("interior", "paper"), "field 'interior'"))


def open_document(path: Path) -> StructureDocument:
    """A structure file as a document; EditError naming the file and the field that is wrong."""
    try:
        data = read_json(path)
        if isinstance(data, Mapping) and data.get("format") == INDEX_FORMAT:
            raise FormatError(path, "field 'format'", "an index of several structures: open one structure file")
        (structure,) = load_structures(path)
    except FormatError as exc:
        raise EditError(str(exc)) from None
    editor = data.get("editor")
    interior = _interior(
        (editor if isinstance(editor, Mapping) else {}).get("interior", "paper"), f"{path}, field 'editor.interior'"
    )
    return StructureDocument(list(structure.board.pieces()), structure.id, interior, path)


def can_open(path: Path) -> bool:
    """Whether ``path`` is a blocks structure file."""
    try:
        data = read_json(path) if path.suffix == ".json" else None
    except FormatError:
        return False
    return isinstance(data, Mapping) and data.get("format") == STRUCTURE_FORMAT


EDITOR = EditorKind(
    new=new_document,
    open=open_document,
    can_open=can_open,
    file_filter="Blocks target structure (*.json)",
    new_fields=NEW_FIELDS,
)
"""The blocks family's editor: target structures (registered as ``WorldFamily.editor``)."""
