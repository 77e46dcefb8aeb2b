"""The compiled training step (``compile=True`` / ``"auto"``) computes what the eager one does.

The plumbing is tested with the function that ``torch.compile`` would compile run as it is
(no compile time in the test suite): the full-batch steps go through it, a shorter last batch
of an epoch and failures run eagerly, and the fit matches the eager fit. A real compile of a
tiny network is opt-in (``SKLEARN_ICML26_TEST_COMPILE=1``: it costs tens of seconds).
"""

import math
import os
import pickle

import numpy as np
import pytest
import torch

from sklearn_icml26.datasets import make_thin_shell
from sklearn_icml26.surface import MPFSurface, _compile, _loss, _mpf

torch.set_num_threads(1)

SMALL = dict(hidden_size=16, head_size=8, max_epochs=3, batch_size=120,
             warm_start_iter=20, random_state=0)


@pytest.fixture
def uncompiled(monkeypatch):
    """``_CompiledStep`` runs ``_step_loss`` itself instead of its compiled version."""
    calls = []

    def function():
        def step(*args):
            calls.append(args[1].shape[0])  # points of the step
            return _loss._step_loss(*args)
        return step

    monkeypatch.setattr(_compile._CompiledStep, "_function", staticmethod(function))
    return calls


@pytest.mark.parametrize("field", ["mpf", "sdf", "udf"])
def test_compiled_step_function_matches_the_eager_fit(uncompiled, field):
    X, _ = make_thin_shell("open_arc", 400, random_state=0)  # 3 full batches + 40 points
    Q = np.random.default_rng(0).uniform(-1, 1, (200, 2))
    eager = MPFSurface(field=field, **SMALL).fit(X)
    est = MPFSurface(field=field, **SMALL, compile=True).fit(X)
    assert not eager.compiled_ and est.compiled_
    # every full batch (3 per epoch) went through the step, the short last batch did not
    n_off = math.ceil(0.5 * 120)
    assert uncompiled == [120 + 2 * n_off] * (3 * SMALL["max_epochs"])
    assert est.n_iter_ == eager.n_iter_ == SMALL["max_epochs"]  # epochs of 4 steps
    # the same loss terms and fields up to float32 rounding (the Laplacian's schedule
    # factor is a 0-d float32 tensor in the step, a Python float in the eager criterion)
    np.testing.assert_allclose(est.loss_curve_, eager.loss_curve_, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(est.transform(Q), eager.transform(Q), rtol=1e-3, atol=1e-5)
    assert est.module_.compiled_step is None  # training-only
    pickle.loads(pickle.dumps(est))


def test_compiled_step_with_normals_and_laplacian_matches_the_eager_fit(uncompiled):
    X, N = make_thin_shell("open_hemisphere", 360, random_state=0)
    kw = dict(SMALL, laplacian_schedule=(0.5, 0.9))  # the Laplacian on and decaying
    eager = MPFSurface(**kw).fit(X, normals=N)
    est = MPFSurface(**kw, compile=True).fit(X, normals=N)
    assert est.compiled_ and len(uncompiled) == 3 * SMALL["max_epochs"]
    assert np.all(eager.loss_terms_[:, list(_mpf.DEFAULT_LOSS_WEIGHTS).index("normal")] > 0)
    np.testing.assert_allclose(est.loss_curve_, eager.loss_curve_, rtol=1e-4, atol=1e-7)


def test_failed_compile_falls_back_to_the_eager_step_with_a_warning(monkeypatch):
    X, _ = make_thin_shell("open_arc", 400, random_state=0)
    Q = np.random.default_rng(1).uniform(-1, 1, (100, 2))

    def broken():
        def step(*args):
            raise RuntimeError("no C++ compiler")
        return step

    monkeypatch.setattr(_compile._CompiledStep, "_function", staticmethod(broken))
    with pytest.warns(UserWarning, match="torch.compile failed.*no C.. compiler"):
        est = MPFSurface(**SMALL, compile=True).fit(X)
    eager = MPFSurface(**SMALL).fit(X)
    assert not est.compiled_
    # the failed first call drew nothing: the fit is the eager one, bit for bit
    np.testing.assert_array_equal(est.transform(Q), eager.transform(Q))
    np.testing.assert_array_equal(est.loss_curve_, eager.loss_curve_)


def test_compiled_step_with_every_weight_zero_trains_nothing(uncompiled):
    # no weighted term: the total is a zero in the graph (the compiled output has no fields)
    X, _ = make_thin_shell("open_arc", 400, random_state=0)
    weights = dict.fromkeys(_mpf.DEFAULT_LOSS_WEIGHTS, 0.0)
    est = MPFSurface(**dict(SMALL, warm_start_iter=0), loss_weights=weights,
                     compile=True).fit(X)
    assert est.compiled_ and len(uncompiled) == 3 * SMALL["max_epochs"]
    assert np.isfinite(est.loss_curve_).all()


def test_auto_compiles_only_long_fits(uncompiled):
    X, _ = make_thin_shell("open_arc", 400, random_state=0)
    est = MPFSurface(**SMALL, compile="auto").fit(X)
    assert not est.compiled_ and uncompiled == []
    default = MPFSurface(compile="auto")  # 39 full batches x 50 epochs
    assert default._compiled_step(default._weights(), 512, 20000) is not None
    short = MPFSurface(compile="auto", max_epochs=25)  # 975 full-batch steps
    assert short._compiled_step(short._weights(), 512, 20000) is None
    assert MPFSurface(compile=True, max_epochs=1)._compiled_step({}, 512, 600) is not None
    assert MPFSurface()._compiled_step({}, 512, 20000) is None  # off by default
    with pytest.raises(ValueError, match="compile"):
        MPFSurface(compile="yes").fit(X)


@pytest.mark.skipif(not os.environ.get("SKLEARN_ICML26_TEST_COMPILE"),
                    reason="a real torch.compile takes tens of seconds; set "
                           "SKLEARN_ICML26_TEST_COMPILE=1")
def test_torch_compile_of_the_step_matches_the_eager_fit():
    X, _ = make_thin_shell("open_arc", 400, random_state=0)
    Q = np.random.default_rng(0).uniform(-1, 1, (200, 2))
    eager = MPFSurface(**SMALL).fit(X)
    est = MPFSurface(**SMALL, compile=True).fit(X)
    assert est.compiled_
    np.testing.assert_allclose(est.loss_curve_, eager.loss_curve_, rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(est.transform(Q), eager.transform(Q), rtol=1e-2, atol=1e-4)
