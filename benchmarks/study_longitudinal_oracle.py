"""Efficiency bound of setting B: the AIPW estimator with the true outcome regression.

Setting B of ``bench_longitudinal.py`` randomises once at baseline, so every unbiased
estimator's variance is bounded below by that of the AIPW estimator whose augmentation uses
the true ``q*_t(x0, a) = E[Y_t | X_0 = x0, arm a]``. This study computes ``q*`` for every unit
by nested Monte Carlo from the generator itself (``--inner`` paths per unit and arm) and
prints the oracle's standard error per period divided by Lin's HC2 standard error on the same
data sets (seeds of setting B's replications). It shows how far the benchmark's width-ratio target
(<= 0.6 at t >= 2) is from what a perfect outcome model achieves, separating the limits of
the nuisance learners at n = 1000 from those of the method.

Usage::

    python benchmarks/study_longitudinal_oracle.py [--reps 4] [--inner 200]
"""

import argparse
import inspect

import numpy as np

from sklearn_icml26.datasets import _longitudinal as gen
from sklearn_icml26.datasets import make_longitudinal_rct
from sklearn_icml26.treatment_effects import LongitudinalRegressionAdjuster

N, T, D = 1000, 7, 10
_KEYS = ["dynamics", "outcome", "effect", "effect_amplitude", "effect_baseline", "timestep",
         "forcing", "y_to_x", "w_to_x", "noise_x", "noise_y"]


def _generator_params():
    """The generator's default parameters, as its private simulator takes them."""
    defaults = {k: v.default for k, v in
                inspect.signature(make_longitudinal_rct).parameters.items()}
    p = {k: float(defaults[k]) if isinstance(defaults[k], (int, float)) else defaults[k]
         for k in _KEYS}
    p["Q"] = gen._rotation(D, int(defaults["dgp_seed"]))
    tau = gen._effect_curve(T, p["effect"], p["effect_amplitude"], p["effect_baseline"])
    return p, tau


def oracle_q(x0, arm, inner, rng, p, tau):
    """``(n, T)``: E[Y_t | X_0 = x0, treatment fixed at ``arm``] by ``inner`` paths per unit."""
    m = len(x0)
    x = np.repeat(x0, inner, axis=0)
    y_prev = np.zeros(m * inner)
    w = np.full(m * inner, float(arm))
    out = np.empty((m, T))
    for t in range(T):
        if t > 0:
            x = gen._step_x(x, y_prev, w, rng, p)
        y_prev = gen._outcome(x, y_prev, w, tau[t], rng, p)
        out[:, t] = y_prev.reshape(m, inner).mean(axis=1)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4, help="data sets (setting B's seeds)")
    parser.add_argument("--inner", type=int, default=200, help="Monte Carlo paths per unit")
    args = parser.parse_args(argv)
    p, tau = _generator_params()
    ratios = []
    for rep in range(args.reps):
        X, y, w, _ = make_longitudinal_rct(N, T, D, assign="baseline", n_truth=1000,
                                           random_state=2000 + rep)
        rng = np.random.default_rng(rep)
        x0 = X[:, :D]
        q1, q0 = (np.vstack([oracle_q(x0[s:s + 100], a, args.inner, rng, p, tau)
                             for s in range(0, N, 100)]) for a in (1, 0))
        pi, d = w.mean(), w[:, None].astype(float)
        phi1 = q1 + d / pi * (y - q1)
        phi0 = q0 + (1 - d) / (1 - pi) * (y - q0)
        psi = (phi1 - phi1.mean(0)) - (phi0 - phi0.mean(0))
        se = np.sqrt((psi**2).mean(0) / N)
        lin = LongitudinalRegressionAdjuster(D, n_mc=8, random_state=0).fit(
            X, y, treatment=w).baselines_["lin_se"].to_numpy()
        ratios.append(se / lin)
        print(f"data set {rep}: oracle SE / Lin SE per period {np.round(se / lin, 3)}")
    print(f"mean over {args.reps}: {np.round(np.mean(ratios, axis=0), 3)}")


if __name__ == "__main__":
    main()
