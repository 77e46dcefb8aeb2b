"""``stacklevel`` that makes a warning name the user's line (torch-free).

Warnings raised inside ``fit`` pass through scikit-learn's ``_fit_context`` wrapper, joblib
re-issuing and the package's own helpers; a fixed ``stacklevel`` points at one of those files
instead of the caller's line. :func:`_external_stacklevel` counts the frames up to the first
one outside the package, scikit-learn and skorch. It imports neither torch nor skorch (skorch
is only located), so the numpy estimators use it too.
"""

import importlib.util
import os
import sys

import sklearn


def _internal_dirs():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # sklearn_icml26/
    dirs = [os.path.dirname(os.path.abspath(sklearn.__file__)), here]
    spec = importlib.util.find_spec("skorch")  # located, not imported
    if spec is not None and spec.origin:
        dirs.append(os.path.dirname(os.path.abspath(spec.origin)))
    return tuple(d + os.sep for d in dirs)


# warnings point at the first frame outside these folders: the user's line, not ours
_INTERNAL_DIRS = _internal_dirs()


def _external_stacklevel():
    """``stacklevel`` for a ``warnings.warn`` in the caller: the first frame outside the
    package, scikit-learn and skorch (so the warning names the user's line)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_INTERNAL_DIRS):
        frame, level = frame.f_back, level + 1
    return level
