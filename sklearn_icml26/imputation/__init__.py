"""Imputation of multivariate sensor streams.

:class:`NeuroMambaImputer` is inspired by the abstract of "NeuroMamba" (ICML 2026): a
bidirectional selective state-space model per sensor group with attention across groups, and a
leaky integrate-and-fire confidence gate, trained self-supervised by corrupting the stream.
"""

from ._neuromamba import NeuroMambaImputer

__all__ = ["NeuroMambaImputer"]
