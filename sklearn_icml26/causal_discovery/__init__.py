"""causal_discovery estimators."""

from ._plot import CauseEffectDisplay, DecisionRateDisplay
from ._skewd import SkewDCausalDiscoverer, score_pairs
from ._skewnormal import SkewNormalLSNMRegressor

__all__ = ["CauseEffectDisplay", "DecisionRateDisplay", "SkewDCausalDiscoverer",
           "SkewNormalLSNMRegressor", "score_pairs"]
