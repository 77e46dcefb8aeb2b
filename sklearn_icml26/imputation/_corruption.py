"""The training corruption of NeuroMambaImputer: which observed entries a training window
hides (points, per-feature blocks, group and device outages) and which it impulses."""

import torch

_DEFAULT_CORRUPTION = {"p_point": 0.1, "p_block": 0.2, "p_group": 0.1, "p_device": 0.1,
                       "p_impulse": 0.02, "impulse_scale": 5.0}


def _corrupt(x, obs, corruption, group_of, n_groups):
    """Hide and impulse observed entries of training windows.

    Draws from torch's global RNG (seeded by the training loop). ``x``, ``obs``: values and
    observed mask of shape (batch, length, features); ``corruption``: the rates of
    :data:`_DEFAULT_CORRUPTION` (all keys); ``group_of``: the group of each feature;
    ``n_groups``: the number of groups. Returns (x_in, obs_in, hidden, impulsed).
    """
    b, w, f = x.shape
    cfg = corruption
    dev, dt = x.device, x.dtype
    t = torch.arange(w, device=dev)

    def segments(n_rows, lo, hi, p):
        lo = max(1, min(lo, w))
        hi = max(lo, min(hi, w))
        length = torch.randint(lo, hi + 1, (b, n_rows), device=dev)
        start = (torch.rand(b, n_rows, device=dev) * (w - length + 1)).floor()
        on = torch.rand(b, n_rows, device=dev) < p
        seg = (t[None, None] >= start[..., None]) & (t[None, None] < (start + length)[
            ..., None])
        return (seg & on[..., None]).transpose(1, 2)  # (b, w, n_rows)

    hidden = torch.rand(b, w, f, device=dev) < cfg["p_point"]
    hidden |= segments(f, 2, w // 2, cfg["p_block"])
    hidden |= segments(n_groups, w // 4, w // 2, cfg["p_group"])[:, :, group_of]
    hidden |= segments(1, w // 8, w // 2, cfg["p_device"])
    hidden &= obs
    impulsed = (torch.rand(b, w, f, device=dev) < cfg["p_impulse"]) & obs & ~hidden
    sign = torch.where(torch.rand(b, w, f, device=dev) < 0.5, -1.0, 1.0).to(dt)
    # magnitudes U[0.5, 1] x impulse_scale: the scale of a column is inflated by its own
    # impulses, so genuine ones look smaller than impulse_scale in standardised units
    size = cfg["impulse_scale"] * (0.5 + 0.5 * torch.rand(b, w, f, device=dev, dtype=dt))
    x_in = torch.where(impulsed, x + size * sign, x)
    obs_in = obs & ~hidden
    return torch.where(obs_in, x_in, torch.zeros_like(x)), obs_in, hidden, impulsed
