"""TaskSandbox isolation: files, cache, processes, network, limits, escapes, mounts, concurrency.

Every test assembles real sandboxes; they are skipped, with the reason the machine gives, where
namespaces or overlayfs are unavailable (CI runs them as root).
"""

import hashlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from sklearn_icml26.sandbox import (
    Change,
    EnvironmentCache,
    SandboxError,
    SandboxLimits,
    SandboxUnavailableError,
    TaskSandbox,
    check_sandbox_support,
    cleanup_stale,
)
from sklearn_icml26.sandbox import _sandbox as sandbox_module

try:
    MODE = check_sandbox_support()
    REASON = ""
except SandboxUnavailableError as exc:  # pragma: no cover - depends on the kernel
    MODE, REASON = None, str(exc)

pytestmark = pytest.mark.skipif(MODE is None, reason=f"no sandbox on this machine: {REASON}")

PY = "/env/bin/python"


@pytest.fixture(scope="module")
def cache():
    """A one-file environment (threadpoolctl, pure Python) from the running venv."""
    return EnvironmentCache.from_venv(["threadpoolctl"])


def _py(code):
    return [PY, "-I", "-c", textwrap.dedent(code)]


def _mounts():
    return Path("/proc/self/mountinfo").read_text().splitlines()


def _processes_with(token):
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def test_writes_outside_the_workspace_never_reach_the_host(cache, tmp_path):
    host_dir = tmp_path / "host"
    host_dir.mkdir()
    passwd = hashlib.sha256(Path("/etc/passwd").read_bytes()).hexdigest()
    targets = [str(host_dir / "planted"), "/etc/passwd", "/usr/bin/planted-by-task",
               "/planted", "/root/planted", f"{sys.prefix}/planted"]
    code = f"""
        import os
        for path in {targets!r}:
            try:
                with open(path, "a") as fh:
                    fh.write("x")
                print("WROTE", path)
            except OSError as exc:
                print("DENIED", path, exc.errno)
        open("/workspace/result.txt", "w").write("kept")
        open("/tmp/scratch", "w").write("gone")
    """
    with TaskSandbox(cache) as box:
        res = box.run(_py(code), timeout=30)
        assert res.returncode == 0, res.stderr
        out = res.stdout.decode()
        # the sandbox's own /etc/passwd is read-only; nothing else exists or is writable
        assert "WROTE" not in out, out
        assert out.count("DENIED") == len(targets)
        assert box.changed_files() == [Change("/workspace/result.txt")]
        assert box.read_file("/workspace/result.txt") == b"kept"
        folder = box.path
    assert list(host_dir.iterdir()) == []
    assert not Path("/usr/bin/planted-by-task").exists() and not Path("/planted").exists()
    assert not Path(f"{sys.prefix}/planted").exists()
    assert hashlib.sha256(Path("/etc/passwd").read_bytes()).hexdigest() == passwd
    assert not folder.exists()  # close() removed the layers


def test_cache_stays_byte_identical_after_a_task_that_changes_it(cache):
    digest = cache.digest()
    assert digest == cache.manifest["env_sha256"]
    site = next(cache.env_dir.glob("lib/python3*/site-packages"))
    module = site / "threadpoolctl.py"
    inside = "/env/" + str(module.relative_to(cache.env_dir))
    code = f"""
        import os, shutil
        open({inside!r}, "a").write("\\nraise SystemExit('tampered')\\n")
        os.chmod({inside!r}, 0o777)
        open("/env/new_file", "w").write("x")
        os.remove("/env/pyvenv.cfg")
        shutil.rmtree("/env/bin")
    """
    with TaskSandbox(cache) as box:
        res = box.run(_py(code), timeout=30)
        assert res.returncode == 0, res.stderr
        changes = {c.path: c.kind for c in box.changed_files()}
        assert changes[inside] == "written" and changes["/env/new_file"] == "written"
        assert changes["/env/pyvenv.cfg"] == "deleted"
        # the task's changes persist for its later runs (its own upper layer) ...
        again = box.run(["/bin/sh", "-c", f"tail -1 {inside}; ls /env"], timeout=30)
        assert b"tampered" in again.stdout and b"bin" not in again.stdout
    # ... but neither the cache nor a new sandbox sees them
    assert cache.digest() == digest and cache.verify()
    assert "tampered" not in module.read_text()
    with TaskSandbox(cache) as box:
        res = box.run(_py("import threadpoolctl; print('clean')"), timeout=30)
        assert res.stdout == b"clean\n", res.stderr


def test_host_processes_are_invisible(cache):
    token = b"987.0123"
    host = subprocess.Popen(["sleep", token.decode()])
    try:
        code = f"""
            import os
            pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
            print(pids)
            try:
                os.kill({host.pid}, 0)
                print("VISIBLE")
            except ProcessLookupError:
                print("gone")
            cmdlines = [open(f"/proc/{{p}}/cmdline", "rb").read() for p in pids]
            token = b"987." + b"0123"  # built here: this task's own command line lacks it
            print(any(token in c for c in cmdlines))
        """
        with TaskSandbox(cache) as box:
            res = box.run(_py(code), timeout=30)
        lines = res.stdout.decode().split("\n")
        pids = eval(lines[0])  # noqa: S307 - a list of ints the test printed
        assert pids and max(pids) < 10, pids  # PID 1 (the sandbox's init) and the task
        if host.pid not in pids:
            assert lines[1] == "gone"
        assert lines[2] == "False"
    finally:
        host.kill()
        host.wait()


def test_network_is_down(cache):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    code = f"""
        import socket
        print(sorted(name for _, name in socket.if_nameindex()))
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=2)
            print("CONNECTED")
        except OSError as exc:
            print("refused", exc.errno)
    """
    try:
        with TaskSandbox(cache) as box:
            res = box.run(_py(code), timeout=30)
        lines = res.stdout.decode().split("\n")
        assert lines[0] == "['lo']", res.stdout  # no interface but an isolated loopback
        assert lines[1].startswith("refused"), res.stdout
        with pytest.raises(TimeoutError):
            server.accept()  # the host's listener never heard from the task
    finally:
        server.close()


def test_timeout_kills_the_whole_process_tree(cache):
    token = "654.3210"
    # a child in its own session, a grandchild, and a parent that ignores SIGTERM
    script = (f"trap '' TERM; setsid sleep {token} & (sleep {token} &) ; sleep {token}")
    with TaskSandbox(cache) as box:
        start = time.perf_counter()
        res = box.run(["/bin/sh", "-c", script], timeout=1.0)
        elapsed = time.perf_counter() - start
    assert res.timed_out and res.returncode == 137 and not res.ok
    assert elapsed < 8, elapsed
    assert _processes_with(token.encode()) == []


def test_fork_bomb_is_stopped_by_the_process_limit(cache):
    limits = SandboxLimits(max_processes=16)
    with TaskSandbox(cache, limits=limits) as box:
        code = """
            import os, time
            started = 0
            for _ in range(300):
                try:
                    pid = os.fork()
                except OSError:
                    break
                if pid == 0:
                    time.sleep(30)
                    os._exit(0)
                started += 1
            print(started)
        """
        res = box.run(_py(code), timeout=20)
        if not any("pids" in e for e in box.enforced_limits) and box.mode != "root":
            pytest.skip(reason="neither a pids control group nor RLIMIT_NPROC binds here "
                        f"(mode {box.mode}, limits {box.enforced_limits})")
    assert res.returncode == 0, res.stderr
    started = int(res.stdout)
    assert 0 < started < 16, started
    assert res.seconds < 15  # the children died with the namespace, not after 30 s


def test_memory_hog_is_stopped_by_the_memory_limit(cache):
    code = """
        blocks = []
        for _ in range(64):
            blocks.append(bytearray(32 * 2**20))  # 2 GiB in total
        print("ALLOCATED", len(blocks))
    """
    with TaskSandbox(cache, limits=SandboxLimits(memory_mb=256)) as box:
        res = box.run(_py(code), timeout=30)
    assert not res.ok
    assert b"ALLOCATED" not in res.stdout
    assert b"MemoryError" in res.stderr or res.returncode == 137, res.stderr


def test_file_size_limit(cache):
    code = """
        with open("/workspace/big", "wb") as fh:
            fh.write(b"x" * (3 * 2**20))
    """
    with TaskSandbox(cache, limits=SandboxLimits(max_file_size_mb=1)) as box:
        res = box.run(_py(code), timeout=30)
        assert not res.ok
        assert (box.upper / "workspace" / "big").stat().st_size <= 2**20


def test_symlink_and_dotdot_escapes_fail(cache, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret 31415")
    code = f"""
        import os
        os.symlink({str(secret)!r}, "/workspace/link")
        os.symlink("/../../../..{secret}", "/workspace/dotdot")
        for path in ["/workspace/link", "/workspace/dotdot",
                     "/workspace/../../../../..{secret}", "/proc/1/root{secret}"]:
            try:
                print(open(path).read())
            except OSError as exc:
                print("failed", exc.errno)
        os.chdir("/")
        for _ in range(10):
            os.chdir("..")
        print(sorted(os.listdir(".")))
    """
    with TaskSandbox(cache) as box:
        res = box.run(_py(code), timeout=30)
        assert res.returncode == 0, res.stderr
        out = res.stdout.decode()
        assert "31415" not in out
        assert out.count("failed") == 4
        assert "workspace" in out.splitlines()[-1]  # '..' of / is / (the sandbox's)
        # the host side does not follow the task's links either
        for path in ["/workspace/link", "/workspace/dotdot", "/workspace/../../etc/passwd"]:
            with pytest.raises((ValueError, FileNotFoundError)):
                box.read_file(path)
    assert secret.read_text() == "host secret 31415"


def test_no_mount_is_left_behind_also_after_a_crash(cache):
    before = _mounts()
    with TaskSandbox(cache) as box:
        assert box.run(["/bin/true"], timeout=30).ok
        crashed = box.run(["/bin/sh", "-c", "kill -SEGV $$"], timeout=30)
        assert crashed.returncode == 128 + signal.SIGSEGV
        aborted = box.run(_py("import os; os.abort()"), timeout=30)
        assert aborted.returncode == 128 + signal.SIGABRT
        assert _mounts() == before  # mounts exist only in the task's own namespace
    assert _mounts() == before


def test_host_crash_leaves_no_process_mount_or_folder(cache, tmp_path):
    base = tmp_path / "boxes"
    token = "543.2109"
    script = textwrap.dedent(f"""
        import sys
        from sklearn_icml26.sandbox import EnvironmentCache, TaskSandbox
        cache = EnvironmentCache({str(cache.path)!r})
        with TaskSandbox(cache, base_dir={str(base)!r}) as box:
            print("started", flush=True)
            box.run(["/bin/sh", "-c", "sleep {token}"])
    """)
    before = _mounts()
    host = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    try:
        assert host.stdout.readline() == b"started\n"
        for _ in range(400):  # the child imports the package, then assembles the sandbox
            if _processes_with(token.encode()):
                break
            time.sleep(0.05)
        assert _processes_with(token.encode())
    finally:
        host.send_signal(signal.SIGKILL)  # the host process crashes mid-run
        host.wait()
    for _ in range(100):  # the lifeline pipe closes: the namespace ends by itself
        if not _processes_with(token.encode()):
            break
        time.sleep(0.05)
    assert _processes_with(token.encode()) == []
    assert _mounts() == before
    assert len(list(base.iterdir())) == 1
    removed = cleanup_stale(base)
    assert len(removed) == 1 and list(base.iterdir()) == []


def test_eight_sandboxes_at_once_do_not_see_each_other(cache):
    n = 8
    code = """
        import os, sys, time
        me = sys.argv[1]
        for place in ("/workspace", "/tmp", "/dev/shm"):
            open(f"{place}/mark-{me}", "w").write(me)
        time.sleep(1.0)  # all eight are running now
        seen = sorted(f for place in ("/workspace", "/tmp", "/dev/shm")
                      for f in os.listdir(place))
        procs = [p for p in os.listdir("/proc") if p.isdigit()]
        print(seen, len(procs))
    """
    results = [None] * n

    def work(i):
        with TaskSandbox(cache) as box:
            res = box.run([PY, "-I", "-c", textwrap.dedent(code), str(i)], timeout=60)
            results[i] = (res, box.changed_files())

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, (res, changes) in enumerate(results):
        assert res.returncode == 0, res.stderr
        seen, procs = res.stdout.decode().rsplit(" ", 1)
        assert eval(seen) == [f"mark-{i}"] * 3  # noqa: S307 - a list of names it printed
        assert int(procs) <= 3
        assert changes == [Change(f"/workspace/mark-{i}")]


def test_root_mode_runs_the_task_as_nobody(cache):
    if os.geteuid() != 0:
        pytest.skip(reason="root mode needs uid 0")
    with TaskSandbox(cache, mode="root") as box:
        res = box.run(["/bin/sh", "-c", "id -u; echo x > /workspace/f; echo y > /env/f"],
                      timeout=30)
        assert res.stdout.split()[0] == b"65534"
        assert res.returncode != 0  # /env is not writable by nobody
        assert box.changed_files() == [Change("/workspace/f")]


def test_mounts_are_locked_for_the_task(cache):
    if MODE != "userns":
        pytest.skip(reason="mount locking is the userns mode's (root mode drops to nobody)")
    code = "mount -o remount,rw /usr 2>&1; umount /proc 2>&1; touch /usr/x 2>&1; echo done"
    with TaskSandbox(cache) as box:
        res = box.run(["/bin/sh", "-c", code], timeout=30)
    assert res.stdout.endswith(b"done\n")
    assert not Path("/usr/x").exists()


def test_snapshot_workspace_is_a_lower_layer(cache, tmp_path):
    snap = tmp_path / "snap"
    snap.mkdir()
    (snap / "data.txt").write_text("original")
    with TaskSandbox(cache, workspace=snap) as box:
        res = box.run(["/bin/sh", "-c", "cat data.txt; echo new > data.txt; rm -f gone"],
                      timeout=30)
        assert res.stdout == b"original"
        assert box.read_file("/workspace/data.txt") == b"new\n"
    assert (snap / "data.txt").read_text() == "original"


def test_errors_name_what_is_wrong(cache, monkeypatch):
    with pytest.raises(TypeError, match="cache must be an EnvironmentCache"):
        TaskSandbox("venv")
    with pytest.raises(ValueError, match="max_processes must be a positive int"):
        SandboxLimits(max_processes=0)
    with pytest.raises(ValueError, match="workspace must be an existing folder"):
        TaskSandbox(cache, workspace="/nonexistent/folder")
    with TaskSandbox(cache) as box:
        with pytest.raises(ValueError, match="argv must be a non-empty list"):
            box.run("ls")
        with pytest.raises(ValueError, match="timeout must be a positive"):
            box.run(["ls"], timeout=0)
        missing = box.run(["no-such-program"], timeout=30)
        assert missing.returncode == 127 and b"no-such-program" in missing.stderr
    with pytest.raises(SandboxError, match="closed"):
        box.run(["ls"])
    with pytest.raises(ValueError, match="mode must be"):
        check_sandbox_support("docker")
    # nothing to isolate with: a clear error naming what is missing, never a fallback
    monkeypatch.setattr(sandbox_module, "_support_cache", {})
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda name: None)
    with pytest.raises(SandboxUnavailableError, match="'unshare' command is not installed"):
        TaskSandbox(cache)
    monkeypatch.setattr(sandbox_module, "_support_cache", {})
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(sandbox_module.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(sandbox_module, "_probe", lambda mode: "overlay mount: EPERM")
    with pytest.raises(SandboxUnavailableError,
                       match="userns mode: overlay mount: EPERM; root mode: root mode needs"):
        check_sandbox_support()


def test_read_file_never_hangs_or_shows_host_paths(cache):
    # issue 40 item 8: a FIFO blocked the host; a folder gave the host path
    with TaskSandbox(cache) as box:
        res = box.run(_py("""
            import os, socket
            os.mkfifo("/workspace/fifo")
            os.makedirs("/workspace/folder/inner")
            socket.socket(socket.AF_UNIX).bind("/workspace/sock")
            os.symlink("fifo", "/workspace/link-to-fifo")
            open("/workspace/plain", "w").write("data")
        """), timeout=60)
        assert res.returncode == 0, res.stderr
        host = str(box.path)
        outcome = {}

        def read(path):
            try:
                outcome[path] = box.read_file(path)
            except Exception as exc:  # noqa: BLE001 - the test inspects it
                outcome[path] = exc

        for path in ("/workspace/fifo", "/workspace/link-to-fifo", "/workspace/sock"):
            reader = threading.Thread(target=read, args=(path,), daemon=True)
            reader.start()
            reader.join(30)
            if reader.is_alive():  # release the host before failing
                os.close(os.open(box.upper / "workspace" / "fifo", os.O_WRONLY | os.O_NONBLOCK))
                reader.join(30)
                pytest.fail(f"read_file({path!r}) blocked the host")
            exc = outcome[path]
            assert isinstance(exc, ValueError), exc
            assert "not a regular file" in str(exc) and host not in str(exc)
        assert "FIFO" in str(outcome["/workspace/fifo"])
        assert "socket" in str(outcome["/workspace/sock"])
        with pytest.raises(IsADirectoryError) as info:
            box.read_file("/workspace/folder")
        assert info.value.filename == "/workspace/folder" and host not in str(info.value)
        with pytest.raises(FileNotFoundError) as info:
            box.read_file("/workspace/never-written")
        assert info.value.filename == "/workspace/never-written" and host not in str(info.value)
        assert box.read_file("/workspace/plain") == b"data"


def test_changed_files_lists_created_folders(cache, tmp_path):
    # issue 40 item 8: created folders were missing although the docstring lists them
    ws = tmp_path / "ws"
    (ws / "kept").mkdir(parents=True)
    (ws / "kept" / "file.txt").write_text("a")
    (ws / "remade").mkdir()
    (ws / "remade" / "old.txt").write_text("b")
    (ws / "gone.txt").write_text("c")
    with TaskSandbox(cache, workspace=ws) as box:
        res = box.run(["/bin/sh", "-c",
                       "echo more >> /workspace/kept/file.txt; mkdir -p /workspace/new/deeper; "
                       "mkdir /workspace/empty /env/made; rm -r /workspace/remade; "
                       "mkdir /workspace/remade; rm /workspace/gone.txt"], timeout=60)
        assert res.returncode == 0, res.stderr
        assert box.changed_files() == sorted([
            Change("/env/made"), Change("/workspace/empty"),
            Change("/workspace/kept/file.txt"),  # its folder only holds the change: not listed
            Change("/workspace/new"), Change("/workspace/new/deeper"),
            Change("/workspace/remade"),  # deleted, then made again: an opaque folder
            Change("/workspace/gone.txt", "deleted"),
        ])
        with pytest.raises(FileNotFoundError, match="the task deleted this file"):
            box.read_file("/workspace/gone.txt")


def test_run_and_constructor_arguments_are_checked_up_front(cache):
    # issue 40 item 10: each failed late, raw, in a background thread, or was accepted
    errors = []
    previous = threading.excepthook
    threading.excepthook = errors.append
    try:
        with TaskSandbox(cache) as box:
            for kwargs, exc_type, shown in [
                ({"timeout": float("inf")}, ValueError, "got inf (float)"),
                ({"timeout": float("nan")}, ValueError, "got nan (float)"),
                ({"timeout": 1e300}, ValueError, "got 1e+300 (float)"),
                ({"timeout": -1}, ValueError, "got -1 (int)"),
                ({"timeout": "5"}, TypeError, "got '5' (str)"),
                ({"timeout": True}, TypeError, "got True (bool)"),
                ({"input": "abc"}, TypeError, "got 'abc' (str)"),
                ({"env": {"A": 1}}, ValueError, "got 'A': 1 (int)"),
                ({"cwd": "relative"}, ValueError, "got 'relative' (str)"),
            ]:
                name = next(iter(kwargs))
                with pytest.raises(exc_type, match=f"^{name} must ") as info:
                    box.run(["/bin/cat"], **kwargs)
                assert shown in str(info.value), str(info.value)
            # what is accepted still works: a numpy timeout, bytes-like input
            import numpy as np

            res = box.run(["/bin/cat"], timeout=np.float32(30), input=bytearray(b"abc"))
            assert res.returncode == 0 and res.stdout == b"abc"
        for kwargs, shown in [({"hostname": "h" * 100}, "(102 characters) (str)"),
                              ({"hostname": None}, "got None (NoneType)"),
                              ({"hostname": "a\nb"}, "got 'a\\nb' (str)"),
                              ({"max_output_bytes": -1}, "got -1 (int)"),
                              ({"max_output_bytes": 2.5}, "got 2.5 (float)"),
                              ({"env": {"A=B": "c"}}, "got 'A=B'")]:
            name = next(iter(kwargs))
            with pytest.raises(ValueError, match=f"^{name} must ") as info:
                TaskSandbox(cache, **kwargs)
            assert shown in str(info.value), str(info.value)
        with TaskSandbox(cache, hostname="h" * 64, max_output_bytes=2) as box:
            res = box.run(["/bin/hostname"], timeout=30)
            assert res.returncode == 0 and res.stdout == b"hh"
    finally:
        threading.excepthook = previous
    assert errors == []
