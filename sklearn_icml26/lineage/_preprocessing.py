"""Count preprocessing for single-cell data from scikit-learn pieces (scanpy-free).

Every step is a transformer with ``get_feature_names_out`` and ``set_output``. Raw counts may
be a CSR/CSC matrix: normalisation and ``log1p`` keep them sparse (as a sparse-column
DataFrame under ``set_output(transform="pandas")``), and only the selected genes are made
dense, by the gene selection step, since scaling centres them.
"""

from numbers import Integral, Real

import numpy as np
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.decomposition import PCA
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.sparsefuncs import mean_variance_axis
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import (
    Interval,
    _check_feature_names_in,
    _fit_context,
    _get_output_config,
    validate_params,
)
from ._anndata import _is_anndata, _read_anndata

__all__ = ["make_count_pipeline"]

_SPARSE_FORMATS = ("csr", "csc")


def _check_counts(estimator, X, reset):
    X = validate_data(estimator, X, reset=reset, accept_sparse=_SPARSE_FORMATS,
                      dtype=np.float64)
    if X.shape[0] and X.shape[1]:
        low = float(X.min())
        if low < 0:
            raise ValueError(
                f"Negative values in data passed to {type(estimator).__name__}: X must hold "
                f"non-negative counts; got a minimum of {low:g}."
            )
    return X


class _SparseOutputMixin:
    """Keeps sparse results sparse under ``set_output(transform="pandas")``.

    scikit-learn's output wrapper refuses sparse results; these steps return a DataFrame of
    sparse columns instead (the next step reads it back as a sparse matrix).
    """

    def _sparse_output(self, Xt, X):
        if issparse(Xt) and _get_output_config("transform", self)["dense"] == "pandas":
            import pandas as pd

            index = X.index if isinstance(X, pd.DataFrame) else None
            return pd.DataFrame.sparse.from_spmatrix(
                Xt, index=index, columns=self.get_feature_names_out())
        return Xt


class _CountNormalizer(_SparseOutputMixin, OneToOneFeatureMixin, TransformerMixin,
                       BaseEstimator):
    """Library-size normalisation: each row scaled to ``target_sum`` total counts.

    Dense input gives dense output; CSR/CSC input keeps its format. An ``anndata.AnnData``
    gives its ``X``, ``layers[layer]`` or ``obsm[use_rep]`` (the gene names, ``var_names``,
    become the feature names unless ``use_rep`` is set).
    """

    _parameter_constraints = {"target_sum": [Interval(Real, 0, None, closed="neither"), None],
                              "layer": [str, None], "use_rep": [str, None]}

    def __init__(self, target_sum=None, layer=None, use_rep=None):
        self.target_sum = target_sum
        self.layer = layer
        self.use_rep = use_rep

    def _read(self, X):
        if _is_anndata(X):
            matrix = _read_anndata(X, self.layer, self.use_rep, caller="make_count_pipeline")
            names = None if self.use_rep is not None else np.asarray(X.var_names, dtype=object)
            return matrix, names
        return X, None

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        X, names = self._read(X)
        X = _check_counts(self, X, reset=True)
        # gene names of an AnnData (its matrix carries none, so validate_data cannot set
        # feature_names_in_ without warning on every AnnData transform)
        self.var_names_ = names
        totals = np.asarray(X.sum(axis=1), dtype=np.float64).ravel()
        if self.target_sum is not None:
            self.target_sum_ = float(self.target_sum)
        else:
            median = float(np.median(totals)) if totals.size else 1.0
            self.target_sum_ = median if median > 0 else 1.0
        return self

    def transform(self, X):
        check_is_fitted(self)
        X, _ = self._read(X)
        Xc = _check_counts(self, X, reset=False)
        totals = np.asarray(Xc.sum(axis=1), dtype=np.float64).ravel()
        totals = np.where(totals > 0, totals, 1.0)
        if issparse(Xc):
            # entry by entry the same operations as the dense branch (same bits)
            Xc = Xc.copy()
            row = (np.repeat(np.arange(Xc.shape[0]), np.diff(Xc.indptr)) if Xc.format == "csr"
                   else Xc.indices)
            Xc.data = Xc.data * self.target_sum_ / totals[row]
            return self._sparse_output(Xc, X)
        return Xc * self.target_sum_ / totals[:, None]

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns (the input's, or an AnnData's ``var_names``).

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input column names; ``None`` uses the AnnData's ``var_names`` when the fit saw
            an AnnData, else ``feature_names_in_`` or ``x0, x1, ...``.

        Returns
        -------
        feature_names_out : ndarray of str
            One name per column.
        """
        check_is_fitted(self)
        if input_features is None and self.var_names_ is not None:
            return self.var_names_.copy()
        return super().get_feature_names_out(input_features)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.input_tags.sparse = True
        return tags


class _Log1p(_SparseOutputMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """``log(1 + x)`` of non-negative values (zeros stay zeros: sparse input stays sparse)."""

    def fit(self, X, y=None):
        _check_counts(self, X, reset=True)
        return self

    def transform(self, X):
        check_is_fitted(self)
        Xc = _check_counts(self, X, reset=False)
        if issparse(Xc):
            return self._sparse_output(Xc.log1p(), X)
        return np.log1p(Xc)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True  # normalised counts
        tags.input_tags.sparse = True
        return tags


class _TopVarianceSelector(TransformerMixin, BaseEstimator):
    """Keep the ``n_top`` columns of largest variance (fitted), in their original order.

    The output is dense: the selected columns of a CSR/CSC input are densified here.
    """

    _parameter_constraints = {"n_top": [Interval(Integral, 1, None, closed="left")]}

    def __init__(self, n_top=2000):
        self.n_top = n_top

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        X = validate_data(self, X, accept_sparse=_SPARSE_FORMATS, dtype=np.float64)
        var = mean_variance_axis(X, axis=0)[1] if issparse(X) else X.var(axis=0)
        k = min(self.n_top, X.shape[1])
        self.support_ = np.sort(np.argsort(-var, kind="stable")[:k])
        return self

    def transform(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, accept_sparse=_SPARSE_FORMATS,
                          dtype=np.float64)
        if issparse(X):
            return X.tocsc()[:, self.support_].toarray()
        return X[:, self.support_]

    def get_feature_names_out(self, input_features=None):
        """Names of the selected columns.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input column names; ``None`` uses ``feature_names_in_`` or ``x0, x1, ...``.

        Returns
        -------
        feature_names_out : ndarray of str
            The names of the ``support_`` columns.
        """
        check_is_fitted(self)
        return np.asarray(_check_feature_names_in(self, input_features)[self.support_],
                          dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


@validate_params(
    {
        "n_top_genes": [Interval(Integral, 1, None, closed="left")],
        "n_pca": [Interval(Integral, 1, None, closed="left"), None],
        "target_sum": [Interval(Real, 0, None, closed="neither"), None],
        "layer": [str, None],
        "use_rep": [str, None],
    },
    prefer_skip_nested_validation=True,
)
def make_count_pipeline(n_top_genes=2000, n_pca=None, target_sum=None, *, layer=None,
                        use_rep=None):
    """Preprocessing of raw single-cell counts: normalise, log1p, top genes, scale (PCA).

    The steps are: library-size normalisation (each cell scaled to ``target_sum`` total
    counts), ``log1p``, selection of the ``n_top_genes`` genes of largest variance (fitted on
    the training cells), per-gene standardisation and, if ``n_pca`` is set, a PCA.

    The counts may be dense, a SciPy CSR/CSC matrix (other sparse formats are converted
    to CSR) or an ``anndata.AnnData`` (its ``X``, a layer or an ``obsm`` entry; the gene
    names of ``var_names`` become the feature names). Sparse counts stay sparse through
    normalisation and ``log1p``; the selection step densifies only the selected genes
    (scaling centres them), so sparse and dense counts give the same output. Every step
    has ``get_feature_names_out``, so the pipeline supports
    ``set_output(transform="pandas")``: gene names (a DataFrame's columns, else
    ``x0, x1, ...``) of the selected genes, or ``pca0, pca1, ...``. Under pandas output the
    sparse intermediate results are DataFrames of sparse columns.

    Parameters
    ----------
    n_top_genes : int, default=2000
        Number of highly variable genes kept (all genes if there are fewer).
    n_pca : int or None, default=None
        Number of principal components; ``None`` keeps the scaled genes (what
        :class:`~sklearn_icml26.lineage.HDTreeLineage` should get, so that generated cells
        are genes).
    target_sum : float or None, default=None
        Total counts per cell after normalisation; ``None`` uses the median total of the
        training cells.
    layer : str or None, default=None
        When the input is an ``anndata.AnnData``: read the counts from ``layers[layer]``
        (e.g. ``"counts"``) instead of ``X``. Ignored for other inputs.
    use_rep : str or None, default=None
        When the input is an ``anndata.AnnData``: read ``obsm[use_rep]`` instead of ``X``
        (it must hold non-negative counts). Ignored for other inputs; at most one of
        ``layer`` and ``use_rep``.

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        Unfitted pipeline with steps ``normalize``, ``log1p``, ``select``, ``scale`` (and
        ``pca``). Fitting or transforming negative counts raises a ``ValueError``.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.sparse import csr_matrix
    >>> from sklearn_icml26.lineage import make_count_pipeline
    >>> counts = np.random.default_rng(0).poisson(2.0, size=(50, 30))
    >>> make_count_pipeline(n_top_genes=10, n_pca=3).fit_transform(counts).shape
    (50, 3)
    >>> make_count_pipeline(n_top_genes=10).fit_transform(csr_matrix(counts)).shape
    (50, 10)
    """
    steps = [
        ("normalize", _CountNormalizer(target_sum=target_sum, layer=layer, use_rep=use_rep)),
        ("log1p", _Log1p()),
        ("select", _TopVarianceSelector(n_top=n_top_genes)),
        ("scale", StandardScaler()),
    ]
    if n_pca is not None:
        steps.append(("pca", PCA(n_components=n_pca, random_state=0)))
    return Pipeline(steps)
