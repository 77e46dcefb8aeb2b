"""Displays of cause-effect decisions: the fitted pair, and accuracy against decision rate."""

import numpy as np
from scipy.stats import skewnorm
from sklearn.utils.validation import check_is_fitted

from .._compat import check_matplotlib_support
from ..metrics import audrc, decision_rate_curve, weighted_accuracy
from ..utils._scaling import _standardize

__all__ = ["CauseEffectDisplay", "DecisionRateDisplay"]


class DecisionRateDisplay:
    """Weighted accuracy against decision rate, the curve whose mean is the AUDRC.

    Decisions are taken in decreasing order of confidence ``|y_score|``; after each pair the
    curve shows the weighted fraction of pairs decided (x) and the weighted accuracy of the
    decisions so far (y). A method whose confident decisions are right starts high. Create it
    with :meth:`from_predictions`; several methods go on one axes by passing ``ax``. Needs
    matplotlib (the ``plot`` extra).

    Parameters
    ----------
    decision_rate : ndarray of shape (n_pairs,)
        Weighted fraction of pairs decided, increasing to 1.
    accuracy : ndarray of shape (n_pairs,)
        Weighted running accuracy, in [0, 1].
    audrc : float, default=None
        Area under the curve, shown in the legend.
    accuracy_all : float, default=None
        Weighted accuracy of all decisions, shown in the legend.
    name : str, default=None
        Legend label of the method.

    Attributes
    ----------
    line_ : matplotlib.lines.Line2D
        The curve (a post-step line).
    ax_ : matplotlib.axes.Axes
        The axes drawn on.
    figure_ : matplotlib.figure.Figure
        The figure of ``ax_``.

    See Also
    --------
    sklearn_icml26.metrics.decision_rate_curve : The curve's points.
    sklearn_icml26.metrics.audrc : Its area.

    References
    ----------
    .. [1] Klippert, D. and Marx, A. "Skewness-Robust Causal Discovery in Location-Scale Noise
       Models", ICML 2026, arXiv:2511.14441.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_icml26.causal_discovery import DecisionRateDisplay
    >>> disp = DecisionRateDisplay.from_predictions([1, 1, -1, 1], [0.9, -0.8, 0.5, 0.1])
    >>> disp.line_.get_ydata().tolist()
    [1.0, 0.5, 0.3333333333333333, 0.5]
    """

    def __init__(self, decision_rate, accuracy, *, audrc=None, accuracy_all=None, name=None):
        self.decision_rate = decision_rate
        self.accuracy = accuracy
        self.audrc = audrc
        self.accuracy_all = accuracy_all
        self.name = name

    def plot(self, ax=None, *, name=None, chance=True, **kwargs):
        """Draw the curve.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on; a new figure when ``None``.
        name : str, default=None
            Legend label; the display's ``name`` when ``None``.
        chance : bool, default=True
            Draw the chance level 0.5 as a dotted line.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.step`.

        Returns
        -------
        display : DecisionRateDisplay
            The display, with ``line_``, ``ax_`` and ``figure_`` set.
        """
        check_matplotlib_support("DecisionRateDisplay.plot")
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        name = name if name is not None else self.name
        parts = [name] if name else []
        if self.accuracy_all is not None:
            parts.append(f"accuracy {self.accuracy_all:.3f}")
        if self.audrc is not None:
            parts.append(f"AUDRC {self.audrc:.3f}")
        label = ", ".join(parts) or None
        (self.line_,) = ax.step(self.decision_rate, self.accuracy, where="post", label=label,
                                **kwargs)
        if chance:
            ax.axhline(0.5, color="grey", lw=0.8, ls=":")
        ax.set(xlabel="decision rate (weighted fraction of pairs decided)",
               ylabel="weighted accuracy", xlim=(0, 1.02), ylim=(0, 1.05))
        if label:
            ax.legend(fontsize=8)
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_true, y_score, *, sample_weight=None, name=None, ax=None,
                         **kwargs):
        """Draw the curve of signed decision scores.

        Parameters
        ----------
        y_true : array-like of shape (n_pairs,)
            True directions, +1 or -1.
        y_score : array-like of shape (n_pairs,)
            Signed decision scores (e.g. ``score_pairs(...).score_it``); ``|y_score|`` is the
            confidence.
        sample_weight : array-like of shape (n_pairs,), default=None
            Non-negative pair weights (the Tübingen weights).
        name : str, default=None
            Legend label of the method.
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : DecisionRateDisplay

        Raises
        ------
        ValueError
            As :func:`~sklearn_icml26.metrics.decision_rate_curve` (labels other than ±1,
            lengths that differ, non-finite scores, negative weights).
        """
        rate, acc = decision_rate_curve(y_true, y_score, sample_weight=sample_weight)
        disp = cls(rate, acc, audrc=audrc(y_true, y_score, sample_weight=sample_weight),
                   accuracy_all=weighted_accuracy(y_true, y_score, sample_weight=sample_weight),
                   name=name)
        return disp.plot(ax=ax, **kwargs)


class CauseEffectDisplay:
    """A pair of variables with the location-scale models fitted in both directions.

    One column per direction (``x0 -> x1`` and ``x1 -> x0``): the standardised points, the
    fitted location ``f``, the band ``f ± g`` and the 5-95 % band of the fitted skew-normal
    noise, with each model's log-likelihood in the title. The direction SkewD chose is marked.
    Create it with :meth:`from_estimator`. Needs matplotlib (the ``plot`` extra).

    Parameters
    ----------
    X : ndarray of shape (n_samples, 2)
        The pair, standardised as the estimator standardised it.
    models : dict
        ``{"forward": regressor, "backward": regressor}``: fitted
        :class:`SkewNormalLSNMRegressor` of column 1 on column 0 and of column 0 on column 1.
    direction : {1, -1, 0}, default=0
        The chosen direction (``1``: column 0 causes column 1), marked in the titles.
    feature_names : sequence of two str, default=None
        Names of the two variables; ``x0``, ``x1`` when ``None``.
    n_grid : int, default=200
        Number of points on which the bands are drawn.

    Attributes
    ----------
    axes_ : ndarray of matplotlib.axes.Axes of shape (2,)
        The two axes (forward, backward).
    figure_ : matplotlib.figure.Figure
        The figure.
    location_lines_ : dict of str to matplotlib.lines.Line2D
        The fitted location per direction (``"forward"``, ``"backward"``).

    See Also
    --------
    SkewDCausalDiscoverer : The discoverer whose models are drawn.

    References
    ----------
    .. [1] Klippert, D. and Marx, A. "Skewness-Robust Causal Discovery in Location-Scale Noise
       Models", ICML 2026, arXiv:2511.14441.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn_icml26.causal_discovery import CauseEffectDisplay, SkewDCausalDiscoverer
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-2, 2, 300)
    >>> X = np.column_stack([x, np.tanh(x) + 0.2 * rng.exponential(size=300)])
    >>> disc = SkewDCausalDiscoverer(random_state=0).fit(X)
    >>> disp = CauseEffectDisplay.from_estimator(disc, X)
    >>> len(disp.axes_)
    2
    """

    def __init__(self, X, models, *, direction=0, feature_names=None, n_grid=200):
        self.X = X
        self.models = models
        self.direction = direction
        self.feature_names = feature_names
        self.n_grid = n_grid

    def plot(self, axes=None):
        """Draw both directions.

        Parameters
        ----------
        axes : sequence of two matplotlib.axes.Axes, default=None
            Axes for the forward and the backward model; a new 1 × 2 figure when ``None``.

        Returns
        -------
        display : CauseEffectDisplay
            The display, with ``axes_``, ``figure_`` and ``location_lines_`` set.
        """
        check_matplotlib_support("CauseEffectDisplay.plot")
        import matplotlib.pyplot as plt

        X = np.asarray(self.X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != 2:
            raise ValueError(f"X must be a pair of shape (n_samples, 2); got shape {X.shape}.")
        if axes is None:
            _, axes = plt.subplots(1, 2, figsize=(10, 4))
        axes = np.asarray(axes, dtype=object).ravel()
        if axes.shape != (2,):
            raise ValueError(f"axes must hold two axes (forward, backward); got {axes.size}.")
        names = list(self.feature_names) if self.feature_names is not None else ["x0", "x1"]
        self.location_lines_ = {}
        for ax, key, cause, effect, sign in ((axes[0], "forward", 0, 1, 1),
                                             (axes[1], "backward", 1, 0, -1)):
            est = self.models[key]
            grid = np.linspace(X[:, cause].min(), X[:, cause].max(), self.n_grid)[:, None]
            loc, scale = est.predict_location(grid), est.predict_scale(grid)
            q05, q95 = (skewnorm.ppf(q, est.shape_, loc=loc, scale=scale) for q in (0.05, 0.95))
            ax.scatter(X[:, cause], X[:, effect], s=6, alpha=0.5, color="grey")
            ax.fill_between(grid[:, 0], q05, q95, alpha=0.2, color="C0",
                            label="5-95 % of the fitted noise")
            ax.fill_between(grid[:, 0], loc - scale, loc + scale, alpha=0.35, color="C0",
                            label="location ± scale")
            (self.location_lines_[key],) = ax.plot(grid[:, 0], loc, color="C1",
                                                   label="location f")
            ll = est.log_likelihood(X[:, [cause]], X[:, effect])
            chosen = " (chosen)" if self.direction == sign else ""
            ax.set(title=f"{names[cause]} → {names[effect]}{chosen}: log-lik {ll:.1f}",
                   xlabel=f"{names[cause]} (standardised)",
                   ylabel=f"{names[effect]} (standardised)")
            ax.legend(fontsize=7)
        self.axes_ = axes
        self.figure_ = axes[0].figure
        return self

    @classmethod
    def from_estimator(cls, estimator, X, *, axes=None, **kwargs):
        """Draw the two models of a :class:`SkewDCausalDiscoverer` fitted on a pair.

        Parameters
        ----------
        estimator : SkewDCausalDiscoverer
            Fitted on the pair ``X`` (two variables).
        X : array-like of shape (n_samples, 2)
            The pair it was fitted on (data units); standardised here as in ``fit``.
        axes : sequence of two matplotlib.axes.Axes, default=None
            Axes for the forward and the backward model; a new 1 × 2 figure when ``None``.
        **kwargs : dict
            Passed to the constructor (``feature_names``, ``n_grid``).

        Returns
        -------
        display : CauseEffectDisplay

        Raises
        ------
        ValueError
            If the estimator was fitted on more than two variables, or on a pair with a
            constant variable (no models were fitted), or ``X`` is not a pair.
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        """
        check_is_fitted(estimator)
        if estimator.n_features_in_ != 2:
            raise ValueError(f"estimator was fitted on {estimator.n_features_in_} variables; "
                             f"CauseEffectDisplay draws pairs (2 variables).")
        if set(estimator.estimators_) != {"forward", "backward"}:
            raise ValueError("estimator has no fitted models (a constant variable: no "
                             "direction was decided); nothing to draw.")
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != 2:
            raise ValueError(f"X must be the pair of shape (n_samples, 2) the estimator was "
                             f"fitted on; got shape {X.shape}.")
        names = getattr(estimator, "feature_names_in_", None)
        kwargs.setdefault("feature_names", None if names is None else list(names))
        Xs = _standardize(X, estimator.mean_, estimator.scale_)
        disp = cls(Xs, estimator.estimators_, direction=estimator.direction_, **kwargs)
        return disp.plot(axes=axes)
