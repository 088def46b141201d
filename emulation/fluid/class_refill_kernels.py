"""Compiled (numba) incremental strict-priority max-min for ``queue_events``: the state of
every class's last progressive fill and its update after flows complete, recomputing
only what the completions change, with the operations of a full fill, so the rates and
residuals are the same, bit for bit, as ``allocation_kernels.priority_rates`` gives (per
class a progressive fill as ``_fill`` does it, then the usage summed per link in
ascending path order and subtracted, a residual <= ``tiny`` counting as 0).

Classes are filled in priority order; entry e of class k (one link ``e_link[e]`` the
class's (class, path) groups cross, ``_class_groups``) reads as input the residual the
previous class crossing that link left (``rin``), and leaves ``rout`` to the next one
(``e_nxt``). Per class the fill's rounds are recorded (``_rounds_k``): per round its
share and level, its live entries with their residual and flow count at the round's
start, and the groups it froze. After completions (group weights ``g_w`` dropped) or
input changes, ``_update_class`` finds the first round they can alter:

- a group that lost flows froze in round ``fr[g]``: rounds before it counted its flows
  on its links while it was live, so the refill starts at the latest there (as
  ``refill_kernels._refill_from`` argues for one class);
- an entry whose input residual or count changed is replayed round by round with the
  same operations (``x -= m * cnt``); a round stays as recorded while the entry was not
  saturated in it and its new share stays above the round's threshold (minimum share
  plus ``tiny``): then the round's minimum, its saturated set and so its freezes are
  those of the record, and every other entry's residual and count are as recorded.

From that round on the fill runs again from the restored state (records rewritten). The
output residual of an entry is recomputed (usage summed over its groups in ascending
order, as ``priority_rates`` sums it) only where a group's rate or weight or the input
changed, and only changed outputs reach the next class. A class is blocked (rates 0,
residuals passed through) when each of its groups with flows crosses a full input
(<= ``tiny``), kept as a count of free groups per class (``nfree``) updated when an
entry's input crosses ``tiny`` or a group empties.

Conventions as in ``emulation/allocation_kernels.py``; residuals in bytes/s.
"""
from __future__ import annotations

import numpy as np

from emulation.fluid.refill_kernels import _class_groups, _grow
from emulation.kernels import jit, tiny_network


@jit
def _entry_links(e_ptr, e_link, nl):
    """Per entry its class (``e_cls``) and the entry of the next class crossing the same
    link (``e_nxt``, -1 if none)."""
    ncls = e_ptr.shape[0] - 1
    E = e_link.shape[0]
    e_cls = np.empty(E, dtype=np.int64)
    e_nxt = np.full(E, -1, dtype=np.int64)
    last = np.full(nl, -1, dtype=np.int64)
    for k in range(ncls):
        for e in range(e_ptr[k], e_ptr[k + 1]):
            e_cls[e] = k
            l = e_link[e]
            if last[l] >= 0:
                e_nxt[last[l]] = e
            last[l] = e
    return e_cls, e_nxt


@jit
def _find(lbuf, a, b, j):
    """Position of ``j`` in the ascending ``lbuf[a:b]``, or -1."""
    if a >= b:
        return -1
    while b - a > 1:
        mid = (a + b) // 2
        if lbuf[mid] <= j:
            a = mid
        else:
            b = mid
    return a if lbuf[a] == j else -1


@jit
def _rounds_k(k, r, nlive, level, tiny, g_w, g_ent, e_ptr, o_ptr, o_grp, cl, cnt, live,
              share, sat, fr, fo, nfo, g_new, nr, r_m, r_lev, r_loff, r_fs, lbase, lcap, top,
              lbuf, lc, lcnt):
    """``_fill``'s progressive filling of class k from round ``r`` (state: local
    entries ``live[:nlive]`` ascending, residuals ``cl`` and counts ``cnt`` by local
    entry, ``level``), the same operations, recording each round (rounds of class k at
    ``e_ptr[k] + k + r``; its live entries in ``lbuf[r_loff:r_loff next]``, relocated to
    the end of the buffers (``top[0]``) when class k's space is full). Frozen groups get
    ``fr`` = their round, ``g_new`` = the level, and are listed in ``fo`` from ``nfo``.
    Returns the buffers (they may have grown)."""
    ea = e_ptr[k]
    rb = ea + k
    P = g_ent.shape[1]
    while nlive > 0:
        o = r_loff[rb + r]
        if o + nlive > lbase[k] + lcap[k]:  # move class k's records to the end
            used = o - lbase[k]
            size = 2 * (used + nlive)
            t = top[0]
            lbuf = _grow(lbuf, t + size)
            lc = _grow(lc, t + size)
            lcnt = _grow(lcnt, t + size)
            for i in range(used):
                lbuf[t + i] = lbuf[lbase[k] + i]
                lc[t + i] = lc[lbase[k] + i]
                lcnt[t + i] = lcnt[lbase[k] + i]
            for rr in range(r + 1):
                r_loff[rb + rr] += t - lbase[k]
            lbase[k] = t
            lcap[k] = size
            top[0] = t + size
            o = r_loff[rb + r]
        m = np.inf
        for i in range(nlive):
            j = live[i]
            lbuf[o + i] = j
            lc[o + i] = cl[j]
            lcnt[o + i] = cnt[j]
            s = max(cl[j], 0.0) / cnt[j]
            share[i] = s
            if s < m:
                m = s
        r_loff[rb + r + 1] = o + nlive
        r_fs[rb + r] = nfo
        r_m[rb + r] = m
        level += m
        r_lev[rb + r] = level
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
                if fr[g] < 0 and g_w[g] > 0:
                    fr[g] = r
                    fo[nfo] = g
                    nfo += 1
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
        r += 1
    r_fs[rb + r] = nfo
    nr[k] = r
    return lbuf, lc, lcnt


@jit
def _enqueue(x, k, queued, nxt, head):
    """Put entry or group ``x`` on class k's list of changed ones (``head[k]``, linked
    by ``nxt``) unless ``queued[x]`` says it is there already."""
    if not queued[x]:
        queued[x] = True
        nxt[x] = head[k]
        head[k] = x


@jit
def _set_input(e2, v, tiny, rin, e_cls, g_w, g_nfull, nfree, o_ptr, o_grp, echg, enext,
               chead, pending):
    """Entry ``e2`` reads the new input residual ``v``: keep the groups' counts of full
    inputs and the class's free groups, and queue the entry and its class."""
    old = rin[e2]
    rin[e2] = v
    k2 = e_cls[e2]
    if (old <= tiny) != (v <= tiny):
        full = v <= tiny
        for x in range(o_ptr[e2], o_ptr[e2 + 1]):
            g = o_grp[x]
            if full:
                g_nfull[g] += 1
                if g_nfull[g] == 1 and g_w[g] > 0:
                    nfree[k2] -= 1
            else:
                g_nfull[g] -= 1
                if g_nfull[g] == 0 and g_w[g] > 0:
                    nfree[k2] += 1
    _enqueue(e2, k2, echg, enext, chead)
    pending[k2] = True


@jit
def drop_flow(g, k, g_w, g_ent, e_w, drop, g_nfull, nfree, echg, enext, chead, gchg,
              gnext, ghead, pending):
    """One flow of group ``g`` (class k) completed: its weight and its entries' counts
    drop by one; the group, its entries and its class are queued for ``update``."""
    g_w[g] -= 1
    if g_w[g] == 0 and g_nfull[g] == 0:
        nfree[k] -= 1
    for q in range(g_ent.shape[1]):
        e = g_ent[g, q]
        if e >= 0:
            e_w[e] -= 1
            drop[e] += 1
            _enqueue(e, k, echg, enext, chead)
    _enqueue(g, k, gchg, gnext, ghead)
    pending[k] = True


@jit
def _update_class(k, st, tiny, g_ptr, g_w, g_ent, e_ptr, o_ptr, o_grp, e_cls, e_nxt, chg,
                  nchg, bufs):
    """Class k after its inputs or weights changed (see the module docstring): new rates
    of its groups (changed ones appended to ``chg``), new outputs passed on to the next
    classes. Returns (nchg, bufs)."""
    (rin, rout, usage, e_w, drop, echg, enext, chead, emin, g_rate, g_new, g_nfull, fr,
     fo, gchg, gnext, ghead, nfree, valid, pending, nr, r_m, r_lev, r_loff, r_fs, lbase,
     lcap, top, cl, cnt, live, share, sat, uf, elist, pre, g_opos) = st
    lbuf, lc, lcnt = bufs
    ea, eb = e_ptr[k], e_ptr[k + 1]
    a, b = g_ptr[k], g_ptr[k + 1]
    rb = ea + k
    P = g_ent.shape[1]
    pending[k] = False
    nel = 0  # entries whose output is recomputed; emin = first position of their
    # groups (``o_grp``) whose contribution changed (-1: not listed)
    if nfree[k] == 0:  # blocked: rates 0, every input passed through
        if valid[k]:
            valid[k] = False
            for g in range(a, b):
                if g_rate[g] != 0.0:
                    g_rate[g] = 0.0
                    chg[nchg] = g
                    nchg += 1
            for e in range(ea, eb):
                if rout[e] != rin[e]:
                    rout[e] = rin[e]
                    if e_nxt[e] >= 0:
                        _set_input(e_nxt[e], rin[e], tiny, rin, e_cls, g_w, g_nfull, nfree,
                                   o_ptr, o_grp, echg, enext, chead, pending)
        else:
            e = chead[k]
            while e >= 0:
                if rout[e] != rin[e]:
                    rout[e] = rin[e]
                    if e_nxt[e] >= 0:
                        _set_input(e_nxt[e], rin[e], tiny, rin, e_cls, g_w, g_nfull, nfree,
                                   o_ptr, o_grp, echg, enext, chead, pending)
                e = enext[e]
        _clear(k, echg, enext, chead, drop, gchg, gnext, ghead)
        return nchg, (lbuf, lc, lcnt)
    if not valid[k]:  # a full fill, recorded
        valid[k] = True
        nlive = 0
        for e in range(ea, eb):
            j = e - ea
            cl[j] = rin[e]
            cnt[j] = e_w[e]
            if cnt[j] > 0:
                live[nlive] = j
                nlive += 1
        nu = 0
        for g in range(a, b):
            fr[g] = -1
            g_new[g] = 0.0
            uf[nu] = g
            nu += 1
        r_loff[rb] = lbase[k]
        lbuf, lc, lcnt = _rounds_k(k, 0, nlive, 0.0, tiny, g_w, g_ent, e_ptr, o_ptr, o_grp,
                                   cl, cnt, live, share, sat, fr, fo, a, g_new, nr, r_m,
                                   r_lev, r_loff, r_fs, lbase, lcap, top, lbuf, lc, lcnt)
        for e in range(ea, eb):
            emin[e] = o_ptr[e]
            elist[nel] = e
            nel += 1
    else:
        r0 = nr[k]
        g = ghead[k]
        while g >= 0:
            if fr[g] >= 0 and fr[g] < r0:
                r0 = fr[g]
            g = gnext[g]
        e = chead[k]
        while e >= 0:  # the first round a changed entry alters
            j = e - ea
            x = rin[e]
            d = drop[e]
            for r in range(r0):
                pos = _find(lbuf, r_loff[rb + r], r_loff[rb + r + 1], j)
                if pos < 0 or lcnt[pos] <= 0:
                    break
                cn = lcnt[pos] - d
                if cn <= 0:
                    break
                thr = r_m[rb + r] + tiny
                if max(lc[pos], 0.0) / lcnt[pos] <= thr or max(x, 0.0) / cn <= thr:
                    r0 = r
                    break
                x -= r_m[rb + r] * cn
            e = enext[e]
        e = chead[k]
        while e >= 0:  # replay to r0, rewriting the records of the earlier rounds
            j = e - ea
            x = rin[e]
            d = drop[e]
            for r in range(r0):
                pos = _find(lbuf, r_loff[rb + r], r_loff[rb + r + 1], j)
                if pos < 0:
                    break
                cn = lcnt[pos] - d
                lcnt[pos] = cn
                lc[pos] = x
                if cn > 0:
                    x -= r_m[rb + r] * cn
            cl[j] = x
            emin[e] = o_ptr[e + 1]  # its usage is unchanged unless a group marks it
            elist[nel] = e
            nel += 1
            e = enext[e]
        nu = 0
        if r0 < nr[k]:
            nlive = 0
            for pos in range(r_loff[rb + r0], r_loff[rb + r0 + 1]):
                j = lbuf[pos]
                cn = lcnt[pos] - drop[ea + j]
                if cn <= 0:
                    continue
                live[nlive] = j
                nlive += 1
                cnt[j] = cn
                if not echg[ea + j]:
                    cl[j] = lc[pos]
            for x in range(r_fs[rb + r0], r_fs[rb + nr[k]]):
                g = fo[x]
                fr[g] = -1
                g_new[g] = 0.0
                uf[nu] = g
                nu += 1
            level = r_lev[rb + r0 - 1] if r0 > 0 else 0.0
            lbuf, lc, lcnt = _rounds_k(k, r0, nlive, level, tiny, g_w, g_ent, e_ptr, o_ptr,
                                       o_grp, cl, cnt, live, share, sat, fr, fo,
                                       r_fs[rb + r0], g_new, nr, r_m, r_lev, r_loff, r_fs,
                                       lbase, lcap, top, lbuf, lc, lcnt)
        g = ghead[k]
        while g >= 0:  # emptied groups not unfrozen above (never frozen): rate 0
            if g_w[g] <= 0 and fr[g] < 0:
                g_new[g] = 0.0
                uf[nu] = g
                nu += 1
            for q in range(P):  # a weight change changes its links' usage
                e = g_ent[g, q]
                if e >= 0:
                    if emin[e] < 0:
                        elist[nel] = e
                        nel += 1
                        emin[e] = g_opos[g, q]
                    elif g_opos[g, q] < emin[e]:
                        emin[e] = g_opos[g, q]
            g = gnext[g]
    for y in range(nu):
        g = uf[y]
        v = g_new[g] if (fr[g] >= 0 and g_w[g] > 0) else 0.0
        if v != g_rate[g]:
            g_rate[g] = v
            chg[nchg] = g
            nchg += 1
            for q in range(P):
                e = g_ent[g, q]
                if e >= 0:
                    if emin[e] < 0:
                        elist[nel] = e
                        nel += 1
                        emin[e] = g_opos[g, q]
                    elif g_opos[g, q] < emin[e]:
                        emin[e] = g_opos[g, q]
    for y in range(nel):  # outputs, for the entries a later class reads
        e = elist[y]
        x0 = emin[e]
        emin[e] = -1
        if e_nxt[e] < 0:
            continue
        if e_w[e] > 0:
            # usage summed in ascending group order; ``pre[x]`` = the partial sum before
            # position x, so the sum restarts at the first group that changed
            acc = usage[e]
            if x0 < o_ptr[e + 1]:
                acc = pre[x0]
                for x in range(x0, o_ptr[e + 1]):
                    pre[x] = acc
                    g = o_grp[x]
                    if g_w[g] > 0:
                        acc += g_rate[g] * g_w[g]
                usage[e] = acc
            v = rin[e] - acc
            if v <= tiny:
                v = 0.0
        else:
            v = rin[e]
        if v != rout[e]:
            rout[e] = v
            _set_input(e_nxt[e], v, tiny, rin, e_cls, g_w, g_nfull, nfree, o_ptr, o_grp,
                       echg, enext, chead, pending)
    _clear(k, echg, enext, chead, drop, gchg, gnext, ghead)
    return nchg, (lbuf, lc, lcnt)


@jit
def _clear(k, echg, enext, chead, drop, gchg, gnext, ghead):
    """Empty class k's queues of changed entries and groups."""
    e = chead[k]
    while e >= 0:
        echg[e] = False
        drop[e] = 0
        e = enext[e]
    chead[k] = -1
    g = ghead[k]
    while g >= 0:
        gchg[g] = False
        g = gnext[g]
    ghead[k] = -1


@jit
def new_state(g_ptr, g_w, g_ent, e_ptr, e_link, o_ptr, o_grp, cap, tiny):
    """Every class filled in order on the capacities ``cap`` (recorded), as
    ``priority_rates`` fills them. Returns (state, buffers, e_cls, e_nxt); the rates
    per group are the state's ``g_rate`` (index 9)."""
    ncls = g_ptr.shape[0] - 1
    G = g_w.shape[0]
    E = e_link.shape[0]
    nl = cap.shape[0]
    e_cls, e_nxt = _entry_links(e_ptr, e_link, nl)
    maxe = 1
    for k in range(ncls):
        maxe = max(maxe, e_ptr[k + 1] - e_ptr[k])
    G1 = max(G, 1)
    e_w = np.zeros(E, dtype=np.int64)
    for e in range(E):
        acc = 0
        for x in range(o_ptr[e], o_ptr[e + 1]):
            acc += g_w[o_grp[x]]
        e_w[e] = acc
    P = g_ent.shape[1]
    # position of group g in its entries' group lists: ``_class_groups`` fills each list
    # in ascending group order, so the same walk numbers them
    g_opos = np.full((G, P), -1, dtype=np.int64)
    opos = o_ptr[:E].copy()
    for g in range(G):
        for q in range(P):
            e = g_ent[g, q]
            if e >= 0:
                g_opos[g, q] = opos[e]
                opos[e] += 1
    lcap = np.empty(ncls, dtype=np.int64)
    lbase = np.empty(ncls, dtype=np.int64)
    t = 0
    for k in range(ncls):
        lbase[k] = t
        lcap[k] = 4 * (e_ptr[k + 1] - e_ptr[k])
        t += lcap[k]
    top = np.array([t], dtype=np.int64)
    rin = np.full(E, np.nan)
    st = (rin, np.full(E, np.nan), np.zeros(E), e_w, np.zeros(E, dtype=np.int64),
          np.zeros(E, dtype=np.bool_), np.full(E, -1, dtype=np.int64),
          np.full(ncls, -1, dtype=np.int64), np.full(E, -1, dtype=np.int64),
          np.full(G, np.nan),
          np.zeros(G), np.zeros(G, dtype=np.int64), np.full(G, -1, dtype=np.int64),
          np.empty(G1, dtype=np.int64), np.zeros(G, dtype=np.bool_),
          np.full(G, -1, dtype=np.int64), np.full(ncls, -1, dtype=np.int64),
          np.zeros(ncls, dtype=np.int64), np.zeros(ncls, dtype=np.bool_),
          np.zeros(ncls, dtype=np.bool_), np.zeros(ncls, dtype=np.int64),
          np.empty(E + ncls), np.empty(E + ncls), np.zeros(E + ncls, dtype=np.int64),
          np.zeros(E + ncls, dtype=np.int64), lbase, lcap, top, np.empty(maxe),
          np.empty(maxe, dtype=np.int64), np.empty(maxe, dtype=np.int64), np.empty(maxe),
          np.empty(maxe, dtype=np.int64), np.empty(2 * G1, dtype=np.int64),
          np.empty(max(E, 1), dtype=np.int64), np.zeros(o_grp.shape[0]), g_opos)
    bufs = (np.empty(max(t, 1), dtype=np.int64), np.empty(max(t, 1)),
            np.empty(max(t, 1), dtype=np.int64))
    g_nfull, nfree, pending = st[11], st[17], st[19]
    # inputs: the capacity at each link's first class; the rest arrive as outputs
    first = np.full(nl, True)
    for e in range(E):
        l = e_link[e]
        if first[l]:
            first[l] = False
            rin[e] = cap[l]
    for k in range(ncls):
        for g in range(g_ptr[k], g_ptr[k + 1]):
            if g_w[g] > 0:
                nfree[k] += 1
    for e in range(E):  # inputs not yet known count as not full; set as they arrive
        if not (rin[e] <= tiny):
            continue
        for x in range(o_ptr[e], o_ptr[e + 1]):
            g = o_grp[x]
            g_nfull[g] += 1
            if g_nfull[g] == 1 and g_w[g] > 0:
                nfree[e_cls[e]] -= 1
    chg = np.empty(G1, dtype=np.int64)
    for k in range(ncls):
        pending[k] = False
        st[18][k] = False  # valid: nothing recorded yet
        for g in range(g_ptr[k], g_ptr[k + 1]):
            st[9][g] = 0.0 if nfree[k] == 0 else np.nan
        if e_ptr[k + 1] == e_ptr[k]:  # no links: rates 0 (never frozen), nothing to pass
            for g in range(g_ptr[k], g_ptr[k + 1]):
                st[9][g] = 0.0
            continue
        _, bufs = _update_class(k, st, tiny, g_ptr, g_w, g_ent, e_ptr, o_ptr, o_grp, e_cls,
                                e_nxt, chg, 0, bufs)
        # a blocked class passes only its queued inputs through: pass all of them
        if nfree[k] == 0:
            for e in range(e_ptr[k], e_ptr[k + 1]):
                if st[1][e] != rin[e]:
                    st[1][e] = rin[e]
                    if e_nxt[e] >= 0:
                        _set_input(e_nxt[e], rin[e], tiny, rin, e_cls, g_w, g_nfull, nfree,
                                   o_ptr, o_grp, st[5], st[6], st[7], pending)
    _clear_all(st)
    return st, bufs, e_cls, e_nxt


@jit
def _clear_all(st):
    """No class pending, no queued entry or group."""
    echg, enext, chead, drop, gchg, gnext, ghead, pending = (st[5], st[6], st[7], st[4],
                                                            st[14], st[15], st[16], st[19])
    for k in range(chead.shape[0]):
        _clear(k, echg, enext, chead, drop, gchg, gnext, ghead)
        pending[k] = False


@jit
def update(k0, st, bufs, tiny, g_ptr, g_w, g_ent, e_ptr, o_ptr, o_grp, e_cls, e_nxt, chg):
    """Every pending class from ``k0`` on, in priority order (a class's new outputs queue
    later classes). Returns (groups whose rate changed, listed in ``chg``; bufs)."""
    pending = st[19]
    nchg = 0
    for k in range(k0, pending.shape[0]):
        if pending[k]:
            nchg, bufs = _update_class(k, st, tiny, g_ptr, g_w, g_ent, e_ptr, o_ptr, o_grp,
                                       e_cls, e_nxt, chg, nchg, bufs)
    return nchg, bufs


def warm_up() -> None:
    """Compile (or load from numba's cache) this module's kernels on a tiny input."""
    path_links, _, _, cap = tiny_network()
    pid = np.array([0, 1], dtype=np.int64)
    nl = cap.shape[0]
    (g_ptr, _, g_w, _, _, _, e_ptr, e_link, g_ent, o_ptr,
     o_grp) = _class_groups(2, pid, pid, pid, 2, path_links, nl)
    st, bufs, e_cls, e_nxt = new_state(g_ptr, g_w, g_ent, e_ptr, e_link, o_ptr, o_grp, cap,
                                       1e-9)
    drop_flow(0, 0, g_w, g_ent, st[3], st[4], st[11], st[17], st[5], st[6], st[7], st[14],
              st[15], st[16], st[19])
    update(0, st, bufs, 1e-9, g_ptr, g_w, g_ent, e_ptr, o_ptr, o_grp, e_cls, e_nxt,
           np.empty(len(g_w), dtype=np.int64))
