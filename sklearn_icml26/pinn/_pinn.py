"""PINNRegressor: a physics-informed neural network as a scikit-learn regressor.

The network ``u_theta`` is trained on collocation points through several loss terms (the PDE
residual, initial and boundary conditions, and optionally observed data), as in DeepXDE and in
Naujoks et al., "PINNfluence: Interpreting PINNs through Influence Functions", ICML 2026,
arXiv:2409.08958. The Adam, L-BFGS and Adam-then-L-BFGS solvers run one full-batch training loop
built from the package's shared primitives (:func:`~sklearn_icml26.base.seeded_torch`,
:func:`~sklearn_icml26.base.make_optimizer`, :class:`~sklearn_icml26.base.DivergenceGuard`,
:class:`~sklearn_icml26.base.EpochLogger`); the least-squares solver of
random-feature PINNs is a closed-form solve.
"""

import math
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import Interval, StrOptions, _fit_context
from ..base import (
    DivergenceGuard,
    EpochLogger,
    FitContext,
    TorchEstimatorMixin,
    make_optimizer,
    seeded_torch,
)
from ..utils._docstrings import Substitution, _torch_docstrings
from ..utils._scaling import _robust_mean_std, _standardize
from ._problems import PDEProblem
from ._residuals import _ACTIVATIONS, _MLP, batched_residuals, per_point_jacobians

__all__ = ["PINNRegressor"]

_SOLVERS = ("adam", "lbfgs", "adam+lbfgs", "lstsq")


def _writeable(a):
    """``a`` itself when writeable, else a copy: torch warns on read-only numpy arrays (a
    read-only input array, or a DataFrame's values under pandas copy-on-write)."""
    return a if a.flags.writeable else a.copy()


# ---------------------------------------------------------------------------------------------
# training pieces
# ---------------------------------------------------------------------------------------------
# L-BFGS as DeepXDE and the authors' code run it: unit step, strong-Wolfe line search
_LBFGS_DEFAULTS = dict(tolerance_grad=1e-10, tolerance_change=1e-14, history_size=50)
# the L-BFGS settings optimizer_params may change with solver="lbfgs"
_LBFGS_OPTIONS = ("history_size", "max_eval", "tolerance_change", "tolerance_grad")


def _flat(params):
    return torch.cat([p.detach().reshape(-1) for p in params])


def _lbfgs_steps(params, objective, max_iter, options=None):
    """Run :class:`torch.optim.LBFGS` one iteration at a time, yielding the accepted losses.

    A generator: it first yields the objective at the starting parameters, then, after each
    iteration, the objective at the accepted parameters (the point the line search chose, not
    the last trial point it evaluated), so that a caller can check every accepted step and
    stop at will. The iterates are those of one ``LBFGS(max_iter=max_iter).step(closure)``
    call: the optimizer keeps its history between calls, the closure returns the cached
    evaluation when the optimizer asks again for a point it has evaluated (no evaluation is
    repeated), and the stopping rules of torch's loop (``max_eval`` evaluations in all, a
    step or a loss change below ``tolerance_change``, a gradient below ``tolerance_grad``)
    end the run.

    Parameters
    ----------
    params : list of torch.Tensor
        Trained parameters.
    objective : callable
        ``objective()`` returns the scalar training loss (differentiable).
    max_iter : int
        Maximum number of iterations.
    options : dict or None, default=None
        Overrides of ``_LBFGS_DEFAULTS`` and ``max_eval`` (default ``ceil(1.25 max_iter)``).
    """
    options = {**_LBFGS_DEFAULTS, **(options or {})}
    max_eval = options.pop("max_eval", None) or int(math.ceil(1.25 * max_iter))
    tolerance_change = options["tolerance_change"]
    optimizer = torch.optim.LBFGS(params, lr=1.0, max_iter=1, line_search_fn="strong_wolfe",
                                  **options)
    seen = []  # (parameters, loss, gradients) evaluated since the last accepted point

    def closure():
        x = _flat(params)
        for x_seen, loss, grads in seen:
            if torch.equal(x_seen, x):
                for p, g in zip(params, grads, strict=True):
                    p.grad = None if g is None else g.clone()
                return loss
        optimizer.zero_grad()
        loss = objective()
        loss.backward()
        seen.append((x, loss.detach(), [None if p.grad is None else p.grad.detach().clone()
                                        for p in params]))
        return loss

    with torch.enable_grad():
        loss = float(closure().detach())
    yield loss
    state = optimizer.state[params[0]]
    n_evals = 1
    for _ in range(max_iter):
        n_iter, func_evals = state.get("n_iter", 0), state.get("func_evals", 0)
        # torch bounds each line search by the evaluations left to the whole run
        optimizer.param_groups[0]["max_eval"] = max_eval - n_evals + 1
        optimizer.step(closure)
        state = optimizer.state[params[0]]
        line_search_evals = state["func_evals"] - func_evals - 1
        if state["n_iter"] == n_iter or line_search_evals <= 0:
            return  # a stationary point or no descent direction: no step was taken
        n_evals += line_search_evals
        x = _flat(params)
        accepted = [entry for entry in seen if torch.equal(entry[0], x)]
        if not accepted:  # not reached: the accepted point is always an evaluated one
            with torch.enable_grad():
                closure()
            accepted = seen[-1:]
        seen[:] = accepted[-1:]
        previous, loss = loss, float(seen[0][1])
        yield loss
        step = state["d"].mul(state["t"]).abs().max()
        if (n_evals >= max_eval or step <= tolerance_change
                or abs(loss - previous) < tolerance_change):
            return


# ---------------------------------------------------------------------------------------------
# estimator
# ---------------------------------------------------------------------------------------------
@Substitution(**_torch_docstrings)
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
    min-max scaled, target standardised on power-of-two pre-scaled values, so that targets of
    order 1e300 or 1e-300 train as ordinary ones): the mode scikit-learn's estimator checks
    exercise. With a problem, :meth:`score` is minus the mean squared residuals at ``X``, so
    that a grid search can rank PINNs on held-out collocation points.

    Parameters
    ----------
    problem : PDEProblem or None, default=None
        The PDE, its domain and conditions; ``None`` fits a plain MLP to ``y``.
    hidden_layer_sizes : tuple of int, default=(32, 32, 32)
        Widths of the hidden layers (ints >= 1; ``6.0`` or ``True`` are refused).
    activation : {"tanh", "sin", "silu", "gelu", "softplus"}, default="tanh"
        Hidden activation (smooth, since the residual differentiates the network).
    train_hidden : bool, default=True
        ``False`` freezes the randomly initialised hidden layers and trains only the output
        layer: a random-feature PINN (linear in its trained parameters).
    feature_scale : float or None, default=None
        ``None``: Glorot-normal weights and zero biases in every layer (the usual PINN
        initialisation). A float ``s > 0``: hidden weights and biases uniform in ``[-s, s]``
        (inputs scaled to ``[0, 1]``), the usual choice for random-feature PINNs, whose
        Glorot features with zero biases are nearly collinear (an ill-conditioned
        least-squares system; see :ref:`user_guide_pinn`).
    loss_weights : dict of str to float, sequence of float or None, default=None
        Weight ``w_k`` of each loss term (by name, or one per term in the order of
        ``loss_term_names_``); ``None`` weighs every term 1. Unnamed terms of a dict get 1.
        Every weight must be finite and >= 0 (a negative weight would maximise its term).
    loss_reduction : {"mean", "sum"}, default="mean"
        Mean or sum of the squared residuals over the points of each term.
    solver : {"adam", "lbfgs", "adam+lbfgs", "lstsq"}, default="adam+lbfgs"
        ``"adam"``: ``max_epochs`` full-batch Adam steps; ``"lbfgs"``: up to ``max_iter``
        L-BFGS iterations (strong-Wolfe line search, unit step); ``"adam+lbfgs"``: both in
        turn; ``"lstsq"``: the exact least-squares solution of a random-feature PINN of a
        linear problem (needs ``train_hidden=False``).
    max_epochs : int, default=3000
        {max_epochs}
        Training is full-batch: each epoch is one Adam step.
    max_iter : int, default=500
        Maximum number of L-BFGS iterations.
    lr : float, default=1e-3
        {lr}
        Used by the Adam steps; L-BFGS takes unit steps along its line search.
    optimizer_params : dict or None, default=None
        {optimizer_params}
        They configure the Adam stage; with ``solver="lbfgs"`` they are the L-BFGS settings
        ``history_size`` (50), ``tolerance_grad`` (1e-10), ``tolerance_change`` (1e-14) and
        ``max_eval`` (``1.25 * max_iter``) instead.
    input_scaling : bool, default=True
        Map the box ``problem.bounds`` (the training range of ``X`` when ``problem=None``)
        affinely to ``[0, 1]`` inside the network; derivatives stay in physical units.
        This is a fixed min-max map of the inputs, not a z-scoring (``standardize``).
    precision : {"float64", "float32"}, default="float64"
        {precision}
    device : str, default="cpu"
        {device}
    random_state : int, RandomState instance or None, default=None
        {random_state}
    verbose : int, default=0
        {verbose}
        Each solver stage prints its own lines: the Adam epochs, then the L-BFGS iterations
        (about 20 lines over ``max_iter`` at ``1``).

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
    loss_curve_ : list of float
        Training objective per step, ``n_iter_`` values: before each Adam step (as an epoch
        loss is), then after each L-BFGS iteration, at the parameters it accepted; one value
        for ``"lstsq"``.
    n_iter_ : int
        Adam steps plus L-BFGS iterations run (1 for ``"lstsq"``). When training diverges
        (a non-finite loss) it stops with a :class:`~sklearn.exceptions.ConvergenceWarning`
        and the last parameters that gave a finite loss are restored; ``n_iter_`` then counts
        the steps kept. See :ref:`user_guide_pinn`.
    n_outputs_ : int
        Number of network outputs.
    n_features_in_ : int
        Number of inputs.
    y_mean_ : ndarray of shape (n_outputs,)
        Target mean removed before training (``problem=None``; zeros otherwise).
    y_scale_ : ndarray of shape (n_outputs,)
        Target scale divided out before training (``problem=None``; ones otherwise).

    See Also
    --------
    PINNInfluence : Influence of each training point and loss term on the fitted PINN.

    Notes
    -----
    Training is full batch (the objective is a mean over every point of a term), so the
    estimator runs its own loop rather than the skorch adapter: ``max_epochs`` Adam steps,
    then torch's :class:`~torch.optim.LBFGS` one iteration at a time (the same iterates as one
    ``step`` call of ``max_iter`` iterations), the package's divergence guard watching every
    Adam loss and every accepted L-BFGS loss. ``"lstsq"`` solves the weighted linear
    least-squares problem of the output layer directly (``numpy.linalg.lstsq``). See
    :ref:`user_guide_pinn`.

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
        "max_epochs": [Interval(Integral, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
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
                 solver="adam+lbfgs", max_epochs=3000, max_iter=500, lr=1e-3,
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
        self.max_epochs = max_epochs
        self.max_iter = max_iter
        self.lr = lr
        self.optimizer_params = optimizer_params
        self.input_scaling = input_scaling
        self.precision = precision
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    @classmethod
    def _get_test_params(cls):
        return [dict(problem=None, hidden_layer_sizes=(16,), solver="adam", max_epochs=30,
                     lr=0.05, random_state=0)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = self.problem is None
        tags.target_tags.single_output = False
        return tags

    # -- network ------------------------------------------------------------------------------
    def _build_module(self, n_features_in, n_outputs, context):
        """The network ``u_theta``, its input map ``context.shift``/``context.scale``."""
        net = _MLP(n_features_in, tuple(self.hidden_layer_sizes), n_outputs, self.activation,
                   context.shift, context.scale,
                   None if self.feature_scale is None else float(self.feature_scale))
        if not self.train_hidden:
            for p in net.hidden.parameters():
                p.requires_grad_(False)
        return net.to(self._torch_dtype)

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
        with torch.random.fork_rng(devices=[]):  # a throw-away probe: the caller's torch
            net = _MLP(problem.n_inputs, (4,), problem.n_outputs, "tanh",  # RNG is untouched
                       np.zeros(X.shape[1]), np.ones(X.shape[1])).to(torch.float64)
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
            dict names an unknown term), ``hidden_layer_sizes`` holds anything but positive
            ints, ``solver="lstsq"`` is used with ``train_hidden=True`` or a nonlinear
            problem, the solver's stage has 0 iterations, or ``optimizer_params`` names an
            argument the optimizer does not take.

        Warns
        -----
        ConvergenceWarning
            If the training objective becomes non-finite (training stops and the last
            parameters that gave a finite objective are restored) or ends 100 times its
            first value or more (a diverged fit: lower ``lr``).
        """
        if self.solver == "lstsq" and (self.train_hidden or not (
                self.problem is None or self.problem.linear)):
            raise ValueError("solver='lstsq' needs train_hidden=False and a linear problem; got "
                             f"train_hidden={self.train_hidden}, problem.linear="
                             f"{None if self.problem is None else self.problem.linear}.")
        if self.solver in ("adam", "adam+lbfgs") and self.max_epochs < 1:
            raise ValueError(f"solver={self.solver!r} needs max_epochs >= 1; got "
                             f"{self.max_epochs}.")
        if self.solver in ("lbfgs", "adam+lbfgs") and self.max_iter < 1:
            raise ValueError(f"solver={self.solver!r} needs max_iter >= 1; got "
                             f"{self.max_iter}.")
        sizes = self.hidden_layer_sizes
        if not len(sizes) or any(isinstance(h, (bool, np.bool_)) or not isinstance(h, Integral)
                                 or h < 1 for h in sizes):
            # 6.0 and True compare equal to ints but are not layer widths
            raise ValueError("hidden_layer_sizes must be a non-empty tuple of positive ints; "
                             f"got {sizes!r}.")
        if self.problem is None:
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, multi_output=True,
                                 ensure_min_samples=2)
            X = _writeable(X)
        else:
            X = _writeable(validate_data(self, X, dtype=np.float64))
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
        self._y_1d_ = y is not None and y.ndim == 1
        self.n_outputs_ = self.problem.n_outputs if self.problem is not None else y2.shape[1]

        # input map and target scaling
        if self.problem is None:
            lo, rng = X.min(axis=0), np.ptp(X, axis=0)
            rng = np.where(rng > 0, rng, 1.0)
            # moments on power-of-two pre-scaled targets (the package's one mechanism): no
            # overflow of the squares near 1e300, no underflow near 1e-300; bitwise the plain
            # moments otherwise
            self.y_mean_, scale, _ = _robust_mean_std(y2, axis=0)
            self.y_scale_ = np.where(scale > 0, scale, 1.0)
            y_fit = _standardize(y2, self.y_mean_, self.y_scale_)
        else:
            lo = np.array([b[0] for b in self.problem.bounds])
            rng = np.array([b[1] - b[0] for b in self.problem.bounds])
            self.y_mean_ = np.zeros(self.n_outputs_)
            self.y_scale_ = np.ones(self.n_outputs_)
            y_fit = y2
        if not self.input_scaling:
            lo, rng = np.zeros_like(lo), np.ones_like(rng)

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
        self.X_train_ = X
        self.y_train_ = y2
        # fit-time data of the network and the objective; not kept after fit
        context = FitContext(shift=lo, scale=rng, coefs=coefs,
                             target=None if y_fit is None else np.nan_to_num(y_fit))
        if self.solver == "lstsq":
            self._fit_lstsq(X, mask, context)
        else:
            self._fit_iterative(X, mask, context)
        return self

    def _fit_iterative(self, X, mask, context):
        """Adam, then L-BFGS, on the full batch, under the package's divergence guard."""
        self._check_device()
        name = type(self).__name__
        dtype, device = self._torch_dtype, torch.device(self.device)
        n_adam = self.max_epochs if self.solver in ("adam", "adam+lbfgs") else 0
        n_lbfgs = self.max_iter if self.solver in ("lbfgs", "adam+lbfgs") else 0
        lbfgs_options = self._lbfgs_options() if self.solver == "lbfgs" else {}
        with seeded_torch(self.random_state, device):
            net = self._build_module(X.shape[1], self.n_outputs_, context).to(device)
            Xt = torch.as_tensor(self._as_input(X), device=device)
            Mt = torch.as_tensor(mask, dtype=dtype, device=device)
            Yt = (None if context.target is None
                  else torch.as_tensor(self._as_input(context.target), device=device))
            coefs = torch.as_tensor(context.coefs, dtype=dtype, device=device)

            def objective():
                rho = batched_residuals(net, self.problem, Xt, Mt, Yt)
                return (rho**2 * coefs).sum(dim=1).mean()

            params = [p for p in net.parameters() if p.requires_grad]
            # one guard over both stages: the L-BFGS iterations continue the step count
            guard = DivergenceGuard(net, name, unit="step")
            curve = []
            if n_adam:
                optimizer = make_optimizer(self, params)
                logger = EpochLogger(self.verbose, n_adam, name=f"{name} Adam")
                for epoch in range(1, n_adam + 1):
                    optimizer.zero_grad()
                    loss = objective()
                    if guard.observe(loss):  # non-finite: the last finite state is back
                        break
                    loss.backward()
                    optimizer.step()
                    value = float(loss.detach())
                    curve.append(value)
                    logger.log(epoch, train_loss=value)
                    if guard.checkpoint(epoch, loss=value):
                        break
            final_loss = None
            if n_lbfgs and not guard.stopped:
                steps = _lbfgs_steps(params, objective, n_lbfgs, lbfgs_options)
                # the objective at the starting point checks the state Adam ended with
                if not guard.observe(next(steps)):
                    logger = EpochLogger(self.verbose, n_lbfgs, name=f"{name} L-BFGS",
                                         unit="iteration")
                    for k, value in enumerate(steps, start=1):
                        curve.append(value)
                        logger.log(k, train_loss=value)
                        # the accepted loss is that of the state just reached
                        if guard.checkpoint(n_adam + k, loss=value) or guard.observe(value):
                            break
                steps.close()
            elif not guard.stopped:
                with torch.enable_grad():  # the residual differentiates u in x
                    final_loss = float(objective().detach())
            self.n_iter_ = guard.finish(final_loss=final_loss)
        self.module_ = net
        self.loss_curve_ = curve[: self.n_iter_]

    def _lbfgs_options(self):
        """The L-BFGS settings of ``optimizer_params`` (``solver="lbfgs"``), validated."""
        params = self.optimizer_params or {}
        unknown = sorted(set(params) - set(_LBFGS_OPTIONS))
        if unknown:
            raise ValueError(f"optimizer_params key(s) {unknown} are not L-BFGS settings of "
                             f"solver='lbfgs'; it accepts {list(_LBFGS_OPTIONS)}.")
        return dict(params)

    def _fit_lstsq(self, X, mask, context):
        """The exact weighted least-squares output layer of a random-feature PINN."""
        self._check_device()
        dtype = self._torch_dtype
        with seeded_torch(self.random_state, self.device):
            net = self._build_module(X.shape[1], self.n_outputs_, context).to(self.device)
        Xt = torch.as_tensor(self._as_input(X), device=self.device)
        Mt = torch.as_tensor(mask, dtype=dtype, device=self.device)
        target = context.target
        Yt = None if target is None else torch.as_tensor(target, dtype=dtype, device=self.device)
        rho, J = per_point_jacobians(net, self.problem, Xt, Mt, Yt, chunk_size=1024)
        theta0 = torch.cat([p.detach().reshape(-1) for p in net.parameters() if p.requires_grad])
        # residuals are affine in the output layer: rho = J theta - b
        b = (J @ theta0 - rho)
        w = torch.as_tensor(np.sqrt(context.coefs), dtype=dtype, device=self.device)
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
        resid = A @ theta - rhs
        self.loss_curve_ = [float(resid @ resid) / X.shape[0]]
        self.n_iter_ = 1

    # -- prediction ----------------------------------------------------------------------------
    def _check_X(self, X, name="X"):
        check_is_fitted(self)
        X = _writeable(validate_data(self, X, reset=False, dtype=np.float64))
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
        if self.n_outputs_ == 1 and (self.problem is not None or self._y_1d_):
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
        return self._physics_residuals(X, self._physics_mask(X))

    def _physics_mask(self, X):
        """``(n, n_physics_terms)`` membership of ``X`` in the PDE and condition terms."""
        n_pde = sum(k.startswith("pde") for k in self.loss_term_names_)
        return np.column_stack([np.ones((X.shape[0], n_pde), bool),
                                *[m[:, None] for m in self._condition_mask(X)]])

    def _physics_residuals(self, X, mask):
        out = []
        dtype = next(self.module_.parameters()).dtype
        for start in range(0, X.shape[0], 4096):
            x = torch.as_tensor(X[start : start + 4096], dtype=dtype, device=self.device)
            m = torch.as_tensor(mask[start : start + 4096], dtype=dtype, device=self.device)
            with torch.enable_grad():
                r = batched_residuals(self.module_, self.problem, x, m)
            out.append(r.detach().cpu().numpy().astype(np.float64))
        return np.concatenate(out)

    def score(self, X, y=None, sample_weight=None):
        """Coefficient of determination (``problem=None``), or minus the residual loss at ``X``.

        With ``problem=None`` this is :meth:`~sklearn.base.RegressorMixin.score`, the
        :math:`R^2` of ``predict(X)`` against ``y``. With a problem it is
        ``-sum_k mean_{i in S_k} rho_k(x_i)^2`` over the PDE and condition terms (``S_k`` the
        points of ``X`` on term ``k``; a condition no point of ``X`` lies on adds 0), plus,
        when ``y`` is given, the mean squared error of ``predict(X)`` against its observed
        (non-NaN) entries: higher is better and 0 is a perfect fit, so that
        :class:`~sklearn.model_selection.GridSearchCV` and ``cross_val_score`` can rank PINNs
        on held-out collocation points without a target. Every term weighs 1 whatever
        ``loss_weights`` and ``loss_reduction`` (which would otherwise change the scale of the
        score between the candidates of a search over them).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_inputs)
            Test points (inside ``problem.bounds`` when a problem is set).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs), default=None
            Targets; required when ``problem=None``. With a problem, observed values of ``u``
            (NaN where unobserved), optional.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the points in every mean.

        Returns
        -------
        score : float
            :math:`R^2` (``problem=None``), else minus the mean squared residuals.

        Raises
        ------
        ValueError
            If ``X`` is invalid, ``y`` or ``sample_weight`` has the wrong shape, or ``y`` is
            None with ``problem=None``.
        """
        if self.problem is None:
            if y is None:
                raise ValueError("score needs y when problem=None (it is the R^2 of the "
                                 "regression); got y=None.")
            return super().score(X, y, sample_weight=sample_weight)
        from sklearn.utils import check_array

        from .._compat import _check_sample_weight

        X = self._check_X(X)
        sw = _check_sample_weight(sample_weight, X)
        mask = self._physics_mask(X)
        rho = self._physics_residuals(X, mask)
        loss = 0.0
        for k in range(mask.shape[1]):
            w = sw * mask[:, k]
            if w.sum() > 0:
                loss += float(np.average(rho[:, k] ** 2, weights=w))
        if y is not None:
            y = check_array(y, dtype=np.float64, ensure_2d=False, ensure_all_finite="allow-nan",
                            input_name="y")
            y2 = y.reshape(-1, 1) if y.ndim == 1 else y
            if y2.shape != (X.shape[0], self.n_outputs_):
                raise ValueError(f"y must have shape ({X.shape[0]}, {self.n_outputs_}) (or "
                                 f"({X.shape[0]},) for one output); got {y.shape}.")
            pred = self.predict(X).reshape(X.shape[0], -1)
            for j in range(self.n_outputs_):
                w = sw * ~np.isnan(y2[:, j])
                if w.sum() > 0:
                    err = np.where(np.isnan(y2[:, j]), 0.0, pred[:, j] - y2[:, j])
                    loss += float(np.average(err**2, weights=w))
        return -loss

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
