"""Imputation of multivariate sensor streams.

:class:`NeuroMambaImputer` is inspired by the abstract of "NeuroMamba" (ICML 2026): a
bidirectional selective state-space model per sensor group with attention across groups, and a
leaky integrate-and-fire confidence gate, trained self-supervised by corrupting the stream. See
:ref:`user_guide_imputation`.
"""

from ._neuromamba import NeuroMambaImputer

__all__ = ["NeuroMambaImputer"]
