"""Choosing the questions: a ledger's kept terms weigh every offer as a ledger made afresh would."""

from __future__ import annotations

import random

from simlab.worlds.rooms.balance import Ledger, Offer
from simlab.worlds.rooms.benchmark import room_pool
from simlab.worlds.rooms.tasks import ANSWER_SPACES


def _fresh(ledger: Ledger) -> Ledger:
    """A ledger with ``ledger``'s counts and seeds and nothing kept from weighing offers."""
    fresh = Ledger(space=ledger.space, salt=ledger.salt)
    for counts, into in ((ledger.right, fresh.right), (ledger.expected, fresh.expected)):
        into.update(counts)
    fresh.offered.update(ledger.offered)
    fresh.answers.update(ledger.answers)
    return fresh


def test_kept_terms_weigh_every_offer_as_a_fresh_ledger_does_while_offers_are_taken() -> None:
    pool = room_pool(2, range(6), ("direction", "counting"), workers=1)
    for task in ("direction", "counting"):
        offers: list[Offer] = [o for room in pool for o in room.offers.get(task, [])]
        assert len(offers) >= 6
        ledger, r = Ledger(space=ANSWER_SPACES.get(task, ()), salt=11), random.Random(3)
        for _ in range(5):
            weighed = [ledger.cost(o) for o in offers]  # twice: the second time from the kept terms
            assert [ledger.cost(o) for o in offers] == weighed == [_fresh(ledger).cost(o) for o in offers]
            ledger.add(r.choice(offers))
        assert len(set(weighed)) > 1  # the offers weigh differently: the comparison means something
