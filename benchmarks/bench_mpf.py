"""Benchmark of MPFSurface (Metric-Phase Fields, ICML 2026, arXiv 2605.25503).

MPF (trim "metric" and "points") vs its "sdf" (untrimmed and point-trimmed) and "udf" ablations,
Open3D's screened Poisson (raw and density-trimmed) and ball pivoting when ``open3d`` imports,
and the sampling floor (an independent dense sample of the true shape scored as a
reconstruction), on the three shared shapes of ``mpf/`` at input noise 0 and 0.005
(shared/specs/mpf.md section 7). Every mesh is sampled with 100000 points; metrics: CD-L1,
CD-L2, F@0.005, F@0.01, normal consistency (NC), fit and extraction seconds, peak traced memory,
CD-L1 / floor.

The full run uses ``--max-epochs`` (default 15 = 300 optimiser steps on 20000 points, 15 % of
the spec's default 2000 steps) so that the 18 fits stay near 20 minutes on two cores shared with
other jobs (load average ~7 when measured); the step budget is the only change to the
protocol; pass ``--max-epochs 100`` for the spec's. ``--quick``: open_hemisphere
at noise 0, its first 4000 input and 20000 ground-truth points, widths 32, 30 warm-start steps,
5 epochs, resolution 48.
"""

import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from scipy.spatial import cKDTree

from sklearn_icml26.datasets import MPF_SHAPES, load_mpf_shape, make_thin_shell
from sklearn_icml26.metrics import sample_mesh
from sklearn_icml26.metrics._surface import _surface_scores
from sklearn_icml26.surface import MPFSurface
from sklearn_icml26.utils._benchmark import (
    benchmark_parser,
    markdown_table,
    measure,
    write_results,
)

COLUMNS = ["dataset", "noise", "method", "cd_l1", "cd_l2", "f_0.005", "f_0.01", "nc",
           "cd_l1_over_floor", "fit_seconds", "extract_seconds", "peak_memory_mb"]


def scores(points, normals, data):
    """CD-L1, CD-L2, F@0.005, F@0.01 and NC of a sampled reconstruction against the GT.

    One pair of kd-tree queries for all five (same formulas as ``chamfer_distance``,
    ``f_score`` and ``normal_consistency``; tests/surface/test_mpf.py checks the equality).
    """
    return _surface_scores(points, normals, data.gt_points, data.gt_normals, (0.005, 0.01))


def mesh_row(V, F, data, n_samples):
    if len(F) == 0:
        return {"cd_l1": np.nan, "note": "empty mesh"}
    P, N = sample_mesh(V, F, n_samples, random_state=0)
    return scores(P, N, data)


def open3d_rows(X, data, n_samples, spacing):
    """Screened Poisson (raw, density-trimmed) and ball pivoting, when open3d imports."""
    try:
        import open3d as o3d
    except Exception as exc:  # missing package or system library (libusb)
        print(f"open3d rows skipped: {type(exc).__name__}: {exc}", file=sys.stderr)
        return []
    rows = []
    pcd = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(X))
    start = time.perf_counter()
    pcd.estimate_normals(o3d.geometry.KDTreeSearchParamKNN(30))
    pcd.orient_normals_consistent_tangent_plane(30)
    normals_s = time.perf_counter() - start

    def poisson():
        return o3d.geometry.TriangleMesh.create_from_point_cloud_poisson(pcd, depth=8)

    m = measure(poisson)
    mesh, density = m.result
    V, F = np.asarray(mesh.vertices), np.asarray(mesh.triangles)
    rows.append({"method": "open3d.Poisson", **mesh_row(V, F, data, n_samples),
                 "fit_seconds": m.seconds + normals_s, "peak_memory_mb": m.peak_memory_mb})
    density = np.asarray(density)
    keep = density >= np.quantile(density, 0.1)
    F_trim = F[np.all(keep[F], axis=1)]
    rows.append({"method": "open3d.Poisson[density-trim]",
                 **mesh_row(V, F_trim, data, n_samples),
                 "fit_seconds": m.seconds + normals_s, "peak_memory_mb": m.peak_memory_mb})
    radii = o3d.utility.DoubleVector([1.5 * spacing, 2 * spacing, 3 * spacing, 4 * spacing])
    m = measure(o3d.geometry.TriangleMesh.create_from_point_cloud_ball_pivoting, pcd, radii)
    V, F = np.asarray(m.result.vertices), np.asarray(m.result.triangles)
    rows.append({"method": "open3d.BallPivoting", **mesh_row(V, F, data, n_samples),
                 "fit_seconds": m.seconds + normals_s, "peak_memory_mb": m.peak_memory_mb})
    return rows


def run(shapes, noises, params, resolution, n_samples, verbose, n_input=None):
    rows = []
    for name in shapes:
        data = load_mpf_shape(name)
        if n_input is not None:  # --quick: fewer input and ground-truth points
            data.points = data.points[:n_input]
            data.gt_points, data.gt_normals = data.gt_points[:n_samples], data.gt_normals[
                :n_samples]
        floor_pts, floor_n = make_thin_shell(name, n_samples, random_state=1)
        if data.sha256 is None:  # regenerated ground truth = this very sample: draw another
            floor_pts, floor_n = make_thin_shell(name, n_samples, random_state=2)
        floor = {"method": "floor", **scores(floor_pts, floor_n, data)}
        for noise in noises:
            X = data.points + noise * np.random.default_rng(7).normal(size=data.points.shape)
            block = [dict(floor)]
            for field in ("mpf", "sdf", "udf"):
                est = MPFSurface(field=field, **params)
                fit = measure(est.fit, X)
                trims = {"mpf": ["metric", "points"], "sdf": [None, "points"],
                         "udf": [None]}[field]
                for trim in trims:
                    start = time.perf_counter()
                    V, F = est.extract_mesh(resolution, trim=trim)
                    extract_s = time.perf_counter() - start
                    label = "MPFSurface" if field == "mpf" else f"MPFSurface[field={field}]"
                    if (field, trim) != ("mpf", "metric") and trim is not None:
                        label = f"{label}[trim={trim}]"
                    row = {"method": label, **mesh_row(V, F, data, n_samples),
                           "fit_seconds": fit.seconds, "extract_seconds": extract_s,
                           "peak_memory_mb": fit.peak_memory_mb}
                    block.append(row)
                    if verbose:
                        print(f"{name} noise={noise} {label}: CD-L1 {row['cd_l1']:.4f} "
                              f"NC {row.get('nc', np.nan):.4f} fit {fit.seconds:.0f}s",
                              flush=True)
            spacing = float(np.median(cKDTree(X).query(X, k=2)[0][:, 1]))
            block += open3d_rows(X, data, n_samples, spacing)
            for row in block:
                row.update(dataset=name, noise=noise)
                row["cd_l1_over_floor"] = row["cd_l1"] / floor["cd_l1"]
            rows += block
    return rows


def targets(rows):
    """The spec's "must" and "ambitious" targets (section 7), checked on the rows.

    Returns
    -------
    checks : list of dict
        ``{"target", "spec", "measured", "met"}`` per check, as ``write_results`` records them.
    """
    checks = []
    by = {}
    for r in rows:
        by.setdefault((r["dataset"], r["noise"]), {})[r["method"]] = r

    def add(target, spec, measured, met):
        checks.append({"target": target, "spec": spec, "measured": float(measured),
                       "met": bool(met)})

    for (name, noise), m in by.items():
        mpf = m["MPFSurface"]
        where = f"{name}, noise {noise}"
        for abl in ("MPFSurface[field=sdf]", "MPFSurface[field=udf]"):
            short = abl.split("=")[1].rstrip("]")
            add(f"must: MPF CD-L1 < {short} ({where})", f"< {m[abl]['cd_l1']:.4g}",
                mpf["cd_l1"], mpf["cd_l1"] < m[abl]["cd_l1"])
            add(f"must: MPF NC > {short} ({where})", f"> {m[abl]['nc']:.4g}", mpf["nc"],
                mpf["nc"] > m[abl]["nc"])
        best = min(mpf["cd_l1"], m["MPFSurface[trim=points]"]["cd_l1"])
        if "open3d.Poisson" in m:
            ref = m["open3d.Poisson"]["cd_l1"]
            add(f"must: best MPF trim CD-L1 < raw Poisson ({where})", f"< {ref:.4g}", best,
                best < ref)
        if noise > 0 and "open3d.BallPivoting" in m:
            ref = m["open3d.BallPivoting"]["nc"]
            add(f"must: MPF NC > ball pivoting ({where})", f"> {ref:.4g}", mpf["nc"],
                mpf["nc"] > ref)
        if noise == 0 and name in ("open_hemisphere", "open_cylinder"):
            add(f"ambitious: MPF CD-L1 / floor ({where})", "<= 1.5",
                mpf["cd_l1_over_floor"], mpf["cd_l1_over_floor"] <= 1.5)
        ref = m["MPFSurface[field=sdf][trim=points]"]["cd_l1"]
        add(f"ambitious: MPF CD-L1 <= SDF + point trim ({where})", f"<= {ref:.4g}",
            mpf["cd_l1"], mpf["cd_l1"] <= ref)
    return checks


PROTOCOL = ("shared/specs/mpf.md section 7 on the three shared shapes at input noise 0 and "
            "0.005 (seed 7), MPF defaults except max_epochs={epochs} ({steps} optimiser steps "
            "instead of 2000), extraction at resolution {resolution}, every mesh sampled with "
            "{n_samples} points (random_state 0).")
NOTES = [
    "Open3D rows (screened Poisson raw / density-trimmed, ball pivoting) are absent when "
    "open3d does not import (not installed here: the package needs the system library "
    "libusb-1.0); the targets that need them are then not checked.",
    "Seconds are wall time on 2 CPU cores shared with other jobs (one torch thread); they are "
    "upper bounds.",
    "floor = an independent 100000-point sample of the true shape (make_thin_shell, "
    "random_state 1) scored as a reconstruction.",
]


def main(argv=None):
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--max-epochs", type=int, default=15,
                        help="epochs per fit in the full run (spec default: 100)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--targets-only", default=None, metavar="JSON",
                        help="re-check the targets on the rows of an existing result file "
                             "and rewrite it (no fitting)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.quick:
        shapes, noises, resolution = ["open_hemisphere"], [0.0], 48
        params = dict(max_epochs=5, hidden_width=32, head_width=32, warm_start_iter=30,
                      random_state=0)
        n_samples, n_input = 20000, 4000
    else:
        shapes, noises, resolution = list(MPF_SHAPES), [0.0, 0.005], 128
        params = dict(max_epochs=args.max_epochs, random_state=0)
        n_samples, n_input = 100000, None
    start = time.perf_counter()
    protocol = PROTOCOL.format(epochs=params["max_epochs"], steps=params["max_epochs"] * 20,
                               resolution=resolution, n_samples=n_samples)
    if args.quick:
        protocol = "--quick: " + __doc__.split("``--quick``:")[1].strip()
    if args.targets_only:
        payload = json.loads(Path(args.targets_only).read_text())
        rows = payload["rows"]
        protocol = payload.get("protocol", protocol)
        args.output = args.targets_only
    else:
        rows = run(shapes, noises, params, resolution, n_samples, verbose=not args.quick,
                   n_input=n_input)
    for noise in noises:
        print(f"\n### noise = {noise}  (MPF: {params}, resolution {resolution})\n")
        print(markdown_table([r for r in rows if r["noise"] == noise], COLUMNS))
    checks = targets(rows)
    print()
    print(markdown_table(checks, ["target", "spec", "measured", "met"]))
    print(f"\n{sum(c['met'] for c in checks)} of {len(checks)} targets met")
    path = write_results("mpf", rows, args.quick, path=args.output, targets=checks,
                         protocol=protocol, notes=NOTES)
    print(f"\nwrote {path} in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
