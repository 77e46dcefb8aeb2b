"""forecasting estimators."""

from ._ese import ESERegressor, PerSystemRegressor, last_window, sliding_window

__all__ = ["ESERegressor", "PerSystemRegressor", "last_window", "sliding_window"]
