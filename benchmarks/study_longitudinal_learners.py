"""Screen of flexible nuisance learners for settings B and D of ``bench_longitudinal.py``.

Each learner is fitted on the same data sets (the benchmark's seeds: setting B replication
``r`` is seed ``2000 + r``, D ``4000 + r``) and compared with Lin's regression (HC2) fitted
in the same call: width ratio to Lin per period, bias over the standard error, coverage of
the 95% Wald interval and seconds per data set. True effects come from the committed
benchmark results (10^6 units per regime). ``--bootstrap B`` also refits the whole estimator
on ``B`` nonparametric bootstrap resamples of the units of the first ``--bootstrap-reps``
data sets and reports the bootstrap standard deviation beside the influence-function SE.

Learners (all but ``paper`` use ``history_window=0``, the per-period AIPW on the baseline
covariates that the estimator telescopes to under baseline randomisation):

- ``gp``: ``outcome_model="gp"`` (ARD Gaussian process, kernel fitted on 100 training units)
- ``gp200``: the same with the kernel fitted on 200 units
- ``spline``: additive cubic splines (5 knots per covariate) + ``RidgeCV``
- ``hgb_tuned``: HistGradientBoosting, early stopping, learning rate 0.1, 15 leaves, l2 1
- ``stack``: ``StackingRegressor`` of ``RidgeCV`` and the tuned boosting, positive blend
- ``paper``: the benchmark's boosted outcome with an MLP transition mean, full history

Usage::

    python benchmarks/study_longitudinal_learners.py --settings BD --reps 8 \\
        --learners gp,spline,hgb_tuned --output /tmp/screen.json
"""

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats
from threadpoolctl import threadpool_limits

from sklearn_icml26.datasets import make_longitudinal_rct
from sklearn_icml26.treatment_effects import LinearGaussianTransition
from sklearn_icml26.treatment_effects import LongitudinalRegressionAdjuster as LRA
from sklearn_icml26.treatment_effects._learners import _SubsampledARDGaussianProcess

N, T, D = 1000, 7, 10
ASSIGN = {"B": "baseline", "D": "sequential"}
SEED0 = {"B": 2000, "D": 4000}
Z = stats.norm.ppf(0.975)
RESULTS = Path(__file__).parent / "results" / "longitudinal.json"


def learner(name, seed):
    """``(estimator keyword arguments)`` of a named learner."""
    from sklearn.ensemble import HistGradientBoostingRegressor, StackingRegressor
    from sklearn.linear_model import LinearRegression, RidgeCV
    from sklearn.neural_network import MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import SplineTransformer, StandardScaler

    def hgb():
        return HistGradientBoostingRegressor(
            learning_rate=0.1, max_leaf_nodes=15, l2_regularization=1.0, max_iter=500,
            early_stopping=True, validation_fraction=0.2, n_iter_no_change=20,
            random_state=seed)

    window0 = {"history_window": 0}
    if name == "gp":
        return {"outcome_model": "gp", **window0}
    if name == "gp200":
        return {"outcome_model": _SubsampledARDGaussianProcess(200, seed), **window0}
    if name == "spline":
        return {"outcome_model": make_pipeline(
            StandardScaler(), SplineTransformer(n_knots=5, degree=3),
            RidgeCV(np.logspace(-3, 3, 13))), **window0}
    if name == "hgb_tuned":
        return {"outcome_model": hgb(), **window0}
    if name == "stack":
        return {"outcome_model": StackingRegressor(
            [("ridge", RidgeCV(np.logspace(-3, 3, 13))), ("hgb", hgb())],
            final_estimator=LinearRegression(positive=True), cv=3), **window0}
    if name == "paper":
        mean = make_pipeline(StandardScaler(), MLPRegressor(
            hidden_layer_sizes=(64, 64), alpha=1e-3, early_stopping=True, max_iter=500,
            random_state=seed))
        return {"outcome_model": HistGradientBoostingRegressor(max_iter=200, random_state=seed),
                "transition_model": LinearGaussianTransition(mean_model=mean)}
    raise ValueError(f"unknown learner {name!r}")


def fit_one(setting, rep, name, X=None, y=None, w=None, seed=None):
    seed = SEED0[setting] + rep if seed is None else seed
    if X is None:
        X, y, w, _ = make_longitudinal_rct(N, T, D, assign=ASSIGN[setting], n_truth=1000,
                                           random_state=SEED0[setting] + rep)
    est = LRA(D, n_mc=32, n_bootstrap=10, random_state=seed, **learner(name, seed))
    start = time.process_time()
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est.fit(X, y, treatment=w)
    return est, time.process_time() - start


def summarise(rows, truth):
    est = np.array([r["estimate"] for r in rows])
    se = np.array([r["se"] for r in rows])
    lin_se = np.array([r["lin_se"] for r in rows])
    err = est - truth
    return {"reps": len(rows),
            "width_ratio_lin": (se.mean(0) / lin_se.mean(0)).round(3).tolist(),
            "bias_over_se": (err.mean(0) / se.mean(0)).round(3).tolist(),
            "coverage": (np.abs(err) <= Z * se).mean(0).round(3).tolist(),
            "sd_over_se": (est.std(0, ddof=1) / se.mean(0)).round(3).tolist()
            if len(rows) > 1 else None,
            "cpu_seconds": round(float(np.mean([r["seconds"] for r in rows])), 2)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", default="BD")
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--first-rep", type=int, default=0)
    parser.add_argument("--learners", default="gp,spline,hgb_tuned")
    parser.add_argument("--bootstrap", type=int, default=0,
                        help="nonparametric bootstrap resamples of the whole estimator")
    parser.add_argument("--bootstrap-reps", type=int, default=2)
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)
    truth = {row["dataset"][-1]: np.array(row["truth"])
             for row in json.loads(RESULTS.read_text())["rows"]
             if row["dataset"] in ("setting B", "setting D")}
    names = args.learners.split(",")
    out = {"study": "longitudinal nuisance learners", "per_rep": {}, "summary": {},
           "bootstrap": {}}

    def save():
        if args.output:
            Path(args.output).write_text(json.dumps(out, indent=1) + "\n")

    for s in args.settings.upper():
        for name in names:
            rows = []
            for rep in range(args.first_rep, args.first_rep + args.reps):
                est, secs = fit_one(s, rep, name)
                base = est.baselines_
                rows.append({"rep": rep, "estimate": est.effect_.tolist(),
                             "se": est.effect_se_.tolist(),
                             "lin": base["lin"].tolist(), "lin_se": base["lin_se"].tolist(),
                             "seconds": secs})
                out["per_rep"][f"{s}/{name}"] = rows
                out["summary"][f"{s}/{name}"] = summarise(rows, truth[s])
                save()
            print(s, name, json.dumps(out["summary"][f"{s}/{name}"]), flush=True)
            for rep in range(args.first_rep, args.first_rep + min(args.bootstrap_reps,
                                                                    args.reps)):
                if not args.bootstrap:
                    break
                X, y, w, _ = make_longitudinal_rct(N, T, D, assign=ASSIGN[s], n_truth=1000,
                                                   random_state=SEED0[s] + rep)
                rng = np.random.default_rng(rep)
                draws = []
                for b in range(args.bootstrap):
                    idx = rng.integers(0, N, N)
                    est, _ = fit_one(s, rep, name, X[idx], y[idx], w[idx], seed=10_000 + b)
                    draws.append(est.effect_)
                    out["bootstrap"][f"{s}/{name}/{rep}"] = {
                        "draws": len(draws), "bootstrap_sd": np.std(draws, 0, ddof=1).round(
                            4).tolist() if len(draws) > 1 else None,
                        "influence_se": np.round(out["per_rep"][f"{s}/{name}"][
                            rep - args.first_rep]["se"], 4).tolist()}
                    save()
                print(s, name, rep, json.dumps(out["bootstrap"][f"{s}/{name}/{rep}"]),
                      flush=True)
    save()


if __name__ == "__main__":
    main()
