"""Host tests of bench/lib/stats.py: known values and edge cases."""
import math

import pytest

from bench.lib import stats


def test_median_odd_even():
    assert stats.median([3, 1, 2]) == 2
    assert stats.median([4, 1, 3, 2]) == 2.5


def test_empty_and_missing_values_give_none():
    assert stats.median([]) is None
    assert stats.mean([None, float("nan")]) is None
    s = stats.summarize([])
    assert s["n"] == 0 and s["median"] is None and s["min"] is None
    assert s["ci95"] is None


def test_single_value_has_no_interval():
    s = stats.summarize([7.5])
    assert s == {"n": 1, "median": 7.5, "min": 7.5, "max": 7.5,
                 "mean": 7.5, "sd": 0.0, "ci95": None}


def test_sd_and_ci_match_hand_computation():
    v = [2, 4, 4, 4, 5, 5, 7, 9]          # mean 5, sample sd sqrt(32/7)
    assert stats.mean(v) == 5
    assert stats.sd(v) == pytest.approx(math.sqrt(32 / 7))
    # t(0.975, 7) = 2.365
    assert stats.ci95(v) == pytest.approx(2.365 * math.sqrt(32 / 7) /
                                          math.sqrt(8))


def test_ci_uses_normal_quantile_for_large_samples():
    v = list(range(100))
    assert stats.ci95(v) == pytest.approx(1.96 * stats.sd(v) / 10)


def test_none_is_ignored_not_zero():
    assert stats.summarize([1, None, 3])["mean"] == 2
    assert stats.summarize([1, None, 3])["n"] == 2


def test_percentile_interpolates_and_rejects_bad_p():
    assert stats.percentile([1, 2, 3, 4, 5], 50) == 3
    assert stats.percentile([1, 2, 3, 4], 90) == pytest.approx(3.7)
    assert stats.percentile([5], 99) == 5
    with pytest.raises(ValueError):
        stats.percentile([1, 2], 101)


def test_t_quantiles():
    assert stats.t95(1) == 12.706
    assert stats.t95(30) == 2.042
    assert stats.t95(31) == 1.96
    assert stats.t95(0) is None


def test_mann_whitney_exact_for_five_against_five():
    # every value of A below every value of B: the one split of 252
    u, p = stats.mann_whitney_less([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert u == 25 and p == pytest.approx(1 / 252)
    u, p = stats.mann_whitney_less([6, 7, 8, 9, 10], [1, 2, 3, 4, 5])
    assert u == 0 and p == 1.0
    # one pair out of order: U 24, two splits of 252 reach it
    u, p = stats.mann_whitney_less([1, 2, 3, 4, 6], [5, 7, 8, 9, 10])
    assert u == 24 and p == pytest.approx(2 / 252)
    # ties count one half, and identical samples are no evidence
    assert stats.mann_whitney_less([1, 1, 1], [1, 1, 1]) == (4.5, 1.0)
    assert stats.mann_whitney_less([], [1]) == (None, None)
    assert stats.mann_whitney_less([None, 1], [2])[0] == 1.0


def test_mann_whitney_normal_approximation_agrees_with_exact():
    a = [0.1 * i for i in range(9)]
    b = [0.1 * i + 0.35 for i in range(9)]
    exact = stats.mann_whitney_less(a, b)
    old = stats._EXACT_SPLITS
    try:
        stats._EXACT_SPLITS = 0
        approx = stats.mann_whitney_less(a, b)
    finally:
        stats._EXACT_SPLITS = old
    assert exact[0] == approx[0]
    assert approx[1] == pytest.approx(exact[1], abs=0.01)
    assert 0.001 < exact[1] < 0.1
