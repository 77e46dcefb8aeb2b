"""LongitudinalRegressionAdjuster: identities, known answers, coverage, routing, bad input."""

import re
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
import sklearn
from conftest import require_data
from scipy import stats
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from sklearn_icml26.datasets import load_btheb, load_respiratory, make_longitudinal_rct
from sklearn_icml26.datasets._longitudinal import _truth_monte_carlo
from sklearn_icml26.treatment_effects import (
    LinearGaussianTransition,
    LongitudinalRegressionAdjuster,
    panel_to_arrays,
)

LINEAR_TRUTH = np.array([-0.0478, 0.2565, 0.7478, 1.3697])


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with threadpool_limits(1):
        yield


def _linear(assign="baseline", n=2000, seed=0, **kwargs):
    return make_longitudinal_rct(n, 4, 3, dynamics="linear", outcome="linear", assign=assign,
                                 random_state=seed, **kwargs)


@pytest.fixture(scope="module")
def baseline_fit():
    with threadpool_limits(1):
        X, y, w, truth = _linear("baseline")
        est = LongitudinalRegressionAdjuster(3, random_state=0).fit(X, y, treatment=w)
    return X, y, w, truth, est


@pytest.fixture(scope="module")
def sequential_fit():
    with threadpool_limits(1):
        X, y, w, truth = _linear("sequential")
        est = LongitudinalRegressionAdjuster(3, random_state=0).fit(X, y, treatment=w)
    return X, y, w, truth, est


# ---------------------------------------------------------------- the generator


def test_linear_truth_by_recursion_and_simulation():
    _, _, _, truth = _linear(n=10)
    np.testing.assert_allclose(truth["effect"], LINEAR_TRUTH, atol=5e-5)
    np.testing.assert_allclose(truth["tau_direct"][0], truth["effect"][0])
    # an independent Monte Carlo of the same system (common random numbers) agrees
    params = {"dynamics": "linear", "outcome": "linear", "effect": "exp",
              "effect_amplitude": 0.2, "effect_baseline": 0.0, "timestep": 0.01,
              "forcing": 4.0, "y_to_x": 0.5, "w_to_x": 0.2, "noise_x": 0.2, "noise_y": 0.2}
    means = _truth_monte_carlo(tuple(sorted(params.items())), 200_000, 4, 3, 0)
    np.testing.assert_allclose(means[0] - means[1], truth["effect"], atol=2e-4)
    np.testing.assert_allclose(means, truth["means"], atol=0.02)


def test_generator_designs_and_lorenz():
    X, y, w, truth = make_longitudinal_rct(300, 5, 4, assign="sequential", switch_prob=0.2,
                                           n_truth=2000, random_state=1)
    assert X.shape == (300, 20) and y.shape == (300, 5) and w.shape == (300, 5)
    np.testing.assert_allclose(truth["path_probabilities"][0], 0.5 * 0.8 ** np.arange(5))
    switches = (np.diff(w, axis=1) != 0).mean()
    assert abs(switches - 0.2) < 0.03
    # Lorenz covariates move little in one 0.01 step, stay near 4 and are finite
    steps = np.abs(np.diff(X.reshape(300, 5, 4), axis=1))
    assert np.all(np.isfinite(X)) and steps.mean() < 0.2
    Xb, _, wb, tb = make_longitudinal_rct(300, 5, 4, n_truth=2000, random_state=1)
    assert wb.shape == (300,) and np.all(tb["path_probabilities"] == 0.5)
    # same random_state -> same units; the truth is fixed by dgp_seed
    again = make_longitudinal_rct(300, 5, 4, n_truth=2000, random_state=1)
    np.testing.assert_array_equal(again[0], Xb)
    np.testing.assert_array_equal(again[3]["effect"], tb["effect"])
    with pytest.raises(ValueError, match="assign must be one of"):
        make_longitudinal_rct(10, assign="weekly")


# ---------------------------------------------------------------- exact identities


def test_single_arm_mean_is_the_sample_mean():
    X, y, _, _ = _linear(n=300)
    est = LongitudinalRegressionAdjuster(3, n_mc=8, random_state=0).fit(X, y)
    np.testing.assert_allclose(est.means_[0], y.mean(axis=0), atol=1e-10)
    np.testing.assert_allclose(est.means_se_[0], y.std(axis=0) / np.sqrt(len(y)), rtol=1e-10)
    assert est.single_arm_ and est.effect_ is None and est.regimes_ is None
    with pytest.raises(ValueError, match="single-arm"):
        est.conf_int()
    assert est.conf_int(target="means").shape == (1, 4, 2)
    assert est.predict(X).shape == (300, 4)


def test_baseline_randomisation_telescopes_to_aipw(baseline_fit):
    _, y, D, _, est = baseline_fit
    pi = D.mean()
    q1, q0 = est.q0_[:, 0], est.q0_[:, 1]
    D = D[:, None]
    aipw = (q1 - q0 + D / pi * (y - q1) - (1 - D) / (1 - pi) * (y - q0)).mean(axis=0)
    np.testing.assert_allclose(est.effect_, aipw, atol=1e-10)
    np.testing.assert_allclose(est.path_probabilities_[0], pi)


def test_history_window_zero_is_per_period_aipw_on_baseline():
    X, y, D, _ = _linear("sequential", n=600)
    est = LongitudinalRegressionAdjuster(3, history_window=0, n_mc=4, random_state=0)
    est.fit(X, y, treatment=D)
    # with H_t = H_0 every G[s, t] is m_t(H_0): phi = q0 + I_t / pi_t (Y_t - q0)
    for r in range(2):
        on = np.cumprod(D == est.regimes_[r][None], axis=1)
        pi = est.path_probabilities_[r]
        phi = est.q0_[:, r] + on / pi * (y - est.q0_[:, r])
        np.testing.assert_allclose(est.means_[r], phi.mean(axis=0), atol=1e-10)


def test_history_window_zero_nonlinear_outcome_skips_simulation_exactly():
    # a nonlinear outcome model of H_0 alone: G[s, t] = m_t(H_0) for every start s <= t,
    # so phi = m_t(H_0) + I_t / pi_t (Y_t - m_t(H_0)) with the cross-fitted fold models
    from sklearn.neighbors import KNeighborsRegressor

    X, y, D, _ = _linear("sequential", n=400, seed=11)
    est = LongitudinalRegressionAdjuster(3, outcome_model=KNeighborsRegressor(7),
                                         history_window=0, n_mc=4, cv=3, random_state=0)
    est.fit(X, y, treatment=D)
    H0 = X[:, :3]
    for r in range(2):
        m = np.empty_like(y)
        for fold in range(3):
            test = est.folds_ == fold
            for t in range(y.shape[1]):
                m[test, t] = est.outcome_models_[r][t][fold].predict(H0[test])
        np.testing.assert_allclose(est.q0_[:, r], m, atol=1e-12)
        on = np.cumprod(D == est.regimes_[r][None], axis=1)
        phi = m + on / est.path_probabilities_[r] * (y - m)
        np.testing.assert_allclose(est.means_[r], phi.mean(axis=0), atol=1e-12)
        np.testing.assert_allclose(est.influence_[:, r], phi - phi.mean(axis=0), atol=1e-12)
        # predict: the fold models averaged, no particles
        avg = np.mean([[est.outcome_models_[r][t][f].predict(H0[:5]) for t in range(4)]
                       for f in range(3)], axis=0).T
        np.testing.assert_allclose(est.predict_regimes(X[:5])[:, r], avg, atol=1e-12)


# ---------------------------------------------------------------- known answers


def test_linear_baseline_design_recovers_truth_and_ties_lin(baseline_fit):
    _, _, _, truth, est = baseline_fit
    assert np.all(np.abs(est.effect_ - truth["effect"]) <= 4 * est.effect_se_)
    ratio = est.effect_se_ / est.baselines_["lin_se"].to_numpy()
    assert np.all((ratio >= 0.97) & (ratio <= 1.05)), ratio
    lin = est.baselines_["lin"].to_numpy()
    assert np.all(np.abs(est.effect_ - lin) <= 0.5 * est.baselines_["lin_se"].to_numpy())


def test_linear_sequential_design_beats_lin_late(sequential_fit):
    _, _, _, truth, est = sequential_fit
    assert np.all(np.abs(est.effect_ - truth["effect"]) <= 4 * est.effect_se_)
    lin_se = est.baselines_["lin_se"].to_numpy()
    assert est.effect_se_[3] < lin_se[3]
    assert est.effect_se_[3] / lin_se[3] < 0.97


@pytest.mark.parametrize("params", [{"q_method": "regress"}, {"history_window": 0},
                                    {"history_window": 1}])
def test_variants_recover_truth(params):
    X, y, w, truth = _linear("sequential", seed=3)
    est = LongitudinalRegressionAdjuster(3, n_mc=32, random_state=0, **params)
    est.fit(X, y, treatment=w)
    assert np.all(np.abs(est.effect_ - truth["effect"]) <= 4 * est.effect_se_)


def test_history_window_zero_agrees_with_lin_in_baseline_design():
    X, y, w, _ = _linear("baseline", seed=5)
    est = LongitudinalRegressionAdjuster(3, history_window=0, random_state=0)
    est.fit(X, y, treatment=w)
    lin, lin_se = est.baselines_["lin"].to_numpy(), est.baselines_["lin_se"].to_numpy()
    assert np.all(np.abs(est.effect_ - lin) <= 0.15 * lin_se)


def test_dropout_with_censoring_weights():
    X, y, w, truth = _linear("sequential", seed=7)
    rng = np.random.default_rng(7)
    y = y.copy()
    present = np.ones(len(y), dtype=bool)
    for t in range(1, 4):
        leave = rng.random(len(y)) < 1 / (1 + np.exp(2.5 - y[:, t - 1]))
        present &= ~leave
        y[~present, t] = np.nan
        X[~present, 3 * (t + 1):] = 0.0  # X_{t+1} is measured at the visit of Y_t
    assert 0.05 < np.isnan(y[:, 3]).mean() < 0.6
    est = LongitudinalRegressionAdjuster(3, random_state=0).fit(X, y, treatment=w)
    assert np.all(np.abs(est.effect_ - truth["effect"]) <= 4 * est.effect_se_)
    assert est.censoring_models_ is not None
    # per-period treatment unknown after dropout (NaN): about the same estimate
    w_nan = w.astype(float)
    w_nan[np.isnan(y)] = np.nan
    est_nan = LongitudinalRegressionAdjuster(3, random_state=0).fit(X, y, treatment=w_nan)
    assert np.all(np.abs(est_nan.effect_ - est.effect_) < 0.2 * est.effect_se_)
    w_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="treatment has NaN where the outcome is observed"):
        est.fit(X, y, treatment=w_nan)
    # complete cases are biased here: dropout depends on the previous outcome
    assert est.n_on_path_[0, 3] < est.n_on_path_[0, 0]


def test_coverage_over_replications():
    """Wald and sup-t coverage, bias and interval width over replications, both directions.

    Over 40 replications the standardised errors ``z = (estimate - truth) / se`` of a correct
    estimator have per-period mean ~ N(0, 1/40) (sd 0.158) and mean square ~ chi2_40 / 40,
    whatever the correlation between periods. The bounds below fail a correct estimator with
    probability < 0.5% each, and fail a bias of 1 SE (mean z ~ 1), intervals 1.5x too wide
    (mean z^2 ~ 0.44) or 1.4x too narrow (mean z^2 ~ 2).
    """
    n_reps, covered, band, z = 40, [], [], []
    for rep in range(n_reps):
        X, y, w, truth = _linear("sequential", n=500, seed=100 + rep)
        est = LongitudinalRegressionAdjuster(3, n_mc=16, n_bootstrap=300, random_state=rep)
        est.fit(X, y, treatment=w)
        ci = est.conf_int()
        np.testing.assert_allclose(ci[:, 1] - ci[:, 0], 2 * 1.959964 * est.effect_se_,
                                   rtol=1e-6)
        covered.append((ci[:, 0] <= truth["effect"]) & (truth["effect"] <= ci[:, 1]))
        b = est.conf_int(kind="uniform")
        band.append(np.all((b[:, 0] <= truth["effect"]) & (truth["effect"] <= b[:, 1])))
        z.append((est.effect_ - truth["effect"]) / est.effect_se_)
    covered, z = np.array(covered), np.array(z)
    # bias: |mean z| <= 0.6 is 3.8 sd of N(0, 1/40) (all 4 periods: P < 6e-4)
    assert np.all(np.abs(z.mean(axis=0)) <= 0.6), z.mean(axis=0)
    # width: P(chi2_40 / 40 < 0.55) = 0.5%, P(chi2_40 / 40 > 1.7) = 0.4%
    assert 0.55 <= np.mean(z**2) <= 1.7, (z**2).mean(axis=0)
    # mean over 4 correlated periods of 40 reps: sd <= sqrt(.95 * .05 / 40) = 0.034
    assert 0.85 <= covered.mean() <= 1.0, covered.mean(axis=0)
    # the band covers all periods jointly: binomial(40, 0.95) is below 33 with prob. < 0.1%
    assert np.sum(band) >= 33, np.mean(band)


def test_uniform_band_and_bootstrap(sequential_fit):
    *_, est = sequential_fit
    T = est.n_periods_
    c = est.band_critical_value()
    assert 1.96 <= c <= stats.norm.ppf(1 - 0.025 / T)
    wald = est.conf_int()
    band = est.conf_int(kind="uniform")
    assert np.all(band[:, 0] <= wald[:, 0]) and np.all(band[:, 1] >= wald[:, 1])
    boot = est.conf_int(method="bootstrap")
    np.testing.assert_allclose(boot, wald, atol=0.25 * (wald[:, 1] - wald[:, 0]).max())
    np.testing.assert_array_equal(est.conf_int(kind="uniform"), band)  # seeded draws
    means = est.conf_int(target="means")
    assert means.shape == (2, T, 2)
    np.testing.assert_allclose(means.mean(axis=2), est.means_)
    with pytest.raises(ValueError, match="uniform band needs method='bootstrap'"):
        est.conf_int(kind="uniform", method="wald")
    table = est.summary()
    assert list(table.columns) == [
        "estimate", "std_err", "z", "p_value", "ci_lower", "ci_upper", "band_lower",
        "band_upper", "n_on_path_1", "n_on_path_0", "dim", "dim_se", "cuped", "cuped_se",
        "lin", "lin_se", "se_ratio_lin"]
    np.testing.assert_allclose(table["band_upper"] - table["estimate"], c * est.effect_se_)


def test_same_random_state_same_output():
    X, y, w, _ = _linear("sequential", n=400)
    a = LongitudinalRegressionAdjuster(3, n_mc=8, random_state=11).fit(X, y, treatment=w)
    b = LongitudinalRegressionAdjuster(3, n_mc=8, random_state=11).fit(X, y, treatment=w)
    c = LongitudinalRegressionAdjuster(3, n_mc=8, random_state=12).fit(X, y, treatment=w)
    np.testing.assert_array_equal(a.effect_, b.effect_)
    np.testing.assert_array_equal(a.conf_int(kind="uniform"), b.conf_int(kind="uniform"))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert not np.array_equal(a.effect_, c.effect_)
    # parallel (regime, fold) jobs give the same numbers
    p = LongitudinalRegressionAdjuster(3, n_mc=8, random_state=11, n_jobs=2)
    with joblib.parallel_config(backend="threading"):
        p.fit(X, y, treatment=w)
    np.testing.assert_allclose(p.effect_, a.effect_, rtol=1e-12)


def test_baselines_match_statsmodels_hc2(baseline_fit):
    import statsmodels.api as sm

    X, y, w, _, est = baseline_fit
    H0 = X[:, :3]
    for t in range(4):
        Hc = H0 - H0.mean(axis=0)
        Z = np.column_stack([np.ones(len(y)), w, Hc, w[:, None] * Hc])
        fit = sm.OLS(y[:, t], Z).fit(cov_type="HC2")
        np.testing.assert_allclose(est.baselines_.loc[t, "lin"], fit.params[1], rtol=1e-10)
        np.testing.assert_allclose(est.baselines_.loc[t, "lin_se"], fit.bse[1], rtol=1e-10)
        dim = y[w == 1, t].mean() - y[w == 0, t].mean()
        np.testing.assert_allclose(est.baselines_.loc[t, "dim"], dim, rtol=1e-10)


def test_predictions_and_score():
    X, y, w, truth = _linear("baseline", n=800)
    est = LongitudinalRegressionAdjuster(3, n_mc=64, random_state=0).fit(X, y, treatment=w)
    both = est.predict_regimes(X)
    assert both.shape == (800, 2, 4)
    np.testing.assert_allclose(est.predict(X), both[:, 1])
    effect = est.predict_effect(X)
    # linear system: the conditional effect is about the same for every unit, and its mean
    # is the cross-fitted g-formula effect up to the shared Monte Carlo noise
    gformula = est.gformula_means_[0] - est.gformula_means_[1]
    np.testing.assert_allclose(effect.mean(axis=0), gformula, atol=0.06)
    assert np.all(np.abs(effect.mean(axis=0) - truth["effect"]) < 4 * est.effect_se_ + 0.06)
    assert effect.std(axis=0).max() < 0.15  # no true heterogeneity: estimation noise only
    # row-wise predictions: a subset gives the same rows
    np.testing.assert_allclose(est.predict(X[:7]), est.predict(X)[:7], rtol=1e-10)
    assert est.score(X, y, treatment=w) > 0.5
    # own regime fits better than the reference regime for everyone
    from sklearn.metrics import r2_score
    reference = np.mean([r2_score(y[:, t], est.predict(X)[:, t]) for t in range(4)])
    assert est.score(X, y, treatment=w) > reference + 0.05


def test_flexible_nuisances_and_custom_transition():
    X, y, w, truth = _linear("baseline", n=600)
    est = LongitudinalRegressionAdjuster(
        3, outcome_model=Ridge(alpha=1.0),
        transition_model=RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0),
        n_mc=8, cv=3, random_state=0).fit(X, y, treatment=w)
    kernel = est.transition_models_[0][0][0]
    assert isinstance(kernel, LinearGaussianTransition)
    assert isinstance(kernel.mean_model_, RandomForestRegressor)
    assert np.all(np.abs(est.effect_ - truth["effect"]) <= 4 * est.effect_se_)


def test_known_propensity_and_custom_cv():
    X, y, w, truth = _linear("sequential", n=1000)
    known = truth["path_probabilities"]
    est = LongitudinalRegressionAdjuster(3, propensity=known, cv=KFold(4), n_mc=16,
                                         random_state=0).fit(X, y, treatment=w)
    np.testing.assert_allclose(est.path_probabilities_, known)
    assert set(np.unique(est.folds_)) == {0, 1, 2, 3}
    assert np.all(np.abs(est.effect_ - truth["effect"]) <= 4 * est.effect_se_)
    Xb, yb, wb, _ = _linear("baseline", n=400)
    est = LongitudinalRegressionAdjuster(3, propensity=0.5, n_mc=4, random_state=0)
    np.testing.assert_allclose(est.fit(Xb, yb, treatment=wb).path_probabilities_,
                               [[0.5] * 4, [0.5] * 4])


# ---------------------------------------------------------------- the kernel


def test_linear_gaussian_transition_recovers_mean_and_covariance():
    rng = np.random.default_rng(0)
    H = rng.normal(size=(4000, 3))
    B = np.array([[1.0, 0.0], [0.5, -1.0], [0.0, 2.0]])
    cov = np.array([[1.0, 0.6], [0.6, 2.0]])
    S = 3.0 + H @ B + rng.multivariate_normal([0, 0], cov, size=4000)
    kernel = LinearGaussianTransition().fit(H, S)
    np.testing.assert_allclose(kernel.covariance_, cov, atol=0.12)
    draws = kernel.sample(np.zeros((20000, 3)), rng.normal(size=(20000, 2)))
    np.testing.assert_allclose(draws.mean(axis=0), kernel.predict(np.zeros((1, 3)))[0],
                               atol=0.05)
    np.testing.assert_allclose(np.cov(draws.T), kernel.covariance_, rtol=0.05)
    # flexible mean: covariance from cross-validated residuals
    flexible = LinearGaussianTransition(mean_model=make_pipeline(StandardScaler(), Ridge()))
    np.testing.assert_allclose(flexible.fit(H, S).covariance_, cov, atol=0.15)
    # more features than rows: exact fit, covariance floored, draws finite
    with pytest.warns(UserWarning, match="too few to estimate the noise covariance"):
        tiny = LinearGaussianTransition(min_eigenvalue=1e-6).fit(H[:3], S[:3])
    assert np.all(np.linalg.eigvalsh(tiny.covariance_) > 0)
    with pytest.raises(ValueError, match="z must have shape"):
        kernel.sample(H[:2], np.zeros((2, 3)))


def test_linear_gaussian_transition_rejects_non_finite_z():
    H = np.random.default_rng(0).normal(size=(50, 3))
    kernel = LinearGaussianTransition().fit(H, H[:, :2])
    for bad in (np.nan, np.inf):
        z = np.zeros((2, 2))
        z[1, 0] = bad
        with pytest.raises(ValueError, match="z contains NaN or infinity"):
            kernel.sample(H[:2], z)


def test_linear_gaussian_transition_huge_values_scaled_internally():
    rng = np.random.default_rng(0)
    H = rng.normal(size=(50, 3))
    S = H[:, :2] + 0.1 * rng.normal(size=(50, 2))
    plain = LinearGaussianTransition().fit(H, S)
    with pytest.warns(UserWarning, match="covariance_ overflows float64"):
        huge = LinearGaussianTransition().fit(H * 1e300, S * 1e300)
    assert np.all(np.isfinite(huge.y_scale_)) and np.all(np.isfinite(huge.noise_factor_))
    np.testing.assert_allclose(huge.predict(H[:5] * 1e300) / 1e300, plain.predict(H[:5]),
                               rtol=1e-8, atol=1e-8)
    assert np.all(np.isfinite(huge.predict(H[:5])))
    z = rng.normal(size=(5, 2))
    np.testing.assert_allclose(huge.sample(H[:5] * 1e300, z) / 1e300, plain.sample(H[:5], z),
                               rtol=1e-8, atol=1e-8)
    # a mean model that cannot cope with the magnitude is an error, not NaN
    with pytest.raises(ValueError, match="conditional mean is NaN or infinite"):
        plain.predict(np.array([[1.79e308, 1.79e308, 0.0]]))


def test_linear_gaussian_transition_too_few_samples_warns():
    H = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.warns(UserWarning, match=r"n_samples=1 is too few.*3 features has 1 "
                                         r"parameters.*no residual degrees of freedom"):
        kernel = LinearGaussianTransition().fit(H[:1], H[:1, :2])
    np.testing.assert_allclose(kernel.covariance_, 1e-8 * np.eye(2))
    assert np.all(np.isfinite(kernel.sample(H[:2], np.ones((2, 2)))))


def test_huge_inputs_raise_instead_of_nan():
    X, y, w, _ = make_longitudinal_rct(100, 3, 2, dynamics="linear", outcome="linear",
                                       random_state=0)
    est = LongitudinalRegressionAdjuster(n_time_varying=2, n_mc=4, cv=2, random_state=0)
    with pytest.raises(ValueError, match=r"y has values up to .*e\+200.*rescale y"):
        est.fit(X, y * 1e200, treatment=w)
    with pytest.raises(ValueError, match=r"X has values up to .*e\+300.*rescale X"):
        est.fit(X * 1e300, y, treatment=w)
    est.fit(X, y, treatment=w)
    assert np.all(np.isfinite(est.effect_)) and np.all(np.isfinite(est.effect_se_))
    with pytest.raises(ValueError, match="X has values up to"):
        est.predict(X * 1e300)


class _NaNRegressor(RegressorMixin, BaseEstimator):
    def fit(self, X, y):
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        return np.full(len(X), np.nan)


def test_non_finite_nuisance_predictions_raise():
    X, y, w, _ = make_longitudinal_rct(100, 3, 2, dynamics="linear", outcome="linear",
                                       random_state=0)
    est = LongitudinalRegressionAdjuster(n_time_varying=2, outcome_model=_NaNRegressor(),
                                         n_mc=4, cv=2, random_state=0)
    with pytest.raises(ValueError, match="the fit gave NaN or infinite means_"):
        est.fit(X, y, treatment=w)


# ---------------------------------------------------------------- sklearn integration


def test_metadata_routing_through_pipeline_and_cross_validate():
    X, y, w, _ = _linear("baseline", n=300)
    with sklearn.config_context(enable_metadata_routing=True):
        est = LongitudinalRegressionAdjuster(3, n_mc=4, cv=3, random_state=0)
        est.set_fit_request(treatment=True).set_score_request(treatment=True)
        pipe = make_pipeline(StandardScaler(), est).fit(X, y, treatment=w)
        fitted = pipe[-1]
        assert not fitted.single_arm_
        direct = clone(est).fit(StandardScaler().fit_transform(X), y, treatment=w)
        np.testing.assert_allclose(fitted.effect_, direct.effect_, rtol=1e-10)
        scores = cross_validate(make_pipeline(StandardScaler(), clone(est)), X, y, cv=3,
                                params={"treatment": w})
        assert np.all(np.isfinite(scores["test_score"]))
        assert np.all(scores["test_score"] > 0.3)


def test_search_and_cross_validate_score_with_treatment_by_default():
    # treatment is requested for fit and score by default: a search needs no set_*_request
    X, y, w, _ = _linear("baseline", n=300)
    est = LongitudinalRegressionAdjuster(3, n_mc=4, cv=3, random_state=0)
    assert est.get_metadata_routing().fit.requests["treatment"] is True
    assert est.get_metadata_routing().score.requests["treatment"] is True
    grid = {"history_window": [0, None]}
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(est, grid, cv=KFold(3)).fit(X, y, treatment=w)
        scores = search.cv_results_["mean_test_score"]
        assert np.all(np.isfinite(scores)) and np.all(scores > 0.5), scores
        # the search scored each unit against its own regime
        train, test = next(KFold(3).split(X))
        manual = clone(est).set_params(history_window=0).fit(X[train], y[train],
                                                              treatment=w[train])
        np.testing.assert_allclose(search.cv_results_["split0_test_score"][0],
                                   manual.score(X[test], y[test], treatment=w[test]),
                                   rtol=1e-10)
        cv_scores = cross_validate(make_pipeline(StandardScaler(), clone(est)), X, y, cv=3,
                                   params={"treatment": w})["test_score"]
        assert np.all(np.isfinite(cv_scores)) and np.all(cv_scores > 0.5)
    # without routing scikit-learn gives score no treatment: a clear error, not a wrong R2
    fitted = clone(est).fit(X, y, treatment=w)
    with pytest.raises(ValueError, match=r"score needs treatment.*enable_metadata_routing"):
        fitted.score(X, y)
    with pytest.raises(ValueError, match="score needs treatment"):
        GridSearchCV(est, grid, cv=3, error_score="raise").fit(X, y, treatment=w)
    # single-arm fits score without treatment
    single = clone(est).fit(X, y)
    assert np.isfinite(single.score(X, y))


def test_score_checks_lengths():
    X, y, w, _ = _linear("baseline", n=120)
    est = LongitudinalRegressionAdjuster(3, n_mc=4, cv=2, random_state=0).fit(X, y, treatment=w)
    with pytest.raises(ValueError, match=r"y has 115 rows but X has 120"):
        est.score(X, y[:-5], treatment=w)
    with pytest.raises(ValueError, match=r"treatment has 115 rows but X has 120"):
        est.score(X, y, treatment=w[:-5])
    with pytest.raises(ValueError, match=r"sample_weight must have shape \(120,\) .*got \(3,\)"):
        est.score(X, y, treatment=w, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match=r"y must have n_periods_=4 columns; got 3"):
        est.score(X, y[:, :3], treatment=w)
    with pytest.raises(ValueError, match=r"treatment must have shape \(n_samples,\)"):
        est.score(X, y, treatment=np.ones((120, 3), dtype=int))
    np.testing.assert_allclose(est.score(X, y, treatment=w, sample_weight=np.ones(120)),
                               est.score(X, y, treatment=w), rtol=1e-12)
    # codes that match no fitted regime are an error, not scored against the other regime
    for bad in (np.full_like(w, 5), w.astype(str), np.where(w == 1, np.nan, w)):
        with pytest.raises(ValueError, match=r"treatment must hold the integer codes"):
            est.score(X, y, treatment=bad)
    np.testing.assert_allclose(est.score(X, y, treatment=w.astype(float)),
                               est.score(X, y, treatment=w), rtol=1e-12)


def _many_levels(seed, n=50, levels=45, noise=12.0):
    """A 50-unit trial whose baseline is the one-hot code of a covariate with many levels."""
    rng = np.random.default_rng(seed)
    B = np.eye(levels)[rng.integers(0, levels, n)][:, 1:]
    D = rng.permutation(np.r_[np.ones(n // 2), np.zeros(n - n // 2)]).astype(bool)
    return B, D, noise * rng.normal(size=n) + 2.0 * D


@pytest.mark.parametrize("seed", [1, 3])
def test_lin_hc2_with_leverage_one_units(seed):
    # Lin's estimate is linear in y: tau = c @ y, so with homoscedastic noise of sd 12 its
    # exact standard deviation given the design is 12 * |c|, read off unit vectors
    from sklearn_icml26.treatment_effects._baselines import _baselines

    B, D, y = _many_levels(seed)
    n = len(y)
    on1, on0 = D[:, None], ~D[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = np.array([_baselines(B, np.eye(n)[:, [i]], on1, on0)["lin"][0] for i in range(n)])
    exact = 12.0 * np.linalg.norm(c)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        table = _baselines(B, y[:, None], on1, on0)
    messages = [str(r.message) for r in record]
    assert all(r.category is UserWarning for r in record), messages
    leverage = [re.match(r"Lin \(HC2\) at period 0: (\d+) of 50 units have leverage h_ii >= "
                         r"1 - 1e-10", m) for m in messages]
    counts = [int(m.group(1)) for m in leverage if m]
    assert len(counts) == 1 and 25 <= counts[0] <= 40, messages
    # some levels are present in one arm only: the coefficient needs the aliasing convention
    assert sum("treatment coefficient is not identified" in m for m in messages) == 1
    lin_se = table["lin_se"][0]
    assert np.isfinite(lin_se) and 0.6 * exact <= lin_se <= 1.6 * exact, (lin_se, exact)
    assert table["dim_se"][0] < lin_se  # 44 dummies on 50 units: Lin is noisier than DiM


def test_lin_hc2_without_residual_degrees_of_freedom_is_nan():
    from sklearn_icml26.treatment_effects._baselines import _baselines

    B, D, y = _many_levels(0, n=24, levels=400)  # (almost) every unit has its own level
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        table = _baselines(B, y[:, None], D[:, None], ~D[:, None])
    messages = [str(r.message) for r in record]
    assert sum("no residual degrees of freedom remain: lin_se is NaN" in m
               for m in messages) == 1, messages
    assert np.isnan(table["lin_se"][0]) and np.isfinite(table["dim_se"][0])


def _fitted_arrays(est, X):
    arrays = {name: getattr(est, name) for name in (
        "effect_", "effect_se_", "means_", "means_se_", "gformula_means_", "q0_",
        "influence_")}
    arrays["baselines"] = est.baselines_.drop(columns="period").to_numpy(dtype=float)
    arrays["predict"] = est.predict_regimes(X)
    return arrays


@pytest.mark.parametrize("q_method", ["simulate", "regress"])
def test_collinear_covariates_leave_every_estimate_unchanged(q_method):
    X, y, w, _ = _linear("sequential", n=300)
    rng = np.random.default_rng(1)
    B = rng.normal(size=(300, 2))
    dummies = np.eye(3)[rng.integers(0, 3, 300)]
    plain = np.hstack([B, dummies[:, :2], X])
    # a duplicated covariate, and one-hot dummies that sum to the intercept
    collinear = np.hstack([B, B[:, :1], dummies, X])
    est = LongitudinalRegressionAdjuster(3, q_method=q_method, n_mc=16, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no rank-deficiency warning leaks from statsmodels
        a = clone(est).fit(plain, y, treatment=w)
        b = clone(est).fit(collinear, y, treatment=w)
    expected, got = _fitted_arrays(a, plain), _fitted_arrays(b, collinear)
    for name in expected:
        np.testing.assert_allclose(got[name], expected[name], rtol=0, atol=1e-10,
                                   err_msg=name)


def test_linear_gaussian_transition_dof_uses_the_rank():
    rng = np.random.default_rng(0)
    H = rng.normal(size=(30, 3))
    S = H @ np.array([1.0, -1.0, 0.5]) + rng.normal(size=30)
    a = LinearGaussianTransition().fit(H, S)
    b = LinearGaussianTransition().fit(np.hstack([H, H[:, :1], H[:, :1] + H[:, 1:2]]), S)
    np.testing.assert_allclose(b.covariance_, a.covariance_, rtol=1e-10)
    resid = S - a.predict(H)
    np.testing.assert_allclose(a.covariance_[0, 0], resid @ resid / (30 - 3 - 1), rtol=1e-10)


class _WarningRegressor(RegressorMixin, BaseEstimator):
    """Linear regression that warns at every fit (a stand-in for a non-converging model)."""

    def fit(self, X, y):
        warnings.warn(f"planted warning from a fit on {len(X)} rows", UserWarning,
                      stacklevel=2)
        self.model_ = Ridge(alpha=1e-8).fit(X, y)
        return self

    def predict(self, X):
        return self.model_.predict(X)


def test_n_jobs_shows_the_same_warnings():
    X, y, w, _ = _linear("baseline", n=200)
    est = LongitudinalRegressionAdjuster(3, outcome_model=_WarningRegressor(), n_mc=2, cv=2,
                                         random_state=0)
    seen = {}
    for n_jobs in (1, 2):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            fitted = clone(est).set_params(n_jobs=n_jobs).fit(X, y, treatment=w)
        seen[n_jobs] = sorted(str(r.message) for r in record
                              if "planted warning" in str(r.message))
        seen[f"effect{n_jobs}"] = fitted.effect_
    assert len(seen[1]) > 0
    assert seen[2] == seen[1]
    np.testing.assert_allclose(seen["effect2"], seen["effect1"], rtol=1e-12)
    # the caller's filters decide, as with n_jobs=1
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", message="planted warning")
        clone(est).set_params(n_jobs=2).fit(X, y, treatment=w)
    assert not [r for r in record if "planted warning" in str(r.message)]


def test_linear_case_agrees_with_lin_estimate(baseline_fit):
    *_, est = baseline_fit
    lin = est.baselines_["lin"].to_numpy()
    lin_se = est.baselines_["lin_se"].to_numpy()
    np.testing.assert_allclose(est.effect_, lin, atol=(0.5 * lin_se).max())
    gf = est.gformula_means_[0] - est.gformula_means_[1]
    assert np.all(np.abs(gf - lin) <= 0.5 * lin_se)


# ---------------------------------------------------------------- bad input


def test_bad_input_messages():
    X, y, w, _ = _linear("sequential", n=60)
    est = LongitudinalRegressionAdjuster(3, n_mc=2, cv=2, random_state=0)
    with pytest.raises(ValueError, match=r"X has 12 columns but n_time_varying=4 with "
                                         r"n_periods=4 needs at least 16"):
        clone(est).set_params(n_time_varying=4).fit(X, y, treatment=w)
    with pytest.raises(ValueError, match="y must be 1-D or 2-D"):
        est.fit(X, y[:, :, None], treatment=w)
    bad = y.copy()
    bad[0, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        est.fit(X, bad, treatment=w)
    bad = y.copy()
    bad[[3, 5], 1] = np.nan
    with pytest.raises(ValueError, match="non-monotone missing values for units 3, 5"):
        est.fit(X, bad, treatment=w)
    with pytest.raises(ValueError, match="n_samples=1 is too few for cv=2"):
        est.fit(X[:1], y[:1])
    with pytest.raises(ValueError, match=r"treatment must have shape .*got \(60, 3\)"):
        est.fit(X, y, treatment=w[:, :3])
    with pytest.raises(ValueError, match=r"integer-coded \(e.g. 0/1\)"):
        est.fit(X, y, treatment=w + 0.5)
    with pytest.raises(ValueError, match="integer-coded"):
        est.fit(X, y, treatment=np.where(w == 1, "a", "b"))
    with pytest.raises(ValueError, match="omit treatment for single-arm mode"):
        est.fit(X, y, treatment=np.ones(60, dtype=int))
    with pytest.raises(ValueError, match=r"regimes must have shape \(2, n_periods\)"):
        clone(est).set_params(regimes=[[1, 1], [0, 0]]).fit(X, y, treatment=w)
    with pytest.raises(ValueError, match=r"codes \[2\] absent from treatment"):
        clone(est).set_params(regimes=[[2] * 4, [0] * 4]).fit(X, y, treatment=w)
    with pytest.raises(ValueError, match="regimes vary over time"):
        clone(est).set_params(regimes=[[1, 0, 1, 0], [0] * 4], propensity=0.5).fit(
            X, y, treatment=w)
    with pytest.raises(ValueError, match=r"propensity must be .* values in \(0, 1\]"):
        clone(est).set_params(propensity=np.zeros((2, 4))).fit(X, y, treatment=w)
    with pytest.raises(ValueError, match="'propensity' parameter"):
        clone(est).set_params(propensity=1.5).fit(X, y, treatment=w)
    # a regime path that dies out: alternate treatment codes nobody follows for long
    with pytest.raises(ValueError, match=r"regime 0 has \d units on its path at period \d in "
                                         r"a training fold; need at least 2"):
        clone(est).set_params(regimes=[[1, 0, 1, 0], [0] * 4]).fit(X, y, treatment=w)


def test_small_path_warns():
    X, y, w, _ = _linear("sequential", n=150, switch_prob=0.4)
    with pytest.warns(UserWarning, match="n \\* path probability < 20"):
        LongitudinalRegressionAdjuster(3, n_mc=2, cv=2, random_state=0).fit(
            X, y, treatment=w)


# ---------------------------------------------------------------- panels and real data


def test_panel_to_arrays_errors_and_time_varying():
    long = pd.DataFrame({"id": [1, 1, 2, 2, 3], "t": [0, 1, 0, 1, 0], "w": [1, 1, 0, 1, 0],
                         "age": [30, 30, 40, 40, 50], "x": [0.1, 0.2, 0.3, 0.4, 0.5],
                         "y": [1.0, 2.0, 0.5, 0.7, 0.1]})
    X, y, w = panel_to_arrays(long, unit="id", time="t", outcome="y", treatment="w",
                              baseline=["age"], time_varying=["x"])
    assert X.columns.tolist() == ["age", "x@0", "x@1"]
    assert np.isnan(y.loc[3, 1]) and X.loc[3, "x@1"] == 0
    assert isinstance(w, pd.DataFrame) and w.shape == (3, 2)
    with pytest.raises(ValueError, match=r"duplicated \(id, t\) rows"):
        panel_to_arrays(pd.concat([long, long.iloc[:1]]), unit="id", time="t", outcome="y")
    varying = long.assign(age=[30, 31, 40, 40, 50])
    with pytest.raises(ValueError, match="baseline column 'age' varies within units"):
        panel_to_arrays(varying, unit="id", time="t", outcome="y", baseline=["age"])
    holes = long.assign(x=[0.1, np.nan, 0.3, 0.4, 0.5])
    with pytest.raises(ValueError, match="'x' is missing at t=1 for units \\[1\\]"):
        panel_to_arrays(holes, unit="id", time="t", outcome="y", time_varying=["x"])
    with pytest.raises(ValueError, match="are not in data"):
        panel_to_arrays(long, unit="id", time="t", outcome="nope")


@pytest.mark.real_data
def test_panel_to_arrays_reproduces_load_respiratory():
    home = require_data("longitudinal_rct/respiratory.csv")
    data = load_respiratory(home)
    long = data.frame.assign(good=(data.frame["status"] == "good").astype(float),
                             treated=(data.frame["treatment"] == "treatment").astype(int),
                             centre2=(data.frame["centre"] == 2).astype(float),
                             male=(data.frame["sex"] == "male").astype(float))
    base = long[long["month"] == 0][["subject", "good"]].rename(columns={"good": "good0"})
    long = long[long["month"] > 0].merge(base, on="subject")
    X, y, w = panel_to_arrays(long, unit="subject", time="month", outcome="good",
                              treatment="treated", baseline=["centre2", "male", "age", "good0"])
    np.testing.assert_array_equal(X.to_numpy(), data.X)
    np.testing.assert_array_equal(y.to_numpy(), data.y)
    np.testing.assert_array_equal(w.to_numpy(), data.treatment)


@pytest.mark.real_data
def test_btheb_baselines_and_dropout():
    home = require_data("longitudinal_rct/BtheB.csv")
    data = load_btheb(home)
    assert data.X.shape == (100, 3) and data.y.shape == (100, 4)
    assert np.isnan(data.y).sum(axis=0).tolist() == [3, 27, 42, 48]
    assert data.treatment.sum() == 52
    est = LongitudinalRegressionAdjuster(n_mc=16, random_state=0)
    est.fit(data.X, data.y, treatment=data.treatment)
    b = est.baselines_
    assert (b["n_on_path_1"] + b["n_on_path_0"]).tolist() == [97, 73, 58, 52]
    np.testing.assert_allclose(b["dim"], [-4.755, -5.640, -7.034, -4.748], atol=5e-4)
    np.testing.assert_allclose(b["dim_se"], [2.167, 2.712, 2.802, 2.577], atol=5e-4)
    np.testing.assert_allclose(b["lin"], [-2.817, -3.459, -3.917, -2.975], atol=5e-4)
    np.testing.assert_allclose(b["lin_se"], [1.886, 2.463, 2.184, 2.054], atol=5e-4)
    np.testing.assert_allclose(b.loc[0, ["cuped", "cuped_se"]], [-2.656, 1.681], atol=5e-4)
    assert np.all(np.isfinite(est.effect_)) and np.all(est.effect_se_ > 0)


@pytest.mark.real_data
def test_respiratory_baselines_and_se_ratio():
    home = require_data("longitudinal_rct/respiratory.csv")
    data = load_respiratory(home)
    assert data.treatment.sum() == 54 and not np.isnan(data.y).any()
    est = LongitudinalRegressionAdjuster(random_state=0)
    est.fit(data.X, data.y, treatment=data.treatment)
    b = est.baselines_
    np.testing.assert_allclose(b["dim"], [0.1940, 0.3177, 0.2661, 0.1910], atol=5e-4)
    np.testing.assert_allclose(b["dim_se"], [0.0924, 0.0904, 0.0906, 0.0938], atol=5e-4)
    np.testing.assert_allclose(b["lin"], [0.2000, 0.3351, 0.2927, 0.2110], atol=5e-4)
    np.testing.assert_allclose(b["lin_se"], [0.0819, 0.0892, 0.0795, 0.0867], atol=5e-4)
    np.testing.assert_allclose(b.loc[0, ["cuped", "cuped_se"]], [0.1823, 0.0781], atol=5e-4)
    ratio = est.effect_se_ / b["lin_se"].to_numpy()
    assert np.all((ratio >= 0.9) & (ratio <= 1.1)), ratio
    assert np.all(np.abs(est.effect_ - b["lin"].to_numpy()) < 0.5 * b["lin_se"].to_numpy())


@pytest.mark.real_data
def test_demo_table():
    from sklearn_icml26.treatment_effects._demo import run_demo
    from sklearn_icml26.utils._registry import DEMO_COLUMNS, DEMOS

    home = require_data("longitudinal_rct/BtheB.csv", "longitudinal_rct/respiratory.csv")
    assert DEMOS["longitudinal"].target == "sklearn_icml26.treatment_effects._demo:run_demo"
    table = run_demo(home, verbose=0, fast=True)
    assert list(table.columns) == DEMO_COLUMNS and len(table) == 16
    lin_se = table.loc[table["metric"] == "std_err", "anchor_value"].to_numpy()
    np.testing.assert_allclose(lin_se[4:], [0.0819, 0.0892, 0.0795, 0.0867], atol=5e-4)
    # BtheB has dropout at every visit: Lin's rows say they answer for completers only;
    # the respiratory trial is complete and its anchor is plain Lin
    anchors = table.drop_duplicates("dataset")["anchor"].tolist()
    assert all(a.startswith("Lin (HC2), completers only (") for a in anchors[:4]), anchors
    assert anchors[4:] == ["Lin (HC2)"] * 4
    assert "(97 of 100 units)" in anchors[0]


class _RecordingRng:
    """Standard normal draws that are recorded (to be replayed by _ReplayRng)."""

    def __init__(self, seed):
        self.rng, self.draws = np.random.default_rng(seed), []

    def standard_normal(self, shape):
        z = self.rng.standard_normal(shape)
        self.draws.append(z.copy())
        return z


class _ReplayRng:
    def __init__(self, draws):
        self.draws = list(draws)

    def standard_normal(self, shape):
        z = self.draws.pop(0)
        assert z.shape == tuple(shape)
        return z


def test_affine_shortcut_is_the_particle_average(monkeypatch):
    # With affine nuisances the forward simulation uses one particle driven by the mean of
    # the n_mc noise vectors; fed the per-unit means of the same draws it must reproduce the
    # n_mc-particle average exactly.
    from sklearn_icml26.treatment_effects import _simulation as dra

    X, y, w, _ = _linear("sequential", n=300)
    est = LongitudinalRegressionAdjuster(3, n_mc=4, cv=3, random_state=0).fit(X, y, treatment=w)
    T, k, n_mc = 4, 3, 5
    Xt = X.reshape(len(X), T, k)
    Hfull = np.hstack([Xt[:, 0]] + [np.column_stack([Xt[:, t], y[:, t - 1]])
                                     for t in range(1, T)])
    I = np.cumprod(np.repeat(w[:, None] == 1, T, axis=1) if w.ndim == 1 else w == 1,
                   axis=1).astype(bool)
    test = np.flatnonzero(est.folds_ == 0)
    outcome = [est.outcome_models_[0][t][0] for t in range(T)]
    kernels = [est.transition_models_[0][t][0] for t in range(T - 1)]
    assert all(map(dra._is_affine, outcome)) and all(map(dra._is_affine_kernel, kernels))

    def cols(t):
        return dra._history_index(t, k, k + 1, None)

    slow = np.zeros((len(test), T + 1, T))
    recorder = _RecordingRng(1)
    with monkeypatch.context() as m:
        m.setattr(dra, "_is_affine", lambda model: False)
        dra._simulate_forward(slow, Hfull, I, test, outcome, kernels, n_mc, recorder, cols, k,
                              k + 1)
    means = [z.reshape(-1, n_mc, k + 1).mean(axis=1) * np.sqrt(n_mc) for z in recorder.draws]
    fast = np.zeros_like(slow)
    dra._simulate_forward(fast, Hfull, I, test, outcome, kernels, n_mc, _ReplayRng(means),
                          cols, k, k + 1)
    assert np.abs(slow[:, 0, 1:]).min() > 0  # simulated cells of the start s = 0
    assert np.abs(slow[I[test, 1], 2, 3]).min() > 0  # and of a later start, on path
    np.testing.assert_allclose(fast, slow, rtol=1e-10, atol=1e-12)
    # and the shortcut is taken only for affine nuisances
    assert not dra._is_affine(make_pipeline(StandardScaler(), Ridge()).fit(X, y[:, 0]))
    assert not dra._is_affine(RandomForestRegressor(n_estimators=2).fit(X, y[:, 0]))
    assert dra._is_affine(Ridge().fit(X, y[:, 0]))


def test_verbose_prints_one_plain_line_per_regime_and_fold(capsys):
    X, y, w, _ = _linear("baseline", n=300)
    LongitudinalRegressionAdjuster(3, cv=3, n_mc=4, random_state=0, verbose=1).fit(
        X, y, treatment=w)
    lines = [ln for ln in capsys.readouterr().err.splitlines()
             if ln.startswith("regime x fold")]
    assert [ln.split("|")[2].split()[0] for ln in lines[1:]] == [f"{k}/6" for k in range(1, 7)]
    assert not any("\r" in ln or "\x1b" in ln for ln in lines)
