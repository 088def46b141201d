"""Compiled (numba) loads of the policies' ``View`` (``emulation/view.py``): the bytes each
active coflow still has on each link (``coflow_link_bytes``), the bytes every remaining
iteration of each active job puts on each link, summed per stage or per job
(``stage_link_bytes``), weighted rows summed per group (``grouped_weighted_rows``: the
stage-aware ``beamer``'s in-flight stage loads), and a row-wise maximum of scaled loads
over link capacities that Varys reads from the view (``max_scaled_rows``). Loads are in bytes, capacities in
the caller's unit; each kernel does the operations of its numpy formulation
(``tests/emulation/test_view_loads.py``, ``tests/fluid/test_allocation.py``).
"""
from __future__ import annotations

import numpy as np

from emulation.kernels import jit, tiny_network


@jit
def coflow_link_bytes(c_local, cf, pid, rem, path_links, num_rows, nl):
    """(num_rows x nl) bytes each coflow (row ``c_local[cf[i]]``) still has on each link."""
    out = np.zeros((num_rows, nl))
    P = path_links.shape[1]
    for i in range(cf.shape[0]):
        r = c_local[cf[i]]
        for k in range(P):
            out[r, path_links[pid[i], k]] += rem[i]
    return out


@jit
def stage_link_bytes(jobs, s_row, full, inflight_t, cur_row, j_ptr, j_idx, j_val, t_ptr,
                     t_idx, t_val, clb, num_stages, nl):
    """(stages x nl) bytes every remaining iteration of each active job still puts on each
    link, summed per stage (row ``s_row[k]`` for job ``jobs[k]``): ``full[k]`` whole
    iterations of the job's per-iteration loads (CSR ``j_ptr/j_idx/j_val``), plus for a
    job in flight (``inflight_t[k]`` = its template, else -1) the templates after it (CSR
    ``t_*``) and its coflow's remaining bytes (row ``cur_row[k]`` of ``clb``, -1 if none).
    Per (job, link) the same sum in the same order as the dense numpy formulation
    (``tests/emulation/test_view_loads.py``), and stage rows accumulate jobs in order; entries that are zero there are
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


@jit
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


@jit
def grouped_weighted_rows(group, X, w, num_groups):
    """(num_groups x X.shape[1]): row i of ``X`` times ``w[i]`` added to row ``group[i]``,
    rows in ascending i: the operations of ``np.add.at(out, group, X * w[:, None])`` on
    ``out`` = zeros (the same products, added in the same order)."""
    out = np.zeros((num_groups, X.shape[1]))
    for i in range(X.shape[0]):
        g = group[i]
        wi = w[i]
        for l in range(X.shape[1]):
            out[g, l] += X[i, l] * wi
    return out


def warm_up() -> None:
    """Compile (or load from numba's cache) this module's kernels on a tiny input, with
    the read-only arrays the policies' views pass too (a distinct specialisation each,
    compiled at its first call otherwise: inside a timed run)."""
    path_links, ptr, _, _ = tiny_network()
    pid = np.array([0, 1], dtype=np.int64)
    ones = np.ones(2)
    X = np.ones((2, 2))
    coflow_link_bytes(pid, pid, pid, ones, path_links, 2, 3)
    max_scaled_rows(X, 8.0, np.ones(2))
    max_scaled_rows(X[:, :1], 8.0, np.ones(1))
    stage_link_bytes(pid, pid, pid, pid, pid, ptr[:3], pid, ones, ptr[:3], pid, ones, X, 2, 2)
    ro_pid, ro_one, ro_x = _read_only(pid), _read_only(np.ones(2)), _read_only(X)
    coflow_link_bytes(ro_pid, pid, pid, ones, path_links, 2, 3)
    stage_link_bytes(ro_pid, pid, pid, pid, pid, ptr[:3], pid, ones, ptr[:3], pid, ones, X,
                     2, 2)
    max_scaled_rows(ro_x, 8.0, ro_one)
    max_scaled_rows(ro_x[:, :1], 8.0, ro_one[:1])
    grouped_weighted_rows(pid, X, ones, 2)
    grouped_weighted_rows(ro_pid, ro_x, ones, 2)
    grouped_weighted_rows(ro_pid, ro_x[:, :1], ones, 2)  # the view's loads: a column slice


def _read_only(a: np.ndarray) -> np.ndarray:
    """A read-only copy of ``a``."""
    a = a.copy()
    a.flags.writeable = False
    return a
