"""HolderTransformerRegressor: a standard transformer whose depth comes from Hölder-class bounds.

He, Jiao, Lu, Yang, "Approximation Error Upper and Lower Bounds for Hölder Class with
Transformers", ICML 2026, arXiv:2605.07463. The paper bounds the number of blocks ``L`` of a
standard transformer (softmax attention, ReLU feed-forward layers, residual connections) that
approximates an alpha-Hölder function of ``d0`` variables to accuracy ``eps``:
``L = O(eps^(-d0/alpha))`` blocks suffice and ``L = Omega(eps^(-d0/(4 alpha)))`` are needed. The
constants, the width and the tokenisation of the construction are not published; the layout
here (one token per coordinate plus a readout token) and the risk rate derived from a
pseudo-dimension assumption are this package's choices.

Training runs on the package's skorch adapter (:class:`~sklearn_icml26.base.TorchEstimatorMixin`).
"""

import math
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data
from torch import nn
from torch.nn import functional as F

from .._compat import Interval, StrOptions, _check_sample_weight, _fit_context
from ..base import TorchEstimatorMixin
from ..utils._docstrings import Substitution, _torch_docstrings
from ..utils._scaling import _pow2_scale, _standardize
from ..utils._validation import _check_numeric_target

__all__ = [
    "BlockBounds",
    "HolderTransformerRegressor",
    "holder_depth_slopes",
    "holder_risk_rates",
    "holder_transformer_block_bounds",
]

_DEPTH_RULES = ("lower", "upper", "geometric")


# ---------------------------------------------------------------------------------------------
# bounds
# ---------------------------------------------------------------------------------------------
class BlockBounds(NamedTuple):
    """Block counts of :func:`holder_transformer_block_bounds` (floats or arrays)."""

    lower: object
    """``c_lower * eps^(-d0 / (4 alpha))``: the count the lower bound says is necessary."""
    upper: object
    """``c_upper * eps^(-d0 / alpha)``: the count the upper bound says suffices."""


def _check_alpha(alpha, name="alpha"):
    a = np.asarray(alpha, dtype=np.float64)
    if not np.all((a > 0) & (a <= 1)):
        bad = a[~((a > 0) & (a <= 1))].ravel()[0] if a.ndim else a
        raise ValueError(f"{name} must be in (0, 1]; got {float(bad):g}.")
    return a


def _check_d0(d0):
    d = np.asarray(d0)
    if d.dtype.kind not in "iuf" or not np.all(d == np.round(d)) or not np.all(d >= 1):
        raise ValueError(f"d0 must be an integer >= 1 (the input dimension); got {d0!r}.")
    return d.astype(np.float64)


def _scalar_or_array(value):
    value = np.asarray(value, dtype=np.float64)
    return float(value) if value.ndim == 0 else value


def holder_transformer_block_bounds(eps, d0, alpha, *, c_lower=1.0, c_upper=1.0):
    """Block counts of the approximation bounds for alpha-Hölder functions at accuracy ``eps``.

    For an alpha-Hölder function of ``d0`` variables, a standard transformer of
    ``L <= C_u eps^(-d0/alpha)`` blocks reaches accuracy ``eps``, and some functions of the class
    need ``L >= c_l eps^(-d0/(4 alpha))`` blocks [1]_. The constants are not published; with the
    default unit constants these are the raw rates, not depths the theorem guarantees.

    Parameters
    ----------
    eps : float or array-like of float
        Target accuracy, > 0 (same units as the function, whose sup norm is of order 1).
    d0 : int or array-like of int
        Input dimension, >= 1.
    alpha : float or array-like of float
        Hölder exponent in (0, 1].
    c_lower : float, default=1.0
        Constant of the lower bound.
    c_upper : float, default=1.0
        Constant of the upper bound.

    Returns
    -------
    bounds : BlockBounds
        ``(lower, upper)`` = ``(c_lower eps^(-d0/(4 alpha)), c_upper eps^(-d0/alpha))``, float
        when every input is scalar, else float64 arrays broadcast over the inputs.

    Raises
    ------
    ValueError
        If ``eps <= 0``, ``d0`` is not an integer >= 1 or ``alpha`` is outside (0, 1].

    References
    ----------
    .. [1] He, Jiao, Lu, Yang. "Approximation Error Upper and Lower Bounds for Hölder Class with
       Transformers", ICML 2026, arXiv:2605.07463.

    Examples
    --------
    >>> from sklearn_icml26.approximation import holder_transformer_block_bounds
    >>> lower, upper = holder_transformer_block_bounds(0.05, 2, 0.5)
    >>> round(lower, 6), round(upper, 6)
    (20.0, 160000.0)
    """
    e = np.asarray(eps, dtype=np.float64)
    if not np.all(e > 0):
        bad = e[~(e > 0)].ravel()[0] if e.ndim else e
        raise ValueError(f"eps must be > 0; got {float(bad):g}.")
    d = _check_d0(d0)
    a = _check_alpha(alpha)
    lower = c_lower * e ** (-d / (4.0 * a))
    upper = c_upper * e ** (-d / a)
    return BlockBounds(_scalar_or_array(lower), _scalar_or_array(upper))


def holder_depth_slopes(d0, alpha):
    """Bracket of the log-log slope of the best error against the number of blocks.

    Inverting the two block bounds of [1]_ gives, up to constants,
    ``L^(-4 alpha/d0) <~ eps*(L) <~ L^(-alpha/d0)`` for the best accuracy ``eps*(L)`` of ``L``
    blocks, so the slope of ``log eps*`` against ``log L`` lies between the two exponents (our
    algebra on the paper's rates).

    Parameters
    ----------
    d0 : int or array-like of int
        Input dimension, >= 1.
    alpha : float or array-like of float
        Hölder exponent in (0, 1].

    Returns
    -------
    steepest : float or ndarray
        ``-4 alpha / d0``, the fastest decay the lower bound allows.
    guaranteed : float or ndarray
        ``-alpha / d0``, the decay the upper bound guarantees.

    Raises
    ------
    ValueError
        If ``d0`` is not an integer >= 1 or ``alpha`` is outside (0, 1].

    References
    ----------
    .. [1] He, Jiao, Lu, Yang. "Approximation Error Upper and Lower Bounds for Hölder Class with
       Transformers", ICML 2026, arXiv:2605.07463.

    Examples
    --------
    >>> from sklearn_icml26.approximation import holder_depth_slopes
    >>> holder_depth_slopes(1, 0.5)
    (-2.0, -0.5)
    """
    d = _check_d0(d0)
    a = _check_alpha(alpha)
    return _scalar_or_array(-4.0 * a / d), _scalar_or_array(-a / d)


def _risk_exponents(d0, alpha, capacity_exponent):
    d = _check_d0(d0)
    a = _check_alpha(alpha)
    p = float(capacity_exponent)
    return -2.0 * a / (2.0 * a + d), -2.0 * a / (2.0 * a + p * d)


def holder_risk_rates(n, d0, alpha, capacity_exponent=4):
    """Excess-risk rates for regression on the Hölder class at sample size ``n``.

    ``minimax`` is Stone's optimal rate ``n^(-2 alpha/(2 alpha + d0))``. ``transformer_derived``
    is derived, not quoted (the paper's exponent is not available to us): assume the
    pseudo-dimension of ``L`` blocks grows like ``L^p log`` (``p = capacity_exponent``, 4 as for
    networks of exponential units); balancing the squared approximation error ``L^(-2 alpha/d0)``
    with the estimation error ``L^p log(n) / n`` gives ``L* ~ n^(d0/(2 alpha + p d0))`` and the
    rate ``n^(-2 alpha/(2 alpha + p d0))``, which is ``n^(-alpha/(alpha + 2 d0))`` at ``p = 4``
    (logarithmic factors dropped).

    Parameters
    ----------
    n : float or array-like of float
        Number of training samples, > 0.
    d0 : int or array-like of int
        Input dimension, >= 1.
    alpha : float or array-like of float
        Hölder exponent in (0, 1].
    capacity_exponent : float, default=4
        Exponent ``p`` of the assumed pseudo-dimension ``L^p``, > 0.

    Returns
    -------
    rates : dict
        ``{"minimax": n^(-2a/(2a+d0)), "transformer_derived": n^(-2a/(2a+p d0))}``, floats for
        scalar inputs, else arrays.

    Raises
    ------
    ValueError
        If ``n <= 0``, ``capacity_exponent <= 0``, ``d0`` is not an integer >= 1 or ``alpha``
        is outside (0, 1].

    References
    ----------
    .. [1] He, Jiao, Lu, Yang. "Approximation Error Upper and Lower Bounds for Hölder Class with
       Transformers", ICML 2026, arXiv:2605.07463.
    .. [2] Stone, C. J. "Optimal global rates of convergence for nonparametric regression",
       Annals of Statistics 10 (1982), 1040-1053.

    Examples
    --------
    >>> from sklearn_icml26.approximation import holder_risk_rates
    >>> rates = holder_risk_rates(10_000, 1, 0.5)
    >>> round(rates["minimax"], 4), round(rates["transformer_derived"], 4)
    (0.01, 0.1585)
    """
    n_arr = np.asarray(n, dtype=np.float64)
    if not np.all(n_arr > 0):
        raise ValueError(f"n must be > 0; got {n!r}.")
    if not float(capacity_exponent) > 0:
        raise ValueError(f"capacity_exponent must be > 0; got {capacity_exponent!r}.")
    minimax, derived = _risk_exponents(d0, alpha, capacity_exponent)
    return {"minimax": _scalar_or_array(n_arr**minimax),
            "transformer_derived": _scalar_or_array(n_arr**derived)}


def _statistical_eps(n, d0, alpha):
    """eps_n = n^(-alpha/(2 alpha + d0)), the accuracy scale of n samples."""
    return float(n) ** (-alpha / (2.0 * alpha + d0))


def _auto_blocks(eps, d0, alpha, rule, constant, max_blocks):
    bounds = holder_transformer_block_bounds(eps, d0, alpha)
    count = {"lower": bounds.lower, "upper": bounds.upper,
             "geometric": math.sqrt(bounds.lower * bounds.upper)}[rule]
    # a tiny tolerance keeps exact integers (20.000000000000004 -> 20) from rounding up
    blocks = math.ceil(constant * count * (1 - 1e-12))
    return int(min(max(blocks, 1), max_blocks)), bounds


# ---------------------------------------------------------------------------------------------
# torch module
# ---------------------------------------------------------------------------------------------
class _Attention(nn.Module):
    """Multi-head softmax self-attention: fused q, k, v projection and an output projection."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, h):
        b, t, d = h.shape
        q, k, v = self.qkv(h).view(b, t, 3, self.n_heads, d // self.n_heads).permute(
            2, 0, 3, 1, 4)
        # softmax(q k^T / sqrt(d_head)) v in one fused call (fewer autograd nodes than the
        # three-step product on these few tokens)
        att = F.scaled_dot_product_attention(q, k, v)
        return self.out(att.transpose(1, 2).reshape(b, t, d))


class _FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, h):
        return self.fc2(F.relu(self.fc1(h)))


class _Block(nn.Module):
    """h <- h + MHA(h); h <- h + FFN(h) (pre-LN inside each branch when ``norm="layer"``)."""

    def __init__(self, d_model, n_heads, d_ff, norm):
        super().__init__()
        self.attn = _Attention(d_model, n_heads)
        self.ffn = _FeedForward(d_model, d_ff)
        self.norm = norm == "layer"
        if self.norm:
            self.ln1 = nn.LayerNorm(d_model)
            self.ln2 = nn.LayerNorm(d_model)

    def forward(self, h):
        if self.norm:
            h = h + self.attn(self.ln1(h))
            return h + self.ffn(self.ln2(h))
        h = h + self.attn(h)
        return h + self.ffn(h)


class _HolderTransformer(nn.Module):
    """Tokens -> ``n_blocks`` residual blocks -> linear readout of token 0.

    ``"coordinate"``: token 0 is a learned readout vector e_0 and token k = x_k w + e_k
    (k = 1..d0, one shared value vector w). ``"single"``: token 0 is e_0 and token 1 is
    W x + e_1. The input x is already min-max scaled to [0, 1].
    """

    def __init__(self, n_features, n_blocks, d_model, n_heads, d_ff, tokenization, norm):
        super().__init__()
        self.tokenization = tokenization
        n_tokens = n_features + 1 if tokenization == "coordinate" else 2
        self.position = nn.Parameter(torch.randn(n_tokens, d_model))
        if tokenization == "coordinate":
            self.value = nn.Parameter(torch.randn(d_model))
        else:
            self.embed = nn.Linear(n_features, d_model, bias=False)
        self.blocks = nn.ModuleList(
            [_Block(d_model, n_heads, d_ff, norm) for _ in range(n_blocks)])
        self.final_norm = nn.LayerNorm(d_model) if norm == "layer" else nn.Identity()
        self.readout = nn.Linear(d_model, 1)
        # small residual branches keep a deep stack without normalisation trainable
        std = 0.02 / math.sqrt(2 * n_blocks)
        for block in self.blocks:
            for layer in (block.attn.out, block.ffn.fc2):
                nn.init.normal_(layer.weight, std=std)
                nn.init.zeros_(layer.bias)

    def tokens(self, x):
        if self.tokenization == "coordinate":
            values = x[:, :, None] * self.value  # (b, d0, d_model)
        else:
            values = self.embed(x)[:, None, :]  # (b, 1, d_model)
        rest = values + self.position[1:]
        first = self.position[:1].expand(x.shape[0], 1, -1)
        return torch.cat([first, rest], dim=1)

    def forward(self, x):
        h = self.tokens(x)
        for block in self.blocks:
            h = block(h)
        return self.readout(self.final_norm(h[:, 0]))


def _n_parameters(n_features, n_blocks, d_model, d_ff, tokenization="coordinate", norm=None):
    """Closed-form parameter count of :class:`_HolderTransformer`."""
    D, Fw = d_model, d_ff
    if tokenization == "coordinate":
        embed = (n_features + 1) * D + D
    else:
        embed = 2 * D + n_features * D
    attention = 3 * D * D + 3 * D + D * D + D
    ffn = D * Fw + Fw + Fw * D + D
    ln = 4 * D if norm == "layer" else 0
    final = 2 * D if norm == "layer" else 0
    return embed + n_blocks * (attention + ffn + ln) + final + D + 1


class _SquaredError(nn.Module):
    def forward(self, y_pred, y_true):
        return (y_pred - y_true) ** 2


# ---------------------------------------------------------------------------------------------
# estimator
# ---------------------------------------------------------------------------------------------
@Substitution(**_torch_docstrings)
class HolderTransformerRegressor(TorchEstimatorMixin, RegressorMixin, BaseEstimator):
    """Transformer regressor whose number of blocks can be set from Hölder-class bounds.

    The network belongs to the class analysed in [1]_: softmax multi-head self-attention,
    ReLU feed-forward layers and residual connections, optionally with pre-LayerNorm. ``X`` is
    min-max scaled to ``[0, 1]`` with the training range; with ``tokenization="coordinate"``
    the token of coordinate ``k`` is ``x_k w + e_k`` (a shared value vector ``w`` and a learned
    position ``e_k``) and a readout token ``e_0`` comes first; every block applies
    ``h <- h + MHA(h)`` then ``h <- h + W_2 ReLU(W_1 h + b_1) + b_2``; the prediction is
    ``v^T h_0 + c`` on the readout token, rescaled to the units of ``y`` and optionally clipped
    to ``[-B, B]``.

    With ``n_blocks="auto"`` the depth comes from the block bounds of [1]_ at the accuracy
    ``eps`` (by default the statistical scale ``eps_n = n^(-alpha/(2 alpha + d0))`` of the
    ``n`` training samples): ``depth_rule="lower"`` uses the lower-bound count
    ``eps^(-d0/(4 alpha))``, ``"upper"`` the upper-bound count ``eps^(-d0/alpha)``,
    ``"geometric"`` their geometric mean; then
    ``n_blocks_ = clip(ceil(depth_constant * count), 1, max_blocks)``. The constants of the
    bounds are unknown, so this is a heuristic: ``n_blocks_`` is the lower-bound count with unit
    constant, not the depth the theorem requires. Set ``alpha`` to the smoothness you assume.

    Parameters
    ----------
    alpha : float, default=1.0
        Assumed Hölder exponent of the regression function, in (0, 1]; used by
        ``n_blocks="auto"`` and by ``eps_n``. The default is the Lipschitz assumption.
    n_blocks : int or "auto", default="auto"
        Number of transformer blocks ``L`` (>= 1), or ``"auto"`` (see above).
    eps : float or None, default=None
        Accuracy (> 0, in the units of the standardised target) at which ``"auto"`` evaluates
        the bounds; ``None`` uses ``eps_n``.
    depth_rule : {"lower", "upper", "geometric"}, default="lower"
        Which count ``"auto"`` uses. At ``eps = 0.05``, ``d0 = 2``, ``alpha = 0.5`` "upper" asks
        for 160,000 blocks and "lower" for 20: only "lower" stays CPU-sized.
    depth_constant : float, default=1.0
        Multiplies the count before rounding up (> 0).
    max_blocks : int, default=32
        Cap of ``"auto"`` (>= 1).
    d_model : int, default=32
        Token width; must be divisible by ``n_heads``.
    n_heads : int, default=2
        Number of attention heads.
    d_ff : int, default=64
        Hidden width of the feed-forward layers.
    tokenization : {"coordinate", "single"}, default="coordinate"
        ``"coordinate"``: a readout token and one token per input coordinate (``d0 + 1``
        tokens); ``"single"``: a readout token and one token ``W x + e_1`` holding all of x.
    norm : {None, "layer"}, default=None
        ``None`` is the class of the theorem (no normalisation); ``"layer"`` adds pre-LN in
        every branch and before the readout (trains more easily beyond about 8 blocks).
    output_bound : float, "auto" or None, default=None
        Clip predictions to ``[-B, B]`` (truncation, as in risk proofs); ``"auto"`` uses
        ``B = max |y|`` over the training samples; ``None`` does not clip.
    max_epochs : int, default=300
        {max_epochs}
    batch_size : int, default=128
        {batch_size}
    lr : float, default=1e-3
        {lr}
    optimizer : {"adam", "adamw", "sgd", "rmsprop", "adamo"} or torch optimizer class, \
default="adam"
        {optimizer}
    weight_decay : float, default=0.0
        {weight_decay}
    early_stopping : bool, default=False
        {early_stopping}
        The loss is the weighted MSE of the standardised target.
    validation_fraction : float, default=0.1
        {validation_fraction}
    n_iter_no_change : int, default=10
        {n_iter_no_change}
    tol : float, default=1e-4
        {tol}
    precision : {"float32", "float64"}, default="float32"
        {precision}
    device : str, default="cpu"
        {device}
    random_state : int, RandomState instance or None, default=None
        {random_state}
    verbose : int, default=0
        {verbose}
    optimizer_params : dict or None, default=None
        {optimizer_params}

    Attributes
    ----------
    n_blocks_ : int
        Number of blocks of the trained network.
    depth_bounds_ : dict
        ``{"lower", "upper", "eps"}``: the raw block counts (unit constants) at ``eps_``.
    eps_ : float
        Accuracy used for the bounds (``eps`` or ``eps_n``).
    output_bound_ : float or None
        The clipping bound ``B`` of the predictions, in units of ``y``.
    x_min_ : ndarray of shape (n_features_in_,)
        Per-feature training minimum.
    x_range_ : ndarray of shape (n_features_in_,)
        Per-feature training range (max - min), > 0.
    y_mean_ : float
        Weighted mean of the training targets.
    y_scale_ : float
        Weighted standard deviation of the training targets (1 if they are constant).
    n_features_in_ : int
        Number of input features ``d0``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Input column names, when ``X`` had string column names.
    net_ : skorch.NeuralNet
        {net_}
    n_iter_ : int
        {n_iter_}
    loss_curve_ : list of float
        {loss_curve_}
        The loss is the weighted MSE of the standardised target.
    validation_loss_curve_ : list of float or None
        {validation_loss_curve_}
    best_loss_ : float or None
        {best_loss_}

    See Also
    --------
    holder_transformer_block_bounds : The block counts of the bounds.
    holder_risk_rates : Minimax and derived excess-risk rates.
    sklearn.neural_network.MLPRegressor : The fully connected anchor.

    Notes
    -----
    Choices of this implementation beyond the paper: the tokenisation, the fixed width, the
    min-max scaling of ``X`` and the standardisation of ``y`` (weighted by ``sample_weight``;
    zero-weight samples do not enter the scaling), the ``n`` of ``eps_n`` (the number of
    samples with positive weight), the initialisation (positions and value vector standard
    normal, the output layers of the attention and of the feed-forward branch
    ``N(0, (0.02 / sqrt(2 L))^2)``, PyTorch defaults elsewhere). Columns of ``X`` that are
    constant on the training samples are rejected, since min-max scaling needs a range.

    References
    ----------
    .. [1] He, Jiao, Lu, Yang. "Approximation Error Upper and Lower Bounds for Hölder Class with
       Transformers", ICML 2026, arXiv:2605.07463.

    Examples
    --------
    >>> from sklearn_icml26.approximation import HolderTransformerRegressor
    >>> from sklearn_icml26.datasets import make_holder_regression
    >>> X, y = make_holder_regression(200, 1, alpha=1.0, kind="radial", random_state=0)
    >>> reg = HolderTransformerRegressor(alpha=1.0, d_model=16, d_ff=32, max_epochs=5,
    ...                                  random_state=0).fit(X, y)
    >>> reg.n_blocks_, reg.predict(X[:3]).shape
    (2, (3,))
    """

    _parameter_constraints = {
        **TorchEstimatorMixin._torch_parameter_constraints,
        "alpha": [Real],
        "n_blocks": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "eps": [Real, None],
        "depth_rule": [StrOptions(set(_DEPTH_RULES))],
        "depth_constant": [Interval(Real, 0, None, closed="neither")],
        "max_blocks": [Interval(Integral, 1, None, closed="left")],
        "d_model": [Interval(Integral, 1, None, closed="left")],
        "n_heads": [Interval(Integral, 1, None, closed="left")],
        "d_ff": [Interval(Integral, 1, None, closed="left")],
        "tokenization": [StrOptions({"coordinate", "single"})],
        "norm": [StrOptions({"layer"}), None],
        "output_bound": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"}), None],
        **TorchEstimatorMixin._early_stopping_constraints,
    }

    def __init__(self, alpha=1.0, n_blocks="auto", eps=None, *, depth_rule="lower",
                 depth_constant=1.0, max_blocks=32, d_model=32, n_heads=2, d_ff=64,
                 tokenization="coordinate", norm=None, output_bound=None, max_epochs=300,
                 batch_size=128, lr=1e-3, optimizer="adam", weight_decay=0.0,
                 early_stopping=False, validation_fraction=0.1, n_iter_no_change=10,
                 tol=1e-4, precision="float32",
                 device="cpu", random_state=None, verbose=0, optimizer_params=None):
        self.alpha = alpha
        self.n_blocks = n_blocks
        self.eps = eps
        self.depth_rule = depth_rule
        self.depth_constant = depth_constant
        self.max_blocks = max_blocks
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_ff = d_ff
        self.tokenization = tokenization
        self.norm = norm
        self.output_bound = output_bound
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.optimizer = optimizer
        self.optimizer_params = optimizer_params
        self.weight_decay = weight_decay
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.precision = precision
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    # -- test settings --
    @classmethod
    def _get_test_params(cls):
        # full batch keeps integer sample weights equal to repeated samples (batches differ
        # otherwise); a larger lr lets 40 full-batch epochs pass the common score check
        return [dict(d_model=8, n_heads=2, d_ff=16, n_blocks=1, max_epochs=40, batch_size=-1,
                     lr=0.03, precision="float64", random_state=0)]

    # -- adapter hooks --
    # mini-batches by one index into whole tensors, not sample by sample
    _whole_batches = True

    def _build_module(self, n_features_in, n_outputs, context):
        return _HolderTransformer(n_features_in, self.n_blocks_, self.d_model, self.n_heads,
                                  self.d_ff, self.tokenization, self.norm)

    def _build_criterion(self, context):
        return _SquaredError()

    def _check_hyperparameters(self):
        if not 0 < self.alpha <= 1:
            raise ValueError(f"alpha must be in (0, 1]; got {self.alpha}")
        if self.eps is not None and not self.eps > 0:
            raise ValueError(f"eps must be > 0; got {self.eps}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} must be divisible by "
                             f"n_heads={self.n_heads}")

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Scale the data, choose the depth and train the transformer.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs ``x`` in ``R^d0``; no column may be constant over the samples of positive
            weight.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative per-sample weights of the squared error (a fit parameter with
            metadata routing: ``set_fit_request(sample_weight=True)``).

        Returns
        -------
        self : HolderTransformerRegressor
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``alpha`` is outside (0, 1], ``eps <= 0``, ``d_model`` is not divisible by
            ``n_heads``, a column of ``X`` is constant or ``y`` is not numeric.

        Warns
        -----
        ConvergenceWarning
            When the training loss becomes non-finite (training stops and the last
            parameters that still gave a finite loss are kept) or rises a hundredfold over
            the fit; lower ``lr``.
        """
        self._check_hyperparameters()
        _check_numeric_target(y, "HolderTransformerRegressor is a regressor")
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True,
                             ensure_min_samples=2)
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        active = sw > 0  # _check_sample_weight rejects all-zero weights
        Xa = X[active]
        self.x_min_ = Xa.min(axis=0)
        self.x_range_ = Xa.max(axis=0) - self.x_min_
        constant = np.flatnonzero(~(self.x_range_ > 0))
        if constant.size:
            raise ValueError(
                f"X has constant column(s) {constant.tolist()} (over the samples of positive "
                f"weight): min-max scaling to [0, 1] needs a positive range in every column of "
                f"X; drop them. Got value {Xa[0, constant[0]]:g} in every row of column "
                f"{constant[0]}.")
        # moments on power-of-two pre-scaled targets: no overflow of the squares near 1e300
        c = float(_pow2_scale(y))
        mean_c = float(np.average(y / c, weights=sw))
        std_c = float(np.sqrt(np.average((y / c - mean_c) ** 2, weights=sw)))
        self.y_mean_ = mean_c * c
        self.y_scale_ = std_c * c if std_c > 0 else 1.0
        if self.output_bound == "auto":
            self.output_bound_ = float(np.max(np.abs(y[active])))
        else:
            self.output_bound_ = None if self.output_bound is None else float(self.output_bound)

        d0 = X.shape[1]
        n = int(active.sum())
        self.eps_ = float(self.eps) if self.eps is not None else _statistical_eps(
            n, d0, self.alpha)
        blocks, bounds = _auto_blocks(self.eps_, d0, self.alpha, self.depth_rule,
                                      self.depth_constant, self.max_blocks)
        self.depth_bounds_ = {"lower": bounds.lower, "upper": bounds.upper, "eps": self.eps_}
        self.n_blocks_ = blocks if self.n_blocks == "auto" else int(self.n_blocks)

        Xs = (X - self.x_min_) / self.x_range_
        ys = _standardize(y, self.y_mean_, self.y_scale_)[:, None]
        self._fit_net(Xs, self._as_input(ys), sw)
        return self

    def _scaled(self, X):
        return (X - self.x_min_) / self.x_range_

    def predict(self, X):
        """Predict targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs (scaled with the training range; points outside it are extrapolated).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,), dtype float64
            Predictions in the units of ``y``, clipped to ``[-output_bound_, output_bound_]``
            when ``output_bound`` is set.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        out = self._forward_numpy(self._scaled(X))[:, 0] * self.y_scale_ + self.y_mean_
        if self.output_bound_ is not None:
            out = np.clip(out, -self.output_bound_, self.output_bound_)
        return out

    def n_parameters(self):
        """Number of trainable parameters of the fitted network.

        Returns
        -------
        n_parameters : int
            Sum of the sizes of the module's parameters.
        """
        check_is_fitted(self)
        return int(sum(p.numel() for p in self.net_.module_.parameters()))
