"""HDTree's displays: the code tree with class bars, the pseudotime map (artists' data checked)."""

import numpy as np
import pytest
import torch
from sklearn.decomposition import PCA
from sklearn.exceptions import NotFittedError

from sklearn_icml26.datasets import make_hierarchical_blobs
from sklearn_icml26.lineage import HDTreeLineage, LineageTreeDisplay, PseudotimeDisplay

matplotlib = pytest.importorskip("matplotlib", reason="the plot extra is not installed")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TINY = dict(n_levels=3, hidden_size=16, n_layers=1, latent_dim=8, head_size=8, n_neighbors=3,
            pca_components=5, fit_decoder=False, max_epochs=6, batch_size=32, random_state=0)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def fitted():
    torch.set_num_threads(1)
    X, y, _ = make_hierarchical_blobs(n_samples=120, depth=2, separation=12, noise=0.5,
                                      random_state=0)
    return HDTreeLineage(**TINY).fit(X), X, y


def test_layout_of_a_known_tree():
    # node 0 (top) has children 2, 3; node 1 (top) is a leaf; node 4 under 3
    disp = LineageTreeDisplay([-1, -1, 0, 0, 3], np.ones((5, 1))).plot()
    np.testing.assert_array_equal(disp.leaves_, [2, 4, 1])
    np.testing.assert_array_equal(disp.node_positions_,
                                  [[0.5, 1], [2, 1], [0, 2], [1, 2], [1, 3]])
    # the elbow into node 4 leaves node 3's row at x = 1 and drops to depth 3
    np.testing.assert_array_equal(disp.edges_.get_segments()[4], [[1, 2], [1, 2], [1, 3]])
    # top nodes hang from the virtual root, centred over them at depth 0
    np.testing.assert_array_equal(disp.edges_.get_segments()[0], [[1.25, 0], [0.5, 0], [0.5, 1]])


def test_lineage_tree_display_counts_the_classes_of_each_code(fitted):
    model, X, y = fitted
    disp = LineageTreeDisplay.from_estimator(model, y, max_level=1, class_names=list("abcd"))
    tree, paths = model.tree_, model.paths_
    drawn = np.flatnonzero((tree.level <= 1) & (tree.count > 0))
    # node sizes follow the rows routed through each code (tree_.count)
    sizes = disp.nodes_.get_sizes()
    np.testing.assert_allclose(sizes, 10 + 120 * tree.count[drawn] / len(X))
    # the leaves are the occupied level-1 codes; each bar segment is the share of a class
    labels = [t.get_text().split("\n")[0] for t in disp.ax_.get_xticklabels()]
    leaf_codes = np.array([int(t) for t in labels])
    assert set(leaf_codes) == set(drawn[tree.level[drawn] == 1])
    for c, bars in enumerate(disp.bars_):
        assert bars.get_label() == "abcd"[c]
        for code, rect in zip(leaf_codes, bars, strict=True):
            rows = paths[:, 1] == code
            assert rect.get_height() == pytest.approx(np.mean(y[rows] == c))
    # the class bars of every leaf stack to one full bar
    tops = np.sum([[r.get_height() for r in bars] for bars in disp.bars_], axis=0)
    np.testing.assert_allclose(tops, 1.0)
    # the star sits on the level-1 ancestor of the pseudotime root
    root = model.root_code_
    while tree.level[root] > 1:
        root = tree.parent[root]
    k = int(np.flatnonzero(drawn == root)[0])
    np.testing.assert_array_equal(disp.root_marker_.get_offsets()[0], disp.node_positions_[k])


def test_lineage_tree_display_errors(fitted):
    model, X, y = fitted
    with pytest.raises(NotFittedError):
        LineageTreeDisplay.from_estimator(HDTreeLineage(), y)
    with pytest.raises(ValueError, match=r"y must hold one class per row \(120 rows\)"):
        LineageTreeDisplay.from_estimator(model, y[:10])
    with pytest.raises(ValueError, match=r"max_level must be an int in \[0, 3\)"):
        LineageTreeDisplay.from_estimator(model, y, max_level=3)
    with pytest.raises(ValueError, match="not a node index"):
        LineageTreeDisplay([-1, 5], np.ones((2, 1))).plot()
    with pytest.raises(ValueError, match="cycle"):
        LineageTreeDisplay([-1, 2, 1], np.ones((3, 1))).plot()
    with pytest.raises(ValueError, match=r"composition must be of shape \(n_nodes=2"):
        LineageTreeDisplay([-1, 0], np.ones((3, 1))).plot()


def test_pseudotime_display_draws_the_model_map_and_lineages(fitted):
    model, X, y = fitted
    disp = PseudotimeDisplay.from_estimator(model)
    np.testing.assert_array_equal(disp.scatter_.get_offsets(), model.embedding_)
    np.testing.assert_array_equal(disp.scatter_.get_array(), model.pseudotime_)
    assert len(disp.lineage_lines_) == len(model.lineage_paths_)
    for line, path in zip(disp.lineage_lines_, model.lineage_paths_.values(), strict=True):
        np.testing.assert_array_equal(line.get_xydata(), model.code_embeddings_[path])
    np.testing.assert_array_equal(disp.root_marker_.get_offsets()[0],
                                  model.code_embeddings_[model.root_code_])
    # new rows: their embedding and predicted pseudotime; PCA map of the input
    new = PseudotimeDisplay.from_estimator(model, X[:30])
    np.testing.assert_allclose(new.scatter_.get_offsets(), model.transform(X[:30]))
    np.testing.assert_allclose(new.scatter_.get_array(), model.predict_pseudotime(X[:30]))
    pca = PseudotimeDisplay.from_estimator(model, X, embedding="pca", colorbar=False)
    np.testing.assert_allclose(np.abs(pca.scatter_.get_offsets()),
                               np.abs(PCA(2).fit_transform(X)))
    np.testing.assert_allclose(pca.scatter_.get_array(), model.pseudotime_, atol=1e-12)
    assert pca.lineage_lines_ == [] and pca.colorbar_ is None


def test_pseudotime_display_errors(fitted):
    model, X, _ = fitted
    with pytest.raises(NotFittedError):
        PseudotimeDisplay.from_estimator(HDTreeLineage())
    with pytest.raises(ValueError, match="embedding must be 'model' or 'pca'; got 'umap'"):
        PseudotimeDisplay.from_estimator(model, X, embedding="umap")
    with pytest.raises(ValueError, match="embedding='pca' needs X"):
        PseudotimeDisplay.from_estimator(model, embedding="pca")
    with pytest.raises(ValueError, match=r"pseudotime must hold one value per row"):
        PseudotimeDisplay(np.zeros((3, 2)), [0.0, 1.0]).plot()
