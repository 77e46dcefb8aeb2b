"""The training-loop primitives of sklearn_icml26.base: FitContext, seeded_torch,
make_optimizer, DivergenceGuard, and the adapter's validation early stopping."""

import threading
import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from sklearn_icml26.base import (
    DivergenceGuard,
    FitContext,
    TorchEstimatorMixin,
    make_optimizer,
    seeded_torch,
)
from sklearn_icml26.utils._testing import TorchMLPRegressor

torch.set_num_threads(1)

_X = np.random.RandomState(0).normal(size=(60, 3))
_Y = _X @ np.array([1.0, -0.5, 0.2])


# -- seeded_torch ------------------------------------------------------------------------------
def test_seeded_torch_is_reproducible_and_leaves_the_callers_rng_alone():
    torch.manual_seed(123)
    expected_next = torch.rand(3)
    torch.manual_seed(123)
    with seeded_torch(0) as seed:
        a = torch.rand(4)
    with seeded_torch(0) as seed_again:
        b = torch.rand(4)
    assert isinstance(seed, int) and seed == seed_again
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(torch.rand(3), expected_next)  # caller's stream unchanged
    with seeded_torch(1):
        assert not torch.equal(torch.rand(4), a)
    rng = np.random.RandomState(0)
    with seeded_torch(rng) as s1, seeded_torch(rng) as s2:  # the lock is re-entrant
        assert s1 != s2  # a RandomState advances


def test_seeded_torch_holds_the_lock_against_other_threads():
    inside, order = threading.Event(), []

    def other():
        inside.wait()
        with seeded_torch(0):
            order.append("other")

    thread = threading.Thread(target=other)
    thread.start()
    with seeded_torch(0):
        inside.set()
        thread.join(0.2)
        order.append("main")
    thread.join()
    assert order == ["main", "other"]


# -- make_optimizer ----------------------------------------------------------------------------
class _Params:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


def _net_params():
    return torch.nn.Linear(3, 2).parameters()


def test_make_optimizer_resolution_and_fused_policy():
    opt = make_optimizer(_Params(), _net_params())  # nothing declared: Adam defaults, fused
    assert type(opt) is torch.optim.Adam and opt.defaults["lr"] == 1e-3
    assert opt.defaults["fused"] is True
    opt = make_optimizer(_Params(optimizer="adamw", lr=0.1, weight_decay=0.3,
                                 optimizer_params={"betas": (0.5, 0.6)}), _net_params())
    assert type(opt) is torch.optim.AdamW and opt.defaults["fused"] is True
    assert (opt.defaults["lr"], opt.defaults["weight_decay"], opt.defaults["betas"]) == (
        0.1, 0.3, (0.5, 0.6))
    # optimizer_params override weight_decay; overrides override everything
    opt = make_optimizer(_Params(optimizer="sgd", lr=0.1, weight_decay=0.3,
                                 optimizer_params={"weight_decay": 0.2}), _net_params(), lr=0.5)
    assert type(opt) is torch.optim.SGD and not opt.defaults.get("fused")
    assert (opt.defaults["lr"], opt.defaults["weight_decay"]) == (0.5, 0.2)
    # foreach named by the user: no fused kernel
    opt = make_optimizer(_Params(optimizer_params={"foreach": False}), _net_params())
    assert not opt.defaults["fused"] and opt.defaults["foreach"] is False
    # an estimator class that opts out keeps the per-tensor update; optimizer_params win
    opt = make_optimizer(_Params(_fused_optimizer=False), _net_params())
    assert opt.defaults["fused"] is False
    opt = make_optimizer(_Params(_fused_optimizer=False, optimizer_params={"fused": True}),
                         _net_params())
    assert opt.defaults["fused"] is True
    from sklearn_icml26.lineage import HDTreeLineage

    assert make_optimizer(HDTreeLineage(), _net_params()).defaults["fused"] is False
    from sklearn_icml26.optim import AdamO

    assert type(make_optimizer(_Params(optimizer="adamo"), _net_params())) is AdamO
    with pytest.raises(ValueError, match="'kappa' is not an argument of the optimizer Adam"):
        make_optimizer(_Params(optimizer_params={"kappa": 1.0}), _net_params())


def test_the_adapter_builds_the_optimizer_make_optimizer_builds():
    reg = TorchMLPRegressor(max_epochs=1, batch_size=-1, optimizer="adamw", lr=0.02,
                            optimizer_params={"eps": 1e-5}, random_state=0).fit(_X, _Y)
    direct = make_optimizer(reg, reg.net_.module_.parameters())
    assert type(reg.net_.optimizer_) is type(direct)
    assert reg.net_.optimizer_.defaults == direct.defaults


# -- DivergenceGuard ---------------------------------------------------------------------------
def _guarded(n_params=2):
    module = torch.nn.Linear(n_params, 1)
    return module, DivergenceGuard(module, "Net")


def _set(module, value):
    with torch.no_grad():
        module.weight.fill_(value)


def _w(module):
    return module.weight.detach()[0, 0].item()


def _finish(guard, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        n_iter = guard.finish(**kwargs)
    return n_iter, [str(w.message) for w in caught if w.category is ConvergenceWarning]


def test_guard_ordinary_run_keeps_the_last_state_and_counts_epochs():
    module, guard = _guarded()
    for epoch in (1, 2, 3):
        _set(module, epoch)
        assert not guard.observe(torch.tensor([1.0, 0.5]))
        assert not guard.checkpoint(epoch, loss=0.8)
    n_iter, messages = _finish(guard, final_loss=0.7)
    assert (n_iter, messages, guard.stopped) == (3, [], False)
    assert _w(module) == 3
    assert guard._good is None and guard._pending is None  # copies dropped


def test_guard_restores_the_last_validated_state_at_a_non_finite_loss():
    module, guard = _guarded()
    _set(module, 1.0)
    guard.observe(1.0)
    guard.checkpoint(1)  # pending: state 1.0
    _set(module, 2.0)
    guard.observe(1.0)  # computed with state 1.0: validates it
    guard.checkpoint(2)  # pending: state 2.0
    _set(module, 3.0)
    assert guard.observe(float("nan"))  # computed with state 2.0: not valid
    assert guard.stopped and guard.observe(1.0) and guard.checkpoint(3)
    assert _w(module) == 1.0  # restored at once
    n_iter, messages = _finish(guard)
    assert n_iter == 1 and guard.stopped_epoch_ == 3 and guard.good_epoch_ == 1
    assert messages == ["Net: the training loss became non-finite in epoch 3; training "
                        "stopped and the last parameters that gave a finite loss (those after "
                        "epoch 1) were restored. Lower lr or check the input scaling."]


def test_guard_initial_state_non_finite_parameters_and_final_loss():
    module, guard = _guarded()
    initial = module.weight.detach().clone()
    _set(module, float("inf"))
    assert guard.checkpoint(1)  # non-finite parameters stop at once
    torch.testing.assert_close(module.weight, initial)
    n_iter, messages = _finish(guard)
    assert n_iter == 0 and "(the initial ones)" in messages[0]
    # a non-finite loss of the final state discards the last checkpoint
    module, guard = _guarded()
    _set(module, 1.0)
    guard.observe(1.0)
    guard.checkpoint(1)
    guard.observe(1.0)
    _set(module, 5.0)
    guard.checkpoint(2)
    n_iter, messages = _finish(guard, final_loss=torch.tensor(float("inf")))
    assert n_iter == 1 and _w(module) == 1.0
    assert messages and "non-finite in epoch 2" in messages[0]


def test_guard_hundredfold_rise_warns_and_keeps_the_state():
    module, guard = _guarded()
    guard.observe(0.0)  # zero-weight batch: no reference
    guard.observe(2.0)
    guard.checkpoint(1, loss=150.0)
    _set(module, 7.0)
    guard.observe(190.0)
    guard.checkpoint(2, loss=250.0)
    n_iter, messages = _finish(guard)
    assert n_iter == 2 and _w(module) == 7.0
    assert messages == ["Net: the training loss rose a hundredfold or more over the fit "
                        "(first step 2, last epoch 250); the model has probably diverged. "
                        "Lower lr."]
    module, guard = _guarded()  # 99-fold: no warning; steps counted without checkpoints
    for loss in (1.0, 50.0, 99.0):
        guard.observe(loss)
    assert _finish(guard) == (3, [])


def test_guard_on_several_modules_and_a_step_unit():
    a, b = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)
    guard = DivergenceGuard([a, b], "Loop", unit="step")
    before = [m.weight.detach().clone() for m in (a, b)]
    _set(a, 9.0)
    _set(b, 9.0)
    assert guard.observe(float("nan"))
    for m, w in zip((a, b), before, strict=True):
        torch.testing.assert_close(m.weight, w)
    assert "non-finite in step 1" in _finish(guard)[1][0]


def test_the_adapters_warning_points_at_the_callers_line():
    with pytest.warns(ConvergenceWarning) as record:
        TorchMLPRegressor(max_epochs=3, lr=1e6, batch_size=-1, random_state=0).fit(_X, _Y)
    assert [w.filename for w in record] == [__file__]


# -- FitContext and the hooks -------------------------------------------------------------------
class _ContextMLP(TorchMLPRegressor):
    seen = []

    def _build_module(self, n_features_in, n_outputs, context):
        type(self).seen.append(("module", context.width))
        return torch.nn.Linear(n_features_in, context.width)

    def _build_criterion(self, context):
        type(self).seen.append(("criterion", context.width))
        return super()._build_criterion(context)

    def _build_callbacks(self, context):
        type(self).seen.append(("callbacks", context.width))
        return []

    def fit(self, X, y):
        self._fit_net(self._as_input(X), self._as_input(np.tile(y[:, None], 2)),
                      context=FitContext(width=2))
        return self


def test_hooks_receive_the_fit_context_and_nothing_is_left_on_the_estimator():
    _ContextMLP.seen = []
    reg = _ContextMLP(max_epochs=2, batch_size=-1, random_state=0)
    before = set(vars(reg))
    reg.fit(_X, _Y)
    assert _ContextMLP.seen == [("module", 2), ("criterion", 2), ("callbacks", 2)]
    assert sorted(set(vars(reg)) - before) == ["loss_curve_", "n_iter_", "net_"]
    assert len(reg.loss_curve_) == reg.n_iter_ == 2
    assert reg.loss_curve_ == [float(r["train_loss"]) for r in reg.net_.history]
    assert FitContext(a=1).a == 1


# -- validation early stopping --------------------------------------------------------------------
class _EarlyMLP(TorchMLPRegressor):
    _parameter_constraints = {**TorchMLPRegressor._parameter_constraints,
                              **TorchEstimatorMixin._early_stopping_constraints}

    def __init__(self, hidden_size=16, *, max_epochs=100, batch_size=64, lr=0.01,
                 optimizer="adam", precision="float32", device="cpu", random_state=None,
                 verbose=0, optimizer_params=None, weight_decay=0.0, early_stopping=False,
                 validation_fraction=0.1, n_iter_no_change=10, tol=1e-4):
        super().__init__(hidden_size, max_epochs=max_epochs, batch_size=batch_size, lr=lr,
                         optimizer=optimizer, precision=precision, device=device,
                         random_state=random_state, verbose=verbose,
                         optimizer_params=optimizer_params)
        self.weight_decay = weight_decay
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol


def test_early_stopping_stops_restores_the_best_state_and_records_curves():
    rng = np.random.RandomState(1)
    X = rng.normal(size=(80, 3))
    y = X[:, 0] + 0.5 * rng.normal(size=80)  # noisy: an overfitting net stops early
    params = dict(hidden_size=64, max_epochs=300, lr=0.05, batch_size=-1,
                  precision="float64", random_state=0)
    reg = _EarlyMLP(early_stopping=True, validation_fraction=0.25, n_iter_no_change=5,
                    **params).fit(X, y)
    assert reg.n_iter_ < 300
    curve = reg.validation_loss_curve_
    assert len(curve) == len(reg.loss_curve_) == reg.n_iter_
    best = int(np.argmin(curve))
    assert reg.best_loss_ == min(curve) and reg.n_iter_ - 1 - best == 5
    # the held-out 20 samples are those of a permutation seeded from random_state
    val = np.random.RandomState(0).permutation(80)[:20]
    with torch.no_grad():
        pred = reg.predict(X[val])
    assert np.mean((pred - y[val]) ** 2) == pytest.approx(reg.best_loss_, rel=1e-9)
    plain = _EarlyMLP(**params).fit(X, y)
    assert plain.n_iter_ == 300
    assert plain.validation_loss_curve_ is None and plain.best_loss_ is None
    assert clone(reg).get_params()["n_iter_no_change"] == 5


def test_weight_decay_reaches_the_adapters_optimizer():
    reg = _EarlyMLP(weight_decay=0.1, max_epochs=1, batch_size=-1, random_state=0).fit(_X, _Y)
    assert reg.net_.optimizer_.param_groups[0]["weight_decay"] == 0.1


# -- shared docstrings ---------------------------------------------------------------------------
def test_substitution_indents_leaves_literal_braces_and_rejects_unknown_placeholders():
    from sklearn_icml26.utils._docstrings import Substitution, _torch_docstrings

    @Substitution(a="first line\nsecond line", b="short")
    def f():
        """Doc.

        Parameters
        ----------
        x : {"p", "q"}, default="p"
            {a}
        y : int
            Inline {b} and {unknown} stay.
        """

    assert '    x : {"p", "q"}, default="p"\n            first line\n            second line\n' \
        in f.__doc__
    assert "Inline short and {unknown} stay." in f.__doc__
    with pytest.raises(KeyError, match=r"\{typo\} names no shared text"):
        Substitution(a="x")(type("C", (), {"__doc__": "C.\n\n    {typo}\n"}))
    # every shared text is used by the adapter estimators (verbose_steps by those training in
    # max_iter steps), and none is left unfilled
    from sklearn_icml26.approximation import HolderTransformerRegressor
    from sklearn_icml26.optim import OfflineQRegressor

    for key in _torch_docstrings:
        cls = OfflineQRegressor if key == "verbose_steps" else HolderTransformerRegressor
        assert "{" + key + "}" not in cls.__doc__
        assert _torch_docstrings[key].splitlines()[0] in cls.__doc__


# -- a user's Ctrl-C ---------------------------------------------------------------------------
class _InterruptedMLP(TorchMLPRegressor):
    """A regressor whose second epoch ends in a KeyboardInterrupt, as a user's Ctrl-C would."""

    def _build_callbacks(self, context):
        from skorch.callbacks import Callback

        class Interrupt(Callback):
            def on_epoch_end(self, net, **kwargs):
                if len(net.history) == 2:
                    raise KeyboardInterrupt

        return [*super()._build_callbacks(context), ("interrupt", Interrupt())]


def test_a_users_keyboard_interrupt_is_not_swallowed():
    # skorch ends its loop on any KeyboardInterrupt and swallows it; the adapter re-raises
    # the ones it did not raise itself (its divergence and early stops)
    with pytest.raises(KeyboardInterrupt):
        _InterruptedMLP(max_epochs=5, batch_size=-1, random_state=0).fit(_X, _Y)
    with pytest.warns(ConvergenceWarning):  # the adapter's own stop still returns
        TorchMLPRegressor(max_epochs=5, batch_size=-1, lr=1e6, random_state=0).fit(_X, _Y)
