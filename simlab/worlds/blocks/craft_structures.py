"""CRAFT's own structure files, as csu-signal/CRAFT publishes them, read as SimLab structures.

``data/structures_dataset_20.json`` (the paper's 20 evaluation structures) and
``data/structures_dataset_v2.json`` (its 100) are one JSON list of objects::

    {"id": "structure_001", "complexity": "medium",
     "structure": {"(0,0)": ["ys", "ol", "gs"], ...},          # per cell, block codes bottom to top
     "spans": {"1": [["(0,0)", "(1,0)"], ...], ...},           # per layer, the two cells of each large block
     "director_views": {...}, "metadata": {...}}

Each becomes a :class:`~simlab.worlds.blocks.generator.Structure` with the file's own id and its
``complexity`` label as the tier (the group ``run --group`` selects), whatever our own tier rule would say.
The directors' views are not read: SimLab derives them from the board, as the reference does. A file that is
not of this shape is refused with a FormatError naming the entry and the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeGuard

from simlab.core.errors import FormatError
from simlab.core.reading import read_json
from simlab.core.recording import SAFE_ID
from simlab.worlds.blocks.generator import TIERS, Structure, load_structures
from simlab.worlds.blocks.model import Board, Cell, parse_cell

SOURCE = "csu-signal/CRAFT, data/structures_dataset_20.json and data/structures_dataset_v2.json"


def is_craft_dataset(data: Any) -> TypeGuard[list[Mapping[str, Any]]]:
    """Whether ``data`` (a file's JSON) is CRAFT's list of structures rather than a SimLab file."""
    return isinstance(data, list) and bool(data) and all(isinstance(x, Mapping) and "structure" in x for x in data)


def structures_in(path: Path) -> tuple[list[Structure], bool]:
    """The structures of ``path``, SimLab's structure files (one, an index, a folder) or CRAFT's published list,
    and whether it was CRAFT's (its entries' places in the file are then the reference's structure indices)."""
    data = read_json(path) if path.is_file() else None
    if is_craft_dataset(data):
        return craft_structures(path, data), True
    return load_structures(path), False


def craft_structures(path: Path, data: Sequence[Mapping[str, Any]]) -> list[Structure]:
    """The structures of CRAFT's dataset ``data`` read from ``path``; FormatError on the first bad entry."""
    structures = [_structure(path, f"[{k}]", item) for k, item in enumerate(data)]
    seen: set[str] = set()
    for k, s in enumerate(structures):
        if s.id in seen:
            raise FormatError(path, f"[{k}].id", f"expected ids to differ; {s.id!r} comes twice")
        seen.add(s.id)
    return structures


def _structure(path: Path, where: str, item: Mapping[str, Any]) -> Structure:
    sid = item.get("id")
    if not isinstance(sid, str) or not SAFE_ID.match(sid):
        raise FormatError(path, f"{where}.id", f"expected a plain structure id, got {str(sid)[:40]!r}")
    tier = item.get("complexity")
    if tier not in TIERS:
        raise FormatError(path, f"{where}.complexity", f"expected one of {', '.join(TIERS)}, got {str(tier)[:40]!r}")
    codes = _codes(path, f"{where}.structure", item.get("structure"))
    spans = _spans(path, f"{where}.spans", item.get("spans") or {})
    try:
        board = Board.from_codes(codes, spans)
    except ValueError as exc:
        raise FormatError(path, where, f"expected a legal board: {exc}") from None
    return Structure(sid, board, str(tier))


def _codes(path: Path, where: str, raw: Any) -> dict[Cell, list[str]]:
    """``{"(r,c)": [codes bottom to top]}`` as cells and code lists."""
    if not isinstance(raw, Mapping):
        raise FormatError(path, where, "expected an object of cells, each a list of block codes")
    codes: dict[Cell, list[str]] = {}
    for key, stack in raw.items():
        if not isinstance(stack, list) or not all(isinstance(code, str) for code in stack):
            raise FormatError(path, f"{where}[{str(key)[:20]!r}]", "expected a list of block codes")
        codes[_cell(path, f"{where}[{str(key)[:20]!r}]", key)] = list(stack)
    return codes


def _spans(path: Path, where: str, raw: Any) -> list[tuple[int, Cell, Cell]]:
    """``{"layer": [["(r,c)", "(r,c)"], ...]}`` as (layer, cell, cell) triples."""
    if not isinstance(raw, Mapping):
        raise FormatError(path, where, "expected an object of layers, each a list of cell pairs")
    spans = []
    for layer, pairs in raw.items():
        place = f"{where}[{str(layer)[:20]!r}]"
        if not re.fullmatch("[0-9]{1,4}", str(layer)) or not isinstance(pairs, list):  # not '²', not 5,000 digits
            raise FormatError(path, place, "expected a layer number holding a list of cell pairs")
        for pair in pairs:
            if not isinstance(pair, list) or len(pair) != 2:
                raise FormatError(path, place, f"expected a pair of cells, got {str(pair)[:40]}")
            spans.append((int(layer), _cell(path, place, pair[0]), _cell(path, place, pair[1])))
    return spans


def _cell(path: Path, where: str, value: Any) -> Cell:
    try:
        return parse_cell(value)
    except ValueError:
        raise FormatError(path, where, f'expected a cell such as "(0,1)", got {str(value)[:20]!r}') from None
