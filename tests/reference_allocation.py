"""Reference (pure numpy) formulation of the fluid simulator's rate allocation.

The vectorised numpy code the compiled kernels of ``emulation/allocation_kernels.py`` must match
(plus the same rule that a residual capacity below the 'full' tolerance is 0);
``tests/fluid/test_allocation.py`` checks on random inputs that both give the same rates. Not
used by the simulator.
"""
from __future__ import annotations

import numpy as np

_REL = 1e-9


def _count(sub: np.ndarray, nl: int, weight: np.ndarray | None) -> np.ndarray:
    cnt = np.bincount(sub[:, 0], weights=weight, minlength=nl)
    for p in range(1, sub.shape[1]):
        cnt += np.bincount(sub[:, p], weights=weight, minlength=nl)
    return cnt


def _touches(mask: np.ndarray, sub: np.ndarray) -> np.ndarray:
    hit = mask[sub[:, 0]]
    for p in range(1, sub.shape[1]):
        hit |= mask[sub[:, p]]
    return hit


def link_index(links: np.ndarray, num_links_padded: int) -> tuple[np.ndarray, np.ndarray]:
    """(ptr, owners): the rows of ``links`` that cross link l are owners[ptr[l]:ptr[l+1]]."""
    P = links.shape[1]
    flat = links.ravel()
    order = np.argsort(flat, kind="stable")
    return np.searchsorted(flat[order], np.arange(num_links_padded + 1)), order // P


def maxmin(links: np.ndarray, cap: np.ndarray, weight: np.ndarray | None = None,
           index: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Max-min fair rates of the flows ``links`` on residual capacities ``cap``.

    ``weight[i]`` = how many identical flows row i stands for (all get the same rate; a
    row of weight 0 gets rate 0). ``index`` = ``link_index(links, len(cap))`` if the caller
    keeps one. Progressive filling with a link -> rows index: a round costs O(links + rows
    frozen in it), so the whole call is O(n + rounds x L) (plus O(n log n) without index).
    """
    n, P = links.shape
    rate = np.zeros(n)
    if n == 0:
        return rate
    w = np.ones(n) if weight is None else np.asarray(weight, dtype=float)
    c = np.array(cap, dtype=float)
    nl = len(c)
    ptr, owners = index if index is not None else link_index(links, nl)
    cnt = np.bincount(links.ravel(), weights=np.repeat(w, P), minlength=nl)
    cnt[-1] = 0.0
    frozen = w <= 0
    scale = max(float(np.max(c[:-1], initial=0.0)), 1.0)
    level = 0.0
    live = np.flatnonzero(cnt > 0.5)
    while live.size:
        share = np.maximum(c[live], 0.0) / cnt[live]
        m = float(share.min())
        level += m
        c[live] -= m * cnt[live]
        sat = live[share <= m + _REL * scale]
        c[sat] = 0.0
        if sat.size == 1:
            fl = owners[ptr[sat[0]]: ptr[sat[0] + 1]]
        else:
            fl = np.concatenate([owners[ptr[l]: ptr[l + 1]] for l in sat])
        fl = fl[~frozen[fl]]
        if fl.size:
            if sat.size > 1:  # a flow may cross two saturated links: count it once
                fl.sort()
                fl = fl[np.r_[True, fl[1:] != fl[:-1]]]
            frozen[fl] = True
            rate[fl] = level
            cnt -= np.bincount(links[fl].ravel(), weights=np.repeat(w[fl], P), minlength=nl)
        cnt[sat] = 0.0
        cnt[-1] = 0.0
        live = live[cnt[live] > 0.5]
    return rate


def maxmin_paths(pid: np.ndarray, path_links: np.ndarray, cap: np.ndarray,
                 index: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """``maxmin`` for flows given by path id: identical paths are one weighted row.

    With ``index`` (``link_index`` of all of ``path_links``) every path is a row, unused
    ones with weight 0; without, only the used paths are (and an index is built per call).
    """
    if len(pid) == 0:
        return np.zeros(0)
    counts = np.bincount(pid, minlength=len(path_links)).astype(float)
    if index is not None:
        return maxmin(path_links, cap, counts, index)[pid]
    g = np.flatnonzero(counts)
    per_path = np.zeros(len(path_links))
    per_path[g] = maxmin(path_links[g], cap, counts[g])
    return per_path[pid]


def link_usage(links: np.ndarray, rate: np.ndarray, num_links_padded: int) -> np.ndarray:
    """Sum of ``rate`` over the flows on each link (dummy last)."""
    P = links.shape[1]
    return np.bincount(links.ravel(), weights=np.repeat(rate, P), minlength=num_links_padded)


def _groups(keys: np.ndarray):
    """Yield index arrays of equal ``keys``, in ascending key order."""
    if len(keys) and keys.min() == keys.max():
        yield np.arange(len(keys))
        return
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    cuts = np.flatnonzero(np.diff(k)) + 1
    starts = np.concatenate([[0], cuts])
    ends = np.concatenate([cuts, [len(k)]])
    for s, e in zip(starts, ends):
        yield order[s:e]


def _start(n: int, cap: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Zero rates, a working copy of the capacities, and the 'link is full' tolerance."""
    c = np.array(cap, dtype=float)
    return np.zeros(n), c, _REL * max(float(np.max(c[:-1], initial=0.0)), 1.0)


def priority(pid: np.ndarray, path_links: np.ndarray, classes: np.ndarray, cap: np.ndarray,
             index: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Strict priority across ``classes`` (0 first), max-min fair within a class.

    Flows are given by path id ``pid`` into ``path_links`` (paths x P).
    """
    rate, c, tiny = _start(len(pid), cap)
    if len(pid) == 0:
        return rate
    nl, npaths = len(c), len(path_links)
    for idx in _groups(np.asarray(classes)):
        p = pid[idx]
        counts = np.bincount(p, minlength=npaths).astype(float)
        if _touches(c <= tiny, path_links[counts > 0]).all():
            continue  # every flow of this class already crosses a full link
        if index is not None:  # work on paths: O(paths), not O(flows)
            per_path = maxmin(path_links, c, counts, index)
            rate[idx] = per_path[p]
            c -= link_usage(path_links, per_path * counts, nl)
        else:
            r = maxmin_paths(p, path_links, c)
            rate[idx] = r
            c -= link_usage(path_links[p], r, nl)
        c[-1] = np.inf
        c[c <= tiny] = 0.0  # rounding dust: the link is full
    return rate


def madd(pid: np.ndarray, path_links: np.ndarray, remaining: np.ndarray,
         coflow_rank: np.ndarray, cap: np.ndarray,
         index: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """MADD per coflow in rank order (all its flows finish together), then max-min backfill."""
    rate, c, tiny = _start(len(pid), cap)
    if len(pid) == 0:
        return rate
    nl = len(c)
    for idx in _groups(np.asarray(coflow_rank)):
        sub = path_links[pid[idx]]
        d = _count(sub, nl, remaining[idx])
        d[-1] = 0.0
        used = d > 0
        if (c[used] <= tiny).any():
            continue
        gamma = (d[used] / c[used]).max()
        rate[idx] = remaining[idx] / gamma
        c[used] -= d[used] / gamma
        c[c <= tiny] = 0.0  # rounding dust: the link is full
        c[-1] = np.inf
    return rate + maxmin_paths(pid, path_links, c, index)


# ---- BSSI: the numpy loop that emulation.scheduler.bssi_kernel.bssi_back must match
_TIE = 1e-9


def bssi_order(loads: np.ndarray, weights: np.ndarray, capacity: np.ndarray | None = None
               ) -> np.ndarray:
    """Indices of ``loads``' rows, first to last, by BSSI."""
    X = np.asarray(loads, dtype=float)
    n = X.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if capacity is not None:
        X = X / np.asarray(capacity, dtype=float)[None, :]
    w = np.asarray(weights, dtype=float).copy()
    remaining = np.ones(n, dtype=bool)
    link_load = X.sum(axis=0)
    back: list[int] = []
    idx_all = np.arange(n)
    while remaining.any():
        top = link_load.max()
        b = int(np.argmax(link_load >= top * (1 - _TIE)))
        if link_load[b] <= 0:
            rest = idx_all[remaining]
            back.extend(rest[::-1].tolist())  # reversed below -> index order
            break
        U = idx_all[remaining]
        xb = X[U, b]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(xb > 0, w[U] / np.where(xb > 0, xb, 1.0), np.inf)
        rmin = ratio.min()
        if not np.isfinite(rmin):  # float residue on a link no remaining item loads
            link_load[b] = 0.0
            continue
        ties = np.flatnonzero(ratio <= rmin + abs(rmin) * _TIE)
        k = int(ties[-1])  # largest index among the (near-)minima
        last = int(U[k])
        w[U] -= rmin * xb
        w[last] = 0.0
        back.append(last)
        remaining[last] = False
        link_load -= X[last]
        link_load[link_load < 0] = 0.0
    return np.array(back[::-1], dtype=np.int64)
