"""make_offline_rl_dataset and evaluate_offline_rl_policy: dynamics, rewards and behaviour."""

import numpy as np
import pytest

from sklearn_icml26.datasets import make_offline_rl_dataset
from sklearn_icml26.datasets._offline_rl import _PM_MOVES, cartpole_step
from sklearn_icml26.metrics import evaluate_offline_rl_policy


def test_pointmass_dynamics_rewards_and_narrow_behaviour():
    d = make_offline_rl_dataset(n_transitions=4000, epsilon=0.2, random_state=0)
    assert d.states.shape == d.next_states.shape == (4000, 2) and d.n_actions == 4
    assert np.all(np.abs(d.states) <= 1) and np.all(np.abs(d.next_states) <= 1)
    # s' = clip(s + move + noise): where nothing is clipped the noise is N(0, 0.01^2)
    free = np.all(np.abs(d.states + _PM_MOVES[d.actions]) < 0.95, axis=1)
    noise = (d.next_states - d.states - _PM_MOVES[d.actions])[free]
    assert abs(noise.std() - 0.01) < 0.001 and np.abs(noise).max() < 0.06
    reward = np.linalg.norm(d.next_states - [0.8, 0.8], axis=1) < 0.2
    np.testing.assert_array_equal(d.rewards, reward.astype(float))
    assert not d.terminals.any() and d.q_bound == pytest.approx(100.0)
    # action 0 with probability 1 - eps + eps / 4 = 0.85
    assert abs((d.actions == 0).mean() - 0.85) < 0.03
    u = make_offline_rl_dataset(n_transitions=4000, behaviour="uniform", random_state=0)
    assert np.all(np.abs(np.bincount(u.actions, minlength=4) / 4000 - 0.25) < 0.03)
    again = make_offline_rl_dataset(n_transitions=4000, epsilon=0.2, random_state=0)
    np.testing.assert_array_equal(again.next_states, d.next_states)


def test_cartpole_episodes_and_heuristic_behaviour():
    d = make_offline_rl_dataset("CartPole-v1", n_transitions=1500, epsilon=0.0,
                                random_state=0)
    assert d.states.shape == (1500, 4) and d.n_actions == 2 and np.all(d.rewards == 1)
    np.testing.assert_array_equal(d.actions, (d.states[:, 2] + 0.5 * d.states[:, 3] > 0))
    # consecutive rows chain unless an episode ended
    cont = ~d.terminals[:-1] & np.all(np.abs(d.states[1:]) > 0.05, axis=1)
    np.testing.assert_array_equal(d.states[1:][cont], d.next_states[:-1][cont])
    # falls are terminal: |theta| > 12 degrees or |x| > 2.4 exactly there
    fell = (np.abs(d.next_states[:, 2]) > 12 * 2 * np.pi / 360) | (
        np.abs(d.next_states[:, 0]) > 2.4)
    np.testing.assert_array_equal(d.terminals, fell)


def test_cartpole_step_matches_gymnasium():
    gym = pytest.importorskip("gymnasium", reason="gymnasium (optional extra 'rl') checks "
                                                  "the numpy cart-pole")
    env = gym.make("CartPole-v1").unwrapped
    rng = np.random.RandomState(0)
    for i in range(50):
        s = rng.uniform([-2, -2, -0.2, -2], [2, 2, 0.2, 2])
        a = int(rng.randint(2))
        env.reset(seed=i)
        env.state = s.copy()
        s2, r, term, _, _ = env.step(a)
        ours, rew, done = cartpole_step(s[None], np.array([a]))
        np.testing.assert_allclose(ours[0], s2, rtol=1e-6, atol=1e-6)  # gym casts to float32
        assert rew[0] == r and done[0] == term


def test_policy_evaluation_orders_policies():
    def to_goal(s):  # move along the axis farther from the goal
        dx, dy = 0.8 - s[:, 0], 0.8 - s[:, 1]
        return np.where(np.abs(dx) > np.abs(dy), np.where(dx > 0, 0, 1),
                        np.where(dy > 0, 2, 3))

    good = evaluate_offline_rl_policy(to_goal, random_state=0)
    uniform = evaluate_offline_rl_policy("uniform", random_state=0)
    assert good > 5 * uniform and good > 10
    assert evaluate_offline_rl_policy(to_goal, random_state=0) == good
    pole = evaluate_offline_rl_policy(
        lambda s: (s[:, 2] + 0.5 * s[:, 3] > 0).astype(int), "CartPole-v1", horizon=100,
        gamma=1.0, n_episodes=5, random_state=0)
    assert pole == 100.0  # the heuristic balances for 100 steps
    with pytest.raises(TypeError, match="policy"):
        evaluate_offline_rl_policy(3.0)
    with pytest.raises(ValueError, match="env"):
        make_offline_rl_dataset("MountainCar-v0")
    with pytest.raises(ValueError, match="epsilon"):
        make_offline_rl_dataset(epsilon=1.5)
