"""The shared whole-batch training iterator of the torch adapter (sklearn_icml26.base)."""

import numpy as np
import torch
from skorch.dataset import Dataset

from sklearn_icml26.base import _WholeBatches
from sklearn_icml26.utils._testing import TorchMLPRegressor

torch.set_num_threads(1)


def _epochs(data, n_epochs=2, **kwargs):
    torch.manual_seed(0)
    batches = _WholeBatches(data, **kwargs)
    return batches, [list(batches) for _ in range(n_epochs)]


def test_without_target_every_row_once_per_epoch_and_no_target():
    X = np.arange(11, dtype=np.float32)[:, None]
    data = Dataset({"X": X, "sample_weight": 3 * X[:, 0]}, None)
    batches, epochs = _epochs(data, batch_size=4, shuffle=True)
    assert len(batches) == 3
    for epoch in epochs:
        assert [len(xb["X"]) for xb, _ in epoch] == [4, 4, 3]
        assert all(yb is None for _, yb in epoch)
        for xb, _ in epoch:  # the inputs of a row stay together
            torch.testing.assert_close(xb["sample_weight"], 3 * xb["X"][:, 0])
        assert sorted(torch.cat([xb["X"][:, 0] for xb, _ in epoch]).tolist()) == list(range(11))
    orders = [torch.cat([xb["X"][:, 0] for xb, _ in epoch]).tolist() for epoch in epochs]
    assert orders[0] != orders[1]


def test_target_does_not_change_the_order():
    """With or without y the same seed gives the same batches (one randperm per epoch)."""
    X = np.arange(9, dtype=np.float32)[:, None]
    _, with_y = _epochs(Dataset({"X": X}, 5 * X), batch_size=2, shuffle=True)
    _, without = _epochs(Dataset({"X": X}, None), batch_size=2, shuffle=True)
    for a, b in zip(with_y, without, strict=True):
        for (xa, ya), (xb, yb) in zip(a, b, strict=True):
            torch.testing.assert_close(xa["X"], xb["X"])
            torch.testing.assert_close(ya, 5 * xa["X"])
            assert yb is None


def test_in_order_without_shuffle_and_one_batch_for_minus_one():
    X = np.arange(7, dtype=np.float64)[:, None]
    data = Dataset({"X": X}, None)
    batches = _WholeBatches(data, batch_size=None)
    assert len(batches) == 1
    assert [xb["X"][:, 0].tolist() for xb, _ in batches] == [list(range(7))]
    assert [xb["X"][:, 0].tolist() for xb, _ in _WholeBatches(data, batch_size=3)] == [
        [0, 1, 2], [3, 4, 5], [6]]


def test_whole_batches_class_attribute_sets_the_net_iterator_on_its_device():
    class WholeBatchMLP(TorchMLPRegressor):
        _whole_batches = True

    X = np.ones((5, 2), dtype=np.float32)
    net = WholeBatchMLP(max_epochs=1, batch_size=2, random_state=0).fit(X, np.zeros(5)).net_
    batches = net.iterator_train(Dataset({"X": X}, np.zeros(5)), batch_size=2)
    assert isinstance(batches, _WholeBatches) and batches.device == torch.device("cpu")
    assert [len(yb) for _, yb in batches] == [2, 2, 1]
