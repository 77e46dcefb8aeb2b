"""Hubness measures of a query-by-index dissimilarity matrix (k-occurrence and its spread).

A *hub* is an indexed point that turns up among the k nearest neighbours of many more queries
than average; in high dimensions a few hubs crowd out the rest (Radovanović, Nanopoulos,
Ivanović, JMLR 11, 2010). The measures below summarise the k-occurrence distribution
``N_k(j) = #{queries with j among their k nearest}``.
"""

from numbers import Integral, Real

import numpy as np
from scipy import stats

from .._compat import Interval, validate_params

__all__ = ["hubness_measures", "k_occurrence"]


def _check_dissimilarity(dissimilarity, k):
    D = np.asarray(dissimilarity, dtype=np.float64)
    if D.ndim != 2:
        raise ValueError(f"dissimilarity must be a 2-D array (n_queries, n_index); got shape "
                         f"{D.shape}")
    if D.shape[0] == 0 or D.shape[1] == 0:
        raise ValueError(f"dissimilarity must have at least one query and one indexed point; "
                         f"got shape {D.shape}")
    if np.isnan(D).any():
        raise ValueError("dissimilarity contains NaN; use +inf to exclude a pair (self-pairs)")
    if k > D.shape[1]:
        raise ValueError(f"k={k} exceeds the number of indexed points (dissimilarity has "
                         f"{D.shape[1]} columns)")
    return D


def _top_k(D, k):
    """Indices of the k smallest entries of each row; ties go to the lower column index."""
    return np.argsort(D, axis=1, kind="stable")[:, :k]


@validate_params(
    {"dissimilarity": ["array-like"], "k": [Interval(Integral, 1, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def k_occurrence(dissimilarity, k):
    """How often each indexed point is among the k nearest neighbours of a query.

    Parameters
    ----------
    dissimilarity : array-like of shape (n_queries, n_index)
        Dissimilarity of every query to every indexed point (smaller = closer). Pairs to
        exclude (a point and itself when queries are the index) are ``+inf``.
    k : int
        Neighbourhood size, at most ``n_index``.

    Returns
    -------
    n_k : ndarray of shape (n_index,), dtype int64
        ``N_k(j)``, the number of queries with ``j`` among their ``k`` smallest
        dissimilarities; ties go to the lower index. ``n_k.sum() == k * n_queries``.

    Raises
    ------
    ValueError
        If ``dissimilarity`` is not 2-D, is empty or holds NaN, or ``k > n_index``.

    References
    ----------
    .. [1] Radovanović, Nanopoulos, Ivanović. "Hubs in space: popular nearest neighbors in
       high-dimensional data", JMLR 11 (2010), 2487-2531.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.metrics import k_occurrence
    >>> D = np.array([[0.1, 0.2, 0.9], [0.1, 0.8, 0.3]])
    >>> k_occurrence(D, k=1)
    array([2, 0, 0])
    """
    D = _check_dissimilarity(dissimilarity, k)
    return np.bincount(_top_k(D, k).ravel(), minlength=D.shape[1]).astype(np.int64)


@validate_params(
    {
        "dissimilarity": ["array-like"],
        "k": [Interval(Integral, 1, None, closed="left")],
        "hub_size": [Interval(Real, 0, None, closed="neither")],
        "relative": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def hubness_measures(dissimilarity, k=10, *, hub_size=2.0, relative=True):
    """Hubness of a query-by-index dissimilarity: k-skewness, hub and antihub occurrence, ...

    With ``N_k`` the k-occurrence (:func:`k_occurrence`) over ``n_index`` points and
    ``n_queries`` queries, and ``mean = k * n_queries / n_index`` its mean:

    - ``k_skewness``: the sample skewness of ``N_k`` (biased moment estimator, as
      ``scipy.stats.skew(bias=True)``); 0 for a constant ``N_k``;
    - ``hub_occurrence``: the share of all neighbour slots taken by hubs,
      ``sum(N_k[hubs]) / (k * n_queries)``, hubs being ``N_k >= hub_size * mean``
      (``relative=True``) or ``N_k >= hub_size * k`` (``relative=False``, the threshold of
      scikit-hubness, which assumes as many queries as indexed points);
    - ``antihub_occurrence``: the share of indexed points never retrieved (``N_k == 0``);
    - ``robinhood``: ``0.5 * sum|N_k - mean| / sum(N_k)``, the share of occurrences to move
      to make ``N_k`` flat;
    - ``gini``: ``sum_a sum_b |N_k(a) - N_k(b)| / (2 * n_index * sum(N_k))``.

    Parameters
    ----------
    dissimilarity : array-like of shape (n_queries, n_index)
        Dissimilarity of every query to every indexed point (smaller = closer); ``+inf``
        excludes a pair.
    k : int, default=10
        Neighbourhood size, at most ``n_index``.
    hub_size : float, default=2.0
        Hub threshold ``h`` (> 0).
    relative : bool, default=True
        Threshold relative to the mean k-occurrence (``h * k * n_queries / n_index``) instead
        of ``h * k``.

    Returns
    -------
    measures : dict
        ``k_skewness``, ``hub_occurrence``, ``antihub_occurrence``, ``robinhood``, ``gini``
        (floats) and ``k_occurrence`` (ndarray of shape (n_index,)).

    Raises
    ------
    ValueError
        If ``dissimilarity`` is not 2-D, is empty or holds NaN, or ``k > n_index``.

    References
    ----------
    .. [1] Radovanović, Nanopoulos, Ivanović. "Hubs in space: popular nearest neighbors in
       high-dimensional data", JMLR 11 (2010), 2487-2531.
    .. [2] Feldbauer, Flexer. "A comprehensive empirical comparison of hubness reduction in
       high-dimensional spaces", Knowledge and Information Systems 59 (2019), 137-166.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.metrics import hubness_measures
    >>> D = np.array([[0.1, 0.2, 0.9], [0.1, 0.8, 0.3]])
    >>> m = hubness_measures(D, k=1)
    >>> m["k_occurrence"], round(m["hub_occurrence"], 3), round(m["antihub_occurrence"], 3)
    (array([2, 0, 0]), 1.0, 0.667)
    """
    D = _check_dissimilarity(dissimilarity, k)
    n_q, n_index = D.shape
    n_k = k_occurrence(D, k)
    total = float(n_k.sum())  # = k * n_q
    mean = total / n_index
    threshold = hub_size * (mean if relative else k)
    hubs = n_k >= threshold
    if np.ptp(n_k) == 0:
        skew = 0.0
    else:
        skew = float(stats.skew(n_k.astype(np.float64), bias=True))
    sorted_nk = np.sort(n_k).astype(np.float64)
    # sum_a sum_b |x_a - x_b| = 2 * sum_i (2 i - n + 1) x_(i) over the sorted values
    ranks = 2 * np.arange(n_index) - n_index + 1
    gini = float(2 * np.dot(ranks, sorted_nk) / (2 * n_index * total))
    return {
        "k_skewness": skew,
        "hub_occurrence": float(n_k[hubs].sum() / total),
        "antihub_occurrence": float(np.mean(n_k == 0)),
        "robinhood": float(0.5 * np.abs(n_k - mean).sum() / total),
        "gini": gini,
        "k_occurrence": n_k,
    }
