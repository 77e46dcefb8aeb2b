"""Physics-informed neural networks and their influence functions (PINNfluence).

:class:`PINNRegressor` fits a network to a :class:`PDEProblem` (its residual and its
:class:`Condition` terms; :func:`heat_1d` and :func:`drift_diffusion_1d` are ready-made
problems); :class:`PINNInfluence` scores how much each collocation point moves a prediction.
Collocation points come from :func:`sklearn_icml26.datasets.make_pde_collocation`. See
:ref:`user_guide_pinn`.
"""

from ._influence import PINNInfluence
from ._pinn import PINNRegressor
from ._problems import Condition, PDEProblem, drift_diffusion_1d, heat_1d

__all__ = [
    "Condition",
    "PDEProblem",
    "PINNInfluence",
    "PINNRegressor",
    "drift_diffusion_1d",
    "heat_1d",
]
