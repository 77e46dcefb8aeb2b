"""LongitudinalRegressionAdjuster(outcome_model="gp"): the named ARD Gaussian-process learner."""

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from sklearn_icml26.datasets import make_longitudinal_rct
from sklearn_icml26.treatment_effects import LongitudinalRegressionAdjuster
from sklearn_icml26.treatment_effects._learners import _SubsampledARDGaussianProcess


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with threadpool_limits(1):
        yield


@pytest.fixture(scope="module")
def smooth_trial():
    # baseline randomisation, outcome a Gaussian bump in X_1 plus a sine of X_2 X_3
    return make_longitudinal_rct(400, 2, 3, assign="baseline", outcome="gauss_sin",
                                 n_truth=20_000, random_state=0)


def test_gp_outcome_recovers_truth_and_beats_linear_adjustment(smooth_trial):
    X, y, w, truth = smooth_trial
    gp = LongitudinalRegressionAdjuster(3, outcome_model="gp", history_window=0, cv=2,
                                        n_bootstrap=20, random_state=0).fit(X, y, treatment=w)
    lin_se = gp.baselines_["lin_se"].to_numpy()
    assert np.all(np.abs(gp.effect_ - truth["effect"]) <= 4 * gp.effect_se_)
    # a linear adjustment cannot follow the bump and the sine (0.31-0.39x Lin's SE here)
    assert np.all(gp.effect_se_ / lin_se < 0.6), gp.effect_se_ / lin_se
    linear = LongitudinalRegressionAdjuster(3, history_window=0, cv=2, n_bootstrap=20,
                                            random_state=0).fit(X, y, treatment=w)
    assert np.all(linear.effect_se_ / lin_se > 0.9)
    model = gp.outcome_models_[0][1][0]
    assert isinstance(model, _SubsampledARDGaussianProcess) and model.n_hyper == 100
    # same random_state, same result (the kernel's subsample is seeded from it)
    again = LongitudinalRegressionAdjuster(3, outcome_model="gp", history_window=0, cv=2,
                                           n_bootstrap=20, random_state=0).fit(
        X, y, treatment=w)
    np.testing.assert_array_equal(again.effect_, gp.effect_)
    assert "ARD Gaussian process" in gp.summary(as_text=True)


def test_gp_learner_refits_all_rows_with_the_subsample_kernel():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 4))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=150)
    model = _SubsampledARDGaussianProcess(40, random_state=0).fit(X, y)
    # the exact GP on every row with the kernel tuned on 40 of them
    Z = StandardScaler().fit(X)
    exact = GaussianProcessRegressor(model.kernel_, normalize_y=True, optimizer=None).fit(
        Z.transform(X), y)
    Xn = rng.normal(size=(20, 4))
    np.testing.assert_allclose(model.predict(Xn), exact.predict(Z.transform(Xn)), atol=1e-10)
    # ARD: the relevant feature gets the shortest length scale
    scales = model.kernel_.k1.k2.length_scale
    assert np.argmin(scales) == 0, scales
    assert np.mean((model.predict(X) - np.sin(2 * X[:, 0])) ** 2) < 0.05
    # integer frequency weights are repeated rows
    counts = rng.integers(0, 3, 150)
    weighted = _SubsampledARDGaussianProcess(40, random_state=0).fit(X, y, counts)
    rows = np.repeat(np.arange(150), counts)
    repeated = _SubsampledARDGaussianProcess(40, random_state=0).fit(X[rows], y[rows])
    np.testing.assert_allclose(weighted.predict(Xn), repeated.predict(Xn), atol=1e-10)
    with pytest.raises(ValueError, match="integer frequency weights"):
        _SubsampledARDGaussianProcess(40).fit(X, y, np.full(150, 0.5))
    with pytest.raises(ValueError, match="n_hyper must be an integer >= 2, got 1"):
        _SubsampledARDGaussianProcess(1).fit(X, y)


def test_unknown_outcome_model_name_is_an_error(smooth_trial):
    X, y, w, _ = smooth_trial
    est = LongitudinalRegressionAdjuster(3, outcome_model="boosting")
    with pytest.raises(ValueError, match="'outcome_model'.*among {'gp'}.*Got 'boosting'"):
        est.fit(X, y, treatment=w)
