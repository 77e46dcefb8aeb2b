"""Physics-informed neural networks and their influence functions (PINNfluence)."""

from ..datasets._pde import make_pde_collocation  # noqa: F401  (also in datasets)
from ._influence import PINNInfluence
from ._pinn import PINNRegressor
from ._problems import Condition, PDEProblem, drift_diffusion_1d, heat_1d

__all__ = ["Condition", "PDEProblem", "PINNInfluence", "PINNRegressor", "drift_diffusion_1d",
           "heat_1d"]
# make_pde_collocation lives in sklearn_icml26.datasets; importable from here for convenience
