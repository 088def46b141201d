"""Candidate orderings tried for ``beamer`` (registered into POLICIES on import; names
start with ``x-``), and the trace-derived inputs some of them take. docs/beamer.md has
what each is and its numbers."""
from __future__ import annotations
import numpy as np
from emulation.scheduler import POLICIES
from emulation.scheduler.base import Decision, Policy, View
from emulation.scheduler.bssi import bssi_order
from emulation.scheduler.sincronia import Sincronia


def _kept_order(view: View, order_ids: list[str]) -> Decision:
    """The previous order (by coflow id) for the same active coflows (Sincronia's online
    rule, shared by the ``online`` candidates)."""
    pos = {cid: i for i, cid in enumerate(view.coflow_ids)}
    return Decision(order=np.array([pos[c] for c in order_ids], dtype=np.int64))


def stage_est_s(view: View) -> np.ndarray:
    """Per active stage: max(longest remaining critical path of its jobs, max_l R_s[l]/C_l)."""
    S = len(view.stage_ids)
    cp = np.zeros(S)
    if len(view.job_stage):
        np.maximum.at(cp, view.job_stage, view.job_critical_path_s)
    bw = (view.stage_link_bytes * 8.0 / view.capacity_bps[None, :]).max(axis=1, initial=0.0)
    return np.maximum(cp, bw), cp, bw


class AppSRPT(Policy):
    """Stages ranked by (remaining estimate of the stage + downstream plan), one class each."""
    name = "x-app-srpt"

    def __init__(self, downstream: dict | None = None, mode: str = "max", jobs: bool = False):
        self.down = downstream or {}
        self.mode = mode
        self.jobs = jobs

    def decide(self, view: View) -> Decision:
        n = view.num_coflows
        if n == 0:
            return Decision(order=np.zeros(0, dtype=np.int64))
        est, cp, bw = stage_est_s(view)
        cur = {"max": est, "cp": cp, "bw": bw}[self.mode]
        down = np.array([self.down.get(s, 0.0) for s in view.stage_ids])
        key = cur + down
        sorder = np.lexsort((view.stage_start_s, key))
        srank = np.empty(len(sorder), dtype=np.int64)
        srank[sorder] = np.arange(len(sorder))
        cs = srank[view.coflow_stage]
        if self.jobs:
            jk = -view.job_critical_path_s[view.coflow_job]
            order = np.lexsort((view.coflow_seq, jk, cs))
            return Decision(order=order)
        order = np.lexsort((view.coflow_seq, cs))
        return Decision(order=order, classes=cs)


class StageBSSIDown(Policy):
    """BSSI over active stages on (remaining + downstream) loads; jobs by critical path."""
    name = "x-sbssi-down"

    def __init__(self, downloads: dict | None = None, how: str = "oracle", jobs: str = "cp",
                 cp_link: bool = False, classes: str = "rank"):
        self.dl = downloads or {}
        self.how = how
        self.jobs = jobs
        self.cp_link = cp_link
        self.cls = classes

    def loads(self, view):
        R = view.stage_link_bytes.astype(float).copy()
        L = R.shape[1]
        for i, sid in enumerate(view.stage_ids):
            if sid not in self.dl:
                continue
            vec, tot, cp = self.dl[sid]
            if self.how == "oracle":
                R[i] += vec
            elif self.how == "scale":
                cur = R[i].sum()
                if cur > 0:
                    R[i] *= 1.0 + 2.0 * tot / cur   # R sums uplink+downlink: 2 x bytes
            elif self.how == "uniform":
                up = R[i] > 0
                R[i] += 2.0 * tot / L
        return R

    def decide(self, view: View) -> Decision:
        n = view.num_coflows
        if n == 0:
            return Decision(order=np.zeros(0, dtype=np.int64))
        R = self.loads(view)
        cap = view.capacity_bps
        if self.cp_link:
            S = len(view.stage_ids)
            cpv = np.zeros(S)
            if len(view.job_stage):
                np.maximum.at(cpv, view.job_stage, view.job_critical_path_s)
            down_cp = np.array([self.dl.get(s, (None, 0, 0.0))[2] for s in view.stage_ids])
            R = np.concatenate([R * 8.0 / cap[None, :], np.diag(cpv + down_cp)], axis=1)
            sorder = bssi_order(R, view.stage_weight)
        else:
            sorder = bssi_order(R, view.stage_weight, cap)
        srank = np.empty(len(sorder), dtype=np.int64)
        srank[sorder] = np.arange(len(sorder))
        cs = srank[view.coflow_stage]
        if self.jobs == "cp":
            jk = -view.job_critical_path_s[view.coflow_job]
        else:
            jk = np.zeros(n)
        order = np.lexsort((view.coflow_seq, jk, cs))
        if self.cls == "stage":
            return Decision(order=order, classes=cs)
        return Decision(order=order)


class CritBSSI(Policy):
    """Coflow-level BSSI; weight = criticality in stage x (stage share of app remaining)^alpha."""
    name = "x-crit"

    def __init__(self, downstream: dict | None = None, alpha: float = 0.0, slack_w: float = 0.1,
                 beta: float = 0.0, tol: float = 0.02, online: bool = False):
        self.down = downstream or {}
        self.alpha, self.slack_w, self.beta, self.tol = alpha, slack_w, beta, tol
        self.online = online  # reorder only when the active coflow set changes (Sincronia's rule)
        self._ids = None
        self._order_ids: list[str] = []

    def decide(self, view: View) -> Decision:
        n = view.num_coflows
        if n == 0:
            return Decision(order=np.zeros(0, dtype=np.int64))
        if self.online and view.coflow_ids == self._ids:
            return _kept_order(view, self._order_ids)
        S = len(view.stage_ids)
        cp = view.job_critical_path_s
        smax = np.zeros(S)
        if len(cp):
            np.maximum.at(smax, view.job_stage, cp)
        jc = cp[view.coflow_job]
        sm = smax[view.coflow_stage]
        if self.beta > 0:
            crit = np.where(sm > 0, (jc / np.where(sm > 0, sm, 1.0)) ** self.beta, 1.0)
        else:
            crit = np.where(jc >= sm * (1 - self.tol), 1.0, self.slack_w)
        w = crit
        if self.alpha:
            down = np.array([self.down.get(s, 0.0) for s in view.stage_ids])
            share = np.where(smax + down > 0, smax / np.maximum(smax + down, 1e-12), 1.0)
            w = w * share[view.coflow_stage] ** self.alpha
        seq = np.argsort(view.coflow_seq, kind="stable")
        order = seq[bssi_order(view.coflow_link_bytes[seq], w[seq], view.capacity_bps)]
        self._ids = view.coflow_ids
        self._order_ids = [view.coflow_ids[i] for i in order]
        return Decision(order=order)


def _criticality(view: View, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Per active job: critical (remaining critical path within ``tol`` of its stage's
    longest) and that stage's longest remaining critical path."""
    cp = view.job_critical_path_s
    smax = np.zeros(len(view.stage_ids))
    if len(cp):
        np.maximum.at(smax, view.job_stage, cp)
    return cp >= smax[view.job_stage] * (1.0 - tol), smax


class CritStage(Policy):
    """Stage BSSI on the loads of each stage's critical jobs (``loads="crit"``) or of all
    its jobs (``"all"``); coflows of critical jobs first (``tiers``), each tier by stage
    rank, then job critical path, then release."""
    name = "x-crit-stage"

    def __init__(self, tol: float = 0.02, loads: str = "crit", tiers: bool = True,
                 online: bool = False):
        self.tol, self.loads, self.tiers, self.online = tol, loads, tiers, online
        self._ids = None
        self._order_ids: list[str] = []

    def decide(self, view: View) -> Decision:
        n = view.num_coflows
        if n == 0:
            return Decision(order=np.zeros(0, dtype=np.int64))
        if self.online and view.coflow_ids == self._ids:
            return _kept_order(view, self._order_ids)
        crit, _ = _criticality(view, self.tol)
        S = len(view.stage_ids)
        if self.loads == "crit":
            R = np.zeros((S, len(view.capacity_bps)))
            jl = view.job_link_bytes
            np.add.at(R, view.job_stage[crit], jl[crit])
        else:
            R = view.stage_link_bytes
        sorder = bssi_order(R, view.stage_weight, view.capacity_bps)
        srank = np.empty(S, dtype=np.int64)
        srank[sorder] = np.arange(S)
        tier = (~crit[view.coflow_job]).astype(np.int64) if self.tiers else np.zeros(n, np.int64)
        order = np.lexsort((view.coflow_seq, -view.job_critical_path_s[view.coflow_job],
                            srank[view.coflow_stage], tier))
        self._ids = view.coflow_ids
        self._order_ids = [view.coflow_ids[i] for i in order]
        return Decision(order=order)


class JobBSSI(Policy):
    """BSSI over active jobs (remaining loads), weight = stage weight / (critical jobs of the
    stage) if critical (``share``) or 1, x ``slack_w`` if not; coflows by job rank."""
    name = "x-job-bssi"

    def __init__(self, tol: float = 0.02, slack_w: float = 0.1, share: bool = True):
        self.tol, self.slack_w, self.share = tol, slack_w, share

    def decide(self, view: View) -> Decision:
        n = view.num_coflows
        if n == 0:
            return Decision(order=np.zeros(0, dtype=np.int64))
        crit, _ = _criticality(view, self.tol)
        w = view.stage_weight[view.job_stage] * np.where(crit, 1.0, self.slack_w)
        if self.share:
            ncrit = np.bincount(view.job_stage[crit], minlength=len(view.stage_ids))
            w = w / np.maximum(ncrit[view.job_stage], 1)
        jorder = bssi_order(view.job_link_bytes, w, view.capacity_bps)
        jrank = np.empty(len(jorder), dtype=np.int64)
        jrank[jorder] = np.arange(len(jorder))
        order = np.lexsort((view.coflow_seq, jrank[view.coflow_job]))
        return Decision(order=order)


class WsptCoflow(Sincronia):
    """Online coflow BSSI, weight = beamer's x 1 / (remaining iterations of the job)^gamma:
    a coflow stands for its share of its job's remaining work."""
    name = "x-wspt"

    def __init__(self, tol: float = 0.02, slack_w: float = 0.1, gamma: float = 1.0):
        super().__init__()
        self.tol, self.slack_w, self.gamma = tol, slack_w, gamma

    def weights(self, view: View) -> np.ndarray:
        crit, _ = _criticality(view, self.tol)
        w = view.stage_weight[view.job_stage] * np.where(crit, 1.0, self.slack_w)
        w = w / np.maximum(view.job_remaining_iterations, 1) ** self.gamma
        return w[view.coflow_job]


class Hybrid(Policy):
    """``beamer``'s coflow order; the positions it gives to coflows of *free* stages (no
    successor certain in the tuner's plan: random search, ASHA segments, final rungs) are
    refilled with those coflows in stage-BSSI order (``free="sbssi"``) or x-wspt order
    (``"wspt"``). ``mode="first"``: free coflows ahead of all chained ones instead."""
    name = "x-hybrid"

    def __init__(self, chained: frozenset | set | None = None, free: str = "sbssi",
                 mode: str = "refill", slack_weight: float = 0.1, tol: float = 0.02,
                 online: bool = False, single: frozenset | None = None):
        from emulation.scheduler.beamer import BeamerCoflow as Beamer
        self.single = single
        self.chained = frozenset(chained or ())
        self.free, self.mode = free, mode
        self.beamer = Beamer(slack_weight=slack_weight, critical_tolerance=tol)
        self.tol, self.slack_w = tol, slack_weight
        self.online = online
        self._ids = None
        self._order_ids: list[str] = []

    def decide(self, view: View) -> Decision:
        n = view.num_coflows
        if n == 0:
            return Decision(order=np.zeros(0, dtype=np.int64))
        if self.online and view.coflow_ids == self._ids:
            return _kept_order(view, self._order_ids)
        order = self._decide(view)
        self._ids = view.coflow_ids
        self._order_ids = [view.coflow_ids[i] for i in order]
        return Decision(order=order)

    def _decide(self, view: View) -> np.ndarray:
        base = self.beamer.decide(view).order
        st_free = np.array([sid not in self.chained for sid in view.stage_ids], dtype=bool)
        c_free = st_free[view.coflow_stage]
        if not c_free.any():
            return base
        fidx = np.flatnonzero(c_free)
        if self.free == "split":
            # multi-job free stages: stage BSSI; single-job ones: x-wspt coflow order
            if self.single is not None:  # by the plan: stages of one job
                one = np.array([sid in self.single for sid in view.stage_ids], dtype=bool)
            else:
                one = np.bincount(view.job_stage, minlength=len(view.stage_ids)) <= 1
            multi = st_free & ~one
            single = st_free & one
            order = base.copy()
            for sel, how in ((multi, "sbssi"), (single, "wspt")):
                cm = sel[view.coflow_stage]
                if not cm.any():
                    continue
                sub = Hybrid(chained=None, free=how, tol=self.tol, slack_weight=self.slack_w)
                sub_order = sub._free_sorted(view, sel)
                order[cm[base]] = sub_order
            return order
        free_sorted = self._free_sorted(view, st_free)
        if self.mode == "first":
            rest = base[~c_free[base]]
            return np.concatenate([free_sorted, rest])
        order = base.copy()
        order[c_free[base]] = free_sorted
        return order

    def _free_sorted(self, view: View, st_free: np.ndarray) -> np.ndarray:
        c_free = st_free[view.coflow_stage]
        fidx = np.flatnonzero(c_free)
        if self.free in ("sbssi", "sbssi-active", "sbssi-cur"):
            S = len(view.stage_ids)
            if self.free == "sbssi-active":  # only stages with a coflow in flight
                has = np.zeros(S, dtype=bool)
                has[view.coflow_stage] = True
                st_free = st_free & has
            sel = np.flatnonzero(st_free)
            R = view.stage_link_bytes
            if self.free == "sbssi-cur":  # current coflows' bytes x remaining iterations
                R = np.zeros_like(R)
                n = np.maximum(view.job_remaining_iterations[view.coflow_job], 1)
                np.add.at(R, view.coflow_stage, view.coflow_link_bytes * n[:, None])
            so = sel[bssi_order(R[sel], view.stage_weight[sel], view.capacity_bps)]
            srank = np.full(S, S, dtype=np.int64)
            srank[so] = np.arange(len(so))
            key = np.lexsort((view.coflow_seq[fidx], -view.job_critical_path_s[view.coflow_job[fidx]],
                              srank[view.coflow_stage[fidx]]))
        else:
            crit, _ = _criticality(view, self.tol)
            w = view.stage_weight[view.job_stage] * np.where(crit, 1.0, self.slack_w)
            if self.free == "wspt-stage":
                rem = np.zeros(len(view.stage_ids))
                np.add.at(rem, view.job_stage[crit], view.job_remaining_iterations[crit])
                w = (w / np.maximum(rem[view.job_stage], 1))[view.coflow_job[fidx]]
            else:
                w = (w / np.maximum(view.job_remaining_iterations, 1))[view.coflow_job[fidx]]
            seq = np.argsort(view.coflow_seq[fidx], kind="stable")
            key = seq[bssi_order(view.coflow_link_bytes[fidx][seq], w[seq], view.capacity_bps)]
        return fidx[key]


CANDIDATES: dict[str, type[Policy]] = {**POLICIES, **{c.name: c for c in (AppSRPT, StageBSSIDown,
                                                                         CritBSSI, CritStage, JobBSSI,
                                                                         WsptCoflow, Hybrid)}}


def make(name: str, **params) -> Policy:
    """A registered policy or a candidate, by name."""
    return CANDIDATES[name](**params)


# ---- trace-derived inputs (the lab passes them as policy parameters) ----
from emulation.scheduler.lower_bound import stage_loads


def downstream_time(trace, topo, kind="oracle"):
    """stage_id -> summed isolated-time estimate of every stage downstream of it
    (oracle: per-stage bound incl. placement; cp: critical path only; bytes: plan bytes)."""
    stages = trace.stages()
    R, cp = stage_loads(trace, topo)
    cap = np.array([l.rate_bps for l in topo.links]) / 8.0
    if kind == "oracle":
        B = np.maximum(cp, (R / cap[None, :]).max(axis=1))
    elif kind == "cp":
        B = cp
    elif kind == "bytes":  # plan-level: critical path vs total bytes over all host uplinks
        nh = len(trace.hosts)
        tot = R.sum(axis=1) / 2.0  # big switch: each byte crosses uplink+downlink
        B = np.maximum(cp, tot / (nh * cap.max()))
    idx = {s.stage_id: i for i, s in enumerate(stages)}
    return {sid: float(sum(B[idx[c]] for c in seen)) for sid, seen in descendants(stages).items()}


def descendants(stages) -> dict[str, set[str]]:
    """stage_id -> every stage that depends on it, directly or not."""
    children = {s.stage_id: [] for s in stages}
    for s in stages:
        for d in s.depends_on:
            children[d].append(s.stage_id)
    out = {}
    for s in stages:
        seen, stack = set(), list(children[s.stage_id])
        while stack:
            c = stack.pop()
            if c not in seen:
                seen.add(c)
                stack.extend(children[c])
        out[s.stage_id] = seen
    return out


def downstream_loads(trace, topo):
    """stage_id -> (per-link bytes, total bytes, summed critical path) of all its
    descendants (their real placement: an oracle)."""
    stages = trace.stages()
    R, cp = stage_loads(trace, topo)
    idx = {s.stage_id: i for i, s in enumerate(stages)}
    tot = np.array([sum(sum(c.size_bytes for c in j.coflows) * j.iterations for j in s.jobs) for s in stages], float)
    out = {}
    for sid, seen in descendants(stages).items():
        ii = [idx[c] for c in seen]
        out[sid] = (R[ii].sum(axis=0), float(tot[ii].sum()), float(cp[ii].sum()))
    return out


def chained_stages(trace, asha: bool = False) -> frozenset:
    """Stages whose completion certainly releases a successor in the tuner's plan: SHA and
    Hyperband rungs with a dependent (ASHA promotions depend on results: not counted,
    unless ``asha``: then every ASHA segment counts as chained)."""
    out = set()
    for app in trace.apps:
        if app.algorithm == "asha":
            if asha:
                out.update(s.stage_id for s in app.stages)
            continue
        for st in app.stages:
            out.update(st.depends_on)
    return frozenset(out)


def stage_loads_estimate(view: View, how: str, sizes: np.ndarray | None = None) -> np.ndarray:
    """(stages x links) a free stage's remaining work for ``beamer``'s stage ranking:
    ``inflight`` (each in-flight coflow's remaining bytes x its job's remaining iterations,
    summed over the stage), ``scaled`` (the same x unfinished jobs / jobs in flight of the
    stage: the jobs in their compute phase counted as the communicating ones are),
    ``max`` (per link the largest in-flight term of the stage), ``max-scaled`` (per link the largest in-flight term x unfinished jobs), ``full``
    (``stage_link_bytes``); with ``sizes`` (coflows x links: each active coflow's bytes per
    link when released), ``whole`` (each in-flight coflow counted whole: its size x its
    job's remaining iterations, so the estimate does not fall while a coflow's bytes are
    sent) and ``rest`` (its remaining bytes + its size x the job's iterations after this
    one: the bytes the in-flight jobs have left if every iteration repeats the coflow)."""
    from emulation.scheduler.beamer import in_flight_stage_loads
    from emulation.view_kernels import grouped_weighted_rows
    if how == "full":
        return view.stage_link_bytes
    S = len(view.stage_ids)
    if how == "inflight":
        return in_flight_stage_loads(view)
    if how in ("whole", "rest"):
        n = np.maximum(view.job_remaining_iterations[view.coflow_job], 1).astype(float)
        if how == "whole":
            return grouped_weighted_rows(view.coflow_stage, sizes, n, S)
        rows = np.ascontiguousarray(view.coflow_link_bytes + sizes * (n - 1.0)[:, None])
        return grouped_weighted_rows(view.coflow_stage, rows, np.ones(len(n)), S)
    unfinished = np.bincount(view.job_stage, minlength=S).astype(float)
    jobs_in_flight = np.zeros(len(view.job_ids), dtype=bool)
    jobs_in_flight[view.coflow_job] = True
    flying = np.bincount(view.job_stage[jobs_in_flight], minlength=S).astype(float)
    factor = unfinished / np.maximum(flying, 1.0)
    if how == "scaled":
        return in_flight_stage_loads(view) * factor[:, None]
    if how == "max":
        n = np.maximum(view.job_remaining_iterations[view.coflow_job], 1).astype(float)
        out = np.zeros((S, len(view.capacity_bps)))
        np.maximum.at(out, view.coflow_stage, view.coflow_link_bytes * n[:, None])
        return out
    if how == "max-scaled":
        n = np.maximum(view.job_remaining_iterations[view.coflow_job], 1).astype(float)
        out = np.zeros((S, len(view.capacity_bps)))
        np.maximum.at(out, view.coflow_stage, view.coflow_link_bytes * n[:, None])
        return out * unfinished[:, None]
    raise ValueError(how)


class BeamerEstimate(Policy):
    """``beamer`` with another estimate of a free stage's remaining work
    (``stage_loads_estimate``)."""
    name = "x-beamer-est"
    same_decision_at_flow_completions = True

    def __init__(self, est: str = "inflight"):
        from emulation.scheduler.beamer import Beamer
        self.est = est
        self._inner = Beamer()
        self._sizes: dict[str, np.ndarray] = {}  # coflow id -> its bytes per link when first seen

    def _coflow_sizes(self, view: View) -> np.ndarray:
        """Each active coflow's bytes per link as the first view that showed it had them
        (a coflow is shown at its release, before any of its bytes are sent)."""
        clb = view.coflow_link_bytes
        sizes = {c: self._sizes.get(c) for c in view.coflow_ids}
        self._sizes = {c: (clb[i].copy() if sizes[c] is None else sizes[c])
                       for i, c in enumerate(view.coflow_ids)}
        return np.ascontiguousarray(np.array([self._sizes[c] for c in view.coflow_ids])
                                    .reshape(view.num_coflows, clb.shape[1]))

    def decide(self, view: View) -> Decision:
        from emulation.scheduler import beamer as bm
        inner = self._inner
        if view.num_coflows == 0:
            self._sizes = {}
            return Decision(order=np.zeros(0, dtype=np.int64))
        sizes = self._coflow_sizes(view) if self.est in ("whole", "rest") else None
        if view.coflow_ids == inner._ids:
            return _kept_order(view, inner._order_ids)
        order = inner._coflow.decide(view).order.copy()
        free = ~view.stage_followed
        positions = free[view.coflow_stage][order]
        if positions.any():
            order[positions] = bm.stage_ranked(view, free,
                                               stage_loads_estimate(view, self.est, sizes))
        inner._ids = view.coflow_ids
        inner._order_ids = [view.coflow_ids[i] for i in order]
        return Decision(order=order)


CANDIDATES[BeamerEstimate.name] = BeamerEstimate


class BeamerSticky(Policy):
    """``beamer`` whose free-stage ranking favours the free stage it ranked first at its
    previous decision: that stage's weight x (1 + ``keep``) in the BSSI over the free
    stages, so a challenger must have ``keep`` less normalised remaining work to go ahead
    (a stage whose in-flight estimate jumps for a moment keeps its place)."""
    name = "x-beamer-sticky"
    same_decision_at_flow_completions = True

    def __init__(self, keep: float = 0.25):
        from emulation.scheduler.beamer import Beamer
        self.keep = keep
        self._inner = Beamer()
        self._first: str | None = None  # stage id ranked first among free stages last time

    def decide(self, view: View) -> Decision:
        from emulation.scheduler.beamer import in_flight_stage_loads
        inner = self._inner
        if view.num_coflows == 0:
            return Decision(order=np.zeros(0, dtype=np.int64))
        if view.coflow_ids == inner._ids:
            return _kept_order(view, inner._order_ids)
        order = inner._coflow.decide(view).order.copy()
        free = ~view.stage_followed
        positions = free[view.coflow_stage][order]
        if positions.any():
            loads = in_flight_stage_loads(view)
            sel = np.flatnonzero(free)
            w = view.stage_weight[sel].astype(float).copy()
            ids = [view.stage_ids[s] for s in sel]
            if self._first in ids:
                w[ids.index(self._first)] *= 1.0 + self.keep
            so = sel[bssi_order(np.ascontiguousarray(loads[sel]), w, view.capacity_bps)]
            rank = np.full(len(view.stage_ids), len(view.stage_ids), dtype=np.int64)
            rank[so] = np.arange(len(so))
            cidx = np.flatnonzero(free[view.coflow_stage])
            job_key = -view.job_critical_path_s[view.coflow_job[cidx]]
            order[positions] = cidx[np.lexsort((view.coflow_seq[cidx], job_key,
                                                rank[view.coflow_stage[cidx]]))]
            # the first free stage that has coflows in flight
            active = [s for s in so if free[s] and np.any(view.coflow_stage == s)]
            self._first = view.stage_ids[active[0]] if active else None
        inner._ids = view.coflow_ids
        inner._order_ids = [view.coflow_ids[i] for i in order]
        return Decision(order=order)


CANDIDATES[BeamerSticky.name] = BeamerSticky
