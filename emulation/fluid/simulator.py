"""Event-driven flow-level (fluid) simulator of a trace on a topology under one policy.

The engine owns the clock and an event heap ``(time, counter, kind, payload)``; the counter
makes ties deterministic (SimPy's ``core.py``). Between events every active flow moves at
a constant rate; at each event (stage start, compute end -> coflow release, flow and
coflow completion, a policy's byte-threshold wake-up) the policy sees a fresh ``View``,
returns an order, and the allocation kernels (``allocation.py``) set new rates. Flows that
finish within ``1e-9`` s of each other are completed together.

BSP model: a job's iteration is ``compute_s`` then its coflows one after the other; a
stage starts at its app's arrival once its ``depends_on`` stages completed and ends when
its last job finished its last iteration. All state lives on the simulator instance.

``realloc`` says when rates are recomputed. ``"flow"`` (default, exact max-min / work
conservation at every instant): at every event, flow completions included. ``"coflow"``:
only when a coflow is released or completes and at stage and policy events, as Varys
does and as coflowsim simulates it; a flow that finishes before the rest of its coflow
leaves its share idle until the next such event. Flows still end at their exact times.
"""
from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from emulation.fluid import allocation
from emulation.scheduler.base import (DEFAULT_PRIORITY_CLASSES, Policy, View, check_order,
                                      classes_from_order, compress_classes)
from emulation.topology import Topology
from workloads.trace import Trace

STAGE_START, COMPUTE_END, JOB_DONE = 0, 1, 2
REALLOC_MODES = ("flow", "coflow")
_EPS_T = 1e-9


@dataclass
class FluidResult:
    """Plain arrays/lists of what happened; ``emulation.records`` writes them as CSV."""

    stages: list[dict[str, Any]]
    coflows: list[dict[str, Any]]
    flows: dict[str, np.ndarray | list]
    events: list[tuple[float, str, str]]
    facts: dict[str, Any] = field(default_factory=dict)


class FluidSimulator:
    """Simulate ``trace`` on ``topology`` under ``policy``; call ``run()`` once."""

    def __init__(self, trace: Trace, topology: Topology, policy: Policy, *,
                 priority_classes: int = DEFAULT_PRIORITY_CLASSES,
                 release_at_zero: bool = False, realloc: str = "flow",
                 record_events: bool = False, check_invariants: bool = False):
        if realloc not in REALLOC_MODES:
            raise ValueError(f"realloc must be one of {REALLOC_MODES}, got {realloc!r}")
        self.realloc = realloc
        self.trace, self.topo, self.policy = trace, topology, policy
        self.K = priority_classes
        self.release_at_zero = release_at_zero
        self.record_events = record_events
        self.check_invariants = check_invariants
        self._build()

    # ------------------------------------------------------------------ set-up
    def _build(self) -> None:
        topo = self.topo
        L = len(topo.links)
        self.L = L
        self.cap_bps = np.array([l.rate_bps for l in topo.links], dtype=float)
        self.cap = np.concatenate([self.cap_bps / 8.0, [np.inf]])  # bytes/s, dummy last
        path_cache: dict[tuple[str, str], int] = {}
        paths: list[list[int]] = []
        tf_pid: list[int] = []
        stages = self.trace.stages()
        self.stage_ids = [s.stage_id for s in stages]
        sidx = {sid: i for i, sid in enumerate(self.stage_ids)}
        arrival = {a.app_id: a.arrival_s for a in self.trace.apps}
        self.stage_app = [s.app_id for s in stages]
        self.stage_weight = np.array([s.weight for s in stages], dtype=float)
        self.stage_arrival = np.array(
            [0.0 if self.release_at_zero else arrival[s.app_id] for s in stages])
        self.stage_deps_left = np.array([len(s.depends_on) for s in stages], dtype=np.int64)
        self.stage_children: list[list[int]] = [[] for _ in stages]
        for i, s in enumerate(stages):
            for d in s.depends_on:
                self.stage_children[sidx[d]].append(i)
        # jobs and their per-iteration coflow templates
        job_stage, job_iters, job_compute, job_t0, job_t1, self.job_ids = [], [], [], [], [], []
        self.stage_jobs: list[list[int]] = []
        tf_size, tf_src, tf_dst = [], [], []
        t_f0, t_f1, t_job = [], [], []
        P = 1
        for si, s in enumerate(stages):
            js = []
            for job in s.jobs:
                j = len(self.job_ids)
                js.append(j)
                self.job_ids.append(job.job_id)
                job_stage.append(si)
                job_iters.append(job.iterations)
                job_compute.append(job.compute_s)
                job_t0.append(len(t_f0))
                for c in job.coflows:
                    t_f0.append(len(tf_size))
                    t_job.append(j)
                    for f in c.flows:
                        key = (f.src, f.dst)
                        pid = path_cache.get(key)
                        if pid is None:
                            pid = path_cache[key] = len(paths)
                            paths.append(topo.path_indices(f.src, f.dst))
                            P = max(P, len(paths[-1]))
                        tf_pid.append(pid)
                        tf_size.append(f.size_bytes)
                        tf_src.append(f.src)
                        tf_dst.append(f.dst)
                    t_f1.append(len(tf_size))
                job_t1.append(len(t_f0))
            self.stage_jobs.append(js)
        self.P = P
        path_links = np.full((len(paths), P), L, dtype=np.int64)
        for i, p in enumerate(paths):
            path_links[i, : len(p)] = p
        self.path_links = path_links
        self.tf_pid = np.array(tf_pid, dtype=np.int64)
        self.tf_links = path_links[self.tf_pid] if len(tf_pid) else np.zeros((0, P), dtype=np.int64)
        self.tf_size = np.array(tf_size, dtype=float)
        self.tf_src, self.tf_dst = tf_src, tf_dst
        self.t_f0 = np.array(t_f0, dtype=np.int64)
        self.t_f1 = np.array(t_f1, dtype=np.int64)
        self.job_stage = np.array(job_stage, dtype=np.int64)
        self.job_iters = np.array(job_iters, dtype=np.int64)
        self.job_compute = np.array(job_compute, dtype=float)
        self.job_t0 = np.array(job_t0, dtype=np.int64)
        self.job_t1 = np.array(job_t1, dtype=np.int64)
        T = len(t_f0)
        # per-template bytes on each link (T x L) and uncontended time
        tl = np.zeros((T, L + 1))
        if T:
            tmpl_of_tf = np.repeat(np.arange(T), self.t_f1 - self.t_f0)
            np.add.at(tl, (np.repeat(tmpl_of_tf, P), self.tf_links.ravel()),
                      np.repeat(self.tf_size, P))
        self.tmpl_lb = tl[:, :L]
        self.tmpl_sync_s = (self.tmpl_lb / self.cap[None, :L]).max(axis=1, initial=0.0)
        self.tmpl_size = np.array([self.tf_size[a:b].sum() for a, b in zip(t_f0, t_f1)])
        # suffix sums inside a job's iteration: bytes / time of templates after template t
        self.tmpl_after_lb = np.zeros_like(self.tmpl_lb)
        self.tmpl_after_s = np.zeros(T)
        J = len(self.job_ids)
        self.job_iter_lb = np.zeros((J, L))
        self.job_iter_sync_s = np.zeros(J)
        for j in range(J):
            a, b = self.job_t0[j], self.job_t1[j]
            acc_lb, acc_s = np.zeros(L), 0.0
            for t in range(b - 1, a - 1, -1):
                self.tmpl_after_lb[t] = acc_lb
                self.tmpl_after_s[t] = acc_s
                acc_lb = acc_lb + self.tmpl_lb[t]
                acc_s += self.tmpl_sync_s[t]
            self.job_iter_lb[j] = acc_lb
            self.job_iter_sync_s[j] = acc_s

    # ------------------------------------------------------------------ run
    def run(self) -> FluidResult:
        wall0 = time.perf_counter()
        S, J = len(self.stage_ids), len(self.job_ids)
        self.now = 0.0
        self._heap: list = []
        self._counter = 0
        self.events: list[tuple[float, str, str]] = []
        self.stage_start = np.full(S, np.nan)
        self.stage_end = np.full(S, np.nan)
        self.stage_jobs_left = np.array([len(js) for js in self.stage_jobs], dtype=np.int64)
        self.active_stages: dict[int, None] = {}
        self.job_iter = np.zeros(J, dtype=np.int64)
        self.job_phase = np.full(J, -1, dtype=np.int64)
        self.job_coflow = np.full(J, -1, dtype=np.int64)
        self.job_compute_end = np.zeros(J)
        self.job_done = np.zeros(J, dtype=bool)
        # coflow instances
        self.c_job: list[int] = []
        self.c_tmpl: list[int] = []
        self.c_iter: list[int] = []
        self.c_release: list[float] = []
        self.c_end: list[float] = []
        self.c_flows_left: list[int] = []
        self.c_ids: list[str] = []
        self.active_coflows: dict[int, None] = {}
        # active flows
        self.a_tf = np.zeros(0, dtype=np.int64)
        self.a_cf = np.zeros(0, dtype=np.int64)
        self.a_pid = np.zeros(0, dtype=np.int64)
        self.a_rem = np.zeros(0)
        self.a_start = np.zeros(0)
        self.a_rate = np.zeros(0)
        self._done_chunks: list[tuple[np.ndarray, ...]] = []
        self._wakes: list[tuple[int, float]] = []
        self.num_decisions = 0
        self.policy.prepare(coflow_sizes_bytes=self._all_coflow_sizes())
        for s in range(S):
            if self.stage_deps_left[s] == 0:
                self._push(self.stage_arrival[s], STAGE_START, s)
        self._loop()
        self.wall_s = time.perf_counter() - wall0
        return self._result()

    def _all_coflow_sizes(self) -> np.ndarray:
        tmpl_job = np.repeat(np.arange(len(self.job_ids)), self.job_t1 - self.job_t0)
        return np.repeat(self.tmpl_size, self.job_iters[tmpl_job]) if len(tmpl_job) else np.zeros(0)

    def _push(self, t: float, kind: int, payload: int) -> None:
        heapq.heappush(self._heap, (float(t), self._counter, kind, payload))
        self._counter += 1

    def _log(self, kind: str, ident: str) -> None:
        if self.record_events:
            self.events.append((self.now, kind, ident))

    def _loop(self) -> None:
        handlers = {STAGE_START: self._start_stage, COMPUTE_END: self._compute_end,
                    JOB_DONE: self._job_done}
        per_flow = self.realloc == "flow"
        dirty = True
        while self._heap or len(self.a_rem):
            if dirty:
                self._reallocate()
                dirty = False
            t_next = self._heap[0][0] if self._heap else np.inf
            if len(self.a_rem):
                with np.errstate(divide="ignore", invalid="ignore"):
                    ttf = np.where(self.a_rate > 0, self.a_rem / self.a_rate, np.inf)
                if per_flow:
                    t_next = min(t_next, self.now + float(ttf.min()))
                else:
                    cuts = np.flatnonzero(np.r_[True, self.a_cf[1:] != self.a_cf[:-1]])
                    t_next = min(t_next, self.now + float(np.maximum.reduceat(ttf, cuts).min()))
            t_next = min(t_next, self._next_wake())
            if not np.isfinite(t_next):
                raise RuntimeError(f"simulation stalled at t={self.now:.6f}s with "
                                   f"{len(self.a_rem)} flows at rate 0")
            dt = max(0.0, t_next - self.now)
            t_prev = self.now
            self.now = max(self.now, t_next)
            if len(self.a_rem):
                finished = ttf <= dt + _EPS_T
                if dt > 0:
                    self.a_rem -= self.a_rate * dt
                finished |= self.a_rem <= 1e-9 * self.tf_size[self.a_tf] + 1e-6
                if finished.any():
                    ends = np.minimum(t_prev + ttf[finished], self.now)
                    if self._complete_flows(finished, ends) or per_flow:
                        dirty = True
            while self._heap and self._heap[0][0] <= self.now + _EPS_T:
                _, _, kind, payload = heapq.heappop(self._heap)
                handlers[kind](payload)
                dirty = True
            if self._wakes and self._wake_due():
                dirty = True

    # ------------------------------------------------------------------ events
    def _start_stage(self, s: int) -> None:
        self.stage_start[s] = self.now
        self.active_stages[s] = None
        self._log("stage_start", self.stage_ids[s])
        for j in self.stage_jobs[s]:
            if self.job_t1[j] == self.job_t0[j]:  # compute only: no network traffic
                self._push(self.now + self.job_iters[j] * self.job_compute[j], JOB_DONE, j)
            else:
                self._begin_iteration(j)

    def _begin_iteration(self, j: int) -> None:
        self.job_phase[j] = -1
        self.job_compute_end[j] = self.now + self.job_compute[j]
        self._push(self.job_compute_end[j], COMPUTE_END, j)

    def _compute_end(self, j: int) -> None:
        self._release(j, 0)

    def _release(self, j: int, k: int) -> None:
        t = int(self.job_t0[j] + k)
        cid = len(self.c_job)
        self.c_job.append(j)
        self.c_tmpl.append(t)
        self.c_iter.append(int(self.job_iter[j]))
        self.c_release.append(self.now)
        self.c_end.append(np.nan)
        a, b = int(self.t_f0[t]), int(self.t_f1[t])
        self.c_flows_left.append(b - a)
        self.c_ids.append(f"{self.job_ids[j]}/i{self.job_iter[j]}/c{k}")
        self.active_coflows[cid] = None
        self.job_phase[j] = k
        self.job_coflow[j] = cid
        tf = np.arange(a, b)
        self.a_tf = np.concatenate([self.a_tf, tf])
        self.a_cf = np.concatenate([self.a_cf, np.full(b - a, cid, dtype=np.int64)])
        self.a_pid = np.concatenate([self.a_pid, self.tf_pid[a:b]])
        self.a_rem = np.concatenate([self.a_rem, self.tf_size[a:b]])
        self.a_start = np.concatenate([self.a_start, np.full(b - a, np.nan)])
        self.a_rate = np.concatenate([self.a_rate, np.zeros(b - a)])
        self._log("coflow_release", self.c_ids[cid])

    def _complete_flows(self, finished: np.ndarray, ends: np.ndarray) -> bool:
        """Retire ``finished`` flows (ending at ``ends``); True if a coflow completed."""
        idx = np.flatnonzero(finished)
        cf = self.a_cf[idx]
        start = self.a_start[idx]
        start = np.where(np.isnan(start), ends, start)
        self._done_chunks.append((self.a_tf[idx], cf, start, ends))
        keep = ~finished
        for name in ("a_tf", "a_cf", "a_pid", "a_rem", "a_start", "a_rate"):
            setattr(self, name, getattr(self, name)[keep])
        cids, counts = np.unique(cf, return_counts=True)
        any_done = False
        for cid, n in zip(cids.tolist(), counts.tolist()):
            self.c_flows_left[cid] -= n
            if self.c_flows_left[cid] == 0:
                any_done = True
                self._coflow_done(cid)
        return any_done

    def _coflow_done(self, cid: int) -> None:
        self.c_end[cid] = self.now
        del self.active_coflows[cid]
        self._log("coflow_end", self.c_ids[cid])
        j = self.c_job[cid]
        self.job_coflow[j] = -1
        k = self.c_tmpl[cid] - int(self.job_t0[j])
        if self.job_t0[j] + k + 1 < self.job_t1[j]:
            self._release(j, k + 1)
            return
        self.job_iter[j] += 1
        if self.job_iter[j] < self.job_iters[j]:
            self._begin_iteration(j)
        else:
            self._job_done(j)

    def _job_done(self, j: int) -> None:
        self.job_done[j] = True
        s = int(self.job_stage[j])
        self.stage_jobs_left[s] -= 1
        if self.stage_jobs_left[s] == 0:
            self.stage_end[s] = self.now
            del self.active_stages[s]
            self._log("stage_end", self.stage_ids[s])
            for child in self.stage_children[s]:
                self.stage_deps_left[child] -= 1
                if self.stage_deps_left[child] == 0:
                    self._push(max(self.now, self.stage_arrival[child]), STAGE_START, child)

    # ------------------------------------------------------------------ policy
    def _next_wake(self) -> float:
        best = np.inf
        for cid, thr in self._wakes:
            m = self.a_cf == cid
            r = self.a_rate[m].sum()
            if r > 0:
                sent = self.tmpl_size[self.c_tmpl[cid]] - self.a_rem[m].sum()
                best = min(best, self.now + max(0.0, thr + 1.0 - sent) / r)
        return best

    def _wake_due(self) -> bool:
        for cid, thr in self._wakes:
            m = self.a_cf == cid
            if m.any() and self.tmpl_size[self.c_tmpl[cid]] - self.a_rem[m].sum() > thr:
                return True
        return False

    def _view(self) -> tuple[View, np.ndarray]:
        cids = np.fromiter(self.active_coflows, dtype=np.int64, count=len(self.active_coflows))
        stages = np.fromiter(self.active_stages, dtype=np.int64, count=len(self.active_stages))
        s_local = {int(s): i for i, s in enumerate(stages)}
        jobs = np.array([j for s in stages for j in self.stage_jobs[s] if not self.job_done[j]],
                        dtype=np.int64)
        j_local = np.full(len(self.job_ids), -1, dtype=np.int64)
        j_local[jobs] = np.arange(len(jobs))
        c_local = np.full(len(self.c_job), -1, dtype=np.int64)
        c_local[cids] = np.arange(len(cids))
        c_job = np.array([self.c_job[c] for c in cids], dtype=np.int64)
        L, C = self.L, len(cids)
        cache: dict[str, np.ndarray] = {}

        def coflow_link_bytes() -> np.ndarray:
            if "clb" not in cache:
                key = (c_local[self.a_cf][:, None] * (L + 1) + self.path_links[self.a_pid]).ravel()
                m = np.bincount(key, weights=np.repeat(self.a_rem, self.P), minlength=C * (L + 1))
                cache["clb"] = m.reshape(C, L + 1)[:, :L]
            return cache["clb"]

        def coflow_sent() -> np.ndarray:
            rem = np.bincount(c_local[self.a_cf], weights=self.a_rem, minlength=C)
            return np.array([self.tmpl_size[self.c_tmpl[c]] for c in cids]) - rem

        def job_link_bytes() -> np.ndarray:
            ph = self.job_phase[jobs]
            it = self.job_iter[jobs]
            full = self.job_iters[jobs] - it - (ph >= 0)
            m = full[:, None] * self.job_iter_lb[jobs]
            inflight = np.flatnonzero(ph >= 0)
            if len(inflight):
                jj = jobs[inflight]
                t = self.job_t0[jj] + ph[inflight]
                m[inflight] += self.tmpl_after_lb[t]
                cur = c_local[self.job_coflow[jj]]
                ok = cur >= 0
                m[inflight[ok]] += coflow_link_bytes()[cur[ok]]
            return m

        def stage_link_bytes() -> np.ndarray:
            out = np.zeros((len(stages), L))
            if len(jobs):
                np.add.at(out, np.array([s_local[int(s)] for s in self.job_stage[jobs]]),
                          job_link_bytes())
            return out

        def critical_path() -> np.ndarray:
            ph = self.job_phase[jobs]
            it = self.job_iter[jobs]
            iter_s = self.job_compute[jobs] + self.job_iter_sync_s[jobs]
            cp = (self.job_iters[jobs] - it - 1) * iter_s
            computing = ph < 0
            cp[computing] += (np.maximum(self.job_compute_end[jobs[computing]] - self.now, 0.0)
                              + self.job_iter_sync_s[jobs[computing]])
            compute_only = self.job_t1[jobs] == self.job_t0[jobs]
            cp[compute_only] = 0.0
            inflight = np.flatnonzero(ph >= 0)
            if len(inflight):
                jj = jobs[inflight]
                t = self.job_t0[jj] + ph[inflight]
                cur = c_local[self.job_coflow[jj]]
                rem_s = (coflow_link_bytes()[cur] / self.cap[None, :L]).max(axis=1, initial=0.0)
                cp[inflight] += rem_s + self.tmpl_after_s[t]
            return cp

        view = View(
            now_s=self.now,
            coflow_ids=tuple(self.c_ids[c] for c in cids),
            stage_ids=tuple(self.stage_ids[s] for s in stages),
            job_ids=tuple(self.job_ids[j] for j in jobs),
            capacity_bps=self.cap_bps,
            coflow_stage=np.array([s_local[int(self.job_stage[j])] for j in c_job], dtype=np.int64),
            coflow_job=j_local[c_job],
            coflow_release_s=np.array([self.c_release[c] for c in cids]),
            coflow_seq=cids,
            coflow_size_bytes=np.array([self.tmpl_size[self.c_tmpl[c]] for c in cids]),
            coflow_sent_bytes=coflow_sent,
            coflow_link_bytes=coflow_link_bytes,
            stage_weight=self.stage_weight[stages],
            stage_start_s=self.stage_start[stages],
            stage_link_bytes=stage_link_bytes,
            job_stage=np.array([s_local[int(s)] for s in self.job_stage[jobs]], dtype=np.int64),
            job_remaining_iterations=self.job_iters[jobs] - self.job_iter[jobs],
            job_critical_path_s=critical_path,
        )
        return view, cids

    def _reallocate(self) -> None:
        n = len(self.a_rem)
        self._wakes = []
        if n == 0:
            self.a_rate = np.zeros(0)
            return
        view, cids = self._view()
        decision = self.policy.decide(view)
        self.num_decisions += 1
        order = check_order(decision.order, len(cids))
        if decision.classes is not None:
            cls = compress_classes(np.asarray(decision.classes), self.K)
        else:
            cls = classes_from_order(order, self.K)
        c_local = np.full(len(self.c_job), -1, dtype=np.int64)
        c_local[cids] = np.arange(len(cids))
        flow_c = c_local[self.a_cf]
        if self.policy.allocation == "madd":
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order))
            rate = allocation.madd(self.a_pid, self.path_links, self.a_rem, rank[flow_c], self.cap)
        else:
            rate = allocation.priority(self.a_pid, self.path_links, cls[flow_c], self.cap)
        self.a_rate = rate
        starting = (rate > 0) & np.isnan(self.a_start)
        self.a_start[starting] = self.now
        self._wakes = [(int(cids[i]), float(thr)) for i, thr in decision.wake_on_sent]
        if self.check_invariants:
            self._check(rate)

    def _check(self, rate: np.ndarray) -> None:
        links = self.path_links[self.a_pid]
        use = allocation.link_usage(links, rate, self.L + 1)[: self.L]
        cap = self.cap[: self.L]
        if (use > cap * (1 + 1e-7) + 1e-6).any():
            raise AssertionError(f"t={self.now}: link over capacity")
        saturated = use >= cap * (1 - 1e-7) - 1e-6
        sat_ext = np.concatenate([saturated, [False]])
        if not sat_ext[links].any(axis=1).all():
            raise AssertionError(f"t={self.now}: a flow has no saturated link (not work-conserving)")
        self.invariant_checks = getattr(self, "invariant_checks", 0) + 1

    # ------------------------------------------------------------------ output
    def _result(self) -> FluidResult:
        if self._done_chunks:
            tf, cf, start, end = (np.concatenate(x) for x in zip(*self._done_chunks))
        else:
            tf = cf = np.zeros(0, dtype=np.int64)
            start = end = np.zeros(0)
        order = np.lexsort((tf, cf))
        tf, cf, start, end = tf[order], cf[order], start[order], end[order]
        c_tmpl = np.array(self.c_tmpl, dtype=np.int64)
        local = tf - self.t_f0[c_tmpl[cf]] if len(cf) else tf
        c_ids = self.c_ids
        flows = {
            "flow_id": [f"{c_ids[c]}/f{i}" for c, i in zip(cf.tolist(), local.tolist())],
            "coflow_id": [c_ids[c] for c in cf.tolist()],
            "src": [self.tf_src[i] for i in tf.tolist()],
            "dst": [self.tf_dst[i] for i in tf.tolist()],
            "size_bytes": self.tf_size[tf].astype(np.int64),
            "release_s": np.array(self.c_release)[cf] if len(cf) else np.zeros(0),
            "start_s": start,
            "end_s": end,
        }
        coflows = []
        for cid, j in enumerate(self.c_job):
            s = int(self.job_stage[j])
            coflows.append({
                "coflow_id": c_ids[cid], "stage_id": self.stage_ids[s], "job_id": self.job_ids[j],
                "app_id": self.stage_app[s], "iteration": self.c_iter[cid],
                "index": self.c_tmpl[cid] - int(self.job_t0[j]),
                "release_s": self.c_release[cid], "end_s": self.c_end[cid],
                "cct_s": self.c_end[cid] - self.c_release[cid],
                "size_bytes": int(self.tmpl_size[self.c_tmpl[cid]]),
                "num_flows": int(self.t_f1[self.c_tmpl[cid]] - self.t_f0[self.c_tmpl[cid]]),
            })
        stages = []
        for s, sid in enumerate(self.stage_ids):
            stages.append({
                "stage_id": sid, "app_id": self.stage_app[s], "weight": float(self.stage_weight[s]),
                "num_jobs": len(self.stage_jobs[s]), "start_s": float(self.stage_start[s]),
                "end_s": float(self.stage_end[s]),
                "sct_s": float(self.stage_end[s] - self.stage_start[s]),
            })
        facts = {"num_decisions": self.num_decisions, "num_links": self.L,
                 "simulated_s": self.now, "sim_wall_s": self.wall_s}
        return FluidResult(stages=stages, coflows=coflows, flows=flows, events=self.events,
                           facts=facts)
