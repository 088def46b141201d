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

This process (root namespace) owns the authoritative ``ClusterState`` and runs the one
event loop (``emulation/loop.py``) in real time with the packet-level backend
(``emulation/mininet/driver.py``): it tells sender agents to start flows when coflows
are released and learns completions from them. Every event it applies is forwarded to the
scheduler process, which pushes priority classes to the agents. Starting and stopping
the processes is ``emulation/mininet/processes.py``. If the scheduler dies
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
import signal
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from emulation.ids import parse_coflow_id, parse_flow_id
from emulation.loop import Loop
from emulation.mininet.capture import Capture, capture_records
from emulation.mininet.driver import Driver, Faults, RunError, Watch
from emulation.mininet.leftovers import SOCK_DIR_PREFIX, clear_dead
from emulation.mininet.net import require_root, unbuildable
from emulation.mininet.processes import Started, finish, start, teardown
from emulation.records import (Records, cluster_facts, file_sha256, git_sha, summary_stats,
                               versions, write_records)
from emulation.scheduler.lower_bound import lower_bound
from emulation.state import ClusterState
from emulation.topology import Topology, TopologyConfig, build_topology
from workloads import trace as trace_mod
from workloads.config import to_dict
from workloads.trace import CoflowSpec, Flow, Trace

__all__ = ["Faults", "RunError", "run_mininet", "scale_trace", "to_trace_time",
           "class_latency", "EMULATED_COLUMNS"]
STALL_TIMEOUT_S = 60.0  # wall seconds without any progress before a run is abandoned


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


def _on_signal(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


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
    why = unbuildable(topo_cfg)
    if why is not None:
        raise RunError(why)
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
    watch = Watch(stall_timeout_s=stall_timeout_s, faults=faults or Faults(),
                  kill_scheduler_after_s=kill_scheduler_after_s)
    result, started = _emulate(state, topo, out, priority_classes=priority_classes,
                               capture=capture, watch=watch)
    rec = state.records({"sim_wall_s": time.perf_counter() - wall0})
    stages, coflows, flows = to_trace_time(rec, state, trace, time_scale=time_scale)
    run = _run_json(state, trace, result, out, (stages, coflows, flows), policy=policy,
                    trace_path=trace_path, topo_cfg=topo_cfg, topo_scaled_cfg=topo_scaled_cfg,
                    priority_classes=priority_classes, rate_scale=rate_scale,
                    time_scale=time_scale, release_at_zero=release_at_zero, extra=extra)
    if started.cap:
        t_cap = time.perf_counter()
        run["capture"] = _check_capture(started.cap, result["flows"], started.en.ips)
        run.update(capture_records(
            started.cap, out, scaled=scaled, compiled=state.compiled,
            sizes=state.flow_sizes(trace), clock=result["clock"], t0=result["t0"],
            time_scale=time_scale, num_classes=priority_classes, reported_stages=stages,
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


def _emulate(state: ClusterState, topo: Topology, out: Path, *, priority_classes: int,
             capture: bool, watch: Watch) -> tuple[dict[str, Any], Started]:
    """Start the run's processes, run the loop in real time, stop them (on every exit
    path, signals included); the driver's result with the agents' class times
    (``applied``) and whether they lost the scheduler (``lost``)."""
    started = Started(tempfile.mkdtemp(prefix=SOCK_DIR_PREFIX))
    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        driver = Driver(start(started, topo, out, priority_classes=priority_classes,
                              capture=capture), watch)
        Loop(state, driver).run()
        result = driver.result()
        result["applied"], result["lost"] = finish(started)
    finally:
        for s in old:  # a second Ctrl-C must not cut the teardown short
            signal.signal(s, signal.SIG_IGN)
        try:
            teardown(started)
        finally:
            for s, h in old.items():
                signal.signal(s, h)
    return result, started


def _run_json(state: ClusterState, trace: Trace, result: dict[str, Any], out: Path,
              records: tuple[list[dict], list[dict], dict[str, Any]], *, policy: str,
              trace_path: str | Path, topo_cfg: TopologyConfig,
              topo_scaled_cfg: TopologyConfig, priority_classes: int, rate_scale: float,
              time_scale: float, release_at_zero: bool,
              extra: dict[str, Any] | None) -> dict[str, Any]:
    """run.json of a packet-level run before its capture's and cluster's fields, from
    its records in trace time (stages, coflows, flows)."""
    stages, coflows, flows = records
    stats_em = summary_stats(np.array([s["sct_emulated_s"] for s in stages]))
    stats = summary_stats(np.array([s["sct_s"] for s in stages]))
    cct = np.array([c["cct_s"] for c in coflows])
    sched_info = _scheduler_info(out)
    reasons = list(result["reasons"])
    if result["lost"] and not any("scheduler" in r for r in reasons):
        reasons.append("agents lost the scheduler process")
    return {
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
        "degraded": bool(result["degraded"] or result["lost"] or reasons),
        "degraded_reasons": reasons,
        "flow_errors": sum(1 for f in result["flows"].values() if f.get("error")),
        "class_latency_emulated_s": class_latency(state, result["flows"], result["applied"],
                                                  result["t0"]),
        "scheduler_decisions": sched_info.get("decisions"),
        "scheduler_warm_up_s": sched_info.get("warm_up_s"),
        "versions": versions(), "git_sha": git_sha(),
        **(extra or {}),
    }


def _scheduler_info(out: Path) -> dict[str, Any]:
    """The scheduler process's scheduler.json ({} if it wrote none)."""
    for partial in out.glob(".scheduler.json-*"):  # a scheduler stopped while it wrote
        partial.unlink()
    if (out / "scheduler.json").exists():
        return json.loads((out / "scheduler.json").read_text())
    return {}


def _cluster_records(state: ClusterState, trace: Trace, rec: Records, topo_cfg: TopologyConfig,
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


def to_trace_time(rec: Records, state: ClusterState, trace: Trace, *, time_scale: float
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
