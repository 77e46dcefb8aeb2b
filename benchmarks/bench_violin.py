"""ViolinViTClassifier: VIOLIN masks against the plain ViT, the scale-only control and a shuffle.

Paper: Candogan et al., "Spatial Priors via Space Filling Curves for Small and Limited Data Vision
Transformers", ICML 2026, arXiv:2606.14757.

Arms (each: ``train_test_split(test_size=0.3, stratify=y, random_state=seed)``, then stratified
fractions 0.1 / 0.25 / 1.0 of the training split):

* ``digits 8x8``: scikit-learn's digits / 16, one token per pixel (64 tokens);
* ``digits on 16x16 canvas``: the digits at a random position on a noisy 16 x 16 canvas
  (``make_digits_on_canvas``); ``--canvas-patch 1`` gives 256 pixel tokens, ``2`` 64 tokens
  of 2 x 2 pixels; ``--canvas 24`` a 24 x 24 canvas;
* ``local patterns``: ``make_local_pattern_images`` (one corner pattern at a random position;
  its orientation is the label), 1,800 images on a ``--pattern-size`` square canvas.

Models: ``ViolinViTClassifier(mask=None)`` (ViT), ``mask="learned"`` (VIOLIN) and
``mask="ones"`` (scale only) at fractions 0.1 and 0.25 (``--ones-init`` adds VIOLIN with
``scale_init="ones"``); ViT and VIOLIN at 1.0; ViT and VIOLIN at 0.1 with the pixels permuted
by ``default_rng(1000 + seed).permutation`` identically in train and test (before patching).
Every model trains for the same number of optimiser steps (batch 64) with the estimator's
default sizes. Context rows: ``SVC()``, ``StandardScaler + LogisticRegression(max_iter=5000)``
and ``KNeighborsClassifier(1)``.

``--quick``: digits 8x8 only, fraction 0.1, ViT and VIOLIN (embed 16, one block), 1 seed,
30 steps, context rows.
"""

import json
import math
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from sklearn_icml26.datasets import (
    make_digits_on_canvas,
    make_local_pattern_images,
)
from sklearn_icml26.utils._parallel import Parallel, delayed
from sklearn_icml26.vision import ViolinViTClassifier

from _common import (
    benchmark_parser,
    markdown_table,
    measure,
    target,
    write_results,
)

FRACTIONS = (0.1, 0.25, 1.0)
OURS = {"ViT": dict(mask=None), "VIOLIN": dict(mask="learned"),
        "VIOLIN scale_init=ones": dict(mask="learned", scale_init="ones"),
        "scale-only": dict(mask="ones")}
_DATA = {}  # per-process cache of the arms' data
REFERENCES = ("sklearn.SVC", "sklearn.LogisticRegression", "sklearn.KNeighborsClassifier(1)")


def _arm_data(arm, canvas, pattern_size):
    key = (arm, canvas, pattern_size)
    if key not in _DATA:
        _DATA[key] = _make_arm_data(arm, canvas, pattern_size)
    return _DATA[key]


def _make_arm_data(arm, canvas, pattern_size):
    if arm == "digits 8x8":
        d = load_digits()
        return d.data / 16.0, d.target, (8, 8)
    if arm.startswith("digits on"):
        X, y = make_digits_on_canvas((canvas, canvas), noise=0.2, random_state=0)
        return X, y, (canvas, canvas)
    X, y = make_local_pattern_images(1800, (pattern_size, pattern_size), noise=0.3,
                                     random_state=0)
    return X, y, (pattern_size, pattern_size)


def _split(arm, seed, fraction, shuffle, canvas, pattern_size):
    X, y, shape = _arm_data(arm, canvas, pattern_size)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)
    if fraction < 1.0:
        Xtr, _, ytr, _ = train_test_split(Xtr, ytr, train_size=fraction, stratify=ytr,
                                          random_state=seed)
    if shuffle:
        perm = np.random.default_rng(1000 + seed).permutation(X.shape[1])
        Xtr, Xte = Xtr[:, perm], Xte[:, perm]
    return Xtr, ytr, Xte, yte, shape


def _model(method, seed, steps, n_train, shape, patch, small, lr=1e-3):
    if method == "sklearn.SVC":
        return SVC()
    if method == "sklearn.LogisticRegression":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
    if method == "sklearn.KNeighborsClassifier(1)":
        return KNeighborsClassifier(1)
    epochs = max(1, math.ceil(steps / math.ceil(n_train / 64)))
    size = dict(embed_dim=16, depth=1, num_heads=2) if small else {}
    return ViolinViTClassifier(image_shape=shape, patch_size=patch, max_epochs=epochs,
                               batch_size=64, lr=lr, random_state=seed, **size,
                               **OURS[method])


_WARM = []


def _fit_one(job, steps, canvas, pattern_size, canvas_patch, small, lr, pattern_patch):
    """One (arm, seed, fraction, method, shuffled) fit, measured by ``measure`` (RSS).

    Not a ``run_arms`` arm: the fits go to parallel workers seed-major, are logged and resumed
    one by one (``--resume``), and ``summarise`` pools the seeds of a setting into one row
    with the paired deltas to the ViT.
    """
    arm, seed, fraction, method, shuffle = job
    torch.set_num_threads(1)
    with threadpool_limits(1):
        if not _WARM:  # first-use imports and allocations out of the first timed fit
            Xw = np.random.default_rng(0).normal(size=(8, 16))
            ViolinViTClassifier(embed_dim=8, depth=1, num_heads=2, max_epochs=1).fit(
                Xw, np.arange(8) % 2)
            _WARM.append(True)
        Xtr, ytr, Xte, yte, shape = _split(arm, seed, fraction, shuffle, canvas, pattern_size)
        patch = (canvas_patch if arm.startswith("digits on") else
                 pattern_patch if arm.startswith("local") else 1)
        model = _model(method, seed, steps, len(ytr), shape, patch, small, lr)
        m = measure(model.fit, Xtr, ytr, memory="rss")
        acc = float(model.score(Xte, yte))
    out = {"arm": arm, "seed": seed, "fraction": fraction, "method": method,
           "shuffled": shuffle, "accuracy": acc, "n_train": len(ytr), **m.columns()}
    if isinstance(model, ViolinViTClassifier):
        out.update(n_tokens=model.n_tokens_, epochs=model.n_iter_,
                   steps=model.n_iter_ * math.ceil(len(ytr) / 64))
    return out


def _jobs(arms, seeds, methods_low, references, fractions=FRACTIONS):
    jobs = []
    for seed in seeds:  # seed-major: partial results hold complete paired seeds
        for arm in arms:
            for fraction in fractions:
                methods = methods_low if fraction < 1.0 else ["ViT", "VIOLIN"]
                jobs += [(arm, seed, fraction, m, False) for m in methods]
                if fraction == 0.1:
                    jobs += [(arm, seed, fraction, m, True) for m in ("ViT", "VIOLIN")]
                jobs += [(arm, seed, fraction, m, False) for m in references]
    return jobs


def _block(text):
    """``"arm:seed"`` or ``"arm:seed:f1,f2"`` -> (arm, seed, fractions)."""
    parts = text.split(":")
    fractions = FRACTIONS if len(parts) < 3 else tuple(float(f) for f in parts[2].split(","))
    return parts[0], int(parts[1]), fractions


def _fits_log(output):
    return Path(f"{output}.fits.jsonl") if output else None


def _dataset(arm, fraction, shuffled):
    return f"{arm} {round(fraction * 100)}%" + (" shuffled" if shuffled else "")


def summarise(fits):
    """One row per (arm, fraction, shuffled, method): accuracy and the paired delta vs ViT."""
    groups = {}
    for f in fits:
        groups.setdefault((f["arm"], f["fraction"], f["shuffled"]), {}).setdefault(
            f["method"], {})[f["seed"]] = f
    rows = []
    for (arm, fraction, shuffled), by_method in groups.items():
        vit = by_method.get("ViT", {})
        for method, per_seed in by_method.items():
            seeds = sorted(per_seed)
            acc = np.array([per_seed[s]["accuracy"] for s in seeds])
            row = {"dataset": _dataset(arm, fraction, shuffled),
                   "method": method if method.startswith("sklearn") else
                   f"ViolinViTClassifier[{method}]",
                   "arm": arm, "fraction": fraction, "shuffled": shuffled, "variant": method,
                   "accuracy": float(acc.mean()),
                   "accuracy_sd": float(acc.std(ddof=1)) if len(acc) > 1 else 0.0,
                   "accuracy_per_seed": acc.tolist(), "seeds": seeds,
                   "fit_seconds": float(np.mean([per_seed[s]["fit_seconds"] for s in seeds])),
                   "peak_rss_mb": float(max(per_seed[s]["peak_rss_mb"] for s in seeds))}
            if "n_tokens" in per_seed[seeds[0]]:
                row["n_tokens"] = per_seed[seeds[0]]["n_tokens"]
                row["steps"] = per_seed[seeds[0]]["steps"]
            paired = [s for s in seeds if s in vit]
            if method != "ViT" and paired:
                d = np.array([per_seed[s]["accuracy"] - vit[s]["accuracy"] for s in paired]) * 100
                row.update({"delta_vs_vit_points": float(d.mean()),
                            "delta_vs_vit_sd": float(d.std(ddof=1)) if len(d) > 1 else 0.0,
                            "delta_per_seed": d.tolist(),
                            "seeds_ahead_of_vit": int((d > 0).sum()),
                            "seeds_paired": len(paired)})
            rows.append(row)
    order = {m: i for i, m in enumerate([*OURS, *REFERENCES])}
    rows.sort(key=lambda r: (r["arm"], r["shuffled"], r["fraction"], order.get(r["variant"], 99)))
    return rows


def _find(rows, arm, fraction, variant, shuffled=False):
    for r in rows:
        if (r["arm"], r["fraction"], r["variant"], r["shuffled"]) == (arm, fraction, variant,
                                                                        shuffled):
            return r
    return None


def _chance(arm):
    return 0.25 if arm.startswith("local") else 0.1


def _at_chance(rows, arm, fraction, shuffled=False, margin=0.05):
    """Whether ViT and VIOLIN both score below chance + ``margin`` (then a delta is noise)."""
    accs = [r["accuracy"] for m in ("ViT", "VIOLIN")
            if (r := _find(rows, arm, fraction, m, shuffled)) is not None]
    return bool(accs) and max(accs) < _chance(arm) + margin, accs


def _flag_chance(tg, rows, arm, fraction, shuffled=False):
    """Mark a target decided at chance level: ``at_chance`` and a remark after the number."""
    low, accs = _at_chance(rows, arm, fraction, shuffled)
    tg["at_chance"] = low
    if low:
        tg["measured"] += (f" (AT CHANCE: ViT / VIOLIN accuracy "
                               f"{' / '.join(f'{a:.3f}' for a in accs)}, chance "
                               f"{_chance(arm):.2f}; noise, not a test of the prior)")
    return tg


def targets(rows, fits, arms):
    out = []
    for arm in arms:
        for fraction in (0.1, 0.25):
            # the target holds "for one initialisation": the default (scale ~ N(0, 0.5^2))
            # or scale_init="ones" where it ran; both are reported
            inits = [(name, r) for name in ("VIOLIN", "VIOLIN scale_init=ones")
                     if (r := _find(rows, arm, fraction, name)) is not None
                     and "delta_vs_vit_points" in r]
            if not inits:
                continue
            parts, met_by = [], None
            for name, r in inits:
                n = r["seeds_paired"]
                need = math.ceil(0.8 * n)
                ok = bool(r["delta_vs_vit_points"] >= 1.0 and r["seeds_ahead_of_vit"] >= need)
                met_by = met_by or (name if ok else None)
                label = "" if len(inits) == 1 else (
                    "default init " if name == "VIOLIN" else "scale_init=ones ")
                parts.append(f"{label}{r['delta_vs_vit_points']:+.2f} +- "
                             f"{r['delta_vs_vit_sd']:.2f} points, ahead on "
                             f"{r['seeds_ahead_of_vit']}/{n}")
            v = dict(inits).get(met_by or "VIOLIN", inits[0][1])
            n = v["seeds_paired"]
            need = math.ceil(0.8 * n)
            d = v["delta_vs_vit_points"]
            out.append(target(f"{arm} {round(fraction * 100)}%: VIOLIN - ViT >= +1.0 point, "
                              f"ahead on >= {need}/{n} seeds"
                              + (" (either initialisation)" if len(inits) > 1 else ""),
                              ">= +1.0, ahead on >= 4/5 seeds",
                              "; ".join(parts),
                              met_by is not None))
            _flag_chance(out[-1], rows, arm, fraction)
            s = _find(rows, arm, fraction, "scale-only")
            if s is not None and "delta_vs_vit_points" in s:
                gain = d
                vs_scale = d - s["delta_vs_vit_points"]
                which = " (scale_init=ones)" if v["variant"] != "VIOLIN" else ""
                out.append(target(f"{arm} {round(fraction * 100)}%: VIOLIN{which} - "
                                  f"scale-only >= half of VIOLIN{which} - ViT",
                                  ">= 0.5 x (VIOLIN - ViT)",
                                  f"{vs_scale:+.2f} vs 0.5 x {gain:+.2f} points",
                                  bool(vs_scale >= 0.5 * gain)))
                _flag_chance(out[-1], rows, arm, fraction)
        v = _find(rows, arm, 1.0, "VIOLIN")
        if v is not None and "delta_vs_vit_points" in v:
            d = v["delta_vs_vit_points"]
            out.append(target(f"{arm} 100%: VIOLIN - ViT >= -0.5 point",
                              ">= -0.5",
                              f"{d:+.2f} points",
                              bool(d >= -0.5)))
            _flag_chance(out[-1], rows, arm, 1.0)
        v = _find(rows, arm, 0.1, "VIOLIN", shuffled=True)
        if v is not None and "delta_vs_vit_points" in v:
            d = v["delta_vs_vit_points"]
            out.append(target(f"{arm} 10% shuffled: the gain vanishes (|delta| <= 1) or "
                              "reverses",
                              "|delta| <= 1 or delta < 0",
                              f"{d:+.2f} points",
                              bool(abs(d) <= 1.0 or d < 0)))
            _flag_chance(out[-1], rows, arm, 0.1, shuffled=True)
    # fit time at N = 64 tokens, paired fits of the same run
    ratios = []
    by = {}
    for f in fits:
        if f.get("n_tokens") == 64 and f["method"] in ("ViT", "VIOLIN"):
            by.setdefault((f["arm"], f["seed"], f["fraction"], f["shuffled"]), {})[
                f["method"]] = f["fit_seconds"]
    ratios = [p["VIOLIN"] / p["ViT"] for p in by.values() if len(p) == 2]
    if ratios:
        r = float(np.median(ratios))
        out.append(target("VIOLIN fit time / ViT fit time at N = 64 tokens (median of "
                          f"{len(ratios)} paired fits)",
                          "<= 1.5",
                          r,
                          bool(r <= 1.5)))
    return out


def main(argv=None):
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2, 3, 4])
    parser.add_argument("--steps", type=int, default=800)
    parser.add_argument("--arms", nargs="*", default=["digits", "canvas", "patterns"])
    parser.add_argument("--canvas", type=int, default=16)
    parser.add_argument("--canvas-patch", type=int, default=1)
    parser.add_argument("--pattern-size", type=int, default=16)
    parser.add_argument("--pattern-patch", type=int, default=1)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--schedule", nargs="*", default=None,
                        help="explicit order of arm:seed[:fractions] blocks (e.g. digits:0 "
                             "patterns:0:0.1,0.25 canvas:0:1.0), instead of every arm for "
                             "every seed at every fraction")
    parser.add_argument("--resume", action="store_true",
                        help="reload the fits already logged next to --output "
                             "(<output>.fits.jsonl) and run only the missing ones")
    parser.add_argument("--ones-init", action="store_true",
                        help="also VIOLIN with scale_init='ones' at 10 %% and 25 %%")
    parser.add_argument("--render-only", action="store_true",
                        help="with --resume: write the results of the logged fits of the "
                             "schedule and run nothing")
    parser.add_argument("--note", action="append", default=[],
                        help="a note to add to the results (repeatable)")
    parser.add_argument("--protocol-note", default="",
                        help="what this run reduced from the full protocol, and why")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    threadpool_limits(1)
    warnings.simplefilter("ignore", ConvergenceWarning)
    start = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - start:7.1f} s] {msg}", flush=True)

    names = {"digits": "digits 8x8", "canvas": f"digits on {args.canvas}x{args.canvas} canvas",
             "patterns": f"local patterns {args.pattern_size}x{args.pattern_size}"}
    if args.quick:
        arms, seeds, steps, small = ["digits 8x8"], [0], 30, True
        methods_low = ["ViT", "VIOLIN"]
        jobs = [("digits 8x8", 0, 0.1, m, False) for m in (*methods_low, *REFERENCES)]
    else:
        steps, small = args.steps, False
        methods_low = ["ViT", "VIOLIN", "scale-only"] + (
            ["VIOLIN scale_init=ones"] if args.ones_init else [])
        blocks = ([_block(b) for b in args.schedule] if args.schedule else
                  [(a, s, FRACTIONS) for s in args.seeds for a in args.arms])
        arms = list(dict.fromkeys(names[a] for a, _, _ in blocks))
        seeds = sorted({s for _, s, _ in blocks})
        jobs = [j for a, s, fr in blocks for j in _jobs([names[a]], [s], methods_low,
                                                         REFERENCES, fr)]
    canvas_tokens = (args.canvas // args.canvas_patch) ** 2
    pattern_tokens = (args.pattern_size // args.pattern_patch) ** 2
    protocol = (
        f"{'QUICK: ' if args.quick else ''}arms {arms}; "
        + (f"arm:seed blocks in this order: {args.schedule}; " if args.schedule and
           not args.quick else f"seeds {seeds}; ")
        + f"{steps} optimiser steps "
        f"per ViolinViTClassifier fit (batch 64, AdamW lr {args.lr:g}, weight decay 0.05, "
        + ("embed 16, 1 block, 2 heads" if small else "embed 32, 2 blocks, 4 heads, MLP ratio 2")
        + "); split train_test_split(test_size=0.3, stratify=y, random_state=seed), training "
        f"fractions {list(FRACTIONS)} (stratified, random_state=seed); models at 10 % and 25 %: "
        f"{methods_low}; at 100 %: ViT and VIOLIN; shuffle control at 10 %: ViT and VIOLIN with "
        "the pixels permuted by default_rng(1000 + seed) in train and test before patching; "
        f"canvas arm: noise 0.2, patch {args.canvas_patch} ({canvas_tokens} tokens); pattern "
        f"arm: 1,800 images, noise 0.3, patch {args.pattern_patch} "
        f"({pattern_tokens} tokens). Context rows: SVC(), StandardScaler + "
        "LogisticRegression(max_iter=5000), KNeighborsClassifier(1)."
        + (f" REDUCED: {args.protocol_note}" if args.protocol_note else ""))
    notes = [
        "accuracy: test accuracy, mean and sd over seeds; delta_vs_vit_points: paired "
        "(same seed, same split) accuracy difference to the ViT in points, with the number of "
        "seeds where the model is ahead.",
        "fit_seconds: wall time of one fit, one torch thread per worker, "
        f"{args.n_jobs} worker(s) on a machine shared with other jobs (contention varies "
        "during the run; the fit-time ratio pairs fits of the same seed and setting). "
        "peak_rss_mb: the worker's peak resident set size (torch's allocator included).",
        "The seed-to-seed spread of the transformers is several points at this budget; "
        "read the deltas with their sd and sign counts.",
    ]
    fits = []
    log_path = None if args.quick else _fits_log(args.output)
    if args.resume and log_path is not None and log_path.exists():
        wanted = {tuple(j) for j in jobs}
        for line in log_path.read_text().splitlines():
            f = json.loads(line)
            key = (f["arm"], f["seed"], f["fraction"], f["method"], f["shuffled"])
            if key in wanted and key not in {(g["arm"], g["seed"], g["fraction"], g["method"],
                                              g["shuffled"]) for g in fits}:
                fits.append(f)
        done = {(f["arm"], f["seed"], f["fraction"], f["method"], f["shuffled"]) for f in fits}
        jobs_left = [] if args.render_only else [j for j in jobs if tuple(j) not in done]
        log(f"resumed {len(fits)} fits from {log_path}; {len(jobs_left)} to run")
    else:
        jobs_left = jobs
        if log_path is not None:
            log_path.write_text("")
    path = None
    gen = Parallel(n_jobs=args.n_jobs, return_as="generator_unordered")(
        delayed(_fit_one)(job, steps, args.canvas, args.pattern_size, args.canvas_patch, small,
                          args.lr, args.pattern_patch)
        for job in jobs_left)
    for fit in gen:
        fits.append(fit)
        if log_path is not None:
            with log_path.open("a") as fh:
                fh.write(json.dumps(fit) + "\n")
        log(f"{len(fits)}/{len(jobs)} {_dataset(fit['arm'], fit['fraction'], fit['shuffled'])} "
            f"{fit['method']} seed={fit['seed']}: acc={fit['accuracy']:.3f} "
            f"({fit['fit_seconds']:.1f} s)")
        if not args.quick and (len(fits) % 5 == 0 or len(fits) == len(jobs)):
            rows = summarise(fits)
            path = write_results("violin", rows, False, args.output,
                                 targets=targets(rows, fits, arms),
                                 protocol=protocol + f" [{len(fits)} of {len(jobs)} fits done]",
                                 notes=notes)
    rows = summarise(fits)
    tg = targets(rows, fits, arms)
    path = write_results("violin", rows, args.quick, args.output, targets=tg,
                         protocol=protocol,
                         notes=notes + args.note + [
                             f"{len(fits)} fits; their fit times add up to "
                             f"{sum(f['fit_seconds'] for f in fits):.0f} s"])
    print(markdown_table(rows, ["dataset", "method", "accuracy", "accuracy_sd",
                                "delta_vs_vit_points", "seeds_ahead_of_vit", "fit_seconds"],
                         floatfmt=".3f"))
    print()
    print(markdown_table(tg, ["target", "spec", "measured", "met"]))
    print(f"\nwrote {path} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
