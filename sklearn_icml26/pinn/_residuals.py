"""Per-point residuals of a PINN: batched autograd (training) and torch.func (per-point grads).

The per-point residual vector of point ``z_i`` has one entry per loss term: the PDE residual
components (taken at every point), one entry per condition (``B_k[u](z_i)`` where the condition
applies, 0 elsewhere) and, when targets are observed, one entry per output (``u - y``).
"""

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, jacfwd, jacrev, vmap

__all__ = []


# ---------------------------------------------------------------------------------------------
# network
# ---------------------------------------------------------------------------------------------
_ACTIVATIONS = {"tanh": nn.Tanh, "sin": None, "silu": nn.SiLU, "gelu": nn.GELU,
                "softplus": nn.Softplus}


class _Sin(nn.Module):
    def forward(self, x):
        return torch.sin(x)


class _MLP(nn.Module):
    """Fully connected network with a fixed affine input map ``(x - shift) / scale``.

    Weights are Glorot-normal, biases zero; with ``feature_scale=s`` the hidden weights and
    biases are uniform in ``[-s, s]`` instead. The input map is a buffer, so derivatives of the
    output are taken with respect to the raw (physical) inputs.
    """

    def __init__(self, n_inputs, hidden_layer_sizes, n_outputs, activation, shift, scale,
                 feature_scale=None):
        super().__init__()
        self.register_buffer("shift", torch.as_tensor(shift, dtype=torch.float64))
        self.register_buffer("scale", torch.as_tensor(scale, dtype=torch.float64))
        sizes = [n_inputs, *hidden_layer_sizes]
        layers = []
        for a, b in zip(sizes[:-1], sizes[1:], strict=False):
            layers.append(nn.Linear(a, b))
            layers.append(_Sin() if activation == "sin" else _ACTIVATIONS[activation]())
        self.hidden = nn.Sequential(*layers)
        self.output = nn.Linear(sizes[-1], n_outputs)
        for layer in [*self.hidden, self.output]:
            if isinstance(layer, nn.Linear):
                nn.init.xavier_normal_(layer.weight)
                nn.init.zeros_(layer.bias)
        if feature_scale is not None:  # random features: weights and biases U(-s, s)
            for layer in self.hidden:
                if isinstance(layer, nn.Linear):
                    nn.init.uniform_(layer.weight, -feature_scale, feature_scale)
                    nn.init.uniform_(layer.bias, -feature_scale, feature_scale)

    def forward(self, x):
        return self.output(self.hidden((x - self.shift) / self.scale))


# ---------------------------------------------------------------------------------------------
# derivatives
# ---------------------------------------------------------------------------------------------
def _prefixes(derivatives):
    """Every prefix of every multi-index, shortest first (the order autograd builds them)."""
    needed = set()
    for idx in derivatives:
        for m in range(1, len(idx) + 1):
            needed.add(tuple(idx[:m]))
    return sorted(needed, key=lambda t: (len(t), t))


def batched_derivatives(u, x, derivatives):
    """``{(): u, idx: d^|idx| u / dx_idx}`` for a batch, by autograd with ``create_graph``.

    Points are independent (no batch coupling in the network), so the gradient of the summed
    output with respect to ``x`` is the per-point gradient. A derivative that does not depend
    on ``x`` (e.g. the second derivative of a linear function) is filled with zeros.
    """
    d = {(): u}
    grads = {}
    n_out = u.shape[1]
    for idx in _prefixes(derivatives):
        prefix, i = idx[:-1], idx[-1]
        prev = d[prefix]
        cols = []
        for c in range(n_out):
            key = (prefix, c)
            if key not in grads:
                g = None
                if prev.requires_grad:
                    g = torch.autograd.grad(prev[:, c].sum(), x, create_graph=True,
                                            allow_unused=True)[0]
                grads[key] = torch.zeros_like(x) if g is None else g
            cols.append(grads[key][:, i])
        d[idx] = torch.stack(cols, dim=1)
    return d


def _derivative_tensor(u_fn, order):
    """Function of one point returning the order-``order`` derivative tensor of ``u_fn``."""
    fn = jacrev(u_fn)
    for _ in range(order - 1):
        fn = jacfwd(fn)
    return fn


def pointwise_derivatives(u_fn, x, derivatives):
    """Derivatives of ``u_fn`` (one point ``(n_inputs,)`` -> ``(n_outputs,)``) by torch.func.

    Returns the same mapping as :func:`batched_derivatives` with a batch of one point.
    """
    u = u_fn(x)
    d = {(): u[None, :]}
    orders = sorted({len(idx) for idx in derivatives})
    tensors = {m: _derivative_tensor(u_fn, m)(x) for m in orders}  # (n_out, n_in, ..., n_in)
    for idx in derivatives:
        d[tuple(idx)] = tensors[len(idx)][(slice(None), *idx)][None, :]
    return d


# ---------------------------------------------------------------------------------------------
# residuals
# ---------------------------------------------------------------------------------------------
def _assemble(problem, x, d, u_pair_fn, y, n_rows):
    """Residual columns (before masking) from the derivatives ``d`` of the points ``x``."""
    u = d[()]
    cols = []
    if problem is not None:
        pde = problem.residual(x, d)
        cols.append(pde.reshape(n_rows, -1))
        for cond in problem.conditions:
            uc = u[:, cond.component]
            if cond.kind == "dirichlet":
                r = uc - cond.target(x).reshape(n_rows)
            else:
                r = uc - u_pair_fn(cond.pair(x))[:, cond.component]
            cols.append(r[:, None])
    if y is not None:
        cols.append(u - y)
    return torch.cat(cols, dim=1)


def batched_residuals(net, problem, x, mask, y=None):
    """Masked residual matrix ``(n, K)`` of a batch, differentiable in the parameters.

    ``mask`` is a float ``(n, K)`` tensor (1 where a term applies); ``y`` the ``(n, n_outputs)``
    targets with unobserved entries set to 0 (their mask entries are 0).
    """
    if problem is None:
        u = net(x)
        return (u - y) * mask
    x = x.detach().requires_grad_(True)
    u = net(x)
    d = batched_derivatives(u, x, problem.derivatives)
    return _assemble(problem, x, d, net, y, x.shape[0]) * mask


def point_residual_fn(net, problem, frozen):
    """``f(params, x, mask, y) -> (K,)``: the masked residuals of one point, pure torch.func.

    ``params`` maps the trainable parameter names to tensors; ``frozen`` holds the other
    parameters and the buffers of ``net``. ``y`` is ``None`` or a ``(n_outputs,)`` tensor.
    """

    def f(params, x, mask, y=None):
        state = {**frozen, **params}

        def u_fn(xx):
            return functional_call(net, state, (xx[None, :],))[0]

        def u_batch(xx):
            return functional_call(net, state, (xx,))

        yb = None if y is None else y[None, :]
        if problem is None:
            return ((u_fn(x)[None, :] - yb) * mask[None, :])[0]
        d = pointwise_derivatives(u_fn, x, problem.derivatives)
        return (_assemble(problem, x[None, :], d, u_batch, yb, 1) * mask[None, :])[0]

    return f


def split_state(net):
    """``(trainable, frozen)``: name -> tensor dicts of ``net``'s parameters and buffers."""
    trainable = {k: v.detach() for k, v in net.named_parameters() if v.requires_grad}
    frozen = {k: v.detach() for k, v in net.named_parameters() if not v.requires_grad}
    frozen.update({k: v.detach() for k, v in net.named_buffers()})
    return trainable, frozen


def flatten(tree, names, batch_dims=0):
    """Concatenate ``tree[name]`` over ``names`` along a flat parameter axis."""
    parts = []
    for k in names:
        v = tree[k]
        parts.append(v.reshape(*v.shape[:batch_dims], -1))
    return torch.cat(parts, dim=-1)


def unflatten(theta, names, shapes):
    out, start = {}, 0
    for k, shape in zip(names, shapes, strict=False):
        size = int(np.prod(shape)) if len(shape) else 1
        out[k] = theta[start : start + size].reshape(shape)
        start += size
    return out


def per_point_jacobians(net, problem, X, mask, y, chunk_size):
    """Residuals ``(n, K)`` and their parameter Jacobians ``(n, K, p)`` (float64 tensors).

    Parameters that get no gradient from the residual (e.g. the output bias under
    ``u_xx``-only residuals) have zero columns.
    """
    trainable, frozen = split_state(net)
    names = list(trainable)
    f = point_residual_fn(net, problem, frozen)

    def with_aux(params, x, m, yy):
        r = f(params, x, m, yy)
        return r, r

    jac = jacrev(with_aux, argnums=0, has_aux=True)
    in_dims = (None, 0, 0, None if y is None else 0)
    batched = vmap(jac, in_dims=in_dims)
    rhos, jacs = [], []
    for start in range(0, X.shape[0], chunk_size):
        sl = slice(start, start + chunk_size)
        J, r = batched(trainable, X[sl], mask[sl], None if y is None else y[sl])
        rhos.append(r.detach())
        jacs.append(flatten(J, names, batch_dims=2).detach())
    return torch.cat(rhos), torch.cat(jacs)
