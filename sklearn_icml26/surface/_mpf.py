"""MPFSurface: Metric-Phase Fields for thin and open surfaces from unoriented point clouds.

Kong et al., "Metric-Phase Fields: Decoupling Distance and Sign for Thin-Structure
Reconstruction from Unoriented Point Clouds", ICML 2026, arXiv:2605.25503. The authors released
no code; the fusion is exact from the paper's pipeline figure, while loss terms, sampling, warm
start and trimming are this package's choices, built from SIREN (arXiv 2006.09661), IGR (arXiv
2002.10099), DiGS (arXiv 2106.10811), SAL (arXiv 1911.10414) and DEUDF (arXiv 2406.00346).

Training runs on the package's skorch adapter (:class:`~sklearn_icml26.base.TorchEstimatorMixin`):
each training "sample" is one input point with its neighbourhood scale (and normal); the module's
training forward takes the near-surface and free-space points of the step (from pools that are
re-drawn every few steps, with their distance targets), evaluates the fields
and their input gradients (``create_graph``) and returns them in a dict that the criterion turns
into the weighted sum of the method's loss terms.

This file holds the estimator (parameters, fit, field queries); its parts live beside it:
``_network`` (SIREN layers, jets, the two-head module), ``_sampling`` (the off-surface pools),
``_loss`` (loss terms and criterion), ``_compile`` (the compiled training step), ``_training``
(the training callback) and ``_extraction`` (grids, marching cubes, contours, trimming).
"""

import functools
import math
import os
import warnings
from numbers import Integral, Real

import numpy as np
import torch
from scipy.spatial import cKDTree
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import Interval, Options, StrOptions, _fit_context
from ..base import FitContext, TorchEstimatorMixin, _external_stacklevel, make_optimizer
from ..utils._docstrings import Substitution, _torch_docstrings
from ._compile import _COMPILE_MIN_STEPS, _CompiledStep
from ._extraction import _FieldExtraction
from ._loss import _TERMS, DEFAULT_LOSS_WEIGHTS, _MPFCriterion
from ._network import _BOX, _float64_copy, _MPFModule
from ._training import _MPFTraining

__all__ = ["DEFAULT_LOSS_WEIGHTS", "MPFSurface"]


def _normalisation(X):
    """Centre and scale that map the bounding box of ``X`` into ``[-0.9, 0.9]^d``.

    The centre and half-extents are taken from halved corners (``lo / 2 + hi / 2``), which
    equals ``(lo + hi) / 2`` wherever that does not overflow and stays finite up to the
    largest float64 coordinates.

    Returns
    -------
    center : ndarray of shape (n_features,)
        Centre of the bounding box, input units.
    scale : float
        ``0.9 / largest half-extent`` (``inf`` when the largest half-extent is zero or so
        small that ``2 scale`` overflows; the caller rejects it).
    """
    lo, hi = X.min(axis=0), X.max(axis=0)
    center = lo / 2 + hi / 2
    half = float(np.max(hi / 2 - lo / 2))
    with np.errstate(divide="ignore", over="ignore"):
        scale = _BOX / half if half > 0 else np.inf
        if not np.isfinite(2 * scale):  # _normalise multiplies by 2 scale
            scale = np.inf
    return center, float(scale)


def _has_metric(est):
    return est.field != "sdf"


def _is_mpf(est):
    return est.field == "mpf"


@Substitution(**_torch_docstrings)
class MPFSurface(_FieldExtraction, TorchEstimatorMixin, TransformerMixin,
                 BaseEstimator):
    """Metric-Phase Field surface reconstruction from an unoriented point cloud.

    One network (a SIREN backbone with two heads) learns a metric field ``r >= 0`` (an
    unsigned distance) and a smooth signed phase ``theta``; they are fused into
    ``phi = r * tanh(beta * theta) + theta`` with a learnable gate sharpness ``beta > 0``.
    ``phi`` has the sign of ``theta`` and a non-vanishing gradient ``(1 + beta r) grad theta``
    on its zero set, so plain marching cubes meshes it; open boundaries appear after trimming
    faces far from the input points (default) or where ``r`` is large. ``field="sdf"`` and
    ``field="udf"`` are the ablations (phase head only, metric head only) on the same code
    path. One ``fit`` reconstructs one shape;
    2-D inputs give curves (:meth:`extract_curve`), 3-D inputs meshes (:meth:`extract_mesh`).

    Read more in the :ref:`User Guide <user_guide_mpf>`.

    Parameters
    ----------
    field : {"mpf", "sdf", "udf"}, default="mpf"
        The fused metric-phase field, or the signed / unsigned ablation.
    hidden_size : int, default=64
        Width of the SIREN backbone's sine layers. The paper's 128 (with heads of 64)
        costs more per step for a similar accuracy (see :ref:`mpf_defaults`).
    n_layers : int, default=2
        Number of backbone sine layers.
    head_size : int, default=32
        Width of the sine layer of each head.
    omega0 : float, default=20.0
        Frequency of the first sine layer (SIREN's omega_0), in 1 / normalised unit. It
        bounds the finest structure the field resolves: at 20, 3-D sheets 0.05 of the
        normalised box apart stay apart (at 10 they merge); closer sheets merge at every
        value tried, and higher values lower the normal consistency and fill the box with
        spurious zero crossings (see :ref:`mpf_layers`).
    beta_init : float, default=10.0
        Initial gate sharpness ``beta`` (must exceed 1e-3); ``1 / beta`` is the gate width
        in the normalised unit.
    softplus_beta : float, default=1.0
        Sharpness of the softplus that makes ``r`` non-negative.
    loss_weights : dict or None, default=None
        Weights of the loss terms; missing keys take their defaults
        (``zero`` 3000, ``far`` 100, ``metric`` 300, ``eikonal`` 50, ``align`` 10,
        ``normal`` 100, ``laplacian`` 1, ``phase`` 50).
    align_magnitude : float, default=1.0
        Weight kappa of ``||theta| - r|`` inside the align term (the original 10 pulled
        ``|theta|`` towards the flat bottom of ``r`` next to the surface and moved the zero
        set; see :ref:`mpf_defaults`).
    far_alpha : float, default=100.0
        Decay alpha of the free-space term ``exp(-alpha |phi|)``.
    near_k : int, default=10
        The near-surface noise scale of a point is the distance to its ``near_k``-th
        neighbour.
    near_scale : float, default=4.0
        Half of the near samples use ``near_scale`` times that scale.
    box_padding : float, default=0.1
        Relative padding of the sampling / extraction box around the normalised cloud.
    laplacian_fraction : float, default=0.25
        Fraction of the near and free samples on which ``|Laplacian phi|`` is computed.
    laplacian_schedule : tuple of float, default=(0.2, 0.5)
        ``(a, b)``: the Laplacian weight is full while training progress is below ``a``,
        decays linearly to 0 at ``b`` and is then not computed.
    warm_start_iter : int, default=200
        Steps of the warm start (theta to a sphere SDF, r to the distance to the points).
    max_epochs : int, default=50
        {max_epochs}
        An epoch has ``ceil(n_samples / batch_size)`` steps (2,000 steps for 20,000 points).
    batch_size : int, default=512
        {batch_size}
        Each step also draws ``off_surface_fraction * batch_size`` near and as many free
        points.
    lr : float, default=1e-3
        {lr}
        It is the peak of ``lr_schedule``; the warm start uses ``5 lr``.
    lr_schedule : {"cosine", "constant"}, default="cosine"
        ``"cosine"`` decays the learning rate from ``lr`` to ``lr / 100`` by a half cosine
        over the training steps; ``"constant"`` keeps ``lr`` (the original constant 2e-4
        left the zero set short of the points; see :ref:`mpf_defaults`).
    optimizer : {"adam", "adamw", "sgd", "rmsprop", "adamo"} or torch optimizer class, \
default="adam"
        {optimizer}
        The warm start uses it too.
    precision : {"float32", "float64"}, default="float32"
        {precision}
        Fields are always evaluated with a float64 copy of the trained network, so a
        point's output does not depend on the batch it comes in (float32 products round
        differently with the batch size); on a CPU this makes evaluation and extraction
        slower than float32 would (see :ref:`user_guide_mpf`).
    device : str, default="cpu"
        {device}
    random_state : int, RandomState instance or None, default=None
        {random_state}
        The random draws include the warm start's and the off-surface points.
    verbose : int, default=0
        {verbose}
        The warm start prints its own lines (counted in ``warm-start step``).
    optimizer_params : dict or None, default=None
        {optimizer_params}
    off_surface_fraction : float, default=0.5
        Near-surface points per step (around input points drawn at random), as a fraction
        of ``batch_size``; as many free points of the box. They come from pools of 8 steps'
        worth of near and of free points whose distance targets are queried at once; every
        step takes its points at random from the pools, which are re-drawn every 32 steps
        (each sample serves 4 steps on average; see :ref:`mpf_speed`).
    n_jobs : int or None, default=None
        Threads of the kd-tree queries of the distance targets, which then run beside the
        network (scipy releases the GIL): ``None`` or 1 keeps them on the calling thread,
        ``k >= 2`` uses ``min(2, k - 1)`` extra threads, ``-1`` all cores. The fit does not
        depend on it (same numbers, bit for bit). The near and free samples come from pools
        of 8 steps' worth of points re-drawn every 32 steps, so each step queries a quarter
        of its points on average; with a thread the next pools are queried in the
        background. It pays off only on a free core with ``torch.set_num_threads(1)``.
    compile : bool or "auto", default=False
        Compile the training step (the forward pass with the closed-form gradients, the
        Laplacian's forward jet, the loss terms and their backward) with ``torch.compile``
        (inductor, static shapes: one graph with and one without the Laplacian points; a
        shorter last batch of an epoch runs eagerly). ``True`` compiles any fit, ``"auto"``
        only fits of at least 1,000 full-batch steps (the default budget has 1,950). If
        compiling fails (no C++ compiler, an unsupported platform or torch version) the fit
        goes on eagerly without an error (with a ``UserWarning`` for ``compile=True``);
        ``compiled_`` says which ran. The numbers equal the eager ones up to float32
        rounding. It pays off only for repeated fits of one configuration once the compiled
        graphs are in torch's on-disk cache (specific to the torch version, thread count and
        shapes); a first compile in a fresh cache costs more than a whole eager fit, so it is
        off by default (timings in :ref:`mpf_speed`).

    Attributes
    ----------
    net_ : skorch.NeuralNet
        {net_}
        Its ``history`` also holds ``train_<term>`` per epoch.
    module_ : torch.nn.Module
        A float64 copy of the trained network (``net_.module_``), which every query and
        extraction evaluates; it works on normalised coordinates.
    n_features_in_ : int
        Dimension d of the points.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names of ``X`` when it had string column names.
    box_center_ : ndarray of shape (n_features_in_,)
        Centre of the bounding box of the (deduplicated) points, input units.
    box_scale_ : float
        Normalisation factor ``0.9 / largest half-extent`` (1 / input unit): the network
        sees ``(X - box_center_) * box_scale_``, the bounding box mapped into
        ``[-0.9, 0.9]^d`` (a geometric normalisation, not the input moments that other
        estimators keep as ``mean_`` and ``scale_``).
    bounds_ : ndarray of shape (2, n_features_in_)
        Default extraction box ``[lo, hi]``, input units.
    point_spacing_ : float
        Median nearest-neighbour distance h of the points, input units.
    resolution_ : int
        Default extraction grid points per axis: the voxel is at most ``1.5 h`` (so layers
        a few spacings apart get grid nodes between them), clipped to [128, 256] in 3-D and
        [256, 1024] in 2-D.
    beta_ : float
        Fitted gate sharpness (``nan`` unless ``field="mpf"``).
    tree_ : scipy.spatial.cKDTree
        kd-tree of the distinct input points in normalised coordinates (the distances of
        ``trim="points"``).
    trim_tau_ : float
        Default threshold of ``trim="metric"``: 0.99-quantile of r at the points plus
        ``max(h, voxel / 2)``, input units (``nan`` for ``field="sdf"``).
    udf_level_ : float
        0.99-quantile of r at the points, the iso-level extracted for ``field="udf"``
        (``nan`` for ``field="sdf"``).
    n_iter_ : int
        {n_iter_}
    compiled_ : bool
        Whether the training steps ran compiled (``compile`` on and compiling succeeded).
    loss_curve_ : list of float
        {loss_curve_}
        The loss is the weighted sum of the terms.
    loss_terms_ : ndarray of shape (n_iter_, 8)
        Per-epoch means of the unweighted loss terms in the order of ``loss_weights`` above
        (0 where a term is off).

    See Also
    --------
    sklearn_icml26.metrics.chamfer_distance : Score extracted surfaces against ground truth.

    References
    ----------
    .. [1] Kong, Chen, Zong, Hou, Hou, Wang, He, "Metric-Phase Fields: Decoupling Distance and
       Sign for Thin-Structure Reconstruction from Unoriented Point Clouds", ICML 2026,
       arXiv:2605.25503.
    .. [2] Sitzmann et al., "Implicit Neural Representations with Periodic Activation
       Functions" (SIREN), NeurIPS 2020, arXiv:2006.09661.
    .. [3] Ben-Shabat et al., "DiGS: Divergence guided shape implicit neural representation
       for unoriented point clouds", CVPR 2022, arXiv:2106.10811.

    Examples
    --------
    A tiny fit on the project's open hemisphere (the default fit takes 2,000 steps on all
    20,000 points; this one 8 steps on 1,000 of them, to keep the example fast):

    >>> from sklearn_icml26.datasets import load_mpf_shape
    >>> from sklearn_icml26.surface import MPFSurface
    >>> shape = load_mpf_shape("open_hemisphere")  # 20,000 unoriented points
    >>> X = shape.points[::20]
    >>> mpf = MPFSurface(hidden_size=16, head_size=8, max_epochs=2, batch_size=250,
    ...                  warm_start_iter=10, random_state=0).fit(X)
    >>> mpf.transform(X[:3]).shape  # r, theta, phi at three points
    (3, 3)
    >>> vertices, faces = mpf.extract_mesh(resolution=24)  # trimmed near the points
    >>> vertices.shape[1], faces.shape[1], bool(mpf.beta_ > 0)
    (3, 3, True)
    >>> mpf.surface_normals(vertices[:2]).shape  # unit grad phi at two vertices
    (2, 3)
    """

    _parameter_constraints = {
        "field": [StrOptions({"mpf", "sdf", "udf"})],
        "hidden_size": [Interval(Integral, 1, None, closed="left")],
        "n_layers": [Interval(Integral, 1, None, closed="left")],
        "head_size": [Interval(Integral, 1, None, closed="left")],
        "omega0": [Interval(Real, 0, None, closed="neither")],
        "beta_init": [Interval(Real, 1e-3, None, closed="neither")],
        "softplus_beta": [Interval(Real, 0, None, closed="neither")],
        "loss_weights": [dict, None],
        "align_magnitude": [Interval(Real, 0, None, closed="left")],
        "far_alpha": [Interval(Real, 0, None, closed="neither")],
        "near_k": [Interval(Integral, 1, None, closed="left")],
        "near_scale": [Interval(Real, 0, None, closed="neither")],
        "box_padding": [Interval(Real, 0, None, closed="left")],
        "laplacian_fraction": [Interval(Real, 0, 1, closed="both")],
        "laplacian_schedule": [tuple, list],
        "warm_start_iter": [Interval(Integral, 0, None, closed="left")],
        "off_surface_fraction": [Interval(Real, 0, 1, closed="right")],
        "lr_schedule": [StrOptions({"constant", "cosine"})],
        "n_jobs": [Interval(Integral, 1, None, closed="left"), Options(Integral, {-1}), None],
        "compile": [StrOptions({"auto"}), "boolean"],
        **TorchEstimatorMixin._torch_parameter_constraints,
    }

    def __init__(self, field="mpf", *, hidden_size=64, n_layers=2, head_size=32,
                 omega0=20.0, beta_init=10.0, softplus_beta=1.0, loss_weights=None,
                 align_magnitude=1.0, far_alpha=100.0, near_k=10, near_scale=4.0,
                 box_padding=0.1, laplacian_fraction=0.25, laplacian_schedule=(0.2, 0.5),
                 warm_start_iter=200, max_epochs=50, batch_size=512, lr=1e-3,
                 lr_schedule="cosine", optimizer="adam", precision="float32", device="cpu",
                 random_state=None, verbose=0, optimizer_params=None,
                 off_surface_fraction=0.5, n_jobs=None, compile=False):
        self.field = field
        self.hidden_size = hidden_size
        self.n_layers = n_layers
        self.head_size = head_size
        self.omega0 = omega0
        self.beta_init = beta_init
        self.softplus_beta = softplus_beta
        self.loss_weights = loss_weights
        self.align_magnitude = align_magnitude
        self.far_alpha = far_alpha
        self.near_k = near_k
        self.near_scale = near_scale
        self.box_padding = box_padding
        self.laplacian_fraction = laplacian_fraction
        self.laplacian_schedule = laplacian_schedule
        self.warm_start_iter = warm_start_iter
        self.off_surface_fraction = off_surface_fraction
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.lr_schedule = lr_schedule
        self.optimizer = optimizer
        self.optimizer_params = optimizer_params
        self.n_jobs = n_jobs
        self.compile = compile
        self.precision = precision
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    # -- sklearn plumbing --------------------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.input_tags.allow_nan = False
        tags.non_deterministic = False
        return tags

    @classmethod
    def _get_test_params(cls):
        return [dict(hidden_size=8, head_size=8, n_layers=1, max_epochs=2, batch_size=16,
                     warm_start_iter=2, precision="float64", random_state=0)]

    @classmethod
    def _get_expected_failed_checks(cls):
        reason = ("MPFSurface fits 2-D or 3-D point clouds only and rejects the check's X with "
                  "another number of columns")
        return {check: reason for check in (
            "check_n_features_in_after_fitting", "check_positive_only_tag_during_fit",
            "check_estimators_dtypes", "check_dtype_object")}

    # -- validation helpers ------------------------------------------------------------------
    def _weights(self):
        weights = dict(DEFAULT_LOSS_WEIGHTS)
        if self.loss_weights is not None:
            unknown = sorted(set(self.loss_weights) - set(DEFAULT_LOSS_WEIGHTS))
            if unknown:
                raise ValueError(f"loss_weights has unknown key(s) {unknown}; valid keys are "
                                 f"{list(DEFAULT_LOSS_WEIGHTS)}.")
            for key, value in self.loss_weights.items():
                if not isinstance(value, Real) or not np.isfinite(value) or value < 0:
                    raise ValueError(f"loss_weights[{key!r}] must be a non-negative finite "
                                     f"number; got {value!r}.")
            weights.update({k: float(v) for k, v in self.loss_weights.items()})
        return weights

    def _schedule(self):
        sched = tuple(self.laplacian_schedule)
        if (len(sched) != 2 or not all(isinstance(v, Real) for v in sched)
                or not 0 <= sched[0] <= sched[1] <= 1):
            raise ValueError("laplacian_schedule must be a pair (a, b) with 0 <= a <= b <= 1; "
                             f"got {self.laplacian_schedule!r}.")
        return float(sched[0]), float(sched[1])

    def _check_normals(self, normals, n, d):
        normals = np.asarray(normals, dtype=np.float64)
        if normals.shape != (n, d):
            raise ValueError(f"normals must have shape (n_samples, n_features) = ({n}, {d}); "
                             f"got {normals.shape}.")
        if not np.all(np.isfinite(normals)):
            bad = np.flatnonzero(~np.all(np.isfinite(normals), axis=1))
            raise ValueError(f"normals holds NaN or infinite values at row(s) "
                             f"{bad[:10].tolist()}.")
        norms = np.linalg.norm(normals, axis=1)
        zero = np.flatnonzero(norms == 0)
        if zero.size:
            raise ValueError(f"normals has {zero.size} zero-length row(s) at index "
                             f"{zero[:10].tolist()}; every normal must be non-zero.")
        return normals / norms[:, None]

    def _normalise(self, Q):
        """Input units -> the network's box ``[-0.9, 0.9]^d``: ``(Q - box_center_) box_scale_``.

        Computed as ``(Q / 2 - box_center_ / 2) (2 box_scale_)``: the same float64 result wherever
        ``Q - box_center_`` does not overflow, and finite for any float64 ``Q`` in the box.
        """
        Q = np.asarray(Q, dtype=np.float64)
        return (Q / 2 - self.box_center_ / 2) * (2 * self.box_scale_)

    def _denormalise(self, Qn):
        """The inverse of :meth:`_normalise`: the box -> input units."""
        return np.asarray(Qn, dtype=np.float64) / self.box_scale_ + self.box_center_

    # -- fit -------------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, normals=None):
        """Fit the field to an unoriented point cloud.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points of the curve (d = 2) or surface (d = 3), any length unit; at least 2
            distinct points spanning more than a line. Duplicate points are removed with a
            warning.
        y : None
            Ignored.
        normals : array-like of shape (n_samples, n_features), default=None
            Optional unoriented normals (sign ignored); switch the normal term on. Routed as
            metadata (``set_fit_request(normals=True)``) inside a Pipeline.

        Returns
        -------
        self : MPFSurface
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` does not have 2 or 3 columns, has fewer than 2 points, NaN/inf, zero
            extent (all points identical) or zero extent in two or more directions (all points
            on a line), if ``normals`` has the wrong shape or zero rows, or on invalid
            hyperparameters.

        Warns
        -----
        ConvergenceWarning
            The package's one divergence policy (:class:`~sklearn_icml26.base.DivergenceGuard`):
            if the training loss became non-finite (training stops and the last parameters
            that gave a finite loss are restored; ``n_iter_`` counts the epochs kept) or
            ended a hundredfold or more above the first step's (the field has probably
            diverged). The warm start is guarded the same way (its messages count
            ``warm-start step``); a warm start that diverged either way is discarded and
            training starts from the initial parameters.
        """
        X = validate_data(self, X, dtype=np.float64)
        n, d = X.shape
        if n < 2:
            raise ValueError(f"MPFSurface needs at least 2 points; got n_samples = {n}.")
        if d not in (2, 3):
            raise ValueError(
                f"X must hold 2-D (curve) or 3-D (surface) points, i.e. 2 or 3 columns; got "
                f"X with {d} column(s) (shape {X.shape}, n_features={d})."
            )
        weights = self._weights()
        schedule = self._schedule()
        if normals is not None:
            normals = self._check_normals(normals, n, d)
        if not np.any(X.max(axis=0) > X.min(axis=0)):
            raise ValueError("X spans zero extent; cannot normalise (all points are "
                             "identical).")
        _, first = np.unique(X, axis=0, return_index=True)
        if first.size < n:
            keep = np.sort(first)
            warnings.warn(f"X holds {n - keep.size} duplicate point(s); fitting on the "
                          f"{keep.size} distinct points.", UserWarning,
                          stacklevel=_external_stacklevel())
            X = X[keep]
            normals = normals[keep] if normals is not None else None
            n = X.shape[0]
            if n < 2:
                raise ValueError(f"MPFSurface needs at least 2 distinct points; got "
                                 f"{n} distinct point (n_samples = {n}).")
        center, scale = _normalisation(X)
        if not np.isfinite(scale):
            half = float(np.max(X.max(axis=0) / 2 - X.min(axis=0) / 2))
            raise ValueError(f"X spans a largest half-extent of {half:.3g}, too small to "
                             "normalise in float64 (the factor 0.9 / half-extent overflows); "
                             "rescale X.")
        sv = np.linalg.svd((X - center) * scale, compute_uv=False)
        rank = int(np.sum(sv > 1e-9 * sv[0]))
        if d - rank >= 2:
            raise ValueError(f"X spans zero extent in {d - rank} of its {d} directions (all "
                             f"points lie on a {'line' if rank == 1 else f'{rank}-D plane'}); "
                             "MPFSurface needs a point cloud of a curve (2-D) or a surface "
                             "(3-D).")

        self.box_center_ = center
        self.box_scale_ = scale
        Xn = self._normalise(X)
        tree = cKDTree(Xn)
        k = min(self.near_k, n - 1)
        dist, _ = tree.query(Xn, k=k + 1)
        sigma = dist[:, k]
        spacing = float(np.median(dist[:, 1]))
        box_half = _BOX * (1 + self.box_padding)

        cols = [Xn, sigma[:, None]] + ([normals] if normals is not None else [])
        train = np.concatenate(cols, axis=1)
        batch = n if self.batch_size == -1 else min(self.batch_size, n)
        steps_per_epoch = math.ceil(n / batch)
        total_steps = steps_per_epoch * self.max_epochs

        training = _MPFTraining(
            total_steps=total_steps, warm_start_iter=self.warm_start_iter,
            warm_batch=2 * batch, lr=self.lr,
            laplacian_points=math.ceil(self.laplacian_fraction
                                       * math.ceil(self.off_surface_fraction * batch)),
            schedule=schedule,
            laplacian_weight=weights["laplacian"] if self.field != "udf" else 0.0,
            lr_schedule=self.lr_schedule,
            # the warm start: the estimator's optimizer (make_optimizer) at 5 x lr
            warm_optimizer=functools.partial(make_optimizer, self, lr=5.0 * self.lr),
            name=type(self).__name__, verbose=self.verbose,
            pool_data=self._pool_data(Xn, sigma, math.ceil(self.off_surface_fraction * batch)),
            compiled_step=self._compiled_step(weights, batch, n))
        context = FitContext(n_features=d, weights=weights, tree=tree, box_half=box_half,
                             training=training)
        try:
            self._fit_net(train, None, context=context)
        finally:
            training.cleanup()
        self.net_.criterion_.tree = None  # training-only; the estimator keeps its own tree
        self.net_.criterion_._points_on_device = None
        self.net_.module_.laplacian_points = 0
        # inference on a float64 copy: a point's fields do not depend on the batch it comes
        # in (float32 matrix products round differently with the batch size, up to 1.8e-7)
        self.module_ = _float64_copy(self.net_.module_, self.device)
        self.tree_ = tree
        step = training.compiled_step
        self.compiled_ = bool(step is not None and step.calls > 0 and not step.failed)
        # n_iter_ and loss_curve_ come from the adapter (epochs kept); the terms of those
        self.loss_terms_ = np.array(
            [[row.get(f"train_{key}", 0.0) for key in _TERMS]
             for row in self.net_.history[: self.n_iter_]],
            dtype=np.float64).reshape(-1, len(_TERMS))

        self.bounds_ = np.stack([self.box_center_ - box_half / self.box_scale_,
                                 self.box_center_ + box_half / self.box_scale_])
        self.point_spacing_ = spacing / self.box_scale_
        self.resolution_ = self._auto_resolution(self.bounds_, d)
        self.beta_ = float(self.net_.module_.beta().detach()) if self.field == "mpf" else np.nan
        if self.field != "sdf":
            r = self._fields(X)["r"]
            q = float(np.quantile(r, 0.99))
            voxel = float(np.max(self.bounds_[1] / 2 - self.bounds_[0] / 2) * 2
                          / (self.resolution_ - 1))
            self.udf_level_ = q
            self.trim_tau_ = q + max(self.point_spacing_, 0.5 * voxel)
        else:
            self.udf_level_ = np.nan
            self.trim_tau_ = np.nan
        return self

    def _compiled_step(self, weights, batch, n):
        """The :class:`_CompiledStep` of this fit, or ``None`` for eager training steps.

        ``compile=True`` compiles whenever torch has ``torch.compile``; ``"auto"`` only when
        the fit has at least ``_COMPILE_MIN_STEPS`` full-batch steps (a shorter fit does not
        earn the compile time back).
        """
        if self.compile is False or not hasattr(torch, "compile"):
            return None
        full_steps = (n // batch) * self.max_epochs
        if self.compile == "auto" and full_steps < _COMPILE_MIN_STEPS:
            return None
        step = _CompiledStep(batch, math.ceil(self.off_surface_fraction * batch), weights,
                             self.field, self.align_magnitude, self.far_alpha)
        step.warn = self.compile is True
        return step

    def _pool_data(self, points, sigma, n_off):
        """``(points, sigma, n_off)`` of the off-surface pools (:class:`_OffSurfacePools`), or
        ``None`` for a sampling and a distance query per step (the original code, which the
        speed benchmark's "before" arm in benchmarks/_mpf_arms.py trains with)."""
        return points, sigma, n_off

    # -- adapter hooks -------------------------------------------------------------------------
    # mini-batches by one index into whole tensors (base._WholeBatches), not sample by sample
    _whole_batches = True

    def _build_module(self, n_features_in, n_outputs, context):
        # n_features_in counts the training columns (points, scale, normals): d from context
        return _MPFModule(context.n_features, field=self.field, hidden_size=self.hidden_size,
                          n_layers=self.n_layers, head_size=self.head_size,
                          omega0=self.omega0, beta_init=self.beta_init,
                          softplus_beta=self.softplus_beta, near_scale=self.near_scale,
                          box_half=context.box_half,
                          off_surface_fraction=self.off_surface_fraction)

    def _build_criterion(self, context):
        crit = _MPFCriterion(self.field, context.weights, context.tree,
                             self.align_magnitude, self.far_alpha)
        n_jobs = self.n_jobs
        if n_jobs is not None and n_jobs < 0:
            n_jobs = os.cpu_count() or 1
        crit.query_threads = min(2, (n_jobs or 1) - 1)
        return crit

    def _build_callbacks(self, context):
        return [("mpf_training", context.training)]

    # -- field evaluation ------------------------------------------------------------------------
    def _fields(self, Q, grads=False, chunk_size=32768):
        """r, theta, P, phi (and grad_phi) at points Q (input units), float64 numpy."""
        res = self._fields_normalised(self._normalise(Q), grads=grads, chunk_size=chunk_size)
        for key in ("r", "theta", "phi"):
            if key in res:
                res[key] = res[key] / self.box_scale_
        return res

    def _fields_normalised(self, Qn, grads=False, chunk_size=32768, keys=None):
        """The fields at normalised points, in normalised units, from the float64 module.

        Every row goes through the same float64 operations whatever the batch, so the result
        of a point does not depend on the other points or on ``chunk_size``.
        """
        module = self.module_
        device = next(module.parameters()).device
        Qn = np.asarray(Qn, dtype=np.float64)
        keys = keys or ("r", "theta", "P", "phi", "grad_phi")
        parts = {}
        for start in range(0, max(Qn.shape[0], 1), chunk_size):  # one empty pass for no rows
            x = torch.as_tensor(Qn[start : start + chunk_size], device=device)
            if grads:
                with torch.enable_grad():
                    out = module.fields(x, grads=True, create_graph=False)
            else:
                with torch.no_grad():
                    out = module.fields(x)
            for key in keys:
                if key in out:
                    parts.setdefault(key, []).append(out[key].detach().cpu().numpy())
        return {k: np.concatenate(v) for k, v in parts.items()}

    def _check_query(self, Q):
        check_is_fitted(self)
        Q = validate_data(self, Q, reset=False, dtype=np.float64)
        # the first layer computes omega * (W x + b); beyond this radius it overflows the
        # float64 evaluation and the fields become NaN
        first = self.module_.backbone[0]
        weight = first.linear.weight.detach().abs().double()
        bias = first.linear.bias.detach().abs().double()
        gain = max(float(first.omega * weight.sum(dim=1).max()), 1.0)
        limit_n = float(np.finfo(np.float64).max) / 4 / gain - float(bias.max())
        with np.errstate(over="ignore", invalid="ignore"):
            # halved differences: no overflow for any pair of float64 coordinates
            half_peak = float(np.max(np.abs(Q / 2 - self.box_center_ / 2))) if Q.size else 0.0
            if not half_peak * self.box_scale_ <= limit_n / 2:
                limit, peak = limit_n / self.box_scale_, 2 * half_peak
                raise ValueError(
                    "X holds coordinates too large: every coordinate must lie within "
                    f"{limit:.3g} of the fitted box_center_ (beyond, the network's float64 "
                    f"evaluation overflows); got a coordinate {peak:.3g} away (largest |X| = "
                    f"{float(np.max(np.abs(Q))):.3g})."
                )
        return Q

    def decision_function(self, X):
        """The fused field phi at query points (its zero set is the untrimmed surface).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query points, input units.

        Returns
        -------
        phi : ndarray of shape (n_queries,)
            ``phi = r tanh(beta theta) + theta`` in input units, float64; ``theta`` for
            ``field="sdf"``; the unsigned ``r`` for ``field="udf"``.
        """
        X = self._check_query(X)
        return self._fields(X)["phi"]

    def transform(self, X):
        """The learned fields at query points.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query points, input units.

        Returns
        -------
        fields : ndarray of shape (n_queries, 3) or (n_queries, 1)
            ``[r, theta, phi]`` for ``field="mpf"``, ``[phi]`` for ``"sdf"``, ``[r]`` for
            ``"udf"``; input units, float64.

        Raises
        ------
        ValueError
            If a query coordinate lies so far from ``box_center_`` that the network would
            overflow its float64 evaluation (beyond about 1e306 from the centre for a shape
            of unit size).
        """
        X = self._check_query(X)
        out = self._fields(X)
        if self.field == "mpf":
            return np.stack([out["r"], out["theta"], out["phi"]], axis=1)
        return (out["phi"] if self.field == "sdf" else out["r"])[:, None]

    def get_feature_names_out(self, input_features=None):
        """Names of the columns of :meth:`transform`.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Ignored (the output columns do not depend on the input names).

        Returns
        -------
        feature_names_out : ndarray of str objects
            ``["r", "theta", "phi"]``, ``["phi"]`` or ``["r"]``.
        """
        check_is_fitted(self)
        names = {"mpf": ["r", "theta", "phi"], "sdf": ["phi"], "udf": ["r"]}[self.field]
        return np.asarray(names, dtype=object)

    @available_if(_has_metric)
    def metric_field(self, X):
        """The metric field r (a learned unsigned distance) at query points.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query points, input units.

        Returns
        -------
        r : ndarray of shape (n_queries,)
            ``r >= 0`` in input units, float64.
        """
        X = self._check_query(X)
        return self._fields(X)["r"]

    @available_if(_is_mpf)
    def phase_field(self, X):
        """The phase theta and the gate P = tanh(beta theta) at query points.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query points, input units.

        Returns
        -------
        theta : ndarray of shape (n_queries,)
            The signed phase, input units, float64.
        P : ndarray of shape (n_queries,)
            The gate in (-1, 1), dimensionless, float64.
        """
        X = self._check_query(X)
        out = self._fields(X)
        return out["theta"], out["P"]

    def score(self, X, y=None):
        """Minus the mean first-order distance of points to the untrimmed zero set.

        ``-mean_i |phi(x_i)| / max(||grad phi(x_i)||, 1e-12)`` (``-mean_i r(x_i)`` for
        ``field="udf"``). One-sided: it checks that held-out surface points lie on the zero
        set and is blind to spurious surface elsewhere, so a field that crosses zero
        everywhere scores near 0: do not select ``lr`` or ``omega0`` by it in a grid search;
        score extracted meshes with :func:`~sklearn_icml26.metrics.chamfer_distance` instead
        (a callable ``scoring=`` of the search).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Held-out points of the surface, input units.
        y : None
            Ignored.

        Returns
        -------
        score : float
            Negative distance, input units (higher is better).
        """
        X = self._check_query(X)
        if self.field == "udf":
            return -float(np.mean(self._fields(X)["r"]))
        out = self._fields(X, grads=True)
        norm = np.maximum(np.linalg.norm(out["grad_phi"], axis=1), 1e-12)
        return -float(np.mean(np.abs(out["phi"]) / norm))

    def surface_normals(self, X):
        """Unit normals of the field's level sets at query points: ``grad phi / |grad phi|``.

        At mesh vertices these are the surface normals (``grad r`` for ``field="udf"``, whose
        extracted shell is a level set of ``r``), from the closed-form input gradient of the
        network, not from the triangles. They point to the side where ``phi > 0``; the sign
        of that side is arbitrary for an open surface.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query points, input units (e.g. the vertices of :meth:`extract_mesh`).

        Returns
        -------
        normals : ndarray of shape (n_queries, n_features)
            Unit vectors, float64; a row is zero where the gradient vanishes.
        """
        X = self._check_query(X)
        g = self._fields(X, grads=True)["grad_phi"]
        norm = np.linalg.norm(g, axis=1, keepdims=True)
        return np.divide(g, norm, out=np.zeros_like(g), where=norm > 0)
    def extract_mesh(self, resolution="auto", bounds=None, *, trim="auto", trim_tau=None,
                     level=None, chunk_size=65536):
        """Triangle mesh of the zero set by marching cubes, trimmed at open boundaries.

        ``phi`` is evaluated on a ``resolution^3`` grid and meshed with
        :func:`skimage.measure.marching_cubes`. ``trim="metric"`` keeps a face iff
        ``r(centroid) < tau``; ``"points"`` iff the centroid lies within
        ``max(2 h, voxel)`` of an input point; ``None`` keeps all; ``"auto"`` is
        ``"points"`` for ``field="mpf"`` and ``None`` otherwise. (The original ``"metric"``
        default left surface beyond open boundaries: ``r`` is flat next to the surface, so
        it stays below ``tau`` there; see :ref:`user_guide_mpf`.)

        The grid is evaluated and meshed in slabs of about 4 million points (a float32 field
        of 16 MiB, sharing one plane with the next slab, whose vertices are merged), so
        memory does not grow with ``resolution^3``: the mesh equals the one of the whole
        volume, and the peak beyond the mesh itself stays at tens of MiB at every
        resolution (at ``resolution=1024`` the whole field alone would take 4 GiB in
        float32). With ``trim="points"`` only the grid nodes within ``max(2 h, voxel) +
        sqrt(3) voxel`` of an input point are evaluated (a kept face's cell has all its
        nodes there; the others are filled with a constant above the level): the trimmed
        mesh is the same, bit for bit, at a fraction of the network calls.

        Parameters
        ----------
        resolution : int or "auto", default="auto"
            Grid points per axis, in [8, 1024]; ``"auto"`` takes ``resolution_`` (a voxel of
            at most 1.5 point spacings, clipped to [128, 256]), recomputed for other
            ``bounds``.
        bounds : array-like of shape (2, 3), default=None
            Box ``[lo, hi]`` in input units; default ``bounds_``.
        trim : {"auto", "metric", "points"} or None, default="auto"
            Trimming rule.
        trim_tau : float, default=None
            Threshold of ``"metric"`` trimming in input units; default ``trim_tau_``.
        level : float, default=None
            Iso-level, input units; default 0 (``udf_level_`` for ``field="udf"``).
        chunk_size : int, default=65536
            Grid points per network call (the result does not depend on it).

        Returns
        -------
        vertices : ndarray of shape (n_vertices, 3)
            Vertex coordinates, input units, float64.
        faces : ndarray of shape (n_faces, 3)
            Vertex indices of each triangle, int64.

        Raises
        ------
        ValueError
            If the estimator was fitted on points that are not 3-D, on a bad resolution,
            bounds, trim (``"metric"`` with ``field="sdf"``) or ``chunk_size < 1``.
        """
        return self._extract_mesh(resolution, bounds, trim, trim_tau, level, chunk_size)

    def to_trimesh(self, resolution="auto", bounds=None, *, trim="auto", trim_tau=None,
                   level=None):
        """The extracted mesh as a :class:`trimesh.Trimesh` with normals from the field.

        :meth:`extract_mesh` with the same arguments, vertex normals from
        :meth:`surface_normals` (the field's gradient at each vertex). trimesh is the
        ``mesh`` extra (``pip install "sklearn_icml26[mesh]"``); it then exports the mesh to
        PLY, OBJ, STL, GLB and more (``mesh.export("out.glb")``, or :func:`write_mesh`).

        Parameters
        ----------
        resolution : int or "auto", default="auto"
            Grid points per axis (see :meth:`extract_mesh`).
        bounds : array-like of shape (2, 3), default=None
            Box ``[lo, hi]`` in input units; default ``bounds_``.
        trim : {"auto", "metric", "points"} or None, default="auto"
            Trimming rule (see :meth:`extract_mesh`).
        trim_tau : float, default=None
            Threshold of ``"metric"`` trimming, input units.
        level : float, default=None
            Iso-level, input units.

        Returns
        -------
        mesh : trimesh.Trimesh
            Vertices in input units, faces as extracted (``process=False``), and
            ``vertex_normals`` from the field's gradient.

        Raises
        ------
        ImportError
            If trimesh is not installed.
        ValueError
            As :meth:`extract_mesh`.
        """
        from ._mesh_io import _import_trimesh, to_trimesh

        check_is_fitted(self)
        _import_trimesh("MPFSurface.to_trimesh")  # fail before the grid is evaluated
        V, F, N = self._mesh_with_normals(dict(resolution=resolution, bounds=bounds, trim=trim,
                                               trim_tau=trim_tau, level=level))
        return to_trimesh(V, F, N)

    def to_open3d(self, resolution="auto", bounds=None, *, trim="auto", trim_tau=None,
                  level=None):
        """The extracted mesh as an :class:`open3d.geometry.TriangleMesh` with normals.

        :meth:`extract_mesh` with the same arguments and vertex normals from
        :meth:`surface_normals`. open3d is the ``open3d`` extra
        (``pip install "sklearn_icml26[open3d]"``; it also needs the system library
        ``libusb-1.0``).

        Parameters
        ----------
        resolution : int or "auto", default="auto"
            Grid points per axis (see :meth:`extract_mesh`).
        bounds : array-like of shape (2, 3), default=None
            Box ``[lo, hi]`` in input units; default ``bounds_``.
        trim : {"auto", "metric", "points"} or None, default="auto"
            Trimming rule (see :meth:`extract_mesh`).
        trim_tau : float, default=None
            Threshold of ``"metric"`` trimming, input units.
        level : float, default=None
            Iso-level, input units.

        Returns
        -------
        mesh : open3d.geometry.TriangleMesh
            Vertices in input units, triangles as extracted, ``vertex_normals`` from the
            field's gradient.

        Raises
        ------
        ImportError
            If open3d is not installed or does not import.
        ValueError
            As :meth:`extract_mesh`.
        """
        from ._mesh_io import _import_open3d, to_open3d_mesh

        check_is_fitted(self)
        _import_open3d("MPFSurface.to_open3d")  # fail before the grid is evaluated
        V, F, N = self._mesh_with_normals(dict(resolution=resolution, bounds=bounds, trim=trim,
                                               trim_tau=trim_tau, level=level))
        return to_open3d_mesh(V, F, N)

    def extract_curve(self, resolution="auto", bounds=None, *, trim="auto", trim_tau=None,
                      level=None):
        """Polylines of the zero set of a 2-D field, trimmed at open ends.

        ``phi`` is evaluated on a ``resolution^2`` grid and contoured with
        :func:`skimage.measure.find_contours`; trimming drops segments by the rules of
        :meth:`extract_mesh` and splits polylines where segments go. In 2-D ``"auto"`` is
        ``"metric"`` for ``field="mpf"``: with dense 2-D samples ``"points"`` keeps only
        segments within one voxel of a point and cuts an open arc into pieces (see
        :ref:`mpf_defaults`).

        Parameters
        ----------
        resolution : int or "auto", default="auto"
            Grid points per axis, in [8, 1024]; ``"auto"`` takes ``resolution_`` (a voxel of
            at most 1.5 point spacings, clipped to [256, 1024]), recomputed for other
            ``bounds``.
        bounds : array-like of shape (2, 2), default=None
            Box ``[lo, hi]`` in input units; default ``bounds_``.
        trim : {"auto", "metric", "points"} or None, default="auto"
            Trimming rule.
        trim_tau : float, default=None
            Threshold of ``"metric"`` trimming in input units; default ``trim_tau_``.
        level : float, default=None
            Iso-level, input units; default 0 (``udf_level_`` for ``field="udf"``).

        Returns
        -------
        curves : list of ndarray of shape (m_i, 2)
            Polylines in input units, float64 (closed ones repeat their first point).

        Raises
        ------
        ValueError
            If the estimator was fitted on points that are not 2-D, on a bad resolution,
            bounds or trim.
        """
        return self._extract_curve(resolution, bounds, trim, trim_tau, level)
