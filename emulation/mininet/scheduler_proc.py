"""The scheduler process (root namespace): the registry's policy on a shadow cluster state.

It listens on ``<sock_dir>/sched.sock``. Agents connect and receive class pushes; the
driver connects and streams, in order, the events it applied to its own ``ClusterState``:
``timer`` (fire timers at t), ``done`` (flow key finished at t), ``progress`` (bytes sent
per active flow), then ``decide``. The shadow state replays them through the one event
loop (``emulation/loop.py``, backend ``Shadow``), so coflow ids and the view match the
driver's; on ``decide`` the policy orders the active coflows, the order
becomes K classes exactly as in the fluid backend, numbered so that no coflow is put
behind packets a demoted coflow left in a queue (``qos.queue_safe_classes``: the same
order and grouping, so the same strict priority), and changed classes are pushed to
every agent as ``{cid: tos}``. Under a MADD policy (Varys) the same push carries the
flows' rates (``rate_Bps``: MADD on the shadow state's remaining bytes, as the fluid
backend computes it), which the agents enforce by pacing each flow's socket. Decisions follow the policy's published reallocation
semantics, as in the fluid twin: a ``"coflow"`` policy (``Policy.default_realloc``) is
asked again only when the set of active coflows changed or one of its byte wake-ups is
due, a ``"flow"`` policy at every ``decide``. (Asking Varys at every flow completion,
on remaining bytes, swapped coflows of similar bottleneck back and forth; each swap
preempts TCP flows mid-window.) Exits on the driver's ``exit`` or when the driver leaves;
writes ``scheduler.json`` (decisions, push times per coflow) into the run directory.
"""
from __future__ import annotations

import argparse
import json
import os
import selectors
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from emulation import allocation
from emulation.loop import Backend, Finished, Loop, Reached
from emulation.mininet.protocol import LineChannel
from emulation.mininet.agent import UNPACED
from emulation.mininet.qos import class_of_tos, queue_safe_classes, tos_for_class
from emulation.scheduler import make_policy
from emulation.scheduler.base import Policy, check_order, decision_classes
from emulation.state import ClusterState
from emulation.topology import TopologyConfig, build_topology
from workloads import trace as trace_mod
from workloads.config import build


# below this share of its slowest link a MADD rate is not paced (the flow waits in its class)
MIN_PACED_SHARE = 0.05


def decide_and_push(state: ClusterState, policy: Policy, K: int, agents: list[LineChannel],
           pushed: dict[int, int], first_push: dict[int, float],
           paced: dict[int, int] | None = None) -> list[tuple[int, float]]:
    """Ask the policy, push changed classes (and, for a MADD policy, ``paced``: changed
    per-flow pacing rates) to every agent; returns its byte wake-ups."""
    if not len(state.active_coflows):
        return []
    view, cids = state.view()
    d = policy.decide(view)
    order, cls = decision_classes(d, num_coflows=len(cids), num_classes=K)
    # the same classes, numbered so that no coflow queues behind a demoted one's packets
    prev = [class_of_tos(pushed[c]) if c in pushed else None for c in cids.tolist()]
    cls = queue_safe_classes(cls, prev, K)
    changed = {}
    for c, k in zip(cids.tolist(), cls.tolist()):
        tos = tos_for_class(int(k))
        if pushed.get(c) != tos:
            pushed[c] = tos
            changed[str(c)] = tos
            first_push.setdefault(c, time.monotonic())
    rates = {}
    if paced is not None:
        for key, r in madd_pacing(state, cids, order).items():
            if paced.get(key) != r:
                paced[key] = r
                rates[str(key)] = r
    if changed or rates:
        now = time.monotonic()
        msg = {"op": "classes", "tos": changed, "t": now}
        if rates:
            msg["rate_Bps"] = rates
        for a in list(agents):
            try:
                a.send(msg)
            except OSError:
                agents.remove(a)
    return [(int(cids[i]), float(thr)) for i, thr in d.wake_on_sent]


def madd_pacing(state: ClusterState, cids: np.ndarray, order: np.ndarray) -> dict[int, int]:
    """Pacing rate (bytes/s, integer) per active flow key: Varys's MADD over the coflows in
    ``order`` on the shadow state's remaining bytes, leftover shared max-min (the fluid
    backend's ``allocation="madd"``). A flow MADD gives (almost) nothing gets
    ``UNPACED``: it waits in its coflow's lower priority class instead, because a socket
    paced near zero schedules its next packet seconds ahead and keeps that departure
    time when the rate is raised later (measured on loopback)."""
    rank = np.zeros(len(state.c_job), dtype=np.int64)
    rank[cids[order]] = np.arange(len(order))
    rate = allocation.madd(state.a_pid, state.path_links, state.a_rem, rank[state.a_cf],
                           state.cap)
    slowest = state.cap[state.path_links[state.a_pid]].min(axis=1)
    paced = np.where(rate >= MIN_PACED_SHARE * slowest, np.round(rate), UNPACED)
    return dict(zip(state.active_flow_keys().tolist(), paced.astype(np.int64).tolist()))


def should_decide(*, asked: bool, wake_due: bool, per_flow: bool, active: frozenset,
                  decided_for: frozenset | None) -> bool:
    """Whether to ask the policy now: a due byte wake-up always; a driver's ``decide``
    always for a per-flow policy, and for a coflow-level one only if the set of active
    coflows differs from the one it last decided for."""
    if wake_due:
        return True
    return asked and (per_flow or active != decided_for)


class _ToFirstRelease(Backend):
    """Moves a state from timer to timer until a coflow is active (or none will be)."""

    def running(self, state: ClusterState) -> bool:
        return not state.active_coflows and np.isfinite(state.next_timer_s())

    def allocate(self, state: ClusterState, *, decide: bool) -> None:
        pass

    def events(self, state: ClusterState) -> list[Reached]:
        return [Reached(state.next_timer_s())]


def warm_up(trace, topo, cfg: dict) -> None:
    """Pay every one-time cost before the run starts: load (or compile) the numba kernels
    and run one decision of a throwaway policy instance on a throwaway state advanced to
    its first release. Measured: without it the first decision of a policy that reads the
    link loads (beamer, sincronia, varys) took 0.2 s with numba's cache warm and seconds
    with it cold, and every coflow released meanwhile ran in the default class."""
    from emulation import kernels
    kernels.warm_up()
    st = ClusterState(trace, topo, release_at_zero=cfg["release_at_zero"])
    Loop(st, _ToFirstRelease()).run()
    if st.active_coflows:
        pol = make_policy(cfg["policy"])
        pol.prepare(coflow_sizes_bytes=st.coflow_sizes_bytes())
        view, cids = st.view()
        d = pol.decide(view)
        order = check_order(d.order, len(cids))
        if pol.allocation == "madd":
            madd_pacing(st, cids, order)
        st.complete_flows(np.array([0]), np.array([st.now]))


class Shadow(Backend):
    """The shadow state's backend of the one event loop (``emulation/loop.py``): its clock
    follows the times the driver reports; its events are the driver's, replayed in order
    (``timer``: the clock reached t; ``done``: a flow finished at t; ``progress``: bytes
    sent, kept in the state); a decision is the policy asked (``should_decide``) and the
    changed classes pushed to the agents."""

    def __init__(self, srv: socket.socket, policy: Policy, *, num_classes: int):
        self.srv, self.policy, self.K = srv, policy, num_classes
        self.sel = selectors.DefaultSelector()
        self.sel.register(srv, selectors.EVENT_READ, None)
        self.agents: list[LineChannel] = []
        self.pushed: dict[int, int] = {}
        self.first_push: dict[int, float] = {}
        self.decisions = 0
        self.wakes: list[tuple[int, float]] = []
        self.per_flow = policy.default_realloc == "flow"
        # a MADD policy (Varys) sets every flow's rate: agents pace their sockets at it
        self.paced: dict[int, int] | None = {} if policy.allocation == "madd" else None
        self.decided_for: frozenset[int] | None = None  # active coflows at the last decision
        self.asked = self.wake_due = False
        self.driver_seen = False
        self.live = True
        self.ready: list = []  # channels with messages not yet read

    def running(self, state: ClusterState) -> bool:
        return self.live

    def allocate(self, state: ClusterState, *, decide: bool) -> None:
        """One decision per batch of replayed events, on the latest state, if
        ``should_decide`` says so."""
        active = frozenset(state.active_coflows)
        if should_decide(asked=self.asked, wake_due=self.wake_due, per_flow=self.per_flow,
                         active=active, decided_for=self.decided_for):
            self.wakes = decide_and_push(state, self.policy, self.K, self.agents, self.pushed,
                                         self.first_push, self.paced)
            self.decided_for = active
            self.decisions += 1
        self.asked = self.wake_due = False

    def wants_decision(self, state: ClusterState) -> bool:
        return self.asked or self.wake_due

    def events(self, state: ClusterState) -> Iterator[Finished | Reached]:
        """The events of the next batch of messages from one connection."""
        if not self.ready:
            self.ready = [key.data for key, _ in self.sel.select(timeout=1.0)]
            if not self.ready:
                return
        ch = self.ready.pop(0)
        if ch is None:
            conn, _ = self.srv.accept()
            self.sel.register(conn, selectors.EVENT_READ, LineChannel(conn))
            return
        try:
            msgs = ch.recv_ready()
        except (EOFError, OSError):
            self._closed(ch)
            return
        for msg in msgs:
            yield from self._replay(state, ch, msg)

    def _replay(self, state: ClusterState, ch: LineChannel, msg: dict) -> Iterator:
        op = msg["op"]
        if op == "hello":
            self._hello(ch, msg)
        elif op == "timer":
            yield Reached(msg["t"])
        elif op == "done":
            yield Finished(msg["t"], keys=np.array([msg["key"]]), ends_s=np.array([msg["t"]]))
        elif op == "progress":
            keys = state.active_flow_keys()
            pos = {int(k): i for i, k in enumerate(keys)}
            known = [(pos[int(k)], sent) for k, sent in msg["sent"].items() if int(k) in pos]
            if known:
                rows, sent = zip(*known)
                state.record_progress(np.array(rows), np.array(sent, dtype=float))
            self.wake_due |= state.wake_due(self.wakes)
        elif op == "decide":
            self.asked = True
        elif op == "exit":
            self.live = False

    def _hello(self, ch: LineChannel, msg: dict) -> None:
        if "host" not in msg:
            self.driver_seen = True
            return
        self.agents.append(ch)
        if self.pushed:
            ch.send({"op": "classes", "tos": {str(c): t for c, t in self.pushed.items()},
                     "t": time.monotonic()})

    def _closed(self, ch: LineChannel) -> None:
        """A connection closed: an agent is forgotten; the driver leaving ends the run."""
        self.sel.unregister(ch.sock)
        if ch in self.agents:
            self.agents.remove(ch)
        elif self.driver_seen:
            self.live = False
        ch.close()
        self.ready = [c for c in self.ready if c is not ch]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--run-dir", required=True)
    ap.add_argument("--sock-dir", required=True)
    args = ap.parse_args()
    run_dir = Path(args.run_dir)
    cfg = json.loads((run_dir / "scheduler_config.json").read_text())
    trace = trace_mod.load(run_dir / "trace_scaled.json")
    topo = build_topology(build(TopologyConfig, cfg["topology"], "topology"), trace.hosts)
    state = ClusterState(trace, topo, release_at_zero=cfg["release_at_zero"])
    policy = make_policy(cfg["policy"])
    policy.prepare(coflow_sizes_bytes=state.coflow_sizes_bytes())
    t_warm = time.perf_counter()
    warm_up(trace, topo, cfg)
    warm_up_s = time.perf_counter() - t_warm
    path = os.path.join(args.sock_dir, "sched.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path + ".tmp")
    srv.listen(64)  # listening before the path appears: the driver connects once it sees it
    os.replace(path + ".tmp", path)
    shadow = Shadow(srv, policy, num_classes=cfg["priority_classes"])
    Loop(state, shadow).run()
    # whole or not at all: the driver may stop this process while it writes
    tmp = run_dir / f".scheduler.json-{os.getpid()}"
    tmp.write_text(json.dumps(
        {"decisions": shadow.decisions, "warm_up_s": warm_up_s,
         "paced_flows": None if shadow.paced is None else len(shadow.paced),
         "first_push_monotonic": {str(k): v for k, v in shadow.first_push.items()}}))
    os.replace(tmp, run_dir / "scheduler.json")
    for a in shadow.agents:
        a.close()
    srv.close()
    try:
        os.unlink(path)
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
