"""Benchmark of LongitudinalRegressionAdjuster (DynamicRA, arXiv 2605.31443).

Settings (spec section 7; n = 1000, T = 7, d = 10, rotated Lorenz-96 covariates, "gauss_sin"
outcome, "exp" effect; truth by Monte Carlo with 10^6 units per regime):

- A: randomised once at baseline, linear nuisances (OLS + linear-Gaussian transition, n_mc 128)
- B: randomised once at baseline, flexible nuisances (HistGradientBoosting outcome, MLP
  transition mean, n_mc 32)
- C: sequential (sticky re-randomisation), linear nuisances
- D: sequential, flexible nuisances

Methods per period: ours (``q_method="simulate"``), ours "regress", ours ``history_window=0``,
the g-formula plug-in (no SE), difference in means (Welch), CUPED, Lin (HC2) and DoubleML's IRM
with the same outcome learner (skipped with a note when ``doubleml`` is not installed).
Real data: BtheB and respiratory, per period DiM, CUPED, Lin, ours and ours
``history_window=0``.

Usage::

    python benchmarks/bench_longitudinal.py [--quick] [--n-jobs 2] [--reps 20]
"""

import sys
import time
import warnings

import numpy as np
from joblib import Parallel, delayed
from scipy import stats
from threadpoolctl import threadpool_limits

from sklearn_icml26.datasets import load_btheb, load_respiratory, make_longitudinal_rct
from sklearn_icml26.treatment_effects import (
    LinearGaussianTransition,
    LongitudinalRegressionAdjuster,
)
from sklearn_icml26.utils._benchmark import (
    benchmark_parser,
    markdown_table,
    measure,
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


def _learners(flexible, seed):
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


def _replication(setting, rep, n, T, d, n_mc, use_doubleml, variants, n_truth_worker=1000):
    """One replication of a setting: every method's per-period estimate and SE."""
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
            est = LongitudinalRegressionAdjuster(
                d, outcome_model=outcome, transition_model=transition, n_mc=n_mc,
                n_bootstrap=1000, random_state=seed, **extra)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                m = measure(est.fit, X, y, treatment=w)
            band = est.conf_int(kind="uniform")
            out[name] = {"estimate": est.effect_, "se": est.effect_se_,
                         "band": band, "seconds": m.seconds, "memory": m.peak_memory_mb}
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
            start = time.perf_counter()
            m = measure(_doubleml_irm, X0, y, w, fitted.regimes_, outcome, seed)
            est_, se_ = m.result
            out["doubleml.DoubleMLIRM"] = {"estimate": est_, "se": se_,
                                           "seconds": time.perf_counter() - start,
                                           "memory": m.peak_memory_mb}
    return out


def _summarise(setting, reps, truth):
    """Per-method metrics per period and the table row of a setting."""
    methods = list(reps[0])
    lin_width = None
    rows, detail = [], {}
    for method in methods:
        est = np.array([r[method]["estimate"] for r in reps])
        err = est - truth[None]
        entry = {
            "bias": err.mean(axis=0), "rmse": np.sqrt((err**2).mean(axis=0)),
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
    lin_width = detail["Lin (OLS, HC2; statsmodels)"]["width"]
    T = len(truth)
    for method, e in detail.items():
        row = {"dataset": f"setting {setting}", "method": method, "reps": len(reps),
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
        row["peak_memory_mb"] = e["memory"]
        row["per_period"] = {k: (v.tolist() if isinstance(v, np.ndarray) else v)
                             for k, v in e.items() if k not in ("seconds", "memory")}
        row["truth"] = truth.tolist()
        rows.append(row)
    return rows, detail


def _as_targets(target_rows):
    """The target rows in the shared result format (target, spec, measured, met)."""
    return [{"target": f"{r['dataset']}: {r['target']}", "spec": "longitudinal.md section 7",
             "measured": r["value"], "met": bool(r["met"])} for r in target_rows]


def _protocol_text(protocol):
    """One line saying what ran, beside the spec's protocol (section 7)."""
    return ("../shared/specs/longitudinal.md section 7; " + ", ".join(
        f"{k}={v}" for k, v in protocol.items()))


def _targets(setting, detail, T):
    """The spec's targets for ours (simulate): (name, value, passed)."""
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
                results[label] = (est.effect_, est.effect_se_, m.seconds, m.peak_memory_mb)
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
                         "random_state": 0, "fit_seconds": secs, "peak_memory_mb": mem})
    return rows


def main(argv=None):
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=None,
                        help="replications of every setting (default: the spec's 200/50)")
    parser.add_argument("--reps-linear", type=int, default=None, help="replications of A, C")
    parser.add_argument("--reps-flexible", type=int, default=None, help="replications of B, D")
    parser.add_argument("--settings", default=None, help="subset, e.g. 'AC'")
    parser.add_argument("--n-truth", type=int, default=None, help="Monte Carlo truth units")
    parser.add_argument("--flexible-ours-only", action="store_true",
                        help="in B and D run only ours (simulate) of our variants (saves the "
                             "'regress' and history_window=0 fits, the slowest part)")
    args = parser.parse_args(argv)
    try:
        import doubleml  # noqa: F401

        use_doubleml = True
    except ImportError:
        use_doubleml = False
        print("note: doubleml is not installed; the DoubleML IRM anchor is skipped",
              file=sys.stderr)
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
    if args.n_truth:
        n_truth = args.n_truth
    for s in settings:
        if args.reps is not None:
            reps[s] = args.reps
        if args.reps_linear is not None and not SETTINGS[s]["flexible"]:
            reps[s] = args.reps_linear
        if args.reps_flexible is not None and SETTINGS[s]["flexible"]:
            reps[s] = args.reps_flexible

    start = time.perf_counter()
    all_rows, target_rows = [], []
    for s in settings:
        cfg = SETTINGS[s]
        t0 = time.perf_counter()
        _, _, _, truth = make_longitudinal_rct(10, T, d, assign=cfg["assign"], n_truth=n_truth)
        truth_seconds = time.perf_counter() - t0
        results = Parallel(n_jobs=args.n_jobs)(
            delayed(_replication)(s, rep, n, T, d, n_mc[cfg["flexible"]], use_doubleml,
                                  not (cfg["flexible"] and args.flexible_ours_only))
            for rep in range(reps[s]))
        rows, detail = _summarise(s, results, truth["effect"])
        for row in rows:
            row["truth_seconds"] = truth_seconds
        all_rows += rows
        for name, value, passed in _targets(s, detail, T):
            target_rows.append({"dataset": f"setting {s}", "target": name,
                                "value": np.round(value, 3).tolist(), "met": bool(passed)})
        print(f"\n### setting {s}: {cfg['assign']} randomisation, "
              f"{'flexible' if cfg['flexible'] else 'linear'} nuisances, n={n}, T={T}, d={d}, "
              f"{reps[s]} reps, truth {n_truth} units/regime "
              f"({time.perf_counter() - t0:.0f} s)\n")
        cols = ["method", "mean_abs_bias", "rmse", "width"] + [
            c for c in rows[0] if c.startswith("width_ratio_lin_t")] + [
            "coverage_min", "coverage_mean", "band_coverage", "fit_seconds"]
        print(markdown_table(rows, cols))
        # partial results after every setting, so a long run that is stopped keeps its work
        done = "".join(settings[:settings.index(s) + 1])
        write_results("longitudinal", all_rows, args.quick, args.output,
                      targets=_as_targets(target_rows),
                      protocol=f"partial run: settings {done} done")
    real = _real_data(args.quick)
    all_rows += real
    if real:
        print("\n### real data: estimate (SE) per period, SE ratio to Lin\n")
        print(markdown_table(real, ["dataset", "method", "estimate", "std_err",
                                    "se_ratio_lin"]))
    print("\n### targets (ours, simulate)\n")
    print(markdown_table(target_rows))
    protocol = {"flexible_ours_only": bool(args.flexible_ours_only),
                "n": n, "n_periods": T, "n_covariates": d, "n_truth": n_truth, "reps": reps,
                "n_mc": {"linear": n_mc[False], "flexible": n_mc[True]},
                "doubleml": use_doubleml,
                "spec_reps": {s: SETTINGS[s]["reps"] for s in settings},
                "total_seconds": time.perf_counter() - start}
    path = write_results("longitudinal", all_rows, args.quick, args.output,
                         targets=_as_targets(target_rows), protocol=_protocol_text(protocol))
    print(f"\nwrote {path} in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
