"""
=====================================================================
Cross-validating a submitted estimator, each fold in its own sandbox
=====================================================================

Someone sends an estimator; we want its cross-validated score on the wine data without letting
its code touch our machine. :class:`~sklearn_icml26.sandbox.EnvironmentCache` builds a
read-only environment once (scikit-learn and its dependencies copied out of the running
virtual environment) and the joblib backend ``"sandbox"`` runs every fold in a fresh
:class:`~sklearn_icml26.sandbox.TaskSandbox` over it: own mount, PID and network namespaces,
an overlay over the cache, resource limits (SWE-MiniSandbox, ICML 2026, arXiv 2602.11210).

The submitted estimator below is a decent classifier that also tries to leave a file in our
home folder, to list our processes and to phone home. The scores come out the same as in a
plain run; the side effects stay inside the sandboxes. Linux only (namespaces, overlayfs);
elsewhere the example says what is missing and runs the plain comparison alone.
"""

# %%
# The submission
# --------------
import os
import socket
import time
from pathlib import Path

import joblib
import matplotlib.pyplot as plt
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_wine
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_icml26.sandbox import (
    EnvironmentCache,
    SandboxUnavailableError,
    TaskSandbox,
    check_sandbox_support,
    run_in_sandbox,
)

PLANTED = Path.home() / "planted_by_submission.txt"


class Submission(ClassifierMixin, BaseEstimator):
    """Standardise + logistic regression, with unwelcome extras in ``fit``."""

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y):
        report = {}
        try:
            PLANTED.write_text("hello from a submission")
            report["wrote_home"] = True
        except OSError:
            report["wrote_home"] = False
        report["visible_processes"] = len([p for p in os.listdir("/proc") if p.isdigit()])
        try:
            socket.create_connection(("127.0.0.1", 22), timeout=1).close()
            report["network"] = "reached"
        except OSError:
            report["network"] = "unreachable"
        self.report_ = report
        self.model_ = make_pipeline(StandardScaler(), LogisticRegression(C=self.C,
                                                                         max_iter=1000))
        self.model_.fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict(self, X):
        return self.model_.predict(X)


X, y = load_wine(return_X_y=True)

# %%
# Plain run, then every fold in a sandbox
# ---------------------------------------
# The plain run executes the submission in this process: its file lands in the home folder
# (we delete it right away).
start = time.perf_counter()
plain = cross_validate(Submission(), X, y, cv=5)
plain_seconds = time.perf_counter() - start
print("plain scores:", plain["test_score"].round(4), f"({plain_seconds:.1f} s)")
print("file planted by the plain run:", PLANTED.exists())
PLANTED.unlink(missing_ok=True)

try:
    check_sandbox_support()
    available = True
except SandboxUnavailableError as exc:
    print(exc)
    available = False

if available:
    cache = EnvironmentCache.from_venv(["scikit-learn"])
    print(cache)
    start = time.perf_counter()
    with joblib.parallel_config(backend="sandbox", cache=cache, n_jobs=2):
        boxed = cross_validate(Submission(), X, y, cv=5)
    boxed_seconds = time.perf_counter() - start
    print("sandboxed scores:", boxed["test_score"].round(4), f"({boxed_seconds:.1f} s)")
    print("identical:", np.array_equal(plain["test_score"], boxed["test_score"]))
    print("file planted by the sandboxed runs:", PLANTED.exists())

    # %%
    # What the submission saw and wrote, from one sandboxed fit
    # ---------------------------------------------------------
    def fit_and_report(C):
        return Submission(C=C).fit(X, y).report_

    with TaskSandbox(cache) as box:
        seen = run_in_sandbox(fit_and_report, 1.0, cache=cache, sandbox=box)
        print("inside the sandbox:", seen)
        print("files it wrote:", box.changed_files())
    print("outside, right now:", fit_and_report(1.0) | {"note": "plain process"})
    PLANTED.unlink(missing_ok=True)

    # %%
    # Scores per fold and wall time
    # -----------------------------
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.4))
    folds = np.arange(1, 6)
    ax1.plot(folds, plain["test_score"], "o-", label="plain")
    ax1.plot(folds, boxed["test_score"], "x--", ms=10, label="sandboxed")
    ax1.set(xlabel="fold", ylabel="accuracy", title="same scores", xticks=folds)
    ax1.legend()
    ax2.bar(["plain", "sandboxed"], [plain_seconds, boxed_seconds], color=["C0", "C1"])
    ax2.set(ylabel="seconds (5 folds)", title="cost of isolation")
    fig.tight_layout()
    plt.show()
