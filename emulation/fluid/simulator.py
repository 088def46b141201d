"""Event-driven flow-level (fluid) simulator of a trace on a topology under one policy.

The engine is the simulated-time backend of the one event loop (``emulation/loop.py``):
it moves the clock; ``ClusterState`` (``emulation/state.py``) owns the trace's BSP
state machine and its timer heap (counter for deterministic ties, as SimPy's ``core.py``).
Between events every active flow moves at a constant rate; at each event (stage start,
compute end -> coflow release, flow and coflow completion, a policy's byte-threshold
wake-up) the policy sees a fresh ``View``, returns an order, and the allocation kernels
(``emulation/allocation_kernels.py``, compiled) set new rates. Flows that finish
within ``1e-9`` s of each other are completed together.

``allocation`` (default: the policy's own) says how an order becomes rates: ``"priority"``
(strict priority classes, max-min inside one) or ``"madd"`` (Varys); the packet
backend's twin forces ``"priority"``, the only mechanism the emulation enforces.

``realloc`` says when the policy is asked and when rates are recomputed. ``"flow"``
(default, exact max-min / work conservation at every instant): both at every event,
flow completions included. ``"coflow"``: both only when a coflow is released or
completes and at stage and policy events, as Varys does and as coflowsim simulates it; a
flow that finishes before the rest of its coflow leaves its share idle until the next
such event. ``"queues"``: the policy is asked at those coflow-level events only, and its
classes re-share the rates at every flow completion, as strict-priority switch queues
do under a scheduler that re-prioritises at coflow events (Sincronia's own simulator;
the packet backend's scheduler process); under MADD allocation it keeps the SEBF ranks
and reruns MADD on the remaining bytes at each flow completion (a rate-setting
scheduler between its decisions, neither Varys as published nor priority queues).
Flows end at their exact times in every mode.

Events that only complete flows under kept classes (``"queues"``, or ``"flow"`` with a
policy that declares ``same_decision_at_flow_completions``: fair sharing, Sincronia,
``beamer`` and ``beamer-coflow``) run in compiled loops that recompute the rates with the same arithmetic as the Python path:
``event_kernels.flow_events`` for one class, ``event_kernels.queue_events`` for several;
with a policy's byte wake-up pending (FIFO-LM), up to a time before which it cannot be
due (``_wake_horizon_s``), the Python path taking the events after it.
``reuse_decisions=False`` takes the Python path instead (and, under ``"flow"``, asks the
policy every time): the reference the tests compare with; so does a subclass that
overrides ``_reallocate``, and a policy class that overrides ``decide`` without declaring
it again. ``num_decisions`` counts rate allocations either way.

``packet_costs`` (``emulation/packet_model.py``; default None, the ideal model):
what a packet network adds to each flow. Links run at ``rate_efficiency`` x their rate,
coflows join ``release_latency_s`` after their release, and at each decision a flow left
at rate 0 is charged its resume cost as bytes when it is served again
(``_charge_resumed``); rates then change only at the engine's Python events, never in
the compiled flow-completion loop.
"""
from __future__ import annotations

import time

import numpy as np

from emulation import allocation_kernels
from emulation.fluid import event_kernels
from emulation.allocation import link_index, link_usage
from emulation.packet_model import PacketCosts
from emulation.loop import Backend, Finished, Loop, Reached
from emulation.scheduler.base import DEFAULT_PRIORITY_CLASSES, Policy, decision_classes
from emulation.records import Records
from emulation.state import EPS_T, ClusterState
from emulation.topology import Topology, with_rates_scaled
from workloads.trace import Trace

REALLOC_MODES = ("flow", "coflow", "queues")
ALLOCATIONS = ("priority", "madd")


def _declares_same_decision(policy: Policy) -> bool:
    """True if the class that defines ``policy.decide`` itself declares
    ``same_decision_at_flow_completions`` (a subclass that overrides ``decide`` does not
    inherit the promise)."""
    for klass in type(policy).__mro__:
        if "decide" in vars(klass):
            return bool(vars(klass).get("same_decision_at_flow_completions", False))
    return False


class FluidSimulator(Backend):
    """Simulate ``trace`` on ``topology`` under ``policy``; call ``run()`` once."""

    def __init__(self, trace: Trace, topology: Topology, policy: Policy, *,
                 priority_classes: int = DEFAULT_PRIORITY_CLASSES,
                 release_at_zero: bool = False, realloc: str = "flow",
                 allocation: str | None = None,
                 record_events: bool = False, check_invariants: bool = False,
                 reuse_decisions: bool = True, packet_costs: PacketCosts | None = None):
        if realloc not in REALLOC_MODES:
            raise ValueError(f"realloc must be one of {REALLOC_MODES}, got {realloc!r}")
        allocation = allocation or policy.allocation
        if allocation not in ALLOCATIONS:
            raise ValueError(f"allocation must be one of {ALLOCATIONS}, got {allocation!r}")
        self.policy = policy
        self.allocation = allocation
        self.K = priority_classes
        self.realloc = realloc
        self.check_invariants = check_invariants
        self.reuse_decisions = reuse_decisions
        self.costs = packet_costs
        if packet_costs is not None:
            topology = with_rates_scaled(topology, packet_costs.rate_efficiency)
        self.state = ClusterState(
            trace, topology, release_at_zero=release_at_zero, record_events=record_events,
            release_latency_s=packet_costs.release_latency_s if packet_costs else 0.0)
        self._stopped_at: dict[int, float] = {}  # flow key -> time a decision stopped it
        self._extra_bytes: dict[int, float] = {}  # flow key -> bytes charged in all
        self.index = link_index(self.state.path_links, self.state.L + 1)
        # scratch of the priority kernel (restored by it): per-path flow counts, link map
        self._w_scratch = np.zeros(len(self.state.path_links), dtype=np.int64)
        self._lmap_scratch = np.full(self.state.L + 1, -1, dtype=np.int64)
        self._ttf = np.empty(0)  # times to finish of the active flows (reused buffer)
        self._classes = np.zeros(0, dtype=np.int64)  # last decision: class per coflow id
        self._num_classes = 0
        self.num_decisions = 0
        self.num_reused_decisions = 0  # of those, made in compiled code (flow-only events)
        self.invariant_checks = 0
        self._wakes: list[tuple[int, float]] = []

    def run(self) -> Records:
        """Simulate to the end; the records of every stage, coflow and flow."""
        wall0 = time.perf_counter()
        st = self.state
        self.policy.prepare(coflow_sizes_bytes=st.coflow_sizes_bytes())
        per_flow = self.realloc in ("flow", "queues")  # rates at every flow completion
        hooked = type(self)._reallocate is not FluidSimulator._reallocate
        # the policy is asked at flow completions too ("flow"), unless it promises the
        # same answer (and no subclass hooks _reallocate); at "queues" it never is: its
        # last classes are kept
        keep = self.realloc == "queues" or (per_flow and self.reuse_decisions and not hooked
                                            and _declares_same_decision(self.policy))
        # events that only complete flows run compiled under kept classes, unless a
        # subclass hooks _reallocate (it would miss them)
        self._compiled_flow_events = (
            keep and self.reuse_decisions and self.allocation == "priority"
            and not self.check_invariants and not hooked
            and self.costs is None)  # packet costs are charged as rates change
        Loop(st, self, per_flow=per_flow, keep_classes=keep).run()
        self.wall_s = time.perf_counter() - wall0
        return st.records({"num_decisions": self.num_decisions, "sim_wall_s": self.wall_s})

    # ------------------------------------------------------------------ the loop's backend
    def allocate(self, state: ClusterState, *, decide: bool) -> None:
        self._reallocate(decide=decide)

    def events(self, state: ClusterState) -> list[Finished | Reached]:
        """Simulated time: to the next completion, timer or wake-up (through the compiled
        flow-completion loop where it applies)."""
        step = None
        if self._compiled_flow_events and len(state.a_rem):
            stop_s = self._wake_horizon_s() if self._wakes else np.inf
            if stop_s > state.now:
                step = self._flow_events(stop_s)
        if step is None:
            step = self._advance()
        finished, ends = step
        now = state.now
        return [Finished(now, ends, rows=finished), Reached(now)] if len(finished) else [
            Reached(now)]

    def wants_decision(self, state: ClusterState) -> bool:
        return bool(self._wakes) and state.wake_due(self._wakes)

    def _ttf_buffer(self, n: int) -> np.ndarray:
        """A reused buffer for the active flows' times to finish (length >= n)."""
        if len(self._ttf) < n:
            self._ttf = np.empty(max(n, 2 * len(self._ttf)))
        return self._ttf

    def _advance(self) -> tuple[np.ndarray, np.ndarray]:
        """Move time to the next event (completion, timer, wake-up); the active flows
        that finished then (indices, ascending) and their end times."""
        st = self.state
        t_next = st.next_timer_s()
        n = len(st.a_rem)
        if n:
            tt = self._ttf_buffer(n)[:n]
            first = event_kernels.time_to_finish(st.a_rem, st.a_rate, tt, st.a_start, st.now)
            if self.realloc == "coflow":
                first = event_kernels.min_coflow_finish(tt, st.a_cf, len(st.c_job))
            t_next = min(t_next, st.now + first)
        t_next = min(t_next, self._next_wake())
        if not np.isfinite(t_next):
            raise RuntimeError(f"simulation stalled at t={st.now:.6f}s with "
                               f"{len(st.a_rem)} flows at rate 0")
        dt = max(0.0, t_next - st.now)
        t_prev = st.now
        st.advance_clock(t_next)
        if not n:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        finished = event_kernels.advance(st.a_rem, st.a_rate, tt, st.a_tol, dt, EPS_T)
        return finished, np.minimum(t_prev + tt[finished], st.now)

    def _flow_events(self, stop_s: float = np.inf) -> tuple[np.ndarray, np.ndarray] | None:
        """Handle the coming events that only complete flows in compiled code, reusing
        the last decision's classes, up to the last one at or before ``stop_s``; then the
        event it stopped at, advanced (finished flows and end times, for
        ``complete_flows``), or None if it stopped before advancing (the caller moves
        time itself)."""
        st = self.state
        n0 = len(st.a_rem)
        tt = self._ttf_buffer(n0)
        done = (np.empty(n0, dtype=np.int64), np.empty(n0, dtype=np.int64), np.empty(n0),
                np.empty(n0))
        rate = st.a_rate
        if self._num_classes == 1:
            ptr, owners = self.index
            now, n, steps, k, advanced, finished, ends = event_kernels.flow_events(
                st.now, st.next_timer_s(), stop_s, EPS_T, n0, st.a_tf, st.a_cf, st.a_pid, st.a_rem,
                st.a_start, rate, st.a_tol, st.c_flows_left, st.path_flows, st.link_flows,
                st.path_links, ptr, owners, st.cap, tt, *done)
        else:
            now, n, steps, k, advanced, finished, ends = event_kernels.queue_events(
                st.now, st.next_timer_s(), stop_s, EPS_T, n0, st.a_tf, st.a_cf, st.a_pid, st.a_rem,
                st.a_start, rate, st.a_tol, st.c_flows_left, self._classes,
                self._num_classes, st.path_flows, st.link_flows, st.path_links, st.cap, tt,
                *done)
        st.advance_clock(now)
        self.num_decisions += steps
        self.num_reused_decisions += steps
        if k:
            st.record_completed(*(d[:k].copy() for d in done))
        st.truncate_active(n)
        st.set_rates(rate[:n])
        return (finished, ends) if advanced else None

    def _wake_horizon_s(self) -> float:
        """A time up to which no requested wake-up (``wake_on_sent``: a coflow's sent
        bytes above a threshold) can be due or be the next event, so events that only
        complete flows can run compiled until then with the Python path's results: the
        coflow sends at most the capacity of its flows' first links together (a
        feasible allocation never exceeds a link), and its sent bytes jump at a flow
        completion by at most the flow's finishing tolerances, which the margin covers
        with rounding. ``now`` when a wake-up may be near (the Python path then takes
        the next event)."""
        st = self.state
        horizon = np.inf
        for cid, thr in self._wakes:
            m = st.a_cf == cid
            if not m.any():
                continue  # nothing of the coflow active: its wake-up is never due
            size = st.tmpl_size[st.c_tmpl[cid]]
            sent = st.coflow_sent_bytes([cid])[0]
            bound = st.cap[np.unique(st.path_links[st.a_pid[m], 0])].sum()  # bytes/s
            margin = (st.a_tol[m].sum() + m.sum() * st.cap[: st.L].max(initial=0.0) * EPS_T
                      + 1e-6 * (size + abs(thr)) + 1.0)
            gap = thr - sent - margin
            if not gap > 0 or not np.isfinite(bound):
                return st.now
            horizon = min(horizon, st.now + gap / bound)
        return horizon

    # ------------------------------------------------------------------ policy
    def _next_wake(self) -> float:
        """When the first requested byte wake-up is due at the current rates (inf if
        none)."""
        st = self.state
        best = np.inf
        for cid, thr in self._wakes:
            r = st.a_rate[st.a_cf == cid].sum()
            if r > 0:
                sent = st.coflow_sent_bytes([cid])[0]
                best = min(best, st.now + max(0.0, thr + 1.0 - sent) / r)
        return best

    def _reallocate(self, *, decide: bool = True) -> None:
        """New rates for the active flows: ask the policy (``decide``) or keep its last
        decision (after a flow completion under ``realloc="queues"``, or under ``"flow"``
        for a policy that declares ``same_decision_at_flow_completions``; its wake-ups
        stand)."""
        st = self.state
        if not decide:
            self.num_decisions += 1
            rate = self._rates() if len(st.a_rem) else np.zeros(0)
            if self.costs is not None and len(rate):
                self._charge_resumed(rate)
            st.set_rates(rate)
            if self.check_invariants and len(st.a_rem):
                self._check(st.a_rate)
            return
        self._wakes = []
        if len(st.a_rem) == 0:
            st.set_rates(np.zeros(0))
            return
        view, cids = st.view()
        decision = self.policy.decide(view)
        self.num_decisions += 1
        order, cls = decision_classes(decision, num_coflows=len(cids), num_classes=self.K)
        per_cid = np.zeros(len(st.c_job), dtype=np.int64)  # class (or rank) by coflow id
        if self.allocation == "madd":
            per_cid[cids[order]] = np.arange(len(order))
            self._classes, self._num_classes = per_cid, len(order)
        else:
            per_cid[cids] = cls
            self._classes, self._num_classes = per_cid, int(cls.max()) + 1
        rate = self._rates()
        if self.costs is not None:
            self._charge_resumed(rate)
        st.set_rates(rate)
        self._wakes = [(int(cids[i]), float(thr)) for i, thr in decision.wake_on_sent]
        if self.check_invariants:
            self._check(rate)

    def _charge_resumed(self, rate: np.ndarray) -> None:
        """Note when ``rate`` stops a flow; charge a flow it serves again its resume cost
        (bytes: the cost x its path's rate): ``wait_resume_s`` if it had sent nothing,
        ``preempt_resume_s`` if it had and was stopped for ``stall_after_s`` or longer."""
        st, costs = self.state, self.costs
        keys = st.active_flow_keys()
        was_stopped = np.isin(keys, np.fromiter(self._stopped_at, np.int64,
                                                len(self._stopped_at)))
        for i in np.flatnonzero((rate <= 0.0) & ~was_stopped).tolist():
            key = int(keys[i])
            sent = st.a_rem[i] < st.tf_size[st.a_tf[i]] + self._extra_bytes.get(key, 0.0)
            self._stopped_at[key] = st.now if sent else -1.0  # -1: never served yet
        for i in np.flatnonzero((rate > 0.0) & was_stopped).tolist():
            key = int(keys[i])
            t0 = self._stopped_at.pop(key)
            if t0 < 0:
                cost_s = costs.wait_resume_s
            elif st.now - t0 >= costs.stall_after_s:
                cost_s = costs.preempt_resume_s
            else:
                continue
            extra = cost_s * st.cap[st.path_links[st.a_pid[i]]].min()
            self._extra_bytes[key] = self._extra_bytes.get(key, 0.0) + extra
            st.a_rem[i] += extra

    def _rates(self) -> np.ndarray:
        """Rates of the active flows under the last decision (``self._classes``: class,
        or MADD rank, per coflow id)."""
        st = self.state
        ptr, owners = self.index
        if self.allocation == "madd":
            return allocation_kernels.madd_rates(
                st.a_pid, st.a_cf, self._classes, st.a_rem, st.path_links, ptr, owners, st.cap)
        return allocation_kernels.priority_rates(
            st.a_pid, st.a_cf, self._classes, self._num_classes, st.path_flows, st.link_flows,
            st.path_links, ptr, owners, st.cap, self._w_scratch, self._lmap_scratch)

    def _check(self, rate: np.ndarray) -> None:
        st = self.state
        links = st.path_links[st.a_pid]
        use = link_usage(links, rate, st.L + 1)[: st.L]
        cap = st.cap[: st.L]
        if (use > cap * (1 + 1e-7) + 1e-6).any():
            raise AssertionError(f"t={st.now}: link over capacity")
        saturated = use >= cap * (1 - 1e-7) - 1e-6
        sat_ext = np.concatenate([saturated, [False]])
        if not sat_ext[links].any(axis=1).all():
            raise AssertionError(f"t={st.now}: a flow has no saturated link (not work-conserving)")
        if not (np.array_equal(st.path_flows, np.bincount(st.a_pid, minlength=len(st.path_links)))
                and np.array_equal(st.link_flows, np.bincount(links.ravel(), minlength=st.L + 1))):
            raise AssertionError(f"t={st.now}: per-path / per-link flow counts are stale")
        self.invariant_checks += 1
