"""Bottleneck-Select-Scale-Iterate (Sincronia, Agarwal et al., SIGCOMM'18, Algorithm 1).

Given loads ``X`` (N items x L links, bytes) and weights ``w``, BSSI builds the order from
the back: find the most loaded link ``b`` over the unordered items; put last the item with
the smallest ``w'_n / X[n, b]``; scale every other item's weight
``w'_m -= (w'_last / X[last, b]) * X[m, b]``; repeat. The result is a 4-approximation for
weighted completion time on a non-blocking fabric (Sincronia, Theorem 1). Here the load is
normalised by link capacity (time, not bytes), which is the same on uniform links and
right on heterogeneous ones.

Ties (ratios within a relative 1e-9 of each other) put the item with the larger index
last: callers pass items in arrival order, so later arrivals lose ties. Among links
loaded within 1e-9 of the maximum the first is the bottleneck. The tolerances keep the
order from depending on the last bits of the loads (their summation order). Items whose
load on the bottleneck is zero are never put last while a loaded one remains; items with
no load at all are picked last, so they come first in the returned order (they finish at
once), in index order. O(N (N + L)); the loop runs compiled (``emulation.scheduler.bssi_kernel.bssi_back``).
"""
from __future__ import annotations

import numpy as np

from emulation.scheduler.bssi_kernel import bssi_back

_TIE = 1e-9  # relative tolerance under which two loads or ratios count as equal


def bssi_order(loads: np.ndarray, weights: np.ndarray, capacity: np.ndarray | None = None
               ) -> np.ndarray:
    """Indices of ``loads``' rows, first to last, by BSSI."""
    X = np.asarray(loads, dtype=float)
    n = X.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if capacity is not None:
        X = X / np.asarray(capacity, dtype=float)[None, :]
    w = np.array(weights, dtype=float)  # a copy: the kernel consumes it
    link_load = X.sum(axis=0)
    back = bssi_back(np.ascontiguousarray(X), w, link_load, _TIE)
    return back[::-1].copy()
