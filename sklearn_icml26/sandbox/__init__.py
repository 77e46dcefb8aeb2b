"""Isolated per-task workspaces over pre-cached environments (SWE-MiniSandbox, ICML 2026).

- :class:`EnvironmentCache`: a read-only, content-addressed virtual environment built once.
- :class:`TaskSandbox`: runs commands in fresh namespaces over an overlay of a cache.
- :func:`run_in_sandbox`: runs a Python call in a sandbox (pickled call and result).
- the joblib backend ``"sandbox"``: ``joblib.parallel_config(backend="sandbox", cache=...)``
  runs each task of a ``Parallel`` call (each fold of ``cross_validate``/``GridSearchCV``) in a
  sandbox of its own.
"""

from ._cache import EnvironmentCache, default_cache_root, tree_digest
from ._call import run_in_sandbox
from ._joblib_backend import SandboxBackend, _register_lazily
from ._limits import SandboxLimits
from ._sandbox import (
    Change,
    SandboxError,
    SandboxResult,
    SandboxUnavailableError,
    TaskSandbox,
    check_sandbox_support,
    cleanup_stale,
    sandbox_available,
)

__all__ = [
    "Change",
    "EnvironmentCache",
    "SandboxBackend",
    "SandboxError",
    "SandboxLimits",
    "SandboxResult",
    "SandboxUnavailableError",
    "TaskSandbox",
    "check_sandbox_support",
    "cleanup_stale",
    "default_cache_root",
    "run_in_sandbox",
    "sandbox_available",
    "tree_digest",
]

# joblib registers the backend "sandbox" the first time it is asked for by name
_register_lazily()
