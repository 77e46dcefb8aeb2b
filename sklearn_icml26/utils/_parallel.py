"""Parallel loops whose warnings reach the caller, whatever ``n_jobs`` is.

scikit-learn's :class:`sklearn.utils.parallel.Parallel` carries the caller's scikit-learn
configuration and warning filters into the joblib workers, but a warning raised in a worker
process is printed on that process's stderr: the caller's ``warnings.catch_warnings`` never
sees it, and ``n_jobs=2`` shows warnings that ``n_jobs=1`` would have filtered. The
:class:`Parallel` and :func:`delayed` here record every warning inside the task and issue it
again in the caller, with its original category, message, file and line, so the caller's
filters decide what is shown, exactly as when the loop runs in one process.

Use them as a drop-in for scikit-learn's pair::

    from sklearn_icml26.utils._parallel import Parallel, delayed

    results = Parallel(n_jobs=n_jobs)(delayed(f)(x) for x in xs)

A function passed to this ``Parallel`` must be wrapped by this module's :func:`delayed`.
"""

import warnings
from functools import update_wrapper

from sklearn.utils import parallel as _sk_parallel

__all__ = ["Parallel", "delayed", "record_warnings"]


class _RecordedWarning:
    """A warning's fields, kept so that it can be issued again elsewhere (picklable)."""

    __slots__ = ("message", "category", "filename", "lineno")

    def __init__(self, record):
        self.message = record.message
        self.category = record.category
        self.filename = record.filename
        self.lineno = record.lineno

    def __getstate__(self):
        return (self.message, self.category, self.filename, self.lineno)

    def __setstate__(self, state):
        self.message, self.category, self.filename, self.lineno = state


class _TaskResult:
    """The return value of one task and the warnings it raised."""

    __slots__ = ("value", "warnings")

    def __init__(self, value, recorded):
        self.value = value
        self.warnings = recorded

    def __getstate__(self):
        return (self.value, self.warnings)

    def __setstate__(self, state):
        self.value, self.warnings = state


class _RecordWarnings:
    """Call ``function`` and return its value with every warning it raised."""

    def __init__(self, function):
        # not ``self.function``: scikit-learn's wrapper copies this object's __dict__ onto itself
        self._recorded_function = function
        update_wrapper(self, function)

    def __call__(self, *args, **kwargs):
        return _TaskResult(*record_warnings(self._recorded_function, *args, **kwargs))


def record_warnings(function, *args, **kwargs):
    """Call ``function`` and return ``(value, recorded)``, every warning it raised kept.

    ``recorded`` lists objects with ``message``, ``category``, ``filename`` and ``lineno``
    (picklable). For a caller that issues the warnings itself, e.g. with more context.
    """
    with warnings.catch_warnings(record=True) as records:
        # record everything; the caller's own filters decide when the warnings are issued
        # again (a worker's "once"/"default" registry would otherwise drop repeats across
        # tasks, and the filters copied into the worker would be applied twice)
        warnings.simplefilter("always")
        value = function(*args, **kwargs)
    return value, [_RecordedWarning(r) for r in records]


def delayed(function):
    """Wrap ``function`` for :class:`Parallel` (see the module docstring)."""
    return _sk_parallel.delayed(_RecordWarnings(function))


class Parallel(_sk_parallel.Parallel):
    """scikit-learn's ``Parallel`` that issues the tasks' warnings again in the caller.

    Accepts every argument of :class:`sklearn.utils.parallel.Parallel` (``return_as`` included:
    with a generator the warnings of a task are issued when its result is consumed). Under a
    joblib backend that cannot return generators (ray's ``"ray"`` backend), a requested
    generator is collected as a list and returned as an iterator over it, so the same code
    runs on every backend.
    """

    def __init__(self, *args, **kwargs):
        self._list_as_iterator = False
        try:
            super().__init__(*args, **kwargs)
        except ValueError as exc:
            if "does not support return_as" not in str(exc):
                raise
            kwargs["return_as"] = "list"
            if len(args) > 3:  # return_as is joblib's fourth positional parameter
                args = args[:3] + ("list",) + args[4:]
            super().__init__(*args, **kwargs)
            self._list_as_iterator = True

    def __call__(self, iterable):
        output = super().__call__(iterable)
        # one registry per call: "default"/"once" filters show a repeated warning once per loop,
        # as a sequential loop over the same code would
        registry = {}
        if self.return_as == "list":
            values = [_unwrap(result, registry) for result in output]
            return iter(values) if self._list_as_iterator else values
        return (_unwrap(result, registry) for result in output)


def _unwrap(result, registry):
    if not isinstance(result, _TaskResult):
        raise TypeError(
            "sklearn_icml26.utils._parallel.Parallel runs only functions wrapped by "
            f"sklearn_icml26.utils._parallel.delayed; a task returned {type(result).__name__}."
        )
    for w in result.warnings:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, registry=registry)
    return result.value
