"""The selective state-space block of NeuroMambaImputer (Mamba, Gu & Dao, arXiv:2312.00752).

A sequential selective scan, the block around it (in-projection, causal depthwise convolution,
scan, gated out-projection) and its bidirectional, residual form. Pure torch.
"""

import math

import torch
from torch import nn
from torch.nn import functional as F


def _selective_scan(u, delta, A, B, C, D):
    """Sequential selective scan ``q_t = exp(delta_t A) q_{t-1} + delta_t B_t u_t``, ``q_0 = 0``.

    Parameters
    ----------
    u, delta : tensors of shape (batch, length, channels)
        Input and (positive) step sizes.
    A : tensor of shape (channels, d_state)
        Negative state matrix (diagonal per channel).
    B, C : tensors of shape (batch, length, d_state)
        Input-dependent input and output projections.
    D : tensor of shape (channels,)
        Skip connection.

    Returns
    -------
    y : tensor of shape (batch, length, channels)
        ``y_t = C_t . q_t + D u_t``.
    """
    decay = torch.exp(delta.unsqueeze(-1) * A)  # (b, L, ch, n), in (0, 1]
    drive = (delta * u).unsqueeze(-1) * B.unsqueeze(2)  # (b, L, ch, n)
    q = torch.zeros_like(drive[:, 0])
    qs = []
    # unbind once: indexing the time axis step by step makes autograd build a full-size zero
    # gradient per step (quadratic in the length); one fused op per step
    for a_t, b_t in zip(decay.unbind(1), drive.unbind(1), strict=True):
        q = torch.addcmul(b_t, a_t, q)
        qs.append(q)
    return (torch.stack(qs, dim=1) * C.unsqueeze(2)).sum(-1) + D * u


class _MambaBlock(nn.Module):
    """Selective SSM block (Gu & Dao): in-projection, causal depthwise conv, scan, gated out."""

    def __init__(self, d_model, d_state, expand, d_conv):
        super().__init__()
        d_inner = expand * d_model
        self.d_state = d_state
        self.dt_rank = math.ceil(d_model / 16)
        self.in_proj = nn.Linear(d_model, 2 * d_inner, bias=False)
        self.conv1d = nn.Conv1d(d_inner, d_inner, kernel_size=d_conv, groups=d_inner,
                                padding=d_conv - 1)
        self.x_proj = nn.Linear(d_inner, self.dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, d_inner, bias=True)
        # step sizes log-uniform in [1e-3, 1e-1] at initialisation (inverse softplus bias)
        dt = torch.exp(torch.rand(d_inner) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
        with torch.no_grad():
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))
        self.A_log = nn.Parameter(torch.log(torch.arange(1, d_state + 1,
                                                         dtype=torch.float32)).repeat(d_inner, 1))
        self.D = nn.Parameter(torch.ones(d_inner))
        self.out_proj = nn.Linear(d_inner, d_model, bias=False)

    def forward(self, h):
        length = h.shape[1]
        u, z = self.in_proj(h).chunk(2, dim=-1)
        u = F.silu(self.conv1d(u.transpose(1, 2))[:, :, :length].transpose(1, 2))
        dbc = self.x_proj(u)
        dt, B, C = torch.split(dbc, [self.dt_rank, self.d_state, self.d_state], dim=-1)
        delta = F.softplus(self.dt_proj(dt))
        y = _selective_scan(u, delta, -torch.exp(self.A_log), B, C, self.D)
        return self.out_proj(y * F.silu(z))


class _BiMamba(nn.Module):
    """Forward pass plus (optionally) the time-reversed pass, residual and LayerNorm."""

    def __init__(self, d_model, d_state, expand, d_conv, bidirectional):
        super().__init__()
        self.forward_block = _MambaBlock(d_model, d_state, expand, d_conv)
        self.backward_block = (_MambaBlock(d_model, d_state, expand, d_conv)
                               if bidirectional else None)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, h):
        out = self.forward_block(h)
        if self.backward_block is not None:
            out = out + self.backward_block(h.flip(1)).flip(1)
        return self.norm(h + out)
