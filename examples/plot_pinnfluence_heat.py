"""
Influence maps of a good and a failed PINN on the heat equation
===============================================================

PINNfluence (Naujoks et al., ICML 2026, arXiv:2409.08958) asks which collocation points, through
which loss term, move a physics-informed network's prediction at a point of interest. We train
two PINNs on the forced heat equation ``u_t = u_xx - exp(-t)(sin(pi x) - pi^2 sin(pi x))`` on
``[-1, 1] x [0, 1]`` (:func:`~sklearn_icml26.pinn.heat_1d`): a good one on 300 domain, 30
boundary and 30 initial points, and a deliberately failed one on 10/2/2 points. For each, the
left panel shows the error against the exact solution ``sin(pi x) exp(-t)`` and the right panel
the influence of every training point on ``u(0.5, 0.5)`` (:class:`~sklearn_icml26.pinn.
PINNInfluence`, Arnoldi inverse). The settings are small so that the example runs in a few
minute on one core; ``benchmarks/bench_pinnfluence.py`` runs the full comparison.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

from sklearn_icml26.datasets import make_pde_collocation
from sklearn_icml26.pinn import PINNInfluence, PINNRegressor, heat_1d

torch.set_num_threads(1)
problem = heat_1d()
xs, ts = np.meshgrid(np.linspace(-1, 1, 80), np.linspace(0, 1, 80))
grid = np.c_[xs.ravel(), ts.ravel()]
exact = np.sin(np.pi * grid[:, 0]) * np.exp(-grid[:, 1])
probe = np.array([[0.5, 0.5]])

# %%
# Train the two PINNs and compute the influence on u(0.5, 0.5)
# -------------------------------------------------------------
results = {}
for name, points in (("good (300/30/30 points)", (300, 30, 30)),
                     ("failed (10/2/2 points)", (10, 2, 2))):
    X = make_pde_collocation(problem, *points, random_state=0)
    pinn = PINNRegressor(problem, hidden_layer_sizes=(16, 16), max_epochs=300,
                         max_iter=300, random_state=0).fit(X)
    influence = PINNInfluence(pinn, hessian="arnoldi", arnoldi_dim=60,
                              projection_dim=20).fit()
    results[name] = dict(X=X, error=np.abs(pinn.predict(grid) - exact),
                         influence=influence.influence(probe)[0],
                         fractions=influence.loss_fractions(probe)[0],
                         terms=influence.loss_term_names_,
                         l2=pinn.relative_l2_error(grid),
                         residual=np.abs(pinn.residuals(grid)[:, 0]).mean())
    print(f"{name}: relative L2 {results[name]['l2']:.2e}, mean |PDE residual| "
          f"{results[name]['residual']:.2e}, loss fractions at the probe "
          + ", ".join(f"{k} {v:.2f}" for k, v in zip(influence.loss_term_names_,
                                                   results[name]["fractions"], strict=True)))

# %%
# Error maps and influence maps
# -----------------------------
# The good PINN draws its prediction at the probe from points around it and earlier in time
# (information flows forward in time); the failed PINN's few points all pull on it, with large
# influences of both signs.
fig, axes = plt.subplots(2, 2, figsize=(10, 8), constrained_layout=True)
for row, (name, r) in zip(axes, results.items(), strict=True):
    im = row[0].imshow(r["error"].reshape(xs.shape), origin="lower", extent=(-1, 1, 0, 1),
                       aspect="auto", cmap="magma")
    fig.colorbar(im, ax=row[0], label="|u - u*|")
    row[0].set(title=f"{name}: error (rel. L2 {r['l2']:.1e})", xlabel="x", ylabel="t")
    lim = np.abs(r["influence"]).max()
    sc = row[1].scatter(r["X"][:, 0], r["X"][:, 1], c=r["influence"], cmap="coolwarm",
                        vmin=-lim, vmax=lim, s=12 if len(r["X"]) > 100 else 60)
    row[1].plot(*probe[0], marker="*", color="k", markersize=14)
    fig.colorbar(sc, ax=row[1], label="influence on u(0.5, 0.5)")
    row[1].set(title=f"{name}: influence of each training point", xlabel="x", ylabel="t",
               xlim=(-1.05, 1.05), ylim=(-0.05, 1.05))
plt.show()
