"""The joblib backend ``"sandbox"``: every task of a Parallel call in a sandbox of its own."""

import joblib
from joblib._parallel_backends import SequentialBackend, ThreadingBackend

from ._cache import EnvironmentCache
from ._call import run_in_sandbox

__all__ = ["SandboxBackend"]


class _SandboxedCall:
    """A joblib batch run through :func:`run_in_sandbox` (in a thread of the host)."""

    def __init__(self, func, settings):
        self.func, self.settings = func, settings

    def __call__(self):
        return run_in_sandbox(self.func, **self.settings)


class SandboxBackend(ThreadingBackend):
    """joblib backend that runs each batch of a ``Parallel`` call in its own TaskSandbox.

    Registered as ``"sandbox"`` when :mod:`sklearn_icml26.sandbox` is imported, so
    ``joblib.parallel_config(backend="sandbox", cache=cache)`` makes ``cross_validate``,
    ``GridSearchCV`` and every other joblib user run each fold in a fresh sandbox over
    ``cache``. Host threads (``n_jobs`` of them) launch the sandboxes and wait for them; the
    work happens in the sandboxes' processes. Even ``n_jobs=1`` runs sandboxed (joblib would
    otherwise run a one-worker call in the calling process, unisolated).

    Parameters
    ----------
    cache : EnvironmentCache
        Environment of the sandboxes (it must hold the estimator's code and its imports).
    timeout : float, default=None
        Wall-clock limit of each batch, in seconds.
    limits : SandboxLimits or dict, default=None
        Resource limits of each sandbox.
    mode : {"auto", "userns", "root"}, default="auto"
        Isolation mode.
    trusted : bool, default=False
        Load results with the full unpickler (needed for ``return_estimator=True``); by
        default only plain data comes back, see :func:`run_in_sandbox`.
    **kwargs
        Passed to joblib's thread backend (``nesting_level``, ``inner_max_num_threads``).

    Raises
    ------
    TypeError
        If ``cache`` is not an EnvironmentCache.

    Examples
    --------
    >>> import math
    >>> import joblib
    >>> from sklearn_icml26.sandbox import EnvironmentCache, sandbox_available
    >>> if sandbox_available():
    ...     cache = EnvironmentCache.from_venv(["joblib"])
    ...     with joblib.parallel_config(backend="sandbox", cache=cache, n_jobs=2):
    ...         out = joblib.Parallel()(joblib.delayed(math.factorial)(i) for i in range(4))
    ... else:
    ...     out = [1, 1, 2, 6]
    >>> out
    [1, 1, 2, 6]

    With ``cache = EnvironmentCache.from_venv(["scikit-learn"])``, the same
    ``parallel_config`` block around ``cross_validate(estimator, X, y)`` fits and scores each
    fold in its own sandbox.
    """

    uses_threads = False
    supports_sharedmem = False
    supports_inner_max_num_threads = False

    def __init__(self, cache=None, *, timeout=None, limits=None, mode="auto", trusted=False,
                 **kwargs):
        if not isinstance(cache, EnvironmentCache):
            raise TypeError("the 'sandbox' joblib backend needs cache=EnvironmentCache(...) "
                            "(joblib.parallel_config(backend='sandbox', cache=...)); got "
                            f"{type(cache).__name__}")
        super().__init__(**kwargs)
        self.settings = {"cache": cache, "timeout": timeout, "limits": limits, "mode": mode,
                         "trusted": trusted}

    def configure(self, n_jobs=1, parallel=None, **backend_kwargs):
        """Start the host threads; returns at least 2 so joblib never runs tasks in-process."""
        n_jobs = self.effective_n_jobs(n_jobs)
        self.parallel = parallel
        self._n_jobs = n_jobs
        # joblib runs a call whose backend reports one worker sequentially in the calling
        # process, which would skip the sandbox; the pool keeps n_jobs threads regardless
        return max(n_jobs, 2)

    def submit(self, func, callback=None):
        """Schedule ``func`` (a joblib batch) to run in a sandbox."""
        return super().submit(_SandboxedCall(func, self.settings), callback)

    def get_nested_backend(self):
        """Nested Parallel calls run sequentially inside the sandbox."""
        return SequentialBackend(nesting_level=self.nesting_level + 1), None


joblib.register_parallel_backend("sandbox", SandboxBackend)
