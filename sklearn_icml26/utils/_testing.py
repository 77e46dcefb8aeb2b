"""Small torch estimators that exercise the skorch adapter in the test suite.

They are not part of the public API (``all_estimators`` skips this module) but they are complete
estimators: each passes ``check_estimator`` with no expected failure, so they prove that the
adapter in :mod:`sklearn_icml26.base` carries regressors, classifiers and transformers.
"""

from numbers import Integral

import numpy as np
from scipy.special import softmax
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    RegressorMixin,
    TransformerMixin,
)
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from torch import nn

from .._compat import Interval, _fit_context
from ..base import TorchEstimatorMixin
from ._docstrings import Substitution, _torch_docstrings

# the test estimators (the docstring tests read this list); fit_local_and_on is a helper
__all__ = ["TorchAutoencoder", "TorchMLPClassifier", "TorchMLPRegressor"]


def fit_local_and_on(backend, estimator, *fit_args, n_jobs=-1, **fit_params):
    """Fit ``estimator`` in this process and again under a joblib backend, for comparison.

    The scale-out tests (dask, ray) check that a documented ``n_jobs`` path gives the local
    result: a clone with ``n_jobs=1`` is fitted here, another with ``n_jobs`` inside
    ``backend()``.

    Parameters
    ----------
    backend : callable
        Returns a context manager that selects the backend, e.g.
        ``lambda: joblib.parallel_config(backend="dask")``.
    estimator : estimator
        Unfitted estimator with an ``n_jobs`` parameter.
    *fit_args : tuple
        Positional arguments of ``fit`` (``X, y``).
    n_jobs : int, default=-1
        ``n_jobs`` of the clone fitted under the backend.
    **fit_params : dict
        Keyword arguments of ``fit`` (``treatment=...``).

    Returns
    -------
    local, remote : tuple of estimators
        The clone fitted here and the clone fitted under the backend.
    """
    from sklearn.base import clone

    local = clone(estimator).set_params(n_jobs=1).fit(*fit_args, **fit_params)
    with backend():
        remote = clone(estimator).set_params(n_jobs=n_jobs).fit(*fit_args, **fit_params)
    return local, remote


def _mlp(n_in, n_hidden, n_out):
    return nn.Sequential(nn.Linear(n_in, n_hidden), nn.Tanh(), nn.Linear(n_hidden, n_out))


def _squared_error():
    return nn.MSELoss(reduction="none")


_TEST_PARAMS = {"max_epochs": 60, "lr": 0.05, "batch_size": -1, "precision": "float64",
                "random_state": 0}


class _MLPBase(TorchEstimatorMixin, BaseEstimator):
    _parameter_constraints = {
        "hidden_size": [Interval(Integral, 1, None, closed="left")],
        **TorchEstimatorMixin._torch_parameter_constraints,
    }

    def __init__(self, hidden_size=16, *, max_epochs=100, batch_size=64, lr=0.01,
                 optimizer="adam", precision="float32", device="cpu", random_state=None,
                 verbose=0, optimizer_params=None):
        self.hidden_size = hidden_size
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.optimizer = optimizer
        self.optimizer_params = optimizer_params
        self.precision = precision
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    @classmethod
    def _get_test_params(cls):
        return [dict(_TEST_PARAMS)]


@Substitution(**_torch_docstrings)
class TorchMLPRegressor(RegressorMixin, _MLPBase):
    """One-hidden-layer perceptron regressor trained through the skorch adapter (tests only).

    Parameters
    ----------
    hidden_size : int, default=16
        Width of the hidden layer.
    max_epochs : int, default=100
        {max_epochs}
    batch_size : int, default=64
        {batch_size}
    lr : float, default=0.01
        {lr}
    optimizer : {"adam", "adamw", "sgd", "rmsprop", "adamo"} or torch optimizer class, \
default="adam"
        {optimizer}
    precision : {"float32", "float64"}, default="float32"
        {precision}
    device : str, default="cpu"
        {device}
    random_state : int, RandomState instance or None, default=None
        {random_state}
    verbose : int, default=0
        {verbose}
    optimizer_params : dict or None, default=None
        {optimizer_params}

    Attributes
    ----------
    net_ : skorch.NeuralNet
        Trained net.
    n_features_in_ : int
        Number of input features.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Input column names, when ``X`` had string column names.
    n_iter_ : int
        {n_iter_}
    loss_curve_ : list of float
        {loss_curve_}
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the network.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights of the squared error.

        Returns
        -------
        self : TorchMLPRegressor
            The fitted estimator.
        """
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True)
        self._y_1d_ = y.ndim == 1
        Y = self._as_input(y.reshape(len(y), -1))
        self._fit_net(X, Y, sample_weight, n_outputs=Y.shape[1])
        return self

    def _build_module(self, n_features_in, n_outputs, context):
        return _mlp(n_features_in, self.hidden_size, n_outputs)

    def _build_criterion(self, context):
        return _squared_error()

    def predict(self, X):
        """Predict targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
            Predictions, float64.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        out = self._forward_numpy(X)
        return out[:, 0] if self._y_1d_ else out


@Substitution(**_torch_docstrings)
class TorchMLPClassifier(ClassifierMixin, _MLPBase):
    """One-hidden-layer perceptron classifier trained through the skorch adapter (tests only).

    Parameters
    ----------
    hidden_size : int, default=16
        Width of the hidden layer.
    max_epochs : int, default=100
        {max_epochs}
    batch_size : int, default=64
        {batch_size}
    lr : float, default=0.01
        {lr}
    optimizer : {"adam", "adamw", "sgd", "rmsprop", "adamo"} or torch optimizer class, \
default="adam"
        {optimizer}
    precision : {"float32", "float64"}, default="float32"
        {precision}
    device : str, default="cpu"
        {device}
    random_state : int, RandomState instance or None, default=None
        {random_state}
    verbose : int, default=0
        {verbose}
    optimizer_params : dict or None, default=None
        {optimizer_params}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    net_ : skorch.NeuralNet
        Trained net.
    n_features_in_ : int
        Number of input features.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Input column names, when ``X`` had string column names.
    n_iter_ : int
        {n_iter_}
    loss_curve_ : list of float
        {loss_curve_}
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the network with the cross-entropy loss.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.
        y : array-like of shape (n_samples,)
            Class labels; at least two classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights of the cross-entropy.

        Returns
        -------
        self : TorchMLPClassifier
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``y`` holds a single class.
        """
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        encoder = LabelEncoder().fit(y)
        self.classes_ = encoder.classes_
        if len(self.classes_) < 2:
            raise ValueError(
                f"y must hold at least two classes to train a classifier; got one class, "
                f"{self.classes_[0]!r}."
            )
        codes = encoder.transform(y).astype(np.int64)
        self._fit_net(X, codes, sample_weight, n_outputs=len(self.classes_))
        return self

    def _build_module(self, n_features_in, n_outputs, context):
        return _mlp(n_features_in, self.hidden_size, n_outputs)

    def _build_criterion(self, context):
        return nn.CrossEntropyLoss(reduction="none")

    def decision_function(self, X):
        """Class logits.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Logit difference of class 1 over class 0 for two classes, logits otherwise.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        logits = self._forward_numpy(X)
        return logits[:, 1] - logits[:, 0] if len(self.classes_) == 2 else logits

    def predict_proba(self, X):
        """Class probabilities (softmax of the logits).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probabilities, rows sum to one.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return softmax(self._forward_numpy(X), axis=1)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probabilities.
        """
        check_is_fitted(self)
        return np.log(self.predict_proba(X))

    def predict(self, X):
        """Most probable class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels.
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


class _Autoencoder(nn.Module):
    def __init__(self, n_in, n_hidden, n_components):
        super().__init__()
        self.encoder = _mlp(n_in, n_hidden, n_components)
        self.decoder = _mlp(n_components, n_hidden, n_in)

    def forward(self, x):
        return self.decoder(self.encoder(x))


@Substitution(**_torch_docstrings)
class TorchAutoencoder(ClassNamePrefixFeaturesOutMixin, TransformerMixin, _MLPBase):
    """Autoencoder transformer trained through the skorch adapter (tests only).

    ``transform`` returns the codes of the encoder, ``inverse_transform`` decodes them.

    Parameters
    ----------
    n_components : int, default=2
        Size of the code.
    hidden_size : int, default=16
        Width of the hidden layers.
    max_epochs : int, default=100
        {max_epochs}
    batch_size : int, default=64
        {batch_size}
    lr : float, default=0.01
        {lr}
    optimizer : {"adam", "adamw", "sgd", "rmsprop", "adamo"} or torch optimizer class, \
default="adam"
        {optimizer}
    precision : {"float32", "float64"}, default="float32"
        {precision}
    device : str, default="cpu"
        {device}
    random_state : int, RandomState instance or None, default=None
        {random_state}
    verbose : int, default=0
        {verbose}
    optimizer_params : dict or None, default=None
        {optimizer_params}

    Attributes
    ----------
    net_ : skorch.NeuralNet
        Trained net.
    n_features_in_ : int
        Number of input features.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Input column names, when ``X`` had string column names.
    n_iter_ : int
        {n_iter_}
    loss_curve_ : list of float
        {loss_curve_}
    """

    _parameter_constraints = {
        **_MLPBase._parameter_constraints,
        "n_components": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_components=2, hidden_size=16, *, max_epochs=100, batch_size=64,
                 lr=0.01, optimizer="adam", precision="float32", device="cpu",
                 random_state=None, verbose=0, optimizer_params=None):
        super().__init__(hidden_size, max_epochs=max_epochs, batch_size=batch_size, lr=lr,
                         optimizer=optimizer, precision=precision, device=device,
                         random_state=random_state, verbose=verbose,
                         optimizer_params=optimizer_params)
        self.n_components = n_components

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Fit the autoencoder to reconstruct ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights of the reconstruction error.

        Returns
        -------
        self : TorchAutoencoder
            The fitted estimator.
        """
        X = validate_data(self, X)
        self._fit_net(X, self._as_input(X), sample_weight)
        return self

    @property
    def _n_features_out(self):
        # read by ClassNamePrefixFeaturesOutMixin.get_feature_names_out; derived, not kept
        # (NotFittedError is an AttributeError: unfitted, the attribute is missing)
        check_is_fitted(self, "net_")
        return self.n_components

    def _build_module(self, n_features_in, n_outputs, context):
        return _Autoencoder(n_features_in, self.hidden_size, self.n_components)

    def _build_criterion(self, context):
        return _squared_error()

    def transform(self, X):
        """Encode ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        codes : ndarray of shape (n_samples, n_components)
            Codes, float64.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self._forward_numpy(X, module=self.net_.module_.encoder)

    def inverse_transform(self, X):
        """Decode codes back to the input space.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Codes.

        Returns
        -------
        X_rec : ndarray of shape (n_samples, n_features_in_)
            Reconstructions, float64.
        """
        check_is_fitted(self)
        from sklearn.utils import check_array

        X = check_array(X)
        return self._forward_numpy(X, module=self.net_.module_.decoder)
