"""``--verify``: recompute the committed fluid runs of a results directory and compare.

Owns rebuilding a ``RunSpec`` from a committed run directory (``spec_from_record``: its
``run_config.json``, the trace file found again by its sha256), recomputing it into a
temporary directory with the runner's own ``prepare_trace`` / ``execute``, the exact
comparison of the records (``compare_run``: ``VERIFY_KEYS`` of run.json and every stage's
SCT as written) and the pass/fail table per experiment (``verify``, ``verify_table``).
Packet-level runs are counted, not recomputed; a run that shares another experiment's
records (``same_run_as``) is checked to have that run's configuration (``check_shared``).
"""
from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from emulation.backends import EXACT
from emulation.records import SAME_RUN_AS, file_sha256
from runner.config import REPO, RunSpec, content_key
from runner.execute import execute, prepare_trace
from runner.results_dir import committed_runs
from workloads.config import ConfigError
from emulation import store

VERIFY_KEYS = ("avg_sct_s", "p95_sct_s")


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
    cfg = store.read_json(run_dir / "run_config.json")
    trace_path = _find_trace(cfg) if cfg.get("trace_sha256") else ""
    return RunSpec(experiment=cfg["experiment"], name=run_dir.name, backend=cfg["backend"],
                   policy=cfg["policy"], seed=cfg["seed"], params=cfg["params"],
                   experiment_cfg=cfg["experiment_cfg"], workload=cfg["workload"],
                   topology=cfg["topology"], trace_path=trace_path,
                   trace_sha256=cfg.get("trace_sha256", ""), cluster=cfg.get("cluster", {}))


def _stage_scts(run_dir: Path) -> dict[str, float]:
    """stage_id -> sct_s, exactly as recorded (``store.read_table``: every float as
    written, compared for equality)."""
    st = store.read_table(run_dir / "stages.csv")
    return dict(zip(st["stage_id"].astype(str), st["sct_s"].tolist()))


def check_shared(run_dir: Path) -> list[str]:
    """Why a run directory that shares another's records (run.json ``same_run_as``) may not:
    the source is missing, or its config's ``content_key`` (what records depend on) is not
    this run's; empty if the sharing holds."""
    shared = store.read_json(run_dir / "run.json")[SAME_RUN_AS]
    src = run_dir.parent.parent / shared
    if not store.has(src / "stages.csv"):
        return [f"shares the records of {shared}, which holds none"]
    try:
        same = content_key(spec_from_record(run_dir)) == content_key(spec_from_record(src))
    except (ConfigError, OSError, ValueError, KeyError) as exc:
        return [f"could not read its config or {shared}'s: {exc}"]
    return [] if same else [f"shares the records of {shared}, whose config gives other records"]


def compare_run(ref_dir: Path, new_dir: Path) -> list[str]:
    """Differences between a committed run and its recomputation (empty = identical)."""
    old = store.read_json(ref_dir / "run.json")
    new = store.read_json(new_dir / "run.json")
    diffs = [f"{k}: committed {old.get(k)!r}, recomputed {new.get(k)!r}"
             for k in VERIFY_KEYS if old.get(k) != new.get(k)]
    a, b = _stage_scts(ref_dir), _stage_scts(new_dir)
    if set(a) != set(b):
        diffs.append(f"stage ids differ: {sorted(set(a) ^ set(b))[:5]}")
    bad = [sid for sid in a if sid in b and a[sid] != b[sid]]
    if bad:
        diffs.append(f"{len(bad)} stage SCTs differ, e.g. {bad[0]}: committed {a[bad[0]]!r}, "
                     f"recomputed {b[bad[0]]!r}")
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


def verify_table(rows: dict[str, list[int]], *, packet_only: set[str]) -> list[str]:
    """The pass/fail table, one line per experiment in name order under a header; ``rows``:
    experiment -> [recomputed, pass, fail, not recomputed] run counts; ``packet_only``: the
    experiments of packet-level runs alone. The first column is as wide as the longest
    experiment name, so the columns stay aligned (``cong-concurrency``)."""
    width = max([len("experiment"), *map(len, rows)])
    lines = [f"{'experiment':{width}s} {'runs':>5s} {'recomputed':>10s} {'pass':>5s} "
             f"{'FAIL':>5s} {'not recomputed':>15s}  verdict"]
    for exp, (n_re, n_ok, n_bad, n_not) in sorted(rows.items()):
        total = n_re + n_not
        verdict = "FAIL" if n_bad else ("pass" if n_re else "-")
        why = " (packet-level)" if n_not and exp in packet_only else ""
        lines.append(f"{exp:{width}s} {total:5d} {n_re:10d} {n_ok:5d} {n_bad:5d} {n_not:15d}  "
                     f"{verdict}{why}")
    return lines


def verify(results: Path, *, sample: int, jobs: int, seed: int = 0) -> int:
    """Recompute the committed fluid runs (all, or a seeded sample of ``sample``) and
    compare; print a table per experiment; 0 if every recomputed run matches, else 1."""
    import random
    import tempfile
    from runner.progress import progress
    runs = committed_runs(results)
    if not runs:
        print(f"error: no committed runs (run_config.json) under {results}", file=sys.stderr)
        return 2
    backend = {r: store.read_json(r / "run_config.json")["backend"] for r in runs}
    shared = {r: check_shared(r) for r in runs if store.has(r / "run.json")
              and store.read_json(r / "run.json").get(SAME_RUN_AS)}
    fluid = [r for r in runs if backend[r] in EXACT and r not in shared]
    packet = [r for r in runs if backend[r] not in EXACT]
    if sample and sample < len(fluid):
        fluid = sorted(random.Random(seed).sample(fluid, sample))
    t0 = time.time()
    results_of: dict[Path, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="verify-") as tmp:
        bar = progress(total=len(fluid), desc="verify")
        try:
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
        finally:
            bar.close()
    results_of.update({r: d for r, d in shared.items() if d})  # a broken link is a failure
    rows: dict[str, list[int]] = {}
    for r in runs:
        row = rows.setdefault(r.parent.name, [0, 0, 0, 0])  # recomputed, pass, fail, not
        if r in results_of:
            row[0] += 1
            row[1 if not results_of[r] else 2] += 1
        else:
            row[3] += 1
    packet_only = {exp for exp in rows
                   if all(backend[r] not in EXACT for r in runs if r.parent.name == exp)}
    print()
    for line in verify_table(rows, packet_only=packet_only):
        print(line)
    bad = {r: d for r, d in results_of.items() if d}
    for r, d in sorted(bad.items()):
        print(f"MISMATCH {r.parent.name}/{r.name}:")
        for line in d:
            print(f"    {line}")
    n_fail = len(bad)
    n_diff = sum(1 for r in fluid if results_of.get(r))
    print(f"{len(fluid)} fluid runs recomputed in {time.time() - t0:.0f} s: "
          f"{len(fluid) - n_diff} identical, {n_diff} differ; {len(shared)} share another "
          f"run's records ({len(shared) - (n_fail - n_diff)} checked to have its config); "
          f"{len(packet)} packet-level "
          f"runs not recomputed (TCP varies run to run; tests/mininet/test_mininet.py bands them)"
          + ("" if not sample else f"; sample of {sample} (seed {seed})"))
    return 1 if n_fail else 0
