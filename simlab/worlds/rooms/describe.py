"""Referring expressions for room objects (Cosmic, paper 3.2 and 7.2).

Each object gets the shortest description that is unique among *all* the scene's objects of its category,
trying in order:

1. the category alone, when the object is the only one of its kind (``"toilet"``);
2. colour and category (``"yellow cabinet"``; a window is named by its covering: ``"window with beige
   curtains"``);
3. size, colour and category (``"large white cabinet"``);
4. a relation to the nearest object of another category whose own short description (1-3) is unique:
   ``"purple door next to a yellow cabinet"``, or ``"wall art above the cabinet"`` when the object sits above
   it. The relation must single the object out: every other object with the same colour phrase is farther
   from that neighbour by at least :data:`RELATION_MARGIN`, and the object is within :data:`NEAR` of it.

Objects with no unique description are left out: questions never use them. Everything is deterministic:
objects are visited in sorted id order and ties are broken by id.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from simlab.worlds.rooms.model import RoomObject, Scene

NEAR = 1.5  # metres: "next to" / "above" only for a neighbour this close (box gap)
RELATION_MARGIN = 0.5  # metres: how much closer the object must be than every look-alike
ABOVE_TOLERANCE = 0.05  # metres of overlap still counted as resting above
IRREGULAR_PLURALS = {"shelf": "shelves", "bookshelf": "bookshelves", "wall art": "pieces of wall art"}


def category_name(category: str) -> str:
    """The category as words (``"plant_container"`` -> ``"plant container"``)."""
    return category.replace("_", " ").strip()


def plural(category: str) -> str:
    """The plural of a category name: ``shelf`` -> ``shelves``, ``bench`` -> ``benches``, ``chair`` -> ``chairs``."""
    name = category_name(category)
    if name in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[name]
    if name.endswith(("s", "x", "sh", "ch")):
        return name + "es"
    if name.endswith("y") and name[-2:-1] not in "aeiou":
        return name[:-1] + "ies"
    return name + "s"


def color_phrase(obj: RoomObject) -> str:
    """Colour and category: ``"yellow cabinet"``, or for a window its covering: ``"window with beige curtains"``."""
    name = category_name(obj.category)
    covering = obj.params.get("covering")
    if covering:
        shade = obj.params.get("covering_color") or obj.color
        return f"{name} with {shade} {covering}"
    return f"{obj.color} {name}"


def box_gap(a: RoomObject, b: RoomObject) -> float:
    """The gap between two world bounding boxes (0 when they touch or overlap)."""
    (alo, ahi), (blo, bhi) = a.bbox, b.bbox
    # written out, not summed over a generator: twice as fast (an editor's drag step asks a few hundred gaps),
    # the same sum in the same order
    dx = max(blo[0] - ahi[0], alo[0] - bhi[0], 0.0)
    dy = max(blo[1] - ahi[1], alo[1] - bhi[1], 0.0)
    dz = max(blo[2] - ahi[2], alo[2] - bhi[2], 0.0)
    return math.sqrt(dx**2 + dy**2 + dz**2)


def is_above(obj: RoomObject, other: RoomObject) -> bool:
    """True when ``obj`` rests above ``other``: its bottom at or over the other's top and its centre over it."""
    (lo, _), (olo, ohi) = obj.bbox, other.bbox
    cx, cy, _ = obj.center
    return lo[2] >= ohi[2] - ABOVE_TOLERANCE and olo[0] <= cx <= ohi[0] and olo[1] <= cy <= ohi[1]


def _short_levels(obj: RoomObject) -> list[tuple[str, tuple[str, ...]]]:
    """Candidate short descriptions with the attribute key that must be unique for each."""
    colour = color_phrase(obj)
    return [
        (category_name(obj.category), ()),
        (colour, (colour,)),
        (f"{obj.size_class} {colour}", (obj.size_class, colour)),
    ]


def short_descriptions(scene: Scene) -> dict[str, str | None]:
    """Each object's first of category / colour / size+colour that no other object of its category shares, or
    None: each level's keys counted once per category (a room's objects against each other in one pass, not
    each against all)."""
    levels = {o.id: _short_levels(o) for o in scene.objects}
    counts = Counter((o.category, k, key) for o in scene.objects for k, (_, key) in enumerate(levels[o.id]))
    return {
        o.id: next((text for k, (text, key) in enumerate(levels[o.id]) if counts[o.category, k, key] == 1), None)
        for o in scene.objects
    }


def _relational(scene: Scene, obj: RoomObject, shorts: dict[str, str | None]) -> str | None:
    """``"<colour phrase> next to a <neighbour>"`` (or ``above the``), when it singles ``obj`` out."""
    others = [(box_gap(obj, o), o.id) for o in scene.objects if o.category != obj.category]
    if not others:
        return None
    gap, neighbour_id = min(others)
    neighbour = scene.object(neighbour_id)
    name = shorts.get(neighbour_id)
    if name is None or gap > NEAR:
        return None
    base = color_phrase(obj)
    look_alikes = [
        o for o in scene.objects if o.category == obj.category and o.id != obj.id and color_phrase(o) == base
    ]
    if any(box_gap(o, neighbour) < gap + RELATION_MARGIN for o in look_alikes):
        return None
    article = "the" if name == category_name(neighbour.category) else "a"
    relation = "above" if is_above(obj, neighbour) else "next to"
    return f"{base} {relation} {article} {name}"


def describe_objects(scene: Scene, ids: Sequence[str]) -> dict[str, str]:
    """A unique referring expression for each of ``ids`` that has one (see the module docstring).

    Uniqueness is among all the scene's objects of the same category, so the result for an object does not
    depend on which other ids are asked for.
    """
    shorts = short_descriptions(scene)
    out: dict[str, str] = {}
    for object_id in sorted(set(ids)):
        text = shorts[object_id] or _relational(scene, scene.object(object_id), shorts)
        if text is not None:
            out[object_id] = text
    return out
