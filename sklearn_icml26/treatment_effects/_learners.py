"""Named nuisance learners of the longitudinal adjuster (``outcome_model="gp"``)."""

import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_random_state

__all__ = []


class _SubsampledARDGaussianProcess(RegressorMixin, BaseEstimator):
    """Gaussian-process regression, ARD RBF kernel, hyperparameters from a subsample.

    Features are standardised; the kernel ``c * RBF(one length scale per feature) + white
    noise`` has its hyperparameters fitted by marginal likelihood on ``n_hyper`` random
    training rows (the cubic optimisation is the cost), and the exact Gaussian process is then
    refitted on all rows with those hyperparameters. The per-feature length scales let 400
    training units find the few covariates a smooth outcome surface depends on. Length
    scales that reach their upper bound (an irrelevant feature) are expected: the optimiser's
    bound warnings are not shown.

    Parameters
    ----------
    n_hyper : int, default=200
        Rows (a random subsample of the training rows) used to fit the kernel's
        hyperparameters; all rows when there are fewer.
    random_state : int, RandomState instance or None, default=None
        Seeds the subsample.
    """

    def __init__(self, n_hyper=200, random_state=None):
        self.n_hyper = n_hyper
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        if not isinstance(self.n_hyper, Integral) or self.n_hyper < 2:
            raise ValueError(f"n_hyper must be an integer >= 2, got {self.n_hyper!r}")
        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        if sample_weight is not None:  # frequency weights: repeat the rows
            counts = np.asarray(sample_weight)
            if np.any(counts != np.round(counts)) or np.any(counts < 0):
                raise ValueError("the 'gp' outcome model takes integer frequency weights "
                                 "only (sample_weight must be whole numbers >= 0)")
            rows = np.repeat(np.arange(len(X)), counts.astype(int))
            X, y = X[rows], y[rows]
        self.scaler_ = StandardScaler().fit(X)
        Z = self.scaler_.transform(X)
        d = Z.shape[1]
        kernel = (ConstantKernel(1.0, (1e-3, 1e3)) * RBF(np.ones(d), (1e-2, 1e3))
                  + WhiteKernel(0.1, (1e-5, 1e1)))
        rng = check_random_state(self.random_state)
        idx = rng.choice(len(Z), min(self.n_hyper, len(Z)), replace=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            tuned = GaussianProcessRegressor(kernel, normalize_y=True).fit(Z[idx], y[idx])
        self.gp_ = GaussianProcessRegressor(tuned.kernel_, normalize_y=True,
                                            optimizer=None).fit(Z, y)
        self.kernel_ = self.gp_.kernel_
        return self

    def predict(self, X):
        return self.gp_.predict(self.scaler_.transform(np.asarray(X, dtype=float)))
