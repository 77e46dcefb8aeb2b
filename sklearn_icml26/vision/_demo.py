"""Demo of ViolinViTClassifier (`python -m sklearn_icml26 demo violin`).

Trains the VIOLIN vision transformer and the same network without the mask (the plain ViT) on
a tenth of scikit-learn's 8 x 8 digits (one token per pixel) and compares their test accuracy,
with an RBF support vector machine as context.
"""

import math

from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

from ..utils._demo_rows import anchor_rows, demo_table, timed_fits
from ..utils._threads import single_threaded
from ._violin import ViolinViTClassifier

__all__ = ["run_demo"]


@single_threaded
def run_demo(data_home=None, verbose=1, fast=False):
    """Test accuracy of VIOLIN against the plain ViT and an SVC on 10 % of the digits.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Unused: the digits ship with scikit-learn.
    verbose : int, default=1
        ``1`` prints progress.
    fast : bool, default=False
        A seconds-long version (40 optimiser steps, embed 16, one block) instead of 300 steps
        with the default sizes.

    Returns
    -------
    table : pandas.DataFrame
        Columns ``DEMO_COLUMNS``: VIOLIN's test accuracy beside the ViT's and the SVC's.

    Examples
    --------
    >>> from sklearn_icml26.vision._demo import run_demo
    >>> table = run_demo(verbose=0, fast=True)  # doctest: +SKIP
    """
    digits = load_digits()
    X, y = digits.data / 16.0, digits.target
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    Xtr, _, ytr, _ = train_test_split(Xtr, ytr, train_size=0.1, stratify=ytr, random_state=0)
    steps = 40 if fast else 300
    epochs = math.ceil(steps / math.ceil(len(ytr) / 64))
    size = dict(d_model=16, depth=1, n_heads=2) if fast else {}
    dataset = f"digits 8x8, {len(ytr)} training images (10 %), {len(yte)} test"
    models = {
        "ViolinViTClassifier": ViolinViTClassifier(max_epochs=epochs, lr=3e-3, random_state=0,
                                                   **size),
        "ViolinViTClassifier(mask=None)": ViolinViTClassifier(mask=None, max_epochs=epochs,
                                                              lr=3e-3, random_state=0, **size),
        "SVC": SVC(),
    }
    scores, seconds = timed_fits(models, Xtr, ytr, score=lambda m: m.score(Xte, yte),
                                 dataset=dataset, tag="violin demo", verbose=verbose)
    ours = "ViolinViTClassifier"
    return demo_table(anchor_rows(ours, scores, dataset=dataset, metric="accuracy",
                                  seconds=seconds[ours]))
