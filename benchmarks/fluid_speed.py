"""Fluid-simulator speed and memory benchmark; prints a table (medians of --reps runs).

    .venv/bin/python benchmarks/fluid_speed.py [--reps 3] [--skip-fb] [--skip-cluster] [--cli]
    .venv/bin/python benchmarks/fluid_speed.py --cli-only [--reps 3]

Rows, in groups; every policy of the registry (``emulation.scheduler.POLICIES``) is
measured, so a new or replaced policy appears without editing this file:

- FB2010 coflow-benchmark trace (``data/``; 526 coflows, 706,397 flows, 150 ports at
  1 Gbit/s) under every policy in its default reallocation mode (``Policy.realloc_mode``:
  ``queues`` for the priority policies, ``coflow`` for Varys, ``flow`` for fair; target
  2 s, 5 s for per-flow fair), fair with exact reallocation asking the policy at every
  event (``reuse_decisions=False``: no compiled loop for the events that only complete
  flows; same records), and the offline Sincronia setting (all coflows at t = 0,
  unlimited priority classes, its default ``queues``: the semantics of Sincronia's own
  simulator; target 10 s; its avg CCT is printed; about 3 minutes per repetition on a
  2-core machine); with ``--fb-coflow`` every policy again under ``coflow`` (rates held
  between coflow events: the ablation, a few seconds each). The reference row is FB varys
  under ``coflow``.
- HPO: a generated trace of >= 2,000 coflows on 32 hosts, every policy in its default
  reallocation (target 30 s); beamer and sincronia with ``realloc="flow"``.
- cluster: a 1,024-host leaf-spine (32 hosts per leaf, 16 spines and again 8 spines
  (``--cluster-spines``), 2:1 oversubscription) with 256 Hyperband apps arriving at 1
  app/s (each runs for minutes, so dozens overlap), packed placement (18,408 coflows),
  every policy in its default reallocation; target 60 s and 4,096 MB peak RSS each;
  "x ref" is the time over the FB reference row (FB varys under ``coflow``) when the FB
  rows ran.
- decide: one ``policy.decide`` on the busiest view of that cluster run (most active
  coflows), and the ordering step of beamer and sincronia on a synthetic view of 500
  stages / 2,000 coflows / 300 links (beamer target 50 ms).

Each simulation runs in a fresh child process (so peak RSS is its own). The time is
``FluidSimulator.run`` in that process: the event loop and building the records' columns
(the flow-id strings are built when the records are written, not here), not parsing or
generating the trace, and not loading the compiled kernels: the child loads them from
numba's on-disk cache before the clock starts. Two first rows time what a process pays
once before simulating: compiling the kernels with that cache disabled (once per
machine) and loading them from the cache (once per process; 0.4-0.65 s on the 2-core
shared machine, which a single command-line run adds to the row's time and a sweep in one
process pays once).
Columns: median, target and median / target (< 1 meets it), and "x ref" = median / the
median of the group's named reference row in the same run (printed below the table), so
rows compare within one run on one machine.

``--cli`` adds the command line's rows (``--cli-only``: those alone, about 3 minutes), whose
"median" is a ratio, not seconds:

- one FB2010 ``varys`` run (``--config experiments/fb.toml``) as a whole process (``python
  -m emulation.fluid``: start-up, imports, loading the kernels, parsing the trace, the
  lower bound, the records) over its own ``sim_wall_s``; target 3. The lower bound is
  read from a cache directory of the benchmark's own, filled by an untimed first run;
  once with flows.csv, once with ``--no-flows-csv``, in turn.
- the first run in a fresh copy of the working tree (its tracked files, so no compiled
  kernel and no ``.pyc``) after ``scripts/setup.sh``'s kernel step, over a warm run in
  the same copy: ``sim_wall_s`` (target 1.5) and the whole process (no target). The
  copy's kernel step compiles every kernel (1-2 minutes).
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

from workloads.cli import ArgumentParser  # noqa: E402  (one-line usage errors)
FB = REPO / "data" / "FB2010-1Hr-150-0.txt"

HPO_WORKLOAD = {"seed": 11, "num_apps": 7, "algorithm": "hyperband", "max_resource": 9,
                "eta": 3, "iterations_per_unit": 4, "gpu_mix": {"2": 1, "4": 1, "8": 1},
                "models": {"resnet50": 1, "vgg16": 1}, "num_hosts": 32,
                "arrival_rate_per_s": 0.05}


CLUSTER_WORKLOAD = {"seed": 1, "num_apps": 256, "algorithm": "hyperband",
                    "iterations_per_unit": 2, "num_hosts": 1024, "placement": "packed",
                    "arrival_rate_per_s": 1.0,
                    # the generator's earlier default, pinned: the 18,408 coflows of the table
                    "gpu_mix": {"1": 30.0, "2": 10.0, "4": 10.0, "8": 10.0}}
CLUSTER_TOPOLOGY = {"kind": "leaf_spine", "hosts_per_leaf": 32, "num_spines": 16,
                    "oversubscription": 2.0, "link_rate_bps": 10e9}


def _trace_topo(kind: str):
    from emulation.topology import TopologyConfig, big_switch, build_topology
    from workloads.config import build
    from workloads.generator import WorkloadConfig, generate
    if kind == "fb":
        from workloads.coflow_benchmark import load
        return load(FB), big_switch(150, 1e9)
    if kind == "hpo":
        return generate(build(WorkloadConfig, HPO_WORKLOAD, "workload")), big_switch(32, 10e9)
    if not kind.startswith("cluster"):
        raise ValueError(f"unknown benchmark trace {kind!r}")
    # "cluster": CLUSTER_TOPOLOGY's 16 spines; "cluster<N>": N spines
    spines = int(kind[len("cluster"):] or CLUSTER_TOPOLOGY["num_spines"])
    trace = generate(build(WorkloadConfig, CLUSTER_WORKLOAD, "workload"))
    topo_cfg = {**CLUSTER_TOPOLOGY, "num_spines": spines}
    return trace, build_topology(build(TopologyConfig, topo_cfg, "topology"), trace.hosts)


def _simulate(kind: str, policy: str, realloc: str, offline: bool, reuse: bool,
              q: mp.Queue) -> None:
    from emulation import kernels
    from emulation.fluid.simulator import FluidSimulator
    from emulation.scheduler import make_policy
    kernels.warm_up()  # loading the machine code is its own row, not simulation
    trace, topo = _trace_topo(kind)
    sim = FluidSimulator(trace, topo, make_policy(policy), realloc=realloc,
                         release_at_zero=offline, priority_classes=0 if offline else 8,
                         reuse_decisions=reuse)
    t0 = time.perf_counter()
    res = sim.run()
    wall = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    avg_cct = float(np.mean([c["cct_s"] for c in res.coflows]))
    q.put((wall, rss_mb, len(res.coflows), res.flows.num_rows, avg_cct))


def simulate(kind: str, policy: str, realloc: str, offline: bool = False, reuse: bool = True
             ) -> tuple[float, float, int, int, float]:
    """(sim seconds, peak RSS MB, coflows, flows, avg CCT s) of one run in a fresh process."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_simulate, args=(kind, policy, realloc, offline, reuse, q))
    p.start()
    out = q.get()
    p.join()
    return out


class _Busiest:
    """Wraps a policy; keeps a concrete copy of the view with the most active coflows."""

    def __init__(self, inner):
        self.inner, self.best, self.best_n = inner, None, -1
        self.name, self.allocation = inner.name, inner.allocation

    def prepare(self, **kw):
        self.inner.prepare(**kw)

    def decide(self, view):
        if view.num_coflows > self.best_n:
            from emulation.scheduler.base import _ARRAY_FIELDS, View
            self.best_n = view.num_coflows
            self.best = View(now_s=view.now_s, coflow_ids=view.coflow_ids,
                             stage_ids=view.stage_ids, job_ids=view.job_ids,
                             **{f: np.array(getattr(view, f)) for f in _ARRAY_FIELDS})
        return self.inner.decide(view)


def _decision_costs(reps: int, q: mp.Queue) -> None:
    from emulation.fluid.simulator import FluidSimulator
    from emulation.scheduler import POLICIES, make_policy
    trace, topo = _trace_topo("cluster")
    probe = _Busiest(make_policy("fair"))
    FluidSimulator(trace, topo, probe).run()
    view = probe.best
    out = {}
    for name in sorted(POLICIES):
        times = []
        for _ in range(max(3, reps)):
            pol = make_policy(name)
            pol.prepare(coflow_sizes_bytes=np.asarray(view.coflow_size_bytes))
            t0 = time.perf_counter()
            pol.decide(view)
            times.append(time.perf_counter() - t0)
        out[name] = statistics.median(times)
    q.put((out, view.num_coflows, len(view.stage_ids), len(view.capacity_bps)))


def decision_costs(reps: int):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_decision_costs, args=(reps, q))
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
    the on-disk cache (``cold``) or from numba's cache next to the kernel modules
    (``emulation.kernels.MODULES``; compiling and filling it if stale)."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    with tempfile.TemporaryDirectory() as cache_dir:
        p = ctx.Process(target=_compile, args=(cache_dir if cold else None, q))
        p.start()
        out = q.get()
        p.join()
    return out


def _cli_run(cwd: Path, out: Path, env: dict, *flags: str) -> tuple[float, float]:
    """(whole-process wall s, its run.json's sim_wall_s) of one FB2010 varys CLI run."""
    import json
    import subprocess
    cmd = [sys.executable, "-m", "emulation.fluid", str(FB), "--policy", "varys",
           "--config", "experiments/fb.toml", "-o", str(out), "--force", "--no-progress",
           *flags]
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    return wall, json.loads((out / "run.json").read_text())["sim_wall_s"]


def cli_process_ratios(reps: int) -> dict[str, list[tuple[float, float]]]:
    """Per variant (flows.csv written or not), ``reps`` (process wall s, sim_wall_s)
    pairs, the variants in turn; the lower bound cached (an untimed first run)."""
    runs: dict[str, list[tuple[float, float]]] = {"with flows.csv": [], "--no-flows-csv": []}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "BEAMER_CACHE_DIR": str(Path(tmp) / "cache")}
        _cli_run(REPO, Path(tmp) / "out", env)  # fills the lower bound's cache
        for _ in range(reps):
            runs["with flows.csv"].append(_cli_run(REPO, Path(tmp) / "out", env))
            runs["--no-flows-csv"].append(_cli_run(REPO, Path(tmp) / "out", env,
                                                   "--no-flows-csv"))
    return runs


def cli_first_run(reps: int) -> tuple[tuple[float, float], list[tuple[float, float]], float]:
    """In a fresh copy of the tracked files: (first run's (wall s, sim_wall_s), ``reps``
    warm runs' pairs, seconds of setup.sh's kernel step)."""
    import shlex
    import subprocess
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True,
                           capture_output=True).stdout.decode().split("\0")
    setup_line = next(ln for ln in (REPO / "scripts" / "setup.sh").read_text().splitlines()
                      if "ensure_kernels" in ln and not ln.lstrip().startswith("#"))
    setup_cmd = [sys.executable, *shlex.split(setup_line)[1:]]  # its python: this one
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "copy"
        for f in filter(None, files):
            if (REPO / f).is_file():
                (copy / f).parent.mkdir(parents=True, exist_ok=True)
                (copy / f).write_bytes((REPO / f).read_bytes())
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        env["BEAMER_CACHE_DIR"] = str(Path(tmp) / "cache")
        t0 = time.perf_counter()
        subprocess.run(setup_cmd, cwd=copy, env=env, check=True, stdout=subprocess.DEVNULL)
        setup_s = time.perf_counter() - t0
        first = _cli_run(copy, Path(tmp) / "out", env)
        warm = [_cli_run(copy, Path(tmp) / "out", env) for _ in range(reps)]
    return first, warm, setup_s


def ordering_view(rng: np.random.Generator, S: int = 500, C: int = 2000, L: int = 300, J: int = 2000):
    from emulation.scheduler.base import View
    coflow_stage = rng.integers(0, S, C)
    coflow_job = rng.permutation(J)[:C]
    job_stage = rng.integers(0, S, J)
    job_stage[coflow_job] = coflow_stage
    clb = np.zeros((C, L))
    for c in range(C):
        clb[c, rng.choice(L, 8, replace=False)] = rng.uniform(1e6, 1e9, 8)
    jlb = np.zeros((J, L))
    jlb[coflow_job] = clb * rng.integers(1, 20, (C, 1))
    slb = np.zeros((S, L))
    np.add.at(slb, job_stage, jlb)
    return View(now_s=0.0, coflow_ids=tuple(f"c{i}" for i in range(C)),
                stage_ids=tuple(f"s{i}" for i in range(S)), job_ids=tuple(f"j{i}" for i in range(J)),
                capacity_bps=np.full(L, 10e9), coflow_stage=coflow_stage, coflow_job=coflow_job,
                coflow_release_s=rng.uniform(0, 100, C), coflow_seq=np.arange(C),
                coflow_size_bytes=clb.sum(1), coflow_sent_bytes=np.zeros(C),
                coflow_link_bytes=clb, stage_weight=np.ones(S), stage_start_s=np.zeros(S),
                stage_link_bytes=slb, stage_followed=rng.random(S) < 0.5, job_stage=job_stage,
                job_remaining_iterations=rng.integers(1, 50, J),
                job_critical_path_s=rng.uniform(0, 100, J), job_link_bytes=jlb)


def build_parser() -> ArgumentParser:
    """The benchmark's options."""
    ap = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3, help="repetitions per row (median)")
    ap.add_argument("--skip-fb", action="store_true", help="leave out the FB trace rows")
    ap.add_argument("--skip-cluster", action="store_true",
                    help="leave out the 1,024-host cluster rows (the longest part)")
    ap.add_argument("--cluster-spines", type=int, nargs="+", default=[16, 8], metavar="N",
                    help="spine counts of the cluster rows, one set of rows each "
                         "(default: 16 8; the 2:1 oversubscription is kept, so fewer "
                         "spines means faster uplinks)")
    ap.add_argument("--cli", action="store_true",
                    help="add the command line's ratios: one FB2010 run as a whole process "
                         "over its simulation time (target 3; with and without flows.csv), "
                         "and the first run in a fresh copy of the tree over a warm one "
                         "(target 1.5; compiles the kernels once, 1-2 minutes)")
    ap.add_argument("--cli-only", action="store_true",
                    help="only the --cli rows (about 3 minutes with --reps 3)")
    ap.add_argument("--fb-coflow", action="store_true",
                    help="add FB rows of every other policy under realloc=coflow (rates "
                         "held between coflow events; the ablation)")
    return ap


def main() -> int:
    ap = build_parser()
    args = ap.parse_args()
    if args.reps < 1:
        ap.error("--reps must be >= 1")
    rows: list[tuple[str, str, float, float | None, float | None]] = []  # group, label, s, target, MB
    refs: dict[str, str] = {}
    if args.cli or args.cli_only:
        cli_rows(rows, args.reps)
    if args.cli_only:
        return print_table(rows, refs, args.reps)
    kernel_rows(rows, args.reps)
    if not args.skip_fb:
        fb_rows(rows, refs, args.reps, coflow=args.fb_coflow)
    hpo_rows(rows, refs, args.reps)
    if not args.skip_cluster:
        cluster_rows(rows, refs, args.reps, args.cluster_spines)
    order_rows(rows, refs, args.reps)
    return print_table(rows, refs, args.reps)


def kernel_rows(rows: list, reps: int) -> None:
    """The rows of compiling the kernels (no cache) and of loading them from the cache."""
    compile_s = compile_kernels(cold=True)
    rows.append(("-", "compile the numba kernels (no cache; once per checkout)", compile_s, None, None))
    print(f"  done: kernels compiled in {compile_s:.1f} s", file=sys.stderr, flush=True)
    compile_kernels(cold=False)  # fill the on-disk cache the timed runs load from
    load_s = statistics.median(compile_kernels(cold=False) for _ in range(reps))
    rows.append(("-", "load the compiled kernels from numba's cache (once per process)",
                 load_s, None, None))


def sim_row(rows: list, reps: int, group: str, kind: str, policy: str, realloc: str,
            target: float | None, label: str, *, offline: bool = False, reuse: bool = True
            ) -> None:
    """One simulation row: the median wall time of ``reps`` runs and their peak memory
    (``simulate``); ``label`` may name the coflows ``{n}`` and the avg CCT ``{cct}``."""
    runs = [simulate(kind, policy, realloc, offline, reuse) for _ in range(reps)]
    wall = statistics.median(r[0] for r in runs)
    rss = max(r[1] for r in runs)
    rows.append((group, label.format(n=runs[0][2], cct=runs[0][4]), wall, target, rss))
    print(f"  done: {rows[-1][1]}: {wall:.2f} s, {rss:.0f} MB", file=sys.stderr, flush=True)


def fb_rows(rows: list, refs: dict[str, str], reps: int, *, coflow: bool) -> None:
    """The FB2010 rows: every policy under its default mode, fair asked at every event,
    Sincronia offline, and with ``coflow`` every other policy under realloc=coflow."""
    from emulation.scheduler import POLICIES
    for p in sorted(POLICIES, key=lambda n: n != "varys"):
        mode = POLICIES[p].realloc_mode()
        sim_row(rows, reps, "FB", "fb", p, mode, 5.0 if mode == "flow" else 2.0,
                f"FB2010 {p} (default realloc={mode})")
    sim_row(rows, reps, "FB", "fb", "fair", "flow", None,
            "FB2010 fair (realloc=flow, policy asked at every event)", reuse=False)
    sim_row(rows, reps, "FB", "fb", "sincronia", POLICIES["sincronia"].realloc_mode(), 10.0,
            "FB2010 sincronia offline, K=0 (default realloc; avg CCT {cct:.2f} s)",
            offline=True)
    if coflow:
        for p in sorted(POLICIES):
            if POLICIES[p].realloc_mode() != "coflow":
                sim_row(rows, reps, "FB", "fb", p, "coflow", None,
                        f"FB2010 {p} (realloc=coflow; avg CCT {{cct:.2f}} s)")
    refs["FB"] = next(r[1] for r in rows if r[0] == "FB")


def hpo_rows(rows: list, refs: dict[str, str], reps: int) -> None:
    """The HPO rows: every policy under its default mode, beamer and Sincronia under
    realloc=flow."""
    from emulation.scheduler import POLICIES
    for p in sorted(POLICIES, key=lambda n: n != "fair"):
        mode = POLICIES[p].realloc_mode()
        sim_row(rows, reps, "HPO", "hpo", p, mode, 30.0,
                f"HPO {p} ({{n}} coflows, default realloc={mode})")
    for p in ("beamer", "sincronia"):
        sim_row(rows, reps, "HPO", "hpo", p, "flow", None, f"HPO {p} ({{n}} coflows, realloc=flow)")
    refs["HPO"] = next(r[1] for r in rows if r[0] == "HPO")


def cluster_rows(rows: list, refs: dict[str, str], reps: int, spine_counts: list[int]) -> None:
    """The 1,024-host cluster rows, one set per spine count, and each policy's decision
    cost on the cluster's view."""
    from emulation.scheduler import POLICIES
    for spines in spine_counts:
        for p in sorted(POLICIES, key=lambda n: n != "fair"):
            mode = POLICIES[p].realloc_mode()
            sim_row(rows, reps, "cluster", f"cluster{spines}", p, mode, 60.0,
                    f"cluster 1024 hosts, {spines} spines, {p} ({{n}} coflows, "
                    f"default realloc={mode})")
    # x ref against the FB reference when the FB rows ran, else the first cluster row
    refs["cluster"] = refs.get("FB") or next(r[1] for r in rows if r[0] == "cluster")
    costs, nc, ns, nl = decision_costs(reps)
    for p in sorted(costs, key=lambda n: n != "sincronia"):
        rows.append(("decide", f"decide {p} (cluster view: {nc} coflows, {ns} stages, "
                               f"{nl} links)", costs[p], None, None))
    refs["decide"] = next(r[1] for r in rows if r[0] == "decide")


def order_rows(rows: list, refs: dict[str, str], reps: int) -> None:
    """One ordering decision of Sincronia and beamer on a large synthetic view."""
    from emulation.scheduler import make_policy
    rng = np.random.default_rng(0)
    view = ordering_view(rng)
    for name, target in (("sincronia", None), ("beamer", 0.05)):
        times = []
        for _ in range(max(3, reps)):
            pol = make_policy(name)
            t0 = time.perf_counter()
            pol.decide(view)
            times.append(time.perf_counter() - t0)
        rows.append(("order", f"order {name} (500 stages, 2000 coflows, 300 links)",
                     statistics.median(times), target, None))
    refs["order"] = next(r[1] for r in rows if r[0] == "order")


def cli_rows(rows: list, reps: int) -> None:
    """The --cli rows (ratios) appended to ``rows``; their seconds on stderr."""
    for variant, pairs in cli_process_ratios(reps).items():
        ratio = statistics.median(w / s for w, s in pairs)
        rows.append(("cli", f"FB2010 varys CLI process wall / its sim_wall_s ({variant})",
                     ratio, 3.0, None))
        print(f"  done: {variant}: process {statistics.median(w for w, _ in pairs):.2f} s, "
              f"simulation {statistics.median(s for _, s in pairs):.2f} s (medians)",
              file=sys.stderr, flush=True)
    (first_wall, first_sim), warm, setup_s = cli_first_run(reps)
    warm_sim = statistics.median(s for _, s in warm)
    warm_wall = statistics.median(w for w, _ in warm)
    rows.append(("cli", "first CLI run in a fresh copy / a warm run (sim_wall_s)",
                 first_sim / warm_sim, 1.5, None))
    rows.append(("cli", "first CLI run in a fresh copy / a warm run (process wall)",
                 first_wall / warm_wall, None, None))
    print(f"  done: fresh copy: setup's kernel step {setup_s:.1f} s; first run {first_wall:.2f} s "
          f"(simulation {first_sim:.2f} s), warm {warm_wall:.2f} s ({warm_sim:.2f} s)",
          file=sys.stderr, flush=True)


def print_table(rows: list, refs: dict[str, str], reps: int) -> int:
    ref_s = {g: next(r[2] for r in rows if r[1] == label) for g, label in refs.items()}
    print(f"\n{'case':66s} {'median s':>9s} {'target s':>9s} {'ratio':>6s} {'x ref':>6s} "
          f"{'peak MB':>8s}")
    for group, label, wall, target, rss in rows:
        t = f"{target:9.2f}" if target else f"{'-':>9s}"
        r = f"{wall / target:6.2f}" if target else f"{'-':>6s}"
        x = f"{wall / ref_s[group]:6.2f}" if group in ref_s else f"{'-':>6s}"
        m = f"{rss:8.0f}" if rss is not None else f"{'-':>8s}"
        print(f"{label:66s} {wall:9.4f} {t} {r} {x} {m}")
    print(f"(reps={reps}; ratio = median / target, < 1 meets it; x ref = median / the "
          f"group's reference row in this run; peak MB = child max RSS, targets 2,048 MB "
          f"for FB and 4,096 MB for the cluster)")
    if any(r[0] == "cli" for r in rows):
        print("  cli rows: the median is a ratio of two times, not seconds")
    for g, label in refs.items():
        print(f"  reference of {g} rows: {label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
