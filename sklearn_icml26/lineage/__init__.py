"""Lineage trees of cell states from single-cell data (HDTree).

:class:`HDTreeLineage` learns a hierarchical binary codebook of cell states and reads a lineage
tree and a pseudotime from it; :func:`make_count_pipeline` preprocesses raw counts for it,
:func:`annotate_anndata` writes a fit into an AnnData, and :class:`LineageTreeDisplay` and
:class:`PseudotimeDisplay` plot the tree and the pseudotime. See :ref:`user_guide_hdtree`.
"""

from ._anndata import annotate_anndata
from ._hdtree import HDTreeLineage
from ._plot import LineageTreeDisplay, PseudotimeDisplay
from ._preprocessing import make_count_pipeline

__all__ = [
    "HDTreeLineage",
    "LineageTreeDisplay",
    "PseudotimeDisplay",
    "annotate_anndata",
    "make_count_pipeline",
]
