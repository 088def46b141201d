"""CLI for traces: ``generate CONFIG.toml -o trace.json``, ``summary FILE``, ``validate FILE``.

FILE is a JSON trace or a coflow-benchmark text file. Bad input exits with status 2 and
one line ``error: ...`` naming the field (and app/stage/job) or the line number.
"""
from __future__ import annotations

import argparse
import sys

from workloads import coflow_benchmark, trace
from workloads.config import ConfigError, build, load_toml
from workloads.generator import WorkloadConfig, generate

# Top-level tables an experiment TOML may hold; each is validated strictly by its owner.
EXPERIMENT_TABLES = ("experiment", "workload", "topology", "run", "sweep", "mininet")


def workload_config_from_toml(path: str) -> WorkloadConfig:
    """The ``[workload]`` table of an experiment TOML, strictly validated."""
    data = load_toml(path)
    for key in data:
        if key not in EXPERIMENT_TABLES:
            raise ConfigError(f"unknown key '{key}' (known tables: {', '.join(EXPERIMENT_TABLES)})")
    return build(WorkloadConfig, data.get("workload"), "workload")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workloads", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="generate a trace from a TOML config's [workload] table")
    g.add_argument("config", help="experiment TOML with a [workload] table")
    g.add_argument("-o", "--output", required=True, help="trace JSON to write")
    g.add_argument("--seed", type=int, help="override workload.seed")
    s = sub.add_parser("summary", help="print counts, bytes and per-host load, 'name: value' lines")
    s.add_argument("file")
    s.add_argument("--per-host", action="store_true", help="also print each host's bytes")
    v = sub.add_parser("validate", help="check a trace; exit 2 with one line if it is bad")
    v.add_argument("file")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "generate":
            cfg = workload_config_from_toml(args.config)
            if args.seed is not None:
                cfg = build(WorkloadConfig, {**_plain(cfg), "seed": args.seed}, "workload")
            t = generate(cfg)
            trace.save(t, args.output)
            print(f"wrote {args.output}: {t.summary()['coflows']} coflows, sha256 {trace.sha256(t)[:12]}")
        elif args.cmd == "summary":
            t = coflow_benchmark.load_any(args.file)
            summ = t.summary()
            sent, recv = summ.pop("per_host_sent_bytes"), summ.pop("per_host_received_bytes")
            for k, val in summ.items():
                print(f"{k}: {val}")
            if args.per_host:
                for h in t.hosts:
                    print(f"host_{h}_sent_bytes: {sent[h]}")
                    print(f"host_{h}_received_bytes: {recv[h]}")
        else:
            t = coflow_benchmark.load_any(args.file)
            print(f"ok: {args.file}: {len(t.apps)} apps, {len(t.stages())} stages")
    except (trace.TraceError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _plain(cfg: WorkloadConfig) -> dict:
    from workloads.config import to_dict
    return to_dict(cfg)


if __name__ == "__main__":
    sys.exit(main())
