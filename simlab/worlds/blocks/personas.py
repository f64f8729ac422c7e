"""Which personality archetype each director plays: SimLab's stable hash, or the CRAFT reference's draw.

The paper (appendix B, table 3) assigns archetypes "deterministically per (structure_index, run,
director_id)". The reference code (``agents/director_agent.py``) seeds ``random.Random`` with CPython's
``hash((structure_index, director_number, run)) % 2**32`` and picks one of five archetypes. Python's
``hash`` of a tuple of small integers is the same on every CPython since 3.8 (it does not depend on
``PYTHONHASHSEED``), but SimLab never relies on ``hash()``: :func:`cpython_tuple_hash` is that function
written out, so the draw is the reference's on any interpreter. With run 3 over the 20 evaluation
structures it gives table 3's counts exactly (D1: 5 assertive, 4 cautious, 1 observant, 3 skeptical,
7 synthesizer; tests/blocks/test_personas.py checks all three directors).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

REFERENCE_ARCHETYPES = ("assertive", "cautious", "observant", "skeptical", "synthesizer")
"""The reference's archetype list, in the order its draw indexes."""
PAPER_RUN = 3
"""The reference run whose assignment table 3 counts (its results folders are named ``..._run3``)."""

_MASK = 2**64 - 1
_PRIME_1 = 11400714785074694791
_PRIME_2 = 14029467366897019727
_PRIME_5 = 2870177450012600261
_MODULUS = 2**61 - 1  # CPython's modulus for hashing integers


def cpython_tuple_hash(items: tuple[int, ...]) -> int:
    """``hash(items)`` as 64-bit CPython 3.8+ computes it for a tuple of integers (xxHash-style mixing)."""
    acc = _PRIME_5
    for item in items:
        lane = _int_hash(item) & _MASK
        acc = (acc + lane * _PRIME_2) & _MASK
        acc = ((acc << 31) | (acc >> 33)) & _MASK
        acc = (acc * _PRIME_1) & _MASK
    acc = (acc + (len(items) ^ (_PRIME_5 ^ 3527539))) & _MASK
    if acc == _MASK:
        return 1546275796
    return acc - 2**64 if acc >= 2**63 else acc


def _int_hash(value: int) -> int:
    """CPython's ``hash(int)``: the value modulo 2**61 - 1, keeping the sign, and -1 becomes -2."""
    out = abs(value) % _MODULUS
    out = -out if value < 0 else out
    return -2 if out == -1 else out


def reference_archetype(structure_index: int, director: str, run: int = PAPER_RUN) -> str:
    """The archetype the CRAFT reference gives ``director`` (D1-D3) on the structure at ``structure_index``
    of its dataset in run ``run``."""
    number = {"D1": 0, "D2": 1, "D3": 2}.get(director, 0)
    seed = cpython_tuple_hash((structure_index, number, run)) % 2**32
    return random.Random(seed).choice(REFERENCE_ARCHETYPES)


def structure_index(task: Mapping[str, Any]) -> int:
    """The structure's place in its CRAFT dataset: ``craft_index`` when the task came from a CRAFT file (the
    loader records it), else the number in its id (``structure_007`` -> 7; its last 18 digits when longer), else 0."""
    index = task.get("craft_index")
    if isinstance(index, int) and not isinstance(index, bool) and index >= 0:
        return index
    digits = re.findall(r"[0-9]+", str(task.get("id", "")))
    return int(digits[-1][-18:]) if digits else 0  # its last 18 digits: int() refuses thousands
