"""sklearn_icml26: methods published at ICML 2026 as scikit-learn estimators.

Every estimator is importable from its field module (``sklearn_icml26.forecasting``, ...) and from
the top level. Top-level names are loaded lazily, so ``import sklearn_icml26`` stays cheap (torch
is imported only when a torch-backed estimator is used).
"""

import importlib

__version__ = "0.1.0.dev0"

# public name -> submodule that defines it; each method adds its estimators here
_LAZY_NAMES = {
    "MPFSurface": "surface",
    "HDTreeLineage": "lineage",
    "SkewDCausalDiscoverer": "causal_discovery",
    "SkewNormalLSNMRegressor": "causal_discovery",
    "LongitudinalRegressionAdjuster": "treatment_effects",
    "LinearGaussianTransition": "treatment_effects",
    "get_data_home": "datasets",
    "all_estimators": "utils.discovery",
    "show_versions": "utils._show_versions",
    "ESERegressor": "forecasting",
    "PerSystemRegressor": "forecasting",
    "HolderTransformerRegressor": "approximation",
    "NeuroMambaImputer": "imputation",
    "AdamO": "optim",
    "OfflineQRegressor": "optim",
    "ViolinViTClassifier": "vision",
    "ViolinAttention": "vision",
    "HubnessBalancedCodebook": "editing",
    "SentenceEmbedder": "memory",
    "StreamingMemory": "memory",
    "IncrementalBM25": "memory",
    "GatedMemoryReader": "memory",
    "SemanticInfoGainScorer": "retrieval",
    "InfoGainReranker": "retrieval",
    "PINNRegressor": "pinn",
    "PINNInfluence": "pinn",
    "TaskSandbox": "sandbox",
    "EnvironmentCache": "sandbox",
    "run_in_sandbox": "sandbox",
    "SafetyNeuronFinder": "safety",
}

_SUBMODULES = [
    "approximation",
    "base",
    "causal_discovery",
    "datasets",
    "editing",
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

__all__ = sorted([*_LAZY_NAMES, *_SUBMODULES, "__version__"])


def __getattr__(name):
    if name in _LAZY_NAMES:
        module = importlib.import_module(f"{__name__}.{_LAZY_NAMES[name]}")
        return getattr(module, name)
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return __all__
