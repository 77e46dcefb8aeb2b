"""Input checks shared by several estimators."""

import numpy as np


def _check_numeric_target(y, expected):
    """Raise a ValueError naming ``y`` when it holds non-numeric values (strings).

    ``validate_data(..., y_numeric=True)`` converts object arrays only, lets string arrays
    through and names no argument when the conversion fails; call this before it.
    ``expected`` says what the estimator takes, e.g. ``"float targets, one column per
    system"``. Numbers stored in an object array pass; ragged input and other failures are
    left to ``validate_data``.
    """
    if y is None:
        return
    try:
        arr = np.asarray(y)
    except Exception:  # ragged input: leave the message to validate_data
        return
    if arr.dtype.kind == "O":
        try:
            arr.astype(np.float64)
        except ValueError:  # strings; other failures (TypeError) are left to validate_data
            pass
        else:
            return
    elif arr.dtype.kind not in "USVMm":
        return
    example = arr.ravel()[0] if arr.size else None
    example = example.item() if hasattr(example, "item") else example
    raise ValueError(
        f"y must be numeric ({expected}); got dtype {arr.dtype}"
        + (f" with values such as {example!r}" if example is not None else "")
        + ". Convert the targets to numbers first.")
