"""Transformers on the Hölder class: a regressor and its approximation bounds.

:class:`HolderTransformerRegressor` fits a small transformer to a regression on the Hölder
class; :func:`holder_transformer_block_bounds` gives the block counts the theory says are
necessary and sufficient (a :class:`BlockBounds`), and :func:`holder_risk_rates` and
:func:`holder_depth_slopes` the risk rates and depth slopes to compare fits against. See
:ref:`user_guide_holder_transformer`.
"""

from ._holder_transformer import (
    BlockBounds,
    HolderTransformerRegressor,
    holder_depth_slopes,
    holder_risk_rates,
    holder_transformer_block_bounds,
)

__all__ = [
    "BlockBounds",
    "HolderTransformerRegressor",
    "holder_depth_slopes",
    "holder_risk_rates",
    "holder_transformer_block_bounds",
]
