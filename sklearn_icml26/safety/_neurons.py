"""SafetyNeuronFinder: monolingual and cross-lingual shared safety neurons of a causal LM."""

import contextlib
import math
import time
import types
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import Bunch, check_random_state
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions, _fit_context
from ..feature_extraction._embedder import check_texts
from ..utils._docstrings import Substitution, _torch_docstrings
from ..utils._progress import progress_bar
from ._judge import REFUSAL_MARKERS, RefusalJudge
from ._lm import (
    ByteTokenizer,
    _Tokens,
    deepcopy_model,
    find_down_projections,
    greedy_generate,
    hooked,
    mlp_input_projections,
    model_device,
    next_token_log_probs,
    read_activations,
    response_nll,
)
from ._stats import benjamini_hochberg, overlap_test, permutation_pvalues, welch

__all__ = ["SafetyNeuronFinder"]

_OWNER = "SafetyNeuronFinder"


def _load_pretrained(name, model_kwargs, device):
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f"model={name!r} is loaded with transformers, which is not installed: "
                          "pip install 'sklearn_icml26[safety]'") from exc
    kwargs = dict(model_kwargs or {})
    model = AutoModelForCausalLM.from_pretrained(name, **kwargs).to(device).eval()
    tok_kwargs = {k: v for k, v in kwargs.items() if k in ("gguf_file", "revision",
                                                            "local_files_only", "cache_dir")}
    return model, AutoTokenizer.from_pretrained(name, **tok_kwargs)


def _parse_prompts(X, language, *, require_language, owner=_OWNER):
    """(texts, languages or None) from 1-D texts or a DataFrame with prompt/language columns."""
    if isinstance(X, pd.DataFrame):
        col = next((c for c in ("prompt", "text") if c in X.columns), None)
        if col is None:
            raise ValueError(f"X is a DataFrame without a 'prompt' (or 'text') column; columns "
                             f"are {list(X.columns)}")
        if language is None and "language" in X.columns:
            language = X["language"].tolist()
        X = X[col]
    texts = check_texts(X, name="X", owner=owner)
    if language is None:
        if require_language:
            raise ValueError(f"language is missing: {owner} needs the language of every prompt "
                             "(fit(X, y, language=...) or a 'language' column of a DataFrame X)")
        return texts, None
    if isinstance(language, str):
        langs = [language] * len(texts)
    else:
        langs = list(language.tolist() if hasattr(language, "tolist") else language)
    if len(langs) != len(texts):
        raise ValueError(f"language has {len(langs)} entries but X has {len(texts)} prompts; "
                         "give one language per prompt")
    bad = [i for i, v in enumerate(langs) if not isinstance(v, str) or not v]
    if bad:
        raise ValueError(f"language[{bad[0]}] is {langs[bad[0]]!r}; expected a non-empty str "
                         "language code for every prompt")
    return texts, langs


def _parse_labels(y, n):
    if y is None:
        raise ValueError("y is None; expected the harmful (1) / harmless (0) label of every "
                         "prompt")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"y has shape {y.shape}; expected ({n},), one label per prompt")
    if y.dtype.kind in "USO":
        mapped = {"harmful": 1, "harmless": 0, "1": 1, "0": 0}
        try:
            y = np.array([mapped[str(v).lower()] for v in y])
        except KeyError as exc:
            raise ValueError(f"y holds {exc.args[0]!r}; expected 1/0, True/False or "
                             "'harmful'/'harmless'") from None
    vals = set(np.unique(y).tolist())
    if not vals <= {0, 1}:
        raise ValueError(f"y holds {sorted(vals)}; expected binary labels 1 = harmful, "
                         "0 = harmless")
    return y.astype(bool)


class SafetyNeuronFinder(TransformerMixin, BaseEstimator):
    """Monolingual (MS) and cross-lingual shared (SS) safety neurons of a causal language model.

    For each language ``l`` and every MLP neuron ``j`` (the ``j``-th input feature of a layer's
    down-projection, i.e. ``act(gate_j . x) * (up_j . x)`` in a gated MLP), the activation
    ``a_ij`` of prompt ``i`` is read at the positions ``positions`` names: ``"last"``, the last
    prompt token (the one whose output is the first response token; after the chat template
    when the tokenizer has one); ``"generated"``, the mean over the positions that produce
    the first ``n_generated`` greedily generated tokens (the last prompt token included). The
    contrast between harmful (``y=1``) and harmless (``y=0``) prompts is
    ``d_lj = mean_harmful - mean_harmless`` with the Welch standard error
    ``se_lj = sqrt(s1^2/n1 + s0^2/n0)`` and ``t_lj = d_lj / se_lj``.

    **MS-Neurons** of language ``l``: ``selection="top_k"`` keeps the ``k`` neurons with the
    largest ``statistic`` (``|statistic|`` with ``direction="both"``);
    ``selection="permutation"`` tests each neuron with a label-permutation test within the
    language (``n_permutations`` permutations, one-sided ``T >= t`` for
    ``direction="positive"``, ``|T| >= |t|`` for ``"both"``) and keeps the Benjamini-Hochberg
    discoveries at false discovery rate ``alpha``. The default pooled null uses the
    ``B x n_neurons`` permuted statistics of all neurons as one null distribution (Storey and
    Tibshirani), which needs a studentised statistic (``statistic="t"``) and resolves p-values
    down to ``1 / (B n_neurons)``; ``permutation_null="per_neuron"`` is exact per neuron but
    cannot go below ``1 / (B + 1)``, too coarse for BH over many neurons unless ``B`` is large.

    **SS-Neurons**: with the high-resource languages ``H`` (``hr_languages``) and the others
    ``L``, a neuron is shared when it is an MS-Neuron of at least ``ceil(min_share |H|)``
    languages of ``H`` and of at least ``ceil(min_share |L|)`` languages of ``L``
    (``min_share=1``: of every language). Whether the HR set and the NHR set overlap more than
    chance is tested with the hypergeometric tail ``P(X >= |A & B|)``,
    ``X ~ Hypergeom(N, |A|, |B|)``, and its layer-stratified version (``overlap_``).

    Interventions (:meth:`suppress`, :meth:`boost`) are context managers on the model that
    always remove their hooks; :meth:`refusal_log_odds` (one forward per prompt),
    :meth:`generate` with a :class:`RefusalJudge`, :meth:`causal_check` (the targeted set
    against random sets of the same size and layer profile) and :meth:`finetune` (gradients
    masked to the neurons' rows and columns) complete the method. See the user guide
    :ref:`safety_neurons` for the protocol and its caveats; nothing here is a safety claim
    about any model.

    Parameters
    ----------
    model : str, torch.nn.Module or callable, default=None
        A Hugging Face model name or local path (loaded with ``AutoModelForCausalLM`` and
        ``model_kwargs``, e.g. ``{"gguf_file": ...}``), a causal LM module (used as it is, not
        copied; its forward takes ``input_ids`` and returns logits), or a callable returning
        one. Required.
    tokenizer : object or None, default=None
        Has ``encode(text, add_special_tokens=...)`` and ``decode(ids)`` (a Hugging Face
        tokenizer or :class:`ByteTokenizer`); ``None`` loads the tokenizer of a named model.
    hr_languages : tuple of str, default=("en",)
        The high-resource languages; every other fitted language is non-high-resource.
    positions : {"last", "generated"}, default="last"
        Where activations are read (see above).
    n_generated : int, default=8
        Generated tokens averaged by ``positions="generated"``.
    selection : {"permutation", "top_k"}, default="permutation"
        MS-Neuron rule.
    k : int or float, default=100
        ``top_k``: neurons per language (a float in (0, 1] is a share of all neurons).
    statistic : {"t", "difference"}, default="t"
        Welch t or the raw mean difference.
    direction : {"positive", "both"}, default="positive"
        Neurons more active on harmful prompts, or either sign.
    alpha : float, default=0.05
        FDR level of the permutation rule.
    n_permutations : int, default=200
        Label permutations per language.
    permutation_null : {"pooled", "per_neuron"}, default="pooled"
        Null distribution of the permutation p-values.
    min_share : float, default=1.0
        Share of HR and of NHR languages a shared neuron is an MS-Neuron of.
    neuron_module : str, default="auto"
        Suffix of the down-projection module names; ``"auto"`` tries ``mlp.down_proj``,
        ``mlp.c_proj``, ``mlp.fc2`` and ``mlp.dense_4h_to_h``.
    chat_template : bool, default=True
        Wrap prompts in the tokenizer's chat template (with the generation prompt) when it has
        one.
    refusal_tokens : array-like of int or None, default=None
        Token ids whose next-token probability is the refusal probability of
        :meth:`refusal_log_odds`; ``None``: the first token of every refusal marker of the
        judge (with and without a leading space).
    judge : RefusalJudge or None, default=None
        The refusal judge; ``None`` is ``RefusalJudge()``.
    model_kwargs : dict or None, default=None
        Keyword arguments of ``from_pretrained`` for a named model.
    device : str, default="cpu"
        Device a named model is loaded on (a module is used where it is).
    random_state : int, RandomState instance or None, default=None
        Seeds the permutations and the random neuron sets.
    verbose : int, default=0
        Print one line per language while reading activations.

    Attributes
    ----------
    model_ : torch.nn.Module
        The model (the ``model`` module itself, or the loaded one).
    tokenizer_ : object
        The tokenizer.
    layer_names_ : list of str
        Module names of the down-projections, in layer order.
    layer_sizes_ : ndarray of shape (n_layers,)
        Neurons per layer.
    neuron_layer_ : ndarray of shape (n_neurons,)
        Layer of each neuron; neurons are numbered layer after layer.
    neuron_unit_ : ndarray of shape (n_neurons,)
        Index of each neuron within its layer.
    n_neurons_ : int
        Number of neurons.
    languages_ : ndarray of str of shape (n_languages,)
        Fitted languages, sorted.
    hr_languages_, nhr_languages_ : list of str
        High- and non-high-resource languages among them.
    n_harmful_, n_harmless_ : ndarray of shape (n_languages,)
        Prompts per language and class.
    harmful_mean_, harmless_mean_ : ndarray of shape (n_languages, n_neurons)
        Mean activations.
    contrast_ : ndarray of shape (n_languages, n_neurons)
        ``harmful_mean_ - harmless_mean_``.
    contrast_se_ : ndarray of shape (n_languages, n_neurons)
        Welch standard error of the contrast (a 95 % interval is ``contrast_ +- 1.96 se``).
    statistic_ : ndarray of shape (n_languages, n_neurons)
        The ranking statistic (t or difference).
    pvalues_ : ndarray of shape (n_languages, n_neurons)
        Permutation p-values (NaN with ``selection="top_k"``).
    ms_neurons_ : dict of str to ndarray of int
        MS-Neurons per language (sorted neuron numbers).
    ss_neurons_ : ndarray of int
        SS-Neurons.
    overlap_ : dict
        HR-vs-NHR overlap test (:func:`overlap_test` of the HR set and the NHR set, with the
        layer-stratified p-value).
    overlap_counts_ : ndarray of shape (n_languages, n_languages)
        Pairwise MS-Neuron overlaps.
    overlap_pvalues_ : ndarray of shape (n_languages, n_languages)
        Their hypergeometric p-values.
    refusal_token_ids_ : ndarray of int
        Token ids of :meth:`refusal_log_odds`.
    fit_time_ : float
        Seconds of fit.

    See Also
    --------
    RefusalJudge : Refusal / compliance / broken labels of generated responses.
    overlap_test : The hypergeometric overlap test.

    References
    ----------
    Cross-lingual shared safety neurons (SS-Neurons), ICML 2026.

    Benjamini, Hochberg, "Controlling the false discovery rate", JRSS B 57 (1995).

    Storey, Tibshirani, "Statistical significance for genomewide studies", PNAS 100 (2003).

    Examples
    --------
    >>> from sklearn_icml26.safety import ByteTokenizer, SafetyNeuronFinder
    >>> from sklearn_icml26.safety._toy import make_toy_lm
    >>> X = ["aa bb !", "aa cc !", "aa dd ?", "aa ee ?", "xx bb !", "xx cc !", "xx dd ?",
    ...      "xx ee ?"]
    >>> y = [1, 1, 0, 0, 1, 1, 0, 0]
    >>> lang = ["en"] * 4 + ["yo"] * 4
    >>> finder = SafetyNeuronFinder(make_toy_lm(), ByteTokenizer(), selection="top_k", k=3,
    ...                             random_state=0).fit(X, y, language=lang)
    >>> finder.n_neurons_, len(finder.ms_neurons_["en"])
    (48, 3)
    """

    _parameter_constraints = {
        "model": "no_validation",
        "tokenizer": "no_validation",
        "hr_languages": [tuple, list],
        "positions": [StrOptions({"last", "generated"})],
        "n_generated": [Interval(Integral, 1, None, closed="left")],
        "selection": [StrOptions({"permutation", "top_k"})],
        "k": [Interval(Integral, 1, None, closed="left"),
              Interval(Real, 0, 1, closed="right")],
        "statistic": [StrOptions({"t", "difference"})],
        "direction": [StrOptions({"positive", "both"})],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "n_permutations": [Interval(Integral, 1, None, closed="left")],
        "permutation_null": [StrOptions({"pooled", "per_neuron"})],
        "min_share": [Interval(Real, 0, 1, closed="right")],
        "neuron_module": [str],
        "chat_template": ["boolean"],
        "refusal_tokens": ["array-like", None],
        "judge": [RefusalJudge, None],
        "model_kwargs": [dict, None],
        "device": [str],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, model=None, tokenizer=None, *, hr_languages=("en",), positions="last",
                 n_generated=8, selection="permutation", k=100, statistic="t",
                 direction="positive", alpha=0.05, n_permutations=200,
                 permutation_null="pooled", min_share=1.0, neuron_module="auto",
                 chat_template=True, refusal_tokens=None, judge=None, model_kwargs=None,
                 device="cpu", random_state=None, verbose=0):
        self.model = model
        self.tokenizer = tokenizer
        self.hr_languages = hr_languages
        self.positions = positions
        self.n_generated = n_generated
        self.selection = selection
        self.k = k
        self.statistic = statistic
        self.direction = direction
        self.alpha = alpha
        self.n_permutations = n_permutations
        self.permutation_null = permutation_null
        self.min_share = min_share
        self.neuron_module = neuron_module
        self.chat_template = chat_template
        self.refusal_tokens = refusal_tokens
        self.judge = judge
        self.model_kwargs = model_kwargs
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------------------- set-up
    def _resolve_model(self):
        import torch

        model, tok = self.model, self.tokenizer
        if model is None:
            raise ValueError("model is None; pass a Hugging Face model name/path, a causal LM "
                             "torch.nn.Module or a callable returning one")
        if isinstance(model, str):
            model, loaded_tok = _load_pretrained(model, self.model_kwargs, self.device)
            tok = loaded_tok if tok is None else tok
        elif not isinstance(model, torch.nn.Module) and callable(model):
            model = model()
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"model must be a torch.nn.Module (or a name/path or a callable "
                            f"returning one); got {type(model).__name__}")
        if tok is None:
            raise ValueError("tokenizer is None; a model given as a module needs its tokenizer "
                             "(a Hugging Face tokenizer or ByteTokenizer())")
        return model, tok

    def _tokens(self):
        return _Tokens(self.tokenizer_, self.chat_template)

    def _judge(self):
        return self.judge if self.judge is not None else RefusalJudge()

    def _refusal_ids(self, tokens):
        if self.refusal_tokens is not None:
            ids = np.unique(np.asarray(self.refusal_tokens, dtype=np.int64).ravel())
        else:
            judge = self._judge()
            table = judge.markers if judge.markers is not None else REFUSAL_MARKERS
            phrases = [m for v in table.values() for m in v]
            phrases += [m for v in (judge.extra_markers or {}).values() for m in v]
            found = set()
            for p in phrases:
                for variant in (p, p.capitalize(), " " + p, " " + p.capitalize()):
                    enc = tokens.plain(variant)
                    if enc:
                        found.add(int(enc[0]))
            ids = np.array(sorted(found), dtype=np.int64)
        if ids.size == 0 or ids.min() < 0:
            raise ValueError(f"refusal_tokens must be non-empty, non-negative token ids; got "
                             f"{ids.tolist()[:5]}")
        return ids

    def _spans(self, model, tokens, texts):
        ids_list, spans = [], []
        for t in texts:
            ids = tokens.prompt(t)
            if not ids:
                raise ValueError(f"prompt {t!r} encodes to no token")
            if self.positions == "generated":
                gen = greedy_generate(model, ids, self.n_generated, tokens.eos_id)
                spans.append((len(ids) - 1, len(ids) - 1 + max(1, len(gen))))
                ids = ids + gen
            else:
                spans.append((len(ids) - 1, len(ids)))
            ids_list.append(ids)
        return ids_list, spans

    def _activations(self, texts, model=None):
        model = self.model_ if model is None else model
        layers = find_down_projections(model, self.neuron_module)
        ids_list, spans = self._spans(model, self._tokens(), texts)
        return read_activations(model, layers, ids_list, spans)

    # ---------------------------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, language=None):
        """Score every neuron per language and select the MS- and SS-Neurons.

        Parameters
        ----------
        X : list of str of length n, or DataFrame
            Prompts; a DataFrame has a ``prompt`` (or ``text``) column and may have a
            ``language`` column.
        y : array-like of shape (n,)
            1 (or True, ``"harmful"``) for a harmful prompt, 0 for a harmless one.
        language : str or array-like of str of shape (n,), default=None
            Language of each prompt (a routed fit parameter:
            ``set_fit_request(language=True)``); ``None`` reads the ``language`` column.

        Returns
        -------
        self : SafetyNeuronFinder
            The fitted finder.

        Raises
        ------
        ValueError
            If a prompt has no language, a language has only one class, ``k`` exceeds the
            neuron count, ``hr_languages`` leaves no HR or no NHR language, or the model has
            no MLP down-projection (the message names the argument).
        """
        t0 = time.perf_counter()
        texts, langs = _parse_prompts(X, language, require_language=True)
        labels = _parse_labels(y, len(texts))
        langs = np.asarray(langs, dtype=object)
        languages = sorted(set(langs))
        for lang in languages:
            cls = set(labels[langs == lang].tolist())
            if len(cls) < 2:
                only = "harmful (1)" if True in cls else "harmless (0)"
                raise ValueError(f"y: language {lang!r} has only {only} prompts; every language "
                                 "needs harmful and harmless prompts")
        hr = [lang for lang in languages if lang in set(self.hr_languages)]
        nhr = [lang for lang in languages if lang not in set(self.hr_languages)]
        if not hr or not nhr:
            raise ValueError(f"hr_languages={tuple(self.hr_languages)!r} leaves "
                             f"{'no high-resource' if not hr else 'no non-high-resource'} "
                             f"language among the fitted languages {languages}; SS-Neurons need "
                             "both")
        model, tok = self._resolve_model()
        layers = find_down_projections(model, self.neuron_module)
        sizes = np.array([w for _, _, w in layers], dtype=np.int64)
        n = int(sizes.sum())
        k = self.k
        if self.selection == "top_k":
            k = int(k) if isinstance(k, Integral) else max(1, int(round(k * n)))
            if k > n:
                raise ValueError(f"k={self.k} is larger than the model's {n} MLP neurons")
        self.model_, self.tokenizer_ = model, tok
        self.layer_names_ = [name for name, _, _ in layers]
        self.layer_sizes_ = sizes
        self.neuron_layer_ = np.repeat(np.arange(len(sizes)), sizes)
        self.neuron_unit_ = np.concatenate([np.arange(s) for s in sizes])
        self.n_neurons_ = n
        self.languages_ = np.asarray(languages, dtype=object)
        self.hr_languages_, self.nhr_languages_ = hr, nhr
        self.refusal_token_ids_ = self._refusal_ids(self._tokens())

        rng = check_random_state(self.random_state)
        L = len(languages)
        shape = (L, n)
        self.harmful_mean_, self.harmless_mean_ = np.empty(shape), np.empty(shape)
        self.contrast_, self.contrast_se_ = np.empty(shape), np.empty(shape)
        self.statistic_, self.pvalues_ = np.empty(shape), np.full(shape, np.nan)
        self.n_harmful_ = np.zeros(L, dtype=np.int64)
        self.n_harmless_ = np.zeros(L, dtype=np.int64)
        self.ms_neurons_ = {}
        bar = progress_bar(total=len(languages), verbose=self.verbose, desc=_OWNER,
                           unit="language")
        for li, lang in enumerate(languages):
            rows = np.nonzero(langs == lang)[0]
            A = self._activations([texts[i] for i in rows])
            yl = labels[rows]
            m1, m0, d, se, t = welch(A, yl)
            stat = t if self.statistic == "t" else d
            self.harmful_mean_[li], self.harmless_mean_[li] = m1, m0
            self.contrast_[li], self.contrast_se_[li], self.statistic_[li] = d, se, stat
            self.n_harmful_[li], self.n_harmless_[li] = int(yl.sum()), int((~yl).sum())
            two_sided = self.direction == "both"
            if self.selection == "top_k":
                key = np.abs(stat) if two_sided else stat
                chosen = np.argsort(-key, kind="stable")[:k]
            else:
                p = permutation_pvalues(A, yl, stat, statistic=self.statistic,
                                        null=self.permutation_null, two_sided=two_sided,
                                        n_permutations=self.n_permutations, rng=rng)
                self.pvalues_[li] = p
                chosen = benjamini_hochberg(p, self.alpha)
            self.ms_neurons_[lang] = np.sort(chosen).astype(np.int64)
            bar.set_postfix(language=lang, prompts=len(rows), ms_neurons=len(chosen))
            bar.update()
        bar.close()
        self._select_shared()
        self.fit_time_ = time.perf_counter() - t0
        return self

    def _core(self, group):
        need = math.ceil(self.min_share * len(group) - 1e-12)
        counts = np.zeros(self.n_neurons_, dtype=np.int64)
        for lang in group:
            counts[self.ms_neurons_[lang]] += 1
        return np.nonzero(counts >= max(need, 1))[0]

    def _select_shared(self):
        a, b = self._core(self.hr_languages_), self._core(self.nhr_languages_)
        self.ss_neurons_ = np.intersect1d(a, b).astype(np.int64)
        self.overlap_ = overlap_test(a, b, self.n_neurons_, layer_of=self.neuron_layer_)
        L = len(self.languages_)
        self.overlap_counts_ = np.zeros((L, L), dtype=np.int64)
        self.overlap_pvalues_ = np.ones((L, L))
        for i, li in enumerate(self.languages_):
            for j, lj in enumerate(self.languages_):
                r = overlap_test(self.ms_neurons_[li], self.ms_neurons_[lj], self.n_neurons_)
                self.overlap_counts_[i, j] = r["observed"]
                self.overlap_pvalues_[i, j] = r["pvalue"]

    # ------------------------------------------------------------------------------ neurons
    def _neurons(self, neurons, allow_mlp=False):
        if isinstance(neurons, str):
            if neurons == "shared":
                return self.ss_neurons_
            if neurons == "mlp" and allow_mlp:
                return np.arange(self.n_neurons_)
            if neurons in self.ms_neurons_:
                return self.ms_neurons_[neurons]
            options = ["shared", *self.ms_neurons_] + (["mlp"] if allow_mlp else [])
            raise ValueError(f"neurons={neurons!r} is not one of {options} or an array of "
                             "neuron numbers")
        ids = np.unique(np.asarray(neurons, dtype=np.int64).ravel())
        if ids.size and (ids.min() < 0 or ids.max() >= self.n_neurons_):
            raise ValueError(f"neurons must be in [0, {self.n_neurons_}); got "
                             f"{ids.min()}..{ids.max()}")
        return ids

    def neuron_names(self, neurons="shared"):
        """``"<layer module>:<unit>"`` names of neurons.

        Parameters
        ----------
        neurons : "shared", a language or array-like of int, default="shared"
            The neurons.

        Returns
        -------
        names : ndarray of str
            One name per neuron.
        """
        check_is_fitted(self)
        ids = self._neurons(neurons)
        return np.asarray([f"{self.layer_names_[self.neuron_layer_[i]]}:{self.neuron_unit_[i]}"
                           for i in ids], dtype=object)

    def random_neurons(self, neurons="shared", n_sets=1, random_state=None):
        """Random neuron sets of the same size and layer profile, disjoint from ``neurons``.

        Parameters
        ----------
        neurons : "shared", a language or array-like of int, default="shared"
            The reference set.
        n_sets : int, default=1
            Number of sets.
        random_state : int, RandomState instance or None, default=None
            Seeds the draw.

        Returns
        -------
        sets : list of ndarray of int
            ``n_sets`` sorted sets with as many neurons per layer as the reference.

        Raises
        ------
        ValueError
            If a layer has too few other neurons.
        """
        check_is_fitted(self)
        ids = self._neurons(neurons)
        rng = check_random_state(random_state)
        out = []
        for _ in range(int(n_sets)):
            chosen = []
            for layer in np.unique(self.neuron_layer_[ids]):
                c = int((self.neuron_layer_[ids] == layer).sum())
                pool = np.setdiff1d(np.nonzero(self.neuron_layer_ == layer)[0], ids)
                if pool.size < c:
                    raise ValueError(f"layer {self.layer_names_[layer]} has {pool.size} neurons "
                                     f"outside the set; {c} needed for a random match")
                chosen.append(rng.choice(pool, size=c, replace=False))
            out.append(np.sort(np.concatenate(chosen)) if chosen else np.zeros(0, np.int64))
        return out

    # ------------------------------------------------------------------------ interventions
    @contextlib.contextmanager
    def _intervene(self, neurons, edit, model):
        import torch

        model = self.model_ if model is None else model
        ids = self._neurons(neurons)
        layers = find_down_projections(model, self.neuron_module)
        hooks = []
        for layer in np.unique(self.neuron_layer_[ids]):
            units = self.neuron_unit_[ids[self.neuron_layer_[ids] == layer]]
            idx = torch.as_tensor(units, dtype=torch.long, device=model_device(model))

            def hook(module, args, idx=idx, layer=int(layer)):
                x = args[0].clone()
                x[..., idx] = edit(x[..., idx], layer, idx)
                return (x, *args[1:])

            hooks.append((layers[int(layer)][1], hook))
        with hooked(hooks):
            yield model

    def suppress(self, neurons="shared", value="zero", *, language=None, model=None):
        """Context manager: set the neurons' activations to 0 or to their harmless mean.

        The hooks act at every position of every forward inside the block and are removed
        on exit, also when the block raises.

        Parameters
        ----------
        neurons : "shared", a language or array-like of int, default="shared"
            SS-Neurons, the MS-Neurons of a language, or neuron numbers.
        value : {"zero", "harmless_mean"}, default="zero"
            The value set.
        language : str or None, default=None
            Language whose harmless mean is used; ``None`` pools all fitted languages.
        model : torch.nn.Module or None, default=None
            A model of the same architecture (e.g. a fine-tuned copy); ``None`` is ``model_``.

        Returns
        -------
        context : context manager
            Yields the model.
        """
        check_is_fitted(self)
        if value not in ("zero", "harmless_mean"):
            raise ValueError(f"value must be 'zero' or 'harmless_mean'; got {value!r}")
        if value == "zero":
            return self._intervene(neurons, lambda x, layer, idx: torch_zeros_like(x), model)
        mean = self._harmless_mean(language)
        offsets = np.concatenate([[0], np.cumsum(self.layer_sizes_)])

        def edit(x, layer, idx):
            import torch

            vals = torch.as_tensor(mean[offsets[layer] + idx.cpu().numpy()], dtype=x.dtype,
                                   device=x.device)
            return vals.expand_as(x).clone()

        return self._intervene(neurons, edit, model)

    def _harmless_mean(self, language):
        if language is None:
            w = self.n_harmless_ / self.n_harmless_.sum()
            return w @ self.harmless_mean_
        where = np.nonzero(self.languages_ == language)[0]
        if where.size == 0:
            raise ValueError(f"language={language!r} is not a fitted language "
                             f"{self.languages_.tolist()}")
        return self.harmless_mean_[where[0]]

    def boost(self, neurons="shared", scale=2.0, *, model=None):
        """Context manager: multiply the neurons' activations by ``scale``.

        Parameters
        ----------
        neurons : "shared", a language or array-like of int, default="shared"
            The neurons.
        scale : float, default=2.0
            Factor (1 leaves the model unchanged).
        model : torch.nn.Module or None, default=None
            A model of the same architecture; ``None`` is ``model_``.

        Returns
        -------
        context : context manager
            Yields the model.
        """
        check_is_fitted(self)
        if not isinstance(scale, Real) or not np.isfinite(scale):
            raise ValueError(f"scale must be a finite number; got {scale!r}")
        return self._intervene(neurons, lambda x, layer, idx: x * float(scale), model)

    # ------------------------------------------------------------------------------ refusal
    def activations(self, X, neurons=None):
        """Neuron activations at the read positions (``positions``).

        Parameters
        ----------
        X : list of str or DataFrame
            Prompts (a DataFrame's ``language`` column is ignored).
        neurons : None, "shared", a language or array-like of int, default=None
            Columns returned; ``None`` is every neuron, in neuron-number order.

        Returns
        -------
        A : ndarray of shape (n, n_columns)
            The float64 activations.
        """
        check_is_fitted(self)
        texts, _ = _parse_prompts(X, None, require_language=False)
        A = self._activations(texts).astype(np.float64)
        return A if neurons is None else A[:, self._neurons(neurons)]

    def transform(self, X):
        """Activations of the SS-Neurons at the read positions.

        Parameters
        ----------
        X : list of str or DataFrame
            Prompts (a DataFrame's ``language`` column is ignored).

        Returns
        -------
        A : ndarray of shape (n, n_ss_neurons)
            The float64 activations, columns in the order of ``ss_neurons_``.
        """
        return self.activations(X, "shared")

    def get_feature_names_out(self, input_features=None):
        """Names of the SS-Neurons (see :meth:`neuron_names`).

        Parameters
        ----------
        input_features : None
            Ignored.

        Returns
        -------
        names : ndarray of str
            One per column of :meth:`transform`.
        """
        return self.neuron_names("shared")

    def refusal_log_odds(self, X, *, model=None):
        """First-token refusal log-odds of each prompt (one forward per prompt).

        ``log(p / (1 - p))`` with ``p`` the next-token probability mass of
        ``refusal_token_ids_`` after the prompt (chat template applied): a proxy of refusal
        that needs no generation.

        Parameters
        ----------
        X : list of str or DataFrame
            Prompts.
        model : torch.nn.Module or None, default=None
            Another model of the same tokenizer; ``None`` is ``model_``.

        Returns
        -------
        log_odds : ndarray of shape (n,)
            The log-odds (float64).
        """
        check_is_fitted(self)
        from scipy.special import logsumexp

        model = self.model_ if model is None else model
        texts, _ = _parse_prompts(X, None, require_language=False)
        tokens = self._tokens()
        mask = np.zeros(0, dtype=bool)
        out = np.empty(len(texts))
        for i, t in enumerate(texts):
            lp = next_token_log_probs(model, tokens.prompt(t))
            if mask.size != lp.size:
                mask = np.zeros(lp.size, dtype=bool)
                mask[self.refusal_token_ids_[self.refusal_token_ids_ < lp.size]] = True
            out[i] = logsumexp(lp[mask]) - logsumexp(lp[~mask])
        return out

    def generate(self, X, *, max_new_tokens=64, model=None):
        """Greedy responses to the prompts.

        Parameters
        ----------
        X : list of str or DataFrame
            Prompts.
        max_new_tokens : int, default=64
            Tokens generated at most (fewer when the model emits its end token).
        model : torch.nn.Module or None, default=None
            Another model of the same tokenizer; ``None`` is ``model_``.

        Returns
        -------
        responses : list of str
            One per prompt.
        """
        check_is_fitted(self)
        model = self.model_ if model is None else model
        texts, _ = _parse_prompts(X, None, require_language=False)
        tokens = self._tokens()
        return [tokens.decode(greedy_generate(model, tokens.prompt(t), int(max_new_tokens),
                                              tokens.eos_id)) for t in texts]

    def refusal_scores(self, X, language=None, *, measure="log_odds", max_new_tokens=64,
                       model=None):
        """Per-prompt refusal: first-token log-odds, or the judge's label of a generation.

        Parameters
        ----------
        X : list of str or DataFrame
            Prompts.
        language : str, array-like of str or None, default=None
            Language per prompt (or a ``language`` column); needed by ``measure="judge"``.
        measure : {"log_odds", "judge"}, default="log_odds"
            The refusal measure.
        max_new_tokens : int, default=64
            Generation length of the judge.
        model : torch.nn.Module or None, default=None
            Another model; ``None`` is ``model_``.

        Returns
        -------
        scores : DataFrame
            ``language`` and ``refusal`` (the log-odds, or 1.0 / 0.0 for a judged refusal);
            with the judge also ``label`` and ``response``.

        Raises
        ------
        ValueError
            If the judge has no markers for a language, or ``language`` is missing with
            ``measure="judge"``.
        """
        check_is_fitted(self)
        if measure not in ("log_odds", "judge"):
            raise ValueError(f"measure must be 'log_odds' or 'judge'; got {measure!r}")
        texts, langs = _parse_prompts(X, language, require_language=measure == "judge")
        langs = langs if langs is not None else ["all"] * len(texts)
        if measure == "log_odds":
            return pd.DataFrame({"language": langs,
                                 "refusal": self.refusal_log_odds(texts, model=model)})
        judge = self._judge()
        judge.check_languages(set(langs), "language")
        responses = self.generate(texts, max_new_tokens=max_new_tokens, model=model)
        labels = judge.judge(responses, langs)
        return pd.DataFrame({"language": langs, "refusal": (labels == "refusal").astype(float),
                             "label": labels, "response": responses})

    def causal_check(self, X, language=None, *, neurons="shared", mode="suppress",
                     value="zero", scale=2.0, measure="log_odds", n_random=20,
                     max_new_tokens=32, random_state=None):
        """Refusal under an intervention on ``neurons`` against random sets, per language.

        For each language: the mean refusal without intervention (``base``), with the
        intervention on ``neurons`` (``targeted``) and on each of ``n_random`` random sets of
        the same size and layer profile (disjoint from ``neurons``). ``pvalue`` is the
        permutation p-value ``(1 + #{random effect <= targeted effect}) / (n_random + 1)`` for
        suppression (``>=`` for boosting): small when the targeted set moves refusal more
        than random sets do.

        Parameters
        ----------
        X : list of str or DataFrame
            Prompts (harmful ones, typically held out).
        language : str, array-like of str or None, default=None
            Language per prompt; ``None`` reads a ``language`` column, else one group
            ``"all"`` (``measure="log_odds"`` only).
        neurons : "shared", a language or array-like of int, default="shared"
            The targeted set.
        mode : {"suppress", "boost"}, default="suppress"
            The intervention.
        value : {"zero", "harmless_mean"}, default="zero"
            Suppression value.
        scale : float, default=2.0
            Boost factor.
        measure : {"log_odds", "judge"}, default="log_odds"
            Refusal measure (see :meth:`refusal_scores`).
        n_random : int, default=20
            Random sets.
        max_new_tokens : int, default=32
            Generation length of the judge.
        random_state : int, RandomState instance or None, default=None
            Seeds the random sets.

        Returns
        -------
        result : DataFrame
            One row per language: ``language``, ``n_prompts``, ``n_neurons``, ``base``,
            ``targeted``, ``effect``, ``random_effect_mean``, ``random_effect_sd``,
            ``pvalue``.
        """
        check_is_fitted(self)
        if mode not in ("suppress", "boost"):
            raise ValueError(f"mode must be 'suppress' or 'boost'; got {mode!r}")
        ids = self._neurons(neurons)
        if ids.size == 0:
            raise ValueError(f"neurons={neurons!r} is empty: nothing to intervene on")
        texts, langs = _parse_prompts(X, language, require_language=measure == "judge")
        langs = langs if langs is not None else ["all"] * len(texts)

        def run(neuron_set):
            cm = (self.suppress(neuron_set, value) if mode == "suppress"
                  else self.boost(neuron_set, scale))
            with cm:
                s = self.refusal_scores(texts, langs, measure=measure,
                                        max_new_tokens=max_new_tokens)
            return s.groupby("language")["refusal"].mean()

        base = self.refusal_scores(texts, langs, measure=measure,
                                   max_new_tokens=max_new_tokens)
        base = base.groupby("language")["refusal"].mean()
        targeted = run(ids)
        randoms = [run(r) for r in self.random_neurons(ids, int(n_random), random_state)]
        rows = []
        n_per = pd.Series(langs).value_counts()
        for lang in base.index:
            eff = targeted[lang] - base[lang]
            reff = np.array([r[lang] - base[lang] for r in randoms])
            hits = (reff <= eff) if mode == "suppress" else (reff >= eff)
            rows.append({"language": lang, "n_prompts": int(n_per[lang]),
                         "n_neurons": int(ids.size), "base": float(base[lang]),
                         "targeted": float(targeted[lang]), "effect": float(eff),
                         "random_effect_mean": float(reff.mean()) if reff.size else np.nan,
                         "random_effect_sd": float(reff.std(ddof=1)) if reff.size > 1
                         else np.nan,
                         "pvalue": float((1 + hits.sum()) / (reff.size + 1))})
        return pd.DataFrame(rows)

    # ---------------------------------------------------------------------------- training
    def perplexity(self, texts, responses=None, *, model=None):
        """Perplexity of texts (or of responses given their prompts): the general-ability check.

        Without ``responses`` each text is scored from its second token on (the first, after
        the tokenizer's special tokens, has no context to be predicted from).

        Parameters
        ----------
        texts : list of str
            Texts; with ``responses``, the prompts.
        responses : list of str or None, default=None
            Responses scored after their prompt (chat template applied).
        model : torch.nn.Module or None, default=None
            Another model of the same tokenizer; ``None`` is ``model_``.

        Returns
        -------
        perplexity : float
            ``exp`` of the mean token negative log-likelihood.
        """
        import torch

        check_is_fitted(self)
        model = self.model_ if model is None else model
        tokens = self._tokens()
        texts = check_texts(texts, name="texts", owner=_OWNER)
        total, count = 0.0, 0
        with torch.no_grad():
            for i, t in enumerate(texts):
                if responses is None:
                    ids = list(tokens.tok.encode(t, add_special_tokens=True))
                    if len(ids) < 2:
                        continue
                    prompt, resp = ids[:1], ids[1:]
                else:
                    prompt, resp = tokens.prompt(t), tokens.plain(responses[i])
                total += float(response_nll(model, prompt, resp))
                count += len(resp)
        if count == 0:
            raise ValueError("texts hold no token to score (each text needs 2 tokens or more)")
        return float(np.exp(total / count))

    @Substitution(**_torch_docstrings)
    def finetune(self, X, responses, *, neurons="shared", max_iter=50, lr=1e-4, batch_size=4,
                 optimizer="adam", optimizer_params=None, weight_decay=0.0, random_state=None,
                 verbose=0):
        """Fine-tune a copy of the model with gradients masked to the neurons' parameters.

        The trainable entries are, for each chosen neuron ``j`` of a layer, row ``j`` of every
        projection into the MLP's hidden width (``gate_proj``, ``up_proj``; their bias
        entries) and column ``j`` of ``down_proj``; everything else is frozen (gradients
        masked, and masked entries restored after every step, so momentum or weight decay
        cannot move them). ``neurons="mlp"`` trains every MLP neuron (full-MLP tuning). The
        loss is the token-mean negative log-likelihood of the responses given their prompts
        (chat template applied), on ``batch_size`` pairs drawn without replacement per step.

        Parameters
        ----------
        X : list of str or DataFrame
            Prompts (e.g. harmful prompts in the languages to improve).
        responses : list of str
            Target responses (e.g. refusals), one per prompt.
        neurons : "shared", "mlp", a language or array-like of int, default="shared"
            The neurons trained.
        max_iter : int, default=50
            Optimizer steps.
        lr : float, default=1e-4
            {lr}
        batch_size : int, default=4
            Pairs per step.
        optimizer : str or torch optimizer class, default="adam"
            {optimizer}
        optimizer_params : dict or None, default=None
            {optimizer_params}
        weight_decay : float, default=0.0
            {weight_decay}
            It acts on the trainable entries only.
        random_state : int, RandomState instance or None, default=None
            Seeds the batches.
        verbose : int, default=0
            One line per logged step.

        Returns
        -------
        result : Bunch
            ``model`` (the tuned copy, in eval mode; ``model_`` is untouched),
            ``loss_curve`` (list of float, per step), ``n_iter``, ``neurons``,
            ``n_trainable`` (entries), ``trainable_fraction`` (of all parameters).
        """
        import torch

        from ..base import DivergenceGuard, EpochLogger, make_optimizer, seeded_torch

        check_is_fitted(self)
        texts, _ = _parse_prompts(X, None, require_language=False)
        responses = check_texts(responses, name="responses", owner=_OWNER)
        if len(responses) != len(texts):
            raise ValueError(f"responses has {len(responses)} entries but X has {len(texts)}")
        for name, v, lo in (("max_iter", max_iter, 1), ("batch_size", batch_size, 1)):
            if not isinstance(v, Integral) or isinstance(v, bool) or v < lo:
                raise ValueError(f"{name} must be an int >= {lo}; got {v!r}")
        ids = self._neurons(neurons, allow_mlp=True)
        if ids.size == 0:
            raise ValueError(f"neurons={neurons!r} is empty: nothing to fine-tune")
        model = deepcopy_model(self.model_)
        layers = find_down_projections(model, self.neuron_module)
        for p in model.parameters():
            p.requires_grad_(False)
        trained, modules = [], []  # (parameter, mask, original)
        for layer in np.unique(self.neuron_layer_[ids]):
            name, down, width = layers[int(layer)]
            units = torch.as_tensor(self.neuron_unit_[ids[self.neuron_layer_[ids] == layer]])
            parts = [(down, "col" if isinstance(down, torch.nn.Linear) else "row")]
            parts += [(m, how) for _, m, how in mlp_input_projections(model, name, width)]
            for module, how in parts:
                modules.append(module)
                w = module.weight
                mask = torch.zeros_like(w, dtype=torch.bool)
                if how == "row":
                    mask[units, :] = True
                else:
                    mask[:, units] = True
                trained.append((w, mask, w.detach().clone()))
                bias = getattr(module, "bias", None)
                if bias is not None and module is not down:
                    bmask = torch.zeros_like(bias, dtype=torch.bool)
                    bmask[units] = True
                    trained.append((bias, bmask, bias.detach().clone()))
        for p, _, _ in trained:
            p.requires_grad_(True)
        spec = types.SimpleNamespace(optimizer=optimizer, lr=lr, weight_decay=weight_decay,
                                     optimizer_params=optimizer_params)
        opt = make_optimizer(spec, [p for p, _, _ in trained])
        tokens = self._tokens()
        pairs = [(tokens.prompt(t), tokens.plain(r) + ([tokens.eos_id] if tokens.eos_id
                                                       is not None else []))
                 for t, r in zip(texts, responses, strict=True)]
        name = f"{_OWNER}.finetune"
        guard = DivergenceGuard(modules, name, unit="step")
        logger = EpochLogger(verbose, max_iter, name=name, unit="step")
        curve = []
        model.train()
        with seeded_torch(random_state) as seed:
            rng = np.random.default_rng(seed)
            for step in range(1, max_iter + 1):
                batch = rng.choice(len(pairs), size=min(batch_size, len(pairs)), replace=False)
                opt.zero_grad()
                nll = sum(response_nll(model, *pairs[i]) for i in batch)
                loss = nll / sum(len(pairs[i][1]) for i in batch)
                loss.backward()
                for p, mask, _ in trained:
                    p.grad.mul_(mask)
                opt.step()
                with torch.no_grad():
                    for p, mask, orig in trained:
                        p.copy_(torch.where(mask, p, orig))
                if guard.observe(loss.detach()):
                    break
                curve.append(loss.item())
                logger.log(step, train_loss=curve[-1])
                if guard.checkpoint(step, loss=curve[-1]):
                    break
        n_iter = guard.finish()
        model.eval()
        for p in model.parameters():
            p.requires_grad_(True)
        n_trainable = int(sum(int(m.sum()) for _, m, _ in trained))
        total = sum(p.numel() for p in model.parameters())
        return Bunch(model=model, loss_curve=curve, n_iter=n_iter, neurons=ids,
                     n_trainable=n_trainable, trainable_fraction=n_trainable / total)

    # ------------------------------------------------------------------------------- tags
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.requires_fit = True
        tags.non_deterministic = False
        return tags

    @classmethod
    def _get_test_params(cls):
        from ._toy import ToyLMFactory

        return [{"model": ToyLMFactory(), "tokenizer": ByteTokenizer(), "selection": "top_k",
                 "k": 6, "hr_languages": ("aa",), "random_state": 0}]


def torch_zeros_like(x):
    import torch

    return torch.zeros_like(x)
