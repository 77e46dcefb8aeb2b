"""Collocation points of PDE problems on a box (domain, boundary and initial points)."""

import numpy as np
from scipy.stats import qmc
from sklearn.utils import check_random_state

__all__ = ["make_pde_collocation"]


# ---------------------------------------------------------------------------------------------
# collocation points
# ---------------------------------------------------------------------------------------------
def _sample(n, dim, sampler, rng):
    if n == 0:
        return np.empty((0, dim))
    if sampler == "halton":
        return qmc.Halton(d=dim, scramble=True, seed=rng).random(n)
    return rng.uniform(size=(n, dim))


def make_pde_collocation(problem, n_domain=1000, n_boundary=100, n_initial=100,
                         sampler="halton", random_state=None):
    """Collocation points of a time-dependent problem on a box: domain, boundary, initial.

    Domain points fill the box (scrambled Halton or uniform); boundary points sit at the two
    ends of the first input with the other inputs sampled; initial points sit at the lower
    time bound with the space inputs sampled.

    Parameters
    ----------
    problem : sklearn_icml26.pinn.PDEProblem
        The problem whose ``bounds`` define the box (the last input is time when
        ``problem.time_dependent``).
    n_domain : int, default=1000
        Number of interior points (>= 0).
    n_boundary : int, default=100
        Number of boundary points, alternating between the two ends of the first input (>= 0).
    n_initial : int, default=100
        Number of initial points at ``t = t0`` (>= 0; must be 0 for a stationary problem).
    sampler : {"halton", "uniform"}, default="halton"
        Scrambled Halton sequence (:class:`scipy.stats.qmc.Halton`) or i.i.d. uniform.
    random_state : int, RandomState instance or None, default=None
        Seeds the sampler.

    Returns
    -------
    X : ndarray of shape (n_domain + n_boundary + n_initial, n_inputs), dtype float64
        Domain points, then boundary points, then initial points.

    Raises
    ------
    ValueError
        If a count is negative, ``sampler`` is unknown, or ``n_initial > 0`` for a problem that
        is not time dependent.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_pde_collocation
    >>> from sklearn_icml26.pinn import heat_1d
    >>> make_pde_collocation(heat_1d(), 100, 10, 10, random_state=0).shape
    (120, 2)
    """
    for name, n in (("n_domain", n_domain), ("n_boundary", n_boundary),
                    ("n_initial", n_initial)):
        if int(n) != n or n < 0:
            raise ValueError(f"{name} must be an integer >= 0; got {n!r}.")
    if sampler not in ("halton", "uniform"):
        raise ValueError(f"sampler must be 'halton' or 'uniform'; got {sampler!r}.")
    if n_initial and not problem.time_dependent:
        raise ValueError("n_initial must be 0 for a problem that is not time dependent; "
                         f"got {n_initial}.")
    rng = check_random_state(random_state)
    lo = np.array([b[0] for b in problem.bounds])
    hi = np.array([b[1] for b in problem.bounds])
    dim = len(lo)
    parts = [lo + (hi - lo) * _sample(int(n_domain), dim, sampler, rng)]
    if n_boundary:
        B = lo + (hi - lo) * _sample(int(n_boundary), dim, sampler, rng)
        B[:, 0] = np.where(np.arange(n_boundary) % 2 == 0, lo[0], hi[0])
        parts.append(B)
    if n_initial:
        Xi = lo + (hi - lo) * _sample(int(n_initial), dim, sampler, rng)
        Xi[:, -1] = lo[-1]
        parts.append(Xi)
    return np.concatenate(parts, axis=0)
