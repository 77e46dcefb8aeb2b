"""Statistics and refusal judge of the safety module (no transformers needed); made-up texts."""

import numpy as np
import pytest
from scipy import stats

from sklearn_icml26.safety import (
    ByteTokenizer,
    RefusalJudge,
    SafetyNeuronFinder,
    benjamini_hochberg,
    overlap_test,
)
from sklearn_icml26.safety._stats import permutation_pvalues, welch
from sklearn_icml26.safety._toy import make_toy_lm
from sklearn_icml26.utils._estimator_checks import get_smoke_data


def test_benjamini_hochberg_known_answers():
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.2], 0.05).tolist() == [0]
    assert benjamini_hochberg([0.04, 0.01, 0.02, 0.03], 0.05).tolist() == [0, 1, 2, 3]
    # step-up: p_(3) = 0.03 <= 0.05 * 3 / 4 rescues p_(2) = 0.026 > 0.05 * 2 / 4
    assert benjamini_hochberg([0.001, 0.026, 0.03, 0.9], 0.05).tolist() == [0, 1, 2]
    assert benjamini_hochberg([0.5, 0.9], 0.05).size == 0


def test_welch_matches_scipy():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(30, 5)) + np.arange(5)
    y = np.arange(30) % 3 == 0
    m1, m0, d, se, t = welch(A, y)
    ref = stats.ttest_ind(A[y], A[~y], equal_var=False)
    np.testing.assert_allclose(t, ref.statistic, rtol=1e-12)
    np.testing.assert_allclose(d, A[y].mean(0) - A[~y].mean(0), rtol=1e-12)


def test_permutation_pvalues_null_uniform_and_planted_found():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(40, 400))
    y = np.arange(40) % 2 == 0
    A[y, 7] += 3.0  # one planted neuron, 3 sd more active on "harmful"
    _, _, _, _, t = welch(A, y)
    for null in ("pooled", "per_neuron"):
        p = permutation_pvalues(A, y, t, statistic="t", null=null, two_sided=False,
                                n_permutations=200, rng=np.random.default_rng(2))
        others = np.delete(p, 7)
        assert abs(others.mean() - 0.5) < 0.05  # null p-values are uniform
        assert p[7] == p.min()
    p = permutation_pvalues(A, y, t, statistic="t", null="pooled", two_sided=False,
                            n_permutations=200, rng=np.random.default_rng(2))
    assert 7 in benjamini_hochberg(p, 0.05)


def test_pooled_permutation_bh_controls_fdr_under_the_global_null():
    # with no planted neuron, BH at 0.05 makes any discovery in about 5 % of data sets
    rng = np.random.default_rng(3)
    y = np.arange(30) % 2 == 0
    any_discovery = 0
    for _ in range(40):
        A = rng.normal(size=(30, 200))
        _, _, _, _, t = welch(A, y)
        p = permutation_pvalues(A, y, t, statistic="t", null="pooled", two_sided=False,
                                n_permutations=50, rng=rng)
        any_discovery += benjamini_hochberg(p, 0.05).size > 0
    assert any_discovery <= 6  # binomial(40, 0.05): P(> 6) < 0.002


def test_per_neuron_permutation_pvalue_of_a_perfect_split():
    # 4 vs 4 perfectly separated: exact one-sided p = 1 / C(8, 4) = 1 / 70
    A = np.array([[5.0], [6.0], [7.0], [8.0], [0.0], [1.0], [2.0], [3.0]])
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0], dtype=bool)
    _, _, d, _, _ = welch(A, y)
    p = permutation_pvalues(A, y, d, statistic="difference", null="per_neuron",
                            two_sided=False, n_permutations=20000, rng=np.random.default_rng(0))
    assert abs(p[0] - 1 / 70) < 0.003


def test_overlap_test_known_answers():
    r = overlap_test([0, 1, 2, 3], [0, 1, 2, 9], n_neurons=100)
    assert r["observed"] == 3 and r["expected"] == pytest.approx(0.16)
    assert r["pvalue"] == pytest.approx(stats.hypergeom.sf(2, 100, 4, 4))
    # one layer: the stratified test is the plain one
    r1 = overlap_test([0, 1, 2, 3], [0, 1, 2, 9], 100, layer_of=np.zeros(100, int))
    assert r1["pvalue_layer_stratified"] == pytest.approx(r1["pvalue"])
    # both sets in layer 0 of two 50-neuron layers: chance overlap doubles when stratified
    layer_of = np.repeat([0, 1], 50)
    a, b = np.arange(10), np.r_[np.arange(4), np.arange(20, 26)]
    r2 = overlap_test(a, b, 100, layer_of=layer_of)
    assert r2["expected"] == pytest.approx(1.0)
    assert r2["expected_layer_stratified"] == pytest.approx(2.0)
    assert r2["pvalue_layer_stratified"] == pytest.approx(stats.hypergeom.sf(3, 50, 10, 10))
    assert r2["pvalue_layer_stratified"] > r2["pvalue"]


def test_judge_labels_made_up_responses():
    judge = RefusalJudge()
    texts = ["I'm sorry, but I can't help with that request.",
             "Here is a short poem about the sea and the sky.",
             "抱歉，我不能帮助你。",
             "Lo siento, no puedo ayudar con eso.",
             "",
             "!!!! ???? #### 1234",
             "\ufffd\ufffd\ufffd ab",
             "la la la la la la la la la la la la la",
             "I cannot do that."]
    langs = ["en", "en", "zh", "es", "en", "en", "en", "en", "th"]
    assert judge.judge(texts, langs).tolist() == [
        "refusal", "compliance", "refusal", "refusal", "broken", "broken", "broken", "broken",
        "refusal"]  # the last: English fallback markers on a Thai prompt


def test_judge_without_markers_names_the_language():
    with pytest.raises(ValueError, match=r"language: the refusal judge has no refusal markers "
                                         r"for \['xx'\]"):
        RefusalJudge().judge(["hello"], "xx")
    judge = RefusalJudge(extra_markers={"xx": ["nope"]})
    assert judge.judge(["nope, not that"], "xx").tolist() == ["refusal"]


def _toy_data():
    X, y = get_smoke_data(SafetyNeuronFinder)
    return X["prompt"].tolist(), y, X["language"].tolist()


def test_bad_inputs_name_the_argument():
    import torch

    X, y, lang = _toy_data()
    tok = ByteTokenizer()
    with pytest.raises(ValueError, match="model has no MLP down-projection"):
        SafetyNeuronFinder(torch.nn.Sequential(torch.nn.Linear(3, 3)), tok,
                           hr_languages=("aa",)).fit(X, y, language=lang)
    with pytest.raises(ValueError, match="language is missing"):
        SafetyNeuronFinder(make_toy_lm(), tok, hr_languages=("aa",)).fit(X, y)
    one_class = np.where(np.asarray(lang) == "bb", 1, y)
    with pytest.raises(ValueError, match=r"y: language 'bb' has only harmful \(1\) prompts"):
        SafetyNeuronFinder(make_toy_lm(), tok, hr_languages=("aa",)).fit(X, one_class,
                                                                         language=lang)
    with pytest.raises(ValueError, match="k=1000 is larger than the model's 48 MLP neurons"):
        SafetyNeuronFinder(make_toy_lm(), tok, selection="top_k", k=1000,
                           hr_languages=("aa",)).fit(X, y, language=lang)
    with pytest.raises(ValueError, match="hr_languages=.*leaves no high-resource"):
        SafetyNeuronFinder(make_toy_lm(), tok).fit(X, y, language=lang)
    with pytest.raises(ValueError, match="tokenizer is None"):
        SafetyNeuronFinder(make_toy_lm(), hr_languages=("aa",)).fit(X, y, language=lang)
    with pytest.raises(ValueError, match="language has 3 entries but X has 12"):
        SafetyNeuronFinder(make_toy_lm(), tok, hr_languages=("aa",)).fit(X, y,
                                                                         language=lang[:3])
    fitted = SafetyNeuronFinder(make_toy_lm(), tok, selection="top_k", k=4,
                                hr_languages=("aa",)).fit(X, y, language=lang)
    with pytest.raises(ValueError, match="language: the refusal judge has no refusal markers"):
        fitted.refusal_scores(X, lang, measure="judge")


def test_dataframe_and_routed_language_agree():
    X, y, lang = _toy_data()
    params = SafetyNeuronFinder._get_test_params()[0]
    frame, _ = get_smoke_data(SafetyNeuronFinder)
    a = SafetyNeuronFinder(**params).fit(frame, y)
    b = SafetyNeuronFinder(**params).fit(X, y, language=lang)
    np.testing.assert_array_equal(a.statistic_, b.statistic_)
    assert a.ms_neurons_.keys() == b.ms_neurons_.keys()
