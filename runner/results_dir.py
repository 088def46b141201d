"""The state of a results directory, read and brought up to date without running
anything: which runs are there (``committed_runs``, ``is_done``, ``run_status``: a
``RunStatus``, ``backend_of``, ``recorded_realloc``, ``run_policies``,
``recorded_policies``), how a recorded run differs from the config's
(``config_changes``, ``label_changes``, ``resolved_realloc``, ``stale_runs``), a done
run's description, figure and run lists brought up to date (``relabel``), and what
runners killed mid-write left (``interrupted_leftovers``, ``put_back_plan``;
``clear_leftovers`` removes it or puts whole runs back). Files are replaced atomically
(``write_atomic``); a run directory's run_config.json text is ``run_config_text``.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from emulation.backends import EXACT
from emulation.records import SAME_RUN_AS, run_json_text
from runner.config import COSMETIC_EXPERIMENT_KEYS, RUN_LIST_EXPERIMENT_KEYS, RunSpec, run_key
from emulation import store

# a packet-level run's fluid twins: the ideal model and the packet-aware one
TWIN_DIRS = ("twin", "twin_packet")


def write_atomic(path: Path, write) -> None:
    """``write(tmp)`` into a temporary file beside ``path``, then rename it to ``path``;
    on any error the temporary file is removed and ``path`` is left as it was."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def run_config_text(spec: RunSpec) -> str:
    """A run directory's run_config.json: the run's config and its config hash."""
    return json.dumps({**spec.config, "config_hash": spec.config_hash}, indent=2,
                      sort_keys=True) + "\n"


_LEFTOVER = re.compile(r"^\.(?:tmp-|old-|packed-)(?P<name>.+)-(?P<pid>\d+)$"
                       r"|^\..+\.(?P<fpid>\d+)\.tmp$")


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
    ``<experiment>/.old-<run>-<pid>``, runs being removed once packed
    ``<experiment>/.packed-<run>-<pid>`` (``emulation.store``), and temporary files
    ``.<file>.<pid>.tmp`` beside traces, bounds, run.json files and an experiment's packed
    records, whose process id runs on this machine no longer.
    The check knows this machine's processes only: a runner on another machine (a remote
    Dask worker) or in another container writing into the same directory is taken for
    dead. A process id reused since keeps its leftovers listed as live. Sorted."""
    found = []
    for pattern in ("*/.tmp-*", "*/.old-*", "*/.packed-*", "*/.*.tmp", "*/traces/.*.tmp",
                    "*/*/.*.tmp",
                    *(f"*/*/{t}/.*.tmp" for t in TWIN_DIRS)):
        for p in results.glob(pattern):
            m = _LEFTOVER.match(p.name)
            if m and not _pid_running(int(m.group("pid") or m.group("fpid"))):
                found.append(p)
    return sorted(set(found))


def _whole_run(d: Path) -> bool:
    """True if ``d`` is a directory whose run_config.json (written last) reads whole."""
    try:
        return isinstance(store.read_json(d / "run_config.json"), dict)
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
        if not m or not m.group("name") or p.name.startswith(".packed-") or not _whole_run(p):
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
    return store.run_dirs(results, marker="run_config.json")


@dataclass(frozen=True)
class RunStatus:
    """What a run's directory holds for a run (``run_status``)."""

    # "done" (this run), "to run" (nothing, or a shared run whose source is gone) or
    # "different" (another run: replaced only with --force)
    state: Literal["done", "to run", "different"]
    # the config hash its run_config.json records; None: no directory, or unreadable
    recorded_hash: str | None
    # the reallocation mode a fluid run was recorded under when it is not the one the
    # spec resolves to (``resolved_realloc``; the run is then "different"), else None
    recorded_realloc: str | None = None


def is_done(spec: RunSpec, out_root: Path) -> bool:
    """True if the run's directory holds this run (``run_status``)."""
    return run_status(spec, out_root).state == "done"


def run_status(spec: RunSpec, out_root: Path, *, run_dir: Path | None = None) -> RunStatus:
    """The ``RunStatus`` of a run's directory. A run directory whose run_config.json holds
    the same config hash is done, and so is one whose config differs only in the labels of
    ``COSMETIC_EXPERIMENT_KEYS`` or the run lists of ``RUN_LIST_EXPERIMENT_KEYS`` (same
    ``run_key``; the hash recorded is then not the spec's, and ``relabel`` writes the
    spec's config and hash); one holding another run (or an unreadable run_config.json)
    is a different run, replaced only with ``--force``, and so is a fluid run recorded
    under another reallocation mode than the spec resolves to (``resolved_realloc``; its
    ``recorded_realloc`` is the recorded mode). A directory that shares another's records
    (run.json ``same_run_as``) whose source holds no run any more is to run again.
    ``run_dir``: read that directory instead of the run's own (what a dry run would find
    there once ``put_back_plan`` moved it into place)."""
    d = run_dir or out_root / spec.experiment / spec.name
    if not store.occupied(d):
        return RunStatus("to run", None)
    try:
        stored = store.read_json(d / "run_config.json")
        old = stored.get("config_hash")
        same = old == spec.config_hash or run_key(stored) == spec.run_key
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        old, same = None, False
    if same and not _shared_run_present(d):
        return RunStatus("to run", old)
    if same:
        recorded, wanted = recorded_realloc(d), resolved_realloc(spec)
        if recorded is not None and wanted is not None and recorded != wanted:
            return RunStatus("different", old, recorded_realloc=recorded)
    return RunStatus("done" if same else "different", old)


def _shared_run_present(run_dir: Path) -> bool:
    """False if ``run_dir`` shares another directory's records (run.json ``same_run_as``)
    and that directory holds no run any more; True otherwise."""
    try:
        shared = store.read_json(run_dir / "run.json").get(SAME_RUN_AS)
    except (OSError, ValueError, AttributeError):
        return True
    return not shared or store.has(run_dir.parent.parent / shared / "stages.csv")


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
        stored = store.read_json(d / "run_config.json")
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
        stored = store.read_json(d / "run_config.json")["experiment_cfg"]
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
    if spec.backend not in EXACT:
        return None
    from emulation.scheduler import POLICIES
    cls = POLICIES.get(spec.policy)
    return cls.resolve_realloc(spec.experiment_cfg["realloc"]) if cls is not None else None


def recorded_realloc(run_dir: Path) -> str | None:
    """The reallocation mode a run directory's run.json records (None if unreadable)."""
    try:
        return store.read_json(run_dir / "run.json").get("realloc")
    except (OSError, ValueError, AttributeError):
        return None


def relabel(spec: RunSpec, out_root: Path) -> None:
    """Write ``spec``'s config (its labels and run lists) and config hash into the
    run directory that holds the same run under other labels: run.json's (and its twins')
    ``config_hash``, then run_config.json, each replaced whole. The records are kept."""
    d = store.unpack(out_root / spec.experiment / spec.name)
    for rj in (d / "run.json", *(d / t / "run.json" for t in TWIN_DIRS)):
        if rj.exists():  # unpacked above: a loose directory
            run = {**json.loads(rj.read_text()), "config_hash": spec.config_hash}
            text = run_json_text(run)
            write_atomic(rj, lambda tmp: tmp.write_text(text))
    write_atomic(d / "run_config.json", lambda tmp: tmp.write_text(run_config_text(spec)))


def stale_runs(specs: list[RunSpec], out_root: Path) -> list[str]:
    """Run directories under ``out_root`` (``<experiment>/<run>/run_config.json``) that no
    spec of this invocation names: kept, and read by the analysis with the others."""
    names = {(s.experiment, s.name) for s in specs}
    return [f"{r.parent.name}/{r.name}" for r in committed_runs(out_root)
            if (r.parent.name, r.name) not in names]


def backend_of(run_dir: Path) -> str | None:
    """The backend a run directory's run_config.json names (None if unreadable)."""
    try:
        return store.read_json(run_dir / "run_config.json").get("backend")
    except (OSError, ValueError):
        return None


def run_policies(run_dir: Path) -> set[str]:
    """The policies a run directory's run_config.json and run.json name (one, or none if
    neither reads or names one; two only if the files disagree)."""
    out = set()
    for name in ("run_config.json", "run.json"):
        try:
            policy = store.read_json(run_dir / name).get("policy")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(policy, str):
            out.add(policy)
    return out


def recorded_policies(results: Path) -> set[str]:
    """The policies the run directories of a results tree name (``<experiment>/<run>/``
    with run_config.json or run.json, the files the analysis reads; not ``.``-prefixed)."""
    runs = {*store.run_dirs(results, marker="run_config.json"), *store.run_dirs(results)}
    return set().union(*(run_policies(d) for d in runs))


def pack_written(out: Path, experiments: set[str], *, written: set[str]) -> list[tuple[str, int]]:
    """Pack the loose runs (``emulation.store.pack``) of each experiment of ``experiments``
    into which this invocation wrote a run (``written``) or that is packed already (runs
    an interrupted invocation left loose); an experiment whose records are all loose and
    untouched keeps them so. Returns (experiment, runs packed) for those packed, in name
    order."""
    done = []
    for exp in sorted(experiments):
        d = out / exp
        if store.loose_runs(d) and (exp in written or (d / store.RUNS_FILE).is_file()):
            done.append((exp, store.pack(d)))
    return done
