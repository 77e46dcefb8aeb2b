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
from scipy.optimize import minimize
from scipy.special import log_ndtr
from scipy.stats import skew
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold
from sklearn.preprocessing import SplineTransformer
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ..utils._parallel import Parallel, delayed
from ..utils._scaling import _robust_mean_std, _standardize

__all__ = ["SkewNormalLSNMRegressor"]

_LOG2 = np.log(2.0)
_HALF_LOG_2PI = 0.5 * np.log(2.0 * np.pi)
_RIDGE = 1e-6  # identifies the additive blocks (each sums to one)
_LAMBDA_BOUND = 25.0
_RHO_LOW, _RHO_HIGH = -10.0, 5.0
_NEG_E_LOG_CHI2 = 1.2704  # -E log chi^2_1
_SEARCH_MIN_SAMPLES = 50
_MAX_UNSTANDARDIZED = 1e100  # |values| above this overflow the squared residuals


def _mills(t):
    """``φ(t) / Φ(t)``, stable for very negative ``t``."""
    return np.exp(-0.5 * t * t - _HALF_LOG_2PI - log_ndtr(t))


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


def _second_difference_penalty(k):
    """``D₂ᵀD₂`` for ``k`` coefficients (second differences)."""
    D = np.diff(np.eye(k), n=2, axis=0)
    return D.T @ D


def _shape_from_skewness(gamma):
    """Method-of-moments ``λ`` of a skew-normal with skewness ``gamma`` (|γ| ≤ 0.99)."""
    gamma = float(np.clip(gamma, -0.99, 0.99))
    if gamma == 0.0 or not np.isfinite(gamma):
        return 0.0
    r = (2.0 * abs(gamma) / (4.0 - np.pi)) ** (1.0 / 3.0)
    denom = 2.0 / np.pi - (1.0 - 2.0 / np.pi) * r * r
    lam = np.sign(gamma) * r / np.sqrt(max(denom, 1e-12))
    return float(np.clip(lam, -_LAMBDA_BOUND, _LAMBDA_BOUND))


def skewnormal_skewness(shape):
    """Skewness ``γ(λ)`` of the skew-normal distribution with shape ``λ``."""
    delta = shape / np.sqrt(1.0 + shape * shape)
    mu = delta * np.sqrt(2.0 / np.pi)
    return (4.0 - np.pi) / 2.0 * mu**3 / (1.0 - mu * mu) ** 1.5


class _SNProblem:
    """Penalised skew-normal LSNM likelihood on fixed design matrices.

    Parameter vector ``θ = (β, ρ[, λ])`` (``λ`` only when ``fit_shape``).
    """

    def __init__(self, N, Z, y, K, M, alpha, kappa, fit_shape=True):
        self.N, self.Z, self.y = N, Z, y
        self.q, self.r = N.shape[1], Z.shape[1]
        self.fit_shape = fit_shape
        self.Pb = alpha * K + _RIDGE * np.eye(self.q)
        self.Pr = kappa * M + _RIDGE * np.eye(self.r)
        self.dim = self.q + self.r + int(fit_shape)

    # --- parameters -----------------------------------------------------------------------
    def unpack(self, theta):
        beta = theta[:self.q]
        rho = theta[self.q:self.q + self.r]
        lam = theta[-1] if self.fit_shape else 0.0
        return beta, rho, lam

    def pack(self, beta, rho, lam):
        parts = [beta, rho] + ([np.array([lam])] if self.fit_shape else [])
        return np.concatenate(parts)

    def bounds(self):
        b = [(None, None)] * self.q + [(_RHO_LOW, _RHO_HIGH)] * self.r
        if self.fit_shape:
            b.append((-_LAMBDA_BOUND, _LAMBDA_BOUND))
        return b

    # --- likelihood -----------------------------------------------------------------------
    def loglik_samples(self, theta):
        beta, rho, lam = self.unpack(theta)
        u = self.Z @ rho
        z = (self.y - self.N @ beta) * np.exp(-0.5 * u)
        return _LOG2 - _HALF_LOG_2PI - 0.5 * u - 0.5 * z * z + log_ndtr(lam * z)

    def penalty(self, theta):
        beta, rho, _ = self.unpack(theta)
        return 0.5 * beta @ self.Pb @ beta + 0.5 * rho @ self.Pr @ rho

    def objective(self, theta):
        """Penalised negative log-likelihood ``P`` and its gradient."""
        beta, rho, lam = self.unpack(theta)
        u = self.Z @ rho
        inv_s = np.exp(-0.5 * u)
        z = (self.y - self.N @ beta) * inv_s
        t = lam * z
        lnd = log_ndtr(t)
        R = np.exp(-0.5 * t * t - _HALF_LOG_2PI - lnd)
        ll = _LOG2 - _HALF_LOG_2PI - 0.5 * u - 0.5 * z * z + lnd
        P = -ll.sum() + 0.5 * beta @ self.Pb @ beta + 0.5 * rho @ self.Pr @ rho
        g_beta = -self.N.T @ ((z - lam * R) * inv_s) + self.Pb @ beta
        g_rho = -self.Z.T @ (0.5 * (z * z - t * R - 1.0)) + self.Pr @ rho
        grad = [g_beta, g_rho]
        if self.fit_shape:
            grad.append(np.array([-(z * R).sum()]))
        return P, np.concatenate(grad)

    def value(self, theta):
        return -self.loglik_samples(theta).sum() + self.penalty(theta)

    def sample_gradients(self, theta):
        """Per-sample gradients of ``ℓ_i``, shape (n, dim)."""
        beta, rho, lam = self.unpack(theta)
        u = self.Z @ rho
        inv_s = np.exp(-0.5 * u)
        z = (self.y - self.N @ beta) * inv_s
        t = lam * z
        R = _mills(t)
        cols = [self.N * ((z - lam * R) * inv_s)[:, None],
                self.Z * (0.5 * (z * z - t * R - 1.0))[:, None]]
        if self.fit_shape:
            cols.append((z * R)[:, None])
        return np.hstack(cols)

    def hessian_exact(self, theta):
        """Analytic Hessian of ``P``."""
        beta, rho, lam = self.unpack(theta)
        u = self.Z @ rho
        inv_s = np.exp(-0.5 * u)
        z = (self.y - self.N @ beta) * inv_s
        t = lam * z
        R = _mills(t)
        psi2 = -R * (t + R)  # second derivative of log Φ at t
        a = -z + lam * R  # dℓ/dz
        l_zz = -1.0 + lam * lam * psi2
        l_zl = R + t * psi2
        Ns = self.N * inv_s[:, None]
        q, r = self.q, self.r
        H = np.empty((self.dim, self.dim))
        H[:q, :q] = -(Ns.T @ (Ns * l_zz[:, None])) + self.Pb
        H_br = -(Ns.T @ (self.Z * (0.5 * (z * l_zz + a))[:, None]))
        H[:q, q:q + r] = H_br
        H[q:q + r, :q] = H_br.T
        H[q:q + r, q:q + r] = -(self.Z.T @ (self.Z * (0.25 * z * (l_zz * z + a))[:, None]))
        H[q:q + r, q:q + r] += self.Pr
        if self.fit_shape:
            h_bl = Ns.T @ l_zl
            h_rl = self.Z.T @ (0.5 * z * l_zl)
            H[:q, -1] = H[-1, :q] = h_bl
            H[q:q + r, -1] = H[-1, q:q + r] = h_rl
            H[-1, -1] = -np.sum(z * z * psi2)
        return H

    def hessian(self, theta, step=1e-5):
        """Central-difference Hessian of ``P`` (symmetrised)."""
        H = np.empty((self.dim, self.dim))
        for j in range(self.dim):
            tp, tm = theta.copy(), theta.copy()
            tp[j] += step
            tm[j] -= step
            H[:, j] = (self.objective(tp)[1] - self.objective(tm)[1]) / (2 * step)
        return 0.5 * (H + H.T)

    # --- starting point -------------------------------------------------------------------
    def start(self, lam0=None):
        N, Z, y = self.N, self.Z, self.y
        beta = np.linalg.solve(N.T @ N + self.Pb, N.T @ y)
        e = y - N @ beta
        target = np.log(e * e + 1e-8) + _NEG_E_LOG_CHI2
        rho = np.clip(np.linalg.solve(Z.T @ Z + self.Pr, Z.T @ target), _RHO_LOW, _RHO_HIGH)
        if lam0 is None:
            z = e * np.exp(-0.5 * (Z @ rho))
            gamma = skew(z) if np.ptp(z) > 0 else 0.0
            lam0 = _shape_from_skewness(gamma)
        return self.pack(beta, rho, lam0 if self.fit_shape else 0.0)

    # --- ECM(E) ---------------------------------------------------------------------------
    def ecm_step(self, theta, shape_update="newton"):
        N, Z, y = self.N, self.Z, self.y
        beta, rho, lam = self.unpack(theta)
        u = Z @ rho
        s = np.exp(0.5 * u)
        h = np.exp(-u)
        e = y - N @ beta
        eta = lam * e / s
        Rm = _mills(eta)
        w1 = lam * e + s * Rm
        w2 = lam * lam * e * e + s * s + lam * e * s * Rm
        a = 1.0 + lam * lam
        # CM-β (closed form)
        A = N.T @ (N * h[:, None]) + self.Pb / a
        b = N.T @ (h * (y - lam * w1 / a))
        beta = _solve(A, b)
        # CM-ρ: one projected Newton step with halving on Q_ρ (concave)
        e = y - N @ beta
        c = np.maximum(a * e * e - 2.0 * lam * e * w1 + w2, 0.0)
        Pr = self.Pr

        def q_rho(r):
            uu = Z @ r
            return np.sum(-uu - 0.5 * c * np.exp(-uu)) - 0.5 * r @ Pr @ r

        wts = 0.5 * c * np.exp(-u)
        grad = Z.T @ (wts - 1.0) - Pr @ rho
        hess = -(Z.T @ (Z * wts[:, None])) - Pr
        # coordinates on a bound that the gradient pushes outwards stay there
        free = ~(((rho <= _RHO_LOW) & (grad < 0)) | ((rho >= _RHO_HIGH) & (grad > 0)))
        direction = np.zeros_like(rho)
        if free.any():
            direction[free] = -_solve(hess[np.ix_(free, free)], grad[free])
        q0 = q_rho(rho)
        q0 -= 1e-13 * abs(q0)  # rounding: a null step must not trigger 30 halvings
        step = 1.0
        for _ in range(31):
            cand = np.clip(rho + step * direction, _RHO_LOW, _RHO_HIGH)
            if q_rho(cand) >= q0:
                rho = cand
                break
            step *= 0.5
        # CM-λ
        if self.fit_shape:
            z = e * np.exp(-0.5 * (Z @ rho))
            if shape_update == "newton":
                lam = _newton_shape(z, lam)
            else:  # the authors' closed-form update
                hh = np.exp(-(Z @ rho))
                den = np.sum(hh * e * e)
                if den > 0:
                    lam = float(np.clip(np.sum(hh * e * w1) / den, -_LAMBDA_BOUND,
                                        _LAMBDA_BOUND))
        return self.pack(beta, rho, lam)


def _solve(A, b):
    try:
        return np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(A, b, rcond=None)[0]


def _newton_shape(z, lam, max_steps=20):
    """Maximise the concave ``Σ log Φ(λ z_i)`` over ``λ`` by 1-D Newton, clipped to the box."""
    lnd = log_ndtr(lam * z)
    best = np.sum(lnd)
    for _ in range(max_steps):
        t = lam * z
        R = np.exp(-0.5 * t * t - _HALF_LOG_2PI - lnd)
        g = np.sum(z * R)
        H = -np.sum(z * z * R * (t + R))
        if not H < -1e-12:
            break
        new = float(np.clip(lam - g / H, -_LAMBDA_BOUND, _LAMBDA_BOUND))
        if new == lam:
            break
        lnd_new = log_ndtr(new * z)
        value = np.sum(lnd_new)
        if value < best:  # numerical safeguard; Newton on a concave function
            break
        done = abs(new - lam) < 1e-9 * (1.0 + abs(lam))
        lam, best, lnd = new, value, lnd_new
        if done:
            break
    return lam


def _newton_polish(problem, theta, *, ftol, gtol=1e-6, max_steps=100):
    """Projected, damped Newton on ``P`` with the analytic Hessian and box constraints.

    Returns (θ, P, n_steps, converged).
    """
    bounds = problem.bounds()
    lo = np.array([-np.inf if b[0] is None else b[0] for b in bounds])
    hi = np.array([np.inf if b[1] is None else b[1] for b in bounds])
    theta = np.clip(theta, lo, hi)
    P, g = problem.objective(theta)
    damping = 0.0
    for step in range(max_steps):
        at_lo = (theta <= lo) & (g > 0)
        at_hi = (theta >= hi) & (g < 0)
        free = ~(at_lo | at_hi)
        if not free.any() or np.max(np.abs(g[free])) <= gtol:
            return theta, P, step, True
        H = problem.hessian_exact(theta)[np.ix_(free, free)]
        gf = g[free]
        scale = max(1.0, float(np.max(np.abs(np.diag(H)))))
        while True:
            try:
                L = np.linalg.cholesky(H + damping * scale * np.eye(H.shape[0]))
                break
            except np.linalg.LinAlgError:
                damping = max(1e-8, 10.0 * damping)
                if damping > 1e8:
                    return theta, P, step, False
        d = np.zeros_like(theta)
        d[free] = -np.linalg.solve(L.T, np.linalg.solve(L, gf))
        t = 1.0
        for _ in range(40):
            cand = np.clip(theta + t * d, lo, hi)
            P_new, g_new = problem.objective(cand)
            if np.isfinite(P_new) and P_new <= P + 1e-4 * float(g @ (cand - theta)):
                break
            t *= 0.5
        else:
            return theta, P, step, False
        damping = damping / 10.0 if t == 1.0 else damping
        decrease = P - P_new
        theta, P, g = cand, P_new, g_new
        if decrease <= ftol * (1.0 + abs(P)) and t == 1.0:
            at_lo = (theta <= lo) & (g > 0)
            at_hi = (theta >= hi) & (g < 0)
            free = ~(at_lo | at_hi)
            if not free.any() or np.max(np.abs(g[free])) <= max(gtol, 1e-3):
                return theta, P, step + 1, True
    return theta, P, max_steps, False


def _optimise(problem, theta, *, solver, max_iter, tol, ftol, maxiter_lbfgs, monitor=None):
    """ECM(E) steps then (optionally) L-BFGS-B polish; returns (θ, P, n_iter, info)."""
    P = problem.value(theta)
    n_iter = 0
    ecm_converged = False
    if solver != "lbfgs":
        shape_update = "closed-form" if solver == "ecm-authors" else "newton"
        for _ in range(max_iter):
            theta = problem.ecm_step(theta, shape_update=shape_update)
            P_new = problem.value(theta)
            n_iter += 1
            if monitor is not None:
                monitor.append(P_new)
            done = abs(P_new - P) <= tol * (1.0 + abs(P_new))
            P = P_new
            if done:
                ecm_converged = True
                break
    info = {"ecm_converged": ecm_converged, "lbfgs_status": None, "newton_converged": None}
    if solver == "ecm+newton":
        th, P_n, steps, ok = _newton_polish(problem, theta, ftol=ftol)
        n_iter += steps
        info["newton_converged"] = ok
        if P_n <= P:
            theta, P = th, P_n
        if ok:
            return theta, P, n_iter, info
    if solver in ("ecm+lbfgs", "lbfgs", "ecm+newton"):
        res = minimize(problem.objective, theta, jac=True, method="L-BFGS-B",
                       bounds=problem.bounds(),
                       options={"ftol": ftol, "gtol": 1e-6, "maxiter": maxiter_lbfgs})
        info["lbfgs_status"] = int(res.status)
        n_iter += int(res.nit)
        if np.isfinite(res.fun) and res.fun < P:
            theta, P = res.x, float(res.fun)
    return theta, P, n_iter, info


def _cmaes_start(problem, theta, random_state, n_generations=200):
    """The authors' CMA-ES on ``P`` from ``theta`` (needs the ``cmaes`` package)."""
    try:
        from cmaes import CMA
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "solver='cmaes' needs the 'cmaes' package, which is not installed: pip install "
            "\"sklearn_icml26[causal]\" (or pip install cmaes). Without it use "
            "solver='ecm+newton' (the default)."
        ) from exc
    bounds = np.array([(-50.0, 50.0) if lo is None else (lo, hi)
                       for lo, hi in problem.bounds()])
    opt = CMA(mean=np.clip(theta, bounds[:, 0], bounds[:, 1]), sigma=0.3, bounds=bounds,
              seed=int(random_state.randint(2**31 - 1)))
    best, best_val = theta, problem.value(theta)
    for _ in range(n_generations):
        sols = []
        for _ in range(opt.population_size):
            x = opt.ask()
            v = problem.value(x)
            v = v if np.isfinite(v) else 1e300
            sols.append((x, v))
            if v < best_val:
                best, best_val = x, v
        opt.tell(sols)
        if opt.should_stop():
            break
    return best


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
        Print the penalty search when positive.

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
    x_mean_ : ndarray of shape (n_features,)
        Feature means removed before fitting (zeros without standardisation).
    x_scale_ : ndarray of shape (n_features,)
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
        Xs = _standardize(X, self.x_mean_, self.x_scale_)
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
            self.x_mean_, scale, _ = _robust_mean_std(X, axis=0)
            self.x_scale_ = np.where(self.constant_features_ | (scale == 0), 1.0, scale)
            y_mean, y_sd, _ = _robust_mean_std(y, axis=0)
            self.y_mean_, y_sd = float(y_mean), float(y_sd)
            self.y_scale_ = y_sd if y_sd > 0 else 1.0
        else:
            self.x_mean_ = np.zeros(p)
            self.x_scale_ = np.ones(p)
            self.y_mean_, self.y_scale_ = 0.0, 1.0
        if self.constant_features_.any():
            warnings.warn(
                f"X has constant feature(s) {np.flatnonzero(self.constant_features_).tolist()}:"
                " they get no spline block (their contribution is a constant).",
                UserWarning, stacklevel=3,
            )

    def _set_splines(self, X):
        """One location and one log-scale basis per feature.

        A feature with ties and fewer distinct values than a basis has coefficients gets, for
        that basis, a degree-1 spline with a knot at every distinct value (one coefficient per
        value): the cubic spline would be unidentified between the values and, with a small
        penalty, free to swing far beyond the neighbouring values' fits.
        """
        n = X.shape[0]
        Xs = _standardize(X, self.x_mean_, self.x_scale_)
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
                    "two values the fit stays between theirs).", UserWarning, stacklevel=4)

    def _warn_convergence(self, info, solver):
        problems = []
        if solver == "ecm" and not info["ecm_converged"]:
            problems.append(f"ECM reached max_iter={self.max_iter} without meeting tol")
        if info["lbfgs_status"] not in (None, 0, 2):
            problems.append("L-BFGS-B hit its iteration limit")
        if abs(self.shape_) >= _LAMBDA_BOUND - 1e-6:
            problems.append(f"the shape is on its bound ({self.shape_:+.0f}; the noise looks "
                            "half-normal, the likelihood increases without bound)")
        on_bound = (self.coef_scale_ <= _RHO_LOW + 1e-8) | (self.coef_scale_ >= _RHO_HIGH - 1e-8)
        if on_bound.any():
            problems.append(f"{int(on_bound.sum())} log-scale coefficient(s) on the bounds "
                            f"[{_RHO_LOW}, {_RHO_HIGH}]")
        if problems:
            warnings.warn("SkewNormalLSNMRegressor: " + "; ".join(problems)
                          + ". The best iterate is kept.", ConvergenceWarning, stacklevel=3)

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
            if self.verbose:
                print(f"[{kind}] log alpha={la:+.2f} log kappa={lk:+.2f}: {score:.4f}")
            return score

        mid = 0.0 if 0.0 in grid else float(grid[len(grid) // 2])
        scores_a = [evaluate(la, mid) for la in grid]
        best_la = float(grid[int(np.argmax(scores_a))])
        if kind == "tic":  # the log-kappa scan starts from the best log-alpha fit
            warm_state["full"] = cache[(best_la, mid)][1]
        for lk in grid:
            if lk != mid:
                evaluate(best_la, lk)
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

        def objective(params):
            alpha, kappa = np.exp(params[0]), np.exp(params[1])
            out = Parallel(n_jobs=self.n_jobs)(
                delayed(_fold_fit)(self, N, Z, y, tr, te, alpha, kappa, None)
                for tr, te in folds
            )
            value = float(np.mean([-o[0] / k for o, k in zip(out, n_test, strict=True)]))
            history.append((params[0], params[1], -value))
            return value if np.isfinite(value) else 1e10

        res = gp_minimize(objective, [(-4.0, 4.0), (-4.0, 4.0)], acq_func="EI",
                          initial_point_generator="lhs", n_calls=self.n_calls,
                          n_initial_points=min(self.n_initial_points, self.n_calls),
                          random_state=rng.randint(2**31 - 1))
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


def _tic(problem, theta):
    """Takeuchi information criterion ``Σℓ_i - tr(H⁻¹J)`` (larger is better)."""
    ll = problem.loglik_samples(theta).sum()
    if not np.isfinite(ll):
        return -np.inf
    G = problem.sample_gradients(theta)
    J = G.T @ G
    H = problem.hessian_exact(theta)  # equals the central differences (tested)
    try:
        trace = float(np.trace(np.linalg.solve(H, J)))
    except np.linalg.LinAlgError:
        trace = float(np.trace(np.linalg.pinv(H) @ J))
    return float(ll - trace)


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
