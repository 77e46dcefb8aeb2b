"""The joblib backend ``"sandbox"``: every task of a Parallel call in a sandbox of its own."""

import copy
import sys

import joblib

from .._compat import (
    BatchedCalls,
    PoolManagerMixin,
    SequentialBackend,
    ThreadingBackend,
    register_joblib_backend_lazily,
)
from ._cache import EnvironmentCache
from ._call import run_in_sandbox

__all__ = ["SandboxBackend"]


def _importable(module, cache):
    top = module.split(".")[0]
    if top == "builtins" or top in sys.stdlib_module_names:
        return True
    site = next(cache.env_dir.glob("lib/python3*/site-packages"), None)
    return site is not None and any(site.glob(f"{top}[./]*")) or (site / top).is_dir()


def _portable(func, cache):
    """The batch with the warning filters the sandbox cannot import dropped.

    scikit-learn's ``delayed`` sends the caller's warning filters along with each call; a
    filter on a warning class of a package the cache lacks (torch, say) would make the whole
    call fail to unpickle in the sandbox, although it cannot matter there.
    """
    if not isinstance(func, BatchedCalls):
        return func
    func = copy.copy(func)
    items = []
    for f, args, kwargs in func.items:
        filters = getattr(f, "warning_filters", None)
        if filters:
            kept = [flt for flt in filters
                    if not isinstance(flt[2], type) or _importable(flt[2].__module__, cache)]
            if len(kept) != len(filters):
                f = copy.copy(f)
                f.warning_filters = kept
        items.append((f, args, kwargs))
    func.items = items
    return func


class _SandboxedCall:
    """A joblib batch run through :func:`run_in_sandbox` (in a thread of the host)."""

    def __init__(self, func, settings):
        self.func, self.settings = func, settings

    def __call__(self):
        return run_in_sandbox(_portable(self.func, self.settings["cache"]), **self.settings)


class SandboxBackend(ThreadingBackend):
    """A joblib backend that runs each batch of a ``Parallel`` call in its own TaskSandbox.

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

    The example calls joblib's own ``Parallel`` and ``delayed`` because its cache holds joblib
    alone. scikit-learn's (:mod:`sklearn.utils.parallel`, which carry the caller's warning
    filters and configuration to the workers, and which scikit-learn's own ``n_jobs`` paths
    use) need scikit-learn in the cache and its import in every sandbox, which makes short
    calls much slower (see :ref:`user_guide_sandbox`).
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

    def effective_n_jobs(self, n_jobs):
        """Number of workers joblib is told: at least 2.

        joblib runs a call with one worker in the calling process, which would be unisolated.

        Parameters
        ----------
        n_jobs : int or None
            Requested number of jobs.

        Returns
        -------
        n_jobs : int
            ``max(2, n)`` with ``n`` joblib's usual reading of ``n_jobs``.
        """
        return max(super().effective_n_jobs(n_jobs), 2)

    def configure(self, n_jobs=1, parallel=None, **backend_kwargs):
        """Prepare ``n_jobs`` host threads.

        Parameters
        ----------
        n_jobs : int or None, default=1
            Sandboxes running at once.
        parallel : joblib.Parallel, default=None
            The calling ``Parallel``.
        **backend_kwargs : dict
            Unused (joblib's memmapping options do not apply).

        Returns
        -------
        n_jobs : int
            At least 2, see :meth:`effective_n_jobs`.
        """
        self.parallel = parallel
        # the pool has the threads asked for; joblib is told at least 2 so that it never runs
        # a one-worker call in the calling process, which would skip the sandbox
        self._n_jobs = PoolManagerMixin.effective_n_jobs(self, n_jobs)
        return max(self._n_jobs, 2)

    def submit(self, func, callback=None):
        """Schedule a joblib batch to run in a sandbox.

        Parameters
        ----------
        func : callable
            The batch (a ``joblib.parallel.BatchedCalls``).
        callback : callable, default=None
            Called with the outcome.

        Returns
        -------
        future : multiprocessing.pool.AsyncResult
            The pending result.
        """
        return super().submit(_SandboxedCall(func, self.settings), callback)

    def get_nested_backend(self):
        """Backend of nested ``Parallel`` calls: sequential, inside the sandbox.

        Returns
        -------
        backend, n_jobs : tuple of (SequentialBackend, None)
            The nested backend and its default number of jobs.
        """
        return SequentialBackend(nesting_level=self.nesting_level + 1), None



def register_sandbox_backend():
    """Register the joblib backend ``"sandbox"`` (idempotent).

    Not needed in ordinary use: importing :mod:`sklearn_icml26.sandbox` only tells joblib how
    to register the backend the first time ``"sandbox"`` is asked for by name
    (``joblib.parallel_config(backend="sandbox")``, ``Parallel(backend="sandbox")``), so that no
    import of the package changes joblib's registry.
    """
    joblib.register_parallel_backend("sandbox", SandboxBackend)


def _register_lazily():
    """Let joblib register ``"sandbox"`` on its first use by name, not at import."""
    register_joblib_backend_lazily("sandbox", register_sandbox_backend)
