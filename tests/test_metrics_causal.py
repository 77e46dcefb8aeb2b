"""weighted_accuracy and audrc: hand cases and the published baseline table of SkewD.

The table is that of Klippert & Marx, arXiv:2511.14441 (code causality-lab/skewd@03f920c).
"""

import numpy as np
import pytest
from conftest import require_data

from sklearn_icml26.datasets import load_cause_effect_baseline_scores
from sklearn_icml26.metrics import audrc, weighted_accuracy

# accuracy / AUDRC recomputed from baseline_scores; equal to causality-lab/skewd
# experiments/baseline_results/ci_baselines_{acc,audrc}.csv
TABLE = {
    "QCCD": {"tuebingen": (.7709, .8438), "SIM": (.62, .7069), "SIM-c": (.72, .8331),
             "SIM-ln": (.80, .9219), "AN": (1, 1), "LS": (1, 1), "MN-U": (.99, .9999)},
    "GRCI": {"tuebingen": (.8159, .7323), "SIM": (.77, .8962), "SIM-c": (.77, .9238),
             "SIM-ln": (.77, .9209), "AN": (1, 1), "LS": (.98, .9967), "MN-U": (.88, .9718)},
    "CAM": {"tuebingen": (.5777, .6937), "SIM": (.57, .6776), "SIM-c": (.60, .6882),
            "SIM-ln": (.87, .8720), "AN": (1, 1), "LS": (1, 1), "MN-U": (.86, .7645)},
    "IGCI": {"tuebingen": (.6803, .7381), "SIM": (.37, .3449), "SIM-c": (.45, .4086),
             "SIM-ln": (.51, .5134), "AN": (.20, .1783), "LS": (.46, .5954),
             "MN-U": (.11, .0127)},
    "RESIT": {"tuebingen": (.6203, .7872), "SIM": (.78, .7523), "SIM-c": (.82, .8443),
              "SIM-ln": (.87, .8293), "AN": (1, 1), "LS": (.60, .7062), "MN-U": (.05, .0049)},
}
CASES = [(m, name, *v) for m, row in TABLE.items() for name, v in row.items()]
FILES = {"tuebingen": "Tuebingen", "SIM": "SIM", "SIM-c": "SIMc", "SIM-ln": "SIMln",
         "AN": "AN", "LS": "LS", "MN-U": "MNU"}


def test_hand_case():
    y, s = [1, 1, -1, 1], [0.9, -0.8, 0.5, 0.1]
    assert weighted_accuracy(y, s) == pytest.approx(0.5)
    assert audrc(y, s) == pytest.approx(0.583333, abs=1e-6)
    w = [1, 2, 1, 1]
    assert weighted_accuracy(y, s, sample_weight=w) == pytest.approx(0.4)
    assert audrc(y, s, sample_weight=w) == pytest.approx(0.463333, abs=1e-6)


def test_conventions():
    # a zero score is a wrong decision; ties in |score| keep the input order (stable sort)
    assert weighted_accuracy([1, -1], [0.0, -1.0]) == 0.5
    assert audrc([1, 1], [1.0, -1.0]) == pytest.approx((1 + 0.5) / 2)
    assert audrc([1, 1], [-1.0, 1.0]) == pytest.approx((0 + 0.5) / 2)
    # all right: 1; all wrong: 0; zero weights drop pairs
    assert audrc([1, -1, 1], [3, -2, 1]) == 1.0
    assert audrc([1, -1, 1], [-3, 2, -1]) == 0.0
    assert audrc([1, -1, 1], [3, 2, 1], sample_weight=[1, 0, 1]) == 1.0


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match=r"only \+1 and -1"):
        weighted_accuracy([0, 1], [1, 1])
    with pytest.raises(ValueError, match="same length"):
        audrc([1, 1, -1], [1, 1])
    with pytest.raises(ValueError, match="non-negative"):
        audrc([1, -1], [1, 1], sample_weight=[1, -1])
    with pytest.raises(ValueError, match="finite"):
        weighted_accuracy([1, -1], [np.nan, 1])
    with pytest.raises(ValueError, match="sample_weight must have shape"):
        weighted_accuracy([1, -1], [1, 1], sample_weight=[1])


@pytest.mark.real_data
@pytest.mark.parametrize("method, name, acc, auc", CASES)
def test_published_baseline_table(method, name, acc, auc):
    require_data(f"cause_effect/baseline_scores/{FILES[name]}.tab")
    b = load_cause_effect_baseline_scores(name)
    assert len(b.direction) == (99 if name == "tuebingen" else 100)
    w = b.weight
    assert weighted_accuracy(b.direction, b.scores[method], sample_weight=w) == pytest.approx(
        acc, abs=5e-5)
    assert audrc(b.direction, b.scores[method], sample_weight=w) == pytest.approx(auc, abs=5e-5)


@pytest.mark.real_data
def test_resit_std_tuebingen():
    require_data("cause_effect/baseline_scores/Tuebingen.tab")
    b = load_cause_effect_baseline_scores("tuebingen")
    s = b.scores["RESIT_std"]
    assert weighted_accuracy(b.direction, s, sample_weight=b.weight) == pytest.approx(
        .5717, abs=5e-5)
    # ten pairs score exactly 0 here, so the AUDRC depends on the tie order; the reference
    # value .7079 is the unweighted mean of the running accuracies; the weighted one gives .7102
    assert audrc(b.direction, s, sample_weight=b.weight) == pytest.approx(.7102, abs=5e-5)
