"""Command line: ``python -m sklearn_icml26`` (also installed as ``sklearn-icml26``).

``demo [NAME ...]``
    run the registered demos (all of them by default) on their real data and print one table.
``benchmark NAME|all [--quick]``
    run ``benchmarks/bench_<NAME>.py`` from the source checkout; ``all`` (full runs) then
    regenerates the README's benchmark tables from ``benchmarks/results/*.json``.
``benchmark render``
    only regenerate those tables.
``versions``
    print the system and dependency versions.
"""

import argparse
import importlib
import subprocess
import sys
import time
from pathlib import Path

from .utils._registry import DEMO_COLUMNS, DEMOS

BENCHMARK_DIR = Path(__file__).resolve().parents[1] / "benchmarks"


def _available_benchmarks():
    return sorted(p.stem.removeprefix("bench_") for p in BENCHMARK_DIR.glob("bench_*.py"))


def _list_demos():
    if not DEMOS:
        print("No demos are registered yet.")
        return
    print("Registered demos:")
    for demo in DEMOS.values():
        print(f"  {demo.name:<14} {demo.description} (data: {demo.dataset})")


def run_demos(names, data_home=None, fast=False, verbose=1):
    """Run demos by name and return their rows as one DataFrame (missing data is reported)."""
    import pandas as pd

    from .utils import progress_bar

    unknown = [n for n in names if n not in DEMOS]
    if unknown:
        raise SystemExit(
            f"Unknown demo(s) {unknown}; registered: {sorted(DEMOS) or 'none yet'}."
        )
    frames, problems, notes = [], [], []
    for name in progress_bar(names, verbose=verbose and len(names) > 1, desc="demos"):
        module_name, func_name = DEMOS[name].target.split(":")
        func = getattr(importlib.import_module(module_name), func_name)
        start = time.perf_counter()
        try:
            frame = func(data_home=data_home, verbose=verbose, fast=fast)
        except OSError as exc:  # data missing and not downloadable: say so, go on
            problems.append(f"{name}: {exc}")
            continue
        if frame.attrs.get("note"):
            notes.append(frame.attrs["note"])
        frame = frame.copy()
        if "seconds" not in frame or frame["seconds"].isna().all():
            frame["seconds"] = time.perf_counter() - start
        frames.append(frame)
    for problem in problems:
        print(f"skipped {problem}", file=sys.stderr)
    if not frames:
        return pd.DataFrame(columns=DEMO_COLUMNS)
    table = pd.concat(frames, ignore_index=True)[DEMO_COLUMNS]
    table.attrs["notes"] = notes  # what a demo says about anchors it could not run
    return table


# metric name (lower case) fragments -> which way is better, for the legend under the demo table
_LOWER = ("rmse", "mae", "error", "risk", "cd-l1", "chamfer", "std_err", "loss", "seconds", "l2",
          "residual", "chunks")
_HIGHER = ("accuracy", "acc", "purity", "audrc", "nc", "consistency", "recall", "mrr", "ndcg",
           "map", "f1", "generality", "locality", "reliability", "spearman", "auc", "precision",
           "return")


def _direction(metric):
    words = metric.lower().replace("(", " ").replace("@", " ").split()
    if any(w.startswith(_LOWER) for w in words):
        return "lower is better"
    if any(w.startswith(_HIGHER) for w in words):
        return "higher is better"
    return "an estimate: compare it with the anchor's, no better direction"


def _legend(table):
    """The lines under the demo table that say how to read it."""
    lines = ["", "How to read the table:",
             "  value: the method's metric; anchor_value: the same metric of the tool named in "
             "`anchor`, on the same data and split.",
             "  seconds: wall-clock seconds of the method's fit and prediction on this machine "
             "(of the whole demo where it does not time the method alone)."]
    for metric in dict.fromkeys(table["metric"].map(str)) if len(table) else ():
        lines.append(f"  {metric}: {_direction(metric)}.")
    lines.extend(f"  Note, {note}" for note in table.attrs.get("notes", ()))
    return "\n".join(lines)


def _demo(args):
    if args.list or not DEMOS:
        _list_demos()
        return 0
    names = args.names or list(DEMOS)
    table = run_demos(names, data_home=args.data_home, fast=args.fast, verbose=1)
    print(table.to_markdown(index=False, floatfmt=".4g"))
    print(_legend(table))
    ran = set(table["method"].map(str)) if len(table) else set()
    if not ran:
        print("No demo could run (see the messages above for the missing data).", file=sys.stderr)
        return 1
    return 0


def _render(args):
    from .utils._benchmark import update_readme

    changed = update_readme()
    print("README.md benchmark tables " + ("regenerated." if changed else "already up to date."))
    return 0


def _benchmark(args):
    if args.name == "render":
        return _render(args)
    available = _available_benchmarks()
    if not BENCHMARK_DIR.is_dir():
        raise SystemExit(
            f"Benchmarks live in the source checkout ({BENCHMARK_DIR} not found); "
            "clone the repository and install it with pip install -e ."
        )
    names = available if args.name == "all" else [args.name]
    unknown = [n for n in names if n not in available]
    if unknown:
        raise SystemExit(f"Unknown benchmark {unknown}; available: {available or 'none yet'}.")
    status = 0
    for name in names:
        cmd = [sys.executable, str(BENCHMARK_DIR / f"bench_{name}.py")]
        if args.quick:
            cmd.append("--quick")
        print(f"$ {' '.join(cmd)}", flush=True)
        status = subprocess.call(cmd) or status
    if args.name == "all" and not args.quick:
        _render(args)
    return status


def _versions(args):
    from .utils import show_versions

    show_versions()
    return 0


def build_parser():
    """The argument parser of the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m sklearn_icml26",
        description="ICML 2026 methods as scikit-learn estimators: demos and benchmarks.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="run demos on real data and print a results table")
    demo.add_argument("names", nargs="*", help="demos to run (default: all registered)")
    demo.add_argument("--list", action="store_true", help="list the registered demos")
    demo.add_argument("--fast", action="store_true", help="smaller settings, for a quick look")
    demo.add_argument("--data-home", default=None, help="data folder (default: see README)")
    demo.set_defaults(func=_demo)

    bench = sub.add_parser("benchmark", help="run benchmarks/bench_NAME.py (or all)")
    bench.add_argument(
        "name", help="benchmark name, 'all', or 'render' (regenerate README tables from results)"
    )
    bench.add_argument("--quick", action="store_true", help="seconds-long version (CI)")
    bench.set_defaults(func=_benchmark)

    versions = sub.add_parser("versions", help="print system and dependency versions")
    versions.set_defaults(func=_versions)
    return parser


def main(argv=None):
    """Entry point of ``python -m sklearn_icml26`` and ``sklearn-icml26``."""
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
