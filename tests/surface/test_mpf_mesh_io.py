"""Mesh and point-cloud files through trimesh, normals from the field, trimesh / Open3D meshes.

Known answers: a mesh written in each format reads back with the same triangles (to the
float32 precision of binary PLY / STL / GLB); normals from the field's gradient equal
central finite differences of ``decision_function`` and agree with the triangles of the
extracted mesh.
"""

import sys

import numpy as np
import pytest
import torch

from sklearn_icml26.datasets import make_thin_shell
from sklearn_icml26.surface import MPFSurface, read_point_cloud, write_mesh
from sklearn_icml26.surface._mesh_io import MESH_FORMATS, to_trimesh

trimesh = pytest.importorskip("trimesh", reason="the mesh extra (trimesh) is not installed")

torch.set_num_threads(1)

V = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0.5]])
F = np.array([[0, 1, 2], [1, 3, 2]])
# a non-trivial unit normal per vertex (not the face normals, so a writer that recomputes
# them fails)
N = np.array([[0.0, 0.6, 0.8], [0.6, 0.0, 0.8], [0.0, 0.0, 1.0], [0.48, 0.6, 0.64]])


@pytest.mark.parametrize("fmt", MESH_FORMATS)
def test_write_mesh_round_trip_every_format(fmt, tmp_path):
    path = write_mesh(tmp_path / f"m.{fmt.upper()}", V, F, vertex_normals=N)
    loaded = trimesh.load(path, process=False, force="mesh")
    # STL stores three corners per triangle: compare triangles, not vertex lists
    np.testing.assert_allclose(loaded.triangles, V[F], rtol=0, atol=1e-6)
    head = path.read_bytes()[:80]
    expected = {"ply": b"ply\nformat binary_little_endian 1.0", "glb": b"glTF",
                "obj": b"# ", "stl": None}[fmt]
    if expected is not None:
        assert head.startswith(expected)
    else:  # binary STL: 80-byte header, then the triangle count
        assert int.from_bytes(path.read_bytes()[80:84], "little") == len(F)


def test_vertex_normals_are_written_as_given(tmp_path):
    ply = write_mesh(tmp_path / "m.ply", V, F, vertex_normals=N)
    points, normals = read_point_cloud(ply)
    np.testing.assert_allclose(points, V, atol=1e-7)
    np.testing.assert_allclose(normals, N, atol=1e-7)
    obj = write_mesh(tmp_path / "m.obj", V, F, vertex_normals=N).read_text().splitlines()
    vn = np.array([[float(t) for t in line.split()[1:]] for line in obj
                   if line.startswith("vn ")])
    np.testing.assert_allclose(vn, N, atol=1e-7)
    faces = [line for line in obj if line.startswith("f ")]
    assert faces[-1].split()[1:] == ["2//2", "4//4", "3//3"]  # 1-based, vertex//normal
    # without normals the PLY has none
    assert read_point_cloud(write_mesh(tmp_path / "n.ply", V, F))[1] is None
    assert write_mesh(tmp_path / "n.ply", V, F).stat().st_size < ply.stat().st_size


def test_write_mesh_errors(tmp_path):
    with pytest.raises(ValueError, match=r"writes \.ply, \.obj, \.stl, \.glb files; got 'm\.off'"):
        write_mesh(tmp_path / "m.off", V, F)
    with pytest.raises(ValueError, match="file_type='vtk'"):
        write_mesh(tmp_path / "m.ply", V, F, file_type="vtk")
    with pytest.raises(ValueError, match="faces index vertices 0..3; got indices 0..9"):
        write_mesh(tmp_path / "m.ply", V, [[0, 1, 9]])
    with pytest.raises(ValueError, match=r"vertices must have shape \(n_vertices, 3\)"):
        write_mesh(tmp_path / "m.ply", V[:, :2], F)
    with pytest.raises(ValueError, match=r"vertex_normals must have the shape of vertices"):
        write_mesh(tmp_path / "m.ply", V, F, vertex_normals=N[:3])
    # file_type overrides the suffix
    out = write_mesh(tmp_path / "mesh.bin", V, F, file_type="stl")
    assert out.stat().st_size == 84 + 50 * len(F)


def test_read_point_cloud_xyz_and_ply(tmp_path):
    X, normals = make_thin_shell("open_hemisphere", 500, random_state=0)
    np.savetxt(tmp_path / "c.xyz", X)
    np.savetxt(tmp_path / "comma.xyz", X, delimiter=",")
    for name in ("c.xyz", "comma.xyz"):
        points, none = read_point_cloud(tmp_path / name)
        np.testing.assert_allclose(points, X, rtol=1e-15, atol=0)  # %.18e text
        assert none is None
    cloud = trimesh.PointCloud(X)
    (tmp_path / "c.ply").write_bytes(cloud.export(file_type="ply"))
    points, none = read_point_cloud(tmp_path / "c.ply")
    np.testing.assert_allclose(points, X, atol=1e-7)  # binary float32
    assert none is None
    # ASCII PLY with normals (as MeshLab / CloudCompare write them)
    rows = "\n".join(" ".join(f"{v:.9g}" for v in row) for row in np.c_[X, normals])
    header = ("ply\nformat ascii 1.0\nelement vertex 500\nproperty float x\nproperty float y\n"
              "property float z\nproperty float nx\nproperty float ny\nproperty float nz\n"
              "end_header\n")
    (tmp_path / "n.ply").write_text(header + rows + "\n")
    points, got = read_point_cloud(tmp_path / "n.ply")
    np.testing.assert_allclose(got, normals, atol=1e-7)
    with pytest.raises(ValueError, match=r"reads \.ply and \.xyz files; got 'c\.pcd'"):
        read_point_cloud(tmp_path / "c.pcd")
    with pytest.raises(FileNotFoundError, match="no point-cloud file"):
        read_point_cloud(tmp_path / "missing.ply")
    (tmp_path / "empty.xyz").write_text("")
    (tmp_path / "broken.ply").write_text("ply\nformat ascii 1.0\nelement vertex 3\n")
    for name in ("empty.xyz", "broken.ply"):
        with pytest.raises(ValueError, match=rf"{name.replace('.', '[.]')}"):
            read_point_cloud(tmp_path / name)


def test_missing_trimesh_names_the_extra(tmp_path, monkeypatch, mesh_fit):
    monkeypatch.setitem(sys.modules, "trimesh", None)  # import trimesh -> ImportError
    for call in (lambda: write_mesh(tmp_path / "m.ply", V, F),
                 lambda: read_point_cloud(tmp_path / "m.ply"),
                 lambda: to_trimesh(V, F),
                 lambda: mesh_fit[1].to_trimesh(16)):
        with pytest.raises(ImportError, match=r"needs trimesh.*'mesh' extra"):
            call()


@pytest.fixture(scope="module")
def mesh_fit():
    H, _ = make_thin_shell("open_hemisphere", 2000, random_state=0)
    est = MPFSurface(hidden_size=32, head_size=16, max_epochs=4, batch_size=500,
                     warm_start_iter=50, random_state=0).fit(H)
    return H, est


def test_surface_normals_are_the_normalised_field_gradient(mesh_fit):
    H, est = mesh_fit
    Q = np.random.default_rng(0).uniform(-0.8, 0.8, (200, 3))
    n = est.surface_normals(Q)
    eps = 1e-5
    fd = np.stack([(est.decision_function(Q + eps * e) - est.decision_function(Q - eps * e))
                   / (2 * eps) for e in np.eye(3)], axis=1)
    fd /= np.linalg.norm(fd, axis=1, keepdims=True)
    np.testing.assert_allclose(n, fd, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0, rtol=1e-12)


def test_to_trimesh_carries_the_mesh_and_field_normals(mesh_fit, tmp_path):
    _, est = mesh_fit
    V_, F_ = est.extract_mesh(32)
    mesh = est.to_trimesh(32)
    assert isinstance(mesh, trimesh.Trimesh)
    np.testing.assert_array_equal(mesh.vertices, V_)
    np.testing.assert_array_equal(mesh.faces, F_)
    np.testing.assert_array_equal(mesh.vertex_normals, est.surface_normals(V_))
    # the field's normals agree with the triangles' (up to the arbitrary side of an open
    # surface): face normal vs the mean of its corners' field normals
    face_n = mesh.face_normals
    corner_n = est.surface_normals(V_)[F_].mean(axis=1)
    corner_n /= np.linalg.norm(corner_n, axis=1, keepdims=True)
    cos = np.abs(np.sum(face_n * corner_n, axis=1))
    assert np.median(cos) > 0.99 and np.mean(cos) > 0.95
    # and they survive the trip through a file
    out = write_mesh(tmp_path / "h.ply", mesh.vertices, mesh.faces,
                     vertex_normals=mesh.vertex_normals)
    _, normals = read_point_cloud(out)
    np.testing.assert_allclose(normals, est.surface_normals(V_), atol=1e-6)


def test_to_open3d_carries_the_mesh_and_field_normals(mesh_fit):
    pytest.importorskip("open3d", reason="the open3d extra is not installed (CI lacks it: "
                        "open3d needs the system library libusb-1.0)")
    _, est = mesh_fit
    V_, F_ = est.extract_mesh(32)
    mesh = est.to_open3d(32)
    np.testing.assert_array_equal(np.asarray(mesh.vertices), V_)
    np.testing.assert_array_equal(np.asarray(mesh.triangles), F_)
    np.testing.assert_allclose(np.asarray(mesh.vertex_normals), est.surface_normals(V_))


def test_to_open3d_without_open3d_names_the_extra(mesh_fit, monkeypatch):
    monkeypatch.setitem(sys.modules, "open3d", None)
    with pytest.raises(ImportError, match=r"needs open3d.*'open3d' extra"):
        mesh_fit[1].to_open3d(16)
