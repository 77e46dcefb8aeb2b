"""The training callback of MPFSurface: warm start, Laplacian and learning-rate schedules,
per-term history and the non-finite guard."""

import math

import numpy as np
import torch
from skorch.callbacks import Callback

from ..base import _rose_hundredfold, _use_whole_batches
from ._loss import _TERMS
from ._sampling import _OffSurfacePools


class _MPFTraining(Callback):
    """Warm start before training, Laplacian schedule per step, per-term history, NaN guard."""

    WARM_POOL_FACTOR = 8  # warm-start pool: 8 steps' worth of box points, queried once

    def __init__(self, total_steps, warm_start_iter, warm_batch, lr, laplacian_points,
                 schedule, laplacian_weight, lr_schedule, pool_data=None, compiled_step=None):
        self.pool_data = pool_data  # (points, sigma, n_off) of the off-surface pools or None
        self.compiled_step = compiled_step  # a _CompiledStep or None (eager steps)
        self.total_steps = total_steps
        self.warm_start_iter = warm_start_iter
        self.warm_batch = warm_batch
        self.lr = lr
        self.laplacian_points = laplacian_points
        self.schedule = schedule
        self.laplacian_weight = laplacian_weight
        self.lr_schedule = lr_schedule

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        _use_whole_batches(net)  # whole batches at once (see base._WholeBatches)
        self.step_ = 0
        self.stopped_ = False
        self.batch_terms_ = []
        module, crit = net.module_, net.criterion_
        self.criterion_ = crit
        module.distance_hook = crit.distance_async  # removed again in on_train_end
        # torch's multi-tensor Adam / AdamW update (the default only on accelerators): the
        # same arithmetic in fewer calls
        for group in net.optimizer_.param_groups:
            if (group.get("foreach", False) is None and not group.get("fused")
                    and isinstance(net.optimizer_, (torch.optim.Adam, torch.optim.AdamW))):
                group["foreach"] = True
        # the initial parameters: what a divergence at the first step falls back to (the
        # warm start itself can blow up at a large lr, to finite but useless values)
        initial = {k: v.detach().clone() for k, v in module.state_dict().items()}
        self.warm_failed_ = None
        if self.warm_start_iter > 0:
            first, last = self._warm_start(module, crit)
            if _rose_hundredfold(first, last):  # diverged (or NaN), not batch noise
                module.load_state_dict(initial)
                self.warm_failed_ = (first, last)
        module.pools = None
        if self.pool_data is not None:
            points, sigma, n_off = self.pool_data
            p = next(module.parameters())
            module.pools = _OffSurfacePools(
                torch.as_tensor(points, dtype=p.dtype, device=p.device),
                torch.as_tensor(sigma, dtype=p.dtype, device=p.device).reshape(-1, 1),
                module.near_scale, module.box_half, n_off,
                None if module.field == "sdf" else crit._distance_to_points,
                crit.distance_async if crit.query_threads else None)
        # compiled steps need the pools' fixed sample counts
        module.compiled_step = self.compiled_step if module.pools is not None else None
        # snapshot_: the parameters the next step's loss is computed with; validated_: the
        # last ones whose loss was finite (refreshed in place after every step). A step whose
        # loss is not finite condemns snapshot_ and restores validated_.
        self.live_ = list(module.state_dict(keep_vars=True).items())
        self.snapshot_ = {k: v.detach().clone() for k, v in self.live_}
        self.validated_ = {k: initial[k] for k in self.snapshot_}
        self.snapshot_list_ = list(self.snapshot_.values())
        self.validated_list_ = list(self.validated_.values())
        self.live_list_ = [v.detach() for _, v in self.live_]
        self.kept_step_ = None

    def on_train_end(self, net, X=None, y=None, **kwargs):
        self.cleanup(net.module_)

    def cleanup(self, module=None):
        """Stop the query threads and unhook them from the module (idempotent)."""
        if module is not None:
            pools = module.pools
            if pools is not None:
                self.pools_queried_ = pools.queried
                pools.close()
            module.pools = None  # training-only (holds the points and a thread's future)
            module.compiled_step = None
        crit = getattr(self, "criterion_", None)
        if crit is not None:
            crit.close()
        if module is not None:
            module.distance_hook = None

    def _warm_start(self, module, crit):
        """MSE of theta to the sphere SDF |x| - 0.45 and of r to d_X on uniform box points.

        The box points of every warm-start step come from one pool of
        ``WARM_POOL_FACTOR * warm_batch`` uniform points of the box whose distances are
        queried once (a step takes ``warm_batch`` of them at random): a warm start only has
        to give the fields a rough shape, and a query per step cost two thirds of it.
        """
        dtype = next(module.parameters()).dtype
        device = next(module.parameters()).device
        opt = torch.optim.Adam(module.parameters(), lr=5.0 * self.lr)  # our choice
        module.train()
        need_r = module.r_head is not None
        size = self.WARM_POOL_FACTOR * self.warm_batch
        pool = (torch.rand(size, module.n_features, dtype=dtype, device=device)
                * 2 - 1) * module.box_half
        pool_d = crit._distance_to_points(pool) if need_r else None
        self.warm_queried_ = size if need_r else 0
        losses = []
        for _ in range(self.warm_start_iter):
            pick = torch.randperm(size, device=device)[: self.warm_batch]
            x = pool[pick]
            out = module.fields(x)
            loss = 0.0
            if "theta" in out:
                loss = loss + ((out["theta"] - (x.norm(dim=1) - 0.45)) ** 2).mean()
            if "r" in out:
                loss = loss + ((out["r"] - pool_d[pick]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        # mean loss of the first and the last tenth of the steps (one transfer)
        k = max(1, len(losses) // 10)
        first, last = torch.stack(losses[:k]).mean(), torch.stack(losses[-k:]).mean()
        return float(first), float(last)

    def on_batch_begin(self, net, batch=None, training=False, **kwargs):
        if not training:
            return
        t = self.step_ / max(self.total_steps, 1)
        a, b = self.schedule
        if t < a:
            factor = 1.0
        elif t < b:
            factor = (b - t) / (b - a)
        else:
            factor = 0.0
        active = factor > 0 and self.laplacian_weight > 0
        net.module_.laplacian_points = self.laplacian_points if active else 0
        net.criterion_.laplacian_factor = factor
        net.module_.laplacian_factor = factor
        if self.lr_schedule == "cosine":  # lr -> lr / 100 by a half cosine over the steps
            lr = self.lr * (0.01 + 0.99 * 0.5 * (1.0 + math.cos(math.pi * t)))
            for group in net.optimizer_.param_groups:
                group["lr"] = lr
        self.step_ += 1

    def on_batch_end(self, net, batch=None, training=False, **kwargs):
        if not training:
            return
        crit, module = net.criterion_, net.module_
        params_finite = bool(torch.isfinite(torch.cat([v.reshape(-1)
                                                       for v in self.live_list_])).all())
        if not crit.last_finite or not params_finite:
            # a finite loss stepping to non-finite parameters keeps the ones it came from
            keep = self.snapshot_ if crit.last_finite else self.validated_
            module.load_state_dict(keep)
            self.kept_step_ = self.step_ - (1 if crit.last_finite else 2)
            self.stopped_ = True
            raise KeyboardInterrupt  # skorch ends the fit loop cleanly
        torch._foreach_copy_(self.validated_list_, self.snapshot_list_)
        torch._foreach_copy_(self.snapshot_list_, self.live_list_)
        self.batch_terms_.append([crit.last_terms.get(k, 0.0) for k in _TERMS])

    def on_epoch_end(self, net, **kwargs):
        if self.batch_terms_:
            means = np.mean(self.batch_terms_, axis=0)
            for key, value in zip(_TERMS, means, strict=True):
                net.history.record(f"train_{key}", float(value))
        self.batch_terms_ = []

