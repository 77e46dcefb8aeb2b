"""The package's Parallel issues the workers' warnings in the caller, whatever n_jobs is."""

import warnings

import pytest
from sklearn import config_context, get_config
from sklearn.exceptions import ConvergenceWarning

from sklearn_icml26.utils._parallel import Parallel, delayed


def _task(i):
    warnings.warn(f"task {i} did not converge", ConvergenceWarning, stacklevel=1)
    warnings.warn("repeated note", UserWarning, stacklevel=1)
    return i * i, get_config()["assume_finite"]


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("return_as", ["list", "generator"])
def test_warnings_reach_the_caller(n_jobs, return_as):
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        out = list(Parallel(n_jobs=n_jobs, return_as=return_as)(
            delayed(_task)(i) for i in range(4)))
    assert [v for v, _ in out] == [0, 1, 4, 9]
    messages = [str(r.message) for r in records]
    assert messages.count("repeated note") == 4
    assert {f"task {i} did not converge" for i in range(4)} <= set(messages)
    conv = [r for r in records if r.category is ConvergenceWarning]
    assert len(conv) == 4
    assert all(r.filename.endswith("test_parallel.py") for r in conv)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_caller_filters_and_config_apply(n_jobs):
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", ConvergenceWarning)
        with config_context(assume_finite=True):
            out = Parallel(n_jobs=n_jobs)(delayed(_task)(i) for i in range(3))
    assert all(flag for _, flag in out)
    assert [str(r.message) for r in records] == ["repeated note"] * 3
    # "default" shows a repeated warning once per loop, as a sequential loop would
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("default")
        Parallel(n_jobs=n_jobs)(delayed(_task)(i) for i in range(3))
    assert [str(r.message) for r in records].count("repeated note") == 1
    with warnings.catch_warnings(), pytest.raises(ConvergenceWarning, match="task 0"):
        warnings.simplefilter("error", ConvergenceWarning)
        Parallel(n_jobs=n_jobs)(delayed(_task)(i) for i in range(3))


def test_plain_function_is_refused():
    from sklearn.utils.parallel import delayed as sk_delayed

    with pytest.raises(TypeError, match="wrapped by sklearn_icml26.utils._parallel.delayed"):
        Parallel(n_jobs=1)(sk_delayed(abs)(-1) for _ in range(1))


def test_generator_request_runs_on_a_backend_without_generators():
    # ray's joblib backend cannot return generators; such a backend gets a list, iterated
    import joblib
    from joblib._parallel_backends import ThreadingBackend

    class NoGeneratorBackend(ThreadingBackend):
        supports_return_generator = False

    joblib.register_parallel_backend("no_generator_test", NoGeneratorBackend)

    def noisy(x):
        warnings.warn(f"task {x}", UserWarning, stacklevel=1)
        return x * x

    with pytest.raises(ValueError, match="does not support return_as"):  # joblib's own refusal
        with joblib.parallel_config(backend="no_generator_test"):
            joblib.Parallel(n_jobs=2, return_as="generator")
    with joblib.parallel_config(backend="no_generator_test"):
        with pytest.warns(UserWarning, match="task 3"):  # issued as the list is collected
            out = Parallel(n_jobs=2, return_as="generator")(delayed(noisy)(x) for x in range(4))
        assert not isinstance(out, list)
        assert list(out) == [0, 1, 4, 9]
