"""The one adapter between scikit-learn estimators and torch models trained by skorch.

Every torch-backed estimator of the package mixes :class:`TorchEstimatorMixin` into a plain
:class:`sklearn.base.BaseEstimator`. The estimator *has* a skorch net (``net_``), it is not one:
``__init__`` stores hyperparameters only, ``fit`` validates the data with
:func:`sklearn.utils.validation.validate_data`, builds the torch module from ``n_features_in_``
through the estimator's :meth:`~TorchEstimatorMixin._build_module` hook, seeds torch from
``random_state`` inside :func:`torch.random.fork_rng` (the caller's global torch RNG is left
untouched) and trains the net.

An estimator provides

``_build_module(self, n_features_in, n_outputs)``
    the :class:`torch.nn.Module` to train;
``_build_criterion(self)``
    an :class:`torch.nn.Module` whose ``forward(y_pred, y_true)`` returns one loss per sample
    (shape ``(batch,)`` or ``(batch, ...)``, averaged over the trailing axes). The adapter turns
    it into the weighted mean ``sum(w_i l_i) / sum(w_i)``, so ``sample_weight`` with integer
    weights is the same as repeating samples;
``_build_callbacks(self)`` (optional)
    extra skorch callbacks, e.g. to switch training stages.

and calls :meth:`~TorchEstimatorMixin._fit_net` in ``fit`` and
:meth:`~TorchEstimatorMixin._forward_numpy` in ``predict``/``transform``.
"""

import functools
import inspect
import math
import sys
import threading
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.validation import _check_sample_weight
from skorch import NeuralNet
from skorch.callbacks import Callback, PrintLog

__all__ = ["TorchEstimatorMixin"]

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


class _EpochTable(PrintLog):
    """skorch's epoch table, readable in a terminal and in a log file alike.

    Colour codes only when standard output is a terminal (a log file gets plain text). With
    ``every > 1`` only the first epoch, every ``every``-th and the last are printed, so a
    300-epoch fit writes about 20 rows instead of 300. Losses are printed with four significant
    digits (``.4g``), so small losses do not show as ``0.0000``.

    Parameters
    ----------
    every : int, default=1
        Print one epoch in ``every`` (plus the first and the last).
    max_epochs : int or None, default=None
        The last epoch, always printed.
    **kwargs : dict
        Passed to :class:`skorch.callbacks.PrintLog`.
    """

    def __init__(self, every=1, max_epochs=None, floatfmt=".4g", **kwargs):
        super().__init__(floatfmt=floatfmt, **kwargs)
        self.every = every
        self.max_epochs = max_epochs

    def format_row(self, row, key, color):
        if not getattr(sys.stdout, "isatty", lambda: False)():
            # PrintLog colours the best value of a column; no escape codes outside a terminal
            row = {k: (False if k.endswith("_best") else v) for k, v in row.items()}
        return super().format_row(row, key, color)

    def on_epoch_end(self, net, **kwargs):
        epoch = len(net.history)
        if epoch == 1 or epoch % self.every == 0 or epoch == self.max_epochs:
            super().on_epoch_end(net, **kwargs)


def _epoch_table(verbose, max_epochs, rows=20):
    """The epoch table for ``verbose``: about ``rows`` rows at 1, every epoch from 2 on."""
    every = 1 if verbose >= 2 else max(1, math.ceil(max_epochs / rows))
    return _EpochTable(every=every, max_epochs=max_epochs)


class _WholeBatches:
    """skorch's training iterator: each mini-batch by one fancy index of whole tensors.

    skorch's default ``DataLoader`` fetches and collates every batch sample by sample (a
    ``{"X", "sample_weight", ...}`` dict per sample), which can cost as much as the training
    step of a small network. This yields the same kind of batches, ``({name: rows}, y_rows)``
    (``y_rows`` is ``None`` when the dataset has no target): a fresh ``torch.randperm`` order
    per epoch (from the torch generator the adapter seeds) cut into consecutive batches of
    ``batch_size`` (the last one shorter), on ``device``.

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


def _use_whole_batches(net):
    """Make ``net`` train on :class:`_WholeBatches` on its device (call at training start)."""
    net.iterator_train = functools.partial(_WholeBatches, device=net.device)


class _UseWholeBatches(Callback):
    """skorch callback: train on :class:`_WholeBatches` (set when training begins)."""

    def on_train_begin(self, net, **kwargs):
        _use_whole_batches(net)


def _rose_hundredfold(first, last):
    """Whether a training loss ended a hundredfold or more above where it started.

    The package's one rule for a finite divergence (the torch adapter's guard, MPFSurface,
    PINNRegressor). ``first`` must be a positive loss; a first loss of 0 (or none) is no
    reference and never counts; a NaN ``last`` counts.
    """
    if first is None or last is None or not first > 0:
        return False
    return not last < 100.0 * first


class _NonFiniteLossGuard(Callback):
    """skorch callback: stop at the first non-finite training loss and restore the module's
    last *validated* state: the parameters (and buffers) of the end of an epoch after which
    a forward pass still gave a finite loss, or the initial ones. (Parameters can be finite
    yet so large that the next forward overflows, so the state that ends the epoch before
    the failure is not enough.) ``good_epoch_`` is the epoch of the restored state (0: the
    initial one); ``stopped_epoch_`` the 1-based epoch that diverged (``None``: none did).
    """

    def on_train_begin(self, net, **kwargs):
        self.stopped_epoch_, self.good_epoch_, self.first_loss_ = None, 0, None
        self._good, self._pending, self._first = self._finite_state(net), None, True

    @staticmethod
    def _finite_state(net):
        """A copy of the module's state, or ``None`` if a floating tensor is not finite."""
        state = {k: v.detach().clone() for k, v in net.module_.state_dict().items()}
        finite = all(bool(torch.isfinite(v).all()) for v in state.values()
                     if v.is_floating_point())
        return state if finite else None

    def _stop(self, net):
        if self._good is not None:
            net.module_.load_state_dict(self._good)
        self.stopped_epoch_ = len(net.history)
        raise KeyboardInterrupt  # skorch ends the training loop on it

    def on_epoch_begin(self, net, **kwargs):
        self._first = True

    def on_batch_end(self, net, batch=None, training=False, loss=None, **kwargs):
        if not training or loss is None:
            return
        if not bool(torch.isfinite(loss).all()):
            self._stop(net)
        value = float(loss.detach().mean())
        if self.first_loss_ is None and value > 0:  # near the starting parameters (a batch
            self.first_loss_ = value  # whose samples all weigh 0 has loss 0: no reference)
        if self._first and self._pending is not None:  # the last epoch's state evaluates
            self._good, self.good_epoch_ = self._pending, len(net.history) - 1
        self._pending, self._first, self._batch = None, False, batch

    def on_epoch_end(self, net, **kwargs):
        self._pending = self._finite_state(net)
        if self._pending is None:
            self._stop(net)
        if len(net.history) == net.max_epochs:  # no later step checks the last state
            modes = [(m, m.training) for m in (net.module_, net.criterion_)]
            with torch.no_grad():
                out = net.evaluation_step(self._batch, training=False)
            for m, mode in modes:  # evaluation_step leaves eval mode behind
                m.train(mode)
            if not all(bool(torch.isfinite(t).all()) for t in
                       (out if isinstance(out, (tuple, list)) else (out,))):
                self._stop(net)
            self._good, self.good_epoch_ = self._pending, len(net.history)

    def on_train_end(self, net, **kwargs):
        # the fitted net keeps this callback: drop the state copies and the training batch
        self._good = self._pending = self._batch = None


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


class TorchEstimatorMixin:
    """Mixin that trains a torch module with skorch for a scikit-learn estimator.

    The mixin owns the training knobs shared by every torch-backed estimator. Put it *before*
    :class:`~sklearn.base.BaseEstimator` in the bases and merge
    ``TorchEstimatorMixin._torch_parameter_constraints`` into the estimator's
    ``_parameter_constraints``. The parameters below are shared by every torch-backed
    estimator; each lists them in its own ``__init__``.

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
        the :mod:`torch.optim` classes of those names.
    optimizer_params : dict or None
        Extra keyword arguments of the optimizer, e.g. ``{"betas": (0.9, 0.99)}`` or, for
        ``"adamo"``, ``{"kappa": 1.0, "tau": 0.05}``; ``None`` keeps the optimizer's defaults.
        Keys must be arguments of the optimizer; ``lr`` has its own parameter. They reach
        skorch as ``optimizer__<key>``. Read with ``getattr``, so an estimator without this
        parameter trains with the optimizer's defaults.
    precision : {"float32", "float64"}
        Floating point precision of the module and of the data fed to it.
    device : str
        Torch device, e.g. ``"cpu"`` or ``"cuda"``.
    random_state : int, RandomState instance or None
        Seeds module initialisation and batch shuffling.
    verbose : int
        ``0`` is silent; ``1`` prints skorch's epoch table condensed to about 20 rows (the first
        epoch, every ``ceil(max_epochs / 20)``-th and the last); ``2`` or more prints every
        epoch. Colour codes only when standard output is a terminal, so a log file stays plain
        text.

    Attributes
    ----------
    net_ : skorch.NeuralNet
        The trained net; ``net_.module_`` is the torch module and ``net_.history`` the
        per-epoch training losses.
    n_iter_ : int
        Number of epochs run (with the divergence guard, those whose parameters were kept).
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

    # -- hooks -----------------------------------------------------------------------------------
    def _build_module(self, n_features_in, n_outputs):  # pragma: no cover - abstract
        raise NotImplementedError

    def _build_criterion(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _build_callbacks(self):
        return []

    # an estimator without its own guard sets this: training stops at the first non-finite
    # loss, the last validated state is restored (see _NonFiniteLossGuard) and a
    # ConvergenceWarning is raised; a hundredfold rise of the loss warns too
    _stop_on_nonfinite_loss = False

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

    def _optimizer_class(self):
        if isinstance(self.optimizer, str):
            if self.optimizer in _PACKAGE_OPTIMIZERS:
                import importlib

                module = importlib.import_module(_PACKAGE_OPTIMIZERS[self.optimizer])
                return getattr(module, _OPTIMIZERS[self.optimizer])
            return getattr(torch.optim, _OPTIMIZERS[self.optimizer])
        return self.optimizer

    def _optimizer_kwargs(self, optimizer_class=None):
        """Validated ``optimizer_params`` as skorch's ``optimizer__<key>`` keyword arguments.

        Reads ``getattr(self, "optimizer_params", None)``, so estimators without the parameter
        get ``{}``. Raises a ``TypeError`` when it is not a dict of str keys and a ``ValueError``
        when a key is reserved or is not an argument of the optimizer.
        """
        params = getattr(self, "optimizer_params", None)
        if params is None:
            return {}
        if not isinstance(params, dict):
            raise TypeError("optimizer_params must be a dict of optimizer keyword arguments or "
                            f"None; got {type(params).__name__} {params!r}.")
        optimizer_class = self._optimizer_class() if optimizer_class is None else optimizer_class
        name = getattr(optimizer_class, "__name__",
                       getattr(getattr(optimizer_class, "func", None), "__name__",
                               repr(optimizer_class)))
        try:
            signature = inspect.signature(optimizer_class)
        except (TypeError, ValueError):  # builtins without a signature: let torch decide
            signature = None
        accepted = None
        if signature is not None and not any(
                p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()):
            accepted = [k for k, p in signature.parameters.items()
                        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                      inspect.Parameter.KEYWORD_ONLY)
                        and k not in _RESERVED_OPTIMIZER_KEYS]
        for key in params:
            if not isinstance(key, str):
                raise TypeError(f"optimizer_params keys must be str; got {key!r}.")
            if key in _RESERVED_OPTIMIZER_KEYS:
                raise ValueError(f"optimizer_params may not set {key!r}: "
                                 f"{_RESERVED_OPTIMIZER_KEYS[key]}.")
            if accepted is not None and key not in accepted:
                raise ValueError(f"optimizer_params key {key!r} is not an argument of the "
                                 f"optimizer {name}; it accepts {sorted(accepted)}.")
        return {f"optimizer__{key}": value for key, value in params.items()}

    def _fit_net(self, X, y, sample_weight=None, n_outputs=None, extra_inputs=None):
        """Build the module and train it on ``(X, y)``; sets ``net_`` and ``n_iter_``.

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

        Returns
        -------
        net : skorch.NeuralNet
            The trained net, also stored as ``net_``.
        """
        self._check_device()
        optimizer_class = self._optimizer_class()
        optimizer_kwargs = self._optimizer_kwargs(optimizer_class)
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
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        device = torch.device(self.device)
        # fork (and afterwards restore) the generator of the CUDA device that trains, if any
        fork_devices = [device.index or 0] if device.type == "cuda" else []
        with _TORCH_RNG_LOCK, torch.random.fork_rng(devices=fork_devices):
            torch.manual_seed(seed)
            module = self._build_module(X.shape[1], n_outputs).to(self._torch_dtype)
            criterion = self._build_criterion()
            callbacks = list(self._build_callbacks())
            guard = _NonFiniteLossGuard() if self._stop_on_nonfinite_loss else None
            if guard is not None:
                callbacks.append(("nonfinite_loss_guard", guard))
            net = _WeightedNet(
                module=module,
                criterion=criterion,
                optimizer=optimizer_class,
                **optimizer_kwargs,
                lr=self.lr,
                max_epochs=self.max_epochs,
                batch_size=self.batch_size,
                train_split=None,
                callbacks=callbacks or None,
                callbacks__print_log=_epoch_table(int(self.verbose), self.max_epochs),
                iterator_train__shuffle=True,
                device=self.device,
                verbose=int(self.verbose),
            )
            net.fit(inputs, y)
        self.net_ = net
        self.n_iter_ = len(net.history)
        if guard is not None and guard.stopped_epoch_ is not None:
            import warnings

            from sklearn.exceptions import ConvergenceWarning

            self.n_iter_ = guard.good_epoch_
            kept = (f"those after epoch {self.n_iter_}" if self.n_iter_ else "the initial ones")
            warnings.warn(f"{type(self).__name__}: the training loss became non-finite in "
                          f"epoch {guard.stopped_epoch_}; training stopped and the last "
                          f"parameters that gave a finite loss ({kept}) were restored. Lower "
                          "lr or check the input scaling.", ConvergenceWarning, stacklevel=3)
        elif guard is not None and len(net.history):
            last = net.history[-1].get("train_loss")
            if _rose_hundredfold(guard.first_loss_, last):
                import warnings

                from sklearn.exceptions import ConvergenceWarning

                warnings.warn(f"{type(self).__name__}: the training loss rose a hundredfold "
                              f"or more over the fit (first step {guard.first_loss_:.3g}, "
                              f"last epoch {last:.3g}); the model has probably diverged. "
                              "Lower lr.", ConvergenceWarning, stacklevel=3)
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
