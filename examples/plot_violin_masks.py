"""
VIOLIN masks: what one query patch attends to along the space-filling curves
============================================================================

Candogan et al. (ICML 2026, arXiv:2606.14757) multiply every attention logit of a vision
transformer by a mask that decays with the distance of the two patches along several
space-filling curves, ``M[i, j] = mean_c gamma_c^|pos_c(i) - pos_c(j)|``, with one learned
decay per (curve, head). Here we look at the curves themselves, at the mask row of one query
patch at initialisation and at the rows the model learned on
:func:`~sklearn_icml26.datasets.make_local_pattern_images` (a corner at a random position on a
noisy 16 x 16 canvas, cut into 2 x 2 patches: an 8 x 8 grid of 64 tokens). The training is
short so that the example runs in about a minute on one core;
``benchmarks/bench_violin.py`` compares VIOLIN with the plain ViT.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch
from scipy.special import expit

from sklearn_icml26.datasets import make_local_pattern_images
from sklearn_icml26.vision import ViolinViTClassifier, space_filling_curve_order, violin_mask

torch.set_num_threads(1)
CURVES = ViolinViTClassifier().curves  # the eight curves of the default mask

# %%
# The eight curves on the 8 x 8 patch grid
# ----------------------------------------
fig, axes = plt.subplots(2, 4, figsize=(10, 5.2))
for ax, kind in zip(axes.ravel(), CURVES, strict=True):
    order = space_filling_curve_order(8, 8, kind)
    ax.plot(order[:, 1], order[:, 0], "-", color="0.3", lw=1.2)
    ax.scatter(order[:, 1], order[:, 0], c=np.arange(64), cmap="viridis", s=14, zorder=3)
    ax.set_title(kind)
    ax.set_xlim(-0.5, 7.5)
    ax.set_ylim(7.5, -0.5)
    ax.set_xticks([])
    ax.set_yticks([])
fig.suptitle("visit order of each curve (dark = early)")
fig.tight_layout()

# %%
# Train VIOLIN briefly on local corner patterns
# ---------------------------------------------
X, y = make_local_pattern_images(600, image_shape=(16, 16), random_state=0)
clf = ViolinViTClassifier(image_shape=(16, 16), patch_size=2, max_epochs=12, lr=3e-3,
                          random_state=0).fit(X[:450], y[:450])
print(f"test accuracy after {clf.n_iter_} epochs: {clf.score(X[450:], y[450:]):.3f} "
      "(chance 0.25)")
print("learned decays gamma, block 1 (rows: curves, columns: heads):")
for kind, row in zip(CURVES, clf.decay_rates_[0], strict=True):
    print(f"  {kind:10s}", np.round(row, 4))
print("attention scales s_h per block:", np.round(clf.attention_scales_, 3))

# %%
# The mask row of one query patch
# -------------------------------
# The query is patch (3, 4) of the 8 x 8 grid. The first panel is the mask at a = 2 for every
# curve (gamma = 0.88, sharper than the initialisation, to show its shape), the others are
# the learned masks of each head of the two blocks. Patches close along most curves get
# values near 1; the mask is not a Manhattan ball, since each curve jumps somewhere.
query = 3 * 8 + 4
masks = [blk.attn.mask_matrix().detach().numpy() for blk in clf.net_.module_.blocks]
n_heads = masks[0].shape[0]
fig, axes = plt.subplots(2, n_heads + 1, figsize=(2.4 * (n_heads + 1), 5))
example = violin_mask(8, 8, expit(2.0))[query].reshape(8, 8)
for b in range(2):
    ax = axes[b, 0]
    if b == 0:
        ax.imshow(example, cmap="magma", vmin=0, vmax=1)
        ax.set_title("gamma = sigmoid(2)")
    else:
        ax.imshow(violin_mask(8, 8, expit(7.0))[query].reshape(8, 8), cmap="magma")
        ax.set_title("init scale: sigmoid(7)")
    for h in range(n_heads):
        ax = axes[b, h + 1]
        row = masks[b][h, query].reshape(8, 8)
        ax.imshow(row, cmap="magma")
        ax.set_title(f"block {b + 1} head {h + 1}\nmin {row.min():.3f}")
for ax in axes.ravel():
    ax.plot(4, 3, "c+", ms=10, mew=2)
    ax.set_xticks([])
    ax.set_yticks([])
fig.suptitle("mask row M[query, :] on the patch grid (+ = query patch)")
fig.tight_layout()
plt.show()
