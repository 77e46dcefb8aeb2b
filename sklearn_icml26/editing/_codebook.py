"""HubnessBalancedCodebook: ReasonEdit's key-value codebook of edits, retrieval core.

Qiu, Hou, Daneshjou, Alaa, Hartvigsen, "ReasonEdit: Editing Vision-Language Models using Human
Reasoning", ICML 2026, arXiv:2602.02408. ReasonEdit corrects a deployed model without touching
its weights: every user edit becomes key -> value entries of a codebook; at inference the query
is embedded, the values of the nearest keys are retrieved (and prepended to the prompt), and
queries far from every key are left alone. Retrieval works in a "topology-balanced" space:
each key's distance is divided by its local scale (a hubness correction), overlapping keys are
merged, and a rejection gate calibrated on key-key distances switches retrieval off for
unrelated queries.

This module implements that retrieval core over precomputed vectors or embedded text keys;
the vision-language parts of the paper are out of its scope (see the class docstring).
"""

import functools
import math
import time
import warnings
from numbers import Integral, Real

import numpy as np
from scipy import sparse
from scipy.special import ndtr
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import HasMethods, Interval, StrOptions, _fit_context
from ..utils._scaling import _pow2_scale, _robust_mean_std
from ._index import _KeyIndex

__all__ = ["HubnessBalancedCodebook"]

_SCALINGS = ("reasonedit", "local_scaling", "nicdm", "mutual_proximity")
_TINY = np.finfo(np.float64).tiny


def _drop_words(text, rate, rng):
    """Drop each whitespace token with probability ``rate``, keeping at least one."""
    tokens = text.split()
    if not tokens:
        return text
    keep = rng.random(len(tokens)) >= rate
    if not keep.any():
        keep[rng.integers(len(tokens))] = True
    return " ".join(t for t, k in zip(tokens, keep, strict=True) if k)


@functools.lru_cache(maxsize=2)
def _triu(s):
    """Upper-triangle mask and slot pairs i < j (row-major) of an s-slot sample.

    Cached: the sample size changes only while the codebook is smaller than the sample.
    """
    mask = np.triu(np.ones((s, s), dtype=bool), 1)
    ia, ib = np.nonzero(mask)
    for arr in (mask, ia, ib):
        arr.flags.writeable = False
    return mask, ia, ib


def _generator(random_state):
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    return np.random.default_rng(random_state)


def _euclidean(Q, K):
    """Euclidean distances of the rows of ``Q`` to the rows of ``K``, at any scale.

    Distances do not depend on the origin: measured from the keys' centre, the expansion
    ``|q|^2 + |k|^2 - 2 q.k`` does not cancel for keys far from the origin (offset 1e8); on
    values pre-scaled by a power of two (:mod:`sklearn_icml26.utils._scaling`) its squares
    neither overflow (1e160) nor underflow (1e-170), and nothing changes at ordinary scales.
    """
    centre = K.mean(axis=0)
    K, Q = K - centre, Q - centre
    c = _pair_scale(K, Q)
    K, Q = K / c, Q / c
    sq = (np.einsum("ij,ij->i", Q, Q)[:, None] + np.einsum("ij,ij->i", K, K)[None, :]
          - 2 * Q @ K.T)
    return np.sqrt(np.maximum(sq, 0.0)) * c


def _pair_scale(*arrays):
    """One power of two at the order of the largest entry of ``arrays`` (1 if all are 0)."""
    top = max(float(np.max(np.abs(a), initial=0.0)) for a in arrays)
    return float(_pow2_scale(np.array([top])))


def _local_scaling(D, s_a, s_b):
    """``1 - exp(-D^2 / (s_a s_b))`` (floored denominator), squares taken on pre-scaled
    values so that distances near 1e160 do not give inf / inf."""
    c = _pair_scale(D, s_a, s_b)
    Dc = D / c
    return -np.expm1(-(Dc * Dc) / np.maximum((s_a / c) * (s_b / c), _TINY))


def _geometric_mean(a, b):
    """``max(sqrt(a b), tiny)`` without overflow or underflow of the product."""
    c = _pair_scale(a, b)
    return np.maximum(np.sqrt((a / c) * (b / c)) * c, _TINY)


def _check_lengths(name, arr, n):
    if len(arr) != n:
        raise ValueError(f"{name} must have one entry per row of X ({n}); got {len(arr)}")


class HubnessBalancedCodebook(BaseEstimator):
    """Key-value codebook of edits with hubness-balanced retrieval and a locality gate.

    The retrieval core of ReasonEdit [1]_: every edit (a correction with its rationale)
    contributes keys (vectors, or texts embedded by ``embedder``) that map to values (the facts
    to retrieve). A query retrieves the values of its ``n_neighbors`` nearest keys in a
    hubness-balanced dissimilarity, unless it is farther from every key than a threshold
    calibrated on the codebook itself (the locality gate), in which case nothing is retrieved
    and the model being edited answers on its own.

    With ``D`` the distance (Euclidean, or ``1 - cos`` under ``metric="cosine"``, where keys
    are L2-normalised first), the dissimilarity ``delta(q, j)`` of query ``q`` to key ``j`` is

    - ``"reasonedit"`` [1]_: ``D(q, k_j) / (sigma_j + eps)``, ``sigma_j`` the median distance
      of key ``j`` to its ``min(hubness_knn, N - 1)`` nearest other keys (only the key's scale
      enters);
    - ``"local_scaling"`` [2]_: ``1 - exp(-D^2 / (s_q s_j))``, ``s`` the distance to the
      ``scaling_k``-th nearest key (for a key: nearest other key);
    - ``"nicdm"`` [3]_: ``D / sqrt(mu_q mu_j)``, ``mu`` the mean distance to the ``scaling_k``
      nearest keys;
    - ``"mutual_proximity"`` (Gaussian) [2]_: ``1 - SF(D; mu_q, s_q) SF(D; mu_j, s_j)``, ``SF``
      the normal survival function and ``mu``, ``s`` the mean and standard deviation of the
      distances of the point to all (other) keys;
    - ``None``: ``D``.

    With a single key every scaling is ``D``; neighbourhoods shrink to ``N - 1`` (keys) or
    ``N`` (queries) when the codebook is smaller than asked.

    **Radii and merging.** Every key has a radius ``r_j >= 0``: given (``radii`` or a float
    ``radius``) or, for text keys, ``radius_scale`` times the ``radius_percentile`` of the
    Euclidean distances between the key's embedding and the embeddings of
    ``n_radius_samples`` copies of its text with each word dropped with probability
    ``dropout`` (a cheap stand-in for the paper's rephrasing language model). Rows are
    inserted in order; a new key is absorbed by the first existing key ``j`` whose ball it
    overlaps (``d < r + r_j``, ``d`` the Euclidean distance of the stored vectors) if
    ``d < merge_dist_frac * r`` and ``d < merge_dist_frac * r_j``, or if both
    intersection-over-area ratios of the two discs exceed ``merge_ioa``; duplicates
    (``d <= 1e-12 max(|k|, |k_j|)``, relative to the larger key norm) are always absorbed.
    Absorption grows ``r_j`` to ``max(r_j, d + r)``, appends the new value to ``v_j`` unless
    it is already a substring, and adds the edit id to the key's edit set; the key vector does
    not move.

    **Scale.** Distances, norms and running sums are computed on values pre-scaled by powers
    of two (exact), and query distances from the keys' centre: keys near 1e160, 1e-170 or
    offset far from the origin retrieve as they do near the origin at scale 1. ``eps`` and
    ``radius`` are in the units of ``D``.

    **Locality gate.** Each inserted row draws a priority ``u ~ U(0, 1)``; the ``reject_sample``
    keys of smallest priority form a uniform sample that does not depend on how the rows were
    chunked. The threshold ``tau`` is the ``p``-th percentile (linear interpolation) of the
    scaled dissimilarities of the sample's key pairs ``a < b`` (insertion order; under
    ``"reasonedit"`` the later key's scale is used): all pairs with ``p = reject_percentile``
    (``reject_warmup="none"``) or ``p = max(reject_percentile, 100 / n_edits)`` (``"stat"``), or
    only pairs of different edits (``"flat"``). A query is rejected when its smallest
    dissimilarity exceeds ``tau``; ``reject_percentile=0``, or no pair to calibrate on, opens
    the gate.

    ``partial_fit`` inserts more rows; any chunking of the same rows gives the same codebook as
    one ``fit`` (keys, radii, values, scales, threshold), since rows are inserted one by one
    and all randomness comes from one generator advanced in insertion order. With a neural
    embedder, equality holds up to the embedder's own batch-to-batch floating-point noise.

    Not implemented (no vision-language model, rephrasing model or VQA data run offline): the
    paper's patch selection, vision-layer activation keys and the dual
    ``[activation, scaled text]`` key, the modularity-based choice of layer and text scale,
    the LLM rephrase augmenter, and the edit-success metrics on VQA benchmarks.

    Parameters
    ----------
    embedder : None, "auto" or transformer, default=None
        ``None``: ``X`` are vectors of shape (n_samples, n_features). ``"auto"``:
        ``X`` are texts embedded by
        :class:`~sklearn_icml26.feature_extraction.SentenceEmbedder` (MiniLM when installed, a
        hashing embedder otherwise). A transformer with ``fit`` and
        ``transform`` on lists of str: used as is when already fitted, otherwise a clone is
        fitted on the texts of the first call after a reset.
    metric : {"euclidean", "cosine"}, default="euclidean"
        Distance ``D`` of the scalings and the gate. Radii and merging always use the
        Euclidean distance of the stored (under ``"cosine"``: normalised) vectors.
    scaling : {"reasonedit", "local_scaling", "nicdm", "mutual_proximity"} or None, \
            default="reasonedit"
        Hubness correction of ``D`` (formulas above).
    hubness_knn : int, default=30
        Neighbours (other keys) whose median distance is ``sigma_j`` (``"reasonedit"``).
    scaling_k : int, default=5
        Neighbourhood of ``"local_scaling"`` and ``"nicdm"``.
    radius : "auto", "augment" or float, default="auto"
        Key radius: ``"augment"`` (word dropout, text keys only), a constant ``>= 0``, or
        ``"auto"`` (``"augment"`` for text keys, ``0.0`` for vectors: only duplicates merge).
    n_radius_samples : int, default=1
        Augmented copies per text key.
    radius_percentile : float, default=50
        Percentile (0-100) of the augmented distances that sets the radius.
    radius_scale : float, default=1.0
        Factor applied to the augmented radius.
    dropout : float, default=0.2
        Word-dropout probability of the augmentation, in [0, 1).
    merge : bool, default=True
        Whether overlapping keys merge.
    merge_ioa : float, default=0.9
        Intersection-over-area threshold of merging, in (0, 1].
    merge_dist_frac : float, default=0.1
        Distance fraction of the closeness rule of merging.
    reject_percentile : float, default=1.0
        Percentile (0-100) of the key-pair dissimilarities that sets the gate; 0 disables it.
    reject_warmup : {"stat", "none", "flat"}, default="stat"
        Which key pairs calibrate the gate and how (see above).
    reject_sample : int, default=2000
        Size of the uniform key sample the gate is calibrated on.
    n_neighbors : int, default=5
        Keys per retrieval.
    cap_edits : int, default=0
        Two-level retrieval: when positive, only the keys of the ``cap_edits`` edits whose
        centroid (mean of the edit's keys) is nearest, in ``D / (mean sigma + eps)``, are
        searched. 0 searches all keys.
    eps : float, default=1e-6
        Added to ``sigma`` before dividing, in the units of ``D``: lower it for keys whose
        distances are far below 1e-6, or the correction fades to ``D / eps``.
    random_state : int, RandomState instance or None, default=None
        Seeds the gate's priorities and the word dropout.

    Attributes
    ----------
    keys_ : ndarray of shape (n_keys_, n_dims)
        Stored key vectors (L2-normalised under ``metric="cosine"``; a zero vector stays zero).
    radii_ : ndarray of shape (n_keys_,)
        Key radii.
    values_ : list of str
        Value of each key (merged values joined by a space).
    key_edit_ids_ : ndarray of shape (n_keys_,), dtype int64
        Edit id of the row that created each key.
    key_edit_sets_ : list of frozenset
        All edit ids merged into each key.
    merge_count_ : ndarray of shape (n_keys_,), dtype int64
        Rows absorbed by each key.
    n_keys_ : int
        Number of keys.
    n_edits_ : int
        Number of distinct edit ids inserted.
    n_merged_ : int
        Rows absorbed by existing keys.
    sigma_ : ndarray of shape (n_keys_,)
        Median distance of each key to its ``min(hubness_knn, n_keys_ - 1)`` nearest other keys
        (1.0 for a lone key).
    reject_threshold_ : float
        Gate threshold ``tau`` in scaled units (``inf``: gate open).
    offset_ : float
        ``-reject_threshold_``, so that ``decision_function = score_samples - offset_``.
    embedder_ : transformer or None
        The fitted embedder (text keys).
    n_features_in_ : int
        Width of the key vectors (vector keys only).
    fit_time_ : float
        Seconds of the last ``fit``/``partial_fit`` call.
    index_ : object
        The key store that ``partial_fit`` continues: key arrays, sorted nearest-neighbour
        distances, running distance sums, the gate sample and the random stream of the
        insertions (an internal structure; the public views are the attributes above).

    See Also
    --------
    sklearn.neighbors.NearestNeighbors : Plain k-nearest-neighbour search (no gate, no
        hubness correction).
    sklearn_icml26.metrics.hubness_measures : K-occurrence skewness and hub occurrence of a
        dissimilarity (e.g. of :meth:`dissimilarity`).

    Notes
    -----
    Inserting a key costs one distance row to the existing keys, the update of each key's
    sorted nearest-neighbour distances and running distance sums, and one rescaled percentile
    of the gate sample per call, so sequential edits stay cheap.

    References
    ----------
    .. [1] Qiu, Hou, Daneshjou, Alaa, Hartvigsen. "ReasonEdit: Editing Vision-Language Models
       using Human Reasoning", ICML 2026, arXiv:2602.02408.
    .. [2] Schnitzer, Flexer, Schedl, Widmer. "Local and global scaling reduce hubs in space",
       JMLR 13 (2012), 2871-2902.
    .. [3] Feldbauer, Flexer. "A comprehensive empirical comparison of hubness reduction in
       high-dimensional spaces", Knowledge and Information Systems 59 (2019), 137-166.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.editing import HubnessBalancedCodebook
    >>> rng = np.random.default_rng(0)
    >>> centres = rng.normal(size=(20, 8))
    >>> keys = np.repeat(centres, 3, axis=0) + 0.05 * rng.normal(size=(60, 8))
    >>> book = HubnessBalancedCodebook(random_state=0).fit(
    ...     keys, edit_ids=np.repeat(np.arange(20), 3),
    ...     values=[f"fact {e}" for e in np.repeat(np.arange(20), 3)])
    >>> book.predict(centres[:3])
    array([0, 1, 2])
    >>> book.predict(centres[:1] + 10.0)  # far from every key: rejected
    array([-1])
    >>> book.retrieve(centres[:1], n_neighbors=3)
    [['fact 0']]
    """

    _parameter_constraints = {
        "embedder": [None, StrOptions({"auto"}), HasMethods(["fit", "transform"])],
        "metric": [StrOptions({"euclidean", "cosine"})],
        "scaling": [StrOptions(set(_SCALINGS)), None],
        "hubness_knn": [Interval(Integral, 1, None, closed="left")],
        "scaling_k": [Interval(Integral, 1, None, closed="left")],
        "radius": [StrOptions({"auto", "augment"}), Interval(Real, 0, None, closed="left")],
        "n_radius_samples": [Interval(Integral, 1, None, closed="left")],
        "radius_percentile": [Interval(Real, 0, 100, closed="both")],
        "radius_scale": [Interval(Real, 0, None, closed="left")],
        "dropout": [Interval(Real, 0, 1, closed="left")],
        "merge": ["boolean"],
        "merge_ioa": [Interval(Real, 0, 1, closed="right")],
        "merge_dist_frac": [Interval(Real, 0, None, closed="left")],
        "reject_percentile": [Interval(Real, 0, 100, closed="both")],
        "reject_warmup": [StrOptions({"stat", "none", "flat"})],
        "reject_sample": [Interval(Integral, 2, None, closed="left")],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "cap_edits": [Interval(Integral, 0, None, closed="left")],
        "eps": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, embedder=None, *, metric="euclidean", scaling="reasonedit",
                 hubness_knn=30, scaling_k=5, radius="auto", n_radius_samples=1,
                 radius_percentile=50, radius_scale=1.0, dropout=0.2, merge=True,
                 merge_ioa=0.9, merge_dist_frac=0.1, reject_percentile=1.0,
                 reject_warmup="stat", reject_sample=2000, n_neighbors=5, cap_edits=0,
                 eps=1e-6, random_state=None):
        self.embedder = embedder
        self.metric = metric
        self.scaling = scaling
        self.hubness_knn = hubness_knn
        self.scaling_k = scaling_k
        self.radius = radius
        self.n_radius_samples = n_radius_samples
        self.radius_percentile = radius_percentile
        self.radius_scale = radius_scale
        self.dropout = dropout
        self.merge = merge
        self.merge_ioa = merge_ioa
        self.merge_dist_frac = merge_dist_frac
        self.reject_percentile = reject_percentile
        self.reject_warmup = reject_warmup
        self.reject_sample = reject_sample
        self.n_neighbors = n_neighbors
        self.cap_edits = cap_edits
        self.eps = eps
        self.random_state = random_state

    # -- settings of the common tests --
    @classmethod
    def _get_test_params(cls):
        return [{"random_state": 0},
                {"scaling": None, "reject_percentile": 0, "random_state": 0},
                {"scaling": "mutual_proximity", "random_state": 0}]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        text = self.embedder is not None
        tags.input_tags.two_d_array = not text
        tags.input_tags.string = text
        tags.target_tags.required = False
        tags.non_deterministic = False
        return tags

    # -- state --------------------------------------------------------------------------------
    def _reset(self):
        for name in list(vars(self)):
            if name.endswith("_") and not name.startswith("__"):
                delattr(self, name)

    def _new_index(self):
        return _KeyIndex(max(self.hubness_knn, self.scaling_k), self.metric, self.merge,
                         self.merge_ioa, self.merge_dist_frac, self.reject_sample)

    # -- input ---------------------------------------------------------------------------------
    def _text_mode(self):
        return self.embedder is not None

    def _check_texts(self, X, name="X"):
        from ..feature_extraction._embedder import check_texts

        return check_texts(X, name=name, owner=type(self).__name__)

    def _make_embedder(self):
        if self.embedder == "auto":
            from ..feature_extraction import SentenceEmbedder

            return SentenceEmbedder()
        try:
            check_is_fitted(self.embedder)
            return self.embedder
        except NotFittedError:
            return clone(self.embedder)

    def _embed(self, texts, embedder=None):
        embedder = self.embedder_ if embedder is None else embedder
        Z = embedder.transform(texts)
        Z = np.asarray(Z.toarray() if sparse.issparse(Z) else Z, dtype=np.float64)
        if Z.ndim != 2 or Z.shape[0] != len(texts):
            raise ValueError(f"the embedder must map n texts to an (n, d) array; got shape "
                             f"{Z.shape} for {len(texts)} texts")
        if not np.isfinite(Z).all():
            raise ValueError("the embedder returned NaN or inf for some texts")
        return Z

    def _normalise(self, Z, warn_name=None, stacklevel=6):
        if self.metric != "cosine":
            return Z
        # rows pre-scaled by powers of two: norms near 1e160 or 1e-170 neither overflow nor
        # underflow, and nothing changes at ordinary scales (the division is exact)
        Z = Z / _pow2_scale(Z, axis=1)[:, None]
        norms = np.sqrt(np.einsum("ij,ij->i", Z, Z))
        zero = norms == 0
        if zero.any() and warn_name is not None:
            warnings.warn(f"{warn_name} has {int(zero.sum())} zero-norm row(s) (first: row "
                          f"{int(np.flatnonzero(zero)[0])}) under metric='cosine': they have no "
                          f"direction and are kept at cosine distance 1 from everything",
                          UserWarning, stacklevel=stacklevel)
        return Z / np.where(zero, 1.0, norms)[:, None]

    def _query_vectors(self, X):
        check_is_fitted(self, msg=(f"This {type(self).__name__} is empty: call fit or "
                                   f"partial_fit with at least one key before querying it."))
        if self._text_mode():
            Z = self._embed(self._check_texts(X))
        else:
            Z = validate_data(self, X, reset=False, dtype=np.float64)
        return self._normalise(Z, warn_name="X", stacklevel=5)

    # -- fitting -------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, values=None, edit_ids=None, radii=None):
        """Build the codebook from scratch: reset, then insert the rows of ``X`` in order.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or list of n_samples str
            Key vectors, or key texts when ``embedder`` is set.
        y : None
            Ignored.
        values : array-like of shape (n_samples,) of str, default=None
            Value of each key; default the key text (text keys) or ``str(edit_id)``
            (vectors). Metadata routing: ``set_fit_request(values=True)``.
        edit_ids : array-like of shape (n_samples,) of int >= 0, default=None
            Edit each row belongs to; default a new edit per row, numbered after the ones
            already inserted. Metadata routing: ``set_fit_request(edit_ids=True)``.
        radii : array-like of shape (n_samples,) of float >= 0, default=None
            Key radii (override ``radius``). Metadata routing:
            ``set_fit_request(radii=True)``.

        Returns
        -------
        self : HubnessBalancedCodebook
            The fitted codebook.

        Raises
        ------
        ValueError
            If ``X`` is empty, not 2-D (vectors) or holds NaN/inf; ``values``, ``edit_ids``
            or ``radii`` do not have one entry per row; ``edit_ids`` are negative or not
            integers; ``radii`` are negative or NaN; or ``radius="augment"`` with vector keys.
        TypeError
            If a key text or a value is not a str.
        """
        self._reset()
        return self._insert(self._new_index(), X, values, edit_ids, radii)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, *, values=None, edit_ids=None, radii=None):
        """Insert more rows (sequential edits); same result as one ``fit`` on all rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or list of n_samples str
            Key vectors (same width as before), or key texts when ``embedder`` is set.
        y : None
            Ignored.
        values : array-like of shape (n_samples,) of str, default=None
            See :meth:`fit`. Metadata routing: ``set_partial_fit_request(values=True)``.
        edit_ids : array-like of shape (n_samples,) of int >= 0, default=None
            See :meth:`fit`.
        radii : array-like of shape (n_samples,) of float >= 0, default=None
            See :meth:`fit`.

        Returns
        -------
        self : HubnessBalancedCodebook
            The updated codebook.

        Raises
        ------
        ValueError
            As :meth:`fit`, and if the width of ``X`` differs from ``n_features_in_``.
        TypeError
            As :meth:`fit`.
        """
        if not hasattr(self, "n_keys_"):
            self._reset()
        index = self.index_ if hasattr(self, "index_") else self._new_index()
        return self._insert(index, X, values, edit_ids, radii)

    def _prepare(self, index, X, values, edit_ids, radii):
        """Validated key vectors, values, edit ids, radii, priorities and embedder of a chunk."""
        first = index.n_rows == 0
        texts = embedder = None
        if self._text_mode():
            texts = self._check_texts(X)
            if first:
                embedder = self._make_embedder()
                if embedder is not self.embedder:  # a fresh or cloned embedder
                    embedder.fit(texts)
            else:
                embedder = self.embedder_
            Z = self._embed(texts, embedder)
            if index.dim is not None and Z.shape[1] != index.dim:
                raise ValueError(f"the embedder's output width changed: {Z.shape[1]}, "
                                 f"expected {index.dim}")
        else:
            if self.radius == "augment":
                raise ValueError("radius='augment' needs text keys and an embedder; pass "
                                 "radii= or a float")
            Z = validate_data(self, X, reset=first, dtype=np.float64)
        n = Z.shape[0]
        if edit_ids is None:
            edits = np.arange(index.next_edit, index.next_edit + n, dtype=np.int64)
        else:
            raw = np.asarray(edit_ids)
            if raw.ndim != 1:
                raise ValueError(f"edit_ids must be 1-D; got shape {raw.shape}")
            _check_lengths("edit_ids", raw, n)
            if raw.dtype.kind not in "iuf" or (raw.dtype.kind == "f" and not (
                    np.isfinite(raw).all() and np.all(raw == np.round(raw)))):
                raise ValueError(f"edit_ids must be integers >= 0; got dtype {raw.dtype} "
                                 f"(first entries {raw[:3].tolist()})")
            if (raw < 0).any():
                raise ValueError(f"edit_ids must be integers >= 0; got {raw.min()}")
            edits = raw.astype(np.int64)
        if values is None:
            vals = list(texts) if texts is not None else [str(e) for e in edits]
        else:
            if isinstance(values, str):
                raise TypeError("values must be a list of str, one per row of X; got a single "
                                "str")
            vals = list(values.tolist() if hasattr(values, "tolist") else values)
            _check_lengths("values", vals, n)
            for i, v in enumerate(vals):
                if not isinstance(v, str):
                    raise TypeError(f"values must hold str; element {i} is "
                                    f"{type(v).__name__} ({v!r})")
        given_r = None
        if radii is not None:
            given_r = np.asarray(radii, dtype=np.float64).reshape(-1)
            _check_lengths("radii", given_r, n)
            if np.isnan(given_r).any() or (given_r < 0).any() or np.isinf(given_r).any():
                raise ValueError(f"radii must be finite and >= 0; got min {np.nanmin(given_r)}"
                                 f"{' and NaN' if np.isnan(given_r).any() else ''}")
        Z = self._normalise(Z, warn_name="X")
        if index.rng is None:
            index.rng = _generator(self.random_state)
        augment = given_r is None and self._text_mode() and self.radius in ("auto", "augment")
        aug_texts, prio = [], np.empty(n)
        for i in range(n):  # randomness drawn row by row: chunking does not change it
            if augment:
                aug_texts.extend(_drop_words(texts[i], self.dropout, index.rng)
                                 for _ in range(self.n_radius_samples))
            prio[i] = index.rng.random()
        if given_r is not None:
            r = given_r
        elif augment:
            A = self._normalise(self._embed(aug_texts, embedder))
            A = A.reshape(n, self.n_radius_samples, -1)
            gaps = np.sqrt(((A - Z[:, None, :]) ** 2).sum(axis=2))
            r = self.radius_scale * np.percentile(gaps, self.radius_percentile, axis=1)
        else:
            r = np.full(n, 0.0 if self.radius == "auto" else float(self.radius))
        return Z, vals, edits, r, prio, embedder

    def _insert(self, index, X, values, edit_ids, radii):
        start = time.perf_counter()
        Z, vals, edits, r, prio, embedder = self._prepare(index, X, values, edit_ids, radii)
        if index.dim is None:
            index.dim = Z.shape[1]
            index.grow(64)
        merged = 0
        for i in range(Z.shape[0]):
            merged += index.insert(Z[i], vals[i], int(edits[i]), float(r[i]), float(prio[i]))
        index.n_rows += Z.shape[0]
        index.edits_seen.update(edits.tolist())
        index.next_edit = max(index.next_edit, int(edits.max()) + 1)
        if Z.shape[0] >= 10 and merged > 0.1 * Z.shape[0]:
            warnings.warn(f"{merged} of {Z.shape[0]} new keys were merged into existing keys "
                          f"(radii too large?)", UserWarning, stacklevel=4)
        self._publish(index, embedder)
        self.fit_time_ = time.perf_counter() - start
        return self

    def _publish(self, index, embedder):
        self.index_ = index
        n = index.n
        self.keys_ = index.X[:n]
        self.radii_ = index.radii[:n]
        self.values_ = list(index.values)
        self.key_edit_ids_ = index.edit[:n]
        self.key_edit_sets_ = [frozenset(s) for s in index.edit_sets]
        self.merge_count_ = index.mcount[:n]
        self.n_keys_ = n
        self.n_edits_ = len(index.edits_seen)
        self.n_merged_ = int(index.mcount[:n].sum())
        self.embedder_ = embedder
        if n > 1 and self.hubness_knn > n - 1 and not index.noted_knn:
            index.noted_knn = True
            if self.scaling == "reasonedit":
                warnings.warn(f"hubness_knn={self.hubness_knn} >= the {n} keys: sigma uses the "
                              f"{n - 1} other keys (a global scale; the correction is weak)",
                              UserWarning, stacklevel=5)
        index.stats = self._key_stats()
        self.sigma_ = index.stats["sigma"]
        self.reject_threshold_ = self._threshold()
        self.offset_ = -self.reject_threshold_

    # -- scales ----------------------------------------------------------------------------------
    def _key_stats(self):
        n = self.index_.n
        stats = {}
        if n == 1:
            stats["sigma"] = np.ones(1)
            return stats
        kn = self.index_.knn[:n]
        m = min(self.hubness_knn, n - 1)
        stats["sigma"] = np.median(kn[:, :m], axis=1)
        kk = min(self.scaling_k, n - 1)
        stats["s_local"] = kn[:, kk - 1].copy()
        stats["mu_local"] = kn[:, :kk].mean(axis=1)
        # the running sums are in units of the index's power-of-two scale c (no overflow)
        c = self.index_.c
        mu_c = self.index_.sum_d[:n] / (n - 1)
        stats["mu_all"] = mu_c * c
        stats["sd_all"] = np.sqrt(np.maximum(self.index_.sum_d2[:n] / (n - 1) - mu_c * mu_c,
                                             0.0)) * c
        return stats

    def _scale(self, D, cols=None, q_stats=None):
        """Scaled dissimilarity of rows of distances ``D`` (queries) to keys ``cols``."""
        st = self.index_.stats
        if self.scaling is None or self.index_.n == 1:
            return D
        sel = slice(None) if cols is None else cols
        if self.scaling == "reasonedit":
            return D / (st["sigma"][sel] + self.eps)
        if q_stats is None:
            q_stats = self._query_stats(D)
        if self.scaling == "local_scaling":
            return _local_scaling(D, q_stats[0][:, None], st["s_local"][sel][None, :])
        if self.scaling == "nicdm":
            return D / _geometric_mean(q_stats[0][:, None], st["mu_local"][sel][None, :])
        mq, sq = q_stats
        mk, sk = st["mu_all"][sel], st["sd_all"][sel]
        sf_q = ndtr((mq[:, None] - D) / np.maximum(sq, _TINY)[:, None])
        sf_k = ndtr((mk[None, :] - D) / np.maximum(sk, _TINY)[None, :])
        return 1.0 - sf_q * sf_k

    def _query_stats(self, D):
        n = D.shape[1]
        if self.scaling in ("local_scaling", "nicdm"):
            kq = min(self.scaling_k, n)
            part = np.partition(D, kq - 1, axis=1)[:, :kq]
            return (part.max(axis=1),) if self.scaling == "local_scaling" else \
                (part.mean(axis=1),)
        mean, std, _ = _robust_mean_std(D.T, axis=0)  # no overflow of the squares
        return mean, std

    def _threshold(self):
        if self.reject_percentile == 0:
            return math.inf
        s = self.index_.samp_n
        samp = self.index_.samp[:s]
        if s < 2:
            warnings.warn("rejection gate is open: 1 key (no key pair to calibrate it on); "
                          "every query is accepted", UserWarning, stacklevel=6)
            return math.inf
        p = self.reject_percentile
        if self.reject_warmup == "stat":
            p = max(p, 100.0 / self.n_edits_)
        if self.scaling in (None, "reasonedit") and self.reject_warmup != "flat":
            scale = (self.index_.stats["sigma"][samp] + self.eps if self.scaling == "reasonedit"
                     else np.ones(s))
            return self.index_.prefix_threshold(p, scale)
        mask, ia, ib = _triu(s)
        D = self.index_.samp_M[:s, :s][mask]  # slot pairs ia < ib, row-major
        st = {k: v[samp] for k, v in self.index_.stats.items()}
        if self.scaling == "reasonedit" and not bool(np.all(samp[1:] > samp[:-1])):
            # slots left insertion order once the sample was full: the later key of a pair
            # is the one with the larger key index
            later = np.where(samp[ia] < samp[ib], ib, ia)
            vals = self._pair_scaled(D, ia, later, st)
        else:
            vals = self._pair_scaled(D, ia, ib, st)
        if self.reject_warmup == "flat":
            e = self.index_.edit[samp]
            diff = e[ia] != e[ib]
            if not diff.any():
                warnings.warn("rejection gate is open: 1 edit (no key pair of different edits "
                              "to calibrate it on, reject_warmup='flat'); every query is "
                              "accepted", UserWarning, stacklevel=6)
                return math.inf
            vals = vals[diff]
        return float(np.percentile(vals, p))

    def _pair_scaled(self, D, a, b, st=None):
        """Scaled dissimilarity of key pairs (a as the query, b as the key; a earlier)."""
        st = self.index_.stats if st is None else st
        if self.scaling is None:
            return D
        if self.scaling == "reasonedit":
            return D / (st["sigma"] + self.eps)[b]
        if self.scaling == "local_scaling":
            return _local_scaling(D, st["s_local"][a], st["s_local"][b])
        if self.scaling == "nicdm":
            return D / _geometric_mean(st["mu_local"][a], st["mu_local"][b])
        sf_a = ndtr((st["mu_all"][a] - D) / np.maximum(st["sd_all"][a], _TINY))
        sf_b = ndtr((st["mu_all"][b] - D) / np.maximum(st["sd_all"][b], _TINY))
        return 1.0 - sf_a * sf_b

    # -- queries ---------------------------------------------------------------------------------
    def _distances(self, Q):
        K = self.keys_
        if self.metric == "cosine":
            return np.maximum(1.0 - Q @ K.T, 0.0)
        return _euclidean(Q, K)

    def _delta(self, Q):
        return self._scale(self._distances(Q))

    def _edit_filter(self, Q):
        """Mask of the keys of the ``cap_edits`` nearest edits (two-level retrieval)."""
        edits, inv = np.unique(self.key_edit_ids_, return_inverse=True)
        if self.cap_edits <= 0 or self.cap_edits >= edits.size:
            return None
        counts = np.bincount(inv).astype(np.float64)
        C = np.zeros((edits.size, self.index_.dim))
        np.add.at(C, inv, self.keys_)
        C /= counts[:, None]
        sig = np.bincount(inv, weights=self.sigma_) / counts
        if self.metric == "cosine":
            C = self._normalise(C)
            Dc = np.maximum(1.0 - Q @ C.T, 0.0)
        else:
            Dc = _euclidean(Q, C)
        score = Dc / (sig + self.eps)[None, :]
        top = np.argsort(score, axis=1, kind="stable")[:, : self.cap_edits]
        keep_edit = np.zeros_like(score, dtype=bool)
        np.put_along_axis(keep_edit, top, True, axis=1)
        return keep_edit[:, inv]

    def _search(self, X):
        """(delta over all keys, delta restricted to the searched keys) for queries X."""
        Q = self._query_vectors(X)
        D = self._distances(Q)
        delta = self._scale(D)
        searched = delta
        if self.cap_edits > 0:
            mask = self._edit_filter(Q)
            if mask is not None:
                searched = np.where(mask, delta, np.inf)
        return delta, searched

    def _k(self, n_neighbors):
        if n_neighbors is None:
            k = self.n_neighbors
            if k > self.n_keys_:
                warnings.warn(f"n_neighbors={k} exceeds the {self.n_keys_} keys of the "
                              f"codebook; returning {self.n_keys_}", UserWarning, stacklevel=3)
                k = self.n_keys_
            return k
        if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, Integral) or \
                n_neighbors < 1:
            raise ValueError(f"n_neighbors must be an int >= 1; got {n_neighbors!r}")
        if n_neighbors > self.n_keys_:
            raise ValueError(f"n_neighbors={n_neighbors} exceeds the {self.n_keys_} keys of the "
                             f"codebook; ask for at most {self.n_keys_}")
        return int(n_neighbors)

    def score_samples(self, X):
        """Negated smallest scaled dissimilarity of each query to the keys.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), or list of str
            Queries (texts when ``embedder`` is set).

        Returns
        -------
        scores : ndarray of shape (n_queries,)
            ``-min_j delta(q, j)``; larger = closer to the codebook.
        """
        delta, _ = self._search(X)
        return -delta.min(axis=1)

    def decision_function(self, X):
        """Margin of each query inside the locality gate (>= 0: accepted).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), or list of str
            Queries.

        Returns
        -------
        margin : ndarray of shape (n_queries,)
            ``score_samples(X) - offset_ = tau - min_j delta(q, j)`` (``inf`` with the gate
            open).
        """
        return self.score_samples(X) - self.offset_

    def predict(self, X):
        """Edit id of the nearest key of each query, -1 when the gate rejects it.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), or list of str
            Queries.

        Returns
        -------
        edit_ids : ndarray of shape (n_queries,), dtype int64
            ``key_edit_ids_`` of the nearest searched key; -1 for rejected queries.
        """
        delta, searched = self._search(X)
        nearest = np.argmin(searched, axis=1)
        out = self.key_edit_ids_[nearest].astype(np.int64)
        out[delta.min(axis=1) > self.reject_threshold_] = -1
        return out

    def kneighbors(self, X, n_neighbors=None, return_distance=True):
        """Nearest keys of each query in the scaled dissimilarity (no gate).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), or list of str
            Queries.
        n_neighbors : int, default=None
            Keys per query; default ``n_neighbors`` of the constructor (capped at the number
            of keys with a warning). An explicit value larger than ``n_keys_`` is an error.
        return_distance : bool, default=True
            Also return the dissimilarities.

        Returns
        -------
        dissimilarity : ndarray of shape (n_queries, n_neighbors)
            Scaled dissimilarities, ascending (``inf`` for keys outside the ``cap_edits``
            filter). Only when ``return_distance=True``.
        indices : ndarray of shape (n_queries, n_neighbors)
            Key indices (rows of ``keys_``); ties go to the lower index.

        Raises
        ------
        ValueError
            If ``n_neighbors`` is not a positive int or exceeds ``n_keys_``.
        """
        check_is_fitted(self)
        k = self._k(n_neighbors)
        _, searched = self._search(X)
        idx = np.argsort(searched, axis=1, kind="stable")[:, :k]
        if return_distance:
            return np.take_along_axis(searched, idx, axis=1), idx
        return idx

    def retrieve(self, X, *, n_neighbors=None, return_details=False):
        """Values of the nearest keys of each accepted query (what to prepend to a prompt).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), or list of str
            Queries.
        n_neighbors : int, default=None
            Keys per query (see :meth:`kneighbors`).
        return_details : bool, default=False
            Return one dict per query instead of the value lists.

        Returns
        -------
        retrieved : list
            Per query, the values of its nearest keys in order of dissimilarity, duplicates
            dropped; ``[]`` when the gate rejects the query. With ``return_details=True``,
            dicts with ``accepted`` (bool), ``values``, ``keys`` (indices), ``distances``
            (scaled) and ``edit_ids``.
        """
        check_is_fitted(self)
        k = self._k(n_neighbors)
        delta, searched = self._search(X)
        idx = np.argsort(searched, axis=1, kind="stable")[:, :k]
        accepted = delta.min(axis=1) <= self.reject_threshold_
        out = []
        for q in range(idx.shape[0]):
            keys = [int(j) for j in idx[q] if np.isfinite(searched[q, j])] if accepted[q] else []
            vals = list(dict.fromkeys(self.values_[j] for j in keys))
            if return_details:
                out.append({"accepted": bool(accepted[q]), "values": vals, "keys": keys,
                            "distances": [float(searched[q, j]) for j in keys],
                            "edit_ids": [int(self.key_edit_ids_[j]) for j in keys]})
            else:
                out.append(vals)
        return out

    def dissimilarity(self, X=None):
        """Full scaled dissimilarity matrix of queries to keys (for hubness diagnostics).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), list of str, or None, default=None
            Queries; ``None`` gives keys against keys (a key's own neighbourhood statistics
            exclude itself; the diagonal is ``inf``).

        Returns
        -------
        delta : ndarray of shape (n_queries, n_keys_)
            ``delta(q, j)`` of the chosen ``scaling``; no gate, no ``cap_edits`` filter.
        """
        check_is_fitted(self)
        if X is not None:
            return self._delta(self._query_vectors(X))
        n = self.index_.n
        D = self._distances(self.keys_)
        np.fill_diagonal(D, 0.0)
        if self.scaling is None or n == 1:
            out = D.copy()
        else:
            a, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
            out = self._pair_scaled(D, a, b)
        np.fill_diagonal(out, np.inf)
        return out
