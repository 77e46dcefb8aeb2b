"""Inference pieces of the longitudinal adjuster: cluster-robust variances, the linear
projection of the conditional effect, and the statsmodels-style text summary.

The adjuster's estimates are means of influence values ``psi_i``. Without clusters the
standard error is ``sqrt(sum_i psi_i^2) / n``; with units grouped in ``G`` clusters it is
``sqrt(G / (G - 1) * sum_g (sum_{i in g} psi_i)^2) / n`` (the CR1 correction of statsmodels
and Stata for a mean). The conditional effect given baseline covariates is summarised by its
best linear projection, estimated by regressing the doubly robust scores on the covariates
(Semenova and Chernozhukov, arXiv:1702.06240), with a sandwich covariance (HC0, or CR1 with
clusters).
"""

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.utils.validation import check_is_fitted

from ._baselines import _independent_columns


def _encode_groups(groups, n):
    """Integer cluster codes ``0..G-1`` of ``groups`` (one label per unit) and ``G``."""
    g = np.asarray(groups)
    if g.ndim != 1 or g.shape[0] != n:
        raise ValueError(
            f"groups must have shape (n_samples,)=({n},) (one cluster label per unit); got "
            f"shape {g.shape}"
        )
    if g.dtype.kind == "f" and np.isnan(g).any():
        raise ValueError("groups must not contain NaN: every unit needs a cluster label")
    if g.dtype.kind == "O" and any(v is None for v in g):
        raise ValueError("groups must not contain None: every unit needs a cluster label")
    _, codes = np.unique(g.astype(str) if g.dtype.kind == "O" else g, return_inverse=True)
    n_groups = int(codes.max()) + 1 if n else 0
    if n_groups < 2:
        raise ValueError(
            f"groups must hold at least 2 distinct clusters for cluster-robust standard "
            f"errors; got {n_groups}"
        )
    return codes.astype(np.int64), n_groups


def _cluster_sums(values, clusters, n_clusters):
    """Sum of ``values`` (n, ...) over the units of each cluster: (n_clusters, ...)."""
    out = np.zeros((n_clusters,) + values.shape[1:])
    np.add.at(out, clusters, values)
    return out


def _weights_column(weights, ndim):
    """``weights`` (n,) shaped to broadcast against an (n, ...) array of ``ndim`` dimensions."""
    return weights.reshape((-1,) + (1,) * (ndim - 1))


def _mean_std_err(psi, clusters=None, n_clusters=None, weights=None):
    """Standard error of ``mean_i`` of quantities with centred influence values ``psi``.

    ``psi`` has shape (n, ...); without clusters ``sqrt(sum_i psi_i^2) / n``, with clusters
    the CR1 cluster-robust ``sqrt(G / (G - 1) * sum_g S_g^2) / n`` of the cluster sums
    ``S_g``. With frequency ``weights`` (the weighted mean ``sum_i w_i phi_i / sum_i w_i``):
    ``sqrt(sum_i w_i psi_i^2) / sum_i w_i``, and cluster sums of ``w_i psi_i``, the values of
    the units repeated by their integer weights.
    """
    if weights is None:
        n = psi.shape[0]
        if clusters is None:
            return np.sqrt((psi**2).sum(axis=0)) / n
        sums = _cluster_sums(psi, clusters, n_clusters)
        return np.sqrt(n_clusters / (n_clusters - 1) * (sums**2).sum(axis=0)) / n
    w = _weights_column(weights, psi.ndim)
    total = weights.sum()
    if clusters is None:
        return np.sqrt((w * psi**2).sum(axis=0)) / total
    sums = _cluster_sums(w * psi, clusters, n_clusters)
    return np.sqrt(n_clusters / (n_clusters - 1) * (sums**2).sum(axis=0)) / total


def _effect_projection(H0, scores, clusters=None, n_clusters=None, weights=None):
    """Best linear projection of the conditional effect on ``[1, H0]`` and its covariance.

    ``scores`` (n, T) are the doubly robust effect scores ``phi^1_i(t) - phi^0_i(t)``, whose
    mean given ``H0`` is the conditional effect under the design's randomisation. Returns
    ``coef`` (T, 1 + p) (aliased columns, dropped in column order as R's ``lm`` does, get 0)
    and ``cov`` (T, 1 + p, 1 + p): HC0 sandwich, or CR1 cluster-robust with clusters
    (``G/(G-1) (N-1)/(N-K)``, statsmodels' ``cov_type="cluster"``). With frequency
    ``weights``: weighted least squares, the sandwich of the units repeated by their integer
    weights (``N = sum(w)``); units of weight 0 drop out.
    """
    n, p = H0.shape
    Z = np.column_stack([np.ones(n), H0])
    inv_root = None
    if weights is not None:  # WLS as OLS of the rows scaled by sqrt(w)
        root = np.sqrt(weights)
        Z, scores = Z * root[:, None], scores * root[:, None]
        n = float(weights.sum())
        inv_root = np.where(root > 0, 1.0 / np.where(root > 0, root, 1.0), 0.0)
    keep = _independent_columns(Z)
    Zk = Z[:, keep]
    q, r = np.linalg.qr(Zk)
    rows = np.linalg.solve(r, q.T)  # (Z'Z)^-1 Z' of the kept design, (k, n)
    coef_k = rows @ scores  # (k, T)
    resid = scores - Zk @ coef_k  # (n, T)
    k = Zk.shape[1]
    T = scores.shape[1]
    coef = np.zeros((T, p + 1))
    cov = np.zeros((T, p + 1, p + 1))
    coef[:, keep] = coef_k.T
    idx = np.ix_(keep, keep)
    for t in range(T):
        # (k, n): contributions row_i e_i; scaled rows give w_i a_i e_i, the sum over the
        # copies of a unit of weight w_i (cluster sums), whose HC0 square is w_i (a_i e_i)^2
        u = rows * resid[:, t][None, :]
        if clusters is None:
            if inv_root is not None:
                u = u * inv_root[None, :]
            meat = u @ u.T
        else:
            sums = _cluster_sums(u.T, clusters, n_clusters)  # (G, k)
            factor = n_clusters / (n_clusters - 1) * (n - 1) / max(n - k, 1)
            meat = factor * sums.T @ sums
        block = cov[t]
        block[idx] = meat
    return coef, cov


def _text_summary(title, info, table, anchors, notes):
    """A statsmodels-style text table (``statsmodels.iolib.summary2.Summary``)."""
    from statsmodels.iolib.summary2 import Summary

    out = Summary()
    out.add_title(title)
    out.add_dict(info, ncols=2)
    out.add_df(table, float_format="%.4f")
    if anchors is not None:
        out.add_df(anchors, float_format="%.4f")
    for note in notes:
        out.add_text(note)
    return out.as_text()


def _format_regime(codes):
    codes = [int(c) for c in codes]
    if len(set(codes)) == 1:
        return f"always {codes[0]}"
    return "".join(map(str, codes)) if max(codes) < 10 else " ".join(map(str, codes))


def _coefficient_frame(est, se, ci, band, alpha, z):
    low, high = f"[{alpha / 2:g}", f"{1 - alpha / 2:g}]"
    from scipy import stats

    return pd.DataFrame({
        "coef": est, "std err": se, "z": z, "P>|z|": 2 * stats.norm.sf(np.abs(z)),
        low: ci[:, 0], high: ci[:, 1], "band low": band[:, 0], "band high": band[:, 1],
    })


class _AdjusterInferenceMixin:
    """Confidence intervals, uniform bands and summary tables of the longitudinal adjuster.

    Reads the fitted influence values (``influence_``), the estimates (``effect_``,
    ``means_``) and the clustering of :class:`LongitudinalRegressionAdjuster`.
    """

    def _influence(self, target):
        if target == "effect":
            if self.single_arm_:
                raise ValueError(
                    "conf_int(target='effect') needs a fit with treatment; this fit was "
                    "single-arm: use target='means'"
                )
            return self.effect_[None], (self.influence_[:, 0] - self.influence_[:, 1])[:, None]
        return self.means_, self.influence_

    def conf_int(self, alpha=0.05, kind="pointwise", method=None, target="effect"):
        """Confidence intervals per period (pointwise) or a uniform band over periods.

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the confidence level, in (0, 1).
        kind : {"pointwise", "uniform"}, default="pointwise"
            Intervals valid period by period, or a sup-t band covering all periods jointly.
        method : {"wald", "bootstrap"} or None, default=None
            ``None`` is "wald" for pointwise and "bootstrap" for uniform intervals (the
            uniform band needs the multiplier bootstrap). Bootstrap draws are seeded from
            ``random_state``; after a fit with ``groups`` the standard errors are
            cluster-robust and the bootstrap draws one multiplier per cluster.
        target : {"effect", "means"}, default="effect"
            The effect curve or the mean of each regime.

        Returns
        -------
        intervals : ndarray of shape (n_periods, 2) or (n_regimes, n_periods, 2)
            Lower and upper bounds; ``(n_periods, 2)`` for the effect.

        Raises
        ------
        ValueError
            For an unknown ``kind``, ``method`` or ``target``, ``alpha`` outside (0, 1), a
            uniform Wald band, or ``target="effect"`` after a single-arm fit.
        """
        check_is_fitted(self)
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1); got {alpha}")
        if kind not in ("pointwise", "uniform"):
            raise ValueError(f"kind must be 'pointwise' or 'uniform'; got {kind!r}")
        if target not in ("effect", "means"):
            raise ValueError(f"target must be 'effect' or 'means'; got {target!r}")
        if method is None:
            method = "wald" if kind == "pointwise" else "bootstrap"
        if method not in ("wald", "bootstrap"):
            raise ValueError(f"method must be 'wald', 'bootstrap' or None; got {method!r}")
        if kind == "uniform" and method == "wald":
            raise ValueError("a uniform band needs method='bootstrap' (or None); got 'wald'")
        est, psi = self._influence(target)  # (R, T), (n, R, T)
        se = self._std_err(psi)
        out = np.empty(est.shape + (2,))
        if method == "wald":
            z = stats.norm.ppf(1 - alpha / 2)
            out[..., 0], out[..., 1] = est - z * se, est + z * se
        else:
            draws = self._bootstrap_draws(psi)  # (B, R, T)
            if kind == "pointwise":
                out[..., 0] = est - np.quantile(draws, 1 - alpha / 2, axis=0)
                out[..., 1] = est - np.quantile(draws, alpha / 2, axis=0)
            else:
                crit = self._critical_values(draws, se, alpha)
                out[..., 0] = est - crit[:, None] * se
                out[..., 1] = est + crit[:, None] * se
        return out[0] if target == "effect" else out

    def _std_err(self, psi):
        return _mean_std_err(psi, self.group_codes_, self.n_groups_, self.sample_weight_)

    def _bootstrap_draws(self, psi):
        """Multiplier-bootstrap draws of the centred estimates: one N(0, 1) multiplier per
        unit, or per cluster (scaled by ``sqrt(G / (G - 1))``, as the CR1 standard error)."""
        rng = np.random.default_rng(self.bootstrap_seed_)
        n = psi.shape[0]
        clusters, w = self.group_codes_, self.sample_weight_
        total = n if w is None else w.sum()
        if clusters is None:
            xi = rng.standard_normal((self.n_bootstrap, n))
            if w is not None:  # a unit of weight w: the sum of w independent multipliers
                xi = xi * np.sqrt(w)[None, :]
            return np.einsum("bn,nrt->brt", xi, psi) / total
        G = self.n_groups_
        sums = _cluster_sums(psi if w is None else w[:, None, None] * psi, clusters, G)
        xi = rng.standard_normal((self.n_bootstrap, G))
        return np.einsum("bg,grt->brt", xi, sums) * np.sqrt(G / (G - 1)) / total

    @staticmethod
    def _critical_values(draws, se, alpha):
        scaled = np.abs(draws) / np.where(se > 0, se, np.inf)[None]
        return np.quantile(scaled.max(axis=2), 1 - alpha, axis=0)

    def band_critical_value(self, alpha=0.05, target="effect"):
        """Critical value ``c`` of the sup-t uniform band ``estimate ± c · se``.

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the joint confidence level, in (0, 1).
        target : {"effect", "means"}, default="effect"
            The effect curve or each regime's means.

        Returns
        -------
        c : float or ndarray of shape (n_regimes,)
            The ``1 - alpha`` quantile of ``max_t |T*_t| / se_t`` over multiplier-bootstrap
            draws; a float for the effect.
        """
        check_is_fitted(self)
        est, psi = self._influence(target)
        se = self._std_err(psi)
        crit = self._critical_values(self._bootstrap_draws(psi), se, alpha)
        return float(crit[0]) if target == "effect" else crit

    def summary(self, alpha=0.05, as_text=False):
        """Table of the per-period estimates beside the difference in means, CUPED and Lin.

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the confidence level of the intervals and of the uniform band.
        as_text : bool, default=False
            Return a statsmodels-style text table (built with
            ``statsmodels.iolib.summary2.Summary``: a header with the design, the standard
            error type and the band's critical value, the coefficient table per period, and
            the anchors) instead of the DataFrame.

        Returns
        -------
        table : pandas.DataFrame or str
            One row per period: ``estimate``, ``std_err``, ``z``, ``p_value``, ``ci_lower``,
            ``ci_upper`` (Wald), ``band_lower``, ``band_upper`` (sup-t band), ``n_on_path_1``,
            ``n_on_path_0``, ``dim``, ``dim_se``, ``cuped``, ``cuped_se``, ``lin``, ``lin_se``
            and ``se_ratio_lin`` (our standard error over Lin's). Single-arm fits give the
            mean of the observed regime with its Wald interval and band instead. With
            ``as_text=True``, the same numbers as a text table.
        """
        check_is_fitted(self)
        if as_text:
            return self._summary_text(alpha)
        if self.single_arm_:
            ci = self.conf_int(alpha, target="means")[0]
            band = self.conf_int(alpha, kind="uniform", target="means")[0]
            table = pd.DataFrame({"period": np.arange(self.n_periods_),
                                  "estimate": self.means_[0], "std_err": self.means_se_[0],
                                  "ci_lower": ci[:, 0], "ci_upper": ci[:, 1],
                                  "band_lower": band[:, 0], "band_upper": band[:, 1],
                                  "n_on_path": self.n_on_path_[0]})
            return table.set_index("period")
        est, se = self.effect_, self.effect_se_
        z = est / np.where(se > 0, se, np.nan)
        ci = self.conf_int(alpha)
        band = self.conf_int(alpha, kind="uniform")
        base = self.baselines_
        table = pd.DataFrame({
            "period": np.arange(self.n_periods_), "estimate": est, "std_err": se, "z": z,
            "p_value": 2 * stats.norm.sf(np.abs(z)), "ci_lower": ci[:, 0], "ci_upper": ci[:, 1],
            "band_lower": band[:, 0], "band_upper": band[:, 1],
            "n_on_path_1": self.n_on_path_[0], "n_on_path_0": self.n_on_path_[1],
        })
        for col in ("dim", "dim_se", "cuped", "cuped_se", "lin", "lin_se"):
            table[col] = base[col].to_numpy()
        table["se_ratio_lin"] = se / base["lin_se"].to_numpy()
        return table.set_index("period")

    def _summary_text(self, alpha):
        table = self.summary(alpha)
        T = self.n_periods_
        effect = not self.single_arm_
        se = table["std_err"].to_numpy()
        est = table["estimate"].to_numpy()
        z = est / np.where(se > 0, se, np.nan)
        ci = table[["ci_lower", "ci_upper"]].to_numpy()
        band = table[["band_lower", "band_upper"]].to_numpy()
        coef = _coefficient_frame(est, se, ci, band, alpha, z)
        coef.index = [f"t={t}" for t in range(T)]
        crit = self.band_critical_value(alpha, target="effect" if effect else "means")
        crit = float(np.ravel(crit)[0])
        se_kind = ("influence function" if self.n_groups_ is None
                   else f"cluster-robust, {self.n_groups_} clusters")
        outcome = ("LinearRegression" if self.outcome_model is None else
                   "ARD Gaussian process" if isinstance(self.outcome_model, str) else
                   type(self.outcome_model).__name__)
        info = {
            "Estimand:": "effect per period" if effect else "mean per period (single arm)",
            "No. units:": str(len(self.folds_)),
            "Regimes:": ("observed" if not effect else
                         f"{_format_regime(self.regimes_[0])} vs "
                         f"{_format_regime(self.regimes_[1])}"),
            "No. periods:": str(T),
            "Q method:": self.q_method,
            "Cross-fitting folds:": str(len(self.outcome_models_[0][0])),
            "Outcome model:": outcome,
            "Std. errors:": se_kind,
            "History window:": "full" if self.history_window is None else
                               str(self.history_window),
            f"Band c ({1 - alpha:g}):": f"{crit:.3f}",
        }
        anchors = None
        if effect:
            anchors = table[["n_on_path_1", "n_on_path_0", "dim", "dim_se", "lin", "lin_se",
                             "se_ratio_lin"]].copy()
            anchors.columns = ["n on path 1", "n on path 0", "DiM", "DiM se", "Lin",
                               "Lin se", "se / Lin se"]
            anchors.index = coef.index
            for col in ("n on path 1", "n on path 0"):
                anchors[col] = anchors[col].astype(int).astype(str)
        notes = [
            f"Band: sup-t band over all periods jointly, estimate +/- c * std err "
            f"(multiplier bootstrap, {self.n_bootstrap} draws).",
        ]
        if effect:
            notes.append("Anchors per period on units following either regime: difference "
                         "in means (DiM) and Lin's interacted regression on the baseline "
                         "covariates (" + ("HC2" if self.n_groups_ is None else "CR1")
                         + " standard errors).")
        title = ("Longitudinal regression adjustment (DynamicRA): "
                 + ("effect" if effect else "regime mean") + " per period")
        return _text_summary(title, info, coef, anchors, notes)
