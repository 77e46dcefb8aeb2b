"""The faster paths of MPFSurface change no number.

With ``n_jobs >= 2`` the distance targets of the off-surface sample pools (a kd-tree query)
run in worker threads beside the network; the fitted fields must equal the single-thread
path's bit for bit, the threads must be gone after ``fit`` and the estimator must pickle.
The point-trimmed extraction evaluates only grid nodes near the points and must give the
full grid's mesh. The pools pair every sample with its own distance and refresh on schedule.
"""

import copy
import math
import os
import pickle
import threading

import numpy as np
import torch

from sklearn_icml26.base import FitContext
from sklearn_icml26.datasets import make_thin_shell
from sklearn_icml26.surface import MPFSurface
from sklearn_icml26.surface._loss import _MPFCriterion

torch.set_num_threads(1)

SMALL = dict(hidden_size=16, head_size=8, max_epochs=3, batch_size=100,
             warm_start_iter=20, random_state=0)


def _fit(field, X, **kw):
    return MPFSurface(field=field, **SMALL, **kw).fit(X)


def test_threaded_distance_queries_give_the_same_fit(monkeypatch):
    X, _ = make_thin_shell("open_arc", 400, random_state=0)
    Q = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    sync = {"mpf": _fit("mpf", X)}  # field="udf" takes the same path
    submitted = []
    original = _MPFCriterion.distance_async

    def spy(self, pts):
        fut = original(self, pts)
        submitted.append(fut is not None)
        return fut

    monkeypatch.setattr(_MPFCriterion, "distance_async", spy)
    for field in sync:
        submitted.clear()
        est = _fit(field, X, n_jobs=2)
        assert est.net_.criterion_.query_threads == 1
        # the off-surface pools (one now, the next in the background) queried in a thread
        refresh = 32
        steps = est.n_iter_ * 4  # epochs of 4 steps
        assert len(submitted) == 1 + math.ceil(steps / refresh) and all(submitted)
        np.testing.assert_array_equal(est.transform(Q), sync[field].transform(Q))
        np.testing.assert_array_equal(est.loss_curve_, sync[field].loss_curve_)
        assert est.net_.criterion_._pool is None
        assert getattr(est.module_, "distance_hook", None) is None
        pickle.loads(pickle.dumps(est))
    assert not [t for t in threading.enumerate() if t.name.startswith("mpf-dx")]


def test_default_keeps_the_queries_on_the_calling_thread():
    X, _ = make_thin_shell("open_arc", 200, random_state=0)
    est = MPFSurface(n_jobs=-1)
    context = FitContext(weights={}, tree=None)
    assert est._build_criterion(context).query_threads == min(2, (os.cpu_count() or 1) - 1)
    est.n_jobs = 5
    assert est._build_criterion(context).query_threads == 2
    for n_jobs in (None, 1):
        crit = MPFSurface(**SMALL, n_jobs=n_jobs).fit(X).net_.criterion_
        assert crit.query_threads == 0
        crit.tree = object()  # would fail if queried
        assert crit.distance_async(torch.zeros(3, 2)) is None


def test_point_trimmed_extraction_evaluates_only_near_nodes_and_keeps_every_face(monkeypatch):
    """trim='points' evaluates the grid only near the input points: same mesh, bit for bit."""
    from sklearn_icml26.surface import _extraction, _mpf

    H, _ = make_thin_shell("open_hemisphere", 2000, random_state=0)
    est = MPFSurface(hidden_size=32, head_size=16, max_epochs=2, batch_size=500,
                     warm_start_iter=30, random_state=0).fit(H)
    calls = []
    original = _mpf.MPFSurface._fields_normalised

    def counting(self, Qn, *args, **kwargs):
        calls.append(len(Qn))
        return original(self, Qn, *args, **kwargs)

    monkeypatch.setattr(_mpf.MPFSurface, "_fields_normalised", counting)
    cut = np.array([[-1.0, -0.6, -0.2], [0.7, 1.0, 1.0]])  # a box through the shape
    cases = [dict(resolution=48), dict(resolution=64, bounds=cut)]
    band = []
    for kw in cases:
        calls.clear()
        band.append(est.extract_mesh(**kw, trim="points"))
        band[-1] += (sum(calls),)
    monkeypatch.setattr(_extraction, "_SLAB_POINTS", 64 * 64 * 5)  # several slabs and seams
    band_slabs = est.extract_mesh(64, bounds=cut, trim="points")
    full_nodes = lambda self, axes, step, first, n: np.ones(  # noqa: E731
        (n, len(axes[1]), len(axes[2])), dtype=bool)
    monkeypatch.setattr(_mpf.MPFSurface, "_near_nodes", full_nodes)
    full_slabs = est.extract_mesh(64, bounds=cut, trim="points")
    monkeypatch.setattr(_extraction, "_SLAB_POINTS", 2**22)
    for kw, (V, F, evaluated) in zip(cases, band, strict=True):
        calls.clear()
        V0, F0 = est.extract_mesh(**kw, trim="points")
        assert len(F0) > 100
        np.testing.assert_array_equal(V, V0)
        np.testing.assert_array_equal(F, F0)
        assert evaluated < 0.5 * sum(calls)  # the band is a fraction of the grid
    for a, b in zip(band_slabs, full_slabs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_point_trimmed_extraction_in_a_small_box_stays_within_the_grid(monkeypatch):
    """A box a few point spacings wide makes the trimming reach many cells: the near nodes
    then come from a distance query (memory of the grid, not of the reach cubed) and the
    mesh is still the full grid's, face for face."""
    from sklearn_icml26.surface import _mpf

    H, _ = make_thin_shell("open_hemisphere", 400, random_state=0)
    est = MPFSurface(**SMALL).fit(H)
    c = H[2]  # a point where this short fit's zero set passes
    cases = [(16, np.stack([c - 5e-4, c + 5e-4])), (24, np.stack([c - 0.1, c + 0.1]))]
    band = [est.extract_mesh(res, bounds=box, trim="points") for res, box in cases]
    full_nodes = lambda self, axes, step, first, n: np.ones(  # noqa: E731
        (n, len(axes[1]), len(axes[2])), dtype=bool)
    monkeypatch.setattr(_mpf.MPFSurface, "_near_nodes", full_nodes)
    assert len(band[1][1]) > 100
    for (res, box), (V, F) in zip(cases, band, strict=True):
        V0, F0 = est.extract_mesh(res, bounds=box, trim="points")
        np.testing.assert_array_equal(V, V0)
        np.testing.assert_array_equal(F, F0)


def test_off_surface_pools_pair_points_with_their_distances_and_refresh_on_schedule():
    """Each drawn point carries its own d_X; the pools change exactly every refresh_every
    steps; near points follow the two noise scales, free points fill the box."""
    from scipy.spatial import cKDTree

    from sklearn_icml26.surface._sampling import _OffSurfacePools

    torch.manual_seed(0)
    X, _ = make_thin_shell("open_arc", 500, random_state=0)
    P = torch.as_tensor(X)
    sigma = torch.full((500, 1), 0.01, dtype=torch.float64)
    tree = cKDTree(X)
    calls = []

    def distance(pts):
        calls.append(len(pts))
        return torch.as_tensor(tree.query(pts.numpy())[0])

    pools = _OffSurfacePools(P, sigma, near_scale=4.0, box_half=1.0, n=50, distance=distance,
                             pool_factor=8, refresh_every=4)
    seen = []
    for _ in range(12):
        N, Fr, d = pools.draw()
        assert N.shape == Fr.shape == (50, 2) and d.shape == (100,)
        np.testing.assert_array_equal(d.numpy(), tree.query(torch.cat([N, Fr]).numpy())[0])
        assert len(set(map(tuple, N.numpy().tolist()))) == 50  # no repeats within a step
        seen.append(pools.current[0])
        near_d = tree.query(N.numpy())[0]
        assert near_d.max() < 4.0 * 0.01 * 6  # within six wide-noise deviations
        assert float(Fr.abs().max()) <= 1.0
    # 3 activations of 800 points (400 near + 400 free), queried when they come into use
    assert calls == [800, 800, 800] and pools.queried == 2400
    for step in range(12):
        same = seen[step] is seen[step - step % 4]
        assert same and (step % 4 or step == 0 or seen[step] is not seen[step - 1])
    N, Fr, d = pools.draw(10)  # a short last batch takes fewer points
    assert N.shape == (10, 2) and d.shape == (20,)


def test_warm_start_queries_its_box_pool_once(monkeypatch):
    X, _ = make_thin_shell("open_arc", 300, random_state=0)
    calls = []
    original = _MPFCriterion._distance_to_points

    def counting(self, pts):
        calls.append(len(pts))
        return original(self, pts)

    monkeypatch.setattr(_MPFCriterion, "_distance_to_points", counting)
    est = MPFSurface(**{**SMALL, "max_epochs": 1, "warm_start_iter": 25}).fit(X)
    assert est.n_iter_ == 1  # one epoch of 3 steps
    # one query of 8 warm-start batches of 2 * batch_size box points, then the training
    # steps' first pools: 8 steps' worth of near and of free points (50 each per step);
    # then the adapter's check of the final state (its DivergenceGuard) on the last batch,
    # with the pools closed: one query of its 50 near and 50 free points
    assert calls == [8 * 2 * SMALL["batch_size"], 2 * 8 * 50, 2 * 50]


def test_default_budget_is_2000_steps_of_512_points_on_20000_points():
    """The defaults keep the documented budget: 2,000 steps for 20,000 points, each step
    512 input points with 256 near and 256 free samples and their Laplacian on a quarter."""
    est = MPFSurface()
    steps = math.ceil(20000 / est.batch_size) * est.max_epochs
    n_off = math.ceil(est.off_surface_fraction * est.batch_size)
    assert (steps, est.batch_size, n_off) == (2000, 512, 256)
    assert math.ceil(est.laplacian_fraction * n_off) == 64


def _benchmark_arms():
    """benchmarks/_mpf_arms.py (the speed benchmark's "before" arm), loaded by its path."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "_mpf_arms.py"
    spec = importlib.util.spec_from_file_location("_mpf_arms", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmark_before_arm_trains_the_same_network_by_autograd(monkeypatch):
    """The speed arm's "before" (a subclass in benchmarks/, not a hidden attribute of the
    estimator) trains by autograd with a query per step, never from the pools; its step's
    fields, gradients and Laplacian equal the closed-form ones of the same network."""
    from sklearn_icml26.surface import _sampling

    arms = _benchmark_arms()
    X, _ = make_thin_shell("open_arc", 200, random_state=0)
    params = dict(SMALL, precision="float64")
    new = MPFSurface(**params).fit(X)

    def no_pools(self, n=None):
        raise AssertionError("the before arm drew from the pools")

    monkeypatch.setattr(_sampling._OffSurfacePools, "draw", no_pools)
    old = arms.OriginalMPFSurface(**params).fit(X)
    assert type(old.net_.module_) is arms._AutogradMPFModule
    assert arms.OriginalMPFSurface(compile=True)._compiled_step({}, 100, 200) is None
    assert old.n_iter_ == new.n_iter_ and np.all(np.isfinite(old.transform(X)))
    closed = new.net_.module_
    autograd = copy.deepcopy(closed)
    autograd.__class__ = arms._AutogradMPFModule
    pts = torch.rand(50, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    a, b = closed._step_fields(pts.clone(), pts[:10]), autograd._step_fields(pts.clone(), pts[:10])
    for key in ("r", "theta", "phi", "grad_r", "grad_theta", "grad_phi", "laplacian"):
        np.testing.assert_allclose(b[key].detach().numpy(), a[key].detach().numpy(),
                                   rtol=1e-9, atol=1e-9, err_msg=key)
