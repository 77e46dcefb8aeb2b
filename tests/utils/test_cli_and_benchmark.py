"""The command line, the demo registry and the benchmark result format."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from sklearn_icml26 import __main__ as cli
from sklearn_icml26.utils import _registry

from _common import (  # benchmarks/_common.py (setup.cfg puts benchmarks/ on the path)
    BENCHMARK_DIR,
    markdown_table,
    measure,
    write_results,
)


def _fake_demo(data_home=None, verbose=1, fast=False):
    return pd.DataFrame([{"method": "M", "dataset": "D", "metric": "acc", "value": 0.9,
                          "anchor": "A", "anchor_value": 0.8, "seconds": 1.0}])


def _noted_demo(data_home=None, verbose=1, fast=False):
    table = _fake_demo()
    table.attrs["note"] = "ok: the strongest anchor needs an extra; it scores 0.95 elsewhere."
    return table


def _missing_data_demo(data_home=None, verbose=1, fast=False):
    raise OSError("Dataset 'x': missing file(s) a.csv")


@pytest.fixture
def fake_demos(monkeypatch):
    demos = {
        "ok": _registry.Demo("ok", "works", "d", f"{__name__}:_fake_demo"),
        "missing": _registry.Demo("missing", "no data", "x", f"{__name__}:_missing_data_demo"),
        "noted": _registry.Demo("noted", "with a note", "d", f"{__name__}:_noted_demo"),
    }
    monkeypatch.setattr(cli, "DEMOS", demos)
    return demos


def test_demo_table_and_missing_data_goes_on(fake_demos, capsys):
    table = cli.run_demos(["missing", "ok"], verbose=0)
    assert list(table.columns) == _registry.DEMO_COLUMNS
    assert table["method"].tolist() == ["M"]
    assert "missing file(s) a.csv" in capsys.readouterr().err


def test_demo_command_prints_a_table(fake_demos, capsys):
    assert cli.main(["demo", "ok"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0] == "dataset: D"
    assert lines[1].split() == ["method", "metric", "value", "anchor", "anchor_value", "seconds"]
    assert lines[3].split() == ["M", "acc", "0.9", "A", "0.8", "1"]
    # progress goes to stderr: which demo starts, and how long it took
    assert "[demo 1/1] ok: works ..." in captured.err and "[demo 1/1] ok: " in captured.err


def test_demo_table_fits_in_100_columns_with_long_names():
    long = {"method": "ViolinViTClassifier(mask=None, something=else)",
            "dataset": "paul15 (700 of 2,660 cells), a class-stratified sample, seed 0, more",
            "metric": "locality (other conversations rejected)", "value": 0.123456,
            "anchor": "diffusion pseudotime recipe (scanpy)", "anchor_value": 12345.678,
            "seconds": 123.4}
    words = {"method": "LongitudinalRegressionAdjuster", "dataset": "BtheB bdi.2m",
             "metric": "effect", "value": -2.685, "seconds": 1.8, "anchor_value": -2.817,
             "anchor": "Lin (HC2), completers only (97 of 100 units)"}
    text = cli.format_demo_table(pd.DataFrame([long, words]))
    assert max(map(len, text.splitlines())) <= 100
    assert "LongitudinalRegressionAdjuster" in text  # a word that fits is not broken
    flat = " ".join(text.split())
    for word in ("ViolinViTClassifier(", "conversations", "0.1235", "1.235e+04"):
        assert word in flat


def test_demos_run_single_threaded_and_restore_the_thread_counts(monkeypatch):
    torch = pytest.importorskip("torch")
    from threadpoolctl import threadpool_info

    seen = {}

    def threads_demo(data_home=None, verbose=1, fast=False):
        seen["torch"] = torch.get_num_threads()
        seen["pools"] = {p["num_threads"] for p in threadpool_info()}
        return _fake_demo()

    monkeypatch.setattr(cli, "DEMOS", {"t": _registry.Demo("t", "threads", "d",
                                                           f"{__name__}:_threads_demo")})
    monkeypatch.setitem(globals(), "_threads_demo", threads_demo)
    before = torch.get_num_threads()
    pools_before = [p["num_threads"] for p in threadpool_info()]
    torch.set_num_threads(2)
    try:
        cli.run_demos(["t"], verbose=0)
        assert seen["torch"] == 1 and seen["pools"] <= {1}
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    assert [p["num_threads"] for p in threadpool_info()] == pools_before


def test_single_threaded_restores_torch_threads_even_on_error():
    torch = pytest.importorskip("torch")
    from sklearn_icml26.utils._threads import single_threaded

    @single_threaded
    def boom():
        assert torch.get_num_threads() == 1
        raise RuntimeError("x")

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with pytest.raises(RuntimeError):
            boom()
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_demo_table_has_a_legend_with_each_metric_direction(fake_demos, capsys):
    assert cli.main(["demo", "ok"]) == 0
    out = capsys.readouterr().out
    legend = out[out.index("How to read the table:"):]
    assert "anchor_value" in legend and "seconds" in legend
    assert "  acc: higher is better." in legend


def test_a_demo_note_on_absent_anchors_is_printed_under_the_table(fake_demos, capsys):
    assert cli.main(["demo", "ok", "noted"]) == 0
    out = capsys.readouterr().out
    assert out.count("Note, ok: the strongest anchor needs an extra; it scores 0.95") == 1
    assert out.index("How to read the table:") < out.index("Note, ok:")


@pytest.mark.parametrize(("metric", "direction"), [
    ("RMSE", "lower"), ("excess risk", "lower"), ("CD-L1", "lower"), ("std_err", "lower"),
    ("NC", "higher"), ("normal consistency", "higher"), ("weighted accuracy", "higher"),
    ("final-round evidence Recall@5", "higher"),
    ("locality (other conversations rejected)", "higher"), ("AUDRC", "higher"),
    ("effect", "no better direction"),
])
def test_metric_directions_of_the_registered_demos(metric, direction):
    assert direction in cli._direction(metric)


def test_demo_command_fails_when_no_demo_could_run(fake_demos, capsys):
    assert cli.main(["demo", "missing"]) == 1
    assert "No demo could run" in capsys.readouterr().err


def test_unknown_demo_is_an_error(fake_demos):
    with pytest.raises(SystemExit, match="Unknown demo"):
        cli.main(["demo", "nope"])


@pytest.mark.parametrize("argv", [["benchmark"], ["benchmark", "all", "--quick"],
                                  ["benchmark", "render"], ["benchmark", "--help"]])
def test_benchmark_command_points_to_the_checkout_script(argv, capsys):
    """Benchmarks are not in the installed package: the command says where they are."""
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "python benchmarks/run.py NAME|all [--quick]" in err
    assert "python benchmarks/run.py render" in err


def test_benchmark_runner_lists_runs_and_rejects_unknown_names(capsys):
    import run

    assert run.main(["--list"]) == 0
    listed = capsys.readouterr().out
    assert "ese" in listed and "skewd" in listed
    with pytest.raises(SystemExit):
        run.main(["nope"])
    assert "unknown benchmark ['nope']" in capsys.readouterr().err


def test_registered_demos_point_to_functions():
    import importlib

    for demo in _registry.DEMOS.values():
        module_name, func_name = demo.target.split(":")
        assert callable(getattr(importlib.import_module(module_name), func_name))


def test_module_entry_point_lists_demos():
    out = subprocess.run([sys.executable, "-m", "sklearn_icml26", "demo", "--list"],
                         capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert lines[0] == "Registered demos:"
    assert len(_registry.DEMOS) >= 5
    listed = [line.split()[0] for line in lines[1:] if line.strip()]
    assert listed == list(_registry.DEMOS)
    for line, demo in zip(lines[1:], _registry.DEMOS.values(), strict=True):
        assert demo.description in line and f"(data: {demo.dataset})" in line


def test_demo_list_with_an_empty_registry(monkeypatch, capsys):
    monkeypatch.setattr(cli, "DEMOS", {})
    assert cli.main(["demo", "--list"]) == 0
    assert capsys.readouterr().out.strip() == "No demos are registered yet."


def test_result_file_shape(tmp_path):
    import time

    import numpy as np

    def allocate_and_wait():
        block = np.ones(2**20)  # 8 MiB, traced by tracemalloc
        time.sleep(0.05)
        return float(block.sum())

    m = measure(allocate_and_wait)
    assert m.result == 2.0**20
    assert m.seconds >= 0.05
    assert m.memory == "traced" and 8.0 <= m.peak_mb < 64.0
    m = measure(sum, range(1000))
    assert m.result == sum(range(1000)) and m.peak_mb < 1.0
    rows = [{"dataset": "d", "method": "m", "score": 0.5, **m.columns()}]
    assert set(rows[0]) == {"dataset", "method", "score", "fit_seconds", "peak_traced_mb"}
    path = write_results("toy", rows, quick=True, path=tmp_path / "toy.json")
    payload = json.loads(path.read_text())
    assert payload["benchmark"] == "toy" and payload["quick"] is True
    assert payload["rows"] == rows and payload["machine"]["cpu_count"] >= 1
    with pytest.raises(ValueError, match="'dataset' and 'method'"):
        write_results("toy", [{"method": "m"}], quick=True, path=tmp_path / "bad.json")
    with pytest.raises(ValueError, match="does not say which memory"):
        write_results("toy", [{"dataset": "d", "method": "m", "peak_memory_mb": 1.0}],
                      quick=True, path=tmp_path / "bad.json")
    table = markdown_table(rows)
    assert table.splitlines()[0].startswith("| dataset | method | score")


def test_targets_table_shows_the_spec_key_as_goal():
    from _common import render_tables

    targets = [{"target": "accuracy", "spec": ">= 0.8", "measured": 0.9, "met": True}]
    payload = {"machine": {"cpu_count": 2}, "rows": [{"dataset": "d", "method": "m"}],
               "targets": targets}
    lines = render_tables({"toy": payload}).splitlines()
    assert "1 of 1 targets met" in lines[2]
    assert lines[4] == "| target | goal | measured | met |"
    assert lines[6].startswith("| accuracy | >= 0.8 | 0.9 |")
    # other columns keep their names; a header mapping renames only what it names
    assert markdown_table(targets, ["target", "spec"]).splitlines()[0] == "| target | spec |"


def test_committed_results_have_the_shared_shape():
    for path in sorted(BENCHMARK_DIR.glob("results/*.json")):
        if path.stem.endswith("_quick"):  # local --quick runs, not committed
            continue
        payload = json.loads(path.read_text())
        assert set(payload) >= {"benchmark", "quick", "machine", "rows"}, path
        assert path.stem == payload["benchmark"] and payload["quick"] is False, path
        assert all({"dataset", "method"} <= set(row) for row in payload["rows"]), path
        # memory is recorded under the name of what was measured, never one name for both
        assert not any("peak_memory_mb" in row for row in payload["rows"]), path


def test_show_versions(capsys, monkeypatch):
    from importlib.metadata import version

    from sklearn_icml26 import show_versions
    from sklearn_icml26.utils import _show_versions

    # a package that is not installed is listed as None, not skipped nor given a version
    monkeypatch.setattr(_show_versions, "_DEPENDENCIES",
                        [*_show_versions._DEPENDENCIES, "surely-not-an-installed-package"])
    show_versions()
    lines = capsys.readouterr().out.splitlines()
    for name in ("numpy", "scikit-learn", "torch", "skorch"):
        assert f"{name:>14}: {version(name)}" in lines, name
    assert "surely-not-an-installed-package: None" in lines


def test_readme_tables_match_committed_results(tmp_path):
    from _common import update_readme

    readme = BENCHMARK_DIR.parent / "README.md"
    copy = tmp_path / "README.md"
    copy.write_text(readme.read_text())
    assert not update_readme(copy), (
        "README benchmark tables are stale: run `python benchmarks/run.py render`"
    )


def test_longitudinal_benchmark_pools_disjoint_runs_exactly():
    """Two runs over disjoint replications, pooled through their rows, equal one run."""
    import importlib.util
    from pathlib import Path

    import numpy as np

    path = Path(__file__).parents[2] / "benchmarks" / "bench_longitudinal.py"
    spec = importlib.util.spec_from_file_location("bench_longitudinal", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rng = np.random.default_rng(0)
    truth = rng.normal(size=3)

    def rep():
        out = {}
        for method in ("ours", "Lin (OLS, HC2; statsmodels)"):
            est = truth + rng.normal(0.1, 0.5, size=3)
            out[method] = {"estimate": est, "se": rng.uniform(0.3, 0.7, size=3),
                           "seconds": float(rng.uniform(1, 2)), "memory": None}
        out["ours"]["band"] = np.stack([est - 1.0, est + 1.0], axis=1)
        return out

    reps = [rep() for _ in range(9)]
    first, _ = bench._summarise("B", reps[:4], truth)
    second, _ = bench._summarise("B", reps[4:], truth)
    pooled = {r["method"]: bench._pool_detail(bench._detail_from_row(r),
                                              bench._detail_from_row(s))
              for r, s in zip(first, second, strict=True)}
    rows, _ = bench._rows("B", pooled, truth)
    expected, _ = bench._summarise("B", reps, truth)
    for got, want in zip(rows, expected, strict=True):
        assert got["reps"] == want["reps"] == 9
        for key, value in want["per_period"].items():
            np.testing.assert_allclose(got["per_period"][key], value, rtol=1e-12, err_msg=key)
        np.testing.assert_allclose(got["fit_seconds"], want["fit_seconds"], rtol=1e-12)


def test_plot_benchmark_draws_the_mean_of_each_method_per_dataset():
    pytest.importorskip("matplotlib", reason="plotting needs the plot extra")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from _common import plot_benchmark

    payload = {"rows": [
        {"dataset": "a", "method": "ours", "score": 0.5, "fit_seconds": 9.0},
        {"dataset": "a", "method": "ours", "score": 0.7, "fit_seconds": 9.0},
        {"dataset": "a", "method": "anchor", "score": 0.2, "fit_seconds": 1.0},
        {"dataset": "b", "method": "ours", "score": 0.9},  # one method only: not drawn
        {"dataset": "c", "method": "ours", "score": float("nan")},
        {"dataset": "c", "method": "anchor", "score": 0.1},
    ], "plot": {"metric": "score", "lower_is_better": False}}
    ax = plot_benchmark("toy", payload)
    offsets = {c.get_label(): c.get_offsets().tolist() for c in ax.collections}
    assert offsets == {"ours": [[pytest.approx(0.6), 0.0]], "anchor": [[0.2, 0.0]]}
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a"]
    assert "higher is better" in ax.get_xlabel()
    # without a "plot" entry and with no known metric, the most common numeric column is used
    ax = plot_benchmark("toy", {"rows": payload["rows"]})
    assert ax.get_xlabel().startswith("score")
    assert plot_benchmark("toy", {"rows": [{"dataset": "a", "method": "m", "x": 1}]}) is None
    plt.close("all")


def test_measure_names_the_memory_it_measured_and_the_loop_runs_every_arm():
    from _common import MEMORY_COLUMNS, Arm, run_arms, target

    m = measure(sum, range(10), memory="rss")
    assert m.columns() == {"fit_seconds": m.seconds, "peak_rss_mb": m.peak_mb}
    assert m.peak_mb > 1.0  # the process's resident high-water mark, not the call's heap
    assert measure(sum, range(10), memory=None).columns("s") == {"s": pytest.approx(0, abs=1)}
    assert sorted(MEMORY_COLUMNS.values()) == ["peak_rss_mb", "peak_traced_mb"]
    with pytest.raises(ValueError, match="memory must be one of"):
        measure(sum, [], memory="heap")
    arms = [Arm("ours", lambda d: {"score": sum(d)}, extra={"k": 1}),
            Arm("anchor", lambda d: {"score": 0}, anchor=True)]
    rows = run_arms(arms, {"a": [1, 2], "b": [5]}, log=None)
    assert [(r["dataset"], r["method"], r["anchor"], r["score"]) for r in rows] == [
        ("a", "ours", False, 3), ("a", "anchor", True, 0),
        ("b", "ours", False, 5), ("b", "anchor", True, 0)]
    assert rows[0]["k"] == 1 and "peak_traced_mb" in rows[0] and "fit_seconds" in rows[0]
    def broken(data):
        raise RuntimeError("no GPU")

    rows = run_arms([Arm("anchor", broken, anchor=True)], {"a": [1]}, log=None)
    assert rows == [{"dataset": "a", "method": "anchor", "anchor": True,
                     "error": "RuntimeError: no GPU"}]
    with pytest.raises(RuntimeError, match="no GPU"):
        run_arms([Arm("ours", broken)], {"a": [1]}, log=None)
    assert target("t", ">= 1", 2, 2 >= 1) == {"target": "t", "spec": ">= 1", "measured": 2,
                                              "met": True}


def test_run_arms_passes_arm_kwargs_and_calls_on_row_before_the_next_arm():
    from _common import Arm, run_arms

    seen = []

    def on_row(row):  # compares with the earlier rows and edits the row in place
        row["before"] = [r["method"] for r in seen]
        seen.append(row)

    def power(data, p=1, memory=0):  # an arm's own "memory" is not measure's
        return {"score": sum(x ** p for x in data) + memory}

    def broken(data):
        raise RuntimeError("down")

    arms = [Arm("p1", power), Arm("p2", power, kwargs={"p": 2, "memory": 1}),
            Arm("down", broken, anchor=True)]
    rows = run_arms(arms, {"a": [1, 3]}, memory=None, seconds="s", log=None, on_row=on_row)
    assert [r["score"] for r in rows[:2]] == [4, 11]
    assert [r["before"] for r in rows] == [[], ["p1"], ["p1", "p2"]]
    assert rows[2]["error"] == "RuntimeError: down" and "s" in rows[0]
    assert "peak_traced_mb" not in rows[0] and "peak_rss_mb" not in rows[0]
