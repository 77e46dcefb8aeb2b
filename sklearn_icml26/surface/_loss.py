"""The loss of MPFSurface: the method's loss terms, their weighted total and the criterion
(with the kd-tree distance targets of the metric term)."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from torch import nn

DEFAULT_LOSS_WEIGHTS = {
    "zero": 3000.0,
    "far": 100.0,
    "metric": 300.0,
    "eikonal": 50.0,
    "align": 10.0,
    "normal": 100.0,
    "laplacian": 1.0,
    "phase": 50.0,
}
"""Weights of the loss terms (in this order in ``loss_terms_``)."""

_TERMS = tuple(DEFAULT_LOSS_WEIGHTS)


def _abs_cos(a, b):
    return torch.abs((a * b).sum(1)) / (a.norm(dim=1) * b.norm(dim=1) + 1e-8)


def _loss_terms(out, d_x, field, align_magnitude, far_alpha):
    """The unweighted loss terms of one step from the training forward's dict.

    ``out`` holds the fields and input gradients at ``[S; N; F]`` (the batch, its near and
    its free points: ``batch_size`` and ``n_off`` rows), optionally ``laplacian`` and the
    batch ``normals``; ``d_x`` is the distance to the points at ``[N; F]`` (``None`` for
    ``field="sdf"``).
    """
    B, n_off = out["batch_size"], out["n_off"]
    S, N, Fr = slice(0, B), slice(B, B + n_off), slice(B + n_off, B + 2 * n_off)
    NF = slice(B, B + 2 * n_off)
    phi, gphi = out["phi"], out["grad_phi"]
    terms = {}
    if field in ("mpf", "udf"):
        r, gr = out["r"], out["grad_r"]
        terms["metric"] = (r[NF] - d_x).abs().mean() + r[S].mean()
    if field in ("mpf", "sdf"):
        terms["zero"] = phi[S].abs().mean()
        terms["far"] = torch.exp(-far_alpha * phi[Fr].abs()).mean()
    if field == "mpf":
        th, gth = out["theta"], out["grad_theta"]
        terms["eikonal"] = ((gphi[S].norm(dim=1) - 1).abs().mean()
                            + (gr[Fr].norm(dim=1) - 1).abs().mean())
        terms["align"] = ((1 - _abs_cos(gr[N], gth[N]))
                          + align_magnitude * (th[N].abs() - r[N]).abs()).mean()
        terms["phase"] = (gth[NF].norm(dim=1) - 1).abs().mean()
    elif field == "sdf":
        terms["eikonal"] = (gphi.norm(dim=1) - 1).abs().mean()
    else:
        terms["zero"] = r[S].mean()
        terms["eikonal"] = (gr[Fr].norm(dim=1) - 1).abs().mean()
    normals = out.get("normals")
    if normals is not None and normals.shape[1] > 0 and field != "udf":
        terms["normal"] = (1 - _abs_cos(gphi[S], normals)).mean()
    if "laplacian" in out:
        terms["laplacian"] = out["laplacian"].abs().mean()
    return terms


def _weighted_total(terms, weights, laplacian_factor):
    """``sum_k w_k term_k`` (the Laplacian's weight times its schedule factor, a float or a
    0-d tensor); terms of weight 0 are left out. A float 0.0 when every weight is 0."""
    total = 0.0
    for key, value in terms.items():
        w = weights[key]
        if w == 0:
            continue
        if key == "laplacian":
            if not torch.is_tensor(laplacian_factor) and laplacian_factor == 0:
                continue
            w = w * laplacian_factor
        total = total + w * value
    return total


def _step_loss(module, pts, lap_pts, d_x, normals, laplacian_factor, n_batch, n_off, field,
               weights, align_magnitude, far_alpha):
    """One training step's fields, Laplacian, loss terms and total as one pure function of
    the sampled points (the function :class:`_CompiledStep` compiles)."""
    out = module.fields(pts, grads=True)
    if lap_pts is not None:
        out["laplacian"] = module.jet(lap_pts)["laplacian"]
    out["batch_size"], out["n_off"], out["normals"] = n_batch, n_off, normals
    terms = _loss_terms(out, d_x, field, align_magnitude, far_alpha)
    return terms, _weighted_total(terms, weights, laplacian_factor)



class _MPFCriterion(nn.Module):
    """The method's weighted loss terms from the training forward's dict.

    The step's loss mixes the batch S with freshly drawn near (N) and free (F) points, so it is
    not a sum over input points: every sample of the batch carries the step total, and the
    adapter's (weighted) mean returns that total.
    """

    query_threads = 0  # extra threads of the d_X queries (the estimator sets it from n_jobs)

    def __init__(self, field, weights, tree, align_magnitude, far_alpha):
        super().__init__()
        self.field = field
        self.weights = dict(weights)
        self.tree = tree
        self.align_magnitude = float(align_magnitude)
        self.far_alpha = float(far_alpha)
        self.laplacian_factor = 1.0
        self.last_terms = {}
        self._pool = None
        self._points_on_device = None  # the points for d_X on an accelerator (training only)

    def distance_async(self, pts):
        """d_X at ``pts`` computed in a worker thread (a future), or ``None``.

        scipy's kd-tree releases the GIL, so the query of one step's near and free points
        overlaps the network's forward pass; the distances are those of
        :meth:`_distance_to_points`. Only on the CPU and with ``query_threads >= 1`` (the
        estimator's ``n_jobs``); otherwise ``None`` (the caller queries on its own thread).
        """
        n_threads = int(self.query_threads or 0)
        if pts.device.type != "cpu" or self.tree is None or n_threads < 1:
            return None
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=n_threads, thread_name_prefix="mpf-dx")
        q = pts.detach().numpy().astype(np.float64)
        dtype = pts.dtype
        return self._pool.submit(
            lambda: torch.as_tensor(self.tree.query(q, k=1, workers=1)[0], dtype=dtype))

    def close(self):
        """Stop the query threads (the fitted estimator keeps no thread pool)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _distance_to_points(self, pts):
        """d_X at ``pts``: scipy's kd-tree on the CPU, an exact brute-force minimum elsewhere.

        On an accelerator the kd-tree would force a device round trip each step; the direct
        differences (no ``|a|^2 + |b|^2 - 2ab`` expansion, which loses float32 precision at
        small distances) give the same distances without one.
        """
        if pts.device.type == "cpu":
            q = pts.detach().numpy().astype(np.float64)
            dist, _ = self.tree.query(q, k=1, workers=torch.get_num_threads())
            return torch.as_tensor(dist, dtype=pts.dtype)
        ref = self._points_on_device
        if ref is None or ref.device != pts.device or ref.dtype != pts.dtype:
            ref = torch.as_tensor(self.tree.data, dtype=pts.dtype, device=pts.device)
            self._points_on_device = ref
        q = pts.detach()
        best = []
        for start in range(0, q.shape[0], 4096):
            block = torch.cdist(q[start : start + 4096], ref,
                                compute_mode="donot_use_mm_for_euclid_dist")
            best.append(block.min(dim=1).values)
        return torch.cat(best)

    def forward(self, y_pred, y_true=None):
        out = y_pred
        B = out["batch_size"]
        if "terms" in out:  # the compiled step computed the terms and their total
            terms, total = out["terms"], out["total"]
        else:
            d_x = out.get("d_x")
            if self.field in ("mpf", "udf"):
                NF = slice(B, B + 2 * out["n_off"])
                d_x = (d_x.result() if d_x is not None
                       else self._distance_to_points(out["x"][NF]))
            terms = _loss_terms(out, d_x, self.field, self.align_magnitude, self.far_alpha)
            total = _weighted_total(terms, self.weights, self.laplacian_factor)
        if not torch.is_tensor(total):  # every weighted term is off: a zero in the graph
            total = sum(v.sum() for v in terms.values()) * 0.0
        # one device-to-host transfer per step for the logged terms
        values = torch.stack([v.detach().reshape(()) for v in terms.values()]).double()
        self.last_terms = dict(zip(terms, values.cpu().tolist(), strict=True))
        return total.expand(B)

