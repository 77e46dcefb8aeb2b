"""PINNfluence: influence diagnostics of good and deliberately failed PINNs, with their anchors.

Method: Naujoks, Krasowski, Weckbecker, Yolcu, Wiegand, Lapuschkin, Samek, Klausen,
"PINNfluence: Interpreting PINNs through Influence Functions", ICML 2026, arXiv:2409.08958.

Problems: the forced heat equation (``heat_1d``) and drift-diffusion with alpha = 1, beta = 20
(``drift_diffusion_1d``), with the authors' tanh networks: 2-32-32-32-1 for heat and
2-64-64-64-1 for drift-diffusion (float64, Adam then L-BFGS).
"Good" PINNs train on 1000 domain / 100 boundary / 100 initial points (scrambled Halton);
"bad" ones on 10/2/2 (heat) and 200/20/20 (drift-diffusion). For every problem, configuration
and seed the benchmark records:

- the relative L2 error on a 100 x 100 grid and the residual map there (mean and max |PDE
  residual|), the anchor a practitioner would look at first;
- the influence diagnostics (Arnoldi inverse, 200 Krylov steps, top 50 eigenvalues, damping
  1e-3) on a 50 x 50 grid: loss fractions of the PDE/IC/BC terms (overall and in 5 time bins),
  mean cancellation, and directionality minus the point share;
- seconds per fit and per influence computation.

Anchors: DeepXDE (same network, points and optimiser schedule; accuracy only) and captum 0.9's
``ArnoldiInfluenceFunction`` on a 2-16-16-1 heat PINN (influence ranks and seconds at the same
Arnoldi sizes). The leave-one-out check (heat) drops one domain, one IC and one BC point,
retrains from the same initialisation and correlates ``Inf[:, i]`` (and the grad-dot baseline)
with ``f_-i - f`` on 500 test points.

``--quick``: heat only, 100/10/10 vs 10/2/2 points, 100 Adam steps, Arnoldi(50, 20), one seed,
no anchors and no leave-one-out. ``--adam``, ``--lbfgs``, ``--seeds``, ``--loo-seeds`` and the
``--no-*`` switches reduce the protocol; the result file's protocol string says what ran.
Tasks run in priority order (one seed's good/bad pairs and anchors before the next seed), so a
run stopped early keeps complete pairs; with ``--partial-dir`` each finished task is saved,
``--only`` runs a subset (e.g. to split the work over two processes) and ``--collect-only``
assembles what finished.
"""

import json
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from scipy.stats import spearmanr
from sklearn.utils.parallel import Parallel, delayed

from sklearn_icml26.datasets import make_pde_collocation
from sklearn_icml26.pinn import (
    PINNInfluence,
    PINNRegressor,
    drift_diffusion_1d,
    heat_1d,
)

from _common import (
    benchmark_parser,
    markdown_table,
    measure,
    target,
    write_results,
)

METHOD = "PINNInfluence"
PROBLEMS = {"heat_1d": heat_1d, "drift_diffusion_1d": drift_diffusion_1d}
POINTS = {("heat_1d", "good"): (1000, 100, 100), ("heat_1d", "bad"): (10, 2, 2),
          ("drift_diffusion_1d", "good"): (1000, 100, 100),
          ("drift_diffusion_1d", "bad"): (200, 20, 20)}
QUICK_POINTS = {("heat_1d", "good"): (100, 10, 10), ("heat_1d", "bad"): (10, 2, 2)}
DIAGNOSTICS = ("pde_fraction", "cancellation", "directionality_excess")
PUBLISHED_DEEPXDE_L2 = 1.5e-3  # DeepXDE 1.15.0 on heat_1d, Adam 3000 + L-BFGS 500, one thread
# the authors' widths: 2-32-32-32-1 (heat / "diffusion"), 2-64-64-64-1 (drift-diffusion)
HIDDEN = {"heat_1d": (32, 32, 32), "drift_diffusion_1d": (64, 64, 64)}


def _grid(problem, n):
    (x0, x1), (t0, t1) = problem.bounds
    xs, ts = np.meshgrid(np.linspace(x0, x1, n), np.linspace(t0, t1, n))
    return np.c_[xs.ravel(), ts.ravel()]


def _fit(problem, X, seed, settings, hidden=(32, 32, 32)):
    pinn = PINNRegressor(problem, hidden_layer_sizes=hidden, solver=settings["solver"],
                         max_epochs=settings["adam"], max_iter=settings["lbfgs"],
                         random_state=seed)
    return pinn, measure(pinn.fit, X, memory=None).seconds


def run_case(name, config, seed, settings):
    """One (problem, configuration, seed): fit, residual map, influence diagnostics.

    The cases are not ``run_arms`` arms: they run in parallel workers and each gives one row
    per seed (pooled by the summary); fit and influence are timed by ``measure``.
    """
    torch.set_num_threads(1)
    problem = PROBLEMS[name]()
    points = settings["points"][(name, config)]
    X = make_pde_collocation(problem, *points, random_state=seed)
    pinn, fit_s = _fit(problem, X, seed, settings, hidden=HIDDEN[name])
    grid = _grid(problem, 100)
    res = np.abs(pinn.residuals(grid)[:, 0])
    inf = PINNInfluence(pinn, hessian="arnoldi", arnoldi_dim=settings["arnoldi"][0],
                        projection_dim=settings["arnoldi"][1])
    diag_grid = _grid(problem, settings["diag_grid"])
    m = measure(lambda: inf.fit().influence_by_term(diag_grid), memory=None)
    by, inf_s = m.result, m.seconds
    names = inf.loss_term_names_
    A = np.stack([np.abs(by[k]).sum(axis=1) for k in names], axis=1)
    frac = A / A.sum(axis=1, keepdims=True)
    stack = np.stack([by[k] for k in names])
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.abs(stack.sum(axis=0)) / np.abs(stack).sum(axis=0)
    cancel = 1.0 - np.nanmean(ratio, axis=1)
    D, share = inf.directionality(diag_grid)
    t = diag_grid[:, 1]
    bins = np.minimum((t - t.min()) / np.ptp(t) * 5, 4.999).astype(int)
    row = {
        "dataset": name, "method": METHOD, "config": config, "seed": seed,
        "n_points": list(points), "hidden_layer_sizes": list(HIDDEN[name]),
        "n_params": inf.n_params_,
        "relative_l2": pinn.relative_l2_error(grid),
        "final_loss": float(pinn.loss_curve_[-1]), "n_iter": pinn.n_iter_,
        "residual_mean": float(res.mean()), "residual_max": float(res.max()),
        "loss_fractions": {k: float(frac[:, j].mean()) for j, k in enumerate(names)},
        "loss_fractions_by_time_bin": {k: [float(frac[bins == b, j].mean()) for b in range(5)]
                                       for j, k in enumerate(names)},
        "pde_fraction": float(frac[:, names.index("pde")].mean()),
        "cancellation": float(np.nanmean(cancel)),
        "directionality": float(np.nanmean(D)), "point_share": float(np.nanmean(share)),
        "directionality_excess": float(np.nanmean(D - share)),
        "n_kept_eigenvalues": int(inf.eigenvalues_.size),
        "n_negative_ritz_values": inf.n_negative_eigenvalues_,
        "fit_seconds": fit_s, "influence_seconds": inf_s,
        "influence_seconds_parts": inf.fit_time_parts_, }
    return row


def run_loo(seed, config, settings):
    """Drop one domain, one IC and one BC point; correlate influence with the retrained change."""
    torch.set_num_threads(1)
    problem = heat_1d()
    points = settings["points"][("heat_1d", config)]
    X = make_pde_collocation(problem, *points, random_state=seed)
    pinn, fit_s = _fit(problem, X, seed, settings)
    inf = PINNInfluence(pinn, hessian="arnoldi", arnoldi_dim=settings["arnoldi"][0],
                        projection_dim=settings["arnoldi"][1]).fit()
    rng = np.random.default_rng(1000 + seed)
    X_test = np.c_[rng.uniform(-1, 1, 500), rng.uniform(0, 1, 500)]
    nd, nb, _ = points
    drop = {"domain": int(rng.integers(nd)), "bc": nd + int(rng.integers(nb)),
            "ic": nd + nb + int(rng.integers(points[2]))}
    I = inf.influence(X_test)
    gd = inf.grad_dot(X_test)
    rows = []
    for kind, i in drop.items():
        m = measure(inf.leave_one_out, i, X_test, memory=None)
        delta, sec = m.result, m.seconds
        rows.append({"dataset": "heat_1d LOO", "method": METHOD, "config": config, "seed": seed,
                     "dropped": kind, "index": i,
                     "spearman_influence": float(spearmanr(I[:, i], delta).statistic),
                     "pearson_influence": float(np.corrcoef(I[:, i], delta)[0, 1]),
                     "spearman_grad_dot": float(spearmanr(gd[:, i], delta).statistic),
                     "pearson_grad_dot": float(np.corrcoef(gd[:, i], delta)[0, 1]),
                     "max_abs_delta": float(np.abs(delta).max()),
                     "fit_seconds": sec})
    return rows


def run_captum(settings):
    """Our Arnoldi vs captum's on a 2-16-16-1 heat PINN at the same Arnoldi sizes."""
    torch.set_num_threads(1)
    from sklearn_icml26.pinn._captum import captum_arnoldi_influence

    problem = heat_1d()
    X = make_pde_collocation(problem, 200, 20, 20, random_state=0)
    pinn = PINNRegressor(problem, hidden_layer_sizes=(16, 16), max_epochs=settings["adam"],
                         max_iter=settings["lbfgs"], random_state=0).fit(X)
    X_test = make_pde_collocation(problem, 100, 0, 0, random_state=7)
    rows = []
    exact = PINNInfluence(pinn, hessian="exact_topk", projection_dim=20)
    timed = measure(lambda: exact.fit().influence(X_test), memory=None)
    E, exact_s = timed.result, timed.seconds
    m, k = settings["captum_arnoldi"]
    ours = PINNInfluence(pinn, hessian="arnoldi", arnoldi_dim=m, projection_dim=k)
    timed = measure(lambda: ours.fit().influence(X_test), memory=None)
    O, ours_s = timed.result, timed.seconds
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        timed = measure(captum_arnoldi_influence, pinn, X_test, arnoldi_dim=m,
                        projection_dim=k, checkpoint_dir=tmp, memory=None)
        C, captum_s = timed.result, timed.seconds
    label = f"heat_1d 2-16-16-1 (p={ours.n_params_}), 240 train x 100 test, Arnoldi({m}, {k})"
    rows.append({"dataset": label, "method": METHOD,
                 "spearman_vs_captum": float(spearmanr(O.ravel(), C.ravel()).statistic),
                 "pearson_vs_captum": float(np.corrcoef(O.ravel(), C.ravel())[0, 1]),
                 "spearman_vs_exact_topk": float(spearmanr(O.ravel(), E.ravel()).statistic),
                 "fit_seconds": ours_s})
    rows.append({"dataset": label, "method": "captum.ArnoldiInfluenceFunction",
                 "spearman_vs_exact_topk": float(spearmanr(C.ravel(), E.ravel()).statistic),
                 "fit_seconds": captum_s, "speedup_of_ours": captum_s / ours_s})
    rows.append({"dataset": label, "method": "PINNInfluence(hessian='exact_topk')",
                 "n_negative_eigenvalues": exact.n_negative_eigenvalues_,
                 "fit_seconds": exact_s})
    return rows


def run_exact_timing(settings):
    """Seconds of the exact Hessian at the benchmark's parameter count (2,241)."""
    torch.set_num_threads(1)
    problem = heat_1d()
    X = make_pde_collocation(problem, *settings["points"][("heat_1d", "good")], random_state=0)
    pinn = PINNRegressor(problem, solver="adam", max_epochs=10, random_state=0).fit(X)
    inf = PINNInfluence(pinn, hessian="exact")
    sec = measure(inf.fit, memory=None).seconds
    return [{"dataset": "heat_1d 2-32-32-32-1, 1200 points", "method":
             "PINNInfluence(hessian='exact')", "n_params": inf.n_params_,
             "n_negative_eigenvalues": inf.n_negative_eigenvalues_,
             "hessian_seconds": inf.fit_time_parts_["hessian"], "fit_seconds": sec}]


def _deepxde_lbfgs(dde, maxiter):
    """L-BFGS for at most ``maxiter`` iterations, as ours. DeepXDE's pytorch backend fixes its
    iterations per optimiser call at import time (1000 with its default ``maxiter``), which
    ``set_LBFGS_options`` does not update: left alone, it would run 1000 iterations."""
    dde.optimizers.config.set_LBFGS_options(maxiter=maxiter)
    options = dde.optimizers.config.LBFGS_options
    options["iter_per_step"] = maxiter
    options["fun_per_step"] = options["maxfun"]


def _deepxde_fit_row(dde, data, net, problem, name, seed, settings):
    """Train a DeepXDE model with our schedule (Adam at lr 1e-3, then L-BFGS) and return its
    result row: relative L2 against the exact solution on the 100 x 100 grid, seconds."""
    model = dde.Model(data, net)

    def train():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.compile("adam", lr=1e-3)
            model.train(iterations=settings["adam"], display_every=10**9, verbose=0)
            _deepxde_lbfgs(dde, settings["lbfgs"])
            model.compile("L-BFGS")
            model.train(display_every=10**9, verbose=0)

    sec = measure(train, memory=None).seconds
    grid = _grid(problem, 100)
    pred = model.predict(grid).ravel()
    exact = problem.exact_solution(torch.as_tensor(grid)).numpy().ravel()
    return [{"dataset": name, "method": "deepxde", "config": "good", "seed": seed,
             "version": dde.__version__,
             "relative_l2": float(np.linalg.norm(pred - exact) / np.linalg.norm(exact)),
             "fit_seconds": sec}]


def run_deepxde(seed, settings):
    """DeepXDE on heat_1d: same network, points and optimiser schedule (accuracy anchor)."""
    os.environ.setdefault("DDE_BACKEND", "pytorch")
    torch.set_num_threads(1)
    try:
        import deepxde as dde
    except ImportError:
        return [{"dataset": "heat_1d", "method": "deepxde", "seed": seed,
                 "status": "not installed", "published_relative_l2": PUBLISHED_DEEPXDE_L2}]
    dde.config.set_default_float("float64")
    dde.config.set_random_seed(seed)
    problem = heat_1d()
    X = make_pde_collocation(problem, *settings["points"][("heat_1d", "good")],
                             random_state=seed)
    geom = dde.geometry.GeometryXTime(dde.geometry.Interval(-1, 1),
                                      dde.geometry.TimeDomain(0, 1))

    def pde(x, u):
        u_t = dde.grad.jacobian(u, x, i=0, j=1)
        u_xx = dde.grad.hessian(u, x, i=0, j=0)
        s = torch.sin(np.pi * x[:, 0:1])
        return u_t - u_xx + torch.exp(-x[:, 1:2]) * (s - np.pi**2 * s)

    bc = dde.icbc.DirichletBC(geom, lambda x: 0.0, lambda x, on: on)
    ic = dde.icbc.IC(geom, lambda x: np.sin(np.pi * x[:, 0:1]), lambda x, on: on)
    data = dde.data.TimePDE(geom, pde, [bc, ic], num_domain=0, num_boundary=0, num_initial=0,
                            anchors=X)
    net = dde.nn.FNN([2, *HIDDEN["heat_1d"], 1], "tanh", "Glorot normal")
    return _deepxde_fit_row(dde, data, net, problem, "heat_1d", seed, settings)


def run_deepxde_drift(seed, settings):
    """DeepXDE on drift_diffusion_1d (the authors' 2-64-64-64-1 network and input map x / 2 pi,
    our points and schedule): is the good configuration trainable at this budget at all?"""
    os.environ.setdefault("DDE_BACKEND", "pytorch")
    torch.set_num_threads(1)
    try:
        import deepxde as dde
    except ImportError:
        return [{"dataset": "drift_diffusion_1d", "method": "deepxde", "seed": seed,
                 "status": "not installed"}]
    dde.config.set_default_float("float64")
    dde.config.set_random_seed(seed)
    problem = drift_diffusion_1d()
    X = make_pde_collocation(problem, *settings["points"][("drift_diffusion_1d", "good")],
                             random_state=seed)
    two_pi = 2 * np.pi
    geom = dde.geometry.GeometryXTime(dde.geometry.Interval(0, two_pi),
                                      dde.geometry.TimeDomain(0, 1))

    def pde(x, u):
        u_x = dde.grad.jacobian(u, x, i=0, j=0)
        u_t = dde.grad.jacobian(u, x, i=0, j=1)
        u_xx = dde.grad.hessian(u, x, i=0, j=0)
        return u_t - 1.0 * u_xx + 20.0 * u_x

    bc = dde.icbc.PeriodicBC(geom, 0, lambda x, on: on, derivative_order=0)
    ic = dde.icbc.IC(geom, lambda x: np.sin(2 * x[:, 0:1] + np.pi / 4), lambda x, on: on)
    data = dde.data.TimePDE(geom, pde, [bc, ic], num_domain=0, num_boundary=0, num_initial=0,
                            anchors=X)
    net = dde.nn.FNN([2, *HIDDEN["drift_diffusion_1d"], 1], "tanh", "Glorot normal")
    net.apply_feature_transform(lambda x: torch.cat([x[:, 0:1] / two_pi, x[:, 1:2]], dim=1))
    return _deepxde_fit_row(dde, data, net, problem, "drift_diffusion_1d", seed, settings)


# ---------------------------------------------------------------------------------------------
def summarise(rows, seeds):
    """Per problem: mean over seeds per configuration, the good-vs-bad sign per diagnostic."""
    out, checks = [], {}
    for name in PROBLEMS:
        sel = {c: sorted([r for r in rows if r.get("dataset") == name and r.get("config") == c
                          and r["method"] == METHOD], key=lambda r: r["seed"])
               for c in ("good", "bad")}
        if not sel["good"] or not sel["bad"]:
            continue
        common = sorted({r["seed"] for r in sel["good"]} & {r["seed"] for r in sel["bad"]})
        good = {r["seed"]: r for r in sel["good"]}
        bad = {r["seed"]: r for r in sel["bad"]}
        row = {"dataset": f"{name} good vs bad", "method": METHOD, "seeds": common}
        same_direction = {}
        for key in (*DIAGNOSTICS, "residual_mean", "residual_max", "relative_l2"):
            diffs = [good[s][key] - bad[s][key] for s in common]
            row[f"{key}_good"] = float(np.mean([good[s][key] for s in common]))
            row[f"{key}_bad"] = float(np.mean([bad[s][key] for s in common]))
            row[f"{key}_diff_per_seed"] = diffs
            same_direction[key] = bool(all(d > 0 for d in diffs) or all(d < 0 for d in diffs))
        for key in ("residual_mean", "residual_max"):
            row[f"{key}_good_over_bad"] = row[f"{key}_good"] / row[f"{key}_bad"]
            g = [good[s][key] for s in common]
            b = [bad[s][key] for s in common]
            # the residual map alone separates the pair if the ranges over seeds do not overlap
            # (not evaluable from a single seed)
            row[f"{key}_separates"] = (bool(max(g) < min(b) or max(b) < min(g))
                                       if len(common) >= 2 else None)
        # per seed: does the residual map alone rank the pair (the good PINN below the failed
        # one in both the mean and the max |PDE residual| on the grid)?
        row["residual_map_ranks_pair_per_seed"] = [
            bool(good[s]["residual_mean"] < bad[s]["residual_mean"]
                 and good[s]["residual_max"] < bad[s]["residual_max"]) for s in common]
        row["diagnostics_same_direction"] = {k: same_direction[k] for k in DIAGNOSTICS}
        row["n_diagnostics_same_direction"] = int(sum(same_direction[k] for k in DIAGNOSTICS))
        row["residual_map_separates"] = row["residual_mean_separates"]
        out.append(row)
        checks[name] = row
    return out, checks


def targets(rows, summary_rows, settings):
    out = []
    good_heat = [r for r in rows if r.get("dataset") == "heat_1d" and r.get("config") == "good"
                 and r["method"] == METHOD]
    if good_heat:
        l2 = float(np.mean([r["relative_l2"] for r in good_heat]))
        out.append(target("good heat PINN relative L2 (mean over seeds)",
                          "<= 3e-3 (2x DeepXDE's 1.5e-3)",
                          l2,
                          l2 <= 3e-3))
        dde_rows = [r for r in rows if r["method"] == "deepxde" and "relative_l2" in r
                    and r["dataset"] == "heat_1d"]
        if dde_rows:
            # on the seeds both ran (same points and network initialisation seed)
            seeds = sorted({r["seed"] for r in dde_rows} & {r["seed"] for r in good_heat})
            ours = float(np.mean([r["relative_l2"] for r in good_heat if r["seed"] in seeds]))
            ref = float(np.mean([r["relative_l2"] for r in dde_rows if r["seed"] in seeds]))
            out.append(target(f"good heat PINN relative L2 vs DeepXDE (same schedule, "
                              f"seeds {seeds})",
                              "<= 2x DeepXDE",
                              ours / ref,
                              ours <= 2 * ref))
    cap = [r for r in rows if "spearman_vs_captum" in r]
    capt = [r for r in rows if r["method"] == "captum.ArnoldiInfluenceFunction"]
    if cap:
        rho = cap[0]["spearman_vs_captum"]
        out.append(target("captum parity (Spearman of influences)", ">= 0.99", rho, rho >= 0.99))
        speed = capt[0]["speedup_of_ours"]
        out.append(target("speed vs captum at the same Arnoldi sizes", ">= 2x", speed, speed >= 2))
    for row in summary_rows:
        n = row["n_diagnostics_same_direction"]
        k = len(row["seeds"])
        out.append(target(f"{row['dataset']}: diagnostics differing in the same direction "
                          f"on all {k} seed(s) (3 required)",
                          ">= 2 of 3 on 3 seeds",
                          n,
                          n >= 2 and k >= 3))
    return out


def _fmt(values):
    return ", ".join(f"{v:.3g}" for v in values)


def _outcome_notes(rows, summary):
    """What this run shows, written from its numbers (so the notes match the rows)."""
    notes = []
    for name in PROBLEMS:
        sel = {c: sorted([r for r in rows if r.get("dataset") == name and r.get("config") == c
                          and r["method"] == METHOD], key=lambda r: r["seed"])
               for c in ("good", "bad")}
        if not sel["good"] and not sel["bad"]:
            continue
        net = "-".join(map(str, (2, *HIDDEN[name], 1)))
        text = f"{name} ({net}): relative L2 "
        text += "; ".join(f"{c} {_fmt([r['relative_l2'] for r in sel[c]])} (seeds "
                          f"{[r['seed'] for r in sel[c]]})" for c in ("good", "bad") if sel[c])
        text += "."
        row = next((r for r in summary if r["dataset"] == f"{name} good vs bad"), None)
        if row is not None:
            g = row["residual_mean_diff_per_seed"]
            sep = row["residual_map_separates"]
            verdict = {True: "already separates", False: "does not separate",
                       None: "cannot be judged (one seed) on whether it separates"}[sep]
            ratios = [a / b for a, b in zip(
                [r["residual_mean"] for r in sel["good"] if r["seed"] in row["seeds"]],
                [r["residual_mean"] for r in sel["bad"] if r["seed"] in row["seeds"]],
                strict=False)]
            max_ratios = [a / b for a, b in zip(
                [r["residual_max"] for r in sel["good"] if r["seed"] in row["seeds"]],
                [r["residual_max"] for r in sel["bad"] if r["seed"] in row["seeds"]],
                strict=False)]
            ranks = row["residual_map_ranks_pair_per_seed"]
            per_seed = ", ".join(f"seed {s}: {'yes' if ok else 'no'} (mean {a:.3g}, max {m:.3g})"
                                 for s, ok, a, m in zip(row["seeds"], ranks, ratios, max_ratios,
                                                        strict=False))
            same = [k for k, v in row["diagnostics_same_direction"].items() if v]
            text += (f" Per seed, the residual map alone ranks the good PINN below the failed "
                     f"one (both mean and max |PDE residual| lower; good/bad ratios): "
                     f"{per_seed}. Across seeds the residual map alone {verdict} the good from "
                     f"the failed PINNs (mean |PDE residual| good minus bad per seed "
                     f"{_fmt(g)}). Influence diagnostics with one sign of good minus bad on "
                     f"every seed ({len(row['seeds'])}): "
                     f"{', '.join(same) if same else 'none'} "
                     f"({row['n_diagnostics_same_direction']} of {len(DIAGNOSTICS)}).")
        notes.append(text)
    for config in ("good", "bad"):
        loo = [r for r in rows if r.get("dataset") == "heat_1d LOO" and r["config"] == config]
        if loo:
            si = [r["spearman_influence"] for r in loo]
            sg = [r["spearman_grad_dot"] for r in loo]
            notes.append(f"Leave-one-out on the {config} heat PINNs (seeds "
                         f"{sorted({r['seed'] for r in loo})}, {len(loo)} dropped points): "
                         f"Spearman of Inf[:, i] with f_-i - f mean {np.mean(si):.3g} (range "
                         f"{min(si):.3g} to {max(si):.3g}), of grad-dot {np.mean(sg):.3g} "
                         f"(range {min(sg):.3g} to {max(sg):.3g}).")
    dde_rows = [r for r in rows if r["method"] == "deepxde" and "relative_l2" in r
                and r["dataset"] == "heat_1d"]
    drift_dde = [r for r in rows if r["method"] == "deepxde" and "relative_l2" in r
                 and r["dataset"] == "drift_diffusion_1d"]
    if drift_dde:
        notes.append(f"DeepXDE on drift_diffusion_1d (2-64-64-64-1, input x / 2 pi, same points "
                     f"and schedule): relative L2 {_fmt([r['relative_l2'] for r in drift_dde])} "
                     f"(seeds {[r['seed'] for r in drift_dde]}), "
                     f"{_fmt([r['fit_seconds'] for r in drift_dde])} s per fit.")
    if dde_rows:
        notes.append(f"DeepXDE {dde_rows[0]['version']} (pytorch backend, same network, points "
                     f"and schedule) on heat_1d: relative L2 "
                     f"{_fmt([r['relative_l2'] for r in dde_rows])} (seeds "
                     f"{[r['seed'] for r in dde_rows]}), "
                     f"{_fmt([r['fit_seconds'] for r in dde_rows])} s per fit.")
    else:
        notes.append(f"DeepXDE was not run here; its published-protocol accuracy on heat_1d is "
                     f"relative L2 {PUBLISHED_DEEPXDE_L2} (DeepXDE 1.15.0, Adam 3000 + L-BFGS "
                     f"500, one thread).")
    ex = [r for r in rows if r["method"] == "PINNInfluence(hessian='exact')"]
    if ex:
        arn = [r["influence_seconds_parts"]["hessian"] for r in rows
               if r.get("dataset") == "heat_1d" and r.get("config") == "good"
               and r["method"] == METHOD and r.get("n_params") == ex[0]["n_params"]]
        vs = (f" against {_fmt([min(arn), max(arn)]).replace(', ', '-')} s for the "
              f"Arnoldi(200, 50) Hessian step of the good heat PINNs at the same parameter "
              f"count" if arn else "")
        notes.append(f"Exact Hessian at {ex[0]['n_params']} parameters (2-32-32-32-1, 1,200 "
                     f"points, one torch thread; the Hessian's cost does not depend on the "
                     f"training, so the network had 10 Adam steps): "
                     f"{ex[0]['hessian_seconds']:.0f} s{vs}; {ex[0]['n_negative_eigenvalues']} "
                     f"of its eigenvalues are negative. hessian='auto' uses the exact Hessian "
                     f"up to 1,000 parameters and Arnoldi above.")
    else:
        notes.append("Exact Hessian not timed in this run; the development measurement with "
                     "this code on the same machine (shared, load about 30, one torch thread) "
                     "was 296 s at 2,241 parameters (2-32-32-32-1, 1,200 points) against 29 s "
                     "for Arnoldi(200, 50), and 3.0 s at 337 parameters (2-16-16-1, 240 "
                     "points); hence hessian='auto' switches to Arnoldi above 1,000 "
                     "parameters.")
    return notes


def _protocol(settings, quick):
    if quick:
        return ("quick: heat_1d only, 100/10/10 (good) vs 10/2/2 (bad) points, 100 Adam steps, "
                "Arnoldi(50, 20), seed 0, 15 x 15 diagnostic grid; no anchors, no leave-one-out.")
    pts = "; ".join(f"{n} {c}: {p[0]}/{p[1]}/{p[2]}" for (n, c), p in settings["points"].items())
    return (f"tanh PINNs, 2-32-32-32-1 (heat_1d) and 2-64-64-64-1 (drift_diffusion_1d), "
            f"float64, {settings['solver']} with {settings['adam']} Adam "
            f"steps (lr 1e-3) and up to {settings['lbfgs']} L-BFGS iterations; collocation "
            f"(domain/boundary/initial, scrambled Halton, seeded): {pts}; seeds "
            f"{settings['seeds']} (drift_diffusion_1d: {settings['seeds_drift']}); relative L2 "
            f"and residual map on a 100 x 100 grid; influence "
            f"by Arnoldi({settings['arnoldi'][0]}, {settings['arnoldi'][1]}), damping 1e-3, "
            f"eig_tol 1e-4, diagnostics on a {settings['diag_grid']} x {settings['diag_grid']} "
            f"grid; leave-one-out on heat_1d for seeds {settings['loo_seeds']} (good) and "
            f"{settings['loo_bad_seeds']} (bad), 3 dropped points each, 500 test points; captum "
            f"parity on a 2-16-16-1 heat PINN (240 points, 100 test points) at "
            f"Arnoldi{tuple(settings['captum_arnoldi'])}; DeepXDE with the same networks, "
            f"points and schedule on heat_1d for seeds {settings['deepxde_seeds']} and on "
            f"drift_diffusion_1d for seeds {settings.get('deepxde_drift_seeds', [])}. "
            f"{settings.get('note', '')}")


def main(argv=None):
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--adam", type=int, default=3000)
    parser.add_argument("--lbfgs", type=int, default=500)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--loo-seeds", type=int, nargs="*", default=[0, 1, 2])
    parser.add_argument("--loo-bad-seeds", type=int, nargs="*", default=[0, 1, 2])
    parser.add_argument("--deepxde-seeds", type=int, nargs="*", default=[0, 1, 2])
    parser.add_argument("--deepxde-drift-seeds", type=int, nargs="*", default=[0])
    parser.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=list(PROBLEMS))
    parser.add_argument("--seeds-drift", type=int, nargs="*", default=None,
                        help="seeds of drift_diffusion_1d (default: --seeds)")
    parser.add_argument("--no-captum", action="store_true")
    parser.add_argument("--no-exact-timing", action="store_true")
    parser.add_argument("--partial-dir", default=None,
                        help="folder for per-task results (resumes: finished tasks are kept)")
    parser.add_argument("--note", default="", help="protocol note (e.g. what was reduced)")
    parser.add_argument("--collect-only", action="store_true",
                        help="assemble the finished tasks of --partial-dir, run nothing")
    parser.add_argument("--machine-note", default="",
                        help="a note on the machine during the run (e.g. its load average)")
    parser.add_argument("--task-file", default=None,
                        help="with --partial-dir: a file of task keys, re-read before each task "
                             "(run in its order; edit it to steer a long run)")
    parser.add_argument("--only", nargs="+", default=None,
                        help="task keys to run (e.g. case_heat_1d_good_0 deepxde_1 captum)")
    args = parser.parse_args(argv)
    quick = args.quick
    if quick:
        settings = dict(adam=100, lbfgs=0, solver="adam", seeds=[0], points=QUICK_POINTS,
                        arnoldi=(50, 20), diag_grid=15, loo_seeds=[], loo_bad_seeds=[],
                        deepxde_seeds=[], captum_arnoldi=(60, 20))
    else:
        points = {k: v for k, v in POINTS.items() if k[0] in args.problems}
        settings = dict(adam=args.adam, lbfgs=args.lbfgs, solver="adam+lbfgs", seeds=args.seeds,
                        seeds_drift=args.seeds if args.seeds_drift is None else args.seeds_drift,
                        points=points, arnoldi=(200, 50), diag_grid=50,
                        loo_seeds=args.loo_seeds, loo_bad_seeds=args.loo_bad_seeds,
                        deepxde_seeds=args.deepxde_seeds, captum_arnoldi=(60, 20),
                        deepxde_drift_seeds=args.deepxde_drift_seeds, note=args.note)
    # priority order: seed by seed, the good/bad pairs of each problem and the DeepXDE anchor,
    # then the influence anchors and timings, then leave-one-out (report-only), so that a
    # run stopped early keeps complete pairs
    names = list(dict.fromkeys(n for n, _ in settings["points"]))
    seeds_of = {n: settings["seeds_drift"] if n == "drift_diffusion_1d" else settings["seeds"]
                for n in names}
    tasks = []
    for seed in sorted({s for n in names for s in seeds_of[n]} | set(settings["deepxde_seeds"])):
        for name in names[::-1]:  # drift-diffusion first: its good configuration is the doubt
            if seed in seeds_of[name]:
                tasks += [("case", (name, "good", seed)), ("case", (name, "bad", seed))]
        if seed in settings["deepxde_seeds"]:
            tasks.append(("deepxde", (seed,)))
        if seed in settings.get("deepxde_drift_seeds", ()) and "drift_diffusion_1d" in names:
            tasks.append(("deepxde_drift", (seed,)))
    if not quick and not args.no_captum:
        tasks.append(("captum", ()))
    if not quick and not args.no_exact_timing:
        tasks.append(("exact_timing", ()))
    tasks += [("loo", (seed, "bad")) for seed in settings["loo_bad_seeds"]]
    tasks += [("loo", (seed, "good")) for seed in settings["loo_seeds"]]
    if args.only:
        tasks = [t for t in tasks if "_".join([t[0], *map(str, t[1])]) in args.only]
    partial = Path(args.partial_dir) if args.partial_dir else None
    if args.task_file and partial is None:
        parser.error("--task-file needs --partial-dir")
    if partial is not None:
        partial.mkdir(parents=True, exist_ok=True)

    def run(kind, task_args):
        key = "_".join([kind, *map(str, task_args)])
        if partial is not None and (partial / f"{key}.json").exists():
            return json.loads((partial / f"{key}.json").read_text())
        if args.collect_only:
            print(f"[pinnfluence] {key}: not finished, left out", flush=True)
            return []
        start = time.perf_counter()
        if kind == "case":
            result = [run_case(*task_args, settings)]
        elif kind == "loo":
            result = run_loo(*task_args, settings)
        elif kind == "deepxde":
            result = run_deepxde(*task_args, settings)
        elif kind == "deepxde_drift":
            result = run_deepxde_drift(*task_args, settings)
        elif kind == "captum":
            result = run_captum(settings)
        else:
            result = run_exact_timing(settings)
        print(f"[pinnfluence] {key}: {time.perf_counter() - start:.1f} s", flush=True)
        if partial is not None:
            (partial / f"{key}.json").write_text(json.dumps(result, default=float))
        return result

    if args.task_file:
        # steerable run: before each task, re-read the file and run its first unfinished key
        # (results kept in --partial-dir); then assemble every finished task of the protocol
        by_key = {"_".join([k, *map(str, a)]): (k, a) for k, a in tasks}
        tried = set()
        while True:
            wanted = [line.strip() for line in Path(args.task_file).read_text().splitlines()]
            todo = [k for k in wanted if k in by_key and k not in tried
                    and not (partial / f"{k}.json").exists()]
            if not todo:
                break
            tried.add(todo[0])
            run(*by_key[todo[0]])
        args.collect_only = True
        results = [run(k, a) for k, a in tasks]
    else:
        results = Parallel(n_jobs=args.n_jobs)(delayed(run)(k, a) for k, a in tasks)
    rows = [r for block in results for r in block]
    summary, _ = summarise(rows, settings["seeds"])
    rows += summary
    tg = targets(rows, summary, settings)
    for row in summary:
        sep = {True: "separates", False: "does not separate",
               None: "cannot be judged from one seed on whether it separates"}[
                   row["residual_map_separates"]]
        print(f"{row['dataset']}: the residual map alone {sep} the pair "
              f"(mean |residual| good/bad = {row['residual_mean_good_over_bad']:.3g}); "
              f"{row['n_diagnostics_same_direction']} of 3 diagnostics differ in the same "
              f"direction on every seed")
    notes = [
        "Influence sign: Inf ~ f(theta_-i) - f(theta) (effect of removing the point); H is the "
        "Hessian of the summed per-point loss, inverted on its top Arnoldi eigenvalues above "
        "1e-4 after damping 1e-3 (negative Ritz values are dropped).",
        "The residual map 'separates' a good/bad pair when the ranges over seeds of the mean "
        "|PDE residual| on the 100 x 100 grid do not overlap (null with a single seed).",
        "A diagnostic 'differs in the same direction' when good minus bad has one sign on every "
        "seed: PDE loss fraction, mean cancellation, mean directionality minus point share.",
        "Leave-one-out correlations are reported only: with three dropped points per seed on a "
        "non-convex network they are noisy, and the plain influence function is not the "
        "leave-one-out change even for a linear model.",
        "Seconds: wall time of one process with one torch thread on a machine shared with other "
        "jobs (timings are upper bounds).",
    ]
    notes += _outcome_notes(rows, summary)
    if args.machine_note:
        notes.append(args.machine_note)
    path = write_results("pinnfluence", rows, quick, args.output, targets=tg,
                         protocol=_protocol(settings, quick), notes=notes)
    print(markdown_table([r for r in rows if r.get("config") in ("good", "bad")
                          and r["method"] == METHOD and r["dataset"] in PROBLEMS],
                         ["dataset", "config", "seed", "relative_l2", "residual_mean",
                          "pde_fraction", "cancellation", "directionality_excess",
                          "fit_seconds", "influence_seconds"]))
    print(markdown_table(tg, ["target", "spec", "measured", "met"]))
    print(f"wrote {path}")
    return path


if __name__ == "__main__":
    main()
