"""load_multilingual_safety: counts on the user's copy (never its text), pinned hashes, errors."""

import json

import pytest
from conftest import require_data

from sklearn_icml26.datasets import load_multilingual_safety


@pytest.mark.real_data
def test_polyrefuse_and_multijail_counts():
    require_data("multilingual_safety/polyrefuse/harmful_train_en.json",
                 "multilingual_safety/multijail/MultiJail.csv")
    data = load_multilingual_safety(languages=["zh", "th"])
    counts = data.frame.groupby(["language", "harmful"]).size().to_dict()
    assert counts == {("th", 0): 200, ("th", 1): 260, ("zh", 0): 200, ("zh", 1): 260}
    assert len(data.data) == len(data.target) == len(data.language) == 920
    test = load_multilingual_safety(split="test", languages=["zh", "en"])
    assert set(test.frame[test.frame.language == "zh"].harmful) == {1}  # no harmless zh test
    mj = load_multilingual_safety("multijail", languages=["bn", "sw", "jv"])
    assert len(mj.data) == 3 * 315 and set(mj.target) == {1}


def test_missing_files_name_the_folder(tmp_path):
    with pytest.raises(OSError, match="multilingual_safety.*missing file"):
        load_multilingual_safety(languages=["yo"], data_home=tmp_path)


def test_a_file_that_differs_from_its_pin_is_refused(tmp_path):
    folder = tmp_path / "multilingual_safety" / "polyrefuse"
    folder.mkdir(parents=True)
    for kind in ("harmful", "harmless"):  # made-up, harmless placeholder content
        (folder / f"{kind}_val_translated_yo.json").write_text(
            json.dumps([{"instruction": "placeholder", "category": None}]))
    with pytest.raises(OSError, match="not the pinned"):
        load_multilingual_safety(split="val", languages=["yo"], data_home=tmp_path)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="languages: \\['xx'\\]"):
        load_multilingual_safety(languages=["xx"])
    with pytest.raises(ValueError, match="source must be"):
        load_multilingual_safety("other")
    with pytest.raises(ValueError, match="split must be"):
        load_multilingual_safety(split="dev", languages=["en"])
