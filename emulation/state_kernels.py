"""Compiled (numba) operations of the shared state (``emulation/state.py``) that the
fluid backend's compiled loops call too: ``retire_flows``, which removes finished rows
from ``ClusterState``'s active-flow columns. Conventions as in
``emulation/allocation_kernels.py``.
"""
from __future__ import annotations

import numpy as np

from emulation.kernels import jit, tiny_network


@jit
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


def warm_up() -> None:
    """Compile (or load from numba's cache) this module's kernel on a tiny input."""
    path_links = tiny_network()[0]
    pid = np.array([0, 1], dtype=np.int64)
    ones = np.ones(2)
    retire_flows(pid[:1], 2, pid.copy(), pid.copy(), pid.copy(), ones.copy(), ones.copy(),
                 ones.copy(), ones.copy(), np.ones(2, dtype=np.int64),
                 np.array([1, 1, 2], dtype=np.int64), path_links)
