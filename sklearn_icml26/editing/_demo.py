"""Demo of HubnessBalancedCodebook (`python -m sklearn_icml26 demo editing`).

Half of the questions of one LoCoMo conversation become edits (the question with its answer,
and the evidence turns as rationale keys); the other half and the questions of the other
conversations probe generality (held-out questions whose evidence was edited) and locality
(unrelated questions must be left alone). The codebook is compared with plain 5-nearest-
neighbour retrieval over the same keys.
"""

import time

import numpy as np
from sklearn.neighbors import NearestNeighbors

from ..utils._demo_rows import demo_row, demo_table
from ._codebook import HubnessBalancedCodebook

__all__ = ["run_demo"]


def _task(data, conv, seed=0):
    qa = data.qa[(data.qa.category.isin([1, 2, 3, 4])) & (data.qa.evidence.map(len) > 0)]
    turns = data.turns[data.turns.conversation == conv]
    text_of = dict(zip(turns.dia_id, turns.formatted, strict=True))
    mine = qa[qa.conversation == conv].reset_index(drop=True)
    perm = np.random.default_rng(seed).permutation(len(mine))
    edits = mine.iloc[np.sort(perm[: len(mine) // 2])]
    held = mine.iloc[np.sort(perm[len(mine) // 2:])]
    keys, values, edit_ids = [], [], []
    for e, (_, row) in enumerate(edits.iterrows()):
        keys.append(row.question)
        values.append(f"The answer to '{row.question}' is {row.answer}.")
        edit_ids.append(e)
        for dia in row.evidence:
            keys.append(text_of[dia])
            values.append(text_of[dia])
            edit_ids.append(e)
    edited = {d for ev in edits.evidence for d in ev}
    general = [(row.question, [text_of[d] for d in row.evidence if d in edited])
               for _, row in held.iterrows() if any(d in edited for d in row.evidence)]
    far = qa[qa.conversation != conv].question.tolist()
    return keys, values, np.asarray(edit_ids), general, far


def _hit(retrieved, targets):
    return any(t in v for v in retrieved for t in targets)


def run_demo(data_home=None, verbose=1, fast=False):
    """Generality and locality of the codebook against plain nearest-neighbour retrieval.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Data home holding ``locomo/locomo10.json`` (see
        :func:`~sklearn_icml26.datasets.load_locomo`).
    verbose : int, default=1
        ``1`` prints progress.
    fast : bool, default=False
        The hashing embedder and 300 unrelated questions instead of MiniLM and all of them.

    Returns
    -------
    table : pandas.DataFrame
        Columns ``DEMO_COLUMNS``: generality (held-out questions whose evidence was edited and
        is retrieved among 5 values) and locality (questions of other conversations left
        alone) of the codebook beside ``NearestNeighbors(n_neighbors=5)``, which never
        rejects a query.

    Examples
    --------
    >>> from sklearn_icml26.editing._demo import run_demo
    >>> table = run_demo(verbose=0, fast=True)  # doctest: +SKIP
    """
    from ..datasets import load_locomo
    from ..feature_extraction import SentenceEmbedder

    data = load_locomo(data_home)
    conv = "conv-26"
    keys, values, edit_ids, general, far = _task(data, conv)
    if fast:
        far = [far[i] for i in np.sort(np.random.default_rng(0).permutation(len(far))[:300])]
    emb = SentenceEmbedder(backend="hashing" if fast else "auto").fit(["warm up"])
    dataset = f"LoCoMo {conv}: {edit_ids.max() + 1} edits, {len(keys)} keys"
    if verbose:
        print(f"[editing demo] {dataset}; embedder {emb.backend_} ...", flush=True)
    start = time.perf_counter()
    book = HubnessBalancedCodebook(embedder=emb, random_state=0).fit(
        keys, values=values, edit_ids=edit_ids)
    got = book.retrieve([q for q, _ in general])
    generality = float(np.mean([_hit(r, t) for r, (_, t) in zip(got, general, strict=True)]))
    locality = float(np.mean(book.predict(far) == -1))
    seconds = time.perf_counter() - start
    nn = NearestNeighbors(n_neighbors=5).fit(emb.transform(keys))
    idx = nn.kneighbors(emb.transform([q for q, _ in general]), return_distance=False)
    nn_gen = float(np.mean([_hit([values[j] for j in row], t)
                            for row, (_, t) in zip(idx, general, strict=True)]))
    if verbose:
        print(f"[editing demo] codebook: generality {generality:.3f}, locality {locality:.3f}; "
              f"NearestNeighbors: generality {nn_gen:.3f}, locality 0 (never rejects)",
              flush=True)
    anchor = "NearestNeighbors(n_neighbors=5)"
    rows = [
        demo_row(method="HubnessBalancedCodebook", dataset=dataset, metric="generality@5",
                 value=generality, anchor=anchor, anchor_value=nn_gen, seconds=seconds),
        demo_row(method="HubnessBalancedCodebook", dataset=dataset,
                 metric="locality (other conversations rejected)", value=locality,
                 anchor=anchor, anchor_value=0.0, seconds=seconds),
    ]
    return demo_table(rows)
