"""StreamingMemory: planted facts, exactness, eviction order, dedup, chunking, state, errors."""

import pickle
import warnings

import joblib
import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError

from sklearn_icml26.datasets import make_memory_stream
from sklearn_icml26.feature_extraction import SentenceEmbedder
from sklearn_icml26.memory import StreamingMemory


def _hashing():
    return SentenceEmbedder(backend="hashing")


@pytest.fixture(scope="module")
def stream():
    return make_memory_stream(n_facts=20, n_distractors=120, n_sessions=5, random_state=0)


def _insert_all(mem, s):
    return mem.fit(s.texts, sessions=s.sessions, covers=s.covers)


@pytest.mark.parametrize("structure", ["flat", "hnsw", "bm25", "hybrid", "segment"])
def test_planted_fact_is_retrieved_first(stream, structure):
    if structure == "hnsw":
        pytest.importorskip("hnswlib", reason="structure='hnsw' needs the optional hnswlib")
    s = stream
    mem = StreamingMemory(_hashing(), structure=structure, n_neighbors=3, n_segments=5,
                          random_state=0)
    # interleaved: each question right after its fact arrives
    order = np.argsort(s.query_after)
    pos = 0
    for q in order:
        end = s.query_after[q] + 1
        mem.partial_fit(s.texts[pos:end], sessions=s.sessions[pos:end], covers=s.covers[pos:end])
        pos = end
        res = mem.retrieve([s.queries[q]])[0]
        assert res["covers"][0] == frozenset([s.query_cover[q]])
        assert max(mem.item_step_[res["ids"]]) <= mem.n_inserted_ - 1  # nothing from the future


def test_flat_equals_brute_force_cosine(stream):
    mem = _insert_all(StreamingMemory(_hashing(), n_neighbors=7), stream)
    Z = SentenceEmbedder(backend="hashing").fit(["x"]).transform(stream.texts)
    Q = SentenceEmbedder(backend="hashing").fit(["x"]).transform(stream.queries)
    dist, ind = mem.kneighbors(stream.queries)
    ids = np.arange(len(stream.texts))
    for j, q in enumerate(Q):
        sc = Z @ q
        ref = np.lexsort((-ids, -sc))[:7]  # score desc, ties -> newer item first
        np.testing.assert_array_equal(ind[j], ref)
        np.testing.assert_allclose(dist[j], 1 - sc[ref], atol=1e-6)


def test_hnsw_matches_flat(stream):
    pytest.importorskip("hnswlib", reason="structure='hnsw' needs the optional hnswlib")
    flat = _insert_all(StreamingMemory(_hashing(), n_neighbors=5), stream)
    hnsw = _insert_all(StreamingMemory(_hashing(), structure="hnsw", n_neighbors=5,
                                       random_state=0), stream)
    df, jf = flat.kneighbors(stream.queries)
    dh, jh = hnsw.kneighbors(stream.queries)
    np.testing.assert_array_equal(jf[:, 0], jh[:, 0])  # the planted fact, a unique maximum
    np.testing.assert_allclose(np.sort(df, axis=1), np.sort(dh, axis=1), atol=1e-5)
    # same seed, same result; pickling keeps it (hnswlib index included)
    again = _insert_all(clone(hnsw), stream)
    np.testing.assert_array_equal(again.kneighbors(stream.queries)[1], jh)
    restored = pickle.loads(pickle.dumps(hnsw))
    np.testing.assert_array_equal(restored.kneighbors(stream.queries)[1], jh)


@pytest.mark.parametrize("structure", ["flat", "bm25", "hybrid", "segment", "recency"])
def test_fit_equals_partial_fit_in_chunks(stream, structure):
    s = stream
    one = _insert_all(StreamingMemory(_hashing(), structure=structure, unit="window"), s)
    parts = StreamingMemory(_hashing(), structure=structure, unit="window")
    for lo, hi in [(0, 37), (37, 90), (90, len(s.texts))]:
        parts.partial_fit(s.texts[lo:hi], sessions=s.sessions[lo:hi], covers=s.covers[lo:hi])
    d1, i1 = one.kneighbors(s.queries)
    d2, i2 = parts.kneighbors(s.queries)
    np.testing.assert_array_equal(i1, i2)
    np.testing.assert_allclose(d1, d2, rtol=0, atol=1e-12)
    assert one.item_covers_ == parts.item_covers_


def _eviction_script(policy):
    mem = StreamingMemory(_hashing(), consolidation=policy, capacity=3, decay_halflife=1,
                          n_neighbors=1)
    words = ["apple", "banana", "cherry", "date", "elder", "fig"]
    evicted, live = [], set()
    for step, w in enumerate(words):
        mem.partial_fit([w])
        now = set(mem.item_ids_.tolist())
        evicted += sorted((live | {mem.next_id_ - 1}) - now)
        live = now
        if step == 2:
            assert mem.retrieve(["apple"])[0]["ids"] == [0]  # access item 0 at step 2
        if step == 4:
            assert mem.retrieve(["date"])[0]["ids"] == [3]  # access item 3 at step 4
    return evicted, mem


def test_eviction_order_by_hand():
    # fifo: oldest step each time. lru: last access (= step until accessed) -> 1 at step 3
    # (item 0 was read at step 2), then items 0 and 2 tie at 2 -> the older, 0; then 2.
    # decay with H = 1: retention exp(-(t - last) / ((1 + n) / ln 2)); at step 4 item 2
    # (last 2, never read) 0.25 < item 0 (last 2, read once) 0.5; at step 5 item 0 (0.354)
    # is below item 3 (read at 4: 0.707) and item 4 (0.5).
    assert _eviction_script("fifo")[0] == [0, 1, 2]
    assert _eviction_script("lru")[0] == [1, 0, 2]
    evicted, mem = _eviction_script("decay")
    assert evicted == [1, 2, 0]
    assert mem.n_evicted_ == 3 and mem.n_items_ == 3
    with pytest.raises(ValueError, match=r"consolidation='lru' needs capacity=int >= 1; got"):
        StreamingMemory(_hashing(), consolidation="lru").partial_fit(["a"])


@pytest.mark.parametrize("structure", ["flat", "bm25"])
def test_dedup_merges_exact_repeat_and_is_idempotent(structure):
    mem = StreamingMemory(_hashing(), structure=structure, consolidation="dedup")
    mem.partial_fit(["Anna keeps a violin", "Ben likes tea"], covers=["a", "b"])
    mem.partial_fit(["Anna keeps a violin"], covers=["c"])
    assert mem.n_items_ == 2 and mem.n_merged_ == 1
    assert mem.item_covers_[0] == frozenset({"a", "c"})
    with pytest.warns(UserWarning, match="covers id 'c' of step 3 was already inserted"):
        mem.partial_fit(["Anna keeps a violin"], covers=["c"])
    assert mem.n_items_ == 2 and mem.item_covers_[0] == frozenset({"a", "c"})
    assert mem.item_step_.tolist() == [0, 1]


def test_window_units_cover_rows_within_session():
    texts = ["r0", "r1", "r2", "r3", "r4", "r5"]
    mem = StreamingMemory(_hashing(), unit="window", window_size=3).fit(
        texts, sessions=[0, 0, 0, 0, 1, 1])
    assert mem.item_covers_ == [frozenset(c) for c in
                                ({0}, {0, 1}, {0, 1, 2}, {1, 2, 3}, {4}, {4, 5})]
    assert mem.item_texts_[3] == "r1 r2 r3" and mem.item_texts_[5] == "r4 r5"
    dated = StreamingMemory(_hashing(), unit="dated_turn").fit(["hi"], timestamps=["8 May"])
    assert dated.item_texts_ == ["[8 May] hi"]


def test_integration_modes():
    texts = [f"apple {w} " + "x " * n for w, n in zip("abcdef", [3, 40, 5, 80, 2, 1],
                                                        strict=True)]
    ts = [5, 1, 4, 2, 6, 3]
    kw = dict(embedder=_hashing(), n_neighbors=4)
    warnings.simplefilter("ignore", UserWarning)  # timestamps out of order on purpose
    top = StreamingMemory(**kw).fit(texts, timestamps=ts).retrieve(["apple"])[0]
    chrono = StreamingMemory(integration="chronological", **kw).fit(
        texts, timestamps=ts).retrieve(["apple"])[0]
    assert sorted(chrono["ids"]) == sorted(top["ids"])
    assert [ts[i] for i in chrono["ids"]] == sorted(ts[i] for i in top["ids"])
    for budget in (1, 10, 50, 100):
        res = StreamingMemory(integration="token_budget", token_budget=budget, **kw).fit(
            texts).retrieve(["apple"])[0]
        sizes = [len(texts[i].split()) for i in res["ids"]]
        assert len(res["ids"]) >= 1
        assert res["n_tokens"] <= budget or len(res["ids"]) == 1
        assert res["n_tokens"] == sum(sizes)
    nb = StreamingMemory(embedder=_hashing(), n_neighbors=1, integration="neighbors",
                         token_budget=1000).fit(["one", "two apple", "three", "four"])
    assert nb.retrieve(["apple"])[0]["ids"] == [1, 0, 2]


def test_queries_leave_state_unchanged_and_retrieve_only_touches_access(stream):
    mem = _insert_all(StreamingMemory(_hashing(), structure="hybrid", n_neighbors=3), stream)

    def state(m, skip=()):
        st = {k: v for k, v in vars(m.store_).items() if k not in (*skip, "latency")}
        return joblib.hash(({k: v for k, v in vars(m).items() if k != "store_"}, st))

    before = state(mem)
    mem.kneighbors(stream.queries[:5])
    mem.predict(stream.queries[:5])
    mem.transform(stream.queries[:5])
    assert state(mem) == before
    access = mem.store_.n_access.copy()
    fields = ("n_access", "last_access")
    before_rest = state(mem, skip=fields)
    mem.retrieve(stream.queries[:2])
    assert state(mem, skip=fields) == before_rest and state(mem) != before
    assert mem.store_.n_access.sum() == access.sum() + 6
    lat = mem.latency_summary()
    assert lat.loc["query_total", "count"] == 5 * 3 + 2
    assert lat.loc["insert_total", "count"] == 1


def test_transform_graph_and_self_excluded():
    X = np.eye(4) + 0.01
    mem = StreamingMemory("precomputed", n_neighbors=2).fit(X)
    G = mem.transform(X)
    assert G.shape == (4, 4) and G.nnz == 8
    _, ind = mem.kneighbors()
    assert not np.any(ind == np.arange(4)[:, None])
    np.testing.assert_array_equal(mem.predict(X), np.arange(4))


def test_bad_input_messages():
    emb = _hashing()
    with pytest.raises(TypeError, match=r"X\[1\] is int; StreamingMemory .*takes str"):
        StreamingMemory(emb).fit(["a", 3])
    with pytest.raises(TypeError, match=r"X\[0\] is NoneType"):
        StreamingMemory(emb).fit([None])
    with pytest.raises(ValueError, match="0 sample"):
        StreamingMemory(emb).fit([])
    with pytest.raises(ValueError, match="sessions has 1 entries but X has 2 rows"):
        StreamingMemory(emb).fit(["a", "b"], sessions=[0])
    with pytest.raises(ValueError, match="unit='dated_turn' needs timestamps"):
        StreamingMemory(emb, unit="dated_turn").fit(["a"])
    with pytest.raises(ValueError, match="structure='bm25' needs texts; embedder='precomputed'"):
        StreamingMemory("precomputed", structure="bm25").fit(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        StreamingMemory("precomputed").fit(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError, match="'structure' parameter"):
        StreamingMemory(emb, structure="tree").fit(["a"])
    with pytest.raises(NotFittedError):
        StreamingMemory(emb).kneighbors(["a"])
    mem = StreamingMemory(emb, n_neighbors=3).fit(["a b", "c d"])
    with pytest.warns(UserWarning, match="n_neighbors=3 is larger than the 2 items"):
        dist, ind = mem.kneighbors(["a"])
    assert ind[0, 2] == -1 and np.isinf(dist[0, 2])
    with pytest.raises(ValueError, match="n_neighbors must be an int >= 1"):
        mem.kneighbors(["a"], n_neighbors=0)
    with pytest.warns(UserWarning, match="empty query text"):
        mem.kneighbors([""], n_neighbors=1)
    num = StreamingMemory("precomputed").fit(np.ones((3, 4)))
    with pytest.raises(ValueError, match="X has 3 features, but StreamingMemory is expecting 4"):
        num.kneighbors(np.ones((1, 3)), n_neighbors=1)

    class Wide(BaseEstimator):
        def fit(self, X, y=None):
            self.fitted_ = True
            return self

        def transform(self, X):
            return np.ones((len(X), 3 + len(X)))

    with pytest.raises(ValueError, match="embedder returned 4 columns; this memory holds 5"):
        StreamingMemory(Wide()).fit(["a", "b"]).partial_fit(["c"])
    with pytest.warns(UserWarning, match=r"timestamps\[1\] = 1 is earlier"):
        StreamingMemory(emb).fit(["a", "b"], timestamps=[5, 1])
    with pytest.warns(UserWarning, match="covers id 'x' of step 1 was already inserted"):
        StreamingMemory(emb).fit(["a", "b"], covers=["x", "x"])


@pytest.mark.parametrize("factor", [1e200, 1e-200])
def test_precomputed_vectors_of_extreme_norm_keep_their_direction(factor):
    # issue 40.9: norms above ~1e154 overflowed (and below ~1e-162 underflowed) in the
    # L2 normalisation, which turned every vector into zeros and every query into the newest item
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 6))
    Q = X[[3, 17, 25]] + 0.01 * rng.normal(size=(3, 6))
    plain = StreamingMemory("precomputed", n_neighbors=2).fit(X)
    scaled = StreamingMemory("precomputed", n_neighbors=2).fit(X * factor)
    np.testing.assert_array_equal(scaled.kneighbors(Q * factor, return_distance=False),
                                  plain.kneighbors(Q, return_distance=False))
    assert scaled.kneighbors(Q * factor, return_distance=False)[:, 0].tolist() == [3, 17, 25]


def test_feature_names_and_set_output_follow_the_kneighbors_graph():
    # issue 40.13: no get_feature_names_out / set_output. The columns of transform are item
    # ids (KNeighborsTransformer convention), growing with partial_fit; pandas output of the
    # sparse graph is refused by scikit-learn with a message naming set_output.
    texts = ["Anna keeps a violin in the attic.", "Ben likes tea.", "Carl owns a kayak."]
    mem = StreamingMemory(_hashing(), n_neighbors=2)
    with pytest.raises(NotFittedError):
        mem.get_feature_names_out()
    mem.partial_fit(texts[:2])
    np.testing.assert_array_equal(mem.get_feature_names_out(),
                                  ["streamingmemory0", "streamingmemory1"])
    mem.partial_fit(texts[2:])
    names = mem.get_feature_names_out()
    graph = mem.transform(["Where is the kayak?"])
    assert graph.shape[1] == len(names) == 3
    assert names[graph.indices[graph.data.argmin()]] == "streamingmemory2"  # the kayak
    assert mem.set_output(transform="default") is mem
    mem.set_output(transform="pandas")
    with pytest.raises(ValueError, match="sparse.*set_output"):
        mem.transform(["Where is the kayak?"])
    vec = StreamingMemory(embedder="precomputed", n_neighbors=1).fit(np.eye(4))
    assert vec.get_feature_names_out().tolist() == [f"streamingmemory{i}" for i in range(4)]
