"""Choosing a benchmark's questions so that no answer can be had from a prior.

Every room offers candidate questions per task (:mod:`simlab.worlds.rooms.tasks`), each already through the
necessity filter. :func:`select` keeps at most one per room and task. Task by task in turn, it takes the
candidate that keeps the benchmark's :class:`Ledger` most even. For every feature a solver could learn from
(:func:`~simlab.worlds.rooms.necessity.all_features`: option texts, object categories, a count's rank and
its offsets from what each agent sees, ...), the ledger compares how often options with that feature are
right with how often they are offered divided by the number of options. The right letters are dealt so
that each is right equally often. A room no task has used yet is preferred, so the benchmark spreads over as
many rooms as the pool holds. Each pick looks at a seeded sample of :data:`SAMPLE_ROOMS` rooms, which keeps
it fast and leaves the ledger evened out, not tuned to the last count.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from simlab.worlds.rooms.tasks import ANSWER_SPACES, Candidate
from simlab.worlds.rooms.visibility import ViewPair

SAMPLE_ROOMS = 96
"""Rooms whose candidates each pick compares."""
SPREAD_WEIGHT = 4.0
"""How much an uneven spread of answers over their space weighs against uneven feature rates."""


@dataclass(frozen=True)
class Offer:
    """A candidate question of one room, with its options' features (the answer's first)."""

    room: int
    candidate: Candidate
    features: tuple[tuple[str, ...], ...]
    answer: str = ""
    """What the answer says, for tasks whose answers should spread evenly over a fixed set (the eight
    directions); empty for the others."""
    views: ViewPair | None = None
    """The viewpoints the question is asked from when they are not the room's first pair (counting seeks
    answers high in their window in more of them)."""


@dataclass
class Ledger:
    """Per feature, how often options with it were right and how often chance would make them right."""

    right: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    expected: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    answers: Counter[str] = field(default_factory=Counter)
    space: tuple[str, ...] = ()
    """The answers that should each be right equally often (empty: no such spread is asked for)."""

    def _changes(self, offer: Offer) -> dict[str, tuple[float, float]]:
        share = 1.0 / len(offer.features)
        changes: dict[str, tuple[float, float]] = {}
        for k, feats in enumerate(offer.features):
            for f in feats:
                right, expected = changes.get(f, (0.0, 0.0))
                changes[f] = (right + (k == 0), expected + share)
        return changes

    def cost(self, offer: Offer) -> float:
        """How much taking ``offer`` adds to the ledger's imbalance (negative: it evens it out): its features'
        right-rates against chance and, with a ``space``, how unevenly its answer spreads the answers."""
        total = 0.0
        for f, (dr, de) in self._changes(offer).items():
            r, e = self.right[f], self.expected[f]
            total += (r + dr - e - de) ** 2 / (e + de + 1.0) - (r - e) ** 2 / (e + 1.0)
        if self.space and offer.answer:
            total += SPREAD_WEIGHT * (self._spread(offer.answer) - self._spread(""))
        return total

    def _spread(self, extra: str) -> float:
        """How far the answers (with one more ``extra``) are from even over the space."""
        n = sum(self.answers.values()) + bool(extra)
        even = n / len(self.space)
        return sum((self.answers[a] + (a == extra) - even) ** 2 for a in self.space) / (even + 1.0)

    def add(self, offer: Offer) -> None:
        """Count ``offer``'s options."""
        for f, (dr, de) in self._changes(offer).items():
            self.right[f] += dr
            self.expected[f] += de
        if offer.answer:
            self.answers[offer.answer] += 1

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
    ledgers = {t: Ledger(space=ANSWER_SPACES.get(t, ())) for t in offers}
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
    """The least-dealt letter so far (ties: seeded), so every letter is right equally often."""
    if offer.candidate.task == "mapping":
        return None
    n = len(offer.features)
    fewest = min(counts[k] for k in range(n))
    letter = r.choice([k for k in range(n) if counts[k] == fewest])
    counts[letter] += 1
    return letter
