"""EnvironmentCache: content addressing, read-only build, digest, tar transport, offline pip."""

import hashlib
import os
import stat
import subprocess
import sys
import zipfile

import pytest

from sklearn_icml26.sandbox import EnvironmentCache, tree_digest


@pytest.fixture()
def root(tmp_path):
    return tmp_path / "caches"


def test_same_inputs_same_cache_and_read_only_tree(root, tmp_path):
    snap = tmp_path / "snap"
    snap.mkdir()
    (snap / "task.txt").write_text("do it")
    cache = EnvironmentCache.from_venv(["threadpoolctl"], snapshot=snap, root=root)
    assert cache.path == root / cache.key and len(cache.key) == 64
    again = EnvironmentCache.from_venv(["threadpoolctl"], snapshot=snap, root=root)
    assert again.key == cache.key and sorted(p.name for p in root.iterdir()) == [cache.key]
    # another snapshot is another address
    (snap / "task.txt").write_text("do something else")
    other = EnvironmentCache.from_venv(["threadpoolctl"], snapshot=snap, root=root)
    assert other.key != cache.key
    site = next(cache.env_dir.glob("lib/python3*/site-packages"))
    copied = site / "threadpoolctl.py"
    import threadpoolctl

    assert copied.read_bytes() == open(threadpoolctl.__file__, "rb").read()
    assert not os.stat(copied).st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    assert (cache.snapshot_dir / "task.txt").read_text() == "do it"
    assert cache.manifest["distributions"] == {"threadpoolctl": threadpoolctl.__version__}
    # the interpreter of the cache runs (outside a sandbox too)
    out = subprocess.run([str(cache.env_dir / "bin" / "python"), "-I", "-c",
                          "import threadpoolctl, sys; print(sys.prefix)"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == str(cache.env_dir)
    assert repr(cache).startswith(f"EnvironmentCache({cache.key[:12]}")
    for c in (cache, other):
        c.remove()
    assert not cache.path.exists()


def test_dependencies_are_followed_and_packages_compiled(root, tmp_path):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("VALUE = 42\n")
    cache = EnvironmentCache.from_venv(["joblib"], packages=[pkg], root=root)
    # joblib 1.6 requires cloudpickle: it comes along
    assert "cloudpickle" in cache.manifest["distributions"]
    site = next(cache.env_dir.glob("lib/python3*/site-packages"))
    assert (site / "mypkg" / "__init__.py").read_text() == "VALUE = 42\n"
    assert list((site / "mypkg" / "__pycache__").glob("*.pyc"))
    no_deps = EnvironmentCache.from_venv(["joblib"], include_dependencies=False, root=root)
    assert set(no_deps.manifest["distributions"]) == {"joblib"}
    with pytest.raises(ValueError, match="'no-such-dist' is not installed"):
        EnvironmentCache.from_venv(["no-such-dist"], root=root)
    with pytest.raises(ValueError, match="folders of Python packages"):
        EnvironmentCache.from_venv(["joblib"], packages=[tmp_path], root=root)
    with pytest.raises(ValueError, match="not a virtual environment"):
        EnvironmentCache.from_venv(["joblib"], source=tmp_path, root=root)
    with pytest.raises(FileNotFoundError, match="not an environment cache"):
        EnvironmentCache(tmp_path)


def test_digest_detects_any_change_and_pack_roundtrip(root, tmp_path):
    cache = EnvironmentCache.from_venv(["threadpoolctl"], root=root)
    assert cache.verify() and cache.digest() == cache.manifest["env_sha256"]
    tar = cache.pack(tmp_path / "env.tar.gz")
    restored = EnvironmentCache.unpack(tar, root=tmp_path / "elsewhere")
    assert restored.key == cache.key and restored.verify()
    assert tree_digest(restored.env_dir) == tree_digest(cache.env_dir)
    # tamper with the original: one byte, then one mode bit
    site = next(cache.env_dir.glob("lib/python3*/site-packages"))
    target = site / "threadpoolctl.py"
    os.chmod(target, 0o644)
    digest_mode = tree_digest(cache.env_dir)
    assert digest_mode != cache.manifest["env_sha256"]
    target.write_bytes(target.read_bytes() + b"#")
    assert not cache.verify() and tree_digest(cache.env_dir) != digest_mode
    # a tampered archive is refused
    bad = cache.pack(tmp_path / "bad.tar")
    with pytest.raises(ValueError, match="does not match its manifest"):
        EnvironmentCache.unpack(bad, root=tmp_path / "third")


def _tiny_wheel(folder, name="sbxdemo", version="1.0"):
    """A minimal pure-Python wheel, written by hand (no build backend needed)."""
    files = {f"{name}/__init__.py": b"ANSWER = 7\n",
             f"{name}-{version}.dist-info/METADATA":
                 f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
             f"{name}-{version}.dist-info/WHEEL":
                 b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = [f"{p},sha256={hashlib.sha256(d).hexdigest()},{len(d)}" for p, d in files.items()]
    files[f"{name}-{version}.dist-info/RECORD"] = ("\n".join(
        record + [f"{name}-{version}.dist-info/RECORD,,"]) + "\n").encode()
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for p, d in files.items():
            zf.writestr(p, d)
    return path


def test_from_requirements_installs_offline_from_wheels(root, tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _tiny_wheel(wheels)
    cache = EnvironmentCache.from_requirements(["sbxdemo==1.0"], find_links=[wheels], root=root)
    assert cache.manifest["distributions"] == {"sbxdemo": "1.0"} and cache.verify()
    out = subprocess.run([str(cache.env_dir / "bin" / "python"), "-I", "-c",
                          "import sbxdemo; print(sbxdemo.ANSWER)"],
                         capture_output=True, text=True, check=True).stdout
    assert out == "7\n"
    assert EnvironmentCache.from_requirements(["sbxdemo==1.0"], find_links=wheels,
                                              root=root).key == cache.key
    # a requirement without a local wheel fails (nothing is fetched from an index)
    with pytest.raises(subprocess.CalledProcessError):
        EnvironmentCache.from_requirements(["sbxdemo==2.0"], find_links=[wheels], root=root)
    assert sorted(p.name for p in root.iterdir()) == [cache.key]  # no half-built cache
    with pytest.raises(ValueError, match="find_links must be local folders"):
        EnvironmentCache.from_requirements(["x"], find_links=[tmp_path / "none"], root=root)
    assert sys.prefix  # the running environment is untouched by all of this
