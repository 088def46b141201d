"""One fluid run: trace file + policy + topology -> records in an output directory."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from emulation.records import file_sha256, git_sha, summary_stats, versions, write_records
from emulation.scheduler import make_policy
from emulation.scheduler.lower_bound import lower_bound
from emulation.fluid.simulator import FluidSimulator
from emulation.topology import Topology
from workloads.trace import Trace


def run_fluid(*, trace: Trace, trace_path: str | Path, topology: Topology, policy: str,
              outdir: str | Path, priority_classes: int = 8, release_at_zero: bool = False,
              realloc: str | None = None, allocation: str | None = None,
              policy_params: dict[str, Any] | None = None, lb_avg_sct_s: float | None = None,
              extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Simulate, compute (or reuse) the lower bound, write records; return run.json's dict.

    ``realloc=None``: the policy's published semantics (``Policy.default_realloc``);
    run.json records the mode used and whether it was that default. ``allocation=None``:
    the policy's own (``Policy.allocation``); run.json records the one used."""
    t0 = time.perf_counter()
    pol = make_policy(policy, **(policy_params or {}))
    realloc_default = realloc is None
    if realloc is None:
        realloc = pol.default_realloc
    sim = FluidSimulator(trace, topology, pol,
                         priority_classes=priority_classes, release_at_zero=release_at_zero,
                         realloc=realloc, allocation=allocation)
    res = sim.run()
    if lb_avg_sct_s is None:
        lb_avg_sct_s = lower_bound(trace, topology, release_at_zero=release_at_zero).avg_sct_s
    stats = summary_stats(np.array([s["sct_s"] for s in res.stages]))
    cct = np.array([c["cct_s"] for c in res.coflows]) if res.coflows else np.zeros(0)
    run = {
        "backend": "fluid",
        "policy": policy,
        "policy_params": policy_params or {},
        "seed": trace.seed,
        "trace_path": str(trace_path),
        "trace_sha256": file_sha256(trace_path),
        "num_priority_classes": priority_classes,
        "release_at_zero": release_at_zero,
        "realloc": realloc,
        "realloc_is_policy_default": realloc_default,
        "allocation": sim.allocation,
        **stats,
        "avg_cct_s": float(cct.mean()) if len(cct) else None,
        "lower_bound_avg_sct_s": lb_avg_sct_s,
        "avg_sct_over_lb": stats["avg_sct_s"] / lb_avg_sct_s if lb_avg_sct_s > 0 else None,
        "num_stages": len(res.stages),
        "num_coflows": len(res.coflows),
        "num_flows": res.flows.num_rows,
        "topology": {"kind": topology.kind, "num_hosts": len(topology.hosts),
                     "num_links": len(topology.links),
                     **{k: v for k, v in topology.params.items() if k != "spines"}},
        "sim_wall_s": res.facts["sim_wall_s"],
        "simulated_s": res.facts["simulated_s"],
        "num_decisions": res.facts["num_decisions"],
        "versions": versions(),
        "git_sha": git_sha(),
        **(extra or {}),
    }
    run["wall_s"] = time.perf_counter() - t0
    return write_records(outdir, stages=res.stages, coflows=res.coflows, flows=res.flows, run=run)
