"""lineage estimators."""

from ._hdtree import HDTreeLineage
from ._plot import LineageTreeDisplay, PseudotimeDisplay
from ._preprocessing import make_count_pipeline

__all__ = ["HDTreeLineage", "LineageTreeDisplay", "PseudotimeDisplay", "make_count_pipeline"]
