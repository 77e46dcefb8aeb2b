"""The adapter's ``optimizer_params`` knob and the ``"adamo"`` optimizer name."""

import numpy as np
import pytest
import torch
from sklearn.base import clone

from sklearn_icml26.approximation import HolderTransformerRegressor
from sklearn_icml26.base import TorchEstimatorMixin, make_optimizer
from sklearn_icml26.lineage import HDTreeLineage
from sklearn_icml26.surface import MPFSurface
from sklearn_icml26.utils._testing import TorchAutoencoder, TorchMLPRegressor

torch.set_num_threads(1)

_X = np.random.RandomState(0).normal(size=(24, 3))
_Y = _X @ np.array([1.0, -0.5, 0.2])
_FAST = dict(max_epochs=2, batch_size=-1, random_state=0)


def test_good_key_reaches_the_optimizer():
    reg = TorchMLPRegressor(**_FAST, optimizer_params={"betas": (0.5, 0.75), "eps": 1e-4})
    reg.fit(_X, _Y)
    group = reg.net_.optimizer_.param_groups[0]
    assert group["betas"] == (0.5, 0.75)
    assert group["eps"] == 1e-4
    assert group["lr"] == reg.lr  # lr still comes from its own parameter


def test_default_params_unchanged_by_empty_dict():
    a = TorchMLPRegressor(**_FAST).fit(_X, _Y).predict(_X)
    b = TorchMLPRegressor(**_FAST, optimizer_params={}).fit(_X, _Y).predict(_X)
    np.testing.assert_array_equal(a, b)


def test_adamo_by_name_and_kappa_zero_is_adam():
    from sklearn_icml26.optim import AdamO

    reg = TorchMLPRegressor(**_FAST, optimizer="adamo",
                            optimizer_params={"kappa": 0.0, "tau": 0.5}).fit(_X, _Y)
    opt = reg.net_.optimizer_
    assert isinstance(opt, AdamO)
    assert opt.param_groups[0]["kappa"] == 0.0 and opt.param_groups[0]["tau"] == 0.5
    # the per-tensor Adam (the adapter runs Adam fused by default: same update, other rounding)
    adam = TorchMLPRegressor(**_FAST, optimizer="adam",
                             optimizer_params={"fused": False}).fit(_X, _Y)
    np.testing.assert_array_equal(reg.predict(_X), adam.predict(_X))
    # kappa = 1 changes the 16 x 3 hidden weights, hence the predictions
    ortho = TorchMLPRegressor(**_FAST, optimizer="adamo",
                              optimizer_params={"kappa": 1.0, "tau": 100.0}).fit(_X, _Y)
    assert not np.array_equal(ortho.predict(_X), adam.predict(_X))


def test_bad_key_names_the_argument_and_the_optimizer():
    reg = TorchMLPRegressor(**_FAST, optimizer="adam", optimizer_params={"kappa": 0.1})
    with pytest.raises(ValueError, match=r"optimizer_params key 'kappa' .* Adam.*betas"):
        reg.fit(_X, _Y)


@pytest.mark.parametrize("params, exc, match", [
    ({"lr": 0.1}, ValueError, "optimizer_params may not set 'lr'"),
    ({"params": []}, ValueError, "optimizer_params may not set 'params'"),
    ({1: 2}, TypeError, "optimizer_params keys must be str"),
])
def test_reserved_or_malformed_keys(params, exc, match):
    with pytest.raises(exc, match=match):
        TorchMLPRegressor(**_FAST, optimizer_params=params).fit(_X, _Y)


def test_not_a_dict_is_rejected_by_parameter_validation():
    with pytest.raises(ValueError, match="optimizer_params"):
        TorchMLPRegressor(**_FAST, optimizer_params=[("eps", 1e-4)]).fit(_X, _Y)


def test_estimator_without_the_parameter_still_trains():
    class _NoKnob(TorchMLPRegressor):
        def get_params(self, deep=True):
            params = super().get_params(deep)
            params.pop("optimizer_params", None)
            return params

    reg = _NoKnob(**_FAST)
    del reg.optimizer_params
    opt = make_optimizer(reg, torch.nn.Linear(2, 1).parameters())
    assert opt.defaults["eps"] == 1e-8 and opt.defaults["lr"] == reg.lr  # Adam's defaults


def test_weight_decay_and_optimizer_params_reach_holders_optimizer():
    reg = HolderTransformerRegressor(weight_decay=0.01, optimizer_params={"eps": 1e-5},
                                     n_blocks=1, d_model=8, d_ff=8, **_FAST).fit(_X, _Y)
    group = reg.net_.optimizer_.param_groups[0]
    assert (group["weight_decay"], group["eps"], group["fused"]) == (0.01, 1e-5, True)
    bad = HolderTransformerRegressor(optimizer_params={"nesterov": True}, **_FAST)
    with pytest.raises(ValueError, match="'nesterov' is not an argument"):
        bad.fit(_X, _Y)


@pytest.mark.parametrize("cls", [TorchMLPRegressor, TorchAutoencoder,
                                 HolderTransformerRegressor, HDTreeLineage, MPFSurface])
def test_torch_estimators_expose_the_knob(cls):
    est = cls(optimizer_params={"eps": 1e-6})
    assert clone(est).get_params()["optimizer_params"] == {"eps": 1e-6}
    assert "optimizer_params" in cls._parameter_constraints
    assert "optimizer_params" in TorchEstimatorMixin._torch_parameter_constraints
    assert ":class:`sklearn_icml26.optim.AdamO`" in TorchEstimatorMixin.__doc__
    assert "optimizer_params :" in cls.__doc__
