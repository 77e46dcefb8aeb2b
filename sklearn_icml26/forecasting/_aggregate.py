"""Helpers shared by ESE and the per-system baseline: window scaling, AIC lag orders, the
aggregate forecast and pandas input/output.
"""


import numpy as np


# --------------------------------------------------------------------------------------------
# aggregate model helpers
# --------------------------------------------------------------------------------------------
def _resolve_scaling(scaling, last, mean):
    """ESE's rule: 'last' if every last total > 0, else 'mean' if every mean > 0, else None."""
    if scaling != "auto":
        return scaling
    if np.all(last > 0):
        return "last"
    if np.all(mean > 0):
        return "mean"
    return None


def _scale(A, scaling):
    if scaling == "last":
        return A[:, -1].copy()
    if scaling == "mean":
        return A.mean(axis=1)
    return np.ones(A.shape[0])


def _aic_orders(Z, target, sample_weight=None):
    """AIC_k of OLS (intercept + last k columns of Z), k = 1..K, K = max(1, min(10, p, N-2)).

    With frequency weights ``w`` the fit is weighted least squares, ``RSS`` the weighted sum of
    squared residuals and ``N = sum(w)`` (rounded down in ``K``), which is the AIC of the rows
    repeated by their (integer) weights.
    """
    n_rows, p = Z.shape
    if sample_weight is None:
        N, root = n_rows, None
    else:
        N, root = float(sample_weight.sum()), np.sqrt(sample_weight)
    K = max(1, min(10, p, int(np.floor(N + 1e-9)) - 2))
    aic = np.empty(K)
    for k in range(1, K + 1):
        design = np.column_stack([np.ones(n_rows), Z[:, p - k:]])
        if root is None:
            coef = np.linalg.lstsq(design, target, rcond=None)[0]
            rss = float(np.sum((target - design @ coef) ** 2))
        else:
            coef = np.linalg.lstsq(design * root[:, None], target * root, rcond=None)[0]
            rss = float(np.sum(sample_weight * (target - design @ coef) ** 2))
        aic[k - 1] = N * np.log(max(rss / N, 1e-300)) + 2 * (k + 1)
    return aic


def _aggregate_forecast(A, scaling, k, estimator):
    """Aggregate forecasts of window totals A (N, p) and the rows whose scale is <= 0.

    Those rows (``bad``) get the newest total (persistence); the caller warns.
    """
    c = _scale(A, scaling)
    bad = ~(c > 0)
    safe_c = np.where(bad, 1.0, c)
    aggregate = safe_c * np.asarray(
        estimator.predict(A[:, A.shape[1] - k:] / safe_c[:, None]),
        dtype=np.float64).reshape(-1)
    aggregate[bad] = A[bad, -1]
    return aggregate, bad


def _check_scaled_training(c, scaling, what):
    bad = ~(c > 0)
    if bad.any():
        raise ValueError(
            f"scaling={scaling!r} needs a positive {what} in every training window; "
            f"{int(bad.sum())} of {c.size} are <= 0; use scaling='auto' or None."
        )


def _target_names(y):
    """System names of a pandas target (DataFrame columns or the Series name), else None."""
    if hasattr(y, "columns"):
        return np.asarray([str(c) for c in y.columns], dtype=object)
    if hasattr(y, "name") and hasattr(y, "index") and getattr(y, "ndim", 0) == 1:
        return np.asarray([str(y.name)], dtype=object)
    return None


def _as_pandas_like(y_pred, X, names, is_1d):
    """Forecasts as a DataFrame (Series when 1-D) indexed like a pandas ``X``; else as is."""
    if not hasattr(X, "iloc"):
        return y_pred
    import pandas as pd

    if names is None:
        names = [f"system{i}" for i in range(1 if is_1d else y_pred.shape[1])]
    if is_1d:
        return pd.Series(y_pred, index=X.index, name=names[0])
    return pd.DataFrame(y_pred, index=X.index, columns=list(names))


def _system_count(y, n_features):
    n_systems = 1 if y.ndim == 1 else y.shape[1]
    if n_features % n_systems:
        raise ValueError(
            f"X has {n_features} columns but y has {n_systems} columns (systems); X must hold "
            f"n_systems * n_lags columns in system-major order, as built by "
            f"sliding_window(Y, n_lags)."
        )
    return n_systems, n_features // n_systems


# --------------------------------------------------------------------------------------------
# seasonal aggregate model (ESERegressor(seasonal_period=m))
# --------------------------------------------------------------------------------------------
def _seasonal_base(n_lags, period, horizon):
    """Index of the newest window step in the target's phase: ``p - 1 + h - m ceil(h / m)``.

    Any horizon works: the target's phase is ``(p - 1 + h) mod m``; with ``p >= 2m`` the step
    lies in the window (``>= m - 1``).
    """
    return n_lags - 1 + horizon - period * int(np.ceil(horizon / period))


def _seasonal_design(A, period, multiplicative):
    """Seasonal growth of the window totals: ``A_tau / A_{tau-m}`` (or ``A_tau - A_{tau-m}``).

    Returns (N, p - m), oldest first; its newest ``k`` columns are the aggregate model's
    features.
    """
    if multiplicative:
        return A[:, period:] / A[:, :-period]
    return A[:, period:] - A[:, :-period]


def _seasonal_aggregate_forecast(A, scaling, k, estimator, period, horizon):
    """Aggregate forecasts of a seasonal ESE and the rows that fall back to the seasonal naive.

    ``scaling="seasonal"``: ``a_hat = A_b * f(A_tau / A_{tau-m}, newest k)``, ``b`` the newest
    step in the target's phase (:func:`_seasonal_base`); ``None``: ``a_hat = A_b + f(A_tau -
    A_{tau-m})``. Rows with a non-positive total in the ratios (multiplicative form) get
    ``A_b`` (the seasonal naive aggregate); the caller warns.
    """
    p = A.shape[1]
    base = A[:, _seasonal_base(p, period, horizon)]
    multiplicative = scaling == "seasonal"
    if multiplicative:
        used = A[:, p - k - period:]
        bad = ~(used > 0).all(axis=1) | ~(base > 0)
        safe = np.where(bad[:, None], 1.0, A)
        Z = _seasonal_design(safe, period, True)[:, -k:]
    else:
        bad = np.zeros(A.shape[0], dtype=bool)
        Z = _seasonal_design(A, period, False)[:, -k:]
    f = np.asarray(estimator.predict(Z), dtype=np.float64).reshape(-1)
    aggregate = base * f if multiplicative else base + f
    aggregate[bad] = base[bad]
    return aggregate, bad


def _seasonal_acf(A, candidates):
    """Autocorrelations of the aggregate's growth within the training windows, per lag.

    ``x`` is the first difference of the log totals (of the totals when one is <= 0) of each
    window, centred per window; the autocorrelation at lag ``m`` pools the products of every
    window: ``sum_r sum_tau x_{r,tau} x_{r,tau+m} / sum_r sum_tau x_{r,tau}^2`` (scaled by
    ``(p - 1) / (p - 1 - m)`` for the pairs a window of ``p - 1`` differences holds). Pooling
    within windows needs no assumption on how the windows follow each other.
    """
    positive = bool(np.all(A > 0))
    x = np.diff(np.log(A) if positive else A, axis=1)
    x = x - x.mean(axis=1, keepdims=True)
    q = x.shape[1]
    denom = float(np.sum(x * x))
    acf = np.zeros(len(candidates))
    if not denom > 0:
        return acf
    for j, m in enumerate(candidates):
        acf[j] = float(np.sum(x[:, m:] * x[:, :-m])) / denom * q / (q - m)
    return acf
