"""System and dependency versions, for bug reports (like :func:`sklearn.show_versions`)."""

import platform
import sys
from importlib.metadata import PackageNotFoundError, version

_DEPENDENCIES = [
    "sklearn_icml26", "pip", "setuptools", "numpy", "scipy", "scikit-learn", "torch", "skorch",
    "statsmodels", "pandas", "joblib", "pooch", "tqdm", "matplotlib", "dask", "distributed",
    # optional extras (causal)
    "causal-learn", "scikit-optimize", "cmaes",
]


def _versions():
    system = {
        "python": sys.version.replace("\n", " "),
        "executable": sys.executable,
        "machine": platform.platform(),
    }
    deps = {}
    for name in _DEPENDENCIES:
        try:
            deps[name] = version(name)
        except PackageNotFoundError:
            deps[name] = None
    return system, deps


def show_versions():
    """Print the system, the versions of the dependencies and the threading libraries.

    Examples
    --------
    >>> from sklearn_icml26 import show_versions
    >>> show_versions()  # doctest: +SKIP
    """
    from threadpoolctl import threadpool_info

    system, deps = _versions()
    print("\nSystem:")
    for key, value in system.items():
        print(f"{key:>14}: {value}")
    print("\nPython dependencies:")
    for key, value in deps.items():
        print(f"{key:>14}: {value}")
    try:
        import torch

        print(f"{'torch threads':>14}: {torch.get_num_threads()}")
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    print("\nThreadpoolctl info:")
    for info in threadpool_info():
        print(f"{info.get('internal_api', '')}: {info.get('num_threads')} threads, "
              f"{info.get('filepath', '')}")
