"""The network of MPFSurface: SIREN layers, their forward jets and the two-head module.

The module evaluates the metric and phase fields, their input gradients in closed form
(:meth:`_MPFModule.heads_and_gradients`) and Laplacians by forward (Taylor-mode) jets, and its
training forward draws a step's near-surface and free points (:mod:`._sampling`).
"""

import copy
import math

import torch
from torch import nn
from torch.nn import functional as F

from ._sampling import _Done

_BOX = 0.9  # normalised points fit [-0.9, 0.9]^d


def _float64_copy(module, device):
    """A float64 copy of the trained module for inference (MPS has no float64: CPU there)."""
    device = torch.device(device)
    if device.type == "mps":
        device = torch.device("cpu")
    copied = copy.deepcopy(module).to(device=device, dtype=torch.float64).eval()
    copied.laplacian_points = 0
    for p in copied.parameters():
        p.requires_grad_(False)
    return copied

class _Sine(nn.Module):
    """``sin(omega * (W x + b))`` with SIREN's initialisation."""

    def __init__(self, n_in, n_out, omega=1.0, first=False):
        super().__init__()
        self.linear = nn.Linear(n_in, n_out)
        self.omega = float(omega)
        bound = 1.0 / n_in if first else math.sqrt(6.0 / n_in)
        with torch.no_grad():
            self.linear.weight.uniform_(-bound, bound)

    def forward(self, x):
        return torch.sin(self.omega * self.linear(x))


def _head(n_in, width):
    out = nn.Linear(width, 1)
    bound = math.sqrt(6.0 / width)
    with torch.no_grad():
        out.weight.uniform_(-bound, bound)
    return nn.Sequential(_Sine(n_in, width), out)


def _grad(y, x, create_graph=True):
    return torch.autograd.grad(y.sum(), x, create_graph=create_graph, retain_graph=True)[0]


def _first_jet(layer, x, laplacian):
    """The first sine layer ``sin(omega (W x + b))`` on a jet of the input point itself.

    Returns the stacked jet ``T`` (1 + d (+ 1), m, n_out): the value, its derivatives along
    the d input coordinates and (with ``laplacian``) its Laplacian. With ``z = omega (W x +
    b)``: ``d_j z = omega W[:, j]`` at every point and ``Delta z = 0``, so
    ``d_j sin z = cos z d_j z`` and ``Delta sin z = -sin z sum_j (d_j z)^2``.
    """
    W, omega = layer.linear.weight, layer.omega
    z = omega * F.linear(x, W, layer.linear.bias)
    s, c = torch.sin(z), torch.cos(z)
    Jz = (omega * W.t())[:, None, :]  # (d, 1, n_out)
    rows = [s[None], c[None] * Jz]
    if laplacian:
        rows.append((-s * (Jz * Jz).sum(0))[None])
    return torch.cat(rows)


def _next_jet(W, b, omega, T, d, laplacian):
    """A sine layer ``sin(omega (W y + b))`` on a stacked jet ``T`` = [y; d_1 y .. d_d y;
    (Delta y)] (1 + d (+ 1), m, n_in): one matrix product for every row.

    ``dz = omega W dy``, ``d sin z = cos z dz`` and ``Delta sin z = cos z Delta z - sin z
    sum_j (d_j z)^2``.
    """
    Z = torch.matmul(T, W.t())
    z = omega * (Z[0] + b)
    Jz = omega * Z[1 : 1 + d]
    s, c = torch.sin(z), torch.cos(z)
    rows = [s[None], c[None] * Jz]
    if laplacian:
        rows.append((c * (omega * Z[1 + d]) - s * (Jz * Jz).sum(0))[None])
    return torch.cat(rows)



class _MPFModule(nn.Module):
    """SIREN backbone with a metric head r >= 0 and a phase head theta; phi = r tanh(b th) + th.

    ``forward`` on an ``(m, d)`` batch returns the fields ``(m, k)``: ``[r, theta, phi]`` for
    ``"mpf"``, ``[phi]`` (= theta) for ``"sdf"``, ``[r]`` for ``"udf"``. On a training batch
    (more than ``d`` columns: points, neighbourhood scale, optional normals) it draws the step's
    near-surface and free points and returns everything the criterion needs.

    Input gradients and Laplacians are propagated analytically through the sine layers
    (:meth:`jet`), so a training step costs one forward and one first-order backward pass;
    :meth:`fields_autograd` computes the same quantities with autograd (tests compare them).
    """

    def __init__(self, n_features, field="mpf", hidden_size=128, n_layers=2, head_size=64,
                 omega0=10.0, beta_init=10.0, softplus_beta=1.0, near_scale=4.0,
                 box_half=_BOX * 1.1, off_surface_fraction=1.0):
        super().__init__()
        self.n_features = int(n_features)
        self.off_surface_fraction = float(off_surface_fraction)
        self.field = field
        self.softplus_beta = float(softplus_beta)
        self.near_scale = float(near_scale)
        self.box_half = float(box_half)
        self.laplacian_points = 0  # set per step by the schedule callback
        self.laplacian_factor = 1.0  # the Laplacian weight's schedule factor (callback)
        self.compiled_step = None  # a _CompiledStep while a compiled fit trains
        self.pools = None  # the _OffSurfacePools while a fit trains (None: a query per step)
        self.distance_hook = None  # the criterion's threaded d_X query while a fit trains
        layers = [_Sine(n_features, hidden_size, omega0, first=True)]
        layers += [_Sine(hidden_size, hidden_size) for _ in range(n_layers - 1)]
        self.backbone = nn.Sequential(*layers)
        self.r_head = _head(hidden_size, head_size) if field != "sdf" else None
        self.theta_head = _head(hidden_size, head_size) if field != "udf" else None
        if field == "mpf":
            raw = math.log(math.expm1(beta_init - 1e-3))
            self.beta_raw = nn.Parameter(torch.tensor(raw))
        else:
            self.beta_raw = None

    def beta(self):
        """beta = softplus(b) + 1e-3 > 0."""
        return F.softplus(self.beta_raw) + 1e-3

    def _fuse(self, out, zr=None, zt=None):
        """r, theta, P, phi from the heads' outputs."""
        if zr is not None:
            out["r"] = F.softplus(zr, beta=self.softplus_beta)
        if zt is not None:
            out["theta"] = zt
        if self.field == "mpf":
            out["P"] = torch.tanh(self.beta() * out["theta"])
            out["phi"] = out["r"] * out["P"] + out["theta"]
        elif self.field == "sdf":
            out["phi"] = out["theta"]
        else:
            out["phi"] = out["r"]
        return out

    def fields(self, x, grads=False, create_graph=False):
        """Dict of r, theta, P, phi (those the field has) and, with ``grads``, their input
        gradients ``grad_r``, ``grad_theta``, ``grad_phi`` (m, d).

        The gradients are computed in closed form (:meth:`heads_and_gradients`) and are
        differentiable whenever the parameters require gradients (``create_graph`` is
        accepted for symmetry with :meth:`fields_autograd`).
        """
        if not grads:
            h = self.backbone(x)
            zr = self.r_head(h)[:, 0] if self.r_head is not None else None
            zt = self.theta_head(h)[:, 0] if self.theta_head is not None else None
            return self._fuse({"x": x}, zr, zt)
        (zr, gzr), (zt, gzt) = self.heads_and_gradients(x)
        out = self._fuse({"x": x}, zr, zt)
        if zr is not None:
            out["grad_r"] = torch.sigmoid(self.softplus_beta * zr)[:, None] * gzr
        if zt is not None:
            out["grad_theta"] = gzt
        if self.field == "mpf":
            P, r = out["P"], out["r"]
            gate = 1.0 + self.beta() * r * (1.0 - P * P)
            out["grad_phi"] = P[:, None] * out["grad_r"] + gate[:, None] * gzt
        else:
            out["grad_phi"] = gzt if self.field == "sdf" else out["grad_r"]
        return out

    def heads_and_gradients(self, x):
        """The heads' outputs and their input gradients, by a hand-written reverse pass.

        With ``a_l = omega_l (W_l h_{l-1} + b_l)``, ``h_l = sin a_l`` and a head
        ``z = w . sin(a_head)``: ``grad z = (...((w cos a_head) W_head * omega_L cos a_L) W_L
        ... * omega_1 cos a_1) W_1``. Both heads' cotangents go through the backbone together
        and every ``cos a_l`` is computed once, so this costs about half of autograd's
        double backward (one first-order backward trains through it).

        Returns
        -------
        (z_r, grad z_r), (z_theta, grad z_theta) : tuples of tensors (m,), (m, d)
            ``(None, None)`` for a head the field does not have.
        """
        y, cosines = x, []
        for layer in self.backbone:
            a = layer.omega * F.linear(y, layer.linear.weight, layer.linear.bias)
            y = torch.sin(a)
            cosines.append(torch.cos(a))
        # both heads' sine layers as one matrix product, their cotangents as one batched one
        Wh, bh, w_out, b_out, n_heads, width = self._stacked_heads()
        a = F.linear(y, Wh, bh)  # the heads' sine layers have omega 1
        m = a.shape[0]
        values = (torch.sin(a) * w_out).view(m, n_heads, width).sum(-1) + b_out
        C = (torch.cos(a) * w_out.reshape(1, -1)).view(m, n_heads, width).transpose(0, 1)
        G = torch.bmm(C, Wh.view(n_heads, width, -1))  # (n_heads, m, hidden)
        for layer, c in zip(reversed(self.backbone), reversed(cosines), strict=True):
            G = (G * (layer.omega * c)) @ layer.linear.weight
        pairs = [(values[:, i], G[i]) for i in range(n_heads)]
        none = (None, None)
        if self.field == "mpf":
            return pairs[0], pairs[1]
        return (none, pairs[0]) if self.field == "sdf" else (pairs[0], none)

    def _stacked_heads(self):
        """The heads' parameters side by side: sine layers ``Wh`` (k w, H), ``bh`` (k w,),
        output weights ``w_out`` (k w,) (flattened) and biases ``b_out`` (k,), k heads of
        width w (r first)."""
        heads = [h for h in (self.r_head, self.theta_head) if h is not None]
        Wh = torch.cat([h[0].linear.weight for h in heads])
        bh = torch.cat([h[0].linear.bias for h in heads])
        w_out = torch.cat([h[1].weight[0] for h in heads])
        b_out = torch.cat([h[1].bias for h in heads])
        return Wh, bh, w_out, b_out, len(heads), heads[0][0].linear.out_features

    def jet(self, x, laplacian=True):
        """Fields, input gradients and Laplacians by forward (Taylor-mode) propagation.

        Forward mode carries d tangents per layer (dearer than :meth:`heads_and_gradients`
        for the gradients alone) and gives the Laplacian with first derivatives only: the
        chain rule through ``r = softplus(z_r)`` (``r' = s``, ``r'' = b s (1 - s)`` with
        ``s = sigmoid(b z_r)``) and the fusion ``phi = r P + theta``, ``P = tanh(beta theta)``:
        ``grad phi = P grad r + (1 + beta r (1 - P^2)) grad theta`` and
        ``Delta phi = P Delta r + (1 + beta r (1 - P^2)) Delta theta
        + 2 beta (1 - P^2) grad r . grad theta - 2 beta^2 r P (1 - P^2) |grad theta|^2``.
        The Laplacian term of training uses it on its subset of points.
        """
        d = x.shape[1]
        T = _first_jet(self.backbone[0], x, laplacian)
        for layer in self.backbone[1:]:
            T = _next_jet(layer.linear.weight, layer.linear.bias, layer.omega, T, d, laplacian)
        # both heads as one stacked layer; their outputs per head (k of width w)
        Wh, bh, w_out, b_out, n_heads, width = self._stacked_heads()
        T = _next_jet(Wh, bh, 1.0, T, d, laplacian)
        Hs = (T * w_out).view(T.shape[0], T.shape[1], n_heads, width).sum(-1)  # (K, m, k)
        z = Hs[0] + b_out
        heads = [(z[:, i], Hs[1 : 1 + d, :, i].t(), Hs[1 + d, :, i] if laplacian else None)
                 for i in range(n_heads)]
        out = {"x": x}
        zr = zt = None
        if self.field == "mpf":
            (zr, gzr, lzr), (zt, gzt, lzt) = heads
        elif self.field == "sdf":
            zt, gzt, lzt = heads[0]
        else:
            zr, gzr, lzr = heads[0]
        self._fuse(out, zr, zt)
        if zr is not None:
            b = self.softplus_beta
            sig = torch.sigmoid(b * zr)
            out["grad_r"] = sig[:, None] * gzr
            if laplacian:
                lap_r = sig * lzr + b * sig * (1 - sig) * (gzr * gzr).sum(1)
        if zt is not None:
            out["grad_theta"] = gzt
        if self.field == "mpf":
            beta = self.beta()
            P, r = out["P"], out["r"]
            q = 1.0 - P * P
            gate = 1.0 + beta * r * q
            gr = out["grad_r"]
            out["grad_phi"] = P[:, None] * gr + gate[:, None] * gzt
            if laplacian:
                out["laplacian"] = (P * lap_r + gate * lzt + 2 * beta * q * (gr * gzt).sum(1)
                                    - 2 * beta**2 * r * P * q * (gzt * gzt).sum(1))
        elif self.field == "sdf":
            out["grad_phi"] = gzt
            if laplacian:
                out["laplacian"] = lzt
        else:
            out["grad_phi"] = out["grad_r"]
            if laplacian:
                out["laplacian"] = lap_r
        return out

    def fields_autograd(self, x, grads=False, create_graph=False, direct_phi=True):
        """:meth:`fields` with the gradients by autograd (the reference of the tests and the
        original training path); ``direct_phi=False`` composes ``grad_phi`` from ``grad_r``
        and ``grad_theta`` by the fusion formula instead of a third backward pass."""
        if grads and not x.requires_grad:
            x = x.detach().requires_grad_(True)
        h = self.backbone(x)
        zr = self.r_head(h)[:, 0] if self.r_head is not None else None
        zt = self.theta_head(h)[:, 0] if self.theta_head is not None else None
        out = self._fuse({"x": x}, zr, zt)
        if grads:
            if "r" in out:
                out["grad_r"] = _grad(out["r"], x, create_graph)
            if "theta" in out:
                out["grad_theta"] = _grad(out["theta"], x, create_graph)
            if direct_phi or self.field != "mpf":
                out["grad_phi"] = (_grad(out["phi"], x, create_graph) if self.field == "mpf"
                                   else out["grad_theta" if self.field == "sdf" else "grad_r"])
            else:
                P, r = out["P"], out["r"]
                gate = 1.0 + self.beta() * r * (1.0 - P * P)
                out["grad_phi"] = P[:, None] * out["grad_r"] + gate[:, None] * out["grad_theta"]
        return out

    def laplacian(self, x):
        """Delta phi = sum_j d^2 phi / dx_j^2 at ``x`` by double autograd (reference)."""
        out = self.fields_autograd(x, grads=True, create_graph=True)
        x, g = out["x"], out["grad_phi"]
        lap = torch.zeros_like(g[:, 0])
        for j in range(self.n_features):
            lap = lap + _grad(g[:, j], x, True)[:, j]
        return lap

    def _step_fields(self, pts, lap_pts):
        """A training step's fields and input gradients at ``pts`` and, unless ``lap_pts`` is
        ``None``, ``laplacian`` at ``lap_pts``: the closed-form gradients and the forward jet
        (benchmarks/_mpf_arms.py overrides it with the original autograd double backward)."""
        out = self.fields(pts, grads=True)
        if lap_pts is not None:
            out["laplacian"] = self.jet(lap_pts)["laplacian"]
        return out

    def forward(self, x):
        d = self.n_features
        if x.shape[1] == d:
            out = self.fields(x)
            if self.field == "mpf":
                return torch.stack([out["r"], out["theta"], out["phi"]], dim=1)
            return out["phi"][:, None]
        return self._training_forward(x)

    def _training_forward(self, batch):
        d = self.n_features
        S = batch[:, :d]
        sigma = batch[:, d : d + 1]
        normals = batch[:, d + 1 :] if batch.shape[1] > d + 1 else None
        B = S.shape[0]
        # near points around the first n_off surface points of the (shuffled) batch, as many
        # free points of the box
        n_off = max(1, math.ceil(self.off_surface_fraction * B))
        pools = self.pools
        if pools is not None and n_off <= pools.n:
            # near and free points with their distance targets from the pools
            N, Fr, d_x = pools.draw(n_off)
            N, Fr = N.to(S.dtype), Fr.to(S.dtype)
            d_x = None if d_x is None else _Done(d_x.to(S.dtype))
        else:  # one query per step (the original sampling)
            scale = torch.where(torch.rand(n_off, 1, dtype=S.dtype, device=S.device) < 0.5,
                                1.0, self.near_scale)
            N = S[:n_off] + scale * sigma[:n_off] * torch.randn_like(S[:n_off])
            Fr = (torch.rand_like(N) * 2.0 - 1.0) * self.box_half
            d_x = None
        pts = torch.cat([S, N, Fr]).detach()
        # d_X of the near and free points (the metric term's target) runs on another core
        # while the network evaluates them (same values as the criterion's own query)
        hook = self.distance_hook
        if d_x is None and hook is not None and self.field != "sdf":
            d_x = hook(pts[B:])
        k = min(self.laplacian_points, B)
        k = min(k, n_off)
        lap_pts = torch.cat([N[:k], Fr[:k]]).detach()
        step = self.compiled_step
        if (step is not None and pools is not None and n_off <= pools.n
                and step.applies(B, n_off)):
            with torch.enable_grad():
                res = step(self, pts, lap_pts if k > 0 else None,
                           None if d_x is None else d_x.result(), normals,
                           self.laplacian_factor)
            if res is not None:
                return {"terms": res[0], "total": res[1], "batch_size": B, "n_off": n_off}
        with torch.enable_grad():
            # |Delta phi| on the first k near and the first k free points
            out = self._step_fields(pts, lap_pts if k > 0 else None)
        out["batch_size"] = B
        out["n_off"] = n_off
        out["normals"] = normals
        out["d_x"] = d_x
        return out

