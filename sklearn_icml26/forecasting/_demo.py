"""Demo of ESERegressor on COVID-19 Victoria, beside the random walk and per-system Ridge."""

import time

import numpy as np
from sklearn.linear_model import RidgeCV

from ..datasets import load_ese_covid_victoria
from ..utils._demo_rows import demo_row, demo_table
from ..utils._progress import progress_bar
from . import ESERegressor, PerSystemRegressor, sliding_window

__all__ = ["run_demo"]


def run_demo(data_home=None, verbose=1, fast=False):
    """ESE on COVID-19 Victoria (319 regions) beside the random walk and per-system Ridge.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Data home holding ``ese_xu2026/`` (see :func:`sklearn_icml26.datasets.get_data_home`).
    verbose : int, default=1
        Progress bar over the methods when positive.
    fast : bool, default=False
        Use the 20-region level instead of 319 regions.

    Returns
    -------
    table : pandas.DataFrame
        Columns ``method, dataset, metric, value, anchor, anchor_value, seconds``.
    """
    level = 20 if fast else 320
    bunch = load_ese_covid_victoria(level=level, data_home=data_home)
    Y = bunch.data.to_numpy(dtype=np.float64)
    p = 100
    X, y = sliding_window(Y, p)
    n_test = round(0.1 * Y.shape[0])
    Xtr, ytr, Xte, yte = X[:-n_test], y[:-n_test], X[-n_test:], y[-n_test:]

    def rmse(pred):
        return float(np.mean(np.sqrt(np.mean((pred - yte) ** 2, axis=0))))

    alphas = np.logspace(-6, 3, 10)
    methods = {
        "ESERegressor": lambda: ESERegressor(),
        "ESERegressor(RidgeCV)": lambda: ESERegressor(RidgeCV(alphas=alphas), aggregate_lags=14),
        "PerSystemRegressor(RidgeCV)": lambda: PerSystemRegressor(RidgeCV(alphas=alphas),
                                                                  n_lags=14),
    }
    rw = rmse(Xte.reshape(n_test, Y.shape[1], p)[:, :, -1])
    dataset = f"COVID-Victoria-{Y.shape[1]}"
    rows = []
    for name in progress_bar(methods, verbose=verbose, desc="ESE demo"):
        start = time.perf_counter()
        pred = methods[name]().fit(Xtr, ytr).predict(Xte)
        rows.append(demo_row(method=name, dataset=dataset, metric="RMSE", value=rmse(pred),
                             anchor="random walk", anchor_value=rw,
                             seconds=time.perf_counter() - start))
    return demo_table(rows)
