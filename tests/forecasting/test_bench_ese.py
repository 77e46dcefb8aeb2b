"""Tests of benchmarks/bench_ese.py (issue 13.12): a failing anchor is recorded in its row."""

import numpy as np
import pytest

from _common import load_benchmark  # benchmarks/, on the path (setup.cfg)


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("ese")


def _panel(T=200, n=6, seed=0):
    rng = np.random.default_rng(seed)
    return 20 + np.cumsum(rng.normal(size=(T, n)), axis=0) ** 2 / 50 + rng.uniform(1, 2, (T, n))


def test_failing_var_anchor_is_recorded_and_the_run_goes_on(bench):
    Y = _panel()
    Y[:, 2] = 5.0  # statsmodels' VAR refuses constant columns (ValueError)
    rows = bench.evaluate("const", Y, 12, 20, quick=True, verbose=False)
    by = {r["method"]: r for r in rows}
    var = by["statsmodels.VAR"]
    assert var["error"].startswith("ValueError: ") and "constant columns" in var["error"]
    assert var["rmse"] is None and var["rmse_over_rw"] is None and var["fit_seconds"] is None
    # the evaluation went on past the failing anchor, through every ESE row
    assert list(by).index("statsmodels.VAR") < list(by).index("ESERegressor")
    assert "ESERegressor(init='zeros', stop='ted') [released]" in by
    assert all(np.isfinite(r["rmse"]) for r in rows if r is not var)
    # the targets and the table take the failed row
    bench.check_targets(rows)
    table = bench.markdown_table(rows, bench.COLUMNS + ["error"])
    assert "constant columns" in table


def test_autoreg_anchor_with_fewer_lags_than_its_max_order(bench):
    # p < 10: the order was chosen up to 10 and indexed lags the window does not hold
    # ("index -2 is out of bounds" at p = 1); now it is chosen up to p. Planted AR(2): with
    # p = 3 the forecast error is the innovation's (sd 1)
    rng = np.random.default_rng(1)
    T, n, p = 600, 3, 3
    Y = np.zeros((T, n))
    for t in range(2, T):
        Y[t] = 0.5 * Y[t - 1] + 0.3 * Y[t - 2] + rng.normal(size=n)
    Y += 100.0
    rows = bench.evaluate("lags", Y, 1, 20, quick=True, verbose=False)  # AIC picks 2 > 1
    autoreg = next(r for r in rows if r["method"] == "statsmodels.AutoReg (per system)")
    assert "error" not in autoreg and np.isfinite(autoreg["rmse"])
    n_test = 200
    X = np.lib.stride_tricks.sliding_window_view(Y, p, axis=0)[: T - p]  # (windows, n, p)
    W_test, y_test = X[-n_test:], Y[p:][-n_test:]
    pred, info = bench.autoreg_per_system(Y[: T - n_test], W_test)
    rmse = np.sqrt(np.mean((pred - y_test) ** 2, axis=0))
    assert info == {} and np.all((rmse > 0.85) & (rmse < 1.15))


def test_autoreg_system_statsmodels_cannot_fit_is_noted(bench):
    Y = _panel(T=40, n=3)
    W_test = np.lib.stride_tricks.sliding_window_view(Y, 3, axis=0)[-5:]
    # 3 observations cannot fit an AR model with its order chosen over 1..3: persistence
    pred, info = bench.autoreg_per_system(Y[:3], W_test)
    np.testing.assert_array_equal(pred, W_test[:, :, -1])
    assert info["note"].startswith("3 of 3 systems forecast by persistence (AutoReg failed)")
