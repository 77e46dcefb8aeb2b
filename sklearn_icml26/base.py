"""The one adapter between scikit-learn estimators and torch models, and the training-loop
primitives every torch estimator of the package shares.

Two kinds of torch estimators live in the package, and both use this module:

* **adapter estimators** mix :class:`TorchEstimatorMixin` into a plain
  :class:`sklearn.base.BaseEstimator` and let skorch run the training loop;
* **custom-loop estimators** (a loop skorch cannot express) write their own loop but build it
  from the same primitives: :func:`seeded_torch`, :func:`make_optimizer`,
  :class:`DivergenceGuard` and :class:`EpochLogger`.

Writing an adapter estimator
----------------------------
The estimator *has* a skorch net (``net_``), it is not one: ``__init__`` stores
hyperparameters only; ``fit`` validates the data with
:func:`sklearn.utils.validation.validate_data`, computes whatever the module needs and calls
:meth:`TorchEstimatorMixin._fit_net`, which calls three hooks of the estimator::

    _build_module(self, n_features_in, n_outputs, context)  -> torch.nn.Module
    _build_criterion(self, context)  -> torch.nn.Module, forward(y_pred, y_true) gives one
                                        loss per sample (shape (batch,) or (batch, ...))
    _build_callbacks(self, context)  -> list of skorch callbacks (optional, default [])

``context`` is the :class:`FitContext` the estimator passed to ``_fit_net`` (an empty one if
it passed none): fit-time data for the hooks (a patch size resolved from ``X``, a corruption
schedule, ...) travels there, never through attributes set on the estimator before
``_fit_net`` and deleted after it. Fitted state the estimator keeps ends with ``_``.

``_fit_net`` then, in this order:

1. draws the validation split when the estimator has ``early_stopping=True`` (seeded from
   ``random_state``);
2. seeds torch through :func:`seeded_torch` (the caller's torch RNG is left untouched);
3. builds the module (cast to ``precision``), the criterion and the optimizer through
   :func:`make_optimizer` (``optimizer``, ``optimizer_params``, ``lr``, ``weight_decay`` and
   the fused/foreach policy);
4. trains with skorch; the loss is the ``sample_weight``-weighted mean of the per-sample
   losses, so integer weights equal repeated samples. The one divergence policy
   (:class:`DivergenceGuard`) is always on, validation early stopping runs when the estimator
   asks for it, and :class:`EpochLogger` prints the progress lines;
5. sets ``net_``, ``n_iter_``, ``loss_curve_`` and, for an estimator with an
   ``early_stopping`` parameter, ``validation_loss_curve_`` and ``best_loss_``.

``predict``/``transform`` call :meth:`TorchEstimatorMixin._forward_numpy`. Three complete
examples (regressor, classifier, transformer) are in :mod:`sklearn_icml26.utils._testing`.

Knobs read with ``getattr`` (an estimator declares the parameter to expose it):
``weight_decay`` (default: the optimizer's own), ``early_stopping`` (False),
``validation_fraction`` (0.1), ``n_iter_no_change`` (10), ``tol`` (1e-4). Class attribute
``_whole_batches = True`` makes the net cut mini-batches by one index into whole tensors
(:class:`_WholeBatches`) instead of skorch's sample-by-sample ``DataLoader``; use it when the
inputs are plain arrays (it is faster on small networks; seeded shuffles differ).

Parameters: merge ``TorchEstimatorMixin._torch_parameter_constraints`` (and, for the optional
knobs, ``_early_stopping_constraints``) into ``_parameter_constraints``, spell every parameter
as in the naming table of CONTRIBUTING.md and document the shared ones with
``@Substitution(**_torch_docstrings)`` from :mod:`sklearn_icml26.utils._docstrings`.

Writing a custom loop
---------------------
::

    with seeded_torch(self.random_state, self.device):
        module = build(...).to(dtype)
        optimizer = make_optimizer(self, module.parameters())
        guard = DivergenceGuard(module, type(self).__name__)
        logger = EpochLogger(self.verbose, self.max_epochs, type(self).__name__)
        for epoch in range(1, self.max_epochs + 1):
            for xb, yb in batches():
                optimizer.zero_grad()
                loss = criterion(module(xb), yb)
                loss.backward()
                optimizer.step()
                if guard.observe(loss):
                    break
            if guard.stopped or guard.checkpoint(epoch, loss=epoch_loss):
                break
            logger.log(epoch, train_loss=epoch_loss)
        self.n_iter_ = guard.finish(final_loss=loss_of_the_final_state)
    self.module_ = module

See :class:`DivergenceGuard` for what each call does. ``tests/test_divergence.py`` fits every
torch estimator of the package at ``lr=1e6`` and checks the one policy (a
``ConvergenceWarning`` with the guard's message, finite output, no exception).
"""

import contextlib
import copy
import functools
import importlib
import inspect
import math
import threading
import time
import types
import warnings
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from skorch import NeuralNet
from skorch.callbacks import Callback

from ._compat import Interval, Options, StrOptions, _check_sample_weight
from .utils._stacklevel import _external_stacklevel  # the user's line (torch-free)

__all__ = [
    "DivergenceGuard",
    "EpochLogger",
    "FitContext",
    "TorchEstimatorMixin",
    "make_optimizer",
    "seeded_torch",
]

# torch's global RNG (module initialisation, shuffling, dropout, noise draws) is shared by all
# threads: two fits seeded in parallel threads would interleave their draws and lose
# determinism. Seeded fits therefore hold this lock; process-based joblib backends (loky, dask
# worker processes) still run fits in parallel.
_TORCH_RNG_LOCK = threading.RLock()

_OPTIMIZERS = {"adam": "Adam", "adamw": "AdamW", "sgd": "SGD", "rmsprop": "RMSprop",
               "adamo": "AdamO"}
# names of torch.optim classes; the others live in the package (imported when first used)
_PACKAGE_OPTIMIZERS = {"adamo": "sklearn_icml26.optim"}
# keyword arguments the adapter sets itself (``lr``) or that skorch reserves
_RESERVED_OPTIMIZER_KEYS = {"params": "the module's parameters are passed by the adapter",
                            "lr": "use the estimator's lr parameter",
                            "param_groups": "parameter groups are set by the estimator"}
_DTYPES = {"float32": np.float32, "float64": np.float64}

# the two divergence messages of the package (DivergenceGuard issues them); tests match this
_NONFINITE_MESSAGE = (
    "{name}: the training loss became non-finite in {unit} {stopped}; training stopped and "
    "the last parameters that gave a finite loss ({kept}) were restored. Lower lr or check "
    "the input scaling.")
_HUNDREDFOLD_MESSAGE = (
    "{name}: the training loss rose a hundredfold or more over the fit (first step "
    "{first:.3g}, last {unit} {last:.3g}); the model has probably diverged. Lower lr.")
_DIVERGENCE_PATTERN = r"the training loss (became non-finite in|rose a hundredfold or more)"


class FitContext(types.SimpleNamespace):
    """Fit-time data an estimator hands to its adapter hooks.

    A plain namespace: ``FitContext(patch=(2, 2), curves=("snake",))`` has the attributes
    ``patch`` and ``curves``. The estimator builds it in ``fit``, passes it as
    ``_fit_net(..., context=ctx)`` and reads it in ``_build_module``, ``_build_criterion``
    and ``_build_callbacks``. It lives for one fit and is not kept on the estimator.

    Parameters
    ----------
    **kwargs : dict
        The attributes.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)


@contextlib.contextmanager
def seeded_torch(random_state, device="cpu"):
    """Seed torch from ``random_state`` for the block, leaving the caller's RNG untouched.

    Holds the package's torch-RNG lock (threads of a joblib threading backend cannot
    interleave draws), forks torch's global RNG (and that of the CUDA device ``device``, if
    it is one) and seeds it with one integer drawn from ``random_state``. Every torch fit of
    the package runs inside it, so the same ``random_state`` gives the same model.

    Parameters
    ----------
    random_state : int, RandomState instance or None
        As everywhere in scikit-learn; a ``RandomState`` is advanced by one draw.
    device : str or torch.device, default="cpu"
        The device that trains.

    Yields
    ------
    seed : int
        The seed given to :func:`torch.manual_seed` (in ``[0, 2**31 - 1)``).
    """
    seed = int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
    device = torch.device(device)
    # fork (and afterwards restore) the generator of the CUDA device that trains, if any
    fork_devices = [device.index or 0] if device.type == "cuda" else []
    with _TORCH_RNG_LOCK, torch.random.fork_rng(devices=fork_devices):
        torch.manual_seed(seed)
        yield seed


# ---------------------------------------------------------------------------------------------
# optimizers
# ---------------------------------------------------------------------------------------------
def _resolve_optimizer(optimizer):
    """The optimizer class named by ``optimizer`` (a name of ``_OPTIMIZERS`` or a class)."""
    if isinstance(optimizer, str):
        if optimizer not in _OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {sorted(_OPTIMIZERS)} or a torch "
                             f"optimizer class; got {optimizer!r}.")
        if optimizer in _PACKAGE_OPTIMIZERS:
            module = importlib.import_module(_PACKAGE_OPTIMIZERS[optimizer])
            return getattr(module, _OPTIMIZERS[optimizer])
        return getattr(torch.optim, _OPTIMIZERS[optimizer])
    return optimizer


def _optimizer_name(optimizer_class):
    return getattr(optimizer_class, "__name__",
                   getattr(getattr(optimizer_class, "func", None), "__name__",
                           repr(optimizer_class)))


def _accepted_arguments(optimizer_class):
    """Keyword arguments of the optimizer, or ``None`` when it takes ``**kwargs`` or has no
    signature."""
    try:
        signature = inspect.signature(optimizer_class)
    except (TypeError, ValueError):  # builtins without a signature: let torch decide
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()):
        return None
    return [k for k, p in signature.parameters.items()
            if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          inspect.Parameter.KEYWORD_ONLY)]


def _check_optimizer_params(params, optimizer_class):
    """Validated ``optimizer_params`` (``None`` gives ``{}``).

    Raises a ``TypeError`` when it is not a dict of str keys and a ``ValueError`` when a key
    is reserved or is not an argument of the optimizer.
    """
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise TypeError("optimizer_params must be a dict of optimizer keyword arguments or "
                        f"None; got {type(params).__name__} {params!r}.")
    accepted = _accepted_arguments(optimizer_class)
    if accepted is not None:
        accepted = [k for k in accepted if k not in _RESERVED_OPTIMIZER_KEYS]
    for key in params:
        if not isinstance(key, str):
            raise TypeError(f"optimizer_params keys must be str; got {key!r}.")
        if key in _RESERVED_OPTIMIZER_KEYS:
            raise ValueError(f"optimizer_params may not set {key!r}: "
                             f"{_RESERVED_OPTIMIZER_KEYS[key]}.")
        if accepted is not None and key not in accepted:
            raise ValueError(f"optimizer_params key {key!r} is not an argument of the "
                             f"optimizer {_optimizer_name(optimizer_class)}; it accepts "
                             f"{sorted(accepted)}.")
    return dict(params)


def _optimizer_spec(estimator):
    """``(optimizer_class, kwargs)`` from the estimator's ``optimizer``, ``lr``,
    ``weight_decay`` and ``optimizer_params`` (each read with ``getattr``)."""
    optimizer_class = _resolve_optimizer(getattr(estimator, "optimizer", "adam"))
    kwargs = {}
    lr = getattr(estimator, "lr", None)
    if lr is not None:
        kwargs["lr"] = float(lr)
    if not getattr(estimator, "_fused_optimizer", True) and optimizer_class in tuple(
            getattr(torch.optim, n) for n in _FUSED):
        kwargs["fused"] = False  # the estimator opts out of the fused kernel
    weight_decay = getattr(estimator, "weight_decay", None)
    if weight_decay is not None:
        accepted = _accepted_arguments(optimizer_class)
        if weight_decay > 0 or accepted is None or "weight_decay" in accepted:
            kwargs["weight_decay"] = float(weight_decay)
    kwargs.update(_check_optimizer_params(getattr(estimator, "optimizer_params", None),
                                          optimizer_class))
    return optimizer_class, kwargs


# torch optimizers whose fused kernel the adapter turns on (same update, one kernel)
_FUSED = ("Adam", "AdamW")
_FUSED_DEVICES = ("cpu", "cuda")
_FUSED_CONFLICTS = ("fused", "foreach", "differentiable")


def _with_fused_policy(optimizer_class, params, kwargs):
    """Add ``fused=True`` where the policy of :func:`make_optimizer` allows it."""
    if (optimizer_class in tuple(getattr(torch.optim, n) for n in _FUSED)
            and not set(kwargs) & set(_FUSED_CONFLICTS)):
        tensors = [p for group in params for p in
                   (group["params"] if isinstance(group, dict) else [group])]
        tensors = [t[1] if isinstance(t, tuple) else t for t in tensors]
        if tensors and all(t.device.type in _FUSED_DEVICES and t.is_floating_point()
                           for t in tensors):
            kwargs = {**kwargs, "fused": True}
    return kwargs


def _instantiate_optimizer(optimizer_class, params, kwargs):
    params = list(params)
    if params and isinstance(params[0], tuple):  # skorch passes (name, parameter) pairs
        params = [p for _, p in params]
    kwargs = _with_fused_policy(optimizer_class, params, kwargs)
    return optimizer_class(params, **kwargs)


def make_optimizer(estimator, params, **overrides):
    """The torch optimizer the estimator's parameters name, over ``params``.

    Resolution, each read with ``getattr`` (an estimator without the parameter gets the
    default in brackets):

    * ``optimizer`` (``"adam"``): ``"adam"``, ``"adamw"``, ``"sgd"``, ``"rmsprop"`` (the
      :mod:`torch.optim` classes), ``"adamo"`` (:class:`sklearn_icml26.optim.AdamO`) or an
      optimizer class;
    * ``lr`` (the optimizer's default);
    * ``weight_decay`` (the optimizer's default): passed when the optimizer accepts it;
    * ``optimizer_params`` (``None``): extra keyword arguments, validated against the
      optimizer's signature; they override ``weight_decay`` when they name it;
    * ``overrides``: keyword arguments of the caller, applied last.

    Fused/foreach policy: :class:`torch.optim.Adam` and :class:`torch.optim.AdamW` run
    torch's fused kernel (``fused=True``: the same update as the per-tensor loop, one kernel
    for all tensors) when every parameter is a real floating tensor on the CPU or a CUDA
    device and neither ``fused``, ``foreach`` nor ``differentiable`` was set by
    ``optimizer_params`` or ``overrides``. Other optimizers and devices keep torch's default
    (``foreach`` on CUDA). An estimator class whose training is sensitive to the kernel's
    rounding sets ``_fused_optimizer = False`` and keeps the per-tensor update
    (:class:`~sklearn_icml26.lineage.HDTreeLineage`); ``optimizer_params={"fused": ...}``
    overrides either.

    The adapter's skorch net builds its optimizer through the same resolution, so an
    adapter estimator and a custom loop with the same parameters train with the same
    optimizer.

    Parameters
    ----------
    estimator : estimator
        Reads ``optimizer``, ``lr``, ``weight_decay`` and ``optimizer_params``.
    params : iterable of torch.Tensor or of dict
        Parameters (or parameter groups) to optimise.
    **overrides : dict
        Keyword arguments of the optimizer that take precedence (e.g. ``lr=0.1``).

    Returns
    -------
    optimizer : torch.optim.Optimizer
        The optimizer.

    Raises
    ------
    TypeError
        If ``optimizer_params`` is not a dict of str keys.
    ValueError
        If ``optimizer`` is an unknown name, or a key of ``optimizer_params`` is reserved
        (``lr``, ``params``) or is not an argument of the optimizer.
    """
    optimizer_class, kwargs = _optimizer_spec(estimator)
    return _instantiate_optimizer(optimizer_class, params, {**kwargs, **overrides})


class _OptimizerFactory:
    """The ``optimizer`` skorch calls: :func:`make_optimizer`'s resolution, frozen at fit.

    skorch calls it as ``factory(named_parameters, lr=net.lr, **optimizer__kwargs)``.
    """

    def __init__(self, optimizer_class, kwargs):
        self.optimizer_class, self.kwargs = optimizer_class, kwargs
        self.__name__ = _optimizer_name(optimizer_class)

    def __call__(self, params, **overrides):
        return _instantiate_optimizer(self.optimizer_class, params,
                                      {**self.kwargs, **overrides})


# ---------------------------------------------------------------------------------------------
# the one divergence policy
# ---------------------------------------------------------------------------------------------
def _rose_hundredfold(first, last):
    """Whether a training loss ended a hundredfold or more above where it started.

    The package's one rule for a finite divergence (used by :class:`DivergenceGuard`).
    ``first`` must be a positive loss; a first loss of 0 (or none) is no reference and never
    counts; a NaN ``last`` counts.
    """
    if first is None or last is None or not first > 0:
        return False
    return not last < 100.0 * first


def _as_float(loss):
    if isinstance(loss, torch.Tensor):
        loss = loss.detach()
        return float(loss.mean()) if loss.numel() else float("nan")
    return float(np.mean(loss))


def _all_finite(tensors):
    return all(bool(torch.isfinite(t).all()) for t in tensors
               if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex()))


class DivergenceGuard:
    """The package's one policy for a training run that blows up.

    *Non-finite*: training stops at the first non-finite training loss (or non-finite
    parameters at an epoch end); the modules get back the last state that still gave a finite
    loss, and :meth:`finish` issues one :class:`~sklearn.exceptions.ConvergenceWarning`
    (``"<name>: the training loss became non-finite in epoch <e>; ... were restored"``).
    *Finite divergence*: a run whose last epoch loss ends a hundredfold or more above its first
    positive step loss warns (``"<name>: the training loss rose a hundredfold or more over the
    fit ..."``) and keeps its state. Never an exception, never a silent NaN model.

    Which state counts as finite: the parameters at an epoch end are only *pending* after
    :meth:`checkpoint`; the next finite step loss (computed with exactly those parameters)
    validates them. Parameters can be finite yet so large that the next forward overflows,
    so the state ending the epoch before the failure is not restored unchecked. Before any
    validated checkpoint the initial state (taken when the guard is built) is the one kept.

    Methods, in the order a loop calls them:

    ``observe(loss)``
        After each optimizer step, with the loss of that step (computed before the step).
        Returns True when training must stop now (the state is already restored).
    ``checkpoint(epoch=None, loss=None)``
        At the end of each epoch (or every k steps): the state becomes pending; ``loss`` is
        the epoch's training loss, the one the hundredfold rule compares with the first step
        loss. Returns True when the parameters are non-finite (state restored: stop).
    ``finish(final_loss=None)``
        Once, after the loop. ``final_loss``, the loss of the final state on some batch (no
        step after it), validates the last checkpoint; without it that checkpoint is kept as
        long as its parameters are finite. Issues the warning and returns the number of
        epochs kept (``n_iter_``).

    A custom loop::

        guard = DivergenceGuard(module, type(self).__name__)
        for epoch in range(1, self.max_epochs + 1):
            for xb, yb in batches:
                optimizer.zero_grad()
                loss = criterion(module(xb), yb)
                loss.backward()
                optimizer.step()
                if guard.observe(loss):
                    break
            if guard.stopped or guard.checkpoint(epoch, loss=epoch_loss):
                break
        with torch.no_grad():
            final = criterion(module(xb), yb)
        self.n_iter_ = guard.finish(final_loss=final)

    Parameters
    ----------
    modules : torch.nn.Module or sequence of torch.nn.Module
        Everything whose state the guard snapshots and restores (parameters and buffers).
    name : str
        Names the model in the warning (usually the estimator's class name).
    unit : str, default="epoch"
        What a checkpoint counts, in the message (``"step"`` for a loop of sampled batches).

    Attributes
    ----------
    stopped : bool
        Whether the guard stopped training.
    stopped_epoch_ : int or None
        The epoch (1-based) in which training diverged; None when it did not.
    good_epoch_ : int
        The epoch whose end state is kept (0: the initial state).
    first_loss_ : float or None
        The first positive step loss (the reference of the hundredfold rule).
    last_loss_ : float or None
        The last checkpoint loss (or, without one, the last step loss).
    """

    def __init__(self, modules, name, unit="epoch"):
        if isinstance(modules, torch.nn.Module):
            modules = [modules]
        self.modules = list(modules)
        self.name, self.unit = name, unit
        self.stopped, self.stopped_epoch_, self.good_epoch_ = False, None, 0
        self.first_loss_ = None
        self._last_step_loss = self._last_epoch_loss = None
        self._epoch, self._n_steps = 0, 0
        self._good, self._pending = self._finite_state(), None

    # -- state copies --
    def _finite_state(self):
        """A copy of the modules' state, or ``None`` when a floating tensor is not finite."""
        state = [{k: v.detach().clone() for k, v in m.state_dict().items()}
                 for m in self.modules]
        return state if all(_all_finite(s.values()) for s in state) else None

    def _stop(self, epoch):
        if self._good is not None:
            for module, state in zip(self.modules, self._good, strict=True):
                module.load_state_dict(state)
        self.stopped, self.stopped_epoch_, self._pending = True, epoch, None
        return True

    # -- the loop's calls --
    def observe(self, loss):
        """Record one step's loss; True when training must stop (state restored).

        Parameters
        ----------
        loss : torch.Tensor or float
            The step's training loss (its mean when it has several elements).

        Returns
        -------
        stop : bool
            True at a non-finite loss (and after the guard has stopped).
        """
        if self.stopped:
            return True
        value = _as_float(loss)
        if not math.isfinite(value):
            return self._stop(self._epoch + 1)
        self._n_steps += 1
        if self.first_loss_ is None and value > 0:  # a batch whose samples all weigh 0 has
            self.first_loss_ = value  # loss 0: no reference
        if self._pending is not None:  # this loss was computed with the pending state
            self._good, self.good_epoch_, self._pending = self._pending, self._epoch, None
        self._last_step_loss = value
        return False

    @property
    def last_loss_(self):
        return (self._last_epoch_loss if self._last_epoch_loss is not None
                else self._last_step_loss)

    def checkpoint(self, epoch=None, loss=None):
        """Mark the end of an epoch: its state becomes pending.

        Parameters
        ----------
        epoch : int, default=None
            The 1-based number of the epoch that ended; None counts checkpoints.
        loss : torch.Tensor or float, default=None
            The epoch's training loss, the ``last`` of the hundredfold rule.

        Returns
        -------
        stop : bool
            True when a parameter is non-finite (state restored) or the guard has stopped.
        """
        if self.stopped:
            return True
        self._epoch = self._epoch + 1 if epoch is None else int(epoch)
        if loss is not None:
            self._last_epoch_loss = _as_float(loss)
        self._pending = self._finite_state()
        if self._pending is None:
            return self._stop(self._epoch)
        return False

    def finish(self, final_loss=None):
        """Close the run: validate the last state, warn if it diverged, return ``n_iter_``.

        Parameters
        ----------
        final_loss : torch.Tensor or float, default=None
            Loss of the final state on a batch (evaluated after the last step); a
            non-finite one restores the last validated state.

        Returns
        -------
        n_iter : int
            Epochs kept: those run, or after a divergence those up to the restored state
            (0: the initial one). A loop that never called :meth:`checkpoint` gets its
            number of steps.
        """
        if not self.stopped and self._pending is not None:
            if final_loss is not None and not math.isfinite(_as_float(final_loss)):
                self._stop(self._epoch)
            else:
                self._good, self.good_epoch_ = self._pending, self._epoch
        if self.stopped:
            kept = (f"those after {self.unit} {self.good_epoch_}" if self.good_epoch_
                    else "the initial ones")
            warnings.warn(_NONFINITE_MESSAGE.format(
                name=self.name, unit=self.unit, stopped=self.stopped_epoch_, kept=kept),
                ConvergenceWarning, stacklevel=_external_stacklevel())
            n_iter = self.good_epoch_
        else:
            if _rose_hundredfold(self.first_loss_, self.last_loss_):
                warnings.warn(_HUNDREDFOLD_MESSAGE.format(
                    name=self.name, unit=self.unit, first=self.first_loss_,
                    last=self.last_loss_), ConvergenceWarning,
                    stacklevel=_external_stacklevel())
            n_iter = self._epoch if self._epoch else self._n_steps
        self._good = self._pending = None  # drop the state copies
        return n_iter


# ---------------------------------------------------------------------------------------------
# the one verbose style
# ---------------------------------------------------------------------------------------------
def _format_value(value):
    return f"{value:.4g}" if isinstance(value, (float, np.floating)) else str(value)


class EpochLogger:
    """The package's one verbose style: one plain line per logged epoch.

    ``verbose=0`` prints nothing; ``1`` prints the first epoch, every
    ``ceil(max_epochs / 20)``-th and the last (about 20 lines); ``2`` or more prints every
    epoch. A line reads ``Name  epoch 12/300  train_loss 0.01234  valid_loss 0.02  1.3s``
    (values with four significant digits, the seconds the epoch took), written to standard
    output as plain text without colour codes, in a terminal and in a log file alike.

    Parameters
    ----------
    verbose : int
        Verbosity, as above.
    max_epochs : int
        The last epoch (always printed) and the denominator of each line.
    name : str or None, default=None
        Printed first on every line (usually the estimator's class name).
    unit : str, default="epoch"
        What is counted (``"step"`` for a loop of sampled batches).

    Examples
    --------
    >>> from sklearn_icml26.base import EpochLogger
    >>> logger = EpochLogger(verbose=1, max_epochs=3, name="Net")
    >>> logger.log(1, train_loss=0.5, dur=0.25)
    Net  epoch 1/3  train_loss 0.5  0.25s
    """

    def __init__(self, verbose, max_epochs, name=None, unit="epoch"):
        self.verbose = int(verbose)
        self.max_epochs = int(max_epochs)
        self.name, self.unit = name, unit
        self.every = (1 if self.verbose >= 2
                      else max(1, math.ceil(self.max_epochs / 20)))
        self._last_time = time.perf_counter()

    def selected(self, epoch):
        """Whether :meth:`log` prints ``epoch`` (to skip computing what it would print).

        Parameters
        ----------
        epoch : int
            1-based epoch.

        Returns
        -------
        selected : bool
            True when the line is printed.
        """
        return self.verbose > 0 and (epoch == 1 or epoch % self.every == 0
                                     or epoch == self.max_epochs)

    def log(self, epoch, dur=None, **values):
        """Print the line of ``epoch`` when it is selected.

        Parameters
        ----------
        epoch : int
            1-based epoch that ended.
        dur : float or None, default=None
            Seconds it took; None: the time since the previous call (or since the logger
            was built).
        **values : dict
            Named values in the order given (``train_loss=...``, ``valid_loss=...``);
            None values are left out.
        """
        now = time.perf_counter()
        if dur is None:
            dur = now - self._last_time
        self._last_time = now
        if not self.selected(epoch):
            return
        parts = [self.name] if self.name else []
        parts.append(f"{self.unit} {epoch}/{self.max_epochs}")
        parts += [f"{k} {_format_value(v)}" for k, v in values.items() if v is not None]
        parts.append(f"{dur:.3g}s")
        print("  ".join(parts), flush=True)


# ---------------------------------------------------------------------------------------------
# the skorch adapter
# ---------------------------------------------------------------------------------------------
class _WholeBatches:
    """skorch's training iterator: each mini-batch by one fancy index of whole tensors.

    skorch's default ``DataLoader`` fetches and collates every batch sample by sample (a
    ``{"X", "sample_weight", ...}`` dict per sample), which can cost as much as the training
    step of a small network. This yields the same kind of batches, ``({name: rows}, y_rows)``
    (``y_rows`` is ``None`` when the dataset has no target): a fresh ``torch.randperm`` order
    per epoch (from the torch generator the adapter seeds) cut into consecutive batches of
    ``batch_size`` (the last one shorter), on ``device``. The adapter uses it for estimators
    with ``_whole_batches = True``.

    Parameters
    ----------
    dataset : skorch.dataset.Dataset
        Dataset whose ``X`` is a dict of arrays with one row per sample and whose ``y`` is an
        array with one row per sample or ``None``.
    batch_size : int or None
        Rows per batch; ``-1`` or ``None`` for one batch of all rows.
    shuffle : bool, default=False
        Draw a new order every epoch (``True`` when training).
    device : str or torch.device, default="cpu"
        Device the tensors are moved to once, before the first batch.
    **kwargs : dict
        Other ``iterator_train__*`` settings of skorch (ignored).
    """

    def __init__(self, dataset, batch_size, shuffle=False, device="cpu", **kwargs):
        self.device = torch.device(device)
        self.arrays = {k: torch.as_tensor(v).to(self.device) for k, v in dataset.X.items()}
        self.y = None if dataset.y is None else torch.as_tensor(dataset.y).to(self.device)
        self.n = len(next(iter(self.arrays.values())))
        self.batch_size = self.n if batch_size in (-1, None) else int(batch_size)
        self.shuffle = bool(shuffle)

    def __len__(self):
        return math.ceil(self.n / self.batch_size)

    def __iter__(self):
        order = torch.randperm(self.n) if self.shuffle else torch.arange(self.n)
        order = order.to(self.device)
        for start in range(0, self.n, self.batch_size):
            idx = order[start : start + self.batch_size]
            yield ({k: v[idx] for k, v in self.arrays.items()},
                   None if self.y is None else self.y[idx])


class _WeightedNet(NeuralNet):
    """skorch net whose loss is the ``sample_weight``-weighted mean of per-sample losses.

    ``X`` reaches the net as ``{"X": array, "sample_weight": array, **extra_inputs}``; the
    module sees ``X["X"]`` and, as keyword arguments, the batch's rows of any extra inputs.
    """

    def infer(self, x, **fit_params):
        extra = {}
        if isinstance(x, dict):
            extra = {k: v for k, v in x.items() if k not in ("X", "sample_weight")}
            x = x["X"]

        def to_device(v):
            return v.to(self.device) if isinstance(v, torch.Tensor) else torch.as_tensor(
                v, device=self.device
            )

        extra = {k: to_device(v) for k, v in extra.items()}
        return self.module_(to_device(x), **extra, **fit_params)

    def get_loss(self, y_pred, y_true, X=None, training=False):
        losses = self.criterion_(y_pred, y_true)
        if losses.ndim > 1:
            losses = losses.reshape(losses.shape[0], -1).mean(dim=1)
        if isinstance(X, dict) and "sample_weight" in X:
            w = torch.as_tensor(X["sample_weight"], device=losses.device, dtype=losses.dtype)
            total = w.sum()
            if total <= 0:  # a batch made only of zero-weight samples carries no signal
                return (losses * 0.0).sum()
            return (w * losses).sum() / total
        return losses.mean()


class _Validation:
    """Held-out samples of validation early stopping (one weighted loss per epoch)."""

    def __init__(self, inputs, y, n_iter_no_change, tol):
        self.inputs, self.y = inputs, y
        self.n_iter_no_change, self.tol = int(n_iter_no_change), float(tol)
        self.losses, self.best_loss, self.best_epoch, self.best_state = [], np.inf, 0, None

    def evaluate(self, net):
        """The weighted validation loss of the net's current state; records the best."""
        modes = [(m, m.training) for m in (net.module_, net.criterion_)]
        for m, _ in modes:
            m.eval()
        with torch.no_grad():
            y = torch.as_tensor(self.y, device=net.device)
            loss = float(net.get_loss(net.infer(self.inputs), y, X=self.inputs))
        for m, mode in modes:
            m.train(mode)
        self.losses.append(loss)
        epoch = len(self.losses)
        if loss < self.best_loss - self.tol:
            self.best_loss, self.best_epoch = loss, epoch
            self.best_state = copy.deepcopy(net.module_.state_dict())
        return loss

    def should_stop(self):
        return len(self.losses) - self.best_epoch >= self.n_iter_no_change


class _AdapterLoop(Callback):
    """skorch callback: the adapter's divergence guard, validation and progress lines.

    A thin wrapper: :class:`DivergenceGuard` observes every training batch loss and
    checkpoints every epoch; :class:`_Validation` scores the held-out samples; the epoch's
    line goes to :class:`EpochLogger`. At the end of training it evaluates the last training
    batch once more (no step validates the final state) and leaves :meth:`DivergenceGuard.finish`
    to ``_fit_net``.
    """

    def __init__(self, name, logger, validation=None):
        self.name, self.logger, self.validation = name, logger, validation

    def on_train_begin(self, net, **kwargs):
        self.guard = DivergenceGuard(net.module_, self.name)
        self.final_loss, self._batch = None, None
        # skorch ends its loop on any KeyboardInterrupt and swallows it; the adapter's own
        # stops (divergence, early stopping) set this, so a user's Ctrl-C can be re-raised
        self.stopped_on_purpose = False

    def _stop(self):
        self.stopped_on_purpose = True
        raise KeyboardInterrupt  # skorch ends the training loop on it

    def on_batch_end(self, net, batch=None, training=False, loss=None, **kwargs):
        if training and loss is not None:
            self._batch = batch
            if self.guard.observe(loss):
                self._stop()

    def on_epoch_end(self, net, **kwargs):
        row = net.history[-1]
        epoch = len(net.history)
        if self.guard.checkpoint(epoch, loss=row.get("train_loss")):
            self._stop()
        stop = False
        if self.validation is not None:
            net.history.record("valid_loss", self.validation.evaluate(net))
            stop = self.validation.should_stop()
        self.logger.log(epoch, dur=row.get("dur"), train_loss=row.get("train_loss"),
                        valid_loss=net.history[-1].get("valid_loss"))
        if stop:
            self._stop()

    def on_train_end(self, net, **kwargs):
        if not self.guard.stopped and self._batch is not None:
            modes = [(m, m.training) for m in (net.module_, net.criterion_)]
            with torch.no_grad():
                Xi, yi = self._batch
                y_pred = net.evaluation_step(self._batch, training=False)
                self.final_loss = net.get_loss(y_pred, yi, X=Xi)
            for m, mode in modes:  # evaluation_step leaves eval mode behind
                m.train(mode)
        self._batch = None  # the fitted net keeps this callback: no training batch in it


class TorchEstimatorMixin:
    """Mixin that trains a torch module with skorch for a scikit-learn estimator.

    The mixin owns the training knobs shared by every torch-backed estimator. Put it *before*
    :class:`~sklearn.base.BaseEstimator` in the bases and merge
    ``TorchEstimatorMixin._torch_parameter_constraints`` into the estimator's
    ``_parameter_constraints``. Each estimator lists the parameters below in its own
    ``__init__`` and documents them with the shared texts of
    :mod:`sklearn_icml26.utils._docstrings` (see the module docstring of
    :mod:`sklearn_icml26.base` for the hooks and the order of a fit).

    Parameters
    ----------
    max_epochs : int
        Number of passes over the training data.
    batch_size : int
        Mini-batch size; ``-1`` trains on the full batch.
    lr : float
        Learning rate of the optimizer.
    optimizer : {"adam", "adamw", "sgd", "rmsprop", "adamo"} or torch optimizer class
        Optimizer. ``"adamo"`` is :class:`sklearn_icml26.optim.AdamO` (Adam with a budgeted
        orthogonality correction of the weight matrices, Qiao et al., ICML 2026); the others are
        the :mod:`torch.optim` classes of those names. Built by :func:`make_optimizer`.
    optimizer_params : dict or None
        Extra keyword arguments of the optimizer, e.g. ``{"betas": (0.9, 0.99)}`` or, for
        ``"adamo"``, ``{"kappa": 1.0, "tau": 0.05}``; ``None`` keeps the optimizer's defaults.
        Keys must be arguments of the optimizer; ``lr`` has its own parameter. Read with
        ``getattr``, so an estimator without this parameter trains with the defaults.
    weight_decay : float, optional
        Weight decay of the optimizer (read with ``getattr``; without it, the optimizer's).
    early_stopping, validation_fraction, n_iter_no_change, tol : optional
        Validation early stopping (read with ``getattr``; off without ``early_stopping``):
        hold out ``validation_fraction`` of the samples (a permutation seeded from
        ``random_state``), stop when their weighted loss has not improved by ``tol`` for
        ``n_iter_no_change`` epochs and restore the best state.
    precision : {"float32", "float64"}
        Floating point precision of the module and of the data fed to it.
    device : str
        Torch device, e.g. ``"cpu"`` or ``"cuda"``.
    random_state : int, RandomState instance or None
        Seeds module initialisation, batch shuffling and the validation split.
    verbose : int
        ``0`` is silent; ``1`` prints about 20 progress lines (:class:`EpochLogger`), ``2``
        or more one per epoch.

    Attributes
    ----------
    net_ : skorch.NeuralNet
        The trained net; ``net_.module_`` is the torch module.
    n_iter_ : int
        Number of epochs run (after a divergence, those whose parameters were kept).
    loss_curve_ : list of float
        Training loss per epoch, ``n_iter_`` values.
    validation_loss_curve_ : list of float or None
        Validation loss per epoch with ``early_stopping``, else None (only estimators with an
        ``early_stopping`` parameter).
    best_loss_ : float or None
        Best validation loss with ``early_stopping``, else None (idem).
    """

    _torch_parameter_constraints = {
        "max_epochs": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), Options(Integral, {-1})],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "optimizer": [StrOptions(set(_OPTIMIZERS)), type],
        "optimizer_params": [dict, None],
        "precision": [StrOptions(set(_DTYPES))],
        "device": [str],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }
    # constraints of the optional knobs; an estimator that declares them merges these too
    _early_stopping_constraints = {
        "weight_decay": [Interval(Real, 0, None, closed="left")],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    # train on _WholeBatches (one index into whole tensors per batch) instead of skorch's
    # sample-by-sample DataLoader; for inputs that are plain arrays
    _whole_batches = False

    # -- hooks -----------------------------------------------------------------------------------
    def _build_module(self, n_features_in, n_outputs, context):  # pragma: no cover - abstract
        raise NotImplementedError

    def _build_criterion(self, context):  # pragma: no cover - abstract
        raise NotImplementedError

    def _build_callbacks(self, context):
        return []

    # -- helpers ---------------------------------------------------------------------------------
    @property
    def _torch_dtype(self):
        return {"float32": torch.float32, "float64": torch.float64}[self.precision]

    def _as_input(self, X):
        """Cast ``X`` to the module's precision as a writeable, C-contiguous array."""
        return np.require(np.asarray(X, dtype=_DTYPES[self.precision]), requirements=["C", "W"])

    def _check_device(self):
        """Reject devices torch cannot use, naming the ``device`` parameter."""
        try:
            device = torch.device(self.device)
        except (RuntimeError, ValueError) as exc:
            raise ValueError(
                f"device must be a torch device such as 'cpu' or 'cuda:0'; got {self.device!r}."
            ) from exc
        available = {"cpu": True, "cuda": torch.cuda.is_available(),
                     "mps": torch.backends.mps.is_available()}
        if not available.get(device.type, True):
            raise ValueError(
                f"device={self.device!r} is not available in this torch build "
                f"({torch.__version__}); use device='cpu'."
            )

    def _validation_split(self, inputs, y):
        """``(train_inputs, train_y, _Validation)`` when ``early_stopping`` is on."""
        n = len(inputs["X"])
        fraction = getattr(self, "validation_fraction", 0.1)
        n_val = max(1, int(round(fraction * n)))
        if n - n_val < 1:
            raise ValueError(f"validation_fraction={fraction} leaves no training sample out "
                             f"of n_samples={n}.")
        order = check_random_state(self.random_state).permutation(n)
        val, train = order[:n_val], order[n_val:]
        val_inputs = {k: np.asarray(v)[val] for k, v in inputs.items()}
        if not val_inputs["sample_weight"].sum() > 0:  # held-out samples all weigh 0
            val_inputs["sample_weight"] = np.ones(n_val, dtype=val_inputs["X"].dtype)
        validation = _Validation(val_inputs, np.asarray(y)[val],
                                 getattr(self, "n_iter_no_change", 10),
                                 getattr(self, "tol", 1e-4))
        return ({k: np.asarray(v)[train] for k, v in inputs.items()}, np.asarray(y)[train],
                validation)

    def _fit_net(self, X, y, sample_weight=None, n_outputs=None, extra_inputs=None,
                 context=None):
        """Build the module and train it on ``(X, y)``.

        Sets ``net_``, ``n_iter_``, ``loss_curve_`` and, for an estimator with an
        ``early_stopping`` parameter, ``validation_loss_curve_`` and ``best_loss_``. Warns
        with a :class:`~sklearn.exceptions.ConvergenceWarning` when training diverged
        (:class:`DivergenceGuard`).

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features_in_)
            Validated input.
        y : ndarray of shape (n_samples, ...)
            Targets as the criterion expects them (already in the right dtype).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative per-sample weights; ``None`` weighs every sample 1.
        n_outputs : int, default=None
            Passed to :meth:`_build_module`.
        extra_inputs : dict of str to ndarray of shape (n_samples, ...), default=None
            Per-sample inputs batched with ``X`` and passed to the module's ``forward`` as
            keyword arguments during training (e.g. row indices); names ``"X"`` and
            ``"sample_weight"`` are reserved.
        context : FitContext, default=None
            Fit-time data passed to the three hooks; None passes an empty one.

        Returns
        -------
        net : skorch.NeuralNet
            The trained net, also stored as ``net_``.
        """
        self._check_device()
        context = FitContext() if context is None else context
        optimizer_class, optimizer_kwargs = _optimizer_spec(self)
        optimizer_kwargs.pop("lr", None)  # skorch passes net.lr
        X = self._as_input(X)
        sample_weight = _check_sample_weight(
            sample_weight, X, dtype=X.dtype, ensure_non_negative=True
        )
        inputs = {"X": X, "sample_weight": sample_weight}
        for name, value in (extra_inputs or {}).items():
            if name in inputs or len(value) != len(X):
                raise ValueError(f"extra input {name!r} must be a new name with one row per "
                                 f"sample ({len(X)}); got {len(value)} rows.")
            inputs[name] = value
        validation = None
        if getattr(self, "early_stopping", False):
            inputs, y, validation = self._validation_split(inputs, y)
        name = type(self).__name__
        loop = _AdapterLoop(name, EpochLogger(self.verbose, self.max_epochs, name),
                            validation)
        iterator = ({"iterator_train": functools.partial(_WholeBatches, device=self.device)}
                    if self._whole_batches else {})
        with seeded_torch(self.random_state, self.device):
            module = self._build_module(X.shape[1], n_outputs, context).to(self._torch_dtype)
            criterion = self._build_criterion(context)
            callbacks = [*self._build_callbacks(context), ("adapter_loop", loop)]
            net = _WeightedNet(
                module=module,
                criterion=criterion,
                optimizer=_OptimizerFactory(optimizer_class, optimizer_kwargs),
                lr=self.lr,
                max_epochs=self.max_epochs,
                batch_size=self.batch_size,
                train_split=None,
                callbacks=callbacks,
                callbacks__print_log=None,  # EpochLogger prints instead
                iterator_train__shuffle=True,
                device=self.device,
                verbose=0,
                **iterator,
            )
            net.fit(inputs, y)
        if len(net.history) < net.max_epochs and not loop.stopped_on_purpose:
            # the loop ended early on a KeyboardInterrupt that skorch swallowed: the user's
            raise KeyboardInterrupt
        n_iter = loop.guard.finish(final_loss=loop.final_loss)
        if validation is not None and validation.best_state is not None:
            # the best validated state, unless it is later than the state the guard kept
            if validation.best_epoch <= n_iter:
                net.module_.load_state_dict(validation.best_state)
        self.net_ = net
        self.n_iter_ = n_iter
        self.loss_curve_ = [float(row["train_loss"]) for row in net.history[:n_iter]]
        if hasattr(self, "early_stopping"):
            self.validation_loss_curve_ = (None if validation is None
                                           else [float(v) for v in validation.losses[:n_iter]])
            self.best_loss_ = (None if validation is None or validation.best_state is None
                               else float(validation.best_loss))
        if validation is not None:  # the fitted net keeps the callback: drop the copies
            validation.inputs = validation.y = validation.best_state = None
        return net

    def _forward_numpy(self, X, module=None, chunk_size=8192):
        """Run ``module`` (default: the trained module) on ``X`` in eval mode, in chunks.

        Returns float64 numpy output, whatever the module's precision.
        """
        X = self._as_input(X)
        module = self.net_.module_ if module is None else module
        module.eval()
        outs = []
        with torch.no_grad():
            for start in range(0, X.shape[0], chunk_size):
                out = module(torch.as_tensor(X[start : start + chunk_size], device=self.device))
                outs.append(out.detach().cpu().numpy().astype(np.float64, copy=False))
        return np.concatenate(outs, axis=0)
