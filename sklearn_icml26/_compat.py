"""The one place where the package imports private upstream API.

scikit-learn's parameter validation (``_param_validation``, ``_fit_context``), a few of its
private validation helpers, joblib's backend base classes and torch's ``_foreach`` kernels are
not public API: they may change in any minor release. Every module of the package imports them
from here and nowhere else (``tests/test_compat.py`` checks it), so an upstream change is
fixed in one file, and the pins in ``pyproject.toml`` name the versions this file is written for.
"""

from joblib import parallel as _joblib_parallel
from joblib._parallel_backends import PoolManagerMixin, SequentialBackend, ThreadingBackend
from joblib.parallel import BatchedCalls
from sklearn.base import _fit_context
from sklearn.utils._optional_dependencies import check_matplotlib_support
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    Options,
    StrOptions,
    validate_params,
)
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.metadata_routing import _routing_enabled
from sklearn.utils.validation import _check_feature_names_in, _check_sample_weight

__all__ = [
    "BatchedCalls",
    "HasMethods",
    "Hidden",
    "Interval",
    "Options",
    "PoolManagerMixin",
    "SequentialBackend",
    "StrOptions",
    "ThreadingBackend",
    "register_joblib_backend_lazily",
    "_check_feature_names_in",
    "_check_sample_weight",
    "_fit_context",
    "_get_output_config",
    "_routing_enabled",
    "check_matplotlib_support",
    "torch_foreach",
    "validate_params",
]


class _TorchForeach:
    """torch's multi-tensor kernels: ``torch_foreach.add_(...)`` is ``torch._foreach_add_``."""

    def __getattr__(self, name):
        import torch  # not at import time: the numpy-only estimators do not need torch

        return getattr(torch, f"_foreach_{name}")


torch_foreach = _TorchForeach()


def register_joblib_backend_lazily(name, register):
    """Let joblib call ``register()`` the first time backend ``name`` is asked for by name.

    joblib keeps such hooks in ``joblib.parallel.EXTERNAL_BACKENDS`` (how it registers its
    own dask and ray backends); nothing is registered until the name is used. Returns whether
    the hook was installed (``False``: this joblib has no such hook, ``register`` was called).
    """
    external = getattr(_joblib_parallel, "EXTERNAL_BACKENDS", None)
    if isinstance(external, dict):
        external.setdefault(name, register)
        return True
    register()
    return False
