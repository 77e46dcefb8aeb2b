"""Mesh and point-cloud files through trimesh (binary PLY, OBJ, STL, GLB; PLY / XYZ clouds).

trimesh is an optional dependency (the ``mesh`` extra: ``pip install "sklearn_icml26[mesh]"``);
it is imported inside the functions, so the rest of the package works without it.
"""

import io
from pathlib import Path

import numpy as np

__all__ = ["MESH_FORMATS", "read_point_cloud", "to_open3d_mesh", "to_trimesh", "write_mesh"]

MESH_FORMATS = ("ply", "obj", "stl", "glb")
"""File types :func:`write_mesh` writes (from the path's suffix or ``file_type``)."""

_CLOUD_FORMATS = ("ply", "xyz")


def _import_trimesh(what):
    try:
        import trimesh
    except ImportError as exc:
        raise ImportError(
            f"{what} needs trimesh, which is not installed; install the 'mesh' extra: "
            "pip install 'sklearn_icml26[mesh]' (or pip install trimesh)."
        ) from exc
    return trimesh


def _import_open3d(what):
    try:
        import open3d
    except Exception as exc:  # missing package or missing system library (libusb)
        raise ImportError(
            f"{what} needs open3d, which does not import here ({type(exc).__name__}: "
            f"{exc}); install the 'open3d' extra: pip install 'sklearn_icml26[open3d]' "
            "(open3d also needs the system library libusb-1.0)."
        ) from exc
    return open3d


def _check_mesh(vertices, faces, vertex_normals=None):
    V = np.asarray(vertices, dtype=np.float64)
    F = (np.asarray(faces, dtype=np.int64).reshape(-1, 3) if np.size(faces) == 0
         else np.asarray(faces, dtype=np.int64))
    if V.ndim != 2 or V.shape[1] != 3:
        raise ValueError(f"vertices must have shape (n_vertices, 3); got {V.shape}.")
    if not np.all(np.isfinite(V)):
        raise ValueError("vertices holds NaN or infinite coordinates.")
    if F.ndim != 2 or F.shape[1] != 3:
        raise ValueError(f"faces must have shape (n_faces, 3); got {F.shape}.")
    if F.size and (F.min() < 0 or F.max() >= len(V)):
        raise ValueError(f"faces index vertices 0..{len(V) - 1}; got indices "
                         f"{F.min()}..{F.max()}.")
    N = None
    if vertex_normals is not None:
        N = np.asarray(vertex_normals, dtype=np.float64)
        if N.shape != V.shape:
            raise ValueError(f"vertex_normals must have the shape of vertices {V.shape}; "
                             f"got {N.shape}.")
    return V, F, N


def to_trimesh(vertices, faces, vertex_normals=None):
    """A :class:`trimesh.Trimesh` of the mesh, vertices and faces kept as given.

    Parameters
    ----------
    vertices : array-like of shape (n_vertices, 3)
        Vertex coordinates, float.
    faces : array-like of shape (n_faces, 3)
        Vertex indices (0-based) of each triangle, int.
    vertex_normals : array-like of shape (n_vertices, 3), default=None
        Unit normals per vertex (e.g. :meth:`MPFSurface.surface_normals`); ``None`` lets
        trimesh average the face normals when asked.

    Returns
    -------
    mesh : trimesh.Trimesh
        The mesh (``process=False``: no vertex merging or reordering).

    Raises
    ------
    ImportError
        If trimesh is not installed (the ``mesh`` extra).
    ValueError
        On wrong shapes, non-finite vertices or out-of-range face indices.
    """
    trimesh = _import_trimesh("to_trimesh")
    V, F, N = _check_mesh(vertices, faces, vertex_normals)
    return trimesh.Trimesh(vertices=V, faces=F, vertex_normals=N, process=False)


def to_open3d_mesh(vertices, faces, vertex_normals=None):
    """An :class:`open3d.geometry.TriangleMesh` of the mesh (``open3d`` extra).

    Parameters
    ----------
    vertices : array-like of shape (n_vertices, 3)
        Vertex coordinates, float.
    faces : array-like of shape (n_faces, 3)
        Vertex indices (0-based) of each triangle, int.
    vertex_normals : array-like of shape (n_vertices, 3), default=None
        Unit normals per vertex; ``None`` leaves the mesh without normals.

    Returns
    -------
    mesh : open3d.geometry.TriangleMesh
        The mesh, float64 vertices, int32 triangles.

    Raises
    ------
    ImportError
        If open3d is not installed or does not import (it needs the system's
        ``libusb-1.0``): install the ``open3d`` extra.
    ValueError
        On wrong shapes, non-finite vertices or out-of-range face indices.
    """
    o3d = _import_open3d("to_open3d_mesh")
    V, F, N = _check_mesh(vertices, faces, vertex_normals)
    mesh = o3d.geometry.TriangleMesh(o3d.utility.Vector3dVector(V),
                                     o3d.utility.Vector3iVector(F.astype(np.int32)))
    if N is not None:
        mesh.vertex_normals = o3d.utility.Vector3dVector(N)
    return mesh


def write_mesh(path, vertices, faces, *, vertex_normals=None, file_type=None):
    """Write a triangle mesh through trimesh: binary PLY, OBJ, binary STL or GLB.

    The format follows the file suffix (or ``file_type``). PLY is binary little-endian
    (float32 coordinates, and ``nx ny nz`` when ``vertex_normals`` is given), OBJ writes
    ``v`` / ``vn`` / 1-based ``f`` lines, STL binary triangles with face normals, GLB a
    binary glTF 2.0 scene. All are read by trimesh, Open3D, MeshLab and Blender.

    Parameters
    ----------
    path : str or path-like
        Output file; its suffix (``.ply``, ``.obj``, ``.stl``, ``.glb``, case-insensitive)
        picks the format unless ``file_type`` is given.
    vertices : array-like of shape (n_vertices, 3)
        Vertex coordinates, float.
    faces : array-like of shape (n_faces, 3)
        Vertex indices (0-based) of each triangle, int.
    vertex_normals : array-like of shape (n_vertices, 3), default=None
        Unit normals per vertex, written where the format stores them (PLY, OBJ, GLB).
    file_type : {"ply", "obj", "stl", "glb"}, default=None
        Format; ``None`` takes it from the suffix.

    Returns
    -------
    path : pathlib.Path
        The written file.

    Raises
    ------
    ImportError
        If trimesh is not installed (the ``mesh`` extra).
    ValueError
        If the format is not one of ``MESH_FORMATS``, shapes are wrong or an index is out of
        range.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from sklearn_icml26.surface import read_point_cloud, write_mesh
    >>> V = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    >>> out = write_mesh(os.path.join(tempfile.mkdtemp(), "tri.ply"), V, [[0, 1, 2]])
    >>> out.read_bytes()[:36]
    b'ply\\nformat binary_little_endian 1.0\\n'
    >>> read_point_cloud(out)[0].tolist()
    [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    path = Path(path)
    kind = (file_type if file_type is not None else path.suffix.lstrip(".")).lower()
    if kind not in MESH_FORMATS:
        raise ValueError(f"write_mesh writes {', '.join('.' + f for f in MESH_FORMATS)} files; "
                         f"got {path.name!r}" + (f" with file_type={file_type!r}."
                                                 if file_type is not None else "."))
    V, F, N = _check_mesh(vertices, faces, vertex_normals)
    mesh = to_trimesh(V, F, N)
    kwargs = {}
    if kind == "ply":
        kwargs = dict(encoding="binary", include_attributes=False, vertex_normal=N is not None)
    elif kind == "obj":
        kwargs = dict(include_normals=N is not None, include_color=False,
                      include_texture=False)
    data = mesh.export(file_type=kind, **kwargs)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)
    return path


def read_point_cloud(path, *, file_type=None):
    """Read a point cloud (or a mesh's vertices) from a PLY or XYZ file through trimesh.

    Parameters
    ----------
    path : str or path-like
        A ``.ply`` (ASCII or binary; a mesh's vertices are read as points) or ``.xyz``
        (whitespace- or comma-separated ``x y z`` rows; trimesh reads further columns as
        colours, so an XYZ file gives no normals) file.
    file_type : {"ply", "xyz"}, default=None
        Format; ``None`` takes it from the suffix.

    Returns
    -------
    points : ndarray of shape (n_points, 3)
        Coordinates, float64.
    normals : ndarray of shape (n_points, 3) or None
        The PLY's per-vertex ``nx ny nz`` when it has them, else ``None``.

    Raises
    ------
    ImportError
        If trimesh is not installed (the ``mesh`` extra).
    ValueError
        If the format is not PLY or XYZ, or the file holds no points.
    FileNotFoundError
        If ``path`` does not exist.
    """
    trimesh = _import_trimesh("read_point_cloud")
    path = Path(path)
    kind = (file_type if file_type is not None else path.suffix.lstrip(".")).lower()
    if kind not in _CLOUD_FORMATS:
        raise ValueError(f"read_point_cloud reads .ply and .xyz files; got {path.name!r}"
                         + (f" with file_type={file_type!r}." if file_type is not None
                            else "."))
    if not path.is_file():
        raise FileNotFoundError(f"no point-cloud file at {str(path)!r}.")
    try:
        if kind == "xyz":  # trimesh counts the columns of the first line by whitespace
            source = io.BytesIO(path.read_bytes().replace(b",", b" "))
            geom = trimesh.load(source, file_type=kind, process=False)
        else:
            with open(path, "rb") as fh:
                geom = trimesh.load(fh, file_type=kind, process=False)
    except (ValueError, IndexError, KeyError, TypeError) as exc:  # trimesh's parse errors
        raise ValueError(f"could not read {path.name!r} as a {kind} point cloud: "
                         f"{exc}") from exc
    points = np.asarray(getattr(geom, "vertices", np.zeros((0, 3))), dtype=np.float64)
    if points.ndim != 2 or points.shape[0] == 0:
        raise ValueError(f"{path.name!r} holds no points.")
    normals = None
    raw = getattr(geom, "metadata", {}).get("_ply_raw")
    if raw is not None and "vertex" in raw:
        data = raw["vertex"]["data"]
        names = data.keys() if isinstance(data, dict) else (data.dtype.names or ())
        if all(k in names for k in ("nx", "ny", "nz")):
            normals = np.stack([np.asarray(data[k], dtype=np.float64).reshape(-1)
                                for k in ("nx", "ny", "nz")], axis=1)
            if normals.shape != points.shape:
                normals = None
    return points, normals
