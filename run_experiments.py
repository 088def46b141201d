"""One-shot runner: experiment configs -> runs -> a results directory -> figures and summary.

    python run_experiments.py                 # the default suite into results/, then the analysis
    python run_experiments.py --dry-run       # list the runs (done / to run) without running them
    python run_experiments.py --config mine.toml            # your experiment into runs/mine/
    python run_experiments.py --config mine.toml --out DIR  # ... or into DIR
    python run_experiments.py --full --jobs 2 # paper-scale sizes and repetitions, into runs/full/
    python run_experiments.py --verify        # recompute the committed results and compare

Where results go. ``results/`` holds the committed reference results of the default
suite, and only ``python run_experiments.py`` without ``--config`` and ``--full``
writes there. Run as committed, it finds every run done (same config hash) and only
regenerates the analysis (``python -m analysis results`` does that alone). To recompute
the reference itself, run the default suite into an empty directory (``--out
/tmp/fresh``) and compare, or remove the experiment directories under ``results/`` and
run it again (a run whose config changed needs ``--force``). Runs of ``--config``
go to ``runs/<config stem>/`` (several configs: stems joined by ``+``; with ``--full``,
``-full`` appended; ``runs/`` is gitignored), ``--full`` alone to ``runs/full/``, and
``--out DIR`` anywhere; writing them into ``results/`` needs ``--force``. The analysis
of a directory writes only into that directory (``python -m analysis DIR`` redoes it).

Each ``experiments/*.toml`` (except ``default.toml``, the workload CLI's example, and
``testbed.toml``, the small packet-level scenario of the Mininet tests: run it with
``--config``) is one experiment; ``testbed_ring.toml`` and ``testbed_ps.toml`` are the
packet-level ones (they need root and are skipped with a note otherwise). Tables:
``[experiment]`` (backend, policies, seeds, K, repetitions, ...),
``[workload]`` (or ``experiment.trace`` = a trace file), ``[topology]``, ``[sweep]``
(dotted key -> list of values; runs are the cartesian product x seeds x policies) and
``[full]`` (dotted key -> value, applied with ``--full``). Every run writes
``<results dir>/<experiment>/<run name>/`` atomically (temp dir, then rename) with the
records and ``run_config.json``; a rerun skips runs whose directory holds the same config
hash, so an interrupted suite resumes where it stopped. A directory that holds a
different run (another config hash: the config changed) is replaced only with
``--force``; without it the runner stops before any run and names the directory. Bad
configs fail before any run starts. Paths in the records (run.json ``trace_path``) are
relative to the results directory.

The analysis (``analysis/``) reports every policy that ran, in the registry order of
``emulation.scheduler.POLICIES``; its ratios are taken against ``--reference POLICY``
(default ``beamer`` when it ran, else the first policy in that order).

``--verify`` (artifact evaluation) recomputes the fluid runs of the results directory
(``--out``, default ``results/``; all of them or ``--sample N``) from their own
``run_config.json`` into a temporary directory and compares each with the committed
records: avg SCT, p95 SCT and every stage's SCT must be equal exactly (the fluid
simulator is deterministic). Packet-level (Mininet) runs are listed as not recomputed:
TCP makes them vary run to run (``tests/test_mininet.py`` checks them against tolerance
bands). Prints a pass/fail table per experiment; exits 1 on any mismatch.

Packet-level runs are not deterministic (TCP, host scheduling): ``experiment.repetitions``
(mininet backend only) repeats each (policy, seed) run; the run names end in ``,rep=N``
(N = 0, 1, ...) and run.json records ``repetition``.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import itertools
import json
import os
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from emulation.records import file_sha256
from workloads.config import ConfigError, build, load_toml, to_dict, value_label

REPO = Path(__file__).resolve().parent
REFERENCE_DIR = REPO / "results"  # the committed reference results of the default suite
RUNS_DIR = REPO / "runs"          # --config / --full runs without --out (gitignored)
SKIP_FILES = {"default.toml", "testbed.toml"}  # not part of the default suite
TABLES = ("experiment", "workload", "topology", "sweep", "full")
BACKENDS = ("fluid", "mininet")


@dataclass(frozen=True)
class ExperimentSection:
    """The ``[experiment]`` table."""

    name: str
    description: str = ""
    backend: Literal["fluid", "mininet"] = "fluid"
    policies: tuple[str, ...] = ("beamer", "beamer-coflow", "beamer-sbssi", "beamer-stage-only",
                                  "sincronia", "fifo_lm", "fair", "varys")
    seeds: tuple[int, ...] = (1, 2, 3)
    priority_classes: int = 8
    release_at_zero: bool = False
    # "flow" (the suite's default): every policy under the same exact rate semantics, so
    # differences come from the orderings; "policy": each policy's published semantics
    # (Policy.default_realloc, as the fluid CLI does); "coflow": coflow-level events;
    # "queues": decisions at coflow-level events, rates at every flow completion
    realloc: Literal["flow", "coflow", "queues", "policy"] = "flow"
    trace: str = ""
    figure: Literal["bars", "line"] = "bars"
    rate_scale: float = 0.003
    time_scale: float = 2.0
    repetitions: int = 1

    def check(self, where: str = "experiment") -> None:
        from emulation.scheduler import POLICIES
        for p in self.policies:
            if p not in POLICIES:
                raise ConfigError(f"{where}.policies: unknown policy {p!r}; known: {', '.join(POLICIES)}")
        if not self.policies or not self.seeds:
            raise ConfigError(f"{where}: policies and seeds must not be empty")
        if self.priority_classes < 0:
            raise ConfigError(f"{where}.priority_classes: must be >= 0")
        if self.backend == "mininet" and not 1 <= self.priority_classes <= 8:
            raise ConfigError(f"{where}.priority_classes: the mininet backend needs 1..8")
        if self.rate_scale <= 0 or self.time_scale <= 0:
            raise ConfigError(f"{where}.rate_scale/time_scale: must be > 0")
        if self.repetitions < 1:
            raise ConfigError(f"{where}.repetitions: must be >= 1")
        if self.backend == "fluid" and self.repetitions != 1:
            raise ConfigError(f"{where}.repetitions: the fluid backend is deterministic; "
                              "repetitions need backend = 'mininet'")


@dataclass(frozen=True)
class RunSpec:
    """Everything one run needs; ``config_hash`` identifies it on disk."""

    experiment: str
    name: str
    backend: str
    policy: str
    seed: int
    params: dict[str, Any]
    experiment_cfg: dict[str, Any]
    workload: dict[str, Any]
    topology: dict[str, Any]
    trace_path: str = ""
    trace_sha256: str = ""
    repetition: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def config(self) -> dict[str, Any]:
        cfg = {"experiment": self.experiment, "backend": self.backend, "policy": self.policy,
               "seed": self.seed, "params": self.params, "experiment_cfg": self.experiment_cfg,
               "workload": self.workload, "topology": self.topology,
               "trace_sha256": self.trace_sha256}
        if self.backend == "mininet":  # fluid runs (one repetition) keep their earlier hashes
            cfg["repetition"] = self.repetition
        return cfg

    @property
    def config_hash(self) -> str:
        """Hash of ``config`` without the trace file's location: a trace file is identified
        by its content (``trace_sha256``), so moving the repository or the file keeps runs done."""
        cfg = {**self.config, "experiment_cfg": {**self.experiment_cfg, "trace": ""}}
        return hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16]


def _set_dotted(tables: dict[str, Any], key: str, value: Any, where: str) -> None:
    parts = key.split(".")
    if len(parts) != 2 or parts[0] not in ("experiment", "workload", "topology"):
        raise ConfigError(f"{where}: key {key!r} must be 'experiment.X', 'workload.X' or 'topology.X'")
    tables.setdefault(parts[0], {})[parts[1]] = value




def _in_file(path: Path, fn, *args):
    """``fn(*args)``; a ConfigError it raises gets the file's name in front
    (``mine.toml: unknown key 'experiment.foo' (known: ...)``)."""
    try:
        return fn(*args)
    except ConfigError as exc:
        raise ConfigError(f"{path.name}: {exc}") from None


def load_experiment(path: Path, *, full: bool) -> list[RunSpec]:
    """Validate one experiment TOML and expand it into runs (ConfigError names the key)."""
    from emulation.topology import TopologyConfig
    from workloads.generator import WorkloadConfig
    data = load_toml(path)
    for key in data:
        if key not in TABLES:
            raise ConfigError(f"{path.name}: unknown key '{key}' (known tables: {', '.join(TABLES)})")
    base = {t: dict(data.get(t, {})) for t in ("experiment", "workload", "topology")}
    if full:
        for k, v in data.get("full", {}).items():
            _set_dotted(base, k, v, f"{path.name} [full]")
    sweep = data.get("sweep", {})
    for k, vals in sweep.items():
        if not isinstance(vals, list) or not vals:
            raise ConfigError(f"{path.name} [sweep]: '{k}' must be a non-empty list")
    keys = sorted(sweep)
    specs: list[RunSpec] = []
    for combo in itertools.product(*(sweep[k] for k in keys)):
        tables = copy.deepcopy(base)
        for k, v in zip(keys, combo):
            _set_dotted(tables, k, v, f"{path.name} [sweep]")
        exp = _in_file(path, build, ExperimentSection, tables["experiment"], "experiment")
        topo = _in_file(path, build, TopologyConfig, tables["topology"], "topology")
        trace_path = trace_sha = ""
        if exp.trace:
            tp = (path.parent / exp.trace).resolve()
            if not tp.exists():
                raise ConfigError(f"{path.name}: experiment.trace: no such file {tp}")
            trace_path = str(tp)
            trace_sha = file_sha256(tp)
        exp_cfg = to_dict(exp)
        if exp.backend == "fluid":
            del exp_cfg["repetitions"]  # always 1; keeps the fluid runs' config hashes
        params = {k: v for k, v in zip(keys, combo)}
        pname = ",".join(f"{k.split('.')[1]}={value_label(v)}" for k, v in params.items())
        seeds = exp.seeds if not trace_path else exp.seeds[:1]
        for seed in seeds:
            wl = _in_file(path, build, WorkloadConfig, {**tables["workload"], "seed": seed}, "workload")
            for policy in exp.policies:
                for rep in range(exp.repetitions):
                    name = (pname + "," if pname else "") + f"policy={policy},seed={seed}"
                    if exp.backend == "mininet":
                        name += f",rep={rep}"
                    specs.append(RunSpec(experiment=exp.name, name=name, backend=exp.backend,
                                         policy=policy, seed=seed, params=params,
                                         experiment_cfg=exp_cfg, workload=to_dict(wl),
                                         topology=to_dict(topo), trace_path=trace_path,
                                         trace_sha256=trace_sha, repetition=rep))
    return specs


def prepare_trace(spec: RunSpec, out_root: Path) -> tuple[str, str]:
    """Write (once) the run's trace and its lower bound; returns (trace path, lb path)."""
    from emulation.scheduler.lower_bound import lower_bound
    from emulation.topology import TopologyConfig, build_topology
    from workloads import coflow_benchmark, trace as trace_mod
    from workloads.generator import WorkloadConfig, generate
    traces = out_root / spec.experiment / "traces"
    traces.mkdir(parents=True, exist_ok=True)
    key_src = spec.trace_sha256 or json.dumps(spec.workload, sort_keys=True)
    key = hashlib.sha256(key_src.encode()).hexdigest()[:16]
    tpath = Path(spec.trace_path) if spec.trace_path else traces / f"{key}.json"
    if not spec.trace_path and not tpath.exists():
        t = generate(build(WorkloadConfig, spec.workload, "workload"))
        tmp = tpath.with_suffix(".tmp")
        trace_mod.save(t, tmp)
        os.replace(tmp, tpath)
    cfg = spec.experiment_cfg
    lb_key = hashlib.sha256(json.dumps([key, spec.topology, cfg["release_at_zero"]],
                                       sort_keys=True).encode()).hexdigest()[:16]
    lbpath = traces / f"lb-{lb_key}.json"
    if not lbpath.exists():
        t = coflow_benchmark.load_any(tpath)
        topo = build_topology(build(TopologyConfig, spec.topology, "topology"), t.hosts)
        lb = lower_bound(t, topo, release_at_zero=cfg["release_at_zero"])
        tmp = lbpath.with_suffix(".tmp")
        tmp.write_text(json.dumps({"lower_bound_avg_sct_s": lb.avg_sct_s, "method": lb.method,
                                   "lp_rounds": lb.lp_rounds, "lp_cuts": lb.lp_cuts}))
        os.replace(tmp, lbpath)
    return str(tpath), str(lbpath)


def execute(spec: RunSpec, trace_path: str, lb_path: str, out_root: str) -> dict[str, Any]:
    """Run one spec into its directory atomically; returns its run.json (top-level, picklable)."""
    final = Path(out_root) / spec.experiment / spec.name
    tmp = Path(out_root) / spec.experiment / f".tmp-{spec.name}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    run = EXECUTORS[spec.backend](spec, trace_path, lb_path, tmp)
    run.update(_portable_paths(tmp, Path(out_root)))
    _commit_run_dir(spec, tmp, final)
    return run


def _portable_paths(run_dir: Path, out_root: Path) -> dict[str, str]:
    """Rewrite ``trace_path`` in the run's run.json (and its twin's) relative to the
    results directory (``pattern/traces/<key>.json``, ``../data/<file>``), so that no
    record holds a path of the machine it ran on; returns the rewritten fields."""
    changed: dict[str, str] = {}
    for rj in (run_dir / "run.json", run_dir / "twin" / "run.json"):
        if not rj.exists():
            continue
        run = json.loads(rj.read_text())
        tp = run.get("trace_path")
        if isinstance(tp, str) and os.path.isabs(tp):
            run["trace_path"] = Path(os.path.relpath(tp, out_root)).as_posix()
            rj.write_text(json.dumps(run, indent=2, sort_keys=True, default=str) + "\n")
            if rj.parent == run_dir:
                changed["trace_path"] = run["trace_path"]
    return changed


def _commit_run_dir(spec: RunSpec, tmp: Path, final: Path) -> None:
    """Write ``run_config.json`` into the finished temporary run directory, then move it
    into place (replacing an older run of the same name)."""
    (tmp / "run_config.json").write_text(json.dumps({**spec.config, "config_hash": spec.config_hash},
                                                    indent=2, sort_keys=True) + "\n")
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)


def _run_extra(spec: RunSpec) -> dict[str, Any]:
    return {"experiment": spec.experiment, "run_name": spec.name, "params": spec.params,
            "config_hash": spec.config_hash, "workload_seed": spec.seed,
            "repetition": spec.repetition}


def _execute_fluid(spec: RunSpec, trace_path: str, lb_path: str, outdir: Path) -> dict[str, Any]:
    from emulation.fluid.run import run_fluid
    from emulation.topology import TopologyConfig, build_topology
    from workloads import coflow_benchmark
    trace = coflow_benchmark.load_any(trace_path)
    topo = build_topology(build(TopologyConfig, spec.topology, "topology"), trace.hosts)
    lb = json.loads(Path(lb_path).read_text())
    cfg = spec.experiment_cfg
    return run_fluid(trace=trace, trace_path=trace_path, topology=topo, policy=spec.policy,
                     outdir=outdir, priority_classes=cfg["priority_classes"],
                     release_at_zero=cfg["release_at_zero"],
                     realloc=None if cfg["realloc"] == "policy" else cfg["realloc"],
                     lb_avg_sct_s=lb["lower_bound_avg_sct_s"], extra=_run_extra(spec))


def _execute_mininet(spec: RunSpec, trace_path: str, lb_path: str, outdir: Path) -> dict[str, Any]:
    """Packet-level run plus its fluid twin in ``twin/``, both in trace seconds.

    The twin simulates the UNSCALED trace on the unscaled topology: the emulation scales
    bytes by rate_scale x time_scale and rates by rate_scale, so its times are the trace's
    x time_scale, and the Mininet records are written in trace seconds (emulated / time
    scale). Simulating the scaled trace instead gives the same stage times x time_scale up
    to the rounding of scaled flow sizes (relative 3e-8 on the testbed trace). The twin
    models what the packet backend enforces: the policy's order as strict-priority classes
    (``allocation="priority"``; Varys's MADD rates are a fluid-only mechanism), decided at
    the policy's own reallocation events (the scheduler process follows the same rule)."""
    from emulation.fluid.run import run_fluid
    from emulation.mininet.run import run_mininet
    from emulation.topology import TopologyConfig, build_topology
    from workloads import trace as trace_mod
    cfg = spec.experiment_cfg
    topo_cfg = build(TopologyConfig, spec.topology, "topology")
    trace = trace_mod.load(trace_path)
    load_start = os.getloadavg()[0]  # other jobs on the machine load the emulation's CPUs
    run = run_mininet(trace=trace, trace_path=trace_path, topo_cfg=topo_cfg, policy=spec.policy,
                      outdir=outdir, priority_classes=cfg["priority_classes"],
                      rate_scale=cfg["rate_scale"], time_scale=cfg["time_scale"],
                      release_at_zero=cfg["release_at_zero"], extra=_run_extra(spec))
    lb = json.loads(Path(lb_path).read_text())["lower_bound_avg_sct_s"]  # unscaled trace
    twin = run_fluid(trace=trace, trace_path=trace_path, topology=build_topology(topo_cfg, trace.hosts),
                     policy=spec.policy, outdir=outdir / "twin",
                     priority_classes=cfg["priority_classes"], allocation="priority",
                     release_at_zero=cfg["release_at_zero"], lb_avg_sct_s=lb,
                     extra={**_run_extra(spec), "twin_of": "mininet"})
    run.update({"lower_bound_avg_sct_s": lb, "avg_sct_over_lb": run["avg_sct_s"] / lb,
                "fluid_twin_avg_sct_s": twin["avg_sct_s"],
                "mininet_over_fluid": run["avg_sct_s"] / twin["avg_sct_s"],
                "loadavg_1min_start": load_start, "loadavg_1min_end": os.getloadavg()[0],
                "cpu_count": os.cpu_count()})
    (outdir / "run.json").write_text(json.dumps(run, indent=2, sort_keys=True, default=str) + "\n")
    return run


EXECUTORS = {"fluid": _execute_fluid, "mininet": _execute_mininet}


def is_done(spec: RunSpec, out_root: Path) -> bool:
    """True if the run's directory exists with the same config hash."""
    p = out_root / spec.experiment / spec.name / "run_config.json"
    try:
        return json.loads(p.read_text()).get("config_hash") == spec.config_hash
    except (OSError, ValueError):
        return False


MININET_SKIPPED = "packet-level (Mininet) part skipped"


def _backend_of(run_dir: Path) -> str | None:
    try:
        return json.loads((run_dir / "run_config.json").read_text()).get("backend")
    except (OSError, ValueError):
        return None


def collect_specs(configs: list[Path], *, full: bool, backend: str) -> tuple[list[RunSpec], list[str]]:
    """All runs of all configs for the chosen backend(s), and notes on what was skipped."""
    specs, notes = [], []
    for path in configs:
        for s in load_experiment(path, full=full):
            if backend != "both" and s.backend != backend:
                continue
            specs.append(s)
    names = [(s.experiment, s.name) for s in specs]
    if len(set(names)) != len(names):
        raise ConfigError("two runs share a name: experiment names must be unique")
    mininet = [s for s in specs if s.backend == "mininet"]
    if mininet:
        from emulation import mininet_available
        ok, why = mininet_available()
        if not ok:
            notes.append(f"{MININET_SKIPPED}: {why}")
            specs = [s for s in specs if s.backend != "mininet"]
    return specs, notes


def default_out(configs: list[Path] | None, *, full: bool) -> Path:
    """Where a run goes without ``--out``: the default suite into ``results/`` (the
    committed reference results); ``--full`` and ``--config`` runs into a directory of
    their own under ``runs/`` (gitignored): ``runs/full``, ``runs/<config stem>`` (stems
    joined by ``+``), with ``-full`` appended for ``--full``."""
    if not configs:
        return REFERENCE_DIR if not full else RUNS_DIR / "full"
    name = "+".join(dict.fromkeys(Path(c).stem for c in configs))
    return RUNS_DIR / (name + ("-full" if full else ""))


def _shown(path: Path) -> str:
    """A path for the terminal: relative to the working directory when inside it."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix() or "."
    except ValueError:
        return str(path)


def run_status(spec: RunSpec, out_root: Path) -> tuple[str, str | None]:
    """("done" | "to run" | "different", the hash found): a run directory holding the same
    config hash is done; one holding another (or an unreadable run_config.json) is a
    different run, replaced only with ``--force``."""
    d = out_root / spec.experiment / spec.name
    if not d.exists():
        return "to run", None
    try:
        old = json.loads((d / "run_config.json").read_text()).get("config_hash")
    except (OSError, ValueError):
        old = None
    return ("done" if old == spec.config_hash else "different"), old


def stale_runs(specs: list[RunSpec], out_root: Path) -> list[str]:
    """Run directories under ``out_root`` (``<experiment>/<run>/run_config.json``) that no
    spec of this invocation names: kept, and read by the analysis with the others."""
    names = {(s.experiment, s.name) for s in specs}
    return [f"{r.parent.name}/{r.name}" for r in committed_runs(out_root)
            if (r.parent.name, r.name) not in names]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", action="append", type=Path,
                    help="experiment TOML (repeatable); default: every experiments/*.toml of the "
                         "suite. Results go to runs/<config stem>/ unless --out says otherwise")
    ap.add_argument("--backend", choices=["fluid", "mininet", "both"], default="both",
                    help="which experiments to run (default both; Mininet ones need root)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    ap.add_argument("--out", type=Path, default=None,
                    help="results directory (default: results/ for the default suite, the "
                         "committed reference results; runs/<config stem>/ with --config; "
                         "runs/full/ with --full)")
    ap.add_argument("--force", action="store_true",
                    help="replace run directories that hold a different run (another config "
                         "hash), and allow --config / --full runs into results/")
    ap.add_argument("--reference", metavar="POLICY",
                    help="policy every ratio of the analysis is taken against (default: beamer "
                         "when it ran, else the first policy in registry order)")
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="the default: small sizes, 3 seeds")
    size.add_argument("--full", action="store_true", help="paper-scale sizes and repetitions ([full] tables)")
    ap.add_argument("--dry-run", action="store_true",
                    help="list the runs, each marked done / to run / different, and exit")
    ap.add_argument("--dask", metavar="ADDRESS",
                    help="submit runs to a Dask distributed scheduler: its address "
                         "(tcp://host:8786, an existing cluster) or 'local' (a LocalCluster "
                         "of --jobs single-threaded worker processes on this machine)")
    ap.add_argument("--no-analysis", action="store_true", help="skip figures and summary")
    ap.add_argument("--verify", action="store_true",
                    help="recompute the fluid runs of --out (default results/) into a temporary "
                         "directory and compare them exactly with the committed records; "
                         "exit 1 on a mismatch")
    ap.add_argument("--sample", type=int, default=0, metavar="N",
                    help="with --verify: recompute a seeded random sample of N fluid runs "
                         "(default 0 = all)")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("--jobs must be >= 1")
    if args.sample < 0:
        ap.error("--sample must be >= 0")
    if args.sample and not args.verify:
        ap.error("--sample needs --verify")
    if args.verify:
        return verify((args.out or REFERENCE_DIR).resolve(), sample=args.sample, jobs=args.jobs)
    configs = args.config or sorted(p for p in (REPO / "experiments").glob("*.toml")
                                    if p.name not in SKIP_FILES)
    try:
        specs, notes = collect_specs(configs, full=args.full, backend=args.backend)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = (args.out or default_out(args.config, full=args.full)).resolve()
    where = _shown(out)
    if any(n.startswith(MININET_SKIPPED) for n in notes):
        kept = sum(1 for r in committed_runs(out) if _backend_of(r) == "mininet")
        if kept:
            notes = [n + (f"; the {kept} packet-level runs already in this directory are "
                          "analysed as recorded" if n.startswith(MININET_SKIPPED) else "")
                     for n in notes]
    if args.reference is not None and args.reference not in {s.policy for s in specs}:
        print(f"error: --reference {args.reference}: not a policy of these runs "
              f"({', '.join(sorted({s.policy for s in specs}))})", file=sys.stderr)
        return 2
    for n in notes:
        print(f"note: {n}")
    status = {(s.experiment, s.name): run_status(s, out) for s in specs}
    different = [s for s in specs if status[(s.experiment, s.name)][0] == "different"]
    todo = [s for s in specs if status[(s.experiment, s.name)][0] != "done"]
    n_done = len(specs) - len(todo)
    if args.dry_run:
        for s in specs:
            st = status[(s.experiment, s.name)][0]
            print(f"{s.experiment}/{s.name}  ({'different run: --force replaces it' if st == 'different' else st})")
        print(f"{len(specs)} runs into {where}: {n_done} done (same config hash), "
              f"{len(todo) - len(different)} to run"
              + (f", {len(different)} directories hold a different run" if different else ""))
        return 0
    if out == REFERENCE_DIR.resolve() and (args.config or args.full) and not args.force:
        print(f"error: {where} holds the committed reference results of the default suite; "
              f"--config and --full runs go to {_shown(default_out(args.config, full=args.full))} "
              "(the default) or to --out DIR; pass --force to write them into it", file=sys.stderr)
        return 2
    if different and not args.force:
        s = different[0]
        old = status[(s.experiment, s.name)][1]
        more = f"; {len(different) - 1} more run directories too" if len(different) > 1 else ""
        print(f"error: {_shown(out / s.experiment / s.name)} holds a different run (config hash "
              f"{old or 'unreadable'}, this config's {s.config_hash}{more}); pass --force to "
              f"replace {'them' if more else 'it'}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    stale = stale_runs(specs, out)
    if stale:
        print(f"note: {len(stale)} run directories under {where} are not runs of these configs "
              f"(e.g. {stale[0]}); they are kept and the analysis reads them too")
    print(f"{len(specs)} runs into {where}: {n_done} already done, {len(todo)} to run "
          f"({'dask ' + args.dask if args.dask else f'{args.jobs} jobs'})")
    run_all(todo, out, jobs=args.jobs, dask_address=args.dask,
            done_specs=[s for s in specs if s not in todo])
    if notes:
        (out / "NOTES.md").write_text("\n".join(f"- {n}" for n in notes) + "\n")
    elif (out / "NOTES.md").exists():
        (out / "NOTES.md").unlink()
    if args.no_analysis:
        print(f"results: {where} (analysis skipped; later: python -m analysis {where})")
        return 0
    from analysis.report import make_report
    summary = make_report(out, reference=args.reference)
    print(f"results: {where} (summary: {_shown(summary)}, tables/, figures/)")
    return 0


VERIFY_KEYS = ("avg_sct_s", "p95_sct_s")


def committed_runs(results: Path) -> list[Path]:
    """Run directories (holding run_config.json) of a results tree, sorted."""
    return sorted(p.parent for p in results.glob("*/*/run_config.json"))


def _find_trace(cfg: dict[str, Any]) -> str:
    """The trace file a committed run used, found by its sha256: the experiment's
    ``trace`` (relative to experiments/) or any file under data/."""
    want = cfg["trace_sha256"]
    rel = cfg["experiment_cfg"].get("trace", "")
    candidates = ([(REPO / "experiments" / rel).resolve()] if rel else []) + sorted(
        p for p in (REPO / "data").glob("*") if p.is_file() and p.suffix != ".md")
    for c in candidates:
        if c.is_file() and file_sha256(c) == want:
            return str(c)
    raise ConfigError(f"no trace file with sha256 {want[:12]}... in experiments/ or data/")


def spec_from_record(run_dir: Path) -> RunSpec:
    """The RunSpec a committed run directory was made from (its run_config.json)."""
    cfg = json.loads((run_dir / "run_config.json").read_text())
    trace_path = _find_trace(cfg) if cfg.get("trace_sha256") else ""
    return RunSpec(experiment=cfg["experiment"], name=run_dir.name, backend=cfg["backend"],
                   policy=cfg["policy"], seed=cfg["seed"], params=cfg["params"],
                   experiment_cfg=cfg["experiment_cfg"], workload=cfg["workload"],
                   topology=cfg["topology"], trace_path=trace_path,
                   trace_sha256=cfg.get("trace_sha256", ""))


def _stage_scts(run_dir: Path) -> dict[str, str]:
    """stage_id -> sct_s as written (the CSV text: exact comparison, no float parsing)."""
    import csv
    with open(run_dir / "stages.csv", newline="") as f:
        return {row["stage_id"]: row["sct_s"] for row in csv.DictReader(f)}


def compare_run(ref_dir: Path, new_dir: Path) -> list[str]:
    """Differences between a committed run and its recomputation (empty = identical)."""
    old = json.loads((ref_dir / "run.json").read_text())
    new = json.loads((new_dir / "run.json").read_text())
    diffs = [f"{k}: committed {old.get(k)!r}, recomputed {new.get(k)!r}"
             for k in VERIFY_KEYS if old.get(k) != new.get(k)]
    a, b = _stage_scts(ref_dir), _stage_scts(new_dir)
    if set(a) != set(b):
        diffs.append(f"stage ids differ: {sorted(set(a) ^ set(b))[:5]}")
    bad = [sid for sid in a if sid in b and a[sid] != b[sid]]
    if bad:
        diffs.append(f"{len(bad)} stage SCTs differ, e.g. {bad[0]}: committed {a[bad[0]]}, "
                     f"recomputed {b[bad[0]]}")
    return diffs


def _verify_one(ref_dir: str, tmp_root: str) -> tuple[str, list[str]]:
    """Recompute one committed fluid run into ``tmp_root``; (run dir, differences)."""
    ref = Path(ref_dir)
    try:
        spec = spec_from_record(ref)
        out = Path(tmp_root) / str(os.getpid())  # per worker: no two write one trace file
        trace_path, lb_path = prepare_trace(spec, out)
        execute(spec, trace_path, lb_path, str(out))
        return ref_dir, compare_run(ref, out / spec.experiment / spec.name)
    except Exception as exc:  # reported as a failure of this run, the others go on
        return ref_dir, [f"could not recompute: {type(exc).__name__}: {exc}"]


def verify(results: Path, *, sample: int, jobs: int, seed: int = 0) -> int:
    """Recompute the committed fluid runs (all, or a seeded sample of ``sample``) and
    compare; print a table per experiment; 0 if every recomputed run matches, else 1."""
    import random
    import tempfile
    from tqdm import tqdm
    runs = committed_runs(results)
    if not runs:
        print(f"error: no committed runs (run_config.json) under {results}", file=sys.stderr)
        return 2
    backend = {r: json.loads((r / "run_config.json").read_text())["backend"] for r in runs}
    fluid = [r for r in runs if backend[r] == "fluid"]
    packet = [r for r in runs if backend[r] != "fluid"]
    if sample and sample < len(fluid):
        fluid = sorted(random.Random(seed).sample(fluid, sample))
    t0 = time.time()
    results_of: dict[Path, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="verify-") as tmp:
        bar = tqdm(total=len(fluid), unit="run", dynamic_ncols=True, file=sys.stderr,
                   desc="verify")
        if jobs == 1 or len(fluid) <= 1:
            for r in fluid:
                _, d = _verify_one(str(r), tmp)
                results_of[r] = d
                bar.update(1)
        else:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                futs = [pool.submit(_verify_one, str(r), tmp) for r in fluid]
                for fut in as_completed(futs):
                    r, d = fut.result()
                    results_of[Path(r)] = d
                    bar.update(1)
        bar.close()
    rows: dict[str, list[int]] = {}
    for r in runs:
        row = rows.setdefault(r.parent.name, [0, 0, 0, 0])  # recomputed, pass, fail, not
        if r in results_of:
            row[0] += 1
            row[1 if not results_of[r] else 2] += 1
        else:
            row[3] += 1
    print(f"\n{'experiment':12s} {'runs':>5s} {'recomputed':>10s} {'pass':>5s} {'FAIL':>5s} "
          f"{'not recomputed':>15s}  verdict")
    for exp, (n_re, n_ok, n_bad, n_not) in sorted(rows.items()):
        total = n_re + n_not
        verdict = "FAIL" if n_bad else ("pass" if n_re else "-")
        why = " (packet-level)" if n_not and all(backend[r] != "fluid" for r in runs
                                                if r.parent.name == exp) else ""
        print(f"{exp:12s} {total:5d} {n_re:10d} {n_ok:5d} {n_bad:5d} {n_not:15d}  "
              f"{verdict}{why}")
    bad = {r: d for r, d in results_of.items() if d}
    for r, d in sorted(bad.items()):
        print(f"MISMATCH {r.parent.name}/{r.name}:")
        for line in d:
            print(f"    {line}")
    n_fail = len(bad)
    print(f"{len(results_of)} fluid runs recomputed in {time.time() - t0:.0f} s: "
          f"{len(results_of) - n_fail} identical, {n_fail} differ; {len(packet)} packet-level "
          f"runs not recomputed (TCP varies run to run; tests/test_mininet.py bands them)"
          + ("" if not sample else f"; sample of {sample} (seed {seed})"))
    return 1 if n_fail else 0


def content_key(spec: RunSpec) -> str:
    """What a fluid run's records depend on: its config without the experiment's name,
    description, figure and the swept parameters' labels. Two runs with the same key
    (the congestion family's base point sits in four experiments) give identical records."""
    cfg = dict(spec.config)
    cfg["experiment_cfg"] = {k: v for k, v in cfg["experiment_cfg"].items()
                             if k not in ("name", "description", "figure")}
    for k in ("experiment", "params"):
        cfg.pop(k)
    return hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16]


def reuse(spec: RunSpec, source: Path, out_root: Path) -> dict[str, Any]:
    """Write ``spec``'s run directory from the finished run at ``source`` (same content
    key): the same records, run.json's identity fields set to ``spec``'s and
    ``reused_from`` naming the source. Atomic like ``execute``."""
    final = out_root / spec.experiment / spec.name
    tmp = out_root / spec.experiment / f".tmp-{spec.name}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, tmp)
    run = json.loads((tmp / "run.json").read_text())
    run.update({**_run_extra(spec), "reused_from": f"{source.parent.name}/{source.name}"})
    (tmp / "run.json").write_text(json.dumps(run, indent=2, sort_keys=True, default=str) + "\n")
    run.update(_portable_paths(tmp, out_root))
    _commit_run_dir(spec, tmp, final)
    return run


def split_duplicates(specs: list[RunSpec], done_specs: list[RunSpec]
                     ) -> tuple[list[RunSpec], list[tuple[RunSpec, RunSpec]]]:
    """Fluid runs to execute, and (run, source run) pairs whose records can be copied
    because the source (earlier in ``specs`` or already done) has the same content key."""
    first: dict[str, RunSpec] = {content_key(s): s for s in reversed(done_specs)
                                 if s.backend == "fluid"}
    run, copies = [], []
    for s in specs:
        key = content_key(s) if s.backend == "fluid" else None
        if key is not None and key in first:
            copies.append((s, first[key]))
        else:
            if key is not None:
                first[key] = s
            run.append(s)
    return run, copies


def run_all(todo: list[RunSpec], out: Path, *, jobs: int, dask_address: str | None = None,
            done_specs: list[RunSpec] = ()) -> None:
    """Prepare traces and bounds, then run everything with a progress bar (fluid runs
    identical to another run of this suite are copied from it, not run twice)."""
    todo, copies = split_duplicates(todo, list(done_specs))
    from tqdm import tqdm
    prepared = {}
    for s in tqdm(todo, desc="traces and lower bounds", unit="run", dynamic_ncols=True,
                  file=sys.stderr, disable=len(todo) < 2, leave=False):
        prepared[(s.experiment, s.name)] = prepare_trace(s, out)
    bar = tqdm(total=len(todo) + len(copies), unit="run", dynamic_ncols=True, file=sys.stderr,
               desc="runs", disable=not (todo or copies))
    t0 = time.time()

    def done(spec: RunSpec, run: dict[str, Any]) -> None:
        bar.update(1)
        bar.write(f"[{time.time() - t0:7.1f}s] {spec.experiment}/{spec.name}: "
                  f"avg SCT {run['avg_sct_s']:.3f} s, /LB {run['avg_sct_over_lb']:.3f}")

    local_only = [s for s in todo if s.backend == "mininet"]  # one emulated network at a time
    pooled = [s for s in todo if s.backend != "mininet"]
    try:
        if dask_address and pooled:
            import contextlib
            from distributed import Client, LocalCluster, as_completed as dask_completed
            with contextlib.ExitStack() as stack:
                if dask_address == "local":
                    cluster = stack.enter_context(LocalCluster(
                        n_workers=jobs, threads_per_worker=1, processes=True,
                        dashboard_address=None))
                    dask_address = cluster.scheduler_address
                client = stack.enter_context(Client(dask_address))
                futs = {client.submit(execute, s, *prepared[(s.experiment, s.name)], str(out),
                                      pure=False): s for s in pooled}
                for fut in dask_completed(futs):
                    done(futs[fut], fut.result())
        elif jobs == 1 or len(pooled) <= 1:
            for s in pooled:
                done(s, execute(s, *prepared[(s.experiment, s.name)], str(out)))
        else:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                futs = {pool.submit(execute, s, *prepared[(s.experiment, s.name)], str(out)): s
                        for s in pooled}
                for fut in as_completed(futs):
                    done(futs[fut], fut.result())
        for s in local_only:
            done(s, execute(s, *prepared[(s.experiment, s.name)], str(out)))
        for s, src in copies:
            done(s, reuse(s, out / src.experiment / src.name, out))
    finally:
        bar.close()


if __name__ == "__main__":
    sys.exit(main())
