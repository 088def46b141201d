"""The run state shared by both backends: the BSP job state machine over a compiled trace
(``emulation/compiled_trace.py``), its timers, the active coflows and flows, and the
records (``Records``, ``FlowColumns``).

``ClusterState`` knows what must happen next in trace order (stage starts, compute ends,
coflow releases, job and stage completions; for a trace with a cluster, which waiting
trials the cluster scheduler starts, ``emulation/admission.py`` under its admission rule
(``emulation/admission_rules.py``, given the time and each job's runtime estimate), and
the coflows their placements give them, ``workloads/cluster.py``) and keeps those timers
on its own heap with a counter for deterministic ties. The one event loop
(``emulation/loop.py``) changes it in every backend: a backend moves time (the fluid
engine by computing rates, the Mininet driver by wall-clock and the agents' reports), the
loop hands over the flows that finished (``complete_flows``) and fires the timers due
(``fire_timers``). The Mininet scheduler process runs the same loop on a shadow
``ClusterState`` fed with the driver's events, so the same policy sees the same kind of
view (``emulation/view.py``) in both backends.
"""
from __future__ import annotations

import dataclasses
import heapq
from dataclasses import fields
from typing import Any

import numpy as np

from emulation.admission import Admission
from emulation.admission_rules import make_admission_rule
from emulation.compiled_trace import CompiledTrace, compile_trace, place_job
from emulation.ids import coflow_id, flow_ids
from emulation.records import FlowColumns, Records
from emulation.state_kernels import retire_flows
from emulation.scheduler.base import View
from emulation.tuner import AshaRule
from emulation.topology import Topology
from emulation.view import ViewBuilder
from workloads.cluster import (ClusterConfig, nominal_hosts, placed_coflows,
                               runtime_estimates_s)
from workloads.trace import Job, Trace

STAGE_START, COMPUTE_END, JOB_DONE, RELEASE = 0, 1, 2, 3
EPS_T = 1e-9
# the active-flow columns: trace flow, coflow instance, path, bytes left, first-byte time,
# rate (bytes/s), bytes left at or below which the flow counts as finished
_ACTIVE_COLUMNS = (("a_tf", np.int64), ("a_cf", np.int64), ("a_pid", np.int64),
                   ("a_rem", float), ("a_start", float), ("a_rate", float), ("a_tol", float))


class ClusterState:
    """One run of a trace on a topology: its compiled trace (``compiled``,
    ``emulation/compiled_trace.py``), the BSP job state machine and its timers, active
    coflows and flows, the records.

    The compiled trace's tables read through as attributes (``state.tf_size`` is
    ``state.compiled.tf_size``; read-only). A backend changes the state through methods
    only: it moves the clock (``advance_clock``), sets the active flows' rates
    (``set_rates``) or reports their progress (``record_progress``), and hands over what
    happened (``fire_timers``, ``complete_flows``, ``record_completed``,
    ``truncate_active``). The fluid engine's compiled kernels advance the active flows'
    bytes left (``a_rem``) in place, between those calls."""

    def __init__(self, trace: Trace, topology: Topology, *, release_at_zero: bool = False,
                 record_events: bool = False, release_latency_s: float = 0.0,
                 admission_rule: str | None = None):
        self.compiled = compile_trace(trace, topology, release_at_zero=release_at_zero)
        self.record_events = record_events
        # which waiting trials a cluster starts (emulation/admission_rules.py): the
        # trace's cluster's rule unless given
        self.admission_rule = admission_rule or (trace.cluster or {}).get("admission", "fifo")
        # a released coflow's flows join the network this much later (the packet-aware
        # fluid model, emulation/packet_model.py); its recorded release is the
        # moment it was released
        self.release_latency_s = float(release_latency_s)
        self.job_specs: list[Job] = trace.jobs()
        self.stage_asha = [s.asha for s in trace.stages()]
        self._reset()
        for s in range(len(self.stage_ids)):
            if self.stage_deps_left[s] == 0:
                self._push(self.stage_arrival[s], STAGE_START, s)

    def _reset(self) -> None:
        S, J = len(self.stage_ids), len(self.job_ids)
        self.now = 0.0
        self.stage_deps_left = self.compiled.stage_num_deps.copy()
        # an ASHA segment past rung 0 also waits for the rule to let its trial go on
        self.stage_deps_left += [a is not None and a["rung"] > 0 for a in self.stage_asha]
        self.asha = AshaRule()
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
        # each job's trial: ready (its stage started), started (placed), ended
        self.job_ready_s = np.full(J, np.nan)
        self.job_start_s = np.full(J, np.nan)
        self.job_end_s = np.full(J, np.nan)
        self.admission = None if self.compiled.trace.cluster is None else self._new_admission()
        # coflow instances
        self.c_job: list[int] = []
        self.c_tmpl: list[int] = []
        self.c_iter: list[int] = []
        self.c_release: list[float] = []
        self.c_end: list[float] = []
        self._c_left_buf = np.zeros(16, dtype=np.int64)
        self.c_flows_left = self._c_left_buf[:0]  # flows not yet finished, per coflow
        self.c_ids: list[str] = []
        self.active_coflows: dict[int, None] = {}
        # bumped whenever the sets of active coflows, stages or jobs change: the view's
        # index part (ids, local numbering) is rebuilt only then, not at every flow event
        self.structure_version = 0
        self._views = ViewBuilder()
        # active flows: a_* are the first rows of buffers that grow by doubling, so a
        # release appends in O(its flows) instead of copying every active flow; the fluid
        # engine replaces a_rate by its own array (zeros elsewhere)
        self._bufs = {name: np.zeros(16, dtype=dt) for name, dt in _ACTIVE_COLUMNS}
        for name, _ in _ACTIVE_COLUMNS:
            setattr(self, name, self._bufs[name][:0])
        # active flows on each path and on each link (dummy last)
        self.path_flows = np.zeros(len(self.path_links), dtype=np.int64)
        self.link_flows = np.zeros(self.L + 1, dtype=np.int64)
        self._done_chunks: list[tuple[np.ndarray, ...]] = []

    def _new_admission(self) -> Admission:
        """The run's cluster scheduler: its rule, and each job's runtime estimate on its
        nominal hosts at their NIC rates (the rate of each host's link to its switch)."""
        trace, topo = self.compiled.trace, self.compiled.topo
        cluster = ClusterConfig(**trace.cluster)
        nic_rate_bps = {h: topo.links[topo.link_index(h, topo.host_switch(h))].rate_bps
                        for h in trace.hosts}
        return Admission(
            cluster, num_hosts=len(trace.hosts),
            job_gpus=np.array([j.gpus for j in self.job_specs], dtype=np.int64),
            job_app=[self.compiled.stage_app[s] for s in self.compiled.job_stage],
            seed=trace.seed, rule=make_admission_rule(self.admission_rule),
            estimate_s=runtime_estimates_s(self.job_specs, cluster=cluster,
                                           hosts=trace.hosts, nic_rate_bps=nic_rate_bps))

    # ------------------------------------------------------------------ timers
    def _push(self, t: float, kind: int, payload: int) -> None:
        heapq.heappush(self._heap, (float(t), self._counter, kind, payload))
        self._counter += 1

    def next_timer_s(self) -> float:
        """Time of the earliest pending timer (inf if none)."""
        return self._heap[0][0] if self._heap else np.inf

    def fire_timers(self) -> bool:
        """Handle every timer due at ``now``; True if any fired."""
        handlers = {STAGE_START: self._start_stage, COMPUTE_END: self._compute_end,
                    JOB_DONE: self._job_done, RELEASE: self._delayed_release}
        fired = False
        while self._heap and self._heap[0][0] <= self.now + EPS_T:
            _, _, kind, payload = heapq.heappop(self._heap)
            handlers[kind](payload)
            fired = True
        return fired

    def active_flow_keys(self) -> np.ndarray:
        """``cid << 32 | tf`` of every active flow (the Mininet backend's flow names)."""
        return (self.a_cf << 32) | self.a_tf

    def coflow_sent_bytes(self, cids: np.ndarray, rows: np.ndarray | None = None
                          ) -> np.ndarray:
        """Bytes each coflow in ``cids`` (coflow ids) has sent: its size less its active
        flows' bytes left. ``rows``: each active flow's position in ``cids`` (-1 for
        others), if the caller keeps it (the view, for all active coflows at once: the
        bytes left are added in one pass in the active flows' order); without it each
        coflow's are summed on their own (numpy's pairwise sum, for a few coflows: the
        byte wake-ups)."""
        size = np.array([self.tmpl_size[self.c_tmpl[c]] for c in cids])
        if rows is None:
            return size - np.array([self.a_rem[self.a_cf == c].sum() for c in cids])
        mine = rows >= 0
        return size - np.bincount(rows[mine], weights=self.a_rem[mine], minlength=len(cids))

    def wake_due(self, wakes: list[tuple[int, float]]) -> bool:
        """True once a coflow of ``wakes`` (coflow id, sent bytes: a policy's byte
        wake-ups) that still has active flows has sent more than its threshold."""
        for cid, thr in wakes:
            if (self.a_cf == cid).any() and self.coflow_sent_bytes([cid])[0] > thr:
                return True
        return False

    def busy(self) -> bool:
        """True while timers are pending or flows are active."""
        return bool(self._heap) or len(self.a_rem) > 0

    # ------------------------------------------------------------------ backends' writes
    def advance_clock(self, t_s: float) -> None:
        """Move ``now`` to ``t_s`` (trace seconds) if that is later; the clock never goes
        back (a report that arrives late does not move it)."""
        if t_s > self.now:
            self.now = t_s

    def set_rates(self, rate_bytes_per_s: np.ndarray) -> None:
        """The active flows' rates (bytes/s, one per active flow in their current order).
        The array is kept, not copied: the fluid engine writes its rate buffer in place."""
        if len(rate_bytes_per_s) != len(self.a_rem):
            raise ValueError(f"{len(rate_bytes_per_s)} rates for {len(self.a_rem)} active flows")
        self.a_rate = rate_bytes_per_s

    def record_progress(self, rows: np.ndarray, sent_bytes: np.ndarray) -> None:
        """Bytes of the active flows at ``rows`` that have arrived (a packet backend's
        report): their bytes left become size - sent, at least 0."""
        rows = np.asarray(rows, dtype=np.int64)
        size = self.tf_size[self.a_tf[rows]]
        self.a_rem[rows] = np.maximum(size - np.asarray(sent_bytes, dtype=float), 0.0)

    def flow_sizes(self, trace: Trace) -> np.ndarray:
        """Every flow's size in this run's template order (``tf``) for ``trace``, the same
        trace at another scale: the pinned flows in trace order, then the flows of each
        job placed during the run, in the order it was placed."""
        pinned = [f.size_bytes for j in trace.jobs() for c in j.coflows for f in c.flows]
        placed = []
        specs = trace.jobs()
        hosts = trace.hosts
        for j, p in (self.admission.placements.items() if self.admission else ()):
            spec = specs[j]
            placed += [f.size_bytes for c in placed_coflows(
                spec.pattern, hosts=[hosts[h] for h in p.hosts],
                model_size_bytes=spec.model_size_bytes, ps_servers=spec.ps_servers)
                for f in c.flows]
        return np.array(pinned + placed, dtype=np.int64)

    def coflow_sizes_bytes(self) -> np.ndarray:
        """Sizes of every coflow instance the trace will release (for policies' prepare);
        a trial placed during the run counts with the coflows it would have on the empty
        cluster (``workloads.cluster.nominal_hosts``)."""
        if self.admission is None:
            return self.compiled.coflow_sizes_bytes()
        cluster, n = self.admission.cluster, len(self.compiled.trace.hosts)
        sizes = []
        for spec in self.job_specs:
            hosts = [f"n{i}" for i in range(nominal_hosts(spec.gpus, cluster, n))]
            for c in placed_coflows(spec.pattern, hosts=hosts,
                                    model_size_bytes=spec.model_size_bytes,
                                    ps_servers=spec.ps_servers):
                sizes += [float(c.size_bytes)] * spec.iterations
        return np.array(sizes)

    def _log(self, kind: str, ident: str) -> None:
        if self.record_events:
            self.events.append((self.now, kind, ident))

    # ------------------------------------------------------------------ events
    def _start_stage(self, s: int) -> None:
        self.stage_start[s] = self.now
        self.active_stages[s] = None
        self.structure_version += 1
        self._log("stage_start", self.stage_ids[s])
        for j in self.stage_jobs[s]:
            self.job_ready_s[j] = self.now
            if self.admission is None:
                self._start_job(j)
            elif j in self.admission.placements:  # a trial ASHA let go on keeps its GPUs
                self._start_placed(j)
            else:
                self.admission.enqueue(j)
        if self.admission is not None:
            self._admit()

    def _admit(self) -> None:
        """Start the waiting jobs the cluster scheduler places now."""
        for j, _ in self.admission.admit(now_s=self.now):
            self._start_placed(j)

    def _start_placed(self, j: int) -> None:
        """Start job ``j`` on its placement, with the coflows that placement gives it."""
        spec, hosts = self.job_specs[j], self.compiled.trace.hosts
        where = self.admission.placements[j]
        coflows = placed_coflows(spec.pattern, hosts=[hosts[h] for h in where.hosts],
                                 model_size_bytes=spec.model_size_bytes,
                                 ps_servers=spec.ps_servers)
        self.compiled = place_job(self.compiled, j, coflows)
        self.structure_version += 1
        self._log("trial_start", self.job_ids[j])
        self._start_job(j)

    def _start_job(self, j: int) -> None:
        self.job_start_s[j] = self.now
        if self.job_t1[j] == self.job_t0[j]:  # compute only: no network traffic
            self._push(self.now + self.job_iters[j] * self.job_compute[j], JOB_DONE, j)
        else:
            self._begin_iteration(j)

    def _begin_iteration(self, j: int) -> None:
        self.job_phase[j] = -1
        self.job_compute_end[j] = self.now + self.job_compute[j]
        self._push(self.job_compute_end[j], COMPUTE_END, j)

    def _compute_end(self, j: int) -> None:
        self._schedule_release(j, 0)

    def _schedule_release(self, j: int, k: int) -> None:
        """Release job ``j``'s ``k``-th coflow of the iteration now, or its flows
        ``release_latency_s`` from now."""
        if self.release_latency_s > 0.0:
            self._push(self.now + self.release_latency_s, RELEASE, (j, k, self.now))
        else:
            self._release(j, k)

    def _delayed_release(self, payload: tuple[int, int, float]) -> None:
        j, k, released_s = payload
        self._release(j, k, released_s=released_s)

    def _release(self, j: int, k: int, *, released_s: float | None = None) -> None:
        t = int(self.job_t0[j] + k)
        cid = len(self.c_job)
        self.c_job.append(j)
        self.c_tmpl.append(t)
        self.c_iter.append(int(self.job_iter[j]))
        self.c_release.append(self.now if released_s is None else released_s)
        self.c_end.append(np.nan)
        a, b = int(self.t_f0[t]), int(self.t_f1[t])
        if cid == len(self._c_left_buf):
            self._c_left_buf = np.concatenate([self._c_left_buf, np.zeros_like(self._c_left_buf)])
        self._c_left_buf[cid] = b - a
        self.c_flows_left = self._c_left_buf[:cid + 1]
        self.c_ids.append(coflow_id(self.job_ids[j], self.job_iter[j], k))
        self.active_coflows[cid] = None
        self.structure_version += 1
        self.job_phase[j] = k
        self.job_coflow[j] = cid
        self._append_active(a_tf=np.arange(a, b), a_cf=cid, a_pid=self.tf_pid[a:b],
                            a_rem=self.tf_size[a:b], a_start=np.nan, a_rate=0.0,
                            a_tol=self.tf_tol[a:b])
        np.add.at(self.path_flows, self.tf_pid[a:b], 1)
        np.add.at(self.link_flows, self.tf_links[a:b].ravel(), 1)
        self._log("coflow_release", self.c_ids[cid])

    def _append_active(self, **rows) -> None:
        """Append rows to the active-flow columns (``a_tf`` gives their number; the
        others are arrays of that length or scalars)."""
        n, k = len(self.a_tf), len(rows["a_tf"])
        size = len(self._bufs["a_tf"])
        grow = n + k > size
        for name, _ in _ACTIVE_COLUMNS:
            buf, cur = self._bufs[name], getattr(self, name)
            if grow:
                new = np.empty(max(n + k, 2 * size), dtype=buf.dtype)
                new[:n] = cur
                self._bufs[name] = buf = new
            elif cur.base is not buf:  # replaced by the engine (a_rate): copy it back in
                buf[:n] = cur
            buf[n:n + k] = rows[name]
            setattr(self, name, buf[:n + k])

    def complete_flows(self, finished: np.ndarray, ends: np.ndarray,
                       starts: np.ndarray | None = None) -> bool:
        """Retire the ``finished`` flows (a mask over the active flows, or their indices in
        ascending order) ending at ``ends``; ``starts`` overrides the recorded first-byte
        times. The last active flows move into the freed rows (O(finished), so the active
        flows' order changes). True if a coflow completed."""
        finished = np.asarray(finished)
        idx = np.flatnonzero(finished) if finished.dtype == bool else finished.astype(np.int64)
        if len(idx) > 1 and not (np.diff(idx) > 0).all():
            raise ValueError("finished flow indices must be strictly ascending")
        cf = self.a_cf[idx]
        start = self.a_start[idx] if starts is None else np.asarray(starts, dtype=float)
        start = np.where(np.isnan(start), ends, start)
        self._done_chunks.append((self.a_tf[idx], cf, start, ends))
        n = retire_flows(idx, len(self.a_tf), self.a_tf, self.a_cf, self.a_pid, self.a_rem,
                         self.a_start, self.a_rate, self.a_tol, self.path_flows,
                         self.link_flows, self.path_links)
        self.truncate_active(n)
        done = []
        for cid, k in zip(*(u.tolist() for u in np.unique(cf, return_counts=True))):
            self.c_flows_left[cid] -= k
            if self.c_flows_left[cid] == 0:
                done.append(cid)
        for cid in done:  # ascending (np.unique)
            self._coflow_done(cid)
        return bool(done)

    def truncate_active(self, n: int) -> None:
        """Keep the first ``n`` active flows (the others were retired in place)."""
        for name, _ in _ACTIVE_COLUMNS:
            setattr(self, name, getattr(self, name)[:n])

    def record_completed(self, tf: np.ndarray, cf: np.ndarray, start: np.ndarray,
                         end: np.ndarray) -> None:
        """Record flows that the caller already retired (trace flow, coflow, first-byte
        and last-byte times); their coflows must not have completed."""
        self._done_chunks.append((tf, cf, start, end))

    def _coflow_done(self, cid: int) -> None:
        self.c_end[cid] = self.now
        del self.active_coflows[cid]
        self.structure_version += 1
        self._log("coflow_end", self.c_ids[cid])
        j = self.c_job[cid]
        self.job_coflow[j] = -1
        k = self.c_tmpl[cid] - int(self.job_t0[j])
        if self.job_t0[j] + k + 1 < self.job_t1[j]:
            self._schedule_release(j, k + 1)
            return
        self.job_iter[j] += 1
        if self.job_iter[j] < self.job_iters[j]:
            self._begin_iteration(j)
        else:
            self._job_done(j)

    def _job_done(self, j: int) -> None:
        self.job_done[j] = True
        self.job_end_s[j] = self.now
        self.structure_version += 1
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
        going_on = None
        if self.stage_jobs_left[s] == 0 and self.stage_asha[s] is not None:
            going_on = self._judge(s, j)
        if self.admission is not None:
            if going_on is None:
                self.admission.release(j)
            else:  # the trial trains its next rung on the GPUs it holds
                self.admission.hand_over(j, going_on, now_s=self.now)
            self._admit()

    def _judge(self, s: int, j: int) -> int | None:
        """ASHA's decision on the segment ``s`` that just ended (its job ``j``): if the
        trial goes on, its next segment starts now; returns that segment's job, or None."""
        a = self.stage_asha[s]
        nexts = [c for c in self.stage_children[s] if self.stage_asha[c] is not None
                 and self.stage_asha[c]["rung"] == a["rung"] + 1]
        if not nexts:  # the last rung: the trial is done
            return None
        goes_on = self.asha.judge(app_id=self.stage_app[s], trial_id=self.job_specs[j].trial_id,
                                  rung=a["rung"], score=a["score"], eta=a["eta"],
                                  now_s=self.now)
        self._log("asha_go_on" if goes_on else "asha_stop", self.stage_ids[s])
        if not goes_on:
            return None
        (child,) = nexts
        self.stage_deps_left[child] -= 1
        if self.stage_deps_left[child] == 0:
            self._push(max(self.now, self.stage_arrival[child]), STAGE_START, child)
        (nxt_job,) = self.stage_jobs[child]
        return nxt_job

    def skipped_stages(self) -> list[int]:
        """ASHA segments that never ran: their trial stopped at an earlier rung."""
        return [s for s, a in enumerate(self.stage_asha)
                if a is not None and np.isnan(self.stage_start[s])]

    def view(self) -> tuple[View, np.ndarray]:
        """The policy's read-only view now, and the coflow ids (cids) its rows stand for
        (built by ``emulation.view``)."""
        return self._views.build(self)

    def records(self, facts: dict[str, Any] | None = None) -> Records:
        """Everything that happened, as rows for the record files."""
        if self._done_chunks:
            tf, cf, start, end = (np.concatenate(x) for x in zip(*self._done_chunks))
        else:
            tf = cf = np.zeros(0, dtype=np.int64)
            start = end = np.zeros(0)
        order = np.lexsort((tf, cf))
        tf, cf, start, end = tf[order], cf[order], start[order], end[order]
        c_tmpl = np.array(self.c_tmpl, dtype=np.int64)
        local = tf - self.t_f0[c_tmpl[cf]] if len(cf) else tf
        c_ids, tf_src, tf_dst = self.c_ids, self.tf_src, self.tf_dst
        coflow_names: list[list[str]] = []  # built once, on first use by either column

        def flow_coflows() -> list[str]:
            if not coflow_names:
                coflow_names.append([c_ids[c] for c in cf.tolist()])
            return coflow_names[0]

        flows = FlowColumns(
            strings={
                "flow_id": lambda: flow_ids(flow_coflows(), local.tolist()),
                "coflow_id": flow_coflows,
                "src": lambda: [tf_src[i] for i in tf.tolist()],
                "dst": lambda: [tf_dst[i] for i in tf.tolist()],
            },
            numbers={
                "size_bytes": self.tf_size[tf].astype(np.int64),
                "release_s": np.array(self.c_release)[cf] if len(cf) else np.zeros(0),
                "start_s": start,
                "end_s": end,
            })
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
        skipped = set(self.skipped_stages())
        for s, sid in enumerate(self.stage_ids):
            if s in skipped:
                continue
            stages.append({
                "stage_id": sid, "app_id": self.stage_app[s], "weight": float(self.stage_weight[s]),
                "num_jobs": len(self.stage_jobs[s]), "start_s": float(self.stage_start[s]),
                "end_s": float(self.stage_end[s]),
                "sct_s": float(self.stage_end[s] - self.stage_start[s]),
            })
        return Records(stages=stages, coflows=coflows, flows=flows, events=self.events,
                       facts={"num_links": self.L, "simulated_s": self.now, **(facts or {})},
                       trials=self.trial_rows(),
                       decisions=[dataclasses.asdict(d) for d in self.asha.decisions])

    def trial_rows(self) -> list[dict[str, Any]]:
        """One row per job a cluster placed (``trials.csv``): its GPUs, its hosts as
        ``host:gpus`` pairs joined by ``;``, when it was queued (its stage started), when
        it started on its GPUs and when it ended; none for a pinned trace."""
        if self.admission is None:
            return []
        hosts, rows = self.compiled.trace.hosts, []
        skipped = set(self.skipped_stages())
        for j, job_id in enumerate(self.job_ids):
            p = self.admission.placements.get(j)
            s = int(self.job_stage[j])
            if s in skipped:
                continue
            rows.append({
                "job_id": job_id, "app_id": self.stage_app[s], "stage_id": self.stage_ids[s],
                "gpus": int(self.job_specs[j].gpus),
                "hosts": ";".join(f"{hosts[h]}:{g}" for h, g in zip(p.hosts, p.gpus)) if p else "",
                "queued_s": float(self.job_ready_s[j]), "start_s": float(self.job_start_s[j]),
                "end_s": float(self.job_end_s[j])})
        return rows

    def placed_trace(self, trace: Trace | None = None) -> Trace:
        """The trace as this run placed and tuned it: every placed job pinned to its hosts
        with the coflows its placement gave it, the ASHA segments that never ran left out
        (no cluster, no decisions left). ``trace``: the same trace at another scale (the
        packet backend's unscaled one; default: the run's). A pinned trace: itself."""
        trace = self.compiled.trace if trace is None else trace
        if self.admission is None:
            return trace
        by_id = {}
        for j, spec in enumerate(trace.jobs()):
            p = self.admission.placements.get(j)
            names = tuple(trace.hosts[h] for h in p.hosts) if p else ()
            coflows = placed_coflows(spec.pattern, hosts=list(names),
                                     model_size_bytes=spec.model_size_bytes,
                                     ps_servers=spec.ps_servers) if p else []
            by_id[spec.job_id] = dataclasses.replace(
                spec, hosts=names, coflows=tuple(coflows), gpus=0, model_size_bytes=0,
                ps_servers=0)
        ran = {self.stage_ids[s] for s in range(len(self.stage_ids))} - {
            self.stage_ids[s] for s in self.skipped_stages()}
        apps = tuple(dataclasses.replace(a, stages=tuple(
            dataclasses.replace(s, jobs=tuple(by_id[j.job_id] for j in s.jobs), asha=None)
            for s in a.stages if s.stage_id in ran)) for a in trace.apps)
        return dataclasses.replace(trace, apps=apps, cluster=None)


def _read_through(name: str) -> property:
    return property(lambda self: getattr(self.compiled, name),
                    doc=f"``compiled.{name}`` (static, read-only)")


for _name in (f.name for f in fields(CompiledTrace)):
    setattr(ClusterState, _name, _read_through(_name))
