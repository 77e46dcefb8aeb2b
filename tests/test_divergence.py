"""The one divergence policy (issue 37, item 2) on every torch estimator of the package.

Each torch estimator is fitted at its small test settings with an absurd learning rate
(``lr=1e6``). The policy of :class:`sklearn_icml26.base.DivergenceGuard`: the fit returns (no
exception), warns with a :class:`~sklearn.exceptions.ConvergenceWarning` carrying the one
divergence message (non-finite loss, last finite state restored; or a hundredfold rise), and
the fitted model gives finite output. An estimator may stay silent only when its fit did not
diverge: its whole ``loss_curve_`` is finite and never rose a hundredfold over the first value
(``GatedMemoryReader`` at lr=1e6: clipped steps saturate the gates, the loss stays bounded).
"""

import re
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from sklearn_icml26.base import _DIVERGENCE_PATTERN
from sklearn_icml26.utils import all_estimators
from sklearn_icml26.utils._estimator_checks import get_smoke_data, get_test_instances
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
    X, y = get_smoke_data(est)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    messages = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    if not messages:  # silent: only if the fit provably did not diverge
        curve = np.asarray(getattr(est, "loss_curve_", [np.nan]), dtype=float)
        assert curve.size and np.all(np.isfinite(curve)), (
            f"no ConvergenceWarning and a non-finite loss_curve_; "
            f"warnings: {[str(w.message) for w in caught]}")
        assert np.max(np.abs(curve)) < 100 * max(abs(curve[0]), np.finfo(float).tiny), (
            f"no ConvergenceWarning although the loss rose a hundredfold: {curve[:5]}...")
    # the one message, whatever the estimator; no other convergence warning beside it
    assert all(re.search(_DIVERGENCE_PATTERN, m) for m in messages), messages
    assert all(m.startswith(type(est).__name__ + ": ") for m in messages), messages
    out = _output(est, X)
    if out.dtype.kind in "fc":
        assert np.all(np.isfinite(out))
