"""CLI: ``python -m emulation.mininet TRACE.json --policy NAME -o OUTDIR`` (needs root).

Replays the trace over real TCP on an emulated network (see ``emulation/mininet/run.py``
for the scale factors) and writes flows.csv, coflows.csv, stages.csv, run.json, the
capture check (capture_flows.csv), the capture-derived records (*_capture.csv) and agent
logs. Times in the records are trace seconds; emulated ones are named *_emulated_s. Without root it exits 2 with one line.
"""
from __future__ import annotations

import argparse
import sys

from emulation.fluid.run import add_output_args
from emulation.mininet.net import require_root
from emulation.mininet.run import RunError, run_mininet
from emulation.scheduler import POLICIES
from emulation.topology import TopologyConfig, add_topology_args, topology_config_from_args
from workloads import coflow_benchmark
from workloads.config import ConfigError
from workloads.cli import run_cli
from workloads.trace import TraceError


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m emulation.mininet", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", help="JSON trace (python -m workloads generate)")
    ap.add_argument("--policy", required=True, choices=sorted(POLICIES),
                    help="scheduling policy (required): %(choices)s")
    # the same defaults as the fluid command line and the [topology] table
    add_topology_args(ap, hosts_per_leaf=TopologyConfig.hosts_per_leaf,
                      spines=TopologyConfig.num_spines,
                      oversubscription=TopologyConfig.oversubscription)
    ap.add_argument("--link-rate-bps", type=float, default=10e9, metavar="BPS",
                    help="unscaled host link rate in bits per second (default 10e9 = "
                         "10 Gbit/s; emulated at BPS x --rate-scale)")
    ap.add_argument("--priority-classes", type=int, default=8, choices=range(1, 9), metavar="K",
                    help="strict-priority classes per port, 1..8 (default 8)")
    ap.add_argument("--rate-scale", type=float, default=0.003,
                    help="emulated link rate / real link rate (default 0.003: 10G -> 30M)")
    ap.add_argument("--time-scale", type=float, default=2.0,
                    help="emulated seconds per trace second (default 2)")
    ap.add_argument("--no-capture", action="store_true",
                    help="skip the tcpdump capture (and the capture-derived records)")
    add_output_args(ap)
    args = ap.parse_args(argv)
    from emulation.fluid.run import existing_run_error
    err = existing_run_error(args.output, force=args.force)
    if err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    why = require_root()
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    try:
        trace = coflow_benchmark.load_any(args.trace)
        topo_cfg = topology_config_from_args(args, args.link_rate_bps)
        run = run_mininet(trace=trace, trace_path=args.trace, topo_cfg=topo_cfg,
                          policy=args.policy, outdir=args.output,
                          priority_classes=args.priority_classes, rate_scale=args.rate_scale,
                          time_scale=args.time_scale, capture=not args.no_capture)
    except (TraceError, ConfigError, RunError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted; the emulated network was torn down", file=sys.stderr)
        return 130
    for k in ("policy", "num_stages", "avg_sct_s", "p95_sct_s", "avg_sct_emulated_s",
              "avg_sct_capture_s", "degraded"):
        print(f"{k}: {run.get(k)}")
    for k in ("capture", "capture_vs_reported", "priority_isolation", "capture_reader",
              "class_latency_emulated_s"):
        print(f"{k}: {run.get(k)}")
    return 0


if __name__ == "__main__":
    run_cli(main)
