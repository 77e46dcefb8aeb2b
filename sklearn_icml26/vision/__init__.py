"""vision: VIOLIN space-filling-curve attention masks for small vision transformers."""

from ._violin import (
    CURVE_NAMES,
    DEFAULT_CURVES,
    ViolinAttention,
    ViolinViTClassifier,
    curve_positions,
    space_filling_curve_order,
    violin_mask,
)

__all__ = ["CURVE_NAMES", "DEFAULT_CURVES", "ViolinAttention", "ViolinViTClassifier",
           "curve_positions", "space_filling_curve_order", "violin_mask"]
