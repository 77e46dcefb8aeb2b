"""SafetyNeuronFinder on a randomly initialised tiny Qwen2 with a planted "harmful" neuron.

No model file and no harmful text: prompts are made-up words in three made-up "languages"
(Latin, Cyrillic and Greek letters); a "harmful" prompt ends with " !", a harmless one with
" ?". The planted neuron (layer 1, unit 5) fires on "!" and writes the direction that the LM
head maps to the refusal token "I", so its causal role is known.
"""

import pickle

import numpy as np
import pytest

pytest.importorskip("transformers", reason="the Qwen2 tests need transformers "
                                          "(pip install 'sklearn_icml26[safety]')")
import torch  # noqa: E402
from sklearn.base import clone  # noqa: E402

from sklearn_icml26.safety import ByteTokenizer, SafetyNeuronFinder  # noqa: E402

HIDDEN, INTER, LAYER, UNIT = 64, 128, 1, 5
TOK = ByteTokenizer()
BANG, REFUSE = ord("!") + 3, ord("I") + 3
ALPHABETS = {"la": "abcdefghijklmnop", "cy": "абвгдежзиклмноп", "gr": "αβγδεζηθικλμνξο"}


def _planted_qwen(seed=0):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(vocab_size=TOK.vocab_size, hidden_size=HIDDEN, intermediate_size=INTER,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=256, tie_word_embeddings=False)
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config).eval()
    u, v = torch.zeros(HIDDEN), torch.zeros(HIDDEN)
    u[0], v[1] = 1.0, 1.0
    with torch.no_grad():
        model.model.embed_tokens.weight[BANG] = 20.0 * u  # "!" points along u
        mlp = model.model.layers[LAYER].mlp
        mlp.gate_proj.weight[UNIT] = 2.0 * u  # the neuron reads u ...
        mlp.up_proj.weight[UNIT] = u
        mlp.down_proj.weight[:, UNIT] = 0.5 * v  # ... and writes v
        model.lm_head.weight[REFUSE] = 2.0 * v  # which the head reads as the refusal token
    return model


def _prompts(n_per_class=6, seed=0, languages=("la", "cy", "gr")):
    rng = np.random.default_rng(seed)
    X, y, lang = [], [], []
    for code in languages:
        letters = ALPHABETS[code]
        for i in range(2 * n_per_class):
            words = [''.join(rng.choice(list(letters), size=rng.integers(2, 6)))
                     for _ in range(rng.integers(2, 5))]
            harmful = i % 2 == 0
            X.append(" ".join(words) + (" !" if harmful else " ?"))
            y.append(int(harmful))
            lang.append(code)
    return X, np.array(y), lang


@pytest.fixture(scope="module")
def model():
    return _planted_qwen()


@pytest.fixture(scope="module")
def data():
    return _prompts()


def _finder(model, **kw):
    params = dict(hr_languages=("la",), refusal_tokens=[REFUSE], n_permutations=100,
                  random_state=0)
    params.update(kw)
    return SafetyNeuronFinder(model, TOK, **params)


PLANTED = LAYER * INTER + UNIT


@pytest.fixture(scope="module")
def fitted(model, data):
    X, y, lang = data
    return _finder(model).fit(X, y, language=lang)


def test_hooks_read_the_down_projection_input(model, fitted, data):
    X = data[0][:4]
    seen = {}

    def grab(layer):
        def hook(module, args):
            seen[layer] = args[0][0, -1].detach().clone()
        return hook

    manual = []
    for text in X:
        handles = [model.model.layers[i].mlp.register_forward_pre_hook(grab(i)) for i in (0, 1)]
        try:
            with torch.no_grad():
                model(input_ids=torch.tensor([TOK.encode(text)]))
        finally:
            for h in handles:
                h.remove()
        row = []
        for i in (0, 1):  # act(gate x) * (up x), computed here from the MLP's input
            mlp = model.model.layers[i].mlp
            with torch.no_grad():
                row.append((mlp.act_fn(mlp.gate_proj(seen[i])) * mlp.up_proj(seen[i])).numpy())
        manual.append(np.concatenate(row))
    np.testing.assert_allclose(fitted.activations(X), np.array(manual), rtol=1e-5, atol=1e-6)
    assert fitted.layer_names_ == ["model.layers.0.mlp.down_proj", "model.layers.1.mlp.down_proj"]
    assert fitted.n_neurons_ == 2 * INTER


def test_planted_neuron_is_found_in_every_language_and_shared(fitted):
    for lang in ("la", "cy", "gr"):
        assert PLANTED in fitted.ms_neurons_[lang]
        li = list(fitted.languages_).index(lang)
        assert np.argmax(fitted.statistic_[li]) == PLANTED
        assert fitted.pvalues_[li, PLANTED] == np.nanmin(fitted.pvalues_[li])
    assert PLANTED in fitted.ss_neurons_
    assert fitted.nhr_languages_ == ["cy", "gr"]
    assert set(fitted.overlap_) >= {"observed", "expected", "pvalue", "pvalue_layer_stratified"}
    assert fitted.neuron_names([PLANTED]).tolist() == ["model.layers.1.mlp.down_proj:5"]


def test_top_k_one_by_difference_is_exactly_the_planted_neuron(model, data):
    X, y, lang = data
    f = _finder(model, selection="top_k", k=1, statistic="difference").fit(X, y, language=lang)
    assert all(s.tolist() == [PLANTED] for s in f.ms_neurons_.values())
    assert f.ss_neurons_.tolist() == [PLANTED]
    assert f.overlap_["observed"] == 1 and f.overlap_["expected"] == pytest.approx(1 / 256)
    # the uncertainty: a 95 % interval of the planted contrast excludes 0
    assert np.all(f.contrast_[:, PLANTED] - 1.96 * f.contrast_se_[:, PLANTED] > 0)


def _all_activations(model, text):
    seen = {}
    handles = [model.model.layers[i].mlp.down_proj.register_forward_pre_hook(
        lambda m, a, i=i: seen.__setitem__(i, a[0][0].detach().clone())) for i in (0, 1)]
    try:
        with torch.no_grad():
            ids = TOK.encode(text) if isinstance(text, str) else text
            logits = model(input_ids=torch.tensor([ids])).logits
    finally:
        for h in handles:
            h.remove()
    return seen, logits


def _no_hooks(model):
    return all(not m._forward_pre_hooks for m in model.modules())


def test_suppression_changes_exactly_those_activations(model, fitted, data):
    text = data[0][0]
    base, base_logits = _all_activations(model, text)
    targets = [PLANTED, LAYER * INTER + 9]
    with fitted.suppress(targets):
        supp, logits = _all_activations(model, text)  # our hooks run after the finder's
    assert _no_hooks(model)
    torch.testing.assert_close(supp[0], base[0], rtol=0, atol=0)  # the layer below: untouched
    others = [j for j in range(INTER) if j not in (UNIT, 9)]
    torch.testing.assert_close(supp[1][:, others], base[1][:, others], rtol=0, atol=0)
    assert torch.all(supp[1][:, [UNIT, 9]] == 0)
    assert not torch.allclose(logits, base_logits)
    # harmless mean and boosting
    mean = (fitted.n_harmless_ @ fitted.harmless_mean_) / fitted.n_harmless_.sum()
    with fitted.suppress([PLANTED], value="harmless_mean"):
        hm, _ = _all_activations(model, text)
    np.testing.assert_allclose(hm[1][:, UNIT].numpy(), mean[PLANTED], rtol=1e-6)
    with fitted.boost([PLANTED], scale=3.0):
        bo, _ = _all_activations(model, text)
    torch.testing.assert_close(bo[1][:, UNIT], 3.0 * base[1][:, UNIT])
    torch.testing.assert_close(bo[1][:, others], base[1][:, others], rtol=0, atol=0)
    assert _no_hooks(model)


def test_hooks_are_removed_when_the_block_raises(model, fitted):
    with pytest.raises(RuntimeError, match="inside"):
        with fitted.suppress([PLANTED]):
            raise RuntimeError("inside")
    assert _no_hooks(model)


def test_refusal_log_odds_and_causal_check(model, fitted, data):
    X, y, lang = data
    harmful = [x for x, t in zip(X, y, strict=True) if t]
    lo = fitted.refusal_log_odds(harmful[:1])
    with torch.no_grad():
        lp = torch.log_softmax(model(input_ids=torch.tensor([TOK.encode(harmful[0])]))
                               .logits[0, -1].double(), -1)
    p = lp[REFUSE].exp().item()
    assert lo[0] == pytest.approx(np.log(p / (1 - p)), rel=1e-9)
    assert lo[0] > 3  # the planted circuit makes "I" the likely first token
    hl = [lang[i] for i in range(len(X)) if y[i]]
    res = fitted.causal_check(harmful, hl, neurons=[PLANTED], n_random=9, random_state=0)
    assert list(res.language) == ["cy", "gr", "la"]
    assert np.all(res.effect < -5) and np.allclose(res.pvalue, 0.1)
    assert np.all(res.random_effect_mean.abs() < 1)
    boost = fitted.causal_check(harmful, hl, neurons=[PLANTED], mode="boost", scale=2.0,
                                n_random=4, random_state=0)
    assert np.all(boost.effect > 0)
    sets = fitted.random_neurons([PLANTED, 3], n_sets=3, random_state=0)
    for s in sets:  # same size and layer profile, disjoint from the target
        assert sorted(s // INTER) == [0, 1] and PLANTED not in s and 3 not in s
    assert _no_hooks(model)


def _changed(before, after):
    return {k: (before[k] != after[k]) for k in before if not torch.equal(before[k], after[k])}


def test_masked_fine_tuning_touches_only_the_chosen_rows_and_columns(model, fitted, data):
    X, y, _ = data
    before = {k: v.clone() for k, v in model.state_dict().items()}
    targets = [PLANTED, 40]  # layer 1 unit 5 and layer 0 unit 40
    out = fitted.finetune(X[:6], ["I am not able to."] * 6, neurons=targets, max_iter=3,
                          lr=1e-2, optimizer="adamw", weight_decay=0.1, random_state=0)
    for k, v in model.state_dict().items():  # the fitted model is untouched
        assert torch.equal(v, before[k])
    changed = _changed(before, out.model.state_dict())
    allowed = {("model.layers.1.mlp", UNIT), ("model.layers.0.mlp", 40)}
    assert changed, "nothing was trained"
    for name, diff in changed.items():
        prefix, part = name.rsplit(".", 2)[0], name.rsplit(".", 2)[1]
        units = {u for p, u in allowed if p == prefix}
        assert units, f"{name} changed"
        idx = torch.nonzero(diff)
        axis = 1 if part == "down_proj" else 0
        assert set(idx[:, axis].tolist()) <= units, name
    assert out.n_trainable == 3 * HIDDEN * 2
    assert out.n_iter == 3 and len(out.loss_curve) == 3
    full = fitted.finetune(X[:6], ["I am not able to."] * 6, neurons="mlp", max_iter=1,
                           lr=1e-3, random_state=0)
    assert full.n_trainable == 3 * HIDDEN * INTER * 2
    rand = fitted.finetune(X[:6], ["I am not able to."] * 6,
                           neurons=fitted.random_neurons(targets, random_state=0)[0],
                           max_iter=1, lr=1e-3, random_state=0)
    assert rand.n_trainable == out.n_trainable  # same size and layer profile
    assert not set(rand.neurons) & set(targets)
    assert fitted.perplexity(X[:4], model=out.model) > 0


def test_same_seed_same_result_clone_and_pickle(model, fitted, data):
    X, y, lang = data
    again = _finder(model).fit(X, y, language=lang)
    np.testing.assert_array_equal(again.pvalues_, fitted.pvalues_)
    assert all(np.array_equal(again.ms_neurons_[k], fitted.ms_neurons_[k])
               for k in fitted.ms_neurons_)
    a = fitted.finetune(X[:4], ["I am not."] * 4, neurons=[PLANTED], max_iter=2, lr=1e-2,
                        batch_size=2, random_state=3)
    b = fitted.finetune(X[:4], ["I am not."] * 4, neurons=[PLANTED], max_iter=2, lr=1e-2,
                        batch_size=2, random_state=3)
    assert a.loss_curve == b.loss_curve
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.transform(X[:3]), fitted.transform(X[:3]))
    c = clone(fitted)
    assert not hasattr(c, "ms_neurons_") and c.get_params()["hr_languages"] == ("la",)


def test_generated_positions_average_the_response_producing_positions(model, data):
    X, y, lang = data
    f = _finder(model, selection="top_k", k=2, positions="generated", n_generated=3)
    f.fit(X, y, language=lang)
    ids = TOK.encode(X[0])
    with torch.no_grad():  # greedy continuation of three tokens (the random model emits no eos)
        seq = list(ids)
        for _ in range(3):
            seq.append(int(model(input_ids=torch.tensor([seq])).logits[0, -1].argmax()))
    assert TOK.eos_token_id not in seq[len(ids):]  # else the finder stops earlier
    seen, _ = _all_activations(model, seq)
    expected = torch.cat([seen[0][len(ids) - 1:len(ids) + 2].mean(0),
                          seen[1][len(ids) - 1:len(ids) + 2].mean(0)]).numpy()
    np.testing.assert_allclose(f.activations(X[:1])[0], expected, rtol=1e-5, atol=1e-5)


def test_generated_positions_with_one_token_equal_the_last_position(model, data):
    X, y, lang = data
    last = _finder(model, selection="top_k", k=2).fit(X, y, language=lang)
    gen = _finder(model, selection="top_k", k=2, positions="generated",
                  n_generated=1).fit(X, y, language=lang)
    np.testing.assert_allclose(gen.contrast_, last.contrast_, rtol=1e-6, atol=1e-6)


def test_routing_through_a_pipeline(model, data):
    import sklearn
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    X, y, lang = data
    with sklearn.config_context(enable_metadata_routing=True):
        finder = _finder(model, selection="top_k", k=1, statistic="difference")
        finder.set_fit_request(language=True)
        pipe = make_pipeline(finder, LogisticRegression()).fit(X, y, language=lang)
        assert pipe.score(X, y) == 1.0  # the planted neuron separates the classes


class _PoisonedSGD(torch.optim.SGD):
    """SGD that writes NaN into the parameters at its third step (a diverging run)."""

    def step(self, closure=None):
        self.n = getattr(self, "n", 0) + 1
        super().step(closure)
        if self.n == 3:
            with torch.no_grad():
                for group in self.param_groups:
                    for p in group["params"]:
                        p.fill_(float("nan"))


def test_divergent_fine_tuning_warns_and_restores_a_finite_model(fitted, data):
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    X = data[0][:4]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fitted.finetune(X, ["I am not."] * 4, neurons=[PLANTED], max_iter=6, lr=1e-3,
                              optimizer=_PoisonedSGD, random_state=0)
    assert [w for w in caught if issubclass(w.category, ConvergenceWarning)
            and "non-finite" in str(w.message)]
    assert out.n_iter == 2 and len(out.loss_curve) == 3
    assert all(torch.isfinite(p).all() for p in out.model.parameters())
    assert np.isfinite(fitted.perplexity(X, model=out.model))
