"""
=================================================
Lineage tree of myeloid progenitors with HDTree
=================================================

:class:`~sklearn_icml26.lineage.HDTreeLineage` on the Paul15 myeloid progenitors (2,660 cells,
240 genes): the code tree with the cell types of its branches, the 2-D map coloured by
pseudotime, and the pseudotime of the cells along Slingshot's two lineages (multipotent
progenitors to monocytes and neutrophils; to erythrocytes).

The fit here is short (40 epochs, no decoder) so that the example runs in well under a
minute; the benchmark uses the defaults.
"""

import matplotlib.pyplot as plt
import torch

from sklearn_icml26.datasets import load_paul15
from sklearn_icml26.lineage import (
    HDTreeLineage,
    LineageTreeDisplay,
    PseudotimeDisplay,
    make_count_pipeline,
)
from sklearn_icml26.metrics import pseudotime_correlation

torch.set_num_threads(1)
data = load_paul15()
genes = make_count_pipeline().fit_transform(data.data)
model = HDTreeLineage(n_clusters=7, n_levels=5, max_epochs=40, fit_decoder=False,
                      hidden_size=128, random_state=0)
model.fit(genes, root_mask=data.root_mask)

# %%
# The code tree and its cell types
# --------------------------------
# :class:`~sklearn_icml26.lineage.LineageTreeDisplay` draws the codes of the first four levels
# as a dendrogram (nodes sized by their cells) with, under each level-3 code, the shares of
# the annotated cell types among its cells; the star marks the branch where the pseudotime
# starts.
LineageTreeDisplay.from_estimator(model, data.target, max_level=3,
                                  class_names=list(data.target_names))
plt.gcf().tight_layout()

# %%
# Pseudotime on the map, and along the two lineages
# -------------------------------------------------
# Left: the HDTree map coloured by pseudotime, with the codes along each root-to-terminal
# lineage path (:class:`~sklearn_icml26.lineage.PseudotimeDisplay`). Right: the pseudotime
# against Slingshot's on the cells of each of its two lineages.
fig, axes = plt.subplots(1, 2, figsize=(12, 5))
PseudotimeDisplay.from_estimator(model, ax=axes[0])
axes[0].set_title("HDTree map of Paul15 coloured by pseudotime")
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
