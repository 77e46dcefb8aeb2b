"""The installed package stands alone: a wheel holds the package only and runs from anywhere."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """A wheel built from a copy of the checkout's packaging files (the checkout stays clean)."""
    if shutil.which("git") is None and not (ROOT / "pyproject.toml").is_file():
        pytest.skip(reason="needs the source checkout")
    pytest.importorskip("setuptools", reason="building the wheel needs setuptools")
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.cfg", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "sklearn_icml26", src / "sklearn_icml26",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--quiet", "-w", str(tmp / "dist"), str(src)],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (path,) = (tmp / "dist").glob("sklearn_icml26-*.whl")
    return path


def test_wheel_holds_the_package_and_no_benchmark_plumbing(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    assert tops == {"sklearn_icml26", next(t for t in tops if t.endswith(".dist-info"))}
    assert "sklearn_icml26/datasets/registry/smollm2.txt" in names
    assert not [n for n in names if "benchmark" in n.rsplit("/", 1)[-1] or "/benchmarks/" in n]
    with zipfile.ZipFile(wheel) as zf:
        sources = {n: zf.read(n).decode("utf-8") for n in names if n.endswith(".py")}
    # no module finds files relative to the checkout around it
    for name, text in sources.items():
        for pattern in ('"benchmarks"', "parents[1] /", "parents[2] /", '"README.md"',
                        "shared/data", '/ "shared"', '"shared" /'):
            assert pattern not in text, f"{name} holds {pattern!r}"


def test_the_unpacked_wheel_runs_from_an_unrelated_folder(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(site), "HOME": str(tmp_path),
           "SKLEARN_ICML26_DATA": str(tmp_path / "data"), "PYTHONNOUSERSITE": "1"}

    def run(*args):
        return subprocess.run([sys.executable, *args], cwd=elsewhere, env=env,
                              capture_output=True, text=True, timeout=120)

    # the package is the wheel's, and the benchmark command (the benchmarks are not in the
    # wheel) says where they are, with no traceback
    done = run("-c", "import sys, sklearn_icml26\n"
                     "from sklearn_icml26.__main__ import main\n"
                     "print(sklearn_icml26.__file__)\n"
                     "sys.exit(main(['benchmark', 'render']))")
    assert done.returncode == 2, done.stderr
    assert Path(done.stdout.strip()).is_relative_to(site)
    assert "python benchmarks/run.py" in done.stderr and "Traceback" not in done.stderr
    done = run("-m", "sklearn_icml26", "versions")
    assert done.returncode == 0, done.stderr
    assert "sklearn_icml26: 0.1.0" in done.stdout and "numpy" in done.stdout
    assert sorted(p.name for p in elsewhere.iterdir()) == []  # nothing written beside it
