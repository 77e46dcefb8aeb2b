"""The one-pass "auto" choice and calibration of ESERegressor against their definitions.

The estimator scores every (damping, share trend) candidate with one batched matrix product
and computes the conformal calibration scores without a second full fit. These tests recompute
both from their definitions, the slow way: each candidate's shares from an explicit weighted
mean and a weighted least-squares line (``np.polyfit``), clipped and renormalised, scored on
the newest training windows; the calibration scores from a separately fitted estimator on the
older windows. A wrong filter, a missed clip, a wrong validation set or calibration fit breaks
them.
"""

import warnings

import numpy as np
import pytest

from sklearn_icml26.datasets import make_interacting_systems
from sklearn_icml26.forecasting import ESERegressor, sliding_window
from sklearn_icml26.forecasting._shares import (
    DAMPING_GRID,
    SHARE_TREND_GRID,
    _candidate_errors,
    _totals,
)


def _reference_shares(window, damping, trend, horizon):
    """Shares of one window (n, p) from the definition (no shared code with the package)."""
    n, p = window.shape
    total = window.sum(axis=0)
    valid = np.isfinite(total) & (total > 0)
    weights = np.where(valid, (1.0 - damping) ** np.arange(p - 1, -1, -1.0), 0.0)
    if weights.sum() <= 0:
        return np.full(n, 1.0 / n)
    props = window[:, valid] / total[valid]
    w, t = weights[valid], np.arange(p, dtype=float)[valid] - (p - 1)
    s_bar = props @ w / w.sum()
    if trend == 0:
        return s_bar
    t_bar = w @ t / w.sum()
    if np.count_nonzero(w) < 2 or w @ (t - t_bar) ** 2 / w.sum() <= 1e-12:
        slope = np.zeros(n)
    else:  # weighted least-squares line of every system's proportions on the step time
        slope = np.polyfit(t, props.T, 1, w=np.sqrt(w))[0]  # one line per system
    e = s_bar + trend * slope * (horizon - t_bar)
    if not (window < 0).any():
        e = np.clip(e, 0.0, None)
    return e / e.sum() if e.sum() > 0 else np.full(n, 1.0 / n)


def _reference_scores(W, Y, damping_grid, trend_grid, horizon, relative=True):
    """selection_scores_ from the definition: mean over systems of RMSE / RMSE(random walk)."""
    total = Y.sum(axis=1)
    rw = np.sqrt(np.mean((W[:, :, -1] - Y) ** 2, axis=0))
    weight = 1.0 / rw if relative else np.ones(Y.shape[1])
    scores = np.empty((len(damping_grid), len(trend_grid)))
    for g, lam in enumerate(damping_grid):
        for j, trend in enumerate(trend_grid):
            e = np.array([_reference_shares(w, lam, trend, horizon) for w in W])
            rmse = np.sqrt(np.mean((total[:, None] * e - Y) ** 2, axis=0))
            scores[g, j] = np.mean(rmse * weight)
    return scores


def _hard_panel(seed=0, T=160, n=8):
    """Drifting shares with one system fading out (the trend shares need their clip there),
    two zero-total days (invalid steps) and a zero newest day for some windows."""
    Y, _, _ = make_interacting_systems(n, T, random_state=seed, share_noise=0.02,
                                       aggregate_noise=0.02, share_reversion=0.3,
                                       share_drift=0.02)
    # from step 110 on, system 0 fades (its value falls 22 % a step, a convex decline that the
    # trend line extrapolates below 0)
    Y[:, 0] *= np.exp(-0.25 * np.maximum(0, np.arange(T) - 110))
    Y[[100, 131]] = 0.0
    return Y


@pytest.mark.parametrize("seed", [0, 1])
def test_auto_choice_scores_equal_their_definition(seed):
    Y = _hard_panel(seed)
    X, y = sliding_window(Y, 12, horizon=2)
    est = ESERegressor(horizon=2).fit(X, y)
    N = X.shape[0]
    n_val = int(np.ceil(0.25 * N))
    W = X.reshape(N, Y.shape[1], 12)[-n_val:]
    ref = _reference_scores(W, y[-n_val:], DAMPING_GRID, SHARE_TREND_GRID, 2)
    np.testing.assert_allclose(est.selection_scores_, ref, rtol=1e-10)
    g, j = np.unravel_index(np.argmin(ref), ref.shape)
    assert (est.damping_, est.share_trend_) == (DAMPING_GRID[g], SHARE_TREND_GRID[j])
    # the clip is exercised: some trend shares of the fading system are negative before it
    assert any(_reference_shares(w, lam, 1.0, 2)[0] == 0.0 for lam in DAMPING_GRID for w in W)
    # predictions are the aggregate forecast times the definition's shares
    shares = np.array([_reference_shares(w, est.damping_, est.share_trend_, 2)
                       for w in X.reshape(N, Y.shape[1], 12)[-20:]])
    pred = est.predict(X[-20:])
    np.testing.assert_allclose(pred, pred.sum(axis=1, keepdims=True) * shares, rtol=1e-10)
    # the data-unit score ranks the same candidates by their plain RMSE
    plain = ESERegressor(horizon=2, selection_score="rmse", calibration=None).fit(X, y)
    ref = _reference_scores(W, y[-n_val:], DAMPING_GRID, SHARE_TREND_GRID, 2, relative=False)
    np.testing.assert_allclose(plain.selection_scores_, ref, rtol=1e-10)


@pytest.mark.parametrize("params", [
    {},
    {"calibration": 0.5, "validation_fraction": 0.1},  # calibration rows beyond validation's
    {"damping": 0.25},
    {"stop": "ted", "max_iter": 4},
])
def test_calibration_scores_equal_a_separate_fit_on_the_older_windows(params):
    Y = _hard_panel(2)
    X, y = sliding_window(Y, 12)
    N = X.shape[0]
    est = ESERegressor(**params).fit(X, y)
    fraction = params.get("calibration", 0.2)
    n_cal = int(np.ceil(fraction * N))
    older = ESERegressor(**{**params, "calibration": None})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pred = older.fit(X[:-n_cal], y[:-n_cal]).predict(X[-n_cal:])
    k = est.aggregate_lags_
    sigma = np.maximum(np.abs(X.reshape(N, -1, 12)[-n_cal:, :, -k:]).mean(axis=2),
                       1e-3 * np.abs(y).mean(axis=0))
    np.testing.assert_allclose(est.calibration_scores_, np.abs(y[-n_cal:] - pred) / sigma,
                               rtol=1e-10, atol=1e-13)
    # and the weighted fit: integer weights equal repeated windows (both paths)
    sw = np.random.default_rng(0).integers(1, 3, N).astype(float)
    weighted = ESERegressor(**params).fit(X, y, sample_weight=sw)
    n_cal_w = weighted.calibration_scores_.shape[0]
    older_w = ESERegressor(**{**params, "calibration": None})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        older_w.fit(X[:-n_cal_w], y[:-n_cal_w], sample_weight=sw[:-n_cal_w])
        pred_w = older_w.predict(X[-n_cal_w:])
    sigma_w = np.maximum(np.abs(X.reshape(N, -1, 12)[-n_cal_w:, :, -weighted.aggregate_lags_:])
                         .mean(axis=2), 1e-3 * np.average(np.abs(y), axis=0, weights=sw))
    np.testing.assert_allclose(weighted.calibration_scores_,
                               np.abs(y[-n_cal_w:] - pred_w) / sigma_w, rtol=1e-10, atol=1e-13)


def test_candidate_errors_do_not_depend_on_the_chunks():
    # two overlapping row sets (as the full and the calibration fit), negative windows and
    # chunks of one row against one chunk: the same sums
    rng = np.random.default_rng(5)
    W = rng.uniform(0.0, 2.0, (30, 6, 7))
    W[4, 2, :] = -0.5  # a window with negative values: no clip, renormalised
    W[9, :, -1] = 0.0  # invalid newest step: damping 1 gives uniform shares
    Y = rng.uniform(0.5, 1.5, (30, 6))
    M, valid = _totals(W)
    candidates = [(lam, tr) for lam in DAMPING_GRID for j, tr in enumerate(SHARE_TREND_GRID)
                  if not (j and lam == 1)]
    sets = np.zeros((2, 30))
    sets[0, 10:] = 1.0 / 20
    sets[1, :22] = rng.uniform(0.1, 1.0, 22)
    nonneg = ~(W < 0).any(axis=(1, 2))
    one = _candidate_errors(W, M, valid, Y, Y.sum(axis=1), candidates, 1, sets, nonneg,
                            chunk_size=1)
    big = _candidate_errors(W, M, valid, Y, Y.sum(axis=1), candidates, 1, sets, nonneg)
    np.testing.assert_allclose(one, big, rtol=1e-12)
    # against the definition, row by row
    for c, (lam, trend) in enumerate(candidates):
        e = np.array([_reference_shares(w, lam, trend, 1) for w in W])
        err2 = (Y.sum(axis=1)[:, None] * e - Y) ** 2
        np.testing.assert_allclose(big[:, :, c], sets @ err2, rtol=1e-9)
