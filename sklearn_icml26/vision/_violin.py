"""VIOLIN: attention masks that decay along space-filling curves over the patch grid.

Candogan et al., "Spatial Priors via Space Filling Curves for Small and Limited Data Vision
Transformers", ICML 2026, arXiv:2606.14757. Every attention logit of head ``h`` is multiplied by
``s_h M^(h)[i, j]`` with ``M^(h)[i, j] = (1/C) sum_c gamma_{c,h}^|pos_c(i) - pos_c(j)|``, the
mean over ``C`` space-filling curves of a geometric decay in the distance of the two patches
along the curve; the decays ``gamma = sigmoid(a)`` (one per curve and head) and the scales
``s_h`` (one per head) are learned. That is ``depth * H * (C + 1)`` extra parameters.

The curves (snake, generalised rectangular Hilbert, Morton and zigzag, and their transposes) are
implemented here from their definitions. Training runs on the package's skorch adapter
(:class:`~sklearn_icml26.base.TorchEstimatorMixin`).
"""

import functools
import math
import warnings
from numbers import Integral, Real

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from torch import nn

from .._compat import Interval, StrOptions, _check_sample_weight, _fit_context
from ..base import FitContext, TorchEstimatorMixin, _external_stacklevel
from ..utils._docstrings import Substitution, _torch_docstrings
from ..utils._scaling import _pow2_scale, _standardize

__all__ = [
    "CURVE_NAMES",
    "DEFAULT_CURVES",
    "ViolinAttention",
    "ViolinViTClassifier",
    "curve_positions",
    "space_filling_curve_order",
    "violin_mask",
]

_BASE_CURVES = ("snake", "hilbert", "morton", "zigzag")
#: Every accepted curve name ("peano" is an alias of "morton", as the authors call it).
CURVE_NAMES = tuple(n + t for n in (*_BASE_CURVES, "peano") for t in ("", "_T"))
#: The eight curves of the paper's default mask: four curves and their transposes.
DEFAULT_CURVES = ("snake", "hilbert", "morton", "zigzag",
                  "snake_T", "hilbert_T", "morton_T", "zigzag_T")
_MASKS = ("learned", "fixed", "ones")
_FIXED_DECAY = 0.996


# ---------------------------------------------------------------------------------------------
# space-filling curves (numpy)
# ---------------------------------------------------------------------------------------------
def _check_grid(h, w):
    for name, value in (("h", h), ("w", w)):
        if not isinstance(value, Integral | np.integer) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1 (grid size); got {value!r}.")
    return int(h), int(w)


def _check_curve_name(kind):
    if not isinstance(kind, str) or kind not in CURVE_NAMES:
        raise ValueError(f"Unknown curve {kind!r}; allowed names are {list(CURVE_NAMES)}.")
    return kind


def _snake(h, w):
    cells = []
    for r in range(h):
        cols = range(w) if r % 2 == 0 else range(w - 1, -1, -1)
        cells.extend((r, c) for c in cols)
    return cells


def _morton_key(r, c):
    key, b = 0, 0
    while (r >> b) or (c >> b):
        key += ((c >> b) & 1) * 4**b + ((r >> b) & 1) * 2 * 4**b
        b += 1
    return key


def _morton(h, w):
    cells = [(r, c) for r in range(h) for c in range(w)]
    return sorted(cells, key=lambda rc: _morton_key(*rc))


def _zigzag(h, w):
    cells = []
    for d in range(h + w - 1):
        if d % 2 == 0:  # rows decrease from min(d, h - 1)
            for r in range(min(d, h - 1), max(0, d - w + 1) - 1, -1):
                cells.append((r, d - r))
        else:  # columns decrease from min(d, w - 1)
            for c in range(min(d, w - 1), max(0, d - h + 1) - 1, -1):
                cells.append((d - c, c))
    return cells


def _sign(v):
    return (v > 0) - (v < 0)


def _hilbert_walk(x, y, ax, ay, bx, by, out):
    """Generalised Hilbert walk from (x, y) along the major axis a and the minor axis b."""
    w, h = abs(ax + ay), abs(bx + by)
    dax, day = _sign(ax), _sign(ay)
    dbx, dby = _sign(bx), _sign(by)
    if h == 1:
        for k in range(w):
            out.append((x + k * dax, y + k * day))
        return
    if w == 1:
        for k in range(h):
            out.append((x + k * dbx, y + k * dby))
        return
    ax2, ay2 = ax // 2, ay // 2
    bx2, by2 = bx // 2, by // 2
    if 2 * w > 3 * h:
        if abs(ax2 + ay2) % 2 and w > 2:
            ax2, ay2 = ax2 + dax, ay2 + day
        _hilbert_walk(x, y, ax2, ay2, bx, by, out)
        _hilbert_walk(x + ax2, y + ay2, ax - ax2, ay - ay2, bx, by, out)
    else:
        if abs(bx2 + by2) % 2 and h > 2:
            bx2, by2 = bx2 + dbx, by2 + dby
        _hilbert_walk(x, y, bx2, by2, ax2, ay2, out)
        _hilbert_walk(x + bx2, y + by2, ax, ay, bx - bx2, by - by2, out)
        _hilbert_walk(x + (ax - dax) + (bx2 - dbx), y + (ay - day) + (by2 - dby),
                      -bx2, -by2, -(ax - ax2), -(ay - ay2), out)


def _hilbert(h, w):
    out = []
    if w >= h:
        _hilbert_walk(0, 0, w, 0, 0, h, out)
    else:
        _hilbert_walk(0, 0, 0, h, w, 0, out)
    return [(y, x) for x, y in out]  # the walk emits (x = col, y = row)


_CURVES = {"snake": _snake, "hilbert": _hilbert, "morton": _morton, "zigzag": _zigzag}


@functools.lru_cache(maxsize=256)
def _order_cached(h, w, kind):
    transpose = kind.endswith("_T")
    base = kind.removesuffix("_T")
    base = "morton" if base == "peano" else base
    if transpose:
        cells = [(c, r) for r, c in _CURVES[base](w, h)]
    else:
        cells = _CURVES[base](h, w)
    order = np.asarray(cells, dtype=np.int64).reshape(h * w, 2)
    order.setflags(write=False)
    return order


def space_filling_curve_order(h, w, kind):
    """Cells of an ``h x w`` grid in the order a space-filling curve visits them.

    Curves: ``"snake"`` (even rows left to right, odd rows right to left), ``"hilbert"`` (the
    generalised Hilbert curve of rectangles, starting at ``(0, 0)`` and moving by unit steps,
    except one diagonal step when the longer side is odd and the shorter even), ``"morton"``
    (alias ``"peano"``: cells sorted by interleaving the bits of column and row), ``"zigzag"``
    (anti-diagonals, alternating direction) and ``"<curve>_T"``: the curve run on the
    ``w x h`` grid with rows and columns swapped back.

    Parameters
    ----------
    h : int
        Number of grid rows, >= 1.
    w : int
        Number of grid columns, >= 1.
    kind : str
        Curve name: ``"snake"``, ``"hilbert"``, ``"morton"`` (alias ``"peano"``) or
        ``"zigzag"``, or one of them with ``"_T"`` appended (the transposed curve).

    Returns
    -------
    order : ndarray of shape (h * w, 2), dtype int64
        ``order[t] = (row, col)`` of the cell visited at step ``t``.

    Raises
    ------
    ValueError
        If ``h`` or ``w`` is not a positive integer or ``kind`` is unknown (the message lists
        the allowed names).

    References
    ----------
    .. [1] Candogan et al. "Spatial Priors via Space Filling Curves for Small and Limited Data
       Vision Transformers", ICML 2026, arXiv:2606.14757.

    Examples
    --------
    >>> from sklearn_icml26.vision import space_filling_curve_order
    >>> space_filling_curve_order(2, 3, "snake").tolist()
    [[0, 0], [0, 1], [0, 2], [1, 2], [1, 1], [1, 0]]
    """
    h, w = _check_grid(h, w)
    return _order_cached(h, w, _check_curve_name(kind)).copy()


def curve_positions(h, w, kind):
    """Step at which a space-filling curve visits each cell, in raster order.

    Parameters
    ----------
    h : int
        Number of grid rows, >= 1.
    w : int
        Number of grid columns, >= 1.
    kind : str
        Curve name: ``"snake"``, ``"hilbert"``, ``"morton"`` (alias ``"peano"``) or
        ``"zigzag"``, or one of them with ``"_T"`` appended (the transposed curve).

    Returns
    -------
    positions : ndarray of shape (h * w,), dtype int64
        ``positions[r * w + c]`` is the step of cell ``(r, c)``; a permutation of
        ``0 .. h * w - 1``.

    Raises
    ------
    ValueError
        If the grid size is invalid or ``kind`` is unknown.

    Examples
    --------
    >>> from sklearn_icml26.vision import curve_positions
    >>> curve_positions(2, 3, "snake").reshape(2, 3).tolist()
    [[0, 1, 2], [5, 4, 3]]
    """
    order = space_filling_curve_order(h, w, kind)
    pos = np.empty(h * w, dtype=np.int64)
    pos[order[:, 0] * w + order[:, 1]] = np.arange(h * w)
    return pos


def _check_curves(curves, name="curves"):
    if isinstance(curves, str):
        curves = (curves,)
    try:
        curves = tuple(curves)
    except TypeError as exc:
        raise ValueError(f"{name} must be a tuple of curve names; got {curves!r}.") from exc
    for kind in curves:
        _check_curve_name(kind)
    return curves


def _distance_tensor(h, w, curves):
    """E[c, i, j] = |pos_c(i) - pos_c(j)|, shape (C, N, N), float64."""
    pos = np.stack([curve_positions(h, w, k) for k in curves]) if curves else np.zeros(
        (0, h * w), dtype=np.int64)
    return np.abs(pos[:, :, None] - pos[:, None, :]).astype(np.float64)


def violin_mask(h, w, decay, curves=DEFAULT_CURVES, cls_token=False):
    """The VIOLIN mask ``M[i, j] = (1/C) sum_c gamma_c^|pos_c(i) - pos_c(j)|`` of one head.

    Parameters
    ----------
    h : int
        Number of grid rows, >= 1.
    w : int
        Number of grid columns, >= 1.
    decay : float or array-like of shape (n_curves,)
        Decay ``gamma`` per curve (one value for all curves), each in (0, 1]; ``1`` gives
        the all-ones mask.
    curves : tuple of str, default=DEFAULT_CURVES
        Curve names (non-empty; see :func:`space_filling_curve_order`); equal weights. The
        default is the paper's eight: the four curves and their transposes.
    cls_token : bool, default=False
        Prepend a class token whose row and column are 1.

    Returns
    -------
    mask : ndarray of shape (N', N')
        ``N' = h * w`` (``+ 1`` with ``cls_token``); symmetric, unit diagonal, values in
        (0, 1].

    Raises
    ------
    ValueError
        If ``curves`` is empty or holds an unknown name, or ``decay`` is outside (0, 1] or
        has the wrong length.

    References
    ----------
    .. [1] Candogan et al. "Spatial Priors via Space Filling Curves for Small and Limited Data
       Vision Transformers", ICML 2026, arXiv:2606.14757.

    Examples
    --------
    >>> from sklearn_icml26.vision import violin_mask
    >>> M = violin_mask(8, 8, 0.999)
    >>> M.shape, bool(M.min() > 0.9)
    ((64, 64), True)
    """
    h, w = _check_grid(h, w)
    curves = _check_curves(curves)
    if not curves:
        raise ValueError("curves must be a non-empty tuple of curve names; got ().")
    gamma = np.broadcast_to(np.asarray(decay, dtype=np.float64), (len(curves),)) if np.ndim(
        decay) == 0 else np.asarray(decay, dtype=np.float64)
    if gamma.shape != (len(curves),):
        raise ValueError(f"decay must be a float or have one value per curve "
                         f"({len(curves)}); got shape {gamma.shape}.")
    if not np.all((gamma > 0) & (gamma <= 1)):
        raise ValueError(f"decay must lie in (0, 1]; got {gamma.tolist()}.")
    E = _distance_tensor(h, w, curves)
    M = np.exp(E * np.log(gamma)[:, None, None]).mean(axis=0)
    if cls_token:
        M = np.pad(M, ((1, 0), (1, 0)), constant_values=1.0)
    return M


# ---------------------------------------------------------------------------------------------
# torch modules
# ---------------------------------------------------------------------------------------------
def _trunc_normal_(tensor, std=0.02):
    return nn.init.trunc_normal_(tensor, std=std, a=-2 * std, b=2 * std)


class ViolinAttention(nn.Module):
    """Multi-head self-attention whose logits are multiplied by a VIOLIN mask.

    ``A^(h) = softmax_row(s_h M^(h) * Q_h K_h^T / sqrt(d_head))`` and the output is
    ``concat_h(A^(h) V_h) W_O``, with ``M^(h)[i, j] = (1/C) sum_c sigmoid(a_{c,h})^E_c[i, j]``
    and ``E_c[i, j] = |pos_c(i) - pos_c(j)|`` the distance of patches ``i`` and ``j`` along
    curve ``c`` (a precomputed buffer). ``gamma^E`` is computed as ``exp(E logsigmoid(a))``.
    The layer names follow the common ViT layout (``qkv``, ``proj``), so the weights of a
    pretrained attention layer can be copied in with :meth:`from_attention`.

    Parameters
    ----------
    dim : int
        Token width; divisible by ``num_heads``.
    num_heads : int
        Number of heads ``H``.
    grid_shape : tuple of int
        ``(gh, gw)``: the patch grid, ``N = gh * gw`` patch tokens in raster order; positive
        integers.
    curves : tuple of str, default=DEFAULT_CURVES
        Curves of the mask, the paper's eight by default (non-empty with ``mask="learned"``
        or ``"fixed"``).
    mask : {"learned", "fixed", "ones"} or None, default="learned"
        ``"learned"``: one decay per (curve, head) and one scale per head are trained;
        ``"fixed"``: decay ``0.996`` for every curve, learned scales; ``"ones"``: ``M = 1`` with
        learned scales (the scale-only control); ``None``: plain attention.
    decay_init : tuple of float, default=(5.0, 9.0)
        The decay logits ``a`` start uniform on this interval (``gamma`` in [0.9933, 0.99988]).
    scale_init : {"normal", "ones"}, default="normal"
        ``s_h ~ N(0, scale_init_std^2)`` or ``s_h = 1`` (keeps pretrained attention intact).
    scale_init_std : float, default=0.5
        Standard deviation of ``"normal"`` (>= 0).
    cls_token : bool or int, default=False
        Number of prefix tokens (a class token, ``True`` = 1) before the patch tokens; their
        rows and columns of the mask are 1.
    qkv_bias : bool, default=True
        Bias of the ``qkv`` projection.
    proj_bias : bool, default=True
        Bias of the output projection ``proj``.

    Attributes
    ----------
    qkv : torch.nn.Linear
        Fused query, key and value projection, ``dim -> 3 dim``.
    proj : torch.nn.Linear
        Output projection ``W_O``.
    decay_logits : torch.nn.Parameter of shape (n_curves, num_heads) or None
        ``a`` (``"learned"`` only).
    attention_scale : torch.nn.Parameter of shape (num_heads,) or None
        ``s`` (``None`` when ``mask=None``).
    distances : torch.Tensor of shape (n_curves, N, N)
        Buffer ``E``.

    Raises
    ------
    ValueError
        If ``dim`` is not divisible by ``num_heads``, ``grid_shape`` is not a pair of positive
        integers, or ``mask``, ``curves`` or ``scale_init`` is invalid.

    References
    ----------
    .. [1] Candogan et al. "Spatial Priors via Space Filling Curves for Small and Limited Data
       Vision Transformers", ICML 2026, arXiv:2606.14757.

    Examples
    --------
    >>> import torch
    >>> from sklearn_icml26.vision import ViolinAttention
    >>> attn = ViolinAttention(16, 2, (4, 4))
    >>> attn(torch.zeros(3, 16, 16)).shape
    torch.Size([3, 16, 16])
    >>> attn.mask_matrix().shape
    torch.Size([2, 16, 16])
    """

    def __init__(self, dim, num_heads, grid_shape, *, curves=DEFAULT_CURVES, mask="learned",
                 decay_init=(5.0, 9.0), scale_init="normal", scale_init_std=0.5,
                 cls_token=False, qkv_bias=True, proj_bias=True):
        super().__init__()
        _check_module_args(dim, num_heads, mask, curves, scale_init)
        gh, gw = _as_pair(grid_shape, "grid_shape", scalar=False)
        self.dim, self.num_heads = int(dim), int(num_heads)
        self.head_dim = self.dim // self.num_heads
        self.grid_shape = (gh, gw)
        self.mask = mask
        self.curves = _check_curves(curves) if mask in ("learned", "fixed") else ()
        self.n_prefix = int(cls_token)
        self.qkv = nn.Linear(self.dim, 3 * self.dim, bias=qkv_bias)
        self.proj = nn.Linear(self.dim, self.dim, bias=proj_bias)
        self.register_buffer("distances", torch.as_tensor(
            _distance_tensor(gh, gw, self.curves), dtype=torch.get_default_dtype()))
        lo, hi = (float(v) for v in decay_init)
        if mask == "learned":
            self.decay_logits = nn.Parameter(
                torch.empty(len(self.curves), self.num_heads).uniform_(lo, hi))
        else:
            self.register_parameter("decay_logits", None)
        if mask is None:
            self.register_parameter("attention_scale", None)
        elif scale_init == "ones":
            self.attention_scale = nn.Parameter(torch.ones(self.num_heads))
        else:
            self.attention_scale = nn.Parameter(
                torch.randn(self.num_heads) * float(scale_init_std))

    @classmethod
    def from_attention(cls, attention, grid_shape, **kwargs):
        """A VIOLIN layer carrying the weights of an existing attention layer.

        ``attention`` must have the common ViT layout: a fused ``qkv`` linear layer
        (``dim -> 3 dim``, queries, keys then values, heads contiguous), an output ``proj``
        and ``num_heads`` (timm's ``Attention`` has it). Its query/key normalisation and
        attention dropout, if any, must be identities.

        Parameters
        ----------
        attention : torch.nn.Module
            The layer to replace.
        grid_shape : tuple of int
            ``(gh, gw)`` patch grid.
        **kwargs
            Other arguments of :class:`ViolinAttention` (``cls_token``, ``mask``,
            ``scale_init``, ...); ``qkv_bias`` and ``proj_bias`` follow ``attention``.

        Returns
        -------
        layer : ViolinAttention
            New layer on the device and dtype of ``attention``.

        Raises
        ------
        ValueError
            If ``attention`` lacks ``qkv``, ``proj`` or ``num_heads``, its width is not
            divisible by its ``num_heads``, or ``grid_shape`` is not a pair of positive
            integers.
        """
        missing = [n for n in ("qkv", "proj", "num_heads") if not hasattr(attention, n)]
        if missing:
            raise ValueError(f"attention must have qkv, proj and num_heads (timm's layout); "
                             f"{type(attention).__name__} lacks {missing}.")
        dim, num_heads = attention.qkv.in_features, int(attention.num_heads)
        if num_heads < 1 or dim % num_heads:
            raise ValueError(f"attention.qkv.in_features={dim} must be divisible by "
                             f"attention.num_heads={num_heads}.")
        layer = cls(dim, num_heads, grid_shape, qkv_bias=attention.qkv.bias is not None,
                    proj_bias=attention.proj.bias is not None, **kwargs)
        ref = attention.qkv.weight
        layer = layer.to(device=ref.device, dtype=ref.dtype)
        with torch.no_grad():
            layer.qkv.weight.copy_(attention.qkv.weight)
            if attention.qkv.bias is not None:
                layer.qkv.bias.copy_(attention.qkv.bias)
            layer.proj.weight.copy_(attention.proj.weight)
            if attention.proj.bias is not None:
                layer.proj.bias.copy_(attention.proj.bias)
        return layer

    def mask_matrix(self):
        """The multiplicative mask ``M^(h)`` of every head, prefix tokens included.

        Returns
        -------
        mask : torch.Tensor of shape (num_heads, N', N')
            ``N' = N + n_prefix``; all ones for ``mask="ones"`` or ``None``.
        """
        n = self.grid_shape[0] * self.grid_shape[1]
        ref = self.qkv.weight
        if self.mask == "learned":
            log_gamma = F.logsigmoid(self.decay_logits)  # (C, H)
            M = torch.exp(self.distances[:, None] * log_gamma[:, :, None, None]).mean(dim=0)
        elif self.mask == "fixed":
            M = torch.exp(self.distances * math.log(_FIXED_DECAY)).mean(dim=0)
            M = M.to(ref.dtype).expand(self.num_heads, n, n)
        else:
            M = torch.ones(self.num_heads, n, n, dtype=ref.dtype, device=ref.device)
        if self.n_prefix:
            M = F.pad(M, (self.n_prefix, 0, self.n_prefix, 0), value=1.0)
        return M

    def forward(self, x, attn_mask=None):
        """Attend.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, N', dim)
            Tokens: ``n_prefix`` prefix tokens then the ``N`` patch tokens in raster order.
        attn_mask : None
            Accepted for signature compatibility with timm's blocks; must be ``None``.

        Returns
        -------
        out : torch.Tensor of shape (batch, N', dim)
            Attention output.
        """
        if attn_mask is not None:
            raise ValueError("ViolinAttention does not take an additive attn_mask.")
        b, t, d = x.shape
        n_expected = self.grid_shape[0] * self.grid_shape[1] + self.n_prefix
        if t != n_expected:
            raise ValueError(f"x has {t} tokens, but grid_shape={self.grid_shape} with "
                             f"{self.n_prefix} prefix token(s) implies {n_expected}.")
        q, k, v = self.qkv(x).view(b, t, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        scale = self.head_dim ** -0.5
        if self.mask is None:
            # plain attention: torch's fused kernel (same softmax(q k^T / sqrt(d_head)) v)
            out = F.scaled_dot_product_attention(q, k, v)
        elif self.mask == "ones":
            # M = 1: s_h / sqrt(d_head) scales the logits of head h, i.e. the queries
            q = q * (self.attention_scale * scale)[:, None, None]
            out = F.scaled_dot_product_attention(q, k, v, scale=1.0)
        else:
            # one pass over the logits: (s_h M^(h) / sqrt(d_head)) is folded before multiplying
            factor = self.mask_matrix() * (self.attention_scale * scale)[:, None, None]
            att = torch.softmax((q @ k.transpose(-2, -1)) * factor, dim=-1)
            out = att @ v
        return self.proj(out.transpose(1, 2).reshape(b, t, d))

    def extra_repr(self):
        return (f"dim={self.dim}, num_heads={self.num_heads}, grid_shape={self.grid_shape}, "
                f"mask={self.mask!r}, n_curves={len(self.curves)}, n_prefix={self.n_prefix}")


def _check_module_args(dim, num_heads, mask, curves, scale_init):
    for name, value in (("dim", dim), ("num_heads", num_heads)):
        if not isinstance(value, Integral | np.integer) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive integer; got {value!r}.")
    if dim % num_heads:
        raise ValueError(f"dim={dim} must be divisible by num_heads={num_heads}.")
    if mask not in (*_MASKS, None):
        raise ValueError(f"mask must be one of {list(_MASKS)} or None; got {mask!r}.")
    if mask in ("learned", "fixed") and len(_check_curves(curves)) == 0:
        raise ValueError(f"curves must be a non-empty tuple when mask={mask!r}; got "
                         f"{tuple(curves)!r}.")
    if scale_init not in ("normal", "ones"):
        raise ValueError(f"scale_init must be 'normal' or 'ones'; got {scale_init!r}.")


class _MLP(nn.Module):
    def __init__(self, dim, hidden, dropout):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return self.drop(self.fc2(self.drop(self.act(self.fc1(x)))))


class _Block(nn.Module):
    """Pre-LN block: x + attn(LN(x)), then x + MLP(LN(x))."""

    def __init__(self, dim, heads, mlp_ratio, dropout, attn_kwargs):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = ViolinAttention(dim, heads, **attn_kwargs)
        self.drop = nn.Dropout(dropout)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = _MLP(dim, max(1, int(round(dim * mlp_ratio))), dropout)

    def forward(self, x):
        x = x + self.drop(self.attn(self.norm1(x)))
        return x + self.mlp(self.norm2(x))


class _ViolinViT(nn.Module):
    """Patch embedding + learned positions -> pre-LN blocks -> LN -> pooling -> linear head.

    ``x`` arrives as ``(batch, h * w * ch)`` C-order rows of ``(h, w, ch)`` images, already
    standardised.
    """

    def __init__(self, image_shape, patch, embed_dim, depth, num_heads, mlp_ratio, n_classes,
                 pool, mask, curves, decay_init, scale_init, scale_init_std, pos_embedding,
                 dropout):
        super().__init__()
        h, w, ch = image_shape
        ph, pw = patch
        self.image_shape, self.patch = (h, w, ch), (ph, pw)
        self.grid = (h // ph, w // pw)
        n = self.grid[0] * self.grid[1]
        self.pool = pool
        self.patch_embed = nn.Linear(ph * pw * ch, embed_dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim)) if pool == "cls" else None
        n_prefix = 1 if pool == "cls" else 0
        self.pos_embed = (nn.Parameter(torch.zeros(1, n + n_prefix, embed_dim))
                          if pos_embedding else None)
        self.drop = nn.Dropout(dropout)
        attn_kwargs = dict(grid_shape=self.grid, curves=curves, mask=mask, decay_init=decay_init,
                           scale_init=scale_init, scale_init_std=scale_init_std,
                           cls_token=n_prefix)
        self.blocks = nn.ModuleList([_Block(embed_dim, num_heads, mlp_ratio, dropout, attn_kwargs)
                                     for _ in range(depth)])
        self.norm = nn.LayerNorm(embed_dim)
        self.head = nn.Linear(embed_dim, n_classes)
        for module in self.modules():
            if isinstance(module, nn.Linear):
                _trunc_normal_(module.weight)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
        for param in (self.pos_embed, self.cls_token):
            if param is not None:
                _trunc_normal_(param)

    def tokens(self, x):
        h, w, ch = self.image_shape
        ph, pw = self.patch
        gh, gw = self.grid
        b = x.shape[0]
        x = x.reshape(b, gh, ph, gw, pw, ch).permute(0, 1, 3, 2, 4, 5).reshape(
            b, gh * gw, ph * pw * ch)
        t = self.patch_embed(x)
        if self.cls_token is not None:
            t = torch.cat([self.cls_token.expand(b, -1, -1), t], dim=1)
        if self.pos_embed is not None:
            t = t + self.pos_embed
        return self.drop(t)

    def features(self, x):
        t = self.tokens(x)
        for block in self.blocks:
            t = block(t)
        t = self.norm(t)
        return t[:, 0] if self.pool == "cls" else t.mean(dim=1)

    def forward(self, x):
        return self.head(self.features(x))


def _extra_parameters(depth, num_heads, n_curves, mask):
    """Parameters a mask adds to a plain ViT: decays per (curve, head) and scales per head."""
    if mask is None:
        return 0
    per_layer = num_heads * (n_curves + 1) if mask == "learned" else num_heads
    return depth * per_layer


# ---------------------------------------------------------------------------------------------
# estimator
# ---------------------------------------------------------------------------------------------
def _is_positive_integer(value):
    """True for an integer >= 1 (an integral float such as 2.0 included; bools excluded)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, Real):
        return False
    return math.isfinite(value) and value >= 1 and int(value) == value


def _as_pair(value, name, *, lengths=(2,), expected=None, scalar=True):
    """``value`` as a tuple of positive ints: the one check of every shape argument.

    ``patch_size`` (a scalar ``k`` means ``(k, k)``), ``image_shape`` (``lengths=(2, 3)``) and
    ``grid_shape`` (``scalar=False``) go through it; anything else (a non-integer such as
    ``2.5``, a value below 1, the wrong length, not a sequence) raises a ValueError naming
    ``name``, what was expected and what arrived.
    """
    if expected is None:
        expected = ("a positive integer or a pair of positive integers (h, w)" if scalar
                    else "a pair of positive integers (h, w)")
    if scalar and _is_positive_integer(value):
        return (int(value), int(value))
    try:
        items = tuple(value)
    except TypeError:
        items = None
    if (items is None or len(items) not in lengths
            or not all(_is_positive_integer(v) for v in items)):
        raise ValueError(f"{name} must be {expected}; got {value!r}.")
    return tuple(int(v) for v in items)


def _pixel_statistics(X, sample_weight):
    """Weighted mean and standard deviation of all pixels, without overflow for finite X.

    ``X`` is divided by the power of two ``m`` just below ``max |X|`` (exact for normal
    floats, so ordinary inputs give bit for bit the unscaled result), the statistics are
    computed on ``X / m`` (values in (-2, 2)) and multiplied back by ``m``. The scale is 1 for
    constant pixels.
    """
    m = float(_pow2_scale(X, axis=None)) if X.size else 1.0
    Xm = X / m
    wsum = sample_weight.sum()
    mean = float((sample_weight @ Xm.mean(axis=1)) / wsum)
    var = float((sample_weight @ ((Xm - mean) ** 2).mean(axis=1)) / wsum)
    scale = math.sqrt(var) * m if var > 0 else 1.0
    return mean * m, scale if math.isfinite(scale) and scale > 0 else 1.0


def _resolve_image_shape(image_shape, n_features):
    """(h, w, ch) of the images whose C-order flattening has ``n_features`` entries."""
    if image_shape is None:
        side = math.isqrt(n_features)
        if side * side == n_features:
            return (side, side, 1)
        warnings.warn(
            f"image_shape=None and X has {n_features} features, which is not a perfect square: "
            f"each sample is read as a 1 x {n_features} strip of pixels. Pass the image shape, "
            f"e.g. image_shape=(32, 32, 3) for 32 x 32 RGB images.", UserWarning,
            stacklevel=_external_stacklevel())  # the user's line, not ours or sklearn's
        return (1, n_features, 1)
    shape = _as_pair(image_shape, "image_shape", lengths=(2, 3), scalar=False,
                     expected="(h, w) or (h, w, ch) of positive integers")
    if len(shape) == 2:
        shape = (*shape, 1)
    if math.prod(shape) != n_features:
        raise ValueError(f"image_shape={shape} implies {math.prod(shape)} features per sample, "
                         f"but X has {n_features} features.")
    return shape


@Substitution(**_torch_docstrings)
class ViolinViTClassifier(TorchEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Small vision transformer classifier with VIOLIN space-filling-curve attention masks.

    Rows of ``X`` are C-order flattenings of ``(h, w, ch)`` images. They are standardised
    with one mean and one standard deviation over all training pixels, cut into
    ``patch_size`` patches (``patch_size=1``: one token per pixel), embedded linearly with a
    learned position embedding, and passed through ``depth`` pre-LN transformer blocks whose
    attention logits are multiplied by ``s_h M^(h)`` (see :class:`ViolinAttention`); a final
    LayerNorm, mean pooling over the tokens and a linear head give the class logits [1]_.
    ``mask=None`` is the same network without mask or scale: the plain ViT anchor;
    ``mask="ones"`` keeps the learned scale ``s_h`` only (the scale-only control).

    Parameters
    ----------
    image_shape : tuple of int or None, default=None
        ``(h, w)`` or ``(h, w, ch)``; ``h * w * ch`` must equal the number of features.
        ``None``: a square one-channel image when the number of features is a perfect square,
        else a ``1 x n_features`` strip (with a UserWarning).
    patch_size : int or tuple of int, default=1
        Patch height and width in pixels; must divide the image.
    d_model : int, default=32
        Token width; divisible by ``n_heads``.
    depth : int, default=2
        Number of transformer blocks.
    n_heads : int, default=4
        Attention heads per block.
    mlp_ratio : float, default=2.0
        Hidden width of the feed-forward layers relative to ``d_model``.
    pool : {"mean", "cls"}, default="mean"
        Mean over the patch tokens or a learned class token (its mask row and column are 1).
    mask : {"learned", "fixed", "ones"} or None, default="learned"
        ``"learned"``: decays per (curve, head) and scales per head are trained;
        ``"fixed"``: every decay is 0.996; ``"ones"``: scale only; ``None``: plain ViT.
    curves : tuple of str, default=DEFAULT_CURVES
        Space-filling curves of the mask (names as in :func:`space_filling_curve_order`);
        equal weights. The default is the paper's eight: the four curves and their transposes.
    decay_init : tuple of float, default=(5.0, 9.0)
        Interval of the uniform initialisation of the decay logits ``a``
        (``gamma = sigmoid(a)``).
    scale_init : {"normal", "ones"}, default="normal"
        ``s_h ~ N(0, scale_init_std^2)`` (the authors' initialisation) or ``s_h = 1``.
    scale_init_std : float, default=0.5
        Standard deviation of ``scale_init="normal"``.
    pos_embedding : bool, default=True
        Learned position embedding (trunc-normal, std 0.02).
    dropout : float, default=0.0
        Dropout after the embedding, in the feed-forward layers and after attention.
    max_epochs : int, default=100
        {max_epochs}
    batch_size : int, default=64
        {batch_size}
    lr : float, default=1e-3
        {lr}
    weight_decay : float, default=0.05
        {weight_decay}
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
    verbose : int, default=0
        {verbose}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_features_in_ : int
        Number of input features ``h * w * ch``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Input column names, when ``X`` had string column names.
    image_shape_ : tuple of int
        ``(h, w, ch)``.
    grid_shape_ : tuple of int
        Patch grid ``(gh, gw)``.
    n_tokens_ : int
        ``gh * gw`` patch tokens.
    curve_positions_ : ndarray of shape (n_curves, n_tokens_)
        ``pos_c`` of every curve on the patch grid (zero rows for ``mask="ones"`` or None).
    decay_rates_ : ndarray of shape (depth, n_curves, n_heads) or None
        Trained ``gamma = sigmoid(a)``; 0.996 everywhere for ``mask="fixed"``; None otherwise.
    attention_scales_ : ndarray of shape (depth, n_heads) or None
        Trained ``s_h``; None for ``mask=None``.
    n_extra_parameters_ : int
        Parameters the mask adds to the plain ViT: ``depth * n_heads * (n_curves + 1)`` for
        ``"learned"``.
    mean_ : float
        Mean of the training pixels (weighted by ``sample_weight``).
    scale_ : float
        Their standard deviation (1 when constant).
    net_ : skorch.NeuralNet
        {net_}
    n_iter_ : int
        {n_iter_}
    loss_curve_ : list of float
        {loss_curve_}

    See Also
    --------
    ViolinAttention : The attention layer, usable in other vision transformers.
    violin_mask : The mask in numpy.

    Notes
    -----
    The architecture is a small version of the authors' DeiT variant; weights and position
    embedding are trunc-normal (std 0.02), biases zero. The plain ViT (``mask=None``) and the
    scale-only control (``s_h / sqrt(d_head)`` folded into the queries) run torch's fused
    :func:`torch.nn.functional.scaled_dot_product_attention`; a VIOLIN mask multiplies the
    logits, so those blocks form the ``(batch, H, N, N)`` logits explicitly, and one training
    step costs more than a plain ViT's by the mask (``C H N^2`` exponentials per block), one
    elementwise product of the logits and its gradient. Mini-batches are cut from whole
    tensors (one index per batch), not collated sample by sample.

    References
    ----------
    .. [1] Candogan et al. "Spatial Priors via Space Filling Curves for Small and Limited Data
       Vision Transformers", ICML 2026, arXiv:2606.14757.

    Examples
    --------
    >>> from sklearn_icml26.vision import ViolinViTClassifier
    >>> from sklearn_icml26.datasets import make_bar_images
    >>> X, y = make_bar_images(40, random_state=0)
    >>> clf = ViolinViTClassifier(d_model=16, depth=1, n_heads=2, max_epochs=1,
    ...                           random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape, clf.decay_rates_.shape
    ((2, 4), (1, 8, 2))
    """

    _parameter_constraints = {
        **TorchEstimatorMixin._torch_parameter_constraints,
        "image_shape": ["array-like", None],
        "patch_size": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "d_model": [Interval(Integral, 1, None, closed="left")],
        "depth": [Interval(Integral, 1, None, closed="left")],
        "n_heads": [Interval(Integral, 1, None, closed="left")],
        "mlp_ratio": [Interval(Real, 0, None, closed="neither")],
        "pool": [StrOptions({"mean", "cls"})],
        "mask": [StrOptions(set(_MASKS)), None],
        "curves": ["array-like", str],
        "decay_init": ["array-like"],
        "scale_init": [StrOptions({"normal", "ones"})],
        "scale_init_std": [Interval(Real, 0, None, closed="left")],
        "pos_embedding": ["boolean"],
        "dropout": [Interval(Real, 0, 1, closed="left")],
        "weight_decay": TorchEstimatorMixin._early_stopping_constraints["weight_decay"],
    }

    def __init__(self, image_shape=None, patch_size=1, d_model=32, depth=2, n_heads=4,
                 mlp_ratio=2.0, pool="mean", mask="learned", curves=DEFAULT_CURVES,
                 decay_init=(5.0, 9.0), scale_init="normal", scale_init_std=0.5,
                 pos_embedding=True, dropout=0.0, max_epochs=100, batch_size=64, lr=1e-3,
                 weight_decay=0.05, optimizer="adamw", optimizer_params=None,
                 precision="float32", device="cpu", random_state=None, verbose=0):
        self.image_shape = image_shape
        self.patch_size = patch_size
        self.d_model = d_model
        self.depth = depth
        self.n_heads = n_heads
        self.mlp_ratio = mlp_ratio
        self.pool = pool
        self.mask = mask
        self.curves = curves
        self.decay_init = decay_init
        self.scale_init = scale_init
        self.scale_init_std = scale_init_std
        self.pos_embedding = pos_embedding
        self.dropout = dropout
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.weight_decay = weight_decay
        self.optimizer = optimizer
        self.optimizer_params = optimizer_params
        self.precision = precision
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    # -- test settings --
    @classmethod
    def _get_test_params(cls):
        # 8 epochs at a large lr pass the common accuracy check in a third of the CPU time
        # of 20 epochs at 1e-2
        return [dict(d_model=16, depth=1, n_heads=2, max_epochs=8, batch_size=64,
                     lr=2e-2, precision="float64", random_state=0)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags

    # -- adapter hooks --
    # mini-batches by one index into whole tensors, not sample by sample
    _whole_batches = True

    def _build_module(self, n_features_in, n_outputs, context):
        return _ViolinViT(self.image_shape_, context.patch, self.d_model, self.depth,
                          self.n_heads, self.mlp_ratio, n_outputs, self.pool, self.mask,
                          context.curves, context.decay_init, self.scale_init,
                          self.scale_init_std, self.pos_embedding, self.dropout)

    def _build_criterion(self, context):
        return nn.CrossEntropyLoss(reduction="none")

    def _check_hyperparameters(self, n_features):
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} must be divisible by "
                             f"n_heads={self.n_heads}.")
        curves = _check_curves(self.curves)
        if self.mask in ("learned", "fixed") and not curves:
            raise ValueError(f"curves must be a non-empty tuple when mask={self.mask!r}; got "
                             f"{curves!r}.")
        try:
            lo, hi = (float(v) for v in self.decay_init)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"decay_init must be a pair (low, high) of floats; got "
                             f"{self.decay_init!r}.") from exc
        if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
            raise ValueError(f"decay_init must be a finite pair with low <= high; got "
                             f"{self.decay_init!r}.")
        shape = _resolve_image_shape(self.image_shape, n_features)
        patch = _as_pair(self.patch_size, "patch_size")
        if shape[0] % patch[0] or shape[1] % patch[1]:
            raise ValueError(f"patch_size={patch} does not divide image_shape "
                             f"{shape[:2]}.")
        return shape, patch, curves, (lo, hi)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Train the vision transformer with the cross-entropy loss.

        Parameters
        ----------
        X : array-like of shape (n_samples, h * w * ch)
            C-order flattened images, unscaled (standardised internally); finite.
        y : array-like of shape (n_samples,)
            Class labels; at least two classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative per-sample weights of the loss and of the pixel standardisation (a fit
            parameter with metadata routing: ``set_fit_request(sample_weight=True)``).

        Returns
        -------
        self : ViolinViTClassifier
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``image_shape`` or ``patch_size`` does not hold positive integers,
            ``image_shape`` does not match the number of features, ``patch_size`` does not
            divide the image, ``d_model`` is not divisible by ``n_heads``, ``curves`` is
            empty (or holds an unknown name) with a curve mask, ``X`` holds NaN or inf, or
            ``y`` holds a single class.

        Warns
        -----
        ConvergenceWarning
            If the training loss becomes non-finite (training stops and the last state that
            still gave a finite loss is restored) or ends a hundredfold or more above the
            first step's; lower ``lr``.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        shape, patch, curves, decay_init = self._check_hyperparameters(X.shape[1])
        encoder = LabelEncoder().fit(y)
        self.classes_ = encoder.classes_
        if len(self.classes_) < 2:
            raise ValueError(f"y must hold at least two classes to train a classifier; got one "
                             f"class, {self.classes_[0]!r}.")
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        self.image_shape_ = shape
        gh, gw = shape[0] // patch[0], shape[1] // patch[1]
        self.grid_shape_ = (gh, gw)
        self.n_tokens_ = gh * gw
        used = curves if self.mask in ("learned", "fixed") else ()
        self.curve_positions_ = (np.stack([curve_positions(gh, gw, k) for k in used]) if used
                                 else np.zeros((0, self.n_tokens_), dtype=np.int64))
        self.mean_, self.scale_ = _pixel_statistics(X, sw)
        codes = encoder.transform(y).astype(np.int64)
        self._fit_net(self._standardise(X), codes, sw, n_outputs=len(self.classes_),
                      context=FitContext(patch=patch, curves=curves, decay_init=decay_init))
        self._collect_mask_parameters()
        return self

    def _collect_mask_parameters(self):
        attns = [blk.attn for blk in self.net_.module_.blocks]
        C = len(attns[0].curves)
        if self.mask == "learned":
            self.decay_rates_ = np.stack([
                torch.sigmoid(a.decay_logits).detach().cpu().double().numpy() for a in attns])
        elif self.mask == "fixed":
            self.decay_rates_ = np.full((self.depth, C, self.n_heads), _FIXED_DECAY)
        else:
            self.decay_rates_ = None
        self.attention_scales_ = None if self.mask is None else np.stack(
            [a.attention_scale.detach().cpu().double().numpy() for a in attns])
        self.n_extra_parameters_ = _extra_parameters(self.depth, self.n_heads, C, self.mask)

    def _standardise(self, X):
        # on power-of-two pre-scaled values: X - mean cannot overflow, ordinary inputs give
        # (X - mean) / scale bit for bit
        return _standardize(X, self.mean_, self.scale_)

    def _validated(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._standardise(X)

    def decision_function(self, X):
        """Class logits.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Flattened images.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Logits, float64; for two classes the logit difference of class 1 over class 0.
        """
        logits = self._forward_numpy(self._validated(X))
        return logits[:, 1] - logits[:, 0] if logits.shape[1] == 2 else logits

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Flattened images.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Softmax of the logits, float64; rows sum to 1.
        """
        logits = self._forward_numpy(self._validated(X))
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)

    def predict(self, X):
        """Predict class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Flattened images.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The most probable class of each sample.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def embed(self, X):
        """Pooled image features before the head.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Flattened images.

        Returns
        -------
        features : ndarray of shape (n_samples, d_model)
            Output of the final LayerNorm, pooled over the tokens, float64.
        """
        Xs = self._as_input(self._validated(X))
        module = self.net_.module_
        module.eval()
        with torch.no_grad():
            out = module.features(torch.as_tensor(Xs, device=self.device))
        return out.detach().cpu().numpy().astype(np.float64)

    def n_parameters(self):
        """Number of trainable parameters of the fitted network.

        Returns
        -------
        n_parameters : int
            Sum of the sizes of the module's parameters.
        """
        check_is_fitted(self)
        return int(sum(p.numel() for p in self.net_.module_.parameters()))
