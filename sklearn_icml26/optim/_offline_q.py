"""Offline Q-learning critic with collapse diagnostics (testbed of AdamO)."""

import copy
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.metrics import r2_score
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data
from torch import nn

from .._compat import Interval, StrOptions, _fit_context
from ..base import (
    DivergenceGuard,
    EpochLogger,
    TorchEstimatorMixin,
    _rose_hundredfold,
    make_optimizer,
    seeded_torch,
)
from ..utils._docstrings import Substitution, _torch_docstrings
from ..utils._scaling import _robust_mean_std, _standardize
from ._spectral import td_spectral_radius

__all__ = ["OfflineQRegressor"]

_CHECK_EVERY = 100  # steps between the divergence guard's checkpoints (state copies)


class _QNetwork(nn.Module):
    """MLP from states to one Q-value per action, optionally with LayerNorm after each layer."""

    def __init__(self, n_in, hidden, n_actions, layer_norm):
        super().__init__()
        layers, prev = [], n_in
        for width in hidden:
            layers.append(nn.Linear(prev, width))
            if layer_norm:
                layers.append(nn.LayerNorm(width))
            layers.append(nn.ReLU())
            prev = width
        layers.append(nn.Linear(prev, n_actions))
        self.body = nn.Sequential(*layers)

    def forward(self, s):
        return self.body(s)


def _isometry_penalty(module):
    """``sum_W R(W)`` over the weight blocks ``W`` with both sides >= 2 (AdamO's scope).

    ``R(W) = ||W W^T - I||_F^2 / 4`` with the smaller Gram matrix (AdamO's isometry penalty,
    ``optim._adamo.orthogonality_residual`` is its gradient).
    """
    total = 0.0
    for p in module.parameters():
        if p.ndim == 2 and min(p.shape) >= 2:
            gram = p @ p.T if p.shape[0] < p.shape[1] else p.T @ p
            eye = torch.eye(gram.shape[0], dtype=p.dtype, device=p.device)
            total = total + 0.25 * ((gram - eye) ** 2).sum()
    return total


class _StateActionCritic(nn.Module):
    """Q(s, a) of a Q-network on rows ``[s, onehot(a)]`` (a zero one-hot gives 0)."""

    def __init__(self, qnet, n_state):
        super().__init__()
        self.qnet = qnet
        self.n_state = n_state

    def forward(self, x):
        return (self.qnet(x[:, : self.n_state]) * x[:, self.n_state:]).sum(dim=1)


def _check_actions(actions, n_samples, n_actions):
    a = np.asarray(actions)
    if a.ndim != 1 or a.shape[0] != n_samples:
        raise ValueError(f"actions must have shape ({n_samples},), one action per state; got "
                         f"shape {a.shape}")
    if a.dtype.kind not in "iub":
        af = np.asarray(a, dtype=np.float64) if a.dtype.kind == "f" else None
        if af is None or not np.all(np.isfinite(af)) or np.any(af != np.round(af)):
            raise ValueError(f"actions must be integer action indices; got dtype {a.dtype}")
    a = a.astype(np.int64)
    if n_actions is not None and (a.min() < 0 or a.max() >= n_actions):
        raise ValueError(f"actions must be in [0, n_actions) = [0, {n_actions}); got values in "
                         f"[{a.min()}, {a.max()}]")
    if a.min() < 0:
        raise ValueError(f"actions must be non-negative indices; got minimum {a.min()}")
    return a


def _check_terminals(terminals, n_samples):
    t = np.asarray(terminals)
    if t.ndim != 1 or t.shape[0] != n_samples:
        raise ValueError(f"terminals must have shape ({n_samples},); got shape {t.shape}")
    if t.dtype == bool:
        return t
    if t.dtype.kind in "iuf" and np.all(np.isin(t, (0, 1))):
        return t.astype(bool)
    raise ValueError("terminals must be boolean (True/False or 0/1); got dtype "
                     f"{t.dtype} with values {np.unique(t)[:5]}")


@Substitution(**_torch_docstrings)
class OfflineQRegressor(TorchEstimatorMixin, RegressorMixin, BaseEstimator):
    """Offline Q-learning critic with divergence detection and spectral diagnostics.

    Fits ``Q(s, a)`` on logged transitions ``(s, a, r, s', done)`` by minimising the mean
    squared TD error ``(Q(s, a) - r - gamma (1 - done) max_a' Q_bar(s', a'))^2`` over random
    mini-batches, where ``Q_bar`` is the online network itself (``target_update="none"``), a
    Polyak average or a periodic copy. It is the testbed of :class:`~sklearn_icml26.optim.AdamO`
    (Qiao et al., ICML 2026): bootstrapped critics trained by Adam on narrow data collapse
    (``max |Q|`` grows far beyond any achievable return); AdamO, a LayerNorm critic or a target
    network are the remedies to compare. Every ``diagnose_every`` steps
    :func:`~sklearn_icml26.optim.td_spectral_radius` records the spectral radius ``rho`` of the
    linearised Adam-TD dynamics and the largest real part of the eigenvalues of ``S``, computed
    with the online network on a fixed probe set (with a target network the linearisation is
    that of the online update, an approximation).

    A fit that blows up follows the package's one divergence policy
    (:class:`~sklearn_icml26.base.DivergenceGuard`, unit: the step): at a non-finite loss
    training stops and the networks get back their last checked state whose loss was finite
    (checked every 100 steps); a loss that ends a hundredfold above its first value is a
    finite divergence, whose state is kept. Both issue the package's one
    :class:`~sklearn.exceptions.ConvergenceWarning`. A collapse (``max |Q|`` over a batch
    beyond ``divergence_threshold * q_bound_`` once the loss has risen a hundredfold) is
    such a finite divergence; training stops there instead of running on. ``diverged_`` and
    ``divergence_step_`` record it. See the :ref:`User Guide <user_guide_optim>`.

    Without ``next_states`` the target is the reward alone: plain supervised regression of
    ``y`` on ``X`` (``S = -K`` is negative semidefinite, the stable case), with one action
    unless ``actions`` are given; this mode is what scikit-learn's estimator checks run.
    Targets are standardised internally in supervised mode and divided by ``max |y|`` in TD
    mode (Q is positively homogeneous in the rewards), and mapped back in every output.

    The training loop is the estimator's own rather than the shared skorch adapter's, because
    the regression targets change at every step (they bootstrap on the network or its target
    copy) and the loop interleaves target updates, divergence checks and diagnostics with the
    optimizer steps; the optimizer, its parameters, precision, device and seeding follow the
    adapter's shared knobs.

    Parameters
    ----------
    gamma : float, default=0.99
        Discount ``gamma`` in [0, 1).
    n_actions : int or None, default=None
        Number of discrete actions; ``None`` infers ``max(actions) + 1`` (1 without
        ``actions``).
    hidden_layer_sizes : array-like of int, default=(256, 256)
        Widths of the hidden ReLU layers.
    layer_norm : bool, default=False
        Put a LayerNorm after every hidden linear layer (a known remedy of the collapse).
    target_update : {"none", "polyak", "hard"}, default="polyak"
        Bootstrap on the online network (``"none"``), on a Polyak average updated by
        ``polyak_tau`` after every step, or on a copy refreshed every ``hard_update_every``
        steps.
    polyak_tau : float, default=0.005
        Polyak rate in (0, 1].
    hard_update_every : int, default=1000
        Steps between copies of the ``"hard"`` target.
    orthogonality_penalty : float, default=0.0
        Weight ``lambda`` of the isometry penalty ``lambda sum_W R(W)`` added to the TD loss,
        with ``R(W) = ||W W^T - I||_F^2 / 4`` (smaller Gram matrix) over the weight blocks
        with both sides >= 2: the *coupled* form of the correction that
        :class:`~sklearn_icml26.optim.AdamO` applies decoupled from Adam's moments (an
        ablation of it; see the :ref:`User Guide <user_guide_optim>`). 0 turns it off.
    optimizer : {"adam", "adamw", "sgd", "rmsprop", "adamo"} or torch optimizer class, \
default="adam"
        {optimizer}
    optimizer_params : dict or None, default=None
        {optimizer_params}
    lr : float, default=1e-3
        {lr}
    batch_size : int, default=256
        {batch_size}
        A step draws its batch of transitions uniformly with replacement.
    max_iter : int, default=20000
        Number of optimizer steps, each on a freshly drawn batch of transitions.
    diagnose_every : int, default=1000
        Steps between spectral diagnostics (step 0 included); 0 turns them off.
    diagnose_points : int, default=256
        Size of the fixed probe set of the diagnostics (at most the number of samples).
    divergence_threshold : float, default=100.0
        A collapse: ``max |Q| > divergence_threshold * q_bound_`` (> 0) over a step's batch
        while the loss is a hundredfold or more above its first value (the package's rule of
        a finite divergence). Training stops there with the divergence warning and keeps its
        state.
    precision : {"float32", "float64"}, default="float32"
        {precision}
    device : str, default="cpu"
        {device}
    random_state : int, RandomState instance or None, default=None
        {random_state}
    verbose : int, default=0
        {verbose_steps}
        A line shows the TD loss, ``max |Q|``, and ``rho`` on a diagnostic step.

    Attributes
    ----------
    module_ : torch.nn.Module
        The trained Q-network, states ``(n, n_features_in_)`` to Q-values ``(n, n_actions_)``,
        in the internal (scaled) units.
    target_module_ : torch.nn.Module or None
        The target network, or None with ``target_update="none"``.
    optimizer_ : torch.optim.Optimizer
        The optimizer after training (its state holds Adam's moments).
    n_features_in_ : int
        State dimension.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Input column names, when ``X`` had string column names.
    n_actions_ : int
        Number of actions.
    q_bound_ : float
        ``max |y| / (1 - gamma)`` in TD mode, ``max |y|`` in supervised mode: the largest
        achievable ``|Q|``.
    td_mode_ : bool
        Whether ``next_states`` were given (bootstrapped targets).
    q_max_curve_ : ndarray of shape (n_iter_,)
        ``max |Q(s, a)|`` over each step's batch, in the units of ``y``.
    loss_curve_ : list of float
        Mean squared TD error of each step's batch (before the step), ``n_iter_`` values, in
        the units of ``y`` squared (inf where those overflow, ``|y|`` beyond about 1e154).
    diagnose_steps_ : ndarray of shape (n_diagnostics,)
        Steps at which the diagnostics ran (before that step's update; those of the kept
        state).
    rho_curve_ : ndarray of shape (n_diagnostics,)
        Spectral radius of the augmented operator ``A(eta)``.
    max_real_eig_curve_ : ndarray of shape (n_diagnostics,)
        Largest real part of the eigenvalues of ``S``.
    isometry_defect_curve_ : ndarray of shape (n_diagnostics,)
        ``||Phi^T Phi - I||_2`` on the probe set.
    diverged_ : bool
        Whether the fit diverged (and warned): a non-finite loss, a collapse past
        ``divergence_threshold`` or a hundredfold rise of the loss.
    divergence_step_ : int or None
        The step at which training stopped on a divergence (None when it ran ``max_iter``
        steps).
    n_iter_ : int
        Steps whose state is kept: ``max_iter``, the step of a collapse, or after a
        non-finite loss the step of the restored state (0: the initial one).

    Raises
    ------
    ValueError
        On ``actions`` that are not integer indices in ``[0, n_actions)``, ``next_states`` not
        of the shape of ``X`` or not finite, ``terminals`` that are not boolean or given
        without ``next_states``, ``next_states`` without ``actions``, a ``gamma`` outside
        [0, 1) and other invalid parameters (each error names the argument).

    See Also
    --------
    AdamO : The collapse-suppressed optimizer.
    td_spectral_radius : The stability diagnostic.
    sklearn_icml26.datasets.make_offline_rl_dataset : Logged transitions to fit on.

    References
    ----------
    .. [1] Qiao, Yue, Wang and Ren, "AdamO: A Collapse-Suppressed Optimizer for Offline RL",
       ICML 2026, arXiv:2605.01968.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_offline_rl_dataset
    >>> from sklearn_icml26.optim import OfflineQRegressor
    >>> data = make_offline_rl_dataset(n_transitions=500, random_state=0)
    >>> critic = OfflineQRegressor(hidden_layer_sizes=(32,), max_iter=50, batch_size=64,
    ...                            diagnose_every=25, diagnose_points=32, random_state=0)
    >>> critic = critic.fit(data.states, data.rewards, actions=data.actions,
    ...                     next_states=data.next_states, terminals=data.terminals)
    >>> critic.n_actions_, critic.predict_q(data.states[:2]).shape, len(critic.rho_curve_)
    (4, (2, 4), 2)
    """

    _parameter_constraints = {
        **{k: v for k, v in TorchEstimatorMixin._torch_parameter_constraints.items()
           if k != "max_epochs"},
        "gamma": [Interval(Real, 0, 1, closed="left")],
        "n_actions": [Interval(Integral, 1, None, closed="left"), None],
        "hidden_layer_sizes": ["array-like"],
        "layer_norm": ["boolean"],
        "target_update": [StrOptions({"none", "polyak", "hard"})],
        "polyak_tau": [Interval(Real, 0, 1, closed="right")],
        "hard_update_every": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "diagnose_every": [Interval(Integral, 0, None, closed="left")],
        "diagnose_points": [Interval(Integral, 1, None, closed="left")],
        "divergence_threshold": [Interval(Real, 0, None, closed="neither")],
        "orthogonality_penalty": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, gamma=0.99, n_actions=None, *, hidden_layer_sizes=(256, 256),
                 layer_norm=False, target_update="polyak", polyak_tau=0.005,
                 hard_update_every=1000, orthogonality_penalty=0.0, optimizer="adam",
                 optimizer_params=None, lr=1e-3, batch_size=256, max_iter=20000,
                 diagnose_every=1000, diagnose_points=256, divergence_threshold=100.0,
                 precision="float32", device="cpu", random_state=None, verbose=0):
        self.gamma = gamma
        self.n_actions = n_actions
        self.hidden_layer_sizes = hidden_layer_sizes
        self.layer_norm = layer_norm
        self.target_update = target_update
        self.polyak_tau = polyak_tau
        self.hard_update_every = hard_update_every
        self.orthogonality_penalty = orthogonality_penalty
        self.optimizer = optimizer
        self.optimizer_params = optimizer_params
        self.lr = lr
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.diagnose_every = diagnose_every
        self.diagnose_points = diagnose_points
        self.divergence_threshold = divergence_threshold
        self.precision = precision
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    @classmethod
    def _get_test_params(cls):
        # full batch: sample orders and subsets give the same fit; 30 Adam steps at lr 0.1
        # pass the common score checks on standardised targets (R^2 0.85)
        return [dict(hidden_layer_sizes=(16,), max_iter=30, batch_size=-1, lr=0.1,
                     diagnose_every=0, precision="float64", random_state=0)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags

    def _check_hidden(self):
        hidden = np.asarray(self.hidden_layer_sizes)
        if hidden.ndim != 1 or hidden.dtype.kind not in "iu" or np.any(hidden < 1):
            raise ValueError("hidden_layer_sizes must be a sequence of positive ints; got "
                             f"{self.hidden_layer_sizes!r}")
        return [int(h) for h in hidden]

    def _validate_transitions(self, X, actions, next_states, terminals, n_actions):
        n = X.shape[0]
        if next_states is None:
            if terminals is not None:
                raise ValueError("terminals were given without next_states; pass next_states "
                                 "for TD targets or neither for supervised regression")
            a = (np.zeros(n, dtype=np.int64) if actions is None
                 else _check_actions(actions, n, n_actions))
            return a, None, None
        if actions is None:
            raise ValueError("next_states were given without actions; TD targets need the "
                             "logged action of every transition")
        a = _check_actions(actions, n, n_actions)
        s2 = np.asarray(next_states)
        if s2.shape != X.shape:
            raise ValueError(f"next_states must have the shape of X {X.shape}; got shape "
                             f"{s2.shape}")
        try:
            s2 = s2.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"next_states must be numeric; got dtype {s2.dtype}") from exc
        if not np.all(np.isfinite(s2)):
            raise ValueError("next_states contains NaN or infinity")
        done = (np.zeros(n, dtype=bool) if terminals is None
                else _check_terminals(terminals, n))
        return a, s2, done

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, actions=None, next_states=None, terminals=None):
        """Fit the critic on logged transitions (or on ``(X, y)`` without ``next_states``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            States ``s``.
        y : array-like of shape (n_samples,)
            Rewards ``r`` (the regression targets in supervised mode).
        actions : array-like of int of shape (n_samples,), default=None
            Logged actions in ``[0, n_actions)``; required with ``next_states``. A fit
            parameter with metadata routing (``set_fit_request(actions=True)``).
        next_states : array-like of shape (n_samples, n_features), default=None
            Next states ``s'``; ``None`` is supervised regression. Routed like ``actions``.
        terminals : array-like of bool of shape (n_samples,), default=None
            Whether ``s'`` ends the episode (no bootstrap); ``None`` is all False. Routed like
            ``actions``.

        Returns
        -------
        self : OfflineQRegressor
            The fitted critic.
        """
        self._check_device()
        hidden = self._check_hidden()
        X, y = validate_data(self, X, y, y_numeric=True, ensure_min_samples=2,
                             dtype=np.float64)
        a, s2, done = self._validate_transitions(X, actions, next_states, terminals,
                                                 self.n_actions)
        n, d = X.shape
        self.td_mode_ = s2 is not None
        self.n_actions_ = int(self.n_actions if self.n_actions is not None
                              else (a.max() + 1 if actions is not None else 1))
        y_abs = float(np.max(np.abs(y)))
        if self.td_mode_:
            self.y_mean_, self.y_scale_ = 0.0, (y_abs if y_abs > 0 else 1.0)
            self.q_bound_ = y_abs / (1 - self.gamma)
            # internal units: |Q| of at most 1 / (1 - gamma)
            offset, bound = 0.0, 1.0 / (1 - self.gamma)
        else:
            # moments on power-of-two pre-scaled values: no overflow of y**2 near 1e300, no
            # underflow to a zero std near 1e-300
            mean, std, _ = _robust_mean_std(y)
            self.y_mean_, self.y_scale_ = float(mean), (float(std) if std > 0 else 1.0)
            self.q_bound_ = y_abs
            offset = self.y_mean_ / self.y_scale_
            bound = y_abs / self.y_scale_ if y_abs > 0 else 1.0
        # max |Q| > divergence_threshold * q_bound_ (units of y), checked in the internal
        # units (|Q_int + offset| > limit), which do not overflow; q_bound_ = 0 (an all-zero
        # y) falls back to the scale of the internal units
        limit = self.divergence_threshold * bound
        rng = check_random_state(self.random_state)
        dtype, device = self._torch_dtype, torch.device(self.device)

        def t(a_, dt=dtype):
            return torch.tensor(a_, dtype=dt, device=device)

        S, A = t(X), t(a, torch.int64)
        R = t(_standardize(y, self.y_mean_, self.y_scale_))
        S2 = t(s2) if self.td_mode_ else None
        notdone = t(~done) if self.td_mode_ else None
        batch = n if self.batch_size == -1 else int(self.batch_size)
        name = type(self).__name__
        q_hist, loss_hist, diag, window = [], [], [], []
        self.diverged_, self.divergence_step_ = False, None
        with seeded_torch(rng, device) as seed:  # one draw of rng, then the probe set
            probe = np.sort(rng.choice(n, min(self.diagnose_points, n), replace=False))
            net = _QNetwork(d, hidden, self.n_actions_, self.layer_norm).to(dtype).to(device)
            target = None
            if self.td_mode_ and self.target_update != "none":
                target = copy.deepcopy(net)
                target.requires_grad_(False)
            opt = make_optimizer(self, net.parameters())
            gen = torch.Generator(device=device).manual_seed(seed)
            guard = DivergenceGuard([net] if target is None else [net, target], name,
                                    unit="step")
            logger = EpochLogger(self.verbose, self.max_iter, name, unit="step")

            def batch_loss(idx):
                q = net(S[idx]).gather(1, A[idx, None])[:, 0]
                if self.td_mode_:
                    with torch.no_grad():
                        boot = (target if target is not None else net)(S2[idx])
                        y_t = R[idx] + self.gamma * notdone[idx] * boot.max(dim=1).values
                else:
                    y_t = R[idx]
                td = torch.mean((q - y_t) ** 2)
                loss = td
                if self.orthogonality_penalty:
                    loss = td + self.orthogonality_penalty * _isometry_penalty(net)
                return q, td, loss

            for step in range(1, self.max_iter + 1):
                rho = None
                if self.diagnose_every and (step - 1) % self.diagnose_every == 0:
                    diag.append(self._diagnose(net, target, opt, S, A, S2, notdone, probe,
                                               step - 1, seed))
                    rho = diag[-1][1]
                idx = torch.randint(n, (batch,), generator=gen, device=device)
                q, td, loss = batch_loss(idx)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                if target is not None:
                    with torch.no_grad():
                        if self.target_update == "polyak":
                            for pt, p in zip(target.parameters(), net.parameters(),
                                             strict=True):
                                pt.lerp_(p, self.polyak_tau)
                        elif step % self.hard_update_every == 0:
                            target.load_state_dict(net.state_dict())
                qd = q.detach()
                q_int = max(abs(float(qd.max()) + offset), abs(float(qd.min()) + offset))
                td_int = float(td.detach())
                with np.errstate(over="ignore"):  # the units of y may not hold |y| > 1e154
                    q_hist.append(float(np.float64(q_int) * self.y_scale_))
                    loss_hist.append(float(np.float64(td_int) * np.float64(self.y_scale_) ** 2))
                if guard.observe(loss):  # non-finite: last validated state restored
                    self.diverged_, self.divergence_step_ = True, step
                    break
                window.append(float(loss.detach()))
                # collapse: max |Q| past the threshold while the loss has risen a hundredfold
                # (the guard's rule for a finite divergence, so that it warns): stop here
                collapsed = q_int > limit and _rose_hundredfold(guard.first_loss_,
                                                                float(np.mean(window)))
                if collapsed or step % _CHECK_EVERY == 0 or step == self.max_iter:
                    if guard.checkpoint(step, loss=float(np.mean(window))):
                        self.diverged_, self.divergence_step_ = True, step
                        break
                    window = []
                if logger.selected(step):
                    logger.log(step, td_loss=td_int, max_q=q_hist[-1], rho=rho)
                if collapsed:
                    self.diverged_, self.divergence_step_ = True, step
                    break
            if not guard.stopped:
                with torch.no_grad():  # the final state on the last batch validates it
                    final = batch_loss(idx)[2]
            rose = _rose_hundredfold(guard.first_loss_, guard.last_loss_)
            self.n_iter_ = guard.finish(final_loss=None if guard.stopped else final)
        self.diverged_ = bool(guard.stopped or self.diverged_ or rose)
        self.module_, self.target_module_, self.optimizer_ = net, target, opt
        # the records of the steps whose state is kept
        self.q_max_curve_ = np.asarray(q_hist[:self.n_iter_], dtype=np.float64)
        self.loss_curve_ = [float(v) for v in loss_hist[:self.n_iter_]]
        diag = np.asarray(diag, dtype=np.float64).reshape(-1, 4)
        diag = diag[diag[:, 0] <= self.n_iter_]
        self.diagnose_steps_ = diag[:, 0].astype(np.int64)
        self.rho_curve_, self.max_real_eig_curve_ = diag[:, 1], diag[:, 2]
        self.isometry_defect_curve_ = diag[:, 3]
        return self

    def _diagnose(self, net, target, opt, S, A, S2, notdone, probe, step, seed):
        n_act = self.n_actions_
        p = torch.as_tensor(probe, device=S.device)
        onehot = torch.nn.functional.one_hot(A[p], n_act).to(S.dtype)
        X_sa = torch.cat([S[p], onehot], dim=1)
        if self.td_mode_:
            with torch.no_grad():
                a2 = (target if target is not None else net)(S2[p]).argmax(dim=1)
            onehot2 = torch.nn.functional.one_hot(a2, n_act).to(S.dtype) * notdone[p, None]
            X_next = torch.cat([S2[p], onehot2], dim=1)
            gamma = self.gamma
        else:
            X_next, gamma = X_sa, 0.0
        beta1 = opt.param_groups[0].get("betas", (0.0,))[0]
        out = td_spectral_radius(_StateActionCritic(net, S.shape[1]), X_sa, X_next,
                                 gamma=gamma, lr=self.lr, beta1=beta1, optimizer=opt,
                                 max_points=len(probe), random_state=seed)
        return (step, out["rho"], out["max_real_eig_S"], out["isometry_defect"])

    def _q_numpy(self, X, module=None):
        module = self.module_ if module is None else module
        dtype, device = self._torch_dtype, torch.device(self.device)
        module.eval()
        with torch.no_grad():
            q = module(torch.tensor(np.asarray(X, np.float64), dtype=dtype, device=device))
        module.train()
        return q.cpu().numpy().astype(np.float64) * self.y_scale_ + self.y_mean_

    def predict_q(self, X):
        """Q-values of every action.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            States.

        Returns
        -------
        q : ndarray of shape (n_samples, n_actions_)
            ``Q(s, a)`` in the units of ``y``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._q_numpy(X)

    def predict(self, X):
        """State values ``max_a Q(s, a)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            States.

        Returns
        -------
        v : ndarray of shape (n_samples,)
            ``max_a Q(s, a)``; in supervised mode with one action, the regression prediction.
        """
        return self.predict_q(X).max(axis=1)

    def predict_action(self, X):
        """Greedy actions ``argmax_a Q(s, a)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            States.

        Returns
        -------
        actions : ndarray of int of shape (n_samples,)
            The greedy action of each state.
        """
        return self.predict_q(X).argmax(axis=1)

    def td_error(self, X, y, *, actions, next_states, terminals=None):
        """TD errors ``Q(s, a) - r - gamma (1 - done) max_a' Q(s', a')`` of the online network.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            States.
        y : array-like of shape (n_samples,)
            Rewards.
        actions : array-like of int of shape (n_samples,)
            Actions in ``[0, n_actions_)``.
        next_states : array-like of shape (n_samples, n_features)
            Next states.
        terminals : array-like of bool of shape (n_samples,), default=None
            Episode ends; ``None`` is all False.

        Returns
        -------
        td_error : ndarray of shape (n_samples,)
            In the units of ``y``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if y.shape != (X.shape[0],):
            raise ValueError(f"y must have shape ({X.shape[0]},); got {y.shape}")
        a, s2, done = self._validate_transitions(X, actions, next_states, terminals,
                                                 self.n_actions_)
        q = self._q_numpy(X)[np.arange(X.shape[0]), a]
        v_next = self._q_numpy(s2).max(axis=1)
        return q - y - self.gamma * (~done) * v_next

    def score(self, X, y, sample_weight=None, *, actions=None, next_states=None,
              terminals=None):
        """Coefficient of determination R^2 of what the critic was fitted to.

        In supervised mode (fitted without ``next_states``): the R^2 of :meth:`predict` (of
        ``Q(s, a)`` when ``actions`` are given) against ``y``. In TD mode: the R^2 of
        ``Q(s, a)`` against the one-step TD targets ``r + gamma (1 - done) max_a' Q(s', a')``
        of the online network, which needs the transitions; ``actions``, ``next_states`` and
        ``terminals`` are score parameters with metadata routing
        (``set_score_request(actions=True, next_states=True, terminals=True)``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            States.
        y : array-like of shape (n_samples,)
            Rewards (the regression targets in supervised mode).
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights of the R^2.
        actions : array-like of int of shape (n_samples,), default=None
            Logged actions; required in TD mode.
        next_states : array-like of shape (n_samples, n_features), default=None
            Next states; required in TD mode, not accepted in supervised mode.
        terminals : array-like of bool of shape (n_samples,), default=None
            Episode ends; ``None`` is all False.

        Returns
        -------
        score : float
            R^2 (1 is a perfect fit).

        Raises
        ------
        ValueError
            In TD mode without ``actions`` or ``next_states``, with ``next_states`` in
            supervised mode, or on malformed transitions.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if y.shape != (X.shape[0],):
            raise ValueError(f"y must have shape ({X.shape[0]},); got {y.shape}")
        if self.td_mode_ and (actions is None or next_states is None):
            raise ValueError(
                "score of a critic fitted on transitions (td_mode_=True) is the R^2 of "
                "Q(s, a) against the TD targets r + gamma (1 - done) max_a' Q(s', a') and "
                "needs actions and next_states; with metadata routing, "
                "set_score_request(actions=True, next_states=True, terminals=True)")
        if not self.td_mode_ and next_states is not None:
            raise ValueError("next_states were given to score a critic fitted without them "
                             "(supervised mode, td_mode_=False); refit with next_states or "
                             "score without them")
        a, s2, done = self._validate_transitions(X, actions, next_states, terminals,
                                                 self.n_actions_)
        q = self._q_numpy(X)
        if self.td_mode_:
            pred = q[np.arange(X.shape[0]), a]
            target = y + self.gamma * (~done) * self._q_numpy(s2).max(axis=1)
        else:
            pred = q[np.arange(X.shape[0]), a] if actions is not None else q.max(axis=1)
            target = y
        return float(r2_score(target, pred, sample_weight=sample_weight))
