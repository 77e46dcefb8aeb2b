"""Statistics of the safety neurons: Welch contrasts, permutation p-values, BH-FDR, overlaps."""

import numpy as np
from scipy import stats

__all__ = ["benjamini_hochberg", "overlap_test"]


def welch(A, y):
    """Means, contrast, Welch standard error and t of each column of ``A`` between y=1 and y=0.

    A column constant in both groups has t = 0 when the means agree, else +-inf.
    """
    A = np.asarray(A, dtype=np.float64)
    y = np.asarray(y, dtype=bool)
    a1, a0 = A[y], A[~y]
    m1, m0 = a1.mean(axis=0), a0.mean(axis=0)
    v1 = a1.var(axis=0, ddof=1) if len(a1) > 1 else np.zeros(A.shape[1])
    v0 = a0.var(axis=0, ddof=1) if len(a0) > 1 else np.zeros(A.shape[1])
    d = m1 - m0
    se = np.sqrt(v1 / len(a1) + v0 / len(a0))
    return m1, m0, d, se, _ratio(d, se)


def _ratio(d, se):
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, d / np.where(se > 0, se, 1.0), np.sign(d) * np.inf)
    return np.where((se == 0) & (d == 0), 0.0, t)


def _batch_statistic(A, A2, Y, statistic):
    """Statistic of every column for each row of the label matrix Y (B, n) of 0/1."""
    n1 = Y.sum(axis=1, keepdims=True)
    n0 = Y.shape[1] - n1
    s1, q1 = Y @ A, Y @ A2
    tot, totq = A.sum(axis=0), A2.sum(axis=0)
    s0, q0 = tot - s1, totq - q1
    m1, m0 = s1 / n1, s0 / n0
    d = m1 - m0
    if statistic == "difference":
        return d
    v1 = np.maximum(q1 - n1 * m1**2, 0) / np.maximum(n1 - 1, 1)
    v0 = np.maximum(q0 - n0 * m0**2, 0) / np.maximum(n0 - 1, 1)
    return _ratio(d, np.sqrt(v1 / n1 + v0 / n0))


def permutation_pvalues(A, y, observed, *, statistic, null, two_sided, n_permutations, rng,
                        chunk=16):
    """Permutation p-values of each column's statistic (labels permuted within the rows of A).

    ``null="per_neuron"``: ``p_j = (1 + #{b: T_bj >= T_j}) / (B + 1)``. ``null="pooled"``: the
    ``B * n_neurons`` permuted statistics of all columns form one null distribution
    (Storey and Tibshirani's pooled permutation null), ``p_j = (1 + #{T_bk >= T_j}) /
    (B n + 1)``; valid when the columns' null distributions agree (a studentised statistic).
    """
    A = np.asarray(A, dtype=np.float64)
    A2 = A * A
    y = np.asarray(y, dtype=np.float64)
    obs = np.abs(observed) if two_sided else observed
    counts = np.zeros(A.shape[1])
    pooled = []
    done = 0
    while done < n_permutations:
        b = min(chunk, n_permutations - done)
        Y = np.stack([rng.permutation(y) for _ in range(b)])
        T = _batch_statistic(A, A2, Y, statistic)
        T = np.abs(T) if two_sided else T
        if null == "per_neuron":
            counts += (T >= obs[None, :]).sum(axis=0)
        else:
            pooled.append(T.astype(np.float32).ravel())
        done += b
    if null == "per_neuron":
        return (1.0 + counts) / (n_permutations + 1.0)
    pooled = np.sort(np.concatenate(pooled))
    # number of pooled null values >= each observed value (float32 pool, compared as float32)
    ge = pooled.size - np.searchsorted(pooled, obs.astype(np.float32), side="left")
    return (1.0 + ge) / (pooled.size + 1.0)


def benjamini_hochberg(pvalues, alpha=0.05):
    """Indices rejected by the Benjamini-Hochberg step-up procedure at FDR level ``alpha``.

    Parameters
    ----------
    pvalues : array-like of shape (m,)
        p-values.
    alpha : float, default=0.05
        False discovery rate.

    Returns
    -------
    rejected : ndarray of int
        Sorted indices ``i`` with ``p_i <= p_(k)``, ``k`` the largest rank with
        ``p_(k) <= alpha k / m``; empty when none.

    Examples
    --------
    >>> from sklearn_icml26.safety import benjamini_hochberg
    >>> benjamini_hochberg([0.001, 0.01, 0.03, 0.5], alpha=0.05).tolist()
    [0, 1, 2]
    """
    p = np.asarray(pvalues, dtype=np.float64).ravel()
    m = p.size
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(p, kind="stable")
    ok = p[order] <= alpha * np.arange(1, m + 1) / m
    if not ok.any():
        return np.zeros(0, dtype=np.int64)
    k = int(np.nonzero(ok)[0].max())
    return np.sort(order[: k + 1]).astype(np.int64)


def _stratified_sf(observed, strata):
    """P(sum_l X_l >= observed), X_l ~ Hypergeom(N_l, a_l, b_l) independent (exact convolution)."""
    pmf = np.ones(1)
    for N, a, b in strata:
        lo, hi = max(0, a + b - N), min(a, b)
        k = np.arange(0, hi + 1)
        layer = np.where(k >= lo, stats.hypergeom.pmf(k, N, a, b), 0.0)
        pmf = np.convolve(pmf, layer)
    return float(np.clip(pmf[observed:].sum(), 0.0, 1.0)) if observed < pmf.size else 0.0


def overlap_test(set_a, set_b, n_neurons, layer_of=None):
    """Is the overlap of two neuron sets larger than chance?

    Under the null hypothesis that ``set_b`` is a uniformly random subset of its size (given
    ``set_a``), ``|A & B|`` is hypergeometric: ``P(X >= |A & B|)`` with ``X ~
    Hypergeom(N, |A|, |B|)``, expectation ``|A| |B| / N``. With ``layer_of`` the test is also
    run stratified by layer (``B`` random within each layer with its per-layer size), which does
    not credit two sets for merely sitting in the same layers.

    Parameters
    ----------
    set_a, set_b : array-like of int
        Neuron indices.
    n_neurons : int
        Number of neurons ``N`` the sets are drawn from.
    layer_of : array-like of int of shape (n_neurons,), default=None
        Layer of each neuron.

    Returns
    -------
    result : dict
        ``n_neurons``, ``size_a``, ``size_b``, ``observed``, ``expected``, ``ratio``
        (observed / expected, NaN when expected is 0), ``pvalue``; with ``layer_of`` also
        ``expected_layer_stratified`` and ``pvalue_layer_stratified``.

    Examples
    --------
    >>> from sklearn_icml26.safety import overlap_test
    >>> r = overlap_test([0, 1, 2, 3], [0, 1, 2, 9], n_neurons=100)
    >>> r["observed"], round(r["expected"], 2), r["pvalue"] < 1e-4
    (3, 0.16, True)
    """
    a = np.unique(np.asarray(set_a, dtype=np.int64))
    b = np.unique(np.asarray(set_b, dtype=np.int64))
    N = int(n_neurons)
    obs = int(np.intersect1d(a, b).size)
    exp = a.size * b.size / N if N else 0.0
    out = {"n_neurons": N, "size_a": int(a.size), "size_b": int(b.size), "observed": obs,
           "expected": float(exp), "ratio": float(obs / exp) if exp > 0 else float("nan"),
           "pvalue": float(stats.hypergeom.sf(obs - 1, N, a.size, b.size)) if N else 1.0}
    if layer_of is not None:
        layer_of = np.asarray(layer_of)
        strata, e = [], 0.0
        for layer in np.unique(layer_of):
            Nl = int((layer_of == layer).sum())
            al = int((layer_of[a] == layer).sum())
            bl = int((layer_of[b] == layer).sum())
            strata.append((Nl, al, bl))
            e += al * bl / Nl
        out["expected_layer_stratified"] = float(e)
        out["pvalue_layer_stratified"] = _stratified_sf(obs, strata)
    return out
