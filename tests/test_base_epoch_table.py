"""The adapter's epoch table reads well in a log file: no colour codes, about 20 rows."""

import re

import numpy as np
import pytest
import torch

from sklearn_icml26.utils._testing import TorchMLPRegressor


def _table_rows(text):
    return [line for line in text.splitlines() if re.match(r"^\s*\d+\s", line)]


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    return X, X @ np.array([1.0, -2.0, 0.5])


def test_verbose_1_prints_about_20_plain_rows_with_first_and_last(capsys):
    X, y = _data()
    TorchMLPRegressor(max_epochs=100, verbose=1, random_state=0).fit(X, y)
    out = capsys.readouterr().out  # captured: not a terminal
    assert "\x1b[" not in out  # the best loss would be coloured in a terminal
    epochs = [int(line.split()[0]) for line in _table_rows(out)]
    assert epochs[0] == 1 and epochs[-1] == 100
    assert epochs == [1, *range(5, 101, 5)]  # every ceil(100 / 20) = 5 epochs


def test_verbose_2_prints_every_epoch_and_0_nothing(capsys):
    X, y = _data()
    TorchMLPRegressor(max_epochs=7, verbose=2, random_state=0).fit(X, y)
    assert [int(line.split()[0]) for line in _table_rows(capsys.readouterr().out)] == list(
        range(1, 8))
    TorchMLPRegressor(max_epochs=7, verbose=0, random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""


def test_colour_codes_in_a_terminal(capsys, monkeypatch):
    import sys

    X, y = _data()
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    TorchMLPRegressor(max_epochs=3, verbose=1, random_state=0).fit(X, y)
    assert "\x1b[" in capsys.readouterr().out
