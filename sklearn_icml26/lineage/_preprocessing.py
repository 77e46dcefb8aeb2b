"""Count preprocessing for single-cell data from scikit-learn pieces (scanpy-free)."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.decomposition import PCA
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.utils._param_validation import Interval, validate_params
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["make_count_pipeline"]


def _check_counts(estimator, X, reset):
    X = validate_data(estimator, X, reset=reset, dtype=np.float64)
    if X.size and X.min() < 0:
        raise ValueError(
            f"Negative values in data passed to {type(estimator).__name__}: X must hold "
            f"non-negative counts; got a minimum of {X.min():g}."
        )
    return X


class _CountNormalizer(TransformerMixin, BaseEstimator):
    """Library-size normalisation: each row scaled to ``target_sum`` total counts."""

    _parameter_constraints = {"target_sum": [Interval(Real, 0, None, closed="neither"), None]}

    def __init__(self, target_sum=None):
        self.target_sum = target_sum

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        X = _check_counts(self, X, reset=True)
        totals = X.sum(axis=1)
        if self.target_sum is not None:
            self.target_sum_ = float(self.target_sum)
        else:
            median = float(np.median(totals)) if totals.size else 1.0
            self.target_sum_ = median if median > 0 else 1.0
        return self

    def transform(self, X):
        check_is_fitted(self)
        X = _check_counts(self, X, reset=False)
        totals = X.sum(axis=1, keepdims=True)
        return X * self.target_sum_ / np.where(totals > 0, totals, 1.0)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags


class _TopVarianceSelector(TransformerMixin, BaseEstimator):
    """Keep the ``n_top`` columns of largest variance (fitted), in their original order."""

    _parameter_constraints = {"n_top": [Interval(Integral, 1, None, closed="left")]}

    def __init__(self, n_top=2000):
        self.n_top = n_top

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        X = validate_data(self, X, dtype=np.float64)
        var = X.var(axis=0)
        k = min(self.n_top, X.shape[1])
        self.support_ = np.sort(np.argsort(-var, kind="stable")[:k])
        return self

    def transform(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X[:, self.support_]


@validate_params(
    {
        "n_top_genes": [Interval(Integral, 1, None, closed="left")],
        "n_pca": [Interval(Integral, 1, None, closed="left"), None],
        "target_sum": [Interval(Real, 0, None, closed="neither"), None],
    },
    prefer_skip_nested_validation=True,
)
def make_count_pipeline(n_top_genes=2000, n_pca=None, target_sum=None):
    """Preprocessing of raw single-cell counts: normalise, log1p, top genes, scale (PCA).

    The steps are: library-size normalisation (each cell scaled to ``target_sum`` total
    counts), ``log1p``, selection of the ``n_top_genes`` genes of largest variance (fitted on
    the training cells), per-gene standardisation and, if ``n_pca`` is set, a PCA.

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

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        Unfitted pipeline with steps ``normalize``, ``log1p``, ``select``, ``scale`` (and
        ``pca``). Fitting or transforming negative counts raises a ``ValueError``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.lineage import make_count_pipeline
    >>> counts = np.random.default_rng(0).poisson(2.0, size=(50, 30))
    >>> make_count_pipeline(n_top_genes=10, n_pca=3).fit_transform(counts).shape
    (50, 3)
    """
    steps = [
        ("normalize", _CountNormalizer(target_sum=target_sum)),
        ("log1p", FunctionTransformer(np.log1p, feature_names_out="one-to-one")),
        ("select", _TopVarianceSelector(n_top=n_top_genes)),
        ("scale", StandardScaler()),
    ]
    if n_pca is not None:
        steps.append(("pca", PCA(n_components=n_pca, random_state=0)))
    return Pipeline(steps)
