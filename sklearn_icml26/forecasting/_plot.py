"""Displays of simultaneous forecasts: forecasts beside the truth, and the equilibrium shares."""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._compat import check_matplotlib_support

__all__ = ["EquilibriumSharesDisplay", "ForecastDisplay"]


def _panel_values(Y, name):
    """(values (T, n) float64, column names or None, index or None) of an array or pandas."""
    columns = index = None
    if hasattr(Y, "columns"):
        columns, index = list(Y.columns), Y.index
    elif hasattr(Y, "index") and hasattr(Y, "name"):  # a Series
        columns, index = [Y.name if Y.name is not None else 0], Y.index
    try:
        values = np.asarray(Y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must hold numbers; conversion to float64 failed: {exc}") from exc
    if values.ndim == 1:
        values = values[:, None]
    if values.ndim != 2:
        raise ValueError(f"{name} must be of shape (n_timesteps, n_systems) or (n_timesteps,); "
                         f"got shape {values.shape}.")
    return values, columns, index


def _select(systems, names, n_systems):
    """Column indices of ``systems`` (positions or names) among ``n_systems`` columns."""
    if systems is None:
        return list(range(n_systems))
    if np.isscalar(systems):
        systems = [systems]
    systems = list(systems)
    if not systems:
        raise ValueError("systems must name at least one system; got an empty sequence.")
    idx = []
    for s in systems:
        if names is not None and s in names:
            idx.append(names.index(s))
        elif isinstance(s, (int, np.integer)) and not isinstance(s, bool) \
                and -n_systems <= s < n_systems:
            idx.append(int(s) % n_systems)
        else:
            known = f"; known names are e.g. {names[:5]}" if names is not None else ""
            raise ValueError(f"systems holds {s!r}, which is neither a column position in "
                             f"[0, {n_systems}) nor a system name{known}.")
    return idx


def _system_names_of(estimator):
    """System names of an ESERegressor fitted on windows with ``f"{col}_lag{j}"`` columns."""
    names = getattr(estimator, "feature_names_in_", None)
    if names is None:
        return None
    p = estimator.n_lags_
    first = [str(names[i * p]) for i in range(estimator.n_systems_)]
    suffix = f"_lag{p}"
    if all(f.endswith(suffix) for f in first):
        return [f[: -len(suffix)] for f in first]
    return None


class ForecastDisplay:
    """Forecasts of chosen systems beside the truth, one axes per system.

    Each axes shows the observed values (black) and the forecasts of one system over time;
    several forecasters go on the same axes by passing ``axes`` (e.g. a random-walk
    anchor). Create it with :meth:`from_estimator` or :meth:`from_predictions`. Needs
    matplotlib (the ``plot`` extra).

    Parameters
    ----------
    time : array-like of shape (n_timesteps,)
        Time of each row (numbers or dates), the x-axis.
    y_true : ndarray of shape (n_timesteps, n_shown) or None
        Observed values of the shown systems (data units); ``None`` draws no truth.
    y_pred : ndarray of shape (n_timesteps, n_shown)
        Forecasts of the shown systems (data units).
    system_names : list of str of length n_shown, default=None
        Axes titles; ``"system i"`` when ``None``.
    name : str, default=None
        Legend label of the forecasts.

    Attributes
    ----------
    axes_ : ndarray of matplotlib.axes.Axes of shape (n_shown,)
        One axes per shown system.
    figure_ : matplotlib.figure.Figure
        The figure.
    truth_lines_ : list of matplotlib.lines.Line2D or None
        The observed values per shown system (``None`` entries when not drawn).
    forecast_lines_ : list of matplotlib.lines.Line2D
        The forecasts per shown system.

    See Also
    --------
    EquilibriumSharesDisplay : The shares that split the aggregate forecast.
    ESERegressor : The forecaster.

    References
    ----------
    .. [1] Xu, Song, Gao, Liu. "Once-for-All: Scalable Simultaneous Forecasting via Equilibrium
       State Estimation". ICML 2026, arXiv:2606.13285.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_icml26.datasets import make_interacting_systems
    >>> from sklearn_icml26.forecasting import ESERegressor, ForecastDisplay, sliding_window
    >>> Y, _, _ = make_interacting_systems(4, 120, random_state=0)
    >>> X, y = sliding_window(Y, n_lags=5)
    >>> ese = ESERegressor().fit(X[:100], y[:100])
    >>> disp = ForecastDisplay.from_estimator(ese, X[100:], y[100:], systems=[0, 2])
    >>> len(disp.forecast_lines_), disp.forecast_lines_[0].get_ydata().shape
    (2, (15,))
    """

    def __init__(self, time, y_true, y_pred, *, system_names=None, name=None):
        self.time = time
        self.y_true = y_true
        self.y_pred = y_pred
        self.system_names = system_names
        self.name = name

    def plot(self, axes=None, *, name=None, truth=True, n_cols=2, **kwargs):
        """Draw the forecasts (and the truth).

        Parameters
        ----------
        axes : array-like of matplotlib.axes.Axes of shape (n_shown,), default=None
            Axes to draw on, one per shown system (e.g. ``disp.axes_`` of an earlier
            display); a new figure with ``n_cols`` columns when ``None``.
        name : str, default=None
            Legend label; the display's ``name`` when ``None``.
        truth : bool, default=True
            Draw the observed values (skip it for a second forecaster on the same axes).
        n_cols : int, default=2
            Columns of the new figure.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for the forecasts.

        Returns
        -------
        display : ForecastDisplay
            The display, with ``axes_``, ``figure_``, ``truth_lines_`` and
            ``forecast_lines_`` set.

        Raises
        ------
        ValueError
            If ``y_pred`` (or ``y_true``) does not have one row per time and one column per
            shown system, or ``axes`` does not hold one axes per shown system.
        """
        check_matplotlib_support("ForecastDisplay.plot")
        import matplotlib.pyplot as plt

        y_pred = np.asarray(self.y_pred, dtype=np.float64)
        y_pred = y_pred[:, None] if y_pred.ndim == 1 else y_pred
        time = np.asarray(self.time)
        if y_pred.ndim != 2 or y_pred.shape[0] != len(time):
            raise ValueError(f"y_pred must be of shape (n_timesteps={len(time)}, n_shown); got "
                             f"shape {y_pred.shape}.")
        n_shown = y_pred.shape[1]
        y_true = None
        if self.y_true is not None:
            y_true = np.asarray(self.y_true, dtype=np.float64)
            y_true = y_true[:, None] if y_true.ndim == 1 else y_true
            if y_true.shape != y_pred.shape:
                raise ValueError(f"y_true must have the shape of y_pred {y_pred.shape}; got "
                                 f"{y_true.shape}.")
        if axes is None:
            n_cols = max(1, min(int(n_cols), n_shown))
            n_rows = -(-n_shown // n_cols)
            fig, grid = plt.subplots(n_rows, n_cols, squeeze=False, sharex=True,
                                     figsize=(5 * n_cols, 3 * n_rows))
            for ax in grid.ravel()[n_shown:]:
                ax.set_visible(False)
            axes = grid.ravel()[:n_shown]
        axes = np.asarray(axes, dtype=object).ravel()
        if axes.size != n_shown:
            raise ValueError(f"axes must hold one axes per shown system ({n_shown}); got "
                             f"{axes.size}.")
        names = (list(self.system_names) if self.system_names is not None
                 else [f"system {i}" for i in range(n_shown)])
        label = name if name is not None else (self.name or "forecast")
        kwargs.setdefault("marker", "o")
        kwargs.setdefault("ms", 3)
        self.truth_lines_, self.forecast_lines_ = [], []
        for j, ax in enumerate(axes):
            line = None
            if truth and y_true is not None:
                (line,) = ax.plot(time, y_true[:, j], color="black", lw=1, label="observed")
            self.truth_lines_.append(line)
            (fline,) = ax.plot(time, y_pred[:, j], label=label, **kwargs)
            self.forecast_lines_.append(fline)
            ax.set_title(str(names[j]))
            ax.tick_params(axis="x", labelrotation=30)
        axes[0].legend(fontsize=8)
        self.axes_ = axes
        self.figure_ = axes[0].figure
        return self

    @classmethod
    def from_predictions(cls, y_true, y_pred, *, systems=None, time=None, system_names=None,
                         name=None, axes=None, **kwargs):
        """Draw forecasts given as arrays.

        Parameters
        ----------
        y_true : array-like of shape (n_timesteps, n_systems) or (n_timesteps,) or None
            Observed values (data units); a DataFrame gives the system names and the time
            (its index). ``None`` draws no truth.
        y_pred : array-like of shape (n_timesteps, n_systems) or (n_timesteps,)
            Forecasts of the same rows and systems (data units).
        systems : int, str or sequence of them, default=None
            The systems to show: column positions, or names (the columns of a DataFrame
            ``y_true`` or ``system_names``). ``None`` shows all.
        time : array-like of shape (n_timesteps,), default=None
            Time of each row; the DataFrame index, else ``0 .. n_timesteps - 1``.
        system_names : list of str of length n_systems, default=None
            Names of all systems; the DataFrame columns when ``None``.
        name : str, default=None
            Legend label of the forecasts.
        axes : array-like of matplotlib.axes.Axes, default=None
            Axes to draw on, one per shown system.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : ForecastDisplay

        Raises
        ------
        ValueError
            If ``y_true`` and ``y_pred`` differ in shape, ``time`` in length, or ``systems``
            names an unknown system.
        TypeError
            If ``y_true`` or ``y_pred`` is not numeric.
        """
        pred, pred_cols, pred_index = _panel_values(y_pred, "y_pred")
        if y_true is not None:
            true, columns, index = _panel_values(y_true, "y_true")
            if true.shape != pred.shape:
                raise ValueError(f"y_true and y_pred must have the same shape; got "
                                 f"{true.shape} and {pred.shape}.")
        else:
            true, columns, index = None, pred_cols, pred_index
        if system_names is not None:
            columns = list(system_names)
            if len(columns) != pred.shape[1]:
                raise ValueError(f"system_names must name the {pred.shape[1]} systems; got "
                                 f"{len(columns)} names.")
        if time is None:
            time = index if index is not None else np.arange(pred.shape[0])
        if len(time) != pred.shape[0]:
            raise ValueError(f"time must have one entry per row ({pred.shape[0]}); got "
                             f"{len(time)}.")
        idx = _select(systems, columns, pred.shape[1])
        shown = [columns[i] for i in idx] if columns is not None else [f"system {i}"
                                                                         for i in idx]
        disp = cls(np.asarray(time), None if true is None else true[:, idx], pred[:, idx],
                   system_names=shown, name=name)
        return disp.plot(axes=axes, **kwargs)

    @classmethod
    def from_estimator(cls, estimator, X, y, *, systems=None, time=None, system_names=None,
                       name=None, axes=None, **kwargs):
        """Draw the forecasts of a fitted forecaster (``estimator.predict(X)``) beside ``y``.

        Parameters
        ----------
        estimator : ESERegressor
            A fitted forecaster of all systems (any regressor whose ``predict`` returns one
            column per system).
        X : array-like of shape (n_timesteps, n_systems * n_lags)
            Windows, as built by :func:`sliding_window`.
        y : array-like of shape (n_timesteps, n_systems) or (n_timesteps,) or None
            The observed targets of those windows; a DataFrame gives names and time.
        systems : int, str or sequence of them, default=None
            The systems to show (positions or names); ``None`` shows all.
        time : array-like of shape (n_timesteps,), default=None
            Time of each row; the index of ``y`` (or ``X``) when pandas, else positions.
        system_names : list of str of length n_systems, default=None
            Names of all systems; by default the columns of ``y``, else read from the
            ``f"{name}_lag{j}"`` columns that :func:`sliding_window` gives ``X``.
        name : str, default=None
            Legend label; the estimator's class name when ``None``.
        axes : array-like of matplotlib.axes.Axes, default=None
            Axes to draw on, one per shown system.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : ForecastDisplay

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            As :meth:`from_predictions`, and where ``X`` does not suit the estimator.
        """
        check_is_fitted(estimator)
        y_pred = estimator.predict(X)
        if system_names is None and not hasattr(y, "columns"):
            system_names = _system_names_of(estimator)
        if time is None and y is None and hasattr(X, "index"):
            time = X.index
        return cls.from_predictions(
            y, y_pred, systems=systems, time=time, system_names=system_names,
            name=name if name is not None else type(estimator).__name__, axes=axes, **kwargs)


class EquilibriumSharesDisplay:
    """The equilibrium shares of chosen systems over the rows (time).

    ESE splits its aggregate forecast with these shares (each row of the full share matrix
    sums to 1); the display draws one line per chosen system, optionally with a vertical
    line at the start of a test period. Create it with :meth:`from_estimator`. Needs
    matplotlib (the ``plot`` extra).

    Parameters
    ----------
    time : array-like of shape (n_timesteps,)
        Time of each row (numbers or dates), the x-axis.
    shares : ndarray of shape (n_timesteps, n_shown)
        Shares of the shown systems, in [0, 1].
    system_names : list of str of length n_shown, default=None
        Legend labels; ``"system i"`` when ``None``.
    split : scalar, default=None
        A time (e.g. the first test row) marked with a dotted vertical line.

    Attributes
    ----------
    lines_ : list of matplotlib.lines.Line2D
        One line per shown system.
    split_line_ : matplotlib.lines.Line2D or None
        The vertical line at ``split``.
    ax_ : matplotlib.axes.Axes
        The axes drawn on.
    figure_ : matplotlib.figure.Figure
        The figure of ``ax_``.

    See Also
    --------
    ESERegressor.equilibrium_shares : The shares drawn.
    ForecastDisplay : Forecasts beside the truth.

    References
    ----------
    .. [1] Xu, Song, Gao, Liu. "Once-for-All: Scalable Simultaneous Forecasting via Equilibrium
       State Estimation". ICML 2026, arXiv:2606.13285.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_icml26.datasets import make_interacting_systems
    >>> from sklearn_icml26.forecasting import (EquilibriumSharesDisplay, ESERegressor,
    ...                                         sliding_window)
    >>> Y, _, _ = make_interacting_systems(4, 120, random_state=0)
    >>> X, y = sliding_window(Y, n_lags=5)
    >>> ese = ESERegressor().fit(X[:100], y[:100])
    >>> disp = EquilibriumSharesDisplay.from_estimator(ese, X, split=100)
    >>> len(disp.lines_)
    4
    """

    def __init__(self, time, shares, *, system_names=None, split=None):
        self.time = time
        self.shares = shares
        self.system_names = system_names
        self.split = split

    def plot(self, ax=None, *, legend=True, **kwargs):
        """Draw one line of shares per shown system.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on; a new figure when ``None``.
        legend : bool, default=True
            Draw the legend (outside the axes, to the right).
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for every line.

        Returns
        -------
        display : EquilibriumSharesDisplay
            The display, with ``lines_``, ``split_line_``, ``ax_`` and ``figure_`` set.

        Raises
        ------
        ValueError
            If ``shares`` does not have one row per time.
        """
        check_matplotlib_support("EquilibriumSharesDisplay.plot")
        import matplotlib.pyplot as plt

        shares = np.asarray(self.shares, dtype=np.float64)
        shares = shares[:, None] if shares.ndim == 1 else shares
        time = np.asarray(self.time)
        if shares.ndim != 2 or shares.shape[0] != len(time):
            raise ValueError(f"shares must be of shape (n_timesteps={len(time)}, n_shown); got "
                             f"shape {shares.shape}.")
        if ax is None:
            _, ax = plt.subplots(figsize=(9, 4))
        names = (list(self.system_names) if self.system_names is not None
                 else [f"system {i}" for i in range(shares.shape[1])])
        kwargs.setdefault("lw", 1.2)
        self.lines_ = [ax.plot(time, shares[:, j], label=str(names[j]), **kwargs)[0]
                       for j in range(shares.shape[1])]
        self.split_line_ = None
        if self.split is not None:
            self.split_line_ = ax.axvline(self.split, color="black", lw=1, ls=":")
        ax.set(xlabel="time", ylabel="equilibrium share of the total")
        if legend:
            ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_estimator(cls, estimator, X, *, systems=None, time=None, system_names=None,
                       split=None, system_attributes=None, ax=None, **kwargs):
        """Draw ``estimator.equilibrium_shares(X)`` of chosen systems.

        Parameters
        ----------
        estimator : ESERegressor
            A fitted ESE forecaster.
        X : array-like of shape (n_timesteps, n_systems * n_lags)
            Windows, as built by :func:`sliding_window`; a DataFrame gives the time (its
            index) and the system names (its ``f"{name}_lag{j}"`` columns).
        systems : int, str or sequence of them, default=None
            The systems to show (positions or names); ``None`` shows all.
        time : array-like of shape (n_timesteps,), default=None
            Time of each row; the index of ``X`` when pandas, else positions.
        system_names : list of str of length n_systems, default=None
            Names of all systems; read from the columns of ``X`` when ``None``.
        split : scalar, default=None
            A time marked with a dotted vertical line (e.g. the first test row).
        system_attributes : array-like, default=None
            Passed to :meth:`ESERegressor.equilibrium_shares` (``init="attributes"``).
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : EquilibriumSharesDisplay

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``systems`` names an unknown system, ``time`` or ``system_names`` have the
            wrong length, or ``X`` does not suit the estimator.
        """
        check_is_fitted(estimator)
        shares = np.asarray(estimator.equilibrium_shares(X, system_attributes), dtype=np.float64)
        shares = shares[:, None] if shares.ndim == 1 else shares
        n = shares.shape[1]
        if system_names is None:
            system_names = _system_names_of(estimator)
        elif len(system_names) != n:
            raise ValueError(f"system_names must name the {n} systems; got "
                             f"{len(system_names)} names.")
        if time is None:
            time = X.index if hasattr(X, "index") else np.arange(shares.shape[0])
        if len(time) != shares.shape[0]:
            raise ValueError(f"time must have one entry per row of X ({shares.shape[0]}); got "
                             f"{len(time)}.")
        names = list(system_names) if system_names is not None else None
        idx = _select(systems, names, n)
        shown = [names[i] for i in idx] if names is not None else [f"system {i}" for i in idx]
        disp = cls(np.asarray(time), shares[:, idx], system_names=shown, split=split)
        return disp.plot(ax=ax, **kwargs)
