"""Demo of AdamO (`python -m sklearn_icml26 demo adamo`).

Trains the offline Q-learning critic without a target network on narrow pointmass data (the
collapsing configuration) with Adam and with AdamO, and compares how far ``max |Q|`` grows
beyond the largest achievable value and the greedy policies' returns.
"""

import time
import warnings

from sklearn.exceptions import ConvergenceWarning

from ..datasets import make_offline_rl_dataset
from ..metrics import evaluate_offline_rl_policy
from ..utils._demo_rows import demo_row, demo_table
from ..utils._threads import single_threaded
from ._offline_q import OfflineQRegressor

__all__ = ["run_demo"]


@single_threaded
def run_demo(data_home=None, verbose=1, fast=False):
    """Collapse of an Adam-trained TD critic and AdamO's correction of it.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Unused: the transitions are generated (``make_offline_rl_dataset``).
    verbose : int, default=1
        ``1`` prints progress.
    fast : bool, default=False
        A shorter version (a 128 x 128 critic, 400 steps) instead of a 256 x 256 critic and
        1,000 steps; Adam's critic collapses in both.

    Returns
    -------
    table : pandas.DataFrame
        Columns ``DEMO_COLUMNS``: AdamO's final ``max|Q| / q_bound`` and greedy return beside
        Adam's.

    Examples
    --------
    >>> from sklearn_icml26.optim._demo import run_demo
    >>> table = run_demo(verbose=0, fast=True)  # doctest: +SKIP
    """
    n, hidden, steps = (10_000, (128, 128), 400) if fast else (10_000, (256, 256), 1000)
    data = make_offline_rl_dataset(n_transitions=n, random_state=0)
    dataset = f"pointmass narrow eps=0.1, {n} transitions, no target network"
    results = {}
    for name, params in (("Adam", {"optimizer": "adam"}),
                         ("AdamO(kappa=1, tau=1)", {"optimizer": "adamo",
                                                    "optimizer_params": {"kappa": 1.0,
                                                                         "tau": 1.0}})):
        if verbose:
            print(f"[adamo demo] {name}: {steps} TD steps on {dataset} ...", flush=True)
        est = OfflineQRegressor(hidden_layer_sizes=hidden, target_update="none",
                                max_iter=steps, diagnose_every=0, random_state=0, **params)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(data.states, data.rewards, actions=data.actions,
                    next_states=data.next_states, terminals=data.terminals)
        seconds = time.perf_counter() - start
        ret = evaluate_offline_rl_policy(est, random_state=1000)
        results[name] = (est.q_max_curve_[-1] / data.q_bound, ret, seconds)
        if verbose:
            print(f"[adamo demo] {name}: diverged={est.diverged_} after {est.n_iter_} steps, "
                  f"max|Q|/q_bound={results[name][0]:.3g}", flush=True)
    ours, anchor = "AdamO(kappa=1, tau=1)", "Adam"
    return demo_table([demo_row(method=ours, dataset=dataset, metric=metric,
                                value=results[ours][i], anchor=anchor,
                                anchor_value=results[anchor][i], seconds=results[ours][2])
                       for i, metric in enumerate(["final max|Q| / q_bound", "greedy return"])])
