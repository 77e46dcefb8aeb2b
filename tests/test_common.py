"""scikit-learn's estimator checks and integration smoke tests on every estimator of the package.

The estimators come from ``all_estimators()`` plus the three torch test estimators of
``sklearn_icml26.utils._testing``; a new estimator is picked up automatically and cannot skip
these tests. Each class gives its small settings through ``_get_test_params``.
"""

import pickle

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_icml26.utils import all_estimators
from sklearn_icml26.utils._estimator_checks import get_smoke_data, get_test_instances
from sklearn_icml26.utils._testing import TorchAutoencoder, TorchMLPClassifier, TorchMLPRegressor

TEST_ESTIMATORS = [TorchMLPRegressor, TorchMLPClassifier, TorchAutoencoder]
CLASSES = [cls for _, cls in all_estimators()] + TEST_ESTIMATORS
INSTANCES = [est for cls in CLASSES for est in get_test_instances(cls)]
# Estimators whose fit needs more than (X, y) of a generic tabular problem (systems, treatment,
# point clouds, texts) have their smoke data registered in utils._estimator_checks.


def _output(estimator, X):
    for method in ("predict", "transform", "decision_function"):
        if hasattr(estimator, method):
            out = np.asarray(getattr(estimator, method)(X))
            # labels and texts (e.g. a reader's predicted turn) are compared as they are
            return out if out.dtype.kind in "OUS" else out.astype(float)
    raise AssertionError(f"{type(estimator).__name__} has no predict/transform")


def _expected_failed_checks(estimator):
    """``{check_name: reason}`` declared by the estimator class; empty for most."""
    getter = getattr(type(estimator), "_get_expected_failed_checks", None)
    return getter() if getter is not None else {}


@parametrize_with_checks(INSTANCES, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def test_test_estimators_have_no_expected_failures():
    assert all(not _expected_failed_checks(cls()) for cls in TEST_ESTIMATORS)


def test_discovery_finds_no_test_estimators():
    names = {name for name, _ in all_estimators()}
    assert not names & {cls.__name__ for cls in TEST_ESTIMATORS}


def test_smoke_data_live_in_one_registry():
    """Every registered name is an estimator class of the package; no class brings its own."""
    import re
    from pathlib import Path

    import sklearn_icml26
    from sklearn_icml26.utils._estimator_checks import _SMOKE_DATA

    source = "\n".join(path.read_text(encoding="utf-8")
                       for path in Path(sklearn_icml26.__file__).parent.rglob("*.py"))
    defined = set(re.findall(r"^class (\w+)\(", source, flags=re.MULTILINE))
    assert set(_SMOKE_DATA) <= defined, sorted(set(_SMOKE_DATA) - defined)
    assert not [cls.__name__ for cls in CLASSES if hasattr(cls, "_get_smoke_data")]


@pytest.mark.parametrize("estimator", INSTANCES, ids=lambda e: type(e).__name__)
def test_pickle_clone_and_determinism(estimator):
    X, y = get_smoke_data(estimator)
    first = clone(estimator).fit(X, y)
    second = clone(estimator).fit(X, y)
    # same random_state, same result
    np.testing.assert_array_equal(_output(first, X), _output(second, X))
    # pickling a fitted estimator keeps its predictions
    restored = pickle.loads(pickle.dumps(first))
    np.testing.assert_array_equal(_output(restored, X), _output(first, X))
    # clone keeps the parameters (estimator-valued ones compared by content) and drops the fit
    assert joblib.hash(clone(first).get_params()) == joblib.hash(first.get_params())
    assert not hasattr(clone(first), "n_features_in_")


def _preprocessor(estimator):
    """The step put in front of the estimator: a scaler, or the identity for text input."""
    if estimator.__sklearn_tags__().input_tags.string:
        return FunctionTransformer()  # text (memory, editing, retrieval) is not scaled
    return StandardScaler()


@pytest.mark.parametrize("estimator", INSTANCES, ids=lambda e: type(e).__name__)
def test_in_pipeline(estimator):
    """A Pipeline gives exactly what the bare estimator gives on the preprocessed data."""
    X, y = get_smoke_data(estimator)
    pipe = make_pipeline(_preprocessor(estimator), clone(estimator)).fit(X, y)
    out = _output(pipe, X)
    assert out.shape[0] == len(X)
    Xs = _preprocessor(estimator).fit_transform(X)
    bare = clone(estimator).fit(Xs, y)
    if out.dtype.kind in "OUS":  # predicted labels or texts
        assert all(isinstance(v, str) and v for v in out)
        np.testing.assert_array_equal(out, _output(bare, Xs))
        return
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, _output(bare, Xs), rtol=1e-10, atol=1e-12)


def test_torch_regressor_learns_and_grid_search_over_module_hyperparameters():
    X, y = make_regression(n_samples=200, n_features=4, noise=0.1, random_state=0)
    y = y / y.std()
    base = TorchMLPRegressor(max_epochs=150, lr=0.02, batch_size=-1, random_state=0)
    search = GridSearchCV(base, {"hidden_size": [1, 32]}, cv=3).fit(X, y)
    assert search.best_params_ == {"hidden_size": 32}
    assert search.best_score_ > 0.95


def test_torch_classifier_accuracy_and_probabilities():
    X, y = make_classification(n_samples=300, n_features=5, n_informative=3, random_state=0)
    clf = TorchMLPClassifier(max_epochs=100, lr=0.02, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.9
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)


def test_autoencoder_set_output_pandas_and_reconstruction():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(300, 2))
    X = Z @ rng.normal(size=(2, 6))  # rank-2 data: a 2-code autoencoder reconstructs it
    ae = TorchAutoencoder(n_components=2, max_epochs=300, lr=0.02, random_state=0)
    ae.set_output(transform="pandas").fit(X)
    codes = ae.transform(X)
    assert list(codes.columns) == ["torchautoencoder0", "torchautoencoder1"]
    rec = ae.inverse_transform(codes.to_numpy())
    assert np.mean((rec - X) ** 2) < 0.05 * np.mean(X**2)


def test_random_state_leaves_global_torch_rng_alone():
    import torch

    X, y = make_regression(n_samples=50, n_features=3, random_state=0)
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    TorchMLPRegressor(max_epochs=2, random_state=0).fit(X, y)
    np.testing.assert_array_equal(torch.rand(3), expected)


def test_sample_weight_zero_equals_dropping_samples():
    X, y = make_regression(n_samples=80, n_features=3, random_state=0)
    w = np.ones(80)
    w[:20] = 0
    params = dict(max_epochs=30, batch_size=-1, precision="float64", random_state=0)
    weighted = TorchMLPRegressor(**params).fit(X, y, sample_weight=w)
    dropped = TorchMLPRegressor(**params).fit(X[20:], y[20:])
    np.testing.assert_allclose(weighted.predict(X), dropped.predict(X), rtol=1e-9)


def test_precision_and_float64_outputs():
    X, y = make_regression(n_samples=60, n_features=3, random_state=0)
    for precision in ("float32", "float64"):
        reg = TorchMLPRegressor(max_epochs=2, precision=precision, random_state=0).fit(X, y)
        assert reg.predict(X).dtype == np.float64
        assert next(reg.net_.module_.parameters()).dtype == getattr(
            __import__("torch"), precision
        )


def test_bad_hyperparameter_names_the_argument():
    X, y = make_regression(n_samples=30, n_features=3, random_state=0)
    with pytest.raises(ValueError, match="'precision' parameter"):
        TorchMLPRegressor(precision="float16").fit(X, y)
    with pytest.raises(ValueError, match="'batch_size' parameter"):
        TorchMLPRegressor(batch_size=0).fit(X, y)


@pytest.mark.parametrize("device", ["foo", "cuda:0"])
def test_unusable_device_is_a_clear_error(device):
    import torch

    if device.startswith("cuda") and torch.cuda.is_available():
        pytest.skip(reason="CUDA is available here: device='cuda:0' is usable")
    X, y = make_regression(n_samples=30, n_features=3, random_state=0)
    with pytest.raises(ValueError, match=r"device"):
        TorchMLPRegressor(device=device, max_epochs=1).fit(X, y)
