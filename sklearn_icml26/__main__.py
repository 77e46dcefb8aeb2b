"""Command line: ``python -m sklearn_icml26`` (also installed as ``sklearn-icml26``).

``demo [NAME ...]``
    run the registered demos (all of them by default) on their real data and print one table.
``versions``
    print the system and dependency versions.

Benchmarks are not part of the installed package: they run from the source checkout with
``python benchmarks/run.py NAME|all|render [--quick]``; ``benchmark`` here only says so.
"""

import argparse
import importlib
import sys
import textwrap
import time

from .utils._registry import DEMO_COLUMNS, DEMOS
from .utils._threads import limit_threads

BENCHMARK_MOVED = (
    "Benchmarks are not part of the installed package: from a clone of the source repository "
    "(with the package installed, e.g. pip install -e .) run\n"
    "    python benchmarks/run.py NAME|all [--quick]\n"
    "    python benchmarks/run.py render     # regenerate the README's benchmark tables\n"
    "    python benchmarks/run.py --list"
)


def _list_demos():
    if not DEMOS:
        print("No demos are registered yet.")
        return
    print("Registered demos:")
    for demo in DEMOS.values():
        print(f"  {demo.name:<14} {demo.description} (data: {demo.dataset})")


def run_demos(names, data_home=None, fast=False, verbose=1):
    """Run demos by name and return their rows as one DataFrame (missing data is reported).

    Each demo runs with one thread in every OpenMP/BLAS pool and in torch (many small fits
    spin on a shared machine with the default counts); the counts are restored after it.
    With ``verbose``, a line on standard error says when each demo starts and ends.
    """
    import pandas as pd

    unknown = [n for n in names if n not in DEMOS]
    if unknown:
        raise SystemExit(
            f"Unknown demo(s) {unknown}; registered: {sorted(DEMOS) or 'none yet'}."
        )
    frames, problems, notes = [], [], []
    for i, name in enumerate(names, 1):
        module_name, func_name = DEMOS[name].target.split(":")
        func = getattr(importlib.import_module(module_name), func_name)
        if verbose:
            print(f"[demo {i}/{len(names)}] {name}: {DEMOS[name].description} ...",
                  file=sys.stderr, flush=True)
        start = time.perf_counter()
        try:
            with limit_threads(1):
                frame = func(data_home=data_home, verbose=verbose, fast=fast)
        except (OSError, ImportError) as exc:  # data missing and not downloadable, or an
            problems.append(f"{name}: {exc}")  # optional dependency absent: say so, go on
            continue
        finally:
            if verbose:
                print(f"[demo {i}/{len(names)}] {name}: {time.perf_counter() - start:.0f} s",
                      file=sys.stderr, flush=True)
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


# the printed demo table fits in this many columns; a word longer than _LONGEST_WORD is broken
_WIDTH = 100
_LONGEST_WORD = 30


def _text_widths(rows, columns, budget):
    """Widths of the text columns within ``budget``: each gets at least its longest word (up
    to ``_LONGEST_WORD``, less when even that does not fit), the rest of the budget goes to the
    columns that need it most."""
    cells = {c: [str(v) for v in rows[c]] for c in columns}
    # tabulate pads a header by two characters
    natural = {c: max(len(c) + 2, *map(len, cells[c])) for c in columns}
    if sum(natural.values()) <= budget:
        return natural
    widths = {c: max(len(c) + 2, min(natural[c], _LONGEST_WORD,
                                     max(len(w) for v in cells[c] for w in v.split() or [""])))
              for c in columns}
    while sum(widths.values()) > budget and any(widths[c] > len(c) + 2 for c in columns):
        c = max(columns, key=lambda c: widths[c])  # long words that do not fit: break them
        widths[c] -= 1
    left = budget - sum(widths.values())
    while left > 0 and any(widths[c] < natural[c] for c in columns):
        c = max(columns, key=lambda c: natural[c] - widths[c])
        widths[c] += 1
        left -= 1
    return widths


def format_demo_table(table, floatfmt=".4g"):
    """The demo table as text within 100 columns: one block per data set, long cells wrapped.

    Parameters
    ----------
    table : pandas.DataFrame
        As returned by :func:`run_demos`.
    floatfmt : str, default=".4g"
        Format of the numbers.

    Returns
    -------
    text : str
        ``dataset: <name>`` then a plain table of the other columns, for each data set.
    """
    from tabulate import tabulate

    columns = [c for c in DEMO_COLUMNS if c != "dataset"]
    numeric = ["value", "anchor_value", "seconds"]
    text = [c for c in columns if c not in numeric]
    blocks = []
    for dataset in dict.fromkeys(table["dataset"]) if len(table) else ():
        rows = table[table["dataset"] == dataset][columns].copy()
        for c in numeric:
            rows[c] = [v if isinstance(v, str) else format(float(v), floatfmt) for v in rows[c]]
        used = sum(max(len(c) + 2, *map(len, rows[c])) for c in numeric) + 2 * (len(columns) - 1)
        widths = _text_widths(rows, text, _WIDTH - used)
        head = textwrap.fill(f"dataset: {dataset}", _WIDTH, subsequent_indent="  ")
        blocks.append(head + "\n" + tabulate(
            rows.values.tolist(), headers=columns, tablefmt="simple", numalign="right",
            disable_numparse=True, colalign=["right" if c in numeric else "left"
                                             for c in columns],
            maxcolwidths=[widths.get(c) for c in columns]))
    return "\n\n".join(blocks) if blocks else "(no rows)"


def _demo(args):
    if args.list or not DEMOS:
        _list_demos()
        return 0
    names = args.names or list(DEMOS)
    table = run_demos(names, data_home=args.data_home, fast=args.fast, verbose=1)
    print(format_demo_table(table))
    print(_legend(table))
    ran = set(table["method"].map(str)) if len(table) else set()
    if not ran:
        print("No demo could run (see the messages above for the missing data).", file=sys.stderr)
        return 1
    return 0


def _benchmark(args):
    print(BENCHMARK_MOVED, file=sys.stderr)
    return 2


def _versions(args):
    from .utils._show_versions import show_versions

    show_versions()
    return 0


def build_parser():
    """The argument parser of the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m sklearn_icml26",
        description="ICML 2026 methods as scikit-learn estimators: demos and versions.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="run demos on real data and print a results table")
    demo.add_argument("names", nargs="*", help="demos to run (default: all registered)")
    demo.add_argument("--list", action="store_true", help="list the registered demos")
    demo.add_argument("--fast", action="store_true", help="smaller settings, for a quick look")
    demo.add_argument("--data-home", default=None,
                      help="data folder (default: $SKLEARN_ICML26_DATA, else "
                           "~/sklearn_icml26_data)")
    demo.set_defaults(func=_demo)

    bench = sub.add_parser(
        "benchmark", help="moved: run `python benchmarks/run.py` from the source checkout",
        add_help=False,
    )
    bench.set_defaults(func=_benchmark)

    versions = sub.add_parser("versions", help="print system and dependency versions")
    versions.set_defaults(func=_versions)
    return parser


def main(argv=None):
    """Entry point of ``python -m sklearn_icml26`` and ``sklearn-icml26``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["benchmark"]:  # whatever follows: say where the benchmarks are
        return _benchmark(None)
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
