"""Event-driven flow-level (fluid) simulator of a trace on a topology under one policy.

The engine owns the clock; ``ClusterState`` (``emulation/state.py``) owns the trace's BSP
state machine and its timer heap (counter for deterministic ties, as SimPy's ``core.py``).
Between events every active flow moves at a constant rate; at each event (stage start,
compute end -> coflow release, flow and coflow completion, a policy's byte-threshold
wake-up) the policy sees a fresh ``View``, returns an order, and the allocation kernels
(``allocation.py``) set new rates. Flows that finish within ``1e-9`` s of each other are
completed together.

``realloc`` says when rates are recomputed. ``"flow"`` (default, exact max-min / work
conservation at every instant): at every event, flow completions included. ``"coflow"``:
only when a coflow is released or completes and at stage and policy events, as Varys
does and as coflowsim simulates it; a flow that finishes before the rest of its coflow
leaves its share idle until the next such event. Flows still end at their exact times.
"""
from __future__ import annotations

import time

import numpy as np

from emulation.fluid import allocation
from emulation.scheduler.base import (DEFAULT_PRIORITY_CLASSES, Policy, check_order,
                                      classes_from_order, compress_classes)
from emulation.state import EPS_T, ClusterState, Records
from emulation.topology import Topology
from workloads.trace import Trace

REALLOC_MODES = ("flow", "coflow")


class FluidSimulator:
    """Simulate ``trace`` on ``topology`` under ``policy``; call ``run()`` once."""

    def __init__(self, trace: Trace, topology: Topology, policy: Policy, *,
                 priority_classes: int = DEFAULT_PRIORITY_CLASSES,
                 release_at_zero: bool = False, realloc: str = "flow",
                 record_events: bool = False, check_invariants: bool = False):
        if realloc not in REALLOC_MODES:
            raise ValueError(f"realloc must be one of {REALLOC_MODES}, got {realloc!r}")
        self.policy = policy
        self.K = priority_classes
        self.realloc = realloc
        self.check_invariants = check_invariants
        self.state = ClusterState(trace, topology, release_at_zero=release_at_zero,
                                  record_events=record_events)
        self.index = allocation.link_index(self.state.path_links, self.state.L + 1)
        self.num_decisions = 0
        self.invariant_checks = 0
        self._wakes: list[tuple[int, float]] = []

    def run(self) -> Records:
        """Simulate to the end; the records of every stage, coflow and flow."""
        wall0 = time.perf_counter()
        st = self.state
        self.policy.prepare(coflow_sizes_bytes=st.coflow_sizes_bytes())
        per_flow = self.realloc == "flow"
        dirty = True
        while st.busy():
            if dirty:
                self._reallocate()
                dirty = False
            t_next = st.next_timer_s()
            if len(st.a_rem):
                with np.errstate(divide="ignore", invalid="ignore"):
                    ttf = np.where(st.a_rate > 0, st.a_rem / st.a_rate, np.inf)
                if per_flow:
                    t_next = min(t_next, st.now + float(ttf.min()))
                else:
                    cuts = np.flatnonzero(np.r_[True, st.a_cf[1:] != st.a_cf[:-1]])
                    t_next = min(t_next, st.now + float(np.maximum.reduceat(ttf, cuts).min()))
            t_next = min(t_next, self._next_wake())
            if not np.isfinite(t_next):
                raise RuntimeError(f"simulation stalled at t={st.now:.6f}s with "
                                   f"{len(st.a_rem)} flows at rate 0")
            dt = max(0.0, t_next - st.now)
            t_prev = st.now
            st.now = max(st.now, t_next)
            if len(st.a_rem):
                finished = ttf <= dt + EPS_T
                if dt > 0:
                    st.a_rem -= st.a_rate * dt
                finished |= st.a_rem <= 1e-9 * st.tf_size[st.a_tf] + 1e-6
                if finished.any():
                    ends = np.minimum(t_prev + ttf[finished], st.now)
                    if st.complete_flows(finished, ends) or per_flow:
                        dirty = True
            if st.fire_timers():
                dirty = True
            if self._wakes and self._wake_due():
                dirty = True
        self.wall_s = time.perf_counter() - wall0
        return st.records({"num_decisions": self.num_decisions, "sim_wall_s": self.wall_s})

    # ------------------------------------------------------------------ policy
    def _next_wake(self) -> float:
        best = np.inf
        for cid, thr in self._wakes:
            m = self.state.a_cf == cid
            r = self.state.a_rate[m].sum()
            if r > 0:
                sent = self.state.tmpl_size[self.state.c_tmpl[cid]] - self.state.a_rem[m].sum()
                best = min(best, self.state.now + max(0.0, thr + 1.0 - sent) / r)
        return best

    def _wake_due(self) -> bool:
        for cid, thr in self._wakes:
            m = self.state.a_cf == cid
            if m.any() and self.state.tmpl_size[self.state.c_tmpl[cid]] - self.state.a_rem[m].sum() > thr:
                return True
        return False

    def _reallocate(self) -> None:
        st = self.state
        self._wakes = []
        if len(st.a_rem) == 0:
            st.a_rate = np.zeros(0)
            return
        view, cids = st.view()
        decision = self.policy.decide(view)
        self.num_decisions += 1
        order = check_order(decision.order, len(cids))
        if decision.classes is not None:
            cls = compress_classes(np.asarray(decision.classes), self.K)
        else:
            cls = classes_from_order(order, self.K)
        c_local = np.full(len(st.c_job), -1, dtype=np.int64)
        c_local[cids] = np.arange(len(cids))
        flow_c = c_local[st.a_cf]
        if self.policy.allocation == "madd":
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order))
            rate = allocation.madd(st.a_pid, st.path_links, st.a_rem, rank[flow_c], st.cap,
                                   self.index)
        else:
            rate = allocation.priority(st.a_pid, st.path_links, cls[flow_c], st.cap, self.index)
        st.a_rate = rate
        starting = (rate > 0) & np.isnan(st.a_start)
        st.a_start[starting] = st.now
        self._wakes = [(int(cids[i]), float(thr)) for i, thr in decision.wake_on_sent]
        if self.check_invariants:
            self._check(rate)

    def _check(self, rate: np.ndarray) -> None:
        st = self.state
        links = st.path_links[st.a_pid]
        use = allocation.link_usage(links, rate, st.L + 1)[: st.L]
        cap = st.cap[: st.L]
        if (use > cap * (1 + 1e-7) + 1e-6).any():
            raise AssertionError(f"t={st.now}: link over capacity")
        saturated = use >= cap * (1 - 1e-7) - 1e-6
        sat_ext = np.concatenate([saturated, [False]])
        if not sat_ext[links].any(axis=1).all():
            raise AssertionError(f"t={st.now}: a flow has no saturated link (not work-conserving)")
        self.invariant_checks += 1
