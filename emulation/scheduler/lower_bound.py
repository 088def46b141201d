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

**Chain LP.** In SHA and Hyperband every app's stages form one chain: each stage depends
only on the one before and starts when it ends (its app has arrived by then), so the app's
SCTs add up to ``E_a - r_a``, its last stage's end minus its arrival. Such an app is one
item: ``p_a = sum_s R_s[l] / C_l`` on link l, ``E_a >= r_a + sum_s B_s`` (the chain runs
its stages one after the other), and Queyranne's inequalities hold for the apps' work on
each link exactly as for stages. Apps that are not chains contribute their free stages
as items and their dependent stages' ``B_s``. The stage LP sees each dependent stage
alone, so it is loose on chains (it does not see that a delayed rung pushes the rest of
its tuning job back); the chain LP is not always larger, so the bound is the larger.

The reported figure is the unweighted mean of the SCTs (the LPs use unit weights).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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


def _chain_apps(trace: Trace) -> list[bool]:
    """Per app: True if its stages form one chain (each depends only on the one before)."""
    out = []
    for a in trace.apps:
        ok = bool(a.stages) and not a.stages[0].depends_on
        for prev, cur in zip(a.stages, a.stages[1:]):
            ok = ok and tuple(cur.depends_on) == (prev.stage_id,)
        out.append(ok)
    return out


def _queyranne_lp(P: np.ndarray, r: np.ndarray, lower: np.ndarray, w: np.ndarray,
                  max_rounds: int) -> tuple[float, int, int]:
    """min sum_k w_k (E_k - r_k) s.t. E_k >= lower_k and, per link, Queyranne's parallel
    inequalities with release dates (separated by sorting). Returns (objective, rounds,
    cuts); every round's optimum is a valid bound."""
    from scipy.optimize import linprog  # here: importing it costs 0.4 s, a cached bound none
    n = len(r)
    links = np.flatnonzero((P > 0).sum(axis=0) >= 2)
    A_rows: list[np.ndarray] = []
    b_rows: list[float] = []
    bounds = [(float(lower[k]), None) for k in range(n)]
    E = lower.astype(float).copy()
    objective = float((w * (E - r)).sum())
    rounds = 0
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
    return max(objective, float((w * (lower - r)).sum())), rounds, len(A_rows)


def lower_bound(trace: Trace, topo: Topology, *, release_at_zero: bool = False,
                max_rounds: int = 40, use_lp: bool = True) -> LowerBound:
    """The bound described in the module docstring (the larger of the stage LP and the
    chain LP, both valid)."""
    stages = trace.stages()
    cap = np.array([l.rate_bps for l in topo.links]) / 8.0
    R, cp = stage_loads(trace, topo)
    B = np.maximum(cp, (R / cap[None, :]).max(axis=1, initial=0.0))
    arrival = {a.app_id: (0.0 if release_at_zero else a.arrival_s) for a in trace.apps}
    free = np.array([not s.depends_on for s in stages])
    idx = np.flatnonzero(free)
    n = len(idx)
    if not use_lp or len(stages) < 2:
        return LowerBound(float(B.mean()), B, 0, 0, 0, "per-stage")
    P_all = R / cap[None, :]  # S x L, time units
    # stage LP: every dependency-free stage is an item; dependent stages add their B_s
    r = np.array([arrival[stages[i].app_id] for i in idx])
    w = np.ones(n)  # the reported figure is the unweighted mean
    stage_obj, rounds, cuts = (_queyranne_lp(P_all[idx], r, r + B[idx], w, max_rounds)
                               if n >= 2 else (float((w * B[idx]).sum()), 0, 0))
    best = stage_obj + float(B[~free].sum())
    method = "lp+per-stage"
    # chain LP: an app whose stages form one chain is one item (its SCTs add up to its
    # completion minus its arrival); the other apps' free stages are items as above
    chain = _chain_apps(trace)
    if any(c and len(a.stages) > 1 for c, a in zip(chain, trace.apps)):
        pos = {s.stage_id: i for i, s in enumerate(stages)}
        rows, rel, low, rest = [], [], [], 0.0
        for a, is_chain in zip(trace.apps, chain):
            ii = [pos[s.stage_id] for s in a.stages]
            ra = arrival[a.app_id]
            if is_chain:
                rows.append(P_all[ii].sum(axis=0))
                rel.append(ra)
                low.append(ra + float(B[ii].sum()))
            else:
                for i in ii:
                    if free[i]:
                        rows.append(P_all[i])
                        rel.append(ra)
                        low.append(ra + float(B[i]))
                    else:
                        rest += float(B[i])
        rel_a, low_a = np.array(rel), np.array(low)
        chain_obj, c_rounds, c_cuts = _queyranne_lp(np.array(rows), rel_a, low_a,
                                                    np.ones(len(rel_a)), max_rounds)
        if chain_obj + rest > best:
            best, rounds, cuts, method = chain_obj + rest, c_rounds, c_cuts, "chain-lp+per-stage"
    # the unweighted mean is reported; with unit weights the stage LP above is exact about it
    return LowerBound(best / len(stages), B, n, rounds, cuts, method)
