"""causal_discovery estimators."""

from ._skewd import SkewDCausalDiscoverer, score_pairs
from ._skewnormal import SkewNormalLSNMRegressor

__all__ = ["SkewDCausalDiscoverer", "SkewNormalLSNMRegressor", "score_pairs"]
