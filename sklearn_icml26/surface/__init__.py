"""surface estimators."""

from ._mesh_io import write_mesh
from ._mpf import DEFAULT_LOSS_WEIGHTS, MPFSurface

__all__ = ["DEFAULT_LOSS_WEIGHTS", "MPFSurface", "write_mesh"]
