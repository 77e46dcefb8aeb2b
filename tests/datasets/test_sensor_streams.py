"""Air Quality and BasicMotions loaders (real data) and the outage scenarios."""

import numpy as np
import pytest

from sklearn_icml26.datasets import load_air_quality, load_basic_motions, make_sensor_outages


@pytest.mark.real_data
def test_air_quality_shape_index_missing_and_groups():
    aq = load_air_quality()
    X = aq.data
    assert X.shape == (9357, 13)
    assert all(str(d) == "float64" for d in X.dtypes)
    assert str(X.index[0]) == "2004-03-10 18:00:00" and str(X.index[-1]) == "2005-04-04 14:00:00"
    assert X.index.freqstr == "h"
    assert (np.diff(X.index.to_numpy()) == np.timedelta64(1, "h")).all()  # regular hourly
    missing = X.isna().sum()
    assert missing["CO_GT"] == 1683 and missing["NMHC_GT"] == 8443 and missing["T"] == 366
    assert not (X == -200).any().any()
    assert sorted(c for g in aq.groups.values() for c in g) == sorted(X.columns)
    assert aq.groups["meteo"] == ["T", "RH", "AH"]
    np.testing.assert_allclose(X.iloc[0][["CO_GT", "PT08_S1_CO", "AH"]], [2.6, 1360, 0.7578])


@pytest.mark.real_data
def test_basic_motions_cases_labels_and_splits():
    bm = load_basic_motions()
    assert bm.data.shape == (80, 100, 6) and bm.data.dtype == np.float64
    assert not np.isnan(bm.data).any()
    assert (bm.split == "train").sum() == 40
    assert sorted(set(bm.target)) == ["Badminton", "Running", "Standing", "Walking"]
    np.testing.assert_allclose(bm.data[0, :2, 0], [0.079106, 0.079106])
    test = load_basic_motions(split="test")
    np.testing.assert_array_equal(test.data, bm.data[40:])
    with pytest.raises(ValueError, match="split must be"):
        load_basic_motions(split="val")


def test_missing_files_without_download_name_the_file(tmp_path):
    with pytest.raises(OSError, match="AirQualityUCI.csv"):
        load_air_quality(data_home=tmp_path, download_if_missing=False)


@pytest.mark.parametrize("seed", range(5))
def test_block_coverage_and_hidden_subset_of_observed(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2000, 5))
    X[rng.random(X.shape) < 0.1] = np.nan
    obs = ~np.isnan(X)
    Xc, mask = make_sensor_outages(X, "group_block", groups=[1, 2], coverage=0.1,
                                   block_length=24, random_state=seed)
    # rows inside a block: hidden in an observed column, or missing in both columns anyway
    in_block = np.isnan(Xc[:, [1, 2]]).all(axis=1) & ~(~obs[:, [1, 2]]).all(axis=1)
    assert abs(in_block.mean() - 0.1) <= 0.02
    assert not mask[:, [0, 3, 4]].any()
    assert np.all(obs[mask]) and np.isnan(Xc[mask]).all()
    np.testing.assert_array_equal(Xc[~mask & obs], X[~mask & obs])
    Xd, dmask = make_sensor_outages(X, "device_block", coverage=0.05, random_state=seed)
    assert abs(np.isnan(Xd).all(axis=1).mean() - 0.05) <= 0.02 + (~obs).all(axis=1).mean()
    assert np.all(obs[dmask])


def test_point_and_impulse_scenarios():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4)) * [1, 2, 3, 4]
    Xp, pmask = make_sensor_outages(X, "point", p=0.1, random_state=0)
    assert abs(pmask.mean() - 0.1) < 0.01 and np.isnan(Xp[pmask]).all()
    Xi, imask = make_sensor_outages(X, "impulse", p=0.02, random_state=0)
    assert not np.isnan(Xi).any()
    jump = np.abs(Xi - X)[imask] / np.broadcast_to(X.std(axis=0), X.shape)[imask]
    np.testing.assert_allclose(jump, 5.0, rtol=1e-9)
    np.testing.assert_array_equal(Xi[~imask], X[~imask])


def test_outage_bad_input():
    X = np.zeros((50, 3))
    with pytest.raises(ValueError, match="scenario must be one of"):
        make_sensor_outages(X, "blocks")
    with pytest.raises(ValueError, match="groups .* is required"):
        make_sensor_outages(X, "group_block")
    with pytest.raises(ValueError, match=r"groups must be column indices in \[0, 3\)"):
        make_sensor_outages(X, "group_block", groups=[5])
    with pytest.raises(ValueError, match="coverage must be in"):
        make_sensor_outages(X, "device_block", coverage=1.5)
