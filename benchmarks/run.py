"""Run the benchmarks of the source checkout: ``python benchmarks/run.py NAME|all [--quick]``.

``NAME``
    run ``benchmarks/bench_<NAME>.py`` (its full run writes ``results/<NAME>.json``).
``all``
    run every benchmark; the full runs then regenerate the README's benchmark tables.
``render``
    only regenerate the README's benchmark tables from ``results/*.json``.
``--list``
    list the benchmarks.

The package must be installed (``pip install -e .``); the scripts import ``_common`` from this
folder. Every run prints the command it runs; the exit status is non-zero if any run failed.
"""

import argparse
import subprocess
import sys

from _common import BENCHMARK_DIR, available_benchmarks, update_readme


def render():
    """Regenerate the README's benchmark tables; print whether they changed."""
    changed = update_readme()
    print("README.md benchmark tables " + ("regenerated." if changed else "already up to date."))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python benchmarks/run.py", description=__doc__.split(
        "\n", 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", nargs="?", help="benchmark name, 'all', or 'render'")
    parser.add_argument("--quick", action="store_true", help="seconds-long version (CI)")
    parser.add_argument("--list", action="store_true", help="list the benchmarks")
    args = parser.parse_args(argv)
    available = available_benchmarks()
    if args.list or args.name is None:
        print("Benchmarks: " + ", ".join(available))
        return 0 if args.list else 2
    if args.name == "render":
        return render()
    names = available if args.name == "all" else [args.name]
    unknown = [n for n in names if n not in available]
    if unknown:
        parser.error(f"unknown benchmark {unknown}; available: {available}.")
    status = 0
    for name in names:
        cmd = [sys.executable, str(BENCHMARK_DIR / f"bench_{name}.py")]
        if args.quick:
            cmd.append("--quick")
        print(f"$ {' '.join(cmd)}", flush=True)
        status = subprocess.call(cmd) or status
    if args.name == "all" and not args.quick:
        render()
    return status


if __name__ == "__main__":
    sys.exit(main())
