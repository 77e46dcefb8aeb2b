"""Demo of NeuroMambaImputer (`python -m sklearn_icml26 demo neuromamba`).

Hides 24-hour outages of the reference analysers of UCI Air Quality and fills them with the
imputer and with its anchors (KNNImputer, linear interpolation); the metric is the MAE over the
hidden entries in units of each column's standard deviation.
"""

import time

import numpy as np
import pandas as pd
from sklearn.impute import KNNImputer
from sklearn.preprocessing import StandardScaler

from ..datasets import load_air_quality, make_sensor_outages
from ..utils._demo_rows import anchor_rows, demo_table
from ._neuromamba import NeuroMambaImputer

__all__ = ["run_demo"]

_REFERENCE = ["CO_GT", "C6H6_GT", "NOx_GT", "NO2_GT"]


def run_demo(data_home=None, verbose=1, fast=False):
    """MAE of the imputer on reference-analyser outages beside KNN and interpolation.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Data home holding ``uci_air_quality/`` (see :func:`~sklearn_icml26.datasets.get_data_home`).
    verbose : int, default=1
        ``1`` prints progress.
    fast : bool, default=False
        A short version (the first 1,000 hours, 2 epochs) instead of the whole file and the
        estimator's default 15 epochs.

    Returns
    -------
    table : pandas.DataFrame
        Columns ``DEMO_COLUMNS``: the imputer's MAE (sd units) beside each anchor's.

    Examples
    --------
    >>> from sklearn_icml26.imputation._demo import run_demo
    >>> table = run_demo(verbose=0, fast=True)  # doctest: +SKIP
    """
    aq = load_air_quality(data_home)
    frame = aq.data.drop(columns="NMHC_GT")
    if fast:
        frame = frame.iloc[:1000]
    cols = list(frame.columns)
    X = frame.to_numpy()
    sd = np.nanstd(X, axis=0)
    groups = [[cols.index(c) for c in aq.groups[g] if c in cols]
              for g in ("reference", "sensor", "meteo")]
    Xc, mask = make_sensor_outages(X, "group_block", groups=[cols.index(c) for c in _REFERENCE],
                                   coverage=0.1, block_length=24, random_state=0)
    dataset = f"UCI Air Quality, reference outages 24 h ({len(X)} hours)"

    def mae(out):
        return float((np.abs(out - X) / sd)[mask].mean())

    results, seconds = {}, {}
    ours = "NeuroMambaImputer"
    if verbose:
        print(f"[neuromamba demo] fitting {ours} on {dataset} ...", flush=True)
    start = time.perf_counter()
    imp = NeuroMambaImputer(feature_groups=groups, seasonal_period=24,
                            max_epochs=2 if fast else 15, random_state=0, verbose=verbose)
    results[ours] = mae(imp.fit_transform(Xc))
    seconds[ours] = time.perf_counter() - start
    scaler = StandardScaler().fit(Xc)
    knn = scaler.inverse_transform(KNNImputer(n_neighbors=5).fit_transform(scaler.transform(Xc)))
    results["KNNImputer(5)"] = mae(knn)
    interp = pd.DataFrame(Xc).interpolate(limit_direction="both").to_numpy()
    results["pandas interpolate"] = mae(np.where(np.isnan(interp), np.nanmean(Xc, 0), interp))
    return demo_table(anchor_rows(ours, results, dataset=dataset, metric="MAE (sd units)",
                                  seconds=seconds[ours]))
