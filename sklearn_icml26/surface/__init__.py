"""surface estimators."""

from ._mesh_io import read_point_cloud, write_mesh
from ._mpf import DEFAULT_LOSS_WEIGHTS, MPFSurface
from ._plot import SurfaceDisplay

__all__ = ["DEFAULT_LOSS_WEIGHTS", "MPFSurface", "SurfaceDisplay", "read_point_cloud", "write_mesh"]
