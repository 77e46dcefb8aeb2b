"""approximation estimators: transformers on the Hölder class and their bounds."""

from ._holder_transformer import (
    BlockBounds,
    HolderTransformerRegressor,
    holder_depth_slopes,
    holder_risk_rates,
    holder_transformer_block_bounds,
)

__all__ = ["BlockBounds", "HolderTransformerRegressor", "holder_depth_slopes",
           "holder_risk_rates", "holder_transformer_block_bounds"]
