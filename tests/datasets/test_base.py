"""The data home and the download helper, against a local HTTP server (no internet needed)."""

import hashlib
import http.server
import threading
from functools import partial

import pytest

from sklearn_icml26.datasets import clear_data_home, get_data_home
from sklearn_icml26.datasets._base import RemoteFile, fetch_files


@pytest.fixture
def http_folder(tmp_path):
    """Serve ``tmp_path/served`` over HTTP on localhost; yields (folder, base_url)."""
    served = tmp_path / "served"
    served.mkdir()
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_data_home_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("SKLEARN_ICML26_DATA", str(tmp_path / "from_env"))
    assert get_data_home() == tmp_path / "from_env"
    assert get_data_home(tmp_path / "explicit") == tmp_path / "explicit"
    monkeypatch.delenv("SKLEARN_ICML26_DATA")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert get_data_home() == tmp_path / "home" / "sklearn_icml26_data"
    assert get_data_home().is_dir()


def test_clear_data_home(tmp_path):
    home = get_data_home(tmp_path / "home")
    (home / "a.txt").write_text("x")
    clear_data_home(home)
    assert not home.exists()


def test_present_files_need_no_network(tmp_path):
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "x.csv").write_text("1\n")
    # an address that would fail: the file is present, so it is never used
    folder = fetch_files("ds", [RemoteFile("x.csv", "http://127.0.0.1:9/x.csv", "0" * 64)],
                         data_home=tmp_path)
    assert folder == tmp_path / "ds"


def test_download_with_pinned_checksum(tmp_path, http_folder):
    served, url = http_folder
    content = b"a,b\n1,2\n"
    (served / "table.csv").write_bytes(content)
    sha = hashlib.sha256(content).hexdigest()
    home = tmp_path / "home"
    folder = fetch_files("ds", [RemoteFile("sub/table.csv", f"{url}/table.csv", sha)],
                         data_home=home)
    assert (folder / "sub" / "table.csv").read_bytes() == content


def test_checksum_mismatch_is_an_error_naming_the_file(tmp_path, http_folder):
    served, url = http_folder
    (served / "table.csv").write_bytes(b"tampered")
    with pytest.raises(OSError, match=r"download of table\.csv failed: ValueError: SHA256"):
        fetch_files("ds", [RemoteFile("table.csv", f"{url}/table.csv", "0" * 64)],
                    data_home=tmp_path)


def test_offline_error_names_files_and_data_home(tmp_path):
    files = [RemoteFile("a.csv", "http://127.0.0.1:9/a.csv", "0" * 64), RemoteFile("b.csv")]
    with pytest.raises(OSError) as info:
        fetch_files("ds", files, data_home=tmp_path)
    message = str(info.value)
    assert "a.csv" in message and "b.csv" in message and str(tmp_path / "ds") in message
    assert "SKLEARN_ICML26_DATA" in message
    with pytest.raises(OSError, match="download_if_missing=False"):
        fetch_files("ds", files[:1], data_home=tmp_path, download_if_missing=False)


def test_many_missing_files_are_counted_not_all_listed(tmp_path):
    files = [RemoteFile(f"f{i}.csv") for i in range(40)]
    with pytest.raises(OSError, match=r"f0\.csv, .*f4\.csv and 35 more") as info:
        fetch_files("ds", files, data_home=tmp_path)
    assert "f39.csv" not in str(info.value)


def test_failed_download_leaves_no_empty_folders(tmp_path):
    # the dataset folder and the file's sub-folder are created for the download only: when it
    # fails, neither is left behind (a later run must not mistake an empty folder for data)
    home = get_data_home(tmp_path / "home")
    with pytest.raises(OSError, match="download of sub/deeper/a.csv failed"):
        fetch_files("ds", [RemoteFile("sub/deeper/a.csv", "http://127.0.0.1:9/a.csv", "0" * 64)],
                    data_home=home)
    assert list(home.iterdir()) == []


def test_interrupted_download_leaves_no_empty_folders(tmp_path, monkeypatch):
    # Ctrl-C during a slow download is not turned into an OSError, but it cleans up too
    import pooch

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pooch, "retrieve", interrupted)
    home = get_data_home(tmp_path / "home")
    with pytest.raises(KeyboardInterrupt):
        fetch_files("ds", [RemoteFile("sub/a.csv", "http://127.0.0.1:9/a.csv", "0" * 64)],
                    data_home=home)
    assert list(home.iterdir()) == []


def test_failed_download_keeps_folders_that_were_there(tmp_path):
    home = get_data_home(tmp_path / "home")
    (home / "ds").mkdir()
    (home / "ds" / "other.csv").write_text("kept\n")
    with pytest.raises(OSError):
        fetch_files("ds", [RemoteFile("sub/a.csv", "http://127.0.0.1:9/a.csv", "0" * 64)],
                    data_home=home)
    assert sorted(p.name for p in (home / "ds").iterdir()) == ["other.csv"]


def test_download_is_announced_once(tmp_path, http_folder, capsys):
    served, url = http_folder
    content = b"x\n"
    (served / "t.csv").write_bytes(content)
    fetch_files("ds", [RemoteFile("t.csv", f"{url}/t.csv", hashlib.sha256(content).hexdigest())],
                data_home=tmp_path)
    out = capsys.readouterr()
    # one line of our own on stdout; pooch's own "Downloading data from ..." log is silenced
    announced = [line for line in (out.out + out.err).splitlines() if "Downloading" in line]
    assert len(announced) == 1, announced


@pytest.mark.parametrize(("name", "count"), [("ese.txt", 455), ("cause_effect_baselines.txt", 7),
                                             ("cause_effect_converted.txt", 715)])
def test_registry_files_are_read_whole_with_quoted_paths(name, count):
    from sklearn_icml26.datasets._base import read_registry

    registry = read_registry(name)
    assert len(registry) == count
    assert all(len(h) == 64 and set(h) <= set("0123456789abcdef") for h in registry.values())
    if name == "ese.txt":  # paths with spaces survive the round trip through the text file
        assert registry["Covid-19/20/daily new case/Region 1.csv"].startswith("d561868806cc")
