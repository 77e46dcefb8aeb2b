"""Metrics of the package's fields, and the scorers and baselines they need.

Surfaces (:func:`chamfer_distance`, :func:`f_score`, :func:`normal_consistency`,
:func:`layer_separation`, with :func:`sample_mesh` and :func:`sample_polylines` to sample the
shapes compared); cause-effect decisions (:func:`weighted_accuracy`, :func:`audrc`,
:func:`decision_rate_curve`); lineage trees (:func:`dendrogram_purity` with
:func:`dendrogram_from_children`, :func:`leaf_purity`, :func:`cluster_accuracy`,
:func:`pseudotime_correlation`); hubness (:func:`hubness_measures`, :func:`k_occurrence`);
ranked retrieval (:func:`ndcg_at_k`, :func:`average_precision_at_k`, :func:`recall_at_k`,
:func:`precision_at_k`, :func:`reciprocal_rank_at_k`, with :func:`rank_documents`, and
:func:`evaluate_retrieval` for a whole run); answers (:func:`token_f1`, :func:`locomo_f1`,
:func:`oracle_span_f1`); forecasts (:func:`relative_rmse`, its scorer
:func:`neg_relative_rmse_scorer` and the :func:`random_walk_forecast` reference); offline RL
policies (:func:`evaluate_offline_rl_policy`).
"""

from ..datasets._offline_rl import evaluate_offline_rl_policy
from ._causal import audrc, decision_rate_curve, weighted_accuracy
from ._forecasting import neg_relative_rmse_scorer, random_walk_forecast, relative_rmse
from ._hubness import hubness_measures, k_occurrence
from ._lineage import (
    cluster_accuracy,
    dendrogram_from_children,
    dendrogram_purity,
    leaf_purity,
    pseudotime_correlation,
)
from ._qa import locomo_f1, oracle_span_f1, token_f1
from ._retrieval import (
    average_precision_at_k,
    evaluate_retrieval,
    ndcg_at_k,
    precision_at_k,
    rank_documents,
    recall_at_k,
    reciprocal_rank_at_k,
)
from ._surface import (
    chamfer_distance,
    f_score,
    layer_separation,
    normal_consistency,
    sample_mesh,
    sample_polylines,
)

__all__ = [
    "audrc",
    "average_precision_at_k",
    "chamfer_distance",
    "cluster_accuracy",
    "decision_rate_curve",
    "dendrogram_from_children",
    "dendrogram_purity",
    "evaluate_offline_rl_policy",
    "evaluate_retrieval",
    "f_score",
    "hubness_measures",
    "k_occurrence",
    "layer_separation",
    "leaf_purity",
    "locomo_f1",
    "ndcg_at_k",
    "neg_relative_rmse_scorer",
    "normal_consistency",
    "oracle_span_f1",
    "precision_at_k",
    "pseudotime_correlation",
    "random_walk_forecast",
    "rank_documents",
    "recall_at_k",
    "reciprocal_rank_at_k",
    "relative_rmse",
    "sample_mesh",
    "sample_polylines",
    "token_f1",
    "weighted_accuracy",
]
