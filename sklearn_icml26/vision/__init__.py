"""VIOLIN: space-filling-curve attention masks for small vision transformers.

:class:`ViolinViTClassifier` is a small vision transformer whose attention is masked by
:func:`violin_mask`, a mixture of decays along space-filling curves
(:func:`space_filling_curve_order`, :func:`curve_positions`); :class:`ViolinAttention` is the
masked attention layer, a torch module to use in other networks. See :ref:`user_guide_vision`.
"""

from ._violin import (
    ViolinAttention,
    ViolinViTClassifier,
    curve_positions,
    space_filling_curve_order,
    violin_mask,
)

__all__ = [
    "ViolinAttention",
    "ViolinViTClassifier",
    "curve_positions",
    "space_filling_curve_order",
    "violin_mask",
]
