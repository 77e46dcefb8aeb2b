"""An incremental BM25 index: documents added and removed one at a time, scores at query time."""

import re
from collections import Counter

import numpy as np

__all__ = ["BM25_STOPWORDS_EN", "IncrementalBM25", "bm25_tokenize"]

# bm25s' default English stop-word list (33 words), so both indexes see the same tokens
BM25_STOPWORDS_EN = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
))
_TOKEN = re.compile(r"(?u)\b\w\w+\b")


def bm25_tokenize(text, stopwords=BM25_STOPWORDS_EN):
    """Lower-cased word tokens of two or more characters, stop words removed.

    Parameters
    ----------
    text : str
        The text.
    stopwords : collection of str, default=BM25_STOPWORDS_EN
        Tokens to drop.

    Returns
    -------
    tokens : list of str
        The kept tokens, in order.

    Examples
    --------
    >>> from sklearn_icml26.memory._bm25 import bm25_tokenize
    >>> bm25_tokenize("Alice went to the climbing group.")
    ['alice', 'went', 'climbing', 'group']
    """
    return [w for w in _TOKEN.findall(text.lower()) if w not in stopwords]


class IncrementalBM25:
    """BM25 (Lucene variant) over a growing and shrinking set of documents.

    Postings, document frequencies, lengths and the total length are updated on every
    :meth:`add` / :meth:`remove`; the inverse document frequency and the mean length are taken
    from the *current* collection at query time, so the scores always equal those of a BM25
    index rebuilt from scratch on the live documents:

    ``s(q, d) = sum_{w in set(q)} idf_w * tf_{w,d} / (tf_{w,d} + k1 (1 - b + b L_d / Lbar))``
    with ``idf_w = ln(1 + (N - df_w + 0.5) / (df_w + 0.5))``.

    Parameters
    ----------
    k1 : float, default=1.5
        Term-frequency saturation.
    b : float, default=0.75
        Length normalisation.
    tokenizer : callable, default=bm25_tokenize
        ``str -> list of str``, used when :meth:`add` / :meth:`get_scores` receive text.

    Attributes
    ----------
    n_docs : int
        Live documents.
    doc_ids : list of hashable
        Live document ids in insertion order.

    References
    ----------
    .. [1] Robertson, S. and Zaragoza, H. "The Probabilistic Relevance Framework: BM25 and
       Beyond." Foundations and Trends in IR, 2009.
    .. [2] Lù, X. H. "BM25S: Orders of magnitude faster lexical search via eager sparse
       scoring." arXiv:2407.03618, 2024.

    Examples
    --------
    >>> from sklearn_icml26.memory import IncrementalBM25
    >>> index = IncrementalBM25()
    >>> for text in ["alice went support group", "bea painted sunrise sunrise",
    ...              "support group climbing"]:
    ...     _ = index.add(text)
    >>> [round(float(s), 6) for s in index.get_scores("support sunrise group")]
    [0.361226, 0.544561, 0.409508]
    """

    def __init__(self, k1=1.5, b=0.75, tokenizer=bm25_tokenize):
        self.k1 = float(k1)
        self.b = float(b)
        self.tokenizer = tokenizer
        self._postings = {}  # term -> {slot: tf}
        self._lengths = np.zeros(16, dtype=np.float64)
        self._alive = np.zeros(16, dtype=bool)
        self._slot_of = {}
        self._ids = []  # slot -> id
        self._total = 0.0
        self._next_auto = 0
        self._terms_of = []  # slot -> its unique terms

    @property
    def n_docs(self):
        return len(self._slot_of)

    @property
    def doc_ids(self):
        return [self._ids[s] for s in np.flatnonzero(self._alive[: len(self._ids)])]

    def _tokens(self, doc):
        return self.tokenizer(doc) if isinstance(doc, str) else list(doc)

    def add(self, doc, doc_id=None):
        """Index one document.

        Parameters
        ----------
        doc : str or list of str
            Text (tokenised by ``tokenizer``) or a token list.
        doc_id : hashable, default=None
            Its id; None numbers documents 0, 1, 2, ...

        Returns
        -------
        doc_id : hashable

        Raises
        ------
        ValueError
            If ``doc_id`` is already indexed.
        """
        if doc_id is None:
            doc_id = self._next_auto
        if doc_id in self._slot_of:
            raise ValueError(f"doc_id={doc_id!r} is already in the index; ids must be unique")
        if isinstance(doc_id, int):
            self._next_auto = max(self._next_auto, doc_id + 1)
        tokens = self._tokens(doc)
        slot = len(self._ids)
        if slot >= self._lengths.shape[0]:
            grow = max(16, 2 * self._lengths.shape[0])
            self._lengths = np.concatenate([self._lengths, np.zeros(grow - slot)])
            self._alive = np.concatenate([self._alive, np.zeros(grow - slot, dtype=bool)])
        self._ids.append(doc_id)
        self._slot_of[doc_id] = slot
        self._alive[slot] = True
        self._lengths[slot] = len(tokens)
        self._total += len(tokens)
        counts = Counter(tokens)
        for term, tf in counts.items():
            self._postings.setdefault(term, {})[slot] = tf
        self._terms_of.append(tuple(counts))
        return doc_id

    def remove(self, doc_id):
        """Remove a document; df, N and the total length are updated.

        Parameters
        ----------
        doc_id : hashable

        Raises
        ------
        KeyError
            If ``doc_id`` is not indexed.
        """
        slot = self._slot_of.pop(doc_id)
        self._alive[slot] = False
        self._total -= self._lengths[slot]
        for term in self._terms_of[slot]:
            plist = self._postings[term]
            del plist[slot]
            if not plist:
                del self._postings[term]
        self._terms_of[slot] = ()

    def idf(self, term):
        """Lucene idf of ``term`` in the current collection (0 for an unseen term)."""
        df = len(self._postings.get(term, ()))
        n = self.n_docs
        if df == 0:
            return 0.0
        return float(np.log(1.0 + (n - df + 0.5) / (df + 0.5)))

    def term_weights(self, query):
        """Per-document contributions of each unique query term.

        Parameters
        ----------
        query : str or list of str

        Returns
        -------
        weights : dict
            ``term -> (slots ndarray of int, contributions ndarray of float)``.
        """
        n = self.n_docs
        out = {}
        if n == 0:
            return out
        avg = self._total / n if self._total > 0 else 1.0
        for term in dict.fromkeys(self._tokens(query)):
            plist = self._postings.get(term)
            if not plist:
                continue
            slots = np.fromiter(plist.keys(), dtype=np.int64, count=len(plist))
            tf = np.fromiter(plist.values(), dtype=np.float64, count=len(plist))
            df = len(plist)
            idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
            norm = self.k1 * (1.0 - self.b + self.b * self._lengths[slots] / avg)
            out[term] = (slots, idf * tf / (tf + norm))
        return out

    def slot_scores(self, query):
        """Scores of every slot (dead slots score 0); internal order, length = slots used."""
        s = np.zeros(len(self._ids), dtype=np.float64)
        for slots, contrib in self.term_weights(query).values():
            np.add.at(s, slots, contrib)
        return s

    def get_scores(self, query):
        """BM25 score of every live document for one query.

        Parameters
        ----------
        query : str or list of str

        Returns
        -------
        scores : ndarray of shape (n_docs,)
            In the order of :attr:`doc_ids`.
        """
        s = self.slot_scores(query)
        return s[self._alive[: len(self._ids)]]

    def tokens_of(self, doc_id):
        """Token counts ``{term: tf}`` of an indexed document."""
        slot = self._slot_of[doc_id]
        return {t: self._postings[t][slot] for t in self._terms_of[slot]}

    def nbytes(self):
        """Approximate memory of the postings and arrays, in bytes."""
        n_post = sum(len(p) for p in self._postings.values())
        return int(n_post * 16 + self._lengths.nbytes + self._alive.nbytes
                   + sum(len(t) for t in self._postings))
