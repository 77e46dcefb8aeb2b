"""Metrics of cause-effect decisions: weighted accuracy and the area under the
decision-rate curve (AUDRC)."""

import numpy as np

__all__ = ["audrc", "decision_rate_curve", "weighted_accuracy"]


def _check(y_true, y_score, sample_weight):
    y_true = np.asarray(y_true)
    y_score = np.asarray(y_score, dtype=np.float64)
    if y_true.ndim != 1 or y_score.ndim != 1:
        raise ValueError(f"y_true and y_score must be 1-D; got shapes {y_true.shape} and "
                         f"{y_score.shape}.")
    if y_true.shape != y_score.shape:
        raise ValueError(f"y_true and y_score must have the same length; got {y_true.shape[0]} "
                         f"and {y_score.shape[0]}.")
    if y_true.size == 0:
        raise ValueError("y_true is empty; expected at least one decision.")
    values = np.unique(y_true)
    if not np.all(np.isin(values, (-1, 1))):
        raise ValueError(f"y_true must hold only +1 and -1 (the true directions); got values "
                         f"{values.tolist()}.")
    if not np.all(np.isfinite(y_score)):
        raise ValueError("y_score must be finite; got NaN or infinity.")
    if sample_weight is None:
        w = np.ones_like(y_score)
    else:
        w = np.asarray(sample_weight, dtype=np.float64)
        if w.shape != y_score.shape:
            raise ValueError(f"sample_weight must have shape {y_score.shape}; got {w.shape}.")
        if np.any(w < 0) or not np.all(np.isfinite(w)):
            raise ValueError("sample_weight must be finite and non-negative; got "
                             f"min {np.nanmin(w)}.")
        if w.sum() <= 0:
            raise ValueError("sample_weight must not sum to zero.")
    correct = (y_true.astype(np.float64) * y_score) > 0
    return correct, y_score, w


def _curve(y_true, y_score, sample_weight):
    """Decision rate, running accuracy and weights, in decreasing order of confidence."""
    correct, score, w = _check(y_true, y_score, sample_weight)
    order = np.argsort(-np.abs(score), kind="stable")
    c, w = correct[order], w[order]
    cum_w = np.cumsum(w)
    running = np.divide(np.cumsum(w * c), cum_w, out=np.zeros_like(cum_w), where=cum_w > 0)
    return cum_w / cum_w[-1], running, w


def decision_rate_curve(y_true, y_score, *, sample_weight=None):
    """Weighted accuracy against decision rate of signed cause-effect decisions.

    Pairs are decided in decreasing order of ``|y_score|`` (stable sort). After the ``k``-th
    pair the decision rate is ``Σ_{j≤k} w_j / Σ_j w_j`` and the accuracy is the weighted
    running accuracy ``A_k = Σ_{j≤k} w_j c_j / Σ_{j≤k} w_j`` (``c_j`` = the decision is
    correct). :func:`audrc` is the weighted mean of ``A_k``.

    Parameters
    ----------
    y_true : array-like of shape (n_pairs,)
        True directions, +1 or -1.
    y_score : array-like of shape (n_pairs,)
        Signed decision scores; ``|y_score|`` is the confidence.
    sample_weight : array-like of shape (n_pairs,), default=None
        Non-negative pair weights; None gives equal weights.

    Returns
    -------
    decision_rate : ndarray of shape (n_pairs,)
        Increasing, ending at 1.
    accuracy : ndarray of shape (n_pairs,)
        In [0, 1]; the last value is :func:`weighted_accuracy`.

    Raises
    ------
    ValueError
        If ``y_true`` holds values other than ±1, the lengths differ, a score is not finite
        or a weight is negative.

    See Also
    --------
    sklearn_icml26.causal_discovery.DecisionRateDisplay : The curve as a plot.

    Examples
    --------
    >>> from sklearn_icml26.metrics import decision_rate_curve
    >>> rate, acc = decision_rate_curve([1, 1, -1, 1], [0.9, -0.8, 0.5, 0.1])
    >>> rate.tolist(), acc.round(3).tolist()
    ([0.25, 0.5, 0.75, 1.0], [1.0, 0.5, 0.333, 0.5])
    """
    rate, running, _ = _curve(y_true, y_score, sample_weight)
    return rate, running


def weighted_accuracy(y_true, y_score, *, sample_weight=None):
    """Weighted accuracy of signed cause-effect decisions.

    ``Σ w·1[y_true·y_score > 0] / Σ w``: a decision is correct when its sign matches the
    true direction; a zero score counts as wrong.

    Parameters
    ----------
    y_true : array-like of shape (n_pairs,)
        True directions, +1 or -1.
    y_score : array-like of shape (n_pairs,)
        Signed decision scores (+: first variable causes the second); the magnitude is the
        confidence.
    sample_weight : array-like of shape (n_pairs,), default=None
        Non-negative pair weights (the Tübingen weights); None gives equal weights.

    Returns
    -------
    accuracy : float
        In [0, 1].

    Raises
    ------
    ValueError
        If ``y_true`` holds values other than ±1, the lengths differ, a score is not finite
        or a weight is negative.

    References
    ----------
    .. [1] Mooij, J. M. et al. "Distinguishing cause from effect using observational data:
       methods and benchmarks", JMLR 17(32), 2016, arXiv:1412.3773.

    Examples
    --------
    >>> from sklearn_icml26.metrics import weighted_accuracy
    >>> weighted_accuracy([1, 1, -1, 1], [0.9, -0.8, 0.5, 0.1])
    0.5
    >>> weighted_accuracy([1, 1, -1, 1], [0.9, -0.8, 0.5, 0.1], sample_weight=[1, 2, 1, 1])
    0.4
    """
    correct, _, w = _check(y_true, y_score, sample_weight)
    return float(np.sum(w * correct) / np.sum(w))


def audrc(y_true, y_score, *, sample_weight=None):
    """Area under the decision-rate curve (AUDRC) of signed cause-effect decisions.

    Pairs are sorted by ``|y_score|`` in decreasing order (stable sort); after each pair ``k``
    the weighted running accuracy is ``A_k = Σ_{j≤k} w_j c_j / Σ_{j≤k} w_j`` (``c_j`` = the
    decision is correct); AUDRC is the weighted average ``Σ_k w_k A_k / Σ_k w_k``. This is the
    SkewD authors' convention, which reproduces their Tübingen numbers (LOCI's script averages
    ``A_k`` without weights).

    Parameters
    ----------
    y_true : array-like of shape (n_pairs,)
        True directions, +1 or -1.
    y_score : array-like of shape (n_pairs,)
        Signed decision scores; ``|y_score|`` is the confidence.
    sample_weight : array-like of shape (n_pairs,), default=None
        Non-negative pair weights; None gives equal weights.

    Returns
    -------
    audrc : float
        In [0, 1].

    Raises
    ------
    ValueError
        If ``y_true`` holds values other than ±1, the lengths differ, a score is not finite
        or a weight is negative.

    References
    ----------
    .. [1] Klippert, D. and Marx, A. "Skewness-Robust Causal Discovery in Location-Scale Noise
       Models", ICML 2026, arXiv:2511.14441.

    Examples
    --------
    >>> from sklearn_icml26.metrics import audrc
    >>> round(audrc([1, 1, -1, 1], [0.9, -0.8, 0.5, 0.1]), 6)
    0.583333
    >>> round(audrc([1, 1, -1, 1], [0.9, -0.8, 0.5, 0.1], sample_weight=[1, 2, 1, 1]), 6)
    0.463333
    """
    _, running, w = _curve(y_true, y_score, sample_weight)
    return float(np.sum(w * running) / np.sum(w))
