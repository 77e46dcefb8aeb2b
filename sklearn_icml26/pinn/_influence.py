"""PINNInfluence: influence functions of a trained PINN, per training point and loss term.

Naujoks, Krasowski, Weckbecker, Yolcu, Wiegand, Lapuschkin, Samek, Klausen, "PINNfluence:
Interpreting PINNs through Influence Functions", ICML 2026, arXiv:2409.08958. The influence of
training point ``z_i`` on a quantity ``f`` at a test point ``x`` is
``Inf_f(x, z_i) = grad f(x)^T H^-1 grad L(z_i)`` with ``L(z_i) = sum_k rho_k(z_i)^2`` and ``H``
the Hessian of ``sum_i L(z_i)`` (captum's sign convention: ``Inf ~ f(theta_-i) - f(theta)``,
the effect of removing the point). ``H^-1`` is an eigen-inverse of ``H + damping I`` restricted
to its eigenvalues above ``eig_tol``: exact (``torch`` Hessian) or from an Arnoldi iteration
(Schioppa, Zablotskaia, Vilar, Sokolov, "Scaling Up Influence Functions", AAAI 2022,
arXiv:2112.03052).
"""

import copy
from numbers import Integral, Real

import numpy as np
import torch
from scipy.stats import spearmanr
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted
from torch.func import functional_call, jacrev, vmap

from .._compat import HasMethods, Interval, StrOptions, _fit_context
from ..utils._scaling import _standardize
from ._pinn import PINNRegressor, _writeable
from ._residuals import batched_residuals, flatten, per_point_jacobians, split_state

__all__ = ["PINNInfluence"]

_AUTO_EXACT_MAX_PARAMS = 1000  # exact Hessian: ~1 s at p = 337, 174 s at p = 2241 (Arnoldi ~20 s)


# ---------------------------------------------------------------------------------------------
# linear algebra of the inverse Hessian
# ---------------------------------------------------------------------------------------------
def _arnoldi(hvp, p, n_steps, rng, dtype):
    """Arnoldi iteration with full re-orthogonalisation: ``Q (p, m)`` and ``T = Q^T H Q``."""
    Q = torch.zeros(p, n_steps + 1, dtype=dtype)
    Hm = torch.zeros(n_steps + 1, n_steps, dtype=dtype)
    q = torch.as_tensor(rng.standard_normal(p), dtype=dtype)
    Q[:, 0] = q / torch.linalg.norm(q)
    m = n_steps
    scale = None
    for k in range(n_steps):
        v = hvp(Q[:, k])
        for _ in range(2):  # classical Gram-Schmidt, twice
            h = Q[:, : k + 1].T @ v
            v = v - Q[:, : k + 1] @ h
            Hm[: k + 1, k] += h
        beta = torch.linalg.norm(v)
        Hm[k + 1, k] = beta
        scale = max(scale or 0.0, float(torch.abs(Hm[: k + 2, k]).max()))
        if beta <= 1e-12 * scale:  # invariant subspace found
            m = k + 1
            break
        Q[:, k + 1] = v / beta
    T = Hm[:m, :m]
    return Q[:, :m], 0.5 * (T + T.T)


def _eigen_projection(evals, evecs, basis, damping, tol, top_k):
    """``R = basis V_k diag((lambda_k + damping)^-1/2)`` over the kept eigenvalues."""
    shifted = evals + damping
    order = torch.argsort(shifted, descending=True)
    if top_k is not None:
        order = order[:top_k]
    keep = order[shifted[order] > tol]
    lam = shifted[keep]
    V = evecs[:, keep]
    if basis is not None:
        V = basis @ V
    return V / torch.sqrt(lam)[None, :], lam


def _spearman(a, b):
    return float(spearmanr(np.ravel(a), np.ravel(b)).statistic)


# ---------------------------------------------------------------------------------------------
# estimator
# ---------------------------------------------------------------------------------------------
class PINNInfluence(BaseEstimator):
    """Influence of each training point, through each loss term, on a fitted PINN.

    For training point ``z_i`` with per-term residuals ``rho_k(z_i)`` and a quantity ``f`` at a
    test point ``x`` (an output of the network or a loss term evaluated there) [1]_:

    - ``Inf_f(x, z_i) = grad f(x)^T H^-1 grad L(z_i)``, ``L(z_i) = sum_k rho_k(z_i)^2``;
    - ``H`` is the Hessian of ``sum_i L(z_i)`` (``hessian_objective="sum"``, as in the
      authors' code) or of the training objective (``"training"``);
    - per-term influence ``Inf_k`` uses ``grad rho_k(z_i)^2``, so ``sum_k Inf_k = Inf``;
    - there is no minus sign: ``Inf ~ f(theta_-i) - f(theta)``, the effect of removing ``z_i``.

    ``H^-1`` is ``sum_j v_j v_j^T / (lambda_j + damping)`` over the eigenpairs of ``H`` whose
    damped eigenvalue exceeds ``eig_tol``: all of them (``"exact"``), the top
    ``projection_dim`` (``"exact_topk"``), or the top ``projection_dim`` of the restriction of
    ``H`` to an ``arnoldi_dim``-dimensional Krylov space (``"arnoldi"``) [2]_. Each gradient
    is projected once, ``phi(g) = R^T g`` with ``R = V diag((lambda + damping)^-1/2)``, and
    ``Inf = phi(grad f) . phi(grad L)``.

    Parameters
    ----------
    estimator : PINNRegressor or FrozenEstimator
        The PINN to attribute. A fitted one is used as it is; wrapped in
        :class:`~sklearn.frozen.FrozenEstimator` it stays fitted through :func:`~sklearn.base.clone`
        (the clone-safe form: ``clone(PINNInfluence(FrozenEstimator(pinn))).fit()`` attributes
        the same PINN). An unfitted one (e.g. the estimator of a clone of a
        ``PINNInfluence`` of a plain fitted PINN) is trained on the points given to
        :meth:`fit`, as ``clone(estimator).fit(X, y)``.
    hessian : {"auto", "exact", "exact_topk", "arnoldi"}, default="auto"
        Inverse-Hessian approximation; ``"auto"`` is ``"exact"`` up to 1,000 trained
        parameters and ``"arnoldi"`` beyond (the exact Hessian's cost grows with the cube of
        the parameter count; see :ref:`user_guide_pinn` for timings).
    arnoldi_dim : int, default=200
        Krylov dimension ``m`` (number of Hessian-vector products) of ``"arnoldi"``.
    projection_dim : int, default=50
        Number ``k`` of top eigenvalues kept by ``"arnoldi"`` and ``"exact_topk"``.
    damping : float, default=1e-3
        ``lambda`` added to the eigenvalues before inversion (>= 0).
    eig_tol : float, default=1e-4
        Damped eigenvalues at or below it are dropped (>= 0). Negative eigenvalues of a
        non-convex loss are always dropped when ``eig_tol >= 0``.
    hessian_objective : {"sum", "training"}, default="sum"
        ``"sum"``: ``H`` and the per-point gradients of ``sum_i L(z_i)``; ``"training"``: of
        the training objective (loss weights and per-term means), whose stationary point the
        trained parameters approximate.
    loo_correction : bool, default=False
        Replace ``grad L(z_i)`` by ``H Delta_i``, with ``Delta_i`` the exact leave-one-out
        shift of the parameters of a model linear in them, for the estimator's training
        objective (its ``loss_weights`` and ``loss_reduction``): a leverage correction,
        ``Delta_i = G^-1 J_i^T (I - P_ii)^-1 rho_i`` with ``P_ii = J_i G^-1 J_i^T`` for
        ``loss_reduction="sum"`` (``J``, ``rho`` and ``G`` weighted by the term weights);
        with ``"mean"`` the removal also rescales the other points of the terms of ``z_i``
        by ``n_k / (n_k - 1)``, which the correction includes (see ``_loo_gradients``).
        Needs an exact Hessian and a random-feature PINN (``train_hidden=False``) of a
        linear problem; then, with ``damping=0``, every eigenvalue kept and ``X=None`` in
        :meth:`fit`, ``influence`` is the exact change of a test output when ``z_i`` is
        removed and the model refitted (:meth:`leave_one_out`), for either reduction, any
        weights and either ``hessian_objective``. With ``problem=None`` it is not (the
        refit re-standardises ``y`` and rescales the inputs; a ``UserWarning`` says so).
    batch_size : int, default=1024
        Points per chunk of the per-point gradients and Hessian-vector products.
    random_state : int, RandomState instance or None, default=0
        Seeds the Arnoldi start vector.

    Attributes
    ----------
    estimator_ : PINNRegressor
        The fitted PINN attributed (``estimator`` itself, unwrapped from a FrozenEstimator, or
        the clone trained by :meth:`fit`).
    n_params_ : int
        Number of trained parameters ``p``.
    eigenvalues_ : ndarray of shape (n_kept,)
        Damped eigenvalues kept by the inverse, descending.
    n_negative_eigenvalues_ : int
        Number of negative eigenvalues of ``H`` (or of its Krylov restriction).
    hessian_ : ndarray of shape (n_params_, n_params_) or None
        The Hessian (exact modes only).
    hessian_method_ : str
        The approximation used (``"auto"`` resolved).
    projection_ : ndarray of shape (n_params_, n_kept)
        ``R``.
    train_embeddings_ : dict of str to ndarray of shape (n_train, n_kept)
        ``phi(grad rho_k(z_i)^2)`` per loss term and ``"total"``.
    X_train_ : ndarray of shape (n_train, n_inputs)
        The attributed points (the PINN's training points unless :meth:`fit` was given
        others).
    train_indices_ : ndarray of shape (n_train,), dtype int
        Row of ``estimator_.X_train_`` each attributed point is (-1 for a point that is not
        a training point of the PINN); :meth:`leave_one_out` drops that row.
    point_terms_ : ndarray of shape (n_train, n_terms), dtype bool
        Loss terms of each training point.
    loss_term_names_ : list of str
        Names of the loss terms.
    module_ : torch.nn.Module
        A float64 CPU copy of the PINN's network at fit time (later refits of the PINN do
        not change the influences).
    train_gradients_ : ndarray of shape (n_train, n_params_)
        Gradient of each training point's loss (``H Delta_i`` with ``loo_correction``): the
        right-hand side of :meth:`grad_dot`.
    fit_time_ : float
        Seconds :meth:`fit` took.
    fit_time_parts_ : dict of str to float
        Seconds spent on the per-point gradients (``"gradients"``), the Hessian or Arnoldi
        step (``"hessian"``) and the projection (``"projection"``).

    See Also
    --------
    PINNRegressor : The PINN whose training points are attributed.

    References
    ----------
    .. [1] Naujoks, Krasowski, Weckbecker, Yolcu, Wiegand, Lapuschkin, Samek, Klausen.
       "PINNfluence: Interpreting PINNs through Influence Functions", ICML 2026,
       arXiv:2409.08958.
    .. [2] Schioppa, Zablotskaia, Vilar, Sokolov. "Scaling Up Influence Functions", AAAI 2022,
       arXiv:2112.03052.
    .. [3] Koh, Liang. "Understanding Black-box Predictions via Influence Functions", ICML
       2017, arXiv:1703.04730.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_pde_collocation
    >>> from sklearn_icml26.pinn import PINNInfluence, PINNRegressor, heat_1d
    >>> problem = heat_1d()
    >>> X = make_pde_collocation(problem, 60, 10, 10, random_state=0)
    >>> pinn = PINNRegressor(problem, hidden_layer_sizes=(8,), solver="adam", max_epochs=20,
    ...                      random_state=0).fit(X)
    >>> inf = PINNInfluence(pinn, hessian="exact").fit()
    >>> inf.influence(X[:5]).shape
    (5, 80)
    >>> by_term = inf.influence_by_term(X[:5])
    >>> sorted(by_term)
    ['bc', 'ic', 'pde']
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"])],
        "hessian": [StrOptions({"auto", "exact", "exact_topk", "arnoldi"})],
        "arnoldi_dim": [Interval(Integral, 1, None, closed="left")],
        "projection_dim": [Interval(Integral, 1, None, closed="left")],
        "damping": [Interval(Real, 0, None, closed="left")],
        "eig_tol": [Interval(Real, 0, None, closed="left")],
        "hessian_objective": [StrOptions({"sum", "training"})],
        "loo_correction": ["boolean"],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator, *, hessian="auto", arnoldi_dim=200, projection_dim=50,
                 damping=1e-3, eig_tol=1e-4, hessian_objective="sum", loo_correction=False,
                 batch_size=1024, random_state=0):
        self.estimator = estimator
        self.hessian = hessian
        self.arnoldi_dim = arnoldi_dim
        self.projection_dim = projection_dim
        self.damping = damping
        self.eig_tol = eig_tol
        self.hessian_objective = hessian_objective
        self.loo_correction = loo_correction
        self.batch_size = batch_size
        self.random_state = random_state

    @classmethod
    def _get_test_params(cls):
        # an analysis object of a fitted PINN, not a learner: the common estimator checks
        # (fit on generic tabular X, y) do not apply, so it has no test instances there
        return []

    # -- helpers -------------------------------------------------------------------------------
    def _check_estimator(self, X=None, y=None):
        """The fitted PINN to attribute: ``estimator`` (unwrapped from a
        :class:`~sklearn.frozen.FrozenEstimator`) when fitted, else ``clone(estimator)``
        trained on ``X``, ``y``. Returns ``(pinn, trained_here)``."""
        est = self.estimator
        frozen = isinstance(est, FrozenEstimator)
        inner = est.estimator if frozen else est
        if not isinstance(inner, PINNRegressor):
            raise TypeError(f"estimator must be a PINNRegressor (fitted, or a FrozenEstimator "
                            f"of a fitted one); got {type(inner).__name__}"
                            f"{' inside a FrozenEstimator' if frozen else ''}.")
        try:
            check_is_fitted(inner)
        except NotFittedError as exc:
            if frozen:
                raise ValueError("estimator must be a fitted PINNRegressor; this "
                                 "FrozenEstimator wraps an unfitted one: call "
                                 "estimator.fit(X) before freezing it.") from exc
            if X is None:
                raise ValueError(
                    "estimator must be a fitted PINNRegressor, or fit(X, y) must be given the "
                    "training points to train clone(estimator) on; this PINNRegressor is not "
                    "fitted yet and X is None. (A clone of a PINNInfluence clones its "
                    "estimator unfitted: wrap a fitted PINN in "
                    "sklearn.frozen.FrozenEstimator to keep it through clone.)") from exc
            return clone(inner).fit(X, y), True
        return inner, False

    def _term_mask(self, X):
        """Term membership of arbitrary points: PDE everywhere, conditions by ``on``."""
        est = self.estimator_
        names = est.loss_term_names_
        cols = []
        cond_masks = {}
        if est.problem is not None:
            cond_masks = dict(zip([c.name for c in est.problem.conditions],
                                  est._condition_mask(X), strict=True))
        for name in names:
            if name.startswith("pde"):
                cols.append(np.ones(X.shape[0], bool))
            elif name in cond_masks:
                cols.append(cond_masks[name])
            else:  # data terms: no observation at a new point
                cols.append(np.zeros(X.shape[0], bool))
        return np.stack(cols, axis=1)

    def _tensor(self, a):
        return torch.as_tensor(_writeable(np.asarray(a, dtype=np.float64)),
                               dtype=torch.float64)

    def _targets(self, n, y=None):
        est = self.estimator_
        if not any(k.startswith("data") for k in est.loss_term_names_):
            return None
        if y is None:
            return torch.zeros(n, est.n_outputs_, dtype=torch.float64)
        return self._tensor(np.nan_to_num(_standardize(y, est.y_mean_, est.y_scale_)))

    def _check_y(self, X, y):
        """Observed targets of the points ``X`` given to :meth:`fit`, as ``(n, n_outputs)``."""
        from sklearn.utils import check_array

        est = self.estimator_
        if not any(k.startswith("data") for k in est.loss_term_names_):
            raise ValueError("y was given but the PINN has no data term (it was fitted "
                             "without y): its training points have no observed values.")
        y = check_array(y, dtype=np.float64, ensure_2d=False, ensure_all_finite="allow-nan",
                        input_name="y")
        y2 = y.reshape(-1, 1) if y.ndim == 1 else y
        if y2.shape != (X.shape[0], est.n_outputs_):
            raise ValueError(f"y must have shape ({X.shape[0]}, {est.n_outputs_}) (one row per "
                             f"point of X; or ({X.shape[0]},) for one output); got "
                             f"{y.shape}.")
        if np.isinf(y2).any():
            raise ValueError("y contains infinity; use NaN for unobserved entries.")
        return y2

    def _coefs(self):
        est = self.estimator_
        if self.hessian_objective == "sum":
            return np.ones(len(est.loss_term_names_))
        counts = np.maximum(est.point_terms_.sum(axis=0), 1)
        if est.loss_reduction == "mean":
            return est.loss_weights_ / counts
        return est.loss_weights_.astype(np.float64)

    def _hvp_closure(self, X, M, Y):
        """``hvp(v)`` of the summed (weighted) loss at the training points ``X`` (masks ``M``,
        targets ``Y``); the gradient graph is built once."""
        net = self.module_
        names = list(split_state(net)[0])
        params = [dict(net.named_parameters())[k] for k in names]
        c = self._tensor(self._coefs())
        grads = None
        chunks = []
        for start in range(0, X.shape[0], self.batch_size):
            sl = slice(start, start + self.batch_size)
            y = None if Y is None else Y[sl]
            r = batched_residuals(net, self.estimator_.problem, X[sl], M[sl], y)
            loss = (r**2 * c).sum()
            g = torch.autograd.grad(loss, params, create_graph=True, allow_unused=True)
            g = [torch.zeros_like(p) if gi is None else gi
                 for gi, p in zip(g, params, strict=True)]
            chunks.append(torch.cat([gi.reshape(-1) for gi in g]))
        grads = torch.stack(chunks).sum(dim=0)

        def hvp(v):
            if not grads.requires_grad:  # loss linear in the parameters: zero Hessian
                return torch.zeros_like(v)
            out = torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True,
                                      allow_unused=True)
            return torch.cat([torch.zeros_like(p).reshape(-1) if o is None else o.reshape(-1)
                              for o, p in zip(out, params, strict=False)]).detach()

        def hvp_batched(V):  # V (b, p) -> (b, p)
            if not grads.requires_grad:
                return torch.zeros_like(V)
            out = torch.autograd.grad(grads, params, grad_outputs=V, retain_graph=True,
                                      allow_unused=True, is_grads_batched=True)
            return torch.cat([torch.zeros(V.shape[0], p.numel(), dtype=V.dtype) if o is None
                              else o.reshape(V.shape[0], -1)
                              for o, p in zip(out, params, strict=True)],
                             dim=1).detach()

        return hvp, hvp_batched

    def _exact_hessian(self, hvp, hvp_batched):
        p = self.n_params_
        eye = torch.eye(p, dtype=torch.float64)
        cols = []
        step = 64
        for start in range(0, p, step):
            block = eye[start : start + step]
            try:
                cols.append(hvp_batched(block))
            except RuntimeError:  # an op without a batching rule: one column at a time
                cols.append(torch.stack([hvp(v) for v in block]))
        H = torch.cat(cols, dim=0)
        return 0.5 * (H + H.T)

    def _loo_gradients(self, rho, J, H):
        """Per-term training gradients ``H Delta_ik`` of the exact leave-one-out shift.

        The trained parameters minimise ``F = sum_j sum_k c_k m_jk rho_jk^2`` with
        ``rho = J theta - b`` (linear), ``c_k = w_k / n_k`` (``loss_reduction="mean"``, ``n_k``
        points in term ``k``) or ``w_k`` (``"sum"``). Removing point ``i`` also rescales the
        other points of its terms: ``c_k -> c_k r_k``, ``r_k = n_k / (n_k - 1)`` (1 for the
        ``"sum"`` reduction, for the terms ``i`` is not in, and for a term ``i`` is alone in).
        With ``G_D = sum_k r_k c_k G_k`` (``G_k = sum_{j in S_k} J_jk^T J_jk``),
        ``U = diag(sqrt(c r m_i)) J_i``, ``P = U G_D^-1 U^T`` and the stationarity of the
        fit (``sum_k c_k g_k = 0``, ``g_k = sum_{j in S_k} J_jk^T rho_jk``), the refitted
        parameters move by ``Delta_i = sum_k Delta_ik``,
        ``Delta_ik = G_D^-1 (U_k^T a_k - (r_k - 1) c_k g_k)`` with
        ``a = (I - P)^-1 (U rho_i' - U G_D^-1 sum_k (r_k - 1) c_k g_k)`` and
        ``rho_i' = sqrt(c r m_i) rho_i`` (Woodbury). The returned gradients ``H Delta_ik`` make
        ``influence = grad f^T (H + damping)^-1 H Delta_i``: the exact change for
        ``damping=0`` with every eigenvalue kept, whatever the reduction, weights and
        ``hessian_objective``. ``H Delta_ik`` is formed as ``2 G_D Delta_ik + (H - 2 G_D)
        Delta_ik`` (the first part without a solve), which keeps it accurate when ``H`` is
        (close to) ``2 G_D``.
        """
        est = self.estimator_
        counts = est.point_terms_.sum(axis=0).astype(np.float64)
        w = np.asarray(est.loss_weights_, dtype=np.float64)
        c_np = w / np.maximum(counts, 1) if est.loss_reduction == "mean" else w.copy()
        c = self._tensor(c_np)
        M = self.point_terms_
        Mt = self._tensor(M)
        rho = rho * Mt
        Gk = torch.einsum("nk,nkp,nkq->kpq", Mt, J, J)  # per-term Gram matrices
        gk = torch.einsum("nk,nkp,nk->kp", Mt, J, rho)  # per-term gradients / 2
        G = torch.einsum("k,kpq->pq", c, Gk)
        n, K, p = J.shape
        grads = torch.zeros(n, K, p, dtype=J.dtype)
        patterns, inverse = np.unique(M, axis=0, return_inverse=True)
        inverse = np.ravel(inverse)
        eye = torch.eye(K, dtype=J.dtype)
        for u_idx, u in enumerate(patterns):
            idx = torch.as_tensor(np.flatnonzero(inverse == u_idx))
            left = counts - u
            r_np = np.where((est.loss_reduction == "mean") & u & (left > 0),
                            counts / np.maximum(left, 1), 1.0)
            r = self._tensor(r_np)
            GD = G + torch.einsum("k,kpq->pq", (r - 1.0) * c, Gk)
            e = ((r - 1.0) * c)[:, None] * gk  # (K, p): rescaling of the other points
            s = torch.sqrt(c * r * self._tensor(u))
            U = s[None, :, None] * J[idx]  # (m, K, p)
            rs = s[None, :] * rho[idx]  # (m, K)
            m = U.shape[0]
            Z = torch.linalg.solve(GD, torch.cat([U.reshape(m * K, p), e], dim=0).T).T
            GU = Z[: m * K].reshape(m, K, p)  # G_D^-1 U_k^T
            GE = Z[m * K :]  # (K, p): G_D^-1 e_k
            P = torch.einsum("mkp,mlp->mkl", U, GU)
            a = torch.linalg.solve(eye[None] - P,
                                   (rs - U @ GE.sum(dim=0))[:, :, None])[:, :, 0]
            delta = a[:, :, None] * GU - GE[None]  # (m, K, p): Delta_ik
            two_g = 2.0 * (a[:, :, None] * U - e[None])  # 2 G_D Delta_ik, without a solve
            grads[idx] = two_g + delta @ (H - 2.0 * GD)
        return grads

    # -- fit -----------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X=None, y=None):
        """Per-point gradients, the inverse-Hessian projection and the training embeddings.

        With a fitted ``estimator`` (or a :class:`~sklearn.frozen.FrozenEstimator` of one)
        the PINN is used as it is; with an unfitted one, ``clone(estimator)`` is first trained
        on ``X``, ``y`` (then ``estimator_``) and its training points are attributed.

        Parameters
        ----------
        X : array-like of shape (n_train, n_inputs) or None, default=None
            Fitted estimator: the points to attribute; ``None`` uses ``estimator.X_train_``
            (and its targets). Other points get the PDE term everywhere and the conditions by
            ``on``. Unfitted estimator: the training points of the PINN (required).
        y : array-like of shape (n_train,) or (n_train, n_outputs), default=None
            Observed targets of ``X`` (NaN = unobserved), if the estimator has data terms.

        Returns
        -------
        self : PINNInfluence
            The fitted object.

        Raises
        ------
        TypeError
            If ``estimator`` is not a PINNRegressor (or a FrozenEstimator of one).
        ValueError
            If ``estimator`` is not fitted and ``X`` is None (or it is a FrozenEstimator of
            an unfitted PINN), ``loo_correction`` is asked for with an Arnoldi Hessian or a
            model that is not linear in its trained parameters, ``X`` is invalid, or ``y``
            has the wrong shape or is given for a PINN without a data term.
        """
        import time

        start = time.perf_counter()
        est, trained = self._check_estimator(X, y)
        self.estimator_ = est
        if X is None or trained:
            X = est.X_train_
            mask = est.point_terms_
            y = est.y_train_
            self.train_indices_ = np.arange(X.shape[0])
        else:
            X = est._check_X(X)
            mask = self._term_mask(X)
            if y is not None:
                y = self._check_y(X, y)
                data_cols = [j for j, k in enumerate(est.loss_term_names_)
                             if k.startswith("data")]
                mask[:, data_cols] = ~np.isnan(y)
            self.train_indices_ = _match_rows(X, est.X_train_)
        self.X_train_ = np.asarray(X, dtype=np.float64)
        self.point_terms_ = np.asarray(mask, dtype=bool)
        self.loss_term_names_ = list(est.loss_term_names_)

        net = copy.deepcopy(est.module_).to(torch.float64).cpu()
        trainable, _ = split_state(net)
        self.module_ = net
        self.n_params_ = int(sum(v.numel() for v in trainable.values()))
        n_train = self.X_train_.shape[0]
        Xt = self._tensor(self.X_train_)
        Mt = self._tensor(self.point_terms_)
        Yt = self._targets(n_train, y)

        method = self.hessian
        if method == "auto":
            method = "exact" if self.n_params_ <= _AUTO_EXACT_MAX_PARAMS else "arnoldi"
        self.hessian_method_ = method
        if self.loo_correction:
            linear = (not est.train_hidden) and (est.problem is None or est.problem.linear)
            if method == "arnoldi" or not linear:
                raise ValueError(
                    "loo_correction=True needs an exact Hessian (hessian='exact' or "
                    "'exact_topk') and a model linear in its trained parameters "
                    "(PINNRegressor(train_hidden=False) on a linear problem); got "
                    f"hessian={method!r}, train_hidden={est.train_hidden}.")
            if est.problem is None:
                import warnings

                warnings.warn(
                    "PINNInfluence: loo_correction=True is not the exact leave-one-out change "
                    "of a PINNRegressor with problem=None: its refit re-standardises y and "
                    "rescales the inputs over the remaining points.", UserWarning,
                    stacklevel=2)
        seconds = {}

        # per-point residuals and Jacobians -> per-term gradients of c_k rho_k^2
        t0 = time.perf_counter()
        rho, J = per_point_jacobians(net, est.problem, Xt, Mt, Yt, self.batch_size)
        c = self._tensor(self._coefs())
        seconds["gradients"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        hvp, hvp_batched = self._hvp_closure(Xt, Mt, Yt)
        if method in ("exact", "exact_topk"):
            H = self._exact_hessian(hvp, hvp_batched)
            evals, evecs = torch.linalg.eigh(H)
            self.hessian_ = H.numpy()
            self.n_negative_eigenvalues_ = int((evals < 0).sum())
            top = self.projection_dim if method == "exact_topk" else None
            R, lam = _eigen_projection(evals, evecs, None, self.damping, self.eig_tol, top)
        else:
            rng = check_random_state(self.random_state)
            m = min(self.arnoldi_dim, self.n_params_)
            H = None
            Q, T = _arnoldi(hvp, self.n_params_, m, rng, torch.float64)
            evals, evecs = torch.linalg.eigh(T)
            self.hessian_ = None
            self.n_negative_eigenvalues_ = int((evals < 0).sum())
            R, lam = _eigen_projection(evals, evecs, Q, self.damping, self.eig_tol,
                                       self.projection_dim)
        seconds["hessian"] = time.perf_counter() - t0
        if R.shape[1] == 0:
            import warnings

            from sklearn.exceptions import ConvergenceWarning

            warnings.warn("PINNInfluence: no damped Hessian eigenvalue exceeds eig_tol; every "
                          "influence is 0. Raise damping or lower eig_tol.", ConvergenceWarning,
                          stacklevel=2)
        self.projection_ = R.numpy()
        self.eigenvalues_ = lam.numpy()

        t0 = time.perf_counter()
        grads_by_term = 2.0 * (c * rho)[:, :, None] * J  # (n, K, p)
        if self.loo_correction:
            grads_by_term = self._loo_gradients(rho, J, H)
        emb = torch.einsum("nkp,pr->nkr", grads_by_term, R)
        self.train_embeddings_ = {k: emb[:, j].numpy() for j, k in
                                  enumerate(self.loss_term_names_)}
        self.train_embeddings_["total"] = emb.sum(dim=1).numpy()
        self.train_gradients_ = grads_by_term.sum(dim=1).numpy()
        seconds["projection"] = time.perf_counter() - t0
        self.fit_time_parts_ = seconds
        self.fit_time_ = time.perf_counter() - start
        return self

    # -- test side -----------------------------------------------------------------------------
    def _check_term(self, term, allow_outputs):
        names = list(self.loss_term_names_) + ["total"]
        if allow_outputs:
            outs = [f"output_{j}" for j in range(self.estimator_.n_outputs_)]
            names = outs + names
        if term not in names:
            raise ValueError(f"unknown term {term!r}; available: {names}.")
        return term

    def _test_gradients(self, X, term):
        """``grad_theta f(x)`` for every test point, shape ``(n_test, p)``."""
        net = self.module_
        trainable, frozen = split_state(net)
        names = list(trainable)
        Xt = self._tensor(X)
        if term.startswith("output_"):
            j = int(term.split("_")[1])
            state_fn = lambda params, x: functional_call(  # noqa: E731
                net, {**frozen, **params}, (x[None, :],))[0, j]
            g = vmap(jacrev(state_fn), in_dims=(None, 0))
            out = []
            for start in range(0, Xt.shape[0], self.batch_size):
                G = g(trainable, Xt[start : start + self.batch_size])
                out.append(flatten(G, names, batch_dims=1).detach())
            return torch.cat(out)
        mask = self._tensor(self._term_mask(X))
        y = self._targets(X.shape[0])
        rho, J = per_point_jacobians(net, self.estimator_.problem, Xt, mask, y,
                                     self.batch_size)
        c = self._tensor(self._coefs())
        grads = 2.0 * (c * rho)[:, :, None] * J
        if term == "total":
            return grads.sum(dim=1)
        return grads[:, self.loss_term_names_.index(term)]

    def _test_embedding(self, X, term):
        return (self._test_gradients(X, term) @ self._tensor(self.projection_)).numpy()

    def _check_test_X(self, X_test):
        check_is_fitted(self)
        return self.estimator_._check_X(X_test, name="X_test")

    def influence(self, X_test, test_term="output_0", train_term="total"):
        """Influence of every training point on ``f`` at every test point.

        Parameters
        ----------
        X_test : array-like of shape (n_test, n_inputs)
            Test points.
        test_term : str, default="output_0"
            ``"output_j"`` (output ``j`` of the network), a loss-term name (``rho_k(x)^2``) or
            ``"total"`` (``sum_k rho_k(x)^2``).
        train_term : str, default="total"
            Which training loss the points act through: a loss-term name or ``"total"``.

        Returns
        -------
        influence : ndarray of shape (n_test, n_train), dtype float64
            ``Inf[a, i] ~ f(x_a; theta_-i) - f(x_a; theta)``.

        Raises
        ------
        ValueError
            If a term is unknown or ``X_test`` is invalid.
        """
        X_test = self._check_test_X(X_test)
        self._check_term(test_term, allow_outputs=True)
        self._check_term(train_term, allow_outputs=False)
        return self._test_embedding(X_test, test_term) @ self.train_embeddings_[train_term].T

    def influence_by_term(self, X_test, test_term="output_0"):
        """Influence through each training loss term; the terms sum to ``influence``.

        Parameters
        ----------
        X_test : array-like of shape (n_test, n_inputs)
            Test points.
        test_term : str, default="output_0"
            As in :meth:`influence`.

        Returns
        -------
        influences : dict of str to ndarray of shape (n_test, n_train)
            One matrix per loss term (0 for points outside the term).
        """
        X_test = self._check_test_X(X_test)
        self._check_term(test_term, allow_outputs=True)
        E = self._test_embedding(X_test, test_term)
        return {k: E @ self.train_embeddings_[k].T for k in self.loss_term_names_}

    def self_influence(self, train_term="total"):
        """``grad L(z_i)^T H^-1 grad L(z_i)`` of every training point.

        Parameters
        ----------
        train_term : str, default="total"
            Loss term (or ``"total"``) on both sides.

        Returns
        -------
        self_influence : ndarray of shape (n_train,)
            Non-negative scores (the kept eigenvalues are positive).
        """
        check_is_fitted(self)
        self._check_term(train_term, allow_outputs=False)
        E = self.train_embeddings_[train_term]
        return np.einsum("ir,ir->i", E, E)

    def grad_dot(self, X_test, test_term="output_0"):
        """Gradient-similarity baseline ``grad f(x)^T grad L(z_i)`` (no Hessian).

        Parameters
        ----------
        X_test : array-like of shape (n_test, n_inputs)
            Test points.
        test_term : str, default="output_0"
            As in :meth:`influence`.

        Returns
        -------
        scores : ndarray of shape (n_test, n_train)
            Plain gradient dot products.
        """
        X_test = self._check_test_X(X_test)
        self._check_term(test_term, allow_outputs=True)
        return (self._test_gradients(X_test, test_term)
                @ self._tensor(self.train_gradients_).T).numpy()

    def loss_fractions(self, X_test, test_term="output_0"):
        """Share of the absolute influence each training loss term carries at each test point.

        ``F_k(a) = sum_i |Inf_k[a, i]| / sum_k' sum_i |Inf_k'[a, i]|``.

        Parameters
        ----------
        X_test : array-like of shape (n_test, n_inputs)
            Test points.
        test_term : str, default="output_0"
            As in :meth:`influence`.

        Returns
        -------
        fractions : ndarray of shape (n_test, n_terms)
            Rows sum to 1 (NaN where every influence is 0); columns follow
            ``loss_term_names_``.
        """
        by = self.influence_by_term(X_test, test_term)
        A = np.stack([np.abs(by[k]).sum(axis=1) for k in self.loss_term_names_], axis=1)
        tot = A.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(tot > 0, A / tot, np.nan)

    def cancellation(self, X_test, test_term="output_0"):
        """How much the loss terms of a training point cancel in their influence.

        ``C(a) = 1 - mean_i |sum_k Inf_k[a, i]| / sum_k |Inf_k[a, i]|`` over the training
        points with a nonzero influence: 0 when the terms of every point agree in sign, near 1
        when they cancel.

        Parameters
        ----------
        X_test : array-like of shape (n_test, n_inputs)
            Test points.
        test_term : str, default="output_0"
            As in :meth:`influence`.

        Returns
        -------
        cancellation : ndarray of shape (n_test,)
            Values in [0, 1] (NaN where every influence is 0).
        """
        by = self.influence_by_term(X_test, test_term)
        stack = np.stack([by[k] for k in self.loss_term_names_])  # (K, n_test, n_train)
        num = np.abs(stack.sum(axis=0))
        den = np.abs(stack).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(den > 0, num / den, np.nan)
            return 1.0 - np.nanmean(ratio, axis=1)

    def directionality(self, X_test, dim=-1, test_term="output_0"):
        """Share of absolute influence coming from training points "before" each test point.

        ``D(a) = sum_{i: t_i <= t_a} |Inf[a, i]| / sum_i |Inf[a, i]|`` along input ``dim``
        (time by default), beside the share of training points with ``t_i <= t_a``: in a
        well-trained PINN of an evolution equation information flows forward in time, so
        ``D(a)`` exceeds the point share. NaN at test points on a condition (where the
        condition, not the past, fixes the value).

        Parameters
        ----------
        X_test : array-like of shape (n_test, n_inputs)
            Test points.
        dim : int, default=-1
            Input used as the ordering (the time input).
        test_term : str, default="output_0"
            As in :meth:`influence`.

        Returns
        -------
        directionality : ndarray of shape (n_test,)
            ``D(a)``.
        point_share : ndarray of shape (n_test,)
            Share of training points with ``t_i <= t_a`` (NaN where ``D`` is NaN).
        """
        X_test = self._check_test_X(X_test)
        n_in = X_test.shape[1]
        if not -n_in <= dim < n_in:
            raise ValueError(f"dim must index one of the {n_in} inputs; got {dim}.")
        inf = np.abs(self.influence(X_test, test_term))
        before = self.X_train_[None, :, dim] <= X_test[:, None, dim]
        tot = inf.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            D = np.where(tot > 0, (inf * before).sum(axis=1) / tot, np.nan)
        share = before.mean(axis=1).astype(np.float64)
        on_condition = self._term_mask(X_test)[:, [not k.startswith(("pde", "data"))
                                                   for k in self.loss_term_names_]].any(axis=1)
        D[on_condition] = np.nan
        share[on_condition] = np.nan
        return D, share

    def leave_one_out(self, i, X_test, test_term="output_0"):
        """Retrain without training point ``i`` from the same initialisation; the change of f.

        The refit is ``clone(estimator_).fit`` on the PINN's own training set
        (``estimator_.X_train_`` and its targets) without the point attributed as
        ``X_train_[i]`` (row ``train_indices_[i]`` of it, with all its loss terms), so that
        after ``fit(X)`` on a subset of the training points ``i`` still indexes
        ``X_train_``. The same initialisation needs an int ``random_state`` on the PINN;
        otherwise a ``UserWarning`` is raised.

        Parameters
        ----------
        i : int
            Index of the attributed point to drop (a row of ``X_train_``).
        X_test : array-like of shape (n_test, n_inputs)
            Test points.
        test_term : str, default="output_0"
            ``"output_j"`` only.

        Returns
        -------
        delta : ndarray of shape (n_test,)
            ``f(x; theta_-i) - f(x; theta)`` (the sign of :meth:`influence`).

        Raises
        ------
        ValueError
            If ``i`` is not an int index of ``X_train_``, the point ``X_train_[i]`` is not a
            training point of the PINN (passed to :meth:`fit` but not in
            ``estimator_.X_train_``: there is nothing to leave out), or ``test_term`` is not
            an output.

        Warns
        -----
        UserWarning
            If the PINN's ``random_state`` is not an int (``None`` or a ``RandomState``
            instance): the retraining then starts from a different initialisation than the
            fitted PINN (and two identical calls differ), so ``delta`` mixes the removal of
            ``z_i`` with the change of initialisation.
        """
        check_is_fitted(self)
        n = self.X_train_.shape[0]
        if (isinstance(i, (bool, np.bool_)) or not isinstance(i, Integral)
                or not -n <= i < n):
            raise ValueError(f"i must be an int index of a training point, in [-{n}, {n - 1}]; "
                             f"got {i!r}.")
        if not isinstance(test_term, str) or not test_term.startswith("output_"):
            raise ValueError(f"leave_one_out supports output terms only (test_term="
                             f"'output_j'); got {test_term!r}.")
        self._check_term(test_term, allow_outputs=True)
        X_test = self._check_test_X(X_test)
        j = int(test_term.split("_")[1])
        est = self.estimator_
        row = int(self.train_indices_[int(i)])
        if row < 0:
            raise ValueError(
                f"point i={i} (X_train_[{i}] = {self.X_train_[int(i)].tolist()}) is not a "
                "training point of the PINN (it was passed to fit but is not in "
                "estimator_.X_train_): there is no point to leave out of its training set.")
        if not isinstance(est.random_state, Integral) or isinstance(est.random_state, bool):
            import warnings

            warnings.warn(
                f"PINNInfluence.leave_one_out: the PINN's random_state is "
                f"{'None' if est.random_state is None else type(est.random_state).__name__}, "
                "so the retraining is not from the same initialisation as the fitted PINN "
                "(two identical calls differ); fit the PINNRegressor with an int "
                "random_state.", UserWarning, stacklevel=2)
        # the PINN's own training set, without the row of the attributed point
        keep = np.arange(est.X_train_.shape[0]) != row
        y = est.y_train_
        if y is not None and est._y_1d_:
            y = y[:, 0]
        refit = clone(est).fit(est.X_train_[keep], None if y is None else y[keep])

        def out(model):
            pred = model.predict(X_test)
            return pred if pred.ndim == 1 else pred[:, j]

        return out(refit) - out(est)


def _match_rows(X, X_train):
    """Row of ``X_train`` equal to each row of ``X`` (-1 if none); the k-th repeat of a row
    of ``X`` takes the k-th repeat in ``X_train``."""
    rows = {}
    for j, row in enumerate(np.ascontiguousarray(X_train + 0.0)):  # + 0.0: -0.0 == 0.0
        rows.setdefault(row.tobytes(), []).append(j)
    out = np.full(X.shape[0], -1)
    used = {}
    for i, row in enumerate(np.ascontiguousarray(np.asarray(X, dtype=np.float64) + 0.0)):
        key = row.tobytes()
        k = used.get(key, 0)
        if k < len(rows.get(key, ())):
            out[i] = rows[key][k]
            used[key] = k + 1
    return out


def loo_correlation(influence, delta):
    """Spearman and Pearson correlation between influence columns and retrained changes.

    Parameters
    ----------
    influence : ndarray of shape (n_test,)
        ``Inf[:, i]`` for one dropped point.
    delta : ndarray of shape (n_test,)
        ``f_-i - f`` from :meth:`PINNInfluence.leave_one_out`.

    Returns
    -------
    spearman : float
        Rank correlation.
    pearson : float
        Linear correlation.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.pinn._influence import loo_correlation
    >>> loo_correlation(np.arange(5.0), 2 * np.arange(5.0))
    (1.0, 1.0)
    """
    a, b = np.ravel(influence), np.ravel(delta)
    return _spearman(a, b), float(np.corrcoef(a, b)[0, 1])
