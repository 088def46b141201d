"""Add the packet-aware fluid twin (``twin_packet/``) to committed packet-level runs that
lack one (runs made before their emulated setting was calibrated by
``benchmarks/packet_costs.py``), or to every one with ``--replace`` after a new
calibration.

    .venv/bin/python -m runner.packet_twins [RESULTS_DIR] [--experiment NAME ...] [--replace]

Each twin is the one a new run of the same configuration writes
(``emulation.mininet.backend.packet_twin``); the run's own records are not touched (a
packed experiment is packed again, ``emulation.store``). A run whose
setting has no calibration is listed and left as it is.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from runner.config import REPO
from emulation.backends import BACKENDS, DEFAULT_BACKEND
from runner.execute import _portable_paths, prepare_trace, run_request
from runner.results_dir import committed_runs
from runner.verify import spec_from_record
from workloads.cli import ArgumentParser
from emulation import store


def missing_twins(results: Path, experiments: list[str] | None = None, *,
                  replace: bool = False) -> list[Path]:
    """Packet-level run directories of ``results`` without ``twin_packet/`` (every one if
    ``replace``), sorted."""
    out = []
    for d in committed_runs(results):
        if experiments and d.parent.name not in experiments:
            continue
        run = store.read_json(d / "run.json")
        if BACKENDS[run.get("backend", DEFAULT_BACKEND)].packet_level and store.is_run(d / "twin") \
                and (replace or not store.is_run(d / "twin_packet")):
            out.append(d)
    return sorted(out)


def add_twin(run_dir: Path, results: Path) -> bool:
    """Write ``run_dir/twin_packet`` (whole or not at all; a packed run is unpacked first,
    ``store.unpack``); False if no calibration."""
    from workloads import coflow_benchmark
    spec = spec_from_record(run_dir)
    run_dir = store.unpack(run_dir)
    trace_path, _ = prepare_trace(spec, results)  # the committed trace, found again
    trace = coflow_benchmark.load_any(trace_path)
    lb = store.read_json(run_dir / "run.json")["lower_bound_avg_sct_s"]
    tmp = run_dir / f".twin_packet-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        from emulation.mininet.backend import packet_twin
        if packet_twin(run_request(spec, trace_path, "", tmp), trace, tmp,
                       lb_avg_sct_s=lb) is None:
            return False
        old = run_dir / "twin_packet"
        if old.is_dir():
            old.rename(tmp / "old")
        os.replace(tmp / "twin_packet", old)
        _portable_paths(run_dir, results)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return True


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="python -m runner.packet_twins",
                        description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="?", type=Path, default=REPO / "results",
                    help="results directory (default: results/)")
    ap.add_argument("--experiment", nargs="+", metavar="NAME",
                    help="only these experiments (default: every packet-level run)")
    ap.add_argument("--replace", action="store_true",
                    help="rewrite the packet-aware twins that exist too (after a new "
                         "calibration)")
    args = ap.parse_args(argv)
    if not args.results.is_dir():
        ap.error(f"no results directory {args.results}")
    todo = missing_twins(args.results, args.experiment, replace=args.replace)
    uncalibrated = []
    for k, d in enumerate(todo, 1):
        done = add_twin(d, args.results)
        if not done:
            uncalibrated.append(d)
        print(f"({k}/{len(todo)}) {d.parent.name}/{d.name}: "
              f"{'twin_packet written' if done else 'no calibration for its setting'}",
              flush=True)
    for exp in sorted({d.parent for d in todo}):  # a packed experiment stays packed
        if (exp / store.RUNS_FILE).is_file():
            store.pack(exp)
    written, left = len(todo) - len(uncalibrated), len(uncalibrated)
    print(f"{written} packet-aware twin{'' if written == 1 else 's'} written; "
          f"{left} run{'' if left == 1 else 's'} without a calibration of its setting")
    return 0


if __name__ == "__main__":
    sys.exit(main())
