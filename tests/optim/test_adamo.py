"""AdamO: Adam's update at kappa = 0, the correction's bounds, the budget and Adam's state."""

import copy

import numpy as np
import pytest
import torch

from sklearn_icml26.optim import AdamO
from sklearn_icml26.optim._adamo import orthogonality_residual

torch.set_num_threads(1)


def _mlp(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.Tanh(), torch.nn.Linear(16, 12),
                               torch.nn.Tanh(), torch.nn.Linear(12, 1))


def _train(net, opt, steps=100, seed=1, hook=None):
    g = torch.Generator().manual_seed(seed)
    x, y = torch.randn(64, 5, generator=g), torch.randn(64, 1, generator=g)
    for _ in range(steps):
        opt.zero_grad()
        ((net(x) - y) ** 2).mean().backward()
        grads = [p.grad.clone() for p in net.parameters()]
        before = [p.detach().clone() for p in net.parameters()]
        opt.step()
        if hook is not None:
            hook(grads, before)
    return net


@pytest.mark.parametrize("weight_decay", [0.0, 1e-2])
def test_kappa_zero_is_adam_bit_for_bit(weight_decay):
    a, b = _mlp(), _mlp()
    _train(a, torch.optim.Adam(a.parameters(), lr=1e-2, weight_decay=weight_decay))
    _train(b, AdamO(b.parameters(), lr=1e-2, weight_decay=weight_decay, kappa=0.0, tau=0.3))
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(p, q)


def test_moments_never_see_the_correction():
    # the moments are those of Adam on the same gradient sequence, whatever kappa does to W
    torch.manual_seed(0)
    W = torch.nn.Parameter(torch.randn(6, 8))
    ref = torch.nn.Parameter(W.detach().clone())
    opt, adam = AdamO([W], lr=0.05, kappa=1.0, tau=100.0), torch.optim.Adam([ref], lr=0.05)
    g = torch.Generator().manual_seed(3)
    for _ in range(20):
        grad = torch.randn(6, 8, generator=g)
        W.grad, ref.grad = grad.clone(), grad.clone()
        opt.step()
        adam.step()
    assert not torch.allclose(W, ref)  # the correction moved W
    for key in ("exp_avg", "exp_avg_sq", "step"):
        assert torch.equal(opt.state[W][key], adam.state[ref][key])


def test_correction_norm_and_budget_scale_bounds():
    kappa = 0.7
    net = _mlp()
    opt = AdamO(net.parameters(), lr=1e-2, kappa=kappa, tau=0.05)
    seen = []

    def hook(grads, before):
        for p, g, w0 in zip(net.parameters(), grads, before, strict=True):
            st = opt.state[p]
            if "last_delta_norm" not in st:
                continue
            group = opt.param_groups[0]
            beta1, beta2 = group["betas"]
            t = float(st["step"])
            u = (st["exp_avg"] / (1 - beta1**t)) / (
                (st["exp_avg_sq"] / (1 - beta2**t)).sqrt() + group["eps"])
            delta = -(p.detach() - w0) / group["lr"] - u
            assert float(torch.linalg.vector_norm(delta)) <= kappa * float(
                torch.linalg.vector_norm(u)) * (1 + 1e-5) + 1e-7
            np.testing.assert_allclose(float(torch.linalg.vector_norm(delta)),
                                       float(st["last_delta_norm"]), rtol=1e-3, atol=1e-6)
            scale = float(st["last_budget_scale"])
            assert 0.0 <= scale <= 1.0
            seen.append(scale)
            # the budget: <g, delta> >= -tau max(<g, u>, 0), up to float32 rounding
            gu, gd = float((g * u).sum()), float((g * delta).sum())
            assert gd >= -0.05 * max(gu, 0.0) - 1e-5 * (abs(gu) + abs(gd)) - 1e-7
    _train(net, opt, steps=60, hook=hook)
    assert seen and min(seen) < 1.0  # the budget was active at least once


def test_tau_zero_is_conflict_free():
    net = _mlp(2)
    opt = AdamO(net.parameters(), lr=1e-2, kappa=1.0, tau=0.0)

    def hook(grads, before):
        for p, g, w0 in zip(net.parameters(), grads, before, strict=True):
            if "last_delta_norm" in opt.state[p]:
                st, group = opt.state[p], opt.param_groups[0]
                beta1, beta2 = group["betas"]
                t = float(st["step"])
                u = (st["exp_avg"] / (1 - beta1**t)) / (
                    (st["exp_avg_sq"] / (1 - beta2**t)).sqrt() + group["eps"])
                delta = -(p.detach() - w0) / group["lr"] - u
                assert float((g * delta).sum()) >= -1e-6
    _train(net, opt, steps=40, hook=hook)


def test_scope_and_branches():
    torch.manual_seed(0)
    wide, tall, row = torch.randn(8, 16), torch.randn(16, 8), torch.randn(1, 16)
    I8 = torch.eye(8)
    torch.testing.assert_close(orthogonality_residual(wide), (wide @ wide.T - I8) @ wide)
    torch.testing.assert_close(orthogonality_residual(tall), tall @ (tall.T @ tall - I8))
    # "auto" leaves biases and one-row heads alone; True constrains the head too
    params = [torch.nn.Parameter(t.clone()) for t in (wide, row, torch.randn(8))]
    opt = AdamO(params, lr=0.01, kappa=1.0)
    for p in params:
        p.grad = torch.ones_like(p)
    opt.step()
    assert ["last_delta_norm" in opt.state[p] for p in params] == [True, False, False]
    head = torch.nn.Parameter(row.clone())
    opt = AdamO([{"params": [head], "orthogonalize": True}], lr=0.01)
    head.grad = torch.ones_like(head)
    opt.step()
    assert "last_delta_norm" in opt.state[head]
    conv = torch.nn.Parameter(torch.randn(4, 3, 2, 2))  # read as 4 x 12
    torch.testing.assert_close(orthogonality_residual(conv).reshape(4, 12),
                               orthogonality_residual(conv.detach().reshape(4, 12)))


def test_pure_correction_steps_reduce_the_isometry_defect():
    torch.manual_seed(0)
    Q, _ = torch.linalg.qr(torch.randn(10, 6, dtype=torch.float64))
    W = torch.nn.Parameter(1.5 * Q)
    # a constant gradient of zero: u = 0, so drive the scale with a unit Adam step instead
    opt = AdamO([W], lr=0.01, kappa=1.0, tau=100.0)
    defects = []
    for _ in range(30):
        W.grad = torch.zeros_like(W)
        opt.state.clear()  # fresh moments each step
        opt.step()
        # with g = 0 Adam's u is 0 and the correction has no scale: W must not move
        defects.append(float(torch.linalg.matrix_norm(W.detach().T @ W.detach()
                                                     - torch.eye(6, dtype=W.dtype))))
    assert np.allclose(defects, defects[0])
    # with a gradient orthogonal to everything relevant (tiny, fixed), the correction acts
    opt = AdamO([W], lr=0.01, kappa=1.0, tau=100.0, eps=1e-30)
    defects = [defects[0]]
    for _ in range(30):
        W.grad = torch.full_like(W, 1e-12)
        opt.step()
        defects.append(float(torch.linalg.matrix_norm(W.detach().T @ W.detach()
                                                     - torch.eye(6, dtype=W.dtype))))
    assert np.all(np.diff(defects) < 0), defects


def test_adam_state_dict_loads_and_continues_like_adam():
    a, b = _mlp(), _mlp()
    adam = torch.optim.Adam(a.parameters(), lr=1e-2)
    _train(a, adam, steps=10)
    b.load_state_dict(a.state_dict())
    opt = AdamO(b.parameters(), lr=1e-2, kappa=0.0)
    opt.load_state_dict(copy.deepcopy(adam.state_dict()))  # no shared moments
    assert opt.param_groups[0]["kappa"] == 0.0 and opt.param_groups[0]["tau"] == 0.05
    _train(a, adam, steps=10, seed=5)
    _train(b, opt, steps=10, seed=5)
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(p, q)
    assert float(opt.state[b[0].weight]["step"]) == 20


@pytest.mark.parametrize("kwargs, match", [
    ({"kappa": -0.1}, "kappa must be >= 0"),
    ({"kappa": float("nan")}, "kappa must be >= 0"),
    ({"tau": -1.0}, "tau must be >= 0"),
    ({"eps_r": 0.0}, "eps_r must be > 0"),
    ({"lr": -1.0}, "lr must be >= 0"),
    ({"betas": (1.0, 0.9)}, r"betas\[0\]"),
    ({"weight_decay": -1.0}, "weight_decay must be >= 0"),
])
def test_bad_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        AdamO([torch.nn.Parameter(torch.zeros(2, 2))], **kwargs)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"kappa": float("inf")}, ValueError, "kappa must be finite"),
    ({"tau": float("inf")}, ValueError, "tau must be finite"),
    ({"eps_r": float("inf")}, ValueError, "eps_r must be finite"),
    ({"kappa": "1"}, TypeError, "kappa must be a real number; got str"),
    ({"tau": None}, TypeError, "tau must be a real number; got NoneType"),
    ({"kappa": True}, TypeError, "kappa must be a real number; got bool"),
])
def test_hyperparameters_of_the_wrong_type_or_infinite(kwargs, error, match):
    """Issue 40 item 10: kappa=inf sent the weights to NaN, kappa="1" and tau=None failed
    with raw comparison errors; each is rejected up front, naming the argument."""
    with pytest.raises(error, match=match):
        AdamO([torch.nn.Parameter(torch.zeros(2, 2))], **kwargs)


def test_bad_orthogonalize_option_and_name_clash_note():
    with pytest.raises(ValueError, match="orthogonalize must be"):
        AdamO([{"params": [torch.nn.Parameter(torch.zeros(2, 2))], "orthogonalize": "yes"}])
    assert "Rosseau" in AdamO.__doc__ and "2605.01968" in AdamO.__doc__


def _reference_step(W, g, lr, kappa, tau, eps=1e-8, eps_r=1e-8, beta1=0.9, beta2=0.999):
    """One AdamO step from fresh moments, written out from the formulas."""
    m, v = (1 - beta1) * g, (1 - beta2) * g * g
    u = (m / (1 - beta1)) / ((v / (1 - beta2)).sqrt() + eps)
    M = W.reshape(W.shape[0], -1)
    eye = torch.eye(min(M.shape), dtype=W.dtype)
    r_t = ((M @ M.T - eye) @ M if M.shape[0] < M.shape[1] else M @ (M.T @ M - eye))
    r_t = r_t.reshape(W.shape)
    delta0 = kappa * torch.linalg.vector_norm(u) / (torch.linalg.vector_norm(r_t) + eps_r) * r_t
    budget = -tau * max(float((g * u).sum()), 0.0)
    g_d = float((g * delta0).sum())
    scale = 1.0 if g_d >= budget else budget / g_d
    return W - lr * (u + scale * delta0), scale


@pytest.mark.parametrize("tau", [0.0, 0.05, 100.0])
def test_one_step_known_answer_mixed_dtypes(tau):
    # a float32 wide block, a float64 tall block and a bias in one group: each block gets the
    # correction of its own formulas (scale match, budget) whatever the others' dtype
    g = torch.Generator().manual_seed(4)
    W1 = torch.nn.Parameter(torch.randn(3, 7, generator=g))
    W2 = torch.nn.Parameter(torch.randn(9, 4, generator=g, dtype=torch.float64))
    b = torch.nn.Parameter(torch.randn(5, generator=g))
    grads = [torch.randn(p.shape, generator=g, dtype=p.dtype) for p in (W1, W2, b)]
    expected = [_reference_step(p.detach(), gr, 0.01, 0.8, tau)
                for p, gr in zip((W1, W2), grads[:2], strict=True)]
    frozen = torch.nn.Parameter(torch.randn(4, 4, generator=g))  # no gradient: untouched
    before = frozen.detach().clone()
    opt = AdamO([W1, W2, b, frozen], lr=0.01, kappa=0.8, tau=tau)
    for p, gr in zip((W1, W2, b), grads, strict=True):
        p.grad = gr.clone()
    opt.step()
    for p, (w_new, scale) in zip((W1, W2), expected, strict=True):
        tol = 1e-6 if p.dtype == torch.float32 else 1e-12
        torch.testing.assert_close(p.detach(), w_new, rtol=tol, atol=tol)
        np.testing.assert_allclose(float(opt.state[p]["last_budget_scale"]), scale,
                                   rtol=1e-5)
    assert "last_budget_scale" not in opt.state[b]
    assert frozen not in opt.state and torch.equal(frozen.detach(), before)


def test_tensor_learning_rate_steps_like_the_float():
    """lr may be a tensor (as torch's Adam allows): the same step as the float lr."""
    torch.manual_seed(0)
    net = torch.nn.Linear(4, 3)
    x, target = torch.randn(8, 4), torch.randn(8, 3)
    results = []
    for lr in (1e-2, torch.tensor(1e-2)):
        m = copy.deepcopy(net)
        opt = AdamO(m.parameters(), lr=lr, kappa=1.0)
        for _ in range(3):
            opt.zero_grad()
            torch.nn.functional.mse_loss(m(x), target).backward()
            opt.step()
        results.append(m.weight.detach().clone())
    torch.testing.assert_close(results[0], results[1])
