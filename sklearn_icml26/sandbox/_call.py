"""run_in_sandbox: a Python call in a TaskSandbox, the call and its result pickled across."""

import builtins
import io
import pickle

try:
    import cloudpickle
except ImportError:  # pragma: no cover - joblib before 1.5 vendors it
    from joblib.externals import cloudpickle

from ._sandbox import SandboxError, TaskSandbox

__all__ = ["SandboxTaskError", "run_in_sandbox", "safe_loads"]

_RESULT = "/.sandbox/result.pkl"
# executed by the sandbox's interpreter: read the call from stdin, write the result file
_RUNNER = f"""
import pickle, sys, traceback
try:
    func, args, kwargs = pickle.loads(sys.stdin.buffer.read())
    out = ("ok", func(*args, **kwargs))
except BaseException as exc:
    out = ("error", type(exc).__module__, type(exc).__qualname__, str(exc),
           traceback.format_exc())
try:
    blob = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
except Exception as exc:
    blob = pickle.dumps(("error", "pickle", "PicklingError",
                         "the result cannot be pickled: " + str(exc), traceback.format_exc()))
with open({_RESULT!r}, "wb") as fh:
    fh.write(blob)
"""

_SAFE_BUILTINS = {"dict", "list", "tuple", "set", "frozenset", "int", "float", "complex",
                  "str", "bytes", "bytearray", "bool", "slice", "range", "object"}
# plain numpy arrays, scalars and dtypes (the callables numpy's pickles name)
_SAFE_GLOBALS = {
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"), ("numpy.core.multiarray", "scalar"),
    ("numpy._core.numeric", "_frombuffer"), ("numpy.core.numeric", "_frombuffer"),
    ("collections", "OrderedDict"), ("collections", "defaultdict"), ("_codecs", "encode"),
    ("copyreg", "_reconstructor"),
}
_NUMPY_DTYPE_CLASSES = "numpy.dtypes"


class SandboxTaskError(SandboxError):
    """The sandboxed call raised; ``remote_type`` and ``remote_traceback`` say how."""

    def __init__(self, message, remote_type="", remote_traceback=""):
        super().__init__(message)
        self.remote_type = remote_type
        self.remote_traceback = remote_traceback


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if module == "builtins" and name in _SAFE_BUILTINS:
            return getattr(builtins, name)
        if (module, name) in _SAFE_GLOBALS or (module == _NUMPY_DTYPE_CLASSES
                                                and name.endswith("DType")):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"a sandboxed result may hold only plain data (builtins, numpy arrays and "
            f"scalars); it references {module}.{name}. Pass trusted=True to load it anyway, "
            "which runs whatever code the result's pickle names, on the host.")


def safe_loads(data):
    """Unpickle data that came out of a sandbox, allowing plain data only.

    Parameters
    ----------
    data : bytes
        A pickle.

    Returns
    -------
    obj : object
        Builtin containers and scalars, numpy arrays, scalars and dtypes.

    Raises
    ------
    pickle.UnpicklingError
        If the pickle names any other class or function (which could run code on the host).
    """
    return _SafeUnpickler(io.BytesIO(data)).load()


def run_in_sandbox(func, *args, cache, timeout=None, limits=None, mode="auto",
                   trusted=False, sandbox=None, **kwargs):
    """Call ``func(*args, **kwargs)`` inside a :class:`TaskSandbox` and return its result.

    The call is pickled with cloudpickle (functions and classes of ``__main__`` travel by
    value, those of importable modules by reference: the cache's environment must hold them),
    run by ``/env/bin/python`` in the sandbox, and its result pickled back.

    Parameters
    ----------
    func : callable
        What to call.
    *args : tuple
        Its positional arguments.
    cache : EnvironmentCache
        The environment to run in (it must hold what ``func`` imports, and joblib).
    timeout : float, default=None
        Wall-clock limit in seconds.
    limits : SandboxLimits or dict, default=None
        Resource limits.
    mode : {"auto", "userns", "root"}, default="auto"
        Isolation mode.
    trusted : bool, default=False
        Load the result with the full unpickler. By default only plain data (builtin
        containers and scalars, numpy arrays and scalars) comes back, since unpickling
        anything else can run code the task chose on the host.
    sandbox : TaskSandbox, default=None
        An open sandbox to reuse (then ``cache``, ``limits`` and ``mode`` are its own);
        default: a fresh one, removed afterwards.
    **kwargs : dict
        Its keyword arguments.

    Returns
    -------
    result : object
        What ``func`` returned.

    Raises
    ------
    SandboxTaskError
        If the call raised inside (message and traceback of the original), timed out, or
        ended without a result (killed by a limit).
    pickle.UnpicklingError
        If the result holds more than plain data and ``trusted`` is False.

    Examples
    --------
    >>> import math
    >>> from sklearn_icml26.sandbox import EnvironmentCache, run_in_sandbox, sandbox_available
    >>> if sandbox_available():
    ...     cache = EnvironmentCache.from_venv(["joblib"])
    ...     print(run_in_sandbox(math.factorial, 5, cache=cache))
    ... else:
    ...     print(120)
    120
    """
    payload = cloudpickle.dumps((func, args, kwargs), protocol=5)
    if sandbox is None:
        with TaskSandbox(cache, limits=limits, mode=mode) as box:
            return _call(box, payload, timeout, trusted)
    return _call(sandbox, payload, timeout, trusted)


def _call(box, payload, timeout, trusted):
    result_host = box.path / "io" / "result.pkl"
    result_host.unlink(missing_ok=True)
    res = box.run(["/env/bin/python", "-I", "-c", _RUNNER], input=payload, timeout=timeout)
    stderr = res.stderr.decode(errors="replace").strip()[-2000:]
    if res.timed_out:
        raise SandboxTaskError(f"the sandboxed call ran past its {timeout:g} s limit and was "
                               f"killed; stderr: {stderr}", "TimeoutError", stderr)
    if not result_host.is_file():
        raise SandboxTaskError(f"the sandboxed call ended without a result (exit code "
                               f"{res.returncode}: killed by a limit or crashed); stderr: "
                               f"{stderr}", "", stderr)
    data = result_host.read_bytes()
    result_host.unlink()
    out = pickle.loads(data) if trusted else safe_loads(data)
    if not isinstance(out, tuple) or not out or out[0] not in ("ok", "error"):
        raise SandboxTaskError("the sandboxed call returned a malformed result")
    if out[0] == "ok":
        return out[1]
    _, module, qualname, message, tb = out
    error = SandboxTaskError(f"{module}.{qualname} in the sandbox: {message}\n\nRemote "
                             f"traceback:\n{tb}", f"{module}.{qualname}", tb)
    exc_type = getattr(builtins, qualname, None) if module == "builtins" else None
    if isinstance(exc_type, type) and issubclass(exc_type, Exception):
        try:
            raise exc_type(message) from error
        except TypeError:  # an exception type whose constructor wants other arguments
            pass
    raise error
