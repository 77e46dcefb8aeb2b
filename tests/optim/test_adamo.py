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


# -- issue 40 item 5: complex parameters, maximize, Adam options AdamO does not implement --

def _complex_least_squares(make, steps=300, n_cols=1, seed=0):
    """Fit W (6 x n_cols, complex) to min mean |A W - B|^2 from zero; the loss per step."""
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(40, 6, generator=g, dtype=torch.complex128)
    B = torch.randn(40, n_cols, generator=g, dtype=torch.complex128)
    W = torch.nn.Parameter(torch.zeros(6, n_cols, dtype=torch.complex128))
    opt = make([W])
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = (A @ W - B).abs().pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return np.array(losses), W.detach(), opt


@pytest.mark.parametrize("weight_decay", [0.0, 1e-2])
def test_kappa_zero_is_adam_on_complex_parameters(weight_decay):
    """AdamO(kappa=0) fed g*g (a complex square) to the second moment: on this least-squares
    problem it ended at loss 5.70 where torch's Adam reaches 0.96. Like torch's Adam it now
    steps the real view: the same iterates and moments, bit for bit."""
    la, Wa, adam = _complex_least_squares(
        lambda p: torch.optim.Adam(p, lr=0.05, weight_decay=weight_decay))
    lo, Wo, opt = _complex_least_squares(
        lambda p: AdamO(p, lr=0.05, weight_decay=weight_decay, kappa=0.0))
    np.testing.assert_array_equal(lo, la)
    assert torch.equal(Wo, Wa)
    (sa,), (so,) = adam.state.values(), opt.state.values()
    for key in ("exp_avg", "exp_avg_sq", "step"):
        assert torch.equal(so[key], sa[key])
    assert so["exp_avg_sq"].is_complex()  # Adam's layout, so the state dicts swap
    # with kappa > 0 the 6 x 1 column is no constrained block ("auto"): still Adam
    lk, Wk, _ = _complex_least_squares(
        lambda p: AdamO(p, lr=0.05, weight_decay=weight_decay, kappa=1.0))
    assert torch.equal(Wk, Wa)


def test_unitary_residual_is_the_gradient_of_the_defect():
    g = torch.Generator().manual_seed(2)
    for shape in ((3, 7), (7, 3), (4, 4)):
        W = torch.randn(*shape, generator=g, dtype=torch.complex128).requires_grad_()
        k = min(shape)
        gram = W @ W.mH if shape[0] < shape[1] else W.mH @ W
        ((gram - torch.eye(k)).abs().pow(2).sum() / 4).backward()
        torch.testing.assert_close(orthogonality_residual(W.detach()), W.grad)
    real = torch.randn(5, 3, generator=g, dtype=torch.float64)  # the real case is unchanged
    assert torch.equal(orthogonality_residual(real),
                       torch.addmm(real, real, real.T @ real, beta=-1))


def _reference_step_complex(W, g, lr, kappa, tau, eps=1e-8, eps_r=1e-8, beta1=0.9,
                            beta2=0.999):
    """One AdamO step from fresh moments on a complex block, from the formulas: Adam on the
    real view, the unitary residual, real inner products Re sum conj(a) b."""
    gr = torch.view_as_real(g)
    m, v = (1 - beta1) * gr, (1 - beta2) * gr * gr
    u = torch.view_as_complex((m / (1 - beta1)) / ((v / (1 - beta2)).sqrt() + eps))
    eye = torch.eye(min(W.shape), dtype=W.dtype)
    r_t = (W @ W.mH - eye) @ W if W.shape[0] < W.shape[1] else W @ (W.mH @ W - eye)
    delta0 = kappa * torch.linalg.vector_norm(u) / (torch.linalg.vector_norm(r_t) + eps_r) * r_t
    budget = -tau * max(float(torch.vdot(g.flatten(), u.flatten()).real), 0.0)
    g_d = float(torch.vdot(g.flatten(), delta0.flatten()).real)
    scale = 1.0 if g_d >= budget else budget / g_d
    return W - lr * (u + scale * delta0), scale


@pytest.mark.parametrize("tau", [0.0, 0.05, 100.0])
def test_one_step_known_answer_complex_blocks(tau):
    """A complex weight matrix with kappa=1 raised "clamp is not supported for complex types";
    it now gets the unitary analogue of the correction, next to a real block."""
    g = torch.Generator().manual_seed(5)
    W1 = torch.nn.Parameter(torch.randn(3, 7, generator=g, dtype=torch.complex128))
    W2 = torch.nn.Parameter(torch.randn(8, 4, generator=g, dtype=torch.complex64))
    W3 = torch.nn.Parameter(torch.randn(5, 4, generator=g, dtype=torch.float64))
    grads = [torch.randn(p.shape, generator=g, dtype=p.dtype) for p in (W1, W2, W3)]
    expected = [_reference_step_complex(p.detach(), gr, 0.01, 0.8, tau)
                for p, gr in zip((W1, W2), grads[:2], strict=True)]
    expected.append(_reference_step(W3.detach(), grads[2], 0.01, 0.8, tau))
    opt = AdamO([W1, W2, W3], lr=0.01, kappa=0.8, tau=tau)
    for p, gr in zip((W1, W2, W3), grads, strict=True):
        p.grad = gr.clone()
    opt.step()
    for p, (w_new, scale) in zip((W1, W2, W3), expected, strict=True):
        tol = 1e-5 if p.dtype == torch.complex64 else 1e-12
        torch.testing.assert_close(p.detach(), w_new, rtol=tol, atol=tol)
        np.testing.assert_allclose(float(opt.state[p]["last_budget_scale"]), scale, rtol=1e-4)
        assert opt.state[p]["last_delta_norm"].dtype == p.real.dtype


def test_correction_steps_reduce_the_unitary_defect():
    Q, _ = torch.linalg.qr(torch.randn(10, 6, dtype=torch.complex128,
                                       generator=torch.Generator().manual_seed(0)))
    W = torch.nn.Parameter(1.5 * Q)
    opt = AdamO([W], lr=0.01, kappa=1.0, tau=100.0, eps=1e-30)
    eye = torch.eye(6, dtype=W.dtype)
    defects = [float(torch.linalg.matrix_norm(W.detach().mH @ W.detach() - eye))]
    for _ in range(30):
        W.grad = torch.full_like(W, 1e-12)
        opt.step()
        defects.append(float(torch.linalg.matrix_norm(W.detach().mH @ W.detach() - eye)))
    assert np.all(np.diff(defects) < 0), defects
    assert defects[-1] < 0.5 * defects[0]


@pytest.mark.parametrize("kappa", [0.0, 1.0])
def test_maximize_ascends(kappa):
    """maximize=True is Adam's: the step of Adam on -g (kappa=0: torch's Adam bit for bit),
    and with kappa > 0 the budget reads -g, the gradient of what is minimised."""
    a, b, c = _mlp(), _mlp(), _mlp()
    _train(a, torch.optim.Adam(a.parameters(), lr=1e-2, maximize=True), steps=20)
    _train(b, AdamO(b.parameters(), lr=1e-2, kappa=kappa, maximize=True), steps=20)
    # maximising L is minimising -L
    neg = AdamO(c.parameters(), lr=1e-2, kappa=kappa)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(64, 5, generator=g), torch.randn(64, 1, generator=g)
    for _ in range(20):
        neg.zero_grad()
        (-((c(x) - y) ** 2).mean()).backward()
        neg.step()
    for p, q, r in zip(a.parameters(), b.parameters(), c.parameters(), strict=True):
        if kappa == 0:
            assert torch.equal(p, q)
        torch.testing.assert_close(q, r, rtol=1e-6, atol=1e-6)
    with pytest.raises(TypeError, match="maximize must be a bool"):
        AdamO(b.parameters(), maximize="yes")


def test_adam_state_dict_with_maximize_keeps_maximising():
    """An Adam state dict with maximize=True loaded and AdamO then minimised the loss: the
    key is now honoured, and the run continues as Adam's."""
    a, b = _mlp(), _mlp()
    adam = torch.optim.Adam(a.parameters(), lr=1e-2, maximize=True)
    _train(a, adam, steps=5)
    b.load_state_dict(a.state_dict())
    opt = AdamO(b.parameters(), lr=1e-2, kappa=0.0)
    opt.load_state_dict(copy.deepcopy(adam.state_dict()))
    assert opt.param_groups[0]["maximize"] is True
    _train(a, adam, steps=10, seed=5)
    _train(b, opt, steps=10, seed=5)
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(p, q)
    # an AdamO state dict saved before maximize existed loads as maximize=False
    state = opt.state_dict()
    del state["param_groups"][0]["maximize"]
    opt.load_state_dict(state)
    assert opt.param_groups[0]["maximize"] is False


@pytest.mark.parametrize("key", ["amsgrad", "decoupled_weight_decay", "differentiable"])
def test_adam_options_adamo_does_not_implement_are_refused(key):
    """An Adam state dict with amsgrad=True loaded silently and AdamO ran without AMSGrad; such
    a state (or a group asking for it) is refused naming the key, and nothing is replaced."""
    torch.manual_seed(0)
    W = torch.nn.Parameter(torch.randn(3, 3))
    adam = torch.optim.Adam([W], lr=0.1, **{key: True})
    if key != "differentiable":  # a differentiable Adam cannot step a leaf in place
        W.grad = torch.ones_like(W)
        adam.step()
    V = torch.nn.Parameter(torch.randn(3, 3))
    opt = AdamO([V], lr=0.5)
    V.grad = torch.ones_like(V)
    opt.step()
    before = copy.deepcopy(opt.state_dict())
    with pytest.raises(ValueError, match=f"AdamO does not implement {key}=True.*loaded state"):
        opt.load_state_dict(adam.state_dict())
    after = opt.state_dict()
    assert after["param_groups"] == before["param_groups"]
    assert torch.equal(after["state"][0]["exp_avg"], before["state"][0]["exp_avg"])
    with pytest.raises(ValueError, match=f"{key}=True.*parameter group"):
        opt.add_param_group({"params": [torch.nn.Parameter(torch.zeros(2))], key: True})
    # the same keys set False (every Adam state dict carries them) load
    opt.load_state_dict(torch.optim.Adam([W], lr=0.1).state_dict())
    assert opt.param_groups[0]["lr"] == 0.1
