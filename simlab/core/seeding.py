"""Stable seeding: every random choice flows from the run seed and named parts through a stable hash.

Python's ``hash()`` changes between processes (PYTHONHASHSEED) and set order follows it, so neither may
decide anything random here. :func:`stable_seed` hashes a canonical JSON form of its parts with BLAKE2b;
:func:`rng` turns that into a :class:`random.Random`, whose Mersenne Twister stream and ``choice``/``shuffle``
algorithms are the same on every platform for a given integer seed.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any


def stable_seed(*parts: Any) -> int:
    """A 63-bit integer determined only by ``parts`` (JSON-serialisable values: ints, strings, lists...)."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def rng(*parts: Any) -> random.Random:
    """A private random stream for one purpose, e.g. ``rng(run_seed, "episode", episode_id, "speakers")``."""
    return random.Random(stable_seed(*parts))
