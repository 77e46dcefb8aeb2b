"""treatment_effects estimators."""

from ._dynamic_ra import LongitudinalRegressionAdjuster
from ._panel import panel_to_arrays
from ._plot import LongitudinalEffectDisplay
from ._transition import LinearGaussianTransition

__all__ = ["LinearGaussianTransition", "LongitudinalEffectDisplay",
           "LongitudinalRegressionAdjuster", "panel_to_arrays"]
