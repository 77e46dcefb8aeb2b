"""run_in_sandbox and the joblib backend: pickled calls, safe results, identical CV scores."""

import pickle
import sys

import cloudpickle
import joblib
import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_icml26.sandbox import (
    EnvironmentCache,
    SandboxLimits,
    SandboxUnavailableError,
    TaskSandbox,
    check_sandbox_support,
    run_in_sandbox,
)
from sklearn_icml26.sandbox._call import SandboxTaskError, safe_loads
from sklearn_icml26.sandbox._joblib_backend import SandboxBackend

try:
    check_sandbox_support()
    REASON = ""
except SandboxUnavailableError as exc:  # pragma: no cover - depends on the kernel
    REASON = str(exc)

pytestmark = pytest.mark.skipif(bool(REASON), reason=f"no sandbox on this machine: {REASON}")

# the classes below live in this test module, which the sandbox cannot import: send by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])


class UntrustedCentroid(ClassifierMixin, BaseEstimator):
    """A submitted estimator: nearest centroid, plus an attempt to leave a file on the host."""

    def __init__(self, shrink=0.0, probe_path=None):
        self.shrink = shrink
        self.probe_path = probe_path

    def fit(self, X, y):
        X, y = validate_data(self, X, y)
        if self.probe_path is not None:
            try:
                with open(self.probe_path, "w") as fh:
                    fh.write("escaped")
            except OSError:
                pass
        self.classes_ = np.unique(y)
        centre = X.mean(axis=0)
        self.centroids_ = np.array([(1 - self.shrink) * X[y == c].mean(axis=0)
                                    + self.shrink * centre for c in self.classes_])
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        d = ((X[:, None, :] - self.centroids_[None]) ** 2).sum(-1)
        return self.classes_[d.argmin(1)]


class Gadget:
    """Not plain data: must not be unpickled on the host by default."""

    def __reduce__(self):
        return (print, ("this would run on the host",))


def _make_gadget():
    return Gadget()


def _raise():
    raise KeyError("missing-key")


@pytest.fixture(scope="module")
def sk_cache():
    """scikit-learn and its dependencies, from the running venv (built once per machine)."""
    return EnvironmentCache.from_venv(["scikit-learn"])


@pytest.fixture(scope="module")
def small_cache():
    return EnvironmentCache.from_venv(["joblib"])


def test_run_in_sandbox_roundtrip_and_errors(small_cache):
    assert run_in_sandbox(divmod, 17, 5, cache=small_cache) == (3, 2)
    with pytest.raises(ModuleNotFoundError, match="numpy"):  # not in this environment
        run_in_sandbox(np.arange, 6, cache=small_cache)
    with pytest.raises(KeyError, match="missing-key") as info:
        run_in_sandbox(_raise, cache=small_cache)
    assert isinstance(info.value.__cause__, SandboxTaskError)
    assert "_raise" in info.value.__cause__.remote_traceback
    with pytest.raises(pickle.UnpicklingError, match="plain data"):
        run_in_sandbox(_make_gadget, cache=small_cache)
    with pytest.raises(SandboxTaskError, match="ran past its 0.5 s limit"):
        run_in_sandbox(__import__("time").sleep, 30, cache=small_cache, timeout=0.5)
    with pytest.raises(MemoryError):  # the limit hit, the task's own exception comes back
        run_in_sandbox(bytearray, 2**30, cache=small_cache, limits=SandboxLimits(memory_mb=300))
    with pytest.raises(SandboxTaskError, match=r"without a result \(exit code 3"):
        run_in_sandbox(__import__("os")._exit, 3, cache=small_cache)


def test_safe_loads_allows_plain_data_only():
    data = {"a": [1, 2.5, None, "x", b"y"], "arr": np.arange(4.0), "s": np.float64(0.25),
            "i": np.int64(3), "t": (True, frozenset({1}))}
    back = safe_loads(pickle.dumps(data, protocol=5))
    assert back["a"] == data["a"] and back["t"] == data["t"]
    np.testing.assert_array_equal(back["arr"], data["arr"])
    assert back["s"] == 0.25 and back["i"] == 3
    with pytest.raises(pickle.UnpicklingError, match="references builtins.print"):
        safe_loads(pickle.dumps(Gadget()))
    with pytest.raises(pickle.UnpicklingError, match="references os.system"):
        safe_loads(b"cos\nsystem\n(S'true'\ntR.")


def test_cross_validate_and_grid_search_in_sandboxes_equal_the_plain_run(sk_cache, tmp_path):
    X, y = load_iris(return_X_y=True)
    probe = tmp_path / "escaped.txt"
    est = UntrustedCentroid(shrink=0.1, probe_path=str(probe))
    plain = cross_validate(est, X, y, cv=2)
    probe.unlink()
    with joblib.parallel_config(backend="sandbox", cache=sk_cache, n_jobs=2):
        boxed = cross_validate(est, X, y, cv=2)
    np.testing.assert_array_equal(boxed["test_score"], plain["test_score"])
    assert not probe.exists()  # the fold's write stayed in its sandbox
    # GridSearchCV, with a real scikit-learn estimator, n_jobs=1 still sandboxed
    grid = {"C": [0.1, 10.0]}
    ref = GridSearchCV(LogisticRegression(max_iter=500), grid, cv=2).fit(X, y)
    calls = []
    original = SandboxBackend.submit

    def counting(self, func, callback=None):
        calls.append(1)
        return original(self, func, callback)

    SandboxBackend.submit = counting
    try:
        with joblib.parallel_config(backend="sandbox", cache=sk_cache, n_jobs=1):
            got = GridSearchCV(LogisticRegression(max_iter=500), grid, cv=2).fit(X, y)
    finally:
        SandboxBackend.submit = original
    assert len(calls) >= 1  # the folds went through the sandbox backend
    np.testing.assert_array_equal(got.cv_results_["mean_test_score"],
                                  ref.cv_results_["mean_test_score"])
    assert got.best_params_ == ref.best_params_


def test_backend_needs_a_cache():
    with pytest.raises(TypeError, match="needs cache=EnvironmentCache"):
        with joblib.parallel_config(backend="sandbox"):
            joblib.Parallel()(joblib.delayed(abs)(-1) for _ in range(2))


def test_sandbox_reused_across_calls(small_cache):
    with TaskSandbox(small_cache) as box:
        assert run_in_sandbox(pow, 2, 10, cache=None, sandbox=box) == 1024
        assert run_in_sandbox(max, [3, 9, 4], cache=None, sandbox=box) == 9
        assert box.changed_files() == []  # the call's files live outside /workspace and /env
