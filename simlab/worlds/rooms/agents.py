"""Scripted agents for the rooms world, and the registry :data:`AGENTS` that agent specs are looked up in.

They read ``observation.data`` (the world's ground truth standing in for the images):

* both roles: ``task``, ``phase`` (``"dialogue"`` or ``"answer"``), ``view`` (the objects the agent sees:
  ``category``, ``color``, ``size_class``, ``description`` when it has one, ``camera_xyz``, ``world_center``
  and, when the world gives it, ``world_size``: the box extents) and ``history`` (``[{"role", "text"}]``);
* the Answerer also: ``question``, ``options``, ``letters``; ``camera`` (its own pose, read by the oracle
  only) and for mapping ``map_objects`` (``[{"id", "category", "x", "y"}]`` in the :func:`map_layout` frame).

Agents:

* :class:`OracleHelper` / :class:`OracleAnswerer` (``oracle``): the Helper sends everything it sees as
  ``HELPER_VIEW <json>`` (attributes and rounded world boxes, never ids); the Answerer asks for it, ends the
  chat once it has it and answers by combining both views exactly (the ceiling).
* :class:`SingleViewAnswerer` (``single-view``): answers from its own view alone, guessing where it must
  (:func:`single_view_answer`; the necessity filter's rules are :mod:`simlab.worlds.rooms.necessity`).
* :class:`RandomAnswerer` (``random``): a seeded random option. :class:`SilentHelper` (``silent``): says nothing
  useful.

Every random choice comes from :func:`simlab.core.seeding.rng` with the seed given to ``reset``.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from simlab.core.errors import ConfigError
from simlab.core.seeding import rng
from simlab.core.world import Agent, Observation, Reply, ScriptedAgent
from simlab.worlds.rooms.describe import plural
from simlab.worlds.rooms.model import Camera, Scene, Vec3
from simlab.worlds.rooms.observations import ANSWERER, ANSWERER_ALONE, HELPER, HELPER_VIEW, answerer_data
from simlab.worlds.rooms.tasks import (
    MAP_TOLERANCE,
    YES_NO,
    Question,
    Views,
    bearing,
    corner_distance,
    direction_of,
    map_point,
)

VIEW_PREFIX = "HELPER_VIEW "
NO_HELPER_VIEW = (
    f"agent answerer=oracle combines the Answerer's view with the Helper's, and the setting "
    f"condition={ANSWERER_ALONE} gives it no Helper view; play answerer=single-view there"
)
SAME_OBJECT = 0.2  # metres: two reported centres closer than this are one object
ASK = "Please list everything you can see: each object's category, colour, size and position."
END = "Thank you, that is all I need."
DISTANCE_RE = re.compile(r"is (closest|farthest) (?:to|from) the (.+?)\?*$")
DIRECTION_RE = re.compile(r"direction is the (.+?)\?*$")
COUNTING_RE = re.compile(r"number of (.+?) in the room")
Record = Mapping[str, Any]


# ---- the observation data the agents read -----------------------------------------------------------------
# ---- shared reasoning helpers -----------------------------------------------------------------------------
def _center(record: Record) -> Vec3:
    c = record.get("world_center", record.get("center"))
    return (float(c[0]), float(c[1]), float(c[2]))


def _box(record: Record) -> tuple[Vec3, Vec3]:
    """A record's world box from its centre and extents (a point when no extents are known)."""
    c = _center(record)
    s = record.get("world_size", record.get("size")) or (0.0, 0.0, 0.0)
    lo = (c[0] - s[0] / 2, c[1] - s[1] / 2, c[2] - s[2] / 2)
    hi = (c[0] + s[0] / 2, c[1] + s[1] / 2, c[2] + s[2] / 2)
    return (lo, hi)


def _same(a: Record, b: Record) -> bool:
    return a["category"] == b["category"] and math.dist(_center(a), _center(b)) < SAME_OBJECT


def _by_description(records: Iterable[Record], text: str) -> Record | None:
    return next((r for r in records if r.get("description") == text), None)


def _letters(data: Mapping[str, Any]) -> list[str]:
    """The options' letters an observation offers, in order."""
    return [str(letter) for letter in data["letters"]]


def _letter(data: Mapping[str, Any], option: Any) -> str:
    """The letter of the option whose text is ``option`` (the first letter when none is)."""
    options = [str(o) for o in data["options"]]
    letters = _letters(data)
    return letters[options.index(str(option))] if str(option) in options else letters[0]


def _distance_question(text: str) -> tuple[str, str] | None:
    """(``"closest"``/``"farthest"``, target description) from a distance question."""
    found = DISTANCE_RE.search(text.strip())
    return (found.group(1), found.group(2)) if found else None


def _direction_target(text: str) -> str | None:
    found = DIRECTION_RE.search(text.strip())
    return found.group(1) if found else None


def _counted(text: str, records: Iterable[Record]) -> str | None:
    """The category a counting question asks about, recognised by its plural among the known records."""
    found = COUNTING_RE.search(text)
    if not found:
        return None
    return next((r["category"] for r in records if plural(r["category"]) == found.group(1)), None)


def _numeric_options(data: Mapping[str, Any]) -> list[tuple[int, str]]:
    return sorted((int(o), letter) for o, letter in zip(data["options"], _letters(data), strict=True))


# ---- the single-view solver -------------------------------------------------------------------------------
def _single_anchor(data: Mapping[str, Any], r: random.Random) -> str:
    seen = {e.get("description") for e in data["view"]}
    pairs = list(zip(_letters(data), data["options"], strict=True))
    return r.choice([letter for letter, o in pairs if o in seen] or _letters(data))


def _single_counting(data: Mapping[str, Any], r: random.Random) -> str:
    """A count no lower than its own (the total cannot be less than what it sees), else any."""
    category = _counted(data["question"], data["view"])
    own = sum(1 for e in data["view"] if e["category"] == category)
    options = _numeric_options(data)
    return r.choice([letter for n, letter in options if n >= own] or [letter for _, letter in options])


def _single_distance(data: Mapping[str, Any], r: random.Random) -> str:
    parsed = _distance_question(data["question"])
    target = _by_description(data["view"], parsed[1]) if parsed else None
    letters = _letters(data)
    if parsed is None or target is None:
        return r.choice(letters)
    seen = {letter: _by_description(data["view"], o) for letter, o in zip(letters, data["options"], strict=True)}
    unseen = [letter for letter, rec in seen.items() if rec is None]
    scored = {letter: corner_distance(_box(target), _box(rec)) for letter, rec in seen.items() if rec is not None}
    if not scored:
        return r.choice(letters)
    best = (min if parsed[0] == "closest" else max)(sorted(scored), key=scored.__getitem__)
    return r.choice([best, *unseen])


def _single_direction(data: Mapping[str, Any], r: random.Random) -> str:
    """A guess: the target is one it does not see, and generated benchmarks balance the right directions."""
    return r.choice(_letters(data))


def _single_mapping(data: Mapping[str, Any], r: random.Random) -> str:
    """ "no" when one of its own objects is drawn at the wrong left-right offset (the camera-frame x does not
    depend on the unknown pitch); otherwise it cannot tell, and guesses."""
    own = {e["id"]: e for e in data["view"] if "id" in e}
    for item in data.get("map_objects") or []:
        entry = own.get(item["id"])
        if entry is not None and abs(float(item["x"]) - float(entry["camera_xyz"][0])) > MAP_TOLERANCE:
            return "no"
    return r.choice(list(YES_NO))


SINGLE_VIEW: dict[str, Callable[[Mapping[str, Any], random.Random], str]] = {
    "anchor": _single_anchor,
    "counting": _single_counting,
    "distance": _single_distance,
    "direction": _single_direction,
    "mapping": _single_mapping,
}


def single_view_answer(data: Mapping[str, Any], r: random.Random) -> str:
    """The answer (a letter or yes/no) of a solver that has only the Answerer's own view (``data`` as above;
    ``camera`` is not read): it drops what its view proves wrong (anchor options it does not see, counts
    below its own, candidates it sees beaten by another it sees, a map misplacing its own objects) and
    guesses among the rest (the validity report's solvers add the benchmark's priors,
    :mod:`simlab.worlds.rooms.validity`)."""
    return SINGLE_VIEW[str(data["task"])](data, r)


def solve_single_view(question: Question, scene: Scene, views: Views, seed: int) -> str:
    """:func:`single_view_answer` on the data the world would give the Answerer."""
    return single_view_answer(answerer_data(question, scene, views), rng(seed, question.id, "single-view"))


# ---- the oracle -------------------------------------------------------------------------------------------
def helper_report(view: Sequence[Record]) -> str:
    """The oracle Helper's message: every object it sees, without ids, as ``HELPER_VIEW <json>``."""
    keys = ("category", "color", "size_class", "description")
    items = []
    for entry in view:
        item = {k: entry[k] for k in keys if k in entry}
        item["center"] = [round(float(v), 3) for v in entry["world_center"]]
        if "world_size" in entry:
            item["size"] = [round(float(v), 3) for v in entry["world_size"]]
        items.append(item)
    return VIEW_PREFIX + json.dumps(items, sort_keys=True)


def parse_helper_report(history: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]] | None:
    """The objects of the first ``HELPER_VIEW`` message in ``history``, or None when there is none."""
    for item in history:
        text = str(item.get("text", ""))
        if item.get("role") == HELPER and text.startswith(VIEW_PREFIX):
            try:
                return list(json.loads(text[len(VIEW_PREFIX) :]))
            except json.JSONDecodeError:
                return None
    return None


def _union(own: Sequence[Record], other: Sequence[Record]) -> list[Record]:
    """Both views' objects, an object both see once (same category, centres within :data:`SAME_OBJECT`)."""
    return [*own, *(o for o in other if not any(_same(o, m) for m in own))]


def _oracle_anchor(data: Mapping[str, Any], helper: Sequence[Record]) -> str:
    for letter, option in zip(_letters(data), data["options"], strict=True):
        if _by_description(data["view"], option) and _by_description(helper, option):
            return str(letter)
    return _letters(data)[0]


def _oracle_counting(data: Mapping[str, Any], helper: Sequence[Record]) -> str:
    union = _union(data["view"], helper)
    category = _counted(data["question"], union)
    total = sum(1 for o in union if o["category"] == category)
    return min(_numeric_options(data), key=lambda pair: abs(pair[0] - total))[1]


def _oracle_distance(data: Mapping[str, Any], helper: Sequence[Record]) -> str:
    parsed = _distance_question(data["question"])
    union = _union(data["view"], helper)
    target = _by_description(union, parsed[1]) if parsed else None
    if parsed is None or target is None:
        return _letters(data)[0]
    scored = {}
    for letter, option in zip(_letters(data), data["options"], strict=True):
        rec = _by_description(union, option)
        scored[letter] = corner_distance(_box(target), _box(rec)) if rec else math.nan
    known = sorted(k for k, v in scored.items() if not math.isnan(v))
    return (min if parsed[0] == "closest" else max)(known or _letters(data)[:1], key=lambda k: scored.get(k, 0.0))


def _oracle_direction(data: Mapping[str, Any], helper: Sequence[Record]) -> str:
    description = _direction_target(data["question"])
    target = _by_description(helper, description) if description else None
    if target is None:
        return _letters(data)[0]
    return _letter(data, direction_of(bearing(Camera.from_json(data["camera"]), _center(target))))


def _oracle_mapping(data: Mapping[str, Any], helper: Sequence[Record]) -> str:
    """ "yes" when every object either agent sees has its own map mark (same category) where it truly is."""
    camera = Camera.from_json(data["camera"])
    marks = [(m["category"], (float(m["x"]), float(m["y"]))) for m in data.get("map_objects") or []]
    for obj in _union(data["view"], helper):
        here = map_point(camera, _center(obj))
        near = [
            k for k, (cat, xy) in enumerate(marks) if cat == obj["category"] and math.dist(xy, here) < MAP_TOLERANCE
        ]
        if not near:
            return "no"
        marks.pop(min(near, key=lambda k: math.dist(marks[k][1], here)))
    return "yes"


ORACLE: dict[str, Callable[[Mapping[str, Any], Sequence[Record]], str]] = {
    "anchor": _oracle_anchor,
    "counting": _oracle_counting,
    "distance": _oracle_distance,
    "direction": _oracle_direction,
    "mapping": _oracle_mapping,
}


def oracle_answer(data: Mapping[str, Any], helper: Sequence[Record]) -> str:
    """The answer from the Answerer's data and the Helper's reported objects (exact up to rounding)."""
    return ORACLE[str(data["task"])](data, helper)


# ---- agents -----------------------------------------------------------------------------------------------
def answer_reply(answer: str, reasoning: str) -> Reply:
    """The answer-phase reply: the answer both as the action and as the message."""
    return Reply(message=answer, reasoning=reasoning, action={"answer": answer})


class OracleHelper(ScriptedAgent):
    """Sends its whole view once (:func:`helper_report`), then says it has nothing to add."""

    def act(self, observation: Observation) -> Reply:
        history = observation.data.get("history") or []
        if parse_helper_report(history) is None:
            return Reply(message=helper_report(observation.data.get("view") or []))
        return Reply(message="That is everything I can see.")


class OracleAnswerer(ScriptedAgent):
    """Asks for the Helper's view, ends the chat once it has it, and answers from both views.

    With no dialogue (the ``condition`` setting) it answers at once: in ``both-views`` from its own view and
    the Helper's it was given (``data["helper_view"]``); ``answerer-alone`` gives it no second view to
    combine, so it refuses to play there (ConfigError naming the setting): ``single-view`` is that baseline."""

    def act(self, observation: Observation) -> Reply:
        data = observation.data
        if data.get("condition") == ANSWERER_ALONE:
            raise ConfigError(NO_HELPER_VIEW)
        given = data.get(HELPER_VIEW)
        helper = list(given) if given is not None else parse_helper_report(data.get("history") or [])
        if data.get("phase") != "answer":
            return Reply(message=END, action={"action": "end"}) if helper is not None else Reply(message=ASK)
        answer = oracle_answer(data, helper or [])
        return answer_reply(answer, f"Combined my view with the Helper's {len(helper or [])} objects.")


class SingleViewAnswerer(ScriptedAgent):
    """Answers from its own view alone (:func:`single_view_answer`); ends the chat at once."""

    def act(self, observation: Observation) -> Reply:
        if observation.data.get("phase") != "answer":
            return Reply(message="I will answer from my own view.", action={"action": "end"})
        answer = single_view_answer(observation.data, self.turn_rng(observation, "single-view"))
        return answer_reply(answer, "Answered from my own view only.")


class RandomAnswerer(ScriptedAgent):
    """Picks a seeded random option; ends the chat at once."""

    def act(self, observation: Observation) -> Reply:
        if observation.data.get("phase") != "answer":
            return Reply(message="I will guess.", action={"action": "end"})
        answer = self.turn_rng(observation, "random").choice(_letters(observation.data))
        return answer_reply(answer, "A random guess.")


class SilentHelper(ScriptedAgent):
    """Never describes anything."""

    def act(self, observation: Observation) -> Reply:
        return Reply(message="I have nothing to add.")


# ---- the registry -----------------------------------------------------------------------------------------
def _check(name: str, role: str, arg: str | None, plays: tuple[str, ...]) -> None:
    if role not in (ANSWERER, HELPER):
        raise ValueError(f"unknown role {role!r}; the rooms world has roles {ANSWERER} and {HELPER}")
    if role not in plays:
        raise ValueError(f"the {name} agent plays the {' or '.join(plays)} only, not the {role}")
    if arg is not None:
        raise ValueError(f"the {name} agent takes no argument, got {arg!r}")


def make_oracle(role: str, arg: str | None = None, settings: Mapping[str, Any] | None = None) -> Agent:
    """``oracle``: the :class:`OracleAnswerer` or the :class:`OracleHelper`."""
    _check("oracle", role, arg, (ANSWERER, HELPER))
    if role == ANSWERER and (settings or {}).get("condition") == ANSWERER_ALONE:
        raise ValueError(NO_HELPER_VIEW)  # said before a run starts, not at its first turn
    return OracleAnswerer(role) if role == ANSWERER else OracleHelper(role)


def make_single_view(role: str, arg: str | None = None, settings: Mapping[str, Any] | None = None) -> Agent:
    """``single-view``: the :class:`SingleViewAnswerer`."""
    _check("single-view", role, arg, (ANSWERER,))
    return SingleViewAnswerer(role)


def make_random(role: str, arg: str | None = None, settings: Mapping[str, Any] | None = None) -> Agent:
    """``random``: the :class:`RandomAnswerer`."""
    _check("random", role, arg, (ANSWERER,))
    return RandomAnswerer(role)


def make_silent(role: str, arg: str | None = None, settings: Mapping[str, Any] | None = None) -> Agent:
    """``silent``: the :class:`SilentHelper`."""
    _check("silent", role, arg, (HELPER,))
    return SilentHelper(role)


AGENTS: dict[str, Callable[..., Agent]] = {
    "oracle": make_oracle,
    "single-view": make_single_view,
    "random": make_random,
    "silent": make_silent,
}
