"""Find every public estimator of the package, like sklearn's ``all_estimators``."""

import importlib
import inspect
import pkgutil
from operator import itemgetter

from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClusterMixin,
    RegressorMixin,
    TransformerMixin,
)

__all__ = ["all_estimators"]

# modules that never hold public estimators
_SKIPPED_MODULES = {"__main__", "_testing", "tests", "conftest"}

_TYPE_MIXINS = {
    "classifier": ClassifierMixin,
    "regressor": RegressorMixin,
    "transformer": TransformerMixin,
    "cluster": ClusterMixin,
}


def all_estimators(type_filter=None):
    """List every public estimator class defined in sklearn_icml26.

    Walks all submodules (private ones included, since estimators are defined in files such as
    ``forecasting/_ese.py``), skipping test helpers, and keeps the classes that derive from
    :class:`sklearn.base.BaseEstimator`, are not abstract, and whose name does not start with an
    underscore.

    Parameters
    ----------
    type_filter : {"classifier", "regressor", "transformer", "cluster"}, list of those or None, \
default=None
        Keep only estimators of these kinds; ``None`` keeps all.

    Returns
    -------
    estimators : list of tuple of (str, type)
        ``(name, class)`` pairs sorted by name.

    Raises
    ------
    ValueError
        If ``type_filter`` names an unknown kind.

    Examples
    --------
    >>> from sklearn_icml26.utils import all_estimators
    >>> estimators = all_estimators()
    >>> all(isinstance(name, str) for name, _ in estimators)
    True
    """
    import sklearn_icml26

    root = sklearn_icml26.__path__
    found = {}
    for _, module_name, _ in pkgutil.walk_packages(root, prefix="sklearn_icml26."):
        parts = set(module_name.split("."))
        if parts & _SKIPPED_MODULES:
            continue
        module = importlib.import_module(module_name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(cls, BaseEstimator)
                and not name.startswith("_")
                and cls.__module__.startswith("sklearn_icml26.")
                and not inspect.isabstract(cls)
            ):
                found[name] = cls

    estimators = sorted(found.items(), key=itemgetter(0))
    if type_filter is None:
        return estimators
    kinds = [type_filter] if isinstance(type_filter, str) else list(type_filter)
    unknown = [k for k in kinds if k not in _TYPE_MIXINS]
    if unknown:
        raise ValueError(
            f"type_filter must be None or any of {sorted(_TYPE_MIXINS)}; got {unknown!r}."
        )
    mixins = tuple(_TYPE_MIXINS[k] for k in kinds)
    return [(name, cls) for name, cls in estimators if issubclass(cls, mixins)]
