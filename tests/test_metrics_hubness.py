"""Hubness measures: a hand-computed k-occurrence, ties, thresholds and errors."""

import numpy as np
import pytest
from scipy import stats

from sklearn_icml26.metrics import hubness_measures, k_occurrence

# 3 queries, 5 indexed points, k = 2: every query has point 0 and one other point
# -> N_k = (3, 1, 1, 1, 0); mean 6 / 5 = 1.2
D = np.array([[0.1, 0.2, 0.9, 0.9, 0.9],
              [0.1, 0.9, 0.2, 0.9, 0.9],
              [0.1, 0.9, 0.9, 0.2, 0.9]])


def test_hand_computed_measures():
    m = hubness_measures(D, k=2)
    np.testing.assert_array_equal(m["k_occurrence"], [3, 1, 1, 1, 0])
    dev = np.array([1.8, -0.2, -0.2, -0.2, -1.2])
    skew = np.mean(dev**3) / np.mean(dev**2) ** 1.5  # 0.816 / 0.96^1.5
    assert m["k_skewness"] == pytest.approx(skew, abs=1e-12)
    assert m["k_skewness"] == pytest.approx(0.867528, abs=1e-6)
    assert m["hub_occurrence"] == pytest.approx(3 / 6)  # hubs: N_k >= 2 * 1.2
    assert m["antihub_occurrence"] == pytest.approx(1 / 5)
    assert m["robinhood"] == pytest.approx(0.5 * 3.6 / 6)
    assert m["gini"] == pytest.approx(24 / (2 * 5 * 6))
    # scikit-hubness' absolute threshold h * k = 4: no hub at all here
    assert hubness_measures(D, k=2, relative=False)["hub_occurrence"] == 0.0


def test_ties_break_by_index_and_self_pairs_are_excluded():
    tied = np.ones((4, 4))
    np.fill_diagonal(tied, np.inf)
    n_k = k_occurrence(tied, k=1)
    np.testing.assert_array_equal(n_k, [3, 1, 0, 0])  # lower index wins every tie
    m = hubness_measures(tied, k=1)
    assert m["k_skewness"] == pytest.approx(stats.skew([3, 1, 0, 0], bias=True))


def test_flat_occurrence_has_zero_skew_and_gini():
    flat = np.array([[0.1, 0.5], [0.5, 0.1]])
    m = hubness_measures(flat, k=1)
    assert m["k_skewness"] == 0.0 and m["gini"] == 0.0 and m["robinhood"] == 0.0


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="dissimilarity must be a 2-D array"):
        hubness_measures(np.ones(3), k=1)
    with pytest.raises(ValueError, match="k=6 exceeds the number of indexed points"):
        k_occurrence(D, k=6)
    with pytest.raises(ValueError, match="contains NaN"):
        k_occurrence(np.array([[np.nan, 1.0]]), k=1)
    with pytest.raises(ValueError, match="'k' parameter"):
        k_occurrence(D, k=0)
