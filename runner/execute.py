"""Running experiment runs into a results directory.

Owns the writing of run directories (``<results dir>/<experiment>/<run name>/``):
preparing each run's trace and lower bound once (``prepare_trace``, under
``<experiment>/traces/``), executing one run on its backend (``execute``: the backends'
registry, ``emulation/backends.py``, runs it), committing the run directory atomically (temp
dir, then rename, with ``run_config.json`` and paths relative to the results directory;
a run that raises leaves nothing behind but finished traces and bounds, which a rerun
reuses), a run of an exact backend identical to one already run sharing that run's records
(``split_duplicates``, ``share``), and the whole set of runs with a progress bar (``run_all``: a process pool
whose workers ignore Ctrl-C and die with the runner, ``pool_worker``, or a Dask
cluster; a backend whose runs take the machine one at a time, the packet level, runs them
in this process). Reading a results directory's
state and clearing what killed runners left: ``runner.results_dir``.
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
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

from emulation.backends import BACKENDS, RunRequest
from emulation.records import SAME_RUN_AS, write_run_json
from runner.config import RunSpec, content_key
from runner.progress import progress
from runner.results_dir import TWIN_DIRS, run_config_text, write_atomic
from workloads.config import build
from emulation import store


def prepare_trace(spec: RunSpec, out_root: Path) -> tuple[str, str]:
    """Write (once) the run's trace and its lower bound; returns (trace path, lb path).
    A trace placed during the run has no shared bound (lb path ""): each run bounds its
    own placement."""
    from emulation.scheduler.lower_bound import lower_bound
    from emulation.topology import TopologyConfig, build_topology
    from workloads import coflow_benchmark, trace as trace_mod
    from workloads.cluster import ClusterConfig
    from workloads.generator import WorkloadConfig, generate
    traces = out_root / spec.experiment / "traces"
    traces.mkdir(parents=True, exist_ok=True)
    key_src = spec.trace_sha256 or json.dumps(
        [spec.workload, spec.cluster] if spec.cluster else spec.workload, sort_keys=True)
    key = hashlib.sha256(key_src.encode()).hexdigest()[:16]
    tpath = Path(spec.trace_path) if spec.trace_path else traces / f"{key}.json"
    if not spec.trace_path and not tpath.exists():
        cluster = build(ClusterConfig, spec.cluster, "cluster") if spec.cluster else None
        t = generate(build(WorkloadConfig, spec.workload, "workload"), cluster=cluster)
        write_atomic(tpath, lambda tmp: trace_mod.save(t, tmp))
    if spec.cluster:  # the bound depends on each run's own placement: run_fluid computes it
        return str(tpath), ""
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
        write_atomic(lbpath, lambda tmp: tmp.write_text(text))
    return str(tpath), str(lbpath)


def execute(spec: RunSpec, trace_path: str, lb_path: str, out_root: str) -> dict[str, Any]:
    """Run one spec into its directory atomically; returns its run.json (top-level, picklable).
    On any error the temporary directory is removed (and an older run of the same name is
    kept): the run is left to run, not half made."""
    final = Path(out_root) / spec.experiment / spec.name
    tmp = Path(out_root) / spec.experiment / f".tmp-{spec.name}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        run = BACKENDS[spec.backend].execute(run_request(spec, trace_path, lb_path, tmp))
        run.update(_portable_paths(tmp, Path(out_root)))
        _commit_run_dir(spec, tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # gone already once committed
    return run


def _portable_paths(run_dir: Path, out_root: Path) -> dict[str, str]:
    """Rewrite ``trace_path`` in the run's run.json (and its twins') relative to the
    results directory (``pattern/traces/<key>.json``, ``../data/<file>``), so that no
    record holds a path of the machine it ran on; returns the rewritten fields."""
    changed: dict[str, str] = {}
    for rj in (run_dir / "run.json", *(run_dir / t / "run.json" for t in TWIN_DIRS)):
        if not rj.exists():
            continue
        run = json.loads(rj.read_text())
        tp = run.get("trace_path")
        if isinstance(tp, str) and os.path.isabs(tp):
            run["trace_path"] = Path(os.path.relpath(tp, out_root)).as_posix()
            write_run_json(rj, run)
            if rj.parent == run_dir:
                changed["trace_path"] = run["trace_path"]
    return changed


def _commit_run_dir(spec: RunSpec, tmp: Path, final: Path) -> None:
    """Write ``run_config.json`` into the finished temporary run directory, then move it
    into place. An older run of the same name is renamed aside first and removed only
    once the new one is in place, so ``final`` always holds one whole run (the old one if
    the rename fails)."""
    (tmp / "run_config.json").write_text(run_config_text(spec))
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


def run_request(spec: RunSpec, trace_path: str, lb_path: str, outdir: Path) -> RunRequest:
    """What a backend needs of ``spec`` to run it into ``outdir``."""
    return RunRequest(policy=spec.policy, experiment=spec.experiment_cfg,
                      topology=spec.topology, trace_path=trace_path, lb_path=lb_path,
                      outdir=outdir, extra=_run_extra(spec))


def share(spec: RunSpec, source: Path, out_root: Path) -> dict[str, Any]:
    """Write ``spec``'s run directory as one that shares the finished run at ``source``
    (same content key, another experiment's): its own ``run_config.json`` and a run.json
    with the source's numbers, ``spec``'s identity fields and ``same_run_as`` naming the
    source; no records of its own, so that no two directories hold one configuration's
    records. Atomic like ``execute``."""
    final = out_root / spec.experiment / spec.name
    tmp = out_root / spec.experiment / f".tmp-{spec.name}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        run = store.read_json(source / "run.json")
        run.pop("reused_from", None)
        run.update({**_run_extra(spec),
                    SAME_RUN_AS: f"{source.parent.name}/{source.name}"})
        write_run_json(tmp / "run.json", run)
        _commit_run_dir(spec, tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # gone already once committed
    return run


def split_duplicates(specs: list[RunSpec], done_specs: list[RunSpec], out_root: Path
                     ) -> tuple[list[RunSpec], list[tuple[RunSpec, RunSpec]]]:
    """Fluid runs to execute, and (run, source run) pairs where the run shares the
    source's records (``share``) because the source (earlier in ``specs``, or already done
    in ``out_root`` and holding records of its own) has the same content key."""
    first: dict[str, RunSpec] = {
        content_key(s): s for s in reversed(done_specs)
        if BACKENDS[s.backend].exact
        and store.has(out_root / s.experiment / s.name / "stages.csv")}
    run, copies = [], []
    for s in specs:
        key = content_key(s) if BACKENDS[s.backend].exact else None
        if key is not None and key in first:
            copies.append((s, first[key]))
        else:
            if key is not None:
                first[key] = s
            run.append(s)
    return run, copies


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


def pool_worker(parent_pid: int) -> None:
    """Initializer of the runner's forked workers: ``die_with_parent``, and Ctrl-C
    (SIGINT, sent to the whole process group by a terminal) ignored, so that only the
    runner handles it (it stops its workers itself) and no idle worker prints a
    traceback."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent_pid)


def run_all(todo: list[RunSpec], out: Path, *, jobs: int, dask_address: str | None = None,
            done_specs: list[RunSpec] = ()) -> None:
    """Prepare traces and bounds, then run everything with a progress bar (a fluid run
    identical to another run of this suite shares that run's records, ``share``: it is
    not run twice)."""
    todo, copies = split_duplicates(todo, list(done_specs), out)
    from tqdm import tqdm
    prepared = _prepare_all(todo, out)
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

    local_only = [s for s in todo if BACKENDS[s.backend].one_at_a_time]  # an emulated network
    pooled = [s for s in todo if not BACKENDS[s.backend].one_at_a_time]
    try:
        if dask_address and pooled:
            _run_on_dask(pooled, prepared, out, jobs=jobs, address=dask_address, done=done)
        elif jobs == 1 or len(pooled) <= 1:
            for s in pooled:
                done(s, execute(s, *prepared[(s.experiment, s.name)], str(out)))
        else:
            _run_in_pool(pooled, prepared, out, jobs=jobs, done=done)
        for s in local_only:
            done(s, execute(s, *prepared[(s.experiment, s.name)], str(out)))
        for s, src in copies:
            done(s, share(s, out / src.experiment / src.name, out))
    finally:
        bar.close()


def _prepare_all(todo: list[RunSpec], out: Path) -> dict[tuple[str, str], Any]:
    """``prepare_trace`` of every run, by (experiment, run name), with a progress bar."""
    prepared = {}
    prep = progress(total=len(todo), desc="traces and lower bounds", disable=len(todo) < 2,
                    leave=False)
    try:
        for s in todo:
            prepared[(s.experiment, s.name)] = prepare_trace(s, out)
            prep.update(1)
    finally:
        prep.close()
    return prepared


def _run_on_dask(pooled: list[RunSpec], prepared: dict[tuple[str, str], Any], out: Path, *,
                 jobs: int, address: str, done: Callable[[RunSpec, dict[str, Any]], None]
                 ) -> None:
    """Run ``pooled`` on a Dask cluster (``address``; "local": a LocalCluster of ``jobs``
    single-threaded worker processes), ``done`` called as each finishes."""
    import contextlib
    from distributed import Client, LocalCluster, as_completed as dask_completed
    with contextlib.ExitStack() as stack:
        if address == "local":
            cluster = stack.enter_context(LocalCluster(
                n_workers=jobs, threads_per_worker=1, processes=True,
                dashboard_address=None))
            address = cluster.scheduler_address
        client = stack.enter_context(Client(address))
        futs = {client.submit(execute, s, *prepared[(s.experiment, s.name)], str(out),
                              pure=False): s for s in pooled}
        for fut in dask_completed(futs):
            done(futs[fut], fut.result())


def _run_in_pool(pooled: list[RunSpec], prepared: dict[tuple[str, str], Any], out: Path, *,
                 jobs: int, done: Callable[[RunSpec, dict[str, Any]], None]) -> None:
    """Run ``pooled`` in a process pool of ``jobs`` workers, ``done`` called in submission
    order among the runs that finish together; Ctrl-C ends the running ones at once, and a
    failed run lets the queued ones run before it is raised."""
    # forked workers, so that their parent is the runner (pool_worker)
    fork = sys.platform.startswith("linux")
    pool = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=multiprocessing.get_context("fork") if fork else None,
        initializer=pool_worker if fork else None,
        initargs=(os.getpid(),) if fork else ())

    def stop() -> None:  # Ctrl-C: no queued run starts, the running ones end now
        for child in multiprocessing.active_children():
            child.kill()
        pool.shutdown(wait=False, cancel_futures=True)

    try:
        futs = {pool.submit(execute, s, *prepared[(s.experiment, s.name)], str(out)): s
                for s in pooled}
        rank = {fut: i for i, fut in enumerate(futs)}
        waiting = set(futs)
        while waiting:  # woken at least twice a second, so Ctrl-C is seen at once
            finished_now, waiting = wait(waiting, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in sorted(finished_now, key=rank.get):
                done(futs[fut], fut.result())
    except KeyboardInterrupt:
        stop()
        raise
    except BaseException:  # a failed run: the queued runs still run, then it shows
        try:
            pool.shutdown(wait=True)
        except KeyboardInterrupt:
            stop()
            raise
        raise
    pool.shutdown(wait=True)
