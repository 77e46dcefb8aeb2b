"""forecasting estimators."""

from ._ese import ESERegressor
from ._per_system import PerSystemRegressor
from ._plot import EquilibriumSharesDisplay, ForecastDisplay
from ._windows import last_window, sliding_window

__all__ = ["ESERegressor", "EquilibriumSharesDisplay", "ForecastDisplay", "PerSystemRegressor",
           "last_window", "sliding_window"]
