"""
Streaming memory on LoCoMo: retrieval degrades as the memory grows
==================================================================

Neuromem (Zhang et al., ICML 2026, arXiv:2602.13967) evaluates an LLM agent's external memory
while it is being filled: conversation turns arrive two at a time and, in question-driven
rounds, every question whose evidence has already arrived is asked again. Re-scoring the
questions of the first round in every later round (the *panel*) isolates the effect of memory
growth: the same questions, the same evidence, only more distractors.

We run :func:`~sklearn_icml26.memory.interleaved_memory_eval` on three LoCoMo conversations
(Maharana et al., ACL 2024; CC BY-NC 4.0, downloaded to the data home on first use) with
:class:`~sklearn_icml26.memory.StreamingMemory` in four data structures: exact dense search
(``"flat"``), incremental BM25, their reciprocal-rank fusion (``"hybrid"``) and the recency
baseline. Items are embedded with MiniLM when the ``memory`` extra is installed, else with
the hashing fallback. ``benchmarks/bench_neuromem.py`` runs all ten conversations and every
dimension.
"""

# %%
import warnings

import matplotlib.pyplot as plt
import torch

from sklearn_icml26.datasets import load_locomo
from sklearn_icml26.feature_extraction import SentenceEmbedder
from sklearn_icml26.memory import StreamingMemory, interleaved_memory_eval

torch.set_num_threads(1)
data = load_locomo()
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)  # the hashing fallback says so once
    embedder = SentenceEmbedder().fit(["x"])
print("embedder:", embedder.backend_)

# %%
# Panel Recall@5 by round
# -----------------------
# Evidence Recall@5 of the round-1 questions, re-asked in each of the five rounds.
results = {}
for structure in ("flat", "bm25", "hybrid", "recency"):
    mem = StreamingMemory(embedder, structure=structure)
    results[structure] = interleaved_memory_eval(mem, data, conversations=[0, 1, 2])
    print(structure, results[structure].panel["recall_at_5"].round(3).tolist())

fig, axes = plt.subplots(1, 2, figsize=(10, 4))
for structure, res in results.items():
    axes[0].plot(res.panel.index, res.panel["recall_at_5"], marker="o", label=structure)
    axes[1].plot(res.per_round.index, res.per_round["memory_size"], marker="o",
                 label=structure)
axes[0].set(xlabel="round", ylabel="panel Recall@5", title="same questions, growing memory")
axes[1].set(xlabel="round", ylabel="items in memory", title="memory size at each round")
axes[0].legend()
fig.tight_layout()

# %%
# Which questions are hardest?
# ----------------------------
# The oracle-span F1 is the best contiguous span of one retrieved item against the gold
# answer: an extractive *upper bound* on what a reader could score, not a reader's score.
# Temporal answers are dates resolved against the session date, so they are rarely a span
# of a turn, even when the right turn is retrieved.
flat = results["flat"].per_category.loc["final_round"]
print(flat[["recall_at_5", "oracle_f1_at_5"]].round(3))
