"""treatment_effects estimators."""

from ._dynamic_ra import LinearGaussianTransition, LongitudinalRegressionAdjuster, panel_to_arrays
from ._plot import LongitudinalEffectDisplay

__all__ = ["LinearGaussianTransition", "LongitudinalEffectDisplay",
           "LongitudinalRegressionAdjuster", "panel_to_arrays"]
