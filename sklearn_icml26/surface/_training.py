"""The training callback of MPFSurface: warm start, Laplacian and learning-rate schedules and
the per-term history.

Training runs on the package's adapter (:meth:`~sklearn_icml26.base.TorchEstimatorMixin._fit_net`),
which seeds torch (:func:`~sklearn_icml26.base.seeded_torch`), builds the optimizer
(:func:`~sklearn_icml26.base.make_optimizer`), guards against divergence
(:class:`~sklearn_icml26.base.DivergenceGuard`) and prints the progress lines
(:class:`~sklearn_icml26.base.EpochLogger`). The warm start is a second, shorter loop before
the first epoch; it runs inside the adapter's seeded block and is built from the same
primitives.
"""

import math

import numpy as np
import torch
from skorch.callbacks import Callback

from ..base import DivergenceGuard, EpochLogger, _rose_hundredfold
from ._loss import _TERMS
from ._sampling import _OffSurfacePools


class _MPFTraining(Callback):
    """Warm start before training, Laplacian and learning-rate schedules per step, per-term
    history per epoch, off-surface pools and threaded queries for the fit's duration.

    Parameters
    ----------
    total_steps : int
        Training steps of the fit (the schedules' length).
    warm_start_iter, warm_batch : int
        Steps and box points per step of the warm start.
    lr : float
        Peak learning rate of the cosine schedule.
    laplacian_points : int
        Near (and as many free) points of a step that carry the Laplacian term.
    schedule : tuple of float
        ``(a, b)`` of the Laplacian weight's schedule.
    laplacian_weight : float
        The Laplacian term's weight (0: never computed).
    lr_schedule : {"cosine", "constant"}
        Learning-rate schedule.
    warm_optimizer : callable
        ``warm_optimizer(params)`` -> the warm start's optimizer (the estimator's optimizer
        at ``5 lr``, from :func:`~sklearn_icml26.base.make_optimizer`); dropped after the fit.
    name : str
        The estimator's class name (warnings and progress lines).
    verbose : int
        The estimator's ``verbose`` (the warm start's progress lines).
    pool_data : tuple or None
        ``(points, sigma, n_off)`` of the off-surface pools, or None (a query per step).
    compiled_step : _CompiledStep or None
        The compiled training step, or None (eager steps).
    """

    WARM_POOL_FACTOR = 8  # warm-start pool: 8 steps' worth of box points, queried once

    def __init__(self, total_steps, warm_start_iter, warm_batch, lr, laplacian_points,
                 schedule, laplacian_weight, lr_schedule, warm_optimizer, name="MPFSurface",
                 verbose=0, pool_data=None, compiled_step=None):
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
        self.warm_optimizer = warm_optimizer
        self.name, self.verbose = name, verbose

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        self.step_ = 0
        self.batch_terms_ = []
        module, crit = net.module_, net.criterion_
        self.module_, self.criterion_ = module, crit
        module.distance_hook = crit.distance_async  # removed again in on_train_end
        self.warm_kept_ = None
        if self.warm_start_iter > 0:
            self.warm_kept_ = self._warm_start(module, crit)
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

    def on_train_end(self, net, X=None, y=None, **kwargs):
        self.cleanup()

    def cleanup(self):
        """Stop the query threads and unhook them from the module (idempotent; the estimator
        calls it after the fit, also when training raised)."""
        module = getattr(self, "module_", None)
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
        self.module_ = self.criterion_ = None  # the fitted net holds them already
        self.warm_optimizer = None  # the fitted net keeps this callback, not the estimator

    def _warm_start(self, module, crit):
        """MSE of theta to the sphere SDF |x| - 0.45 and of r to d_X on uniform box points.

        The box points of every warm-start step come from one pool of
        ``WARM_POOL_FACTOR * warm_batch`` uniform points of the box whose distances are
        queried once (a step takes ``warm_batch`` of them at random): a warm start only has
        to give the fields a rough shape, and a query per step cost two thirds of it.

        The loop is guarded by :class:`~sklearn_icml26.base.DivergenceGuard` (one checkpoint,
        at the end, with the mean loss of the last tenth of the steps): a non-finite loss
        stops it and restores the initial parameters, and a loss that rose a hundredfold
        warns; in both cases the warm start is discarded (the initial parameters are what
        training starts from), since finite but blown-up fields are no rough shape.

        Returns
        -------
        kept : bool
            Whether the warm-started parameters were kept.
        """
        p = next(module.parameters())
        dtype, device = p.dtype, p.device
        initial = {k: v.detach().clone() for k, v in module.state_dict().items()}
        opt = self.warm_optimizer(module.parameters())
        unit = "warm-start step"
        guard = DivergenceGuard(module, self.name, unit=unit)
        logger = EpochLogger(self.verbose, self.warm_start_iter, self.name, unit=unit)
        module.train()
        need_r = module.r_head is not None
        size = self.WARM_POOL_FACTOR * self.warm_batch
        pool = (torch.rand(size, module.n_features, dtype=dtype, device=device)
                * 2 - 1) * module.box_half
        pool_d = crit._distance_to_points(pool) if need_r else None
        self.warm_queried_ = size if need_r else 0
        losses = []
        for step in range(1, self.warm_start_iter + 1):
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
            value = float(loss.detach())
            if guard.observe(value):
                break
            losses.append(value)
            logger.log(step, train_loss=value)
        if not guard.stopped:  # the last tenth's mean is the rule's "last" (not batch noise)
            guard.checkpoint(len(losses), loss=float(np.mean(losses[-max(1, len(losses) // 10):])))
        rose = not guard.stopped and _rose_hundredfold(guard.first_loss_, guard.last_loss_)
        guard.finish()
        if guard.stopped or rose:
            module.load_state_dict(initial)
            return False
        return True

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
        if training:
            self.batch_terms_.append([net.criterion_.last_terms.get(k, 0.0) for k in _TERMS])

    def on_epoch_end(self, net, **kwargs):
        if self.batch_terms_:
            means = np.mean(self.batch_terms_, axis=0)
            for key, value in zip(_TERMS, means, strict=True):
                net.history.record(f"train_{key}", float(value))
        self.batch_terms_ = []
