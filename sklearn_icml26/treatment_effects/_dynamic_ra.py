"""Longitudinal regression adjustment with covariate transitions (DynamicRA).

Time-resolved treatment effects in randomised experiments with repeated measures: a transition
model of the history, integrated forward by Monte Carlo, builds the outcome model of every period,
and an augmented, cross-fitted estimator corrects it (Chihara et al., arXiv 2605.31443).

Layout of the data (one row per unit)::

    X = [B | X_0 | X_1 | ... | X_{T-1}]     baseline columns, then k time-varying columns a period
    y = [Y_0 | Y_1 | ... | Y_{T-1}]          NaN from the first missed visit on (monotone dropout)
    treatment = W (n,) or W_t (n, T)         integer codes; a routed fit parameter

History: ``H_0 = (B, X_0)``, ``H_t = (H_{t-1}, X_t, Y_{t-1})``; the step block drawn by the
transition kernel is ``S_t = (X_{t+1}, Y_t)``.
"""

import numbers
import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn import config_context
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import GroupKFold, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import (
    check_array,
    check_consistent_length,
    check_is_fitted,
    check_random_state,
    validate_data,
)
from threadpoolctl import threadpool_limits

from .._compat import HasMethods, Interval, StrOptions, _fit_context
from ..utils._parallel import Parallel, delayed
from ..utils._progress import progress_bar
from ..utils._weights import check_sample_weight
from ._baselines import _baselines
from ._inference import (
    _AdjusterInferenceMixin,
    _effect_projection,
    _encode_groups,
    _mean_std_err,
)
from ._learners import _SubsampledARDGaussianProcess
from ._simulation import (
    _CHUNK_ROWS,
    _fit_regime_fold,
    _history_index,
    _is_affine,
    _is_affine_kernel,
    _step_slice,
)
from ._transition import LinearGaussianTransition

__all__ = ["LongitudinalRegressionAdjuster"]

_CENSORING_FLOOR = 0.01
_GP_N_HYPER = 100  # training rows that fit the kernel of outcome_model="gp"
# largest |value| of X and y accepted by the adjuster: its squares, summed over units and
# weighted by inverse path probabilities, must stay far below the float64 maximum (~1.8e308)
_MAX_ABS_INPUT = 1e100


def _check_magnitude(values, name):
    """Reject data whose squares would overflow float64 in the adjuster (NaN cells skipped)."""
    finite = values[~np.isnan(values)]
    peak = float(np.max(np.abs(finite))) if finite.size else 0.0
    if peak > _MAX_ABS_INPUT:
        raise ValueError(
            f"{name} has values up to {peak:.3g} in absolute value; values beyond "
            f"{_MAX_ABS_INPUT:.0e} make the squares in the regressions and standard errors "
            f"overflow float64 (NaN/inf estimates): rescale {name} (e.g. divide by its "
            "standard deviation)"
        )


class LongitudinalRegressionAdjuster(_AdjusterInferenceMixin, RegressorMixin, BaseEstimator):
    """Time-resolved treatment effects of randomised trials with covariate transitions.

    For repeated-measures randomised experiments, estimates per period ``t`` the mean outcome
    ``mu_t(a)`` under a treatment regime ``a`` (a fixed treatment sequence; by default always-
    vs never-treat) and the effect curve ``tau_t = mu_t(a^1) - mu_t(a^0)``. Post-treatment
    covariates and past outcomes enter without bias: a transition model of the history,
    integrated forward by Monte Carlo (``q_method="simulate"``) or regressed backwards
    (``q_method="regress"``), builds the outcome model of each period, and an augmented,
    cross-fitted estimator corrects it [1]_. Inference: influence-function (Wald) standard
    errors (cluster-robust when ``groups`` is passed to :meth:`fit`), multiplier bootstrap and
    a sup-t uniform band over periods; conditional effects given baseline covariates come with
    standard errors through their best linear projection [3]_ (:meth:`predict_effect`).
    Monotone dropout (NaN in ``y``) is handled by inverse probability of censoring weights
    (missing at random given the observed history). The difference in means, CUPED and
    Lin's regression (HC2) per period are computed in the same fit for comparison.

    Parameters
    ----------
    n_time_varying : int, default=0
        Number ``k`` of time-varying covariates per period. ``X`` is
        ``[B | X_0 | ... | X_{T-1}]``: its last ``k * n_periods`` columns are the time-varying
        blocks, the rest are baseline covariates ``B``. With 0, ``X`` is all baseline (past
        outcomes still enter the history).
    outcome_model : regressor, "gp" or None, default=None
        Outcome model ``m_t(H_t) = E[Y_t | H_t, on path]`` (and the backward regressions under
        ``q_method="regress"``), cloned per (regime, period, fold); ``None`` uses
        :class:`~sklearn.linear_model.LinearRegression`. ``"gp"`` is a flexible learner for
        smooth outcome surfaces: Gaussian-process regression on standardised inputs with an
        ARD kernel ``c * RBF(one length scale per column) + white noise``, its hyperparameters
        fitted by marginal likelihood on 100 random training units (seeded from
        ``random_state``), then refitted exactly on all of them. Its cost grows with the cube
        of the units per fold and with the history's width: pair it with
        ``history_window=0`` (then no simulation is run). It takes ``sample_weight`` as
        integer frequency weights only (each unit repeated that many times, so the cost
        grows with the total weight). Its standard errors against Lin's and other outcome
        and transition models are compared in the
        :ref:`user guide <user_guide_longitudinal>`.
    transition_model : estimator or None, default=None
        Transition kernel of the step block ``S_t = (X_{t+1}, Y_t)`` given ``H_t``: an object
        with ``fit(H, S)`` and ``sample(H, z)`` (``z`` standard normal, one row per draw), or a
        regressor, which becomes the ``mean_model`` of a :class:`LinearGaussianTransition`;
        ``None`` uses ``LinearGaussianTransition()``. A linear kernel with a flexible outcome
        model is worse than a direct AIPW: pair flexible outcome models with flexible
        transitions, or use ``q_method="regress"`` or ``history_window=0``.
    q_method : {"simulate", "regress"}, default="simulate"
        How ``Q_s^(t)(h) = E[Y_t | H_s = h, on path]`` is built for ``s < t``: forward Monte
        Carlo through the transition kernel (the paper) or backward regression of
        ``Q_{s+1}^(t)`` on ``H_s`` with the outcome model (iterated conditional expectations).
    censoring_model : classifier or None, default=None
        Model of ``P(C_t = 1 | H_t, on path, present before t)``, used only when ``y`` has NaN;
        ``None`` uses a standard-scaled :class:`~sklearn.linear_model.LogisticRegression`. A
        risk set with one class in a fold gets a constant rate. Probabilities are clipped below
        at 0.01 (with a warning).
    regimes : array-like of shape (2, n_periods) or None, default=None
        Treatment codes of the regime of interest (row 0) and the reference (row 1), per
        period; ``None`` is ``[[1] * T, [0] * T]`` (always vs never treated). Ignored in
        single-arm mode.
    propensity : float, array-like of shape (2, n_periods) or None, default=None
        Probability of following each regime through period ``t``. ``None`` estimates it from
        the data (empirical sequential frequencies). A float ``p`` in (0, 1) means randomised
        once at baseline with ``P(W = 1) = p`` (regimes must be constant in time). An array
        gives the known path probabilities of both regimes, in (0, 1].
    history_window : int or None, default=None
        ``None`` keeps the full history; ``w >= 0`` keeps ``B``, ``X_0`` and the last ``w``
        blocks ``(X_s, Y_{s-1})``. With 0 the estimator is a per-period AIPW on baseline
        covariates; the outcome models then read ``H_0`` only, so the particle means are
        ``m_t(H_0)`` exactly and no forward simulation is run.
    cv : int, cross-validation splitter or list, default=5
        Cross-fitting folds: an int ``K >= 2`` gives a shuffled
        :class:`~sklearn.model_selection.KFold` seeded from ``random_state``; a splitter's
        ``split(X)`` is used as it is, and so is a list of ``(train, test)`` index pairs.
    n_mc : int, default=128
        Monte Carlo particles per unit and start period (``q_method="simulate"``). With
        affine nuisances (a scikit-learn linear outcome model and a
        :class:`LinearGaussianTransition` with a linear mean, the defaults) the average over
        ``n_mc`` particles equals the chain driven by the mean of their noise, which is drawn
        directly (``N(0, I / n_mc)``): the same estimator in law at the cost of one particle.
    n_bootstrap : int, default=1000
        Multiplier-bootstrap draws for bootstrap intervals and the uniform band.
    n_jobs : int or None, default=None
        Parallel jobs over (regime, fold) pairs (joblib); ``None`` means 1. The workers'
        warnings are issued again in the caller, so every ``n_jobs`` shows the same ones.
    random_state : int, RandomState instance or None, default=None
        Seeds folds, particles, the prediction noise and bootstrap draws (through
        :class:`numpy.random.SeedSequence` children). Pass an int for reproducible output.
    verbose : int, default=0
        When positive, show the progress over (regime, fold) pairs: a bar in a terminal, one
        plain line per pair in a log.

    Attributes
    ----------
    n_features_in_ : int
        Number of columns of ``X``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names of ``X`` when it is a DataFrame with string column names.
    n_periods_ : int
        Number of periods ``T`` (columns of ``y``).
    n_baseline_ : int
        Number of baseline columns ``B``.
    single_arm_ : bool
        Whether the fit had no treatment (one "regime": the observed one).
    regimes_ : ndarray of shape (2, n_periods) or None
        Regimes compared; ``None`` in single-arm mode.
    means_ : ndarray of shape (n_regimes, n_periods)
        Augmented estimates of the regime means ``mu_t`` (``n_regimes`` is 1 single-arm, else 2).
    means_se_ : ndarray of shape (n_regimes, n_periods)
        Their influence-function standard errors (cluster-robust with ``groups``).
    gformula_means_ : ndarray of shape (n_regimes, n_periods)
        Plug-in (g-formula) means, the average of ``q0_``.
    path_probabilities_ : ndarray of shape (n_regimes, n_periods)
        Probability of following each regime's treatment sequence through ``t`` (known or
        empirical; censoring weights come on top, unit by unit).
    n_on_path_ : ndarray of shape (n_regimes, n_periods)
        Units that follow each regime and are observed through ``t``.
    effect_ : ndarray of shape (n_periods,) or None
        Effect curve ``means_[0] - means_[1]``; ``None`` single-arm.
    effect_se_ : ndarray of shape (n_periods,) or None
        Its influence-function standard error (cluster-robust with ``groups``).
    effect_projection_coef_ : ndarray of shape (n_periods, 1 + n_baseline + n_time_varying)
        Best linear projection of the conditional effect on ``[1, B, X_0]`` per period (OLS
        of the doubly robust effect scores; aliased columns get 0); used by
        :meth:`predict_effect` with ``method="projection"``. Not set single-arm.
    effect_projection_cov_ : ndarray of shape (n_periods, 1 + n_baseline + n_time_varying, \
            1 + n_baseline + n_time_varying)
        Its sandwich covariance per period: HC0, or CR1 cluster-robust with ``groups``.
    n_groups_ : int or None
        Number of clusters in ``groups`` (None when fitted without ``groups``).
    q0_ : ndarray of shape (n_samples, n_regimes, n_periods)
        Cross-fitted plug-in predictions ``Q_0^(t)(H_0)`` of each unit.
    influence_ : ndarray of shape (n_samples, n_regimes, n_periods)
        Centred influence values ``phi_i(t) - mu_t`` of each regime.
    baselines_ : pandas.DataFrame
        Per period: units on each path, DiM, CUPED and Lin (HC2) estimates with standard errors
        (single-arm: the sample mean and its standard error).
    folds_ : ndarray of shape (n_samples,)
        Cross-fitting fold of each unit.
    outcome_models_ : list
        ``[regime][t][fold]`` fitted outcome models.
    transition_models_ : list or None
        ``[regime][t][fold]`` fitted transition kernels (``q_method="simulate"``).
    censoring_models_ : list or None
        ``[regime][t][fold]`` fitted censoring models; ``None`` without dropout.
    mc_noise_ : ndarray of shape (n_mc, n_periods - 1, n_time_varying + 1)
        Standard normal noise shared by all rows in :meth:`predict` (row-wise, deterministic).
    q_models_ : list
        ``[regime][fold]`` dicts ``{(s, t): model}`` of the regressions ``Q_s^(t)`` of
        ``q_method="regress"`` (None entries for the other methods).
    sample_weight_ : ndarray of shape (n_samples,) or None
        The frequency weights of the fit, used by the standard errors and the bootstrap.
    group_codes_ : ndarray of shape (n_samples,) or None
        Cluster of each unit, coded ``0..n_groups_ - 1`` (None without ``groups``).
    bootstrap_seed_ : int
        Seed of the multiplier-bootstrap draws of :meth:`conf_int` and
        :meth:`band_critical_value`, drawn from ``random_state`` in ``fit``.
    y_ndim_ : int
        Dimensions of ``y`` in ``fit``: :meth:`predict` returns 1-D when it was 1.

    See Also
    --------
    LinearGaussianTransition : The default transition kernel.
    panel_to_arrays : Build ``X``, ``y`` and ``treatment`` from a long-format panel.

    Notes
    -----
    For unit ``i`` and start ``s``, ``G_i[s, t]`` is the Monte Carlo estimate of
    ``Q_s^(t)(H_is)`` (``n_mc`` particles drawn forward from ``H_is``), ``G_i[t, t]`` is
    ``m_t(H_it)`` and ``G_i[t+1, t] = Y_it``. The estimate is ``mean_i phi_i(t)`` with
    ``phi_i(t) = G_i[0, t] + sum_{s<=t} I_is / pi_is (G_i[s+1, t] - G_i[s, t])``, ``I_is``
    the indicator of following the regime (and being observed) through ``s`` and ``pi_is``
    its probability. When treatment is randomised once at baseline the sum telescopes to an
    AIPW on baseline covariates whose outcome model chains the transitions: linear nuisances
    then tie Lin's estimator; gains come from better outcome models, or from sequential
    designs, where units leaving the regime still contribute through the transition terms.
    Without ``treatment`` (single-arm mode) the estimate of ``mu_t`` is the sample mean of
    ``y`` (or its IPCW-augmented version under dropout). Standard errors have no small-sample
    correction (HC2 has); the fold split moves small-trial estimates by a fraction of an SE:
    report ``random_state``.

    Lin's column of :meth:`summary` regresses ``y`` on ``[1, D, B_c, D * B_c]`` (``B_c`` the
    centred baseline covariates) with aliased columns dropped in column order, as R's ``lm``
    does: a duplicated covariate or dummies summing to the intercept change nothing. Two
    documented deviations from plain HC2: units with leverage ``h_ii >= 1 - 1e-10`` (e.g.
    the only unit of a covariate level in its arm) have zero residuals, so the pooled
    residual variance ``RSS / (n - rank)`` stands in for their ``e_i^2 / (1 - h_ii)`` (with
    a warning that counts them; ``lin_se`` is NaN when no residual degrees of freedom
    remain), and a treatment coefficient that is not identified in the full design (a
    covariate constant within one arm) is reported with that convention and a warning.

    References
    ----------
    .. [1] Chihara, Oka, Matsubara, Sakurai, Yasui, "Modeling Covariate Transition for
       Efficient Estimation of Longitudinal Treatment Effects in Randomized Experiments",
       ICML 2026, arXiv:2605.31443.
    .. [2] Lin, "Agnostic notes on regression adjustments to experimental data: reexamining
       Freedman's critique", Annals of Applied Statistics 7(1), 2013, arXiv:1208.2301.
    .. [3] Semenova, Chernozhukov, "Debiased machine learning of conditional average
       treatment effects and other causal functions", The Econometrics Journal 24(2), 2021,
       arXiv:1702.06240.

    Examples
    --------
    The respiratory trial (111 patients, good respiratory status at months 1 to 4, treatment
    vs placebo; the loader reads the data home, or downloads the file once):

    >>> from sklearn_icml26.datasets import load_respiratory
    >>> from sklearn_icml26.treatment_effects import LongitudinalRegressionAdjuster
    >>> trial = load_respiratory()
    >>> est = LongitudinalRegressionAdjuster(random_state=0)
    >>> est = est.fit(trial.X, trial.y, treatment=trial.treatment)
    >>> est.effect_.round(2)  # difference in the probability of a good status, per month
    array([0.2 , 0.32, 0.28, 0.2 ])
    >>> table = est.summary()  # with DiM, CUPED and Lin (HC2) per month beside it
    >>> table[["estimate", "std_err", "lin", "lin_se"]].shape
    (4, 4)
    >>> bool(table["se_ratio_lin"].between(0.9, 1.1).all())  # as precise as Lin's here
    True
    >>> est.conf_int(kind="uniform").shape  # sup-t band over the four months
    (4, 2)
    """

    # treatment is needed by every two-arm fit and score: requested by default, so that
    # GridSearchCV, cross_validate and Pipeline route it with metadata routing enabled and
    # no set_fit_request / set_score_request call
    __metadata_request__fit = {"treatment": True, "groups": True}
    __metadata_request__score = {"treatment": True}

    _parameter_constraints = {
        "n_time_varying": [Interval(Integral, 0, None, closed="left")],
        "outcome_model": [HasMethods(["fit", "predict"]), StrOptions({"gp"}), None],
        "transition_model": [HasMethods(["fit"]), None],
        "q_method": [StrOptions({"simulate", "regress"})],
        "censoring_model": [HasMethods(["fit", "predict_proba"]), None],
        "regimes": ["array-like", None],
        "propensity": [Interval(Real, 0, 1, closed="neither"), "array-like", None],
        "history_window": [Interval(Integral, 0, None, closed="left"), None],
        "cv": [Interval(Integral, 2, None, closed="left"), HasMethods(["split"]), list],
        "n_mc": [Interval(Integral, 1, None, closed="left")],
        "n_bootstrap": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_time_varying=0,
        *,
        outcome_model=None,
        transition_model=None,
        q_method="simulate",
        censoring_model=None,
        regimes=None,
        propensity=None,
        history_window=None,
        cv=5,
        n_mc=128,
        n_bootstrap=1000,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.n_time_varying = n_time_varying
        self.outcome_model = outcome_model
        self.transition_model = transition_model
        self.q_method = q_method
        self.censoring_model = censoring_model
        self.regimes = regimes
        self.propensity = propensity
        self.history_window = history_window
        self.cv = cv
        self.n_mc = n_mc
        self.n_bootstrap = n_bootstrap
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ---------------------------------------------------------------- test hooks

    @classmethod
    def _get_test_params(cls):
        return [{"cv": 3, "n_mc": 8, "n_bootstrap": 50, "random_state": 0}]

    # ---------------------------------------------------------------- validation

    def _check_inputs(self, X, y, treatment):
        if y is None:  # validate_data says y is required
            validate_data(self, X, y)
        X = validate_data(self, X, dtype=np.float64)
        y = check_array(y, ensure_2d=False, allow_nd=True, ensure_all_finite="allow-nan",
                        dtype=np.float64, input_name="y")
        if y.ndim > 2:
            raise ValueError(f"y must be 1-D or 2-D (n_samples, n_periods); got shape {y.shape}")
        check_consistent_length(X, y)
        if np.isinf(y).any():
            raise ValueError("Input y contains infinity; only NaN (dropout) is allowed")
        _check_magnitude(X, "X")
        _check_magnitude(y, "y")
        Y = y.reshape(len(y), -1)
        n, T = Y.shape
        p, k = X.shape[1], self.n_time_varying
        if p < k * T:
            raise ValueError(
                f"X has {p} columns but n_time_varying={k} with n_periods={T} needs at least "
                f"{k * T}"
            )
        observed = ~np.isnan(Y)
        bad = np.flatnonzero((observed[:, 1:] & ~observed[:, :-1]).any(axis=1))
        if bad.size:
            ids = ", ".join(map(str, bad[:10])) + (", ..." if bad.size > 10 else "")
            raise ValueError(f"y has non-monotone missing values for units {ids}")
        for t in range(T):
            if observed[:, t].sum() < 1:
                raise ValueError(
                    f"Input y contains NaN only at period {t}: y has no observed value there"
                )
        W = unknown = None
        if treatment is not None:
            W = np.asarray(treatment)
            if W.ndim == 2 and W.shape[1] == 1 and T > 1:
                W = W[:, 0]
            if W.ndim not in (1, 2) or W.shape[0] != n or (W.ndim == 2 and W.shape[1] != T):
                raise ValueError(
                    f"treatment must have shape (n_samples,)=({n},) or (n_samples, n_periods)="
                    f"({n}, {T}); got {W.shape}"
                )
            unknown = None
            if W.dtype.kind == "f" and np.isnan(W).any():
                unknown = np.isnan(W)
                if W.ndim != 2 or np.any(unknown & observed):
                    raise ValueError(
                        "treatment has NaN where the outcome is observed; NaN is allowed only "
                        "in per-period treatment after a unit's dropout"
                    )
                W = np.where(unknown, 0.0, W)
            if W.dtype.kind in "iub":
                W = W.astype(np.int64)
            elif W.dtype.kind == "f" and np.all(np.isfinite(W)) and np.all(W == np.round(W)):
                W = W.astype(np.int64)
            else:
                raise ValueError(
                    f"treatment must be integer-coded (e.g. 0/1); got dtype {W.dtype}"
                    + (" with non-integer values" if W.dtype.kind == "f" else "")
                )
            codes = np.unique(W if unknown is None else W[~unknown])
            if codes.size < 2:
                raise ValueError(
                    f"treatment takes the single value {codes[0]}; omit treatment for "
                    "single-arm mode"
                )
            if W.ndim == 1:
                W = np.repeat(W[:, None], T, axis=1)
            if unknown is None:
                unknown = np.zeros(W.shape, dtype=bool)
        return X, y, Y, W, unknown

    def _check_regimes(self, W, T, unknown):
        W = W[~unknown]
        if self.regimes is None:
            regimes = np.array([[1] * T, [0] * T])
        else:
            regimes = np.asarray(self.regimes)
            if regimes.shape != (2, T):
                raise ValueError(
                    f"regimes must have shape (2, n_periods)=(2, {T}); got {regimes.shape}"
                )
            if regimes.dtype.kind == "f" and np.all(regimes == np.round(regimes)):
                regimes = regimes.astype(np.int64)
            if regimes.dtype.kind not in "iub":
                raise ValueError(f"regimes must hold integer treatment codes; got {regimes.dtype}")
            regimes = regimes.astype(np.int64)
        codes = np.unique(W)
        absent = np.setdiff1d(np.unique(regimes), codes)
        if absent.size:
            raise ValueError(
                f"regimes use treatment codes {absent.tolist()} absent from treatment "
                f"(codes present: {codes.tolist()})"
            )
        return regimes

    def _check_propensity(self, regimes, T):
        p = self.propensity
        if p is None:
            return None
        if isinstance(p, numbers.Real):
            if np.any(regimes != regimes[:, :1]):
                raise ValueError(
                    "a float propensity means treatment randomised once at baseline, but the "
                    f"regimes vary over time: {regimes.tolist()}; pass an array of shape "
                    "(2, n_periods) of path probabilities instead"
                )
            if not set(np.unique(regimes[:, 0])) <= {0, 1}:
                raise ValueError(
                    "a float propensity is P(treatment = 1): the regimes must use codes 0/1; "
                    f"got {regimes[:, 0].tolist()}"
                )
            return np.array([[p if a == 1 else 1.0 - p] * T for a in regimes[:, 0]])
        arr = np.asarray(p, dtype=np.float64)
        if arr.shape != (2, T) or not np.all(np.isfinite(arr)) or np.any(arr <= 0) \
                or np.any(arr > 1):
            raise ValueError(
                "propensity must be None, a float in (0, 1) or an array of shape (2, n_periods)"
                f"=(2, {T}) with values in (0, 1]; got shape {arr.shape} with values "
                f"{np.round(arr, 4).tolist() if arr.size <= 20 else '...'}"
            )
        return arr

    def _folds(self, X, seed, groups=None, n_groups=None):
        n = X.shape[0]
        if isinstance(self.cv, numbers.Integral):
            if n < self.cv:
                raise ValueError(f"n_samples={n} is too few for cv={self.cv}")
            if groups is not None and n_groups < self.cv:
                raise ValueError(
                    f"groups has {n_groups} clusters, too few for cv={self.cv}: the "
                    "cross-fitting folds keep each cluster whole"
                )
            splitter = (KFold(n_splits=self.cv, shuffle=True, random_state=seed)
                        if groups is None else
                        GroupKFold(n_splits=self.cv, shuffle=True, random_state=seed))
        else:
            splitter = self.cv
        folds = np.full(n, -1)
        if isinstance(splitter, list):  # precomputed (train, test) index pairs
            splits = list(splitter)
        else:
            splits = list(splitter.split(X) if groups is None
                          else splitter.split(X, None, groups))
        for k, (_, test) in enumerate(splits):
            folds[test] = k
        if np.any(folds < 0):
            raise ValueError("cv must assign every unit to a test fold; some units were left out")
        if len(splits) < 2:
            raise ValueError(f"cv must give at least 2 folds; got {len(splits)}")
        return folds, len(splits)

    # ---------------------------------------------------------------- fit

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, treatment=None, groups=None, sample_weight=None):
        """Fit the nuisances by cross-fitting and estimate regime means and effects.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_baseline + n_time_varying * n_periods)
            ``[B | X_0 | ... | X_{T-1}]`` (float, no NaN): baseline covariates, then
            ``n_time_varying`` columns per period; ``X_t`` is measured before the treatment of
            period ``t``. Cells after a unit's dropout are ignored (e.g. 0).
        y : array-like of shape (n_samples,) or (n_samples, n_periods)
            Outcomes per period (float); NaN from a unit's first missed visit on (monotone
            dropout).
        treatment : array-like of shape (n_samples,) or (n_samples, n_periods), default=None
            Integer treatment codes (e.g. 0/1), fixed at baseline (1-D) or per period (NaN
            allowed after a unit's dropout). ``None`` is single-arm mode (the regime mean is
            the observed one). Requested by default as metadata, so Pipelines, searches and
            :func:`~sklearn.model_selection.cross_validate` route it once metadata routing is
            enabled, without ``set_fit_request``.
        groups : array-like of shape (n_samples,), default=None
            Cluster label of each unit (e.g. clinic, household, market) when units are
            grouped and outcomes may be correlated within a group. Standard errors, the
            bootstrap (one multiplier per cluster) and the anchors of :meth:`summary` then
            become cluster-robust (CR1: ``G / (G - 1)`` for the means and effects, the
            ``G/(G-1) (N-1)/(N-K)`` of statsmodels' ``cov_type="cluster"`` for the
            regressions), and an integer ``cv`` cross-fits with
            :class:`~sklearn.model_selection.GroupKFold` (shuffled, seeded from
            ``random_state``) so that each cluster stays in one fold; a splitter ``cv`` gets
            ``split(X, None, groups)``. Requested by default as metadata, like ``treatment``.
        sample_weight : array-like of shape (n_samples,), default=None
            Nonnegative weight of each unit (float), e.g. case weights or survey weights.
            Frequency weights, scikit-learn's convention: an integer weight ``w`` counts the
            unit ``w`` times and 0 leaves it out of every estimate (it stays in its fold).
            They weight every nuisance fit (outcome, transition and censoring models must
            accept ``sample_weight``), the empirical path probabilities, the regime means
            (``sum_i w_i phi_i / sum_i w_i``), the standard errors
            (``sqrt(sum_i w_i psi_i^2) / sum_i w_i``, cluster sums of ``w_i psi_i`` with
            ``groups``), the bootstrap (multipliers scaled by ``sqrt(w_i)``), the effect
            projection (weighted least squares) and the anchors of :meth:`summary` (weighted
            DiM, CUPED and Lin with HC2). The standard errors treat the weights as counts:
            with survey (inverse sampling probability) weights they are not the design-based
            ones. Cross-fitting folds and Monte Carlo particles are drawn per unit, so a fit
            with integer weights equals the fit of the repeated units exactly when the folds
            keep a unit's copies together (a splitter ``cv``) and no particle is drawn
            (``q_method="regress"``, or one period), otherwise up to Monte Carlo and fold
            noise. Routed with ``set_fit_request(sample_weight=True)``.

        Returns
        -------
        self : LongitudinalRegressionAdjuster
            The fitted estimator.

        Raises
        ------
        ValueError
            On bad input: too few columns of ``X`` for ``n_time_varying * n_periods``, ``y``
            3-D, infinite or with non-monotone missing values, too few samples for ``cv``,
            treatment of the wrong shape, not integer-coded or single-valued, regimes of the
            wrong shape or with absent codes, a float ``propensity`` with time-varying regimes,
            a bad propensity array, fewer than 2 units on a regime's path in a training
            fold, ``groups`` of the wrong shape, with NaN or with fewer than 2 clusters (or
            fewer clusters than an integer ``cv``), ``X`` or ``y`` with values beyond 1e100
            in absolute value (their squares overflow float64: rescale), NaN/inf
            estimates (non-finite nuisance predictions), or ``sample_weight`` of the wrong
            shape, with negative or non-finite values, or all zero; with
            ``outcome_model="gp"``, ``sample_weight`` that are not whole numbers.
        TypeError
            If ``sample_weight`` is given and a nuisance model does not accept it in ``fit``.
        """
        X, y, Y, W, unknown = self._check_inputs(X, y, treatment)
        sw = check_sample_weight(sample_weight, X)
        n, T = Y.shape
        n_eff = n if sw is None else float(sw.sum())
        clusters, n_groups = (None, None) if groups is None else _encode_groups(groups, n)
        self.n_groups_ = n_groups
        self.sample_weight_, self.group_codes_ = sw, clusters
        k = self.n_time_varying
        block = k + 1
        self.n_periods_ = T
        self.n_baseline_ = X.shape[1] - k * T
        self.single_arm_ = W is None
        self.y_ndim_ = y.ndim
        entropy = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        if self.single_arm_:
            regimes, known = None, None
            R = 1
        else:
            regimes = self._check_regimes(W, T, unknown)
            known = self._check_propensity(regimes, T)
            R = 2
        self.regimes_ = regimes

        C = ~np.isnan(Y)
        Y0 = np.where(C, Y, 0.0)
        has_nan = not C.all()
        base_dim = self.n_baseline_ + k
        # full history [B, X_0, (X_1, Y_0), ..., (X_{T-1}, Y_{T-2})]
        Xt = X[:, self.n_baseline_:].reshape(n, T, k)
        parts = [X[:, :self.n_baseline_], Xt[:, 0, :]]
        for t in range(1, T):
            parts += [Xt[:, t, :], Y0[:, t - 1:t]]
        Hfull = np.ascontiguousarray(np.hstack(parts))

        seeds = np.random.SeedSequence(entropy).spawn(5)  # the 5th seeds a named learner
        fold_seed = int(seeds[0].generate_state(1)[0] % np.iinfo(np.int32).max)
        folds, K = self._folds(X, fold_seed, clusters, n_groups)
        unit_w = np.ones(n) if sw is None else sw
        self.folds_ = folds

        # path indicators and treatment-path probabilities
        I_list, risk_list, piW = [], [], np.ones((R, T))
        for r in range(R):
            if W is None:
                follows, known_w = np.ones((n, T), dtype=bool), np.ones((n, T), dtype=bool)
            else:  # unknown treatment after dropout: in the risk set, not in the frequencies
                known_w = ~unknown
                follows = (W == regimes[r][None, :]) | ~known_w
            onW = np.cumprod(follows, axis=1).astype(bool)
            I = onW & C
            prev_C = np.column_stack([np.ones(n, dtype=bool), C[:, :-1]])
            I_list.append(I)
            risk_list.append(onW & prev_C)
            if W is not None:
                if known is not None:
                    piW[r] = known[r]
                else:
                    prev, prob = np.ones(n, dtype=bool), 1.0
                    for j in range(T):  # (weighted) sequential frequencies
                        den = unit_w @ (prev & known_w[:, j])
                        prob *= (unit_w @ (prev & follows[:, j] & known_w[:, j])) / den \
                            if den else 0.0
                        piW[r, j] = prob
                        prev = I[:, j]
        self.path_probabilities_ = piW
        self.n_on_path_ = np.array([I.sum(axis=0) for I in I_list])
        for r in range(R):
            for fold in range(K):
                train = folds != fold
                counts = (I_list[r] & (train & (unit_w > 0))[:, None]).sum(axis=0)
                low = np.flatnonzero(counts < 2)
                if low.size:
                    t = int(low[0])
                    raise ValueError(
                        f"regime {r} has {int(counts[t])} units on its path at period {t} in a "
                        "training fold; need at least 2"
                    )
            if not self.single_arm_:
                small = np.flatnonzero(n_eff * piW[r] < 20)
                if small.size:
                    warnings.warn(
                        f"regime {r} has n * path probability < 20 at periods "
                        f"{small.tolist()} (n={n_eff:g}, probabilities "
                        f"{np.round(piW[r, small], 4).tolist()}): weights are large and the "
                        "estimates unstable",
                        UserWarning,
                        stacklevel=2,
                    )

        outcome_model = self.outcome_model
        if outcome_model is None:
            outcome_model = LinearRegression()
        elif isinstance(outcome_model, str):  # "gp"
            outcome_model = _SubsampledARDGaussianProcess(
                _GP_N_HYPER, random_state=int(seeds[4].generate_state(1)[0]))
        transition = self.transition_model
        if transition is None:
            transition = LinearGaussianTransition()
        elif not hasattr(transition, "sample"):
            transition = LinearGaussianTransition(mean_model=transition)
        censoring = self.censoring_model
        if censoring is None:
            censoring = make_pipeline(StandardScaler(), LogisticRegression())
        ctx = {"Hfull": Hfull, "Y0": Y0, "C": C, "I": I_list, "risk": risk_list, "T": T,
               "base_dim": base_dim, "block": block, "window": self.history_window,
               "n_mc": self.n_mc, "has_nan": has_nan, "q_method": self.q_method,
               "outcome_model": outcome_model, "transition_model": transition,
               "censoring_model": censoring, "sample_weight": sw}
        job_seeds = seeds[1].spawn(R * K)
        tests = [np.flatnonzero(folds == fold) for fold in range(K)]
        jobs = [(r, fold) for r in range(R) for fold in range(K)]
        parallel = Parallel(n_jobs=self.n_jobs, return_as="generator")
        results = list(progress_bar(
            parallel(delayed(_fit_regime_fold)(ctx, r, np.flatnonzero(folds != fold),
                                               tests[fold], job_seeds[r * K + fold])
                     for r, fold in jobs),
            verbose=self.verbose, total=len(jobs), desc="regime x fold", mininterval=0,
            miniters=1,
        ))

        G = np.zeros((n, R, T + 1, T))
        g = np.ones((n, R, T))
        self.outcome_models_ = [[[None] * K for _ in range(T)] for _ in range(R)]
        self.transition_models_ = (None if self.q_method == "regress"
                                   else [[[None] * K for _ in range(T - 1)] for _ in range(R)])
        self.censoring_models_ = (None if not has_nan
                                  else [[[None] * K for _ in range(T)] for _ in range(R)])
        self.q_models_ = [[None] * K for _ in range(R)]
        for (r, fold), res in zip(jobs, results, strict=True):
            test = tests[fold]
            G[test, r] = res["G"]
            g[test, r] = res["g"]
            for t in range(T):
                self.outcome_models_[r][t][fold] = res["outcome"][t]
                if has_nan:
                    self.censoring_models_[r][t][fold] = res["censoring"][t]
                if res["transitions"] is not None and t < T - 1:
                    self.transition_models_[r][t][fold] = res["transitions"][t]
            self.q_models_[r][fold] = res["q_models"]

        if has_nan:
            clipped = g < _CENSORING_FLOOR
            if clipped.any():
                warnings.warn(
                    f"{int(clipped.sum())} estimated probabilities of staying in the study were "
                    f"below {_CENSORING_FLOOR} and were clipped to it",
                    UserWarning,
                    stacklevel=2,
                )
                g = np.maximum(g, _CENSORING_FLOOR)

        tri = np.triu(np.ones((T, T), dtype=bool))  # [s, t]: s <= t
        phi = np.empty((n, R, T))
        for r in range(R):
            Gr = G[:, r]
            for t in range(T):
                Gr[:, t + 1, t] = Y0[:, t]
            pi = piW[r][None, :] * np.cumprod(g[:, r], axis=1)
            weight = np.where(I_list[r], 1.0 / pi, 0.0)
            diff = (Gr[:, 1:, :] - Gr[:, :-1, :]) * tri[None]
            phi[:, r] = Gr[:, 0, :] + np.einsum("ns,nst->nt", weight, diff)
        self.q0_ = G[:, :, 0, :].copy()
        self.means_ = np.average(phi, axis=0, weights=sw)
        self.influence_ = phi - self.means_[None]
        self.means_se_ = _mean_std_err(self.influence_, clusters, n_groups, sw)
        self.gformula_means_ = np.average(self.q0_, axis=0, weights=sw)
        if self.single_arm_:
            self.effect_, self.effect_se_ = None, None
        else:
            self.effect_ = self.means_[0] - self.means_[1]
            psi = self.influence_[:, 0] - self.influence_[:, 1]
            self.effect_se_ = _mean_std_err(psi, clusters, n_groups, sw)
        for name in ("means_", "means_se_", "effect_", "effect_se_"):
            value = getattr(self, name)
            if value is not None and not np.all(np.isfinite(value)):
                raise ValueError(
                    f"the fit gave NaN or infinite {name} {np.round(value, 4).tolist()} "
                    f"(largest |y| = {np.nanmax(np.abs(Y)):.3g}, largest |X| = "
                    f"{np.max(np.abs(X)):.3g}): the nuisance models returned non-finite values "
                    "or the data overflow float64; rescale X and y or check outcome_model / "
                    "transition_model"
                )

        H0 = Hfull[:, :base_dim]
        if self.single_arm_ and sw is None:
            self.baselines_ = pd.DataFrame({
                "period": np.arange(T),
                "n_observed": C.sum(axis=0),
                "mean": np.nanmean(Y, axis=0),
                "mean_se": np.nanstd(Y, axis=0, ddof=1) / np.sqrt(np.maximum(C.sum(axis=0), 1)),
            })
        elif self.single_arm_:  # weighted mean of the observed units, frequency-weight SE
            wc = sw[:, None] * C
            total = wc.sum(axis=0)
            mean = (wc * Y0).sum(axis=0) / np.where(total > 0, total, 1.0)
            var = (wc * (Y0 - mean) ** 2).sum(axis=0) / np.maximum(total - 1, 1e-300)
            self.baselines_ = pd.DataFrame({
                "period": np.arange(T), "n_observed": C.sum(axis=0), "mean": mean,
                "mean_se": np.sqrt(var / np.maximum(total, 1.0)),
            })
        else:
            self.baselines_ = _baselines(H0, Y0, I_list[0], I_list[1], clusters, sw)
            # best linear projection of the conditional effect on H_0: OLS of the doubly
            # robust effect scores phi^1 - phi^0 on [1, H_0], sandwich covariance
            self.effect_projection_coef_, self.effect_projection_cov_ = _effect_projection(
                H0, phi[:, 0] - phi[:, 1], clusters, n_groups, sw)

        self.mc_noise_ = np.random.default_rng(seeds[2]).standard_normal((self.n_mc, T - 1, block))
        self.bootstrap_seed_ = int(seeds[3].generate_state(1)[0])
        return self

    # ---------------------------------------------------------------- prediction

    def _predict_regime(self, X, r):
        """Plug-in ``Q_0^(t)(H_0)`` of regime ``r`` for rows of validated ``X`` (n, T)."""
        T, k = self.n_periods_, self.n_time_varying
        block, base_dim = k + 1, self.n_baseline_ + k
        window = self.history_window
        n = X.shape[0]
        H0 = np.hstack([X[:, :self.n_baseline_], X[:, self.n_baseline_:self.n_baseline_ + k]])
        d_full = base_dim + (T - 1) * block
        out = np.zeros((n, T))
        K = len(self.outcome_models_[r][0])  # cross-fitting folds

        def cols(t):
            return _history_index(t, base_dim, block, window)

        with threadpool_limits(1), config_context(assume_finite=True):
            for fold in range(K):
                models = [self.outcome_models_[r][t][fold] for t in range(T)]
                out[:, 0] += models[0].predict(H0[:, cols(0)])
                if T == 1:
                    continue
                if window == 0 and self.q_method != "regress":
                    # outcome models of H_0 only: the particle mean is m_t(H_0) exactly
                    for t in range(1, T):
                        out[:, t] += models[t].predict(H0[:, cols(t)])
                    continue
                if self.q_method == "regress":
                    q_models = self.q_models_[r][fold]
                    for t in range(1, T):
                        out[:, t] += q_models[(0, t)].predict(H0)
                    continue
                kernels = [self.transition_models_[r][t][fold] for t in range(T - 1)]
                noise = self.mc_noise_
                if all(_is_affine(m) for m in models) and all(map(_is_affine_kernel, kernels)):
                    # affine chain: the particle mean is the chain driven by the mean noise
                    noise = noise.mean(axis=0, keepdims=True)
                n_mc = noise.shape[0]
                step = max(1, _CHUNK_ROWS // n_mc)
                for start in range(0, n, step):
                    rows = slice(start, min(n, start + step))
                    m = rows.stop - rows.start
                    P = np.zeros((m * n_mc, d_full))
                    P[:, :base_dim] = np.repeat(H0[rows], n_mc, axis=0)
                    for tau in range(T - 1):
                        z = np.tile(noise[:, tau, :], (m, 1))
                        draw = kernels[tau].sample(P[:, cols(tau)], z)
                        P[:, _step_slice(tau, base_dim, block)] = np.reshape(draw, (m * n_mc, -1))
                        pred = models[tau + 1].predict(P[:, cols(tau + 1)])
                        out[rows, tau + 1] += np.reshape(pred, (m, n_mc)).mean(axis=1)
        return out / K

    def predict_regimes(self, X):
        """Plug-in mean outcome of every unit under each regime, per period.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Covariates in the layout of :meth:`fit`; only ``B`` and ``X_0`` are used.

        Returns
        -------
        predictions : ndarray of shape (n_samples, n_regimes, n_periods)
            ``E[Y_t(a) | H_0]`` for each regime (2 regimes, or 1 single-arm), averaged over the
            fold models, with the shared noise ``mc_noise_``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        _check_magnitude(X, "X")
        R = 1 if self.single_arm_ else 2
        return np.stack([self._predict_regime(X, r) for r in range(R)], axis=1)

    def predict(self, X):
        """Plug-in mean outcome per period under the reference regime.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Covariates in the layout of :meth:`fit`; only ``B`` and ``X_0`` are used.

        Returns
        -------
        y_pred : ndarray of shape (n_samples, n_periods) or (n_samples,)
            ``E[Y_t(a^0) | H_0]`` for the reference regime (row 1 of ``regimes_``; the observed
            arm in single-arm mode), float64; 1-D when ``y`` was 1-D in :meth:`fit`.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        _check_magnitude(X, "X")
        pred = self._predict_regime(X, 0 if self.single_arm_ else 1)
        return pred[:, 0] if self.y_ndim_ == 1 else pred

    def predict_effect(self, X, *, method="plugin", return_std=False):
        """Conditional effect ``E[Y_t(a^1) - Y_t(a^0) | H_0]`` per period, with inference.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Covariates in the layout of :meth:`fit`; only ``B`` and ``X_0`` are used.
        method : {"plugin", "projection"}, default="plugin"
            ``"plugin"``: the difference of the fitted outcome chains of both regimes
            (averaged over the fold models), the nuisance models' own conditional effect,
            which has no valid standard error (flexible learners converge slower than
            ``1/sqrt(n)``). ``"projection"``: the best linear approximation of the
            conditional effect in ``(B, X_0)``, ``[1, B, X_0] @ effect_projection_coef_[t]``,
            estimated at fit by regressing the doubly robust effect scores on ``[1, B,
            X_0]``; its sandwich standard errors are valid under the design's
            randomisation whatever the nuisance models, and its average over the fitted
            units is ``effect_``.
        return_std : bool, default=False
            Also return the standard error of each prediction (``method="projection"``
            only): ``sqrt(z' V_t z)`` with ``z = [1, B, X_0]`` and ``V_t`` the HC0 (or, with
            ``groups`` at fit, CR1 cluster-robust) covariance ``effect_projection_cov_[t]``.
            ``prediction ± 1.96 * std`` is a pointwise 95% interval for the projection.

        Returns
        -------
        effect : ndarray of shape (n_samples, n_periods)
            Conditional effects of the regime of interest against the reference.
        std : ndarray of shape (n_samples, n_periods)
            Standard errors of ``effect``; only with ``return_std=True``.

        Raises
        ------
        ValueError
            In single-arm mode (no effect is defined), for an unknown ``method``, or for
            ``return_std=True`` with ``method="plugin"``.
        """
        check_is_fitted(self)
        if self.single_arm_:
            raise ValueError("predict_effect needs a fit with treatment; this fit was single-arm")
        if method not in ("plugin", "projection"):
            raise ValueError(f"method must be 'plugin' or 'projection'; got {method!r}")
        if method == "plugin":
            if return_std:
                raise ValueError(
                    "return_std=True needs method='projection': the plug-in conditional "
                    "effect of flexible nuisance models has no valid standard error; the "
                    "projection's sandwich standard errors are valid under randomisation"
                )
            both = self.predict_regimes(X)
            return both[:, 0] - both[:, 1]
        Xv = validate_data(self, X, reset=False, dtype=np.float64)
        _check_magnitude(Xv, "X")
        Z = np.column_stack([np.ones(len(Xv)),
                             Xv[:, :self.n_baseline_ + self.n_time_varying]])
        effect = Z @ self.effect_projection_coef_.T
        if not return_std:
            return effect
        var = np.einsum("ni,tij,nj->nt", Z, self.effect_projection_cov_, Z)
        return effect, np.sqrt(np.maximum(var, 0.0))

    def score(self, X, y, treatment=None, sample_weight=None):
        """R² of the plug-in predictions, averaged over periods (NaN outcomes skipped).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Covariates in the layout of :meth:`fit`.
        y : array-like of shape (n_samples,) or (n_samples, n_periods)
            Observed outcomes (float); NaN cells are skipped.
        treatment : array-like of shape (n_samples,) or (n_samples, n_periods), default=None
            Integer treatment codes: each unit is scored against the regime whose first code
            matches its first treatment (the first regime when both start alike); a first
            code that is no regime's first code is an error. Required after a fit with
            treatment; ignored after a single-arm fit. Requested by default as metadata, so
            that :class:`~sklearn.model_selection.GridSearchCV` and
            :func:`~sklearn.model_selection.cross_validate` pass it when metadata routing is
            enabled (``sklearn.set_config(enable_metadata_routing=True)``).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the units.

        Returns
        -------
        score : float
            Mean over periods of the R² of the observed outcomes.

        Raises
        ------
        ValueError
            If ``treatment`` is None after a fit with treatment (without metadata routing,
            scikit-learn's searches call ``score(X, y)`` and cannot pass it), or ``y``,
            ``treatment`` or ``sample_weight`` do not have one row per row of ``X``, ``y``
            does not have ``n_periods_`` columns, or ``treatment`` holds a first code (or a
            NaN, or a non-numeric value) that no fitted regime starts with.
        """
        check_is_fitted(self)
        if treatment is None and not self.single_arm_:
            raise ValueError(
                "score needs treatment after a fit with treatment: each unit is scored against "
                "the regime it follows; call score(X, y, treatment=...). In GridSearchCV or "
                "cross_validate, enable metadata routing with "
                "sklearn.set_config(enable_metadata_routing=True) (treatment is requested for "
                "fit and score by default); without it scikit-learn calls score(X, y)"
            )
        Xv = validate_data(self, X, reset=False, dtype=np.float64)
        _check_magnitude(Xv, "X")
        n = Xv.shape[0]
        Y = check_array(y, ensure_2d=False, ensure_all_finite="allow-nan", dtype=np.float64,
                        input_name="y")
        if Y.shape[0] != n:
            raise ValueError(f"y has {Y.shape[0]} rows but X has {n}: one row per unit")
        Y = Y.reshape(n, -1)
        if Y.shape[1] != self.n_periods_:
            raise ValueError(
                f"y must have n_periods_={self.n_periods_} columns; got {Y.shape[1]}"
            )
        if self.single_arm_:
            pred = self._predict_regime(Xv, 0)
        else:
            W = np.asarray(treatment)
            if W.ndim == 0 or W.shape[0] != n:
                raise ValueError(
                    f"treatment has {1 if W.ndim == 0 else W.shape[0]} rows but X has {n}: one "
                    "row per unit"
                )
            if W.ndim > 2 or (W.ndim == 2 and W.shape[1] not in (1, self.n_periods_)):
                raise ValueError(
                    f"treatment must have shape (n_samples,)=({n},) or (n_samples, n_periods)="
                    f"({n}, {self.n_periods_}); got {W.shape}"
                )
            first = W if W.ndim == 1 else W[:, 0]
            known = np.unique(self.regimes_[:, 0])
            if first.dtype.kind not in "biuf" or not np.all(np.isin(first, known)):
                bad = (np.unique(first.astype(str)).tolist() if first.dtype.kind not in "biuf"
                       else np.unique(first[~np.isin(first, known)]).tolist())
                raise ValueError(
                    f"treatment must hold the integer codes of the fitted regimes (first codes "
                    f"{known.tolist()}); got {bad[:5]}"
                )
            chosen = np.where(first == self.regimes_[0, 0], 0, 1)
            both = np.stack([self._predict_regime(Xv, r) for r in range(2)], axis=1)
            pred = both[np.arange(n), chosen]
        sw = None
        if sample_weight is not None:
            sw = np.asarray(sample_weight, dtype=np.float64)
            if sw.shape != (n,):
                raise ValueError(
                    f"sample_weight must have shape ({n},) (one weight per row of X); got "
                    f"{sw.shape}"
                )
        scores = []
        for t in range(Y.shape[1]):
            m = ~np.isnan(Y[:, t])
            if m.sum() >= 2:
                scores.append(r2_score(Y[m, t], pred[m, t],
                                       sample_weight=None if sw is None else sw[m]))
        return float(np.mean(scores)) if scores else float("nan")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        tags.target_tags.required = True
        tags.input_tags.allow_nan = False
        return tags
