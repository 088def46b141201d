"""One fluid run: trace file + policy + topology -> records in an output directory.

Also the command line's helpers that sit outside the simulation: the output-directory
check (``existing_run_error``), the first-run kernel compilation notice
(``kernels_need_compiling`` / ``ensure_kernels``) and the progress display
(``Progress``), which only reads the simulator's state from a thread and never changes
what is simulated or recorded.
"""
from __future__ import annotations

import dataclasses
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from emulation.records import (cluster_facts, file_sha256, git_sha, summary_stats, versions,
                               write_records)
from emulation.scheduler import make_policy
from emulation.scheduler.lower_bound import lower_bound
from emulation.scheduler.lower_bound_cache import cached_lower_bound
from emulation.fluid.simulator import FluidSimulator
from emulation.packet_model import PacketCosts
from emulation.topology import TOPOLOGIES, Topology
from workloads.trace import Trace

# the files a run directory holds (both backends write them): a directory with any of
# them holds a run, which the command lines do not overwrite without --force
RECORD_FILES = ("run.json", "stages.csv", "coflows.csv", "flows.csv")
COMPILE_NOTE = "compiling simulator kernels (once per checkout, 1-2 minutes)..."


def run_fluid(*, trace: Trace, trace_path: str | Path, topology: Topology, policy: str,
              outdir: str | Path, priority_classes: int = 8, release_at_zero: bool = False,
              realloc: str | None = None, allocation: str | None = None,
              policy_params: dict[str, Any] | None = None, lb_avg_sct_s: float | None = None,
              extra: dict[str, Any] | None = None,
              progress: "Progress | None" = None, lb_cache_dir: str | Path | None = None,
              write_flows: bool = True, packet_costs: PacketCosts | None = None
              ) -> dict[str, Any]:
    """Simulate, compute (or reuse) the lower bound, write records; return run.json's dict.

    ``realloc=None``: the policy as the packet backend runs it (``Policy.realloc_mode``:
    its published decision events, rates as switch queues give them); run.json records
    the mode used (``realloc``) and ``realloc_is_policy_default``, True
    exactly when the mode was taken from the policy because none was given (a mode
    given explicitly records False, even if it equals the policy's). ``allocation=None``:
    the policy's own (``Policy.allocation``); run.json records the one used.
    ``progress``: a running ``Progress`` to tell the phases and, while simulating, the
    simulated time and coflows done (read-only: the records are the same either way).
    ``lb_cache_dir``: keep the lower bound there between runs
    (``emulation.scheduler.lower_bound_cache``; ``trace`` must be what ``trace_path``
    loads to); run.json then says whether it was read (``lower_bound_cache``). None:
    computed here unless ``lb_avg_sct_s`` is given. A trace whose trials a cluster places
    has no bound of its own: each run computes the bound of its own placement and ASHA
    decisions, and ``lb_avg_sct_s`` and ``lb_cache_dir`` are not used.
    ``write_flows=False``: no flows.csv. ``packet_costs``: the packet-aware model
    (``emulation/packet_model.py``), recorded in run.json as ``packet_model``
    (absent: the ideal model).
    The compiled kernels are loaded before the simulation starts, so ``sim_wall_s`` is
    simulation only, in the first run of a process too."""
    from emulation import kernels
    t0 = time.perf_counter()
    kernels.warm_up()  # loads (or compiles) every kernel: outside sim_wall_s
    pol = make_policy(policy, **(policy_params or {}))
    realloc_default = realloc is None
    if realloc is None:
        realloc = pol.resolve_realloc(None)
    sim = FluidSimulator(trace, topology, pol,
                         priority_classes=priority_classes, release_at_zero=release_at_zero,
                         realloc=realloc, allocation=allocation, packet_costs=packet_costs)
    if progress is not None:
        progress.attach(sim, trace)
        progress.phase("simulating")
    res = sim.run()
    trace_sha256 = file_sha256(trace_path)
    lb_cache, apps, placed_facts = None, None, {}
    if trace.cluster is not None:
        lb_avg_sct_s, apps, placed_facts = _placed_run(
            sim, res, trace, topology, policy=policy, policy_params=policy_params,
            priority_classes=priority_classes, realloc=realloc, allocation=allocation,
            release_at_zero=release_at_zero, progress=progress)
    elif lb_avg_sct_s is None:
        lb_avg_sct_s, lb_cache = _lower_bound(trace, topology, trace_sha256=trace_sha256,
                                              release_at_zero=release_at_zero,
                                              lb_cache_dir=lb_cache_dir, progress=progress)
    run = {
        **_run_json(res, trace, topology, lb_avg_sct_s=lb_avg_sct_s),
        "policy": policy,
        "policy_params": policy_params or {},
        "trace_path": str(trace_path),
        "trace_sha256": trace_sha256,
        "num_priority_classes": priority_classes,
        "release_at_zero": release_at_zero,
        "realloc": realloc,
        "realloc_is_policy_default": realloc_default,
        "allocation": sim.allocation,
        **({"lower_bound_cache": lb_cache} if lb_cache is not None else {}),
        **placed_facts,
        **({"packet_model": packet_costs.as_dict()} if packet_costs is not None else {}),
        **(extra or {}),
    }
    run["wall_s"] = time.perf_counter() - t0
    if progress is not None:
        progress.phase("writing records")
    return write_records(outdir, stages=res.stages, coflows=res.coflows, flows=res.flows, run=run,
                         write_flows=write_flows, trials=res.trials, decisions=res.decisions,
                         apps=apps)


def _lower_bound(trace: Trace, topology: Topology, *, trace_sha256: str,
                 release_at_zero: bool, lb_cache_dir: str | Path | None,
                 progress: "Progress | None") -> tuple[float, dict[str, Any] | None]:
    """The trace's lower bound (avg SCT, s), computed or read from ``lb_cache_dir``, and
    what the cache did (None without one)."""
    if progress is not None:
        progress.phase("lower bound")
    if lb_cache_dir is None:
        return lower_bound(trace, topology, release_at_zero=release_at_zero).avg_sct_s, None
    cached = cached_lower_bound(trace, topology, trace_sha256=trace_sha256,
                                release_at_zero=release_at_zero, cache_dir=lb_cache_dir)
    return cached.avg_sct_s, {"hit": cached.hit, "stored": cached.stored,
                              "path": str(cached.path)}


def _run_json(res, trace: Trace, topology: Topology, *, lb_avg_sct_s: float
              ) -> dict[str, Any]:
    """run.json's fields that come from the records and the setting: the SCT statistics
    and their ratio to the bound, the counts, the topology, the simulation's times."""
    stats = summary_stats(np.array([s["sct_s"] for s in res.stages]))
    cct = np.array([c["cct_s"] for c in res.coflows]) if res.coflows else np.zeros(0)
    return {
        "backend": "fluid",
        "seed": trace.seed,
        **stats,
        "avg_cct_s": float(cct.mean()) if len(cct) else None,
        "lower_bound_avg_sct_s": lb_avg_sct_s,
        "avg_sct_over_lb": stats["avg_sct_s"] / lb_avg_sct_s if lb_avg_sct_s > 0 else None,
        "num_stages": len(res.stages),
        "num_coflows": len(res.coflows),
        "num_flows": res.flows.num_rows,
        "topology": {"kind": topology.kind, "num_hosts": len(topology.hosts),
                     "num_links": len(topology.links),
                     **TOPOLOGIES[topology.kind].facts(topology)},
        "sim_wall_s": res.facts["sim_wall_s"],
        "simulated_s": res.facts["simulated_s"],
        "num_decisions": res.facts["num_decisions"],
        "versions": versions(),
        "git_sha": git_sha(),
    }


def _placed_run(sim: FluidSimulator, res, trace: Trace, topology: Topology, *, policy: str,
                policy_params: dict[str, Any] | None, priority_classes: int, realloc: str,
                allocation: str | None, release_at_zero: bool, progress: "Progress | None"
                ) -> tuple[float, list[dict[str, Any]], dict[str, Any]]:
    """For a run whose trials a cluster placed: the lower bound of its own placement and
    decisions (docs/design.md, "Lower bound"), ``apps.csv``'s rows and run.json's cluster
    facts."""
    if progress is not None:
        progress.phase("lower bound")
    lb_avg_sct_s = lower_bound(sim.state.placed_trace(), topology,
                               release_at_zero=release_at_zero).avg_sct_s
    if progress is not None:
        progress.phase("tuning jobs alone")
    apps = tuning_jobs(trace, topology, res.stages, policy=policy,
                       policy_params=policy_params, priority_classes=priority_classes,
                       realloc=realloc, allocation=allocation, release_at_zero=release_at_zero)
    facts = {**cluster_facts(res.trials, cluster=trace.cluster, num_hosts=len(trace.hosts),
                             makespan_s=res.facts["simulated_s"]),
             "lower_bound_of": "this run's placement and decisions",
             "avg_normalised_jct": float(np.mean([a["normalised_jct"] for a in apps])),
             "avg_jct_s": float(np.mean([a["jct_s"] for a in apps]))}
    return lb_avg_sct_s, apps, facts


def tuning_jobs(trace: Trace, topology: Topology, stages: list[dict], *, policy: str,
                policy_params: dict[str, Any] | None, priority_classes: int, realloc: str,
                allocation: str | None, release_at_zero: bool) -> list[dict[str, Any]]:
    """``apps.csv``'s rows: each tuning job's completion time in the run (its last stage's
    end - its arrival, 0 with ``release_at_zero``), the same tuning job alone on the empty
    cluster under the same policy (its trace with only that app, arriving at 0), their
    ratio (normalised JCT, as Crux and CASSINI report it) and the stages each ran (ASHA's
    decisions follow each run's timing, so alone it may train other segments)."""
    end: dict[str, float] = {}
    ran: dict[str, int] = {}
    for st in stages:
        end[st["app_id"]] = max(end.get(st["app_id"], 0.0), st["end_s"])
        ran[st["app_id"]] = ran.get(st["app_id"], 0) + 1
    rows = []
    for app in trace.apps:
        alone_trace = dataclasses.replace(
            trace, apps=(dataclasses.replace(app, arrival_s=0.0),))
        sim = FluidSimulator(alone_trace, topology, make_policy(policy, **(policy_params or {})),
                             priority_classes=priority_classes, realloc=realloc,
                             allocation=allocation)
        alone_stages = sim.run().stages
        alone = max(s["end_s"] for s in alone_stages)
        jct = end[app.app_id] - (0.0 if release_at_zero else app.arrival_s)
        rows.append({"app_id": app.app_id, "algorithm": app.algorithm,
                     "arrival_s": app.arrival_s, "jct_s": jct, "jct_alone_s": alone,
                     "normalised_jct": jct / alone if alone > 0 else float("nan"),
                     "stages": ran[app.app_id], "stages_alone": len(alone_stages)})
    return rows


# ---------------------------------------------------------------- command-line helpers

def add_output_args(ap) -> None:
    """The ``-o/--output`` and ``--force`` options both backends' command lines share."""
    ap.add_argument("-o", "--output", required=True, metavar="OUTDIR",
                    help="directory for the records (created); refused if it already "
                         "holds a run, unless --force")
    ap.add_argument("--force", action="store_true",
                    help="write into OUTDIR even if it holds a run (its record files are "
                         "replaced)")


def existing_run_error(outdir: str | Path, *, force: bool) -> str | None:
    """None if a run's records may be written into ``outdir``; else a one-line reason.

    A directory that already holds records (any of ``RECORD_FILES``) is refused unless
    ``force``: the files of a different run would be replaced (or, for the files one
    backend does not write, mixed with the new run's). Other files are no obstacle."""
    p = Path(outdir)
    if p.exists() and not p.is_dir():
        return f"-o {p}: exists and is not a directory"
    if force or not p.is_dir():
        return None
    held = [f for f in RECORD_FILES if (p / f).exists()]
    if not held:
        return None
    return (f"{p} already holds a run ({', '.join(held)}); choose another -o directory "
            f"or pass --force to overwrite its records")


def _dispatchers() -> list:
    from numba.core.registry import CPUDispatcher
    from emulation import kernels
    return [v for m in kernels.modules() for v in vars(m).values()
            if isinstance(v, CPUDispatcher) and v.py_func.__module__ == m.__name__]


def kernels_need_compiling() -> bool:
    """True if the next run compiles numba kernels: numba's on-disk cache (``__pycache__``
    beside each module of ``emulation.kernels.MODULES``, or ``NUMBA_CACHE_DIR``) has no
    fresh entry for some kernel (a first run on this machine, its module changed) or
    caching is off (no writable cache directory). Reads only the cache index files
    (milliseconds); False if numba's cache layout cannot be read (then nothing is claimed)."""
    try:
        for d in _dispatchers():
            cache = d._cache
            if type(cache).__name__ == "NullCache":
                return True
            if not cache._cache_file._load_index():
                return True
    except Exception:  # a numba whose cache internals differ: say nothing
        return False
    return False


# beside each kernel cache: the SHA-256 of every kernel module's source when it was filled
KERNEL_SOURCES_STAMP = "kernel-sources.sha256"


def drop_stale_kernel_caches() -> bool:
    """numba invalidates a kernel's cache when the kernel's own file changes, not when a
    kernel it calls from another of ``emulation.kernels.MODULES`` does (after a ``git pull``
    that changed only the callee, the caller's cached machine code would be stale). So a
    stamp of all their sources (``kernels.source_sha256``) sits beside each cache; where
    it differs from the sources, every kernel's cache index is emptied (the next warm-up
    compiles afresh) and the stamps are rewritten. True if it emptied them; False too
    when numba's cache layout cannot be read (nothing is touched then)."""
    from emulation import kernels
    try:
        want = kernels.source_sha256()
        caches = [d._cache for d in _dispatchers() if type(d._cache).__name__ != "NullCache"]
        dirs = {Path(c._cache_path) for c in caches}

        def stamp(d: Path) -> str | None:
            try:
                return (d / KERNEL_SOURCES_STAMP).read_text().strip()
            except OSError:
                return None

        if all(stamp(d) == want for d in dirs):
            return False
        for c in caches:
            c.flush()
        for d in dirs:
            d.mkdir(parents=True, exist_ok=True)
            (d / KERNEL_SOURCES_STAMP).write_text(want + "\n")
        return True
    except Exception:  # a numba whose cache internals differ, a read-only cache: say nothing
        return False


def ensure_kernels(stream: TextIO | None = None, *, prefix: str = "") -> float | None:
    """Compile the kernels up front if they are not cached or their cache predates a
    change of any kernel module (``drop_stale_kernel_caches``), saying so once on
    ``stream`` (default stderr); the seconds it took, or None if nothing needed
    compiling."""
    drop_stale_kernel_caches()
    if not kernels_need_compiling():
        return None
    stream = stream or sys.stderr
    print(prefix + COMPILE_NOTE, end="", file=stream, flush=True)
    t0 = time.perf_counter()
    from emulation import kernels
    kernels.warm_up(jobs=min(2, os.cpu_count() or 1))
    took = time.perf_counter() - t0
    print(f" done in {took:.0f} s", file=stream, flush=True)
    return took


class Progress:
    """What a command-line run is doing, shown on ``stream`` from a thread that only reads.

    ``phase(name)`` names the current step (loading the trace, simulating, the lower
    bound, writing the records); while simulating, ``attach(sim, trace)`` lets it read the
    simulated time and the coflows done from the simulator's state. Nothing is written
    into the state, so the records are the same with or without it. On a terminal: a tqdm
    bar that appears once the run has taken ``delay_s`` and is redrawn every ``redraw_s``,
    removed at the end. Otherwise (a log file, a pipe): one plain line every
    ``log_every_s``, so logs stay readable. ``write`` prints a line without breaking it."""

    def __init__(self, stream: TextIO | None = None, *, enabled: bool = True,
                 delay_s: float = 2.0, log_every_s: float = 10.0,
                 redraw_s: float = 0.5) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.delay_s, self.log_every_s, self.redraw_s = delay_s, log_every_s, redraw_s
        self._phase = "starting"
        self._state = None
        self.total: int | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="fluid-progress", daemon=True)
        self._bar = None

    def __enter__(self) -> "Progress":
        self._t0 = time.perf_counter()
        self._wall0 = time.time()  # tqdm's clock
        if self.enabled:
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None

    def phase(self, name: str) -> None:
        self._phase = name

    def attach(self, sim: FluidSimulator, trace: Trace) -> None:
        self.total = sum(j.iterations * len(j.coflows) for j in trace.jobs())
        self._state = sim.state

    def write(self, text: str, file: TextIO | None = None) -> None:
        """Print ``text`` (default to stdout) without garbling a bar on the terminal."""
        file = file or sys.stdout
        with self._lock:
            if self._bar is not None:
                self._bar.write(text, file=file)
            else:
                print(text, file=file, flush=True)

    def _snapshot(self) -> str:
        st = self._state
        if st is None or self._phase != "simulating":
            return ""
        done = len(st.c_job) - len(st.active_coflows)
        return f"simulated {float(st.now):.1f} s, {done}/{self.total} coflows done"

    def _loop(self) -> None:
        if self._stop.wait(self.delay_s if self.tty else self.log_every_s):
            return
        while True:
            with self._lock:
                if self.tty:
                    self._draw()
                else:
                    wall = time.perf_counter() - self._t0
                    what = self._snapshot()
                    print(f"progress: {self._phase}" + (f": {what}" if what else "")
                          + f", {wall:.0f} s wall", file=self.stream, flush=True)
            if self._stop.wait(self.redraw_s if self.tty else self.log_every_s):
                return

    def _draw(self) -> None:
        from tqdm import tqdm
        phase = self._phase  # read once: the main thread may move on meanwhile
        simulating = self._state is not None and phase == "simulating"
        if self._bar is None:
            try:
                cols = os.get_terminal_size(self.stream.fileno()).columns
            except (AttributeError, OSError, ValueError):
                cols = 0
            # a terminal of unknown size (0 x 0) would hide the bar: assume 100 x 24
            width = {"dynamic_ncols": True} if cols > 0 else {"ncols": 100, "nrows": 24}
            self._bar = tqdm(file=self.stream, leave=False, mininterval=0, unit="coflow",
                             desc=phase, bar_format=self.PLAIN, **width)
            self._bar.start_t = self._wall0  # elapsed since the run started
        bar = self._bar
        if simulating and bar.total is None:
            bar.total, bar.bar_format = self.total, None  # None: tqdm's default bar
        elif not simulating and bar.total is not None:
            bar.total, bar.bar_format = None, self.PLAIN
        bar.desc = phase
        if simulating:
            st = self._state
            bar.update(len(st.c_job) - len(st.active_coflows) - bar.n)
            bar.set_postfix_str(f"simulated {float(st.now):.1f} s", refresh=False)
        else:
            bar.set_postfix_str("", refresh=False)
        bar.refresh()

    PLAIN = "{desc}: {elapsed}"
