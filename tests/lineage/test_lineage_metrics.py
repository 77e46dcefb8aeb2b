"""Known answers for the lineage metrics (hand-built trees, brute force, digits + Ward)."""

import itertools

import numpy as np
import pytest
from sklearn.cluster import AgglomerativeClustering
from sklearn.datasets import load_digits

from sklearn_icml26.metrics import (
    cluster_accuracy,
    dendrogram_from_children,
    dendrogram_purity,
    leaf_purity,
    pseudotime_correlation,
)


@pytest.mark.parametrize(
    "nodes, expected",
    [([1, 1, 2, 2], 1.0), ([1, 2, 1, 2], 0.5)],
)
def test_dendrogram_purity_two_leaves(nodes, expected):
    assert dendrogram_purity([0, 0, 1, 1], [-1, 0, 0], nodes) == pytest.approx(expected,
                                                                              abs=1e-12)


def test_dendrogram_purity_one_node_tree():
    assert dendrogram_purity([0, 0, 1, 1], [-1], [0, 0, 0, 0]) == pytest.approx(0.5, abs=1e-12)


def test_dendrogram_purity_three_levels_with_and_without_self_pairs():
    parent = [-1, 0, 0, 1, 1]
    y = [0, 0, 0, 1, 1, 2]
    nodes = [3, 3, 4, 4, 4, 2]
    assert dendrogram_purity(y, parent, nodes) == pytest.approx(0.7533333333333333, abs=1e-12)
    assert dendrogram_purity(y, parent, nodes, self_pairs=False) == pytest.approx(
        0.7166666666666667, abs=1e-12)


def _brute_force(y, parent, nodes, self_pairs):
    parent = np.asarray(parent)

    def ancestors(v):
        out = [v]
        while parent[out[-1]] >= 0:
            out.append(parent[out[-1]])
        return out

    anc = [ancestors(v) for v in range(len(parent))]
    under = {v: [i for i in range(len(y)) if v in anc[nodes[i]]] for v in range(len(parent))}
    values = []
    for i, j in itertools.combinations_with_replacement(range(len(y)), 2):
        if y[i] != y[j] or (i == j and not self_pairs):
            continue
        lca = next(v for v in anc[nodes[i]] if v in anc[nodes[j]])
        members = under[lca]
        values.append(np.mean([y[k] == y[i] for k in members]))
    return np.mean(values)


@pytest.mark.parametrize("seed", range(20))
def test_dendrogram_purity_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n_nodes = int(rng.integers(1, 15))
    parent = np.array([-1] + [int(rng.integers(0, v)) for v in range(1, n_nodes)])
    n = int(rng.integers(2, 41))
    y = rng.integers(0, 4, n)
    nodes = rng.integers(0, n_nodes, n)
    for self_pairs in (True, False):
        if not self_pairs and np.bincount(y).max() < 2:
            continue
        assert dendrogram_purity(y, parent, nodes, self_pairs=self_pairs) == pytest.approx(
            _brute_force(y, parent, nodes, self_pairs), abs=1e-12)


def test_dendrogram_from_children_on_digits_ward():
    X, y = load_digits(return_X_y=True)
    ward = AgglomerativeClustering(linkage="ward", n_clusters=10, compute_full_tree=True).fit(X)
    full = dendrogram_from_children(ward.children_, len(X))
    assert dendrogram_purity(y, *full) == pytest.approx(0.8530, abs=1e-3)
    assert dendrogram_purity(y, *full, self_pairs=False) == pytest.approx(0.8514, abs=1e-3)
    parent, nodes = dendrogram_from_children(ward.children_, len(X), n_clusters=10)
    assert len(parent) == 19 and len(np.unique(nodes)) == 10
    assert dendrogram_purity(y, parent, nodes) == pytest.approx(0.7739, abs=1e-3)
    # the 10 leaves are Ward's 10 clusters
    assert cluster_accuracy(ward.labels_, nodes) == 1.0


def test_leaf_purity_and_cluster_accuracy():
    assert leaf_purity([0, 0, 0, 1, 1, 2], [3, 3, 4, 4, 4, 2]) == pytest.approx(5 / 6)
    assert cluster_accuracy([0, 0, 1, 1, 2, 2], [1, 1, 0, 0, 2, 2]) == 1.0
    assert cluster_accuracy([0, 0, 1, 1, 2, 2], [0, 0, 0, 1, 1, 1]) == pytest.approx(2 / 3)
    # more clusters than classes: unmatched clusters are errors
    assert cluster_accuracy([0, 0, 1, 1], [0, 1, 2, 3]) == pytest.approx(0.5)


def test_pseudotime_correlation():
    t = np.linspace(0, 1, 30)
    assert pseudotime_correlation(t**3, t) == pytest.approx(1.0)
    assert pseudotime_correlation(-t, t, method="kendall") == pytest.approx(-1.0)
    mask = t < 0.5
    noisy = np.where(mask, t, 1 - t)
    assert pseudotime_correlation(noisy, t, mask=mask) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="method must be 'spearman' or 'kendall'"):
        pseudotime_correlation(t, t, method="pearson")


def test_metric_input_errors():
    with pytest.raises(ValueError, match="exactly one root"):
        dendrogram_purity([0, 1], [0, 0], [0, 1])
    with pytest.raises(ValueError, match=r"node_of_sample must be an integer array of shape "
                                         r"\(2,\)"):
        dendrogram_purity([0, 1], [-1, 0], [0, 1, 1])
    with pytest.raises(ValueError, match=r"children must have shape \(3, 2\)"):
        dendrogram_from_children(np.zeros((2, 2)), 4)
