"""Compiled (numba) loop of Bottleneck-Select-Scale-Iterate (``bssi_back``), the ordering
that ``emulation/scheduler/bssi.py`` defines and calls.
"""
from __future__ import annotations

import numpy as np

from emulation.kernels import jit


@jit
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


def warm_up() -> None:
    """Compile (or load from numba's cache) ``bssi_back`` on a tiny input."""
    X = np.ones((2, 2))
    bssi_back(X, np.ones(2), X.sum(axis=0), 1e-9)
