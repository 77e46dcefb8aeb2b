"""GatedMemoryReader's episodes: input checks and the preparation of an episode for reading.

An episode is prepared once per fit or read: its turns are embedded, scored by cosine with the
question, and each chunk's best ``write_size`` turns become the candidate memory items.
"""

import re

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from ._streaming import _l2_rows

_WORD = re.compile(r"(?u)\b\w+\b")


# ---------------------------------------------------------------------------- input checks
def _content_tokens(text):
    return {w for w in _WORD.findall(text.lower()) if w not in ENGLISH_STOP_WORDS}


def _check_episodes(X, owner="GatedMemoryReader"):
    """Validate episodes; return a list of dicts with question, chunks, turn_ids (and extras)."""
    if isinstance(X, pd.DataFrame):
        if X.shape[1] != 1:
            raise ValueError(f"X must be a list of episode dicts or a one-column DataFrame; got "
                             f"a DataFrame with {X.shape[1]} columns")
        X = X.iloc[:, 0]
    if isinstance(X, pd.Series):
        X = X.tolist()
    elif isinstance(X, np.ndarray):
        X = X.ravel().tolist()
    elif isinstance(X, (dict, str)) or not hasattr(X, "__len__"):
        raise TypeError(f"X must be a list of episode dicts; got {type(X).__name__}")
    X = list(X)
    if not X:
        raise ValueError(f"X is empty; {owner} needs at least one episode (a dict with "
                         "'question' and 'chunks')")
    out = []
    for i, ep in enumerate(X):
        if not isinstance(ep, dict):
            raise TypeError(f"X[{i}] is {type(ep).__name__}; expected a dict with 'question' and "
                            "'chunks'")
        for key in ("question", "chunks"):
            if key not in ep:
                raise ValueError(f"X[{i}] has no {key!r}; an episode needs 'question' (str) and "
                                 "'chunks' (list of lists of str)")
        q = ep["question"]
        if not isinstance(q, str):
            raise TypeError(f"X[{i}]['question'] is {type(q).__name__}; {owner} takes str")
        chunks = ep["chunks"]
        if isinstance(chunks, str) or not hasattr(chunks, "__len__") or len(chunks) == 0:
            raise ValueError(f"X[{i}]['chunks'] must be a non-empty list of chunks (lists of "
                             f"str); got {chunks!r:.60}")
        chunks = [list(c) if not isinstance(c, str) else c for c in chunks]
        for t, c in enumerate(chunks):
            if isinstance(c, str):
                raise TypeError(f"X[{i}]['chunks'][{t}] is a str; a chunk is a list of turns "
                                "(str)")
            if len(c) == 0:
                raise ValueError(f"X[{i}]['chunks'][{t}] is empty; every chunk needs >= 1 turn")
            for j, turn in enumerate(c):
                if not isinstance(turn, str):
                    raise TypeError(f"X[{i}]['chunks'][{t}][{j}] is {type(turn).__name__}; "
                                    f"{owner} takes str turns")
        ids = ep.get("turn_ids")
        if ids is None:
            ids = [[(t, j) for j in range(len(c))] for t, c in enumerate(chunks)]
        else:
            ids = [list(r) for r in ids]
            if len(ids) != len(chunks) or any(len(a) != len(b)
                                              for a, b in zip(ids, chunks, strict=True)):
                raise ValueError(f"X[{i}]['turn_ids'] must have the shape of X[{i}]['chunks'] "
                                 f"({[len(c) for c in chunks]} turns per chunk); got "
                                 f"{[len(r) for r in ids]}")
            flat = [d for r in ids for d in r]
            if len(set(flat)) != len(flat):
                raise ValueError(f"X[{i}]['turn_ids'] holds duplicate ids; turn ids must be "
                                 "unique within an episode")
        out.append(dict(ep, chunks=chunks, turn_ids=ids))
    return out


def _check_evidence(evidence, episodes, where):
    """Evidence sets restricted to ids of each episode (None entries for unusable episodes)."""
    if evidence is None:
        if all("evidence" in ep for ep in episodes):
            evidence = [ep["evidence"] for ep in episodes]
        else:
            raise ValueError(f"{where} needs evidence= (one set of turn ids per episode)")
    if isinstance(evidence, (str, set, frozenset)) or not hasattr(evidence, "__len__"):
        raise TypeError(f"evidence must be a list with one set of turn ids per episode; got "
                        f"{type(evidence).__name__}")
    evidence = list(evidence)
    if len(evidence) != len(episodes):
        raise ValueError(f"evidence has {len(evidence)} entries but X has {len(episodes)} "
                         "episodes; give one set of turn ids per episode")
    out = []
    for ep, ev in zip(episodes, evidence, strict=True):
        if ev is None:
            out.append(None)
            continue
        ev = {ev} if isinstance(ev, (str, tuple)) else set(ev)
        known = {d for r in ep["turn_ids"] for d in r}
        ev &= known
        out.append(ev or None)
    return out


# ---------------------------------------------------------------------------- episodes
class _Episode:
    """An episode prepared for reading: per-chunk scores and the candidate items W_t."""

    __slots__ = ("T", "s1", "s2", "smean", "cand", "item_score", "item_rank", "item_mask",
                 "item_id", "item_text", "item_ev", "nq", "ev", "J", "j_star", "answer",
                 "category", "question")


def _prepare(episodes, embedder, write_size, evidence=None, answers=None):
    texts = {}
    for ep in episodes:
        texts.setdefault(ep["question"], len(texts))
        for c in ep["chunks"]:
            for turn in c:
                texts.setdefault(turn, len(texts))
    V = embedder.transform(list(texts))
    if hasattr(V, "toarray"):
        V = V.toarray()
    V = _l2_rows(np.asarray(V, dtype=np.float64))
    # turn scores, one matrix product per distinct context (LoCoMo questions share theirs)
    groups = {}
    for i, ep in enumerate(episodes):
        key = tuple(turn for c in ep["chunks"] for turn in c)
        groups.setdefault(key, []).append(i)
    turn_scores = [None] * len(episodes)
    layout = {}
    for key, members in groups.items():
        S = V[[texts[x] for x in key]] @ V[[texts[episodes[i]["question"]] for i in members]].T
        for col, i in enumerate(members):
            turn_scores[i] = S[:, col]
    tok_cache = {}
    out = []
    for i, ep in enumerate(episodes):
        e = _Episode()
        e.question = ep["question"]
        qtok = sorted(_content_tokens(ep["question"]))
        bit = {w: 1 << k for k, w in enumerate(qtok)}
        e.nq = len(qtok)
        T = len(ep["chunks"])
        e.T = T
        lens = tuple(len(c) for c in ep["chunks"])
        lay = layout.get(lens)
        if lay is None:
            n = np.asarray(lens)
            starts = np.concatenate([[0], np.cumsum(n)[:-1]])
            chunk_of = np.repeat(np.arange(T), n)
            lay = layout[lens] = (n, starts, chunk_of, np.arange(len(chunk_of)) -
                                  starts[chunk_of])
        n, starts, chunk_of, _ = lay
        sc = turn_scores[i]
        e.s1 = np.maximum.reduceat(sc, starts)
        e.smean = np.add.reduceat(sc, starts) / n
        # per chunk: turns by score descending, ties by earlier turn
        order = np.lexsort((np.arange(len(sc)), -sc, chunk_of))
        rank_in_chunk = np.arange(len(sc)) - starts[chunk_of[order]]
        second = order[rank_in_chunk == 1]
        e.s2 = np.zeros(T)
        e.s2[chunk_of[second]] = sc[second]
        top = order[rank_in_chunk < write_size]
        flat_ids = [d for r in ep["turn_ids"] for d in r]
        flat_txt = [x for c in ep["chunks"] for x in c]
        scores = sc[top].tolist()
        ids = [flat_ids[j] for j in top]
        txts = [flat_txt[j] for j in top]
        e.cand = [[] for _ in range(T)]
        for k, c in enumerate(chunk_of[top].tolist()):
            e.cand[c].append(k)
        ev = evidence[i] if evidence is not None else None
        e.ev = ev
        e.J = set()
        if ev is not None:
            e.J = {int(chunk_of[j]) + 1 for j, d in enumerate(flat_ids) if d in ev}
        e.item_score, e.item_id, e.item_text = scores, ids, txts
        e.item_ev = [ev is not None and d in ev for d in ids]
        masks = []
        for txt in txts:
            toks = tok_cache.get(txt)
            if toks is None:
                toks = tok_cache[txt] = _content_tokens(txt)
            m = 0
            for w in toks:
                m |= bit.get(w, 0)
            masks.append(m)
        e.item_mask = masks
        order = sorted(range(len(scores)), key=lambda k: (-scores[k], k))
        rank = [0] * len(scores)
        for r, k in enumerate(order):
            rank[k] = r
        e.item_rank = rank
        e.j_star = max(e.J) if e.J else None
        e.answer = answers[i] if answers is not None else None
        e.category = int(ep.get("category", 4))
        out.append(e)
    return out
