"""AdamO: Adam plus a decoupled, budgeted orthogonality correction (Qiao et al., ICML 2026)."""

import math
from numbers import Real

import torch
from torch.optim import Optimizer

from .._compat import torch_foreach

__all__ = ["AdamO"]

_ORTHO_OPTIONS = ("auto", True, False)

#: options of torch's Adam that change what it computes or promises and that AdamO does not
#: implement: a group (or a loaded state dict) that sets one of them true is refused
_UNSUPPORTED_ADAM_OPTIONS = {
    "amsgrad": "AMSGrad's running maximum of the second moment",
    "decoupled_weight_decay": "AdamW's decoupled weight decay (AdamO's weight_decay is Adam's "
                              "L2 penalty)",
    "differentiable": "a step that autograd can differentiate through",
}


def _check_hyperparameters(lr, betas, eps, weight_decay, kappa, tau, eps_r):
    """Adam's checks plus AdamO's, each naming the argument."""
    if not isinstance(lr, torch.Tensor) and not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: lr must be >= 0; got {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: eps must be >= 0; got {eps}")
    try:
        beta1, beta2 = betas
    except (TypeError, ValueError) as exc:
        raise ValueError(f"betas must be a pair (beta1, beta2); got {betas!r}") from exc
    if not 0.0 <= beta1 < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: betas[0] must be in [0, 1); "
                         f"got {beta1}")
    if not 0.0 <= beta2 < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: betas[1] must be in [0, 1); "
                         f"got {beta2}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: weight_decay must be >= 0; "
                         f"got {weight_decay}")
    for name, value in (("kappa", kappa), ("tau", tau), ("eps_r", eps_r)):
        if isinstance(value, bool) or not isinstance(value, Real):
            raise TypeError(f"{name} must be a real number; got {type(value).__name__} "
                            f"{value!r}")
        if math.isinf(value):  # inf sends the weights (or the budget) to NaN
            raise ValueError(f"{name} must be finite; got {value}")
    if not kappa >= 0:  # also rejects NaN
        raise ValueError(f"kappa must be >= 0; got {kappa}")
    if not tau >= 0:
        raise ValueError(f"tau must be >= 0; got {tau}")
    if not eps_r > 0:
        raise ValueError(f"eps_r must be > 0; got {eps_r}")


def _check_adam_options(group, where):
    """Refuse a group that asks for an option of torch's Adam that AdamO does not implement."""
    for key, what in _UNSUPPORTED_ADAM_OPTIONS.items():
        if group.get(key, False):
            raise ValueError(f"AdamO does not implement {key}=True ({what}); {where} sets it. "
                             f"Use torch.optim.Adam for it, or set {key}=False.")
    maximize = group.get("maximize", False)
    if not isinstance(maximize, bool):
        raise TypeError(f"maximize must be a bool; got {type(maximize).__name__} {maximize!r}")


def _real_view(tensor):
    """``tensor`` itself, or the real view ``(..., 2)`` of a complex tensor (as torch's Adam)."""
    return torch.view_as_real(tensor) if tensor.is_complex() else tensor


def _is_constrained(param, orthogonalize):
    """Whether ``param`` is a weight block that gets the orthogonality correction."""
    if orthogonalize is False:
        return False
    if param.ndim < 2:
        return False
    rows = param.shape[0]
    cols = param.numel() // max(rows, 1)
    if orthogonalize is True:
        return rows >= 1 and cols >= 1
    # "auto": 2-D (or reshaped) weights with min(r, c) >= 2; a one-row head would become a
    # unit-norm constraint and is left alone
    return min(rows, cols) >= 2


def orthogonality_residual(W):
    """Gradient of the isometry penalty ``R(W)`` of a weight block.

    ``R(W) = ||W W^T - I||_F^2 / 4`` when ``W`` has fewer rows than columns (gradient
    ``(W W^T - I) W``), else ``R(W) = ||W^T W - I||_F^2 / 4`` (gradient ``W (W^T W - I)``).
    Blocks with more than two dimensions are read as ``W.reshape(W.shape[0], -1)``. For a
    complex block the transpose is the conjugate transpose ``W^H``: ``R`` measures the distance
    to a unitary (semi-unitary) block, and ``r_t`` is its gradient in torch's convention for
    complex parameters (``dR/dRe W + i dR/dIm W``).

    Parameters
    ----------
    W : torch.Tensor of shape (r, c) or (r, ...)
        Weight block.

    Returns
    -------
    residual : torch.Tensor of the shape of ``W``
        The gradient ``r_t`` of ``R``.
    """
    M = W.reshape(W.shape[0], -1)
    r, c = M.shape
    # (W W^H) W - W or W (W^H W) - W: two matrix products, the "- I" folded into addmm
    # (``mH`` is the plain transpose of a real block)
    if r < c:
        res = torch.addmm(M, M @ M.mH, M, beta=-1)
    else:
        res = torch.addmm(M, M, M.mH @ M, beta=-1)
    return res.reshape(W.shape)


class AdamO(Optimizer):
    r"""Adam with a decoupled, scale-matched and budgeted orthogonality correction.

    AdamO (Qiao, Yue, Wang and Ren, ICML 2026) targets the collapse of bootstrapped
    temporal-difference critics. Each step first computes Adam's update direction
    ``u = m_hat / (sqrt(v_hat) + eps)`` from the loss gradient ``g`` alone (torch's
    :class:`~torch.optim.Adam`, including its L2 ``weight_decay``). For every constrained weight
    block ``W`` (``r x c``) it then adds a correction towards an isometry,

    .. math::

        r_t = (W W^\top - I) W \ (r < c), \quad r_t = W (W^\top W - I) \ (r \ge c), \qquad
        \delta_0 = \kappa \frac{\lVert u \rVert_F}{\lVert r_t \rVert_F + \varepsilon_r} r_t,

    so that ``||delta_0|| <= kappa ||u||``. A task-alignment budget keeps the first-order loss
    increase caused by the correction below a fraction ``tau`` of Adam's own decrease: with
    ``T = -tau max(<g, u>, 0)`` the correction is kept if ``<g, delta_0> >= T`` and scaled to
    ``delta = (T / <g, delta_0>) delta_0`` otherwise. The parameter moves by
    ``-lr (u + delta)``; unconstrained parameters move by ``-lr u``. The correction never
    enters the moments ``m`` and ``v``, and ``kappa = 0`` is Adam exactly (bit for bit on the
    CPU, where torch's Adam runs its single-tensor loop).

    **Complex parameters** are treated as torch's Adam treats them: Adam's moments are those
    of the real view (``torch.view_as_real``), one second moment per real and imaginary part.
    A complex weight block gets the unitary analogue of the correction, ``W^H`` in place of
    ``W^T`` (the residual is the gradient of ``||W W^H - I||_F^2 / 4``), with the real inner
    product ``<a, b> = Re sum conj(a) b`` in the budget.

    **Name clash.** Rosseau, Müller and Nowé, "Preserving Plasticity in Continual Learning via
    Dynamical Isometry" (ICML 2026, arXiv:2606.09762) also call their optimizer "AdamO"; theirs
    takes an unbudgeted isometry step for continual learning. This class is the offline-RL
    optimizer of Qiao et al.

    Read more, and what the remedies of the collapse compare to, in the
    :ref:`User Guide <user_guide_optim>`.

    **Choices not fixed by the paper.** The budget is applied per block; constrained blocks
    are weights with ``min(r, c) >= 2`` (biases, norm scales and one-row heads are excluded);
    ``kappa = 1`` and ``eps_r = 1e-8`` are this package's defaults, the paper publishes no
    ``kappa``. ``tau = 0.05`` is the paper's best value in its ablation.

    Parameters
    ----------
    params : iterable of torch.Tensor or of dict
        Parameters to optimise, or parameter groups. A group may set ``orthogonalize`` to
        ``"auto"`` (default: 2-D or higher weights with ``min(r, c) >= 2``, weights of 3 or
        more dimensions read as ``(shape[0], -1)``), ``True`` (every weight of 2 or more
        dimensions) or ``False`` (plain Adam for that group).
    lr : float, default=1e-3
        Learning rate ``eta`` (>= 0).
    betas : tuple of (float, float), default=(0.9, 0.999)
        Adam's moment decay rates, each in ``[0, 1)``.
    eps : float, default=1e-8
        Adam's denominator term (>= 0).
    weight_decay : float, default=0.0
        Adam's L2 penalty added to the gradient that feeds the moments (>= 0).
    kappa : float, default=1.0
        Scale of the correction relative to the Adam step, ``||delta|| <= kappa ||u||``
        (>= 0; 0 is Adam).
    tau : float, default=0.05
        Task-alignment budget: the share of Adam's first-order loss decrease the correction may
        give back (>= 0; 0 is "conflict-free", large values leave the correction uncapped).
    eps_r : float, default=1e-8
        Guard of the residual's norm in the scale match (> 0).
    maximize : bool, default=False
        Maximise the objective, as torch's Adam: each step is AdamO's step on ``-g`` (the
        budget then reads ``-g`` too).

    Attributes
    ----------
    state : dict
        Per parameter: ``step``, ``exp_avg`` and ``exp_avg_sq`` (Adam's layout, so Adam's
        ``state_dict`` loads), plus, for constrained blocks, ``last_delta_norm`` (``||delta||_F``
        of the last step) and ``last_budget_scale`` (the factor in ``[0, 1]`` the budget applied
        to ``delta_0``), both 0-d tensors. An Adam ``state_dict`` with ``maximize=True`` keeps
        maximising; one with ``amsgrad``, ``decoupled_weight_decay`` (AdamW) or
        ``differentiable`` set true is refused, as AdamO does not implement them (``foreach``,
        ``fused`` and ``capturable`` choose kernels and are ignored).

    Raises
    ------
    ValueError
        If ``kappa < 0``, ``tau < 0``, ``eps_r <= 0``, or on Adam's own checks (``lr``, ``eps``,
        ``betas``, ``weight_decay``), or if a group's ``orthogonalize`` is not "auto", True or
        False; if a group or a loaded state dict sets ``amsgrad``, ``decoupled_weight_decay``
        or ``differentiable`` true (the message names the key).
    TypeError
        If ``kappa``, ``tau`` or ``eps_r`` is not a real number, or ``maximize`` not a bool.

    See Also
    --------
    td_spectral_radius : Stability diagnostic of Adam-driven TD learning.
    OfflineQRegressor : Offline Q-learning critic that can train with this optimizer.

    References
    ----------
    .. [1] Qiao, Yue, Wang and Ren, "AdamO: A Collapse-Suppressed Optimizer for Offline RL",
       ICML 2026, arXiv:2605.01968.
    .. [2] Rosseau, Müller and Nowé, "Preserving Plasticity in Continual Learning via Dynamical
       Isometry", ICML 2026, arXiv:2606.09762 (a different optimizer of the same name).

    Examples
    --------
    >>> import torch
    >>> from sklearn_icml26.optim import AdamO
    >>> _ = torch.manual_seed(0)
    >>> net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    >>> opt = AdamO(net.parameters(), lr=1e-2, kappa=1.0, tau=0.05)
    >>> x, y = torch.randn(32, 4), torch.randn(32, 1)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     torch.nn.functional.mse_loss(net(x), y).backward()
    ...     opt.step()
    >>> sorted(k for k in opt.state[net[0].weight] if not k.startswith("last"))
    ['exp_avg', 'exp_avg_sq', 'step']
    >>> 0.0 <= float(opt.state[net[0].weight]["last_budget_scale"]) <= 1.0
    True
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, *,
                 kappa=1.0, tau=0.05, eps_r=1e-8, maximize=False):
        _check_hyperparameters(lr, betas, eps, weight_decay, kappa, tau, eps_r)
        _check_adam_options({"maximize": maximize}, "the constructor")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        kappa=kappa, tau=tau, eps_r=eps_r, orthogonalize="auto",
                        maximize=maximize)
        super().__init__(params, defaults)
        for group in self.param_groups:
            self._check_group(group)

    def add_param_group(self, param_group):  # noqa: D102 - torch's docstring applies
        super().add_param_group(param_group)
        if hasattr(self, "defaults"):
            try:
                self._check_group(self.param_groups[-1])
            except (TypeError, ValueError):
                self.param_groups.pop()  # a refused group is not kept
                raise

    @staticmethod
    def _check_group(group):
        ortho = group.get("orthogonalize", "auto")
        if not any(ortho is opt or (isinstance(ortho, str) and ortho == opt)
                   for opt in _ORTHO_OPTIONS):
            raise ValueError(f"orthogonalize must be 'auto', True or False; got {ortho!r}")
        _check_adam_options(group, "a parameter group")
        _check_hyperparameters(group["lr"], group["betas"], group["eps"],
                               group["weight_decay"], group["kappa"], group["tau"],
                               group["eps_r"])

    def __setstate__(self, state):
        # load_state_dict and unpickling end here: refuse what AdamO does not implement
        # (an Adam state dict with amsgrad=True, an AdamW one, ...) before anything is replaced
        for index, group in enumerate(state.get("param_groups", ())):
            _check_adam_options(group, f"parameter group {index} of the loaded state")
        # an Adam state dict carries Adam's group keys only: fill AdamO's from the defaults
        # (Adam's own maximize is kept and honoured)
        super().__setstate__(state)
        for group in self.param_groups:
            for key in ("kappa", "tau", "eps_r", "orthogonalize"):
                group.setdefault(key, self.defaults[key])
            group.setdefault("maximize", False)

    @torch.no_grad()
    def step(self, closure=None):
        """Perform one optimisation step.

        Parameters
        ----------
        closure : callable, default=None
            Re-evaluates the model and returns the loss.

        Returns
        -------
        loss : torch.Tensor or None
            The closure's loss, if a closure was given.
        """
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            self._step_group(group)
        return loss

    def _step_group(self, group):
        """One step of one parameter group: Adam's update batched over tensors, then the
        correction of the constrained blocks."""
        beta1, beta2 = group["betas"]
        lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
        if isinstance(lr, torch.Tensor):  # accepted like torch's Adam; read its value
            lr = float(lr)
        kappa = group["kappa"]
        ortho = group.get("orthogonalize", "auto")
        # complex parameters are stepped through their real views (..., 2), as torch's Adam
        # does: each real and imaginary part has its own second moment
        params, grads, exp_avgs, exp_avg_sqs, steps = [], [], [], [], []
        originals = []
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.grad.is_sparse:
                raise RuntimeError("AdamO does not support sparse gradients")
            state = self.state[p]
            if len(state) == 0:
                state["step"] = torch.tensor(0.0, dtype=torch.float32)
                state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            originals.append(p)
            params.append(_real_view(p))
            grads.append(p.grad)
            exp_avgs.append(_real_view(state["exp_avg"]))
            exp_avg_sqs.append(_real_view(state["exp_avg_sq"]))
            steps.append(state["step"])
        if not params:
            return
        if group.get("maximize", False):  # ascend: Adam on -g (the budget then reads -g too)
            grads = torch_foreach.neg(grads)
        # torch's Adam adds the L2 term to the complex gradient, then views it as real
        moment_grads = ([_real_view(t) for t in torch_foreach.add(grads, originals, alpha=wd)]
                        if wd != 0 else None)
        grads = [_real_view(t) for t in grads]
        if moment_grads is None:
            moment_grads = grads
        # -- Adam: torch's single-tensor operations in its order, each applied to the whole
        # list at once (the same kernels per tensor, so kappa = 0 is Adam bit for bit) --
        # (a CPU step count takes the tensor overload, as torch's Adam does, so that the 1 is
        # not wrapped into a new tensor once per parameter)
        if steps[0].is_cpu:
            torch_foreach.add_(steps, torch.tensor(1.0), alpha=1.0)
        else:
            torch_foreach.add_(steps, 1)
        torch_foreach.lerp_(exp_avgs, moment_grads, 1 - beta1)
        torch_foreach.mul_(exp_avg_sqs, beta2)
        torch_foreach.addcmul_(exp_avg_sqs, moment_grads, moment_grads, 1 - beta2)
        del moment_grads
        counts = [s.item() for s in steps]
        bias_correction1 = [1 - beta1 ** t for t in counts]
        denoms = torch_foreach.sqrt(exp_avg_sqs)
        torch_foreach.div_(denoms, [(1 - beta2 ** t) ** 0.5 for t in counts])
        torch_foreach.add_(denoms, eps)
        blocks = ([i for i, p in enumerate(originals) if _is_constrained(p, ortho)]
                  if kappa > 0 else [])
        # the correction is computed from the weights before Adam's update moves them
        deltas = self._corrections(group, blocks, originals, params, grads, exp_avgs,
                                   denoms, bias_correction1) if blocks else []
        torch_foreach.addcdiv_(params, exp_avgs, denoms, [-(lr / bc) for bc in bias_correction1])
        if deltas:
            torch_foreach.add_([params[i] for i in blocks], deltas, alpha=-lr)

    def _corrections(self, group, blocks, originals, params, grads, exp_avgs, denoms,
                     bias_correction1):
        """The budgeted corrections ``delta`` of the constrained blocks (in their order), as real
        views. ``originals`` are the parameters, the other lists their real views: norms
        and inner products are those of the real views (``<g, u> = Re sum conj(g) u``)."""
        kappa, tau, eps_r = group["kappa"], group["tau"], group["eps_r"]
        deltas = [_real_view(orthogonality_residual(originals[i])) for i in blocks]
        # u = m_hat / (sqrt(v_hat) + eps) = (m / denom) / bias_correction1
        quotients = torch_foreach.div([exp_avgs[i] for i in blocks], [denoms[i] for i in blocks])
        norm_q = torch_foreach.norm(quotients)
        norm_r = torch_foreach.norm(deltas)
        g_q, g_r = [], []
        for k, i in enumerate(blocks):
            g = grads[i].reshape(-1)
            g_q.append(torch.dot(g, quotients[k].reshape(-1)))
            g_r.append(torch.dot(g, deltas[k].reshape(-1)))
        del quotients
        # the scalar algebra of all blocks sharing a device and dtype at once
        by_kind = {}
        for k, i in enumerate(blocks):
            by_kind.setdefault((params[i].device, params[i].dtype), []).append(k)
        for (device, dtype), ks in by_kind.items():
            bc1 = torch.tensor([bias_correction1[blocks[k]] for k in ks], dtype=dtype,
                               device=device)
            # rows: ||m / denom||, ||r_t||, <g, m / denom>, <g, r_t>
            stats = torch.stack([v for k in ks for v in (norm_q[k], norm_r[k], g_q[k],
                                                          g_r[k])]).view(len(ks), 4).T
            n_u, n_r, g_u, g_r_ = stats[0] / bc1, stats[1], stats[2] / bc1, stats[3]
            c0 = kappa * n_u / (n_r + eps_r)  # delta_0 = c0 r_t, ||delta_0|| <= kappa ||u||
            g_d = c0 * g_r_  # <g, delta_0>
            budget = -tau * torch.clamp(g_u, min=0.0)  # T = -tau max(<g, u>, 0)
            # where g_d < T <= 0 the ratio T / g_d lies in [0, 1); elsewhere delta_0 is kept
            # (a NaN fails the comparison and keeps the scale at 1, as the step is lost anyway)
            scale = torch.where(g_d < budget, budget / g_d, 1.0).clamp_(0.0, 1.0)
            coef = c0 * scale
            for k, c, s, dn in zip(ks, coef.unbind(), scale.unbind(), (coef * n_r).unbind(),
                                   strict=True):
                deltas[k].mul_(c)
                state = self.state[originals[blocks[k]]]
                state["last_delta_norm"] = dn
                state["last_budget_scale"] = s
        return deltas

