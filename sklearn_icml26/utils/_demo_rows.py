"""The result rows of the command line's demos, built and checked in one place.

Every demo returns a table with the columns of :data:`~sklearn_icml26.utils._registry.
DEMO_COLUMNS`: the method's headline metric beside the same metric of its anchor. Building
the rows with :func:`demo_row` (keyword arguments, one per column) instead of dictionaries
means a misspelled or forgotten column is an error, not a silent NaN in the printed table.
"""

import math
import time
from numbers import Real

import pandas as pd

from ._registry import DEMO_COLUMNS

__all__ = ["anchor_rows", "demo_row", "demo_table", "timed_fits"]


def _number(value, name):
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number (NaN where it does not apply); got "
                        f"{type(value).__name__} {value!r}")
    return float(value)


def demo_row(*, method, dataset, metric, value, anchor, anchor_value, seconds):
    """One row of a demo table.

    Parameters
    ----------
    method : str
        Name of the method (with its settings where they matter).
    dataset : str
        Data set (and split or period) of the row.
    metric : str
        Name of the metric; the demo's legend tells from it which way is better.
    value : float
        The method's metric.
    anchor : str
        The tool the method is compared with, on the same data and split.
    anchor_value : float
        The anchor's value of the same metric (NaN where there is none).
    seconds : float
        Wall-clock seconds of the method's fit and prediction (NaN: the demo runner fills
        in the whole demo's time).

    Returns
    -------
    row : dict
        Keyed by :data:`~sklearn_icml26.utils._registry.DEMO_COLUMNS`.

    Raises
    ------
    TypeError
        If a text column is not a non-empty string or a number is not real.
    ValueError
        If ``seconds`` is negative or infinite.
    """
    row = {"method": method, "dataset": dataset, "metric": metric, "anchor": anchor}
    for name, text in row.items():
        if not isinstance(text, str) or not text:
            raise TypeError(f"{name} must be a non-empty string; got {text!r}")
    row["value"] = _number(value, "value")
    row["anchor_value"] = _number(anchor_value, "anchor_value")
    row["seconds"] = _number(seconds, "seconds")
    if math.isinf(row["seconds"]) or row["seconds"] < 0:
        raise ValueError(f"seconds must be finite and >= 0 (or NaN); got {seconds!r}")
    return {column: row[column] for column in DEMO_COLUMNS}


def demo_table(rows, note=None):
    """The demo's result table from rows of :func:`demo_row`.

    Parameters
    ----------
    rows : list of dict
        Rows built by :func:`demo_row`.
    note : str or None, default=None
        A sentence the command line prints under the table (e.g. why an anchor is absent).

    Returns
    -------
    table : pandas.DataFrame
        Columns :data:`~sklearn_icml26.utils._registry.DEMO_COLUMNS`, one row per entry;
        ``table.attrs["note"]`` holds ``note`` when given.

    Raises
    ------
    ValueError
        If a row does not have exactly the demo columns.
    """
    for i, row in enumerate(rows):
        if list(row) != DEMO_COLUMNS:
            raise ValueError(f"row {i} has the columns {list(row)}; expected {DEMO_COLUMNS} "
                             "(build rows with demo_row)")
    table = pd.DataFrame(list(rows), columns=DEMO_COLUMNS)
    if note:
        table.attrs["note"] = note
    return table


def anchor_rows(ours, values, *, dataset, metric, seconds):
    """One row per anchor: the method's value of ``metric`` beside each anchor's.

    Parameters
    ----------
    ours : str
        Key of the method in ``values`` (and its ``method`` column).
    values : dict of str to float
        The metric by name, the method's and each anchor's, in the order of the rows.
    dataset : str
        Data set of the rows.
    metric : str
        Name of the metric.
    seconds : float
        Seconds of the method's fit and prediction.

    Returns
    -------
    rows : list of dict
        Rows of :func:`demo_row`, one per key of ``values`` other than ``ours``.
    """
    return [demo_row(method=ours, dataset=dataset, metric=metric, value=values[ours],
                     anchor=name, anchor_value=value, seconds=seconds)
            for name, value in values.items() if name != ours]


def timed_fits(models, *fit_args, score, dataset, tag, verbose=1):
    """Fit each model on the same data, timing the fit, then score it.

    Parameters
    ----------
    models : dict of str to estimator
        The models by name, fitted in this order.
    *fit_args : tuple
        Arguments of every ``fit`` (``X, y``).
    score : callable
        ``score(model)`` of a fitted model, a float.
    dataset : str
        Data set named in the progress lines.
    tag : str
        Prefix of the progress lines (``"holder demo"``).
    verbose : int, default=1
        Print ``[tag] fitting NAME on DATASET ...`` before each fit when positive.

    Returns
    -------
    scores, seconds : tuple of dict
        The score and the fit's wall-clock seconds of each model, by name.
    """
    scores, seconds = {}, {}
    for name, model in models.items():
        if verbose:
            print(f"[{tag}] fitting {name} on {dataset} ...", flush=True)
        start = time.perf_counter()
        model.fit(*fit_args)
        seconds[name] = time.perf_counter() - start
        scores[name] = float(score(model))
    return scores, seconds
