"""SkewD knots, direction p-values, residual independence tests and progress output.

Known answers: quantile knots hold equal sample counts, the wild-bootstrap statistic equals the
HSIC score, Vuong's p-value matches its formula; calibration of the p-values on planted null
pairs (no preferred direction) and power on a planted identifiable pair.
"""

import numpy as np
import pytest
import torch
from scipy.special import ndtr
from scipy.stats import kstest
from sklearn.preprocessing import SplineTransformer

from sklearn_icml26.causal_discovery import (
    SkewDCausalDiscoverer,
    SkewNormalLSNMRegressor,
    score_pairs,
)
from sklearn_icml26.causal_discovery._skewd import (
    _hsic,
    _vuong_pvalue,
    _wild_bootstrap_pvalue,
)
from sklearn_icml26.causal_discovery._skewnormal import _knot_positions
from sklearn_icml26.datasets import make_skewed_lsnm_pair

torch.set_num_threads(1)

FAST = dict(penalty_search="none", n_restarts=0, n_knots_loc=6, n_knots_scale=4)
# default bases at fixed penalties: the residuals must be good enough for the tests of them
MID = dict(penalty_search="none", n_restarts=0)


def test_quantile_knots_hold_equal_counts_and_uniform_matches_sklearn():
    x = np.random.RandomState(0).lognormal(size=2000)
    q = _knot_positions(x, 9, "quantile").ravel()
    counts = np.histogram(x, bins=q)[0]
    # every interval holds 1/8 of the samples (uniform knots put ~90% in the first two)
    assert np.all(np.abs(counts - 250) <= 2)
    uniform_counts = np.histogram(x, bins=_knot_positions(x, 9, "uniform").ravel())[0]
    assert uniform_counts[:2].sum() > 0.8 * x.size
    # uniform knots: the same basis as scikit-learn's n_knots / knots="uniform"
    ref = SplineTransformer(n_knots=9, degree=3, extrapolation="linear").fit(x[:, None])
    ours = SplineTransformer(knots=_knot_positions(x, 9, "uniform"), degree=3,
                             extrapolation="linear").fit(x[:, None])
    grid = np.linspace(-1, 20, 50)[:, None]
    np.testing.assert_allclose(ours.transform(grid), ref.transform(grid), atol=1e-12)


def test_quantile_knots_with_ties_stay_strictly_increasing():
    x = np.r_[np.zeros(700), np.linspace(0.1, 3.0, 300)]  # 70% ties at 0
    q = _knot_positions(x, 12, "quantile").ravel()
    assert q[0] == 0.0 and q[-1] == 3.0 and np.all(np.diff(q) > 0)
    x = np.r_[np.linspace(-1.0, 0.0, 300), np.ones(700)]  # ties at the maximum
    q = _knot_positions(x, 12, "quantile").ravel()
    assert q[-1] == 1.0 and np.all(np.diff(q) > 0)


def test_regressor_quantile_knots_fit_where_the_data_are():
    rng = np.random.RandomState(1)
    x = rng.lognormal(0, 1, 1500)
    f = np.log1p(4 * x) * np.sin(3 * np.log1p(x))
    y = f + 0.1 * rng.randn(x.size)
    errs = {}
    for knots in ("uniform", "quantile"):
        reg = SkewNormalLSNMRegressor(knots=knots, random_state=0, **FAST).fit(x[:, None], y)
        t = reg.splines_loc_[0].bsplines_[0].t
        inner = t[reg.degree:-reg.degree] * reg.scale_[0] + reg.mean_[0]
        if knots == "quantile":
            np.testing.assert_allclose(inner, np.quantile(x, np.linspace(0, 1, 6)),
                                       rtol=1e-10)
        dense = x < np.quantile(x, 0.5)  # where half of the data sit
        errs[knots] = np.sqrt(np.mean((reg.predict(x[dense, None]) - f[dense]) ** 2))
    assert errs["quantile"] < 0.7 * errs["uniform"]


def test_discoverer_knots_reach_the_regressors():
    X, _ = make_skewed_lsnm_pair(200, model="LS", random_state=0)
    d = SkewDCausalDiscoverer(knots="quantile", estimator=dict(FAST), random_state=0).fit(X)
    assert {e.knots for e in d.estimators_.values()} == {"quantile"}
    reg = SkewNormalLSNMRegressor(knots="quantile", **FAST)
    d = SkewDCausalDiscoverer(estimator=reg, random_state=0).fit(X)  # None keeps its own
    assert d.estimators_["forward"].knots == "quantile"
    d = SkewDCausalDiscoverer(knots="uniform", estimator=reg, random_state=0).fit(X)
    assert d.estimators_["forward"].knots == "uniform"
    d = SkewDCausalDiscoverer(estimator=dict(FAST), random_state=0).fit(X)
    assert d.estimators_["forward"].knots == "uniform"  # the regressor's default


def test_wild_bootstrap_statistic_is_the_hsic_score():
    rng = np.random.RandomState(0)
    a, r_a, b = rng.randn(3, 200)
    r_b = b ** 2 + 0.1 * rng.randn(200)  # the backward residual depends on its cause
    p, p2, stat = _wild_bootstrap_pvalue((a, r_a), (b, r_b), 1.0, 99, rng, 0)
    np.testing.assert_allclose(stat, _hsic(b, r_b, 0) - _hsic(a, r_a, 0), rtol=1e-10)
    assert p == p2 == pytest.approx(0.01)  # no replicate reaches the statistic: 1 / (B + 1)
    p_wrong, p2, _ = _wild_bootstrap_pvalue((a, r_a), (b, r_b), -1.0, 99, rng, 0)
    assert p_wrong == 1.0 and p2 == pytest.approx(0.01)  # the statistic opposes the decision


def test_wild_bootstrap_is_calibrated_under_independence():
    rng = np.random.RandomState(3)
    p = []
    for _ in range(150):
        a, r_a, b, r_b = rng.randn(4, 80)
        r_b = np.exp(r_b)  # skewed, still independent
        sign = rng.choice((-1.0, 1.0))
        p.append(_wild_bootstrap_pvalue((a, r_a), (b, r_b), sign, 99, rng, 0)[:2])
    p_decision, p_two_sided = np.array(p).T
    assert kstest(p_two_sided, "uniform").pvalue > 0.01
    assert 0.0 < np.mean(p_two_sided < 0.1) < 0.2
    assert np.mean(p_decision < 0.1) <= np.mean(p_two_sided < 0.1)  # valid, conservative
    assert np.mean(p_decision == 1.0) > 0.3  # about half point the other way


def test_vuong_pvalue_formula():
    d = np.array([0.5, 1.5, -0.2, 0.8, 0.1, 0.9])
    z = d.sum() / (np.sqrt(d.size) * d.std(ddof=1))
    assert _vuong_pvalue(d) == pytest.approx(2 * ndtr(-abs(z)), rel=1e-12)
    assert _vuong_pvalue(np.zeros(5)) == 1.0


def test_direction_pvalue_small_on_identifiable_pair_and_swap_invariant():
    X, direction = make_skewed_lsnm_pair(400, model="LS", skewness="strong", random_state=2)
    est = SkewDCausalDiscoverer(n_bootstrap=199, estimator=dict(MID), random_state=0)
    d = est.fit(X)
    assert d.direction_ == direction
    # the smallest attainable p-value: no replicate reaches the statistic
    assert d.direction_pvalue_ == d.pvalues_["it"] == pytest.approx(1 / 200)
    assert set(d.pvalues_) == {"it", "it-preference", "ll"}
    s = est.fit(X[:, ::-1]).pvalues_["it"]
    assert s == pytest.approx(d.pvalues_["it"], abs=1e-12)
    d = SkewDCausalDiscoverer(criterion="ll", estimator=dict(MID), random_state=0).fit(X)
    assert "it" not in d.pvalues_ and d.direction_pvalue_ == d.pvalues_["ll"] < 1e-6


def test_direction_pvalue_not_small_on_null_pairs():
    rng = np.random.RandomState(5)
    p = []
    for k in range(8):
        x = rng.randn(200)
        X = np.c_[x, 0.8 * x + 0.6 * rng.randn(200)]  # linear Gaussian: no preference
        d = SkewDCausalDiscoverer(n_bootstrap=99, estimator=dict(MID), random_state=k)
        p.append(d.fit(X).pvalues_["it-preference"])
    # in-sample residuals (no cross-fitting) or a bootstrap of the wrong statistic make
    # these p-values pile up near 0 or 1; calibrated ones spread over [0, 1]
    p = np.array(p)
    assert 0.15 < np.median(p) < 0.85 and np.sum(p < 0.05) <= 2 and np.sum(p > 0.95) <= 2


def test_kci_independence_pvalues():
    pytest.importorskip("causallearn", reason="KCI p-values need causal-learn (causal extra)")
    X, direction = make_skewed_lsnm_pair(400, model="LS", skewness="strong", random_state=2)
    d = SkewDCausalDiscoverer(independence_test="kci", estimator=dict(MID),
                              random_state=0).fit(X)
    causal, anti = ("forward", "backward") if direction == 1 else ("backward", "forward")
    assert d.independence_pvalues_[causal] > 0.05 > d.independence_pvalues_[anti]


def test_verbose_prints_one_line_per_pair(capsys):
    X, _ = make_skewed_lsnm_pair(150, model="LS", random_state=0)
    SkewDCausalDiscoverer(verbose=1, n_bootstrap=19, estimator=dict(FAST),
                          random_state=0).fit(X)
    # the progress helper's plain line in a log (stderr is not a terminal here)
    lines = [ln for ln in capsys.readouterr().err.splitlines()
             if ln.startswith("SkewD pair") and "1/1" in ln]
    assert len(lines) == 1 and "score" in lines[0] and "p=" in lines[0]
    assert "\r" not in lines[0] and "\x1b" not in lines[0]
    SkewDCausalDiscoverer(estimator=dict(FAST), random_state=0).fit(X)
    captured = capsys.readouterr()
    assert captured.out == "" and "SkewD pair" not in captured.err


def test_score_pairs_returns_pvalues():
    pairs = [make_skewed_lsnm_pair(150, model="LS", random_state=k)[0] for k in range(2)]
    est = SkewDCausalDiscoverer(n_bootstrap=19, estimator=dict(FAST), random_state=0)
    res = score_pairs(pairs, estimator=est)
    assert res.pvalue.shape == (2,) and np.all((res.pvalue > 0) & (res.pvalue <= 1))
    np.testing.assert_array_equal(res.pvalue, res.pvalue_it)
    assert np.all(np.isfinite(res.pvalue_ll))
    res = score_pairs(pairs, estimator=SkewDCausalDiscoverer(estimator=dict(FAST)))
    assert np.all(np.isnan(res.pvalue_it))


def test_verbose_penalty_search_prints_one_line_per_evaluated_pair(capsys):
    X, _ = make_skewed_lsnm_pair(150, model="LS", random_state=0)
    SkewNormalLSNMRegressor(penalty_search="tic", penalty_grid=(-2, 0, 2), n_restarts=0,
                            n_knots_loc=6, n_knots_scale=4, verbose=1).fit(X[:, :1], X[:, 1])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("penalty search (tic)")]
    # 3 log alphas at log kappa 0, then the 2 other log kappas at the best log alpha
    assert [ln.split("%")[1].split()[0] for ln in lines[1:]] == [f"{k}/5" for k in range(1, 6)]
    assert all("log alpha=" in ln for ln in lines[1:])
    assert not any("\r" in ln or "\x1b" in ln for ln in lines)
    SkewNormalLSNMRegressor(penalty_search="tic", penalty_grid=(-2, 0, 2), n_restarts=0,
                            n_knots_loc=6, n_knots_scale=4).fit(X[:, :1], X[:, 1])
    assert capsys.readouterr().err == ""
