"""Logged transitions of small control tasks for offline RL (``make_offline_rl_dataset``)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch, check_random_state

from .._compat import Interval, StrOptions, validate_params

__all__ = ["OFFLINE_RL_ENVS", "evaluate_offline_rl_policy", "make_offline_rl_dataset"]

OFFLINE_RL_ENVS = ("pointmass", "CartPole-v1")

# -- pointmass ---------------------------------------------------------------------------------
_PM_MOVES = np.array([[0.1, 0.0], [-0.1, 0.0], [0.0, 0.1], [0.0, -0.1]])
_PM_GOAL = np.array([0.8, 0.8])
_PM_NOISE = 0.01


def _pointmass_step(s, a, rng):
    s2 = np.clip(s + _PM_MOVES[a] + rng.normal(0.0, _PM_NOISE, size=s.shape), -1.0, 1.0)
    r = (np.linalg.norm(s2 - _PM_GOAL, axis=1) < 0.2).astype(np.float64)
    return s2, r, np.zeros(len(s), dtype=bool)


# -- CartPole-v1 (Barto, Sutton and Anderson 1983; the constants and Euler step of gymnasium) --
_CP_GRAVITY, _CP_MASSCART, _CP_MASSPOLE, _CP_LENGTH = 9.8, 1.0, 0.1, 0.5
_CP_TOTAL = _CP_MASSCART + _CP_MASSPOLE
_CP_POLEMASS_LENGTH = _CP_MASSPOLE * _CP_LENGTH
_CP_FORCE, _CP_TAU = 10.0, 0.02
_CP_THETA_LIMIT = 12 * 2 * np.pi / 360
_CP_X_LIMIT = 2.4
_CP_MAX_STEPS = 500


def cartpole_step(s, a):
    """One Euler step of the cart-pole of CartPole-v1, vectorised over rows.

    The equations of motion of Barto, Sutton and Anderson (1983) with gymnasium's constants
    (gravity 9.8, cart mass 1.0, pole mass 0.1, half pole length 0.5, force 10, 0.02 s steps).

    Parameters
    ----------
    s : ndarray of shape (n, 4)
        States ``(x, x_dot, theta, theta_dot)``.
    a : ndarray of int of shape (n,)
        Actions, 0 pushes left and 1 right.

    Returns
    -------
    s_next : ndarray of shape (n, 4)
        Next states.
    reward : ndarray of shape (n,)
        1 for every step (the terminating one included, as in CartPole-v1).
    terminal : ndarray of bool of shape (n,)
        Whether the pole fell beyond 12 degrees or the cart left ``[-2.4, 2.4]``.
    """
    x, x_dot, theta, theta_dot = s.T
    force = np.where(np.asarray(a) == 1, _CP_FORCE, -_CP_FORCE)
    cos, sin = np.cos(theta), np.sin(theta)
    temp = (force + _CP_POLEMASS_LENGTH * theta_dot**2 * sin) / _CP_TOTAL
    theta_acc = (_CP_GRAVITY * sin - cos * temp) / (
        _CP_LENGTH * (4.0 / 3.0 - _CP_MASSPOLE * cos**2 / _CP_TOTAL))
    x_acc = temp - _CP_POLEMASS_LENGTH * theta_acc * cos / _CP_TOTAL
    s2 = np.stack([x + _CP_TAU * x_dot, x_dot + _CP_TAU * x_acc,
                   theta + _CP_TAU * theta_dot, theta_dot + _CP_TAU * theta_acc], axis=1)
    terminal = ((s2[:, 0] < -_CP_X_LIMIT) | (s2[:, 0] > _CP_X_LIMIT)
                | (s2[:, 2] < -_CP_THETA_LIMIT) | (s2[:, 2] > _CP_THETA_LIMIT))
    return s2, np.ones(len(s)), terminal


def _cartpole_heuristic(s):
    return (s[:, 2] + 0.5 * s[:, 3] > 0).astype(np.int64)


def _behaviour_actions(env, s, behaviour, epsilon, rng):
    n_actions = 4 if env == "pointmass" else 2
    uniform = rng.randint(n_actions, size=len(s))
    if behaviour == "uniform":
        return uniform
    base = np.zeros(len(s), dtype=np.int64) if env == "pointmass" else _cartpole_heuristic(s)
    return np.where(rng.uniform(size=len(s)) < epsilon, uniform, base)


@validate_params(
    {
        "env": [StrOptions(set(OFFLINE_RL_ENVS))],
        "n_transitions": [Interval(Integral, 1, None, closed="left")],
        "behaviour": [StrOptions({"narrow", "uniform"})],
        "epsilon": [Interval(Real, 0, 1, closed="both")],
        "gamma": [Interval(Real, 0, 1, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_offline_rl_dataset(env="pointmass", n_transitions=10_000, *, behaviour="narrow",
                            epsilon=0.1, gamma=0.99, random_state=None):
    """Logged transitions of a behaviour policy on a small control task.

    ``"pointmass"``: states ``s ~ U[-1, 1]^2`` drawn independently per transition; four
    actions move by 0.1 in +x, -x, +y or -y; ``s' = clip(s + move + N(0, 0.01^2), -1, 1)``;
    reward 1 when ``||s' - (0.8, 0.8)|| < 0.2``, else 0; no terminals. The ``"narrow"``
    behaviour takes action 0 (+x) with probability ``1 - epsilon`` and a uniform action
    otherwise, so most actions' values are bootstrapped from data that never took them, the
    regime in which TD critics collapse.

    ``"CartPole-v1"``: episodes of the cart-pole (equations of motion of Barto, Sutton and
    Anderson 1983 with the constants, Euler step, start distribution ``U[-0.05, 0.05]^4``,
    termination and 500-step limit of gymnasium's CartPole-v1, implemented here in numpy so
    gymnasium is not needed); reward 1 per step, ``terminals`` mark falls (a time-limit cut is
    not terminal). The ``"narrow"`` behaviour is epsilon-greedy on the heuristic
    ``a = 1[theta + 0.5 theta_dot > 0]``.

    ``"uniform"`` takes uniform actions on either task; ``epsilon`` sets the width of the
    narrow policy (1 is uniform).

    Parameters
    ----------
    env : {"pointmass", "CartPole-v1"}, default="pointmass"
        The task.
    n_transitions : int, default=10000
        Number of transitions (10,000 mirrors the scarce-data regime of Qiao et al. 2026).
    behaviour : {"narrow", "uniform"}, default="narrow"
        Behaviour policy.
    epsilon : float, default=0.1
        Probability of a uniform action of the narrow policy, in [0, 1].
    gamma : float, default=0.99
        Discount used for ``q_bound``, in [0, 1).
    random_state : int, RandomState instance or None, default=None
        Seeds states, actions and noise.

    Returns
    -------
    data : Bunch
        ``states`` (n_transitions, d), ``actions`` (n_transitions,) int, ``rewards``
        (n_transitions,), ``next_states`` (n_transitions, d), ``terminals``
        (n_transitions,) bool, ``n_actions`` (int), ``q_bound`` (``max r / (1 - gamma)``),
        ``gamma``, ``env``, ``behaviour``, ``epsilon`` and ``DESCR``.

    See Also
    --------
    evaluate_offline_rl_policy : Discounted return of a greedy policy on the same task.
    sklearn_icml26.optim.OfflineQRegressor : Offline critic to fit on the transitions.

    References
    ----------
    .. [1] Qiao, Yue, Wang and Ren, "AdamO: A Collapse-Suppressed Optimizer for Offline RL",
       ICML 2026, arXiv:2605.01968.
    .. [2] Barto, Sutton and Anderson, "Neuronlike adaptive elements that can solve difficult
       learning control problems", IEEE Trans. SMC 13(5), 1983.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_offline_rl_dataset
    >>> data = make_offline_rl_dataset(n_transitions=1000, random_state=0)
    >>> data.states.shape, data.n_actions, data.q_bound
    ((1000, 2), 4, 100.0)
    >>> bool((data.actions == 0).mean() > 0.9)
    True
    """
    rng = check_random_state(random_state)
    n = int(n_transitions)
    if env == "pointmass":
        s = rng.uniform(-1.0, 1.0, size=(n, 2))
        a = _behaviour_actions(env, s, behaviour, epsilon, rng)
        s2, r, done = _pointmass_step(s, a, rng)
        n_actions = 4
    else:
        parts, total = [], 0
        while total < n:
            state = rng.uniform(-0.05, 0.05, size=(1, 4))
            for _ in range(_CP_MAX_STEPS):
                act = _behaviour_actions(env, state, behaviour, epsilon, rng)
                nxt, rew, term = cartpole_step(state, act)
                parts.append((state[0], act[0], rew[0], nxt[0], term[0]))
                total += 1
                if term[0] or total >= n:
                    break
                state = nxt
        s, a, r, s2, done = (np.array(col) for col in zip(*parts, strict=True))
        a, done = a.astype(np.int64), done.astype(bool)
        n_actions = 2
    r_max = 1.0
    descr = (f"Offline RL transitions: env={env}, behaviour={behaviour}, epsilon={epsilon}, "
             f"{n} transitions, generated by sklearn_icml26.datasets.make_offline_rl_dataset.")
    return Bunch(states=s, actions=a.astype(np.int64), rewards=r.astype(np.float64),
                 next_states=s2, terminals=done.astype(bool), n_actions=n_actions,
                 q_bound=r_max / (1 - gamma), gamma=float(gamma), env=env,
                 behaviour=behaviour, epsilon=float(epsilon), DESCR=descr)


def _as_policy(policy):
    if hasattr(policy, "predict_q"):
        return lambda s: np.asarray(policy.predict_q(s)).argmax(axis=1)
    if callable(policy):
        return lambda s: np.asarray(policy(s)).astype(np.int64).reshape(-1)
    raise TypeError("policy must be a fitted estimator with predict_q or a callable mapping "
                    f"states (n, d) to actions (n,); got {type(policy).__name__}")


@validate_params(
    {
        "policy": "no_validation",
        "env": [StrOptions(set(OFFLINE_RL_ENVS))],
        "n_episodes": [Interval(Integral, 1, None, closed="left")],
        "horizon": [Interval(Integral, 1, None, closed="left")],
        "gamma": [Interval(Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def evaluate_offline_rl_policy(policy, env="pointmass", *, n_episodes=100, horizon=50,
                               gamma=0.99, random_state=None):
    """Mean discounted return of a policy on the task of :func:`make_offline_rl_dataset`.

    Runs ``n_episodes`` episodes in parallel for ``horizon`` steps: pointmass episodes start
    uniformly in ``[-1, 1]^2``, cart-pole episodes from ``U[-0.05, 0.05]^4`` and end at a
    fall. The return is ``sum_t gamma^t r_t``.

    Parameters
    ----------
    policy : estimator with ``predict_q``, callable or "behaviour" / "uniform"
        A fitted critic (its greedy policy ``argmax_a Q(s, a)`` is run), a callable mapping
        states (n, d) to actions (n,), or the name of a behaviour policy (``"behaviour"`` is
        the narrow policy with epsilon 0.1).
    env : {"pointmass", "CartPole-v1"}, default="pointmass"
        The task.
    n_episodes : int, default=100
        Number of episodes (starts).
    horizon : int, default=50
        Steps per episode.
    gamma : float, default=0.99
        Discount in [0, 1].
    random_state : int, RandomState instance or None, default=None
        Seeds the starts and the transition noise.

    Returns
    -------
    mean_return : float
        Mean discounted return over the episodes.

    Raises
    ------
    TypeError
        If ``policy`` is neither a critic, a callable nor a known policy name.

    Examples
    --------
    >>> from sklearn_icml26.metrics import evaluate_offline_rl_policy
    >>> ret = evaluate_offline_rl_policy("uniform", n_episodes=10, random_state=0)
    >>> 0.0 <= ret <= 50.0
    True
    """
    rng = check_random_state(random_state)
    if isinstance(policy, str):
        if policy not in ("behaviour", "uniform"):
            raise TypeError(f"policy name must be 'behaviour' or 'uniform'; got {policy!r}")
        name = "narrow" if policy == "behaviour" else "uniform"

        def act(s):
            return _behaviour_actions(env, s, name, 0.1, rng)
    else:
        act = _as_policy(policy)
    if env == "pointmass":
        s = rng.uniform(-1.0, 1.0, size=(n_episodes, 2))
    else:
        s = rng.uniform(-0.05, 0.05, size=(n_episodes, 4))
    alive = np.ones(n_episodes, dtype=bool)
    total = np.zeros(n_episodes)
    for t in range(horizon):
        a = act(s)
        if env == "pointmass":
            s, r, done = _pointmass_step(s, a, rng)
        else:
            s, r, done = cartpole_step(s, a)
        total += alive * gamma**t * r
        alive &= ~done
        if not alive.any():
            break
    return float(total.mean())
