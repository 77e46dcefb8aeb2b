"""The one verbose style (base.EpochLogger): plain lines, about 20 at verbose=1."""

import re

import numpy as np
import pytest
import torch

from sklearn_icml26.base import EpochLogger
from sklearn_icml26.utils._testing import TorchMLPRegressor

_LINE = re.compile(r"^TorchMLPRegressor  epoch (\d+)/(\d+)  train_loss \S+  \S+s$")


def _epochs(text):
    return [int(m.group(1)) for m in map(_LINE.match, text.splitlines()) if m]


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    return X, X @ np.array([1.0, -2.0, 0.5])


def test_verbose_1_prints_about_20_plain_lines_with_first_and_last(capsys):
    X, y = _data()
    TorchMLPRegressor(max_epochs=100, verbose=1, random_state=0).fit(X, y)
    out = capsys.readouterr().out  # captured: not a terminal
    assert "\x1b[" not in out
    assert _epochs(out) == [1, *range(5, 101, 5)]  # every ceil(100 / 20) = 5 epochs
    assert len(out.splitlines()) == 21  # nothing else (no skorch table)


def test_verbose_2_prints_every_epoch_and_0_nothing(capsys):
    X, y = _data()
    TorchMLPRegressor(max_epochs=7, verbose=2, random_state=0).fit(X, y)
    assert _epochs(capsys.readouterr().out) == list(range(1, 8))
    TorchMLPRegressor(max_epochs=7, verbose=0, random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""


def test_no_colour_codes_in_a_terminal_either(capsys, monkeypatch):
    import sys

    X, y = _data()
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    TorchMLPRegressor(max_epochs=3, verbose=1, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert "\x1b[" not in out and _epochs(out) == [1, 2, 3]


def test_the_line_shows_the_loss_of_the_history(capsys):
    X, y = _data()
    reg = TorchMLPRegressor(max_epochs=3, verbose=2, random_state=0).fit(X, y)
    out = capsys.readouterr().out.splitlines()
    assert [float(line.split()[4]) for line in out] == pytest.approx(
        reg.loss_curve_, rel=1e-3)


def test_logger_selection_and_format(capsys):
    logger = EpochLogger(1, 300, "Net")
    assert logger.every == 15
    assert [e for e in range(1, 301) if logger.selected(e)] == [1, *range(15, 301, 15)]
    logger.log(15, dur=1.25, train_loss=0.0123456, valid_loss=None, extra=2)
    logger.log(16, dur=1.0, train_loss=1.0)  # not selected
    assert capsys.readouterr().out == "Net  epoch 15/300  train_loss 0.01235  extra 2  1.25s\n"
    steps = EpochLogger(2, 5, None, unit="step")
    steps.log(2, dur=0.5, loss=3.0)
    assert capsys.readouterr().out == "step 2/5  loss 3  0.5s\n"
    assert not EpochLogger(0, 5).selected(1)
