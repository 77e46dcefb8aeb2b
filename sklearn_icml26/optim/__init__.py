"""Optimizers and diagnostics for temporal-difference critics.

:class:`AdamO` is the collapse-suppressed optimizer of Qiao et al. (ICML 2026,
arXiv:2605.01968); :func:`td_spectral_radius` is their stability diagnostic of Adam-driven TD
learning, and :class:`OfflineQRegressor` an offline Q-learning critic to train with either. See
:ref:`user_guide_optim`.
"""

from ._adamo import AdamO
from ._offline_q import OfflineQRegressor
from ._spectral import td_spectral_radius

__all__ = ["AdamO", "OfflineQRegressor", "td_spectral_radius"]
