"""Demo of StreamingMemory (`python -m sklearn_icml26 demo memory`).

Runs the interleaved insert/query protocol on LoCoMo conversations and compares the final-round
evidence Recall@5 of three data structures (exact dense search, incremental BM25, their
reciprocal-rank fusion) with Neuromem's recency (FIFO) baseline. ``run_grumem_demo``
(`demo grumem`) compares the chunks read and the evidence recall of GatedMemoryReader's learned
gates with the ungated loop that reads everything.
"""

import time
import warnings

from ..datasets import load_locomo
from ..feature_extraction._embedder import SentenceEmbedder
from ..utils._demo_rows import demo_row, demo_table
from ._protocol import interleaved_memory_eval
from ._streaming import StreamingMemory

__all__ = ["run_demo", "run_grumem_demo"]


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
        rows.append(demo_row(method=f"StreamingMemory(structure={structure!r}, "
                                    f"embedder={embedder.backend_!r})",
                             dataset=dataset, metric="final-round evidence Recall@5",
                             value=value, anchor="StreamingMemory(structure='recency')",
                             anchor_value=base, seconds=secs))
    return demo_table(rows)


def run_grumem_demo(data_home=None, verbose=1, fast=False):
    """Chunks read and evidence recall of GatedMemoryReader beside the ungated loop.

    Trains the update and exit gates on seven LoCoMo conversations (one chunk per session)
    and reads the questions of the other three; the anchor is the ungated loop that writes
    every chunk and reads to the end.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Data home holding ``locomo/locomo10.json`` (downloaded when missing).
    verbose : int, default=1
        ``1`` prints one line per method.
    fast : bool, default=False
        Train on conv-26 and test on conv-30 with 20 steps and the hashing embedder, instead
        of the 7/3 conversation split, 300 steps and MiniLM when installed.

    Returns
    -------
    table : pandas.DataFrame
        Columns ``DEMO_COLUMNS``: chunks read per question and evidence recall of the gated
        reader beside those of the ungated loop.

    Examples
    --------
    >>> from sklearn_icml26.memory._demo import run_grumem_demo
    >>> table = run_grumem_demo(verbose=0, fast=True)  # doctest: +SKIP
    """
    from ..datasets import make_locomo_episodes
    from ._gated_reader import GatedMemoryReader

    data = load_locomo(data_home)
    if fast:
        train_c, test_c = ["conv-26"], ["conv-30"]
    else:
        train_c = ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44", "conv-47"]
        test_c = ["conv-48", "conv-49", "conv-50"]
    train = make_locomo_episodes(data, conversations=train_c)
    test = make_locomo_episodes(data, conversations=test_c)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # hashing fallback when MiniLM is absent
        embedder = SentenceEmbedder(backend="hashing" if fast else "auto").fit(["x"])
    dataset = (f"LoCoMo, train {'+'.join(train_c)}, test {'+'.join(test_c)}, session chunks, "
               f"{embedder.backend_}")
    t0 = time.perf_counter()
    reader = GatedMemoryReader(embedder, max_iter=20 if fast else 300, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reader.fit(train.X, evidence=train.evidence)
    gated = reader.read(test.X)
    secs = time.perf_counter() - t0
    vanilla = reader.read(test.X, policy="vanilla")

    def recall(traces):
        return float(sum(len(set(t["memory"]["ids"]) & e) / len(e)
                         for t, e in zip(traces, test.evidence, strict=True)) / len(traces))

    def chunks(traces):
        return float(sum(t["tau"] for t in traces) / len(traces))

    rows = []
    for metric, fn in (("chunks read per question", chunks), ("evidence recall", recall)):
        rows.append(demo_row(method="GatedMemoryReader", dataset=dataset, metric=metric,
                             value=fn(gated), anchor="ungated loop (always write, never exit)",
                             anchor_value=fn(vanilla), seconds=secs))
        if verbose:
            print(f"GatedMemoryReader {metric}: {fn(gated):.3f} (ungated loop "
                  f"{fn(vanilla):.3f}), {secs:.1f} s")
    return demo_table(rows)
