"""Overflow-free moments and standardisation shared by the estimators."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_icml26.utils._scaling import _pow2_scale, _robust_mean_std, _standardize


def test_ordinary_values_are_bitwise_the_naive_moments():
    a = np.random.default_rng(0).normal(3.0, 2.0, size=(500, 4))
    mean, std, c = _robust_mean_std(a)
    np.testing.assert_array_equal(mean, a.mean(axis=0))
    np.testing.assert_array_equal(std, a.std(axis=0))
    assert np.all(np.log2(c) == np.round(np.log2(c)))  # powers of two
    np.testing.assert_array_equal(_standardize(a, mean, std), (a - mean) / std)


@pytest.mark.parametrize("factor", [1e-300, 1e-13, 1e13, 1e300, 1.5e308])
def test_extreme_scales_give_scaled_moments_without_warnings(factor):
    a = np.random.default_rng(1).normal(size=(200, 3))
    a /= np.abs(a).max()  # max |a| = 1: 1.5e308 in the last case, 2**1023 <= max < 2**1024
    mean, std, _ = _robust_mean_std(a)
    big = a * factor
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big_mean, big_std, c = _robust_mean_std(big)
        z = _standardize(big, big_mean, big_std)
    assert np.all(np.isfinite(c)) and np.all(c > 0)
    np.testing.assert_allclose(big_mean, mean * factor, rtol=1e-12)
    np.testing.assert_allclose(big_std, std * factor, rtol=1e-12)
    np.testing.assert_allclose(z, (a - mean) / std, rtol=1e-9, atol=1e-12)


def test_scale_is_one_for_zeros_and_near_the_maximum_for_the_rest():
    c = _pow2_scale(np.array([[0.0, 3.0, -1e308], [0.0, -5.0, 1.7e308]]))
    assert c[0] == 1.0
    assert c[1] == 4.0  # 4 <= 5 < 8
    assert c[2] == 2.0**1023


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=1e-300, max_value=1.7e308, allow_nan=False, allow_infinity=False))
def test_the_scaled_maximum_lies_in_one_to_two(m):
    c = _pow2_scale(np.array([m, -m / 3.0]))
    assert 1.0 <= m / c < 2.0
