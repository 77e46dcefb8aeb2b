"""
Transformer rates on a Hölder function: error against depth and risk against n
==============================================================================

He, Jiao, Lu and Yang (ICML 2026, arXiv:2605.07463) show that a standard transformer
(softmax attention, ReLU feed-forward layers, residual connections) needs between
``eps^(-d0/(4 alpha))`` and ``eps^(-d0/alpha)`` blocks, up to unknown constants, to approximate
an alpha-Hölder function of ``d0`` variables to accuracy ``eps``. Inverted, the best error of
``L`` blocks decays with a log-log slope between ``-4 alpha/d0`` and ``-alpha/d0``.

We draw a Weierstrass function of exponent ``alpha = 0.5`` (nowhere smoother than that) with
:func:`~sklearn_icml26.datasets.make_holder_regression`, fit
:class:`~sklearn_icml26.approximation.HolderTransformerRegressor` with 1, 2 and 4 blocks on
noise-free data, then with the automatic depth on noisy samples of growing size, and put the
measured errors beside the lines of the theory. The settings are small so that the example
runs in about a minute on one core; ``benchmarks/bench_holder_transformer.py`` runs the full
study.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

from sklearn_icml26.approximation import (
    HolderTransformerRegressor,
    holder_depth_slopes,
    holder_risk_rates,
)
from sklearn_icml26.datasets import make_holder_regression

torch.set_num_threads(1)
alpha, d0 = 0.5, 1
X, y, f = make_holder_regression(512, d0, alpha, random_state=0, return_function=True)
grid = np.linspace(0, 1, 2000)[:, None]
small = dict(d_model=16, d_ff=32, batch_size=64, lr=3e-3, random_state=0)

# %%
# Error against depth (noise-free data)
# -------------------------------------
depths = [1, 2, 4]
rmse = []
for L in depths:
    reg = HolderTransformerRegressor(alpha=alpha, n_blocks=L, max_epochs=40, **small).fit(X, y)
    rmse.append(np.sqrt(np.mean((reg.predict(grid) - f(grid)) ** 2)))
slope = np.polyfit(np.log(depths), np.log(rmse), 1)[0]
steepest, guaranteed = holder_depth_slopes(d0, alpha)
print(f"measured slope {slope:.2f}; bracket [{steepest:.2f}, {guaranteed:.2f}]")

# %%
# Excess risk against the sample size (noise 0.1, automatic depth)
# ----------------------------------------------------------------
sizes = [128, 256, 512, 1024]
risk, blocks = [], []
for n in sizes:
    rng = np.random.default_rng(n)
    Xn = rng.uniform(size=(n, d0))
    yn = f(Xn) + 0.1 * rng.normal(size=n)  # noisy samples of the same f
    reg = HolderTransformerRegressor(alpha=alpha, max_epochs=30, **small).fit(Xn, yn)
    risk.append(np.mean((reg.predict(grid) - f(grid)) ** 2))
    blocks.append(reg.n_blocks_)
rates = holder_risk_rates(np.array(sizes, dtype=float), d0, alpha)
print("auto depth per n:", dict(zip(sizes, blocks, strict=True)))

# %%
# Log-log plots with the rate lines (anchored at the first measurement)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
L = np.array(depths, dtype=float)
ax1.loglog(L, rmse, "o-", label=f"transformer (slope {slope:.2f})")
ax1.loglog(L, rmse[0] * L**guaranteed, "--", label=f"guaranteed {guaranteed:g}")
ax1.loglog(L, rmse[0] * L**steepest, ":", label=f"steepest allowed {steepest:g}")
ax1.set(xlabel="blocks L", ylabel="test RMSE", title="approximation error vs depth")
ax1.legend()
n = np.array(sizes, dtype=float)
ax2.loglog(n, risk, "o-", label="transformer, auto depth")
for key, style in (("minimax", "--"), ("transformer_derived", ":")):
    ax2.loglog(n, risk[0] * rates[key] / rates[key][0], style, label=f"{key} rate")
ax2.set(xlabel="n", ylabel="excess risk", title="excess risk vs n")
ax2.legend()
fig.tight_layout()
plt.show()

# %%
# With few epochs, optimisation error dominates: measured depth slopes are usually shallower
# than the bracket allows, and the constants of the bounds are unknown, so only the slopes,
# never the levels, can be set beside the theory.
