"""The benchmark protocol shared by ``benchmarks/bench_*.py`` (run from the source checkout).

Not part of the installed package: the scripts import it as a sibling module
(``from _common import ...``) when run as ``python benchmarks/bench_<name>.py``, and
``python benchmarks/run.py`` runs them. One protocol for every benchmark:

* **arms** (:class:`Arm`): a method or an anchor, a name and a callable, run by one loop
  (:func:`run_arms`) over the data sets a script loads;
* **measure** (:func:`measure`): wall time and peak memory of one call, recording WHICH memory
  it measured under its own column: ``peak_traced_mb`` (Python-level allocations traced by
  :mod:`tracemalloc`, numpy included, torch's CPU allocator not) or ``peak_rss_mb`` (the
  process's maximum resident set size so far, ``ru_maxrss``: a high-water mark of the whole
  process, not of the call alone);
* **targets** (:func:`target`): ``{"target", "spec", "measured", "met"}``, the README's summary;
* **results**: :func:`write_results` writes ``benchmarks/results/<name>.json`` in one shape::

    {"benchmark": "<name>", "quick": false, "machine": {...},
     "rows": [{"dataset": "...", "method": "...", "<metric>": value, ...,
               "fit_seconds": s, "peak_traced_mb" or "peak_rss_mb": m}]}

  and :func:`update_readme` (``python benchmarks/run.py render``) regenerates the README's
  tables from the committed files.
"""

import argparse
import functools
import importlib.util
import json
import os
import platform
import resource
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Arm", "MEMORY_COLUMNS", "Measurement", "benchmark_parser", "format_cell",
           "load_benchmark", "load_results", "machine_info", "markdown_table", "measure",
           "peak_rss_mb", "plot_benchmark", "render_tables", "run_arms", "target",
           "update_readme", "use_workspace_data_home", "write_results"]

BENCHMARK_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCHMARK_DIR / "results"
REPOSITORY = BENCHMARK_DIR.parent
# the columns of a targets table and their displayed headers (the ``spec`` key is the goal)
TARGET_COLUMNS = ["target", "spec", "measured", "met"]
TARGET_HEADERS = {"spec": "goal"}
# which memory a row measured -> its column: never one name for two measures
MEMORY_COLUMNS = {"traced": "peak_traced_mb", "rss": "peak_rss_mb"}


def available_benchmarks():
    """Names of the ``bench_<name>.py`` scripts in this folder, sorted."""
    return sorted(p.stem.removeprefix("bench_") for p in BENCHMARK_DIR.glob("bench_*.py"))


def load_benchmark(name, module_name=None):
    """Import ``benchmarks/bench_<name>.py`` as a module (for tests of a benchmark's helpers).

    Parameters
    ----------
    name : str
        Benchmark name, the file's stem without ``bench_`` (``"skewd"``).
    module_name : str, default=None
        Name the module gets; default ``"bench_<name>_under_test"``.

    Returns
    -------
    module : module
        The executed script (its ``if __name__ == "__main__"`` block does not run).

    Raises
    ------
    FileNotFoundError
        If there is no such script in ``benchmarks/``.
    """
    path = BENCHMARK_DIR / f"bench_{name}.py"
    if not path.is_file():
        raise FileNotFoundError(f"no benchmark {name!r}: {path} does not exist; available: "
                                f"{available_benchmarks()}.")
    spec = importlib.util.spec_from_file_location(module_name or f"bench_{name}_under_test",
                                                  path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def peak_rss_mb():
    """The process's maximum resident set size so far (``ru_maxrss``), in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass
class Measurement:
    """What :func:`measure` returns: the call's result, its wall time and its peak memory.

    ``memory`` says which memory ``peak_mb`` is (``"traced"``, ``"rss"`` or None when not
    measured); :meth:`columns` gives the row entries under that memory's own column name.
    """

    result: object
    seconds: float
    memory: str | None
    peak_mb: float | None

    @property
    def memory_column(self):
        """``peak_traced_mb`` or ``peak_rss_mb`` (None when no memory was measured)."""
        return MEMORY_COLUMNS.get(self.memory)

    def columns(self, seconds="fit_seconds"):
        """``{seconds: ..., "peak_traced_mb" | "peak_rss_mb": ...}`` for a result row."""
        out = {seconds: self.seconds}
        if self.memory is not None:
            out[self.memory_column] = self.peak_mb
        return out


def measure(func, *args, memory="traced", **kwargs):
    """Call ``func(*args, **kwargs)`` and record its wall time and its peak memory.

    Parameters
    ----------
    func : callable
        What to measure.
    *args, **kwargs
        Passed to ``func``.
    memory : {"traced", "rss"} or None, default="traced"
        Which memory: ``"traced"``, the peak of Python-level allocations traced by
        :mod:`tracemalloc` during the call (numpy arrays included; torch's own CPU allocator
        is not traced; tracing slows Python-heavy code); ``"rss"``, the process's maximum
        resident set size after the call (a high-water mark since the process started);
        None, time only.

    Returns
    -------
    measurement : Measurement
        ``result``, ``seconds``, ``memory`` and ``peak_mb`` (MiB).
    """
    if memory not in (None, *MEMORY_COLUMNS):
        raise ValueError(f"memory must be one of {sorted(MEMORY_COLUMNS)} or None; "
                         f"got {memory!r}.")
    if memory != "traced":
        start = time.perf_counter()
        result = func(*args, **kwargs)
        seconds = time.perf_counter() - start
        return Measurement(result, seconds, memory, peak_rss_mb() if memory else None)
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    start = time.perf_counter()
    try:
        result = func(*args, **kwargs)
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not tracing:
            tracemalloc.stop()
    return Measurement(result, seconds, "traced", peak / 2**20)


@dataclass
class Arm:
    """One arm of a benchmark: the method or one of its anchors.

    Parameters
    ----------
    name : str
        The ``method`` of its rows.
    run : callable
        ``run(data) -> dict`` of metrics for one data set (what the script loaded); its call
        is measured.
    anchor : bool, default=False
        Whether this arm is an anchor (a tool the method's users would pick instead).
    extra : dict
        Entries added to each of its rows (settings worth recording).
    kwargs : dict
        Keyword arguments of its ``run`` besides the data set (``run(data, **kwargs)``), so
        that arms differing only in settings share one function.
    """

    name: str
    run: object
    anchor: bool = False
    extra: dict = field(default_factory=dict)
    kwargs: dict = field(default_factory=dict)


def run_arms(arms, datasets, *, memory="traced", seconds="fit_seconds", log=print,
             on_row=None):
    """The one benchmark loop: every arm on every data set, measured, one row each.

    Parameters
    ----------
    arms : list of Arm
        The method and its anchors.
    datasets : dict of str to object
        Data set name -> what each arm's ``run`` receives.
    memory : {"traced", "rss"} or None, default="traced"
        See :func:`measure`.
    seconds : str, default="fit_seconds"
        Column of the wall time.
    log : callable or None, default=print
        Called with one line per row.
    on_row : callable or None, default=None
        Called with each row as soon as it is made (before the next arm runs), e.g. to add
        entries that compare it with earlier rows, or to write partial results; it may edit
        the row in place.

    Returns
    -------
    rows : list of dict
        ``{"dataset", "method", "anchor", **metrics, seconds, memory column, **extra}``; an
        anchor that raises gets a row with its ``error`` instead (the method's error
        propagates).
    """
    rows = []
    for dataset, data in datasets.items():
        for arm in arms:
            base = {"dataset": dataset, "method": arm.name, "anchor": arm.anchor}
            try:
                m = measure(functools.partial(arm.run, **arm.kwargs), data, memory=memory)
            except Exception as exc:  # noqa: BLE001 - an anchor's failure is a result
                if not arm.anchor:
                    raise
                rows.append({**base, "error": f"{type(exc).__name__}: {exc}", **arm.extra})
                if log is not None:
                    log(f"{dataset:<24} {arm.name:<32} FAILED ({rows[-1]['error']})")
            else:
                rows.append({**base, **dict(m.result or {}), **m.columns(seconds),
                             **arm.extra})
                if log is not None:
                    log(f"{dataset:<24} {arm.name:<32} {m.seconds:8.2f} s")
            if on_row is not None:
                on_row(rows[-1])
    return rows


def target(name, spec, measured, met):
    """One target of a benchmark, in the shape :func:`write_results` and the README use.

    Parameters
    ----------
    name : str
        What is measured.
    spec : str
        The goal (``">= 0.8"``, a published value, ``"report"``).
    measured : object
        The measured value.
    met : bool
        Whether the goal is met.

    Returns
    -------
    target : dict
        ``{"target": name, "spec": spec, "measured": measured, "met": bool(met)}``.
    """
    return {"target": name, "spec": spec, "measured": measured, "met": bool(met)}


def machine_info():
    """CPU, thread counts and library versions of the machine running a benchmark.

    Returns
    -------
    info : dict
        JSON-serialisable description of the machine.
    """
    from sklearn_icml26.utils._show_versions import _versions

    system, deps = _versions()
    info = {
        "platform": system["machine"],
        "python": platform.python_version(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "versions": {k: v for k, v in deps.items() if v is not None},
    }
    try:
        import torch

        info["torch_threads"] = torch.get_num_threads()
    except ImportError:  # pragma: no cover
        pass
    return info


def write_results(name, rows, quick, path=None, *, targets=None, protocol=None, notes=None):
    """Write the result file of benchmark ``name`` and return its path.

    Parameters
    ----------
    name : str
        Benchmark name (``ese``, ``skewd``, ...).
    rows : list of dict
        One dict per (dataset, method); must hold ``dataset`` and ``method``; memory goes in
        ``peak_traced_mb`` or ``peak_rss_mb`` (a ``peak_memory_mb`` key is refused: it does not
        say which memory it is).
    quick : bool
        Whether this was the ``--quick`` run. Quick runs go to ``<name>_quick.json`` so that
        they never overwrite the committed full results.
    path : str or path-like, default=None
        Where to write; default ``benchmarks/results/<name>[_quick].json``.
    targets : list of dict, default=None
        The benchmark's targets checked on this run, each ``{"target": str, "measured": float,
        "met": bool, "spec": str}`` (``spec``: the goal, e.g. ``">= 0.8"`` or a published
        value); the README's summary shows them.
    protocol : str, default=None
        What was run (data, settings, and how ``--quick`` or a reduced run differs).
    notes : list of str, default=None
        How numbers were measured, what was left out and why.

    Returns
    -------
    path : pathlib.Path
        The written file.
    """
    for row in rows:
        missing = {"dataset", "method"} - set(row)
        if missing:
            raise ValueError(f"every row needs 'dataset' and 'method'; row {row} lacks {missing}")
        if "peak_memory_mb" in row:
            raise ValueError("'peak_memory_mb' does not say which memory it is: use "
                             f"{sorted(MEMORY_COLUMNS.values())} (see measure).")
    if path is None:
        path = RESULTS_DIR / (f"{name}_quick.json" if quick else f"{name}.json")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"benchmark": name, "quick": bool(quick), "machine": machine_info(), "rows": rows}
    for key, value in (("protocol", protocol), ("notes", notes), ("targets", targets)):
        if value is not None:
            payload[key] = value
    path.write_text(json.dumps(payload, indent=2, default=float) + "\n")
    return path


def format_cell(value, floatfmt=".4g"):
    """Text of one result value for a table: floats rounded, short lists inline, mappings elided.

    Parameters
    ----------
    value : object
        A value of a result row.
    floatfmt : str, default=".4g"
        Format of floats.

    Returns
    -------
    text : str
        The cell's text; nested mappings become ``"{...}"`` (the result file has them).
    """
    if value is None:
        return ""
    if isinstance(value, float):
        return format(value, floatfmt)
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, (int, float, bool)) for v in value) and len(value) <= 12:
            return "[" + ", ".join(format_cell(v, floatfmt) for v in value) + "]"
        return f"[{len(value)} values]"
    if isinstance(value, dict):
        return "{...}"
    return str(value)


def markdown_table(rows, columns=None, floatfmt=".4g", headers=None):
    """Render result rows as a markdown table.

    Parameters
    ----------
    rows : list of dict
        Result rows.
    columns : list of str, default=None
        Columns in order; default: the union of the rows' keys in first-seen order.
    floatfmt : str, default=".4g"
        Format of floats.
    headers : dict of str to str, default=None
        Displayed header of a column, by column name; default: the column name itself.

    Returns
    -------
    table : str
        The markdown table.
    """
    if columns is None:
        columns = list(dict.fromkeys(k for row in rows for k in row))

    def cell(value):
        return format_cell(value, floatfmt).replace("|", "\\|")

    shown = [(headers or {}).get(c, c) for c in columns]
    lines = ["| " + " | ".join(shown) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(cell(row.get(c)) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def use_workspace_data_home():
    """Point ``SKLEARN_ICML26_DATA`` at the workspace's data folder beside the checkout if unset.

    That folder, when present, is the data home of this repository's tests, CI and benchmarks.
    Nothing changes when the variable is already set or the folder does not exist.

    Returns
    -------
    data_home : str or None
        The value of ``SKLEARN_ICML26_DATA`` afterwards.
    """
    shared = REPOSITORY.parent / "shared" / "data"
    if "SKLEARN_ICML26_DATA" not in os.environ and shared.is_dir():
        os.environ["SKLEARN_ICML26_DATA"] = str(shared)
    return os.environ.get("SKLEARN_ICML26_DATA")


def benchmark_parser(description):
    """The command-line parser every benchmark script uses (``--quick``, ``--output``).

    Creating it also calls :func:`use_workspace_data_home`, so every benchmark reads the
    repository's data home unless ``SKLEARN_ICML26_DATA`` says otherwise.

    Parameters
    ----------
    description : str
        What the benchmark measures.

    Returns
    -------
    parser : argparse.ArgumentParser
        Parser with ``--quick``, ``--output`` and ``--n-jobs``.
    """
    use_workspace_data_home()
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="seconds-long version (CI)")
    parser.add_argument("--output", default=None, help="result file (default: results/)")
    parser.add_argument("--n-jobs", type=int, default=1, help="parallel jobs where supported")
    return parser


README_START = "<!-- BENCHMARK TABLES: generated by `python benchmarks/run.py render` -->"
README_END = "<!-- END BENCHMARK TABLES -->"


def load_results(results_dir=None):
    """Read the committed full-run result files.

    Parameters
    ----------
    results_dir : str or path-like, default=None
        Folder of the result files; default ``benchmarks/results``.

    Returns
    -------
    results : dict of str to dict
        Benchmark name -> parsed result file, sorted by name (``*_quick.json`` excluded).
    """
    folder = Path(results_dir) if results_dir is not None else RESULTS_DIR
    results = {}
    for path in sorted(folder.glob("*.json")):
        if path.stem.endswith("_quick"):
            continue
        results[path.stem] = json.loads(path.read_text())
    return results


def render_tables(results):
    """The README's summary of every benchmark, one section each.

    A benchmark that records its targets (``targets``) is summarised by them (target, goal,
    measured, met; the goal is the ``spec`` key of a target); otherwise by all its rows. The
    full tables are in the docs.

    Parameters
    ----------
    results : dict of str to dict
        As returned by :func:`load_results`.

    Returns
    -------
    text : str
        Markdown with a ``### <benchmark>`` heading and a table per benchmark.
    """
    if not results:
        return "No benchmark results are committed yet.\n"
    parts = []
    for name, payload in results.items():
        machine = payload.get("machine", {})
        rows, targets = payload["rows"], payload.get("targets")
        parts.append(f"### {name}\n")
        what = (f"{sum(t['met'] for t in targets)} of {len(targets)} targets met"
                if targets else f"{len(rows)} rows")
        parts.append(f"{what}; {len(rows)} (dataset, method) rows in "
                     f"`benchmarks/results/{name}.json`; {machine.get('cpu_count', '?')} CPUs.\n")
        if targets:
            parts.append(markdown_table(targets, TARGET_COLUMNS, headers=TARGET_HEADERS) + "\n")
        else:
            parts.append(markdown_table(rows) + "\n")
    return "\n".join(parts)


def update_readme(readme=None, results_dir=None):
    """Regenerate the benchmark tables of README.md between their markers.

    Parameters
    ----------
    readme : str or path-like, default=None
        The README; default the repository's ``README.md``.
    results_dir : str or path-like, default=None
        See :func:`load_results`.

    Returns
    -------
    changed : bool
        Whether the file changed.
    """
    path = Path(readme) if readme is not None else REPOSITORY / "README.md"
    text = path.read_text()
    if README_START not in text or README_END not in text:
        raise ValueError(f"{path} lacks the benchmark markers {README_START!r} / {README_END!r}")
    head, rest = text.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    new = f"{head}{README_START}\n\n{render_tables(load_results(results_dir))}\n{README_END}{tail}"
    if new != text:
        path.write_text(new)
    return new != text


# The headline metric of each benchmark's plot on the docs' benchmarks page: (metric, the row keys
# that name a group besides ``dataset``, whether lower is better). A result file may override it
# with a ``"plot": {"metric": ..., "group": [...], "lower_is_better": ...}`` entry; a benchmark
# absent from both is plotted on its most common numeric column.
PLOT_SPECS = {
    "adamo": ("greedy_return", [], False),
    "ese": ("rmse_over_rw", [], True),
    "grumem": ("evidence_recall", [], False),
    "hdtree": ("DP", [], False),
    "holder_transformer": ("rmse", [], True),
    "inforeasoner": ("auc", [], False),
    "longitudinal": ("rmse", [], True),
    "mpf": ("cd_l1", ["noise"], True),
    "neuromamba": ("mae_sd_mean", [], True),
    "neuromem": ("final_recall_at_5", [], False),
    "pinnfluence": ("relative_l2", ["config"], True),
    "reasonedit": ("harmonic_mean", [], False),
    "skewd": ("accuracy", [], False),
    "violin": ("accuracy", [], False),
}
_NOT_A_METRIC = ("seconds", "memory", "peak_", "seed", "n_", "reps")


def _plot_spec(name, payload):
    given = payload.get("plot") or {}
    metric, group, lower = PLOT_SPECS.get(name, (None, [], True))
    metric = given.get("metric", metric)
    group = list(given.get("group", group))
    lower = given.get("lower_is_better", lower)
    rows = payload.get("rows", [])

    def numeric(value):
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    if metric is None or not any(numeric(row.get(metric)) for row in rows):
        counts = {}
        for row in rows:
            for key, value in row.items():
                if numeric(value) and not any(word in key for word in _NOT_A_METRIC):
                    counts[key] = counts.get(key, 0) + 1
        metric = max(counts, key=counts.get) if counts else None
    return metric, group, lower


def plot_benchmark(name, payload, *, max_groups=12, ax=None):
    """Dot plot of a benchmark's headline metric: one row per data set, one marker per method.

    Each data set (with the benchmark's extra group keys, e.g. the noise level) that has the
    metric for at least two methods gets a row; a method measured several times there (seeds,
    splits) is shown at its mean. Methods are told apart by colour and marker, with the legend
    below the axes. This is the figure of each benchmark on the documentation's benchmarks page.

    Parameters
    ----------
    name : str
        Benchmark name (``benchmarks/results/<name>.json``); picks the metric from
        :data:`PLOT_SPECS` unless the payload has a ``"plot"`` entry.
    payload : dict
        The parsed result file (``rows`` is a list of dicts with ``dataset`` and ``method``).
    max_groups : int, default=12
        At most this many data sets are drawn (the first ones in the file).
    ax : matplotlib.axes.Axes, default=None
        Axes to draw on; default a new figure sized to the number of data sets.

    Returns
    -------
    ax : matplotlib.axes.Axes or None
        The axes, or None when no metric has two methods on one data set.

    Raises
    ------
    ImportError
        If matplotlib is not installed (the ``plot`` extra).
    """
    import matplotlib.pyplot as plt

    metric, group, lower = _plot_spec(name, payload)
    if metric is None:
        return None
    values = {}
    for row in payload.get("rows", []):
        value = row.get(metric)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value != value:
            continue
        label = " · ".join([str(row.get("dataset", "?"))]
                           + [f"{key}={row[key]}" for key in group if key in row])
        values.setdefault(label, {}).setdefault(str(row.get("method", "?")), []).append(value)
    groups = [g for g, by_method in values.items() if len(by_method) >= 2][:max_groups]
    if not groups:
        return None
    methods = list(dict.fromkeys(m for g in groups for m in values[g]))
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 1.0 + 0.45 * len(groups) + 0.22 * len(methods)),
                             layout="constrained")
    markers = "oDs^vP*Xhd<>p"
    colours = plt.get_cmap("tab20")
    for j, method in enumerate(methods):
        xs, ys = [], []
        for i, g in enumerate(groups):
            if method in values[g]:
                xs.append(sum(values[g][method]) / len(values[g][method]))
                ys.append(i)
        ax.scatter(xs, ys, marker=markers[j % len(markers)], color=colours(j % 20), s=36,
                   label=method[:70], zorder=3)
    ax.set_yticks(range(len(groups)), [g[:60] for g in groups], fontsize=8)
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3)
    ax.set_xlabel(f"{metric} ({'lower' if lower else 'higher'} is better)")
    ax.set_title(name)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.3 / max(len(groups), 1)),
              ncol=2, fontsize=7, frameon=False)
    return ax
