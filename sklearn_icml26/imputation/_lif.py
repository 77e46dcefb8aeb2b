"""The leaky integrate-and-fire (LIF) confidence gate of NeuroMambaImputer.

A hard-threshold spike with a surrogate gradient and one LIF neuron per entry run over the
time axis. Pure torch.
"""

import torch


class _SurrogateSpike(torch.autograd.Function):
    """Heaviside ``H(v - theta)`` forward; ``1 / (1 + k |v - theta|)^2`` backward."""

    @staticmethod
    def forward(ctx, shifted, slope):
        ctx.save_for_backward(shifted)
        ctx.slope = slope
        return (shifted > 0).to(shifted.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (shifted,) = ctx.saved_tensors
        return grad_output / (1.0 + ctx.slope * shifted.abs()) ** 2, None


def _spike(v, threshold, slope):
    return _SurrogateSpike.apply(v - threshold, float(slope))


def _lif_gate(c, beta, threshold, slope):
    """Run one LIF neuron per entry over the time axis (axis 1), driven by ``c``.

    ``v_t = beta v_{t-1} + c_t - threshold s_{t-1}``, ``s_t = H(v_t - threshold)``; the reset
    term is detached (gradients flow through the leak and the drive only).

    Parameters
    ----------
    c : tensor of shape (batch, length, ...)
        Input current.
    beta : float
        Leak in [0, 1].
    threshold : float
        Firing threshold (> 0).
    slope : float
        Slope ``k`` of the surrogate gradient.

    Returns
    -------
    spikes, membrane : tensors of the shape of ``c``
    """
    v = torch.zeros_like(c[:, 0])
    s = torch.zeros_like(c[:, 0])
    vs, ss = [], []
    for c_t in c.unbind(1):
        v = beta * v + c_t - threshold * s.detach()
        s = _spike(v, threshold, slope)
        vs.append(v)
        ss.append(s)
    return torch.stack(ss, dim=1), torch.stack(vs, dim=1)
