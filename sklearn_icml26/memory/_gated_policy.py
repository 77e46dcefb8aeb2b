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


def _adam_step(params, grads, m, v, step, lr, max_norm, torch, betas=(0.9, 0.999), eps=1e-8):
    """One Adam step after clipping the global gradient norm to ``max_norm``."""
    norm = float(torch.sqrt(sum((g * g).sum() for g in grads)))
    c = min(1.0, max_norm / (norm + 1e-6))
    with torch.no_grad():
        for p, g, mi, vi in zip(params, grads, m, v, strict=True):
            g = g * c
            mi.mul_(betas[0]).add_(g, alpha=1 - betas[0])
            vi.mul_(betas[1]).addcmul_(g, g, value=1 - betas[1])
            m_hat = mi / (1 - betas[0] ** step)
            v_hat = vi / (1 - betas[1] ** step)
            p.sub_(lr * m_hat / (torch.sqrt(v_hat) + eps))
    return norm
