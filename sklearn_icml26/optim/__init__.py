"""Optimizers and diagnostics for temporal-difference critics.

:class:`AdamO` is the collapse-suppressed optimizer of Qiao et al. (ICML 2026,
arXiv:2605.01968); :func:`td_spectral_radius` is their stability diagnostic of Adam-driven TD
learning, and :class:`OfflineQRegressor` an offline Q-learning critic to train with either.
"""

from ._adamo import AdamO, AdamOTD

__all__ = ["AdamO", "AdamOTD"]
