"""Per-series statsforecast anchors of ``bench_ese.py --arm seasonal`` (AutoETS, MSTL).

Run by ``bench_ese.py`` in a benchmark-only interpreter that has statsforecast (``--anchor-python
/work/bench-env/bin/python``; statsforecast is not a dependency of the package), as
``python _statsforecast_anchor.py IN.npz OUT.json``. ``IN.npz`` holds ``Y`` (T, n), ``n_test``,
``horizon``, ``season_length``; for each model the forecasts of the last ``n_test`` targets,
each ``horizon`` steps after its cutoff, from ``StatsForecast.cross_validation(h=horizon,
step_size=1, n_windows=n_test, refit=False)``: every series' model is fitted once on the data
before the first cutoff and then only fed the new observations (no refit), as the other
anchors are. Seconds are those of that call, single-threaded (``n_jobs=1``), after an untimed
warm-up on one series (numba's compilation).
"""

import json
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np
import pandas as pd


def main(src, dst):
    from statsforecast import StatsForecast
    from statsforecast.models import MSTL, AutoETS

    data = np.load(src)
    Y, n_test = data["Y"], int(data["n_test"])
    h, m = int(data["horizon"]), int(data["season_length"])
    T, n = Y.shape
    frame = pd.DataFrame({"unique_id": np.repeat(np.arange(n), T),
                          "ds": np.tile(np.arange(T), n), "y": Y.T.reshape(-1)})
    out = {}
    models = {"AutoETS": lambda: AutoETS(season_length=m),
              "MSTL": lambda: MSTL(season_length=m, trend_forecaster=AutoETS(model="ZZN"))}
    for name, make in models.items():
        sf = StatsForecast(models=[make()], freq=1, n_jobs=1)
        # warm-up on one series (numba compiles on first use; not counted)
        sf.cross_validation(df=frame[frame["unique_id"] == 0], h=h, step_size=1,
                            n_windows=2, refit=False)
        start = time.perf_counter()
        try:
            cv = sf.cross_validation(df=frame, h=h, step_size=1, n_windows=n_test, refit=False)
        except Exception as exc:  # noqa: BLE001 - recorded in the row
            out[name] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        seconds = time.perf_counter() - start
        cv = cv[cv["ds"] - cv["cutoff"] == h]
        pred = cv.pivot(index="ds", columns="unique_id", values=name).sort_index()
        pred = pred.reindex(columns=np.arange(n)).to_numpy()
        out[name] = {"pred": pred.tolist(), "seconds": seconds}
        print(f"  {name}: {seconds:.3g} s", flush=True)
    import statsforecast

    out["version"] = statsforecast.__version__
    with open(dst, "w") as fh:
        json.dump(out, fh)


if __name__ == "__main__":
    main(*sys.argv[1:3])
