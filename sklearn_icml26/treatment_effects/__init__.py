"""Time-resolved treatment effects of randomised trials with repeated measures.

:class:`LongitudinalRegressionAdjuster` (DynamicRA) estimates the effect of a treatment per
period, adjusting for baseline and time-varying covariates through a transition model of the
history (:class:`LinearGaussianTransition` by default) integrated forward by Monte Carlo, with
cross-fitting and influence-function inference. :func:`panel_to_arrays` turns a long panel into
its inputs; :class:`LongitudinalEffectDisplay` plots the effect curve. See
:ref:`user_guide_longitudinal`.
"""

from ._dynamic_ra import LongitudinalRegressionAdjuster
from ._panel import panel_to_arrays
from ._plot import LongitudinalEffectDisplay
from ._transition import LinearGaussianTransition

__all__ = ["LinearGaussianTransition", "LongitudinalEffectDisplay",
           "LongitudinalRegressionAdjuster", "panel_to_arrays"]
