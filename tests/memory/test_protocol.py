"""interleaved_memory_eval: thresholds, rounds by hand, no future leakage, n_jobs; AOEB task."""

import joblib
import numpy as np
import pandas as pd
import pytest
from conftest import require_data
from sklearn.utils import Bunch

from sklearn_icml26.feature_extraction import SentenceEmbedder
from sklearn_icml26.memory import (
    StreamingMemory,
    build_locomo_retrieval_task,
    interleaved_memory_eval,
)
from sklearn_icml26.memory._protocol import round_thresholds

WORDS = ["apple", "river", "violin", "garden", "kayak", "lantern", "cherry"]


def _toy(conversations=("c0",)):
    turns, qa = [], []
    for c in conversations:
        t = 0
        for s, n in ((1, 2), (2, 3), (3, 2)):
            for j in range(n):
                turns.append({"conversation": c, "session": s, "session_date": f"day {s}",
                              "turn_index": t, "dia_id": f"D{s}:{j + 1}",
                              "formatted": f"A: I saw a {WORDS[t]} today"})
                t += 1
        dia = [d["dia_id"] for d in turns if d["conversation"] == c]
        for j, ev in enumerate([0, 3, 4, 6]):
            qa.append({"conversation": c, "qa_index": j, "question": f"what {WORDS[ev]}?",
                       "answer": WORDS[ev], "category": 2 if j == 3 else 4,
                       "category_name": "temporal" if j == 3 else "single-hop",
                       "evidence": [dia[ev]], "visible_after": ev})
    return Bunch(turns=pd.DataFrame(turns), qa=pd.DataFrame(qa))


def _mem(**kw):
    return StreamingMemory(SentenceEmbedder(backend="hashing"), n_neighbors=2, **kw)


def test_thresholds():
    assert round_thresholds(152, 5) == [30, 61, 91, 122, 152]
    assert round_thresholds(3, 5) == [1, 2, 3]  # repeated thresholds are dropped


def test_rounds_visible_sets_and_panel_by_hand():
    res = interleaved_memory_eval(_mem(), _toy(), n_rounds=2, max_rank=5)
    pq = res.per_question
    # 4 questions, thresholds [2, 4]: round 1 after the packet ending at row 3 asks q0, q1;
    # round 2 after the last packet (row 6) asks all four
    assert pq.groupby("round")["qa_index"].apply(list).to_dict() == {1: [0, 1], 2: [0, 1, 2, 3]}
    assert pq.groupby("round")["memory_size"].first().to_dict() == {1: 4, 2: 7}
    assert res.panel["n_asks"].tolist() == [2, 2]
    assert (pq["recall_at_1"] == 1.0).all()  # each question names its turn's unique word
    assert (pq["oracle_f1_at_5"] == 1.0).all()
    assert res.latency.loc["insert_per_packet", "count"] == 4  # packets [0,1] [2,3] [4] [5,6]
    assert "query_search" in res.stage_latency.index


class _Leaky(StreamingMemory):
    """Inserts the whole conversation at the first packet: every later row is future."""

    def partial_fit(self, X, y=None, **meta):
        if not hasattr(self, "n_inserted_"):
            texts = _toy().turns["formatted"].tolist()
            return super().partial_fit(texts)
        return self


def test_a_leaking_memory_is_caught():
    with pytest.raises(RuntimeError, match=r"memory returned item \d+ inserted at step \d+ > "
                                           r"current step \d+"):
        interleaved_memory_eval(_Leaky(SentenceEmbedder(backend="hashing"), n_neighbors=2),
                                _toy(), n_rounds=2)
    with pytest.raises(ValueError, match="unfitted 'tfidf'"):
        interleaved_memory_eval(StreamingMemory(SentenceEmbedder(backend="tfidf")), _toy())


def test_verbose_prints_one_plain_line_per_conversation(capsys):
    interleaved_memory_eval(_mem(), _toy(("c0", "c1")), n_rounds=2, verbose=1)
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("conversations")]
    assert [ln.split("%")[1].split()[0] for ln in lines[1:]] == ["1/2", "2/2"]
    assert "c0: 6 asks, 4 packets" in lines[1] and "c1: 6 asks, 4 packets" in lines[2]
    assert not any("\r" in ln or "\x1b" in ln for ln in lines)
    interleaved_memory_eval(_mem(), _toy(("c0", "c1")), n_rounds=2)
    assert capsys.readouterr().err == ""


def test_same_results_for_any_n_jobs():
    data = _toy(("c0", "c1"))
    one = interleaved_memory_eval(_mem(structure="bm25"), data, n_rounds=2, n_jobs=1)
    with joblib.parallel_config(backend="threading"):
        two = interleaved_memory_eval(_mem(structure="bm25"), data, n_rounds=2, n_jobs=2)
    pd.testing.assert_frame_equal(one.per_question, two.per_question)
    with pytest.raises(ValueError, match="not in the data"):
        interleaved_memory_eval(_mem(), data, conversations=["c9"])


@pytest.mark.real_data
def test_locomo_conv26_degrades_with_rounds_and_aoeb_task():
    require_data("locomo/locomo10.json")
    from sklearn_icml26.datasets import load_locomo

    data = load_locomo()
    res = interleaved_memory_eval(_mem(structure="flat"), data, conversations=["conv-26"])
    panel = res.panel["recall_at_5"].to_numpy()
    assert len(panel) == 5 and panel[-1] < panel[0]  # memory growth alone hurts retrieval
    pq = res.per_question
    assert (pq["memory_size"].diff().fillna(0) >= 0).all()
    task = build_locomo_retrieval_task(data)
    assert {k: len(v) for k, v in task.subsets.items()} == {
        "single-hop-retrieval": 841, "multi-hop-retrieval": 282, "temporal-reasoning": 321,
        "open-domain-knowledge": 92, "adversarial": 446}
    assert len(task.corpus) == 5882 and len(task.qrels) == 1982
    assert task.corpus["id"].iloc[0] == "scene0_session_1_D1:1"
    conv0 = set(task.corpus.loc[task.corpus["conversation"] == "conv-26", "id"])
    assert set(task.candidates["scene0_q0"]) == conv0
    assert np.all([set(task.qrels[q]) <= set(task.candidates[q]) for q in task.qrels])
