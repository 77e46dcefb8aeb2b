"""The first process inside a sandbox: assemble its root, then start and watch the task.

This file is run by the base Python interpreter with ``-I -S`` (standard library only, no
site-packages) as the child of util-linux ``unshare``, i.e. already inside fresh mount, PID,
network, UTS and IPC namespaces (and a user namespace unless the sandbox runs in root mode).
It is PID 1 of the new PID namespace, which gives two guarantees: when it exits, the kernel
kills every process left in the namespace, and the mounts it made exist only in its mount
namespace, so they vanish with the namespace's last process.

Steps: mount a tmpfs as the new root; bind the host's system directories and the base Python
installation into it read-only; mount an overlay whose lower layer is the environment cache and
whose upper layer is the task's own folder at ``/env``; the workspace at ``/workspace`` (an
overlay over a snapshot or a plain task folder); a private ``/tmp``, ``/dev`` and ``/proc``;
then ``pivot_root`` into it and detach the host's tree. The task runs in a child process with
resource limits, inside a further user and mount namespace (userns mode) that locks every mount
so the task cannot remount or unmount them, or as the unprivileged ``nobody`` user (root mode).
PID 1 reaps every process, enforces the wall-clock limit and kills the namespace when the host
side goes away (end of file on its lifeline pipe).

Its only input is a JSON file named on the command line; it reports failures of its own on
stderr with exit code 125.
"""

import ctypes
import ctypes.util
import json
import os
import platform
import resource
import select
import signal
import socket
import sys
import time

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND = 32, 1024, 2048, 4096
MS_REC, MS_PRIVATE, MS_RELATIME = 16384, 1 << 18, 1 << 21
MNT_DETACH = 2
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
# pivot_root has no glibc wrapper: its system call number per architecture
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "ppc64le": 203, "s390x": 217, "riscv64": 41}
# statvfs flag -> mount flag, so that a read-only remount keeps the locked flags
_ST_TO_MS = {os.ST_NOSUID: MS_NOSUID, os.ST_NODEV: MS_NODEV, os.ST_NOEXEC: MS_NOEXEC,
             os.ST_NOATIME: MS_NOATIME, os.ST_NODIRATIME: MS_NODIRATIME,
             os.ST_RELATIME: MS_RELATIME}
SETUP_FAILED = 125
_PEAK = [None]  # peak resident memory of the task (KiB), from wait4
NOBODY = 65534

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _fail(message):
    sys.stderr.write(f"sandbox setup failed: {message}\n")
    sys.stderr.flush()
    os._exit(SETUP_FAILED)


def _check(ret, what):
    if ret != 0:
        errno = ctypes.get_errno()
        _fail(f"{what}: {os.strerror(errno)} (errno {errno})")


def _enc(text):
    return None if text is None else os.fsencode(text)


def _mount(source, target, fstype, flags, data=None):
    enc = _enc
    _check(_libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags),
                       enc(data)), f"mount {fstype or 'bind'} {source} on {target}")


def _bind(source, target, readonly=True):
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            open(target, "a").close()
    _mount(source, target, None, MS_BIND | MS_REC)
    if readonly:
        flags = MS_BIND | MS_REMOUNT | MS_RDONLY
        st = os.statvfs(target).f_flag
        for st_flag, ms_flag in _ST_TO_MS.items():
            if st & st_flag:
                flags |= ms_flag
        _mount(None, target, None, flags)


def _write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, mode)


def _assemble(cfg):
    root = cfg["root"]
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("sandbox-root", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")

    def join(path):
        return os.path.join(root, path.lstrip("/"))

    for src, dst in cfg["binds"]:
        if os.path.exists(src):
            _bind(src, join(dst), readonly=True)
    for link, target in cfg["symlinks"]:
        os.makedirs(os.path.dirname(join(link)), exist_ok=True)
        os.symlink(target, join(link))
    for spec in cfg["overlays"]:
        target = join(spec["target"])
        os.makedirs(target, exist_ok=True)
        data = f"lowerdir={spec['lower']},upperdir={spec['upper']},workdir={spec['work']}"
        if cfg["userns"]:
            # user.* extended attributes: what an overlay mounted inside a user namespace uses
            ret = _libc.mount(b"overlay", os.fsencode(target), b"overlay",
                              ctypes.c_ulong(MS_NOSUID | MS_NODEV),
                              os.fsencode(data + ",userxattr"))
            if ret == 0:
                continue
        # no device node or set-user-ID file of a cache or workspace works inside
        _mount("overlay", target, "overlay", MS_NOSUID | MS_NODEV, data)
    for src, dst in cfg["rw_binds"]:
        _bind(src, join(dst), readonly=False)
    for dst in ("tmp", "dev/shm"):
        os.makedirs(join(dst), exist_ok=True)
        _mount("tmpfs", join(dst), "tmpfs", MS_NOSUID | MS_NODEV,
               f"mode=1777,size={cfg['tmp_size_mb']}m")
    for dev in ("null", "zero", "full", "random", "urandom"):
        _bind(f"/dev/{dev}", join(f"dev/{dev}"), readonly=False)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, join(f"dev/{name}"))
    os.makedirs(join("proc"), exist_ok=True)
    _mount("proc", join("proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for path, text in cfg["files"].items():
        _write(join(path), text)
    os.makedirs(join("root"), exist_ok=True)
    if not cfg["userns"]:
        os.chmod(join("tmp"), 0o1777)
    # the root itself becomes read-only; writable places are /workspace, /env's upper, /tmp
    _mount(None, root, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    _pivot(root)


def _pivot(root):
    os.chdir(root)
    number = SYS_PIVOT_ROOT.get(platform.machine())
    if number is not None and _libc.syscall(number, b".", b".") == 0:
        # the old root is stacked on the new one: detach it, the host tree is gone
        _check(_libc.umount2(b".", MNT_DETACH), "detach the old root")
    else:
        os.chroot(".")
    os.chdir("/")


def _lock_mounts():
    """A further user and mount namespace: the mounts become locked for the task."""
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare the task's user namespace")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as fh:
            fh.write(text)


def _limit(cfg):
    for name, value in cfg["rlimits"].items():
        resource.setrlimit(getattr(resource, name), (value, value))


def _start_task(cfg, lifeline, status_fd):
    pid = os.fork()
    if pid:
        return pid
    try:
        os.close(lifeline)
        os.close(status_fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        if cfg["userns"]:
            _lock_mounts()
        else:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
        os.chdir(cfg["cwd"])
        _limit(cfg)
        os.execvpe(cfg["argv"][0], cfg["argv"], cfg["env"])
    except BaseException as exc:  # noqa: BLE001 - any failure before exec is reported
        sys.stderr.write(f"sandbox could not start {cfg['argv'][0]!r}: {exc}\n")
        sys.stderr.flush()
        os._exit(127 if isinstance(exc, FileNotFoundError) else SETUP_FAILED)


def _watch(main_pid, lifeline, timeout):
    """Reap every child until the task ends.

    Returns the task's exit code (minus the signal number when a signal ended it),
    ``"timeout"`` past the wall-clock limit, or None when the host side went away.
    """
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    deadline = None if timeout is None else time.monotonic() + timeout
    status = None
    while True:
        while True:
            try:
                pid, st, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                pid = 0
            if pid == 0:
                break
            if pid == main_pid:
                status = os.waitstatus_to_exitcode(st)
                _PEAK[0] = usage.ru_maxrss  # the task and the descendants it waited for
        if status is not None:
            return status
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return "timeout"
        ready, _, _ = select.select([wake_r, lifeline], [], [], left)
        if lifeline in ready and not os.read(lifeline, 1):
            return None  # the host side is gone: end the namespace
        if wake_r in ready:
            os.read(wake_r, 512)


def main(config_path):
    with open(config_path) as fh:
        cfg = json.load(fh)
    lifeline = cfg["lifeline_fd"]
    # opened before the host tree is detached; the task never sees it
    status_fd = os.open(cfg["status"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        _assemble(cfg)
        socket.sethostname(cfg["hostname"])
    except OSError as exc:
        _fail(str(exc))
    main_pid = _start_task(cfg, lifeline, status_fd)
    code = _watch(main_pid, lifeline, cfg["timeout"])
    status = {"returncode": code if isinstance(code, int) else -signal.SIGKILL,
              "timed_out": code == "timeout", "host_gone": code is None,
              "max_rss_kb": _PEAK[0]}
    os.write(status_fd, json.dumps(status).encode())
    os.close(status_fd)
    # exiting PID 1 makes the kernel kill whatever the task left running
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1])
