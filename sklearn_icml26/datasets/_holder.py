"""Regression problems with a known Hölder exponent (HolderTransformerRegressor, ICML 2026).

He, Jiao, Lu, Yang, "Approximation Error Upper and Lower Bounds for Hölder Class with
Transformers", ICML 2026, arXiv:2605.07463, bound the depth a transformer needs on the Hölder
class H^alpha. ``make_holder_regression`` draws functions of that class whose exponent is known
exactly, so that measured approximation and learning rates can be set beside the theory.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from .._compat import Interval, StrOptions, validate_params

__all__ = ["make_holder_regression"]

_KINDS = ("weierstrass", "radial", "wavelet")

# splitmix64 constants: a cheap, well-mixed integer hash gives the wavelet's coefficients
# c_{jk} = +-1 on the fly, so 2**(j d0) cells per level need no storage
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _splitmix(z):
    z = z + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def _check_points(x, n_features):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1 and n_features == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[1] != n_features:
        raise ValueError(f"x must have shape (m, {n_features}); got shape {x.shape}.")
    return x


class _Weierstrass:
    """f(x) = mean_j W(x_j + phi_j), W(t) = sum_k 2^(-k a) cos(2^k pi t) / sum_k 2^(-k a)."""

    def __init__(self, alpha, n_terms, phases):
        self.alpha = float(alpha)
        self.n_terms = int(n_terms)
        self.phases = np.asarray(phases, dtype=np.float64)
        k = np.arange(self.n_terms, dtype=np.float64)
        self._amp = 2.0 ** (-k * self.alpha)
        self._amp /= self._amp.sum()
        self._freq = np.pi * 2.0**k

    def __call__(self, x):
        x = _check_points(x, len(self.phases))
        t = x + self.phases  # (m, d0), float64 throughout (the argument of cos reaches ~5e7)
        out = np.zeros(len(x))
        for amp, freq in zip(self._amp, self._freq, strict=True):
            out += amp * np.cos(freq * t).sum(axis=1)
        return out / x.shape[1]


class _Radial:
    """f(x) = sum_m w_m ||x - c_m||_2^alpha with sum_m |w_m| = 1."""

    def __init__(self, alpha, centers, weights):
        self.alpha = float(alpha)
        self.centers = np.asarray(centers, dtype=np.float64)
        self.weights = np.asarray(weights, dtype=np.float64)

    def __call__(self, x):
        x = _check_points(x, self.centers.shape[1])
        out = np.zeros(len(x))
        for c, w in zip(self.centers, self.weights, strict=True):
            out += w * np.linalg.norm(x - c, axis=1) ** self.alpha
        return out


class _Wavelet:
    """Random Faber-Schauder sum: sum_j 2^(-j a) sum_k c_jk prod_i hat(2^j x_i - k_i) / S.

    ``hat(u) = max(0, 1 - |2u - 1|)`` is the Schauder hat of the unit cell; ``c_jk = +-1``
    i.i.d. (from a hash of the seed, the level and the cell); ``S = sum_j 2^(-j a)`` so that
    ``|f| <= 1``. Levels j = 0 .. n_terms - 1; the function is 1-periodic in every coordinate.
    """

    def __init__(self, alpha, n_terms, n_features, seed):
        self.alpha = float(alpha)
        self.n_terms = int(n_terms)
        self.n_features = int(n_features)
        self.seed = np.uint64(seed)
        amp = 2.0 ** (-np.arange(self.n_terms) * self.alpha)
        self._amp = amp / amp.sum()

    def __call__(self, x):
        x = _check_points(x, self.n_features)
        out = np.zeros(len(x))
        for j, amp in enumerate(self._amp):
            u = x * 2.0**j
            cell = np.floor(u)
            frac = u - cell
            bump = np.prod(np.maximum(0.0, 1.0 - np.abs(2.0 * frac - 1.0)), axis=1)
            index = np.mod(cell, 2.0**j).astype(np.uint64)  # periodic in each coordinate
            h = _splitmix(np.full(len(x), self.seed ^ np.uint64(j * 0x632BE5AB)))
            for i in range(self.n_features):
                h = _splitmix(h ^ index[:, i])
            sign = np.where((h >> np.uint64(63)) == 1, 1.0, -1.0)
            out += amp * sign * bump
        return out


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "alpha": [Real],
        "kind": [StrOptions(set(_KINDS))],
        "noise": [Interval(Real, 0, None, closed="left")],
        "n_terms": [Interval(Integral, 1, 60, closed="both")],
        "n_centers": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "return_function": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def make_holder_regression(n_samples=1000, n_features=1, alpha=0.5, *, kind="weierstrass",
                           noise=0.0, n_terms=24, n_centers=8, random_state=None,
                           return_function=False):
    """Regression data ``y = f(X) + noise * N(0, 1)`` with ``f`` of Hölder exponent ``alpha``.

    ``X`` is uniform on the unit cube ``[0, 1]^d0`` (``d0 = n_features``). Three kinds of
    ``f``, each bounded by 1 in absolute value:

    * ``"weierstrass"``: ``f(x) = (1/d0) sum_j W(x_j + phi_j)`` with the normalised Weierstrass
      function ``W(t) = sum_{k<n_terms} 2^(-k alpha) cos(2^k pi t) / sum_k 2^(-k alpha)`` and
      phases ``phi_j ~ U(0, 1)``. For ``alpha < 1`` it is alpha-Hölder and no smoother at any
      point (Hardy, 1916), down to the scale ``2^(-n_terms)``. It is a sum of univariate
      functions, so it is rough in every direction but not a genuinely ``d0``-variate
      function.
    * ``"radial"``: ``f(x) = sum_{m<n_centers} w_m ||x - c_m||_2^alpha`` with centres
      ``c_m ~ U[0, 1]^d0`` and Gaussian weights rescaled to ``sum_m |w_m| = 1``. It is
      alpha-Hölder with constant at most 1 (since ``|a^alpha - b^alpha| <= |a - b|^alpha``),
      with the exact exponent only at the centres; ``alpha = 1`` is allowed.
    * ``"wavelet"``: a random dyadic Faber-Schauder sum
      ``sum_{j<n_terms} 2^(-j alpha) sum_k c_jk psi(2^j x - k) / sum_j 2^(-j alpha)`` with the
      tensor-product hat ``psi(u) = prod_i max(0, 1 - |2 u_i - 1|)`` on the dyadic cells of
      level ``j`` and i.i.d. signs ``c_jk = +-1``. Every level is as rough as the next, so the
      exponent is ``alpha`` in every direction and the function depends on all ``d0``
      coordinates jointly: the stress test of the ``d0``-dependence of the rates.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows of ``X``.
    n_features : int, default=1
        Input dimension ``d0``.
    alpha : float, default=0.5
        Hölder exponent in (0, 1]; ``"weierstrass"`` and ``"wavelet"`` need ``alpha < 1``
        (at ``alpha = 1`` their modulus of continuity has an extra ``log(1/h)`` factor).
    kind : {"weierstrass", "radial", "wavelet"}, default="weierstrass"
        Which function (see above).
    noise : float, default=0.0
        Standard deviation of the Gaussian noise added to ``f(X)``.
    n_terms : int, default=24
        Number of frequencies (``"weierstrass"``) or dyadic levels (``"wavelet"``); the exponent
        holds down to the scale ``2^(-n_terms)``. At most 60.
    n_centers : int, default=8
        Number of centres of ``"radial"``.
    random_state : int, RandomState instance or None, default=None
        Seeds the function (phases, centres, weights, signs), ``X`` and the noise.
    return_function : bool, default=False
        Also return ``f``, a vectorised callable from an array of shape (m, d0) to (m,)
        float64 (it accepts points outside the unit cube).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), dtype float64
        Inputs, uniform on ``[0, 1]^n_features``.
    y : ndarray of shape (n_samples,), dtype float64
        Targets ``f(X) + noise * N(0, 1)``, computed in float64.
    f : callable
        The noise-free function; only when ``return_function=True``.

    Raises
    ------
    ValueError
        If ``alpha`` is outside (0, 1], or ``alpha = 1`` with ``kind="weierstrass"`` or
        ``kind="wavelet"``.

    References
    ----------
    .. [1] He, Jiao, Lu, Yang. "Approximation Error Upper and Lower Bounds for Hölder Class with
       Transformers", ICML 2026, arXiv:2605.07463.
    .. [2] Hardy, G. H. "Weierstrass's non-differentiable function", Transactions of the AMS 17
       (1916), 301-325.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_icml26.datasets import make_holder_regression
    >>> X, y, f = make_holder_regression(200, 2, alpha=0.5, kind="wavelet", random_state=0,
    ...                                  return_function=True)
    >>> X.shape, y.shape, bool(np.abs(y).max() <= 1), bool(np.allclose(f(X), y))
    ((200, 2), (200,), True, True)
    """
    alpha = float(alpha)
    if not 0 < alpha <= 1:
        raise ValueError(f"alpha must be in (0, 1]; got {alpha}.")
    if alpha == 1 and kind in ("weierstrass", "wavelet"):
        raise ValueError(f"kind={kind!r} has exact exponent alpha only for alpha < 1; use "
                         "kind='radial'.")
    rng = check_random_state(random_state)
    d0 = int(n_features)
    if kind == "weierstrass":
        f = _Weierstrass(alpha, n_terms, rng.uniform(0.0, 1.0, size=d0))
    elif kind == "radial":
        centers = rng.uniform(0.0, 1.0, size=(n_centers, d0))
        weights = rng.normal(size=n_centers)
        f = _Radial(alpha, centers, weights / np.abs(weights).sum())
    else:
        f = _Wavelet(alpha, n_terms, d0, rng.randint(0, 2**31 - 1))
    X = rng.uniform(0.0, 1.0, size=(n_samples, d0))
    y = f(X)
    if noise > 0:
        y = y + noise * rng.normal(size=n_samples)
    return (X, y, f) if return_function else (X, y)
