"""Compiled (numba) rate allocations of the fluid simulator, one call per decision:
max-min fair sharing by progressive filling (``maxmin_weighted``), strict priority across
classes with max-min inside a class (``priority_rates``) and Varys's MADD in coflow order
with max-min backfill (``madd_rates``), with the tolerance under which a link counts as
full (``_tolerance``) and the fill the other compiled modules build on (``_fill``).

Inputs follow ``emulation/allocation.py`` (the per-flow entry points): flows are
given by path id ``pid`` into ``path_links`` (paths x P, padded with the dummy link
``nl - 1`` of infinite capacity); ``cap`` holds capacities in bytes/s with the dummy last;
``ptr, owners`` is the link -> paths index of ``allocation.link_index``. Each kernel does
the same floating-point operations in the same order as the numpy formulation of
``tests/reference_allocation.py`` (compared on random inputs), so results do not depend
on which one ran.

Why compiled: progressive filling needs one round per distinct bottleneck level (about 45
on the FB trace) and the FB trace under exact per-flow fair sharing has 43,966 rate
changes; as numpy calls each round cost tens of microseconds of interpreter overhead.
"""
from __future__ import annotations

import numpy as np

from emulation.kernels import jit, tiny_network

REL = 1e-9  # a link is full when its residual is below REL x the largest capacity


@jit
def _tolerance(c):
    """Below this residual (bytes/s) a link counts as full: REL x the largest capacity."""
    top = 1.0
    for l in range(c.shape[0] - 1):
        if c[l] > top:
            top = c[l]
    return REL * top


@jit
def _link_counts(ptr, owners, w, nl):
    """Flows on each link (dummy last, 0) given ``w[p]`` flows on path p."""
    cnt = np.zeros(nl, dtype=np.int64)
    for l in range(nl - 1):
        acc = 0
        for j in range(ptr[l], ptr[l + 1]):
            acc += w[owners[j]]
        cnt[l] = acc
    return cnt


@jit
def _fill(path_links, ptr, owners, c, w, cnt, out, tol):
    """Max-min (progressive filling) rates per path, ``w[p]`` (int) = flows on path p,
    ``cnt[l]`` = flows on link l (``_link_counts``); links whose shares are within ``tol``
    (bytes/s) of the round's minimum saturate together.

    ``c`` (residual capacities, dummy last) and ``cnt`` are consumed. ``out[p]`` gets the
    rate of one flow of path p; paths of weight 0 get 0. Counts are integers, so the order
    in which they are summed does not matter; the loops avoid chains of updates to one link.
    """
    npaths, P = path_links.shape
    nl = c.shape[0]
    cnt[nl - 1] = 0
    frozen = np.empty(npaths, dtype=np.bool_)
    for p in range(npaths):
        out[p] = 0.0
        frozen[p] = w[p] <= 0
    live = np.empty(nl, dtype=np.int64)
    nlive = 0
    for l in range(nl):
        if cnt[l] > 0:
            live[nlive] = l
            nlive += 1
    share = np.empty(nl)
    sat = np.empty(nl, dtype=np.int64)
    level = 0.0
    while nlive > 0:
        m = np.inf
        for i in range(nlive):
            l = live[i]
            s = max(c[l], 0.0) / cnt[l]
            share[i] = s
            if s < m:
                m = s
        level += m
        thr = m + tol
        nsat = 0
        for i in range(nlive):
            l = live[i]
            c[l] -= m * cnt[l]
            if share[i] <= thr:
                sat[nsat] = l
                nsat += 1
        if nsat == 0:
            raise ValueError("progressive filling made no progress (NaN capacity?)")
        for i in range(nsat):
            c[sat[i]] = 0.0
        for i in range(nsat):
            l = sat[i]
            for j in range(ptr[l], ptr[l + 1]):
                p = owners[j]
                if not frozen[p]:
                    frozen[p] = True
                    out[p] = level
                    for k in range(P):
                        q = path_links[p, k]
                        if q != l:  # l itself is zeroed below
                            cnt[q] -= w[p]
        for i in range(nsat):
            cnt[sat[i]] = 0
        cnt[nl - 1] = 0
        k = 0
        for i in range(nlive):
            l = live[i]
            if cnt[l] > 0:
                live[k] = l
                k += 1
        nlive = k


@jit
def maxmin_weighted(path_links, ptr, owners, cap, w):
    """Max-min fair rate of one flow on each path (``w[p]`` flows on path p, int64)."""
    out = np.empty(path_links.shape[0])
    cnt = _link_counts(ptr, owners, w, cap.shape[0])
    _fill(path_links, ptr, owners, cap.copy(), w, cnt, out, _tolerance(cap))
    return out


@jit
def _class_buckets(cf, cls_of, ncls):
    """Counting sort of flows by class ``cls_of[cf[i]]``: the flows of class k are
    order[start[k]:start[k+1]], in index order."""
    n = cf.shape[0]
    start = np.zeros(ncls + 1, dtype=np.int64)
    for i in range(n):
        start[cls_of[cf[i]] + 1] += 1
    for k in range(ncls):
        start[k + 1] += start[k]
    pos = start[:-1].copy()
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        k = cls_of[cf[i]]
        order[pos[k]] = i
        pos[k] += 1
    return order, start


@jit
def _fill_paths(plist, npl, path_links, c, w, out, lmap, tol):
    """Progressive filling restricted to the paths ``plist[:npl]`` (distinct, ``w[p] > 0``
    flows each, ascending): ``out[p]`` = the max-min rate of one flow of path p on the
    residual capacities ``c`` (read, not changed). Only the links these paths cross are
    touched, through a local link numbering (``lmap``: -1 on entry and on return), so the
    cost is O(npl x P x rounds), not O(all paths + all links). Same floating-point
    operations per link as ``_fill`` (the per-link updates are independent), so the same
    rates for the same ``tol``."""
    P = path_links.shape[1]
    nl = c.shape[0]
    dummy = nl - 1
    size = npl * P
    links_loc = np.empty(size, dtype=np.int64)
    cnt = np.zeros(size, dtype=np.int64)
    ptr = np.zeros(size + 1, dtype=np.int64)
    nloc = 0
    for i in range(npl):
        p = plist[i]
        for k in range(P):
            q = path_links[p, k]
            if q == dummy:
                continue
            if lmap[q] < 0:
                lmap[q] = nloc
                links_loc[nloc] = q
                nloc += 1
            cnt[lmap[q]] += w[p]
            ptr[lmap[q] + 1] += 1
    for j in range(nloc):
        ptr[j + 1] += ptr[j]
    pos = ptr[:nloc].copy()
    owners = np.empty(ptr[nloc], dtype=np.int64)
    for i in range(npl):
        p = plist[i]
        for k in range(P):
            q = path_links[p, k]
            if q != dummy:
                j = lmap[q]
                owners[pos[j]] = i
                pos[j] += 1
    frozen = np.zeros(npl, dtype=np.bool_)
    for i in range(npl):
        out[plist[i]] = 0.0
    cl = np.empty(nloc)
    live = np.empty(nloc, dtype=np.int64)
    nlive = 0
    for j in range(nloc):
        cl[j] = c[links_loc[j]]
        if cnt[j] > 0:
            live[nlive] = j
            nlive += 1
    share = np.empty(nloc)
    sat = np.empty(nloc, dtype=np.int64)
    level = 0.0
    while nlive > 0:
        m = np.inf
        for i in range(nlive):
            j = live[i]
            s = max(cl[j], 0.0) / cnt[j]
            share[i] = s
            if s < m:
                m = s
        level += m
        thr = m + tol
        nsat = 0
        for i in range(nlive):
            j = live[i]
            cl[j] -= m * cnt[j]
            if share[i] <= thr:
                sat[nsat] = j
                nsat += 1
        if nsat == 0:
            for j in range(nloc):
                lmap[links_loc[j]] = -1
            raise ValueError("progressive filling made no progress (NaN capacity?)")
        for i in range(nsat):
            cl[sat[i]] = 0.0
        for i in range(nsat):
            j = sat[i]
            l = links_loc[j]
            for e in range(ptr[j], ptr[j + 1]):
                ii = owners[e]
                if not frozen[ii]:
                    frozen[ii] = True
                    p = plist[ii]
                    out[p] = level
                    for k in range(P):
                        q = path_links[p, k]
                        if q != l and q != dummy:
                            cnt[lmap[q]] -= w[p]
        for i in range(nsat):
            cnt[sat[i]] = 0
        k = 0
        for i in range(nlive):
            j = live[i]
            if cnt[j] > 0:
                live[k] = j
                k += 1
        nlive = k
    for j in range(nloc):
        lmap[links_loc[j]] = -1


@jit
def _subtract_paths(plist, npl, path_links, per_path, w, c, tiny, lmap):
    """c -= bytes/s the paths ``plist[:npl]`` use (rate x weight), summed per link in
    ascending path order (the order of the numpy formulation); a residual of
    at most ``tiny`` becomes 0. Links none of these paths cross keep their residual
    (already clamped by an earlier call). ``lmap``: -1 per link on entry and return."""
    P = path_links.shape[1]
    nl = c.shape[0]
    use = np.zeros(npl * P)
    links_loc = np.empty(npl * P, dtype=np.int64)
    nloc = 0
    for i in range(npl):
        p = plist[i]
        r = per_path[p] * w[p]
        for k in range(P):
            q = path_links[p, k]
            if q == nl - 1:
                continue
            if lmap[q] < 0:
                lmap[q] = nloc
                links_loc[nloc] = q
                nloc += 1
            use[lmap[q]] += r
    for j in range(nloc):
        q = links_loc[j]
        c[q] -= use[j]
        if c[q] <= tiny:
            c[q] = 0.0
        lmap[q] = -1
    c[nl - 1] = np.inf


@jit
def _subtract_dense(ptr, owners, per_path, w, c, tiny):
    """``_subtract_paths`` for the paths with ``w[p] > 0``, link by link over the global
    link -> paths index (whose paths are ascending per link, as ``link_index`` sorts
    stably): each link's usage is summed in ascending path order in a register, the
    same floating-point operations as ``_subtract_paths``; O(index) instead of
    O(paths x P) scattered updates, cheaper when the class uses many of the paths."""
    nl = c.shape[0]
    for l in range(nl - 1):
        acc = 0.0
        hit = False
        for j in range(ptr[l], ptr[l + 1]):
            p = owners[j]
            if w[p] > 0:
                acc += per_path[p] * w[p]
                hit = True
        if hit:
            c[l] -= acc
            if c[l] <= tiny:
                c[l] = 0.0
    c[nl - 1] = np.inf


@jit
def priority_rates(pid, cf, cls_of, ncls, path_flows, link_flows, path_links, ptr, owners,
                   cap, w, lmap):
    """Strict priority across classes (0 first), max-min inside one; flow i is in class
    ``cls_of[cf[i]]`` (``cf`` = its coflow, ``0 <= cls_of < ncls``). ``w`` (one int64
    zero per path) and ``lmap`` (one int64 -1 per link, dummy included) are scratch
    arrays, restored on return. ``path_flows[p]`` / ``link_flows[l]`` = flows on path p /
    link l (used when there is one class: fair sharing needs no per-class pass over the
    flows). A class that uses many of the network's paths is filled over the global
    link -> paths index (``_fill``), a sparse one over its own paths and links only
    (``_fill_paths``), so the cost is O(flows + the paths and links of each
    class), independent of how many paths and links the network has, so hundreds of
    classes (``--priority-classes 0``) stay cheap."""
    rate = np.zeros(pid.shape[0])
    _priority_into(rate, pid, cf, cls_of, ncls, path_flows, link_flows, path_links, ptr,
                   owners, cap, w, lmap)
    return rate


@jit
def _priority_into(rate, pid, cf, cls_of, ncls, path_flows, link_flows, path_links, ptr,
                   owners, cap, w, lmap):
    """``priority_rates`` written into ``rate`` (one per flow)."""
    n = pid.shape[0]
    if n == 0:
        return
    npaths, P = path_links.shape
    nl = cap.shape[0]
    c = cap.copy()
    tiny = _tolerance(c)
    per_path = np.empty(npaths)
    if ncls == 1:  # one class (fair sharing): the flow counts per path are the weights
        _fill(path_links, ptr, owners, c, path_flows, link_flows.copy(), per_path, tiny)
        for i in range(n):
            rate[i] = per_path[pid[i]]
        return
    rate[:] = 0.0
    order, start = _class_buckets(cf, cls_of, ncls)
    plist = np.empty(n, dtype=np.int64)
    for k in range(ncls):
        a, b = start[k], start[k + 1]
        if a == b:
            continue
        npl = 0
        for j in range(a, b):
            p = pid[order[j]]
            if w[p] == 0:
                plist[npl] = p
                npl += 1
            w[p] += 1
        # skip the class when every one of its paths already crosses a full link
        blocked = True
        for i in range(npl):
            p = plist[i]
            hit = False
            for q in range(P):
                if c[path_links[p, q]] <= tiny:
                    hit = True
                    break
            if not hit:
                blocked = False
                break
        if not blocked:
            if npl * 8 > npaths:  # dense: over the global link -> paths index
                _fill(path_links, ptr, owners, c.copy(), w, _link_counts(ptr, owners, w, nl),
                      per_path, tiny)
                _subtract_dense(ptr, owners, per_path, w, c, tiny)
            else:
                pl = np.sort(plist[:npl])
                _fill_paths(pl, npl, path_links, c, w, per_path, lmap, tiny)
                _subtract_paths(pl, npl, path_links, per_path, w, c, tiny, lmap)
            for j in range(a, b):
                rate[order[j]] = per_path[pid[order[j]]]
        for i in range(npl):
            w[plist[i]] = 0


@jit
def madd_rates(pid, cf, rank_of, remaining, path_links, ptr, owners, cap):
    """Varys's MADD per coflow in order of ``rank_of[cf[i]]`` (the flows of one rank are
    one coflow), then the leftover capacity shared max-min over all flows."""
    n = pid.shape[0]
    rate = np.zeros(n)
    if n == 0:
        return rate
    npaths, P = path_links.shape
    nl = cap.shape[0]
    c = cap.copy()
    tiny = _tolerance(c)
    nr = 0
    for i in range(n):
        if rank_of[cf[i]] + 1 > nr:
            nr = rank_of[cf[i]] + 1
    order, start = _class_buckets(cf, rank_of, nr)
    d = np.zeros(nl)
    col = np.zeros(nl)
    # links touched by the current coflow (d) and by the current path column (col): the
    # loops visit only those, so a coflow costs O(its flows x P), not O(links)
    in_d = np.zeros(nl, dtype=np.bool_)
    in_col = np.zeros(nl, dtype=np.bool_)
    d_links = np.empty(nl, dtype=np.int64)
    col_links = np.empty(nl, dtype=np.int64)
    for k in range(nr):
        a, b = start[k], start[k + 1]
        if a == b:
            continue
        nd = 0
        for q in range(P):  # column by column, as the numpy version summed them
            ncol = 0
            for j in range(a, b):
                i = order[j]
                l = path_links[pid[i], q]
                col[l] += remaining[i]
                if not in_col[l]:
                    in_col[l] = True
                    col_links[ncol] = l
                    ncol += 1
            for e in range(ncol):
                l = col_links[e]
                d[l] += col[l]
                col[l] = 0.0
                in_col[l] = False
                if not in_d[l]:
                    in_d[l] = True
                    d_links[nd] = l
                    nd += 1
        d[nl - 1] = 0.0
        full = False
        gamma = 0.0
        for e in range(nd):
            l = d_links[e]
            if d[l] > 0:
                if c[l] <= tiny:
                    full = True
                    break
                g = d[l] / c[l]
                if g > gamma:
                    gamma = g
        if not full and gamma > 0:  # (gamma 0: nothing left to send; backfill only)
            for j in range(a, b):
                i = order[j]
                rate[i] = remaining[i] / gamma
            for e in range(nd):
                l = d_links[e]
                if d[l] > 0:
                    c[l] -= d[l] / gamma
                if c[l] <= tiny:  # rounding dust: the link is full
                    c[l] = 0.0
            c[nl - 1] = np.inf
        for e in range(nd):
            l = d_links[e]
            d[l] = 0.0
            in_d[l] = False
    w = np.zeros(npaths, dtype=np.int64)
    for i in range(n):
        w[pid[i]] += 1
    per_path = np.empty(npaths)
    _fill(path_links, ptr, owners, c, w, _link_counts(ptr, owners, w, nl), per_path,
          _tolerance(c))
    for i in range(n):
        rate[i] += per_path[pid[i]]
    return rate


def warm_up() -> None:
    """Compile (or load from numba's cache) this module's kernels on a tiny input."""
    path_links, ptr, owners, cap = tiny_network()
    pid = np.array([0, 1], dtype=np.int64)
    counts = np.ones(2, dtype=np.int64)
    maxmin_weighted(path_links, ptr, owners, cap, counts)
    lcounts = np.array([1, 1, 2], dtype=np.int64)
    w0 = np.zeros(2, dtype=np.int64)
    lmap = np.full(3, -1, dtype=np.int64)
    priority_rates(pid, pid, pid, 2, counts, lcounts, path_links, ptr, owners, cap, w0, lmap)
    priority_rates(pid, pid, pid * 0, 1, counts, lcounts, path_links, ptr, owners, cap, w0,
                   lmap)
    madd_rates(pid, pid, pid, np.ones(2), path_links, ptr, owners, cap)
