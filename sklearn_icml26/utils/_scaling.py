"""Overflow-free moments and standardisation (power-of-two pre-scaling).

Shared by the estimators that standardise their inputs: the squares of values near 1e300
overflow float64, and a fixed absolute threshold misreads tiny-but-varying features (1e-13)
as constant. Dividing by a power of two is exact, so nothing is lost on ordinary inputs.
"""

import numpy as np


def _pow2_scale(a, axis=0):
    """Powers of two at the order of magnitude of ``max |a|`` along ``axis`` (1 for zeros).

    Dividing by a power of two is exact, so moments computed on ``a / c`` and multiplied back
    by ``c`` are bitwise those of ``a`` whenever the latter do not overflow or underflow.
    """
    m = np.max(np.abs(a), axis=axis)
    _, exponent = np.frexp(m)
    # 2**(e-1) <= m < 2**e: the lower power, so that m near the float64 limit (e = 1024) gives
    # the finite 2**1023 instead of an overflow to inf
    return np.where(m > 0, np.ldexp(1.0, exponent - 1), 1.0)


def _robust_mean_std(a, axis=0):
    """Mean and standard deviation of ``a`` without overflow/underflow of the squares.

    Returns (mean, std, c) where ``c`` is the power-of-two pre-scaling (:func:`_pow2_scale`);
    ``(a / c - mean / c) / (std / c)`` standardises ``a`` without overflow.
    """
    c = _pow2_scale(a, axis=axis)
    b = a / c
    return b.mean(axis=axis) * c, b.std(axis=axis) * c, c


def _standardize(a, mean, scale):
    """``(a - mean) / scale`` computed on power-of-two pre-scaled values (no overflow)."""
    c = _pow2_scale(np.stack([np.abs(np.asarray(mean, dtype=float)),
                              np.asarray(scale, dtype=float)]), axis=0)
    return (a / c - mean / c) / (scale / c)
