"""GatedMemoryReader's reading loop: memory transitions, gate features, rollouts, rewards."""

import numpy as np

from ..metrics._qa import oracle_span_f1

_N_FEATURES = 12
_N_SCALED = 6  # features 1-6 (chunk and memory scores) are standardised, 7-12 used raw


# ---------------------------------------------------------------------------- rewards
def _reward_update(u, tau, J):
    """Balanced accuracy of the update gate over the read chunks (unread evidence = misses)."""
    hit = sum(1 for t in range(1, tau + 1) if t in J and u[t - 1])
    n_free = sum(1 for t in range(1, tau + 1) if t not in J)
    keep = sum(1 for t in range(1, tau + 1) if t not in J and not u[t - 1])
    return 0.5 * (hit / len(J) + (keep / n_free if n_free else 1.0))


def _reward_exit(tau, j_star, T):
    """1 for stopping right after the last evidence chunk, falling to 0 at the end; 0 if early."""
    if tau < j_star:
        return 0.0
    return 1.0 - (tau - j_star) / max(T - j_star, 1)


def _reward_recall(memory_ids, evidence):
    return len(set(memory_ids) & set(evidence)) / len(evidence)


# ---------------------------------------------------------------------------- the reading loop
class _State:
    __slots__ = ("ep", "mem", "n_upd", "last", "u", "e", "tau", "cov_bits", "mmin", "mmax",
                 "done", "pu", "pe", "trace")

    def __init__(self, ep, trace=False):
        self.ep = ep
        self.mem = []
        self.n_upd = 0
        self.last = 0
        self.u, self.e, self.pu, self.pe = [], [], [], []
        self.tau = 0
        self.cov_bits = 0
        self.mmin = self.mmax = 0.0
        self.done = False
        self.trace = [] if trace else None

    def set_memory(self, mem):
        ep = self.ep
        self.mem = mem
        bits = 0
        for k in mem:
            bits |= ep.item_mask[k]
        self.cov_bits = bits
        sc = [ep.item_score[k] for k in mem]
        self.mmin = min(sc) if sc else 0.0
        self.mmax = max(sc) if sc else 0.0


def _merge(state, t, K, fifo):
    ep = state.ep
    new = state.mem + ep.cand[t - 1]
    if fifo:
        return new[-K:]
    return sorted(new, key=ep.item_rank.__getitem__)[:K]


def _cand_bits(state, cand):
    masks = state.ep.item_mask
    bits = 0
    for k in cand:
        bits |= masks[k]
    return bits


def _features(state, t, cand_bits, K):
    """The 12 gate features at chunk t given the memory of ``state`` and the candidate's bits."""
    ep = state.ep
    T = ep.T
    nq = ep.nq
    cov = state.cov_bits.bit_count() / nq if nq else 0.0
    cov_hat = cand_bits.bit_count() / nq if nq else 0.0
    s1 = ep.s1[t - 1]
    n = len(state.mem)
    return [s1, ep.s2[t - 1], ep.smean[t - 1], state.mmin, state.mmax,
            s1 - state.mmin if n == K else s1, n / K, t / T, state.n_upd / T,
            (t - state.last) / T if state.last else t / T, cov, cov_hat - cov]


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _heads(P, Phi, mean, scale):
    Z = Phi.copy()
    Z[:, :_N_SCALED] = (Z[:, :_N_SCALED] - mean) / scale
    return np.tanh(Z @ P["A"].T + P["a"])


def _rollouts(eps, P, mean, scale, *, K, fifo, policy, gates, rng=None, group_size=1,
              thresholds=(0.5, 0.5), record=False, trace=False):
    """Run the reading loop on every episode (``group_size`` trajectories each).

    ``rng`` None means greedy gates. Returns the final states and, when ``record``, the rows of
    the update and exit decisions for the loss.
    """
    states = [_State(ep, trace) for ep in eps for _ in range(group_size)]
    rows_u, rows_e = ([], [], []), ([], [], [], [])
    t = 0
    active = list(range(len(states)))
    while active:
        t += 1
        cands = [_merge(states[i], t, K, fifo) for i in active]
        n = len(active)
        if policy == "learned":
            bits = [_cand_bits(states[i], c) for i, c in zip(active, cands, strict=True)]
            cbits = dict(zip(active, bits, strict=True))
            Phi = np.array([_features(states[i], t, b, K)
                            for i, b in zip(active, bits, strict=True)])
            H = _heads(P, Phi, mean, scale)
            pu = _sigmoid(H @ P["w_u"] + P["b_u"])
            u = rng.random(n) < pu if rng is not None else pu > thresholds[0]
            if record:
                rows_u[0].append(Phi)
                rows_u[1].append(u.astype(np.float64))
                rows_u[2].append(np.asarray(active))
        else:
            pu = np.full(n, np.nan)
            if policy == "oracle_gates":
                u = np.array([t in states[i].ep.J for i in active])
            else:
                u = np.ones(n, dtype=bool)
        for k, i in enumerate(active):
            s = states[i]
            s.u.append(bool(u[k]))
            s.pu.append(float(pu[k]))
            if u[k]:
                s.set_memory(cands[k])
                s.n_upd += 1
                s.last = t
        # exit decision (none at the last chunk: the loop ends anyway)
        open_ = [i for i in active if t < states[i].ep.T]
        e = np.zeros(len(open_), dtype=bool)
        pe = np.full(len(open_), np.nan)
        if open_ and policy == "learned" and gates == "both":
            Phi = np.array([_features(states[i], t, cbits[i], K) for i in open_])
            uu = np.array([float(states[i].u[-1]) for i in open_])
            H = _heads(P, Phi, mean, scale)
            pe = _sigmoid(H @ P["w_e"] + P["v"] * uu + P["b_e"])
            e = rng.random(len(open_)) < pe if rng is not None else pe > thresholds[1]
            if record:
                rows_e[0].append(Phi)
                rows_e[1].append(uu)
                rows_e[2].append(e.astype(np.float64))
                rows_e[3].append(np.asarray(open_))
        elif open_ and policy in ("oracle_exit", "oracle_gates"):
            e = np.array([t >= states[i].ep.j_star for i in open_])
        exit_of = dict(zip(open_, zip(e.tolist(), pe.tolist(), strict=True), strict=True))
        still = []
        for i in active:
            s = states[i]
            if i in exit_of:
                ex, p = exit_of[i]
                s.e.append(bool(ex))
                s.pe.append(float(p))
            else:
                ex = True
                s.e.append(True)
                s.pe.append(float("nan"))
            if s.trace is not None:
                s.trace.append([s.ep.item_id[k] for k in s.mem])
            if ex:
                s.done = True
                s.tau = t
            else:
                still.append(i)
        active = still
    if not record:
        return states, None
    cat = [np.concatenate(r) if r else np.zeros((0, _N_FEATURES)) for r in rows_u]
    cate = [np.concatenate(r) if r else np.zeros((0, _N_FEATURES)) for r in rows_e]
    return states, (cat, cate)


def _trajectory_rewards(state, reward):
    ep = state.ep
    ids = [ep.item_id[k] for k in state.mem]
    if reward == "recall":
        r_out = _reward_recall(ids, ep.ev)
    else:
        r_out = oracle_span_f1([ep.item_text[k] for k in state.mem], ep.answer, ep.category)
    return r_out, _reward_update(state.u, state.tau, ep.J), _reward_exit(state.tau, ep.j_star,
                                                                          ep.T)
