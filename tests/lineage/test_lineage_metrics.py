"""Known answers for the lineage metrics (hand-built trees, brute force, digits + Ward)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
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


# -- edge cases (issue 13, item 11) --------------------------------------------------------


@pytest.mark.parametrize("metric", [leaf_purity, cluster_accuracy])
def test_empty_labelings_raise_naming_the_argument(metric):
    # before: NumPy's "zero-size array to reduction operation maximum" ValueError
    with pytest.raises(ValueError, match="y_true must hold at least one sample; got an empty"):
        metric([], [])
    with pytest.raises(ValueError, match="y_true and labels must have the same length; got 3 "
                                         "and 2"):
        metric([0, 1, 1], [0, 1])
    # NaN labels are not one more class (before: leaf_purity([0, nan, nan], [0, 1, 1]) = 1.0)
    with pytest.raises(ValueError, match=r"y_true holds 2 NaN label\(s\)"):
        metric([0.0, np.nan, np.nan], [0, 1, 1])
    with pytest.raises(ValueError, match=r"labels holds 1 NaN label\(s\)"):
        metric([0, 1, 1], [0.0, 1.0, np.nan])


def test_dendrogram_purity_of_no_samples_raises():
    # before: 1.0 (a perfect score for nothing)
    with pytest.raises(ValueError, match="y_true must hold at least one sample"):
        dendrogram_purity([], [-1], np.array([], dtype=np.int64))


def test_pseudotime_correlation_nan_policy():
    # before: nan, silently
    with pytest.raises(ValueError, match=r"pseudotime holds 1 NaN value\(s\) \(first at "
                                         r"compared sample 2\).*nan_policy='omit'"):
        pseudotime_correlation([0, 1, np.nan, 3], np.arange(4))
    with pytest.raises(ValueError, match=r"reference holds 2 NaN"):
        pseudotime_correlation(np.arange(4), [np.nan, 1, np.nan, 3])
    with pytest.warns(UserWarning, match=r"dropped 1 of 4 samples where pseudotime \(1\) or "
                                         r"reference \(0\) is NaN"):
        rho = pseudotime_correlation([0, 1, np.nan, 3], np.arange(4), nan_policy="omit")
    assert rho == pytest.approx(1.0)
    # NaN outside the mask is not compared
    assert pseudotime_correlation([0, 1, np.nan, 3], np.arange(4),
                                  mask=[True, True, False, True]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="nan_policy must be 'raise' or 'omit'; got 'drop'"):
        pseudotime_correlation(np.arange(4), np.arange(4), nan_policy="drop")
    with pytest.raises(ValueError, match="needs at least 2 compared samples; got 1"), \
            pytest.warns(UserWarning, match="dropped 1 of 2 samples"):
        pseudotime_correlation([0.0, np.nan], [1.0, 2.0], nan_policy="omit")
    with pytest.raises(ValueError, match="needs at least 2 compared samples; got 0"):
        pseudotime_correlation([], [])


def test_pseudotime_correlation_of_a_constant_input_warns():
    with pytest.warns(UserWarning, match="reference is constant on the 3 compared samples"):
        assert np.isnan(pseudotime_correlation([0.1, 0.2, 0.3], [1, 1, 1]))


# -- properties (hypothesis) -----------------------------------------------------------------

labelings = st.integers(1, 30).flatmap(
    lambda n: st.tuples(st.lists(st.integers(0, 4), min_size=n, max_size=n),
                        st.lists(st.integers(0, 6), min_size=n, max_size=n)))
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)


@SETTINGS
@given(labelings, st.randoms(use_true_random=False))
def test_purity_and_accuracy_bounds_and_invariances(pair, rnd):
    y, c = (np.array(v) for v in pair)
    n = len(y)
    lp, acc = leaf_purity(y, c), cluster_accuracy(y, c)
    # bounds: each leaf keeps at least one sample; a one-to-one match keeps at most the
    # majority of each cluster (so accuracy <= purity both ways)
    assert 1 / n - 1e-12 <= lp <= 1 + 1e-12
    assert 1 / n - 1e-12 <= acc <= min(lp, leaf_purity(c, y)) + 1e-12
    # symmetric in its two labelings
    assert cluster_accuracy(c, y) == pytest.approx(acc, abs=1e-12)
    # invariant to renaming classes / clusters and to the order of the samples
    ren_y = np.array(rnd.sample(range(10, 20), 5))[y]
    ren_c = np.array(rnd.sample(range(-7, 0), 7))[c]
    assert leaf_purity(ren_y, ren_c) == pytest.approx(lp, abs=1e-12)
    assert cluster_accuracy(ren_y, ren_c) == pytest.approx(acc, abs=1e-12)
    order = np.array(rnd.sample(range(n), n))
    assert leaf_purity(y[order], c[order]) == pytest.approx(lp, abs=1e-12)
    assert cluster_accuracy(y[order], c[order]) == pytest.approx(acc, abs=1e-12)
    # known answers: the classes themselves are pure and exact; one leaf has the majority
    assert leaf_purity(y, y) == cluster_accuracy(y, y) == 1.0
    assert leaf_purity(y, np.zeros(n)) == pytest.approx(np.bincount(y).max() / n, abs=1e-12)
    # splitting leaves further never lowers purity
    assert leaf_purity(y, c * 5 + y) >= lp - 1e-12


@SETTINGS
@given(st.integers(1, 12).flatmap(
    lambda n_nodes: st.tuples(
        st.just(n_nodes),
        st.lists(st.integers(0, 10**6), min_size=n_nodes - 1, max_size=n_nodes - 1),
        st.lists(st.tuples(st.integers(0, 3), st.integers(0, 10**6)), min_size=1,
                 max_size=25))),
    st.randoms(use_true_random=False))
def test_dendrogram_purity_bounds_and_invariances(tree, rnd):
    n_nodes, parent_draws, samples = tree
    parent = np.array([-1] + [d % v for v, d in zip(range(1, n_nodes), parent_draws,
                                                        strict=True)])
    y = np.array([s[0] for s in samples])
    nodes = np.array([s[1] % n_nodes for s in samples])
    dp = dendrogram_purity(y, parent, nodes)
    assert 0 <= dp <= 1 + 1e-12
    # invariant to renaming classes and to the order of the samples
    ren = np.array(rnd.sample(range(100, 110), 4))[y]
    assert dendrogram_purity(ren, parent, nodes) == pytest.approx(dp, abs=1e-12)
    order = np.array(rnd.sample(range(len(y)), len(y)))
    assert dendrogram_purity(y[order], parent, nodes[order]) == pytest.approx(dp, abs=1e-12)
    # a tree that puts each class on its own leaf under the root is perfectly pure
    star = np.array([-1] + [0] * (y.max() + 1))
    assert dendrogram_purity(y, star, y + 1) == pytest.approx(1.0, abs=1e-12)


@SETTINGS
@given(st.lists(st.tuples(st.integers(-1000, 1000), st.integers(-1000, 1000)), min_size=2,
                max_size=30).filter(lambda v: len({a for a, _ in v}) > 1
                                    and len({b for _, b in v}) > 1),
       st.sampled_from(["spearman", "kendall"]))
def test_pseudotime_correlation_bounds_and_symmetries(pairs, method):
    a = np.array([p[0] for p in pairs], dtype=float)
    b = np.array([p[1] for p in pairs], dtype=float)
    r = pseudotime_correlation(a, b, method=method)
    assert -1 - 1e-12 <= r <= 1 + 1e-12
    # symmetric; reversing one order flips the sign; increasing maps change nothing
    assert pseudotime_correlation(b, a, method=method) == pytest.approx(r, abs=1e-12)
    assert pseudotime_correlation(-a, b, method=method) == pytest.approx(-r, abs=1e-12)
    assert pseudotime_correlation(a**3 + 5 * a - 2, b,
                                  method=method) == pytest.approx(r, abs=1e-12)
    assert pseudotime_correlation(a, a, method=method) == pytest.approx(1.0, abs=1e-12)
