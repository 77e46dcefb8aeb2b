"""MPF's display: the extracted curve (2-D) or mesh (3-D) over the points, data checked."""

import numpy as np
import pytest
import torch
from sklearn.exceptions import NotFittedError

from sklearn_icml26.datasets import make_thin_shell
from sklearn_icml26.surface import MPFSurface, SurfaceDisplay

matplotlib = pytest.importorskip("matplotlib", reason="the plot extra is not installed")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

pytest.importorskip("skimage", reason="scikit-image extracts the curves and meshes")

SMALL = dict(hidden_size=16, head_size=8, max_epochs=3, batch_size=100, warm_start_iter=20,
             random_state=0)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def arc():
    torch.set_num_threads(1)
    X, _ = make_thin_shell("open_arc", 200, random_state=0)
    return MPFSurface(**SMALL).fit(X), X


def test_surface_display_draws_the_extracted_curves_and_the_field(arc):
    mpf, X = arc
    disp = SurfaceDisplay.from_estimator(mpf, X, resolution=24, background="theta", name="MPF")
    curves = mpf.extract_curve(24)
    assert len(curves) >= 1 and len(disp.curve_lines_) == len(curves)
    for line, c in zip(disp.curve_lines_, curves, strict=True):
        np.testing.assert_array_equal(line.get_xydata(), c)
    assert {line.get_color() for line in disp.curve_lines_} == {disp.curve_lines_[0].get_color()}
    assert disp.curve_lines_[0].get_label() == "MPF"
    np.testing.assert_array_equal(disp.points_.get_xydata(), X)
    # the background is theta on the 24 x 24 grid of the extraction box
    lo, hi = mpf.bounds_
    xx, yy = np.meshgrid(np.linspace(lo[0], hi[0], 24), np.linspace(lo[1], hi[1], 24))
    theta = mpf.transform(np.c_[xx.ravel(), yy.ravel()])[:, 1]
    levels = disp.background_.levels
    assert levels[0] <= theta.min() and theta.max() <= levels[-1]
    assert theta.min() < levels[1] and levels[-2] < theta.max()  # the levels span theta
    assert disp.colorbar_ is not None
    # untrimmed: the closed zero set of theta, drawn on the same axes
    other = SurfaceDisplay.from_estimator(mpf, resolution=24, trim=None, ax=disp.ax_)
    assert other.ax_ is disp.ax_ and other.points_ is None and other.background_ is None
    np.testing.assert_array_equal(other.curve_lines_[0].get_xydata(),
                                  mpf.extract_curve(24, trim=None)[0])


def test_surface_display_draws_a_mesh_in_3d():
    X, _ = make_thin_shell("open_hemisphere", 300, random_state=0)
    mpf = MPFSurface(**{**SMALL, "max_epochs": 2}).fit(X)
    disp = SurfaceDisplay.from_estimator(mpf, X, resolution=12)
    V, F = mpf.extract_mesh(12)
    assert disp.ax_.name == "3d" and len(F) > 0
    np.testing.assert_array_equal(disp.vertices, V)
    np.testing.assert_array_equal(disp.faces, F)
    assert len(disp.mesh_.get_facecolor()) == len(F)  # one shaded colour per triangle
    triangles = getattr(disp.mesh_, "_faces", None)  # matplotlib's stored 3-D polygons
    if triangles is not None:
        np.testing.assert_allclose(np.asarray(triangles), V[F])
    np.testing.assert_allclose(np.asarray(disp.points_._offsets3d).T, X)
    with pytest.raises(ValueError, match="background is a 2-D field"):
        SurfaceDisplay.from_estimator(mpf, background="phi", resolution=12)


def test_surface_display_errors(arc):
    mpf, X = arc
    with pytest.raises(NotFittedError):
        SurfaceDisplay.from_estimator(MPFSurface(), X)
    with pytest.raises(ValueError, match=r"X must be points of shape \(n_points, 2\)"):
        SurfaceDisplay.from_estimator(mpf, np.zeros((5, 3)), resolution=16)
    with pytest.raises(ValueError, match=r"background must be one of the estimator's fields"):
        SurfaceDisplay.from_estimator(mpf, background="sdf", resolution=16)
    with pytest.raises(ValueError, match="resolution must be an integer"):
        SurfaceDisplay.from_estimator(mpf, resolution=4)
    with pytest.raises(ValueError, match="not both or neither"):
        SurfaceDisplay(points=X).plot()
    with pytest.raises(ValueError, match="a mesh needs 3-D axes"):
        SurfaceDisplay(vertices=np.eye(3), faces=[[0, 1, 2]]).plot(ax=plt.subplots()[1])
    with pytest.raises(ValueError, match=r"faces index vertices outside \[0, 3\)"):
        SurfaceDisplay(vertices=np.eye(3), faces=[[0, 1, 5]]).plot()
