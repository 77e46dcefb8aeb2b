"""Small settings under which each estimator is checked by the common test suite."""

__all__ = ["get_test_instances"]


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
