"""Metrics between point sets sampled from surfaces (or curves), and samplers of meshes.

Conventions follow the CAP-UDF evaluation code (junshengzhou/CAP-UDF@bbfc418,
``evaluation/shapenetCars/mesh_evaluator.py``): nearest neighbours come from
:class:`scipy.spatial.cKDTree`, distances are Euclidean, and both directions are averaged.
"""

import numpy as np
from scipy.spatial import cKDTree
from sklearn.utils import check_random_state

__all__ = ["chamfer_distance", "f_score", "normal_consistency", "sample_mesh",
           "sample_polylines"]


def _check_points(P, name, n_features=None):
    P = np.asarray(P, dtype=np.float64)
    if P.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (n_points, n_features); "
                         f"got an array of shape {P.shape}.")
    if P.shape[0] == 0:
        raise ValueError(f"{name} must hold at least one point; got shape {P.shape}.")
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
        If a set is empty, not 2-D, holds NaN/inf, or the sets differ in dimension.

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
    d_ab, _ = _nn_distances(A, B)
    d_ba, _ = _nn_distances(B, A)
    if squared:
        return float(0.5 * (np.mean(d_ab**2) + np.mean(d_ba**2)))
    return float(0.5 * (np.mean(d_ab) + np.mean(d_ba)))


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
        If ``threshold`` is not positive or the point sets are invalid.

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
    d_ab, _ = _nn_distances(A, B)
    d_ba, _ = _nn_distances(B, A)
    precision = float(np.mean(d_ab <= threshold))
    recall = float(np.mean(d_ba <= threshold))
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
        If a normal has zero length, or shapes do not match their points.

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
    _, i_ab = _nn_distances(A, B)
    _, i_ba = _nn_distances(B, A)
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
        If the mesh has no face of positive area.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.metrics import sample_mesh
    >>> V = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    >>> P, N = sample_mesh(V, np.array([[0, 1, 2]]), 5, random_state=0)
    >>> P.shape, np.abs(N[:, 2]).tolist()
    ((5, 3), [1.0, 1.0, 1.0, 1.0, 1.0])
    """
    V = np.asarray(vertices, dtype=np.float64)
    F = np.asarray(faces, dtype=np.int64)
    if V.ndim != 2 or V.shape[1] != 3 or F.ndim != 2 or F.shape[1] != 3:
        raise ValueError(f"sample_mesh needs vertices (v, 3) and faces (f, 3); got "
                         f"{V.shape} and {F.shape}.")
    rng = check_random_state(random_state)
    tri = V[F]
    cross = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    area2 = np.linalg.norm(cross, axis=1)
    if F.shape[0] == 0 or area2.sum() <= 0:
        raise ValueError("sample_mesh needs a mesh with at least one face of positive area.")
    face = rng.choice(F.shape[0], size=n, p=area2 / area2.sum())
    u, v = rng.uniform(size=(2, n))
    flip = u + v > 1
    u[flip], v[flip] = 1 - u[flip], 1 - v[flip]
    t = tri[face]
    points = t[:, 0] + u[:, None] * (t[:, 1] - t[:, 0]) + v[:, None] * (t[:, 2] - t[:, 0])
    with np.errstate(invalid="ignore", divide="ignore"):
        normals = cross[face] / area2[face, None]
    return points, normals


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
        If the polylines have no segment of positive length.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.metrics import sample_polylines
    >>> P, N = sample_polylines([np.array([[0.0, 0.0], [2.0, 0.0]])], 4, random_state=0)
    >>> P.shape, np.abs(N[:, 1]).tolist()
    ((4, 2), [1.0, 1.0, 1.0, 1.0])
    """
    starts, ends = [], []
    for c in curves:
        c = np.asarray(c, dtype=np.float64)
        if c.ndim != 2 or c.shape[1] != 2:
            raise ValueError(f"every polyline must have shape (m, 2); got {c.shape}.")
        if len(c) >= 2:
            starts.append(c[:-1])
            ends.append(c[1:])
    if not starts:
        raise ValueError("sample_polylines needs at least one segment of positive length.")
    a, b = np.concatenate(starts), np.concatenate(ends)
    length = np.linalg.norm(b - a, axis=1)
    if length.sum() <= 0:
        raise ValueError("sample_polylines needs at least one segment of positive length.")
    rng = check_random_state(random_state)
    seg = rng.choice(len(a), size=n, p=length / length.sum())
    t = rng.uniform(size=n)
    points = a[seg] + t[:, None] * (b[seg] - a[seg])
    tangent = (b[seg] - a[seg]) / length[seg, None]
    normals = np.stack([-tangent[:, 1], tangent[:, 0]], axis=1)
    return points, normals


def _surface_scores(A, NA, B, NB, thresholds=(0.005, 0.01)):
    """CD-L1, CD-L2, F@thresholds and NC from one pair of nearest-neighbour queries.

    Same definitions as :func:`chamfer_distance`, :func:`f_score` and
    :func:`normal_consistency` (the tests check equality); used by benchmarks on large sets.
    """
    A = _check_points(A, "A")
    B = _check_points(B, "B", A.shape[1])
    NA = _check_normals(NA, A, "NA")
    NB = _check_normals(NB, B, "NB")
    d_ab, i_ab = _nn_distances(A, B)
    d_ba, i_ba = _nn_distances(B, A)
    out = {"cd_l1": float(0.5 * (d_ab.mean() + d_ba.mean())),
           "cd_l2": float(0.5 * (np.mean(d_ab**2) + np.mean(d_ba**2)))}
    for t in thresholds:
        p, r = float(np.mean(d_ab <= t)), float(np.mean(d_ba <= t))
        out[f"f_{t:g}"] = 0.0 if p + r == 0 else 2 * p * r / (p + r)
    cos_a = np.abs(np.sum(NA * NB[i_ab], axis=1))
    cos_b = np.abs(np.sum(NB * NA[i_ba], axis=1))
    out["nc"] = float(np.clip(0.5 * (cos_a.mean() + cos_b.mean()), 0.0, 1.0))
    return out
