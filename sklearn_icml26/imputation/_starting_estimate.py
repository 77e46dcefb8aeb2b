"""The starting estimate of NeuroMambaImputer, before the network's correction.

The temporal estimate (linear interpolation from the nearest observed neighbours, the
smoothed level: torch, run inside the module), the seasonal profile of the stream and of
every row (numpy) and the cross-group fills (a ridge, or out-of-fold gradient-boosted trees;
numpy and scikit-learn), fitted once on the standardised stream.
"""

import numpy as np
import torch


def _interpolate(x, obs, exclude_self=False, anchors=None):
    """Linear interpolation along axis 1 from the entries where ``obs`` is True.

    Parameters
    ----------
    x : tensor of shape (batch, length, features)
        Values (ignored where ``obs`` is False).
    obs : bool tensor of the shape of ``x``
        Entries to interpolate from.
    exclude_self : bool, default=False
        Interpolate every entry from its nearest observed neighbours *other than itself*
        (leave-one-out; equal to the plain interpolation at unobserved entries).
    anchors : tuple of four tensors of shape (batch, features), default=None
        ``(left_value, left_distance, right_value, right_distance)``: the nearest observed
        entry before the window (at position ``-left_distance``) and after it (at
        ``length - 1 + right_distance``); a distance of 0 means there is none. Used where
        the window itself has no observed entry on that side.

    Returns
    -------
    values : tensor of the shape of ``x``
        Interpolated values; the nearest usable value before the first or after the last
        one, 0 where a column has no usable entry.
    distance : tensor of the shape of ``x``
        Rows to the nearest usable entry (``length`` where there is none).
    """
    b, w, f = x.shape
    t = torch.arange(w, device=x.device).view(1, w, 1).expand(b, w, f)
    prev = torch.where(obs, t, torch.full_like(t, -1)).cummax(1).values
    nxt = torch.where(obs, t, torch.full_like(t, w)).flip(1).cummin(1).values.flip(1)
    if exclude_self:
        prev = torch.cat([torch.full_like(prev[:, :1], -1), prev[:, :-1]], dim=1)
        nxt = torch.cat([nxt[:, 1:], torch.full_like(nxt[:, :1], w)], dim=1)
    has_prev, has_next = prev >= 0, nxt < w
    x_prev = x.gather(1, prev.clamp(min=0))
    x_next = x.gather(1, nxt.clamp(max=w - 1))
    tf, prev_f, next_f = t.to(x.dtype), prev.to(x.dtype), nxt.to(x.dtype)
    if anchors is not None:
        left_value, left_distance, right_value, right_distance = (
            a.to(x.dtype)[:, None, :].expand(b, w, f) for a in anchors)
        use_left, use_right = ~has_prev & (left_distance > 0), ~has_next & (right_distance > 0)
        x_prev = torch.where(use_left, left_value, x_prev)
        prev_f = torch.where(use_left, -left_distance, prev_f)
        x_next = torch.where(use_right, right_value, x_next)
        next_f = torch.where(use_right, (w - 1) + right_distance, next_f)
        has_prev, has_next = has_prev | use_left, has_next | use_right
    frac = (tf - prev_f) / (next_f - prev_f).clamp(min=1)
    values = torch.where(has_prev & has_next, x_prev + frac * (x_next - x_prev),
                         torch.where(has_prev, x_prev,
                                     torch.where(has_next, x_next, torch.zeros_like(x))))
    none = torch.full_like(tf, float(w))
    distance = torch.minimum(torch.where(has_prev, tf - prev_f, none),
                             torch.where(has_next, next_f - tf, none))
    return values, distance


def _box_mean(x, obs, half):
    """Mean of ``x`` over the entries where ``obs`` is True within ``half`` rows of each row
    (axis 1, inside the window); 0 where there is none."""
    xs = torch.where(obs, x, torch.zeros_like(x))
    pad = torch.zeros_like(xs[:, :1])
    csum = torch.cat([pad, xs.cumsum(1)], dim=1)
    ccount = torch.cat([pad, obs.to(x.dtype).cumsum(1)], dim=1)
    w = x.shape[1]
    t = torch.arange(w, device=x.device)
    lo, hi = (t - half).clamp(min=0), (t + half + 1).clamp(max=w)
    total = csum[:, hi] - csum[:, lo]
    count = ccount[:, hi] - ccount[:, lo]
    return total / count.clamp(min=1.0)


def _moving_departure(Z, obs, rows, period):
    """Departure of the observed values of one series from their centred moving mean (one
    period wide, at least half of it observed); NaN elsewhere. Shape (len(rows), F)."""
    n_features = Z.shape[1]
    lo, hi = period // 2, period - period // 2
    z, o = np.where(obs[rows], Z[rows], 0.0), obs[rows].astype(np.float64)
    csum = np.vstack([np.zeros((1, n_features)), np.cumsum(z, 0)])
    ccount = np.vstack([np.zeros((1, n_features)), np.cumsum(o, 0)])
    t = np.arange(len(rows))
    start, stop = np.clip(t - lo, 0, len(rows)), np.clip(t + hi, 0, len(rows))
    n_in = ccount[stop] - ccount[start]
    local = (csum[stop] - csum[start]) / np.maximum(n_in, 1.0)
    use = o.astype(bool) & (n_in >= period / 2)
    return np.where(use, z - local, np.nan)


def _local_profile(Z, obs, series, period, table, n_cycles):
    """Seasonal profile of every row from the neighbouring cycles of its own series.

    At row ``t`` the departures from the moving mean (:func:`_moving_departure`) at
    ``t +- k period``, ``k = 1..n_cycles``, weighted ``1 / k``, are averaged together with the
    stream-wide ``table`` at the row's phase, which weighs as much as all the neighbours
    together (shrinkage: a cycle whose neighbours are all missing gets the table). The row
    itself never enters its own profile. Shape (n_rows, F).
    """
    n_rows, n_features = Z.shape
    out = np.zeros((n_rows, n_features))
    prior = sum(2.0 / k for k in range(1, n_cycles + 1))
    for rows in series:
        dep = _moving_departure(Z, obs, rows, period)
        n = len(rows)
        num = prior * table[np.arange(n) % period]
        den = np.full((n, n_features), prior)
        for k in range(1, n_cycles + 1):
            lag = k * period
            if lag >= n:
                break
            for src, dst in ((slice(0, n - lag), slice(lag, n)), (slice(lag, n),
                                                                  slice(0, n - lag))):
                d = dep[src]
                ok = ~np.isnan(d)
                num[dst] += np.where(ok, d / k, 0.0)
                den[dst] += ok / k
        out[rows] = num / den
    return out


def _seasonal_table(Z, obs, series, period):
    """Mean departure of each column from its centred moving mean (one period wide), per
    phase of the cycle: ndarray of shape (period, F), each column centred (0 without data).

    The moving mean of a row uses the observed values of its series within ``period`` rows
    (at least half of them observed); the table is the seasonal profile of the stream.
    """
    n_features = Z.shape[1]
    total = np.zeros((period, n_features))
    count = np.zeros((period, n_features))
    for rows in series:
        dep = _moving_departure(Z, obs, rows, period)
        use = ~np.isnan(dep)
        phase = np.arange(len(rows)) % period
        np.add.at(total, phase, np.where(use, dep, 0.0))
        np.add.at(count, phase, use)
    table = np.where(count > 0, total / np.maximum(count, 1.0), 0.0)
    return table - table.mean(0)


def _fill_inputs(Z, groups, cols, phase, period):
    """Predictors of the fill of the group ``cols``: the other groups' columns (NaN where
    missing) and, with a period, the cycle's phase as a sine and a cosine."""
    others = np.setdiff1d(np.arange(Z.shape[1]), cols)
    P = Z[:, others]
    if period:
        angle = 2.0 * np.pi * phase / period
        P = np.c_[P, np.sin(angle), np.cos(angle)]
    return P


def _boosted_cross_fill(Z, obs, groups, folds, phase=None, period=None, max_iter=100,
                        random_state=None):
    """Out-of-fold gradient-boosted regression of each column on the other groups.

    Each standardised column is regressed (scikit-learn's histogram gradient boosting, which
    takes missing predictors natively) on the columns of the other groups, plus the phase of
    the cycle when ``period`` is set, on the rows where it is observed. ``folds`` splits the
    rows into contiguous blocks; the fill of a row comes from the models fitted without its
    fold, so a value never predicts itself.

    Returns
    -------
    fill : ndarray of shape (n_rows, F)
        Out-of-fold fill, NaN where no model exists (a single group, or a column with too few
        observed rows).
    models : list of length F
        Per column ``None`` or the list of its fold models.
    """
    from sklearn.ensemble import HistGradientBoostingRegressor

    n_rows, n_features = Z.shape
    fill = np.full((n_rows, n_features), np.nan)
    models = [None] * n_features
    if len(groups) < 2:
        return fill, models
    Zn = np.where(obs, Z, np.nan)
    n_folds = int(folds.max()) + 1
    for cols in groups:
        P = _fill_inputs(Zn, groups, cols, phase, period)
        for j in cols:
            fitted = []
            for k in range(n_folds):
                train = obs[:, j] & (folds != k)
                if train.sum() < 2:  # too few rows: no fill for this column in any fold
                    fitted = None
                    fill[:, j] = np.nan
                    break
                model = HistGradientBoostingRegressor(max_iter=max_iter,
                                                      early_stopping=False,
                                                      random_state=random_state)
                fitted.append(model.fit(P[train], Z[train, j]))
                test = folds == k
                if test.any():
                    fill[test, j] = model.predict(P[test])
            models[j] = fitted
    return fill, models


def _predict_cross_fill(Z, obs, groups, models, phase=None, period=None):
    """Fill of every row from the fold models (their mean); NaN where a column has none."""
    n_rows, n_features = Z.shape
    fill = np.full((n_rows, n_features), np.nan)
    Zn = np.where(obs, Z, np.nan)
    for cols in groups:
        if all(models[j] is None for j in cols):
            continue
        P = _fill_inputs(Zn, groups, cols, phase, period)
        for j in cols:
            if models[j] is not None:
                fill[:, j] = np.mean([m.predict(P) for m in models[j]], axis=0)
    return fill


def _cross_group_fill(Z, obs, groups, alpha=1.0):
    """Ridge regression of each standardised column on the columns of the *other* groups.

    Missing predictors count as 0 (the mean); each column is fitted on the rows where it is
    observed. Returns (weight (F, F), zero inside a column's own group, intercept (F,)); both
    zero when there is a single group.
    """
    n_features = Z.shape[1]
    weight, intercept = np.zeros((n_features, n_features)), np.zeros(n_features)
    if len(groups) < 2:
        return weight, intercept
    Z0 = np.where(obs, Z, 0.0)
    for cols in groups:
        others = np.setdiff1d(np.arange(n_features), cols)
        for j in cols:
            rows = obs[:, j]
            A = Z0[rows][:, others]
            A_mean = A.mean(0)
            y = Z0[rows, j]
            Ac = A - A_mean
            coef = np.linalg.solve(Ac.T @ Ac + alpha * np.eye(len(others)),
                                   Ac.T @ (y - y.mean()))
            weight[j, others] = coef
            intercept[j] = y.mean() - A_mean @ coef
    return weight, intercept
