"""Private upstream API is imported in one place: ``sklearn_icml26/_compat.py`` (issue 37)."""

import ast
import re
from pathlib import Path

import pytest

import sklearn_icml26
from sklearn_icml26 import _compat

PACKAGE = Path(sklearn_icml26.__file__).parent
UPSTREAM = re.compile(r"^(sklearn|joblib|torch|skorch)(\.|$)")
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p != PACKAGE / "_compat.py")


def _private_uses(source):
    """(line, what) of every private upstream import or attribute in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if UPSTREAM.match(node.module):
                if any(part.startswith("_") for part in node.module.split(".")):
                    found.append((node.lineno, f"from {node.module} import ..."))
                found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names
                          if a.name.startswith("_")]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names
                      if UPSTREAM.match(a.name)
                      and any(p.startswith("_") for p in a.name.split("."))]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not (
                node.attr.startswith("__") and node.attr.endswith("__")) and (
                isinstance(node.value, ast.Name)
                and node.value.id in {"sklearn", "joblib", "torch", "skorch"}):
            found.append((node.lineno, f"{node.value.id}.{node.attr}"))
    return found


def test_the_scanner_finds_private_uses():
    src = ("from sklearn.utils._param_validation import Interval\n"
           "from sklearn.base import BaseEstimator, _fit_context\n"
           "import torch\ntorch._foreach_add_(a, b)\n"
           "from sklearn.base import clone\n")
    assert [line for line, _ in _private_uses(src)] == [1, 2, 4]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_private_upstream_api_only_through_compat(path):
    assert _private_uses(path.read_text()) == []


def test_compat_exports_what_it_names():
    for name in _compat.__all__:
        assert getattr(_compat, name) is not None
    assert _compat.torch_foreach.add_ is __import__("torch")._foreach_add_
