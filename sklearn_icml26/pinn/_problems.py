"""PDE problems for physics-informed neural networks: the problem definition and two examples.

A :class:`PDEProblem` states the domain, which partial derivatives of the network its residual
needs, the residual itself and the initial/boundary :class:`Condition` objects. The library
computes the derivatives by automatic differentiation (batched autograd for training,
:mod:`torch.func` transforms for per-point parameter gradients), so one user function serves
both.
"""

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

__all__ = ["Condition", "PDEProblem", "drift_diffusion_1d", "heat_1d"]

_KINDS = ("dirichlet", "periodic")


@dataclass(frozen=True)
class Condition:
    """An initial or boundary condition of a :class:`PDEProblem`.

    Parameters
    ----------
    name : str
        Name of the loss term (e.g. ``"ic"``, ``"bc"``); unique within a problem and not
        ``"pde"``/``"data"``.
    kind : {"dirichlet", "periodic"}
        ``"dirichlet"``: the residual is ``u_c(x) - target(x)``; ``"periodic"``: it is
        ``u_c(x) - u_c(pair(x))``.
    on : callable
        ``on(X) -> ndarray of bool, shape (n,)`` for ``X`` a float64 ndarray of shape
        ``(n, n_inputs)``: which collocation points the condition applies to.
    target : callable or None, default=None
        ``target(x) -> tensor of shape (n,)`` or ``(n, 1)`` for ``x`` a torch tensor of shape
        ``(n, n_inputs)``: the prescribed value (``"dirichlet"`` only).
    pair : callable or None, default=None
        ``pair(x) -> tensor of shape (n, n_inputs)``: the partner point whose value must be
        equal (``"periodic"`` only).
    component : int, default=0
        Output component ``c`` of the network the condition constrains.

    Examples
    --------
    >>> import numpy as np, torch
    >>> from sklearn_icml26.pinn import Condition
    >>> ic = Condition("ic", "dirichlet", on=lambda X: np.isclose(X[:, 1], 0.0),
    ...                target=lambda x: torch.sin(torch.pi * x[:, 0]))
    >>> ic.kind
    'dirichlet'
    """

    name: str
    kind: str
    on: Callable
    target: Callable | None = None
    pair: Callable | None = None
    component: int = 0

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"Condition {self.name!r}: kind must be one of {list(_KINDS)}; "
                             f"got {self.kind!r}.")
        if self.kind == "dirichlet" and self.target is None:
            raise ValueError(f"Condition {self.name!r}: kind='dirichlet' needs a target.")
        if self.kind == "periodic" and self.pair is None:
            raise ValueError(f"Condition {self.name!r}: kind='periodic' needs a pair.")
        if not callable(self.on):
            raise TypeError(f"Condition {self.name!r}: on must be callable; got "
                            f"{type(self.on).__name__}.")


@dataclass(frozen=True)
class PDEProblem:
    """A PDE on a box domain with its initial and boundary conditions.

    Parameters
    ----------
    bounds : sequence of (float, float)
        One ``(low, high)`` pair per input; with ``time_dependent`` the last input is time.
    derivatives : sequence of tuple of int
        Multi-indices of the partial derivatives the residual reads, e.g. ``[(1,), (0, 0)]``
        for ``u_t`` and ``u_xx`` of ``u(x, t)``; ``(i, j)`` is ``d^2 u / dx_i dx_j``.
    residual : callable
        ``residual(x, d) -> tensor of shape (n, n_pde)`` (or ``(n,)``), where ``x`` is a tensor
        of shape ``(n, n_inputs)`` and ``d`` maps ``()`` to ``u`` and each multi-index of
        ``derivatives`` to a tensor of shape ``(n, n_outputs)``. Zero for the exact solution.
    conditions : sequence of Condition, default=()
        Initial and boundary conditions.
    exact_solution : callable or None, default=None
        ``exact_solution(x) -> tensor of shape (n, n_outputs)`` for ``x`` a torch tensor of
        shape ``(n, n_inputs)``; differentiable by torch, so its residual can be checked.
    linear : bool, default=False
        Whether the residual and the conditions are affine in ``u`` and its derivatives (then
        a random-feature network can be solved by least squares).
    time_dependent : bool, default=True
        Whether the last input is time.
    n_outputs : int, default=1
        Number of outputs of the network.
    name : str, default="pde"
        Display name.

    Examples
    --------
    >>> import numpy as np, torch
    >>> from sklearn_icml26.pinn import Condition, PDEProblem
    >>> poisson = PDEProblem(
    ...     bounds=[(0.0, 1.0)], derivatives=[(0, 0)],
    ...     residual=lambda x, d: d[(0, 0)] + torch.pi**2 * torch.sin(torch.pi * x),
    ...     conditions=[Condition("bc", "dirichlet", on=lambda X: np.isclose(X[:, 0] % 1, 0),
    ...                           target=lambda x: 0 * x[:, 0])],
    ...     exact_solution=lambda x: torch.sin(torch.pi * x), linear=True,
    ...     time_dependent=False, name="poisson")
    >>> poisson.n_inputs
    1
    """

    bounds: Sequence
    derivatives: Sequence
    residual: Callable
    conditions: Sequence = field(default_factory=tuple)
    exact_solution: Callable | None = None
    linear: bool = False
    time_dependent: bool = True
    n_outputs: int = 1
    name: str = "pde"

    def __post_init__(self):
        bounds = tuple((float(lo), float(hi)) for lo, hi in self.bounds)
        for k, (lo, hi) in enumerate(bounds):
            if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
                raise ValueError(f"bounds[{k}] must be a finite pair (low, high) with "
                                 f"low < high; got {(lo, hi)}.")
        object.__setattr__(self, "bounds", bounds)
        derivs = tuple(tuple(int(i) for i in idx) for idx in self.derivatives)
        for idx in derivs:
            if not idx or any(i < 0 or i >= len(bounds) for i in idx):
                raise ValueError(
                    f"derivatives: multi-index {idx} must be a non-empty tuple of input indices "
                    f"in [0, {len(bounds) - 1}] (problem.bounds has {len(bounds)} inputs).")
        object.__setattr__(self, "derivatives", derivs)
        conds = tuple(self.conditions)
        names = [c.name for c in conds]
        if len(set(names)) != len(names) or {"pde", "data"} & set(names) or any(
                n.startswith("pde_") for n in names):
            raise ValueError(f"conditions need unique names other than 'pde'/'data'; "
                             f"got {names}.")
        for c in conds:
            if not 0 <= c.component < self.n_outputs:
                raise ValueError(f"Condition {c.name!r}: component={c.component} is not an "
                                 f"output index in [0, {self.n_outputs - 1}].")
        object.__setattr__(self, "conditions", conds)

    @property
    def n_inputs(self):
        """Number of inputs (the length of ``bounds``)."""
        return len(self.bounds)


# ---------------------------------------------------------------------------------------------
# heat equation
# ---------------------------------------------------------------------------------------------
def _heat_residual(x, d):
    xs, t = x[:, 0:1], x[:, 1:2]
    s = torch.sin(math.pi * xs)
    return d[(1,)] - d[(0, 0)] + torch.exp(-t) * (s - math.pi**2 * s)


def _on_time0(X, t0=0.0):
    return np.isclose(X[:, -1], t0)


def _on_x_ends(X, lo, hi):
    return np.isclose(X[:, 0], lo) | np.isclose(X[:, 0], hi)


def _heat_ic(x):
    return torch.sin(math.pi * x[:, 0])


def _zero_target(x):
    return torch.zeros_like(x[:, 0])


def _heat_exact(x):
    return torch.sin(math.pi * x[:, 0:1]) * torch.exp(-x[:, 1:2])


def heat_1d():
    """The forced heat equation on ``[-1, 1] x [0, 1]`` with a closed-form solution.

    ``u_t - u_xx + exp(-t) (sin(pi x) - pi^2 sin(pi x)) = 0`` with ``u(x, 0) = sin(pi x)``
    and ``u(-1, t) = u(1, t) = 0``; the solution is ``u = sin(pi x) exp(-t)`` [1]_.

    Returns
    -------
    problem : PDEProblem
        Inputs ``(x, t)``, terms ``"pde"``, ``"ic"`` (``t = 0``) and ``"bc"`` (``x = +-1``);
        linear.

    References
    ----------
    .. [1] Naujoks, Krasowski, Weckbecker, Yolcu, Wiegand, Lapuschkin, Samek, Klausen.
       "PINNfluence: Interpreting PINNs through Influence Functions", ICML 2026,
       arXiv:2409.08958.

    Examples
    --------
    >>> from sklearn_icml26.pinn import heat_1d
    >>> problem = heat_1d()
    >>> problem.bounds, [c.name for c in problem.conditions]
    (((-1.0, 1.0), (0.0, 1.0)), ['ic', 'bc'])
    """
    return PDEProblem(
        bounds=[(-1.0, 1.0), (0.0, 1.0)],
        derivatives=[(1,), (0, 0)],
        residual=_heat_residual,
        conditions=[
            Condition("ic", "dirichlet", on=functools.partial(_on_time0, t0=0.0),
                      target=_heat_ic),
            Condition("bc", "dirichlet", on=functools.partial(_on_x_ends, lo=-1.0, hi=1.0),
                      target=_zero_target),
        ],
        exact_solution=_heat_exact, linear=True, time_dependent=True, name="heat_1d")


# ---------------------------------------------------------------------------------------------
# drift-diffusion equation
# ---------------------------------------------------------------------------------------------
def _drift_residual(x, d, alpha, beta):
    return d[(1,)] - alpha * d[(0, 0)] + beta * d[(0,)]


def _drift_ic(x):
    return torch.sin(2.0 * x[:, 0] + math.pi / 4)


def _periodic_pair(x, lo, hi):
    other = (lo + hi) - x[:, 0:1]
    return torch.cat([other, x[:, 1:]], dim=1)


def _drift_exact(x, alpha, beta):
    xs, t = x[:, 0:1], x[:, 1:2]
    return torch.exp(-4.0 * alpha * t) * torch.sin(2.0 * (xs - beta * t) + math.pi / 4)


def drift_diffusion_1d(alpha=1.0, beta=20.0):
    """Drift-diffusion on ``[0, 2 pi] x [0, 1]``, periodic in ``x``.

    ``u_t - alpha u_xx + beta u_x = 0`` with ``u(x, 0) = sin(2 x + pi/4)`` and
    ``u(0, t) = u(2 pi, t)``; the solution is
    ``u = exp(-4 alpha t) sin(2 (x - beta t) + pi/4)`` [1]_.

    Parameters
    ----------
    alpha : float, default=1.0
        Diffusion coefficient (> 0).
    beta : float, default=20.0
        Drift velocity.

    Returns
    -------
    problem : PDEProblem
        Inputs ``(x, t)``, terms ``"pde"``, ``"ic"`` and ``"bc"`` (periodic: each end point is
        paired with the other end at the same time); linear.

    Raises
    ------
    ValueError
        If ``alpha <= 0``.

    References
    ----------
    .. [1] Naujoks, Krasowski, Weckbecker, Yolcu, Wiegand, Lapuschkin, Samek, Klausen.
       "PINNfluence: Interpreting PINNs through Influence Functions", ICML 2026,
       arXiv:2409.08958.

    Examples
    --------
    >>> from sklearn_icml26.pinn import drift_diffusion_1d
    >>> drift_diffusion_1d(beta=5.0).name
    'drift_diffusion_1d(alpha=1, beta=5)'
    """
    if not float(alpha) > 0:
        raise ValueError(f"alpha must be > 0; got {alpha!r}.")
    alpha, beta = float(alpha), float(beta)
    lo, hi = 0.0, 2 * math.pi
    return PDEProblem(
        bounds=[(lo, hi), (0.0, 1.0)],
        derivatives=[(0,), (1,), (0, 0)],
        residual=functools.partial(_drift_residual, alpha=alpha, beta=beta),
        conditions=[
            Condition("ic", "dirichlet", on=functools.partial(_on_time0, t0=0.0),
                      target=_drift_ic),
            Condition("bc", "periodic", on=functools.partial(_on_x_ends, lo=lo, hi=hi),
                      pair=functools.partial(_periodic_pair, lo=lo, hi=hi)),
        ],
        exact_solution=functools.partial(_drift_exact, alpha=alpha, beta=beta), linear=True,
        time_dependent=True, name=f"drift_diffusion_1d(alpha={alpha:g}, beta={beta:g})")
