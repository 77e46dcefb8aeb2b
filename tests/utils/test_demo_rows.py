import numpy as np
import pytest

from sklearn_icml26.utils._demo_rows import anchor_rows, demo_row, demo_table, timed_fits
from sklearn_icml26.utils._registry import DEMO_COLUMNS


def _row(**changes):
    params = dict(method="M", dataset="D", metric="RMSE", value=np.float64(1.5), anchor="A",
                  anchor_value=2, seconds=0.25)
    params.update(changes)
    return demo_row(**params)


def test_rows_and_table_have_the_demo_columns():
    row = _row()
    assert list(row) == DEMO_COLUMNS
    assert row["value"] == 1.5 and isinstance(row["anchor_value"], float)
    table = demo_table([row, _row(anchor_value=np.nan, seconds=np.nan)], note="why")
    assert list(table.columns) == DEMO_COLUMNS and len(table) == 2
    assert np.isnan(table["anchor_value"].iloc[1]) and table.attrs["note"] == "why"
    assert "note" not in demo_table([row]).attrs


def test_bad_rows_name_the_column():
    with pytest.raises(TypeError, match="method must be a non-empty string; got ''"):
        _row(method="")
    with pytest.raises(TypeError, match="value must be a real number .* got str '0.3'"):
        _row(value="0.3")
    with pytest.raises(TypeError, match="anchor_value must be a real number .* got bool"):
        _row(anchor_value=True)
    with pytest.raises(ValueError, match="seconds must be finite and >= 0"):
        _row(seconds=-1.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'valeu'"):
        demo_row(method="M", dataset="D", metric="m", valeu=1.0, anchor="A",
                 anchor_value=1.0, seconds=1.0)
    with pytest.raises(ValueError, match="row 0 has the columns"):
        demo_table([{"method": "M", "value": 1.0}])


def test_anchor_rows_one_row_per_anchor_in_order():
    rows = anchor_rows("ours", {"a": 2.0, "ours": 1.0, "b": np.float64(3.0)}, dataset="D",
                       metric="MAE", seconds=0.5)
    assert [r["anchor"] for r in rows] == ["a", "b"]
    assert [r["anchor_value"] for r in rows] == [2.0, 3.0]
    assert all(r["method"] == "ours" and r["value"] == 1.0 and r["seconds"] == 0.5
               and list(r) == DEMO_COLUMNS for r in rows)


def test_timed_fits_fits_in_order_scores_and_times(capsys):
    calls = []

    class Model:
        def __init__(self, name, value):
            self.name, self.value = name, value

        def fit(self, X, y):
            calls.append((self.name, X, y))
            self.fitted_ = True
            return self

    models = {"first": Model("first", 1), "second": Model("second", 2)}
    scores, seconds = timed_fits(models, "X", "y", score=lambda m: m.value * 10,
                                 dataset="D", tag="t demo", verbose=1)
    assert calls == [("first", "X", "y"), ("second", "X", "y")]
    assert scores == {"first": 10.0, "second": 20.0}
    assert set(seconds) == {"first", "second"} and all(s >= 0 for s in seconds.values())
    out = capsys.readouterr().out.splitlines()
    assert out == ["[t demo] fitting first on D ...", "[t demo] fitting second on D ..."]
    timed_fits(models, "X", "y", score=lambda m: 0, dataset="D", tag="t", verbose=0)
    assert capsys.readouterr().out == ""
