"""EnvironmentCache: a read-only, content-addressed Python environment shared by many tasks."""

import hashlib
import json
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import uuid
from importlib import metadata
from pathlib import Path

__all__ = ["EnvironmentCache", "check_python_install", "default_cache_root"]

_MANIFEST = "manifest.json"
_SKIP_NAMES = {"__pycache__"}
_KEY = re.compile(r"[0-9a-f]{64}")
_CACHE_ENTRIES = {_MANIFEST, "env", "snapshot"}  # all a packed cache may hold, each digested
_UNPACKED = "unpacked-"  # folder prefix of unpacked caches: never taken for a build


def default_cache_root():
    """Folder of the environment caches: ``$SKLEARN_ICML26_SANDBOX_CACHE`` or a temp folder.

    Returns
    -------
    root : pathlib.Path
        ``$SKLEARN_ICML26_SANDBOX_CACHE`` when set, else ``<tempdir>/sklearn_icml26_envs-<uid>``.
    """
    env = os.environ.get("SKLEARN_ICML26_SANDBOX_CACHE")
    return (Path(env) if env else
            Path(tempfile.gettempdir()) / f"sklearn_icml26_envs-{os.geteuid()}")


def _normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def tree_digest(path):
    """SHA-256 of a folder tree: every relative path, its kind, mode bits and content.

    Parameters
    ----------
    path : str or path-like
        The folder.

    Returns
    -------
    digest : str
        Hex digest; equal digests mean byte-identical trees (names, modes, contents, links).
    """
    root = Path(path)
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, root)
        h.update(f"d {rel_dir} {stat.S_IMODE(os.lstat(dirpath).st_mode):o}\n".encode())
        entries = sorted(filenames + [d for d in dirnames
                                      if os.path.islink(os.path.join(dirpath, d))])
        for name in entries:
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            rel = os.path.join(rel_dir, name)
            if stat.S_ISLNK(st.st_mode):
                h.update(f"l {rel} {os.readlink(full)}\n".encode())
            elif stat.S_ISREG(st.st_mode):
                fh = hashlib.sha256()
                with open(full, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        fh.update(chunk)
                h.update(f"f {rel} {stat.S_IMODE(st.st_mode):o} {fh.hexdigest()}\n".encode())
            else:
                h.update(f"o {rel} {st.st_mode:o}\n".encode())
    return h.hexdigest()


def _tree_size(path):
    total = 0
    for dirpath, _, filenames in os.walk(path):
        for name in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
            except OSError:
                pass
    return total


def _make_writable(path):
    for dirpath, dirnames, filenames in os.walk(path):
        os.chmod(dirpath, 0o755)
        for name in filenames + dirnames:
            full = os.path.join(dirpath, name)
            if not os.path.islink(full):
                extra = stat.S_IWUSR | (stat.S_IXUSR if os.path.isdir(full) else 0)
                os.chmod(full, os.lstat(full).st_mode | extra)


def _make_readonly(path):
    for dirpath, _, filenames in os.walk(path, topdown=False):
        for name in filenames:
            full = os.path.join(dirpath, name)
            if not os.path.islink(full):
                os.chmod(full, stat.S_IMODE(os.lstat(full).st_mode) & 0o555 | 0o444)
        os.chmod(dirpath, 0o555)


def _rmtree(path):
    if os.path.lexists(path):
        _make_writable(path)
        shutil.rmtree(path, ignore_errors=True)


def _venv_python_info(venv):
    """Base interpreter of a virtual environment: ``(executable, prefix, version)``."""
    cfg = {}
    pyvenv = Path(venv) / "pyvenv.cfg"
    if not pyvenv.exists():
        raise ValueError(f"{venv} is not a virtual environment (no pyvenv.cfg)")
    for line in pyvenv.read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep:
            cfg[key.strip()] = value.strip()
    home = Path(cfg["home"])
    version = cfg.get("version") or cfg.get("version_info") or ""
    major_minor = ".".join(version.split(".")[:2])
    for name in (f"python{major_minor}", "python3", "python"):
        exe = home / name
        if exe.exists():
            return exe.resolve(), exe.resolve().parents[1], version
    raise ValueError(f"no base interpreter found in {home} (from {pyvenv})")


def _host_interpreter(python=None):
    """``(executable, prefix, version)`` of an interpreter of this host, as the host sees it.

    ``python`` (default: the running interpreter's base) names it; the prefix is the folder
    above its ``bin/``, as for a build. Nothing here comes from a cache's manifest.
    """
    exe = Path(python if python is not None
               else getattr(sys, "_base_executable", sys.executable)).resolve()
    if not (exe.is_file() and os.access(exe, os.X_OK)):
        raise ValueError(f"python must name an executable Python interpreter; got {python!r} "
                         f"(resolved to {exe})")
    if python is None or exe == Path(sys.executable).resolve():
        version = platform.python_version()
    else:
        version = subprocess.run(
            [str(exe), "-I", "-S", "-c", "import platform; print(platform.python_version())"],
            check=True, capture_output=True, text=True).stdout.strip()
    return exe, exe.parents[1], version


def check_python_install(executable, prefix):
    """Refuse an interpreter record that does not describe one Python installation of this host.

    The sandbox binds ``prefix`` read-only into every task, so it must be the installation of
    ``executable`` and nothing wider: ``executable`` is an absolute path without links to an
    executable file ``<prefix>/bin/python*``, and ``<prefix>/lib/python3.*/os.py`` (its
    standard library) exists.

    Parameters
    ----------
    executable, prefix : str or path-like
        What a cache's manifest records under ``python``.

    Raises
    ------
    ValueError
        Naming the record and what does not hold.
    """
    exe, prefix = Path(str(executable)), Path(str(prefix))
    problem = None
    if not (exe.is_absolute() and prefix.is_absolute()):
        problem = "the paths are not absolute"
    elif exe.resolve() != exe or prefix.resolve() != prefix:
        problem = "the paths go through links or '..'"
    elif not (exe.is_file() and os.access(exe, os.X_OK) and exe.name.startswith("python")):
        problem = "the executable is not an executable python* file of this host"
    elif exe.parent != prefix / "bin" or prefix == Path(prefix.anchor):
        problem = "the prefix is not the folder above the executable's bin/"
    elif not any(prefix.glob("lib/python3*/os.py")):
        problem = "the prefix holds no Python standard library (lib/python3.*/os.py)"
    if problem is not None:
        raise ValueError(f"the cache's interpreter (executable {str(executable)!r}, prefix "
                         f"{str(prefix)!r}) is not a Python installation of this host: "
                         f"{problem}")


def _site_packages(venv):
    found = sorted(Path(venv).glob("lib/python3*/site-packages"))
    if not found:
        raise ValueError(f"{venv} has no lib/python3*/site-packages")
    return found[0]


def _requirement_names(dist, installed):
    """Names of the installed requirements of ``dist`` that apply without extras."""
    out = []
    try:
        from packaging.requirements import Requirement
    except ImportError:  # pragma: no cover - packaging ships with pip's environments
        Requirement = None
    for text in dist.requires or []:
        if Requirement is not None:
            req = Requirement(text)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            name = req.name
        else:  # pragma: no cover
            if ";" in text:
                continue
            name = re.match(r"[A-Za-z0-9._-]+", text).group(0)
        if _normalize(name) in installed:
            out.append(_normalize(name))
    return out


def _copy_package(src, dest):
    shutil.copytree(src, dest, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".git"))


class EnvironmentCache:
    """A Python environment prepared once, kept read-only and shared by many sandboxed tasks.

    A cache is a folder ``<root>/<key>`` holding ``env/`` (a virtual environment), optionally
    ``snapshot/`` (files every task starts from) and ``manifest.json``. The key is the SHA-256 of
    what went in (interpreter, distribution names, versions and file hashes, the content of the
    added packages and snapshot), so building the same environment twice returns the cache built
    the first time. Files are made read-only once built; :class:`TaskSandbox` mounts the cache
    as the lower layer of an overlay so a task can change its view of the environment without
    touching the cache. :meth:`verify` recomputes the content digest recorded at build time.

    The digest detects a change of the tree after it was recorded (a corrupted or truncated
    transfer, a file changed on disk); it does not prove who built the cache: whoever can write
    an archive can also write a matching digest. :meth:`unpack` therefore checks what the host
    can check itself (the interpreter, the entries, the digests) and, given
    ``expected_digest``, refuses any cache but the one published through a channel you trust;
    an unpacked cache lives in a folder of its own, which a build never takes for its result.

    Build one with :meth:`from_venv` (copy selected distributions out of an existing virtual
    environment: fast and offline) or :meth:`from_requirements` (``pip install`` from a local
    wheel folder, offline); move it between machines with :meth:`pack` and :meth:`unpack`.

    Parameters
    ----------
    path : str or path-like
        Folder of an already built cache (it holds ``manifest.json``).

    Attributes
    ----------
    path : pathlib.Path
        The cache folder.
    key : str
        Content address (hex SHA-256 of the build inputs); the folder's name
        (``unpacked-<key>`` for a cache restored by :meth:`unpack`).
    manifest : dict
        What the cache holds: ``kind``, ``python`` (executable, prefix, version),
        ``distributions`` (name -> version), ``packages``, ``env_sha256`` (content digest of
        ``env/``), ``snapshot_sha256``, ``size_bytes``.

    Raises
    ------
    FileNotFoundError
        If ``path`` holds no ``manifest.json``.

    See Also
    --------
    TaskSandbox : Runs a task over a cache.

    Examples
    --------
    >>> import tempfile
    >>> from sklearn_icml26.sandbox import EnvironmentCache
    >>> root = tempfile.mkdtemp()
    >>> cache = EnvironmentCache.from_venv(["threadpoolctl"], root=root)
    >>> sorted(cache.manifest["distributions"])
    ['threadpoolctl']
    >>> cache.verify()
    True
    >>> EnvironmentCache.from_venv(["threadpoolctl"], root=root).key == cache.key
    True
    >>> cache.remove()
    """

    def __init__(self, path):
        self.path = Path(path)
        manifest = self.path / _MANIFEST
        if not manifest.is_file():
            raise FileNotFoundError(f"{self.path} is not an environment cache (no {_MANIFEST})")
        self.manifest = json.loads(manifest.read_text())
        self.key = self.manifest["key"]

    def __repr__(self):
        dists = ", ".join(f"{k}=={v}" for k, v in sorted(self.manifest["distributions"].items()))
        return f"EnvironmentCache({self.key[:12]}: {dists or 'no distributions'})"

    # -- paths ---------------------------------------------------------------------------------
    @property
    def env_dir(self):
        """The virtual environment folder (read-only), mounted at ``/env`` in a sandbox."""
        return self.path / "env"

    @property
    def snapshot_dir(self):
        """The task snapshot folder, or None when the cache has none."""
        snap = self.path / "snapshot"
        return snap if snap.is_dir() else None

    @property
    def python_prefix(self):
        """Installation folder of the base interpreter (bound read-only into a sandbox).

        :class:`TaskSandbox` binds it only once it is one Python installation of this host
        (the folder above the recorded executable's ``bin/``, holding a standard library).
        """
        return Path(self.manifest["python"]["prefix"])

    @property
    def size_bytes(self):
        """Disk use of the cache, in bytes (as recorded at build time)."""
        return self.manifest["size_bytes"]

    # -- building ------------------------------------------------------------------------------
    @classmethod
    def _build(cls, key, root, build, manifest):
        root = Path(root) if root is not None else default_cache_root()
        root.mkdir(parents=True, exist_ok=True)
        final = root / key
        if (final / _MANIFEST).is_file():
            return cls(final)
        tmp = root / f".build-{uuid.uuid4().hex}"
        tmp.mkdir()
        try:
            build(tmp)
            _make_readonly(tmp / "env")
            manifest = dict(manifest, key=key, env_sha256=tree_digest(tmp / "env"))
            if (tmp / "snapshot").is_dir():
                _make_readonly(tmp / "snapshot")
                manifest["snapshot_sha256"] = tree_digest(tmp / "snapshot")
            manifest["size_bytes"] = _tree_size(tmp)
            (tmp / _MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
            os.chmod(tmp / _MANIFEST, 0o444)
            os.chmod(tmp, 0o555)
            try:
                os.rename(tmp, final)
            except OSError:  # built at the same time by someone else: keep theirs
                if not (final / _MANIFEST).is_file():
                    raise
        finally:
            _rmtree(tmp)
        return cls(final)

    @staticmethod
    def _snapshot_input(snapshot, key_input):
        if snapshot is not None:
            snapshot = Path(snapshot)
            if not snapshot.is_dir():
                raise ValueError(f"snapshot must be an existing folder; got {snapshot}")
            key_input["snapshot"] = tree_digest(snapshot)
        return snapshot

    @staticmethod
    def _packages_input(packages, key_input):
        out = []
        for pkg in packages:
            pkg = Path(pkg)
            if not (pkg / "__init__.py").is_file():
                raise ValueError(f"packages must be folders of Python packages (with "
                                 f"__init__.py); got {pkg}")
            out.append(pkg)
        key_input["packages"] = {p.name: tree_digest_source(p) for p in out}
        return out

    @classmethod
    def from_venv(cls, distributions, *, source=None, packages=(), snapshot=None,
                  include_dependencies=True, root=None):
        """Copy installed distributions out of a virtual environment into a new cache.

        The new environment is a virtual environment over the same base interpreter holding
        exactly the files the listed distributions installed (their ``RECORD``), plus the
        given package folders copied as plain packages (byte-compiled). Nothing is downloaded.

        Parameters
        ----------
        distributions : list of str
            Distribution names as pip knows them (``"scikit-learn"``, ``"numpy"``).
        source : str or path-like, default=None
            The virtual environment to copy from; default: the running one (``sys.prefix``).
        packages : list of str or path-like, default=()
            Folders of Python packages (with ``__init__.py``) to add to site-packages, e.g. a
            source checkout of the package under evaluation.
        snapshot : str or path-like, default=None
            Folder copied into the cache as the files each task's ``/workspace`` starts from.
        include_dependencies : bool, default=True
            Also copy the installed requirements of each distribution, recursively.
        root : str or path-like, default=None
            Folder of the caches; default :func:`default_cache_root`.

        Returns
        -------
        cache : EnvironmentCache
            The cache (an existing one when it was built before).

        Raises
        ------
        ValueError
            If ``source`` is not a virtual environment, or a distribution is not installed in it.
        """
        source = Path(source) if source is not None else Path(sys.prefix)
        exe, prefix, version = _venv_python_info(source)
        site = _site_packages(source)
        installed = {_normalize(d.metadata["Name"]): d
                     for d in metadata.distributions(path=[str(site)])}
        wanted, queue = {}, [_normalize(d) for d in distributions]
        while queue:
            name = queue.pop()
            if name in wanted:
                continue
            if name not in installed:
                raise ValueError(f"distribution {name!r} is not installed in {source}; "
                                 f"installed: {sorted(installed)}")
            wanted[name] = installed[name]
            if include_dependencies:
                queue.extend(_requirement_names(installed[name], installed))
        key_input = {"kind": "venv", "python": [str(exe), version], "distributions": {}}
        for name, dist in sorted(wanted.items()):
            record = dist.read_text("RECORD") or ""
            key_input["distributions"][name] = [dist.version,
                                                hashlib.sha256(record.encode()).hexdigest()]
        pkgs = cls._packages_input(packages, key_input)
        snapshot = cls._snapshot_input(snapshot, key_input)
        key = hashlib.sha256(json.dumps(key_input, sort_keys=True).encode()).hexdigest()

        def build(tmp):
            subprocess.run([str(exe), "-m", "venv", "--without-pip", str(tmp / "env")],
                           check=True, capture_output=True)
            dest_site = _site_packages(tmp / "env")
            for dist in wanted.values():
                for file in dist.files or []:
                    src = Path(dist.locate_file(file))
                    rel = os.path.normpath(str(file))
                    if rel.startswith(".."):  # scripts outside site-packages: not needed
                        continue
                    if not src.is_file():
                        continue
                    dst = dest_site / rel
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(src, dst)
            cls._finish(tmp, exe, pkgs, snapshot, dest_site)

        manifest = {"kind": "venv", "source": str(source),
                    "python": {"executable": str(exe), "prefix": str(prefix),
                               "version": version},
                    "distributions": {n: d.version for n, d in sorted(wanted.items())},
                    "packages": [p.name for p in pkgs]}
        return cls._build(key, root, build, manifest)

    @classmethod
    def from_requirements(cls, requirements, *, find_links, packages=(), snapshot=None,
                          python=None, root=None):
        """Install requirements offline from local wheel folders into a new cache.

        Runs ``pip install --no-index --find-links <folder> ...`` into a fresh virtual
        environment: nothing is fetched from an index, so every requirement (and its
        dependencies) must be available as a wheel in ``find_links``.

        Parameters
        ----------
        requirements : list of str
            Requirement specifiers (``"scikit-learn==1.9.1"``).
        find_links : list of str or path-like
            Local folders of wheels (a wheelhouse, pip's wheel cache).
        packages : list of str or path-like, default=()
            See :meth:`from_venv`.
        snapshot : str or path-like, default=None
            See :meth:`from_venv`.
        python : str or path-like, default=None
            Base interpreter of the environment; default: the running one's base interpreter.
        root : str or path-like, default=None
            Folder of the caches; default :func:`default_cache_root`.

        Returns
        -------
        cache : EnvironmentCache
            The cache (an existing one when it was built before).

        Raises
        ------
        ValueError
            If a ``find_links`` entry is not a folder.
        subprocess.CalledProcessError
            If pip fails (e.g. a wheel is missing from ``find_links``).
        """
        links = [Path(f) for f in ([find_links] if isinstance(find_links, (str, os.PathLike))
                                   else find_links)]
        for link in links:
            if not link.is_dir():
                raise ValueError(f"find_links must be local folders of wheels; {link} is not")
        exe = Path(python) if python is not None else Path(getattr(sys, "_base_executable",
                                                                    sys.executable))
        exe = exe.resolve()
        version = subprocess.run(
            [str(exe), "-c", "import platform; print(platform.python_version())"],
            check=True, capture_output=True, text=True).stdout.strip()
        wheels = sorted(f"{w.name}:{w.stat().st_size}"
                        for link in links for w in link.glob("*.whl"))
        key_input = {"kind": "requirements", "python": [str(exe), version],
                     "requirements": sorted(requirements), "wheels": wheels}
        pkgs = cls._packages_input(packages, key_input)
        snapshot = cls._snapshot_input(snapshot, key_input)
        key = hashlib.sha256(json.dumps(key_input, sort_keys=True).encode()).hexdigest()
        dists = {}

        def build(tmp):
            create_venv_offline(tmp / "env", requirements, links, python=exe)
            dest_site = _site_packages(tmp / "env")
            for dist in metadata.distributions(path=[str(dest_site)]):
                dists[_normalize(dist.metadata["Name"])] = dist.version
            cls._finish(tmp, exe, pkgs, snapshot, dest_site)

        manifest = {"kind": "requirements", "requirements": sorted(requirements),
                    "python": {"executable": str(exe), "prefix": str(exe.parents[1]),
                               "version": version},
                    "distributions": dists, "packages": [p.name for p in pkgs]}
        return cls._build(key, root, build, manifest)

    @staticmethod
    def _finish(tmp, exe, pkgs, snapshot, dest_site):
        for pkg in pkgs:
            _copy_package(pkg, dest_site / pkg.name)
        if pkgs:
            subprocess.run([str(exe), "-m", "compileall", "-q", *[str(dest_site / p.name)
                                                                  for p in pkgs]],
                           check=True, capture_output=True)
        if snapshot is not None:
            shutil.copytree(snapshot, tmp / "snapshot", symlinks=True)

    # -- checking, transport, removal ----------------------------------------------------------
    def digest(self):
        """Recompute the content digest of ``env/`` (see :func:`tree_digest`).

        Returns
        -------
        digest : str
            Hex SHA-256 of the environment tree as it is now.
        """
        return tree_digest(self.env_dir)

    def verify(self):
        """Whether the environment (and snapshot) are byte-identical to what the manifest records.

        This detects any change made after the digests were written (a corrupted transfer, a
        file changed on disk), not a tree and manifest changed together: see :meth:`unpack`.

        Returns
        -------
        ok : bool
            True when the recomputed digests equal those of the manifest.
        """
        ok = self.digest() == self.manifest["env_sha256"]
        if self.snapshot_dir is not None:
            ok = ok and tree_digest(self.snapshot_dir) == self.manifest.get("snapshot_sha256")
        return ok

    def pack(self, path):
        """Write the cache as a (gzip-compressed when ``path`` ends in ``.gz``) tar file.

        Parameters
        ----------
        path : str or path-like
            The tar file to write.

        Returns
        -------
        path : pathlib.Path
            The written file.
        """
        path = Path(path)
        mode = "w:gz" if path.suffix in (".gz", ".tgz") else "w"
        with tarfile.open(path, mode) as tar:
            tar.add(self.path, arcname=self.key)
        return path

    def content_digest(self):
        """SHA-256 of the manifest, which records the digests of ``env/`` and ``snapshot/``.

        With :meth:`verify`, this one value identifies the whole cache: publish it next to a
        packed archive and pass it to :meth:`unpack` as ``expected_digest``.

        Returns
        -------
        digest : str
            Hex SHA-256 of ``manifest.json``.
        """
        return hashlib.sha256((self.path / _MANIFEST).read_bytes()).hexdigest()

    @classmethod
    def unpack(cls, path, root=None, *, expected_digest=None, python=None):
        """Restore a cache written by :meth:`pack`, refusing what this host cannot verify.

        The archive must hold one cache folder named by its 64-hex-digit key with only
        ``manifest.json``, ``env/`` and ``snapshot/``, made of plain files, folders and
        symbolic links (no device, FIFO or hard link); its files get this process's owner and
        lose write bits as in a build; the recomputed digests must equal the manifest's; the
        manifest's interpreter must be ``python`` (default: the running one's base
        interpreter), since a sandbox binds that interpreter's installation into every task.

        The digests prove the archive consistent, not authentic: whoever wrote it could have
        written matching digests. Pass ``expected_digest`` (the :meth:`content_digest` of the
        cache you mean, obtained through a channel you trust) to refuse any other cache. The
        restored cache goes to ``<root>/unpacked-<key>``, never to the folder a build with the
        same inputs would return, so :meth:`from_venv` and :meth:`from_requirements` keep
        building their own.

        Parameters
        ----------
        path : str or path-like
            The tar file.
        root : str or path-like, default=None
            Folder of the caches; default :func:`default_cache_root`.
        expected_digest : str, default=None
            The :meth:`content_digest` the restored cache must have. None: any self-consistent
            cache for this host's interpreter is accepted.
        python : str or path-like, default=None
            The interpreter the cache must have been built for (an executable of this host);
            default: the running interpreter's base interpreter.

        Returns
        -------
        cache : EnvironmentCache
            The restored cache (at ``<root>/unpacked-<key>``).

        Raises
        ------
        ValueError
            If the archive is not a single cache folder, holds an entry of another kind or
            outside the digested ones, its content does not match its manifest, its
            interpreter is not ``python`` on this host, its digest is not ``expected_digest``,
            or another cache with the same key was unpacked into ``root`` before.
        """
        if expected_digest is not None and not (
                isinstance(expected_digest, str) and _KEY.fullmatch(expected_digest)):
            raise ValueError(f"expected_digest must be a hex SHA-256 (64 lowercase hex "
                             f"digits) or None; got {expected_digest!r}")
        exe, prefix, version = _host_interpreter(python)
        root = Path(root) if root is not None else default_cache_root()
        root.mkdir(parents=True, exist_ok=True)
        tmp = root / f".unpack-{uuid.uuid4().hex}"
        tmp.mkdir()
        uid, gid = os.geteuid(), os.getegid()

        def own(member, dest):  # tar's safety filter, and this process owns every file
            member = tarfile.tar_filter(member, dest)
            return member.replace(uid=uid, gid=gid, uname=None, gname=None, deep=False)

        try:
            try:
                tar = tarfile.open(path)
            except tarfile.TarError as exc:
                raise ValueError(f"{path} is not a tar file: {exc}") from None
            with tar:
                members = tar.getmembers()
                names = {m.name.split("/", 1)[0] for m in members}
                if len(names) != 1 or not _KEY.fullmatch(next(iter(names))):
                    raise ValueError(f"{path} is not a packed environment cache "
                                     f"(top-level entries: {sorted(names)[:5]})")
                (key,) = names
                for m in members:
                    parts = m.name.split("/")
                    if len(parts) > 1 and parts[1] not in _CACHE_ENTRIES:
                        raise ValueError(f"{path}: refused: {m.name!r} is outside the "
                                         f"digested entries {sorted(_CACHE_ENTRIES)}")
                    if not (m.isreg() or m.isdir() or m.issym()):
                        raise ValueError(f"{path}: refused: {m.name!r} is not a plain file, "
                                         f"folder or symbolic link")
                try:
                    tar.extractall(tmp, filter=own)
                except tarfile.TarError as exc:
                    raise ValueError(f"{path}: refused: {exc}") from None
            try:
                cache = cls(tmp / key)
                recorded = (cache.manifest["key"], cache.manifest["env_sha256"],
                            cache.manifest["python"]["executable"],
                            cache.manifest["python"]["prefix"])
            except (ValueError, KeyError, TypeError, FileNotFoundError) as exc:
                raise ValueError(f"{path}: not a packed environment cache (its manifest: "
                                 f"{exc!r})") from None
            for sub in ("env", "snapshot"):
                if (tmp / key / sub).is_dir():
                    _make_readonly(tmp / key / sub)
            if recorded[0] != key or not cache.env_dir.is_dir() or not cache.verify():
                raise ValueError(f"{path}: content does not match its manifest")
            if (recorded[2], recorded[3]) != (str(exe), str(prefix)) or (
                    cache.manifest["python"].get("version") != version):
                raise ValueError(
                    f"{path}: refused: built for the interpreter {recorded[2]!r} (prefix "
                    f"{recorded[3]!r}, version {cache.manifest['python'].get('version')!r}); "
                    f"this host would run it on {str(exe)!r} (prefix {str(prefix)!r}, version "
                    f"{version!r}). A sandbox binds the interpreter's installation into every "
                    f"task, so only an interpreter this host names is used: pass python= to "
                    f"name another one")
            check_python_install(exe, prefix)
            digest = cache.content_digest()
            if expected_digest is not None and digest != expected_digest:
                raise ValueError(f"{path}: refused: its content digest is {digest}, not the "
                                 f"expected_digest {expected_digest}")
            final = root / f"{_UNPACKED}{key}"
            if (final / _MANIFEST).is_file():
                if cls(final).content_digest() != digest or not cls(final).verify():
                    raise ValueError(f"{path}: another cache with key {key[:12]} was unpacked "
                                     f"into {final} before; remove it first")
            else:
                os.chmod(tmp / key, 0o755)
                os.rename(tmp / key, final)
                os.chmod(final, 0o555)
        finally:
            _rmtree(tmp)
        return cls(final)

    def remove(self):
        """Delete the cache folder (no sandbox may be using it)."""
        _rmtree(self.path)


def tree_digest_source(path):
    """Digest of a source package folder, without byte-code caches."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_NAMES and d != ".git")
        for name in sorted(filenames):
            if name.endswith(".pyc"):
                continue
            full = os.path.join(dirpath, name)
            with open(full, "rb") as f:
                h.update(f"{os.path.relpath(full, path)}\n".encode())
                h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()


def create_venv_offline(dest, requirements, find_links, python=None):
    """Create a virtual environment and ``pip install`` into it from local wheels only.

    Parameters
    ----------
    dest : str or path-like
        Folder of the new environment.
    requirements : list of str
        Requirement specifiers.
    find_links : list of str or path-like
        Local wheel folders (``pip install --no-index --find-links``).
    python : str or path-like, default=None
        Base interpreter; default: the running one's.

    Returns
    -------
    dest : pathlib.Path
        The environment.
    """
    exe = str(python or getattr(sys, "_base_executable", sys.executable))
    dest = Path(dest)
    subprocess.run([exe, "-m", "venv", "--without-pip", str(dest)], check=True,
                   capture_output=True)
    cmd = [sys.executable, "-m", "pip", "--python", str(dest / "bin" / "python"), "install",
           "--no-index", "--disable-pip-version-check", "-q"]
    for link in find_links:
        cmd += ["--find-links", str(link)]
    subprocess.run(cmd + list(requirements), check=True, capture_output=True)
    return dest
