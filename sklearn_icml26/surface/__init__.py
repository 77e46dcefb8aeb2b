"""Surface reconstruction from unoriented point clouds (Metric-Phase Field).

:class:`MPFSurface` fits an implicit field to a point cloud and extracts its zero set as a
mesh (open sheets and layered surfaces included); :func:`read_point_cloud` and
:func:`write_mesh` read inputs and write results through trimesh; :class:`SurfaceDisplay` plots
a reconstruction over its points. See :ref:`user_guide_mpf`.
"""

from ._mesh_io import read_point_cloud, write_mesh
from ._mpf import MPFSurface
from ._plot import SurfaceDisplay

__all__ = ["MPFSurface", "SurfaceDisplay", "read_point_cloud", "write_mesh"]
