"""The interleaved insert/query evaluation of a streaming memory on LoCoMo (no future leakage)."""

import time
import warnings
from functools import lru_cache

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.utils import Bunch

from ..feature_extraction._embedder import SentenceEmbedder
from ..metrics._qa import _answer_parts, _best_span_f1, locomo_f1, locomo_tokens
from ..utils._parallel import Parallel, delayed
from ..utils._progress import progress_bar

__all__ = ["interleaved_memory_eval", "round_thresholds"]


def round_thresholds(n_questions, n_rounds):
    """Question counts that trigger each round: ``round(N r / R)``, kept when increasing.

    Parameters
    ----------
    n_questions : int
        Questions of the conversation (N).
    n_rounds : int
        Rounds (R).

    Returns
    -------
    thresholds : list of int
        Visible-question counts at which rounds 1, 2, ... start.

    Examples
    --------
    >>> from sklearn_icml26.memory._protocol import round_thresholds
    >>> round_thresholds(152, 5)
    [30, 61, 91, 122, 152]
    """
    out = []
    for r in range(1, n_rounds + 1):
        t = round(n_questions * r / n_rounds)
        if not out or t > out[-1]:
            out.append(t)
    return [t for t in out if t > 0]


@lru_cache(maxsize=50_000)
def _tokens(text):
    return tuple(locomo_tokens(text))


def _oracle(texts, answer, category):
    parts = [tuple(locomo_tokens(g)) for g in _answer_parts(answer, category)]
    toks = [_tokens(t) for t in texts if t]
    return float(np.mean([max((_best_span_f1(list(t), list(g)) for t in toks), default=0.0)
                          for g in parts])) if parts else 0.0


def _ask(memory, question, max_rank):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is larger than the", category=UserWarning)
        t0 = time.perf_counter()
        _, ind = memory.kneighbors([question], n_neighbors=max_rank)
        t1 = time.perf_counter()
        res = memory.retrieve([question])[0]
        t2 = time.perf_counter()
    return ind[0], res, t1 - t0, t2 - t1


def _conversation_eval(memory, turns, qa, *, text, packet_size, n_rounds, k, max_rank,
                       oracle_k, include_adversarial, reader):
    memory = clone(memory)
    turns = turns.sort_values("turn_index")
    texts = (turns["formatted"].tolist() if text == "turn"
             else [text(row) for _, row in turns.iterrows()])
    sessions = turns["session"].tolist()
    stamps = turns["session_date"].tolist()
    covers = turns["dia_id"].tolist()
    n_rows = len(texts)
    cats = (1, 2, 3, 4, 5) if include_adversarial else (1, 2, 3, 4)
    qs = qa[qa["category"].isin(cats) & (qa["evidence"].map(len) > 0)]
    qs = qs.sort_values(["visible_after", "qa_index"])
    thresholds = round_thresholds(len(qs), n_rounds)
    visible_after = qs["visible_after"].to_numpy()
    # packets: consecutive rows of one session, packet_size at a time
    packets, start = [], 0
    while start < n_rows:
        end = start
        while end < n_rows and end - start < packet_size and sessions[end] == sessions[start]:
            end += 1
        packets.append((start, end))
        start = end
    rows, insert_s, query_s = [], [], []
    round_no, last = 0, -1

    def run_round():
        nonlocal round_no
        round_no += 1
        visible = qs[visible_after <= last]
        for q in visible.itertuples(index=False):
            ind, res, tk, tr = _ask(memory, q.question, max_rank)
            query_s.append(tk + tr)
            steps = np.asarray(memory.item_step_)
            for iid in [*ind[ind >= 0].tolist(), *res["ids"]]:
                if steps[iid] > last:
                    raise RuntimeError(f"memory returned item {iid} inserted at step "
                                       f"{int(steps[iid])} > current step {last}")
            item_covers = memory.item_covers_
            item_texts = memory.item_texts_
            ranked = [item_covers[i] for i in ind if i >= 0]
            ev = set(q.evidence)
            row = {"conversation": q.conversation, "round": round_no, "qa_index": q.qa_index,
                   "category": q.category, "category_name": q.category_name,
                   "memory_size": len(memory.item_ids_)}
            for kk in k:
                got = set().union(*ranked[:kk]) & ev if ranked else set()
                row[f"recall_at_{kk}"] = len(got) / len(ev)
                row[f"hit_at_{kk}"] = float(bool(got))
            rr = 0.0
            for j, c in enumerate(ranked, start=1):
                if c & ev:
                    rr = 1.0 / j
                    break
            row["rr"] = rr
            ctx_cov = set().union(*res["covers"]) if res["covers"] else set()
            row["context_recall"] = len(ctx_cov & ev) / len(ev)
            row["context_tokens"] = res["n_tokens"]
            top = [item_texts[i] for i in ind[:oracle_k] if i >= 0]
            row[f"oracle_f1_at_{oracle_k}"] = _oracle(top, q.answer, q.category)
            row["reader_f1"] = (locomo_f1(reader(q.question, res["context"]), q.answer,
                                          q.category) if reader is not None else np.nan)
            rows.append(row)

    for lo, hi in packets:
        t0 = time.perf_counter()
        memory.partial_fit(texts[lo:hi], sessions=sessions[lo:hi], timestamps=stamps[lo:hi],
                           covers=covers[lo:hi])
        insert_s.append(time.perf_counter() - t0)
        last = hi - 1
        if round_no < len(thresholds):
            n_visible = int(np.sum(visible_after <= last))
            if n_visible >= thresholds[round_no]:
                run_round()
    while round_no < len(thresholds):
        run_round()
    stages = {k: np.asarray(v, dtype=float) for k, v in getattr(memory, "latency_", {}).items()}
    return rows, insert_s, query_s, stages


def _pct(values):
    v = np.asarray(values, dtype=float) * 1e3
    if not len(v):
        return {"count": 0, "total_s": 0.0, "p50_ms": np.nan, "p95_ms": np.nan,
                "p99_ms": np.nan}
    return {"count": int(len(v)), "total_s": float(v.sum() / 1e3),
            "p50_ms": float(np.percentile(v, 50)), "p95_ms": float(np.percentile(v, 95)),
            "p99_ms": float(np.percentile(v, 99))}


def interleaved_memory_eval(memory, data=None, *, conversations=None, text="turn",
                            packet_size=2, n_rounds=5, k=(1, 5, 10), max_rank=50, oracle_k=5,
                            include_adversarial=False, reader=None, n_jobs=None, verbose=0):
    """Evaluate a streaming memory on LoCoMo with interleaved insertion and questions.

    Per conversation, the turns are inserted in order, ``packet_size`` consecutive turns of
    one session at a time. A question becomes *visible* once its last evidence turn is in
    memory. Rounds are triggered when the number of visible questions reaches
    ``round(N r / n_rounds)`` (N = the conversation's questions); each round asks every
    visible question (:meth:`~StreamingMemory.kneighbors` with ``max_rank`` items, then
    :meth:`~StreamingMemory.retrieve`). Rounds not reached by the last packet run at the end.
    Every returned item must have been inserted at or before the current step, else a
    ``RuntimeError`` is raised: no question ever sees the future.

    Parameters
    ----------
    memory : StreamingMemory or compatible
        Unfitted memory, cloned per conversation. Anything with ``partial_fit(texts, *,
        sessions, timestamps, covers)``, ``kneighbors``, ``retrieve``, ``item_step_``,
        ``item_covers_``, ``item_texts_`` and ``item_ids_`` works.
    data : Bunch, default=None
        A :func:`load_locomo` result; None loads it.
    conversations : sequence of str or int, default=None
        Sample ids or indices; None uses all 10.
    text : "turn" or callable, default="turn"
        ``"turn"`` inserts the formatted turn (``"speaker: text [shares caption]"``); a
        callable maps a turn row to its text.
    packet_size : int, default=2
        Turns per insertion.
    n_rounds : int, default=5
        Rounds.
    k : sequence of int, default=(1, 5, 10)
        Cut-offs of Recall@k and Hit@k.
    max_rank : int, default=50
        Items ranked per question.
    oracle_k : int, default=5
        Items searched by the oracle-span F1 (an extractive upper bound on answer F1, not a
        reader's score).
    include_adversarial : bool, default=False
        Also ask category-5 (false-premise) questions.
    reader : callable, default=None
        ``reader(question, context) -> str``, scored with LoCoMo's F1.
    n_jobs : int, default=None
        Conversations in parallel (joblib); results do not depend on it.
    verbose : int, default=0
        When positive, show the progress over conversations: a bar in a terminal, one plain
        line per conversation (its asks and packets) in a log.

    Returns
    -------
    result : Bunch
        ``per_question`` (DataFrame, one row per question ask: conversation, round, qa_index,
        category, category_name, memory_size, recall_at_{k}, hit_at_{k}, rr, context_recall,
        context_tokens, oracle_f1_at_{oracle_k}, reader_f1); ``per_round`` (means by round);
        ``per_category`` (means by category over all asks and in the final round); ``panel``
        (the round-1 questions re-scored in every round: the effect of memory growth alone);
        ``latency`` (DataFrame: insert per packet, query per ask; count, total_s, p50/p95/p99
        ms); ``stage_latency`` (the same for each stage the memory records in ``latency_``,
        e.g. ``insert_index`` or ``query_search``; empty if it records none); ``summary``
        (dict); ``config`` (dict).

    Raises
    ------
    RuntimeError
        If the memory returns an item inserted after the current step.
    ValueError
        If ``memory`` embeds with an unfitted "tfidf" SentenceEmbedder (fitted on the stream's
        first packet it would freeze there; fitted on the whole stream it sees the future).

    References
    ----------
    .. [1] Zhang et al. "Neuromem: A Granular Decomposition of the Streaming Lifecycle in
       External Memory for LLMs." ICML 2026, arXiv:2602.13967.
    .. [2] Maharana et al. "Evaluating Very Long-Term Conversational Memory of LLM Agents."
       ACL 2024, arXiv:2402.17753.

    Examples
    --------
    >>> from sklearn_icml26.feature_extraction import SentenceEmbedder
    >>> from sklearn_icml26.memory import StreamingMemory
    >>> from sklearn_icml26.memory import interleaved_memory_eval
    >>> mem = StreamingMemory(SentenceEmbedder(backend="hashing"), structure="bm25")
    >>> res = interleaved_memory_eval(mem, conversations=[0], n_rounds=2)  # doctest: +SKIP
    >>> res.per_round["recall_at_5"]  # doctest: +SKIP
    """
    emb = getattr(memory, "embedder", None)
    if isinstance(emb, SentenceEmbedder) and emb.backend == "tfidf" and not hasattr(
            emb, "vectorizer_"):
        raise ValueError("memory.embedder is an unfitted 'tfidf' SentenceEmbedder: fitted on "
                         "the stream it would use the future's vocabulary; fit it on other "
                         "texts first, or use a frozen embedder")
    if data is None:
        from ..datasets import load_locomo

        data = load_locomo()
    ids = data.turns["conversation"].drop_duplicates().tolist()
    if conversations is None:
        chosen = ids
    else:
        chosen = [ids[c] if isinstance(c, (int, np.integer)) else c for c in conversations]
        unknown = [c for c in chosen if c not in ids]
        if unknown:
            raise ValueError(f"conversations {unknown} are not in the data; known: {ids}")
    k = tuple(int(x) for x in k)
    kw = dict(text=text, packet_size=packet_size, n_rounds=n_rounds, k=k, max_rank=max_rank,
              oracle_k=oracle_k, include_adversarial=include_adversarial, reader=reader)
    turns_by = dict(tuple(data.turns.groupby("conversation", sort=False)))
    qa_by = dict(tuple(data.qa.groupby("conversation", sort=False)))
    outs = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(_conversation_eval)(memory, turns_by[c], qa_by[c], **kw) for c in chosen)
    # one line per conversation in a log (a bar in a terminal), as each one finishes
    bar = progress_bar(total=len(chosen), verbose=verbose, desc="conversations",
                       unit="conversation", mininterval=0, miniters=1, ncols=0)
    rows, ins, qry, stages = [], [], [], {}
    for c, (r, i, q, st) in zip(chosen, outs, strict=True):
        rows += r
        ins += i
        qry += q
        for name, vals in st.items():
            stages.setdefault(name, []).append(vals)
        bar.set_postfix_str(f"{c}: {len(r)} asks, {len(i)} packets", refresh=False)
        bar.update()
    bar.close()
    pq = pd.DataFrame(rows)
    metric_cols = [c for c in pq.columns if c.startswith(("recall_at", "hit_at", "oracle_f1"))
                   ] + ["rr", "context_recall", "context_tokens", "reader_f1", "memory_size"]
    per_round = pq.groupby("round")[metric_cols].mean()
    per_round["n_asks"] = pq.groupby("round").size()
    final = pq["round"] == pq.groupby("conversation")["round"].transform("max")
    per_category = pd.concat(
        {"all_rounds": pq.groupby("category_name")[metric_cols].mean(),
         "final_round": pq[final].groupby("category_name")[metric_cols].mean()}, axis=0)
    first = pq[pq["round"] == 1][["conversation", "qa_index"]]
    panel_rows = pq.merge(first, on=["conversation", "qa_index"])
    panel = panel_rows.groupby("round")[metric_cols].mean()
    panel["n_asks"] = panel_rows.groupby("round").size()
    latency = pd.DataFrame({"insert_per_packet": _pct(ins), "query_per_ask": _pct(qry)}).T
    stage_latency = pd.DataFrame({name: _pct(np.concatenate(v)) for name, v in stages.items()}
                                 ).T if stages else pd.DataFrame()
    r5 = f"recall_at_{5 if 5 in k else k[0]}"
    summary = {
        "n_conversations": len(chosen), "n_asks": len(pq),
        "n_questions": int(pq[["conversation", "qa_index"]].drop_duplicates().shape[0]),
        "final_round": {c: float(pq.loc[final, c].mean()) for c in metric_cols},
        "panel_curve": panel[r5].tolist(), "round_curve": per_round[r5].tolist(),
        "oracle_label": f"oracle_f1_at_{oracle_k} is an extractive upper bound, not a reader",
    }
    config = {"conversations": chosen, "packet_size": packet_size, "n_rounds": n_rounds,
              "k": list(k), "max_rank": max_rank, "oracle_k": oracle_k,
              "include_adversarial": include_adversarial,
              "text": text if isinstance(text, str) else getattr(text, "__name__", "callable")}
    return Bunch(per_question=pq, per_round=per_round, per_category=per_category, panel=panel,
                 latency=latency, stage_latency=stage_latency, summary=summary, config=config)
