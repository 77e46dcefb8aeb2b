"""Demo of LongitudinalRegressionAdjuster on the BtheB and respiratory trials."""

import time
import warnings

import numpy as np

from ..datasets import load_btheb, load_respiratory
from ..utils._demo_rows import demo_row, demo_table
from ._dynamic_ra import LongitudinalRegressionAdjuster

__all__ = ["run_demo"]


def run_demo(data_home=None, verbose=1, fast=False):
    """Effect per period and its standard error on two trials, beside Lin's regression.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Data home holding ``longitudinal_rct/``; see
        :func:`~sklearn_icml26.datasets.get_data_home`.
    verbose : int, default=1
        Print the per-period summary tables when positive.
    fast : bool, default=False
        Fewer Monte Carlo particles (32 instead of 128).

    Returns
    -------
    table : pandas.DataFrame
        One row per (dataset, period, metric) with the columns of
        :data:`sklearn_icml26.utils._registry.DEMO_COLUMNS`: our effect estimate and standard
        error (``value``) beside Lin's (HC2) (``anchor_value``); under dropout Lin's
        regression uses the units still observed, and its ``anchor`` label says "completers
        only" with their count.

    Raises
    ------
    OSError
        If the data files are missing and cannot be downloaded.

    Examples
    --------
    >>> from sklearn_icml26.treatment_effects._demo import run_demo
    >>> table = run_demo(verbose=0, fast=True)  # doctest: +SKIP
    """
    rows = []
    for name, loader in (("BtheB", load_btheb), ("respiratory", load_respiratory)):
        data = loader(data_home)
        start = time.perf_counter()
        est = LongitudinalRegressionAdjuster(n_mc=32 if fast else 128, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            est.fit(data.X, data.y, treatment=data.treatment)
        seconds = time.perf_counter() - start
        table = est.summary()
        if verbose:
            print(f"\n{name} (random_state=0):")
            print(table[["estimate", "std_err", "ci_lower", "ci_upper", "lin", "lin_se",
                         "se_ratio_lin"]].round(4).to_string())
        observed = np.isfinite(np.asarray(data.y, dtype=float)).sum(axis=0)
        n_units = len(data.y)
        for t, period in enumerate(data.period_names):
            row = table.iloc[t]
            # under dropout Lin's regression uses the units still observed: it estimates the
            # effect among completers, another question than ours (all randomised units, with
            # censoring weights), and the anchor's label says so
            anchor = "Lin (HC2)" if observed[t] == n_units else (
                f"Lin (HC2), completers only ({observed[t]} of {n_units} units)")
            method = "LongitudinalRegressionAdjuster"
            for metric, ours, lin in (("effect", "estimate", "lin"),
                                      ("std_err", "std_err", "lin_se")):
                rows.append(demo_row(method=method, dataset=f"{name} {period}", metric=metric,
                                     value=row[ours], anchor=anchor, anchor_value=row[lin],
                                     seconds=seconds))
    return demo_table(rows)
