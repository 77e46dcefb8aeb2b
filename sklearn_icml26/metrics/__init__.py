"""Field metrics (Chamfer distance, dendrogram purity, weighted accuracy, ...)."""

__all__ = []

from ._surface import (  # noqa: E402
    chamfer_distance,
    f_score,
    layer_separation,
    normal_consistency,
    sample_mesh,
    sample_polylines,
)

__all__ += ["chamfer_distance", "f_score", "normal_consistency", "sample_mesh", "sample_polylines"]
__all__ += ["layer_separation"]

from ._causal import audrc, decision_rate_curve, weighted_accuracy  # noqa: E402

__all__ += ["audrc", "decision_rate_curve", "weighted_accuracy"]

from ._lineage import (  # noqa: E402
    cluster_accuracy,
    dendrogram_from_children,
    dendrogram_purity,
    leaf_purity,
    pseudotime_correlation,
)

__all__ += ["cluster_accuracy", "dendrogram_from_children", "dendrogram_purity", "leaf_purity",
            "pseudotime_correlation"]

from ._hubness import hubness_measures, k_occurrence  # noqa: E402

__all__ += ["hubness_measures", "k_occurrence"]

from ._retrieval import (  # noqa: E402
    average_precision_at_k,
    evaluate_retrieval,
    ndcg_at_k,
    precision_at_k,
    rank_documents,
    recall_at_k,
    reciprocal_rank_at_k,
)

__all__ += ["average_precision_at_k", "evaluate_retrieval", "ndcg_at_k", "precision_at_k",
            "rank_documents", "recall_at_k", "reciprocal_rank_at_k"]

from ._qa import locomo_f1, locomo_normalize, locomo_tokens, oracle_span_f1, token_f1  # noqa: E402

__all__ += ["locomo_f1", "locomo_normalize", "locomo_tokens", "oracle_span_f1", "token_f1"]

from ._forecasting import (  # noqa: E402
    neg_relative_rmse_scorer,
    random_walk_forecast,
    relative_rmse,
)

__all__ += ["neg_relative_rmse_scorer", "random_walk_forecast", "relative_rmse"]
