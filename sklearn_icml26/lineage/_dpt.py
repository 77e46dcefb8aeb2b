"""A diffusion-pseudotime recipe (the benchmark's anchor when scanpy is not installed).

kNN (k, self included) on the input; sigma_i = distance to the k-th neighbour;
W_ij = exp(-d_ij**2 / (sigma_i sigma_j)) on kNN pairs, max-symmetrised, zero diagonal;
W~ = Q^-1 W Q^-1 (q = row sums of W); S = D^-1/2 W~ D^-1/2 (d = row sums of W~); the top
``n_comps`` eigenpairs of S without the ones at 1; psi = D^-1/2 v with unit columns;
pt(i) = sqrt(sum_l (lambda_l / (1 - lambda_l))**2 (psi_l(i) - psi_l(root))**2).
"""

import numpy as np
from scipy.sparse import csr_matrix, diags
from scipy.sparse.linalg import eigsh
from sklearn.neighbors import NearestNeighbors

__all__ = ["diffusion_pseudotime"]


def diffusion_pseudotime(X, root, n_neighbors=15, n_comps=15):
    """Diffusion pseudotime of every row of ``X`` from row ``root`` (private helper)."""
    X = np.asarray(X, dtype=float)
    n = len(X)
    k = min(n_neighbors, n)
    dist, idx = NearestNeighbors(n_neighbors=k).fit(X).kneighbors(X)
    sigma = np.maximum(dist[:, -1], 1e-12)
    rows = np.repeat(np.arange(n), k)
    w = np.exp(-dist.ravel() ** 2 / (sigma[rows] * sigma[idx.ravel()]))
    W = csr_matrix((w, (rows, idx.ravel())), shape=(n, n))
    W = W.maximum(W.T).tolil()
    W.setdiag(0)
    W = W.tocsr()
    q = np.asarray(W.sum(axis=1)).ravel()
    Wt = diags(1 / q) @ W @ diags(1 / q)
    d = np.asarray(Wt.sum(axis=1)).ravel()
    S = diags(d**-0.5) @ Wt @ diags(d**-0.5)
    n_eig = min(n_comps, n - 2)
    vals, vecs = eigsh(S, k=n_eig, which="LA", v0=np.ones(n) / np.sqrt(n))
    order = np.argsort(-vals)
    vals, vecs = vals[order], vecs[:, order]
    keep = vals < 1 - 1e-8
    vals, vecs = vals[keep], vecs[:, keep]
    psi = vecs * (d**-0.5)[:, None]
    psi /= np.linalg.norm(psi, axis=0, keepdims=True)
    weights = (vals / (1 - vals)) ** 2
    return np.sqrt(((psi - psi[root]) ** 2 * weights).sum(axis=1))
