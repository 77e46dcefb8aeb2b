"""Forecast accuracy relative to the random walk, for panels where R^2 misleads.

The coefficient of determination (``score`` of scikit-learn regressors) compares a forecast with
each series' mean over the evaluated rows. On panels of persistent or nearly flat series (daily
counts, prices) that reference is far worse than simply repeating the newest value, so R^2 can be
negative for forecasts that beat the random walk. These metrics take the random walk (or any
reference forecast) as the unit instead.
"""

import numpy as np
from sklearn.utils.validation import check_array, check_consistent_length

__all__ = ["neg_relative_rmse_scorer", "random_walk_forecast", "relative_rmse"]


def relative_rmse(y_true, y_pred, y_reference, *, multioutput="uniform_average"):
    """Per-output RMSE of a forecast divided by that of a reference forecast.

    ``RMSE_i(y_pred) / RMSE_i(y_reference)`` for each output (system) ``i``: below 1 the
    forecast beats the reference (for the random walk: the newest observed value, see
    :func:`random_walk_forecast`). Outputs where the reference is exact (RMSE 0, e.g. a series
    that stays flat over the evaluated rows) have no ratio and are left out of the average.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_outputs)
        True values (float, data units).
    y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Forecasts (float, data units).
    y_reference : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Reference forecasts, e.g. the random walk (float, data units).
    multioutput : {"uniform_average", "raw_values"}, default="uniform_average"
        Average the ratios over the outputs with a defined ratio, or return every output's
        ratio (``nan`` where the reference RMSE is 0).

    Returns
    -------
    ratio : float or ndarray of shape (n_outputs,)
        Dimensionless ratio(s); ``nan`` when no output has a defined ratio.

    Raises
    ------
    ValueError
        If the shapes differ, the inputs hold NaN/inf or ``multioutput`` is unknown.

    References
    ----------
    .. [1] Hyndman, Koehler. "Another look at measures of forecast accuracy". International
       Journal of Forecasting 22(4), 2006 (relative measures against the random walk).

    Examples
    --------
    >>> from sklearn_icml26.metrics import relative_rmse
    >>> relative_rmse([1.0, 2.0, 3.0], [1.0, 2.0, 4.0], [0.0, 1.0, 2.0])
    0.5773502691896257
    """
    if multioutput not in ("uniform_average", "raw_values"):
        raise ValueError(f"multioutput must be 'uniform_average' or 'raw_values'; got "
                         f"{multioutput!r}.")
    arrays = []
    for name, value in (("y_true", y_true), ("y_pred", y_pred), ("y_reference", y_reference)):
        arr = check_array(value, ensure_2d=False, dtype=np.float64, input_name=name)
        arrays.append(arr.reshape(-1, 1) if arr.ndim == 1 else arr)
    check_consistent_length(*arrays)
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"y_true, y_pred and y_reference must have the same shape; got "
                         f"{arrays[0].shape}, {arrays[1].shape} and {arrays[2].shape}.")
    truth, pred, ref = arrays
    rmse = np.sqrt(np.mean((pred - truth) ** 2, axis=0))
    rmse_ref = np.sqrt(np.mean((ref - truth) ** 2, axis=0))
    ok = rmse_ref > 0
    ratio = np.full(rmse.shape, np.nan)
    ratio[ok] = rmse[ok] / rmse_ref[ok]
    if multioutput == "raw_values":
        return ratio
    return float(ratio[ok].mean()) if ok.any() else float("nan")


def random_walk_forecast(X, n_systems):
    """The random walk's forecast of lag windows: each system's newest value.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_systems * n_lags)
        Windows in system-major order, oldest to newest, as built by
        :func:`sklearn_icml26.forecasting.sliding_window` (float, data units).
    n_systems : int
        Number of systems (>= 1; must divide the number of columns).

    Returns
    -------
    y_rw : ndarray of shape (n_samples, n_systems)
        Float64 newest value of every system.

    Raises
    ------
    ValueError
        If ``n_systems`` does not divide the number of columns of ``X``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.metrics import random_walk_forecast
    >>> random_walk_forecast(np.array([[1.0, 2.0, 3.0, 10.0, 20.0, 30.0]]), 2)
    array([[ 3., 30.]])
    """
    X = check_array(X, dtype=np.float64, input_name="X")
    if isinstance(n_systems, bool) or not isinstance(n_systems, (int, np.integer)) \
            or n_systems < 1 or X.shape[1] % n_systems:
        raise ValueError(f"n_systems must be an int >= 1 dividing the {X.shape[1]} columns of "
                         f"X; got {n_systems!r}.")
    return X.reshape(X.shape[0], n_systems, -1)[:, :, -1].copy()


def neg_relative_rmse_scorer(estimator, X, y):
    """Scorer: minus the mean per-system RMSE relative to the random walk (greater is better).

    For model selection on lag windows (``GridSearchCV(..., scoring=neg_relative_rmse_scorer)``)
    where every system should count alike: ``-relative_rmse(y, estimator.predict(X),
    random_walk_forecast(X, n_systems))``, ``n_systems`` the number of columns of ``y``.

    Parameters
    ----------
    estimator : fitted regressor
        A forecaster of lag windows (e.g. :class:`~sklearn_icml26.forecasting.ESERegressor`).
    X : array-like of shape (n_samples, n_systems * n_lags)
        Windows in system-major order (float, data units).
    y : array-like of shape (n_samples, n_systems) or (n_samples,)
        True values (float, data units).

    Returns
    -------
    score : float
        ``-relative_rmse``; -1 for the random walk itself.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_interacting_systems
    >>> from sklearn_icml26.forecasting import ESERegressor, sliding_window
    >>> from sklearn_icml26.metrics import neg_relative_rmse_scorer
    >>> Y, _, _ = make_interacting_systems(4, 200, random_state=0)
    >>> X, y = sliding_window(Y, 10)
    >>> est = ESERegressor().fit(X[:150], y[:150])
    >>> bool(neg_relative_rmse_scorer(est, X[150:], y[150:]) > -1.1)
    True
    """
    y = np.asarray(y, dtype=np.float64)
    n_systems = 1 if y.ndim == 1 else y.shape[1]
    pred = np.asarray(estimator.predict(X), dtype=np.float64).reshape(y.shape[0], -1)
    reference = random_walk_forecast(X, n_systems)
    return -relative_rmse(y.reshape(y.shape[0], -1), pred, reference)
