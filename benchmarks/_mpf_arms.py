"""The "before" arm of bench_mpf.py's speed arm: MPFSurface as it was first written.

:class:`OriginalMPFSurface` trains the same network (same parameters, same initialisation) with
the original implementation: input gradients and Laplacians by autograd's double backward
instead of the closed-form gradients and forward jets, a sampling and a kd-tree query of the
off-surface points at every step instead of the pools, and no compiled step. Both give the
same loss terms; only the cost differs. It lives here, not in the package: no user needs it.
"""

from sklearn_icml26.surface import MPFSurface
from sklearn_icml26.surface._network import _MPFModule


class _AutogradMPFModule(_MPFModule):
    """:class:`_MPFModule` whose training steps differentiate by autograd."""

    def _step_fields(self, pts, lap_pts):
        out = self.fields_autograd(pts.requires_grad_(True), grads=True, create_graph=True,
                                   direct_phi=False)
        if lap_pts is not None:
            out["laplacian"] = self.laplacian(lap_pts)
        return out


class OriginalMPFSurface(MPFSurface):
    """MPFSurface trained by the original implementation (the speed arm's "before")."""

    def _build_module(self, *args, **kwargs):
        module = super()._build_module(*args, **kwargs)
        module.__class__ = _AutogradMPFModule  # same network and parameters, other derivatives
        return module

    def _pool_data(self, points, sigma, n_off):
        return None  # a sampling and a distance query per step

    def _compiled_step(self, weights, batch, n):
        return None  # eager steps
