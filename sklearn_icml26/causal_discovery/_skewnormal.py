"""Skew-normal location-scale noise regression (the model inside SkewD).

``y = f(x) + g(x)·ε`` with ``ε ~ SN(0, 1, λ)`` (density ``2φ(u)Φ(λu)``), ``f`` an additive
penalised B-spline location, ``log g²`` an additive penalised B-spline, fitted by an ECM(E)
algorithm with closed-form location and shape steps and a Newton scale step, then polished by
L-BFGS-B. Smoothing penalties are chosen by an approximate leave-one-out criterion (TIC), by
cross-validation or by Bayesian optimisation (the authors' procedure).

All formulas follow SkewD (Klippert & Marx, "Skewness-Robust Causal Discovery in Location-Scale
Noise Models", arXiv:2511.14441) and its authors' code (causality-lab/skewd@03f920c); no code
was copied.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from scipy.linalg import block_diag
from scipy.special import log_ndtr
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold
from sklearn.preprocessing import SplineTransformer
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from .._compat import Interval, StrOptions, _fit_context
from ..utils._parallel import Parallel, delayed
from ..utils._progress import progress_bar
from ..utils._scaling import _robust_mean_std, _standardize
from ..utils._stacklevel import _external_stacklevel
from ._sn_likelihood import (
    _HALF_LOG_2PI,
    _LAMBDA_BOUND,
    _LOG2,
    _cmaes_start,
    _optimise,
    _second_difference_penalty,
    _SNProblem,
    _tic,
    skewnormal_skewness,
)

__all__ = ["SkewNormalLSNMRegressor"]

_SEARCH_MIN_SAMPLES = 50
_MAX_UNSTANDARDIZED = 1e100  # |values| above this overflow the squared residuals


def _check_numeric(X, name):
    """Raise a clear ValueError when ``X`` (array or DataFrame) holds non-numeric values."""
    if X is None:
        return
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and hasattr(dtypes, "items"):  # DataFrame: name the columns
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        bad = [(col, str(dt)) for col, dt in dtypes.items()
               if not (is_numeric_dtype(dt) or is_bool_dtype(dt))]
        bad = [(col, dt) for col, dt in bad if not _converts(X[col])]
        if bad:
            cols = ", ".join(f"{col!r} (dtype {dt})" for col, dt in bad)
            raise ValueError(
                f"{name} must be numeric; column(s) {cols} hold non-numeric values. Encode "
                f"or drop them (e.g. with a OneHotEncoder / OrdinalEncoder) first.")
        return
    if isinstance(X, str):
        raise ValueError(f"{name} must be a numeric array-like; got the string {X!r}.")
    dtype = getattr(X, "dtype", None)
    if dtype is None:
        try:
            dtype = np.asarray(X).dtype
        except Exception:  # ragged input: leave the message to validate_data
            return
    if dtype.kind in "USVMm" or (dtype.kind == "O" and not _converts(X)):
        raise ValueError(
            f"{name} must be numeric (convertible to float64); got dtype {dtype}. Encode "
            "strings/categories as numbers first.")


def _converts(values):
    """False only for values that fail float conversion with a ValueError (strings).

    Other failures (a TypeError for e.g. dicts) are left to ``validate_data``.
    """
    try:
        np.asarray(values, dtype=np.float64)
    except ValueError:
        return False
    except TypeError:
        return True
    return True


def _knot_positions(x, n_knots, knots):
    """``n_knots`` knot positions over the range of ``x``, shape (n_knots, 1).

    ``"uniform"``: equally spaced from min to max (scikit-learn's ``SplineTransformer``
    default). ``"quantile"``: at the ``0, 1/(n_knots-1), ..., 1`` quantiles of ``x``, so every
    interval holds about the same number of samples; where ties make quantiles coincide the
    coinciding knots are spread uniformly between their distinct neighbours (knots must be
    strictly increasing).
    """
    lo, hi = float(np.min(x)), float(np.max(x))
    if knots == "uniform" or hi <= lo:
        return np.linspace(lo, hi if hi > lo else lo + 1.0, n_knots)[:, None]
    q = np.quantile(x, np.linspace(0.0, 1.0, n_knots))
    q[0], q[-1] = lo, hi
    if np.all(np.diff(q) > 1e-12 * (hi - lo)):
        return q[:, None]
    # runs of equal quantiles (ties): keep the first knot of each distinct value and
    # interpolate the knot index linearly between the distinct ones
    idx = np.arange(n_knots, dtype=float)
    _, first = np.unique(q, return_index=True)  # the last distinct value is max(x)
    keep = np.append(first[:-1], n_knots - 1)
    return np.interp(idx, keep, q[keep])[:, None]


class SkewNormalLSNMRegressor(RegressorMixin, BaseEstimator):
    """Location-scale noise regression with skew-normal noise (the model inside SkewD).

    Fits ``y = f(x) + g(x)·ε`` with ``ε ~ SN(0, 1, λ)`` (density ``2φ(u)Φ(λu)``, one global
    shape ``λ``), where ``f`` (the *location*) is an additive cubic B-spline with a
    second-difference penalty and ``log g²`` an additive B-spline with its own penalty. The
    parameters are found by an ECM algorithm (closed-form location step, Newton step for the
    log-scale, exact 1-D Newton for the shape, i.e. ECME) followed by a projected Newton polish
    with the analytic Hessian, from several starting shapes. The penalties are chosen by the
    Takeuchi information criterion (an approximate leave-one-out likelihood, default), by
    cross-validation, or by the authors' Bayesian optimisation.

    Parameters
    ----------
    n_knots_loc : int, default=12
        Number of knots of the location spline of each feature (``n_knots_loc + degree - 1``
        coefficients per feature).  A discrete feature (ties, and fewer distinct values than
        coefficients) gets a piecewise-linear spline with a knot at every distinct value
        instead, with a warning (see Notes).
    n_knots_scale : int, default=5
        Number of knots of the log-scale spline of each feature.
    degree : int, default=3
        Degree of both splines.
    knots : {"uniform", "quantile"}, default="uniform"
        Knot placement of both splines (standardised feature scale): equally spaced over the
        training range (the authors' choice), or at equally spaced quantiles of the training
        feature, so that every interval holds about the same number of samples (ties are
        spread between their distinct neighbours). Quantile knots resolve the location where
        the data are dense, for instance a log-normal cause whose mass sits in the first few
        uniform intervals.
    alpha : float, default=1.0
        Location smoothing penalty; used only with ``penalty_search="none"`` (and for fewer
        than 50 samples, where no search runs).
    kappa : float, default=1.0
        Log-scale smoothing penalty; used like ``alpha``.
    penalty_search : {"tic", "cv", "bayes", "none"}, default="tic"
        How ``(alpha, kappa)`` are chosen: ``"tic"`` maximises the Takeuchi information
        criterion over ``penalty_grid`` (log alpha first, then log kappa); ``"cv"`` maximises
        the held-out log-likelihood of ``cv`` folds over the same grid; ``"bayes"`` is the
        authors' Gaussian-process Bayesian optimisation of the mean fold negative
        log-likelihood over ``[-4, 4]²`` (needs ``scikit-optimize``; slow); ``"none"`` uses
        ``alpha`` and ``kappa``.
    penalty_grid : tuple of float, default=(-4, -2, 0, 2, 4)
        Natural logarithms of the penalties tried by ``"tic"`` and ``"cv"``.
    cv : int, default=5
        Number of folds of ``"cv"`` and ``"bayes"``.
    n_calls : int, default=60
        Objective evaluations of ``"bayes"``.
    n_initial_points : int, default=40
        Latin-hypercube initial points of ``"bayes"``.
    noise : {"skew-normal", "gaussian"}, default="skew-normal"
        Noise family; ``"gaussian"`` fixes ``λ = 0`` (a LOCI-like ablation).
    solver : {"ecm+newton", "ecm+lbfgs", "ecm", "lbfgs", "cmaes"}, default="ecm+newton"
        ``"ecm+newton"``: ``max_iter`` ECM steps, then a projected damped Newton polish with the
        analytic Hessian (L-BFGS-B if Newton stalls); ``"ecm+lbfgs"``: ECM then L-BFGS-B
        (slow when the shape is large); ``"ecm"``: pure ECM (give ``max_iter`` of a few
        thousand, as the authors); ``"lbfgs"``: L-BFGS-B only; ``"cmaes"``: the authors'
        CMA-ES from each start, then ECM and the Newton polish (needs ``cmaes``).
    max_iter : int, default=25
        Maximum number of ECM iterations per start.
    tol : float, default=1e-8
        ECM stops when ``|P_t - P_{t-1}| <= tol * (1 + |P_t|)``.
    n_restarts : int, default=2
        Extra starts with shape ``+2`` and ``-2`` (at most 2) besides the moment start; the
        solution with the smallest penalised objective is kept.
    standardize : bool, default=True
        Standardise each feature and the target (mean 0, standard deviation 1) before fitting;
        predictions and densities are returned on the original scale.
    random_state : int, RandomState instance or None, default=None
        Seeds the cross-validation folds, the Bayesian optimisation and CMA-ES.
    n_jobs : int or None, default=None
        Jobs for the restarts and the folds (joblib); the workers' warnings are issued
        again in the caller, so any ``n_jobs`` shows the same warnings.
    verbose : int, default=0
        When positive, show the penalty search: a progress bar in a terminal, one plain line
        per evaluated penalty pair (its log penalties and score) in a log.

    Attributes
    ----------
    coef_loc_ : ndarray of shape (n_coef_loc,)
        Location spline coefficients (standardised scale), one block per feature:
        ``n_knots_loc + degree - 1`` coefficients, or one per distinct value for a discrete
        feature (``splines_loc_[j].n_features_out_`` in general).
    coef_scale_ : ndarray of shape (n_coef_scale,)
        Coefficients of ``log g²`` (standardised scale), one block per feature
        (``splines_scale_[j].n_features_out_`` each).
    shape_ : float
        Fitted skew-normal shape ``λ`` (0 with ``noise="gaussian"``).
    noise_skewness_ : float
        Skewness ``γ(λ)`` of the fitted noise, in ``(-0.9953, 0.9953)``.
    alpha_ : float
        Location penalty used in the final fit.
    kappa_ : float
        Log-scale penalty used in the final fit.
    search_results_ : dict
        ``{"log_alpha", "log_kappa", "score"}`` arrays of the penalty search (empty arrays when
        no search ran); the score is maximised.
    penalized_nll_ : float
        Final penalised negative log-likelihood ``P`` (standardised scale).
    n_iter_ : int
        ECM plus L-BFGS-B iterations of the kept start.
    converged_ : bool
        Whether the kept start converged (ECM tolerance or L-BFGS-B success).
    splines_loc_ : list of SplineTransformer
        Fitted location bases, one per feature.
    splines_scale_ : list of SplineTransformer
        Fitted log-scale bases, one per feature.
    constant_features_ : ndarray of shape (n_features,), dtype=bool
        Features that were constant in training (their block is a constant).
    mean_ : ndarray of shape (n_features,)
        Feature means removed before fitting (zeros without standardisation).
    scale_ : ndarray of shape (n_features,)
        Feature standard deviations (ones without standardisation or for constant features).
    y_mean_ : float
        Target mean removed before fitting.
    y_scale_ : float
        Target standard deviation (1 for a constant target).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    SkewDCausalDiscoverer : Cause-effect discovery with this regressor.

    Notes
    -----
    ``predict`` returns the conditional mean ``f(x) + g(x)·δ·sqrt(2/π)`` with
    ``δ = λ/sqrt(1+λ²)``; the location ``f`` is :meth:`predict_location`.
    :meth:`log_likelihood_samples` gives ``log p(y | x)`` per sample (the conditional
    density needs ``y``, so it is not named ``score_samples``, which scikit-learn reserves for
    densities of ``X`` alone). ``score`` is the R² of ``predict``.

    A feature with ties and fewer distinct values than its location spline has coefficients
    (``n_knots_loc + degree - 1``, 14 by default) is treated as discrete, with a
    ``UserWarning`` naming the column: its location spline (and its log-scale spline, when the
    values are also fewer than ``n_knots_scale + degree - 1``) becomes a degree-1 spline with a
    knot at every distinct value. This deviates from the cubic spline of the paper: with a
    cubic basis the fit between the values is not identified by the data and, with a small
    penalty, swings far beyond the fits at the neighbouring values; piecewise linear, the
    location between two values lies between the locations fitted at them.

    References
    ----------
    .. [1] Klippert, D. and Marx, A. "Skewness-Robust Causal Discovery in Location-Scale Noise
       Models", ICML 2026, arXiv:2511.14441.
    .. [2] Immer, A. et al. "On the Identifiability and Estimation of Causal Location-Scale
       Noise Models", ICML 2023, arXiv:2210.09054.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.causal_discovery import SkewNormalLSNMRegressor
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-2, 2, size=(500, 1))
    >>> from scipy.stats import skewnorm
    >>> eps = skewnorm.rvs(4, size=500, random_state=1)
    >>> y = np.sin(2 * x[:, 0]) + 0.3 * eps
    >>> reg = SkewNormalLSNMRegressor(penalty_search="none").fit(x, y)
    >>> bool(reg.shape_ > 1)
    True
    >>> reg.predict_scale(x[:3]).shape
    (3,)
    """

    _parameter_constraints = {
        "n_knots_loc": [Interval(Integral, 2, None, closed="left")],
        "n_knots_scale": [Interval(Integral, 2, None, closed="left")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "knots": [StrOptions({"uniform", "quantile"})],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "kappa": [Interval(Real, 0, None, closed="left")],
        "penalty_search": [StrOptions({"tic", "cv", "bayes", "none"})],
        "penalty_grid": ["array-like"],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "n_calls": [Interval(Integral, 1, None, closed="left")],
        "n_initial_points": [Interval(Integral, 1, None, closed="left")],
        "noise": [StrOptions({"skew-normal", "gaussian"})],
        "solver": [StrOptions({"ecm+newton", "ecm+lbfgs", "ecm", "lbfgs", "cmaes"})],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_restarts": [Interval(Integral, 0, 2, closed="both")],
        "standardize": ["boolean"],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(self, n_knots_loc=12, n_knots_scale=5, degree=3, *, knots="uniform",
                 alpha=1.0, kappa=1.0,
                 penalty_search="tic", penalty_grid=(-4, -2, 0, 2, 4), cv=5, n_calls=60,
                 n_initial_points=40, noise="skew-normal", solver="ecm+newton", max_iter=25,
                 tol=1e-8, n_restarts=2, standardize=True, random_state=None, n_jobs=None,
                 verbose=0):
        self.n_knots_loc = n_knots_loc
        self.n_knots_scale = n_knots_scale
        self.degree = degree
        self.knots = knots
        self.alpha = alpha
        self.kappa = kappa
        self.penalty_search = penalty_search
        self.penalty_grid = penalty_grid
        self.cv = cv
        self.n_calls = n_calls
        self.n_initial_points = n_initial_points
        self.noise = noise
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.n_restarts = n_restarts
        self.standardize = standardize
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    @classmethod
    def _get_test_params(cls):
        return [dict(penalty_search="none", n_knots_loc=5, n_knots_scale=4, n_restarts=0,
                     max_iter=10, solver="ecm", random_state=0)]

    # ------------------------------------------------------------------------------------
    def _design(self, X):
        """Location and log-scale design matrices of (raw) ``X``."""
        Xs = _standardize(X, self.mean_, self.scale_)
        if self.constant_features_.any():
            Xs = Xs.copy()
            Xs[:, self.constant_features_] = 0.0
        N = np.hstack([sp.transform(Xs[:, [j]]) for j, sp in enumerate(self.splines_loc_)])
        Z = np.hstack([sp.transform(Xs[:, [j]]) for j, sp in enumerate(self.splines_scale_)])
        return N, Z

    def _problem(self, N, Z, y, alpha, kappa):
        # one second-difference block per feature, of that feature's basis size (a discrete
        # feature has one coefficient per distinct value)
        K = block_diag(*[_second_difference_penalty(sp.n_features_out_)
                         for sp in self.splines_loc_])
        M = block_diag(*[_second_difference_penalty(sp.n_features_out_)
                         for sp in self.splines_scale_])
        return _SNProblem(N, Z, y, K, M, alpha, kappa, fit_shape=self.noise == "skew-normal")

    def _starts(self, problem):
        starts = [problem.start()]
        if problem.fit_shape:
            starts += [problem.start(lam0) for lam0 in (2.0, -2.0)[:self.n_restarts]]
        return starts

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the skew-normal location-scale model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs (causes), converted to float64; at least 3 samples.
        y : array-like of shape (n_samples,)
            Target (effect), converted to float64.

        Returns
        -------
        self : SkewNormalLSNMRegressor
            The fitted regressor.

        Raises
        ------
        ValueError
            If ``X`` or ``y`` hold NaN or inf or non-numeric values (strings, categories),
            ``X`` is not 2-D, fewer than 3 samples arrive, ``y`` is None, a parameter is
            invalid, or ``standardize=False`` meets values above 1e100 in absolute value
            (their squares overflow float64; with ``standardize=True`` any finite scale works).
        ImportError
            If ``penalty_search="bayes"`` without ``scikit-optimize`` or ``solver="cmaes"``
            without ``cmaes`` (both in ``pip install "sklearn_icml26[causal]"``).
        """
        _check_numeric(X, "X")
        _check_numeric(y, "y")
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True,
                             ensure_min_samples=3)
        if not self.standardize:
            for name, a in (("X", X), ("y", y)):
                big = float(np.max(np.abs(a)))
                if big > _MAX_UNSTANDARDIZED:
                    raise ValueError(
                        f"{name} has values up to {big:.3g} in absolute value: too large to fit "
                        f"with standardize=False (the squares overflow float64 arithmetic "
                        f"beyond about {_MAX_UNSTANDARDIZED:.0e}). Rescale {name} or use "
                        "standardize=True.")
        # small dense problems: multithreaded BLAS only adds overhead (100x on loaded CPUs)
        with threadpool_limits(limits=1, user_api="blas"):
            return self._fit(X, y)

    def _fit(self, X, y):
        grid = np.asarray(self.penalty_grid, dtype=float).ravel()
        if grid.size == 0 or not np.all(np.isfinite(grid)):
            raise ValueError(
                f"penalty_grid must be a non-empty sequence of finite log-penalties; "
                f"got {self.penalty_grid!r}."
            )
        rng = check_random_state(self.random_state)
        self._set_scaling(X, y)
        self._set_splines(X)
        N, Z = self._design(X)
        ys = _standardize(y, self.y_mean_, self.y_scale_)

        search = self.penalty_search if X.shape[0] >= _SEARCH_MIN_SAMPLES else "none"
        warm = None
        if search == "none":
            alpha, kappa = float(self.alpha), float(self.kappa)
            self.search_results_ = {"log_alpha": np.array([]), "log_kappa": np.array([]),
                                    "score": np.array([])}
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                if search == "bayes":
                    alpha, kappa, warm = self._search_bayes(N, Z, ys, rng)
                else:
                    alpha, kappa, warm = self._search_grid(N, Z, ys, grid, search, rng)
        self.alpha_, self.kappa_ = alpha, kappa

        problem = self._problem(N, Z, ys, alpha, kappa)
        starts = self._starts(problem) + (warm if warm is not None else [])
        if self.solver == "cmaes":
            starts = [_cmaes_start(problem, s, rng) for s in starts]
        solver = "ecm+newton" if self.solver == "cmaes" else self.solver
        results = Parallel(n_jobs=self.n_jobs)(
            delayed(_optimise)(problem, s, solver=solver, max_iter=self.max_iter, tol=self.tol,
                               ftol=1e-10, maxiter_lbfgs=2000)
            for s in starts
        )
        best = int(np.argmin([r[1] for r in results]))
        theta, P, n_iter, info = results[best]
        if not (np.isfinite(P) and np.all(np.isfinite(theta))):
            raise ValueError(
                "SkewNormalLSNMRegressor: the fit produced a non-finite penalised likelihood "
                f"({P}); the data are probably too badly scaled for float64 arithmetic. "
                "Rescale X and y (or use standardize=True).")
        beta, rho, lam = problem.unpack(theta)
        self.coef_loc_ = np.asarray(beta, dtype=float).copy()
        self.coef_scale_ = np.asarray(rho, dtype=float).copy()
        self.shape_ = float(lam)
        self.noise_skewness_ = float(skewnormal_skewness(self.shape_))
        self.penalized_nll_ = float(P)
        self.n_iter_ = int(n_iter)
        self.converged_ = bool(info["ecm_converged"] or info["lbfgs_status"] == 0
                               or info["newton_converged"])
        self._warn_convergence(info, solver)
        return self

    def _set_scaling(self, X, y):
        p = X.shape[1]
        self.constant_features_ = np.ptp(X, axis=0) == 0
        if self.standardize:
            # moments on power-of-two pre-scaled data: no overflow of the squares near 1e300
            self.mean_, scale, _ = _robust_mean_std(X, axis=0)
            self.scale_ = np.where(self.constant_features_ | (scale == 0), 1.0, scale)
            y_mean, y_sd, _ = _robust_mean_std(y, axis=0)
            self.y_mean_, y_sd = float(y_mean), float(y_sd)
            self.y_scale_ = y_sd if y_sd > 0 else 1.0
        else:
            self.mean_ = np.zeros(p)
            self.scale_ = np.ones(p)
            self.y_mean_, self.y_scale_ = 0.0, 1.0
        if self.constant_features_.any():
            warnings.warn(
                f"X has constant feature(s) {np.flatnonzero(self.constant_features_).tolist()}:"
                " they get no spline block (their contribution is a constant).",
                UserWarning, stacklevel=_external_stacklevel(),
            )

    def _set_splines(self, X):
        """One location and one log-scale basis per feature.

        A feature with ties and fewer distinct values than a basis has coefficients gets, for
        that basis, a degree-1 spline with a knot at every distinct value (one coefficient per
        value): the cubic spline would be unidentified between the values and, with a small
        penalty, free to swing far beyond the neighbouring values' fits.
        """
        n = X.shape[0]
        Xs = _standardize(X, self.mean_, self.scale_)
        Xs[:, self.constant_features_] = 0.0
        names = getattr(self, "feature_names_in_", None)
        self.splines_loc_, self.splines_scale_ = [], []
        n_loc = self.n_knots_loc + self.degree - 1
        n_scale = self.n_knots_scale + self.degree - 1
        for j in range(self.n_features_in_):
            col = Xs[:, [j]]
            if self.constant_features_[j]:
                col = np.array([[-1.0], [1.0]])
            values = np.unique(col)
            discrete = values.size < n and not self.constant_features_[j]
            bases = []
            for n_knots, n_coef in ((self.n_knots_loc, n_loc), (self.n_knots_scale, n_scale)):
                if discrete and values.size < n_coef:
                    sp = SplineTransformer(knots=values[:, None], degree=1,
                                           extrapolation="linear")
                else:
                    sp = SplineTransformer(knots=_knot_positions(col[:, 0], n_knots,
                                                                 self.knots),
                                           degree=self.degree, extrapolation="linear")
                bases.append(sp.fit(col))
            self.splines_loc_.append(bases[0])
            self.splines_scale_.append(bases[1])
            if discrete and values.size < n_loc:
                label = repr(str(names[j])) if names is not None else str(j)
                warnings.warn(
                    f"X column {label} has only {values.size} distinct values, fewer than the "
                    f"{n_loc} coefficients of its location spline (n_knots_loc="
                    f"{self.n_knots_loc}, degree={self.degree}): its location"
                    + (" and log-scale are" if values.size < n_scale else " is")
                    + " fitted piecewise linear with a knot at every distinct value (between "
                    "two values the fit stays between theirs).", UserWarning,
                    stacklevel=_external_stacklevel())

    def _warn_convergence(self, info, solver):
        """ConvergenceWarning on a real non-convergence or an unbounded likelihood.

        Log-scale coefficients on their box ``[-10, 5]`` are not warned about:
        the solvers handle the box (projected Newton, L-BFGS-B) and a converged fit with a
        coefficient there is the constrained optimum, mostly an edge basis with little data
        under it (it fired on about 4 of 5 fits of ordinary pairs).
        """
        problems = []
        if not self.converged_:
            if solver == "ecm":
                problems.append(f"ECM reached max_iter={self.max_iter} without meeting tol")
            elif info["lbfgs_status"] is not None and info["lbfgs_status"] != 0:
                problems.append("the Newton polish and L-BFGS-B stopped before convergence "
                                f"(L-BFGS-B status {info['lbfgs_status']})")
            else:
                problems.append("the solver stopped before convergence")
        if abs(self.shape_) >= _LAMBDA_BOUND - 1e-6:
            problems.append(f"the shape is on its bound ({self.shape_:+.0f}; the noise looks "
                            "half-normal, the likelihood increases without bound)")
        if problems:
            warnings.warn("SkewNormalLSNMRegressor: " + "; ".join(problems)
                          + ". The best iterate is kept.", ConvergenceWarning,
                          stacklevel=_external_stacklevel())

    # --- penalty search -------------------------------------------------------------------
    def _loose_fit(self, problem, theta, warm=False):
        # a warm start (the previous grid point's solution) needs few ECM steps
        max_iter = min(self.max_iter, 3) if warm else self.max_iter
        theta, P, _, _ = _optimise(problem, theta, solver=self._search_solver(),
                                   max_iter=max_iter, tol=self.tol, ftol=1e-7,
                                   maxiter_lbfgs=300)
        return theta, P

    def _search_solver(self):
        return "ecm+newton" if self.solver == "cmaes" else self.solver

    def _search_grid(self, N, Z, y, grid, kind, rng):
        n = y.shape[0]
        if kind == "cv":
            folds = list(KFold(self.cv, shuffle=True, random_state=rng.randint(2**31 - 1))
                         .split(np.arange(n)))
        cache = {}
        warm_state = {}
        # one line per evaluated penalty pair in a log (a bar in a terminal)
        bar = progress_bar(total=2 * len(set(grid)) - 1, verbose=self.verbose,
                           desc=f"penalty search ({kind})", unit="fit", mininterval=0,
                           miniters=1, ncols=0)

        def evaluate(la, lk):
            key = (float(la), float(lk))
            if key in cache:
                return cache[key][0]
            alpha, kappa = np.exp(la), np.exp(lk)
            if kind == "tic":
                problem = self._problem(N, Z, y, alpha, kappa)
                theta0 = warm_state.get("full", None)
                is_warm = theta0 is not None
                if theta0 is None:
                    theta0 = problem.start()
                theta, _ = self._loose_fit(problem, theta0, warm=is_warm)
                warm_state["full"] = theta
                score = _tic(problem, theta)
                cache[key] = (score, theta)
            else:
                thetas = warm_state.get("folds", [None] * len(folds))
                out = Parallel(n_jobs=self.n_jobs)(
                    delayed(_fold_fit)(self, N, Z, y, tr, te, alpha, kappa, th)
                    for (tr, te), th in zip(folds, thetas, strict=True)
                )
                warm_state["folds"] = [o[1] for o in out]
                score = float(np.sum([o[0] for o in out]))
                cache[key] = (score, None)
            bar.set_postfix_str(f"log alpha={la:+.2f} log kappa={lk:+.2f}: {score:.4f}",
                                refresh=False)
            bar.update()
            return score

        mid = 0.0 if 0.0 in grid else float(grid[len(grid) // 2])
        scores_a = [evaluate(la, mid) for la in grid]
        best_la = float(grid[int(np.argmax(scores_a))])
        if kind == "tic":  # the log-kappa scan starts from the best log-alpha fit
            warm_state["full"] = cache[(best_la, mid)][1]
        for lk in grid:
            if lk != mid:
                evaluate(best_la, lk)
        bar.close()
        keys = list(cache)
        scores = np.array([cache[k][0] for k in keys])
        scores = np.where(np.isfinite(scores), scores, -np.inf)
        la, lk = keys[int(np.argmax(scores))]
        self.search_results_ = {"log_alpha": np.array([k[0] for k in keys]),
                                "log_kappa": np.array([k[1] for k in keys]),
                                "score": scores}
        warm = [cache[(la, lk)][1]] if kind == "tic" else None
        return float(np.exp(la)), float(np.exp(lk)), warm

    def _search_bayes(self, N, Z, y, rng):
        try:
            from skopt import gp_minimize
        except ImportError as exc:
            raise ImportError(
                "penalty_search='bayes' needs scikit-optimize, which is not installed: pip "
                "install \"sklearn_icml26[causal]\" (or pip install scikit-optimize). Without "
                "it use penalty_search='tic' (the default) or 'cv'."
            ) from exc
        n = y.shape[0]
        folds = list(KFold(self.cv, shuffle=True, random_state=rng.randint(2**31 - 1))
                     .split(np.arange(n)))
        n_test = np.array([len(te) for _, te in folds])
        history = []
        bar = progress_bar(total=self.n_calls, verbose=self.verbose,
                           desc="penalty search (bayes)", unit="fit", mininterval=0,
                           miniters=1, ncols=0)

        def objective(params):
            alpha, kappa = np.exp(params[0]), np.exp(params[1])
            out = Parallel(n_jobs=self.n_jobs)(
                delayed(_fold_fit)(self, N, Z, y, tr, te, alpha, kappa, None)
                for tr, te in folds
            )
            value = float(np.mean([-o[0] / k for o, k in zip(out, n_test, strict=True)]))
            history.append((params[0], params[1], -value))
            bar.set_postfix_str(f"log alpha={params[0]:+.2f} log kappa={params[1]:+.2f}: "
                                f"{-value:.4f}", refresh=False)
            bar.update()
            return value if np.isfinite(value) else 1e10

        res = gp_minimize(objective, [(-4.0, 4.0), (-4.0, 4.0)], acq_func="EI",
                          initial_point_generator="lhs", n_calls=self.n_calls,
                          n_initial_points=min(self.n_initial_points, self.n_calls),
                          random_state=rng.randint(2**31 - 1))
        bar.close()
        la, lk = (float(v) for v in res.x)
        alpha, kappa = np.exp(la), np.exp(lk)
        self.search_results_ = {"log_alpha": np.array([h[0] for h in history]),
                                "log_kappa": np.array([h[1] for h in history]),
                                "score": np.array([h[2] for h in history])}
        # one start per fold: that fold's solution at the selected penalties
        out = [_fold_fit(self, N, Z, y, tr, te, alpha, kappa, None) for tr, te in folds]
        return float(alpha), float(kappa), [o[1] for o in out]

    # --- prediction -----------------------------------------------------------------------
    def _location_scale_std(self, X):
        N, Z = self._design(X)
        loc = self.y_mean_ + self.y_scale_ * (N @ self.coef_loc_)
        scale = self.y_scale_ * np.exp(0.5 * (Z @ self.coef_scale_))
        return loc, scale

    def _check_X(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False)

    def predict(self, X):
        """Conditional mean ``E[y | x] = f(x) + g(x)·δ·sqrt(2/π)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        y_mean : ndarray of shape (n_samples,)
            Conditional means, in the units of ``y``.
        """
        X = self._check_X(X)
        loc, scale = self._location_scale_std(X)
        delta = self.shape_ / np.sqrt(1.0 + self.shape_**2)
        return loc + scale * delta * np.sqrt(2.0 / np.pi)

    def predict_location(self, X):
        """Location ``f(x)`` of the skew-normal noise model (not the mean).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        location : ndarray of shape (n_samples,)
            ``f(x)`` in the units of ``y``.
        """
        X = self._check_X(X)
        return self._location_scale_std(X)[0]

    def predict_scale(self, X):
        """Scale ``g(x)`` of the noise (the standard deviation of ``y`` only when ``λ = 0``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        scale : ndarray of shape (n_samples,)
            ``g(x) > 0`` in the units of ``y``.
        """
        X = self._check_X(X)
        return self._location_scale_std(X)[1]

    def predict_std(self, X):
        """Conditional standard deviation ``g(x)·sqrt(1 - 2δ²/π)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        std : ndarray of shape (n_samples,)
            Standard deviation of ``y`` given ``x``, in the units of ``y``.
        """
        X = self._check_X(X)
        scale = self._location_scale_std(X)[1]
        delta2 = self.shape_**2 / (1.0 + self.shape_**2)
        return scale * np.sqrt(1.0 - 2.0 * delta2 / np.pi)

    def residuals(self, X, y):
        """Standardised residuals ``(y - f(x)) / g(x)`` (``SN(0, 1, λ)`` under the model).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.
        y : array-like of shape (n_samples,)
            Targets.

        Returns
        -------
        residuals : ndarray of shape (n_samples,)
            Unitless residuals.
        """
        X = self._check_X(X)
        y = self._check_y(y, X)
        loc, scale = self._location_scale_std(X)
        return (y - loc) / scale

    def _check_y(self, y, X):
        y = np.asarray(y, dtype=np.float64)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(
                f"y must have shape ({X.shape[0]},) to match X; got shape {y.shape}."
            )
        if not np.all(np.isfinite(y)):
            raise ValueError("y must not contain NaN or infinity.")
        return y

    def log_likelihood_samples(self, X, y):
        """Log-density ``log p(y_i | x_i)`` of each sample under the fitted model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.
        y : array-like of shape (n_samples,)
            Targets, in the units of the training target.

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
            Natural-log density of ``y`` (per unit of ``y``).

        Raises
        ------
        ValueError
            If ``y`` does not have one finite value per row of ``X``.
        """
        X = self._check_X(X)
        y = self._check_y(y, X)
        loc, scale = self._location_scale_std(X)
        z = (y - loc) / scale
        return _LOG2 - _HALF_LOG_2PI - np.log(scale) - 0.5 * z * z + log_ndtr(self.shape_ * z)

    def log_likelihood(self, X, y):
        """Total log-likelihood ``Σ log p(y_i | x_i)`` (unpenalised).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.
        y : array-like of shape (n_samples,)
            Targets.

        Returns
        -------
        log_likelihood : float
            Sum of :meth:`log_likelihood_samples`.
        """
        return float(np.sum(self.log_likelihood_samples(X, y)))


def _fold_fit(est, N, Z, y, train, test, alpha, kappa, theta0):
    """Loose fit on ``train`` rows; returns (held-out Σℓ, θ)."""
    problem = est._problem(N[train], Z[train], y[train], alpha, kappa)
    warm = theta0 is not None
    if theta0 is None:
        theta0 = problem.start()
    theta, _ = est._loose_fit(problem, theta0, warm=warm)
    held = _SNProblem(N[test], Z[test], y[test], problem.Pb * 0, problem.Pr * 0, 0.0, 0.0,
                      fit_shape=problem.fit_shape)
    return float(held.loglik_samples(theta).sum()), theta
