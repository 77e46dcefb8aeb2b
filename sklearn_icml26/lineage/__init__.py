"""lineage estimators."""

from ._hdtree import HDTreeLineage
from ._preprocessing import make_count_pipeline

__all__ = ["HDTreeLineage", "make_count_pipeline"]
