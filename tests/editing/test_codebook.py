"""HubnessBalancedCodebook: geometry, scales, gate, chunk invariance, scalings, errors."""

import math
import pickle
import warnings

import numpy as np
import pytest
import torch
from conftest import require_data
from scipy.spatial.distance import cdist
from scipy.special import erfc
from sklearn import config_context
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.pipeline import Pipeline

from sklearn_icml26.datasets import make_edit_stream
from sklearn_icml26.editing import HubnessBalancedCodebook
from sklearn_icml26.editing._index import _ioa, _lens_area, _merge_target
from sklearn_icml26.feature_extraction import SentenceEmbedder
from sklearn_icml26.metrics import hubness_measures

torch.set_num_threads(1)


def _fit(book, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return book.fit(*args, **kwargs)


def _partial(book, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return book.partial_fit(*args, **kwargs)


# -- 1. lens area, IoA and the merging rule ---------------------------------------------------
def test_lens_area_known_values():
    assert _lens_area(0, 1, 1) == pytest.approx(math.pi, abs=1e-12)
    assert _lens_area(3, 1, 1) == 0.0
    assert _lens_area(0.5, 2, 1) == pytest.approx(math.pi, abs=1e-12)  # small disc inside
    assert _lens_area(1, 1, 1) == pytest.approx(2 * math.pi / 3 - math.sqrt(3) / 2, abs=1e-12)
    assert _lens_area(1, 1, 1) == pytest.approx(1.228370, abs=1e-6)
    assert _ioa(0.5, 0.0, 1.0) == 0.0
    # IoA of a small disc inside a large one is 1 from the small side, r^2/R^2 from the other
    assert _ioa(0.1, 0.5, 2.0) == pytest.approx(1.0)
    assert _ioa(0.1, 2.0, 0.5) == pytest.approx(0.0625)


def _reference_area(d, r1, r2):
    """Circle-circle intersection by numerical integration over x (independent formula)."""
    if d >= r1 + r2:
        return 0.0
    if d <= abs(r1 - r2):
        return math.pi * min(r1, r2) ** 2
    x = np.linspace(-r1, d + r2, 200001)
    h1 = np.sqrt(np.clip(r1**2 - x**2, 0, None))
    h2 = np.sqrt(np.clip(r2**2 - (x - d) ** 2, 0, None))
    return float(np.trapezoid(2 * np.minimum(h1, h2), x))


def test_merge_fires_exactly_when_overlap_or_closeness_passes():
    """A grid of (d, r1, r2) against a numerically integrated lens and the written rule."""
    for d in (0.05, 0.3, 0.6, 0.9, 1.4):
        for r1 in (0.5, 1.0):
            for r2 in (0.5, 1.0, 1.5):
                ref = _reference_area(d, r1, r2)
                assert _lens_area(d, r1, r2) == pytest.approx(ref, abs=2e-6)
                ioa12 = ref / (math.pi * r1**2)
                ioa21 = ref / (math.pi * r2**2)
                close = d < 0.1 * r1 and d < 0.1 * r2
                expected = d < r1 + r2 and ((ioa12 > 0.9 and ioa21 > 0.9) or close)
                got = _merge_target(np.array([d]), r1, np.array([r2]), 0.9, 0.1)
                assert (got == 0) == expected, (d, r1, r2, ioa12, ioa21)


def test_merge_rule_through_the_estimator():
    x = np.zeros((1, 2))
    # a second key at distance 0.05 with both radii 1: IoA ~0.97 > 0.9 -> merged
    near = np.array([[0.05, 0.0]])
    book = _fit(HubnessBalancedCodebook(random_state=0), np.vstack([x, near]), radii=[1.0, 1.0],
                values=["alpha", "beta"])
    assert book.n_keys_ == 1 and book.n_merged_ == 1
    assert book.radii_[0] == pytest.approx(1.05)  # max(r_j, d + r)
    assert book.values_ == ["alpha beta"]
    assert book.key_edit_sets_[0] == frozenset({0, 1})
    # distance 0.3 with radii 1: IoA ~0.81 < 0.9 and not within 0.1 r -> two keys
    far = np.array([[0.3, 0.0]])
    book = _fit(HubnessBalancedCodebook(random_state=0), np.vstack([x, far]), radii=[1.0, 1.0])
    assert book.n_keys_ == 2
    # substrings are not appended again; exact duplicates merge at radius 0
    book = _fit(HubnessBalancedCodebook(random_state=0), np.vstack([x, x, x]),
                values=["the answer is 4", "answer is 4", "new"])
    assert book.n_keys_ == 1 and book.values_ == ["the answer is 4 new"]
    assert book.merge_count_.tolist() == [2]
    # merge=False keeps duplicates apart
    book = _fit(HubnessBalancedCodebook(merge=False, random_state=0), np.vstack([x, x]))
    assert book.n_keys_ == 2


# -- 2. sigma and the gate threshold ----------------------------------------------------------
def test_sigma_on_hand_points():
    X = np.array([0, 1, 2, 4, 8, 16], dtype=float)[:, None]
    book = _fit(HubnessBalancedCodebook(hubness_knn=2, random_state=0), X)
    np.testing.assert_allclose(book.sigma_, [1.5, 1, 1.5, 2.5, 5, 10], atol=1e-12)


def _brute_tau(book, X, edit_ids, warmup, p_base):
    """Percentile of the scaled key pairs recomputed from scratch (reasonedit scaling)."""
    D = cdist(X, X)
    n = len(X)
    sig = np.array([np.median(np.sort(np.delete(D[j], j))[: min(book.hubness_knn, n - 1)])
                    for j in range(n)])
    a, b = np.triu_indices(n, 1)
    vals = D[a, b] / (sig[b] + book.eps)
    if warmup == "flat":
        vals = vals[edit_ids[a] != edit_ids[b]]
    n_edits = len(np.unique(edit_ids))
    p = max(p_base, 100 / n_edits) if warmup == "stat" else p_base
    return np.percentile(vals, p)


@pytest.mark.parametrize("warmup", ["stat", "none", "flat"])
def test_threshold_equals_brute_force_percentile(warmup):
    data = make_edit_stream(n_edits=12, n_features=16, hub=False, random_state=0)
    book = _fit(HubnessBalancedCodebook(reject_warmup=warmup, hubness_knn=10, random_state=0),
                data.key_vectors, edit_ids=data.edit_ids)
    tau = _brute_tau(book, data.key_vectors, data.edit_ids, warmup, 1.0)
    assert book.reject_threshold_ == pytest.approx(tau, rel=1e-12)
    assert book.offset_ == -book.reject_threshold_


def test_threshold_exact_when_the_sample_is_full():
    """Sample smaller than the codebook: tau is the percentile over the sampled keys only."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(260, 6))
    book = _fit(HubnessBalancedCodebook(reject_sample=40, reject_percentile=20, random_state=3), X)
    samp = np.sort(book.index_.samp[: book.index_.samp_n])
    assert samp.size == 40
    D = cdist(X[samp], X[samp])
    a, b = np.triu_indices(40, 1)
    tau = np.percentile(D[a, b] / (book.sigma_[samp][b] + book.eps), 20)
    assert book.reject_threshold_ == pytest.approx(tau, rel=1e-12)


@pytest.mark.filterwarnings("ignore:hubness_knn=30")
def test_one_edit_flat_opens_the_gate_with_a_warning():
    X = np.random.default_rng(0).normal(size=(4, 3))
    with pytest.warns(UserWarning, match="rejection gate is open: 1 edit"):
        book = HubnessBalancedCodebook(reject_warmup="flat", random_state=0).fit(
            X, edit_ids=[7, 7, 7, 7])
    assert book.reject_threshold_ == math.inf
    assert (book.predict(X + 100) == 7).all()
    with pytest.warns(UserWarning, match="rejection gate is open: 1 key"):
        HubnessBalancedCodebook(random_state=0).fit(X[:1])


# -- 3. incremental = batch -------------------------------------------------------------------
def _stream_with_merges(seed=0):
    data = make_edit_stream(n_edits=40, n_features=16, random_state=seed)
    rng = np.random.default_rng(seed)
    dup = rng.choice(len(data.key_vectors), 25, replace=False)
    keys = np.vstack([data.key_vectors, data.key_vectors[dup] + 1e-3 * rng.normal(size=(25, 16))])
    edits = np.concatenate([data.edit_ids, np.arange(100, 125)])
    values = data.key_values + [f"extra {i}" for i in range(25)]
    perm = rng.permutation(len(keys))
    return keys[perm], edits[perm], [values[i] for i in perm], data


def _assert_same_book(a, b):
    np.testing.assert_array_equal(a.keys_, b.keys_)
    np.testing.assert_array_equal(a.radii_, b.radii_)
    np.testing.assert_allclose(a.sigma_, b.sigma_, rtol=0, atol=1e-12)
    assert a.values_ == b.values_
    assert a.key_edit_sets_ == b.key_edit_sets_
    assert a.reject_threshold_ == b.reject_threshold_
    assert a.n_edits_ == b.n_edits_ and a.n_merged_ == b.n_merged_


def test_partial_fit_in_any_chunking_equals_fit():
    keys, edits, values, data = _stream_with_merges()
    radii = np.full(len(keys), 0.05)
    queries = np.vstack([data.related, data.unrelated[:100]])
    full = _fit(HubnessBalancedCodebook(random_state=0), keys, edit_ids=edits, values=values,
                radii=radii)
    assert full.n_merged_ >= 20  # the near-duplicates merged
    one = HubnessBalancedCodebook(random_state=0)
    for i in range(len(keys)):
        _partial(one, keys[i:i + 1], edit_ids=edits[i:i + 1], values=values[i:i + 1],
                 radii=radii[i:i + 1])
    cuts = np.sort(np.random.default_rng(5).choice(np.arange(1, len(keys)), 6, replace=False))
    chunked = HubnessBalancedCodebook(random_state=0)
    for part in np.split(np.arange(len(keys)), cuts):
        _partial(chunked, keys[part], edit_ids=edits[part], values=[values[i] for i in part],
                 radii=radii[part])
    for other in (one, chunked):
        _assert_same_book(full, other)
        np.testing.assert_array_equal(full.predict(queries), other.predict(queries))


@pytest.mark.parametrize("embedder", ["hashing_vectorizer", "sentence_embedder"])
def test_partial_fit_equals_fit_for_text_keys_with_word_dropout(embedder):
    texts = [f"{w} question about topic {i % 7} with detail {i}" for i, w in
             enumerate(["what", "who", "where", "when", "why"] * 6)]
    texts += texts[:4]  # exact repeats merge
    if embedder == "sentence_embedder":
        emb = SentenceEmbedder(backend="hashing")
    else:
        emb = HashingVectorizer(n_features=512, alternate_sign=False)
    params = dict(embedder=emb, metric="cosine", n_radius_samples=3, radius_percentile=100,
                  random_state=1)
    full = _fit(HubnessBalancedCodebook(**params), texts)
    # radius 0 only when the dropout kept every (non-stop) word in all three copies
    assert (full.radii_ > 0).mean() > 0.5 and full.n_merged_ >= 4
    chunked = HubnessBalancedCodebook(**params)
    for part in np.array_split(np.arange(len(texts)), 7):
        _partial(chunked, [texts[i] for i in part])
    _assert_same_book(full, chunked)
    queries = ["what question about topic 3", "completely unrelated words here"]
    np.testing.assert_array_equal(full.predict(queries), chunked.predict(queries))
    assert full.retrieve(texts[:1], n_neighbors=1) == [[full.values_[0]]]


# -- 4. scalings against independent references -----------------------------------------------
def _points(seed=0, n=30, q=12, d=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.3, 3, size=(n, 1))  # uneven density
    return X, rng.normal(size=(q, d)) * 2


def _ref_delta(scaling, X, Q, kappa):
    DK = cdist(X, X)
    np.fill_diagonal(DK, np.inf)
    DQ = cdist(Q, X)
    K_sorted = np.sort(DK, axis=1)[:, :-1]  # other keys, ascending (inf last dropped)
    Q_sorted = np.sort(DQ, axis=1)
    if scaling == "local_scaling":
        s_k, s_q = K_sorted[:, kappa - 1], Q_sorted[:, kappa - 1]
        return 1 - np.exp(-DQ**2 / np.outer(s_q, s_k))
    if scaling == "nicdm":
        m_k, m_q = K_sorted[:, :kappa].mean(1), Q_sorted[:, :kappa].mean(1)
        return DQ / np.sqrt(np.outer(m_q, m_k))
    # Gaussian mutual proximity: survival functions written with erfc
    mu_k, sd_k = K_sorted.mean(1), K_sorted.std(1)
    mu_q, sd_q = DQ.mean(1), DQ.std(1)
    sf_q = 0.5 * erfc((DQ - mu_q[:, None]) / (sd_q[:, None] * math.sqrt(2)))
    sf_k = 0.5 * erfc((DQ - mu_k[None, :]) / (sd_k[None, :] * math.sqrt(2)))
    return 1 - sf_q * sf_k


@pytest.mark.parametrize("scaling", ["local_scaling", "nicdm", "mutual_proximity"])
def test_scalings_equal_independent_references(scaling):
    X, Q = _points()
    book = _fit(HubnessBalancedCodebook(scaling=scaling, scaling_k=4, random_state=0), X)
    np.testing.assert_allclose(book.dissimilarity(Q), _ref_delta(scaling, X, Q, 4),
                               rtol=1e-10, atol=1e-12)


def test_reasonedit_scaling_reference_and_kneighbors():
    X, Q = _points(1)
    book = _fit(HubnessBalancedCodebook(hubness_knn=6, random_state=0), X)
    DK = cdist(X, X)
    sig = np.array([np.median(np.sort(np.delete(DK[j], j))[:6]) for j in range(len(X))])
    ref = cdist(Q, X) / (sig + 1e-6)
    np.testing.assert_allclose(book.dissimilarity(Q), ref, rtol=1e-10, atol=1e-12)
    dist, idx = book.kneighbors(Q, n_neighbors=4)
    np.testing.assert_array_equal(idx, np.argsort(ref, axis=1, kind="stable")[:, :4])
    np.testing.assert_allclose(dist, np.sort(ref, axis=1)[:, :4], rtol=1e-10)
    np.testing.assert_allclose(book.score_samples(Q), -ref.min(1), rtol=1e-10)
    # keys against keys: the column key's sigma, diagonal excluded
    full = book.dissimilarity()
    assert np.isinf(np.diag(full)).all()
    off = ~np.eye(len(X), dtype=bool)
    np.testing.assert_allclose(full[off], (DK / (sig + 1e-6))[off], rtol=1e-10)


def test_reasonedit_and_nicdm_rank_a_dense_and_a_sparse_key_differently():
    """One-sided sigma (key scale, exponent 1) against NICDM's sqrt of both scales."""
    X = np.array([[0.0], [0.2], [3.0], [6.0]])  # keys 0/1 dense (0.2 apart), 2/3 sparse
    q = np.array([[1.0]])  # D = 1.0, 0.8, 2.0, 5.0; nearest-key distance 0.8
    re = _fit(HubnessBalancedCodebook(hubness_knn=1, random_state=0), X)
    ni = _fit(HubnessBalancedCodebook(scaling="nicdm", scaling_k=1, random_state=0), X)
    # hand values: sigma = mu = (0.2, 0.2, 2.8, 3.0)
    d_re = re.dissimilarity(q)[0]
    d_ni = ni.dissimilarity(q)[0]
    np.testing.assert_allclose(d_re, [1 / (0.2 + 1e-6), 0.8 / (0.2 + 1e-6),
                                      2 / (2.8 + 1e-6), 5 / (3 + 1e-6)], rtol=1e-12)
    np.testing.assert_allclose(d_ni, [1 / math.sqrt(0.8 * 0.2), 0.8 / math.sqrt(0.8 * 0.2),
                                      2 / math.sqrt(0.8 * 2.8), 5 / math.sqrt(0.8 * 3)],
                               rtol=1e-12)
    # the sparse key 3 comes before the dense key 1 under reasonedit, after it under NICDM
    assert np.argsort(d_re).tolist() == [2, 3, 1, 0]
    assert np.argsort(d_ni).tolist() == [2, 1, 0, 3]


# -- 5. hubness: the planted hub --------------------------------------------------------------
def test_planted_hub_loses_its_k_occurrence_dominance():
    rng = np.random.default_rng(0)
    keys = rng.normal(size=(300, 50))
    keys = np.vstack([keys, keys.mean(axis=0)])
    queries = rng.normal(size=(300, 50))
    plain = _fit(HubnessBalancedCodebook(scaling=None, random_state=0), keys)
    before = hubness_measures(plain.dissimilarity(queries), k=10)
    assert before["k_occurrence"][300] == 300
    assert before["k_skewness"] == pytest.approx(9.81, abs=0.01)
    book = _fit(HubnessBalancedCodebook(random_state=0), keys)
    after = hubness_measures(book.dissimilarity(queries), k=10)
    assert after["k_occurrence"][300] <= 5
    assert after["k_skewness"] < 1.5
    assert after["hub_occurrence"] < before["hub_occurrence"]


# -- 6. the gate --------------------------------------------------------------------------------
@pytest.mark.parametrize("hub", [False, True])
def test_gate_rejects_unrelated_and_accepts_related(hub):
    for seed in range(5):
        data = make_edit_stream(hub=hub, random_state=seed)
        book = _fit(HubnessBalancedCodebook(random_state=seed), data.key_vectors,
                    edit_ids=data.edit_ids, values=data.key_values)
        assert np.mean(book.predict(data.unrelated) == -1) >= 0.99
        assert np.mean(book.predict(data.related) == data.related_edit_ids) >= 0.95
        # a key queried exactly is never rejected
        assert (book.predict(data.key_vectors) >= 0).all()
        assert (book.decision_function(data.key_vectors) >= 0).all()
    open_gate = _fit(HubnessBalancedCodebook(reject_percentile=0, random_state=0), data.key_vectors,
                     edit_ids=data.edit_ids)
    assert (open_gate.predict(data.unrelated) >= 0).all()
    assert open_gate.offset_ == -math.inf


def test_retrieve_values_order_details_and_two_level_filter():
    data = make_edit_stream(n_edits=20, random_state=0)
    book = _fit(HubnessBalancedCodebook(random_state=0), data.key_vectors, edit_ids=data.edit_ids,
                values=data.key_values)
    got = book.retrieve(data.related[:2])
    assert got[0][0] == "edit 0" and len(got[0]) == len(set(got[0]))  # dupes dropped
    assert book.retrieve(data.unrelated[:1]) == [[]]
    det = book.retrieve(data.related[:1], return_details=True)[0]
    assert det["accepted"] and det["values"] == got[0]
    assert det["distances"] == sorted(det["distances"])
    assert det["edit_ids"][0] == 0 and len(det["keys"]) == 5
    assert not book.retrieve(data.unrelated[:1], return_details=True)[0]["accepted"]
    capped = _fit(HubnessBalancedCodebook(cap_edits=1, random_state=0), data.key_vectors,
                  edit_ids=data.edit_ids, values=data.key_values)
    dist, idx = capped.kneighbors(data.related[:4])
    # only the nearest edit's 3 keys are searched; the rest are at infinity
    assert np.isfinite(dist[:, :3]).all() and np.isinf(dist[:, 3:]).all()
    assert (capped.key_edit_ids_[idx[:, 0]] == data.related_edit_ids[:4]).all()
    assert capped.retrieve(data.related[:1]) == [["edit 0"]]


# -- 7. determinism and state -----------------------------------------------------------------
def test_determinism_state_pickle_clone():
    data = make_edit_stream(n_edits=15, random_state=2)
    a = _fit(HubnessBalancedCodebook(random_state=4), data.key_vectors)
    b = _fit(HubnessBalancedCodebook(random_state=4), data.key_vectors)
    assert a.reject_threshold_ == b.reject_threshold_
    c = _fit(HubnessBalancedCodebook(random_state=5, reject_sample=10), data.key_vectors)
    d = _fit(HubnessBalancedCodebook(random_state=6, reject_sample=10), data.key_vectors)
    assert c.reject_threshold_ != d.reject_threshold_  # the sample depends on the seed
    before = pickle.dumps(a.__dict__)
    a.predict(data.related)
    a.kneighbors(data.related)
    a.retrieve(data.related)
    a.dissimilarity()
    assert pickle.dumps(a.__dict__) == before
    restored = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(restored.predict(data.related), a.predict(data.related))
    _partial(restored, data.related[:3])  # a restored codebook keeps growing
    _partial(a, data.related[:3])
    _assert_same_book(restored, a)
    assert not hasattr(clone(a), "keys_")


def test_metadata_routing_through_a_pipeline():
    data = make_edit_stream(n_edits=10, random_state=0)
    with config_context(enable_metadata_routing=True):
        book = HubnessBalancedCodebook(random_state=0).set_fit_request(
            values=True, edit_ids=True, radii=False)
        pipe = Pipeline([("book", book)])
        _fit(pipe, data.key_vectors, values=data.key_values, edit_ids=data.edit_ids + 5)
        assert pipe[-1].values_[0] == "edit 0"
        assert pipe.predict(data.related[:1])[0] == 5


# -- 8. errors and warnings -------------------------------------------------------------------
def test_bad_input_names_the_argument():
    X = np.random.default_rng(0).normal(size=(6, 3))
    book = HubnessBalancedCodebook(random_state=0)
    with pytest.raises(ValueError, match="values must have one entry per row of X"):
        book.fit(X, values=["a", "b"])
    with pytest.raises(ValueError, match="edit_ids must have one entry per row of X"):
        book.fit(X, edit_ids=[0, 1])
    with pytest.raises(ValueError, match="radii must have one entry per row of X"):
        book.fit(X, radii=[0.1])
    with pytest.raises(ValueError, match="edit_ids must be integers >= 0"):
        book.fit(X, edit_ids=[0, 1, 2, 3, 4, -1])
    with pytest.raises(ValueError, match="edit_ids must be integers >= 0"):
        book.fit(X, edit_ids=[0, 1, 2, 3, 4, 1.5])
    with pytest.raises(ValueError, match="radii must be finite and >= 0"):
        book.fit(X, radii=[0.1, 0.1, np.nan, 0.1, 0.1, 0.1])
    with pytest.raises(ValueError, match="radii must be finite and >= 0"):
        book.fit(X, radii=[0.1, -0.1, 0.1, 0.1, 0.1, 0.1])
    with pytest.raises(TypeError, match="values must hold str; element 1"):
        book.fit(X, values=["a", 2, "c", "d", "e", "f"])
    bad = X.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        book.fit(bad)
    with pytest.raises(ValueError, match="0 sample"):
        book.fit(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="radius='augment' needs text keys and an embedder"):
        HubnessBalancedCodebook(radius="augment").fit(X)
    with pytest.raises(ValueError, match="'merge_ioa' parameter"):
        HubnessBalancedCodebook(merge_ioa=0).fit(X)
    with pytest.raises(ValueError, match="'reject_percentile' parameter"):
        HubnessBalancedCodebook(reject_percentile=101).fit(X)
    with pytest.raises(ValueError, match="'dropout' parameter"):
        HubnessBalancedCodebook(dropout=1.0).fit(X)
    with pytest.raises(ValueError, match="'hubness_knn' parameter"):
        HubnessBalancedCodebook(hubness_knn=0).fit(X)
    _fit(book, X)
    with pytest.raises(ValueError, match="X has 2 features, but HubnessBalancedCodebook is "
                                         "expecting 3"):
        book.partial_fit(X[:, :2])
    with pytest.raises(ValueError, match="X has 2 features"):
        book.predict(X[:, :2])
    with pytest.raises(ValueError, match="n_neighbors=7 exceeds the 6 keys"):
        book.kneighbors(X, n_neighbors=7)
    with pytest.raises(ValueError, match="n_neighbors must be an int >= 1"):
        book.retrieve(X, n_neighbors=0)
    with pytest.raises(NotFittedError, match="is empty: call fit or partial_fit"):
        HubnessBalancedCodebook().predict(X)
    with pytest.raises(NotFittedError):
        HubnessBalancedCodebook().retrieve(X)
    emb = HashingVectorizer(n_features=64)
    with pytest.raises(TypeError, match=r"X\[1\] is int; HubnessBalancedCodebook takes str"):
        HubnessBalancedCodebook(embedder=emb).fit(["a b", 3])
    with pytest.raises(TypeError, match="single str"):
        HubnessBalancedCodebook(embedder=emb).fit("a b")


@pytest.mark.filterwarnings("ignore:hubness_knn=30 >= the")
def test_warnings_with_usable_results():
    X = np.random.default_rng(0).normal(size=(6, 3))
    Xz = X.copy()
    Xz[4] = 0.0
    with pytest.warns(UserWarning, match="X has 1 zero-norm row.*row 4.*metric='cosine'"):
        book = HubnessBalancedCodebook(metric="cosine", random_state=0).fit(Xz)
    d = book.dissimilarity(X[:2])
    assert np.isfinite(d).all()
    np.testing.assert_allclose(book._distances(book.keys_[:1])[0, 4], 1.0)
    with pytest.warns(UserWarning, match="hubness_knn=30 >= the 6 keys: sigma uses the 5"):
        HubnessBalancedCodebook(random_state=0).fit(X)
    with pytest.warns(UserWarning, match="n_neighbors=5 exceeds the 3 keys"):
        book = _fit(HubnessBalancedCodebook(random_state=0), X[:3])
        _, idx = book.kneighbors(X[:1])
    assert idx.shape == (1, 3)
    book = _fit(HubnessBalancedCodebook(random_state=0), X)
    with pytest.warns(UserWarning, match="12 of 12 new keys were merged"):
        book.partial_fit(np.vstack([X, X]))
    assert book.n_keys_ == 6 and book.n_merged_ == 12


# -- 9. real data: the LoCoMo proxy on one conversation ---------------------------------------
@pytest.mark.real_data
def test_locomo_conv26_reliability_and_generality_gain():
    require_data("locomo/locomo10.json")
    from sklearn_icml26.datasets import load_locomo
    from sklearn_icml26.editing._demo import _hit, _task

    keys, values, edit_ids, general, _ = _task(load_locomo(), "conv-26")
    emb = SentenceEmbedder(backend="hashing", n_hash_features=1024).fit(["warm up"])
    edit_questions = [keys[np.flatnonzero(edit_ids == e)[0]] for e in np.unique(edit_ids)]
    gen = {}
    for scaling in ("reasonedit", None):
        book = _fit(HubnessBalancedCodebook(embedder=emb, scaling=scaling, reject_percentile=0,
                                            random_state=0), keys, values=values,
                    edit_ids=edit_ids)
        got = book.retrieve([q for q, _ in general])
        gen[scaling] = np.mean([_hit(r, t) for r, (_, t) in zip(got, general, strict=True)])
    book = _fit(HubnessBalancedCodebook(embedder=emb, random_state=0), keys, values=values,
                edit_ids=edit_ids)
    own = [values[np.flatnonzero(edit_ids == e)[0]] for e in np.unique(edit_ids)]
    got = book.retrieve(edit_questions)
    assert np.mean([_hit(r, [v]) for r, v in zip(got, own, strict=True)]) == 1.0
    assert gen["reasonedit"] >= 1.5 * gen[None] > 0


@pytest.mark.parametrize("offset", [1e8, -3e9])
def test_keys_far_from_the_origin_retrieve_their_own_edit(offset):
    # issue 40.3: query distances through |q|^2 + |k|^2 - 2 q.k cancelled for keys offset
    # far from the origin (about 7 % of the keys retrieved their own edit at 1e8)
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(40, 8))
    keys = np.repeat(centres, 3, axis=0) + 0.05 * rng.normal(size=(120, 8))
    edits = np.repeat(np.arange(40), 3)
    near = HubnessBalancedCodebook(random_state=0).fit(keys, edit_ids=edits)
    far = HubnessBalancedCodebook(random_state=0).fit(keys + offset, edit_ids=edits)
    np.testing.assert_array_equal(far.predict(keys + offset), edits)
    np.testing.assert_array_equal(far.predict(centres + offset), near.predict(centres))
    np.testing.assert_allclose(far.decision_function(centres + offset),
                               near.decision_function(centres), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("scaling", ["reasonedit", "local_scaling", "nicdm",
                                     "mutual_proximity", None])
@pytest.mark.parametrize("scale", [1e160, 1e300, 1e-13, 1e-170, 1e-300])
def test_keys_at_extreme_scales_retrieve_their_own_edit(scale, scaling):
    # issue 40.3: near 1e160 the squared distances overflowed (threshold NaN, every query got
    # edit 0); near 1e-13 the absolute duplicate tolerance 1e-12 merged 59 of 60 distinct
    # keys into one (and near 1e-170 the squares underflowed to the same effect)
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(20, 8))
    keys = np.repeat(centres, 3, axis=0) + 0.05 * rng.normal(size=(60, 8))
    edits = np.repeat(np.arange(20), 3)
    params = dict(scaling=scaling, random_state=0)
    if scaling == "reasonedit":
        params["eps"] = 0.0  # eps is in distance units (1e-6 would dominate at 1e-13)
    unit = _fit(HubnessBalancedCodebook(**params), keys, edit_ids=edits)
    book = _fit(HubnessBalancedCodebook(**params), keys * scale, edit_ids=edits)
    assert book.n_keys_ == 60 and book.n_merged_ == 0
    assert np.isfinite(book.reject_threshold_)
    np.testing.assert_array_equal(book.predict(keys * scale), edits)
    np.testing.assert_array_equal(book.predict(centres * scale), np.arange(20))
    np.testing.assert_array_equal(book.predict((centres[:3] + 10.0) * scale), [-1, -1, -1])
    expected = unit.reject_threshold_ * (scale if scaling is None else 1.0)
    assert book.reject_threshold_ == pytest.approx(expected, rel=1e-9)
    np.testing.assert_allclose(book.sigma_, unit.sigma_ * scale, rtol=1e-9)
    np.testing.assert_array_equal(book.kneighbors(centres * scale, return_distance=False),
                                  unit.kneighbors(centres, return_distance=False))


@pytest.mark.parametrize("scale", [1e160, 1e-13])
def test_merging_and_chunking_are_scale_free(scale):
    # radii, duplicates and the closeness/overlap rule in units of the keys: the same merges
    # and the same chunk invariance at 1e160 (disc areas overflowed) and 1e-13
    keys, edits, values, data = _stream_with_merges()
    keys = np.vstack([keys, keys[:5]])  # exact duplicates merge at any scale
    edits, values = np.concatenate([edits, edits[:5]]), values + values[:5]
    radii = np.full(len(keys), 0.05)
    unit = _fit(HubnessBalancedCodebook(random_state=0), keys, edit_ids=edits, values=values,
                radii=radii)
    full = _fit(HubnessBalancedCodebook(random_state=0), keys * scale, edit_ids=edits,
                values=values, radii=radii * scale)
    assert full.n_merged_ == unit.n_merged_ >= 25
    assert full.key_edit_sets_ == unit.key_edit_sets_
    chunked = HubnessBalancedCodebook(random_state=0)
    for part in np.array_split(np.arange(len(keys)), 4):
        _partial(chunked, keys[part] * scale, edit_ids=edits[part],
                 values=[values[i] for i in part], radii=radii[part] * scale)
    _assert_same_book(full, chunked)


def test_duplicate_tolerance_is_relative_to_the_key_norm():
    # floating-point copies of a key far from the origin merge; distinct tiny keys do not
    base = np.array([[1e8, 2e8, 3e8]])
    book = _fit(HubnessBalancedCodebook(random_state=0),
                np.vstack([base, base * (1 + 1e-15), base + [[1.0, 0, 0]]]))
    assert book.n_keys_ == 2 and book.merge_count_.tolist() == [1, 0]
    tiny = np.array([[0.0, 0.0], [1e-13, 0.0], [0.0, 1e-13], [3e-13, 1e-13]])
    assert _fit(HubnessBalancedCodebook(random_state=0), tiny).n_keys_ == 4


@pytest.mark.parametrize("scale", [1e160, 1e-170])
@pytest.mark.parametrize("params", [{"metric": "cosine"}, {"cap_edits": 4, "eps": 0.0}])
def test_cosine_keys_and_edit_filter_at_extreme_scales(scale, params):
    # cosine normalisation (norms overflowed to inf: every key became the zero vector) and
    # the centroid distances of cap_edits at 1e160 and 1e-170
    rng = np.random.default_rng(1)
    centres = rng.normal(size=(20, 8))
    keys = np.repeat(centres, 3, axis=0) + 0.05 * rng.normal(size=(60, 8))
    edits = np.repeat(np.arange(20), 3)
    unit = _fit(HubnessBalancedCodebook(random_state=0, **params), keys, edit_ids=edits)
    book = _fit(HubnessBalancedCodebook(random_state=0, **params), keys * scale,
                edit_ids=edits)
    np.testing.assert_array_equal(book.predict(keys * scale), edits)
    np.testing.assert_allclose(book.decision_function(centres * scale),
                               unit.decision_function(centres), rtol=1e-9)
