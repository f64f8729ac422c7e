"""Templated English for builder moves, and the parser that reads such instructions back.

:func:`describe_move` turns a :class:`Move` into one sentence. Several phrasings exist; a seeded
:class:`random.Random` picks one so scripted directors sound a little varied, while the first phrasing is
used when no rng is given. Every phrasing names the cell(s) as ``(i,j)`` or ``row i column j`` and the
layer as ``layer N`` or ``LN`` (optionally with an ordinal like "the bottom layer"), so
:func:`parse_moves` always reads it back to the same move.

:func:`parse_moves` reads every instruction in a message. It splits the text at instruction verbs
(place / put / add / stack / set / drop ... for placing; remove / take off / take away / take out / lift off /
pick up ... for removing) and reads each clause for:

* a block: a colour word (green, blue, red, yellow, orange) and a size (small / little / single for small;
  large / big / long / double / domino for large), or a block code like ``gs`` / ``bl``; with no size word, a
  clause naming two cells is a large block, one cell a small block;
* the layer: ``layer 0`` / ``level 0`` / ``layer zero`` / ``L0``, or ``bottom|first|ground|lowest|base layer``
  (0), ``second|middle layer`` (1), ``third|top|highest|uppermost layer`` (2); the first one named counts;
* the cells: ``(0,1)``, ``(0, 1)``, ``[0,1]``, bare ``0,1`` or ``row 0 column 1`` / ``row 0, col 1``, in
  order: the first is the move's cell, a second (after "spanning to", "to", "across ... and", ...) its
  ``span_to``. An explicitly small block ignores a second cell.

A clause whose verb follows a negation ("don't", "do not", "never", "not") is skipped. A clause without a
cell, or a placement without a colour, is not an instruction. When a clause names no layer, the move is
dropped unless a ``board`` is passed, in which case the layer is the one the engine would accept (the stack
height for a placement, the top layer for a removal). Values are read as written (``(3,1)`` gives a move the
engine will reject); checking legality is the caller's job. Nothing is ever evaluated as code.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from simlab.worlds.blocks.model import COLORS, Action, Board, Cell, Move, color_of, in_grid, is_large

# ---- describing -------------------------------------------------------------------------------------------

CELL_NAMES: dict[Cell, str] = {
    (0, 0): "far-left corner",
    (0, 1): "middle of the far row",
    (0, 2): "far-right corner",
    (1, 0): "middle of the left column",
    (1, 1): "centre",
    (1, 2): "middle of the right column",
    (2, 0): "near-left corner",
    (2, 1): "middle of the near row",
    (2, 2): "near-right corner",
}
LAYER_WORDS: tuple[str, ...] = ("bottom", "middle", "top")

_PLACE_SMALL = (
    "Place a {size} {colour} block on {layer} at {cell}.",
    "Put a {size} {colour} block at {cell}, {layer}.",
    "Next, add a {size} {colour} block at {cell} on {layer}.",
    "Please stack a {size} {colour} block on {layer} at {cell}.",
)
_PLACE_LARGE = (
    "Place a {size} {colour} block on {layer} at {cell}, spanning to {span}.",
    "Put a {size} {colour} block on {layer} from {cell} to {span}.",
    "Next, add a {size} {colour} block across {cell} and {span}, {layer}.",
    "Please stack a {size} {colour} block at {cell} on {layer}, spanning to {span}.",
)
_REMOVE = (
    "Remove the top block at {cell} on {layer}{reason}.",
    "Take off the block at {cell}, {layer}{reason}.",
    "Please remove the block on {layer} at {cell}{reason}.",
)
_REMOVE_LARGE = (
    "Remove the large block on {layer} at {cell}, spanning to {span}{reason}.",
    "Take off the long block covering {cell} and {span} on {layer}{reason}.",
)
_LARGE_WORDS = ("large", "long", "big")


def _pick(options: tuple[str, ...], r: random.Random | None) -> str:
    return options[0] if r is None else r.choice(options)


def _cell_text(cell: Cell, r: random.Random | None, named: bool) -> str:
    plain = f"({cell[0]},{cell[1]})"
    if r is None:
        return f"the {CELL_NAMES[cell]} {plain}" if named and cell in CELL_NAMES else plain
    forms = [plain, f"({cell[0]}, {cell[1]})", f"row {cell[0]} column {cell[1]}"]
    if named and cell in CELL_NAMES:
        forms.append(f"the {CELL_NAMES[cell]} {plain}")
    return r.choice(forms)


def _layer_text(layer: int, r: random.Random | None) -> str:
    plain = f"layer {layer}"
    if r is None or not 0 <= layer < len(LAYER_WORDS):
        return plain
    return r.choice([plain, f"the {LAYER_WORDS[layer]} layer ({plain})", f"L{layer}"])


def describe_move(move: Move, r: random.Random | None = None, reason: str | None = None) -> str:
    """One English sentence for a place or remove move; :func:`parse_moves` reads it back to ``move``.

    ``r`` picks among phrasings (the first phrasing when None). ``reason`` is appended to a removal in
    brackets ("it is the wrong colour"); it must not contain coordinates or layers. A clarification is
    returned as its question text.
    """
    if move.action is Action.CLARIFY:
        return move.text
    if move.cell is None or move.layer is None:
        raise ValueError(f"cannot describe a move without a cell and a layer: {move.describe()}")
    fields = {
        "layer": _layer_text(move.layer, r),
        "cell": _cell_text(move.cell, r, named=move.span_to is None),
        "span": _cell_text(move.span_to, r, named=False) if move.span_to is not None else "",
        "reason": f" ({reason})" if reason else "",
    }
    if move.action is Action.REMOVE:
        return _pick(_REMOVE if move.span_to is None else _REMOVE_LARGE, r).format(**fields)
    code = str(move.block)
    large = is_large(code)
    size = _pick(_LARGE_WORDS, r) if large else "small"
    template = _pick(_PLACE_LARGE if move.span_to is not None else _PLACE_SMALL, r)
    return template.format(size=size, colour=color_of(code), **fields)


# ---- parsing ----------------------------------------------------------------------------------------------

_COLOUR_RE = "|".join(COLORS)
_CODE_RE = r"[gbryo][sl]"
_SIZE_RE = r"small|little|tiny|single|large|big|long|double|domino"
_PLACE_VERB = re.compile(
    rf"\b(?:place|put|add|stack|set|drop)\b(?=\s+(?:a|an|one|another|the|{_SIZE_RE}|{_COLOUR_RE}|{_CODE_RE})\b)"
)
_REMOVE_VERB = re.compile(r"\b(?:remove|delete|take\s+(?:off|away|out|down)|lift\s+off|pick\s+up)\b")
_NEGATION = re.compile(r"(?:\bnot|n't|\bnever|\bno)\s+(?:\w+\s+){0,2}$")
_DIGIT_WORDS = {"zero": 0, "one": 1, "two": 2}
_LAYER_NUM = re.compile(r"\b(?:layer|level)\s*#?\s*(\d|zero|one|two)\b|\bl(\d)\b")
_LAYER_ORDINALS: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"\b(?:bottom|first|ground|lowest|base)\s+(?:layer|level)\b"), 0),
    (re.compile(r"\b(?:second|middle)\s+(?:layer|level)\b"), 1),
    (re.compile(r"\b(?:third|top|highest|uppermost)\s+(?:layer|level)\b"), 2),
)
_CELL = re.compile(
    r"row\s*(\d)\s*,?\s*(?:and\s+)?(?:col|column)\s*(\d)"
    r"|[(\[]\s*(\d)\s*,\s*(\d)\s*[)\]]"
    r"|(?<![\d.])(\d)\s*,\s*(\d)(?![\d])"
)
_COLOUR = re.compile(rf"\b({_COLOUR_RE})\b")
_SIZE = re.compile(rf"\b({_SIZE_RE})\b")
_CODE = re.compile(rf"\b({_CODE_RE})\b")
_SMALL_WORDS = frozenset({"small", "little", "tiny", "single"})


@dataclass(frozen=True)
class _Clause:
    """One instruction: its verb's action, the words after the verb and the sentence's words before it."""

    action: Action
    body: str
    prefix: str = ""


def parse_moves(text: str, board: Board | None = None) -> list[Move]:
    """Every place/remove instruction in ``text``, in order; ``[]`` when it holds none.

    ``board`` (optional) fills in a layer the text leaves out; see the module docstring for the phrasings.
    """
    moves = []
    for clause in _clauses(text.lower()):
        move = _parse_clause(clause, board)
        if move is not None:
            moves.append(move)
    return moves


def _clauses(text: str) -> list[_Clause]:
    """Cut the text at instruction verbs; each clause runs to the next verb or the end of its sentence.

    The words before the first verb of a sentence ("At (0,0) on layer 0, place ...") are kept as the
    clause's prefix, read only for a cell or layer the words after the verb leave out.
    """
    verbs = sorted(
        [(m.start(), m.end(), Action.PLACE) for m in _PLACE_VERB.finditer(text)]
        + [(m.start(), m.end(), Action.REMOVE) for m in _REMOVE_VERB.finditer(text)]
    )
    clauses = []
    previous_end = 0
    for k, (start, end, action) in enumerate(verbs):
        stop = verbs[k + 1][0] if k + 1 < len(verbs) else len(text)
        prefix = _sentence_start(text[previous_end:start], first=k == 0)
        previous_end = end
        if not _NEGATION.search(text[max(0, start - 30) : start]):
            clauses.append(_Clause(action, _first_sentence(text[end:stop]), prefix))
    return clauses


_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|[;\n]")


def _first_sentence(text: str) -> str:
    """Cut at a full stop, question mark, semicolon or new line (a stop right after ``)`` counts too)."""
    match = _SENTENCE_END.search(text)
    return text if match is None else text[: match.start()]


def _sentence_start(gap: str, first: bool) -> str:
    """The words between the last sentence end in ``gap`` and the verb; none when a verb of the same
    sentence came before (those words belong to that verb's clause)."""
    ends = list(_SENTENCE_END.finditer(gap))
    if ends:
        return gap[ends[-1].end() :]
    return gap if first else ""


def _parse_clause(clause: _Clause, board: Board | None) -> Move | None:
    layer, body = _find_layer(clause.body)
    cells = _find_cells(body)
    if layer is None or not cells:
        prefix_layer, prefix = _find_layer(clause.prefix)
        layer = prefix_layer if layer is None else layer
        cells = cells or _find_cells(prefix)
    if not cells:
        return None
    if clause.action is Action.REMOVE:
        return _fill(Move.remove(cells[0], -1, cells[1] if len(cells) > 1 else None), layer, board)
    code = _find_code(body, len(cells))
    if code is None:
        return None
    span = cells[1] if is_large(code) and len(cells) > 1 else None
    return _fill(Move.place(code, cells[0], -1, span), layer, board)


def _fill(move: Move, layer: int | None, board: Board | None) -> Move | None:
    """Set the layer; without one, infer it from the board when there is a board and a valid cell."""
    if layer is None:
        if board is None or not in_grid(move.cell):
            return None
        assert move.cell is not None
        layer = board.height(move.cell) - (1 if move.action is Action.REMOVE else 0)
        if layer < 0:
            return None
    return Move(move.action, move.cell, layer, move.block, move.span_to)


def _mask(text: str, match: re.Match[str]) -> str:
    return text[: match.start()] + " " * (match.end() - match.start()) + text[match.end() :]


def _find_layer(text: str) -> tuple[int | None, str]:
    """The first layer named in the clause, and the clause with every layer phrase blanked out (so their
    digits are not read as cells)."""
    found: list[tuple[int, int]] = []  # (position, layer)
    for match in _LAYER_NUM.finditer(text):
        word = match.group(1) or match.group(2)
        found.append((match.start(), _DIGIT_WORDS[word] if word in _DIGIT_WORDS else int(word)))
        text = _mask(text, match)
    for pattern, value in _LAYER_ORDINALS:
        for match in pattern.finditer(text):
            found.append((match.start(), value))
            text = _mask(text, match)
    return (min(found)[1] if found else None), text


def _find_cells(text: str) -> list[Cell]:
    cells = []
    for match in _CELL.finditer(text):
        digits = [g for g in match.groups() if g is not None]
        cells.append((int(digits[0]), int(digits[1])))
    return cells


def _find_code(text: str, n_cells: int) -> str | None:
    """Block code from colour and size words (or a literal code); None without a colour."""
    colour = _COLOUR.search(text)
    if colour is None:
        literal = _CODE.search(text)
        return literal.group(1) if literal else None
    size = _SIZE.search(text)
    large = n_cells > 1 if size is None else size.group(1) not in _SMALL_WORDS
    return colour.group(1)[0] + ("l" if large else "s")


def phrasings() -> dict[str, tuple[str, ...]]:
    """The sentence templates :func:`describe_move` chooses from, by kind (for documentation and tests)."""
    return {
        "place_small": _PLACE_SMALL,
        "place_large": _PLACE_LARGE,
        "remove": _REMOVE,
        "remove_large": _REMOVE_LARGE,
    }
