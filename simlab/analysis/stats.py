"""Summary statistics for episode metrics: mean, standard error and a seeded percentile bootstrap CI.

Missing values (``None`` or NaN) are left out before anything is computed, so ``n`` counts only the
values that exist. The bootstrap draws every resample at once from ``numpy.random.default_rng(seed)``:
the same values, seed, resample count and level always give the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Summary:
    """The mean of ``n`` values with its standard error and a bootstrap confidence interval.

    Every statistic is ``None`` when ``n == 0``. With ``n == 1`` the SEM is 0.0 and the interval is
    ``(mean, mean)``: one value gives no spread to estimate, which the ``n`` column makes visible.
    """

    n: int
    mean: float | None
    sem: float | None
    ci_low: float | None
    ci_high: float | None

    def to_json(self) -> dict[str, Any]:
        """A JSON-safe dict (non-finite numbers become ``None``) with keys mean, sem, ci_low, ci_high, n."""
        return {
            "mean": finite_or_none(self.mean),
            "sem": finite_or_none(self.sem),
            "ci_low": finite_or_none(self.ci_low),
            "ci_high": finite_or_none(self.ci_high),
            "n": self.n,
        }


def finite_or_none(value: float | None) -> float | None:
    """``value`` as a float, or ``None`` when it is missing, NaN or infinite (strict JSON has no such numbers)."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def present_values(values: Sequence[float | None]) -> np.ndarray:
    """The values that exist, as a float array: ``None`` and NaN are dropped, order is kept."""
    kept = [float(v) for v in values if v is not None]
    arr = np.asarray(kept, dtype=float)
    present: np.ndarray = arr[~np.isnan(arr)]
    return present


def mean_sem_ci(values: Sequence[float | None], resamples: int = 1000, seed: int = 0, level: float = 0.95) -> Summary:
    """Mean, SEM (sample std with ddof=1 over sqrt(n)) and a percentile bootstrap CI at ``level``.

    ``None`` and NaN values are ignored and not counted in ``n``. Raises ValueError for a ``level``
    outside (0, 1) or fewer than one resample.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be between 0 and 1 (exclusive), got {level!r}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples!r}")
    x = present_values(values)
    n = int(x.size)
    if n == 0:
        return Summary(0, None, None, None, None)
    if n == 1 or np.all(x == x[0]):  # no spread: skip the bootstrap so the interval is exactly zero-width
        first = float(x[0])
        return Summary(n, first, 0.0, first, first)
    mean = float(np.mean(x))
    sem = float(np.std(x, ddof=1) / math.sqrt(n))
    low, high = bootstrap_ci(x, resamples, seed, level)
    return Summary(n, mean, sem, low, high)


def bootstrap_ci(x: np.ndarray, resamples: int, seed: int, level: float) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``x``: one (resamples, n) index matrix, no Python loop."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(resamples, x.size))
    means = x[idx].mean(axis=1)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)
