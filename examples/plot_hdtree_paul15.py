"""
=================================================
Lineage tree of myeloid progenitors with HDTree
=================================================

:class:`~sklearn_icml26.lineage.HDTreeLineage` on the Paul15 myeloid progenitors (2,660 cells,
240 genes): the 2-D map coloured by cell type with the code tree drawn over it, and the
pseudotime of the cells along Slingshot's two lineages (multipotent progenitors to monocytes
and neutrophils; to erythrocytes).

The fit here is short (40 epochs, no decoder) so that the example runs in well under a
minute; the benchmark uses the defaults.
"""

import matplotlib.pyplot as plt
import numpy as np
import torch

from sklearn_icml26.datasets import load_paul15
from sklearn_icml26.lineage import HDTreeLineage, make_count_pipeline
from sklearn_icml26.metrics import pseudotime_correlation

torch.set_num_threads(1)
data = load_paul15()
genes = make_count_pipeline().fit_transform(data.data)
model = HDTreeLineage(n_clusters=7, n_levels=5, max_epochs=40, fit_decoder=False,
                      hidden_size=128, random_state=0)
model.fit(genes, root_mask=data.root_mask)

# %%
# The map and the code tree
# -------------------------
# Each code of the first four levels is drawn at its position in the map and linked to its
# parent; the pseudotime starts at the code marked with a star.
fig, axes = plt.subplots(1, 2, figsize=(12, 5))
ax = axes[0]
for k, name in enumerate(data.target_names):
    e = model.embedding_[data.target == k]
    ax.scatter(e[:, 0], e[:, 1], s=4, label=name)
codes, tree = model.code_embeddings_, model.tree_
for code in np.flatnonzero((tree.level >= 1) & (tree.level <= 3) & (tree.count > 0)):
    parent = tree.parent[code]
    ax.plot(*codes[[parent, code]].T, color="k", lw=0.6 + 1.5 / (1 + tree.level[code]))
ax.scatter(*codes[tree.level <= 3][tree.count[tree.level <= 3] > 0].T, c="k", s=10)
ax.scatter(*codes[model.root_code_], marker="*", s=250, c="gold", edgecolor="k")
ax.set_title("HDTree map of Paul15 with the code tree")
ax.legend(markerscale=3, fontsize=7)

# %%
# Pseudotime along the two lineages
# ---------------------------------
ax = axes[1]
for k, lineage in enumerate(("Lineage1 (myeloid)", "Lineage2 (erythroid)")):
    mask = data.lineage_weights[:, k] == 1
    rho = pseudotime_correlation(model.pseudotime_, data.pseudotime[:, k], mask=mask)
    ax.scatter(data.pseudotime[mask, k], model.pseudotime_[mask], s=4,
               label=f"{lineage}: Spearman {rho:.2f}")
ax.set_xlabel("Slingshot pseudotime")
ax.set_ylabel("HDTree pseudotime")
ax.legend(markerscale=3)
fig.tight_layout()
plt.show()
