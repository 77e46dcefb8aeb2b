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
