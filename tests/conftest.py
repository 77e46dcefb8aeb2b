"""Test configuration: one torch thread, the data home, and the ``real_data`` marker."""

import os
from pathlib import Path

import pytest

# The workspace's data folder beside the checkout, when present, is the data home of this
# repository's tests and CI.
_SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
if "SKLEARN_ICML26_DATA" not in os.environ and _SHARED_DATA.is_dir():
    os.environ["SKLEARN_ICML26_DATA"] = str(_SHARED_DATA)


def pytest_configure(config):
    import torch

    torch.set_num_threads(1)


@pytest.fixture
def data_home():
    """The data home used by real-data tests (``SKLEARN_ICML26_DATA`` or the default)."""
    from sklearn_icml26.datasets import get_data_home

    return get_data_home()


def require_data(*paths):
    """Skip, naming the missing files, unless every path exists in the data home."""
    from sklearn_icml26.datasets import get_data_home

    home = get_data_home()
    missing = [p for p in paths if not (home / p).exists()]
    if missing:
        pytest.skip(reason=f"real data not in the data home {home}: missing {', '.join(missing)}")
    return home
