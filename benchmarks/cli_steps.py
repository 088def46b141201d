"""The steps of one FB2010 command-line run outside the simulation, each against its
alternative, in one process and in turn (``--reps`` times; medians printed):

    .venv/bin/python benchmarks/cli_steps.py [--reps 3]

- flows.csv (706,397 rows of one ``varys`` run, ``realloc=coflow``): pandas'
  ``DataFrame.to_csv`` against ``records.write_columns_csv`` (the same bytes: checked);
- parsing the trace (``coflow_benchmark.load``, the collector paused) against the same
  parser with the garbage collector running, after the simulator's imports (as in the
  command line);
- the lower bound: ``lower_bound`` computed against ``cached_lower_bound`` reading its
  entry (the same value: checked).

The whole process (start-up, imports, the kernels, the simulation) is
``fluid_speed.py --cli``'s.
"""
from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workloads.cli import ArgumentParser  # noqa: E402  (one-line usage errors)
FB = REPO / "data" / "FB2010-1Hr-150-0.txt"


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> int:
    ap = ArgumentParser(description=__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3, help="times each pair runs (median)")
    args = ap.parse_args()
    if args.reps < 1:
        ap.error("--reps must be >= 1")
    import pandas as pd
    from emulation import kernels
    from emulation.fluid.simulator import FluidSimulator
    from emulation.records import FLOW_COLUMNS, file_sha256, write_columns_csv
    from emulation.scheduler import make_policy
    from emulation.scheduler.lower_bound import lower_bound
    from emulation.scheduler.lower_bound_cache import cached_lower_bound
    from emulation.topology import big_switch
    from workloads import coflow_benchmark
    kernels.warm_up()
    topo = big_switch(150, 1e9)
    times: dict[str, list[float]] = {}

    def parse_with_collector() -> None:
        coflow_benchmark._parse(FB)  # the parser alone: the collector stays on

    for _ in range(args.reps):
        gc.collect()
        times.setdefault("parse the trace, collector running", []).append(
            timed(parse_with_collector))
        gc.collect()
        times.setdefault("parse the trace, collector paused (load)", []).append(
            timed(lambda: coflow_benchmark.load(FB)))
    trace = coflow_benchmark.load(FB)
    res = FluidSimulator(trace, topo, make_policy("varys"), realloc="coflow").run()
    cols = {k: res.flows[k] for k in FLOW_COLUMNS}
    sha = file_sha256(FB)
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "pandas.csv", Path(tmp) / "columns.csv"
        for _ in range(args.reps):
            times.setdefault("flows.csv by pandas to_csv", []).append(
                timed(lambda: pd.DataFrame(cols).to_csv(a, index=False)))
            times.setdefault("flows.csv by write_columns_csv", []).append(
                timed(lambda: write_columns_csv(b, columns=cols)))
        if a.read_bytes() != b.read_bytes():
            raise SystemExit("flows.csv differs between the two writers")
        cache = Path(tmp) / "cache"
        fresh = lower_bound(trace, topo).avg_sct_s
        cached_lower_bound(trace, topo, trace_sha256=sha, cache_dir=cache)  # stores it
        for _ in range(args.reps):
            times.setdefault("lower bound computed", []).append(
                timed(lambda: lower_bound(trace, topo)))
            times.setdefault("lower bound read from the cache", []).append(
                timed(lambda: cached_lower_bound(trace, topo, trace_sha256=sha,
                                                 cache_dir=cache)))
        hit = cached_lower_bound(trace, topo, trace_sha256=sha, cache_dir=cache)
        if not hit.hit or hit.avg_sct_s != fresh:
            raise SystemExit("the cached bound is not the computed one")
    print(f"{'step (FB2010, 706,397 flows)':44s} {'median s':>9s} {'min s':>7s} {'max s':>7s}")
    for label, ts in times.items():
        print(f"{label:44s} {statistics.median(ts):9.3f} {min(ts):7.3f} {max(ts):7.3f}")
    print(f"(reps={args.reps}, in turn within each pair)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
