"""Semantic information gain of retrieved evidence (InfoReasoner).

A passage is scored by how it moves a generator's belief over the *semantic clusters* of its
sampled answers: sample answers with and without the passage, cluster them by meaning, weigh them
by their length-normalised likelihood, and take the gain in belief on the gold answer (or the
drop in semantic entropy when no gold answer is known).
"""

import hashlib
import math
import warnings
from collections import OrderedDict
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import Bunch, check_random_state
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions, _fit_context
from ._generators import SmolLM2Generator, build_prompt
from ._semantic_entropy import _RELATIONS, _clusters, _entropy, _relation_matrix, _weights

__all__ = ["SampleCache", "SemanticInfoGainScorer"]

def _question_seed(question, base_seed):
    digest = hashlib.sha1(question.encode("utf-8")).hexdigest()[:8]
    return (int(base_seed) + int(digest, 16)) % (2**32)


def _check_answers(answers, *, allow_none=True):
    if answers is None:
        if allow_none:
            return None
        raise ValueError("answers is None; expected a non-empty str or list of str")
    if isinstance(answers, str):
        answers = [answers]
    if isinstance(answers, np.ndarray):
        answers = answers.tolist()
    if not isinstance(answers, list | tuple):
        raise ValueError(f"answers must be a str or a list of str, got {type(answers).__name__}")
    answers = list(answers)
    if not answers:
        raise ValueError("answers is empty; expected at least one gold answer (str)")
    for i, a in enumerate(answers):
        if not isinstance(a, str):
            raise ValueError(f"answers[{i}] is {type(a).__name__}; expected str")
        if not a.strip():
            raise ValueError(f"answers[{i}] is an empty string; expected a non-empty gold answer")
    return answers


class SampleCache:
    """A memo of generator samples keyed by ``(prompt, n_samples, seed)``, shareable by scorers.

    Pass one instance as ``cache=`` to several :class:`SemanticInfoGainScorer` variants that use
    the same generator: each prompt is then generated once and every variant (relation, belief,
    gain, weighting) is computed from the same samples.

    Parameters
    ----------
    maxsize : int or None, default=None
        Most entries kept (least recently used dropped first); ``None`` is unbounded.

    Attributes
    ----------
    hits : int
        Look-ups answered from the memo.
    misses : int
        Look-ups that needed the generator.

    Examples
    --------
    >>> from sklearn_icml26.retrieval import SampleCache
    >>> cache = SampleCache()
    >>> cache.put(("prompt", 2, 0), (["a", "b"], [0.0, 0.0]))
    >>> cache.get(("prompt", 2, 0))[0]
    ['a', 'b']
    """

    def __init__(self, maxsize=None):
        self.maxsize = maxsize
        self._data = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key):
        """The stored samples of ``key``, or ``None`` (counted as a hit or a miss)."""
        if key in self._data:
            self._data.move_to_end(key)
            self.hits += 1
            return self._data[key]
        self.misses += 1
        return None

    def put(self, key, value):
        """Store samples under ``key``."""
        self._data[key] = value
        self._data.move_to_end(key)
        if self.maxsize is not None:
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def clear(self):
        """Drop every entry and reset the counters."""
        self._data.clear()
        self.hits = self.misses = 0

    def __len__(self):
        return len(self._data)

    def __repr__(self):
        return f"SampleCache(<{len(self._data)} entries>)"


def _check_rows(X, owner, need_passage=True):
    """Rows of (question, passage, answers) from a DataFrame or a list of dicts."""
    if isinstance(X, pd.DataFrame):
        records = X.to_dict(orient="records")
    elif isinstance(X, dict):
        raise TypeError(f"X must be a DataFrame or a list of dicts, got a single dict; wrap it "
                        f"in a list ({owner})")
    elif isinstance(X, list | tuple) and all(isinstance(r, dict) for r in X):
        records = list(X)
    else:
        raise TypeError(f"X must be a pandas DataFrame or a list of dicts with keys 'question', "
                        f"'passage' and optionally 'answers'; got {type(X).__name__} ({owner})")
    if not records:
        raise ValueError(f"X has 0 rows; {owner} needs at least one (question, passage) row")
    needed = ("question", "passage") if need_passage else ("question",)
    rows = []
    for i, r in enumerate(records):
        missing = [k for k in needed if k not in r]
        if missing:
            raise ValueError(f"X row {i} has no {missing} column(s); {owner} needs "
                             f"{list(needed)} (got {sorted(r)})")
        q, p = r["question"], r.get("passage", "")
        if not isinstance(q, str):
            raise TypeError(f"X row {i}: question is {type(q).__name__}; expected str")
        if not isinstance(p, str):
            raise TypeError(f"X row {i}: passage is {type(p).__name__}; expected str")
        a = r.get("answers", None)
        if a is not None and not isinstance(a, str | list | tuple | np.ndarray):
            if isinstance(a, float) and math.isnan(a):
                a = None
            else:
                raise ValueError(f"X row {i}: answers is {type(a).__name__}; expected str, "
                                 "list of str or None")
        if a is not None:
            a = _check_answers(a)
        rows.append((q, p, a))
    return rows


# ----------------------------------------------------------------------------------------------
# the scorer
# ----------------------------------------------------------------------------------------------
class SemanticInfoGainScorer(TransformerMixin, BaseEstimator):
    """Semantic information gain of a retrieved passage for a question (InfoReasoner's reward).

    For a question ``x`` and a context ``c`` (``""`` is the no-context baseline) the generator
    samples ``n`` answers ``y_r`` with mean per-token log-probabilities ``l_r``. Weights are
    ``w_r = softmax(l)_r`` (``weighting="likelihood"``) or ``1/n`` (``"count"``). A relation
    ``P(a |= b)`` ("a states b") clusters the answers (connected components of
    ``P(a |= b) > threshold`` and ``P(b |= a) > threshold``) into a belief state with cluster
    probabilities ``p(C_m)`` and semantic entropy ``H = -sum_m p(C_m) ln p(C_m)``.

    With gold answers ``A`` the belief on the gold is

    - ``belief="hard"``: the mass of the clusters holding an answer that matches a gold answer;
    - ``belief="soft"``: ``max_a sum_r w_r max(P(y_r |= a), P(a |= y_r))``, in ``[0, 1]``.

    The gain of a context ``C`` over the baseline ``B`` is ``b(C) - b(B)``
    (``gain="difference"``), ``ln max(b(C), eps) - ln max(b(B), eps)`` (``"log_ratio"``), or
    ``H(B) - H(C)`` (``"entropy"``, needs no gold answer). Every state of one question is
    sampled with the same seed (common random numbers), so differences between passages are not
    dominated by sampling noise. Gains may be negative: a misleading passage lowers the gold
    belief; only their expectation under a Bayesian reader is guaranteed non-negative.

    As a transformer, ``transform(X)`` maps rows ``(question, passage[, answers])`` to their gain.

    Parameters
    ----------
    generator : callable, "smollm2" or None, default=None
        ``generator(prompts, n_samples, seed) -> [(texts, mean_logprobs), ...]``, one pair per
        prompt, deterministic for a seed; ``"smollm2"`` is :class:`SmolLM2Generator` with its
        defaults. Required before :meth:`fit`.
    n_samples : int, default=8
        Answers sampled per state.
    belief : {"soft", "hard"}, default="soft"
        Form of the gold belief.
    gain : {"difference", "log_ratio", "entropy"}, default="difference"
        Form of the gain.
    equivalence : {"exact+embedding", "exact", "lexical"} or callable, \
default="exact+embedding"
        The relation ``P(a |= b)`` on LoCoMo-normalised answers: ``"exact"`` is 1 on equal
        normalised strings; ``"exact+embedding"`` is 1 on equal strings, else
        ``clip((cos(a, b) - cosine_floor) / (1 - cosine_floor), 0, 1)`` of embedding cosines;
        ``"lexical"`` is the share of ``b``'s content tokens (Porter stems, stop words removed,
        with multiplicity) found in ``a``; a callable ``f(texts_a, texts_b)`` returns an
        ``(n_a, n_b)`` array of probabilities (e.g. an NLI model's entailment probability).
    threshold : float, default=0.5
        Entailment threshold of the hard equivalence and of a hard gold match.
    cosine_floor : float, default=0.3
        Cosine mapped to probability 0 by ``"exact+embedding"`` (equivalence needs cosine above
        ``(1 + cosine_floor) / 2``).
    gold_match : {"bidirectional", "either"}, default="bidirectional"
        Hard belief: a sample matches a gold answer when both directions exceed ``threshold``,
        or when either does.
    weighting : {"likelihood", "count"}, default="likelihood"
        Sample weights.
    belief_floor : float or None, default=None
        ``eps`` of ``"log_ratio"``; ``None`` is half a sample, ``1 / (2 n)``.
    prefix_question : bool or "auto", default="auto"
        Prefix answers with the question before applying the relation; ``"auto"`` does so only
        for callable relations (a shared prefix inflates cosine and token overlap).
    max_context_words : int, default=512
        Contexts are cut to their first words (with a warning).
    embedder : transformer or None, default=None
        Text embedder of ``"exact+embedding"`` (``transform(list of str)`` returns vectors);
        ``None`` is :class:`~sklearn_icml26.feature_extraction.SentenceEmbedder` (MiniLM when
        installed).
        An unfitted scikit-learn embedder is cloned and fitted on one placeholder text; any
        other object is used as it is.
    cache : bool or SampleCache, default=True
        Memo of samples by ``(prompt, n_samples, seed)``: each state is generated once. A
        :class:`SampleCache` may be shared by several scorers with the same generator.
    random_state : int, RandomState instance or None, default=None
        Base seed of the per-question seeds; a non-int is drawn from once in :meth:`fit`.

    Attributes
    ----------
    generator_ : callable
        The resolved generator.
    embedder_ : transformer or None
        The fitted embedder (``"exact+embedding"`` only).
    base_seed_ : int
        Base seed; question ``x`` is sampled with seed
        ``(base_seed_ + int(sha1(x)[:8], 16)) mod 2**32``.
    n_generator_calls_ : int
        Prompts sent to the generator so far.

    See Also
    --------
    InfoGainReranker : Ranks candidate passages by their information gain.
    semantic_entropy : The entropy of a set of sampled answers.

    References
    ----------
    Hu, Dai, Zhao, Tao, Guo, Fang, Kwong, Fang, "Optimizing Agentic Reasoning with Retrieval via
    Synthetic Semantic Information Gain Reward", ICML 2026, arXiv:2602.00845.

    Farquhar, Kossen, Kuhn, Gal, "Detecting hallucinations in large language models using
    semantic entropy", Nature 630 (2024).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.retrieval import SemanticInfoGainScorer, TableGenerator
    >>> gen = TableGenerator({
    ...     "": (["Paris", "paris", "London", "Rome"], np.log([.4, .2, .3, .1])),
    ...     "France's capital is Paris.": (["Paris", "Paris", "Paris", "London"],
    ...                                    np.log([.5, .2, .2, .1])),
    ... })
    >>> scorer = SemanticInfoGainScorer(gen, n_samples=4, equivalence="exact").fit()
    >>> q = "What is the capital of France?"
    >>> round(scorer.information_gain(q, "Paris", context="France's capital is Paris."), 6)
    0.3
    """

    _parameter_constraints = {
        "generator": [callable, StrOptions({"smollm2"}), None],
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "belief": [StrOptions({"soft", "hard"})],
        "gain": [StrOptions({"difference", "log_ratio", "entropy"})],
        "equivalence": [StrOptions(set(_RELATIONS)), callable],
        "threshold": [Interval(Real, 0, 1, closed="left")],
        "cosine_floor": [Interval(Real, -1, 1, closed="left")],
        "gold_match": [StrOptions({"bidirectional", "either"})],
        "weighting": [StrOptions({"likelihood", "count"})],
        "belief_floor": [Interval(Real, 0, 1, closed="neither"), None],
        "prefix_question": ["boolean", StrOptions({"auto"})],
        "max_context_words": [Interval(Integral, 1, None, closed="left")],
        "embedder": "no_validation",
        "cache": ["boolean", SampleCache],
        "random_state": ["random_state"],
    }

    def __init__(self, generator=None, *, n_samples=8, belief="soft", gain="difference",
                 equivalence="exact+embedding", threshold=0.5, cosine_floor=0.3,
                 gold_match="bidirectional", weighting="likelihood", belief_floor=None,
                 prefix_question="auto", max_context_words=512, embedder=None, cache=True,
                 random_state=None):
        self.generator = generator
        self.n_samples = n_samples
        self.belief = belief
        self.gain = gain
        self.equivalence = equivalence
        self.threshold = threshold
        self.cosine_floor = cosine_floor
        self.gold_match = gold_match
        self.weighting = weighting
        self.belief_floor = belief_floor
        self.prefix_question = prefix_question
        self.max_context_words = max_context_words
        self.embedder = embedder
        self.cache = cache
        self.random_state = random_state

    # ---------------------------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X=None, y=None):
        """Resolve the generator, the relation and the embedder; nothing is learned.

        Parameters
        ----------
        X : None or rows, default=None
            Ignored (accepted so the scorer fits in a Pipeline).
        y : None
            Ignored.

        Returns
        -------
        self : SemanticInfoGainScorer
            The fitted scorer.

        Raises
        ------
        ValueError
            If ``generator`` is None or a parameter is out of range.
        TypeError
            If ``generator`` is not callable.
        """
        if self.generator is None:
            raise ValueError("generator is None; pass a callable generator(prompts, n_samples, "
                             "seed), a TableGenerator, or 'smollm2'")
        gen = SmolLM2Generator() if isinstance(self.generator, str) else self.generator
        if not callable(gen):
            raise TypeError(f"generator must be callable, got {type(gen).__name__}")
        self.generator_ = gen
        self.embedder_ = None
        if self.equivalence == "exact+embedding":
            self.embedder_ = self._resolve_embedder()
        if isinstance(self.random_state, Integral):
            self.base_seed_ = int(self.random_state) % (2**32)
        else:
            self.base_seed_ = int(check_random_state(self.random_state).randint(0, 2**31 - 1))
        self.cache_ = self.cache if isinstance(self.cache, SampleCache) else (
            SampleCache() if self.cache else None)
        self.n_generator_calls_ = 0
        return self

    def _resolve_embedder(self):
        from ..feature_extraction import SentenceEmbedder

        emb = self.embedder
        if emb is None:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                emb = SentenceEmbedder().fit(["information gain"])
            if caught:
                warnings.warn(
                    "equivalence='exact+embedding': the MiniLM embedder is not installed, the "
                    "hashing fallback is used; cosine_floor=0.3 was calibrated on MiniLM cosines "
                    "and no longer holds (pip install 'sklearn_icml26[memory]', or pass "
                    "embedder=)", UserWarning, stacklevel=3)
            return emb
        if not hasattr(emb, "transform"):
            raise TypeError(f"embedder must have a transform(texts) method, got "
                            f"{type(emb).__name__}")
        if isinstance(emb, BaseEstimator):
            try:
                check_is_fitted(emb)
            except NotFittedError:
                emb = clone(emb).fit(["information gain"])
        return emb

    # ------------------------------------------------------------------------------ sampling
    def _truncate(self, context):
        words = context.split()
        if len(words) > self.max_context_words:
            warnings.warn(f"context has {len(words)} words; cut to max_context_words="
                          f"{self.max_context_words}", UserWarning, stacklevel=4)
            return " ".join(words[: self.max_context_words])
        return context

    def _check_result(self, result, n_prompts):
        if not isinstance(result, list | tuple) or len(result) != n_prompts:
            got = len(result) if hasattr(result, "__len__") else type(result).__name__
            raise ValueError(f"generator returned {got} results for {n_prompts} prompts; "
                             "expected a list with one (texts, mean_logprobs) pair per prompt")
        exact_n = getattr(self.generator_, "exact_n_samples", True)
        out = []
        for k, item in enumerate(result):
            if not isinstance(item, list | tuple) or len(item) != 2:
                raise ValueError(f"generator result {k} is not a (texts, mean_logprobs) pair "
                                 f"(got {type(item).__name__} of arity "
                                 f"{len(item) if hasattr(item, '__len__') else '?'})")
            texts, lp = item
            if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
                raise ValueError(f"generator result {k}: texts must be a list of str")
            texts = list(texts)
            lp = np.asarray(lp, dtype=np.float64).reshape(-1)
            if len(texts) != lp.shape[0]:
                raise ValueError(f"generator result {k}: {len(texts)} texts but {lp.shape[0]} "
                                 "mean_logprobs; expected one log-probability per text")
            if exact_n and len(texts) != self.n_samples:
                raise ValueError(f"generator returned {len(texts)} samples for prompt {k}; "
                                 f"expected n_samples={self.n_samples}")
            if not texts:
                raise ValueError(f"generator result {k} has no samples")
            if not np.all(np.isfinite(lp)):
                bad = lp[~np.isfinite(lp)][:3].tolist()
                raise ValueError(f"generator returned non-finite mean_logprobs {bad} for prompt "
                                 f"{k}; expected finite mean log-probabilities")
            out.append((texts, lp))
        return out

    def _samples(self, question, contexts):
        """(texts, mean_logprobs) for each context of one question, via the cache."""
        seed = _question_seed(question, self.base_seed_)
        prompts = [build_prompt(question, self._truncate(c)) for c in contexts]
        keys = [(p, self.n_samples, seed) for p in prompts]
        found = [self.cache_.get(k) if self.cache_ is not None else None for k in keys]
        todo = sorted({p for p, f in zip(prompts, found, strict=True) if f is None},
                      key=prompts.index)
        if todo:
            result = self._check_result(self.generator_(todo, self.n_samples, seed), len(todo))
            self.n_generator_calls_ += len(todo)
            fresh = dict(zip(todo, result, strict=True))
            if self.cache_ is not None:
                for p, r in fresh.items():
                    self.cache_.put((p, self.n_samples, seed), r)
            found = [f if f is not None else fresh[p]
                     for p, f in zip(prompts, found, strict=True)]
        return found, seed

    def _prefixed(self, question, texts):
        prefix = self.prefix_question
        if prefix == "auto":
            prefix = callable(self.equivalence)
        return [f"{question} {t}" for t in texts] if prefix else list(texts)

    def _relation(self, a, b):
        return _relation_matrix(a, b, self.equivalence, cosine_floor=self.cosine_floor,
                                embedder=self.embedder_)

    def _state(self, question, texts, lp, seed, answers):
        texts_r = self._prefixed(question, texts)
        if all(t.strip() == "" for t in texts):
            warnings.warn("every sampled answer is an empty string: entropy 0 and belief 0",
                          UserWarning, stacklevel=4)
            n = len(texts)
            return Bunch(texts=list(texts), mean_logprobs=lp, weights=_weights(lp, self.weighting),
                         cluster_ids=np.zeros(n, dtype=np.int64), cluster_probs=np.ones(1),
                         entropy=0.0, seed=seed, belief=0.0 if answers is not None else np.nan)
        rel = self._relation(texts_r, texts_r)
        ids = _clusters(texts_r, rel, self.threshold)
        w = _weights(lp, self.weighting)
        probs = np.bincount(ids, weights=w)
        state = Bunch(texts=list(texts), mean_logprobs=lp, weights=w, cluster_ids=ids,
                      cluster_probs=probs, entropy=_entropy(probs, None), seed=seed,
                      belief=np.nan)
        if answers is not None:
            state.belief = self._gold_belief(question, texts, w, ids, probs, answers)
        return state

    def _gold_belief(self, question, texts, w, ids, probs, answers):
        a_r = self._prefixed(question, answers)
        y_r = self._prefixed(question, texts)
        fwd = self._relation(y_r, a_r)  # P(y |= a)
        bwd = self._relation(a_r, y_r).T  # P(a |= y)
        empty = np.array([t.strip() == "" for t in texts])
        fwd[empty], bwd[empty] = 0.0, 0.0
        if self.belief == "soft":
            mass = w @ np.maximum(fwd, bwd)
            return float(np.clip(mass.max(), 0.0, 1.0))
        if self.gold_match == "bidirectional":
            match = (fwd > self.threshold) & (bwd > self.threshold)
        else:
            match = (fwd > self.threshold) | (bwd > self.threshold)
        hit = np.zeros(len(probs), dtype=bool)
        hit[ids[match.any(axis=1)]] = True
        return float(np.clip(probs[hit].sum(), 0.0, 1.0))

    def _states(self, question, contexts, answers):
        if not isinstance(question, str):
            raise TypeError(f"question must be a str, got {type(question).__name__}")
        for c in contexts:
            if not isinstance(c, str):
                raise TypeError(f"context must be a str, got {type(c).__name__}")
        samples, seed = self._samples(question, contexts)
        return [self._state(question, t, lp, seed, answers) for t, lp in samples]

    def _value(self, state):
        """State function f whose differences are the gains."""
        if self.gain == "entropy":
            return -state.entropy
        if self.gain == "difference":
            return state.belief
        floor = self.belief_floor if self.belief_floor is not None else 0.5 / len(state.texts)
        return math.log(max(state.belief, floor))

    def _answers_for_gain(self, answers):
        answers = _check_answers(answers)
        if answers is None and self.gain != "entropy":
            raise ValueError(f"gain={self.gain!r} needs gold answers; use gain='entropy' for a "
                             "gold-free score")
        return answers

    # -------------------------------------------------------------------------- public API
    def belief_state(self, question, context=""):
        """Sampled answers of a question under a context, clustered into a belief state.

        Parameters
        ----------
        question : str
            The question.
        context : str, default=""
            Evidence passage; ``""`` is the no-context baseline.

        Returns
        -------
        state : Bunch
            ``texts`` (list of n str), ``mean_logprobs`` (n,), ``weights`` (n,),
            ``cluster_ids`` (n,) int, ``cluster_probs`` (n_clusters,), ``entropy`` (nats),
            ``seed`` (int).
        """
        check_is_fitted(self)
        state = self._states(question, [context], None)[0]
        del state["belief"]
        return state

    def gold_belief(self, question, answers, context=""):
        """Belief on the gold answers (``belief`` form) under a context.

        Parameters
        ----------
        question : str
            The question.
        answers : str or list of str
            Gold answers (at least one).
        context : str, default=""
            Evidence passage.

        Returns
        -------
        belief : float
            In ``[0, 1]``.

        Raises
        ------
        ValueError
            If ``answers`` is empty or holds a non-str.
        """
        check_is_fitted(self)
        answers = _check_answers(answers, allow_none=False)
        return float(self._states(question, [context], answers)[0].belief)

    def information_gain(self, question, answers=None, context="", baseline_context=""):
        """Gain of ``context`` over ``baseline_context`` for a question.

        Parameters
        ----------
        question : str
            The question.
        answers : str, list of str or None, default=None
            Gold answers; ``None`` requires ``gain="entropy"``.
        context : str, default=""
            Context whose gain is measured.
        baseline_context : str, default=""
            Reference context (``""``: no context).

        Returns
        -------
        gain : float
            In ``[-1, 1]`` for ``"difference"``; unbounded in sign for the other forms.

        Raises
        ------
        ValueError
            If gold answers are needed but missing, or are empty.
        """
        check_is_fitted(self)
        answers = self._answers_for_gain(answers)
        base, ctx = self._states(question, [baseline_context, context], answers)
        return float(self._value(ctx) - self._value(base))

    def score_path(self, question, passages, answers=None, baseline_context=""):
        """Per-step gains along a multi-step retrieval path.

        State ``t`` has context ``C_t = C_{t-1} + "\\n" + passages[t]`` (``C_0`` is the
        baseline); step ``t`` gains ``f(C_t) - f(C_{t-1})``. Each state is sampled once, so the
        gains sum exactly to the gain of the whole path.

        Parameters
        ----------
        question : str
            The question.
        passages : list of str of length T
            Retrieved passages in retrieval order.
        answers : str, list of str or None, default=None
            Gold answers; ``None`` requires ``gain="entropy"``.
        baseline_context : str, default=""
            ``C_0``.

        Returns
        -------
        gains : ndarray of shape (T,)
            Gain of each step; they sum to the gain of the whole path.
        """
        check_is_fitted(self)
        answers = self._answers_for_gain(answers)
        if isinstance(passages, str):
            raise TypeError("passages must be a list of str, got a single str; wrap it in a list")
        passages = list(passages)
        if not passages:
            raise ValueError("passages is empty; expected at least one passage")
        contexts = [baseline_context]
        for p in passages:
            if not isinstance(p, str):
                raise TypeError(f"passages must hold str, got {type(p).__name__}")
            contexts.append(p if contexts[-1] == "" else contexts[-1] + "\n" + p)
        states = self._states(question, contexts, answers)
        values = np.array([self._value(s) for s in states])
        return np.diff(values)

    def cache_info(self):
        """Counters of the sample cache.

        Returns
        -------
        info : dict
            ``hits``, ``misses``, ``size`` and ``generator_calls``.
        """
        check_is_fitted(self)
        c = self.cache_
        return {"hits": c.hits if c else 0, "misses": c.misses if c else 0,
                "size": len(c) if c else 0, "generator_calls": self.n_generator_calls_}

    def transform(self, X):
        """Gain of each row's passage over the no-context baseline.

        Parameters
        ----------
        X : DataFrame or list of dict
            Rows with ``question`` (str), ``passage`` (str) and optionally ``answers``
            (str or list of str; needed unless ``gain="entropy"``).

        Returns
        -------
        gains : ndarray of shape (n_rows, 1)
            Information gain of each row (float64).
        """
        check_is_fitted(self)
        rows = _check_rows(X, type(self).__name__)
        out = np.empty((len(rows), 1))
        for i, (q, p, a) in enumerate(rows):
            out[i, 0] = self.information_gain(q, a if self.gain != "entropy" else None, p)
        return out

    def get_feature_names_out(self, input_features=None):
        """Output feature names.

        Parameters
        ----------
        input_features : None
            Ignored.

        Returns
        -------
        names : ndarray of str
            ``["info_gain"]``.
        """
        return np.asarray(["info_gain"], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.requires_fit = True
        return tags

    @classmethod
    def _get_test_params(cls):
        return [{"generator": _smoke_table(), "n_samples": 3, "equivalence": "exact",
                 "random_state": 0}]


def _smoke_table():
    from ._generators import TableGenerator

    return TableGenerator({
        "": (["Paris", "London", "Rome"], [-1.0, -1.2, -2.0]),
        "Paris is the capital of France.": (["Paris", "Paris", "London"], [-0.5, -0.6, -1.5]),
        "London is in England.": (["London", "London", "Paris"], [-0.4, -0.9, -1.1]),
    })
