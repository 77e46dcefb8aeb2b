"""PINNRegressor, PINNInfluence and the PDE problems: known answers on a linear model."""

import pickle

import numpy as np
import pytest
import torch
from sklearn.base import clone

from sklearn_icml26.datasets import make_pde_collocation
from sklearn_icml26.pinn import (
    Condition,
    PDEProblem,
    PINNInfluence,
    PINNRegressor,
    drift_diffusion_1d,
    heat_1d,
)
from sklearn_icml26.pinn._residuals import batched_derivatives, per_point_jacobians

torch.set_num_threads(1)

# random-feature heat PINN: 40 frozen sin features and a bias, exact least squares
RF = dict(hidden_layer_sizes=(40,), activation="sin", feature_scale=8.0, train_hidden=False,
          solver="lstsq", loss_reduction="sum", random_state=0)


@pytest.fixture(scope="module")
def rf():
    problem = heat_1d()
    X = make_pde_collocation(problem, 150, 20, 20, random_state=0)
    pinn = PINNRegressor(problem, **RF).fit(X)
    X_test = make_pde_collocation(problem, 40, 0, 0, random_state=1)
    return pinn, X, X_test


def _output_params(pinn):
    return [p for p in pinn.module_.parameters() if p.requires_grad]


def _linear_system(pinn, X):
    """A (n, K, p) and rho (n, K) by perturbing the trained output layer (exact: linear)."""
    params = _output_params(pinn)
    base = pinn.residuals(X)
    cols = []
    for p in params:
        flat = p.data.view(-1)
        for j in range(flat.numel()):
            flat[j] += 1.0
            cols.append(pinn.residuals(X) - base)
            flat[j] -= 1.0
    return np.stack(cols, axis=2), base


def _output_features(pinn, X):
    params = _output_params(pinn)
    base = pinn.predict(X)
    cols = []
    for p in params:
        flat = p.data.view(-1)
        for j in range(flat.numel()):
            flat[j] += 1.0
            cols.append(pinn.predict(X) - base)
            flat[j] -= 1.0
    return np.stack(cols, axis=1)


# -- problems ----------------------------------------------------------------------------------
@pytest.mark.parametrize("problem", [heat_1d(), drift_diffusion_1d(),
                                     drift_diffusion_1d(alpha=0.5, beta=3.0)],
                         ids=lambda p: p.name)
def test_exact_solutions_have_zero_residual(problem):
    X = make_pde_collocation(problem, 300, 40, 40, random_state=0)
    x = torch.tensor(X, requires_grad=True)
    u = problem.exact_solution(x)
    d = batched_derivatives(u, x, problem.derivatives)
    pde = problem.residual(x, d).detach().numpy()
    assert np.abs(pde).max() < 1e-9
    # the equation is not trivially satisfied: a perturbed solution has a large residual
    u2 = u * (1 + 0.1 * x[:, :1])
    d2 = batched_derivatives(u2, x, problem.derivatives)
    assert np.abs(problem.residual(x, d2).detach().numpy()).max() > 1e-2
    for cond in problem.conditions:
        on = cond.on(X)
        assert on.any()
        xc = torch.tensor(X[on])
        uc = problem.exact_solution(xc)[:, cond.component]
        other = cond.target(xc) if cond.kind == "dirichlet" else problem.exact_solution(
            cond.pair(xc))[:, cond.component]
        assert torch.abs(uc - other).max() < 1e-9


def test_collocation_layout():
    problem = heat_1d()
    X = make_pde_collocation(problem, 50, 10, 6, random_state=0)
    assert X.shape == (66, 2)
    np.testing.assert_array_equal(np.sort(np.unique(X[50:60, 0])), [-1.0, 1.0])
    np.testing.assert_array_equal(X[60:, 1], 0.0)
    np.testing.assert_array_equal(X, make_pde_collocation(problem, 50, 10, 6, random_state=0))


# -- known answers on the random-feature PINN --------------------------------------------------
def test_random_feature_pinn_solves_heat(rf):
    pinn, X, _ = rf
    assert pinn.loss_term_names_ == ["pde", "ic", "bc"]
    np.testing.assert_array_equal(pinn.point_terms_.sum(axis=0), [190, 20, 20])
    assert pinn.relative_l2_error(X) < 0.1


def test_influence_equals_closed_form_if(rf):
    pinn, X, X_test = rf
    A, rho = _linear_system(pinn, X)
    F = _output_features(pinn, X_test)
    G = np.einsum("nkp,nkq->pq", A, A)
    inf = PINNInfluence(pinn, hessian="exact", damping=0.0, eig_tol=0.0).fit()
    np.testing.assert_allclose(inf.hessian_, 2 * G, rtol=1e-9, atol=1e-9 * np.abs(G).max())
    expected = F @ np.linalg.solve(G, np.einsum("nkp,nk->pn", A, rho))
    got = inf.influence(X_test)
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-8 * np.abs(expected).max())


def test_leverage_corrected_influence_is_exact_leave_one_out(rf):
    pinn, X, X_test = rf
    inf = PINNInfluence(pinn, hessian="exact", damping=0.0, eig_tol=0.0,
                        loo_correction=True).fit()
    plain = PINNInfluence(pinn, hessian="exact", damping=0.0, eig_tol=0.0).fit()
    corrected, raw = inf.influence(X_test), plain.influence(X_test)
    # leverages from the autograd Jacobian (finite differences lose about 1e-8 here)
    xt = torch.tensor(X)
    _, J = per_point_jacobians(pinn.module_, pinn.problem, xt,
                               torch.tensor(pinn.point_terms_, dtype=torch.float64), None, 512)
    A = J.numpy()
    # leverage of a row = squared norm of its row of Q in A = QR (better conditioned than G^-1)
    Q, _ = np.linalg.qr(A.reshape(-1, A.shape[-1]))
    Q = Q.reshape(A.shape)
    deviations, rs = [], []
    for i in (3, 77, 151, 160, 171, 185):  # domain, domain, BC, BC, IC, IC points
        delta = inf.leave_one_out(i, X_test)
        err = np.max(np.abs(corrected[:, i] - delta)) / np.max(np.abs(delta))
        assert err < 1e-8
        deviations.append(np.max(np.abs(raw[:, i] - delta)) / np.max(np.abs(delta)))
        rs.append(np.corrcoef(raw[:, i], delta)[0, 1])
        if pinn.point_terms_[i].sum() == 1:  # single residual: Inf / LOO = 1 - h_ii
            h = Q[i, 0] @ Q[i, 0]
            # the eigen-inverse of G (condition number about 1e8) carries ~5e-8 of error
            np.testing.assert_allclose(raw[:, i] / delta, 1 - h, rtol=2e-7)
    # the plain IF is close to, but not, the leave-one-out change
    assert min(rs) > 0.95
    assert max(deviations) > 1e-3


def test_loo_correction_needs_linear_model_and_exact_hessian(rf):
    pinn, _, _ = rf
    with pytest.raises(ValueError, match="loo_correction=True needs an exact Hessian"):
        PINNInfluence(pinn, hessian="arnoldi", loo_correction=True).fit()


# -- trained PINN: additivity, Arnoldi, diagnostics --------------------------------------------
@pytest.fixture(scope="module")
def small():
    problem = heat_1d()
    X = make_pde_collocation(problem, 100, 10, 10, random_state=0)
    pinn = PINNRegressor(problem, hidden_layer_sizes=(16, 16), solver="adam", max_epochs=100,
                         lr=1e-2, random_state=0).fit(X)
    X_test = make_pde_collocation(problem, 40, 4, 4, random_state=3)
    exact = PINNInfluence(pinn, hessian="exact_topk", projection_dim=50).fit()
    return pinn, X, X_test, exact


def test_additivity_and_diagnostics(small):
    pinn, X, X_test, exact = small
    assert exact.n_params_ == 337
    total = exact.influence(X_test)
    by = exact.influence_by_term(X_test)
    np.testing.assert_allclose(sum(by.values()), total, rtol=0,
                               atol=1e-10 * np.abs(total).max())
    # a point outside a term has zero influence through it
    assert np.all(by["ic"][:, ~pinn.point_terms_[:, 1]] == 0)
    frac = exact.loss_fractions(X_test)
    np.testing.assert_allclose(frac.sum(axis=1), 1.0)
    canc = exact.cancellation(X_test)
    assert np.all((canc >= 0) & (canc <= 1))
    D, share = exact.directionality(X_test)
    on_condition = np.isclose(X_test[:, 1], 0) | np.isclose(np.abs(X_test[:, 0]), 1)
    assert np.all(np.isnan(D[on_condition])) and np.all(np.isfinite(D[~on_condition]))
    np.testing.assert_allclose(share[~on_condition],
                               (X[None, :, 1] <= X_test[~on_condition, None, 1]).mean(axis=1))
    # self-influence is phi(g) . phi(g) >= 0; grad-dot ignores the Hessian
    assert np.all(exact.self_influence() >= 0)
    assert exact.grad_dot(X_test).shape == total.shape
    assert exact.eigenvalues_.shape == (50,) and np.all(np.diff(exact.eigenvalues_) <= 0)
    assert exact.n_negative_eigenvalues_ > 0  # a non-convex loss


def test_arnoldi_matches_exact_top_k(small):
    pinn, _, X_test, exact = small
    arnoldi = PINNInfluence(pinn, hessian="arnoldi", arnoldi_dim=200, projection_dim=50).fit()
    a, e = arnoldi.influence(X_test), exact.influence(X_test)
    assert np.corrcoef(a.ravel(), e.ravel())[0, 1] >= 0.999
    # a 5-dimensional Krylov space is a coarse approximation (the test can fail)
    coarse = PINNInfluence(pinn, hessian="arnoldi", arnoldi_dim=5, projection_dim=5).fit()
    assert np.corrcoef(coarse.influence(X_test).ravel(), e.ravel())[0, 1] < 0.999


def test_influence_is_deterministic_and_pickles(small):
    pinn, X, X_test, exact = small
    first = PINNInfluence(pinn, hessian="arnoldi", arnoldi_dim=30, projection_dim=10,
                          random_state=1).fit().influence(X_test[:5])
    second = PINNInfluence(pinn, hessian="arnoldi", arnoldi_dim=30, projection_dim=10,
                           random_state=1).fit().influence(X_test[:5])
    np.testing.assert_array_equal(first, second)
    restored = pickle.loads(pickle.dumps(pinn))
    np.testing.assert_array_equal(restored.predict(X_test), pinn.predict(X_test))
    again = clone(pinn).fit(X)
    np.testing.assert_array_equal(again.predict(X_test), pinn.predict(X_test))


def test_captum_arnoldi_parity(small, tmp_path):
    pytest.importorskip("captum", reason="captum (test extra) is the reference Arnoldi "
                                         "influence implementation")
    from sklearn_icml26.pinn._captum import captum_arnoldi_influence

    pinn, X, X_test, _ = small
    ours = PINNInfluence(pinn, hessian="arnoldi", arnoldi_dim=40, projection_dim=15).fit()
    theirs = captum_arnoldi_influence(pinn, X_test[:6], arnoldi_dim=40, projection_dim=15,
                                      checkpoint_dir=tmp_path)
    from scipy.stats import spearmanr

    assert spearmanr(ours.influence(X_test[:6]).ravel(), theirs.ravel()).statistic >= 0.99


# -- solvers -----------------------------------------------------------------------------------
def test_lbfgs_improves_on_adam():
    problem = heat_1d()
    X = make_pde_collocation(problem, 60, 8, 8, random_state=0)
    kw = dict(hidden_layer_sizes=(8,), max_epochs=30, max_iter=40, random_state=0)
    adam = PINNRegressor(problem, solver="adam", **kw).fit(X)
    both = PINNRegressor(problem, solver="adam+lbfgs", **kw).fit(X)
    np.testing.assert_allclose(both.loss_curve_[:30], adam.loss_curve_)
    assert both.loss_curve_[-1] < 0.5 * adam.loss_curve_[-1]
    assert 30 < both.n_iter_ <= 70
    only = PINNRegressor(problem, solver="lbfgs", **kw).fit(X)
    assert only.n_iter_ <= 40 and only.loss_curve_[-1] < only.loss_curve_[0]


def test_training_objective_is_weighted_mean_per_term():
    # the whole collocation set reaches the adapter as one packed sample; the recorded
    # objective must still be sum_k w_k mean_{i in S_k} rho_k^2 (Adam is nearly blind to a
    # wrong scale, so check the value: a tiny step leaves the parameters where they were)
    problem = heat_1d()
    X = make_pde_collocation(problem, 50, 7, 9, random_state=3)
    pinn = PINNRegressor(problem, hidden_layer_sizes=(6,), solver="adam", max_epochs=2,
                         lr=1e-14, loss_weights={"ic": 3.0}, random_state=0).fit(X)
    rho = pinn.residuals(X)
    M = pinn.point_terms_
    expected = sum(w * (rho[M[:, k], k] ** 2).mean()
                   for k, w in enumerate(pinn.loss_weights_))
    assert len(pinn.loss_curve_) == 2 and pinn.n_iter_ == 2
    np.testing.assert_allclose(pinn.loss_curve_[-1], expected, rtol=1e-9)


def test_data_term_and_loss_weights():
    problem = heat_1d()
    X = make_pde_collocation(problem, 40, 6, 6, random_state=0)
    y = np.full(len(X), np.nan)
    y[:10] = np.sin(np.pi * X[:10, 0]) * np.exp(-X[:10, 1])
    pinn = PINNRegressor(problem, hidden_layer_sizes=(8,), solver="adam", max_epochs=5,
                         loss_weights={"data": 2.0}, random_state=0).fit(X, y)
    assert pinn.loss_term_names_ == ["pde", "ic", "bc", "data"]
    np.testing.assert_array_equal(pinn.point_terms_[:, 3], ~np.isnan(y))
    np.testing.assert_array_equal(pinn.loss_weights_, [1, 1, 1, 2])


def test_plain_mlp_mode_regresses():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(200, 2))
    y = np.sin(X[:, 0]) + X[:, 1] ** 2
    reg = PINNRegressor(hidden_layer_sizes=(8,), solver="adam+lbfgs", max_epochs=20,
                        max_iter=60, random_state=0).fit(X, y)
    assert reg.score(X, y) > 0.99


# -- errors ------------------------------------------------------------------------------------
def _bad_shape_residual(x, d):
    return d[(1,)].reshape(1, -1)


def test_errors_name_the_argument():
    problem = heat_1d()
    X = make_pde_collocation(problem, 30, 4, 4, random_state=0)
    quick = dict(hidden_layer_sizes=(4,), solver="adam", max_epochs=1)
    with pytest.raises(ValueError, match="X has 3 columns but problem.bounds has 2"):
        PINNRegressor(problem, **quick).fit(np.c_[X, X[:, :1]])
    with pytest.raises(ValueError, match="outside problem.bounds"):
        PINNRegressor(problem, **quick).fit(X + [0, 2.0])
    with pytest.raises(ValueError, match="no training point lies on condition 'ic'"):
        PINNRegressor(problem, **quick).fit(X[X[:, 1] > 0])
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="X.*NaN"):
        PINNRegressor(problem, **quick).fit(X_nan)
    with pytest.raises(ValueError, match="y.*NaN"):
        PINNRegressor(**quick).fit(X, np.r_[np.nan, np.zeros(len(X) - 1)])
    with pytest.raises(ValueError, match="y contains infinity"):
        PINNRegressor(problem, **quick).fit(X, np.r_[np.inf, np.zeros(len(X) - 1)])
    bad = PDEProblem(bounds=problem.bounds, derivatives=[(1,)], residual=_bad_shape_residual,
                     conditions=problem.conditions)
    with pytest.raises(ValueError, match=r"problem.residual must return shape \(n, n_pde\)"):
        PINNRegressor(bad, **quick).fit(X)
    with pytest.raises(ValueError, match=r"derivatives: multi-index \(2,\)"):
        PDEProblem(bounds=problem.bounds, derivatives=[(2,)], residual=_bad_shape_residual)
    with pytest.raises(ValueError, match="kind must be one of"):
        Condition("bc", "neumann", on=np.isfinite)
    with pytest.raises(ValueError, match="solver='lstsq' needs train_hidden=False"):
        PINNRegressor(problem, solver="lstsq").fit(X)
    with pytest.raises(ValueError, match="loss_weights names unknown"):
        PINNRegressor(problem, loss_weights={"bc_3": 1.0}, **quick).fit(X)
    with pytest.raises(ValueError, match="estimator must be a fitted PINNRegressor"):
        PINNInfluence(PINNRegressor(problem)).fit()
    fitted = PINNRegressor(problem, **quick).fit(X)
    inf = PINNInfluence(fitted, hessian="exact").fit()
    with pytest.raises(ValueError, match=r"unknown term 'bc_3'; available: \["):
        inf.influence(X, train_term="bc_3")
    with pytest.raises(ValueError, match="X has 1 features"):
        inf.influence(X[:, :1])


def test_optimizer_params_reach_adam():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(40, 2))
    y = X[:, 0] - X[:, 1]
    kw = dict(hidden_layer_sizes=(4,), solver="adam", max_epochs=10, lr=0.05, random_state=0)
    default = PINNRegressor(**kw).fit(X, y)
    same = PINNRegressor(optimizer_params={"betas": (0.9, 0.999)}, **kw).fit(X, y)
    other = PINNRegressor(optimizer_params={"betas": (0.5, 0.9)}, **kw).fit(X, y)
    np.testing.assert_array_equal(same.predict(X), default.predict(X))
    assert not np.allclose(other.predict(X), default.predict(X))


# -- regressions -------------------------------------------------------------------------------
_REPRO_KW = dict(hidden_layer_sizes=(6,), max_epochs=20, max_iter=5, random_state=0)


@pytest.fixture(scope="module")
def heat_small():
    problem = heat_1d()
    return problem, make_pde_collocation(problem, 60, 10, 10, random_state=0)


@pytest.mark.parametrize("solver", ["adam", "lbfgs", "adam+lbfgs", "lstsq"])
def test_fitted_pinn_pickles_for_every_solver(heat_small, solver):
    # the L-BFGS optimizer factory was a closure: pickling a fitted default PINN raised
    # "Can't pickle local object '_lbfgs_factory.<locals>.make'"
    problem, X = heat_small
    extra = dict(train_hidden=False) if solver == "lstsq" else {}
    pinn = PINNRegressor(problem, solver=solver, **_REPRO_KW, **extra).fit(X)
    restored = pickle.loads(pickle.dumps(pinn))
    np.testing.assert_array_equal(restored.predict(X), pinn.predict(X))
    np.testing.assert_array_equal(restored.loss_curve_, pinn.loss_curve_)
    assert isinstance(pinn.loss_curve_, list) and len(pinn.loss_curve_) == pinn.n_iter_


def test_finite_divergence_warns(heat_small):
    from sklearn.exceptions import ConvergenceWarning

    problem, X = heat_small
    with pytest.warns(ConvergenceWarning, match="rose a hundredfold or more over the fit"):
        diverged = PINNRegressor(problem, lr=1e10, solver="adam", **_REPRO_KW).fit(X)
    # the loss is finite but has exploded (1.9e1 -> 4e20); the solution is bounded by 1
    assert np.isfinite(diverged.loss_curve_[-1])
    assert diverged.loss_curve_[-1] > 1e10 * diverged.loss_curve_[0]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        PINNRegressor(problem, **_REPRO_KW).fit(X)
        PINNRegressor(problem, solver="adam", **_REPRO_KW).fit(X)


@pytest.mark.parametrize("weights", [{"pde": -1.0}, {"pde": float("nan")},
                                     {"bc": float("inf")}, [-1, 1, 1]])
def test_loss_weights_must_be_finite_and_nonnegative(heat_small, weights):
    problem, X = heat_small
    match = "loss_weights must be finite and >= 0"
    if isinstance(weights, dict):
        match += rf".*loss_weights\['{next(iter(weights))}'\]"
    with pytest.raises(ValueError, match=match):
        PINNRegressor(problem, loss_weights=weights, **_REPRO_KW).fit(X)


def test_optim_guide_names_only_estimators_with_an_optimizer_parameter():
    # the guide said "in every torch-backed estimator of the package, optimizer='adamo'",
    # but PINNRegressor has no optimizer parameter
    import importlib
    import re
    from pathlib import Path

    guide = Path(__file__).parents[2] / "doc" / "user_guide" / "optim.rst"
    text = " ".join(guide.read_text().split())
    assert "In every torch-backed estimator" not in text
    start = text.index("that have an ``optimizer`` parameter")
    listed = re.findall(r"``([A-Z]\w+)``", text[start : text.index("accept", start)])
    assert len(listed) == 6
    import sklearn_icml26

    where = {"OfflineQRegressor": "optim", "MPFSurface": "surface",
             "HolderTransformerRegressor": "approximation", "NeuroMambaImputer": "imputation",
             "ViolinViTClassifier": "vision", "HDTreeLineage": "lineage"}
    for name in listed:
        cls = getattr(importlib.import_module(f"{sklearn_icml26.__name__}.{where[name]}"), name)
        assert "optimizer" in cls._get_param_names(), name
    assert "optimizer" not in PINNRegressor._get_param_names()
    assert "``PINNRegressor`` has no ``optimizer`` parameter" in text
    with pytest.raises(TypeError, match="optimizer"):
        PINNRegressor(heat_1d(), optimizer="adamo")


@pytest.mark.parametrize("reduction, weights, objective", [
    ("mean", None, "sum"), ("mean", None, "training"),
    ("mean", {"ic": 3.0, "bc": 0.5}, "training"), ("sum", {"ic": 3.0}, "sum")])
def test_loo_correction_is_exact_for_every_reduction_and_weighting(reduction, weights,
                                                                   objective):
    # with the default loss_reduction="mean" the leverage correction missed the n_k/(n_k-1)
    # rescaling of the other points of a removed point's terms (relative error 1.58 at
    # point 3); with loss weights != 1 and hessian_objective="sum" it ignored the weights
    problem = heat_1d()
    X = make_pde_collocation(problem, 150, 20, 20, random_state=0)
    X_test = make_pde_collocation(problem, 10, 0, 0, random_state=1)
    pinn = PINNRegressor(problem, **{**RF, "loss_reduction": reduction,
                                     "loss_weights": weights}).fit(X)
    inf = PINNInfluence(pinn, hessian="exact", loo_correction=True, damping=0.0, eig_tol=0.0,
                        hessian_objective=objective).fit()
    corrected = inf.influence(X_test)
    for i in (3, 77, 151, 171):  # domain, domain, BC, IC points
        delta = inf.leave_one_out(i, X_test)
        assert np.max(np.abs(corrected[:, i] - delta)) / np.max(np.abs(delta)) < 1e-6
    by = inf.influence_by_term(X_test)
    np.testing.assert_allclose(sum(by.values()), corrected, rtol=0,
                               atol=1e-10 * np.abs(corrected).max())
    assert np.all(by["ic"][:, ~pinn.point_terms_[:, 1]] == 0)
    assert np.all(by["bc"][:, ~pinn.point_terms_[:, 2]] == 0)


def test_loo_correction_warns_without_a_problem():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(80, 2))
    y = np.sin(X[:, 0]) + X[:, 1]
    reg = PINNRegressor(None, **{**RF, "hidden_layer_sizes": (20,)}).fit(X, y)
    with pytest.warns(UserWarning, match="not the exact leave-one-out change"):
        PINNInfluence(reg, hessian="exact", loo_correction=True).fit()


def test_leave_one_out_warns_when_the_pinn_is_not_seeded(heat_small):
    import warnings

    problem, X = heat_small
    X_test = X[:8]
    kw = {**_REPRO_KW, "solver": "adam", "random_state": None}
    pinn = PINNRegressor(problem, **kw).fit(X)
    inf = PINNInfluence(pinn, hessian="exact").fit()
    with pytest.warns(UserWarning, match="random_state is None, so the retraining is not "
                                         "from the same initialisation"):
        first = inf.leave_one_out(3, X_test)
    with pytest.warns(UserWarning, match="random_state is None"):
        second = inf.leave_one_out(3, X_test)
    assert np.max(np.abs(first - second)) > 1e-3  # a different initialisation each call
    seeded = PINNRegressor(problem, **{**kw, "random_state": 0}).fit(X)
    inf = PINNInfluence(seeded, hessian="exact").fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        np.testing.assert_array_equal(inf.leave_one_out(3, X_test),
                                      inf.leave_one_out(3, X_test))


# -- the training loop (issue 37: shared primitives, one divergence policy) ----------------------
def _objective(pinn, X):
    rho = pinn.residuals(X)
    M = pinn.point_terms_
    return sum(w * (rho[M[:, k], k] ** 2).mean() for k, w in enumerate(pinn.loss_weights_))


def test_lbfgs_one_iteration_at_a_time_runs_the_iterates_of_one_torch_call():
    # the loop steps torch's L-BFGS one iteration at a time to check every accepted loss;
    # it must move exactly as one LBFGS(max_iter=K).step(closure) call (without passing the
    # remaining evaluation budget to each line search, iteration 5 already differed)
    import math

    from sklearn_icml26.pinn._pinn import _lbfgs_steps

    gen = torch.Generator().manual_seed(0)
    A = torch.randn(30, 8, dtype=torch.float64, generator=gen)
    b = torch.randn(30, dtype=torch.float64, generator=gen)
    start = torch.randn(8, dtype=torch.float64, generator=gen)

    def objective(w):
        return (torch.tanh(A @ w) - b).pow(2).mean() + 0.01 * w.pow(4).sum()

    for K in (3, 10, 25):
        w1 = start.clone().requires_grad_(True)
        opt = torch.optim.LBFGS([w1], lr=1, max_iter=K, max_eval=math.ceil(1.25 * K),
                                tolerance_grad=1e-10, tolerance_change=1e-14, history_size=50,
                                line_search_fn="strong_wolfe")
        evaluations = []

        def closure(w1=w1, opt=opt, evaluations=evaluations):
            opt.zero_grad()
            loss = objective(w1)
            loss.backward()
            evaluations.append(float(loss))
            return loss

        opt.step(closure)
        w2 = start.clone().requires_grad_(True)
        losses = list(_lbfgs_steps([w2], lambda w2=w2: objective(w2), K))
        assert torch.equal(w1, w2)
        # the start, then one accepted loss per iteration: decreasing, ending at the result
        assert losses[0] == evaluations[0] and losses[-1] == float(objective(w1))
        assert np.all(np.diff(losses) < 0)
        assert len(losses) - 1 <= K
    assert max(np.diff(evaluations)) > 0  # the one call did evaluate rejected trial points


def test_lbfgs_curve_holds_the_accepted_losses(heat_small):
    # loss_history_ recorded every function evaluation, line-search trials included (5 rises
    # here), and the divergence checks read its last entry, possibly a rejected trial
    problem, X = heat_small
    pinn = PINNRegressor(problem, solver="lbfgs", hidden_layer_sizes=(6,), max_iter=30,
                         random_state=0).fit(X)
    curve = np.asarray(pinn.loss_curve_)
    assert len(curve) == pinn.n_iter_ > 5
    assert np.all(np.diff(curve) < 0)
    np.testing.assert_allclose(curve[-1], _objective(pinn, X), rtol=1e-9)


def test_nonfinite_adam_loss_restores_the_initial_parameters(heat_small):
    from sklearn.exceptions import ConvergenceWarning

    problem, X = heat_small
    kw = dict(hidden_layer_sizes=(6,), solver="adam", random_state=0)
    with pytest.warns(ConvergenceWarning, match=r"became non-finite in step 2.*the initial "
                                                r"ones\) were restored"):
        diverged = PINNRegressor(problem, lr=1e300, max_epochs=20, **kw).fit(X)
    assert diverged.n_iter_ == 0 and diverged.loss_curve_ == []
    # a 1e-300 step leaves float64 parameters where they were: the initial network
    initial = PINNRegressor(problem, lr=1e-300, max_epochs=1, **kw).fit(X)
    np.testing.assert_array_equal(diverged.predict(X), initial.predict(X))


class _NaNAfter:
    """The heat residual, NaN from the ``n``-th evaluation on the training set."""

    def __init__(self, n):
        self.n, self.calls, self.residual = n, 0, heat_1d().residual

    def __call__(self, x, d):
        r = self.residual(x, d)
        self.calls += x.shape[0] > 2  # fit also checks the residual's shape on 2 points
        return r * float("nan") if self.calls >= self.n else r


def test_nonfinite_lbfgs_loss_restores_the_last_accepted_finite_state(heat_small):
    # PINNRegressor only warned; now the guard stops at the first non-finite accepted loss
    # and restores the last state whose objective was finite: the fit is the clean fit
    # stopped after the iterations kept
    from sklearn.exceptions import ConvergenceWarning

    heat, X = heat_small
    broken = PDEProblem(bounds=heat.bounds, derivatives=heat.derivatives,
                        residual=_NaNAfter(8), conditions=heat.conditions)
    kw = dict(hidden_layer_sizes=(6,), solver="lbfgs", random_state=0)
    with pytest.warns(ConvergenceWarning, match="became non-finite in step"):
        diverged = PINNRegressor(broken, max_iter=20, **kw).fit(X)
    assert 0 < diverged.n_iter_ < 8
    assert np.all(np.isfinite(diverged.loss_curve_))
    clean = PINNRegressor(heat, max_iter=diverged.n_iter_, **kw).fit(X)
    assert clean.n_iter_ == diverged.n_iter_
    np.testing.assert_array_equal(diverged.predict(X), clean.predict(X))
    assert diverged.loss_curve_ == clean.loss_curve_


def test_fitted_state_ends_with_an_underscore(heat_small):
    # PINNRegressor kept _y_1d, PINNInfluence _net, _names, _X, _M, _Y, _R, _rho, _J, ...
    problem, X = heat_small
    pinn = PINNRegressor(problem, **{**_REPRO_KW, "solver": "adam+lbfgs"}).fit(X)
    for est in (pinn, PINNInfluence(pinn, hessian="exact").fit()):
        params = set(est.get_params(deep=False))
        kept = [k for k in vars(est) if k not in params and not k.endswith("_")]
        assert kept == [], type(est).__name__
    inf = PINNInfluence(pinn, hessian="exact").fit()
    assert isinstance(inf.fit_time_, float) and set(inf.fit_time_parts_) == {
        "gradients", "hessian", "projection"}
    assert inf.train_gradients_.shape == (len(X), inf.n_params_)
    # grad_dot reads the kept training gradients
    np.testing.assert_allclose(inf.grad_dot(X[:3]),
                               inf._test_gradients(X[:3], "output_0").numpy()
                               @ inf.train_gradients_.T)


def test_optimizer_params_are_checked_against_the_stage_optimizer(heat_small):
    problem, X = heat_small
    with pytest.raises(ValueError, match="not an argument of the optimizer Adam"):
        PINNRegressor(problem, optimizer_params={"history_size": 5}, **_REPRO_KW).fit(X)
    with pytest.raises(ValueError, match=r"\['betas'\] are not L-BFGS settings"):
        PINNRegressor(problem, solver="lbfgs", optimizer_params={"betas": (0.9, 0.9)},
                      **_REPRO_KW).fit(X)
    # an L-BFGS setting reaches L-BFGS: an evaluation budget of 3 stops it early
    short = PINNRegressor(problem, solver="lbfgs", optimizer_params={"max_eval": 3},
                          **{**_REPRO_KW, "max_iter": 50}).fit(X)
    assert 1 <= short.n_iter_ <= 2


def test_verbose_prints_plain_lines_per_stage(heat_small, capsys):
    problem, X = heat_small
    PINNRegressor(problem, verbose=1, **{**_REPRO_KW, "max_epochs": 40, "max_iter": 3}).fit(X)
    lines = capsys.readouterr().out.splitlines()
    adam = [ln for ln in lines if ln.startswith("PINNRegressor Adam  epoch ")]
    lbfgs = [ln for ln in lines if ln.startswith("PINNRegressor L-BFGS  iteration ")]
    assert len(adam) == 21 and adam[-1].startswith("PINNRegressor Adam  epoch 40/40")
    assert 1 <= len(lbfgs) <= 3 and "train_loss" in lbfgs[0]
    assert len(lines) == len(adam) + len(lbfgs) and "\x1b" not in "".join(lines)
