"""The ``hdtree`` demo: HDTreeLineage on Paul15 against Ward and a diffusion pseudotime."""

import time

import numpy as np

__all__ = ["run_demo"]


def run_demo(data_home=None, verbose=1, fast=False):
    """Fit HDTreeLineage on Paul15 and compare it with Ward's tree and diffusion pseudotime.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Data home holding ``single_cell/paul15_tradeseq/``.
    verbose : int, default=1
        ``1`` prints skorch's epoch table of the fit.
    fast : bool, default=False
        Train 40 epochs instead of the default 300.

    Returns
    -------
    results : pandas.DataFrame
        One row per metric with the columns of
        :data:`sklearn_icml26.utils._registry.DEMO_COLUMNS`: 7-cut dendrogram purity (anchor:
        Ward on PCA 30), erythroid-vs-myeloid branch accuracy of the 2-cut (anchor: Ward) and
        the Spearman correlation with Slingshot's pseudotime on each lineage (anchor: the
        diffusion-pseudotime recipe).

    Examples
    --------
    >>> from sklearn_icml26.lineage._demo import run_demo
    >>> table = run_demo(fast=True, verbose=0)  # doctest: +SKIP
    """
    import pandas as pd
    import torch
    from sklearn.cluster import AgglomerativeClustering

    from ..datasets import load_paul15
    from ..metrics import (
        cluster_accuracy,
        dendrogram_from_children,
        dendrogram_purity,
        pseudotime_correlation,
    )
    from ._dpt import diffusion_pseudotime
    from ._hdtree import HDTreeLineage
    from ._preprocessing import make_count_pipeline

    data = load_paul15(data_home)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        genes = make_count_pipeline().fit_transform(data.data)
        Z = make_count_pipeline(n_pca=30).fit_transform(data.data)
        start = time.perf_counter()
        model = HDTreeLineage(n_clusters=7, max_epochs=40 if fast else 300, random_state=0,
                              verbose=verbose).fit(genes, root_mask=data.root_mask)
        seconds = time.perf_counter() - start
    finally:
        torch.set_num_threads(threads)
    y = data.target
    names = list(data.target_names)
    ward = AgglomerativeClustering(linkage="ward", n_clusters=7, compute_full_tree=True).fit(Z)
    ward_dp = dendrogram_purity(y, *dendrogram_from_children(ward.children_, len(Z), 7))
    rows = [("7-cut dendrogram purity", dendrogram_purity(y, *model.dendrogram(7)),
             "Ward (PCA 30)", ward_dp)]
    branch = ~np.isin(y, [names.index("Multipotent progenitors"),
                          names.index("Megakaryocytes")])
    ery = (y == names.index("Erythrocyte")).astype(int)
    ward2 = AgglomerativeClustering(linkage="ward", n_clusters=2).fit_predict(Z)
    rows.append(("branch accuracy (2-cut)", cluster_accuracy(ery[branch], model.cut(2)[branch]),
                 "Ward (PCA 30)", cluster_accuracy(ery[branch], ward2[branch])))
    mpp = np.flatnonzero(data.root_mask)
    iroot = int(mpp[np.argmin(((Z[mpp] - Z[mpp].mean(0)) ** 2).sum(1))])
    dpt = diffusion_pseudotime(Z, iroot)
    for k in (0, 1):
        mask = data.lineage_weights[:, k] == 1
        rows.append((f"Spearman vs Slingshot, lineage {k + 1}",
                     pseudotime_correlation(model.pseudotime_, data.pseudotime[:, k], mask=mask),
                     "diffusion pseudotime",
                     pseudotime_correlation(dpt, data.pseudotime[:, k], mask=mask)))
    return pd.DataFrame(
        [{"method": "HDTreeLineage", "dataset": "paul15", "metric": metric, "value": value,
          "anchor": anchor, "anchor_value": anchor_value, "seconds": seconds}
         for metric, value, anchor, anchor_value in rows]
    )
