"""AdamO vs Adam, AdamW, a coupled isometry penalty, a LayerNorm critic and a Polyak target.

Method: Qiao, Yue, Wang and Ren, "AdamO: A Collapse-Suppressed Optimizer for Offline RL",
ICML 2026, arXiv:2605.01968. The paper's D4RL data need MuJoCo and a download at run time, so
its published numbers cannot be reproduced here; the benchmark runs the package's offline
critic (``OfflineQRegressor``, DQN-style max backup) on locally generated pointmass data
(``make_offline_rl_dataset``: 10,000 transitions of a narrow behaviour policy, epsilon = 0.1,
gamma = 0.99, ``q_bound = 100``), a 256 x 256 ReLU critic, batch 256.

(1) Calibration: Adam on the grid lr in {1e-4, 3e-4, 1e-3} x target in {none, Polyak 0.005} x
behaviour in {narrow, uniform}, 2 seeds, 4,000 steps. A run "collapses" when max |Q| over a
batch exceeds 100 q_bound or is not finite.
(2) Comparison on the collapsing configuration (no target network, lr 1e-3, narrow data) and
on the stable one (Polyak target 0.005, lr 1e-3), 3 seeds each: Adam; AdamO with kappa = 1 and
tau in {0.05, 1, 100} and kappa = 0.5 with tau = 100; AdamW (weight decay 1e-2); Adam with the
coupled penalty lambda sum_W R(W), lambda = 1e-3; a LayerNorm critic with Adam and with AdamO
(kappa = 1, tau = 1). Diverged runs stop early. Reported: share diverged, steps to divergence,
final max|Q| / q_bound, final TD loss, greedy return (100 starts x 50 steps, discounted, beside
the behaviour and uniform policies), the share of runs where rho >= 1 or max Re lambda(S) > 0
was seen before divergence (and the same share in runs that did not diverge), mean budget
scale, seconds. (3) Timing: torch Adam (its default CPU loop), Adam with foreach=True and
AdamO (kappa = 1, tau = 0.05) alternately in one process, no diagnostics, 256 x 256 and
128 x 128 critics; the median ratio of CPU seconds per step.

``--regimes`` and ``--methods`` choose and order the parts, so that a run stopped by its time
budget leaves the most informative rows; ``--merge`` joins the runs of several result files,
``--timing-only`` adds the timing rows to an existing file. The protocol note of the result file
is written from the runs it holds and lists what was not run.

``--quick``: 1,000 transitions, a 32 x 32 critic, 1 seed, 80 steps, kappa in {0, 1}, the
collapsing configuration only.
"""

import json
import os
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning

from sklearn_icml26.datasets import make_offline_rl_dataset
from sklearn_icml26.metrics import evaluate_offline_rl_policy
from sklearn_icml26.optim import AdamO, OfflineQRegressor
from sklearn_icml26.utils._parallel import Parallel, delayed

from _common import (
    benchmark_parser,
    markdown_table,
    measure,
    target,
    write_results,
)

GAMMA = 0.99
PENALTY = 1e-3
CALIBRATION = [(lr, target, behaviour) for lr in (1e-4, 3e-4, 1e-3)
               for target in ("none", "polyak") for behaviour in ("narrow", "uniform")]


class _TrackedAdamO(AdamO):
    """AdamO that accumulates the mean budget scale over steps and blocks."""

    def step(self, closure=None):
        loss = super().step(closure)
        scales = [float(st["last_budget_scale"]) for st in self.state.values()
                  if "last_budget_scale" in st]
        if scales:
            self.scale_sum = getattr(self, "scale_sum", 0.0) + float(np.mean(scales))
            self.scale_n = getattr(self, "scale_n", 0) + 1
        return loss


def methods():
    """name -> (estimator class, extra parameters)."""
    adamo = lambda k, t: {"optimizer": _TrackedAdamO,  # noqa: E731
                          "optimizer_params": {"kappa": k, "tau": t}}
    return {
        "Adam": (OfflineQRegressor, {"optimizer": "adam"}),
        "AdamO k=1 tau=0.05": (OfflineQRegressor, adamo(1.0, 0.05)),
        "AdamO k=1 tau=1": (OfflineQRegressor, adamo(1.0, 1.0)),
        "AdamO k=1 tau=100": (OfflineQRegressor, adamo(1.0, 100.0)),
        "AdamO k=0.5 tau=100": (OfflineQRegressor, adamo(0.5, 100.0)),
        "AdamW wd=1e-2": (OfflineQRegressor, {"optimizer": "adamw",
                                              "optimizer_params": {"weight_decay": 1e-2}}),
        f"Adam + penalty lambda={PENALTY:g}": (OfflineQRegressor, {
            "optimizer": "adam", "orthogonality_penalty": PENALTY}),
        "LayerNorm + Adam": (OfflineQRegressor, {"optimizer": "adam", "layer_norm": True}),
        "LayerNorm + AdamO k=1 tau=1": (OfflineQRegressor, {**adamo(1.0, 1.0),
                                                            "layer_norm": True}),
    }


def run_one(dataset, method, cls, params, seed, cfg):
    """Fit one critic; the per-run record.

    Not an :class:`Arm` of ``run_arms``: the (regime, method, seed) runs go to parallel
    workers in a chosen order and resume from earlier result files, and ``summarise`` pools
    the seeds of a method into one row; each fit is timed by ``measure`` (wall) beside its
    process CPU time.
    """
    torch.set_num_threads(1)
    data = make_offline_rl_dataset(n_transitions=cfg["n_transitions"],
                                   behaviour=cfg.get("behaviour", "narrow"), epsilon=0.1,
                                   gamma=GAMMA, random_state=cfg.get("data_seed", 0))
    est = cls(gamma=GAMMA, hidden_layer_sizes=cfg["hidden"], target_update=cfg["target"],
              polyak_tau=0.005, lr=cfg["lr"], batch_size=256, max_iter=cfg["n_steps"],
              diagnose_every=cfg["diagnose_every"], diagnose_points=cfg["diagnose_points"],
              divergence_threshold=100.0, random_state=seed, **params)
    cpu = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        seconds = measure(est.fit, data.states, data.rewards, actions=data.actions,
                          next_states=data.next_states, terminals=data.terminals,
                          memory=None).seconds
    cpu = time.process_time() - cpu
    ret = evaluate_offline_rl_policy(est, n_episodes=100, horizon=50, gamma=GAMMA,
                                     random_state=1000)
    steps = est.diagnose_steps_
    end = est.divergence_step_ if est.diverged_ else est.n_iter_
    before = (steps > 0) & (steps < end)
    warn_seen = bool(np.any((est.rho_curve_[before] >= 1.0)
                            | (est.max_real_eig_curve_[before] > 0)))
    opt = est.optimizer_
    scale = (opt.scale_sum / opt.scale_n) if getattr(opt, "scale_n", 0) else None
    tail = np.asarray(est.loss_curve_)[-50:]
    return {"dataset": dataset, "method": method, "seed": seed,
            "diverged": bool(est.diverged_), "divergence_step": est.divergence_step_,
            "n_steps_run": int(est.n_iter_),
            "final_qmax_over_qbound": float(est.q_max_curve_[-1] / data.q_bound),
            "peak_qmax_over_qbound": float(est.q_max_curve_.max() / data.q_bound),
            "final_td_loss": float(np.mean(tail)), "greedy_return": ret,
            "warning_before_end": warn_seen,
            "rho_history": est.rho_curve_.tolist(),
            "max_real_eig_history": est.max_real_eig_curve_.tolist(),
            "diagnose_steps": steps.tolist(),
            "q_max_every_50": est.q_max_curve_[::50].tolist(),
            "mean_budget_scale": scale, "fit_seconds": seconds, "cpu_seconds": cpu,
            "cpu_seconds_per_step": cpu / max(int(est.n_iter_), 1),
            "load_average_1min": os.getloadavg()[0]}


def summarise(runs, q_bound):
    by = {}
    for r in runs:
        by.setdefault((r["dataset"], r["method"]), []).append(r)
    rows = []
    for (dataset, method), rs in by.items():
        div = [r for r in rs if r["diverged"]]
        stable = [r for r in rs if not r["diverged"]]
        scales = [r["mean_budget_scale"] for r in rs if r["mean_budget_scale"] is not None]
        rows.append({
            "dataset": dataset, "method": method, "n_seeds": len(rs),
            "diverged": f"{len(div)}/{len(rs)}",
            "share_diverged": len(div) / len(rs),
            "steps_to_divergence": [r["divergence_step"] for r in div] or None,
            "final_qmax_over_qbound": float(np.mean([r["final_qmax_over_qbound"]
                                                     for r in rs])),
            "final_td_loss": float(np.mean([r["final_td_loss"] for r in rs])),
            "greedy_return": float(np.mean([r["greedy_return"] for r in rs])),
            "greedy_return_per_seed": [r["greedy_return"] for r in rs],
            "warning_share_diverged": (float(np.mean([r["warning_before_end"] for r in div]))
                                       if div else None),
            "warning_share_stable": (float(np.mean([r["warning_before_end"] for r in stable]))
                                     if stable else None),
            "mean_budget_scale": float(np.mean(scales)) if scales else None,
            "fit_seconds": float(np.mean([r["fit_seconds"] for r in rs])),
            "cpu_seconds_per_step": float(np.mean([r["cpu_seconds_per_step"] for r in rs])),
            })
    return rows


TIMING_OPTIMIZERS = {
    "Adam": {"optimizer": "adam"},
    "Adam foreach": {"optimizer": torch.optim.Adam, "optimizer_params": {"foreach": True}},
    "AdamO": {"optimizer": "adamo", "optimizer_params": {"kappa": 1.0, "tau": 0.05}},
}


def timing(hidden, rounds=5, steps=100, n_transitions=10_000):
    """CPU seconds per step of Adam, Adam with foreach=True and AdamO, alternating rounds.

    One process, one torch thread, no diagnostics, Polyak target; the process CPU time, not
    wall time, because the machine is shared. The ratio of each round is AdamO's seconds over
    the same round's Adam seconds; the median over rounds is reported.
    """
    torch.set_num_threads(1)
    data = make_offline_rl_dataset(n_transitions=n_transitions, random_state=0)
    fit = dict(actions=data.actions, next_states=data.next_states)
    # warm-up: torch's first fit in a process pays one-time costs that are not the optimizer's
    for params in TIMING_OPTIMIZERS.values():
        OfflineQRegressor(hidden_layer_sizes=hidden, max_iter=20, diagnose_every=0,
                          random_state=0, **params).fit(data.states, data.rewards, **fit)
    per = {name: [] for name in TIMING_OPTIMIZERS}
    for _ in range(rounds):
        for name, params in TIMING_OPTIMIZERS.items():
            est = OfflineQRegressor(hidden_layer_sizes=hidden, target_update="polyak",
                                    max_iter=steps, diagnose_every=0, random_state=0, **params)
            start = time.process_time()
            est.fit(data.states, data.rewards, **fit)
            per[name].append((time.process_time() - start) / steps)
    adamo = np.array(per["AdamO"])
    ratio = adamo / np.array(per["Adam"])
    ratio_fe = adamo / np.array(per["Adam foreach"])
    return {"hidden": list(hidden), "rounds": rounds, "steps_per_round": steps,
            "adam_cpu_seconds_per_step": per["Adam"],
            "adam_foreach_cpu_seconds_per_step": per["Adam foreach"],
            "adamo_cpu_seconds_per_step": per["AdamO"],
            "ratio_median": float(np.median(ratio)), "ratio_min": float(ratio.min()),
            "ratio_max": float(ratio.max()),
            "ratio_vs_foreach_median": float(np.median(ratio_fe)),
            "load_average": list(os.getloadavg())}


COLLAPSE = "collapse (no target, lr 1e-3)"
STABLE = "stable (Polyak 0.005, lr 1e-3)"


def targets(summary, timings):
    out = []
    get = {(r["dataset"], r["method"]): r for r in summary}
    col, st = COLLAPSE, STABLE
    adam_c = get.get((col, "Adam"))
    if adam_c:
        winners = [r["method"] for r in summary if r["dataset"] == col
                   and r["method"].startswith("AdamO") and r["share_diverged"] == 0
                   and r["n_seeds"] == adam_c["n_seeds"]]
        out.append(target("collapse regime: some AdamO setting diverges in 0/3 seeds where "
                          "Adam diverges in 3/3",
                          "Adam 3/3, one AdamO setting 0/3",
                          f"Adam {adam_c['diverged']}; AdamO with 0 diverged: "
                          f"{winners or 'none'}",
                          bool(adam_c["share_diverged"] == 1 and winners)))
        d = get.get((col, "AdamO k=1 tau=0.05"))
        if d:
            out.append(target("collapse regime: the paper's default tau = 0.05 (kappa = 1) "
                              "stops the collapse",
                              "0/3 diverged",
                              d["diverged"],
                              bool(d["share_diverged"] == 0)))
    adam_s = get.get((st, "Adam"))
    if adam_s:
        for r in summary:
            if r["dataset"] == st and r["method"].startswith("AdamO"):
                rel = (r["greedy_return"] - adam_s["greedy_return"]) / abs(
                    adam_s["greedy_return"])
                out.append(target(f"stable regime: {r['method']} greedy return within 5% "
                                  "of Adam's",
                                  ">= -5%",
                                  f"{100 * rel:+.1f}% "
                                  f"({r['greedy_return']:.3f} vs {adam_s['greedy_return']:.3f})",
                                  bool(rel >= -0.05)))
    for tim in timings:
        size = " x ".join(map(str, tim["hidden"]))
        out.append(target(f"CPU time per step of AdamO (kappa = 1, tau = 0.05) <= 1.3x "
                          f"torch Adam's ({size} critic)",
                          "<= 1.3",
                          tim["ratio_median"],
                          bool(tim["ratio_median"] <= 1.3)))
    div = [r for r in summary if r["warning_share_diverged"] is not None]
    if div:
        n = sum(int(r["diverged"].split("/")[0]) for r in div)
        hits = sum(r["warning_share_diverged"] * int(r["diverged"].split("/")[0]) for r in div)
        out.append(target("rho >= 1 or max Re lambda(S) > 0 seen before divergence",
                          ">= 80% of diverging runs",
                          f"{hits:.0f}/{n} = {hits / n:.0%}",
                          bool(hits / n >= 0.8)))
    return out


def _fmt_row(r):
    return (f"diverged {r['diverged']}, greedy return {r['greedy_return']:.3f} "
            f"(seeds {', '.join(f'{x:.3f}' for x in r['greedy_return_per_seed'])}), "
            f"final max|Q|/q_bound {r['final_qmax_over_qbound']:.3g}")


def findings(summary):
    """Sentences with the numbers behind the questions the benchmark asks."""
    get = {(r["dataset"], r["method"]): r for r in summary}
    out = []
    for regime in (COLLAPSE, STABLE):
        for name in ("Adam", "AdamO k=1 tau=0.05", "AdamO k=1 tau=1", "LayerNorm + Adam",
                     "LayerNorm + AdamO k=1 tau=1"):
            r = get.get((regime, name))
            if r:
                scale = ("" if r["mean_budget_scale"] is None
                         else f", mean budget scale {r['mean_budget_scale']:.2f}")
                out.append(f"{regime} | {name}: {_fmt_row(r)}{scale}.")
    return out


def _compare(base, other):
    """How ``other`` differs from ``base``: divergences and mean greedy return."""
    d0, d1 = base["share_diverged"], other["share_diverged"]
    r0, r1 = base["greedy_return"], other["greedy_return"]
    rel = (r1 - r0) / abs(r0) if r0 else float("nan")
    div = ("fewer divergences" if d1 < d0 else "more divergences" if d1 > d0
           else "the same divergences")
    ret = f"mean greedy return {r1:.3f} vs {r0:.3f} ({100 * rel:+.0f}%)"
    return div, rel, ret


def verdicts(summary):
    """Plain answers to the benchmark's questions, each with the numbers it rests on."""
    get = {(r["dataset"], r["method"]): r for r in summary}
    out = []
    adam_c, d05 = get.get((COLLAPSE, "Adam")), get.get((COLLAPSE, "AdamO k=1 tau=0.05"))
    if adam_c and d05:
        helps = d05["share_diverged"] < adam_c["share_diverged"]
        out.append(f"Does the paper's tau = 0.05 stop the collapse? {'Yes' if helps else 'No'}: "
                   f"without a target network AdamO kappa=1 tau=0.05 diverged in "
                   f"{d05['diverged']} seeds (Adam {adam_c['diverged']}), at steps "
                   f"{d05['steps_to_divergence']} (Adam {adam_c['steps_to_divergence']}); "
                   f"the budget kept on average {d05['mean_budget_scale']:.2f} of the "
                   "correction.")
    for regime, label in ((COLLAPSE, "a LayerNorm critic without a target network"),
                          (STABLE, "a LayerNorm critic with a Polyak target")):
        ln, lno = get.get((regime, "LayerNorm + Adam")), get.get(
            (regime, "LayerNorm + AdamO k=1 tau=1"))
        if ln and lno:
            div, rel, ret = _compare(ln, lno)
            adds = lno["share_diverged"] < ln["share_diverged"] or rel > 0.05
            out.append(f"Does AdamO (kappa=1, tau=1) add anything to {label}? "
                       f"{'Yes' if adds else 'No'}: {div} ({lno['diverged']} vs "
                       f"{ln['diverged']}), {ret}.")
    adam_s = get.get((STABLE, "Adam"))
    if adam_s:
        for name in ("AdamO k=1 tau=0.05", "AdamO k=1 tau=1", "AdamO k=1 tau=100",
                     "AdamO k=0.5 tau=100"):
            r = get.get((STABLE, name))
            if r:
                div, rel, ret = _compare(adam_s, r)
                adds = r["share_diverged"] < adam_s["share_diverged"] or rel > 0.05
                out.append(f"Does {name} add anything to a Polyak target? "
                           f"{'Yes' if adds else 'No'}: {div} ({r['diverged']} vs "
                           f"{adam_s['diverged']}), {ret}.")
    if out:
        out.append("('Adds' means fewer divergences or a mean greedy return more than 5% "
                   "higher; with 3 seeds and the seed-to-seed spread in greedy_return_per_seed, "
                   "a return difference is a measurement, not a significance test.)")
    return out


def describe_protocol(runs, args, quick):
    """What was run, from the run records themselves (so a run stopped early says so)."""
    seeds = sorted({r["seed"] for r in runs if not r["dataset"].startswith("calibration")})
    hidden = " x ".join(map(str, args.hidden)) if not quick else "32 x 32"
    text = ("QUICK: " if quick else "") + (
        f"pointmass, {1000 if quick else 10_000} transitions, narrow behaviour (epsilon 0.1), "
        f"gamma {GAMMA}, critic {hidden} (ReLU), batch 256, lr 1e-3, seeds {seeds}. Collapse "
        f"regime: no target network, {80 if quick else args.steps_collapse} steps; stable "
        f"regime: Polyak target 0.005, {args.steps_stable} steps. Divergence: max|Q| over a "
        "batch > 100 q_bound or not finite; diverged runs stop. Diagnostics "
        "(td_spectral_radius on 16 fixed probe transitions of the online network) every 50 "
        "steps (collapse) or 100 steps (stable, calibration).")
    if quick:
        return text
    counts = {}
    for r in runs:
        counts.setdefault((r["dataset"], r["method"]), set()).add(r["seed"])
    missing = []
    for regime in (COLLAPSE, STABLE):
        for name in methods():
            got = len(counts.get((regime, name), ()))
            if got < len(args.seeds):
                missing.append(f"{regime.split(' ')[0]}: {name} ({got}/{len(args.seeds)} seeds)")
    calib_done = sorted(d for d, _ in counts if d.startswith("calibration"))
    n_cells = len(CALIBRATION)
    if not missing and len(calib_done) == n_cells:
        return "FULL protocol: " + text
    return ("REDUCED protocol: " + text + " The runs went in order of what they answer (the "
            "cheap collapsing baselines, then seed by seed Adam and AdamO with a Polyak target, "
            "AdamO tau=1 and the LayerNorm critics without one) until the CPU time available "
            "on a 2-core machine shared with other jobs ran out. Not run: "
            + ("; ".join(missing) if missing else "no comparison row")
            + f". Calibration grid (Adam, lr x target x behaviour, {args.steps_calibration} "
            f"steps): {len(calib_done)} of {n_cells} cells run"
            + (f" ({', '.join(c.removeprefix('calibration ') for c in calib_done)})"
               if calib_done else "")
            + "; the collapsing configuration (no target, lr 1e-3, narrow) and the stable one "
            "(Polyak 0.005, lr 1e-3, narrow) are the comparison's own Adam rows.")


NOTES = [
    "greedy_return: mean discounted return (gamma 0.99) of argmax_a Q over 100 uniform "
    "starts x 50 steps, the same starts and noise for every critic.",
    "warning_share_*: share of runs in which a diagnostic strictly between step 0 and the "
    "divergence (or the end) showed rho(A) >= 1 or max Re lambda(S) > 0; the share in the "
    "runs that did not diverge says how specific the warning is.",
    "mean_budget_scale: the budget's factor on delta_0 averaged over blocks and steps "
    "(1 = correction kept whole).",
    "fit_seconds: wall time of the fit including diagnostics, one torch thread per run, on 2 "
    "cores shared with other jobs; cpu_seconds_per_step is the process CPU time per step "
    "(diagnostics and the benchmark's budget bookkeeping included). The timing rows measure "
    "CPU seconds per step of torch Adam (its default single-tensor loop on the CPU), Adam "
    "with foreach=True and AdamO (kappa = 1, tau = 0.05) alternately in one process, without "
    "diagnostics (Polyak target, after a warm-up fit of each, rounds of 100 steps).",
    "The paper's published D4RL numbers (TD3+BC, IQL, ReBRAC, PARS) cannot be "
    "reproduced: D4RL needs MuJoCo and a run-time download.",
    "Not searched (CPU budget): a regime in which Adam with a target network underperforms "
    "(longer horizons gamma 0.995-0.999, larger learning rates, sparser rewards, narrower "
    "data); the paper's return gains with target networks are neither confirmed nor refuted "
    "here.",
]


def assemble(runs, timings, args, quick, extra_notes=()):
    """Rows, targets, protocol and notes of the result file from the run records."""
    summary = summarise(runs, 1.0 / (1 - GAMMA))
    anchors = [{"dataset": "policies", "method": name,
                "greedy_return": evaluate_offline_rl_policy(
                    name, n_episodes=100, horizon=50, gamma=GAMMA, random_state=1000),
                "fit_seconds": 0.0}
               for name in ("behaviour", "uniform")]
    timing_rows = [{"dataset": f"timing {' x '.join(map(str, t['hidden']))} (Polyak, no "
                               "diagnostics)", "method": "AdamO / Adam", **t,
                    "fit_seconds": float(np.sum(t["adamo_cpu_seconds_per_step"])
                                         * t["steps_per_round"])} for t in timings]
    notes = (NOTES + verdicts(summary) + ["Findings: " + " ".join(findings(summary))]
             + list(extra_notes))
    return dict(rows=summary + anchors + timing_rows, targets=targets(summary, timings),
                protocol=describe_protocol(runs, args, quick), notes=notes)


def _write(path, runs, timings, args, quick, extra_notes=()):
    parts = assemble(runs, timings, args, quick, extra_notes)
    path = write_results("adamo", parts["rows"], quick, path, targets=parts["targets"],
                         protocol=parts["protocol"], notes=parts["notes"])
    # the per-run records (histories included) go to a "runs" entry of the same file
    payload = json.loads(Path(path).read_text())
    payload["runs"] = runs
    loads = [r["load_average_1min"] for r in runs if r.get("load_average_1min") is not None]
    loads += [x for t in timings for x in t.get("load_average", [])[:1]]
    if loads:
        payload["machine"]["note"] = (
            f"{payload['machine']['cpu_count']} CPUs shared with other engineers' jobs; 1-minute "
            f"load average at the end of each run {min(loads):.1f}-{max(loads):.1f} (median "
            f"{float(np.median(loads)):.1f}), so wall seconds are inflated; CPU seconds per "
            "step are the process's own.")
    if timings:
        payload["timings"] = timings
    Path(path).write_text(json.dumps(payload, indent=2, default=float) + "\n")
    return path, parts


def main(argv=None):
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2])
    parser.add_argument("--steps-collapse", type=int, default=5000)
    parser.add_argument("--steps-stable", type=int, default=5000)
    parser.add_argument("--steps-calibration", type=int, default=4000)
    parser.add_argument("--calibration-seeds", type=int, nargs="*", default=[0, 1])
    parser.add_argument("--calibration-targets", nargs="*", default=["none", "polyak"],
                        help="target updates of the calibration grid to run")
    parser.add_argument("--hidden", type=int, nargs="*", default=[256, 256])
    parser.add_argument("--regimes", nargs="*", default=["collapse", "stable", "calibration"],
                        help="parts to run, in this order")
    parser.add_argument("--methods", nargs="*", default=None,
                        help="comparison methods to run, in this order (default: all)")
    parser.add_argument("--order", nargs="*", default=None,
                        help="'collapse:<method>[@seeds]' / 'stable:<method>[@seeds]' / "
                             "'calibration' items in run order (overrides --regimes and "
                             "--methods); '@0,2' runs seeds 0 and 2 of that item only")
    parser.add_argument("--resume", default=None,
                        help="result file whose runs are skipped here (join them with --merge)")
    parser.add_argument("--no-timing", action="store_true",
                        help="skip the timing pass (per-step CPU of the runs stays)")
    parser.add_argument("--timing-only", action="store_true",
                        help="measure the timing rows only and merge them into --output")
    parser.add_argument("--timing-hidden", type=int, nargs="*", default=[256, 128],
                        help="critic widths (two layers each) of the timing pass")
    parser.add_argument("--merge", nargs="*", default=None,
                        help="result files whose runs and timings are merged into --output")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - start:7.1f} s] {msg}", flush=True)

    def run_timing():
        out = []
        for width in args.timing_hidden:
            out.append(timing((width, width)))
            log(f"timing {width} x {width}: AdamO / Adam CPU seconds per step median "
                f"{out[-1]['ratio_median']:.3f} (vs Adam foreach "
                f"{out[-1]['ratio_vs_foreach_median']:.3f})")
        return out

    if args.merge is not None or args.timing_only:
        sources = list(args.merge or []) + ([args.output] if args.timing_only else [])
        runs, timings, seen = [], [], set()
        for src in sources:
            payload = json.loads(Path(src).read_text())
            for r in payload.get("runs", []):
                key = (r["dataset"], r["method"], r["seed"])
                if key not in seen:
                    seen.add(key)
                    runs.append(r)
            timings = payload.get("timings", timings)
        if args.timing_only:
            timings = run_timing()
        path, parts = _write(args.output, runs, timings, args, False)
        print(markdown_table(parts["targets"], ["target", "spec", "measured", "met"]))
        print(f"\nwrote {path}")
        return

    all_methods = methods()
    if args.quick:
        base = {"n_transitions": 1000, "hidden": (32, 32), "lr": 1e-3}
        cfg = {**base, "target": "none", "n_steps": 80, "diagnose_every": 40,
               "diagnose_points": 8}
        jobs = [(COLLAPSE, "AdamO k=0 (Adam)", OfflineQRegressor,
                 {"optimizer": "adamo", "optimizer_params": {"kappa": 0.0}}, 0, cfg),
                (COLLAPSE, "AdamO k=1 tau=1", *all_methods["AdamO k=1 tau=1"], 0, cfg)]
    else:
        base = {"n_transitions": 10_000, "hidden": tuple(args.hidden), "lr": 1e-3}
        calib = [(f"calibration lr={lr:g} target={tgt} behaviour={beh}", "Adam",
                  OfflineQRegressor, {"optimizer": "adam"}, s,
                  {**base, "lr": lr, "target": tgt, "behaviour": beh,
                   "n_steps": args.steps_calibration, "diagnose_every": 100,
                   "diagnose_points": 16})
                 for lr, tgt, beh in CALIBRATION if tgt in args.calibration_targets
                 for s in args.calibration_seeds]
        names = list(all_methods) if args.methods is None else args.methods
        cfgs = {COLLAPSE: {**base, "target": "none", "n_steps": args.steps_collapse,
                           "diagnose_every": 50, "diagnose_points": 16},
                STABLE: {**base, "target": "polyak", "n_steps": args.steps_stable,
                         "diagnose_every": 100, "diagnose_points": 16}}
        order = args.order or [part if part == "calibration" else f"{part}:{name}"
                               for part in args.regimes
                               for name in (names if part != "calibration" else [None])]
        jobs = []
        for item in order:
            if item == "calibration":
                jobs += calib
                continue
            part, name = item.split(":", 1)
            name, _, only = name.partition("@")  # "<method>@0,2": these seeds only
            item_seeds = [int(x) for x in only.split(",")] if only else args.seeds
            regime = {"collapse": COLLAPSE, "stable": STABLE}[part]
            jobs += [(regime, name, *all_methods[name], s, cfgs[regime]) for s in item_seeds]
    if args.resume:
        done = {(r["dataset"], r["method"], r["seed"])
                for r in json.loads(Path(args.resume).read_text()).get("runs", [])}
        jobs = [j for j in jobs if (j[0], j[1], j[4]) not in done]
    timings = [] if args.quick or args.no_timing else run_timing()
    runs, path, parts = [], None, None
    par = Parallel(n_jobs=args.n_jobs, return_as="generator_unordered")
    for rec in par(delayed(run_one)(*job) for job in jobs):
        runs.append(rec)
        log(f"{rec['dataset']} | {rec['method']} seed {rec['seed']}: diverged "
            f"{rec['diverged']} at {rec['divergence_step']}, qmax/qb "
            f"{rec['final_qmax_over_qbound']:.3g}, return {rec['greedy_return']:.3f}, "
            f"{rec['fit_seconds']:.0f} s")
        path, parts = _write(args.output, runs, timings, args, args.quick)
    print(markdown_table(parts["rows"], ["dataset", "method", "diverged",
                                         "final_qmax_over_qbound", "final_td_loss",
                                         "greedy_return", "warning_share_diverged",
                                         "warning_share_stable", "mean_budget_scale",
                                         "fit_seconds"], floatfmt=".3g"))
    print()
    print(markdown_table(parts["targets"], ["target", "spec", "measured", "met"]))
    print(f"\nwrote {path} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
