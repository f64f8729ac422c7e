"""How much of Telehealth can be answered without the solver's information.

``python -m simlab.worlds.puzzles.chance [--n 1000] [--seed 0]`` prints, over the first ``n`` Telehealth
instances of ``seed`` (those ``generate puzzles`` and ``run`` play):

* how often each diagnosis is the answer, and each treatment given the diagnosis;
* the best constant answer: the same diagnosis, then the same treatment, every time. It is the most an
  expert who never hears the solver can reach, as the right answer depends on nothing else it holds;
* the best trial-and-error order: a solver that ignores its photo and profile and tries the diagnoses in one
  fixed order, then that diagnosis's treatments, learning only from the strikes (three strikes leave room
  for two wrong buttons). It uses the module's feedback, not the solver's information;
* the random solver's exact expectation of the paper's Random row under the protocol's limits, which the
  instances do not change (every instance has one right diagnosis and one right treatment).

docs/PUZZLES.md quotes the output, and tests/puzzles/test_docs_figures.py runs this command to check it.
"""

from __future__ import annotations

import argparse
import functools
import itertools
from collections import Counter
from collections.abc import Sequence

from simlab.worlds.puzzles.family import task_for
from simlab.worlds.puzzles.telehealth import ACTIONS, DISEASES, TREATMENTS, TelehealthPuzzle
from simlab.worlds.puzzles.world import PuzzlesSettings

Answer = tuple[str, str]
"""An instance's right answer: the diagnosis's code and the treatment's action."""


def answers(n: int, seed: int = 0) -> list[Answer]:
    """The right answer of each of the first ``n`` Telehealth instances of ``seed`` (synthetic stand-ins)."""
    out = []
    for k in range(n):
        puzzle = TelehealthPuzzle(task_for("telehealth", k, seed, {})["instance"], 0)
        out.append((puzzle.code, puzzle.cure))
    return out


def best_constant(found: Sequence[Answer]) -> tuple[Answer, float]:
    """The answer right most often and the share of instances it solves (ties: the first in sorted order)."""
    counts = Counter(found)
    best = max(sorted(counts), key=lambda answer: counts[answer])
    return best, counts[best] / len(found)


def treatment_order(found: Sequence[Answer], code: str) -> list[str]:
    """Disease ``code``'s treatments, the most often right first (ties in the buttons' order)."""
    counts = Counter(cure for diagnosis, cure in found if diagnosis == code)
    return sorted(TREATMENTS, key=lambda cure: -counts[cure])


def best_trial_order(found: Sequence[Answer], mistakes: int) -> tuple[tuple[str, ...], float]:
    """The order of diagnoses that, each tried until one is right and then followed by its treatments in
    :func:`treatment_order`, solves the most instances before the ``mistakes``-th strike, and that share."""
    treatments = {code: treatment_order(found, code) for code in DISEASES}

    def solved(order: tuple[str, ...]) -> int:
        return sum(order.index(code) + treatments[code].index(cure) < mistakes for code, cure in found)

    best = max(itertools.permutations(sorted(DISEASES)), key=solved)  # the first best in sorted order
    return best, solved(best) / len(found)


def random_expectation(turns: int, mistakes: int) -> dict[str, float]:
    """The random solver's exact expected SR, PSR, mistakes and ACL (``acl_before_solving``): one of the nine
    buttons drawn uniformly each turn; before the diagnosis one is right and the rest are strikes; after it,
    one treatment solves, the diagnosis again does nothing and the rest are strikes."""
    buttons = len(ACTIONS)

    @functools.cache
    def expect(turn: int, diagnosed: bool, strikes: int) -> tuple[float, float, float, float]:
        if turn > turns:  # ran out of turns: the limit is the conversation's length
            return 0.0, 50.0 if diagnosed else 0.0, float(strikes), float(turns)
        ended = float(turn - 1)  # the turn that ends the episode is not counted
        if strikes + 1 == mistakes:
            wrong = (0.0, 50.0 if diagnosed else 0.0, float(mistakes), ended)
        else:
            wrong = expect(turn + 1, diagnosed, strikes + 1)
        if not diagnosed:
            outcomes = [(1, expect(turn + 1, True, strikes)), (buttons - 1, wrong)]
        else:
            solved = (100.0, 100.0, float(strikes), ended)
            outcomes = [(1, solved), (1, expect(turn + 1, True, strikes)), (buttons - 2, wrong)]
        means = [sum(k * value[m] for k, value in outcomes) / buttons for m in range(4)]
        return means[0], means[1], means[2], means[3]

    return dict(zip(("sr", "psr", "mistakes", "acl"), expect(1, False, 0), strict=True))


def percent(share: float) -> str:
    """A share as the report prints it."""
    return f"{100 * share:.1f}%"


def report(n: int, seed: int) -> list[str]:
    """The lines ``python -m simlab.worlds.puzzles.chance`` prints."""
    found = answers(n, seed)
    limits = PuzzlesSettings()
    codes = Counter(code for code, _ in found)
    lines = [f"Telehealth: the first {n} instances of seed {seed}", "diagnoses, then treatments given each:"]
    for code in sorted(DISEASES, key=DISEASES.__getitem__):
        given = Counter(cure for diagnosis, cure in found if diagnosis == code)
        cures = ", ".join(f"{cure} {percent(given[cure] / codes[code])}" for cure in TREATMENTS if given[cure])
        lines.append(f"  {DISEASES[code]} {percent(codes[code] / n)}: {cures}")
    (code, cure), share = best_constant(found)
    guess = percent(1 / (len(DISEASES) * len(TREATMENTS)))
    lines.append(
        f"best constant answer: Diagnose {DISEASES[code]}, then {cure}: {percent(share)} (a uniform guess: {guess})"
    )
    order, share = best_trial_order(found, limits.mistakes)
    lines.append(f"best trial-and-error order, strikes the only feedback: {', '.join(order)}: {percent(share)}")
    row = random_expectation(limits.turns, limits.mistakes)
    figures = " / ".join(f"{row[m]:.2f}" for m in ("sr", "psr", "mistakes", "acl"))
    lines.append(f"random solver, exact expectation ({limits.turns} turns, {limits.mistakes} strikes): {figures}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: print :func:`report`."""
    parser = argparse.ArgumentParser(
        prog="python -m simlab.worlds.puzzles.chance", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument("--n", type=int, default=1000, help="instances (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="generation seed (default 0)")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("--n must be at least 1")
    print("\n".join(report(args.n, args.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
