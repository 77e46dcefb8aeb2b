"""Sample weights shared by the estimators: validation, weighted fits of nested models and
weighted order statistics.

The estimators of this package treat ``sample_weight`` as frequency (case) weights, scikit-learn's
convention: an integer weight ``w`` gives the fit of the row repeated ``w`` times, and a weight
of 0 the fit without the row.
"""

import numpy as np
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import has_fit_parameter

from .._compat import _check_sample_weight, _routing_enabled

__all__ = ["check_sample_weight", "drop_zero_weights", "fit_with_weights",
           "newest_rows_holding", "weighted_rank_value"]


def check_sample_weight(sample_weight, X):
    """Validated float64 weights of shape (n_samples,), or ``None`` when none were given.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,) or None
        Nonnegative weights, one per row of ``X``; not all zero.
    X : ndarray of shape (n_samples, n_features)
        The validated input whose rows the weights belong to.

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,) or None
        A float64 copy (the caller's array is never changed).

    Raises
    ------
    ValueError
        If the weights do not have shape (n_samples,), hold NaN, infinite or negative values,
        or are all zero.
    """
    if sample_weight is None:
        return None
    return _check_sample_weight(sample_weight, X, dtype=np.float64, copy=True,
                                ensure_non_negative=True)


def drop_zero_weights(sample_weight, *arrays, min_rows=1, owner="the estimator",
                      what="row"):
    """The rows of positive weight of ``arrays`` and their weights (weight 0: row removed).

    Parameters
    ----------
    sample_weight : ndarray of shape (n_samples,) or None
        Validated weights (:func:`check_sample_weight`); ``None`` returns the inputs.
    *arrays : ndarray
        Arrays with ``n_samples`` rows.
    min_rows : int, default=1
        Fewest rows of positive weight allowed.
    owner : str, default="the estimator"
        Name used in the error message.
    what : str, default="row"
        What a row is (e.g. "window"), for the error message.

    Returns
    -------
    sample_weight, *arrays
        The weights and arrays restricted to the rows of positive weight.

    Raises
    ------
    ValueError
        If fewer than ``min_rows`` rows have a positive weight.
    """
    if sample_weight is None:
        return (None, *arrays)
    keep = sample_weight > 0
    if keep.sum() < min_rows:
        raise ValueError(f"sample_weight leaves {int(keep.sum())} {what}"
                         f"{'' if keep.sum() == 1 else 's'} with a positive weight; {owner} "
                         f"needs at least {min_rows}.")
    if keep.all():
        return (sample_weight, *arrays)
    return (sample_weight[keep], *(a[keep] for a in arrays))


def _accepts_weights(estimator):
    if isinstance(estimator, Pipeline):
        return has_fit_parameter(estimator.steps[-1][1], "sample_weight")
    return has_fit_parameter(estimator, "sample_weight")


def fit_with_weights(estimator, X, y, sample_weight=None, *, name="estimator"):
    """``estimator.fit(X, y)`` with ``sample_weight`` passed on where it is given.

    A :class:`~sklearn.pipeline.Pipeline` gets the weights in every step whose ``fit`` accepts
    them (``step__sample_weight``, or through metadata routing when it is enabled), so that a
    scaler in front is weighted too.

    Parameters
    ----------
    estimator : estimator
        Unfitted estimator (fitted in place).
    X : array-like of shape (n_samples, n_features)
        Training input.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Training target.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Weights; ``None`` calls ``fit(X, y)``.
    name : str, default="estimator"
        Name of the parameter holding ``estimator``, for the error message.

    Returns
    -------
    estimator : estimator
        The fitted estimator.

    Raises
    ------
    TypeError
        If weights are given and the estimator's ``fit`` takes no ``sample_weight``.
    """
    if sample_weight is None:
        return estimator.fit(X, y)
    if not _accepts_weights(estimator):
        raise TypeError(
            f"sample_weight was given, but {name}={type(estimator).__name__} does not accept "
            "sample_weight in fit; use a model that does (e.g. LinearRegression, Ridge, "
            "HistGradientBoostingRegressor) or fit without weights."
        )
    if isinstance(estimator, Pipeline) and not _routing_enabled():
        params = {f"{step_name}__sample_weight": sample_weight
                  for step_name, step in estimator.steps
                  if step not in (None, "passthrough") and has_fit_parameter(step,
                                                                             "sample_weight")}
        return estimator.fit(X, y, **params)
    return estimator.fit(X, y, sample_weight=sample_weight)


def weighted_rank_value(scores, weights, rank):
    """Per column, the smallest score whose cumulative weight (ascending order) reaches ``rank``.

    With integer weights this is the ``ceil(rank)``-th smallest value of the scores repeated
    by their weights (the order statistic of split-conformal intervals); with unit weights the
    ``ceil(rank)``-th smallest score.

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_columns)
        Values.
    weights : ndarray of shape (n_samples,)
        Nonnegative weights of the rows.
    rank : float
        Cumulative weight to reach.

    Returns
    -------
    values : ndarray of shape (n_columns,)
        ``inf`` where the total weight is below ``rank``.
    """
    order = np.argsort(scores, axis=0, kind="stable")
    sorted_scores = np.take_along_axis(scores, order, axis=0)
    cum = np.cumsum(weights[order], axis=0)
    tol = 1e-9 * max(float(weights.sum()), 1.0)
    reached = cum >= rank - tol
    out = np.full(scores.shape[1], np.inf)
    has = reached.any(axis=0)
    first = np.argmax(reached, axis=0)
    out[has] = sorted_scores[first[has], np.flatnonzero(has)]
    return out


def newest_rows_holding(weights, fraction):
    """Number of newest rows (the last ones) whose total weight reaches ``fraction`` of all.

    With unit weights this is ``ceil(fraction * n_samples)`` (at least 1).

    Parameters
    ----------
    weights : ndarray of shape (n_samples,)
        Positive weights in time order.
    fraction : float in (0, 1]
        Share of the total weight.

    Returns
    -------
    n_rows : int
    """
    cum = np.cumsum(weights[::-1])
    target = fraction * cum[-1]
    tol = 1e-9 * max(float(cum[-1]), 1.0)
    return max(1, int(np.searchsorted(cum, target - tol, side="left")) + 1)
