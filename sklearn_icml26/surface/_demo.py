"""Demo of MPFSurface on the shared open_hemisphere cloud (`python -m sklearn_icml26 demo mpf`).

Fits the metric-phase field and its signed ("sdf") ablation on the same unoriented cloud,
extracts both meshes (MPF trimmed at the open rim by its default rule, the SDF untrimmed, as a
plain signed field would be meshed), scores them against the dense ground truth and writes the
MPF mesh to a PLY file.
"""

import tempfile
import time
from pathlib import Path

import numpy as np

from ..datasets import load_mpf_shape
from ..metrics import chamfer_distance, normal_consistency, sample_mesh
from ..utils._demo_rows import demo_row, demo_table
from ._mesh_io import write_mesh
from ._mpf import MPFSurface

__all__ = ["run_demo"]


def run_demo(data_home=None, verbose=1, fast=False):
    """Reconstruct the open hemisphere with MPF and with its SDF ablation; compare CD-L1 / NC.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Data home holding ``mpf/open_hemisphere.npz`` (regenerated with a warning if absent).
    verbose : int, default=1
        ``1`` prints progress, the MPF epoch table and where the mesh was written.
    fast : bool, default=False
        A seconds-long version (5000 input points, small network, 3 epochs, grid 64).

    Returns
    -------
    table : pandas.DataFrame
        Columns ``DEMO_COLUMNS``; rows for CD-L1 and normal consistency of MPFSurface (anchor:
        the ``field="sdf"`` ablation).

    Examples
    --------
    >>> from sklearn_icml26.surface._demo import run_demo
    >>> table = run_demo(verbose=0, fast=True)  # doctest: +SKIP
    """
    name = "open_hemisphere"
    data = load_mpf_shape(name, data_home=data_home)
    X = data.points
    if fast:
        X = X[:5000]
        params = dict(hidden_size=64, max_epochs=3, batch_size=1024, warm_start_iter=50)
        resolution, n_samples = 64, 20000
    else:
        # 300 steps of 1024 points keep the demo short (benchmark: 2000 steps of 512)
        params = dict(max_epochs=15, batch_size=1024)
        resolution, n_samples = 128, 100000
    gt, gt_n = data.gt_points[:n_samples], data.gt_normals[:n_samples]
    results, seconds = {}, {}
    for field in ("mpf", "sdf"):
        if verbose:
            print(f"[mpf demo] fitting field={field!r} on {len(X)} points of {name} ...",
                  flush=True)
        start = time.perf_counter()
        est = MPFSurface(field=field, random_state=0, verbose=verbose, **params).fit(X)
        V, F = est.extract_mesh(resolution, trim="auto")
        seconds[field] = time.perf_counter() - start
        if len(F) == 0:
            results[field] = (np.nan, np.nan)
            continue
        P, N = sample_mesh(V, F, n_samples, random_state=0)
        results[field] = (chamfer_distance(P, gt), normal_consistency(P, N, gt, gt_n))
        if field == "mpf":
            try:  # binary PLY with the field's normals, through trimesh (the mesh extra)
                path = write_mesh(Path(tempfile.gettempdir()) / f"sklearn_icml26_mpf_{name}.ply",
                                  V, F, vertex_normals=est.surface_normals(V))
            except ImportError as exc:
                path = None
                if verbose:
                    print(f"[mpf demo] mesh not written: {exc}", flush=True)
            if verbose and path is not None:
                print(f"[mpf demo] MPF mesh ({len(V)} vertices, {len(F)} faces) written to "
                      f"{path}", flush=True)
    rows = [demo_row(method="MPFSurface", dataset=f"mpf/{name}", metric=metric,
                     value=results["mpf"][i], anchor="MPFSurface[field=sdf]",
                     anchor_value=results["sdf"][i], seconds=seconds["mpf"])
            for i, metric in enumerate(("CD-L1", "normal consistency"))]
    # the strongest tools a user would pick need Open3D, a benchmark-only extra: say where
    # they stand instead of leaving them out silently
    return demo_table(rows, note=(
        "mpf: the anchor here is MPF's own SDF ablation. The tools users would pick, Open3D's "
        "ball pivoting and density-trimmed Poisson, need Open3D (the 'open3d' extra, not "
        "installed by default); in the committed benchmark (2,000 steps, noise-free "
        "hemisphere) ball pivoting reaches CD-L1 0.00359 and trimmed Poisson 0.00378 against "
        "MPF's 0.00401, and with noise 0.005 MPF (0.00424) is ahead of ball pivoting "
        "(0.00541) and 0.3 % behind trimmed Poisson (0.00422); see "
        "benchmarks/results/mpf.json."))
