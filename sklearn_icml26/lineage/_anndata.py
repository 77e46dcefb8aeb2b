"""AnnData interop of the lineage module: read a matrix out of an AnnData, write results back.

``anndata`` is an optional extra; nothing here imports it unless an AnnData arrives (or
:func:`annotate_anndata` is called).
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted

__all__ = ["annotate_anndata"]


def _is_anndata(X):
    """Whether ``X`` is an ``anndata.AnnData`` (without importing anndata otherwise)."""
    module = type(X).__module__ or ""
    if not module.startswith("anndata"):
        return False
    try:
        import anndata
    except ImportError:  # pragma: no cover - the object exists, so its package imports
        return False
    return isinstance(X, anndata.AnnData)


def _read_anndata(X, layer=None, use_rep=None, *, caller="HDTreeLineage"):
    """The matrix of ``X``: ``X.X``, ``X.layers[layer]`` or ``X.obsm[use_rep]``.

    Anything that is not an AnnData is returned unchanged (``layer`` and ``use_rep`` then
    do not apply). Sparse matrices stay sparse; an ``obsm`` DataFrame becomes its values.
    """
    if not _is_anndata(X):
        return X
    if layer is not None and use_rep is not None:
        raise ValueError(
            f"{caller} reads one matrix of an AnnData: set layer or use_rep, not both; got "
            f"layer={layer!r} and use_rep={use_rep!r}."
        )
    if use_rep is not None:
        if use_rep not in X.obsm:
            raise ValueError(
                f"use_rep={use_rep!r} is not a key of the AnnData's obsm; available keys: "
                f"{sorted(X.obsm.keys())}."
            )
        out = X.obsm[use_rep]
        return out.to_numpy() if hasattr(out, "to_numpy") else out
    if layer is not None:
        if layer not in X.layers:
            raise ValueError(
                f"layer={layer!r} is not a layer of the AnnData; available layers: "
                f"{sorted(X.layers.keys())}."
            )
        return X.layers[layer]
    if X.X is None:
        raise ValueError(
            f"{caller}: the AnnData has no X matrix (adata.X is None); pass layer=... or "
            f"use_rep=... (layers: {sorted(X.layers.keys())}, obsm: {sorted(X.obsm.keys())})."
        )
    return X.X


def _read_root_mask(X, root_mask):
    """``root_mask`` given as the name of a boolean ``obs`` column of an AnnData ``X``."""
    if isinstance(root_mask, str):
        if not _is_anndata(X):
            raise ValueError(
                "root_mask may be a column name only when X is an AnnData (a boolean obs "
                f"column); got root_mask={root_mask!r} with X of type {type(X).__name__}."
            )
        if root_mask not in X.obs:
            raise ValueError(
                f"root_mask={root_mask!r} is not a column of the AnnData's obs; columns: "
                f"{list(X.obs.columns)}."
            )
        return X.obs[root_mask].to_numpy()
    return root_mask


def annotate_anndata(adata, model, *, key_added="hdtree", predict=False, copy=False):
    """Write a fitted :class:`~sklearn_icml26.lineage.HDTreeLineage`'s results into an AnnData.

    Adds ``obs[f"{key_added}_pseudotime"]`` (float), ``obs[f"{key_added}_leaf"]``
    (categorical: the flat cluster of ``labels_`` / :meth:`predict`), ``obsm[f"X_{key_added}"]``
    (the 2-D embedding, so that ``scanpy.pl.embedding(adata, basis=key_added)`` draws it),
    ``obsm[f"{key_added}_paths"]`` (the code path of each cell, one global code id per
    level) and ``uns[key_added]``, the code tree: ``parent``, ``level``, ``count``,
    ``children``, ``code_embeddings``, ``leaves`` (the code ids of the flat clusters, in
    label order), ``root_code``, ``lineage_paths`` (terminal code id as a string to the code
    ids from the root) and ``params`` (``n_levels``, ``n_clusters``, ``n_components``).
    Everything written is a plain number, string, array or dict, so
    ``adata.write_h5ad`` stores it.

    Parameters
    ----------
    adata : anndata.AnnData of shape (n_obs, n_vars)
        The cells. With ``predict=False`` they must be the training cells, in training
        order.
    model : HDTreeLineage
        A fitted model.
    key_added : str, default="hdtree"
        Prefix of the keys written.
    predict : bool, default=False
        ``False`` writes the fitted results (``pseudotime_``, ``labels_``, ``embedding_``,
        ``paths_``); ``True`` computes them for ``adata``'s cells with
        :meth:`~HDTreeLineage.predict_pseudotime`, :meth:`~HDTreeLineage.predict`,
        :meth:`~HDTreeLineage.transform` and :meth:`~HDTreeLineage.apply`, reading the
        matrix the model was set up to read (``layer`` / ``use_rep``).
    copy : bool, default=False
        Annotate a copy and return it instead of writing into ``adata``.

    Returns
    -------
    adata : anndata.AnnData or None
        The annotated copy if ``copy=True``, else ``None``.

    Raises
    ------
    TypeError
        If ``adata`` is not an AnnData.
    ValueError
        If ``predict=False`` and ``adata`` does not have one row per training cell.

    Examples
    --------
    >>> import anndata
    >>> from sklearn_icml26.datasets import make_hierarchical_blobs
    >>> from sklearn_icml26.lineage import HDTreeLineage, annotate_anndata
    >>> X, _, _ = make_hierarchical_blobs(n_samples=60, random_state=0)
    >>> adata = anndata.AnnData(X)
    >>> model = HDTreeLineage(n_levels=3, n_clusters=4, hidden_size=16, n_layers=1,
    ...                       latent_dim=8, head_size=8, fit_decoder=False, max_epochs=5,
    ...                       batch_size=32, random_state=0).fit(adata)
    >>> annotate_anndata(adata, model)
    >>> sorted(adata.obs.columns), adata.obsm["X_hdtree"].shape
    (['hdtree_leaf', 'hdtree_pseudotime'], (60, 2))
    """
    if not _is_anndata(adata):
        raise TypeError(
            f"annotate_anndata needs an anndata.AnnData; got {type(adata).__name__}."
        )
    check_is_fitted(model)
    import pandas as pd

    if copy:
        adata = adata.copy()
    if predict:
        embedding = model.transform(adata)
        paths = model.apply(adata)
        labels = model.predict(adata)
        pseudotime = model.predict_pseudotime(adata)
    else:
        n_train = len(model.labels_)
        if adata.n_obs != n_train:
            raise ValueError(
                f"annotate_anndata with predict=False writes the fitted results of the "
                f"{n_train} training cells, but adata has n_obs={adata.n_obs}; pass the "
                "training AnnData or predict=True."
            )
        embedding, paths = model.embedding_, model.paths_
        labels, pseudotime = model.labels_, model.pseudotime_
    n_labels = int(len(model.leaves_))
    adata.obs[f"{key_added}_pseudotime"] = np.asarray(pseudotime, dtype=np.float64)
    adata.obs[f"{key_added}_leaf"] = pd.Categorical(
        np.asarray(labels).astype(str), categories=[str(k) for k in range(n_labels)]
        + (["-1"] if np.any(np.asarray(labels) < 0) else []))
    adata.obsm[f"X_{key_added}"] = np.asarray(embedding, dtype=np.float64)
    adata.obsm[f"{key_added}_paths"] = np.asarray(paths, dtype=np.int64)
    tree = model.tree_
    order = np.argsort(model.leaf_labels_, kind="stable")
    adata.uns[key_added] = {
        "parent": np.asarray(tree.parent), "level": np.asarray(tree.level),
        "count": np.asarray(tree.count), "children": np.asarray(tree.children),
        "code_embeddings": np.asarray(model.code_embeddings_),
        "leaves": np.asarray(model.leaves_)[order],
        "root_code": int(model.root_code_),
        "lineage_paths": {str(k): np.asarray(v, dtype=np.int64)
                          for k, v in model.lineage_paths_.items()},
        "params": {"n_levels": int(model.n_levels),
                   "n_clusters": -1 if model.n_clusters is None else int(model.n_clusters),
                   "n_components": int(model.n_components)},
    }
    return adata if copy else None
