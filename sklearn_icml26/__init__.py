"""sklearn_icml26: methods published at ICML 2026 as scikit-learn estimators.

As in scikit-learn, every public name lives in one field module (``sklearn_icml26.forecasting``,
``sklearn_icml26.datasets``, ``sklearn_icml26.metrics``, ...) and is imported from there::

    from sklearn_icml26.forecasting import ESERegressor

The top level holds the field modules, ``__version__`` and :func:`show_versions`. Field modules
are loaded lazily on first access, so ``import sklearn_icml26`` stays cheap (torch is imported
only when a torch-backed module is used).
"""

import importlib

__version__ = "0.1.0.dev0"

# the field modules, loaded on first attribute access
_SUBMODULES = [
    "approximation",
    "base",
    "causal_discovery",
    "datasets",
    "editing",
    "feature_extraction",
    "forecasting",
    "imputation",
    "lineage",
    "memory",
    "metrics",
    "optim",
    "pinn",
    "retrieval",
    "safety",
    "sandbox",
    "surface",
    "treatment_effects",
    "utils",
    "vision",
]

__all__ = [*_SUBMODULES, "__version__", "show_versions"]


def __getattr__(name):
    if name == "show_versions":
        from .utils._show_versions import show_versions

        return show_versions
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
