"""Display of a reconstructed surface: the zero-level curve (2-D) or mesh (3-D) over the points."""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._compat import check_matplotlib_support

__all__ = ["SurfaceDisplay"]


class SurfaceDisplay:
    """The reconstructed zero set of an implicit field over the input points.

    In 2-D: the extracted polylines over the points, optionally over a filled contour of one
    of the learned fields (``r``, ``theta`` or ``phi``) on a grid. In 3-D: the extracted
    triangle mesh (:meth:`~mpl_toolkits.mplot3d.axes3d.Axes3D.plot_trisurf`) with the
    points. Several reconstructions go on one axes by passing ``ax``. Create it with
    :meth:`from_estimator`, or from precomputed curves or a mesh. Needs matplotlib (the
    ``plot`` extra).

    Parameters
    ----------
    curves : list of ndarray of shape (m_i, 2), default=None
        Polylines of a 2-D reconstruction (input units), as returned by
        :meth:`MPFSurface.extract_curve`.
    vertices : ndarray of shape (n_vertices, 3), default=None
        Vertices of a 3-D mesh (input units), as returned by :meth:`MPFSurface.extract_mesh`.
    faces : ndarray of shape (n_faces, 3), default=None
        Vertex indices of each triangle of the mesh.
    points : ndarray of shape (n_points, 2) or (n_points, 3), default=None
        The input points drawn beside the reconstruction.
    grid : tuple of three ndarray of shape (n, n), default=None
        ``(xx, yy, values)``: a field on a 2-D grid drawn as filled contours (2-D only).
    name : str, default=None
        Legend label of the reconstruction.

    Attributes
    ----------
    curve_lines_ : list of matplotlib.lines.Line2D
        One line per polyline (2-D; empty in 3-D).
    mesh_ : mpl_toolkits.mplot3d.art3d.Poly3DCollection or None
        The mesh (3-D with at least one face).
    points_ : matplotlib.artist.Artist or None
        The input points (a ``Line2D`` in 2-D, a ``Path3DCollection`` in 3-D).
    background_ : matplotlib.contour.QuadContourSet or None
        The filled contours of ``grid``.
    colorbar_ : matplotlib.colorbar.Colorbar or None
        The colour bar of ``grid``.
    ax_ : matplotlib.axes.Axes
        The axes drawn on (3-D axes for a mesh).
    figure_ : matplotlib.figure.Figure
        The figure of ``ax_``.

    See Also
    --------
    MPFSurface.extract_curve : The 2-D zero-level curves.
    MPFSurface.extract_mesh : The 3-D zero-level mesh.

    References
    ----------
    .. [1] Kong, Chen, Zong, Hou, Hou, Wang, He, "Metric-Phase Fields: Decoupling Distance and
       Sign for Thin-Structure Reconstruction from Unoriented Point Clouds", ICML 2026,
       arXiv:2605.25503.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn_icml26.surface import MPFSurface, SurfaceDisplay
    >>> t = np.linspace(0, np.pi, 200)
    >>> X = np.c_[np.cos(t), np.sin(t)]  # an open arc
    >>> mpf = MPFSurface(hidden_size=16, head_size=8, max_epochs=2, batch_size=100,
    ...                  warm_start_iter=10, random_state=0).fit(X)
    >>> disp = SurfaceDisplay.from_estimator(mpf, X, resolution=32, background="phi")
    >>> disp.background_ is not None, disp.points_.get_xydata().shape
    (True, (200, 2))
    """

    def __init__(self, *, curves=None, vertices=None, faces=None, points=None, grid=None,
                 name=None):
        self.curves = curves
        self.vertices = vertices
        self.faces = faces
        self.points = points
        self.grid = grid
        self.name = name

    def plot(self, ax=None, *, name=None, color=None, points_color="0.6", colorbar=True,
             **kwargs):
        """Draw the reconstruction.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on (3-D axes for a mesh); a new figure when ``None``.
        name : str, default=None
            Legend label; the display's ``name`` when ``None``.
        color : color, default=None
            Colour of the curves or of the mesh; matplotlib's next colour when ``None``.
        points_color : color, default="0.6"
            Colour of the input points.
        colorbar : bool, default=True
            Draw a colour bar for ``grid``.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` (curves) or to
            :meth:`~mpl_toolkits.mplot3d.axes3d.Axes3D.plot_trisurf` (mesh).

        Returns
        -------
        display : SurfaceDisplay
            The display, with ``curve_lines_``, ``mesh_``, ``points_``, ``background_``,
            ``colorbar_``, ``ax_`` and ``figure_`` set.

        Raises
        ------
        ValueError
            If neither or both of ``curves`` and ``vertices`` are given, a mesh comes without
            ``faces``, arrays have the wrong shape, ``grid`` comes with a mesh, or ``ax`` is
            not 3-D for a mesh.
        """
        check_matplotlib_support("SurfaceDisplay.plot")
        import matplotlib.pyplot as plt

        if (self.curves is None) == (self.vertices is None):
            raise ValueError("give either curves (a 2-D reconstruction) or vertices and faces "
                             "(a 3-D mesh), not both or neither.")
        three_d = self.vertices is not None
        d = 3 if three_d else 2
        points = None
        if self.points is not None:
            points = np.asarray(self.points, dtype=np.float64)
            if points.ndim != 2 or points.shape[1] != d:
                raise ValueError(f"points must be of shape (n_points, {d}) for a "
                                 f"{d}-D reconstruction; got shape {points.shape}.")
        label = name if name is not None else self.name
        if ax is None:
            if three_d:
                ax = plt.figure(figsize=(6, 5)).add_subplot(projection="3d")
            else:
                _, ax = plt.subplots(figsize=(5, 5))
        self.curve_lines_, self.mesh_, self.points_ = [], None, None
        self.background_ = self.colorbar_ = None
        if three_d:
            if getattr(ax, "name", None) != "3d":
                raise ValueError("a mesh needs 3-D axes (fig.add_subplot(projection='3d')); got "
                                 f"{type(ax).__name__}.")
            if self.grid is not None:
                raise ValueError("grid (a 2-D field) cannot be drawn under a 3-D mesh.")
            if self.faces is None:
                raise ValueError("vertices come without faces; give the (n_faces, 3) vertex "
                                 "indices of the mesh.")
            V = np.asarray(self.vertices, dtype=np.float64)
            F = np.asarray(self.faces, dtype=np.int64)
            if V.ndim != 2 or V.shape[1] != 3 or F.ndim != 2 or F.shape[1] != 3:
                raise ValueError(f"vertices and faces must be of shape (n, 3); got "
                                 f"{V.shape} and {F.shape}.")
            if F.size and (F.min() < 0 or F.max() >= len(V)):
                raise ValueError(f"faces index vertices outside [0, {len(V)}).")
            if points is not None:
                self.points_ = ax.scatter(*points.T, s=1, color=points_color, alpha=0.5)
            if len(F):
                kwargs.setdefault("alpha", 0.8)
                kwargs.setdefault("linewidth", 0.1)
                kwargs.setdefault("edgecolor", "k")
                if color is not None:
                    kwargs.setdefault("color", color)
                self.mesh_ = ax.plot_trisurf(V[:, 0], V[:, 1], V[:, 2], triangles=F,
                                             label=label, **kwargs)
            ax.set(xlabel="x", ylabel="y", zlabel="z")
            ax.set_box_aspect((1, 1, 1))
        else:
            if self.grid is not None:
                xx, yy, values = (np.asarray(a, dtype=np.float64) for a in self.grid)
                if not xx.shape == yy.shape == values.shape or xx.ndim != 2:
                    raise ValueError(f"grid must be three 2-D arrays (xx, yy, values) of one "
                                     f"shape; got {xx.shape}, {yy.shape}, {values.shape}.")
                self.background_ = ax.contourf(xx, yy, values, 30, cmap="RdBu_r")
                if colorbar:
                    self.colorbar_ = ax.figure.colorbar(self.background_, ax=ax, shrink=0.8)
            if points is not None:
                (self.points_,) = ax.plot(points[:, 0], points[:, 1], ".", ms=1,
                                          color=points_color)
            kwargs.setdefault("lw", 1.5)
            for i, c in enumerate(self.curves):
                c = np.asarray(c, dtype=np.float64)
                if c.ndim != 2 or c.shape[1] != 2:
                    raise ValueError(f"curves[{i}] must be of shape (m, 2); got shape "
                                     f"{c.shape}.")
                (line,) = ax.plot(c[:, 0], c[:, 1], color=color,
                                  label=label if i == 0 else None, **kwargs)
                color = line.get_color()  # all polylines of one reconstruction in one colour
                self.curve_lines_.append(line)
            ax.set_aspect("equal")
        if label:
            ax.legend(fontsize=8)
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_estimator(cls, estimator, X=None, *, resolution=None, bounds=None, trim="auto",
                       background=None, name=None, ax=None, **kwargs):
        """Extract and draw the zero set of a fitted :class:`MPFSurface`.

        Parameters
        ----------
        estimator : MPFSurface
            Fitted on 2-D points (curves) or 3-D points (a mesh).
        X : array-like of shape (n_points, 2) or (n_points, 3), default=None
            Points drawn beside the reconstruction (e.g. the training points); ``None``
            draws none.
        resolution : int, default=None
            Grid points per axis, in [8, 1024]; ``None`` means 256 in 2-D and 64 in 3-D.
        bounds : array-like of shape (2, n_features), default=None
            Box ``[lo, hi]`` in input units; the estimator's ``bounds_`` when ``None``.
        trim : {"auto", "metric", "points"} or None, default="auto"
            Trimming rule, as in :meth:`MPFSurface.extract_curve`.
        background : {"r", "theta", "phi"} or None, default=None
            A learned field drawn under the curves on the same grid (2-D only; one of the
            estimator's ``get_feature_names_out()``).
        name : str, default=None
            Legend label.
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on (3-D axes in 3-D).
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : SurfaceDisplay

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``background`` is not a field of the estimator or is asked for in 3-D,
            ``X`` does not have the estimator's dimension, or the extraction arguments are
            invalid (as in :meth:`MPFSurface.extract_curve`).
        """
        check_is_fitted(estimator)
        d = estimator.n_features_in_
        if X is not None:
            X = np.asarray(X, dtype=np.float64)
            if X.ndim != 2 or X.shape[1] != d:
                raise ValueError(f"X must be points of shape (n_points, {d}) like the "
                                 f"estimator's training points; got shape {X.shape}.")
        if d == 3:
            if background is not None:
                raise ValueError("background is a 2-D field; a 3-D reconstruction has none "
                                 f"(got background={background!r}).")
            V, F = estimator.extract_mesh(64 if resolution is None else resolution, bounds,
                                          trim=trim)
            disp = cls(vertices=V, faces=F, points=X, name=name)
            return disp.plot(ax=ax, **kwargs)
        resolution = 256 if resolution is None else resolution
        curves = estimator.extract_curve(resolution, bounds, trim=trim)
        grid = None
        if background is not None:
            fields = list(estimator.get_feature_names_out())
            if background not in fields:
                raise ValueError(f"background must be one of the estimator's fields {fields} "
                                 f"(or None); got {background!r}.")
            lo, hi = np.asarray(estimator.bounds_ if bounds is None else bounds,
                                dtype=np.float64)
            xx, yy = np.meshgrid(np.linspace(lo[0], hi[0], resolution),
                                 np.linspace(lo[1], hi[1], resolution))
            values = estimator.transform(np.c_[xx.ravel(), yy.ravel()])
            grid = (xx, yy, values[:, fields.index(background)].reshape(xx.shape))
        disp = cls(curves=curves, points=X, grid=grid, name=name)
        return disp.plot(ax=ax, **kwargs)
