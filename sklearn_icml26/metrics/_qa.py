"""LoCoMo answer F1 (normalisation, Porter stems, category rules) and the oracle-span bound."""

import re
import string
from collections import Counter
from functools import lru_cache

import numpy as np

__all__ = ["locomo_f1", "locomo_normalize", "locomo_tokens", "oracle_span_f1", "token_f1"]

_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCT = set(string.punctuation)


def locomo_normalize(text):
    """LoCoMo's answer normalisation: drop commas, lower-case, drop punctuation and articles.

    Parameters
    ----------
    text : str
        The text.

    Returns
    -------
    normalised : str
        Tokens joined by single spaces.

    Examples
    --------
    >>> from sklearn_icml26.metrics._qa import locomo_normalize
    >>> locomo_normalize("The Sunday before 25 May, 2023!")
    'sunday before 25 may 2023'
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str; got {type(text).__name__}")
    s = text.replace(",", "").lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


@lru_cache(maxsize=1)
def _stemmer():
    try:
        from nltk.stem import PorterStemmer
    except ImportError as exc:  # pragma: no cover - nltk is a dependency of the memory extra
        raise ImportError("LoCoMo F1 stems tokens with NLTK's PorterStemmer: pip install nltk "
                          "(or 'sklearn_icml26[memory]')") from exc
    return PorterStemmer()


@lru_cache(maxsize=200_000)
def _stem(word):
    return _stemmer().stem(word)


def locomo_tokens(text):
    """Normalised, Porter-stemmed tokens of a text (LoCoMo's F1 tokens).

    Parameters
    ----------
    text : str
        The text.

    Returns
    -------
    tokens : list of str
        Stemmed tokens.

    Examples
    --------
    >>> from sklearn_icml26.metrics._qa import locomo_tokens
    >>> locomo_tokens("She was running to the shops")
    ['she', 'wa', 'run', 'to', 'shop']
    """
    return [_stem(w) for w in locomo_normalize(text).split()]


def _f1_tokens(pred, gold):
    common = Counter(pred) & Counter(gold)
    same = sum(common.values())
    if same == 0 or not pred or not gold:
        return 0.0
    p = same / len(pred)
    r = same / len(gold)
    return 2 * p * r / (p + r)


def token_f1(prediction, answer):
    """Multiset token F1 between two strings after LoCoMo's normalisation and stemming.

    Parameters
    ----------
    prediction : str
        Predicted answer.
    answer : str
        Gold answer.

    Returns
    -------
    f1 : float
        In [0, 1].

    Examples
    --------
    >>> from sklearn_icml26.metrics import token_f1
    >>> token_f1("running", "ran")
    0.0
    """
    return _f1_tokens(locomo_tokens(prediction), locomo_tokens(answer))


def _answer_parts(answer, category):
    answer = str(answer)
    if category == 3:
        return [answer.split(";")[0].strip()]
    if category == 1:
        return [g.strip() for g in answer.split(",")]
    return [answer]


def locomo_f1(prediction, answer, category):
    """LoCoMo's per-question answer score, with the rules of its evaluation script.

    Category 1 (multi-hop): mean over the comma-separated parts of the answer of the best F1
    over the comma-separated parts of the prediction; 2 (temporal) and 4 (single-hop): token
    F1; 3 (open-domain): token F1 against the answer's text before the first ``;``;
    5 (adversarial): 1 if the prediction says "no information available" or "not mentioned".

    Parameters
    ----------
    prediction : str
        The reader's answer.
    answer : str
        The gold answer.
    category : {1, 2, 3, 4, 5}
        LoCoMo question category.

    Returns
    -------
    score : float
        In [0, 1].

    Raises
    ------
    ValueError
        If ``category`` is not 1-5.

    Examples
    --------
    >>> from sklearn_icml26.metrics import locomo_f1
    >>> locomo_f1("Sweden, Norway", "Sweden, Denmark", 1)
    0.5
    """
    if category not in (1, 2, 3, 4, 5):
        raise ValueError(f"category must be one of 1, 2, 3, 4, 5; got {category!r}")
    prediction = str(prediction)
    if category == 5:
        low = prediction.lower()
        return float("no information available" in low or "not mentioned" in low)
    if category == 1:
        preds = [locomo_tokens(p.strip()) for p in prediction.split(",")]
        return float(np.mean([max(_f1_tokens(p, locomo_tokens(g)) for p in preds)
                              for g in _answer_parts(answer, 1)]))
    return _f1_tokens(locomo_tokens(prediction), locomo_tokens(_answer_parts(answer,
                                                                               category)[0]))


def _best_span_f1(tokens, gold):
    """Max F1 over contiguous spans of ``tokens`` against ``gold`` (both token lists)."""
    if not gold or not tokens:
        return 0.0
    need = Counter(gold)
    pos = [i for i, t in enumerate(tokens) if t in need]
    best = 0.0
    n_gold = len(gold)
    for a_idx, a in enumerate(pos):
        have = Counter()
        overlap = 0
        for b in pos[a_idx:]:
            w = tokens[b]
            if have[w] < need[w]:
                overlap += 1
            have[w] += 1
            f1 = 2.0 * overlap / (b - a + 1 + n_gold)
            if f1 > best:
                best = f1
    return best


def oracle_span_f1(texts, answer, category=4):
    """Extractive upper bound on answer F1: the best contiguous span of any one retrieved text.

    For each gold part (the comma-separated parts for category 1, the text before the first
    ``;`` for category 3, else the whole answer), the maximum LoCoMo token F1 over every
    contiguous token span of the normalised, stemmed text of any one item; the mean over the
    parts. This is an upper bound of what an extractive reader could score on these texts, not
    the score of a reader. An optimal span starts and ends on a gold token, which makes the
    search exact in O(m^2) per text.

    Parameters
    ----------
    texts : sequence of str
        The retrieved texts (e.g. the top 5 items).
    answer : str
        Gold answer.
    category : {1, 2, 3, 4, 5}, default=4
        LoCoMo category (selects the answer parts; 5 is scored like 4).

    Returns
    -------
    score : float
        In [0, 1]; 0.0 for no texts.

    Examples
    --------
    >>> from sklearn_icml26.metrics import oracle_span_f1
    >>> oracle_span_f1(["Alice: I went to the support group on 7 May 2023"], "7 May 2023")
    1.0
    """
    toks = [locomo_tokens(t) for t in texts]
    parts = [locomo_tokens(g) for g in _answer_parts(answer, category)]
    if not parts:
        return 0.0
    return float(np.mean([max((_best_span_f1(t, g) for t in toks), default=0.0)
                          for g in parts]))
