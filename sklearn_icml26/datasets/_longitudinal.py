"""Longitudinal randomised trials: BtheB and respiratory loaders, and a simulator.

The simulator follows the settings of Chihara et al. (arXiv 2605.31443): covariates driven by a
rotated Lorenz-96 system (or a linear autoregression), outcomes depending on current covariates
and the previous outcome, and a time-varying treatment effect.
"""

import math
from functools import lru_cache

import numpy as np
import pandas as pd
from sklearn.utils import Bunch, check_random_state

from ._base import RemoteFile, fetch_files

__all__ = ["load_btheb", "load_respiratory", "make_longitudinal_rct"]

_FOLDER = "longitudinal_rct"
_BASE_URL = ("https://raw.githubusercontent.com/vincentarelbundock/Rdatasets/"
             "1dcc2bf5f955cc1224a3e1307256e1fe86b68dae/csv/HSAUR/")
_BTHEB = RemoteFile("BtheB.csv", _BASE_URL + "BtheB.csv",
                    "9ea1b564ea515cfa848b628b6cdfa30bc4ab050fa360192e3857017f9a5291f8")
_RESPIRATORY = RemoteFile("respiratory.csv", _BASE_URL + "respiratory.csv",
                          "f4c79f81270c9b2ef90d1cb51b74284bf652fb711c44a11efa6b3efcefdf7318")

_BTHEB_DESCR = """Beat the Blues (BtheB) depression trial
--------------------------------------

100 patients randomised to "Beat the Blues", computerised cognitive behavioural therapy
(treatment = 1, 52 patients) or treatment as usual (0, 48). Baseline covariates X: drug
(antidepressants, Yes = 1), length (current episode > 6 months = 1), bdi_pre (Beck Depression
Inventory II at baseline). Outcomes y: BDI at 2, 4, 6 and 8 months; NaN from dropout on
(monotone). n_time_varying = 0.

Proudfoot et al. (2003), Psychological Medicine 33(2); data from Everitt and Hothorn, A Handbook
of Statistical Analyses Using R (R package HSAUR, GPL-2), via the Rdatasets CSV export.
"""

_RESPIRATORY_DESCR = """Respiratory illness trial
-------------------------

111 patients of two centres randomised to an active treatment (treatment = 1, 54 patients) or
placebo (0, 57). Baseline covariates X: centre (2 = 1), sex (male = 1), age (years), status at
month 0 (good = 1). Outcomes y: respiratory status good (1) or poor (0) at months 1-4, no
missing values. n_time_varying = 0.

Koch et al. (1990); Davis (1991), Statistics in Medicine 10; data from Everitt and Hothorn, A
Handbook of Statistical Analyses Using R (R package HSAUR, GPL-2), via the Rdatasets CSV export.
"""


def _bunch(X, y, treatment, feature_names, period_names, frame, descr, as_frame):
    if as_frame:
        X = pd.DataFrame(X, columns=feature_names)
        y = pd.DataFrame(y, columns=period_names)
        treatment = pd.Series(treatment, name="treatment")
    return Bunch(X=X, y=y, treatment=treatment, data=X, target=y, n_time_varying=0,
                 feature_names=list(feature_names), period_names=list(period_names),
                 frame=frame, DESCR=descr)


def load_btheb(data_home=None, *, as_frame=False, download_if_missing=True):
    """Load the "Beat the Blues" depression trial (100 patients, 4 follow-up visits).

    Parameters
    ----------
    data_home : str or path-like, default=None
        Data home (see :func:`get_data_home`); the file is ``longitudinal_rct/BtheB.csv``.
    as_frame : bool, default=False
        Return ``X``, ``y`` as DataFrames and ``treatment`` as a Series.
    download_if_missing : bool, default=True
        Download the file (pinned SHA-256) when it is not in the data home.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` of shape (100, 3): drug (Yes = 1), length (">6m" = 1), bdi_pre (BDI points);
        ``y`` of shape (100, 4): BDI at 2, 4, 6, 8 months, NaN after dropout (monotone);
        ``treatment`` of shape (100,): BtheB = 1, treatment as usual = 0; ``data`` and
        ``target`` (aliases of ``X`` and ``y``), ``n_time_varying`` (0), ``feature_names``,
        ``period_names``, ``frame`` (the file without ``rownames``) and ``DESCR``.

    Raises
    ------
    OSError
        If the file is missing and cannot be downloaded.

    References
    ----------
    .. [1] Proudfoot et al., "Computerized, interactive, multimedia cognitive-behavioural
       program for anxiety and depression in general practice", Psychological Medicine 33(2),
       2003.

    Examples
    --------
    >>> from sklearn_icml26.datasets import load_btheb
    >>> data = load_btheb()  # doctest: +SKIP
    >>> data.X.shape, data.y.shape  # doctest: +SKIP
    ((100, 3), (100, 4))
    """
    folder = fetch_files(_FOLDER, [_BTHEB], data_home, download_if_missing)
    frame = pd.read_csv(folder / _BTHEB.path).drop(columns="rownames")
    features = ["drug", "length", "bdi_pre"]
    periods = ["bdi.2m", "bdi.4m", "bdi.6m", "bdi.8m"]
    X = np.column_stack([
        (frame["drug"] == "Yes").to_numpy(float),
        (frame["length"] == ">6m").to_numpy(float),
        frame["bdi.pre"].to_numpy(float),
    ])
    y = frame[periods].to_numpy(float)
    treatment = (frame["treatment"] == "BtheB").to_numpy(np.int64)
    return _bunch(X, y, treatment, features, periods, frame, _BTHEB_DESCR, as_frame)


def load_respiratory(data_home=None, *, as_frame=False, download_if_missing=True):
    """Load the respiratory illness trial (111 patients, 4 monthly binary outcomes).

    Parameters
    ----------
    data_home : str or path-like, default=None
        Data home (see :func:`get_data_home`); the file is ``longitudinal_rct/respiratory.csv``.
    as_frame : bool, default=False
        Return ``X``, ``y`` as DataFrames and ``treatment`` as a Series.
    download_if_missing : bool, default=True
        Download the file (pinned SHA-256) when it is not in the data home.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` of shape (111, 4): centre (2 = 1), sex (male = 1), age (years), status at month 0
        (good = 1); ``y`` of shape (111, 4): status good (1) or poor (0) at months 1-4;
        ``treatment`` of shape (111,): treatment = 1, placebo = 0; ``data``, ``target``,
        ``n_time_varying`` (0), ``feature_names``, ``period_names``, ``frame`` (the long file,
        555 rows, without ``rownames``) and ``DESCR``.

    Raises
    ------
    OSError
        If the file is missing and cannot be downloaded.

    References
    ----------
    .. [1] Davis, "Semi-parametric and non-parametric methods for the analysis of repeated
       measurements with applications to clinical trials", Statistics in Medicine 10, 1991.

    Examples
    --------
    >>> from sklearn_icml26.datasets import load_respiratory
    >>> data = load_respiratory()  # doctest: +SKIP
    >>> data.X.shape, data.y.shape  # doctest: +SKIP
    ((111, 4), (111, 4))
    """
    folder = fetch_files(_FOLDER, [_RESPIRATORY], data_home, download_if_missing)
    frame = pd.read_csv(folder / _RESPIRATORY.path).drop(columns="rownames")
    long = frame.assign(good=(frame["status"] == "good").astype(float))
    wide = long.pivot(index="subject", columns="month", values="good").sort_index()
    first = long.sort_values("month").groupby("subject").first().loc[wide.index]
    X = np.column_stack([
        (first["centre"] == 2).to_numpy(float),
        (first["sex"] == "male").to_numpy(float),
        first["age"].to_numpy(float),
        wide[0].to_numpy(float),
    ])
    y = wide[[1, 2, 3, 4]].to_numpy(float)
    treatment = (first["treatment"] == "treatment").to_numpy(np.int64)
    features = ["centre", "sex", "age", "status_month0"]
    periods = ["month1", "month2", "month3", "month4"]
    return _bunch(X, y, treatment, features, periods, frame, _RESPIRATORY_DESCR, as_frame)


# --------------------------------------------------------------------------------------------
# simulator


def _effect_curve(n_periods, effect, amplitude, baseline):
    s = np.arange(1, n_periods + 1, dtype=float)
    if effect == "exp":
        c = 1 - 3 * np.exp(-s / 4) + 2 * np.exp(-3 * s / 5)
    elif effect == "seasonal":
        c = (np.sin(0.7 * s) + 1) / 2
    else:  # static
        c = np.full(n_periods, 0.1)
    return baseline + amplitude * c


def _rotation(d, dgp_seed):
    rng = np.random.default_rng(dgp_seed)
    q, r = np.linalg.qr(rng.normal(size=(d, d)))
    return q * np.sign(np.diag(r))[None, :]


def _lorenz_rhs(z, forcing):
    return (np.roll(z, -1, axis=1) - np.roll(z, 2, axis=1)) * np.roll(z, 1, axis=1) - z + forcing


def _step_x(x, y_prev, w_prev, rng, p):
    """Covariates of the next period from the current ones (one row per unit)."""
    if p["dynamics"] == "linear":
        noise = rng.normal(scale=p["noise_x"], size=x.shape)
        return 4 + 0.5 * (x - 4) + 0.1 * y_prev[:, None] + p["w_to_x"] * w_prev[:, None] + noise
    Q = p["Q"]
    forcing = (p["forcing"] + p["y_to_x"] * y_prev + p["w_to_x"] * w_prev)[:, None]
    z = x @ Q.T  # z = Q x, row-wise
    n_sub = max(1, math.ceil(p["timestep"] / 0.01 - 1e-9))
    h = p["timestep"] / n_sub
    for _ in range(n_sub):
        k1 = _lorenz_rhs(z, forcing)
        k2 = _lorenz_rhs(z + h / 2 * k1, forcing)
        k3 = _lorenz_rhs(z + h / 2 * k2, forcing)
        k4 = _lorenz_rhs(z + h * k3, forcing)
        z = z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    noise = rng.normal(scale=p["noise_x"] * math.sqrt(p["timestep"]), size=x.shape)
    return z @ Q + noise  # x = Q^T z


def _outcome(x, y_prev, w, tau_t, rng, p):
    d = x.shape[1]
    if p["outcome"] == "linear":
        mean = (x - 4).sum(axis=1) / math.sqrt(d) + 0.8 * y_prev
    else:
        mean = (np.exp(-((x[:, 0] - 4) ** 2) / 5) + np.sin(x[:, 1] * x[:, 2] / 3)
                + 0.8 * np.logaddexp(0.0, y_prev))
    return mean + tau_t * w + rng.normal(scale=p["noise_y"], size=len(w))


def _simulate(n, T, d, W, rng, p, tau):
    """Trajectories of n units under treatment W (n, T); returns X (n, T, d), Y (n, T)."""
    X = np.empty((n, T, d))
    Y = np.empty((n, T))
    x = rng.normal(4.0, 0.8, size=(n, d))
    y_prev, w_prev = np.zeros(n), np.zeros(n)
    for t in range(T):
        if t > 0:
            x = _step_x(x, y_prev, w_prev, rng, p)
        X[:, t] = x
        Y[:, t] = _outcome(x, y_prev, W[:, t], tau[t], rng, p)
        y_prev, w_prev = Y[:, t], W[:, t]
    return X, Y


@lru_cache(maxsize=32)
def _truth_monte_carlo(key, n_truth, T, d, dgp_seed):
    p = dict(key)
    p["Q"] = _rotation(d, dgp_seed)
    tau = _effect_curve(T, p["effect"], p["effect_amplitude"], p["effect_baseline"])
    sums = np.zeros((2, T))
    chunk = 100_000
    done = 0
    seq = np.random.SeedSequence([dgp_seed, 7919])
    for child in seq.spawn(math.ceil(n_truth / chunk)):
        m = min(chunk, n_truth - done)
        state = child.generate_state(4)
        for r, a in enumerate((1.0, 0.0)):
            rng = np.random.default_rng(state)  # common random numbers for both regimes
            _, Y = _simulate(m, T, d, np.full((m, T), a), rng, p, tau)
            sums[r] += Y.sum(axis=0)
        done += m
    return sums / n_truth


def _truth_linear(T, d, p, tau):
    means = np.zeros((2, T))
    for r, a in enumerate((1.0, 0.0)):
        ex, ey, w_prev = 4.0, 0.0, 0.0
        for t in range(T):
            if t > 0:
                ex = 4 + 0.5 * (ex - 4) + 0.1 * ey + p["w_to_x"] * w_prev
            ey = d * (ex - 4) / math.sqrt(d) + 0.8 * ey + tau[t] * a
            means[r, t] = ey
            w_prev = a
    return means


def make_longitudinal_rct(
    n_units=1000,
    n_periods=7,
    n_covariates=10,
    *,
    assign="baseline",
    p_treat=0.5,
    switch_prob=0.1,
    dynamics="lorenz",
    outcome="gauss_sin",
    effect="exp",
    effect_amplitude=0.2,
    effect_baseline=0.0,
    timestep=0.01,
    forcing=4.0,
    y_to_x=0.5,
    w_to_x=0.2,
    noise_x=0.2,
    noise_y=0.2,
    n_truth=200_000,
    dgp_seed=0,
    random_state=None,
):
    """Simulate a randomised trial with repeated measures and covariate transitions.

    Each unit has ``n_covariates`` time-varying covariates ``X_t``, a treatment ``W_t`` and an
    outcome ``Y_t`` per period. ``X_0 ~ N(4, 0.8^2)``; ``X_t`` follows a rotated Lorenz-96
    system forced by the previous outcome and treatment (``dynamics="lorenz"``) or a linear
    autoregression (``"linear"``); ``Y_t`` depends on ``X_t``, ``Y_{t-1}`` and the effect
    ``tau_t W_t``. The regimes compared are always vs never treated.

    Parameters
    ----------
    n_units : int, default=1000
        Number of units ``n``.
    n_periods : int, default=7
        Number of periods ``T``.
    n_covariates : int, default=10
        Number of time-varying covariates ``d`` per period (``d >= 3`` for "gauss_sin").
    assign : {"baseline", "sequential"}, default="baseline"
        "baseline": ``W ~ Bernoulli(p_treat)`` once, kept in every period. "sequential":
        ``W_0 ~ Bernoulli(p_treat)``, then ``W_t`` switches arm with probability
        ``switch_prob`` each period.
    p_treat : float, default=0.5
        Probability of treatment at baseline, in (0, 1).
    switch_prob : float, default=0.1
        Per-period switching probability of the sequential design, in [0, 1).
    dynamics : {"lorenz", "linear"}, default="lorenz"
        Covariate dynamics: ``z = Q x`` integrated with RK4 for ``dz_j/dt = (z_{j+1} -
        z_{j-2}) z_{j-1} - z_j + F_i`` over ``timestep`` (``F_i = forcing + y_to_x Y_{t-1} +
        w_to_x W_{t-1}``), then ``x = Q^T z`` plus ``N(0, (noise_x sqrt(timestep))^2)`` noise;
        or ``X_t = 4 + 0.5 (X_{t-1} - 4) + 0.1 Y_{t-1} + w_to_x W_{t-1} + N(0, noise_x^2)``.
    outcome : {"gauss_sin", "linear"}, default="gauss_sin"
        ``Y_t = exp(-(X_{t,1} - 4)^2 / 5) + sin(X_{t,2} X_{t,3} / 3) + 0.8 log(1 + e^{Y_{t-1}})
        + tau_t W_t + noise`` or ``Y_t = sum_j (X_{t,j} - 4) / sqrt(d) + 0.8 Y_{t-1} + tau_t W_t
        + noise``, noise ``N(0, noise_y^2)``.
    effect : {"exp", "seasonal", "static"}, default="exp"
        Shape ``c(s)`` of the direct effect ``tau_t = effect_baseline + effect_amplitude
        c(t + 1)``: ``1 - 3 e^{-s/4} + 2 e^{-3s/5}``, ``(sin(0.7 s) + 1) / 2`` or 0.1.
    effect_amplitude : float, default=0.2
        Amplitude of the direct effect (outcome units).
    effect_baseline : float, default=0.0
        Offset of the direct effect (outcome units).
    timestep : float, default=0.01
        Time between periods of the Lorenz-96 system (RK4 sub-steps of at most 0.01).
    forcing : float, default=4.0
        Lorenz-96 forcing ``F``.
    y_to_x : float, default=0.5
        Effect of the previous outcome on the forcing.
    w_to_x : float, default=0.2
        Effect of the previous treatment on the covariates.
    noise_x : float, default=0.2
        Covariate noise scale.
    noise_y : float, default=0.2
        Outcome noise standard deviation.
    n_truth : int, default=200_000
        Units per regime of the Monte Carlo truth (common random numbers for both regimes);
        the linear-linear setting uses the exact mean recursion instead. Cached per setting.
    dgp_seed : int, default=0
        Seed of the rotation ``Q`` and of the Monte Carlo truth, fixed across replications.
    random_state : int, RandomState instance or None, default=None
        Seed of the units (covariates, treatment, noise).

    Returns
    -------
    X : ndarray of shape (n_units, n_periods * n_covariates)
        ``[X_0 | X_1 | ... | X_{T-1}]`` (no baseline columns: ``n_time_varying = d``).
    y : ndarray of shape (n_units, n_periods)
        Outcomes.
    treatment : ndarray of shape (n_units,) or (n_units, n_periods)
        0/1 treatment, 1-D for ``assign="baseline"``.
    truth : dict
        ``effect`` (n_periods,) true effect of always vs never treated, ``means`` (2,
        n_periods) regime means, ``regimes`` (2, n_periods), ``path_probabilities`` (2,
        n_periods) and ``tau_direct`` (n_periods,) the direct effects ``tau_t``.

    Raises
    ------
    ValueError
        For an unknown option, ``n_covariates < 3`` with ``outcome="gauss_sin"``, or
        probabilities out of range.

    References
    ----------
    .. [1] Chihara, Oka, Matsubara, Sakurai, Yasui, "Modeling Covariate Transition for
       Efficient Estimation of Longitudinal Treatment Effects in Randomized Experiments",
       ICML 2026, arXiv:2605.31443.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_longitudinal_rct
    >>> X, y, w, truth = make_longitudinal_rct(200, 4, 3, dynamics="linear", outcome="linear",
    ...                                        random_state=0)
    >>> X.shape, y.shape, w.shape
    ((200, 12), (200, 4), (200,))
    >>> truth["effect"].round(4)
    array([-0.0478,  0.2565,  0.7478,  1.3697])
    """
    options = {"assign": (assign, {"baseline", "sequential"}),
               "dynamics": (dynamics, {"lorenz", "linear"}),
               "outcome": (outcome, {"gauss_sin", "linear"}),
               "effect": (effect, {"exp", "seasonal", "static"})}
    for name, (value, allowed) in options.items():
        if value not in allowed:
            raise ValueError(f"{name} must be one of {sorted(allowed)}; got {value!r}")
    if not 0 < p_treat < 1:
        raise ValueError(f"p_treat must be in (0, 1); got {p_treat}")
    if not 0 <= switch_prob < 1:
        raise ValueError(f"switch_prob must be in [0, 1); got {switch_prob}")
    if outcome == "gauss_sin" and n_covariates < 3:
        raise ValueError(f"outcome='gauss_sin' needs n_covariates >= 3; got {n_covariates}")
    for name, value in (("n_units", n_units), ("n_periods", n_periods),
                        ("n_covariates", n_covariates), ("n_truth", n_truth)):
        if int(value) < 1:
            raise ValueError(f"{name} must be a positive integer; got {value}")
    n, T, d = int(n_units), int(n_periods), int(n_covariates)
    rng = check_random_state(random_state)
    gen = np.random.default_rng(rng.randint(np.iinfo(np.int32).max))
    params = {"dynamics": dynamics, "outcome": outcome, "effect": effect,
              "effect_amplitude": float(effect_amplitude),
              "effect_baseline": float(effect_baseline), "timestep": float(timestep),
              "forcing": float(forcing), "y_to_x": float(y_to_x), "w_to_x": float(w_to_x),
              "noise_x": float(noise_x), "noise_y": float(noise_y)}
    tau = _effect_curve(T, effect, effect_amplitude, effect_baseline)
    p = dict(params, Q=_rotation(d, dgp_seed))

    W = np.empty((n, T))
    W[:, 0] = gen.random(n) < p_treat
    for t in range(1, T):
        if assign == "baseline":
            W[:, t] = W[:, 0]
        else:
            switch = gen.random(n) < switch_prob
            W[:, t] = np.where(switch, 1 - W[:, t - 1], W[:, t - 1])
    Xs, Y = _simulate(n, T, d, W, gen, p, tau)

    if dynamics == "linear" and outcome == "linear":
        means = _truth_linear(T, d, params, tau)
    else:
        means = _truth_monte_carlo(tuple(sorted(params.items())), int(n_truth), T, d,
                                   int(dgp_seed))
    stay = (1 - switch_prob) ** np.arange(T) if assign == "sequential" else np.ones(T)
    truth = {
        "effect": means[0] - means[1],
        "means": means.copy(),
        "regimes": np.array([[1] * T, [0] * T]),
        "path_probabilities": np.vstack([p_treat * stay, (1 - p_treat) * stay]),
        "tau_direct": tau,
    }
    treatment = W[:, 0].astype(np.int64) if assign == "baseline" else W.astype(np.int64)
    return Xs.reshape(n, T * d), Y, treatment, truth
