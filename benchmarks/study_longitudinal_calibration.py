"""Calibration of the benchmark's data sets: the difference in means on setting B's seeds.

The difference in means with Welch's standard error is calibrated up to O(1/n) whatever the
outcome model, so its Monte-Carlo sd over replications divided by its mean SE, and its
coverage, say how far a given set of data sets sits from nominal by chance alone. This study
computes both on the data sets of setting B's replications (seeds ``2000 + r``, the seeds of
``bench_longitudinal.py``) and on ``--other`` data sets drawn from further seeds, so that the
coverage of every method on the benchmark's replications can be read against the coverage an
exact standard error reaches on the same data sets. No model is fitted (seconds).

Usage::

    python benchmarks/study_longitudinal_calibration.py [--reps 50] [--other 2000]
"""

import argparse
import json
from pathlib import Path

import numpy as np
from scipy import stats

from sklearn_icml26.datasets import make_longitudinal_rct

Z = stats.norm.ppf(0.975)
RESULTS = Path(__file__).parent / "results" / "longitudinal.json"


def difference_in_means(seeds):
    """``(estimate, Welch SE)`` per data set and period, shape (len(seeds), T) each."""
    est, se = [], []
    for seed in seeds:
        _, y, w, _ = make_longitudinal_rct(1000, 7, 10, assign="baseline", n_truth=1000,
                                           random_state=seed)
        a, b = y[w == 1], y[w == 0]
        est.append(a.mean(0) - b.mean(0))
        se.append(np.sqrt(a.var(0, ddof=1) / len(a) + b.var(0, ddof=1) / len(b)))
    return np.array(est), np.array(se)


def calibration(est, se, truth):
    return {"data_sets": len(est),
            "sd_over_mean_se": (est.std(0, ddof=1) / se.mean(0)).round(3).tolist(),
            "coverage": (np.abs(est - truth) <= Z * se).mean(0).round(3).tolist(),
            "bias_over_se": ((est.mean(0) - truth) / se.mean(0)).round(3).tolist()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=50, help="setting B's replications")
    parser.add_argument("--other", type=int, default=2000, help="data sets from other seeds")
    args = parser.parse_args(argv)
    truth = np.array(next(r for r in json.loads(RESULTS.read_text())["rows"]
                          if r["dataset"] == "setting B")["truth"])
    out = {}
    for k in sorted({8, 20, 40, args.reps}):
        if k <= args.reps:
            out[f"setting B replications 0-{k - 1}"] = calibration(
                *difference_in_means(range(2000, 2000 + k)), truth)
    out[f"{args.other} other data sets"] = calibration(
        *difference_in_means(range(6000, 6000 + args.other)), truth)
    for name, entry in out.items():
        print(name, json.dumps(entry))


if __name__ == "__main__":
    main()
