"""
Metric-phase fields keep open curves open
=========================================

:class:`~sklearn_icml26.surface.MPFSurface` learns, from an unoriented point cloud, a metric
field ``r >= 0`` (an unsigned distance) and a smooth signed phase ``theta``, fused into
``phi = r * tanh(beta * theta) + theta``. The zero set of ``phi`` is the zero set of ``theta``,
a closed curve; trimming where ``r`` is large opens it where the data stop. Its signed
("sdf") ablation has no ``r`` to trim with and closes the open arc.

We use the 2-D analogue of the project's ``open_hemisphere`` shape (``make_thin_shell``:
an open half circle) so that the example runs in seconds; in 3-D, ``extract_mesh`` does the
same with marching cubes (see ``python -m sklearn_icml26 demo mpf``).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

from sklearn_icml26.datasets import make_thin_shell
from sklearn_icml26.metrics import chamfer_distance, sample_polylines
from sklearn_icml26.surface import MPFSurface

torch.set_num_threads(1)
X, _ = make_thin_shell("open_arc", 1000, random_state=0)
truth, _ = make_thin_shell("open_arc", 20000, random_state=1)
params = dict(hidden_width=64, batch_size=256, max_epochs=40, random_state=0)
mpf = MPFSurface(**params).fit(X)
sdf = MPFSurface(field="sdf", **params).fit(X)

# %%
# The three fields of MPF on a grid, and the extracted curves
g = np.linspace(-1, 1, 160)
GX, GY = np.meshgrid(g, g)
fields = mpf.transform(np.c_[GX.ravel(), GY.ravel()])
curves = {"MPF (trim: metric)": mpf.extract_curve(200, trim="metric"),
          "SDF ablation (untrimmed)": sdf.extract_curve(200, trim=None)}

fig, axes = plt.subplots(1, 4, figsize=(17, 4.2))
for ax, j, title in zip(axes[:3], range(3), ["metric r", "phase theta", "fused phi"],
                        strict=True):
    values = fields[:, j].reshape(GX.shape)
    im = ax.contourf(GX, GY, values, 30, cmap="RdBu_r")
    ax.contour(GX, GY, values, [0.0], colors="k", linewidths=0.8)
    ax.plot(X[:, 0], X[:, 1], ".", ms=1, color="tab:green")
    ax.set_title(title)
    ax.set_aspect("equal")
    fig.colorbar(im, ax=ax, shrink=0.8)
ax = axes[3]
ax.plot(X[:, 0], X[:, 1], ".", ms=1, color="0.6", label="input points")
for (label, cs), color in zip(curves.items(), ["tab:red", "tab:blue"], strict=True):
    P, _ = sample_polylines(cs, 20000, random_state=0)
    cd = chamfer_distance(P, truth)
    for i, c in enumerate(cs):
        ax.plot(c[:, 0], c[:, 1], color=color, lw=1.5,
                label=f"{label}, CD-L1 {cd:.3f}" if i == 0 else None)
ax.set_aspect("equal")
ax.set_xlim(-1, 1)
ax.set_ylim(-1, 1)
ax.legend(loc="lower center", fontsize=8)
ax.set_title("extracted curves")
fig.tight_layout()
plt.show()
