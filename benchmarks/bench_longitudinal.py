"""Benchmark of LongitudinalRegressionAdjuster (DynamicRA, arXiv 2605.31443).

Settings (n = 1000, T = 7, d = 10, rotated Lorenz-96 covariates, "gauss_sin"
outcome, "exp" effect; truth by Monte Carlo with 10^6 units per regime):

- A: randomised once at baseline, linear nuisances (OLS + linear-Gaussian transition, n_mc 128)
- B: randomised once at baseline, flexible nuisances (HistGradientBoosting outcome, MLP
  transition mean, n_mc 32; with ``--flexible-learner gp`` the estimator's
  ``outcome_model="gp"`` with ``history_window=0`` instead, ours only)
- C: sequential (sticky re-randomisation), linear nuisances
- D: sequential, flexible nuisances

Methods per period: ours (``q_method="simulate"``), ours "regress", ours ``history_window=0``,
the g-formula plug-in (no SE), difference in means (Welch), CUPED, Lin (HC2) and DoubleML's IRM
with the same outcome learner (skipped with a note when ``doubleml`` is not installed).
Real data: BtheB and respiratory, per period DiM, CUPED, Lin, ours and ours
``history_window=0``.

Usage::

    python benchmarks/bench_longitudinal.py [--quick] [--n-jobs 2] [--reps 20]
    python benchmarks/bench_longitudinal.py --n-jobs 12 --time-budget 400 --output out.json

Replications run in one pool (joblib, ``--n-jobs``) per setting, in the order A, C, B, D;
partial results are written about every 30 s and after each setting. ``--time-budget`` is a
wall-clock budget: A and C (seconds per replication) run in full, B and D share what is left
in proportion to their expected cost; replications that would start too late to finish in
their setting's share are skipped and the run records how many each setting completed.
"""

import json
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from scipy import stats
from threadpoolctl import threadpool_limits

from sklearn_icml26.datasets import load_btheb, load_respiratory, make_longitudinal_rct
from sklearn_icml26.treatment_effects import (
    LinearGaussianTransition,
    LongitudinalRegressionAdjuster,
)

from _common import (
    benchmark_parser,
    markdown_table,
    measure,
    target,
    write_results,
)

SETTINGS = {
    "A": {"assign": "baseline", "flexible": False, "reps": 200},
    "B": {"assign": "baseline", "flexible": True, "reps": 50},
    "C": {"assign": "sequential", "flexible": False, "reps": 200},
    "D": {"assign": "sequential", "flexible": True, "reps": 50},
}
OURS = "LongitudinalRegressionAdjuster"
OUR_VARIANTS = {OURS: {}, f"{OURS}(q_method=regress)": {"q_method": "regress"},
                f"{OURS}(history_window=0)": {"history_window": 0}}
Z = stats.norm.ppf(0.975)


# CPU seconds of one replication on the 2-core development machine (measured: A, C with all
# our variants and DoubleML 1.1-2.0 s; B ours-only + DoubleML 133 s; D estimated from B and
# the earlier full run's D/B time ratio 0.6; B, D with all variants estimated at ~2.7x), used
# to share a time budget between B and D and, before a replication finished, as the expected
# duration (divided by 1.5 for faster machines)
REP_SECONDS = {"A": 1.5, "C": 1.5, "B": 360.0, "D": 220.0}
REP_SECONDS_OURS_ONLY = {"B": 135.0, "D": 80.0}
# the same for --flexible-learner gp (ours only; measured 14 s in B on one core)
REP_SECONDS_GP = {"B": 15.0, "D": 9.0}

# findings of development-machine studies, recorded with every full run
STUDY_NOTES = [
    ("Development-machine study, variance (setting A): our SE is the influence-function SE "
     "sqrt(mean_i psi_i(t)^2 / n) with every augmentation term in psi. At 200 local reps the Monte-"
     "Carlo sd matches the mean SE at every period (t = 4..6: sd 0.045/0.043/0.045 vs mean"
     " SE 0.043/0.041/0.045); an earlier 8-rep sd of 0.019/0.017/0.030 was a small-sample "
     "fluke shared by every method on those data sets (Lin's sd 0.017/0.018/0.030 there; "
     "over 150 other data sets Lin's sd 0.044/0.042/0.043 vs its HC2 SE "
     "0.043/0.041/0.045)."),
    ("Development-machine study, setting C width ratio (target <= 0.90 at t >= 4; "
     "0.94/0.96/0.95 at 200 local reps): not a variance-estimator or Monte-Carlo effect - "
     "q_method='regress' (no transition model, no simulation) gives the same ratios "
     "(0.94/0.96/0.95), and known path probabilities change them by < 0.01. It is the "
     "nonlinear benchmark system: with linear nuisances 15-22% of Lin's residual variance "
     "at t = 4..6 is not explained by a linear model of the full history and stays in the "
     "last augmentation term, weighted 1/pi_t as in Lin's estimator (shares measured on "
     "20000 sequential units); only the explained part gains from the earlier weights "
     "1/pi_s. On the generator's linear system (dynamics='linear', outcome='linear', same "
     "n, T, d, design) the share is 1-3.5% and the ratio at t = 4, 5, 6 is 0.86, 0.82, "
     "0.79 (10 reps), the size of a reference prototype's figures (0.86, 0.85, 0.84)."),
    ("Development-machine study, setting B width ratio (target <= 0.6 at t >= 2): the "
     "efficiency bound is far below the target - the AIPW estimator with the true "
     "E[Y_t | X_0, arm] (nested Monte Carlo from the generator, "
     "benchmarks/study_longitudinal_oracle.py, 4 data sets) has SE ratios to Lin "
     "0.31/0.24/0.25/0.31/0.43/0.45/0.42 at t = 0..6. The gap to ours is the flexible "
     "nuisances learnt from ~400 on-path units per arm and fold: direct boosting on H_0 "
     "(DoubleML IRM, our history_window=0) reaches about the same widths as the simulated "
     "transitions, and history_window=1 (the generator is Markov) did not narrow them "
     "(one data set: 0.75/0.77/0.69 at t = 4..6 vs 0.71/0.68/0.61 with the full history)."),
    ("Development-machine screen of outcome learners for setting B (one data set, seed 2000; "
     "the per-arm cross-fitted AIPW on X_0 that the estimator telescopes to under baseline "
     "randomisation, i.e. history_window=0; SE ratio to Lin's HC2 SE at t = 0 / 3 / 6; "
     "oracle 0.31 / 0.31 / 0.42): HistGradientBoosting max_iter=200 (the protocol's) "
     "0.513 / 0.595 / 0.697; boosting regularised (learning rate 0.05, 7 leaves, l2 1, early "
     "stopping) 0.573 / 0.650 / 0.727; depth-2 boosting 0.622 / 0.651 / 0.815; 500 "
     "iterations, 15 leaves 0.473 / 0.562 / 0.693; one boosting model of both arms with the "
     "arm as a feature 0.453 / 0.540 / 0.686; stacking (RidgeCV + depth-2 boosting, positive "
     "linear blend) 0.645 / 0.700 / 0.835; cubic polynomial ridge 0.808 / 0.843 / 0.865; "
     "Gaussian process with an ARD RBF kernel (a smoothness-constrained learner) 0.322 / "
     "0.378 / 0.491, with hyperparameters fitted on 200 random training units then refitted "
     "exactly 0.322 / 0.380 / 0.493 at a quarter of the time (on 100 units, the "
     "estimator's outcome_model='gp' used by --flexible-learner gp, a few per cent wider "
     "at another quarter of the time: 0.345 / 0.387 / 0.509 on another data set against "
     "0.327 / 0.378 / 0.493 with 200). A monotone constraint does not apply: the outcome "
     "surface is a Gaussian bump in X_1 and a sine of X_2 X_3. Regularising the boosting "
     "loses: the surface needs capacity, which 400 units per arm and fold give only to a "
     "smooth learner that finds the 3 relevant of 10 covariates (the ARD length scales)."),
    ("Development-machine study, coverage of B with the protocol's boosting nuisances "
     "(0.914 at 50 reps): on the same 50 data sets the Monte-Carlo sd over the mean SE is "
     "1.14 / 1.20 / 1.23 at t = 0..2 for ours and 1.20 / 1.14 / 1.11 for Lin's HC2 (whose "
     "coverage is 0.937 there), so most of the shortfall is a draw shared by every method; "
     "paired with Lin, ours' sd/SE is 1.07x Lin's on average over periods (0.95-1.20), a "
     "small under-estimate of the influence-function SE with boosted nuisances (their "
     "fold-to-fold variability is not in the influence function). In D the paired ratio is "
     "0.98."),
    ("Speed: default fits now use an exact shortcut for affine nuisances (the mean over "
     "n_mc particles of a linear outcome model along a linear-Gaussian chain equals the "
     "chain driven by the mean noise, drawn as N(0, I/n_mc)); flexible transition means "
     "ending in MLPRegressor are fitted as one multi-output network (before: one network "
     "per output through MultiOutputRegressor, 11x the fits). B/D numbers are therefore "
     "not comparable with the previous results file."),
]

def _import_doubleml():
    """``(available, note)``: whether the DoubleML IRM anchor can run, and why not."""
    try:
        import doubleml  # noqa: F401
    except ImportError as exc:
        return False, f"doubleml failed to import ({exc}): the DoubleML IRM anchor was skipped"
    return True, None


# flexible nuisances of B and D: "boosting" (the protocol's HistGradientBoosting outcome and
# MLP transition mean, full history) or "gp" (the estimator's outcome_model="gp", an ARD
# Gaussian process on (B, X_0) with its kernel fitted on 100 training units, and
# history_window=0: the per-period AIPW to which the estimator telescopes under baseline
# randomisation); set by --flexible-learner
FLEXIBLE = {"learner": "boosting"}


def _learners(flexible, seed):
    if flexible and FLEXIBLE["learner"] == "gp":
        return "gp", None
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.linear_model import LinearRegression
    from sklearn.neural_network import MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if not flexible:
        return LinearRegression(), LinearGaussianTransition()
    outcome = HistGradientBoostingRegressor(max_iter=200, random_state=seed)
    mean = make_pipeline(StandardScaler(), MLPRegressor(
        hidden_layer_sizes=(64, 64), alpha=1e-3, early_stopping=True, max_iter=500,
        random_state=seed))
    return outcome, LinearGaussianTransition(mean_model=mean)


def _doubleml_irm(X0, y, w, regimes, learner, seed):
    """DoubleML IRM per period on units following either regime through t (covariates X_0)."""
    import pandas as pd
    from doubleml import DoubleMLData, DoubleMLIRM
    from sklearn.base import clone
    from sklearn.dummy import DummyClassifier

    W = w if w.ndim == 2 else np.repeat(w[:, None], y.shape[1], axis=1)
    on1 = np.cumprod(W == regimes[0][None], axis=1).astype(bool)
    on0 = np.cumprod(W == regimes[1][None], axis=1).astype(bool)
    est, se = [], []
    cols = [f"x{j}" for j in range(X0.shape[1])]
    for t in range(y.shape[1]):
        m = on1[:, t] | on0[:, t]
        df = pd.DataFrame(X0[m], columns=cols).assign(y=y[m, t], d=on1[m, t].astype(int))
        np.random.seed(seed)  # noqa: NPY002 - DoubleML draws its folds from NumPy's global RNG
        model = DoubleMLIRM(DoubleMLData(df, "y", "d", cols), ml_g=clone(learner),
                            ml_m=DummyClassifier(strategy="prior"), n_folds=5, score="ATE")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit()
        est.append(float(model.coef[0]))
        se.append(float(model.se[0]))
    return np.array(est), np.array(se)


def _timed(trace, func, *args, **kwargs):
    """``(result, seconds, peak MiB or None)``: tracemalloc (slow) only when ``trace``."""
    m = measure(func, *args, memory="traced" if trace else None, **kwargs)
    return m.result, m.seconds, m.peak_mb


def _replication_before(deadline, expected, *args, **kwargs):
    """``(result, wall seconds, traced)``, or None when it would start too late to end by
    ``deadline``.

    ``deadline`` is in epoch seconds (None: always run); ``expected`` is the expected wall
    time of the replication.
    """
    if deadline is not None and time.time() + expected > deadline:
        return None
    m = measure(_replication, *args, memory=None, **kwargs)
    return m.result, m.seconds, args[1] == 0 and kwargs.get("trace_memory", True)


def _replication(setting, rep, n, T, d, n_mc, use_doubleml, variants, n_truth_worker=1000,
                 trace_memory=True):
    """One replication of a setting: every method's per-period estimate and SE.

    Peak memory is traced (tracemalloc, which slows Python-heavy code) in replication 0 only
    (and only with ``trace_memory``); seconds are wall-clock fit times of every replication.

    Not ``run_arms``: a replication's methods share one simulated data set and one fit (the
    g-formula plug-in and the baselines are read off our fitted estimator), replications run
    in parallel workers and the settings' rows pool them; each fit goes through ``measure``.
    """
    trace = rep == 0 and trace_memory
    cfg = SETTINGS[setting]
    seed = 1000 * (ord(setting) - 64) + rep
    X, y, w, _ = make_longitudinal_rct(n, T, d, assign=cfg["assign"], n_truth=n_truth_worker,
                                       random_state=seed)
    out = {}
    with threadpool_limits(1):
        outcome, transition = _learners(cfg["flexible"], seed)
        fitted = None
        for name, extra in OUR_VARIANTS.items():
            if name != OURS and not variants:
                continue
            if cfg["flexible"] and FLEXIBLE["learner"] == "gp":
                extra = {**extra, "history_window": 0}
            est = LongitudinalRegressionAdjuster(
                d, outcome_model=outcome, transition_model=transition, n_mc=n_mc,
                n_bootstrap=1000, random_state=seed, **extra)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                _, seconds, memory = _timed(trace, est.fit, X, y, treatment=w)
            band = est.conf_int(kind="uniform")
            out[name] = {"estimate": est.effect_, "se": est.effect_se_,
                         "band": band, "seconds": seconds, "memory": memory}
            if fitted is None:
                fitted = est
        gf = fitted.gformula_means_[0] - fitted.gformula_means_[1]
        out["g-formula plug-in"] = {"estimate": gf, "se": None, "seconds": None, "memory": None}
        base = fitted.baselines_
        for name, col in (("difference in means (Welch)", "dim"), ("CUPED", "cuped"),
                          ("Lin (OLS, HC2; statsmodels)", "lin")):
            out[name] = {"estimate": base[col].to_numpy(), "se": base[f"{col}_se"].to_numpy(),
                         "seconds": None, "memory": None}
        if use_doubleml:
            X0 = X[:, :d]
            (est_, se_), seconds, memory = _timed(trace, _doubleml_irm, X0, y, w,
                                                  fitted.regimes_, outcome, seed)
            out["doubleml.DoubleMLIRM"] = {"estimate": est_, "se": se_, "seconds": seconds,
                                           "memory": memory}
    return out


def _summarise(setting, reps, truth):
    """Per-method metrics per period and the table rows of a setting."""
    return _rows(setting, _detail(reps, truth), truth)


def _detail(reps, truth):
    """Per-method, per-period summaries of replications against the true effects."""
    detail = {}
    for method in reps[0]:
        est = np.array([r[method]["estimate"] for r in reps])
        err = est - truth[None]
        entry = {
            "n": len(reps), "bias": err.mean(axis=0), "rmse": np.sqrt((err**2).mean(axis=0)),
            "sd": est.std(axis=0, ddof=1) if len(reps) > 1 else np.full(len(truth), np.nan),
        }
        if reps[0][method]["se"] is not None:
            se = np.array([r[method]["se"] for r in reps])
            entry["mean_se"] = se.mean(axis=0)
            entry["width"] = 2 * Z * se.mean(axis=0)
            entry["coverage"] = (np.abs(err) <= Z * se).mean(axis=0)
        if "band" in reps[0][method]:
            band = np.array([r[method]["band"] for r in reps])
            inside = (band[..., 0] <= truth) & (truth <= band[..., 1])
            entry["band_coverage"] = float(inside.all(axis=1).mean())
        secs = [r[method]["seconds"] for r in reps if r[method]["seconds"] is not None]
        mems = [r[method]["memory"] for r in reps if r[method]["memory"] is not None]
        entry["seconds"] = float(np.mean(secs)) if secs else None
        entry["memory"] = float(np.max(mems)) if mems else None
        detail[method] = entry
    return detail


def _rows(setting, detail, truth):
    """The table rows of a setting from its per-method summaries."""
    lin_width = detail["Lin (OLS, HC2; statsmodels)"]["width"]
    T = len(truth)
    rows = []
    for method, e in detail.items():
        row = {"dataset": f"setting {setting}", "method": method, "reps": e["n"],
               "mean_abs_bias": float(np.abs(e["bias"]).mean()),
               "rmse": float(e["rmse"].mean())}
        if "width" in e:
            ratio = e["width"] / lin_width
            row.update(width=float(e["width"].mean()),
                       coverage_min=float(e["coverage"].min()),
                       coverage_mean=float(e["coverage"].mean()))
            for t in sorted({0, T // 2, T - 1}):
                row[f"width_ratio_lin_t{t}"] = float(ratio[t])
            row["width_ratio_lin"] = ratio.tolist()
        if "band_coverage" in e:
            row["band_coverage"] = e["band_coverage"]
        row["fit_seconds"] = e["seconds"]
        row["peak_traced_mb"] = e["memory"]
        row["per_period"] = {k: (v.tolist() if isinstance(v, np.ndarray) else v)
                             for k, v in e.items() if k not in ("n", "seconds", "memory")}
        row["truth"] = truth.tolist()
        rows.append(row)
    return rows, detail


def _detail_from_row(row):
    """A setting's per-method summary back from a results row (for pooling)."""
    pp = row["per_period"]
    entry = {k: (np.asarray(v, dtype=float) if isinstance(v, list) else v)
             for k, v in pp.items()}
    entry.update(n=row["reps"], seconds=row.get("fit_seconds"),
                 memory=row.get("peak_traced_mb"))
    return entry


def _pool_detail(a, b):
    """Exact pooled summary of two disjoint sets of replications of one method."""
    n1, n2 = a["n"], b["n"]
    n = n1 + n2
    w1, w2 = n1 / n, n2 / n
    bias = w1 * a["bias"] + w2 * b["bias"]
    # sum of squared deviations about the pooled mean; the truth is shared, so estimate
    # means differ exactly as the biases do
    # a part of one replication has no sd (NaN) and no spread about its own mean
    ss = ((n1 - 1) * np.nan_to_num(a["sd"]) ** 2 + n1 * (a["bias"] - bias) ** 2
          + (n2 - 1) * np.nan_to_num(b["sd"]) ** 2 + n2 * (b["bias"] - bias) ** 2)
    out = {"n": n, "bias": bias,
           "rmse": np.sqrt(w1 * a["rmse"] ** 2 + w2 * b["rmse"] ** 2),
           "sd": np.sqrt(ss / (n - 1))}
    for key in ("mean_se", "width", "coverage", "band_coverage"):
        if key in a and key in b:
            out[key] = w1 * a[key] + w2 * b[key]
    secs = [(x["seconds"], x["n"]) for x in (a, b) if x["seconds"] is not None]
    out["seconds"] = (sum(s * k for s, k in secs) / sum(k for _, k in secs)) if secs else None
    mems = [x["memory"] for x in (a, b) if x["memory"] is not None]
    out["memory"] = max(mems) if mems else None
    return out


def _as_targets(target_rows):
    """The target rows in the shared result format (target, spec, measured, met)."""
    return [target(f"{r['dataset']}: {r['target']}",
                   _bound(r["target"]),
                   r["value"],
                   bool(r["met"])) for r in target_rows]


def _bound(name):
    """The bound a target name states: "[0.93, 0.97]", "<= 0.2 SE", "<= 0.6", ..."""
    found = re.search(r"\[[^\]]*\]|<= [0-9.]+(?: SE)?", name)
    return found.group(0) if found else name


PROTOCOL = ("settings A-D (A: randomised at baseline, linear nuisances; B: baseline, flexible "
            "nuisances; C: sequential re-randomisation, linear; D: sequential, flexible), true "
            "effects by Monte Carlo; ours vs the g-formula plug-in, difference in means, CUPED, "
            "Lin (HC2) and DoubleML IRM per period")


def _protocol_text(protocol):
    """One line saying what ran: the benchmark's settings and this invocation's parameters."""
    return (PROTOCOL + "; " + ", ".join(f"{k}={v}" for k, v in protocol.items()))


def _targets(setting, detail, T):
    """The benchmark's targets for ours (simulate): (name, value, passed)."""
    ours = detail[OURS]
    lin = detail["Lin (OLS, HC2; statsmodels)"]
    ratio = ours["width"] / lin["width"]
    checks = [
        ("mean coverage in [0.93, 0.97]", float(ours["coverage"].mean()),
         0.93 <= ours["coverage"].mean() <= 0.97),
        ("each period's coverage in [0.91, 0.99]", ours["coverage"].tolist(),
         bool(np.all((ours["coverage"] >= 0.91) & (ours["coverage"] <= 0.99)))),
        ("|bias| <= 0.2 SE", (np.abs(ours["bias"]) / ours["mean_se"]).tolist(),
         bool(np.all(np.abs(ours["bias"]) <= 0.2 * ours["mean_se"]))),
    ]
    late = np.arange(T) >= 2
    if setting == "A":
        checks.append(("width ratio to Lin <= 1.03 at every t", ratio.tolist(),
                       bool(np.all(ratio <= 1.03))))
    elif setting == "B":
        checks.append(("width ratio to Lin <= 0.6 at t >= 2", ratio[late].tolist(),
                       bool(np.all(ratio[late] <= 0.6))))
    elif setting == "C":
        checks.append(("width ratio to Lin <= 0.90 at t >= 4", ratio[np.arange(T) >= 4].tolist(),
                       bool(np.all(ratio[np.arange(T) >= 4] <= 0.90))))
        checks.append(("width ratio to Lin <= 1.01 at t <= 1", ratio[:2].tolist(),
                       bool(np.all(ratio[:2] <= 1.01))))
    elif setting == "D":
        checks.append(("width ratio to Lin <= 0.6 at t = T-1", float(ratio[-1]),
                       bool(ratio[-1] <= 0.6)))
    if setting in ("B", "D") and "doubleml.DoubleMLIRM" in detail:
        dml = ours["width"] / detail["doubleml.DoubleMLIRM"]["width"]
        bound = 0.90 if setting == "B" else 0.85
        checks.append((f"width ratio to DoubleML IRM <= {bound} at t = T-1", float(dml[-1]),
                       bool(dml[-1] <= bound)))
        if setting == "B":
            checks.append(("width ratio to DoubleML IRM <= 1.15 at every t", dml.tolist(),
                           bool(np.all(dml <= 1.15))))
    return checks


def _real_data(quick):
    rows = []
    for name, loader in (("BtheB", load_btheb), ("respiratory", load_respiratory)):
        try:
            data = loader()
        except OSError as exc:
            print(f"skipped {name}: {exc}", file=sys.stderr)
            continue
        results = {}
        with threadpool_limits(1):
            for label, extra in ((OURS, {}), (f"{OURS}(history_window=0)",
                                              {"history_window": 0})):
                est = LongitudinalRegressionAdjuster(random_state=0, n_mc=32 if quick else 128,
                                                     **extra)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    m = measure(est.fit, data.X, data.y, treatment=data.treatment)
                results[label] = (est.effect_, est.effect_se_, m.seconds, m.peak_mb)
        base = est.baselines_
        lin_se = base["lin_se"].to_numpy()
        for label, col in (("difference in means (Welch)", "dim"), ("CUPED", "cuped"),
                           ("Lin (OLS, HC2; statsmodels)", "lin")):
            results[label] = (base[col].to_numpy(), base[f"{col}_se"].to_numpy(), None, None)
        for label, (e, s, secs, mem) in results.items():
            rows.append({"dataset": name, "method": label, "estimate": np.round(e, 4).tolist(),
                         "std_err": np.round(s, 4).tolist(),
                         "se_ratio_lin": np.round(s / lin_se, 3).tolist(),
                         "n_on_path": (base["n_on_path_1"] + base["n_on_path_0"]).tolist(),
                         "random_state": 0, "fit_seconds": secs, "peak_traced_mb": mem})
    return rows


def _speed(repeats=3):
    """Wall seconds of a default fit on n = 1000, T = 7 (d = 10, baseline design), one core."""
    import os

    X, y, w, _ = make_longitudinal_rct(1000, 7, 10, n_truth=1000, random_state=0)
    times = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        LongitudinalRegressionAdjuster(10, random_state=0).fit(X, y, treatment=w)  # imports
        for seed in range(repeats):
            times.append(measure(LongitudinalRegressionAdjuster(10, random_state=seed).fit,
                                 X, y, treatment=w, memory=None).seconds)
    return {"target": "speed: fit with defaults (n=1000, T=7, d=10) <= 10 s on one core",
            "value": float(np.median(times)), "met": bool(np.median(times) <= 10),
            "dataset": "speed", "load_average": list(os.getloadavg()),
            "seconds_each": [round(t, 3) for t in times]}


def _speed_from(path):
    """The speed target of an earlier (local) result file, to carry into a run elsewhere."""
    payload = json.loads(Path(path).read_text())
    for tg in payload.get("targets", []):
        if tg["target"].startswith("speed:"):
            machine = payload.get("machine", {})
            tg = dict(tg)
            tg["target"] += (" [measured on the development machine, "
                                 f"{machine.get('cpu_count', '?')} CPUs, "
                                 f"{machine.get('platform', '?')}; not on this one]")
            return tg
    return None


def _settings_order(settings):
    """A, C (seconds per replication) before B, D (minutes), each group in the given order."""
    return sorted(settings, key=lambda s: (SETTINGS[s]["flexible"], s))


def main(argv=None):
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=None,
                        help="replications of every setting (default: the full protocol's 200/50)")
    parser.add_argument("--reps-linear", type=int, default=None, help="replications of A, C")
    parser.add_argument("--reps-flexible", type=int, default=None, help="replications of B, D")
    parser.add_argument("--settings", default=None, help="subset, e.g. 'AC'")
    parser.add_argument("--n-truth", type=int, default=None, help="Monte Carlo truth units")
    parser.add_argument("--flexible-ours-only", action="store_true",
                        help="in B and D run only ours (simulate) of our variants (saves the "
                             "'regress' and history_window=0 fits)")
    parser.add_argument("--time-budget", type=float, default=None,
                        help="wall seconds for all settings (real data and the speed check "
                             "come on top): A and C run in full, B and D share the rest in "
                             "proportion to their expected cost and skip replications that "
                             "would end late")
    parser.add_argument("--no-speed", action="store_true",
                        help="skip the one-core speed check (measure it on the development "
                             "machine, not elsewhere)")
    parser.add_argument("--speed-from", default=None,
                        help="copy the speed target from this earlier result file")
    parser.add_argument("--no-real-data", action="store_true", help="skip BtheB/respiratory")
    parser.add_argument("--first-rep", default=None,
                        help="index of the first replication per setting, e.g. 'B=20,D=24' "
                             "(seeds follow the index, so runs with disjoint ranges add up)")
    parser.add_argument("--pool", default=None,
                        help="an earlier result file whose settings ran a disjoint range of "
                             "replications (see --first-rep): its rows are pooled exactly "
                             "with this run's before targets are checked")
    parser.add_argument("--flexible-learner", choices=["boosting", "gp"], default="boosting",
                        help="nuisances of B and D: the protocol's boosting outcome + MLP "
                             "transition (full history), or an ARD Gaussian-process outcome "
                             "on (B, X_0) with history_window=0 (ours only, no DoubleML)")
    parser.add_argument("--truth-from", default=None,
                        help="take each setting's true effects from this earlier result file "
                             "(same protocol) instead of recomputing the Monte Carlo truth")
    parser.add_argument("--note", action="append", default=[],
                        help="a note to record in the result file (repeatable)")
    args = parser.parse_args(argv)
    FLEXIBLE["learner"] = args.flexible_learner
    use_doubleml, doubleml_note = _import_doubleml()
    if args.flexible_learner == "gp":
        args.flexible_ours_only = True
        if use_doubleml:
            use_doubleml = False
            doubleml_note = ("flexible learner 'gp': the DoubleML IRM anchor (the same per-period "
                             "AIPW on X_0 with the same learner as ours here) was not run")
    truth_from = {}
    if args.truth_from:
        for row in json.loads(Path(args.truth_from).read_text())["rows"]:
            if row["dataset"].startswith("setting ") and "truth" in row:
                truth_from[row["dataset"].removeprefix("setting ")] = np.asarray(row["truth"])
    if doubleml_note:
        print(f"note: {doubleml_note}", file=sys.stderr)
    if args.quick:
        n, T, d, settings, n_truth = 300, 4, 3, "AC", 20_000
        use_doubleml = False  # seconds matter in CI; the full run has the anchor
        reps = {"A": 3, "C": 3}
        n_mc = {False: 16, True: 16}
    else:
        n, T, d, n_truth = 1000, 7, 10, 1_000_000
        settings = "ABCD"
        reps = {s: cfg["reps"] for s, cfg in SETTINGS.items()}
        n_mc = {False: 128, True: 32}
    if args.settings:
        settings = args.settings.upper()
    settings = "".join(_settings_order(settings))
    if args.n_truth:
        n_truth = args.n_truth
    for s in settings:
        if args.reps is not None:
            reps[s] = args.reps
        if args.reps_linear is not None and not SETTINGS[s]["flexible"]:
            reps[s] = args.reps_linear
        if args.reps_flexible is not None and SETTINGS[s]["flexible"]:
            reps[s] = args.reps_flexible

    first = {s: 0 for s in settings}
    if args.first_rep:
        keys = [part.partition("=")[0].strip().upper() for part in args.first_rep.split(",")]
        for part, key in zip(args.first_rep.split(","), keys, strict=True):
            value = part.partition("=")[2].strip()
            if key not in first or not value.isdigit() or keys.count(key) > 1:
                parser.error(f"--first-rep expects e.g. 'B=20,D=24', each setting once and "
                             f"among those run ({settings}); got {args.first_rep!r}")
            first[key] = int(value)
    pooled = {}
    if args.pool:
        try:
            pool_rows = json.loads(Path(args.pool).read_text())["rows"]
        except (OSError, ValueError, KeyError) as exc:
            parser.error(f"--pool: cannot read a result file from {args.pool!r} "
                         f"({type(exc).__name__}: {exc})")
        for row in pool_rows:
            setting = row["dataset"].removeprefix("setting ")
            if setting in settings and "per_period" in row:
                pooled.setdefault(setting, {})[row["method"]] = row
        if not pooled:
            parser.error(f"--pool: {args.pool} holds none of the settings run ({settings})")
    # one row per pooled setting: its truth and replication count are shared by the methods
    pool_ref = {s: next(iter(methods.values())) for s, methods in pooled.items()}
    for s, ref in pool_ref.items():
        if len(ref["truth"]) != T:
            parser.error(f"--pool: setting {s} of {args.pool} has {len(ref['truth'])} "
                         f"periods, this run {T} (another protocol: --quick or not?)")
        # the earlier file holds replications 0 .. n-1 (a plain run, or itself pooled
        # from contiguous ranges); this run must start after them
        n_old = ref["reps"]
        if first[s] < n_old:
            parser.error(f"--pool: {args.pool} holds replications 0-{n_old - 1} of setting "
                         f"{s}; this run must start after them (--first-rep {s}={n_old}), "
                         f"got first replication {first[s]}")

    def rep_cost(s):
        if SETTINGS[s]["flexible"] and args.flexible_learner == "gp":
            return REP_SECONDS_GP[s]
        if SETTINGS[s]["flexible"] and args.flexible_ours_only:
            return REP_SECONDS_OURS_ONLY[s]
        return REP_SECONDS[s]

    notes = [
        "Seconds are wall-clock fit times of single-threaded fits inside a pool of "
        f"{args.n_jobs} worker processes; peak memory (tracemalloc) is from replication 0"
        + (" of A and C only (B and D untraced under the time budget)."
           if args.time_budget is not None else "."),
    ]
    if doubleml_note:
        notes.append(doubleml_note)
    if not args.quick:
        notes += STUDY_NOTES
    notes += args.note
    start = time.perf_counter()
    all_rows, target_rows, done_reps = [], [], {}

    def protocol():
        return {"flexible_learner": args.flexible_learner,
                "flexible_ours_only": bool(args.flexible_ours_only), "n": n, "n_periods": T,
                "n_covariates": d, "n_truth": n_truth, "reps_planned": reps,
                "reps_done": done_reps, "first_rep": first,
                "pooled_with": ({s: r["reps"] for s, r in pool_ref.items()}
                                if pooled else None),
                "n_mc": {"linear": n_mc[False], "flexible": n_mc[True]},
                "doubleml": use_doubleml, "n_jobs": args.n_jobs,
                "time_budget_s": args.time_budget,
                "full_protocol_reps": {s: SETTINGS[s]["reps"] for s in settings},
                "total_seconds": round(time.perf_counter() - start, 1)}

    def write(rows, targets, status):
        ordered = sorted(rows, key=lambda r: (not r["dataset"].startswith("setting"),
                                              r["dataset"]))
        return write_results("longitudinal", ordered, args.quick, args.output,
                             targets=_as_targets(sorted(targets, key=lambda r: r["dataset"])),
                             protocol=f"{status}; " + _protocol_text(protocol()), notes=notes)

    speed = None
    if args.speed_from:
        speed = _speed_from(args.speed_from)
    elif not (args.quick or args.no_speed):
        speed = _speed()
        print(f"speed: default fit {speed['value']:.2f} s (one core, load "
              f"{speed['load_average'][0]:.1f})")
    speed_targets = []
    if speed is not None:
        if "spec" in speed:  # carried over in the shared format
            speed_targets = [speed]
        else:
            speed_targets = [target(speed["target"],
                                    "<= 10 s",
                                    round(speed["value"], 3),
                                    speed["met"])]
            notes.append(f"speed target measured here, one core, median of 3 default fits "
                         f"{speed['seconds_each']} s at load average "
                         f"{np.round(speed['load_average'], 2).tolist()}")

    def write_all(status, current=()):
        path = write(all_rows + list(current), target_rows, status)
        payload = json.loads(Path(path).read_text())
        payload["targets"] = payload.get("targets", []) + speed_targets
        Path(path).write_text(json.dumps(payload, indent=2, default=float) + "\n")
        return path

    try:  # results as they finish (joblib >= 1.4); older joblib: all at the end
        parallel = Parallel(n_jobs=args.n_jobs, return_as="generator_unordered")
    except (TypeError, ValueError):
        parallel = Parallel(n_jobs=args.n_jobs)
    for i, s in enumerate(settings):
        cfg = SETTINGS[s]
        t0 = time.perf_counter()
        deadline = None
        if args.time_budget is not None and cfg["flexible"]:
            # A and C (seconds in all) run in full; B and D share what is left of the budget
            left = args.time_budget - (time.perf_counter() - start)
            weights = {x: rep_cost(x) * reps[x] for x in settings[i:]}
            deadline = time.time() + max(left, 0.0) * weights[s] / sum(weights.values())
        variants = not (cfg["flexible"] and args.flexible_ours_only)
        # replication 0 always runs (None: no deadline); under a time budget the flexible
        # settings skip memory tracing, which slows their Python-heavy fits severalfold
        trace_memory = not (cfg["flexible"] and args.time_budget is not None)
        walls = []  # wall seconds of finished replications: the expected time of later ones

        def expected(walls=walls, s=s):
            # joblib dispatches lazily (2 * n_jobs ahead), so later replications see the
            # times of the first ones; before any finished, the development machine's
            # CPU seconds, faster machines assumed 1.5x faster
            return float(np.median(walls)) if walls else rep_cost(s) / 1.5

        jobs = parallel(
            delayed(_replication_before)(deadline if rep else None, expected(), s, rep, n, T,
                                         d, n_mc[cfg["flexible"]], use_doubleml, variants,
                                         trace_memory=trace_memory)
            for rep in range(first[s], first[s] + reps[s]))
        if s in truth_from and len(truth_from[s]) == T:
            truth = {"effect": truth_from[s]}
        else:
            _, _, _, truth = make_longitudinal_rct(10, T, d, assign=cfg["assign"],
                                                   n_truth=n_truth)
        truth_seconds = time.perf_counter() - t0
        results, last_write = [], time.perf_counter()
        for done in jobs:
            if done is None:
                continue
            out, wall, traced = done
            results.append(out)
            if not traced:  # tracemalloc slows replication 0: not a guide to the others
                walls.append(wall)
            if time.perf_counter() - last_write > 30 and len(results) >= 2:
                rows, _ = _summarise(s, results, truth["effect"])
                done_reps[s] = len(results)
                write_all(f"partial run: setting {s} at {len(results)} replications", rows)
                print(f"  setting {s}: {len(results)}/{reps[s]} replications "
                      f"({time.perf_counter() - t0:.0f} s)", flush=True)
                last_write = time.perf_counter()
        done_reps[s] = len(results)
        if not results:
            print(f"setting {s}: no replication finished in its time share", flush=True)
            continue
        rows, detail = _summarise(s, results, truth["effect"])
        if s in pooled:
            old = pooled[s]
            if not np.allclose(pool_ref[s]["truth"], truth["effect"]):
                raise ValueError(f"--pool: setting {s} of {args.pool} has another truth")
            missing = sorted(set(detail) ^ set(old))
            if missing:
                print(f"note: --pool: methods in only one of the runs are left out: {missing}",
                      file=sys.stderr)
            detail = {m: _pool_detail(_detail_from_row(old[m]), e)
                      for m, e in detail.items() if m in old}
            rows, detail = _rows(s, detail, truth["effect"])
            done_reps[s] = rows[0]["reps"]
        for row in rows:
            row["truth_seconds"] = truth_seconds
        all_rows += rows
        for name, value, passed in _targets(s, detail, T):
            target_rows.append({"dataset": f"setting {s}", "target": name,
                                "value": np.round(value, 3).tolist(), "met": bool(passed)})
        print(f"\n### setting {s}: {cfg['assign']} randomisation, "
              f"{'flexible' if cfg['flexible'] else 'linear'} nuisances, n={n}, T={T}, d={d}, "
              f"{done_reps[s]} reps ({len(results)} run now), truth {n_truth} units/regime "
              f"({time.perf_counter() - t0:.0f} s)\n")
        cols = ["method", "mean_abs_bias", "rmse", "width"] + [
            c for c in rows[0] if c.startswith("width_ratio_lin_t")] + [
            "coverage_min", "coverage_mean", "band_coverage", "fit_seconds"]
        print(markdown_table(rows, cols), flush=True)
        done = "".join(x for x in settings[:i + 1])
        write_all(f"partial run: settings {done} done")
    if not args.no_real_data:
        real = _real_data(args.quick)
        all_rows += real
        if real:
            print("\n### real data: estimate (SE) per period, SE ratio to Lin\n")
            print(markdown_table(real, ["dataset", "method", "estimate", "std_err",
                                        "se_ratio_lin"]))
    print("\n### targets (ours, simulate)\n")
    print(markdown_table(target_rows))
    short = [s for s in settings if done_reps.get(s, 0) < SETTINGS[s]["reps"]]
    if short and not args.quick:
        notes.append("Reduced protocol: " + ", ".join(
            f"{s} {done_reps.get(s, 0)} reps" for s in short) + " (full protocol: 200 in A/C, "
            "50 in B/D); per-period coverage at r replications has sd sqrt(0.95*0.05/r).")
    path = write_all("complete run")
    print(f"\nwrote {path} in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
