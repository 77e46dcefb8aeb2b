"""Semantic entropy of sampled answers: equivalence relations between answers, clusters of
equivalent answers and the entropy of the belief over them.
"""

import math

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from ..metrics._qa import locomo_normalize, locomo_tokens

__all__ = ["semantic_entropy"]


_RELATIONS = ("exact", "exact+embedding", "lexical")


# ----------------------------------------------------------------------------------------------
# relations, clusters, weights
# ----------------------------------------------------------------------------------------------
def _norm(texts):
    return [locomo_normalize(t) for t in texts]


def _content_tokens(text):
    words = [w for w in locomo_normalize(text).split() if w not in ENGLISH_STOP_WORDS]
    return locomo_tokens(" ".join(words)) if words else []


def _lexical(texts_a, texts_b):
    """P(a |= b) = share of b's content tokens (with multiplicity) that occur in a."""
    sets_a = [set(_content_tokens(a)) for a in texts_a]
    toks_b = [_content_tokens(b) for b in texts_b]
    out = np.zeros((len(texts_a), len(texts_b)))
    for j, tb in enumerate(toks_b):
        if not tb:
            continue
        for i, sa in enumerate(sets_a):
            out[i, j] = sum(t in sa for t in tb) / len(tb)
    return out


def _embed(embedder, texts):
    Z = np.asarray(embedder.transform(list(texts)), dtype=np.float64)
    if Z.ndim != 2 or Z.shape[0] != len(texts):
        raise ValueError(f"embedder returned an array of shape {Z.shape} for {len(texts)} texts; "
                         "expected (n_texts, n_features)")
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    return np.divide(Z, norms, out=np.zeros_like(Z), where=norms > 0)


def _default_embedder():
    from ..feature_extraction import SentenceEmbedder

    return SentenceEmbedder().fit(["information gain"])


def _relation_matrix(texts_a, texts_b, equivalence, *, cosine_floor=0.3, embedder=None):
    """(n_a, n_b) array of P(a_i |= b_j) under a built-in relation or a callable."""
    na, nb = len(texts_a), len(texts_b)
    if callable(equivalence):
        M = np.asarray(equivalence(list(texts_a), list(texts_b)), dtype=np.float64)
        if M.shape != (na, nb):
            raise ValueError(f"equivalence returned an array of shape {M.shape}; expected "
                             f"({na}, {nb}) = (len(texts_a), len(texts_b))")
        if not np.all(np.isfinite(M)):
            raise ValueError("equivalence returned non-finite values; expected probabilities "
                             "in [0, 1]")
        if M.size and (M.min() < 0 or M.max() > 1):
            raise ValueError(f"equivalence returned values in [{M.min():.3g}, {M.max():.3g}]; "
                             "expected probabilities in [0, 1]")
        return M
    if equivalence == "lexical":
        return _lexical(texts_a, texts_b)
    na_, nb_ = _norm(texts_a), _norm(texts_b)
    exact = np.array([[float(a == b and a != "") for b in nb_] for a in na_]).reshape(na, nb)
    if equivalence == "exact":
        return exact
    # exact+embedding
    if embedder is None:
        raise ValueError("equivalence='exact+embedding' needs an embedder")
    both = list(texts_a) + list(texts_b)
    Z = _embed(embedder, both)
    cos = Z[:na] @ Z[na:].T
    empty_a = np.array([a == "" for a in na_])
    empty_b = np.array([b == "" for b in nb_])
    soft = np.clip((cos - cosine_floor) / (1.0 - cosine_floor), 0.0, 1.0)
    soft[empty_a, :] = 0.0
    soft[:, empty_b] = 0.0
    return np.maximum(exact, soft)


def _weights(mean_logprobs, weighting, n=None):
    n = len(mean_logprobs) if n is None else n
    if weighting == "count" or mean_logprobs is None:
        return np.full(n, 1.0 / n)
    lp = np.asarray(mean_logprobs, dtype=np.float64)
    w = np.exp(lp - lp.max())
    return w / w.sum()


def _clusters(texts, relation, threshold):
    """Connected components of the bidirectional-entailment graph, numbered by first appearance."""
    n = len(texts)
    edges = (relation > threshold) & (relation.T > threshold)
    ids = np.full(n, -1, dtype=np.int64)
    label = 0
    for start in range(n):
        if ids[start] >= 0:
            continue
        ids[start] = label
        stack = [start]
        while stack:
            i = stack.pop()
            for j in np.flatnonzero(edges[i] & (ids < 0)):
                ids[j] = label
                stack.append(int(j))
        label += 1
    return ids


def _entropy(p, base):
    p = p[p > 0]
    h = float(-np.sum(p * np.log(p)))
    if base is not None:
        h /= math.log(base)
    return max(h, 0.0)


def _check_logprobs(mean_logprobs, n, name="mean_logprobs"):
    lp = np.asarray(mean_logprobs, dtype=np.float64).reshape(-1)
    if lp.shape[0] != n:
        raise ValueError(f"{name} has {lp.shape[0]} values for {n} texts; expected one per text")
    if not np.all(np.isfinite(lp)):
        raise ValueError(f"{name} must be finite; got {lp[~np.isfinite(lp)][:3].tolist()}")
    return lp


def semantic_entropy(texts, mean_logprobs=None, *, equivalence="exact+embedding", threshold=0.5,
                     cosine_floor=0.3, weighting="likelihood", base=None, embedder=None,
                     return_clusters=False):
    """Semantic entropy of sampled answers: entropy over clusters of equivalent answers.

    Answers are clustered by bidirectional entailment (connected components of the graph whose
    edges join answers ``a, b`` with ``P(a |= b) > threshold`` and ``P(b |= a) > threshold``);
    each cluster's probability is the sum of its answers' weights.

    Parameters
    ----------
    texts : list of str of length n
        Sampled answers.
    mean_logprobs : array-like of shape (n,), default=None
        Mean per-token log-probability of each answer; ``None`` forces ``weighting="count"``.
    equivalence : {"exact", "exact+embedding", "lexical"} or callable, \
default="exact+embedding"
        The relation ``P(a |= b)``; a callable maps ``(texts_a, texts_b)`` to an
        ``(n_a, n_b)`` array of probabilities. See :class:`SemanticInfoGainScorer`.
    threshold : float, default=0.5
        Entailment threshold of the hard equivalence.
    cosine_floor : float, default=0.3
        Cosine mapped to probability 0 by ``"exact+embedding"``.
    weighting : {"likelihood", "count"}, default="likelihood"
        ``"likelihood"``: softmax of the mean log-probabilities; ``"count"``: ``1/n`` each.
    base : float or None, default=None
        Logarithm base; ``None`` gives nats.
    embedder : transformer or None, default=None
        Fitted text embedder for ``"exact+embedding"``; ``None`` fits a
        :class:`~sklearn_icml26.feature_extraction.SentenceEmbedder`.
    return_clusters : bool, default=False
        Also return cluster ids and cluster probabilities.

    Returns
    -------
    entropy : float
        Semantic entropy (nats when ``base=None``).
    cluster_ids : ndarray of shape (n,) of int
        Only with ``return_clusters``: cluster of each answer, numbered by first appearance.
    cluster_probs : ndarray of shape (n_clusters,)
        Only with ``return_clusters``.

    Raises
    ------
    ValueError
        If ``texts`` is empty, ``mean_logprobs`` has the wrong length or non-finite values, or an
        option is unknown.

    References
    ----------
    Kuhn, Gal, Farquhar, "Semantic Uncertainty: Linguistic Invariances for Uncertainty
    Estimation in Natural Language Generation", ICLR 2023, arXiv:2302.09664.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.retrieval import semantic_entropy
    >>> h = semantic_entropy(["Paris", "paris", "London", "Rome"], np.log([.4, .2, .3, .1]),
    ...                      equivalence="exact")
    >>> round(h, 6)
    0.897946
    """
    if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be a list of str")
    texts = list(texts)
    if not texts:
        raise ValueError("texts is empty; semantic entropy needs at least one sampled answer")
    if weighting not in ("likelihood", "count"):
        raise ValueError(f"weighting must be 'likelihood' or 'count', got {weighting!r}")
    if not callable(equivalence) and equivalence not in _RELATIONS:
        raise ValueError(f"equivalence must be one of {_RELATIONS} or a callable, got "
                         f"{equivalence!r}")
    if mean_logprobs is None:
        weighting = "count"
    else:
        mean_logprobs = _check_logprobs(mean_logprobs, len(texts))
    if equivalence == "exact+embedding" and embedder is None:
        embedder = _default_embedder()
    rel = _relation_matrix(texts, texts, equivalence, cosine_floor=cosine_floor,
                           embedder=embedder)
    ids = _clusters(texts, rel, threshold)
    w = _weights(mean_logprobs, weighting, len(texts))
    probs = np.bincount(ids, weights=w)
    h = _entropy(probs, base)
    if return_clusters:
        return h, ids, probs
    return h
