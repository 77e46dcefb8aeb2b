"""The documentation builds with warnings as errors (examples are not executed here)."""

import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "doc"


@pytest.mark.docs
def test_sphinx_build_without_warnings(tmp_path):
    pytest.importorskip("sphinx_gallery", reason="the docs extra is not installed")
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-E", "-q",
           "-D", "plot_gallery=0", "-d", str(tmp_path / "doctrees"), str(DOC),
           str(tmp_path / "html")]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=DOC)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    assert (tmp_path / "html" / "api.html").is_file()
    # formulas render offline: MathJax is bundled, never fetched from a CDN
    assert (tmp_path / "html" / "_static" / "mathjax" / "tex-chtml.js").is_file()
    pages = [p.read_text(encoding="utf-8") for p in (tmp_path / "html").rglob("*.html")]
    assert not [p for p in pages if "cdn.jsdelivr.net" in p or "mathjax@" in p]
    assert any("_static/mathjax/tex-chtml.js" in p for p in pages)
    # the benchmarks page shows a figure per benchmark beside its tables
    bench = (tmp_path / "html" / "benchmarks.html").read_text(encoding="utf-8")
    assert bench.count("<img") >= 5 and (tmp_path / "html" / "_images" / "skewd.png").is_file()
