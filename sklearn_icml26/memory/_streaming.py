"""StreamingMemory: an external memory filled and queried as a stream (five lifecycle stages)."""

import math
import re
import time
import warnings
from collections import deque
from datetime import date, datetime
from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

from .._compat import HasMethods, Interval, StrOptions, _fit_context
from ..feature_extraction._embedder import SentenceEmbedder, check_texts
from ..utils._scaling import _pow2_scale
from ._bm25 import IncrementalBM25, bm25_tokenize

__all__ = ["StreamingMemory", "keyword_text"]

_WORD = re.compile(r"(?u)\b\w+\b")
_QUESTION_WORDS = frozenset({"who", "what", "when", "where", "why", "how", "which", "did", "does",
                             "do", "is", "are", "was", "were"})
_DENSE = {"flat", "hnsw", "hybrid", "segment"}
_LEXICAL = {"bm25", "hybrid"}
_INSERT_ROWS = ("insert_embed", "insert_unit", "insert_index", "insert_consolidate",
                "insert_total")
_QUERY_ROWS = ("query_formulate", "query_search", "query_integrate", "query_total")


def keyword_text(text, extra_stop_words=()):
    """The extractive compression of a text: lower-cased words minus English stop words.

    Parameters
    ----------
    text : str
        The text.
    extra_stop_words : collection of str, default=()
        More words to drop (question words for queries).

    Returns
    -------
    keywords : str
        The kept words joined by spaces; the original text when nothing is kept.

    Examples
    --------
    >>> from sklearn_icml26.memory._streaming import keyword_text
    >>> keyword_text("Alice: I went to the climbing group yesterday!")
    'alice went climbing group yesterday'
    """
    words = [w for w in _WORD.findall(text.lower())
             if w not in ENGLISH_STOP_WORDS and w not in extra_stop_words]
    return " ".join(words) if words else text


def _l2_rows(M):
    """Rows of ``M`` over their L2 norms (zero rows stay zero).

    Each row is first divided by a power of two near its largest entry (exact), so that the
    squares neither overflow (norms above ~1e154) nor underflow (below ~1e-162); ordinary rows
    give bitwise the plain ``M / norm``.
    """
    M = np.asarray(M, dtype=np.float64)
    M = M / _pow2_scale(M, axis=-1)[..., None]
    norms = np.linalg.norm(M, axis=-1, keepdims=True)
    return np.divide(M, norms, out=np.zeros_like(M), where=norms > 0)


def _rank(scores, ids, n):
    """Indices of the top ``n`` by score descending, ties by larger id (newer) first."""
    order = np.lexsort((-ids, -scores))
    return order[:n]


def _comparable(values):
    if not values:
        return False
    if all(isinstance(v, (Real, np.number)) and not isinstance(v, bool) for v in values):
        return True
    return all(isinstance(v, (datetime, date, pd.Timestamp, np.datetime64)) for v in values)


def _as_cover_set(c):
    if isinstance(c, (set, frozenset, list, tuple)):
        return frozenset(c)
    return frozenset([c])


class _Store:
    """Everything a memory holds; plain Python/NumPy state so that it pickles and copies."""

    def __init__(self):
        self.V = None  # (capacity, d) float32 unit rows, indexed by item id
        self.alive = np.zeros(0, dtype=bool)
        self.step = np.zeros(0, dtype=np.int64)
        self.n_access = np.zeros(0, dtype=np.int64)
        self.last_access = np.zeros(0, dtype=np.int64)
        self.merge_count = np.zeros(0, dtype=np.int64)
        self.texts, self.covers, self.session, self.timestamp, self.tokens = [], [], [], [], []
        self.live = {}  # id -> None, insertion order
        self.bm25 = None
        self.hnsw = None
        self.hnsw_capacity = 0
        self.seg_sum = {}  # session -> running vector sum
        self.seg_members = {}  # session -> {id: None}
        self.by_session_step = {}  # (session, step) -> id
        self.windows = {}  # session -> deque of (text, vector, covers) of the last rows
        self.last_timestamp = None
        self.seen_covers = {}
        self.latency = {name: [] for name in (*_INSERT_ROWS, *_QUERY_ROWS)}  # seconds per stage
        self.warned = set()  # warnings given once per memory
        self._ids = None  # cached array of the live ids

    def live_ids(self):
        if self._ids is None or len(self._ids) != len(self.live):
            self._ids = np.fromiter(self.live, dtype=np.int64, count=len(self.live))
        return self._ids

    def grow(self, n_used, n_new, dim):
        need = n_used + n_new
        cap = self.alive.shape[0]
        if need <= cap:
            return
        new_cap = max(16, cap * 2)
        while new_cap < need:
            new_cap *= 2
        extra = new_cap - cap
        self.alive = np.concatenate([self.alive, np.zeros(extra, dtype=bool)])
        for name in ("step", "n_access", "last_access", "merge_count"):
            setattr(self, name, np.concatenate([getattr(self, name),
                                                np.zeros(extra, dtype=np.int64)]))
        if dim is not None:
            V = np.zeros((new_cap, dim), dtype=np.float32)
            if self.V is not None:
                V[:cap] = self.V
            self.V = V


class StreamingMemory(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """A streaming external memory for LLM agents, with Neuromem's five lifecycle dimensions.

    Rows (texts, or vectors with ``embedder="precomputed"``) are inserted one logical time
    step each through :meth:`partial_fit`, while the memory is queried through
    :meth:`kneighbors`, :meth:`retrieve`, :meth:`predict` and :meth:`transform`. Each of the
    five dimensions of the memory lifecycle is one parameter: the data structure
    (``structure``), the stored unit (``unit``), consolidation (``consolidation``), query
    formulation (``query``) and context integration (``integration``). Time spent in each
    stage of insertion and retrieval is recorded (:meth:`latency_summary`).

    Scores (higher is better): dense structures use the inner product of unit vectors
    (cosine); ``"bm25"`` the Lucene BM25 of an incremental index; ``"hybrid"`` reciprocal-rank
    fusion of both; ``"segment"`` searches the ``n_segments`` sessions whose centroid is
    closest to the query; ``"recency"`` returns the newest items. Ties rank the newer item
    first. :meth:`kneighbors` distances are ``1 - cosine`` (flat, hnsw, segment), ``-score``
    (bm25, hybrid) or the age in steps (recency).

    Parameters
    ----------
    embedder : "auto", "precomputed" or transformer, default="auto"
        ``"auto"`` uses :class:`SentenceEmbedder` (MiniLM when installed, else hashing);
        ``"precomputed"``: X are vectors (n, d); else a transformer on lists of str returning
        (n, d) arrays. It is cloned and fitted on the first batch unless already fitted.
    structure : {"flat", "hnsw", "bm25", "hybrid", "segment", "recency"}, default="flat"
        Data structure (D1). ``"hnsw"`` needs ``hnswlib``.
    unit : {"turn", "dated_turn", "window", "keywords"}, default="turn"
        Stored unit (D2): the row text, ``"[timestamp] text"``, the last ``window_size`` rows
        of the same session joined (vectors averaged in numeric mode), or its keywords.
    window_size : int, default=3
        Rows per ``"window"`` unit.
    consolidation : {"none", "dedup", "fifo", "lru", "decay"}, default="none"
        Consolidation (D3): merge near-duplicates into the nearest item (its covers grow), or
        evict the oldest / least recently used / least retained item beyond ``capacity``.
    capacity : int, default=None
        Maximum number of items (needed by "fifo", "lru", "decay").
    dedup_threshold : float, default=0.95
        Cosine (dense) or token-set Jaccard (``"bm25"``) above which a new item is a duplicate.
    decay_halflife : float, default=200
        Half-life H in steps of the retention ``exp(-(t - last_access) / S)``,
        ``S = H (1 + n_access) / ln 2``.
    query : {"raw", "keywords", "prf"}, default="raw"
        Query formulation (D4): as given, stripped to keywords, or Rocchio pseudo-relevance
        feedback (dense: ``q + prf_weight * mean of the top prf_docs vectors``; lexical: the
        ``prf_terms`` best BM25 terms of the top items appended).
    prf_docs : int, default=3
        Feedback items.
    prf_weight : float, default=0.5
        Weight of the feedback centroid (dense).
    prf_terms : int, default=5
        Feedback terms (lexical).
    integration : {"topk", "chronological", "token_budget", "neighbors"}, default="topk"
        Context integration (D5) of :meth:`retrieve`: the top k; the top k in time order;
        items by score up to ``token_budget`` whitespace tokens (at least one); or each of the
        top k followed by its same-session neighbours (steps +-1), up to ``token_budget``.
    token_budget : int, default=256
        Context size in whitespace tokens for "token_budget" and "neighbors".
    n_neighbors : int, default=10
        Items returned per query.
    n_segments : int, default=3
        Sessions searched by ``"segment"``.
    rrf_k : float, default=60
        Reciprocal-rank-fusion constant of ``"hybrid"``.
    bm25_k1 : float, default=1.5
        BM25 term-frequency saturation.
    bm25_b : float, default=0.75
        BM25 length normalisation.
    hnsw_m : int, default=16
        HNSW graph degree.
    hnsw_ef_construction : int, default=200
        HNSW construction beam.
    hnsw_ef : int, default=100
        HNSW search beam (at least the number of neighbours asked).
    random_state : int, RandomState instance or None, default=None
        Seed of the HNSW graph.
    verbose : int, default=0
        Unused; kept for API symmetry.

    Attributes
    ----------
    embedder_ : transformer or None
        The fitted embedder (None when not needed or ``"precomputed"``).
    n_items_ : int
        Live items.
    n_inserted_ : int
        Rows inserted so far (the current step is ``n_inserted_ - 1``).
    n_evicted_ : int
        Items evicted.
    n_merged_ : int
        Rows merged into an existing item by ``"dedup"``.
    next_id_ : int
        Id the next item will get (item ids are 0, 1, ... in creation order).
    item_ids_ : ndarray of int64 of shape (n_items_,)
        Live item ids in insertion order.
    item_step_ : ndarray of int64 of shape (next_id_,)
        Creation step of every item id (evicted ones included).
    item_texts_ : list of str
        Unit text of every item id (text mode).
    item_covers_ : list of frozenset
        Source ids each item covers.
    item_session_ : list
        Session of every item id.
    item_timestamp_ : list
        Timestamp of every item id (None when not given).
    embedding_dim_ : int or None
        Vector width (None for purely lexical memories).
    size_bytes_ : int
        Approximate size of vectors, postings and texts.
    latency_ : dict of str to ndarray
        Seconds of each insertion / query stage, one value per call / per query.
    n_features_in_ : int
        Vector width (numeric mode only).
    store_ : object
        Everything the memory holds, which ``partial_fit`` continues: item vectors, texts,
        access counts, the lexical and HNSW indexes, session windows and the latency records
        (an internal structure; the public views are the attributes above).

    See Also
    --------
    SentenceEmbedder : The default text encoder.
    interleaved_memory_eval : The interleaved insert/query evaluation on LoCoMo.

    References
    ----------
    .. [1] Zhang, Li, Xu, Zhang, Liao, Jin. "Neuromem: A Granular Decomposition of the
       Streaming Lifecycle in External Memory for LLMs." ICML 2026, arXiv:2602.13967.
    .. [2] Cormack, Clarke, Buettcher. "Reciprocal rank fusion outperforms Condorcet and
       individual rank learning methods." SIGIR 2009.
    .. [3] Malkov, Yashunin. "Efficient and robust approximate nearest neighbor search using
       Hierarchical Navigable Small World graphs." arXiv:1603.09320.

    Examples
    --------
    >>> from sklearn_icml26.feature_extraction import SentenceEmbedder
    >>> from sklearn_icml26.memory import StreamingMemory
    >>> mem = StreamingMemory(embedder=SentenceEmbedder(backend="hashing"), n_neighbors=1)
    >>> mem = mem.partial_fit(["Anna keeps a violin in the attic.", "Ben likes tea."])
    >>> mem = mem.partial_fit(["Carl keeps a kayak in the garage."])
    >>> mem.retrieve(["Where does Carl keep the kayak?"])[0]["texts"]
    ['Carl keeps a kayak in the garage.']
    """

    _parameter_constraints = {
        "embedder": [StrOptions({"auto", "precomputed"}), HasMethods(["fit", "transform"])],
        "structure": [StrOptions({"flat", "hnsw", "bm25", "hybrid", "segment", "recency"})],
        "unit": [StrOptions({"turn", "dated_turn", "window", "keywords"})],
        "window_size": [Interval(Integral, 1, None, closed="left")],
        "consolidation": [StrOptions({"none", "dedup", "fifo", "lru", "decay"})],
        "capacity": [Interval(Integral, 1, None, closed="left"), None],
        "dedup_threshold": [Interval(Real, 0, 1, closed="both")],
        "decay_halflife": [Interval(Real, 0, None, closed="neither")],
        "query": [StrOptions({"raw", "keywords", "prf"})],
        "prf_docs": [Interval(Integral, 1, None, closed="left")],
        "prf_weight": [Interval(Real, 0, None, closed="left")],
        "prf_terms": [Interval(Integral, 0, None, closed="left")],
        "integration": [StrOptions({"topk", "chronological", "token_budget", "neighbors"})],
        "token_budget": [Interval(Integral, 1, None, closed="left")],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "n_segments": [Interval(Integral, 1, None, closed="left")],
        "rrf_k": [Interval(Real, 0, None, closed="left")],
        "bm25_k1": [Interval(Real, 0, None, closed="left")],
        "bm25_b": [Interval(Real, 0, 1, closed="both")],
        "hnsw_m": [Interval(Integral, 2, None, closed="left")],
        "hnsw_ef_construction": [Interval(Integral, 1, None, closed="left")],
        "hnsw_ef": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, embedder="auto", *, structure="flat", unit="turn", window_size=3,
                 consolidation="none", capacity=None, dedup_threshold=0.95, decay_halflife=200,
                 query="raw", prf_docs=3, prf_weight=0.5, prf_terms=5, integration="topk",
                 token_budget=256, n_neighbors=10, n_segments=3, rrf_k=60, bm25_k1=1.5,
                 bm25_b=0.75, hnsw_m=16, hnsw_ef_construction=200, hnsw_ef=100,
                 random_state=None, verbose=0):
        self.embedder = embedder
        self.structure = structure
        self.unit = unit
        self.window_size = window_size
        self.consolidation = consolidation
        self.capacity = capacity
        self.dedup_threshold = dedup_threshold
        self.decay_halflife = decay_halflife
        self.query = query
        self.prf_docs = prf_docs
        self.prf_weight = prf_weight
        self.prf_terms = prf_terms
        self.integration = integration
        self.token_budget = token_budget
        self.n_neighbors = n_neighbors
        self.n_segments = n_segments
        self.rrf_k = rrf_k
        self.bm25_k1 = bm25_k1
        self.bm25_b = bm25_b
        self.hnsw_m = hnsw_m
        self.hnsw_ef_construction = hnsw_ef_construction
        self.hnsw_ef = hnsw_ef
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ set-up
    @property
    def _numeric(self):
        return isinstance(self.embedder, str) and self.embedder == "precomputed"

    def _needs_vectors(self):
        if self._numeric:
            return True
        return self.structure in _DENSE or (
            self.structure == "recency" and self.consolidation == "dedup")

    def _check_config(self):
        if self.consolidation in ("fifo", "lru", "decay") and self.capacity is None:
            raise ValueError(f"consolidation={self.consolidation!r} needs capacity=int >= 1; "
                             "got None")
        if self._numeric:
            if self.structure in _LEXICAL:
                raise ValueError(f"structure={self.structure!r} needs texts; "
                                 "embedder='precomputed' gives vectors")
            if self.unit in ("keywords", "dated_turn"):
                raise ValueError(f"unit={self.unit!r} needs texts; embedder='precomputed' "
                                 "gives vectors")
        if self.structure == "hnsw":
            try:
                import hnswlib  # noqa: F401
            except ImportError as exc:
                raise ImportError("structure='hnsw' needs hnswlib: pip install hnswlib (or "
                                  "'sklearn_icml26[memory]')") from exc

    def _reset(self):
        self._check_config()
        self.store_ = _Store()
        self.n_inserted_ = 0
        self.n_evicted_ = 0
        self.n_merged_ = 0
        self.next_id_ = 0
        self.embedding_dim_ = None
        self.embedder_ = None
        if self.structure in _LEXICAL:
            self.store_.bm25 = IncrementalBM25(self.bm25_k1, self.bm25_b)

    def _fit_embedder(self, texts):
        if not self._needs_vectors() and self.query != "prf":
            return
        if self.query == "prf" and not self._needs_vectors():
            return  # lexical feedback needs no vectors
        emb = SentenceEmbedder() if self.embedder == "auto" else self.embedder
        try:
            check_is_fitted(emb)
            self.embedder_ = emb
        except NotFittedError:
            if (isinstance(emb, SentenceEmbedder) and emb.backend == "tfidf"):
                warnings.warn("StreamingMemory: the 'tfidf' embedder is fitted on the first "
                              "batch only and frozen there; pass it pre-fitted on past texts",
                              UserWarning, stacklevel=3)
            self.embedder_ = clone(emb).fit(texts)

    def _embed(self, texts):
        Z = np.asarray(self.embedder_.transform(texts), dtype=np.float64)
        if Z.ndim != 2 or Z.shape[0] != len(texts):
            raise ValueError(f"embedder returned an array of shape {Z.shape}; expected "
                             f"({len(texts)}, d)")
        if self.embedding_dim_ is not None and Z.shape[1] != self.embedding_dim_:
            raise ValueError(f"embedder returned {Z.shape[1]} columns; this memory holds "
                             f"{self.embedding_dim_}-dimensional items")
        if not np.all(np.isfinite(Z)):
            raise ValueError("embedder returned NaN or infinite values")
        return _l2_rows(Z)

    def _check_meta(self, value, name, n):
        if value is None:
            return None
        value = list(value.tolist() if hasattr(value, "tolist") else value)
        if len(value) != n:
            raise ValueError(f"{name} has {len(value)} entries but X has {n} rows; give one "
                             "per row")
        return value

    # ------------------------------------------------------------------ insertion
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, *, sessions=None, timestamps=None, covers=None):
        """Empty the memory, then insert the rows of X in order (as :meth:`partial_fit`).

        Parameters
        ----------
        X : list of str of length n, or array-like of shape (n, d)
            Texts, or unit vectors with ``embedder="precomputed"``.
        y : None
            Ignored.
        sessions : sequence of length n, default=None
            Session of each row (hashable); None puts all rows in one session.
        timestamps : sequence of length n, default=None
            Timestamp of each row (str, number or datetime); needed by ``unit="dated_turn"``.
        covers : sequence of length n, default=None
            Source ids of each row (hashable or a set); default: the row's step.

        Returns
        -------
        self : StreamingMemory
            The memory.

        Raises
        ------
        ValueError
            Empty X, metadata of the wrong length, NaN/inf, a setting missing what it needs.
        TypeError
            A non-str element in text mode.
        """
        self._reset()
        return self._insert(X, sessions, timestamps, covers)

    def partial_fit(self, X, y=None, *, sessions=None, timestamps=None, covers=None):
        """Insert the rows of X, one logical time step each, after everything inserted before.

        Parameters
        ----------
        X : list of str of length n, or array-like of shape (n, d)
            Texts, or vectors with ``embedder="precomputed"`` (rows are L2-normalised).
        y : None
            Ignored.
        sessions : sequence of length n, default=None
            Session of each row; None puts all rows in one session.
        timestamps : sequence of length n, default=None
            Timestamp of each row; needed by ``unit="dated_turn"``.
        covers : sequence of length n, default=None
            Source ids of each row (hashable or a set); default: the row's step.

        Returns
        -------
        self : StreamingMemory
            The memory.

        Raises
        ------
        ValueError
            Empty X, metadata of the wrong length, NaN/inf, a setting missing what it needs.
        TypeError
            A non-str element in text mode.
        """
        if not hasattr(self, "n_inserted_"):
            # parameters are checked once, when the stream starts (a stream of small packets
            # would otherwise pay for the validation at every call)
            self._validate_params()
            self._reset()
        return self._insert(X, sessions, timestamps, covers)

    def _insert(self, X, sessions, timestamps, covers):
        t_start = time.perf_counter_ns()
        first = self.n_inserted_ == 0 and self.next_id_ == 0
        if self._numeric:
            X = validate_data(self, X, reset=first, dtype=[np.float64, np.float32])
            n = X.shape[0]
            texts = [None] * n
        else:
            texts = check_texts(X, owner="StreamingMemory")
            n = len(texts)
        sessions = self._check_meta(sessions, "sessions", n) or [0] * n
        timestamps = self._check_meta(timestamps, "timestamps", n)
        covers = self._check_meta(covers, "covers", n)
        if self.unit == "dated_turn" and timestamps is None:
            raise ValueError("unit='dated_turn' needs timestamps (one per row); got None")
        if timestamps is None:
            timestamps = [None] * n
        self._check_order(timestamps)
        st = self.store_
        steps = list(range(self.n_inserted_, self.n_inserted_ + n))
        cov = [_as_cover_set(c) for c in covers] if covers is not None else [
            frozenset([s]) for s in steps]
        self._check_duplicate_covers(covers, steps)
        # D2: the unit of every row (texts first; vectors after embedding)
        t0 = time.perf_counter_ns()
        units = []
        for i in range(n):
            if self._numeric:
                units.append((None, cov[i]))
                continue
            x = texts[i]
            if self.unit == "dated_turn":
                units.append((f"[{timestamps[i]}] {x}", cov[i]))
            elif self.unit == "keywords":
                units.append((keyword_text(x), cov[i]))
            elif self.unit == "window":
                win = st.windows.setdefault(sessions[i], deque(maxlen=self.window_size - 1))
                parts = [w[0] for w in win] + [x]
                cset = frozenset().union(*[w[2] for w in win], cov[i])
                units.append((" ".join(parts), cset))
                win.append((x, None, cov[i]))
            else:
                units.append((x, cov[i]))
        t_unit = time.perf_counter_ns() - t0
        # embedding
        t0 = time.perf_counter_ns()
        vecs = None
        if self._numeric:
            rows = _l2_rows(X)
            if self.embedding_dim_ is None:
                self.embedding_dim_ = X.shape[1]
            if self.unit == "window":
                vecs = np.empty_like(rows)
                for i in range(n):
                    win = st.windows.setdefault(sessions[i], deque(maxlen=self.window_size - 1))
                    stack = [w[1] for w in win] + [rows[i]]
                    cset = frozenset().union(*[w[2] for w in win], cov[i])
                    vecs[i] = _l2_rows(np.mean(stack, axis=0))
                    units[i] = (None, cset)
                    win.append((None, rows[i], cov[i]))
            else:
                vecs = rows
        else:
            if self.embedder_ is None and first:
                self._fit_embedder(texts)
            if self._needs_vectors():
                vecs = self._embed([u[0] for u in units])
                if self.embedding_dim_ is None:
                    self.embedding_dim_ = vecs.shape[1]
        t_embed = time.perf_counter_ns() - t0
        t_index = t_cons = 0
        st.grow(self.next_id_, n, self.embedding_dim_)
        for i in range(n):
            step = steps[i]
            text, cset = units[i]
            v = None if vecs is None else vecs[i]
            toks = bm25_tokenize(text) if text is not None and (
                self.structure in _LEXICAL or self.query == "prf") else None
            t0 = time.perf_counter_ns()
            merged = self.consolidation == "dedup" and self._dedup(v, toks, cset)
            t_cons += time.perf_counter_ns() - t0
            if merged:
                continue
            t0 = time.perf_counter_ns()
            self._add_item(step, text, v, toks, cset, sessions[i], timestamps[i])
            t_index += time.perf_counter_ns() - t0
            t0 = time.perf_counter_ns()
            if self.consolidation in ("fifo", "lru", "decay"):
                while len(st.live) > self.capacity:
                    self._evict_one(step)
            t_cons += time.perf_counter_ns() - t0
        self.n_inserted_ += n
        st._ids = np.fromiter(st.live, dtype=np.int64, count=len(st.live))  # queries reuse it
        lat = self.store_.latency
        lat["insert_embed"].append(t_embed * 1e-9)
        lat["insert_unit"].append(t_unit * 1e-9)
        lat["insert_index"].append(t_index * 1e-9)
        lat["insert_consolidate"].append(t_cons * 1e-9)
        lat["insert_total"].append((time.perf_counter_ns() - t_start) * 1e-9)
        return self

    def _check_order(self, timestamps):
        st = self.store_
        prev = st.last_timestamp
        for i, ts in enumerate(timestamps):
            if ts is None or isinstance(ts, str):
                continue
            if prev is not None:
                try:
                    backwards = ts < prev
                except TypeError:
                    backwards = False
                if backwards and "order" not in self.store_.warned:
                    self.store_.warned.add("order")
                    warnings.warn(f"timestamps[{i}] = {ts!r} is earlier than the previous "
                                  f"timestamp {prev!r}; StreamingMemory's time is the insertion "
                                  "step, timestamps only label items", UserWarning,
                                  stacklevel=4)
            prev = ts
        st.last_timestamp = prev

    def _check_duplicate_covers(self, covers, steps):
        if covers is None:
            return
        seen = self.store_.seen_covers
        for c, s in zip(covers, steps, strict=True):
            for src in _as_cover_set(c):
                if src in seen and "dup" not in self.store_.warned:
                    self.store_.warned.add("dup")
                    warnings.warn(f"covers id {src!r} of step {s} was already inserted at step "
                                  f"{seen[src]}; both rows are kept (use consolidation='dedup' "
                                  "to merge repeats)", UserWarning, stacklevel=4)
                seen.setdefault(src, s)

    def _add_item(self, step, text, v, toks, cset, session, timestamp):
        st = self.store_
        iid = self.next_id_
        self.next_id_ += 1
        st.step[iid] = step
        st.alive[iid] = True
        st.last_access[iid] = step
        st.texts.append(text)
        st.covers.append(cset)
        st.session.append(session)
        st.timestamp.append(timestamp)
        st.tokens.append(toks)
        st.live[iid] = None
        st._ids = None
        st.by_session_step[(session, step)] = iid
        if v is not None:
            st.V[iid] = v
        if st.bm25 is not None:
            st.bm25.add(toks, doc_id=iid)
        if self.structure == "segment":
            if session not in st.seg_sum:
                st.seg_sum[session] = np.zeros(self.embedding_dim_, dtype=np.float64)
                st.seg_members[session] = {}
            st.seg_sum[session] += v
            st.seg_members[session][iid] = None
        if self.structure == "hnsw":
            self._hnsw_add(iid, v)

    def _hnsw_add(self, iid, v):
        import hnswlib

        st = self.store_
        if st.hnsw is None:
            seed = 100 if self.random_state is None else int(
                check_random_state(self.random_state).randint(2**31 - 1))
            st.hnsw = hnswlib.Index(space="ip", dim=int(self.embedding_dim_))
            st.hnsw_capacity = 64
            st.hnsw.init_index(max_elements=st.hnsw_capacity, M=self.hnsw_m,
                               ef_construction=self.hnsw_ef_construction, random_seed=seed)
        if st.hnsw.get_current_count() >= st.hnsw_capacity:
            st.hnsw_capacity *= 2
            st.hnsw.resize_index(st.hnsw_capacity)
        st.hnsw.add_items(v[None, :].astype(np.float32), np.asarray([iid]))

    def _dedup(self, v, toks, cset):
        st = self.store_
        if not st.live:
            return False
        ids = st.live_ids()
        if v is not None:
            sims = self._dense_scores(v, ids)
        else:
            new = set(toks or ())
            sims = np.empty(len(ids))
            for j, iid in enumerate(ids):
                old = set(st.tokens[iid] or ())
                union = new | old
                sims[j] = len(new & old) / len(union) if union else 1.0
        j = _rank(np.asarray(sims, dtype=np.float64), ids, 1)[0]
        if sims[j] >= self.dedup_threshold:
            iid = ids[j]
            st.covers[iid] = st.covers[iid] | cset
            st.merge_count[iid] += 1
            self.n_merged_ += 1
            return True
        return False

    def _evict_one(self, t):
        st = self.store_
        ids = st.live_ids()
        if self.consolidation == "fifo":
            key = st.step[ids].astype(np.float64)
        elif self.consolidation == "lru":
            key = st.last_access[ids].astype(np.float64)
        else:
            strength = self.decay_halflife * (1.0 + st.n_access[ids]) / math.log(2.0)
            key = np.exp(-(t - st.last_access[ids]) / strength)
        victim = int(ids[np.lexsort((ids, key))[0]])  # smallest key, ties -> oldest
        self._remove(victim)

    def _remove(self, iid):
        st = self.store_
        del st.live[iid]
        st._ids = None
        st.alive[iid] = False
        st.by_session_step.pop((st.session[iid], int(st.step[iid])), None)
        if st.bm25 is not None:
            st.bm25.remove(iid)
        if self.structure == "segment":
            s = st.session[iid]
            st.seg_sum[s] -= st.V[iid]
            del st.seg_members[s][iid]
            if not st.seg_members[s]:
                del st.seg_members[s], st.seg_sum[s]
        if self.structure == "hnsw":
            st.hnsw.mark_deleted(iid)
        self.n_evicted_ += 1

    # ------------------------------------------------------------------ queries
    def _query_inputs(self, X):
        """Validated queries: (texts or None, dense vectors or None)."""
        if self._numeric:
            Q = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
            return [None] * Q.shape[0], _l2_rows(Q)
        texts = check_texts(X, owner="StreamingMemory", allow_empty=True)
        if any(not t.strip() for t in texts) and "empty" not in self.store_.warned:
            warnings.warn("empty query text: every item scores 0 and the newest items are "
                          "returned", UserWarning, stacklevel=3)
        if self.query == "keywords":
            texts = [keyword_text(t, _QUESTION_WORDS) if t.strip() else t for t in texts]
        Q = self._embed(texts) if self.embedder_ is not None and self._needs_vectors() else None
        return texts, Q

    def _dense_scores(self, q, ids):
        # one matrix-vector product over the contiguous block of all ids, then the live ones
        return (self.store_.V[: self.next_id_] @ q.astype(np.float32))[ids]

    def _search_dense(self, q, n):
        st = self.store_
        ids = st.live_ids()
        if self.structure == "hnsw":
            k = min(n, len(ids))
            st.hnsw.set_ef(max(self.hnsw_ef, k))
            labels, dist = st.hnsw.knn_query(q[None, :].astype(np.float32), k=k)
            lab = labels[0].astype(np.int64)
            sc = 1.0 - dist[0].astype(np.float64)
            order = _rank(sc, lab, k)
            return lab[order], sc[order]
        if self.structure == "segment":
            sess = list(st.seg_sum)
            G = _l2_rows(np.stack([st.seg_sum[s] for s in sess]))
            newest = np.asarray([max(st.seg_members[s]) for s in sess])
            pick = _rank(G @ q, newest, self.n_segments)
            ids = np.sort(np.concatenate([np.fromiter(st.seg_members[sess[p]], dtype=np.int64)
                                          for p in pick]))
        sc = self._dense_scores(q, ids).astype(np.float64)
        order = _rank(sc, ids, n)
        return ids[order], sc[order]

    def _search_bm25(self, toks, n):
        st = self.store_
        ids = st.live_ids()
        sc = st.bm25.slot_scores(toks)[ids]  # slot == item id (items are added in id order)
        order = _rank(sc, ids, n)
        return ids[order], sc[order]

    def _prf_terms(self, toks, top_ids):
        st = self.store_
        weights = {}
        qset = set(toks)
        bm = st.bm25 if st.bm25 is not None else IncrementalBM25(self.bm25_k1, self.bm25_b)
        if st.bm25 is None:  # a transient index of the live items for the feedback weights
            for iid in st.live:
                bm.add(st.tokens[iid] or [], doc_id=iid)
        cand = {w for iid in top_ids for w in (st.tokens[iid] or ()) if w not in qset}
        tw = bm.term_weights(sorted(cand))
        top = set(int(i) for i in top_ids)
        for w, (slots, contrib) in tw.items():
            sel = [c for s, c in zip(slots, contrib, strict=True)
                   if bm._ids[s] in top]
            if sel:
                weights[w] = float(np.sum(sel))
        best = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[: self.prf_terms]
        return list(toks) + [w for w, _ in best]

    def _search(self, text, q, n):
        """Ranked (ids, scores, distances) of up to n live items for one formulated query."""
        st = self.store_
        s = self.structure
        if s == "recency":
            ids = st.live_ids()[::-1][:n]
            age = (self.n_inserted_ - 1 - st.step[ids]).astype(np.float64)
            return ids, -age, age
        toks = bm25_tokenize(text) if text is not None and s in _LEXICAL else None
        if self.query == "prf":
            m = self.prf_docs
            if s in _DENSE:
                ids0, _ = self._search_dense(q, m)
                if len(ids0):
                    q = _l2_rows(q + self.prf_weight * st.V[ids0].astype(np.float64).mean(0))
            if s in _LEXICAL:
                ids0, _ = self._search_bm25(toks, m)
                toks = self._prf_terms(toks, ids0)
        if s == "bm25":
            ids, sc = self._search_bm25(toks, n)
            return ids, sc, -sc
        if s == "hybrid":
            depth = max(50, 5 * n)
            d_ids, _ = self._search_dense(q, depth)
            l_ids, _ = self._search_bm25(toks, depth)
            fused = {}
            for lst in (d_ids, l_ids):
                for r, iid in enumerate(lst, start=1):
                    fused[int(iid)] = fused.get(int(iid), 0.0) + 1.0 / (self.rrf_k + r)
            ids = np.fromiter(fused, dtype=np.int64, count=len(fused))
            sc = np.fromiter(fused.values(), dtype=np.float64, count=len(fused))
            order = _rank(sc, ids, n)
            return ids[order], sc[order], -sc[order]
        ids, sc = self._search_dense(q, n)
        return ids, sc, 1.0 - sc

    def _check_queryable(self, n_neighbors):
        check_is_fitted(self, "n_inserted_")
        if not self.store_.live and self.n_inserted_ == 0:
            raise NotFittedError("StreamingMemory is empty: insert rows with partial_fit or "
                                 "fit before querying")
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        if isinstance(k, bool) or not isinstance(k, (Integral, np.integer)) or k < 1:
            raise ValueError(f"n_neighbors must be an int >= 1; got {k!r}")
        return int(k)

    def _warn_padding(self, k, n_items, where):
        if k > n_items:
            warnings.warn(f"{where}: n_neighbors={k} is larger than the {n_items} items in "
                          f"memory; results are padded with id -1", UserWarning, stacklevel=3)

    def kneighbors(self, X=None, n_neighbors=None, return_distance=True):
        """The nearest items of each query (query formulation and structure; no integration).

        Parameters
        ----------
        X : list of str of length n_q, or array-like of shape (n_q, d), default=None
            Queries; None queries every live item with itself excluded.
        n_neighbors : int, default=None
            Items per query; None uses ``self.n_neighbors``.
        return_distance : bool, default=True
            Also return the distances.

        Returns
        -------
        distances : ndarray of float64 of shape (n_q, n_neighbors)
            ``1 - cosine``, ``-score`` or age in steps (see the class description); ``inf``
            where fewer items exist.
        ids : ndarray of int64 of shape (n_q, n_neighbors)
            Item ids, best first; -1 where fewer items exist.

        Raises
        ------
        NotFittedError
            Before any insertion.
        ValueError
            ``n_neighbors`` < 1, a width mismatch or NaN (numeric mode).
        """
        k = self._check_queryable(n_neighbors)
        st = self.store_
        exclude = None
        if X is None:
            live = list(st.live)
            exclude = live
            if self._numeric:
                X = st.V[live].astype(np.float64)
            else:
                X = [st.texts[i] for i in live]
        n_items = len(st.live) - (1 if exclude is not None else 0)
        self._warn_padding(k, n_items, "kneighbors")
        t0 = time.perf_counter_ns()
        texts, Q = self._query_inputs(X)
        n_q = len(texts)
        t_form = (time.perf_counter_ns() - t0) * 1e-9 / max(n_q, 1)
        dist = np.full((n_q, k), np.inf)
        ind = np.full((n_q, k), -1, dtype=np.int64)
        for j in range(n_q):
            t1 = time.perf_counter_ns()
            extra = 1 if exclude is not None else 0
            ids, _, d = self._search(texts[j], None if Q is None else Q[j], k + extra)
            if exclude is not None:
                keep = ids != exclude[j]
                ids, d = ids[keep][:k], d[keep][:k]
            dist[j, : len(ids)] = d
            ind[j, : len(ids)] = ids
            t_search = (time.perf_counter_ns() - t1) * 1e-9
            self._record_query(t_form, t_search, 0.0)
        return (dist, ind) if return_distance else ind

    def _record_query(self, t_form, t_search, t_int):
        lat = self.store_.latency
        lat["query_formulate"].append(t_form)
        lat["query_search"].append(t_search)
        lat["query_integrate"].append(t_int)
        lat["query_total"].append(t_form + t_search + t_int)

    def _integrate(self, ids, scores, k):
        st = self.store_
        budget = self.token_budget

        def ntok(i):
            return len((st.texts[i] or "").split())

        if self.integration == "topk":
            return list(ids[:k]), list(scores[:k])
        if self.integration == "chronological":
            sel = list(zip(ids[:k], scores[:k], strict=True))
            stamps = [st.timestamp[i] for i, _ in sel]
            if _comparable(stamps):
                sel.sort(key=lambda p: (st.timestamp[p[0]], st.step[p[0]]))
            else:
                sel.sort(key=lambda p: st.step[p[0]])
            return [i for i, _ in sel], [s for _, s in sel]
        if self.integration == "token_budget":
            out, sc, used = [], [], 0
            for i, s in zip(ids, scores, strict=True):
                if out and used + ntok(i) > budget:
                    break
                out.append(i)
                sc.append(s)
                used += ntok(i)
            return out, sc
        # neighbors
        out, sc, used = [], [], 0
        for i, s in zip(ids[:k], scores[:k], strict=True):
            group = [i]
            sess, step = st.session[i], int(st.step[i])
            for dstep in (-1, 1):
                nb = st.by_session_step.get((sess, step + dstep))
                if nb is not None and st.alive[nb]:
                    group.append(nb)
            group = [group[0], *sorted(group[1:], key=lambda g: st.step[g])]
            for g in group:
                if g in out:
                    continue
                if out and used + ntok(g) > budget:
                    return out, sc
                out.append(g)
                sc.append(s if g == i else np.nan)
                used += ntok(g)
        return out, sc

    def retrieve(self, X, *, n_neighbors=None, record_access=True):
        """Build the context of each query: formulation, search and integration.

        Parameters
        ----------
        X : list of str of length n_q, or array-like of shape (n_q, d)
            Queries.
        n_neighbors : int, default=None
            k of the search; None uses ``self.n_neighbors``.
        record_access : bool, default=True
            Count an access of every returned item (used by "lru" and "decay"); this is the
            only method that changes the memory.

        Returns
        -------
        results : list of dict
            One per query: ``ids`` (list of int), ``texts``, ``scores`` (NaN for
            neighbours added by "neighbors"), ``covers`` (list of frozenset), ``context``
            (texts joined by newlines) and ``n_tokens`` (whitespace tokens of the context).

        Raises
        ------
        NotFittedError
            Before any insertion.
        """
        k = self._check_queryable(n_neighbors)
        st = self.store_
        self._warn_padding(k, len(st.live), "retrieve")
        t0 = time.perf_counter_ns()
        texts, Q = self._query_inputs(X)
        n_q = len(texts)
        t_form = (time.perf_counter_ns() - t0) * 1e-9 / max(n_q, 1)
        depth = max(k, 50) if self.integration == "token_budget" else k
        now = self.n_inserted_ - 1
        results = []
        for j in range(n_q):
            t1 = time.perf_counter_ns()
            ids, sc, _ = self._search(texts[j], None if Q is None else Q[j], depth)
            t2 = time.perf_counter_ns()
            out, osc = self._integrate(ids, sc, k)
            out = [int(i) for i in out]
            item_texts = [st.texts[i] for i in out]
            context = "\n".join(t for t in item_texts if t is not None)
            results.append({"ids": out, "texts": item_texts,
                            "scores": [float(s) for s in osc],
                            "covers": [st.covers[i] for i in out], "context": context,
                            "n_tokens": len(context.split())})
            if record_access:
                for i in out:
                    st.n_access[i] += 1
                    st.last_access[i] = now
            self._record_query(t_form, (t2 - t1) * 1e-9, (time.perf_counter_ns() - t2) * 1e-9)
        return results

    def predict(self, X):
        """Id of the best item for each query (-1 on an empty memory).

        Parameters
        ----------
        X : list of str of length n_q, or array-like of shape (n_q, d)
            Queries.

        Returns
        -------
        ids : ndarray of int64 of shape (n_q,)
            Best item id per query.
        """
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            ind = self.kneighbors(X, n_neighbors=1, return_distance=False)
        return ind[:, 0]

    def transform(self, X):
        """Sparse k-neighbour graph of distances (the KNeighborsTransformer convention).

        Parameters
        ----------
        X : list of str of length n_q, or array-like of shape (n_q, d)
            Queries.

        Returns
        -------
        graph : sparse matrix of shape (n_q, next_id_)
            CSR; row j holds the distances of query j's ``n_neighbors`` items at their ids.
            Column ``i`` is item id ``i`` (:meth:`get_feature_names_out`:
            ``"streamingmemory{i}"``); the width grows with :meth:`partial_fit`.

        Notes
        -----
        As for :class:`~sklearn.neighbors.KNeighborsTransformer`, the graph is sparse, so
        ``set_output(transform="pandas")`` or ``"polars"`` makes scikit-learn refuse the
        output (a ValueError naming ``set_output``); densify with ``.toarray()`` and label the
        columns with :meth:`get_feature_names_out` instead.
        """
        dist, ind = self.kneighbors(X)
        rows, cols, vals = [], [], []
        for j in range(ind.shape[0]):
            ok = ind[j] >= 0
            rows.extend([j] * int(ok.sum()))
            cols.extend(ind[j, ok].tolist())
            vals.extend(dist[j, ok].tolist())
        return sparse.csr_matrix((vals, (rows, cols)), shape=(ind.shape[0], self.next_id_))

    # ------------------------------------------------------------------ inspection
    @property
    def _n_features_out(self):
        """Columns of :meth:`transform`: one per item id ever created (evicted ones too)."""
        return self.next_id_

    @property
    def n_items_(self):
        check_is_fitted(self, "n_inserted_")
        return len(self.store_.live)

    @property
    def item_ids_(self):
        check_is_fitted(self, "n_inserted_")
        return np.fromiter(self.store_.live, dtype=np.int64, count=len(self.store_.live))

    @property
    def item_step_(self):
        check_is_fitted(self, "n_inserted_")
        return self.store_.step[: self.next_id_].copy()

    @property
    def item_texts_(self):
        check_is_fitted(self, "n_inserted_")
        return list(self.store_.texts)

    @property
    def item_covers_(self):
        check_is_fitted(self, "n_inserted_")
        return list(self.store_.covers)

    @property
    def item_session_(self):
        check_is_fitted(self, "n_inserted_")
        return list(self.store_.session)

    @property
    def item_timestamp_(self):
        check_is_fitted(self, "n_inserted_")
        return list(self.store_.timestamp)

    @property
    def size_bytes_(self):
        check_is_fitted(self, "n_inserted_")
        st = self.store_
        n = 0 if st.V is None else self.n_items_ * st.V.shape[1] * 4
        n += 0 if st.bm25 is None else st.bm25.nbytes()
        n += sum(len(st.texts[i] or "") for i in st.live)
        return int(n)

    @property
    def latency_(self):
        check_is_fitted(self, "n_inserted_")
        return {k: np.asarray(v, dtype=np.float64) for k, v in self.store_.latency.items()}

    def reset_latency(self):
        """Forget the recorded latencies.

        Returns
        -------
        self : StreamingMemory
            The memory.
        """
        check_is_fitted(self, "n_inserted_")
        self.store_.latency = {k: [] for k in self.store_.latency}
        return self

    def latency_summary(self, percentiles=(50, 95, 99)):
        """Latency of every insertion and query stage.

        Parameters
        ----------
        percentiles : sequence of float, default=(50, 95, 99)
            Percentiles to report, in milliseconds.

        Returns
        -------
        summary : DataFrame
            Rows ``insert_embed``, ``insert_unit``, ``insert_index``, ``insert_consolidate``,
            ``insert_total`` (per :meth:`partial_fit` call), ``query_formulate`` (query
            embedding included), ``query_search``, ``query_integrate``, ``query_total`` (per
            query); columns count, total_s, mean_ms and one ``p{q}_ms`` per percentile.
        """
        rows = {}
        for name, vals in self.latency_.items():
            row = {"count": len(vals), "total_s": float(vals.sum()),
                   "mean_ms": float(vals.mean() * 1e3) if len(vals) else np.nan}
            for p in percentiles:
                row[f"p{p:g}_ms"] = float(np.percentile(vals, p) * 1e3) if len(vals) else np.nan
            rows[name] = row
        return pd.DataFrame.from_dict(rows, orient="index")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = True
        tags.transformer_tags.preserves_dtype = []
        if not self._numeric:
            tags.input_tags.two_d_array = False
            tags.input_tags.string = True
        else:
            tags.input_tags.allow_nan = False
        return tags

    @classmethod
    def _get_test_params(cls):
        return [{"embedder": "precomputed"}, {"embedder": "precomputed", "structure": "segment"}]
