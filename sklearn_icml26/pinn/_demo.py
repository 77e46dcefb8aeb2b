"""Demo of PINNInfluence (`python -m sklearn_icml26 demo pinnfluence`).

Trains a good heat-equation PINN (1000 domain / 100 boundary / 100 initial points) and a
deliberately failed one (10/2/2 points), then compares their accuracy, residual maps and
influence diagnostics (Naujoks et al., ICML 2026, arXiv:2409.08958).
"""

import time

import numpy as np

from ..datasets import make_pde_collocation
from ..utils._demo_rows import demo_row, demo_table
from ..utils._threads import single_threaded
from ._influence import PINNInfluence
from ._pinn import PINNRegressor
from ._problems import heat_1d

__all__ = ["run_demo"]


def _grid(n):
    xs, ts = np.meshgrid(np.linspace(-1, 1, n), np.linspace(0, 1, n))
    return np.c_[xs.ravel(), ts.ravel()]


@single_threaded
def run_demo(data_home=None, verbose=1, fast=False):
    """Good vs failed heat PINN: relative L2, residual map and influence diagnostics.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Unused: the collocation points are generated.
    verbose : int, default=1
        ``1`` prints progress.
    fast : bool, default=False
        A version of seconds to a minute (200/20/20 points, 300 Adam and 100 L-BFGS steps, a
        2-16-16-1 network) instead of 1000/100/100 points, 1000 Adam and 500 L-BFGS steps and
        a 2-32-32-32-1 network.

    Returns
    -------
    table : pandas.DataFrame
        Columns ``DEMO_COLUMNS``: each metric of the good PINN (``value``) beside that of the
        failed PINN (``anchor_value``).

    Examples
    --------
    >>> from sklearn_icml26.pinn._demo import run_demo
    >>> table = run_demo(verbose=0, fast=True)  # doctest: +SKIP
    """
    problem = heat_1d()
    if fast:
        good_pts, hidden, adam, lbfgs, arnoldi = (200, 20, 20), (16, 16), 300, 100, (60, 20)
    else:
        good_pts, hidden, adam, lbfgs, arnoldi = (1000, 100, 100), (32, 32, 32), 1000, 500, (
            200, 50)
    grid, diag = _grid(100), _grid(30)
    stats, seconds = {}, 0.0
    for name, pts in (("good", good_pts), ("failed", (10, 2, 2))):
        if verbose:
            print(f"[pinnfluence demo] training the {name} PINN on {sum(pts)} points ...",
                  flush=True)
        X = make_pde_collocation(problem, *pts, random_state=0)
        start = time.perf_counter()
        pinn = PINNRegressor(problem, hidden_layer_sizes=hidden, max_epochs=adam,
                             max_iter=lbfgs, random_state=0).fit(X)
        inf = PINNInfluence(pinn, hessian="arnoldi", arnoldi_dim=arnoldi[0],
                            projection_dim=arnoldi[1]).fit()
        D, share = inf.directionality(diag)
        stats[name] = {
            "relative L2": pinn.relative_l2_error(grid),
            "mean |PDE residual|": float(np.abs(pinn.residuals(grid)[:, 0]).mean()),
            "PDE loss fraction": float(np.nanmean(inf.loss_fractions(diag)[:, 0])),
            "directionality - point share": float(np.nanmean(D - share)),
        }
        if name == "good":
            seconds = time.perf_counter() - start
    dataset = f"heat_1d, good {'/'.join(map(str, good_pts))} vs failed 10/2/2 points"
    return demo_table([demo_row(method="PINNInfluence (good PINN)", dataset=dataset,
                                metric=metric, value=stats["good"][metric],
                                anchor="failed PINN", anchor_value=stats["failed"][metric],
                                seconds=seconds)
                       for metric in stats["good"]])
