"""GatedMemoryReader: rewards by hand, memory transitions, gradients, planted optimum, baselines."""

import pickle
import warnings

import numpy as np
import pytest
import torch
from joblib import parallel_config
from sklearn import config_context
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import GroupKFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.validation import check_is_fitted

from sklearn_icml26.datasets import make_planted_episodes
from sklearn_icml26.feature_extraction import SentenceEmbedder
from sklearn_icml26.memory import GatedMemoryReader, StreamingMemory
from sklearn_icml26.memory._gated_reader import (
    _check_episodes,
    _init_params,
    _prepare,
    _reward_exit,
    _reward_recall,
    _reward_update,
    _rollouts,
    _State,
    _surrogate_loss,
    _trajectory_rewards,
)
from sklearn_icml26.metrics import oracle_span_f1
from sklearn_icml26.utils._estimator_checks import get_smoke_data

torch.set_num_threads(1)


class _Lookup(TransformerMixin, BaseEstimator):
    """Test embedder: unit 2-d vectors whose cosine with the question "q" is set by hand."""

    def __init__(self, scores=None):
        self.scores = scores

    def fit(self, X, y=None):
        self.fitted_ = True
        return self

    def transform(self, X):
        out = []
        for t in X:
            s = 1.0 if t == "q" else self.scores[t]
            out.append([s, np.sqrt(max(1 - s * s, 0.0))])
        return np.asarray(out)


def _hand_episode(n_chunks=7, per_chunk=2):
    """Chunk t holds turns 'x{t}_{j}' with distinct scores; turn ids (t, j)."""
    rng = np.random.default_rng(3)
    vals = rng.permutation(np.linspace(0.05, 0.95, n_chunks * per_chunk))
    scores, chunks, k = {}, [], 0
    for t in range(n_chunks):
        chunk = []
        for j in range(per_chunk):
            name = f"x{t}_{j}"
            scores[name] = float(vals[k])
            chunk.append(name)
            k += 1
        chunks.append(chunk)
    return {"question": "q", "chunks": chunks}, scores


@pytest.fixture(scope="module")
def planted():
    return (make_planted_episodes(n_episodes=50, n_chunks=12, n_evidence=1, random_state=0),
            make_planted_episodes(n_episodes=60, n_chunks=12, n_evidence=1, random_state=1))


@pytest.fixture(scope="module")
def fitted(planted):
    train, _ = planted
    return GatedMemoryReader(SentenceEmbedder(backend="hashing"), max_iter=60, eval_every=10,
                             random_state=0).fit(train.X, evidence=train.evidence)


# ---------------------------------------------------------------------------- 1. rewards
def test_rewards_by_hand():
    J, T = {2}, 5
    # gated: u = 0, 1, 0, exit at 3
    assert abs(_reward_update([0, 1, 0], 3, J) - 1.0) < 1e-12
    assert abs(_reward_exit(3, 2, T) - 0.666667) < 1e-6
    assert abs(_reward_exit(3, 2, T) - (1 - 1 / 3)) < 1e-12
    # vanilla: always update, read to the end
    assert abs(_reward_update([1] * 5, 5, J) - 0.5) < 1e-12
    assert _reward_exit(5, 2, T) == 0.0
    # exit at once without updating
    assert abs(_reward_update([0], 1, J) - 0.5) < 1e-12
    assert _reward_exit(1, 2, T) == 0.0
    assert _reward_recall([], {"a"}) == 0.0
    # oracle: update only at 2, exit at 2
    assert abs(_reward_update([0, 1], 2, J) - 1.0) < 1e-12
    assert _reward_exit(2, 2, T) == 1.0
    # evidence in the last chunk: reading to the end is the right exit
    assert _reward_exit(5, 5, 5) == 1.0
    # no evidence-free chunk read: second ratio is 1
    assert abs(_reward_update([0], 1, {1}) - 0.5 * (0 + 1)) < 1e-12
    assert abs(_reward_update([1, 0], 2, {1, 2}) - 0.5 * (0.5 + 1)) < 1e-12
    assert _reward_recall(["a", "z"], {"a", "b"}) == 0.5


def test_oracle_f1_reward_is_the_oracle_span_of_the_memory():
    ep = {"question": "Where does Ana keep the kite?",
          "chunks": [["Ana keeps a kite in the attic.", "Ben likes drums."],
                     ["Cleo likes kites near the barn."]]}
    emb = SentenceEmbedder(backend="hashing").fit(["x"])
    (e,) = _prepare(_check_episodes([ep]), emb, 2, [{(0, 0)}], ["the attic"])
    s = _State(e)
    s.set_memory([0, 1, 2])
    s.u, s.tau = [1, 1], 2
    r_out, _, _ = _trajectory_rewards(s, "oracle_f1")
    texts = [e.item_text[k] for k in [0, 1, 2]]
    assert r_out == oracle_span_f1(texts, "the attic", 4)
    assert r_out == 1.0  # "attic" (articles dropped) is a span of the first turn


# ---------------------------------------------------------------------------- 2. transitions
@pytest.mark.parametrize("memory_policy", ["score", "fifo"])
def test_memory_transitions_on_a_14_item_script(memory_policy):
    ep, scores = _hand_episode()
    reader = GatedMemoryReader(_Lookup(scores), n_slots=10, memory_policy=memory_policy)
    (tr,) = reader.read([ep], policy="vanilla")
    written = [(t, j) for t in range(7) for j in range(2)]  # write_size 2 = whole chunk
    if memory_policy == "score":
        expected = sorted(written, key=lambda d: -scores[f"x{d[0]}_{d[1]}"])[:10]
    else:
        expected = written[-10:]
        expected = sorted(expected, key=lambda d: -scores[f"x{d[0]}_{d[1]}"])
    assert tr["memory"]["ids"] == expected
    assert tr["tau"] == 7 and all(tr["u"])
    # scores come back in memory order, best first
    assert tr["memory"]["scores"] == sorted(tr["memory"]["scores"], reverse=True)
    np.testing.assert_allclose(tr["memory"]["scores"],
                               [scores[f"x{t}_{j}"] for t, j in expected])


def test_write_size_picks_the_best_turns_of_a_chunk():
    ep, scores = _hand_episode(n_chunks=3, per_chunk=4)
    reader = GatedMemoryReader(_Lookup(scores), n_slots=10, write_size=1)
    (tr,) = reader.read([ep], policy="vanilla")
    best = [max(range(4), key=lambda j: scores[f"x{t}_{j}"]) for t in range(3)]
    assert sorted(tr["memory"]["ids"]) == [(t, best[t]) for t in range(3)]


def test_closed_update_gate_keeps_memory_and_exit_stops(planted):
    train, _ = planted
    X, ev = train.X[:5], train.evidence[:5]
    reader = GatedMemoryReader(SentenceEmbedder(backend="hashing"))
    traces = reader.read(X, policy="oracle_gates", evidence=ev)
    for tr, chunks in zip(traces, train.evidence_chunks[:5], strict=True):
        j = chunks[0]
        assert tr["tau"] == j == len(tr["u"]) == len(tr["memory_ids"])
        assert tr["u"] == [t == j for t in range(1, j + 1)]
        for t in range(1, j):  # u = 0: memory unchanged (empty before the evidence chunk)
            assert tr["memory_ids"][t - 1] == []
        assert tr["e"][-1] and not any(tr["e"][:-1])


def test_transform_row_is_chunks_read_updates_and_fraction(fitted, planted):
    _, test = planted
    Z = fitted.transform(test.X[:8])
    traces = fitted.read(test.X[:8])
    for row, tr in zip(Z, traces, strict=True):
        np.testing.assert_array_equal(row, [tr["tau"], 12, sum(tr["u"]), tr["tau"] / 12])
    assert list(fitted.get_feature_names_out()) == ["chunks_read", "n_chunks", "n_updates",
                                                    "fraction_read"]


# ---------------------------------------------------------------------------- 3. gradients
def test_autograd_gradient_matches_finite_differences_and_sampling_probabilities(planted):
    train, _ = planted
    emb = SentenceEmbedder(backend="hashing").fit(["x"])
    eps = _prepare(_check_episodes(train.X[:3]), emb, 2, train.evidence[:3])
    rng = np.random.default_rng(0)
    P = _init_params(np.random.RandomState(0), 8, -1.0)
    for k in ("w_u", "w_e"):
        P[k] = rng.normal(size=8)
    P["v"] = np.asarray(0.3)
    mean, scale = rng.normal(size=6) * 0.1, 0.5 + rng.random(6)
    states, rows = _rollouts(eps, P, mean, scale, K=10, fifo=False, policy="learned",
                             gates="both", rng=rng, group_size=4, record=True)
    adv = rng.normal(size=len(states))
    # the loss sees the probabilities the rollout sampled from
    pu_rollout = np.concatenate([s.pu for s in states])
    T = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in P.items()}
    loss, _ = _surrogate_loss(T, rows, adv, len(states), mean, scale, 0.05, torch)
    grads = torch.autograd.grad(loss, list(T.values()))
    # recompute probabilities in torch
    (Phi_u, U, tu), _ = rows
    Z = torch.as_tensor(Phi_u).clone()
    Z[:, :6] = (Z[:, :6] - torch.as_tensor(mean)) / torch.as_tensor(scale)
    pu = torch.sigmoid(torch.tanh(Z @ T["A"].T + T["a"]) @ T["w_u"] + T["b_u"])
    assert len(pu) == len(pu_rollout)
    np.testing.assert_allclose(np.sort(pu.detach().numpy()), np.sort(pu_rollout), rtol=1e-10)
    h = 1e-6
    for (name, t), g in zip(T.items(), grads, strict=True):
        flat = t.detach().numpy().ravel()
        for idx in range(0, flat.size, max(1, flat.size // 7)):
            def f(delta, name=name, idx=idx):
                Q = {k: v.detach().clone() for k, v in T.items()}
                Q[name].view(-1)[idx] += delta
                return float(_surrogate_loss(Q, rows, adv, len(states), mean, scale, 0.05,
                                             torch)[0])
            fd = (f(h) - f(-h)) / (2 * h)
            np.testing.assert_allclose(g.view(-1)[idx].item(), fd, rtol=1e-4, atol=1e-8,
                                       err_msg=f"{name}[{idx}]")


# ---------------------------------------------------------------------------- 4. planted optimum
def test_oracle_gates_are_optimal_on_planted_episodes(planted):
    train, _ = planted
    reader = GatedMemoryReader(SentenceEmbedder(backend="hashing"))
    traces = reader.read(train.X, policy="oracle_gates", evidence=train.evidence)
    for tr, ev, chunks in zip(traces, train.evidence, train.evidence_chunks, strict=True):
        assert _reward_update(tr["u"], tr["tau"], set(chunks)) == 1.0
        assert _reward_exit(tr["tau"], max(chunks), 12) == 1.0
        assert _reward_recall(tr["memory"]["ids"], ev) == 1.0


def test_learned_gates_write_on_evidence_and_exit_right_after(fitted, planted):
    _, test = planted
    traces = fitted.read(test.X)
    tau = np.array([t["tau"] for t in traces])
    j_star = np.array([max(c) for c in test.evidence_chunks])
    recall = fitted.score(test.X, evidence=test.evidence)
    assert recall >= 0.9
    assert np.mean(tau - j_star) <= 1.0
    assert np.mean(tau < j_star) <= 0.10
    # far fewer chunks than the ungated loop (12 per episode); the optimum reads mean(j*)
    assert tau.mean() <= min(0.7 * 12, j_star.mean() + 1)
    # the update gate opens on the evidence chunk, not everywhere
    n_upd = np.array([sum(t["u"]) for t in traces])
    assert np.mean(n_upd) <= 3
    assert fitted.best_step_ > 0
    assert max(fitted.validation_scores_) > fitted.validation_scores_[0]


def test_evidence_in_the_first_chunk_exits_at_once(fitted, planted):
    _, test = planted
    i = next(k for k, c in enumerate(test.evidence_chunks) if c[0] > 1)
    ep = dict(test.X[i])
    t = test.evidence_chunks[i][0] - 1
    chunks, ids = list(ep["chunks"]), list(ep["turn_ids"])
    chunks[0], chunks[t] = chunks[t], chunks[0]
    ids[0], ids[t] = ids[t], ids[0]
    ep.update(chunks=chunks, turn_ids=ids)
    (tr,) = fitted.read([ep])
    assert tr["tau"] in (1, 2)
    assert tr["u"][0]
    assert set(tr["memory"]["ids"]) >= test.evidence[i]


def test_no_future_leakage(fitted, planted):
    _, test = planted
    traces = fitted.read(test.X[:10])
    changed = []
    for ep, tr in zip(test.X[:10], traces, strict=True):
        new = dict(ep)
        tau = tr["tau"]
        # rewrite every chunk after the exit (here: to copies of the question)
        new["chunks"] = ep["chunks"][:tau] + [[ep["question"]] * len(c)
                                               for c in ep["chunks"][tau:]]
        changed.append(new)
    for a, b in zip(traces, fitted.read(changed), strict=True):
        assert a["tau"] == b["tau"]
        assert a["u"] == b["u"] and a["e"] == b["e"]
        assert a["memory_ids"] == b["memory_ids"]
        np.testing.assert_array_equal(a["p_update"], b["p_update"])


# ---------------------------------------------------------------------------- 5. baselines
def test_baselines(planted, fitted):
    train, test = planted
    emb = SentenceEmbedder(backend="hashing")
    reader = GatedMemoryReader(emb, n_slots=5)
    van = reader.read(test.X[:10], policy="vanilla")
    assert all(t["tau"] == 12 and sum(t["u"]) == 12 for t in van)
    ox = reader.read(test.X[:10], policy="oracle_exit", evidence=test.evidence[:10])
    assert [t["tau"] for t in ox] == [max(c) for c in test.evidence_chunks[:10]]
    assert all(all(t["u"]) for t in ox)
    upd = GatedMemoryReader(emb, gates="update", max_iter=3, batch_size=8, group_size=4,
                            random_state=0).fit(train.X[:20], evidence=train.evidence[:20])
    assert all(t["tau"] == 12 and not any(t["e"][:-1]) for t in upd.read(test.X[:10]))
    ret = reader.read(test.X[:3], policy="retrieval")
    for ep, tr in zip(test.X[:3], ret, strict=True):
        turns = [x for c in ep["chunks"] for x in c]
        ids = [d for r in ep["turn_ids"] for d in r]
        mem = StreamingMemory(SentenceEmbedder(backend="hashing"), structure="flat",
                              n_neighbors=5).fit(turns)
        ref = [ids[i] for i in mem.kneighbors([ep["question"]], return_distance=False)[0]]
        assert tr["memory"]["ids"] == ref and tr["tau"] == 12


# ---------------------------------------------------------------------------- 6. determinism
def test_same_seed_same_result_and_n_jobs(planted):
    train, test = planted
    kw = dict(max_iter=6, batch_size=8, group_size=4, eval_every=3)
    a = GatedMemoryReader(SentenceEmbedder(backend="hashing"), random_state=1, **kw)
    b = GatedMemoryReader(SentenceEmbedder(backend="hashing"), random_state=1, n_jobs=2, **kw)
    c = GatedMemoryReader(SentenceEmbedder(backend="hashing"), random_state=2, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for r in (a, b, c):
            r.fit(train.X[:20], evidence=train.evidence[:20])
    for k in a.params_:
        np.testing.assert_array_equal(a.params_[k], b.params_[k])
    assert not np.array_equal(a.params_["A"], c.params_["A"])
    np.testing.assert_array_equal(a.training_log_.to_numpy(), b.training_log_.to_numpy())
    assert a.loss_curve_ == b.loss_curve_ and a.validation_scores_ == b.validation_scores_
    with parallel_config(backend="threading"):  # n_jobs=2 without spawning processes
        np.testing.assert_array_equal(a.predict(test.X), b.predict(test.X))
        np.testing.assert_array_equal(a.transform(test.X), b.transform(test.X))


# ---------------------------------------------------------------------------- 7. sklearn
def test_clone_pickle_params_and_routing(fitted, planted):
    train, test = planted
    assert not hasattr(GatedMemoryReader(), "params_")
    assert vars(GatedMemoryReader()).keys() == GatedMemoryReader().get_params().keys()
    c = clone(fitted)
    assert c.get_params()["max_iter"] == 60 and not hasattr(c, "params_")
    with pytest.raises(NotFittedError):
        check_is_fitted(c)
    c.set_params(n_slots=3)
    assert c.n_slots == 3
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.predict(test.X), fitted.predict(test.X))
    assert fitted.predict(test.X).dtype == object
    assert np.all(fitted.predict(test.X) != "")
    kw = dict(max_iter=2, batch_size=4, group_size=2)
    X, ev = train.X[:18], train.evidence[:18]
    groups = np.repeat([0, 1, 2], 6)
    with config_context(enable_metadata_routing=True), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reader = GatedMemoryReader(SentenceEmbedder(backend="hashing"), random_state=0, **kw)
        reader.set_fit_request(evidence=True).set_score_request(evidence=True)
        pipe = make_pipeline(FunctionTransformer(), reader).fit(X, evidence=ev)
        assert pipe[-1].n_train_episodes_ + pipe[-1].n_valid_episodes_ == 18
        res = cross_validate(reader, X, params={"evidence": ev, "groups": groups},
                             cv=GroupKFold(3))
        assert np.all((res["test_score"] >= 0) & (res["test_score"] <= 1))


# ---------------------------------------------------------------------------- 8. errors
def test_errors_and_warnings(planted):
    train, _ = planted
    X, ev = train.X[:6], train.evidence[:6]
    emb = SentenceEmbedder(backend="hashing")
    r = GatedMemoryReader(emb, max_iter=1, batch_size=2, group_size=2)
    with pytest.raises(ValueError, match="X is empty"):
        r.fit([], evidence=[])
    with pytest.raises(ValueError, match="has no 'question'"):
        r.fit([{"chunks": [["a"]]}], evidence=[{(0, 0)}])
    bad = dict(X[0], chunks=[list(c) for c in X[0]["chunks"]])
    bad["chunks"][7] = []
    with pytest.raises(ValueError, match=r"X\[0\]\['chunks'\]\[7\] is empty"):
        r.fit([bad], evidence=ev[:1])
    with pytest.raises(ValueError, match="turn_ids.*shape"):
        r.fit([dict(X[0], turn_ids=X[0]["turn_ids"][:-1])], evidence=ev[:1])
    with pytest.raises(ValueError, match="fit needs evidence="):
        r.fit(X)
    with pytest.raises(ValueError, match="evidence has 2 entries"):
        r.fit(X, evidence=ev[:2])
    with pytest.raises(ValueError, match="no episode has an evidence id"):
        r.fit(X, evidence=[{"nope"}] * 6)
    with pytest.warns(UserWarning, match="1 of 6 episodes have no evidence"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            r.fit(X, evidence=[{"nope"}, *ev[1:]])
    with pytest.raises(ValueError, match="oracle_f1.*needs the gold answers"):
        clone(r).set_params(reward="oracle_f1").fit(X, evidence=ev)
    with pytest.raises(ValueError, match="needs evidence="):
        r.read(X, policy="oracle_exit")
    with pytest.raises(ValueError, match="policy must be one of"):
        r.read(X, policy="psychic")
    with pytest.raises(ValueError, match="memory_policy"):
        clone(r).set_params(memory_policy="lifo").fit(X, evidence=ev)
    with pytest.warns(UserWarning, match="batch_size=16 exceeds the 5 training episodes"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clone(r).set_params(batch_size=16).fit(X, evidence=ev)
    with pytest.raises(ValueError, match="need >= 2"):
        clone(r).set_params(batch_size=16).fit(X[:2], evidence=ev[:2])
    with pytest.raises(ValueError, match="group_size must be >= 2"):
        clone(r).set_params(group_size=1).fit(X, evidence=ev)
    with pytest.raises(TypeError, match=r"X\[0\]\['question'\] is int"):
        r.fit([dict(X[0], question=3)], evidence=ev[:1])
    with pytest.raises(TypeError, match=r"X\[0\]\['chunks'\]\[0\]\[1\] is NoneType"):
        r.fit([dict(X[0], chunks=[["a", None], *X[0]["chunks"][1:]])], evidence=ev[:1])
    with pytest.raises(NotFittedError):
        GatedMemoryReader(emb).predict(X)
    with pytest.raises(NotFittedError):
        GatedMemoryReader(emb).read(X)
    # the vanilla and oracle policies read unfitted
    assert len(GatedMemoryReader(emb).read(X, policy="oracle_exit", evidence=ev)) == 6


def test_closed_update_gate_warns_and_stays_usable(planted):
    train, test = planted
    # max_iter=0: the initial update gate sits at 1/2, which the greedy rule (> 1/2) closes
    r = GatedMemoryReader(SentenceEmbedder(backend="hashing"), max_iter=0, exit_bias_init=0.0,
                          batch_size=8, random_state=0)
    with pytest.warns(ConvergenceWarning, match="update gate closed on all validation chunks"):
        r.fit(train.X[:10], evidence=train.evidence[:10])
    assert r.best_step_ == 0
    assert list(r.predict(test.X[:3])) == ["", "", ""]
    assert np.all(r.transform(test.X[:3])[:, 2] == 0)


def test_smoke_data_shape():
    X, y = get_smoke_data(GatedMemoryReader)
    r = GatedMemoryReader(**GatedMemoryReader._get_test_params()[0]).fit(X)
    pred = r.predict(X)
    assert pred.shape == (6,)
    # each prediction is a turn of its own episode (or "" for an empty memory)
    for text, episode in zip(pred, X, strict=True):
        assert text == "" or any(text in chunk for chunk in episode["chunks"])


# ---------------------------------------------------------------------------- 9. real data
@pytest.mark.real_data
def test_locomo_episodes_and_data_anchors():
    from conftest import require_data

    from sklearn_icml26.datasets import load_locomo, make_locomo_episodes

    require_data("locomo/locomo10.json")
    data = load_locomo()
    train = make_locomo_episodes(data, conversations=["conv-26", "conv-30", "conv-41",
                                                      "conv-42", "conv-43", "conv-44",
                                                      "conv-47"])
    test = make_locomo_episodes(data, conversations=["conv-48", "conv-49", "conv-50"])
    assert len(train.X) == 1033 and len(test.X) == 503
    assert abs(test.n_chunks.mean() - 28.45) < 0.005
    reader = GatedMemoryReader(SentenceEmbedder(backend="hashing"))
    ox = reader.read(test.X, policy="oracle_exit", evidence=test.evidence)
    assert abs(np.mean([t["tau"] for t in ox]) - 15.66) < 0.005
    van = reader.read(test.X, policy="vanilla")
    recall = np.mean([_reward_recall(t["memory"]["ids"], e)
                      for t, e in zip(van, test.evidence, strict=True)])
    assert abs(recall - 0.315) <= 0.001
    win = make_locomo_episodes(data, conversations=["conv-48"], chunking="window",
                               window_size=10)
    assert all(len(c) == 10 for c in win.X[0]["chunks"][:-1])
