"""The fluid backend's entry in the backends' registry (``emulation/backends.py``): one
run of a ``RunRequest`` with the flow-level simulator (``emulation/fluid/run.py``), the
packet-aware model's costs when the experiment asks for them. It runs anywhere and builds
every topology."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from emulation.backends import RunRequest
from workloads.config import build


def execute(request: RunRequest) -> dict[str, Any]:
    """Simulate the request's trace into ``request.outdir``; its run.json."""
    from emulation.fluid.run import run_fluid
    from emulation.topology import TopologyConfig, build_topology
    from workloads import coflow_benchmark
    trace = coflow_benchmark.load_any(request.trace_path)
    topo = build_topology(build(TopologyConfig, dict(request.topology), "topology"),
                          trace.hosts)
    lb = (json.loads(Path(request.lb_path).read_text()) if request.lb_path
          else {"lower_bound_avg_sct_s": None})
    cfg = request.experiment
    costs = None
    if cfg.get("fluid_model", "ideal") == "packet-aware":  # costs recorded in the config
        from emulation.packet_model import PacketCosts
        costs = PacketCosts(**cfg["packet_costs"])
    return run_fluid(trace=trace, trace_path=request.trace_path, topology=topo,
                     policy=request.policy, outdir=request.outdir,
                     priority_classes=cfg["priority_classes"],
                     release_at_zero=cfg["release_at_zero"],
                     realloc=None if cfg["realloc"] == "policy" else cfg["realloc"],
                     lb_avg_sct_s=lb["lower_bound_avg_sct_s"], extra=request.extra,
                     packet_costs=costs)


def unavailable() -> str | None:
    return None


def refusal(topology) -> str | None:
    return None
