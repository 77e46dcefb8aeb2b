"""Field metrics (Chamfer distance, dendrogram purity, weighted accuracy, ...)."""

__all__ = []

from ._surface import (  # noqa: E402
    chamfer_distance,
    f_score,
    normal_consistency,
    sample_mesh,
    sample_polylines,
)

__all__ += ["chamfer_distance", "f_score", "normal_consistency", "sample_mesh", "sample_polylines"]

from ._causal import audrc, weighted_accuracy  # noqa: E402

__all__ += ["audrc", "weighted_accuracy"]

from ._lineage import (  # noqa: E402
    cluster_accuracy,
    dendrogram_from_children,
    dendrogram_purity,
    leaf_purity,
    pseudotime_correlation,
)

__all__ += ["cluster_accuracy", "dendrogram_from_children", "dendrogram_purity", "leaf_purity",
            "pseudotime_correlation"]
