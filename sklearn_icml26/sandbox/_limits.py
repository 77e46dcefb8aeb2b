"""Resource limits of a sandboxed task: rlimits always, control groups where writable."""

import os
import resource
import shutil
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["SandboxLimits"]

_MB = 2**20


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits applied to every process a sandboxed task starts.

    Each limit is enforced through ``setrlimit`` in the task's process (inherited by all its
    children) and, where the machine lets this process create control groups (cgroup v2 with the
    ``pids``/``memory`` controllers delegated, or the cgroup v1 ``pids``/``memory``
    hierarchies), also through a per-run control group that counts the whole process tree.
    :attr:`TaskSandbox.enforced_limits` says which mechanisms were in force.

    Parameters
    ----------
    memory_mb : int or None, default=2048
        Address-space limit of each process (``RLIMIT_AS``) and memory limit of the whole
        task's control group, in MiB. None: no limit.
    max_processes : int or None, default=128
        Most processes and threads of the task at once: the control group's ``pids.max`` and
        ``RLIMIT_NPROC`` (the latter does not bind a task whose user maps to the host's root,
        which is why the control group matters). None: no limit.
    max_file_size_mb : int or None, default=512
        Largest file the task may write (``RLIMIT_FSIZE``), in MiB; None: no limit.
    cpu_seconds : int or None, default=None
        CPU time of each process (``RLIMIT_CPU``), in seconds; None: no limit. The wall-clock
        limit is the ``timeout`` of :meth:`TaskSandbox.run`.
    open_files : int, default=1024
        Most open file descriptors per process (``RLIMIT_NOFILE``).
    tmp_size_mb : int, default=512
        Size of the task's private ``/tmp`` and ``/dev/shm`` (memory-backed), in MiB.

    Examples
    --------
    >>> from sklearn_icml26.sandbox import SandboxLimits
    >>> SandboxLimits(memory_mb=512, max_processes=32).memory_mb
    512
    """

    memory_mb: int | None = 2048
    max_processes: int | None = 128
    max_file_size_mb: int | None = 512
    cpu_seconds: int | None = None
    open_files: int = 1024
    tmp_size_mb: int = 512

    def __post_init__(self):
        for name, value in asdict(self).items():
            optional = name not in ("open_files", "tmp_size_mb")
            if value is None and optional:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"SandboxLimits.{name} must be a positive int"
                    f"{' or None' if optional else ''}; got {value!r}.")

    def rlimits(self):
        """The ``setrlimit`` values of the task's processes.

        Returns
        -------
        rlimits : dict of str to int
            Value by ``resource`` constant name (``"RLIMIT_AS"``, ...), capped at this
            process's hard limits.
        """
        out = {"RLIMIT_CORE": 0, "RLIMIT_NOFILE": self.open_files}
        if self.memory_mb is not None:
            out["RLIMIT_AS"] = self.memory_mb * _MB
        if self.max_processes is not None:
            out["RLIMIT_NPROC"] = self.max_processes
        if self.max_file_size_mb is not None:
            out["RLIMIT_FSIZE"] = self.max_file_size_mb * _MB
        if self.cpu_seconds is not None:
            out["RLIMIT_CPU"] = self.cpu_seconds
        # never above what this process may grant
        for name, value in list(out.items()):
            _, hard = resource.getrlimit(getattr(resource, name))
            if hard != resource.RLIM_INFINITY and value > hard:
                out[name] = hard
        return out


def _mountinfo():
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            left, _, right = line.partition(" - ")
            fields, (fstype, _, options) = left.split(), right.split()[:3]
            yield fields[4], fstype, set(options.split(","))


def _own_cgroups():
    """This process's cgroup path per v1 controller, and under ``""`` the v2 path."""
    paths = {}
    with open("/proc/self/cgroup") as fh:
        for line in fh:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                paths[controller] = path
    return paths


def _cgroup_parents(controllers=("pids", "memory")):
    """Writable cgroup folders to create per-run groups in: ``(version, {controller: dir})``."""
    own = _own_cgroups()
    mounts = list(_mountinfo())
    parents_v2 = [Path(point) / own[""].lstrip("/") for point, fstype, _ in mounts
                  if fstype == "cgroup2" and "" in own]
    for parent in parents_v2:
        try:
            enabled = (parent / "cgroup.subtree_control").read_text().split()
        except OSError:
            continue
        found = {c: parent for c in controllers if c in enabled}
        if found and os.access(parent, os.W_OK):
            return 2, found
    found = {}
    for point, fstype, options in mounts:
        if fstype != "cgroup":
            continue
        for controller in controllers:
            if controller in options and controller in own and controller not in found:
                parent = Path(point) / own[controller].lstrip("/")
                if parent.is_dir() and os.access(parent, os.W_OK):
                    found[controller] = parent
    return (1, found) if found else (None, {})


class ControlGroup:
    """A per-run control group (v2, or v1 ``pids``/``memory``) holding a task's processes.

    Created empty with its limits written; the launcher adds its own PID through the files of
    :attr:`procs_files` before it starts the namespaces, so that every process of the task is
    counted. :meth:`remove` deletes it once the task's processes are gone.
    """

    def __init__(self, limits):
        self.version, parents = _cgroup_parents()
        self.dirs = {}
        self.enforced = []
        name = f"sklearn-icml26-sandbox-{uuid.uuid4().hex[:12]}"
        for controller, parent in parents.items():
            path = parent / name
            if self.version == 2 and path in self.dirs.values():
                self.dirs[controller] = path
                continue
            try:
                path.mkdir()
            except OSError:
                continue
            self.dirs[controller] = path
        try:
            self._write_limits(limits)
        except OSError:
            self.remove()
            self.version, self.dirs, self.enforced = None, {}, []

    def _write_limits(self, limits):
        pids, memory = self.dirs.get("pids"), self.dirs.get("memory")
        if pids is not None and limits.max_processes is not None:
            (pids / "pids.max").write_text(str(limits.max_processes))
            self.enforced.append(f"cgroup v{self.version} pids.max")
        if memory is not None and limits.memory_mb is not None:
            size = str(limits.memory_mb * _MB)
            if self.version == 2:
                (memory / "memory.max").write_text(size)
                if (memory / "memory.swap.max").exists():
                    (memory / "memory.swap.max").write_text("0")
                self.enforced.append("cgroup v2 memory.max")
            else:
                (memory / "memory.limit_in_bytes").write_text(size)
                memsw = memory / "memory.memsw.limit_in_bytes"
                if memsw.exists():
                    try:
                        memsw.write_text(size)
                    except OSError:
                        pass
                self.enforced.append("cgroup v1 memory.limit_in_bytes")

    @property
    def procs_files(self):
        """The ``cgroup.procs`` files the launcher writes its PID into (one per hierarchy)."""
        return sorted({str(d / "cgroup.procs") for d in self.dirs.values()})

    def peak_memory_mb(self):
        """Peak memory of the group's processes, in MiB (None when not recorded)."""
        memory = self.dirs.get("memory")
        for name in ("memory.peak", "memory.max_usage_in_bytes"):
            if memory is not None and (memory / name).exists():
                try:
                    return int((memory / name).read_text().split()[0]) / _MB
                except (OSError, ValueError):
                    return None
        return None

    def remove(self):
        """Kill what is left in the group and delete it."""
        for path in set(self.dirs.values()):
            for _ in range(50):
                try:
                    if (path / "cgroup.kill").exists():
                        (path / "cgroup.kill").write_text("1")
                    else:
                        for pid in (path / "cgroup.procs").read_text().split():
                            try:
                                os.kill(int(pid), 9)
                            except OSError:
                                pass
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
            else:  # pragma: no cover - a process that would not die
                shutil.rmtree(path, ignore_errors=True)
        self.dirs = {}
