"""The scheduler process (root namespace): the registry's policy on a shadow cluster state.

It listens on ``<sock_dir>/sched.sock``. Agents connect and receive class pushes; the
driver connects and streams, in order, the events it applied to its own ``ClusterState``:
``timer`` (fire timers at t), ``done`` (flow key finished at t), ``progress`` (bytes sent
per active flow), then ``decide``. The shadow state replays them, so coflow ids and the
view match the driver's; on ``decide`` the policy orders the active coflows, the order
becomes K classes exactly as in the fluid backend, and changed classes are pushed to
every agent as ``{cid: tos}``. Decisions follow the policy's published reallocation
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
from pathlib import Path

import numpy as np

from emulation.mininet.protocol import LineChannel
from emulation.mininet.qos import tos_for_class
from emulation.scheduler import make_policy
from emulation.scheduler.base import check_order, classes_from_order, compress_classes
from emulation.state import ClusterState
from emulation.topology import TopologyConfig, build_topology
from workloads import trace as trace_mod
from workloads.config import build


def decide(state: ClusterState, policy, K: int, agents: list[LineChannel],
           pushed: dict[int, int], first_push: dict[int, float]) -> list[tuple[int, float]]:
    """Ask the policy, push changed classes to every agent; returns its byte wake-ups."""
    if not len(state.active_coflows):
        return []
    view, cids = state.view()
    d = policy.decide(view)
    order = check_order(d.order, len(cids))
    cls = (compress_classes(np.asarray(d.classes), K) if d.classes is not None
           else classes_from_order(order, K))
    cls = np.minimum(cls, K - 1)
    changed = {}
    for c, k in zip(cids.tolist(), cls.tolist()):
        tos = tos_for_class(int(k))
        if pushed.get(c) != tos:
            pushed[c] = tos
            changed[str(c)] = tos
            first_push.setdefault(c, time.monotonic())
    if changed:
        now = time.monotonic()
        for a in list(agents):
            try:
                a.send({"op": "classes", "tos": changed, "t": now})
            except OSError:
                agents.remove(a)
    return [(int(cids[i]), float(thr)) for i, thr in d.wake_on_sent]


def _wake_due(state: ClusterState, wakes: list[tuple[int, float]]) -> bool:
    """True once a coflow the policy watches has sent more than its threshold (FIFO-LM)."""
    for cid, thr in wakes:
        m = state.a_cf == cid
        if m.any() and state.tmpl_size[state.c_tmpl[cid]] - state.a_rem[m].sum() > thr:
            return True
    return False


def should_decide(*, asked: bool, wake_due: bool, per_flow: bool, active: frozenset,
                  decided_for: frozenset | None) -> bool:
    """Whether to ask the policy now: a due byte wake-up always; a driver's ``decide``
    always for a per-flow policy, and for a coflow-level one only if the set of active
    coflows differs from the one it last decided for."""
    if wake_due:
        return True
    return asked and (per_flow or active != decided_for)


def warm_up(trace, topo, cfg: dict) -> None:
    """Pay every one-time cost before the run starts: load (or compile) the numba kernels
    and run one decision of a throwaway policy instance on a throwaway state advanced to
    its first release. Measured: without it the first decision of a policy that reads the
    link loads (beamer, sincronia, varys) took 0.2 s with numba's cache warm and seconds
    with it cold, and every coflow released meanwhile ran in the default class."""
    from emulation import kernels
    kernels.warm_up()
    st = ClusterState(trace, topo, release_at_zero=cfg["release_at_zero"])
    while not st.active_coflows and np.isfinite(st.next_timer_s()):
        st.now = st.next_timer_s()
        st.fire_timers()
    if st.active_coflows:
        pol = make_policy(cfg["policy"])
        pol.prepare(coflow_sizes_bytes=st.coflow_sizes_bytes())
        view, cids = st.view()
        d = pol.decide(view)
        check_order(d.order, len(cids))
        st.complete_flows(np.array([0]), np.array([st.now]))


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
    K = cfg["priority_classes"]
    t_warm = time.perf_counter()
    warm_up(trace, topo, cfg)
    warm_up_s = time.perf_counter() - t_warm
    path = os.path.join(args.sock_dir, "sched.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path + ".tmp")
    os.replace(path + ".tmp", path)
    srv.listen(64)
    sel = selectors.DefaultSelector()
    sel.register(srv, selectors.EVENT_READ, None)
    agents: list[LineChannel] = []
    pushed: dict[int, int] = {}
    first_push: dict[int, float] = {}
    decisions = 0
    wakes: list[tuple[int, float]] = []
    per_flow = policy.default_realloc == "flow"
    decided_for: frozenset[int] | None = None  # active coflows at the last decision
    driver_seen = False
    running = True
    while running:
        for key, _ in sel.select(timeout=1.0):
            if key.data is None:
                conn, _ = srv.accept()
                sel.register(conn, selectors.EVENT_READ, LineChannel(conn))
                continue
            ch: LineChannel = key.data
            try:
                msgs = ch.recv_ready()
            except (EOFError, OSError):
                sel.unregister(ch.sock)
                if ch in agents:
                    agents.remove(ch)
                    ch.close()
                    continue
                running = not driver_seen
                ch.close()
                continue
            need_decide = wake_due = False
            for msg in msgs:
                op = msg["op"]
                if op == "hello":
                    if "host" in msg:
                        agents.append(ch)
                        if pushed:
                            ch.send({"op": "classes", "tos": {str(c): t for c, t in pushed.items()},
                                     "t": time.monotonic()})
                    else:
                        driver_seen = True
                elif op == "timer":
                    state.now = msg["t"]
                    state.fire_timers()
                elif op == "done":
                    keys = state.active_flow_keys()
                    mask = keys == msg["key"]
                    if mask.any():
                        state.now = msg["t"]
                        state.complete_flows(mask, np.array([msg["t"]]))
                elif op == "progress":
                    keys = state.active_flow_keys()
                    pos = {int(k): i for i, k in enumerate(keys)}
                    for k, sent in msg["sent"].items():
                        i = pos.get(int(k))
                        if i is not None:
                            size = state.tf_size[state.a_tf[i]]
                            state.a_rem[i] = max(size - sent, 0.0)
                    wake_due |= _wake_due(state, wakes)
                elif op == "decide":
                    need_decide = True
                elif op == "exit":
                    running = False
            active = frozenset(state.active_coflows)
            if should_decide(asked=need_decide, wake_due=wake_due, per_flow=per_flow,
                             active=active, decided_for=decided_for):
                # one decision per batch of replayed events, on the latest state
                wakes = decide(state, policy, K, agents, pushed, first_push)
                decided_for = active
                decisions += 1
    (run_dir / "scheduler.json").write_text(json.dumps(
        {"decisions": decisions, "warm_up_s": warm_up_s, "first_push_monotonic": {str(k): v for k, v in first_push.items()}}))
    for a in agents:
        a.close()
    srv.close()
    try:
        os.unlink(path)
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
