"""Progress bars shared by long fits, demos and benchmarks (tqdm)."""

from tqdm.auto import tqdm


def progress_bar(iterable=None, *, verbose=1, **kwargs):
    """Wrap ``iterable`` in a tqdm progress bar shown when ``verbose`` is positive.

    Parameters
    ----------
    iterable : iterable, default=None
        What to iterate over; ``None`` gives a manual bar (``update``).
    verbose : int or bool, default=1
        Show the bar when truthy; otherwise the bar is disabled and costs nothing.
    **kwargs : dict
        Passed to :class:`tqdm.tqdm` (``total``, ``desc``, ``unit``, ...).

    Returns
    -------
    bar : tqdm.tqdm
        The (possibly disabled) progress bar.

    Examples
    --------
    >>> from sklearn_icml26.utils import progress_bar
    >>> sum(progress_bar(range(3), verbose=0))
    3
    """
    return tqdm(iterable, disable=not verbose, **kwargs)
