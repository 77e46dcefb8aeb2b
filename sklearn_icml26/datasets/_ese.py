"""Datasets of ESE (Xu, Song, Gao, Liu; ICML 2026, arXiv 2606.13285) and its synthetic generator.

The loaders read ``<data_home>/ese_xu2026/``, a byte-identical copy of the ``datasets/`` folder of
the authors' repository ``xbnxbn38/Equilibrium-State-Estimation`` at commit ``b911bb8``; missing
files are downloaded from that commit (pinned SHA-256 in the registry file ``registry/ese.txt``).
"""

from numbers import Integral, Real
from urllib.parse import quote

import numpy as np
from sklearn.utils import Bunch, check_random_state

from ._base import RemoteFile, fetch_files, read_registry

__all__ = [
    "load_ese_covid_victoria",
    "load_ese_exchange_rates",
    "load_ese_synthetic",
    "load_seasonal_panel",
    "make_interacting_systems",
]

_FOLDER = "ese_xu2026"
_COMMIT = "b911bb8fa55184599739344e9d50c29c21ed6ad7"
_BASE_URL = (f"https://raw.githubusercontent.com/xbnxbn38/Equilibrium-State-Estimation/"
             f"{_COMMIT}/datasets/")

_CITATION = (
    'Source: Xu, Song, Gao, Liu, "Once-for-All: Scalable Simultaneous Forecasting via '
    'Equilibrium State Estimation", ICML 2026, arXiv:2606.13285; data released with the '
    "authors' code (github.com/xbnxbn38/Equilibrium-State-Estimation, commit b911bb8). No "
    "licence is stated: research use only; cite the paper. Not financial, medical or policy "
    "advice."
)

_CURRENCIES = {
    "ARS": "Argentina", "AUD": "Australia", "BRL": "Brazil", "CAD": "Canada", "CNY": "China",
    "EUR": "Eurozone", "GBP": "United Kingdom", "IDR": "Indonesia", "INR": "India",
    "JPY": "Japan", "KRW": "South Korea", "MXN": "Mexico", "RUB": "Russia",
    "SAR": "Saudi Arabia", "TRY": "Turkey", "ZAR": "South Africa",
}
# The released India.csv and Japan.csv are swapped (Oct-2019 population 126.25 vs 1318.68 million).
_SWAPPED = {"India": "Japan", "Japan": "India"}

_COVID_LEVELS = (20, 79, 320)
_SYNTHETIC_SIZES = (5, 10, 20)


def _remote(paths):
    return [RemoteFile(p, _BASE_URL + quote(p), read_registry("ese.txt").get(p)) for p in paths]


def _fetch(paths, data_home, download_if_missing):
    return fetch_files(_FOLDER, _remote(paths), data_home=data_home,
                       download_if_missing=download_if_missing)


def _drop_empty(frame):
    """Drop the empty trailing columns (unnamed) of the released CSV files."""
    return frame[[c for c in frame.columns if not str(c).startswith("Unnamed")]]


# --------------------------------------------------------------------------------------------
# exchange rates
# --------------------------------------------------------------------------------------------
def load_ese_exchange_rates(data_home=None, *, download_if_missing=True):
    """Daily exchange rates of 16 G20 currencies per USD with monthly country attributes.

    ==============  =============================================
    Time steps      1299 trading days, 2019-11-11 to 2024-10-31
    Systems         16 currencies (units per 1 USD, ``Adj Close``)
    Attributes      15 monthly macro indicators per country
    ==============  =============================================

    Parameters
    ----------
    data_home : str or path-like, default=None
        Data home holding ``ese_xu2026/`` (see :func:`get_data_home`).
    download_if_missing : bool, default=True
        Download missing files from the authors' repository (pinned commit and SHA-256).

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data``/``frame``: DataFrame (1299, 16) of float rates per USD indexed by date,
        ascending, columns ``ARS AUD BRL CAD CNY EUR GBP IDR INR JPY KRW MXN RUB SAR TRY ZAR``;
        ``attributes``: ndarray (1299, 16, 15) float, the latest month-end indicators at each
        day; ``attribute_names``: list of 15 str; ``DESCR``: str.

    Raises
    ------
    OSError
        If files are missing and cannot be downloaded.

    References
    ----------
    .. [1] Xu, Song, Gao, Liu. "Once-for-All: Scalable Simultaneous Forecasting via Equilibrium
       State Estimation". ICML 2026, arXiv:2606.13285.

    Examples
    --------
    >>> from sklearn_icml26.datasets import load_ese_exchange_rates
    >>> fx = load_ese_exchange_rates()  # doctest: +SKIP
    >>> fx.data.shape, fx.attributes.shape  # doctest: +SKIP
    ((1299, 16), (1299, 16, 15))
    """
    import pandas as pd

    prices = [f"Exchange Rate/price/{ccy}.csv" for ccy in _CURRENCIES]
    attrs = [f"Exchange Rate/attribute/{country}.csv" for country in _CURRENCIES.values()]
    folder = _fetch(prices + attrs, data_home, download_if_missing)

    columns, index = {}, None
    for ccy, path in zip(_CURRENCIES, prices, strict=True):
        frame = pd.read_csv(folder / path)
        dates = pd.to_datetime(frame["Date"], format="%d-%b-%y")
        series = pd.Series(frame["Adj Close"].to_numpy(dtype=np.float64), index=dates.to_numpy())
        series = series.sort_index()
        if index is None:
            index = series.index
        elif not series.index.equals(index):
            raise ValueError(f"{path}: its dates differ from those of the other currencies.")
        columns[ccy] = series.to_numpy()
    data = pd.DataFrame(columns, index=pd.DatetimeIndex(index, name="date"))

    names, blocks = None, []
    for country in _CURRENCIES.values():
        source = _SWAPPED.get(country, country)
        frame = _drop_empty(pd.read_csv(folder / f"Exchange Rate/attribute/{source}.csv"))
        frame = frame.set_index(pd.to_datetime(frame.pop("DateTime"))).sort_index()
        cols = [c.strip().replace("Improt", "Import") for c in frame.columns]
        if names is None:
            names = cols
        elif cols != names:
            raise ValueError(f"{source}.csv: its attribute columns differ from the others.")
        # latest month-end row at or before each trading day
        pos = np.searchsorted(frame.index.to_numpy(), data.index.to_numpy(), side="right") - 1
        if (pos < 0).any():
            raise ValueError(f"{source}.csv starts after the first trading day.")
        blocks.append(frame.to_numpy(dtype=np.float64)[pos])
    attributes = np.stack(blocks, axis=1)

    descr = (
        "Exchange rates of 16 non-USD G20 currencies (ESE, arXiv:2606.13285)\n"
        "-------------------------------------------------------------------\n\n"
        f"Daily 'Adj Close' (units of currency per 1 USD), {data.index[0].date()} to "
        f"{data.index[-1].date()}, {len(data)} trading days, oldest first (the files are "
        "newest first). IDR (about 15,700 per USD) dominates raw-scale errors: report relative "
        "errors too.\n\nattributes[t, i, k]: the latest month-end value (2019-10-31 to "
        "2024-09-30) of country i's indicator k at day t. The released India.csv and Japan.csv "
        "are swapped (Oct-2019 population 126.25 vs 1318.68 million); this loader swaps them "
        "back. 'Improt' is spelled 'Import'.\n\n" + _CITATION
    )
    return Bunch(data=data, frame=data, attributes=attributes, attribute_names=names,
                 DESCR=descr)


# --------------------------------------------------------------------------------------------
# COVID-19 Victoria
# --------------------------------------------------------------------------------------------
def _covid_regions(level):
    if level == 20:
        names = [f"Region {k}" for k in range(1, 21)]
        return names, [f"Covid-19/20/daily new case/{n}.csv" for n in names]
    if level == 79:
        prefix = "Covid-19/79/daily new case/"
        names = sorted(p[len(prefix):-4] for p in read_registry("ese.txt") if p.startswith(prefix))
        return names, [f"{prefix}{n}.csv" for n in names]
    names = [f"Region {k}" for k in range(1, 321) if k != 277]
    return names, [f"Covid-19/320/{n}.csv" for n in names]


def _to_float(value):
    if isinstance(value, str):
        value = value.replace(",", "").strip()
        value = value.replace("..", ".")  # "4..9" in Region 4 / Hume
    return float(value)


def load_ese_covid_victoria(level=320, data_home=None, *, download_if_missing=True):
    """Daily new COVID-19 cases in Victoria (Australia) at 20, 79 or 320 regions.

    ==============  ==============================================
    Time steps      259 days, 2022-01-01 to 2022-09-16
    Systems         20 regions, 79 municipalities (LGAs), or 319
                    postcode regions (Region 277 is absent)
    Target          daily new cases (column ``new``), counts
    ==============  ==============================================

    Parameters
    ----------
    level : {20, 79, 320}, default=320
        Spatial level. Level 320 has 319 regions: ``Region 277.csv`` is missing from the
        released snapshot and is excluded everywhere.
    data_home : str or path-like, default=None
        Data home holding ``ese_xu2026/`` (see :func:`get_data_home`).
    download_if_missing : bool, default=True
        Download missing files from the authors' repository (pinned commit and SHA-256).

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data``/``frame``: DataFrame (259, n) of float daily new cases indexed by date,
        one column per region (``Region k`` or the LGA's name, alphabetical);
        ``attributes``: DataFrame (n, m) indexed by region: for levels 20 and 79 the 13 health,
        vaccination and socio-economic columns of the region-attribute file plus
        ``population``; for level 320 ``population`` only; ``DESCR``: str.

    Raises
    ------
    ValueError
        If ``level`` is not 20, 79 or 320.
    OSError
        If files are missing and cannot be downloaded.

    References
    ----------
    .. [1] Xu, Song, Gao, Liu. "Once-for-All: Scalable Simultaneous Forecasting via Equilibrium
       State Estimation". ICML 2026, arXiv:2606.13285.

    Examples
    --------
    >>> from sklearn_icml26.datasets import load_ese_covid_victoria
    >>> covid = load_ese_covid_victoria(level=20)  # doctest: +SKIP
    >>> covid.data.shape, covid.attributes.shape  # doctest: +SKIP
    ((259, 20), (20, 14))
    """
    import pandas as pd

    if isinstance(level, bool) or level not in _COVID_LEVELS:
        raise ValueError(f"level must be one of {_COVID_LEVELS}; got {level!r}.")
    names, paths = _covid_regions(level)
    attr_path = f"Covid-19/{level}/other attribute/{level} Region-attributes.csv"
    folder = _fetch(paths + ([attr_path] if level != 320 else []), data_home,
                    download_if_missing)

    columns, population, index = {}, {}, None
    for name, path in zip(names, paths, strict=True):
        frame = pd.read_csv(folder / path, encoding="utf-8-sig")
        dates = pd.DatetimeIndex(pd.to_datetime(frame["date"], format="%Y/%m/%d"))
        if index is None:
            index = dates
        elif not dates.equals(index):
            raise ValueError(f"{path}: its dates differ from those of the other regions.")
        columns[name] = frame["new"].to_numpy(dtype=np.float64)
        population[name] = float(frame["population"].iloc[0])
    data = pd.DataFrame(columns, index=pd.DatetimeIndex(index, name="date"))

    if level == 320:
        attributes = pd.DataFrame({"population": population})
    else:
        raw = _drop_empty(pd.read_csv(folder / attr_path, encoding="utf-8-sig", dtype=str))
        raw = raw.set_index(raw.columns[0])
        raw.index = [str(r).strip().replace("Colac Otway", "Colac-Otway") for r in raw.index]
        missing = sorted(set(names) - set(raw.index))
        if missing:
            raise ValueError(f"{attr_path} lacks the regions {missing}.")
        attributes = raw.loc[names].map(_to_float)
        attributes.columns = [str(c).strip() for c in attributes.columns]
        attributes["population"] = pd.Series(population)
    attributes.index.name = "region"

    absent = (" Region 277 is missing from the released snapshot, so this level has 319 "
              "regions; it is excluded everywhere." if level == 320 else "")
    descr = (
        f"COVID-19 Victoria daily new cases, {level}-region level (ESE, arXiv:2606.13285)\n"
        "---------------------------------------------------------------------------\n\n"
        f"{data.shape[1]} regions, {data.shape[0]} days ({data.index[0].date()} to "
        f"{data.index[-1].date()}); target: column 'new' of each region's file.{absent}\n"
        "attributes: one row per region (13 region attributes plus population for levels 20 "
        "and 79; population only for level 320). The cell '4..9' (Region 4 / Hume) is read as "
        "4.9.\n\n" + _CITATION
    )
    return Bunch(data=data, frame=data, attributes=attributes, DESCR=descr)


# --------------------------------------------------------------------------------------------
# synthetic
# --------------------------------------------------------------------------------------------
def load_ese_synthetic(n_systems=10, data_home=None, *, download_if_missing=True):
    """The paper's released synthetic panels of 5, 10 or 20 systems with two attributes each.

    Parameters
    ----------
    n_systems : {5, 10, 20}, default=10
        Which panel.
    data_home : str or path-like, default=None
        Data home holding ``ese_xu2026/`` (see :func:`get_data_home`).
    download_if_missing : bool, default=True
        Download missing files from the authors' repository (pinned commit and SHA-256).

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data``/``frame``: DataFrame (1000, n_systems) float, columns ``Target j``;
        ``attributes``: ndarray (1000, n_systems, 2) float (attributes a and b of each system
        at each step); ``DESCR``: str.

    Raises
    ------
    ValueError
        If ``n_systems`` is not 5, 10 or 20.
    OSError
        If files are missing and cannot be downloaded.

    References
    ----------
    .. [1] Xu, Song, Gao, Liu. "Once-for-All: Scalable Simultaneous Forecasting via Equilibrium
       State Estimation". ICML 2026, arXiv:2606.13285.

    Examples
    --------
    >>> from sklearn_icml26.datasets import load_ese_synthetic
    >>> synthetic = load_ese_synthetic(5)  # doctest: +SKIP
    >>> synthetic.data.shape, synthetic.attributes.shape  # doctest: +SKIP
    ((1000, 5), (1000, 5, 2))
    """
    import pandas as pd

    if isinstance(n_systems, bool) or n_systems not in _SYNTHETIC_SIZES:
        raise ValueError(f"n_systems must be one of {_SYNTHETIC_SIZES}; got {n_systems!r}.")
    path = f"Synthetic Data/Synthetic Data {n_systems}.csv"
    folder = _fetch([path], data_home, download_if_missing)
    raw = pd.read_csv(folder / path, encoding="utf-8-sig", header=0)
    values = raw.to_numpy(dtype=np.float64)
    n = int(n_systems)
    targets = values[:, [1 + 3 * j for j in range(n)]]
    attributes = np.stack([values[:, [2 + 3 * j, 3 + 3 * j]] for j in range(n)], axis=1)
    data = pd.DataFrame(targets, columns=[f"Target {j + 1}" for j in range(n)],
                        index=pd.RangeIndex(len(raw), name="order"))
    descr = (
        f"ESE synthetic panel with {n} systems (arXiv:2606.13285)\n"
        "-------------------------------------------------------\n\n"
        f"{len(data)} time steps; each system j has a target and two attributes (a, b) per "
        "step. The generator was not released.\n\n" + _CITATION
    )
    return Bunch(data=data, frame=data, attributes=attributes, DESCR=descr)


def make_interacting_systems(n_systems=10, n_timesteps=1000, n_attributes=2,
                             share_reversion=0.5, share_noise=0.1, aggregate_ar=0.9,
                             aggregate_noise=0.05, level=10.0, random_state=None, *,
                             share_drift=0.0, share_jump=0.0, jump_time=0.5):
    """Positive panel of systems whose logistic-normal shares revert to an equilibrium.

    With ``A`` (n, m), ``beta`` (m), ``E`` (T, n) and ``U`` (T) standard normal (drawn in that
    order), ``eta = A beta / sqrt(m)`` centred, ``kappa = share_reversion`` and ``phi =
    aggregate_ar``::

        z_t = eta + (1 - kappa) (z_{t-1} - eta) + share_noise E_t     (shares' logits)
        x_t = phi x_{t-1} + aggregate_noise U_t                       (log-aggregate)
        Y_t = n level exp(x_t) softmax(z_t)

    started from their stationary laws; the equilibrium shares are ``softmax(eta)``.

    Shares whose composition changes: with ``share_drift`` or ``share_jump`` non-zero, a
    centred standard-normal direction ``d`` (n) is drawn after ``U`` (so the default panel is
    unchanged) and the equilibrium moves, ``eta_t = eta + share_drift * t * d`` (a linear trend
    of the logits) ``+ share_jump * d * [t >= round(jump_time * T)]`` (a break); the logits
    then revert to the moving target, ``z_t = eta_t + (1 - kappa) (z_{t-1} - eta_{t-1}) +
    share_noise E_t``.

    Parameters
    ----------
    n_systems : int, default=10
        Number of systems ``n`` (>= 1).
    n_timesteps : int, default=1000
        Number of time steps ``T`` (>= 2).
    n_attributes : int, default=2
        Number of static system attributes ``m`` (>= 0) that set the equilibrium.
    share_reversion : float in (0, 1], default=0.5
        ``kappa``: fraction of a share deviation (in logits) removed per step.
    share_noise : float, default=0.1
        Standard deviation of the logits' innovations (>= 0).
    aggregate_ar : float in (-1, 1), default=0.9
        AR(1) coefficient of the log-aggregate.
    aggregate_noise : float, default=0.05
        Standard deviation of the log-aggregate's innovations (>= 0).
    level : float, default=10.0
        Mean level per system (> 0): the aggregate is ``n * level * exp(x_t)``.
    random_state : int, RandomState instance or None, default=None
        Seed of the draws.
    share_drift : float, default=0.0
        Change of the equilibrium logits per time step along ``d`` (a linear trend of the
        composition; finite).
    share_jump : float, default=0.0
        Size of a one-off break of the equilibrium logits along ``d`` (finite).
    jump_time : float in (0, 1), default=0.5
        Time of the break as a fraction of ``n_timesteps``.

    Returns
    -------
    Y : ndarray of shape (n_timesteps, n_systems)
        Float64 panel, every value > 0.
    attributes : ndarray of shape (n_systems, n_attributes)
        Float64 static attributes ``A``.
    equilibrium : ndarray of shape (n_systems,) or (n_timesteps, n_systems)
        Float64 equilibrium shares ``softmax(eta)`` (sum to 1); with a drift or a jump, the
        moving equilibrium ``softmax(eta_t)`` of every time step.

    Raises
    ------
    ValueError
        If ``n_systems < 1``, ``n_timesteps < 2``, ``n_attributes < 0``, ``share_reversion``
        is outside (0, 1], ``|aggregate_ar| >= 1``, a noise is negative, ``level <= 0``,
        ``share_drift``/``share_jump`` is not finite or ``jump_time`` is outside (0, 1).

    References
    ----------
    .. [1] Xu, Song, Gao, Liu. "Once-for-All: Scalable Simultaneous Forecasting via Equilibrium
       State Estimation". ICML 2026, arXiv:2606.13285.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_interacting_systems
    >>> Y, attributes, equilibrium = make_interacting_systems(3, 50, random_state=0)
    >>> Y.shape, attributes.shape, round(float(equilibrium.sum()), 12)
    ((50, 3), (3, 2), 1.0)
    >>> Y, _, moving = make_interacting_systems(3, 50, share_drift=0.02, random_state=0)
    >>> moving.shape
    (50, 3)
    """
    def _int(value, name, low):
        if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
            raise ValueError(f"{name} must be an int >= {low}; got {value!r}.")
        return int(value)

    n = _int(n_systems, "n_systems", 1)
    T = _int(n_timesteps, "n_timesteps", 2)
    m = _int(n_attributes, "n_attributes", 0)
    for name, value in [("share_reversion", share_reversion), ("share_noise", share_noise),
                        ("aggregate_ar", aggregate_ar), ("aggregate_noise", aggregate_noise),
                        ("level", level), ("share_drift", share_drift),
                        ("share_jump", share_jump), ("jump_time", jump_time)]:
        if isinstance(value, bool) or not isinstance(value, Real) or not np.isfinite(value):
            raise ValueError(f"{name} must be a finite real number; got {value!r}.")
    if not 0 < share_reversion <= 1:
        raise ValueError(f"share_reversion must be in (0, 1]; got {share_reversion}.")
    if abs(aggregate_ar) >= 1:
        raise ValueError(f"aggregate_ar must satisfy |aggregate_ar| < 1; got {aggregate_ar}.")
    if share_noise < 0:
        raise ValueError(f"share_noise must be >= 0; got {share_noise}.")
    if aggregate_noise < 0:
        raise ValueError(f"aggregate_noise must be >= 0; got {aggregate_noise}.")
    if level <= 0:
        raise ValueError(f"level must be > 0; got {level}.")
    if not 0 < jump_time < 1:
        raise ValueError(f"jump_time must be in (0, 1) (a fraction of n_timesteps); got "
                         f"{jump_time}.")

    rs = check_random_state(random_state)
    A = rs.standard_normal((n, m))
    beta = rs.standard_normal(m)
    E = rs.standard_normal((T, n))
    U = rs.standard_normal(T)
    eta = A @ beta / np.sqrt(m) if m else np.zeros(n)
    eta = eta - eta.mean()
    kappa, phi = float(share_reversion), float(aggregate_ar)
    moving = share_drift != 0 or share_jump != 0
    eta_t = np.broadcast_to(eta, (T, n))
    if moving:  # drawn after U: the stationary panel of a seed does not change
        d = rs.standard_normal(n)
        d = d - d.mean()
        t_index = np.arange(T, dtype=np.float64)[:, None]
        eta_t = (eta + float(share_drift) * t_index * d
                 + float(share_jump) * d * (t_index >= round(jump_time * T)))

    z = np.empty((T, n))
    x = np.empty(T)
    z[0] = eta_t[0] + share_noise / np.sqrt(1.0 - (1.0 - kappa) ** 2) * E[0]
    x[0] = aggregate_noise / np.sqrt(1.0 - phi**2) * U[0]
    for t in range(1, T):
        z[t] = eta_t[t] + (1.0 - kappa) * (z[t - 1] - eta_t[t - 1]) + share_noise * E[t]
        x[t] = phi * x[t - 1] + aggregate_noise * U[t]

    def softmax(v):
        v = v - v.max(axis=-1, keepdims=True)
        ex = np.exp(v)
        return ex / ex.sum(axis=-1, keepdims=True)

    Y = n * level * np.exp(x)[:, None] * softmax(z)
    return Y, A, (softmax(eta_t) if moving else softmax(eta))


# --------------------------------------------------------------------------------------------
# seasonal panels (fpp3 through Rdatasets), for ESERegressor(seasonal_period=...)
# --------------------------------------------------------------------------------------------
_SEASONAL_FOLDER = "seasonal_panels"
_SEASONAL_FILES = {"us_employment": "us_employment.csv.gz",
                   "aus_accommodation": "aus_accommodation.csv"}
_RDATASETS = "https://vincentarelbundock.github.io/Rdatasets/csv/fpp3/{}.csv"


def load_seasonal_panel(name, data_home=None, *, variable="Takings"):
    """Load a seasonal panel of "Forecasting: Principles and Practice" (fpp3) as a wide frame.

    Reads ``<data_home>/seasonal_panels/<file>`` (the CSV exports of the Rdatasets collection;
    ``us_employment`` gzip-compressed) and checks its pinned SHA-256 (registry
    ``registry/seasonal_panels.txt``). Nothing is downloaded: a CSV fetched from Rdatasets is
    a different byte stream whose hash is not pinned; copy the files into the data home.

    Parameters
    ----------
    name : {"us_employment", "aus_accommodation"}
        ``"us_employment"``: US employment by industry (thousands, BLS CES, not seasonally
        adjusted), monthly, the 145 series complete from January 1990 to September 2019
        (357 months). ``"aus_accommodation"``: Australian accommodation by state (8 states
        and territories), quarterly, 1998 Q1 to 2016 Q2 (74 quarters).
    data_home : str or path-like, default=None
        See :func:`get_data_home`.
    variable : {"Takings", "Occupancy", "CPI"}, default="Takings"
        Column of ``aus_accommodation`` (million AUD, percent, index); ignored otherwise.

    Returns
    -------
    data : Bunch
        ``data`` (DataFrame, time x series, DatetimeIndex of period starts, columns the
        ``Series_ID`` or the state), ``titles`` (dict Series_ID -> industry, US only),
        ``period`` (12 or 4: the seasonal period), ``DESCR``.

    Raises
    ------
    ValueError
        If ``name`` or ``variable`` is unknown, or a file's hash differs from the pinned one.
    OSError
        If the file is not in the data home.
    """
    import hashlib

    import pandas as pd

    if name not in _SEASONAL_FILES:
        raise ValueError(f"name must be one of {sorted(_SEASONAL_FILES)}; got {name!r}.")
    file = _SEASONAL_FILES[name]
    folder = fetch_files(_SEASONAL_FOLDER, [RemoteFile(file, None, None)],
                         data_home=data_home, download_if_missing=False)
    path = folder / file
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    pinned = read_registry("seasonal_panels.txt")[file]
    if digest != pinned:
        raise ValueError(f"{path} has SHA-256 {digest}, not the pinned {pinned}: not the file "
                         f"this loader was written for (see registry/seasonal_panels.txt).")
    frame = pd.read_csv(path)
    source = (f"Source: Hyndman & Athanasopoulos, Forecasting: Principles and Practice, 3rd "
              f"ed., R package fpp3 (GPL-3), exported by Rdatasets "
              f"({_RDATASETS.format(name)}).")
    if name == "us_employment":
        frame["Month"] = pd.to_datetime(frame["Month"], format="%Y %b")
        wide = frame.pivot(index="Month", columns="Series_ID", values="Employed")
        wide = wide[wide.index >= "1990-01-01"].dropna(axis=1)
        titles = dict(frame.drop_duplicates("Series_ID").set_index("Series_ID")["Title"])
        titles = {k: titles[k] for k in wide.columns}
        descr = (f"US employment by industry (thousands, not seasonally adjusted; US BLS "
                 f"Current Employment Statistics, public domain), monthly 1990-01..2019-09: "
                 f"{wide.shape[1]} series complete over that span (of 148). {source}")
        return Bunch(data=wide, titles=titles, period=12, DESCR=descr)
    if variable not in ("Takings", "Occupancy", "CPI"):
        raise ValueError(f"variable must be 'Takings', 'Occupancy' or 'CPI'; got {variable!r}.")
    year, quarter = frame["Date"].str.split(" Q", expand=True).T.to_numpy()
    frame["Date"] = pd.PeriodIndex.from_fields(year=year.astype(int),
                                               quarter=quarter.astype(int),
                                               freq="Q").to_timestamp()
    wide = frame.pivot(index="Date", columns="State", values=variable)
    descr = (f"Australian accommodation {variable} by state (8 states and territories; "
             f"Australian Bureau of Statistics, CC BY), quarterly 1998 Q1..2016 Q2. {source}")
    return Bunch(data=wide, titles=None, period=4, DESCR=descr)
