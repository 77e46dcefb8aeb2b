"""GatedMemoryReader's gate policy: initial weights, policy-gradient loss, optimizer step."""

import numpy as np

from ._gated_rollouts import _N_FEATURES, _N_SCALED


def _init_params(rng, hidden, exit_bias):
    bound = np.sqrt(6.0 / (hidden + _N_FEATURES))
    return {"A": rng.uniform(-bound, bound, size=(hidden, _N_FEATURES)),
            "a": np.zeros(hidden), "w_u": np.zeros(hidden), "b_u": np.zeros(()),
            "w_e": np.zeros(hidden), "v": np.zeros(()), "b_e": np.full((), float(exit_bias))}


def _surrogate_loss(T, rows, adv, n_traj, mean, scale, entropy_weight, torch):
    """REINFORCE loss with a group baseline and an entropy bonus, on recorded decisions."""
    (Phi_u, U, tu), (Phi_e, Ue, E, te) = rows
    mean_t, scale_t = torch.as_tensor(mean), torch.as_tensor(scale)
    adv = torch.as_tensor(adv)
    F = torch.nn.functional

    def trunk(Phi):
        Z = torch.as_tensor(Phi).clone()
        Z[:, :_N_SCALED] = (Z[:, :_N_SCALED] - mean_t) / scale_t
        return torch.tanh(Z @ T["A"].T + T["a"])

    def logp_and_entropy(z, act):
        lp1, lp0 = F.logsigmoid(z), F.logsigmoid(-z)
        logp = act * lp1 + (1 - act) * lp0
        ent = -(torch.exp(lp1) * lp1 + torch.exp(lp0) * lp0)
        return logp, ent

    zu = trunk(Phi_u) @ T["w_u"] + T["b_u"]
    lpu, hu = logp_and_entropy(zu, torch.as_tensor(U))
    pg = (adv[torch.as_tensor(tu)] * lpu).sum()
    ent = hu.sum()
    if len(E):
        ze = trunk(Phi_e) @ T["w_e"] + T["v"] * torch.as_tensor(Ue) + T["b_e"]
        lpe, he = logp_and_entropy(ze, torch.as_tensor(E))
        pg = pg + (adv[torch.as_tensor(te)] * lpe).sum()
        ent = ent + he.sum()
    return -(pg + entropy_weight * ent) / n_traj, float(ent.detach()) / max(len(U) + len(E), 1)


_PARAM_NAMES = ("A", "a", "w_u", "b_u", "w_e", "v", "b_e")
_EXIT_PARAMS = ("w_e", "v", "b_e")


def _policy_module(P, torch):
    """The gate policy's weights ``P`` as float64 parameters of one torch module.

    The module has no forward pass: :func:`_surrogate_loss` reads its parameters by name
    (``dict(module.named_parameters())``); it is what the optimizer updates and what the
    divergence guard snapshots and restores.
    """
    module = torch.nn.Module()
    for k in _PARAM_NAMES:
        module.register_parameter(k, torch.nn.Parameter(torch.tensor(P[k],
                                                                     dtype=torch.float64)))
    return module


def _policy_numpy(module):
    """The module's weights as the dict of float64 arrays the reading loop uses."""
    return {k: v.detach().cpu().numpy().copy() for k, v in module.named_parameters()}
