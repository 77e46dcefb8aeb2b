"""forecasting estimators."""

from ._ese import ESERegressor, PerSystemRegressor, last_window, sliding_window
from ._plot import EquilibriumSharesDisplay, ForecastDisplay

__all__ = ["ESERegressor", "EquilibriumSharesDisplay", "ForecastDisplay", "PerSystemRegressor",
           "last_window", "sliding_window"]
