"""The key store of :class:`HubnessBalancedCodebook`: keys, radii, merging and the gate sample.

:class:`_KeyIndex` holds the growing arrays of the codebook (keys, squared norms, radii, sorted
nearest-neighbour distances, running distance sums, edit ids and merge counts), inserts one
key at a time (merging it into an overlapping key when the merging rule says so), and keeps
the uniform sample of keys whose pairwise distances calibrate the locality gate, with the
sorted prefixes from which the gate's percentile is found without scanning every pair.
"""

import math

import numpy as np

from ..utils._scaling import _pow2_scale

# keys closer than this fraction of the larger key norm (Euclidean) merge even at radius 0:
# relative, so that keys at 1e-13 stay apart while floating-point copies of a key at 1e8 merge
_DUPLICATE_RTOL = 1e-12


# -- geometry of the merging rule ---------------------------------------------------------------
def _lens_area(d, r1, r2):
    """Area of the intersection of two discs of radii ``r1``, ``r2`` at distance ``d``.

    Vectorised over broadcastable arrays. The planar lens area serves as a monotone overlap
    score of two key balls (not a volume in the embedding space).
    """
    d, r1, r2 = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (d, r1, r2)))
    area = np.zeros(d.shape)
    small = np.minimum(r1, r2)
    inside = d <= np.abs(r1 - r2)
    area[inside] = np.pi * small[inside] ** 2
    lens = (d < r1 + r2) & ~inside
    if lens.any():
        dd, a, b = d[lens], r1[lens], r2[lens]
        c1 = np.clip((dd**2 + a**2 - b**2) / (2 * dd * a), -1.0, 1.0)
        c2 = np.clip((dd**2 + b**2 - a**2) / (2 * dd * b), -1.0, 1.0)
        kite = (-dd + a + b) * (dd + a - b) * (dd - a + b) * (dd + a + b)
        area[lens] = (a**2 * np.arccos(c1) + b**2 * np.arccos(c2)
                      - 0.5 * np.sqrt(np.maximum(kite, 0.0)))
    return area


def _ioa(d, r_a, r_b):
    """Intersection over the area of disc ``a``: ``A(d, r_a, r_b) / (pi r_a^2)``, 0 if r_a = 0."""
    r_a = np.asarray(r_a, dtype=np.float64)
    area = _lens_area(d, r_a, r_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(r_a > 0, area / (np.pi * r_a**2), 0.0)


def _merge_target(eu, r, radii, ioa, dist_frac, duplicate=None):
    """Index of the first key that absorbs a new key at Euclidean distances ``eu``, or -1.

    Candidates are the keys whose ball overlaps the new one (``eu < r + r_j``) or duplicates
    (the boolean mask ``duplicate``, default ``eu == 0``); the first (lowest index) candidate
    that is very close relative to both radii (``eu < dist_frac * r`` and
    ``eu < dist_frac * r_j``) or whose two intersection-over-area ratios both exceed ``ioa``
    absorbs the new key. The rule is scale-free: it is evaluated on power-of-two pre-scaled
    distances and radii (exact), so that the disc areas neither overflow nor underflow.
    """
    if duplicate is None:
        duplicate = eu == 0
    cand = np.flatnonzero((eu < r + radii) | duplicate)
    if cand.size == 0:
        return -1
    c = float(_pow2_scale(np.concatenate([eu[cand], radii[cand], [r]])))
    d, rj, r = eu[cand] / c, radii[cand] / c, r / c
    close = (d < dist_frac * r) & (d < dist_frac * rj)
    overlap = (_ioa(d, r, rj) > ioa) & (_ioa(d, rj, r) > ioa)
    hit = np.flatnonzero(duplicate[cand] | close | overlap)
    return int(cand[hit[0]]) if hit.size else -1


def _virtual_index(n, p):
    """Rank and weight of numpy's linear percentile ``p`` of ``n`` values."""
    vi = (n - 1) * (p / 100.0)
    if vi >= n - 1:
        return n - 1, n - 1, 0.0
    lo = math.floor(vi)
    return lo, lo + 1, vi - lo


def _lerp(a, b, t):
    """numpy's linear-percentile interpolation between two order statistics."""
    diff = b - a
    return b - diff * (1 - t) if t >= 0.5 else a + diff * t


class _KeyIndex:
    """Growing key store of a codebook, updated one key at a time (see the module docstring).

    Parameters
    ----------
    n_knn : int
        Sorted nearest-neighbour distances kept per key.
    metric : {"euclidean", "cosine"}
        Distance of the neighbour lists and of the gate sample.
    merge, merge_ioa, merge_dist_frac :
        The merging rule of the codebook (see :func:`_merge_target`).
    reject_sample : int
        Size of the uniform key sample the gate is calibrated on.

    Attributes
    ----------
    n : int
        Number of keys (rows ``[:n]`` of the arrays are in use; ``cap`` rows are allocated).
    dim : int or None
        Width of the keys (``None`` before the first key).
    c : float
        Power-of-two unit of ``sqn`` (in ``c**2``), ``sum_d`` (in ``c``) and ``sum_d2`` (in
        ``c**2``), at the order of the largest coordinate inserted (1 under ``"cosine"``).
    values, edit_sets : list
        Value and set of merged edit ids of each key.
    samp, samp_M, samp_n :
        Key indices of the gate sample per slot, their pairwise distances and the sample size.
    pre, pre_idx, pre_len, pre_cnt :
        Per sample slot: the smallest distances to the sample keys inserted before it (a
        sorted prefix of width ``pre_k``), their slots, the prefix length and the full count.
    edits_seen, next_edit, n_rows :
        Edit ids inserted, the next fresh edit id and the rows inserted (merged ones too).
    rng : numpy.random.Generator or None
        The random stream of the insertions (gate priorities, word dropout), continued by
        ``partial_fit``.
    noted_knn : bool
        Whether the weak-``hubness_knn`` warning was given.
    stats : dict
        Per-key scale statistics of the codebook's ``scaling`` (set by the codebook).
    """

    def __init__(self, n_knn, metric, merge, merge_ioa, merge_dist_frac, reject_sample):
        self.L = n_knn
        self.metric = metric
        self.merge = merge
        self.merge_ioa = merge_ioa
        self.merge_dist_frac = merge_dist_frac
        self.reject_sample = reject_sample
        self.n = 0
        self.cap = 0
        self.dim = None
        self.c, self.c_set = 1.0, False
        self.X = self.sqn = self.radii = self.knn = None
        self.sum_d = self.sum_d2 = self.prio = self.edit = self.mcount = None
        self.values, self.edit_sets = [], []
        self.samp = np.zeros(0, dtype=np.int64)
        self.samp_M = np.zeros((0, 0))
        self.samp_n = 0
        self.pre_k = 64
        self.pre = np.zeros((0, self.pre_k))
        self.pre_idx = np.zeros((0, self.pre_k), dtype=np.int64)
        self.pre_len = np.zeros(0, dtype=np.int64)
        self.pre_cnt = np.zeros(0, dtype=np.int64)
        self.edits_seen = set()
        self.next_edit = 0
        self.n_rows = 0
        self.rng = None
        self.noted_knn = False
        self.stats = {}

    def grow(self, need):
        if need <= self.cap:
            return
        cap = max(64, self.cap)
        while cap < need:
            cap *= 2
        d, L = self.dim, self.L

        def grown(old, shape, fill=0.0, dtype=np.float64):
            new = np.full(shape, fill, dtype=dtype)
            if old is not None:
                new[: self.n] = old[: self.n]
            return new

        self.X = grown(self.X, (cap, d))
        self.sqn = grown(self.sqn, cap)
        self.radii = grown(self.radii, cap)
        self.knn = grown(self.knn, (cap, L), np.inf)
        self.sum_d = grown(self.sum_d, cap)
        self.sum_d2 = grown(self.sum_d2, cap)
        self.prio = grown(self.prio, cap)
        self.edit = grown(self.edit, cap, 0, np.int64)
        self.mcount = grown(self.mcount, cap, 0, np.int64)
        self.cap = cap

    def _rescale(self, x):
        """Raise the power-of-two unit ``c`` to the order of ``max |x|`` if it is below it.

        Squared norms and the running distance sums are kept in units of ``c`` (``c**2``) so
        that they neither overflow (keys near 1e160) nor underflow (keys near 1e-170). ``c``
        depends on the rows inserted so far in order, not on how they were chunked, and
        dividing by a power of two is exact, so nothing changes at ordinary scales.
        """
        if self.metric == "cosine" or not x.any():  # unit or zero vectors: nothing to scale
            return
        c = float(_pow2_scale(x))
        if self.c_set and c <= self.c:
            return
        self.c_set = True  # the first non-zero row sets the unit, later rows only raise it
        n = self.n
        if n:
            f = c / self.c
            self.sqn[:n] /= f
            self.sqn[:n] /= f
            self.sum_d[:n] /= f
            self.sum_d2[:n] /= f
            self.sum_d2[:n] /= f
        self.c = c

    def insert(self, x, value, edit, r, prio):
        """Insert one key; True when it was absorbed by an existing key."""
        n = self.n
        self._rescale(x)
        c = self.c
        xs = x / c
        xx = float(xs @ xs)
        if n:
            K = self.X[:n]
            g = (K @ xs) / c
            sq = np.maximum(self.sqn[:n] + xx - 2.0 * g, 0.0)  # in units of c**2
            # exact differences where the expansion loses digits (near keys) or a merge may
            # happen (overlapping balls); the expansion elsewhere
            near = np.flatnonzero(sq <= 1e-6 * (self.sqn[:n] + xx)
                                  + ((r + self.radii[:n]) / c) ** 2)
            eu = np.sqrt(sq) * c
            if near.size:
                diff = K[near] - x
                cd = _pow2_scale(diff, axis=1)[:, None]
                diff /= cd
                eu[near] = np.sqrt(np.einsum("ij,ij->i", diff, diff)) * cd[:, 0]
            if self.merge:
                duplicate = eu <= _DUPLICATE_RTOL * c * np.sqrt(np.maximum(self.sqn[:n], xx))
                j = _merge_target(eu, r, self.radii[:n], self.merge_ioa,
                                  self.merge_dist_frac, duplicate)
                if j >= 0:
                    self.radii[j] = max(self.radii[j], eu[j] + r)
                    if value and value not in self.values[j]:
                        self.values[j] = f"{self.values[j]} {value}"
                    self.mcount[j] += 1
                    self.edit_sets[j].add(edit)
                    return True
            d = eu if self.metric == "euclidean" else np.maximum(1.0 - g, 0.0)
        self.grow(n + 1)
        self.X[n] = x
        self.sqn[n] = xx
        self.radii[n] = r
        self.prio[n] = prio
        self.edit[n] = edit
        self.mcount[n] = 0
        self.values.append(value)
        self.edit_sets.append({edit})
        L = self.L
        if n:
            kn = self.knn[:n]
            rows = np.flatnonzero(d < kn[:, -1])
            if rows.size:
                block = np.concatenate([kn[rows], d[rows, None]], axis=1)
                block.sort(axis=1)
                kn[rows] = block[:, :L]
            m = min(L, n)
            self.knn[n, :m] = np.sort(np.partition(d, m - 1)[:m] if m < n else d)
            ds = d / c
            self.sum_d[:n] += ds
            self.sum_d2[:n] += ds * ds
            self.sum_d[n] = ds.sum()
            self.sum_d2[n] = (ds * ds).sum()
            self._sample_add(n, d, prio)
        else:
            self._sample_add(0, np.zeros(0), prio)
        self.n = n + 1
        return False

    def _sample_add(self, idx, d, prio):
        """Enter key ``idx`` (distances ``d`` to keys 0..idx-1) into the gate sample if due.

        The sample holds the ``reject_sample`` keys of smallest priority with their pairwise
        distances in a preallocated buffer (slots in insertion order until the sample is
        full; then a new key takes the slot of the key it replaces). Each slot also keeps the
        sorted smallest distances to the sample keys inserted before it (a prefix), from
        which the gate's percentile is usually found without scanning every pair.
        """
        s = self.samp_n
        M = self.samp_M
        if s >= self.reject_sample:  # full: the new key replaces the largest priority
            samp = self.samp[:s]
            worst = int(np.argmax(self.prio[samp]))
            if prio >= self.prio[samp[worst]]:
                return
            old_key = samp[worst]
            row = d[samp]
            row[worst] = 0.0
            samp[worst] = idx
            M[worst, :s] = row
            M[:s, worst] = row
            # the replaced key leaves the prefixes of the keys inserted after it
            later = self.samp[:s] > old_key
            later[worst] = False
            self.pre_cnt[:s][later] -= 1
            hit = np.flatnonzero((self.pre_idx[:s] == worst).any(axis=1) & later)
            for b in hit:
                keep = self.pre_idx[b] != worst
                n_keep = int(keep[: self.pre_len[b]].sum())
                self.pre[b, :n_keep] = self.pre[b][keep][:n_keep]
                self.pre_idx[b, :n_keep] = self.pre_idx[b][keep][:n_keep]
                self.pre[b, n_keep:] = np.inf
                self.pre_len[b] = n_keep
            others = np.flatnonzero(np.arange(s) != worst)
            self._set_prefix(worst, row[others], others)
            return
        if s + 1 > M.shape[0]:
            cap = min(max(64, 2 * M.shape[0]), self.reject_sample)
            grown = np.zeros((cap, cap))
            grown[:s, :s] = M[:s, :s]
            samp = np.zeros(cap, dtype=np.int64)
            samp[:s] = self.samp[:s]
            self.samp_M, self.samp, M = grown, samp, grown
            K = self.pre_k
            for name, fill, dt in (("pre", np.inf, np.float64), ("pre_idx", -1, np.int64)):
                new = np.full((cap, K), fill, dtype=dt)
                new[:s] = getattr(self, name)[:s]
                setattr(self, name, new)
            for name in ("pre_len", "pre_cnt"):
                new = np.zeros(cap, dtype=np.int64)
                new[:s] = getattr(self, name)[:s]
                setattr(self, name, new)
        row = d[self.samp[:s]]
        M[s, :s] = row
        M[:s, s] = row
        M[s, s] = 0.0
        self.samp[s] = idx
        self._set_prefix(s, row, np.arange(s))
        self.samp_n = s + 1

    def _set_prefix(self, slot, row, slots):
        """Prefix of ``slot``: the smallest of its distances ``row`` to earlier ``slots``."""
        K = self.pre_k
        m = min(K, row.size)
        if m < row.size:
            part = np.argpartition(row, m - 1)[:m]
        else:
            part = np.arange(row.size)
        order = part[np.argsort(row[part], kind="stable")]
        self.pre[slot] = np.inf
        self.pre_idx[slot] = -1
        self.pre[slot, :m] = row[order]
        self.pre_idx[slot, :m] = slots[order]
        self.pre_len[slot] = m
        self.pre_cnt[slot] = row.size

    def _refill_prefixes(self, slots, K=None):
        """Recompute the prefixes of ``slots`` from the sample's distance matrix."""
        s = self.samp_n
        if K is not None:  # widen every prefix
            self.pre_k = K
            cap = self.pre.shape[0]
            self.pre = np.full((cap, K), np.inf)
            self.pre_idx = np.full((cap, K), -1, dtype=np.int64)
            slots = np.arange(s)
        keys = self.samp[:s]
        for b in slots:
            earlier = np.flatnonzero(keys < keys[b])
            self._set_prefix(b, self.samp_M[b, earlier], earlier)

    def prefix_threshold(self, p, scale):
        """Exact linear percentile ``p`` of ``prefix_distance / scale`` over all sample pairs.

        The order statistics needed lie in the union of the prefixes as soon as every
        incomplete prefix ends at or above them; prefixes that do not are refilled (or all
        widened) until that holds.
        """
        s = self.samp_n
        n_pairs = s * (s - 1) // 2
        lo, hi, t = _virtual_index(n_pairs, p)
        while True:
            U = self.pre[:s] / scale[:, None]
            n_finite = int(self.pre_len[:s].sum())
            if hi < n_finite:
                part = np.partition(U.ravel(), [lo, hi] if hi > lo else [lo])
                v_lo, v_hi = part[lo], part[hi]
                length = self.pre_len[:s]
                last = np.where(length > 0,
                                U[np.arange(s), np.maximum(length - 1, 0)], -np.inf)
                bad = np.flatnonzero((length < self.pre_cnt[:s]) & (last < v_hi))
                if bad.size == 0:
                    return float(_lerp(v_lo, v_hi, t))
            else:
                bad = np.flatnonzero(self.pre_len[:s] < self.pre_cnt[:s])
            full = self.pre_len[bad] >= self.pre_k
            if full.any() or bad.size > s // 4:
                self._refill_prefixes(None, K=min(2 * self.pre_k, max(s, 1)))
            else:
                self._refill_prefixes(bad)
