"""InfoGainReranker: rank candidate passages by their semantic information gain."""

from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions, _fit_context
from ._info_gain import (
    SemanticInfoGainScorer,
    _check_answers,
    _check_rows,
    _smoke_table,
)

__all__ = ["InfoGainReranker"]


# ----------------------------------------------------------------------------------------------
# the reranker
# ----------------------------------------------------------------------------------------------
class InfoGainReranker(TransformerMixin, BaseEstimator):
    """Rank candidate passages by their semantic information gain for a question.

    Each row ``(question, passage[, answers])`` is scored by a cloned
    :class:`SemanticInfoGainScorer`: the gold-aware gain (its ``gain``, ``"difference"`` by
    default) when the row has answers, the gold-free entropy gain otherwise
    (``answers="auto"``). The no-context state of each distinct question is sampled once, so a
    table of ``n`` rows over ``q`` questions costs ``q + n`` generator calls.

    Parameters
    ----------
    scorer : SemanticInfoGainScorer or None, default=None
        Template scorer (cloned in :meth:`fit`); ``None`` is ``SemanticInfoGainScorer()``,
        which needs a generator, so pass one in practice.
    answers : {"auto", "require", "ignore"}, default="auto"
        ``"auto"``: gold-aware gain for rows with answers, entropy gain for the others;
        ``"require"``: every row must have answers; ``"ignore"``: entropy gain always
        (the only form usable at inference time, when no gold answer is known).
    top_k : int or None, default=None
        :meth:`rerank` returns only the ``top_k`` best passages.

    Attributes
    ----------
    scorer_ : SemanticInfoGainScorer
        The fitted clone of ``scorer``.
    entropy_scorer_ : SemanticInfoGainScorer
        Its ``gain="entropy"`` twin, sharing its sample cache.

    See Also
    --------
    SemanticInfoGainScorer : The gain of one passage.

    References
    ----------
    Hu, Dai, Zhao, Tao, Guo, Fang, Kwong, Fang, "Optimizing Agentic Reasoning with Retrieval via
    Synthetic Semantic Information Gain Reward", ICML 2026, arXiv:2602.00845.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.retrieval import (InfoGainReranker, SemanticInfoGainScorer,
    ...                                       TableGenerator)
    >>> gen = TableGenerator({
    ...     "": (["Rome", "Paris", "London"], [-1.0, -1.0, -1.0]),
    ...     "Paris is the capital of France.": (["Paris", "Paris", "Paris"], [-1.0, -1.0, -1.0]),
    ...     "London has a big clock.": (["London", "London", "Rome"], [-1.0, -1.0, -1.0]),
    ... })
    >>> scorer = SemanticInfoGainScorer(gen, n_samples=3, equivalence="exact")
    >>> rr = InfoGainReranker(scorer).fit()
    >>> order, gains = rr.rerank("What is the capital of France?",
    ...                          ["London has a big clock.", "Paris is the capital of France."],
    ...                          answers="Paris")
    >>> order.tolist(), np.round(gains, 3).tolist()
    ([1, 0], [-0.333, 0.667])
    """

    _parameter_constraints = {
        "scorer": [SemanticInfoGainScorer, None],
        "answers": [StrOptions({"auto", "require", "ignore"})],
        "top_k": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, scorer=None, *, answers="auto", top_k=None):
        self.scorer = scorer
        self.answers = answers
        self.top_k = top_k

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X=None, y=None):
        """Clone and fit the scorer; rows of ``X`` are only validated.

        Parameters
        ----------
        X : DataFrame, list of dict or None, default=None
            Rows with ``question`` and ``passage`` (validated when given).
        y : None
            Ignored.

        Returns
        -------
        self : InfoGainReranker
            The fitted reranker.
        """
        if X is not None:
            _check_rows(X, type(self).__name__)
        template = self.scorer if self.scorer is not None else SemanticInfoGainScorer()
        self.scorer_ = clone(template).fit()
        shared = self.scorer_.cache_ if self.scorer_.cache_ is not None else False
        ent = clone(template).set_params(gain="entropy", cache=shared)
        self.entropy_scorer_ = ent.fit()
        self.entropy_scorer_.embedder_ = self.scorer_.embedder_
        self.entropy_scorer_.base_seed_ = self.scorer_.base_seed_
        return self

    def _row_answers(self, a, i):
        if self.answers == "ignore":
            return None
        if a is None and self.answers == "require":
            raise ValueError(f"X row {i} has no answers while answers='require'")
        return a

    def score_details(self, X):
        """Gain, beliefs and entropies of each row.

        Parameters
        ----------
        X : DataFrame or list of dict
            Rows with ``question``, ``passage`` and optionally ``answers``.

        Returns
        -------
        details : DataFrame of shape (n_rows, 5)
            ``info_gain``, ``belief_context``, ``belief_baseline``, ``entropy_context``,
            ``entropy_baseline`` (beliefs NaN for rows scored without answers).
        """
        check_is_fitted(self)
        rows = _check_rows(X, type(self).__name__)
        recs = []
        for i, (q, p, a) in enumerate(rows):
            a = self._row_answers(a, i)
            sc = self.scorer_ if a is not None else self.entropy_scorer_
            if a is None and sc.gain != "entropy":  # pragma: no cover - guarded by fit
                raise ValueError("internal: entropy scorer expected")
            base, ctx = sc._states(q, ["", p], a)
            recs.append({"info_gain": float(sc._value(ctx) - sc._value(base)),
                         "belief_context": float(ctx.belief),
                         "belief_baseline": float(base.belief),
                         "entropy_context": ctx.entropy, "entropy_baseline": base.entropy})
        return pd.DataFrame.from_records(recs, columns=[
            "info_gain", "belief_context", "belief_baseline", "entropy_context",
            "entropy_baseline"])

    def transform(self, X):
        """Information gain of each row.

        Parameters
        ----------
        X : DataFrame or list of dict
            Rows with ``question``, ``passage`` and optionally ``answers``.

        Returns
        -------
        gains : ndarray of shape (n_rows, 1)
            Information gain of each row (float64).
        """
        return self.score_details(X)[["info_gain"]].to_numpy(dtype=np.float64)

    def rerank(self, question, passages, answers=None):
        """Order candidate passages by their gain, best first.

        Parameters
        ----------
        question : str
            The question.
        passages : list of str
            Candidate passages (at least one).
        answers : str, list of str or None, default=None
            Gold answers (see the ``answers`` parameter).

        Returns
        -------
        order : ndarray of int
            Indices into ``passages``, by decreasing gain (ties in input order), cut to
            ``top_k``.
        gains : ndarray of shape (n_passages,)
            Gain of every passage, in input order.

        Raises
        ------
        ValueError
            If ``passages`` is empty.
        """
        check_is_fitted(self)
        if isinstance(passages, str):
            raise TypeError("passages must be a list of str, got a single str; wrap it in a list")
        passages = list(passages)
        if not passages:
            raise ValueError("passages is empty; rerank needs at least one candidate passage")
        answers = _check_answers(answers)
        rows = [{"question": question, "passage": p, "answers": answers} for p in passages]
        gains = self.transform(rows)[:, 0]
        order = np.argsort(-gains, kind="stable")
        if self.top_k is not None:
            order = order[: self.top_k]
        return order, gains

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
        return tags

    @classmethod
    def _get_test_params(cls):
        return [{"scorer": SemanticInfoGainScorer(_smoke_table(), n_samples=3,
                                                  equivalence="exact", random_state=0)}]
