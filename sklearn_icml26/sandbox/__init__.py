"""Isolated per-task workspaces over pre-cached environments (SWE-MiniSandbox, ICML 2026).

- :class:`EnvironmentCache`: a read-only, content-addressed virtual environment built once.
- :class:`TaskSandbox`: runs commands in fresh namespaces over an overlay of a cache, within
  :class:`SandboxLimits`; returns a :class:`SandboxResult` and lists each :class:`Change`.
- :func:`run_in_sandbox`: runs a Python call in a sandbox (pickled call and result).
- :func:`sandbox_available` and :func:`check_sandbox_support` tell whether this machine can
  run sandboxes (:class:`SandboxUnavailableError` says why not); :func:`cleanup_stale` removes
  the folders of sandboxes whose process died.
- the joblib backend ``"sandbox"``: ``joblib.parallel_config(backend="sandbox", cache=...)``
  runs each task of a ``Parallel`` call (each fold of ``cross_validate``/``GridSearchCV``) in a
  sandbox of its own.

See :ref:`user_guide_sandbox`.
"""

from ._cache import EnvironmentCache
from ._call import run_in_sandbox
from ._joblib_backend import _register_lazily
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
    "SandboxError",
    "SandboxLimits",
    "SandboxResult",
    "SandboxUnavailableError",
    "TaskSandbox",
    "check_sandbox_support",
    "cleanup_stale",
    "run_in_sandbox",
    "sandbox_available",
]

# joblib registers the backend "sandbox" the first time it is asked for by name
_register_lazily()
