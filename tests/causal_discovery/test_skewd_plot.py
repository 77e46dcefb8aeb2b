"""SkewD's displays draw the fitted models and the decision-rate curve (artists' data checked)."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from sklearn_icml26.causal_discovery import (
    CauseEffectDisplay,
    DecisionRateDisplay,
    SkewDCausalDiscoverer,
)
from sklearn_icml26.metrics import audrc, decision_rate_curve, weighted_accuracy

matplotlib = pytest.importorskip("matplotlib", reason="the plot extra is not installed")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_decision_rate_display_draws_the_curve_and_names_its_area():
    rng = np.random.default_rng(0)
    y = rng.choice([-1, 1], 30)
    score = y * rng.uniform(0.1, 1, 30) * rng.choice([1, 1, 1, -1], 30)
    w = rng.uniform(0.5, 2, 30)
    disp = DecisionRateDisplay.from_predictions(y, score, sample_weight=w, name="SkewD")
    rate, acc = decision_rate_curve(y, score, sample_weight=w)
    np.testing.assert_array_equal(disp.line_.get_xdata(), rate)
    np.testing.assert_array_equal(disp.line_.get_ydata(), acc)
    label = disp.line_.get_label()
    assert label == (f"SkewD, accuracy {weighted_accuracy(y, score, sample_weight=w):.3f}, "
                     f"AUDRC {audrc(y, score, sample_weight=w):.3f}")
    # a second method on the same axes
    other = DecisionRateDisplay.from_predictions(y, -score, name="reversed", ax=disp.ax_)
    assert other.ax_ is disp.ax_ and len(disp.ax_.get_lines()) == 4  # 2 curves + 2 chance lines


def test_decision_rate_curve_is_the_curve_behind_audrc_and_accuracy():
    y = np.array([1, 1, -1, 1, -1])
    score = np.array([0.9, -0.8, 0.5, 0.1, -0.3])
    w = np.array([1.0, 2.0, 1.0, 1.0, 3.0])
    rate, acc = decision_rate_curve(y, score, sample_weight=w)
    # order by |score|: 0.9 (ok, w1), -0.8 (wrong, w2), 0.5 (wrong, w1), -0.3 (ok, w3), 0.1 (ok)
    np.testing.assert_allclose(rate, np.cumsum([1, 2, 1, 3, 1]) / 8)
    np.testing.assert_allclose(acc, [1 / 1, 1 / 3, 1 / 4, 4 / 7, 5 / 8])
    assert acc[-1] == pytest.approx(weighted_accuracy(y, score, sample_weight=w))
    ordered_w = np.array([1, 2, 1, 3, 1])
    assert audrc(y, score, sample_weight=w) == pytest.approx(np.sum(ordered_w * acc) / 8)
    with pytest.raises(ValueError, match="y_true must hold only"):
        decision_rate_curve([0, 1], [0.1, 0.2])


def _pair(n=300, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, n)
    return np.column_stack([3 + 2 * x, np.tanh(x) + 0.3 * rng.exponential(size=n)])


def test_cause_effect_display_draws_both_fitted_models():
    X = _pair()
    disc = SkewDCausalDiscoverer(random_state=0).fit(X)
    disp = CauseEffectDisplay.from_estimator(disc, X, feature_names=["dose", "response"])
    Xs = (X - disc.mean_) / disc.scale_
    for key, cause in (("forward", 0), ("backward", 1)):
        line = disp.location_lines_[key]
        grid = line.get_xdata()
        assert grid.min() == pytest.approx(Xs[:, cause].min())
        assert grid.max() == pytest.approx(Xs[:, cause].max())
        np.testing.assert_allclose(line.get_ydata(),
                                   disc.estimators_[key].predict_location(grid[:, None]))
    titles = [ax.get_title() for ax in disp.axes_]
    assert titles[0].startswith("dose → response") and titles[1].startswith("response → dose")
    chosen = 0 if disc.direction_ == 1 else 1
    assert "(chosen)" in titles[chosen] and "(chosen)" not in titles[1 - chosen]
    assert f"{disc.loglik_forward_:.1f}" in titles[0]


def test_cause_effect_display_errors():
    X = _pair(120)
    with pytest.raises(NotFittedError):
        CauseEffectDisplay.from_estimator(SkewDCausalDiscoverer(), X)
    disc = SkewDCausalDiscoverer(random_state=0).fit(X)
    with pytest.raises(ValueError, match=r"X must be the pair of shape \(n_samples, 2\)"):
        CauseEffectDisplay.from_estimator(disc, X[:, :1])
    with pytest.warns(UserWarning):
        const = SkewDCausalDiscoverer(random_state=0).fit(np.column_stack([X[:, 0], np.ones(120)]))
    with pytest.raises(ValueError, match="no fitted models"):
        CauseEffectDisplay.from_estimator(const, X)
