"""ESE's displays: forecasts beside the truth and equilibrium shares (artists' data checked)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

from sklearn_icml26.datasets import make_interacting_systems
from sklearn_icml26.forecasting import (
    EquilibriumSharesDisplay,
    ESERegressor,
    ForecastDisplay,
    sliding_window,
)

matplotlib = pytest.importorskip("matplotlib", reason="the plot extra is not installed")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _frame_panel(n=5, T=150):
    Y, _, _ = make_interacting_systems(n, T, random_state=0)
    dates = pd.date_range("2021-01-01", periods=T, freq="D")
    return pd.DataFrame(Y, index=dates, columns=[f"s{i}" for i in range(n)])


def test_forecast_display_draws_the_estimator_forecasts_beside_the_truth():
    panel = _frame_panel()
    X, y = sliding_window(panel, n_lags=6)
    ese = ESERegressor().fit(X[:120], y[:120])
    X_test, y_test = X[120:], y[120:]
    disp = ForecastDisplay.from_estimator(ese, X_test, y_test, systems=["s3", 1], name="ESE")
    pred = np.asarray(ese.predict(X_test))  # a DataFrame for pandas windows
    assert len(disp.axes_) == 2 and [ax.get_title() for ax in disp.axes_] == ["s3", "s1"]
    for j, col in enumerate([3, 1]):
        np.testing.assert_array_equal(disp.forecast_lines_[j].get_ydata(), pred[:, col])
        np.testing.assert_array_equal(disp.truth_lines_[j].get_ydata(),
                                      y_test.iloc[:, col].to_numpy())
        # time on the x-axis: the dates of the targets
        x = disp.forecast_lines_[j].get_xdata()
        assert pd.DatetimeIndex(x).equals(y_test.index)
    assert disp.forecast_lines_[0].get_label() == "ESE"
    # a second forecaster on the same axes, without drawing the truth again
    walk = X_test.filter(regex="_lag1$").to_numpy()
    other = ForecastDisplay.from_predictions(y_test, walk, systems=["s3", "s1"],
                                             axes=disp.axes_, truth=False, name="random walk")
    assert other.axes_[0] is disp.axes_[0] and other.truth_lines_ == [None, None]
    np.testing.assert_array_equal(other.forecast_lines_[1].get_ydata(), walk[:, 1])
    assert len(disp.axes_[0].get_lines()) == 3


def test_forecast_display_from_arrays_and_errors():
    y_true = np.arange(12.0).reshape(6, 2)
    y_pred = y_true + 0.5
    disp = ForecastDisplay.from_predictions(y_true, y_pred)
    np.testing.assert_array_equal(disp.forecast_lines_[1].get_xdata(), np.arange(6))
    np.testing.assert_array_equal(disp.forecast_lines_[1].get_ydata(), y_pred[:, 1])
    assert [ax.get_title() for ax in disp.axes_] == ["system 0", "system 1"]
    with pytest.raises(ValueError, match="same shape"):
        ForecastDisplay.from_predictions(y_true, y_pred[:, :1])
    with pytest.raises(ValueError, match="systems holds 'x'"):
        ForecastDisplay.from_predictions(y_true, y_pred, systems="x")
    with pytest.raises(ValueError, match="column position in \\[0, 2\\)"):
        ForecastDisplay.from_predictions(y_true, y_pred, systems=[5])
    with pytest.raises(ValueError, match="time must have one entry per row"):
        ForecastDisplay.from_predictions(y_true, y_pred, time=np.arange(3))
    with pytest.raises(ValueError, match="one axes per shown system"):
        ForecastDisplay.from_predictions(y_true, y_pred, axes=disp.axes_[:1])
    with pytest.raises(NotFittedError):
        ForecastDisplay.from_estimator(ESERegressor(), y_true, y_true)


def test_equilibrium_shares_display_draws_the_estimator_shares():
    panel = _frame_panel()
    X, y = sliding_window(panel, n_lags=6)
    ese = ESERegressor(damping=0.3).fit(X[:120], y[:120])
    split = y.index[120]
    disp = EquilibriumSharesDisplay.from_estimator(ese, X, systems=["s4", "s0"], split=split)
    shares = ese.equilibrium_shares(X)
    assert [line.get_label() for line in disp.lines_] == ["s4", "s0"]  # names from X's columns
    np.testing.assert_array_equal(disp.lines_[0].get_ydata(), shares[:, 4])
    np.testing.assert_array_equal(disp.lines_[1].get_ydata(), shares[:, 0])
    assert pd.DatetimeIndex(disp.lines_[0].get_xdata()).equals(X.index)
    assert disp.split_line_ is not None
    # all systems, fitted on arrays: the same shares, whose rows sum to 1
    ese_arrays = ESERegressor(damping=0.3).fit(X.to_numpy()[:120], y.to_numpy()[:120])
    full = EquilibriumSharesDisplay.from_estimator(ese_arrays, X.to_numpy())
    np.testing.assert_allclose(full.lines_[4].get_ydata(), shares[:, 4], rtol=1e-12)
    total = np.sum([line.get_ydata() for line in full.lines_], axis=0)
    np.testing.assert_allclose(total, 1.0, rtol=0, atol=1e-12)
    assert full.lines_[0].get_label() == "system 0" and full.split_line_ is None
    np.testing.assert_array_equal(full.lines_[0].get_xdata(), np.arange(len(X)))


def test_equilibrium_shares_display_errors():
    panel = _frame_panel(n=3, T=60)
    X, y = sliding_window(panel, n_lags=4)
    with pytest.raises(NotFittedError):
        EquilibriumSharesDisplay.from_estimator(ESERegressor(), X)
    ese = ESERegressor().fit(X, y)
    with pytest.raises(ValueError, match="systems holds 's9'"):
        EquilibriumSharesDisplay.from_estimator(ese, X, systems="s9")
    with pytest.raises(ValueError, match="system_names must name the 3 systems"):
        EquilibriumSharesDisplay.from_estimator(ese, X, system_names=["a"])
    with pytest.raises(ValueError, match=r"shares must be of shape \(n_timesteps=4"):
        EquilibriumSharesDisplay(np.arange(4), np.ones((5, 2))).plot()
