"""Compiled (numba) re-allocation after flows complete, for the fluid event loops of
``emulation/fluid/event_kernels.py``: each redoes only the part of the last allocation
that the completions change, with the operations of a full allocation
(``emulation/allocation_kernels.py``), so the rates are the same.

- One class (fair sharing, ``flow_events``): a progressive fill that records its rounds
  (``_rounds``) and restarts from the first round the completions change
  (``_refill_from``).
- Several classes (strict priority, ``queue_events``): the active flows grouped by
  (class, path) once per call (``_class_groups``); the incremental refill over those
  groups is ``emulation/fluid/class_refill_kernels.py``.

Conventions as in ``allocation_kernels``: ``path_links`` (paths x P, dummy link
``nl - 1``), capacities and residuals in bytes/s, ``ptr, owners`` the link -> paths index.
"""
from __future__ import annotations

import numpy as np

from emulation.kernels import jit, tiny_network


@jit
def _grow(a, need):
    """``a`` itself if it holds ``need`` entries, else a copy at least twice as long."""
    if need <= a.shape[0]:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), dtype=a.dtype)
    b[:a.shape[0]] = a
    return b


@jit
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


@jit
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


@jit
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


def warm_up() -> None:
    """Compile (or load from numba's cache) this module's kernels on a tiny input."""
    path_links, ptr, owners, cap = tiny_network()
    pid = np.array([0, 1], dtype=np.int64)
    counts = np.ones(2, dtype=np.int64)
    nl = cap.shape[0]
    c, cnt = cap.copy(), np.array([1, 1, 0], dtype=np.int64)
    live = np.array([0, 1, 0], dtype=np.int64)
    fr = np.full(2, -1, dtype=np.int64)
    forder = np.empty(2, dtype=np.int64)
    rec = (np.zeros(nl + 2, dtype=np.int64), np.empty(nl + 2), np.empty(nl + 2),
           np.zeros(nl + 2, dtype=np.int64))
    bufs = (np.empty(4 * nl, dtype=np.int64), np.empty(4 * nl),
            np.empty(4 * nl, dtype=np.int64))
    out = np.empty(2)
    _, nfro, *bufs = _rounds(0, 2, live, 0.0, path_links, ptr, owners, c, cnt, counts, out,
                             1e-9, fr, forder, 0, *rec, *bufs)
    drop = np.array([1, 0, 0], dtype=np.int64)
    _refill_from(0, drop, np.zeros(1, dtype=np.int64), 1, cap, 1e-9, path_links, ptr,
                 owners, c, cnt, np.array([0, 1], dtype=np.int64), out, live, fr, forder,
                 nfro, *rec, *bufs)
    _class_groups(2, pid, pid, pid, 2, path_links, nl)
