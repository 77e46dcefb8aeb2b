"""VIOLIN: curves, masks, the attention module and ViolinViTClassifier (known answers)."""

import math
import pickle
import re
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from scipy.special import expit
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from torch import nn

from sklearn_icml26.datasets import make_bar_images
from sklearn_icml26.vision import (
    ViolinAttention,
    ViolinViTClassifier,
    curve_positions,
    space_filling_curve_order,
    violin_mask,
)
from sklearn_icml26.vision._violin import CURVE_NAMES, DEFAULT_CURVES, _ViolinViT

torch.set_num_threads(1)

TINY = dict(d_model=8, depth=1, n_heads=2, max_epochs=2, batch_size=32, random_state=0)
GRIDS = [(h, w) for h in range(1, 13) for w in range(1, 13)]


# -- curves ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", CURVE_NAMES)
def test_every_curve_is_a_permutation_of_every_grid(kind):
    for h, w in GRIDS:
        order = space_filling_curve_order(h, w, kind)
        assert order.shape == (h * w, 2)
        assert np.all((order[:, 0] >= 0) & (order[:, 0] < h))
        assert np.all((order[:, 1] >= 0) & (order[:, 1] < w))
        raster = order[:, 0] * w + order[:, 1]
        np.testing.assert_array_equal(np.sort(raster), np.arange(h * w))
        pos = curve_positions(h, w, kind)
        np.testing.assert_array_equal(pos[raster], np.arange(h * w))


@pytest.mark.parametrize("kind", ["snake", "snake_T", "hilbert", "hilbert_T"])
def test_snake_and_hilbert_take_unit_steps(kind):
    for h, w in GRIDS:
        steps = np.abs(np.diff(space_filling_curve_order(h, w, kind), axis=0))
        unit = steps.sum(axis=1) == 1
        diagonal = np.all(steps == 1, axis=1)
        assert np.all(unit | diagonal), (h, w)
        long_side, short_side = max(h, w), min(h, w)
        if kind.startswith("snake") or not (long_side % 2 == 1 and short_side % 2 == 0):
            assert diagonal.sum() == 0, (kind, h, w)
        else:
            assert diagonal.sum() <= 1, (kind, h, w)


def test_hilbert_starts_at_origin_and_has_a_diagonal_on_odd_by_even():
    for h, w in GRIDS:
        assert space_filling_curve_order(h, w, "hilbert")[0].tolist() == [0, 0]
    steps = np.abs(np.diff(space_filling_curve_order(4, 5, "hilbert"), axis=0))
    assert np.all(steps == 1, axis=1).sum() == 1


TABLES = {
    "snake": [[0, 1, 2, 3], [7, 6, 5, 4], [8, 9, 10, 11], [15, 14, 13, 12]],
    "hilbert": [[0, 1, 14, 15], [3, 2, 13, 12], [4, 7, 8, 11], [5, 6, 9, 10]],
    "morton": [[0, 1, 4, 5], [2, 3, 6, 7], [8, 9, 12, 13], [10, 11, 14, 15]],
    "zigzag": [[0, 1, 5, 6], [2, 4, 7, 12], [3, 8, 11, 13], [9, 10, 14, 15]],
}


@pytest.mark.parametrize("kind", list(TABLES))
def test_known_position_tables_4x4(kind):
    table = np.array(TABLES[kind])
    np.testing.assert_array_equal(curve_positions(4, 4, kind).reshape(4, 4), table)
    np.testing.assert_array_equal(curve_positions(4, 4, kind + "_T").reshape(4, 4), table.T)


def test_transpose_alias_and_rectangles():
    assert curve_positions(4, 4, "snake_T").reshape(4, 4)[0].tolist() == [0, 7, 8, 15]
    np.testing.assert_array_equal(curve_positions(5, 3, "peano"), curve_positions(5, 3, "morton"))
    # a transposed curve on h x w is the curve on w x h read with rows and columns swapped
    for kind in ("snake", "hilbert", "morton", "zigzag"):
        np.testing.assert_array_equal(curve_positions(3, 5, kind + "_T").reshape(3, 5),
                                      curve_positions(5, 3, kind).reshape(5, 3).T)
    # Morton on a 2 x 4 grid: the key interleaves column bits (even) and row bits (odd)
    assert curve_positions(2, 4, "morton").reshape(2, 4).tolist() == [[0, 1, 4, 5],
                                                                       [2, 3, 6, 7]]


def test_unknown_curve_lists_allowed_names():
    with pytest.raises(ValueError, match=r"Unknown curve 'spiral'.*'hilbert'"):
        curve_positions(4, 4, "spiral")
    with pytest.raises(ValueError, match="h must be an integer >= 1"):
        curve_positions(0, 4, "snake")


# -- mask --------------------------------------------------------------------------------------
def _manhattan(h, w):
    r, c = np.divmod(np.arange(h * w), w)
    return np.abs(r[:, None] - r[None]) + np.abs(c[:, None] - c[None])


def test_mask_properties_and_published_ranges():
    for decay in (0.5, 0.9, [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]):
        M = violin_mask(5, 7, decay)
        np.testing.assert_allclose(M, M.T)
        np.testing.assert_allclose(np.diag(M), 1.0)
        assert M.min() > 0 and M.max() <= 1.0
    np.testing.assert_array_equal(violin_mask(4, 6, 1.0), np.ones((24, 24)))
    M = violin_mask(8, 8, expit(7.0))
    assert abs(M.min() - 0.950) < 1e-3 and M.max() == 1.0
    off = ~np.eye(64, dtype=bool)
    corr = np.corrcoef(M[off], -_manhattan(8, 8)[off])[0, 1]
    assert abs(corr - 0.825) < 0.005
    assert abs(violin_mask(8, 8, expit(5.0)).min() - 0.688) < 1e-3
    assert abs(violin_mask(8, 8, expit(2.0)).min() - 0.002) < 1e-3
    # one curve: exactly gamma^|pos_i - pos_j|
    pos = curve_positions(3, 4, "hilbert")
    np.testing.assert_allclose(violin_mask(3, 4, 0.7, curves=("hilbert",)),
                               0.7 ** np.abs(pos[:, None] - pos[None]))


def test_mask_cls_token_and_errors():
    M = violin_mask(3, 3, 0.8, cls_token=True)
    assert M.shape == (10, 10)
    np.testing.assert_array_equal(M[0], 1.0)
    np.testing.assert_array_equal(M[:, 0], 1.0)
    np.testing.assert_allclose(M[1:, 1:], violin_mask(3, 3, 0.8))
    with pytest.raises(ValueError, match="non-empty"):
        violin_mask(3, 3, 0.8, curves=())
    with pytest.raises(ValueError, match=r"decay must lie in \(0, 1\]"):
        violin_mask(3, 3, 1.5)
    with pytest.raises(ValueError, match="one value per curve"):
        violin_mask(3, 3, [0.5, 0.6])


# -- attention module --------------------------------------------------------------------------
def _reference_mha(attn, x):
    """Plain multi-head attention with the layer's weights (torch's fused kernel)."""
    b, t, d = x.shape
    q, k, v = F.linear(x, attn.qkv.weight, attn.qkv.bias).view(
        b, t, 3, attn.num_heads, d // attn.num_heads).permute(2, 0, 3, 1, 4)
    out = F.scaled_dot_product_attention(q, k, v)
    return F.linear(out.transpose(1, 2).reshape(b, t, d), attn.proj.weight, attn.proj.bias)


def _explicit_attention(attn, x):
    """softmax_row(s_h M^(h) * Q_h K_h^T / sqrt(d_head)) V_h, then W_O, in numpy (float64)."""
    b, t, d = x.shape
    H, hd = attn.num_heads, d // attn.num_heads
    qkv = x.numpy() @ attn.qkv.weight.detach().numpy().T + attn.qkv.bias.detach().numpy()
    q, k, v = qkv.reshape(b, t, 3, H, hd).transpose(2, 0, 3, 1, 4)
    logits = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)  # (b, H, t, t)
    if attn.mask is not None:
        s = attn.attention_scale.detach().numpy()
        if attn.mask == "learned":
            gamma = 1 / (1 + np.exp(-attn.decay_logits.detach().numpy()))  # (C, H)
            M = np.stack([violin_mask(*attn.grid_shape, gamma[:, h], curves=attn.curves)
                          for h in range(H)])
        else:
            M = np.ones((H, t, t))
        logits = logits * s[:, None, None] * M
    att = np.exp(logits - logits.max(axis=-1, keepdims=True))
    att /= att.sum(axis=-1, keepdims=True)
    out = (att @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
    return out @ attn.proj.weight.detach().numpy().T + attn.proj.bias.detach().numpy()


@pytest.mark.parametrize("mask", [None, "ones", "learned"])
def test_attention_matches_the_formula_with_random_scales(mask):
    """Every path (the fused kernel for None and "ones", explicit logits for "learned") against
    the formula in numpy, with scales of both signs and decays well below 1."""
    torch.manual_seed(0)
    x = torch.randn(3, 16, 16, dtype=torch.float64)
    attn = ViolinAttention(16, 4, (4, 4), mask=mask, decay_init=(-1.0, 2.0),
                           scale_init_std=2.0).double()
    if mask is not None:
        with torch.no_grad():
            attn.attention_scale.copy_(torch.tensor([2.5, -1.5, 0.3, 1.0]))
    np.testing.assert_allclose(attn(x).detach().numpy(), _explicit_attention(attn, x),
                               atol=1e-10)


def test_scale_only_with_unit_scale_and_no_mask_equal_plain_attention():
    torch.manual_seed(0)
    x = torch.randn(3, 17, 16, dtype=torch.float64)
    for mask in ("ones", None):
        attn = ViolinAttention(16, 4, (4, 4), mask=mask, scale_init="ones",
                               cls_token=True).double()
        np.testing.assert_allclose(attn(x).detach(), _reference_mha(attn, x).detach(),
                                   atol=1e-6)
    # a learned mask changes the output
    attn = ViolinAttention(16, 4, (4, 4), scale_init="ones", decay_init=(1.0, 1.0),
                           cls_token=True).double()
    assert (attn(x) - _reference_mha(attn, x)).abs().max() > 1e-3


def test_mask_matrix_matches_numpy_mask_per_head():
    torch.manual_seed(0)
    attn = ViolinAttention(12, 3, (3, 5), cls_token=True).double()
    gamma = torch.sigmoid(attn.decay_logits).detach().numpy()  # (C, H)
    M = attn.mask_matrix().detach().numpy()
    assert M.shape == (3, 16, 16)
    for h in range(3):
        np.testing.assert_allclose(M[h], violin_mask(3, 5, gamma[:, h], cls_token=True),
                                   rtol=1e-12)
    assert np.all((gamma > expit(5.0) - 1e-12) & (gamma < expit(9.0) + 1e-12))
    fixed = ViolinAttention(12, 3, (3, 5), mask="fixed").double().mask_matrix()
    np.testing.assert_allclose(fixed[1].detach().numpy(), violin_mask(3, 5, 0.996))


def test_masked_logits_are_scale_times_mask_times_logits():
    """softmax(s M * QK^T / sqrt(d)) recomputed by hand, one head at a time."""
    torch.manual_seed(1)
    attn = ViolinAttention(8, 2, (2, 3), decay_init=(0.0, 2.0)).double()
    x = torch.randn(2, 6, 8, dtype=torch.float64)
    q, k, v = attn.qkv(x).view(2, 6, 3, 2, 4).permute(2, 0, 3, 1, 4)
    M = attn.mask_matrix()
    s = attn.attention_scale
    heads = [torch.softmax(s[h] * M[h] * (q[:, h] @ k[:, h].transpose(-1, -2)) / 2.0, -1)
             @ v[:, h] for h in range(2)]
    expected = attn.proj(torch.stack(heads, 1).transpose(1, 2).reshape(2, 6, 8))
    np.testing.assert_allclose(attn(x).detach(), expected.detach(), atol=1e-12)


def _vit(mask, depth=2, heads=4, curves=DEFAULT_CURVES, image=(8, 8, 1), dim=32):
    return _ViolinViT(image, (1, 1), dim, depth, heads, 2.0, 10, "mean", mask, curves,
                      (5.0, 9.0), "normal", 0.5, True, 0.0)


def _n_params(module):
    return sum(p.numel() for p in module.parameters())


def test_extra_parameters_are_depth_heads_curves_plus_one():
    torch.manual_seed(0)
    base = _n_params(_vit(None))
    assert _n_params(_vit("learned")) - base == 2 * 4 * (8 + 1)
    assert _n_params(_vit("learned", curves=("snake", "hilbert"))) - base == 2 * 4 * 3
    assert _n_params(_vit("ones")) - base == 2 * 4
    assert _n_params(_vit("fixed")) - base == 2 * 4


def _closed_form_params(image, patch, dim, depth, mlp_ratio, n_classes, pool):
    """Parameter count of the plain ViT, written out layer by layer."""
    (h, w, ch), p = image, patch
    n = (h // p) * (w // p) + (pool == "cls")
    hidden = int(round(dim * mlp_ratio))
    block = 4 * dim + (3 * dim * dim + 3 * dim) + (dim * dim + dim) + (
        dim * hidden + hidden + hidden * dim + dim)
    return (p * p * ch * dim + dim + n * dim + dim * (pool == "cls") + depth * block + 2 * dim
            + dim * n_classes + n_classes)


def test_extra_parameter_share_at_deit_base_size():
    """DeiT-B (224 px, 16 px patches, width 768, 12 blocks, 12 heads): < 0.0015 % extra."""
    for pool in ("cls", "mean"):
        m = _ViolinViT((8, 12, 3), (2, 2), 16, 3, 4, 4.0, 7, pool, None, DEFAULT_CURVES,
                       (5.0, 9.0), "normal", 0.5, True, 0.0)
        assert _n_params(m) == _closed_form_params((8, 12, 3), 2, 16, 3, 4.0, 7, pool)
    base = _closed_form_params((224, 224, 3), 16, 768, 12, 4.0, 1000, "cls")
    assert 86.5e6 < base < 86.6e6  # DeiT-B's published 86.6M
    extra = 12 * 12 * (len(DEFAULT_CURVES) + 1)
    assert extra / base * 100 < 0.0015


def test_plain_vit_is_invariant_to_pixel_permutation_with_positions():
    torch.manual_seed(0)
    net = _vit(None, depth=2).double().eval()
    x = torch.randn(5, 64, dtype=torch.float64)
    perm = torch.randperm(64)
    permuted = _vit(None, depth=2).double().eval()
    permuted.load_state_dict(net.state_dict())
    with torch.no_grad():
        permuted.pos_embed.copy_(net.pos_embed[:, perm])
        out, out_p = net(x), permuted(x[:, perm])
    np.testing.assert_allclose(out_p, out, atol=1e-5)
    # the curve mask breaks that symmetry: the same permutation changes VIOLIN's logits
    torch.manual_seed(0)
    vnet = _vit("learned", depth=2).double().eval()
    for blk in vnet.blocks:
        blk.attn.qkv.weight.data.mul_(30.0)  # far from uniform attention
        blk.attn.decay_logits.data.fill_(0.0)  # gamma = 0.5: a sharp mask
        blk.attn.attention_scale.data.fill_(3.0)
    vperm = _vit("learned", depth=2).double().eval()
    vperm.load_state_dict(vnet.state_dict())
    with torch.no_grad():
        vperm.pos_embed.copy_(vnet.pos_embed[:, perm])
        assert (vperm(x[:, perm]) - vnet(x)).abs().max() > 1e-4


class _TimmLikeAttention(nn.Module):
    """Stand-in with timm's Attention layout (qkv, proj, num_heads, scale)."""

    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, self.num_heads, d // self.num_heads).permute(
            2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1) * self.scale).softmax(-1)
        return self.proj((att @ v).transpose(1, 2).reshape(b, t, d))


def test_from_attention_copies_weights_of_a_timm_layout_layer():
    torch.manual_seed(0)
    old = _TimmLikeAttention(16, 2).double()
    new = ViolinAttention.from_attention(old, (3, 3), cls_token=True, mask="ones",
                                         scale_init="ones")
    assert new.qkv.weight.dtype == torch.float64
    x = torch.randn(2, 10, 16, dtype=torch.float64)
    np.testing.assert_allclose(new(x).detach(), old(x).detach(), atol=1e-10)
    learned = ViolinAttention.from_attention(old, (3, 3), cls_token=True)
    assert learned.decay_logits.shape == (8, 2)
    with pytest.raises(ValueError, match="lacks"):
        ViolinAttention.from_attention(nn.Linear(4, 4), (2, 2))
    with pytest.raises(ValueError, match="x has 9 tokens"):
        new(torch.randn(1, 9, 16, dtype=torch.float64))


def test_drop_in_timm_vit():
    timm = pytest.importorskip(
        "timm", reason="timm is optional (not a dependency: installing it replaces the pinned "
                       "torch build); the recipe is tested where it is installed")
    torch.manual_seed(0)
    model = timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=32,
                              patch_size=8, num_classes=3).eval()
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        before = model(x)
        for block in model.blocks:
            block.attn = ViolinAttention.from_attention(block.attn, (4, 4), cls_token=True,
                                                        mask="ones", scale_init="ones")
        np.testing.assert_allclose(model(x), before, atol=1e-4)
        for block in model.blocks:
            block.attn = ViolinAttention.from_attention(block.attn, (4, 4), cls_token=True)
        assert model(x).shape == (2, 3)


# -- estimator ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bars():
    return make_bar_images(96, random_state=0)


@pytest.mark.parametrize("mask", ["learned", None])
def test_learns_digits_zero_against_one(mask):
    """Pixel tokens of the 8 x 8 digits 0 and 1: both the VIOLIN and the plain model learn."""
    X, y = load_digits(n_class=2, return_X_y=True)
    clf = ViolinViTClassifier(d_model=16, depth=1, n_heads=2, max_epochs=15, lr=3e-3,
                              mask=mask, random_state=0).fit(X[:240], y[:240])
    assert clf.score(X[240:], y[240:]) >= 0.9


def test_fitted_attributes_and_outputs(bars):
    X, y = bars
    clf = ViolinViTClassifier(**TINY).fit(X, y)
    assert clf.image_shape_ == (8, 8, 1) and clf.grid_shape_ == (8, 8) and clf.n_tokens_ == 64
    assert clf.curve_positions_.shape == (8, 64)
    np.testing.assert_array_equal(clf.curve_positions_[1], curve_positions(8, 8, "hilbert"))
    assert clf.decay_rates_.shape == (1, 8, 2)
    assert np.all((clf.decay_rates_ > 0) & (clf.decay_rates_ < 1))
    assert clf.attention_scales_.shape == (1, 2)
    assert clf.n_extra_parameters_ == 1 * 2 * 9
    proba = clf.predict_proba(X[:7])
    assert proba.dtype == np.float64 and proba.shape == (7, 4)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.predict(X[:7]), clf.classes_[proba.argmax(axis=1)])
    assert clf.embed(X[:7]).shape == (7, 8)
    assert not hasattr(clf, "transform")
    plain = ViolinViTClassifier(mask=None, **TINY).fit(X, y)
    assert plain.decay_rates_ is None and plain.attention_scales_ is None
    assert plain.n_parameters() == clf.n_parameters() - clf.n_extra_parameters_
    fixed = ViolinViTClassifier(mask="fixed", **TINY).fit(X, y)
    np.testing.assert_array_equal(fixed.decay_rates_, 0.996)
    ones = ViolinViTClassifier(mask="ones", scale_init="ones", **TINY).fit(X, y)
    assert ones.decay_rates_ is None and ones.attention_scales_.shape == (1, 2)
    cls = ViolinViTClassifier(pool="cls", patch_size=(2, 4), **TINY).fit(X, y)
    assert cls.grid_shape_ == (4, 2) and cls.predict(X[:3]).shape == (3,)


def test_channels_patches_and_strip_fallback():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4 * 6 * 3))
    y = np.repeat([0, 1], 20)
    clf = ViolinViTClassifier(image_shape=(4, 6, 3), patch_size=2, **TINY).fit(X, y)
    assert clf.grid_shape_ == (2, 3) and clf.net_.module_.patch_embed.in_features == 12
    with pytest.warns(UserWarning, match=r"1 x 7 strip.*image_shape=\(32, 32, 3\)") as record:
        strip = ViolinViTClassifier(**TINY).fit(X[:, :7], y)
    assert [w.filename for w in record] == [__file__]  # points at the caller's line
    assert strip.image_shape_ == (1, 7, 1)


def test_same_seed_same_result_and_pickle(bars):
    X, y = bars
    a = ViolinViTClassifier(**TINY).fit(X, y)
    b = ViolinViTClassifier(**TINY).fit(X, y)
    c = ViolinViTClassifier(**{**TINY, "random_state": 1}).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert np.abs(a.predict_proba(X) - c.predict_proba(X)).max() > 1e-6
    restored = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(restored.predict_proba(X), a.predict_proba(X))
    np.testing.assert_array_equal(restored.decay_rates_, a.decay_rates_)


def test_pipeline_and_grid_search(bars):
    X, y = bars
    pipe = make_pipeline(FunctionTransformer(lambda Z: Z * 2.0),
                         ViolinViTClassifier(**TINY)).fit(X, y)
    assert pipe.predict(X[:5]).shape == (5,)
    search = GridSearchCV(ViolinViTClassifier(**TINY), {"mask": ["learned", None]}, cv=2)
    search.fit(X, y)
    assert search.best_params_["mask"] in ("learned", None)
    assert clone(search.best_estimator_).get_params()["mask"] == search.best_params_["mask"]


def test_optimizer_params_reach_the_optimizer(bars):
    X, y = bars
    clf = ViolinViTClassifier(optimizer_params={"betas": (0.5, 0.6)}, **TINY).fit(X, y)
    group = clf.net_.optimizer_.param_groups[0]
    assert tuple(group["betas"]) == (0.5, 0.6)
    assert group["weight_decay"] == pytest.approx(0.05)
    wd = ViolinViTClassifier(optimizer_params={"weight_decay": 0.2}, **TINY).fit(X[:40], y[:40])
    assert wd.net_.optimizer_.param_groups[0]["weight_decay"] == pytest.approx(0.2)
    with pytest.raises(ValueError, match="optimizer_params key 'momentum'"):
        ViolinViTClassifier(optimizer_params={"momentum": 0.9}, **TINY).fit(X, y)


def test_one_sample_per_class_trains():
    X, y = make_bar_images(40, random_state=1)
    idx = [int(np.flatnonzero(y == k)[0]) for k in range(4)]
    clf = ViolinViTClassifier(**{**TINY, "max_epochs": 40, "lr": 3e-2}).fit(X[idx], y[idx])
    assert clf.predict_proba(X).shape == (40, 4)
    losses = clf.net_.history[:, "train_loss"]
    assert losses[-1] < 0.5 * losses[0]


@pytest.mark.parametrize("params, X_cols, match", [
    (dict(image_shape=(8, 8, 1)), 63,
     r"image_shape=\(8, 8, 1\) implies 64 features per sample, but X has 63 features\."),
    (dict(patch_size=3), 64, r"patch_size=\(3, 3\) does not divide image_shape \(8, 8\)\."),
    (dict(d_model=64, n_heads=5), 64, r"d_model=64 must be divisible by n_heads=5\."),
    (dict(curves=()), 64, r"curves must be a non-empty tuple when mask='learned'"),
    (dict(curves=("snake", "spiral")), 64, r"Unknown curve 'spiral'"),
    (dict(decay_init=(9.0, 5.0)), 64, r"decay_init must be a finite pair"),
    (dict(image_shape=(8, 8, 1, 1)), 64, r"image_shape must be \(h, w\) or \(h, w, ch\)"),
])
def test_bad_parameters_name_the_argument(params, X_cols, match):
    X, y = make_bar_images(20, random_state=0)
    X = X[:, :X_cols]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(ValueError, match=match):
            ViolinViTClassifier(**{**TINY, **params}).fit(X, y)


def test_bad_data_names_the_argument():
    X, y = make_bar_images(20, random_state=0)
    for bad in (np.nan, np.inf):
        Xb = X.copy()
        Xb[3, 5] = bad
        with pytest.raises(ValueError, match="Input X contains (NaN|infinity)"):
            ViolinViTClassifier(**TINY).fit(Xb, y)
    with pytest.raises(ValueError, match="at least two classes"):
        ViolinViTClassifier(**TINY).fit(X, np.zeros(20))
    clf = ViolinViTClassifier(**TINY).fit(X, y)
    with pytest.raises(ValueError, match="X has 63 features"):
        clf.predict(X[:, :63])
    assert math.isfinite(clf.scale_)


# -- argument checks and numerics found by a user test -----------------------------------------
def test_from_attention_follows_a_source_without_proj_bias():
    class A(nn.Module):
        num_heads = 2

        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(8, 24)
            self.proj = nn.Linear(8, 8, bias=False)

    assert ViolinAttention.from_attention(A(), (2, 2)).proj.bias is None
    torch.manual_seed(0)
    old = _TimmLikeAttention(16, 2).double()
    old.proj = nn.Linear(16, 16, bias=False).double()
    new = ViolinAttention.from_attention(old, (3, 3), cls_token=True, mask="ones",
                                         scale_init="ones")
    assert new.proj.bias is None and new.qkv.bias is not None
    x = torch.randn(2, 10, 16, dtype=torch.float64)
    np.testing.assert_allclose(new(x).detach(), old(x).detach(), atol=1e-10)
    assert ViolinAttention(8, 2, (2, 2), proj_bias=False).proj.bias is None


@pytest.mark.parametrize("grid_shape", [(2.5, 4), (0, 4), (2, 2, 2), (2, -1), 4, "ab",
                                        (2, True), (2, np.nan)])
def test_attention_grid_shape_must_be_a_pair_of_positive_integers(grid_shape):
    msg = (r"grid_shape must be a pair of positive integers \(h, w\); got "
           + re.escape(repr(grid_shape)) + r"\.")
    with pytest.raises(ValueError, match=msg):
        ViolinAttention(8, 2, grid_shape, mask="ones")
    with pytest.raises(ValueError, match=msg):
        ViolinAttention.from_attention(_TimmLikeAttention(8, 2), grid_shape)
    assert ViolinAttention(8, 2, (np.int64(2), 4.0)).grid_shape == (2, 4)


@pytest.mark.parametrize("image_shape", [(8.5, 8), (8, 8, 0.5), (8, 0, 1), (8, np.inf)])
def test_image_shape_must_hold_positive_integers(image_shape):
    X, y = make_bar_images(20, random_state=0)
    msg = (r"image_shape must be \(h, w\) or \(h, w, ch\) of positive integers; got "
           + re.escape(repr(image_shape)) + r"\.")
    with pytest.raises(ValueError, match=msg):
        ViolinViTClassifier(image_shape=image_shape, **TINY).fit(X, y)
    assert ViolinViTClassifier(image_shape=(8, 8.0), **TINY).fit(X, y).image_shape_ == (8, 8, 1)
    with pytest.raises(ValueError, match=r"patch_size must be .*; got \(2\.5, 2\)\."):
        ViolinViTClassifier(patch_size=(2.5, 2), **TINY).fit(X, y)


def test_attention_errors_name_its_own_arguments():
    with pytest.raises(ValueError, match=r"^dim=10 must be divisible by num_heads=3\.$"):
        ViolinAttention(10, 3, (2, 2))
    with pytest.raises(ValueError, match=r"^num_heads must be a positive integer; got 0\.$"):
        ViolinAttention(8, 0, (2, 2))
    with pytest.raises(ValueError, match=r"attention\.qkv\.in_features=10 must be divisible by "
                                         r"attention\.num_heads=3\."):
        ViolinAttention.from_attention(_TimmLikeAttention(10, 3), (2, 2))


def test_huge_pixel_values_are_standardised_without_overflow(bars):
    X, y = bars
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        ref = ViolinViTClassifier(**TINY).fit(X, y)
        big = ViolinViTClassifier(**TINY).fit(X * 1e300, y)
        np.testing.assert_allclose(big._validated(X * 1e300), ref._validated(X), rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_array_equal(big.predict(X * 1e300), ref.predict(X))
    assert math.isfinite(big.scale_) and big.scale_ > 0
    assert big.scale_ == pytest.approx(ref.scale_ * 1e300, rel=1e-12)
    assert big.mean_ == pytest.approx(ref.mean_ * 1e300, rel=1e-12)
    # near the largest float, X - mean overflows unless computed in halves
    top = np.finfo(np.float64).max
    extreme = np.where(np.arange(len(X))[:, None] % 4 == 0, -0.9 * top, 0.9 * top) * np.ones(
        (1, X.shape[1]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = ViolinViTClassifier(**TINY).fit(extreme, y)
        Z = clf._validated(extreme)
    # (sklearn's finiteness check of X may warn about its own sum; nothing may overflow here)
    assert not [w for w in caught if "overflow" in str(w.message)]
    assert math.isfinite(clf.scale_) and clf.scale_ > 0
    assert np.isfinite(Z).all() and np.ptp(Z) > 1


def test_default_model_parameter_counts_quoted_in_the_user_guide():
    X, y = load_digits(n_class=2, return_X_y=True)
    learned = ViolinViTClassifier(max_epochs=1, random_state=0).fit(X[:20], y[:20])
    plain = ViolinViTClassifier(mask=None, max_epochs=1, random_state=0).fit(X[:20], y[:20])
    assert (learned.n_parameters(), plain.n_parameters()) == (19_402, 19_330)
    assert learned.n_extra_parameters_ == 72


def test_diverging_training_warns_and_keeps_the_last_finite_parameters():
    """A loss that becomes NaN stops training with a ConvergenceWarning; the restored
    parameters are those of the last finite epoch, so probabilities stay finite."""
    from sklearn.datasets import load_digits
    from sklearn.exceptions import ConvergenceWarning

    X, y = load_digits(return_X_y=True)
    X, y = X[:100], y[:100]
    kw = dict(d_model=8, depth=1, n_heads=2, random_state=0, optimizer="sgd", lr=1e6)
    with pytest.warns(ConvergenceWarning, match="non-finite in epoch"):
        clf = ViolinViTClassifier(max_epochs=3, **kw).fit(X, y)
    proba = clf.predict_proba(X[:5])
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert all(np.all(np.isfinite(p.detach().numpy())) for p in clf.net_.module_.parameters())
    # the restored parameters are the ones the last finite epoch ended with
    if clf.n_iter_ > 0:
        ref = ViolinViTClassifier(max_epochs=clf.n_iter_, **kw).fit(X, y)
        np.testing.assert_array_equal(ref.predict_proba(X[:5]), proba)
    else:  # diverged in the first epoch: the initial parameters
        ref = ViolinViTClassifier(max_epochs=1, **{**kw, "lr": 1e-30}).fit(X, y)
        np.testing.assert_allclose(ref.predict_proba(X[:5]), proba)


def test_a_finite_but_exploding_loss_warns():
    """A loss that stays finite but rises a hundredfold (SGD at lr 1e3) warns once."""
    from sklearn.datasets import load_digits
    from sklearn.exceptions import ConvergenceWarning

    X, y = load_digits(return_X_y=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ViolinViTClassifier(d_model=8, depth=1, n_heads=2, max_epochs=2, random_state=0,
                            optimizer="sgd", lr=1e3).fit(X[:100], y[:100])
    messages = [str(w.message) for w in caught if w.category is ConvergenceWarning]
    assert any("rose a hundredfold" in m or "non-finite" in m for m in messages), messages
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # a sane fit warns of nothing
        ViolinViTClassifier(d_model=8, depth=1, n_heads=2, max_epochs=2,
                            random_state=0).fit(X[:100], y[:100])


def test_divergence_guard_leaves_no_trace_on_an_ordinary_fit():
    """Zero-weight samples in the first batch (loss 0) are no reference for the
    hundredfold rule; after the fit the module is in training mode as skorch leaves it and
    the guard holds no state copies or training batch."""
    from sklearn.datasets import load_digits
    from sklearn.exceptions import ConvergenceWarning

    X, y = load_digits(return_X_y=True)
    X, y = X[:20], y[:20] % 2
    sw = np.zeros(20)
    sw[[3, 8, 13, 18]] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = ViolinViTClassifier(d_model=8, depth=1, n_heads=2, max_epochs=3, batch_size=2,
                                  random_state=0).fit(X, y, sample_weight=sw)
    assert clf.net_.module_.training
    loop = dict(clf.net_.callbacks_)["adapter_loop"]
    assert loop.guard._good is None and loop.guard._pending is None and loop._batch is None
    assert loop.guard.first_loss_ > 0
