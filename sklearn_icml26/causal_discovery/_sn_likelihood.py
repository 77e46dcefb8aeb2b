"""The penalised skew-normal LSNM likelihood on fixed spline designs, and its solvers.

:class:`_SNProblem` evaluates the log-likelihood, its gradients and Hessians and runs the
ECM(E) steps; ``_optimise`` runs ECM(E), L-BFGS-B and the Newton polish; ``_cmaes_start``
searches starting points; ``_tic`` is the Takeuchi criterion of the penalty search.
"""

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_ndtr
from scipy.stats import skew

_LOG2 = np.log(2.0)
_HALF_LOG_2PI = 0.5 * np.log(2.0 * np.pi)
_RIDGE = 1e-6  # identifies the additive blocks (each sums to one)
_LAMBDA_BOUND = 25.0
_RHO_LOW, _RHO_HIGH = -10.0, 5.0
_NEG_E_LOG_CHI2 = 1.2704  # -E log chi^2_1


def _mills(t):
    """``φ(t) / Φ(t)``, stable for very negative ``t``."""
    return np.exp(-0.5 * t * t - _HALF_LOG_2PI - log_ndtr(t))


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
        # stalled: a negligible decrease (full or backtracked step: near the optimum rounding
        # makes the full step fail, and requiring t == 1 ran the polish to max_steps) with a
        # small projected gradient is convergence
        if decrease <= ftol * (1.0 + abs(P)):
            at_lo = (theta <= lo) & (g > 0)
            at_hi = (theta >= hi) & (g < 0)
            free = ~(at_lo | at_hi)
            if not free.any() or np.max(np.abs(g[free])) <= max(gtol, 1e-3):
                return theta, P, step + 1, True
    return theta, P, max_steps, False


def _optimise(problem, theta, *, solver, max_iter, tol, ftol, maxiter_lbfgs, monitor=None):
    """ECM(E) steps then (optionally) L-BFGS-B polish; returns (θ, P, n_iter, info).

    Trial points of the line searches may overflow (a full Newton step far out): their
    non-finite objective is rejected by the search, so numpy's overflow warnings are not
    the user's business (a non-finite final fit is an error in ``fit``).
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return _optimise_raw(problem, theta, solver=solver, max_iter=max_iter, tol=tol,
                             ftol=ftol, maxiter_lbfgs=maxiter_lbfgs, monitor=monitor)


def _optimise_raw(problem, theta, *, solver, max_iter, tol, ftol, maxiter_lbfgs, monitor):
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
