"""CLI: ``python -m emulation.mininet TRACE.json --policy NAME -o OUTDIR`` (needs root).

Replays the trace over real TCP on an emulated network (see ``emulation/mininet/run.py``
for the scale factors) and writes flows.csv, coflows.csv, stages.csv, run.json, the
capture check (capture_flows.csv), the capture-derived records (*_capture.csv) and agent
logs. Times in the records are trace seconds; emulated ones are named *_emulated_s.
Without root it exits 2 with one line.

``--config FILE`` takes an experiment TOML (the suite's format): its ``[topology]`` table
and ``[experiment]`` priority_classes / rate_scale / time_scale are applied (a ``realloc``
other than "policy" is an error, as in the suite); options given on the command line
override the file. Its other tables and keys are named on stderr as not used.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workloads.cli import (ArgumentParser, described, epilog, interrupts_end_quietly,
                           output_path_error, run_cli)

if __name__ == "__main__":  # Ctrl-C while the imports below load ends quietly too
    interrupts_end_quietly()

from emulation.fluid.run import add_output_args
from emulation.mininet.net import require_root, unbuildable
from emulation.mininet.run import RunError, run_mininet
from emulation.scheduler import POLICIES
from emulation.topology import TopologyConfig, add_topology_args
from schema.cli import EXPERIMENT_DEFAULTS as SUITE_DEFAULTS
from schema.cli import (TOPOLOGY_DEFAULTS, TOPOLOGY_FLAGS, merged_topology, parse_given,
                        read_config, topology_config)
from schema.experiment import ExperimentSection
from workloads import coflow_benchmark
from workloads.config import ConfigError, build
from workloads.trace import TraceError

# [experiment] keys a single packet-level run applies, and realloc, which it only checks
# (it must be "policy", as in the suite); the defaults are the suite's own
APPLIED_EXPERIMENT_KEYS = ("priority_classes", "rate_scale", "time_scale")
CHECKED_EXPERIMENT_KEYS = ("realloc",)
EXPERIMENT_DEFAULTS = {k: SUITE_DEFAULTS[k]
                       for k in APPLIED_EXPERIMENT_KEYS + CHECKED_EXPERIMENT_KEYS}


def build_parser() -> ArgumentParser:
    ap = ArgumentParser(
        prog="python -m emulation.mininet", formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s TRACE --policy NAME -o OUTDIR [options]",
        description=described(
            "Replay TRACE (a JSON trace: python -m workloads generate) over real TCP on an "
            "emulated network (needs root) and write its records into OUTDIR: flows.csv, "
            "coflows.csv, stages.csv, run.json (times in trace seconds; emulated ones "
            "*_emulated_s), the capture check and the agents' logs."),
        epilog=epilog(
            ["python -m emulation.mininet \\\n"
             "      results/testbed-gpus/traces/5371bed488865ad6.json --policy beamer \\\n"
             "      --config experiments/testbed_gpus.toml -o runs/out/packet-beamer"],
            "Without root it exits 2 with one line. --config takes an experiment TOML: its "
            "realloc must be \"policy\", as in the suite, and the keys a single run does not "
            "use are named on stderr. See README.md, 'Packet-level backend (Mininet)'."))
    ap.add_argument("trace", metavar="TRACE", help=argparse.SUPPRESS)  # the description's
    ap.add_argument("--policy", required=True, choices=list(POLICIES), metavar="NAME",
                    help="scheduling policy (required): %(choices)s")
    ap.add_argument("--config", metavar="FILE", type=Path,
                    help="experiment TOML whose [topology] and [experiment] "
                         "priority_classes/rate_scale/time_scale apply (options given win)")
    # the same defaults as the fluid command line and the [topology] table
    add_topology_args(ap, hosts_per_leaf=TopologyConfig.hosts_per_leaf,
                      spines=TopologyConfig.num_spines,
                      oversubscription=TopologyConfig.oversubscription)
    ap.add_argument("--link-rate-bps", type=float, default=TOPOLOGY_DEFAULTS["link_rate_bps"],
                    metavar="BPS",
                    help="unscaled host link rate in bits per second (default 10e9 = "
                         "10 Gbit/s; emulated at BPS x --rate-scale)")
    ap.add_argument("--priority-classes", type=int,
                    default=EXPERIMENT_DEFAULTS["priority_classes"], choices=range(1, 9),
                    metavar="K", help="strict-priority classes per port, 1..8 (default 8)")
    ap.add_argument("--rate-scale", type=float, default=EXPERIMENT_DEFAULTS["rate_scale"],
                    metavar="X",
                    help="emulated link rate / real link rate (default 0.003: 10G -> 30M)")
    ap.add_argument("--time-scale", type=float, default=EXPERIMENT_DEFAULTS["time_scale"],
                    metavar="X", help="emulated seconds per trace second (default 2)")
    ap.add_argument("--no-capture", action="store_true",
                    help="skip the tcpdump capture (and the capture-derived records)")
    add_output_args(ap)
    return ap


def settings(args: argparse.Namespace, given: set[str]
             ) -> tuple[TopologyConfig, dict, list[str]]:
    """Topology, the run's options (priority_classes, rate_scale, time_scale) and the
    --config notes: defaults < the file < given options. ConfigError names a bad key."""
    file_topo, file_exp, notes = {}, {}, []
    for flag in ("rate_scale", "time_scale"):
        if flag in given and not getattr(args, flag) > 0:
            raise ConfigError(f"--{flag.replace('_', '-')}: must be > 0")
    if args.config is not None:
        file_topo, file_exp, notes = read_config(args.config, applied=APPLIED_EXPERIMENT_KEYS,
                                                 checked=CHECKED_EXPERIMENT_KEYS,
                                                 run_kind="packet-level")
    opts = {**EXPERIMENT_DEFAULTS, **file_exp}
    for key in APPLIED_EXPERIMENT_KEYS:
        if key in given:
            opts[key] = getattr(args, key)
    try:  # the suite's checks of a packet-level experiment (realloc, 1..8 classes), on the
        # values the run uses: a value given on the command line is already checked
        build(ExperimentSection, {"name": "run", "backend": "mininet", **opts}, "experiment")
    except ConfigError as exc:
        raise ConfigError(f"{args.config}: {exc}") from None
    topo = merged_topology(TOPOLOGY_DEFAULTS, file_topo, args, given)
    topo_cfg = topology_config(topo, given, args.config)
    why = unbuildable(topo_cfg)
    if why is not None:
        raise ConfigError(why if args.config is None else f"{args.config}: {why}")
    return topo_cfg, opts, notes


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args, given = parse_given(ap, argv, (*TOPOLOGY_FLAGS, "priority_classes", "rate_scale",
                                         "time_scale"))
    from emulation.fluid.run import ensure_kernels, existing_run_error
    err = (output_path_error(args.output, option="-o")  # before any network is built
           or existing_run_error(args.output, force=args.force))
    if err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        topo_cfg, opts, notes = settings(args, given)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for n in notes:
        print(n, file=sys.stderr)
    why = require_root()
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    ensure_kernels()  # the twin's and the scheduler's kernels, compiled once with a notice
    try:
        trace = coflow_benchmark.load_any(args.trace)
        run = run_mininet(trace=trace, trace_path=args.trace, topo_cfg=topo_cfg,
                          policy=args.policy, outdir=args.output,
                          priority_classes=opts["priority_classes"],
                          rate_scale=opts["rate_scale"], time_scale=opts["time_scale"],
                          capture=not args.no_capture)
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
