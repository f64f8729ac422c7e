"""Plain-English instructions for boards: what the oracle programmer says and what the scripted robot reads.

The oracle says one component per sentence, with its cells spelled out::

    Place a red washer at row 2, column 3.
    Place a blue horizontal bridge at row 7, columns 3 and 4.
    Place a green vertical bridge at column 5, rows 6 and 7.
    Remove the red washer from row 2, column 3.

The reader also takes the reference data's synthetic wording ("place a green bridge vertically in the 5th
row, 3rd column") and any mix of "row R"/"Rth row" and "column C"/"Cth column", one or more sentences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from simlab.worlds.boards.model import COLOURS, Placement

SHAPE_WORDS = {"washer": "washer", "nut": "nut", "screw": "screw", "bridge": "bridge"}
BRIDGE_WORDS = {"bridge-h": "horizontal bridge", "bridge-v": "vertical bridge"}


@dataclass(frozen=True)
class Step:
    """One instruction: ``verb`` place or remove, and the placement it names."""

    verb: str
    placement: Placement

    def code(self) -> str:
        """The robot API call that does it."""
        p = self.placement
        if self.verb == "remove":
            return f"remove(board, {p.x}, {p.y}, '{p.shape}', '{p.colour}')"
        return p.code()


def say(step: Step) -> str:
    """The step in the oracle's words."""
    p = step.placement
    what = BRIDGE_WORDS.get(p.shape, p.shape)
    if p.shape == "bridge-h":
        where = f"row {p.x}, columns {p.y} and {p.y + 1}"
    elif p.shape == "bridge-v":
        where = f"column {p.y}, rows {p.x} and {p.x + 1}"
    else:
        where = f"row {p.x}, column {p.y}"
    if step.verb == "remove":
        return f"Remove the {p.colour} {what} from {where}."
    return f"Place a {p.colour} {what} at {where}."


_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n+|\s+(?:and )?then\s+", re.IGNORECASE)
_VERB = re.compile(r"\b(place|put|add|stack|remove|take)\b", re.IGNORECASE)
_COLOUR = re.compile(r"\b(" + "|".join(COLOURS) + r")\b", re.IGNORECASE)
_SHAPE = re.compile(r"\b(washer|nut|screw|bridge)s?\b", re.IGNORECASE)
_ORIENT = re.compile(r"\b(horizontal(?:ly)?|vertical(?:ly)?)\b", re.IGNORECASE)
_ROW = re.compile(r"\brows?\s+(\d+)|\b(\d+)(?:st|nd|rd|th)\s+row\b", re.IGNORECASE)
_COL = re.compile(r"\bcolumns?\s+(\d+)|\b(\d+)(?:st|nd|rd|th)\s+column\b", re.IGNORECASE)
_PAIR = re.compile(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)")


class NotUnderstood(ValueError):
    """A sentence the scripted robot cannot turn into one step; the message is its clarification question."""


def read_steps(text: str) -> list[Step]:
    """Every step in ``text``, in order; NotUnderstood (with a question) for the first sentence that names an
    action it cannot complete. Sentences without a verb (greetings, remarks) are skipped."""
    steps = []
    for sentence in _SENTENCE.split(text or ""):
        verb = _VERB.search(sentence)
        if verb is None:
            continue
        steps.append(_read(sentence, "remove" if verb.group(1).lower() in ("remove", "take") else "place"))
    return steps


def _read(sentence: str, verb: str) -> Step:
    colour, shape = _COLOUR.search(sentence), _SHAPE.search(sentence)
    if colour is None or shape is None:
        raise NotUnderstood(f"Which shape and colour do you mean in: {sentence.strip()!r}?")
    name = shape.group(1).lower()
    if name == "bridge":
        orient = _ORIENT.search(sentence)
        if orient is None:
            raise NotUnderstood("Should the bridge be horizontal or vertical?")
        name = "bridge-h" if orient.group(1).lower().startswith("horizontal") else "bridge-v"
    cell = _cell(sentence)
    if cell is None:
        raise NotUnderstood(f"In which row and column should the {colour.group(1).lower()} {name} go?")
    return Step(verb, Placement(name, colour.group(1).lower(), *cell))


def _cell(sentence: str) -> tuple[int, int] | None:
    """The (row, column) a sentence names: the first row and column number (a bridge's anchor), or ``(r, c)``."""
    row, col = _ROW.search(sentence), _COL.search(sentence)
    if row and col:
        return int(row.group(1) or row.group(2)), int(col.group(1) or col.group(2))
    pair = _PAIR.search(sentence)
    return (int(pair.group(1)), int(pair.group(2))) if pair else None
