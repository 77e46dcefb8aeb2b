"""Display of a time-resolved treatment effect: estimate, pointwise intervals, uniform band."""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._compat import check_matplotlib_support

__all__ = ["LongitudinalEffectDisplay"]

# summary() columns of the anchors the display can draw beside the estimate
_ANCHORS = {"lin": "Lin (HC2)", "dim": "difference in means", "cuped": "CUPED"}


def _as_period_array(values, name, n_periods):
    if values is None:
        return None
    arr = np.asarray(values, dtype=np.float64)
    if arr.shape != (n_periods,):
        raise ValueError(f"{name} must have one value per period, shape ({n_periods},); got "
                         f"shape {arr.shape}.")
    return arr


class LongitudinalEffectDisplay:
    """Treatment effect per period with pointwise intervals and a uniform band.

    The plot shows the estimate at every period with its pointwise confidence intervals as
    error bars, the sup-t uniform band (covering all periods jointly) as a shaded area, and
    optionally anchors (Lin's regression adjustment, the difference in means, CUPED) with their
    pointwise intervals, slightly shifted so that the bars do not overlap. Create it with
    :meth:`from_estimator`; the constructor takes precomputed values. Needs matplotlib (the
    ``plot`` extra).

    Parameters
    ----------
    periods : array-like of shape (n_periods,)
        The x positions of the periods (float; e.g. months after randomisation).
    estimate : array-like of shape (n_periods,)
        The effect at each period (float; outcome units).
    ci_lower, ci_upper : array-like of shape (n_periods,)
        Pointwise confidence limits (float; outcome units).
    band_lower, band_upper : array-like of shape (n_periods,), default=None
        Limits of the uniform band (float; outcome units); not drawn when ``None``.
    anchors : dict of str to tuple of three array-likes, default=None
        ``{label: (estimate, ci_lower, ci_upper)}`` of other estimators, each of shape
        ``(n_periods,)``.
    estimator_name : str, default=None
        Label of the estimate in the legend; ``"estimate"`` when ``None``.

    Attributes
    ----------
    ax_ : matplotlib.axes.Axes
        The axes drawn on.
    figure_ : matplotlib.figure.Figure
        The figure of ``ax_``.
    errorbar_ : matplotlib.container.ErrorbarContainer
        The estimate and its pointwise intervals.
    band_ : matplotlib.collections.PolyCollection or None
        The uniform band.
    anchor_errorbars_ : dict of str to matplotlib.container.ErrorbarContainer
        One container per anchor drawn, keyed by its label.

    Raises
    ------
    ValueError
        If a per-period array does not have one value per period.

    See Also
    --------
    LongitudinalRegressionAdjuster.summary : The table the display draws.

    References
    ----------
    .. [1] Chihara et al., "Modeling Covariate Transition for Efficient Estimation of
       Longitudinal Treatment Effects", ICML 2026.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_icml26.treatment_effects import LongitudinalEffectDisplay
    >>> disp = LongitudinalEffectDisplay([1, 2], [0.5, 1.0], [0.1, 0.4], [0.9, 1.6])
    >>> disp = disp.plot()
    >>> disp.errorbar_.lines[0].get_ydata().tolist()
    [0.5, 1.0]
    """

    def __init__(self, periods, estimate, ci_lower, ci_upper, band_lower=None, band_upper=None,
                 anchors=None, estimator_name=None):
        self.periods = periods
        self.estimate = estimate
        self.ci_lower = ci_lower
        self.ci_upper = ci_upper
        self.band_lower = band_lower
        self.band_upper = band_upper
        self.anchors = anchors
        self.estimator_name = estimator_name

    def plot(self, ax=None, *, shift=None, xlabel="period", ylabel="effect"):
        """Draw the display.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on; a new figure when ``None``.
        shift : float, default=None
            Horizontal offset between the estimate and each anchor (x units); ``None`` is 4 %
            of the smallest gap between periods.
        xlabel, ylabel : str, default="period", "effect"
            Axis labels.

        Returns
        -------
        display : LongitudinalEffectDisplay
            The display, with ``ax_``, ``figure_``, ``errorbar_``, ``band_`` and
            ``anchor_errorbars_`` set.
        """
        check_matplotlib_support("LongitudinalEffectDisplay.plot")
        import matplotlib.pyplot as plt

        x = np.asarray(self.periods, dtype=np.float64)
        n = x.shape[0]
        est = _as_period_array(self.estimate, "estimate", n)
        lo = _as_period_array(self.ci_lower, "ci_lower", n)
        hi = _as_period_array(self.ci_upper, "ci_upper", n)
        band_lo = _as_period_array(self.band_lower, "band_lower", n)
        band_hi = _as_period_array(self.band_upper, "band_upper", n)
        if ax is None:
            _, ax = plt.subplots()
        if shift is None:
            gaps = np.diff(np.sort(x))
            shift = 0.04 * (gaps.min() if gaps.size and gaps.min() > 0 else 1.0)
        name = self.estimator_name or "estimate"
        self.band_ = None
        if band_lo is not None and band_hi is not None:
            self.band_ = ax.fill_between(x, band_lo, band_hi, color="C0", alpha=0.15,
                                         label=f"{name}: uniform band")
        self.errorbar_ = ax.errorbar(x, est, yerr=np.vstack([est - lo, hi - est]), fmt="o-",
                                     color="C0", capsize=4, label=f"{name}: pointwise CI")
        self.anchor_errorbars_ = {}
        for k, (label, (a_est, a_lo, a_hi)) in enumerate((self.anchors or {}).items(), start=1):
            a_est = _as_period_array(a_est, f"anchors[{label!r}] estimate", n)
            a_lo = _as_period_array(a_lo, f"anchors[{label!r}] lower limit", n)
            a_hi = _as_period_array(a_hi, f"anchors[{label!r}] upper limit", n)
            offset = shift * ((k + 1) // 2) * (1 if k % 2 else -1)
            self.anchor_errorbars_[label] = ax.errorbar(
                x + offset, a_est, yerr=np.vstack([a_est - a_lo, a_hi - a_est]), fmt="s--",
                color=f"C{k}", capsize=3, label=label)
        ax.axhline(0.0, color="grey", lw=0.8)
        ax.set_xticks(x)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_estimator(cls, estimator, *, alpha=0.05, periods=None, anchors=("lin", "dim"),
                       ax=None, **kwargs):
        """Draw the effect curve of a fitted :class:`LongitudinalRegressionAdjuster`.

        Parameters
        ----------
        estimator : LongitudinalRegressionAdjuster
            A fitted two-arm estimator.
        alpha : float, default=0.05
            One minus the confidence level of the intervals and of the band.
        periods : array-like of shape (n_periods,), default=None
            x positions of the periods (e.g. months); ``0, 1, ...`` when ``None``.
        anchors : sequence of {"lin", "dim", "cuped"}, default=("lin", "dim")
            Anchors drawn beside the estimate, with their Wald intervals (normal quantile at
            ``alpha``), computed by the estimator on the units observed at each period.
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot` (``shift``, ``xlabel``, ``ylabel``).

        Returns
        -------
        display : LongitudinalEffectDisplay

        Raises
        ------
        ValueError
            If the estimator was fitted on one arm only (there is no effect to draw), or an
            anchor name is unknown.
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        """
        from scipy import stats

        check_is_fitted(estimator)
        if getattr(estimator, "single_arm_", False):
            raise ValueError("estimator was fitted on one arm only (treatment=None or one "
                             "arm): there is no treatment effect to draw.")
        unknown = sorted(set(anchors) - set(_ANCHORS))
        if unknown:
            raise ValueError(f"anchors must be among {sorted(_ANCHORS)}; got {unknown}.")
        table = estimator.summary(alpha=alpha)
        z = stats.norm.ppf(1 - alpha / 2)
        drawn = {}
        for key in anchors:
            est, se = table[key].to_numpy(), table[f"{key}_se"].to_numpy()
            drawn[_ANCHORS[key]] = (est, est - z * se, est + z * se)
        x = np.arange(len(table), dtype=np.float64) if periods is None else periods
        disp = cls(x, table["estimate"].to_numpy(), table["ci_lower"].to_numpy(),
                   table["ci_upper"].to_numpy(), table["band_lower"].to_numpy(),
                   table["band_upper"].to_numpy(), anchors=drawn,
                   estimator_name=type(estimator).__name__)
        return disp.plot(ax=ax, **kwargs)
