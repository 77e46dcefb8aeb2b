"""HolderTransformerRegressor, its block bounds and the Hölder generators (known answers)."""

import math
import pickle
import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.metrics import r2_score
from torch import nn

from sklearn_icml26.approximation import (
    BlockBounds,
    HolderTransformerRegressor,
    holder_depth_slopes,
    holder_risk_rates,
    holder_transformer_block_bounds,
)
from sklearn_icml26.approximation._holder_transformer import (
    _Attention,
    _Block,
    _FeedForward,
    _HolderTransformer,
    _n_parameters,
)
from sklearn_icml26.datasets import make_holder_regression

TINY = dict(d_model=8, n_heads=2, d_ff=16, max_epochs=2, batch_size=64, random_state=0)


# -- bounds ------------------------------------------------------------------------------------
def test_block_bounds_closed_forms():
    b = holder_transformer_block_bounds(0.1, 1, 0.5)
    assert isinstance(b, BlockBounds)
    np.testing.assert_allclose(b, (math.sqrt(10), 100.0), rtol=1e-12)
    np.testing.assert_allclose(b.lower, 3.16228, rtol=1e-6)
    np.testing.assert_allclose(holder_transformer_block_bounds(0.05, 2, 0.5), (20.0, 160000.0),
                               rtol=1e-12)
    scaled = holder_transformer_block_bounds(0.05, 2, 0.5, c_lower=3.0, c_upper=0.5)
    np.testing.assert_allclose(scaled, (60.0, 80000.0), rtol=1e-12)


def test_block_bounds_broadcast_order_and_monotonicity():
    eps = np.geomspace(1e-3, 1.0, 7)
    b = holder_transformer_block_bounds(eps[:, None], np.array([1, 2, 3]), 0.5)
    assert b.lower.shape == b.upper.shape == (7, 3)
    assert np.all(b.lower <= b.upper + 1e-12)  # eps <= 1
    assert np.all(np.diff(b.lower, axis=0) < 0) and np.all(np.diff(b.upper, axis=0) < 0)
    np.testing.assert_allclose(b.upper[-1], 1.0)  # eps = 1 needs one block at unit constants
    # elementwise alpha
    b2 = holder_transformer_block_bounds(0.1, 1, np.array([0.25, 1.0]))
    np.testing.assert_allclose(b2.lower, [0.1**-1.0, 0.1**-0.25])


def test_depth_slopes_and_risk_rates():
    assert holder_depth_slopes(1, 0.5) == (-2.0, -0.5)
    steep, guaranteed = holder_depth_slopes(np.array([1, 2]), 1.0)
    np.testing.assert_allclose(steep, [-4.0, -2.0])
    np.testing.assert_allclose(guaranteed, [-1.0, -0.5])
    rates = holder_risk_rates(10_000, 1, 0.5)
    assert set(rates) == {"minimax", "transformer_derived"}
    np.testing.assert_allclose(rates["minimax"], 10_000 ** (-0.5), rtol=1e-12)
    np.testing.assert_allclose(rates["transformer_derived"], 10_000 ** (-0.2), rtol=1e-12)
    # p = 4 gives n^(-alpha/(alpha + 2 d0)); p = 1 is the minimax rate
    r = holder_risk_rates(np.array([100.0, 1e4]), 2, 0.75)
    np.testing.assert_allclose(r["transformer_derived"], np.array([100.0, 1e4]) ** (-0.75 / 4.75))
    r1 = holder_risk_rates(500, 3, 0.3, capacity_exponent=1)
    np.testing.assert_allclose(r1["transformer_derived"], r1["minimax"])


@pytest.mark.parametrize("kwargs, match", [
    (dict(eps=0.0, d0=1, alpha=0.5), "eps must be > 0; got 0"),
    (dict(eps=np.array([0.1, -1.0]), d0=1, alpha=0.5), "eps must be > 0; got -1"),
    (dict(eps=0.1, d0=0, alpha=0.5), "d0 must be an integer >= 1"),
    (dict(eps=0.1, d0=1.5, alpha=0.5), "d0 must be an integer >= 1"),
    (dict(eps=0.1, d0=1, alpha=1.5), r"alpha must be in \(0, 1\]; got 1.5"),
    (dict(eps=0.1, d0=1, alpha=0.0), r"alpha must be in \(0, 1\]; got 0"),
])
def test_block_bounds_reject_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        holder_transformer_block_bounds(**kwargs)


def test_risk_rates_reject_bad_input():
    with pytest.raises(ValueError, match="n must be > 0"):
        holder_risk_rates(0, 1, 0.5)
    with pytest.raises(ValueError, match="capacity_exponent must be > 0"):
        holder_risk_rates(10, 1, 0.5, capacity_exponent=0)
    with pytest.raises(ValueError, match="alpha must be in"):
        holder_depth_slopes(1, 2.0)


# -- auto depth --------------------------------------------------------------------------------
@pytest.mark.parametrize("d0, eps_n, blocks", [(1, 0.1495, 3), (2, 0.2817, 4)])
def test_auto_depth_at_the_reference_cases(d0, eps_n, blocks):
    X, y = make_holder_regression(2000, d0, 0.5, kind="radial", random_state=0)
    one_step = {**TINY, "max_epochs": 1, "batch_size": -1}
    reg = HolderTransformerRegressor(alpha=0.5, **one_step).fit(X, y)
    assert reg.eps_ == pytest.approx(eps_n, abs=5e-5)
    assert reg.n_blocks_ == blocks
    assert len(reg.net_.module_.blocks) == blocks
    assert reg.depth_bounds_["eps"] == reg.eps_
    assert reg.depth_bounds_["lower"] == pytest.approx(eps_n ** (-d0 / 2), rel=1e-3)
    upper = HolderTransformerRegressor(alpha=0.5, depth_rule="upper", **one_step).fit(X, y)
    assert upper.n_blocks_ == 32  # capped by max_blocks
    geo = HolderTransformerRegressor(alpha=0.5, depth_rule="geometric", max_blocks=1000,
                                     **one_step)
    geo.fit(X[:300], y[:300])
    b = geo.depth_bounds_
    assert geo.n_blocks_ == math.ceil(math.sqrt(b["lower"] * b["upper"]))


def test_explicit_eps_depth_constant_and_fixed_blocks():
    X, y = make_holder_regression(100, 2, 0.5, kind="radial", random_state=0)
    reg = HolderTransformerRegressor(alpha=0.5, eps=0.05, **{**TINY, "max_epochs": 1})
    assert reg.fit(X, y).n_blocks_ == 20 and reg.eps_ == 0.05
    reg.set_params(depth_constant=0.1).fit(X, y)
    assert reg.n_blocks_ == 2
    reg.set_params(n_blocks=5).fit(X, y)
    assert reg.n_blocks_ == 5 and reg.depth_bounds_["lower"] == pytest.approx(20.0)


# -- generators --------------------------------------------------------------------------------
def _measured_exponent(f, d0=1, direction=0):
    """Slope of log max|f(x + h) - f(x)| on log h, h = 2^-4 .. 2^-12, f evaluated at x + h."""
    grid = np.linspace(0.0, 1.0, 20_001)
    P = grid[:, None]
    if d0 == 2:
        other = np.random.default_rng(1).uniform(size=len(grid))
        P = np.c_[grid, other] if direction == 0 else np.c_[other, grid]
    hs = 2.0 ** -np.arange(4, 13)
    fP = f(P)
    incr = []
    for h in hs:
        Q = P.copy()
        Q[:, direction] += h
        incr.append(np.max(np.abs(f(Q) - fP)))
    return np.polyfit(np.log(hs), np.log(incr), 1)[0]


@pytest.mark.parametrize("alpha", [0.25, 0.5, 0.75])
def test_weierstrass_exponent(alpha):
    # a fixed phase (random_state=0): the exponent comes from f(x + h) evaluated directly
    _, _, f = make_holder_regression(5, 1, alpha, random_state=0, return_function=True)
    assert abs(_measured_exponent(f) - alpha) < 0.1


@pytest.mark.parametrize("alpha", [0.25, 0.5, 0.75])
def test_wavelet_exponent_in_every_direction(alpha):
    _, _, f1 = make_holder_regression(5, 1, alpha, kind="wavelet", random_state=0,
                                      return_function=True)
    assert abs(_measured_exponent(f1) - alpha) < 0.1
    _, _, f2 = make_holder_regression(5, 2, alpha, kind="wavelet", random_state=0,
                                      return_function=True)
    for direction in (0, 1):
        assert abs(_measured_exponent(f2, 2, direction) - alpha) < 0.1


def test_wavelet_is_genuinely_two_dimensional():
    # not a sum of univariate functions: the mixed second difference does not vanish
    _, _, f = make_holder_regression(5, 2, 0.5, kind="wavelet", random_state=0,
                                     return_function=True)
    rng = np.random.default_rng(0)
    P = rng.uniform(size=(2000, 2))
    h = 0.01
    mixed = (f(P + [h, h]) - f(P + [h, 0]) - f(P + [0, h]) + f(P))
    assert np.mean(np.abs(mixed)) > 1e-2
    _, _, w = make_holder_regression(5, 2, 0.5, random_state=0, return_function=True)
    additive = w(P + [h, h]) - w(P + [h, 0]) - w(P + [0, h]) + w(P)
    assert np.max(np.abs(additive)) < 1e-12


@pytest.mark.parametrize("alpha", [0.3, 1.0])
@pytest.mark.parametrize("d0", [1, 3])
def test_radial_holder_constant_at_most_one(alpha, d0):
    _, _, f = make_holder_regression(5, d0, alpha, kind="radial", random_state=1,
                                     return_function=True)
    rng = np.random.default_rng(0)
    x, z = rng.uniform(size=(100_000, d0)), rng.uniform(size=(100_000, d0))
    z[:1000] = x[:1000] + 1e-4 * rng.normal(size=(1000, d0))  # close pairs too
    ratio = np.abs(f(x) - f(z)) / np.linalg.norm(x - z, axis=1) ** alpha
    assert ratio.max() <= 1 + 1e-9
    assert ratio.max() > 0.1


@pytest.mark.parametrize("kind", ["weierstrass", "radial", "wavelet"])
def test_generator_deterministic_bounded_and_noisy(kind):
    a = make_holder_regression(300, 2, 0.5, kind=kind, random_state=3)
    b = make_holder_regression(300, 2, 0.5, kind=kind, random_state=3)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    X, y, f = a[0], a[1], make_holder_regression(300, 2, 0.5, kind=kind, random_state=3,
                                                 return_function=True)[2]
    assert X.shape == (300, 2) and y.dtype == np.float64
    assert X.min() >= 0 and X.max() <= 1
    assert np.abs(y).max() <= 1 + 1e-12
    np.testing.assert_allclose(f(X), y)
    _, yn = make_holder_regression(300, 2, 0.5, kind=kind, noise=0.5, random_state=3)
    assert 0.3 < np.std(yn - y) < 0.7
    c = make_holder_regression(300, 2, 0.5, kind=kind, random_state=4)
    assert not np.allclose(c[1], a[1])


def test_generator_rejects_bad_alpha():
    with pytest.raises(ValueError, match="kind='weierstrass' has exact exponent alpha only"):
        make_holder_regression(10, 1, 1.0)
    with pytest.raises(ValueError, match="kind='wavelet' has exact exponent alpha only"):
        make_holder_regression(10, 1, 1.0, kind="wavelet")
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\]; got 1.2"):
        make_holder_regression(10, 1, 1.2, kind="radial")
    with pytest.raises(ValueError, match="x must have shape"):
        make_holder_regression(10, 2, 0.5, return_function=True)[2](np.zeros((3, 3)))


# -- architecture ------------------------------------------------------------------------------
def test_only_the_theorems_building_blocks():
    allowed = {_HolderTransformer, _Block, _Attention, _FeedForward, nn.Linear, nn.ReLU,
               nn.ModuleList, nn.Identity}
    plain = _HolderTransformer(2, 3, 16, 2, 32, "coordinate", None)
    assert {type(m) for m in plain.modules()} <= allowed
    assert not any(isinstance(m, nn.LayerNorm) for m in plain.modules())
    ln = _HolderTransformer(2, 3, 16, 2, 32, "coordinate", "layer")
    assert {type(m) for m in ln.modules()} <= allowed | {nn.LayerNorm}
    assert sum(isinstance(m, nn.LayerNorm) for m in ln.modules()) == 2 * 3 + 1


@pytest.mark.parametrize("tokenization, norm", [("coordinate", None), ("coordinate", "layer"),
                                                ("single", None)])
def test_parameter_count_closed_form(tokenization, norm):
    d0, L, D, Fw = 2, 3, 16, 24
    module = _HolderTransformer(d0, L, D, 4, Fw, tokenization, norm)
    counted = sum(p.numel() for p in module.parameters())
    assert counted == _n_parameters(d0, L, D, Fw, tokenization, norm)
    if tokenization == "coordinate" and norm is None:
        # tokens (d0 + 1) D + w; per block 4 D^2 + 4 D (attention) + 2 D F + F + D; readout
        expected = (d0 + 2) * D + L * (4 * D * D + 4 * D + 2 * D * Fw + Fw + D) + D + 1
        assert counted == expected == 5769
    X, y = make_holder_regression(64, d0, 0.5, kind="radial", random_state=0)
    reg = HolderTransformerRegressor(n_blocks=L, d_model=D, n_heads=4, d_ff=Fw,
                                     tokenization=tokenization, norm=norm, max_epochs=1,
                                     random_state=0).fit(X, y)
    assert reg.n_parameters() == counted


def test_coordinate_tokens_are_permutation_equivariant():
    torch.manual_seed(0)
    d0 = 4
    module = _HolderTransformer(d0, 2, 16, 2, 32, "coordinate", None).double().eval()
    with torch.no_grad():  # move the residual branches off their small initialisation
        for p in module.parameters():
            p.add_(0.3 * torch.randn_like(p))
    x = torch.rand(50, d0, dtype=torch.float64)
    perm = torch.tensor([2, 0, 3, 1])
    with torch.no_grad():
        out = module(x)
        permuted = _HolderTransformer(d0, 2, 16, 2, 32, "coordinate", None).double().eval()
        permuted.load_state_dict(module.state_dict())
        permuted.position[1:] = module.position[1:][perm]  # e_k moves with coordinate k
        out_perm = permuted(x[:, perm])
        # permuting the coordinates without their positions changes the function
        out_mixed = module(x[:, perm])
    torch.testing.assert_close(out_perm, out, rtol=1e-10, atol=1e-12)
    assert not torch.allclose(out_mixed, out, atol=1e-6)


# -- learning ----------------------------------------------------------------------------------
def test_learns_a_lipschitz_function():
    X, y, f = make_holder_regression(512, 1, 1.0, kind="radial", random_state=0,
                                     return_function=True)
    reg = HolderTransformerRegressor(alpha=1.0, n_blocks=2, max_epochs=150, batch_size=64,
                                     lr=3e-3, random_state=0).fit(X, y)
    Xt = np.random.default_rng(1).uniform(size=(2000, 1))
    assert r2_score(f(Xt), reg.predict(Xt)) > 0.95
    assert len(reg.loss_curve_) == 150 and reg.loss_curve_[-1] < 0.1 * reg.loss_curve_[0]


def test_same_seed_same_result_and_pickle():
    X, y = make_holder_regression(200, 2, 0.5, kind="wavelet", noise=0.1, random_state=0)
    a = HolderTransformerRegressor(alpha=0.5, **TINY).fit(X, y)
    b = HolderTransformerRegressor(alpha=0.5, **TINY).fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    c = clone(a).set_params(random_state=1).fit(X, y)
    assert not np.allclose(c.predict(X), a.predict(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(a)).predict(X), a.predict(X))


def test_scaling_attributes_output_bound_and_weights():
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 5, size=(120, 2))
    y = 10 + 4 * np.sin(X[:, 0])
    reg = HolderTransformerRegressor(output_bound="auto", **TINY).fit(X, y)
    np.testing.assert_allclose(reg.x_min_, X.min(axis=0))
    np.testing.assert_allclose(reg.x_range_, np.ptp(X, axis=0))
    assert reg.y_mean_ == pytest.approx(y.mean()) and reg.y_scale_ == pytest.approx(y.std())
    assert reg.output_bound_ == pytest.approx(np.abs(y).max())
    assert np.all(np.abs(reg.predict(100 * X)) <= reg.output_bound_ + 1e-12)
    tight = HolderTransformerRegressor(output_bound=0.5, **TINY).fit(X, y)
    assert np.all(np.abs(tight.predict(X)) <= 0.5)
    # zero-weight samples do not enter the scaling
    w = np.ones(120)
    w[:10] = 0
    Xw = X.copy()
    Xw[:10] = 1e6
    weighted = HolderTransformerRegressor(**TINY).fit(Xw, y, sample_weight=w)
    np.testing.assert_allclose(weighted.x_min_, X[10:].min(axis=0))


def test_weight_decay_early_stopping_and_single_tokens():
    X, y = make_holder_regression(300, 2, 1.0, kind="radial", noise=0.01, random_state=0)
    reg = HolderTransformerRegressor(early_stopping=True, validation_fraction=0.2,
                                     weight_decay=1e-2, tokenization="single", norm="layer",
                                     **{**TINY, "max_epochs": 200, "lr": 3e-2}).fit(X, y)
    assert reg.n_iter_ < 200  # stopped early
    assert len(reg.validation_loss_curve_) == reg.n_iter_ == len(reg.loss_curve_)
    opt = reg.net_.optimizer_
    assert opt.param_groups[0]["weight_decay"] == 1e-2
    assert reg.score(X, y) > 0.5


@pytest.mark.parametrize("params, match", [
    (dict(alpha=1.5), r"alpha must be in \(0, 1\]; got 1.5"),
    (dict(alpha=0.0), r"alpha must be in \(0, 1\]; got 0"),
    (dict(eps=0), "eps must be > 0; got 0"),
    (dict(eps=-0.1), "eps must be > 0; got -0.1"),
    (dict(d_model=30, n_heads=4), "d_model=30 must be divisible by n_heads=4"),
    (dict(n_blocks=0), "'n_blocks' parameter"),
    (dict(depth_rule="middle"), "'depth_rule' parameter"),
])
def test_bad_parameters_name_the_argument(params, match):
    X, y = make_holder_regression(50, 1, 0.5, random_state=0)
    with pytest.raises(ValueError, match=match):
        HolderTransformerRegressor(**{**TINY, **params}).fit(X, y)


def test_constant_column_is_rejected_by_name():
    X, y = make_holder_regression(50, 3, 0.5, kind="radial", random_state=0)
    X[:, 1] = 0.7
    with pytest.raises(ValueError, match=r"X has constant column\(s\) \[1\].*0.7"):
        HolderTransformerRegressor(**TINY).fit(X, y)
    with pytest.raises(ValueError, match="Sample weights must contain at least one non-zero"):
        HolderTransformerRegressor(**TINY).fit(X[:, [0, 2]], y, sample_weight=np.zeros(50))


def test_sample_weight_routing_in_a_pipeline():
    import sklearn
    from sklearn.model_selection import cross_val_score

    X, y = make_holder_regression(120, 1, 1.0, kind="radial", random_state=0)
    w = np.ones(120)
    with sklearn.config_context(enable_metadata_routing=True):
        reg = HolderTransformerRegressor(**TINY).set_fit_request(sample_weight=True)
        reg = reg.set_score_request(sample_weight=False)
        scores = cross_val_score(reg, X, y, cv=2, params={"sample_weight": w})
    assert scores.shape == (2,) and np.all(np.isfinite(scores))


@pytest.mark.parametrize("factor", [1e-200, 1e200, 1e300])
def test_extreme_target_scales_give_scaled_predictions(factor):
    # the target's mean and scale come from power-of-two pre-scaled moments: at 1e200 the
    # squares of the plain formula overflowed and every prediction was -inf
    X, y = make_holder_regression(120, 1, 0.5, random_state=0)[:2]
    params = dict(d_model=8, n_heads=2, d_ff=16, max_epochs=2, batch_size=64, random_state=0)
    base = HolderTransformerRegressor(**params).fit(X, y).predict(X[:5])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        scaled = HolderTransformerRegressor(**params).fit(X, y * factor).predict(X[:5])
    np.testing.assert_allclose(scaled / factor, base, rtol=1e-12)


# -- training loop -----------------------------------------------------------------------------
def test_attention_is_the_scaled_softmax_formula():
    torch.manual_seed(0)
    attn = _Attention(8, 2).double()
    h = torch.randn(5, 3, 8, dtype=torch.float64)
    q, k, v = attn.qkv(h).view(5, 3, 3, 2, 4).unbind(2)  # (batch, token, head, d_head)
    scores = torch.einsum("bihe,bjhe->bhij", q, k) / math.sqrt(4)
    heads = torch.einsum("bhij,bjhe->bihe", torch.softmax(scores, dim=-1), v)
    expected = attn.out(heads.reshape(5, 3, 8))
    torch.testing.assert_close(attn(h), expected, rtol=1e-12, atol=1e-12)


def test_whole_batches_visit_every_sample_once_per_epoch():
    from skorch.dataset import Dataset

    from sklearn_icml26.base import _WholeBatches

    X = np.arange(10, dtype=np.float32)[:, None]
    data = Dataset({"X": X, "sample_weight": 3 * X[:, 0]}, 2 * X)
    torch.manual_seed(0)
    batches = _WholeBatches(data, batch_size=4, shuffle=True)
    assert len(batches) == 3
    orders = []
    for _ in range(2):
        epoch = list(batches)
        assert [len(yb) for _, yb in epoch] == [4, 4, 2]
        xs = torch.cat([xb["X"][:, 0] for xb, _ in epoch])
        for xb, yb in epoch:  # rows of every input stay aligned with their targets
            torch.testing.assert_close(yb, 2 * xb["X"])
            torch.testing.assert_close(xb["sample_weight"], 3 * xb["X"][:, 0])
        assert sorted(xs.tolist()) == list(range(10))
        orders.append(xs.tolist())
    assert orders[0] != orders[1]  # reshuffled every epoch
    plain = [xb["X"][:, 0].tolist() for xb, _ in _WholeBatches(data, batch_size=-1)]
    assert plain == [list(range(10))]


def test_fused_adam_is_the_per_tensor_update():
    X, y = make_holder_regression(150, 2, 0.5, kind="wavelet", random_state=0)
    params = {**TINY, "max_epochs": 5, "precision": "float64"}
    fused = HolderTransformerRegressor(**params).fit(X, y)
    assert fused.net_.optimizer_.defaults["fused"] is True
    loop = HolderTransformerRegressor(**params, optimizer_params={"fused": False}).fit(X, y)
    assert not loop.net_.optimizer_.defaults["fused"]
    np.testing.assert_allclose(fused.predict(X), loop.predict(X), rtol=1e-9, atol=1e-12)
    # the tolerance tells a slightly different update (lr 10% higher) apart
    other = HolderTransformerRegressor(**{**params, "lr": 1.1e-3}).fit(X, y)
    assert not np.allclose(other.predict(X), fused.predict(X), rtol=1e-9, atol=1e-12)
    sgd = HolderTransformerRegressor(**params, optimizer="sgd").fit(X, y)
    assert "fused" not in sgd.net_.optimizer_.defaults or not sgd.net_.optimizer_.defaults[
        "fused"]


# -- divergence and target validation --------------------------------------------------------
@pytest.mark.parametrize("early_stopping", [False, True])
def test_diverged_fit_warns_and_keeps_finite_parameters(early_stopping):
    # lr=1e4 overflows the loss in the first epoch: the fit used to end with loss_curve_
    # [inf nan nan nan nan] and all-NaN predictions without a warning
    from sklearn.exceptions import ConvergenceWarning

    X, y = make_holder_regression(200, 2, alpha=0.5, kind="wavelet", noise=0.1, random_state=0)
    reg = HolderTransformerRegressor(n_blocks=1, max_epochs=5, lr=1e4, random_state=0,
                                     early_stopping=early_stopping)
    with pytest.warns(ConvergenceWarning, match="non-finite"):
        reg.fit(X, y)
    assert np.all(np.isfinite(reg.predict(X)))
    assert all(torch.isfinite(p).all() for p in reg.net_.module_.parameters())
    assert len(reg.loss_curve_) == reg.n_iter_ < 5
    assert np.all(np.isfinite(reg.loss_curve_))
    if early_stopping:
        assert len(reg.validation_loss_curve_) == reg.n_iter_
        assert np.all(np.isfinite(reg.validation_loss_curve_))
    else:
        assert reg.validation_loss_curve_ is None


def test_ordinary_fit_raises_no_convergence_warning():
    from sklearn.exceptions import ConvergenceWarning

    X, y = make_holder_regression(200, 2, alpha=0.5, kind="wavelet", noise=0.1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        reg = HolderTransformerRegressor(n_blocks=1, max_epochs=5, random_state=0).fit(X, y)
        es = HolderTransformerRegressor(n_blocks=1, max_epochs=5, early_stopping=True,
                                        random_state=0).fit(X, y)
    assert reg.n_iter_ == len(reg.loss_curve_) == 5
    assert es.n_iter_ == len(es.loss_curve_) == len(es.validation_loss_curve_) == 5


def test_non_numeric_target_is_rejected_by_name():
    X, y = make_holder_regression(200, 2, alpha=0.5, kind="wavelet", random_state=0)
    with pytest.raises(ValueError, match=r"y must be numeric.*<U1.*'a'"):
        HolderTransformerRegressor(**TINY).fit(X, np.array(["a", "b"] * 100))
    with pytest.raises(ValueError, match=r"y must be numeric.*object"):
        HolderTransformerRegressor(**TINY).fit(X, np.array(["a", "b"] * 100, dtype=object))
    # numbers in an object array are numeric targets
    obj = HolderTransformerRegressor(**TINY).fit(X, y.astype(object)).predict(X[:3])
    np.testing.assert_array_equal(obj, HolderTransformerRegressor(**TINY).fit(X, y).predict(X[:3]))


class _PoisonAt(__import__("skorch").callbacks.Callback):
    """Set the readout bias to NaN at the start of epoch ``epoch``; keep the end states."""

    def __init__(self, epoch):
        self.epoch, self.states = epoch, {}

    def on_epoch_begin(self, net, **kwargs):
        if len(net.history) == self.epoch:
            with torch.no_grad():
                net.module_.readout.bias.fill_(float("nan"))

    def on_epoch_end(self, net, **kwargs):
        self.states[len(net.history)] = {k: v.clone() for k, v in
                                         net.module_.state_dict().items()}


@pytest.mark.parametrize("poison_epoch, best_epoch, kept_epoch", [(4, 3, 2), (6, 3, 3)])
def test_divergence_guard_and_early_stopping_restore_the_same_epochs(poison_epoch, best_epoch,
                                                                     kept_epoch):
    # at lr=0.1 the validation MSE is best after epoch 3 (1.418 0.850 0.791 30.4 0.798 ...).
    # A NaN in epoch p makes the guard restore the state of epoch p - 2 (the end state of the
    # epoch before the failure is not validated by a training step); early stopping's best
    # state replaces it only when it is not later, and n_iter_ and the curves end at p - 2
    from sklearn.exceptions import ConvergenceWarning

    poison = _PoisonAt(poison_epoch)

    class Poisoned(HolderTransformerRegressor):
        def _build_callbacks(self, context):
            return [*super()._build_callbacks(context), ("poison", poison)]

    X, y = make_holder_regression(200, 2, alpha=0.5, kind="wavelet", noise=0.1, random_state=0)
    reg = Poisoned(**{**TINY, "max_epochs": 8, "lr": 0.1, "precision": "float64"},
                   early_stopping=True)
    with pytest.warns(ConvergenceWarning, match=f"non-finite in epoch {poison_epoch}"):
        reg.fit(X, y)
    validation = dict(reg.net_.callbacks_)["adapter_loop"].validation
    assert validation.best_epoch == best_epoch
    good = poison_epoch - 2
    assert reg.n_iter_ == good == len(reg.loss_curve_) == len(reg.validation_loss_curve_)
    assert np.all(np.isfinite(reg.loss_curve_)) and np.all(np.isfinite(reg.predict(X)))
    for key, value in reg.net_.module_.state_dict().items():
        torch.testing.assert_close(value, poison.states[kept_epoch][key], rtol=0, atol=0)
