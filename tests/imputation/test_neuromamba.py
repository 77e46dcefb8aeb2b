"""NeuroMambaImputer: scan and gate against closed forms and reference libraries, planted
dynamics, output guarantees, metadata routing, bad input."""

import warnings

import numpy as np
import pytest
import torch
from scipy.signal import lfilter
from sklearn import config_context
from sklearn.base import clone
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline

from sklearn_icml26.imputation import NeuroMambaImputer
from sklearn_icml26.imputation._lif import _lif_gate, _spike
from sklearn_icml26.imputation._mamba import _MambaBlock, _selective_scan
from sklearn_icml26.imputation._neuromamba_module import _NeuroMambaNet
from sklearn_icml26.imputation._starting_estimate import (
    _boosted_cross_fill,
    _box_mean,
    _cross_group_fill,
    _interpolate,
    _local_profile,
    _predict_cross_fill,
    _seasonal_table,
)
from sklearn_icml26.imputation._windows import _edge_anchors, _window_index

torch.set_num_threads(1)

# the linear cross-group fill keeps these fits fast; the boosted one (the default) has its own
# tests below
TINY = dict(d_model=8, d_state=4, n_layers=1, window=16, max_epochs=2, cross_fill="linear",
            random_state=0)


def _stream(n=160, seed=0):
    t = np.arange(n, dtype=float)
    rng = np.random.default_rng(seed)
    X = np.c_[np.sin(t / 6), np.sin(t / 6) + 0.1 * rng.normal(size=n), np.cos(t / 9)]
    X[rng.random(X.shape) < 0.1] = np.nan
    return X


# -- selective scan ------------------------------------------------------------------------------
def test_scan_equals_first_order_iir_filter():
    rng = np.random.default_rng(0)
    length, channels = 50, 3
    u = rng.normal(size=(1, length, channels))
    dt = np.array([0.05, 0.3, 1.0])  # fixed step per channel
    A = -np.array([[1.0], [2.0], [0.5]])  # d_state = 1
    delta = np.broadcast_to(dt, u.shape).copy()
    ones = np.ones((1, length, 1))
    y = _selective_scan(*(torch.as_tensor(a) for a in (u, delta, A, ones, ones)),
                        torch.zeros(channels, dtype=torch.float64)).numpy()
    for c in range(channels):  # q_t = a q_{t-1} + dt u_t, a = exp(dt A)
        expected = lfilter([dt[c]], [1.0, -np.exp(dt[c] * A[c, 0])], u[0, :, c])
        np.testing.assert_allclose(y[0, :, c], expected, atol=1e-6)


def test_mamba_block_matches_mambapy():
    mambapy = pytest.importorskip("mambapy.mamba", reason="mambapy (test extra) is the "
                                  "reference selective scan")
    torch.manual_seed(0)
    config = mambapy.MambaConfig(d_model=8, n_layers=1, d_state=4, expand_factor=2, d_conv=4,
                                 pscan=False)
    ref = mambapy.MambaBlock(config).double()
    ours = _MambaBlock(8, 4, 2, 4).double()
    missing = ours.load_state_dict(ref.state_dict(), strict=True)
    assert not missing.missing_keys
    x = torch.randn(3, 20, 8, dtype=torch.float64)
    np.testing.assert_allclose(ours(x).detach().numpy(), ref(x).detach().numpy(), atol=1e-10)


# -- LIF gate ----------------------------------------------------------------------------------
def test_lif_known_trajectory_and_surrogate_gradient():
    c = torch.full((1, 5), 0.5, dtype=torch.float64)
    spikes, v = _lif_gate(c, 0.9, 1.0, 10.0)
    np.testing.assert_allclose(v[0, :3].numpy(), [0.5, 0.95, 1.355], atol=1e-12)
    assert spikes[0].tolist()[:3] == [0.0, 0.0, 1.0]  # first spike at t = 3
    # after the spike the membrane drops by the threshold: 0.9 * 1.355 + 0.5 - 1
    np.testing.assert_allclose(v[0, 3].item(), 0.7195, atol=1e-12)
    for shift, grad in [(0.0, 1.0), (0.1, 0.25), (-0.1, 0.25)]:
        vv = torch.tensor([1.0 + shift], dtype=torch.float64, requires_grad=True)
        _spike(vv, 1.0, 10.0).sum().backward()
        np.testing.assert_allclose(vv.grad.item(), grad, rtol=1e-12)


def test_lif_membrane_gradcheck():
    torch.manual_seed(0)
    c = (0.3 * torch.randn(2, 12, 3, dtype=torch.float64)).requires_grad_()

    def membrane_and_soft_spike(c):
        _, v = _lif_gate(c, 0.9, 1.0, 10.0)
        return v, torch.sigmoid(10.0 * (v - 1.0))

    assert torch.autograd.gradcheck(membrane_and_soft_spike, (c,))


def test_lif_matches_snntorch():
    snntorch = pytest.importorskip("snntorch", reason="snntorch (test extra) is the reference "
                                   "LIF neuron")
    from snntorch import surrogate

    torch.manual_seed(0)
    c = torch.randn(30, 4) * 0.8 + 0.3
    neuron = snntorch.Leaky(beta=0.9, threshold=1.0, reset_mechanism="subtract",
                            spike_grad=surrogate.fast_sigmoid(slope=10))
    mem = neuron.init_leaky()
    ref_s, ref_v = [], []
    for t in range(c.shape[0]):
        s, mem = neuron(c[t], mem)
        ref_s.append(s)
        ref_v.append(mem)
    spikes, v = _lif_gate(c[None], 0.9, 1.0, 10.0)
    np.testing.assert_allclose(v[0].numpy(), torch.stack(ref_v).detach().numpy(), atol=1e-6)
    np.testing.assert_array_equal(spikes[0].numpy(), torch.stack(ref_s).detach().numpy())
    assert spikes.sum() > 5  # the comparison covers resets
    # the surrogate: snntorch's fast sigmoid gradient at v - theta = 0.1
    vv = torch.tensor([1.1], requires_grad=True)
    surrogate.fast_sigmoid(slope=10)(vv - 1.0).sum().backward()
    np.testing.assert_allclose(vv.grad.item(), 0.25, rtol=1e-6)


# -- reconstruction context --------------------------------------------------------------------
def test_interpolation_matches_numpy_and_leaves_each_observed_value_out():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 30, 3))
    obs = rng.random(x.shape) < 0.6
    obs[0, :, 2] = False  # a column with nothing observed in this window
    xt, ot = torch.as_tensor(x), torch.as_tensor(obs)
    values, distance = _interpolate(xt, ot)
    loo, _ = _interpolate(xt, ot, exclude_self=True)
    t = np.arange(30)
    for b in range(2):
        for f in range(3):
            o = obs[b, :, f]
            if not o.any():
                np.testing.assert_array_equal(values[b, :, f].numpy(), 0.0)
                assert (distance[b, :, f] == 30).all()
                continue
            # np.interp holds the end values constant, as ours does
            np.testing.assert_allclose(values[b, :, f].numpy(),
                                       np.interp(t, t[o], x[b, o, f]), atol=1e-12)
            for i in np.flatnonzero(o):  # leave-one-out at every observed entry
                keep = o.copy()
                keep[i] = False
                if keep.any():
                    np.testing.assert_allclose(loo[b, i, f].item(),
                                               np.interp(i, t[keep], x[b, keep, f]),
                                               atol=1e-12)
            gaps = np.abs(t[:, None] - t[o][None]).min(1)
            np.testing.assert_array_equal(distance[b, :, f].numpy(), gaps)
    np.testing.assert_array_equal(loo.numpy()[~obs], values.numpy()[~obs])


def test_seasonal_table_recovers_a_planted_cycle_under_a_trend():
    rng = np.random.default_rng(0)
    t = np.arange(24 * 40)
    cycle = np.sin(2 * np.pi * t / 24) + 0.5 * np.cos(4 * np.pi * t / 24)
    # a strong trend and a level shift: a plain per-phase mean (no moving-mean detrending)
    # would be off by several times the cycle's size
    Z = np.c_[cycle + 0.05 * t + 3.0 * (t > 500) + 0.05 * rng.normal(size=t.size),
              0.3 * rng.normal(size=t.size)]
    obs = rng.random(Z.shape) < 0.9
    table = _seasonal_table(Z, obs, [np.arange(t.size)], 24)
    assert table.shape == (24, 2)
    truth = cycle[:24] - cycle[:24].mean()
    assert np.abs(table[:, 0] - truth).max() < 0.1
    assert np.abs(table[:, 1]).max() < 0.25  # white noise has no cycle
    np.testing.assert_allclose(table.mean(0), 0.0, atol=1e-12)


def test_boosted_fill_is_nonlinear_and_out_of_fold():
    rng = np.random.default_rng(0)
    n = 600
    a = rng.normal(size=n)
    Z = np.c_[a, a ** 2 - 1 + 0.05 * rng.normal(size=n), rng.normal(size=n)]
    Z = (Z - Z.mean(0)) / Z.std(0)
    obs = np.ones(Z.shape, dtype=bool)
    folds = (np.arange(n) // 50) % 3
    fill, models = _boosted_cross_fill(Z, obs, [[0], [1], [2]], folds, max_iter=50,
                                       random_state=0)
    # column 1 is a square of column 0: no linear fill can find it, the trees do
    assert abs(np.corrcoef(Z[:, 0], Z[:, 1])[0, 1]) < 0.2
    assert np.corrcoef(fill[:, 1], Z[:, 1])[0, 1] > 0.7
    # column 2 is noise: a fill from models that saw the row would echo it, out of fold not
    assert abs(np.corrcoef(fill[:, 2], Z[:, 2])[0, 1]) < 0.15
    assert len(models[1]) == 3
    inside = models[2][0].predict(np.c_[Z[:, :2]])
    assert np.corrcoef(inside[folds != 0], Z[folds != 0, 2])[0, 1] > 0.3  # in-sample echo
    # transform: the mean of the fold models, missing predictors allowed
    Zm = Z.copy()
    Zm[:5, 0] = np.nan
    full = _predict_cross_fill(Zm, ~np.isnan(Zm), [[0], [1], [2]], models)
    assert np.isfinite(full).all()
    np.testing.assert_allclose(full[10:, 1], np.mean([m.predict(Z[10:, [0, 2]])
                                                      for m in models[1]], axis=0))
    single, none = _boosted_cross_fill(Z, obs, [[0, 1, 2]], folds)
    assert np.isnan(single).all() and none == [None] * 3


def test_precomputed_fill_is_unused_where_its_inputs_were_hidden():
    net = _NeuroMambaNet([np.array([0]), np.array([1, 2])], 3, 8, 4, 2, 4, 1, 2, True, True,
                         True, 0.9, 1.0, 10.0, None, cross_fill="boosting").double()
    x = torch.zeros(1, 10, 3, dtype=torch.float64)
    obs = torch.ones(1, 10, 3, dtype=torch.bool)
    obs[0, 4, 0] = False  # the value to fill
    fill = torch.full_like(x, 5.0)
    changed = torch.zeros_like(obs)
    _, base, _ = net.context(x, obs, fill=fill, fill_ok=torch.ones_like(obs), changed=changed)
    assert base[0, 4, 0] > 1.0  # the fill pulls the base away from the interpolation (0)
    changed[0, 4, 2] = True  # one input of column 0's fill was corrupted in this row
    obs2 = obs.clone()
    obs2[0, 4, 2] = False
    _, base, _ = net.context(x, obs2, fill=fill, fill_ok=torch.ones_like(obs), changed=changed)
    assert base[0, 4, 0] == 0.0
    # nothing present in the other groups: no fill either
    obs3 = obs.clone()
    obs3[0, 4] = False
    _, base, _ = net.context(x, obs3, fill=fill, fill_ok=torch.ones_like(obs))
    assert base[0, 4, 0] == 0.0


def test_boosted_fill_same_seed_and_base_only_switch():
    X = _stream()
    kw = {**TINY, "cross_fill": "boosting", "feature_groups": [[0], [1, 2]]}
    imp = NeuroMambaImputer(**kw).fit(X)
    np.testing.assert_array_equal(imp.transform(X), NeuroMambaImputer(**kw).fit(X).transform(X))
    assert len(imp.cross_fill_models_) == 3 and len(imp.cross_fill_models_[0]) == 3
    # the diagnostic switch: the same fitted model without the network's correction
    module = imp.net_.module_
    with torch.no_grad():
        torch.nn.init.normal_(module.head_weight, std=1.0)  # a correction that is not zero
    full = imp.transform(X)
    module.use_correction = False
    base = imp.transform(X)
    miss = np.isnan(X)
    assert np.abs(full[miss] - base[miss]).max() > 1e-3
    assert np.array_equal(full[~miss], base[~miss]) and np.array_equal(base[~miss], X[~miss])


def test_cross_group_fill_recovers_a_planted_linear_relation():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(500, 2))
    b = 0.8 * a[:, 0] - 0.5 * a[:, 1] + 0.01 * rng.normal(size=500)
    Z = np.c_[a, b, rng.normal(size=500)]
    obs = rng.random(Z.shape) < 0.95
    Z = np.where(obs, Z, np.nan)
    Z = (Z - np.nanmean(Z, 0)) / np.nanstd(Z, 0)
    weight, intercept = _cross_group_fill(np.nan_to_num(Z), obs, [[0, 1], [2, 3]],
                                          alpha=1e-6)
    assert weight[2, 2] == weight[2, 3] == weight[0, 1] == 0.0  # nothing inside a group
    # fitted on the rows where column 2 is observed; missing predictors count as the mean
    fit = weight[2] @ np.nan_to_num(Z).T + intercept[2]
    rows = obs[:, 2] & obs[:, 0] & obs[:, 1]
    assert np.corrcoef(fit[rows], Z[rows, 2])[0, 1] > 0.95
    assert abs(weight[2, 3]) < 0.1 and abs(weight[2, 0]) > 0.5
    single = _cross_group_fill(np.nan_to_num(Z), obs, [[0, 1, 2, 3]])
    assert not single[0].any() and not single[1].any()


def test_untrained_reconstruction_is_the_linear_interpolation():
    rng = np.random.default_rng(0)
    X = np.cumsum(rng.normal(size=(200, 2)), axis=0)
    X[rng.random(X.shape) < 0.2] = np.nan
    imp = NeuroMambaImputer(feature_groups=[[0, 1]], window=200, max_epochs=1, lr=1e-12,
                            gate=False, random_state=0).fit(X)  # one group: no cross fill
    out = imp.transform(X)
    t = np.arange(200)
    for f in range(2):
        o = ~np.isnan(X[:, f])
        np.testing.assert_allclose(out[~o, f], np.interp(t[~o], t[o], X[o, f]), rtol=1e-4,
                                   atol=1e-4 * np.nanstd(X[:, f]))


# -- windows -----------------------------------------------------------------------------------
def test_windows_cover_every_row_and_never_cross_series():
    series = [np.arange(0, 30), np.arange(30, 35), np.arange(35, 100)]
    index = _window_index(series, 12, 5)
    valid = index[index >= 0]
    assert set(valid.tolist()) == set(range(100))
    for row in index:
        ids = {next(k for k, s in enumerate(series) if r in s) for r in row if r >= 0}
        assert len(ids) == 1
    assert (index == -1).sum() == 12 - 5  # the 5-row series is padded


# -- estimator ---------------------------------------------------------------------------------
def test_outage_is_filled_from_the_other_group():
    # a curved signal (interpolation across the 24-step gap is far off) and its noisy twin in
    # another group: the cross-group path must carry the twin into the gap
    rng = np.random.default_rng(0)
    t = np.arange(300, dtype=float)
    x = np.sin(t / 3)
    X = np.c_[x, x + 0.05 * rng.normal(size=300), np.cos(t / 11)]
    X[100:124, 0] = np.nan
    truth = x[100:124]
    interp = np.interp(t[100:124], t[~np.isnan(X[:, 0])], X[~np.isnan(X[:, 0]), 0])
    assert np.abs(interp - truth).mean() / x.std() > 1.0
    imp = NeuroMambaImputer(feature_groups=[[0], [1, 2]], window=48, n_layers=1,
                            max_epochs=3, random_state=0).fit(X)
    assert np.abs(imp.transform(X)[100:124, 0] - truth).mean() / x.std() < 0.4
    no_mix = clone(imp).set_params(mixing=False).fit(X)  # the ablation cannot borrow
    assert np.abs(no_mix.transform(X)[100:124, 0] - truth).mean() / x.std() > 1.0


def test_boosted_fill_carries_a_nonlinear_relation_into_an_outage():
    # column 1 is the square of column 0 (another group): a linear cross-group fill cannot
    # carry it across the 24-step outage, the boosted fill (the default) can
    rng = np.random.default_rng(0)
    t = np.arange(480, dtype=float)
    a = np.sin(t / 5) + 0.3 * np.sin(t / 2.3)
    X = np.c_[a, a ** 2 + 0.02 * rng.normal(size=t.size)]
    truth = X[200:224, 1].copy()
    X[200:224, 1] = np.nan
    kw = dict(feature_groups=[[0], [1]], window=48, n_layers=1, max_epochs=2, random_state=0)

    def mae(cross_fill):
        imp = NeuroMambaImputer(cross_fill=cross_fill, **kw).fit(X)
        return np.abs(imp.transform(X)[200:224, 1] - truth).mean() / truth.std()

    boosted, linear = mae("boosting"), mae("linear")
    assert boosted < 0.35 and boosted < 0.5 * linear


def test_edge_anchors_carry_the_interpolation_across_window_edges():
    # a stream with a 9-row gap that spans two windows: with the anchors each window
    # interpolates between the observations on either side of the whole gap, as np.interp
    # over the series does
    rng = np.random.default_rng(0)
    n, window = 40, 8
    Z = rng.normal(size=(n, 2))
    obs = np.ones(Z.shape, dtype=bool)
    obs[14:23, 0] = False
    obs[:3, 1] = False  # nothing before the first window on this side: no left anchor
    series = [np.arange(n)]
    index = _window_index(series, window, 4)
    anchors = _edge_anchors(Z, obs, series, index, half=2)
    assert anchors.shape == (len(index), 16)
    w = np.flatnonzero(index[:, 0] == 16)[0]  # rows 16..23: observed only at its last row
    assert anchors[w, 0] == Z[13, 0] and anchors[w, 2] == 3  # 16 - 13
    assert anchors[w, 1] == Z[15, 1] and anchors[w, 3] == 1
    assert anchors[w, 4] == Z[24, 0] and anchors[w, 6] == 1
    # smoothed levels at the anchors: the mean over the anchor and the two observed rows
    # beyond it (outside the window; no profile here)
    assert anchors[w, 12] == pytest.approx(Z[11:14, 0].mean())
    assert anchors[w, 14] == pytest.approx(Z[24:27, 0].mean())
    assert anchors[0, 2] == 0 and anchors[0, 3] == 0  # first window: no rows before it
    last = np.flatnonzero(index[:, -1] == n - 1)[0]
    assert anchors[last, 6] == 0 and anchors[last, 7] == 0
    x = torch.as_tensor(np.where(obs, Z, 0.0)[index])
    o = torch.as_tensor(obs[index])
    a = torch.as_tensor(anchors)
    values, distance = _interpolate(x, o, anchors=(a[:, 0:2], a[:, 2:4], a[:, 4:6], a[:, 6:8]))
    t = np.arange(n)
    truth = np.interp(t, t[obs[:, 0]], Z[obs[:, 0], 0])
    np.testing.assert_allclose(values[w, :, 0].numpy(), truth[16:24], atol=1e-12)
    gaps = np.abs(t[:, None] - t[obs[:, 0]][None]).min(1)
    np.testing.assert_array_equal(distance[w, :, 0].numpy(), gaps[16:24])
    # without anchors the same window holds its one observed value constant (the old context)
    plain, _ = _interpolate(x, o)
    np.testing.assert_allclose(plain[w, :, 0].numpy(), Z[23, 0], atol=1e-12)


def test_box_mean_averages_the_present_entries_only():
    x = torch.arange(10.0).view(1, 10, 1)
    obs = torch.ones_like(x, dtype=torch.bool)
    obs[0, 4] = False
    got = _box_mean(x, obs, 2)[0, :, 0].numpy()
    want = [np.mean([v for v in range(max(0, t - 2), min(10, t + 3)) if v != 4])
            for t in range(10)]
    np.testing.assert_allclose(got, want)


def _long_gap_mae(X, truth, gap, **params):
    """MAE over ``gap`` (an all-sensor outage of ``X``) of a small hourly imputer."""
    Xc = X.copy()
    Xc[gap] = np.nan
    imp = NeuroMambaImputer(window=48, n_layers=1, max_epochs=3, cross_fill="linear",
                            seasonal_period=24, random_state=0, **params).fit(Xc)
    return np.abs(imp.transform(Xc)[gap] - truth).mean()


def test_smoothed_level_bridges_a_noisy_gap_from_the_days_around_it():
    # a flat level with strong reading noise and a 40-hour device outage: the two readings at
    # the gap's ends are noisy, the level averaged over the days around the gap is not
    rng = np.random.default_rng(1)
    t = np.arange(24 * 30, dtype=float)
    cycle = np.sin(2 * np.pi * t / 24)
    X = np.c_[cycle + 0.6 * rng.normal(size=t.size), cycle + 0.6 * rng.normal(size=t.size)]
    truth = np.c_[cycle, cycle][300:340]
    smooth = _long_gap_mae(X, truth, slice(300, 340))
    raw = _long_gap_mae(X, truth, slice(300, 340), smooth_level=False)
    assert smooth < 0.8 * raw  # 0.31 vs 0.40 when written


def test_local_profile_follows_a_drifting_cycle_and_never_reads_its_own_row():
    rng = np.random.default_rng(0)
    t = np.arange(24 * 30)
    amplitude = np.where(t < 24 * 15, 0.3, 2.0)  # a weak cycle, then a strong one
    cycle = amplitude * np.sin(2 * np.pi * t / 24)
    Z = np.c_[cycle + 0.02 * t + 0.05 * rng.normal(size=t.size)]
    obs = np.ones(Z.shape, dtype=bool)
    series = [np.arange(t.size)]
    table = _seasonal_table(Z, obs, series, 24)
    local = _local_profile(Z, obs, series, 24, table, 3)
    late = t >= 24 * 19  # every neighbour within 3 cycles has the strong amplitude
    err_local = np.abs(local[late, 0] - cycle[late]).mean()
    err_table = np.abs(table[t[late] % 24, 0] - cycle[late]).mean()
    assert err_local < 0.6 * err_table
    # the profile of a row reads other rows only: changing one value leaves its own
    # profile unchanged and moves its neighbours' one period away
    Z2 = Z.copy()
    Z2[300, 0] += 10.0
    local2 = _local_profile(Z2, obs, series, 24, table, 3)
    assert local2[300, 0] == pytest.approx(local[300, 0], abs=1e-9)
    assert local2[324, 0] != local[324, 0] and local2[276, 0] != local[276, 0]
    # with no neighbours at all the table is returned
    none = _local_profile(Z, np.zeros_like(obs), series, 24, table, 3)
    np.testing.assert_allclose(none[:, 0], table[t % 24, 0])


def test_local_profile_is_not_read_where_the_training_corruption_hid_its_source():
    net = _NeuroMambaNet([np.array([0])], 1, 8, 4, 2, 4, 1, 2, True, False, True, 0.9, 1.0,
                         10.0, None, seasonal_period=4).double()
    x = torch.zeros(1, 12, 1, dtype=torch.float64)
    obs = torch.ones(1, 12, 1, dtype=torch.bool)
    obs[0, 5, 0] = False
    local = torch.full_like(x, 1.0)
    stream = torch.full_like(x, -1.0)
    changed = torch.zeros_like(obs)
    kw = dict(profile=local, stream_profile=stream)
    ch, _, _ = net.context(x, obs, changed=changed, **kw)
    seasonal = ch[..., -1]
    assert seasonal[0, 5, 0] == 0.0  # a flat profile interpolates to itself: no correction
    changed[0, 1, 0] = True  # row 1 is read by the local profile of rows 5 and 9
    local2 = local.clone()
    local2[0, 5, 0] = 3.0  # (the profile of row 5 differs from its neighbours')
    ch, _, _ = net.context(x, obs, changed=changed, profile=local2, stream_profile=stream)
    # row 5 falls back to the stream profile (-1), its anchors 4 and 6 keep the local one (1)
    assert ch[0, 5, 0, -1] == pytest.approx(-2.0)
    ch, _, _ = net.context(x, obs, profile=local2, stream_profile=stream)  # inference
    assert ch[0, 5, 0, -1] == pytest.approx(2.0)


def test_long_device_outage_follows_the_local_daily_cycle():
    # every column down for 60 hours (longer than the 48-row window) in a stream whose daily
    # cycle changes its amplitude over the weeks: the edge anchors and the local profile
    # carry the level and the cycle through the gap, the window-bound context and the
    # stream-wide profile do not
    rng = np.random.default_rng(0)
    t = np.arange(24 * 40, dtype=float)
    amplitude = 1.0 + 0.8 * np.sin(2 * np.pi * t / (24 * 20))
    cycle = amplitude * np.sin(2 * np.pi * t / 24)
    level = 2.0 * np.sin(2 * np.pi * t / (24 * 9))  # the level moves across the gap
    X = np.c_[level + cycle, 0.5 * level + cycle + 0.05 * rng.normal(size=t.size)]
    truth = X[410:470].copy()
    scale = X.std(0).mean()
    new = _long_gap_mae(X, truth, slice(410, 470)) / scale
    old = _long_gap_mae(X, truth, slice(410, 470), edge_anchors=False, seasonal_cycles=0) / scale
    assert new < 0.25 and new < 0.7 * old  # 0.13 vs 0.30 when written


def test_seasonal_period_fills_a_device_outage_from_the_daily_cycle():
    t = np.arange(480, dtype=float)
    X = np.c_[np.sin(2 * np.pi * t / 24), np.cos(2 * np.pi * t / 24) + 0.01 * t / 48]
    X[200:218] = np.nan  # every column down for 18 steps
    truth = np.c_[np.sin(2 * np.pi * t / 24), np.cos(2 * np.pi * t / 24) + 0.01 * t / 48][
        200:218]
    kw = dict(window=96, n_layers=1, max_epochs=3, cross_fill="linear", random_state=0)

    def mae(imp):
        return np.abs(imp.fit(X).transform(X)[200:218] - truth).mean()

    plain, seasonal = mae(NeuroMambaImputer(**kw)), mae(NeuroMambaImputer(seasonal_period=24,
                                                                          **kw))
    assert seasonal < 0.8 * plain


def test_planted_linear_dynamic_gap_is_recovered():
    t = np.arange(160, dtype=float)
    x = 0.01 * t
    X = np.c_[x, x]  # a fully observed twin
    X[70:80, 0] = np.nan
    imp = NeuroMambaImputer(window=32, stride=4, d_model=16, d_state=4, n_layers=1,
                            max_epochs=5, batch_size=8, lr=1e-2, random_state=0).fit(X)
    out = imp.transform(X)
    mae_sd = np.abs(out[70:80, 0] - x[70:80]).mean() / x.std()
    assert mae_sd < 0.05
    # a fill that ignores both the twin and the time context is far off (the column mean)
    assert np.abs(np.nanmean(X[:, 0]) - x[70:80]).mean() / x.std() > 0.05


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_output_has_no_nan_and_observed_entries_are_unchanged(dtype):
    X = _stream().astype(dtype)
    imp = NeuroMambaImputer(**TINY).fit(X)
    out = imp.transform(X)
    assert out.shape == X.shape and out.dtype == dtype
    assert not np.isnan(out).any()
    obs = ~np.isnan(X)
    np.testing.assert_array_equal(out[obs], X[obs])
    assert imp.gate_rate_.shape == (3,) and imp.reconstruction_error_.shape == (3,)
    assert imp.n_iter_ == 2 and len(imp.loss_curve_) == 2


def test_rectify_observed_replaces_flagged_values_only():
    X = _stream()
    imp = NeuroMambaImputer(rectify_observed=True, **TINY).fit(X)
    # force the gate to fire everywhere: every observed value is replaced by the reconstruction
    with torch.no_grad():
        imp.net_.module_.gate_bias.fill_(5.0)
    flags = imp.predict_corruption(X)
    obs = ~np.isnan(X)
    np.testing.assert_array_equal(flags, obs)
    out = imp.transform(X)
    assert not np.isnan(out).any()
    assert np.all(out[obs] != X[obs])
    plain = clone(imp).set_params(rectify_observed=False).fit(X)
    with torch.no_grad():
        plain.net_.module_.gate_bias.fill_(5.0)
    np.testing.assert_array_equal(plain.transform(X)[obs], X[obs])


def _twin_stream():
    # column 1 is a noisy twin of column 0 (another group): the cross-group fills lean on it
    rng = np.random.default_rng(0)
    t = np.arange(400.0)
    x = np.sin(t / 7)
    return np.c_[x, x + 0.05 * rng.normal(size=400), np.cos(t / 11)]


@pytest.mark.parametrize("cross_fill", ["linear", "boosting"])
def test_a_flagged_impulse_feeds_no_fill(cross_fill):
    # an observed spike of 100 in column 1, which the gate flags: on main the missing twin in
    # the same row came out 41.8 (linear fill; 0.32 boosted, truth -0.29) and the gap next
    # to the spike was interpolated from it (34.3 and 16.8 where the truth is -0.46, -0.63)
    X = _twin_stream()
    imp = NeuroMambaImputer(feature_groups=[[0], [1, 2]], window=32, n_layers=1, max_epochs=3,
                            cross_fill=cross_fill, random_state=0).fit(X)
    Xc, r = X.copy(), 200
    Xc[r, 1], Xc[r, 0], Xc[r + 1:r + 3, 1] = 100.0, np.nan, np.nan
    assert imp.predict_corruption(Xc)[r, 1]
    out = imp.transform(Xc)
    assert abs(out[r, 0] - X[r, 0]) < 0.15
    np.testing.assert_allclose(out[r + 1:r + 3, 1], X[r + 1:r + 3, 1], atol=0.15)
    # the spike itself stays (rectify_observed=False) or is replaced by a fill near the truth
    assert out[r, 1] == 100.0
    rectified = clone(imp).set_params(rectify_observed=True).fit(X).transform(Xc)
    assert abs(rectified[r, 1] - X[r, 1]) < 0.3


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_one_wild_value_does_not_sink_the_stream(precision):
    # one observed 1e50: on main transform raised "the reconstruction is not finite; refit
    # with a smaller lr or precision='float64'", a float64 fit included. It is flagged and
    # left out of every fill: the stream is filled exactly as with that entry missing
    X = _twin_stream()
    imp = NeuroMambaImputer(feature_groups=[[0], [1, 2]], window=32, n_layers=1, max_epochs=2,
                            cross_fill="linear", precision=precision, random_state=0).fit(X)
    Xc, r = X.copy(), 200
    Xc[r, 0], Xc[190:196, 1] = np.nan, np.nan
    Xw, Xn = Xc.copy(), Xc.copy()
    Xw[r, 1], Xn[r, 1] = 1e50, np.nan
    out = imp.transform(Xw)
    assert np.all(np.isfinite(out)) and out[r, 1] == 1e50
    missing = np.isnan(Xc)
    np.testing.assert_array_equal(out[missing], imp.transform(Xn)[missing])
    flags = imp.predict_corruption(Xw)
    assert flags[r, 1]
    np.testing.assert_array_equal(np.delete(flags.ravel(), r * 3 + 1),
                                  np.delete(imp.predict_corruption(Xn).ravel(), r * 3 + 1))
    rectified = clone(imp).set_params(rectify_observed=True).fit(X).transform(Xw)
    assert abs(rectified[r, 1] - X[r, 1]) < 0.3


def test_a_non_finite_reconstruction_names_float64_only_to_a_float32_fit():
    X = _stream()
    for precision, hint in (("float32", True), ("float64", False)):
        imp = NeuroMambaImputer(**{**TINY, "precision": precision}).fit(X)
        with torch.no_grad():
            imp.net_.module_.head_bias.fill_(float("nan"))
        with pytest.raises(FloatingPointError, match="not finite") as info:
            imp.transform(X)
        assert ("float64" in str(info.value)) is hint


def test_gate_learns_to_flag_impulses():
    rng = np.random.default_rng(0)
    t = np.arange(600, dtype=float)
    X = np.c_[np.sin(t / 8), np.cos(t / 8)] + 0.02 * rng.normal(size=(600, 2))
    imp = NeuroMambaImputer(window=32, n_layers=1, max_epochs=3, cross_fill="linear",
                            random_state=0).fit(X)
    Xc = X.copy()
    where = rng.random(X.shape) < 0.02
    Xc[where] += 5 * X.std(axis=0)[None].repeat(600, 0)[where] * rng.choice([-1, 1],
                                                                             where.sum())
    flags = imp.predict_corruption(Xc)
    recall = flags[where].mean()
    false_rate = flags[~where].mean()
    assert recall > 0.9 and false_rate < 0.03
    # the rectified stream is close to the clean one at the impulses
    out = clone(imp).set_params(rectify_observed=True).fit(X).transform(Xc)
    assert np.abs(out - X)[where].mean() < 0.75 * X.std()  # 5 sd without rectification


def test_same_seed_same_result_and_series_id_routing():
    X = _stream(200)
    sid = np.repeat([0, 1], 100)
    a = NeuroMambaImputer(**TINY).fit(X, series_id=sid).transform(X, series_id=sid)
    b = NeuroMambaImputer(**TINY).fit(X, series_id=sid).transform(X, series_id=sid)
    np.testing.assert_array_equal(a, b)
    c = NeuroMambaImputer(**{**TINY, "random_state": 1}).fit(X, series_id=sid).transform(
        X, series_id=sid)
    assert not np.array_equal(a, c)
    with config_context(enable_metadata_routing=True):
        imp = NeuroMambaImputer(**TINY).set_fit_request(series_id=True).set_transform_request(
            series_id=True)
        pipe = make_pipeline(imp, Ridge().set_fit_request(sample_weight=False)
                             .set_score_request(sample_weight=False))
        y = np.arange(200.0)
        pipe.fit(X, y, series_id=sid)
        np.testing.assert_array_equal(pipe[0].transform(X, series_id=sid), a)


def test_in_pipeline_before_a_regressor_like_iterative_imputer():
    rng = np.random.default_rng(0)
    X = _stream(200)
    y = np.nan_to_num(X[:, 0]) + 0.1 * rng.normal(size=200)
    pipe = make_pipeline(NeuroMambaImputer(**TINY), Ridge()).fit(X, y)
    pred = pipe.predict(X)
    assert pred.shape == (200,) and np.all(np.isfinite(pred))


def test_feature_groups_by_name_with_pandas():
    pd = pytest.importorskip("pandas", reason="pandas input")
    X = pd.DataFrame(_stream(), columns=["a", "b", "c"])
    imp = NeuroMambaImputer(feature_groups=[["a", "b"], ["c"]], **TINY).fit(X)
    assert [g.tolist() for g in imp.feature_groups_] == [[0, 1], [2]]
    out = imp.set_output(transform="pandas").transform(X)
    assert list(out.columns) == ["a", "b", "c"] and not out.isna().any().any()


# -- bad input ---------------------------------------------------------------------------------
def test_bad_input_errors_name_the_argument():
    X = _stream()
    imp = NeuroMambaImputer(**TINY)
    Xi = X.copy()
    Xi[3, 1] = np.inf
    with pytest.raises(ValueError, match="X contains inf"):
        imp.fit(Xi)
    Xn = X.copy()
    Xn[:, 2] = np.nan
    with pytest.raises(ValueError, match=r"column 2 has no observed value; drop it"):
        imp.fit(Xn)
    with pytest.raises(ValueError, match=r"partition the 3 columns; column 2 is missing"):
        clone(imp).set_params(feature_groups=[[0, 1]]).fit(X)
    with pytest.raises(ValueError, match=r"partition the 3 columns; column 1 appears twice"):
        clone(imp).set_params(feature_groups=[[0, 1], [1, 2]]).fit(X)
    with pytest.raises(ValueError, match=r"feature_groups holds 7"):
        clone(imp).set_params(feature_groups=[[0, 1], [2, 7]]).fit(X)
    with pytest.raises(ValueError, match=r"series_id has 90 entries, X has 160 rows"):
        imp.fit(X, series_id=np.zeros(90))
    with pytest.raises(ValueError, match=r"window=16 is longer than every series"):
        imp.fit(X, series_id=np.repeat(np.arange(16), 10))
    with pytest.raises(ValueError, match=r"d_model=8 must be divisible by n_mix_heads=3"):
        clone(imp).set_params(n_mix_heads=3).fit(X)
    with pytest.raises(ValueError, match=r"corruption has unknown keys \['p_pont'\]"):
        clone(imp).set_params(corruption={"p_pont": 0.1}).fit(X)


@pytest.mark.parametrize("corruption, match", [
    ({"p_point": 5.0}, r"corruption\['p_point'\] must be a real number in \[0, 1\]; got 5.0"),
    ({"p_block": -0.1}, r"corruption\['p_block'\] must be .* got -0.1"),
    ({"p_group": "0.1"}, r"corruption\['p_group'\] must be .* got '0.1'"),
    ({"p_device": True}, r"corruption\['p_device'\] must be .* got True"),
    ({"impulse_scale": -3}, r"corruption\['impulse_scale'\] must be .* \[0, inf\); got -3"),
    ({"impulse_scale": float("nan")}, r"corruption\['impulse_scale'\] must be .* got nan"),
])
def test_corruption_rates_are_checked_up_front(corruption, match):
    # issue 40, item 10: these used to pass and then fail inside torch or train silently
    # (a rate of 5 hid everything, a negative impulse scale flipped the impulses)
    with pytest.raises(ValueError, match=match):
        NeuroMambaImputer(**TINY, corruption=corruption).fit(_stream())


def test_named_column_without_observations():
    pd = pytest.importorskip("pandas", reason="pandas input")
    X = pd.DataFrame(_stream(), columns=["CO_GT", "T", "NMHC_GT"])
    X["NMHC_GT"] = np.nan
    with pytest.raises(ValueError, match=r"column 2 \('NMHC_GT'\) has no observed value"):
        NeuroMambaImputer(**TINY).fit(X)


# -- divergence, scaling, constant columns -------------------------------------------------------
def _brief_stream():
    """The stream of the user report: 120 rows, four smooth columns, 15% missing."""
    rng = np.random.RandomState(0)
    t = np.arange(120)
    X = np.c_[np.sin(t / 5), np.cos(t / 5), np.sin(t / 7), t / 100.]
    hidden = rng.rand(120, 4) < .15
    Xm = X.copy()
    Xm[hidden] = np.nan
    return X, Xm, hidden


def test_non_finite_loss_stops_the_fit_with_a_warning_and_a_finite_model():
    # lr=1e4: loss_curve_ used to read [0.393 nan nan], predict_corruption answered from a
    # NaN model and only transform raised a FloatingPointError
    from sklearn.exceptions import ConvergenceWarning

    X, Xm, hidden = _brief_stream()
    imp = NeuroMambaImputer(window=16, max_epochs=3, lr=1e4, random_state=0)
    with pytest.warns(ConvergenceWarning, match="non-finite in epoch"):
        imp.fit(Xm)
    assert all(torch.isfinite(p).all() for p in imp.net_.module_.state_dict().values()
               if p.is_floating_point())
    assert len(imp.loss_curve_) == imp.n_iter_ < 3 and np.all(np.isfinite(imp.loss_curve_))
    assert np.all(np.isfinite(imp.reconstruction_error_)) and np.all(np.isfinite(imp.gate_rate_))
    out = imp.transform(Xm)
    assert np.all(np.isfinite(out)) and np.abs(out - X)[hidden].mean() < 0.5
    np.testing.assert_array_equal(out[~hidden], Xm[~hidden])
    flags = imp.predict_corruption(Xm)
    assert flags.shape == X.shape and not flags[hidden].any()


def test_finite_divergence_warns_and_a_default_fit_does_not():
    # lr=100: the loss rises 0.39 -> 30179 and the imputed MAE is about 12,700 on data in
    # [-1, 1.2]
    from sklearn.exceptions import ConvergenceWarning

    X, Xm, hidden = _brief_stream()
    with pytest.warns(ConvergenceWarning, match="hundredfold"):
        NeuroMambaImputer(window=16, max_epochs=3, lr=100., random_state=0).fit(Xm)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        imp = NeuroMambaImputer(window=16, max_epochs=3, random_state=0).fit(Xm)
    assert imp.n_iter_ == len(imp.loss_curve_) == 3
    assert np.abs(imp.transform(Xm) - X)[hidden].mean() < 0.2


@pytest.mark.parametrize("factor, precision", [(1e-170, "float32"), (1e300, "float64"),
                                               (1e300, "float32")])
def test_extreme_scales_give_scaled_imputations(factor, precision):
    # the column moments come from power-of-two pre-scaled values: at 1e-170 the plain std
    # underflowed (scale_ [1 1 1 1], imputations ~0.03 against observed values <= 1.2e-170),
    # at 1e300 its squares overflowed and transform raised a FloatingPointError
    X, Xm, hidden = _brief_stream()
    params = dict(window=16, max_epochs=3, cross_fill="linear", precision=precision,
                  random_state=0)
    ref = NeuroMambaImputer(**params).fit(Xm)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        imp = NeuroMambaImputer(**params).fit(Xm * factor)
        out = imp.transform(Xm * factor)
    np.testing.assert_allclose(imp.scale_, ref.scale_ * factor, rtol=1e-12)
    np.testing.assert_allclose(imp.mean_, ref.mean_ * factor, rtol=1e-12)
    np.testing.assert_allclose(out[hidden], ref.transform(Xm)[hidden] * factor, rtol=1e-6)
    np.testing.assert_array_equal(out[~hidden], (Xm * factor)[~hidden])


@pytest.mark.parametrize("exponent", [-565, 997])
def test_power_of_two_scales_give_bitwise_scaled_imputations(exponent):
    # 2**-565 ~ 8e-171 and 2**997 ~ 1.3e300: with the default boosted cross-group fill the
    # imputations are bitwise those of the unscaled stream times the factor (at 1e300 itself
    # the boosting's bins see the rounding of X * 1e300 and the fills differ by up to 0.05)
    X, Xm, hidden = _brief_stream()
    params = dict(window=16, max_epochs=2, random_state=0)
    ref = NeuroMambaImputer(**params).fit_transform(Xm)
    out = NeuroMambaImputer(**params).fit_transform(np.ldexp(Xm, exponent))
    np.testing.assert_array_equal(out, np.ldexp(ref, exponent))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_constant_columns_are_imputed_by_their_value(dtype):
    # a column of 7.0 was imputed 6.994-7.003 (the network's noise around 0 times scale 1);
    # a column of 0.1 had the scale 2.8e-17 of the rounding errors of its mean
    from sklearn.impute import SimpleImputer

    X, Xm, hidden = _brief_stream()
    Xm[:, 2] = np.where(hidden[:, 2], np.nan, 7.0)
    Xm[:, 3] = np.where(hidden[:, 3], np.nan, 0.1)
    Xm = Xm.astype(dtype)
    imp = NeuroMambaImputer(window=16, max_epochs=3, random_state=0).fit(Xm)
    out = imp.transform(Xm)
    np.testing.assert_array_equal(imp.mean_[2:], np.array([7.0, 0.1], dtype=dtype))
    np.testing.assert_array_equal(imp.scale_[2:], [1.0, 1.0])
    # exactly SimpleImputer's 7; its mean of the 0.1s carries their rounding errors
    np.testing.assert_array_equal(out[:, 2], SimpleImputer().fit_transform(Xm)[:, 2])
    np.testing.assert_array_equal(out[:, 2:], np.tile(np.array([7.0, 0.1], dtype=dtype),
                                                      (120, 1)))
    assert np.all(np.isfinite(out)) and np.abs(out - X)[:, :2][hidden[:, :2]].mean() < 0.2


def test_fitted_state_ends_with_an_underscore():
    # nothing but the parameters and the fitted attributes (``*_``) is kept after fit
    imp = NeuroMambaImputer(**TINY).fit(_stream())
    kept = set(vars(imp)) - set(imp.get_params())
    assert kept and all(name.endswith("_") for name in kept), sorted(kept)
    assert isinstance(imp.loss_curve_, list)  # the naming table: a list of float
    assert all(isinstance(v, float) for v in imp.loss_curve_)


def test_small_fits_run_on_one_thread_and_leave_the_thread_settings_unchanged(monkeypatch):
    # many small OpenMP fits spun their whole pool on a busy machine (three boosted fits of
    # 650 x 10: 21-31 s at load 5, 1 s on one thread): the boosted fill and the network run
    # on one thread for small work, and the caller's settings are restored afterwards
    from threadpoolctl import threadpool_info, threadpool_limits

    from sklearn_icml26.imputation import _neuromamba

    seen = {}

    def spy(name, func):
        def wrapper(*args, **kwargs):
            seen.setdefault(name, []).append(
                (torch.get_num_threads(),
                 {d["num_threads"] for d in threadpool_info() if d["user_api"] == "openmp"}))
            return func(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(_neuromamba, "_boosted_cross_fill",
                        spy("boosted", _neuromamba._boosted_cross_fill))
    monkeypatch.setattr(_neuromamba, "_predict_cross_fill",
                        spy("predict", _neuromamba._predict_cross_fill))
    monkeypatch.setattr(NeuroMambaImputer, "_fit_net", spy("net", NeuroMambaImputer._fit_net))
    X = _stream()
    previous = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with threadpool_limits(limits=2):
            state = (torch.get_num_threads(), [d["num_threads"] for d in threadpool_info()])
            imp = NeuroMambaImputer(**{**TINY, "cross_fill": "boosting"}).fit(X)
            imp.transform(X)
            assert (torch.get_num_threads(),
                    [d["num_threads"] for d in threadpool_info()]) == state
            assert set(seen) == {"boosted", "predict", "net"}
            assert all(calls == [(1, {1})] * len(calls) for calls in seen.values()), seen
            # above the size rule the caller's threads are left as they are
            seen.clear()
            monkeypatch.setattr(_neuromamba, "_SMALL_FILL", 0)
            monkeypatch.setattr(_neuromamba, "_SMALL_BATCH", 0)
            clone(imp).set_params(cross_fill="linear").fit(X)  # linear: no spinning trees
            assert seen["net"] == [(2, {2})], seen
            assert (torch.get_num_threads(),
                    [d["num_threads"] for d in threadpool_info()]) == state
    finally:
        torch.set_num_threads(previous)
