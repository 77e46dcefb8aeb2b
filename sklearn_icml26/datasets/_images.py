"""Small image problems whose labels depend on local spatial structure (VIOLIN, ICML 2026).

Candogan et al., "Spatial Priors via Space Filling Curves for Small and Limited Data Vision
Transformers", ICML 2026, arXiv:2606.14757, give attention a prior for nearby patches. These
generators make pixel-level problems where that prior should matter: oriented bars, local
corner patterns at random positions, and handwritten digits placed at random on a larger noisy
canvas (one token per pixel gives 256 or 576 tokens, as in the paper's pixel-level setting).
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from .._compat import Interval, validate_params

__all__ = ["make_bar_images", "make_digits_on_canvas", "make_local_pattern_images"]

# (row, col) offsets of each class's pattern
_BARS = {
    "horizontal": [(0, 0), (0, 1), (0, 2)],
    "vertical": [(0, 0), (1, 0), (2, 0)],
    "diagonal": [(0, 0), (1, 1), (2, 2)],
    "anti_diagonal": [(0, 2), (1, 1), (2, 0)],
}
# corners: two arms of 3 pixels sharing the corner pixel (5 pixels each)
_CORNERS = {
    "corner_top_left": [(0, 0), (0, 1), (0, 2), (1, 0), (2, 0)],
    "corner_top_right": [(0, 0), (0, 1), (0, 2), (1, 2), (2, 2)],
    "corner_bottom_left": [(0, 0), (1, 0), (2, 0), (2, 1), (2, 2)],
    "corner_bottom_right": [(0, 2), (1, 2), (2, 0), (2, 1), (2, 2)],
}


def _check_image_shape(image_shape, min_side, name="image_shape"):
    try:
        h, w = (int(v) for v in image_shape)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a pair (h, w); got {image_shape!r}.") from exc
    if h < min_side or w < min_side:
        raise ValueError(f"{name} must be at least ({min_side}, {min_side}); got "
                         f"{image_shape!r}.")
    return h, w


def _draw_patterns(patterns, n_samples, h, w, noise, rng):
    n_classes = len(patterns)
    y = rng.integers(0, n_classes, size=n_samples)
    X = noise * rng.standard_normal((n_samples, h, w))
    rows = rng.integers(0, h - 2, size=n_samples)
    cols = rng.integers(0, w - 2, size=n_samples)
    for k, offsets in enumerate(patterns):
        idx = np.flatnonzero(y == k)
        for dr, dc in offsets:
            X[idx, rows[idx] + dr, cols[idx] + dc] += 1.0
    return X.reshape(n_samples, h * w), y


@validate_params(
    {"n_samples": [Interval(Integral, 1, None, closed="left")],
     "image_shape": ["array-like"],
     "noise": [Interval(Real, 0, None, closed="left")],
     "random_state": ["random_state"]},
    prefer_skip_nested_validation=True,
)
def make_bar_images(n_samples=400, image_shape=(8, 8), noise=0.3, random_state=None):
    """Noisy images of one short bar whose orientation is the label.

    Each image holds a bar of 3 pixels of value 1 at a uniformly random position (fully
    inside the image), plus ``N(0, noise^2)`` noise on every pixel. The label depends on
    local structure only.

    Parameters
    ----------
    n_samples : int, default=400
        Number of images.
    image_shape : tuple of int, default=(8, 8)
        ``(h, w)``, each >= 3.
    noise : float, default=0.3
        Standard deviation of the pixel noise (>= 0).
    random_state : int, RandomState instance or None, default=None
        Seeds labels, positions and noise.

    Returns
    -------
    X : ndarray of shape (n_samples, h * w)
        C-order flattened images, float64.
    y : ndarray of shape (n_samples,)
        0 horizontal, 1 vertical, 2 diagonal, 3 anti-diagonal.

    Raises
    ------
    ValueError
        If ``image_shape`` is smaller than 3 x 3.

    References
    ----------
    .. [1] Candogan et al. "Spatial Priors via Space Filling Curves for Small and Limited Data
       Vision Transformers", ICML 2026, arXiv:2606.14757.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_bar_images
    >>> X, y = make_bar_images(10, random_state=0)
    >>> X.shape, sorted(set(y.tolist())) <= [0, 1, 2, 3]
    ((10, 64), True)
    """
    h, w = _check_image_shape(image_shape, 3)
    rng = np.random.default_rng(check_random_state(random_state).randint(2**31 - 1))
    return _draw_patterns(list(_BARS.values()), n_samples, h, w, float(noise), rng)


@validate_params(
    {"n_samples": [Interval(Integral, 1, None, closed="left")],
     "image_shape": ["array-like"],
     "noise": [Interval(Real, 0, None, closed="left")],
     "random_state": ["random_state"]},
    prefer_skip_nested_validation=True,
)
def make_local_pattern_images(n_samples=1000, image_shape=(16, 16), noise=0.3,
                              random_state=None):
    """Noisy canvases holding one local corner pattern; its orientation is the label.

    Each image holds one corner (two arms of 3 pixels sharing the corner pixel: 5 pixels of
    value 1 in a 3 x 3 window) at a uniformly random position, plus ``N(0, noise^2)`` noise on
    every pixel. The four classes have the same number of bright pixels and the same
    distribution of positions, so neither total intensity nor where the pattern sits carries
    the label: only the arrangement of neighbouring pixels does. The label is still a function
    of the image after any fixed permutation of the pixels, so a shuffled-pixel control keeps
    the task solvable while removing the spatial layout.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of images.
    image_shape : tuple of int, default=(16, 16)
        ``(h, w)``, each >= 3.
    noise : float, default=0.3
        Standard deviation of the pixel noise (>= 0).
    random_state : int, RandomState instance or None, default=None
        Seeds labels, positions and noise.

    Returns
    -------
    X : ndarray of shape (n_samples, h * w)
        C-order flattened images, float64.
    y : ndarray of shape (n_samples,)
        0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right corner (where the arms meet).

    Raises
    ------
    ValueError
        If ``image_shape`` is smaller than 3 x 3.

    References
    ----------
    .. [1] Candogan et al. "Spatial Priors via Space Filling Curves for Small and Limited Data
       Vision Transformers", ICML 2026, arXiv:2606.14757.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_local_pattern_images
    >>> X, y = make_local_pattern_images(20, random_state=0)
    >>> X.shape
    (20, 256)
    """
    h, w = _check_image_shape(image_shape, 3)
    rng = np.random.default_rng(check_random_state(random_state).randint(2**31 - 1))
    return _draw_patterns(list(_CORNERS.values()), n_samples, h, w, float(noise), rng)


@validate_params(
    {"canvas_shape": ["array-like"],
     "noise": [Interval(Real, 0, None, closed="left")],
     "random_state": ["random_state"]},
    prefer_skip_nested_validation=True,
)
def make_digits_on_canvas(canvas_shape=(16, 16), noise=0.2, random_state=None):
    """Place scikit-learn's 8 x 8 digits at a random position on a larger noisy canvas.

    Each of the 1,797 digit images (``sklearn.datasets.load_digits``, values 0-16, divided
    by 16) is added at a uniformly random offset to a canvas of ``N(0, noise^2)`` pixel noise.

    Parameters
    ----------
    canvas_shape : tuple of int, default=(16, 16)
        ``(h, w)`` of the canvas, each >= 8; ``(24, 24)`` gives 576 pixels.
    noise : float, default=0.2
        Standard deviation of the canvas noise (>= 0).
    random_state : int, RandomState instance or None, default=None
        Seeds offsets and noise.

    Returns
    -------
    X : ndarray of shape (1797, h * w)
        C-order flattened canvases, float64.
    y : ndarray of shape (1797,)
        The digit, 0-9.

    Raises
    ------
    ValueError
        If ``canvas_shape`` is smaller than 8 x 8.

    References
    ----------
    .. [1] Candogan et al. "Spatial Priors via Space Filling Curves for Small and Limited Data
       Vision Transformers", ICML 2026, arXiv:2606.14757.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_digits_on_canvas
    >>> X, y = make_digits_on_canvas((16, 16), random_state=0)
    >>> X.shape, y.shape
    ((1797, 256), (1797,))
    """
    from sklearn.datasets import load_digits

    h, w = _check_image_shape(canvas_shape, 8, "canvas_shape")
    digits = load_digits()
    images = digits.images / 16.0
    n = len(images)
    rng = np.random.default_rng(check_random_state(random_state).randint(2**31 - 1))
    X = noise * rng.standard_normal((n, h, w))
    rows = rng.integers(0, h - 8 + 1, size=n)
    cols = rng.integers(0, w - 8 + 1, size=n)
    for i in range(n):
        X[i, rows[i]:rows[i] + 8, cols[i]:cols[i] + 8] += images[i]
    return X.reshape(n, h * w), digits.target.copy()
