"""Sphinx configuration. The API page is generated from the modules' ``__all__`` at build time."""

import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
# the benchmark pages are rendered by benchmarks/_common.py (checkout only, not in the package)
sys.path.insert(1, str(HERE.parent / "benchmarks"))
os.environ.setdefault("MPLBACKEND", "Agg")

# examples use IterativeImputer: sphinx-gallery resolves its name only once it is enabled
from sklearn.experimental import enable_iterative_imputer  # noqa: F401

import sklearn_icml26

project = "sklearn_icml26"
author = "sklearn_icml26 developers"
copyright = "2026, sklearn_icml26 developers"
release = sklearn_icml26.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax bundled into _static: the built site renders formulas without internet
    "sphinx-mathjax-offline",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "sphinxcontrib.bibtex",
]

autosummary_generate = True
templates_path = ["_templates"]
# Classes document their own members; inherited scikit-learn helpers (get_params,
# set_*_request, ...) are left out (doc/_templates/autosummary/class.rst).
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
bibtex_bibfiles = ["references.bib"]
exclude_patterns = ["_build", "_bench", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "**/*.md5"]
html_theme = "pydata_sphinx_theme"
html_title = "sklearn_icml26"

sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples"),
    "gallery_dirs": str(HERE / "auto_examples"),
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "within_subsection_order": "FileNameSortKey",
}


def _write_api_page():
    """Write api.rst: exactly the public names, each under the one module that exports it.

    The page lists ``show_versions`` (top level) and every name of each field module's
    ``__all__`` (frozen by ``tests/test_public_api.py``), and nothing else.
    """
    import importlib

    def block(paths):
        return ["", ".. autosummary::", "   :toctree: generated/", ""] + [
            f"   {p}" for p in paths] + [""]

    lines = ["API reference", "=============", "",
             "Generated at build time from each module's ``__all__``. Import every name from",
             "the module it is listed under.", "",
             "``sklearn_icml26``", "------------------"]
    lines += block(["sklearn_icml26.show_versions"])
    for sub in sorted(sklearn_icml26._SUBMODULES):
        module = importlib.import_module(f"sklearn_icml26.{sub}")
        title = f"``sklearn_icml26.{sub}``"
        first = (module.__doc__ or "").strip().splitlines()[0]
        lines += [title, "-" * len(title), "", first]
        lines += block(f"sklearn_icml26.{sub}.{n}" for n in module.__all__)
    (HERE / "api.rst").write_text("\n".join(lines) + "\n")


def _escape(text):
    """Result files hold free text ("|bias|", "x_", "*"): escape reStructuredText markup."""
    return re.sub(r"([\\|*`_])", r"\\\1", text)


def _list_table(rows, columns, headers=None):
    from _common import format_cell

    def cell(value):
        return _escape(format_cell(value))

    lines = [".. list-table::", "   :header-rows: 1", ""]
    shown = [(headers or {}).get(c, c) for c in columns]
    for values in [shown] + [[row.get(c, "") for c in columns] for row in rows]:
        lines.append("   * - " + cell(values[0]))
        lines += [f"     - {cell(v)}" for v in values[1:]]
    return lines + [""]


def _bench_figure(name, payload, plot_benchmark):
    """Draw ``_bench/<name>.png``, the benchmark's dot plot; False when there is none."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ax = plot_benchmark(name, payload)
    if ax is None:
        return False
    ax.figure.savefig(HERE / "_bench" / f"{name}.png", dpi=90, bbox_inches="tight")
    plt.close(ax.figure)
    return True


def _write_benchmarks_page():
    """Write benchmarks.rst and one ``_bench/<name>.rst`` per benchmark from the result files.

    Every ``benchmarks/bench_<name>.py`` gets ``_bench/<name>.rst`` (a placeholder when its full
    results are not committed yet), so user-guide pages can ``.. include:: ../_bench/<name>.rst``
    and no number is ever copied by hand.
    """
    from _common import (
        RESULTS_DIR,
        TARGET_COLUMNS,
        TARGET_HEADERS,
        load_results,
        plot_benchmark,
    )

    results = load_results()
    names = sorted({p.stem.removeprefix("bench_") for p in RESULTS_DIR.parent.glob("bench_*.py")}
                   | set(results))
    (HERE / "_bench").mkdir(exist_ok=True)
    for name in names:
        payload = results.get(name)
        if payload is None:
            lines = ["No full benchmark results are committed yet.", ""]
        else:
            rows = payload["rows"]
            lines = []
            if _bench_figure(name, payload, plot_benchmark):
                lines += [f".. image:: /_bench/{name}.png",
                          f"   :alt: {name}: the headline metric of every method per data set",
                          ""]
            if payload.get("protocol"):
                lines += [f"Protocol: {_escape(payload['protocol'])}", ""]
            if payload.get("targets"):
                lines += ["Targets of this benchmark:", ""]
                lines += _list_table(payload["targets"], TARGET_COLUMNS, TARGET_HEADERS)
            lines += ["All rows:", ""]
            lines += _list_table(rows, list(dict.fromkeys(k for row in rows for k in row)))
            lines += [f"* {_escape(note)}" for note in payload.get("notes", [])] + [""]
        (HERE / "_bench" / f"{name}.rst").write_text("\n".join(lines) + "\n")

    page = ["Benchmarks", "==========", "",
            "Each method against its anchors, measured side by side in one run by",
            "``benchmarks/bench_<method>.py``; generated from ``benchmarks/results/*.json``.", ""]
    for name in names:
        page += [name, "-" * len(name), "", f".. include:: _bench/{name}.rst", ""]
    (HERE / "benchmarks.rst").write_text("\n".join(page) + "\n")


_write_api_page()
_write_benchmarks_page()

_TRAILING_UNDERSCORE = re.compile(r"(?<=\w)_(?=[,)\]\s]|$)")


def _escape_types(app, what, name, obj, options, lines):
    """Escape names ending in "_" inside "name : type" lines (e.g. "(n_features_in_,)").

    reStructuredText would read ``n_features_in_`` as a link to a target that does not exist.
    """
    for i, line in enumerate(lines):
        head, sep, tail = line.partition(" : ")
        if sep and head.strip() and " " not in head.strip():
            lines[i] = head + sep + _TRAILING_UNDERSCORE.sub(r"\\_", tail)


def setup(app):
    app.connect("autodoc-process-docstring", _escape_types, priority=100)
