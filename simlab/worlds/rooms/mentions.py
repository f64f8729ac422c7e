"""Which room objects a message refers to (Cosmic's "unique objects mentioned" per message).

A message is read as noun phrases resolved to object instances, never as bare words matched anywhere:

* **Phrases.** A phrase is a head naming a catalog category (``chair``, ``plant container``; a plural,
  ``chairs``, ``shelves``, ``pieces of wall art``; or a synonym from :data:`SYNONYMS`, ``couch``, ``TV``;
  ``table`` alone is every kind of table) with the words right before it: colours (``grey`` is ``gray``),
  sizes (``big`` is ``large``), determiners and numbers (``two``, ``a pair of``, ``both``). Material words
  are skipped: the scene records none. A window may carry ``with <colour> <curtains|blinds|shutters>``.
* **Narrowing.** Candidates are the scene's objects of the category, kept to those of a colour or size said
  (before the head, or right after it: ``the chair is green``) when any match; an attribute that matches
  nothing is ignored (speakers misname shades); a size or ``a`` before a group word (``a large set of
  cabinets``) describes the group. Then a **relation** to the next phrase (``the chair next to the table``,
  ``the lamp is on the desk``; ``left of the sofa`` and ``in front of`` in the speaker's own camera frame, by
  at least :data:`SIDE_MARGIN`; see :data:`RELATIONS`) keeps the candidates that satisfy it with some
  landmark candidate, unless none does. Last, **who speaks**: when the speaker sees enough remaining
  objects (one for a singular, the number said), the candidates are those it sees; otherwise all of them.
* **Negation** (no mention, not outlined): ``no`` as a determiner (``I see no cabinets``, ``there is no
  lamp``; ``No, ...`` with a comma is an interjection), or ``not``/``n't``/``never``/``without``/
  ``neither``/``nor`` followed, in the same sentence, only by seeing and being words (``I don't see any
  chairs``, ``there isn't a lamp``, ``no, not the table``). A negated phrase passes its negation along a list
  joined by ``or``/``nor`` (and commas before such an ``or``). A relation word after the negator negates the
  relation, not the object: in ``the lamp is not next to the sofa`` the sofa is mentioned. ``and`` does not
  carry negation: in ``there is no lamp and the chair is red`` the chair is mentioned.
* **Counting.** A phrase refers to one object (singular), the number said, or, for a plural without a
  number (``the chairs``, ``all chairs``), every remaining candidate. A singular phrase that stays ambiguous
  counts one and outlines all its remaining candidates; a definite one (``the chair``) that can be an
  object already named in the message is that object. A message's count is its distinct objects: resolved
  phrases by id, ambiguous ones by how many they need beyond the objects already counted.
* **Structured reports.** A JSON list of records with a ``category`` (the oracle Helper's ``HELPER_VIEW``
  message) is read as data: each record is one object, resolved by category, colour, size class and its
  ``center`` (the nearest candidate within :data:`SAME_PLACE`).

Questions name objects too (``do you see a lamp?``). Out of reach, by design: pronouns (``it``, ``a blue
one``), a colour said after a relation (``the chair next to the door is green`` gives green to the door) and
a question about the partner's view (the speaker rule picks the asker's own objects); the hand-labelled
fixture ``tests/rooms/fixtures/labelled_mentions.json`` lists such cases with their reasons.

Everything is deterministic (candidates in id order, outputs sorted) and linear in the message: resolution
is cached per distinct phrase, so a megabyte of repeated words costs one lookup per phrase kind.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from simlab.worlds.rooms.catalog import CATEGORIES
from simlab.worlds.rooms.describe import NEAR, RELATION_MARGIN, box_gap, category_name, is_above, plural
from simlab.worlds.rooms.model import Camera, RoomObject, Scene
from simlab.worlds.rooms.visibility import ViewPair

SAME_PLACE = 0.3  # metres: a reported centre this close to an object's centre is that object
SIDE_MARGIN = 0.2  # metres: "left of", "in front of" need this much; level objects are neither
MAX_JSON_TRIES = 8  # JSON spans tried per message, so a message full of brackets stays cheap

SYNONYMS: dict[str, str] = {
    "couch": "sofa",
    "settee": "sofa",
    "television": "TV",
    "tv": "TV",
    "telly": "TV",
    "refrigerator": "fridge",
    "plant": "plant container",
    "potted plant": "plant container",
    "plant pot": "plant container",
    "planter": "plant container",
    "flower pot": "plant container",
    "painting": "wall art",
    "artwork": "wall art",
    "poster": "wall art",
    "cupboard": "cabinet",
    "closet": "wardrobe",
    "bookcase": "bookshelf",
    "book shelf": "bookshelf",
    "tub": "bathtub",
    "bath": "bathtub",
    "carpet": "rug",
    "computer monitor": "monitor",
    "stove": "oven",
    "cooker": "oven",
    "basin": "sink",
    "center table": "centre table",
    "coffee table": "centre table",
    "nightstand": "side table",
    "bedside table": "side table",
    "end table": "side table",
    "arm chair": "armchair",
}
"""Other names for catalog categories (singular; plurals are derived)."""

COLOUR_ALIASES = {"grey": "gray"}
SIZES = {"small": "small", "little": "small", "tiny": "small", "medium": "medium", "large": "large"}
SIZES |= {"big": "large", "huge": "large"}
NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
NUMBERS |= {"ten": 10, "both": 2, "pair": 2, "couple": 2, "single": 1, "a": 1, "an": 1, "another": 1}
DEFINITE = {"the", "this", "that", "these", "those", "its", "your", "my"}
ALL = {"all", "every", "each", "several", "some", "many", "any", "few", "other", "various"}
FILLERS = {"very", "light", "dark", "bright", "pale", "wooden", "wood", "metal", "glass", "fabric", "round"}
FILLERS |= {"square", "tall", "short", "low", "high", "sized", "coloured", "colored"}
GROUPS = {"set", "sets", "group", "pieces", "piece", "lot", "number", "bunch", "kind", "type", "few"}
"""Words that take ``of`` before a head: ``a set of cabinets``, ``one of the chairs``."""
COVERINGS = {"curtain": "curtains", "curtains": "curtains", "blind": "blinds", "blinds": "blinds"}
COVERINGS |= {"shutter": "shutters", "shutters": "shutters"}
NEGATORS = {"not", "never", "without", "neither", "nor", "cannot", "dont", "doesnt", "cant", "isnt", "arent"}
NEGATORS |= {"didnt", "wasnt", "werent", "havent", "hasnt", "couldnt"}  # models drop apostrophes
NEGATION_GAP = {"see", "sees", "seeing", "saw", "seen", "spot", "notice", "find", "have", "has", "had", "there"}
NEGATION_GAP |= {"is", "are", "was", "were", "be", "been", "i", "we", "you", "it", "can", "could", "do", "does"}
NEGATION_GAP |= {"did", "really", "actually", "even", "also", "either", "currently", "still", "spotted", "'s"}
LINKS = {"is", "are", "sits", "sit", "stands", "stand", "standing", "placed", "located", "which", "that", "right"}
LINKS |= {"just", "directly", "hanging", "mounted", "'s", "sitting", "lying"}
RELATIONS: dict[tuple[str, ...], str] = {
    ("next", "to"): "near",
    ("close", "to"): "near",
    ("near",): "near",
    ("beside",): "near",
    ("by",): "near",
    ("above",): "above",
    ("over",): "above",
    ("on", "top", "of"): "above",
    ("on",): "above",
    ("under",): "below",
    ("below",): "below",
    ("beneath",): "below",
    ("underneath",): "below",
    ("left", "of"): "left",
    ("to", "the", "left", "of"): "left",
    ("on", "the", "left", "of"): "left",
    ("right", "of"): "right",
    ("to", "the", "right", "of"): "right",
    ("on", "the", "right", "of"): "right",
    ("in", "front", "of"): "front",
    ("behind",): "behind",
}
"""Relation words -> relation; left, right, front and behind are in the speaker's own camera frame."""
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[.!?;:\n]|,")
MAX_RECORDS = 500  # a report cannot list more objects than a scene may hold (model.MAX_OBJECTS)
_STOP = "|"


@dataclass(frozen=True)
class Mention:
    """One noun phrase resolved to objects: ``candidates`` (sorted ids it may name) and ``count`` (how many
    distinct objects it refers to, at most ``len(candidates)``); ``negated`` phrases refer to nothing."""

    phrase: str
    category: str
    candidates: tuple[str, ...]
    count: int
    negated: bool = False
    definite: bool = False

    @property
    def exact(self) -> bool:
        """True when the phrase names exactly its candidates (nothing left to choose)."""
        return self.count == len(self.candidates)


@dataclass(frozen=True)
class Resolution:
    """A message's mentions in text order, the objects to outline and the number of distinct objects."""

    mentions: tuple[Mention, ...] = ()
    objects: tuple[str, ...] = ()
    count: int = 0


@dataclass
class _Phrase:
    """A noun phrase found in the tokens, before resolution."""

    start: int
    end: int  # one past the head (and its covering), in tokens
    categories: tuple[str, ...]
    plural: bool
    colours: frozenset[str] = frozenset()
    sizes: frozenset[str] = frozenset()
    covering: tuple[str, frozenset[str]] | None = None
    number: int | None = None
    definite: bool = False
    determiner_no: bool = False
    words: list[str] = field(default_factory=list)


# ---- the public API -----------------------------------------------------------------------------------------


def speaker_view(views: ViewPair | None, role: str | None) -> tuple[tuple[str, ...], Camera | None]:
    """What ``role`` sees and from where (its visible ids and camera); nothing for an unknown role."""
    if views is None or role not in ("answerer", "helper"):
        return (), None
    if role == "answerer":
        return tuple(views.answerer_visible), views.answerer
    return tuple(views.helper_visible), views.helper


def message_mentions(scene: Scene, views: ViewPair | None, role: str | None, text: str) -> Resolution:
    """The mentions of a message ``role`` sent in a room seen through ``views`` (see the module docstring)."""
    visible, camera = speaker_view(views, role)
    return resolve(scene, text, visible, camera)


def resolve(scene: Scene, text: str, visible: Collection[str] = (), camera: Camera | None = None) -> Resolution:
    """Resolve ``text`` against ``scene`` for a speaker who sees ``visible`` from ``camera``."""
    resolver = _Resolver(scene, frozenset(visible), camera)
    prose, records = _split_reports(_normalise(text or ""))
    mentions = [m for r in records if (m := resolver.record(r)) is not None]
    mentions += resolver.prose(prose)
    return _summarise(mentions)


# ---- text -> tokens -> phrases -------------------------------------------------------------------------------


def _normalise(text: str) -> str:
    """NFKC, lower case, typographic apostrophes made plain (``don’t``)."""
    text = unicodedata.normalize("NFKC", text).lower()
    return text.replace("\u2019", "'").replace("\u2018", "'")


def _tokens(text: str) -> list[str]:
    """Words, commas and sentence stops (``|``); hyphens part words (``wall-art``) and ``'s`` is a word of its
    own, so ``the chair's back`` still names a chair and ``there's`` is ``there`` ``'s``."""
    out: list[str] = []
    for token in _TOKEN.findall(text.replace("-", " ")):
        if token in ".!?;:\n":
            out.append(_STOP)
        elif token.endswith("'s"):
            out += [token[:-2], "'s"]
        else:
            out.append(token)
    return out


def _split_reports(text: str) -> tuple[str, list[Mapping[str, Any]]]:
    """The text without its JSON object reports, and the records of those reports (read as data)."""
    decoder = json.JSONDecoder()
    records: list[Mapping[str, Any]] = []
    kept, cursor, tries = [], 0, 0
    for found in re.finditer(r"[\[{]", text):
        if found.start() < cursor or tries >= MAX_JSON_TRIES:
            continue
        tries += 1
        try:
            value, end = decoder.raw_decode(text, found.start())
        except (ValueError, RecursionError):
            continue
        items = value if isinstance(value, list) else [value]
        objects = [i for i in items if isinstance(i, Mapping) and isinstance(i.get("category"), str)]
        if objects:
            records += objects[: MAX_RECORDS - len(records)]
            kept.append(text[cursor : found.start()])
            cursor = end
    kept.append(text[cursor:])
    return " . ".join(kept), records


class _Lexicon:
    """The scene's words: heads (surface form -> categories, plural) and colours."""

    def __init__(self, scene: Scene) -> None:
        present = sorted({o.category for o in scene.objects})
        by_name = {category_name(c).lower(): c for c in present}
        heads: dict[tuple[str, ...], tuple[tuple[str, ...], bool]] = {}
        for name, category in by_name.items():
            heads[tuple(name.split())] = ((category,), False)
            heads[tuple(plural(category).lower().split())] = ((category,), True)
        for word, name in SYNONYMS.items():
            target = by_name.get(name.lower())
            if target is not None:
                heads.setdefault(tuple(word.split()), ((target,), False))
                heads.setdefault(tuple(plural(word).split()), ((target,), True))
        if "table" not in by_name:  # "table" alone is any kind of table the room has
            tables = tuple(c for n, c in sorted(by_name.items()) if n.endswith(" table"))
            if tables:
                heads[("table",)], heads[("tables",)] = (tables, False), (tables, True)
        self.heads = heads
        self.longest = max((len(k) for k in heads), default=1)
        known = {c for cat in CATEGORIES.values() for c in cat.colors} | {o.color.lower() for o in scene.objects}
        self.colours = {c: c for c in known} | {k: v for k, v in COLOUR_ALIASES.items() if v in known}

    def head_at(self, tokens: Sequence[str], i: int) -> tuple[int, tuple[tuple[str, ...], bool]] | None:
        """The longest head starting at token ``i``: (its length, (categories, plural)), or None."""
        for n in range(min(self.longest, len(tokens) - i), 0, -1):
            found = self.heads.get(tuple(tokens[i : i + n]))
            if found is not None:
                return n, found
        return None


def _phrases(lexicon: _Lexicon, tokens: Sequence[str]) -> list[_Phrase]:
    """Every head in ``tokens`` with its pre-modifiers (and a window's covering), left to right."""
    out: list[_Phrase] = []
    i = 0
    while i < len(tokens):
        head = lexicon.head_at(tokens, i)
        if head is None:
            i += 1
            continue
        n, (categories, is_plural) = head
        floor = out[-1].end if out else 0
        phrase = _premodifiers(lexicon, tokens, i, floor, _Phrase(i, i + n, categories, is_plural))
        phrase = _covering(lexicon, tokens, phrase)
        phrase.words = list(tokens[phrase.start : phrase.end])
        out.append(phrase)
        i = phrase.end
    return out


def _premodifiers(lexicon: _Lexicon, tokens: Sequence[str], head: int, floor: int, phrase: _Phrase) -> _Phrase:
    """Walk left from the head over colours, sizes, numbers and determiners (not past ``floor``). Left of a
    group word (``a large set of cabinets``) a size or a lone ``a``/``one`` describes the group, not the
    objects: the phrase is then every such object."""
    colours: set[str] = set()
    sizes: set[str] = set()
    grouped = False
    k = head - 1
    while k >= floor:
        word = tokens[k]
        if word in lexicon.colours:
            colours.add(lexicon.colours[word])
        elif word in SIZES:
            sizes.update(() if grouped else (SIZES[word],))
        elif word in NUMBERS or word.isdigit():
            phrase.number = phrase.number or (int(word[:3]) if word.isdigit() else NUMBERS[word])
        elif word in DEFINITE:
            phrase.definite = True
        elif word == "no":
            phrase.determiner_no = True
        elif word in GROUPS:
            grouped = True
        elif not (word == "of" and k > floor and _takes_of(tokens[k - 1])) and word not in ALL | FILLERS:
            break
        k -= 1
    phrase.start = k + 1
    if grouped and phrase.number == 1:
        phrase.number = None
    phrase.colours, phrase.sizes = frozenset(colours), frozenset(sizes)
    return _predicate(lexicon, tokens, phrase)


def _predicate(lexicon: _Lexicon, tokens: Sequence[str], phrase: _Phrase) -> _Phrase:
    """A colour said of the phrase right after it (``the chair is green``, up to a stop, comma or ``and``)
    narrows it like a colour before it; ``is not green`` does not."""
    k = phrase.end
    while k < len(tokens) and tokens[k] in ("is", "are", "'s", "looks", "also"):
        k += 1
    shades = set()
    while k < len(tokens) and tokens[k] in lexicon.colours:
        shades.add(lexicon.colours[tokens[k]])
        k += 1
    if shades and k > phrase.end and (k == len(tokens) or tokens[k] in (_STOP, ",", "and")):
        phrase.colours = phrase.colours | shades
    return phrase


def _takes_of(word: str) -> bool:
    """Words that take ``of`` before a phrase: ``all of``, ``two of``, ``a pair of``."""
    return word in GROUPS or word in ALL or word in NUMBERS or word.isdigit()


def _covering(lexicon: _Lexicon, tokens: Sequence[str], phrase: _Phrase) -> _Phrase:
    """``with [colours] curtains|blinds|shutters`` after a head: the covering and its colours."""
    k = phrase.end
    if k >= len(tokens) or tokens[k] != "with":
        return phrase
    shades, k = set(), k + 1
    while k < len(tokens) and tokens[k] in lexicon.colours:
        shades.add(lexicon.colours[tokens[k]])
        k += 1
    if k < len(tokens) and tokens[k] in COVERINGS:
        phrase.covering, phrase.end = (COVERINGS[tokens[k]], frozenset(shades)), k + 1
    return phrase


# ---- negation and relations ---------------------------------------------------------------------------------


def _negator(word: str) -> bool:
    return word in NEGATORS or word.endswith("n't")


def _negated(tokens: Sequence[str], phrases: Sequence[_Phrase]) -> list[bool]:
    """Which phrases are negated (the module docstring's rule)."""
    or_ahead = _or_ahead(tokens)
    out: list[bool] = []
    for k, phrase in enumerate(phrases):
        carried = k > 0 and out[k - 1] and _carries(tokens, phrases[k - 1].end, phrase.start, or_ahead)
        out.append(phrase.determiner_no or _negator_before(tokens, phrase.start) or carried)
    return out


def _or_ahead(tokens: Sequence[str]) -> list[bool]:
    """For each token: does an ``or``/``nor`` follow it in its sentence? (one pass, right to left)"""
    out, seen = [False] * len(tokens), False
    for k in range(len(tokens) - 1, -1, -1):
        seen = False if tokens[k] == _STOP else seen or tokens[k] in ("or", "nor")
        out[k] = seen
    return out


def _negator_before(tokens: Sequence[str], start: int) -> bool:
    """A negator before ``start`` with only seeing/being words between (no comma, no relation, no stop)."""
    k = start - 1
    while k >= 0 and tokens[k] in NEGATION_GAP:
        k -= 1
    return k >= 0 and _negator(tokens[k])


def _carries(tokens: Sequence[str], end: int, start: int, or_ahead: Sequence[bool]) -> bool:
    """True when the words between two phrases pass a negation on: ``or``/``nor`` (after a comma or not), or
    a comma in a list that an ``or``/``nor`` closes later in the sentence."""
    between = [t for t in tokens[end:start] if t != ","]
    if between in (["or"], ["nor"]):
        return True
    return not between and "," in tokens[end:start] and or_ahead[start]


def _relation(tokens: Sequence[str], end: int, start: int) -> str | None:
    """The relation linking a phrase ending at ``end`` to the next starting at ``start``, if the words between
    are linking words and one relation (``is right next to``, ``on top of``, ``to the left of``)."""
    between = list(tokens[end:start])
    while between and between[0] in LINKS:
        between.pop(0)
    return RELATIONS.get(tuple(between))


# ---- resolution ---------------------------------------------------------------------------------------------


class _Resolver:
    """Resolves phrases and records for one speaker in one scene, caching per distinct phrase."""

    def __init__(self, scene: Scene, visible: frozenset[str], camera: Camera | None) -> None:
        self.scene, self.visible, self.camera = scene, visible, camera
        self.lexicon = _Lexicon(scene)
        self.by_category: dict[str, list[RoomObject]] = {}
        for obj in sorted(scene.objects, key=lambda o: o.id):
            self.by_category.setdefault(obj.category, []).append(obj)
        self._cache: dict[tuple[Any, ...], tuple[str, ...]] = {}

    def prose(self, text: str) -> list[Mention]:
        """The mentions of free text, in order."""
        tokens = _tokens(text)
        phrases = _phrases(self.lexicon, tokens)
        negated = _negated(tokens, phrases)
        found = [self._matching(p) for p in phrases]
        for k in range(len(phrases) - 1, -1, -1):  # right to left: a landmark is settled before its relatum
            rel = _relation(tokens, phrases[k].end, phrases[k + 1].start) if k + 1 < len(phrases) else None
            if rel is not None:
                found[k] = self._related(found[k], found[k + 1], rel)
            found[k] = self._seen(found[k], _needed(phrases[k]))
        mentions = [self._mention(p, c, n) for p, c, n in zip(phrases, found, negated, strict=True)]
        return _anaphora(mentions)

    def record(self, record: Mapping[str, Any]) -> Mention | None:
        """One object of a structured report: category, colour, size class and centre."""
        head = self.lexicon.heads.get(tuple(_tokens(_normalise(str(record["category"])))))
        if head is None:
            return None
        colour = self.lexicon.colours.get(str(record.get("color", "")).lower())
        size = SIZES.get(str(record.get("size_class", "")).lower())
        colours = frozenset([colour] if colour is not None else [])
        phrase = _Phrase(0, 0, head[0], False, colours, frozenset([size] if size is not None else []))
        found = self._seen(self._matching(phrase), 1)
        centre = _point(record.get("center"))
        if centre is not None and found:
            near = min(found, key=lambda i: (math.dist(self.scene.object(i).center, centre), i))
            if math.dist(self.scene.object(near).center, centre) <= SAME_PLACE:
                found = (near,)
        return Mention(str(record["category"])[:80], head[0][0], found, min(1, len(found)))

    def _mention(self, phrase: _Phrase, found: tuple[str, ...], negated: bool) -> Mention:
        need = _needed(phrase)
        count = len(found) if need is None else min(need, len(found))
        text = " ".join(phrase.words)[:200]
        return Mention(text, phrase.categories[0], found, count, negated, phrase.definite and not phrase.plural)

    def _matching(self, phrase: _Phrase) -> tuple[str, ...]:
        """The scene's objects of the phrase's category and attributes (cached by what the phrase says)."""
        key = (phrase.categories, phrase.colours, phrase.sizes, phrase.covering)
        if key not in self._cache:
            objects = [o for c in phrase.categories for o in self.by_category.get(c, [])]
            objects = _narrow(objects, lambda o: o.color in phrase.colours or _shade(o) in phrase.colours)
            objects = _narrow(objects, lambda o: o.size_class in phrase.sizes)
            if phrase.covering is not None:
                kind, shades = phrase.covering
                objects = _narrow(objects, lambda o: o.params.get("covering") == kind)
                objects = _narrow(objects, lambda o: _shade(o) in shades)
            self._cache[key] = tuple(sorted(o.id for o in objects))
        return self._cache[key]

    def _seen(self, found: tuple[str, ...], need: int | None) -> tuple[str, ...]:
        """The candidates the speaker sees, when it sees enough of them (``need``; one for "all of them")."""
        seen = tuple(i for i in found if i in self.visible)
        return seen if seen and len(seen) >= (need or 1) else found

    def _related(self, found: tuple[str, ...], landmarks: tuple[str, ...], rel: str) -> tuple[str, ...]:
        """The candidates that stand in ``rel`` to some landmark candidate (all of them when none does)."""
        key = ("rel", found, landmarks, rel)
        if key not in self._cache:
            objects = [self.scene.object(i) for i in found]
            marks = [self.scene.object(i) for i in landmarks if i not in found]
            kept = _satisfying(objects, marks, rel, self.camera) if marks else objects
            self._cache[key] = tuple(o.id for o in kept) or found
        return self._cache[key]


def _needed(phrase: _Phrase) -> int | None:
    """How many objects the phrase refers to: the number said, one for a singular, None for "all of them"."""
    if phrase.number is not None:
        return phrase.number
    return None if phrase.plural else 1


def _narrow(objects: list[RoomObject], keep: Any) -> list[RoomObject]:
    """The objects ``keep`` accepts, or all of them when it accepts none (a misnamed attribute is ignored)."""
    kept = [o for o in objects if keep(o)]
    return kept or objects


def _shade(obj: RoomObject) -> str | None:
    covering = obj.params.get("covering_color")
    return str(covering).lower() if covering else None


def _point(value: Any) -> tuple[float, float, float] | None:
    """A reported ``[x, y, z]`` as floats, or None when it is not one."""
    if not isinstance(value, list) or len(value) != 3:
        return None
    try:
        point = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        return None
    return (point[0], point[1], point[2]) if all(math.isfinite(v) for v in point) else None


def _satisfying(
    objects: list[RoomObject], marks: list[RoomObject], rel: str, camera: Camera | None
) -> list[RoomObject]:
    """The objects in relation ``rel`` to one of ``marks``; "near" keeps the nearest (within the margin)."""
    if rel == "near":
        gaps = {o.id: min(box_gap(o, m) for m in marks) for o in objects}
        best = min(gaps.values())
        return [o for o in objects if gaps[o.id] <= NEAR and gaps[o.id] <= best + RELATION_MARGIN]
    if rel == "above":
        return [o for o in objects if any(o.support == m.id or is_above(o, m) for m in marks)]
    if rel == "below":
        return [o for o in objects if any(m.support == o.id or is_above(m, o) for m in marks)]
    if camera is None:
        return []  # left, right, front and behind need the speaker's point of view
    side = {o.id: _on_floor(camera, o) for o in [*objects, *marks]}
    axis, sign = {"left": (0, -1), "right": (0, 1), "front": (1, -1), "behind": (1, 1)}[rel]
    return [o for o in objects if any(sign * (side[o.id][axis] - side[m.id][axis]) > SIDE_MARGIN for m in marks)]


def _on_floor(camera: Camera, obj: RoomObject) -> tuple[float, float]:
    """``obj``'s centre seen from ``camera`` on the floor plane: (metres to the right, metres ahead); the
    camera's pitch is left out, so an object's height does not move it forwards or back."""
    dx, dy = obj.center[0] - camera.position[0], obj.center[1] - camera.position[1]
    rx, ry, _ = camera.right
    return (dx * rx + dy * ry, dx * math.cos(camera.yaw) + dy * math.sin(camera.yaw))


def _anaphora(mentions: list[Mention]) -> list[Mention]:
    """A definite singular that stays ambiguous but may be an object already named is that object."""
    named: set[str] = set()
    out = []
    for mention in mentions:
        if mention.definite and not mention.negated and not mention.exact:
            earlier = tuple(i for i in mention.candidates if i in named)
            if earlier:
                mention = replace(mention, candidates=earlier, count=min(1, len(earlier)))
        if mention.exact and not mention.negated:
            named.update(mention.candidates)
        out.append(mention)
    return out


def _summarise(mentions: Iterable[Mention]) -> Resolution:
    """Outlined objects (every candidate of a phrase that is not negated) and the distinct-object count."""
    mentions = tuple(mentions)
    live = [m for m in mentions if not m.negated and m.candidates]
    exact = {i for m in live if m.exact for i in m.candidates}
    needs: dict[tuple[str, ...], int] = {}
    for m in live:
        if not m.exact:  # the same ambiguous candidates said twice may be the same object: the larger need
            needs[m.candidates] = max(needs.get(m.candidates, 0), m.count)
    extra = sum(min(need, len(set(c) - exact)) for c, need in sorted(needs.items()))
    pool = exact.union(*(set(c) for c in needs))
    objects = tuple(sorted({i for m in live for i in m.candidates}))
    return Resolution(mentions, objects, min(len(exact) + extra, len(pool)))
