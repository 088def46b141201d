"""Running experiment runs into a results directory.

Owns everything that writes or reads a results directory's run directories
(``<results dir>/<experiment>/<run name>/``): preparing each run's trace and lower bound
once (``prepare_trace``, under ``<experiment>/traces/``), executing one run on its backend
(``execute``: fluid, or Mininet with its fluid twin in ``twin/``), committing the run
directory atomically (temp dir, then rename, with ``run_config.json`` and paths relative
to the results directory; a run that raises leaves nothing behind but finished traces
and bounds, which a rerun reuses), copying a fluid run identical to one already run
(``split_duplicates``, ``reuse``), the state of a results directory (``committed_runs``,
``is_done``, ``run_status``, ``config_changes``, ``stale_runs``, ``backend_of``,
``interrupted_leftovers``, ``put_back_plan``; ``clear_leftovers``: what killed runners
left, removed or put back; ``relabel``: a done run's description, figure and run lists brought up to
date), and the whole set of runs
with a progress bar (``run_all``: a process pool whose workers die with the runner
(``die_with_parent``) or a Dask cluster; Mininet runs one at a time in this process).
"""
from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import re
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from types import MappingProxyType
from typing import Any

from runner.config import (COSMETIC_EXPERIMENT_KEYS, RUN_LIST_EXPERIMENT_KEYS, RunSpec,
                           content_key, run_key)
from runner.progress import progress
from workloads.config import build


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
        _write_atomic(tpath, lambda tmp: trace_mod.save(t, tmp))
    cfg = spec.experiment_cfg
    lb_key = hashlib.sha256(json.dumps([key, spec.topology, cfg["release_at_zero"]],
                                       sort_keys=True).encode()).hexdigest()[:16]
    lbpath = traces / f"lb-{lb_key}.json"
    if not lbpath.exists():
        t = coflow_benchmark.load_any(tpath)
        topo = build_topology(build(TopologyConfig, spec.topology, "topology"), t.hosts)
        lb = lower_bound(t, topo, release_at_zero=cfg["release_at_zero"])
        text = json.dumps({"lower_bound_avg_sct_s": lb.avg_sct_s, "method": lb.method,
                           "lp_rounds": lb.lp_rounds, "lp_cuts": lb.lp_cuts})
        _write_atomic(lbpath, lambda tmp: tmp.write_text(text))
    return str(tpath), str(lbpath)


def _write_atomic(path: Path, write) -> None:
    """``write(tmp)`` into a temporary file beside ``path``, then rename it to ``path``;
    on any error the temporary file is removed and ``path`` is left as it was."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def execute(spec: RunSpec, trace_path: str, lb_path: str, out_root: str) -> dict[str, Any]:
    """Run one spec into its directory atomically; returns its run.json (top-level, picklable).
    On any error the temporary directory is removed (and an older run of the same name is
    kept): the run is left to run, not half made."""
    final = Path(out_root) / spec.experiment / spec.name
    tmp = Path(out_root) / spec.experiment / f".tmp-{spec.name}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        run = EXECUTORS[spec.backend](spec, trace_path, lb_path, tmp)
        run.update(_portable_paths(tmp, Path(out_root)))
        _commit_run_dir(spec, tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # gone already once committed
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


def _run_config_text(spec: RunSpec) -> str:
    """A run directory's run_config.json: the run's config and its config hash."""
    return json.dumps({**spec.config, "config_hash": spec.config_hash}, indent=2,
                      sort_keys=True) + "\n"


def _commit_run_dir(spec: RunSpec, tmp: Path, final: Path) -> None:
    """Write ``run_config.json`` into the finished temporary run directory, then move it
    into place. An older run of the same name is renamed aside first and removed only
    once the new one is in place, so ``final`` always holds one whole run (the old one if
    the rename fails)."""
    (tmp / "run_config.json").write_text(_run_config_text(spec))
    old = final.with_name(f".old-{final.name}-{os.getpid()}")
    if final.exists():
        os.replace(final, old)
    try:
        os.replace(tmp, final)
    except BaseException:
        if old.exists() and not final.exists():
            os.replace(old, final)
        raise
    shutil.rmtree(old, ignore_errors=True)


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
    models what the packet backend enforces: decisions at the policy's own reallocation
    events (the scheduler process follows the same rule), and rates as the switch gives
    them: a priority policy that decides at coflow events has its classes re-share the
    rates at every flow completion, as the queues and TCP do (``realloc="queues"``);
    Varys keeps its published semantics, MADD rates held between coflow events, which
    the agents enforce by pacing each flow; per-flow policies (fair sharing) are
    recomputed at every event either way (``Policy.realloc_mode``, the fluid runs'
    default too)."""
    from emulation.fluid.run import run_fluid
    from emulation.mininet.run import run_mininet
    from emulation.scheduler import POLICIES
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
                     priority_classes=cfg["priority_classes"],
                     realloc=POLICIES[spec.policy].realloc_mode(),
                     release_at_zero=cfg["release_at_zero"], lb_avg_sct_s=lb,
                     extra={**_run_extra(spec), "twin_of": "mininet"})
    run.update({"lower_bound_avg_sct_s": lb, "avg_sct_over_lb": run["avg_sct_s"] / lb,
                "fluid_twin_avg_sct_s": twin["avg_sct_s"],
                "mininet_over_fluid": run["avg_sct_s"] / twin["avg_sct_s"],
                "loadavg_1min_start": load_start, "loadavg_1min_end": os.getloadavg()[0],
                "cpu_count": os.cpu_count()})
    (outdir / "run.json").write_text(json.dumps(run, indent=2, sort_keys=True, default=str) + "\n")
    return run


# backend -> (spec, trace path, lower-bound path, temporary run dir) -> run.json; read-only
EXECUTORS = MappingProxyType({"fluid": _execute_fluid, "mininet": _execute_mininet})


def reuse(spec: RunSpec, source: Path, out_root: Path) -> dict[str, Any]:
    """Write ``spec``'s run directory from the finished run at ``source`` (same content
    key): the same records, run.json's identity fields set to ``spec``'s and
    ``reused_from`` naming the source. Atomic like ``execute``."""
    final = out_root / spec.experiment / spec.name
    tmp = out_root / spec.experiment / f".tmp-{spec.name}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    try:
        shutil.copytree(source, tmp)
        run = json.loads((tmp / "run.json").read_text())
        run.update({**_run_extra(spec), "reused_from": f"{source.parent.name}/{source.name}"})
        (tmp / "run.json").write_text(json.dumps(run, indent=2, sort_keys=True, default=str) + "\n")
        run.update(_portable_paths(tmp, out_root))
        _commit_run_dir(spec, tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # gone already once committed
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


_LEFTOVER = re.compile(r"^\.(?:tmp-|old-)(?P<name>.+)-(?P<pid>\d+)$|^\..+\.(?P<fpid>\d+)\.tmp$")


def _pid_running(pid: int) -> bool:
    """True if a process with this id runs on this machine (whoever owns it); a zombie
    (exited, not yet reaped by its parent: ``lifetime.process_start_ticks`` finds its
    ``/proc`` entry but no running process) does not run."""
    from emulation.lifetime import process_start_ticks
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    except (OverflowError, ValueError):
        return False  # no such process id can exist
    return not (os.path.exists(f"/proc/{pid}/stat") and process_start_ticks(pid) is None)


def interrupted_leftovers(results: Path) -> list[Path]:
    """What runners killed mid-write (SIGKILL, a power cut) left in a results directory:
    temporary run directories ``<experiment>/.tmp-<run>-<pid>``, older runs renamed aside
    ``<experiment>/.old-<run>-<pid>``, and temporary files ``.<file>.<pid>.tmp`` beside
    traces, bounds and run.json files, whose process id runs on this machine no longer.
    The check knows this machine's processes only: a runner on another machine (a remote
    Dask worker) or in another container writing into the same directory is taken for
    dead. A process id reused since keeps its leftovers listed as live. Sorted."""
    found = []
    for pattern in ("*/.tmp-*", "*/.old-*", "*/traces/.*.tmp", "*/*/.*.tmp", "*/*/twin/.*.tmp"):
        for p in results.glob(pattern):
            m = _LEFTOVER.match(p.name)
            if m and not _pid_running(int(m.group("pid") or m.group("fpid"))):
                found.append(p)
    return sorted(set(found))


def _whole_run(d: Path) -> bool:
    """True if ``d`` is a directory whose run_config.json (written last) reads whole."""
    try:
        return isinstance(json.loads((d / "run_config.json").read_text()), dict)
    except (OSError, ValueError):
        return False


def put_back_plan(leftovers: list[Path]) -> dict[Path, Path]:
    """Run directory -> the leftover ``clear_leftovers`` moves into it, for every run
    directory that is missing: a whole temporary run (``.tmp-<run>-<pid>`` with its
    run_config.json: the runner was killed after finishing the run, before its directory
    was renamed into place), else a whole older run renamed aside (``.old-<run>-<pid>``:
    killed while replacing it). Of several candidates the newest run_config.json wins."""
    plan: dict[Path, Path] = {}
    for p in leftovers:
        m = _LEFTOVER.match(p.name)
        if not m or not m.group("name") or not _whole_run(p):
            continue
        final = p.with_name(m.group("name"))
        if final.exists():
            continue
        rank = (p.name.startswith(".tmp-"), (p / "run_config.json").stat().st_mtime)
        cur = plan.get(final)
        if cur is None or rank > (cur.name.startswith(".tmp-"),
                                  (cur / "run_config.json").stat().st_mtime):
            plan[final] = p
    return plan


def clear_leftovers(leftovers: list[Path]) -> tuple[int, int, list[str]]:
    """Clear ``interrupted_leftovers``: each run of ``put_back_plan`` is moved into place,
    everything else is removed. Returns (removed, put back, what could not be cleared as
    ``name: reason``); a path counts as removed only once it is gone."""
    plan = put_back_plan(leftovers)
    restored, failed = 0, []
    for final, src in plan.items():
        try:
            os.replace(src, final)
            restored += 1
        except OSError as exc:
            failed.append(f"{src.name}: {exc.strerror or exc}")
    moved = set(plan.values())
    removed = 0
    for p in leftovers:
        if p in moved:
            continue
        try:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink(missing_ok=True)
        except OSError as exc:
            failed.append(f"{p.name}: {exc.strerror or exc}")
            continue
        removed += 1
    return removed, restored, failed


def committed_runs(results: Path) -> list[Path]:
    """Run directories (holding run_config.json) of a results tree, sorted; directories
    whose name starts with ``.`` (a run being written, or an older run being replaced)
    are not runs."""
    return sorted(p.parent for p in results.glob("*/*/run_config.json")
                  if not p.parent.name.startswith("."))


def is_done(spec: RunSpec, out_root: Path) -> bool:
    """True if the run's directory holds this run (``run_status``)."""
    return run_status(spec, out_root)[0] == "done"


def run_status(spec: RunSpec, out_root: Path, *, run_dir: Path | None = None
               ) -> tuple[str, str | None]:
    """("done" | "to run" | "different", the config hash found). A run directory whose
    run_config.json holds the same config hash is done, and so is one whose config differs
    only in the labels of ``COSMETIC_EXPERIMENT_KEYS`` or the run lists of
    ``RUN_LIST_EXPERIMENT_KEYS`` (same ``run_key``; the hash found is then not the spec's,
    and ``relabel`` writes the spec's config and hash); one holding another
    run (or an unreadable run_config.json) is a different run, replaced only with
    ``--force``, and so is a fluid run recorded under another reallocation mode than the
    spec resolves to (``resolved_realloc``; the second value is then ``"realloc MODE"``,
    the recorded mode). ``run_dir``: read that directory instead of the run's own (what
    a dry run would find there once ``put_back_plan`` moved it into place)."""
    d = run_dir or out_root / spec.experiment / spec.name
    if not d.exists():
        return "to run", None
    try:
        stored = json.loads((d / "run_config.json").read_text())
        old = stored.get("config_hash")
        same = old == spec.config_hash or run_key(stored) == spec.run_key
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        old, same = None, False
    if same:
        recorded, wanted = recorded_realloc(d), resolved_realloc(spec)
        if recorded is not None and wanted is not None and recorded != wanted:
            return "different", f"realloc {recorded}"
    return ("done" if same else "different"), old


def _flat(config: Any, prefix: str = "") -> dict[str, Any]:
    """A run config's leaves by dotted key (``workload.num_apps``); a list of tables by
    index (``workload.tenants[1].eta``), other lists whole."""
    if isinstance(config, list) and config and all(isinstance(v, dict) for v in config):
        out: dict[str, Any] = {}
        for i, v in enumerate(config):
            out.update(_flat(v, f"{prefix}[{i}]"))
        return out
    if not isinstance(config, dict):
        return {prefix: config}
    out = {}
    for k, v in config.items():
        out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


def config_changes(spec: RunSpec, out_root: Path, *, limit: int | None = 3,
                   run_dir: Path | None = None) -> str:
    """What differs between the run recorded in ``spec``'s run directory and ``spec``, for
    a message: up to ``limit`` (None: all) dotted keys with the recorded and the new
    value (``workload.num_apps 8 -> 12``), then how many more; the keys that never make a run
    different (config hash, trace location, labels, run lists) are left out. Empty if the
    directory's run_config.json is unreadable or nothing but those keys differs."""
    try:
        d = run_dir or out_root / spec.experiment / spec.name
        stored = json.loads((d / "run_config.json").read_text())
        old = _flat({k: v for k, v in stored.items() if k != "config_hash"})
    except (OSError, ValueError, AttributeError):
        return ""
    new = _flat(spec.config)
    ignored = {f"experiment_cfg.{k}" for k in ("trace", *COSMETIC_EXPERIMENT_KEYS,
                                                *RUN_LIST_EXPERIMENT_KEYS)}
    missing = object()
    changed = [k for k in sorted(set(old) | set(new)) if k not in ignored
               and not any(k.startswith(i + ".") for i in ignored)
               and old.get(k, missing) != new.get(k, missing)]

    def shown(v: Any) -> str:
        return "(none)" if v is missing else json.dumps(v)

    def key(k: str) -> str:  # as the TOML names it: a run config's experiment_cfg is [experiment]
        return "experiment." + k[len("experiment_cfg."):] if k.startswith("experiment_cfg.") else k

    parts = [f"{key(k)} {shown(old.get(k, missing))} -> {shown(new.get(k, missing))}"
             for k in changed[:limit]]
    if limit is not None and len(changed) > limit:
        parts.append(f"{len(changed) - limit} more")
    return ", ".join(parts)


def label_changes(spec: RunSpec, out_root: Path, *, run_dir: Path | None = None) -> str:
    """The labels and run lists (``COSMETIC_EXPERIMENT_KEYS``, ``RUN_LIST_EXPERIMENT_KEYS``)
    in which the run recorded in ``spec``'s run directory differs from ``spec``, by their
    TOML names (``experiment.description, experiment.policies``); empty if none differs or
    the directory's run_config.json is unreadable."""
    try:
        d = run_dir or out_root / spec.experiment / spec.name
        stored = json.loads((d / "run_config.json").read_text())["experiment_cfg"]
        new = spec.config["experiment_cfg"]
        return ", ".join(f"experiment.{k}" for k in (*COSMETIC_EXPERIMENT_KEYS,
                                                     *RUN_LIST_EXPERIMENT_KEYS)
                         if stored.get(k) != new.get(k))
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return ""


def resolved_realloc(spec: RunSpec) -> str | None:
    """The reallocation mode a fluid run of ``spec`` uses: ``experiment.realloc``, or for
    ``"policy"`` the policy's ``realloc_mode()`` as registered now (None: a packet-level
    run). A run recorded under another mode (its policy's ``default_realloc`` or
    ``allocation`` changed since) is a different run although its config hash is the same."""
    if spec.backend != "fluid":
        return None
    from emulation.scheduler import POLICIES
    cls = POLICIES.get(spec.policy)
    return cls.resolve_realloc(spec.experiment_cfg["realloc"]) if cls is not None else None


def recorded_realloc(run_dir: Path) -> str | None:
    """The reallocation mode a run directory's run.json records (None if unreadable)."""
    try:
        return json.loads((run_dir / "run.json").read_text()).get("realloc")
    except (OSError, ValueError, AttributeError):
        return None


def relabel(spec: RunSpec, out_root: Path) -> None:
    """Write ``spec``'s config (its labels and run lists) and config hash into the
    run directory that holds the same run under other labels: run.json's (and a twin's)
    ``config_hash``, then run_config.json, each replaced whole. The records are kept."""
    d = out_root / spec.experiment / spec.name
    for rj in (d / "run.json", d / "twin" / "run.json"):
        if rj.exists():
            run = {**json.loads(rj.read_text()), "config_hash": spec.config_hash}
            text = json.dumps(run, indent=2, sort_keys=True, default=str) + "\n"
            _write_atomic(rj, lambda tmp: tmp.write_text(text))
    _write_atomic(d / "run_config.json", lambda tmp: tmp.write_text(_run_config_text(spec)))


def stale_runs(specs: list[RunSpec], out_root: Path) -> list[str]:
    """Run directories under ``out_root`` (``<experiment>/<run>/run_config.json``) that no
    spec of this invocation names: kept, and read by the analysis with the others."""
    names = {(s.experiment, s.name) for s in specs}
    return [f"{r.parent.name}/{r.name}" for r in committed_runs(out_root)
            if (r.parent.name, r.name) not in names]


def backend_of(run_dir: Path) -> str | None:
    """The backend a run directory's run_config.json names (None if unreadable)."""
    try:
        return json.loads((run_dir / "run_config.json").read_text()).get("backend")
    except (OSError, ValueError):
        return None


def run_policies(run_dir: Path) -> set[str]:
    """The policy a run directory's run_config.json or run.json names (empty if neither
    reads or names one)."""
    out = set()
    for name in ("run_config.json", "run.json"):
        try:
            policy = json.loads((run_dir / name).read_text()).get("policy")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(policy, str):
            out.add(policy)
    return out


def recorded_policies(results: Path) -> set[str]:
    """The policies the run directories of a results tree name (``<experiment>/<run>/``
    with run_config.json or run.json, the files the analysis reads; not ``.``-prefixed)."""
    runs = {p.parent for p in [*results.glob("*/*/run_config.json"),
                               *results.glob("*/*/run.json")]}
    return set().union(*(run_policies(d) for d in runs if not d.name.startswith(".")))


def die_with_parent(parent_pid: int) -> None:
    """Worker-process initializer: ask Linux to send this process SIGTERM when the runner
    that started it dies (``prctl(PR_SET_PDEATHSIG)``), so that a runner killed outright
    (SIGKILL, or SIGTERM, which Python does not turn into a clean exit) leaves no worker
    behind: such a worker would finish the runs already handed to it and then wait for
    more forever. Its temporary run directory is cleared by the next run
    (``interrupted_leftovers``). If the runner is already gone, exit at once. Only for
    workers the runner forks itself (``run_all``); elsewhere than Linux, nothing is done."""
    from emulation.lifetime import set_parent_death_signal
    if set_parent_death_signal() and os.getppid() != parent_pid:
        os._exit(1)


def run_all(todo: list[RunSpec], out: Path, *, jobs: int, dask_address: str | None = None,
            done_specs: list[RunSpec] = ()) -> None:
    """Prepare traces and bounds, then run everything with a progress bar (fluid runs
    identical to another run of this suite are copied from it, not run twice)."""
    todo, copies = split_duplicates(todo, list(done_specs))
    from tqdm import tqdm
    prepared = {}
    prep = progress(total=len(todo), desc="traces and lower bounds", disable=len(todo) < 2,
                    leave=False)
    try:
        for s in todo:
            prepared[(s.experiment, s.name)] = prepare_trace(s, out)
            prep.update(1)
    finally:
        prep.close()
    total = len(todo) + len(copies)
    bar = progress(total=total, desc="runs", disable=not total)
    t0 = time.time()
    finished = [0]

    def done(spec: RunSpec, run: dict[str, Any]) -> None:
        bar.update(1)
        finished[0] += 1
        tqdm.write(f"[{time.time() - t0:7.1f}s] ({finished[0]}/{total}) "
                   f"{spec.experiment}/{spec.name}: avg SCT {run['avg_sct_s']:.3f} s, "
                   f"/LB {run['avg_sct_over_lb']:.3f}")

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
            # forked workers, so that their parent is the runner (die_with_parent)
            fork = sys.platform.startswith("linux")
            with ProcessPoolExecutor(
                    max_workers=jobs,
                    mp_context=multiprocessing.get_context("fork") if fork else None,
                    initializer=die_with_parent if fork else None,
                    initargs=(os.getpid(),) if fork else ()) as pool:
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
