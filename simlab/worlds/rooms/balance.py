"""Choosing a benchmark's questions so that no answer can be had from a prior.

Every room offers candidate questions per task (:mod:`simlab.worlds.rooms.tasks`), each already through the
necessity filter. :func:`select` keeps at most one per room and task. Task by task in turn, it takes the
candidate that keeps the benchmark's :class:`Ledger` most even. For every feature a solver could learn from
(:func:`~simlab.worlds.rooms.necessity.all_features`: option texts, object categories, a count's rank and
its offsets from what each agent sees, ...), the ledger compares how often options with that feature are
right with how often they are offered divided by the number of options. The right letters are dealt so
that none is right much more often than another. A room no task has used yet is preferred, so the benchmark
spreads over as many rooms as the pool holds. Each pick looks at a seeded sample of :data:`SAMPLE_ROOMS`
rooms, which keeps it fast.

Even, not exactly equal: each feature's target is chance plus a seeded deviation of the size chance itself
gives (:data:`DEVIATION` of a binomial standard deviation, drawn once per feature), and letters may differ by
:data:`LETTER_SLACK`. A benchmark balanced to the count is a trap of its own: a leave-one-out solver sees
every answer's own features one count short and picks against them, scoring far below chance (0 on an
exactly balanced yes/no task), which looks like information where there is none.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from simlab.core.seeding import stable_seed
from simlab.worlds.rooms.tasks import ANSWER_SPACES, Candidate
from simlab.worlds.rooms.visibility import ViewPair

SAMPLE_ROOMS = 96
"""Rooms whose candidates each pick compares."""
SPREAD_WEIGHT = 4.0
"""How much an uneven spread of answers over their space weighs against uneven feature rates."""
DEVIATION = 1.0
"""Each feature's seeded deviation from chance, in binomial standard deviations: enough that a count is never
tuned to the unit (see the module docstring), too little to be told from chance."""
MIN_SPLIT = 2
"""How far apart the counts of a two-answer task's answers are aimed at least: two is the least that keeps a
leave-one-out count from flipping, and no prior to speak of out of dozens of questions."""
LETTER_SLACK = 2
"""How many more times one letter may be right than the least dealt one when it is dealt."""


Change = tuple[float, float, int]
"""What an offer adds to a feature's right, expected and offered counts."""


@dataclass(frozen=True)
class Offer:
    """A candidate question of one room, with its options' features (the answer's first)."""

    room: int
    candidate: Candidate
    features: tuple[tuple[str, ...], ...]
    answer: str = ""
    """What the answer says, for tasks whose answers should spread evenly over a fixed set (the eight
    directions, yes and no: ``tasks.ANSWER_SPACES``); empty for the others."""
    views: ViewPair | None = None
    """The viewpoints the question is asked from when they are not the room's first pair (counting seeks
    answers high in their window in more of them)."""

    @cached_property
    def changes(self) -> tuple[tuple[str, Change], ...]:
        """Per feature of its options, in their order: what taking it adds to a ledger's right, expected and
        offered counts (made once: a pick weighs hundreds of offers, most of them again at every pick)."""
        share = 1.0 / len(self.features)
        changes: dict[str, Change] = {}
        for k, feats in enumerate(self.features):
            for f in feats:
                right, expected, offered = changes.get(f, (0.0, 0.0, 0))
                changes[f] = (right + (k == 0), expected + share, offered + 1)
        return tuple(changes.items())


@dataclass
class Ledger:
    """Per feature, how often options with it were right, were offered, and how often chance would make them
    right; ``salt`` seeds each feature's deviation from chance (see the module docstring)."""

    right: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    expected: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    offered: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    answers: Counter[str] = field(default_factory=Counter)
    space: tuple[str, ...] = ()
    """The answers that should each be right about equally often (empty: no such spread is asked for)."""
    salt: int = 0
    _z: dict[str, float] = field(default_factory=dict)
    _terms: dict[str, dict[Change, float]] = field(default_factory=dict, compare=False, repr=False)
    """Per feature, :meth:`_term` of each change weighed since its counts last changed."""
    _spreads: dict[str, float] = field(default_factory=dict, compare=False, repr=False)
    """:meth:`_spread` of each extra answer weighed since the answers last changed."""

    def _target(self, f: str, expected: float, offered: int) -> float:
        """Chance's count for ``f`` plus its seeded deviation (:data:`DEVIATION` binomial standard deviations)."""
        if f not in self._z:
            self._z[f] = random.Random(stable_seed(self.salt, f)).gauss(0.0, 1.0)
        p = expected / offered if offered else 0.0
        return expected + DEVIATION * self._z[f] * math.sqrt(expected * (1.0 - p))

    def cost(self, offer: Offer) -> float:
        """How much taking ``offer`` adds to the ledger's imbalance (negative: it evens it out): its features'
        right counts against their targets and, with a ``space``, how unevenly its answer spreads the answers.
        Each term is kept until :meth:`add` changes what it depends on: a pick weighs hundreds of offers that
        share features, and choosing a Cosmic-scale benchmark's questions spent seconds here."""
        total = 0.0
        for f, change in offer.changes:
            terms = self._terms.setdefault(f, {})
            term = terms.get(change)
            if term is None:
                term = terms[change] = self._term(f, *change)
            total += term
        if self.space and offer.answer:
            total += SPREAD_WEIGHT * (self._spread(offer.answer) - self._spread(""))
        return total

    def _term(self, f: str, dr: float, de: float, do: int) -> float:
        """What adding ``dr`` right, ``de`` expected and ``do`` offered to ``f`` does to its imbalance."""
        r, e, o = self.right[f], self.expected[f], self.offered[f]
        after = (r + dr - self._target(f, e + de, o + do)) ** 2 / (e + de + 1.0)
        return after - (r - self._target(f, e, o)) ** 2 / (e + 1.0)

    def _spread(self, extra: str) -> float:
        """How far the answers (with one more ``extra``) are from their targets over the space."""
        kept = self._spreads.get(extra)
        if kept is not None:
            return kept
        n = sum(self.answers.values()) + bool(extra)
        even = n / len(self.space)
        targets = self._answer_targets(even, n)
        spread = sum((self.answers[a] + (a == extra) - targets[a]) ** 2 for a in self.space) / (even + 1.0)
        self._spreads[extra] = spread
        return spread

    def _answer_targets(self, even: float, n: int) -> dict[str, float]:
        """Each answer's target count; of two answers (yes and no), at least :data:`MIN_SPLIT` apart, as an
        exactly even split is the leave-one-out trap at its worst."""
        targets = {a: self._target(f"answer:{a}", even, n) for a in self.space}
        if len(self.space) == 2 and n >= 2 * MIN_SPLIT:
            first, second = self.space
            gap = targets[first] - targets[second]
            if abs(gap) < MIN_SPLIT:
                shift = math.copysign((MIN_SPLIT - abs(gap)) / 2, gap or 1.0)
                targets[first] += shift
                targets[second] -= shift
        return targets

    def add(self, offer: Offer) -> None:
        """Count ``offer``'s options."""
        for f, (dr, de, do) in offer.changes:
            self.right[f] += dr
            self.expected[f] += de
            self.offered[f] += do
            self._terms.pop(f, None)
        if offer.answer:
            self.answers[offer.answer] += 1
            self._spreads.clear()

    def worst(self, least_offered: float = 10.0) -> tuple[str, float]:
        """The feature (among those offered at least ``least_offered`` chance-answers' worth) whose right-rate
        is farthest from chance, and its right-rate over chance (1.0 is even)."""
        rows = [(f, self.right[f] / e) for f, e in self.expected.items() if e >= least_offered]
        return max(rows, key=lambda row: (abs(row[1] - 1.0), row[0]), default=("", 1.0))


@dataclass(frozen=True)
class Picked:
    """A chosen candidate and the letter its answer gets (``None`` for yes/no questions)."""

    offer: Offer
    letter: int | None


def select(
    offers: Mapping[str, Sequence[Offer]],
    per_task: int,
    r: random.Random,
    keep: Mapping[str, Sequence[Picked]] | None = None,
) -> tuple[dict[str, list[Picked]], dict[str, Ledger]]:
    """Up to ``per_task`` questions of each task in ``offers`` (task -> every room's offers), at most one per
    room and task, rooms no task used first; and each task's final ledger. ``keep``: picks already made (a
    model filter kept them), counted first and kept as they are; the rest is filled in around them."""
    by_room = {t: _by_room(found) for t, found in offers.items()}
    uses: Counter[int] = Counter()
    picked: dict[str, list[Picked]] = {t: [] for t in offers}
    ledgers = {t: Ledger(space=ANSWER_SPACES.get(t, ()), salt=r.getrandbits(62)) for t in offers}
    letters = {t: Counter[int]() for t in offers}
    for task, kept in (keep or {}).items():
        for pick in kept:
            _take(pick, by_room[task], uses, ledgers[task], picked[task])
            if pick.letter is not None:
                letters[task][pick.letter] += 1
    for _ in range(per_task):
        for task, rooms in by_room.items():
            if len(picked[task]) >= per_task:
                continue
            offer = _pick(rooms, uses, ledgers[task], r)
            if offer is not None:
                _take(Picked(offer, _letter(offer, letters[task], r)), rooms, uses, ledgers[task], picked[task])
    return picked, ledgers


def _take(pick: Picked, rooms: dict[int, list[Offer]], uses: Counter[int], ledger: Ledger, out: list[Picked]) -> None:
    rooms.pop(pick.offer.room, None)
    uses[pick.offer.room] += 1
    ledger.add(pick.offer)
    out.append(pick)


def _by_room(offers: Sequence[Offer]) -> dict[int, list[Offer]]:
    rooms: dict[int, list[Offer]] = {}
    for offer in offers:
        rooms.setdefault(offer.room, []).append(offer)
    return rooms


def _pick(rooms: Mapping[int, list[Offer]], uses: Counter[int], ledger: Ledger, r: random.Random) -> Offer | None:
    """The offer of a sample of the least-used rooms that evens the ledger out most (ties: the earlier)."""
    if not rooms:
        return None
    fewest = min(uses[i] for i in rooms)
    pool = sorted(i for i in rooms if uses[i] == fewest)
    sample = r.sample(pool, min(SAMPLE_ROOMS, len(pool)))
    return min((o for i in sample for o in rooms[i]), key=ledger.cost)


def _letter(offer: Offer, counts: Counter[int], r: random.Random) -> int | None:
    """A seeded letter among those dealt at most :data:`LETTER_SLACK` times more than the least dealt one."""
    if offer.candidate.task == "mapping":
        return None
    n = len(offer.features)
    fewest = min(counts[k] for k in range(n))
    letter = r.choice([k for k in range(n) if counts[k] <= fewest + LETTER_SLACK])
    counts[letter] += 1
    return letter
