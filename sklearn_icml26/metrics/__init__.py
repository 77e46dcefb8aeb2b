"""Field metrics (Chamfer distance, dendrogram purity, weighted accuracy, ...)."""

__all__ = []

from ._lineage import (  # noqa: E402
    cluster_accuracy,
    dendrogram_from_children,
    dendrogram_purity,
    leaf_purity,
    pseudotime_correlation,
)

__all__ += ["cluster_accuracy", "dendrogram_from_children", "dendrogram_purity", "leaf_purity",
            "pseudotime_correlation"]
