"""SkewD on the cause-effect benchmarks: accuracy / AUDRC beside its anchors, and seconds per pair.

Protocol: Tübingen (99 pairs, weighted), SIM, SIM-c, SIM-ln,
AN, LS, MN-U (100 pairs each) and ten regenerated skew sets {ANs, LSs} x {SN medium, SN strong,
AGN medium, AGN strong, AGN extreme} (``make_lsnm_pairs``, 1000 samples per pair,
``random_state = 752 + set index``). Rows: SkewD-IT / -LL / -LL-KDE (one ``all_scores=True``
run per set), the Gaussian ablation (``noise="gaussian"``: LOCI-like IT and LL), the baselines'
published per-pair scores (QCCD, GRCI, CAM, IGCI, IGCI_G, RESIT from ``baseline_scores``,
restricted to the same pairs), the published SkewD / LOCI / ROCHE numbers (Klippert & Marx,
arXiv:2511.14441) and, with ``--live-anchors``, causal-learn's ANM (GP + HSIC) on a 500-point
subsample. A subset of pairs per set (``--max-pairs``, ``--skew-pairs``) keeps a run within a
wall-clock budget; the result file records the number of pairs of every row.

    python benchmarks/bench_skewd.py --quick            # seconds (CI)
    python benchmarks/bench_skewd.py --n-jobs 2         # the committed results/skewd.json

``--study`` (results/skewd_anchors.json) compares, on every pair subsampled to at most 1000
rows, SkewD-IT with uniform and quantile knots, the anchors a user can install beside the
package (benchmark-only, never dependencies: ``pip install --no-deps cdt lingam`` plus the
pure-Python modules they import, ``GPUtil semopy pygam progressbar2 python-utils psy
autograd``; causal-learn comes with the ``causal`` extra), the authors' Bayesian penalty
search on SIM-ln, and the calibration of the direction p-values on pairs without a preferred
direction. It runs in time-boxed parts (``--parts``, ``--budget-s``, ``--set-budget-s``)
whose files ``--merge`` joins:

    python benchmarks/bench_skewd.py --study --parts sets --sets SIM-ln --output a.json
    python benchmarks/bench_skewd.py --study --parts bayes,calibration --output b.json
    python benchmarks/bench_skewd.py --merge a.json b.json
"""

import sys
import time
import warnings

import numpy as np
from sklearn.base import clone

from sklearn_icml26.causal_discovery import SkewDCausalDiscoverer, score_pairs
from sklearn_icml26.datasets import (
    load_cause_effect_baseline_scores,
    load_cause_effect_pairs,
    make_lsnm_pairs,
)
from sklearn_icml26.metrics import audrc, weighted_accuracy

from _common import (
    benchmark_parser,
    markdown_table,
    measure,
    target,
    write_results,
)

STANDARD = ["tuebingen", "SIM", "SIM-c", "SIM-ln", "AN", "LS", "MN-U"]
SKEW = [(model, noise, level) for model in ("AN", "LS")
        for noise, level in [("skew-normal", "medium"), ("skew-normal", "strong"),
                             ("agn", "medium"), ("agn", "strong"), ("agn", "extreme")]]
BASELINES = ["QCCD", "GRCI", "CAM", "IGCI", "IGCI_G", "RESIT"]

# Published accuracy / AUDRC (x100) on the full standard sets (arXiv:2511.14441)
PUBLISHED = {
    "SkewD-IT": [(66.6, 69.7), (78, 90.4), (82, 93.8), (86, 96.8), (100, 100), (87, 93.7),
                 (88, 97.8)],
    "SkewD-LL": [(46.0, 54.6), (54, 64.6), (51, 64.3), (81, 94.6), (100, 100), (100, 100),
                 (87, 97.6)],
    "SkewD-LL-KDE": [(64, 64), (76, 89), (69, 87), (85, 97), (100, 100), (100, 100),
                     (68, 78)],
    "LOCI-LL": [(53, 67), (49, 60), (50, 64), (80, 95), (100, 100), (100, 100), (100, 100)],
    "LOCI-IT": [(61, 60), (78, 89), (82, 93), (73, 86), (100, 100), (94, 99), (100, 100)],
    "ROCHE": [(77, 75), (78, 87), (82, 94), (77, 89), (100, 100), (100, 100), (100, 100)],
}
# skew sets, accuracy x100: SkewD-IT / SkewD-LL / LOCI-IT / LOCI-LL
PUBLISHED_SKEW = {
    "ANs_SN_medium": (97, 100, 100, 100), "ANs_SN_strong": (95, 100, 100, 100),
    "ANs_AGN_medium": (100, 100, 99, 100), "ANs_AGN_strong": (100, 100, 99, 99),
    "ANs_AGN_extreme": (100, 100, 98, 83), "LSs_SN_medium": (88, 100, 66, 100),
    "LSs_SN_strong": (73, 100, 56, 98), "LSs_AGN_medium": (84, 100, 78, 100),
    "LSs_AGN_strong": (92, 100, 82, 94), "LSs_AGN_extreme": (92, 100, 75, 66),
}


# per-pair diagnosis of the SIM-ln miss (separate study, same defaults and seeds, all 100 pairs)
SIM_LN_DIAGNOSIS = (
    "SIM-ln diagnosis (per pair, separate study with the same defaults and seeds): every piece "
    "was checked against the paper's formulas. The block HSIC equals the dense trace(KHLH) with "
    "median-heuristic kernels (rel. 1e-9). The fits are optima: pure ECM (3000 steps, tol "
    "1e-12) and L-BFGS-B reach the default fit's penalised NLL to <= 0.03 on the 15 wrong pairs "
    "inspected (lambda-hat to 1e-3 except one flat profile, pair 56: 0.12 vs 0.17 at equal "
    "NLL). Data are standardised with ddof 0 like the authors'. 18 of the 25 wrong pairs are "
    "near-ties, abs(S) < 0.2 max(HSIC), both directions' residuals at the HSIC null level (about "
    "70-460 at n = 1000); the right decisions carry the large scores (AUDRC 0.94). The penalty "
    "selection only moves such ties: 'none' (alpha = kappa = 1) 0.78, 'cv' 0.79, a 9-point "
    "'tic' grid 0.76, no restarts 0.75, each flipping 2-6 near-tie pairs both ways; the "
    "Gaussian ablation gives 0.75 (published LOCI-IT 0.73). The two clear misses (pairs 15, "
    "66: the causal direction's HSIC is 2.3x the reverse) have causes whose mass sits in one "
    "or two of the 12 uniform knot intervals (the method's and the authors' "
    "SplineTransformer), so f is under-resolved where the data are. No deviation from the "
    "method or numerical fault was found, and no default was changed. The published 0.86 "
    "used the authors' BO + CMA-ES + ECM procedure; "
    "their CMA-ES accepts only candidates with a non-negative penalised NLL, so on low-noise "
    "SIM-ln (optima -1400 to -3300) the CMA-ES fits that drive their CV penalty search and start "
    "their ECM are far from the optimum, a behaviour this implementation does not adopt."
)


def _anm_scores(pairs, seed=0):  # pragma: no cover - optional live anchor
    from causallearn.search.FCMBased.ANM.ANM import ANM

    rng = np.random.RandomState(seed)
    out = []
    for P in pairs:
        idx = rng.choice(len(P), min(500, len(P)), replace=False)
        x, y = P[idx, :1], P[idx, 1:]
        p_fwd, p_bwd = ANM().cause_or_effect(x, y)
        out.append(np.log(max(p_fwd, 1e-300)) - np.log(max(p_bwd, 1e-300)))
    return np.array(out)


# --------------------------------------------------------------------------------------------
# study (--study): uniform vs quantile knots, installable anchors on the same pairs, the
# authors' Bayesian penalty search on SIM-ln, and the calibration of the direction p-values
# --------------------------------------------------------------------------------------------
STUDY_ORDER = ["SIM-ln", "tuebingen", "SIM", "SIM-c", "AN", "LS", "MN-U"]
FAST_ANCHORS = ["cdt.RECI", "cdt.IGCI", "cdt.CDS", "lingam.DirectLiNGAM"]
SLOW_ANCHORS = ["lingam.RESIT (GP)", "causallearn.ANM"]


def _subsample(P, max_rows, seed):
    """A seeded subsample of at most ``max_rows`` rows (row order kept)."""
    if len(P) <= max_rows:
        return P
    idx = np.sort(np.random.RandomState(seed).choice(len(P), max_rows, replace=False))
    return P[idx]


def _anchor_score(method, P, seed):  # pragma: no cover - optional benchmark-only packages
    """Signed score (> 0: column 0 causes column 1; 0: no decision) of an installable anchor."""
    x, y = P[:, 0], P[:, 1]
    if method.startswith("cdt."):
        from cdt.causality.pairwise import CDS, IGCI, RECI

        model = {"cdt.RECI": RECI, "cdt.IGCI": IGCI, "cdt.CDS": CDS}[method]()
        return float(model.predict_proba((x, y)))
    if method == "lingam.DirectLiNGAM":
        import lingam

        B = lingam.DirectLiNGAM(random_state=seed).fit(P).adjacency_matrix_
        # decision only: the orientation of the kept edge (none kept: no decision)
        return float(np.sign(abs(B[1, 0]) - abs(B[0, 1])))
    if method == "lingam.RESIT (GP)":
        import lingam
        from sklearn.gaussian_process import GaussianProcessRegressor

        B = lingam.RESIT(regressor=GaussianProcessRegressor(), random_state=seed).fit(
            P).adjacency_matrix_
        return float(np.sign(abs(B[1, 0]) - abs(B[0, 1])))
    if method == "causallearn.ANM":
        from causallearn.search.FCMBased.ANM.ANM import ANM

        p_fwd, p_bwd = ANM().cause_or_effect(P[:, :1], P[:, 1:])
        return float(np.log(max(p_fwd, 1e-300)) - np.log(max(p_bwd, 1e-300)))
    raise ValueError(method)


def _anchor_pair(method, Q):
    """An anchor's score of one pair, or the exception of a failed fit (ImportError raises)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _anchor_score(method, Q, seed=0)
    except ImportError:
        raise
    except Exception as exc:  # noqa: BLE001 - the caller records a pair without decision
        return exc


def _method_row(base, direction, score, weight, seconds, decision_only=False, **extra):
    score = np.asarray(score, dtype=float)
    undecided = ~np.isfinite(score) | (score == 0)
    row = {**base, "n_pairs": int(score.size),
           "accuracy": weighted_accuracy(direction, np.where(undecided, 0.0, score),
                                         sample_weight=weight),
           "audrc": (None if decision_only else
                     audrc(direction, np.where(undecided, 0.0, score), sample_weight=weight)),
           "n_no_decision": int(undecided.sum()),
           "median_s_per_pair": float(np.median(seconds)),
           "mean_s_per_pair": float(np.mean(seconds)), **extra}
    return row


def _pvalue_summary(direction, score, pvalues):
    p = np.asarray(pvalues, dtype=float)
    correct = np.sign(score) == direction
    small = p < 0.05
    return {"share_p_below_0.05": float(np.mean(small)),
            "accuracy_p_below_0.05": float(np.mean(correct[small])) if small.any() else None,
            "accuracy_p_above_0.05": float(np.mean(correct[~small])) if (~small).any()
            else None}


def _study_pairs(name, data, k, args):
    idx = range(min(k, len(data.pairs)))
    pairs = [_subsample(np.asarray(data.pairs[i]), args.max_rows, i) for i in idx]
    direction, weight = data.direction[:len(pairs)], data.weight[:len(pairs)]
    base = {"dataset": name if len(pairs) == len(data.pairs) else f"{name}[:{len(pairs)}]",
            "median_n_samples": int(np.median([len(P) for P in pairs]))}
    return pairs, direction, weight, base


def _study_set(name, data, k, args, deadline, log, anchors=None):
    """Rows of one standard set: SkewD uniform vs quantile and the anchors on the same pairs.

    SkewD runs in chunks of 10 pairs (uniform, then quantile knots on the same chunk) until
    ``deadline`` minus ``--anchor-reserve-s``; the anchors then run on the pairs done.
    """
    pairs, direction, weight, base = _study_pairs(name, data, k, args)
    rows, per_pair = [], {}
    if anchors is None:
        stop = deadline - args.anchor_reserve_s
        res = {"uniform": [], "quantile": []}
        done = 0
        while done < len(pairs) and time.perf_counter() < stop:
            chunk = pairs[done:done + 10]
            for knots in ("uniform", "quantile"):
                n_boot = args.n_bootstrap if knots == "uniform" and name in (
                    args.pvalue_sets.split(",")) else 0
                est = SkewDCausalDiscoverer(knots=knots, n_bootstrap=n_boot, random_state=0)
                res[knots].append(score_pairs(chunk, estimator=est, n_jobs=args.n_jobs))
            done += len(chunk)
            log(f"{name}: SkewD-IT uniform and quantile knots, {done} of {len(pairs)} pairs")
        pairs, direction, weight = pairs[:done], direction[:done], weight[:done]
        if done < k and done < len(data.pairs):
            base = {**base, "dataset": f"{name}[:{done}]"}
        for knots, chunks in res.items():
            if not chunks:
                continue
            r = {key: np.concatenate([c[key] for c in chunks]) for key in chunks[0]}
            label = f"SkewD-IT ({knots} knots)"
            with_p = np.isfinite(r["pvalue_it"]).any()
            extra = _pvalue_summary(direction, r["score"], r["pvalue_it"]) if with_p else {}
            rows.append(_method_row({**base, "method": label}, direction, r["score"], weight,
                                    r["fit_time"], n_warnings=int(r["n_warnings"].sum()),
                                    **extra))
            per_pair[label] = r["score"].tolist()
            per_pair[label + " p"] = r["pvalue_it"].tolist()
    per_pair.update(direction=direction.tolist(), weight=weight.tolist())
    for method in FAST_ANCHORS if anchors is None else anchors:
        slow = method in SLOW_ANCHORS
        scores, seconds = [], []
        try:
            for i, P in enumerate(pairs):
                if slow and time.perf_counter() > deadline:
                    break
                Q = _subsample(P, args.slow_rows, i) if slow else P
                t = measure(_anchor_pair, method, Q, memory=None)
                if isinstance(t.result, Exception):  # a failed fit is a pair without decision
                    log(f"{name} pair {i}: {method} failed: {type(t.result).__name__}: "
                        f"{t.result}")
                scores.append(np.nan if isinstance(t.result, Exception) else t.result)
                seconds.append(t.seconds)
        except ImportError as exc:
            log(f"{method} not installed ({exc}): no row")
            continue
        m = len(scores)
        if not m:
            continue
        label = base["dataset"] if m == len(pairs) else f"{name}[:{m}]"
        rows.append(_method_row(
            {**base, "dataset": label, "method": method}, direction[:m], scores, weight[:m],
            seconds,
            decision_only=method in ("lingam.DirectLiNGAM", "lingam.RESIT (GP)"),
            **({"rows_per_pair": f"<= {args.slow_rows}"} if slow else {})))
        per_pair[method] = [float(v) for v in scores]
        log(f"{name}: {method} done ({m} pairs)")
    return rows, per_pair


def _bayes_study(data, args, deadline, log):
    """The authors' Bayesian penalty search beside the default TIC search on SIM-ln.

    Pairs run in chunks of ``--n-jobs`` (``score_pairs`` with one worker per pair, one thread
    each). With ``--resume FILE`` the per-pair scores and seconds are written to FILE after
    every chunk, and an invocation with the same FILE continues after the pairs it holds, so
    the study can be spread over several time budgets.
    """
    import json
    from pathlib import Path

    from joblib import effective_n_jobs

    fast = SkewDCausalDiscoverer(random_state=0)
    bayes = SkewDCausalDiscoverer(random_state=0, estimator={
        "penalty_search": "bayes", "cv": 8, "n_calls": 60, "n_initial_points": 40})
    keys = ("fast", "bayes", "fast_s", "bayes_s")
    out = {key: [] for key in keys}
    state = Path(args.resume) if args.resume else None
    if state is not None and state.exists():
        out = {key: list(json.loads(state.read_text())["bayes"][key]) for key in keys}
        log(f"SIM-ln bayes: resuming after {len(out['bayes'])} pairs from {state}")
    step = max(1, effective_n_jobs(args.n_jobs))
    while len(out["bayes"]) < len(data.pairs) and time.perf_counter() < deadline:
        first = len(out["bayes"])
        chunk = data.pairs[first:first + step]
        for key, est in (("bayes", bayes), ("fast", fast)):
            r = score_pairs(chunk, estimator=est, n_jobs=args.n_jobs)
            out[key] += [float(v) for v in r.score]
            out[key + "_s"] += [float(v) for v in r.fit_time]
        for i in range(first, len(out["bayes"])):
            log(f"SIM-ln pair {i}: bayes {out['bayes'][i]:+.3g} ({out['bayes_s'][i]:.0f} s), "
                f"default {out['fast'][i]:+.3g} ({out['fast_s'][i]:.1f} s)")
        if state is not None:
            state.write_text(json.dumps({"bayes": out, "n_jobs": step}))
    m = len(out["bayes"])
    if not m:
        return []
    direction, weight = data.direction[:m], data.weight[:m]
    label = "SIM-ln" if m == len(data.pairs) else f"SIM-ln[:{m}]"
    base = {"dataset": label, "median_n_samples": 1000}
    return [
        _method_row({**base, "method": "SkewD-IT default (tic)"}, direction, out["fast"],
                    weight, out["fast_s"]),
        _method_row({**base, "method": "SkewD-IT bayes (authors' search: GP-EI, 60 calls, "
                     "40 LHS, 8 folds)"}, direction, out["bayes"], weight, out["bayes_s"]),
    ]


def _null_pairs(n_pairs, n_samples, seed):
    """Pairs without a preferred direction: (family, X) with both residuals independent."""
    rng = np.random.RandomState(seed)
    marg = [rng.randn, lambda m: rng.exponential(size=m), lambda m: rng.lognormal(0, 0.5, m),
            lambda m: rng.uniform(-1, 1, m)]
    out = []
    for k in range(n_pairs):
        x = rng.randn(n_samples)
        out.append(("linear Gaussian", np.c_[x, 0.8 * x + 0.6 * rng.randn(n_samples)]))
        a = marg[k % 4]
        out.append(("independent, same marginal", np.c_[a(n_samples), a(n_samples)]))
        b = marg[(k + 1 + k // 4 % 3) % 4]
        out.append(("independent, different marginals", np.c_[a(n_samples), b(n_samples)]))
    return out


def _calibration(args, log):
    """P-values on pairs with no preferred direction (roughly uniform if calibrated)."""
    from scipy.stats import kstest

    pairs = _null_pairs(args.null_pairs, args.null_samples, 12345)
    est = SkewDCausalDiscoverer(n_bootstrap=args.n_bootstrap, random_state=0)
    try:
        import causallearn  # noqa: F401

        est.set_params(independence_test="kci")
    except ImportError:
        log("causal-learn not installed: no KCI p-values")
    res = {"it": [], "it-preference": [], "ll": [], "kci": [], "family": []}
    def fit_all():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for family, X in pairs:
                d = clone(est).fit(X)
                res["it"].append(d.pvalues_.get("it", np.nan))
                res["it-preference"].append(d.pvalues_.get("it-preference", np.nan))
                res["ll"].append(d.pvalues_["ll"])
                res["kci"] += list(d.independence_pvalues_.values())
                res["family"].append(family)

    seconds = measure(fit_all, memory=None).seconds / len(pairs)
    rows = []
    fam = np.array(res["family"])
    families = ["linear Gaussian", "independent, same marginal",
                "independent, different marginals"]
    for family in families + ["all", "linear Gaussian or same marginal"]:
        mask = {"all": np.ones(fam.size, bool),
                "linear Gaussian or same marginal": np.isin(fam, families[:2])}.get(
                    family, fam == family)
        for key, label in (("it", "wild-bootstrap p of the decision (it)"),
                           ("it-preference", "wild-bootstrap p of a preference (it)"),
                           ("ll", "Vuong p (ll)")):
            if key == "ll" and family in ("all", families[2]):
                continue  # different marginals: "ll" has a genuine preference (no null)
            p = np.asarray(res[key])[mask]
            rows.append({"dataset": f"null pairs: {family}", "method": label,
                         "n_pairs": int(mask.sum()), "share_p_below_0.05": float(np.mean(
                             p < 0.05)), "share_p_below_0.10": float(np.mean(p < 0.10)),
                         "median_p": float(np.median(p)),
                         "ks_uniform_pvalue": float(kstest(p, "uniform").pvalue),
                         "mean_s_per_pair": seconds})
    if res["kci"]:
        p = np.asarray(res["kci"])
        rows.append({"dataset": "null pairs: all", "method": "KCI p of the residuals (both "
                     "directions)", "n_pairs": int(fam.size), "n_tests": int(p.size),
                     "share_p_below_0.05": float(np.mean(p < 0.05)),
                     "share_p_below_0.10": float(np.mean(p < 0.10)),
                     "median_p": float(np.median(p)),
                     "ks_uniform_pvalue": float(kstest(p, "uniform").pvalue)})
    log(f"calibration: {len(pairs)} null pairs done")
    return rows


def _study_targets(rows):
    def get(dataset, method, key="accuracy"):
        for r in rows:
            if r["dataset"].split("[")[0] == dataset and r["method"] == method:
                return r.get(key)
        return None

    out = []
    pub = dict(zip(STANDARD, PUBLISHED["SkewD-IT"], strict=True))
    closes, keeps = None, True
    for name in STUDY_ORDER:
        u = get(name, "SkewD-IT (uniform knots)")
        q = get(name, "SkewD-IT (quantile knots)")
        if u is None or q is None:
            continue
        if name == "SIM-ln":
            goal = pub[name][0] / 100 - 0.06
            closes = q >= goal
            for label, v in (("uniform", u), ("quantile", q)):
                out.append(target(f"SIM-ln: SkewD-IT accuracy, {label} knots",
                                  f">= {goal:g}",
                                  round(float(v), 4),
                                  bool(v >= goal)))
        else:
            keeps &= q >= u - 0.01
            out.append(target(f"{name}: quantile-knot accuracy within 0.01 of uniform",
                              f">= {u - 0.01:.4g}",
                              round(float(q), 4),
                              bool(q >= u - 0.01)))
    if closes is not None:
        # the default may only change on full sets: 0.01 is one pair in 100
        full = all("[" not in r["dataset"] for r in rows
                   if r["method"].startswith("SkewD-IT (") and ", " not in r["dataset"])
        out.append(target("quantile knots close SIM-ln and lose nowhere, on every full "
                          "set (then default)",
                          "all of the above, all pairs",
                          float(bool(closes and keeps and full)),
                          bool(closes and keeps and full)))
    for r in rows:
        if (r["dataset"] == "null pairs: linear Gaussian or same marginal"
                and r["method"] == "Vuong p (ll)"):
            out.append(target("null pairs (linear Gaussian, same marginals): Vuong "
                              "p-values uniform (KS p)",
                              ">= 0.05",
                              round(r["ks_uniform_pvalue"], 4),
                              bool(r["ks_uniform_pvalue"] >= 0.05)))
        if r["dataset"] == "null pairs: all" and r["method"].startswith(
                "wild-bootstrap p of a preference"):
            out.append(target("null pairs: wild-bootstrap p of a preference uniform "
                              "(KS p)",
                              ">= 0.05",
                              round(r["ks_uniform_pvalue"], 4),
                              bool(r["ks_uniform_pvalue"] >= 0.05)))
        if r["dataset"] == "null pairs: all" and r["method"].startswith(
                "wild-bootstrap p of the decision"):
            out.append(target("null pairs: share of decision p-values < 0.05 (valid "
                              "test)",
                              "<= 0.1",
                              round(r["share_p_below_0.05"], 4),
                              bool(r["share_p_below_0.05"] <= 0.1)))
    return out


def _clock(budget_s):
    """Start time, deadline (``budget_s`` seconds later) and a logger printing elapsed seconds."""
    start = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - start:6.0f} s] {msg}", flush=True)

    return start, start + budget_s, log


def _study(args):
    start, deadline, log = _clock(args.budget_s)
    rows, per_pair = [], {}
    parts = args.parts.split(",")
    k = 3 if args.quick else (args.max_pairs or 10**6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "sets" in parts:
            wanted = STUDY_ORDER if args.sets is None else args.sets.split(",")
            full = args.full_sets.split(",")
            for name in [s for s in STUDY_ORDER if s in wanted]:
                if args.quick and name not in ("SIM-ln", "AN"):
                    continue
                if time.perf_counter() > deadline:
                    log(f"budget spent: {name} not run")
                    continue
                data = load_cause_effect_pairs(name)
                budgets = dict(zip(wanted, (float(v) for v in args.set_budget_s.split(",")),
                                   strict=False)) if args.set_budget_s else {}
                set_deadline = min(deadline, time.perf_counter() + budgets.get(name, 1e9))
                r, pp = _study_set(name, data, k if name in full else min(k, args.other_pairs),
                                   args, set_deadline, log)
                rows += r
                per_pair[name] = pp
                _write_study(args, rows, per_pair, start, partial=True)
        if "calibration" in parts and "slow" in parts:
            rows += _calibration(args, log)
            parts = [p for p in parts if p != "calibration"]
        if "slow" in parts:
            for name in args.slow_sets.split(","):
                data = load_cause_effect_pairs(name)
                methods = SLOW_ANCHORS if args.slow_methods is None else [
                    m for m in SLOW_ANCHORS if m in args.slow_methods.split(",")]
                r, pp = _study_set(name, data, k, args, deadline, log, anchors=methods)
                rows += r
                per_pair[name + " slow"] = pp
                _write_study(args, rows, per_pair, start, partial=True)
        if "bayes" in parts:
            data = load_cause_effect_pairs("SIM-ln")
            bayes_deadline = start + (args.bayes_budget_s or args.budget_s)
            rows += _bayes_study(data, args, bayes_deadline, log)
            _write_study(args, rows, per_pair, start, partial=True)
        if "calibration" in parts:
            rows += _calibration(args, log)
    return _write_study(args, rows, per_pair, start, partial=False)


def _write_study(args, rows, per_pair, start, partial):
    import json
    from pathlib import Path

    out = Path(args.output or "/tmp/skewd_study_part.json")
    payload = {"rows": rows, "per_pair": per_pair, "seconds": time.perf_counter() - start,
               "argv": sys.argv[1:], "partial": partial}
    out.write_text(json.dumps(payload, indent=1, default=float))
    return out


def _merge_study(paths, output, extra_notes=()):
    """One result file (skewd_anchors) from the study's part files."""
    import json

    rows, seconds, argvs, per_pair = [], [], [], {}
    for path in paths:
        payload = json.loads(open(path).read())
        rows += payload["rows"]
        seconds.append(payload["seconds"])
        argvs.append(" ".join(payload["argv"]))
        for key, value in payload.get("per_pair", {}).items():
            per_pair.setdefault(key, {}).update(value)  # methods of one set from several parts
    rows += _tuebingen_groups(per_pair)
    targets = _study_targets(rows)
    protocol = STUDY_PROTOCOL
    notes = [f"Part runs (one process each, one thread, n_jobs=1, on a shared 2-core machine "
             f"under heavy load): {'; '.join(argvs)}; wall clock "
             f"{', '.join(f'{s:.0f}' for s in seconds)} s."] + STUDY_NOTES + list(extra_notes)
    missed = [f"{t['target']}: {t['measured']:g} (goal {t['spec']})" for t in targets
              if not t["met"]]
    if missed:
        notes.append("Missed: " + "; ".join(missed) + ".")
    path = write_results("skewd_anchors", rows, False, output, targets=targets,
                         protocol=protocol, notes=notes)
    columns = ["dataset", "method", "n_pairs", "accuracy", "audrc", "n_no_decision",
               "median_s_per_pair", "share_p_below_0.05", "ks_uniform_pvalue"]
    print(markdown_table(rows, columns))
    print(markdown_table(targets, ["target", "spec", "measured", "met"]))
    return path


def _tuebingen_groups(per_pair):
    """Weighted accuracy of every method on Tuebingen subgroups: sample size, discreteness."""
    fast, slow = per_pair.get("tuebingen"), per_pair.get("tuebingen slow")
    if not fast:
        return []
    data = load_cause_effect_pairs("tuebingen")
    m = len(data.pairs)
    n = np.array([len(P) for P in data.pairs[:m]])
    # a variable with at most 30 distinct values (counts, categories, coarse rounding)
    discrete = np.array([min(np.unique(P[:, j]).size for j in range(2)) <= 30
                         for P in data.pairs[:m]])
    groups = {"original n <= 500": n <= 500, "original n > 500": n > 500,
              "a variable with <= 30 values": discrete, "both with > 30 values": ~discrete}
    rows = []
    for source in (fast, slow):
        if not source:
            continue
        for method, score in source.items():
            if method in ("direction", "weight") or method.endswith(" p"):
                continue
            k = len(score)
            y, w = np.array(source["direction"][:k]), np.array(source["weight"][:k])
            score = np.nan_to_num(np.asarray(score, dtype=float), nan=0.0)
            for label, mask in groups.items():
                mk = mask[:k]
                if mk.sum() == 0:
                    continue
                rows.append({"dataset": f"tuebingen[:{k}], {label}", "method": method,
                             "n_pairs": int(mk.sum()),
                             "accuracy": weighted_accuracy(y[mk], score[mk],
                                                           sample_weight=w[mk])})
    return rows


STUDY_PROTOCOL = (
    "SkewD knots and anchors study: the pairs of the standard sets (Tuebingen 99 weighted, "
    "SIM, SIM-c, SIM-ln, AN, LS, MN-U; a set named name[:k] was run on its first k pairs "
    "only, within the time box of its part) subsampled to at most 1000 rows (seeded by the "
    "pair index; the same rows for every method); SkewD-IT with default settings and uniform or "
    "quantile knots, with the wild-bootstrap p-value (200 replicates); the installable "
    "anchors on the same rows: cdt 0.6.0 RECI, IGCI, CDS and lingam 1.13.0 DirectLiNGAM on "
    "every pair, lingam RESIT with a Gaussian-process regressor and causal-learn 0.1.4.8 "
    "ANM (GP + HSIC) on a further seeded subsample of at most 300 rows of the Tuebingen and "
    "SIM-ln pairs (their GP fits take 25-120 s per 1000-row pair on the loaded machine); "
    "the authors' Bayesian penalty search (scikit-optimize gp_minimize, EI, 60 calls, 40 "
    "Latin-hypercube points, 8 folds) beside the default TIC search on the first SIM-ln "
    "pairs that fit the time budget; p-value calibration on pairs without a preferred "
    "direction for the HSIC score (linear Gaussian pairs and pairs of independent variables "
    "with equal or different marginals; 500 samples; the Vuong p-value of the likelihood "
    "score only on the first two families: with different marginals the likelihood score "
    "has a genuine preference). A pair without decision (score 0 or not finite, "
    "or a decision-only method without an edge) counts as wrong in the accuracy.")
STUDY_NOTES = [
    "AUDRC is not given for the decision-only methods (DirectLiNGAM, RESIT): they return an "
    "orientation without a confidence.",
    "share_p_below_0.05 / accuracy_p_below_0.05 on the standard sets: how often the "
    "wild-bootstrap p-value of the SkewD-IT decision is below 0.05, and the accuracy of "
    "those decisions against the rest.",
    "Seconds per pair: per-method wall clock inside one process on a shared, loaded "
    "machine (load average about 10 on 2 cores); compare them within this file only.",
]


# --------------------------------------------------------------------------------------------
# knots comparison (--knots, results/skewd_knots.json): SkewD-IT with uniform and quantile knots
# on the same pairs in the same run, set by set, written after every chunk of pairs
# --------------------------------------------------------------------------------------------
KNOTS_FIRST = ["SIM-ln", "tuebingen"]  # run on all pairs first, the rest in turns of a chunk
KNOTS_RULES = ("uniform", "quantile")


def _knots_sets(quick):
    """(name, loader) of every set of the knots comparison, in run order."""
    out = [(name, lambda name=name: load_cause_effect_pairs(name)) for name in KNOTS_FIRST]
    out += [(name, lambda name=name: load_cause_effect_pairs(name))
            for name in STANDARD if name not in KNOTS_FIRST]
    for idx, (model, noise, level) in enumerate(SKEW):
        tag = {"skew-normal": "SN", "agn": "AGN"}[noise]
        out.append((f"{model}s_{tag}_{level}", lambda idx=idx, model=model, noise=noise,
                    level=level: make_lsnm_pairs(100, 1000, model=model, noise=noise,
                                                 skewness=level, random_state=752 + idx)))
    if quick:
        out = [o for o in out if o[0] in ("SIM-ln", "LSs_SN_strong")]
    return out


def _knots_rows(state):
    """Rows of the knots comparison from the per-pair state (one row per set and knot rule)."""
    rows = []
    for name, st in state.items():
        m = min(len(st[k]["score"]) for k in KNOTS_RULES)
        if not m:
            continue
        direction = np.asarray(st["direction"][:m])
        weight = np.asarray(st["weight"][:m])
        label = name if m == st["n_total"] else f"{name}[:{m}]"
        for knots in KNOTS_RULES:
            r = st[knots]
            score = np.asarray(r["score"][:m], dtype=float)
            p = np.asarray(r["pvalue"][:m], dtype=float)
            extra = {}
            if np.isfinite(p).all():
                extra = _pvalue_summary(direction, score, p)
                wrong = np.sign(score) != direction
                extra["share_wrong_with_p_below_0.05"] = float(np.mean(wrong & (p < 0.05)))
                extra["n_bootstrap"] = st["n_bootstrap"]
            rows.append(_method_row(
                {"dataset": label, "method": f"SkewD-IT ({knots} knots)",
                 "median_n_samples": st["median_n_samples"]},
                direction, score, weight, np.asarray(r["fit_time"][:m]),
                n_warnings=int(np.sum(r["n_warnings"][:m])), **extra))
    return rows


def _knots_targets(rows, names):
    def get(name, knots):
        for r in rows:
            if r["dataset"].split("[")[0] == name and r["method"] == f"SkewD-IT ({knots} knots)":
                return r
        return None

    out, keeps, full = [], True, True
    goal = PUBLISHED["SkewD-IT"][STANDARD.index("SIM-ln")][0] / 100 - 0.06
    closes = None
    for name in names:
        u, q = get(name, "uniform"), get(name, "quantile")
        if u is None:
            full = False
            continue
        full &= "[" not in u["dataset"]
        if name == "SIM-ln":
            closes = q["accuracy"] >= round(goal, 9)
            for knots, r in (("uniform", u), ("quantile", q)):
                out.append(target(f"{u['dataset']}: SkewD-IT accuracy, {knots} knots",
                                  f">= {goal:g}",
                                  round(r["accuracy"], 4),
                                  bool(r["accuracy"] >= round(goal, 9))))
        else:
            ok = q["accuracy"] >= u["accuracy"] - 0.01 - 1e-12
            keeps &= ok
            out.append(target(f"{u['dataset']}: quantile-knot accuracy within 0.01 of "
                              "uniform",
                              f">= {u['accuracy'] - 0.01:.4g}",
                              round(q["accuracy"], 4),
                              bool(ok)))
    switch = bool(closes and keeps and full)
    out.append(target("quantile knots close SIM-ln and lose no more than 0.01 on any set, "
                      "all pairs of every set (then the default)",
                      "all of the above",
                      float(switch),
                      switch))
    return out


def _knots_write(args, state, start, partial, extra=None):
    import json
    from pathlib import Path

    out = Path(args.output or "/tmp/skewd_knots_part.json")
    payload = {"state": state, "seconds": time.perf_counter() - start, "argv": sys.argv[1:],
               "partial": partial, "uptime": _load_average()}
    if extra:
        payload.update(extra)
    out.write_text(json.dumps(payload, default=float))
    return out


def _load_average():
    try:
        return [round(v, 2) for v in __import__("os").getloadavg()]
    except OSError:  # pragma: no cover
        return None


def _knots(args):
    """Uniform vs quantile knots on every pair (at most ``--max-rows`` rows per pair)."""
    import json
    from pathlib import Path

    start, deadline, log = _clock(args.budget_s)
    state = {}
    if args.resume and Path(args.resume).is_file():
        state = json.loads(Path(args.resume).read_text())["state"]
        log(f"resumed {sum(len(s['uniform']['score']) for s in state.values())} pairs")
    chunk = 2 if args.quick else args.chunk
    sets = _knots_sets(args.quick)
    if getattr(args, "knots_sets", None):
        wanted = args.knots_sets.split(",")
        unknown = sorted(set(wanted) - {name for name, _ in sets})
        if unknown:
            raise ValueError(f"--knots-sets names unknown sets {unknown}; expected names "
                             f"among {[name for name, _ in sets]}")
        sets = [s for s in sets if s[0] in wanted]
    loaded = {}
    pvalue_sets = [] if args.quick else args.pvalue_sets.split(",")

    def data_of(name, loader):
        if name not in loaded:
            data = loader()
            k = 2 if args.quick else len(data.pairs)
            pairs = [_subsample(np.asarray(data.pairs[i], dtype=float), args.max_rows, i)
                     for i in range(k)]
            loaded[name] = (pairs, np.asarray(data.direction[:k]), np.asarray(data.weight[:k]))
            st = state.setdefault(name, {
                "n_total": k, "direction": loaded[name][1].tolist(),
                "weight": loaded[name][2].tolist(),
                "median_n_samples": int(np.median([len(P) for P in pairs])),
                "n_bootstrap": args.n_bootstrap if name in pvalue_sets else 0,
                **{knots: {"score": [], "pvalue": [], "fit_time": [], "n_warnings": []}
                   for knots in KNOTS_RULES}})
            st["n_total"] = k
        return loaded[name]

    def run_chunk(name, loader):
        pairs, _, _ = data_of(name, loader)
        st = state[name]
        done = len(st["uniform"]["score"])
        if done >= len(pairs):
            return False
        part = pairs[done:done + chunk]
        for knots in KNOTS_RULES:
            n_boot = st["n_bootstrap"] if knots == args.pvalue_knots else 0
            est = SkewDCausalDiscoverer(knots=knots, n_bootstrap=n_boot, random_state=0)
            r = score_pairs(part, estimator=est, n_jobs=args.n_jobs)
            st[knots]["score"] += r.score.tolist()
            st[knots]["pvalue"] += (r.pvalue_it if n_boot else np.full(len(part), np.nan)
                                    ).tolist()
            st[knots]["fit_time"] += r.fit_time.tolist()
            st[knots]["n_warnings"] += r.n_warnings.astype(int).tolist()
        log(f"{name}: {done + len(part)} of {len(pairs)} pairs (load {_load_average()})")
        _knots_write(args, state, start, partial=True)
        return True

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = [s for s in sets if s[0] in KNOTS_FIRST or args.quick]
        for name, loader in first:
            while time.perf_counter() < deadline and run_chunk(name, loader):
                pass
        rest = [s for s in sets if s not in first]
        if args.knots_order:
            order = args.knots_order.split(",")
            unknown = sorted(set(order) - {name for name, _ in rest})
            if unknown:
                raise ValueError(f"--knots-order names unknown sets {unknown}; expected "
                                 f"names among {[name for name, _ in rest]}")
            rest.sort(key=lambda s: order.index(s[0]) if s[0] in order else len(order))
        if args.sequential:  # one set after the other, each on all its pairs
            for name, loader in rest:
                while time.perf_counter() < deadline and run_chunk(name, loader):
                    pass
        busy = not args.sequential
        while busy and time.perf_counter() < deadline:
            busy = False
            for name, loader in rest:
                if time.perf_counter() >= deadline:
                    break
                busy |= run_chunk(name, loader)
    out = _knots_write(args, state, start, partial=False)
    log(f"wrote {out}")
    return out


def _dask_timing(args):
    """Wall time of ``score_pairs`` on Tuebingen on a dask LocalCluster of 1 and 2 workers."""
    import json
    from pathlib import Path

    import joblib
    from dask import distributed

    data = load_cause_effect_pairs("tuebingen")
    k = 4 if args.quick else len(data.pairs)
    pairs = [_subsample(np.asarray(data.pairs[i], dtype=float), args.max_rows, i)
             for i in range(k)]
    est = SkewDCausalDiscoverer(random_state=0)
    rows, scores = [], {}
    reference = None
    if args.resume and Path(args.resume).is_file():  # the knots run's default-knot scores
        st = json.loads(Path(args.resume).read_text())["state"].get("tuebingen")
        if st and len(st["uniform"]["score"]) >= k:
            reference = np.asarray(st["uniform"]["score"][:k])
    for n_workers in (1, 2):
        t0 = time.perf_counter()
        cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                           processes=True, dashboard_address=None,
                                           silence_logs=40)
        client = distributed.Client(cluster)
        startup = time.perf_counter() - t0
        load_before = _load_average()
        try:
            with warnings.catch_warnings(), joblib.parallel_config(backend="dask"):
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                r = score_pairs(pairs, estimator=est, n_jobs=-1)
                wall = time.perf_counter() - t0
        finally:
            client.close()
            cluster.close()
        scores[n_workers] = r.score
        rows.append({"dataset": f"tuebingen (<= {args.max_rows} rows per pair)",
                     "method": f"score_pairs, dask LocalCluster, {n_workers} worker process"
                     f"{'es' if n_workers > 1 else ''} x 1 thread",
                     "n_pairs": k, "n_workers": n_workers, "wall_seconds": wall,
                     "cluster_startup_seconds": startup,
                     "sum_fit_seconds": float(np.sum(r.fit_time)),
                     "accuracy": weighted_accuracy(data.direction[:k], r.score,
                                                   sample_weight=data.weight[:k]),
                     "load_average_before": load_before, "load_average_after": _load_average()})
        print(f"{n_workers} worker(s): {wall:.1f} s (load {_load_average()})", flush=True)
    def rel_diff(a, b):
        return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))

    same = f"max relative difference {rel_diff(scores[2], scores[1]):.2g}"
    rows[1]["max_rel_diff_score_vs_1_worker"] = rel_diff(scores[2], scores[1])
    speedup = rows[0]["wall_seconds"] / rows[1]["wall_seconds"]
    rows[1]["speedup_over_1_worker"] = speedup
    note = (f"dask scale-out: score_pairs over the {k} Tuebingen pairs (at most "
            f"{args.max_rows} rows each, default SkewD-IT) through "
            "joblib.parallel_config(backend='dask') on a dask.distributed LocalCluster with "
            "worker processes (1 thread each): 1 worker "
            f"{rows[0]['wall_seconds']:.0f} s, 2 workers {rows[1]['wall_seconds']:.0f} s "
            f"(speed-up {speedup:.2f}x; cluster start-up excluded, "
            f"{rows[0]['cluster_startup_seconds']:.1f} / {rows[1]['cluster_startup_seconds']:.1f}"
            f" s); scores of 2 against 1 worker: {same}")
    if reference is not None:
        note += ("; against the one-process knots run's default-knot scores: max relative "
                 f"difference {rel_diff(scores[2], reference):.2g}")
        rows[1]["max_rel_diff_score_vs_one_process"] = rel_diff(scores[2], reference)
    note += (f". Load average before / after: {rows[0]['load_average_before']} / "
             f"{rows[1]['load_average_after']} on {__import__('os').cpu_count()} CPUs shared "
             "with other jobs.")
    out = Path(args.output or "/tmp/skewd_dask_part.json")
    out.write_text(json.dumps({"rows": rows, "notes": [note],
                               "scores": {str(w): v.tolist() for w, v in scores.items()}},
                              default=float))
    print(note)
    return out


KNOTS_PROTOCOL = (
    "SkewD-IT with its default settings and random_state=0, once with uniform knots (the "
    "default) and once with knots at the cause's quantiles (knots='quantile'), on the same "
    "pairs in the same run: every pair of the standard sets (Tuebingen 99 weighted, SIM, SIM-c, "
    "SIM-ln, AN, LS, MN-U) and of the ten regenerated skew sets {ANs, LSs} x {SN medium, SN "
    "strong, AGN medium, AGN strong, AGN extreme} (make_lsnm_pairs, 100 pairs of 1000 samples, "
    "random_state = 752 + set index). Pairs with more than 1000 rows (Tuebingen only) are "
    "subsampled to 1000 rows (seeded by the pair index, the same rows for both knot rules). "
    "SIM-ln and Tuebingen run first on all pairs, the other sets then in turns of one chunk of "
    "pairs each or, in a resumed run (see the notes), one set after the other on all its "
    "pairs; a set named name[:k] was run on its first k pairs only (time box). On the "
    "sets named in the notes, the default-knot run also computes the wild-bootstrap p-value of "
    "the decision, to check it on pairs whose direction is known. A pair without decision "
    "counts as wrong. One process, one thread, n_jobs=1.")


def _knots_merge(paths, output, extra_notes=(), base=None):
    """results/skewd_knots.json from a knots part file plus optional timing part files.

    With ``base`` (an earlier skewd_knots.json), the sets the part file holds replace that
    file's rows of the same sets; its other rows and its notes are kept.
    """
    import json

    payload = json.loads(open(paths[0]).read())
    state = payload["state"]
    rows = _knots_rows(state)
    names = list(state)
    notes = [f"Run: python benchmarks/bench_skewd.py {' '.join(payload['argv'])} "
             f"({payload['seconds']:.0f} s wall clock; load average at the end "
             f"{payload.get('uptime')} on {__import__('os').cpu_count()} CPUs, a machine shared "
             "with other jobs)."]
    if base is not None:
        old = json.loads(open(base).read())
        kept = [r for r in old["rows"] if r["method"].startswith("SkewD-IT (")
                and r["dataset"].split("[")[0] not in state]
        rows = kept + rows
        names = list(dict.fromkeys([r["dataset"].split("[")[0] for r in kept] + names))
        notes = [n for n in old["notes"] if not n.startswith("Missed: ")] + notes
        rows += [r for r in old["rows"] if not r["method"].startswith("SkewD-IT (")]
    targets = _knots_targets(rows, names)
    for path in paths[1:]:
        extra = json.loads(open(path).read())
        rows += extra.get("rows", [])
        notes += extra.get("notes", [])
    pv = [n for n, st in state.items() if st.get("n_bootstrap")]
    if pv:
        notes.append(f"Wild-bootstrap p-values of the decision (default knots) on: "
                     f"{', '.join(pv)}; share_p_below_0.05 is the share of pairs with p < 0.05, "
                     "accuracy_p_below_0.05 / accuracy_p_above_0.05 the (unweighted) accuracy "
                     "of those pairs and of the rest, share_wrong_with_p_below_0.05 the share of "
                     "pairs decided wrongly with p < 0.05.")
    notes += list(extra_notes)
    missed = [f"{t['target']}: {t['measured']:g} (goal {t['spec']})" for t in targets
              if not t["met"]]
    if missed:
        notes.append("Missed: " + "; ".join(missed) + ".")
    path = write_results("skewd_knots", rows, False, output, targets=targets,
                         protocol=KNOTS_PROTOCOL, notes=notes)
    print(markdown_table(rows, ["dataset", "method", "n_pairs", "accuracy", "audrc",
                                "n_no_decision", "median_s_per_pair", "share_p_below_0.05",
                                "accuracy_p_below_0.05", "accuracy_p_above_0.05"]))
    print(markdown_table(targets, ["target", "spec", "measured", "met"]))
    return path


def _quality(direction, score, weight):
    return {"accuracy": weighted_accuracy(direction, score, sample_weight=weight),
            "audrc": audrc(direction, score, sample_weight=weight)}


def _timed(pairs, estimator, n_jobs, n_mem=2):
    """Scores and timing of a set: wall time and per-pair seconds from an untraced run (tracing
    allocations slows numpy down), peak memory from a traced run on the ``n_mem`` largest pairs."""
    m = measure(score_pairs, pairs, estimator=estimator, n_jobs=n_jobs, memory=None)
    res, seconds = m.result, m.seconds
    mem = None
    if n_mem:
        largest = sorted(pairs, key=len)[-n_mem:]
        mem = measure(score_pairs, largest, estimator=estimator, n_jobs=1).peak_mb
    return res, {"fit_seconds": seconds, "peak_traced_mb": mem,
                 "median_s_per_pair": float(np.median(res.fit_time)),
                 "p95_s_per_pair": float(np.percentile(res.fit_time, 95))}


def _run_set(name, data, k, n_jobs, live_anchors, quick):
    """Rows of one set: SkewD's scores, the Gaussian (LOCI-like) control and the anchors.

    Not ``run_arms`` arms: one ``score_pairs`` call gives the rows of several scores (IT, LL,
    LL-KDE) timed once, most anchors are published per-pair scores or published numbers (no
    run to measure), and SkewD's memory comes from a separate traced run (``_timed``).
    """
    pairs = data.pairs[:k]
    direction, weight = data.direction[:k], data.weight[:k]
    n_samples = int(np.median([len(P) for P in pairs]))
    rows = []
    base = {"dataset": name, "n_pairs": len(pairs), "median_n_samples": n_samples}
    skewd = SkewDCausalDiscoverer(all_scores=True, random_state=0)
    res, timing = _timed(pairs, skewd, n_jobs, n_mem=0 if quick else 2)
    for label, key in [("SkewD-IT", "score_it"), ("SkewD-LL", "score_ll"),
                       ("SkewD-LL-KDE", "score_ll_kde")]:
        rows.append({**base, "method": label, **_quality(direction, res[key], weight), **timing,
                     "n_warnings": int(res.n_warnings.sum())})
    gauss = SkewDCausalDiscoverer(random_state=0, estimator={"noise": "gaussian"})
    g_res, g_timing = _timed(pairs, gauss, n_jobs, n_mem=0 if quick else 2)
    for label, key in [("Gaussian-IT (LOCI-like)", "score_it"),
                       ("Gaussian-LL (LOCI-like)", "score_ll")]:
        rows.append({**base, "method": label, **_quality(direction, g_res[key], weight),
                     **g_timing})
    if name in STANDARD:
        b = load_cause_effect_baseline_scores(name)
        pos = {pid: i for i, pid in enumerate(b.pair_id)}
        idx = np.array([pos[p] for p in data.pair_id[:k]])
        for method in BASELINES:
            rows.append({**base, "method": method,
                         **_quality(b.direction[idx], b.scores[method][idx], b.weight[idx]),
                         "source": "published per-pair scores (baseline_scores)"})
        j = STANDARD.index(name)
        for method, values in PUBLISHED.items():
            acc, auc = values[j]
            rows.append({"dataset": name, "n_pairs": 99 if name == "tuebingen" else 100,
                         "method": f"{method} (published)", "accuracy": acc / 100,
                         "audrc": auc / 100, "source": "causality-lab/skewd@03f920c"})
        if live_anchors and not quick:  # pragma: no cover - optional, slow
            try:
                m = measure(_anm_scores, pairs)
                rows.append({**base, "method": "causallearn.ANM",
                             **_quality(direction, m.result, weight),
                             "fit_seconds": m.seconds, "peak_traced_mb": m.peak_mb})
            except ImportError:
                print("causal-learn not installed: no live ANM anchor", file=sys.stderr)
    elif name in PUBLISHED_SKEW:
        for method, acc in zip(["SkewD-IT", "SkewD-LL", "LOCI-IT", "LOCI-LL"],
                               PUBLISHED_SKEW[name], strict=True):
            rows.append({"dataset": name, "n_pairs": 100, "method": f"{method} (published)",
                         "accuracy": acc / 100, "source": "causality-lab/skewd@03f920c"})
    return rows


def _targets(rows):
    def get(dataset, method, key="accuracy"):
        for r in rows:
            if r["dataset"] == dataset and r["method"] == method:
                return r.get(key)
        return None

    out = []

    def add(name, value, threshold, op=">="):
        if value is None:
            return
        threshold = round(threshold, 9)  # 0.88 - 0.06 must not read 0.8200000000000001
        met = value >= threshold if op == ">=" else value <= threshold
        out.append(target(name, f"{op} {threshold:g}", round(float(value), 4), bool(met)))

    synth = ["SIM", "SIM-c", "SIM-ln", "AN", "LS", "MN-U"]
    accs = []
    for j, name in enumerate(STANDARD):
        if name == "tuebingen":
            continue
        acc = get(name, "SkewD-IT")
        if acc is not None:
            accs.append(acc)
            add(f"{name}: SkewD-IT accuracy >= published - 0.06", acc,
                PUBLISHED["SkewD-IT"][j][0] / 100 - 0.06)
    if len(accs) == len(synth):
        add("standard synthetic sets: mean SkewD-IT accuracy >= 0.868", float(np.mean(accs)),
            0.868)
    add("Tuebingen: SkewD-IT weighted accuracy >= 0.66", get("tuebingen", "SkewD-IT"), 0.66)
    add("Tuebingen: SkewD-IT AUDRC >= 0.65", get("tuebingen", "SkewD-IT", "audrc"), 0.65)
    ls_skew, ls_gauss = [], []
    for name, pub in PUBLISHED_SKEW.items():
        add(f"{name}: SkewD-LL accuracy >= 0.97", get(name, "SkewD-LL"), 0.97)
        add(f"{name}: SkewD-IT accuracy >= published - 0.05", get(name, "SkewD-IT"),
            pub[0] / 100 - 0.05)
        if name.startswith("LSs") and get(name, "SkewD-LL") is not None:
            ls_skew.append(get(name, "SkewD-LL"))
            ls_gauss.append(get(name, "Gaussian-LL (LOCI-like)"))
    if len(ls_skew) == 5:
        out.append(target("LSs sets: mean SkewD-LL accuracy > mean Gaussian-LL accuracy",
                          f"> {np.mean(ls_gauss):.4g} (Gaussian-LL)",
                          round(float(np.mean(ls_skew)), 4),
                          bool(np.mean(ls_skew) > np.mean(ls_gauss))))
    for r in rows:
        if r["method"] == "SkewD-IT default, 1 core":
            add("median s per 1000-sample pair, default, one core <= 1",
                r["median_s_per_pair"], 1.0, "<=")
            add("95th percentile s per 1000-sample pair, default, one core <= 3",
                r["p95_s_per_pair"], 3.0, "<=")
    return out


def main(argv=None):
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--max-pairs", type=int, default=None,
                        help="pairs per standard set (default: all)")
    parser.add_argument("--skew-pairs", type=int, default=100,
                        help="pairs per regenerated skew set (default: 100)")
    parser.add_argument("--sets", default=None,
                        help="comma-separated sets (standard names, or e.g. LSs_SN_strong)")
    parser.add_argument("--live-anchors", action="store_true",
                        help="also run causal-learn's ANM (slow; needs causal-learn)")
    parser.add_argument("--study", action="store_true",
                        help="knots/anchors/penalty-search/p-value study (skewd_anchors)")
    parser.add_argument("--parts", default="sets,slow,bayes,calibration",
                        help="study parts: sets, slow (RESIT, ANM), bayes, calibration")
    parser.add_argument("--budget-s", type=float, default=1200.0,
                        help="study: wall-clock budget; no new set/slow pair after it")
    parser.add_argument("--bayes-budget-s", type=float, default=None,
                        help="study: wall-clock budget of the penalty-search part")
    parser.add_argument("--max-rows", type=int, default=1000, help="study: rows per pair")
    parser.add_argument("--set-budget-s", default=None,
                        help="study: comma-separated wall-clock budget per set of --sets")
    parser.add_argument("--anchor-reserve-s", type=float, default=60.0,
                        help="study: seconds kept for the anchors of a set")
    parser.add_argument("--slow-rows", type=int, default=300,
                        help="study: rows per pair for RESIT (GP) and causal-learn ANM")
    parser.add_argument("--slow-sets", default="tuebingen",
                        help="study: sets on which RESIT (GP) and ANM run")
    parser.add_argument("--slow-methods", default=None,
                        help="study: comma-separated subset of the slow anchors")
    parser.add_argument("--full-sets", default="SIM-ln,tuebingen",
                        help="study: sets run on all pairs (the others: --other-pairs)")
    parser.add_argument("--other-pairs", type=int, default=100,
                        help="study: pairs of the sets not in --full-sets")
    parser.add_argument("--pvalue-sets", default="SIM-ln,tuebingen",
                        help="study: sets whose uniform-knot run has wild-bootstrap p-values")
    parser.add_argument("--n-bootstrap", type=int, default=200,
                        help="study: wild-bootstrap replicates of the p-value")
    parser.add_argument("--null-pairs", type=int, default=40,
                        help="study: null pairs per family for the calibration")
    parser.add_argument("--null-samples", type=int, default=500)
    parser.add_argument("--knots", action="store_true",
                        help="uniform vs quantile knots on every set (skewd_knots)")
    parser.add_argument("--knots-merge", nargs="+", default=None,
                        help="knots part file (+ timing part files) -> results/skewd_knots.json")
    parser.add_argument("--knots-sets", default=None,
                        help="knots: comma-separated sets to run (default: every set)")
    parser.add_argument("--knots-base", default=None,
                        help="knots merge: an earlier skewd_knots.json whose rows of the sets "
                             "not in the part file are kept")
    parser.add_argument("--dask-timing", action="store_true",
                        help="score_pairs on Tuebingen with 1 vs 2 dask worker processes")
    parser.add_argument("--resume", default=None,
                        help="knots: part file to continue; study bayes part: per-pair state "
                             "to continue and update (dask timing: compare its scores)")
    parser.add_argument("--chunk", type=int, default=10, help="knots: pairs per turn")
    parser.add_argument("--sequential", action="store_true",
                        help="knots: run the other sets one after the other on all their "
                             "pairs (default: in turns of --chunk pairs)")
    parser.add_argument("--knots-order", default=None,
                        help="knots: comma-separated sets run first among the other sets")
    parser.add_argument("--pvalue-knots", default="uniform",
                        help="knots: the knot rule whose run computes the p-values")
    parser.add_argument("--note", action="append", default=None,
                        help="study merge: a note to record (repeatable)")
    parser.add_argument("--merge", nargs="+", default=None,
                        help="study: merge part files into results/skewd_anchors.json")
    args = parser.parse_args(argv)
    if args.knots_merge:
        out = _knots_merge(args.knots_merge, args.output, args.note or (), base=args.knots_base)
        print(f"wrote {out}")
        return
    if args.knots:
        print(f"wrote {_knots(args)}")
        return
    if args.dask_timing:
        print(f"wrote {_dask_timing(args)}")
        return
    if args.merge:
        print(f"wrote {_merge_study(args.merge, args.output, args.note or ())}")
        return
    if args.study:
        print(f"wrote {_study(args)}")
        return
    k_std = 2 if args.quick else args.max_pairs
    k_skew = 2 if args.quick else args.skew_pairs
    wanted = None if args.sets is None else set(args.sets.split(","))
    rows = []
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in STANDARD:
            if (wanted and name not in wanted) or (args.quick and name != "SIM"):
                continue
            try:
                data = load_cause_effect_pairs(name)
            except OSError as exc:
                print(f"skipping {name}: {exc}", file=sys.stderr)
                continue
            k = len(data.pairs) if k_std is None else min(k_std, len(data.pairs))
            rows += _run_set(name, data, k, args.n_jobs, args.live_anchors, args.quick)
            print(f"{name}: done after {time.perf_counter() - start:.0f} s", flush=True)
        for idx, (model, noise, level) in enumerate(SKEW):
            data = make_lsnm_pairs(k_skew, 1000, model=model, noise=noise, skewness=level,
                                   random_state=752 + idx)
            if (wanted and data.name not in wanted) or (
                    args.quick and data.name != "LSs_SN_strong"):
                continue
            rows += _run_set(data.name, data, k_skew, args.n_jobs, False, args.quick)
            print(f"{data.name}: done after {time.perf_counter() - start:.0f} s", flush=True)
    # speed on one core: the default discoverer (criterion "it") on 1000-sample pairs, sequential
    k_speed = 1 if args.quick else 20
    speed_pairs, sources = [], []
    if not wanted or "speed" in wanted:
        try:
            speed_pairs += load_cause_effect_pairs("SIM").pairs[:k_speed]
            sources.append(f"SIM[:{k_speed}]")
        except OSError:
            pass
        speed_pairs += make_lsnm_pairs(k_speed, 1000, model="LS", noise="skew-normal",
                                       skewness="strong", random_state=752 + 6).pairs
        sources.append(f"LSs_SN_strong[:{k_speed}]")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res, timing = _timed(speed_pairs, SkewDCausalDiscoverer(random_state=0), 1,
                                 n_mem=0 if args.quick else 1)
        rows.append({"dataset": " + ".join(sources), "method": "SkewD-IT default, 1 core",
                     "n_pairs": len(speed_pairs), "median_n_samples": 1000, **timing})
        print(f"speed: done after {time.perf_counter() - start:.0f} s", flush=True)
    targets = _targets(rows)
    columns = ["dataset", "method", "n_pairs", "accuracy", "audrc", "median_s_per_pair",
               "p95_s_per_pair", "fit_seconds", "peak_traced_mb"]
    print(markdown_table(rows, columns))
    print()
    print(markdown_table(targets, ["target", "spec", "measured", "met"], headers={"spec": "goal"}))
    n_skew = "all 100" if k_skew >= 100 else f"the first {k_skew}"
    n_std = "all" if k_std is None else f"the first {k_std}"
    protocol = (f"SkewD cause-effect benchmark: {n_std} pairs of each standard set, {n_skew} "
                "pairs of each regenerated skew set (make_lsnm_pairs, 1000 samples, "
                "random_state 752 + set index); SkewD with all_scores=True (IT, LL, LL-KDE from "
                "one run) and the Gaussian-noise ablation; baselines from their published "
                "per-pair scores on the same pairs; published SkewD/LOCI/ROCHE rows from "
                "causality-lab/skewd@03f920c"
                + (" (--quick: SIM 2 pairs, LSs_SN_strong 2 pairs, speed on 2 pairs, no "
                   "memory trace)" if args.quick else ""))
    notes = [
        "Seconds per pair come from untraced runs with joblib n_jobs = " + str(args.n_jobs)
        + "; peak memory (tracemalloc) from a separate run on the two largest pairs of a set.",
        "median/p95 seconds per pair of the set rows are for the all_scores=True run (HSIC, both "
        "likelihoods and the KDE marginals); the speed targets use the row 'SkewD-IT default, "
        "1 core' (default discoverer, n_jobs=1, sequential).",
        "Live anchors (causal-learn ANM, lingam RESIT) are opt-in (--live-anchors) and were not "
        "run; the baselines' published per-pair scores stand in for them.",
        f"Run: python benchmarks/bench_skewd.py {' '.join(sys.argv[1:] if argv is None else argv)}"
        f" ({time.perf_counter() - start:.0f} s wall clock; machine in 'machine').",
    ]
    missed = [f"{t['target']}: {t['measured']:g} (goal {t['spec']})" for t in targets
              if not t["met"]]
    if missed:
        notes.append("Missed: " + "; ".join(missed) + ".")
    if any(not t["met"] and t["target"].startswith(("SIM-ln", "standard synthetic"))
           for t in targets):
        notes.append(SIM_LN_DIAGNOSIS)
    path = write_results("skewd", rows, args.quick, args.output, targets=targets,
                         protocol=protocol, notes=notes)
    print(f"wrote {path} ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
