"""A provable lower bound on the average stage completion time (SCT) of a trace.

Model (the fluid model of ``emulation.fluid``): directed links of capacity ``C_l``
(bytes/s); a stage s starts at ``r_s`` (its app's arrival, or 0 with release-at-zero)
once the stages it depends on completed; its jobs run BSP iterations of compute then
coflows; ``SCT_s = end_s - start_s``.

**Per-stage bound** ``B_s`` (valid for every stage under every policy):

- a job's iteration needs ``compute_s`` plus, for each of its coflows in order, at least
  ``max_l bytes_{k,l} / C_l`` (the coflow's most loaded link carries its bytes at no more
  than ``C_l``, even alone); iterations are sequential (BSP); the stage ends with its
  slowest job: ``SCT_s >= max_j iterations_j * (compute_j + sum_k max_l bytes_{j,k,l}/C_l)``;
- all bytes ``R_s[l]`` of the stage cross link l at rate <= ``C_l`` after the stage
  started: ``SCT_s >= max_l R_s[l] / C_l``.

**Ordering LP** (Queyranne's parallel inequalities, with release dates: Queyranne &
Schulz 1994) for the stages without dependencies, whose start ``r_s`` is fixed. Fix a
link l and let ``p_s = R_s[l] / C_l``, ``E_s`` the end of stage s. Link l is a single
machine of speed 1 in time units: whatever the sharing, for any set S of stages
``sum_{s in S} p_s E_s >= r(S) p(S) + (p(S)^2 + sum_{s in S} p_s^2) / 2`` with
``r(S) = min_{s in S} r_s`` (each stage's mean busy time on l is at most ``E_s - p_s/2``
and the total work ``p(S)`` cannot start before ``r(S)``). Traffic outside S only takes
capacity away, so the inequality holds in the full system. With ``E_s >= r_s + B_s`` the
LP ``min sum_s w_s (E_s - r_s)`` over these constraints is a relaxation of every feasible
schedule, so its optimum bounds ``sum_s w_s SCT_s`` from below; dependent stages add their
``B_s``. Constraints are added by separation: per link, stages sorted by the current
``E_s``, every prefix checked (a valid inequality each; the LP stays a relaxation even if
separation misses one). Solved with HiGHS through ``scipy.optimize.linprog``; any round's
optimum is already a valid bound, so stopping after ``max_rounds`` keeps validity.

The reported figure is the unweighted mean (all weights 1 in the generated traces).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from emulation.topology import Topology
from workloads.trace import Trace


@dataclass(frozen=True)
class LowerBound:
    """``avg_sct_s``: the bound on the mean SCT; ``per_stage_s``: each stage's ``B_s``."""

    avg_sct_s: float
    per_stage_s: np.ndarray
    lp_stages: int
    lp_rounds: int
    lp_cuts: int
    method: str


def stage_loads(trace: Trace, topo: Topology) -> tuple[np.ndarray, np.ndarray]:
    """(S x L bytes over all iterations per link, per-stage critical-path bound in s)."""
    stages = trace.stages()
    L = len(topo.links)
    cap = np.array([l.rate_bps for l in topo.links]) / 8.0
    R = np.zeros((len(stages), L))
    cp = np.zeros(len(stages))
    paths: dict[tuple[str, str], list[int]] = {}
    for si, s in enumerate(stages):
        for job in s.jobs:
            sync = 0.0
            for c in job.coflows:
                lb = np.zeros(L)
                for f in c.flows:
                    key = (f.src, f.dst)
                    if key not in paths:
                        paths[key] = topo.path_indices(f.src, f.dst)
                    lb[paths[key]] += f.size_bytes
                sync += float((lb / cap).max(initial=0.0))
                R[si] += job.iterations * lb
            cp[si] = max(cp[si], job.iterations * (job.compute_s + sync))
    return R, cp


def lower_bound(trace: Trace, topo: Topology, *, release_at_zero: bool = False,
                max_rounds: int = 40, use_lp: bool = True) -> LowerBound:
    """The bound described in the module docstring."""
    stages = trace.stages()
    cap = np.array([l.rate_bps for l in topo.links]) / 8.0
    R, cp = stage_loads(trace, topo)
    B = np.maximum(cp, (R / cap[None, :]).max(axis=1, initial=0.0))
    arrival = {a.app_id: (0.0 if release_at_zero else a.arrival_s) for a in trace.apps}
    free = np.array([not s.depends_on for s in stages])
    idx = np.flatnonzero(free)
    n = len(idx)
    if not use_lp or n < 2:
        return LowerBound(float(B.mean()), B, 0, 0, 0, "per-stage")
    r = np.array([arrival[stages[i].app_id] for i in idx])
    w = np.array([stages[i].weight for i in idx])
    P = (R[idx] / cap[None, :])  # n x L, time units
    links = np.flatnonzero((P > 0).sum(axis=0) >= 2)
    A_rows: list[np.ndarray] = []
    b_rows: list[float] = []
    bounds = [(r[k] + B[idx[k]], None) for k in range(n)]
    E = r + B[idx]
    rounds = 0
    objective = float((w * (E - r)).sum())
    for rounds in range(1, max_rounds + 1):
        added = 0
        for l in links:
            p = P[:, l]
            on = np.flatnonzero(p > 0)
            order = on[np.argsort(E[on], kind="stable")]
            pp = p[order]
            ps = np.cumsum(pp)
            lhs = np.cumsum(pp * E[order])
            rmin = np.minimum.accumulate(r[order])
            rhs = rmin * ps + 0.5 * (ps ** 2 + np.cumsum(pp ** 2))
            viol = rhs - lhs
            k = int(np.argmax(viol))
            if viol[k] > 1e-9 * max(1.0, rhs[k]):
                row = np.zeros(n)
                row[order[: k + 1]] = -pp[: k + 1]
                A_rows.append(row)
                b_rows.append(-float(rhs[k]))
                added += 1
        if not added:
            break
        res = linprog(w, A_ub=np.array(A_rows), b_ub=np.array(b_rows), bounds=bounds,
                      method="highs")
        if res.status != 0:
            break
        E = res.x
        objective = float(res.fun - (w * r).sum())
    total = objective + float(B[~free].sum())
    per_free_lb = float((w * B[idx]).sum())
    total = max(total, per_free_lb + float(B[~free].sum()))
    return LowerBound(total / len(stages), B, n, rounds, len(A_rows), "lp+per-stage")
