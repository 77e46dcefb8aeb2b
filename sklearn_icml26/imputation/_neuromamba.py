"""NeuroMambaImputer: a selective state-space imputer with a spiking confidence gate.

Reconstructed from the abstract of "NeuroMamba" (ICML 2026), which describes a plug-and-play
module for degraded sensor streams made of two parts: a Mamba-based "inertial" model of linear
complexity that recovers short-horizon temporal dependencies and infers missing modalities, and
a hard-threshold leaky integrate-and-fire (LIF) spiking gate that enforces reconstruction
fidelity under occupancy-guided supervision. No paper text, equations or code are available:
every formula below (the bidirectional selective scan of Gu & Dao, arXiv:2312.00752, per feature
group, attention across groups, the LIF gate on a corruption logit, training by corruption) is
this package's design, not the authors' implementation.
"""

import contextlib
import numbers
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import Interval, StrOptions, _fit_context
from ..base import FitContext, TorchEstimatorMixin, seeded_torch
from ..utils._docstrings import Substitution, _torch_docstrings
from ..utils._scaling import _robust_mean_std, _standardize
from ..utils._threads import limit_threads
from ._corruption import _DEFAULT_CORRUPTION
from ._neuromamba_module import _NeuroMambaLoss, _NeuroMambaNet
from ._starting_estimate import (
    _boosted_cross_fill,
    _cross_group_fill,
    _local_profile,
    _predict_cross_fill,
    _seasonal_table,
)
from ._windows import _edge_anchors, _phase, _series_rows, _window_index, _windows

__all__ = ["NeuroMambaImputer"]

_N_FILL_FOLDS = 3
# an observed value farther than this many training standard deviations from the training mean
# is flagged at transform whatever the gate says, and feeds nothing
_WILD_Z = 1e4
# steps whose work is below these sizes run on one thread (OpenMP, BLAS and torch; restored
# after): the boosted fill's fits and predictions when rows x features of the stream is below
# _SMALL_FILL, the network's training and inference when one batch's activations (windows x
# window x groups x expand x d_model x directions) are below _SMALL_BATCH. Many small
# OpenMP/torch steps spin their whole thread pool on a busy machine (three boosted fits of
# 650 x 10 took 21-31 s at load 5 with the default threads, 1 s with one thread)
_SMALL_FILL = 2 ** 20
_SMALL_BATCH = 2 ** 23
_CHUNK = 256  # windows per inference batch


def _small_work_threads(work, limit):
    """One OpenMP/BLAS/torch thread for the block when ``work`` is below ``limit`` (restored
    afterwards); the caller's thread settings otherwise."""
    if work < limit:
        return limit_threads(1)
    return contextlib.nullcontext()


def _check_1d(name, value, n_rows):
    value = np.asarray(value)
    if value.ndim != 1 or len(value) != n_rows:
        got = f"{len(value)} entries" if value.ndim == 1 else f"shape {value.shape}"
        raise ValueError(f"{name} has {got}, X has {n_rows} rows; pass one {name} per row of "
                         "X (a 1-d array).")
    return value


# ---------------------------------------------------------------------------------------------
# estimator
# ---------------------------------------------------------------------------------------------
@Substitution(**_torch_docstrings)
class NeuroMambaImputer(OneToOneFeatureMixin, TransformerMixin, TorchEstimatorMixin,
                        BaseEstimator):
    """Impute sensor streams with a bidirectional selective state-space model and a spiking gate.

    Inspired by the abstract of NeuroMamba [1]_ and reconstructed from its description only (no
    paper text, equations or code are available; this is not the authors' implementation and
    the paper's nuScenes results are neither reproduced nor claimed). Two parts:

    * an "inertial" model: every feature group (a sensor or modality) is embedded per time step
      from its standardised values, its observed mask and a reconstruction context (below),
      passed through a bidirectional selective scan (Mamba [2]_:
      ``q_t = exp(Delta_t A) q_{t-1} + Delta_t B_t u_t``, ``y_t = C_t . q_t + D u_t``,
      input-dependent ``Delta, B, C``) and mixed across groups by multi-head attention at each
      time step, so that a group in outage borrows from the groups that are present;
      per-feature heads give a correction and a corruption logit;
    * a confidence gate: one leaky integrate-and-fire neuron per entry, driven over time by
      the current ``c = 2 theta sigmoid(logit)`` (``v_t = beta v_{t-1} + c_t - theta s_{t-1}``,
      ``s_t = H(v_t - theta)``, surrogate gradient ``1 / (1 + k |v - theta|)^2``), flags
      observed values that are implausible.

    The reconstruction is ``x_hat = base + correction``, the correction head starting at
    zero (this starting point is this package's choice; the abstract names only the two
    parts above). ``base`` blends two sources:

    * temporal: the linear interpolation of each feature from its nearest observed
      neighbours (leaving the entry itself out): inside the window, and with
      ``edge_anchors`` from the nearest observation before and after the window where the
      window has none on that side, so that a gap longer than the window is still bridged
      between its two ends. With ``seasonal_period`` it adds the departure of the seasonal
      profile from its own interpolation between the same anchors, with a learned weight
      ``sigmoid(a' + b' log(1 + distance to the nearest observation))``: inside a long gap
      the level is interpolated and the cycle comes from the profile. The profile of a row
      is local (``seasonal_cycles``): the mean departure of the observed values from their
      moving mean over one period at the same phase ``1..seasonal_cycles`` cycles before
      and after it (weights ``1/k``), shrunk towards the stream-wide profile (per phase of
      the cycle, over the whole stream), which weighs as much as all the neighbours
      together; the row itself never enters. With ``smooth_level`` the level across a gap
      is also taken from the deseasonalised values averaged over one period around each
      observation (not from the two readings at the gap's ends alone), blended in with a
      learned weight ``sigmoid(a'' + b'' log(1 + distance))``;
    * cross-group: a regression of each feature on the *other* groups' values at the same
      time step (and the phase of the cycle), fitted once on the stream: gradient-boosted
      trees by default (``cross_fill="boosting"``; scikit-learn's histogram gradient
      boosting, out of fold over contiguous blocks of two windows so that the fill of a
      training row never comes from a model fitted on that row's block) or a ridge
      (``"linear"``). It is used where at least one of its inputs is present (in training:
      where the corruption changed none of them), with a learned per-feature weight
      ``sigmoid(a + b log(1 + distance) + c share of its inputs present)``, so that short
      gaps trust the interpolation and long group outages the other sensors.

    The gate logit is a learned head plus ``w |x - interp| + b`` per feature: a value far
    from the interpolation of its neighbours is the plain signature of an impulse.

    Training is self-supervised on the stream: windows are corrupted (points, per-feature
    blocks and group segments hidden, impulses added to observed values) and the net learns to
    rebuild the hidden and impulsed entries. Genuine missing values are never targets. The
    output is ``x`` where observed and not flagged, ``x_hat`` elsewhere.

    At transform, flagged entries feed no fill: the gate is read once, then the entries it
    flags are treated as missing for the interpolation, the cross-group fills, the edge
    anchors, the seasonal profile and the network's input, and the stream is reconstructed
    again (twice the cost of a transform where anything is flagged). An observed value more
    than ``1e4`` training standard deviations from the training mean is flagged without
    asking the gate (even with ``gate=False``) and never reaches the network, so one wild
    value (``1e50``) cannot overflow the reconstruction of the whole stream.

    Read more in the :ref:`User Guide <user_guide_imputation>`.

    Parameters
    ----------
    feature_groups : list of lists of int or str, default=None
        Partition of the columns into groups (indices, or names when ``X`` has column names).
        ``None`` makes one group per feature.
    window : int, default=48
        Window length ``W`` in rows (>= 1). With ``series_id=None`` it shrinks to the number
        of rows when longer.
    stride : int, default=None
        Step between window starts (>= 1); ``None`` is ``window // 2`` (at least 1).
    d_model : int, default=16
        Width of a group token.
    d_state : int, default=4
        State size of the selective scan.
    expand : int, default=2
        Inner width of the scan is ``expand * d_model``.
    d_conv : int, default=4
        Length of the causal depthwise convolution before the scan.
    n_layers : int, default=2
        Number of (scan, mixing) layers.
    n_mix_heads : int, default=2
        Attention heads of the cross-group mixing; must divide ``d_model``.
    bidirectional : bool, default=True
        Add the time-reversed scan (imputation is offline).
    mixing : bool, default=True
        Attention across groups; ``False`` is the "no mixing" ablation.
    gate : bool, default=True
        Use the LIF gate; ``False`` is the "no gate" ablation (the gate flags nothing; wild
        values beyond ``1e4`` standard deviations are still flagged).
    lif_beta : float, default=0.9
        Leak ``beta`` of the LIF neuron, in [0, 1].
    lif_threshold : float, default=1.0
        Firing threshold ``theta`` (> 0).
    surrogate_slope : float, default=10.0
        Slope ``k`` of the surrogate gradient and of the sigmoid in the gate loss (> 0).
    lambda_gate : float, default=0.1
        Weight of the gate's binary cross-entropy (>= 0).
    lambda_observed : float, default=0.1
        Weight of the reconstruction error on clean observed entries (>= 0).
    rectify_observed : bool, default=False
        Replace observed values the gate flags by ``x_hat`` in :meth:`transform`. With the
        default ``False`` observed values are returned unchanged.
    corruption : dict, default=None
        Training corruption, keys ``p_point`` (0.1), ``p_block`` (0.2), ``p_group`` (0.1),
        ``p_device`` (0.1: all columns over ``W/8..W/2`` rows), ``p_impulse`` (0.02) and
        ``impulse_scale`` (5.0, in standard deviations; a training impulse is
        ``U[0.5, 1] x impulse_scale``); missing keys take these defaults.
    seasonal_period : int, default=None
        Period of a cycle of the stream in rows (e.g. 24 for hourly data with a daily cycle),
        at least 1. Adds the seasonal profile to the reconstruction context; useful when
        every sensor is down at once. The phase of a row is its position in its series
        modulo the period (so series should start at the same phase of the cycle); the
        cross-group fill also reads it. ``None`` uses no seasonal context.
    cross_fill : {"boosting", "linear"} or None, default="boosting"
        Regression of each feature on the other groups that the base moves towards in
        group outages: out-of-fold gradient-boosted trees (nonlinear, missing inputs
        allowed; the costliest part of a fit, see the Pitfalls of the
        :ref:`user guide <user_guide_imputation>`), a ridge on the standardised values
        (missing inputs count as the mean), or ``None`` (no cross-group fill; the attention
        still mixes the groups). Unused with a single group or ``mixing=False``. The
        boosted fill's folds are contiguous blocks of two windows (rows in series order), so
        a stream of at most two windows gets no boosted fill and one of at most four windows
        has two folds instead of three.
    edge_anchors : bool, default=True
        Let the interpolation of a window read the nearest observation of each column
        before and after the window (in the same series) where the window has none on that
        side; ``False`` keeps the context inside the window (the estimator's behaviour
        before this option: a gap longer than the window is then filled from one side, or
        from the mean where the window has no observation at all).
    seasonal_cycles : int, default=3
        With ``seasonal_period``: the cycles on each side of a row that give it its local
        seasonal profile (>= 0; ``0`` uses the stream-wide profile alone). In training, a row
        whose local profile read an entry of its window that the corruption hid or impulsed
        gets the stream-wide profile instead (the local one would leak the target). The guard
        is approximate: the one-period moving means behind the local profile and the edge
        anchors' profiles may still include a hidden entry with a weight of about
        ``1 / seasonal_period``.
    smooth_level : bool, default=True
        With ``seasonal_period``: add the smoothed level (the deseasonalised observations
        averaged over ``seasonal_period // 2`` rows on each side, interpolated across gaps)
        to the temporal estimate with a learned, distance-dependent weight, and as a context
        channel. Unused without a period.
    max_epochs : int, default=15
        {max_epochs} Few are needed because the reconstruction starts
        from the interpolation and the cross-group fill.
    batch_size : int, default=32
        {batch_size} A sample is a window.
    lr : float, default=3e-3
        {lr}
    optimizer : {"adam", "adamw", "sgd", "rmsprop", "adamo"} or torch optimizer class, \
default="adamw"
        {optimizer}
    optimizer_params : dict or None, default=None
        {optimizer_params}
    precision : {"float32", "float64"}, default="float32"
        {precision}
    device : str, default="cpu"
        {device}
    random_state : int, RandomState instance or None, default=None
        {random_state}
        The training corruption is one of those draws.
    verbose : int, default=0
        {verbose}

    Attributes
    ----------
    n_features_in_ : int
        Number of columns ``F``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names, when ``X`` had string column names.
    feature_groups_ : list of ndarray of int
        The groups as column indices.
    window_ : int
        Window length used (``window``, or the number of rows when shorter).
    stride_ : int
        Stride used.
    mean_ : ndarray of shape (n_features_in_,)
        Mean of the observed values of each column.
    scale_ : ndarray of shape (n_features_in_,)
        Standard deviation of the observed values of each column (1 where they are all
        equal; such a column is imputed by its value, which is then its ``mean_``).
    net_ : skorch.NeuralNet
        {net_}
    n_iter_ : int
        {n_iter_}
    loss_curve_ : list of float
        {loss_curve_}
    gate_rate_ : ndarray of shape (n_features_in_,)
        Share of the observed training entries the gate flags.
    seasonal_profile_ : ndarray of shape (seasonal_period, n_features_in_) or None
        Seasonal profile in standard deviations per phase of the cycle (``None`` without
        ``seasonal_period``).
    cross_fill_models_ : list or None
        With ``cross_fill="boosting"``: per column ``None`` or its fold models (transform
        uses their mean); ``None`` otherwise.
    reconstruction_error_ : ndarray of shape (n_features_in_,)
        Self-supervised MAE in standard deviations on the entries hidden by one fresh corruption
        of the training windows after the last epoch (NaN for a feature never hidden).

    Raises
    ------
    ValueError
        From :meth:`fit` if ``X`` contains inf, a column has no observed value,
        ``feature_groups`` does not partition the columns, ``series_id`` does not have one
        entry per row, ``window`` is longer than every series, or ``d_model`` is not divisible
        by ``n_mix_heads``.

    See Also
    --------
    sklearn.impute.IterativeImputer : Cross-feature regression imputation.
    sklearn.impute.KNNImputer : Nearest-neighbour imputation across rows.

    Notes
    -----
    Design choices of this package: the scan weights are shared by the groups (a learned group
    embedding tells them apart), the per-group embeddings and heads are separate, step sizes
    start log-uniform in [1e-3, 1e-1] and ``A_log = log(1..d_state)``; the gate loss is on the
    membrane potential (the hard spike has no gradient), with the impulsed entries weighted 5
    (a missed impulse costs more than a false flag); "occupancy" is read as "present and
    clean": an observed value more than ``0.6 impulse_scale`` away from the interpolation of
    its neighbours in the uncorrupted window may itself be an impulse, so it is neither a
    target nor a negative example of the gate. The five blend weights per feature are
    stored divided by 10 so that the optimiser settles them within a few epochs. The
    defaults are sized for a CPU (fit times: the benchmark section of the
    :ref:`user guide <user_guide_imputation>`). Overlapping windows are averaged with
    triangular weights at transform time (a row counts most where it is far from the
    window's edges), so the output at a row depends on rows up to ``window`` steps away (like
    any time-series filter). Steps whose work is small (the boosted fill below ``2**20``
    entries, a network batch below ``2**23`` activations) run on one OpenMP/BLAS/torch thread,
    restored afterwards: many small OpenMP fits spin on a busy machine (the Pitfalls of the
    :ref:`user guide <user_guide_imputation>`).

    References
    ----------
    .. [1] "NeuroMamba", ICML 2026 (abstract only; no arXiv id available).
    .. [2] Gu, Dao. "Mamba: Linear-Time Sequence Modeling with Selective State Spaces",
       arXiv:2312.00752.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.imputation import NeuroMambaImputer
    >>> t = np.arange(120.0)
    >>> X = np.c_[np.sin(t / 5), np.sin(t / 5), np.cos(t / 5)]
    >>> X[40:50, 0] = np.nan
    >>> imp = NeuroMambaImputer(window=24, d_model=8, n_layers=1, max_epochs=3,
    ...                         random_state=0).fit(X)
    >>> out = imp.transform(X)
    >>> bool(np.isnan(out).any()), bool(np.array_equal(out[:40], X[:40]))
    (False, True)
    """

    _parameter_constraints = {
        **TorchEstimatorMixin._torch_parameter_constraints,
        "feature_groups": [list, tuple, None],
        "window": [Interval(Integral, 1, None, closed="left")],
        "stride": [Interval(Integral, 1, None, closed="left"), None],
        "d_model": [Interval(Integral, 1, None, closed="left")],
        "d_state": [Interval(Integral, 1, None, closed="left")],
        "expand": [Interval(Integral, 1, None, closed="left")],
        "d_conv": [Interval(Integral, 1, None, closed="left")],
        "n_layers": [Interval(Integral, 1, None, closed="left")],
        "n_mix_heads": [Interval(Integral, 1, None, closed="left")],
        "bidirectional": ["boolean"],
        "mixing": ["boolean"],
        "gate": ["boolean"],
        "lif_beta": [Interval(Real, 0, 1, closed="both")],
        "lif_threshold": [Interval(Real, 0, None, closed="neither")],
        "surrogate_slope": [Interval(Real, 0, None, closed="neither")],
        "lambda_gate": [Interval(Real, 0, None, closed="left")],
        "lambda_observed": [Interval(Real, 0, None, closed="left")],
        "rectify_observed": ["boolean"],
        "corruption": [dict, None],
        "seasonal_period": [Interval(Integral, 1, None, closed="left"), None],
        "cross_fill": [StrOptions({"boosting", "linear"}), None],
        "edge_anchors": ["boolean"],
        "seasonal_cycles": [Interval(Integral, 0, None, closed="left")],
        "smooth_level": ["boolean"],
    }

    def __init__(self, feature_groups=None, window=48, stride=None, d_model=16, d_state=4,
                 expand=2, d_conv=4, n_layers=2, n_mix_heads=2, bidirectional=True,
                 mixing=True, gate=True, lif_beta=0.9, lif_threshold=1.0,
                 surrogate_slope=10.0, lambda_gate=0.1, lambda_observed=0.1,
                 rectify_observed=False, corruption=None, seasonal_period=None,
                 cross_fill="boosting", edge_anchors=True, seasonal_cycles=3, smooth_level=True,
                 max_epochs=15, batch_size=32, lr=3e-3, optimizer="adamw",
                 optimizer_params=None, precision="float32", device="cpu", random_state=None,
                 verbose=0):
        self.feature_groups = feature_groups
        self.window = window
        self.stride = stride
        self.d_model = d_model
        self.d_state = d_state
        self.expand = expand
        self.d_conv = d_conv
        self.n_layers = n_layers
        self.n_mix_heads = n_mix_heads
        self.bidirectional = bidirectional
        self.mixing = mixing
        self.gate = gate
        self.lif_beta = lif_beta
        self.lif_threshold = lif_threshold
        self.surrogate_slope = surrogate_slope
        self.lambda_gate = lambda_gate
        self.lambda_observed = lambda_observed
        self.rectify_observed = rectify_observed
        self.corruption = corruption
        self.seasonal_period = seasonal_period
        self.cross_fill = cross_fill
        self.edge_anchors = edge_anchors
        self.seasonal_cycles = seasonal_cycles
        self.smooth_level = smooth_level
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.optimizer = optimizer
        self.optimizer_params = optimizer_params
        self.precision = precision
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    # -- test settings ----------------------------------------------------------------------------
    @classmethod
    def _get_test_params(cls):
        # the linear cross-group fill: boosted trees per column and fold would dominate the
        # many tiny fits of the common checks (the boosted fill has tests of its own)
        return [dict(d_model=8, d_state=4, n_layers=1, window=8, max_epochs=2, batch_size=-1,
                     precision="float64", cross_fill="linear", random_state=0)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    # -- adapter hooks ----------------------------------------------------------------------------
    def _build_module(self, n_features_in, n_outputs, context):
        # context: the corruption rates (all keys) and the linear cross-group fill (or None)
        return _NeuroMambaNet(
            self.feature_groups_, self.n_features_in_, self.d_model, self.d_state, self.expand,
            self.d_conv, self.n_layers, self.n_mix_heads, self.bidirectional, self.mixing,
            self.gate, self.lif_beta, self.lif_threshold, self.surrogate_slope,
            context.corruption, self.seasonal_period, context.cross, self.cross_fill,
            self.smooth_level)

    def _build_criterion(self, context):
        return _NeuroMambaLoss(self.lambda_observed, self.lambda_gate, self.lif_threshold,
                               self.surrogate_slope, self.gate)

    # -- validation -------------------------------------------------------------------------------
    def _resolve_groups(self, n_features):
        if self.feature_groups is None:
            return [np.array([j]) for j in range(n_features)]
        names = getattr(self, "feature_names_in_", None)
        lookup = {str(n): j for j, n in enumerate(names)} if names is not None else {}
        groups = []
        for group in self.feature_groups:
            if isinstance(group, (str, numbers.Integral)):
                group = [group]
            cols = []
            for col in group:
                if isinstance(col, str):
                    if col not in lookup:
                        raise ValueError(
                            f"feature_groups names column {col!r}, which is not a column of X"
                            + (f" (columns: {list(lookup)})" if lookup else
                               " (X has no column names; use indices)") + ".")
                    cols.append(lookup[col])
                elif isinstance(col, numbers.Integral) and 0 <= int(col) < n_features:
                    cols.append(int(col))
                else:
                    raise ValueError(f"feature_groups holds {col!r}; expected column indices "
                                     f"in [0, {n_features}) or column names.")
            if not cols:
                raise ValueError("feature_groups holds an empty group; every group needs at "
                                 "least one column.")
            groups.append(np.array(cols, dtype=np.int64))
        counts = np.bincount(np.concatenate(groups), minlength=n_features)
        for j in range(n_features):
            if counts[j] != 1:
                what = "is missing" if counts[j] == 0 else "appears twice"
                raise ValueError(f"feature_groups must partition the {n_features} columns; "
                                 f"column {j}{self._colname(j)} {what}.")
        return groups

    def _colname(self, j):
        names = getattr(self, "feature_names_in_", None)
        return f" ({names[j]!r})" if names is not None else ""

    def _validate(self, X, reset):
        X = validate_data(self, X, reset=reset, dtype=[np.float64, np.float32],
                          ensure_all_finite="allow-nan", ensure_min_samples=1)
        inf = np.isinf(X)
        if inf.any():  # validate_data already rejects inf; kept for direct calls
            r, c = np.argwhere(inf)[0]
            raise ValueError(f"X contains inf (row {r}, column {c}); use NaN for missing "
                             "values.")
        return X

    def _series(self, series_id, n_rows):
        if series_id is None:
            return _series_rows(None, n_rows)
        return _series_rows(_check_1d("series_id", series_id, n_rows), n_rows)

    # -- fit ----------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, series_id=None):
        """Train the imputer self-supervised on the stream ``X``.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows in time order (stacked series when ``series_id`` is given), NaN where
            missing; every column needs at least one observed value.
        y : None
            Ignored.
        series_id : array-like of shape (n_rows,), default=None
            Series label of each row; windows never cross series. A fit parameter with
            metadata routing (``set_fit_request(series_id=True)``).

        Returns
        -------
        self : NeuroMambaImputer
            The fitted imputer.

        Raises
        ------
        ValueError
            See the class docstring.

        Warns
        -----
        ConvergenceWarning
            When the training loss becomes non-finite (training stops and the last
            parameters that still gave a finite loss are kept) or rises a hundredfold over
            the fit; lower ``lr``.
        """
        X = self._validate(X, reset=True)
        n_rows, n_features = X.shape
        obs = ~np.isnan(X)
        empty = np.flatnonzero(~obs.any(axis=0))
        if empty.size:
            j = int(empty[0])
            raise ValueError(f"column {j}{self._colname(j)} has no observed value; drop it "
                             "(X has only NaN there).")
        if self.d_model % self.n_mix_heads:
            raise ValueError(f"d_model={self.d_model} must be divisible by "
                             f"n_mix_heads={self.n_mix_heads}.")
        self.feature_groups_ = self._resolve_groups(n_features)
        series = self._series(series_id, n_rows)
        longest = max(len(s) for s in series)
        if series_id is not None and self.window > longest:
            raise ValueError(f"window={self.window} is longer than every series (the longest "
                             f"has {longest} rows); use window <= {longest}.")
        self.window_ = int(min(self.window, longest))
        self.stride_ = int(self.stride) if self.stride is not None else max(1, self.window_ // 2)
        unknown = set(self.corruption or {}) - set(_DEFAULT_CORRUPTION)
        if unknown:
            raise ValueError(f"corruption has unknown keys {sorted(unknown)}; expected some of "
                             f"{sorted(_DEFAULT_CORRUPTION)}.")
        corruption = {**_DEFAULT_CORRUPTION, **(self.corruption or {})}
        for key, value in corruption.items():
            # rates are probabilities, impulse_scale a size in standard deviations
            high = np.inf if key == "impulse_scale" else 1.0
            if (not isinstance(value, Real) or isinstance(value, bool)
                    or not 0.0 <= float(value) <= high):
                raise ValueError(f"corruption[{key!r}] must be a real number in "
                                 f"[0, {'inf)' if high == np.inf else '1]'}; got {value!r}.")

        Xd = X.astype(np.float64)
        # moments of power-of-two pre-scaled columns (bitwise the plain ones on ordinary
        # data): at 1e-170 the squares of the plain std underflowed to 0 (scale 1, imputations
        # ~0.03 off by a factor 1e168), at 1e300 they overflowed to inf
        moments = [_robust_mean_std(Xd[obs[:, j], j]) for j in range(n_features)]
        mean = np.array([m[0] for m in moments])
        scale = np.array([m[1] for m in moments])
        # a column whose observed values are all equal: its value exactly as the mean (the
        # mean of many 0.1 is not 0.1, and its std of rounding errors, 3e-17, would turn them
        # into O(1) inputs) and scale 1; transform imputes the value itself there
        low = np.array([Xd[obs[:, j], j].min() for j in range(n_features)])
        self._constant_ = low == np.array([Xd[obs[:, j], j].max() for j in range(n_features)])
        self.mean_ = np.where(self._constant_, low, mean)
        self.scale_ = np.where((scale > 0) & ~self._constant_, scale, 1.0)
        Z = _standardize(Xd, self.mean_, self.scale_)
        index = _window_index(series, self.window_, self.stride_)
        period = self.seasonal_period
        phase = _phase(series, n_rows, period) if period else None
        self.seasonal_profile_ = _seasonal_table(Z, obs, series, period) if period else None
        stream_profile = self.seasonal_profile_[phase] if period else None
        profile = self._profile(Z, obs, series, phase)
        multi = self.mixing and len(self.feature_groups_) > 1
        cross = (_cross_group_fill(Z, obs, self.feature_groups_)
                 if multi and self.cross_fill == "linear" else None)
        fill = fill_ok = None
        self.cross_fill_models_ = None
        if multi and self.cross_fill == "boosting":
            # contiguous blocks of two windows in three folds: the fill of a training row
            # never comes from a model fitted on that row's block (a window that straddles
            # two blocks sees fills from models fitted on the other block's rows).
            # random_state=0: without early stopping the boosting draws no random numbers
            # below 200,000 rows (its binning subsample), so the estimator's seed is not needed
            order = np.concatenate(series)
            folds = np.empty(n_rows, dtype=np.int64)
            folds[order] = (np.arange(n_rows) // (2 * self.window_)) % _N_FILL_FOLDS
            with _small_work_threads(n_rows * n_features, _SMALL_FILL):
                fill, self.cross_fill_models_ = _boosted_cross_fill(
                    Z, obs, self.feature_groups_, folds, phase, period, random_state=0)
            fill_ok = ~np.isnan(fill)
        anchors = (_edge_anchors(Z, obs, series, index, profile, (period or 0) // 2)
                   if self.edge_anchors else None)
        Wd = self._as_input(_windows(Z, obs, index, fill, fill_ok, profile, anchors,
                                     stream_profile))
        # sets net_, n_iter_ and loss_curve_; the adapter's divergence guard restores the
        # last finite state and warns if training blows up
        batch = len(Wd) if self.batch_size in (-1, None) else min(self.batch_size, len(Wd))
        with _small_work_threads(max(batch, min(len(Wd), _CHUNK)) * self._window_work(),
                                 _SMALL_BATCH):
            self._fit_net(Wd, np.zeros(len(Wd), dtype=Wd.dtype),
                          context=FitContext(corruption=corruption, cross=cross))
            self._training_summaries(Wd, n_features)
        return self

    def _window_work(self):
        """Activations of one window in the network (its share of a batch's work)."""
        return (self.window_ * len(self.feature_groups_) * self.expand * self.d_model
                * (2 if self.bidirectional else 1))

    def _profile(self, Z, obs, series, phase):
        """Seasonal profile of every row: local (``seasonal_cycles`` > 0) or stream-wide."""
        period = self.seasonal_period
        if not period:
            return None
        if self.seasonal_cycles:
            return _local_profile(Z, obs, series, period, self.seasonal_profile_,
                                  self.seasonal_cycles)
        return self.seasonal_profile_[phase]

    def _training_summaries(self, Wd, n_features):
        module = self.net_.module_
        # one fixed corruption of the training windows (seed 0 whatever random_state; the
        # caller's torch RNG, and the CUDA device's, are left untouched)
        try:
            with seeded_torch(0, self.device), torch.no_grad():
                module.train()
                x_hat, _, _, x, obs, hidden, _ = module(torch.as_tensor(Wd, device=self.device))
        finally:
            module.eval()
        err = ((x_hat - x).abs() * hidden).sum((0, 1)).cpu().numpy()
        count = hidden.sum((0, 1)).cpu().numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            self.reconstruction_error_ = np.where(count > 0, err / np.maximum(count, 1), np.nan)
        _, spikes, obs_np = self._run(Wd)
        flagged = (spikes * obs_np).sum((0, 1))
        self.gate_rate_ = flagged / np.maximum(obs_np.sum((0, 1)), 1)

    # -- inference ----------------------------------------------------------------------------
    def _run(self, Wd, chunk=None):
        chunk = _CHUNK if chunk is None else chunk
        module = self.net_.module_
        module.eval()
        f = self.n_features_in_
        xs, ss = [], []
        with torch.no_grad():
            for start in range(0, len(Wd), chunk):
                x_hat, _, spikes, *_ = module(torch.as_tensor(Wd[start:start + chunk],
                                                             device=self.device))
                xs.append(x_hat.cpu().numpy().astype(np.float64))
                ss.append(spikes.cpu().numpy().astype(np.float64))
        return np.concatenate(xs), np.concatenate(ss), Wd[..., f:2 * f] > 0.5

    def _reconstruct(self, X, series_id):
        """Window outputs averaged per row: (x_hat in X's units, flags, observed mask).

        Flagged entries (wild values, and what the gate flags) feed no fill: the gate is read
        on a first pass where only the wild values are left out; where it flags anything, a
        second pass treats the flagged entries as missing for the interpolation, the
        cross-group fills, the edge anchors, the seasonal profile and the network's input, and
        gives ``x_hat``.
        """
        n_rows, n_features = X.shape
        obs = ~np.isnan(X)
        with np.errstate(over="ignore", invalid="ignore"):
            Z = _standardize(X.astype(np.float64), self.mean_, self.scale_)
        # a value more than _WILD_Z standard deviations from the training mean is an impulse
        # whatever the gate says: the network never sees it (1e50 overflowed float32 and the
        # squares of float64 inside the network, and the whole stream came out NaN)
        wild = obs & ~(np.abs(Z) <= _WILD_Z)
        series = self._series(series_id, n_rows)
        window = min(self.window_, max(len(s) for s in series))
        index = _window_index(series, window, max(1, min(self.stride_, window)))
        trusted = obs & ~wild
        x_hat, spike_share = self._pass(Z, trusted, series, index)
        flagged = wild
        if self.gate:
            flagged = flagged | (trusted & (spike_share >= 0.5))
        if (flagged & trusted).any():
            x_hat, _ = self._pass(Z, obs & ~flagged, series, index)
        x_hat = x_hat * self.scale_ + self.mean_
        # a column constant on the training stream is imputed by its value, as the mean
        # imputation would (the network's output there is noise around 0: 6.994-7.003)
        x_hat[:, self._constant_] = self.mean_[self._constant_]
        return x_hat, flagged, obs

    def _pass(self, Z, obs, series, index):
        """One pass of the network over the windows of ``Z`` with ``obs`` as the entries it
        may read: (x_hat standardised, spike share) averaged per row."""
        n_rows, n_features = Z.shape
        period = self.seasonal_period
        phase = _phase(series, n_rows, period) if period else None
        stream_profile = self.seasonal_profile_[phase] if period else None
        profile = self._profile(Z, obs, series, phase)
        fill = fill_ok = None
        if self.cross_fill_models_ is not None:
            with _small_work_threads(n_rows * n_features, _SMALL_FILL):
                fill = _predict_cross_fill(Z, obs, self.feature_groups_,
                                           self.cross_fill_models_, phase, period)
            fill_ok = ~np.isnan(fill)
        anchors = (_edge_anchors(Z, obs, series, index, profile, (period or 0) // 2)
                   if self.edge_anchors else None)
        Wd = self._as_input(_windows(Z, obs, index, fill, fill_ok, profile, anchors,
                                     stream_profile))
        with _small_work_threads(min(len(Wd), _CHUNK) * self._window_work(), _SMALL_BATCH):
            x_hat, spikes, _ = self._run(Wd)
        valid = index >= 0
        rows = index[valid]
        # triangular weights: a row counts most in the windows where it is far from the edges
        # (an interpolation near a window edge has only one side)
        position = np.arange(index.shape[1])
        taper = np.minimum(position + 1, index.shape[1] - position).astype(np.float64)
        weight = np.broadcast_to(taper, index.shape)[valid][:, None]
        total = np.zeros((n_rows, n_features))
        spike_total = np.zeros((n_rows, n_features))
        np.add.at(total, rows, weight * x_hat[valid])
        np.add.at(spike_total, rows, weight * spikes[valid])
        count = np.bincount(rows, weights=weight[:, 0], minlength=n_rows)[:, None]
        return total / count, spike_total / count

    def transform(self, X, series_id=None):
        """Fill every missing value (and, with ``rectify_observed``, every flagged one).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows in time order, NaN where missing.
        series_id : array-like of shape (n_rows,), default=None
            Series label of each row (metadata routing: ``set_transform_request``).

        Returns
        -------
        X_out : ndarray of shape (n_rows, n_features)
            ``X`` with no NaN, of the dtype of ``X`` (float32 or float64). Observed entries
            are returned unchanged unless ``rectify_observed=True``.
        """
        check_is_fitted(self)
        X = self._validate(X, reset=False)
        x_hat, flagged, obs = self._reconstruct(X, series_id)
        replace = ~obs
        if self.rectify_observed:
            replace |= flagged
        out = X.copy()
        out[replace] = x_hat[replace].astype(X.dtype)
        if not np.all(np.isfinite(out[replace])):
            hint = " or precision='float64'" if self.precision != "float64" else ""
            raise FloatingPointError(f"the reconstruction is not finite; refit with a smaller "
                                     f"lr{hint}.")
        return out

    def fit_transform(self, X, y=None, series_id=None):
        """Fit on ``X`` and fill it.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows in time order, NaN where missing.
        y : None
            Ignored.
        series_id : array-like of shape (n_rows,), default=None
            Series label of each row, used by fit and transform.

        Returns
        -------
        X_out : ndarray of shape (n_rows, n_features)
            See :meth:`transform`.
        """
        return self.fit(X, y, series_id=series_id).transform(X, series_id=series_id)

    def predict_corruption(self, X, series_id=None):
        """Flag observed values the gate finds implausible (impulses, stuck readings).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows in time order, NaN where missing.
        series_id : array-like of shape (n_rows,), default=None
            Series label of each row.

        Returns
        -------
        flags : ndarray of shape (n_rows, n_features), dtype bool
            True where an observed entry spikes in windows holding at least half of its
            (edge-tapered) weight, or lies more than ``1e4`` training standard deviations
            from the training mean (with ``gate=False`` only the latter); always False for
            missing entries.
        """
        check_is_fitted(self)
        X = self._validate(X, reset=False)
        _, flagged, _ = self._reconstruct(X, series_id)
        return flagged
