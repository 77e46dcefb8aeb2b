"""Forecasting many interacting systems at the cost of one model.

:class:`ESERegressor` (Equilibrium State Estimation) forecasts the aggregate of a panel of
systems with one regressor and splits it with equilibrium shares; :class:`PerSystemRegressor`
is the baseline that fits one regressor per system. :func:`sliding_window` and
:func:`last_window` build the ``X``/``y`` windows both take; :class:`ForecastDisplay` and
:class:`EquilibriumSharesDisplay` plot forecasts and shares. See :ref:`user_guide_ese`.
"""

from ._ese import ESERegressor
from ._per_system import PerSystemRegressor
from ._plot import EquilibriumSharesDisplay, ForecastDisplay
from ._windows import last_window, sliding_window

__all__ = ["ESERegressor", "EquilibriumSharesDisplay", "ForecastDisplay", "PerSystemRegressor",
           "last_window", "sliding_window"]
