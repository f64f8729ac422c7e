"""Target structures for the block world (CRAFT appendix B.3).

Generation has two stages. Heights: the seven outer cells always get three blocks; the two optional cells
(1,1) and (2,1) get 0, 1 or 2, uniformly and independently. Tiling: each layer is tiled on its own. The cells
that need a block on that layer are visited in grid order; an unfilled cell tries, with probability
:data:`DOMINO_PROBABILITY`, to pair with a random unfilled orthogonal neighbour that also needs a block on that
layer (a large block); otherwise it gets a small block. Colours are uniform over the five. A few retries avoid
putting the same block code on the same cell in two consecutive layers.

Because a domino only joins two cells that both need a block on its layer, and heights never have gaps, a
structure can always be built layer by layer under the engine's rules (:func:`build_order`). The CRAFT
reference generator could emit dominoes into (1,1)/(2,1) that its own engine then refused; this one cannot.

The total block count (a large block counting in both cells) is ``21 + h(1,1) + h(2,1)``, so 21-25.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simlab.core.errors import FormatError
from simlab.core.reading import check_version, read_json
from simlab.core.recording import SAFE_ID, write_json_atomic
from simlab.core.seeding import rng
from simlab.worlds.blocks.model import CELLS, COLORS, MAX_HEIGHT, Board, Cell, Move, adjacent

OPTIONAL_CELLS: tuple[Cell, ...] = ((1, 1), (2, 1))
REQUIRED_CELLS: tuple[Cell, ...] = tuple(c for c in CELLS if c not in OPTIONAL_CELLS)
DOMINO_PROBABILITY = 0.5
REPEAT_RETRIES = 3
TIERS: tuple[str, ...] = ("simple", "medium", "complex")
INDEX_FILE = "structures.json"
INDEX_FORMAT = "simlab.blocks.structures"
STRUCTURE_FORMAT = "simlab.blocks.structure"
INDEX_VERSION = 1


def tier_of(count: int) -> str:
    """Complexity tier of a structure with ``count`` blocks: <=22 simple, 23-24 medium, >24 complex."""
    if count <= 22:
        return "simple"
    return "medium" if count <= 24 else "complex"


@dataclass(frozen=True)
class Structure:
    """A named target structure and its complexity tier."""

    id: str
    board: Board
    tier: str

    def to_json(self) -> dict[str, Any]:
        """``{"id", "tier", "blocks", "board"}`` with the board in :meth:`Board.to_json` form."""
        return {"id": self.id, "tier": self.tier, "blocks": self.board.block_count(), "board": self.board.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Structure:
        """Inverse of :meth:`to_json`; raises ValueError naming the bad field."""
        if not isinstance(data, Mapping):
            raise ValueError("expected a JSON object for a structure")
        sid = data.get("id")
        if not isinstance(sid, str) or not sid:
            raise ValueError(f"field 'id': expected a non-empty string, got {sid!r}")
        board_data = data.get("board")
        if not isinstance(board_data, Mapping):
            raise ValueError("field 'board': expected an object with 'stacks' and 'spans'")
        try:
            board = Board.from_json(board_data)
        except ValueError as exc:
            raise ValueError(f"field 'board': {exc}") from None
        count = board.block_count()
        if data.get("blocks", count) != count:
            raise ValueError(f"field 'blocks': says {data.get('blocks')!r} but the board holds {count}")
        tier = data.get("tier", tier_of(count))
        if tier != tier_of(count):
            raise ValueError(f"field 'tier': {tier!r} does not match {count} blocks ({tier_of(count)})")
        return cls(sid, board, tier)


def structure_id(index: int) -> str:
    """``structure_000`` style id of the ``index``-th structure."""
    return f"structure_{index:03d}"


def generate_structure(seed: int, index: int) -> Structure:
    """The ``index``-th structure of the run ``seed``; independent of how many others are generated."""
    heights = _heights(rng(seed, "blocks-structure", index, "heights"))
    codes: dict[Cell, list[str]] = {c: [] for c in CELLS}
    spans: list[tuple[int, Cell, Cell]] = []
    for layer in range(MAX_HEIGHT):
        needed = [c for c in CELLS if heights[c] > layer]
        tiles = _tile_layer(needed, codes, rng(seed, "blocks-structure", index, "layer", layer))
        for cells, code in tiles:
            for c in cells:
                codes[c].append(code)
            if len(cells) == 2:
                spans.append((layer, cells[0], cells[1]))
    board = Board.from_codes(codes, spans)
    return Structure(structure_id(index), board, tier_of(board.block_count()))


def generate_structures(n: int, seed: int) -> list[Structure]:
    """``n`` structures with ids ``structure_000``, ``structure_001``, ..."""
    return [generate_structure(seed, index) for index in range(n)]


TIER_SHARES = {"simple": 29, "medium": 52, "complex": 19}
"""The tiers of CRAFT's published 100 structures: uniform optional heights (the reference generator's rule)
would give 1 complex in 9, the published set holds 19 in 100, so the tier is drawn first at these shares."""
OPTIONAL_HEIGHTS = {
    tier: [(a, b) for a in range(3) for b in range(3) if tier_of(21 + a + b) == tier] for tier in TIER_SHARES
}
"""The heights of the two optional cells that make each tier (the seven outer cells hold 21 blocks)."""


def _heights(r: random.Random) -> dict[Cell, int]:
    heights = dict.fromkeys(REQUIRED_CELLS, MAX_HEIGHT)
    tier = r.choices(list(TIER_SHARES), weights=list(TIER_SHARES.values()))[0]
    for cell, height in zip(OPTIONAL_CELLS, r.choice(OPTIONAL_HEIGHTS[tier]), strict=True):
        heights[cell] = height
    return heights


def _tile_layer(
    needed: list[Cell], below: Mapping[Cell, list[str]], r: random.Random
) -> list[tuple[tuple[Cell, ...], str]]:
    """Cover ``needed`` with small blocks and dominoes; ``below`` holds the codes of the layers under it."""
    free = list(needed)  # a list in grid order, so choices never depend on set iteration order
    order = list(needed)
    r.shuffle(order)  # as the reference: cells in a random order (grid order lays fewer dominoes)
    tiles: list[tuple[tuple[Cell, ...], str]] = []
    for cell in order:
        if cell not in free:
            continue
        free.remove(cell)
        partners = [c for c in free if adjacent(cell, c)]
        cells: tuple[Cell, ...] = (cell,)
        if partners and r.random() < DOMINO_PROBABILITY:
            partner = r.choice(partners)
            free.remove(partner)
            cells = tuple(sorted((cell, partner)))
        tiles.append((cells, _pick_code(cells, below, r)))
    return tiles


def _pick_code(cells: tuple[Cell, ...], below: Mapping[Cell, list[str]], r: random.Random) -> str:
    """A random colour for the block; retry a few times when a covered cell has the same code just below."""
    size = "l" if len(cells) == 2 else "s"
    code = r.choice(COLORS)[0] + size
    for _ in range(REPEAT_RETRIES):
        if not any(below[c] and below[c][-1] == code for c in cells):
            break
        code = r.choice(COLORS)[0] + size
    return code


def build_order(structure: Structure | Board) -> list[Move]:
    """A legal sequence of placements that builds the structure from an empty board, layer by layer."""
    board = structure.board if isinstance(structure, Structure) else structure
    return [Move.place(p.code, p.cells[0], p.layer, p.cells[1] if p.large else None) for p in board.pieces()]


# ---- files ---------------------------------------------------------------------------------------------------
def save_structures(structures: Iterable[Structure], out_dir: str | Path, seed: int | None = None) -> Path:
    """Write ``<id>.json`` per structure and the index ``structures.json``; return the index path."""
    out = Path(out_dir)
    ids = []
    for s in structures:
        write_json_atomic(
            out / f"{s.id}.json", {"format": STRUCTURE_FORMAT, "version": INDEX_VERSION, **s.to_json()}, 2
        )
        ids.append(s.id)
    index = {"format": INDEX_FORMAT, "version": INDEX_VERSION, "seed": seed, "structures": ids}
    write_json_atomic(out / INDEX_FILE, index, 2)
    return out / INDEX_FILE


def load_structures(path: str | Path) -> list[Structure]:
    """Read a directory (through its index, else every ``structure_*.json``), an index file or one structure
    file. Raises FormatError naming the file and the bad field."""
    p = Path(path)
    if p.is_dir():
        index = p / INDEX_FILE
        if os.path.lexists(index):  # a link to nowhere (or to itself) is refused by the reader, by name
            return _load_index(index)
        return [_load_one(f) for f in sorted(p.glob("structure_*.json"))]
    data = read_json(p)
    if isinstance(data, Mapping) and data.get("format") == INDEX_FORMAT:
        return _load_index(p)
    return [_parse_structure(p, data)]


def _load_index(index: Path) -> list[Structure]:
    data = read_json(index)
    check_version(data, INDEX_FORMAT, INDEX_VERSION, index)
    ids = data.get("structures")
    if not isinstance(ids, list) or not all(isinstance(i, str) and SAFE_ID.match(i) for i in ids):
        raise FormatError(index, "field 'structures'", "expected a list of structure ids that are plain file names")
    structures = [_load_one(index.parent / f"{sid}.json") for sid in ids]
    for sid, s in zip(ids, structures, strict=True):
        if s.id != sid:
            raise FormatError(index.parent / f"{sid}.json", "field 'id'", f"expected {sid!r}, got {s.id!r}")
    return structures


def _load_one(path: Path) -> Structure:
    return _parse_structure(path, read_json(path))


def _parse_structure(path: Path, data: Any) -> Structure:
    check_version(data, STRUCTURE_FORMAT, INDEX_VERSION, path)
    try:
        return Structure.from_json(data)
    except ValueError as exc:
        raise FormatError(path, "", str(exc)) from None
