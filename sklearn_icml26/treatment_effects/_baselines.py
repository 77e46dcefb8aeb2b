"""The per-period anchors of the adjuster: difference in means, CUPED and Lin's HC2 regression
(cluster-robust standard errors when units are grouped).

With frequency weights ``w`` every anchor is the one of the units repeated by their integer
weights: weighted means and variances (``n = sum(w)``), weighted least squares, and HC2 with
the leverage of one copy (``h_ii / w_i`` of the weighted design)."""

import warnings

import numpy as np
import pandas as pd


def _welch(y1, y0, w1=None, w0=None):
    if w1 is None:
        diff = y1.mean() - y0.mean()
        var = y1.var(ddof=1) / len(y1) + y0.var(ddof=1) / len(y0)
        return diff, float(np.sqrt(var))
    parts = []
    for y, w in ((y1, w1), (y0, w0)):
        total = w.sum()
        mean = np.average(y, weights=w)
        parts.append((mean, np.sum(w * (y - mean) ** 2) / (total - 1) / total))
    return parts[0][0] - parts[1][0], float(np.sqrt(parts[0][1] + parts[1][1]))


def _coef_std_err(row, resid, clusters, n_params, n=None):
    """Cluster-robust (CR1) standard error of one OLS coefficient ``row @ y``.

    ``row`` is the coefficient's row of ``(Z'Z)^-1 Z'``, ``resid`` the residuals,
    ``clusters`` the cluster labels of the units of this regression and ``n_params`` the
    number of regression parameters ``K``: the variance is ``G/(G-1) (N-1)/(N-K) sum_g
    (sum_{i in g} row_i e_i)^2``, statsmodels' ``cov_type="cluster"``; NaN with fewer than
    2 clusters or no residual degrees of freedom. ``n`` (default ``len(resid)``) is the
    number of observations (``sum(w)`` with frequency weights, ``row`` and ``resid`` then of the
    ``sqrt(w)``-scaled design, whose products are the sums over a unit's copies).
    """
    codes, clusters_here = np.unique(clusters, return_inverse=True)
    n_groups = len(codes)
    n = len(resid) if n is None else n
    if n_groups < 2 or n <= n_params:
        return np.nan
    sums = np.bincount(clusters_here, weights=row * resid, minlength=n_groups)
    factor = n_groups / (n_groups - 1) * (n - 1) / (n - n_params)
    return float(np.sqrt(factor * np.sum(sums**2)))


_HIGH_LEVERAGE = 1e-10  # units with h_ii >= 1 - _HIGH_LEVERAGE carry no residual information


def _independent_columns(Z, tol=1e-9):
    """Indices of the columns of ``Z`` kept when each aliased column is dropped in order.

    A column is kept when its part orthogonal to the kept columns before it is larger than
    ``tol`` times its norm (Gram-Schmidt, reorthogonalised): R's ``lm`` convention, so a
    duplicated covariate or dummies summing to the intercept drop out and leave every
    coefficient of the other columns unchanged.
    """
    basis = np.zeros((Z.shape[0], 0))
    keep = []
    for j in range(Z.shape[1]):
        column = Z[:, j]
        size = np.linalg.norm(column)
        if size == 0:
            continue
        v = column - basis @ (basis.T @ column)
        v = v - basis @ (basis.T @ v)
        residual = np.linalg.norm(v)
        if residual > tol * size:
            basis = np.column_stack([basis, v / residual])
            keep.append(j)
    return keep


def _lin_hc2(y, D, Hc, clusters=None, w=None):
    """Lin's interacted regression: the treatment coefficient and its HC2 standard error.

    With ``clusters`` (cluster codes of the units) the standard error is the CR1
    cluster-robust one of statsmodels' ``cov_type="cluster"`` instead of HC2.

    Returns ``(estimate, std_err, n_high_leverage, dof, identified)``. Aliased columns are
    dropped in column order (``_independent_columns``); ``identified`` says whether the
    treatment coefficient was estimable in the full design (no dropped column involves the
    treatment column). Units with leverage ``h_ii >= 1 - 1e-10`` (e.g. the only unit of a
    covariate level in its arm) have zero residuals that say nothing of their variance: in
    the HC2 meat they get the pooled residual variance ``RSS / (n - rank)`` instead of
    ``e_i^2 / (1 - h_ii)`` (0/0), and the standard error is NaN without residual degrees of
    freedom.
    """
    n = len(y)
    Z = np.column_stack([np.ones(n), D, Hc, D[:, None] * Hc])
    root = None if w is None else np.sqrt(w)
    if root is not None:  # WLS: OLS of the rows scaled by sqrt(w) (all w > 0 here)
        Z, y = Z * root[:, None], y * root
    keep = _independent_columns(Z)
    identified = len(_independent_columns(np.delete(Z, 1, axis=1))) == len(keep) - 1
    Zk = Z[:, keep]
    Q, R = np.linalg.qr(Zk)
    coef_rows = np.linalg.solve(R, Q.T)  # (Z'Z)^-1 Z' of the kept design
    c = coef_rows[keep.index(1)]
    estimate = float(c @ y)
    resid = y - Q @ (Q.T @ y)
    h = np.einsum("ij,ij->i", Q, Q)
    n_obs = n if w is None else float(w.sum())
    if root is not None:  # one copy's leverage and squared residual
        h, e2 = h / w, resid**2 / w
    else:
        e2 = resid**2
    high = h >= 1.0 - _HIGH_LEVERAGE
    dof = n_obs - Zk.shape[1]
    meat = np.empty(n)
    meat[~high] = e2[~high] / (1.0 - h[~high])
    if high.any():
        meat[high] = np.sum(resid**2) / dof if dof > 0 else np.nan
    std_err = float(np.sqrt(np.sum(c**2 * meat)))
    if clusters is not None:
        std_err = _coef_std_err(c, resid, clusters, Zk.shape[1], n_obs)
    if w is not None and float(dof).is_integer():
        dof = int(dof)
    return estimate, std_err, int(high.sum()), dof, identified


def _dim_cluster(y, D, clusters, w=None):
    """Difference in means with the CR1 cluster-robust SE of OLS of y on [1, D]."""
    if w is None:
        n1, n0 = D.sum(), (1 - D).sum()
        diff = y[D == 1].mean() - y[D == 0].mean()
        row = D / n1 - (1 - D) / n0
        resid = y - np.where(D == 1, y[D == 1].mean(), y[D == 0].mean())
        return diff, _coef_std_err(row, resid, clusters, 2)
    n1, n0 = (w * D).sum(), (w * (1 - D)).sum()
    m1, m0 = np.average(y[D == 1], weights=w[D == 1]), np.average(y[D == 0], weights=w[D == 0])
    row = w * (D / n1 - (1 - D) / n0)  # a unit's copies summed: w_i times one copy's row
    resid = y - np.where(D == 1, m1, m0)
    return m1 - m0, _coef_std_err(row, resid, clusters, 2, float(w.sum()))


def _baselines(H0, Y, on1, on0, clusters=None, weights=None):
    """Per-period DiM, CUPED and Lin (HC2) on units following either regime through t.

    With ``clusters`` (cluster codes, one per unit) every standard error is the CR1
    cluster-robust one of the corresponding OLS regression (``y`` on ``[1, D]`` for DiM and
    CUPED, Lin's interacted design), as statsmodels' ``cov_type="cluster"``. With frequency
    ``weights`` (one per unit) the units of weight 0 are left out and the others count
    ``w_i`` times.
    """
    rows = []
    high_leverage, unidentified = [], []
    for t in range(Y.shape[1]):
        m = on1[:, t] | on0[:, t]
        if weights is not None:
            m &= weights > 0
        w = None if weights is None else weights[m]
        D = on1[m, t].astype(float)
        y = Y[m, t]
        row = {"period": t, "n_on_path_1": int(on1[:, t].sum()),
               "n_on_path_0": int(on0[:, t].sum())}
        if D.sum() < 2 or (1 - D).sum() < 2 or (
                w is not None and min((w * D).sum(), (w * (1 - D)).sum()) <= 1):
            row.update(dim=np.nan, dim_se=np.nan, cuped=np.nan, cuped_se=np.nan, lin=np.nan,
                       lin_se=np.nan)
            rows.append(row)
            continue
        cl = None if clusters is None else clusters[m]
        arms = (None, None) if w is None else (w[D == 1], w[D == 0])
        if cl is None:
            row["dim"], row["dim_se"] = _welch(y[D == 1], y[D == 0], *arms)
        else:
            row["dim"], row["dim_se"] = _dim_cluster(y, D, cl, w)
        if w is None:
            Hc = H0[m] - H0[m].mean(axis=0)
            Hc = Hc[:, Hc.std(axis=0) > 1e-12]
            design = np.column_stack([np.ones(len(y)), Hc])
            theta = np.linalg.lstsq(design, y, rcond=None)[0][1:]
        else:
            Hc = H0[m] - np.average(H0[m], axis=0, weights=w)
            Hc = Hc[:, np.sqrt(np.average(Hc**2, axis=0, weights=w)) > 1e-12]
            root = np.sqrt(w)
            design = np.column_stack([np.ones(len(y)), Hc]) * root[:, None]
            theta = np.linalg.lstsq(design, y * root, rcond=None)[0][1:]
        adjusted = y - Hc @ theta
        if cl is None:
            row["cuped"], row["cuped_se"] = _welch(adjusted[D == 1], adjusted[D == 0], *arms)
        else:
            row["cuped"], row["cuped_se"] = _dim_cluster(adjusted, D, cl, w)
        row["lin"], row["lin_se"], n_high, dof, identified = _lin_hc2(y, D, Hc, cl, w)
        if n_high:
            high_leverage.append((t, n_high, len(y), dof))
        if not identified:
            unidentified.append(t)
        rows.append(row)
    for t, n_high, n, dof in high_leverage:
        consequence = (
            f"the pooled residual variance (n - rank = {dof} degrees of freedom) stands in "
            "for theirs in the HC2 meat" if dof > 0
            else "no residual degrees of freedom remain: lin_se is NaN"
        )
        warnings.warn(
            f"Lin (HC2) at period {t}: {n_high} of {n} units have leverage h_ii >= 1 - "
            f"{_HIGH_LEVERAGE:g} in the interacted regression on the baseline covariates "
            "(e.g. a covariate level with a single unit in its arm); their residuals are 0 "
            f"and say nothing of their variance, so {consequence}. Use fewer covariates or "
            "merge rare levels for a reliable Lin column",
            UserWarning,
            stacklevel=3,
        )
    if unidentified:
        warnings.warn(
            f"Lin at periods {unidentified}: the treatment coefficient is not identified in "
            "the interacted regression (a baseline covariate is constant within one arm, e.g. "
            "a level present in one arm only); the aliased interaction columns are dropped in "
            "column order, as R's lm does, which sets those interactions to zero",
            UserWarning,
            stacklevel=3,
        )
    return pd.DataFrame(rows)
