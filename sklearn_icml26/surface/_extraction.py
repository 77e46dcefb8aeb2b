"""Extraction of a fitted MPFSurface: grid evaluation in slabs, marching cubes and contours,
and trimming at open boundaries.

:class:`_FieldExtraction` holds the work behind :meth:`MPFSurface.extract_mesh` and
:meth:`MPFSurface.extract_curve` (the estimator keeps the public methods and their docs); it
reads the fitted state and the field evaluation of the estimator it is mixed into.
"""

import math
import warnings
from numbers import Integral

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..base import _external_stacklevel

# resolution="auto": the grid voxel follows the point spacing h (voxel <= _VOXEL_PER_SPACING h),
# clipped per dimension to [lo, hi] grid points per axis
_VOXEL_PER_SPACING = 1.5
_AUTO_RESOLUTION_RANGE = {2: (256, 1024), 3: (128, 256)}
# grid points per slab of extract_mesh / extract_curve: the float32 field of one slab (16 MiB)
# is all of the grid that is held at once, whatever the resolution
_SLAB_POINTS = 2**22


class _FieldExtraction:
    """Grid, slab, trimming and meshing helpers of :class:`MPFSurface`."""

    def _auto_resolution(self, bounds, d):
        """Grid points per axis whose voxel is at most ``_VOXEL_PER_SPACING`` point spacings.

        Two layers ``g`` apart are only meshed apart when grid nodes fall between them
        (voxel < g); the point spacing ``h`` bounds the gaps the data can resolve, so the
        voxel follows ``h``: ``resolution = ceil(extent / (1.5 h)) + 1``, clipped to
        [128, 256] in 3-D and [256, 1024] in 2-D.
        """
        extent = float(np.max(np.asarray(bounds)[1] / 2 - np.asarray(bounds)[0] / 2) * 2)
        lo, hi = _AUTO_RESOLUTION_RANGE.get(d, (128, 256))
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            want = extent / (_VOXEL_PER_SPACING * self.point_spacing_)
        if not np.isfinite(want):
            return hi
        return int(min(hi, max(lo, math.ceil(want) + 1)))

    def _grid(self, resolution, bounds, d):
        """Bounds (input units) and the grid's axes and spacing in normalised units."""
        if isinstance(resolution, str) and resolution == "auto":
            resolution = (self.resolution_ if bounds is None
                          else self._auto_resolution(bounds, d))
        if (isinstance(resolution, bool) or not isinstance(resolution, Integral)
                or not 8 <= resolution <= 1024):
            raise ValueError(f"resolution must be an integer in [8, 1024] or 'auto'; got "
                             f"{resolution!r}.")
        if bounds is None:
            bounds = self.bounds_
        bounds = np.asarray(bounds, dtype=np.float64)
        if bounds.shape != (2, d) or not np.all(np.isfinite(bounds)) or np.any(
                bounds[0] >= bounds[1]):
            raise ValueError(f"bounds must be an array of shape (2, {d}) = [lo, hi] with "
                             f"lo < hi in every dimension; got {bounds.tolist()}.")
        with np.errstate(over="ignore", invalid="ignore"):
            lo, hi = self._normalise(bounds[0]), self._normalise(bounds[1])
            step = hi / (resolution - 1) - lo / (resolution - 1)
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))
                and np.all(np.isfinite(step)) and np.all(step > 0)):
            raise ValueError(f"bounds {bounds.tolist()} lie too far from box_center_ (or too close "
                             "together) for the grid in the fitted normalisation.")
        axes = [np.linspace(lo[j], hi[j], resolution) for j in range(d)]
        return bounds, axes, step

    def _grid_block(self, out, axes, first, chunk_size, key, mask=None, fill=0.0):
        """Write the field ``key`` (normalised units) of grid planes ``first, first + 1, ...``
        along axis 0 into ``out`` (one plane per row of its first axis).

        The points of one network call are built from flat grid indices, so no more than
        ``chunk_size`` points exist at a time. With a boolean ``mask`` of ``out``'s shape only
        the nodes it marks are evaluated; the others get ``fill``.
        """
        flat = out.reshape(-1)
        shape = out.shape
        if mask is None:
            nodes = None
            total = flat.size
        else:
            nodes = np.flatnonzero(mask.reshape(-1))
            total = nodes.size
            flat[:] = fill
        for start in range(0, total, chunk_size):
            which = (np.arange(start, min(start + chunk_size, total)) if nodes is None
                     else nodes[start : start + chunk_size])
            idx = np.unravel_index(which, shape)
            pts = np.empty((idx[0].size, len(axes)))
            pts[:, 0] = axes[0][first + idx[0]]
            for j in range(1, len(axes)):
                pts[:, j] = axes[j][idx[j]]
            flat[which] = self._fields_normalised(pts, chunk_size=chunk_size, keys=(key,))[key]

    def _near_nodes(self, axes, step, first, n):
        """Grid nodes of planes ``first .. first + n - 1`` that a kept face can depend on.

        ``trim="points"`` keeps a face iff its centroid lies within ``T = max(2 h, voxel)``
        of an input point; the centroid lies in its marching-cubes cell, whose eight nodes
        are within one cell diagonal of it, so every node of a kept face's cell lies within
        ``T + sqrt(3) voxel`` of an input point. The mask marks a superset of those nodes (a
        cube of that half-width around the node nearest each point, by a separable maximum
        filter): evaluating only them leaves every kept face unchanged. Where that half-width
        is many cells (a small ``bounds`` box), the same cubes come from a Chebyshev-distance
        query of the slab's nodes instead, so memory stays that of the slab.
        """
        from scipy.ndimage import maximum_filter
        from scipy.spatial import cKDTree

        P = self.tree_.data  # the normalised input points
        lo = np.array([a[0] for a in axes])
        h = 2 * self.point_spacing_ * self.box_scale_
        reach = max(h, float(np.max(step))) + math.sqrt(len(axes)) * float(np.max(step))
        k = int(math.ceil(reach / float(np.min(step)))) + 1
        idx = np.rint((P - lo) / step).astype(np.int64)
        sizes = np.array([len(a) for a in axes])
        lo_plane, hi_plane = first - k, first + n + k  # seeds of the slab and its margin
        keep = ((idx[:, 0] >= lo_plane) & (idx[:, 0] < hi_plane)
                & np.all((idx[:, 1:] >= -k) & (idx[:, 1:] < sizes[1:] + k), axis=1))
        idx = idx[keep]
        shape = (n, *(int(m) for m in sizes[1:]))
        if (n + 2 * k) * int(np.prod(sizes[1:] + 2 * k)) > 8 * int(np.prod(shape)):
            if len(idx) == 0:
                return np.zeros(shape, dtype=bool)
            nodes = np.stack(np.meshgrid(np.arange(first, first + n),
                                         *(np.arange(m) for m in shape[1:]), indexing="ij"),
                             axis=-1).reshape(-1, len(axes))
            dist, _ = cKDTree(idx).query(nodes, p=np.inf, distance_upper_bound=k + 0.5)
            return (dist <= k).reshape(shape)
        seeds = np.zeros((n + 2 * k, *(sizes[1:] + 2 * k)), dtype=np.uint8)
        seeds[(idx[:, 0] - lo_plane, *(idx[:, j] + k for j in range(1, len(axes))))] = 1
        grown = maximum_filter(seeds, size=2 * k + 1, mode="constant", cval=0)
        return grown[(slice(k, k + n), *(slice(k, k + int(m)) for m in sizes[1:]))] > 0

    def _planes_per_slab(self, axes):
        plane = int(np.prod([len(a) for a in axes[1:]]))
        return int(min(len(axes[0]), max(1, _SLAB_POINTS // plane)))

    def _resolve_trim(self, trim, trim_tau):
        if trim not in ("auto", "metric", "points", None):
            raise ValueError(f"trim must be 'auto', 'metric', 'points' or None; got {trim!r}.")
        if trim == "auto":  # measured choice: see extract_mesh and extract_curve
            if self.field != "mpf":
                trim = None
            else:
                trim = "points" if self.n_features_in_ == 3 else "metric"
        if trim == "metric" and self.field == "sdf":
            raise ValueError("trim='metric' needs r, which field='sdf' does not learn; use "
                             "trim='points' or None.")
        tau = None
        if trim == "metric":
            tau = self.trim_tau_ if trim_tau is None else float(trim_tau)
            if not tau > 0:
                raise ValueError(f"trim_tau must be positive; got {trim_tau!r}.")
        return trim, tau

    def _grid_values(self, axes, chunk_size, dtype=np.float64):
        """The whole grid's field (normalised units), evaluated slab by slab."""
        key = "r" if self.field == "udf" else "phi"
        vol = np.empty(tuple(len(a) for a in axes), dtype=dtype)
        step = self._planes_per_slab(axes)
        for first in range(0, len(axes[0]), step):
            self._grid_block(vol[first : first + step], axes, first, chunk_size, key)
        return vol

    def _keep(self, centroids, trim, tau, step):
        """Faces / segments kept by the trim rule; ``centroids`` and ``step`` normalised."""
        if trim is None or len(centroids) == 0:
            return np.ones(len(centroids), dtype=bool)
        if trim == "metric":
            return self._fields_normalised(centroids, keys=("r",))["r"] / self.box_scale_ < tau
        dist, _ = self.tree_.query(centroids, k=1)
        voxel = float(np.max(step)) / self.box_scale_
        return dist / self.box_scale_ < max(2 * self.point_spacing_, voxel)

    def _level(self, level):
        if level is None:
            return float(self.udf_level_) if self.field == "udf" else 0.0
        return float(level)

    def _extract_mesh(self, resolution, bounds, trim, trim_tau, level, chunk_size):
        """The work of :meth:`MPFSurface.extract_mesh`."""
        check_is_fitted(self)
        if (isinstance(chunk_size, bool) or not isinstance(chunk_size, Integral)
                or chunk_size < 1):
            raise ValueError(f"chunk_size must be an integer >= 1 (grid points per network "
                             f"call); got chunk_size={chunk_size!r}.")
        if self.n_features_in_ != 3:
            raise ValueError(f"extract_mesh needs 3-D points; this MPFSurface was fitted on "
                             f"{self.n_features_in_}-D points"
                             + (" (use extract_curve)." if self.n_features_in_ == 2 else "."))
        from skimage.measure import marching_cubes

        bounds, axes, step = self._grid(resolution, bounds, 3)
        trim, tau = self._resolve_trim(trim, trim_tau)
        level = self._level(level)
        level_n = level * self.box_scale_  # the grid holds the field in normalised units
        key = "r" if self.field == "udf" else "phi"
        n_planes = len(axes[0])
        per_slab = self._planes_per_slab(axes)
        # one slab = the last plane of the previous slab + per_slab new planes: marching cubes
        # meshes the cells between them, and the vertices on the shared plane are merged
        buffer = np.empty((per_slab + 1, len(axes[1]), len(axes[2])), dtype=np.float32)
        lo = np.array([a[0] for a in axes])
        lo_value, hi_value = np.inf, -np.inf
        verts, faces, n_verts, seam, have_prev = [], [], 0, None, False
        # with the point rule, only nodes near the input points can shape a kept face
        band = trim == "points"
        fill = level_n + 4 * float(np.max(step))
        for first in range(0, n_planes, per_slab):
            new = min(per_slab, n_planes - first)
            block = buffer[1 : new + 1] if have_prev else buffer[:new]
            mask = self._near_nodes(axes, step, first, new) if band else None
            self._grid_block(block, axes, first, chunk_size, key, mask=mask, fill=fill)
            values = block if mask is None else block[mask]
            if values.size:
                lo_value = min(lo_value, float(values.min()))
                hi_value = max(hi_value, float(values.max()))
            slab = buffer[: new + 1] if have_prev else buffer[:new]
            offset = first - 1 if have_prev else first
            if slab.shape[0] >= 2 and slab.min() < level_n < slab.max():
                v, f, _, _ = marching_cubes(slab, level=level_n)
                v = v.astype(np.float64)
                ids = np.empty(len(v), dtype=np.int64)
                fresh = np.ones(len(v), dtype=bool)
                if seam is not None:  # vertices of the shared plane exist already
                    on_seam = np.flatnonzero(v[:, 0] == 0)
                    both = np.concatenate([seam[0], v[on_seam, 1:]])
                    _, inverse = np.unique(both, axis=0, return_inverse=True)
                    inverse = inverse.reshape(-1)
                    owner = np.full(len(both), -1, dtype=np.int64)
                    owner[inverse[: len(seam[0])]] = seam[1]
                    found = owner[inverse[len(seam[0]) :]]
                    ids[on_seam[found >= 0]] = found[found >= 0]
                    fresh[on_seam[found >= 0]] = False
                ids[fresh] = n_verts + np.arange(int(fresh.sum()))
                n_verts += int(fresh.sum())
                last = np.flatnonzero(v[:, 0] == slab.shape[0] - 1)
                seam = (v[last, 1:], ids[last])
                v[:, 0] += offset
                vn = v * step + lo
                verts.append(vn[fresh])
                f = f.astype(np.int64)
                keep = self._keep(vn[f].mean(axis=1), trim, tau, step)
                faces.append(ids[f[keep]])
            else:
                seam = None
            if n_planes > first + new:
                buffer[0] = slab[-1]
                have_prev = True
        if not lo_value < level_n < hi_value:
            where = ("near the input points (the only place trim='points' keeps faces)"
                     if band else "inside the box")
            lo_in, hi_in = lo_value / self.box_scale_, hi_value / self.box_scale_
            warnings.warn(f"the field does not cross level {level:g} {where} "
                          f"(range [{lo_in:.4g}, {hi_in:.4g}]); returning an empty mesh.",
                          UserWarning, stacklevel=_external_stacklevel())
            return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)
        verts = np.concatenate(verts)
        faces = np.concatenate(faces).reshape(-1, 3)
        used = np.unique(faces)
        remap = np.full(len(verts), -1, dtype=np.int64)
        remap[used] = np.arange(used.size)
        return self._denormalise(verts[used]), remap[faces]
    def _mesh_with_normals(self, mesh_kwargs):
        V, F = self.extract_mesh(**mesh_kwargs)
        N = self.surface_normals(V) if len(V) else np.zeros((0, 3))
        return V, F, N

    def _extract_curve(self, resolution, bounds, trim, trim_tau, level):
        """The work of :meth:`MPFSurface.extract_curve`."""
        check_is_fitted(self)
        if self.n_features_in_ != 2:
            raise ValueError(f"extract_curve needs 2-D points; this MPFSurface was fitted on "
                             f"{self.n_features_in_}-D points"
                             + (" (use extract_mesh)." if self.n_features_in_ == 3 else "."))
        from skimage.measure import find_contours

        bounds, axes, step = self._grid(resolution, bounds, 2)
        trim, tau = self._resolve_trim(trim, trim_tau)
        level = self._level(level)
        level_n = level * self.box_scale_  # the grid holds the field in normalised units
        grid = self._grid_values(axes, 65536)
        if not grid.min() < level_n < grid.max():
            warnings.warn(f"the field does not cross level {level:g} inside the box "
                          f"(range [{grid.min() / self.box_scale_:.4g}, "
                          f"{grid.max() / self.box_scale_:.4g}]); returning no curve.",
                          UserWarning, stacklevel=_external_stacklevel())
            return []
        lo = np.array([a[0] for a in axes])
        curves = []
        for c in find_contours(grid, level_n):
            c = c.astype(np.float64) * step + lo
            if len(c) < 2:
                continue
            keep = self._keep(0.5 * (c[1:] + c[:-1]), trim, tau, step)
            start = None
            for i, ok in enumerate(np.append(keep, False)):
                if ok and start is None:
                    start = i
                elif not ok and start is not None:
                    curves.append(self._denormalise(c[start : i + 1]))
                    start = None
        return curves
