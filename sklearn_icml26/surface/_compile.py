"""The compiled training step of MPFSurface (``compile=True`` / ``"auto"``)."""

import warnings

import torch

from ._loss import _step_loss

# compile="auto": compile the training step only for fits of at least this many full batches
_COMPILE_MIN_STEPS = 1000

_COMPILED_STEP_LOSS = None


class _CompiledStep:
    """The per-step network work (:func:`_step_loss`: forward with the closed-form
    gradients, forward jet of the Laplacian, loss terms and their backward) compiled by
    ``torch.compile`` (inductor, static shapes).

    Only the steps of a full batch with the pools' sample counts are compiled (two graphs:
    with and without the Laplacian points); a shorter last batch of an epoch runs eagerly.
    The first call compiles; if compiling or running the compiled code raises, the step
    falls back to the eager code for the rest of the fit (``failed``), without an error.
    """

    def __init__(self, batch, n_off, weights, field, align_magnitude, far_alpha):
        self.batch, self.n_off = int(batch), int(n_off)
        self.weights = {k: float(v) for k, v in weights.items()}
        self.field = field
        self.align_magnitude, self.far_alpha = float(align_magnitude), float(far_alpha)
        self.failed = False
        self.warn = False  # warn when compiling fails (compile=True asked for it)
        self.calls = 0
        self.factor = None

    @staticmethod
    def _function():
        global _COMPILED_STEP_LOSS
        if _COMPILED_STEP_LOSS is None:
            _COMPILED_STEP_LOSS = torch.compile(_step_loss, dynamic=False)
        return _COMPILED_STEP_LOSS

    def applies(self, n_batch, n_off):
        return not self.failed and n_batch == self.batch and n_off == self.n_off

    def __call__(self, module, pts, lap_pts, d_x, normals, laplacian_factor):
        """``(terms, total)`` or ``None`` after a failure (then the caller runs eagerly)."""
        if self.factor is None or self.factor.dtype != pts.dtype:
            self.factor = torch.zeros((), dtype=pts.dtype, device=pts.device)
        self.factor.fill_(float(laplacian_factor))
        try:
            result = self._function()(module, pts, lap_pts, d_x, normals, self.factor,
                                      self.batch, self.n_off, self.field, self.weights,
                                      self.align_magnitude, self.far_alpha)
        except Exception as exc:  # no compiler, unsupported platform or torch version
            self.failed = True
            if self.warn:
                warnings.warn(f"MPFSurface(compile=True): torch.compile failed "
                              f"({type(exc).__name__}: {exc}); the fit goes on with eager "
                              "training steps.", UserWarning, stacklevel=2)
            return None
        self.calls += 1
        return result

