"""Scale-out: a GridSearchCV on a dask.distributed LocalCluster gives the local results."""

import numpy as np
import pytest
from sklearn.datasets import make_regression
from sklearn.model_selection import GridSearchCV

from sklearn_icml26.utils._testing import TorchMLPRegressor

distributed = pytest.importorskip("dask.distributed", reason="dask[distributed] not installed")


def test_grid_search_on_dask_equals_local():
    import joblib

    X, y = make_regression(n_samples=90, n_features=3, noise=0.1, random_state=0)
    y = y / y.std()
    base = TorchMLPRegressor(max_epochs=20, lr=0.05, batch_size=-1, precision="float64",
                             random_state=0)
    grid = {"hidden_units": [2, 8]}
    local = GridSearchCV(base, grid, cv=3, n_jobs=1).fit(X, y)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster):
            with joblib.parallel_config(backend="dask"):
                remote = GridSearchCV(base, grid, cv=3, n_jobs=-1).fit(X, y)
    np.testing.assert_allclose(remote.cv_results_["mean_test_score"],
                               local.cv_results_["mean_test_score"], rtol=1e-10)
    assert remote.best_params_ == local.best_params_
