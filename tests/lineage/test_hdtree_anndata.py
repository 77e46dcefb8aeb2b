"""AnnData interop of the lineage module: inputs, the results written back, Paul15 round trip."""

import numpy as np
import pytest
from conftest import require_data
from scipy.sparse import csr_matrix, issparse
from sklearn.decomposition import PCA

from sklearn_icml26.datasets import load_krumsiek11, load_paul15, make_hierarchical_blobs
from sklearn_icml26.lineage import HDTreeLineage, annotate_anndata, make_count_pipeline

anndata = pytest.importorskip(
    "anndata", reason="anndata (the optional 'anndata' extra) is not installed")

TINY = dict(n_levels=3, hidden_size=16, n_layers=1, latent_dim=8, head_size=8, n_neighbors=3,
            pca_components=5, n_timesteps=10, decoder_width=16, max_epochs=6, batch_size=32,
            random_state=0)


@pytest.fixture(autouse=True)
def _one_thread():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _write_h5ad(adata, path):
    """``write_h5ad``; with pandas 3 the obs index is a string array, which anndata writes
    only when ``allow_write_nullable_strings`` is on (anndata >= 0.11)."""
    if hasattr(anndata.settings, "allow_write_nullable_strings"):
        with anndata.settings.override(allow_write_nullable_strings=True):
            adata.write_h5ad(path)
    else:  # pragma: no cover - older anndata
        adata.write_h5ad(path)


@pytest.fixture(scope="module")
def blobs_adata():
    X, y, _ = make_hierarchical_blobs(n_samples=120, depth=2, separation=12, noise=0.5,
                                      random_state=0)
    adata = anndata.AnnData(X=X.copy())
    adata.layers["scaled"] = csr_matrix(2.0 * X)
    adata.obsm["X_pca"] = PCA(4, random_state=0).fit_transform(X)
    adata.obs["early"] = np.arange(len(X)) < 10
    return adata, X, y


@pytest.fixture(scope="module")
def fit_pair(blobs_adata):
    """The same fit from ``obsm["X_pca"]`` + an obs root column and from the arrays."""
    adata, _, _ = blobs_adata
    params = dict(n_clusters=4, fit_decoder=False, **TINY)
    on_adata = HDTreeLineage(use_rep="X_pca", **params).fit(adata, root_mask="early")
    on_array = HDTreeLineage(**params).fit(adata.obsm["X_pca"],
                                           root_mask=adata.obs["early"].to_numpy())
    return on_adata, on_array


def test_each_anndata_matrix_is_read(blobs_adata):
    from sklearn_icml26.lineage._anndata import _read_anndata

    adata, X, _ = blobs_adata
    assert _read_anndata(adata) is adata.X
    assert _read_anndata(adata, layer="scaled") is adata.layers["scaled"]  # stays sparse
    assert _read_anndata(adata, use_rep="X_pca") is adata.obsm["X_pca"]
    assert _read_anndata(X, layer="scaled") is X  # other inputs pass through


def test_anndata_fit_equals_the_array_fit(blobs_adata, fit_pair):
    adata, _, _ = blobs_adata
    on_adata, on_array = fit_pair
    matrix = adata.obsm["X_pca"]
    np.testing.assert_array_equal(on_adata.labels_, on_array.labels_)
    np.testing.assert_allclose(on_adata.embedding_, on_array.embedding_, atol=1e-6)
    assert on_adata.root_code_ == on_array.root_code_
    np.testing.assert_allclose(on_adata.pseudotime_, on_array.pseudotime_, atol=1e-9)
    assert on_adata.n_features_in_ == matrix.shape[1] == 4
    # every method reads the AnnData the same way
    np.testing.assert_array_equal(on_adata.predict(adata), on_array.predict(matrix))
    np.testing.assert_array_equal(on_adata.apply(adata), on_array.apply(matrix))
    np.testing.assert_allclose(on_adata.predict_pseudotime(adata),
                               on_array.predict_pseudotime(matrix), atol=1e-9)
    np.testing.assert_array_equal(on_adata.cut(3, adata), on_array.cut(3, matrix))


def test_bad_root_mask_column(blobs_adata):
    adata, X, _ = blobs_adata
    with pytest.raises(ValueError, match="not a column of the AnnData's obs"):
        HDTreeLineage(fit_decoder=False, **TINY).fit(adata, root_mask="nope")
    with pytest.raises(ValueError, match="only when X is an AnnData"):
        HDTreeLineage(fit_decoder=False, **TINY).fit(X, root_mask="early")


def test_bad_anndata_keys_are_named(blobs_adata):
    adata, _, _ = blobs_adata
    with pytest.raises(ValueError, match=r"use_rep='X_umap' is not a key .*\['X_pca'\]"):
        HDTreeLineage(use_rep="X_umap", **TINY).fit(adata)
    with pytest.raises(ValueError, match=r"layer='counts' is not a layer .*\['scaled'\]"):
        HDTreeLineage(layer="counts", **TINY).fit(adata)
    with pytest.raises(ValueError, match="set layer or use_rep, not both"):
        HDTreeLineage(layer="scaled", use_rep="X_pca", **TINY).fit(adata)
    with pytest.raises(ValueError, match="no X matrix"):
        HDTreeLineage(**TINY).fit(anndata.AnnData(obs=adata.obs.copy()))


def test_annotate_anndata_writes_the_fit_and_survives_h5ad(blobs_adata, fit_pair, tmp_path):
    adata, X, _ = blobs_adata
    adata = adata.copy()
    model = fit_pair[0]
    out = annotate_anndata(adata, model, copy=True)
    assert "hdtree_pseudotime" not in adata.obs  # copy=True leaves the input alone
    np.testing.assert_array_equal(out.obs["hdtree_pseudotime"].to_numpy(), model.pseudotime_)
    np.testing.assert_array_equal(out.obs["hdtree_leaf"].astype(int).to_numpy(), model.labels_)
    np.testing.assert_array_equal(out.obsm["X_hdtree"], model.embedding_)
    np.testing.assert_array_equal(out.obsm["hdtree_paths"], model.paths_)
    tree = out.uns["hdtree"]
    np.testing.assert_array_equal(tree["parent"], model.tree_.parent)
    np.testing.assert_array_equal(tree["count"], model.tree_.count)
    # the leaves are listed in label order: leaf k holds the rows labelled k
    for k, leaf in enumerate(tree["leaves"]):
        on_leaf = (model.paths_ == leaf).any(axis=1)
        np.testing.assert_array_equal(on_leaf, model.labels_ == k)
    assert tree["root_code"] == model.root_code_
    assert set(tree["lineage_paths"]) == {str(k) for k in model.lineage_paths_}
    # predict=True recomputes the same values on the training cells
    again = annotate_anndata(adata, model, predict=True, copy=True)
    np.testing.assert_allclose(again.obs["hdtree_pseudotime"], model.pseudotime_, atol=1e-9)
    np.testing.assert_array_equal(again.obs["hdtree_leaf"], out.obs["hdtree_leaf"])
    # what is written is storable
    path = tmp_path / "blobs.h5ad"
    _write_h5ad(out, path)
    back = anndata.read_h5ad(path)
    np.testing.assert_array_equal(back.obs["hdtree_pseudotime"], model.pseudotime_)
    np.testing.assert_array_equal(back.uns["hdtree"]["children"], model.tree_.children)
    np.testing.assert_array_equal(back.uns["hdtree"]["code_embeddings"],
                                  model.code_embeddings_)
    annotate_anndata(adata, model, key_added="tree2")  # in place
    assert "tree2_leaf" in adata.obs and "tree2" in adata.uns
    with pytest.raises(ValueError, match="n_obs=10"):
        annotate_anndata(adata[:10].copy(), model)
    with pytest.raises(TypeError, match="needs an anndata.AnnData; got ndarray"):
        annotate_anndata(X, model)


@pytest.mark.real_data
def test_krumsiek11_loader_as_anndata():
    require_data("single_cell/krumsiek11_scanpy/krumsiek11.txt.gz")
    data = load_krumsiek11()
    adata = load_krumsiek11(as_anndata=True)
    np.testing.assert_array_equal(adata.X, data.data)
    assert list(adata.var_names) == list(data.feature_names)
    np.testing.assert_array_equal(adata.obs["time"], data.time)
    np.testing.assert_array_equal(adata.obs["cell_type"].cat.codes, data.target)
    assert adata.obs["root"].sum() == 4


@pytest.mark.real_data
def test_paul15_round_trips_through_anndata(tmp_path):
    require_data("single_cell/paul15_tradeseq/counts_cells_x_genes.csv.gz",
                 "single_cell/paul15_tradeseq/cell_metadata.csv.gz",
                 "single_cell/paul15_tradeseq/slingshot_lineages.txt")
    data = load_paul15()
    adata = load_paul15(as_anndata=True)
    # the loader's AnnData holds the Bunch's values
    assert adata.shape == (2660, 240) and adata.X.sum() == 2453655
    np.testing.assert_array_equal(adata.X.toarray(), data.data)
    assert list(adata.var_names) == list(data.feature_names)
    assert list(adata.obs_names) == list(data.cell_names)
    np.testing.assert_array_equal(adata.obs["cell_type"].cat.codes, data.target)
    np.testing.assert_array_equal(adata.obs["root"], data.root_mask)
    np.testing.assert_array_equal(
        adata.obs[["pseudotime_lineage1", "pseudotime_lineage2"]].to_numpy(), data.pseudotime)
    np.testing.assert_array_equal(adata.obsm["X_slingshot"], data.reduced_dims)
    # ... and survives h5ad
    path = tmp_path / "paul15.h5ad"
    _write_h5ad(adata, path)
    adata = anndata.read_h5ad(path)
    assert issparse(adata.layers["counts"])
    np.testing.assert_array_equal(adata.layers["counts"].toarray(), data.data)
    assert {k: list(v) for k, v in adata.uns["lineages"].items()} == data.lineages
    # the count pipeline reads the counts layer (sparse) as it reads the dense array
    on_array = make_count_pipeline(n_top_genes=100, n_pca=20).fit_transform(data.data)
    pipe = make_count_pipeline(n_top_genes=100, n_pca=20, layer="counts")
    on_adata = pipe.fit_transform(adata)
    np.testing.assert_allclose(on_adata, on_array, atol=1e-9)
    names = pipe[:-1].get_feature_names_out()
    assert len(names) == 100 and set(names) <= set(data.feature_names)
    # HDTree on obsm["X_pca"], root from the obs column, results written back and stored
    # (every 4th cell keeps the fit short)
    adata.obsm["X_pca"] = on_adata
    adata = adata[::4].copy()
    model = HDTreeLineage(n_clusters=7, use_rep="X_pca", fit_decoder=False,
                          **{**TINY, "n_levels": 4, "batch_size": 512}).fit(
        adata, root_mask="root")
    annotate_anndata(adata, model)
    _write_h5ad(adata, path)
    back = anndata.read_h5ad(path)
    np.testing.assert_array_equal(back.obs["hdtree_pseudotime"], model.pseudotime_)
    np.testing.assert_array_equal(back.obs["hdtree_leaf"].astype(int), model.labels_)
    assert back.obs["hdtree_pseudotime"][back.obs["root"]].median() < 0.5
    np.testing.assert_array_equal(back.uns["hdtree"]["count"], model.tree_.count)
