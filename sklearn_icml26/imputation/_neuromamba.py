"""NeuroMambaImputer: a selective state-space imputer with a spiking confidence gate.

Reconstructed from the abstract of "NeuroMamba" (ICML 2026), which describes a plug-and-play
module for degraded sensor streams made of two parts: a Mamba-based "inertial" model of linear
complexity that recovers short-horizon temporal dependencies and infers missing modalities, and
a hard-threshold leaky integrate-and-fire (LIF) spiking gate that enforces reconstruction
fidelity under occupancy-guided supervision. No paper text, equations or code are available:
every formula below (the bidirectional selective scan of Gu & Dao, arXiv:2312.00752, per feature
group, attention across groups, the LIF gate on a corruption logit, training by corruption) is
this package's design, not the authors' implementation.
"""

import math
import numbers
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data
from torch import nn
from torch.nn import functional as F

from .._compat import Interval, StrOptions, _fit_context
from ..base import TorchEstimatorMixin
from ..utils._scaling import _robust_mean_std, _standardize

__all__ = ["NeuroMambaImputer"]

_DEFAULT_CORRUPTION = {"p_point": 0.1, "p_block": 0.2, "p_group": 0.1, "p_device": 0.1,
                       "p_impulse": 0.02, "impulse_scale": 5.0}
_GATE_POS_WEIGHT = 5.0
_N_FILL_FOLDS = 3
_BLEND_SCALE = 10.0


# ---------------------------------------------------------------------------------------------
# selective scan and the LIF gate (pure torch)
# ---------------------------------------------------------------------------------------------
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


class _SurrogateSpike(torch.autograd.Function):
    """Heaviside ``H(v - theta)`` forward; ``1 / (1 + k |v - theta|)^2`` backward."""

    @staticmethod
    def forward(ctx, shifted, slope):
        ctx.save_for_backward(shifted)
        ctx.slope = slope
        return (shifted > 0).to(shifted.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (shifted,) = ctx.saved_tensors
        return grad_output / (1.0 + ctx.slope * shifted.abs()) ** 2, None


def _spike(v, threshold, slope):
    return _SurrogateSpike.apply(v - threshold, float(slope))


def _lif_gate(c, beta, threshold, slope):
    """Run one LIF neuron per entry over the time axis (axis 1), driven by ``c``.

    ``v_t = beta v_{t-1} + c_t - threshold s_{t-1}``, ``s_t = H(v_t - threshold)``; the reset
    term is detached (gradients flow through the leak and the drive only).

    Parameters
    ----------
    c : tensor of shape (batch, length, ...)
        Input current.
    beta : float
        Leak in [0, 1].
    threshold : float
        Firing threshold (> 0).
    slope : float
        Slope ``k`` of the surrogate gradient.

    Returns
    -------
    spikes, membrane : tensors of the shape of ``c``
    """
    v = torch.zeros_like(c[:, 0])
    s = torch.zeros_like(c[:, 0])
    vs, ss = [], []
    for c_t in c.unbind(1):
        v = beta * v + c_t - threshold * s.detach()
        s = _spike(v, threshold, slope)
        vs.append(v)
        ss.append(s)
    return torch.stack(ss, dim=1), torch.stack(vs, dim=1)


# ---------------------------------------------------------------------------------------------
# torch modules
# ---------------------------------------------------------------------------------------------
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


def _interpolate(x, obs, exclude_self=False, anchors=None):
    """Linear interpolation along axis 1 from the entries where ``obs`` is True.

    Parameters
    ----------
    x : tensor of shape (batch, length, features)
        Values (ignored where ``obs`` is False).
    obs : bool tensor of the shape of ``x``
        Entries to interpolate from.
    exclude_self : bool, default=False
        Interpolate every entry from its nearest observed neighbours *other than itself*
        (leave-one-out; equal to the plain interpolation at unobserved entries).
    anchors : tuple of four tensors of shape (batch, features), default=None
        ``(left_value, left_distance, right_value, right_distance)``: the nearest observed
        entry before the window (at position ``-left_distance``) and after it (at
        ``length - 1 + right_distance``); a distance of 0 means there is none. Used where
        the window itself has no observed entry on that side.

    Returns
    -------
    values : tensor of the shape of ``x``
        Interpolated values; the nearest usable value before the first or after the last
        one, 0 where a column has no usable entry.
    distance : tensor of the shape of ``x``
        Rows to the nearest usable entry (``length`` where there is none).
    """
    b, w, f = x.shape
    t = torch.arange(w, device=x.device).view(1, w, 1).expand(b, w, f)
    prev = torch.where(obs, t, torch.full_like(t, -1)).cummax(1).values
    nxt = torch.where(obs, t, torch.full_like(t, w)).flip(1).cummin(1).values.flip(1)
    if exclude_self:
        prev = torch.cat([torch.full_like(prev[:, :1], -1), prev[:, :-1]], dim=1)
        nxt = torch.cat([nxt[:, 1:], torch.full_like(nxt[:, :1], w)], dim=1)
    has_prev, has_next = prev >= 0, nxt < w
    x_prev = x.gather(1, prev.clamp(min=0))
    x_next = x.gather(1, nxt.clamp(max=w - 1))
    tf, prev_f, next_f = t.to(x.dtype), prev.to(x.dtype), nxt.to(x.dtype)
    if anchors is not None:
        left_value, left_distance, right_value, right_distance = (
            a.to(x.dtype)[:, None, :].expand(b, w, f) for a in anchors)
        use_left, use_right = ~has_prev & (left_distance > 0), ~has_next & (right_distance > 0)
        x_prev = torch.where(use_left, left_value, x_prev)
        prev_f = torch.where(use_left, -left_distance, prev_f)
        x_next = torch.where(use_right, right_value, x_next)
        next_f = torch.where(use_right, (w - 1) + right_distance, next_f)
        has_prev, has_next = has_prev | use_left, has_next | use_right
    frac = (tf - prev_f) / (next_f - prev_f).clamp(min=1)
    values = torch.where(has_prev & has_next, x_prev + frac * (x_next - x_prev),
                         torch.where(has_prev, x_prev,
                                     torch.where(has_next, x_next, torch.zeros_like(x))))
    none = torch.full_like(tf, float(w))
    distance = torch.minimum(torch.where(has_prev, tf - prev_f, none),
                             torch.where(has_next, next_f - tf, none))
    return values, distance


def _box_mean(x, obs, half):
    """Mean of ``x`` over the entries where ``obs`` is True within ``half`` rows of each row
    (axis 1, inside the window); 0 where there is none."""
    xs = torch.where(obs, x, torch.zeros_like(x))
    pad = torch.zeros_like(xs[:, :1])
    csum = torch.cat([pad, xs.cumsum(1)], dim=1)
    ccount = torch.cat([pad, obs.to(x.dtype).cumsum(1)], dim=1)
    w = x.shape[1]
    t = torch.arange(w, device=x.device)
    lo, hi = (t - half).clamp(min=0), (t + half + 1).clamp(max=w)
    total = csum[:, hi] - csum[:, lo]
    count = ccount[:, hi] - ccount[:, lo]
    return total / count.clamp(min=1.0)


class _NeuroMambaNet(nn.Module):
    """Group embeddings -> n_layers x (bidirectional scan per group, attention across groups)
    -> per-feature reconstruction and corruption-logit heads, plus the LIF gate.

    In training mode the net corrupts its input itself (seeded through torch's RNG) and
    returns everything the loss needs.

    Input ``X`` (batch, W, 14F): standardised values (0 where missing), the observed mask, the
    precomputed cross-group fill, where it exists, the (local) seasonal profile of each row,
    the window's edge anchors (:func:`_edge_anchors`, repeated along the window; zeros: none)
    and the stream-wide profile of each row.

    Per entry the groups are embedded from the value, the mask, the leave-one-out linear
    interpolation of the window, the standardised residual of the value against that
    interpolation (also a direct input of the gate logit), the distance to the nearest
    observed row, the cross-group fill's departure from the temporal estimate, where it is
    used, the seasonal correction and (``smooth_level``) the smoothed level's departure from
    the temporal estimate. The reconstruction starts from the blended base:
    ``x_hat = base + correction``, the correction head starts at zero.
    """

    def __init__(self, groups, n_features, d_model, d_state, expand, d_conv, n_layers,
                 n_mix_heads, bidirectional, mixing, gate, lif_beta, lif_threshold,
                 surrogate_slope, corruption, seasonal_period=None, cross=None,
                 cross_fill="boosting", smooth_level=False):
        super().__init__()
        m = len(groups)
        group_of = np.empty(n_features, dtype=np.int64)
        member = np.zeros((m, n_features), dtype=np.float32)
        for g, cols in enumerate(groups):
            group_of[cols] = g
            member[g, cols] = 1.0
        self.register_buffer("group_of", torch.as_tensor(group_of))
        self.register_buffer("member", torch.as_tensor(member))
        # other[j, k] = 1 when column k is outside the group of column j (the fill's inputs)
        other = 1.0 - member[group_of]
        self.register_buffer("other", torch.as_tensor(other))
        self.register_buffer("other_share", torch.as_tensor(
            other / np.maximum(other.sum(1, keepdims=True), 1.0)))
        self.n_features, self.n_groups = n_features, m
        self.seasonal_period = seasonal_period
        # the smoothed level (with a period) adds a ninth channel
        self.smooth_level = bool(smooth_level and seasonal_period)
        self.n_channels = 9 if self.smooth_level else 8
        # with cross_fill="linear": a closed-form cross-group ridge fill (F, F) and intercepts
        # (F,) applied to the corrupted input; with "boosting" the fill comes precomputed with
        # the input (out-of-fold boosted trees); fixed during training either way
        self.cross_fill = cross_fill if mixing and m > 1 else None
        if cross is None or self.cross_fill != "linear":
            cross = (np.zeros((n_features, n_features)), np.zeros(n_features))
        self.register_buffer("cross_weight", torch.as_tensor(cross[0], dtype=torch.float32))
        self.register_buffer("cross_bias", torch.as_tensor(cross[1], dtype=torch.float32))
        self.register_buffer("cross_share", torch.as_tensor(
            np.abs(cross[0]) / np.maximum(np.abs(cross[0]).sum(1, keepdims=True), 1e-12),
            dtype=torch.float32))
        self.use_cross = self.cross_fill == "boosting" or bool(
            self.cross_fill == "linear" and np.abs(cross[0]).sum() > 0)
        # the network's correction on top of the base (False: the base alone, a diagnostic)
        self.use_correction = True
        # blend of the base with the cross-group fill and the seasonal correction:
        # sigmoid(a + b log1p(distance) + c coverage), per feature; stored divided by
        # _BLEND_SCALE so that the optimiser moves these few numbers _BLEND_SCALE times faster
        # than the network's weights (a handful of epochs must be able to settle them)
        self.blend_cross = nn.Parameter(
            torch.tensor([-4.0, 1.0, 3.0]).repeat(n_features, 1) / _BLEND_SCALE)
        self.blend_seasonal = nn.Parameter(
            torch.tensor([-3.0, 1.0]).repeat(n_features, 1) / _BLEND_SCALE)
        self.blend_level = nn.Parameter(
            torch.tensor([-6.0, 2.0]).repeat(n_features, 1) / _BLEND_SCALE)
        self.embed_weight = nn.Parameter(
            torch.randn(m, self.n_channels * n_features, d_model)
            / math.sqrt(self.n_channels * max(len(c) for c in groups)))
        self.embed_bias = nn.Parameter(torch.zeros(m, d_model))
        self.group_embedding = nn.Parameter(0.02 * torch.randn(m, d_model))
        self.scans = nn.ModuleList([_BiMamba(d_model, d_state, expand, d_conv, bidirectional)
                                    for _ in range(n_layers)])
        self.mixers = nn.ModuleList(
            [nn.MultiheadAttention(d_model, n_mix_heads, batch_first=True)
             for _ in range(n_layers)]) if mixing else None
        self.mix_norms = nn.ModuleList([nn.LayerNorm(d_model) for _ in range(n_layers)]) \
            if mixing else None
        # the correction starts at zero: an untrained net is the linear interpolation
        self.head_weight = nn.Parameter(torch.zeros(n_features, d_model))
        self.head_bias = nn.Parameter(torch.zeros(n_features))
        self.gate_weight = nn.Parameter(torch.zeros(n_features, d_model))
        # logit = 2 r - 6 at initialisation: fires where a value sits about 3 sd away from
        # the interpolation of its neighbours
        self.gate_residual_weight = nn.Parameter(torch.full((n_features,), 2.0))
        self.gate_bias = nn.Parameter(torch.full((n_features,), -6.0))
        self.gate = gate
        self.lif = (float(lif_beta), float(lif_threshold), float(surrogate_slope))
        self.corruption = corruption

    # -- corruption ---------------------------------------------------------------------------
    def _corrupt(self, x, obs):
        """Hide and impulse observed entries; returns (x_in, obs_in, hidden, impulsed)."""
        b, w, f = x.shape
        cfg = self.corruption
        dev, dt = x.device, x.dtype
        t = torch.arange(w, device=dev)

        def segments(n_rows, lo, hi, p):
            lo = max(1, min(lo, w))
            hi = max(lo, min(hi, w))
            length = torch.randint(lo, hi + 1, (b, n_rows), device=dev)
            start = (torch.rand(b, n_rows, device=dev) * (w - length + 1)).floor()
            on = torch.rand(b, n_rows, device=dev) < p
            seg = (t[None, None] >= start[..., None]) & (t[None, None] < (start + length)[
                ..., None])
            return (seg & on[..., None]).transpose(1, 2)  # (b, w, n_rows)

        hidden = torch.rand(b, w, f, device=dev) < cfg["p_point"]
        hidden |= segments(f, 2, w // 2, cfg["p_block"])
        hidden |= segments(self.n_groups, w // 4, w // 2, cfg["p_group"])[:, :, self.group_of]
        hidden |= segments(1, w // 8, w // 2, cfg["p_device"])
        hidden &= obs
        impulsed = (torch.rand(b, w, f, device=dev) < cfg["p_impulse"]) & obs & ~hidden
        sign = torch.where(torch.rand(b, w, f, device=dev) < 0.5, -1.0, 1.0).to(dt)
        # magnitudes U[0.5, 1] x impulse_scale: the scale of a column is inflated by its own
        # impulses, so genuine ones look smaller than impulse_scale in standardised units
        size = cfg["impulse_scale"] * (0.5 + 0.5 * torch.rand(b, w, f, device=dev, dtype=dt))
        x_in = torch.where(impulsed, x + size * sign, x)
        obs_in = obs & ~hidden
        return torch.where(obs_in, x_in, torch.zeros_like(x)), obs_in, hidden, impulsed

    # -- network ------------------------------------------------------------------------------
    def context(self, x_in, obs_in, fill=None, fill_ok=None, profile=None, changed=None,
                anchors=None, stream_profile=None):
        """Per-entry input channels (b, w, f, C), the starting reconstruction and the
        residual of each value against the interpolation of its neighbours.

        ``fill``/``fill_ok``: the precomputed cross-group fill and where it exists;
        ``profile``: the seasonal profile of each row; ``changed``: entries the training
        corruption hid or impulsed (a precomputed fill that read one of them is not used);
        ``anchors``: the eight edge-anchor tensors of :func:`_edge_anchors` (values, distances
        and profile values of the nearest observation before and after the window);
        ``stream_profile``: the stream-wide profile of each row, used in training where the
        (local) ``profile`` read an entry of the window that the corruption changed.
        """
        w = x_in.shape[1]
        dt = x_in.dtype
        zeros = torch.zeros_like(x_in)
        value_anchors = profile_anchors = level_anchors = None
        if anchors is not None:
            lv, ld, rv, rd, lp, rp, ls, rs = anchors
            value_anchors, profile_anchors = (lv, ld, rv, rd), (lp, ld, rp, rd)
            level_anchors = (ls, ld, rs, rd)
        interp, distance = _interpolate(x_in, obs_in, exclude_self=True, anchors=value_anchors)
        residual = torch.where(obs_in, (x_in - interp).abs(), zeros)
        log_d = torch.log1p(distance.to(dt))
        # the temporal estimate: the interpolation plus (with a period) the seasonal profile's
        # departure from its own interpolation (same anchors): inside a gap the level is
        # interpolated and the cycle comes from the profile
        temporal = interp
        seasonal = level_delta = zeros
        if self.seasonal_period and profile is not None:
            if changed is not None and stream_profile is not None:
                # the local profile of a row reads the rows whole periods away: where one of
                # them inside the window was hidden or impulsed, it would carry the target
                period, read = self.seasonal_period, torch.zeros_like(changed)
                for lag in range(period, w, period):
                    read[:, lag:] |= changed[:, :-lag]
                    read[:, :-lag] |= changed[:, lag:]
                profile = torch.where(read, stream_profile, profile)
            profile_base, _ = _interpolate(profile, obs_in, exclude_self=True,
                                           anchors=profile_anchors)
            seasonal = profile - profile_base
            a, b = (_BLEND_SCALE * self.blend_seasonal).unbind(-1)
            temporal = interp + torch.sigmoid(a + b * log_d) * seasonal
        if self.smooth_level and profile is not None:
            # the smoothed level: the deseasonalised values averaged over one period around
            # each observation (present entries only) and interpolated across a gap: a long
            # gap is bridged from the level of the days around it, not from its two end
            # readings; the blend moves towards it with the distance
            level = _box_mean(x_in - profile, obs_in, self.seasonal_period // 2)
            level_interp, _ = _interpolate(level, obs_in, exclude_self=True,
                                           anchors=level_anchors)
            level_delta = level_interp + profile - temporal
            a, b = (_BLEND_SCALE * self.blend_level).unbind(-1)
            temporal = temporal + torch.sigmoid(a + b * log_d) * level_delta
        base = temporal
        cross_delta, usable = zeros, zeros
        if self.use_cross:
            if self.cross_fill == "linear":
                # the other groups' present values through the closed-form linear fill
                x_cross = x_in @ self.cross_weight.to(dt).T + self.cross_bias.to(dt)
                coverage = obs_in.to(dt) @ self.cross_share.to(dt).T
                usable = torch.ones_like(x_in)
            else:
                # share of the fill's inputs present; the fill is used only where all the
                # inputs it read are still there unchanged and at least one is present
                coverage = obs_in.to(dt) @ self.other_share.to(dt).T
                ok = fill_ok & (coverage > 0)
                if changed is not None:
                    ok &= (changed.to(dt) @ self.other.to(dt).T) == 0
                x_cross, usable = torch.where(ok, fill, temporal), ok.to(dt)
            # the base moves from the temporal estimate towards the cross-group fill
            a, b, c = (_BLEND_SCALE * self.blend_cross).unbind(-1)
            cross_delta = x_cross - temporal
            base = temporal + usable * torch.sigmoid(a + b * log_d + c * coverage) * cross_delta
        channels = [x_in, obs_in.to(dt), interp, residual, log_d / math.log1p(w), cross_delta,
                    usable, seasonal] + ([level_delta] if self.smooth_level else [])
        return torch.stack(channels, dim=-1), base, residual

    def network(self, x_in, obs_in, **extra):
        b, w, f = x_in.shape
        channels, base, residual = self.context(x_in, obs_in, **extra)
        inp = channels.reshape(b, w, f * self.n_channels)  # feature-major, channel-minor
        mask = self.member.repeat_interleave(self.n_channels, dim=1)  # (m, f C)
        h = torch.einsum("btf,gfd->btgd", inp, self.embed_weight * mask[..., None])
        h = h + self.embed_bias + self.group_embedding  # (b, w, m, d)
        m, d = self.n_groups, h.shape[-1]
        for i, scan in enumerate(self.scans):
            h = scan(h.permute(0, 2, 1, 3).reshape(b * m, w, d))
            h = h.reshape(b, m, w, d).permute(0, 2, 1, 3)
            if self.mixers is not None:
                tokens = h.reshape(b * w, m, d) + self.group_embedding
                mixed, _ = self.mixers[i](tokens, tokens, tokens, need_weights=False)
                h = self.mix_norms[i](h + mixed.reshape(b, w, m, d))
        hf = h[:, :, self.group_of, :]  # (b, w, f, d)
        x_hat = base
        if self.use_correction:
            x_hat = base + (hf * self.head_weight).sum(-1) + self.head_bias
        logit = ((hf * self.gate_weight).sum(-1) + self.gate_residual_weight * residual
                 + self.gate_bias)
        return x_hat, logit

    def forward(self, X):
        f = self.n_features
        x, obs = X[..., :f], X[..., f:2 * f] > 0.5
        edge = X[:, 0, 5 * f:13 * f]
        extra = {"fill": X[..., 2 * f:3 * f], "fill_ok": X[..., 3 * f:4 * f] > 0.5,
                 "profile": X[..., 4 * f:5 * f],
                 "anchors": tuple(edge[:, i * f:(i + 1) * f] for i in range(8)),
                 "stream_profile": X[..., 13 * f:14 * f]}
        if self.training:
            x_in, obs_in, hidden, impulsed = self._corrupt(x, obs)
            extra["changed"] = (obs & ~obs_in) | impulsed
            # occupancy: an observed value far from the interpolation of its neighbours in the
            # *uncorrupted* window may be a genuine impulse; it is neither a target nor a
            # negative example of the gate
            interp, _ = _interpolate(x, obs, exclude_self=True, anchors=extra["anchors"][:4])
            doubtful = obs & ((x - interp).abs() > 0.6 * self.corruption["impulse_scale"])
            obs, hidden, impulsed = obs & ~doubtful, hidden & ~doubtful, impulsed & ~doubtful
        else:
            x_in, obs_in = torch.where(obs, x, torch.zeros_like(x)), obs
            hidden = impulsed = torch.zeros_like(obs)
        x_hat, logit = self.network(x_in, obs_in, **extra)
        beta, theta, slope = self.lif
        if self.gate:
            # bounded input current in (0, 2 theta): a long clean history cannot push the
            # membrane far below rest and mask the next impulse
            current = 2.0 * theta * torch.sigmoid(logit)
            spikes, membrane = _lif_gate(current, beta, theta, slope)
        else:
            spikes, membrane = torch.zeros_like(logit), torch.full_like(logit, -1e4)
        return x_hat, membrane, spikes, x, obs, hidden, impulsed


class _NeuroMambaLoss(nn.Module):
    """Per-window loss: MAE on hidden and impulsed entries, lambda_obs MAE on clean observed
    entries, lambda_gate BCE of sigma(k (v - theta)) against the impulse indicator."""

    def __init__(self, lambda_observed, lambda_gate, threshold, slope, gate):
        super().__init__()
        self.lambda_observed, self.lambda_gate = float(lambda_observed), float(lambda_gate)
        self.threshold, self.slope, self.gate = float(threshold), float(slope), gate
        # a missed impulse costs more than a false flag (a flagged clean value is replaced by
        # a reconstruction close to it): positives weigh _GATE_POS_WEIGHT in the BCE
        self.pos_weight = _GATE_POS_WEIGHT

    def forward(self, y_pred, y_true):
        x_hat, membrane, _, x, obs, hidden, impulsed = y_pred
        err = (x_hat - x).abs()
        dims = (1, 2)

        def masked_mean(values, mask):
            mask = mask.to(values.dtype)
            return (values * mask).sum(dims) / mask.sum(dims).clamp(min=1.0)

        target = hidden | impulsed
        loss = masked_mean(err, target)
        loss = loss + self.lambda_observed * masked_mean(err, obs & ~target)
        if self.gate and self.lambda_gate > 0:
            present = obs & ~hidden
            bce = F.binary_cross_entropy_with_logits(
                self.slope * (membrane - self.threshold), impulsed.to(err.dtype),
                reduction="none", pos_weight=torch.tensor(self.pos_weight, dtype=err.dtype))
            loss = loss + self.lambda_gate * masked_mean(bce, present)
        return loss


# ---------------------------------------------------------------------------------------------
# windows
# ---------------------------------------------------------------------------------------------
def _series_rows(series_id, n_rows):
    """List of row-index arrays, one per series (rows of a series keep their order)."""
    if series_id is None:
        return [np.arange(n_rows)]
    _, inverse = np.unique(series_id, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    counts = np.bincount(inverse)
    return np.split(order, np.cumsum(counts)[:-1])


def _window_index(series, window, stride):
    """(n_windows, window) row indices (-1 = padding); windows never cross a series.

    Starts at 0, stride, ... and one window ending at the series' last row, so every row is
    covered. A series shorter than the window gives one padded window.
    """
    out = []
    for rows in series:
        n = len(rows)
        if n <= window:
            idx = np.full(window, -1, dtype=np.int64)
            idx[:n] = rows
            out.append(idx[None])
            continue
        starts = list(range(0, n - window + 1, stride))
        if starts[-1] != n - window:
            starts.append(n - window)
        out.append(np.stack([rows[s:s + window] for s in starts]))
    return np.concatenate(out, axis=0)


def _edge_anchors(Z, obs, series, index, profile=None, half=0):
    """Nearest observed entry of each column before and after every window, in its series.

    Returns ndarray of shape (n_windows, 8F): the value and distance (rows from the window's
    first row back to it) of the anchor before the window, the same after the window (rows
    from its last row), the seasonal profile at the two anchors (0 without ``profile``) and
    the smoothed level at the two anchors: the mean of ``Z - profile`` over the observed rows
    within ``half`` rows of the anchor on its outer side (the anchor included; rows inside
    the window never enter). A distance of 0 means the series has no observed entry of that
    column on that side.
    """
    n_windows, _ = index.shape
    n_features = Z.shape[1]
    out = np.zeros((n_windows, 8 * n_features))
    series_of = np.empty(Z.shape[0], dtype=np.int64)
    position = np.empty(Z.shape[0], dtype=np.int64)
    for k, rows in enumerate(series):
        series_of[rows], position[rows] = k, np.arange(len(rows))
    valid = index >= 0
    first = index[:, 0]
    last = index[np.arange(n_windows), valid.sum(1) - 1]
    cols = np.arange(n_features)
    for k, rows in enumerate(series):
        n = len(rows)
        here = np.flatnonzero(series_of[first] == k)
        if not here.size:
            continue
        o = obs[rows]
        pos = np.arange(n)[:, None]
        prev = np.maximum.accumulate(np.where(o, pos, -1), axis=0)  # last observed <= p
        nxt = np.minimum.accumulate(np.where(o, pos, n)[::-1], axis=0)[::-1]  # first >= p
        z = np.where(o, Z[rows], 0.0)
        prof = profile[rows] if profile is not None else np.zeros_like(z)
        dz = np.vstack([np.zeros((1, n_features)), np.cumsum(np.where(o, z - prof, 0.0), 0)])
        dc = np.vstack([np.zeros((1, n_features)), np.cumsum(o, 0, dtype=np.float64)])
        p0, p1 = position[first[here]], position[last[here]]
        left = np.where((p0 > 0)[:, None], prev[np.maximum(p0 - 1, 0)], -1)
        right = np.where((p1 < n - 1)[:, None], nxt[np.minimum(p1 + 1, n - 1)], n)
        has_left, has_right = left >= 0, right < n
        li, ri = np.clip(left, 0, n - 1), np.clip(right, 0, n - 1)
        f = n_features
        out[here, 0 * f:1 * f] = np.where(has_left, z[li, cols], 0.0)
        out[here, 1 * f:2 * f] = np.where(has_left, p0[:, None] - left, 0)
        out[here, 2 * f:3 * f] = np.where(has_right, z[ri, cols], 0.0)
        out[here, 3 * f:4 * f] = np.where(has_right, right - p1[:, None], 0)
        out[here, 4 * f:5 * f] = np.where(has_left, prof[li, cols], 0.0)
        out[here, 5 * f:6 * f] = np.where(has_right, prof[ri, cols], 0.0)
        lo, hi = np.clip(li - half, 0, n), li + 1  # rows li-half..li
        level = (dz[hi, cols] - dz[lo, cols]) / np.maximum(dc[hi, cols] - dc[lo, cols], 1.0)
        out[here, 6 * f:7 * f] = np.where(has_left, level, 0.0)
        lo, hi = ri, np.clip(ri + half + 1, 0, n)  # rows ri..ri+half
        level = (dz[hi, cols] - dz[lo, cols]) / np.maximum(dc[hi, cols] - dc[lo, cols], 1.0)
        out[here, 7 * f:8 * f] = np.where(has_right, level, 0.0)
    return out


def _windows(Z, obs, index, fill=None, fill_ok=None, profile=None, anchors=None,
             stream_profile=None):
    """Pack standardised values (0 where missing/padding), the mask, the cross-group fill,
    where it exists, the (local) seasonal profile, the edge anchors (repeated along the
    window) and the stream-wide profile as (n, W, 14F) (zeros for what is None)."""
    valid = index >= 0
    safe = np.where(valid, index, 0)
    values = np.where(obs, Z, 0.0)[safe]
    mask = obs[safe] & valid[..., None]
    values = np.where(mask, values, 0.0)
    zeros = np.zeros_like(values)
    parts = [values, mask.astype(values.dtype)]
    if fill is None:
        parts += [zeros, zeros]
    else:
        ok = fill_ok[safe] & valid[..., None]
        parts += [np.where(ok, fill[safe], 0.0), ok.astype(values.dtype)]
    parts.append(zeros if profile is None else np.where(valid[..., None], profile[safe], 0.0))
    n, w, f = values.shape
    parts.append(np.zeros((n, w, 8 * f)) if anchors is None
                 else np.broadcast_to(anchors[:, None, :], (n, w, 8 * f)))
    parts.append(zeros if stream_profile is None
                 else np.where(valid[..., None], stream_profile[safe], 0.0))
    return np.concatenate(parts, axis=-1)


def _phase(series, n_rows, period):
    """Position of every row in its series, modulo ``period``."""
    phase = np.zeros(n_rows, dtype=np.int64)
    for rows in series:
        phase[rows] = np.arange(len(rows)) % period
    return phase


def _moving_departure(Z, obs, rows, period):
    """Departure of the observed values of one series from their centred moving mean (one
    period wide, at least half of it observed); NaN elsewhere. Shape (len(rows), F)."""
    n_features = Z.shape[1]
    lo, hi = period // 2, period - period // 2
    z, o = np.where(obs[rows], Z[rows], 0.0), obs[rows].astype(np.float64)
    csum = np.vstack([np.zeros((1, n_features)), np.cumsum(z, 0)])
    ccount = np.vstack([np.zeros((1, n_features)), np.cumsum(o, 0)])
    t = np.arange(len(rows))
    start, stop = np.clip(t - lo, 0, len(rows)), np.clip(t + hi, 0, len(rows))
    n_in = ccount[stop] - ccount[start]
    local = (csum[stop] - csum[start]) / np.maximum(n_in, 1.0)
    use = o.astype(bool) & (n_in >= period / 2)
    return np.where(use, z - local, np.nan)


def _local_profile(Z, obs, series, period, table, n_cycles):
    """Seasonal profile of every row from the neighbouring cycles of its own series.

    At row ``t`` the departures from the moving mean (:func:`_moving_departure`) at
    ``t +- k period``, ``k = 1..n_cycles``, weighted ``1 / k``, are averaged together with the
    stream-wide ``table`` at the row's phase, which weighs as much as all the neighbours
    together (shrinkage: a cycle whose neighbours are all missing gets the table). The row
    itself never enters its own profile. Shape (n_rows, F).
    """
    n_rows, n_features = Z.shape
    out = np.zeros((n_rows, n_features))
    prior = sum(2.0 / k for k in range(1, n_cycles + 1))
    for rows in series:
        dep = _moving_departure(Z, obs, rows, period)
        n = len(rows)
        num = prior * table[np.arange(n) % period]
        den = np.full((n, n_features), prior)
        for k in range(1, n_cycles + 1):
            lag = k * period
            if lag >= n:
                break
            for src, dst in ((slice(0, n - lag), slice(lag, n)), (slice(lag, n),
                                                                  slice(0, n - lag))):
                d = dep[src]
                ok = ~np.isnan(d)
                num[dst] += np.where(ok, d / k, 0.0)
                den[dst] += ok / k
        out[rows] = num / den
    return out


def _seasonal_table(Z, obs, series, period):
    """Mean departure of each column from its centred moving mean (one period wide), per
    phase of the cycle: ndarray of shape (period, F), each column centred (0 without data).

    The moving mean of a row uses the observed values of its series within ``period`` rows
    (at least half of them observed); the table is the seasonal profile of the stream.
    """
    n_features = Z.shape[1]
    total = np.zeros((period, n_features))
    count = np.zeros((period, n_features))
    for rows in series:
        dep = _moving_departure(Z, obs, rows, period)
        use = ~np.isnan(dep)
        phase = np.arange(len(rows)) % period
        np.add.at(total, phase, np.where(use, dep, 0.0))
        np.add.at(count, phase, use)
    table = np.where(count > 0, total / np.maximum(count, 1.0), 0.0)
    return table - table.mean(0)


def _fill_inputs(Z, groups, cols, phase, period):
    """Predictors of the fill of the group ``cols``: the other groups' columns (NaN where
    missing) and, with a period, the cycle's phase as a sine and a cosine."""
    others = np.setdiff1d(np.arange(Z.shape[1]), cols)
    P = Z[:, others]
    if period:
        angle = 2.0 * np.pi * phase / period
        P = np.c_[P, np.sin(angle), np.cos(angle)]
    return P


def _boosted_cross_fill(Z, obs, groups, folds, phase=None, period=None, max_iter=100,
                        random_state=None):
    """Out-of-fold gradient-boosted regression of each column on the other groups.

    Each standardised column is regressed (scikit-learn's histogram gradient boosting, which
    takes missing predictors natively) on the columns of the other groups, plus the phase of
    the cycle when ``period`` is set, on the rows where it is observed. ``folds`` splits the
    rows into contiguous blocks; the fill of a row comes from the models fitted without its
    fold, so a value never predicts itself.

    Returns
    -------
    fill : ndarray of shape (n_rows, F)
        Out-of-fold fill, NaN where no model exists (a single group, or a column with too few
        observed rows).
    models : list of length F
        Per column ``None`` or the list of its fold models.
    """
    from sklearn.ensemble import HistGradientBoostingRegressor

    n_rows, n_features = Z.shape
    fill = np.full((n_rows, n_features), np.nan)
    models = [None] * n_features
    if len(groups) < 2:
        return fill, models
    Zn = np.where(obs, Z, np.nan)
    n_folds = int(folds.max()) + 1
    for cols in groups:
        P = _fill_inputs(Zn, groups, cols, phase, period)
        for j in cols:
            fitted = []
            for k in range(n_folds):
                train = obs[:, j] & (folds != k)
                if train.sum() < 2:  # too few rows: no fill for this column in any fold
                    fitted = None
                    fill[:, j] = np.nan
                    break
                model = HistGradientBoostingRegressor(max_iter=max_iter,
                                                      early_stopping=False,
                                                      random_state=random_state)
                fitted.append(model.fit(P[train], Z[train, j]))
                test = folds == k
                if test.any():
                    fill[test, j] = model.predict(P[test])
            models[j] = fitted
    return fill, models


def _predict_cross_fill(Z, obs, groups, models, phase=None, period=None):
    """Fill of every row from the fold models (their mean); NaN where a column has none."""
    n_rows, n_features = Z.shape
    fill = np.full((n_rows, n_features), np.nan)
    Zn = np.where(obs, Z, np.nan)
    for cols in groups:
        if all(models[j] is None for j in cols):
            continue
        P = _fill_inputs(Zn, groups, cols, phase, period)
        for j in cols:
            if models[j] is not None:
                fill[:, j] = np.mean([m.predict(P) for m in models[j]], axis=0)
    return fill


def _cross_group_fill(Z, obs, groups, alpha=1.0):
    """Ridge regression of each standardised column on the columns of the *other* groups.

    Missing predictors count as 0 (the mean); each column is fitted on the rows where it is
    observed. Returns (weight (F, F), zero inside a column's own group, intercept (F,)); both
    zero when there is a single group.
    """
    n_features = Z.shape[1]
    weight, intercept = np.zeros((n_features, n_features)), np.zeros(n_features)
    if len(groups) < 2:
        return weight, intercept
    Z0 = np.where(obs, Z, 0.0)
    for cols in groups:
        others = np.setdiff1d(np.arange(n_features), cols)
        for j in cols:
            rows = obs[:, j]
            A = Z0[rows][:, others]
            A_mean = A.mean(0)
            y = Z0[rows, j]
            Ac = A - A_mean
            coef = np.linalg.solve(Ac.T @ Ac + alpha * np.eye(len(others)),
                                   Ac.T @ (y - y.mean()))
            weight[j, others] = coef
            intercept[j] = y.mean() - A_mean @ coef
    return weight, intercept


def _check_1d(name, value, n_rows):
    value = np.asarray(value)
    if value.ndim != 1 or len(value) != n_rows:
        got = f"{len(value)} entries" if value.ndim == 1 else f"shape {value.shape}"
        raise ValueError(f"{name} has {got}, X has {n_rows} rows; pass one {name} per row of "
                         "X (a 1-d array).")
    return value


# ---------------------------------------------------------------------------------------------
# estimator
# ---------------------------------------------------------------------------------------------
class NeuroMambaImputer(OneToOneFeatureMixin, TransformerMixin, TorchEstimatorMixin,
                        BaseEstimator):
    """Impute sensor streams with a bidirectional selective state-space model and a spiking gate.

    Inspired by the abstract of NeuroMamba [1]_ and reconstructed from its description only (no
    paper text, equations or code are available; this is not the authors' implementation and
    the paper's nuScenes results are neither reproduced nor claimed). Two parts:

    * an "inertial" model: every feature group (a sensor or modality) is embedded per time step
      from its standardised values, its observed mask and a reconstruction context (below),
      passed through a bidirectional selective scan (Mamba [2]_:
      ``q_t = exp(Delta_t A) q_{t-1} + Delta_t B_t u_t``, ``y_t = C_t . q_t + D u_t``,
      input-dependent ``Delta, B, C``) and mixed across groups by multi-head attention at each
      time step, so that a group in outage borrows from the groups that are present;
      per-feature heads give a correction and a corruption logit;
    * a confidence gate: one leaky integrate-and-fire neuron per entry, driven over time by
      the current ``c = 2 theta sigmoid(logit)`` (``v_t = beta v_{t-1} + c_t - theta s_{t-1}``,
      ``s_t = H(v_t - theta)``, surrogate gradient ``1 / (1 + k |v - theta|)^2``), flags
      observed values that are implausible.

    The reconstruction is ``x_hat = base + correction``, the correction head starting at
    zero (this starting point is this package's choice; the abstract names only the two
    parts above). ``base`` blends two sources:

    * temporal: the linear interpolation of each feature from its nearest observed
      neighbours (leaving the entry itself out): inside the window, and with
      ``edge_anchors`` from the nearest observation before and after the window where the
      window has none on that side, so that a gap longer than the window is still bridged
      between its two ends. With ``seasonal_period`` it adds the departure of the seasonal
      profile from its own interpolation between the same anchors, with a learned weight
      ``sigmoid(a' + b' log(1 + distance to the nearest observation))``: inside a long gap
      the level is interpolated and the cycle comes from the profile. The profile of a row
      is local (``seasonal_cycles``): the mean departure of the observed values from their
      moving mean over one period at the same phase ``1..seasonal_cycles`` cycles before
      and after it (weights ``1/k``), shrunk towards the stream-wide profile (per phase of
      the cycle, over the whole stream), which weighs as much as all the neighbours
      together; the row itself never enters. With ``smooth_level`` the level across a gap
      is also taken from the deseasonalised values averaged over one period around each
      observation (not from the two readings at the gap's ends alone), blended in with a
      learned weight ``sigmoid(a'' + b'' log(1 + distance))``;
    * cross-group: a regression of each feature on the *other* groups' values at the same
      time step (and the phase of the cycle), fitted once on the stream: gradient-boosted
      trees by default (``cross_fill="boosting"``; scikit-learn's histogram gradient
      boosting, out of fold over contiguous blocks of two windows so that the fill of a
      training row never comes from a model fitted on that row's block) or a ridge
      (``"linear"``). It is used where at least one of its inputs is present (in training:
      where the corruption changed none of them), with a learned per-feature weight
      ``sigmoid(a + b log(1 + distance) + c share of its inputs present)``, so that short
      gaps trust the interpolation and long group outages the other sensors.

    The gate logit is a learned head plus ``w |x - interp| + b`` per feature: a value far
    from the interpolation of its neighbours is the plain signature of an impulse.

    Training is self-supervised on the stream: windows are corrupted (points, per-feature
    blocks and group segments hidden, impulses added to observed values) and the net learns to
    rebuild the hidden and impulsed entries. Genuine missing values are never targets. The
    output is ``x`` where observed and not flagged, ``x_hat`` elsewhere.

    Parameters
    ----------
    feature_groups : list of lists of int or str, default=None
        Partition of the columns into groups (indices, or names when ``X`` has column names).
        ``None`` makes one group per feature.
    window : int, default=48
        Window length ``W`` in rows (>= 1). With ``series_id=None`` it shrinks to the number
        of rows when longer.
    stride : int, default=None
        Step between window starts (>= 1); ``None`` is ``window // 2`` (at least 1).
    d_model : int, default=16
        Width of a group token.
    d_state : int, default=4
        State size of the selective scan.
    expand : int, default=2
        Inner width of the scan is ``expand * d_model``.
    d_conv : int, default=4
        Length of the causal depthwise convolution before the scan.
    n_layers : int, default=2
        Number of (scan, mixing) layers.
    n_mix_heads : int, default=2
        Attention heads of the cross-group mixing; must divide ``d_model``.
    bidirectional : bool, default=True
        Add the time-reversed scan (imputation is offline).
    mixing : bool, default=True
        Attention across groups; ``False`` is the "no mixing" ablation.
    gate : bool, default=True
        Use the LIF gate; ``False`` is the "no gate" ablation (nothing is ever flagged).
    lif_beta : float, default=0.9
        Leak ``beta`` of the LIF neuron, in [0, 1].
    lif_threshold : float, default=1.0
        Firing threshold ``theta`` (> 0).
    surrogate_slope : float, default=10.0
        Slope ``k`` of the surrogate gradient and of the sigmoid in the gate loss (> 0).
    lambda_gate : float, default=0.1
        Weight of the gate's binary cross-entropy (>= 0).
    lambda_observed : float, default=0.1
        Weight of the reconstruction error on clean observed entries (>= 0).
    rectify_observed : bool, default=False
        Replace observed values the gate flags by ``x_hat`` in :meth:`transform`. With the
        default ``False`` observed values are returned unchanged.
    corruption : dict, default=None
        Training corruption, keys ``p_point`` (0.1), ``p_block`` (0.2), ``p_group`` (0.1),
        ``p_device`` (0.1: all columns over ``W/8..W/2`` rows), ``p_impulse`` (0.02) and
        ``impulse_scale`` (5.0, in standard deviations; a training impulse is
        ``U[0.5, 1] x impulse_scale``); missing keys take these defaults.
    seasonal_period : int, default=None
        Period of a cycle of the stream in rows (e.g. 24 for hourly data with a daily cycle),
        at least 1. Adds the seasonal profile to the reconstruction context; useful when
        every sensor is down at once. The phase of a row is its position in its series
        modulo the period (so series should start at the same phase of the cycle); the
        cross-group fill also reads it. ``None`` uses no seasonal context.
    cross_fill : {"boosting", "linear"} or None, default="boosting"
        Regression of each feature on the other groups that the base moves towards in
        group outages: out-of-fold gradient-boosted trees (nonlinear, missing inputs
        allowed; about a dozen seconds per 10,000 rows and 12 columns on one core), a ridge
        on the standardised values (missing inputs count as the mean), or ``None`` (no
        cross-group fill; the attention still mixes the groups). Unused with a single group
        or ``mixing=False``. The boosted fill's folds are contiguous blocks of two windows
        (rows in series order), so a stream of at most two windows gets no boosted fill and
        one of at most four windows has two folds instead of three.
    edge_anchors : bool, default=True
        Let the interpolation of a window read the nearest observation of each column
        before and after the window (in the same series) where the window has none on that
        side; ``False`` keeps the context inside the window (the estimator's behaviour
        before this option: a gap longer than the window is then filled from one side, or
        from the mean where the window has no observation at all).
    seasonal_cycles : int, default=3
        With ``seasonal_period``: the cycles on each side of a row that give it its local
        seasonal profile (>= 0; ``0`` uses the stream-wide profile alone). In training, a row
        whose local profile read an entry of its window that the corruption hid or impulsed
        gets the stream-wide profile instead (the local one would leak the target). The guard
        is approximate: the one-period moving means behind the local profile and the edge
        anchors' profiles may still include a hidden entry with a weight of about
        ``1 / seasonal_period``.
    smooth_level : bool, default=True
        With ``seasonal_period``: add the smoothed level (the deseasonalised observations
        averaged over ``seasonal_period // 2`` rows on each side, interpolated across gaps)
        to the temporal estimate with a learned, distance-dependent weight, and as a context
        channel. Unused without a period.
    max_epochs : int, default=15
        Passes over the training windows. Few are needed because the reconstruction starts
        from the interpolation and the cross-group fill.
    batch_size : int, default=32
        Windows per mini-batch; ``-1`` is the full batch.
    lr : float, default=3e-3
        Learning rate.
    optimizer : {"adam", "adamw", "sgd", "rmsprop", "adamo"} or torch optimizer class, \
default="adamw"
        Optimizer (``"adamo"`` is :class:`sklearn_icml26.optim.AdamO`).
    optimizer_params : dict or None, default=None
        Extra keyword arguments of the optimizer, e.g. ``{"weight_decay": 0.05}``; keys must
        be arguments of the optimizer (``lr`` has its own parameter).
    precision : {"float32", "float64"}, default="float32"
        Floating point precision of the module.
    device : str, default="cpu"
        Torch device.
    random_state : int, RandomState instance or None, default=None
        Seeds initialisation, shuffling and the training corruption.
    verbose : int, default=0
        ``1`` prints skorch's epoch table.

    Attributes
    ----------
    n_features_in_ : int
        Number of columns ``F``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names, when ``X`` had string column names.
    feature_groups_ : list of ndarray of int
        The groups as column indices.
    window_ : int
        Window length used (``window``, or the number of rows when shorter).
    stride_ : int
        Stride used.
    mean_ : ndarray of shape (n_features_in_,)
        Mean of the observed values of each column.
    scale_ : ndarray of shape (n_features_in_,)
        Standard deviation of the observed values of each column (1 where they are all
        equal; such a column is imputed by its value, which is then its ``mean_``).
    net_ : skorch.NeuralNet
        The trained net (``net_.module_`` is the torch module).
    n_iter_ : int
        Number of epochs run; when the training loss became non-finite, the number of
        epochs up to the restored parameters (0: the initial ones).
    loss_curve_ : ndarray of shape (n_iter_,)
        Training loss per epoch.
    gate_rate_ : ndarray of shape (n_features_in_,)
        Share of the observed training entries the gate flags.
    seasonal_profile_ : ndarray of shape (seasonal_period, n_features_in_) or None
        Seasonal profile in standard deviations per phase of the cycle (``None`` without
        ``seasonal_period``).
    cross_fill_models_ : list or None
        With ``cross_fill="boosting"``: per column ``None`` or its fold models (transform
        uses their mean); ``None`` otherwise.
    reconstruction_error_ : ndarray of shape (n_features_in_,)
        Self-supervised MAE in standard deviations on the entries hidden by one fresh corruption
        of the training windows after the last epoch (NaN for a feature never hidden).

    Raises
    ------
    ValueError
        From :meth:`fit` if ``X`` contains inf, a column has no observed value,
        ``feature_groups`` does not partition the columns, ``series_id`` does not have one
        entry per row, ``window`` is longer than every series, or ``d_model`` is not divisible
        by ``n_mix_heads``.

    See Also
    --------
    sklearn.impute.IterativeImputer : Cross-feature regression imputation.
    sklearn.impute.KNNImputer : Nearest-neighbour imputation across rows.

    Notes
    -----
    Design choices of this package: the scan weights are shared by the groups (a learned group
    embedding tells them apart), the per-group embeddings and heads are separate, step sizes
    start log-uniform in [1e-3, 1e-1] and ``A_log = log(1..d_state)``; the gate loss is on the
    membrane potential (the hard spike has no gradient), with the impulsed entries weighted 5
    (a missed impulse costs more than a false flag); "occupancy" is read as "present and
    clean": an observed value more than ``0.6 impulse_scale`` away from the interpolation of
    its neighbours in the uncorrupted window may itself be an impulse, so it is neither a
    target nor a negative example of the gate. The five blend weights per feature are
    stored divided by 10 so that the optimiser settles them within a few epochs. The
    defaults are sized for a CPU (a 12-column, 9,000-row stream trains in about a minute and
    a half on one core). Overlapping windows are averaged
    with triangular weights at transform time (a row counts most where it is far from the
    window's edges), so the output at a row depends on rows up to ``window`` steps away (like
    any time-series filter).

    References
    ----------
    .. [1] "NeuroMamba", ICML 2026 (abstract only; no arXiv id available).
    .. [2] Gu, Dao. "Mamba: Linear-Time Sequence Modeling with Selective State Spaces",
       arXiv:2312.00752.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.imputation import NeuroMambaImputer
    >>> t = np.arange(120.0)
    >>> X = np.c_[np.sin(t / 5), np.sin(t / 5), np.cos(t / 5)]
    >>> X[40:50, 0] = np.nan
    >>> imp = NeuroMambaImputer(window=24, d_model=8, n_layers=1, max_epochs=3,
    ...                         random_state=0).fit(X)
    >>> out = imp.transform(X)
    >>> bool(np.isnan(out).any()), bool(np.array_equal(out[:40], X[:40]))
    (False, True)
    """

    _parameter_constraints = {
        **TorchEstimatorMixin._torch_parameter_constraints,
        "feature_groups": [list, tuple, None],
        "window": [Interval(Integral, 1, None, closed="left")],
        "stride": [Interval(Integral, 1, None, closed="left"), None],
        "d_model": [Interval(Integral, 1, None, closed="left")],
        "d_state": [Interval(Integral, 1, None, closed="left")],
        "expand": [Interval(Integral, 1, None, closed="left")],
        "d_conv": [Interval(Integral, 1, None, closed="left")],
        "n_layers": [Interval(Integral, 1, None, closed="left")],
        "n_mix_heads": [Interval(Integral, 1, None, closed="left")],
        "bidirectional": ["boolean"],
        "mixing": ["boolean"],
        "gate": ["boolean"],
        "lif_beta": [Interval(Real, 0, 1, closed="both")],
        "lif_threshold": [Interval(Real, 0, None, closed="neither")],
        "surrogate_slope": [Interval(Real, 0, None, closed="neither")],
        "lambda_gate": [Interval(Real, 0, None, closed="left")],
        "lambda_observed": [Interval(Real, 0, None, closed="left")],
        "rectify_observed": ["boolean"],
        "corruption": [dict, None],
        "seasonal_period": [Interval(Integral, 1, None, closed="left"), None],
        "cross_fill": [StrOptions({"boosting", "linear"}), None],
        "edge_anchors": ["boolean"],
        "seasonal_cycles": [Interval(Integral, 0, None, closed="left")],
        "smooth_level": ["boolean"],
    }

    def __init__(self, feature_groups=None, window=48, stride=None, d_model=16, d_state=4,
                 expand=2, d_conv=4, n_layers=2, n_mix_heads=2, bidirectional=True,
                 mixing=True, gate=True, lif_beta=0.9, lif_threshold=1.0,
                 surrogate_slope=10.0, lambda_gate=0.1, lambda_observed=0.1,
                 rectify_observed=False, corruption=None, seasonal_period=None,
                 cross_fill="boosting", edge_anchors=True, seasonal_cycles=3, smooth_level=True,
                 max_epochs=15, batch_size=32, lr=3e-3, optimizer="adamw",
                 optimizer_params=None, precision="float32", device="cpu", random_state=None,
                 verbose=0):
        self.feature_groups = feature_groups
        self.window = window
        self.stride = stride
        self.d_model = d_model
        self.d_state = d_state
        self.expand = expand
        self.d_conv = d_conv
        self.n_layers = n_layers
        self.n_mix_heads = n_mix_heads
        self.bidirectional = bidirectional
        self.mixing = mixing
        self.gate = gate
        self.lif_beta = lif_beta
        self.lif_threshold = lif_threshold
        self.surrogate_slope = surrogate_slope
        self.lambda_gate = lambda_gate
        self.lambda_observed = lambda_observed
        self.rectify_observed = rectify_observed
        self.corruption = corruption
        self.seasonal_period = seasonal_period
        self.cross_fill = cross_fill
        self.edge_anchors = edge_anchors
        self.seasonal_cycles = seasonal_cycles
        self.smooth_level = smooth_level
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.optimizer = optimizer
        self.optimizer_params = optimizer_params
        self.precision = precision
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    # -- test settings ----------------------------------------------------------------------------
    @classmethod
    def _get_test_params(cls):
        # the linear cross-group fill: boosted trees per column and fold would dominate the
        # many tiny fits of the common checks (the boosted fill has tests of its own)
        return [dict(d_model=8, d_state=4, n_layers=1, window=8, max_epochs=2, batch_size=-1,
                     precision="float64", cross_fill="linear", random_state=0)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    # -- adapter hooks ----------------------------------------------------------------------------
    def _build_module(self, n_features_in, n_outputs):
        return _NeuroMambaNet(
            self.feature_groups_, self.n_features_in_, self.d_model, self.d_state, self.expand,
            self.d_conv, self.n_layers, self.n_mix_heads, self.bidirectional, self.mixing,
            self.gate, self.lif_beta, self.lif_threshold, self.surrogate_slope,
            self._corruption, self.seasonal_period, self._cross, self.cross_fill,
            self.smooth_level)

    # the adapter stops at the first non-finite training loss, restores the last parameters
    # that still gave a finite loss and warns; it warns as well when the loss rises a
    # hundredfold over the fit (lr=1e4 used to leave a NaN model behind without a warning)
    _stop_on_nonfinite_loss = True

    def _build_criterion(self):
        return _NeuroMambaLoss(self.lambda_observed, self.lambda_gate, self.lif_threshold,
                               self.surrogate_slope, self.gate)

    # -- validation -------------------------------------------------------------------------------
    def _resolve_groups(self, n_features):
        if self.feature_groups is None:
            return [np.array([j]) for j in range(n_features)]
        names = getattr(self, "feature_names_in_", None)
        lookup = {str(n): j for j, n in enumerate(names)} if names is not None else {}
        groups = []
        for group in self.feature_groups:
            if isinstance(group, (str, numbers.Integral)):
                group = [group]
            cols = []
            for col in group:
                if isinstance(col, str):
                    if col not in lookup:
                        raise ValueError(
                            f"feature_groups names column {col!r}, which is not a column of X"
                            + (f" (columns: {list(lookup)})" if lookup else
                               " (X has no column names; use indices)") + ".")
                    cols.append(lookup[col])
                elif isinstance(col, numbers.Integral) and 0 <= int(col) < n_features:
                    cols.append(int(col))
                else:
                    raise ValueError(f"feature_groups holds {col!r}; expected column indices "
                                     f"in [0, {n_features}) or column names.")
            if not cols:
                raise ValueError("feature_groups holds an empty group; every group needs at "
                                 "least one column.")
            groups.append(np.array(cols, dtype=np.int64))
        counts = np.bincount(np.concatenate(groups), minlength=n_features)
        for j in range(n_features):
            if counts[j] != 1:
                what = "is missing" if counts[j] == 0 else "appears twice"
                raise ValueError(f"feature_groups must partition the {n_features} columns; "
                                 f"column {j}{self._colname(j)} {what}.")
        return groups

    def _colname(self, j):
        names = getattr(self, "feature_names_in_", None)
        return f" ({names[j]!r})" if names is not None else ""

    def _validate(self, X, reset):
        X = validate_data(self, X, reset=reset, dtype=[np.float64, np.float32],
                          ensure_all_finite="allow-nan", ensure_min_samples=1)
        inf = np.isinf(X)
        if inf.any():  # validate_data already rejects inf; kept for direct calls
            r, c = np.argwhere(inf)[0]
            raise ValueError(f"X contains inf (row {r}, column {c}); use NaN for missing "
                             "values.")
        return X

    def _series(self, series_id, n_rows):
        if series_id is None:
            return _series_rows(None, n_rows)
        return _series_rows(_check_1d("series_id", series_id, n_rows), n_rows)

    # -- fit ----------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, series_id=None):
        """Train the imputer self-supervised on the stream ``X``.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows in time order (stacked series when ``series_id`` is given), NaN where
            missing; every column needs at least one observed value.
        y : None
            Ignored.
        series_id : array-like of shape (n_rows,), default=None
            Series label of each row; windows never cross series. A fit parameter with
            metadata routing (``set_fit_request(series_id=True)``).

        Returns
        -------
        self : NeuroMambaImputer
            The fitted imputer.

        Raises
        ------
        ValueError
            See the class docstring.

        Warns
        -----
        ConvergenceWarning
            When the training loss becomes non-finite (training stops and the last
            parameters that still gave a finite loss are kept) or rises a hundredfold over
            the fit; lower ``lr``.
        """
        X = self._validate(X, reset=True)
        n_rows, n_features = X.shape
        obs = ~np.isnan(X)
        empty = np.flatnonzero(~obs.any(axis=0))
        if empty.size:
            j = int(empty[0])
            raise ValueError(f"column {j}{self._colname(j)} has no observed value; drop it "
                             "(X has only NaN there).")
        if self.d_model % self.n_mix_heads:
            raise ValueError(f"d_model={self.d_model} must be divisible by "
                             f"n_mix_heads={self.n_mix_heads}.")
        self.feature_groups_ = self._resolve_groups(n_features)
        series = self._series(series_id, n_rows)
        longest = max(len(s) for s in series)
        if series_id is not None and self.window > longest:
            raise ValueError(f"window={self.window} is longer than every series (the longest "
                             f"has {longest} rows); use window <= {longest}.")
        self.window_ = int(min(self.window, longest))
        self.stride_ = int(self.stride) if self.stride is not None else max(1, self.window_ // 2)
        unknown = set(self.corruption or {}) - set(_DEFAULT_CORRUPTION)
        if unknown:
            raise ValueError(f"corruption has unknown keys {sorted(unknown)}; expected some of "
                             f"{sorted(_DEFAULT_CORRUPTION)}.")
        self._corruption = {**_DEFAULT_CORRUPTION, **(self.corruption or {})}

        Xd = X.astype(np.float64)
        # moments of power-of-two pre-scaled columns (bitwise the plain ones on ordinary
        # data): at 1e-170 the squares of the plain std underflowed to 0 (scale 1, imputations
        # ~0.03 off by a factor 1e168), at 1e300 they overflowed to inf
        moments = [_robust_mean_std(Xd[obs[:, j], j]) for j in range(n_features)]
        mean = np.array([m[0] for m in moments])
        scale = np.array([m[1] for m in moments])
        # a column whose observed values are all equal: its value exactly as the mean (the
        # mean of many 0.1 is not 0.1, and its std of rounding errors, 3e-17, would turn them
        # into O(1) inputs) and scale 1; transform imputes the value itself there
        low = np.array([Xd[obs[:, j], j].min() for j in range(n_features)])
        self._constant_ = low == np.array([Xd[obs[:, j], j].max() for j in range(n_features)])
        self.mean_ = np.where(self._constant_, low, mean)
        self.scale_ = np.where((scale > 0) & ~self._constant_, scale, 1.0)
        Z = _standardize(Xd, self.mean_, self.scale_)
        index = _window_index(series, self.window_, self.stride_)
        period = self.seasonal_period
        phase = _phase(series, n_rows, period) if period else None
        self.seasonal_profile_ = _seasonal_table(Z, obs, series, period) if period else None
        stream_profile = self.seasonal_profile_[phase] if period else None
        profile = self._profile(Z, obs, series, phase)
        multi = self.mixing and len(self.feature_groups_) > 1
        self._cross = (_cross_group_fill(Z, obs, self.feature_groups_)
                       if multi and self.cross_fill == "linear" else None)
        fill = fill_ok = None
        self.cross_fill_models_ = None
        if multi and self.cross_fill == "boosting":
            # contiguous blocks of two windows in three folds: the fill of a training row
            # never comes from a model fitted on that row's block (a window that straddles
            # two blocks sees fills from models fitted on the other block's rows).
            # random_state=0: without early stopping the boosting draws no random numbers
            # below 200,000 rows (its binning subsample), so the estimator's seed is not needed
            order = np.concatenate(series)
            folds = np.empty(n_rows, dtype=np.int64)
            folds[order] = (np.arange(n_rows) // (2 * self.window_)) % _N_FILL_FOLDS
            fill, self.cross_fill_models_ = _boosted_cross_fill(
                Z, obs, self.feature_groups_, folds, phase, period, random_state=0)
            fill_ok = ~np.isnan(fill)
        anchors = (_edge_anchors(Z, obs, series, index, profile, (period or 0) // 2)
                   if self.edge_anchors else None)
        Wd = self._as_input(_windows(Z, obs, index, fill, fill_ok, profile, anchors,
                                     stream_profile))
        try:
            self._fit_net(Wd, np.zeros(len(Wd), dtype=Wd.dtype))
        finally:
            del self._corruption, self._cross
        # n_iter_ counts the epochs run or, when the non-finite loss guard stopped the
        # training, the epochs up to the parameters it restored: the curve keeps those
        self.loss_curve_ = np.array([row["train_loss"] for row in self.net_.history[:self.n_iter_]],
                                    dtype=np.float64)
        self._training_summaries(Wd, n_features)
        return self

    def _profile(self, Z, obs, series, phase):
        """Seasonal profile of every row: local (``seasonal_cycles`` > 0) or stream-wide."""
        period = self.seasonal_period
        if not period:
            return None
        if self.seasonal_cycles:
            return _local_profile(Z, obs, series, period, self.seasonal_profile_,
                                  self.seasonal_cycles)
        return self.seasonal_profile_[phase]

    def _training_summaries(self, Wd, n_features):
        module = self.net_.module_
        gen_state = torch.random.get_rng_state()
        try:
            torch.manual_seed(0)
            module.train()
            with torch.no_grad():
                x_hat, _, _, x, obs, hidden, _ = module(torch.as_tensor(Wd, device=self.device))
        finally:
            torch.random.set_rng_state(gen_state)
            module.eval()
        err = ((x_hat - x).abs() * hidden).sum((0, 1)).cpu().numpy()
        count = hidden.sum((0, 1)).cpu().numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            self.reconstruction_error_ = np.where(count > 0, err / np.maximum(count, 1), np.nan)
        _, spikes, obs_np = self._run(Wd)
        flagged = (spikes * obs_np).sum((0, 1))
        self.gate_rate_ = flagged / np.maximum(obs_np.sum((0, 1)), 1)

    # -- inference ----------------------------------------------------------------------------
    def _run(self, Wd, chunk=256):
        module = self.net_.module_
        module.eval()
        f = self.n_features_in_
        xs, ss = [], []
        with torch.no_grad():
            for start in range(0, len(Wd), chunk):
                x_hat, _, spikes, *_ = module(torch.as_tensor(Wd[start:start + chunk],
                                                             device=self.device))
                xs.append(x_hat.cpu().numpy().astype(np.float64))
                ss.append(spikes.cpu().numpy().astype(np.float64))
        return np.concatenate(xs), np.concatenate(ss), Wd[..., f:2 * f] > 0.5

    def _reconstruct(self, X, series_id):
        """Average of the window outputs per row: (x_hat in X's units, spike share)."""
        n_rows, n_features = X.shape
        obs = ~np.isnan(X)
        Z = _standardize(X.astype(np.float64), self.mean_, self.scale_)
        series = self._series(series_id, n_rows)
        window = min(self.window_, max(len(s) for s in series))
        index = _window_index(series, window, max(1, min(self.stride_, window)))
        period = self.seasonal_period
        phase = _phase(series, n_rows, period) if period else None
        stream_profile = self.seasonal_profile_[phase] if period else None
        profile = self._profile(Z, obs, series, phase)
        fill = fill_ok = None
        if self.cross_fill_models_ is not None:
            fill = _predict_cross_fill(Z, obs, self.feature_groups_, self.cross_fill_models_,
                                       phase, period)
            fill_ok = ~np.isnan(fill)
        anchors = (_edge_anchors(Z, obs, series, index, profile, (period or 0) // 2)
                   if self.edge_anchors else None)
        x_hat, spikes, _ = self._run(self._as_input(_windows(Z, obs, index, fill, fill_ok,
                                                             profile, anchors,
                                                             stream_profile)))
        valid = index >= 0
        rows = index[valid]
        # triangular weights: a row counts most in the windows where it is far from the edges
        # (an interpolation near a window edge has only one side)
        position = np.arange(index.shape[1])
        taper = np.minimum(position + 1, index.shape[1] - position).astype(np.float64)
        weight = np.broadcast_to(taper, index.shape)[valid][:, None]
        total = np.zeros((n_rows, n_features))
        spike_total = np.zeros((n_rows, n_features))
        np.add.at(total, rows, weight * x_hat[valid])
        np.add.at(spike_total, rows, weight * spikes[valid])
        count = np.bincount(rows, weights=weight[:, 0], minlength=n_rows)[:, None]
        x_hat = total / count * self.scale_ + self.mean_
        # a column constant on the training stream is imputed by its value, as the mean
        # imputation would (the network's output there is noise around 0: 6.994-7.003)
        constant = getattr(self, "_constant_", np.zeros(n_features, dtype=bool))
        x_hat[:, constant] = self.mean_[constant]
        return x_hat, spike_total / count, obs

    def transform(self, X, series_id=None):
        """Fill every missing value (and, with ``rectify_observed``, every flagged one).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows in time order, NaN where missing.
        series_id : array-like of shape (n_rows,), default=None
            Series label of each row (metadata routing: ``set_transform_request``).

        Returns
        -------
        X_out : ndarray of shape (n_rows, n_features)
            ``X`` with no NaN, of the dtype of ``X`` (float32 or float64). Observed entries
            are returned unchanged unless ``rectify_observed=True``.
        """
        check_is_fitted(self)
        X = self._validate(X, reset=False)
        x_hat, spike_share, obs = self._reconstruct(X, series_id)
        replace = ~obs
        if self.rectify_observed and self.gate:
            replace |= obs & (spike_share >= 0.5)
        out = X.copy()
        out[replace] = x_hat[replace].astype(X.dtype)
        if not np.all(np.isfinite(out)):
            raise FloatingPointError("the reconstruction is not finite; refit with a smaller "
                                     "lr or precision='float64'.")
        return out

    def fit_transform(self, X, y=None, series_id=None):
        """Fit on ``X`` and fill it.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows in time order, NaN where missing.
        y : None
            Ignored.
        series_id : array-like of shape (n_rows,), default=None
            Series label of each row, used by fit and transform.

        Returns
        -------
        X_out : ndarray of shape (n_rows, n_features)
            See :meth:`transform`.
        """
        return self.fit(X, y, series_id=series_id).transform(X, series_id=series_id)

    def predict_corruption(self, X, series_id=None):
        """Flag observed values the gate finds implausible (impulses, stuck readings).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows in time order, NaN where missing.
        series_id : array-like of shape (n_rows,), default=None
            Series label of each row.

        Returns
        -------
        flags : ndarray of shape (n_rows, n_features), dtype bool
            True where an observed entry spikes in windows holding at least half of its
            (edge-tapered) weight; always False for missing entries and when ``gate=False``.
        """
        check_is_fitted(self)
        X = self._validate(X, reset=False)
        _, spike_share, obs = self._reconstruct(X, series_id)
        return obs & (spike_share >= 0.5)
