"""Cause-effect pair benchmarks (Tübingen, SIM, AN/LS/MN-U) and skewed LSNM generators."""

import numpy as np
from sklearn.utils import Bunch, check_random_state

from ._base import RemoteFile, fetch_files, get_data_home, read_registry

__all__ = ["load_cause_effect_baseline_scores", "load_cause_effect_pairs", "make_lsnm_pairs",
           "make_skewed_lsnm_dag", "make_skewed_lsnm_pair"]

_FOLDER = "cause_effect"
# accepted name -> folder of the pairs, file of the baseline scores
_BENCHMARKS = {
    "tuebingen": ("tuebingen", "Tuebingen"),
    "SIM": ("SIM", "SIM"),
    "SIM-c": ("SIM-c", "SIMc"),
    "SIM-ln": ("SIM-ln", "SIMln"),
    "AN": ("AN", "AN"),
    "LS": ("LS", "LS"),
    "MN-U": ("MN-U", "MNU"),
}
# the upstream files: aleximmer/loci at the snapshot the shared copy was made from
_LOCI_URL = ("https://raw.githubusercontent.com/aleximmer/loci/"
             "da61b8cdf95cbbc00fc42d351f89e64410f535f4/")
# folder here -> (upstream layout, upstream folder)
_UPSTREAM = {
    "tuebingen": ("mooij", "data/Tuebingen"),
    "SIM": ("mooij", "data/Benchmark_simulated/SIM"),
    "SIM-c": ("mooij", "data/Benchmark_simulated/SIM-c"),
    "SIM-ln": ("mooij", "data/Benchmark_simulated/SIM-ln"),
    "AN": ("anlsmn", "data/ANLSMN_pairs/AN"),
    "LS": ("anlsmn", "data/ANLSMN_pairs/LS"),
    "MN-U": ("anlsmn", "data/ANLSMN_pairs/MN-U"),
}
_ALIASES = {k.lower().replace("-", "").replace("_", ""): k for k in _BENCHMARKS}
_ALIASES["tubingen"] = "tuebingen"
# discrete (47, 70, 107) and multivariate (52-55, 71, 105) Tübingen pairs
_TUEBINGEN_EXCLUDED = (47, 52, 53, 54, 55, 70, 71, 105, 107)

_DESCR = """Cause-effect pair benchmark {name!r} ({n} pairs).

Each pair is an (n_i, 2) array (x, y); ``direction`` is +1 when x causes y and -1 otherwise;
``weight`` is the Tübingen pair weight (1 elsewhere). Evaluation subset (Tübingen): the discrete
pairs 47, 70, 107 and the multivariate pairs 52-55, 71, 105 are dropped (99 pairs).

Sources: the data files of aleximmer/loci@da61b8c (also shipped by causality-lab/skewd).
Tübingen pairs and SIM benchmarks: Mooij, Peters, Janzing, Zscheischler, Schölkopf,
"Distinguishing cause from effect using observational data: methods and benchmarks", JMLR
17(32), 2016 (pairs 1-41 come from the UCI repository). AN, LS, MN-U: Tagasovska,
Chavez-Demoulin, Vatter, "Distinguishing cause from effect using quantiles: bivariate quantile
causal discovery", ICML 2020.
"""


def _canonical(name):
    key = str(name).lower().replace("-", "").replace("_", "").replace("ü", "ue")
    if key not in _ALIASES:
        raise ValueError(f"name must be one of {sorted(_BENCHMARKS)}; got {name!r}.")
    return _ALIASES[key]


def _read_table(path, sep):
    import pandas as pd

    return pd.read_csv(path, sep=sep)


def load_cause_effect_pairs(name, *, data_home=None, evaluation_subset=True):
    """Load a cause-effect pair benchmark from the data home.

    Reads ``<data_home>/cause_effect/<name>/`` (``pair_XXXX.csv`` with columns ``x,y`` and
    ``ground_truth.csv``). When the folder is missing, the original files are downloaded from
    aleximmer/loci@da61b8c, converted to that layout and kept only if every converted file
    matches its pinned SHA-256.

    Parameters
    ----------
    name : {"tuebingen", "SIM", "SIM-c", "SIM-ln", "AN", "LS", "MN-U"}
        Benchmark (case and dashes are ignored: ``"MNU"``, ``"sim_c"`` work too).
    data_home : str or path-like, default=None
        Data home; see :func:`~sklearn_icml26.datasets.get_data_home`.
    evaluation_subset : bool, default=True
        Tübingen only: drop the discrete pairs 47, 70, 107 and the multivariate pairs 52-55,
        71, 105 (99 pairs remain), as in the published evaluations.

    Returns
    -------
    data : Bunch
        ``pairs`` (list of float64 arrays of shape (n_i, 2), or (n_i, k) for multivariate
        Tübingen pairs), ``direction`` (ndarray of shape (n_pairs,), +1 if the first column
        causes the second, else -1), ``weight`` (ndarray of shape (n_pairs,)), ``pair_id``
        (ndarray of shape (n_pairs,), original numbering), ``name`` (str) and ``DESCR``.

    Raises
    ------
    ValueError
        If ``name`` is not a known benchmark.
    OSError
        If the files are not in the data home and cannot be downloaded (no network) or the
        download does not convert to the pinned SHA-256 of every file.

    References
    ----------
    .. [1] Mooij, J. M. et al. "Distinguishing cause from effect using observational data:
       methods and benchmarks", JMLR 17(32), 2016, arXiv:1412.3773.
    .. [2] Tagasovska, N. et al. "Distinguishing cause from effect using quantiles: bivariate
       quantile causal discovery", ICML 2020, arXiv:1801.10579.

    Examples
    --------
    >>> from sklearn_icml26.datasets import load_cause_effect_pairs
    >>> data = load_cause_effect_pairs("tuebingen")  # doctest: +SKIP
    >>> len(data.pairs), data.pairs[0].shape  # doctest: +SKIP
    (99, (349, 2))
    """
    name = _canonical(name)
    folder = _ensure_pairs(_BENCHMARKS[name][0], data_home)
    truth = _read_table(folder / "ground_truth.csv", ",")
    if name == "tuebingen" and evaluation_subset:
        truth = truth[~truth["pair_id"].isin(_TUEBINGEN_EXCLUDED)]
    missing = [f for f in truth["file"] if not (folder / f).is_file()]
    if missing:
        raise OSError(f"Dataset {name!r}: missing pair file(s) {missing[:5]} in {folder}.")
    pairs = [_read_table(folder / f, ",").to_numpy(dtype=np.float64) for f in truth["file"]]
    return Bunch(
        pairs=pairs,
        direction=truth["direction"].to_numpy(dtype=int),
        weight=truth["weight"].to_numpy(dtype=float),
        pair_id=truth["pair_id"].to_numpy(dtype=int),
        name=name,
        DESCR=_DESCR.format(name=name, n=len(pairs)),
    )


def load_cause_effect_baseline_scores(name, *, data_home=None, evaluation_subset=True):
    """Load the published per-pair decision scores of the baselines collected by LOCI.

    Reads ``<data_home>/cause_effect/baseline_scores/<Name>.tab`` (columns ``PairID``,
    ``GroundTruth``, ``Weight``, then one signed score per method: QCCD, GRCI, CAM, IGCI,
    IGCI_G, RESIT, RESIT_std; a positive product with the ground truth is a correct decision,
    the absolute value the confidence).

    Parameters
    ----------
    name : {"tuebingen", "SIM", "SIM-c", "SIM-ln", "AN", "LS", "MN-U"}
        Benchmark.
    data_home : str or path-like, default=None
        Data home; see :func:`~sklearn_icml26.datasets.get_data_home`.
    evaluation_subset : bool, default=True
        Drop the excluded Tübingen pairs (the file already lacks most of them).

    Returns
    -------
    data : Bunch
        ``pair_id`` (ndarray of shape (n_pairs,)), ``direction`` (ndarray of shape
        (n_pairs,), +1/-1), ``weight`` (ndarray of shape (n_pairs,)), ``scores`` (dict of
        method name to ndarray of shape (n_pairs,)), ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not a known benchmark.
    OSError
        If the file is not in the data home and cannot be downloaded (no network, or a
        SHA-256 mismatch with the pinned upstream file).

    References
    ----------
    .. [1] Immer, A. et al. "On the Identifiability and Estimation of Causal Location-Scale
       Noise Models", ICML 2023, arXiv:2210.09054.

    Examples
    --------
    >>> from sklearn_icml26.datasets import load_cause_effect_baseline_scores
    >>> from sklearn_icml26.metrics import weighted_accuracy
    >>> b = load_cause_effect_baseline_scores("tuebingen")  # doctest: +SKIP
    >>> round(weighted_accuracy(b.direction, b.scores["QCCD"], sample_weight=b.weight), 4)
    ... # doctest: +SKIP
    0.7709
    """
    name = _canonical(name)
    fname = f"{_BENCHMARKS[name][1]}.tab"
    remote = RemoteFile(fname, f"{_LOCI_URL}baseline_results/{fname}",
                        read_registry("cause_effect_baselines.txt")[fname])
    folder = fetch_files(f"{_FOLDER}/baseline_scores", [remote], data_home=data_home)
    table = _read_table(folder / fname, "\t")
    if name == "tuebingen" and evaluation_subset:
        table = table[~table["PairID"].isin(_TUEBINGEN_EXCLUDED)]
    methods = [c for c in table.columns if c not in ("PairID", "GroundTruth", "Weight")]
    return Bunch(
        pair_id=table["PairID"].to_numpy(dtype=int),
        direction=table["GroundTruth"].to_numpy(dtype=int),
        weight=table["Weight"].to_numpy(dtype=float),
        scores={m: table[m].to_numpy(dtype=float) for m in methods},
        name=name,
    )


# --------------------------------------------------------------------------------------------
# download: the upstream files of aleximmer/loci, converted, checked against pinned hashes
# --------------------------------------------------------------------------------------------
def _pair_ids(folder_name):
    """Pair numbers of a benchmark, from the pinned registry of the converted files."""
    prefix = f"{folder_name}/pair_"
    return sorted(int(k[len(prefix):-4])
                  for k in read_registry("cause_effect_converted.txt") if k.startswith(prefix))


def _upstream_names(folder_name):
    layout = _UPSTREAM[folder_name][0]
    ids = _pair_ids(folder_name)
    if layout == "mooij":
        return ["pairmeta.txt"] + [f"pair{i:04d}.txt" for i in ids]
    return ["pairs_gt.txt"] + [f"pair_{i}.txt" for i in ids]


def _csv(header, rows):
    lines = [",".join(header)] + [",".join(repr(v) for v in row) for row in rows]
    return ("\n".join(lines) + "\n").encode()


def _block_names(prefix, k):
    return [prefix] if k == 1 else [f"{prefix}_{j}" for j in range(1, k + 1)]


def _convert_upstream(folder_name, raw, ids=None):
    """Convert the upstream files in the folder ``raw`` to ``{relative path: bytes}``.

    Layout "mooij" (Tübingen, SIM*): whitespace-separated ``pairXXXX.txt`` and ``pairmeta.txt``
    (id, cause start/end, effect start/end columns, weight); ``x`` is the first column block of
    the file, ``y`` the second, direction +1 iff the cause block starts at column 1, further
    columns (the quality flag of Tübingen 81-83) are dropped. Layout "anlsmn" (AN, LS, MN-U):
    R ``write.csv`` files ``pair_i.txt`` (row names, then x, y) and ``pairs_gt.txt`` (1: x
    causes y). Values are parsed as float64 and written with ``repr`` (exact round trip).
    ``ids``: the pairs to convert (default: all pinned ones).
    """
    layout = _UPSTREAM[folder_name][0]
    ids = _pair_ids(folder_name) if ids is None else ids
    out = {}
    if layout == "mooij":
        meta = {}
        for line in (raw / "pairmeta.txt").read_text().split("\n"):
            tok = line.split()
            if tok:
                meta[int(tok[0])] = ([int(t) for t in tok[1:5]], float(tok[5]))
        truth = ["pair_id,file,direction,weight,n_samples,dim_x,dim_y,extra_columns_dropped"]
        for i in ids:
            (cs, ce, es, ee), weight = meta[i]
            rows = [[float(t) for t in line.split()]
                    for line in (raw / f"pair{i:04d}.txt").read_text().split("\n")
                    if line.strip()]
            first, second = ((cs, ce), (es, ee)) if cs == 1 else ((es, ee), (cs, ce))
            dim_x, dim_y = first[1] - first[0] + 1, second[1] - second[0] + 1
            used = max(ce, ee)
            extra = int(any(len(r) > used for r in rows))
            data = [r[first[0] - 1:first[1]] + r[second[0] - 1:second[1]] for r in rows]
            out[f"pair_{i:04d}.csv"] = _csv(
                _block_names("x", dim_x) + _block_names("y", dim_y), data)
            truth.append(f"{i},pair_{i:04d}.csv,{1 if cs == 1 else -1},{weight!r},{len(rows)},"
                         f"{dim_x},{dim_y},{extra}")
    else:
        gt = [int(float(t)) for t in (raw / "pairs_gt.txt").read_text().split()]
        truth = ["pair_id,file,direction,weight,n_samples,dim_x,dim_y,orig_columns"]
        for i in ids:
            lines = [line for line in (raw / f"pair_{i}.txt").read_text().split("\n")
                     if line.strip()]
            header = [h.strip().strip('"') for h in lines[0].split(",")]
            data = [[float(t) for t in line.split(",")[1:3]] for line in lines[1:]]
            out[f"pair_{i:04d}.csv"] = _csv(["x", "y"], data)
            truth.append(f"{i},pair_{i:04d}.csv,{1 if gt[i - 1] == 1 else -1},1.0,{len(data)},"
                         f"1,1,{header[1]}|{header[2]}")
    out["ground_truth.csv"] = ("\n".join(truth) + "\n").encode()
    return out


def _ensure_pairs(folder_name, data_home):
    """``<data_home>/cause_effect/<folder_name>``, downloaded and converted when missing.

    The upstream files of aleximmer/loci@da61b8c are fetched into
    ``<data_home>/cause_effect/_upstream/<folder_name>/`` (pooch), converted to the uniform
    layout and written only if every converted file matches its pinned SHA-256.
    """
    import hashlib

    folder = get_data_home(data_home) / _FOLDER / folder_name
    if (folder / "ground_truth.csv").is_file():
        return folder
    upstream = _UPSTREAM[folder_name][1]
    remote = [RemoteFile(n, f"{_LOCI_URL}{upstream}/{n}") for n in _upstream_names(folder_name)]
    raw = fetch_files(f"{_FOLDER}/_upstream/{folder_name}", remote, data_home=data_home)
    try:
        files = _convert_upstream(folder_name, raw)
    except (OSError, ValueError, IndexError, KeyError) as exc:
        raise OSError(f"Dataset 'cause_effect/{folder_name}': the downloaded files in {raw} "
                      f"could not be converted ({type(exc).__name__}: {exc}).") from exc
    pinned = read_registry("cause_effect_converted.txt")
    bad = [p for p, b in files.items()
           if hashlib.sha256(b).hexdigest() != pinned.get(f"{folder_name}/{p}")]
    if bad:
        raise OSError(
            f"Dataset 'cause_effect/{folder_name}': {len(bad)} converted file(s) (e.g. "
            f"{', '.join(bad[:3])}) differ from their pinned SHA-256; the downloaded files in "
            f"{raw} are not the expected upstream version. Nothing was written to {folder}.")
    folder.mkdir(parents=True, exist_ok=True)
    for p in sorted(files, key=lambda p: p == "ground_truth.csv"):  # ground truth last
        (folder / p).write_bytes(files[p])
    return folder


# --------------------------------------------------------------------------------------------
# generators
# --------------------------------------------------------------------------------------------
_SN_SHAPES = {"medium": -2.0, "strong": 20.0}
_AGN_K = {"medium": 0.15, "strong": -0.31, "extreme": -0.5}
_NOISE_ABBR = {"skew-normal": "SN", "agn": "AGN", "gaussian": "G"}


def _noise(rng, n, noise, skewness):
    z = rng.standard_normal(n)
    if noise == "gaussian":
        return z
    if noise == "skew-normal":
        if isinstance(skewness, str):
            if skewness not in _SN_SHAPES:
                raise ValueError(f"skewness for noise='skew-normal' must be one of "
                                 f"{sorted(_SN_SHAPES)} or a float shape; got {skewness!r}.")
            lam = _SN_SHAPES[skewness]
        else:
            lam = float(skewness)
        delta = lam / np.sqrt(1.0 + lam * lam)
        u0 = np.abs(rng.standard_normal(n))
        return delta * u0 + np.sqrt(1.0 - delta * delta) * z
    if noise == "agn":
        if isinstance(skewness, str):
            if skewness not in _AGN_K:
                raise ValueError(f"skewness for noise='agn' must be one of {sorted(_AGN_K)} "
                                 f"or a float k; got {skewness!r}.")
            k = _AGN_K[skewness]
        else:
            k = float(skewness)
        if k == 0:
            return z
        return (1.0 - np.exp(-k * z)) / k
    raise ValueError(f"noise must be 'skew-normal', 'agn' or 'gaussian'; got {noise!r}.")


def _mechanism(rng, x):
    a = rng.uniform(-2.0, 2.0)
    b = rng.uniform(0.5, 2.0) * (1.0 if rng.uniform() < 0.5 else -1.0)
    c = 1.0 + rng.exponential(1.0 / 4.0)
    t = b * (x + a)
    return c * t / (1.0 + np.abs(t))


def _check_model(model):
    if model not in ("AN", "LS"):
        raise ValueError(f"model must be 'AN' or 'LS'; got {model!r}.")


def make_skewed_lsnm_pair(n_samples=1000, *, model="LS", noise="skew-normal",
                          skewness="strong", pure_noise=True, shuffle_columns=True,
                          random_state=None):
    """Generate one cause-effect pair with skewed additive or location-scale noise.

    Recipe of the SkewD authors: ``x = sqrt(v)·z`` (``v ~ U(1, 2)``, ``z ~ N(0, 1)``),
    ``f(x) = c·b(x + a) / (1 + |b(x + a)|)`` with ``a ~ U(-2, 2)``, ``b = ±U(0.5, 2)``,
    ``c = 1 + Exp(4)``; noise ``n = 0.2·ε``; ``"AN"``: ``y = f + n``; ``"LS"``:
    ``y = f + (f - min f)·n``.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of samples.
    model : {"AN", "LS"}, default="LS"
        Additive or location-scale noise.
    noise : {"skew-normal", "agn", "gaussian"}, default="skew-normal"
        Noise family: skew-normal ``SN(0, 1, λ)``, asymmetric generalised normal
        ``(1 - exp(-k z)) / k``, or standard normal.
    skewness : {"medium", "strong", "extreme"} or float, default="strong"
        Skew-normal: ``"medium"`` is ``λ = -2`` (skewness -0.454), ``"strong"`` ``λ = 20``
        (0.985). AGN: ``"medium"`` is ``k = 0.15`` (-0.456), ``"strong"`` ``k = -0.31``
        (0.985), ``"extreme"`` ``k = -0.5`` (1.750). A float sets ``λ`` or ``k``.
    pure_noise : bool, default=True
        If False, the noise is ``0.2·sqrt(v')·ε`` with ``v' ~ U(1, 2)``.
    shuffle_columns : bool, default=True
        Swap the columns with probability 1/2 (the direction says which order came out).
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
        The pair.
    direction : int
        +1 if column 0 causes column 1, else -1.

    Raises
    ------
    ValueError
        If ``model``, ``noise`` or ``skewness`` is unknown.

    References
    ----------
    .. [1] Klippert, D. and Marx, A. "Skewness-Robust Causal Discovery in Location-Scale Noise
       Models", ICML 2026, arXiv:2511.14441.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_skewed_lsnm_pair
    >>> X, direction = make_skewed_lsnm_pair(200, model="AN", random_state=0)
    >>> X.shape, direction in (-1, 1)
    ((200, 2), True)
    """
    _check_model(model)
    rng = check_random_state(random_state)
    x = np.sqrt(rng.uniform(1.0, 2.0)) * rng.standard_normal(n_samples)
    f = _mechanism(rng, x)
    eps = _noise(rng, n_samples, noise, skewness)
    scale = 0.2 if pure_noise else 0.2 * np.sqrt(rng.uniform(1.0, 2.0))
    n = scale * eps
    y = f + n if model == "AN" else f + (f - f.min()) * n
    if shuffle_columns and rng.uniform() >= 0.5:
        return np.column_stack([y, x]), -1
    return np.column_stack([x, y]), 1


def make_lsnm_pairs(n_pairs=100, n_samples=1000, *, model="LS", noise="skew-normal",
                    skewness="strong", pure_noise=True, random_state=None):
    """Generate a benchmark of skewed-noise cause-effect pairs (the SkewD skew sets).

    Parameters
    ----------
    n_pairs : int, default=100
        Number of pairs.
    n_samples : int, default=1000
        Samples per pair.
    model : {"AN", "LS"}, default="LS"
        Additive or location-scale noise (see :func:`make_skewed_lsnm_pair`).
    noise : {"skew-normal", "agn", "gaussian"}, default="skew-normal"
        Noise family.
    skewness : {"medium", "strong", "extreme"} or float, default="strong"
        Noise skewness level.
    pure_noise : bool, default=True
        See :func:`make_skewed_lsnm_pair`.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    data : Bunch
        Loader-like: ``pairs`` (list of ndarray of shape (n_samples, 2)), ``direction``
        (ndarray of shape (n_pairs,)), ``weight`` (ones), ``pair_id`` (1..n_pairs), ``name``
        (e.g. ``"LSs_SN_strong"``) and ``DESCR``.

    Raises
    ------
    ValueError
        If ``model``, ``noise`` or ``skewness`` is unknown.

    References
    ----------
    .. [1] Klippert, D. and Marx, A. "Skewness-Robust Causal Discovery in Location-Scale Noise
       Models", ICML 2026, arXiv:2511.14441.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_lsnm_pairs
    >>> data = make_lsnm_pairs(3, 100, model="AN", noise="agn", skewness="extreme",
    ...                        random_state=0)
    >>> data.name, len(data.pairs)
    ('ANs_AGN_extreme', 3)
    """
    _check_model(model)
    rng = check_random_state(random_state)
    pairs, direction = [], []
    for _ in range(n_pairs):
        X, d = make_skewed_lsnm_pair(n_samples, model=model, noise=noise, skewness=skewness,
                                     pure_noise=pure_noise, random_state=rng)
        pairs.append(X)
        direction.append(d)
    level = skewness if isinstance(skewness, str) else f"{float(skewness):g}"
    name = f"{model}s_{_NOISE_ABBR.get(noise, noise)}_{level}"
    return Bunch(pairs=pairs, direction=np.array(direction, dtype=int),
                 weight=np.ones(n_pairs), pair_id=np.arange(1, n_pairs + 1), name=name,
                 DESCR=f"{n_pairs} synthetic {model} pairs with {noise} noise ({level}), "
                       "SkewD recipe (arXiv:2511.14441); matches the authors' sets in "
                       "distribution only.")


def make_skewed_lsnm_dag(n_samples=1000, n_nodes=6, n_edges=6, *, noise="skew-normal",
                         skewness="strong", random_state=None):
    """Generate data from a random DAG with skewed location-scale noise.

    Roots are drawn like the cause of :func:`make_skewed_lsnm_pair`; a child is
    ``F + (F - min F)·0.2·ε`` with ``F`` the sum of one random mechanism per parent.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of samples.
    n_nodes : int, default=6
        Number of variables.
    n_edges : int, default=6
        Number of edges (at most ``n_nodes·(n_nodes-1)/2``).
    noise : {"skew-normal", "agn", "gaussian"}, default="skew-normal"
        Noise family.
    skewness : {"medium", "strong", "extreme"} or float, default="strong"
        Noise skewness level.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    X : ndarray of shape (n_samples, n_nodes)
        The data.
    adjacency : ndarray of shape (n_nodes, n_nodes), dtype=int
        True DAG, lingam convention: ``adjacency[i, j] = 1`` iff column ``j`` causes ``i``.

    Raises
    ------
    ValueError
        If ``n_edges`` exceeds the number of node pairs.

    References
    ----------
    .. [1] Klippert, D. and Marx, A. "Skewness-Robust Causal Discovery in Location-Scale Noise
       Models", ICML 2026, arXiv:2511.14441.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_skewed_lsnm_dag
    >>> X, B = make_skewed_lsnm_dag(100, n_nodes=4, n_edges=3, random_state=0)
    >>> X.shape, int(B.sum())
    ((100, 4), 3)
    """
    max_edges = n_nodes * (n_nodes - 1) // 2
    if not 0 <= n_edges <= max_edges:
        raise ValueError(f"n_edges must be in [0, {max_edges}] for n_nodes={n_nodes}; got "
                         f"{n_edges}.")
    rng = check_random_state(random_state)
    order = rng.permutation(n_nodes)
    slots = [(a, b) for a in range(n_nodes) for b in range(a + 1, n_nodes)]
    chosen = rng.choice(len(slots), n_edges, replace=False)
    B = np.zeros((n_nodes, n_nodes), dtype=int)
    for k in chosen:
        a, b = slots[k]
        B[order[b], order[a]] = 1  # order[a] -> order[b]
    X = np.zeros((n_samples, n_nodes))
    for j in order:
        parents = np.flatnonzero(B[j])
        if parents.size == 0:
            X[:, j] = np.sqrt(rng.uniform(1.0, 2.0)) * rng.standard_normal(n_samples)
            continue
        F = sum(_mechanism(rng, X[:, k]) for k in parents)
        eps = _noise(rng, n_samples, noise, skewness)
        X[:, j] = F + (F - F.min()) * 0.2 * eps
    return X, B
