"""The five Cosmic tasks (paper 7.3): question templates, answers and distractors, and the necessity filter.

Every ``make_<task>(scene, views, seed, settings=None)`` returns a :class:`Question` or None when the room
and its two views hold no fair question of that kind. ``views`` is anything shaped like
:class:`~simlab.worlds.rooms.visibility.ViewPair` (see :class:`Views`). All choices come from
:func:`~simlab.core.seeding.rng` over sorted lists, so a (scene, views, seed) always gives the same question;
options are shuffled by ``rng(seed, question id, "options")`` and the answer letter follows the shuffle.

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

from simlab.core.seeding import rng, stable_seed
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
DISTANCE_TRIES = 12  # candidate sets tried per target before giving up on it


class Views(Protocol):
    """What the tasks need from a view pair: both cameras and who sees what (object ids)."""

    answerer: Camera
    helper: Camera
    answerer_visible: list[str]
    helper_visible: list[str]

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
def question_id(scene: Scene, task: str, seed: int) -> str:
    """A file-name-safe id for the question of ``task`` made from ``scene`` with ``seed``."""
    return f"{scene.id}-{task}-s{seed}"


def _settings(settings: Mapping[str, Any] | None) -> dict[str, float]:
    return {**DEFAULT_SETTINGS, **{k: float(v) for k, v in (settings or {}).items() if k in DEFAULT_SETTINGS}}


def _visible(views: Views) -> list[str]:
    return sorted({*views.answerer_visible, *views.helper_visible})


def _descriptions(scene: Scene) -> dict[str, str]:
    return describe_objects(scene, [o.id for o in scene.objects])


def _described(ids: Iterable[str], descriptions: Mapping[str, str]) -> list[str]:
    return sorted(i for i in set(ids) if i in descriptions)


def _multiple_choice(
    scene: Scene, task: str, seed: int, text: str, values: list[Any], labels: Callable[[Any], str], **extra: Any
) -> Question:
    """A question whose first value is the answer, options shuffled by the question's seed."""
    qid = question_id(scene, task, seed)
    order = list(values)
    rng(seed, qid, "options").shuffle(order)
    letters = LETTERS[: len(order)]
    return Question(
        id=qid,
        task=task,
        scene_id=scene.id,
        text=text,
        options=tuple(labels(v) for v in order),
        answer=letters[order.index(values[0])],
        option_objects=dict(zip(letters, order, strict=True)),
        **extra,
    )


def _first_pool(pools: Iterable[list[str]], r: random.Random) -> str | None:
    """A seeded pick from the first non-empty pool."""
    for pool in pools:
        if pool:
            return r.choice(pool)
    return None


# ---- anchor recognition ----------------------------------------------------------------------------------
def make_anchor(scene: Scene, views: Views, seed: int, settings: Mapping[str, Any] | None = None) -> Question | None:
    """Which object both agents see: the answer is shared; distractors are one Answerer-only and one
    Helper-only object and one of the answer's category with other attributes (else another category),
    from the Answerer's exclusive view when possible, then the Helper's, else from objects neither sees."""
    desc = _descriptions(scene)
    r = rng(seed, scene.id, "anchor")
    shared, a_only, h_only = (_described(ids, desc) for ids in (views.shared, views.answerer_only, views.helper_only))
    if not (shared and a_only and h_only):
        return None
    answer, first, second = r.choice(shared), r.choice(a_only), r.choice(h_only)
    third = _anchor_third(scene, views, desc, answer, {answer, first, second}, r)
    if third is None:
        return None
    kinds = {answer: "shared", first: "answerer_only", second: "helper_only", third: "third"}
    details = {"kinds": kinds, "same_category": scene.object(third).category == scene.object(answer).category}
    values = [answer, first, second, third]
    return _multiple_choice(scene, "anchor", seed, TEMPLATES["anchor"], values, desc.__getitem__, details=details)


def _anchor_third(
    scene: Scene, views: Views, desc: Mapping[str, str], answer: str, used: set[str], r: random.Random
) -> str | None:
    category = scene.object(answer).category
    seen = set(_visible(views))
    # The Answerer's own view first: a look-alike it can see is what stops it matching by category alone.
    pools = [
        [i for i in _described(views.answerer_only, desc) if i not in used],
        [i for i in _described(views.helper_only, desc) if i not in used],
        [i for i in _described(desc, desc) if i not in used and i not in seen],
    ]
    same = [[i for i in pool if scene.object(i).category == category] for pool in pools]
    other = [[i for i in pool if scene.object(i).category != category] for pool in pools]
    return _first_pool([*same, *other], r)


# ---- global counting -------------------------------------------------------------------------------------
def make_counting(scene: Scene, views: Views, seed: int, settings: Mapping[str, Any] | None = None) -> Question | None:
    """How many of a category both views hold together (shared instances once). The category must have
    instances the Answerer sees and instances only the Helper sees; categories with a shared instance and
    with every instance in the room visible to someone are preferred. Distractors: the naive sum (double
    counting, when it differs), the Answerer's own count (an undercount) and nearby counts."""
    r = rng(seed, scene.id, "counting")
    seen_a, seen_h = set(views.answerer_visible), set(views.helper_visible)

    def of(ids: Iterable[str], category: str) -> set[str]:
        return {i for i in ids if scene.object(i).category == category}

    categories = sorted(
        {scene.object(i).category for i in views.helper_only} & {scene.object(i).category for i in seen_a}
    )
    if not categories:
        return None

    def tier(category: str) -> tuple[bool, bool]:
        in_room = of((o.id for o in scene.objects), category)
        return (bool(of(views.shared, category)), in_room <= seen_a | seen_h)

    best = max(tier(c) for c in categories)
    category = r.choice([c for c in categories if tier(c) == best])
    own, helper = len(of(seen_a, category)), len(of(seen_h, category))
    answer = len(of(seen_a | seen_h, category))
    values = _count_values(answer, own + helper, own, r)
    text = TEMPLATES["counting"].format(objects=plural(category))
    details = {"category": category, "answerer_count": own, "helper_count": helper, "naive_sum": own + helper}
    return _multiple_choice(scene, "counting", seed, text, values, str, details=details)


def _count_values(answer: int, naive: int, under: int, r: random.Random) -> list[int]:
    """The answer, then the naive sum (when different), the undercount, then the nearest other counts (>= 1)."""
    values = [answer]
    for v in (naive, under):
        if v >= 1 and v not in values:
            values.append(v)
    nearby = sorted((k for k in range(1, answer + 6) if k not in values), key=lambda k: (abs(k - answer), r.random()))
    return values + nearby[: 4 - len(values)]


# ---- relative distance -----------------------------------------------------------------------------------
def make_distance(scene: Scene, views: Views, seed: int, settings: Mapping[str, Any] | None = None) -> Question | None:
    """Which of four candidates is closest to (or farthest from, seeded) a target, by :func:`corner_distance`.

    The target is a shared object when one works, else any seen one; the candidates come from both exclusive
    views (two and two when possible, at least one each). The answer must beat the runner-up by
    ``distance_margin`` (default 0.5 m); sets that do not are resampled, and None is returned if none does."""
    margin = _settings(settings)["distance_margin"]
    desc = _descriptions(scene)
    r = rng(seed, scene.id, "distance")
    mode = r.choice(("closest", "farthest"))
    shared = _described(views.shared, desc)
    others = [i for i in _described(_visible(views), desc) if i not in shared]
    targets = r.sample(shared, len(shared)) + r.sample(others, len(others))
    for target in targets:
        found = _distance_set(scene, views, desc, target, (mode, margin), r)
        if found is not None:
            preposition = "to" if mode == "closest" else "from"
            text = TEMPLATES["distance"].format(mode=mode, preposition=preposition, target=desc[target])
            details = {"mode": mode, "distances": found[1], "margin": margin}
            return _multiple_choice(
                scene, "distance", seed, text, found[0], desc.__getitem__, target=target, details=details
            )
    return None


def _distance_set(
    scene: Scene, views: Views, desc: Mapping[str, str], target: str, rule: tuple[str, float], r: random.Random
) -> tuple[list[str], dict[str, float]] | None:
    """Up to :data:`DISTANCE_TRIES` candidate sets around ``target``; the first whose answer (``rule``: mode and
    margin) is clear, with the answer first, and the distances."""
    pools = [[i for i in _described(ids, desc) if i != target] for ids in (views.answerer_only, views.helper_only)]
    for _ in range(DISTANCE_TRIES):
        picked = _candidates(pools, r)
        if picked is None:
            return None
        found = _ranked(scene, target, picked, *rule)
        if found is not None:
            return found
    return None


def _candidates(pools: list[list[str]], r: random.Random) -> list[str] | None:
    """Four ids from the two exclusive pools: 2+2 when both have two, else 1+3 or 3+1; None when impossible."""
    a, h = pools
    splits = [(2, 2)] if len(a) >= 2 and len(h) >= 2 else [(1, 3), (3, 1)]
    fits = [(m, n) for m, n in splits if 1 <= m <= len(a) and 1 <= n <= len(h)]
    if not fits:
        return None
    m, n = r.choice(fits)
    return r.sample(a, m) + r.sample(h, n)


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
def make_direction(scene: Scene, views: Views, seed: int, settings: Mapping[str, Any] | None = None) -> Question | None:
    """In which of eight egocentric directions (Answerer's frame, :func:`bearing`) a Helper-only object lies.

    Targets within ``direction_edge`` degrees (default 5) of a bin edge are skipped. Options: the answer, the
    opposite direction, a neighbouring one and one more (all seeded)."""
    edge = _settings(settings)["direction_edge"]
    desc = _descriptions(scene)
    r = rng(seed, scene.id, "direction")
    angles = {i: bearing(views.answerer, scene.object(i).center) for i in _described(views.helper_only, desc)}
    targets = [i for i in sorted(angles) if bin_edge_distance(angles[i]) >= edge]
    if not targets:
        return None
    target = r.choice(targets)
    k = DIRECTIONS.index(direction_of(angles[target]))
    neighbour = r.choice([(k + 1) % 8, (k - 1) % 8])
    rest = [j for j in range(8) if j not in {k, (k + 4) % 8, neighbour}]
    values = [DIRECTIONS[j] for j in (k, (k + 4) % 8, neighbour, r.choice(rest))]
    text = TEMPLATES["direction"].format(target=desc[target])
    details = {"bearing": round(angles[target], 2)}
    return _multiple_choice(scene, "direction", seed, text, values, str, target=target, details=details)


# ---- cognitive mapping -----------------------------------------------------------------------------------
def make_mapping(scene: Scene, views: Views, seed: int, settings: Mapping[str, Any] | None = None) -> Question | None:
    """Is the shown top-down map (every object either agent sees, :func:`map_layout`) correct? A seeded coin
    shows the true map or one where two Helper-only objects of different categories, at least
    ``swap_min_distance`` (default 1 m) apart on the map, trade places. None when no such pair exists."""
    min_gap = _settings(settings)["swap_min_distance"]
    r = rng(seed, scene.id, "mapping")
    layout = map_layout(scene, views.helper_only, views.answerer)
    ids = sorted(layout)
    pairs = [
        (a, b)
        for n, a in enumerate(ids)
        for b in ids[n + 1 :]
        if scene.object(a).category != scene.object(b).category and math.dist(layout[a], layout[b]) >= min_gap
    ]
    if not pairs:
        return None
    correct = r.random() < 0.5
    swap = None if correct else [r.choice(pairs)]
    qid = question_id(scene, "mapping", seed)
    return Question(
        id=qid,
        task="mapping",
        scene_id=scene.id,
        text=TEMPLATES["mapping"],
        options=YES_NO,
        answer="yes" if correct else "no",
        option_objects={"yes": "correct map", "no": "wrong map"},
        map_swap=swap,
        details={"map_objects": _visible(views), "swap_pairs": len(pairs)},
    )


# ---- dispatch and the necessity filter -------------------------------------------------------------------
MAKERS: dict[str, Callable[..., Question | None]] = {
    "anchor": make_anchor,
    "counting": make_counting,
    "distance": make_distance,
    "direction": make_direction,
    "mapping": make_mapping,
}
Solver = Callable[[Question, Scene, Views, int], str]


def make_question(
    task: str, scene: Scene, views: Views, seed: int, settings: Mapping[str, Any] | None = None
) -> Question | None:
    """The question of ``task`` (one of :data:`TASKS`) for this room and views, or None."""
    if task not in MAKERS:
        raise ValueError(f"unknown rooms task {task!r}; expected one of {', '.join(TASKS)}")
    return MAKERS[task](scene, views, seed, settings)


def passes_necessity(
    question: Question, scene: Scene, views: Views, solver: Solver, tries: int = 3, seed: int = 0
) -> bool:
    """The paper's cross-view necessity filter: False when ``solver`` (given the Answerer's view only) answers
    right in every one of ``tries`` tries, each with its own seed."""
    seeds = [stable_seed(seed, question.id, "necessity", k) for k in range(tries)]
    return not all(solver(question, scene, views, s) == question.answer for s in seeds)
