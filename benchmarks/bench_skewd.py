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
"""

import sys
import time
import warnings

import numpy as np

from sklearn_icml26.causal_discovery import SkewDCausalDiscoverer, score_pairs
from sklearn_icml26.datasets import (
    load_cause_effect_baseline_scores,
    load_cause_effect_pairs,
    make_lsnm_pairs,
)
from sklearn_icml26.metrics import audrc, weighted_accuracy
from sklearn_icml26.utils._benchmark import (
    benchmark_parser,
    markdown_table,
    measure,
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


def _quality(direction, score, weight):
    return {"accuracy": weighted_accuracy(direction, score, sample_weight=weight),
            "audrc": audrc(direction, score, sample_weight=weight)}


def _timed(pairs, estimator, n_jobs, n_mem=2):
    """Scores and timing of a set: wall time and per-pair seconds from an untraced run (tracing
    allocations slows numpy down), peak memory from a traced run on the ``n_mem`` largest pairs."""
    start = time.perf_counter()
    res = score_pairs(pairs, estimator=estimator, n_jobs=n_jobs)
    seconds = time.perf_counter() - start
    largest = sorted(pairs, key=len)[-n_mem:]
    mem = measure(score_pairs, largest, estimator=estimator, n_jobs=1).peak_memory_mb
    return res, {"fit_seconds": seconds, "peak_memory_mb": mem,
                 "median_s_per_pair": float(np.median(res.fit_time)),
                 "p95_s_per_pair": float(np.percentile(res.fit_time, 95))}


def _run_set(name, data, k, n_jobs, live_anchors, quick):
    pairs = data.pairs[:k]
    direction, weight = data.direction[:k], data.weight[:k]
    n_samples = int(np.median([len(P) for P in pairs]))
    rows = []
    base = {"dataset": name, "n_pairs": len(pairs), "median_n_samples": n_samples}
    skewd = SkewDCausalDiscoverer(all_scores=True, random_state=0)
    res, timing = _timed(pairs, skewd, n_jobs, n_mem=1 if quick else 2)
    for label, key in [("SkewD-IT", "score_it"), ("SkewD-LL", "score_ll"),
                       ("SkewD-LL-KDE", "score_ll_kde")]:
        rows.append({**base, "method": label, **_quality(direction, res[key], weight), **timing,
                     "n_warnings": int(res.n_warnings.sum())})
    gauss = SkewDCausalDiscoverer(random_state=0, estimator={"noise": "gaussian"})
    g_res, g_timing = _timed(pairs, gauss, n_jobs, n_mem=1 if quick else 2)
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
                             "fit_seconds": m.seconds, "peak_memory_mb": m.peak_memory_mb})
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
        out.append({"target": name, "spec": f"{op} {threshold:g}",
                    "measured": round(float(value), 4), "met": bool(met)})

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
        out.append({"target": "LSs sets: mean SkewD-LL accuracy > mean Gaussian-LL accuracy",
                    "spec": f"> {np.mean(ls_gauss):.4g} (Gaussian-LL)",
                    "measured": round(float(np.mean(ls_skew)), 4),
                    "met": bool(np.mean(ls_skew) > np.mean(ls_gauss))})
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
    args = parser.parse_args(argv)
    k_std = 4 if args.quick else args.max_pairs
    k_skew = 3 if args.quick else args.skew_pairs
    wanted = None if args.sets is None else set(args.sets.split(","))
    rows = []
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in STANDARD:
            if (wanted and name not in wanted) or (args.quick and name not in ("SIM", "AN")):
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
    k_speed = 3 if args.quick else 20
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
            res, timing = _timed(speed_pairs, SkewDCausalDiscoverer(random_state=0), 1, n_mem=1)
        rows.append({"dataset": " + ".join(sources), "method": "SkewD-IT default, 1 core",
                     "n_pairs": len(speed_pairs), "median_n_samples": 1000, **timing})
        print(f"speed: done after {time.perf_counter() - start:.0f} s", flush=True)
    targets = _targets(rows)
    columns = ["dataset", "method", "n_pairs", "accuracy", "audrc", "median_s_per_pair",
               "p95_s_per_pair", "fit_seconds", "peak_memory_mb"]
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
                + (" (--quick: SIM and AN 4 pairs, LSs_SN_strong 3 pairs)" if args.quick else ""))
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
