"""Spectral stability diagnostic of Adam-driven temporal-difference learning."""

import numpy as np
import torch
from sklearn.utils import check_random_state

__all__ = ["td_spectral_radius"]


def _as_tensor(a, name, like):
    t = torch.as_tensor(np.asarray(a, dtype=np.float64) if not isinstance(a, torch.Tensor)
                        else a, dtype=like.dtype, device=like.device)
    if t.ndim != 2:
        raise ValueError(f"{name} must be 2-D of shape (n, d); got shape {tuple(t.shape)}")
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} holds NaN or infinite values.")
    return t


def _jacobian(critic, X):
    """Z(X)^T: per-sample gradients of the critic's output, shape (n, p).

    One reverse pass per row: on a CPU this is faster than ``torch.func.vmap(jacrev)`` for
    the probe sizes used here, and it works for any module (LayerNorm and dropout in eval
    mode included).
    """
    params = [p for p in critic.parameters()]
    rows = []
    with torch.enable_grad():
        for i in range(X.shape[0]):
            out = critic(X[i : i + 1]).reshape(())
            grads = torch.autograd.grad(out, params, allow_unused=True)
            rows.append(torch.cat([(torch.zeros_like(p) if g is None else g).reshape(-1)
                                   for p, g in zip(params, grads, strict=True)]))
    return torch.stack(rows)


def _adam_preconditioner(critic_params, optimizer, dtype):
    """Diagonal of D = diag(1 / (sqrt(v_hat) + eps)) from an Adam-like optimizer's state."""
    parts = []
    for p in critic_params.values():
        d = None
        if optimizer is not None:
            state = optimizer.state.get(p, {})
            group = next((g for g in optimizer.param_groups
                          if any(q is p for q in g["params"])), None)
            if "exp_avg_sq" in state and group is not None:
                beta2, eps = group["betas"][1], group["eps"]
                step = float(state["step"])
                v_hat = state["exp_avg_sq"].detach().to(dtype) / (1 - beta2 ** step)
                d = 1.0 / (v_hat.sqrt() + eps)
        if d is None:
            d = torch.ones_like(p, dtype=dtype)
        parts.append(d.reshape(-1))
    return torch.cat(parts)


def td_spectral_radius(critic, X, X_next, *, gamma=0.99, lr=1e-3, beta1=0.9, optimizer=None,
                       loss_scale=None, max_points=256, random_state=None):
    r"""Spectral radius of the linearised Adam-TD error dynamics (Qiao et al., ICML 2026).

    With ``Z(X) = dQ(X)/dtheta`` (``p x n``) and Adam's preconditioner
    ``D = diag(1 / (sqrt(v_hat) + eps))`` (or ``I``), the kernel is
    ``K(X1, X2) = Z(X1)^T D Z(X2)`` and the TD error of a step moves by ``eta S e`` with
    ``S = gamma K(X', X) - K(X, X)``. With Adam's momentum the error follows the augmented
    operator

    .. math::

        A(\eta) = \begin{pmatrix} (1 + \beta_1) I + \eta (1 - \beta_1) S & -\beta_1 I \\
        I & 0 \end{pmatrix},

    and the linearised TD error vanishes iff ``rho(A) < 1``; if ``S`` is Hurwitz (every
    eigenvalue has a negative real part) this holds for small ``eta``. A sufficient condition
    is ``gamma ||Phi||_2 ||Phi*||_2 + ||Phi^T Phi - I||_2 < 1`` with ``Phi = D^{1/2} Z(X)`` and
    ``Phi* = D^{1/2} Z(X')``. The eigenvalues of ``A`` are the roots of
    ``lambda^2 - ((1 + beta1) + eta (1 - beta1) s) lambda + beta1`` for the eigenvalues ``s``
    of ``S``, computed in float64.

    Parameters
    ----------
    critic : torch.nn.Module
        Maps a float tensor of shape (n, d) to Q-values of shape (n,) (or (n, 1)).
    X : array-like or torch.Tensor of shape (n, d)
        Probe state-action inputs.
    X_next : array-like or torch.Tensor of shape (n, d)
        Next state-action inputs (the bootstrap targets' inputs), row for row with ``X``.
    gamma : float, default=0.99
        Discount, in [0, 1).
    lr : float, default=1e-3
        Learning rate of the optimizer (> 0).
    beta1 : float, default=0.9
        Momentum of the optimizer, in [0, 1).
    optimizer : torch.optim.Optimizer or None, default=None
        Adam-like optimizer of ``critic`` whose bias-corrected ``exp_avg_sq`` gives ``D``;
        ``None`` (or parameters without state) uses ``D = I``.
    loss_scale : float or None, default=None
        ``eta = loss_scale * lr``. ``None`` is ``2 / n``, the scale of a mean squared TD loss
        over a batch of ``n``.
    max_points : int, default=256
        At most this many probe rows are used (drawn without replacement with
        ``random_state``); the Jacobian needs ``n * p`` floats.
    random_state : int, RandomState instance or None, default=None
        Seeds the subsample of probe rows.

    Returns
    -------
    result : dict
        ``rho`` (float, spectral radius of ``A(eta)``), ``eig_S`` (complex ndarray of shape
        (n,)), ``max_real_eig_S`` (float), ``hurwitz`` (bool), ``isometry_defect``
        (``||Phi^T Phi - I||_2``), ``bootstrap_scale`` (``gamma ||Phi||_2 ||Phi*||_2``),
        ``prop51_lhs`` (their sum; below 1 is sufficient for stability), ``eta`` and
        ``n_points``.

    Raises
    ------
    ValueError
        If ``X`` and ``X_next`` are not 2-D of the same shape, hold NaN or infinite values
        or are rows the critic cannot evaluate (e.g. another number of columns), if
        ``gamma`` is outside
        [0, 1), ``beta1`` outside [0, 1), ``lr`` or ``loss_scale`` not positive, or
        ``max_points < 1``.

    References
    ----------
    .. [1] Qiao, Yue, Wang and Ren, "AdamO: A Collapse-Suppressed Optimizer for Offline RL",
       ICML 2026, arXiv:2605.01968 (Theorem 4.1 and Proposition 5.1).

    Examples
    --------
    A linear critic ``Q = w x`` with one transition ``x = 1 -> x' = 2``: ``S = 2 gamma - 1``.

    >>> import torch
    >>> from sklearn_icml26.optim import td_spectral_radius
    >>> critic = torch.nn.Linear(1, 1, bias=False).double()
    >>> out = td_spectral_radius(critic, [[1.0]], [[2.0]], gamma=0.99, lr=0.1, loss_scale=1.0)
    >>> round(out["rho"], 4), out["hurwitz"]
    (1.0637, False)
    """
    if not 0 <= gamma < 1:
        raise ValueError(f"gamma must be in [0, 1); got {gamma}")
    if not 0 <= beta1 < 1:
        raise ValueError(f"beta1 must be in [0, 1); got {beta1}")
    if not lr > 0:
        raise ValueError(f"lr must be > 0; got {lr}")
    if loss_scale is not None and not loss_scale > 0:
        raise ValueError(f"loss_scale must be > 0 or None; got {loss_scale}")
    if int(max_points) < 1:
        raise ValueError(f"max_points must be >= 1; got {max_points}")
    params = {k: v.detach() for k, v in critic.named_parameters()}
    if not params:
        raise ValueError("critic has no parameters")
    like = next(iter(params.values()))
    X = _as_tensor(X, "X", like)
    X_next = _as_tensor(X_next, "X_next", like)
    if X.shape != X_next.shape:
        raise ValueError(f"X_next must have the shape of X {tuple(X.shape)}; got "
                         f"{tuple(X_next.shape)}")
    was_training = critic.training
    try:  # eval mode: a probe forward must not move batch-norm statistics
        critic.eval()
        with torch.no_grad():
            critic(X[:1])
    except RuntimeError as exc:  # e.g. a column count the critic does not take
        raise ValueError(f"the critic cannot evaluate X of shape {tuple(X.shape)}: "
                         f"{exc}") from exc
    finally:
        critic.train(was_training)
    n = X.shape[0]
    if n > max_points:
        idx = check_random_state(random_state).choice(n, int(max_points), replace=False)
        idx = torch.as_tensor(np.sort(idx), device=X.device)
        X, X_next = X[idx], X_next[idx]
        n = X.shape[0]
    eta = (2.0 / n if loss_scale is None else float(loss_scale)) * float(lr)
    was_training = critic.training
    critic.eval()
    try:
        Z = _jacobian(critic, X).to(torch.float64)
        Z_next = _jacobian(critic, X_next).to(torch.float64)
    finally:
        critic.train(was_training)
    d = _adam_preconditioner(dict(critic.named_parameters()), optimizer, torch.float64)
    sqrt_d = d.sqrt().to(Z.device)
    Phi = (Z * sqrt_d).T  # (p, n)
    Phi_next = (Z_next * sqrt_d).T
    K = Phi.T @ Phi
    K_next = Phi_next.T @ Phi
    S = gamma * K_next - K
    eig_S = torch.linalg.eigvals(S).cpu().numpy()
    # eigenvalues of A: roots of lambda^2 - b lambda + beta1 with b = 1 + beta1 + eta(1-beta1)s
    b = (1 + beta1) + eta * (1 - beta1) * eig_S.astype(np.complex128)
    disc = np.sqrt(b * b - 4 * beta1)
    roots = np.concatenate([(b + disc) / 2, (b - disc) / 2])
    rho = float(np.max(np.abs(roots)))
    eye = torch.eye(n, dtype=torch.float64, device=K.device)
    defect = float(torch.linalg.eigvalsh(K - eye).abs().max())
    # ||Phi||_2 = sqrt(||Phi^T Phi||_2): n x n eigenvalues instead of a p x n SVD
    norm_phi = float(torch.linalg.eigvalsh(K)[-1].clamp(min=0).sqrt())
    norm_phi_next = float(torch.linalg.eigvalsh(Phi_next.T @ Phi_next)[-1].clamp(min=0).sqrt())
    boot = gamma * norm_phi * norm_phi_next
    max_re = float(np.max(eig_S.real))
    return {"rho": rho, "eig_S": eig_S.astype(np.complex128), "max_real_eig_S": max_re,
            "hurwitz": bool(max_re < 0), "isometry_defect": defect, "bootstrap_scale": boot,
            "prop51_lhs": boot + defect, "eta": eta, "n_points": int(n)}
