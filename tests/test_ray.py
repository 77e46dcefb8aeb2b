"""Scale-out on ray: joblib's "ray" backend on a local ray instance with 2 worker CPUs.

Each ``n_jobs`` path below runs through ``joblib.parallel_config(backend="ray")`` (the work is
pickled to ray's worker processes) and must give the local, one-process result.

Opt-in: starting ray and its first workers takes about 25 s of wall time here (14.6 s for
``ray.init`` and 11 s for the first tasks, measured on the shared 2-core machine), more than
the suite's budget for one module, so these tests run only with ``SKLEARN_ICML26_RAY_TESTS=1``
(and the ``ray`` extra installed): ``SKLEARN_ICML26_RAY_TESTS=1 pytest tests/test_ray.py``.
"""

import os

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.model_selection import TimeSeriesSplit, cross_validate

from sklearn_icml26.datasets import make_interacting_systems, make_longitudinal_rct
from sklearn_icml26.forecasting import ESERegressor, PerSystemRegressor, sliding_window
from sklearn_icml26.treatment_effects import LongitudinalRegressionAdjuster
from sklearn_icml26.utils._testing import fit_local_and_on

ray = pytest.importorskip("ray", reason="ray not installed (optional extra sklearn_icml26[ray])")

pytestmark = pytest.mark.skipif(
    os.environ.get("SKLEARN_ICML26_RAY_TESTS") != "1",
    reason="opt-in (SKLEARN_ICML26_RAY_TESTS=1): ray's start-up takes about 25 s, over the "
           "CI budget of one test module",
)


@pytest.fixture(scope="module")
def ray_backend():
    """A context factory: joblib's ray backend on a local ray instance with 2 CPUs."""
    import joblib
    from ray.util.joblib import register_ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    register_ray()
    try:
        assert ray.cluster_resources()["CPU"] == 2
        yield lambda: joblib.parallel_config(backend="ray", n_jobs=2)
    finally:
        ray.shutdown()


def test_per_system_regressor_equals_local(ray_backend):
    rng = np.random.default_rng(0)
    Y = np.exp(np.cumsum(0.05 * rng.standard_normal((120, 4)), axis=0)) * 10
    X, y = sliding_window(Y, 6)
    local, remote = fit_local_and_on(ray_backend, PerSystemRegressor(Ridge(alpha=0.1), n_lags=4),
                                     X, y, n_jobs=2)
    np.testing.assert_allclose(remote.predict(X), local.predict(X), rtol=1e-12)


def test_cross_validate_equals_local(ray_backend):
    Y, _, _ = make_interacting_systems(5, 160, random_state=0)
    X, y = sliding_window(Y, n_lags=8)
    cv = TimeSeriesSplit(3)
    local = cross_validate(ESERegressor(), X, y, cv=cv, n_jobs=1,
                           scoring="neg_root_mean_squared_error")
    with ray_backend():
        remote = cross_validate(ESERegressor(), X, y, cv=cv, n_jobs=2,
                                scoring="neg_root_mean_squared_error")
    np.testing.assert_allclose(remote["test_score"], local["test_score"], rtol=1e-12)


def test_longitudinal_cross_fitting_equals_local(ray_backend):
    X, y, treatment, _ = make_longitudinal_rct(200, 3, 2, dynamics="linear", outcome="linear",
                                               random_state=0)
    params = dict(n_time_varying=2, cv=2, n_mc=8, n_bootstrap=50, random_state=0)
    local, remote = fit_local_and_on(ray_backend, LongitudinalRegressionAdjuster(**params), X, y,
                                     n_jobs=2, treatment=treatment)
    np.testing.assert_allclose(remote.effect_, local.effect_, rtol=1e-12)
    np.testing.assert_allclose(remote.effect_se_, local.effect_se_, rtol=1e-12)
