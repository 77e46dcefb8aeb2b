"""Sliding windows of a panel of systems: the X/y layout of the forecasting estimators."""

from numbers import Integral

import numpy as np

__all__ = ["last_window", "sliding_window"]


# --------------------------------------------------------------------------------------------
# windows
# --------------------------------------------------------------------------------------------
def _check_positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int >= 1; got {value!r} of type "
                        f"{type(value).__name__}.")
    if value < 1:
        raise ValueError(f"{name} must be an int >= 1; got {value}.")
    return int(value)


def _as_panel(Y, name="Y"):
    """Return (values (T, n) float64, is_1d, pandas kind or None, columns, index)."""
    import pandas as pd

    kind = columns = index = None
    if isinstance(Y, pd.DataFrame):
        kind, columns, index = "frame", list(Y.columns), Y.index
    elif isinstance(Y, pd.Series):
        kind, columns, index = "series", [Y.name if Y.name is not None else "y"], Y.index
    try:
        values = np.asarray(Y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must hold numbers; conversion to float64 failed: {exc}") from exc
    if values.ndim > 2 or values.ndim == 0:
        raise ValueError(f"{name} must be 1-D (n_timesteps,) or 2-D (n_timesteps, n_systems); "
                         f"got an array with {values.ndim} dimensions, shape {values.shape}.")
    is_1d = values.ndim == 1
    if is_1d:
        values = values[:, None]
    if columns is None:
        columns = list(range(values.shape[1]))
    bad = ~np.isfinite(values)
    if bad.any():
        rows, cols = np.nonzero(bad)
        n_nan = int(np.isnan(values).sum())
        what = f"{n_nan} NaN" if n_nan else f"{int(bad.sum())} infinite"
        col = columns[cols[0]]
        raise ValueError(f"{name} contains {what} values, first at row {rows[0]}, column "
                         f"{col!r}; fill or drop them before building windows.")
    return values, is_1d, kind, columns, index


def sliding_window(Y, n_lags, horizon=1):
    """Turn a panel of systems into a lag matrix and a target for :class:`ESERegressor`.

    Row ``r`` holds the window ``Y[r : r + n_lags]`` (oldest first) of every system, system by
    system, and its target is ``Y[r + n_lags + horizon - 1]``.

    Parameters
    ----------
    Y : array-like of shape (n_timesteps, n_systems) or (n_timesteps,)
        The panel, one column per system, rows in time order (float; units of the data). A
        :class:`pandas.DataFrame` or :class:`pandas.Series` gives pandas outputs.
    n_lags : int
        Window length ``p`` (time steps, >= 1).
    horizon : int, default=1
        Forecast horizon ``h`` (time steps, >= 1).

    Returns
    -------
    X : ndarray or DataFrame of shape (n_windows, n_systems * n_lags)
        Float64; ``X[r, i * n_lags + k] = Y[r + k, i]`` (system-major, oldest to newest), so
        ``X.reshape(n_windows, n_systems, n_lags)`` is a view. ``n_windows = n_timesteps -
        n_lags - horizon + 1``. Pandas columns are ``f"{col}_lag{j}"`` (``_lag1`` newest),
        indexed by the target's labels.
    y : ndarray or DataFrame of shape (n_windows, n_systems) or (n_windows,)
        Float64 targets; 1-D (or a Series) when ``Y`` was.

    Raises
    ------
    ValueError
        If ``n_lags`` or ``horizon`` is < 1, ``Y`` has more than 2 dimensions, too few time
        steps for the window and horizon, or NaN/infinite values (the message gives the count
        and the first position).
    TypeError
        If ``n_lags`` or ``horizon`` is not an int, or ``Y`` is not numeric.

    See Also
    --------
    last_window : The window that forecasts past the end of the panel.
    ESERegressor : The estimator these windows feed.

    References
    ----------
    .. [1] Xu, Song, Gao, Liu. "Once-for-All: Scalable Simultaneous Forecasting via Equilibrium
       State Estimation". ICML 2026, arXiv:2606.13285.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.forecasting import sliding_window
    >>> X, y = sliding_window(np.arange(12).reshape(6, 2), n_lags=3)
    >>> X[0]
    array([0., 2., 4., 1., 3., 5.])
    >>> y[0]
    array([6., 7.])
    """
    n_lags = _check_positive_int(n_lags, "n_lags")
    horizon = _check_positive_int(horizon, "horizon")
    values, is_1d, kind, columns, index = _as_panel(Y)
    n_timesteps, n_systems = values.shape
    n_windows = n_timesteps - n_lags - horizon + 1
    if n_windows < 1:
        raise ValueError(f"Y has {n_timesteps} time steps; n_lags={n_lags} and horizon={horizon} "
                         f"need at least {n_lags + horizon}.")
    windows = np.lib.stride_tricks.sliding_window_view(values, n_lags, axis=0)[:n_windows]
    X = np.ascontiguousarray(windows).reshape(n_windows, n_systems * n_lags)
    y = values[n_lags + horizon - 1:].copy()
    if is_1d:
        y = y[:, 0]
    if kind is None:
        return X, y
    import pandas as pd

    target_index = index[n_lags + horizon - 1:]
    names = [f"{col}_lag{n_lags - k}" for col in columns for k in range(n_lags)]
    X = pd.DataFrame(X, index=target_index, columns=names)
    if kind == "series":
        y = pd.Series(y, index=target_index, name=columns[0])
    else:
        y = pd.DataFrame(y, index=target_index, columns=columns)
    return X, y


def last_window(Y, n_lags):
    """The newest window of a panel, to forecast ``horizon`` steps past its end.

    Parameters
    ----------
    Y : array-like of shape (n_timesteps, n_systems) or (n_timesteps,)
        The panel (float, rows in time order); pandas gives a DataFrame.
    n_lags : int
        Window length (time steps, >= 1), as used in :func:`sliding_window`.

    Returns
    -------
    X : ndarray or DataFrame of shape (1, n_systems * n_lags)
        Float64, laid out as the rows of :func:`sliding_window`; ``est.predict(X)`` forecasts
        time ``n_timesteps - 1 + horizon``.

    Raises
    ------
    ValueError
        If ``Y`` has fewer than ``n_lags`` time steps, more than 2 dimensions or non-finite
        values.
    TypeError
        If ``n_lags`` is not an int.

    References
    ----------
    .. [1] Xu, Song, Gao, Liu. "Once-for-All: Scalable Simultaneous Forecasting via Equilibrium
       State Estimation". ICML 2026, arXiv:2606.13285.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.forecasting import last_window
    >>> last_window(np.arange(12).reshape(6, 2), n_lags=3)
    array([[ 6.,  8., 10.,  7.,  9., 11.]])
    """
    n_lags = _check_positive_int(n_lags, "n_lags")
    values, _, kind, columns, index = _as_panel(Y)
    if values.shape[0] < n_lags:
        raise ValueError(f"Y has {values.shape[0]} time steps; n_lags={n_lags} needs at least "
                         f"{n_lags}.")
    X = values[-n_lags:].T.reshape(1, -1).copy()
    if kind is None:
        return X
    import pandas as pd

    names = [f"{col}_lag{n_lags - k}" for col in columns for k in range(n_lags)]
    return pd.DataFrame(X, index=index[-1:], columns=names)
