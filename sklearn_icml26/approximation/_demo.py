"""Demo of HolderTransformerRegressor (`python -m sklearn_icml26 demo holder`).

Fits the transformer with its automatic depth on a noisy, genuinely two-dimensional Hölder
function (a random Faber-Schauder wavelet sum with exponent alpha = 0.5) and compares its excess
risk with that of an MLP and of KNN with the theory-tuned number of neighbours.
"""

import math

from sklearn.neighbors import KNeighborsRegressor
from sklearn.neural_network import MLPRegressor

from ..datasets import make_holder_regression
from ..utils._demo_rows import anchor_rows, demo_table, timed_fits
from ._holder_transformer import HolderTransformerRegressor

__all__ = ["run_demo"]


def run_demo(data_home=None, verbose=1, fast=False):
    """Excess risk of the auto-depth transformer against an MLP and theory-tuned KNN.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Unused: the data are generated (``make_holder_regression``, kind ``"wavelet"``).
    verbose : int, default=1
        ``1`` prints progress and the chosen depth.
    fast : bool, default=False
        A seconds-long version (500 samples, 15 epochs) instead of 2,000 samples and 100
        epochs.

    Returns
    -------
    table : pandas.DataFrame
        Columns ``DEMO_COLUMNS``; the transformer's excess risk (mean squared distance to the
        noise-free function on 4,096 fresh points) beside that of each anchor.

    Examples
    --------
    >>> from sklearn_icml26.approximation._demo import run_demo
    >>> table = run_demo(verbose=0, fast=True)  # doctest: +SKIP
    """
    alpha, d0 = 0.5, 2
    n, epochs = (500, 15) if fast else (2000, 100)
    X, y, f = make_holder_regression(n, d0, alpha, kind="wavelet", noise=0.1, random_state=0,
                                     return_function=True)
    X_test, _ = make_holder_regression(4096, d0, alpha, kind="wavelet", random_state=1)
    f_test = f(X_test)
    dataset = f"wavelet alpha={alpha} d0={d0} n={n} sigma=0.1"
    k = math.ceil(n ** (2 * alpha / (2 * alpha + d0)))
    models = {
        "HolderTransformerRegressor": HolderTransformerRegressor(
            alpha=alpha, max_epochs=epochs, random_state=0),
        "MLPRegressor": MLPRegressor(hidden_layer_sizes=(64, 64), early_stopping=True,
                                     random_state=0),
        f"KNeighborsRegressor(k={k})": KNeighborsRegressor(n_neighbors=k),
    }
    def excess_risk(model):
        return ((model.predict(X_test) - f_test) ** 2).mean()

    risks, seconds = timed_fits(models, X, y, score=excess_risk, dataset=dataset,
                                tag="holder demo", verbose=verbose)
    ours = "HolderTransformerRegressor"
    if verbose:
        reg = models[ours]
        print(f"[holder demo] auto depth: {reg.n_blocks_} blocks at eps_n = {reg.eps_:.3f} "
              f"(lower-bound count {reg.depth_bounds_['lower']:.2f}, unit constant)",
              flush=True)
    return demo_table(anchor_rows(ours, risks, dataset=dataset, metric="excess risk",
                                  seconds=seconds[ours]))
