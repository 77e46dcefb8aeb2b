"""HolderTransformerRegressor: measured rates on Hölder functions beside the derived ones.

Theory: He, Jiao, Lu, Yang, "Approximation Error Upper and Lower Bounds for Hölder Class with
Transformers", ICML 2026, arXiv:2605.07463 (block bounds; no constants or experiments are
published, so only slopes can be compared).

(A) Error against depth. Noise-free data of four functions (Weierstrass alpha = 0.5 and radial
alpha = 1 in d0 = 1; Faber-Schauder wavelet alpha = 0.5 and radial alpha = 1 in d0 = 2). A
transformer of L blocks for L in {1, 2, 4, 8, 16} and the anchor
``MLPRegressor(hidden_layer_sizes=(32,) * L)`` with the same number of epochs; test RMSE and
sup error (on a 10,000-point grid when d0 = 1, over the test points when d0 = 2); the log-log
slope of RMSE against L with its standard error beside the bracket [-4 alpha/d0, -alpha/d0].

(B) Risk against n. Noise sigma = 0.1; Weierstrass alpha = 0.5 in d0 = 1 and the wavelet
alpha = 0.5 in d0 = 2; n = 256 ... 8192 (doubling). ``HolderTransformerRegressor(n_blocks="auto",
alpha=0.5)`` against KNN with the theory-tuned ``k = ceil(n^(2 alpha/(2 alpha + d0)))``,
``MLPRegressor((64, 64), early_stopping=True)`` and ``HistGradientBoostingRegressor()``.
Excess risk = mean of (f_hat - f)^2 on 4,096 fresh points; its slope against n beside the
minimax and derived rates.

``--quick``: the Weierstrass function only, L in {1, 2}, 256 training points, 10 epochs,
n = 256 (no risk slope). The defaults are the full protocol (A: 4,096 training points, 2 seeds, 200
epochs; B: 2 seeds, 100 epochs). ``--functions-a`` / ``--functions-b`` (``kind:d0:alpha``, none
to skip a part), ``--seeds-a`` / ``--seeds-b``, ``--n-train-a`` and the epoch options run part
of it; the result file is rewritten after every depth (A) and every n (B), so a stopped run
leaves its finished rows. ``--merge`` combines result files arm by arm (a later file's arm
replaces an earlier one's; rows of the same setting on new seeds are pooled with the earlier
seeds), and the protocol text of the result file names every arm that ran below the full
protocol::

    python benchmarks/bench_holder_transformer.py --functions-a radial:1:1 --functions-b \
        --output a_radial.json
    python benchmarks/bench_holder_transformer.py --merge old.json a_radial.json \
        --output benchmarks/results/holder_transformer.json
"""

import json
import math
import os
import re
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import KNeighborsRegressor
from sklearn.neural_network import MLPRegressor
from threadpoolctl import threadpool_limits

from sklearn_icml26.approximation import (
    HolderTransformerRegressor,
    holder_depth_slopes,
    holder_risk_rates,
)
from sklearn_icml26.datasets import make_holder_regression

from _common import (
    Arm,
    benchmark_parser,
    markdown_table,
    measure,
    run_arms,
    target,
    write_results,
)

METHOD = "HolderTransformerRegressor"
# (name, kind, d0, alpha) of part A and part B
FUNCTIONS_A = [("weierstrass", 1, 0.5), ("radial", 1, 1.0), ("wavelet", 2, 0.5),
               ("radial", 2, 1.0)]
FUNCTIONS_B = [("weierstrass", 1, 0.5), ("wavelet", 2, 0.5)]
DEPTHS = [1, 2, 4, 8, 16]
SIZES = [256, 512, 1024, 2048, 4096, 8192]
NOISE = 0.1
N_TEST = 4096


def _label(kind, d0, alpha):
    return f"{kind} a={alpha:g} d0={d0}"


def _slope(x, y):
    """OLS slope of log y on log x with its standard error (nan with < 3 points)."""
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    if len(lx) < 2 or np.ptp(lx) == 0:
        return np.nan, np.nan
    slope, intercept = np.polyfit(lx, ly, 1)
    if len(lx) < 3:
        return float(slope), np.nan
    resid = ly - (slope * lx + intercept)
    se = math.sqrt(resid @ resid / (len(lx) - 2) / np.sum((lx - lx.mean()) ** 2))
    return float(slope), float(se)


def _fit_timed(model, X, y):
    """Fit; wall seconds and peak traced memory (MiB).

    tracemalloc doubles the time of a torch training loop, so a transformer fit is timed
    untraced and its peak memory comes from a traced one-epoch fit of the same configuration
    (the data, the module and one epoch's buffers: the peak of the full fit).

    The arms of both parts call this inside their ``run`` (``run_arms`` times the whole arm,
    prediction included, as ``arm_seconds``): the two-measurement memory protocol above is not
    one ``measure`` of the arm's call. Each (setting, method) row pools its seeds.
    """
    if isinstance(model, HolderTransformerRegressor):
        mem = measure(clone(model).set_params(max_epochs=1).fit, X, y).peak_mb
        return measure(model.fit, X, y, memory=None).seconds, mem
    m = measure(model.fit, X, y)
    return m.seconds, m.peak_mb


# -- part A -------------------------------------------------------------------------------------
def bench_depth(functions, depths, n_train, epochs, seeds, log, checkpoint=None):
    rows = []
    for kind, d0, alpha in functions:
        label = "A " + _label(kind, d0, alpha)
        X, y, f = make_holder_regression(n_train + N_TEST, d0, alpha, kind=kind,
                                         random_state=100, return_function=True)
        Xtr, ytr, Xte, yte = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
        grid = np.linspace(0, 1, 10_000)[:, None] if d0 == 1 else Xte
        fgrid = f(grid)
        for L in depths:
            makers = {
                METHOD: lambda s, L=L, alpha=alpha: HolderTransformerRegressor(
                    alpha=alpha, n_blocks=L, max_epochs=epochs, random_state=s),
                "sklearn.MLPRegressor": lambda s, L=L: MLPRegressor(
                    hidden_layer_sizes=(32,) * L, max_iter=epochs, random_state=s),
            }
            for method, make in makers.items():
                per_seed = []

                def on_row(row, per_seed=per_seed, tag=f"{label} L={L} {method}"):
                    if "error" in row:
                        raise RuntimeError(f"{row['method']} failed: {row['error']}")
                    per_seed.append((row["rmse"], row["sup_error"], row["fit_seconds"],
                                     row["peak_traced_mb"], os.getloadavg()[0]))
                    log(f"{tag} seed={row['seed']}: rmse={row['rmse']:.4f} "
                        f"sup={row['sup_error']:.4f} ({row['fit_seconds']:.1f} s, "
                        f"load {per_seed[-1][4]:.1f})")

                # one arm over the seeds (its "data sets"); the arm times its own fit
                run_arms([Arm(method, _depth_arm, anchor=method != METHOD,
                              kwargs={"make": make})],
                         {f"seed {s}": {"seed": s, "X": Xtr, "y": ytr, "Xte": Xte, "yte": yte,
                                        "grid": grid, "fgrid": fgrid} for s in seeds},
                         memory=None, seconds="arm_seconds", log=None, on_row=on_row)
                arr = np.array(per_seed)
                rows.append({"dataset": f"{label} L={L}", "method": method, "L": L,
                             "rmse": float(arr[:, 0].mean()), "sup_error": float(arr[:, 1].mean()),
                             "rmse_per_seed": arr[:, 0].tolist(),
                             "sup_error_per_seed": arr[:, 1].tolist(), "seeds": list(seeds),
                             "n_train": n_train, "epochs": epochs,
                             "fit_seconds": float(arr[:, 2].mean()),
                             "fit_seconds_per_seed": arr[:, 2].tolist(),
                             "load_average_per_seed": arr[:, 4].tolist(),
                             "peak_traced_mb": float(arr[:, 3].max())})
                if checkpoint is not None:
                    checkpoint(rows)
    return rows


def _depth_arm(data, make):
    """One model of part A on one seed: test RMSE, sup error on the grid, fit seconds, peak."""
    model = make(data["seed"])
    sec, mem = _fit_timed(model, data["X"], data["y"])
    return {"seed": data["seed"],
            "rmse": float(np.sqrt(np.mean((model.predict(data["Xte"]) - data["yte"]) ** 2))),
            "sup_error": float(np.max(np.abs(model.predict(data["grid"]) - data["fgrid"]))),
            "fit_seconds": sec, "peak_traced_mb": mem}


def depth_summary(rows, functions, depths):
    out = []
    for kind, d0, alpha in functions:
        label = "A " + _label(kind, d0, alpha)
        steepest, guaranteed = holder_depth_slopes(d0, alpha)
        for method in (METHOD, "sklearn.MLPRegressor"):
            sel = {r["L"]: r for r in rows
                   if r["method"] == method and r["dataset"].startswith(label + " L=")}
            if len(sel) < 2:
                continue
            Ls = sorted(sel)
            floor = sel[Ls[-1]]["rmse"]
            used = [L for L in Ls if sel[L]["rmse"] > 2 * floor]
            rule = "error > 2x the error at the largest L"
            if len(used) < 3:
                used, rule = Ls, "all L (fewer than 3 L above 2x the largest-L error)"
            x = [L for L in used for _ in sel[L]["rmse_per_seed"]]
            y = [e for L in used for e in sel[L]["rmse_per_seed"]]
            slope, se = _slope(x, y)
            sup_slope, sup_se = _slope(used, [sel[L]["sup_error"] for L in used])
            out.append({"dataset": label + " slope", "method": method,
                        "rmse_slope": slope, "rmse_slope_se": se,
                        "sup_slope": sup_slope, "sup_slope_se": sup_se,
                        "bracket": [steepest, guaranteed],
                        "slope / (-alpha/d0)": slope / guaranteed,
                        "L_used": used, "slope_rule": rule,
                        "rmse_at_L": [sel[L]["rmse"] for L in Ls], "L": Ls,
                        "fit_seconds": float(sum(sel[L]["fit_seconds"] for L in Ls)),
                        "peak_traced_mb": float(max(sel[L]["peak_traced_mb"] for L in Ls))})
    return out


# -- part B -------------------------------------------------------------------------------------
def _knn_k(n, d0, alpha):
    return int(math.ceil(n ** (2 * alpha / (2 * alpha + d0))))


def bench_risk(functions, sizes, epochs, seeds, log, checkpoint=None):
    rows = []
    for kind, d0, alpha in functions:
        label = "B " + _label(kind, d0, alpha)
        for n in sizes:
            per = {}
            arms = [Arm(METHOD, _risk_arm, kwargs={"make": lambda s, n=n, alpha=alpha:
                                                   HolderTransformerRegressor(
                                                       alpha=alpha, n_blocks="auto",
                                                       max_epochs=epochs, random_state=s)}),
                    Arm("sklearn.KNeighborsRegressor", _risk_arm, anchor=True,
                        kwargs={"make": lambda s, n=n, d0=d0, alpha=alpha: KNeighborsRegressor(
                            n_neighbors=min(_knn_k(n, d0, alpha), n))}),
                    Arm("sklearn.MLPRegressor", _risk_arm, anchor=True,
                        kwargs={"make": lambda s: MLPRegressor(
                            hidden_layer_sizes=(64, 64), early_stopping=True, random_state=s)}),
                    Arm("sklearn.HistGradientBoostingRegressor", _risk_arm, anchor=True,
                        kwargs={"make": lambda s: HistGradientBoostingRegressor(
                            random_state=s)})]
            for s in seeds:
                X, y, f = make_holder_regression(n, d0, alpha, kind=kind, noise=NOISE,
                                                 random_state=1000 + s, return_function=True)
                rng = np.random.default_rng(2000 + s)
                Xte = rng.uniform(size=(N_TEST, d0))
                data = {"seed": s, "X": X, "y": y, "Xte": Xte, "fte": f(Xte)}

                def on_row(row, s=s, per=per, tag=f"{label} n={n}"):
                    if "error" in row:
                        raise RuntimeError(f"{row['method']} failed: {row['error']}")
                    per.setdefault(row["method"], []).append(
                        (row["excess_risk"], row["fit_seconds"], row["peak_traced_mb"],
                         row["extra"], os.getloadavg()[0]))
                    log(f"{tag} {row['method']} seed={s}: risk="
                        f"{row['excess_risk']:.5f} ({row['fit_seconds']:.1f} s, "
                        f"load {per[row['method']][-1][4]:.1f})")

                # the arm times its own fit (_fit_timed); arm_seconds adds the prediction
                run_arms(arms, {f"{label} n={n} seed={s}": data}, memory=None,
                         seconds="arm_seconds", log=None, on_row=on_row)
            for method, vals in per.items():
                risks = [v[0] for v in vals]
                rows.append({"dataset": f"{label} n={n}", "method": method, "n": n,
                             "excess_risk": float(np.mean(risks)), "risk_per_seed": risks,
                             "seeds": list(seeds), "epochs": epochs, **vals[0][3],
                             "fit_seconds": float(np.mean([v[1] for v in vals])),
                             "fit_seconds_per_seed": [v[1] for v in vals],
                             "load_average_per_seed": [v[4] for v in vals],
                             "peak_traced_mb": float(max(v[2] for v in vals))})
            if checkpoint is not None:
                checkpoint(rows)
    return rows


def _risk_arm(data, make):
    """One model of part B on one seed's sample: excess risk, fit seconds, traced peak."""
    model = make(data["seed"])
    sec, mem = _fit_timed(model, data["X"], data["y"])
    extra = {}
    if isinstance(model, HolderTransformerRegressor):
        extra = {"n_blocks": model.n_blocks_}
    elif isinstance(model, KNeighborsRegressor):
        extra = {"k": model.n_neighbors}
    return {"excess_risk": float(np.mean((model.predict(data["Xte"]) - data["fte"]) ** 2)),
            "fit_seconds": sec, "peak_traced_mb": mem, "extra": extra}


def risk_summary(rows, functions):
    out = []
    for kind, d0, alpha in functions:
        label = "B " + _label(kind, d0, alpha)
        minimax, derived = (math.log(v) for v in holder_risk_rates(math.e, d0, alpha).values())
        by = {}
        for r in rows:
            if r["dataset"].startswith(label + " n="):
                by.setdefault(r["method"], {})[r["n"]] = r
        if not by:
            continue
        n_max = max(max(v) for v in by.values())
        mlp = by.get("sklearn.MLPRegressor", {}).get(n_max, {}).get("excess_risk", np.nan)
        for method, sel in by.items():
            ns = sorted(sel)
            slope, se = _slope(ns, [sel[n]["excess_risk"] for n in ns])
            out.append({"dataset": label + " slope", "method": method, "risk_slope": slope,
                        "risk_slope_se": se, "minimax_rate": minimax, "derived_rate": derived,
                        f"risk_at_n={n_max}": sel[n_max]["excess_risk"],
                        "risk / MLP risk": sel[n_max]["excess_risk"] / mlp,
                        "fit_seconds": float(sum(sel[n]["fit_seconds"] for n in ns)),
                        "peak_traced_mb": float(max(sel[n]["peak_traced_mb"] for n in ns))})
    return out


def targets(summary):
    out = []
    for row in summary:
        if row["method"] != METHOD:
            continue
        name = row["dataset"].removesuffix(" slope")
        if "rmse_slope" in row:
            lo, hi = row["bracket"]
            s, se = row["rmse_slope"], row["rmse_slope_se"]
            met = bool(s < 0 and np.isfinite(se) and s + 2 * se < 0 and s >= lo)
            out.append(target(f"{name}: RMSE-vs-L slope < 0 (2 SE excludes 0), inside the "
                              "bracket",
                              f"in [{lo:.3g}, 0); guaranteed {hi:.3g}",
                              f"{s:.3f} +- {se:.3f}",
                              met))
        else:
            s, derived = row["risk_slope"], row["derived_rate"]
            out.append(target(f"{name}: risk slope at least as steep as the derived rate",
                              f"<= {derived:.3g} (minimax {row['minimax_rate']:.3g})",
                              f"{s:.3f} +- {row['risk_slope_se']:.3f}",
                              bool(s <= derived)))
            ratio = row["risk / MLP risk"]
            n_key = next(k for k in row if k.startswith("risk_at_n="))
            out.append(target(f"{name}: {n_key.removeprefix('risk_at_')} risk within 1.5x "
                              "the MLP's",
                              "<= 1.5",
                              float(ratio),
                              bool(ratio <= 1.5)))
    return out


def _winners(summary):
    notes = []
    for row in summary:
        if "risk / MLP risk" not in row or row["method"] != METHOD:
            continue
        name = row["dataset"].removesuffix(" slope")
        n_key = next(k for k in row if k.startswith("risk_at_n="))
        best = min((r for r in summary if r["dataset"] == row["dataset"]),
                   key=lambda r: r[n_key])
        notes.append(f"{name}: lowest {n_key.removeprefix('risk_at_')} excess risk is "
                     f"{best['method']} ({best[n_key]:.4g}; transformer {row[n_key]:.4g}).")
    return notes


FULL = {"A": {"n_train": 4096, "epochs": 200, "seeds": 2}, "B": {"epochs": 100, "seeds": 2}}

NOTES = [
    "Slopes are OLS fits of log error on log L (A, per-seed points pooled) or log mean "
    "risk on log n (B); SE is the OLS standard error. A fits on the L whose RMSE is "
    "above 2x the RMSE at the largest L when at least 3 remain, else on all L "
    "(slope_rule, L_used).",
    "The bracket [-4 alpha/d0, -alpha/d0] and the rates are derived from the paper's "
    "block bounds with unknown constants; the architecture was not tuned to them.",
    "sup_error is on a 10,000-point grid of [0, 1] for d0 = 1 and the max over the "
    "4,096 test points for d0 = 2. norm=None (no LayerNorm) in every fit.",
    "fit_seconds: wall time on a 2-core machine shared with other jobs, one torch thread "
    "(load_average_per_seed: the 1-minute load average after each fit). The transformer's "
    "fits are timed without tracemalloc (which doubles a torch loop's time); its "
    "peak_traced_mb is that of a traced one-epoch fit of the same setting.",
    "The wavelet kind replaces the radial one in the d0 = 2 arms at alpha = 0.5; at "
    "alpha = 1 the radial function stays, since the wavelet and Weierstrass sums are "
    "not exactly Lipschitz (log factor).",
]


def _function(text):
    """``kind:d0:alpha`` -> (kind, d0, alpha)."""
    kind, d0, alpha = text.split(":")
    return kind, int(d0), float(alpha)


def _arm_settings(rows):
    """{(part, label): {"n_train", "epochs", "seeds"}} of the transformer rows."""
    arms = {}
    for r in rows:
        if r["method"] != METHOD or r["dataset"].endswith(" slope"):
            continue
        part, rest = r["dataset"].split(" ", 1)
        label = rest.rsplit(" ", 1)[0]
        arms.setdefault((part, label), {"n_train": r.get("n_train"), "epochs": r["epochs"],
                                        "seeds": r["seeds"]})
    return arms


def describe_protocol(rows, quick, depths, sizes):
    """Protocol text of ``rows``, arm by arm, naming every arm run below the full protocol."""
    arms = _arm_settings(rows)
    a = [f"{label}: {v['n_train']} training points, {v['epochs']} epochs, seeds {v['seeds']}"
         for (part, label), v in arms.items() if part == "A"]
    b = [f"{label}: {v['epochs']} epochs, seeds {v['seeds']}"
         for (part, label), v in arms.items() if part == "B"]
    reduced = [label + f" ({part})" for (part, label), v in arms.items()
               if len(v["seeds"]) < FULL[part]["seeds"] or v["epochs"] < FULL[part]["epochs"]
               or (part == "A" and v["n_train"] < FULL["A"]["n_train"])]
    text = (f"{'QUICK: ' if quick else ''}(A) error vs depth, noise-free, {N_TEST} test points, "
            f"L in {depths}; " + "; ".join(a) + "; anchor MLPRegressor((32,)*L, max_iter="
            "epochs). (B) risk vs n, sigma=" + f"{NOISE}, n in {sizes}; " + "; ".join(b)
            + "; anchors KNN(k=ceil(n^(2a/(2a+d0)))), MLPRegressor((64, 64), "
            "early_stopping=True), HistGradientBoostingRegressor(). Estimator defaults "
            "otherwise (d_model=32, 2 heads, d_ff=64, norm=None, Adam 1e-3, batch 128, float32).")
    if not quick:
        text += (" Full protocol: (A) 4096 training points, 2 seeds, 200 epochs; (B) 2 seeds, "
                 "100 epochs (the cap for B). ")
        text += ("REDUCED arms: " + "; ".join(reduced) + "." if reduced
                 else "Every arm ran the full protocol.")
    return text


def summarize(rows):
    """Summary rows, targets and winner notes of the part A and B rows present in ``rows``."""
    arms = _arm_settings(rows)
    fa = [f for f in FUNCTIONS_A if ("A", _label(*f)) in arms]
    fb = [f for f in FUNCTIONS_B if ("B", _label(*f)) in arms]
    summary = depth_summary(rows, fa, DEPTHS) + risk_summary(rows, fb)
    return summary, targets(summary), _winners(summary)


def _pool_seeds(old, new):
    """One row from two runs of the same setting on disjoint seeds (per-seed values joined,
    means recomputed)."""
    def per_seed(r, key, fallback):
        return list(r.get(f"{key}_per_seed", [r.get(fallback)] * len(r["seeds"])))

    pooled = {**new, "seeds": old["seeds"] + new["seeds"],
              "peak_traced_mb": max(old["peak_traced_mb"], new["peak_traced_mb"])}
    keys = [("fit_seconds", "fit_seconds"), ("load_average", None)]
    keys += [("rmse", "rmse"), ("sup_error", "sup_error")] if "rmse" in new else [
        ("risk", "excess_risk")]
    for key, mean_key in keys:
        values = per_seed(old, key, mean_key) + per_seed(new, key, mean_key)
        pooled[f"{key}_per_seed"] = values
        if mean_key is not None:
            pooled[mean_key] = float(np.mean(values))
    return pooled


def merge_results(paths):
    """Rows of several result files: a later file's arm replaces an earlier one's, except
    that rows of the same setting (training points, epochs) on new seeds are pooled with the
    earlier seeds."""
    table = {}
    for path in paths:
        payload = json.loads(Path(path).read_text())
        protocol = payload.get("protocol", "")
        # files written before the rows carried their settings: read them off the protocol
        m_a = re.search(r"(\d+) training / \d+ test points, L in \[[^\]]*\], seeds (\[[^\]]*\]), "
                        r"(\d+) epochs", protocol)
        m_b = re.search(r"\(B\).*?seeds \[[^\]]*\], (\d+) epochs", protocol)
        for r in payload["rows"]:
            if r["dataset"].endswith(" slope"):
                continue
            r = dict(r)
            if r["dataset"].startswith("A ") and "epochs" not in r and m_a:
                r.setdefault("n_train", int(m_a.group(1)))
                r["epochs"] = int(m_a.group(3))
            if r["dataset"].startswith("B ") and "epochs" not in r and m_b:
                r["epochs"] = int(m_b.group(1))
            key = (r["dataset"], r["method"])
            old = table.get(key)
            if (old is not None and old["epochs"] == r["epochs"]
                    and old.get("n_train") == r.get("n_train")
                    and not set(old["seeds"]) & set(r["seeds"])):
                r = _pool_seeds(old, r)
            table[key] = r
    return list(table.values())


def _add_machine_note(path, rows):
    """Write the range of the recorded load averages into the result file's machine note."""
    loads = [v for r in rows for v in r.get("load_average_per_seed", []) if v is not None]
    payload = json.loads(Path(path).read_text())
    note = f"{os.cpu_count()} CPUs shared with other jobs, one torch thread per fit"
    if loads:
        missing = sum(v is None for r in rows for v in r.get("load_average_per_seed", [None]))
        note += (f"; 1-minute load average {min(loads):.1f}-{max(loads):.1f} after the fits "
                 f"that recorded it ({len(loads)} of {len(loads) + missing})")
    payload["machine"]["note"] = note
    Path(path).write_text(json.dumps(payload, indent=2, default=float) + "\n")
    return path


def main(argv=None):
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--n-train-a", type=int, default=FULL["A"]["n_train"])
    parser.add_argument("--epochs-a", type=int, default=FULL["A"]["epochs"])
    parser.add_argument("--seeds-a", type=int, nargs="*", default=[0, 1])
    parser.add_argument("--epochs-b", type=int, default=FULL["B"]["epochs"])
    parser.add_argument("--seeds-b", type=int, nargs="*", default=[0, 1])
    parser.add_argument("--functions-a", type=_function, nargs="*", default=None,
                        metavar="KIND:D0:ALPHA", help="part A arms (default: all four; none "
                        "skips part A)")
    parser.add_argument("--functions-b", type=_function, nargs="*", default=None,
                        metavar="KIND:D0:ALPHA", help="part B arms (default: both; none skips "
                        "part B)")
    parser.add_argument("--merge", nargs="+", default=None, metavar="RESULTS",
                        help="combine these result files (a later file's arm replaces an "
                        "earlier one's, rows of the same setting on new seeds are "
                        "pooled), write --output and exit")
    parser.add_argument("--extra-note", action="append", default=[],
                        help="a note added to the result file (with --merge)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)

    if args.merge:
        rows = merge_results(args.merge)
        summary, tgts, winners = summarize(rows)
        path = write_results("holder_transformer", rows + summary, False, args.output,
                             targets=tgts, protocol=describe_protocol(rows, False, DEPTHS,
                                                                      SIZES),
                             notes=NOTES + args.extra_note + winners)
        _add_machine_note(path, rows)
        print(markdown_table(tgts, ["target", "spec", "measured", "met"],
                             headers={"spec": "goal"}))
        print(f"\nwrote {path}")
        return

    torch.set_num_threads(args.threads)
    # BLAS threads spinning on a shared machine slow sklearn's MLP about 15-fold
    threadpool_limits(args.threads)
    warnings.simplefilter("ignore", ConvergenceWarning)
    # warm-up (first-use imports and allocations out of the first timed fit)
    HolderTransformerRegressor(n_blocks=1, max_epochs=1).fit(np.c_[0.0, 1.0].T, [0.0, 1.0])
    start = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - start:7.1f} s] {msg}", flush=True)

    if args.quick:
        fa, depths, n_train, ea, sa = FUNCTIONS_A[:1], [1, 2], 256, 10, [0]
        fb, sizes, eb, sb = FUNCTIONS_B[:1], [256], 10, [0]
    else:
        fa = FUNCTIONS_A if args.functions_a is None else args.functions_a
        fb = FUNCTIONS_B if args.functions_b is None else args.functions_b
        depths, n_train, ea, sa = DEPTHS, args.n_train_a, args.epochs_a, args.seeds_a
        sizes, eb, sb = SIZES, args.epochs_b, args.seeds_b
    notes = list(NOTES)

    def write(rows):
        summary, tgts, winners = summarize(rows)
        path = write_results("holder_transformer", rows + summary, args.quick, args.output,
                             targets=tgts, protocol=describe_protocol(rows, args.quick, depths,
                                                                      sizes),
                             notes=notes + winners)
        return _add_machine_note(path, rows)

    rows = bench_depth(fa, depths, n_train, ea, sa, log, checkpoint=write)
    if rows:
        log(f"part A done, partial results in {write(rows)}")
    done = list(rows)
    rows = done + bench_risk(fb, sizes, eb, sb, log,
                             checkpoint=lambda new: write(done + new))
    path = write(rows)
    summary, tgts, _ = summarize(rows)
    print(markdown_table([r for r in summary], ["dataset", "method", "rmse_slope",
                                                 "rmse_slope_se", "bracket",
                                                 "slope / (-alpha/d0)", "L_used", "risk_slope",
                                                 "risk_slope_se", "derived_rate",
                                                 "risk / MLP risk"], floatfmt=".3f"))
    print()
    print(markdown_table(tgts, ["target", "spec", "measured", "met"],
                         headers={"spec": "goal"}))
    print(f"\nwrote {path} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
