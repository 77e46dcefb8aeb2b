"""treatment_effects estimators."""

from ._dynamic_ra import LinearGaussianTransition, LongitudinalRegressionAdjuster, panel_to_arrays

__all__ = ["LinearGaussianTransition", "LongitudinalRegressionAdjuster", "panel_to_arrays"]
