"""Issue 40: PINN items 6, 9-13 (known answers; each failed on the main before the fix)."""

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import GridSearchCV, KFold

from sklearn_icml26.datasets import make_pde_collocation
from sklearn_icml26.pinn import PINNInfluence, PINNRegressor, heat_1d

torch.set_num_threads(1)

QUICK = dict(hidden_layer_sizes=(6,), solver="adam", max_epochs=20, random_state=0)


@pytest.fixture(scope="module")
def heat():
    problem = heat_1d()
    X = make_pde_collocation(problem, 60, 10, 10, random_state=0)
    pinn = PINNRegressor(problem, **QUICK).fit(X)
    return problem, X, pinn


@pytest.fixture(scope="module")
def heat_data(heat):
    """The heat PINN with observations of u at 12 of its points (a "data" term)."""
    problem, X, _ = heat
    y = np.full(len(X), np.nan)
    obs = np.arange(0, 60, 5)
    y[obs] = np.sin(np.pi * X[obs, 0]) * np.exp(-X[obs, 1])
    return X, y, PINNRegressor(problem, **QUICK).fit(X, y)


# -- item 6: leave_one_out refits the PINN's own training set ----------------------------------
def test_leave_one_out_after_fit_on_a_subset_drops_the_point_from_the_pinn_training_set(heat):
    # main refitted on the other attributed points (40 of 80) instead of the PINN's 80:
    # off by up to 0.23 from the true leave-one-out change
    _, X, pinn = heat
    X_test = X[:6]
    full = PINNInfluence(pinn, hessian="exact").fit()
    sub = PINNInfluence(pinn, hessian="exact").fit(X[::2])
    np.testing.assert_array_equal(sub.train_indices_, np.arange(0, 80, 2))
    np.testing.assert_array_equal(sub.leave_one_out(3, X_test), full.leave_one_out(6, X_test))
    np.testing.assert_array_equal(sub.leave_one_out(-1, X_test),
                                  full.leave_one_out(78, X_test))


def test_leave_one_out_of_a_point_the_pinn_was_not_trained_on_is_refused(heat):
    problem, X, pinn = heat
    other = make_pde_collocation(problem, 5, 0, 0, random_state=7)
    inf = PINNInfluence(pinn, hessian="exact").fit(np.r_[X[:3], other])
    np.testing.assert_array_equal(inf.train_indices_, [0, 1, 2, -1, -1, -1, -1, -1])
    with pytest.raises(ValueError, match="is not a training point of the PINN"):
        inf.leave_one_out(4, X[:3])


def test_leave_one_out_with_a_data_term_after_fit_on_a_subset(heat_data):
    # main: IndexError (a mask of the 12 attributed points applied to the PINN's 80 targets)
    X, y, pinn = heat_data
    full = PINNInfluence(pinn, hessian="exact").fit()
    sub = PINNInfluence(pinn, hessian="exact").fit(X[:12], y[:12])
    np.testing.assert_array_equal(sub.leave_one_out(5, X[:4]), full.leave_one_out(5, X[:4]))


def test_influence_fit_checks_y(heat, heat_data):
    # main: "cannot reshape array of size 11 into shape (12,newaxis)"
    X, y, pinn = heat_data
    with pytest.raises(ValueError, match=r"y must have shape \(12, 1\).*got \(11,\)"):
        PINNInfluence(pinn, hessian="exact").fit(X[:12], y[:11])
    with pytest.raises(ValueError, match="y contains infinity"):
        PINNInfluence(pinn, hessian="exact").fit(X[:2], [np.inf, 0.0])
    with pytest.raises(ValueError, match="the PINN has no data term"):
        PINNInfluence(heat[2], hessian="exact").fit(X[:12], y[:12])


# -- item 9: the target's scale (power-of-two pre-scaling) -------------------------------------
@pytest.mark.parametrize("scale", [1e300, 1e160, 1e-300])
def test_plain_mlp_predictions_follow_the_scale_of_y(scale):
    # main: all-inf predictions at 1e300/1e160 (overflow of y.std()), predictions of order 0.1
    # at 1e-300 (the std underflowed to 0 and the target was not standardised)
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(80, 2))
    y = np.sin(X[:, 0]) + X[:, 1]
    kw = dict(hidden_layer_sizes=(8,), solver="adam", max_epochs=30, lr=0.05, random_state=0)
    base = PINNRegressor(**kw).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        scaled = PINNRegressor(**kw).fit(X, y * scale)
        pred = scaled.predict(X)
    np.testing.assert_allclose(pred / scale, base.predict(X), rtol=1e-9)
    np.testing.assert_allclose(scaled.y_scale_ / scale, base.y_scale_, rtol=1e-12)


# -- item 10: hyperparameters and arguments rejected up front ----------------------------------
@pytest.mark.parametrize("sizes", [(6.0,), (True,), (np.bool_(True),), (4, 2.5), ()])
def test_hidden_layer_sizes_must_be_ints(sizes):
    # main: (6.0,) and (True,) passed and failed inside torch (empty(): argument 'size' ...)
    X = np.random.default_rng(0).uniform(size=(20, 2))
    with pytest.raises(ValueError, match="hidden_layer_sizes must be a non-empty tuple of "
                                         "positive ints"):
        PINNRegressor(hidden_layer_sizes=sizes, solver="adam", max_epochs=1).fit(X, X[:, 0])


def test_hidden_layer_sizes_takes_numpy_ints():
    X = np.random.default_rng(0).uniform(size=(20, 2))
    reg = PINNRegressor(hidden_layer_sizes=[np.int64(3)], solver="adam", max_epochs=1)
    assert reg.fit(X, X[:, 0]).module_ is not None


@pytest.mark.parametrize("i", ["a", 1.5, 2.0, True, None, 80, -81])
def test_leave_one_out_rejects_a_bad_index(heat, i):
    # main: "invalid literal for int() with base 10: 'a'"; True was taken as index 1
    _, X, pinn = heat
    inf = PINNInfluence(pinn, hessian="exact").fit()
    with pytest.raises(ValueError, match=r"i must be an int index of a training point, in "
                                         r"\[-80, 79\]"):
        inf.leave_one_out(i, X[:2])


# -- item 11: a score a grid search can use ----------------------------------------------------
def test_score_with_a_problem_is_minus_the_mean_residual_loss(heat, heat_data):
    # main: PINNRegressor(problem).score(X) raised TypeError (R^2 needs y)
    _, X, pinn = heat
    rho = pinn.residuals(X)
    M = pinn.point_terms_
    expected = -sum((rho[M[:, k], k] ** 2).mean() for k in range(3))
    assert pinn.score(X) == pytest.approx(expected, rel=1e-12)
    assert pinn.score(X) < 0
    # the training objective with unit weights and the mean reduction
    X_d, y_d, pinn_d = heat_data
    rho = pinn_d.residuals(X_d)
    obs = ~np.isnan(y_d)
    mse = ((pinn_d.predict(X_d)[obs] - y_d[obs]) ** 2).mean()
    physics = -sum((rho[pinn_d.point_terms_[:, k], k] ** 2).mean() for k in range(3))
    assert pinn_d.score(X_d) == pytest.approx(physics, rel=1e-12)
    assert pinn_d.score(X_d, y_d) == pytest.approx(physics - mse, rel=1e-12)
    # loss weights do not change the scale of the score
    weighted = PINNRegressor(heat[0], loss_weights={"bc": 10.0}, **QUICK).fit(X)
    rho = weighted.residuals(X)
    expected = -sum((rho[M[:, k], k] ** 2).mean() for k in range(3))
    assert weighted.score(X) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match=r"y must have shape \(80, 1\)"):
        pinn_d.score(X_d, y_d[:5])
    plain = PINNRegressor(**QUICK).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="score needs y when problem=None"):
        plain.score(X)


def test_grid_search_ranks_pinns_with_a_problem(heat):
    # main: every test score NaN ("Scoring failed") and a best_params_ all the same
    problem, X, _ = heat
    grid = GridSearchCV(PINNRegressor(problem, hidden_layer_sizes=(6,), solver="adam",
                                      lr=1e-2, random_state=0),
                        {"max_epochs": [1, 300]}, cv=KFold(2, shuffle=True, random_state=0))
    grid.fit(X)
    scores = grid.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)) and np.all(scores < 0)
    assert grid.best_params_ == {"max_epochs": 300}
    assert scores[1] > scores[0] / 10  # the longer fit has a tenth of the residual loss


# -- item 12: no "NumPy array is not writable" warning from torch ------------------------------
def test_no_torch_not_writable_warning_on_dataframes_and_read_only_arrays():
    # torch warns once per process, so the check runs in a fresh interpreter
    code = textwrap.dedent("""
        import warnings
        import numpy as np, pandas as pd, torch
        torch.set_num_threads(1)
        warnings.simplefilter("always")
        from sklearn_icml26.datasets import make_pde_collocation
        from sklearn_icml26.pinn import PINNInfluence, PINNRegressor, heat_1d
        problem = heat_1d()
        X = make_pde_collocation(problem, 30, 6, 6, random_state=0)
        kw = dict(hidden_layer_sizes=(4,), solver="adam", max_epochs=2, random_state=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pinn = PINNRegressor(problem, **kw).fit(pd.DataFrame(X, columns=["x", "t"]))
            ro = X.copy()
            ro.flags.writeable = False
            PINNRegressor(problem, **kw).fit(ro)
            PINNRegressor(problem, train_hidden=False, solver="lstsq",
                          hidden_layer_sizes=(4,)).fit(ro)
            pinn.residuals(ro), pinn.score(ro), pinn.predict(ro)
            inf = PINNInfluence(pinn, hessian="exact").fit()
            inf.influence(pd.DataFrame(X[:3], columns=["x", "t"]))
            inf.grad_dot(ro[:3])
            PINNInfluence(pinn, hessian="exact").fit(pd.DataFrame(X[:10], columns=["x", "t"]))
            Xr = np.random.default_rng(0).uniform(size=(20, 2))
            yr = Xr[:, 0].copy()
            Xr.flags.writeable = False
            yr.flags.writeable = False
            PINNRegressor(**kw).fit(Xr, yr)
            PINNRegressor(**kw).fit(pd.DataFrame(Xr), pd.Series(yr))
        print("NOT-WRITABLE" if any("not writable" in str(w.message) for w in caught)
              else "CLEAN")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "CLEAN", out.stderr[-2000:]


# -- item 13: a clone-safe PINNInfluence -------------------------------------------------------
def test_influence_of_a_frozen_pinn_survives_clone(heat):
    # main: TypeError "estimator must be a fitted PINNRegressor; got FrozenEstimator"
    _, X, pinn = heat
    ref = PINNInfluence(pinn, hessian="exact").fit().influence(X[:5])
    frozen = PINNInfluence(FrozenEstimator(pinn), hessian="exact")
    got = clone(frozen).fit().influence(X[:5])
    np.testing.assert_array_equal(got, ref)
    assert clone(frozen).fit().estimator_ is pinn


def test_cloned_influence_retrains_its_pinn_on_the_points_given_to_fit(heat):
    # main: clone(inf).fit(X) raised "this PINNRegressor is not fitted yet"
    _, X, pinn = heat
    inf = PINNInfluence(pinn, hessian="exact").fit()
    again = clone(inf).fit(X)
    assert again.estimator_ is not pinn
    np.testing.assert_array_equal(again.influence(X[:5]), inf.influence(X[:5]))
    np.testing.assert_array_equal(again.train_indices_, np.arange(80))
    with pytest.raises(ValueError, match="FrozenEstimator"):
        clone(inf).fit()
    with pytest.raises(ValueError, match="FrozenEstimator wraps an unfitted one"):
        PINNInfluence(FrozenEstimator(clone(pinn))).fit()
    with pytest.raises(TypeError, match="got Ridge inside a FrozenEstimator"):
        from sklearn.linear_model import Ridge

        PINNInfluence(FrozenEstimator(Ridge())).fit()


def test_fit_with_a_problem_leaves_the_callers_torch_rng_alone():
    # the residual-shape probe of fit drew its initial weights from the global torch RNG
    problem = heat_1d()
    X = make_pde_collocation(problem, 30, 6, 6, random_state=0)
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    PINNRegressor(problem, hidden_layer_sizes=(8,), max_epochs=2, max_iter=2,
                  random_state=0).fit(X)
    assert torch.equal(torch.rand(3), expected)
