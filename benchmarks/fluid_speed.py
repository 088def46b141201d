"""Fluid-simulator speed and memory benchmark; prints a table (medians of --reps runs).

    .venv/bin/python benchmarks/fluid_speed.py [--reps 3] [--skip-fb]

Rows: the FB2010 coflow-benchmark trace (526 coflows, 706,397 flows) under varys and
sincronia with coflow-level reallocation (rates recomputed when a coflow arrives or
completes: Varys's semantics), and under fair with exact per-flow reallocation (43,966
rate changes) and with coflow-level reallocation; a generated HPO trace of >= 2,000
coflows under every policy (exact per-flow reallocation); and the ordering step alone of
beamer and sincronia on a synthetic view of 500 stages / 2,000 coflows / 300 links.

Each simulation runs in a fresh child process (so peak RSS is its own). The time is
``FluidSimulator.run`` in that process: the event loop and building the records' columns
(the flow-id strings are built when the records are written, not here), not parsing the
trace; it includes loading the compiled kernels from numba's on-disk cache. A first row
times compiling the kernels with that cache disabled (paid once per machine). Targets from
issue 3 are printed beside the medians; ratio = median / target, < 1 meets the target.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
FB = REPO / "data" / "FB2010-1Hr-150-0.txt"

HPO_WORKLOAD = {"seed": 11, "num_apps": 7, "algorithm": "hyperband", "max_resource": 9,
                "eta": 3, "iterations_per_unit": 4, "gpu_mix": {"2": 1, "4": 1, "8": 1},
                "models": {"resnet50": 1, "vgg16": 1}, "num_hosts": 32,
                "arrival_rate_per_s": 0.05}


def _simulate(kind: str, policy: str, realloc: str, q: mp.Queue) -> None:
    from emulation.fluid.simulator import FluidSimulator
    from emulation.scheduler import make_policy
    from emulation.topology import big_switch
    if kind == "fb":
        from workloads.coflow_benchmark import load
        trace, topo = load(FB), big_switch(150, 1e9)
    else:
        from workloads.config import build
        from workloads.generator import WorkloadConfig, generate
        trace = generate(build(WorkloadConfig, HPO_WORKLOAD, "workload"))
        topo = big_switch(32, 10e9)
    sim = FluidSimulator(trace, topo, make_policy(policy), realloc=realloc)
    t0 = time.perf_counter()
    res = sim.run()
    wall = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    q.put((wall, rss_mb, len(res.coflows), res.flows.num_rows))


def simulate(kind: str, policy: str, realloc: str) -> tuple[float, float, int, int]:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_simulate, args=(kind, policy, realloc, q))
    p.start()
    out = q.get()
    p.join()
    return out


def _compile(cache_dir: str | None, q: mp.Queue) -> None:
    if cache_dir:
        os.environ["NUMBA_CACHE_DIR"] = cache_dir  # empty: every kernel compiles from source
    from emulation import kernels
    t0 = time.perf_counter()
    kernels.warm_up()
    q.put(time.perf_counter() - t0)


def compile_kernels(cold: bool) -> float:
    """Seconds to get every kernel ready in a fresh process: compiled from source without
    the on-disk cache (``cold``) or from numba's cache next to ``emulation/kernels.py``
    (compiling and filling it if stale)."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    with tempfile.TemporaryDirectory() as cache_dir:
        p = ctx.Process(target=_compile, args=(cache_dir if cold else None, q))
        p.start()
        out = q.get()
        p.join()
    return out


def ordering_view(rng: np.random.Generator, S: int = 500, C: int = 2000, L: int = 300, J: int = 2000):
    from emulation.scheduler.base import View
    coflow_stage = rng.integers(0, S, C)
    coflow_job = rng.permutation(J)[:C]
    job_stage = rng.integers(0, S, J)
    job_stage[coflow_job] = coflow_stage
    clb = np.zeros((C, L))
    for c in range(C):
        clb[c, rng.choice(L, 8, replace=False)] = rng.uniform(1e6, 1e9, 8)
    slb = np.zeros((S, L))
    np.add.at(slb, coflow_stage, clb * rng.integers(1, 20, (C, 1)))
    return View(now_s=0.0, coflow_ids=tuple(f"c{i}" for i in range(C)),
                stage_ids=tuple(f"s{i}" for i in range(S)), job_ids=tuple(f"j{i}" for i in range(J)),
                capacity_bps=np.full(L, 10e9), coflow_stage=coflow_stage, coflow_job=coflow_job,
                coflow_release_s=rng.uniform(0, 100, C), coflow_seq=np.arange(C),
                coflow_size_bytes=clb.sum(1), coflow_sent_bytes=np.zeros(C),
                coflow_link_bytes=clb, stage_weight=np.ones(S), stage_start_s=np.zeros(S),
                stage_link_bytes=slb, job_stage=job_stage,
                job_remaining_iterations=rng.integers(1, 50, J),
                job_critical_path_s=rng.uniform(0, 100, J))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--skip-fb", action="store_true", help="leave out the FB trace rows")
    args = ap.parse_args()
    from emulation.scheduler import POLICIES, make_policy
    rows = []
    sims = []
    compile_s = compile_kernels(cold=True)
    rows.append(("compile the numba kernels (no cache; once per machine)", compile_s, None, None))
    print(f"  done: kernels compiled in {compile_s:.1f} s", file=sys.stderr, flush=True)
    compile_kernels(cold=False)  # fill the on-disk cache the timed runs load from
    if not args.skip_fb:
        sims += [("fb", "varys", "coflow", 2.0), ("fb", "sincronia", "coflow", None),
                 ("fb", "fair", "flow", 20.0), ("fb", "fair", "coflow", None)]
    sims += [("hpo", p, "flow", 30.0) for p in sorted(POLICIES)]
    for kind, policy, realloc, target in sims:
        runs = [simulate(kind, policy, realloc) for _ in range(args.reps)]
        wall = statistics.median(r[0] for r in runs)
        rss = max(r[1] for r in runs)
        label = f"{'FB2010' if kind == 'fb' else 'HPO'} {policy} ({runs[0][2]} coflows, realloc={realloc})"
        rows.append((label, wall, target, rss))
        print(f"  done: {label}: {wall:.2f} s", file=sys.stderr, flush=True)
    rng = np.random.default_rng(0)
    view = ordering_view(rng)
    for name, target in (("beamer", 0.05), ("sincronia", None)):
        times = []
        for _ in range(max(3, args.reps)):
            pol = make_policy(name)
            t0 = time.perf_counter()
            pol.decide(view)
            times.append(time.perf_counter() - t0)
        rows.append((f"order {name} (500 stages, 2000 coflows, 300 links)",
                     statistics.median(times), target, None))
    print(f"\n{'case':62s} {'median s':>9s} {'target s':>9s} {'ratio':>6s} {'peak MB':>8s}")
    for label, wall, target, rss in rows:
        t = f"{target:9.2f}" if target else f"{'-':>9s}"
        r = f"{wall / target:6.2f}" if target else f"{'-':>6s}"
        m = f"{rss:8.0f}" if rss is not None else f"{'-':>8s}"
        print(f"{label:62s} {wall:9.3f} {t} {r} {m}")
    print(f"(reps={args.reps}; ratio = median / target, < 1 meets the target; peak MB = "
          f"child max RSS, target < 2048 for FB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
