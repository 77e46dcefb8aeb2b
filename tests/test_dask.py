"""Scale-out as users run it: a dask.distributed LocalCluster with two worker processes.

Each documented ``n_jobs`` path is driven through ``joblib.parallel_config(backend="dask")`` on
a cluster of 2 worker processes with 1 thread each (the work is pickled to other processes, as
on a real cluster) and must give the local, one-process result.
"""

import numpy as np
import pytest
from sklearn.datasets import make_regression
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV

from sklearn_icml26.causal_discovery import SkewDCausalDiscoverer, score_pairs
from sklearn_icml26.datasets import make_longitudinal_rct, make_lsnm_pairs
from sklearn_icml26.forecasting import PerSystemRegressor, sliding_window
from sklearn_icml26.treatment_effects import LongitudinalRegressionAdjuster
from sklearn_icml26.utils._testing import TorchMLPRegressor, fit_local_and_on

distributed = pytest.importorskip("dask.distributed", reason="dask[distributed] not installed")


def _one_thread():
    import torch

    torch.set_num_threads(1)


@pytest.fixture(scope="module")
def dask_backend():
    """A context factory: joblib's dask backend on a 2-process LocalCluster."""
    import joblib

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    client = distributed.Client(cluster)
    try:
        assert len(client.scheduler_info()["workers"]) == 2
        client.run(_one_thread)  # as the tests do locally: small torch fits, one thread
        yield lambda: joblib.parallel_config(backend="dask")
    finally:
        client.close()
        cluster.close()


def test_grid_search_over_a_torch_estimator_equals_local(dask_backend):
    X, y = make_regression(n_samples=90, n_features=3, noise=0.1, random_state=0)
    y = y / y.std()
    base = TorchMLPRegressor(max_epochs=10, lr=0.05, batch_size=-1, precision="float64",
                             random_state=0)
    local, remote = fit_local_and_on(dask_backend,
                                     GridSearchCV(base, {"hidden_size": [2, 8]}, cv=2), X, y)
    np.testing.assert_allclose(remote.cv_results_["mean_test_score"],
                               local.cv_results_["mean_test_score"], rtol=1e-10)
    assert remote.best_params_ == local.best_params_


def test_score_pairs_equals_local(dask_backend):
    data = make_lsnm_pairs(4, 150, model="AN", noise="agn", skewness="extreme", random_state=1)
    est = SkewDCausalDiscoverer(all_scores=True, random_state=0,
                                estimator={"penalty_search": "none"})
    local = score_pairs(data, estimator=est, n_jobs=1)
    with dask_backend():
        remote = score_pairs(data, estimator=est, n_jobs=-1)
    for key in ("score", "direction", "score_ll", "score_it"):
        np.testing.assert_array_equal(remote[key], local[key])


def test_per_system_regressor_equals_local(dask_backend):
    rng = np.random.default_rng(0)
    Y = np.exp(np.cumsum(0.05 * rng.standard_normal((120, 4)), axis=0)) * 10
    X, y = sliding_window(Y, 6)
    local, remote = fit_local_and_on(dask_backend, PerSystemRegressor(Ridge(alpha=0.1), n_lags=4),
                                     X, y)
    np.testing.assert_allclose(remote.predict(X), local.predict(X), rtol=1e-12)


def test_longitudinal_cross_fitting_equals_local(dask_backend):
    X, y, w, _ = make_longitudinal_rct(600, 4, 3, dynamics="linear", outcome="linear",
                                       random_state=0)
    local, remote = fit_local_and_on(dask_backend,
                                     LongitudinalRegressionAdjuster(3, random_state=0), X, y,
                                     treatment=w)
    np.testing.assert_allclose(remote.effect_, local.effect_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(remote.effect_se_, local.effect_se_, rtol=1e-10, atol=1e-12)
