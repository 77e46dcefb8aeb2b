"""The README's quickstart runs and prints what the README says it prints."""

import ast
import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_quickstart_prints_what_the_readme_says():
    text = README.read_text(encoding="utf-8")
    quick = text.split("## Quickstart", 1)[1]
    code = quick.split("```python", 1)[1].split("```", 1)[0]
    try:
        from sklearn_icml26.datasets import load_ese_covid_victoria

        load_ese_covid_victoria(20, download_if_missing=False)
    except (FileNotFoundError, OSError) as exc:
        pytest.skip(reason=f"the COVID-19 Victoria data is not in the data home: {exc}")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README quickstart", "exec"), {})
    params, score = out.getvalue().rsplit("}", 1)
    printed = f"{ast.literal_eval(params + '}')} {float(score):.2f}"
    claimed = re.search(r"`(\{'damping': [^`]*\} -?\d\.\d\d)`", quick).group(1)
    assert printed == claimed


def test_commands_in_the_docs_exist():
    """Every ``python -m sklearn_icml26 <command>`` the docs name is a command of the CLI, and
    the benchmarks are run with ``python benchmarks/run.py`` (they are not in the package)."""
    from sklearn_icml26.__main__ import build_parser

    root = README.parent
    commands = set(build_parser()._subparsers._group_actions[0].choices) - {"benchmark"}
    for path in [README, root / "CONTRIBUTING.md", root / "benchmarks" / "README.md"]:
        text = path.read_text(encoding="utf-8")
        for command in re.findall(r"python -m sklearn_icml26 ([a-z][a-z-]*)", text):
            assert command in commands, f"{path.name}: python -m sklearn_icml26 {command}"
    assert "python benchmarks/run.py render" in README.read_text(encoding="utf-8")
    assert (root / "benchmarks" / "run.py").is_file()
