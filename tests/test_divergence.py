"""The one divergence policy (issue 37, item 2) on every torch estimator of the package.

Each torch estimator is fitted at its small test settings with an absurd learning rate
(``lr=1e6``). The policy of :class:`sklearn_icml26.base.DivergenceGuard`: the fit returns (no
exception), warns with a :class:`~sklearn.exceptions.ConvergenceWarning` carrying the one
divergence message (non-finite loss, last finite state restored; or a hundredfold rise), and
the fitted model gives finite output.
"""

import re
import warnings

import numpy as np
import pytest
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import ConvergenceWarning

from sklearn_icml26.base import _DIVERGENCE_PATTERN
from sklearn_icml26.utils import all_estimators
from sklearn_icml26.utils._estimator_checks import get_test_instances
from sklearn_icml26.utils._testing import TorchAutoencoder, TorchMLPClassifier, TorchMLPRegressor

# the naming table's learning rate, and the spelling some estimators still have
_LR_NAMES = ("lr", "learning_rate")
_TEST_ESTIMATORS = [TorchMLPRegressor, TorchMLPClassifier, TorchAutoencoder]


def _torch_instances():
    """Test instances of every estimator with a learning rate (the torch estimators)."""
    out = []
    for cls in [cls for _, cls in all_estimators()] + _TEST_ESTIMATORS:
        for est in get_test_instances(cls):
            if set(_LR_NAMES) & set(est.get_params(deep=False)):
                out.append(est)
    return out


INSTANCES = _torch_instances()


def _smoke_data(estimator):  # as tests/test_common.py gets it
    getter = getattr(type(estimator), "_get_smoke_data", None)
    if getter is not None:
        return getter()
    if is_classifier(estimator):
        return make_classification(n_samples=120, n_features=4, random_state=0)
    if is_regressor(estimator):
        return make_regression(n_samples=120, n_features=4, noise=1.0, random_state=0)
    X, _ = make_regression(n_samples=120, n_features=4, random_state=0)
    return X, None


def _output(estimator, X):
    for method in ("predict", "transform", "decision_function"):
        if hasattr(estimator, method):
            return np.asarray(getattr(estimator, method)(X))
    raise AssertionError(f"{type(estimator).__name__} has no predict/transform")


def test_discovery_finds_every_torch_estimator():
    names = {type(est).__name__ for est in INSTANCES}
    assert names >= {"ViolinViTClassifier", "HolderTransformerRegressor", "NeuroMambaImputer",
                     "HDTreeLineage", "MPFSurface", "PINNRegressor", "OfflineQRegressor",
                     "GatedMemoryReader", "TorchMLPRegressor", "TorchMLPClassifier",
                     "TorchAutoencoder"}


@pytest.mark.parametrize("estimator", INSTANCES, ids=lambda e: type(e).__name__)
def test_absurd_learning_rate_warns_restores_and_predicts_finite(estimator):
    est = clone(estimator).set_params(lr=1e6)
    X, y = _smoke_data(est)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    messages = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert messages, f"no ConvergenceWarning; warnings: {[str(w.message) for w in caught]}"
    # the one message, whatever the estimator; no other convergence warning beside it
    assert all(re.search(_DIVERGENCE_PATTERN, m) for m in messages), messages
    assert all(m.startswith(type(est).__name__ + ": ") for m in messages), messages
    out = _output(est, X)
    if out.dtype.kind in "fc":
        assert np.all(np.isfinite(out))
