"""lineage estimators."""

from ._anndata import annotate_anndata
from ._hdtree import HDTreeLineage
from ._plot import LineageTreeDisplay, PseudotimeDisplay
from ._preprocessing import make_count_pipeline

__all__ = ["HDTreeLineage", "LineageTreeDisplay", "PseudotimeDisplay", "annotate_anndata",
           "make_count_pipeline"]
