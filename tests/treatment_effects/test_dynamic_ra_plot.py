"""LongitudinalEffectDisplay draws the estimator's own numbers (checked on the artists' data)."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from threadpoolctl import threadpool_limits

from sklearn_icml26.datasets import make_longitudinal_rct
from sklearn_icml26.treatment_effects import (
    LongitudinalEffectDisplay,
    LongitudinalRegressionAdjuster,
)

matplotlib = pytest.importorskip("matplotlib", reason="the plot extra is not installed")
matplotlib.use("Agg")


@pytest.fixture(scope="module")
def fitted():
    with threadpool_limits(1):
        X, y, w, _ = make_longitudinal_rct(400, 4, 3, dynamics="linear", outcome="linear",
                                           random_state=0)
        return LongitudinalRegressionAdjuster(3, random_state=0).fit(X, y, treatment=w)


def _bar_limits(container):
    """(lower, upper) y limits of an errorbar container's vertical bars."""
    segments = container.lines[2][0].get_segments()
    return np.array([s[0][1] for s in segments]), np.array([s[1][1] for s in segments])


def test_from_estimator_draws_the_summary(fitted):
    import matplotlib.pyplot as plt

    table = fitted.summary()
    months = np.array([2.0, 4.0, 6.0, 8.0])
    disp = LongitudinalEffectDisplay.from_estimator(fitted, periods=months)
    np.testing.assert_allclose(disp.errorbar_.lines[0].get_xdata(), months)
    np.testing.assert_allclose(disp.errorbar_.lines[0].get_ydata(), table["estimate"])
    lower, upper = _bar_limits(disp.errorbar_)
    np.testing.assert_allclose(lower, table["ci_lower"])
    np.testing.assert_allclose(upper, table["ci_upper"])
    # the uniform band is the shaded area, wider than every pointwise interval
    band = disp.band_.get_paths()[0].vertices
    assert band[:, 1].max() == pytest.approx(table["band_upper"].max())
    assert band[:, 1].min() == pytest.approx(table["band_lower"].min())
    assert np.all(table["band_upper"] >= table["ci_upper"])
    # anchors: Lin's Wald interval 1.96 SE around Lin's estimate, shifted off the estimate's x
    lin = disp.anchor_errorbars_["Lin (HC2)"]
    np.testing.assert_allclose(lin.lines[0].get_ydata(), table["lin"])
    lower, upper = _bar_limits(lin)
    np.testing.assert_allclose(upper - lower, 2 * 1.959964 * table["lin_se"], rtol=1e-5)
    assert np.all(lin.lines[0].get_xdata() != months)
    assert set(disp.anchor_errorbars_) == {"Lin (HC2)", "difference in means"}
    assert disp.figure_ is disp.ax_.figure
    plt.close("all")


def test_alpha_widens_the_intervals(fitted):
    import matplotlib.pyplot as plt

    narrow = _bar_limits(LongitudinalEffectDisplay.from_estimator(fitted, alpha=0.5).errorbar_)
    wide = _bar_limits(LongitudinalEffectDisplay.from_estimator(fitted, alpha=0.01).errorbar_)
    assert np.all(wide[1] - wide[0] > narrow[1] - narrow[0])
    plt.close("all")


def test_errors_name_the_problem(fitted):
    with pytest.raises(NotFittedError):
        LongitudinalEffectDisplay.from_estimator(LongitudinalRegressionAdjuster(3))
    with pytest.raises(ValueError, match=r"anchors must be among .*got \['ols'\]"):
        LongitudinalEffectDisplay.from_estimator(fitted, anchors=("lin", "ols"))
    with pytest.raises(ValueError, match=r"ci_lower must have one value per period, shape \(2,\)"):
        LongitudinalEffectDisplay([1, 2], [0.0, 1.0], [0.0], [1.0, 2.0]).plot()
