"""The torch module and the loss of NeuroMambaImputer.

The module embeds every feature group per time step, runs the bidirectional selective scan
per group (:mod:`._mamba`), mixes the groups by attention, adds a correction to the starting
estimate (:mod:`._starting_estimate`) and drives the LIF gate (:mod:`._lif`); in training
mode it corrupts its input itself (:mod:`._corruption`).
"""

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ._corruption import _corrupt
from ._lif import _lif_gate
from ._mamba import _BiMamba
from ._starting_estimate import _box_mean, _interpolate

_GATE_POS_WEIGHT = 5.0
_BLEND_SCALE = 10.0


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
        return _corrupt(x, obs, self.corruption, self.group_of, self.n_groups)

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
