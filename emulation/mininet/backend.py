"""The packet-level backend's entry in the backends' registry (``emulation/backends.py``):
one run of a ``RunRequest`` over real TCP in Mininet (``emulation/mininet/run.py``), with
its two fluid twins in ``twin/`` (the ideal model) and ``twin_packet/`` (the packet-aware
model, where the emulated setting is calibrated), all in trace seconds.

The twins simulate the UNSCALED trace on the unscaled topology: the emulation scales
bytes by rate_scale x time_scale and rates by rate_scale, so its times are the trace's x
time_scale, and the Mininet records are written in trace seconds (emulated / time scale).
Simulating the scaled trace instead gives the same stage times x time_scale up to the
rounding of scaled flow sizes (relative 3e-8 on the testbed trace). A twin models what the
packet backend enforces: decisions at the policy's own reallocation events (the scheduler
process follows the same rule), and rates as the switch gives them: a priority policy
that decides at coflow events has its classes re-share the rates at every flow
completion, as the queues and TCP do (``realloc="queues"``); Varys keeps its published
semantics, MADD rates held between coflow events, which the agents enforce by pacing
each flow; per-flow policies (fair sharing) are recomputed at every event either way
(``Policy.realloc_mode``, the fluid runs' default too). It needs root, and refuses a
topology with several paths between two hosts (``net.unbuildable``).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from emulation.backends import RunRequest
from emulation.records import write_run_json
from workloads.config import build

TWIN_OF = "mininet"  # a twin's run.json names the backend of the run it twins


def execute(request: RunRequest) -> dict[str, Any]:
    """The packet-level run of ``request`` and its fluid twins; its run.json."""
    from emulation.fluid.run import run_fluid
    from emulation.mininet.run import run_mininet
    from emulation.scheduler import POLICIES
    from emulation.topology import TopologyConfig, build_topology
    from workloads import coflow_benchmark
    cfg = request.experiment
    topo_cfg = build(TopologyConfig, dict(request.topology), "topology")
    trace = coflow_benchmark.load_any(request.trace_path)  # JSON or coflow-benchmark
    load_start = os.getloadavg()[0]  # other jobs on the machine load the emulation's CPUs
    run = run_mininet(trace=trace, trace_path=request.trace_path, topo_cfg=topo_cfg,
                      policy=request.policy, outdir=request.outdir,
                      priority_classes=cfg["priority_classes"], rate_scale=cfg["rate_scale"],
                      time_scale=cfg["time_scale"], release_at_zero=cfg["release_at_zero"],
                      extra=request.extra)
    # the unscaled trace's bound; a trace placed during the run: this run's own placement
    lb = (json.loads(Path(request.lb_path).read_text())["lower_bound_avg_sct_s"]
          if request.lb_path else run["lower_bound_avg_sct_s"])
    twin = run_fluid(trace=trace, trace_path=request.trace_path,
                     topology=build_topology(topo_cfg, trace.hosts), policy=request.policy,
                     outdir=Path(request.outdir) / "twin",
                     priority_classes=cfg["priority_classes"],
                     realloc=POLICIES[request.policy].realloc_mode(),
                     release_at_zero=cfg["release_at_zero"], lb_avg_sct_s=lb,
                     extra={**request.extra, "twin_of": TWIN_OF})
    run.update({"lower_bound_avg_sct_s": lb, "avg_sct_over_lb": run["avg_sct_s"] / lb,
                "fluid_twin_avg_sct_s": twin["avg_sct_s"],
                "mininet_over_fluid": run["avg_sct_s"] / twin["avg_sct_s"],
                "loadavg_1min_start": load_start, "loadavg_1min_end": os.getloadavg()[0],
                "cpu_count": os.cpu_count()})
    packet_twin(request, trace, Path(request.outdir), lb_avg_sct_s=lb)
    write_run_json(Path(request.outdir) / "run.json", run)
    return run


def packet_twin(request: RunRequest, trace: Any, run_dir: Path, *,
                lb_avg_sct_s: float) -> dict[str, Any] | None:
    """The packet-aware fluid twin of a packet-level run in ``run_dir/twin_packet``: the
    twin's configuration with the costs calibrated for the run's emulated setting
    (``data/packet_model.json``); None (nothing written) if that setting has none."""
    from emulation.fluid.run import run_fluid
    from emulation.packet_model import load_costs
    from emulation.scheduler import POLICIES
    from emulation.topology import TopologyConfig, build_topology
    cfg = request.experiment
    costs = load_costs(rate_scale=cfg["rate_scale"], time_scale=cfg["time_scale"])
    if costs is None:
        return None
    topo = build_topology(build(TopologyConfig, dict(request.topology), "topology"),
                          trace.hosts)
    return run_fluid(trace=trace, trace_path=request.trace_path, topology=topo,
                     policy=request.policy, outdir=run_dir / "twin_packet",
                     priority_classes=cfg["priority_classes"],
                     realloc=POLICIES[request.policy].realloc_mode(),
                     release_at_zero=cfg["release_at_zero"], lb_avg_sct_s=lb_avg_sct_s,
                     packet_costs=costs, extra={**request.extra, "twin_of": TWIN_OF})


def unavailable() -> str | None:
    from emulation.mininet.net import require_root
    return require_root()


def refusal(topology) -> str | None:
    from emulation.mininet.net import unbuildable
    return unbuildable(topology)
