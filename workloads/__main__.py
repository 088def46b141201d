"""CLI for traces: ``generate CONFIG.toml -o trace.json``, ``summary FILE``, ``validate FILE``.

``generate`` takes any experiment TOML of the suite (``experiments/*.toml``): it builds
the trace from the ``[workload]`` table (its ``seed``, else the first of ``[experiment]
seeds``, else 1; ``--seed`` overrides both). The runner's other tables are checked
but not used (one line on stderr says which): ``[topology]`` is applied by ``python -m
emulation.fluid TRACE --config FILE``, ``[sweep]`` / ``[full]`` by ``run_experiments.py
--config FILE``. An experiment that runs a trace file (``[experiment] trace``, as
``fb.toml``) writes that file as JSON. A ``[workload]`` key that no tuner of the file
reads (``asha_num_trials`` with ``algorithm = "sha"``) is an error, as in the runner.
For ``summary`` and ``validate``, FILE is a JSON trace or a coflow-benchmark text file.
Bad input exits with status 2 and one line ``error: ...`` naming the field (and
app/stage/job), the key or the line number.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from workloads.cli import (ArgumentParser, described, epilog, interrupts_end_quietly,
                           output_path_error, run_cli)

if __name__ == "__main__":  # Ctrl-C while the imports below load ends quietly too
    interrupts_end_quietly()

from workloads import coflow_benchmark, trace
from workloads.cluster import ClusterConfig
from workloads.config import ConfigError, build, load_toml
from workloads.generator import WorkloadConfig, generate


def read_experiment(path: str | Path, seed: int | None = None
                    ) -> tuple[WorkloadConfig | None, Path | None, str | None]:
    """An experiment TOML, as ``generate`` reads it: the ``[workload]`` config (strictly
    validated, seed rule above) or, if ``[experiment] trace`` names a trace file, that
    file instead (config None); and a one-line note naming what is not used, or None.
    Every table is validated with the suite's own schemas (``schema``);
    ConfigError names a bad key."""
    from emulation.topology import TopologyConfig
    from schema.experiment import TABLES, ExperimentSection
    from schema.sweep import check_workload_keys, sweep_points
    p = Path(path)
    data = load_toml(p)
    for key in data:
        if key not in TABLES:
            raise ConfigError(f"{p}: unknown key '{key}' (known tables: {', '.join(TABLES)})")
    exp_table = dict(data.get("experiment", {}))
    exp = _in(p, build, ExperimentSection, {"name": p.stem, **exp_table}, "experiment")
    _in(p, build, TopologyConfig, data.get("topology"), "topology")
    table = dict(data.get("workload", {}))
    from_seeds = seed is None and "seed" not in table and "seeds" in exp_table
    if seed is not None:
        table["seed"] = seed
    elif from_seeds:
        table["seed"] = exp.seeds[0]
    cfg = _in(p, build, WorkloadConfig, table, "workload")
    # keys no tuner reads, as run_experiments.py checks them (at every sweep point)
    check_workload_keys(p, [t["workload"] for _, t in sweep_points(p, data, full=False)])
    trace_file = None
    if exp.trace:
        trace_file = Path(os.path.normpath(p.parent / exp.trace))
        if not trace_file.exists():
            raise ConfigError(f"{p}: experiment.trace: no such file {trace_file}")
        if seed is not None:
            raise ConfigError(f"{p}: --seed: the experiment runs the trace file {trace_file}, "
                              "nothing is seeded")
    unused = []
    if trace_file is not None and "workload" in data:
        unused.append("[workload] (the experiment runs experiment.trace)")
    if "topology" in data:
        unused.append(f"[topology] (apply it: python -m emulation.fluid TRACE --config {p})")
    runner = [f"[{t}]" for t in TABLES if t in data
              and t not in ("workload", "topology", "cluster")]
    if runner:
        unused.append(f"{', '.join(runner)} (the suite runner's: run_experiments.py)")
    if trace_file is not None:
        uses = (f"the experiment's trace file {trace_file}, written as JSON (python -m "
                f"emulation.fluid also reads it as it is)")
    else:
        uses = f"[workload] (seed {cfg.seed}" + (" = experiment.seeds[0])" if from_seeds else ")")
    note = (f"note: {p}: generate uses {uses}" + (f"; not used: {'; '.join(unused)}" if unused else "")
            if unused or trace_file is not None else None)
    return (None if trace_file is not None else cfg), trace_file, note


def read_cluster(path: str | Path) -> ClusterConfig | None:
    """The file's ``[cluster]`` table (its trials are placed during the run), or None."""
    data = load_toml(path)
    if "cluster" not in data:
        return None
    return _in(Path(path), build, ClusterConfig, data["cluster"], "cluster")


def workload_config_from_toml(path: str | Path, seed: int | None = None) -> WorkloadConfig:
    """The ``[workload]`` config ``generate`` would use (``read_experiment``)."""
    cfg, trace_file, _ = read_experiment(path, seed)
    if cfg is None:
        raise ConfigError(f"{path}: experiment.trace names a trace file ({trace_file}): "
                          "no [workload] to generate")
    return cfg


def build_parser() -> ArgumentParser:
    """The command line: ``generate``, ``summary`` and ``validate``."""
    parser = ArgumentParser(
        prog="python -m workloads", formatter_class=argparse.RawDescriptionHelpFormatter,
        description=described("Traces: generate one from an experiment TOML, print its "
                              "size, or validate it."),
        epilog=epilog(
            ["python -m workloads generate experiments/default.toml -o runs/trace.json",
             "python -m workloads summary data/FB2010-1Hr-150-0.txt",
             "python -m workloads validate runs/trace.json"],
            "generate builds the trace of the file's [workload] table, its trials placed "
            "during the run on the file's [cluster] if it has one (an experiment that "
            "runs a trace file, [experiment] trace, writes that file as JSON); the other "
            "tables are checked, and named on stderr as not used: [topology] is applied by "
            "python -m emulation.fluid TRACE --config FILE, [sweep] and [full] by "
            "run_experiments.py. Bad input exits with status 2 and one line 'error: ...' "
            "naming the field, the key or the line. See README.md, 'Your own experiment'."))
    sub = parser.add_subparsers(dest="cmd", required=True, parser_class=ArgumentParser)
    g = sub.add_parser(
        "generate", help="generate a trace from an experiment TOML's [workload] table",
        description="Generate a JSON trace from the [workload] table of an experiment TOML "
                    "(any experiments/*.toml; keys and defaults: workloads/generator.py, "
                    "WorkloadConfig; times in seconds, sizes in bytes). Same file and seed, "
                    "byte-identical trace. An experiment that runs a trace file "
                    "([experiment] trace) writes that file as JSON.")
    g.add_argument("config", help="experiment TOML (its [workload] table; other tables are "
                                  "checked and named on stderr as not used)")
    g.add_argument("-o", "--output", required=True, metavar="TRACE.json",
                   help="trace file to write (canonical JSON; missing directories are made)")
    g.add_argument("--seed", type=int, metavar="N",
                   help="workload seed (default: [workload] seed, else the first of "
                        "[experiment] seeds, else 1)")
    s = sub.add_parser(
        "summary", help="print counts, bytes and per-host load, 'name: value' lines",
        description="Print a trace's size as 'name: value' lines: apps, stages, jobs, coflows "
                    "and flows (every iteration's), total_bytes, hosts and the busiest host's "
                    "sent and received bytes (--per-host: every host's). Bad input: exit 2 "
                    "and one line naming the file and the field.")
    s.add_argument("file", help="JSON trace or coflow-benchmark .txt file")
    s.add_argument("--per-host", action="store_true",
                   help="also print each host's sent and received bytes")
    v = sub.add_parser(
        "validate", help="check a trace; exit 2 with one line if it is bad",
        description="Check a trace (every field, unit and reference of workloads/trace.py, or "
                    "a coflow-benchmark file's lines): 'ok: FILE: N apps, M stages' and exit "
                    "0, or one line 'error: FILE: ...' naming the field (and app/stage/job) or "
                    "the line number, and exit 2.")
    v.add_argument("file", help="JSON trace or coflow-benchmark .txt file")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    bad_out = args.cmd == "generate" and output_path_error(args.output, option="-o",
                                                           kind="file")
    if bad_out:
        print(f"error: {bad_out}", file=sys.stderr)
        return 2
    try:
        if args.cmd == "generate":
            _generate(args.config, args.output, seed=args.seed)
        elif args.cmd == "summary":
            _summary(args.file, per_host=args.per_host)
        else:
            t = coflow_benchmark.load_any(args.file)
            print(f"ok: {args.file}: {len(t.apps)} apps, {len(t.stages())} stages")
    except (trace.TraceError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _generate(config: str, output: str, *, seed: int | None) -> None:
    """``generate``: the trace of an experiment TOML written to ``output``, a line saying
    what it holds."""
    cfg, trace_file, note = read_experiment(config, seed=seed)
    if note:
        print(note, file=sys.stderr)
    t = (generate(cfg, cluster=read_cluster(config)) if cfg is not None
         else coflow_benchmark.load_any(trace_file))
    Path(output).parent.mkdir(parents=True, exist_ok=True)  # runs/ in a fresh clone
    trace.save(t, output)
    n_coflows = sum(j.iterations * len(j.coflows) for j in t.jobs())
    shown_seed = "none" if t.seed is None else t.seed
    what = (f"{n_coflows} coflows" if t.cluster is None else
            f"{len(t.jobs())} trials placed during the run on "
            f"{t.cluster['gpus_per_host']} GPUs per host ({t.cluster['placement']})")
    print(f"wrote {output}: seed {shown_seed}, {len(t.apps)} apps, "
          f"{what}, sha256 {trace.sha256(t)[:12]}")


def _summary(file: str, *, per_host: bool) -> None:
    """``summary``: a trace's size as ``name: value`` lines (``per_host``: every host's
    sent and received bytes too)."""
    t = coflow_benchmark.load_any(file)
    summ = t.summary()
    sent, recv = summ.pop("per_host_sent_bytes"), summ.pop("per_host_received_bytes")
    for k, val in summ.items():
        print(f"{k}: {val}")
    if t.cluster is not None:
        print(f"note: trials placed during the run on {t.cluster['gpus_per_host']} GPUs "
              "per host ([cluster]): their coflows and flows exist only once a run "
              "places them (0 here), and ASHA segments the run's tuner stops are "
              "not run, so a run may count fewer stages")
    if per_host:
        for h in t.hosts:
            print(f"host_{h}_sent_bytes: {sent[h]}")
            print(f"host_{h}_received_bytes: {recv[h]}")


def _in(path, fn, *args):
    """``fn(*args)`` with the file named in front of a ConfigError's or TraceError's
    message (unless the message already starts with it)."""
    try:
        return fn(*args)
    except (ConfigError, trace.TraceError) as exc:
        if str(exc).startswith(str(path)):
            raise
        raise type(exc)(f"{path}: {exc}") from None


if __name__ == "__main__":
    run_cli(main)
