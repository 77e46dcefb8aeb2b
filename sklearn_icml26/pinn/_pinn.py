"""PINNRegressor: a physics-informed neural network as a scikit-learn regressor.

The network ``u_theta`` is trained on collocation points through several loss terms (the PDE
residual, initial and boundary conditions, and optionally observed data), as in DeepXDE and in
Naujoks et al., "PINNfluence: Interpreting PINNs through Influence Functions", ICML 2026,
arXiv:2409.08958. The Adam, L-BFGS and Adam-then-L-BFGS solvers train on the package's skorch
adapter (:class:`~sklearn_icml26.base.TorchEstimatorMixin`); the least-squares solver of
random-feature PINNs is a closed-form solve and does not use it.
"""

import math
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data
from skorch.callbacks import Callback
from torch import nn

from ..base import _TORCH_RNG_LOCK, TorchEstimatorMixin, _rose_hundredfold
from ._problems import PDEProblem
from ._residuals import _ACTIVATIONS, _MLP, batched_residuals, per_point_jacobians

__all__ = ["PINNRegressor"]

_SOLVERS = ("adam", "lbfgs", "adam+lbfgs", "lstsq")


# ---------------------------------------------------------------------------------------------
# training pieces on the adapter
# ---------------------------------------------------------------------------------------------
class _ResidualModule(nn.Module):
    """Wraps the network: ``forward(x, mask, target)`` returns the masked residuals (n, K).

    Training is full-batch, so the adapter receives the whole collocation set packed as one
    sample (``x`` of shape ``(1, n * n_inputs)``, ``mask`` ``(1, n * K)``, ``target``
    ``(1, n * n_outputs)``): its data loader then fetches one row per step instead of
    collating ``n`` rows one by one, which dominated the cost of an Adam step.
    """

    def __init__(self, net, problem, has_data, n_inputs, n_terms, n_outputs):
        super().__init__()
        self.net = net
        self.problem = problem
        self.has_data = has_data
        self.shape = (n_inputs, n_terms, n_outputs)

    def forward(self, x, mask, target):
        n_inputs, n_terms, n_outputs = self.shape
        x = x.reshape(-1, n_inputs)
        mask = mask.reshape(-1, n_terms)
        y = target.reshape(-1, n_outputs) if self.has_data else None
        return batched_residuals(self.net, self.problem, x, mask, y)


class _TermLoss(nn.Module):
    """Per-point loss ``sum_k c_k rho_k^2``; its mean over the points is the objective."""

    def __init__(self, coefs):
        super().__init__()
        self.register_buffer("coefs", torch.as_tensor(coefs))
        self.trace = []

    def forward(self, rho, y_true=None):
        per_point = (rho**2 * self.coefs.to(rho.dtype)).sum(dim=1)
        self.trace.append(float(per_point.detach().mean()))
        # one packed sample: the adapter averages its trailing axis, i.e. over the points
        return per_point[None, :]


class _LBFGSFactory:
    """``factory(params, lr=None, **kwargs)`` -> :class:`torch.optim.LBFGS` of ``max_iter``.

    A module-level class rather than a closure so that a fitted estimator (whose skorch net
    and L-BFGS switch callback keep the factory) can be pickled.
    """

    def __init__(self, max_iter):
        self.max_iter = int(max_iter)
        self.__name__ = "LBFGS"

    def __call__(self, params, lr=None, **kwargs):
        # the adapter passes the estimator's (Adam) learning rate; L-BFGS uses a unit step
        # with a strong-Wolfe line search, as DeepXDE and the authors' code do
        max_iter = self.max_iter
        options = dict(lr=1.0, max_iter=max_iter, max_eval=int(math.ceil(1.25 * max_iter)),
                       tolerance_grad=1e-10, tolerance_change=1e-14, history_size=50,
                       line_search_fn="strong_wolfe")
        options.update(kwargs)
        flat = []
        for p in params:  # skorch may pass parameter groups
            flat.extend(p["params"] if isinstance(p, dict) else [p])
        return torch.optim.LBFGS([p for p in flat if p.requires_grad], **options)

    def __repr__(self):
        return f"LBFGS(max_iter={self.max_iter})"


def _lbfgs_factory(max_iter):
    return _LBFGSFactory(max_iter)


class _SwitchToLBFGS(Callback):
    """After ``at_epoch`` Adam epochs, replace the net's optimizer by L-BFGS."""

    def __init__(self, at_epoch, factory):
        self.at_epoch = at_epoch
        self.factory = factory

    def on_epoch_end(self, net, **kwargs):
        if len(net.history) == self.at_epoch:
            net.optimizer_ = self.factory(net.module_.parameters())


def _lbfgs_iterations(optimizer):
    if not isinstance(optimizer, torch.optim.LBFGS):
        return 0
    state = optimizer.state.get(optimizer._params[0], {})
    return int(state.get("n_iter", 0))


# ---------------------------------------------------------------------------------------------
# estimator
# ---------------------------------------------------------------------------------------------
class PINNRegressor(TorchEstimatorMixin, RegressorMixin, BaseEstimator):
    """Physics-informed neural network trained on the residuals of a :class:`PDEProblem`.

    A fully connected network ``u_theta(x)`` is trained on the collocation points ``X``. Every
    point contributes the PDE residual; a point on condition ``k`` (by ``Condition.on``)
    also contributes ``B_k[u](x)`` (``u_c(x) - target(x)`` or ``u_c(x) - u_c(pair(x))``); an
    observed target adds ``u(x) - y``. The objective is
    ``sum_k w_k * mean_{i in S_k} rho_k(z_i)^2`` (``loss_reduction="mean"``, as in DeepXDE)
    or ``sum_k w_k * sum_{i in S_k} rho_k(z_i)^2`` (``"sum"``), where ``S_k`` are the points of
    term ``k``. Derivatives of ``u`` with respect to the inputs come from autograd, so the
    residual is written once in terms of ``u`` and its derivatives [1]_.

    With ``problem=None`` the estimator is a plain MLP regressor fitted to ``y`` (inputs
    min-max scaled, target standardised): the mode scikit-learn's estimator checks exercise.

    Parameters
    ----------
    problem : PDEProblem or None, default=None
        The PDE, its domain and conditions; ``None`` fits a plain MLP to ``y``.
    hidden_layer_sizes : tuple of int, default=(32, 32, 32)
        Widths of the hidden layers.
    activation : {"tanh", "sin", "silu", "gelu", "softplus"}, default="tanh"
        Hidden activation (smooth, since the residual differentiates the network).
    train_hidden : bool, default=True
        ``False`` freezes the randomly initialised hidden layers and trains only the output
        layer: a random-feature PINN (linear in its trained parameters).
    feature_scale : float or None, default=None
        ``None``: Glorot-normal weights and zero biases in every layer (the usual PINN
        initialisation). A float ``s > 0``: hidden weights and biases uniform in ``[-s, s]``
        (inputs scaled to ``[0, 1]``), the usual choice for random-feature PINNs, whose
        Glorot features with zero biases are nearly collinear (a least-squares system with a
        condition number near 1e16 on the heat problem, against about 1e8 for ``s = 8`` with
        ``activation="sin"``).
    loss_weights : dict of str to float, sequence of float or None, default=None
        Weight ``w_k`` of each loss term (by name, or one per term in the order of
        ``loss_term_names_``); ``None`` weighs every term 1. Unnamed terms of a dict get 1.
        Every weight must be finite and >= 0 (a negative weight would maximise its term).
    loss_reduction : {"mean", "sum"}, default="mean"
        Mean or sum of the squared residuals over the points of each term.
    solver : {"adam", "lbfgs", "adam+lbfgs", "lstsq"}, default="adam+lbfgs"
        ``"adam"``: ``n_iter_adam`` full-batch Adam steps; ``"lbfgs"``: up to ``n_iter_lbfgs``
        L-BFGS iterations (strong-Wolfe line search, unit step); ``"adam+lbfgs"``: both in
        turn; ``"lstsq"``: the exact least-squares solution of a random-feature PINN of a
        linear problem (needs ``train_hidden=False``).
    n_iter_adam : int, default=3000
        Number of Adam steps.
    n_iter_lbfgs : int, default=500
        Maximum number of L-BFGS iterations.
    lr : float, default=1e-3
        Adam learning rate.
    optimizer_params : dict or None, default=None
        Extra keyword arguments of the first optimizer (Adam, or L-BFGS with
        ``solver="lbfgs"``), e.g. ``{"betas": (0.9, 0.99)}``; ``None`` keeps the defaults.
    input_scaling : bool, default=True
        Map the box ``problem.bounds`` (the training range of ``X`` when ``problem=None``)
        affinely to ``[0, 1]`` inside the network; derivatives stay in physical units.
    precision : {"float64", "float32"}, default="float64"
        Floating point precision of the network.
    device : str, default="cpu"
        Torch device.
    random_state : int, RandomState instance or None, default=None
        Seeds the initialisation (Glorot-normal weights, zero biases).
    verbose : int, default=0
        ``1`` prints skorch's epoch table.

    Attributes
    ----------
    module_ : torch.nn.Module
        The trained network ``u_theta`` (inputs in physical units).
    X_train_ : ndarray of shape (n_samples, n_inputs)
        The collocation points of the fit.
    y_train_ : ndarray of shape (n_samples, n_outputs) or None
        The targets of the fit (NaN where unobserved), ``None`` without ``y``.
    point_terms_ : ndarray of shape (n_samples, n_terms), dtype bool
        Which loss terms each training point enters.
    loss_term_names_ : list of str
        Names of the loss terms: ``"pde"`` (``"pde_0"``, ... for a vector residual), the
        condition names, then ``"data"`` (``"data_0"``, ...) when ``y`` is observed.
    loss_weights_ : ndarray of shape (n_terms,)
        The weights ``w_k``.
    loss_history_ : ndarray of shape (n_evaluations,)
        Training objective at every evaluation (one per Adam step, one per L-BFGS function
        evaluation; one for ``"lstsq"``).
    n_iter_ : int
        Adam steps plus L-BFGS iterations run (1 for ``"lstsq"``).
    n_outputs_ : int
        Number of network outputs.
    n_features_in_ : int
        Number of inputs.
    net_ : skorch.NeuralNet or None
        The skorch net of the Adam/L-BFGS solvers (``None`` for ``"lstsq"``).
    y_mean_ : ndarray of shape (n_outputs,)
        Target mean removed before training (``problem=None``; zeros otherwise).
    y_scale_ : ndarray of shape (n_outputs,)
        Target scale divided out before training (``problem=None``; ones otherwise).

    See Also
    --------
    PINNInfluence : Influence of each training point and loss term on the fitted PINN.

    Notes
    -----
    The L-BFGS solvers are not standard skorch training: skorch steps torch's
    :class:`~torch.optim.LBFGS` with its closure once per epoch, so ``"adam+lbfgs"`` runs
    ``n_iter_adam`` Adam epochs and one L-BFGS epoch of up to ``n_iter_lbfgs`` iterations,
    switched by a callback. ``"lstsq"`` solves the weighted linear least-squares problem of the
    output layer directly (``numpy.linalg.lstsq``): there is no iterative training for the
    adapter to run.

    References
    ----------
    .. [1] Naujoks, Krasowski, Weckbecker, Yolcu, Wiegand, Lapuschkin, Samek, Klausen.
       "PINNfluence: Interpreting PINNs through Influence Functions", ICML 2026,
       arXiv:2409.08958.
    .. [2] Raissi, Perdikaris, Karniadakis. "Physics-informed neural networks", Journal of
       Computational Physics 378 (2019), 686-707.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_pde_collocation
    >>> from sklearn_icml26.pinn import PINNRegressor, heat_1d
    >>> problem = heat_1d()
    >>> X = make_pde_collocation(problem, 150, 20, 20, random_state=0)
    >>> pinn = PINNRegressor(problem, hidden_layer_sizes=(40,), train_hidden=False,
    ...                      solver="lstsq", random_state=0).fit(X)
    >>> pinn.loss_term_names_, pinn.predict(X[:2]).shape
    (['pde', 'ic', 'bc'], (2,))
    >>> bool(pinn.relative_l2_error(X) < 0.1)
    True
    """

    _parameter_constraints = {
        "problem": [PDEProblem, None],
        "hidden_layer_sizes": [tuple, list],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "train_hidden": ["boolean"],
        "feature_scale": [Interval(Real, 0, None, closed="neither"), None],
        "loss_weights": [dict, list, tuple, np.ndarray, None],
        "loss_reduction": [StrOptions({"mean", "sum"})],
        "solver": [StrOptions(set(_SOLVERS))],
        "n_iter_adam": [Interval(Integral, 0, None, closed="left")],
        "n_iter_lbfgs": [Interval(Integral, 0, None, closed="left")],
        "lr": TorchEstimatorMixin._torch_parameter_constraints["lr"],
        "optimizer_params": [dict, None],
        "input_scaling": ["boolean"],
        "precision": TorchEstimatorMixin._torch_parameter_constraints["precision"],
        "device": [str],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, problem=None, *, hidden_layer_sizes=(32, 32, 32), activation="tanh",
                 train_hidden=True, feature_scale=None, loss_weights=None, loss_reduction="mean",
                 solver="adam+lbfgs", n_iter_adam=3000, n_iter_lbfgs=500, lr=1e-3,
                 optimizer_params=None, input_scaling=True, precision="float64", device="cpu",
                 random_state=None, verbose=0):
        self.problem = problem
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.train_hidden = train_hidden
        self.feature_scale = feature_scale
        self.loss_weights = loss_weights
        self.loss_reduction = loss_reduction
        self.solver = solver
        self.n_iter_adam = n_iter_adam
        self.n_iter_lbfgs = n_iter_lbfgs
        self.lr = lr
        self.optimizer_params = optimizer_params
        self.input_scaling = input_scaling
        self.precision = precision
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    @classmethod
    def _get_test_params(cls):
        return [dict(problem=None, hidden_layer_sizes=(16,), solver="adam", n_iter_adam=30,
                     lr=0.05, random_state=0)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = self.problem is None
        tags.target_tags.single_output = False
        return tags

    # -- adapter hooks and stage knobs ---------------------------------------------------------
    @property
    def max_epochs(self):
        """Epochs of the skorch net: one per Adam step, one for the whole L-BFGS run."""
        return {"adam": self.n_iter_adam, "lbfgs": 1,
                "adam+lbfgs": self.n_iter_adam + 1}[self.solver]

    @property
    def batch_size(self):
        """Full batch: the objective is a mean over every collocation point of a term."""
        return -1

    @property
    def optimizer(self):
        """The first optimizer of the solver."""
        return "adam"

    def _optimizer_class(self):
        if self.solver == "lbfgs":
            cls = _lbfgs_factory(self.n_iter_lbfgs)
        else:
            cls = torch.optim.Adam
        params = self.optimizer_params
        if params and not hasattr(TorchEstimatorMixin, "_optimizer_kwargs"):
            # adapters without the optimizer_params knob: bind them here
            base = cls

            def cls(module_params, **kwargs):
                return base(module_params, **{**kwargs, **params})

            cls.__name__ = getattr(base, "__name__", "optimizer")
        return cls

    def _build_module(self, n_features_in, n_outputs):
        # the adapter sees the packed sample (n_features_in = n * n_inputs); the network
        # takes one point per row
        n_features_in = self.n_features_in_
        net = _MLP(n_features_in, tuple(self.hidden_layer_sizes), n_outputs, self.activation,
                   self._shift, self._scale,
                   None if self.feature_scale is None else float(self.feature_scale))
        if not self.train_hidden:
            for p in net.hidden.parameters():
                p.requires_grad_(False)
        return _ResidualModule(net, self.problem, self._has_data, n_features_in,
                               self._n_terms, n_outputs)

    def _build_criterion(self):
        return _TermLoss(self._coefs)

    def _build_callbacks(self):
        if self.solver == "adam+lbfgs":
            return [("switch_to_lbfgs",
                     _SwitchToLBFGS(self.n_iter_adam, _lbfgs_factory(self.n_iter_lbfgs)))]
        return []

    # -- validation ----------------------------------------------------------------------------
    def _check_problem_X(self, X, name="X"):
        problem = self.problem
        if X.shape[1] != problem.n_inputs:
            raise ValueError(f"{name} has {X.shape[1]} columns but problem.bounds has "
                             f"{problem.n_inputs}.")
        lo = np.array([b[0] for b in problem.bounds])
        hi = np.array([b[1] for b in problem.bounds])
        tol = 1e-9 * (hi - lo)
        outside = np.flatnonzero(np.any((X < lo - tol) | (X > hi + tol), axis=1))
        if outside.size:
            i = outside[0]
            raise ValueError(f"{outside.size} point(s) of {name} lie outside problem.bounds "
                             f"{list(problem.bounds)}; e.g. row {i}: {X[i].tolist()}.")

    def _condition_mask(self, X):
        masks = []
        for cond in self.problem.conditions:
            on = np.asarray(cond.on(X))
            if on.shape != (X.shape[0],) or on.dtype != bool:
                raise ValueError(f"Condition {cond.name!r}: on(X) must return a bool array of "
                                 f"shape ({X.shape[0]},); got dtype {on.dtype}, shape "
                                 f"{on.shape}.")
            masks.append(on)
        return masks

    def _n_pde(self, X):
        """Number of PDE residual components, checking the residual's shape on two points."""
        problem = self.problem
        x = torch.as_tensor(X[:2], dtype=torch.float64)
        n = x.shape[0]
        net = _MLP(problem.n_inputs, (4,), problem.n_outputs, "tanh", np.zeros(X.shape[1]),
                   np.ones(X.shape[1])).to(torch.float64)
        from ._residuals import batched_derivatives

        x = x.requires_grad_(True)
        d = batched_derivatives(net(x), x, problem.derivatives)
        out = problem.residual(x, d)
        if not isinstance(out, torch.Tensor):
            raise TypeError(f"problem.residual must return a torch tensor; got "
                            f"{type(out).__name__}.")
        if out.ndim == 1 and out.shape[0] == n:
            return 1
        if out.ndim == 2 and out.shape[0] == n and out.shape[1] >= 1:
            return int(out.shape[1])
        raise ValueError(f"problem.residual must return shape (n, n_pde) or (n,) for n points; "
                         f"got shape {tuple(out.shape)} for n={n} points.")

    def _term_layout(self, X, y):
        """Term names, the (n, K) membership mask and the per-term counts."""
        n = X.shape[0]
        names, masks = [], []
        if self.problem is not None:
            n_pde = self._n_pde(X)
            names += ["pde"] if n_pde == 1 else [f"pde_{j}" for j in range(n_pde)]
            masks += [np.ones(n, bool)] * n_pde
            for cond, on in zip(self.problem.conditions, self._condition_mask(X), strict=False):
                if not on.any():
                    raise ValueError(f"no training point lies on condition {cond.name!r}; "
                                     f"add points where its on(X) is True.")
                names.append(cond.name)
                masks.append(on)
        if y is not None:
            n_out = y.shape[1]
            names += ["data"] if n_out == 1 else [f"data_{j}" for j in range(n_out)]
            masks += [~np.isnan(y[:, j]) for j in range(n_out)]
        return names, np.stack(masks, axis=1)

    def _weights(self, names):
        w = self.loss_weights
        if w is None:
            return np.ones(len(names))
        if isinstance(w, dict):
            unknown = sorted(set(w) - set(names))
            if unknown:
                raise ValueError(f"loss_weights names unknown term(s) {unknown}; available: "
                                 f"{names}.")
            values = {k: float(w.get(k, 1.0)) for k in names}
            bad = {k: v for k, v in values.items() if not (np.isfinite(v) and v >= 0)}
            if bad:
                got = ", ".join(f"loss_weights[{k!r}] = {v}" for k, v in bad.items())
                raise ValueError(f"loss_weights must be finite and >= 0; got {got}.")
            return np.array([values[k] for k in names])
        w = np.asarray(w, dtype=np.float64).ravel()
        if w.shape != (len(names),):
            raise ValueError(f"loss_weights must have one weight per loss term {names}; got "
                             f"{w.size} values.")
        if not np.all(np.isfinite(w) & (w >= 0)):
            raise ValueError(f"loss_weights must be finite and >= 0; got {w.tolist()}.")
        return w

    # -- fit -----------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Train the network on the collocation points ``X`` (and observed targets ``y``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_inputs)
            All collocation points, in the units of ``problem.bounds`` (inside the box); which
            conditions a point enters comes from their ``on``. With ``problem=None``, the
            regression inputs.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs), default=None
            Observed values of ``u``; NaN marks an unobserved entry (with a problem) and adds
            a ``"data"`` term for the observed ones. Required when ``problem=None``.

        Returns
        -------
        self : PINNRegressor
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` contains NaN or infinity or points outside ``problem.bounds``, its
            column count differs from ``problem.bounds``, no training point lies on a
            condition, ``problem.residual`` returns the wrong shape, ``y`` has the wrong
            shape or (``problem=None``) NaN, a loss weight is negative or not finite (or a
            dict names an unknown term), ``solver="lstsq"`` is used with
            ``train_hidden=True`` or a nonlinear problem, or the solver's stage has 0
            iterations.

        Warns
        -----
        ConvergenceWarning
            If the last recorded training objective is not finite, or is 100 times the
            first or more (a diverged fit: lower ``lr``).
        """
        if self.solver == "lstsq" and (self.train_hidden or not (
                self.problem is None or self.problem.linear)):
            raise ValueError("solver='lstsq' needs train_hidden=False and a linear problem; got "
                             f"train_hidden={self.train_hidden}, problem.linear="
                             f"{None if self.problem is None else self.problem.linear}.")
        if self.solver in ("adam", "adam+lbfgs") and self.n_iter_adam < 1:
            raise ValueError(f"solver={self.solver!r} needs n_iter_adam >= 1; got "
                             f"{self.n_iter_adam}.")
        if self.solver in ("lbfgs", "adam+lbfgs") and self.n_iter_lbfgs < 1:
            raise ValueError(f"solver={self.solver!r} needs n_iter_lbfgs >= 1; got "
                             f"{self.n_iter_lbfgs}.")
        if any(int(h) != h or h < 1 for h in self.hidden_layer_sizes) or not len(
                self.hidden_layer_sizes):
            raise ValueError("hidden_layer_sizes must be a non-empty tuple of positive ints; "
                             f"got {self.hidden_layer_sizes!r}.")
        if self.problem is None:
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, multi_output=True,
                                 ensure_min_samples=2)
        else:
            X = validate_data(self, X, dtype=np.float64)
            self._check_problem_X(X)
            if y is not None:
                from sklearn.utils import check_array

                y = check_array(y, dtype=np.float64, ensure_2d=False,
                                ensure_all_finite="allow-nan", input_name="y")
                if y.shape[0] != X.shape[0]:
                    raise ValueError(f"y has {y.shape[0]} rows but X has {X.shape[0]}.")
                if np.isinf(y).any():
                    raise ValueError("y contains infinity; use NaN for unobserved entries.")
        y2 = None if y is None else (y.reshape(-1, 1) if y.ndim == 1 else y)
        if self.problem is not None and y2 is not None and y2.shape[1] != self.problem.n_outputs:
            raise ValueError(f"y has {y2.shape[1]} columns but problem.n_outputs is "
                             f"{self.problem.n_outputs}.")
        self._y_1d = y is not None and y.ndim == 1
        self.n_outputs_ = self.problem.n_outputs if self.problem is not None else y2.shape[1]

        # input map and target scaling
        if self.problem is None:
            lo, rng = X.min(axis=0), np.ptp(X, axis=0)
            rng = np.where(rng > 0, rng, 1.0)
            self.y_mean_ = y2.mean(axis=0)
            scale = y2.std(axis=0)
            self.y_scale_ = np.where(scale > 0, scale, 1.0)
            y_fit = (y2 - self.y_mean_) / self.y_scale_
        else:
            lo = np.array([b[0] for b in self.problem.bounds])
            rng = np.array([b[1] - b[0] for b in self.problem.bounds])
            self.y_mean_ = np.zeros(self.n_outputs_)
            self.y_scale_ = np.ones(self.n_outputs_)
            y_fit = y2
        if not self.input_scaling:
            lo, rng = np.zeros_like(lo), np.ones_like(rng)
        self._shift, self._scale = lo, rng

        names, mask = self._term_layout(X, y_fit)
        self.loss_term_names_ = names
        self.point_terms_ = mask
        self.loss_weights_ = self._weights(names)
        counts = mask.sum(axis=0)
        n = X.shape[0]
        if self.loss_reduction == "mean":
            coefs = self.loss_weights_ * n / np.maximum(counts, 1)
        else:
            coefs = self.loss_weights_ * n
        self._coefs = coefs
        self._n_terms = mask.shape[1]
        target = np.zeros((n, self.n_outputs_)) if y_fit is None else np.nan_to_num(y_fit)
        self.X_train_ = X
        self.y_train_ = y2
        self._has_data = y_fit is not None

        try:
            if self.solver == "lstsq":
                self._fit_lstsq(X, mask, target if y_fit is not None else None)
            else:
                self._fit_adapter(X, mask, target)
        finally:
            for name in ("_shift", "_scale", "_coefs", "_has_data", "_n_terms"):
                self.__dict__.pop(name, None)
        return self

    def _fit_adapter(self, X, mask, target):
        dtype = self._torch_dtype
        # the whole collocation set as one sample (see _ResidualModule)
        Xa = self._as_input(X)
        extra = {"mask": mask.astype(Xa.dtype).reshape(1, -1),
                 "target": self._as_input(target).reshape(1, -1)}
        self._fit_net(Xa.reshape(1, -1), np.zeros((1, 1), dtype=Xa.dtype),
                      n_outputs=self.n_outputs_, extra_inputs=extra)
        net = self.net_
        self.module_ = net.module_.net.to(dtype)
        self.loss_history_ = np.asarray(net.criterion_.trace, dtype=np.float64)
        net.criterion_.trace = []
        n_adam = self.n_iter_adam if self.solver != "lbfgs" else 0
        self.n_iter_ = n_adam + _lbfgs_iterations(net.optimizer_)
        if not np.all(np.isfinite(self.loss_history_[-1:])):
            import warnings

            from sklearn.exceptions import ConvergenceWarning

            warnings.warn(f"PINNRegressor: the training objective is not finite "
                          f"({self.loss_history_[-1]}); lower lr or check the problem.",
                          ConvergenceWarning, stacklevel=3)
        elif self.loss_history_.size and _rose_hundredfold(float(self.loss_history_[0]),
                                                           float(self.loss_history_[-1])):
            import warnings

            from sklearn.exceptions import ConvergenceWarning

            warnings.warn(f"PINNRegressor: the training objective rose a hundredfold or more "
                          f"over the fit (first {self.loss_history_[0]:.3g}, last "
                          f"{self.loss_history_[-1]:.3g}); lower lr.", ConvergenceWarning,
                          stacklevel=3)

    def _fit_lstsq(self, X, mask, target):
        self._check_device()
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        dtype = self._torch_dtype
        with _TORCH_RNG_LOCK, torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            module = self._build_module(X.shape[1], self.n_outputs_).to(dtype)
        net = module.net.to(self.device)
        Xt = torch.as_tensor(self._as_input(X), device=self.device)
        Mt = torch.as_tensor(mask, dtype=dtype, device=self.device)
        Yt = None if target is None else torch.as_tensor(target, dtype=dtype, device=self.device)
        rho, J = per_point_jacobians(net, self.problem, Xt, Mt, Yt, chunk_size=1024)
        theta0 = torch.cat([p.detach().reshape(-1) for p in net.parameters() if p.requires_grad])
        # residuals are affine in the output layer: rho = J theta - b
        b = (J @ theta0 - rho)
        w = torch.as_tensor(np.sqrt(self._coefs), dtype=dtype, device=self.device)
        A = (J * w[None, :, None]).reshape(-1, J.shape[-1]).cpu().numpy().astype(np.float64)
        rhs = (b * w[None, :]).reshape(-1).cpu().numpy().astype(np.float64)
        theta, *_ = np.linalg.lstsq(A, rhs, rcond=None)
        with torch.no_grad():
            start = 0
            for p in net.parameters():
                if p.requires_grad:
                    p.copy_(torch.as_tensor(theta[start : start + p.numel()]).reshape(p.shape))
                    start += p.numel()
        self.module_ = net
        self.net_ = None
        resid = A @ theta - rhs
        self.loss_history_ = np.array([float(resid @ resid) / X.shape[0]])
        self.n_iter_ = 1

    # -- prediction ----------------------------------------------------------------------------
    def _check_X(self, X, name="X"):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if self.problem is not None:
            self._check_problem_X(X, name=name)
        return X

    def predict(self, X):
        """Evaluate the network.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_inputs)
            Points (inside ``problem.bounds`` when a problem is set).

        Returns
        -------
        u : ndarray of shape (n_samples,) or (n_samples, n_outputs), dtype float64
            ``u_theta(X)``; one dimension when there is one output (and ``y`` was 1-D).
        """
        X = self._check_X(X)
        out = self._forward_numpy(X, module=self.module_) * self.y_scale_ + self.y_mean_
        if self.n_outputs_ == 1 and (self.problem is not None or self._y_1d):
            return out[:, 0]
        return out

    def residuals(self, X):
        """Residual of every physics loss term at ``X`` (0 where a condition does not apply).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_inputs)
            Points inside ``problem.bounds``.

        Returns
        -------
        rho : ndarray of shape (n_samples, n_physics_terms), dtype float64
            Columns in the order of ``loss_term_names_`` without the data terms.

        Raises
        ------
        ValueError
            If the estimator has no problem.
        """
        X = self._check_X(X)
        if self.problem is None:
            raise ValueError("residuals needs a problem; this PINNRegressor has problem=None.")
        n_pde = sum(k.startswith("pde") for k in self.loss_term_names_)
        mask = np.column_stack([np.ones((X.shape[0], n_pde), bool),
                                *[m[:, None] for m in self._condition_mask(X)]])
        out = []
        dtype = next(self.module_.parameters()).dtype
        for start in range(0, X.shape[0], 4096):
            x = torch.as_tensor(X[start : start + 4096], dtype=dtype, device=self.device)
            m = torch.as_tensor(mask[start : start + 4096], dtype=dtype, device=self.device)
            with torch.enable_grad():
                r = batched_residuals(self.module_, self.problem, x, m)
            out.append(r.detach().cpu().numpy().astype(np.float64))
        return np.concatenate(out)

    def relative_l2_error(self, X):
        """Relative L2 error ``||u_theta - u*|| / ||u*||`` against the exact solution at ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_inputs)
            Evaluation points (e.g. a grid over ``problem.bounds``).

        Returns
        -------
        error : float
            The relative L2 error over all outputs.

        Raises
        ------
        ValueError
            If the problem has no ``exact_solution``.
        """
        X = self._check_X(X)
        if self.problem is None or self.problem.exact_solution is None:
            raise ValueError("relative_l2_error needs problem.exact_solution; this problem has "
                             "none.")
        exact = self.problem.exact_solution(torch.as_tensor(X, dtype=torch.float64))
        exact = exact.detach().cpu().numpy().reshape(X.shape[0], -1)
        pred = self.predict(X).reshape(X.shape[0], -1)
        return float(np.linalg.norm(pred - exact) / np.linalg.norm(exact))
