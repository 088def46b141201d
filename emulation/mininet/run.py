"""One packet-level run: scale the trace, build the network, start the scheduler process and
the host agents, drive the trace in real time, capture, and write the records.

Scale (recorded in run.json): link rates x ``rate_scale``; time x ``time_scale`` (compute
gaps and arrivals); bytes x ``rate_scale * time_scale``, so every transfer takes
``time_scale`` times its unscaled duration and the compute/communication ratio is kept.
Records share the fluid backend's time base: ``start_s``, ``end_s``, ``sct_s``,
``release_s``, ``cct_s`` and ``size_bytes`` are in TRACE seconds and bytes (emulated
seconds / ``time_scale``, the trace's own flow sizes), so a Mininet run's files and its
fluid twin's compare column by column. The emulated figures sit beside them under their
own names (``*_emulated_s``, ``size_emulated_bytes``; run.json ``avg_sct_emulated_s`` ...).
Wall-clock quantities of the emulation itself (``class_latency_emulated_s``) stay in
emulated seconds and say so in their names.

Capture-derived records (``*_capture.csv``, see ``emulation/mininet/capture.py``) give
the same completion times measured from the packets that crossed the switch.

The driver (this process, root namespace) owns the authoritative ``ClusterState`` and
its timers in wall-clock time; it tells sender agents to start flows when coflows are
released and learns completions from them. Every event it applies is forwarded to the
scheduler process, which pushes priority classes to the agents. If the scheduler dies
the run goes on in the default class and run.json says ``degraded: true`` (with
``degraded_reasons``), as it does when the capture dies or an injected fault (``Faults``)
set a link down for a while; if an agent dies, a flow fails, or nothing progresses for
``stall_timeout_s``, the run stops with a one-line error. Teardown runs on every exit path
(exceptions, SIGINT, SIGTERM): agents, scheduler, tcpdump (only PIDs started here),
network, socket directory. A run killed outright (SIGKILL) takes its processes with it
(parent-death signal); what it leaves in the root namespace the next run clears
(``emulation/mininet/leftovers.py``), with a note on stderr.
"""
from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from emulation.ids import parse_coflow_id, parse_flow_id
from emulation.lifetime import parent_death_setter
from emulation.mininet.capture import Capture, capture_records
from emulation.mininet.leftovers import SOCK_DIR_PREFIX, clear_dead
from emulation.mininet.net import build_net, require_root
from emulation.mininet.protocol import LineChannel
from emulation.records import (cluster_facts, file_sha256, git_sha, summary_stats, versions,
                               write_records)
from emulation.scheduler.lower_bound import lower_bound
from emulation.state import ClusterState
from emulation.topology import TopologyConfig, build_topology
from workloads import trace as trace_mod
from workloads.config import to_dict
from workloads.trace import CoflowSpec, Flow, Trace

REPO = Path(__file__).resolve().parents[2]
# The scheduler process runs ahead of the data path for the CPU (as root; a real coflow
# scheduler has a machine of its own): on the 2 cores, agents moving bytes and the capture
# otherwise delayed its class pushes (class latency p95 up to 23 ms in single runs).
SCHEDULER_NICE = -10


class RunError(RuntimeError):
    """A packet-level run failed; the message is one line (host named if an agent died)."""


def scale_trace(trace: Trace, *, rate_scale: float, time_scale: float) -> Trace:
    """Bytes x rate_scale*time_scale (>= 1), compute and arrivals x time_scale."""
    b = rate_scale * time_scale

    def job(j):
        cfs = tuple(CoflowSpec(tuple(Flow(f.src, f.dst, max(1, round(f.size_bytes * b)))
                                     for f in c.flows)) for c in j.coflows)
        return replace(j, compute_s=j.compute_s * time_scale, coflows=cfs,
                       model_size_bytes=max(1, round(j.model_size_bytes * b)) if j.gpus else 0)

    apps = tuple(replace(a, arrival_s=a.arrival_s * time_scale,
                         stages=tuple(replace(s, jobs=tuple(job(j) for j in s.jobs)) for s in a.stages))
                 for a in trace.apps)
    return replace(trace, apps=apps, meta={**trace.meta, "scaled": {
        "rate_scale": rate_scale, "time_scale": time_scale, "size_scale": b}})


def _on_signal(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


@dataclass(frozen=True)
class Faults:
    """Faults injected into a run (robustness tests), times in emulated seconds from the
    start of the trace: kill one host's agent, kill the capture (every tcpdump this run
    started), or set one host's link down for a while."""

    kill_agent: tuple[str, float] | None = None            # (host, after_s)
    kill_capture_after_s: float | None = None
    link_down: tuple[str, float, float] | None = None      # (host, at_s, for_s)


STALL_TIMEOUT_S = 60.0  # wall seconds without any progress before a run is abandoned
# How often the driver samples CLOCK_REALTIME - CLOCK_MONOTONIC (wall seconds): a step of
# the realtime clock then blurs the capture's times only inside one such interval.
CLOCK_SAMPLE_S = 0.02


def run_mininet(*, trace: Trace, trace_path: str | Path, topo_cfg: TopologyConfig, policy: str,
                outdir: str | Path, priority_classes: int = 8, rate_scale: float = 0.003,
                time_scale: float = 2.0, release_at_zero: bool = False,
                kill_scheduler_after_s: float | None = None, capture: bool = True,
                faults: Faults | None = None, stall_timeout_s: float = STALL_TIMEOUT_S,
                extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run ``trace`` over real TCP in Mininet; write records to ``outdir``; return run.json.

    RunError (after a full teardown) if an agent dies or nothing progresses for
    ``stall_timeout_s``; a run that completes despite a lost scheduler or capture, or a
    link set down by ``faults``, is marked ``degraded`` with ``degraded_reasons``."""
    why = require_root()
    if why:
        raise RunError(why)
    if not 1 <= priority_classes <= 8:
        raise RunError("the packet backend supports 1..8 priority classes")
    from emulation import kernels
    kernels.warm_up()  # the driver's state retires flows with numba: load it before t = 0
    wall0 = time.perf_counter()
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    scaled = scale_trace(trace, rate_scale=rate_scale, time_scale=time_scale)
    trace_mod.save(scaled, out / "trace_scaled.json")
    topo_scaled_cfg = replace(topo_cfg, link_rate_bps=topo_cfg.link_rate_bps * rate_scale)
    topo = build_topology(topo_scaled_cfg, scaled.hosts)
    (out / "scheduler_config.json").write_text(json.dumps({
        "policy": policy, "priority_classes": priority_classes, "release_at_zero": release_at_zero,
        "topology": to_dict(topo_scaled_cfg)}))
    state = ClusterState(scaled, topo, release_at_zero=release_at_zero)
    for line in clear_dead():
        print(f"note: cleared what an interrupted packet-level run left: {line}", file=sys.stderr)
    sock_dir = tempfile.mkdtemp(prefix=SOCK_DIR_PREFIX)
    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    en = cap = sched = drv = None
    agents: dict[str, Any] = {}
    files: list[Any] = []  # log files handed to child processes
    chans: dict[str, LineChannel] = {}
    try:
        en = build_net(topo, num_classes=priority_classes, dirs=(sock_dir,))
        ip_of = en.ips
        ports = en.receiver_ports()
        if capture:
            (out / "capture_ports.json").write_text(json.dumps(ports))  # iface -> receiver ip
            cap = Capture(out, ports)
        drv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        drv.bind(os.path.join(sock_dir, "driver.sock"))
        drv.listen(len(topo.hosts) + 4)
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        die_with_run = parent_death_setter()
        sched = subprocess.Popen([sys.executable, "-m", "emulation.mininet.scheduler_proc",
                                  "--run-dir", str(out), "--sock-dir", sock_dir],
                                 cwd=REPO, env=env, stderr=_log_file(files, out / "scheduler.log"),
                                 preexec_fn=lambda: (os.nice(SCHEDULER_NICE), die_with_run()))
        # the scheduler binds its socket after its warm-up (numba kernels: seconds when cold)
        _wait_for(lambda: os.path.exists(os.path.join(sock_dir, "sched.sock")), 120,
                  "the scheduler process did not start (see scheduler.log)", sched)
        sch = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sch.connect(os.path.join(sock_dir, "sched.sock"))
        sched_ch = LineChannel(sch)
        sched_ch.send({"op": "hello", "role": "driver"})
        logs = out / "agents"
        logs.mkdir(exist_ok=True)
        for h in topo.hosts:
            agents[h] = en.host(h).popen(
                [sys.executable, "-m", "emulation.mininet.agent", "--host", h, "--sock-dir", sock_dir],
                cwd=str(REPO), env=env, stdout=_log_file(files, logs / f"{h}.out"),
                stderr=subprocess.STDOUT)
        drv.settimeout(30)
        for _ in topo.hosts:
            try:
                conn, _ = drv.accept()
                conn.settimeout(30)
                ch = LineChannel(conn)
                host, is_ready = None, False
                while not is_ready:
                    for msg in ch.recv_ready():
                        host = msg.get("host", host)
                        is_ready = is_ready or msg["op"] == "ready"
            except (OSError, EOFError):
                dead = [h for h, p in agents.items() if p.poll() is not None]
                raise RunError(f"agent on host {dead[0] if dead else '?'} did not start "
                               f"(see agents/)") from None
            chans[host] = ch
        time.sleep(0.2)  # let agents connect to the scheduler
        result = _drive(state, chans, agents, sched, sched_ch, ip_of,
                        kill_scheduler_after_s=kill_scheduler_after_s, faults=faults or Faults(),
                        cap=cap, net=en, stall_timeout_s=stall_timeout_s)
        for ch in chans.values():
            ch.sock.settimeout(10)
            ch.send({"op": "exit"})
        applied: dict[str, dict[int, float]] = {}  # host -> cid -> class first set
        lost = False
        for h, ch in chans.items():
            for _ in range(100):
                msgs = ch.recv_ready()
                bye = [m for m in msgs if m["op"] == "bye"]
                if bye:
                    applied[h] = {int(k): v for k, v in bye[0]["applied"].items()}
                    lost |= bye[0]["scheduler_lost"]
                    break
        try:
            sched_ch.send({"op": "exit"})
        except OSError:
            pass
    finally:
        for s in old:  # a second Ctrl-C must not cut the teardown short
            signal.signal(s, signal.SIG_IGN)
        try:
            _teardown(agents, sched, cap, en, sock_dir)
            for f in [*files, drv, *(c.sock for c in chans.values())]:
                if f is not None:
                    f.close()
        finally:
            for s, h in old.items():
                signal.signal(s, h)
    # ---------------------------------------------------------------- records
    t0 = result["t0"]
    flows_log = result["flows"]
    rec = state.records({"sim_wall_s": time.perf_counter() - wall0})
    stages, coflows, flows = to_trace_time(rec, state, trace, time_scale=time_scale)
    stats_em = summary_stats(np.array([s["sct_emulated_s"] for s in stages]))
    stats = summary_stats(np.array([s["sct_s"] for s in stages]))
    cct = np.array([c["cct_s"] for c in coflows])
    sched_info = {}
    for partial in out.glob(".scheduler.json-*"):  # a scheduler stopped while it wrote
        partial.unlink()
    if (out / "scheduler.json").exists():
        sched_info = json.loads((out / "scheduler.json").read_text())
    reasons = list(result["reasons"])
    if lost and not any("scheduler" in r for r in reasons):
        reasons.append("agents lost the scheduler process")
    degraded = result["degraded"] or lost or bool(reasons)
    run = {
        "backend": "mininet", "policy": policy, "seed": trace.seed,
        "trace_path": str(trace_path), "trace_sha256": file_sha256(trace_path),
        "num_priority_classes": priority_classes, "release_at_zero": release_at_zero,
        "time_base": "trace seconds (emulated seconds / time_scale) unless named *_emulated_s",
        **stats, **{k.replace("_sct_s", "_sct_emulated_s"): v for k, v in stats_em.items()},
        "avg_cct_s": float(cct.mean()) if len(cct) else None,
        "avg_cct_emulated_s": float(cct.mean()) * time_scale if len(cct) else None,
        "num_stages": len(stages), "num_coflows": len(coflows),
        "num_flows": len(flows["flow_id"]),
        "scale": {"rate_scale": rate_scale, "time_scale": time_scale,
                  "size_scale": rate_scale * time_scale},
        "topology": {**to_dict(topo_scaled_cfg), "unscaled_link_rate_bps": topo_cfg.link_rate_bps},
        "degraded": bool(degraded),
        "degraded_reasons": reasons,
        "flow_errors": sum(1 for f in flows_log.values() if f.get("error")),
        "class_latency_emulated_s": class_latency(state, flows_log, applied, t0),
        "scheduler_decisions": sched_info.get("decisions"),
        "scheduler_warm_up_s": sched_info.get("warm_up_s"),
        "versions": versions(), "git_sha": git_sha(),
        **(extra or {}),
    }
    if cap:
        t_cap = time.perf_counter()
        run["capture"] = _check_capture(cap, flows_log, ip_of)
        run.update(capture_records(
            cap, out, scaled=scaled, compiled=state.compiled, sizes=state.flow_sizes(trace),
            clock=result["clock"], t0=t0, time_scale=time_scale,
            num_classes=priority_classes, reported_stages=stages,
            release_at_zero=release_at_zero,
            job_start_s=state.job_start_s if trace.cluster is not None else None))
        run["capture_analysis_wall_s"] = time.perf_counter() - t_cap  # read + records + isolation
    else:
        run["capture"] = {"enabled": False}
    trials, decisions = _cluster_records(state, trace, rec, topo_cfg, run,
                                         time_scale=time_scale, release_at_zero=release_at_zero)
    run["wall_s"] = time.perf_counter() - wall0
    return write_records(out, stages=stages, coflows=coflows, flows=flows, run=run,
                         extra_columns=EMULATED_COLUMNS, trials=trials, decisions=decisions)


def _cluster_records(state: ClusterState, trace: Trace, rec, topo_cfg: TopologyConfig,
                     run: dict[str, Any], *, time_scale: float, release_at_zero: bool
                     ) -> tuple[list[dict], list[dict]]:
    """For a trace whose trials a cluster placed: ``trials.csv`` and ``decisions.csv``
    rows in trace seconds, the cluster's facts and this run's own lower bound (on the
    unscaled trace as this run placed and tuned it) added to ``run``; none otherwise."""
    if trace.cluster is None:
        return [], []
    def in_trace_s(rows: list[dict], keys: tuple[str, ...]) -> list[dict]:
        return [{**r, **{k: r[k] / time_scale for k in keys}} for r in rows]
    trials = in_trace_s(rec.trials, ("queued_s", "start_s", "end_s"))
    decisions = in_trace_s(rec.decisions, ("time_s",))
    lb = lower_bound(state.placed_trace(trace), build_topology(topo_cfg, trace.hosts),
                     release_at_zero=release_at_zero).avg_sct_s
    run.update(cluster_facts(trials, cluster=trace.cluster, num_hosts=len(trace.hosts),
                             makespan_s=rec.facts["simulated_s"] / time_scale))
    run.update({"lower_bound_avg_sct_s": lb, "avg_sct_over_lb": run["avg_sct_s"] / lb,
                "lower_bound_of": "this run's placement and decisions"})
    return trials, decisions


EMULATED_COLUMNS = {
    "stages": ["start_emulated_s", "end_emulated_s", "sct_emulated_s"],
    "coflows": ["release_emulated_s", "end_emulated_s", "cct_emulated_s", "size_emulated_bytes"],
    "flows": ["release_emulated_s", "start_emulated_s", "end_emulated_s", "size_emulated_bytes"],
}


def to_trace_time(rec, state: ClusterState, trace: Trace, *, time_scale: float
                  ) -> tuple[list[dict], list[dict], dict[str, Any]]:
    """The driver's records (emulated seconds and bytes of the scaled trace) in trace seconds
    and the unscaled trace's bytes, the emulated values kept as ``*_emulated_*`` columns."""
    sizes = state.flow_sizes(trace)
    if len(sizes) != len(state.tf_size):
        raise RunError("the scaled trace does not have the original's flows")
    j_of = {jid: j for j, jid in enumerate(state.job_ids)}

    def tmpl(coflow_id: str) -> int:
        job, _, index = parse_coflow_id(coflow_id)
        return int(state.job_t0[j_of[job]]) + index

    stages = []
    for st in rec.stages:
        stages.append({**st, **{f"{k}_emulated_s": st[f"{k}_s"] for k in ("start", "end", "sct")},
                       **{f"{k}_s": st[f"{k}_s"] / time_scale for k in ("start", "end", "sct")}})
    coflows = []
    for c in rec.coflows:
        t = tmpl(c["coflow_id"])
        coflows.append({**c, **{f"{k}_emulated_s": c[f"{k}_s"] for k in ("release", "end", "cct")},
                        **{f"{k}_s": c[f"{k}_s"] / time_scale for k in ("release", "end", "cct")},
                        "size_emulated_bytes": c["size_bytes"],
                        "size_bytes": int(sizes[state.t_f0[t]:state.t_f1[t]].sum())})
    flows: dict[str, Any] = {k: rec.flows[k] for k in rec.flows}
    tf = np.array([state.t_f0[tmpl(coflow)] + index
                   for coflow, index in map(parse_flow_id, flows["flow_id"])], dtype=np.int64)
    flows["size_emulated_bytes"] = np.asarray(flows["size_bytes"])
    flows["size_bytes"] = sizes[tf] if len(tf) else np.zeros(0, dtype=np.int64)
    for k in ("release", "start", "end"):
        flows[f"{k}_emulated_s"] = np.asarray(flows[f"{k}_s"], dtype=float)
        flows[f"{k}_s"] = flows[f"{k}_emulated_s"] / time_scale
    return stages, coflows, flows


def class_latency(state: ClusterState, flows_log: dict[int, dict], applied: dict[str, dict],
                  t0: float) -> dict[str, Any]:
    """Scheduler reaction per coflow, in emulated (wall-clock) seconds: from the coflow's
    release to the moment its class was set on its sockets by the LAST of its sender
    agents. Only coflows that got a class push are counted; ``coflows_without_push`` says
    how many ran in the default class throughout (e.g. a policy that never reorders)."""
    senders: dict[int, set[str]] = {}
    for key, f in flows_log.items():
        senders.setdefault(key >> 32, set()).add(f["src_host"])
    lat, missing = [], 0
    for cid in range(len(state.c_job)):
        ts = [applied.get(h, {}).get(cid) for h in senders.get(cid, ())]
        if not ts or any(t is None for t in ts):
            missing += 1
            continue
        lat.append(max(ts) - (t0 + state.c_release[cid]))
    a = np.array(lat)
    return {"median": float(np.median(a)) if len(a) else None,
            "p95": float(np.percentile(a, 95)) if len(a) else None,
            "max": float(a.max()) if len(a) else None,
            "coflows": len(a), "coflows_without_push": missing}


def _log_file(files: list, path: Path):
    f = open(path, "w")
    files.append(f)
    return f


def _wait_for(cond, timeout_s: float, why: str, proc=None) -> None:
    end = time.time() + timeout_s
    while not cond():
        if time.time() > end or (proc is not None and proc.poll() is not None):
            raise RunError(why)
        time.sleep(0.02)


def _drive(state: ClusterState, chans, agents, sched, sched_ch, ip_of, *,
           kill_scheduler_after_s, faults: Faults, cap, net, stall_timeout_s: float
           ) -> dict[str, Any]:
    """Real-time loop: timers, agent reports, forwarding to the scheduler; injected faults
    and the watchdogs (agents, scheduler, capture, no progress)."""
    sel = selectors.DefaultSelector()
    host_of = {}
    for h, ch in chans.items():
        ch.sock.setblocking(True)
        ch.sock.settimeout(None)
        sel.register(ch.sock, selectors.EVENT_READ, h)
        host_of[h] = ch
    flows: dict[int, dict] = {}
    pending: list[tuple[float, int, float]] = []  # (end, key, start)
    progress: dict[str, int] = {}
    degraded = False
    reasons: list[str] = []
    injected: set[str] = set()
    cap_dead: set[str] = set()
    sched_alive = True
    released = 0
    t0 = time.monotonic()
    last_activity = t0
    sent_seen: dict[str, int] = {}  # flow key -> bytes sent, as last reported
    clock = [_clock_offset()]  # (monotonic, realtime - monotonic), every CLOCK_SAMPLE_S

    def forward(msg):
        nonlocal sched_alive, degraded
        if not sched_alive:
            return
        try:
            sched_ch.send(msg)
        except OSError:
            sched_alive, degraded = False, True

    def release_new():
        nonlocal released
        while released < len(state.c_job):
            cid = released
            t = state.c_tmpl[cid]
            for tf in range(int(state.t_f0[t]), int(state.t_f1[t])):
                src, dst = state.tf_src[tf], state.tf_dst[tf]
                key = (cid << 32) | tf
                host_of[src].send({"op": "send", "key": key, "cid": cid, "dst_ip": ip_of[dst],
                                   "size": int(state.tf_size[tf])})
            released += 1

    if state.fire_timers():
        forward({"op": "timer", "t": 0.0})
    release_new()
    forward({"op": "decide"})
    while state.busy():
        nxt = state.next_timer_s()
        wait = 0.05 if not np.isfinite(nxt) else min(0.05, max(0.0, t0 + nxt - time.monotonic()))
        for key, _ in sel.select(timeout=wait):
            h = key.data
            try:
                msgs = host_of[h].recv_ready()
            except EOFError:
                raise RunError(f"agent on host {h} died (see agents/{h}.out)") from None
            for m in msgs:
                if m["op"] == "done":
                    if m.get("error"):
                        raise RunError(f"flow {m['key']} from host {h} failed: {m['error']}")
                    flows[m["key"]] = {**m, "src_host": h}
                    pending.append((m["t_end"] - t0, m["key"], m["t_start"] - t0))
                    last_activity = time.monotonic()
                elif m["op"] == "progress":
                    # agents report every 0.1 s while they have flows: only bytes that
                    # moved count as progress for the watchdog
                    if any(v > sent_seen.get(k, -1) for k, v in m["sent"].items()):
                        last_activity = time.monotonic()
                        sent_seen.update(m["sent"])
                    progress.update(m["sent"])
                elif m["op"] == "scheduler_lost":
                    degraded = True
        if time.monotonic() - clock[-1][0] >= CLOCK_SAMPLE_S:
            clock.append(_clock_offset())
        elapsed = time.monotonic() - t0
        _inject(faults, elapsed, injected, reasons, agents, cap, net)
        for h, p in agents.items():
            if p.poll() is not None:
                raise RunError(f"agent on host {h} exited with status {p.returncode} "
                               f"(see agents/{h}.out)")
        if cap is not None:
            for iface, p in cap.procs.items():
                if iface not in cap_dead and p.poll() is not None:
                    cap_dead.add(iface)
                    degraded = True
                    reasons.append(f"capture on {iface} exited during the run")
        if time.monotonic() - last_activity > stall_timeout_s:
            raise RunError(f"no progress for {stall_timeout_s:g} s at trace time "
                           f"{state.now:.2f} s (a link or a host may be down)")
        if sched_alive and sched.poll() is not None:
            sched_alive, degraded = False, True
            reasons.append(f"scheduler process exited with status {sched.returncode}")
        if (kill_scheduler_after_s is not None and sched_alive
                and time.monotonic() - t0 > kill_scheduler_after_s):
            sched.kill()
            sched.wait()
            sched_alive, degraded = False, True
            reasons.append("scheduler process killed")
        now = time.monotonic() - t0
        pending.sort()
        changed = False
        if progress:
            forward({"op": "progress", "sent": progress})
            progress = {}
        while True:
            t_timer = state.next_timer_s()
            t_done = pending[0][0] if pending else np.inf
            if t_timer <= t_done and t_timer <= now:
                state.advance_clock(t_timer)
                state.fire_timers()
                forward({"op": "timer", "t": state.now})
            elif t_done <= now and pending:
                end, key, start = pending.pop(0)
                mask = state.active_flow_keys() == key
                state.advance_clock(end)
                state.complete_flows(mask, np.array([state.now]), np.array([start]))
                forward({"op": "done", "key": key, "t": state.now})
            else:
                break
            changed = True
        if changed:
            last_activity = time.monotonic()
            release_new()
            forward({"op": "decide"})
    clock.append(_clock_offset())
    return {"t0": t0, "flows": flows, "degraded": degraded, "clock": clock, "reasons": reasons}


def _inject(faults: Faults, elapsed_s: float, done: set[str], reasons: list[str], agents,
            cap, net) -> None:
    """Apply the faults due at ``elapsed_s`` (emulated s since t0), each once; only to
    processes and links this run created."""
    if faults.kill_agent and "agent" not in done and elapsed_s >= faults.kill_agent[1]:
        done.add("agent")
        agents[faults.kill_agent[0]].kill()
    if (faults.kill_capture_after_s is not None and cap is not None and "capture" not in done
            and elapsed_s >= faults.kill_capture_after_s):
        done.add("capture")
        for p in cap.procs.values():
            if p.poll() is None:
                p.kill()
    if faults.link_down and net is not None:
        host, at_s, for_s = faults.link_down
        intf = net.host(host).intfList()[0]
        if "down" not in done and elapsed_s >= at_s:
            done.add("down")
            net.host(host).cmd(f"ip link set {intf.name} down")
            reasons.append(f"link of {host} set down at {at_s:g} s for {for_s:g} s")
        if "down" in done and "up" not in done and elapsed_s >= at_s + for_s:
            done.add("up")
            net.host(host).cmd(f"ip link set {intf.name} up")


def _clock_offset() -> tuple[float, float]:
    """(monotonic now, CLOCK_REALTIME - CLOCK_MONOTONIC): maps pcap times (realtime) onto
    the driver's clock; the tightest of a few samples."""
    best = None
    for _ in range(5):
        a = time.monotonic()
        r = time.time()
        b = time.monotonic()
        if best is None or b - a < best[0]:
            best = (b - a, (a + b) / 2, r - (a + b) / 2)
    return best[1], best[2]


def _check_capture(cap: Capture, flows_log: dict[int, dict], ip_of: dict[str, str]
                   ) -> dict[str, Any]:
    """Compare captured payload per connection with what the agents sent."""
    conns = cap.parse()
    rows, missing, mismatch = [], 0, 0
    sent_total = captured_total = 0
    by_port: dict[tuple[str, int], list[tuple[float, int]]] = {}
    for key, f in flows_log.items():
        by_port.setdefault((ip_of[f["src_host"]], f["sport"]), []).append((f["t_start"], key))
    for port, fl in by_port.items():
        caps = conns.get(port, [])
        for i, (_, key) in enumerate(sorted(fl)):  # the port's connections in start order
            f = flows_log[key]
            want = f["bytes"] + 16
            sent_total += want
            if i >= len(caps):
                missing += 1
                continue
            got = caps[i]
            captured_total += got["payload_bytes"]
            if got["payload_bytes"] != want:
                mismatch += 1
            rows.append({"key": key, "sent_bytes": want, "captured_bytes": got["payload_bytes"],
                         "wire_payload_bytes": got["wire_payload_bytes"], "packets": got["packets"],
                         "first_s": got["first_s"], "last_s": got["last_s"]})
    import pandas as pd
    pd.DataFrame(rows).to_csv(cap.out_dir / "capture_flows.csv", index=False)
    return {"enabled": True, "flows": len(flows_log), "flows_missing": missing,
            "flows_byte_mismatch": mismatch, "sent_bytes": sent_total,
            "captured_bytes": captured_total,
            "captured_fraction": captured_total / sent_total if sent_total else None,
            "kernel_drops": sum(cap.drops.values())}


def _teardown(agents, sched, cap, en, sock_dir) -> None:
    """Stop everything this run started; never touches processes or links it did not create."""
    for p in agents.values():
        if p.poll() is None:
            p.terminate()
    for p in agents.values():
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if sched is not None and sched.poll() is None:
        sched.terminate()
        try:
            sched.wait(timeout=5)
        except subprocess.TimeoutExpired:
            sched.kill()
            sched.wait()
    if cap is not None:
        cap.stop()
    if en is not None:
        en.stop()
    shutil.rmtree(sock_dir, ignore_errors=True)
