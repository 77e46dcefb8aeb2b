"""The windows of NeuroMambaImputer: series, window indices, edge anchors, phases and the
packed (n_windows, W, 14F) input of the module. Pure numpy."""

import numpy as np


def _series_rows(series_id, n_rows):
    """List of row-index arrays, one per series (rows of a series keep their order)."""
    if series_id is None:
        return [np.arange(n_rows)]
    _, inverse = np.unique(series_id, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    counts = np.bincount(inverse)
    return np.split(order, np.cumsum(counts)[:-1])


def _window_index(series, window, stride):
    """(n_windows, window) row indices (-1 = padding); windows never cross a series.

    Starts at 0, stride, ... and one window ending at the series' last row, so every row is
    covered. A series shorter than the window gives one padded window.
    """
    out = []
    for rows in series:
        n = len(rows)
        if n <= window:
            idx = np.full(window, -1, dtype=np.int64)
            idx[:n] = rows
            out.append(idx[None])
            continue
        starts = list(range(0, n - window + 1, stride))
        if starts[-1] != n - window:
            starts.append(n - window)
        out.append(np.stack([rows[s:s + window] for s in starts]))
    return np.concatenate(out, axis=0)


def _edge_anchors(Z, obs, series, index, profile=None, half=0):
    """Nearest observed entry of each column before and after every window, in its series.

    Returns ndarray of shape (n_windows, 8F): the value and distance (rows from the window's
    first row back to it) of the anchor before the window, the same after the window (rows
    from its last row), the seasonal profile at the two anchors (0 without ``profile``) and
    the smoothed level at the two anchors: the mean of ``Z - profile`` over the observed rows
    within ``half`` rows of the anchor on its outer side (the anchor included; rows inside
    the window never enter). A distance of 0 means the series has no observed entry of that
    column on that side.
    """
    n_windows, _ = index.shape
    n_features = Z.shape[1]
    out = np.zeros((n_windows, 8 * n_features))
    series_of = np.empty(Z.shape[0], dtype=np.int64)
    position = np.empty(Z.shape[0], dtype=np.int64)
    for k, rows in enumerate(series):
        series_of[rows], position[rows] = k, np.arange(len(rows))
    valid = index >= 0
    first = index[:, 0]
    last = index[np.arange(n_windows), valid.sum(1) - 1]
    cols = np.arange(n_features)
    for k, rows in enumerate(series):
        n = len(rows)
        here = np.flatnonzero(series_of[first] == k)
        if not here.size:
            continue
        o = obs[rows]
        pos = np.arange(n)[:, None]
        prev = np.maximum.accumulate(np.where(o, pos, -1), axis=0)  # last observed <= p
        nxt = np.minimum.accumulate(np.where(o, pos, n)[::-1], axis=0)[::-1]  # first >= p
        z = np.where(o, Z[rows], 0.0)
        prof = profile[rows] if profile is not None else np.zeros_like(z)
        dz = np.vstack([np.zeros((1, n_features)), np.cumsum(np.where(o, z - prof, 0.0), 0)])
        dc = np.vstack([np.zeros((1, n_features)), np.cumsum(o, 0, dtype=np.float64)])
        p0, p1 = position[first[here]], position[last[here]]
        left = np.where((p0 > 0)[:, None], prev[np.maximum(p0 - 1, 0)], -1)
        right = np.where((p1 < n - 1)[:, None], nxt[np.minimum(p1 + 1, n - 1)], n)
        has_left, has_right = left >= 0, right < n
        li, ri = np.clip(left, 0, n - 1), np.clip(right, 0, n - 1)
        f = n_features
        out[here, 0 * f:1 * f] = np.where(has_left, z[li, cols], 0.0)
        out[here, 1 * f:2 * f] = np.where(has_left, p0[:, None] - left, 0)
        out[here, 2 * f:3 * f] = np.where(has_right, z[ri, cols], 0.0)
        out[here, 3 * f:4 * f] = np.where(has_right, right - p1[:, None], 0)
        out[here, 4 * f:5 * f] = np.where(has_left, prof[li, cols], 0.0)
        out[here, 5 * f:6 * f] = np.where(has_right, prof[ri, cols], 0.0)
        lo, hi = np.clip(li - half, 0, n), li + 1  # rows li-half..li
        level = (dz[hi, cols] - dz[lo, cols]) / np.maximum(dc[hi, cols] - dc[lo, cols], 1.0)
        out[here, 6 * f:7 * f] = np.where(has_left, level, 0.0)
        lo, hi = ri, np.clip(ri + half + 1, 0, n)  # rows ri..ri+half
        level = (dz[hi, cols] - dz[lo, cols]) / np.maximum(dc[hi, cols] - dc[lo, cols], 1.0)
        out[here, 7 * f:8 * f] = np.where(has_right, level, 0.0)
    return out


def _windows(Z, obs, index, fill=None, fill_ok=None, profile=None, anchors=None,
             stream_profile=None):
    """Pack standardised values (0 where missing/padding), the mask, the cross-group fill,
    where it exists, the (local) seasonal profile, the edge anchors (repeated along the
    window) and the stream-wide profile as (n, W, 14F) (zeros for what is None)."""
    valid = index >= 0
    safe = np.where(valid, index, 0)
    values = np.where(obs, Z, 0.0)[safe]
    mask = obs[safe] & valid[..., None]
    values = np.where(mask, values, 0.0)
    zeros = np.zeros_like(values)
    parts = [values, mask.astype(values.dtype)]
    if fill is None:
        parts += [zeros, zeros]
    else:
        ok = fill_ok[safe] & valid[..., None]
        parts += [np.where(ok, fill[safe], 0.0), ok.astype(values.dtype)]
    parts.append(zeros if profile is None else np.where(valid[..., None], profile[safe], 0.0))
    n, w, f = values.shape
    parts.append(np.zeros((n, w, 8 * f)) if anchors is None
                 else np.broadcast_to(anchors[:, None, :], (n, w, 8 * f)))
    parts.append(zeros if stream_profile is None
                 else np.where(valid[..., None], stream_profile[safe], 0.0))
    return np.concatenate(parts, axis=-1)


def _phase(series, n_rows, period):
    """Position of every row in its series, modulo ``period``."""
    phase = np.zeros(n_rows, dtype=np.int64)
    for rows in series:
        phase[rows] = np.arange(len(rows)) % period
    return phase
