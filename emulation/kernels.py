"""Compiled (numba) kernels of the hot loops over active flows: the fluid simulator's rate
allocation and time advance, and the per-coflow link loads of the policies' view.

Inputs follow ``allocation.py``: flows are given by path id ``pid`` into ``path_links``
(paths x P, padded with the dummy link ``nl - 1`` of infinite capacity); ``cap`` holds
capacities in bytes/s with the dummy last; ``ptr, owners`` is the link -> paths index of
``allocation.link_index``. Each kernel does the same floating-point operations in the
same order as the numpy formulation of ``tests/reference_allocation.py`` (compared on
random inputs), so results do not depend on which one ran.

Why compiled: progressive filling needs one round per distinct bottleneck level (about 45
on the FB trace) and the FB trace under exact per-flow fair sharing has 43,966 rate
changes; as numpy calls each round cost tens of microseconds of interpreter overhead.
numba's cache stores the machine code beside this file (or in ``NUMBA_CACHE_DIR``), so
only the first run on a machine pays the compilation (about 3 s); ``warm_up()`` triggers
it explicitly.
"""
from __future__ import annotations

import numpy as np
from numba import njit

REL = 1e-9  # a link is full when its residual is below REL x the largest capacity


def _jit(fn):
    """``njit`` with numba's on-disk cache, or without it where no cache directory is
    writable (a read-only checkout run by another user): compiled per process then."""
    try:
        return njit(cache=True)(fn)
    except RuntimeError:
        return njit(fn)


@_jit
def _tolerance(c):
    """Below this residual (bytes/s) a link counts as full: REL x the largest capacity."""
    top = 1.0
    for l in range(c.shape[0] - 1):
        if c[l] > top:
            top = c[l]
    return REL * top


@_jit
def _link_counts(ptr, owners, w, nl):
    """Flows on each link (dummy last, 0) given ``w[p]`` flows on path p."""
    cnt = np.zeros(nl, dtype=np.int64)
    for l in range(nl - 1):
        acc = 0
        for j in range(ptr[l], ptr[l + 1]):
            acc += w[owners[j]]
        cnt[l] = acc
    return cnt


@_jit
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


@_jit
def maxmin_weighted(path_links, ptr, owners, cap, w):
    """Max-min fair rate of one flow on each path (``w[p]`` flows on path p, int64)."""
    out = np.empty(path_links.shape[0])
    cnt = _link_counts(ptr, owners, w, cap.shape[0])
    _fill(path_links, ptr, owners, cap.copy(), w, cnt, out, _tolerance(cap))
    return out


@_jit
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


@_jit
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


@_jit
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


@_jit
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


@_jit
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


@_jit
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
            if npl * 8 > npaths:  # dense: the global index, paths collected in order
                pl = np.empty(npl, dtype=np.int64)
                m = 0
                for p in range(npaths):
                    if w[p] > 0:
                        pl[m] = p
                        m += 1
                _fill(path_links, ptr, owners, c.copy(), w, _link_counts(ptr, owners, w, nl),
                      per_path, tiny)
            else:
                pl = np.sort(plist[:npl])
                _fill_paths(pl, npl, path_links, c, w, per_path, lmap, tiny)
            for j in range(a, b):
                rate[order[j]] = per_path[pid[order[j]]]
            if npl * 8 > npaths:
                _subtract_dense(ptr, owners, per_path, w, c, tiny)
            else:
                _subtract_paths(pl, npl, path_links, per_path, w, c, tiny, lmap)
        for i in range(npl):
            w[plist[i]] = 0


@_jit
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


@_jit
def time_to_finish(rem, rate, ttf, start, now):
    """ttf[i] = rem[i] / rate[i] (inf at rate 0); returns the minimum. A flow moving for
    the first time (``start`` NaN, rate > 0) gets ``start = now``."""
    best = np.inf
    for i in range(rem.shape[0]):
        if rate[i] > 0:
            t = rem[i] / rate[i]
            if np.isnan(start[i]):
                start[i] = now
        else:
            t = np.inf
        ttf[i] = t
        if t < best:
            best = t
    return best


@_jit
def min_coflow_finish(ttf, cf, num_coflows):
    """Min over coflows ``cf`` (ids < ``num_coflows``) of the max ``ttf`` of their flows."""
    last = np.full(num_coflows, -np.inf)
    seen = np.zeros(num_coflows, dtype=np.bool_)
    for i in range(ttf.shape[0]):
        seen[cf[i]] = True
        if ttf[i] > last[cf[i]]:
            last[cf[i]] = ttf[i]
    best = np.inf
    for c in range(num_coflows):
        if seen[c] and last[c] < best:
            best = last[c]
    return best


@_jit
def advance(rem, rate, ttf, tol, dt, eps_t):
    """Move every flow ``dt`` seconds at its rate; the indices of the flows that have
    finished (within ``eps_t`` of now, or at most ``tol[i]`` bytes left), ascending."""
    n = rem.shape[0]
    done = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(n):
        f = ttf[i] <= dt + eps_t
        if dt > 0:
            rem[i] -= rate[i] * dt
        if f or rem[i] <= tol[i]:
            done[k] = i
            k += 1
    return done[:k]


@_jit
def retire_flows(idx, n, tf, cf, pid, rem, start, rate, tol, path_flows, link_flows,
                 path_links):
    """Remove rows ``idx`` (ascending) of the seven length-``n`` active-flow arrays in place,
    each removed row taking the last live row, in O(len(idx)); decrement the flow counts
    of their paths and links. Returns the new length."""
    for j in range(idx.shape[0] - 1, -1, -1):
        i = idx[j]
        path_flows[pid[i]] -= 1
        for k in range(path_links.shape[1]):
            link_flows[path_links[pid[i], k]] -= 1
        n -= 1
        if i != n:
            tf[i] = tf[n]
            cf[i] = cf[n]
            pid[i] = pid[n]
            rem[i] = rem[n]
            start[i] = start[n]
            rate[i] = rate[n]
            tol[i] = tol[n]
    return n


@_jit
def _grow(a, need):
    """``a`` itself if it holds ``need`` entries, else a copy at least twice as long."""
    if need <= a.shape[0]:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), dtype=a.dtype)
    b[:a.shape[0]] = a
    return b


@_jit
def _rounds(r, nlive, live, level, path_links, ptr, owners, c, cnt, w, out, tol, fr, forder,
            nfro, rstart, m_of, lev, loff, lbuf, lc, lcnt):
    """``_fill``'s progressive filling from round ``r`` (state: ``live[:nlive]``, ``c``,
    ``cnt``, ``level``), the same operations, recording what a later refill needs: per
    round its live links with their residual and count at the round's start (``lbuf``,
    ``lc``, ``lcnt`` from ``loff[r]``), its share ``m_of[r]`` and level ``lev[r]``, and
    the paths it froze (``forder[rstart[r]:rstart[r + 1]]``; ``fr[p]`` = p's round).
    Returns (rounds, frozen count, lbuf, lc, lcnt) (buffers may have grown)."""
    P = path_links.shape[1]
    nl = c.shape[0]
    share = np.empty(nl)
    sat = np.empty(nl, dtype=np.int64)
    while nlive > 0:
        o = loff[r]
        lbuf = _grow(lbuf, o + nlive)
        lc = _grow(lc, o + nlive)
        lcnt = _grow(lcnt, o + nlive)
        m = np.inf
        for i in range(nlive):
            l = live[i]
            lbuf[o + i] = l
            lc[o + i] = c[l]
            lcnt[o + i] = cnt[l]
            s = max(c[l], 0.0) / cnt[l]
            share[i] = s
            if s < m:
                m = s
        loff[r + 1] = o + nlive
        rstart[r] = nfro
        m_of[r] = m
        level += m
        lev[r] = level
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
                if fr[p] < 0 and w[p] > 0:
                    fr[p] = r
                    forder[nfro] = p
                    nfro += 1
                    out[p] = level
                    for k in range(P):
                        q = path_links[p, k]
                        if q != l:
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
        r += 1
    rstart[r] = nfro
    return r, nfro, lbuf, lc, lcnt


@_jit
def _refill_from(r0, drop, changed, nchanged, cap, tol, path_links, ptr, owners, c, cnt, w,
                 out, live, fr, forder, nfro, rstart, m_of, lev, loff, lbuf, lc, lcnt):
    """Max-min after flows left: the recorded fill is exact up to round ``r0`` (the
    earliest round that froze a path that lost flows), so restore its state there and
    fill on. ``drop[l]`` = flows removed from link l (``changed[:nchanged]`` those links).
    Before ``r0`` those links were live, never the minimum and never saturated (their
    share only grew, as each rounded step is monotone), so every other link's residual
    and count are as recorded, and theirs are replayed with the same operations as a
    full fill would do (and rewritten in the records; an entry whose count reached 0
    stays in its round's list and is skipped). Returns what ``_rounds`` returns."""
    if r0 < 0:
        raise ValueError("refill: a path that lost flows was never frozen")
    for i in range(nchanged):  # replay, rewriting the records of the earlier rounds
        l = changed[i]
        d = drop[l]
        x = cap[l]
        for r in range(r0):  # l is in every earlier round's (ascending) live list
            a, b = loff[r], loff[r + 1]
            while b - a > 1:
                mid = (a + b) // 2
                if lbuf[mid] <= l:
                    a = mid
                else:
                    b = mid
            if lbuf[a] != l:
                raise ValueError("refill: a changed link is missing from an earlier round")
            cn = lcnt[a] - d
            lcnt[a] = cn
            lc[a] = x
            if cn > 0:
                x -= m_of[r] * cn
        c[l] = x
    nlive = 0
    for j in range(loff[r0], loff[r0 + 1]):
        l = lbuf[j]
        cn = lcnt[j] - drop[l]
        if cn <= 0:
            continue
        live[nlive] = l
        nlive += 1
        cnt[l] = cn
        if drop[l] == 0:
            c[l] = lc[j]
    for j in range(rstart[r0], nfro):
        fr[forder[j]] = -1
    for i in range(nchanged):
        drop[changed[i]] = 0
    level = lev[r0 - 1] if r0 > 0 else 0.0
    return _rounds(r0, nlive, live, level, path_links, ptr, owners, c, cnt, w, out, tol, fr,
                   forder, rstart[r0], rstart, m_of, lev, loff, lbuf, lc, lcnt)


@_jit
def flow_events(now, t_timer, eps_t, n, tf, cf, pid, rem, start, rate, tol, c_left,
                path_flows, link_flows, path_links, ptr, owners, cap, ttf, done_tf, done_cf,
                done_start, done_end):
    """The fluid engine's events that only complete flows, under one class (fair
    sharing; ``queue_events`` handles several), each step with the same operations as
    the engine's Python loop: time to the next completion (``time_to_finish``),
    ``advance``, retire the finished flows (``retire_flows``), recompute the rates
    (``priority_rates``).

    Stops at the first event that is more than that: no flow moving (before advancing),
    a timer due (``t_timer``), nothing finished, or a finished flow that completes its
    coflow (``c_left`` = flows left per coflow; after advancing, before retiring: the
    caller completes those flows). The first ``n`` rows of the active columns, ``rate``
    and ``c_left`` are updated in place; retired flows go to ``done_*`` (first-byte time
    NaN replaced by the end time). Returns (now, n, steps handled, records written,
    advanced, the finished indices and their end times of the event left to the caller).
    """
    k = 0
    steps = 0
    none_i = np.empty(0, dtype=np.int64)
    none_f = np.empty(0)
    # the last fill is recorded and refilled from the first round the completions
    # change (``_refill_from``); same rates as a full fill
    npaths = path_links.shape[0]
    nl = cap.shape[0]
    tol_c = _tolerance(cap)
    per_path = np.empty(npaths)
    c = np.empty(nl)
    cnt = np.zeros(nl, dtype=np.int64)
    live = np.empty(nl, dtype=np.int64)
    fr = np.full(npaths, -1, dtype=np.int64)
    forder = np.empty(npaths, dtype=np.int64)
    rstart = np.zeros(nl + 2, dtype=np.int64)
    m_of = np.empty(nl + 2)
    lev = np.empty(nl + 2)
    loff = np.zeros(nl + 2, dtype=np.int64)
    lbuf = np.empty(4 * nl, dtype=np.int64)
    lc = np.empty(4 * nl)
    lcnt = np.empty(4 * nl, dtype=np.int64)
    drop = np.zeros(nl, dtype=np.int64)
    changed = np.empty(nl, dtype=np.int64)
    nfro = 0
    recorded = False
    while True:
        first = time_to_finish(rem[:n], rate[:n], ttf[:n], start[:n], now)
        t_next = min(t_timer, now + first)
        if not np.isfinite(t_next):
            return now, n, steps, k, False, none_i, none_f
        dt = max(0.0, t_next - now)
        t_prev = now
        now = max(now, t_next)
        fin = advance(rem[:n], rate[:n], ttf[:n], tol[:n], dt, eps_t)
        nf = fin.shape[0]
        ends = np.empty(nf)
        for j in range(nf):
            ends[j] = min(t_prev + ttf[fin[j]], now)
        stop = nf == 0 or t_timer <= now + eps_t
        if not stop:
            for j in range(nf):
                co = cf[fin[j]]
                c_left[co] -= 1
                if c_left[co] == 0:
                    stop = True
            if stop:
                for j in range(nf):
                    c_left[cf[fin[j]]] += 1
        if stop:
            return now, n, steps, k, True, fin, ends
        for j in range(nf):
            i = fin[j]
            done_tf[k] = tf[i]
            done_cf[k] = cf[i]
            done_start[k] = ends[j] if np.isnan(start[i]) else start[i]
            done_end[k] = ends[j]
            k += 1
        r0 = npaths
        nchanged = 0
        if recorded:
            for j in range(nf):
                p = pid[fin[j]]
                if fr[p] < r0:
                    r0 = fr[p]
                for q in range(path_links.shape[1]):
                    l = path_links[p, q]
                    if l != nl - 1:
                        if drop[l] == 0:
                            changed[nchanged] = l
                            nchanged += 1
                        drop[l] += 1
        n = retire_flows(fin, n, tf, cf, pid, rem, start, rate, tol, path_flows, link_flows,
                         path_links)
        if recorded:
            _, nfro, lbuf, lc, lcnt = _refill_from(
                r0, drop, changed, nchanged, cap, tol_c, path_links, ptr, owners, c, cnt,
                path_flows, per_path, live, fr, forder, nfro, rstart, m_of, lev, loff,
                lbuf, lc, lcnt)
        else:  # first step of this call: a full fill, recorded
            nlive = 0
            for l in range(nl - 1):
                c[l] = cap[l]
                cnt[l] = link_flows[l]
                if cnt[l] > 0:
                    live[nlive] = l
                    nlive += 1
            c[nl - 1] = cap[nl - 1]
            cnt[nl - 1] = 0
            _, nfro, lbuf, lc, lcnt = _rounds(
                0, nlive, live, 0.0, path_links, ptr, owners, c, cnt, path_flows,
                per_path, tol_c, fr, forder, 0, rstart, m_of, lev, loff, lbuf, lc, lcnt)
            recorded = True
        for i in range(n):
            rate[i] = per_path[pid[i]]
        steps += 1


@_jit
def _class_groups(n, cf, pid, cls_of, ncls, path_links, nl):
    """The active flows ``0..n-1`` grouped by (class ``cls_of[cf[i]]``, path), classes
    ascending, paths ascending inside a class (two counting sorts, O(n + paths + classes)).
    Returns ``g_ptr`` (class k's groups are ``g_ptr[k]:g_ptr[k + 1]``), per group its path,
    flow count and flows (``g_flows[f_ptr[g]:f_ptr[g + 1]]``), per flow its group; the
    links of each class (``e_link[e_ptr[k]:e_ptr[k + 1]]``, dummy excluded), per group
    the entries of its links (``g_ent``, -1 for the dummy) and per entry the groups that
    cross it (``o_grp[o_ptr[e]:o_ptr[e + 1]]``, ascending)."""
    npaths, P = path_links.shape
    dummy = nl - 1
    pos = np.zeros(npaths + 1, dtype=np.int64)
    for i in range(n):
        pos[pid[i] + 1] += 1
    for p in range(npaths):
        pos[p + 1] += pos[p]
    byp = np.empty(n, dtype=np.int64)
    for i in range(n):
        byp[pos[pid[i]]] = i
        pos[pid[i]] += 1
    cpos = np.zeros(ncls + 1, dtype=np.int64)
    for i in range(n):
        cpos[cls_of[cf[i]] + 1] += 1
    for k in range(ncls):
        cpos[k + 1] += cpos[k]
    g_flows = np.empty(n, dtype=np.int64)
    for j in range(n):
        i = byp[j]
        k = cls_of[cf[i]]
        g_flows[cpos[k]] = i
        cpos[k] += 1
    g_ptr = np.zeros(ncls + 1, dtype=np.int64)
    g_path = np.empty(n, dtype=np.int64)
    g_w = np.empty(n, dtype=np.int64)
    f_ptr = np.empty(n + 1, dtype=np.int64)
    f_grp = np.empty(n, dtype=np.int64)
    G = 0
    pk = -1
    pp = -1
    for j in range(n):
        i = g_flows[j]
        k = cls_of[cf[i]]
        p = pid[i]
        if k != pk or p != pp:
            g_path[G] = p
            g_w[G] = 0
            f_ptr[G] = j
            g_ptr[k + 1] = G + 1
            G += 1
            pk = k
            pp = p
        g_w[G - 1] += 1
        f_grp[i] = G - 1
    f_ptr[G] = n
    for k in range(ncls):  # classes without flows: empty ranges
        if g_ptr[k + 1] < g_ptr[k]:
            g_ptr[k + 1] = g_ptr[k]
    e_ptr = np.zeros(ncls + 1, dtype=np.int64)
    e_link = np.empty(G * P, dtype=np.int64)
    g_ent = np.full((G, P), -1, dtype=np.int64)
    stamp = np.full(nl, -1, dtype=np.int64)
    slot = np.empty(nl, dtype=np.int64)
    E = 0
    for k in range(ncls):
        for g in range(g_ptr[k], g_ptr[k + 1]):
            for q in range(P):
                l = path_links[g_path[g], q]
                if l == dummy:
                    continue
                if stamp[l] != k:
                    stamp[l] = k
                    slot[l] = E
                    e_link[E] = l
                    E += 1
                g_ent[g, q] = slot[l]
        e_ptr[k + 1] = E
    o_ptr = np.zeros(E + 1, dtype=np.int64)
    for g in range(G):
        for q in range(P):
            if g_ent[g, q] >= 0:
                o_ptr[g_ent[g, q] + 1] += 1
    for e in range(E):
        o_ptr[e + 1] += o_ptr[e]
    opos = o_ptr[:E].copy()
    o_grp = np.empty(o_ptr[E], dtype=np.int64)
    for g in range(G):
        for q in range(P):
            e = g_ent[g, q]
            if e >= 0:
                o_grp[opos[e]] = g
                opos[e] += 1
    return (g_ptr, g_path[:G].copy(), g_w[:G].copy(), g_flows, f_ptr[:G + 1].copy(), f_grp,
            e_ptr, e_link[:E].copy(), g_ent, o_ptr, o_grp)


@_jit
def _fill_class(k, g_ptr, g_w, g_ent, e_ptr, o_ptr, o_grp, val, tiny, g_new, cl, cnt, live,
                share, sat, frozen, used):
    """Class k's rates on the residuals ``val`` of its links (by entry): strict priority's
    per-class step of ``_priority_into`` (skip when every path crosses a full link, else
    ``_fill_paths``'s progressive filling, the same operations) into ``g_new``; then
    ``val`` becomes the residual after the class (``_subtract_paths``: usage summed per
    link in ascending path order, at most ``tiny`` -> 0). Returns True if the class was
    skipped (rates 0, ``val`` unchanged). The (class, path) groups and their link entries
    are ``_class_groups``'s, built once per ``queue_events`` call, so unlike
    ``_fill_paths`` no local link numbering is built per fill (finding A of
    docs/speed.md)."""
    a, b = g_ptr[k], g_ptr[k + 1]
    ea, eb = e_ptr[k], e_ptr[k + 1]
    P = g_ent.shape[1]
    for g in range(a, b):
        g_new[g] = 0.0
    blocked = True  # returned: every path crosses a full link (rates 0, ``val`` kept)
    for g in range(a, b):
        if g_w[g] <= 0:
            continue
        hit = False
        for q in range(P):
            e = g_ent[g, q]
            if e >= 0 and val[e] <= tiny:
                hit = True
                break
        if not hit:
            blocked = False
            break
    if blocked:
        return True
    nlive = 0
    for e in range(ea, eb):
        c = 0
        for j in range(o_ptr[e], o_ptr[e + 1]):
            c += g_w[o_grp[j]]
        cnt[e - ea] = c
        cl[e - ea] = val[e]
        if c > 0:
            live[nlive] = e - ea
            nlive += 1
    for g in range(a, b):
        frozen[g - a] = g_w[g] <= 0
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
        thr = m + tiny
        nsat = 0
        for i in range(nlive):
            j = live[i]
            cl[j] -= m * cnt[j]
            if share[i] <= thr:
                sat[nsat] = j
                nsat += 1
        if nsat == 0:
            raise ValueError("progressive filling made no progress (NaN capacity?)")
        for i in range(nsat):
            cl[sat[i]] = 0.0
        for i in range(nsat):
            j = sat[i]
            for x in range(o_ptr[ea + j], o_ptr[ea + j + 1]):
                g = o_grp[x]
                if not frozen[g - a]:
                    frozen[g - a] = True
                    g_new[g] = level
                    for q in range(P):
                        e = g_ent[g, q]
                        if e >= 0 and e != ea + j:
                            cnt[e - ea] -= g_w[g]
        for i in range(nsat):
            cnt[sat[i]] = 0
        kk = 0
        for i in range(nlive):
            j = live[i]
            if cnt[j] > 0:
                live[kk] = j
                kk += 1
        nlive = kk
    for e in range(ea, eb):
        share[e - ea] = 0.0  # usage, summed in ascending group (= path) order
        used[e - ea] = False
    for g in range(a, b):
        if g_w[g] <= 0:
            continue
        r = g_new[g] * g_w[g]
        for q in range(P):
            e = g_ent[g, q]
            if e >= 0:
                share[e - ea] += r
                used[e - ea] = True
    for e in range(ea, eb):
        if used[e - ea]:  # links only emptied paths cross keep their residual
            v = val[e] - share[e - ea]
            val[e] = 0.0 if v <= tiny else v
    return False


@_jit
def _walk(k0, kmax, nmod, dirty, blk, g_ptr, g_w, g_ent, e_ptr, e_link, o_ptr, o_grp, rin,
          rout, val, cur, mod, tiny, g_new, g_rate, chg, scratch_f, scratch_i, frozen, used):
    """Strict priority from class ``k0`` on, refilling only what changed. Invariant: a
    link not in ``mod`` has, at class k, the residual recorded as the input of the next
    class that crosses it (``rin``), so a class that lost no flows (not ``dirty``) and
    whose links all read as recorded keeps its rates and output (``rout``); a refilled
    class records its input and output, and its links whose output changed carry the new
    value (``cur``, ``mod``). A class recorded as blocked (``blk``: every path crosses a
    full link) stays blocked while none of its links changes between full (<= ``tiny``)
    and not, whatever flows it lost: its rates stay 0 and its residuals pass through
    unchanged, at a cost of its links instead of its paths. Stops once nothing is
    pending past ``kmax`` (the last dirty class). Groups whose rate changed are appended
    to ``chg``; returns their count."""
    ncls = g_ptr.shape[0] - 1
    nchg = 0
    cl, share = scratch_f[0], scratch_f[1]
    cnt, live, sat = scratch_i[0], scratch_i[1], scratch_i[2]
    nl = cur.shape[0]
    for k in range(k0, ncls):
        if nmod == 0 and k > kmax:
            break
        ea, eb = e_ptr[k], e_ptr[k + 1]
        if ea == eb:
            dirty[k] = False
            continue
        re = dirty[k]
        if not re:
            for e in range(ea, eb):
                l = e_link[e]
                if mod[l] and cur[l] != rin[e]:
                    re = True
                    break
        if not re:
            for e in range(ea, eb):
                l = e_link[e]
                if mod[l]:
                    mod[l] = False
                    nmod -= 1
            continue
        dirty[k] = False
        same_full = blk[k]
        for e in range(ea, eb):
            l = e_link[e]
            v = cur[l] if mod[l] else rin[e]
            if same_full and (v <= tiny) != (rin[e] <= tiny):
                same_full = False
            rin[e] = v
            val[e] = v
        if not same_full:
            blk[k] = _fill_class(k, g_ptr, g_w, g_ent, e_ptr, o_ptr, o_grp, val, tiny, g_new,
                                 cl, cnt, live, share, sat, frozen, used)
        for e in range(ea, eb):
            l = e_link[e]
            v = val[e]
            if v != rout[e]:
                if not mod[l]:
                    mod[l] = True
                    nmod += 1
                cur[l] = v
            elif mod[l]:
                mod[l] = False
                nmod -= 1
            rout[e] = v
        if same_full:
            continue
        for g in range(g_ptr[k], g_ptr[k + 1]):
            if g_new[g] != g_rate[g]:
                g_rate[g] = g_new[g]
                chg[nchg] = g
                nchg += 1
    if nmod > 0:
        for l in range(nl):
            mod[l] = False
    return nchg


@_jit
def queue_events(now, t_timer, eps_t, n, tf, cf, pid, rem, start, rate, tol, c_left, cls_of,
                 ncls, path_flows, link_flows, path_links, cap, ttf, done_tf, done_cf,
                 done_start, done_end):
    """``flow_events`` for several classes (strict priority, max-min inside a class): the
    engine's events that only complete flows, under fixed classes ``cls_of`` per coflow,
    with the same arithmetic per step as the engine's Python loop (``time_to_finish``,
    ``advance``, ``retire_flows``, ``priority_rates``), at a cost independent of the
    flows that do not move or change:

    - the first event is taken over every row, as the Python loop would; most calls
      stop there (a coflow completes, a timer is due) and build nothing;
    - then only moving flows (rate > 0) are timed and advanced (the others' remaining
      bytes and times to finish are unchanged by those operations);
    - rates are refilled from the first class that lost flows, class by class, skipping
      classes whose inputs are as recorded (``_walk``), and written to the flows of the
      (class, path) groups whose rate changed;
    - rows are not moved per event: the order ``retire_flows`` would leave is tracked as
      a permutation and applied once, on return.

    Same stops and return values as ``flow_events``; the finished flows of the event
    left to the caller are given as row indices of the compacted arrays, ascending. The
    completed-flow records of one event are written in moving-list order, not row order
    (``ClusterState.records`` sorts them)."""
    nl = cap.shape[0]
    P = path_links.shape[1]
    tiny = _tolerance(cap)
    n0 = n
    first = time_to_finish(rem[:n], rate[:n], ttf[:n], start[:n], now)
    t_next = min(t_timer, now + first)
    if not np.isfinite(t_next):
        return now, n, 0, 0, False, np.empty(0, dtype=np.int64), np.empty(0)
    dt = max(0.0, t_next - now)
    t_prev = now
    now = max(now, t_next)
    fin = advance(rem[:n], rate[:n], ttf[:n], tol[:n], dt, eps_t)
    nf = fin.shape[0]
    ends = np.empty(nf)
    for j in range(nf):
        ends[j] = min(t_prev + ttf[fin[j]], now)
    if _stops(fin, nf, cf, c_left, t_timer, now, eps_t):
        return now, n, 0, 0, True, fin, ends
    # a flow-only event: build the (class, path) groups and record a full fill
    (g_ptr, g_path, g_w, g_flows, f_ptr, f_grp, e_ptr, e_link, g_ent, o_ptr,
     o_grp) = _class_groups(n0, cf, pid, cls_of, ncls, path_links, nl)
    G = g_path.shape[0]
    E = e_link.shape[0]
    maxe = 1
    maxg = 1
    for k in range(ncls):
        maxe = max(maxe, e_ptr[k + 1] - e_ptr[k])
        maxg = max(maxg, g_ptr[k + 1] - g_ptr[k])
    scratch_f = np.empty((2, maxe))
    scratch_i = np.empty((3, maxe), dtype=np.int64)
    frozen = np.empty(maxg, dtype=np.bool_)
    used = np.empty(maxe, dtype=np.bool_)
    rin = np.empty(E)
    rout = np.full(E, np.nan)
    val = np.empty(E)
    g_rate = np.full(G, np.nan)
    g_new = np.empty(G)
    chg = np.empty(G, dtype=np.int64)
    cur = np.empty(nl)
    mod = np.zeros(nl, dtype=np.bool_)
    dirty = np.ones(ncls, dtype=np.bool_)
    blk = np.zeros(ncls, dtype=np.bool_)
    for l in range(nl - 1):
        cur[l] = cap[l]
        mod[l] = True
    _walk(0, ncls - 1, nl - 1, dirty, blk, g_ptr, g_w, g_ent, e_ptr, e_link, o_ptr, o_grp,
          rin, rout, val, cur, mod, tiny, g_new, g_rate, chg, scratch_f, scratch_i, frozen,
          used)  # the caller's rates, recomputed with their records
    mv = np.empty(n0, dtype=np.int64)  # the moving flows (row at entry), any order
    mvpos = np.full(n0, -1, dtype=np.int64)
    nmv = 0
    for i in range(n0):
        if rate[i] > 0 or rem[i] <= tol[i]:
            mvpos[i] = nmv
            mv[nmv] = i
            nmv += 1
    at = np.arange(n0)  # row of the compacted arrays -> row at entry
    row = np.arange(n0)  # row at entry -> row of the compacted arrays
    m = n0
    fbuf = np.empty(n0, dtype=np.int64)
    ebuf = np.empty(n0)
    k = 0
    steps = 0
    while True:
        for j in range(nf):  # retire the event's flows
            i = fin[j]
            done_tf[k] = tf[i]
            done_cf[k] = cf[i]
            done_start[k] = ends[j] if np.isnan(start[i]) else start[i]
            done_end[k] = ends[j]
            k += 1
        pos = np.empty(nf, dtype=np.int64)  # the row moves retire_flows would make
        for j in range(nf):
            pos[j] = row[fin[j]]
        pos.sort()
        for j in range(nf - 1, -1, -1):
            p = pos[j]
            m -= 1
            if p != m:
                o = at[m]
                at[p] = o
                row[o] = p
        k0 = ncls
        kmax = -1
        for j in range(nf):
            i = fin[j]
            x = mvpos[i]
            last = mv[nmv - 1]
            mv[x] = last
            mvpos[last] = x
            mvpos[i] = -1
            nmv -= 1
            path_flows[pid[i]] -= 1
            for q in range(P):
                link_flows[path_links[pid[i], q]] -= 1
            g_w[f_grp[i]] -= 1
            f_grp[i] = -1
            kc = cls_of[cf[i]]
            dirty[kc] = True
            k0 = min(k0, kc)
            kmax = max(kmax, kc)
        nchg = _walk(k0, kmax, 0, dirty, blk, g_ptr, g_w, g_ent, e_ptr, e_link, o_ptr, o_grp,
                     rin, rout, val, cur, mod, tiny, g_new, g_rate, chg, scratch_f,
                     scratch_i, frozen, used)
        for y in range(nchg):  # new rates to the flows of changed groups
            g = chg[y]
            r = g_rate[g]
            for x in range(f_ptr[g], f_ptr[g + 1]):
                i = g_flows[x]
                if f_grp[i] < 0:
                    continue
                rate[i] = r
                if r > 0 and mvpos[i] < 0:
                    mvpos[i] = nmv
                    mv[nmv] = i
                    nmv += 1
                elif r == 0 and mvpos[i] >= 0:
                    x2 = mvpos[i]
                    last = mv[nmv - 1]
                    mv[x2] = last
                    mvpos[last] = x2
                    mvpos[i] = -1
                    nmv -= 1
        steps += 1
        # the next event, over the moving flows
        first = np.inf
        for x in range(nmv):
            i = mv[x]
            if rate[i] > 0:
                t = rem[i] / rate[i]
                if np.isnan(start[i]):
                    start[i] = now
            else:
                t = np.inf
            ttf[i] = t
            if t < first:
                first = t
        t_next = min(t_timer, now + first)
        if not np.isfinite(t_next):
            _compact(n0, m, at, tf, cf, pid, rem, start, rate, tol)
            return now, m, steps, k, False, fbuf[:0], ebuf[:0]
        dt = max(0.0, t_next - now)
        t_prev = now
        now = max(now, t_next)
        nf = 0
        for x in range(nmv):
            i = mv[x]
            f = ttf[i] <= dt + eps_t
            if dt > 0:
                rem[i] -= rate[i] * dt
            if f or rem[i] <= tol[i]:
                fbuf[nf] = i
                nf += 1
        fin = fbuf[:nf]
        ends = ebuf[:nf]
        for j in range(nf):
            ends[j] = min(t_prev + ttf[fin[j]], now)
        if _stops(fin, nf, cf, c_left, t_timer, now, eps_t):
            _compact(n0, m, at, tf, cf, pid, rem, start, rate, tol)
            pos = np.empty(nf, dtype=np.int64)
            for j in range(nf):
                pos[j] = row[fin[j]]
            o = np.argsort(pos)
            return now, m, steps, k, True, pos[o], ends[o]


@_jit
def _stops(fin, nf, cf, c_left, t_timer, now, eps_t):
    """True if the event is more than flow completions: nothing finished, a timer is
    due, or a finished flow completes its coflow (``c_left`` = flows left per coflow,
    decremented for the finished flows unless it stops)."""
    if nf == 0 or t_timer <= now + eps_t:
        return True
    stop = False
    for j in range(nf):
        co = cf[fin[j]]
        c_left[co] -= 1
        if c_left[co] == 0:
            stop = True
    if stop:
        for j in range(nf):
            c_left[cf[fin[j]]] += 1
    return stop


@_jit
def _compact(n0, m, at, tf, cf, pid, rem, start, rate, tol):
    """Apply the row permutation ``at`` (first ``m`` rows kept) to the active columns."""
    for col in (tf, cf, pid):
        tmp = col[:n0].copy()
        for r in range(m):
            col[r] = tmp[at[r]]
    for colf in (rem, start, rate, tol):
        tmpf = colf[:n0].copy()
        for r in range(m):
            colf[r] = tmpf[at[r]]


@_jit
def coflow_link_bytes(c_local, cf, pid, rem, path_links, num_rows, nl):
    """(num_rows x nl) bytes each coflow (row ``c_local[cf[i]]``) still has on each link."""
    out = np.zeros((num_rows, nl))
    P = path_links.shape[1]
    for i in range(cf.shape[0]):
        r = c_local[cf[i]]
        for k in range(P):
            out[r, path_links[pid[i], k]] += rem[i]
    return out


@_jit
def bssi_back(X, w, link_load, tie):
    """Bottleneck-Select-Scale-Iterate (``emulation/scheduler/bssi.py``): the items' order
    from last to first. ``X`` (N x L capacity-normalised loads), ``w`` (weights, consumed),
    ``link_load`` (X summed over items, computed by the caller with numpy; consumed).
    Element for element the operations of its numpy formulation
    (``tests/reference_allocation.py``), so the same order; O(N (N + L)) without per-step interpreter overhead."""
    n, L = X.shape
    back = np.empty(n, dtype=np.int64)
    nb = 0
    remaining = np.ones(n, dtype=np.bool_)
    left = n
    ratio = np.empty(n)
    while left > 0:
        top = -np.inf
        for l in range(L):
            if link_load[l] > top:
                top = link_load[l]
        thr = top * (1 - tie)
        b = 0
        for l in range(L):
            if link_load[l] >= thr:
                b = l
                break
        if link_load[b] <= 0:
            for i in range(n - 1, -1, -1):  # the rest, in index order once reversed
                if remaining[i]:
                    back[nb] = i
                    nb += 1
            break
        rmin = np.inf
        for i in range(n):
            if remaining[i]:
                xb = X[i, b]
                r = w[i] / xb if xb > 0 else np.inf
                ratio[i] = r
                if r < rmin:
                    rmin = r
        if not np.isfinite(rmin):  # float residue on a link no remaining item loads
            link_load[b] = 0.0
            continue
        cut = rmin + abs(rmin) * tie
        last = -1
        for i in range(n):
            if remaining[i] and ratio[i] <= cut:
                last = i  # largest index among the (near-)minima
        for i in range(n):
            if remaining[i]:
                w[i] -= rmin * X[i, b]
        w[last] = 0.0
        back[nb] = last
        nb += 1
        remaining[last] = False
        left -= 1
        for l in range(L):
            link_load[l] -= X[last, l]
            if link_load[l] < 0:
                link_load[l] = 0.0
    return back[:nb]


@_jit
def stage_link_bytes(jobs, s_row, full, inflight_t, cur_row, j_ptr, j_idx, j_val, t_ptr,
                     t_idx, t_val, clb, num_stages, nl):
    """(stages x nl) bytes every remaining iteration of each active job still puts on each
    link, summed per stage (row ``s_row[k]`` for job ``jobs[k]``): ``full[k]`` whole
    iterations of the job's per-iteration loads (CSR ``j_ptr/j_idx/j_val``), plus for a
    job in flight (``inflight_t[k]`` = its template, else -1) the templates after it (CSR
    ``t_*``) and its coflow's remaining bytes (row ``cur_row[k]`` of ``clb``, -1 if none).
    Per (job, link) the same sum in the same order as the dense numpy formulation
    (``tests/test_view_loads.py``), and stage rows accumulate jobs in order; entries that are zero there are
    skipped here (adding 0.0 changes nothing), so the cost follows the links each job
    touches, not jobs x links."""
    out = np.zeros((num_stages, nl))
    tmp = np.zeros(nl)
    mark = np.zeros(nl, dtype=np.bool_)
    touched = np.empty(nl, dtype=np.int64)
    for k in range(jobs.shape[0]):
        j = jobs[k]
        nt = 0
        for e in range(j_ptr[j], j_ptr[j + 1]):
            l = j_idx[e]
            tmp[l] = full[k] * j_val[e]
            if not mark[l]:
                mark[l] = True
                touched[nt] = l
                nt += 1
        t = inflight_t[k]
        if t >= 0:
            for e in range(t_ptr[t], t_ptr[t + 1]):
                l = t_idx[e]
                tmp[l] += t_val[e]
                if not mark[l]:
                    mark[l] = True
                    touched[nt] = l
                    nt += 1
            r = cur_row[k]
            if r >= 0:
                for l in range(nl):
                    v = clb[r, l]
                    if v != 0.0:
                        tmp[l] += v
                        if not mark[l]:
                            mark[l] = True
                            touched[nt] = l
                            nt += 1
        row = s_row[k]
        for i in range(nt):
            l = touched[i]
            out[row, l] += tmp[l]
            tmp[l] = 0.0
            mark[l] = False
    return out


@_jit
def max_scaled_rows(m, scale, cap):
    """out[c] = max over l of (m[c, l] * scale) / cap[l]: the numpy expression
    ``(m * scale / cap[None, :]).max(axis=1)`` element for element, without its two
    temporaries of m's size (Varys's effective bottleneck over coflows x links)."""
    C, L = m.shape
    out = np.empty(C)
    for c in range(C):
        best = -np.inf
        for l in range(L):
            v = (m[c, l] * scale) / cap[l]
            if v > best:
                best = v
        out[c] = best
    return out


def warm_up() -> None:
    """Compile (or load from cache) every kernel on a tiny input."""
    path_links = np.array([[0, 2], [1, 2]], dtype=np.int64)
    ptr = np.array([0, 1, 2, 4], dtype=np.int64)
    owners = np.array([0, 1, 0, 1], dtype=np.int64)
    cap = np.array([1.0, 2.0, np.inf])
    pid = np.array([0, 1], dtype=np.int64)
    ones = np.ones(2)
    counts = np.ones(2, dtype=np.int64)
    maxmin_weighted(path_links, ptr, owners, cap, counts)
    lcounts = np.array([1, 1, 2], dtype=np.int64)
    w0 = np.zeros(2, dtype=np.int64)
    lmap = np.full(3, -1, dtype=np.int64)
    priority_rates(pid, pid, pid, 2, counts, lcounts, path_links, ptr, owners, cap, w0, lmap)
    priority_rates(pid, pid, pid * 0, 1, counts, lcounts, path_links, ptr, owners, cap, w0,
                   lmap)
    rate = madd_rates(pid, pid, pid, ones, path_links, ptr, owners, cap)
    ttf = np.empty(2)
    time_to_finish(ones.copy(), rate, ttf, np.full(2, np.nan), 0.0)
    min_coflow_finish(ttf, pid, 2)
    advance(ones.copy(), rate, ttf, ones, 0.1, 1e-9)
    retire_flows(pid[:1], 2, pid.copy(), pid.copy(), pid.copy(), ones.copy(), ones.copy(),
                 ones.copy(), ones.copy(), counts.copy(), lcounts.copy(), path_links)
    flow_events(0.0, np.inf, 1e-9, 2, pid.copy(), pid.copy(), pid.copy(), ones.copy(),
                np.full(2, np.nan), rate.copy(), ones * 1e-6, counts.copy(),
                counts.copy(), lcounts.copy(), path_links, ptr, owners, cap,
                np.empty(2), pid.copy(), pid.copy(), ones.copy(), ones.copy())
    queue_events(0.0, np.inf, 1e-9, 2, pid.copy(), pid.copy(), pid.copy(), ones.copy(),
                 np.full(2, np.nan), rate.copy(), ones * 1e-6, counts.copy(), pid, 2,
                 counts.copy(), lcounts.copy(), path_links, cap,
                 np.empty(2), pid.copy(), pid.copy(), ones.copy(), ones.copy())
    coflow_link_bytes(pid, pid, pid, ones, path_links, 2, 3)
    X = np.ones((2, 2))
    bssi_back(X, np.ones(2), X.sum(axis=0), 1e-9)
    max_scaled_rows(X, 8.0, np.ones(2))
    max_scaled_rows(X[:, :1], 8.0, np.ones(1))
    stage_link_bytes(pid, pid, pid, pid, pid, ptr[:3], pid, ones, ptr[:3], pid, ones, X, 2, 2)
    # the policies' read-only views pass read-only arrays, a distinct specialisation each
    # (compiled at first call otherwise: inside a timed run)
    ro_pid, ro_one, ro_x = _read_only(pid), _read_only(np.ones(2)), _read_only(X)
    coflow_link_bytes(ro_pid, pid, pid, ones, path_links, 2, 3)
    stage_link_bytes(ro_pid, pid, pid, pid, pid, ptr[:3], pid, ones, ptr[:3], pid, ones, X,
                     2, 2)
    max_scaled_rows(ro_x, 8.0, ro_one)
    max_scaled_rows(ro_x[:, :1], 8.0, ro_one[:1])


def _read_only(a: np.ndarray) -> np.ndarray:
    """A read-only copy of ``a``."""
    a = a.copy()
    a.flags.writeable = False
    return a
