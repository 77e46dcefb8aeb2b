"""The command-line demo of SkewD: ``python -m sklearn_icml26 demo skewd`` (Tübingen pairs)."""

import time
import warnings

import numpy as np

from ..datasets import load_cause_effect_baseline_scores, load_cause_effect_pairs
from ..metrics import audrc, weighted_accuracy
from ..utils._demo_rows import demo_row, demo_table
from ._skewd import SkewDCausalDiscoverer, score_pairs

__all__ = ["run_demo"]


def run_demo(data_home=None, verbose=1, fast=False):
    """SkewD on the Tübingen cause-effect pairs beside the QCCD anchor.

    Scores the 99 evaluation pairs (with ``fast``, the first 15 of at most 1500 samples) with
    ``SkewDCausalDiscoverer(all_scores=True)`` and reports the weighted accuracy and AUDRC of
    the "it" and "ll" criteria next to QCCD's published per-pair scores on the same pairs.
    The pairs are scored in parallel on every core (``score_pairs(..., n_jobs=-1)``).

    Parameters
    ----------
    data_home : str or path-like, default=None
        Data home holding ``cause_effect/tuebingen`` and ``cause_effect/baseline_scores``.
    verbose : int, default=1
        Progress bar over pairs when positive.
    fast : bool, default=False
        Score only the first 15 pairs of at most 1500 samples.

    Returns
    -------
    table : pandas.DataFrame
        One row per (method, metric) with the columns of ``DEMO_COLUMNS``.

    Raises
    ------
    OSError
        If the Tübingen files are not in the data home.
    """
    data = load_cause_effect_pairs("tuebingen", data_home=data_home)
    base = load_cause_effect_baseline_scores("tuebingen", data_home=data_home)
    keep = np.arange(len(data.pairs))
    if fast:  # the first 15 pairs of at most 1500 samples
        keep = np.array([i for i, P in enumerate(data.pairs) if len(P) <= 1500][:15])
    k = len(keep)
    pos = {pid: i for i, pid in enumerate(base.pair_id)}
    qccd = base.scores["QCCD"][np.array([pos[p] for p in data.pair_id[keep]])]
    y, w = data.direction[keep], data.weight[keep]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = score_pairs([data.pairs[i] for i in keep],
                          estimator=SkewDCausalDiscoverer(all_scores=True, random_state=0),
                          n_jobs=-1, verbose=verbose)
    seconds = time.perf_counter() - start
    dataset = f"tuebingen ({k} pairs)"
    rows = []
    for label, key in [("SkewD-IT", "score_it"), ("SkewD-LL", "score_ll")]:
        for metric, func in [("weighted accuracy", weighted_accuracy), ("AUDRC", audrc)]:
            rows.append(demo_row(method=label, dataset=dataset, metric=metric,
                                 value=func(y, res[key], sample_weight=w), anchor="QCCD",
                                 anchor_value=func(y, qccd, sample_weight=w), seconds=seconds))
    return demo_table(rows)
