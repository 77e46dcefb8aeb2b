"""SkewD: cause-effect discovery under skewed location-scale noise.

Fits the skew-normal location-scale noise model (:class:`SkewNormalLSNMRegressor`) in both
directions of a pair and decides by likelihood ("ll"), likelihood plus kernel marginal densities
("ll-kde") or independence of the standardised residuals (HSIC, "it"). For more than two
variables it orients a PC skeleton (or a given CPDAG) by the total likelihood. Formulas follow
Klippert & Marx, "Skewness-Robust Causal Discovery in Location-Scale Noise Models"
(arXiv:2511.14441) and its authors' code (causality-lab/skewd@03f920c); no code was copied.
"""

import itertools
import re
import time
import warnings
from numbers import Integral, Real

import numpy as np
from scipy.spatial.distance import pdist
from scipy.special import ndtr
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.neighbors import KernelDensity
from sklearn.utils import Bunch, check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import HasMethods, Interval, StrOptions, _fit_context
from ..utils._parallel import Parallel, delayed, record_warnings
from ..utils._progress import progress_bar
from ..utils._scaling import _pow2_scale, _robust_mean_std, _standardize
from ..utils._stacklevel import _external_stacklevel
from ._skewnormal import SkewNormalLSNMRegressor, _check_numeric

__all__ = ["SkewDCausalDiscoverer", "score_pairs"]

_HALF_LOG_2PI = 0.5 * np.log(2.0 * np.pi)


# --------------------------------------------------------------------------------------------
# kernel tools
# --------------------------------------------------------------------------------------------
def _median_sq_distance(a, seed, max_points=3000):
    """Median of the non-zero squared pairwise differences (seeded subsample above 3000)."""
    if a.shape[0] > max_points:
        idx = np.random.RandomState(seed).choice(a.shape[0], max_points, replace=False)
        a = a[idx]
    d = pdist(a[:, None], "sqeuclidean")
    d = d[d > 0]
    return float(np.median(d)) if d.size else 1.0


def _hsic(a, b, seed, block=1024):
    """Biased HSIC statistic ``trace(KHLH)`` with Gaussian kernels, O(n) memory."""
    n = a.shape[0]
    # the Gaussian kernels with median bandwidths are scale invariant: pre-scaling by a power
    # of two keeps the statistic (bitwise) and avoids overflow of the squared differences
    a, b = a / _pow2_scale(a), b / _pow2_scale(b)
    ma, mb = _median_sq_distance(a, seed), _median_sq_distance(b, seed)
    total = 0.0
    ksum = np.empty(n)
    lsum = np.empty(n)
    for start in range(0, n, block):
        stop = min(start + block, n)
        K = np.exp(-((a[start:stop, None] - a[None, :]) ** 2) / ma)
        L = np.exp(-((b[start:stop, None] - b[None, :]) ** 2) / mb)
        total += float(np.sum(K * L))
        ksum[start:stop] = K.sum(axis=1)
        lsum[start:stop] = L.sum(axis=1)
    return float(total - 2.0 / n * (ksum @ lsum) + ksum.sum() * lsum.sum() / n**2)


def _centred_gram(a, seed):
    """Doubly centred Gaussian Gram matrix ``HKH`` (median bandwidth), dense."""
    a = a / _pow2_scale(a)
    K = np.exp(-((a[:, None] - a[None, :]) ** 2) / _median_sq_distance(a, seed))
    row = K.mean(axis=1)
    return K - row[:, None] - row[None, :] + row.mean()


def _wild_bootstrap_pvalue(forward, backward, sign, n_bootstrap, rng, seed):
    """Wild-bootstrap p-value of ``H0: no preferred direction`` for an HSIC score.

    ``forward = (x0, r_{0→1})``, ``backward = (x1, r_{1→0})``. With ``H^d = K̃ ∘ L̃`` the
    products of the centred Gram matrices of a direction, the statistic is
    ``T = Σ_ij (H^b - H^f)_ij`` (the difference of the two HSIC statistics,
    ``trace(KHLH)`` each). Under ``H0`` (both residuals independent of their putative
    causes) ``T`` is a degenerate V-statistic whose null distribution is simulated by
    ``T* = εᵀ(H^b - H^f)ε`` with Rademacher ``ε``, the same draw for both directions.
    Returns ``(p_decision, p_two_sided, T)``: ``p_two_sided = (1 + #{|T*| >= |T|}) / (B + 1)``
    tests for *a* preference and is uniform under ``H0``; ``p_decision`` equals it when ``T``
    lies on the side of the decision ``sign`` and is 1 otherwise, a valid (conservative)
    p-value of the decision itself.
    """
    D = (_centred_gram(backward[0], seed) * _centred_gram(backward[1], seed)
         - _centred_gram(forward[0], seed) * _centred_gram(forward[1], seed))
    stat = float(D.sum())
    E = rng.choice((-1.0, 1.0), size=(D.shape[0], n_bootstrap))
    replicates = np.sum(E * (D @ E), axis=0)
    two_sided = float((1.0 + np.sum(np.abs(replicates) >= abs(stat))) / (n_bootstrap + 1.0))
    return (two_sided if sign * stat > 0 else 1.0), two_sided, stat


def _vuong_pvalue(d):
    """Two-sided p-value of Vuong's test that the per-sample log-likelihood ratios ``d`` have
    mean zero: ``2 Φ(-|Σd| / (√n sd(d)))``."""
    sd = float(np.std(d, ddof=1)) if d.shape[0] > 1 else 0.0
    total = float(np.sum(d))
    if not np.isfinite(total) or sd == 0.0 or not np.isfinite(sd):
        return 1.0 if total == 0.0 or sd == 0.0 else np.nan
    return float(2.0 * ndtr(-abs(total) / (np.sqrt(d.shape[0]) * sd)))


def _kci_pvalue(a, b, seed, max_samples=1000):
    """causal-learn's kernel independence test (KCI, gamma approximation) of ``a ⟂ b``."""
    try:
        from causallearn.utils.KCI.KCI import KCI_UInd
    except ImportError as exc:
        raise ImportError(
            "independence_test='kci' needs causal-learn, which is not installed: pip install "
            "\"sklearn_icml26[causal]\" (or pip install causal-learn). Without it use "
            "independence_test=None."
        ) from exc
    if a.shape[0] > max_samples:
        idx = np.random.RandomState(seed).choice(a.shape[0], max_samples, replace=False)
        a, b = a[idx], b[idx]
    pvalue, _ = KCI_UInd().compute_pvalue(a[:, None], b[:, None])
    return float(pvalue)


def _kde_bandwidth(x, bandwidth, seed):
    if not isinstance(bandwidth, str):
        return float(bandwidth)
    if bandwidth == "cv":
        grid = GridSearchCV(KernelDensity(), {"bandwidth": np.logspace(-2, 1, 50)}, cv=5)
        return float(grid.fit(x[:, None]).best_params_["bandwidth"])
    # exact leave-one-out likelihood on a seeded subsample of at most 1000 points
    if x.shape[0] > 1000:
        x = x[np.random.RandomState(seed).choice(x.shape[0], 1000, replace=False)]
    m = x.shape[0]
    d2 = ((x[:, None] - x[None, :]) ** 2).astype(np.float32)  # float32: 2x faster exps
    best_h, best = None, -np.inf
    for h in np.logspace(-2, 1, 20):
        K = np.exp(np.float32(-0.5 / h**2) * d2)
        rows = K.sum(axis=1, dtype=np.float64) - 1.0  # leave the point out (kernel value 1)
        with np.errstate(divide="ignore"):
            value = float(np.sum(np.log(np.maximum(rows, 0.0)))) - m * (
                np.log(m - 1) + np.log(h) + _HALF_LOG_2PI)
        if value > best:
            best, best_h = value, h
    return float(best_h if best_h is not None else 1.0)


def _kde_log_density(x, bandwidth, seed, block=512, cutoff=9.0):
    """In-sample Gaussian-KDE log-density ``Σ log p̂(x_i)``.

    Exact up to kernel terms below ``exp(-cutoff²/2)`` (about 1e-18): on sorted data each block
    of points only meets the points within ``cutoff·h``.
    """
    h = _kde_bandwidth(x, bandwidth, seed)
    xs = np.sort(x)
    n = xs.shape[0]
    total = 0.0
    for start in range(0, n, block):
        pts = xs[start:start + block]
        lo = np.searchsorted(xs, pts[0] - cutoff * h, side="left")
        hi = np.searchsorted(xs, pts[-1] + cutoff * h, side="right")
        K = np.exp(-0.5 / h**2 * (pts[:, None] - xs[None, lo:hi]) ** 2)
        total += float(np.sum(np.log(K.sum(axis=1))))
    return total - n * (np.log(n) + np.log(h) + _HALF_LOG_2PI)


# --------------------------------------------------------------------------------------------
# graph tools (lingam convention: B[i, j] = 1 iff j -> i)
# --------------------------------------------------------------------------------------------
def _topological_order(B):
    """Topological order of the DAG ``B`` (ties by index) or None when it has a cycle."""
    d = B.shape[0]
    indeg = B.sum(axis=1).astype(int).copy()
    order, ready = [], [i for i in range(d) if indeg[i] == 0]
    while ready:
        j = ready.pop(0)
        order.append(j)
        for i in np.flatnonzero(B[:, j]):
            indeg[i] -= 1
            if indeg[i] == 0:
                ready.append(int(i))
                ready.sort()
    return order if len(order) == d else None


def _v_structures(B, skeleton=None):
    """Set of v-structures ``(a, c, b)``, a < b, a -> c <- b, a and b non-adjacent.

    Adjacency is read from ``skeleton`` (default: the skeleton of ``B``).
    """
    out = set()
    adj = (B + B.T) > 0 if skeleton is None else np.asarray(skeleton) > 0
    adj = adj | adj.T
    for c in range(B.shape[0]):
        parents = np.flatnonzero(B[c])
        for a, b in itertools.combinations(parents, 2):
            if not adj[a, b]:
                out.add((int(a), c, int(b)))
    return out


def _dag_to_cpdag(B):
    """CPDAG of the DAG ``B`` by enumerating its equivalence class (small graphs).

    Returns a (d, d) 0/1 matrix: ``[i, j] = 1`` and ``[j, i] = 0`` for a compelled ``j -> i``,
    both 1 for an undirected edge.
    """
    B = (np.asarray(B) != 0).astype(int)
    edges = sorted({(min(i, j), max(i, j)) for i, j in zip(*np.nonzero(B + B.T), strict=True)})
    target = _v_structures(B)
    union = np.zeros_like(B)
    for signs in itertools.product((0, 1), repeat=len(edges)):
        G = np.zeros_like(B)
        for (a, b), s in zip(edges, signs, strict=True):
            if s:
                G[b, a] = 1  # a -> b
            else:
                G[a, b] = 1  # b -> a
        if _topological_order(G) is not None and _v_structures(G) == target:
            union |= G
    return union


def _pc_cpdag(X, ci_test, ci_alpha):
    try:
        from causallearn.search.ConstraintBased.PC import pc
    except ImportError as exc:
        raise ImportError(
            "skeleton='pc' needs causal-learn, which is not installed: pip install "
            "\"sklearn_icml26[causal]\" (or pip install causal-learn). Without it use "
            "skeleton='complete' (orients the complete graph by likelihood) or pass a known "
            "equivalence class with fit(X, cpdag=...)."
        ) from exc
    cg = pc(X, alpha=ci_alpha, indep_test=ci_test, stable=True, show_progress=False)
    G = np.asarray(cg.G.graph)
    d = X.shape[1]
    C = np.zeros((d, d), dtype=int)
    for i in range(d):
        for j in range(d):
            if i == j:
                continue
            if G[j, i] == 1 and G[i, j] == -1:  # i -> j
                C[j, i] = 1
            elif G[i, j] == G[j, i] and G[i, j] in (-1, 1):  # undirected (or bidirected)
                C[i, j] = C[j, i] = 1
    return C


# --------------------------------------------------------------------------------------------
# the discoverer
# --------------------------------------------------------------------------------------------
class SkewDCausalDiscoverer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """SkewD: cause-effect discovery with skew-normal location-scale noise models.

    For two variables, fits ``x1 = f(x0) + g(x0)·ε`` and ``x0 = f'(x1) + g'(x1)·ε'`` with
    skew-normal noise (:class:`SkewNormalLSNMRegressor`) on standardised data and decides the
    direction by one of three scores ``S`` (``S > 0`` means column 0 causes column 1, ``|S|``
    is the confidence):

    - ``"it"``: ``HSIC(x1, r_{1→0}) - HSIC(x0, r_{0→1})``, the dependence between each putative
      cause and its standardised residual ``(effect - f(cause)) / g(cause)``;
    - ``"ll"``: the difference of the conditional log-likelihoods;
    - ``"ll-kde"``: ``"ll"`` plus the difference of Gaussian-KDE marginal log-likelihoods of the
      causes.

    For more than two variables it takes a CPDAG (causal-learn's PC with a kernel or Fisher-z
    test, a complete skeleton, or a CPDAG passed to ``fit``) and orients its undirected edges by
    the total log-likelihood ``Σ_j s_j(pa(j))``: exhaustively over the acyclic orientations
    when there are at most ``max_undirected_edges`` undirected edges, else greedily by single
    edge reversals.

    Parameters
    ----------
    criterion : {"it", "ll", "ll-kde"}, default="it"
        Decision score of a pair (two variables); more variables always use the likelihood.
    estimator : regressor, dict or None, default=None
        Location-scale model cloned for every direction/node; it must provide
        ``log_likelihood(X, y)`` and ``residuals(X, y)``. None:
        ``SkewNormalLSNMRegressor()`` (``n_knots_loc=8`` for more than two variables); a dict:
        keyword arguments of :class:`SkewNormalLSNMRegressor` (on top of those defaults).
    knots : {"uniform", "quantile"} or None, default=None
        Knot placement of the regressors' splines: equally spaced over the range of the cause
        or at its quantiles (see :class:`SkewNormalLSNMRegressor`). A string is set on the
        default regressor, on a dict ``estimator`` (unless the dict sets ``"knots"`` itself)
        and on a regressor instance with a ``knots`` parameter; None keeps the regressor's
        own setting (uniform knots, the authors' choice). How the two placements compare on
        the standard benchmarks is in the :ref:`user guide <user_guide_skewd>`.
    standardize : bool, default=True
        Standardise every variable (mean 0, standard deviation 1) first; likelihoods are only
        comparable on a common scale.
    kde_bandwidth : "loo", "cv" or float, default="loo"
        Bandwidth of the KDE marginals (standardised units): exact leave-one-out likelihood on
        a seeded subsample of at most 1000 points over ``logspace(-2, 1, 20)``; ``"cv"``: the
        authors' 5-fold grid search over ``logspace(-2, 1, 50)`` (slow); or a fixed value.
    all_scores : bool, default=False
        For pairs, also compute the ``"ll-kde"`` score whatever the criterion.
    n_bootstrap : int, default=0
        Pairs only: wild-bootstrap replicates for the p-value of the ``"it"`` decision
        (``pvalues_["it"]``; 0 skips it). The null hypothesis is *no preferred direction*:
        both standardised residuals independent of their putative causes. Computed on a
        seeded subsample of at most 1000 rows (dense Gram matrices, ``O(n² B)`` time).
        200 gives p-values in steps of 0.005.
    independence_test : {"kci"} or None, default=None
        Pairs only: also test, in each direction, whether the standardised residual is
        independent of the putative cause with causal-learn's kernel independence test (KCI,
        gamma approximation; optional ``causal`` extra), on a seeded subsample of at most
        1000 rows. The p-values are in ``independence_pvalues_``.
    skeleton : {"pc", "complete"}, default="pc"
        Starting graph for more than two variables when no ``cpdag`` is given: causal-learn's
        PC (optional: ``pip install "sklearn_icml26[causal]"``) or the complete undirected
        graph (base install). Constant variables are left out of the PC tests.
    ci_test : {"kci", "fisherz"}, default="kci"
        Conditional-independence test of PC (KCI is O(n³) per test: prefer "fisherz" for
        large samples).
    ci_alpha : float, default=0.05
        Significance level of the PC tests.
    root_density : {"kde", "gaussian"}, default="kde"
        Log-density of a variable without parents: Gaussian KDE or standard normal (in the
        graph scores, and for pairs too in :meth:`score`).
    restrict_to_mec : bool, default=True
        Only consider orientations without new v-structures (the Markov equivalence class).
    max_undirected_edges : int, default=10
        Above this many undirected edges the exhaustive search (``2**R`` candidates) is
        replaced by a greedy search.
    random_state : int, RandomState instance or None, default=None
        Seeds the subsamples of the kernel bandwidths and the default estimator.
    n_jobs : int or None, default=None
        Jobs (joblib) for the regressions of the two directions / of the nodes. The workers'
        warnings are issued again in the caller, so any ``n_jobs`` shows the same warnings.
    verbose : int, default=0
        When positive, print one line per pair fit (both log-likelihoods, both HSIC values,
        the score and its p-value) and show every regressor warning.

    Attributes
    ----------
    direction_ : int
        Two variables only: +1 if column 0 causes column 1 (``score_ > 0``), -1 if column 1
        causes column 0 (``score_ < 0``); 0 (no decision, with a warning and an empty
        ``adjacency_matrix_``) when a variable is constant (``score_ = 0``), the score is
        exactly 0 or it is not finite. Swapping the columns flips it.
    score_ : float
        Two variables: the score ``S`` of ``criterion``. Its sign is the decision (positive:
        column 0 causes column 1) and its size how strongly the data prefer that direction,
        in the criterion's own units: for ``"ll"`` the log-likelihood ratio in nats (a score
        of 3 means the data are ``e³ ≈ 20`` times more likely under the chosen model), for
        ``"it"`` how much more dependent the reverse direction's residuals are on their cause
        than the chosen direction's (HSIC, unnormalised, growing with the sample size). It
        ranks pairs by confidence (the AUDRC); it is not a probability, see
        ``direction_pvalue_``. More variables: best minus runner-up total log-likelihood (0
        with a single candidate).
    direction_pvalue_ : float
        Two variables: p-value of ``criterion``'s decision against the null hypothesis that
        neither direction is preferred (small: the decision is unlikely to be a tie broken
        by noise). ``"ll"``: Vuong's test of the per-sample log-likelihood ratios;
        ``"it"``: the wild bootstrap on cross-fitted residuals (needs ``n_bootstrap > 0``),
        1 when the cross-fitted statistic points the other way; NaN otherwise (also for
        ``"ll-kde"`` and a constant variable).
    pvalues_ : dict of str to float
        Two variables: ``"ll"`` (Vuong) and, with ``n_bootstrap > 0``, ``"it"`` (the
        decision's p-value) and ``"it-preference"`` (the two-sided wild-bootstrap test that
        some direction is preferred, uniform when none is).
    independence_pvalues_ : dict of str to float
        Two variables, with ``independence_test="kci"``: KCI p-values of ``"forward"`` (column
        0 independent of the residual of the model 0 -> 1) and ``"backward"``; empty otherwise.
        Under a correct causal model the causal direction's p-value is large.
    scores_ : dict of str to float
        Two variables: ``"ll"``, ``"it"`` and, when computed, ``"ll-kde"``.
    loglik_forward_ : float
        Two variables: log-likelihood of column 1 given column 0 (standardised data).
    loglik_backward_ : float
        Two variables: log-likelihood of column 0 given column 1.
    hsic_forward_ : float
        Two variables: HSIC between column 0 and the residuals of the model 0 -> 1.
    hsic_backward_ : float
        Two variables: HSIC between column 1 and the residuals of the model 1 -> 0.
    estimators_ : dict
        Two variables: fitted regressors ``{"forward", "backward"}``; more: ``{j: regressor}``
        for every node with parents in the selected graph.
    adjacency_matrix_ : ndarray of shape (n_features_in_, n_features_in_), dtype=int
        Selected DAG, lingam convention: ``[i, j] = 1`` iff column ``j`` causes column ``i``.
    causal_order_ : ndarray of shape (n_features_in_,), dtype=int
        A topological order of the selected DAG.
    cpdag_ : ndarray of shape (n_features_in_, n_features_in_), dtype=int
        More than two variables: the CPDAG that was oriented (same convention, both entries 1
        for an undirected edge).
    graph_scores_ : ndarray of shape (n_candidates_,)
        More than two variables: total log-likelihood of every evaluated candidate DAG.
    n_candidates_ : int
        More than two variables: number of evaluated candidate DAGs.
    search_ : str
        More than two variables: ``"exhaustive"`` or ``"greedy"``.
    root_samples_ : dict of int to ndarray
        Standardised training values of each root of the selected graph (every variable when
        no direction was decided), the sample of the KDE root density of :meth:`score`;
        empty with ``root_density="gaussian"``.
    mean_ : ndarray of shape (n_features_in_,)
        Means removed by standardisation (zeros without it).
    scale_ : ndarray of shape (n_features_in_,)
        Standard deviations used by standardisation (ones without it).
    n_features_in_ : int
        Number of variables seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the variables seen during fit, when ``X`` has string column names.

    See Also
    --------
    SkewNormalLSNMRegressor : The location-scale model fitted in each direction.
    score_pairs : Score a whole benchmark of pairs in parallel.

    Notes
    -----
    :meth:`transform` returns the standardised exogenous noise of each variable under the
    selected graph (a root's standardised value, a child's standardised residual), useful to
    check the fitted model. :meth:`score` is the mean held-out log-density of the fitted
    model, so ``GridSearchCV`` and ``cross_val_score`` work without a ``scoring``; it
    measures fit, not the accuracy of the direction.

    Variables with many ties get a warning; with the default regressor a cause with fewer
    distinct values than its location spline has coefficients is fitted piecewise linear
    between its values (see :class:`SkewNormalLSNMRegressor`). A constant variable gets no
    edge, with one warning: for two variables no direction is decided (``direction_ = 0``);
    for more it is left out of the PC tests (its NaN correlations would decide edges) and of
    the likelihood totals (its degenerate density adds the same term to every candidate) and
    returned as an isolated node.

    The regressors' ``ConvergenceWarning`` (e.g. a shape on its bound, common in the
    anti-causal direction where the residuals look half-normal) reach the caller, prefixed
    with the model (``"SkewD (model 1 -> 0): ..."``); for more variables one warning per
    category counts the node fits that raised it. Only the regressors' warnings about
    constant or discrete features, which repeat the discoverer's own, are dropped (all are
    shown with ``verbose > 0``).

    References
    ----------
    .. [1] Klippert, D. and Marx, A. "Skewness-Robust Causal Discovery in Location-Scale Noise
       Models", ICML 2026, arXiv:2511.14441.
    .. [2] Immer, A. et al. "On the Identifiability and Estimation of Causal Location-Scale
       Noise Models", ICML 2023, arXiv:2210.09054.

    Examples
    --------
    The first Tübingen pair (altitude and mean annual temperature of 349 weather stations;
    the loader reads the data home and downloads the 99 pairs on first use):

    >>> from sklearn_icml26.causal_discovery import SkewDCausalDiscoverer
    >>> from sklearn_icml26.datasets import load_cause_effect_pairs
    >>> tuebingen = load_cause_effect_pairs("tuebingen")
    >>> X = tuebingen.pairs[0]
    >>> X.shape
    (349, 2)
    >>> disc = SkewDCausalDiscoverer(random_state=0).fit(X)
    >>> int(disc.direction_), int(tuebingen.direction[0])  # +1: column 0 causes column 1
    (1, 1)
    >>> disc.adjacency_matrix_.shape
    (2, 2)
    """

    _parameter_constraints = {
        "criterion": [StrOptions({"it", "ll", "ll-kde"})],
        "estimator": [HasMethods(["fit", "log_likelihood", "residuals"]), dict, None],
        "knots": [StrOptions({"uniform", "quantile"}), None],
        "standardize": ["boolean"],
        "kde_bandwidth": [StrOptions({"loo", "cv"}), Interval(Real, 0, None, closed="neither")],
        "all_scores": ["boolean"],
        "n_bootstrap": [Interval(Integral, 0, None, closed="left")],
        "independence_test": [StrOptions({"kci"}), None],
        "skeleton": [StrOptions({"pc", "complete"})],
        "ci_test": [StrOptions({"kci", "fisherz"})],
        "ci_alpha": [Interval(Real, 0, 1, closed="neither")],
        "root_density": [StrOptions({"kde", "gaussian"})],
        "restrict_to_mec": ["boolean"],
        "max_undirected_edges": [Interval(Integral, 0, 20, closed="both")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(self, criterion="it", *, estimator=None, knots=None, standardize=True,
                 kde_bandwidth="loo", all_scores=False, n_bootstrap=0,
                 independence_test=None, skeleton="pc", ci_test="kci", ci_alpha=0.05,
                 root_density="kde", restrict_to_mec=True, max_undirected_edges=10,
                 random_state=None, n_jobs=None, verbose=0):
        self.criterion = criterion
        self.estimator = estimator
        self.knots = knots
        self.n_bootstrap = n_bootstrap
        self.independence_test = independence_test
        self.standardize = standardize
        self.kde_bandwidth = kde_bandwidth
        self.all_scores = all_scores
        self.skeleton = skeleton
        self.ci_test = ci_test
        self.ci_alpha = ci_alpha
        self.root_density = root_density
        self.restrict_to_mec = restrict_to_mec
        self.max_undirected_edges = max_undirected_edges
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    @classmethod
    def _get_test_params(cls):
        # a dict, not an instance: tests/test_common.py compares get_params() of a clone by ==
        reg = dict(penalty_search="none", n_knots_loc=5, n_knots_scale=4, n_restarts=0,
                   max_iter=10, solver="ecm", random_state=0)
        return [dict(criterion="ll", skeleton="complete", max_undirected_edges=3,
                     root_density="gaussian", estimator=reg, random_state=0)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        return tags

    # ------------------------------------------------------------------------------------
    def _base_estimator(self, d, seed):
        if self.estimator is not None and not isinstance(self.estimator, dict):
            est = clone(self.estimator)
            if self.knots is not None and "knots" in est.get_params(deep=False):
                est.set_params(knots=self.knots)
            return est
        params = {"n_knots_loc": 12 if d == 2 else 8, "random_state": seed}
        if self.knots is not None:
            params["knots"] = self.knots
        params.update(self.estimator or {})
        return SkewNormalLSNMRegressor(**params)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, cpdag=None):
        """Decide the causal direction of a pair, or orient a CPDAG of more variables.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_variables)
            Observations, at least 5 samples and 2 variables (columns), converted to float64.
        y : None
            Ignored; present for API consistency.
        cpdag : array-like of shape (n_variables, n_variables) or None, default=None
            Oracle equivalence class to orient instead of the skeleton search, 0/1 in the
            lingam convention (``[i, j] = 1`` and ``[j, i] = 0`` for ``j -> i``; both 1 for an
            undirected edge). Ignored with a warning for two variables. Routed as fit metadata
            (``set_fit_request(cpdag=True)``).

        Returns
        -------
        self : SkewDCausalDiscoverer
            The fitted discoverer.

        Raises
        ------
        ValueError
            If ``X`` has NaN/inf or non-numeric columns (named in the message), fewer than 5
            samples or fewer than 2 columns, ``cpdag`` has the wrong shape, non-binary entries
            or a directed cycle, or every candidate graph gets a non-finite likelihood.
        ImportError
            If ``skeleton="pc"`` is needed and causal-learn is missing; the message names
            the extra to install (``pip install "sklearn_icml26[causal]"``) and
            ``skeleton="complete"``, which works without it.
        """
        _check_numeric(X, "X")
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=5,
                          ensure_min_features=2)
        n, d = X.shape
        seed = int(check_random_state(self.random_state).randint(2**31 - 1))
        if self.standardize:
            # moments on power-of-two pre-scaled data: no overflow of the squares near 1e300
            self.mean_, sd, _ = _robust_mean_std(X, axis=0)
            self.scale_ = np.where(sd > 0, sd, 1.0)
        else:
            self.mean_, self.scale_ = np.zeros(d), np.ones(d)
        Xs = _standardize(X, self.mean_, self.scale_)
        constant = np.ptp(X, axis=0) == 0
        if constant.any():
            what = ("no direction is decided (direction_=0, score_=0.0, empty "
                    "adjacency_matrix_)" if d == 2 else
                    "they are left out of the skeleton search and the scores and returned as "
                    "isolated nodes")
            warnings.warn(
                f"X has constant variable(s) {np.flatnonzero(constant).tolist()}: {what}.",
                UserWarning, stacklevel=_external_stacklevel())
        self._warn_ties(X, constant, self._base_estimator(d, seed))
        if d == 2:
            if cpdag is not None:
                warnings.warn("cpdag is ignored for two variables.", UserWarning,
                              stacklevel=_external_stacklevel())
            self._fit_pair(Xs, constant, seed)
        else:
            self._fit_graph(Xs, constant, seed, cpdag)
        roots = np.flatnonzero(self.adjacency_matrix_.sum(axis=1) == 0)
        self.root_samples_ = ({int(j): Xs[:, j].copy() for j in roots}
                              if self.root_density == "kde" else {})
        return self

    @staticmethod
    def _warn_ties(X, constant, base):
        n = X.shape[0]
        n_coef = None
        if isinstance(base, SkewNormalLSNMRegressor):  # its discrete rule (see its Notes)
            n_coef = base.n_knots_loc + base.degree - 1
        for j in range(X.shape[1]):
            if constant[j]:
                continue
            n_unique = np.unique(X[:, j]).size
            linear = n_coef is not None and n_unique < min(n, n_coef)
            if n_unique <= n // 2 or linear:
                how = (f"as a cause it gets a piecewise-linear location with a knot at each "
                       f"value (fewer values than the {n_coef} spline coefficients)"
                       if linear else "it is treated as continuous")
                warnings.warn(
                    f"Variable {j} has only {n_unique} distinct values among {n} samples (many "
                    f"ties, discrete?): {how}, and its scores are less reliable.",
                    UserWarning, stacklevel=_external_stacklevel())

    def _fit_pair(self, Xs, constant, seed):
        base = self._base_estimator(2, seed)
        x0, x1 = Xs[:, 0], Xs[:, 1]
        if constant.any():
            self.estimators_ = {}
            self.loglik_forward_ = self.loglik_backward_ = 0.0
            self.hsic_forward_ = self.hsic_backward_ = 0.0
            self.scores_ = {"ll": 0.0, "it": 0.0}
            if self.criterion == "ll-kde" or self.all_scores:
                self.scores_["ll-kde"] = 0.0
            self.score_, self.direction_ = 0.0, 0
            self.direction_pvalue_ = np.nan
            self.pvalues_ = {}
            self.independence_pvalues_ = {}
            self.adjacency_matrix_ = np.zeros((2, 2), dtype=int)
            self.causal_order_ = np.array([0, 1])
            return
        # each fit records its warnings; they are issued here, naming the direction
        (fwd, rec_f), (bwd, rec_b) = Parallel(n_jobs=self.n_jobs)(
            delayed(record_warnings)(_fit_regressor, base, Xs[:, [a]], Xs[:, b])
            for a, b in ((0, 1), (1, 0))
        )
        for context, records in (("model 0 -> 1", rec_f), ("model 1 -> 0", rec_b)):
            for category, message in self._kept(records):
                warnings.warn(f"SkewD ({context}): {message}", category,
                              stacklevel=_external_stacklevel())
        self.estimators_ = {"forward": fwd, "backward": bwd}
        self.loglik_forward_ = float(fwd.log_likelihood(Xs[:, [0]], x1))
        self.loglik_backward_ = float(bwd.log_likelihood(Xs[:, [1]], x0))
        s_ll = self.loglik_forward_ - self.loglik_backward_
        r_f, r_b = fwd.residuals(Xs[:, [0]], x1), bwd.residuals(Xs[:, [1]], x0)
        self.hsic_forward_ = _hsic(x0, r_f, seed)
        self.hsic_backward_ = _hsic(x1, r_b, seed)
        self.scores_ = {"ll": s_ll, "it": self.hsic_backward_ - self.hsic_forward_}
        if self.criterion == "ll-kde" or self.all_scores:
            kde0 = _kde_log_density(x0, self.kde_bandwidth, seed)
            kde1 = _kde_log_density(x1, self.kde_bandwidth, seed)
            self.scores_["ll-kde"] = s_ll + kde0 - kde1
        self.score_ = float(self.scores_[self.criterion])
        self._set_pvalues(x0, x1, r_f, r_b, fwd, bwd, Xs, seed)
        if self.verbose:  # one line per pair fit, through the package's progress helper
            p = self.direction_pvalue_
            bar = progress_bar(total=1, verbose=self.verbose, desc="SkewD pair", unit="pair",
                               mininterval=0, miniters=1, ncols=0)
            bar.set_postfix_str(
                f"n={Xs.shape[0]}: log-lik 0->1 {self.loglik_forward_:.1f}, 1->0 "
                f"{self.loglik_backward_:.1f}; HSIC 0->1 {self.hsic_forward_:.3g}, 1->0 "
                f"{self.hsic_backward_:.3g}; {self.criterion} score {self.score_:+.4g}"
                + ("" if np.isnan(p) else f", p={p:.3g}"), refresh=False)
            bar.update()
            bar.close()
        if not np.isfinite(self.score_):
            warnings.warn(
                f"SkewD: the {self.criterion!r} score is not finite ({self.score_}); no "
                "direction is decided (direction_=0, empty adjacency_matrix_). The data are "
                "probably too badly scaled: use standardize=True or rescale X.",
                UserWarning, stacklevel=_external_stacklevel())
            self.direction_ = 0
            self.adjacency_matrix_ = np.zeros((2, 2), dtype=int)
            self.causal_order_ = np.array([0, 1])
            return
        if self.score_ == 0.0:
            warnings.warn(
                f"SkewD: the {self.criterion!r} score is exactly 0 (both directions fit "
                "equally well); no direction is decided (direction_=0, empty "
                "adjacency_matrix_).", UserWarning, stacklevel=_external_stacklevel())
            self.direction_ = 0
            self.adjacency_matrix_ = np.zeros((2, 2), dtype=int)
            self.causal_order_ = np.array([0, 1])
            return
        self.direction_ = 1 if self.score_ > 0 else -1
        fwd_dir = self.direction_ == 1
        self.adjacency_matrix_ = np.array([[0, 0], [1, 0]] if fwd_dir else [[0, 1], [0, 0]])
        self.causal_order_ = np.array([0, 1] if fwd_dir else [1, 0])

    def _set_pvalues(self, x0, x1, r_f, r_b, fwd, bwd, Xs, seed):
        """P-values of the direction (Vuong for "ll", wild bootstrap for "it") and causal-learn
        KCI p-values of the residuals' independence."""
        d_ll = (fwd.log_likelihood_samples(Xs[:, [0]], x1)
                - bwd.log_likelihood_samples(Xs[:, [1]], x0))
        self.pvalues_ = {"ll": _vuong_pvalue(d_ll)}
        if self.n_bootstrap:
            p = self._it_pvalue(Xs, fwd, bwd, seed)
            self.pvalues_["it"], self.pvalues_["it-preference"] = p
        self.direction_pvalue_ = self.pvalues_.get(self.criterion, np.nan)
        self.independence_pvalues_ = {}
        if self.independence_test == "kci":
            self.independence_pvalues_ = {"forward": _kci_pvalue(x0, r_f, seed),
                                          "backward": _kci_pvalue(x1, r_b, seed)}

    def _it_pvalue(self, Xs, fwd, bwd, seed):
        """Wild-bootstrap p-value of the HSIC decision on cross-fitted residuals.

        In-sample residuals are biased towards independence by the fit itself, by an amount
        that depends on the direction (a skewed cause leaves few points in its tail for the
        spline to chase), which breaks a bootstrap of the in-sample score. Here each direction
        is refitted on two seeded halves of the rows at its selected penalties
        (``penalty_search="none"``) and every row gets the residual of the half-model that
        did not see it; the wild bootstrap then runs on these out-of-sample residuals (a
        seeded subsample of at most 1000 rows).
        """
        rng = np.random.RandomState(seed)
        n = Xs.shape[0]
        if n < 20:
            return np.nan, np.nan
        halves = np.array_split(rng.permutation(n), 2)
        resid = {}
        for key, est, a, b in (("f", fwd, 0, 1), ("b", bwd, 1, 0)):
            r = np.empty(n)
            for train, test in ((halves[0], halves[1]), (halves[1], halves[0])):
                half = clone(est)
                if hasattr(est, "alpha_") and "penalty_search" in est.get_params(deep=False):
                    half.set_params(penalty_search="none", alpha=est.alpha_,
                                    kappa=est.kappa_)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    half.fit(Xs[train][:, [a]], Xs[train, b])
                r[test] = half.residuals(Xs[test][:, [a]], Xs[test, b])
            resid[key] = r
        idx = np.sort(rng.choice(n, 1000, replace=False)) if n > 1000 else slice(None)
        sign = 1.0 if self.scores_["it"] >= 0 else -1.0
        p_decision, p_two_sided, _ = _wild_bootstrap_pvalue(
            (Xs[idx, 0], resid["f"][idx]), (Xs[idx, 1], resid["b"][idx]), sign,
            self.n_bootstrap, rng, seed)
        return p_decision, p_two_sided

    def _kept(self, records):
        """The recorded regressor warnings worth showing (not those the discoverer gave)."""
        records = [(w.category, str(w.message)) for w in records]
        if self.verbose:
            return records
        return [(c, m) for c, m in records
                if not (issubclass(c, UserWarning) and not issubclass(c, ConvergenceWarning)
                        and _DUPLICATE.search(m))]

    @staticmethod
    def _issue_node_warnings(caught, n_fits):
        """One warning per category for the node fits, counting them and naming the first."""
        by_category = {}
        for (j, parents), records in caught.items():
            for category, message in records:
                by_category.setdefault(category, []).append((j, parents, message))
        for category, items in by_category.items():
            j, parents, message = items[0]
            keys = {(jj, pp) for jj, pp, _ in items}
            given = f"given {list(parents)}" if parents else "as a root"
            warnings.warn(
                f"SkewD: {len(keys)} of {n_fits} node fits raised {category.__name__}; the "
                f"first (node {j} {given}): {message}", category, stacklevel=_external_stacklevel())

    # --- more than two variables ---------------------------------------------------------
    def _check_cpdag(self, cpdag, d):
        C = np.asarray(cpdag)
        if C.shape != (d, d):
            raise ValueError(f"cpdag must have shape ({d}, {d}) to match X; got {C.shape}.")
        if not np.all(np.isin(C, (0, 1))):
            raise ValueError(
                f"cpdag must hold only 0 and 1; got values {np.unique(C).tolist()}.")
        C = C.astype(int)
        if np.any(np.diag(C)):
            raise ValueError("cpdag must have a zero diagonal (no self-loops).")
        directed = C * (1 - C.T)
        if _topological_order(directed) is None:
            raise ValueError("cpdag has a directed cycle; expected a CPDAG (acyclic directed "
                             "part).")
        return C

    def _fit_graph(self, Xs, constant, seed, cpdag):
        d = Xs.shape[1]
        keep = np.flatnonzero(~constant)
        if cpdag is not None:
            C = self._check_cpdag(cpdag, d)
        elif self.skeleton == "pc":
            # constant columns give the tests NaN p-values: PC runs on the others only
            C = np.zeros((d, d), dtype=int)
            if keep.size >= 2:
                C[np.ix_(keep, keep)] = _pc_cpdag(Xs[:, keep], self.ci_test, self.ci_alpha)
        else:
            C = 1 - np.eye(d, dtype=int)
        C[constant, :] = 0
        C[:, constant] = 0
        self.cpdag_ = C
        directed = C * (1 - C.T)
        undirected = [(i, j) for i in range(d) for j in range(i + 1, d) if C[i, j] and C[j, i]]
        target_v = _v_structures(directed, C)
        base = self._base_estimator(d, seed)
        cache, caught = {}, {}

        def build(orient):
            B = directed.copy()
            for (i, j), s in zip(undirected, orient, strict=True):
                if s:
                    B[j, i] = 1  # i -> j
                else:
                    B[i, j] = 1  # j -> i
            return B

        def admissible(B):
            if _topological_order(B) is None:
                return False
            return not self.restrict_to_mec or _v_structures(B) <= target_v

        def ensure(keys):
            todo = [k for k in dict.fromkeys(keys) if k not in cache and not constant[k[0]]]
            fitted = Parallel(n_jobs=self.n_jobs)(
                delayed(record_warnings)(_node_score, base, Xs, j, P, self.root_density,
                                   self.kde_bandwidth, seed)
                for j, P in todo
            )
            for key, (value, records) in zip(todo, fitted, strict=True):
                cache[key] = value
                records = self._kept(records)
                if records:
                    caught[key] = records

        def keys_of(B):
            # a constant variable is an isolated root with a degenerate density: it adds the
            # same term to every candidate, so it is left out of the totals
            return [(j, tuple(np.flatnonzero(B[j]).tolist())) for j in keep]

        def total(B):
            return float(sum(cache[k][0] for k in keys_of(B)))

        # the node fits record their warnings (issued below, one per category)
        if len(undirected) <= self.max_undirected_edges:
            cands = [B for orient in itertools.product((1, 0), repeat=len(undirected))
                     if admissible(B := build(orient))]
            ensure([k for B in cands for k in keys_of(B)])
            scores = np.array([total(B) for B in cands])
            self.search_ = "exhaustive"
        else:
            order = _topological_order(directed)
            pos = {j: p for p, j in enumerate(order)}
            orient = [1 if pos[i] < pos[j] else 0 for i, j in undirected]
            current = build(orient)
            ensure(keys_of(current))
            cands, scores = [current], [total(current)]
            while True:
                trial = []
                for e in range(len(undirected)):
                    o = list(orient)
                    o[e] = 1 - o[e]
                    B = build(o)
                    if admissible(B):
                        trial.append((o, B))
                ensure([k for _, B in trial for k in keys_of(B)])
                if not trial:
                    break
                values = [total(B) for _, B in trial]
                cands += [B for _, B in trial]
                scores += values
                k = int(np.argmax(values))
                if values[k] <= total(current):
                    break
                orient, current = trial[k]
            scores = np.array(scores)
            self.search_ = "greedy"
        self._issue_node_warnings(caught, len(cache))
        finite = np.isfinite(scores)
        if not finite.any():
            raise ValueError(
                f"SkewD: all {len(cands)} candidate graphs got a non-finite total "
                "log-likelihood; no graph can be selected. The data are probably too badly "
                "scaled: use standardize=True or rescale X.")
        if not finite.all():
            warnings.warn(
                f"SkewD: {int((~finite).sum())} of {len(cands)} candidate graphs got a "
                "non-finite total log-likelihood; they are ranked last.", UserWarning,
                stacklevel=_external_stacklevel())
            scores = np.where(finite, scores, -np.inf)
        best = int(np.argmax(scores))
        B = cands[best]
        self.graph_scores_ = scores
        self.n_candidates_ = len(cands)
        others = np.delete(scores, best)
        self.score_ = float(scores[best] - others.max()) if others.size else 0.0
        self.adjacency_matrix_ = B.astype(int)
        self.causal_order_ = np.array(_topological_order(B))
        self.estimators_ = {j: cache[(j, P)][1] for j, P in keys_of(B) if P}

    # ------------------------------------------------------------------------------------
    def transform(self, X):
        """Standardised exogenous noise of every variable under the selected graph.

        A root gets its standardised value; a variable with parents gets the standardised
        residual ``(x_j - f(pa_j)) / g(pa_j)`` of its fitted location-scale model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_variables)
            Observations of the same variables as in ``fit``.

        Returns
        -------
        noise : ndarray of shape (n_samples, n_variables)
            Unitless noise estimates.
        """
        check_is_fitted(self)
        _check_numeric(X, "X")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Xs = _standardize(X, self.mean_, self.scale_)
        out = Xs.copy()
        B = self.adjacency_matrix_
        for j in range(self.n_features_in_):
            parents = np.flatnonzero(B[j])
            if parents.size == 0:
                continue
            out[:, j] = self._node_estimator(j).residuals(Xs[:, parents], Xs[:, j])
        return out

    def _node_estimator(self, j):
        if self.n_features_in_ == 2:
            return self.estimators_["forward" if j == 1 else "backward"]
        return self.estimators_[j]

    def score_samples(self, X):
        """Log-density of each row of ``X`` under the fitted causal model.

        The model is the selected graph (``adjacency_matrix_``): a variable with parents
        contributes its regressor's conditional log-density ``log p(x_j | pa_j)``, a root
        (every variable when no direction was decided) its ``root_density``: the standard
        normal, or a Gaussian KDE of its training values (``root_samples_``) whose bandwidth
        ``kde_bandwidth`` chooses on them. Computed on the standardised scale and moved to the
        units of ``X`` (``- Σ_j log scale_j``), so the values are log-densities of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_variables)
            Observations of the same variables as in ``fit``.

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
            Natural-log density of each row.
        """
        check_is_fitted(self)
        _check_numeric(X, "X")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Xs = _standardize(X, self.mean_, self.scale_)
        out = np.full(X.shape[0], -float(np.sum(np.log(self.scale_))))
        B = self.adjacency_matrix_
        for j in range(self.n_features_in_):
            parents = np.flatnonzero(B[j])
            if parents.size:
                out += self._node_estimator(j).log_likelihood_samples(Xs[:, parents],
                                                                      Xs[:, j])
            elif self.root_density == "gaussian":
                out += -0.5 * Xs[:, j] ** 2 - _HALF_LOG_2PI
            else:
                train = self.root_samples_[j]
                h = _kde_bandwidth(train, self.kde_bandwidth, 0)
                kde = KernelDensity(bandwidth=h).fit(train[:, None])
                out += kde.score_samples(Xs[:, [j]])
        return out

    def score(self, X, y=None):
        """Mean log-density per row of ``X`` under the fitted causal model (higher is better).

        The held-out likelihood of the selected graph and its fitted models
        (:meth:`score_samples`), as for scikit-learn's density estimators: ``GridSearchCV``
        and ``cross_val_score`` use it when no ``scoring`` is given, to compare settings such
        as the regressor's knots or penalties on held-out rows. It is not the accuracy of
        the direction: with pairs of known direction score a benchmark with
        :func:`score_pairs` and :func:`~sklearn_icml26.metrics.weighted_accuracy` or
        :func:`~sklearn_icml26.metrics.audrc`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_variables)
            Observations of the same variables as in ``fit``.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        score : float
            Mean of :meth:`score_samples` over the rows.
        """
        return float(np.mean(self.score_samples(X)))


# the regressors' warnings that repeat what the discoverer says about its variables (constant
# variables, ties): dropped unless verbose; everything else, ConvergenceWarning (a UserWarning
# subclass) first, reaches the caller
_DUPLICATE = re.compile(r"X has constant feature|X column .* has only \d+ distinct values")


def _fit_regressor(base, X, y):
    return clone(base).fit(X, y)


def _node_score(base, Xs, j, parents, root_density, kde_bandwidth, seed):
    """``s_j(P)``: the log-likelihood of ``X[:, j]`` given ``X[:, P]`` (or its marginal)."""
    x = Xs[:, j]
    if not parents:
        if root_density == "gaussian":
            return float(np.sum(-0.5 * x * x - _HALF_LOG_2PI)), None
        return _kde_log_density(x, kde_bandwidth, seed), None
    est = clone(base).fit(Xs[:, list(parents)], x)
    return est.log_likelihood(Xs[:, list(parents)], x), est


# --------------------------------------------------------------------------------------------
def _score_one(estimator, X):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        est = clone(estimator).fit(X)
        seconds = time.perf_counter() - start
    scores = getattr(est, "scores_", {})
    pvalues = getattr(est, "pvalues_", {})
    return (float(est.score_), int(est.direction_), float(scores.get("ll", np.nan)),
            float(scores.get("it", np.nan)), float(scores.get("ll-kde", np.nan)), seconds,
            len(caught), float(getattr(est, "direction_pvalue_", np.nan)),
            float(pvalues.get("it", np.nan)), float(pvalues.get("ll", np.nan)))


def score_pairs(pairs, *, estimator=None, n_jobs=None, verbose=0):
    """Score every cause-effect pair of a benchmark, in parallel over pairs.

    Parameters
    ----------
    pairs : list of array-like of shape (n_samples_i, 2) or Bunch
        The pairs, or a loader Bunch with a ``pairs`` list (from
        :func:`~sklearn_icml26.datasets.load_cause_effect_pairs` or
        :func:`~sklearn_icml26.datasets.make_lsnm_pairs`).
    estimator : SkewDCausalDiscoverer or None, default=None
        Cloned for every pair; None: ``SkewDCausalDiscoverer(all_scores=True)``.
    n_jobs : int or None, default=None
        Parallel jobs over pairs (joblib; a ``joblib.parallel_config(backend="dask")`` context
        spreads them over a cluster).
    verbose : int, default=0
        Progress bar over pairs when positive.

    Returns
    -------
    result : Bunch
        Arrays of shape (n_pairs,): ``score`` (the estimator's criterion), ``direction``
        (+1: first column causes the second), ``score_ll``, ``score_it``, ``score_ll_kde``
        (NaN when not computed), ``fit_time`` (seconds), ``n_warnings`` (warnings raised
        while fitting the pair, e.g. ties or convergence), ``pvalue`` (the estimator's
        ``direction_pvalue_``), ``pvalue_it`` and ``pvalue_ll`` (its ``pvalues_``; NaN when
        not computed).

    Raises
    ------
    ValueError
        If a pair does not have exactly two columns.

    References
    ----------
    .. [1] Klippert, D. and Marx, A. "Skewness-Robust Causal Discovery in Location-Scale Noise
       Models", ICML 2026, arXiv:2511.14441.

    Examples
    --------
    >>> from sklearn_icml26.causal_discovery import SkewDCausalDiscoverer, score_pairs
    >>> from sklearn_icml26.datasets import make_lsnm_pairs
    >>> from sklearn_icml26.metrics import weighted_accuracy
    >>> data = make_lsnm_pairs(4, 300, model="LS", noise="skew-normal", skewness="strong",
    ...                        random_state=0)
    >>> result = score_pairs(data, estimator=SkewDCausalDiscoverer(criterion="ll"))
    >>> result.score.shape
    (4,)
    >>> float(weighted_accuracy(data.direction, result.score))
    1.0
    """
    items = pairs.pairs if isinstance(pairs, Bunch) or hasattr(pairs, "pairs") else pairs
    arrays = []
    for k, P in enumerate(items):
        A = np.asarray(P, dtype=np.float64)
        if A.ndim != 2 or A.shape[1] != 2:
            raise ValueError(
                f"pairs[{k}] must have shape (n_samples, 2); got shape {A.shape}.")
        arrays.append(A)
    if estimator is None:
        estimator = SkewDCausalDiscoverer(all_scores=True)
    jobs = (delayed(_score_one)(estimator, A) for A in arrays)
    if verbose:
        out = list(progress_bar(Parallel(n_jobs=n_jobs, return_as="generator")(jobs),
                                verbose=verbose, total=len(arrays), desc="pairs",
                                unit="pair"))
    else:
        out = Parallel(n_jobs=n_jobs)(jobs)
    names = ["score", "direction", "score_ll", "score_it", "score_ll_kde", "fit_time",
             "n_warnings", "pvalue", "pvalue_it", "pvalue_ll"]
    cols = list(zip(*out, strict=True)) if out else [()] * len(names)
    result = Bunch(**{name: np.asarray(c, dtype=int if name in ("direction", "n_warnings")
                                       else float) for name, c in zip(names, cols,
                                                                       strict=True)})
    return result
