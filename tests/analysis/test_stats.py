"""Tests for simlab.analysis.stats: mean, SEM and the seeded percentile bootstrap CI."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simlab.analysis import stats
from simlab.analysis.stats import Summary, mean_sem_ci


def test_mean_and_sem_match_hand_computed_values() -> None:
    s = mean_sem_ci([1.0, 2.0, 3.0, 4.0])
    # mean 2.5; sample variance ((1.5² + 0.5²) * 2) / 3 = 5/3; SEM = sqrt(5/3) / sqrt(4)
    assert s.n == 4
    assert s.mean == pytest.approx(2.5)
    assert s.sem == pytest.approx(math.sqrt(5 / 3) / 2)


def test_sem_of_two_values() -> None:
    s = mean_sem_ci([0.0, 1.0])
    # sample std of {0, 1} is sqrt(0.5); SEM = sqrt(0.5) / sqrt(2) = 0.5
    assert s.mean == pytest.approx(0.5)
    assert s.sem == pytest.approx(0.5)


def test_empty_sample_gives_all_none() -> None:
    assert mean_sem_ci([]) == Summary(0, None, None, None, None)


def test_single_value_has_zero_sem_and_point_interval() -> None:
    assert mean_sem_ci([0.7]) == Summary(1, 0.7, 0.0, 0.7, 0.7)


def test_constant_sample_has_zero_width_ci() -> None:
    s = mean_sem_ci([0.1] * 25)
    assert s.sem == 0.0
    assert s.ci_low == s.ci_high == s.mean == 0.1


def test_none_and_nan_are_ignored_and_not_counted() -> None:
    s = mean_sem_ci([1.0, None, 2.0, float("nan"), 3.0])
    assert s == mean_sem_ci([1.0, 2.0, 3.0])
    assert s.n == 3
    assert mean_sem_ci([None, float("nan")]).n == 0


def test_ci_contains_the_mean() -> None:
    values = np.random.default_rng(7).normal(0.5, 0.2, size=40)
    s = mean_sem_ci(list(values))
    assert s.ci_low < s.mean < s.ci_high


def test_ci_narrows_with_more_data() -> None:
    rng = np.random.default_rng(3)
    small = mean_sem_ci(list(rng.uniform(size=10)))
    large = mean_sem_ci(list(rng.uniform(size=1000)))
    assert large.ci_high - large.ci_low < small.ci_high - small.ci_low


def test_same_seed_is_identical_and_another_seed_differs() -> None:
    values = [0.1, 0.5, 0.2, 0.9, 0.4, 0.3, 0.8]
    assert mean_sem_ci(values, seed=1) == mean_sem_ci(values, seed=1)
    a, b = mean_sem_ci(values, seed=1), mean_sem_ci(values, seed=2)
    assert (a.ci_low, a.ci_high) != (b.ci_low, b.ci_high)
    assert (a.mean, a.sem) == (b.mean, b.sem)


def test_higher_level_gives_wider_interval() -> None:
    values = list(np.random.default_rng(5).normal(size=30))
    narrow, wide = mean_sem_ci(values, level=0.5), mean_sem_ci(values, level=0.99)
    assert wide.ci_low < narrow.ci_low and narrow.ci_high < wide.ci_high


@pytest.mark.parametrize("kwargs", [{"level": 0.0}, {"level": 1.0}, {"level": 1.5}, {"resamples": 0}])
def test_invalid_arguments_raise(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        mean_sem_ci([1.0, 2.0], **kwargs)


def test_to_json_keys_and_non_finite_values() -> None:
    assert mean_sem_ci([1.0, 3.0]).to_json().keys() == {"mean", "sem", "ci_low", "ci_high", "n"}
    assert Summary(2, math.inf, math.nan, 0.0, 1.0).to_json() == {
        "mean": None,
        "sem": None,
        "ci_low": 0.0,
        "ci_high": 1.0,
        "n": 2,
    }


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(min_value=-1e6, max_value=1e6), min_size=1, max_size=50))
def test_ci_lies_within_the_data_range(values: list[float]) -> None:
    s = mean_sem_ci(values, resamples=200)
    lo, hi = min(values), max(values)
    tol = 1e-9 * max(1.0, abs(lo), abs(hi))
    assert lo - tol <= s.ci_low <= s.ci_high <= hi + tol
    assert lo - tol <= s.mean <= hi + tol
    assert s.sem >= 0.0


def _one_matrix_ci(x: np.ndarray, resamples: int, seed: int, level: float) -> tuple[float, float]:
    """The bootstrap as first written: the whole (resamples, n) index matrix at once, for one array."""
    idx = np.random.default_rng(seed).integers(0, x.size, size=(resamples, x.size))
    means = x[idx].mean(axis=1)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


@pytest.mark.parametrize("n", [2, 3, 17, 1000, 5000])
def test_blocked_shared_bootstrap_gives_exactly_the_one_matrix_intervals(n, monkeypatch):
    monkeypatch.setattr(stats, "BOOTSTRAP_BLOCK", 3 * n + 1)  # several blocks, the last one short
    rng = np.random.default_rng(n)
    xs = [rng.random(n), rng.normal(size=n) * 1e6, rng.integers(0, 3, n).astype(float)]
    for resamples, seed, level in ((1000, 0, 0.95), (7, 3, 0.5), (1, 1, 0.9)):
        got = stats.bootstrap_cis(xs, resamples, seed, level)
        assert got == [_one_matrix_ci(x, resamples, seed, level) for x in xs]


def test_mean_sem_cis_is_mean_sem_ci_of_each_column():
    rng = np.random.default_rng(4)
    columns = [
        [None if v < 0.2 else float(v) for v in rng.random(300)],
        list(rng.random(300)),
        [float("nan"), 1.0, 2.0],
        [5.0] * 10,
        [None],
        [],
        [3.0],
    ]
    columns.append(list(columns[1]))  # a column equal to another (a metric copying the score): drawn once
    many = stats.mean_sem_cis(columns, 200, 9, 0.9)
    one_by_one = []
    for values in columns:
        x = stats.present_values(values)
        if x.size < 2 or np.all(x == x[0]):
            one_by_one.append(stats.mean_sem_ci(values, 200, 9, 0.9))
            continue
        low, high = _one_matrix_ci(x, 200, 9, 0.9)
        sem = float(np.std(x, ddof=1) / np.sqrt(x.size))
        one_by_one.append(stats.Summary(x.size, float(np.mean(x)), sem, low, high))
    assert many == one_by_one
    assert many[3] == stats.Summary(10, 5.0, 0.0, 5.0, 5.0) and many[5].n == 0
