"""The five Cosmic tasks (paper 7.3): question templates, answers and distractors.

``<task>_candidates(scene, views, seed, settings=None)`` lists every fair question of a task about a room and
its two views as :class:`Candidate` s (unlettered); :func:`make_question` picks one and letters it. Each
task's distractors are chosen so that neither agent's view alone rules an option out (see each function and
:mod:`simlab.worlds.rooms.necessity`, which checks it), and a benchmark keeps one candidate per room and task,
chosen so that the whole carries no answer prior (:mod:`simlab.worlds.rooms.balance`). ``views`` is anything
shaped like :class:`~simlab.worlds.rooms.visibility.ViewPair` (see :class:`Views`). All choices come from
:func:`~simlab.core.seeding.rng` over sorted lists, so a (scene, views, seed) always gives the same candidates.

Geometry shared with the agents and the map renderer: :func:`bearing` and :func:`direction_of` (egocentric
direction in the Answerer's levelled camera frame), :func:`map_point` and :func:`map_layout` (the top-down
map frame: origin at the Answerer, which faces +y, x to its right) and :func:`corner_distance`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from simlab.core.seeding import rng
from simlab.worlds.rooms.describe import describe_objects, plural
from simlab.worlds.rooms.model import Camera, Scene, Vec3

TASKS: tuple[str, ...] = ("anchor", "counting", "distance", "direction", "mapping")
LETTERS: tuple[str, ...] = ("A", "B", "C", "D")
YES_NO: tuple[str, str] = ("yes", "no")
DIRECTIONS: tuple[str, ...] = (
    "front",
    "front-right",
    "right",
    "behind-right",
    "behind",
    "behind-left",
    "left",
    "front-left",
)
ANSWER_SPACES: dict[str, tuple[str, ...]] = {"direction": DIRECTIONS, "mapping": YES_NO}
"""Tasks whose right answers a benchmark spreads evenly over a fixed set (the eight directions, yes and no)."""
DEFAULT_SETTINGS: dict[str, float] = {
    "distance_margin": 0.5,  # metres between the answer's distance and the runner-up's
    "direction_edge": 5.0,  # degrees: targets this close to a direction bin's edge are ambiguous
    "swap_min_distance": 1.0,  # metres between the centres of the two objects a wrong map swaps
}
TEMPLATES: dict[str, str] = {
    "anchor": "Which of the following objects is visible in both your and your partner's views of the room?",
    "counting": "What is the total number of {objects} in the room?",
    "distance": "Which of the following objects is {mode} {preposition} the {target}?",
    "direction": "From your perspective, in which direction is the {target}?",
    "mapping": "Is this top-down map of the room correct?",
}
DISTANCE_TRIES = 12  # candidate sets tried per target and mode before giving up on it
ANCHOR_DRAWS = 2  # distractor sets drawn per shared object
WALL_GAP = 0.15  # metres: an object this close to a wall stands against it
MAP_TOLERANCE = 0.15  # metres: a map mark this close to where its object is counts as right


class Views(Protocol):
    """What the tasks need from a view pair: both cameras and who sees what (object ids)."""

    @property
    def answerer(self) -> Camera: ...

    @property
    def helper(self) -> Camera: ...

    @property
    def answerer_visible(self) -> list[str]: ...

    @property
    def helper_visible(self) -> list[str]: ...

    @property
    def shared(self) -> list[str]: ...

    @property
    def answerer_only(self) -> list[str]: ...

    @property
    def helper_only(self) -> list[str]: ...


@dataclass(frozen=True)
class Question:
    """One question instance.

    ``options`` are the option texts (four for the multiple-choice tasks, ``("yes", "no")`` for mapping) and
    ``answer`` the right letter (or ``"yes"``/``"no"``); ``option_objects`` maps each letter to what the option
    stands for (an object id, a count or a direction); ``target`` is the object the question is about (distance,
    direction); ``map_swap`` the swapped id pairs of the map shown (None when the map is correct); ``details``
    holds JSON facts for analysis (distances, bearing, the kind of each distractor...).
    """

    id: str
    task: str
    scene_id: str
    text: str
    options: tuple[str, ...]
    answer: str
    option_objects: dict[str, Any]
    target: str | None = None
    map_swap: list[tuple[str, str]] | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "task": self.task,
            "scene_id": self.scene_id,
            "text": self.text,
            "options": list(self.options),
            "answer": self.answer,
            "option_objects": dict(self.option_objects),
            "target": self.target,
            "map_swap": None if self.map_swap is None else [list(p) for p in self.map_swap],
            "details": dict(self.details),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Question:
        """Inverse of :meth:`to_json`; raises ValueError naming the field that is missing or wrong."""
        if not isinstance(data, Mapping):
            raise ValueError(f"expected a question object, got {type(data).__name__}")
        try:
            swap = data.get("map_swap")
            question = cls(
                id=str(data["id"]),
                task=str(data["task"]),
                scene_id=str(data["scene_id"]),
                text=str(data["text"]),
                options=tuple(str(o) for o in data["options"]),
                answer=str(data["answer"]),
                option_objects=dict(data["option_objects"]),
                target=None if data.get("target") is None else str(data["target"]),
                map_swap=None if swap is None else [(str(a), str(b)) for a, b in swap],
                details=dict(data.get("details") or {}),
            )
        except KeyError as exc:
            raise ValueError(f"question field {exc.args[0]!r} is missing") from None
        question.check()
        return question

    def check(self) -> None:
        """ValueError naming what cannot be asked: an unknown task, too many options, an answer that is
        not one of the option letters (yes/no for cognitive mapping), an overlong text."""
        if self.task not in TASKS:
            raise ValueError(f"question field 'task': expected one of {', '.join(TASKS)}, got {self.task!r:.40}")
        if not 2 <= len(self.options) <= len(LETTERS) or len(self.text) > 2000:
            raise ValueError(f"question: expected 2-{len(LETTERS)} options and a text of at most 2000 characters")
        letters = list(YES_NO) if self.task == "mapping" else list(LETTERS[: len(self.options)])
        if self.answer not in letters:
            raise ValueError(f"question field 'answer': expected one of {'/'.join(letters)}, got {self.answer!r:.40}")


# ---- geometry shared with the agents and the renderer ----------------------------------------------------
def corner_distance(a: tuple[Vec3, Vec3], b: tuple[Vec3, Vec3]) -> float:
    """The smallest distance between a corner of box ``a`` and a corner of box ``b`` (8 x 8 pairs)."""
    return min(math.dist(p, q) for p in _corners(a) for q in _corners(b))


def _corners(box: tuple[Vec3, Vec3]) -> list[Vec3]:
    lo, hi = box
    return [(x, y, z) for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]


def _level(camera: Camera) -> Camera:
    return replace(camera, pitch=0.0)


def bearing(camera: Camera, point: Vec3) -> float:
    """Degrees clockwise from straight ahead (-180..180], ``atan2(x, -z)`` in the camera frame levelled to
    zero pitch, so an object's height does not tilt its direction: 0 front, 90 right, -90 left, 180 behind."""
    x, _, z = _level(camera).to_camera_frame(point)
    return math.degrees(math.atan2(x, -z))


def direction_of(degrees: float) -> str:
    """The egocentric direction whose 45-degree bin (centred on it) holds ``degrees``."""
    return DIRECTIONS[round(degrees / 45.0) % 8]


def bin_edge_distance(degrees: float) -> float:
    """Degrees from ``degrees`` to the nearer edge of its direction bin (22.5 at a bin's centre)."""
    return 22.5 - abs(degrees - 45.0 * round(degrees / 45.0))


def map_point(camera: Camera, point: Vec3) -> tuple[float, float]:
    """``point`` on the top-down map: origin at the camera, +y straight ahead (levelled), +x to its right."""
    x, _, z = _level(camera).to_camera_frame(point)
    return (round(x, 4), round(-z, 4))


def map_layout(
    scene: Scene, object_ids: Iterable[str], camera: Camera, swap: Iterable[Sequence[str]] | None = None
) -> dict[str, tuple[float, float]]:
    """Where each object is drawn on the map (see :func:`map_point`); each ``swap`` pair trades places."""
    layout = {i: map_point(camera, scene.object(i).center) for i in object_ids}
    for a, b in swap or ():
        layout[a], layout[b] = layout[b], layout[a]
    return layout


# ---- helpers ---------------------------------------------------------------------------------------------
def answer_label(question: Question) -> str:
    """What the right answer says: the option's value (``front-left``, ``3``), or yes/no."""
    return question.answer if question.task == "mapping" else str(question.option_objects[question.answer])


def question_id(scene_id: str, task: str, seed: int) -> str:
    """A file-name-safe id for the question of ``task`` about scene ``scene_id`` in a benchmark of ``seed``."""
    return f"{scene_id}-{task}-s{seed}"


def _settings(settings: Mapping[str, Any] | None) -> dict[str, float]:
    return {**DEFAULT_SETTINGS, **{k: float(v) for k, v in (settings or {}).items() if k in DEFAULT_SETTINGS}}


def _visible(views: Views) -> list[str]:
    return sorted({*views.answerer_visible, *views.helper_visible})


def _descriptions(scene: Scene) -> dict[str, str]:
    return describe_objects(scene, [o.id for o in scene.objects])


def _described(ids: Iterable[str], descriptions: Mapping[str, str]) -> list[str]:
    return sorted(i for i in set(ids) if i in descriptions)


@dataclass(frozen=True)
class Candidate:
    """A question before its options are lettered: what each option stands for (``values``, the answer first)
    and its text (``labels``). A room gives several candidates per task; a benchmark keeps at most one, chosen
    so that the benchmark as a whole carries no answer prior (:mod:`simlab.worlds.rooms.balance`)."""

    task: str
    scene_id: str
    text: str
    values: tuple[Any, ...]
    labels: tuple[str, ...]
    target: str | None = None
    map_swap: tuple[tuple[str, str], ...] | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    def question(self, seed: int, letter: int | None = None) -> Question:
        """The lettered question: the answer at ``LETTERS[letter]`` (a seeded letter when None), the other
        options in a seeded order. Cognitive mapping's options are always yes/no."""
        qid = question_id(self.scene_id, self.task, seed)
        if self.task == "mapping":
            swap = None if self.map_swap is None else [(a, b) for a, b in self.map_swap]
            options = {"yes": "correct map", "no": "wrong map"}
            answer = "yes" if swap is None else "no"
            return Question(
                qid, self.task, self.scene_id, self.text, YES_NO, answer, options, None, swap, dict(self.details)
            )
        r = rng(seed, qid, "options")
        order = list(range(1, len(self.values)))
        r.shuffle(order)
        at = r.randrange(len(self.values)) if letter is None else letter
        order.insert(at, 0)
        letters = LETTERS[: len(order)]
        return Question(
            id=qid,
            task=self.task,
            scene_id=self.scene_id,
            text=self.text,
            options=tuple(self.labels[k] for k in order),
            answer=letters[at],
            option_objects={letter_: self.values[k] for letter_, k in zip(letters, order, strict=True)},
            target=self.target,
            details=dict(self.details),
        )


def _candidate(
    scene: Scene, task: str, text: str, values: Sequence[Any], labels: Sequence[str], **extra: Any
) -> Candidate:
    return Candidate(task, scene.id, text, tuple(values), tuple(labels), **extra)


# ---- anchor recognition ----------------------------------------------------------------------------------
def anchor_candidates(
    scene: Scene, views: Views, seed: int, settings: Mapping[str, Any] | None = None
) -> list[Candidate]:
    """Which object both agents see. The answer is a shared object; the three distractors are objects only
    the Answerer sees, one of the answer's category when there is one (Cosmic's look-alike, which stops a
    match by category alone). Every option is in the Answerer's view, so its view alone cannot rule one out:
    the answer is one object both see, and any option set leaves some view able to prune the options it does
    not see; SimLab leaves that to the Helper, who is never shown the options."""
    desc = _descriptions(scene)
    shared, own = _described(views.shared, desc), _described(views.answerer_only, desc)
    if len(own) < 3:
        return []
    r = rng(seed, scene.id, "anchor")
    out: list[Candidate] = []
    for answer in shared:
        category = scene.object(answer).category
        alike = [i for i in own if scene.object(i).category == category]
        for _ in range(ANCHOR_DRAWS):
            third = [r.choice(alike)] if alike else []
            rest = r.sample([i for i in own if i not in third], 3 - len(third))
            values = [answer, *third, *rest]
            kinds = {answer: "shared", **{i: "answerer_only" for i in rest}, **{i: "look_alike" for i in third}}
            details = {"kinds": kinds, "same_category": bool(third)}
            out.append(
                _candidate(scene, "anchor", TEMPLATES["anchor"], values, [desc[v] for v in values], details=details)
            )
    return _distinct(out)


# ---- global counting -------------------------------------------------------------------------------------
def counting_candidates(
    scene: Scene, views: Views, seed: int, settings: Mapping[str, Any] | None = None
) -> list[Candidate]:
    """How many of a category there are in the room. Asked only when both agents see some of them and every
    instance in the room is seen by one of them (the right count is the union of both views, shared
    instances once). The options are four consecutive counts holding the answer, none below what the
    Answerer sees, so its view alone rules none out: one candidate per such window, so the answer can take
    any place in it (the balanced selection evens those places out as far as the rooms allow: the Answerer
    rarely misses three or more of a kind). The Helper, who is never shown the options, may see more than
    the lowest. Cosmic's naive sum (double counting) and undercount are among them when in the window."""
    seen_a, seen_h = set(views.answerer_visible), set(views.helper_visible)
    out: list[Candidate] = []
    for category in sorted({scene.object(i).category for i in seen_a} & {scene.object(i).category for i in seen_h}):
        in_room = {o.id for o in scene.objects if o.category == category}
        if not in_room <= seen_a | seen_h:
            continue  # the question is about the room: an instance nobody sees would make the key wrong
        own, helper, answer = len(in_room & seen_a), len(in_room & seen_h), len(in_room)
        text = TEMPLATES["counting"].format(objects=plural(category))
        details = {"category": category, "answerer_count": own, "helper_count": helper, "naive_sum": own + helper}
        for start in range(max(1, own, answer - 3), answer + 1):
            values = [answer, *(v for v in range(start, start + 4) if v != answer)]
            out.append(_candidate(scene, "counting", text, values, [str(v) for v in values], details=details))
    return out


def many_of_a_kind(scene: Scene, least: int = 4) -> bool:
    """Whether some kind of object has ``least`` instances in the room: only then can one agent miss three
    of them that the other sees, which puts a count at the top of its window."""
    counts: dict[str, int] = {}
    for obj in scene.objects:
        counts[obj.category] = counts.get(obj.category, 0) + 1
    return max(counts.values(), default=0) >= least


def high_in_window(candidate: Candidate) -> bool:
    """A counting candidate whose answer is one of the two highest options: the places a room's first pair of
    viewpoints rarely gives (an agent seldom misses two or more of a kind), sought in more viewpoints."""
    values = sorted(candidate.values)
    return values.index(candidate.values[0]) >= 2


# ---- relative distance -----------------------------------------------------------------------------------
def distance_candidates(
    scene: Scene, views: Views, seed: int, settings: Mapping[str, Any] | None = None
) -> list[Candidate]:
    """Which of four candidates is closest to (or farthest from) a target, by :func:`corner_distance`.

    The target is an object only one agent (the holder) sees; the holder sees exactly one candidate and the
    partner the other three (objects only the partner sees). So neither view alone can rank the options:
    the holder knows one distance, the partner does not know where the target is, and only together can
    they compare. The answer must beat the runner-up by ``distance_margin`` (default 0.5 m)."""
    margin = _settings(settings)["distance_margin"]
    desc = _descriptions(scene)
    r = rng(seed, scene.id, "distance")
    out: list[Candidate] = []
    sides = (
        (views.answerer_only, views.answerer_visible, views.helper_only, "answerer"),
        (views.helper_only, views.helper_visible, views.answerer_only, "helper"),
    )
    for targets, holder_sees, partner_only, holder in sides:
        partner = _described(partner_only, desc)
        for target in _described(targets, desc):
            near = [i for i in _described(holder_sees, desc) if i != target]
            if not near or len(partner) < 3:
                continue
            for mode in ("closest", "farthest"):
                found = _distance_set(scene, target, near, partner, (mode, margin), r)
                if found is None:
                    continue
                preposition = "to" if mode == "closest" else "from"
                text = TEMPLATES["distance"].format(mode=mode, preposition=preposition, target=desc[target])
                details = {"mode": mode, "distances": found[1], "margin": margin, "holder": holder}
                labels = [desc[v] for v in found[0]]
                out.append(_candidate(scene, "distance", text, found[0], labels, target=target, details=details))
    return out


def _distance_set(
    scene: Scene, target: str, near: list[str], partner: list[str], rule: tuple[str, float], r: random.Random
) -> tuple[list[str], dict[str, float]] | None:
    """Up to :data:`DISTANCE_TRIES` draws of one candidate the holder sees and three only the partner sees;
    the first whose answer (``rule``: mode and margin) is clear, with the answer first, and the distances."""
    for _ in range(DISTANCE_TRIES):
        found = _ranked(scene, target, [r.choice(near), *r.sample(partner, 3)], *rule)
        if found is not None:
            return found
    return None


def _ranked(
    scene: Scene, target: str, picked: list[str], mode: str, margin: float
) -> tuple[list[str], dict[str, float]] | None:
    """The candidates with the answer first, and their distances, when the answer wins by ``margin``."""
    box = scene.object(target).bbox
    dist = {i: round(corner_distance(box, scene.object(i).bbox), 4) for i in picked}
    ranked = sorted(picked, key=lambda i: (dist[i], i), reverse=mode == "farthest")
    if abs(dist[ranked[0]] - dist[ranked[1]]) < margin:
        return None
    return [ranked[0], *sorted(ranked[1:])], dist


# ---- relative direction ----------------------------------------------------------------------------------
def direction_candidates(
    scene: Scene, views: Views, seed: int, settings: Mapping[str, Any] | None = None
) -> list[Candidate]:
    """In which of eight egocentric directions (Answerer's frame, :func:`bearing`) an object only the Helper
    sees lies. Targets within ``direction_edge`` degrees (default 5) of a bin edge are skipped.

    The options are two neighbouring directions and their two opposites, ``{d, d+1, d+4, d+5}`` (in 45-degree
    steps): the answer, its opposite, a neighbour and the neighbour's opposite, as Cosmic's distractors are.
    That set looks the same from each of its members, so its shape does not give the answer away; the answer
    is the first or the second of its neighbouring pair, one candidate each."""
    edge = _settings(settings)["direction_edge"]
    desc = _descriptions(scene)
    out: list[Candidate] = []
    for target in _described(views.helper_only, desc):
        angle = bearing(views.answerer, scene.object(target).center)
        if bin_edge_distance(angle) < edge:
            continue
        k = DIRECTIONS.index(direction_of(angle))
        for base in (k, k - 1):
            values = [DIRECTIONS[k], *(DIRECTIONS[(base + d) % 8] for d in (0, 1, 4, 5) if (base + d) % 8 != k)]
            text = TEMPLATES["direction"].format(target=desc[target])
            out.append(
                _candidate(
                    scene, "direction", text, values, values, target=target, details={"bearing": round(angle, 2)}
                )
            )
    return out


# ---- cognitive mapping -----------------------------------------------------------------------------------
def mapping_candidates(
    scene: Scene, views: Views, seed: int, settings: Mapping[str, Any] | None = None
) -> list[Candidate]:
    """Is the shown top-down map (every object either agent sees, :func:`map_layout`) correct? One candidate
    shows the true map; the others swap two objects only the Helper sees, of different categories, at least
    ``swap_min_distance`` (default 1 m) apart on the map and both against a wall or both away from the walls,
    so the wrong map still looks like a plausible room. None when no such pair exists (a room never gives
    only correct maps, which would make "yes" likelier)."""
    min_gap = _settings(settings)["swap_min_distance"]
    r = rng(seed, scene.id, "mapping")
    layout = map_layout(scene, views.helper_only, views.answerer)
    ids = sorted(layout)
    pairs = [
        (a, b)
        for n, a in enumerate(ids)
        for b in ids[n + 1 :]
        if scene.object(a).category != scene.object(b).category
        and math.dist(layout[a], layout[b]) >= min_gap
        and against_wall(scene, a) == against_wall(scene, b)
    ]
    if not pairs:
        return []
    details = {"map_objects": _visible(views), "swap_pairs": len(pairs)}
    maps: list[tuple[tuple[str, str], ...] | None] = [
        None,
        *(((a, b),) for a, b in r.sample(pairs, min(3, len(pairs)))),
    ]
    text, labels = TEMPLATES["mapping"], list(YES_NO)
    return [_candidate(scene, "mapping", text, YES_NO, labels, map_swap=swap, details=details) for swap in maps]


def against_wall(scene: Scene, object_id: str, gap: float = WALL_GAP) -> bool:
    """Whether an object's footprint comes within ``gap`` metres of a wall (wall furniture, doors, windows)."""
    (lo, hi) = scene.object(object_id).bbox
    return min(lo[0], lo[1], scene.width - hi[0], scene.depth - hi[1]) <= gap


# ---- dispatch --------------------------------------------------------------------------------------------
CANDIDATES: dict[str, Callable[..., list[Candidate]]] = {
    "anchor": anchor_candidates,
    "counting": counting_candidates,
    "distance": distance_candidates,
    "direction": direction_candidates,
    "mapping": mapping_candidates,
}


def candidates(
    task: str, scene: Scene, views: Views, seed: int, settings: Mapping[str, Any] | None = None
) -> list[Candidate]:
    """Every fair question of ``task`` (one of :data:`TASKS`) about this room and views, unlettered."""
    if task not in CANDIDATES:
        raise ValueError(f"unknown rooms task {task!r}; expected one of {', '.join(TASKS)}")
    return CANDIDATES[task](scene, views, seed, settings)


def make_question(
    task: str, scene: Scene, views: Views, seed: int, settings: Mapping[str, Any] | None = None
) -> Question | None:
    """One question of ``task`` for this room and views (a seeded pick among its candidates), or None."""
    found = candidates(task, scene, views, seed, settings)
    return rng(seed, scene.id, task, "pick").choice(found).question(seed) if found else None


def _distinct(found: Iterable[Candidate]) -> list[Candidate]:
    """Candidates with the same options (in any order) kept once, in order."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for c in found:
        key = (c.values[0], *sorted(map(str, c.values[1:])))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out
