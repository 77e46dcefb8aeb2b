"""LongitudinalRegressionAdjuster inference: cluster-robust errors, the effect projection of
predict_effect and the text summary, against statsmodels where the estimator reduces to OLS."""

import numpy as np
import pytest
import sklearn
import statsmodels.api as sm
from sklearn.model_selection import GroupKFold, KFold, cross_validate
from threadpoolctl import threadpool_limits

from sklearn_icml26.datasets import make_longitudinal_rct
from sklearn_icml26.treatment_effects import LongitudinalRegressionAdjuster


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with threadpool_limits(1):
        yield


def _linear(n=600, seed=0):
    return make_longitudinal_rct(n, 4, 3, dynamics="linear", outcome="linear",
                                 random_state=seed)


@pytest.fixture(scope="module")
def clustered_fit():
    with threadpool_limits(1):
        X, y, w, truth = _linear()
        groups = np.random.default_rng(1).integers(0, 90, size=len(y))
        est = LongitudinalRegressionAdjuster(3, n_bootstrap=200, random_state=0)
        est.fit(X, y, treatment=w, groups=groups)
    return X, y, w, groups, est


def test_single_arm_cluster_se_is_statsmodels_cluster_ols():
    # single arm: the estimate is the sample mean, i.e. OLS on a constant
    X, y, _, _ = _linear(300)
    groups = np.repeat(np.arange(60), 5)
    est = LongitudinalRegressionAdjuster(3, n_bootstrap=20, random_state=0)
    est.fit(X, y, groups=groups)
    plain = LongitudinalRegressionAdjuster(3, n_bootstrap=20, random_state=0).fit(X, y)
    for t in range(y.shape[1]):
        ones = np.ones(len(y))
        cluster = sm.OLS(y[:, t], ones).fit(cov_type="cluster", cov_kwds={"groups": groups})
        hc0 = sm.OLS(y[:, t], ones).fit(cov_type="HC0")
        np.testing.assert_allclose(est.means_[0, t], cluster.params[0], rtol=1e-10)
        np.testing.assert_allclose(est.means_se_[0, t], cluster.bse[0], rtol=1e-10)
        np.testing.assert_allclose(plain.means_se_[0, t], hc0.bse[0], rtol=1e-10)
    assert est.n_groups_ == 60 and plain.n_groups_ is None


def test_anchors_cluster_se_are_statsmodels_cluster_ols(clustered_fit):
    X, y, w, groups, est = clustered_fit
    H0 = X[:, :3]
    D = w.astype(float)
    Hc = H0 - H0.mean(axis=0)
    lin_design = np.column_stack([np.ones(len(y)), D, Hc, D[:, None] * Hc])
    dim_design = np.column_stack([np.ones(len(y)), D])
    kw = {"cov_type": "cluster", "cov_kwds": {"groups": groups}}
    for t in range(y.shape[1]):
        lin = sm.OLS(y[:, t], lin_design).fit(**kw)
        dim = sm.OLS(y[:, t], dim_design).fit(**kw)
        row = est.baselines_.iloc[t]
        np.testing.assert_allclose(row["lin"], lin.params[1], rtol=1e-10)
        np.testing.assert_allclose(row["lin_se"], lin.bse[1], rtol=1e-10)
        np.testing.assert_allclose(row["dim"], dim.params[1], rtol=1e-10)
        np.testing.assert_allclose(row["dim_se"], dim.bse[1], rtol=1e-10)


@pytest.mark.filterwarnings("ignore:The groups parameter is ignored by KFold")
def test_singleton_clusters_scale_the_se_by_the_cr1_factor():
    # same folds (a splitter ignores groups), each unit its own cluster: only G/(G-1) differs
    X, y, w, _ = _linear(400)
    cv = KFold(5, shuffle=True, random_state=3)
    plain = LongitudinalRegressionAdjuster(3, cv=cv, n_bootstrap=50, random_state=0)
    plain.fit(X, y, treatment=w)
    single = LongitudinalRegressionAdjuster(3, cv=cv, n_bootstrap=50, random_state=0)
    single.fit(X, y, treatment=w, groups=np.arange(len(y)))
    np.testing.assert_allclose(single.effect_, plain.effect_, rtol=1e-12)
    np.testing.assert_allclose(single.effect_se_ / plain.effect_se_, np.sqrt(400 / 399),
                               rtol=1e-10)


def test_cluster_folds_keep_clusters_whole_and_bad_groups_raise(clustered_fit):
    X, y, w, groups, est = clustered_fit
    for g in np.unique(groups):
        assert np.unique(est.folds_[groups == g]).size == 1
    band = est.conf_int(kind="uniform")
    wald = est.conf_int()
    assert np.all(band[:, 0] <= wald[:, 0]) and np.all(band[:, 1] >= wald[:, 1])
    c = est.band_critical_value()
    assert 1.96 <= c <= 2.6
    new = LongitudinalRegressionAdjuster(3, random_state=0)
    with pytest.raises(ValueError, match=r"groups must have shape \(n_samples,\)=\(600,\)"):
        new.fit(X, y, treatment=w, groups=groups[:10])
    with pytest.raises(ValueError, match="at least 2 distinct clusters"):
        new.fit(X, y, treatment=w, groups=np.zeros(len(y)))
    with pytest.raises(ValueError, match="must not contain NaN"):
        new.fit(X, y, treatment=w, groups=np.where(groups == 0, np.nan, groups))
    with pytest.raises(ValueError, match="groups has 3 clusters, too few for cv=5"):
        new.fit(X, y, treatment=w, groups=np.arange(len(y)) % 3)


def test_cluster_robust_se_tracks_the_sampling_sd_under_cluster_randomisation():
    # treatment randomised by cluster, a shared cluster effect: the per-unit SE is far too
    # small, the cluster-robust one matches the spread of the estimates over replications
    rng = np.random.default_rng(5)
    n_clusters, size, T = 40, 8, 2
    groups = np.repeat(np.arange(n_clusters), size)
    est_, se_c, se_u = [], [], []
    for _ in range(20):
        arm = rng.integers(0, 2, n_clusters)
        arm[:2] = [0, 1]
        w = arm[groups]
        b = rng.normal(size=(len(groups), 1))
        shock = rng.normal(size=(n_clusters, 1))[groups]
        y = b + 2.0 * shock + 0.5 * w[:, None] + 0.3 * rng.normal(size=(len(groups), T))
        c = LongitudinalRegressionAdjuster(cv=3, n_bootstrap=10, random_state=0)
        c.fit(b, y, treatment=w, groups=groups)
        psi = c.influence_[:, 0] - c.influence_[:, 1]
        est_.append(c.effect_)
        se_c.append(c.effect_se_)
        se_u.append(np.sqrt((psi**2).sum(axis=0)) / len(psi))  # the per-unit SE
    sd = np.std(est_, axis=0, ddof=1)
    ratio_c = np.mean(se_c, axis=0) / sd
    ratio_u = np.mean(se_u, axis=0) / sd
    assert np.all((ratio_c > 0.7) & (ratio_c < 1.4)), ratio_c
    assert np.all(ratio_u < 0.5), ratio_u


def test_effect_projection_is_statsmodels_ols_of_the_scores(clustered_fit):
    X, y, w, groups, est = clustered_fit
    scores = est.influence_[:, 0] - est.influence_[:, 1] + est.effect_[None]
    Z = sm.add_constant(X[:, :3])
    for t in range(y.shape[1]):
        ols = sm.OLS(scores[:, t], Z).fit(cov_type="cluster", cov_kwds={"groups": groups})
        np.testing.assert_allclose(est.effect_projection_coef_[t], ols.params, rtol=1e-8)
        np.testing.assert_allclose(est.effect_projection_cov_[t], ols.cov_params(),
                                   rtol=1e-8, atol=1e-14)
    pred, std = est.predict_effect(X[:5], method="projection", return_std=True)
    t = 2
    expected = np.sqrt(np.einsum("ni,ij,nj->n", Z[:5], est.effect_projection_cov_[t], Z[:5]))
    np.testing.assert_allclose(std[:, t], expected, rtol=1e-10)
    np.testing.assert_allclose(pred[:, t], Z[:5] @ est.effect_projection_coef_[t])
    # the projection averages to the effect over the fitted units (OLS with an intercept)
    np.testing.assert_allclose(est.predict_effect(X, method="projection").mean(axis=0),
                               est.effect_, atol=1e-10)


def test_effect_projection_recovers_a_planted_heterogeneous_effect():
    rng = np.random.default_rng(2)
    n, T = 3000, 3
    B = rng.normal(size=(n, 2))
    w = rng.integers(0, 2, n)
    slope = np.array([0.0, 0.5, 1.0])  # effect 1 + slope_t * B_0, no dependence on B_1
    y = (B @ np.array([1.0, -1.0]))[:, None] + w[:, None] * (1 + slope[None] * B[:, :1])
    y = y + rng.normal(size=(n, T))
    est = LongitudinalRegressionAdjuster(n_bootstrap=10, random_state=0)
    est.fit(B, y, treatment=w)
    se = np.sqrt(np.diagonal(est.effect_projection_cov_, axis1=1, axis2=2))
    truth = np.column_stack([np.ones(T), slope, np.zeros(T)])
    z = np.abs(est.effect_projection_coef_ - truth) / se
    assert np.all(z < 4), z
    # the slope is detected where it exists, at t = 2 with z > 10
    assert est.effect_projection_coef_[2, 1] / se[2, 1] > 10
    with pytest.raises(ValueError, match="return_std=True needs method='projection'"):
        est.predict_effect(B, return_std=True)
    with pytest.raises(ValueError, match="method must be 'plugin' or 'projection'"):
        est.predict_effect(B, method="blp")


def test_groups_routed_by_cross_validate():
    X, y, w, _ = _linear(300)
    groups = np.arange(len(y)) // 3
    with sklearn.config_context(enable_metadata_routing=True):
        out = cross_validate(LongitudinalRegressionAdjuster(3, n_bootstrap=10, random_state=0),
                             X, y, cv=GroupKFold(3), return_estimator=True,
                             params={"treatment": w, "groups": groups})
    for fitted in out["estimator"]:
        assert fitted.n_groups_ in (66, 67)  # the training clusters of each split


def test_text_summary_matches_the_frame(clustered_fit):
    *_, est = clustered_fit
    text = est.summary(as_text=True)
    frame = est.summary()
    assert "Longitudinal regression adjustment (DynamicRA): effect per period" in text
    assert "cluster-robust, 90 clusters" in text
    assert f"{est.band_critical_value():.3f}" in text
    for t in range(est.n_periods_):
        line = next(s for s in text.splitlines() if s.startswith(f"t={t} ") and "." in s)
        numbers = [float(v) for v in line.split()[1:]]
        np.testing.assert_allclose(numbers[:2], frame.iloc[t][["estimate", "std_err"]],
                                   atol=6e-5)
        np.testing.assert_allclose(numbers[4:6], frame.iloc[t][["ci_lower", "ci_upper"]],
                                   atol=6e-5)
    single = LongitudinalRegressionAdjuster(3, n_bootstrap=10, random_state=0)
    X, y, _, _ = _linear(200)
    assert "regime mean per period" in single.fit(X, y).summary(as_text=True)
