"""Equilibrium shares of ESE: the closed form, its damping/trend selection and the paper's
iterative refinement with its attribute-based initial state and stop rules.
"""


import numpy as np


# --------------------------------------------------------------------------------------------
# equilibrium shares
# --------------------------------------------------------------------------------------------
def _window_totals(W):
    """Totals ``M[r, tau] = sum_i W[r, i, tau]`` (N, p) of windows W (N, n, p).

    ``einsum`` adds the systems in the same order as ``W.sum(axis=1)`` (the result is the
    same to the bit) and runs about 3x faster on C-ordered windows, whose reduced axis is not
    the contiguous one.
    """
    return np.einsum("rip->rp", W)


def _totals(W):
    """Window totals M (N, p) and the mask of valid steps (positive, finite total)."""
    M = _window_totals(W)
    valid = np.isfinite(M) & (M > 0)
    return M, valid


def _closed_form_shares(W, damping, M=None):
    """Exact fixed point: weighted mean of the valid proportions, weights (1-lam)^(p-tau).

    ``M`` may give the window totals (N, p) when the caller has them.
    """
    N, n, p = W.shape
    if M is None:
        M, valid = _totals(W)
    else:
        valid = np.isfinite(M) & (M > 0)
    weights = np.power(1.0 - damping, np.arange(p - 1, -1, -1, dtype=np.float64))  # 0**0 = 1
    w = np.where(valid, weights[None, :], 0.0)
    safe_M = np.where(valid, M, 1.0)
    num = np.einsum("rip,rp->ri", W, w / safe_M)
    denom = w.sum(axis=1)
    ok = denom > 0
    e = np.full((N, n), 1.0 / n)
    e[ok] = num[ok] / denom[ok, None]
    return e


# candidate values of damping="auto" and share_trend="auto" (time-ordered selection in fit)
DAMPING_GRID = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)
SHARE_TREND_GRID = (0.0, 0.5, 1.0)


def _share_kernels(M, valid, candidates, horizon, period=None):
    """Linear share filters of every window and candidate ``(damping, share trend)``.

    For damping ``lam`` the weights are ``w_tau = (1 - lam) ** (p - tau)`` on valid steps (0
    elsewhere) and the step times ``t_tau = tau - p`` (0 at the newest step). The weighted mean
    proportions ``s_bar_i = sum_tau w_tau W_{i,tau} / (M_tau sum(w))`` (the closed-form
    equilibrium shares) and the weighted least-squares slope of the proportions on ``t``
    (``sum_tau w_tau (t_tau - t_bar) W_{i,tau} / (M_tau sum(w) var_w(t))``, zero where the
    weighted spread of ``t`` vanishes) are both linear in the window's values, and so are the
    trend shares before their clip, ``e = s_bar + phi * slope * (horizon - t_bar)``: one
    coefficient vector per row and candidate, ``e_{r,i} = W[r, i, :] @ K[r, :, c]``, so that
    one batched matrix product gives every candidate's shares.

    With a seasonal ``period`` m the same filters act on the deseasonalised proportions
    ``s_tau - d_{phi(tau)}`` and the profile of the target's phase is added back (see
    :func:`_seasonal_profile_kernels`): ``e = level filter (s - d) + d_0``, still one linear
    filter per row and candidate, whose coefficients still sum to 1 (trend 0) or carry the
    same total as without the season.

    Returns ``K`` (N, p, n_candidates) and ``ok`` (N, n_candidates): where a row has no
    step of positive weight (no valid step, or, at damping 1, an invalid newest step) ``K`` is
    0 and the shares are uniform.
    """
    N, p = M.shape
    t = np.arange(-(p - 1), 1, dtype=np.float64)
    inv_M = np.where(valid, 1.0 / np.where(valid, M, 1.0), 0.0)
    if period is not None:  # filters of the proportions; the totals are divided out at the end
        D, P = _seasonal_profile_kernels(valid, period, horizon)
        inv_M, seasonal_inv_M = valid.astype(np.float64), inv_M
    K = np.empty((N, p, len(candidates)))
    ok_all = np.empty((N, len(candidates)), dtype=bool)
    for lam in dict.fromkeys(lam for lam, _ in candidates):  # unique, in order
        w = valid * np.power(1.0 - lam, -t)[None, :]  # 0**0 = 1
        denom = w.sum(axis=1)
        ok = denom > 0
        safe_denom = np.where(ok, denom, 1.0)
        t_bar = (w @ t) / safe_denom
        dt = t[None, :] - t_bar[:, None]
        t_var = (w * dt**2).sum(axis=1) / safe_denom
        k_mean = w * inv_M / safe_denom[:, None]
        flat = ~(t_var > 1e-12) | ~ok
        k_slope = np.where(flat[:, None], 0.0,
                           k_mean * dt / np.where(flat, 1.0, t_var)[:, None])
        k_slope *= (horizon - t_bar)[:, None]
        for c, (lam_c, trend) in enumerate(candidates):
            if lam_c == lam:
                K[:, :, c] = k_mean + trend * k_slope if trend else k_mean
                ok_all[:, c] = ok
    if period is not None:
        # level of the deseasonalised proportions plus the target phase's profile:
        # k - D (k P) + D[:, :, 0], then back to filters of the values (divide by the totals)
        K -= np.einsum("rpm,rmc->rpc", D, np.einsum("rpc,pm->rmc", K, P))
        K += D[:, :, :1]
        K *= seasonal_inv_M[:, :, None]
    return K, ok_all


def _seasonal_profile_kernels(valid, period, horizon):
    """Filters of the seasonal share profile by phase, and the phase indicator.

    The phase of window step ``tau`` (0 = oldest of ``p``) is ``(tau - (p - 1 + horizon)) mod
    period``, so the target has phase 0. The profile of phase ``f`` is the mean of the valid
    proportions at that phase minus the mean of those phase means over the phases with a
    valid step (every step of a complete season weighs alike): ``d_f = sum_tau D[r, tau, f]
    s_tau``, ``sum_f d_f = 0``, and ``sum_i d_{f,i} = 0`` (proportions sum to 1). A phase
    without a valid step (all-zero totals there) has no profile (``d_f = 0``).

    Returns ``D`` (N, p, period) and ``P`` (p, period), ``P[tau, f] = 1`` at step ``tau``'s
    phase.
    """
    N, p = valid.shape
    phase = (np.arange(p) - (p - 1 + horizon)) % period
    P = np.zeros((p, period))
    P[np.arange(p), phase] = 1.0
    v = valid.astype(np.float64)
    count = v @ P  # (N, period) valid steps per phase
    has = count > 0
    Q = v[:, :, None] * P[None, :, :] / np.where(has, count, 1.0)[:, None, :]
    n_phases = np.maximum(has.sum(axis=1), 1)
    centre = Q.sum(axis=2) / n_phases[:, None]
    D = np.where(has[:, None, :], Q - centre[:, :, None], 0.0)
    return D, P


def _seasonal_kernels(M, valid, candidates, horizon, period):
    """Filters of the seasonal shares for candidates ``(form, damping, trend)``.

    ``form="none"``: the shares without a season (:func:`_share_kernels`), for the choice.
    ``form="profile"``: the level (and trend) of the deseasonalised proportions plus the
    target phase's profile (:func:`_share_kernels` with ``period``). ``form="difference"``:
    the proportions of the newest step ``b`` in the target's phase plus the level (and trend,
    extrapolated ``horizon`` steps) of the seasonal differences ``s_tau - s_{tau-m}``
    (``tau = m..p-1``, valid where both steps are), weights ``(1 - damping) ** (p - 1 - tau)``:
    ``e = s_b + j filter(s_tau - s_{tau-m})``, ``j = ceil(horizon / m)`` the seasons from
    ``b`` to the target: the shares' analogue of the seasonal-growth aggregate (with no
    valid difference, ``e = s_b``). Both are linear in the proportions
    with coefficients summing to 1.

    Returns ``K`` (N, p, n_candidates) (filters of the values: ``e = W @ K``) and ``ok``
    (N, n_candidates); rows without a usable step (``ok`` False: no valid step for the
    profile form, an invalid step ``b`` for the difference form) get uniform shares.
    """
    from ._aggregate import _seasonal_base

    N, p = M.shape
    K = np.zeros((N, p, len(candidates)))
    ok = np.zeros((N, len(candidates)), dtype=bool)
    for form in dict.fromkeys(c[0] for c in candidates):
        cols = [j for j, c in enumerate(candidates) if c[0] == form]
        pairs = [candidates[j][1:] for j in cols]
        if form in ("profile", "none"):
            K[:, :, cols], ok[:, cols] = _share_kernels(
                M, valid, pairs, horizon, period if form == "profile" else None)
            continue
        q = p - period
        valid_d = valid[:, period:] & valid[:, :q]
        # unit "totals" make _share_kernels return filters of the difference sequence itself
        Kd, _ = _share_kernels(np.where(valid_d, 1.0, 0.0), valid_d, pairs, horizon)
        b = _seasonal_base(p, period, horizon)
        Kd *= int(np.ceil(horizon / period))  # seasons from step b to the target
        Ks = np.zeros((N, p, len(cols)))
        Ks[:, period:] += Kd
        Ks[:, :q] -= Kd
        Ks[:, b] += 1.0
        inv_M = np.where(valid, 1.0 / np.where(valid, M, 1.0), 0.0)
        K[:, :, cols] = Ks * inv_M[:, :, None]
        ok[:, cols] = valid[:, b, None]
    return K, ok


def _kernel_shares(W, damping, trend, horizon, nonneg=None, M=None, period=None,
                   form="profile"):
    """Shares of windows W (N, n, p) for one damping and share trend (``stop="converge"``).

    ``trend == 0`` gives the closed-form equilibrium shares (:func:`_closed_form_shares`);
    otherwise the trend shares of :func:`_share_kernels`, clipped at 0 (windows without a
    negative value) and renormalised by :func:`_finalize_shares`. ``M`` may give the window
    totals. A seasonal ``period`` gives the seasonal shares of :func:`_share_kernels` (level
    of the deseasonalised proportions plus the target phase's profile), clipped and
    renormalised likewise.
    """
    if trend == 0 and period is None:
        return _closed_form_shares(W, damping, M)
    if M is None:
        M, valid = _totals(W)
    else:
        valid = np.isfinite(M) & (M > 0)
    if period is None:
        K, ok = _share_kernels(M, valid, [(damping, trend)], horizon)
    else:
        K, ok = _seasonal_kernels(M, valid, [(form, damping, trend)], horizon, period)
    e = np.matmul(W, K)[:, :, 0]
    e[~ok[:, 0]] = 1.0 / W.shape[1]
    return _finalize_shares(e, W, nonneg)


def _candidate_errors(W, M, valid, Y, total, candidates, horizon, row_weights,
                      nonneg=None, chunk_size=1 << 21, period=None):
    """Weighted squared errors of the observed totals split by every candidate's shares.

    For each row set ``s`` (a row of ``row_weights`` (n_sets, N): the weight of every window
    in that set, 0 outside), returns ``out[s, i, c] = sum_r row_weights[s, r] * (total_r *
    e_{r,i,c} - Y_{r,i}) ** 2`` (n_sets, n, n_candidates) for the ``candidates`` (damping,
    trend) of :func:`_share_kernels` (``(form, damping, trend)`` of :func:`_seasonal_kernels`
    with a seasonal ``period``). The shares are those of :func:`_kernel_shares`: trend
    shares (``trend > 0``) and seasonal shares are clipped at 0 on windows without a negative
    value (``nonneg``, every window when ``None``) and renormalised, equilibrium shares
    (``trend == 0``) are used as they are.

    One batched matrix product per chunk of about ``chunk_size`` values gives every
    candidate's shares; nothing of the size of ``W`` is copied. On nonnegative windows with
    positive totals the totals are folded into the filters, and a chunk whose shares are all
    nonnegative skips the clip and the renormalisation (which then only divides by a sum
    that is 1 up to rounding).
    """
    N, n, p = W.shape
    if period is None:
        K, ok = _share_kernels(M, valid, candidates, horizon)
        renorm = np.array([trend != 0 for _, trend in candidates])
    else:  # candidates (form, damping, trend): every seasonal share is clipped
        K, ok = _seasonal_kernels(M, valid, candidates, horizon, period)
        renorm = np.ones(len(candidates), dtype=bool)
    n_cand = K.shape[2]
    fold = nonneg is None and bool(np.all(total > 0))
    if fold:  # E = total * e straight from the product
        K *= total[:, None, None]
        factor_rows = total
    else:
        factor_rows = np.ones(N)
    member = row_weights > 0
    uniform = [bool(np.ptp(w[m]) == 0) if m.any() else True
               for w, m in zip(row_weights, member, strict=True)]
    out = np.zeros((row_weights.shape[0], n, n_cand))
    step = max(1, chunk_size // max(1, n * n_cand))
    # chunks never straddle a change of set membership
    edges = [0, *(np.nonzero((member[:, 1:] != member[:, :-1]).any(axis=0))[0] + 1), N]
    for a0, b0 in zip(edges[:-1], edges[1:], strict=True):
        sets = np.nonzero(member[:, a0])[0]
        if not sets.size:
            continue
        for a in range(a0, b0, step):
            b = min(b0, a + step)
            f = factor_rows[a:b]
            E = np.matmul(W[a:b], K[a:b])  # (rows, n, n_candidates): f * e
            if not ok[a:b].all():  # no step of positive weight: uniform shares
                rows, cols = np.nonzero(~ok[a:b])
                E[rows, :, cols] = (f[rows] / n)[:, None]
            if not (fold and E.min() >= 0):  # clip and renormalise the trend shares
                keep = slice(None) if nonneg is None else nonneg[a:b]
                if renorm.any() and (nonneg is None or keep.all()):
                    np.maximum(E, 0.0, out=E)  # the equilibrium shares are >= 0 there
                elif renorm.any() and keep.any():
                    E[keep] = np.maximum(E[keep], 0.0)
                sums = np.einsum("ric->rc", E)
                sums[:, ~renorm] = f[:, None]
                bad = ~(sums / f[:, None] > 0)
                if bad.any():  # uniform shares, as _finalize_shares gives
                    rows, cols = np.nonzero(bad)
                    E[rows, :, cols] = (f[rows] / n)[:, None]
                    sums[bad] = f[rows]
                E *= (total[a:b, None] / sums)[:, None, :]
            E -= Y[a:b, :, None]
            if all(uniform[s] for s in sets):
                sq = np.einsum("ric,ric->ic", E, E)
                for s in sets:
                    out[s] += row_weights[s, a] * sq
            else:
                np.square(E, out=E)
                out += (row_weights[:, a:b] @ E.reshape(b - a, -1)).reshape(out.shape)
    return out


def _proportions(W):
    """Proportions S (N, n, p) (zero at invalid steps), mask (N, p), newest valid (N, n)."""
    N, n, p = W.shape
    M, valid = _totals(W)
    S = np.where(valid[:, None, :], W / np.where(valid, M, 1.0)[:, None, :], 0.0)
    has_valid = valid.any(axis=1)
    newest = p - 1 - np.argmax(valid[:, ::-1], axis=1)
    s_last = np.full((N, n), 1.0 / n)
    rows = np.nonzero(has_valid)[0]
    s_last[rows] = S[rows, :, newest[rows]]
    return S, valid, s_last


# statsmodels' coint treats R^2 >= 1 - 100 sqrt(eps) as "perfectly collinear" (p-value 0)
_COLLINEAR_R2 = 1.0 - 100.0 * np.sqrt(np.finfo(np.float64).eps)
# a refinement sweep that moves the shares by less than this (L1, relative) has converged
_STEP_TOL = 1e-12


def _coint_pvalues(e, S):
    """p-values of ``coint(e, S[:, k], trend="c", maxlag=0, autolag=None)`` for every column.

    The augmented Engle-Granger test of statsmodels with no augmentation lag, computed here in
    closed form so that it raises no warning (statsmodels' ``CollinearityWarning`` would reach
    the user from worker threads): OLS of ``e`` on ``[1, S[:, k]]``; if its R^2 is at least
    ``1 - 100 sqrt(eps)`` (or undefined) the p-value is 0, as in statsmodels; otherwise the
    t-statistic of ``gamma`` in ``diff(r) = gamma r[:-1] + u`` on the residuals ``r`` (no
    intercept) goes through MacKinnon's p-value surface (``N=2``, constant). ``nan`` where the
    test is undefined.
    """
    from statsmodels.tsa.adfvalues import mackinnonp

    n = e.shape[0]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ec = e - e.mean()
        sc = S - S.mean(axis=0)
        sxx = np.einsum("ik,ik->k", sc, sc)
        b = np.where(sxx > 0, (sc.T @ ec) / np.where(sxx > 0, sxx, 1.0), 0.0)
        r = ec[:, None] - sc * b
        r2 = 1.0 - np.einsum("ik,ik->k", r, r) / (ec @ ec)
        lag, dr = r[:-1], np.diff(r, axis=0)
        lxx = np.einsum("ik,ik->k", lag, lag)
        gamma = np.einsum("ik,ik->k", lag, dr) / lxx
        u = dr - lag * gamma
        sigma2 = np.einsum("ik,ik->k", u, u) / (n - 2)
        tstat = gamma / np.sqrt(sigma2 / lxx)
    pvalues = np.array([mackinnonp(t, regression="c", N=2) if np.isfinite(t)
                        else (0.0 if t == -np.inf else np.nan) for t in tstat])
    pvalues[~(r2 < _COLLINEAR_R2)] = 0.0
    return pvalues


def _fixed_point(S, valid, damping):
    """Fixed point of the refinement from proportions: weights (1-lam)^(p-tau) on valid steps."""
    N, n, p = S.shape
    weights = np.power(1.0 - damping, np.arange(p - 1, -1, -1, dtype=np.float64))  # 0**0 = 1
    w = np.where(valid, weights[None, :], 0.0)
    denom = w.sum(axis=1)
    ok = denom > 0
    e = np.full((N, n), 1.0 / n)
    e[ok] = np.einsum("rip,rp->ri", S[ok], w[ok]) / denom[ok, None]
    return e


# row status of the iterative stops
_MET, _MAX_ITER, _NOT_COINTEGRATED = 0, 1, 2


def _refine_shares(S, valid, s_last, e0, damping, max_iter, stop=None, tol=None):
    """The paper's iterative refinement (Algorithm 1), vectorised over rows.

    Returns the un-finalised shares (N, n), the sweeps run per row and each row's status:
    ``_MET``, ``_MAX_ITER`` (the rule was not met within ``max_iter`` sweeps: the shares are
    the last iterate) or ``_NOT_COINTEGRATED`` (``stop="cointegration"``: the iteration
    converged but its fixed point fails the test). ``stop=None`` runs all ``max_iter`` sweeps.

    ``stop="cointegration"`` means converged *and* cointegrated: a row stops once a sweep
    moves its shares by less than ``_STEP_TOL`` (L1, relative); its shares are then the exact
    fixed point, tested with :func:`_coint_pvalues` (p-value <= ``tol`` at every valid step).
    The paper's rule alone fires at the first sweep: one sweep's iterate is affine in the
    window's proportions, so its p-value is about 0 whatever the window.
    """
    N, n, p = S.shape
    lam = float(damping)
    e = np.array(e0, dtype=np.float64, copy=True)
    lvec = np.ones((N, n))
    n_iter = np.zeros(N, dtype=np.int64)
    status = np.full(N, _MAX_ITER, dtype=np.int8)
    active = np.arange(N)
    for sweep in range(1, max_iter + 1):
        ea, la = e[active], lvec[active]
        Sa, Va = S[active], valid[active]
        previous = ea
        for tau in range(p):
            upd = lam * (ea - Sa[:, :, tau]) + (1.0 - lam) * la
            la = np.where(Va[:, tau, None], upd, (1.0 - lam) * la)
        ea = ea - lam * la
        e[active], lvec[active], n_iter[active] = ea, la, sweep
        if stop is None:
            continue
        no_info = ~Va.any(axis=1)
        if stop == "ted":
            dist = np.linalg.norm(s_last[active] - ea, axis=1)
            done = (np.sqrt(dist / np.sqrt(2.0)) < tol) | no_info
            status[active[done]] = _MET
        else:  # cointegration: converged and cointegrated
            step = np.abs(ea - previous).sum(axis=1)
            done = (step <= _STEP_TOL * np.maximum(1.0, np.abs(ea).sum(axis=1))) | no_info
            rows = active[done]
            e[rows] = _fixed_point(S[rows], valid[rows], lam)
            for r in rows:
                pvalues = _coint_pvalues(e[r], S[r][:, valid[r]])
                ok = bool(np.all(np.isfinite(pvalues) & (pvalues <= tol)))
                status[r] = _MET if ok else _NOT_COINTEGRATED
        active = active[~done]
        if active.size == 0:
            break
    return e, n_iter, status


def _finalize_shares(e, W, nonneg=None):
    """Clip at 0 when the window has no negative value; renormalise (uniform if sum <= 0).

    ``nonneg`` (N,) may give the windows without a negative value, computed once by a caller
    that finalises many candidates of the same windows.
    """
    n = e.shape[1]
    if nonneg is None:
        nonneg = ~(W < 0).any(axis=(1, 2))
    e = np.where(nonneg[:, None], np.clip(e, 0.0, None), e)
    total = e.sum(axis=1)
    ok = total > 0
    out = np.full_like(e, 1.0 / n)
    out[ok] = e[ok] / total[ok, None]
    return out


def _rescaled_windows(W, nonneg=False):
    """``W`` with each extreme row divided by a power of two (exact) so sums cannot overflow.

    Shares are invariant to the scale of a window; rows whose largest magnitude is outside
    ``[2**-500, 2**500]`` are brought to order one (the totals of values near 1e308 overflow,
    subnormal values lose digits). Other rows, and ``W`` itself when no row is extreme, are
    left untouched (no copy). ``ldexp`` scales the values by ``2**-exponent`` without forming
    that factor, so only the extreme rows are touched. ``nonneg=True`` (the caller knows that
    ``W`` has no negative value) skips the pass for the smallest values.
    """
    flat = W.reshape(W.shape[0], -1)
    if not flat.shape[1]:
        big = np.zeros(0)
    elif nonneg:
        big = flat.max(axis=1)
    else:
        big = np.maximum(flat.max(axis=1), -flat.min(axis=1))
    extreme = (big > 0) & ((big > 2.0**500) | (big < 2.0**-500))
    if not extreme.any():
        return W
    W = W.copy()
    _, exponent = np.frexp(big[extreme])
    # ldexp scales by 2**-exponent without forming it (2**1024 and 2**1074 overflow)
    W[extreme] = np.ldexp(W[extreme], -exponent[:, None, None])
    return W


def _chunk_shares(W, init, attributes, damping, max_iter, stop, tol):
    """Iterative shares of a block of windows: (shares, sweeps, status) per row."""
    S, valid, s_last = _proportions(W)
    if init == "uniform":
        e0 = np.full(s_last.shape, 1.0 / W.shape[1])
    elif init == "zeros":
        e0 = np.zeros(s_last.shape)
    else:
        e0 = _attribute_init(attributes, s_last)
    e, n_iter, status = _refine_shares(S, valid, s_last, e0, damping, max_iter, stop, tol)
    return _finalize_shares(e, W), n_iter, status


def _normalised_attributes(alpha):
    """alpha' = (alpha - mean) / (max - min) per attribute over systems, constant ones dropped."""
    span = alpha.max(axis=0) - alpha.min(axis=0)
    keep = span > 0
    return (alpha[:, keep] - alpha[:, keep].mean(axis=0)) / span[keep]


def _attribute_init(attributes, s_last):
    """e0_i = 1/n + (1/m') sum_k psi_k alpha'_{i,k}, psi = min-norm LS of s_last on alpha'."""
    N, n = s_last.shape
    e0 = np.full((N, n), 1.0 / n)
    if attributes.ndim == 2:
        A = _normalised_attributes(attributes)
        if A.shape[1]:
            psi = np.linalg.pinv(A) @ s_last.T  # (m', N)
            e0 += (A @ psi).T / A.shape[1]
        return e0
    for r in range(N):
        A = _normalised_attributes(attributes[r])
        if A.shape[1]:
            psi = np.linalg.lstsq(A, s_last[r], rcond=None)[0]
            e0[r] += A @ psi / A.shape[1]
    return e0
