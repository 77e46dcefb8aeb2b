"""Transition kernels of the history: the model that DynamicRA integrates forward.

``LinearGaussianTransition`` draws the next step block ``S_t = (X_{t+1}, Y_t)`` of a unit's
history from a mean model and a Gaussian residual (Chihara et al., arXiv 2605.31443).
"""

import warnings
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import cross_val_predict
from sklearn.multioutput import MultiOutputRegressor
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import Pipeline
from sklearn.utils import get_tags
from sklearn.utils.validation import (
    check_is_fitted,
    validate_data,
)

from .._compat import HasMethods, Interval, _fit_context
from ..utils._weights import check_sample_weight, drop_zero_weights, fit_with_weights

__all__ = ["LinearGaussianTransition"]

def _design_rank(H, intercept=True):
    """Number of regression parameters of ``H``: its rank, plus one for an intercept.

    With an intercept the columns are centred first, so dummies that sum to one count one
    parameter less, like a duplicated column. The tolerance is NumPy's default (relative to
    the largest singular value).
    """
    if H.shape[0] == 0 or H.shape[1] == 0:
        return int(intercept)
    A = H - H.mean(axis=0) if intercept else H
    peak = np.max(np.abs(A))
    if not np.isfinite(peak) or peak == 0:
        return int(intercept) if not np.isfinite(peak) or intercept else 0
    return int(np.linalg.matrix_rank(A / peak)) + int(intercept)


def _native_multi_output(model):
    """Whether a regressor (or a pipeline's final step) fits a 2-D target natively.

    The ``multi_output`` tag, plus :class:`~sklearn.neural_network.MLPRegressor`, which fits
    2-D targets jointly without carrying the tag; a pipeline passes ``y`` to its last step.
    """
    while isinstance(model, Pipeline):
        model = model.steps[-1][1]
    return isinstance(model, MLPRegressor) or get_tags(model).target_tags.multi_output


class LinearGaussianTransition(RegressorMixin, BaseEstimator):
    """Gaussian transition kernel ``S | H ~ N(mean(H), Sigma)`` with a regression mean.

    The targets ``S`` are standardised, ``mean_model`` regresses them on ``H``, and the residual
    covariance ``Sigma`` is estimated once (homoscedastic). With the default linear mean this is
    a vector autoregression with exogenous history and no lags, the transition of the paper's
    linear setting. :meth:`sample` draws ``mean(H) + z L^T`` with ``L L^T = Sigma``.

    Parameters
    ----------
    mean_model : regressor or None, default=None
        Regressor of the (standardised) targets on ``H``; ``None`` uses
        :class:`~sklearn.linear_model.LinearRegression`. A regressor without multi-output
        support is wrapped in :class:`~sklearn.multioutput.MultiOutputRegressor` (one model
        per target column); multi-output regressors, including
        :class:`~sklearn.neural_network.MLPRegressor` and pipelines ending in one, fit all
        columns jointly.
    min_eigenvalue : float, default=1e-8
        Floor of the eigenvalues of the covariance of the standardised residuals, so that a
        singular covariance (more features than units, exact fits) still gives a valid kernel.

    Attributes
    ----------
    mean_model_ : regressor
        The fitted mean model (on standardised targets).
    y_mean_ : ndarray of shape (n_outputs,)
        Mean of each target column, used to standardise.
    y_scale_ : ndarray of shape (n_outputs,)
        Standard deviation of each target column (1 where it is zero).
    noise_factor_ : ndarray of shape (n_outputs, n_outputs)
        ``L`` with ``L L^T`` the residual covariance of the standardised targets.
    covariance_ : ndarray of shape (n_outputs, n_outputs)
        Residual covariance in the units of the targets.
    n_outputs_ : int
        Number of target columns.
    y_ndim_ : int
        Dimensions of ``y`` in ``fit``: predictions and samples are 1-D when it was 1.
    n_features_in_ : int
        Number of columns of ``H`` seen in :meth:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the columns of ``H``, when it is a DataFrame with string column names.

    See Also
    --------
    LongitudinalRegressionAdjuster : Uses this kernel for its forward Monte Carlo integration.

    Notes
    -----
    With a :class:`~sklearn.linear_model.LinearRegression` mean, the covariance is
    ``R^T R / dof`` of the in-sample residuals with ``dof = max(n - r - 1, 1)``, ``r`` the rank
    of the centred ``H``: a duplicated column, or dummies that sum to one, add no parameter
    and leave the kernel unchanged. With any other mean model it comes from 3-fold
    :func:`~sklearn.model_selection.cross_val_predict` residuals with ``dof = n``, since
    flexible models fit their training data too closely.

    References
    ----------
    .. [1] Chihara, Oka, Matsubara, Sakurai, Yasui, "Modeling Covariate Transition for
       Efficient Estimation of Longitudinal Treatment Effects in Randomized Experiments",
       ICML 2026, arXiv:2605.31443.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.treatment_effects import LinearGaussianTransition
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(500, 3))
    >>> S = H @ np.array([[1.0, 0.0], [0.5, -1.0], [0.0, 2.0]]) + rng.normal(size=(500, 2))
    >>> kernel = LinearGaussianTransition().fit(H, S)
    >>> bool(np.all(np.abs(np.diag(kernel.covariance_) - 1) < 0.15))
    True
    >>> kernel.sample(H[:4], rng.normal(size=(4, 2))).shape
    (4, 2)
    """

    _parameter_constraints = {
        "mean_model": [HasMethods(["fit", "predict"]), None],
        "min_eigenvalue": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, mean_model=None, min_eigenvalue=1e-8):
        self.mean_model = mean_model
        self.min_eigenvalue = min_eigenvalue

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit the mean model and the residual covariance.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Conditioning history ``H`` (float).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Next step block ``S`` (float), in its own units.
        sample_weight : array-like of shape (n_samples,), default=None
            Nonnegative frequency weights of the rows (float): an integer weight fits as the
            row repeated, 0 as the row removed. They weight the standardisation, the mean
            model's fit (``mean_model`` must accept ``sample_weight``) and the residual
            covariance (``sum_i w_i r_i r_i^T / dof`` with ``n = sum(w)`` in ``dof``).

        Returns
        -------
        self : LinearGaussianTransition
            The fitted kernel.

        Raises
        ------
        ValueError
            If ``X`` or ``y`` hold NaN/inf, differ in length or are empty, the mean model
            gives non-finite predictions (``X`` too large for float64), or ``sample_weight``
            is invalid (shape, negative or non-finite values, all zero).
        TypeError
            If ``sample_weight`` is given and ``mean_model`` does not accept it.

        Warns
        -----
        UserWarning
            With the in-sample residuals and fewer than ``n_features + 2`` samples (no
            residual degrees of freedom: the covariance is the ``min_eigenvalue`` floor), or
            when ``covariance_`` overflows float64 in the units of huge targets (the
            standardised factor used by :meth:`sample` stays finite).
        """
        H, S = validate_data(self, X, y, multi_output=True, y_numeric=True, dtype=np.float64)
        S = np.asarray(S, dtype=np.float64)
        # weight 0 is the row removed
        w, H, S = drop_zero_weights(check_sample_weight(sample_weight, H), H, S,
                                    owner="LinearGaussianTransition")
        self.y_ndim_ = S.ndim
        S2 = S.reshape(len(S), -1)
        n, p = H.shape
        n_eff = n if w is None else float(w.sum())
        self.n_outputs_ = S2.shape[1]

        def moments(values):  # (weighted) mean and standard deviation of each column
            mean = np.average(values, axis=0, weights=w)
            return mean, np.sqrt(np.average((values - mean) ** 2, axis=0, weights=w))

        with np.errstate(over="ignore", invalid="ignore"):
            if w is None:
                location, scale = S2.mean(axis=0), S2.std(axis=0)
            else:
                location, scale = moments(S2)
        if not (np.all(np.isfinite(location)) and np.all(np.isfinite(scale))):
            # squares of huge targets overflow: standardise each column by its peak first
            peak = np.max(np.abs(S2), axis=0)
            peak = np.where(peak > 0, peak, 1.0)
            unit = S2 / peak
            location, scale = moments(unit)
            location, scale = location * peak, scale * peak
        self.y_mean_ = location
        self.y_scale_ = np.where(scale > 1e-12 * (1.0 + np.abs(self.y_mean_)), scale, 1.0)
        Z = (S2 - self.y_mean_) / self.y_scale_
        target = Z[:, 0] if self.n_outputs_ == 1 else Z
        model = LinearRegression() if self.mean_model is None else clone(self.mean_model)
        if self.n_outputs_ > 1 and not _native_multi_output(model):
            model = MultiOutputRegressor(model)
        fit_with_weights(model, H, target, w, name="mean_model")
        self.mean_model_ = model
        in_sample = isinstance(model, LinearRegression) or n_eff < 6
        if in_sample:
            resid = Z - model.predict(H).reshape(n, -1)
            # parameters of the regression: the rank of the design, not its column count (a
            # duplicated column or dummies summing to the intercept add no parameter)
            intercept = bool(getattr(model, "fit_intercept", True))
            n_params = _design_rank(H, intercept)
            dof = max(n_eff - n_params, 1)
        else:
            params = None if w is None else {"sample_weight": w}
            fitted = cross_val_predict(clone(model), H, target, cv=3, params=params)
            resid = Z - np.asarray(fitted).reshape(n, -1)
            dof = n_eff
        if not np.all(np.isfinite(resid)):
            raise ValueError(
                "the mean model gave NaN or infinite predictions of the standardised targets "
                f"on X (largest |X| = {np.max(np.abs(H)):.3g}): rescale X (values this large "
                "overflow float64 in the regression)"
            )
        if in_sample and n_eff - n_params < 1:
            warnings.warn(
                f"n_samples={n} is too few to estimate the noise covariance: the regression on "
                f"{p} features has {n_params} parameters (the rank of the design"
                f"{' plus the intercept' if intercept else ''}), which leaves no residual "
                "degrees of freedom; the covariance "
                f"eigenvalues are floored at min_eigenvalue={self.min_eigenvalue:g} of the "
                "standardised targets, so draws carry (almost) no noise",
                UserWarning,
                stacklevel=3,
            )
        cov = (resid.T @ resid if w is None else (resid * w[:, None]).T @ resid) / dof
        eigval, eigvec = np.linalg.eigh((cov + cov.T) / 2.0)
        eigval = np.maximum(eigval, self.min_eigenvalue)
        self.noise_factor_ = eigvec * np.sqrt(eigval)
        standard_cov = self.noise_factor_ @ self.noise_factor_.T
        with np.errstate(over="ignore", invalid="ignore"):
            self.covariance_ = standard_cov * np.outer(self.y_scale_, self.y_scale_)
        if not np.all(np.isfinite(self.covariance_)):
            warnings.warn(
                f"covariance_ overflows float64 in the units of y (target scales up to "
                f"{np.max(self.y_scale_):.3g}) and holds inf/NaN; predict and sample use the "
                "standardised factor noise_factor_ and are unaffected. Rescale y to get a "
                "finite covariance_",
                UserWarning,
                stacklevel=3,
            )
        return self

    def _mean(self, H):
        n = H.shape[0]
        with np.errstate(over="ignore", invalid="ignore"):  # non-finite output raises below
            Z = np.asarray(self.mean_model_.predict(H), dtype=np.float64).reshape(n, -1)
            mean = Z * self.y_scale_ + self.y_mean_
        if not np.all(np.isfinite(mean)):
            raise ValueError(
                "the conditional mean is NaN or infinite for some rows of X (largest |X| = "
                f"{np.max(np.abs(H)):.3g}, target scales up to {np.max(self.y_scale_):.3g}): "
                "X or the targets are too large for float64; rescale them"
            )
        return mean

    def predict(self, X):
        """Conditional mean ``E[S | H]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Conditioning history ``H`` (float).

        Returns
        -------
        mean : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Conditional mean, 1-D when ``S`` was 1-D in :meth:`fit`.
        """
        check_is_fitted(self)
        H = validate_data(self, X, reset=False, dtype=np.float64)
        mean = self._mean(H)
        return mean[:, 0] if self.y_ndim_ == 1 else mean

    def sample(self, X, z):
        """Draw ``S`` given ``H`` from standard normal noise ``z``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Conditioning history ``H`` (float).
        z : array-like of shape (n_samples, n_outputs)
            Independent standard normal draws (float), one row per draw.

        Returns
        -------
        draws : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            ``mean(H) + z L^T`` in the units of ``S``; 1-D when ``S`` was 1-D in :meth:`fit`.

        Raises
        ------
        ValueError
            If ``z`` does not have one row per row of ``X`` and ``n_outputs_`` columns, holds
            NaN or infinity, or the draws overflow float64.
        """
        check_is_fitted(self)
        H = validate_data(self, X, reset=False, dtype=np.float64)
        z = np.asarray(z, dtype=np.float64).reshape(len(z), -1)
        if z.shape != (H.shape[0], self.n_outputs_):
            raise ValueError(
                f"z must have shape (n_samples, n_outputs)=({H.shape[0]}, {self.n_outputs_}); "
                f"got {z.shape}"
            )
        finite = np.isfinite(z)
        if not finite.all():
            rows = np.flatnonzero(~finite.all(axis=1))
            raise ValueError(
                "z contains NaN or infinity: it must hold finite standard normal draws; got "
                f"{int((~finite).sum())} non-finite values in rows "
                f"{rows[:10].tolist()}{' ...' if rows.size > 10 else ''}"
            )
        with np.errstate(over="ignore", invalid="ignore"):
            draws = self._mean(H) + (z @ self.noise_factor_.T) * self.y_scale_
        if not np.all(np.isfinite(draws)):
            raise ValueError(
                f"the draws overflow float64 (largest |z| = {np.max(np.abs(z)):.3g}, target "
                f"scales up to {np.max(self.y_scale_):.3g}): rescale the targets or z"
            )
        return draws[:, 0] if self.y_ndim_ == 1 else draws

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags
