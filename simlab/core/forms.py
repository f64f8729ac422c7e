"""A field of a form a family declares, as plain data: what the app builds a widget from.

One person's reply form (:class:`~simlab.core.family.ReplyForm`) and an editor's inspector form
(:mod:`simlab.core.editing`) are both made of these. They live apart from the family contract so the editor's
contract can use them without importing the family's (which itself names the editor's kind).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

FieldKind = Literal["choice", "int", "number", "cell", "flag", "text", "code"]


@dataclass(frozen=True)
class FormField:
    """One entry of a person's reply form, and of the role's action schema.

    ``choice`` picks one of ``choices``; ``int`` is a whole number in ``low..high`` and ``number`` a decimal one
    (two decimals: metres, degrees); ``cell`` is a pair of whole numbers;
    ``flag`` is a checkbox that puts ``value`` under ``name`` when ticked; ``text`` is a line of text and
    ``code`` several lines in a fixed-width font (a robot's program).
    ``optional`` fields have a checkbox and are left out unless ticked; ``when`` = (other field, values)
    shows the field only while that field holds one of the values."""

    name: str
    kind: FieldKind
    label: str
    choices: tuple[str, ...] = ()
    low: int = 0
    high: int = 0
    optional: bool = False
    when: tuple[str, tuple[str, ...]] | None = None
    value: Any = None
