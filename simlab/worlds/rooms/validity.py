"""Does a rooms benchmark measure communication? Its baselines, task by task (``python main.py validity BENCH``).

For every question of a benchmark (generated, hand-authored in the editor, paraphrased: whatever
``run --tasks`` plays), six baselines answer, and the report gives each one's accuracy per task with a
bootstrap CI:

* **chance**: a uniform guess (1/4, or 1/2 for cognitive mapping), with the range a guesser's score falls in.
* **blind prior**: never looks at the room. A feature of the options (its text, its object's category, a
  count's rank among the options) is a prior when, over the benchmark, options with it are right more or
  less often than chance beyond noise (a two-sided z-test at 5%, Bonferroni-corrected over the task's
  features); the solver learns how much from the other half of the benchmark (two seeded folds,
  :func:`cross_fitted`, so no question informs its own answer) and picks the option whose priors say "right"
  most (naive Bayes over log-odds).
* **answerer alone** / **helper alone**: one agent's view with the question and options (never the other's
  pictures; the Helper never sees the map): it rules out what its view proves wrong
  (:func:`~simlab.worlds.rooms.necessity.ruled_out`) and picks among the rest by the same cross-fitted
  priors, plus what its view says of each option (distance from the agent, a count's offset from its own
  count, how far a candidate it sees is from a target it sees).
* **both views**: one solver with both agents' views, matched by position (the rule-based ceiling of
  Cosmic's single-agent both-views condition, figure 6 right): below 1.0 a question cannot be answered even
  with everything both agents see.
* **oracle**: the answer key recomputed from the room itself: below 1.0 the key is wrong.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any

from simlab.analysis.stats import Summary
from simlab.analysis.validity import ValidityReport, accuracy, chance_summary
from simlab.core.seeding import rng
from simlab.worlds.rooms.agents import oracle_answer
from simlab.worlds.rooms.describe import describe_objects
from simlab.worlds.rooms.model import Scene
from simlab.worlds.rooms.necessity import (
    ANSWERER,
    HELPER,
    all_features,
    distance_mode,
    needs_both_views,
    option_features,
    ruled_out,
)
from simlab.worlds.rooms.observations import answerer_data, view_entries
from simlab.worlds.rooms.tasks import TASKS, Question, bearing, corner_distance, direction_of
from simlab.worlds.rooms.visibility import ViewPair

BASELINES: tuple[str, ...] = ("blind prior", "answerer alone", "helper alone", "both views", "oracle")
LEGEND: dict[str, str] = {
    "chance": "a uniform guess; the CI is the range a guesser's score falls in over these questions",
    "blind prior": "no room at all: priors of the options' texts, categories and count ranks (sized on the other half)",
    "answerer alone": "the Answerer's view and map with the question: rules out what it proves wrong, then priors",
    "helper alone": "the Helper's view with the question text and options (no map), then priors",
    "both views": "both views' objects matched by position, answered exactly (the single-agent ceiling)",
    "oracle": "the answer key recomputed from the room",
}
STRUCTURAL: dict[str, str] = {
    "anchor": "anchor: by design the Helper alone sees only the answer among the options (it is the one object both "
    "see; the distractors are the Answerer's own); the Helper is never shown the options",
    "counting": "counting: the Helper alone may rule out counts below its own (the options start at the Answerer's "
    "count); the Helper is never shown the options",
}
"""What a task's design leaves to one view, said under the table (necessity.HELPER_MAY_PRUNE)."""
ALPHA = 0.05  # a feature counts when its rate differs from chance at this level, corrected for the features tested
FOLDS = 2
LEAST_OFFERED = 8  # options a feature needs in the other questions before its rate is trusted


@dataclass(frozen=True)
class Item:
    """A question instance, parsed: the room, both views and the question."""

    id: str
    scene: Scene
    views: ViewPair
    question: Question


def parse(instance: Mapping[str, Any]) -> Item:
    """An instance as ``run --tasks`` plays it (``scene``, ``views``, ``question``)."""
    question = Question.from_json(instance["question"])
    return Item(question.id, Scene.from_json(instance["scene"]), ViewPair.from_json(instance["views"]), question)


# ---- cross-fitted priors ----------------------------------------------------------------------------------
class Counts:
    """Per task and feature, how often options with the feature were right, offered, and right by chance."""

    def __init__(self, items: Sequence[Item], features: Sequence[Mapping[str, tuple[str, ...]]]) -> None:
        self.right: Counter[tuple[str, str]] = Counter()
        self.offered: Counter[tuple[str, str]] = Counter()
        self.chance: defaultdict[tuple[str, str], float] = defaultdict(float)
        for item, feats in zip(items, features, strict=True):
            share = 1.0 / len(item.question.option_objects)
            for letter, fs in feats.items():
                for f in fs:
                    key = (item.question.task, f)
                    self.right[key] += letter == item.question.answer
                    self.offered[key] += 1
                    self.chance[key] += share

    def priors(self) -> frozenset[tuple[str, str]]:
        """The features whose right-rate differs from chance beyond noise: a two-sided z-test at :data:`ALPHA`,
        Bonferroni-corrected over each task's features (with dozens tested, some would pass by chance)."""
        tested = [key for key, n in self.offered.items() if n >= LEAST_OFFERED]
        per_task = Counter(task for task, _ in tested)
        out = set()
        for key in tested:
            n, p0 = self.offered[key], self.chance[key] / self.offered[key]
            z = NormalDist().inv_cdf(1 - ALPHA / 2 / per_task[key[0]])
            if abs(self.right[key] / n - p0) >= z * math.sqrt(p0 * (1 - p0) / n):
                out.add(key)
        return frozenset(out)


class Priors:
    """What a solver may learn about one question: the benchmark's priors (:meth:`Counts.priors`), with their
    size and direction counted from the other half of the benchmark only."""

    def __init__(self, counts: Counts, real: frozenset[tuple[str, str]]) -> None:
        self.counts, self.real = counts, real

    def scores(self, item: Item, seen: Mapping[str, tuple[str, ...]]) -> dict[str, float]:
        """Per option letter of ``item`` (a question these counts do not include), the log-odds that it is right
        from the features in ``seen`` (a solver's) that are priors of the benchmark."""
        task, c = item.question.task, self.counts
        p0 = 1.0 / len(item.question.option_objects)
        keys = {k: [(task, f) for f in fs if (task, f) in self.real] for k, fs in seen.items()}
        return {k: sum(_log_odds(c.right[key], c.offered[key], p0) for key in found) for k, found in keys.items()}


def cross_fitted(items: Sequence[Item], features: Sequence[Mapping[str, tuple[str, ...]]], seed: int) -> list[Priors]:
    """For each item, the benchmark's priors sized from the other half of it (:data:`FOLDS` seeded folds by
    question id), so a question never informs its own answer.

    Which features are priors is decided on the whole benchmark, their effect learnt on the other half. A
    half alone would not do for the first: on a balanced benchmark whatever one half over-represents by chance
    the other half under-represents, so a fluke learnt on one half points the wrong way on the other and the
    solver scores below chance. Plain leave-one-out has the same flaw at its extreme: every answer's own
    features are one short in its counts, so it prefers distractors (an exactly balanced yes/no task scores 0)."""
    real = Counts(items, features).priors()
    fold = [rng(seed, "validity-fold", item.id).randrange(FOLDS) for item in items]
    halves = [
        Counts(
            [i for i, f in zip(items, fold, strict=True) if f != k],
            [x for x, f in zip(features, fold, strict=True) if f != k],
        )
        for k in range(FOLDS)
    ]
    return [Priors(halves[f], real) for f in fold]


def _log_odds(right: int, offered: int, p0: float) -> float:
    """How much more (or less) likely than chance an option with this feature is right (0 with too little
    data); the rate is kept off 0 and 1 by half a count."""
    if offered < LEAST_OFFERED:
        return 0.0
    rate = min(max(right / offered, 0.5 / offered), 1 - 0.5 / offered)
    return math.log(rate / (1 - rate)) - math.log(p0 / (1 - p0))


def prior_choice(item: Item, priors: Priors, solver: str) -> list[str]:
    """``blind`` or a view solver's choice: of the options its view leaves, those its priors rank highest (a
    tie when the priors cannot tell them apart; it would guess among them)."""
    q = item.question
    seen = option_features(q, item.scene, item.views, solver)
    out = ruled_out(q, item.scene, item.views, solver) if solver != "blind" else frozenset()
    allowed = [k for k in q.option_objects if k not in out] or list(q.option_objects)
    scores = priors.scores(item, seen)
    top = max(scores[k] for k in allowed)
    return [k for k in allowed if scores[k] == top]


def expected_right(answer: str, choice: Sequence[str]) -> float:
    """How often a guess among ``choice`` is ``answer``: its expected accuracy, not one draw's (a draw would
    add noise that says nothing about the benchmark)."""
    return float(answer in choice) / len(choice)


def both_views_answer(item: Item) -> str:
    """The oracle agent's answer given both views' objects (what one agent with both pictures could work out).
    A paraphrased question is read in its template wording (kept in its details): this solver stands for
    understanding the question, not for parsing its words."""
    q, scene, views = item.question, item.scene, item.views
    template = q.details.get("template_text"), q.details.get("template_options")
    if template[0] and template[1]:
        q = replace(q, text=str(template[0]), options=tuple(str(o) for o in template[1]))
    ids = sorted({*views.answerer_visible, *views.helper_visible})
    helper: list[Mapping[str, Any]] = list(
        view_entries(scene, views.helper_visible, views.helper, describe_objects(scene, ids))
    )
    return oracle_answer(answerer_data(q, scene, views), helper)


def key_answer(item: Item) -> str | None:
    """The right option recomputed from the room, or None when no option (or several) fits."""
    q, scene, views = item.question, item.scene, item.views
    objects = q.option_objects
    if q.task == "mapping":
        return "no" if q.map_swap else "yes"
    if q.task == "anchor":
        fits = [k for k, v in objects.items() if v in set(views.shared)]
    elif q.task == "counting":
        seen = set(views.answerer_visible) | set(views.helper_visible)
        category = q.details.get("category")
        count = sum(1 for o in scene.objects if o.category == category and o.id in seen)
        fits = [k for k, v in objects.items() if int(v) == count]
    elif q.task == "distance" and q.target is not None:
        box = scene.object(q.target).bbox
        dist = {k: corner_distance(box, scene.object(str(v)).bbox) for k, v in objects.items()}
        pick = min if distance_mode(q) == "closest" else max
        best = pick(dist.values())
        fits = [k for k, d in dist.items() if d == best]
    elif q.task == "direction" and q.target is not None:
        direction = direction_of(bearing(views.answerer, scene.object(q.target).center))
        fits = [k for k, v in objects.items() if v == direction]
    else:
        fits = []
    return fits[0] if len(fits) == 1 else None


# ---- the report --------------------------------------------------------------------------------------------
def validity_report(instances: Sequence[Mapping[str, Any]], source: str, seed: int = 0) -> ValidityReport:
    """The validity report of ``instances`` (a benchmark's questions), per task in :data:`TASKS` order."""
    items = [parse(i) for i in instances]
    priors = cross_fitted(items, [all_features(i.question, i.scene, i.views) for i in items], seed)
    right: dict[str, dict[str, list[float]]] = {t: defaultdict(list) for t in TASKS}
    for item, trained in zip(items, priors, strict=True):
        choices = {
            "blind prior": prior_choice(item, trained, "blind"),
            "answerer alone": prior_choice(item, trained, ANSWERER),
            "helper alone": prior_choice(item, trained, HELPER),
            "both views": [both_views_answer(item)],
            "oracle": [key_answer(item) or ""],
        }
        for name, choice in choices.items():
            right[item.question.task][name].append(expected_right(item.question.answer, choice))
    tasks = [t for t in TASKS if right[t]]
    groups = {t: {b: accuracy(right[t][b], seed) for b in BASELINES} for t in tasks}
    chance = {t: _chance([i for i in items if i.question.task == t], seed) for t in tasks}
    extra = {t: _extra([i for i in items if i.question.task == t]) for t in tasks}
    facts = {"questions": len(items), "distinct rooms": len({i.scene.id for i in items})}
    return ValidityReport(source, BASELINES, LEGEND, groups, chance, extra, facts, _notes(extra))


def _chance(items: Sequence[Item], seed: int) -> Summary:
    return chance_summary([1.0 / len(i.question.option_objects) for i in items], seed)


def _extra(items: Sequence[Item]) -> dict[str, Any]:
    """The right letters' shares, the room types' shares and how many questions one view alone narrows."""
    n = max(1, len(items))
    letters = Counter(i.question.answer for i in items)
    types = Counter(i.scene.room_type for i in items)
    narrowed = sum(not needs_both_views(i.question, i.scene, i.views) for i in items)
    return {
        "right_letters": {k: round(v / n, 3) for k, v in sorted(letters.items())},
        "room_types": {k: round(v / n, 3) for k, v in sorted(types.items())},
        "one_view_narrows": narrowed,
        "distinct_rooms": len({i.scene.id for i in items}),
    }


def _notes(extra: Mapping[str, Mapping[str, Any]]) -> tuple[str, ...]:
    lines = ["a solver that finds nothing to go on guesses: it scores its expected accuracy, chance (zero width)"]
    for task, facts in extra.items():
        shares = ", ".join(f"{k} {v:.2f}" for k, v in facts["right_letters"].items())
        narrowed = f"; {facts['one_view_narrows']} one view alone narrows" if facts["one_view_narrows"] else ""
        lines.append(f"{task}: right letters {shares}{narrowed}")
    return (*lines, *(STRUCTURAL[t] for t in extra if t in STRUCTURAL))
