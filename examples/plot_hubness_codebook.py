"""
A hub before and after hubness balancing in an edit codebook (LoCoMo)
=====================================================================

ReasonEdit (Qiu, Hou, Daneshjou, Alaa, Hartvigsen, ICML 2026, arXiv:2602.02408) retrieves the
facts of past edits for a new query from a key-value codebook. In a high-dimensional embedding
a few keys, *hubs*, are among the nearest neighbours of far more queries than the others and
crowd the retrieved context. ReasonEdit divides each key's distance by its local scale
``sigma_j`` (the median distance to its 30 nearest keys), which flattens the hubs.

Half of the questions of one LoCoMo conversation become edits: the question (value: its answer)
and its evidence turns (value: the turn). All questions of the conversation are then used as
queries. We count how often each key is among the 5 nearest keys of a query (its
k-occurrence ``N_5``) with plain distances and with the balanced ones of
:class:`~sklearn_icml26.editing.HubnessBalancedCodebook`, and report the skewness of ``N_5``
and the hub occurrence (:func:`~sklearn_icml26.metrics.hubness_measures`).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from sklearn_icml26.datasets import load_locomo
from sklearn_icml26.editing import HubnessBalancedCodebook
from sklearn_icml26.feature_extraction import SentenceEmbedder
from sklearn_icml26.metrics import hubness_measures

data = load_locomo()
conv = "conv-26"
qa = data.qa[(data.qa.conversation == conv) & data.qa.category.isin([1, 2, 3, 4])
             & (data.qa.evidence.map(len) > 0)].reset_index(drop=True)
turns = data.turns[data.turns.conversation == conv]
text_of = dict(zip(turns.dia_id, turns.formatted, strict=True))

rng = np.random.default_rng(0)
edits = qa.iloc[np.sort(rng.permutation(len(qa))[: len(qa) // 2])]
keys, values, edit_ids = [], [], []
for e, (_, row) in enumerate(edits.iterrows()):
    keys.append(row.question)
    values.append(f"The answer to '{row.question}' is {row.answer}.")
    edit_ids.append(e)
    for dia in row.evidence:
        keys.append(text_of[dia])
        values.append(text_of[dia])
        edit_ids.append(e)

# MiniLM when the ``memory`` extra is installed, a hashing embedder otherwise
embedder = SentenceEmbedder().fit(["warm up"])
print(f"{len(edits)} edits, {len(keys)} keys, embedder {embedder.backend_}")

# %%
# k-occurrence with plain and balanced distances
# ----------------------------------------------
queries = qa.question.tolist()
results = {}
for name, scaling in (("plain distance", None), ("reasonedit scaling", "reasonedit")):
    book = HubnessBalancedCodebook(embedder=embedder, scaling=scaling, random_state=0)
    book.fit(keys, values=values, edit_ids=edit_ids)
    results[name] = hubness_measures(book.dissimilarity(queries), k=5)
    m = results[name]
    print(f"{name:>20}: N_5 skewness {m['k_skewness']:.2f}, hub occurrence "
          f"{m['hub_occurrence']:.3f}, largest N_5 {m['k_occurrence'].max()} of "
          f"{len(queries)} queries")

# %%
# The hubs flatten
# ----------------
# Keys sorted by their plain k-occurrence: the keys that dominated the plain neighbourhoods
# (left) lose most of their occurrences once each distance is divided by the key's scale,
# and occurrences move to keys that were rarely retrieved.
order = np.argsort(-results["plain distance"]["k_occurrence"], kind="stable")
fig, ax = plt.subplots(figsize=(8, 4))
for name, color in (("plain distance", "tab:gray"), ("reasonedit scaling", "tab:blue")):
    m = results[name]
    ax.bar(np.arange(len(order)), m["k_occurrence"][order], width=1.0, alpha=0.6,
           color=color, label=f"{name} (skewness {m['k_skewness']:.2f})")
mean = 5 * len(queries) / len(order)
ax.axhline(2 * mean, color="k", ls="--", lw=1, label="hub threshold (2 x mean)")
ax.set_xlabel("key (sorted by plain k-occurrence)")
ax.set_ylabel("N_5: queries that retrieve the key")
ax.set_title(f"LoCoMo {conv}: {len(queries)} questions against {len(order)} edit keys")
ax.legend()
fig.tight_layout()
plt.show()

# %%
# The caveat: queries from elsewhere
# ----------------------------------
# The scaling is one-sided (only the key's scale enters), so keys in sparse regions get small
# scaled distances from *everything*: for questions of other conversations the skewness
# rises. The codebook's locality gate rejects most of those queries before retrieval.
others = data.qa[(data.qa.conversation != conv) & data.qa.category.isin([1, 2, 3, 4])]
far = others.question.tolist()[:400]
for name, scaling in (("plain distance", None), ("reasonedit scaling", "reasonedit")):
    book = HubnessBalancedCodebook(embedder=embedder, scaling=scaling, random_state=0)
    book.fit(keys, values=values, edit_ids=edit_ids)
    m = hubness_measures(book.dissimilarity(far), k=5)
    rejected = np.mean(book.predict(far) == -1)
    print(f"{name:>20}: out-of-domain N_5 skewness {m['k_skewness']:.2f}; "
          f"gate rejects {rejected:.1%} of these queries")
