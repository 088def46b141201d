"""Load run records (``run.json`` + ``stages.csv`` + ``coflows.csv``) from a results tree,
and write the analysis's tables.

Layout: ``RESULTS/<experiment>/<run name>/{run.json, stages.csv, coflows.csv, flows.csv}``.
Directories starting with ``.`` (unfinished runs) and ``traces/`` are ignored.

Scenarios (``key=value`` of the swept parameters, joined by ``,``) are ordered by their
values, numbers as numbers (``1e+10`` < ``2.5e+10`` < ``1e+11``): ``scenario_order``,
``sort_scenarios`` (the tables are; ``load_runs`` keeps the directories' order, in which
the records are read and summed, so that the numbers do not move with the order). ``write_table`` writes a
table; ``note_written`` records any other file the analysis writes (a figure's PNG, PDF
and CSV), and ``recording_files`` collects every file written inside a block, in the
same thread or task (the summary
names the tables, and ``remove_stale`` deletes what an earlier analysis wrote and this one
did not).

Each run row carries ``run`` (its directory relative to the results directory, e.g.
``pattern/sync_pattern=ring,policy=fair,seed=1``: what tables show), ``run_dir`` (the
path to read its records from, the shared run's for a run whose run.json names one in
``same_run_as``; never written to a table: ``write_table`` drops it) and ``same_run_as``
(that shared run, or "").
"""
from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import numpy as np
import pandas as pd

from emulation.backends import PACKET_LEVEL
from emulation.records import SAME_RUN_AS
from workloads.config import value_label
from emulation import store


def _parts(scenario: str) -> list[tuple[str, str]]:
    return [part.partition("=")[::2] for part in str(scenario).split(",")]


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def scenario_order(scenarios) -> list[str]:
    """The distinct scenario labels, ``NO_SWEEP`` first, then sorted part by part
    (``key=value``): by key, then by value, as a number where every label's value of that key is one (``1e+10`` <
    ``2.5e+10`` < ``1e+11``), else as text (``gpu_mix``: ``1+2+4+8`` < ``2+4+8`` < ``8``)."""
    uniq = list(dict.fromkeys(str(s) for s in scenarios))
    numeric: dict[str, bool] = {}
    for s in uniq:
        for k, v in _parts(s):
            numeric[k] = numeric.get(k, True) and _is_number(v)
    return sorted(uniq, key=lambda s: (s != NO_SWEEP, tuple(
        (k, float(v), "") if numeric[k] else (k, 0.0, v) for k, v in _parts(s))))


def sort_scenarios(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its rows ordered by experiment (as text) and, within one, by scenario
    (``scenario_order`` of that experiment's scenarios); other rows' order kept (stable);
    index reset."""
    if df.empty or "scenario" not in df:
        return df
    exps = df["experiment"] if "experiment" in df else pd.Series("", index=df.index)
    rank = {}
    for exp in set(exps):
        for i, scen in enumerate(scenario_order(df.loc[exps == exp, "scenario"])):
            rank[(exp, scen)] = i
    ranks = [rank[(e, str(s))] for e, s in zip(exps, df["scenario"])]
    return (df.assign(_exp=exps.to_numpy(), _scen=ranks).sort_values(["_exp", "_scen"], kind="stable")
            .drop(columns=["_exp", "_scen"]).reset_index(drop=True))


def run_dirs(results: Path) -> list[Path]:
    """Every finished run directory, loose or packed (``emulation.store``), sorted."""
    return store.run_dirs(results)


def _experiment_cfg(run_dir: Path) -> dict:
    """The run's ``[experiment]`` settings from its run_config.json (the runner writes it;
    empty without one)."""
    try:
        cfg = store.read_json(run_dir / "run_config.json")
    except (OSError, ValueError):
        return {}
    return cfg.get("experiment_cfg", {}) or {}


def seed_set_of(experiment_cfg: dict, seed) -> str:
    """The name of the ``seed_sets`` group of ``[experiment]`` that holds ``seed``, "" if
    none does."""
    for name, seeds in (experiment_cfg.get("seed_sets") or {}).items():
        if seed in seeds:
            return str(name)
    return ""


def seed_set_groups(df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """``df``'s rows by ``seed_set`` (``load_runs``' column, copied to stages), the sets
    in the order of their first row: [("", df)] when no run names one."""
    col = df["seed_set"].fillna("") if "seed_set" in df else pd.Series("", index=df.index)
    return [(name, df[col == name]) for name in dict.fromkeys(col)]


NO_SWEEP = "no sweep"


def _records_dir(results: Path, run_dir: Path, run: dict) -> Path:
    """Where ``run_dir``'s records are: its own directory, or the one its run.json names in
    ``same_run_as`` (a configuration another experiment ran too); FileNotFoundError naming
    both if that one holds no records."""
    shared = run.get(SAME_RUN_AS)
    if not shared:
        return run_dir
    src = results / shared
    if not store.has(src / "stages.csv"):
        raise FileNotFoundError(f"{run_dir.relative_to(results).as_posix()} shares the records "
                                f"of {shared}, which holds none (rerun the runner to make them)")
    return src


def load_runs(results: Path) -> pd.DataFrame:
    """One row per run: run.json's scalars plus ``scenario``: its swept parameters
    (``name=value,...``), "all" in an experiment without a sweep, ``NO_SWEEP`` for a run
    without one in an experiment whose other runs have one; ``figure`` and ``seed_set``
    (the ``[experiment] seed_sets`` group of its seed, "" if none) from its
    run_config.json."""
    results = Path(results)
    rows = []
    for d in run_dirs(results):
        run = store.read_json(d / "run.json")
        params = run.get("params", {})
        row = {k: v for k, v in run.items() if not isinstance(v, (dict, list))}
        row["experiment"] = run.get("experiment", d.parent.name)
        row["repetition"] = int(run.get("repetition", 0))  # packet-level runs may repeat
        row["scenario"] = ",".join(f"{k.split('.')[-1]}={value_label(v)}" for k, v in params.items()) or "all"
        for k, v in params.items():
            row[f"param:{k}"] = value_label(v)
        exp_cfg = _experiment_cfg(d)
        row["figure"] = str(exp_cfg.get("figure", "bars"))
        row["seed_set"] = seed_set_of(exp_cfg, run.get("workload_seed", run.get("seed")))
        row["run"] = d.relative_to(results).as_posix()
        row["run_dir"] = str(_records_dir(results, d, run))
        row[SAME_RUN_AS] = run.get(SAME_RUN_AS, "")
        rows.append(row)
    if not rows:
        raise FileNotFoundError(f"no run records (*/*/run.json) under {results}")
    df = pd.DataFrame(rows)
    # runs without swept parameters in an experiment whose other runs have them (e.g. made
    # before the experiment got its sweep) are their own scenario, not the whole experiment
    plain = df["scenario"] == "all"
    swept = set(df.loc[~plain, "experiment"])
    df.loc[plain & df["experiment"].isin(swept), "scenario"] = NO_SWEEP
    return df


# the folders of a results directory the analysis owns, and the suffixes of the files it
# writes there: a file of those suffixes in those folders that an analysis run did not
# write is stale (``remove_stale``); nothing else is ever deleted
OWNED = {"figures": (".png", ".pdf", ".csv"), "tables": (".csv",)}

# the lists of the ``recording_files`` blocks open in this context (thread or task), outer
# first: a context variable, so no state is shared between threads or left after a block
_RECORDERS: ContextVar[tuple[list[Path], ...]] = ContextVar("analysis_recorders", default=())


@contextmanager
def recording_files():
    """Inside the block, every path ``write_table`` or ``note_written`` records is appended
    to the list it yields."""
    written: list[Path] = []
    token = _RECORDERS.set((*_RECORDERS.get(), written))
    try:
        yield written
    finally:
        _RECORDERS.reset(token)


def note_written(path: Path) -> Path:
    """Record ``path`` as written by the analysis (for ``recording_files``)."""
    for written in _RECORDERS.get():
        written.append(Path(path))
    return Path(path)


def remove_stale(results: Path, written) -> list[Path]:
    """Delete the files of ``figures/`` and ``tables/`` under ``results`` (``OWNED``: their
    suffixes, directly in those folders, no subfolder) that are not in ``written``: what an
    earlier analysis wrote and this one no longer does (a CDF figure of an experiment no
    longer asked for, a line figure of an experiment no longer drawn as lines). Other
    files, subfolders and everything outside the two folders are left alone. Returns the
    deleted paths, sorted."""
    keep = {Path(p).resolve() for p in written}
    gone = []
    for folder, suffixes in OWNED.items():
        d = Path(results) / folder
        if not d.is_dir():
            continue
        for f in sorted(d.iterdir()):
            if f.suffix in suffixes and (f.is_file() or f.is_symlink()) \
                    and f.resolve() not in keep:
                f.unlink()
                gone.append(f)
    return gone


def write_table(df: pd.DataFrame, path: Path) -> Path:
    """Write a table as CSV without machine-specific paths: the ``run_dir`` column (where
    this process read the run) is dropped (tables name runs by ``run``, relative to the
    results directory); ValueError if any other cell still holds an absolute path."""
    df = df.drop(columns=[c for c in ("run_dir", "trace_path") if c in df.columns])
    for col in df.columns:
        if df[col].dtype == object or pd.api.types.is_string_dtype(df[col]):
            bad = df[col].map(lambda v: isinstance(v, str) and (v.startswith("/") or ":\\" in v))
            if bad.any():
                raise ValueError(f"{Path(path).name}: column {col!r} holds an absolute path "
                                 f"({df.loc[bad, col].iloc[0]!r})")
    df.to_csv(path, index=False)
    return note_written(path)


STAGE_TAGS = ("experiment", "scenario", "policy", "seed", "workload_seed", "repetition",
              "seed_set")


def _counted(paths, progress: Callable[[int], None] | None):
    """``paths`` one by one, calling ``progress(k)`` with the number done before each."""
    for k, p in enumerate(paths):
        if progress is not None:
            progress(k)
        yield p


def load_stages(runs: pd.DataFrame, *, progress: Callable[[int], None] | None = None
                ) -> pd.DataFrame:
    """All stages.csv rows, tagged with their run's ``STAGE_TAGS`` (None where ``runs``
    has no such column); the columns in the order of first appearance, each run's own
    columns before the tags. The tags are added once to the whole table (adding them run
    by run took 15 of 20 s on the committed results). ``progress(k)``: called before the
    k-th run is read."""
    parts = [store.read_table(Path(d) / "stages.csv")
             for d in _counted(runs["run_dir"], progress)]
    out = pd.concat(parts, ignore_index=True)
    lengths = [len(p) for p in parts]
    for k in STAGE_TAGS:
        col = runs[k].to_numpy() if k in runs else np.full(len(runs), None, dtype=object)
        out[k] = np.repeat(col, lengths)
    return out[list(dict.fromkeys(c for p in parts for c in (*p.columns, *STAGE_TAGS)))]


def load_jobs(runs: pd.DataFrame, *, progress: Callable[[int], None] | None = None
              ) -> pd.DataFrame:
    """Per job of every run (a *job* in the records, ``job_id``: one trial's work inside
    one stage, not a tuning job, which the records call an app): ``trial_time_s`` = the end
    of the job's last coflow minus its stage's start. Jobs without coflows are left out.
    A tuning job's (app's) completion is ``analysis.metrics.run_metrics``'
    ``avg_app_completion_s``. Rows by run (``runs``' order), then stage and job; computed
    once over all runs' records. ``progress(k)``: called before the k-th run is read."""
    cfs, sts = [], []
    for i, d in enumerate(_counted(runs["run_dir"], progress)):
        cf = store.read_table(Path(d) / "coflows.csv", columns=["stage_id", "job_id", "end_s"])
        if cf.empty:
            continue
        cfs.append(cf.assign(_run=i))
        sts.append(store.read_table(Path(d) / "stages.csv", columns=["stage_id", "start_s"])
                   .assign(_run=i))
    if not cfs:
        return pd.DataFrame()
    j = (pd.concat(cfs, ignore_index=True).groupby(["_run", "stage_id", "job_id"],
                                                   as_index=False)["end_s"].max()
         .merge(pd.concat(sts, ignore_index=True), on=["_run", "stage_id"]))
    j["trial_time_s"] = j["end_s"] - j["start_s"]
    for k in ("experiment", "scenario", "policy", "workload_seed"):
        col = runs[k].to_numpy() if k in runs else np.full(len(runs), None, dtype=object)
        j[k] = col[j["_run"].to_numpy()]
    return j.drop(columns="_run")[["stage_id", "job_id", "end_s", "start_s", "trial_time_s",
                                   "experiment", "scenario", "policy", "workload_seed"]]


def mininet_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The packet-level (Mininet) rows of ``runs`` (none if it has no backend column)."""
    if "backend" not in runs:
        return runs.iloc[0:0]
    return runs[runs["backend"].isin(PACKET_LEVEL)]


def twin_stage_pairs(run_dir: str | Path) -> pd.DataFrame | None:
    """Per stage of one Mininet run: ``stage_id``, its SCT (``sct_mininet_s``) and its
    fluid twin's (``sct_fluid_s``, from ``twin/stages.csv``), both from the ``sct_s``
    columns, in trace seconds in both backends' records. None if the run has no twin;
    ValueError if the two record different stages."""
    d = Path(run_dir)
    if not store.has(d / "twin" / "stages.csv"):
        return None
    emu = store.read_table(d / "stages.csv")[["stage_id", "sct_s"]]
    twin = store.read_table(d / "twin" / "stages.csv")[["stage_id", "sct_s"]]
    m = emu.merge(twin, on="stage_id", suffixes=("_mininet", "_fluid"))
    if len(m) != len(twin) or len(m) != len(emu):
        raise ValueError(f"{d}: emulated and twin stages differ ({len(emu)} vs {len(twin)})")
    return m.rename(columns={"sct_s_mininet": "sct_mininet_s", "sct_s_fluid": "sct_fluid_s"})


def load_twin_pairs(runs: pd.DataFrame) -> pd.DataFrame:
    """``twin_stage_pairs`` of every Mininet run that has a twin, with its policy and
    experiment."""
    parts = []
    for _, r in mininet_runs(runs).iterrows():
        m = twin_stage_pairs(r["run_dir"])
        if m is None:
            continue
        m["policy"] = r["policy"]
        m["experiment"] = r["experiment"]
        parts.append(m)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
