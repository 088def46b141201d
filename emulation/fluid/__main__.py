"""CLI: ``python -m emulation.fluid TRACE --policy NAME -o OUTDIR`` (see ``--help``).

TRACE is a JSON trace (``python -m workloads generate``) or a coflow-benchmark text file
(ports become hosts of a big switch, default port rate 1 Gbit/s). Prints avg SCT, p95 SCT
and avg SCT / lower bound; writes flows.csv, coflows.csv, stages.csv and run.json.
"""
from __future__ import annotations

import argparse
import sys

from emulation.fluid.run import run_fluid
from emulation.fluid.simulator import REALLOC_MODES
from emulation.scheduler import POLICIES
from emulation.topology import add_topology_args, build_topology, topology_config_from_args
from workloads import coflow_benchmark
from workloads.config import ConfigError
from workloads.trace import TraceError


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m emulation.fluid", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="default --realloc per policy (its published semantics):\n" + "\n".join(
            f"  {n}={POLICIES[n].default_realloc}" for n in sorted(POLICIES)))
    ap.add_argument("trace", help="JSON trace or coflow-benchmark .txt")
    ap.add_argument("--policy", required=True, choices=sorted(POLICIES))
    add_topology_args(ap, hosts_per_leaf=4, spines=2, oversubscription=1.0)
    ap.add_argument("--link-rate-bps", type=float, default=None,
                    help="host link rate (default 10e9 for JSON traces, 1e9 for coflow-benchmark)")
    ap.add_argument("--priority-classes", type=int, default=8,
                    help="K strict-priority classes; 0 = unlimited (each coflow its own)")
    ap.add_argument("--release-at-zero", action="store_true",
                    help="release every app at t=0 (Sincronia's offline setting)")
    ap.add_argument("--realloc", choices=list(REALLOC_MODES), default=None,
                    help="flow: the policy decides and rates are recomputed at every flow "
                         "completion (exact); coflow: both only at coflow-level events "
                         "(Varys/coflowsim semantics, fastest); queues: the policy decides at "
                         "coflow-level events, its classes re-share rates at every flow "
                         "completion (strict-priority switch queues, as Sincronia's own "
                         "simulator; slower). Default: the policy's published semantics "
                         "(listed below)")
    ap.add_argument("-o", "--output", required=True, help="output directory for the records")
    args = ap.parse_args(argv)
    if args.priority_classes < 0:
        ap.error("--priority-classes must be >= 0")
    try:
        is_bench = coflow_benchmark.looks_like(args.trace)
        trace = coflow_benchmark.load_any(args.trace)
        rate = args.link_rate_bps or (1e9 if is_bench else 10e9)
        if is_bench and args.topology != "big_switch":
            raise ConfigError("coflow-benchmark traces use ports: only --topology big_switch")
        topo_cfg = topology_config_from_args(args, rate)
        topo = build_topology(topo_cfg, trace.hosts)
    except (TraceError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    run = run_fluid(trace=trace, trace_path=args.trace, topology=topo, policy=args.policy,
                    outdir=args.output, priority_classes=args.priority_classes,
                    release_at_zero=args.release_at_zero, realloc=args.realloc)
    print(f"policy: {run['policy']}")
    print(f"realloc: {run['realloc']}")
    print(f"stages: {run['num_stages']}")
    print(f"avg_sct_s: {run['avg_sct_s']:.4f}")
    print(f"p95_sct_s: {run['p95_sct_s']:.4f}")
    print(f"avg_cct_s: {run['avg_cct_s']:.4f}")
    print(f"lower_bound_avg_sct_s: {run['lower_bound_avg_sct_s']:.4f}")
    print(f"avg_sct_over_lb: {run['avg_sct_over_lb']:.4f}")
    print(f"wall_s: {run['wall_s']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
