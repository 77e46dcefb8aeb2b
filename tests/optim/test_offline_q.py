"""OfflineQRegressor: TD and supervised modes, divergence, diagnostics, routing, bad input."""

import warnings

import numpy as np
import pytest
import sklearn
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold, cross_validate

from sklearn_icml26.datasets import make_offline_rl_dataset
from sklearn_icml26.optim import OfflineQRegressor

torch.set_num_threads(1)

_SMALL = dict(hidden_layer_sizes=(16,), max_iter=40, batch_size=32, diagnose_every=0,
              random_state=0)


@pytest.fixture(scope="module")
def data():
    return make_offline_rl_dataset(n_transitions=300, random_state=0)


def _fit(est, d, **kw):
    return est.fit(d.states, d.rewards, actions=d.actions, next_states=d.next_states,
                   terminals=d.terminals, **kw)


def test_same_seed_same_fit_and_td_error(data):
    a = _fit(OfflineQRegressor(**_SMALL, target_update="polyak"), data)
    b = _fit(OfflineQRegressor(**_SMALL, target_update="polyak"), data)
    np.testing.assert_array_equal(a.q_max_curve_, b.q_max_curve_)
    np.testing.assert_array_equal(a.predict_q(data.states), b.predict_q(data.states))
    c = _fit(OfflineQRegressor(**{**_SMALL, "random_state": 1}), data)
    assert not np.array_equal(a.predict_q(data.states), c.predict_q(data.states))
    assert a.n_actions_ == 4 and a.q_bound_ == pytest.approx(100.0) and a.td_mode_
    # td_error is Q(s, a) - r - gamma max_a' Q(s', a') of the online network
    q, q2 = a.predict_q(data.states), a.predict_q(data.next_states)
    expected = q[np.arange(300), data.actions] - data.rewards - 0.99 * q2.max(axis=1)
    np.testing.assert_allclose(a.td_error(data.states, data.rewards, actions=data.actions,
                                          next_states=data.next_states), expected, rtol=1e-6,
                               atol=1e-6)
    np.testing.assert_array_equal(a.predict(data.states), q.max(axis=1))
    np.testing.assert_array_equal(a.predict_action(data.states), q.argmax(axis=1))


def test_target_updates(data):
    hard = _fit(OfflineQRegressor(**{**_SMALL, "max_iter": 20}, target_update="hard",
                                  hard_update_every=10), data)
    for p, q in zip(hard.module_.parameters(), hard.target_module_.parameters(), strict=True):
        assert torch.equal(p, q)  # copied at step 20
    polyak = _fit(OfflineQRegressor(**_SMALL, target_update="polyak", polyak_tau=0.5), data)
    w, wt = polyak.module_.body[0].weight, polyak.target_module_.body[0].weight
    assert not torch.equal(w, wt)
    assert _fit(OfflineQRegressor(**_SMALL, target_update="none"), data).target_module_ is None
    ln = _fit(OfflineQRegressor(**_SMALL, layer_norm=True), data)
    assert isinstance(ln.module_.body[1], torch.nn.LayerNorm)


def test_supervised_mode_is_regression_with_negative_semidefinite_s():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 3))
    y = 5.0 + 3.0 * X[:, 0] - 2.0 * X[:, 1]
    est = OfflineQRegressor(hidden_layer_sizes=(32,), max_iter=300, batch_size=-1, lr=1e-2,
                            diagnose_every=100, diagnose_points=40, random_state=0).fit(X, y)
    assert est.n_actions_ == 1 and not est.td_mode_
    assert est.q_bound_ == pytest.approx(np.max(np.abs(y)))
    assert est.score(X, y) > 0.95
    # S = -K: every eigenvalue is real and <= 0 (up to float32 rounding of K's entries)
    assert len(est.rho_curve_) == 3 and np.all(est.max_real_eig_curve_ <= 1e-4)
    assert np.all(est.isometry_defect_curve_ >= 0)


def test_diagnostics_record_rho_in_td_mode(data):
    est = _fit(OfflineQRegressor(**{**_SMALL, "diagnose_every": 20, "diagnose_points": 16},
                                 target_update="none"), data)
    np.testing.assert_array_equal(est.diagnose_steps_, [0, 20])
    assert np.all(est.rho_curve_ > 0) and est.rho_curve_.shape == (2,)


def test_collapse_stops_with_the_divergence_warning_and_keeps_the_state(data):
    est = OfflineQRegressor(**{**_SMALL, "max_iter": 200}, target_update="none", lr=1.0,
                            divergence_threshold=2.0)
    with pytest.warns(ConvergenceWarning,
                      match="OfflineQRegressor: the training loss rose a hundredfold"):
        _fit(est, data)
    assert est.diverged_ and est.n_iter_ == est.divergence_step_ < 200
    assert len(est.loss_curve_) == len(est.q_max_curve_) == est.n_iter_
    assert est.q_max_curve_[-1] > 2.0 * est.q_bound_  # the collapse is what stopped it
    assert np.all(np.isfinite(est.predict_q(data.states)))


def test_non_finite_loss_restores_the_last_checked_state(data):
    """SGD at lr=1e6 (no collapse stop before): the loss turns non-finite; the networks get back the
    state of the last checkpoint (every 100 steps) whose loss was finite, the initial one."""
    init = _fit(OfflineQRegressor(**{**_SMALL, "max_iter": 1}, lr=1e-12), data)
    est = OfflineQRegressor(**{**_SMALL, "max_iter": 200}, lr=1e6, optimizer="sgd",
                            target_update="hard",
                            divergence_threshold=1e300)
    with pytest.warns(ConvergenceWarning, match="OfflineQRegressor: the training loss became "
                      r"non-finite in step \d+; .* \(the initial ones\) were restored"):
        _fit(est, data)
    assert est.diverged_ and est.n_iter_ == 0 and 1 <= est.divergence_step_ < 100
    assert est.loss_curve_ == [] and est.q_max_curve_.shape == (0,)
    np.testing.assert_allclose(est.predict_q(data.states), init.predict_q(data.states),
                               rtol=1e-5, atol=1e-6)
    for p, q in zip(est.module_.parameters(), est.target_module_.parameters(), strict=True):
        assert torch.equal(p, q)


def test_adamo_reaches_the_critic(data):
    est = _fit(OfflineQRegressor(**_SMALL, optimizer="adamo",
                                 optimizer_params={"kappa": 1.0, "tau": 1.0}), data)
    assert type(est.optimizer_).__name__ == "AdamO"
    assert est.optimizer_.param_groups[0]["tau"] == 1.0
    with pytest.raises(ValueError, match="optimizer_params key 'kapa'"):
        _fit(OfflineQRegressor(**_SMALL, optimizer="adamo",
                               optimizer_params={"kapa": 1.0}), data)


def test_metadata_routing_through_cross_validate(data):
    with sklearn.config_context(enable_metadata_routing=True):
        est = OfflineQRegressor(**{**_SMALL, "max_iter": 10}).set_fit_request(
            actions=True, next_states=True, terminals=True).set_score_request(
            actions=True, next_states=True, terminals=True)
        out = cross_validate(est, data.states, data.rewards, cv=KFold(2),
                             params={"actions": data.actions, "next_states": data.next_states,
                                     "terminals": data.terminals}, return_estimator=True,
                             error_score="raise")
    assert all(e.td_mode_ and e.n_actions_ == 4 for e in out["estimator"])
    assert np.all(np.isfinite(out["test_score"])) and np.all(out["test_score"] <= 1)


def test_td_score_is_the_r2_against_the_td_targets(data):
    """Issue 40 item 4: in TD mode score was the R^2 of max_a Q against the immediate
    reward; it is the R^2 of Q(s, a) against r + gamma (1 - done) max_a' Q(s', a')."""
    est = _fit(OfflineQRegressor(**_SMALL, gamma=0.9), data)
    tr = dict(actions=data.actions, next_states=data.next_states, terminals=data.terminals)
    q = est.predict_q(data.states)[np.arange(300), data.actions]
    target = q - est.td_error(data.states, data.rewards, **tr)
    expected = 1 - np.sum((target - q) ** 2) / np.sum((target - target.mean()) ** 2)
    assert est.score(data.states, data.rewards, **tr) == pytest.approx(expected, rel=1e-9)
    with pytest.raises(ValueError, match="needs actions and next_states"):
        est.score(data.states, data.rewards)
    sup = OfflineQRegressor(**_SMALL).fit(data.states, data.rewards)
    with pytest.raises(ValueError, match="fitted without them"):
        sup.score(data.states, data.rewards, **tr)
    assert sup.score(data.states, data.rewards) == pytest.approx(
        1 - np.sum((data.rewards - sup.predict(data.states)) ** 2)
        / np.sum((data.rewards - data.rewards.mean()) ** 2))


@pytest.mark.parametrize("kwargs, match", [
    ({"actions": np.full(300, 4)}, r"actions must be in \[0, n_actions\)"),
    ({"actions": np.full(300, -1)}, "actions must be"),
    ({"actions": np.full(300, 0.5)}, "actions must be integer"),
    ({"actions": np.zeros(299, int)}, r"actions must have shape \(300,\)"),
    ({"next_states": np.zeros((300, 3))}, "next_states must have the shape of X"),
    ({"next_states": np.full((300, 2), np.nan)}, "next_states contains NaN"),
    ({"terminals": np.full(300, 0.5)}, "terminals must be boolean"),
    ({"terminals": np.full(300, 2)}, "terminals must be boolean"),
    ({"terminals": np.zeros(10, bool)}, r"terminals must have shape \(300,\)"),
])
def test_bad_transitions(data, kwargs, match):
    args = dict(actions=data.actions, next_states=data.next_states, terminals=data.terminals)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        OfflineQRegressor(**_SMALL, n_actions=4).fit(data.states, data.rewards, **args)


def test_missing_pieces_and_bad_parameters(data):
    with pytest.raises(ValueError, match="next_states were given without actions"):
        OfflineQRegressor(**_SMALL).fit(data.states, data.rewards,
                                        next_states=data.next_states)
    with pytest.raises(ValueError, match="terminals were given without next_states"):
        OfflineQRegressor(**_SMALL).fit(data.states, data.rewards, terminals=data.terminals)
    for params, name in [({"gamma": 1.0}, "gamma"), ({"gamma": -0.1}, "gamma"),
                         ({"target_update": "soft"}, "target_update"),
                         ({"polyak_tau": 0.0}, "polyak_tau"),
                         ({"hidden_layer_sizes": (16, 0)}, "hidden_layer_sizes")]:
        with pytest.raises(ValueError, match=name):
            _fit(OfflineQRegressor(**{**_SMALL, **params}), data)


def test_no_warning_on_a_stable_fit(data):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = _fit(OfflineQRegressor(**_SMALL), data)
    assert not est.diverged_ and est.n_iter_ == 40


def test_adam_collapses_on_narrow_data_and_adamo_does_not():
    # the planted failure: no target network, narrow behaviour data, lr 1e-3
    d = make_offline_rl_dataset(n_transitions=10_000, random_state=0)
    common = dict(hidden_layer_sizes=(128, 128), target_update="none", max_iter=420,
                  diagnose_every=0, random_state=0)
    adam = OfflineQRegressor(**common, optimizer="adam")
    with pytest.warns(ConvergenceWarning, match="diverged"):
        _fit(adam, d)
    assert adam.diverged_ and adam.divergence_step_ < 420  # step 351 on this seed
    assert adam.q_max_curve_[-1] > 100 * adam.q_bound_
    adamo = OfflineQRegressor(**common, optimizer="adamo",
                              optimizer_params={"kappa": 1.0, "tau": 1.0})
    _fit(adamo, d)
    assert not adamo.diverged_ and adamo.q_max_curve_.max() < adamo.q_bound_


def test_supervised_divergence_rule_and_history_are_in_the_units_of_y():
    """Regression on y with an offset (y = s_0 + 5): max|Q| in q_max_curve_ is that of
    the predictions (about 6, not the centred ~1), and the stop rule compares it with
    divergence_threshold * q_bound_ = 1.05 * max|y|, which a good fit never exceeds."""
    d = make_offline_rl_dataset(n_transitions=2000, random_state=0)
    y = d.states[:, 0] + 5.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = OfflineQRegressor(hidden_layer_sizes=(16,), max_iter=300, batch_size=64,
                                diagnose_every=0, lr=1e-2, divergence_threshold=1.05,
                                random_state=0).fit(d.states, y)
    assert not est.diverged_ and est.n_iter_ == 300
    assert est.q_bound_ == np.abs(y).max()
    assert 4.0 < est.q_max_curve_[-1] <= 1.05 * est.q_bound_
    assert abs(est.q_max_curve_[-1] - np.abs(est.predict(d.states)).max()) < 0.5


def test_isometry_penalty_known_values_and_gradient():
    from sklearn_icml26.optim._adamo import orthogonality_residual
    from sklearn_icml26.optim._offline_q import _isometry_penalty

    net = torch.nn.Sequential(torch.nn.Linear(3, 3, bias=False), torch.nn.Linear(3, 1))
    with torch.no_grad():
        net[0].weight.copy_(2 * torch.eye(3))
    # 2I: R = ||4I - I||^2 / 4 = 27 / 4; the 1 x 3 head is outside the scope
    assert float(_isometry_penalty(net).detach()) == pytest.approx(6.75)
    W = torch.linalg.qr(torch.randn(5, 3, generator=torch.Generator().manual_seed(0)))[0]
    lin = torch.nn.Linear(3, 5, bias=False)
    with torch.no_grad():
        lin.weight.copy_(W)
    assert float(_isometry_penalty(lin).detach()) == pytest.approx(0.0, abs=1e-10)
    with torch.no_grad():
        lin.weight.mul_(1.5)
    _isometry_penalty(lin).backward()
    torch.testing.assert_close(lin.weight.grad, orthogonality_residual(lin.weight.detach()))


def test_orthogonality_penalty_pulls_the_weights_to_isometries(data):
    def defect(est):
        W = est.module_.body[2].weight.detach()  # the 16 x 16 hidden block
        return float(torch.linalg.matrix_norm(W.T @ W - torch.eye(16), ord=2))

    kw = {**_SMALL, "hidden_layer_sizes": (16, 16), "max_iter": 200, "lr": 1e-2}
    plain = _fit(OfflineQRegressor(**kw), data)
    pen = _fit(OfflineQRegressor(**kw, orthogonality_penalty=1.0), data)
    assert defect(pen) < 0.2 * defect(plain)
    assert np.all(np.isfinite(pen.loss_curve_))


@pytest.mark.parametrize("factor", [1e300, 1e-300])
@pytest.mark.parametrize("td", [False, True])
def test_targets_near_the_float64_limits_scale_the_fit(data, factor, td):
    """Issue 40 item 9: y x 1e300 gave all-inf predictions (and a spurious divergence),
    y x 1e-300 predictions of order 0.1; the critic fitted on y * factor predicts factor
    times the critic fitted on y."""
    kw = dict(hidden_layer_sizes=(8,), max_iter=30, batch_size=-1, lr=0.05, diagnose_every=0,
              precision="float64", random_state=0)
    fit_kw = (dict(actions=data.actions, next_states=data.next_states,
                   terminals=data.terminals) if td else {})
    y = data.rewards if td else data.states[:, 0] + 1.0
    ref = OfflineQRegressor(**kw).fit(data.states, y, **fit_kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = OfflineQRegressor(**kw).fit(data.states, y * factor, **fit_kw)
    assert not est.diverged_ and est.n_iter_ == 30
    np.testing.assert_allclose(est.predict_q(data.states) / factor,
                               ref.predict_q(data.states), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(est.q_max_curve_ / factor, ref.q_max_curve_, rtol=1e-6)
