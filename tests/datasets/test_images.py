"""Image generators of the vision module: planted patterns recovered exactly without noise."""

import numpy as np
import pytest
from sklearn.datasets import load_digits

from sklearn_icml26.datasets import (
    make_bar_images,
    make_digits_on_canvas,
    make_local_pattern_images,
)

BAR_SHAPES = {0: [(0, 0), (0, 1), (0, 2)], 1: [(0, 0), (1, 0), (2, 0)],
              2: [(0, 0), (1, 1), (2, 2)], 3: [(0, 2), (1, 1), (2, 0)]}
CORNER_SHAPES = {0: {(0, 0), (0, 1), (0, 2), (1, 0), (2, 0)},
                 1: {(0, 0), (0, 1), (0, 2), (1, 2), (2, 2)},
                 2: {(0, 0), (1, 0), (2, 0), (2, 1), (2, 2)},
                 3: {(0, 2), (1, 2), (2, 0), (2, 1), (2, 2)}}


def _normalised(cells):
    r0, c0 = min(r for r, _ in cells), min(c for _, c in cells)
    return {(r - r0, c - c0) for r, c in cells}


def test_bars_without_noise_are_the_labelled_orientation():
    X, y = make_bar_images(200, image_shape=(6, 9), noise=0.0, random_state=0)
    assert X.shape == (200, 54) and set(np.unique(y)) == {0, 1, 2, 3}
    for img, label in zip(X.reshape(-1, 6, 9), y, strict=True):
        cells = [tuple(rc) for rc in np.argwhere(img == 1.0)]
        assert len(cells) == 3 and img.sum() == 3.0
        got = _normalised(cells)
        expected = _normalised(BAR_SHAPES[label])
        assert got == expected


def test_corner_patterns_without_noise_and_equal_intensity():
    X, y = make_local_pattern_images(300, image_shape=(7, 5), noise=0.0, random_state=1)
    assert X.shape == (300, 35)
    positions = []
    for img, label in zip(X.reshape(-1, 7, 5), y, strict=True):
        cells = [tuple(rc) for rc in np.argwhere(img == 1.0)]
        assert len(cells) == 5  # same number of bright pixels in every class
        window = np.argwhere(img == 1.0).min(axis=0)
        positions.append(tuple(window))
        assert {(r - window[0], c - window[1]) for r, c in cells} == CORNER_SHAPES[label]
    assert len(set(positions)) > 10  # the pattern moves
    Xn, _ = make_local_pattern_images(2000, noise=0.3, random_state=2)
    # 5 of 256 pixels carry the pattern: the median |pixel| is that of N(0, 0.3^2), 0.2023
    assert abs(np.median(np.abs(Xn)) - 0.3 * 0.6745) < 0.005


def test_digits_on_canvas_hold_the_digit_at_an_offset():
    digits = load_digits()
    X, y = make_digits_on_canvas((12, 16), noise=0.0, random_state=0)
    assert X.shape == (1797, 192)
    np.testing.assert_array_equal(y, digits.target)
    imgs = X.reshape(-1, 12, 16)
    np.testing.assert_allclose(imgs.sum(axis=(1, 2)), digits.images.sum(axis=(1, 2)) / 16)
    for i in (0, 5, 1000):  # the digit sits somewhere: an exact 8 x 8 match
        found = any(np.array_equal(imgs[i, r:r + 8, c:c + 8], digits.images[i] / 16)
                    for r in range(5) for c in range(9))
        assert found
    X24, _ = make_digits_on_canvas((24, 24), random_state=0)
    assert X24.shape == (1797, 576)
    again, _ = make_digits_on_canvas((24, 24), random_state=0)
    np.testing.assert_array_equal(again, X24)


@pytest.mark.parametrize("call, match", [
    (lambda: make_bar_images(10, image_shape=(2, 8)), r"image_shape must be at least \(3, 3\)"),
    (lambda: make_local_pattern_images(10, image_shape=(16,)), "image_shape must be a pair"),
    (lambda: make_digits_on_canvas((7, 16)), r"canvas_shape must be at least \(8, 8\)"),
])
def test_bad_shapes_name_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
