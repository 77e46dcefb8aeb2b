"""Ranked-retrieval metrics with trec_eval's definitions (NDCG@k, AP@k, Recall@k, P@k, RR@k)."""

import math
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

__all__ = [
    "average_precision_at_k",
    "evaluate_retrieval",
    "ndcg_at_k",
    "precision_at_k",
    "rank_documents",
    "recall_at_k",
    "reciprocal_rank_at_k",
]


def _gains(relevant):
    """``{doc: gain > 0}`` from a set/list of relevant ids or a ``{doc: grade}`` mapping."""
    if isinstance(relevant, Mapping):
        return {d: float(g) for d, g in relevant.items() if g > 0}
    return {d: 1.0 for d in relevant}


def _check_k(k):
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1 or None; got {k!r}")
    return int(k)


def _cut(ranked, k):
    ranked = list(ranked)
    return ranked if k is None else ranked[:k]


def rank_documents(scores):
    """Order documents as trec_eval does: score descending, ties by document id descending.

    Parameters
    ----------
    scores : mapping
        ``{doc_id: score}`` of one query.

    Returns
    -------
    ranked : list
        Document ids, best first.

    Examples
    --------
    >>> from sklearn_icml26.metrics import rank_documents
    >>> rank_documents({"d1": 0.9, "d2": 0.5, "d3": 0.5, "d4": 0.5})
    ['d1', 'd4', 'd3', 'd2']
    """
    items = sorted(scores.items(), key=lambda kv: kv[0], reverse=True)
    items.sort(key=lambda kv: kv[1], reverse=True)  # stable: keeps id-descending among ties
    return [d for d, _ in items]


def ndcg_at_k(ranked, relevant, k=10):
    """Normalised discounted cumulative gain at rank k (trec_eval ``ndcg_cut``, linear gain).

    ``DCG@k = sum_{j<=k} gain_j / log2(j + 1)``, divided by the DCG@k of the ideal ordering of
    *all* judged relevant documents.

    Parameters
    ----------
    ranked : sequence
        Document ids, best first.
    relevant : set, sequence or mapping
        Relevant ids (gain 1) or ``{doc_id: grade}`` (grades <= 0 count as not relevant).
    k : int or None, default=10
        Cut-off; None uses the whole ranking.

    Returns
    -------
    score : float
        In [0, 1]; 0.0 when nothing is relevant.

    Examples
    --------
    >>> from sklearn_icml26.metrics import ndcg_at_k
    >>> round(ndcg_at_k(["d1", "d2", "d3"], {"d1", "d3", "d6"}, k=3), 6)
    0.703918
    """
    k = _check_k(k)
    gains = _gains(relevant)
    if not gains:
        return 0.0
    dcg = sum(gains.get(d, 0.0) / math.log2(j + 2) for j, d in enumerate(_cut(ranked, k)))
    ideal = sorted(gains.values(), reverse=True)
    idcg = sum(g / math.log2(j + 2) for j, g in enumerate(_cut(ideal, k)))
    return float(dcg / idcg)


def average_precision_at_k(ranked, relevant, k=10):
    """Average precision cut at rank k (trec_eval ``map_cut``): ``sum_{j<=k, rel} P@j / R``.

    Parameters
    ----------
    ranked : sequence
        Document ids, best first.
    relevant : set, sequence or mapping
        Relevant ids (mapping values > 0 count as relevant).
    k : int or None, default=10
        Cut-off; None uses the whole ranking.

    Returns
    -------
    score : float
        R is the number of *all* relevant documents; 0.0 when there are none.

    Examples
    --------
    >>> from sklearn_icml26.metrics import average_precision_at_k
    >>> round(average_precision_at_k(["d1", "d2", "d3", "d4", "d5"], {"d1", "d3", "d6"}, 5), 6)
    0.555556
    """
    k = _check_k(k)
    rel = _gains(relevant)
    if not rel:
        return 0.0
    hits, total = 0, 0.0
    for j, d in enumerate(_cut(ranked, k), start=1):
        if d in rel:
            hits += 1
            total += hits / j
    return float(total / len(rel))


def recall_at_k(ranked, relevant, k=10):
    """Fraction of the relevant documents found in the top k (trec_eval ``recall``).

    Parameters
    ----------
    ranked : sequence
        Document ids, best first.
    relevant : set, sequence or mapping
        Relevant ids.
    k : int or None, default=10
        Cut-off; None uses the whole ranking.

    Returns
    -------
    score : float
        0.0 when there are no relevant documents.

    Examples
    --------
    >>> from sklearn_icml26.metrics import recall_at_k
    >>> round(recall_at_k(["d1", "d2", "d3"], {"d1", "d3", "d6"}, k=5), 6)
    0.666667
    """
    k = _check_k(k)
    rel = _gains(relevant)
    if not rel:
        return 0.0
    return float(sum(d in rel for d in _cut(ranked, k)) / len(rel))


def precision_at_k(ranked, relevant, k=10):
    """Relevant documents in the top k divided by k (trec_eval ``P``; k, not the list length).

    Parameters
    ----------
    ranked : sequence
        Document ids, best first.
    relevant : set, sequence or mapping
        Relevant ids.
    k : int, default=10
        Cut-off.

    Returns
    -------
    score : float
        In [0, 1].

    Examples
    --------
    >>> from sklearn_icml26.metrics import precision_at_k
    >>> precision_at_k(["d1", "d2", "d3"], {"d1", "d3", "d6"}, k=5)
    0.4
    """
    k = _check_k(k)
    if k is None:
        raise ValueError("precision_at_k needs an int k >= 1; got None")
    rel = _gains(relevant)
    return float(sum(d in rel for d in _cut(ranked, k)) / k)


def reciprocal_rank_at_k(ranked, relevant, k=None):
    """One over the rank of the first relevant document within the top k (0 if none).

    Parameters
    ----------
    ranked : sequence
        Document ids, best first.
    relevant : set, sequence or mapping
        Relevant ids.
    k : int or None, default=None
        Cut-off; None (trec_eval ``recip_rank``) uses the whole ranking.

    Returns
    -------
    score : float
        In [0, 1].

    Examples
    --------
    >>> from sklearn_icml26.metrics import reciprocal_rank_at_k
    >>> reciprocal_rank_at_k(["d1", "d2", "d3"], {"d2"})
    0.5
    """
    k = _check_k(k)
    rel = _gains(relevant)
    for j, d in enumerate(_cut(ranked, k), start=1):
        if d in rel:
            return 1.0 / j
    return 0.0


_METRICS = {
    "ndcg": ndcg_at_k,
    "map": average_precision_at_k,
    "recall": recall_at_k,
    "precision": precision_at_k,
    "mrr": reciprocal_rank_at_k,
}


def evaluate_retrieval(run, qrels, *, candidates=None, k_values=(5, 10, 25, 50), subsets=None):
    """Score a retrieval run per query, per subset, macro and micro (trec_eval definitions).

    Documents outside a query's candidates are removed first; documents are ranked by score
    descending with ties broken by document id descending (trec_eval's order). Queries without
    any relevant document are dropped with a ``UserWarning`` (their scores are undefined);
    queries of ``qrels`` absent from ``run`` score 0.

    Parameters
    ----------
    run : mapping
        ``{query_id: {doc_id: score}}``.
    qrels : mapping
        ``{query_id: {doc_id: grade}}`` (grade > 0 = relevant).
    candidates : mapping, default=None
        ``{query_id: collection of doc ids}`` each query may retrieve; None keeps every doc.
    k_values : sequence of int, default=(5, 10, 25, 50)
        Cut-offs of ``ndcg_at_k``, ``map_at_k``, ``recall_at_k``, ``precision_at_k`` and
        ``mrr_at_k`` (MRR cut at k, as mteb reports it).
    subsets : mapping, default=None
        ``{subset_name: collection of query ids}``; None puts every query in ``"all"``.

    Returns
    -------
    result : Bunch
        ``scores`` (DataFrame, one row per subset plus ``"macro"`` = mean of the subset means
        and ``"micro"`` = mean over all queries), ``per_query`` (DataFrame indexed by query id),
        ``n_dropped_queries``.

    Raises
    ------
    ValueError
        If a k is not an int >= 1, or no query has a relevant document.

    Examples
    --------
    >>> from sklearn_icml26.metrics import evaluate_retrieval
    >>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.7}, "q2": {"d1": 0.9, "d2": 0.8}}
    >>> qrels = {"q1": {"d1": 1, "d3": 1, "d6": 1}, "q2": {"d2": 1}}
    >>> res = evaluate_retrieval(run, qrels, k_values=(3,))
    >>> round(float(res.scores.loc["micro", "ndcg_at_3"]), 6)
    0.667424
    """
    k_values = [_check_k(k) for k in k_values]
    if any(k is None for k in k_values):
        raise ValueError("k_values must be ints >= 1")
    rows, ids, dropped = [], [], []
    for qid, judged in qrels.items():
        rel = _gains(judged)
        if not rel:
            dropped.append(qid)
            continue
        scores = dict(run.get(qid, {}))
        if candidates is not None:
            allowed = set(candidates.get(qid, ()))
            scores = {d: s for d, s in scores.items() if d in allowed}
        ranked = rank_documents(scores)
        row = {}
        for k in k_values:
            row[f"ndcg_at_{k}"] = ndcg_at_k(ranked, rel, k)
            row[f"map_at_{k}"] = average_precision_at_k(ranked, rel, k)
            row[f"recall_at_{k}"] = recall_at_k(ranked, rel, k)
            row[f"precision_at_{k}"] = precision_at_k(ranked, rel, k)
            row[f"mrr_at_{k}"] = reciprocal_rank_at_k(ranked, rel, k)
        rows.append(row)
        ids.append(qid)
    if dropped:
        warnings.warn(f"{len(dropped)} of {len(qrels)} queries have no relevant document and "
                      "are not scored", UserWarning, stacklevel=2)
    if not rows:
        raise ValueError("no query of qrels has a relevant document")
    per_query = pd.DataFrame(rows, index=pd.Index(ids, name="query_id"))
    if subsets is None:
        subsets = {"all": ids}
    table = {}
    for name, qids in subsets.items():
        keep = [q for q in qids if q in per_query.index]
        table[name] = per_query.loc[keep].mean() if keep else per_query.iloc[:0].mean()
    scores = pd.DataFrame(table).T
    macro = scores.mean(axis=0)
    scores.loc["macro"] = macro
    scores.loc["micro"] = per_query.mean(axis=0)
    scores["n_queries"] = [
        *(sum(q in per_query.index for q in qids) for qids in subsets.values()),
        len(subsets), len(per_query)]
    return Bunch(scores=scores, per_query=per_query, n_dropped_queries=len(dropped))
