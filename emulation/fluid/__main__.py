"""``python -m emulation.fluid TRACE --policy NAME -o OUTDIR``: one fluid (flow-level) run.

Simulates one run of TRACE under one policy and writes flows.csv, coflows.csv,
stages.csv and run.json into OUTDIR; prints the settings first, then avg SCT, p95 SCT,
avg CCT and avg SCT / lower bound (seconds). TRACE is a JSON trace (``python -m
workloads generate``) or a coflow-benchmark text file (its ports become the hosts of a
big switch, default port rate 1 Gbit/s).

Reallocation (when the policy decides and rates are recomputed) is ``policy`` unless
asked otherwise, the same default as the experiment suite (``run_experiments.py``): each
policy runs as the packet backend enforces it, deciding at its published events with the
rates the switch queues give (``Policy.realloc_mode``, listed by ``--help``): a priority policy
that decides at coflow-level events gets ``queues`` (its classes re-share the rates at
every flow completion), Varys its published ``coflow`` (MADD rates held between coflow
events), per-flow fair sharing ``flow``. ``--realloc flow|coflow|queues`` runs every
policy under one mode (ablations). run.json records the mode (``realloc``) and where it
came from (``realloc_source``). On the FB2010 trace the ``queues`` policies take 13-20
times as long as ``--realloc coflow`` (13-23 s against about 1.2 s of simulation on the
2-core machine of the README's numbers), and ``flow`` minutes for the priority policies.

The lower bound (``avg_sct_over_lb``) is kept between runs in a cache directory
(``--lb-cache-dir``; ``emulation/scheduler/lower_bound_cache.py`` says what its key holds):
on the FB2010 trace it costs about 2 s, once per trace, topology and release setting.
``--no-flows-csv`` leaves out flows.csv (one row per flow: 706,397 on FB2010, 60 MB,
about a second to write); the analysis reads only stages.csv, coflows.csv and run.json.

``--config FILE`` takes an experiment TOML (the suite's format): its ``[topology]`` table
and ``[experiment]`` priority_classes / realloc / release_at_zero are applied; options
given on the command line override the file. Its other tables and keys (``[workload]``,
``[sweep]``, policies, seeds, ...) belong to the generator and the suite runner and are
named on stderr as not used.
"""
from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

from workloads.cli import (HELP_WIDTH, ArgumentParser, described, epilog,
                           interrupts_end_quietly, output_path_error, run_cli)

FLUID_INTERRUPTED = ("interrupted: the run did not finish; run it again (with --force if it had "
                     "begun writing into the output directory)")
if __name__ == "__main__":  # Ctrl-C while the imports below load ends quietly too
    interrupts_end_quietly(FLUID_INTERRUPTED)

from emulation.fluid.run import (Progress, add_output_args, ensure_kernels, existing_run_error,
                                 run_fluid)
from emulation.fluid.simulator import REALLOC_MODES
from emulation.scheduler.lower_bound_cache import lower_bound_cache_dir
from emulation.scheduler import POLICIES
from emulation.topology import TOPOLOGIES, TopologyConfig, add_topology_args, build_topology
from schema.cli import (EXPERIMENT_DEFAULTS, TOPOLOGY_DEFAULTS, TOPOLOGY_FLAGS, merged_topology,
                        parse_given, read_config, topology_config)
from schema.point import check_topology_hosts
from workloads import coflow_benchmark
from workloads.config import ConfigError
from workloads.trace import TraceError

REALLOC_CHOICES = (*REALLOC_MODES, "policy")
DEFAULT_REALLOC = EXPERIMENT_DEFAULTS["realloc"]  # "policy"
BENCH_LINK_RATE_BPS = 1e9  # coflow-benchmark files: the FB2010 trace's 1 Gbit/s ports
# [experiment] keys a single fluid run applies; the others are the suite runner's
APPLIED_EXPERIMENT_KEYS = ("priority_classes", "realloc", "release_at_zero")


def realloc_modes() -> str:
    """The epilog's list of each policy's published decision events and the mode
    ``--realloc policy`` runs it in (``name=events -> mode``), packed a few a line."""
    entries = [f"{n}={POLICIES[n].default_realloc}"
               + ("" if POLICIES[n].declared_realloc() else " (declares none)")
               + f" -> {POLICIES[n].realloc_mode()}" for n in POLICIES]
    lines = [""]
    for e in entries:
        if lines[-1] and len(lines[-1]) + len(e) + 4 > HELP_WIDTH:
            lines.append("")
        lines[-1] += (", " if lines[-1] else "") + e
    return ("--realloc policy runs each policy as: name=published events -> mode\n"
            + "\n".join(f"  {ln}" for ln in lines))


def build_parser() -> ArgumentParser:
    ap = ArgumentParser(
        prog="python -m emulation.fluid", formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s TRACE --policy NAME -o OUTDIR [options]",
        description=described(
            "Simulate one fluid (flow-level) run of TRACE (a JSON trace: python -m "
            "workloads generate; or a coflow-benchmark .txt file, its ports the hosts of a "
            "big switch) under one policy: write flows.csv, coflows.csv, stages.csv and "
            "run.json into OUTDIR, and print avg SCT, p95 SCT, avg CCT and avg SCT / lower "
            "bound (seconds)."),
        epilog=epilog(
            ["python -m emulation.fluid runs/trace.json --policy beamer -o runs/out/beamer",
             "python -m emulation.fluid runs/trace.json --policy fair \\\n"
             "      --config experiments/default.toml -o runs/out/fair",
             "python -m emulation.fluid data/FB2010-1Hr-150-0.txt --policy varys \\\n"
             "      --config experiments/fb.toml -o /tmp/fb-varys"])
        + "\n\n" + realloc_modes() + "\n\n" + described(
            "The keys of --config a single run does not use are named on stderr. See "
            "README.md, 'Your own experiment' and 'Everyday commands' (rate semantics)."))
    ap.add_argument("trace", metavar="TRACE", help=argparse.SUPPRESS)  # the description's
    ap.add_argument("--policy", required=True, choices=list(POLICIES), metavar="NAME",
                    help="scheduling policy (required; each is listed below)")
    ap.add_argument("--config", metavar="FILE", type=Path,
                    help="experiment TOML whose [topology] and [experiment] "
                         "priority_classes/realloc/release_at_zero apply (options given win)")
    add_topology_args(ap, hosts_per_leaf=TOPOLOGY_DEFAULTS["hosts_per_leaf"],
                      spines=TOPOLOGY_DEFAULTS["num_spines"],
                      oversubscription=TOPOLOGY_DEFAULTS["oversubscription"])
    ap.add_argument("--link-rate-bps", type=float, default=None, metavar="BPS",
                    help="host link rate in bits per second, 1e9 = 1 Gbit/s (default: "
                         "--config's, else "
                         f"{TOPOLOGY_DEFAULTS['link_rate_bps'] / 1e9:g}e9 for JSON traces, "
                         f"{BENCH_LINK_RATE_BPS / 1e9:g}e9 for coflow-benchmark files)")
    ap.add_argument("--priority-classes", type=int,
                    default=EXPERIMENT_DEFAULTS["priority_classes"], metavar="K",
                    help="strict-priority classes per port; 0 = unlimited (default "
                         "%(default)s)")
    ap.add_argument("--release-at-zero", action=argparse.BooleanOptionalAction,
                    default=EXPERIMENT_DEFAULTS["release_at_zero"],
                    help="release every app at t=0 (Sincronia's offline setting)")
    ap.add_argument("--realloc", choices=REALLOC_CHOICES, default=DEFAULT_REALLOC,
                    help="when the policy decides and rates are recomputed: policy "
                         "(default, the suite's): each policy as the packet backend runs "
                         "it, listed below; flow, coflow (fastest), queues: one rule for "
                         "every policy")
    add_output_args(ap)
    ap.add_argument("--no-flows-csv", action="store_true",
                    help="do not write flows.csv (one row per flow: 706,397 for FB2010)")
    ap.add_argument("--lb-cache-dir", type=Path, default=None, metavar="DIR",
                    help="where lower bounds are kept between runs (default: "
                         f"$BEAMER_CACHE_DIR/lower-bound if set; here {lower_bound_cache_dir()})")
    ap.add_argument("--no-lb-cache", action="store_true",
                    help="compute the lower bound in this run and store nothing")
    ap.add_argument("--no-progress", action="store_true",
                    help="no progress on stderr (default: on a terminal a bar after 2 s, "
                         "else a line every 10 s)")
    return ap


def parse(argv: list[str] | None) -> tuple[argparse.Namespace, set[str]]:
    """Parsed options with defaults filled in, and the dests given on the command line."""
    ap = build_parser()
    args, given = parse_given(ap, argv, (*TOPOLOGY_FLAGS, "priority_classes",
                                         "release_at_zero", "realloc"))
    if args.priority_classes < 0:
        ap.error("--priority-classes must be >= 0")
    return args, given


def settings(args: argparse.Namespace, given: set[str], is_bench: bool
             ) -> tuple[TopologyConfig, dict, list[str]]:
    """Topology, the run's options (priority_classes, realloc, release_at_zero,
    realloc_source, num_hosts_source: the --config file if it sets topology.num_hosts,
    else None: the trace's host count) and the --config notes: defaults < the file <
    given options."""
    topo = dict(TOPOLOGY_DEFAULTS)
    if is_bench:
        topo["link_rate_bps"] = BENCH_LINK_RATE_BPS
    opts = {k: EXPERIMENT_DEFAULTS[k] for k in APPLIED_EXPERIMENT_KEYS}
    source = "default"
    num_hosts_source = None
    notes: list[str] = []
    if args.config is not None:
        file_topo, file_exp, notes = read_config(args.config, applied=APPLIED_EXPERIMENT_KEYS,
                                                 run_kind="fluid")
        topo.update(file_topo)
        opts.update(file_exp)
        if "realloc" in file_exp:
            source = f"{args.config} [experiment] realloc"
        if "num_hosts" in file_topo:
            num_hosts_source = str(args.config)
    topo = merged_topology(topo, {}, args, given)
    for key in opts:
        if key in given:
            opts[key] = getattr(args, key)
    if "realloc" in given:
        source = "--realloc"
    topo_cfg = topology_config(topo, given, args.config)
    if is_bench and topo_cfg.kind != "big_switch":
        raise ConfigError("coflow-benchmark traces use ports: only topology big_switch")
    return topo_cfg, {**opts, "realloc_source": source,
                      "num_hosts_source": num_hosts_source}, notes


def main(argv: list[str] | None = None) -> int:
    args, given = parse(argv)
    err = (output_path_error(args.output, option="-o")
           or existing_run_error(args.output, force=args.force))
    if err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        is_bench = coflow_benchmark.looks_like(args.trace)
        topo_cfg, opts, notes = settings(args, given, is_bench)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for n in notes:
        print(n, file=sys.stderr)
    ensure_kernels(sys.stderr)
    with Progress(sys.stderr, enabled=not args.no_progress) as progress:
        progress.phase("loading the trace")
        try:
            trace = coflow_benchmark.load_any(args.trace)
            topo = trace_topology(topo_cfg, trace.hosts, trace_path=args.trace,
                                  num_hosts_source=opts["num_hosts_source"])
            # hosts no flow uses (more than the trace's, or a last leaf filled up): named
            idle = check_topology_hosts(topo_cfg, trace.hosts,
                                        hosts_key=f"{args.trace}: {len(trace.hosts)} hosts")
        except (TraceError, ConfigError) as exc:
            progress.write(f"error: {exc}", file=sys.stderr)
            return 2
        if idle:  # named after the --config file that set topology.num_hosts, if one did
            source = opts["num_hosts_source"]
            progress.write(f"note: {source + ': ' if source else ''}{idle}", file=sys.stderr)
        # the modules and the trace live until the process ends: the garbage collector's
        # full passes skip them from here on (0.3-0.5 s fewer on FB2010; nothing recorded
        # depends on it)
        gc.freeze()
        progress.write(header(args.policy, topo, topo_cfg, opts))
        mode = opts["realloc"]
        extra = {"realloc_source": opts["realloc_source"],
                 "policy_default_realloc": POLICIES[args.policy].default_realloc,
                 "config_file": str(args.config) if args.config else None,
                 "flows_csv": not args.no_flows_csv}
        lb_cache_dir = None if args.no_lb_cache else (args.lb_cache_dir
                                                      or lower_bound_cache_dir())
        run = run_fluid(trace=trace, trace_path=args.trace, topology=topo,
                        policy=args.policy, outdir=args.output,
                        priority_classes=opts["priority_classes"],
                        release_at_zero=opts["release_at_zero"],
                        realloc=None if mode == "policy" else mode, extra=extra,
                        progress=progress, lb_cache_dir=lb_cache_dir,
                        write_flows=not args.no_flows_csv)
    print(f"stages: {run['num_stages']}")
    print(f"avg_sct_s: {run['avg_sct_s']:.4f}")
    print(f"p95_sct_s: {run['p95_sct_s']:.4f}")
    avg_cct = run["avg_cct_s"]
    print(f"avg_cct_s: {avg_cct:.4f}" if avg_cct is not None else "avg_cct_s: none (no coflows)")
    cache = run.get("lower_bound_cache")
    print(f"lower_bound_avg_sct_s: {run['lower_bound_avg_sct_s']:.4f}"
          + ("" if cache is None else " (read from the cache)" if cache["hit"]
             else " (computed, stored in the cache)" if cache["stored"]
             else " (computed; the cache directory is not writable)"))
    ratio = run["avg_sct_over_lb"]
    print(f"avg_sct_over_lb: {ratio:.4f}" if ratio is not None else "avg_sct_over_lb: none")
    print(f"simulated_s: {run['simulated_s']:.4f}")
    print(f"wall_s: {run['wall_s']:.2f}")
    print(f"records: {args.output}")
    return 0


def trace_topology(topo_cfg: TopologyConfig, trace_hosts: tuple[str, ...], *, trace_path: str,
                   num_hosts_source: str | None):
    """``build_topology`` for the trace at ``trace_path``; its error for hosts the topology
    lacks names the trace file and, in front, the TOML file that set topology.num_hosts
    (``num_hosts_source``; None: the trace's host count, nothing to name)."""
    try:
        return build_topology(topo_cfg, trace_hosts,
                              hosts_key=f"{trace_path}: {len(trace_hosts)} hosts")
    except ConfigError as exc:
        if num_hosts_source is None:
            raise
        raise ConfigError(f"{num_hosts_source}: {exc}") from None


def header(policy: str, topo, topo_cfg: TopologyConfig, opts: dict) -> str:
    """The settings of the run, 'name: value' lines, printed before it starts."""
    mode = opts["realloc"]
    cls = POLICIES[policy]
    published, own = cls.declared_realloc(), cls.realloc_mode()
    used = cls.resolve_realloc(mode)
    source = opts["realloc_source"]
    why = "the default" if source == "default" else f"from {source}"
    if mode == "policy":
        if published is None:
            why += f": {policy} declares no published mode"
        elif used == published:
            why += f": {policy}'s published mode"
        else:
            why += (f": {policy} decides at {published}-level events as published, its "
                    f"classes re-share the rates at every flow completion as switch queues do")
    elif published is None:
        why += f"; {policy} declares no published mode"
    elif used != own:
        why += f"; {policy}'s default is {own}: --realloc policy"
    k = opts["priority_classes"]
    lines = [
        f"policy: {policy}",
        f"realloc: {used} ({why})",
        f"topology: {topo.kind}, {len(topo.hosts)} hosts, links "
        f"{topo_cfg.link_rate_bps / 1e9:g} Gbit/s"
        + TOPOLOGIES[topo.kind].describe(topo_cfg),
        f"priority_classes: {k}" + (" (unlimited)" if k == 0 else ""),
        f"release_at_zero: {str(opts['release_at_zero']).lower()}",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    run_cli(main, interrupted=FLUID_INTERRUPTED)
