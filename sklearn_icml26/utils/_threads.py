"""Thread limits that are set for a block and restored after it (no global state left changed)."""

import contextlib
import functools

__all__ = ["limit_threads", "single_threaded", "torch_threads"]


@contextlib.contextmanager
def torch_threads(n_threads):
    """Run the block with ``torch.set_num_threads(n_threads)``; restore the count after it.

    Parameters
    ----------
    n_threads : int or None
        Torch's intra-op threads inside the block; None leaves them as they are.

    Yields
    ------
    previous : int or None
        The count before the block (None when torch is not installed).
    """
    try:
        import torch
    except ImportError:  # pragma: no cover - numpy-only installs
        yield None
        return
    previous = torch.get_num_threads()
    if n_threads is not None:
        torch.set_num_threads(int(n_threads))
    try:
        yield previous
    finally:
        if torch.get_num_threads() != previous:
            torch.set_num_threads(previous)


@contextlib.contextmanager
def limit_threads(n_threads=1, *, torch=True):
    """Limit OpenMP/BLAS pools (threadpoolctl) and torch's threads for the block; restore after.

    Many small OpenMP fits (HistGradientBoosting on a few hundred rows, small torch models) spin
    on a busy machine with the default thread count; one thread is often faster there.

    Parameters
    ----------
    n_threads : int, default=1
        Threads of every OpenMP/BLAS pool and of torch inside the block.
    torch : bool, default=True
        Whether torch's intra-op threads are limited too.

    Yields
    ------
    None
    """
    from threadpoolctl import threadpool_limits

    with contextlib.ExitStack() as stack:
        if torch:
            stack.enter_context(torch_threads(n_threads))
        stack.enter_context(threadpool_limits(limits=n_threads))
        yield


def single_threaded(func):
    """Decorator: run ``func`` under :func:`limit_threads` (one thread), restoring the counts."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with limit_threads(1):
            return func(*args, **kwargs)

    return wrapper
