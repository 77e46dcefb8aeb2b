"""TaskSandbox: per-task isolation over a cached environment against its container analogues.

Method: SWE-MiniSandbox (ICML 2026, arXiv:2602.11210) replaces a container per evaluation task
by kernel namespaces, an overlay over a pre-built environment and a per-task writable layer,
and reports about 5 % of the containers' disk and 25 % of their preparation time at equal
results. No container engine runs on this machine, so the baselines are what a container
image amounts to:

(a) ``TaskSandbox`` over an :class:`EnvironmentCache` built once (content-addressed, read-only);
(b) a full copy of that environment (and the task files) per task, the image analogue: copied,
    run in place, deleted;
(c) a fresh virtual environment per task, ``pip install --no-index --find-links <wheelhouse>``
    of every distribution of the cached environment, offline, plus the package and task files;
(d) no isolation: the task runs directly with the cached environment's interpreter.

The environment is lean: numpy, scipy, scikit-learn, pandas, tqdm, pooch, tabulate and pytest
with their dependencies, plus this package's source (no torch). 100 tasks: the package's own
small test modules that need no torch (run with pytest from a snapshot of ``tests/``) and fits
of scikit-learn estimators on the datasets bundled with scikit-learn (held-out score and a
digest of the predictions). Per task and mode: preparation seconds (a: creating the sandbox
folder and assembling an empty task's namespaces and mounts; b: the copy; c: venv + pip; d:
none), the task's wall seconds, disk written for the task, the task's peak resident memory
(``wait4``), and whether its result (exit code, pass/fail summary or score and prediction
digest) equals the unisolated run's. The modes of one task run back to back, so they share the
machine's load, which is recorded.

``--quick`` (CI): a one-distribution environment, 3 pure-Python least-squares tasks, modes
(a), (b), (d); a smoke test of the protocol (its copy is tiny, so its ratios mean nothing).
``--wheelhouse DIR``: the wheels of mode (c) (for the committed run: ``pip download
--only-binary=:all: --no-deps`` of the exact versions in the cache, once). On a 2-core machine
shared with other jobs the full protocol does not fit the time budget, so by default (b) runs on
``--n-copy`` = 25 and (c) on ``--n-venv`` = 2 of the 100 tasks, spread over the list (minutes a
task for (c)); (a) and (d) run on all 100. (c) is left out, with a note, when the folder lacks a
wheel.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

from sklearn_icml26.sandbox import EnvironmentCache, TaskSandbox
from sklearn_icml26.sandbox._cache import _rmtree, _tree_size, create_venv_offline

from _common import (
    RESULTS_DIR,
    benchmark_parser,
    markdown_table,
    measure,
    target,
    write_results,
)

REPO = Path(__file__).resolve().parents[1]
ENV_DISTS = ["numpy", "scipy", "scikit-learn", "pandas", "tqdm", "pooch", "tabulate", "pytest"]
# the package's test modules that run without torch (and without the data home)
TEST_MODULES = ["test_metrics_causal.py", "test_metrics_hubness.py", "test_metrics_retrieval.py",
                "utils/test_scaling.py", "utils/test_progress.py",
                "lineage/test_lineage_metrics.py", "surface/test_surface_metrics.py",
                "datasets/test_cause_effect.py", "optim/test_offline_rl_data.py",
                "datasets/test_base.py"]
CLASSIFIERS = [
    ("LogisticRegression", "sklearn.linear_model", {"max_iter": 2000}),
    ("DecisionTreeClassifier", "sklearn.tree", {"random_state": 0}),
    ("RandomForestClassifier", "sklearn.ensemble", {"n_estimators": 30, "random_state": 0}),
    ("ExtraTreesClassifier", "sklearn.ensemble", {"n_estimators": 30, "random_state": 0}),
    ("KNeighborsClassifier", "sklearn.neighbors", {}),
    ("GaussianNB", "sklearn.naive_bayes", {}),
    ("SVC", "sklearn.svm", {}),
    ("HistGradientBoostingClassifier", "sklearn.ensemble", {"max_iter": 30,
                                                            "random_state": 0}),
    ("RidgeClassifier", "sklearn.linear_model", {}),
    ("LinearDiscriminantAnalysis", "sklearn.discriminant_analysis", {}),
]
REGRESSORS = [
    ("Ridge", "sklearn.linear_model", {}),
    ("Lasso", "sklearn.linear_model", {"alpha": 0.1}),
    ("RandomForestRegressor", "sklearn.ensemble", {"n_estimators": 30, "random_state": 0}),
    ("KNeighborsRegressor", "sklearn.neighbors", {}),
    ("HistGradientBoostingRegressor", "sklearn.ensemble", {"max_iter": 30, "random_state": 0}),
]
CLF_DATA = ["iris", "wine", "breast_cancer", "digits"]
REG_DATA = ["diabetes"]
FIT_CODE = """
import hashlib, json
import numpy as np
from sklearn import datasets
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from {module} import {name} as Estimator
X, y = datasets.load_{data}(return_X_y=True)
Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state={seed})
model = make_pipeline(StandardScaler(), Estimator(**{params!r})).fit(Xtr, ytr)
pred = np.ascontiguousarray(model.predict(Xte), dtype=float)
print(json.dumps({{"score": float(model.score(Xte, yte)),
                  "predictions_sha256": hashlib.sha256(pred.tobytes()).hexdigest()}}))
"""
QUICK_CODE = """
import json, random
rng = random.Random({seed})
xs = [rng.uniform(-1, 1) for _ in range(500)]
ys = [2.0 * x - 0.5 + rng.gauss(0, 0.1) for x in xs]
mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
print(json.dumps({{"slope": slope, "intercept": my - slope * mx}}))
"""
THREADS = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


def make_tasks(quick):
    """The task list: (name, kind, code-or-module)."""
    if quick:
        return [(f"least squares seed={s}", "fit", QUICK_CODE.format(seed=s)) for s in range(3)]
    tasks = [(f"pytest tests/{m}", "test", m) for m in TEST_MODULES]
    fits = [(name, module, params, data) for name, module, params in CLASSIFIERS
            for data in CLF_DATA]
    fits += [(name, module, params, data) for name, module, params in REGRESSORS
             for data in REG_DATA]
    seed = 0
    while len(tasks) < 100:
        for name, module, params, data in fits:
            if len(tasks) == 100:
                break
            tasks.append((f"{name} on {data} (split {seed})", "fit",
                          FIT_CODE.format(module=module, name=name, data=data, seed=seed,
                                          params=params)))
        seed += 1
    return tasks


def _argv(python, kind, payload):
    if kind == "test":
        return [python, "-I", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                "--rootdir", "repo", "-W", "ignore::DeprecationWarning", f"repo/tests/{payload}"]
    return [python, "-I", "-c", textwrap.dedent(payload)]


def _outcome(returncode, stdout, kind):
    """What must agree across modes: exit code and the pass/fail summary or the fit's result."""
    text = stdout.decode(errors="replace").strip()
    if kind == "test":
        lines = [ln for ln in text.splitlines() if " passed" in ln or " failed" in ln]
        summary = lines[-1].split(" in ")[0] if lines else text[-200:]
        return {"returncode": returncode, "summary": summary}
    try:
        return {"returncode": returncode, **json.loads(text.splitlines()[-1])}
    except (ValueError, IndexError):
        return {"returncode": returncode, "output": text[-200:]}


# a small parent that starts the task and takes its peak memory from wait4, like the
# sandbox's PID 1 does (the memory of a child forked from this benchmark would count the
# benchmark's own until it executes)
RSS_WRAPPER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as fh:
    fh.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
sys.exit(128 - code if code < 0 else code)
"""
BASE_PYTHON = os.path.realpath(getattr(sys, "_base_executable", sys.executable))


# Protocol note: the four isolation modes are not ``run_arms`` arms measured by ``measure``:
# each task runs in a child process, whose wall time and peak RSS (``wait4``, reported as
# ``peak_rss_mb``) are what a mode costs, split into preparation and task; ``measure`` times
# and measures this process. The modes of one task run back to back so they see one load.


def run_host(argv, cwd, env, timeout=600):
    """Run unisolated; wall seconds, exit code, stdout, stderr and the task's peak RSS (MiB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as rss:
        start = time.perf_counter()
        proc = subprocess.Popen([BASE_PYTHON, "-I", "-S", "-c", RSS_WRAPPER, rss.name,
                                 *map(str, argv)], cwd=cwd, env=env, stdout=out, stderr=err)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        text = rss.read().strip()
        return (seconds, proc.returncode, out.read(), err.read(),
                int(text) / 1024 if text else float("nan"))


def host_env(python_dir, home):
    return {"PATH": f"{python_dir}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1",
            "SKLEARN_ICML26_DATA": "/nonexistent-data-home", **THREADS}


def build_snapshot(folder, quick):
    """Task files: ``repo/tests`` (the package's test modules, no byte code)."""
    snap = Path(folder) / "snapshot"
    if not quick:
        shutil.copytree(REPO / "tests", snap / "repo" / "tests",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    else:
        (snap / "repo").mkdir(parents=True)
    return snap


def wheel_requirements(cache, wheelhouse):
    """Pinned requirements of mode (c), or the reason it cannot run."""
    if wheelhouse is None:
        return None, "no --wheelhouse given"
    wheels = {p.name.split("-")[0].lower().replace("_", "-") for p in
              Path(wheelhouse).glob("*.whl")}
    dists = cache.manifest["distributions"]
    missing = sorted(d for d in dists if d.replace("_", "-") not in wheels)
    if missing:
        return None, f"the wheelhouse {wheelhouse} lacks wheels of {missing}"
    return [f"{d}=={v}" for d, v in sorted(dists.items())], None


def main():
    parser = benchmark_parser(__doc__.split("\n")[0])
    parser.add_argument("--wheelhouse", default=None, help="wheels of mode (c)")
    parser.add_argument("--n-venv", type=int, default=2, help="tasks of mode (c)")
    parser.add_argument("--n-copy", type=int, default=25, help="tasks of mode (b)")
    parser.add_argument("--n-tasks", type=int, default=None, help="fewer tasks (debugging)")
    args = parser.parse_args()
    quick = args.quick
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # clean up the copies
    load_start = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="bench-sandbox-"))

    def log(msg):
        print(msg, flush=True)

    try:
        snapshot_src = build_snapshot(work, quick)
        dists = ["threadpoolctl"] if quick else ENV_DISTS
        packages = [] if quick else [REPO / "sklearn_icml26"]
        m = measure(EnvironmentCache.from_venv, dists, packages=packages, snapshot=snapshot_src,
                    root=work / "caches", memory=None)
        cache, cache_seconds = m.result, m.seconds
        log(f"cache {cache.key[:12]}: {cache.size_bytes / 2**20:.0f} MiB, "
            f"{len(cache.manifest['distributions'])} distributions, built in "
            f"{cache_seconds:.1f} s")
        tasks = make_tasks(quick)[: args.n_tasks]
        reqs, venv_reason = (None, "left out of --quick") if quick else wheel_requirements(
            cache, args.wheelhouse)
        venv_tasks = _spread(len(tasks), args.n_venv) if reqs else set()
        copy_tasks = _spread(len(tasks), args.n_copy) | venv_tasks
        records = []
        for i, (name, kind, payload) in enumerate(tasks):
            rec = {"task": name, "kind": kind, "load_1min": os.getloadavg()[0], "modes": {}}
            # (d) no isolation
            env = host_env(cache.env_dir / "bin", work)
            sec, code, out, _, rss = run_host(_argv(str(cache.env_dir / "bin/python"), kind,
                                                    payload), cache.snapshot_dir, env)
            reference = _outcome(code, out, kind)
            rec["modes"]["none"] = {"prep_seconds": 0.0, "task_seconds": sec,
                                    "disk_bytes": 0, "peak_rss_mb": rss,
                                    "outcome": reference}
            # (a) TaskSandbox over the cache
            t0 = time.perf_counter()
            with TaskSandbox(cache, env={"SKLEARN_ICML26_DATA": "/nonexistent-data-home",
                                         **THREADS}) as box:
                box.run(["/bin/true"], timeout=60)
                prep = time.perf_counter() - t0
                res = box.run(_argv("/env/bin/python", kind, payload), timeout=600)
                disk = _tree_size(box.path)
            outcome = _outcome(res.returncode, res.stdout, kind)
            rec["modes"]["sandbox"] = {"prep_seconds": prep, "task_seconds": res.seconds,
                                       "disk_bytes": disk, "peak_rss_mb": res.peak_memory_mb,
                                       "outcome": outcome, "equal": outcome == reference}
            # (b) full copy of the environment and task files
            if i in copy_tasks:
                t0 = time.perf_counter()
                copy = work / f"copy-{i}"
                shutil.copytree(cache.path, copy, symlinks=True)
                prep = time.perf_counter() - t0
                disk = _tree_size(copy)
                sec, code, out, _, rss = run_host(_argv(str(copy / "env/bin/python"), kind,
                                                        payload), copy / "snapshot",
                                                  host_env(copy / "env/bin", work))
                _rmtree(copy)
                outcome = _outcome(code, out, kind)
                rec["modes"]["full_copy"] = {"prep_seconds": prep, "task_seconds": sec,
                                             "disk_bytes": disk, "peak_rss_mb": rss,
                                             "outcome": outcome, "equal": outcome == reference}
            # (c) fresh virtual environment, offline from the wheelhouse
            if i in venv_tasks:
                t0 = time.perf_counter()
                venv = work / f"venv-{i}"
                create_venv_offline(venv / "env", reqs, [args.wheelhouse])
                site = next((venv / "env").glob("lib/python3*/site-packages"))
                shutil.copytree(REPO / "sklearn_icml26", site / "sklearn_icml26",
                                ignore=shutil.ignore_patterns("__pycache__"))
                shutil.copytree(snapshot_src, venv / "snapshot")
                prep = time.perf_counter() - t0
                disk = _tree_size(venv)
                sec, code, out, _, rss = run_host(_argv(str(venv / "env/bin/python"), kind,
                                                        payload), venv / "snapshot",
                                                  host_env(venv / "env/bin", work))
                _rmtree(venv)
                outcome = _outcome(code, out, kind)
                rec["modes"]["fresh_venv"] = {"prep_seconds": prep, "task_seconds": sec,
                                              "disk_bytes": disk, "peak_rss_mb": rss,
                                              "outcome": outcome,
                                              "equal": outcome == reference}
            records.append(rec)
            _log_task(log, i, len(tasks), rec)
            if not quick and (i + 1) % 10 == 0:
                _write(records, cache, cache_seconds, quick, args, venv_reason, load_start,
                       partial=True)
        _write(records, cache, cache_seconds, quick, args, venv_reason, load_start)
        cache.remove()
    finally:
        _rmtree(work)


def _log_task(log, i, n, rec):
    m = rec["modes"]
    parts = [f"none {m['none']['task_seconds']:.2f} s",
             f"sandbox {m['sandbox']['prep_seconds']:.2f}+{m['sandbox']['task_seconds']:.2f} s "
             f"{'=' if m['sandbox']['equal'] else '!='}"]
    for mode in ("full_copy", "fresh_venv"):
        if mode in m:
            parts.append(f"{mode} {m[mode]['prep_seconds']:.2f}+{m[mode]['task_seconds']:.2f}"
                         f" s {'=' if m[mode]['equal'] else '!='}")
    log(f"[{i + 1}/{n}] {rec['task']}: " + " | ".join(parts) + f" (load {rec['load_1min']:.1f})")


def _spread(n, k):
    """``k`` task indices spread evenly over ``n``."""
    return set(np.linspace(0, n - 1, min(k, n)).round().astype(int).tolist()) if k else set()


def _summary(records, mode):
    sel = [r["modes"][mode] for r in records if mode in r["modes"]]
    if not sel:
        return None
    ref = [r["modes"]["none"] for r in records if mode in r["modes"]]
    overhead = [s["task_seconds"] - n["task_seconds"] for s, n in zip(sel, ref, strict=True)]
    return {
        "n_tasks": len(sel),
        "prep_seconds": float(np.mean([s["prep_seconds"] for s in sel])),
        "prep_seconds_median": float(np.median([s["prep_seconds"] for s in sel])),
        "task_seconds": float(np.mean([s["task_seconds"] for s in sel])),
        "overhead_seconds": float(np.mean(overhead)),
        "overhead_seconds_median": float(np.median(overhead)),
        "disk_mb_per_task": float(np.mean([s["disk_bytes"] for s in sel]) / 2**20),
        "peak_rss_mb": float(np.max([s["peak_rss_mb"] for s in sel])),
        "results_equal": int(sum(s.get("equal", True) for s in sel)),
        "fit_seconds": float(np.mean([s["prep_seconds"] + s["task_seconds"] for s in sel])),
    }


NAMES = {"sandbox": "TaskSandbox (cached env)", "full_copy": "full environment copy",
         "fresh_venv": "fresh venv (pip, offline)", "none": "no isolation"}


def _write(records, cache, cache_seconds, quick, args, venv_reason, load_start, partial=False):
    rows = []
    label = f"{len(records)} tasks" + (" (partial)" if partial else "")
    for mode in ("sandbox", "full_copy", "fresh_venv", "none"):
        summary = _summary(records, mode)
        if summary is not None:
            rows.append({"dataset": label, "method": NAMES[mode], **summary})
    by = {r["method"]: r for r in rows}
    n = len(records)
    # the ratios compare the sandbox and the copy on the tasks both ran
    paired = [r for r in records if "full_copy" in r["modes"]]
    sb, cp = _summary(paired, "sandbox"), _summary(paired, "full_copy")
    sb_all = by[NAMES["sandbox"]]
    targets = [
        target("disk per task / full copy's",
               "<= 0.05",
               sb["disk_mb_per_task"] / cp["disk_mb_per_task"],
               sb["disk_mb_per_task"] <= 0.05 * cp["disk_mb_per_task"]),
        target("preparation seconds / full copy's",
               "<= 0.25",
               sb["prep_seconds"] / cp["prep_seconds"],
               sb["prep_seconds"] <= 0.25 * cp["prep_seconds"]),
        target(f"results equal to the unisolated run ({n} tasks)",
               f"{n} of {n}",
               sb_all["results_equal"],
               sb_all["results_equal"] == n),
        target("sandbox overhead per task (s, mean over tasks)",
               "<= 0.5",
               sb_all["overhead_seconds"],
               sb_all["overhead_seconds"] <= 0.5),
    ]
    load_end = os.getloadavg()
    notes = [
        f"machine load (1/5/15-min load averages) at the start {list(load_start)}, at the end "
        f"{list(load_end)}, on {os.cpu_count()} CPUs shared with other jobs; per-task 1-min "
        "load in the task records",
        f"environment cache: {cache.size_bytes / 2**20:.0f} MiB, built once in "
        f"{cache_seconds:.1f} s (not part of any task's preparation); distributions "
        f"{cache.manifest['distributions']}; packages {cache.manifest['packages']}",
        "prep_seconds: sandbox = creating its folder and assembling the namespaces and mounts "
        "of an empty task (/bin/true); full copy = copying the environment and task files; "
        "fresh venv = venv + pip install --no-index from the wheelhouse + the package and task "
        "files; no isolation = 0. task_seconds: wall time of the task's command (the "
        "sandbox's includes assembling its namespaces once more). overhead_seconds: the "
        "sandboxed task's seconds minus the unisolated task's, paired per task",
        "disk_mb_per_task: what the task's preparation and run left on disk (sandbox: its "
        "writable layers and folder; copy: the copy; venv: the venv)",
        "peak_rss_mb: largest peak resident memory of one process of the task (wait4 in "
        "a small Python parent: the sandbox's PID 1, or an equivalent wrapper for the other "
        "modes, whose start-up is part of their task seconds)",
        "container engines are not available here: (b) is the image-copy analogue, (c) the "
        "build-per-task analogue",
    ]
    if venv_reason:
        notes.append(f"fresh venv (c) not run: {venv_reason}")
    else:
        notes.append(f"fresh venv (c) on {by[NAMES['fresh_venv']]['n_tasks']} of {n} tasks "
                     "spread over the list (minutes each on this loaded machine)")
    notes.append(f"full copy (b) on {len(paired)} of {n} tasks spread over the list (to fit the "
                 "time budget); the disk and preparation ratios are over those tasks")
    protocol = ("quick: a one-distribution environment (threadpoolctl), 3 pure-Python "
                "least-squares tasks, modes a, b, d (a smoke test: the copy is tiny)" if quick else
                f"{n} tasks ({sum(r['kind'] == 'test' for r in records)} test modules of the "
                "package run by pytest, the rest scikit-learn estimator fits on bundled "
                "datasets); modes (a) TaskSandbox over the cached environment and (d) no "
                f"isolation on all {n}, (b) full copy per task on {len(paired)} and (c) fresh "
                f"offline venv per task on {sum('fresh_venv' in r['modes'] for r in records)} "
                "of them, spread over the list (reduced to fit the time budget of a shared "
                "2-core machine); the modes of a task run back to back")
    path = Path(args.output) if args.output else None
    out = write_results("sandbox", rows, quick, path, targets=targets, protocol=protocol,
                        notes=notes)
    if not partial:
        print(markdown_table(rows))
        print()
        print(markdown_table(targets, ["target", "spec", "measured", "met"]))
        print(f"wrote {out}")
    if not quick:  # the per-task records beside the summary
        parts = (Path(args.output).with_name(Path(args.output).stem + "_tasks.json")
                 if args.output else RESULTS_DIR / "parts" / "sandbox_tasks.json")
        parts.parent.mkdir(parents=True, exist_ok=True)
        parts.write_text(json.dumps(records, indent=1) + "\n")


if __name__ == "__main__":
    main()
