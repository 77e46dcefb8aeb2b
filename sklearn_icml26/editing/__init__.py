"""Knowledge editing: ReasonEdit's codebook of edits.

:class:`HubnessBalancedCodebook` stores edits as key-value pairs, retrieves them with
hubness-balanced nearest neighbours and gates out queries outside their locality. See
:ref:`user_guide_editing`.
"""

from ._codebook import HubnessBalancedCodebook

__all__ = ["HubnessBalancedCodebook"]
