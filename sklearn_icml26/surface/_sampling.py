"""Off-surface samples of MPFSurface's training steps: pools of near and free points with
their distance targets, drawn in the background on worker threads."""

import torch


class _Done:
    """A finished "future" holding a value (distances the pools already have)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


class _OffSurfacePools:
    """The near-surface and free samples of the training steps, drawn in pools.

    The distance targets ``d_X`` of a step's off-surface points are a kd-tree query, and for
    points of the box far from the shape it is the dearest part of a step (many input points
    are about equally far). So the samples come from pools: ``pool_factor * n`` near points
    (an input point drawn uniformly plus ``t sigma xi``, ``t`` = 1 or ``near_scale`` with
    probability 1/2 each, ``xi ~ N(0, I)``) and as many uniform points of the box, with
    their distances queried in one call; each step takes ``n`` of each pool at random
    (without replacement within the step) and the pools are re-drawn every
    ``refresh_every`` steps. With the defaults (8 and 32) each sample serves 4 steps on
    average and a step costs a quarter of the queries. The next pools are drawn when the
    current ones come into use; with worker threads their distances are computed in the
    background meanwhile (the same numbers, bit for bit).

    Parameters
    ----------
    points : tensor of shape (n_points, d)
        Normalised input points.
    sigma : tensor of shape (n_points, 1)
        Their neighbourhood scales.
    near_scale, box_half : float
        Wide-noise factor; half-width of the sampling box.
    n : int
        Near (and free) points per step.
    distance : callable or None
        ``d_X`` of a tensor of points (``None``: no distances, ``field="sdf"``).
    distance_async : callable or None
        Returns a future of ``d_X`` or ``None`` (then ``distance`` runs when needed).
    pool_factor, refresh_every : int
        Pool size in steps' worth of samples; steps between re-draws.
    """

    def __init__(self, points, sigma, near_scale, box_half, n, distance, distance_async=None,
                 pool_factor=8, refresh_every=32):
        self.points, self.sigma = points, sigma
        self.near_scale, self.box_half = float(near_scale), float(box_half)
        self.n = int(n)
        self.size = int(pool_factor) * self.n
        self.refresh_every = max(int(refresh_every), 1)
        self.distance, self.distance_async = distance, distance_async
        self.steps = 0
        self.current = None
        self.queried = 0  # points whose distances were queried (tests, benchmark notes)
        self.pending = self._new_pool()

    def _new_pool(self):
        P, M = self.points, self.size
        idx = torch.randint(P.shape[0], (M,), device=P.device)
        scale = torch.where(torch.rand(M, 1, dtype=P.dtype, device=P.device) < 0.5,
                            1.0, self.near_scale)
        near = P[idx] + scale * self.sigma[idx] * torch.randn(M, P.shape[1], dtype=P.dtype,
                                                              device=P.device)
        free = (torch.rand_like(near) * 2.0 - 1.0) * self.box_half
        pts = torch.cat([near, free])
        future = None
        if self.distance is not None and self.distance_async is not None:
            future = self.distance_async(pts)
            self.queried += pts.shape[0]
        return [pts, future]

    def _activate(self):
        pts, future = self.pending
        if self.distance is None:
            d = None
        elif future is not None:
            d = future.result()
        else:
            d = self.distance(pts)
            self.queried += pts.shape[0]
        self.current = (pts, d)
        self.pending = self._new_pool()

    def draw(self, n=None):
        """One step's ``(near, free, d_X of [near; free] or None)``: (n, d), (n, d), (2n,).

        ``n`` (at most the pools' ``n``; default it) points of each pool.
        """
        if self.steps % self.refresh_every == 0:
            self._activate()
        self.steps += 1
        pts, d = self.current
        M, n = self.size, self.n if n is None else int(n)
        dev = pts.device
        both = torch.cat([torch.randperm(M, device=dev)[:n],
                          torch.randperm(M, device=dev)[:n] + M])
        sel = pts[both]
        return sel[:n], sel[n:], (None if d is None else d[both])

    def close(self):
        """Wait for a background query (the pools hold no thread of their own)."""
        if self.pending is not None and self.pending[1] is not None:
            self.pending[1].cancel() or self.pending[1].result()
        self.pending = None

