"""Equilibrium State Estimation (ESE): forecast many interacting systems at the cost of one model.

Xu, Song, Gao, Liu, "Once-for-All: Scalable Simultaneous Forecasting via Equilibrium State
Estimation", ICML 2026, arXiv 2606.13285. Implemented from the paper's formulas; no code was
copied.

ESE forecasts the aggregate (the sum over systems) with one regressor and splits the forecast with
*equilibrium shares*: exponentially weighted recent proportions ``y_{i,t} / sum_j y_{j,t}``. The
closed form of the converged shares is the default; the paper's iterative refinement (with its
attribute-based initial state and its "ted"/"cointegration" stop rules) is available as options.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from joblib import effective_n_jobs
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import HasMethods, Interval, StrOptions, _fit_context
from ..utils._parallel import Parallel, delayed
from ..utils._progress import progress_bar
from ..utils._validation import _check_numeric_target
from ..utils._weights import (
    check_sample_weight,
    drop_zero_weights,
    fit_with_weights,
    newest_rows_holding,
    weighted_rank_value,
)
from ._aggregate import (
    _aggregate_forecast,
    _aic_orders,
    _as_pandas_like,
    _check_scaled_training,
    _resolve_scaling,
    _scale,
    _seasonal_acf,
    _seasonal_aggregate_forecast,
    _seasonal_base,
    _seasonal_design,
    _system_count,
    _target_names,
)
from ._shares import (
    _MAX_ITER,
    _NOT_COINTEGRATED,
    DAMPING_GRID,
    SHARE_TREND_GRID,
    _candidate_errors,
    _chunk_shares,
    _closed_form_shares,
    _kernel_shares,
    _rescaled_windows,
    _window_totals,
)


# --------------------------------------------------------------------------------------------
# ESERegressor
# --------------------------------------------------------------------------------------------
class ESERegressor(RegressorMixin, BaseEstimator):
    """Simultaneous forecasting of many interacting systems through equilibrium shares (ESE).

    One regressor forecasts the aggregate (the sum over systems, from the window's totals) and
    the forecast is split with equilibrium shares ``e``: the exponentially weighted proportions
    ``s_tau = W_tau / sum_i W_{tau,i}`` of the window, weight ``(1 - damping) ** (p - tau)``
    on step ``tau`` (newest weight 1), which is the exact fixed point of the paper's iterative
    refinement. Steps whose total is not positive carry no share information; a window without
    any gets uniform shares. The forecast of system ``i`` is ``a_hat * e_i``.

    The paper fixes ``damping=0.5``; the defaults here choose the damping and a weight of the
    shares' own trend (``share_trend``, which removes the lag of the weighted mean when the
    composition drifts) on the newest training windows, and calibrate split-conformal
    prediction intervals (:meth:`predict_interval`). ``damping=0.5, share_trend=0`` is the
    paper's ESE.

    Parameters
    ----------
    estimator : regressor, default=None
        Regressor of the (scaled) aggregate on its last ``aggregate_lags`` totals, fitted once
        on all training rows. ``None`` means :class:`~sklearn.linear_model.LinearRegression`.
    aggregate_lags : int, "aic" or None, default="aic"
        Number ``k`` of the newest window totals fed to ``estimator`` (1 <= k <= n_lags);
        ``None`` uses all ``n_lags``; ``"aic"`` chooses ``k`` in ``1..K``,
        ``K = max(1, min(10, n_lags, n_samples - 2))``, by the AIC of an OLS fit with
        intercept (ties go to the smaller ``k``).
    scaling : {"auto", "last", "mean", "seasonal"} or None, default="auto"
        Scale ``c`` dividing the aggregate features and target: the newest total (the model
        then learns the growth ratio, the paper's Eq. 7), the window's mean total, or none.
        ``"auto"`` is ``"last"`` if every training window's newest total is positive, else
        ``"mean"`` if every window mean is positive, else ``None``. With a
        ``seasonal_period``, ``"seasonal"`` is the seasonal-growth model: ``a / A_b`` from the
        newest ``aggregate_lags`` ratios ``A_tau / A_{tau-m}`` (``A_b`` the newest total in
        the target's phase; every training total must be positive), and ``"auto"`` chooses
        between it (or, with a total <= 0, ``a - A_b`` on the differences ``A_tau -
        A_{tau-m}``) and the plain model above by the aggregate's RMSE on the newest
        ``validation_fraction`` of the training windows, both fitted on the older ones
        (``aggregate_scores_``); ``"last"``, ``"mean"`` and ``None`` keep the plain model.
    damping : float in [0, 1] or "auto", default="auto"
        The paper's ``lambda``: 1 gives the newest proportions, 0.5 (the paper's value) halves
        the weight per step back, 0 gives the window mean. The best value is data-dependent:
        ``"auto"`` chooses it in ``fit`` from (0, 0.1, 0.25, 0.5, 0.75, 0.9, 1) by a
        time-ordered validation on the newest training windows (see ``validation_fraction``);
        with an iterative ``stop``, ``"auto"`` means 0.5. The iterative stops (``"ted"``,
        ``"cointegration"``) need ``damping > 0``: at 0 the iteration does not move (``fit``
        raises a ``ValueError``). ``damping=0.5, share_trend=0`` is the paper's ESE.
    share_trend : float in [0, 1] or "auto", default="auto"
        Weight ``phi`` of the shares' own trend (``stop="converge"`` only). With ``phi > 0`` the
        shares are the discounted least-squares line of the window's proportions (weights
        ``(1 - damping) ** (p - tau)``, Brown's linear exponential smoothing) evaluated
        ``horizon`` steps past the window, its slope multiplied by ``phi``, clipped at 0 and
        renormalised: ``e = s_bar + phi * slope * (horizon - t_bar)``. ``0`` gives the
        equilibrium shares above (the paper); ``1`` follows a composition that drifts without
        the lag of a weighted mean. ``"auto"`` chooses it from (0, 0.5, 1) in ``fit`` with the
        same validation as ``damping="auto"`` (jointly when both are ``"auto"``); with an
        iterative ``stop`` it means 0, and other values raise a ``ValueError``.
    horizon : int, default=1
        Steps from a window's newest step to its target, as given to :func:`sliding_window`
        (>= 1). Used to extrapolate the share trend (``share_trend > 0``) and, with a
        ``seasonal_period``, to find the target's phase (any horizon; it need not be a
        multiple of the period).
    seasonal_period : int >= 2, "auto" or None, default=None
        Season length ``m`` in time steps (12 monthly, 4 quarterly, 7 daily with a weekly
        cycle). ``None`` is the ESE above, unchanged. With ``m``, the shares get a seasonal
        form (``seasonal_shares``) inside the same damping / share-trend filters and their
        ``"auto"`` choice, and the aggregate model learns the growth over one season (see
        ``scaling``); only ``stop="converge"``. Every window must hold two full seasons
        (``n_lags >= 2 m``; else ``ValueError``). A phase whose totals are all zero in a
        window has no profile there (documented handling, no error); a zero total in the
        aggregate's ratios at predict time falls back to the seasonal naive total (warning).
        ``"auto"`` tests the training windows: the autocorrelation at lag ``m`` of the first
        differences of the log totals (totals, if one is <= 0), pooled over the windows (each
        centred), for ``m = 2 .. n_lags // 2``; the ``m`` with the largest one is used if it
        exceeds ``1.96 / sqrt(n_samples + n_lags - 1)`` (the white-noise band at 5 %), else
        ``None`` (see ``seasonal_acf_``).
    seasonal_shares : {"auto", "profile", "difference", "none"}, default="auto"
        Form of the seasonal shares (with a ``seasonal_period`` only). ``"profile"``: the
        damped level (and trend) of the deseasonalised proportions ``s_tau - d_{phase(tau)}``
        plus the target phase's profile ``d_0``, where ``d_f`` is the mean of the window's
        proportions at phase ``f`` minus the mean over phases (every season weighs alike).
        ``"difference"``: the proportions of the newest step ``b`` in the target's phase plus
        ``ceil(horizon / m)`` times the damped level (and trend) of the seasonal differences
        ``s_tau - s_{tau-m}``. Both are linear filters of the window, clipped at 0 and
        renormalised. ``"none"``: the shares without a season. ``"auto"`` chooses among the
        three with the damping and share trend (same validation), so that a panel whose
        composition has no season keeps ESE's shares.
    validation_fraction : float in (0, 1], default=0.25
        Fraction of the newest training windows on which ``damping="auto"`` and
        ``share_trend="auto"`` are chosen: the candidate minimising ``selection_score`` of
        ``a_r * e_r`` against the targets, where ``a_r`` is the observed total of row ``r``'s
        targets (the choice depends on the shares alone and no model is refitted; the shares
        hold no fitted parameter, so these windows are out of sample for them; ties go to the
        first candidate in grid order).
    selection_score : {"relative_rmse", "rmse"}, default="relative_rmse"
        Validation score of the ``"auto"`` choices: the mean over systems of each system's
        RMSE divided by that of the random walk (its newest value) on the same windows
        (systems whose random-walk RMSE is 0 are left out), which weighs every system alike,
        or the mean per-system RMSE in data units, which large systems dominate.
    calibration : float in (0, 1) or None, default=0.2
        Fraction of the newest training windows held out for the conformal intervals of
        :meth:`predict_interval`: ``fit`` also fits a clone (with the same settings) on the
        older windows and keeps the normalised absolute errors ``|y - y_hat| / sigma`` of its
        forecasts on the held-out ones (``sigma``: the system's mean absolute value over the
        window's newest ``aggregate_lags_`` steps). ``None`` fits once and disables
        :meth:`predict_interval`.
    stop : {"converge", "ted", "cointegration"}, default="converge"
        ``"converge"``: the closed-form fixed point (one pass, independent of ``init``).
        ``"ted"``: iterate until ``sqrt(||s_p - e||_2 / sqrt(2)) < tol`` (``s_p`` the newest
        valid proportions). ``"cointegration"``: iterate until the iteration has converged
        (a sweep moves the shares by at most 1e-12 in L1 norm, relative) and the p-value of
        statsmodels' Engle-Granger ``coint(e, s_tau, maxlag=0, autolag=None)`` is <= ``tol``
        for every valid step (needs n_systems >= 5); the shares are then the fixed point,
        i.e. those of ``"converge"``. Deviation from the paper's rule, which tests the
        p-value alone: one sweep's iterate is affine in the proportions, so its p-value is
        about 0 and the rule would always stop after the first sweep (shares far from the
        equilibrium). Rows that converge but fail the test keep the fixed point and are
        counted in a ``ConvergenceWarning``.
    init : {"uniform", "zeros", "attributes"}, default="uniform"
        Initial shares of the iterative stops: ``1/n``, zeros (the authors' released code), or
        ``1/n`` plus a least-squares fit of the newest proportions on the normalised system
        attributes (the paper). Ignored by ``stop="converge"``; with ``"cointegration"`` it
        matters only for rows that do not converge within ``max_iter``.
    max_iter : int, default=100
        Maximum number of refinement sweeps (iterative stops).
    tol : float, default=None
        Stop threshold; ``None`` means 0.1 for ``"ted"`` and a p-value of 0.05 for
        ``"cointegration"``.
    n_jobs : int, default=None
        Jobs over row chunks of the iterative refinement (joblib); ``None`` means 1.
    verbose : int, default=0
        When positive, show the progress of the iterative refinement over rows: a bar in a
        terminal, one plain line per chunk of rows in a log. Nothing is random, so there is
        no ``random_state``.

    Attributes
    ----------
    estimator_ : regressor
        The fitted aggregate model.
    n_systems_ : int
        Number of systems ``n`` (columns of ``y``; 1 for 1-D ``y``).
    n_lags_ : int
        Window length ``p = n_features_in_ / n_systems_``.
    aggregate_lags_ : int
        Number of newest totals fed to ``estimator_``.
    scaling_ : {"last", "mean", "seasonal", "seasonal_difference"} or None
        The resolved scaling (the seasonal ones: growth over one season as a ratio or a
        difference).
    aggregate_scores_ : dict or None
        With a season and ``scaling="auto"``: validation RMSE of the aggregate of the
        ``"seasonal"`` and ``"plain"`` models (see ``scaling``); ``None`` otherwise.
    seasonal_period_ : int or None
        The season length in use (the detected one with ``seasonal_period="auto"``).
    seasonal_acf_ : ndarray of shape (n_lags // 2 - 1,) or None
        With ``seasonal_period="auto"``: the pooled autocorrelation of every candidate
        ``m = 2 .. n_lags // 2`` (``None`` otherwise).
    seasonal_shares_ : {"profile", "difference", "none"} or None
        The form of the seasonal shares in use (``None`` without a season).
    aic_ : ndarray of shape (K,) or None
        AIC of the candidate orders ``1..K`` when ``aggregate_lags="aic"``.
    system_attributes_ : ndarray of shape (n_systems, n_attributes) or None
        Static attributes given to ``fit``, used by ``predict`` when none are passed.
    n_features_in_ : int
        Number of columns of ``X`` (``n_systems * n_lags``).
    damping_ : float
        The damping in use (the chosen one when ``damping="auto"``).
    share_trend_ : float
        The share-trend weight in use (the chosen one when ``share_trend="auto"``).
    selection_scores_ : ndarray of shape (n_dampings, n_trends) or \
(n_forms, n_dampings, n_trends) or None
        Validation score (``selection_score`` of the observed total split by the candidate
        shares) of every candidate (rows: ``DAMPING_GRID`` or the given damping; columns:
        ``SHARE_TREND_GRID`` or the given trend; with a season, first axis: the forms of
        ``seasonal_shares``) when something was chosen, else ``None``. Lower is better.
    calibration_scores_ : ndarray of shape (n_calibration, n_systems) or None
        Normalised absolute errors of the held-out calibration windows (``None`` when
        ``calibration=None``, the training set is too short, fewer than 3 windows, or
        ``init="attributes"`` is used without attributes in ``fit``).
    calibration_weights_ : ndarray of shape (n_calibration,) or None
        ``sample_weight`` of the calibration windows (``None`` when ``fit`` had no weights).
    n_iter_ : int
        Refinement sweeps run on the newest training window (1 for ``stop="converge"``, whose
        closed form is one pass; with ``init="attributes"`` and no attributes in ``fit`` this
        diagnostic starts from uniform shares). ``equilibrium_shares(X, return_n_iter=True)``
        gives the sweeps of any window.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names of ``X`` when it had string column names.
    system_names_ : ndarray of shape (n_systems_,) of str or None
        Column names of a pandas ``y`` (the Series name for one system), which label the
        forecasts of a pandas ``X``; ``None`` for array targets.
    y_ndim_ : int
        Dimensions of ``y`` in ``fit``: forecasts are 1-D when it was 1.
    nonnegative_ : bool
        Whether the training windows and targets were all nonnegative; the lower ends of the
        intervals of nonnegative forecasts are then clipped at 0.
    sigma_floor_ : ndarray of shape (n_systems_,)
        Smallest residual scale of each system in :meth:`predict_interval` (1e-3 times the
        mean absolute target; 1 for an all-zero system).

    See Also
    --------
    PerSystemRegressor : The same regressor fitted once per system (the usual baseline).
    sliding_window : Builds ``X`` and ``y`` from a panel.

    Notes
    -----
    Cost: O(n_samples * n_systems * n_lags) for the shares plus one fit of ``estimator``, and
    a second one on the older training windows for the intervals unless ``calibration=None``
    (a per-system baseline needs ``n_systems`` fits). The ``"auto"`` choices write every
    candidate's shares as a linear filter of the window (weights and trend both linear in
    the proportions), so one batched matrix product per block of validation windows scores
    all 19 distinct candidates; the calibration fit shares the window totals and that pass
    (its validation windows and the full fit's are scored together) and refits only the
    aggregate model. Timings against the paper's fixed-damping ESE and per-system baselines
    are in the :ref:`user guide <user_guide_ese>`. ``score`` is R^2 (scikit-learn's
    default); on panels of persistent or flat series compare with the random walk through
    :func:`sklearn_icml26.metrics.relative_rmse` or
    :func:`sklearn_icml26.metrics.neg_relative_rmse_scorer`. With one system (1-D ``y``), the
    shares are 1 and ESE is ``estimator`` on the scaled newest ``k`` lags; with ``scaling=None,
    aggregate_lags=None`` it equals ``estimator.fit(X, y)``.

    References
    ----------
    .. [1] Xu, Song, Gao, Liu. "Once-for-All: Scalable Simultaneous Forecasting via Equilibrium
       State Estimation". ICML 2026, arXiv:2606.13285.
    .. [2] Gross, Sohl. "Disaggregation methods to expedite product line forecasting". Journal
       of Forecasting 9(3), 1990.
    .. [3] Brown. "Smoothing, Forecasting and Prediction of Discrete Time Series".
       Prentice-Hall, 1963 (discounted least squares, the share trend).
    .. [4] Lei, G'Sell, Rinaldo, Tibshirani, Wasserman. "Distribution-free predictive inference
       for regression". JASA 113(523), 2018, arXiv:1604.04173 (split conformal intervals).

    Examples
    --------
    Daily new COVID-19 cases of the 20 regions of Victoria (the loader reads the data home,
    or downloads the files once): forecast the last 26 days one day ahead from two-week
    windows.

    >>> from sklearn_icml26.datasets import load_ese_covid_victoria
    >>> from sklearn_icml26.forecasting import ESERegressor, sliding_window
    >>> from sklearn_icml26.metrics import relative_rmse
    >>> cases = load_ese_covid_victoria(level=20).data  # 259 days x 20 regions
    >>> X, y = sliding_window(cases, n_lags=14)
    >>> X_train, X_test, y_train, y_test = X[:-26], X[-26:], y[:-26], y[-26:]
    >>> ese = ESERegressor().fit(X_train, y_train)
    >>> forecast = ese.predict(X_test)  # a DataFrame: forecast days x regions
    >>> forecast.shape, str(forecast.index[0].date()), forecast.columns[0]
    ((26, 20), '2022-08-22', 'Region 1')
    >>> bool(abs(ese.equilibrium_shares(X_test).sum(axis=1) - 1).max() < 1e-12)
    True

    Each region's RMSE over that of the random walk (tomorrow = today), averaged over the
    regions; below 1 beats it:

    >>> random_walk = X_test.filter(regex="_lag1$").to_numpy()
    >>> round(relative_rmse(y_test, forecast, random_walk), 2)
    0.8
    >>> lower, upper = ese.predict_interval(X_test, coverage=0.9)
    >>> bool(((lower <= forecast) & (forecast <= upper)).all().all())
    True
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "aggregate_lags": [Interval(Integral, 1, None, closed="left"), StrOptions({"aic"}),
                           None],
        "scaling": [StrOptions({"auto", "last", "mean", "seasonal"}), None],
        "damping": [Interval(Real, 0, 1, closed="both"), StrOptions({"auto"})],
        "share_trend": [Interval(Real, 0, 1, closed="both"), StrOptions({"auto"})],
        "horizon": [Interval(Integral, 1, None, closed="left")],
        "seasonal_period": [Interval(Integral, 2, None, closed="left"), StrOptions({"auto"}),
                            None],
        "seasonal_shares": [StrOptions({"auto", "profile", "difference", "none"})],
        "validation_fraction": [Interval(Real, 0, 1, closed="right")],
        "calibration": [Interval(Real, 0, 1, closed="neither"), None],
        "selection_score": [StrOptions({"rmse", "relative_rmse"})],
        "stop": [StrOptions({"converge", "ted", "cointegration"})],
        "init": [StrOptions({"uniform", "zeros", "attributes"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither"), None],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(self, estimator=None, *, aggregate_lags="aic", scaling="auto", damping="auto",
                 share_trend="auto", horizon=1, seasonal_period=None, seasonal_shares="auto",
                 validation_fraction=0.25,
                 selection_score="relative_rmse", calibration=0.2, stop="converge",
                 init="uniform", max_iter=100, tol=None, n_jobs=None, verbose=0):
        self.estimator = estimator
        self.aggregate_lags = aggregate_lags
        self.scaling = scaling
        self.damping = damping
        self.share_trend = share_trend
        self.horizon = horizon
        self.seasonal_period = seasonal_period
        self.seasonal_shares = seasonal_shares
        self.validation_fraction = validation_fraction
        self.selection_score = selection_score
        self.calibration = calibration
        self.stop = stop
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.n_jobs = n_jobs
        self.verbose = verbose

    @classmethod
    def _get_test_params(cls):
        return [{}, {"stop": "ted", "max_iter": 3}]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def _windows(self, X):
        return X.reshape(X.shape[0], self.n_systems_, self.n_lags_)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, system_attributes=None, sample_weight=None):
        """Fit the aggregate model on all training windows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_systems * n_lags)
            Windows in system-major order, oldest to newest (float; data units), as built by
            :func:`sliding_window`.
        y : array-like of shape (n_samples, n_systems) or (n_samples,)
            Targets (float; data units), one column per system.
        system_attributes : array-like of shape (n_systems, n_attributes), default=None
            Static system attributes (float), stored for ``init="attributes"`` in ``predict``
            (scorers call ``predict`` without metadata). Routed with
            ``set_fit_request(system_attributes=True)``.
        sample_weight : array-like of shape (n_samples,), default=None
            Nonnegative weight of each window (float), e.g. to discount old windows or to
            leave out anomalous periods (weight 0). Frequency weights: an integer weight ``w``
            fits as the window repeated ``w`` times, 0 as the window removed. They weight the
            aggregate model's fit (``estimator`` must accept ``sample_weight``), the AIC of
            ``aggregate_lags="aic"`` (weighted RSS, ``N = sum(w)``), the validation score of the
            ``"auto"`` choices and the conformal quantiles of :meth:`predict_interval`; the
            validation and calibration windows are the newest ones holding
            ``validation_fraction`` and ``calibration`` of the total weight (whole windows,
            rounded up). ``None`` weighs every window alike. Routed with
            ``set_fit_request(sample_weight=True)``.

        Returns
        -------
        self : ESERegressor
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``X``/``y`` hold NaN or infinite values, ``y`` is not numeric, their column
            counts do not match (``n_features`` not a multiple of ``n_systems``),
            ``aggregate_lags`` exceeds the lags per system, a fixed ``scaling`` meets a
            non-positive training scale,
            ``system_attributes`` has the wrong shape or NaN, ``damping=0`` with an iterative
            ``stop``, ``stop="cointegration"`` with fewer than 5 systems, ``sample_weight``
            does not have shape (n_samples,), holds negative or non-finite values, is all zero
            or leaves fewer than 2 windows with a positive weight.
        TypeError
            If ``sample_weight`` is given and ``estimator`` does not accept it in ``fit``.

        Warns
        -----
        UserWarning
            If ``X`` holds negative values and there are several systems. The equilibrium
            shares are proportions of nonnegative quantities (counts, volumes, prices);
            standardised or differenced inputs (e.g. a ``StandardScaler`` in front of the
            estimator) make them meaningless and usually worsen the forecasts (see the
            :ref:`user guide <user_guide_ese>`). Feed the raw series; ``scaling`` already
            normalises each system inside the estimator.
        """
        _check_numeric_target(y, "float targets, one column per system")
        system_names = _target_names(y)
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True, dtype=np.float64,
                             ensure_min_samples=2)
        # weight 0 is the window removed: drop it here
        sample_weight, X, y = drop_zero_weights(check_sample_weight(sample_weight, X), X, y,
                                                min_rows=2, owner="ESERegressor", what="window")
        # one min() pass; the count (a boolean copy of X) only when there are negatives
        n_negative = int(np.count_nonzero(X < 0)) if X.size and X.min() < 0 else 0
        if n_negative and _system_count(y, X.shape[1])[0] > 1:  # one system: its share is 1
            warnings.warn(
                f"X has {n_negative} negative values ({n_negative / X.size:.0%} of the entries): "
                f"ESE's equilibrium shares are proportions of nonnegative quantities (counts, "
                f"volumes, prices), so standardised or differenced inputs (e.g. a StandardScaler "
                f"in front) make them meaningless and usually worsen the forecasts. Feed the raw "
                f"series; the `scaling` parameter already normalises each system.",
                UserWarning, stacklevel=3)  # the caller of fit, above sklearn's _fit_context
        self.system_names_, self.y_ndim_ = system_names, y.ndim
        n_systems, n_lags = _system_count(y, X.shape[1])
        if self.stop != "converge" and self.share_trend not in ("auto", 0):
            raise ValueError(f"share_trend={self.share_trend!r} needs stop='converge'; with "
                             f"stop={self.stop!r} use share_trend=0 (or 'auto', which means 0 "
                             f"there).")
        if self.stop != "converge" and self.damping == 0:
            raise ValueError(f"damping=0 freezes the iteration; use stop='converge' or damping > "
                             f"0 with stop={self.stop!r}.")
        if self.stop == "cointegration" and n_systems < 5:
            raise ValueError(f"stop='cointegration' tests n-vectors as series and needs at least "
                             f"5 systems; y has {n_systems}. Use stop='converge' or 'ted'.")
        if isinstance(self.aggregate_lags, Integral) and self.aggregate_lags > n_lags:
            raise ValueError(f"aggregate_lags={self.aggregate_lags} exceeds the {n_lags} lags "
                             f"per system in X.")
        self.n_systems_, self.n_lags_ = n_systems, n_lags
        self.system_attributes_ = self._check_attributes(system_attributes, X.shape[0],
                                                         in_fit=True)

        W = self._windows(X)
        A = _window_totals(W)  # (N, p) window totals
        self.seasonal_period_, self.seasonal_acf_ = self._resolve_period(A)
        target = y if y.ndim == 1 else y.sum(axis=1)
        self.scaling_, self.aggregate_lags_, self.aic_, self.estimator_ = \
            self._fit_aggregate(A, target, sample_weight, record=True)
        self._fit_shares(X, W, A, y, target, system_attributes, sample_weight,
                         has_negative=n_negative > 0)
        if self.stop == "converge":
            self.n_iter_ = 1
        else:  # diagnostic: sweeps needed on the newest training window
            init = "uniform" if (self.init == "attributes" and self.system_attributes_ is None) \
                else self.init
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                _, n_iter = self._shares(X[-1:], None, init=init, verbose=0)
            self.n_iter_ = int(n_iter[0])
        return self

    def _resolve_period(self, A):
        """``(seasonal_period_, seasonal_acf_)`` from ``seasonal_period`` and the totals."""
        period, n_lags = self.seasonal_period, A.shape[1]
        if period is None:
            if self.scaling == "seasonal":
                raise ValueError("scaling='seasonal' needs a seasonal_period (an int or "
                                 "'auto').")
            return None, None
        if self.stop != "converge":
            raise ValueError(f"seasonal_period={period!r} needs stop='converge'; the "
                             f"iterative stops (stop={self.stop!r}) have no seasonal profile.")
        if period == "auto":
            candidates = np.arange(2, n_lags // 2 + 1)
            if not candidates.size:
                return None, np.zeros(0)
            acf = _seasonal_acf(A, candidates)
            n_steps = A.shape[0] + n_lags - 1
            best = int(np.argmax(acf))  # first maximum: ties go to the shorter period
            if acf[best] > 1.96 / np.sqrt(n_steps):
                self._check_seasonal_lags(int(candidates[best]), n_lags)
                return int(candidates[best]), acf
            return None, acf
        if period > n_lags:
            raise ValueError(f"seasonal_period={period} is longer than the window "
                             f"(n_lags={n_lags}); the windows must hold at least two full "
                             f"seasons (n_lags >= {2 * period}).")
        if n_lags < 2 * period:
            raise ValueError(f"seasonal_period={period} needs at least two full seasons in "
                             f"every window (n_lags >= {2 * period}); X holds {n_lags} lags "
                             f"per system. Build X with sliding_window(Y, n_lags={2 * period}) "
                             f"or more.")
        self._check_seasonal_lags(int(period), n_lags)
        return int(period), None

    def _check_seasonal_lags(self, period, n_lags):
        if isinstance(self.aggregate_lags, Integral) and self.scaling not in \
                ("last", "mean", None) and self.aggregate_lags > n_lags - period:
            raise ValueError(f"aggregate_lags={self.aggregate_lags} exceeds the "
                             f"{n_lags - period} seasonal growth terms (n_lags - "
                             f"seasonal_period) of a seasonal ESE; use at most that, or a "
                             f"plain aggregate (scaling='last', 'mean' or None).")

    def _aggregate(self, A, scaling, k, estimator):
        """Aggregate forecasts of window totals A and the rows that fell back."""
        if scaling in ("seasonal", "seasonal_difference"):
            return _seasonal_aggregate_forecast(A, scaling, k, estimator,
                                                self.seasonal_period_, self.horizon)
        return _aggregate_forecast(A, scaling, k, estimator)

    def _fit_seasonal_aggregate(self, A, target, sample_weight):
        """The seasonal aggregate model: growth over one season.

        Target ``a / A_b`` (``b`` the newest step in the target's phase) on the newest ``k``
        seasonal growth ratios ``A_tau / A_{tau-m}`` (``"seasonal"``, every training total
        positive), or ``a - A_b`` on the seasonal differences (``"seasonal_difference"``).
        """
        period, n_lags = self.seasonal_period_, A.shape[1]
        positive = bool(np.all(A > 0))
        if self.scaling == "seasonal" and not positive:
            raise ValueError(f"scaling='seasonal' needs positive totals in every training "
                             f"window; {int(np.sum(~(A > 0)))} of {A.size} are <= 0; use "
                             f"scaling='auto' or None.")
        scaling = "seasonal" if positive else "seasonal_difference"
        base = A[:, _seasonal_base(n_lags, period, self.horizon)]
        Z = _seasonal_design(A, period, scaling == "seasonal")
        t = target / base if scaling == "seasonal" else target - base
        width = n_lags - period
        aic = None
        if self.aggregate_lags == "aic":
            aic = _aic_orders(Z, t, sample_weight)
            k = int(np.argmin(aic)) + 1
        elif self.aggregate_lags is None:
            k = width
        else:
            k = int(self.aggregate_lags)
            if k > width:
                raise ValueError(f"aggregate_lags={k} exceeds the {width} seasonal growth "
                                 f"terms (n_lags - seasonal_period) of a seasonal ESE.")
        estimator = LinearRegression() if self.estimator is None else self.estimator
        fitted = fit_with_weights(clone(estimator), Z[:, width - k:], t, sample_weight)
        return scaling, k, aic, fitted

    def _fit_aggregate(self, A, target, sample_weight, record=False):
        """Scaling, order and fitted aggregate model on window totals A (N, p) and targets.

        With a season and ``scaling="auto"``, the seasonal-growth model and the plain one
        (``scaling`` resolved as without a season) are both fitted on the older windows and
        the one with the smaller RMSE of the aggregate on the newest ``validation_fraction``
        of them (weighted by ``sample_weight``) is refitted on all (``aggregate_scores_``
        when ``record``).
        """
        if self.seasonal_period_ is None or self.scaling in ("last", "mean", None):
            if record:
                self.aggregate_scores_ = None
            return self._fit_plain_aggregate(A, target, sample_weight,
                                             "auto" if self.scaling == "seasonal"
                                             else self.scaling)
        if self.scaling == "seasonal":
            if record:
                self.aggregate_scores_ = None
            return self._fit_seasonal_aggregate(A, target, sample_weight)
        N = A.shape[0]
        n_val = max(1, int(np.ceil(self.validation_fraction * N)))
        scores = {}
        if N - n_val >= 3:
            sw = None if sample_weight is None else sample_weight[:N - n_val]
            w_val = None if sample_weight is None else sample_weight[N - n_val:]
            for name, fit in (("seasonal", self._fit_seasonal_aggregate),
                              ("plain", lambda *a: self._fit_plain_aggregate(*a, "auto"))):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        scaling, k, _, est = fit(A[:N - n_val], target[:N - n_val], sw)
                        pred = self._aggregate(A[N - n_val:], scaling, k, est)[0]
                except ValueError:  # too few rows for this form: not a candidate
                    continue
                err2 = (pred - target[N - n_val:]) ** 2
                scores[name] = float(np.sqrt(np.average(err2, weights=w_val)))
        if record:
            self.aggregate_scores_ = scores or None
        if scores and min(scores, key=scores.get) == "plain" and \
                scores["plain"] < scores.get("seasonal", np.inf):
            return self._fit_plain_aggregate(A, target, sample_weight, "auto")
        return self._fit_seasonal_aggregate(A, target, sample_weight)

    def _fit_plain_aggregate(self, A, target, sample_weight, scaling):
        """The aggregate model of ESE without a season (``scaling`` as the parameter)."""
        n_lags = A.shape[1]
        scaling = _resolve_scaling(scaling, A[:, -1], A.mean(axis=1))
        c = _scale(A, scaling)
        if scaling is not None:
            _check_scaled_training(c, scaling, "last aggregate" if scaling == "last"
                                   else "mean aggregate")
        Z, t = A / c[:, None], target / c
        aic = None
        if self.aggregate_lags == "aic":
            aic = _aic_orders(Z, t, sample_weight)
            k = int(np.argmin(aic)) + 1
        elif self.aggregate_lags is None:
            k = n_lags
        else:
            k = int(self.aggregate_lags)
        estimator = LinearRegression() if self.estimator is None else self.estimator
        fitted = fit_with_weights(clone(estimator), Z[:, n_lags - k:], t, sample_weight)
        return scaling, k, aic, fitted

    def _share_grid(self, y):
        """Candidate (dampings, trends) of the time-ordered choice, or None (nothing chosen)."""
        fixed_damping = None if self.damping == "auto" else float(self.damping)
        fixed_trend = None if self.share_trend == "auto" else float(self.share_trend)
        if self.stop != "converge":  # the paper's iteration: its damping, no share trend
            fixed_damping = 0.5 if fixed_damping is None else fixed_damping
            fixed_trend = 0.0
        choose_form = self.seasonal_period_ is not None and self.seasonal_shares == "auto"
        if y.ndim == 1 or (fixed_damping is not None and fixed_trend is not None
                           and not choose_form):
            return None, (0.5 if fixed_damping is None else fixed_damping,
                          0.0 if fixed_trend is None else fixed_trend)
        return (DAMPING_GRID if fixed_damping is None else (fixed_damping,),
                SHARE_TREND_GRID if fixed_trend is None else (fixed_trend,)), None

    def _calibration_rows(self, N, sample_weight):
        """Number of newest training windows held out for the conformal scores, or 0."""
        if self.calibration is None:
            return 0
        if sample_weight is None:
            n_cal = int(np.ceil(self.calibration * N))
        else:
            n_cal = newest_rows_holding(sample_weight, self.calibration)
        if n_cal < 1 or N - n_cal < 2:
            return 0
        if self.init == "attributes" and self.stop != "converge" \
                and self.system_attributes_ is None:  # per-row attributes come only to predict
            return 0
        return n_cal

    def _fit_shares(self, X, W, A, y, target, system_attributes, sample_weight, has_negative):
        """Choose the shares (``"auto"``) and compute the conformal calibration scores.

        The calibration scores are the normalised errors, on the newest ``calibration``
        windows, of the estimator fitted (with the same settings) on the older ones. Both fits
        share everything that does not depend on their training rows: the window totals
        ``A``, and one pass over the union of their validation windows scores every candidate
        share for both (the shares of a window depend on that window alone). The older
        windows' aggregate model is fitted on its rows; its shares are those it chooses.
        """
        N = X.shape[0]
        Y2 = y.reshape(-1, 1) if y.ndim == 1 else y
        self.nonnegative_ = not (has_negative or bool(y.min() < 0))
        floor = 1e-3 * np.average(Y2 if self.nonnegative_ else np.abs(Y2), axis=0,
                                  weights=sample_weight)
        self.sigma_floor_ = np.where(floor > 0, floor, 1.0)
        self.calibration_scores_ = None
        self.calibration_weights_ = None
        n_cal = self._calibration_rows(N, sample_weight)
        n_fit = N - n_cal  # rows of the calibration fit (the older windows)
        grid, fixed = self._share_grid(y)
        self.selection_scores_ = None
        union = None  # (first row, rescaled windows, totals) of the scored windows
        form = None if self.seasonal_period_ is None else (
            "profile" if self.seasonal_shares == "auto" else self.seasonal_shares)
        self.seasonal_shares_ = form
        if grid is None:
            self.damping_, self.share_trend_ = fixed
            cal_choice = (*fixed, form)
        else:
            fits = [(N, sample_weight)]
            if n_cal:
                fits.append((n_fit, None if sample_weight is None
                             else sample_weight[:n_fit]))
            chosen, union = self._choose_shares(W, A, y, target, grid, fits, has_negative)
            (self.damping_, self.share_trend_, self.selection_scores_,
             self.seasonal_shares_) = chosen[0]
            cal_choice = (chosen[-1][0], chosen[-1][1], chosen[-1][3])
        if not n_cal:
            return
        sw_fit = None if sample_weight is None else sample_weight[:n_fit]
        with warnings.catch_warnings():  # the outer fit reports the estimator's warnings
            warnings.simplefilter("ignore")
            scaling, k, _, estimator = self._fit_aggregate(A[:n_fit], target[:n_fit], sw_fit)
            aggregate = self._aggregate(A[n_fit:], scaling, k, estimator)[0]
        if self.stop == "converge":
            if union is not None and union[0] <= n_fit:  # the calibration rows were scored
                W_cal, M_cal = union[1][n_fit - union[0]:], union[2][n_fit - union[0]:]
            else:
                view = W[n_fit:]
                W_cal = _rescaled_windows(view, nonneg=not has_negative)
                M_cal = A[n_fit:] if W_cal is view else None
            e = _kernel_shares(W_cal, cal_choice[0], cal_choice[1], self.horizon, M=M_cal,
                               period=self.seasonal_period_, form=cal_choice[2])
        else:  # the iterative stops have the same (fixed) damping in both fits
            with warnings.catch_warnings():  # the outer fit reports the same conditions
                warnings.simplefilter("ignore")
                e, _ = self._shares(X[n_fit:], None)
        pred = aggregate[:, None] * e
        self.calibration_scores_ = np.abs(Y2[n_fit:] - pred) / self._sigma(W[n_fit:])
        if sample_weight is not None:
            self.calibration_weights_ = sample_weight[n_fit:].copy()

    def _choose_shares(self, W, A, y, target, grid, fits, has_negative):
        """Time-ordered choice of (damping, trend) for each fit ``(n_rows, sample_weight)``.

        Fit ``f`` uses the first ``n_rows`` windows; its validation windows are the newest of
        them holding ``validation_fraction`` of its rows (or weight). Every candidate is
        scored on the union of the validation windows in one pass. Returns, per fit,
        ``(damping, trend, scores)``, and ``(first row, rescaled windows, totals)`` of that
        union (rows ``first`` to the last training window).
        """
        dampings, trends = grid
        sets = []
        for n_rows, sw in fits:
            if sw is None:
                n_val = max(1, int(np.ceil(self.validation_fraction * n_rows)))
                w_val = np.full(n_val, 1.0 / n_val)
            else:
                n_val = newest_rows_holding(sw, self.validation_fraction)
                w_val = sw[-n_val:] / sw[-n_val:].sum()
            sets.append((n_rows - n_val, n_rows, w_val, sw is None))
        lo, hi = min(s[0] for s in sets), max(s[1] for s in sets)
        view = W[lo:hi]
        W_u = _rescaled_windows(view, nonneg=not has_negative)  # view unless a row is extreme
        M = A[lo:hi] if W_u is view else _window_totals(W_u)
        valid = np.isfinite(M) & (M > 0)
        row_weights = np.zeros((len(sets), hi - lo))
        for s, (a, b, w_val, _) in enumerate(sets):
            row_weights[s, a - lo:b - lo] = w_val
        nonneg = ~(W_u < 0).any(axis=(1, 2)) if has_negative else None
        # damping 1 weighs one step: no slope, the same shares for every trend
        candidates = [(lam, trend) for lam in dampings for j, trend in enumerate(trends)
                      if not (j and lam == 1)]
        period = self.seasonal_period_
        if period is None:
            forms = (None,)
            sse = _candidate_errors(W_u, M, valid, y[lo:hi], target[lo:hi], candidates,
                                    self.horizon, row_weights, nonneg)
            index = {pair: c for c, pair in enumerate(candidates)}
            cells = [index[(lam, trend if lam != 1 else trends[0])]
                     for lam in dampings for trend in trends]
        else:  # the form of the seasonal shares is a third axis of the choice
            forms = (("profile", "difference", "none") if self.seasonal_shares == "auto"
                     else (self.seasonal_shares,))
            triples = [(f, lam, trend) for f in forms for lam, trend in candidates]
            sse = _candidate_errors(W_u, M, valid, y[lo:hi], target[lo:hi], triples,
                                    self.horizon, row_weights, nonneg, period=period)
            index = {triple: c for c, triple in enumerate(triples)}
            cells = [index[(f, lam, trend if lam != 1 else trends[0])]
                     for f in forms for lam in dampings for trend in trends]
        out = []
        for s, (a, b, w_val, unweighted) in enumerate(sets):
            W_last, Y_val = W[a:b, :, -1], y[a:b]
            if self.selection_score == "relative_rmse":  # per-system RMSE over the RW's
                err2 = (W_last - Y_val) ** 2
                rw = np.sqrt(np.mean(err2, axis=0)) if unweighted else np.sqrt(w_val @ err2)
                weight = np.where(rw > 0, 1.0 / np.where(rw > 0, rw, 1.0), 0.0)
                if not weight.any():  # the random walk is exact everywhere: plain RMSE
                    weight = np.ones_like(rw)
                weight = weight / np.count_nonzero(weight)  # mean of the per-system ratios
            else:
                weight = np.full(Y_val.shape[1], 1.0 / Y_val.shape[1])
            flat = np.sqrt(sse[s]).T @ weight  # (n_candidates,)
            scores = flat[cells].reshape(len(forms), len(dampings), len(trends))
            scores = np.where(np.isfinite(scores), scores, np.inf)
            f, g, j = np.unravel_index(int(np.argmin(scores)), scores.shape)  # first minimum
            if period is None:
                scores = scores[0]
            out.append((float(dampings[g]), float(trends[j]), scores, forms[f]))
        return out, (lo, W_u, M)

    def _sigma(self, W):
        """Scale of each (row, system) for the conformal scores: recent mean absolute value."""
        k = self.aggregate_lags_
        recent = W[:, :, W.shape[2] - k:]
        # windows at predict time may hold negatives although the training data did not
        if not (self.nonnegative_ and recent.min(initial=0.0) >= 0):
            recent = np.abs(recent)
        # einsum: a sum over the short last axis, faster than mean() there
        level = np.einsum("rik->ri", recent) / k
        return np.maximum(level, self.sigma_floor_)

    def _check_attributes(self, attributes, n_samples, in_fit):
        if attributes is None:
            return None
        try:
            arr = np.asarray(attributes, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"system_attributes must be numeric; conversion failed: {exc}") \
                from exc
        n = self.n_systems_
        expected = f"expected ({n}, m) or ({n_samples}, {n}, m)"
        if arr.ndim == 3 and in_fit:
            raise ValueError(f"system_attributes of shape {arr.shape} are time-varying; fit takes "
                             f"static ones ({n}, m); pass time-varying ones to predict.")
        if arr.ndim == 2:
            ok = arr.shape[0] == n and arr.shape[1] >= 1
        elif arr.ndim == 3:
            ok = arr.shape[:2] == (n_samples, n) and arr.shape[2] >= 1
        else:
            ok = False
        if not ok:
            raise ValueError(f"system_attributes has shape {arr.shape}; {expected}.")
        bad = ~np.isfinite(arr)
        if bad.any():
            raise ValueError(f"system_attributes contains {int(bad.sum())} NaN or infinite "
                             f"values ({int(np.isnan(arr).sum())} NaN); {expected} finite.")
        return arr

    def _shares(self, X, system_attributes, init=None, verbose=None):
        init = self.init if init is None else init
        verbose = self.verbose if verbose is None else verbose
        W = _rescaled_windows(self._windows(X))
        attributes = self._check_attributes(system_attributes, X.shape[0], in_fit=False)
        if self.stop == "converge":
            zeros = np.zeros(X.shape[0], dtype=np.int64)
            if self.share_trend_ == 0 and self.seasonal_period_ is None:
                return _closed_form_shares(W, self.damping_), zeros
            return _kernel_shares(W, self.damping_, self.share_trend_, self.horizon,
                                  period=self.seasonal_period_,
                                  form=self.seasonal_shares_), zeros
        if attributes is None:
            attributes = self.system_attributes_
        if init == "attributes" and attributes is None:
            raise ValueError(
                "init='attributes' needs system_attributes (n_systems, n_attributes) in fit or "
                "(n_samples, n_systems, n_attributes) in predict; none was given."
            )
        tol = self.tol if self.tol is not None else (0.1 if self.stop == "ted" else 0.05)
        N = X.shape[0]
        n_jobs = effective_n_jobs(self.n_jobs)
        n_chunks = min(N, max(n_jobs * 4 if n_jobs > 1 else 1, 20 if verbose else 1))
        bounds = np.linspace(0, N, n_chunks + 1).astype(int)
        spans = list(zip(bounds[:-1], bounds[1:], strict=True))

        def alpha(a, b):  # static attributes go whole to every chunk, per-row ones sliced
            if init != "attributes":
                return None
            return attributes if attributes.ndim == 2 else attributes[a:b]

        jobs = (delayed(_chunk_shares)(W[a:b], init, alpha(a, b), self.damping_, self.max_iter,
                                       self.stop, tol) for a, b in spans)
        results = Parallel(n_jobs=self.n_jobs, return_as="generator")(jobs)
        bar = progress_bar(total=N, verbose=verbose, desc="ESE shares", unit="row",
                           mininterval=0, miniters=1)  # a log line per chunk of rows
        parts = []
        for (a, b), res in zip(spans, results, strict=True):
            parts.append(res)
            bar.update(b - a)
        bar.close()
        e = np.concatenate([p[0] for p in parts])
        n_iter = np.concatenate([p[1] for p in parts])
        status = np.concatenate([p[2] for p in parts])
        n_max_iter = int(np.sum(status == _MAX_ITER))
        n_not_coint = int(np.sum(status == _NOT_COINTEGRATED))
        if n_max_iter or n_not_coint:
            what = []
            if n_max_iter:
                what.append(f"stop={self.stop!r} not met within max_iter={self.max_iter} sweeps "
                            f"for {n_max_iter} of {N} rows; shares are the last iterate, "
                            "renormalised (raise max_iter, or use stop='converge' for the exact "
                            "fixed point).")
            if n_not_coint:
                what.append(f"stop={self.stop!r} not met for {n_not_coint} of {N} rows whose "
                            f"iteration converged: the fixed point is not cointegrated "
                            f"(p-value > tol={tol:g}) with every valid step's proportions; "
                            "shares are that fixed point (what stop='converge' gives).")
            warnings.warn(" ".join(what), ConvergenceWarning, stacklevel=3)
        return e, n_iter

    def equilibrium_shares(self, X, system_attributes=None, return_n_iter=False):
        """Equilibrium shares of each window (with the share trend when ``share_trend_ > 0``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_systems * n_lags)
            Windows as in :meth:`fit` (float; data units).
        system_attributes : array-like of shape (n_systems, n_attributes) or \
(n_samples, n_systems, n_attributes), default=None
            Attributes for ``init="attributes"`` (static or at each window's time); ``None``
            uses those given to ``fit``.
        return_n_iter : bool, default=False
            Also return the number of refinement sweeps per row.

        Returns
        -------
        shares : ndarray of shape (n_samples, n_systems)
            Float64 shares; each row sums to 1.
        n_iter : ndarray of shape (n_samples,)
            Sweeps run per row (int) (0 for ``stop="converge"``); only if ``return_n_iter``.

        Raises
        ------
        ValueError
            If ``X`` is invalid or ``system_attributes`` is missing (``init="attributes"``)
            or of the wrong shape.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        e, n_iter = self._shares(X, system_attributes)
        return (e, n_iter) if return_n_iter else e

    def predict(self, X, system_attributes=None):
        """Forecast every system: the aggregate forecast times the equilibrium shares.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_systems * n_lags)
            Windows as in :meth:`fit` (float; data units).
        system_attributes : array-like of shape (n_systems, n_attributes) or \
(n_samples, n_systems, n_attributes), default=None
            Attributes for ``init="attributes"``; ``None`` uses those given to ``fit``.
            Routed with ``set_predict_request(system_attributes=True)``.

        Returns
        -------
        y_pred : ndarray, DataFrame or Series of shape (n_samples, n_systems) or (n_samples,)
            Float64 forecasts (data units); 1-D when ``y`` was 1-D in ``fit``. A pandas ``X``
            (as :func:`sliding_window` makes from a DataFrame) gives a DataFrame (a Series when
            1-D) indexed like ``X``, with the system names of the ``y`` given to ``fit`` as
            columns (``system0, ...`` when that ``y`` was not pandas).

        Raises
        ------
        ValueError
            If ``X`` is invalid (NaN, wrong number of columns) or the attributes are.
        """
        check_is_fitted(self)
        X_in = X
        X = validate_data(self, X, reset=False, dtype=np.float64)
        y_pred = self._predict_array(X, system_attributes)
        return _as_pandas_like(y_pred, X_in, self.system_names_, self.y_ndim_ == 1)

    def predict_interval(self, X, coverage=0.9, system_attributes=None):
        """Forecasts with split-conformal prediction intervals for every system.

        The half-width for system ``i`` is ``q_i * sigma_{r,i}``: ``sigma_{r,i}`` is the
        system's mean absolute value over the newest ``aggregate_lags_`` steps of window
        ``r`` and ``q_i`` the ``ceil((n_cal + 1) * coverage)``-th smallest of the system's
        normalised calibration errors (``calibration_scores_``, from a clone fitted on the
        older training windows and evaluated on the newest ``calibration`` fraction); with
        ``sample_weight`` in ``fit``, the smallest normalised error whose cumulative
        calibration weight reaches ``(W + 1) * coverage`` (``W`` the calibration windows'
        total weight), which is the order statistic of the windows repeated by their integer
        weights. The intervals therefore cover the aggregate model's and the shares' errors
        together. On a panel without negative values the lower bound is clipped at 0.
        Coverage holds on average when the calibration errors are exchangeable with future
        ones; a composition or regime change after the calibration windows breaks that.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_systems * n_lags)
            Windows as in :meth:`fit` (float; data units).
        coverage : float in (0, 1), default=0.9
            Target probability that the interval holds the truth (per system and row).
        system_attributes : array-like, default=None
            As in :meth:`predict`.

        Returns
        -------
        lower, upper : ndarray, DataFrame or Series of shape (n_samples, n_systems) or \
(n_samples,)
            Float64 bounds (data units), shaped and typed like :meth:`predict`'s output;
            infinite (with a warning) when the calibration set is too small for ``coverage``
            (``ceil((n_cal + 1) * coverage) > n_cal``).

        Raises
        ------
        ValueError
            If ``coverage`` is not in (0, 1), or the estimator has no calibration scores
            (``calibration=None`` or fewer than 3 training windows).
        """
        check_is_fitted(self)
        if isinstance(coverage, bool) or not isinstance(coverage, Real) \
                or not 0 < coverage < 1:
            raise ValueError(f"coverage must be a float in (0, 1); got {coverage!r}.")
        if self.calibration_scores_ is None:
            raise ValueError(
                "predict_interval needs calibration scores, which fit computes with "
                f"calibration set (a fraction in (0, 1)) and at least 3 training windows; "
                f"this estimator has calibration={self.calibration!r}.")
        X_in = X
        X = validate_data(self, X, reset=False, dtype=np.float64)
        y_pred = self._predict_array(X, system_attributes).reshape(X.shape[0], -1)
        scores = self.calibration_scores_
        weights = getattr(self, "calibration_weights_", None)
        n_cal = scores.shape[0] if weights is None else float(weights.sum())
        if weights is None:
            rank = int(np.ceil((n_cal + 1) * coverage))
            too_few = rank > n_cal
        else:  # weighted split conformal: cumulative calibration weight >= (W + 1) coverage
            rank = (n_cal + 1) * coverage
            too_few = rank > n_cal * (1 + 1e-12)
        if too_few:
            what = "calibration windows" if weights is None else "of calibration weight"
            warnings.warn(f"coverage={coverage} needs at least {rank:g} {what}; "
                          f"there are {n_cal:g}: the intervals are infinite. Lower the coverage "
                          f"or raise calibration.", UserWarning, stacklevel=2)
            q = np.full(scores.shape[1], np.inf)
        elif weights is None:
            q = np.sort(scores, axis=0)[rank - 1]
        else:
            q = weighted_rank_value(scores, weights, rank)
        half = q[None, :] * self._sigma(self._windows(X))
        lower, upper = y_pred - half, y_pred + half
        if self.nonnegative_:  # nonnegative targets; a negative forecast keeps its lower end
            lower = np.where(y_pred >= 0, np.maximum(lower, 0.0), lower)
        if self.y_ndim_ == 1:
            lower, upper = lower[:, 0], upper[:, 0]
        names = self.system_names_
        return (_as_pandas_like(lower, X_in, names, self.y_ndim_ == 1),
                _as_pandas_like(upper, X_in, names, self.y_ndim_ == 1))

    def _predict_array(self, X, system_attributes):
        """Forecasts (ndarray) of validated windows."""
        e, _ = self._shares(X, system_attributes)
        A = _window_totals(self._windows(X))
        aggregate, bad = self._aggregate(A, self.scaling_, self.aggregate_lags_,
                                         self.estimator_)
        if bad.any():
            warnings.warn(
                f"{int(bad.sum())} of {X.shape[0]} rows have a scale (scaling={self.scaling_!r})"
                f" <= 0; their aggregate forecast is "
                + ("the newest total (persistence)." if self.seasonal_period_ is None else
                   "the newest total in the target's phase (seasonal naive)."),
                UserWarning, stacklevel=3,
            )
        y_pred = aggregate[:, None] * e
        return y_pred[:, 0] if self.y_ndim_ == 1 else y_pred
