"""GatedMemoryReader: chunked reading with a learned update gate and a learned exit gate.

The gates and their two rewards follow GRU-Mem (Sheng et al., ICML 2026, arXiv:2602.10560);
the reader itself is a small policy network over a bounded vector memory, not a language model.
"""

import time
import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils.validation import check_is_fitted, check_random_state

from .._compat import HasMethods, Interval, StrOptions, _fit_context
from ..datasets._reading_episodes import make_locomo_episodes, make_planted_episodes
from ..feature_extraction._embedder import SentenceEmbedder
from ..utils._docstrings import Substitution, _torch_docstrings
from ..utils._parallel import Parallel, delayed
from ._gated_episodes import _check_episodes, _check_evidence, _prepare
from ._gated_policy import (
    _EXIT_PARAMS,
    _init_params,
    _policy_module,
    _policy_numpy,
    _surrogate_loss,
)
from ._gated_rollouts import (
    _N_SCALED,
    _cand_bits,
    _features,
    _merge,
    _reward_exit,  # noqa: F401 (imported from here by tests and bench_grumem.py)
    _reward_recall,
    _reward_update,  # noqa: F401
    _rollouts,
    _State,
    _trajectory_rewards,
)
from ._streaming import StreamingMemory

__all__ = ["GatedMemoryReader", "make_locomo_episodes", "make_planted_episodes"]

_POLICIES = ("learned", "vanilla", "oracle_exit", "oracle_gates", "retrieval")
_OUTPUT_NAMES = ("chunks_read", "n_chunks", "n_updates", "fraction_read")


# ---------------------------------------------------------------------------- the estimator
@Substitution(**_torch_docstrings)
class GatedMemoryReader(TransformerMixin, BaseEstimator):
    """Question-conditioned chunked reading with learned update and exit gates.

    The reader scans the chunks of a long context in order (one chunk per step), keeps a
    bounded memory of ``n_slots`` turns, and at each chunk decides with an *update gate*
    whether to write the chunk's best ``write_size`` turns into memory and, after that, with an
    *exit gate* whether to stop reading. The answer is the best-scoring turn of the terminal
    memory; the speed measure is the number of chunks read per question. The gates, their two
    rewards r_update (balanced accuracy of writing on evidence chunks only) and r_exit (1 for
    stopping right after the last evidence chunk, 0 when too early) added to an outcome reward
    (evidence recall of the terminal memory), and the group-relative policy gradient follow
    GRU-Mem [1]_.

    **What is adapted and what is not.** GRU-Mem trains a language model that rewrites a
    free-text memory and emits its gates as text. Here the memory is a list of retrieved turns
    (scored by cosine similarity of sentence embeddings with the question), the gate policy
    is a small torch network on 12 features of the chunk and the memory (one tanh layer of
    ``hidden_size`` units shared by two logistic heads), and training is REINFORCE with the
    group-normalised advantage of GRPO [2]_ (no reference model, no KL term, no format
    reward). The outcome reward is evidence recall (or an extractive oracle-span F1), not
    the score of a generated answer; the paper's numbers are not reproduced.

    Training steps a torch optimizer (``optimizer``, Adam by default) on the clipped gradient
    of the surrogate and keeps the weights of the best greedy validation reward. A run that
    blows up follows the package's one divergence policy
    (:class:`~sklearn_icml26.base.DivergenceGuard`): a non-finite loss stops training, the
    last weights that gave a finite loss are restored and a
    :class:`~sklearn.exceptions.ConvergenceWarning` says so; a training loss (the regret, see
    ``loss_curve_``) that ends a hundredfold above its first value warns. See the
    :ref:`User Guide <user_guide_grumem>`.

    Parameters
    ----------
    embedder : "auto" or transformer, default="auto"
        ``"auto"`` uses :class:`SentenceEmbedder` (MiniLM when installed, else hashing); else a
        transformer on lists of str returning (n, d) arrays. An unfitted one is cloned and
        fitted on the training turns; a fitted one is used as is.
    n_slots : int, default=10
        Memory capacity K (turns).
    write_size : int, default=2
        Turns of a chunk (its best-scoring ones) written by one update.
    memory_policy : {"score", "fifo"}, default="score"
        How an update merges: keep the ``n_slots`` best-scoring items of memory and new turns
        (older first on ties), or the ``n_slots`` most recent ones.
    gates : {"both", "update"}, default="both"
        Learn both gates, or the update gate only (the reader then never exits early).
    reward : {"recall", "oracle_f1"}, default="recall"
        Outcome reward: the fraction of gold evidence turns held by the terminal memory, or the
        oracle-span F1 of the memory texts against the gold answer (needs ``y``).
    update_weight : float, default=0.5
        Weight of r_update in the total reward.
    exit_weight : float, default=0.5
        Weight of r_exit (ignored with ``gates="update"``).
    hidden_size : int, default=32
        Units of the shared tanh layer.
    max_iter : int, default=300
        Policy-gradient steps, each on ``batch_size`` sampled episodes; ``0`` keeps the
        initial policy (its gates as initialised), e.g. to evaluate it.
    batch_size : int, default=16
        Training episodes per step (drawn without replacement).
    group_size : int, default=8
        Sampled trajectories per episode (the group of the baseline).
    lr : float, default=0.01
        {lr}
    optimizer : {"adam", "adamw", "sgd", "rmsprop", "adamo"} or torch optimizer class, \
default="adam"
        {optimizer}
    optimizer_params : dict or None, default=None
        {optimizer_params}
    entropy_weight : float, default=0.01
        Weight of the entropy bonus of both gates.
    max_grad_norm : float, default=1.0
        Global gradient-norm clip (before each optimizer step).
    validation_fraction : float, default=0.1
        Share of training episodes held out to choose the checkpoint (by conversation when the
        episodes carry a ``"conversation"`` key with >= 2 values, else by episode); 0 keeps
        the last step.
    eval_every : int, default=25
        Steps between greedy evaluations on the validation split; the weights of the best
        evaluation are kept (early stopping on the validation reward).
    update_threshold : float, default=0.5
        Greedy update gate: write when its probability exceeds this.
    exit_threshold : float, default=0.5
        Greedy exit gate: stop when its probability exceeds this.
    exit_bias_init : float, default=-3.0
        Initial bias of the exit logit (-3 starts near "read everything").
    random_state : int, RandomState instance or None, default=None
        {random_state}
        Those draws include the validation split and the sampled gates.
    n_jobs : int, default=None
        Parallel jobs over episodes at inference.
    verbose : int, default=0
        {verbose_steps}
        A line shows the training loss and reward, and the greedy validation reward on an
        evaluation step.

    Attributes
    ----------
    embedder_ : transformer
        The fitted embedder.
    params_ : dict of ndarray
        Policy weights: ``A`` (hidden_size, 12), ``a`` (hidden_size,), ``w_u``
        (hidden_size,), ``b_u`` (), ``w_e`` (hidden_size,), ``v`` (), ``b_e`` ().
    mean_ : ndarray of shape (6,)
        Means of the six score features (an always-update pass over training episodes).
    scale_ : ndarray of shape (6,)
        Their standard deviations (floored at 1e-6).
    loss_curve_ : list of float
        Training loss of each step, ``n_iter_`` values: the regret of the step's sampled
        trajectories, the largest total reward (``1 + update_weight + exit_weight``, without
        ``exit_weight`` for ``gates="update"``) minus their mean total reward. (The gradient
        comes from the policy-gradient surrogate, ``surrogate`` in ``training_log_``, whose
        group-normalised advantages centre it near 0 whatever the policy learned.)
    validation_scores_ : list of float
        Mean total reward of the greedy gates on the validation split (the training episodes
        when there is none) at each evaluation: step 0 (the initial policy), every
        ``eval_every`` steps and the last step.
    training_log_ : pandas.DataFrame
        One row per step (step 0: the initial policy): ``loss`` (as in ``loss_curve_``),
        ``surrogate`` (the loss minimised: minus the advantage-weighted log-probabilities of
        the sampled gate actions, minus the entropy bonus), the mean total ``reward``
        and its parts ``r_out``, ``r_upd``, ``r_exit`` over the sampled trajectories,
        ``chunks_read``, the mean update / exit probabilities ``p_update``, ``p_exit``, the
        mean ``entropy``, ``tied_groups`` (groups without signal), and at evaluation steps the
        greedy ``valid_reward`` (as in ``validation_scores_``), ``valid_recall`` and
        ``valid_chunks`` (NaN elsewhere).
    best_step_ : int
        Step of the kept parameters (the best greedy validation reward).
    n_iter_ : int
        Policy-gradient steps run (after a divergence, those whose weights were kept).
    n_train_episodes_ : int
        Episodes used for the policy gradient.
    n_valid_episodes_ : int
        Episodes of the validation split.
    fit_time_ : float
        Wall time of :meth:`fit`.

    See Also
    --------
    StreamingMemory : The retrieval memory of the ``policy="retrieval"`` baseline.
    make_locomo_episodes : LoCoMo questions as reading episodes.
    make_planted_episodes : Synthetic episodes with one planted fact chunk.

    Notes
    -----
    Episodes are dicts ``{"question": str, "chunks": list of lists of str, "turn_ids": list of
    lists of hashable}`` (``turn_ids`` optional: ``(chunk, turn)`` pairs by default); an episode
    may carry ``"evidence"`` (used when ``evidence=None``), ``"category"`` (a LoCoMo category,
    for ``reward="oracle_f1"``) and ``"conversation"`` (for the validation split). Evidence ids
    absent from an episode are ignored; episodes with none left are dropped from ``fit`` with
    a warning. A question longer than the embedder's input limit is truncated by the embedder
    (MiniLM warns); the coverage feature uses the whole question. The reader only ever looks
    at chunks up to its exit step.

    References
    ----------
    .. [1] Sheng, Zhang, Ma, Shi, Huang, Wang, Zhang, Shen, Chua. "When to Memorize and When to
       Stop: Gated Recurrent Memory for Long-Context Reasoning." ICML 2026, arXiv:2602.10560.
    .. [2] Shao et al. "DeepSeekMath: Pushing the Limits of Mathematical Reasoning in Open
       Language Models." 2024, arXiv:2402.03300.
    .. [3] Yu et al. "MemAgent: Reshaping Long-Context LLM with Multi-Conv RL-based Memory
       Agent." 2025, arXiv:2507.02259.

    Examples
    --------
    >>> from sklearn_icml26.feature_extraction import SentenceEmbedder
    >>> from sklearn_icml26.memory import GatedMemoryReader
    >>> from sklearn_icml26.datasets import make_planted_episodes
    >>> data = make_planted_episodes(n_episodes=20, n_chunks=6, random_state=0)
    >>> reader = GatedMemoryReader(SentenceEmbedder(backend="hashing"), max_iter=20,
    ...                            batch_size=8, random_state=0)
    >>> reader = reader.fit(data.X, evidence=data.evidence)
    >>> reader.transform(data.X[:2]).shape
    (2, 4)
    >>> [t["tau"] for t in reader.read(data.X[:2], policy="vanilla")]
    [6, 6]
    """

    _parameter_constraints = {
        "embedder": [StrOptions({"auto"}), HasMethods(["fit", "transform"])],
        "n_slots": [Interval(Integral, 1, None, closed="left")],
        "write_size": [Interval(Integral, 1, None, closed="left")],
        "memory_policy": [StrOptions({"score", "fifo"})],
        "gates": [StrOptions({"both", "update"})],
        "reward": [StrOptions({"recall", "oracle_f1"})],
        "update_weight": [Interval(Real, 0, None, closed="left")],
        "exit_weight": [Interval(Real, 0, None, closed="left")],
        "hidden_size": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "group_size": [Interval(Integral, 1, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "optimizer": [StrOptions({"adam", "adamw", "sgd", "rmsprop", "adamo"}), type],
        "optimizer_params": [dict, None],
        "entropy_weight": [Interval(Real, 0, None, closed="left")],
        "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
        "validation_fraction": [Interval(Real, 0, 1, closed="left")],
        "eval_every": [Interval(Integral, 1, None, closed="left")],
        "update_threshold": [Interval(Real, 0, 1, closed="neither")],
        "exit_threshold": [Interval(Real, 0, 1, closed="neither")],
        "exit_bias_init": [Real],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(self, embedder="auto", *, n_slots=10, write_size=2, memory_policy="score",
                 gates="both", reward="recall", update_weight=0.5, exit_weight=0.5,
                 hidden_size=32, max_iter=300, batch_size=16, group_size=8, lr=0.01,
                 optimizer="adam", optimizer_params=None,
                 entropy_weight=0.01, max_grad_norm=1.0, validation_fraction=0.1,
                 eval_every=25, update_threshold=0.5, exit_threshold=0.5,
                 exit_bias_init=-3.0, random_state=None, n_jobs=None, verbose=0):
        self.embedder = embedder
        self.n_slots = n_slots
        self.write_size = write_size
        self.memory_policy = memory_policy
        self.gates = gates
        self.reward = reward
        self.update_weight = update_weight
        self.exit_weight = exit_weight
        self.hidden_size = hidden_size
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.group_size = group_size
        self.lr = lr
        self.optimizer = optimizer
        self.optimizer_params = optimizer_params
        self.entropy_weight = entropy_weight
        self.max_grad_norm = max_grad_norm
        self.validation_fraction = validation_fraction
        self.eval_every = eval_every
        self.update_threshold = update_threshold
        self.exit_threshold = exit_threshold
        self.exit_bias_init = exit_bias_init
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ helpers
    def _make_embedder(self, episodes):
        emb = SentenceEmbedder() if isinstance(self.embedder, str) else self.embedder
        try:
            check_is_fitted(emb)
            return emb
        except NotFittedError:
            pass
        turns = list(dict.fromkeys(t for ep in episodes for c in ep["chunks"] for t in c))
        return clone(emb).fit(turns)

    def _kw(self):
        return dict(K=self.n_slots, fifo=self.memory_policy == "fifo", gates=self.gates,
                    thresholds=(self.update_threshold, self.exit_threshold))

    def _total(self, state):
        r_out, r_upd, r_exit = _trajectory_rewards(state, self.reward)
        w_e = self.exit_weight if self.gates == "both" else 0.0
        return r_out + self.update_weight * r_upd + w_e * r_exit, r_out, r_upd, r_exit

    def _split(self, episodes, rng):
        n = len(episodes)
        if self.validation_fraction == 0 or n < 2:
            return np.arange(n), np.zeros(0, dtype=int)
        conv = [ep.get("conversation") for ep in episodes]
        groups = list(dict.fromkeys(conv))
        if None not in conv and len(groups) >= 2:
            n_val = min(max(1, round(self.validation_fraction * len(groups))), len(groups) - 1)
            val = set(rng.choice(len(groups), size=n_val, replace=False).tolist())
            is_val = np.array([groups.index(c) in val for c in conv])
        else:
            n_val = min(max(1, round(self.validation_fraction * n)), n - 1)
            is_val = np.zeros(n, dtype=bool)
            is_val[rng.choice(n, size=n_val, replace=False)] = True
        return np.flatnonzero(~is_val), np.flatnonzero(is_val)

    def _evaluate(self, eps, P):
        if not eps:
            return np.nan, np.nan, np.nan, 0.0
        states, _ = _rollouts(eps, P, self.mean_, self.scale_,
                              policy="learned", **self._kw())
        R = [self._total(s) for s in states]
        return (float(np.mean([r[0] for r in R])), float(np.mean([r[1] for r in R])),
                float(np.mean([s.tau for s in states])),
                float(np.mean([s.n_upd for s in states])))

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, *, evidence=None):
        """Train the gate policy by policy gradient on (question, chunks, evidence) episodes.

        Parameters
        ----------
        X : list of dict of length n_episodes
            Episodes (see Notes); a one-column DataFrame or Series of dicts also works.
        y : list of str of length n_episodes, default=None
            Gold answers; needed by ``reward="oracle_f1"``, otherwise ignored.
        evidence : list of set of length n_episodes, default=None
            Gold evidence turn ids per episode (a routed fit parameter); None reads each
            episode's ``"evidence"`` key.

        Returns
        -------
        self : GatedMemoryReader
            The fitted reader.

        Raises
        ------
        ValueError
            If X is empty or malformed, evidence is missing or of the wrong length, no episode
            keeps an evidence id, ``reward="oracle_f1"`` comes without y, the batch exceeds
            the training episodes while fewer than 2 remain, or ``group_size`` < 2.
        TypeError
            If a question or turn is not a str.
        """
        import torch

        from ..base import DivergenceGuard, EpochLogger, make_optimizer, seeded_torch

        t_start = time.perf_counter()
        episodes = _check_episodes(X)
        if self.group_size < 2:
            raise ValueError(f"group_size must be >= 2 (the group baseline needs two "
                             f"trajectories); got {self.group_size}")
        ev = _check_evidence(evidence, episodes, "GatedMemoryReader.fit")
        answers = None
        if self.reward == "oracle_f1":
            if y is None:
                raise ValueError("reward='oracle_f1' needs the gold answers y (one str per "
                                 "episode); got y=None")
            answers = [str(a) for a in y]
            if len(answers) != len(episodes):
                raise ValueError(f"y has {len(answers)} answers but X has {len(episodes)} "
                                 "episodes")
        keep = [i for i, e in enumerate(ev) if e is not None]
        if not keep:
            raise ValueError("no episode has an evidence id among its turn ids; "
                             "GatedMemoryReader.fit needs >= 1 episode with evidence")
        if len(keep) < len(episodes):
            warnings.warn(f"{len(episodes) - len(keep)} of {len(episodes)} episodes have no "
                          "evidence id among their turns and were dropped from fit",
                          UserWarning, stacklevel=2)
        episodes = [episodes[i] for i in keep]
        ev = [ev[i] for i in keep]
        answers = [answers[i] for i in keep] if answers is not None else None
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(2**31 - 1))
        gen = np.random.default_rng(seed)
        self.embedder_ = self._make_embedder(episodes)
        eps = _prepare(episodes, self.embedder_, self.write_size, ev, answers)
        tr, va = self._split(episodes, rng)
        train, valid = [eps[i] for i in tr], [eps[i] for i in va]
        self.n_train_episodes_, self.n_valid_episodes_ = len(train), len(valid)
        B = self.batch_size
        if B > len(train):
            if len(train) < 2:
                raise ValueError(f"batch_size={B} exceeds the {len(train)} training episode(s) "
                                 "left after the validation split; need >= 2")
            warnings.warn(f"batch_size={B} exceeds the {len(train)} training episodes; using "
                          f"{len(train)}", UserWarning, stacklevel=2)
            B = len(train)
        # feature scaling from an always-update pass over the training episodes
        Phi = self._vanilla_features(train)
        self.mean_ = Phi[:, :_N_SCALED].mean(axis=0)
        self.scale_ = np.maximum(Phi[:, :_N_SCALED].std(axis=0), 1e-6)
        P = _init_params(rng, self.hidden_size, self.exit_bias_init)
        # the largest total reward: the training loss is its shortfall (the regret)
        r_max = 1.0 + self.update_weight + (self.exit_weight if self.gates == "both" else 0.0)
        name = type(self).__name__
        hist, evaluated = [], []  # evaluated: (step, greedy validation reward, weights)
        eval_sel = valid if valid else train

        def evaluate(step):
            vr, vrec, vch, vupd = self._evaluate(eval_sel, P)
            evaluated.append((step, vr, {k: v.copy() for k, v in P.items()}))
            return vr, vrec, vch

        vr, vrec, vch = evaluate(0)
        hist.append({"step": 0, "valid_reward": vr, "valid_recall": vrec, "valid_chunks": vch})
        # torch only differentiates here (the draws are gen's); seeded all the same
        with seeded_torch(seed):
            policy = _policy_module(P, torch)
            params = [p for k, p in policy.named_parameters()
                      if not (self.gates == "update" and k in _EXIT_PARAMS)]
            opt = make_optimizer(self, params)
            guard = DivergenceGuard(policy, name, unit="step")
            logger = EpochLogger(self.verbose, max(self.max_iter, 1), name, unit="step")
            for step in range(1, self.max_iter + 1):
                idx = gen.choice(len(train), size=B, replace=False)
                batch = [train[i] for i in idx]
                states, rows = _rollouts(batch, P, self.mean_, self.scale_,
                                         policy="learned", rng=gen, group_size=self.group_size,
                                         record=True, **self._kw())
                R = np.array([self._total(s) for s in states])  # (B*G, 4)
                Rg = R[:, 0].reshape(B, self.group_size)
                sd = Rg.std(axis=1, keepdims=True)
                adv = np.where(sd < 1e-8, 0.0,
                               (Rg - Rg.mean(axis=1, keepdims=True)) / (sd + 1e-6))
                surrogate, ent = _surrogate_loss(dict(policy.named_parameters()), rows,
                                                 adv.ravel(), len(states), self.mean_,
                                                 self.scale_, self.entropy_weight, torch)
                opt.zero_grad(set_to_none=True)
                surrogate.backward()
                for p in params:  # a gate without decisions in the batch: a zero gradient
                    if p.grad is None:
                        p.grad = torch.zeros_like(p)
                torch.nn.utils.clip_grad_norm_(params, self.max_grad_norm)
                opt.step()
                surrogate = float(surrogate.detach())
                regret = r_max - float(R[:, 0].mean())
                # the guard sees the regret, or the surrogate when that is not finite
                if guard.observe(regret if np.isfinite(surrogate) else surrogate):
                    break
                if guard.checkpoint(step, loss=regret):
                    break
                P = _policy_numpy(policy)
                pu = np.concatenate([s.pu for s in states])
                pe = np.concatenate([s.pe for s in states])
                row = {"step": step, "loss": regret, "surrogate": surrogate,
                       "reward": R[:, 0].mean(), "r_out": R[:, 1].mean(),
                       "r_upd": R[:, 2].mean(), "r_exit": R[:, 3].mean(),
                       "chunks_read": float(np.mean([s.tau for s in states])),
                       "p_update": float(np.nanmean(pu)),
                       "p_exit": float(np.nanmean(pe)) if np.isfinite(pe).any() else np.nan,
                       "entropy": ent, "tied_groups": int((sd < 1e-8).sum())}
                if step % self.eval_every == 0 or step == self.max_iter:
                    row["valid_reward"], row["valid_recall"], row["valid_chunks"] = (
                        evaluate(step))
                hist.append(row)
                logger.log(step, loss=regret, reward=row["reward"],
                           valid_reward=row.get("valid_reward"))
            self.n_iter_ = guard.finish()
        # early stopping: the weights of the best greedy validation reward (the first on
        # ties) among the kept steps (after a divergence: up to the restored state)
        hist = [r for r in hist if r["step"] <= self.n_iter_]
        kept = [e for e in evaluated if e[0] <= self.n_iter_]
        self.best_step_, _, self.params_ = max(kept, key=lambda e: (e[1], -e[0]))
        cols = ["step", "loss", "surrogate", "reward", "r_out", "r_upd", "r_exit",
                "chunks_read", "p_update", "p_exit", "entropy", "tied_groups", "valid_reward",
                "valid_recall", "valid_chunks"]
        self.training_log_ = pd.DataFrame(hist).reindex(columns=cols)
        self.loss_curve_ = [float(r["loss"]) for r in hist[1:]]
        self.validation_scores_ = [float(r["valid_reward"]) for r in hist
                                   if "valid_reward" in r]
        *_, upd = self._evaluate(eval_sel, self.params_)
        if upd == 0:
            warnings.warn("update gate closed on all validation chunks: the kept policy never "
                          "writes, so its memory stays empty (try more max_iter or another "
                          "random_state)", ConvergenceWarning, stacklevel=2)
        self.fit_time_ = time.perf_counter() - t_start
        return self

    def _vanilla_features(self, eps):
        rows = []
        K, fifo = self.n_slots, self.memory_policy == "fifo"
        for ep in eps:
            s = _State(ep)
            for t in range(1, ep.T + 1):
                cand = _merge(s, t, K, fifo)
                rows.append(_features(s, t, _cand_bits(s, cand), K))
                s.set_memory(cand)
                s.n_upd += 1
                s.last = t
        return np.asarray(rows)

    # ------------------------------------------------------------------ reading
    def _read_states(self, X, policy, evidence, trace=False):
        if policy not in _POLICIES:
            raise ValueError(f"policy must be one of {_POLICIES}; got {policy!r}")
        if policy == "learned":
            check_is_fitted(self, "params_")
        episodes = _check_episodes(X)
        ev = None
        if policy.startswith("oracle"):
            if evidence is None and not all("evidence" in ep for ep in episodes):
                raise ValueError(f"policy={policy!r} needs evidence= (one set of turn ids per "
                                 "episode)")
            ev = _check_evidence(evidence, episodes, f"read(policy={policy!r})")
            bad = [i for i, e in enumerate(ev) if e is None]
            if bad:
                raise ValueError(f"policy={policy!r} needs evidence among the turn ids of every "
                                 f"episode; episode {bad[0]} has none")
        elif evidence is not None:
            ev = _check_evidence(evidence, episodes, "read")
        emb = getattr(self, "embedder_", None)
        if emb is None:
            emb = self._make_embedder(episodes)
        if policy == "retrieval":
            return self._retrieval(episodes, emb), episodes
        eps = _prepare(episodes, emb, self.write_size, ev)
        P = getattr(self, "params_", None)
        mean = getattr(self, "mean_", None)
        scale = getattr(self, "scale_", None)
        kw = self._kw()
        n_jobs = self.n_jobs or 1
        if n_jobs == 1 or len(eps) < 2:
            states, _ = _rollouts(eps, P, mean, scale, policy=policy, trace=trace, **kw)
        else:
            parts = np.array_split(np.arange(len(eps)), min(n_jobs if n_jobs > 0 else 4,
                                                          len(eps)))
            res = Parallel(n_jobs=n_jobs)(
                delayed(_rollouts)([eps[i] for i in p], P, mean, scale, policy=policy,
                                   trace=trace, **kw) for p in parts)
            states = [s for r, _ in res for s in r]
        return states, episodes

    def _retrieval(self, episodes, emb):
        # one StreamingMemory per distinct context, queried by each of its questions
        groups = {}
        for i, ep in enumerate(episodes):
            groups.setdefault(tuple(t for c in ep["chunks"] for t in c), []).append(i)
        out = [None] * len(episodes)
        for turns, members in groups.items():
            mem = StreamingMemory(emb, structure="flat", n_neighbors=self.n_slots)
            mem.fit(list(turns), covers=list(range(len(turns))))
            k = min(self.n_slots, len(turns))
            dist, ind = mem.kneighbors([episodes[i]["question"] for i in members],
                                       n_neighbors=k)
            covers = mem.item_covers_
            for row, i in enumerate(members):
                ep = episodes[i]
                ids = [d for r in ep["turn_ids"] for d in r]
                order = [int(next(iter(covers[j]))) for j in ind[row]]
                out[i] = {"ids": [ids[j] for j in order], "texts": [turns[j] for j in order],
                          "scores": (1.0 - dist[row]).tolist(), "tau": len(ep["chunks"]),
                          "T": len(ep["chunks"])}
        return out

    @staticmethod
    def _memory_of(state):
        ep = state.ep
        mem = sorted(state.mem, key=ep.item_rank.__getitem__)
        return {"ids": [ep.item_id[k] for k in mem], "texts": [ep.item_text[k] for k in mem],
                "scores": [ep.item_score[k] for k in mem]}

    def read(self, X, *, policy="learned", evidence=None):
        """Read each episode chunk by chunk and return the gate decisions step by step.

        Parameters
        ----------
        X : list of dict of length n_episodes
            Episodes.
        policy : {"learned", "vanilla", "oracle_exit", "oracle_gates", "retrieval"}, \
default="learned"
            ``"learned"``: the fitted greedy gates; ``"vanilla"``: write every chunk, never
            exit (MemAgent's loop); ``"oracle_exit"``: write every chunk, stop at the last
            evidence chunk; ``"oracle_gates"``: write exactly on evidence chunks and stop at
            the last one; ``"retrieval"``: :class:`StreamingMemory` (flat) top ``n_slots``
            over all turns of the context (no loop; reads everything). Only ``"learned"``
            needs a fitted reader (others use ``embedder`` as given when unfitted).
        evidence : list of set of length n_episodes, default=None
            Gold evidence turn ids; needed by the oracle policies.

        Returns
        -------
        traces : list of dict of length n_episodes
            ``u``, ``e`` (list of bool per read chunk), ``p_update``, ``p_exit`` (gate
            probabilities, NaN where not learned), ``memory_ids`` (memory after each step),
            ``tau`` (chunks read), ``T`` (chunks), ``memory`` (terminal memory, as
            :meth:`predict_memory`). The retrieval policy gives only ``tau``, ``T`` and
            ``memory``.

        Raises
        ------
        NotFittedError
            If ``policy="learned"`` before :meth:`fit`.
        ValueError
            If an oracle policy comes without evidence, or the policy is unknown.
        """
        states, _ = self._read_states(X, policy, evidence, trace=True)
        if policy == "retrieval":
            return [{"tau": r["tau"], "T": r["T"],
                     "memory": {k: r[k] for k in ("ids", "texts", "scores")}} for r in states]
        return [{"u": s.u, "e": s.e, "p_update": s.pu, "p_exit": s.pe, "memory_ids": s.trace,
                 "tau": s.tau, "T": s.ep.T, "memory": self._memory_of(s)} for s in states]

    def predict_memory(self, X, *, policy="learned", evidence=None):
        """Terminal memory of each episode, best score first.

        Parameters
        ----------
        X : list of dict of length n_episodes
            Episodes.
        policy : str, default="learned"
            As in :meth:`read`.
        evidence : list of set, default=None
            Needed by the oracle policies.

        Returns
        -------
        memories : list of dict of length n_episodes
            ``ids``, ``texts``, ``scores`` (cosine with the question) of the memory items.
        """
        return [t["memory"] for t in self.read(X, policy=policy, evidence=evidence)]

    def predict(self, X):
        """The best memory turn of each episode after greedy gated reading.

        Parameters
        ----------
        X : list of dict of length n_episodes
            Episodes.

        Returns
        -------
        texts : ndarray of object of shape (n_episodes,)
            The terminal memory's highest-scoring turn ("" for an empty memory).
        """
        check_is_fitted(self, "params_")
        mems = self.predict_memory(X)
        return np.array([m["texts"][0] if m["texts"] else "" for m in mems], dtype=object)

    def transform(self, X):
        """Reading cost of each episode under the greedy gates.

        Parameters
        ----------
        X : list of dict of length n_episodes
            Episodes.

        Returns
        -------
        costs : ndarray of float64 of shape (n_episodes, 4)
            Chunks read, chunks in the episode, updates made, chunks read / chunks.
        """
        check_is_fitted(self, "params_")
        states, _ = self._read_states(X, "learned", None)
        return np.array([[s.tau, s.ep.T, s.n_upd, s.tau / s.ep.T] for s in states],
                        dtype=np.float64)

    def get_feature_names_out(self, input_features=None):
        """Names of the :meth:`transform` columns.

        Parameters
        ----------
        input_features : None
            Ignored.

        Returns
        -------
        names : ndarray of str of shape (4,)
            ``chunks_read``, ``n_chunks``, ``n_updates``, ``fraction_read``.
        """
        check_is_fitted(self, "params_")
        return np.asarray(_OUTPUT_NAMES, dtype=object)

    def score(self, X, y=None, *, evidence=None):
        """Mean evidence recall of the terminal memories under the greedy gates.

        Parameters
        ----------
        X : list of dict of length n_episodes
            Episodes.
        y : None
            Ignored.
        evidence : list of set of length n_episodes, default=None
            Gold evidence turn ids (None reads each episode's ``"evidence"`` key).

        Returns
        -------
        recall : float
            Mean, over the episodes with evidence among their turns, of the number of
            evidence turns in the final memory divided by the number of evidence turns.
        """
        check_is_fitted(self, "params_")
        episodes = _check_episodes(X)
        ev = _check_evidence(evidence, episodes, "GatedMemoryReader.score")
        mems = self.predict_memory(episodes)
        vals = [_reward_recall(m["ids"], e) for m, e in zip(mems, ev, strict=True) if e is not None]
        if not vals:
            raise ValueError("score needs >= 1 episode with an evidence id among its turns")
        return float(np.mean(vals))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.target_tags.required = False
        tags.requires_fit = True
        tags.transformer_tags.preserves_dtype = []
        return tags

    @classmethod
    def _get_test_params(cls):
        return [{"embedder": SentenceEmbedder(backend="hashing"), "max_iter": 5, "batch_size": 4,
                 "group_size": 4, "random_state": 0}]
