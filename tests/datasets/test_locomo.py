"""load_locomo on the real file (counts, evidence cleaning, formatting); missing-file error."""

import pytest
from conftest import require_data

from sklearn_icml26.datasets import load_locomo


@pytest.mark.real_data
def test_locomo_counts_and_cleaning():
    require_data("locomo/locomo10.json")
    data = load_locomo()
    assert len(data.turns) == 5882 and len(data.qa) == 1986 and len(data.sessions) == 272
    assert data.qa.category.value_counts().sort_index().tolist() == [282, 321, 96, 841, 446]
    assert (data.turns.blip_caption.notna()).sum() == 1226
    has_ev = data.qa.evidence.map(len) > 0
    assert has_ev.sum() == 1982 and (has_ev & (data.qa.category != 5)).sum() == 1536
    assert data.n_dropped_evidence == 3
    ev = dict(zip(data.qa.evidence_raw.map(tuple), data.qa.evidence.map(tuple), strict=True))
    assert ev[("D8:6; D9:17",)] == ("D8:6", "D9:17")
    assert ev[("D1:18", "D", "D1:20")] == ("D1:18", "D1:20")
    assert ev[("D9:1 D4:4 D4:6",)] == ("D9:1", "D4:4", "D4:6")
    assert "D11:26" in ev[("D1:14", "D2:7", "D4:7", "D5:15", "D:11:26", "D20:21", "D26:36")]
    first = data.turns.iloc[0]
    assert first.conversation == "conv-26" and first.dia_id == "D1:1"
    assert first.formatted == "Caroline: " + first.text
    assert data.category_names[4] == "single-hop"
    # chronological turn index per conversation, session dates increase
    for _, turns in data.turns.groupby("conversation"):
        assert turns.turn_index.tolist() == list(range(len(turns)))
        assert turns.session_datetime.is_monotonic_increasing
    vis = data.qa[has_ev]
    assert (vis.visible_after == vis.evidence_turns.map(max)).all()


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(OSError, match=r"locomo10\.json.*raw\.githubusercontent\.com/snap-research"):
        load_locomo(data_home=tmp_path, download_if_missing=False)
