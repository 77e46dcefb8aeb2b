"""A small writer of triangle meshes and polylines (PLY, OBJ), with no dependency."""

from pathlib import Path

import numpy as np

__all__ = ["write_mesh"]


def write_mesh(path, vertices, faces):
    """Write a triangle mesh to an ASCII PLY or a Wavefront OBJ file.

    The format follows the file suffix: ``.ply`` writes ASCII PLY 1.0 (``vertex`` with float
    ``x y z``, ``face`` with a ``list uchar int vertex_indices``), ``.obj`` writes ``v`` and
    1-based ``f`` lines. Both are read by trimesh, Open3D, MeshLab and Blender.

    Parameters
    ----------
    path : str or path-like
        Output file; its suffix (``.ply`` or ``.obj``, case-insensitive) picks the format.
    vertices : array-like of shape (n_vertices, 3)
        Vertex coordinates, float.
    faces : array-like of shape (n_faces, 3)
        Vertex indices (0-based) of each triangle, int.

    Returns
    -------
    path : pathlib.Path
        The written file.

    Raises
    ------
    ValueError
        If the suffix is not ``.ply``/``.obj``, shapes are wrong or an index is out of range.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from sklearn_icml26.surface import write_mesh
    >>> V = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    >>> out = write_mesh(os.path.join(tempfile.mkdtemp(), "tri.obj"), V, [[0, 1, 2]])
    >>> out.read_text().splitlines()[-1]
    'f 1 2 3'
    """
    path = Path(path)
    V = np.asarray(vertices, dtype=np.float64)
    F = np.asarray(faces, dtype=np.int64).reshape(-1, 3) if np.size(faces) == 0 else (
        np.asarray(faces, dtype=np.int64))
    if V.ndim != 2 or V.shape[1] != 3:
        raise ValueError(f"vertices must have shape (n_vertices, 3); got {V.shape}.")
    if F.ndim != 2 or F.shape[1] != 3:
        raise ValueError(f"faces must have shape (n_faces, 3); got {F.shape}.")
    if F.size and (F.min() < 0 or F.max() >= len(V)):
        raise ValueError(f"faces index vertices 0..{len(V) - 1}; got indices "
                         f"{F.min()}..{F.max()}.")
    suffix = path.suffix.lower()
    lines = []
    if suffix == ".ply":
        lines += ["ply", "format ascii 1.0", "comment written by sklearn_icml26",
                  f"element vertex {len(V)}", "property float x", "property float y",
                  "property float z", f"element face {len(F)}",
                  "property list uchar int vertex_indices", "end_header"]
        lines += [f"{x:.9g} {y:.9g} {z:.9g}" for x, y, z in V]
        lines += [f"3 {a} {b} {c}" for a, b, c in F]
    elif suffix == ".obj":
        lines += ["# written by sklearn_icml26"]
        lines += [f"v {x:.9g} {y:.9g} {z:.9g}" for x, y, z in V]
        lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in F]
    else:
        raise ValueError(f"path must end in .ply or .obj; got {path.name!r}.")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path
