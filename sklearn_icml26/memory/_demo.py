"""Demo of StreamingMemory (`python -m sklearn_icml26 demo memory`).

Runs the interleaved insert/query protocol on LoCoMo conversations and compares the final-round
evidence Recall@5 of three data structures (exact dense search, incremental BM25, their
reciprocal-rank fusion) with Neuromem's recency (FIFO) baseline.
"""

import time
import warnings

import pandas as pd

from ..datasets import load_locomo
from ..utils._registry import DEMO_COLUMNS
from ._embedder import SentenceEmbedder
from ._protocol import interleaved_memory_eval
from ._streaming import StreamingMemory

__all__ = ["run_demo"]


def run_demo(data_home=None, verbose=1, fast=False):
    """Final-round Recall@5 of three memory structures beside the recency baseline.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Data home holding ``locomo/locomo10.json`` (downloaded when missing).
    verbose : int, default=1
        ``1`` prints one line per structure.
    fast : bool, default=False
        One conversation (conv-26), 2 rounds and the hashing embedder, instead of all ten
        conversations, 5 rounds and MiniLM when installed.

    Returns
    -------
    table : pandas.DataFrame
        Columns ``DEMO_COLUMNS``; the final-round evidence Recall@5 of each structure beside
        that of the recency memory.

    Examples
    --------
    >>> from sklearn_icml26.memory._demo import run_demo
    >>> table = run_demo(verbose=0, fast=True)  # doctest: +SKIP
    """
    data = load_locomo(data_home)
    kw = dict(conversations=["conv-26"], n_rounds=2) if fast else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # hashing fallback when MiniLM is absent
        embedder = SentenceEmbedder(backend="hashing" if fast else "auto").fit(["x"])
    dataset = "LoCoMo conv-26, 2 rounds" if fast else "LoCoMo, 10 conversations, 5 rounds"

    def final_recall(structure):
        t0 = time.perf_counter()
        res = interleaved_memory_eval(StreamingMemory(embedder, structure=structure), data,
                                      **kw)
        pq = res.per_question
        final = pq["round"] == pq.groupby("conversation")["round"].transform("max")
        return float(pq.loc[final, "recall_at_5"].mean()), time.perf_counter() - t0

    base, _ = final_recall("recency")
    rows = []
    for structure in ("flat", "bm25", "hybrid"):
        value, secs = final_recall(structure)
        if verbose:
            print(f"StreamingMemory(structure={structure!r}): final Recall@5 {value:.3f} "
                  f"(recency {base:.3f}), {secs:.1f} s")
        rows.append({"method": f"StreamingMemory(structure={structure!r}, "
                               f"embedder={embedder.backend_!r})",
                     "dataset": dataset, "metric": "final-round evidence Recall@5",
                     "value": value, "anchor": "StreamingMemory(structure='recency')",
                     "anchor_value": base, "seconds": secs})
    return pd.DataFrame(rows, columns=DEMO_COLUMNS)
