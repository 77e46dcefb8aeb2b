"""The LoCoMo memory-retrieval slice of AOEB: candidate-restricted retrieval of any text encoder."""

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ..metrics._retrieval import evaluate_retrieval
from ._bm25 import IncrementalBM25

__all__ = ["AOEB_LOCOMO_SUBSETS", "bm25_scorer", "build_locomo_retrieval_task",
           "evaluate_retrieval", "score_candidates"]

AOEB_LOCOMO_SUBSETS = {4: "single-hop-retrieval", 1: "multi-hop-retrieval",
                       2: "temporal-reasoning", 3: "open-domain-knowledge", 5: "adversarial"}


def build_locomo_retrieval_task(data=None, *, text="turn"):
    """The LoCoMo retrieval task of AOEB: every question retrieves its evidence turns.

    Parameters
    ----------
    data : Bunch, default=None
        A :func:`load_locomo` result; None loads it.
    text : {"turn", "plain"} or callable, default="turn"
        Document text: the formatted turn (``"speaker: text [shares caption]"``), ``"plain"``
        (``"speaker: text"``), or a callable on a turn row.

    Returns
    -------
    task : Bunch
        ``corpus`` (DataFrame: id ``scene{c}_session_{s}_D{s}:{t}``, text, conversation),
        ``queries`` (DataFrame: id ``scene{c}_q{j}``, text, subset, conversation),
        ``qrels`` ``{query_id: {doc_id: 1}}`` (questions with evidence only),
        ``candidates`` ``{query_id: doc ids of its own conversation}``, ``subsets``
        ``{subset name: query ids}``.

    References
    ----------
    .. [1] Agent-Oriented Embedding Benchmark (AOEB), ICML 2026; LoCoMo memory slice.
    .. [2] Maharana et al. "Evaluating Very Long-Term Conversational Memory of LLM Agents."
       ACL 2024, arXiv:2402.17753.

    Examples
    --------
    >>> from sklearn_icml26.memory import build_locomo_retrieval_task
    >>> task = build_locomo_retrieval_task()  # doctest: +SKIP
    >>> {k: len(v) for k, v in task.subsets.items()}  # doctest: +SKIP
    {'single-hop-retrieval': 841, 'multi-hop-retrieval': 282, ...}
    """
    if data is None:
        from ..datasets import load_locomo

        data = load_locomo()
    t = data.turns
    if text == "turn":
        texts = t["formatted"].tolist()
    elif text == "plain":
        texts = (t["speaker"] + ": " + t["text"]).tolist()
    elif callable(text):
        texts = [text(row) for _, row in t.iterrows()]
    else:
        raise ValueError(f"text must be 'turn', 'plain' or a callable; got {text!r}")
    doc_ids = [f"scene{c}_session_{s}_{d}" for c, s, d in
               zip(t["conversation_index"], t["session"], t["dia_id"], strict=True)]
    corpus = pd.DataFrame({"id": doc_ids, "text": texts, "conversation": t["conversation"]})
    doc_of = {(c, d): i for c, d, i in zip(t["conversation_index"], t["dia_id"], doc_ids,
                                           strict=True)}
    by_conv = corpus.groupby("conversation", sort=False)["id"].apply(list).to_dict()
    q = data.qa[data.qa["evidence"].map(len) > 0]
    qids = [f"scene{c}_q{j}" for c, j in zip(q["conversation_index"], q["qa_index"],
                                             strict=True)]
    queries = pd.DataFrame({"id": qids, "text": q["question"].tolist(),
                            "subset": [AOEB_LOCOMO_SUBSETS[c] for c in q["category"]],
                            "conversation": q["conversation"].tolist()})
    qrels, candidates = {}, {}
    for qid, c, conv, ev in zip(qids, q["conversation_index"], q["conversation"],
                                q["evidence"], strict=True):
        qrels[qid] = {doc_of[(c, d)]: 1 for d in ev}
        candidates[qid] = by_conv[conv]
    subsets = {name: queries.loc[queries["subset"] == name, "id"].tolist()
               for name in AOEB_LOCOMO_SUBSETS.values()}
    return Bunch(corpus=corpus, queries=queries, qrels=qrels, candidates=candidates,
                 subsets=subsets)


def bm25_scorer(query_texts, doc_texts, k1=1.5, b=0.75):
    """BM25 scores of queries against documents (an :class:`IncrementalBM25` over the docs).

    Parameters
    ----------
    query_texts : list of str
        Queries.
    doc_texts : list of str
        Documents.
    k1 : float, default=1.5
        Term-frequency saturation.
    b : float, default=0.75
        Length normalisation.

    Returns
    -------
    scores : ndarray of shape (n_queries, n_docs)
        BM25 score of each query against each document.

    Examples
    --------
    >>> from sklearn_icml26.memory._aoeb import bm25_scorer
    >>> bm25_scorer(["red apple"], ["a red apple", "a green pear"]).shape
    (1, 2)
    """
    index = IncrementalBM25(k1, b)
    for d in doc_texts:
        index.add(d)
    return np.vstack([index.get_scores(q) for q in query_texts]) if query_texts else np.zeros(
        (0, len(doc_texts)))


def _l2(M):
    M = np.asarray(M, dtype=np.float64)
    n = np.linalg.norm(M, axis=1, keepdims=True)
    return np.divide(M, n, out=np.zeros_like(M), where=n > 0)


def score_candidates(scorer, task, *, batch_size=64):
    """Score every query against its own conversation's turns.

    Parameters
    ----------
    scorer : fitted transformer or callable
        A text transformer (scores = cosine of its L2-normalised rows) or
        ``scorer(query_texts, doc_texts) -> (n_q, n_d)`` scores.
    task : Bunch
        From :func:`build_locomo_retrieval_task`.
    batch_size : int, default=64
        Texts per ``transform`` call.

    Returns
    -------
    run : dict
        ``{query_id: {doc_id: score}}``.

    Examples
    --------
    >>> from sklearn_icml26.memory import score_candidates
    >>> from sklearn_icml26.memory._aoeb import bm25_scorer
    >>> run = score_candidates(bm25_scorer, task)  # doctest: +SKIP
    """
    run = {}
    docs_by = dict(tuple(task.corpus.groupby("conversation", sort=False)))
    for conv, qs in task.queries.groupby("conversation", sort=False):
        docs = docs_by[conv]
        d_texts, q_texts = docs["text"].tolist(), qs["text"].tolist()
        if callable(scorer) and not hasattr(scorer, "transform"):
            S = np.asarray(scorer(q_texts, d_texts), dtype=np.float64)
        else:
            def enc(texts):
                return _l2(np.vstack([scorer.transform(texts[i:i + batch_size])
                                      for i in range(0, len(texts), batch_size)]))
            S = enc(q_texts) @ enc(d_texts).T
        ids = docs["id"].tolist()
        for qid, row in zip(qs["id"], S, strict=True):
            run[qid] = dict(zip(ids, row.tolist(), strict=True))
    return run
