"""Settings and data under which each estimator is checked by the common test suite.

Two things live here rather than in the estimator modules: the small constructor settings of a
class (its ``_get_test_params`` classmethod, read by :func:`get_test_instances`) and the data a
smoke fit uses (:func:`get_smoke_data`). The smoke data of the estimators whose ``fit`` needs
more than the ``(X, y)`` of a generic tabular problem (panels of systems, longitudinal trials,
point clouds, texts, question rows, reading episodes) are registered in ``_SMOKE_DATA``, keyed
by class name, so that no estimator module imports a data generator for the tests' sake.
"""

import numpy as np
from sklearn.base import is_classifier, is_regressor
from sklearn.datasets import make_classification, make_regression

__all__ = ["get_smoke_data", "get_test_instances"]


def get_test_instances(estimator_class):
    """Instances of ``estimator_class`` built from its small test settings.

    Every estimator class may define a ``_get_test_params`` classmethod returning a list of
    parameter dicts (small, fast settings that still pass ``check_estimator``). Without it the
    default constructor is used. ``tests/test_common.py`` runs every check on each instance.

    Parameters
    ----------
    estimator_class : type
        An estimator class.

    Returns
    -------
    instances : list of estimator
        One instance per parameter dict.
    """
    getter = getattr(estimator_class, "_get_test_params", None)
    params = getter() if getter is not None else [{}]
    return [estimator_class(**p) for p in params]


# -- smoke data of the estimators that do not fit a generic tabular problem --------------------
def _interacting_panel():
    """Windows (125, 20) and targets (125, 4) of a small positive panel of 4 systems."""
    from ..datasets import make_interacting_systems
    from ..forecasting import sliding_window

    Y, _, _ = make_interacting_systems(4, 130, random_state=0)
    return sliding_window(Y, 5)


def _longitudinal_trial():
    """120 units, 4 covariates, 3 periods of outcomes following an AR(1) in the covariates."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = np.empty((120, 3))
    previous = np.zeros(120)
    for t in range(3):
        previous = X @ np.array([1.0, -0.5, 0.2, 0.0]) + 0.5 * previous + rng.normal(size=120)
        y[:, t] = previous
    return X, y


def _skewed_dag():
    """120 samples of a 3-node skew-normal location-scale DAG with 2 edges."""
    from ..datasets import make_skewed_lsnm_dag

    X, _ = make_skewed_lsnm_dag(120, n_nodes=3, n_edges=2, random_state=0)
    return X, None


def _thin_shell():
    """120 points of an open arc (a thin shell) in the plane."""
    from ..datasets import make_thin_shell

    X, _ = make_thin_shell("open_arc", 120, random_state=0)
    return X, None


def _short_texts():
    """40 texts of 4 words from an 8-word vocabulary."""
    words = ["red", "green", "apple", "pear", "river", "stone", "music", "garden"]
    rng = np.random.default_rng(0)
    return [" ".join(rng.choice(words, size=4)) for _ in range(40)], None


def _numeric_stream():
    """60 vectors of width 5 (a numeric memory)."""
    rng = np.random.default_rng(0)
    return rng.normal(size=(60, 5)), None


def _question_rows():
    """Question/passage rows, with gold answers on some, for the information-gain scorers."""
    q = "What is the capital of France?"
    return [{"question": q, "passage": "Paris is the capital of France.", "answers": "Paris"},
            {"question": q, "passage": "London is in England.", "answers": ["Paris"]},
            {"question": q, "passage": "London is in England."}]


def _answered_question_rows():
    """:func:`_question_rows` with a gold answer on every row (the scorer fits on them)."""
    return [dict(r, answers=r.get("answers", "Paris")) for r in _question_rows()], None


def _reading_episodes():
    """6 reading episodes: the question shares its code word with the fact turn only."""
    rng = np.random.default_rng(0)
    X = []
    for i in range(6):
        code = f"item{1000 + i}"
        chunks = [[f"note {2000 + 10 * i + t} line {j}" for j in range(3)] for t in range(4)]
        t_ev = int(rng.integers(4))
        chunks[t_ev][1] = f"the {code} is in the attic"
        X.append({"question": f"where is the {code}", "chunks": chunks,
                  "evidence": {(t_ev, 1)}})
    return X, None


def _language_prompts():
    """24 made-up prompts in two made-up languages, harmful (ending in '!') or not."""
    import pandas as pd

    rows = []
    for lang, word in (("aa", "lo"), ("bb", "mi")):
        for i in range(6):
            harmful = i % 2 == 0
            rows.append({"prompt": f"{word} {'x' * (i + 1)} {'!' if harmful else '?'}",
                         "language": lang, "harmful": int(harmful)})
    frame = pd.DataFrame(rows)
    return frame[["prompt", "language"]], frame["harmful"].to_numpy()


_SMOKE_DATA = {
    "ESERegressor": _interacting_panel,
    "PerSystemRegressor": _interacting_panel,
    "LongitudinalRegressionAdjuster": _longitudinal_trial,
    "SkewDCausalDiscoverer": _skewed_dag,
    "MPFSurface": _thin_shell,
    "SentenceEmbedder": _short_texts,
    "StreamingMemory": _numeric_stream,
    "GatedMemoryReader": _reading_episodes,
    "SemanticInfoGainScorer": _answered_question_rows,
    "InfoGainReranker": lambda: (_question_rows(), None),
    "SafetyNeuronFinder": _language_prompts,
}


def get_smoke_data(estimator):
    """Data ``(X, y)`` on which the common tests fit ``estimator``.

    The registered data of its class (by class name) when its ``fit`` needs a particular
    input; otherwise a small generic problem: classification for a classifier, regression for
    a regressor, the regression features with ``y=None`` for anything else.

    Parameters
    ----------
    estimator : estimator instance or class
        The estimator (its tags decide the generic problem; a class is instantiated with its
        defaults for that).

    Returns
    -------
    X : array-like or list
        Training input.
    y : ndarray or None
        Training target (``None`` for unsupervised estimators).
    """
    cls = estimator if isinstance(estimator, type) else type(estimator)
    maker = _SMOKE_DATA.get(cls.__name__)
    if maker is not None:
        return maker()
    instance = cls() if isinstance(estimator, type) else estimator
    if is_classifier(instance):
        return make_classification(n_samples=120, n_features=4, random_state=0)
    if is_regressor(instance):
        return make_regression(n_samples=120, n_features=4, noise=1.0, random_state=0)
    X, _ = make_regression(n_samples=120, n_features=4, random_state=0)
    return X, None
