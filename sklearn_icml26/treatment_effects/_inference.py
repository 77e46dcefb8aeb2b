"""Inference pieces of the longitudinal adjuster: cluster-robust variances, the linear
projection of the conditional effect, and the statsmodels-style text summary.

The adjuster's estimates are means of influence values ``psi_i``. Without clusters the
standard error is ``sqrt(sum_i psi_i^2) / n``; with units grouped in ``G`` clusters it is
``sqrt(G / (G - 1) * sum_g (sum_{i in g} psi_i)^2) / n`` (the CR1 correction of statsmodels
and Stata for a mean). The conditional effect given baseline covariates is summarised by its
best linear projection, estimated by regressing the doubly robust scores on the covariates
(Semenova and Chernozhukov, arXiv:1702.06240), with a sandwich covariance (HC0, or CR1 with
clusters).
"""

import numpy as np
import pandas as pd

from ._baselines import _independent_columns


def _encode_groups(groups, n):
    """Integer cluster codes ``0..G-1`` of ``groups`` (one label per unit) and ``G``."""
    g = np.asarray(groups)
    if g.ndim != 1 or g.shape[0] != n:
        raise ValueError(
            f"groups must have shape (n_samples,)=({n},) (one cluster label per unit); got "
            f"shape {g.shape}"
        )
    if g.dtype.kind == "f" and np.isnan(g).any():
        raise ValueError("groups must not contain NaN: every unit needs a cluster label")
    if g.dtype.kind == "O" and any(v is None for v in g):
        raise ValueError("groups must not contain None: every unit needs a cluster label")
    _, codes = np.unique(g.astype(str) if g.dtype.kind == "O" else g, return_inverse=True)
    n_groups = int(codes.max()) + 1 if n else 0
    if n_groups < 2:
        raise ValueError(
            f"groups must hold at least 2 distinct clusters for cluster-robust standard "
            f"errors; got {n_groups}"
        )
    return codes.astype(np.int64), n_groups


def _cluster_sums(values, clusters, n_clusters):
    """Sum of ``values`` (n, ...) over the units of each cluster: (n_clusters, ...)."""
    out = np.zeros((n_clusters,) + values.shape[1:])
    np.add.at(out, clusters, values)
    return out


def _weights_column(weights, ndim):
    """``weights`` (n,) shaped to broadcast against an (n, ...) array of ``ndim`` dimensions."""
    return weights.reshape((-1,) + (1,) * (ndim - 1))


def _mean_std_err(psi, clusters=None, n_clusters=None, weights=None):
    """Standard error of ``mean_i`` of quantities with centred influence values ``psi``.

    ``psi`` has shape (n, ...); without clusters ``sqrt(sum_i psi_i^2) / n``, with clusters
    the CR1 cluster-robust ``sqrt(G / (G - 1) * sum_g S_g^2) / n`` of the cluster sums
    ``S_g``. With frequency ``weights`` (the weighted mean ``sum_i w_i phi_i / sum_i w_i``):
    ``sqrt(sum_i w_i psi_i^2) / sum_i w_i``, and cluster sums of ``w_i psi_i``, the values of
    the units repeated by their integer weights.
    """
    if weights is None:
        n = psi.shape[0]
        if clusters is None:
            return np.sqrt((psi**2).sum(axis=0)) / n
        sums = _cluster_sums(psi, clusters, n_clusters)
        return np.sqrt(n_clusters / (n_clusters - 1) * (sums**2).sum(axis=0)) / n
    w = _weights_column(weights, psi.ndim)
    total = weights.sum()
    if clusters is None:
        return np.sqrt((w * psi**2).sum(axis=0)) / total
    sums = _cluster_sums(w * psi, clusters, n_clusters)
    return np.sqrt(n_clusters / (n_clusters - 1) * (sums**2).sum(axis=0)) / total


def _effect_projection(H0, scores, clusters=None, n_clusters=None, weights=None):
    """Best linear projection of the conditional effect on ``[1, H0]`` and its covariance.

    ``scores`` (n, T) are the doubly robust effect scores ``phi^1_i(t) - phi^0_i(t)``, whose
    mean given ``H0`` is the conditional effect under the design's randomisation. Returns
    ``coef`` (T, 1 + p) (aliased columns, dropped in column order as R's ``lm`` does, get 0)
    and ``cov`` (T, 1 + p, 1 + p): HC0 sandwich, or CR1 cluster-robust with clusters
    (``G/(G-1) (N-1)/(N-K)``, statsmodels' ``cov_type="cluster"``). With frequency
    ``weights``: weighted least squares, the sandwich of the units repeated by their integer
    weights (``N = sum(w)``); units of weight 0 drop out.
    """
    n, p = H0.shape
    Z = np.column_stack([np.ones(n), H0])
    inv_root = None
    if weights is not None:  # WLS as OLS of the rows scaled by sqrt(w)
        root = np.sqrt(weights)
        Z, scores = Z * root[:, None], scores * root[:, None]
        n = float(weights.sum())
        inv_root = np.where(root > 0, 1.0 / np.where(root > 0, root, 1.0), 0.0)
    keep = _independent_columns(Z)
    Zk = Z[:, keep]
    q, r = np.linalg.qr(Zk)
    rows = np.linalg.solve(r, q.T)  # (Z'Z)^-1 Z' of the kept design, (k, n)
    coef_k = rows @ scores  # (k, T)
    resid = scores - Zk @ coef_k  # (n, T)
    k = Zk.shape[1]
    T = scores.shape[1]
    coef = np.zeros((T, p + 1))
    cov = np.zeros((T, p + 1, p + 1))
    coef[:, keep] = coef_k.T
    idx = np.ix_(keep, keep)
    for t in range(T):
        # (k, n): contributions row_i e_i; scaled rows give w_i a_i e_i, the sum over the
        # copies of a unit of weight w_i (cluster sums), whose HC0 square is w_i (a_i e_i)^2
        u = rows * resid[:, t][None, :]
        if clusters is None:
            if inv_root is not None:
                u = u * inv_root[None, :]
            meat = u @ u.T
        else:
            sums = _cluster_sums(u.T, clusters, n_clusters)  # (G, k)
            factor = n_clusters / (n_clusters - 1) * (n - 1) / max(n - k, 1)
            meat = factor * sums.T @ sums
        block = cov[t]
        block[idx] = meat
    return coef, cov


def _text_summary(title, info, table, anchors, notes):
    """A statsmodels-style text table (``statsmodels.iolib.summary2.Summary``)."""
    from statsmodels.iolib.summary2 import Summary

    out = Summary()
    out.add_title(title)
    out.add_dict(info, ncols=2)
    out.add_df(table, float_format="%.4f")
    if anchors is not None:
        out.add_df(anchors, float_format="%.4f")
    for note in notes:
        out.add_text(note)
    return out.as_text()


def _format_regime(codes):
    codes = [int(c) for c in codes]
    if len(set(codes)) == 1:
        return f"always {codes[0]}"
    return "".join(map(str, codes)) if max(codes) < 10 else " ".join(map(str, codes))


def _coefficient_frame(est, se, ci, band, alpha, z):
    low, high = f"[{alpha / 2:g}", f"{1 - alpha / 2:g}]"
    from scipy import stats

    return pd.DataFrame({
        "coef": est, "std err": se, "z": z, "P>|z|": 2 * stats.norm.sf(np.abs(z)),
        low: ci[:, 0], high: ci[:, 1], "band low": band[:, 0], "band high": band[:, 1],
    })
