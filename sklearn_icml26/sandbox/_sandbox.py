"""TaskSandbox: a container-free isolated workspace over a cached environment.

Method: "SWE-MiniSandbox" (ICML 2026, arXiv:2602.11210) replaces a container per task by
kernel namespaces, an overlay over a pre-built environment and a per-task writable layer.
"""

import errno
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from numbers import Integral, Real
from pathlib import Path

from ._cache import EnvironmentCache, _rmtree, check_python_install
from ._limits import ControlGroup, SandboxLimits

__all__ = ["SandboxError", "SandboxResult", "SandboxUnavailableError", "TaskSandbox",
           "Change", "check_sandbox_support"]

_INSIDE = Path(__file__).with_name("_inside.py")
_NAMESPACES = ["--mount", "--pid", "--net", "--uts", "--ipc", "--fork", "--kill-child"]
_SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"]
_ETC_FILES = ["/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
              "/etc/alternatives", "/etc/mime.types"]
_PASS_ENV = ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "LANG", "LC_ALL", "TZ"]
_LAUNCH = ('n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; '
           'n=$((n-1)); done; exec "$@"')
_SETUP_FAILED = 125
_STALE_PREFIX = "task-"
_HOSTNAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,62}[A-Za-z0-9])?")
# the host's backstop timer and the inner select() overflow near 2**63 ns
_MAX_TIMEOUT = 10.0**9
_support_cache = {}
_support_lock = threading.RLock()


class SandboxUnavailableError(RuntimeError):
    """This machine cannot isolate a task (the message names what is missing)."""


class SandboxError(RuntimeError):
    """A sandbox could not be assembled, or a sandboxed call failed."""


@dataclass
class SandboxResult:
    """What :meth:`TaskSandbox.run` returns.

    Parameters
    ----------
    returncode : int
        Exit code of the task's main process; ``128 + n`` when signal ``n`` ended it,
        137 after a timeout.
    stdout, stderr : bytes
        What the task wrote (at most ``max_output_bytes`` of each).
    seconds : float
        Wall-clock seconds from launch to the end of the namespace (setup included).
    timed_out : bool
        Whether the wall-clock limit ended the task (its whole process tree is killed).
    peak_memory_mb : float
        Largest peak resident memory of one process of the task, in MiB: ``wait4`` on the
        task's main process, which covers the descendants it waited for (nan when the task
        did not end by itself).
    """

    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float
    timed_out: bool = False
    peak_memory_mb: float = float("nan")

    @property
    def ok(self):
        """Whether the task exited with code 0."""
        return self.returncode == 0 and not self.timed_out


@dataclass(frozen=True, order=True)
class Change:
    """One entry of :meth:`TaskSandbox.changed_files`.

    Parameters
    ----------
    path : str
        Path inside the sandbox (``/workspace/...`` or ``/env/...``).
    kind : {"written", "deleted"}, default="written"
        Created or modified, or deleted (an overlay whiteout over the cache or snapshot).
    """

    path: str
    kind: str = field(default="written")


def _fail_reason(mode):
    """Why ``mode`` cannot work here (None when nothing obvious is missing)."""
    if sys.platform != "linux":
        return f"Linux namespaces are needed; this is {sys.platform}"
    if shutil.which("unshare") is None:
        return "the util-linux 'unshare' command is not installed"
    if mode == "root" and os.geteuid() != 0:
        return "root mode needs uid 0; this process runs as uid " + str(os.geteuid())
    if mode == "userns":
        try:
            if int(Path("/proc/sys/user/max_user_namespaces").read_text()) == 0:
                return "user namespaces are disabled (user.max_user_namespaces = 0)"
        except (OSError, ValueError):
            pass
        clone = Path("/proc/sys/kernel/unprivileged_userns_clone")
        if os.geteuid() != 0 and clone.exists() and clone.read_text().strip() == "0":
            return ("unprivileged user namespaces are disabled "
                    "(kernel.unprivileged_userns_clone = 0)")
    return None


def check_sandbox_support(mode="auto"):
    """Which isolation mode works on this machine, probed once by assembling a sandbox.

    Parameters
    ----------
    mode : {"auto", "userns", "root"}, default="auto"
        ``"userns"``: user namespace (works unprivileged where the kernel allows, and as
        root); ``"root"``: no user namespace, the task runs as ``nobody`` (needs uid 0);
        ``"auto"``: ``"userns"``, else ``"root"``.

    Returns
    -------
    mode : str
        ``"userns"`` or ``"root"``.

    Raises
    ------
    SandboxUnavailableError
        When no mode works; the message names what is missing for each (never a silent
        fallback to running unisolated).
    ValueError
        If ``mode`` is not one of the above.
    """
    if mode not in ("auto", "userns", "root"):
        raise ValueError(f"mode must be 'auto', 'userns' or 'root'; got {mode!r}")
    candidates = ["userns", "root"] if mode == "auto" else [mode]
    reasons = []
    for candidate in candidates:
        with _support_lock:  # one probe per mode, even when threads start sandboxes at once
            if candidate not in _support_cache:
                reason = _fail_reason(candidate)
                if reason is None:
                    reason = _probe(candidate)
                _support_cache[candidate] = reason
            reason = _support_cache[candidate]
        if reason is None:
            return candidate
        reasons.append(f"{candidate} mode: {reason}")
    raise SandboxUnavailableError("no sandbox can be assembled on this machine; "
                                  + "; ".join(reasons))


def _probe(mode):
    _support_cache[mode] = None  # let the probe's own sandbox be built in this mode
    try:
        with TaskSandbox(None, mode=mode) as box:
            res = box.run(["/bin/sh", "-c", "echo ok > /workspace/probe"], timeout=20)
            if res.returncode != 0 or not (box.upper / "workspace" / "probe").exists():
                return ("the probe task failed: "
                        + res.stderr.decode(errors="replace").strip()[-400:])
    except (SandboxError, OSError) as exc:
        return str(exc)
    return None


def default_sandbox_dir():
    """Folder of the sandbox folders: ``$SKLEARN_ICML26_SANDBOX_DIR`` or a per-user temp one."""
    env = os.environ.get("SKLEARN_ICML26_SANDBOX_DIR")
    return (Path(env) if env else
            Path(tempfile.gettempdir()) / f"sklearn_icml26_sandboxes-{os.geteuid()}")


def cleanup_stale(base_dir=None):
    """Remove the folders of sandboxes whose owning process is gone (after a host crash).

    Parameters
    ----------
    base_dir : str or path-like, default=None
        Folder of the sandbox folders; default ``$SKLEARN_ICML26_SANDBOX_DIR`` or
        ``<tempdir>/sklearn_icml26_sandboxes-<uid>``.

    Returns
    -------
    removed : list of pathlib.Path
        The folders removed.
    """
    base = Path(base_dir) if base_dir is not None else default_sandbox_dir()
    removed = []
    if not base.is_dir():
        return removed
    for path in base.glob(f"{_STALE_PREFIX}*"):
        try:
            owner = int(path.name.split("-")[1])
        except (IndexError, ValueError):
            continue
        if owner != os.getpid() and not Path(f"/proc/{owner}").exists():
            _rmtree(path)
            removed.append(path)
    return removed


class TaskSandbox:
    """An isolated, disposable workspace in which to run an untrusted task.

    Each :meth:`run` starts its command in fresh mount, PID, network, UTS and IPC namespaces
    (plus a user namespace in ``"userns"`` mode) whose root is assembled from scratch: the
    host's system folders and base Python read-only, the environment cache at ``/env`` as the
    lower layer of an overlay whose upper layer belongs to this sandbox, ``/workspace``
    (writable; an overlay over the cache's snapshot or ``workspace`` when given), private
    ``/tmp``, ``/dev`` and ``/proc``. The host's other files, processes and network are not
    there. What the task writes stays in the sandbox's own folder (see :meth:`changed_files`)
    and is deleted by :meth:`close`. Mounts exist only inside the task's mount namespace, so
    none outlives the task, whatever way it ends.

    Parameters
    ----------
    cache : EnvironmentCache or None
        Environment mounted at ``/env`` (its interpreter is ``/env/bin/python``); None runs
        with the host's system folders only.
    workspace : str or path-like, default=None
        Host folder shown read-only under ``/workspace``'s writable layer (like the cache's
        snapshot, which it replaces).
    mode : {"auto", "userns", "root"}, default="auto"
        Isolation mode, see :func:`check_sandbox_support`.
    limits : SandboxLimits or dict, default=None
        Resource limits (default :class:`SandboxLimits` ()).
    env : dict of str to str, default=None
        Extra environment variables of every run (added to a minimal environment).
    hostname : str, default="sandbox"
        Host name inside: 1 to 64 letters, digits, ``-`` and ``.``.
    base_dir : str or path-like, default=None
        Where the sandbox folder is created (same file system for its layers); default
        ``$SKLEARN_ICML26_SANDBOX_DIR`` or ``<tempdir>/sklearn_icml26_sandboxes-<uid>``.
    max_output_bytes : int, default=16 MiB
        Most bytes of stdout and of stderr kept per run (>= 0; the rest is dropped).

    Attributes
    ----------
    mode : str
        The isolation mode in use.
    path : pathlib.Path
        The sandbox's host folder (None before :meth:`open` / after :meth:`close`).
    enforced_limits : list of str
        The mechanisms enforcing the limits on the last run (rlimits, cgroup files).

    Raises
    ------
    SandboxUnavailableError
        When neither mode works on this machine (the message says what is missing).
    ValueError
        If ``hostname``, ``max_output_bytes``, ``env`` or ``workspace`` is not as described.
    SandboxError
        If the cache's interpreter is not a Python installation of this host (see
        :func:`~sklearn_icml26.sandbox.EnvironmentCache.unpack`).

    See Also
    --------
    EnvironmentCache : Builds the environment.
    run_in_sandbox : Runs a Python call in a sandbox.

    Notes
    -----
    Threat model: see the user guide's sandbox page. In short, a task cannot read or write
    the host's files other than the read-only system folders, the base Python and the cache;
    cannot see or signal host processes; has no network (only a loopback interface that is
    down); cannot remount or unmount anything (its mounts are locked in a nested user
    namespace, or it runs as ``nobody``); and is bounded in time, memory, processes and file
    size. It shares the host's kernel, CPU time, and the contents of ``/usr``.

    Examples
    --------
    >>> from sklearn_icml26.sandbox import TaskSandbox, sandbox_available
    >>> if sandbox_available():
    ...     with TaskSandbox(None) as box:
    ...         res = box.run(["/bin/sh", "-c", "echo hi > /workspace/out; hostname"])
    ...         print(res.returncode, res.stdout.decode().strip(), box.changed_files())
    ... else:
    ...     print("0 sandbox [Change(path='/workspace/out', kind='written')]")
    0 sandbox [Change(path='/workspace/out', kind='written')]
    """

    def __init__(self, cache=None, *, workspace=None, mode="auto", limits=None, env=None,
                 hostname="sandbox", base_dir=None, max_output_bytes=16 * 2**20):
        if cache is not None and not isinstance(cache, EnvironmentCache):
            raise TypeError(f"cache must be an EnvironmentCache or None; got "
                            f"{type(cache).__name__}")
        if limits is None:
            limits = SandboxLimits()
        elif isinstance(limits, dict):
            limits = SandboxLimits(**limits)
        elif not isinstance(limits, SandboxLimits):
            raise TypeError(f"limits must be a SandboxLimits or a dict; got "
                            f"{type(limits).__name__}")
        if workspace is not None and not Path(workspace).is_dir():
            raise ValueError(f"workspace must be an existing folder; got {workspace}")
        if not isinstance(hostname, str) or not _HOSTNAME.fullmatch(hostname):
            raise ValueError(
                "hostname must be a str of 1 to 64 letters, digits, '-' and '.' that starts "
                f"and ends with a letter or digit (the kernel's limit is 64); got "
                f"{_show(hostname)}")
        if (isinstance(max_output_bytes, bool) or not isinstance(max_output_bytes, Integral)
                or max_output_bytes < 0):
            raise ValueError(f"max_output_bytes must be an int >= 0 (bytes kept of stdout and "
                             f"of stderr; there is no unlimited setting); got "
                             f"{_show(max_output_bytes)}")
        self.cache, self.limits, self.hostname = cache, limits, hostname
        if cache is not None:
            self._python_prefix()
        self.workspace = Path(workspace).resolve() if workspace is not None else None
        self.env = _check_env(env, "env")
        self.base_dir = Path(base_dir) if base_dir is not None else default_sandbox_dir()
        self.max_output_bytes = int(max_output_bytes)
        self.mode = check_sandbox_support(mode)
        self.path = None
        self.enforced_limits = []
        self._lock = threading.Lock()

    def _python_prefix(self):
        """The cache's interpreter installation, once this host accepts it as one."""
        python = self.cache.manifest.get("python") or {}
        try:
            check_python_install(python.get("executable", ""), python.get("prefix", ""))
        except ValueError as exc:
            raise SandboxError(f"cache {self.cache.path}: {exc}; refusing to bind it into a "
                               f"task") from None
        return str(python["prefix"])

    # -- life cycle ----------------------------------------------------------------------------
    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()
        return False

    def open(self):
        """Create the sandbox's host folder (its layers).

        Returns
        -------
        self : TaskSandbox
            The open sandbox.
        """
        if self.path is not None:
            return self
        self.base_dir.mkdir(parents=True, exist_ok=True)
        cleanup_stale(self.base_dir)
        self.path = Path(tempfile.mkdtemp(prefix=f"{_STALE_PREFIX}{os.getpid()}-",
                                          dir=self.base_dir))
        for name in ("upper/env", "work/env", "upper/workspace", "work/workspace", "io",
                     "root"):
            (self.path / name).mkdir(parents=True)
        if self.mode == "root":  # the task runs as nobody: its writable places are its own
            for name in ("upper/workspace", "io"):
                os.chown(self.path / name, 65534, 65534)
        return self

    def close(self):
        """Remove everything the sandbox made (its processes are gone by then)."""
        if self.path is not None:
            _rmtree(self.path)
            self.path = None

    @property
    def upper(self):
        """Host folder of the writable layers (``env/``, ``workspace/``)."""
        self._check_open()
        return self.path / "upper"

    def _check_open(self):
        if self.path is None:
            raise SandboxError("the sandbox is closed; use it as a context manager or call "
                               "open() first")

    # -- running -------------------------------------------------------------------------------
    def _config(self, argv, timeout, cwd, env, lifeline):
        root = self.path / "root"
        binds, symlinks = [], []
        for d in _SYSTEM_DIRS:
            if os.path.islink(d):
                symlinks.append((d, os.readlink(d)))
            elif os.path.isdir(d):
                binds.append((d, d))
        for f in _ETC_FILES:
            if os.path.exists(f):
                binds.append((os.path.realpath(f), f))
        overlays, rw_binds = [], []
        if self.cache is not None:
            prefix = self._python_prefix()
            if not any(prefix == d or prefix.startswith(d + "/") for d, _ in binds):
                binds.append((prefix, prefix))
            overlays.append({"target": "/env", "lower": str(self.cache.env_dir),
                             "upper": str(self.path / "upper/env"),
                             "work": str(self.path / "work/env")})
        lower = self.workspace or (self.cache.snapshot_dir if self.cache is not None else None)
        if lower is not None:
            overlays.append({"target": "/workspace", "lower": str(lower),
                             "upper": str(self.path / "upper/workspace"),
                             "work": str(self.path / "work/workspace")})
        else:
            rw_binds.append((str(self.path / "upper/workspace"), "/workspace"))
        rw_binds.append((str(self.path / "io"), "/.sandbox"))
        for spec in overlays:
            for key in ("lower", "upper", "work"):
                if any(c in spec[key] for c in ",:\\"):
                    raise SandboxError(f"overlay paths may not hold ',', ':' or '\\': "
                                       f"{spec[key]}")
        base_env = {"PATH": "/env/bin:/usr/local/bin:/usr/bin:/bin", "HOME": "/workspace",
                    "TMPDIR": "/tmp", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
                    "PYTHONUNBUFFERED": "1"}
        base_env.update({k: os.environ[k] for k in _PASS_ENV if k in os.environ})
        base_env.update(self.env)
        base_env.update(env or {})
        files = {"/etc/passwd": "root:x:0:0:root:/workspace:/bin/sh\n"
                                "nobody:x:65534:65534:nobody:/workspace:/bin/sh\n",
                 "/etc/group": "root:x:0:\nnogroup:x:65534:\n",
                 "/etc/hosts": f"127.0.0.1 localhost {self.hostname}\n",
                 "/etc/hostname": self.hostname + "\n", "/etc/resolv.conf": ""}
        return {"root": str(root), "binds": binds, "symlinks": symlinks, "overlays": overlays,
                "rw_binds": rw_binds, "files": files, "userns": self.mode == "userns",
                "tmp_size_mb": self.limits.tmp_size_mb, "hostname": self.hostname,
                "argv": [str(a) for a in argv], "env": base_env, "cwd": cwd,
                "timeout": timeout, "rlimits": self.limits.rlimits(),
                "lifeline_fd": lifeline, "status": str(self.path / "status.json")}

    def run(self, argv, *, timeout=None, input=None, env=None, cwd="/workspace"):
        """Run a command in the sandbox and wait for it (and every process it started).

        Parameters
        ----------
        argv : list of str
            The command; ``argv[0]`` is looked up on the sandbox's ``PATH`` (``/env/bin``
            first).
        timeout : float, default=None
            Wall-clock limit in seconds, finite and positive; past it the task's whole process
            tree is killed and ``timed_out`` is set. None: no limit.
        input : bytes, default=None
            Standard input of the task (bytes-like; a str is refused, as by
            ``subprocess.run`` without ``text=True``: encode it first).
        env : dict of str to str, default=None
            Extra environment variables of this run.
        cwd : str, default="/workspace"
            Working directory inside the sandbox.

        Returns
        -------
        result : SandboxResult
            Exit code, output, seconds, timeout flag, peak memory.

        Raises
        ------
        SandboxError
            If the sandbox could not be assembled (the message carries the reason).
        ValueError
            If ``argv`` is empty, ``timeout`` is not a finite positive number, ``env`` holds
            a name or value that is not a str (or holds ``=`` or a NUL), or ``cwd`` is not an
            absolute path.
        TypeError
            If ``timeout`` is not a number or ``input`` is not bytes-like.
        """
        self._check_open()
        if isinstance(argv, (str, bytes)) or not len(argv):
            raise ValueError(f"argv must be a non-empty list of strings; got {argv!r}")
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, Real):
                raise TypeError(f"timeout must be a number of seconds or None; got "
                                f"{_show(timeout)}")
            if not 0 < timeout <= _MAX_TIMEOUT:  # False for nan and inf as well
                raise ValueError(f"timeout must be a positive, finite number of seconds up "
                                 f"to {_MAX_TIMEOUT:.0e} (None: no limit); got "
                                 f"{_show(timeout)}")
            timeout = float(timeout)
        if input is not None and not isinstance(input, (bytes, bytearray, memoryview)):
            raise TypeError(f"input must be bytes (the task's standard input, as "
                            f"subprocess.run takes it without text=True; encode text first, "
                            f"e.g. text.encode()) or None; got {_show(input)}")
        env = _check_env(env, "env")
        if not isinstance(cwd, str) or not cwd.startswith("/"):
            raise ValueError(f"cwd must be an absolute path inside the sandbox (a str); got "
                             f"{_show(cwd)}")
        with self._lock:
            return self._run(argv, timeout, input, env, cwd)

    def _run(self, argv, timeout, input, env, cwd):
        run_id = uuid.uuid4().hex[:8]
        lifeline_r, lifeline_w = os.pipe()
        cfg_path = self.path / f"run-{run_id}.json"
        out_path, err_path = self.path / f"stdout-{run_id}", self.path / f"stderr-{run_id}"
        status_path = self.path / "status.json"
        status_path.unlink(missing_ok=True)
        cfg = self._config(argv, timeout, cwd, env, lifeline_r)
        cfg_path.write_text(json.dumps(cfg))
        cgroup = ControlGroup(self.limits)
        self.enforced_limits = [f"rlimit {k}" for k in cfg["rlimits"]] + cgroup.enforced
        ns = (["--user", "--map-root-user"] if self.mode == "userns" else []) + _NAMESPACES
        base_python = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
        cmd = (["/bin/sh", "-c", _LAUNCH, "sh", str(len(cgroup.procs_files)),
                *cgroup.procs_files, "unshare", *ns, base_python, "-I", "-S", str(_INSIDE),
                str(cfg_path)])
        stdin = subprocess.DEVNULL
        if input is not None:
            in_path = self.path / f"stdin-{run_id}"
            in_path.write_bytes(bytes(input))
            stdin = open(in_path, "rb")
        start = time.perf_counter()
        killer = None
        try:
            with open(out_path, "wb") as out, open(err_path, "wb") as err:
                proc = subprocess.Popen(cmd, stdin=stdin, stdout=out, stderr=err,
                                        pass_fds=(lifeline_r,), start_new_session=True,
                                        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
            os.close(lifeline_r)
            lifeline_r = None
            if timeout is not None:  # the namespace's PID 1 enforces it; this is a backstop
                killer = threading.Timer(timeout + 10, _killpg, (proc.pid,))
                killer.daemon = True
                killer.start()
            _, wstatus, _ = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(wstatus)
            seconds = time.perf_counter() - start
        finally:
            if killer is not None:
                killer.cancel()
            if lifeline_r is not None:
                os.close(lifeline_r)
            os.close(lifeline_w)
            if stdin is not subprocess.DEVNULL:
                stdin.close()
            cgroup.remove()
        stdout, stderr = _read(out_path, self.max_output_bytes), _read(err_path,
                                                                       self.max_output_bytes)
        for p in (cfg_path, out_path, err_path, self.path / f"stdin-{run_id}"):
            p.unlink(missing_ok=True)
        try:
            status = json.loads(status_path.read_text())
        except (OSError, ValueError):
            raise SandboxError(
                f"the sandbox could not be assembled (launcher exit code {proc.returncode}): "
                + stderr.decode(errors="replace").strip()[-2000:]) from None
        # the task's own peak (wait4 in the namespace's PID 1); the launcher's would count
        # the memory of this process, which the launcher shares until it executes
        peak = status.get("max_rss_kb")
        rss = peak / 1024 if peak is not None else float("nan")
        return SandboxResult(
            returncode=137 if status["timed_out"] else _exit_code(status["returncode"]),
            stdout=stdout, stderr=stderr, seconds=seconds, timed_out=status["timed_out"],
            peak_memory_mb=rss)

    # -- inspecting ----------------------------------------------------------------------------
    def changed_files(self):
        """What the task wrote or deleted, as paths inside the sandbox.

        Returns
        -------
        changes : list of Change
            Sorted; ``kind`` is ``"written"`` (a file, link, FIFO or socket created or
            modified; a folder created, or emptied and made again over one of the cache or
            snapshot) or ``"deleted"`` (overlay whiteout of an entry of the cache or snapshot).
            A folder that only holds changes of its own is not listed by itself.
        """
        self._check_open()
        changes = []
        for layer, mount, lower in self._layers():
            top = self.path / "upper" / layer
            for dirpath, dirnames, filenames in os.walk(top):
                for name in filenames + dirnames:
                    full = os.path.join(dirpath, name)
                    rel = os.path.relpath(full, top)
                    st = os.lstat(full)
                    if stat.S_ISDIR(st.st_mode):
                        # a copied-up parent of a change is not a change; a new folder, or
                        # one made opaque (deleted, then made again), is
                        was_dir = lower is not None and os.path.isdir(lower / rel) and \
                            not os.path.islink(lower / rel)
                        if was_dir and not _opaque(full):
                            continue
                        kind = "written"
                    else:
                        deleted = stat.S_ISCHR(st.st_mode) and st.st_rdev == 0
                        kind = "deleted" if deleted else "written"
                    changes.append(Change(f"{mount}/{rel}", kind))
        return sorted(changes)

    def _layers(self):
        lower_ws = self.workspace or (self.cache.snapshot_dir if self.cache is not None
                                      else None)
        return (("env", "/env", self.cache.env_dir if self.cache is not None else None),
                ("workspace", "/workspace", lower_ws))

    def read_file(self, path):
        """Bytes of a file the task wrote (from the sandbox's writable layer).

        Only a regular file is read, and never by following what the task may have put in
        its place: a folder, FIFO, socket or device is refused at once (reading a FIFO would
        wait for a writer that will never come).

        Parameters
        ----------
        path : str
            Path inside the sandbox, under ``/workspace`` or ``/env``.

        Returns
        -------
        data : bytes
            The file's content.

        Raises
        ------
        FileNotFoundError
            If the task did not write that file, or deleted it (the message names ``path``
            inside the sandbox).
        IsADirectoryError
            If ``path`` is a folder.
        ValueError
            If ``path`` is not under ``/workspace`` or ``/env``, leaves it through ``..`` or
            a link, or is not a regular file (a FIFO, socket or device).
        """
        self._check_open()
        if not isinstance(path, str):
            raise ValueError(f"path must be a str under /workspace/ or /env/; got "
                             f"{_show(path)}")
        for layer in ("workspace", "env"):
            prefix = f"/{layer}/"
            if path.startswith(prefix):
                top = (self.path / "upper" / layer).resolve()
                target = (top / path[len(prefix):]).resolve()
                if target != top and top not in target.parents:
                    raise ValueError(f"{path} leaves the sandbox's /{layer}")
                return _read_regular(target, path)
        raise ValueError(f"path must be under /workspace/ or /env/; got {path!r}")


def _opaque(path):
    """Whether an overlay upper folder hides the lower one (it was deleted, then made)."""
    for attr in ("trusted.overlay.opaque", "user.overlay.opaque"):
        try:
            if os.getxattr(path, attr, follow_symlinks=False) == b"y":
                return True
        except OSError:
            pass
    return False


def _read_regular(target, shown):
    """Content of the regular file ``target``; errors name ``shown``, never the host path."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, "the task wrote no such file", shown) from None
    _check_regular(st, shown)
    try:
        # O_NONBLOCK: a FIFO swapped in after the check opens at once instead of waiting for
        # a writer; O_NOFOLLOW: a link swapped in is not followed; fstat checks again
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, "the task wrote no such file", shown) from None
    except OSError as exc:  # ELOOP (a link swapped in), ENXIO, EACCES, ...
        raise ValueError(f"{shown} cannot be read as a file the task wrote: "
                         f"{os.strerror(exc.errno)}") from None
    try:
        _check_regular(os.fstat(fd), shown)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as fh:
            fd = None
            return fh.read()
    finally:
        if fd is not None:
            os.close(fd)


def _check_regular(st, shown):
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "a folder, not a file", shown)
    if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:  # overlay whiteout
        raise FileNotFoundError(errno.ENOENT, "the task deleted this file", shown)
    if not stat.S_ISREG(st.st_mode):
        kind = _KINDS.get(stat.S_IFMT(st.st_mode), "special file")
        raise ValueError(f"{shown} is not a regular file (it is a {kind}); only regular "
                         f"files are read")


_KINDS = {stat.S_IFIFO: "FIFO", stat.S_IFSOCK: "socket", stat.S_IFCHR: "character device",
          stat.S_IFBLK: "block device", stat.S_IFLNK: "symbolic link"}


def _show(value):
    """``value`` as a message shows what arrived: its repr (shortened) and its type."""
    text = repr(value)
    if len(text) > 80:
        text = text[:60] + f"... ({len(text)} characters)"
    return f"{text} ({type(value).__name__})"


def _check_env(env, name):
    if env is None:
        return {}
    if not isinstance(env, dict):
        raise ValueError(f"{name} must be a dict of str to str or None; got {_show(env)}")
    for key, value in env.items():
        if not (isinstance(key, str) and isinstance(value, str)) or "=" in key or not key \
                or "\0" in key + value:
            raise ValueError(f"{name} must map names (str without '=' or NUL) to values "
                             f"(str without NUL); got {key!r}: {_show(value)}")
    return dict(env)


def _killpg(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _exit_code(code):
    return 128 - code if code < 0 else code


def _read(path, limit):
    try:
        with open(path, "rb") as fh:
            return fh.read(limit)
    except OSError:
        return b""


def sandbox_available(mode="auto"):
    """Whether :class:`TaskSandbox` works on this machine.

    Parameters
    ----------
    mode : {"auto", "userns", "root"}, default="auto"
        See :func:`check_sandbox_support`.

    Returns
    -------
    available : bool
        False where :func:`check_sandbox_support` raises.

    Examples
    --------
    >>> from sklearn_icml26.sandbox import sandbox_available
    >>> isinstance(sandbox_available(), bool)
    True
    """
    try:
        check_sandbox_support(mode)
    except SandboxUnavailableError:
        return False
    return True
