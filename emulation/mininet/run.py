"""One packet-level run: scale the trace, build the network, start the scheduler process and
the host agents, drive the trace in real time, capture, and write the records.

Scale (recorded in run.json): link rates x ``rate_scale``; time x ``time_scale`` (compute
gaps and arrivals); bytes x ``rate_scale * time_scale``, so every transfer takes
``time_scale`` times its unscaled duration and the compute/communication ratio is kept.
Records are in emulated seconds and bytes; stages.csv adds ``sct_trace_s`` (= sct_s /
time_scale) and run.json ``avg_sct_trace_s``: the unscaled figures.

The driver (this process, root namespace) owns the authoritative ``ClusterState`` and
its timers in wall-clock time; it tells sender agents to start flows when coflows are
released and learns completions from them. Every event it applies is forwarded to the
scheduler process, which pushes priority classes to the agents. If the scheduler dies
the run goes on in the default class and run.json says ``degraded: true``; if an agent
dies the run stops with an error naming the host. Teardown runs on every exit path
(exceptions, SIGINT, SIGTERM): agents, scheduler, tcpdump (only PIDs started here),
network, socket directory.
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
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from emulation.mininet.capture import Capture
from emulation.mininet.net import build_net, require_root
from emulation.mininet.protocol import LineChannel
from emulation.records import file_sha256, git_sha, summary_stats, versions, write_records
from emulation.state import ClusterState
from emulation.topology import TopologyConfig, build_topology
from workloads import trace as trace_mod
from workloads.config import to_dict
from workloads.trace import CoflowSpec, Flow, Trace

REPO = Path(__file__).resolve().parents[2]


class RunError(RuntimeError):
    """A packet-level run failed; the message is one line (host named if an agent died)."""


def scale_trace(trace: Trace, *, rate_scale: float, time_scale: float) -> Trace:
    """Bytes x rate_scale*time_scale (>= 1), compute and arrivals x time_scale."""
    b = rate_scale * time_scale

    def job(j):
        cfs = tuple(CoflowSpec(tuple(Flow(f.src, f.dst, max(1, round(f.size_bytes * b)))
                                     for f in c.flows)) for c in j.coflows)
        return replace(j, compute_s=j.compute_s * time_scale, coflows=cfs)

    apps = tuple(replace(a, arrival_s=a.arrival_s * time_scale,
                         stages=tuple(replace(s, jobs=tuple(job(j) for j in s.jobs)) for s in a.stages))
                 for a in trace.apps)
    return replace(trace, apps=apps, meta={**trace.meta, "scaled": {
        "rate_scale": rate_scale, "time_scale": time_scale, "size_scale": b}})


def _on_signal(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def run_mininet(*, trace: Trace, trace_path: str | Path, topo_cfg: TopologyConfig, policy: str,
                outdir: str | Path, priority_classes: int = 8, rate_scale: float = 0.003,
                time_scale: float = 2.0, release_at_zero: bool = False,
                kill_scheduler_after_s: float | None = None, capture: bool = True,
                extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run ``trace`` over real TCP in Mininet; write records to ``outdir``; return run.json."""
    why = require_root()
    if why:
        raise RunError(why)
    if not 1 <= priority_classes <= 8:
        raise RunError("the packet backend supports 1..8 priority classes")
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
    sock_dir = tempfile.mkdtemp(prefix="bmr-")
    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    en = cap = sched = drv = None
    agents: dict[str, Any] = {}
    files: list[Any] = []  # log files handed to child processes
    chans: dict[str, LineChannel] = {}
    try:
        en = build_net(topo, num_classes=priority_classes)
        ip_of = en.ips
        ports = {}
        for h in topo.hosts:
            node = en.host(h)
            intf = node.intfList()[0]
            peer = intf.link.intf2 if intf.link.intf1 is intf else intf.link.intf1
            ports[peer.name] = ip_of[h]
        if capture:
            cap = Capture(out, ports)
        drv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        drv.bind(os.path.join(sock_dir, "driver.sock"))
        drv.listen(len(topo.hosts) + 4)
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        sched = subprocess.Popen([sys.executable, "-m", "emulation.mininet.scheduler_proc",
                                  "--run-dir", str(out), "--sock-dir", sock_dir],
                                 cwd=REPO, env=env, stderr=_log_file(files, out / "scheduler.log"))
        _wait_for(lambda: os.path.exists(os.path.join(sock_dir, "sched.sock")), 30,
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
        result = _drive(state, scaled, chans, agents, sched, sched_ch, ip_of,
                        kill_scheduler_after_s)
        for ch in chans.values():
            ch.sock.settimeout(10)
            ch.send({"op": "exit"})
        applied = {}
        lost = False
        for h, ch in chans.items():
            for _ in range(100):
                msgs = ch.recv_ready()
                bye = [m for m in msgs if m["op"] == "bye"]
                if bye:
                    applied.update({int(k): v for k, v in bye[0]["applied"].items()})
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
    capture_info = _check_capture(cap, flows_log, ip_of, t0) if cap else {"enabled": False}
    for s in rec.stages:
        s["sct_trace_s"] = s["sct_s"] / time_scale
    stats = summary_stats(np.array([s["sct_s"] for s in rec.stages]))
    cct = np.array([c["cct_s"] for c in rec.coflows])
    lat = [applied[c] - (t0 + state.c_release[c]) for c in range(len(state.c_job)) if c in applied]
    sched_info = {}
    if (out / "scheduler.json").exists():
        sched_info = json.loads((out / "scheduler.json").read_text())
    degraded = result["degraded"] or lost
    run = {
        "backend": "mininet", "policy": policy, "seed": trace.seed,
        "trace_path": str(trace_path), "trace_sha256": file_sha256(trace_path),
        "num_priority_classes": priority_classes, "release_at_zero": release_at_zero,
        **stats, "avg_sct_trace_s": stats["avg_sct_s"] / time_scale,
        "avg_cct_s": float(cct.mean()) if len(cct) else None,
        "num_stages": len(rec.stages), "num_coflows": len(rec.coflows),
        "num_flows": rec.flows.num_rows,
        "scale": {"rate_scale": rate_scale, "time_scale": time_scale,
                  "size_scale": rate_scale * time_scale},
        "topology": {**to_dict(topo_scaled_cfg), "unscaled_link_rate_bps": topo_cfg.link_rate_bps},
        "degraded": bool(degraded),
        "flow_errors": sum(1 for f in flows_log.values() if f.get("error")),
        "class_latency_s": {"median": float(np.median(lat)) if lat else None,
                            "p95": float(np.percentile(lat, 95)) if lat else None,
                            "max": float(max(lat)) if lat else None, "coflows": len(lat)},
        "scheduler_decisions": sched_info.get("decisions"),
        "capture": capture_info,
        "versions": versions(), "git_sha": git_sha(),
        **(extra or {}),
    }
    run["wall_s"] = time.perf_counter() - wall0
    return write_records(out, stages=rec.stages, coflows=rec.coflows, flows=rec.flows, run=run)


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


def _drive(state: ClusterState, trace: Trace, chans, agents, sched, sched_ch, ip_of,
           kill_scheduler_after_s) -> dict[str, Any]:
    """Real-time loop: timers, agent reports, forwarding to the scheduler."""
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
    sched_alive = True
    released = 0
    t0 = time.monotonic()

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

    state.now = 0.0
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
                elif m["op"] == "progress":
                    progress.update(m["sent"])
                elif m["op"] == "scheduler_lost":
                    degraded = True
        for h, p in agents.items():
            if p.poll() is not None:
                raise RunError(f"agent on host {h} exited with status {p.returncode} "
                               f"(see agents/{h}.out)")
        if sched_alive and sched.poll() is not None:
            sched_alive, degraded = False, True
        if (kill_scheduler_after_s is not None and sched_alive
                and time.monotonic() - t0 > kill_scheduler_after_s):
            sched.kill()
            sched.wait()
            sched_alive, degraded = False, True
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
                state.now = max(state.now, t_timer)
                state.fire_timers()
                forward({"op": "timer", "t": state.now})
            elif t_done <= now and pending:
                end, key, start = pending.pop(0)
                mask = state.active_flow_keys() == key
                state.now = max(state.now, end)
                state.complete_flows(mask, np.array([state.now]), np.array([start]))
                forward({"op": "done", "key": key, "t": state.now})
            else:
                break
            changed = True
        if changed:
            release_new()
            forward({"op": "decide"})
    return {"t0": t0, "flows": flows, "degraded": degraded}


def _check_capture(cap: Capture, flows_log: dict[int, dict], ip_of: dict[str, str], t0: float
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
