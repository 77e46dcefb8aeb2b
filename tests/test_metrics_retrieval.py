"""Ranked-retrieval metrics and LoCoMo F1: hand cases, trec_eval ties, pytrec_eval cross-check."""

import random
import string

import numpy as np
import pytest

from sklearn_icml26.metrics import (
    average_precision_at_k,
    evaluate_retrieval,
    locomo_f1,
    ndcg_at_k,
    oracle_span_f1,
    precision_at_k,
    rank_documents,
    recall_at_k,
    reciprocal_rank_at_k,
)
from sklearn_icml26.metrics._qa import _best_span_f1, _f1_tokens, locomo_tokens

QRELS = {"q1": {"d1": 1, "d3": 1, "d6": 1}, "q2": {"d2": 1}}
RUN = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.7, "d4": 0.6, "d5": 0.5},
       "q2": {"d1": 0.9, "d2": 0.8, "d3": 0.7}}


def test_hand_values():
    r1, r2 = rank_documents(RUN["q1"]), rank_documents(RUN["q2"])
    assert ndcg_at_k(r1, QRELS["q1"], 3) == pytest.approx(0.703918, abs=1e-6)
    assert ndcg_at_k(r2, QRELS["q2"], 3) == pytest.approx(0.630930, abs=1e-6)
    assert average_precision_at_k(r1, QRELS["q1"], 5) == pytest.approx(0.555556, abs=1e-6)
    assert average_precision_at_k(r2, QRELS["q2"], 5) == pytest.approx(0.5)
    assert recall_at_k(r1, QRELS["q1"], 5) == pytest.approx(2 / 3)
    assert recall_at_k(r2, QRELS["q2"], 5) == 1.0
    assert precision_at_k(r1, QRELS["q1"], 5) == pytest.approx(0.4)
    assert precision_at_k(r2, QRELS["q2"], 5) == pytest.approx(0.2)
    assert reciprocal_rank_at_k(r1, QRELS["q1"]) == 1.0
    assert reciprocal_rank_at_k(r2, QRELS["q2"]) == 0.5
    res = evaluate_retrieval(RUN, QRELS, k_values=(3, 5))
    assert res.scores.loc["micro", "ndcg_at_3"] == pytest.approx(0.667424, abs=1e-6)
    assert res.scores.loc["micro", "map_at_5"] == pytest.approx((0.555556 + 0.5) / 2, abs=1e-6)


def test_ties_follow_trec_order():
    # d2/d3/d4 tie: trec_eval orders them by doc id descending, so d4 ranks 2nd
    run = {"d1": 0.9, "d3": 0.5, "d2": 0.5, "d4": 0.5}
    assert rank_documents(run) == ["d1", "d4", "d3", "d2"]
    assert ndcg_at_k(rank_documents(run), QRELS["q1"], 3) == pytest.approx(0.703918, abs=1e-6)


def test_candidates_restrict_and_empty_qrels_dropped():
    run = {"q1": {"x": 1.0, "d1": 0.5}, "q3": {"d1": 1.0}}
    qrels = {"q1": {"d1": 1}, "q3": {}}
    with pytest.warns(UserWarning, match="1 of 2 queries have no relevant"):
        res = evaluate_retrieval(run, qrels, candidates={"q1": ["d1"]}, k_values=(1,))
    assert res.n_dropped_queries == 1
    assert res.per_query.loc["q1", "mrr_at_1"] == 1.0  # "x" is not a candidate
    with pytest.raises(ValueError, match="k must be an int"):
        ndcg_at_k(["a"], {"a"}, k=0)


def test_equals_pytrec_eval_on_random_runs():
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test extra")
    rng = np.random.default_rng(0)
    ks = (1, 3, 5, 10)
    measures = {f"ndcg_cut.{','.join(map(str, ks))}", f"map_cut.{','.join(map(str, ks))}",
                f"recall.{','.join(map(str, ks))}", f"P.{','.join(map(str, ks))}", "recip_rank"}
    run, qrels = {}, {}
    for q in range(200):
        n_docs = int(rng.integers(1, 30))
        docs = [f"d{j}" for j in rng.choice(60, size=n_docs, replace=False)]
        scores = rng.permutation(n_docs) + rng.random()  # tie-free
        run[f"q{q}"] = {d: float(s) for d, s in zip(docs, scores, strict=True)}
        rel = rng.choice(60, size=int(rng.integers(1, 6)), replace=False)
        qrels[f"q{q}"] = {f"d{j}": int(rng.integers(1, 3)) for j in rel}
    ref = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    for q in run:
        ranked = rank_documents(run[q])
        binary = set(qrels[q])
        for k in ks:
            assert abs(ndcg_at_k(ranked, qrels[q], k) - ref[q][f"ndcg_cut_{k}"]) < 1e-9
            assert abs(average_precision_at_k(ranked, binary, k) - ref[q][f"map_cut_{k}"]) < 1e-9
            assert abs(recall_at_k(ranked, binary, k) - ref[q][f"recall_{k}"]) < 1e-9
            assert abs(precision_at_k(ranked, binary, k) - ref[q][f"P_{k}"]) < 1e-9
        assert abs(reciprocal_rank_at_k(ranked, binary) - ref[q]["recip_rank"]) < 1e-9


def test_locomo_f1_rules():
    assert locomo_f1("The sunday before 25 May 2023", "the Sunday before 25 May 2023", 2) == 1.0
    assert locomo_f1("running", "ran", 4) == 0.0  # Porter: run vs ran
    assert locomo_f1("Sweden, Norway", "Sweden, Denmark", 1) == 0.5
    assert locomo_f1("Not mentioned in the conversation", "x", 5) == 1.0
    assert locomo_f1("Paris", "x", 5) == 0.0
    assert locomo_f1("hiking", "hiking; because she likes nature", 3) == 1.0
    with pytest.raises(ValueError, match="category must be one of"):
        locomo_f1("a", "b", 7)


def _brute_span(tokens, gold):
    best = 0.0
    for a in range(len(tokens)):
        for b in range(a, len(tokens)):
            best = max(best, _f1_tokens(tokens[a:b + 1], gold))
    return best


def test_oracle_span_equals_brute_force():
    rng = random.Random(0)
    vocab = list(string.ascii_lowercase[:6])
    for _ in range(200):
        tokens = [rng.choice(vocab) for _ in range(rng.randint(0, 15))]
        gold = [rng.choice(vocab) for _ in range(rng.randint(1, 4))]
        assert _best_span_f1(tokens, gold) == pytest.approx(_brute_span(tokens, gold), abs=1e-12)
    # the public function: best of several texts, mean over comma parts for category 1
    texts = ["Alice went to Sweden last year", "Norway is cold"]
    assert oracle_span_f1(texts, "Sweden, Norway", 1) == 1.0
    assert oracle_span_f1(texts, "Denmark", 4) == 0.0
    assert oracle_span_f1([], "Denmark", 4) == 0.0
    assert locomo_tokens("The shops, running!") == ["shop", "run"]
