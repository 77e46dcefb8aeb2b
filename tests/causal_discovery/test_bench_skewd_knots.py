"""Tests of the knots comparison of benchmarks/bench_skewd.py: the rows and the default rule."""

import numpy as np
import pytest

from _common import load_benchmark  # benchmarks/, on the path (setup.cfg)


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("skewd")


def _set(n_total, right_uniform, right_quantile, n_done=None, pvalues=None):
    """State of one set: the first ``right_*`` pairs decided right, the others wrong."""
    n = n_total if n_done is None else n_done
    direction = np.where(np.arange(n_total) % 2 == 0, 1, -1)

    def rule(right):
        score = np.where(np.arange(n) < right, 1.0, -1.0) * direction[:n] * (1 + np.arange(n))
        return {"score": score.tolist(),
                "pvalue": (pvalues if pvalues is not None else [np.nan] * n),
                "fit_time": [0.5] * n, "n_warnings": [0] * n}

    return {"n_total": n_total, "direction": direction.tolist(), "weight": [1.0] * n_total,
            "median_n_samples": 1000, "n_bootstrap": 0 if pvalues is None else 100,
            "uniform": rule(right_uniform), "quantile": rule(right_quantile)}


def _switch(bench, state):
    rows = bench._knots_rows(state)
    targets = bench._knots_targets(rows, state)
    return rows, targets, targets[-1]["met"]


def test_rows_count_accuracy_per_set_and_rule(bench):
    rows, _, _ = _switch(bench, {"SIM-ln": _set(100, 75, 86)})
    by = {r["method"]: r for r in rows}
    assert by["SkewD-IT (uniform knots)"]["accuracy"] == pytest.approx(0.75)
    assert by["SkewD-IT (quantile knots)"]["accuracy"] == pytest.approx(0.86)
    assert by["SkewD-IT (quantile knots)"]["dataset"] == "SIM-ln"
    assert by["SkewD-IT (quantile knots)"]["n_pairs"] == 100


def test_default_switches_only_when_sim_ln_closes_and_no_set_loses(bench):
    # closes SIM-ln (>= 0.80) and loses exactly 0.01 elsewhere: allowed
    ok = {"SIM-ln": _set(100, 75, 82), "SIM": _set(100, 80, 79)}
    assert _switch(bench, ok)[2] is True
    # one set loses 0.02: no switch, and the failing set's target says so
    lose = {"SIM-ln": _set(100, 75, 82), "SIM": _set(100, 80, 78)}
    _, targets, switch = _switch(bench, lose)
    assert switch is False
    assert [t["met"] for t in targets if t["target"].startswith("SIM:")] == [False]
    # SIM-ln not closed: no switch even if nothing is lost
    assert _switch(bench, {"SIM-ln": _set(100, 75, 79), "SIM": _set(100, 80, 80)})[2] is False


def test_partial_sets_never_switch_the_default(bench):
    # same accuracies as the allowed case, but SIM stopped at 50 of 100 pairs
    state = {"SIM-ln": _set(100, 75, 82), "SIM": _set(100, 40, 40, n_done=50)}
    rows, _, switch = _switch(bench, state)
    assert switch is False
    assert {r["dataset"] for r in rows} == {"SIM-ln", "SIM[:50]"}


def test_pvalue_summary_on_known_directions(bench):
    # the 10 right decisions have p = 0.01, the 10 wrong ones p = 0.5 except one
    p = [0.01] * 10 + [0.5] * 9 + [0.01]
    rows = bench._knots_rows({"tuebingen": _set(20, 10, 10, pvalues=p)})
    row = next(r for r in rows if r["method"] == "SkewD-IT (uniform knots)")
    assert row["share_p_below_0.05"] == pytest.approx(11 / 20)
    assert row["accuracy_p_below_0.05"] == pytest.approx(10 / 11)
    assert row["accuracy_p_above_0.05"] == pytest.approx(0.0)
    assert row["share_wrong_with_p_below_0.05"] == pytest.approx(1 / 20)


class _FakeResult:
    def __init__(self, n):
        self.score = np.ones(n)
        self.pvalue_it = np.full(n, 0.5)
        self.fit_time = np.full(n, 0.1)
        self.n_warnings = np.zeros(n, dtype=int)


def _run_order(bench, monkeypatch, tmp_path, resume_state=None, **options):
    """Set names in the order ``_knots`` scores their chunks (fits replaced by a stub)."""
    import argparse
    import json
    from types import SimpleNamespace

    calls = []

    def fake_score_pairs(pairs, estimator, n_jobs):
        calls.append((estimator.knots, pairs[0][0, 0]))
        return _FakeResult(len(pairs))

    def loader(tag):  # 4 pairs of 3 rows; the first value names the set and the pair
        return lambda: SimpleNamespace(
            pairs=[np.full((3, 2), tag + i / 10) for i in range(4)],
            direction=np.ones(4), weight=np.ones(4))

    monkeypatch.setattr(bench, "score_pairs", fake_score_pairs)
    monkeypatch.setattr(bench, "_knots_sets", lambda quick: [
        ("SIM-ln", loader(0)), ("A", loader(1)), ("B", loader(2))])
    resume = None
    if resume_state is not None:
        resume = tmp_path / "resume.json"
        resume.write_text(json.dumps({"state": resume_state}))
    args = argparse.Namespace(
        budget_s=1e6, resume=resume and str(resume), quick=False, chunk=2, pvalue_sets="",
        max_rows=1000, n_bootstrap=0, pvalue_knots="uniform", n_jobs=1,
        output=str(tmp_path / "out.json"), sequential=False, knots_order=None)
    for key, value in options.items():
        setattr(args, key, value)
    out = bench._knots(args)
    state = json.loads(out.read_text())["state"]
    names = {0: "SIM-ln", 1: "A", 2: "B"}
    order = [f"{names[int(v)]}{round(10 * (v % 1))}" for k, v in calls if k == "uniform"]
    assert [k for k, _ in calls] == ["uniform", "quantile"] * len(order)  # same chunk, both
    return order, state


def test_knots_run_order_round_robin_sequential_and_resume(bench, monkeypatch, tmp_path):
    order, state = _run_order(bench, monkeypatch, tmp_path)
    assert order == ["SIM-ln0", "SIM-ln2", "A0", "B0", "A2", "B2"]  # chunks of 2, in turns
    assert all(len(st["quantile"]["score"]) == 4 for st in state.values())
    order, _ = _run_order(bench, monkeypatch, tmp_path, sequential=True, knots_order="B")
    assert order == ["SIM-ln0", "SIM-ln2", "B0", "B2", "A0", "A2"]  # B first, each in full
    # resumed: SIM-ln done, A at 2 of 4 pairs; only the missing chunks run
    order, state = _run_order(bench, monkeypatch, tmp_path, resume_state=state, sequential=True)
    assert order == []
    half = {name: {**st, **{k: {key: v[:2] for key, v in st[k].items()}
                            for k in ("uniform", "quantile")}} if name == "A" else st
            for name, st in state.items()}
    order, state = _run_order(bench, monkeypatch, tmp_path, resume_state=half, sequential=True)
    assert order == ["A2"]
    assert len(state["A"]["uniform"]["score"]) == 4
    with pytest.raises(ValueError, match="--knots-order names unknown sets"):
        _run_order(bench, monkeypatch, tmp_path, knots_order="C")
