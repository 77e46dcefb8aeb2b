"""Long-format panels (one row per unit and period) to the adjuster's arrays."""


import pandas as pd

__all__ = ["panel_to_arrays"]

def panel_to_arrays(data, *, unit, time, outcome, treatment=None, baseline=(), time_varying=()):
    """Turn a long-format panel (one row per unit and period) into ``X``, ``y``, ``treatment``.

    Parameters
    ----------
    data : pandas.DataFrame of shape (n_rows, n_columns)
        The panel: one row per (unit, period) visit; a missing row or a NaN outcome is a missed
        visit (monotone dropout is expected by the estimator).
    unit : str
        Column identifying units.
    time : str
        Column of the period (sortable; periods are the sorted unique values).
    outcome : str
        Column of the outcome (float).
    treatment : str or None, default=None
        Column of integer treatment codes; ``None`` returns no treatment.
    baseline : sequence of str, default=()
        Columns constant within units (baseline covariates ``B``).
    time_varying : sequence of str, default=()
        Columns measured at every visit (``X_t``); their cells after dropout are set to 0.

    Returns
    -------
    X : pandas.DataFrame of shape (n_units, n_baseline + n_time_varying * n_periods)
        Columns ``"{col}"`` for baseline covariates then ``"{col}@{period}"`` period by period,
        in the layout :class:`LongitudinalRegressionAdjuster` expects (its
        ``n_time_varying`` is ``len(time_varying)``).
    y : pandas.DataFrame of shape (n_units, n_periods)
        Outcomes, NaN for missed visits; columns are the periods.
    treatment : pandas.Series of shape (n_units,), pandas.DataFrame of shape \
(n_units, n_periods) or None
        A Series when treatment is constant within every unit, else a DataFrame by period.

    Raises
    ------
    ValueError
        If a named column is absent, a (unit, time) pair is duplicated, a baseline column
        varies within a unit, or a time-varying value is missing at a visit whose outcome is
        observed.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_icml26.treatment_effects import panel_to_arrays
    >>> long = pd.DataFrame({"id": [1, 1, 2, 2], "t": [0, 1, 0, 1], "w": [1, 1, 0, 0],
    ...                      "age": [30, 30, 40, 40], "y": [1.0, 2.0, 0.5, None]})
    >>> X, y, w = panel_to_arrays(long, unit="id", time="t", outcome="y", treatment="w",
    ...                           baseline=["age"])
    >>> X.columns.tolist(), y.shape, w.tolist()
    (['age'], (2, 2), [1, 0])
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame; got {type(data).__name__}")
    baseline, time_varying = list(baseline), list(time_varying)
    needed = [unit, time, outcome, *baseline, *time_varying]
    if treatment is not None:
        needed.append(treatment)
    missing = [c for c in needed if c not in data.columns]
    if missing:
        raise ValueError(f"columns {missing} are not in data (columns: {list(data.columns)})")
    duplicated = data.duplicated([unit, time], keep=False)
    if duplicated.any():
        pairs = data.loc[duplicated, [unit, time]].drop_duplicates().head(5)
        raise ValueError(
            f"data has duplicated ({unit}, {time}) rows, e.g. "
            f"{list(map(tuple, pairs.to_numpy().tolist()))}"
        )
    for col in baseline:
        varying = data.groupby(unit)[col].nunique(dropna=False) > 1
        if varying.any():
            raise ValueError(
                f"baseline column {col!r} varies within units {varying[varying].index[:5].tolist()}"
            )
    units = pd.Index(sorted(data[unit].unique()), name=unit)
    periods = sorted(data[time].unique())
    wide = data.set_index([unit, time])
    full = pd.MultiIndex.from_product([units, periods], names=[unit, time])
    wide = wide.reindex(full)
    y = wide[outcome].unstack(time).reindex(index=units, columns=periods).astype(float)
    observed = y.notna()
    columns = {}
    first = data.groupby(unit).first()
    for col in baseline:
        columns[col] = first.loc[units, col].to_numpy()
    for t in periods:
        for col in time_varying:
            values = wide[col].xs(t, level=time).reindex(units)
            if (values.isna() & observed[t]).any():
                bad = units[(values.isna() & observed[t]).to_numpy()][:5].tolist()
                raise ValueError(
                    f"time-varying column {col!r} is missing at {time}={t} for units {bad} "
                    "whose outcome is observed"
                )
            columns[f"{col}@{t}"] = values.fillna(0).to_numpy()
    X = pd.DataFrame(columns, index=units)
    w = None
    if treatment is not None:
        wt = wide[treatment].unstack(time).reindex(index=units, columns=periods)
        if (wt.nunique(axis=1, dropna=True) <= 1).all():
            w = data.groupby(unit)[treatment].first().reindex(units)
        else:
            w = wt
    return X, y, w
