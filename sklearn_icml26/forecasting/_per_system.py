"""PerSystemRegressor: one regressor per system on its own lags, the baseline of ESE."""

import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.linear_model import LinearRegression
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import HasMethods, Interval, StrOptions, _fit_context
from ..utils._parallel import Parallel, delayed
from ..utils._validation import _check_numeric_target
from ..utils._weights import (
    check_sample_weight,
    drop_zero_weights,
    fit_with_weights,
)
from ._aggregate import (
    _as_pandas_like,
    _check_scaled_training,
    _resolve_scaling,
    _scale,
    _system_count,
    _target_names,
)

__all__ = ["PerSystemRegressor"]


# --------------------------------------------------------------------------------------------
# PerSystemRegressor
# --------------------------------------------------------------------------------------------
def _fit_one(estimator, Wi, yi, scaling, k, sample_weight=None):
    """Fit one system on its newest k lags: returns (fitted estimator, resolved scaling)."""
    Wk = Wi[:, Wi.shape[1] - k:]
    scaling = _resolve_scaling(scaling, Wk[:, -1], Wk.mean(axis=1))
    c = _scale(Wk, scaling)
    if scaling is not None:
        _check_scaled_training(c, scaling, "last value" if scaling == "last" else "mean value")
    return fit_with_weights(clone(estimator), Wk / c[:, None], yi / c, sample_weight), scaling


class PerSystemRegressor(RegressorMixin, BaseEstimator):
    """One regressor per system on its own lags: the baseline that ESE is compared with.

    A clone of ``estimator`` is fitted on the newest ``n_lags`` lags of system ``i``'s block of
    ``X`` to predict the system's next value. Features and target are divided by a scale
    computed from those lags as in :class:`ESERegressor` (newest value, their mean or none,
    resolved per system); a window whose scale is not positive is forecast by its newest
    value (persistence, with a warning).
    Unlike :class:`~sklearn.multioutput.MultiOutputRegressor`, each model sees only its own
    system's ``n_lags`` columns.

    Parameters
    ----------
    estimator : regressor, default=None
        The per-system regressor; ``None`` means
        :class:`~sklearn.linear_model.LinearRegression`.
    n_lags : int, default=None
        Number of newest lags of each system fed to its model (1 <= n_lags <= lags per
        system); ``None`` uses all.
    scaling : {"auto", "last", "mean"} or None, default="auto"
        Per-system scale of features and target, as in :class:`ESERegressor` (``"auto"``:
        ``"last"`` when every training window's newest value is positive, else ``"mean"`` when
        every window mean is, else ``None``).
    n_jobs : int, default=None
        Jobs over systems (joblib); ``None`` means 1.

    Attributes
    ----------
    estimators_ : list of regressor
        The fitted per-system models (length ``n_systems_``).
    scaling_ : list of {"last", "mean"} or None
        The resolved scaling of each system.
    n_systems_ : int
        Number of systems (columns of ``y``; 1 for 1-D ``y``).
    n_lags_ : int
        Lags per system in ``X``.
    model_lags_ : int
        Newest lags each system's model uses (``n_lags``, or all ``n_lags_``).
    n_features_in_ : int
        Number of columns of ``X``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names of ``X`` when it had string column names.
    system_names_ : ndarray of shape (n_systems_,) of str or None
        Column names of a pandas ``y`` (the Series name for one system), which label the
        forecasts of a pandas ``X``; ``None`` for array targets.
    y_ndim_ : int
        Dimensions of ``y`` in ``fit``: forecasts are 1-D when it was 1.

    See Also
    --------
    ESERegressor : One aggregate model split by equilibrium shares.

    References
    ----------
    .. [1] Xu, Song, Gao, Liu. "Once-for-All: Scalable Simultaneous Forecasting via Equilibrium
       State Estimation". ICML 2026, arXiv:2606.13285.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_interacting_systems
    >>> from sklearn_icml26.forecasting import PerSystemRegressor, sliding_window
    >>> Y, _, _ = make_interacting_systems(4, 120, random_state=0)
    >>> X, y = sliding_window(Y, n_lags=5)
    >>> PerSystemRegressor(n_lags=3).fit(X, y).predict(X[-2:]).shape
    (2, 4)
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "n_lags": [Interval(Integral, 1, None, closed="left"), None],
        "scaling": [StrOptions({"auto", "last", "mean"}), None],
        "n_jobs": [Integral, None],
    }

    def __init__(self, estimator=None, *, n_lags=None, scaling="auto", n_jobs=None):
        self.estimator = estimator
        self.n_lags = n_lags
        self.scaling = scaling
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit one clone of ``estimator`` per system.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_systems * n_lags)
            Windows in system-major order (float; data units), see :func:`sliding_window`.
        y : array-like of shape (n_samples, n_systems) or (n_samples,)
            Targets (float; data units).
        sample_weight : array-like of shape (n_samples,), default=None
            Nonnegative frequency weight of each window (float), passed to every system's fit
            (``estimator`` must accept it); windows of weight 0 are left out, also of the
            ``scaling="auto"`` rule. ``None`` weighs every window alike.

        Returns
        -------
        self : PerSystemRegressor
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``X``/``y`` hold NaN/inf, ``y`` is not numeric, their column counts do not
            match, ``n_lags`` exceeds the lags per system, a fixed ``scaling`` meets a
            non-positive training scale, or ``sample_weight`` is invalid (shape, negative or
            non-finite values, all zero, fewer than 2 positive).
        TypeError
            If ``sample_weight`` is given and ``estimator`` does not accept it in ``fit``.
        """
        _check_numeric_target(y, "float targets, one column per system")
        system_names = _target_names(y)
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True, dtype=np.float64,
                             ensure_min_samples=2)
        sample_weight, X, y = drop_zero_weights(check_sample_weight(sample_weight, X), X, y,
                                                min_rows=2, owner="PerSystemRegressor",
                                                what="window")
        self.system_names_, self.y_ndim_ = system_names, y.ndim
        n_systems, p = _system_count(y, X.shape[1])
        if self.n_lags is not None and self.n_lags > p:
            raise ValueError(f"n_lags={self.n_lags} exceeds the {p} lags per system in X.")
        k = p if self.n_lags is None else int(self.n_lags)
        W = X.reshape(X.shape[0], n_systems, p)
        Y2 = y.reshape(-1, 1) if y.ndim == 1 else y
        estimator = LinearRegression() if self.estimator is None else self.estimator
        fitted = Parallel(n_jobs=self.n_jobs)(
            delayed(_fit_one)(estimator, W[:, i], Y2[:, i], self.scaling, k, sample_weight)
            for i in range(n_systems)
        )
        self.estimators_ = [f[0] for f in fitted]
        self.scaling_ = [f[1] for f in fitted]
        self.n_systems_, self.n_lags_, self.model_lags_ = n_systems, p, k
        return self

    def predict(self, X):
        """Forecast every system with its own model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_systems * n_lags)
            Windows as in :meth:`fit` (float; data units).

        Returns
        -------
        y_pred : ndarray, DataFrame or Series of shape (n_samples, n_systems) or (n_samples,)
            Float64 forecasts; 1-D when ``y`` was 1-D in ``fit``; pandas for a pandas ``X``, as
            in :meth:`ESERegressor.predict`.

        Raises
        ------
        ValueError
            If ``X`` is invalid (NaN, wrong number of columns).
        """
        check_is_fitted(self)
        X_in = X
        X = validate_data(self, X, reset=False, dtype=np.float64)
        W = X.reshape(X.shape[0], self.n_systems_, self.n_lags_)
        p, k = self.n_lags_, self.model_lags_
        out = np.empty((X.shape[0], self.n_systems_))
        n_bad = 0
        for i, (est, scaling) in enumerate(zip(self.estimators_, self.scaling_, strict=True)):
            Wk = W[:, i, p - k:]
            c = _scale(Wk, scaling)
            bad = ~(c > 0)
            safe_c = np.where(bad, 1.0, c)
            pred = safe_c * np.asarray(est.predict(Wk / safe_c[:, None]),
                                       dtype=np.float64).reshape(-1)
            pred[bad] = Wk[bad, -1]
            n_bad += int(bad.sum())
            out[:, i] = pred
        if n_bad:
            warnings.warn(f"{n_bad} (row, system) pairs have a scale <= 0; their forecast is "
                          f"the newest value (persistence).", UserWarning, stacklevel=2)
        out = out[:, 0] if self.y_ndim_ == 1 else out
        return _as_pandas_like(out, X_in, self.system_names_, self.y_ndim_ == 1)
