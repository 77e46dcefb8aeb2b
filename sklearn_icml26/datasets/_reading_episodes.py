"""Reading episodes for GatedMemoryReader: planted facts and LoCoMo questions."""

from numbers import Integral

import numpy as np
from sklearn.utils import Bunch
from sklearn.utils.validation import check_random_state

__all__ = ["make_locomo_episodes", "make_planted_episodes"]


def make_planted_episodes(n_episodes=50, n_chunks=12, chunk_len=6, n_evidence=(1, 2),
                          random_state=None):
    """Reading episodes with planted facts: one question, its fact turn(s) among distractors.

    Episode i asks ``"Where does {name} keep the {object}?"``; its fact turn ``"{name} keeps a
    {object} in the {place}."`` sits in a chunk drawn uniformly (a second fact, ``"{name} also
    keeps the {object} near the {place}."``, in another chunk when two evidence turns are
    drawn); every other turn is a distractor ``"{name} likes {object}s near the {place}."``
    whose name-object pair is not the question's, so it shares at most one content word with
    the question.

    Parameters
    ----------
    n_episodes : int, default=50
        Episodes.
    n_chunks : int, default=12
        Chunks per episode.
    chunk_len : int, default=6
        Turns per chunk.
    n_evidence : int or (int, int), default=(1, 2)
        Fact turns per episode, or the inclusive range it is drawn from (at most
        ``n_chunks``).
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    data : Bunch
        ``X`` (list of episode dicts with ``turn_ids`` ``"c{chunk}:{turn}"``), ``evidence``
        (list of sets of turn ids), ``answers`` (the place of the first fact),
        ``evidence_chunks`` (list of sorted lists of 1-based chunk numbers).

    Raises
    ------
    ValueError
        If a size is < 1 or more evidence turns than chunks are asked.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_planted_episodes
    >>> data = make_planted_episodes(n_episodes=3, n_chunks=4, n_evidence=1, random_state=0)
    >>> len(data.X), len(data.X[0]["chunks"]), len(data.evidence[0])
    (3, 4, 1)
    """
    from ._memory_stream import _NAMES, _OBJECTS, _PLACES

    lo, hi = (n_evidence, n_evidence) if isinstance(n_evidence, Integral) else n_evidence
    if min(n_episodes, n_chunks, chunk_len, lo) < 1 or hi < lo or hi > n_chunks:
        raise ValueError(f"need n_episodes, n_chunks, chunk_len >= 1 and 1 <= n_evidence <= "
                         f"n_chunks; got {n_episodes}, {n_chunks}, {chunk_len}, {n_evidence}")
    rng = check_random_state(random_state)
    X, evidence, answers, ev_chunks = [], [], [], []
    for _ in range(n_episodes):
        a, b = int(rng.randint(len(_NAMES))), int(rng.randint(len(_OBJECTS)))
        chunks = []
        for _t in range(n_chunks):
            chunk = []
            for _j in range(chunk_len):
                while True:
                    da, db = int(rng.randint(len(_NAMES))), int(rng.randint(len(_OBJECTS)))
                    if da != a or db != b:
                        break
                chunk.append(f"{_NAMES[da]} likes {_OBJECTS[db]}s near the "
                             f"{_PLACES[int(rng.randint(len(_PLACES)))]}.")
            chunks.append(chunk)
        k = int(rng.randint(lo, hi + 1))
        where = sorted(rng.choice(n_chunks, size=k, replace=False).tolist())
        places = rng.choice(len(_PLACES), size=k, replace=False)
        ev = set()
        for n_fact, (t, p) in enumerate(zip(where, places, strict=True)):
            j = int(rng.randint(chunk_len))
            chunks[t][j] = (f"{_NAMES[a]} keeps a {_OBJECTS[b]} in the {_PLACES[p]}."
                            if n_fact == 0 else
                            f"{_NAMES[a]} also keeps the {_OBJECTS[b]} near the {_PLACES[p]}.")
            ev.add(f"c{t}:{j}")
        ids = [[f"c{t}:{j}" for j in range(chunk_len)] for t in range(n_chunks)]
        X.append({"question": f"Where does {_NAMES[a]} keep the {_OBJECTS[b]}?",
                  "chunks": chunks, "turn_ids": ids})
        evidence.append(ev)
        answers.append(_PLACES[places[0]])
        ev_chunks.append([t + 1 for t in where])
    return Bunch(X=X, evidence=evidence, answers=answers, evidence_chunks=ev_chunks)


def make_locomo_episodes(data=None, *, conversations=None, chunking="session", window_size=10,
                         include_adversarial=False, text="turn"):
    """LoCoMo questions as reading episodes: the question, its conversation cut into chunks.

    Parameters
    ----------
    data : Bunch, default=None
        The output of :func:`~sklearn_icml26.datasets.load_locomo`; None loads it from the
        data home.
    conversations : list of str, default=None
        Sample ids to keep (file order); None keeps all ten.
    chunking : {"session", "window"}, default="session"
        One chunk per session in order, or consecutive ``window_size`` turns over the whole
        conversation (crossing sessions).
    window_size : int, default=10
        Turns per chunk with ``chunking="window"``.
    include_adversarial : bool, default=False
        Keep category-5 questions.
    text : {"turn", "text"}, default="turn"
        Turn text: ``"speaker: text [shares caption]"`` or the bare utterance.

    Returns
    -------
    episodes : Bunch
        ``X`` (list of episode dicts: question, chunks, turn_ids (dialogue ids), category,
        conversation), ``evidence`` (list of sets of dialogue ids), ``answers``,
        ``categories`` (ndarray of int), ``conversation`` (ndarray of str), ``n_chunks``
        (ndarray of int). Only questions with at least one clean evidence turn.

    Raises
    ------
    ValueError
        If ``chunking`` or ``text`` is unknown, ``window_size`` < 1, or a conversation is
        not in the data.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_locomo_episodes
    >>> ep = make_locomo_episodes(conversations=["conv-26"])  # doctest: +SKIP
    """
    if chunking not in ("session", "window"):
        raise ValueError(f"chunking must be 'session' or 'window'; got {chunking!r}")
    if text not in ("turn", "text"):
        raise ValueError(f"text must be 'turn' or 'text'; got {text!r}")
    if not isinstance(window_size, Integral) or window_size < 1:
        raise ValueError(f"window_size must be an int >= 1; got {window_size!r}")
    if data is None:
        from ._locomo import load_locomo

        data = load_locomo()
    turns, qa = data.turns, data.qa
    known = list(dict.fromkeys(turns["conversation"]))
    convs = known if conversations is None else list(conversations)
    missing = [c for c in convs if c not in known]
    if missing:
        raise ValueError(f"conversations {missing} are not in the data; known: {known}")
    cats = (1, 2, 3, 4, 5) if include_adversarial else (1, 2, 3, 4)
    col = "formatted" if text == "turn" else "text"
    X, evidence, answers, categories, conv_of, n_chunks = [], [], [], [], [], []
    for cid in convs:
        tt = turns[turns["conversation"] == cid].sort_values("turn_index")
        texts, ids = tt[col].tolist(), tt["dia_id"].tolist()
        if chunking == "session":
            bounds = np.flatnonzero(np.diff(tt["session"].to_numpy())) + 1
            cut = [0, *bounds.tolist(), len(texts)]
        else:
            cut = [*range(0, len(texts), window_size), len(texts)]
        chunks = [texts[a:b] for a, b in zip(cut[:-1], cut[1:], strict=True)]
        chunk_ids = [ids[a:b] for a, b in zip(cut[:-1], cut[1:], strict=True)]
        qs = qa[(qa["conversation"] == cid) & qa["category"].isin(cats)
                & (qa["evidence"].map(len) > 0)]
        for q in qs.itertuples(index=False):
            X.append({"question": q.question, "chunks": chunks, "turn_ids": chunk_ids,
                      "category": int(q.category), "conversation": cid})
            evidence.append(set(q.evidence))
            answers.append(q.answer)
            categories.append(int(q.category))
            conv_of.append(cid)
            n_chunks.append(len(chunks))
    return Bunch(X=X, evidence=evidence, answers=answers, categories=np.asarray(categories),
                 conversation=np.asarray(conv_of, dtype=object), n_chunks=np.asarray(n_chunks))
