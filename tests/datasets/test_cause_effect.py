"""Cause-effect loaders: pinned hashes and the offline path of the download + conversion."""

import hashlib

import numpy as np
import pytest
from conftest import require_data

from sklearn_icml26.datasets import load_cause_effect_baseline_scores, load_cause_effect_pairs
from sklearn_icml26.datasets._base import read_registry
from sklearn_icml26.datasets._cause_effect import (
    _BENCHMARKS,
    _LOCI_URL,
    _UPSTREAM,
    _convert_upstream,
    _pair_ids,
    _upstream_names,
)

FOLDERS = sorted(_UPSTREAM)
BASELINE_SHA256 = read_registry("cause_effect_baselines.txt")
CONVERTED_SHA256 = read_registry("cause_effect_converted.txt")


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _truth_rows(path):
    lines = path.read_text().splitlines()
    keys = lines[0].split(",")
    return [dict(zip(keys, line.split(","), strict=True)) for line in lines[1:]]


def _fake_upstream(shared, folder, raw, ids):
    """Upstream-format files rebuilt from the shared (converted) copy of ``ids``.

    Numbers are written in another notation (``%.17g``, tabs/spaces, R quoting) so that the
    conversion has to parse and re-format them.
    """
    layout = _UPSTREAM[folder][0]
    rows = {int(r["pair_id"]): r for r in _truth_rows(shared / folder / "ground_truth.csv")}
    raw.mkdir(parents=True, exist_ok=True)
    if layout == "mooij":
        meta = []
        for i in ids:
            r = rows[i]
            dx, dy = int(r["dim_x"]), int(r["dim_y"])
            if r["direction"] == "1":  # x block is the cause and comes first
                spans = (1, dx, dx + 1, dx + dy)
            else:  # x block is the effect, still first in the file
                spans = (dx + 1, dx + dy, 1, dx)
            meta.append(f"{i:04d} " + " ".join(map(str, spans)) + f" {r['weight']}")
            X = np.loadtxt(shared / folder / r["file"], delimiter=",", skiprows=1, ndmin=2)
            lines = ["\t".join(f"{v:.17g}" for v in row)
                     + ("  NaN" if r["extra_columns_dropped"] == "1" else "") for row in X]
            (raw / f"pair{i:04d}.txt").write_text("\n".join(lines) + "\n")
        (raw / "pairmeta.txt").write_text("\n".join(meta) + "\n")
    else:
        gt = ["0"] * max(_pair_ids(folder))
        for i in ids:
            r = rows[i]
            gt[i - 1] = "1" if r["direction"] == "1" else "0"
            a, b = r["orig_columns"].split("|")
            X = np.loadtxt(shared / folder / r["file"], delimiter=",", skiprows=1, ndmin=2)
            lines = [f'"","{a}","{b}"'] + [f'"{k}",%.17g,%.17g' % tuple(row)
                                            for k, row in enumerate(X, 1)]
            (raw / f"pair_{i}.txt").write_text("\n".join(lines) + "\n")
        (raw / "pairs_gt.txt").write_text("\n".join(gt) + "\n")


@pytest.mark.real_data
def test_baseline_tables_pinned_hash_is_the_shared_copy():
    home = require_data(*[f"cause_effect/baseline_scores/{f}" for f in BASELINE_SHA256])
    assert sorted(BASELINE_SHA256) == sorted(f"{v[1]}.tab" for v in _BENCHMARKS.values())
    for fname, digest in BASELINE_SHA256.items():
        assert _sha(home / "cause_effect" / "baseline_scores" / fname) == digest, fname


@pytest.mark.real_data
def test_converted_registry_is_the_shared_copy():
    home = require_data(*[f"cause_effect/{f}/ground_truth.csv" for f in FOLDERS])
    for folder in FOLDERS:
        on_disk = sorted(p.name for p in (home / "cause_effect" / folder).iterdir())
        pinned = sorted(k.split("/", 1)[1] for k in CONVERTED_SHA256 if k.startswith(folder + "/"))
        assert on_disk == pinned, folder
        for name in pinned:
            assert _sha(home / "cause_effect" / folder / name) == \
                CONVERTED_SHA256[f"{folder}/{name}"], f"{folder}/{name}"


def test_registry_counts_and_upstream_names():
    counts = {f: len(_pair_ids(f)) for f in FOLDERS}
    assert counts == {"tuebingen": 108, "SIM": 100, "SIM-c": 100, "SIM-ln": 100, "AN": 100,
                      "LS": 100, "MN-U": 100}
    assert _upstream_names("tuebingen")[:2] == ["pairmeta.txt", "pair0001.txt"]
    assert _upstream_names("MN-U")[:2] == ["pairs_gt.txt", "pair_1.txt"]
    assert _LOCI_URL.endswith("/da61b8cdf95cbbc00fc42d351f89e64410f535f4/")


@pytest.mark.real_data
@pytest.mark.parametrize("folder, ids", [
    ("tuebingen", [1, 53, 71, 81, 105]),  # univariate, multivariate in both orders, 3rd column
    ("SIM-ln", [1, 2, 3]),
    ("MN-U", [1, 2, 3]),
])
def test_conversion_reproduces_the_pinned_files(tmp_path, folder, ids):
    home = require_data(f"cause_effect/{folder}/ground_truth.csv")
    raw = tmp_path / "raw"
    _fake_upstream(home / "cause_effect", folder, raw, ids)
    files = _convert_upstream(folder, raw, ids)
    for i in ids:
        name = f"pair_{i:04d}.csv"
        assert hashlib.sha256(files[name]).hexdigest() == CONVERTED_SHA256[f"{folder}/{name}"]
    # the ground-truth rows of these pairs are reproduced byte for byte
    expected = (home / "cause_effect" / folder / "ground_truth.csv").read_text().splitlines()
    got = files["ground_truth.csv"].decode().splitlines()
    assert got[0] == expected[0]
    wanted = {line.split(",")[0]: line for line in expected[1:]}
    assert got[1:] == [wanted[str(i)] for i in ids]


@pytest.mark.real_data
def test_missing_folder_is_converted_from_upstream_files_and_checked(tmp_path):
    """The download path, offline: the upstream files are already in the staging folder."""
    home = require_data("cause_effect/MN-U/ground_truth.csv")
    shared = home / "cause_effect"
    ids = _pair_ids("MN-U")
    _fake_upstream(shared, "MN-U", tmp_path / "cause_effect" / "_upstream" / "MN-U", ids)
    data = load_cause_effect_pairs("MN-U", data_home=tmp_path)
    ref = load_cause_effect_pairs("MN-U", data_home=home)
    assert len(data.pairs) == 100
    np.testing.assert_array_equal(data.direction, ref.direction)
    for a, b in zip(data.pairs, ref.pairs, strict=True):
        np.testing.assert_array_equal(a, b)
    assert _sha(tmp_path / "cause_effect" / "MN-U" / "ground_truth.csv") == \
        CONVERTED_SHA256["MN-U/ground_truth.csv"]


@pytest.mark.real_data
def test_altered_upstream_file_is_rejected(tmp_path):
    home = require_data("cause_effect/AN/ground_truth.csv")
    raw = tmp_path / "cause_effect" / "_upstream" / "AN"
    _fake_upstream(home / "cause_effect", "AN", raw, _pair_ids("AN"))
    text = (raw / "pair_7.txt").read_text().splitlines()
    text[5] = text[5].rsplit(",", 1)[0] + ",0.5"  # one value changed
    (raw / "pair_7.txt").write_text("\n".join(text) + "\n")
    with pytest.raises(OSError, match="differ from their pinned SHA-256"):
        load_cause_effect_pairs("AN", data_home=tmp_path)
    assert not (tmp_path / "cause_effect" / "AN").exists()


def test_no_network_names_the_upstream_source(tmp_path, monkeypatch):
    import pooch

    def offline(*args, **kwargs):
        raise ConnectionError("no network")

    monkeypatch.setattr(pooch, "retrieve", offline)
    with pytest.raises(OSError, match="aleximmer/loci/da61b8c"):
        load_cause_effect_pairs("SIM", data_home=tmp_path)
    with pytest.raises(OSError, match=r"baseline_results/SIM\.tab"):
        load_cause_effect_baseline_scores("SIM", data_home=tmp_path)

