"""Cause-effect discovery with skew-normal location-scale noise models (SkewD).

:class:`SkewDCausalDiscoverer` decides the causal direction of a pair of variables (or orients
the edges of a small graph) by comparing the likelihoods and residual independence of the
models fitted in each direction; :class:`SkewNormalLSNMRegressor` is the location-scale
regression with skew-normal noise inside it; :func:`score_pairs` scores a benchmark of pairs;
:class:`CauseEffectDisplay` and :class:`DecisionRateDisplay` plot fits and decision rates. See
:ref:`user_guide_skewd`.
"""

from ._plot import CauseEffectDisplay, DecisionRateDisplay
from ._skewd import SkewDCausalDiscoverer, score_pairs
from ._skewnormal import SkewNormalLSNMRegressor

__all__ = ["CauseEffectDisplay", "DecisionRateDisplay", "SkewDCausalDiscoverer",
           "SkewNormalLSNMRegressor", "score_pairs"]
