"""Read CRAFT's per-turn game records (csu-signal/CRAFT ``divergenceData/``, commit 51b13ed).

One file is one game: a JSON list of turn entries (in any order; the published files run last turn first)::

    {"turn": 20, "predicted": "D1", "builderSelected": "D3",
     "D1": {"speaker": "D1", "utterance": "...", "constraint": -1, "satisfaction": 0.45,
            "structure": "structure_002", "modelCombo": "Qwen7B + 4o-mini",
            "structureBefore": "{'(0,0)': ['os', 'bs'], ...}", "structureAfter": "{...}",
            "moveData": "Action: place, gs, Layer: 0, Position: (2,1)", "moveFailed": null},
     "D2": {...}, "D3": {...}}

Every director entry of a turn repeats the turn's boards and move; an empty ``utterance`` is a director that
did not speak. Boards are Python dict literals of per-cell code lists (a large block listed in both of its
cells) without the large blocks' pairing, so the second cell of a logged large move is read off the board
after it and a board met on its own has its pairs inferred (:func:`board_from_codes`). The target is not in
the file: it comes from a CRAFT structures file by the entry's ``structure`` id.

The reader never evaluates the text it reads (the boards are parsed by a small grammar, not ``eval``), never
stops at an odd field (each is a note in :attr:`TurnLog.notes`) and turns the file into the neutral records
of :mod:`simlab.worlds.blocks.craft_import`, which the run importer and the engine check share.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simlab.core.errors import FormatError
from simlab.core.events import MAX_TURN
from simlab.worlds.blocks.craft_import import Codes, CraftGame, CraftTurn, DirectorMessage, Notes, board_from_codes
from simlab.worlds.blocks.generator import Structure
from simlab.worlds.blocks.model import CELLS, Cell, Move, adjacent, is_large

DIRECTORS = ("D1", "D2", "D3")
MAX_ENTRIES = 10_000  # turns in one file: a game has 20; far more is not a game log
_CELL_ENTRY = re.compile(r"'\((\d),(\d)\)':\s*\[([^\]]*)\]", re.ASCII)  # ASCII: int() refuses '²'; \d takes it
_CODE = re.compile(r"'([a-z]{1,3})'")
_BOARD_SHAPE = re.compile(r"\{\s*(?:'\(\d,\d\)':\s*\[[^\]]*\]\s*,?\s*)*\}", re.ASCII)
_MOVE = re.compile(
    r"Action:\s*(?P<action>place|remove)\s*,\s*(?:(?P<block>[a-z]{2})\s*,\s*)?"
    r"Layer:\s*(?P<layer>\d{1,4})\s*,\s*Position:\s*\((?P<row>\d)\s*,\s*(?P<col>\d)\)",
    re.IGNORECASE | re.ASCII,
)
NO_MOVE = "No Move Executed"


def is_turn_log(data: Any) -> bool:
    """Whether ``data`` (a file's JSON) is a per-turn record: a list of entries with ``turn`` and directors."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(x, Mapping) and "turn" in x and any(d in x for d in DIRECTORS) for x in data)
    )


@dataclass
class TurnLog:
    """One file read: the game, the models of its ``modelCombo`` and the notes on what was odd."""

    path: str
    game: CraftGame
    models: dict[str, str]
    notes: list[str] = field(default_factory=list)


def read_turn_log(path: Path, data: Sequence[Any], targets: Mapping[str, Structure]) -> TurnLog:
    """The game of one per-turn file (``data`` is its parsed JSON, see :func:`is_turn_log`). ``targets`` are
    the structures by id; FormatError when the file names none of them or several."""
    if len(data) > MAX_ENTRIES:
        raise FormatError(path, "top level", f"expected at most {MAX_ENTRIES} turn entries, got {len(data)}")
    entries = [e for e in data if isinstance(e, Mapping)]
    structure_id = _one_value(path, entries, "structure")
    target = targets.get(structure_id)
    if target is None:
        raise FormatError(
            path, "structure", f"expected a structure of the structures file; {structure_id!r} is not one of its ids"
        )
    notes: list[str] = []
    note = Notes(notes, Path(path).name)
    turns = _turns(entries, note)
    game = CraftGame(
        structure_id=structure_id,
        target_codes={c: target.board.codes(c) for c in CELLS},
        target=target.board,
        archetypes={},
        complexity=target.tier,
        final_progress=None,
        stopping_reason=None,
        turns=turns,
    )
    return TurnLog(str(path), game, _models(_one_value(path, entries, "modelCombo")), notes)


def _one_value(path: Path, entries: Sequence[Mapping[str, Any]], name: str) -> str:
    """The one value every director entry gives ``name`` (the game's structure, its models)."""
    values = {str(d[name]) for e in entries for d in _director_entries(e) if isinstance(d.get(name), str)}
    if len(values) != 1:
        found = ", ".join(sorted(values)[:3]) or "none"
        raise FormatError(path, name, f"expected one value shared by every director entry, found {found}")
    return values.pop()


def _models(combo: str) -> dict[str, str]:
    """``"Qwen7B + 4o-mini"``: the directors' model, then the builder's."""
    director, _, builder = combo.partition(" + ")
    return {"director": director.strip() or "unknown", "builder": builder.strip() or "unknown"}


def _director_entries(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [entry[d] for d in DIRECTORS if isinstance(entry.get(d), Mapping)]


def _turns(entries: Sequence[Mapping[str, Any]], note: Notes) -> list[CraftTurn]:
    by_number: dict[int, Mapping[str, Any]] = {}
    for k, entry in enumerate(entries):
        number = entry.get("turn")
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= MAX_TURN:
            note(f"entry [{k}]: turn {str(number)[:20]} is not a turn number 1..{MAX_TURN}, skipped")
        elif number in by_number:
            note(f"entry [{k}]: turn {number} comes twice, the first kept")
        else:
            by_number[number] = entry
    numbers = sorted(by_number)
    missing = [n for n in range(1, numbers[-1] + 1) if n not in by_number] if numbers else []
    if missing:
        note(f"turns not in the log: {_ranges(missing)}")
    return [_turn(n, by_number[n], Notes(note.sink, f"{note.where} turn {n}")) for n in numbers]


def _ranges(numbers: Sequence[int]) -> str:
    """``[16, 17, 18, 4]`` -> ``"4, 16-18"``."""
    out: list[str] = []
    for n in sorted(numbers):
        if out and out[-1].split("-")[-1] == str(n - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
    return ", ".join(out)


def _turn(number: int, entry: Mapping[str, Any], note: Notes) -> CraftTurn:
    directors = _director_entries(entry)
    first = directors[0] if directors else {}
    for d in directors[1:]:
        for key in ("structureBefore", "structureAfter", "moveData", "moveFailed"):
            if d.get(key) != first.get(key):
                note(f"directors disagree on {key}; the first director's kept")
    before = parse_board_text(first.get("structureBefore"), "structureBefore", note)
    after = parse_board_text(first.get("structureAfter"), "structureAfter", note)
    failed = _failed(first.get("moveFailed"), note)
    move = _move(first.get("moveData"), before, after, note)
    return CraftTurn(
        number=number,
        codes_before=before or {c: [] for c in CELLS},
        board_before=board_from_codes(before) if before is not None else None,
        messages=_messages(entry),
        oracle=[],
        move=move,
        executed=move is not None and not failed,
        error_text=None if move is None or not failed else "refused by the reference engine (the log gives no reason)",
        error=None,
        followed_oracle=None,
        logged_metrics=None,
        codes_after=after,
        board_after=None,  # the engine check replays the move and knows the pairs best
        after_source="snapshot" if after is not None else "missing",
        logged=_logged(entry),
        oracle_logged=False,
    )


def _messages(entry: Mapping[str, Any]) -> list[DirectorMessage]:
    return [
        DirectorMessage(d, "", str(entry[d].get("utterance") or ""))
        for d in DIRECTORS
        if isinstance(entry.get(d), Mapping)
    ]


def _logged(entry: Mapping[str, Any]) -> dict[str, Any]:
    """What the log adds to a turn: the director the builder followed, the predicted one, and per director
    the ``constraint`` and ``satisfaction`` values as logged."""
    out: dict[str, Any] = {}
    for theirs, ours in (("builderSelected", "followed_director"), ("predicted", "predicted_director")):
        if isinstance(entry.get(theirs), str):
            out[ours] = entry[theirs]
    for key in ("constraint", "satisfaction"):
        values = {d: entry[d].get(key) for d in DIRECTORS if isinstance(entry.get(d), Mapping)}
        numbers = {d: v for d, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        if numbers:
            out[key] = numbers
    return out


def _failed(raw: Any, note: Notes) -> bool:
    """``moveFailed``: null when the move was made, ``"True"`` when it failed."""
    if raw is None or raw in ("False", False):
        return False
    if raw in ("True", True):
        return True
    note(f"moveFailed {str(raw)[:20]!r} is neither null nor 'True'; taken as failed")
    return True


# ---- boards ---------------------------------------------------------------------------------------------


def parse_board_text(text: Any, name: str, note: Notes) -> Codes | None:
    """A logged board, ``"{'(0,0)': ['os', 'bs'], '(0,1)': [], ...}"``, as per-cell code lists; None (with a
    note) when the text is not of that shape. Parsed by pattern, never evaluated."""
    if not isinstance(text, str) or len(text) > 4096 or not _BOARD_SHAPE.fullmatch(text.strip()):
        note(f"{name} is not a board of the form {{'(r,c)': ['code', ...], ...}}")
        return None
    codes: Codes = {c: [] for c in CELLS}
    for row, col, stack in _CELL_ENTRY.findall(text):
        cell = (int(row), int(col))
        if cell not in codes:
            note(f"{name}: cell {cell} is outside the 3x3 grid")
            return None
        codes[cell] = _CODE.findall(stack)
    return codes


# ---- moves ----------------------------------------------------------------------------------------------


def _move(text: Any, before: Codes | None, after: Codes | None, note: Notes) -> Move | None:
    """The logged move; a large block's second cell is the neighbour whose stack grew (or shrank) on the same
    layer. None for ``No Move Executed`` or a text this reader does not know (noted)."""
    if not isinstance(text, str) or NO_MOVE.lower() in text.lower():
        if not isinstance(text, str):
            note("moveData missing")
        return None
    found = _MOVE.search(text)
    if found is None:
        note(f"moveData {text[:60]!r} is not 'Action: place|remove, CODE, Layer: N, Position: (r,c)'")
        return None
    cell, layer = (int(found["row"]), int(found["col"])), int(found["layer"])
    block = found["block"]
    if found["action"].lower() == "remove":
        return Move.remove(cell, layer, _partner(cell, layer, after, before))
    if block is None:
        note(f"moveData {text[:60]!r}: a placement without a block code")
        return None
    return Move.place(block, cell, layer, _partner(cell, layer, before, after) if is_large(block) else None)


def _partner(cell: Cell, layer: int, lower: Codes | None, higher: Codes | None) -> Cell | None:
    """The neighbour of ``cell`` whose stack is one block taller in ``higher`` than in ``lower`` and holds
    ``cell``'s code at ``layer`` there; None when the boards do not show one (a failed move)."""
    if lower is None or higher is None or len(higher.get(cell, [])) <= layer:
        return None
    code = higher[cell][layer]
    for other in CELLS:
        stack = higher.get(other, [])
        grew = len(stack) == len(lower.get(other, [])) + 1 == layer + 1
        if adjacent(cell, other) and grew and stack[layer] == code:
            return other
    return None
