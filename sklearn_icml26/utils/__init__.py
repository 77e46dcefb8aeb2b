"""Utilities: the discovery of the package's estimators.

:func:`all_estimators` lists every public estimator class (as
:func:`sklearn.utils.discovery.all_estimators` does for scikit-learn).
"""

from ._discovery import all_estimators

__all__ = ["all_estimators"]
