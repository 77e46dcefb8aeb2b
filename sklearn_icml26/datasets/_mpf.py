"""Thin / open surface test shapes of MPF (Metric-Phase Fields, ICML 2026, arXiv 2605.25503).

``make_thin_shell`` generates the shapes analytically; ``load_mpf_shape`` reads the shared,
project-generated point clouds ``mpf/<name>.npz`` from the data home.
"""

import hashlib
import warnings

import numpy as np
from sklearn.utils import Bunch, check_random_state

from ._base import get_data_home

__all__ = ["MPF_SHAPES", "load_mpf_shape", "make_layered_sheets", "make_thin_shell"]

MPF_SHAPES = ("open_hemisphere", "open_cylinder", "cube_plus_sheet")
"""The three 3-D shapes of the shared data folder ``mpf/``."""

_SHAPES_2D = ("open_arc", "parallel_segments", "t_junction")

# pinned SHA-256 of the shared files (generated for this project; no public URL)
MPF_SHA256 = {
    "open_hemisphere": "c713b58cf630911f6f38c121d2f8390b020174b552dd62d0e26d2b0f8990e3d4",
    "open_cylinder": "231167f3d61ec570e3de46fcfaeee590c3f3b13505986b1bc11ac806326d3932",
    "cube_plus_sheet": "e2c49d52770583122249fd14348331c74abdf1d244b67a10898fa7eb9caa6f8c",
}

# raw bounding boxes (lo, hi) of each shape before normalisation
_RAW_BOX = {
    "open_hemisphere": ([-1, -1, 0], [1, 1, 1]),
    "open_cylinder": ([-0.5, -0.5, -0.8], [0.5, 0.5, 0.8]),
    "cube_plus_sheet": ([-0.5, -0.5, -0.5], [0.5, 0.5, 1.5]),
    "open_arc": ([-1, 0], [1, 1]),
    "parallel_segments": ([-0.8, -0.02], [0.8, 0.02]),
    "t_junction": ([-0.8, -0.8], [0.8, 0]),
}


def _components(rng, n, weights):
    """How many of ``n`` samples fall on each component, drawn by area/length."""
    weights = np.asarray(weights, dtype=float)
    labels = rng.choice(len(weights), size=n, p=weights / weights.sum())
    return labels


def _raw_shape(name, n, rng):
    if name == "open_hemisphere":
        v = rng.normal(size=(n, 3))
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        v[:, 2] = np.abs(v[:, 2])
        return v, v.copy()
    if name == "open_cylinder":
        angle = rng.uniform(0, 2 * np.pi, size=n)
        z = rng.uniform(-0.8, 0.8, size=n)
        P = np.stack([0.5 * np.cos(angle), 0.5 * np.sin(angle), z], axis=1)
        N = np.stack([np.cos(angle), np.sin(angle), np.zeros(n)], axis=1)
        return P, N
    if name == "cube_plus_sheet":
        labels = _components(rng, n, [6.0, 0.5])
        P = np.empty((n, 3))
        N = np.zeros((n, 3))
        cube = np.flatnonzero(labels == 0)
        face = rng.integers(0, 6, size=cube.size)
        axis, side = face // 2, np.where(face % 2 == 0, -0.5, 0.5)
        P[cube] = rng.uniform(-0.5, 0.5, size=(cube.size, 3))
        P[cube, axis] = side
        N[cube, axis] = np.sign(side)
        sheet = np.flatnonzero(labels == 1)
        P[sheet, 0] = 0.0
        P[sheet, 1] = rng.uniform(-0.25, 0.25, size=sheet.size)
        P[sheet, 2] = rng.uniform(0.5, 1.5, size=sheet.size)
        N[sheet, 0] = 1.0
        return P, N
    if name == "open_arc":
        angle = rng.uniform(0, np.pi, size=n)
        P = np.stack([np.cos(angle), np.sin(angle)], axis=1)
        return P, P.copy()
    if name == "parallel_segments":
        labels = _components(rng, n, [1.0, 1.0])
        P = np.stack([rng.uniform(-0.8, 0.8, size=n), np.where(labels == 0, -0.02, 0.02)],
                     axis=1)
        N = np.tile([0.0, 1.0], (n, 1))
        return P, N
    if name == "t_junction":
        labels = _components(rng, n, [1.6, 0.8])
        P = np.zeros((n, 2))
        N = np.zeros((n, 2))
        bar, stem = labels == 0, labels == 1
        P[bar, 0] = rng.uniform(-0.8, 0.8, size=bar.sum())
        N[bar, 1] = 1.0
        P[stem, 1] = rng.uniform(-0.8, 0.0, size=stem.sum())
        N[stem, 0] = 1.0
        return P, N
    raise ValueError(f"name must be one of {MPF_SHAPES + _SHAPES_2D}; got {name!r}.")


def make_thin_shell(name, n_points=20000, *, noise=0.0, random_state=None):
    """Point cloud of a thin, open or non-manifold shape with its exact normals.

    The raw shape is sampled uniformly by area (by length in 2-D; components are chosen in
    proportion to their area/length); the centre of its bounding box is moved to the origin
    and its largest half-extent scaled to 0.9, then ``X = P + noise * N(0, I)``.

    3-D shapes: ``"open_hemisphere"`` (unit sphere, ``z >= 0``, scale 0.9),
    ``"open_cylinder"`` (radius 0.5, ``z`` in [-0.8, 0.8], no caps, scale 1.125),
    ``"cube_plus_sheet"`` (surface of [-0.5, 0.5]^3 plus the sheet ``x = 0``,
    ``y`` in [-0.25, 0.25], ``z`` in [0.5, 1.5] on its top face, scale 0.9).
    2-D analogues: ``"open_arc"`` (unit circle, angle in [0, pi], scale 0.9),
    ``"parallel_segments"`` (``y = +-0.02``, ``x`` in [-0.8, 0.8], gap 0.045 after scaling),
    ``"t_junction"`` (bar ``y = 0``, ``x`` in [-0.8, 0.8] plus stem ``x = 0``,
    ``y`` in [-0.8, 0]).

    Parameters
    ----------
    name : str
        One of the six shape names above.
    n_points : int, default=20000
        Number of points.
    noise : float, default=0.0
        Standard deviation of the isotropic Gaussian noise added to the points, in the
        normalised unit (the shape fits in [-0.9, 0.9]^d).
    random_state : int, RandomState instance or None, default=None
        Seeds sampling and noise.

    Returns
    -------
    X : ndarray of shape (n_points, d)
        The points, float64, ``d`` = 3 or 2.
    normals : ndarray of shape (n_points, d)
        Unit normals at the clean points (their sign is meaningless), float64.

    Raises
    ------
    ValueError
        If ``name`` is unknown, ``n_points < 1`` or ``noise < 0``.

    References
    ----------
    .. [1] Kong et al., "Metric-Phase Fields: Decoupling Distance and Sign for Thin-Structure
       Reconstruction from Unoriented Point Clouds", ICML 2026, arXiv:2605.25503.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_thin_shell
    >>> X, normals = make_thin_shell("open_arc", 100, random_state=0)
    >>> X.shape, normals.shape
    ((100, 2), (100, 2))
    """
    if name not in _RAW_BOX:
        raise ValueError(f"name must be one of {MPF_SHAPES + _SHAPES_2D}; got {name!r}.")
    if int(n_points) != n_points or n_points < 1:
        raise ValueError(f"n_points must be a positive integer; got {n_points!r}.")
    if not np.isfinite(noise) or noise < 0:
        raise ValueError(f"noise must be a non-negative number; got {noise!r}.")
    rng = np.random.default_rng(check_random_state(random_state).randint(2**31 - 1))
    P, N = _raw_shape(name, int(n_points), rng)
    lo, hi = (np.asarray(b, dtype=float) for b in _RAW_BOX[name])
    P = (P - (lo + hi) / 2) * (0.9 / np.max((hi - lo) / 2))
    N = N / np.linalg.norm(N, axis=1, keepdims=True)
    if noise > 0:
        P = P + noise * rng.normal(size=P.shape)
    return P, N


_LAYERED_KINDS = ("sheets", "caps", "shells")


def make_layered_sheets(n_layers=2, gap=0.05, n_points=20000, *, kind="sheets", n_features=3,
                        noise=0.0, random_state=None):
    """Point cloud of parallel layers a chosen gap apart, with normals and layer labels.

    Thin layered structures (stacked sheets, nested shells) are where a signed field merges
    neighbouring layers. The shape is built directly in the normalised unit (largest
    half-extent 0.9, bounding-box centre at the origin, as :func:`make_thin_shell`), so
    ``gap`` is the distance between neighbouring layers in that unit (the box is
    [-0.9, 0.9]^d). Points are drawn uniformly by area (length in 2-D) over all layers.

    - ``"sheets"``: open, flat squares ``[-0.9, 0.9]^2`` at heights
      ``z_i = (i - (n_layers - 1) / 2) gap`` (2-D: segments ``x`` in [-0.9, 0.9] at ``y_i``).
    - ``"caps"``: open, curved: concentric hemispheres ``z >= 0`` of radii
      ``0.9 - i gap`` (2-D: half circles ``y >= 0``), shifted so the bounding box is centred.
    - ``"shells"``: closed, curved: concentric spheres of radii ``0.9 - i gap``
      (2-D: circles).

    Parameters
    ----------
    n_layers : int, default=2
        Number of layers (>= 1).
    gap : float, default=0.05
        Distance between neighbouring layers, normalised unit (> 0; for ``"caps"`` and
        ``"shells"`` the innermost radius ``0.9 - (n_layers - 1) gap`` must stay positive).
    n_points : int, default=20000
        Number of points over all layers.
    kind : {"sheets", "caps", "shells"}, default="sheets"
        Flat open sheets, curved open caps or curved closed shells.
    n_features : {2, 3}, default=3
        Dimension: surfaces in 3-D, curves in 2-D.
    noise : float, default=0.0
        Standard deviation of the isotropic Gaussian noise added to the points, normalised
        unit.
    random_state : int, RandomState instance or None, default=None
        Seeds sampling and noise.

    Returns
    -------
    X : ndarray of shape (n_points, n_features)
        The points, float64.
    normals : ndarray of shape (n_points, n_features)
        Unit normals at the clean points (sign meaningless), float64.
    labels : ndarray of shape (n_points,)
        Layer index of each point (0 = lowest sheet / outermost shell), int64.

    Raises
    ------
    ValueError
        On an unknown ``kind``, ``n_features`` not 2 or 3, ``n_layers < 1``, a non-positive
        ``gap`` (or one that leaves no room for the inner shells), ``n_points < 1`` or
        ``noise < 0``.

    See Also
    --------
    sklearn_icml26.metrics.layer_separation : Whether a reconstruction keeps the layers apart.

    References
    ----------
    .. [1] Kong et al., "Metric-Phase Fields: Decoupling Distance and Sign for Thin-Structure
       Reconstruction from Unoriented Point Clouds", ICML 2026, arXiv:2605.25503.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_layered_sheets
    >>> X, normals, labels = make_layered_sheets(2, gap=0.03, n_points=1000, random_state=0)
    >>> X.shape, sorted(set(labels.tolist()))
    ((1000, 3), [0, 1])
    >>> float(abs(X[labels == 1, 2].mean() - X[labels == 0, 2].mean()))
    0.03
    """
    if kind not in _LAYERED_KINDS:
        raise ValueError(f"kind must be one of {_LAYERED_KINDS}; got {kind!r}.")
    if n_features not in (2, 3):
        raise ValueError(f"n_features must be 2 (curves) or 3 (surfaces); got {n_features!r}.")
    if isinstance(n_layers, bool) or int(n_layers) != n_layers or n_layers < 1:
        raise ValueError(f"n_layers must be a positive integer; got {n_layers!r}.")
    if int(n_points) != n_points or n_points < 1:
        raise ValueError(f"n_points must be a positive integer; got {n_points!r}.")
    if not np.isfinite(noise) or noise < 0:
        raise ValueError(f"noise must be a non-negative number; got {noise!r}.")
    n_layers, n, d = int(n_layers), int(n_points), int(n_features)
    if not (np.isfinite(gap) and gap > 0):
        raise ValueError(f"gap must be a positive number (normalised unit); got {gap!r}.")
    if kind != "sheets" and 0.9 - (n_layers - 1) * gap <= 0:
        raise ValueError(f"gap={gap!r} with n_layers={n_layers} leaves no room for the inner "
                         f"{kind}: the radii 0.9 - i gap must stay positive.")
    rng = np.random.default_rng(check_random_state(random_state).randint(2**31 - 1))
    if kind == "sheets":
        heights = (np.arange(n_layers) - (n_layers - 1) / 2) * gap
        labels = _components(rng, n, np.ones(n_layers))
        P = rng.uniform(-0.9, 0.9, size=(n, d))
        P[:, -1] = heights[labels]
        N = np.zeros((n, d))
        N[:, -1] = 1.0
    else:
        radii = 0.9 - np.arange(n_layers) * gap
        labels = _components(rng, n, radii ** (d - 1))  # area ~ r^2 (length ~ r in 2-D)
        V = rng.normal(size=(n, d))
        V /= np.linalg.norm(V, axis=1, keepdims=True)
        if kind == "caps":
            V[:, -1] = np.abs(V[:, -1])
        P = V * radii[labels, None]
        N = V
        if kind == "caps":  # bounding box z in [0, 0.9]: centre it
            P[:, -1] -= 0.45
    if noise > 0:
        P = P + noise * rng.normal(size=P.shape)
    return P, N, labels.astype(np.int64)


def _sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_mpf_shape(name, data_home=None):
    """Load one of the shared MPF test shapes (input cloud, dense ground truth, normals).

    Reads ``<data_home>/mpf/<name>.npz`` (keys ``input_points`` (20000, 3), ``gt_points``
    (100000, 3), ``gt_normals`` (100000, 3), float32). The files are synthetic, generated for
    this project (the paper's models are unreleased; no public URL). When the file is absent the
    shape is regenerated in memory with :func:`make_thin_shell` (input ``random_state=0``,
    ground truth 1) on every call, with a warning (same geometry, different points); nothing is
    written to the data home, so a regenerated cloud is never mistaken for the shared file. A
    file whose SHA-256 differs from the pinned one is still read, with a warning.

    Parameters
    ----------
    name : {"open_hemisphere", "open_cylinder", "cube_plus_sheet"}
        The shape.
    data_home : str or path-like, default=None
        See :func:`~sklearn_icml26.datasets.get_data_home`.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``points`` ndarray (20000, 3), ``gt_points`` ndarray (100000, 3), ``gt_normals``
        ndarray (100000, 3) (unit, sign meaningless), all float64 in the normalised unit
        (the shape fits [-0.9, 0.9]^3); ``name`` str; ``sha256`` str of the file read;
        ``DESCR`` str.

    Raises
    ------
    ValueError
        If ``name`` is not one of :data:`MPF_SHAPES`.

    References
    ----------
    .. [1] Kong et al., "Metric-Phase Fields: Decoupling Distance and Sign for Thin-Structure
       Reconstruction from Unoriented Point Clouds", ICML 2026, arXiv:2605.25503.

    Examples
    --------
    >>> from sklearn_icml26.datasets import load_mpf_shape
    >>> data = load_mpf_shape("open_cylinder")  # doctest: +SKIP
    >>> data.points.shape  # doctest: +SKIP
    (20000, 3)
    """
    if name not in MPF_SHAPES:
        raise ValueError(f"name must be one of {MPF_SHAPES}; got {name!r}.")
    folder = get_data_home(data_home) / "mpf"
    path = folder / f"{name}.npz"
    if path.is_file():
        with np.load(path) as f:
            points, gt_points, gt_normals = (np.asarray(f[k], dtype=np.float64) for k in
                                             ("input_points", "gt_points", "gt_normals"))
        sha = _sha256(path)
        if sha != MPF_SHA256[name]:
            warnings.warn(f"{path} does not match the pinned SHA-256 of the shared {name!r} "
                          f"file (expected {MPF_SHA256[name]}, got {sha}); it may be a "
                          "regenerated or modified copy (older versions cached regenerated "
                          "shapes under this name). Delete it or replace it with the shared "
                          "file.", UserWarning, stacklevel=2)
    else:
        # regenerated in memory only: never written under the shared file's name
        points, _ = make_thin_shell(name, 20000, random_state=0)
        gt_points, gt_normals = make_thin_shell(name, 100000, random_state=1)
        warnings.warn(f"{path} not found; regenerated {name!r} with make_thin_shell "
                      "(same geometry, different points than the shared file; not cached, "
                      "sha256=None).", UserWarning, stacklevel=2)
        sha = None
    descr = (f"MPF test shape {name!r}: synthetic point cloud generated for the "
             "sklearn_icml26 project (the MPF paper, arXiv:2605.25503, released no models). "
             "20000 noise-free input points, 100000 ground-truth points with unit normals "
             "(sign meaningless); normalised so that the bounding-box centre is 0 and the "
             "largest half-extent 0.9.")
    return Bunch(points=points, gt_points=gt_points, gt_normals=gt_normals, name=name,
                 sha256=sha, DESCR=descr)
