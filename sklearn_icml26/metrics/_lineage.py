"""Metrics for hierarchies and lineages: dendrogram purity, leaf purity, cluster accuracy,
pseudotime agreement."""

import warnings

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.stats import kendalltau, spearmanr

__all__ = ["cluster_accuracy", "dendrogram_from_children", "dendrogram_purity", "leaf_purity",
           "pseudotime_correlation"]


def _encode(y, name):
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {y.shape}.")
    if len(y) == 0:
        raise ValueError(f"{name} must hold at least one sample; got an empty array.")
    if y.dtype.kind in "fc" and np.isnan(y).any():
        # np.unique would make NaN one more class (several, for NumPy < 2)
        raise ValueError(f"{name} holds {int(np.isnan(y).sum())} NaN label(s); labels must be "
                         "defined for every sample (drop or encode the unlabelled ones).")
    _, codes = np.unique(y, return_inverse=True)
    return codes.ravel()


def _encode_pair(y_true, labels):
    """Integer codes of two labelings of the same samples (lengths checked first)."""
    n_true, n_labels = np.shape(y_true)[:1], np.shape(labels)[:1]
    if n_true != n_labels:
        raise ValueError(f"y_true and labels must have the same length; got "
                         f"{n_true[0] if n_true else 'a scalar'} and "
                         f"{n_labels[0] if n_labels else 'a scalar'}.")
    return _encode(y_true, "y_true"), _encode(labels, "labels")


def _check_tree(parent, node_of_sample, n_samples):
    parent = np.asarray(parent)
    node_of_sample = np.asarray(node_of_sample)
    if parent.ndim != 1 or not np.issubdtype(parent.dtype, np.integer):
        raise ValueError(f"parent must be a 1-D integer array; got shape {parent.shape} and "
                         f"dtype {parent.dtype}.")
    n_nodes = len(parent)
    if np.sum(parent < 0) != 1 or np.any(parent >= n_nodes):
        raise ValueError("parent must hold exactly one root (-1) and node ids in "
                         f"[0, {n_nodes}); got {np.sum(parent < 0)} roots.")
    if node_of_sample.shape != (n_samples,) or not np.issubdtype(node_of_sample.dtype,
                                                                 np.integer):
        raise ValueError(f"node_of_sample must be an integer array of shape ({n_samples},); "
                         f"got shape {node_of_sample.shape} and dtype {node_of_sample.dtype}.")
    if n_samples and (node_of_sample.min() < 0 or node_of_sample.max() >= n_nodes):
        raise ValueError(f"node_of_sample must hold node ids in [0, {n_nodes}).")
    return parent.astype(np.int64), node_of_sample.astype(np.int64)


def _topological_order(parent):
    """Nodes ordered so that every child comes before its parent."""
    n = len(parent)
    depth = np.full(n, -1, dtype=np.int64)
    for start in range(n):
        chain = []
        node = start
        while node >= 0 and depth[node] < 0:
            chain.append(node)
            node = parent[node]
            if len(chain) > n:
                raise ValueError("parent does not describe a tree (it has a cycle).")
        base = -1 if node < 0 else depth[node]
        for k, v in enumerate(reversed(chain), start=1):
            depth[v] = base + k
    return np.argsort(-depth, kind="stable")


def dendrogram_purity(y_true, parent, node_of_sample, *, self_pairs=True):
    """Dendrogram purity of a tree: how pure the subtree joining two same-class samples is.

    For every pair of samples of the same class, take the subtree of their lowest common
    ancestor and the share of that class among its samples; the purity is the mean over
    pairs. Following TreeVAE and HDTree, ``self_pairs=True`` counts unordered pairs with
    repetition (each sample also pairs with itself, its own node being the ancestor).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Class of each sample.
    parent : array-like of int of shape (n_nodes,)
        Parent of each node of the tree; -1 for the root.
    node_of_sample : array-like of int of shape (n_samples,)
        Node holding each sample (a leaf or an inner node).
    self_pairs : bool, default=True
        Count pairs of a sample with itself.

    Returns
    -------
    purity : float
        Dendrogram purity in [0, 1].

    Raises
    ------
    ValueError
        If ``y_true`` is empty or holds NaN, the tree is malformed or the shapes disagree.

    References
    ----------
    .. [1] Manduchi, L. et al. "Tree Variational Autoencoders", NeurIPS 2023,
       arXiv:2306.08984.
    .. [2] Kobren, A. et al. "A Hierarchical Algorithm for Extreme Clustering", KDD 2017.

    Examples
    --------
    >>> from sklearn_icml26.metrics import dendrogram_purity
    >>> dendrogram_purity([0, 0, 1, 1], [-1, 0, 0], [1, 1, 2, 2])
    1.0
    >>> dendrogram_purity([0, 0, 1, 1], [-1, 0, 0], [1, 2, 1, 2])
    0.5
    """
    y = _encode(y_true, "y_true")
    parent, node_of_sample = _check_tree(parent, node_of_sample, len(y))
    n_nodes, n_classes = len(parent), int(y.max()) + 1 if len(y) else 0
    counts = np.zeros((n_nodes, n_classes))
    np.add.at(counts, (node_of_sample, y), 1)
    for node in _topological_order(parent):
        if parent[node] >= 0:
            counts[parent[node]] += counts[node]

    def n_pairs(c):
        return c * (c + 1) / 2 if self_pairs else c * (c - 1) / 2

    # pairs whose lowest common ancestor is the node = pairs in its subtree minus its
    # children's subtrees
    child_pairs = np.zeros_like(counts)
    for node in range(n_nodes):
        if parent[node] >= 0:
            child_pairs[parent[node]] += n_pairs(counts[node])
    lca_pairs = n_pairs(counts) - child_pairs
    totals = counts.sum(axis=1, keepdims=True)
    share = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
    class_sizes = np.bincount(y, minlength=n_classes)
    denominator = n_pairs(class_sizes.astype(float)).sum()
    if denominator == 0:
        return 1.0
    return float((lca_pairs * share).sum() / denominator)


def dendrogram_from_children(children, n_samples, n_clusters=None):
    """Tree of a scikit-learn agglomerative clustering (``children_``), full or top-k.

    Parameters
    ----------
    children : array-like of int of shape (n_samples - 1, 2)
        Merges in order, as ``AgglomerativeClustering.children_``: node ``n_samples + i`` is
        the merge of ``children[i]``; nodes below ``n_samples`` are samples.
    n_samples : int
        Number of samples.
    n_clusters : int or None, default=None
        ``None`` keeps the full tree (one leaf per sample); an int keeps the last
        ``n_clusters - 1`` merges, whose ``n_clusters`` child subtrees become leaves that
        hold their samples.

    Returns
    -------
    parent : ndarray of shape (n_nodes,)
        Parent of each node, -1 for the root.
    node_of_sample : ndarray of shape (n_samples,)
        Node of each sample.

    Raises
    ------
    ValueError
        If ``children`` does not have shape (n_samples - 1, 2) or ``n_clusters`` is not in
        [1, n_samples].

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.metrics import dendrogram_from_children
    >>> parent, node = dendrogram_from_children(np.array([[0, 1], [2, 3], [4, 5]]), 4, 2)
    >>> parent.tolist(), node.tolist()
    ([-1, 0, 0], [1, 1, 2, 2])
    """
    children = np.asarray(children, dtype=np.int64)
    if children.shape != (n_samples - 1, 2):
        raise ValueError(f"children must have shape ({n_samples - 1}, 2); "
                         f"got {children.shape}.")
    n_nodes = 2 * n_samples - 1
    full_parent = np.full(n_nodes, -1, dtype=np.int64)
    for i, (a, b) in enumerate(children):
        full_parent[a] = full_parent[b] = n_samples + i
    if n_clusters is None:
        return full_parent, np.arange(n_samples, dtype=np.int64)
    if not 1 <= n_clusters <= n_samples:
        raise ValueError(f"n_clusters must be in [1, {n_samples}]; got {n_clusters}.")
    top = np.arange(n_nodes - (n_clusters - 1), n_nodes)  # the last merges
    is_top = np.zeros(n_nodes, dtype=bool)
    is_top[top] = True
    leaves = (np.setdiff1d(children[top - n_samples].ravel(), top) if n_clusters > 1
              else np.array([n_nodes - 1]))
    kept = np.concatenate([top, leaves]) if n_clusters > 1 else leaves
    order = sorted(top.tolist(), reverse=True) + sorted(leaves.tolist())
    new_id = {int(v): k for k, v in enumerate(order)}
    parent = np.full(len(kept), -1, dtype=np.int64)
    for v in kept:
        if full_parent[v] >= 0 and int(full_parent[v]) in new_id:
            parent[new_id[int(v)]] = new_id[int(full_parent[v])]
    # each sample goes to its ancestor among the leaves
    owner = np.full(n_nodes, -1, dtype=np.int64)
    for v in leaves:
        owner[v] = new_id[int(v)]
    for node in range(n_nodes - 1, -1, -1):  # parents have larger ids than children
        if owner[node] < 0 and full_parent[node] >= 0 and not is_top[full_parent[node]]:
            owner[node] = owner[full_parent[node]]
    return parent, owner[:n_samples]


def leaf_purity(y_true, labels):
    """Leaf purity: share of samples in the majority class of their leaf (cluster).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Class of each sample.
    labels : array-like of shape (n_samples,)
        Leaf or cluster of each sample.

    Returns
    -------
    purity : float
        ``sum over leaves of max_k n_(leaf, k) / n_samples``, in ``[1 / n_samples, 1]``;
        1 when every leaf holds one class. It is not symmetric: ``leaf_purity(labels,
        y_true)`` measures how whole each class stays (one class split over several leaves
        lowers it, a leaf holding two classes does not).

    Raises
    ------
    ValueError
        If ``y_true`` or ``labels`` is empty, not 1-D or holds NaN, or their lengths differ.

    Examples
    --------
    >>> from sklearn_icml26.metrics import leaf_purity
    >>> leaf_purity([0, 0, 1, 1], [0, 0, 0, 1])
    0.75
    """
    y, c = _encode_pair(y_true, labels)
    table = np.zeros((c.max() + 1, y.max() + 1))
    np.add.at(table, (c, y), 1)
    return float(table.max(axis=1).sum() / len(y))


def cluster_accuracy(y_true, labels):
    """Clustering accuracy: the best one-to-one matching of clusters to classes (Hungarian).

    Unequal numbers of clusters and classes are allowed; unmatched clusters count as errors.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Class of each sample.
    labels : array-like of shape (n_samples,)
        Cluster of each sample.

    Returns
    -------
    accuracy : float
        Share of samples whose cluster is matched to their class, in ``(0, 1]``; symmetric
        in ``y_true`` and ``labels`` and at most :func:`leaf_purity` either way.

    Raises
    ------
    ValueError
        If ``y_true`` or ``labels`` is empty, not 1-D or holds NaN, or their lengths differ.

    Examples
    --------
    >>> from sklearn_icml26.metrics import cluster_accuracy
    >>> cluster_accuracy([0, 0, 1, 1, 2, 2], [1, 1, 0, 0, 2, 2])
    1.0
    """
    y, c = _encode_pair(y_true, labels)
    table = np.zeros((c.max() + 1, y.max() + 1))
    np.add.at(table, (c, y), 1)
    rows, cols = linear_sum_assignment(-table)
    return float(table[rows, cols].sum() / len(y))


def pseudotime_correlation(pseudotime, reference, *, method="spearman", mask=None,
                           nan_policy="raise"):
    """Rank correlation between an inferred pseudotime and a reference time.

    Parameters
    ----------
    pseudotime : array-like of shape (n_samples,)
        Inferred pseudotime.
    reference : array-like of shape (n_samples,)
        Reference (true time, or another method's pseudotime).
    method : {"spearman", "kendall"}, default="spearman"
        Spearman's rho or Kendall's tau-b.
    mask : array-like of bool of shape (n_samples,), default=None
        Samples to compare (e.g. one lineage); ``None`` uses all.
    nan_policy : {"raise", "omit"}, default="raise"
        What to do with NaN in ``pseudotime`` or ``reference`` (among the masked samples):
        "raise" raises a ``ValueError`` naming the argument and the count; "omit" drops the
        samples where either is NaN, with a ``UserWarning`` that counts them. Infinite
        values are ranked as the largest or smallest.

    Returns
    -------
    correlation : float
        In [-1, 1]: 1 for the same order, -1 for the reversed order; symmetric in
        ``pseudotime`` and ``reference`` and unchanged by increasing transforms of either.
        NaN, with a ``UserWarning`` naming the argument, when ``pseudotime`` or
        ``reference`` is constant on the compared samples (no order to compare).

    Raises
    ------
    ValueError
        If ``method`` or ``nan_policy`` is unknown, the shapes disagree, ``pseudotime`` or
        ``reference`` holds NaN under ``nan_policy="raise"``, or fewer than 2 samples are
        compared.

    Examples
    --------
    >>> from sklearn_icml26.metrics import pseudotime_correlation
    >>> pseudotime_correlation([0.1, 0.2, 0.5], [1, 2, 3])
    1.0
    >>> pseudotime_correlation([0.1, 0.2, 0.5], [3, 2, 1], method="kendall")
    -1.0
    """
    pt = np.asarray(pseudotime, dtype=float).ravel()
    ref = np.asarray(reference, dtype=float).ravel()
    if pt.shape != ref.shape:
        raise ValueError(f"pseudotime and reference must have the same shape; got {pt.shape} "
                         f"and {ref.shape}.")
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != pt.shape:
            raise ValueError(f"mask must have shape {pt.shape}; got {mask.shape}.")
        pt, ref = pt[mask], ref[mask]
    if method not in ("spearman", "kendall"):
        raise ValueError(f"method must be 'spearman' or 'kendall'; got {method!r}.")
    if nan_policy not in ("raise", "omit"):
        raise ValueError(f"nan_policy must be 'raise' or 'omit'; got {nan_policy!r}.")
    nan_pt, nan_ref = np.isnan(pt), np.isnan(ref)
    if nan_policy == "raise":
        for name, bad in (("pseudotime", nan_pt), ("reference", nan_ref)):
            if bad.any():
                raise ValueError(
                    f"{name} holds {int(bad.sum())} NaN value(s) (first at compared sample "
                    f"{int(np.argmax(bad))}); drop them with mask=, or pass "
                    "nan_policy='omit'.")
    elif (nan_pt | nan_ref).any():
        drop = nan_pt | nan_ref
        warnings.warn(
            f"pseudotime_correlation: dropped {int(drop.sum())} of {len(pt)} samples where "
            f"pseudotime ({int(nan_pt.sum())}) or reference ({int(nan_ref.sum())}) is NaN "
            "(nan_policy='omit').", UserWarning, stacklevel=2)
        pt, ref = pt[~drop], ref[~drop]
    if len(pt) < 2:
        raise ValueError(f"pseudotime_correlation needs at least 2 compared samples; got "
                         f"{len(pt)}.")
    for name, values in (("pseudotime", pt), ("reference", ref)):
        if np.all(values == values[0]):
            warnings.warn(
                f"pseudotime_correlation: {name} is constant on the {len(pt)} compared "
                "samples, so the rank correlation is undefined; returning nan.",
                UserWarning, stacklevel=2)
            return float("nan")
    if method == "spearman":
        return float(spearmanr(pt, ref).statistic)
    return float(kendalltau(pt, ref).statistic)
