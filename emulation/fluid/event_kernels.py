"""Compiled (numba) time advance of the fluid simulator and its loops over the events
that only complete flows.

- Per event (the engine's Python path): ``time_to_finish`` (each active flow's time to
  finish and the minimum), ``min_coflow_finish`` (the first coflow to finish), ``advance``
  (move every flow, the finished ones); removing the finished rows is the shared
  state's ``emulation/state_kernels.py`` ``retire_flows``.
- Many events in one call: ``flow_events`` under one class (fair sharing) and
  ``queue_events`` under several (strict priority), each step with the operations of the
  Python path; they hand back to the engine at a timer, a coflow completion, nothing
  finishing, or before an event later than the caller's ``stop_s`` (a time before which
  no byte wake-up of the policy can be due). Their re-allocation is ``emulation/fluid/refill_kernels.py`` (one class)
  and ``emulation/fluid/class_refill_kernels.py`` (several).

Conventions as in ``emulation/allocation_kernels.py``: ``path_links`` (paths x P,
dummy link ``nl - 1``), capacities and rates in bytes/s, remaining sizes in bytes, times
in seconds.
"""
from __future__ import annotations

import numpy as np

from emulation.allocation_kernels import _tolerance
from emulation.fluid.class_refill_kernels import drop_flow, new_state, update
from emulation.fluid.refill_kernels import _class_groups, _refill_from, _rounds
from emulation.kernels import jit, tiny_network
from emulation.state_kernels import retire_flows


@jit
def time_to_finish(rem, rate, ttf, start, now_s):
    """ttf[i] = rem[i] / rate[i] (inf at rate 0); returns the minimum. A flow moving for
    the first time (``start`` NaN, rate > 0) gets ``start = now_s``."""
    best = np.inf
    for i in range(rem.shape[0]):
        if rate[i] > 0:
            t = rem[i] / rate[i]
            if np.isnan(start[i]):
                start[i] = now_s
        else:
            t = np.inf
        ttf[i] = t
        if t < best:
            best = t
    return best


@jit
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


@jit
def advance(rem, rate, ttf, tol, dt_s, eps_s):
    """Move every flow ``dt`` seconds at its rate; the indices of the flows that have
    finished (within ``eps_s`` of now_s, or at most ``tol[i]`` bytes left), ascending."""
    n = rem.shape[0]
    done = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(n):
        f = ttf[i] <= dt_s + eps_s
        if dt_s > 0:
            rem[i] -= rate[i] * dt_s
        if f or rem[i] <= tol[i]:
            done[k] = i
            k += 1
    return done[:k]


@jit
def flow_events(now_s, timer_s, stop_s, eps_s, n, tf, cf, pid, rem, start, rate, tol, c_left,
                path_flows, link_flows, path_links, ptr, owners, cap, ttf, done_tf, done_cf,
                done_start, done_end):
    """The fluid engine's events that only complete flows, under one class (fair
    sharing; ``queue_events`` handles several), each step with the same operations as
    the engine's Python loop: time to the next completion (``time_to_finish``),
    ``advance``, retire the finished flows (``retire_flows``), recompute the rates
    (``priority_rates``).

    Stops at the first event that is more than that: no flow moving, or the next event
    later than ``stop_s`` (both before advancing: the caller moves time itself), a timer
    due (``timer_s``), nothing finished, or a finished flow that completes its
    coflow (``c_left`` = flows left per coflow; after advancing, before retiring: the
    caller completes those flows). The first ``n`` rows of the active columns, ``rate``
    and ``c_left`` are updated in place; retired flows go to ``done_*`` (first-byte time
    NaN replaced by the end time). Returns (now_s, n, steps handled, records written,
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
        first = time_to_finish(rem[:n], rate[:n], ttf[:n], start[:n], now_s)
        next_s = min(timer_s, now_s + first)
        if not np.isfinite(next_s) or next_s > stop_s:
            return now_s, n, steps, k, False, none_i, none_f
        dt_s = max(0.0, next_s - now_s)
        prev_s = now_s
        now_s = max(now_s, next_s)
        fin = advance(rem[:n], rate[:n], ttf[:n], tol[:n], dt_s, eps_s)
        nf = fin.shape[0]
        ends = np.empty(nf)
        for j in range(nf):
            ends[j] = min(prev_s + ttf[fin[j]], now_s)
        stop = nf == 0 or timer_s <= now_s + eps_s
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
            return now_s, n, steps, k, True, fin, ends
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


@jit
def queue_events(now_s, timer_s, stop_s, eps_s, n, tf, cf, pid, rem, start, rate, tol, c_left,
                 cls_of, ncls, path_flows, link_flows, path_links, cap, ttf, done_tf, done_cf,
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
    - rates are updated incrementally (``class_refill_kernels``): from the first class
      that lost flows, each class whose flows or input residuals changed is refilled
      from the first round of its recorded fill that the change alters, and only the
      (class, path) groups whose rate changed are written to their flows;
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
    first = time_to_finish(rem[:n], rate[:n], ttf[:n], start[:n], now_s)
    next_s = min(timer_s, now_s + first)
    if not np.isfinite(next_s) or next_s > stop_s:
        return now_s, n, 0, 0, False, np.empty(0, dtype=np.int64), np.empty(0)
    dt_s = max(0.0, next_s - now_s)
    prev_s = now_s
    now_s = max(now_s, next_s)
    fin = advance(rem[:n], rate[:n], ttf[:n], tol[:n], dt_s, eps_s)
    nf = fin.shape[0]
    ends = np.empty(nf)
    for j in range(nf):
        ends[j] = min(prev_s + ttf[fin[j]], now_s)
    if _stops(fin, nf, cf, c_left, timer_s, now_s, eps_s):
        return now_s, n, 0, 0, True, fin, ends
    # a flow-only event: build the (class, path) groups and record a full fill
    (g_ptr, g_path, g_w, g_flows, f_ptr, f_grp, e_ptr, e_link, g_ent, o_ptr,
     o_grp) = _class_groups(n0, cf, pid, cls_of, ncls, path_links, nl)
    G = g_path.shape[0]
    st, bufs, e_cls, e_nxt = new_state(g_ptr, g_w, g_ent, e_ptr, e_link, o_ptr, o_grp, cap,
                                       tiny)  # the caller's rates, recomputed with records
    g_rate = st[9]
    chg = np.empty(max(G, 1), dtype=np.int64)
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
            kc = cls_of[cf[i]]
            drop_flow(f_grp[i], kc, g_w, g_ent, st[3], st[4], st[11], st[17], st[5], st[6],
                      st[7], st[14], st[15], st[16], st[19])
            f_grp[i] = -1
            k0 = min(k0, kc)
        nchg, bufs = update(k0, st, bufs, tiny, g_ptr, g_w, g_ent, e_ptr, o_ptr, o_grp,
                            e_cls, e_nxt, chg)
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
                    start[i] = now_s
            else:
                t = np.inf
            ttf[i] = t
            if t < first:
                first = t
        next_s = min(timer_s, now_s + first)
        if not np.isfinite(next_s) or next_s > stop_s:
            _compact(n0, m, at, tf, cf, pid, rem, start, rate, tol)
            return now_s, m, steps, k, False, fbuf[:0], ebuf[:0]
        dt_s = max(0.0, next_s - now_s)
        prev_s = now_s
        now_s = max(now_s, next_s)
        nf = 0
        for x in range(nmv):
            i = mv[x]
            f = ttf[i] <= dt_s + eps_s
            if dt_s > 0:
                rem[i] -= rate[i] * dt_s
            if f or rem[i] <= tol[i]:
                fbuf[nf] = i
                nf += 1
        fin = fbuf[:nf]
        ends = ebuf[:nf]
        for j in range(nf):
            ends[j] = min(prev_s + ttf[fin[j]], now_s)
        if _stops(fin, nf, cf, c_left, timer_s, now_s, eps_s):
            _compact(n0, m, at, tf, cf, pid, rem, start, rate, tol)
            pos = np.empty(nf, dtype=np.int64)
            for j in range(nf):
                pos[j] = row[fin[j]]
            o = np.argsort(pos)
            return now_s, m, steps, k, True, pos[o], ends[o]


@jit
def _stops(fin, nf, cf, c_left, timer_s, now_s, eps_s):
    """True if the event is more than flow completions: nothing finished, a timer is
    due, or a finished flow completes its coflow (``c_left`` = flows left per coflow,
    decremented for the finished flows unless it stops)."""
    if nf == 0 or timer_s <= now_s + eps_s:
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


@jit
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


def warm_up() -> None:
    """Compile (or load from numba's cache) this module's kernels on a tiny input."""
    path_links, ptr, owners, cap = tiny_network()
    pid = np.array([0, 1], dtype=np.int64)
    ones = np.ones(2)
    counts = np.ones(2, dtype=np.int64)
    lcounts = np.array([1, 1, 2], dtype=np.int64)
    rate = np.ones(2)
    ttf = np.empty(2)
    time_to_finish(ones.copy(), rate, ttf, np.full(2, np.nan), 0.0)
    min_coflow_finish(ttf, pid, 2)
    advance(ones.copy(), rate, ttf, ones, 0.1, 1e-9)
    retire_flows(pid[:1], 2, pid.copy(), pid.copy(), pid.copy(), ones.copy(), ones.copy(),
                 ones.copy(), ones.copy(), counts.copy(), lcounts.copy(), path_links)
    flow_events(0.0, np.inf, np.inf, 1e-9, 2, pid.copy(), pid.copy(), pid.copy(), ones.copy(),
                np.full(2, np.nan), rate.copy(), ones * 1e-6, counts.copy(),
                counts.copy(), lcounts.copy(), path_links, ptr, owners, cap,
                np.empty(2), pid.copy(), pid.copy(), ones.copy(), ones.copy())
    queue_events(0.0, np.inf, np.inf, 1e-9, 2, pid.copy(), pid.copy(), pid.copy(), ones.copy(),
                 np.full(2, np.nan), rate.copy(), ones * 1e-6, counts.copy(), pid, 2,
                 counts.copy(), lcounts.copy(), path_links, cap,
                 np.empty(2), pid.copy(), pid.copy(), ones.copy(), ones.copy())
