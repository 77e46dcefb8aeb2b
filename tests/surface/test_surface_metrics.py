"""Surface metrics at extreme scales, on empty or invalid input, and their properties.

Issue 13: chamfer_distance overflowed to inf at 1e300 coordinates (and underflowed to 0 at
1e-300); f_score, normal_consistency and the samplers broke the same way.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sklearn_icml26.metrics import (
    chamfer_distance,
    f_score,
    normal_consistency,
    sample_mesh,
    sample_polylines,
)
from sklearn_icml26.metrics._surface import _surface_scores


def _sets(seed=0, d=3):
    rng = np.random.default_rng(seed)
    A, B = rng.normal(size=(60, d)), rng.normal(size=(45, d))
    NA, NB = rng.normal(size=(60, d)), rng.normal(size=(45, d))
    return A, B, NA, NB


# ------------------------------------------------------------------------------------------
# extreme scales: the same answer, rescaled
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("s", [1e300, 1e-300, 2.0**1000, 2.0**-1000, 1e150, 1e-150])
def test_chamfer_f_score_and_normal_consistency_do_not_overflow(s):
    A, B, NA, NB = _sets()
    cd = chamfer_distance(A, B)
    np.testing.assert_allclose(chamfer_distance(A * s, B * s), s * cd, rtol=1e-14)
    assert f_score(A * s, B * s, threshold=0.8 * s) == f_score(A, B, threshold=0.8)
    nc = normal_consistency(A, NA, B, NB)
    assert normal_consistency(A * s, NA, B * s, NB) == nc
    # normals of any non-zero length, huge or tiny (not exact: s need not be a power of 2)
    assert normal_consistency(A, NA * s, B, NB / s) == pytest.approx(nc, rel=1e-14)
    big = np.full((1, 3), 1.7e308)
    assert normal_consistency(A[:1], big, B[:1], -big) == 1.0
    args, ref = (A * s, NA, B * s, NB, (0.8 * s,)), _surface_scores(A, NA, B, NB, (0.8,))
    if np.log10(s) > 154:  # CD-L2 beyond float64: a clear error, not inf
        with pytest.raises(ValueError, match="cd_l2.*overflows float64"):
            _surface_scores(*args)
        return
    out = _surface_scores(*args)
    if np.log10(s) < -154:  # CD-L2 below the smallest float64 rounds to 0
        assert out["cd_l2"] == 0
    np.testing.assert_allclose(out["cd_l1"], s * ref["cd_l1"], rtol=1e-14)
    assert out[f"f_{0.8 * s:g}"] == ref["f_0.8"]
    assert out["nc"] == ref["nc"]


def test_squared_chamfer_that_overflows_float64_raises():
    A, B, _, _ = _sets()
    for s in (1e150, 1e-150):
        np.testing.assert_allclose(chamfer_distance(A * s, B * s, squared=True),
                                   s * s * chamfer_distance(A, B, squared=True), rtol=1e-14)
    with pytest.raises(ValueError, match=r"squared=True: the squared Chamfer distance "
                                         r"\(about 6.\de\+599\) overflows float64"):
        chamfer_distance(A * 1e300, B * 1e300, squared=True)
    with pytest.raises(ValueError, match="overflows float64"):
        _surface_scores(A * 1e300, A, B * 1e300, B)
    # representable squares stay exact: 2^500 squared is 2^1000 < float64 max
    s = 2.0**500
    assert chamfer_distance(A * s, B * s, squared=True) == s * s * chamfer_distance(
        A, B, squared=True)


def test_power_of_two_prescaling_leaves_ordinary_results_bitwise_unchanged():
    """On ordinary inputs the pre-scaled distances are bitwise the unscaled ones."""
    from scipy.spatial import cKDTree

    A, B, _, _ = _sets(3)
    A, B = A * 37.5 + 1000.0, B * 37.5 + 1000.0
    d_ab, d_ba = cKDTree(B).query(A)[0], cKDTree(A).query(B)[0]
    assert chamfer_distance(A, B) == float(0.5 * (np.mean(d_ab) + np.mean(d_ba)))
    assert chamfer_distance(A, B, squared=True) == float(
        0.5 * (np.mean(d_ab**2) + np.mean(d_ba**2)))


@pytest.mark.parametrize("s", [1e300, 1e-300])
def test_samplers_at_extreme_scales(s):
    V = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 3], [1, 0, 3], [0, 1, 3]])
    F = np.array([[0, 1, 2], [3, 4, 5]])
    P1, N1 = sample_mesh(V, F, 200, random_state=0)
    P2, N2 = sample_mesh(V * s, F, 200, random_state=0)
    np.testing.assert_allclose(P2, P1 * s, rtol=1e-14)
    np.testing.assert_array_equal(N2, N1)
    curves = [np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([[0.0, 1.0], [0.0, 4.0]])]
    Q1, M1 = sample_polylines(curves, 200, random_state=0)
    Q2, M2 = sample_polylines([c * s for c in curves], 200, random_state=0)
    np.testing.assert_allclose(Q2, Q1 * s, rtol=1e-14)
    np.testing.assert_array_equal(M2, M1)
    # a mesh spanning the whole float64 range
    big = np.array([[-1.7e308, 0, 0], [1.7e308, 0, 0], [0, 1.7e308, 0]])
    P, N = sample_mesh(big, [[0, 1, 2]], 50, random_state=0)
    assert np.all(np.isfinite(P)) and np.allclose(np.abs(N[:, 2]), 1)


# ------------------------------------------------------------------------------------------
# empty and invalid input: errors that name the argument
# ------------------------------------------------------------------------------------------
def test_empty_inputs_raise_naming_the_argument():
    A, B, NA, NB = _sets()
    for func, kwargs in [(chamfer_distance, {}), (f_score, {"threshold": 0.5})]:
        with pytest.raises(ValueError, match=r"A must hold at least one point; got an empty "
                                             r"array of shape \(0,\)"):
            func([], B, **kwargs)
        with pytest.raises(ValueError, match=r"B must hold at least one point; got an empty "
                                             r"array of shape \(0, 3\)"):
            func(A, np.zeros((0, 3)), **kwargs)
    with pytest.raises(ValueError, match="A must hold at least one point"):
        normal_consistency([], [], B, NB)
    with pytest.raises(ValueError, match=r"NB must have the shape of its points \(45, 3\)"):
        normal_consistency(A, NA, B, [])
    with pytest.raises(ValueError, match="A must hold at least one point"):
        _surface_scores(np.zeros((0, 3)), np.zeros((0, 3)), B, NB)
    with pytest.raises(ValueError, match=r"faces must hold at least one face of positive "
                                         r"area; got 0 faces"):
        sample_mesh(np.zeros((0, 3)), np.zeros((0, 3), dtype=int), 5)
    with pytest.raises(ValueError, match=r"vertices must have shape \(n_vertices, 3\); got "
                                         r"\(0,\)"):
        sample_mesh([], [], 5)
    with pytest.raises(ValueError, match=r"curves must hold at least one segment of positive "
                                         r"length; got 0 polylines"):
        sample_polylines([], 5)
    with pytest.raises(ValueError, match="curves must hold at least one segment"):
        sample_polylines([np.zeros((0, 2)), np.zeros((1, 2))], 5)


def test_sampler_arguments_are_checked():
    V = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    F = np.array([[0, 1, 2]])
    for bad in (-1, 2.5, "3", True):
        with pytest.raises(ValueError, match=rf"n must be a non-negative integer \(number of "
                                             rf"points to draw\); got {bad!r}"):
            sample_mesh(V, F, bad)
        with pytest.raises(ValueError, match="n must be a non-negative integer"):
            sample_polylines([V[:, :2]], bad)
    P, N = sample_mesh(V, F, 0)
    assert P.shape == N.shape == (0, 3)
    with pytest.raises(ValueError, match=r"faces must hold vertex indices in \[0, 3\); got "
                                         r"indices from 1 to 3"):
        sample_mesh(V, F + 1, 5)
    with pytest.raises(ValueError, match="faces must hold integer vertex indices"):
        sample_mesh(V, F + 0.5, 5)
    with pytest.raises(ValueError, match="vertices holds NaN or infinite coordinates"):
        sample_mesh(V * np.nan, F, 5)
    with pytest.raises(ValueError, match="curves holds NaN or infinite coordinates"):
        sample_polylines([np.array([[0.0, 0.0], [np.inf, 1.0]])], 5)
    with pytest.raises(ValueError, match=r"every polyline of curves must have shape \(m, 2\)"):
        sample_polylines([V], 5)


# ------------------------------------------------------------------------------------------
# properties (hypothesis)
# ------------------------------------------------------------------------------------------
_coords = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=64)


def _point_sets(d):
    return arrays(np.float64, st.tuples(st.integers(1, 25), st.just(d)), elements=_coords)


@given(A=_point_sets(3), B=_point_sets(3), squared=st.booleans())
@settings(max_examples=60, deadline=None)
def test_chamfer_symmetric_zero_on_identical_sets_and_nonnegative(A, B, squared):
    cd = chamfer_distance(A, B, squared=squared)
    assert cd == chamfer_distance(B, A, squared=squared)  # exactly symmetric
    assert cd >= 0
    assert chamfer_distance(A, A, squared=squared) == 0
    assert chamfer_distance(A, np.vstack([A, A[::-1]]), squared=squared) == 0  # multiset-free
    # the one-sided nearest distances bound it: 0.5 (max over A + max over B) >= CD-L1
    if not squared:
        pair = np.linalg.norm(A[:, None] - B[None], axis=2)
        assert cd == pytest.approx(0.5 * (pair.min(1).mean() + pair.min(0).mean()),
                                   rel=1e-12, abs=1e-12)


@given(A=_point_sets(2), B=_point_sets(2), k=st.integers(-1000, 1000),
       s=st.floats(1e-6, 1e6))
@settings(max_examples=60, deadline=None)
def test_chamfer_scale_equivariance(A, B, k, s):
    cd = chamfer_distance(A, B)
    p = 2.0**k
    # powers of two: exact, across the whole float64 range (no overflow / underflow)
    with np.errstate(under="ignore"):
        if cd * p > 1e-290:  # below, the scaled points themselves are subnormal
            assert chamfer_distance(A * p, B * p) == pytest.approx(cd * p, rel=1e-15)
    # any positive factor: nearest neighbours are kept, distances scale
    assert chamfer_distance(A * s, B * s) == pytest.approx(cd * s, rel=1e-9, abs=1e-300)
    assert chamfer_distance(A * s, B * s, squared=True) == pytest.approx(
        chamfer_distance(A, B, squared=True) * s * s, rel=1e-9, abs=1e-300)


@given(A=_point_sets(3), B=_point_sets(3), t=st.floats(1e-3, 1e3))
@settings(max_examples=40, deadline=None)
def test_f_score_bounds_and_symmetry(A, B, t):
    f, p, r = f_score(A, B, threshold=t, return_precision_recall=True)
    assert 0 <= f <= 1 and 0 <= p <= 1 and 0 <= r <= 1
    f2, p2, r2 = f_score(B, A, threshold=t, return_precision_recall=True)
    assert (p2, r2) == (r, p) and f2 == pytest.approx(f, rel=1e-15)
    assert f_score(A, A, threshold=t) == 1
