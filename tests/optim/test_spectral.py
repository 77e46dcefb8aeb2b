"""td_spectral_radius: known answers of a linear critic and the augmented operator."""

import numpy as np
import pytest
import torch

from sklearn_icml26.optim import td_spectral_radius

torch.set_num_threads(1)


def _linear(w=1.0):
    critic = torch.nn.Linear(1, 1, bias=False).double()
    with torch.no_grad():
        critic.weight.fill_(w)
    return critic


def test_single_transition_known_answers():
    # Q = w x, one transition 1 -> 2, D = I: S = 2 gamma - 1
    out = td_spectral_radius(_linear(), [[1.0]], [[2.0]], gamma=0.99, lr=0.1, loss_scale=1.0)
    np.testing.assert_allclose(out["eig_S"], [0.98], atol=1e-12)
    assert round(out["rho"], 4) == 1.0637 and not out["hurwitz"]
    out = td_spectral_radius(_linear(), [[1.0]], [[2.0]], gamma=0.0, lr=0.1, loss_scale=1.0)
    np.testing.assert_allclose(out["eig_S"], [-1.0], atol=1e-12)
    assert round(out["rho"], 4) == 0.9487 and out["hurwitz"]
    # loss_scale=None is 2/n: lr 0.05 on one point is eta = 0.1 again
    assert td_spectral_radius(_linear(), [[1.0]], [[2.0]], gamma=0.0, lr=0.05)["eta"] == 0.1
    np.testing.assert_allclose(out["isometry_defect"], 0.0, atol=1e-12)
    np.testing.assert_allclose(out["bootstrap_scale"], 0.0, atol=1e-12)


def test_rho_is_that_of_the_explicit_augmented_operator():
    torch.manual_seed(0)
    critic = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(),
                                 torch.nn.Linear(8, 1), torch.nn.Flatten(0)).double()
    X = torch.randn(6, 3, dtype=torch.float64)
    Xn = X + 0.3 * torch.randn(6, 3, dtype=torch.float64)
    gamma, lr, beta1 = 0.9, 0.2, 0.8
    out = td_spectral_radius(critic, X, Xn, gamma=gamma, lr=lr, beta1=beta1)
    Z = torch.autograd.functional.jacobian(
        lambda *p: torch.func.functional_call(critic, dict(zip(
            [k for k, _ in critic.named_parameters()], p, strict=True)), (X,)),
        tuple(critic.parameters()))
    Z = torch.cat([z.reshape(6, -1) for z in Z], 1).numpy()
    Zn = torch.autograd.functional.jacobian(
        lambda *p: torch.func.functional_call(critic, dict(zip(
            [k for k, _ in critic.named_parameters()], p, strict=True)), (Xn,)),
        tuple(critic.parameters()))
    Zn = torch.cat([z.reshape(6, -1) for z in Zn], 1).numpy()
    S = gamma * Zn @ Z.T - Z @ Z.T
    eta = 2 * lr / 6
    n = 6
    A = np.block([[(1 + beta1) * np.eye(n) + eta * (1 - beta1) * S, -beta1 * np.eye(n)],
                  [np.eye(n), np.zeros((n, n))]])
    np.testing.assert_allclose(out["rho"], np.max(np.abs(np.linalg.eigvals(A))), rtol=1e-10)
    np.testing.assert_allclose(np.sort(out["eig_S"].real), np.sort(np.linalg.eigvals(S).real),
                               atol=1e-10)
    np.testing.assert_allclose(out["isometry_defect"],
                               np.linalg.norm(Z @ Z.T - np.eye(n), 2), rtol=1e-8)
    np.testing.assert_allclose(out["bootstrap_scale"], gamma * np.linalg.norm(Z, 2)
                               * np.linalg.norm(Zn, 2), rtol=1e-8)


def test_adam_preconditioner_is_read_from_the_optimizer():
    critic = _linear()
    opt = torch.optim.Adam(critic.parameters(), lr=0.1)
    critic.weight.grad = torch.full_like(critic.weight, 2.0)
    opt.step()
    # v_hat = 4 after one bias-corrected step: D = 1 / (2 + eps), S = (2 gamma - 1) / 2
    out = td_spectral_radius(critic, [[1.0]], [[2.0]], gamma=0.99, lr=0.1, loss_scale=1.0,
                             optimizer=opt)
    np.testing.assert_allclose(out["eig_S"].real, [0.98 / 2], rtol=1e-6)


@pytest.mark.parametrize("kwargs, match", [
    ({"gamma": 1.0}, "gamma must be in"), ({"gamma": -0.1}, "gamma must be in"),
    ({"lr": 0.0}, "lr must be > 0"), ({"beta1": 1.0}, "beta1 must be"),
    ({"loss_scale": -1.0}, "loss_scale"), ({"max_points": 0}, "max_points"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        td_spectral_radius(_linear(), [[1.0]], [[2.0]], **kwargs)


def test_bad_shapes():
    with pytest.raises(ValueError, match="X_next must have the shape"):
        td_spectral_radius(_linear(), [[1.0], [2.0]], [[2.0]])
    with pytest.raises(ValueError, match="X must be 2-D"):
        td_spectral_radius(_linear(), [1.0], [2.0])
    with pytest.raises(ValueError, match="X holds NaN or infinite"):
        td_spectral_radius(_linear(), [[np.nan], [2.0]], [[2.0], [1.0]])
    with pytest.raises(ValueError, match=r"critic cannot evaluate X of shape \(2, 3\)"):
        td_spectral_radius(_linear(), np.ones((2, 3)), np.ones((2, 3)))
