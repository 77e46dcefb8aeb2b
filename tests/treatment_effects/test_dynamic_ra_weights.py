"""sample_weight of LongitudinalRegressionAdjuster and LinearGaussianTransition.

Frequency weights: an integer weight counts a unit that many times, 0 leaves it out. With a
splitter that keeps a unit's copies in one fold and ``q_method="regress"`` (no Monte Carlo
draw) a weighted fit equals the fit of the repeated units to rounding.
"""

import numpy as np
import pytest
import sklearn
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import PredefinedSplit, cross_validate
from sklearn.neighbors import KNeighborsRegressor
from threadpoolctl import threadpool_limits

from sklearn_icml26.datasets import make_longitudinal_rct
from sklearn_icml26.treatment_effects import (
    LinearGaussianTransition,
    LongitudinalRegressionAdjuster,
)

SUMMARY = ["estimate", "std_err", "ci_lower", "ci_upper", "dim", "dim_se", "cuped",
           "cuped_se", "lin", "lin_se"]


@pytest.fixture(autouse=True)
def _one_thread():
    import torch

    torch.set_num_threads(1)
    with threadpool_limits(1):
        yield


@pytest.fixture(scope="module")
def trial():
    X, y, W, truth = make_longitudinal_rct(240, 3, 2, assign="sequential", dynamics="linear",
                                           outcome="linear", random_state=0)
    w = np.random.default_rng(1).integers(0, 3, len(X))
    fold = np.arange(len(X)) % 3
    return X, y, W, w, fold


def _fit(X, y, W, fold, sample_weight=None, q_method="regress", **fit_params):
    est = LongitudinalRegressionAdjuster(n_time_varying=2, q_method=q_method,
                                         cv=PredefinedSplit(fold), n_mc=16, n_bootstrap=100,
                                         random_state=0)
    return est.fit(X, y, treatment=W, sample_weight=sample_weight, **fit_params)


def _repeat(w, *arrays):
    return [np.repeat(a, w, axis=0) for a in arrays]


def test_integer_weights_equal_repeated_units(trial):
    X, y, W, w, fold = trial
    weighted = _fit(X, y, W, fold, w)
    repeated = _fit(*_repeat(w, X, y, W, fold))
    for name in ("means_", "means_se_", "effect_", "effect_se_", "gformula_means_",
                 "path_probabilities_", "effect_projection_coef_", "effect_projection_cov_"):
        np.testing.assert_allclose(getattr(weighted, name), getattr(repeated, name),
                                   rtol=1e-9, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(weighted.summary()[SUMMARY].to_numpy(),
                               repeated.summary()[SUMMARY].to_numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), rtol=1e-9)
    # the weights matter: the unweighted fit differs in the estimate and every anchor
    plain = _fit(X, y, W, fold)
    assert np.abs(plain.effect_ - weighted.effect_).min() > 1e-4
    assert np.abs(plain.summary()["lin_se"] - weighted.summary()["lin_se"]).min() > 1e-5


def test_zero_weight_equals_dropping_and_unit_weights_equal_none(trial):
    X, y, W, _, fold = trial
    w = np.ones(len(X))
    w[::7] = 0
    keep = w > 0
    weighted = _fit(X, y, W, fold, w)
    dropped = _fit(X[keep], y[keep], W[keep], fold[keep])
    np.testing.assert_allclose(weighted.effect_, dropped.effect_, rtol=1e-9)
    np.testing.assert_allclose(weighted.effect_se_, dropped.effect_se_, rtol=1e-9)
    np.testing.assert_allclose(weighted.summary()[SUMMARY].to_numpy(),
                               dropped.summary()[SUMMARY].to_numpy(), rtol=1e-9, atol=1e-12)
    for q_method in ("regress", "simulate"):
        ones = _fit(X, y, W, fold, np.ones(len(X)), q_method=q_method)
        plain = _fit(X, y, W, fold, q_method=q_method)
        np.testing.assert_allclose(ones.effect_, plain.effect_, rtol=1e-12)
        np.testing.assert_allclose(ones.effect_se_, plain.effect_se_, rtol=1e-12)
        np.testing.assert_allclose(ones.conf_int(kind="uniform"),
                                   plain.conf_int(kind="uniform"), rtol=1e-12)


def test_simulate_clusters_and_dropout_agree_with_repeated_units(trial):
    X, y, W, w, fold = trial
    y = y.copy()
    y[:30, 2] = np.nan  # monotone dropout before the last visit: censoring models, IPCW
    y[:12, 1:] = np.nan
    groups = np.arange(len(X)) // 4
    weighted = _fit(X, y, W, fold, w, q_method="simulate", groups=groups)
    repeated = _fit(*_repeat(w, X, y, W, fold), q_method="simulate",
                    groups=np.repeat(groups, w))
    # the particles differ (drawn per unit): agreement up to Monte Carlo noise
    assert np.all(np.abs(weighted.effect_ - repeated.effect_) < 0.5 * repeated.effect_se_)
    np.testing.assert_allclose(weighted.effect_se_, repeated.effect_se_, rtol=0.1)
    # no particle enters the anchors or the path probabilities: exact
    base = ["dim", "dim_se", "cuped", "cuped_se", "lin", "lin_se"]
    np.testing.assert_allclose(weighted.baselines_[base].to_numpy(),
                               repeated.baselines_[base].to_numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(weighted.path_probabilities_, repeated.path_probabilities_,
                               rtol=1e-12)


def test_single_arm_weighted_mean(trial):
    X, y, _, w, _ = trial
    est = LongitudinalRegressionAdjuster(n_time_varying=2, cv=3, random_state=0)
    est.fit(X, y, sample_weight=w)
    expected = np.average(y, axis=0, weights=w)
    np.testing.assert_allclose(est.means_[0], expected, rtol=1e-10)
    np.testing.assert_allclose(est.baselines_["mean"], expected, rtol=1e-10)
    se = np.sqrt((w[:, None] * (y - expected) ** 2).sum(axis=0)) / w.sum()
    np.testing.assert_allclose(est.means_se_[0], se, rtol=1e-10)


def test_weight_errors_and_routing(trial):
    X, y, W, _, fold = trial
    with pytest.raises(ValueError, match="zero"):
        _fit(X, y, W, fold, np.zeros(len(X)))
    with pytest.raises(ValueError, match=r"sample_weight.shape"):
        _fit(X, y, W, fold, np.ones(len(X) - 1))
    with pytest.raises(TypeError, match="outcome_model=KNeighborsRegressor does not accept"):
        LongitudinalRegressionAdjuster(n_time_varying=2, outcome_model=KNeighborsRegressor(),
                                       cv=2).fit(X, y, treatment=W, sample_weight=np.ones(len(X)))
    w = np.random.default_rng(2).integers(1, 4, len(X)).astype(float)
    params = dict(n_time_varying=2, cv=2, q_method="regress", random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        est = LongitudinalRegressionAdjuster(**params)
        est.set_fit_request(sample_weight=True).set_score_request(sample_weight=False)
        res = cross_validate(est, X, y, cv=2, params={"treatment": W, "sample_weight": w},
                             return_estimator=True)
    train = np.arange(len(X)) >= len(X) // 2  # KFold(2): the first fit trains on the 2nd half
    manual = LongitudinalRegressionAdjuster(**params).fit(X[train], y[train],
                                                          treatment=W[train],
                                                          sample_weight=w[train])
    np.testing.assert_allclose(res["estimator"][0].effect_, manual.effect_, rtol=1e-12)
    unweighted = LongitudinalRegressionAdjuster(**params).fit(X[train], y[train],
                                                              treatment=W[train])
    assert np.abs(unweighted.effect_ - manual.effect_).max() > 1e-4


def test_transition_weights_equal_repeated_rows():
    rng = np.random.default_rng(0)
    H = rng.normal(size=(60, 3))
    S = H @ rng.normal(size=(3, 2)) + rng.normal(size=(60, 2))
    w = rng.integers(0, 4, 60)
    weighted = LinearGaussianTransition().fit(H, S, sample_weight=w)
    repeated = LinearGaussianTransition().fit(np.repeat(H, w, 0), np.repeat(S, w, 0))
    np.testing.assert_allclose(weighted.covariance_, repeated.covariance_, rtol=1e-10)
    np.testing.assert_allclose(weighted.predict(H), repeated.predict(H), rtol=1e-10)
    plain = LinearGaussianTransition(mean_model=LinearRegression()).fit(H, S)
    assert np.abs(plain.covariance_ - weighted.covariance_).max() > 1e-3
