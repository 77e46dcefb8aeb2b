"""
Filling a sensor outage in UCI Air Quality
==========================================

The reference analysers of an air-quality station (CO, benzene, NOx, NO2) go down for a day at
a time while the cheap metal-oxide sensors and the weather station keep running. We hide such
24-hour outages in the hourly UCI Air Quality stream (10 % of the hours) with
:func:`~sklearn_icml26.datasets.make_sensor_outages` and fill them with
:class:`~sklearn_icml26.imputation.NeuroMambaImputer` (a bidirectional selective state-space
scan per sensor group with attention across the groups, reconstructed from the abstract of
"NeuroMamba", ICML 2026; not the authors' implementation) beside three anchors: linear
interpolation, :class:`~sklearn.impute.KNNImputer` and
:class:`~sklearn.impute.IterativeImputer`.

The imputer (its defaults, with the daily period of the hourly data) is trained on 2,000
hours so that the example runs in well under a minute on one core;
``benchmarks/bench_neuromamba.py`` runs the whole file and more scenarios.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from sklearn.experimental import enable_iterative_imputer  # noqa: F401
from sklearn.impute import IterativeImputer, KNNImputer
from sklearn.preprocessing import StandardScaler

from sklearn_icml26.datasets import load_air_quality, make_sensor_outages
from sklearn_icml26.imputation import NeuroMambaImputer

torch.set_num_threads(1)
aq = load_air_quality()
frame = aq.data.drop(columns="NMHC_GT").iloc[:2000]  # NMHC_GT is 90 % missing
cols = list(frame.columns)
X = frame.to_numpy()
groups = [[cols.index(c) for c in aq.groups[g] if c in cols]
          for g in ("reference", "sensor", "meteo")]
reference = [cols.index(c) for c in ("CO_GT", "C6H6_GT", "NOx_GT", "NO2_GT")]
Xc, mask = make_sensor_outages(X, "group_block", groups=reference, coverage=0.1,
                               block_length=24, random_state=0)
print(f"hidden entries: {mask.sum()} of {(~np.isnan(X)).sum()} observed")

# %%
# Fill the outages
# ----------------
# Every method sees the degraded matrix only; the scores use the hidden true values.
scaler = StandardScaler().fit(Xc)


def scaled(imputer):
    return scaler.inverse_transform(imputer.fit_transform(scaler.transform(Xc)))


interp = pd.DataFrame(Xc).interpolate(limit_direction="both").to_numpy()
filled = {
    "NeuroMambaImputer": NeuroMambaImputer(
        feature_groups=groups, seasonal_period=24, random_state=0).fit_transform(Xc),
    "interpolation": np.where(np.isnan(interp), np.nanmean(Xc, axis=0), interp),
    "KNNImputer(5)": scaled(KNNImputer(n_neighbors=5)),
    "IterativeImputer": scaled(IterativeImputer(max_iter=10, random_state=0)),
}
sd = np.nanstd(X, axis=0)
for name, out in filled.items():
    print(f"{name:>18}: MAE {(np.abs(out - X) / sd)[mask].mean():.3f} sd")

# %%
# One outage, up close
# --------------------
# Benzene (C6H6_GT) around the first hidden day: the truth, and each method's fill.
j = cols.index("C6H6_GT")
hidden_rows = np.flatnonzero(mask[:, j])
start = max(hidden_rows[0] - 36, 0)
window = slice(start, min(hidden_rows[0] + 60, len(X)))
t = frame.index[window]
fig, ax = plt.subplots(figsize=(9, 4))
ax.plot(t, X[window, j], color="black", lw=2, label="truth")
for name, out in filled.items():
    fill = np.where(mask[window, j], out[window, j], np.nan)
    ax.plot(t, fill, lw=1.5, label=name)
ax.axvspan(frame.index[hidden_rows[0]], frame.index[min(hidden_rows[0] + 23, len(X) - 1)],
           color="grey", alpha=0.15, label="outage")
ax.set_ylabel("C6H6_GT (µg/m³)")
ax.set_title("A 24-hour reference-analyser outage filled by each method")
ax.legend(fontsize=8, ncol=3)
fig.autofmt_xdate()
plt.show()
