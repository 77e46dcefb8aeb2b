"""Multivariate sensor streams with gaps (UCI Air Quality, UEA BasicMotions) and the outage
scenarios used to score imputers on them."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch, check_random_state

from ._base import RemoteFile, fetch_files

__all__ = ["load_air_quality", "load_basic_motions", "make_sensor_outages"]

_AQ_FOLDER = "uci_air_quality"
_AQ_FILE = RemoteFile(
    "AirQualityUCI.csv",
    "https://raw.githubusercontent.com/ahmetmenevse/UCI_airquality/"
    "7a5b1d23b342177edcb1775e2b012057fdc41cb3/AirQualityUCI.csv",
    "5d04e790353ece1e263ad4251c6c285c076cbc55aaa0cb70e06214e1a265ec15",
)
_AQ_GROUPS = {
    "reference": ["CO_GT", "NMHC_GT", "C6H6_GT", "NOx_GT", "NO2_GT"],
    "sensor": ["PT08_S1_CO", "PT08_S2_NMHC", "PT08_S3_NOx", "PT08_S4_NO2", "PT08_S5_O3"],
    "meteo": ["T", "RH", "AH"],
}
_AQ_DESCR = """UCI Air Quality: hourly averages of an air-quality multi-sensor device on a road of
an Italian city, 10 March 2004 18:00 to 4 April 2005 14:00 (9,357 hours). Columns: five
certified reference analysers (``*_GT``: CO, non-methane hydrocarbons, benzene, NOx, NO2), five
metal-oxide chemical sensor responses (``PT08_*``) and temperature, relative and absolute
humidity. Missing values (``-200`` in the file) are NaN; in 366 hours the whole device is off.

Source: UCI Machine Learning Repository, "Air Quality" (id 360), S. De Vito (ENEA), 2016,
DOI 10.24432/C59K5F, licence CC BY 4.0. Cite: S. De Vito, E. Massera, M. Piga, L. Martinotto,
G. Di Francia, "On field calibration of an electronic nose for benzene estimation in an urban
pollution monitoring scenario", Sensors and Actuators B 129(2), 2008. The file read here is the
comma-separated copy of the UCI file with underscore headers (values unchanged) of
github.com/ahmetmenevse/UCI_airquality, commit 7a5b1d2.
"""

_BM_FOLDER = "basic_motions"
_BM_COMMIT = "7bd7d1620c0656f3210eeb850bb1c0034159ee47"
_BM_FILES = {
    "train": RemoteFile(
        "BasicMotions_TRAIN.ts",
        f"https://raw.githubusercontent.com/sktime/sktime/{_BM_COMMIT}/sktime/datasets/data/"
        "BasicMotions/BasicMotions_TRAIN.ts",
        "8dc43cc6306cb679c888c01e26f91772ac4441a916da43bac8b79734a538b9d6"),
    "test": RemoteFile(
        "BasicMotions_TEST.ts",
        f"https://raw.githubusercontent.com/sktime/sktime/{_BM_COMMIT}/sktime/datasets/data/"
        "BasicMotions/BasicMotions_TEST.ts",
        "79213102bc6fca1a398ad98ce1185dff0208fa3d1465e687f48288946b0ff8dc"),
}
_BM_CHANNELS = ["acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z"]
_BM_DESCR = """BasicMotions (UEA multivariate time series classification archive): four students
wore a smart watch while standing, walking, running and playing badminton, five recordings
each; 3-axis accelerometer and 3-axis gyroscope at 10 Hz for 10 s (100 steps), 40 train and 40
test cases, no missing values.

Source: A. Bagnall et al., "The UEA multivariate time series classification archive, 2018",
arXiv:1811.00075 (timeseriesclassification.com, research use). The files read here are the
``.ts`` files shipped with sktime (BSD-3-Clause), commit 7bd7d16.
"""


def load_air_quality(data_home=None, *, download_if_missing=True):
    """Hourly UCI Air Quality stream with its real gaps (reference, sensor, meteo groups).

    ==============  =====================================================
    Rows            9,357 hours, regular hourly DatetimeIndex
    Columns         13 float64 (5 reference, 5 sensor, 3 meteorological)
    Missing         NaN (``-200`` in the file); NMHC_GT is 90 % missing
    ==============  =====================================================

    Parameters
    ----------
    data_home : str or path-like, default=None
        Data home holding ``uci_air_quality/`` (see :func:`get_data_home`).
    download_if_missing : bool, default=True
        Download the file (pinned SHA-256) when it is not in the data home.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data``: pandas DataFrame (9357, 13) float64 indexed by time; ``frame``: the same
        frame; ``groups``: dict of group name to column names (``reference``, ``sensor``,
        ``meteo``); ``feature_names``; ``DESCR``.

    Raises
    ------
    OSError
        If the file is missing and cannot be downloaded.

    Examples
    --------
    >>> from sklearn_icml26.datasets import load_air_quality
    >>> aq = load_air_quality()  # doctest: +SKIP
    >>> aq.data.shape  # doctest: +SKIP
    (9357, 13)
    """
    import pandas as pd

    folder = fetch_files(_AQ_FOLDER, [_AQ_FILE], data_home=data_home,
                         download_if_missing=download_if_missing)
    raw = pd.read_csv(folder / _AQ_FILE.path)
    stamps = pd.to_datetime(raw["Date"] + " " + raw["Time"], format="%d/%m/%Y %H:%M:%S")
    columns = [c for group in _AQ_GROUPS.values() for c in group]
    order = [c for c in raw.columns if c in columns]
    frame = raw[order].astype(np.float64).mask(lambda f: f == -200.0)
    frame.index = pd.DatetimeIndex(stamps, freq="h", name="time")
    return Bunch(data=frame, frame=frame, groups={k: list(v) for k, v in _AQ_GROUPS.items()},
                 feature_names=list(order), DESCR=_AQ_DESCR)


def _read_ts(path):
    cases, labels = [], []
    in_data = False
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if not in_data:
                in_data = line.lower().startswith("@data")
                continue
            *channels, label = line.split(":")
            cases.append([[float(v) for v in ch.split(",")] for ch in channels])
            labels.append(label)
    return np.asarray(cases, dtype=np.float64).transpose(0, 2, 1), np.asarray(labels)


def load_basic_motions(data_home=None, split="all", *, download_if_missing=True):
    """BasicMotions: 80 smart-watch recordings of 4 activities, 6 IMU channels, 100 steps.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Data home holding ``basic_motions/`` (see :func:`get_data_home`).
    split : {"all", "train", "test"}, default="all"
        Which cases: the 40 train cases, the 40 test cases, or both (train first).
    download_if_missing : bool, default=True
        Download the files (pinned SHA-256) when they are not in the data home.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data``: ndarray (n_cases, 100, 6) float64 (time steps by channels); ``target``:
        ndarray (n_cases,) of str; ``split``: ndarray (n_cases,) of "train"/"test";
        ``channel_names``; ``groups`` ``{"accelerometer": [0, 1, 2], "gyroscope": [3, 4, 5]}``;
        ``DESCR``.

    Raises
    ------
    ValueError
        If ``split`` is not one of the three options.
    OSError
        If files are missing and cannot be downloaded.

    Examples
    --------
    >>> from sklearn_icml26.datasets import load_basic_motions
    >>> bm = load_basic_motions()  # doctest: +SKIP
    >>> bm.data.shape  # doctest: +SKIP
    (80, 100, 6)
    """
    if split not in ("all", "train", "test"):
        raise ValueError(f"split must be 'all', 'train' or 'test'; got {split!r}.")
    parts = ["train", "test"] if split == "all" else [split]
    folder = fetch_files(_BM_FOLDER, [_BM_FILES[p] for p in parts], data_home=data_home,
                         download_if_missing=download_if_missing)
    data, target, which = [], [], []
    for part in parts:
        X, y = _read_ts(folder / _BM_FILES[part].path)
        data.append(X)
        target.append(y)
        which.append(np.full(len(y), part))
    return Bunch(data=np.concatenate(data), target=np.concatenate(target),
                 split=np.concatenate(which), channel_names=list(_BM_CHANNELS),
                 groups={"accelerometer": [0, 1, 2], "gyroscope": [3, 4, 5]},
                 DESCR=_BM_DESCR)


_SCENARIOS = ("group_block", "device_block", "point", "impulse")


def make_sensor_outages(X, scenario, *, groups=None, coverage=0.1, block_length=24, p=0.1,
                        random_state=None):
    """Degrade a sensor stream: group or device outages, dropped points or impulses.

    Parameters
    ----------
    X : array-like of shape (n_rows, n_features)
        Stream in time order; NaN marks values already missing (they are never "hidden").
    scenario : {"group_block", "device_block", "point", "impulse"}
        ``"group_block"``: blocks of ``block_length`` rows at uniform starts (overlaps
        allowed) on the columns ``groups`` until a ``coverage`` share of the rows is covered;
        ``"device_block"``: the same on every column with block lengths uniform in 6..48;
        ``"point"``: each entry independently with probability ``p``; ``"impulse"``: each
        observed entry with probability ``p`` becomes ``x + 5 sd u``, ``u`` uniform in
        {-1, 1}, ``sd`` the column's standard deviation over its observed values.
    groups : sequence of int, default=None
        Columns hit by ``"group_block"`` (required there), ignored otherwise.
    coverage : float, default=0.1
        Share of rows covered by blocks, in (0, 1).
    block_length : int, default=24
        Block length of ``"group_block"`` (>= 1).
    p : float, default=0.1
        Entry probability of ``"point"`` and ``"impulse"``, in [0, 1].
    random_state : int, RandomState instance or None, default=None
        Seed of the draws.

    Returns
    -------
    X_corrupted : ndarray of shape (n_rows, n_features)
        Copy of ``X`` with NaN at the hidden entries (or the impulses added).
    mask : ndarray of shape (n_rows, n_features), dtype bool
        The hidden (or impulsed) entries; always a subset of the observed entries of ``X``.

    Raises
    ------
    ValueError
        If ``scenario`` is unknown, ``groups`` is missing for ``"group_block"`` or names a
        column outside ``X``, or a rate is outside its range.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.datasets import make_sensor_outages
    >>> X = np.arange(200.0).reshape(100, 2)
    >>> Xc, mask = make_sensor_outages(X, "group_block", groups=[1], coverage=0.2,
    ...                                block_length=10, random_state=0)
    >>> int(mask[:, 0].sum()), bool(np.isnan(Xc[mask]).all())
    (0, True)
    """
    X = np.array(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-d (n_rows, n_features); got shape {X.shape}.")
    if scenario not in _SCENARIOS:
        raise ValueError(f"scenario must be one of {list(_SCENARIOS)}; got {scenario!r}.")
    if not (isinstance(coverage, Real) and 0 < coverage < 1):
        raise ValueError(f"coverage must be in (0, 1); got {coverage!r}.")
    if not (isinstance(p, Real) and 0 <= p <= 1):
        raise ValueError(f"p must be in [0, 1]; got {p!r}.")
    if not (isinstance(block_length, Integral) and block_length >= 1):
        raise ValueError(f"block_length must be an integer >= 1; got {block_length!r}.")
    rng = check_random_state(random_state)
    n_rows, n_features = X.shape
    observed = ~np.isnan(X)
    mask = np.zeros_like(observed)
    if scenario in ("group_block", "device_block"):
        if scenario == "group_block":
            if groups is None or len(groups) == 0:
                raise ValueError("groups (the columns of the outage) is required for "
                                 "scenario='group_block'.")
            cols = np.asarray(groups)
            if cols.dtype.kind not in "iu" or cols.min() < 0 or cols.max() >= n_features:
                raise ValueError(f"groups must be column indices in [0, {n_features}); got "
                                 f"{list(groups)}.")
        else:
            cols = np.arange(n_features)
        rows = np.zeros(n_rows, dtype=bool)
        target = int(np.ceil(coverage * n_rows))
        while rows.sum() < target:
            length = block_length if scenario == "group_block" else int(rng.randint(6, 49))
            length = min(length, n_rows)
            start = int(rng.randint(0, n_rows - length + 1))
            rows[start:start + length] = True
        mask[np.ix_(rows, cols)] = True
        mask &= observed
        X[mask] = np.nan
    elif scenario == "point":
        mask = (rng.random_sample(X.shape) < p) & observed
        X[mask] = np.nan
    else:
        sd = np.array([X[observed[:, j], j].std() if observed[:, j].any() else 0.0
                       for j in range(n_features)])
        mask = (rng.random_sample(X.shape) < p) & observed
        sign = np.where(rng.random_sample(X.shape) < 0.5, -1.0, 1.0)
        X = np.where(mask, X + 5.0 * sd * sign, X)
    return X, mask
