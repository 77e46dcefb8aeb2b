import numpy as np
import pytest

from sklearn_icml26.utils._demo_rows import demo_row, demo_table
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
