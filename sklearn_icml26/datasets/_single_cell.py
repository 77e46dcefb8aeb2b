"""Single-cell lineage data (Paul15, krumsiek11) and synthetic trees and trajectories."""

import gzip
import io

import numpy as np
import pandas as pd
from sklearn.utils import Bunch, check_random_state

from ._base import RemoteFile, fetch_files, get_data_home

__all__ = ["load_krumsiek11", "load_paul15", "make_branching_trajectory",
           "make_hierarchical_blobs"]

_PAUL15 = "single_cell/paul15_tradeseq"
_PAUL15_FILES = [RemoteFile("counts_cells_x_genes.csv.gz"), RemoteFile("cell_metadata.csv.gz"),
                 RemoteFile("slingshot_lineages.txt")]
_TRADESEQ = ("https://raw.githubusercontent.com/statOmics/tradeSeq/"
             "02a9050674d8f0c0ebae8688fa9326dd76360d7d/data/")
_PAUL15_RDA = [
    RemoteFile("countMatrix.rda", _TRADESEQ + "countMatrix.rda",
               "9d4717ce531e414ea0573a45f02c23c3b571b5fc37a52a65be124f0537c070a8"),
    RemoteFile("celltype.rda", _TRADESEQ + "celltype.rda",
               "caddbfd93b3012af784ae54773c373ff64adf735949f8236187ea6ae71761db9"),
    RemoteFile("crv.rda", _TRADESEQ + "crv.rda",
               "85a96575d06247f5c22d2622a05cb75e241f7c014e93d2c6c15593cecdc14099"),
]
_KRUMSIEK = "single_cell/krumsiek11_scanpy"
_KRUMSIEK_URL = ("https://raw.githubusercontent.com/scverse/scanpy/1.11.5/src/scanpy/"
                 "datasets/krumsiek11.txt")
_KRUMSIEK_SHA = "a49c6d04bd77f61028133a9b787222ebf00c4fc02dbf8e2b8edda493a0d5dc93"

_PAUL15_DESCR = """Paul15 myeloid progenitors (Paul et al., Cell 163(7):1663-1677, 2015; GEO
GSE72857) as shipped by the tradeSeq R package (statOmics/tradeSeq@02a9050, MIT): 2,660 cells x
240 genes of raw MARS-seq UMI counts, 7 cell types, and the Slingshot fit of the tradeSeq
authors (two lineages from the multipotent progenitors: Lineage1 1->4->3->7->5 to monocytes and
neutrophils, Lineage2 1->2->6 to erythrocytes). Slingshot pseudotime is a computed reference,
not ground truth."""

_KRUMSIEK_DESCR = """krumsiek11: simulated myeloid differentiation from the boolean network of
Krumsiek et al. (PLoS ONE 6(8):e22649, 2011), as shipped by scanpy (BSD-3): 640 cells x 11 genes,
4 realisations x 160 time steps; labels as scanpy assigns them (progenitor, except rows 80-159 Mo,
240-319 Ery, 400-479 Mk, 560-639 Neu)."""


def _anndata(X, obs, var_names, obsm=None, uns=None):
    try:
        import anndata
    except ImportError as exc:
        raise ImportError(
            "as_anndata=True needs the optional package anndata: pip install "
            "'sklearn_icml26[anndata]' (or pip install anndata)."
        ) from exc
    var = pd.DataFrame(index=pd.Index(np.asarray(var_names, dtype=str), name="gene"))
    return anndata.AnnData(X=X, obs=obs, var=var, obsm=obsm or {}, uns=uns or {})


def load_paul15(data_home=None, download_if_missing=True, *, as_anndata=False):
    """Load the Paul15 myeloid progenitor counts with cell types and Slingshot lineages.

    Reads ``<data_home>/single_cell/paul15_tradeseq/`` (``counts_cells_x_genes.csv.gz``,
    ``cell_metadata.csv.gz``, ``slingshot_lineages.txt``). Without those files the original
    ``.rda`` files of tradeSeq are downloaded (pinned SHA-256) and parsed with the optional
    ``rdata`` package.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Data home; see :func:`~sklearn_icml26.datasets.get_data_home`.
    download_if_missing : bool, default=True
        Download the tradeSeq ``.rda`` files when the converted files are missing.
    as_anndata : bool, default=False
        Return an ``anndata.AnnData`` (optional package ``anndata``) instead of a Bunch:
        ``X`` the raw counts as a float64 CSR matrix (cells x genes), ``layers["counts"]``
        the same matrix, ``obs`` indexed by cell name with ``cell_type`` (categorical),
        ``slingshot_cluster``, ``pseudotime_lineage1/2``, ``weight_lineage1/2`` and
        ``root`` (bool, multipotent progenitors), ``var`` indexed by gene,
        ``obsm["X_slingshot"]`` (Slingshot's 2-D input) and ``uns["lineages"]``.

    Returns
    -------
    data : Bunch
        ``data`` (2660, 240) float64 raw UMI counts; ``feature_names`` (240,) genes;
        ``cell_names`` (2660,); ``target`` (2660,) int codes of ``target_names`` (7 sorted
        cell types); ``pseudotime`` (2660, 2) Slingshot pseudotime of lineages 1 and 2;
        ``lineage_weights`` (2660, 2) their curve weights; ``slingshot_cluster`` (2660,) int;
        ``reduced_dims`` (2660, 2) Slingshot's 2-D input; ``lineages`` dict of cluster
        sequences; ``root_mask`` (2660,) bool (multipotent progenitors); ``frame``
        (cells x genes DataFrame); ``DESCR``.

    Raises
    ------
    OSError
        If the files are missing and cannot be downloaded.
    ImportError
        If the download fallback is needed and ``rdata`` is not installed, or if
        ``as_anndata=True`` and ``anndata`` is not installed.

    References
    ----------
    .. [1] Paul, F. et al. "Transcriptional Heterogeneity and Lineage Commitment in Myeloid
       Progenitors", Cell 163(7), 2015.
    .. [2] Van den Berge, K. et al. "Trajectory-based differential expression analysis for
       single-cell sequencing data" (tradeSeq), Nature Communications 11, 2020.

    Examples
    --------
    >>> from sklearn_icml26.datasets import load_paul15
    >>> paul15 = load_paul15()  # doctest: +SKIP
    >>> paul15.data.shape  # doctest: +SKIP
    (2660, 240)
    """
    home = get_data_home(data_home)
    folder = home / _PAUL15
    if all((folder / f.path).is_file() for f in _PAUL15_FILES) or not download_if_missing:
        folder = fetch_files(_PAUL15, _PAUL15_FILES, data_home, download_if_missing=False)
        counts = pd.read_csv(folder / "counts_cells_x_genes.csv.gz", index_col=0)
        meta = pd.read_csv(folder / "cell_metadata.csv.gz", index_col=0)
        lineages = _parse_lineages((folder / "slingshot_lineages.txt").read_text())
    else:
        counts, meta, lineages = _paul15_from_rda(
            fetch_files(_PAUL15, _PAUL15_RDA, data_home, download_if_missing=True))
    celltype = meta["celltype"].astype(str).to_numpy()
    target_names = np.array(sorted(set(celltype)))
    if as_anndata:
        from scipy.sparse import csr_matrix

        X = csr_matrix(counts.to_numpy(dtype=np.float64))
        obs = pd.DataFrame({
            "cell_type": pd.Categorical(celltype, categories=list(target_names)),
            "slingshot_cluster": meta["slingshot_cluster"].to_numpy(np.int64),
            **{c: meta[c].to_numpy(float) for c in (
                "pseudotime_lineage1", "pseudotime_lineage2", "weight_lineage1",
                "weight_lineage2")},
            "root": celltype == "Multipotent progenitors",
        }, index=pd.Index(np.asarray(counts.index, dtype=str), name="cell"))
        adata = _anndata(X, obs, counts.columns,
                         obsm={"X_slingshot": meta[["rd_1", "rd_2"]].to_numpy(float)},
                         uns={"lineages": {k: np.asarray(v, dtype=np.int64)
                                           for k, v in lineages.items()}})
        adata.layers["counts"] = X.copy()
        return adata
    return Bunch(
        data=counts.to_numpy(dtype=np.float64),
        feature_names=np.asarray(counts.columns, dtype=object),
        cell_names=np.asarray(counts.index, dtype=object),
        target=np.searchsorted(target_names, celltype).astype(np.int64),
        target_names=target_names,
        pseudotime=meta[["pseudotime_lineage1", "pseudotime_lineage2"]].to_numpy(float),
        lineage_weights=meta[["weight_lineage1", "weight_lineage2"]].to_numpy(float),
        slingshot_cluster=meta["slingshot_cluster"].to_numpy(np.int64),
        reduced_dims=meta[["rd_1", "rd_2"]].to_numpy(float),
        lineages=lineages,
        root_mask=celltype == "Multipotent progenitors",
        frame=counts,
        DESCR=_PAUL15_DESCR,
    )


def _parse_lineages(text):
    lineages = {}
    for line in text.splitlines():
        if line.startswith("Lineage"):
            name, seq = line.split(":", 1)
            lineages[name.strip()] = [int(s) for s in seq.split("->")]
    return lineages


def _paul15_from_rda(folder):  # pragma: no cover - needs the network and rdata
    import rdata

    def read(name):
        return rdata.conversion.convert(rdata.parser.parse_file(folder / name))

    mat = read("countMatrix.rda")["countMatrix"]
    slots = mat.attrs if hasattr(mat, "attrs") else mat
    x, i, p = (np.asarray(slots[k]) for k in ("x", "i", "p"))
    n_genes, n_cells = (int(v) for v in np.asarray(slots["Dim"]))
    from scipy.sparse import csc_matrix

    dense = csc_matrix((x, i, p), shape=(n_genes, n_cells)).toarray().T
    genes, cells = (list(v) for v in slots["Dimnames"])
    counts = pd.DataFrame(dense.astype(np.int64), index=cells, columns=genes)
    celltype = np.asarray(read("celltype.rda")["celltype"]).astype(str)
    crv = read("crv.rda")["crv"]
    crv = crv.attrs if hasattr(crv, "attrs") else crv
    labels = crv["clusterLabels"]
    cluster = np.asarray(labels.columns if hasattr(labels, "columns") else labels.coords[
        labels.dims[1]])[np.asarray(labels).argmax(1)]
    meta = pd.DataFrame({"celltype": celltype, "slingshot_cluster": cluster.astype(int)},
                        index=cells)
    rd = np.asarray(crv["reducedDim"])
    meta["rd_1"], meta["rd_2"] = rd[:, 0], rd[:, 1]
    for k, curve in enumerate(("curve1", "curve2"), start=1):
        meta[f"pseudotime_lineage{k}"] = np.asarray(crv["curves"][curve]["lambda"])
        meta[f"weight_lineage{k}"] = np.asarray(crv["curves"][curve]["w"])
    lineages = {name: [int(c) for c in seq] for name, seq in crv["lineages"].items()}
    return counts, meta, lineages


def load_krumsiek11(data_home=None, download_if_missing=True, *, as_anndata=False):
    """Load the simulated krumsiek11 myeloid differentiation (scanpy's copy).

    Reads ``<data_home>/single_cell/krumsiek11_scanpy/krumsiek11.txt.gz`` (else
    ``krumsiek11.txt``, downloaded from scanpy 1.11.5 with a pinned SHA-256). Labels follow
    scanpy's rule.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Data home; see :func:`~sklearn_icml26.datasets.get_data_home`.
    download_if_missing : bool, default=True
        Download the text file when it is missing.
    as_anndata : bool, default=False
        Return an ``anndata.AnnData`` (optional package ``anndata``) instead of a Bunch:
        dense float64 ``X``, ``obs`` indexed by cell name with ``time``, ``realization``,
        ``cell_type`` (categorical) and ``root`` (bool, time 0), ``var`` indexed by gene.

    Returns
    -------
    data : Bunch
        ``data`` (640, 11) float64 expression; ``feature_names`` (11,) (Gata2 ... Gfi1);
        ``time`` (640,) int time step 0-159; ``realization`` (640,) int 0-3; ``target``
        (640,) int codes of ``target_names`` (progenitor, Mo, Ery, Mk, Neu); ``root_mask``
        (640,) bool (time 0); ``cell_names`` (640,) ``"r{realization}_t{time}"``; ``frame``;
        ``DESCR``.

    Raises
    ------
    OSError
        If the file is missing and cannot be downloaded.
    ImportError
        If ``as_anndata=True`` and ``anndata`` is not installed.

    References
    ----------
    .. [1] Krumsiek, J. et al. "Hierarchical Differentiation of Myeloid Progenitors Is
       Encoded in the Transcription Factor Network", PLoS ONE 6(8), 2011.

    Examples
    --------
    >>> from sklearn_icml26.datasets import load_krumsiek11
    >>> krumsiek = load_krumsiek11()  # doctest: +SKIP
    >>> krumsiek.data.shape  # doctest: +SKIP
    (640, 11)
    """
    folder = get_data_home(data_home) / _KRUMSIEK
    if (folder / "krumsiek11.txt.gz").is_file():
        with gzip.open(folder / "krumsiek11.txt.gz", "rt") as fh:
            text = fh.read()
    else:
        folder = fetch_files(_KRUMSIEK, [RemoteFile("krumsiek11.txt", _KRUMSIEK_URL,
                                                    _KRUMSIEK_SHA)],
                             data_home, download_if_missing=download_if_missing)
        text = (folder / "krumsiek11.txt").read_text()
    lines = text.splitlines()
    header = [ln for ln in lines if ln.startswith("#")][-1].lstrip("#").split()
    table = np.loadtxt(io.StringIO(text), comments="#")
    time = table[:, 0].astype(np.int64)
    data = table[:, 1:]
    n = len(data)
    realization = np.cumsum(np.r_[0, np.diff(time) < 0]).astype(np.int64)
    target_names = np.array(["progenitor", "Mo", "Ery", "Mk", "Neu"], dtype=object)
    target = np.zeros(n, dtype=np.int64)
    for k, start in enumerate((80, 240, 400, 560), start=1):
        target[start:start + 80] = k
    names = np.array([f"r{r}_t{t}" for r, t in zip(realization, time, strict=True)],
                     dtype=object)
    feature_names = np.array(header[1:], dtype=object)
    if as_anndata:
        obs = pd.DataFrame({
            "time": time, "realization": realization,
            "cell_type": pd.Categorical(target_names[target], categories=list(target_names)),
            "root": time == 0}, index=pd.Index(names.astype(str), name="cell"))
        return _anndata(data, obs, feature_names)
    return Bunch(data=data, feature_names=feature_names, time=time, realization=realization,
                 target=target, target_names=target_names, root_mask=time == 0,
                 cell_names=names,
                 frame=pd.DataFrame(data, columns=feature_names, index=names),
                 DESCR=_KRUMSIEK_DESCR)


def make_hierarchical_blobs(n_samples=400, depth=2, n_features=10, separation=8.0, decay=0.5,
                            noise=1.0, random_state=None):
    """Gaussian blobs at the leaves of a planted binary tree.

    The root's mean is 0; the two children of a node at depth ``d`` have means
    ``mean +/- separation * decay**d * u`` with ``u`` a fresh random unit vector. Rows are
    split evenly over the ``2**depth`` leaves (the remainder to the first ones) and drawn as
    leaf mean plus ``noise`` times standard normal noise.

    Parameters
    ----------
    n_samples : int, default=400
        Number of rows.
    depth : int, default=2
        Depth of the tree; there are ``2**depth`` leaves.
    n_features : int, default=10
        Number of features.
    separation : float, default=8.0
        Distance from a root child to the root's mean.
    decay : float, default=0.5
        Factor by which the offset shrinks at each level.
    noise : float, default=1.0
        Standard deviation of the isotropic noise around the leaf means.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Rows, float64.
    y : ndarray of shape (n_samples,)
        Leaf of each row, 0 to ``2**depth - 1`` (left to right).
    parent : ndarray of shape (2**(depth+1) - 1,)
        The planted tree in heap order (node 0 the root, children of ``i`` are ``2i+1`` and
        ``2i+2``); ``parent[0] = -1``. Leaf ``k`` is node ``2**depth - 1 + k``.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_hierarchical_blobs
    >>> X, y, parent = make_hierarchical_blobs(n_samples=10, depth=2, random_state=0)
    >>> X.shape, y.tolist(), parent.tolist()
    ((10, 10), [0, 0, 0, 1, 1, 1, 2, 2, 3, 3], [-1, 0, 0, 1, 1, 2, 2])
    """
    rs = check_random_state(random_state)
    n_nodes = 2 ** (depth + 1) - 1
    means = np.zeros((n_nodes, n_features))
    for node in range(2**depth - 1):
        d = int(np.floor(np.log2(node + 1)))
        u = rs.standard_normal(n_features)
        u /= np.linalg.norm(u)
        offset = separation * decay**d * u
        means[2 * node + 1] = means[node] + offset
        means[2 * node + 2] = means[node] - offset
    n_leaves = 2**depth
    sizes = np.full(n_leaves, n_samples // n_leaves)
    sizes[: n_samples % n_leaves] += 1
    y = np.repeat(np.arange(n_leaves), sizes)
    X = means[n_leaves - 1 + y] + noise * rs.standard_normal((n_samples, n_features))
    parent = np.r_[-1, (np.arange(1, n_nodes) - 1) // 2].astype(np.int64)
    return X, y.astype(np.int64), parent


def make_branching_trajectory(n_samples=600, n_features=10, length=10.0, noise=0.5,
                              random_state=None):
    """A trunk that splits into two branches, with a known pseudotime.

    With ``M1 = length e1``, ``M2 = M1 + length e2`` and ``M3 = M1 + length e3``, each row
    draws ``s ~ U(0, 2)``: ``s < 1`` lies on the trunk at ``s M1``; otherwise a fair coin
    picks a branch ``b`` and the row lies at ``M1 + (s - 1)(M_(2+b) - M1)``. Isotropic
    Gaussian noise is added; the pseudotime is ``s / 2``.

    Parameters
    ----------
    n_samples : int, default=600
        Number of rows.
    n_features : int, default=10
        Number of features (at least 3).
    length : float, default=10.0
        Length of the trunk and of each branch.
    noise : float, default=0.5
        Standard deviation of the noise.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Rows, float64.
    pseudotime : ndarray of shape (n_samples,)
        True pseudotime in [0, 1).
    branch : ndarray of shape (n_samples,)
        -1 on the trunk, 0 or 1 on the branches.

    Raises
    ------
    ValueError
        If ``n_features < 3``.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_branching_trajectory
    >>> X, t, branch = make_branching_trajectory(n_samples=50, random_state=0)
    >>> X.shape, bool(t.min() >= 0), sorted(set(branch.tolist()))
    ((50, 10), True, [-1, 0, 1])
    """
    if n_features < 3:
        raise ValueError(f"n_features must be >= 3 (trunk and two branches); got {n_features}.")
    rs = check_random_state(random_state)
    eye = np.eye(n_features)
    m1 = length * eye[0]
    ends = np.stack([m1 + length * eye[1], m1 + length * eye[2]])
    s = rs.uniform(0, 2, n_samples)
    b = rs.randint(0, 2, n_samples)
    X = np.where((s < 1)[:, None], s[:, None] * m1,
                 m1 + (s - 1)[:, None] * (ends[b] - m1))
    X = X + noise * rs.standard_normal((n_samples, n_features))
    branch = np.where(s < 1, -1, b).astype(np.int64)
    return X, s / 2, branch
