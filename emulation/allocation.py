"""Rate allocation of the fluid simulator: the policies' orders turned into flow rates.

Flows are given by path id ``pid`` into ``path_links`` (paths x P int: the link indices of
each path, padded with ``len(cap) - 1``, a dummy link of infinite capacity). ``cap`` holds
capacities in bytes/s with that dummy last. Every function returns rates in bytes/s that
respect every link's capacity. These are the per-flow entry points (tests, other callers);
the loops run compiled in ``emulation/allocation_kernels.py``, which the simulator
calls directly
with the flow counts ``ClusterState`` keeps per path and link.

- ``maxmin``: progressive filling. All unfrozen flows grow together; when a link fills,
  its flows freeze. Each round freezes every link at the current minimum fair share, so
  rounds = distinct bottleneck levels. Result: each flow crosses a saturated link on
  which no flow has a higher rate (the bottleneck characterisation of max-min fairness).
- ``priority``: strict priority across classes, max-min inside a class, each class on
  what the higher ones left (work-conserving).
- ``madd``: Varys's MADD in coflow order, then leftover capacity max-min over all flows.
"""
from __future__ import annotations

import numpy as np

from emulation import allocation_kernels

Index = tuple[np.ndarray, np.ndarray]


def link_index(links: np.ndarray, num_links_padded: int) -> Index:
    """(ptr, owners): the rows of ``links`` that cross link l are owners[ptr[l]:ptr[l+1]]."""
    P = links.shape[1]
    flat = links.ravel()
    order = np.argsort(flat, kind="stable")
    ptr = np.searchsorted(flat[order], np.arange(num_links_padded + 1))
    return ptr.astype(np.int64), (order // P).astype(np.int64)


def _prepared(path_links: np.ndarray, cap: np.ndarray, index: Index | None):
    path_links = np.ascontiguousarray(path_links, dtype=np.int64)
    cap = np.ascontiguousarray(cap, dtype=float)
    ptr, owners = index if index is not None else link_index(path_links, len(cap))
    return path_links, cap, ptr, owners


def _ranks(keys: np.ndarray) -> np.ndarray:
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    if len(keys) and keys.min() < 0:
        raise ValueError("classes and ranks must be >= 0")
    return keys


def maxmin(path_links: np.ndarray, cap: np.ndarray, weight: np.ndarray | None = None,
           index: Index | None = None) -> np.ndarray:
    """Max-min fair rate of one flow on each path; ``weight[p]`` = how many flows use path
    p, a non-negative integer (default 1; a path of weight 0 gets rate 0)."""
    path_links, cap, ptr, owners = _prepared(path_links, cap, index)
    if weight is None:
        w = np.ones(len(path_links), dtype=np.int64)
    else:
        w = np.asarray(weight)
        if w.shape != (len(path_links),) or (w < 0).any() or (w != np.round(w)).any():
            raise ValueError("weight must hold one non-negative integer per path")
        w = w.astype(np.int64)
    return allocation_kernels.maxmin_weighted(path_links, ptr, owners, cap, w)


def link_usage(links: np.ndarray, rate: np.ndarray, num_links_padded: int) -> np.ndarray:
    """Sum of ``rate`` over the flows on each link (dummy last); ``links`` = flows x P."""
    P = links.shape[1]
    return np.bincount(links.ravel(), weights=np.repeat(rate, P), minlength=num_links_padded)


def priority(pid: np.ndarray, path_links: np.ndarray, classes: np.ndarray, cap: np.ndarray,
             index: Index | None = None) -> np.ndarray:
    """Strict priority across ``classes`` (one per flow, 0 first), max-min within a class."""
    path_links, cap, ptr, owners = _prepared(path_links, cap, index)
    cls = _ranks(classes)
    pid = np.asarray(pid, dtype=np.int64)
    ncls = int(cls.max()) + 1 if len(cls) else 0
    path_flows = np.bincount(pid, minlength=len(path_links))
    link_flows = np.bincount(path_links[pid].ravel(), minlength=len(cap))
    return allocation_kernels.priority_rates(pid, np.arange(len(cls)), cls, ncls, path_flows,
                                             link_flows, path_links, ptr, owners, cap,
                                             np.zeros(len(path_links), dtype=np.int64),
                                             np.full(len(cap), -1, dtype=np.int64))


def madd(pid: np.ndarray, path_links: np.ndarray, remaining: np.ndarray,
         coflow_rank: np.ndarray, cap: np.ndarray, index: Index | None = None) -> np.ndarray:
    """MADD per coflow in rank order (all its flows finish together), then max-min backfill.

    ``coflow_rank`` per flow: the rank of its coflow (0 = first)."""
    path_links, cap, ptr, owners = _prepared(path_links, cap, index)
    rank = _ranks(coflow_rank)
    return allocation_kernels.madd_rates(np.asarray(pid, dtype=np.int64), np.arange(len(rank)),
                                         rank, np.asarray(remaining, dtype=float), path_links,
                                         ptr, owners, cap)
