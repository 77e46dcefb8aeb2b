"""Metrics between point sets sampled from surfaces (or curves), and samplers of meshes.

Conventions follow the CAP-UDF evaluation code (junshengzhou/CAP-UDF@bbfc418,
``evaluation/shapenetCars/mesh_evaluator.py``): nearest neighbours come from
:class:`scipy.spatial.cKDTree`, distances are Euclidean, and both directions are averaged.

Every function divides the coordinates by one power of two near their largest magnitude
before squaring anything and multiplies the distances back: exact on ordinary inputs
(bitwise the unscaled results) and free of overflow / underflow at 1e300 or 1e-300.
"""

from numbers import Integral

import numpy as np
from scipy.spatial import cKDTree
from sklearn.utils import check_random_state

from ..utils._scaling import _pow2_scale

__all__ = ["chamfer_distance", "f_score", "layer_separation", "normal_consistency",
           "sample_mesh", "sample_polylines"]


def _check_n(n):
    if isinstance(n, bool) or not isinstance(n, Integral) or n < 0:
        raise ValueError(f"n must be a non-negative integer (number of points to draw); got "
                         f"{n!r}.")
    return int(n)


def _check_points(P, name, n_features=None):
    P = np.asarray(P, dtype=np.float64)
    if P.size == 0:
        raise ValueError(f"{name} must hold at least one point; got an empty array of shape "
                         f"{P.shape}.")
    if P.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (n_points, n_features); "
                         f"got an array of shape {P.shape}.")
    if n_features is not None and P.shape[1] != n_features:
        raise ValueError(f"{name} must have {n_features} columns like the other point set; "
                         f"got shape {P.shape}.")
    if not np.all(np.isfinite(P)):
        raise ValueError(f"{name} holds NaN or infinite coordinates.")
    return P


def _nn_distances(A, B):
    """Distances from every point of A to its nearest point of B, and that point's index."""
    dist, idx = cKDTree(B).query(A, k=1)
    return dist, idx


def _common_scale(*arrays):
    """One power of two at the order of magnitude of the largest |coordinate| (1 for 0)."""
    peak = max(float(np.max(np.abs(a))) for a in arrays)
    return float(_pow2_scale(np.array([peak])))


def _both_ways(A, B):
    """Nearest-neighbour distances A -> B and B -> A on pre-scaled points.

    Returns the distances divided by ``c`` (a power of two, so exact), their indices and
    ``c``: multiply a mean of distances by ``c`` and one of squared distances by ``c^2``.
    """
    c = _common_scale(A, B)
    A, B = A / c, B / c
    d_ab, i_ab = _nn_distances(A, B)
    d_ba, i_ba = _nn_distances(B, A)
    return d_ab, i_ab, d_ba, i_ba, c


def _unscale(value, c, power, what):
    """``value * c**power`` (c a power of two) or a ValueError when it overflows float64."""
    mantissa, exponent = np.frexp(c)
    with np.errstate(over="ignore"):
        out = float(np.ldexp(value, int(power * (exponent - 1))))
    if not np.isfinite(out):
        approx = float(np.log10(value)) + power * (exponent - 1) * np.log10(2.0)
        raise ValueError(f"{what} (about {10 ** (approx % 1):.2g}e+{int(approx)}) overflows "
                         "float64; use squared=False or rescale the point sets.")
    return out


def chamfer_distance(A, B, *, squared=False):
    """Symmetric Chamfer distance between two point sets.

    ``squared=False`` ("CD-L1") is ``(mean_a min_b ||a - b|| + mean_b min_a ||a - b||) / 2``
    with Euclidean distances; ``squared=True`` ("CD-L2") is half the sum of the two mean
    *squared* nearest-neighbour distances.

    Parameters
    ----------
    A : array-like of shape (n_a, n_features)
        First point set, float, in the same length unit as ``B``.
    B : array-like of shape (n_b, n_features)
        Second point set.
    squared : bool, default=False
        Average squared distances (CD-L2) instead of distances (CD-L1).

    Returns
    -------
    distance : float
        The Chamfer distance, in the points' length unit (squared unit for CD-L2).

    Raises
    ------
    ValueError
        If a set is empty, not 2-D, holds NaN/inf, or the sets differ in dimension; with
        ``squared=True``, if the result exceeds the float64 range (coordinates beyond about
        1e154 apart). Coordinates up to the float64 limit are otherwise fine: the points are
        pre-scaled by a power of two, which leaves ordinary results bitwise unchanged.

    References
    ----------
    .. [1] Zhou et al., "Learning Consistency-Aware Unsigned Distance Functions Progressively
       from Raw Point Clouds" (CAP-UDF), NeurIPS 2022, arXiv:2210.02757.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.metrics import chamfer_distance
    >>> A = np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> float(chamfer_distance(A, A + [0.0, 0.5]))
    0.5
    """
    A = _check_points(A, "A")
    B = _check_points(B, "B", A.shape[1])
    d_ab, _, d_ba, _, c = _both_ways(A, B)
    if squared:
        return _unscale(0.5 * (np.mean(d_ab**2) + np.mean(d_ba**2)), c, 2,
                        "squared=True: the squared Chamfer distance")
    return _unscale(0.5 * (np.mean(d_ab) + np.mean(d_ba)), c, 1, "the Chamfer distance")


def f_score(A, B, *, threshold, return_precision_recall=False):
    """F-score of a reconstruction ``A`` against a reference ``B`` at a distance threshold.

    Precision is the fraction of points of ``A`` within ``threshold`` of ``B``, recall the
    fraction of points of ``B`` within ``threshold`` of ``A``; ``F = 2PR / (P + R)`` and 0 when
    ``P + R = 0``.

    Parameters
    ----------
    A : array-like of shape (n_a, n_features)
        Reconstructed points.
    B : array-like of shape (n_b, n_features)
        Reference (ground-truth) points.
    threshold : float
        Distance threshold, in the points' length unit; must be positive.
    return_precision_recall : bool, default=False
        Also return precision and recall.

    Returns
    -------
    f : float
        The F-score in [0, 1].
    precision : float
        Only with ``return_precision_recall=True``.
    recall : float
        Only with ``return_precision_recall=True``.

    Raises
    ------
    ValueError
        If ``threshold`` is not positive or the point sets are invalid (empty, not 2-D,
        NaN/inf, different dimensions).

    References
    ----------
    .. [1] Knapitsch et al., "Tanks and Temples: Benchmarking Large-Scale Scene
       Reconstruction", ACM TOG 2017 (F-score definition); as used by CAP-UDF,
       arXiv:2210.02757.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.metrics import f_score
    >>> A = np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> f_score(A, A + [0.0, 0.5], threshold=0.6)
    1.0
    """
    if not np.isscalar(threshold) or not np.isfinite(threshold) or threshold <= 0:
        raise ValueError(f"threshold must be a positive finite number; got {threshold!r}.")
    A = _check_points(A, "A")
    B = _check_points(B, "B", A.shape[1])
    d_ab, _, d_ba, _, c = _both_ways(A, B)
    t = threshold / c  # exact: c is a power of two
    precision = float(np.mean(d_ab <= t))
    recall = float(np.mean(d_ba <= t))
    total = precision + recall
    f = 0.0 if total == 0 else 2.0 * precision * recall / total
    if return_precision_recall:
        return f, precision, recall
    return f


def _check_normals(N, P, name):
    N = np.asarray(N, dtype=np.float64)
    if N.shape != P.shape:
        raise ValueError(f"{name} must have the shape of its points {P.shape}; got {N.shape}.")
    if not np.all(np.isfinite(N)):
        raise ValueError(f"{name} holds NaN or infinite values.")
    N = N / _pow2_scale(N, axis=1)[:, None]  # no overflow/underflow of norms
    norms = np.linalg.norm(N, axis=1)
    zero = np.flatnonzero(norms == 0)
    if zero.size:
        raise ValueError(f"{name} holds {zero.size} zero-length normal(s), e.g. at row(s) "
                         f"{zero[:5].tolist()}; every normal must be non-zero.")
    return N / norms[:, None]


def normal_consistency(A, NA, B, NB):
    """Normal consistency: mean absolute cosine between normals of nearest neighbours.

    ``NC = (mean_a |cos(n_a, n_NN_B(a))| + mean_b |cos(n_b, n_NN_A(b))|) / 2``: the absolute
    value makes it blind to the (arbitrary) orientation of unoriented or open surfaces.

    Parameters
    ----------
    A : array-like of shape (n_a, n_features)
        First point set.
    NA : array-like of shape (n_a, n_features)
        Normals of ``A`` (any non-zero length; they are normalised).
    B : array-like of shape (n_b, n_features)
        Second point set.
    NB : array-like of shape (n_b, n_features)
        Normals of ``B``.

    Returns
    -------
    nc : float
        Normal consistency in [0, 1].

    Raises
    ------
    ValueError
        If a point set is invalid (empty, not 2-D, NaN/inf, different dimensions), a normal
        has zero length, or shapes do not match their points. Normals of any non-zero
        length (1e-300 or 1e300) are normalised without overflow.

    References
    ----------
    .. [1] Zhou et al., "Learning Consistency-Aware Unsigned Distance Functions Progressively
       from Raw Point Clouds" (CAP-UDF), NeurIPS 2022, arXiv:2210.02757.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.metrics import normal_consistency
    >>> A = np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> N = np.array([[0.0, 1.0], [0.0, -1.0]])
    >>> normal_consistency(A, N, A, -N)
    1.0
    """
    A = _check_points(A, "A")
    B = _check_points(B, "B", A.shape[1])
    NA = _check_normals(NA, A, "NA")
    NB = _check_normals(NB, B, "NB")
    _, i_ab, _, i_ba, _ = _both_ways(A, B)
    cos_a = np.abs(np.sum(NA * NB[i_ab], axis=1))
    cos_b = np.abs(np.sum(NB * NA[i_ba], axis=1))
    return float(np.clip(0.5 * (cos_a.mean() + cos_b.mean()), 0.0, 1.0))


def sample_mesh(vertices, faces, n, random_state=None):
    """Sample points uniformly by area on a triangle mesh, with the faces' normals.

    Parameters
    ----------
    vertices : array-like of shape (n_vertices, 3)
        Vertex coordinates.
    faces : array-like of shape (n_faces, 3)
        Vertex indices of each triangle, int.
    n : int
        Number of points to draw.
    random_state : int, RandomState instance or None, default=None
        Seeds the draw.

    Returns
    -------
    points : ndarray of shape (n, 3)
        Samples, float64.
    normals : ndarray of shape (n, 3)
        Unit normal of the face each sample lies on, float64.

    Raises
    ------
    ValueError
        If ``n`` is not a non-negative integer, ``vertices`` or ``faces`` have the wrong
        shape, ``vertices`` holds NaN/inf, ``faces`` holds non-integer or out-of-range
        indices, or no face has positive area (an empty mesh included). Coordinates up to
        the float64 limit are fine (areas are computed on power-of-two pre-scaled points).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.metrics import sample_mesh
    >>> V = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    >>> P, N = sample_mesh(V, np.array([[0, 1, 2]]), 5, random_state=0)
    >>> P.shape, np.abs(N[:, 2]).tolist()
    ((5, 3), [1.0, 1.0, 1.0, 1.0, 1.0])
    """
    n = _check_n(n)
    V = np.asarray(vertices, dtype=np.float64)
    if V.ndim != 2 or V.shape[1] != 3:
        raise ValueError(f"vertices must have shape (n_vertices, 3); got {V.shape}.")
    if not np.all(np.isfinite(V)):
        raise ValueError("vertices holds NaN or infinite coordinates.")
    F = np.asarray(faces)
    if F.ndim != 2 or F.shape[1] != 3:
        raise ValueError(f"faces must have shape (n_faces, 3); got {F.shape}.")
    if F.size and not (np.issubdtype(F.dtype, np.integer)
                       or (np.issubdtype(F.dtype, np.floating)
                           and np.all(F == np.round(F)))):
        raise ValueError(f"faces must hold integer vertex indices; got dtype {F.dtype}.")
    F = F.astype(np.int64)
    if F.size and (F.min() < 0 or F.max() >= len(V)):
        raise ValueError(f"faces must hold vertex indices in [0, {len(V)}); got indices "
                         f"from {F.min()} to {F.max()}.")
    rng = check_random_state(random_state)
    c = _common_scale(V) if V.size else 1.0
    tri = V[F] / c  # pre-scaled by a power of two: the cross products cannot overflow
    cross = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    area2 = np.linalg.norm(cross, axis=1)
    if F.shape[0] == 0 or area2.sum() <= 0:
        raise ValueError(f"faces must hold at least one face of positive area; got "
                         f"{F.shape[0]} faces, none with positive area.")
    face = rng.choice(F.shape[0], size=n, p=area2 / area2.sum())
    u, v = rng.uniform(size=(2, n))
    flip = u + v > 1
    u[flip], v[flip] = 1 - u[flip], 1 - v[flip]
    t = tri[face]
    points = t[:, 0] + u[:, None] * (t[:, 1] - t[:, 0]) + v[:, None] * (t[:, 2] - t[:, 0])
    with np.errstate(invalid="ignore", divide="ignore"):
        normals = cross[face] / area2[face, None]
    return points * c, normals


def sample_polylines(curves, n, random_state=None):
    """Sample points uniformly by length on 2-D polylines, with their segments' normals.

    Parameters
    ----------
    curves : list of array-like of shape (m_i, 2)
        Polylines (e.g. from :meth:`~sklearn_icml26.surface.MPFSurface.extract_curve`).
    n : int
        Number of points to draw.
    random_state : int, RandomState instance or None, default=None
        Seeds the draw.

    Returns
    -------
    points : ndarray of shape (n, 2)
        Samples, float64.
    normals : ndarray of shape (n, 2)
        Unit normal of the segment each sample lies on, float64.

    Raises
    ------
    ValueError
        If ``n`` is not a non-negative integer, a polyline does not have shape (m, 2) or
        holds NaN/inf, or no segment has positive length (no polyline included).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.metrics import sample_polylines
    >>> P, N = sample_polylines([np.array([[0.0, 0.0], [2.0, 0.0]])], 4, random_state=0)
    >>> P.shape, np.abs(N[:, 1]).tolist()
    ((4, 2), [1.0, 1.0, 1.0, 1.0])
    """
    n = _check_n(n)
    starts, ends = [], []
    curves = list(curves)
    for c in curves:
        c = np.asarray(c, dtype=np.float64)
        if c.ndim != 2 or c.shape[1] != 2:
            raise ValueError(f"every polyline of curves must have shape (m, 2); got "
                             f"{c.shape}.")
        if not np.all(np.isfinite(c)):
            raise ValueError("curves holds NaN or infinite coordinates.")
        if len(c) >= 2:
            starts.append(c[:-1])
            ends.append(c[1:])
    no_segment = ("curves must hold at least one segment of positive length; got "
                  f"{len(curves)} polylines")
    if not starts:
        raise ValueError(f"{no_segment}, none with two points or more.")
    a, b = np.concatenate(starts), np.concatenate(ends)
    scale = _common_scale(a, b)
    a, b = a / scale, b / scale  # pre-scaled by a power of two: no overflow of the lengths
    length = np.linalg.norm(b - a, axis=1)
    if length.sum() <= 0:
        raise ValueError(f"{no_segment}, all of zero length.")
    rng = check_random_state(random_state)
    seg = rng.choice(len(a), size=n, p=length / length.sum())
    t = rng.uniform(size=n)
    points = a[seg] + t[:, None] * (b[seg] - a[seg])
    tangent = (b[seg] - a[seg]) / length[seg, None]
    normals = np.stack([-tangent[:, 1], tangent[:, 0]], axis=1)
    return points * scale, normals


def layer_separation(points, gt_points, gt_labels, *, return_per_layer=False):
    """Whether a reconstruction keeps the layers of a layered structure apart.

    Every reconstructed point is attributed to the layer of its nearest ground-truth point
    (the side of the mid-surface between two layers it lies on). For each ground-truth layer
    ``i``, the score is the share of its points whose nearest reconstructed point is
    attributed to layer ``i``; the result is the smallest share over the layers. A
    reconstruction that keeps every layer (within half a gap of it) scores 1; a layer that
    is missing scores 0, and so do two layers merged into one surface nearer to one of
    them (a surface exactly halfway is attributed to either side at random and scores
    well below 1).

    Parameters
    ----------
    points : array-like of shape (n_points, n_features)
        Points sampled from the reconstruction (e.g. :func:`sample_mesh`).
    gt_points : array-like of shape (n_gt, n_features)
        Ground-truth points.
    gt_labels : array-like of shape (n_gt,)
        Layer of each ground-truth point (any hashable integers or strings).
    return_per_layer : bool, default=False
        Also return the share of every layer.

    Returns
    -------
    separation : float
        The smallest per-layer share, in [0, 1].
    per_layer : dict
        Only with ``return_per_layer``: ``{label: share}`` in sorted label order.

    Raises
    ------
    ValueError
        If a point set is empty, not 2-D, non-finite, the column counts differ, or
        ``gt_labels`` does not have one label per ground-truth point.

    See Also
    --------
    sklearn_icml26.datasets.make_layered_sheets : Layered shapes with layer labels.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.metrics import layer_separation
    >>> x = np.linspace(-1, 1, 50)
    >>> G = np.r_[np.c_[x, 0 * x], np.c_[x, 0 * x + 0.1]]
    >>> labels = np.repeat([0, 1], 50)
    >>> layer_separation(G + [0, 0.01], G, labels)
    1.0
    >>> layer_separation(np.c_[x, 0 * x + 0.06], G, labels)  # merged: layer 0 lost
    0.0
    """
    points = _check_points(points, "points")
    gt_points = _check_points(gt_points, "gt_points", points.shape[1])
    gt_labels = np.asarray(gt_labels)
    if gt_labels.shape != (len(gt_points),):
        raise ValueError(f"gt_labels must hold one label per ground-truth point, shape "
                         f"({len(gt_points)},); got shape {gt_labels.shape}.")
    c = _common_scale(points, gt_points)
    P, G = points / c, gt_points / c
    _, nearest_gt = cKDTree(G).query(P, k=1)
    attributed = gt_labels[nearest_gt]  # the layer each reconstructed point lies on
    _, nearest_rec = cKDTree(P).query(G, k=1)
    hit = attributed[nearest_rec] == gt_labels
    per_layer = {lab: float(np.mean(hit[gt_labels == lab])) for lab in np.unique(gt_labels)}
    separation = float(min(per_layer.values()))
    if return_per_layer:
        return separation, {k.item() if hasattr(k, "item") else k: v
                            for k, v in per_layer.items()}
    return separation


def _surface_scores(A, NA, B, NB, thresholds=(0.005, 0.01)):
    """CD-L1, CD-L2, F@thresholds and NC from one pair of nearest-neighbour queries.

    Same definitions as :func:`chamfer_distance`, :func:`f_score` and
    :func:`normal_consistency` (the tests check equality); used by benchmarks on large sets.
    """
    A = _check_points(A, "A")
    B = _check_points(B, "B", A.shape[1])
    NA = _check_normals(NA, A, "NA")
    NB = _check_normals(NB, B, "NB")
    d_ab, i_ab, d_ba, i_ba, c = _both_ways(A, B)
    out = {"cd_l1": _unscale(0.5 * (np.mean(d_ab) + np.mean(d_ba)), c, 1,
                             "the Chamfer distance"),
           "cd_l2": _unscale(0.5 * (np.mean(d_ab**2) + np.mean(d_ba**2)), c, 2,
                             "the squared Chamfer distance (cd_l2)")}
    for t in thresholds:
        p, r = float(np.mean(d_ab <= t / c)), float(np.mean(d_ba <= t / c))
        out[f"f_{t:g}"] = 0.0 if p + r == 0 else 2 * p * r / (p + r)
    cos_a = np.abs(np.sum(NA * NB[i_ab], axis=1))
    cos_b = np.abs(np.sum(NB * NA[i_ba], axis=1))
    out["nc"] = float(np.clip(0.5 * (cos_a.mean() + cos_b.mean()), 0.0, 1.0))
    return out
