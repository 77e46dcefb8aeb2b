"""ESERegressor(seasonal_period=...): planted seasonal share profiles, the seasonal aggregate,
the detection test, calibrated intervals, bad input, and seasonal_period=None unchanged."""

import numpy as np
import pytest
from conftest import require_data
from numpy.testing import assert_allclose

from sklearn_icml26.datasets import load_seasonal_panel, make_interacting_systems
from sklearn_icml26.forecasting import ESERegressor, sliding_window
from sklearn_icml26.forecasting._shares import _seasonal_profile_kernels, _totals


def planted_panel(n_timesteps=120, period=4, growth=1.01, noise=0.0, random_state=0,
                  n_systems=5):
    """Shares ``base_i + profile_{i, t mod m}`` (exactly periodic, sum 1) times an aggregate
    ``100 growth^t season_{t mod m}`` (exact seasonal growth); multiplicative noise if asked."""
    rng = np.random.default_rng(random_state)
    base = rng.dirichlet(np.full(n_systems, 5.0))
    profile = rng.normal(scale=0.3, size=(n_systems, period)) * base[:, None]
    profile -= profile.mean(axis=1, keepdims=True)  # zero mean over the season
    profile -= profile.mean(axis=0, keepdims=True)  # zero sum over systems: shares sum to 1
    season = 1.0 + 0.4 * rng.uniform(-1, 1, size=period)  # no short recurrence
    t = np.arange(n_timesteps)
    shares = base[None, :] + profile[:, t % period].T
    assert shares.min() > 0
    aggregate = 100.0 * growth**t * season[t % period]
    Y = aggregate[:, None] * shares
    if noise:
        Y = Y * np.exp(noise * rng.standard_normal(Y.shape))
    return Y, shares, aggregate


@pytest.mark.parametrize("form", ["profile", "difference"])
@pytest.mark.parametrize("horizon", [1, 3, 5, 8])
@pytest.mark.parametrize("damping", [0.0, 0.5, 1.0])
def test_planted_profile_is_recovered_exactly(horizon, damping, form):
    # known answer: periodic shares and exact seasonal growth are forecast without error,
    # at horizons below, equal to and above the period (5: not a multiple of it)
    period, p = 4, 8
    Y, shares, aggregate = planted_panel(period=period)
    X, y = sliding_window(Y, p, horizon=horizon)
    est = ESERegressor(horizon=horizon, seasonal_period=period, damping=damping,
                       share_trend=0.0, aggregate_lags=1, seasonal_shares=form).fit(
        X[:-20], y[:-20])
    assert est.seasonal_shares_ == form
    target_rows = np.arange(len(X))[-20:] + p - 1 + horizon
    assert_allclose(est.equilibrium_shares(X[-20:]), shares[target_rows], atol=1e-12)
    assert_allclose(est.predict(X[-20:]), Y[target_rows], rtol=1e-9)
    assert est.scaling_ == "seasonal"


@pytest.mark.parametrize("horizon", [1, 4, 6, 9])
def test_difference_form_follows_a_drifting_profile_exactly(horizon):
    # periodic profile plus a linear drift of the composition: the seasonal differences are
    # constant, so s_b + ceil(h / m) * (their level) is the target's share, at any horizon;
    # the profile form (a profile averaged over seasons) is biased by the drift
    period, p, n = 4, 12, 5
    rng = np.random.default_rng(3)
    base = rng.dirichlet(np.full(n, 5.0))
    profile = rng.normal(scale=0.2, size=(n, period)) * base[:, None]
    profile -= profile.mean(axis=1, keepdims=True)
    profile -= profile.mean(axis=0, keepdims=True)
    drift = rng.normal(size=n) * 1e-4
    drift -= drift.mean()
    t = np.arange(100)
    shares = base[None, :] + profile[:, t % period].T + drift[None, :] * t[:, None]
    assert shares.min() > 0
    Y = 50.0 * shares
    X, y = sliding_window(Y, p, horizon=horizon)
    errors = {}
    for form in ("difference", "profile"):
        est = ESERegressor(horizon=horizon, seasonal_period=period, seasonal_shares=form,
                           damping=0.5, share_trend=0.0).fit(X[:-10], y[:-10])
        errors[form] = np.abs(est.equilibrium_shares(X[-10:]) - y[-10:] / 50.0).max()
    assert errors["difference"] < 1e-12
    assert errors["profile"] > 1e-5


def test_auto_chooses_the_form_on_the_validation_windows():
    Y, _, _ = planted_panel(n_timesteps=200, period=12, noise=0.02, random_state=1,
                            n_systems=10)
    X, y = sliding_window(Y, 24)
    est = ESERegressor(seasonal_period=12).fit(X, y)
    assert est.seasonal_shares_ in ("profile", "difference")
    assert est.selection_scores_.shape == (3, 7, 3)
    f, g, j = np.unravel_index(np.argmin(est.selection_scores_), (3, 7, 3))
    assert est.seasonal_shares_ == ("profile", "difference", "none")[f]
    assert est.seasonal_shares_ != "none"  # the planted profile is found
    fixed = ESERegressor(seasonal_period=12, seasonal_shares=est.seasonal_shares_,
                         damping=est.damping_, share_trend=est.share_trend_).fit(X, y)
    assert_allclose(fixed.predict(X[-5:]), est.predict(X[-5:]), rtol=1e-12)


def test_without_the_season_the_planted_panel_is_missed():
    Y, _, _ = planted_panel(period=4)
    X, y = sliding_window(Y, 8)
    plain = ESERegressor().fit(X[:-20], y[:-20]).predict(X[-20:])
    assert np.sqrt(np.mean((plain - y[-20:]) ** 2)) > 0.1


def test_profile_kernels_known_answer():
    # two seasons of m = 3 (p = 6), target phase = step (p - 1 + 1) mod 3 = step 0's phase;
    # a step without positive total leaves its phase's mean to the other step
    valid = np.ones((1, 6), dtype=bool)
    valid[0, 4] = False
    D, P = _seasonal_profile_kernels(valid, 3, 1)
    s = np.array([1.0, 2.0, 3.0, 5.0, 100.0, 9.0])  # a 1-system "proportion" sequence
    means = np.array([(1 + 5) / 2, 2.0, (3 + 9) / 2])  # phases of steps 0/3, 1 (4 invalid), 2/5
    assert_allclose(s @ D[0], means - means.mean(), atol=1e-12)
    assert_allclose(P.argmax(axis=1), [0, 1, 2, 0, 1, 2])
    # a phase with no valid step has no profile and the others are centred without it
    valid[0, 1] = False
    D, _ = _seasonal_profile_kernels(valid, 3, 1)
    means = np.array([3.0, 0.0, 6.0])
    assert_allclose(s @ D[0], [-1.5, 0.0, 1.5], atol=1e-12)


def test_all_zero_season_phase_is_handled():
    # every value of one phase is 0 (a closed quarter): finite shares that sum to 1
    Y, _, _ = planted_panel(period=4)
    Y[::4] = 0.0
    X, y = sliding_window(Y, 8)
    est = ESERegressor(seasonal_period=4).fit(X[:-20], y[:-20])
    e = est.equilibrium_shares(X[-20:])
    assert np.isfinite(e).all()
    assert_allclose(e.sum(axis=1), 1.0, atol=1e-12)
    assert est.scaling_ in ("seasonal_difference", None)  # no ratios with zero totals
    assert np.isfinite(est.predict(X[-20:])).all()
    M, valid = _totals(X[-20:].reshape(20, 5, 8))
    assert (~valid).any()


def test_seasonal_beats_plain_ese_on_a_noisy_planted_panel():
    Y, _, _ = planted_panel(n_timesteps=200, period=12, noise=0.02, random_state=1,
                            n_systems=10)
    X, y = sliding_window(Y, 24)
    rmse = {}
    for m in (None, 12):
        pred = ESERegressor(seasonal_period=m).fit(X[:-36], y[:-36]).predict(X[-36:])
        rmse[m] = np.sqrt(np.mean((pred - y[-36:]) ** 2))
    assert rmse[12] < 0.5 * rmse[None]


@pytest.mark.parametrize("seed", [0, 1])
def test_intervals_are_calibrated_on_a_planted_seasonal_panel(seed):
    # stationary noise around a seasonal panel: 90 % intervals cover 85-95 % of 1,500 pairs
    Y, _, _ = planted_panel(n_timesteps=700, period=7, noise=0.05, random_state=seed,
                            n_systems=10, growth=1.0005)
    X, y = sliding_window(Y, 14)
    est = ESERegressor(seasonal_period=7, calibration=0.3).fit(X[:-150], y[:-150])
    lower, upper = est.predict_interval(X[-150:], coverage=0.9)
    coverage = np.mean((y[-150:] >= lower) & (y[-150:] <= upper))
    assert 0.85 <= coverage <= 0.95, coverage


def test_auto_detects_the_planted_period():
    Y, _, _ = planted_panel(n_timesteps=200, period=4, noise=0.02)
    X, y = sliding_window(Y, 12)
    est = ESERegressor(seasonal_period="auto").fit(X, y)
    assert est.seasonal_period_ == 4
    assert est.seasonal_acf_.shape == (5,)  # candidates 2..6
    Y12, _, _ = planted_panel(n_timesteps=300, period=12, noise=0.02)
    X, y = sliding_window(Y12, 24)
    assert ESERegressor(seasonal_period="auto").fit(X, y).seasonal_period_ == 12


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_auto_finds_no_season_in_a_non_seasonal_panel(seed):
    Y, _, _ = make_interacting_systems(10, 400, random_state=seed)
    X, y = sliding_window(Y, 20)
    est = ESERegressor(seasonal_period="auto").fit(X, y)
    assert est.seasonal_period_ is None
    plain = ESERegressor().fit(X, y)
    np.testing.assert_array_equal(est.predict(X[-5:]), plain.predict(X[-5:]))


def test_auto_without_two_seasons_of_candidates_is_none():
    Y, _, _ = planted_panel(period=4)
    X, y = sliding_window(Y, 3)  # no candidate period 2 <= m <= 3 // 2
    est = ESERegressor(seasonal_period="auto").fit(X, y)
    assert est.seasonal_period_ is None


# seasonal_period=None is the ESE of before, bit for bit: values computed with the code of
# commit 7bbf813 (before seasonal_period) on this numpy/scipy; float.hex
GOLDEN = ['0x1.631e3046fbf90p+0', '0x1.d337411aec98dp+2', '0x1.3c14de5ed21d9p+3',
          '0x1.7f53338bad467p+2', '0x1.8b4a025d30cd1p+5', '0x1.7c7b749432bc6p+11',
          '0x1.58ee5edf5e083p+0', '0x1.d5a7d2060436ep+2', '0x1.2be03df1f2142p+3',
          '0x1.62aa574c25120p+2', '0x1.90942763752b9p+5', '0x1.7c7b749432bc7p+11',
          '0x1.58c2274e93126p+0', '0x1.d11a4ed851fe9p+2', '0x1.2f2ee112bc150p+3',
          '0x1.5c3144f7ba34ep+2', '0x1.952c0544a0a31p+5', '0x1.7c7b749432bc7p+11']


def test_seasonal_period_none_is_the_previous_ese_bit_for_bit():
    Y, _, _ = make_interacting_systems(8, 300, random_state=3)
    X, y = sliding_window(Y, 12, horizon=2)
    out = []
    for kw in [{}, {"damping": 0.5, "share_trend": 0.0}, {"share_trend": 0.5, "damping": 0.25}]:
        est = ESERegressor(horizon=2, seasonal_period=None, **kw).fit(X[:-40], y[:-40])
        pred = est.predict(X[-40:])
        lo, up = est.predict_interval(X[-40:], 0.9)
        out += [pred[0, 0], pred[-1, -1], pred[17, 3], lo[5, 2], up[-3, 1], float(pred.sum())]
        assert est.seasonal_period_ is None and est.seasonal_acf_ is None
    assert [float(v).hex() for v in out] == GOLDEN


@pytest.mark.parametrize("params, n_lags, match", [
    ({"seasonal_period": 12}, 8, "longer than the window"),
    ({"seasonal_period": 5}, 8, "at least two full seasons"),
    ({"seasonal_period": 4, "stop": "ted"}, 8, "needs stop='converge'"),
    ({"scaling": "seasonal"}, 8, "needs a seasonal_period"),
    ({"seasonal_period": 4, "aggregate_lags": 5}, 8, "seasonal growth terms"),
])
def test_bad_input(params, n_lags, match):
    Y, _, _ = planted_panel(period=4)
    X, y = sliding_window(Y, n_lags)
    with pytest.raises(ValueError, match=match):
        ESERegressor(**params).fit(X, y)


def test_plain_aggregate_with_seasonal_shares():
    # scaling="last" keeps ESE's aggregate model; the shares still see the season
    Y, shares, _ = planted_panel(period=4)
    X, y = sliding_window(Y, 8)
    est = ESERegressor(seasonal_period=4, scaling="last", damping=0.5, share_trend=0,
                       seasonal_shares="profile").fit(X[:-20], y[:-20])
    assert est.scaling_ == "last" and est.aggregate_scores_ is None
    assert_allclose(est.equilibrium_shares(X[-20:]), shares[-20:], atol=1e-12)


def test_auto_scaling_chooses_the_seasonal_aggregate_on_a_seasonal_total():
    Y, _, _ = planted_panel(n_timesteps=200, period=12, noise=0.02, random_state=1,
                            n_systems=10)
    X, y = sliding_window(Y, 24)
    est = ESERegressor(seasonal_period=12).fit(X, y)
    assert set(est.aggregate_scores_) == {"seasonal", "plain"}
    assert est.aggregate_scores_["seasonal"] < est.aggregate_scores_["plain"]
    assert est.scaling_ == "seasonal"


def test_seasonal_scaling_needs_positive_totals():
    Y, _, _ = planted_panel(period=4)
    Y[::4] = 0.0
    X, y = sliding_window(Y, 8)
    with pytest.raises(ValueError, match="needs positive totals"):
        ESERegressor(seasonal_period=4, scaling="seasonal").fit(X, y)


def test_nonpositive_predict_totals_fall_back_to_the_seasonal_naive():
    Y, _, _ = planted_panel(period=4)
    X, y = sliding_window(Y, 8)
    est = ESERegressor(seasonal_period=4, share_trend=0, damping=0.5).fit(X[:-20], y[:-20])
    Xb = X[-1:].copy().reshape(1, 5, 8)
    Xb[:, :, 6] = 0.0  # a zero total among the growth ratios' steps
    with pytest.warns(UserWarning, match="seasonal naive"):
        pred = est.predict(Xb.reshape(1, -1))
    W = Xb[0]
    base = W[:, 8 - 1 + 1 - 4].sum()
    assert_allclose(pred.sum(), base)


# --------------------------------------------------------------------------------------------
# real seasonal panels (the benchmark's protocol, horizon 1)
# --------------------------------------------------------------------------------------------
def _rmse(pred, truth):
    return float(np.sqrt(np.mean((pred - truth) ** 2, axis=0)).mean())


@pytest.mark.real_data
@pytest.mark.parametrize("name, shape, p, n_test, period, snaive, ese", [
    ("us_employment", (357, 145), 24, 36, 12, 105.73, 12.97),
    ("aus_accommodation", (74, 8), 8, 12, 4, 24.66, 13.22),
])
def test_seasonal_panels_loader_and_reference_numbers(name, shape, p, n_test, period,
                                                      snaive, ese):
    require_data(f"seasonal_panels/{'us_employment.csv.gz' if name[0] == 'u' else name + '.csv'}")
    panel = load_seasonal_panel(name)
    assert panel.data.shape == shape and panel.period == period
    assert panel.data.index.is_monotonic_increasing
    X, y = sliding_window(panel.data.to_numpy(), p)
    Xtr, ytr, Xte, yte = X[:-n_test], y[:-n_test], X[-n_test:], y[-n_test:]
    W = Xte.reshape(n_test, shape[1], p)
    assert _rmse(W[:, :, p - period], yte) == pytest.approx(snaive, abs=0.01)
    est = ESERegressor(seasonal_period="auto").fit(Xtr, ytr)
    assert est.seasonal_period_ == period
    assert _rmse(est.predict(Xte), yte) == pytest.approx(ese, abs=0.01)


def test_seasonal_panel_loader_rejects_unknown_names_and_bad_files(tmp_path):
    with pytest.raises(ValueError, match="name must be one of"):
        load_seasonal_panel("tourism")
    (tmp_path / "seasonal_panels").mkdir()
    (tmp_path / "seasonal_panels" / "aus_accommodation.csv").write_text("Date,State\n")
    with pytest.raises(ValueError, match="not the pinned"):
        load_seasonal_panel("aus_accommodation", data_home=tmp_path)
    with pytest.raises(OSError, match="missing file"):
        load_seasonal_panel("us_employment", data_home=tmp_path)
