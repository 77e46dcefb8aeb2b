"""Forward simulation of the adjuster: history columns, the Monte Carlo integration of the
transition kernels and the per-fold fit of a regime's nuisance models.
"""


import numpy as np
from sklearn import config_context, linear_model
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from ..utils._weights import fit_with_weights
from ._transition import LinearGaussianTransition

_CHUNK_ROWS = 32768  # particles evaluated at once in predict
_FIT_CHUNK_ROWS = 131072  # particle rows (all starts together) simulated at once in fit

# --------------------------------------------------------------------------------------------
# helpers of the adjuster


def _history_index(t, base_dim, block, window):
    """Columns of H_t inside the full history matrix: a slice when contiguous."""
    lo = 0 if window is None else max(0, t - window)
    if lo == 0:
        return slice(0, base_dim + t * block)
    return np.r_[np.arange(base_dim), base_dim + np.arange(lo * block, t * block)]


def _step_slice(tau, base_dim, block):
    """Columns of the step block S_tau = (X_{tau+1}, Y_tau) in the full history matrix."""
    start = base_dim + tau * block
    return slice(start, start + block)


class _ConstantProbability:
    """Censoring model of a risk set with a single class: a constant rate."""

    def __init__(self, rate):
        self.rate = float(rate)

    def predict_proba(self, X):
        rate = np.full(len(X), self.rate)
        return np.column_stack([1.0 - rate, rate])


# scikit-learn regressors whose predict is X @ coef_.T + intercept_ (exact types only: a
# subclass may override predict)
_AFFINE_REGRESSORS = tuple(getattr(linear_model, name) for name in (
    "LinearRegression", "Ridge", "RidgeCV", "Lasso", "LassoCV", "ElasticNet", "ElasticNetCV",
    "Lars", "LarsCV", "LassoLars", "LassoLarsCV", "LassoLarsIC", "OrthogonalMatchingPursuit",
    "OrthogonalMatchingPursuitCV", "BayesianRidge", "ARDRegression", "HuberRegressor",
    "TheilSenRegressor", "QuantileRegressor", "SGDRegressor") if hasattr(linear_model, name))


def _is_affine(model):
    """Whether a fitted model's predict is ``X @ coef_.T + intercept_`` (scikit-learn linear)."""
    return type(model) in _AFFINE_REGRESSORS


def _is_affine_kernel(kernel):
    """Whether a fitted kernel draws ``affine(H) + affine(z)`` (linear-Gaussian, linear mean)."""
    return isinstance(kernel, LinearGaussianTransition) and _is_affine(kernel.mean_model_)


def _simulate_forward(G, Hfull, I, test, outcome, transitions, n_mc, rng, cols, base_dim,
                      block):
    """Fill ``G[:, s, t]`` (s < t) of the test units by forward Monte Carlo.

    Particles of every start ``s`` are stacked (ordered by ``s``), so each step ``tau`` is one
    draw from the kernel and one outcome prediction over the starts ``s <= tau``. When the
    kernels and outcome models are all affine, the mean over ``n_mc`` particles of
    ``m_t(particle)`` is ``m_t`` of the mean particle, which is the same chain driven by the
    mean of the ``n_mc`` noise vectors, ``N(0, I / n_mc)``: one particle with noise scaled by
    ``1 / sqrt(n_mc)`` gives the particle average exactly in law, ``n_mc`` times cheaper.
    """
    T = G.shape[2]
    if T < 2 or len(test) == 0:
        return
    affine = all(_is_affine(m) for m in outcome) and all(
        _is_affine_kernel(k) for k in transitions)
    n_particles, noise_scale = (1, 1.0 / np.sqrt(n_mc)) if affine else (n_mc, 1.0)
    on = [np.ones(len(test), dtype=bool)] + [I[test, s - 1] for s in range(1, T - 1)]
    # chunks of test units whose stacked particles stay below _FIT_CHUNK_ROWS rows
    per_unit = n_particles * np.sum(on, axis=0)
    bounds = [0]
    total = 0
    for i, rows in enumerate(per_unit):
        if total and total + rows > _FIT_CHUNK_ROWS:
            bounds.append(i)
            total = 0
        total += rows
    bounds.append(len(test))
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        pos = [lo + np.flatnonzero(mask[lo:hi]) for mask in on]
        offsets = np.concatenate([[0], np.cumsum([len(p) * n_particles for p in pos])])
        if offsets[-1] == 0:
            continue
        P = np.empty((offsets[-1], Hfull.shape[1]))
        for s, p in enumerate(pos):
            P[offsets[s]:offsets[s + 1]] = np.repeat(Hfull[test[p]], n_particles, axis=0)
        for tau in range(T - 1):
            end = offsets[tau + 1]  # rows of the starts s <= tau
            if end == 0:
                continue
            z = rng.standard_normal((end, block))
            if noise_scale != 1.0:
                z *= noise_scale
            draw = transitions[tau].sample(P[:end, cols(tau)], z)
            P[:end, _step_slice(tau, base_dim, block)] = np.reshape(draw, (end, -1))
            pred = np.asarray(outcome[tau + 1].predict(P[:end, cols(tau + 1)]))
            for s in range(tau + 1):
                if len(pos[s]):
                    chunk = pred[offsets[s]:offsets[s + 1]]
                    G[pos[s], s, tau + 1] = np.reshape(
                        chunk, (len(pos[s]), n_particles)).mean(axis=1)


def _fit_regime_fold(ctx, r, train, test, seed):
    """Nuisances of regime ``r`` on the training units and the G-table of the test units."""
    Hfull, Y0 = ctx["Hfull"], ctx["Y0"]
    I, risk = ctx["I"][r], ctx["risk"][r]
    T, base_dim, block, window = ctx["T"], ctx["base_dim"], ctx["block"], ctx["window"]
    n_mc, C = ctx["n_mc"], ctx["C"]
    sw = ctx["sample_weight"]
    rng = np.random.default_rng(seed)

    def weights(rows):
        return None if sw is None else sw[rows]

    in_train = np.zeros(len(Y0), dtype=bool)
    in_train[train] = True

    def cols(t):
        return _history_index(t, base_dim, block, window)

    # inputs were validated once in fit: skip the finite checks of every nested predict
    with threadpool_limits(1), config_context(assume_finite=True):
        outcome = []
        for t in range(T):
            rows = in_train & I[:, t]
            outcome.append(fit_with_weights(clone(ctx["outcome_model"]), Hfull[rows][:, cols(t)],
                                            Y0[rows, t], weights(rows), name="outcome_model"))

        censoring, g_test = None, np.ones((len(test), T))
        if ctx["has_nan"]:
            censoring = []
            for j in range(T):
                rows = in_train & risk[:, j]
                target = C[rows, j].astype(int)
                w_rows = weights(rows)
                present = target if w_rows is None else target[w_rows > 0]
                if np.unique(present).size < 2:
                    model = _ConstantProbability(np.average(target, weights=w_rows))
                else:
                    model = fit_with_weights(clone(ctx["censoring_model"]),
                                             Hfull[rows][:, cols(j)], target, w_rows,
                                             name="censoring_model")
                censoring.append(model)
                at_risk = risk[test, j]
                if at_risk.any():
                    proba = model.predict_proba(Hfull[test[at_risk]][:, cols(j)])[:, 1]
                    g_test[at_risk, j] = proba

        G = np.zeros((len(test), T + 1, T))
        transitions, q_models = None, None
        if ctx["q_method"] == "simulate":
            transitions = []
            for tau in range(T - 1):
                rows = in_train & I[:, tau]
                kernel = clone(ctx["transition_model"])
                fit_with_weights(kernel, Hfull[rows][:, cols(tau)],
                                 Hfull[rows][:, _step_slice(tau, base_dim, block)],
                                 weights(rows), name="transition_model")
                transitions.append(kernel)
            if window == 0:
                # every outcome model reads H_0 only, which the particles carry unchanged:
                # the particle mean of m_t is m_t(H_0) exactly, for every start s <= t
                pred = np.column_stack([outcome[t].predict(Hfull[test][:, cols(t)])
                                        for t in range(T)])
                for s in range(T):
                    units = np.arange(len(test)) if s == 0 else np.flatnonzero(I[test, s - 1])
                    G[units[:, None], s, np.arange(s, T)[None]] = pred[units][:, s:]
            else:
                for s in range(T):
                    units = test if s == 0 else test[I[test, s - 1]]
                    if len(units):
                        G[np.searchsorted(test, units), s, s] = outcome[s].predict(
                            Hfull[units][:, cols(s)])
                _simulate_forward(G, Hfull, I, test, outcome, transitions, n_mc, rng, cols,
                                  base_dim, block)
        else:  # "regress": Q_s^(t) regressed backwards on H_s
            q_models = {}
            for t in range(T):
                current = outcome[t]
                for s in range(t - 1, -1, -1):
                    rows = in_train & I[:, s]
                    target = current.predict(Hfull[rows][:, cols(s + 1)])
                    current = fit_with_weights(clone(ctx["outcome_model"]),
                                               Hfull[rows][:, cols(s)], target, weights(rows),
                                               name="outcome_model")
                    q_models[(s, t)] = current
            for s in range(T):
                units = test if s == 0 else test[I[test, s - 1]]
                pos = np.searchsorted(test, units)
                if len(units) == 0:
                    continue
                for t in range(s, T):
                    model = outcome[t] if s == t else q_models[(s, t)]
                    G[pos, s, t] = model.predict(Hfull[units][:, cols(s)])
    return {"outcome": outcome, "transitions": transitions, "q_models": q_models,
            "censoring": censoring, "G": G, "g": g_test}
