"""EnvironmentCache: content addressing, read-only build, digest, tar transport, offline pip."""

import hashlib
import os
import stat
import subprocess
import sys
import zipfile

import pytest

from sklearn_icml26.sandbox import EnvironmentCache
from sklearn_icml26.sandbox._cache import tree_digest


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


def _tampered_archive(cache, tmp_path, *, prefix=None, extra=None, name="evil.tar"):
    """``cache`` with a planted module, its digest recomputed as an attacker would do."""
    import json
    import shutil
    import tarfile

    from sklearn_icml26.sandbox._cache import _make_readonly, _make_writable

    work = tmp_path / f"work-{name}"
    folder = work / cache.key
    shutil.copytree(cache.path, folder, symlinks=True)
    _make_writable(work)
    site = next((folder / "env").glob("lib/python3*/site-packages"))
    (site / "planted.py").write_text("PLANTED = True\n")
    if extra is not None:
        extra(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    _make_readonly(folder / "env")
    manifest["env_sha256"] = tree_digest(folder / "env")
    if prefix is not None:
        manifest["python"]["prefix"] = str(prefix)
    os.chmod(folder, 0o755)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    path = tmp_path / name
    with tarfile.open(path, "w") as tar:
        tar.add(folder, arcname=cache.key)
    _make_writable(work)
    shutil.rmtree(work)
    return path


def test_unpack_refuses_a_manifest_that_names_another_host_folder(root, tmp_path):
    # issue 40 item 7: the manifest decided which host folder a task would see
    cache = EnvironmentCache.from_venv(["threadpoolctl"], root=root)
    secret = tmp_path / "host-secrets"
    (secret / "lib").mkdir(parents=True)
    (secret / "lib" / "secret.txt").write_text("not for tasks")
    evil = _tampered_archive(cache, tmp_path, prefix=secret)
    with pytest.raises(ValueError, match="refused: built for the interpreter .*pass python="):
        EnvironmentCache.unpack(evil, root=tmp_path / "dst")
    assert not list((tmp_path / "dst").iterdir())  # nothing left behind
    # a cache folder whose manifest was edited in place is refused by the sandbox as well
    from sklearn_icml26.sandbox import SandboxError, TaskSandbox
    from sklearn_icml26.sandbox._cache import check_python_install

    with pytest.raises(ValueError, match="not a Python installation of this host"):
        check_python_install(cache.manifest["python"]["executable"], secret)
    with pytest.raises(ValueError, match="not the folder above the executable"):
        check_python_install(cache.manifest["python"]["executable"], "/")
    check_python_install(cache.manifest["python"]["executable"],
                         cache.manifest["python"]["prefix"])
    cache.manifest["python"]["prefix"] = str(secret)
    with pytest.raises(SandboxError, match="refusing to bind it into a task"):
        TaskSandbox(cache)


def test_an_unpacked_cache_is_never_what_a_build_returns(root, tmp_path):
    # issue 40 item 7: a self-consistent tampered archive became from_venv's result
    cache = EnvironmentCache.from_venv(["threadpoolctl"], root=root)
    evil = _tampered_archive(cache, tmp_path)
    dst = tmp_path / "dst"
    # without a digest to compare with, it is accepted as what it is, apart from any build
    unpacked = EnvironmentCache.unpack(evil, root=dst)
    built = EnvironmentCache.from_venv(["threadpoolctl"], root=dst)
    assert not list(built.env_dir.glob("lib/python3*/site-packages/planted.py"))
    assert built.path == dst / cache.key
    assert unpacked.path == dst / f"unpacked-{cache.key}" and unpacked.verify()
    assert list(unpacked.env_dir.glob("lib/python3*/site-packages/planted.py"))
    digest = cache.content_digest()
    with pytest.raises(ValueError, match="refused: its content digest is"):
        EnvironmentCache.unpack(evil, root=tmp_path / "c", expected_digest=digest)
    assert built.content_digest() != unpacked.content_digest()
    # the genuine archive, pinned by its digest, is restored; a second, different archive
    # with the same key is refused rather than silently mixed up with the first
    honest = EnvironmentCache.unpack(cache.pack(tmp_path / "ok.tar.gz"), root=tmp_path / "b",
                                     expected_digest=digest)
    assert honest.content_digest() == digest and honest.verify()
    with pytest.raises(ValueError, match="was unpacked into .* before"):
        EnvironmentCache.unpack(evil, root=tmp_path / "b")
    assert EnvironmentCache.unpack(tmp_path / "ok.tar.gz", root=tmp_path / "b").path == \
        honest.path
    with pytest.raises(ValueError, match="expected_digest must be a hex SHA-256"):
        EnvironmentCache.unpack(evil, root=dst, expected_digest="abc")


def test_unpack_refuses_entries_no_digest_covers(root, tmp_path):
    # issue 40 item 7: what cannot be verified is refused
    import io
    import tarfile

    cache = EnvironmentCache.from_venv(["threadpoolctl"], root=root)
    extra = _tampered_archive(cache, tmp_path, name="extra.tar",
                              extra=lambda f: (f / "notes.txt").write_text("unchecked"))
    with pytest.raises(ValueError, match="notes.txt' is outside the digested entries"):
        EnvironmentCache.unpack(extra, root=tmp_path / "dst")
    fifo = _tampered_archive(cache, tmp_path, name="fifo.tar",
                             extra=lambda f: os.mkfifo(f / "env" / "pipe"))
    with pytest.raises(ValueError, match="env/pipe' is not a plain file, folder or symbolic"):
        EnvironmentCache.unpack(fifo, root=tmp_path / "dst")
    good = cache.pack(tmp_path / "good.tar")
    for kind in (tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.LNKTYPE):
        bad = tmp_path / f"kind-{kind.decode()}.tar"
        with tarfile.open(good) as src, tarfile.open(bad, "w") as dst:
            for m in src.getmembers():
                dst.addfile(m, src.extractfile(m) if m.isreg() else None)
            node = tarfile.TarInfo(f"{cache.key}/env/node")
            node.type, node.mode, node.uid = kind, 0o666, 65534
            node.devmajor, node.devminor = 8, 0
            node.linkname = f"{cache.key}/manifest.json" if kind == tarfile.LNKTYPE else ""
            dst.addfile(node, io.BytesIO(b""))
        with pytest.raises(ValueError, match="not a plain file, folder or symbolic link"):
            EnvironmentCache.unpack(bad, root=tmp_path / "dst")
    (tmp_path / "junk.tar").write_bytes(b"no tar at all")
    with pytest.raises(ValueError, match="is not a tar file"):
        EnvironmentCache.unpack(tmp_path / "junk.tar", root=tmp_path / "dst")
    assert not [p for p in (tmp_path / "dst").iterdir()]
