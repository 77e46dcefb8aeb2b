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
import torch

from sklearn_icml26.datasets import make_thin_shell
from sklearn_icml26.metrics import chamfer_distance, sample_polylines
from sklearn_icml26.surface import MPFSurface, SurfaceDisplay

torch.set_num_threads(1)
X, _ = make_thin_shell("open_arc", 1000, random_state=0)
truth, _ = make_thin_shell("open_arc", 20000, random_state=1)
params = dict(hidden_size=64, batch_size=256, max_epochs=40, random_state=0)
mpf = MPFSurface(**params).fit(X)
sdf = MPFSurface(field="sdf", **params).fit(X)

# %%
# The three fields of MPF on a grid, and the extracted curves
# -----------------------------------------------------------
# :class:`~sklearn_icml26.surface.SurfaceDisplay` draws a learned field as filled contours
# under the untrimmed zero set of ``phi`` (black) and the input points (green); the last panel
# puts the trimmed MPF curve and the SDF ablation's curve on one axes.
curves = {"MPF (trim: metric)": mpf.extract_curve(200, trim="metric"),
          "SDF ablation (untrimmed)": sdf.extract_curve(200, trim=None)}

fig, axes = plt.subplots(1, 4, figsize=(17, 4.2))
for ax, field, title in zip(axes[:3], ["r", "theta", "phi"],
                            ["metric r", "phase theta", "fused phi"], strict=True):
    SurfaceDisplay.from_estimator(mpf, X, resolution=160, trim=None, background=field, ax=ax,
                                  color="k", points_color="tab:green", lw=0.8)
    ax.set_title(title)
ax = axes[3]
for (label, cs), color in zip(curves.items(), ["tab:red", "tab:blue"], strict=True):
    P, _ = sample_polylines(cs, 20000, random_state=0)
    cd = chamfer_distance(P, truth)
    SurfaceDisplay(curves=cs, points=X if color == "tab:red" else None,
                   name=f"{label}, CD-L1 {cd:.3f}").plot(ax=ax, color=color)
ax.set_xlim(-1, 1)
ax.set_ylim(-1, 1)
ax.legend(loc="lower center", fontsize=8)
ax.set_title("extracted curves")
fig.tight_layout()
plt.show()
