"""editing: ReasonEdit's codebook of edits with hubness-balanced retrieval and a locality gate."""

from ._codebook import HubnessBalancedCodebook

__all__ = ["HubnessBalancedCodebook"]
