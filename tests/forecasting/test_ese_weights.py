"""sample_weight of ESERegressor and PerSystemRegressor: frequency weights (repeat / drop)."""

import math

import numpy as np
import pytest
import sklearn
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, TimeSeriesSplit
from sklearn.neighbors import KNeighborsRegressor

from sklearn_icml26.datasets import make_interacting_systems
from sklearn_icml26.forecasting import ESERegressor, PerSystemRegressor, sliding_window
from sklearn_icml26.utils._weights import newest_rows_holding, weighted_rank_value


@pytest.fixture(scope="module")
def panel():
    Y, _, _ = make_interacting_systems(6, 210, random_state=0)
    X, y = sliding_window(Y, n_lags=10)
    N = len(X)
    rng = np.random.default_rng(0)
    # older half: weights 0..3; newest half: 0 or 2, so that the validation and calibration
    # windows (newest fractions of the total weight) end between whole repeated windows
    w = np.concatenate([rng.integers(0, 4, N - N // 2), 2 * rng.integers(0, 2, N // 2)])
    total = int(w.sum())
    n_cal = math.ceil(0.2 * total)
    for count in (n_cal, math.ceil(0.25 * total), math.ceil(0.25 * (total - n_cal))):
        assert count % 2 == 0  # the boundaries of the repeated panel fall between pairs
    return X, y, w


def test_integer_weights_equal_repeated_windows(panel):
    X, y, w = panel
    weighted = ESERegressor().fit(X, y, sample_weight=w)
    repeated = ESERegressor().fit(np.repeat(X, w, axis=0), np.repeat(y, w, axis=0))
    # every weighted step: the AIC, the validation scores, the aggregate model, the conformal
    # quantiles of the weighted calibration windows
    np.testing.assert_allclose(weighted.aic_, repeated.aic_, rtol=1e-10)
    np.testing.assert_allclose(weighted.selection_scores_, repeated.selection_scores_,
                               rtol=1e-10)
    assert weighted.aggregate_lags_ == repeated.aggregate_lags_
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), rtol=1e-10)
    for a, b in zip(weighted.predict_interval(X, coverage=0.8),
                    repeated.predict_interval(X, coverage=0.8), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10)
    # and the weights matter: the unweighted fit differs
    plain = ESERegressor().fit(X, y)
    assert np.abs(plain.selection_scores_ - weighted.selection_scores_).max() > 1e-6
    assert np.abs(plain.predict_interval(X, coverage=0.8)[1]
                  - weighted.predict_interval(X, coverage=0.8)[1]).max() > 1e-6


def test_zero_weight_equals_dropping_and_unit_weights_equal_none(panel):
    X, y, _ = panel
    w = np.ones(len(X))
    w[[3, 50, 120, -2]] = 0
    keep = w > 0
    dropped = ESERegressor().fit(X[keep], y[keep])
    weighted = ESERegressor().fit(X, y, sample_weight=w)
    np.testing.assert_allclose(weighted.predict(X), dropped.predict(X), rtol=1e-12)
    np.testing.assert_allclose(weighted.predict_interval(X)[0], dropped.predict_interval(X)[0],
                               rtol=1e-12)
    ones = ESERegressor().fit(X, y, sample_weight=np.ones(len(X)))
    plain = ESERegressor().fit(X, y)
    np.testing.assert_allclose(ones.predict_interval(X)[1], plain.predict_interval(X)[1],
                               rtol=1e-12)
    # scaling all weights changes nothing but the AIC's N (frequency weights)
    assert ones.damping_ == plain.damping_ and ones.share_trend_ == plain.share_trend_


def test_weight_errors(panel):
    X, y, _ = panel
    with pytest.raises(ValueError, match="zero"):
        ESERegressor().fit(X, y, sample_weight=np.zeros(len(X)))
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        ESERegressor().fit(X, y, sample_weight=-np.ones(len(X)))
    with pytest.raises(ValueError, match=r"sample_weight.shape"):
        ESERegressor().fit(X, y, sample_weight=np.ones(len(X) + 1))
    one = np.zeros(len(X))
    one[5] = 1
    with pytest.raises(ValueError, match="leaves 1 window with a positive weight"):
        ESERegressor().fit(X, y, sample_weight=one)
    with pytest.raises(TypeError, match="KNeighborsRegressor does not accept sample_weight"):
        ESERegressor(KNeighborsRegressor()).fit(X, y, sample_weight=np.ones(len(X)))
    # without weights, such an estimator still works
    ESERegressor(KNeighborsRegressor(), calibration=None).fit(X, y)


def test_per_system_weights_equal_repeated_windows(panel):
    X, y, w = panel
    weighted = PerSystemRegressor(Ridge(alpha=1.0), n_lags=4).fit(X, y, sample_weight=w)
    repeated = PerSystemRegressor(Ridge(alpha=1.0), n_lags=4).fit(np.repeat(X, w, axis=0),
                                                                  np.repeat(y, w, axis=0))
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), rtol=1e-9)
    plain = PerSystemRegressor(Ridge(alpha=1.0), n_lags=4).fit(X, y)
    assert np.abs(plain.predict(X) - weighted.predict(X)).max() > 1e-6


def test_sample_weight_is_routed_through_a_search(panel):
    X, y, w = panel
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            ESERegressor(DummyRegressor(), calibration=None).set_fit_request(sample_weight=True)
            .set_score_request(sample_weight=False),
            {"damping": [0.25, 0.5]}, cv=TimeSeriesSplit(3))
        search.fit(X, y, sample_weight=w)
    # the refit saw the weights: DummyRegressor's constant is the weighted mean growth ratio
    A = X.reshape(len(X), 6, 10).sum(axis=1)
    ratio = y.sum(axis=1) / A[:, -1]
    np.testing.assert_allclose(search.best_estimator_.estimator_.constant_.ravel(),
                               np.average(ratio, weights=w), rtol=1e-12)


def test_weighted_helpers():
    w = np.ones(10)
    assert newest_rows_holding(w, 0.25) == 3  # ceil(2.5)
    assert newest_rows_holding(np.r_[np.ones(8), 3.0, 1.0], 0.25) == 2  # 4 of 13 weight
    scores = np.arange(10.0)[:, None]
    assert weighted_rank_value(scores, w, 7.2)[0] == 7.0  # ceil(7.2)-th smallest
    assert np.isinf(weighted_rank_value(scores, w, 10.5)[0])
    # weight 3 on the smallest score counts it three times
    assert weighted_rank_value(scores, np.r_[3.0, np.ones(9)], 4)[0] == 1.0
