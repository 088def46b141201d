"""Run records shared by both backends: ``flows.csv``, ``coflows.csv``, ``stages.csv``, ``run.json``.

Columns (TRACE seconds and bytes in both backends; every time is measured from the run's
t = 0; the Mininet backend appends its emulated values as ``*_emulated_s`` /
``size_emulated_bytes`` columns):

- ``stages.csv``: stage_id, app_id, weight, num_jobs, start_s, end_s, sct_s
- ``coflows.csv``: coflow_id, stage_id, job_id, app_id, iteration, index, release_s,
  end_s, cct_s, size_bytes, num_flows
- ``flows.csv``: flow_id, coflow_id, src, dst, size_bytes, release_s, start_s, end_s
- ``trials.csv`` (runs whose trials a cluster placed): job_id, app_id, stage_id, gpus,
  hosts (``host:gpus`` pairs joined by ``;``), queued_s (its stage started: it asked for
  GPUs), start_s (placed), end_s. A stage's SCT counts from the stage's start, so it
  includes its trials' waits for GPUs.
- ``apps.csv`` (runs whose trials a cluster placed): app_id, algorithm, arrival_s, jct_s
  (its last stage's end - its arrival), jct_alone_s (the same tuning job alone on the
  empty cluster, same policy), normalised_jct (jct_s / jct_alone_s), stages and
  stages_alone (the stages each ran: ASHA's decisions follow each run); run.json has the
  means ``avg_jct_s`` and ``avg_normalised_jct``.
- ``decisions.csv`` (runs with ASHA decided during the run): app_id, trial_id, rung,
  time_s, score (lower is better), goes_on (the trial trains its next rung).
- ``run.json``: policy, backend, seed, trace_sha256, num_priority_classes, avg_sct_s,
  p95_sct_s, lower_bound_avg_sct_s, avg_sct_over_lb, wall_s, versions, git_sha, plus
  backend facts (link rates, scale factors, ...).

A run directory of the runner may hold no records of its own: its run.json then names, in
``same_run_as`` (``SAME_RUN_AS``), the directory (``<experiment>/<run name>``, relative to
the results directory) whose records it shares, because its config gives the same records
(another experiment's scenario that is the same configuration). Its run.json carries that
run's headline numbers and its own identity (experiment, run name, params).

In memory the state hands its records over as ``Records`` (rows, and the flows as
``FlowColumns``: columns whose strings are built on first access). ``run_json_text``
is the one serialiser of run.json, for the backends and for the runner's rewrites.

``flows.csv`` (706,397 rows on the FB2010 trace) is written by ``write_columns_csv``, which
gives the bytes pandas' ``to_csv`` gives (numbers formatted by the same numpy conversion,
each distinct value once; quoting by the standard ``csv`` module) in about a quarter of
its time. ``write_records(..., write_flows=False)`` leaves flows.csv out.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import platform
import subprocess
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

STAGE_COLUMNS = ["stage_id", "app_id", "weight", "num_jobs", "start_s", "end_s", "sct_s"]
SAME_RUN_AS = "same_run_as"  # run.json key of a run directory that shares another's records
COFLOW_COLUMNS = ["coflow_id", "stage_id", "job_id", "app_id", "iteration", "index",
                  "release_s", "end_s", "cct_s", "size_bytes", "num_flows"]
FLOW_COLUMNS = ["flow_id", "coflow_id", "src", "dst", "size_bytes", "release_s", "start_s",
                "end_s"]
APP_COLUMNS = ["app_id", "algorithm", "arrival_s", "jct_s", "jct_alone_s", "normalised_jct",
               "stages", "stages_alone"]
DECISION_COLUMNS = ["app_id", "trial_id", "rung", "time_s", "score", "goes_on"]
TRIAL_COLUMNS = ["job_id", "app_id", "stage_id", "gpus", "hosts", "queued_s", "start_s",
                 "end_s"]


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes (the trace's identity in run.json)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def git_sha(repo: Path | None = None) -> str | None:
    """The checkout's commit (with ``-dirty`` when tracked files outside ``results/``
    have changes), or None."""
    repo = repo or Path(__file__).resolve().parent.parent
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True,
                             text=True, timeout=5).stdout.strip()
        # results/ is excluded: rewriting the reference results must not mark the code dirty
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                ".", ":(exclude)results"],
                               cwd=repo, capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return (sha + ("-dirty" if dirty else "")) or None


def versions() -> dict[str, str]:
    """Versions of Python and the numeric packages that shape results."""
    import scipy
    return {"python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__, "pandas": pd.__version__}


def summary_stats(sct_s: np.ndarray) -> dict[str, float]:
    """Mean and tail of the stage completion times."""
    sct = np.asarray(sct_s, dtype=float)
    if len(sct) == 0 or np.isnan(sct).any():
        raise ValueError("some stages did not complete")
    return {"avg_sct_s": float(sct.mean()), "p50_sct_s": float(np.percentile(sct, 50)),
            "p95_sct_s": float(np.percentile(sct, 95)), "p99_sct_s": float(np.percentile(sct, 99))}


def cluster_facts(trials: list[dict], *, cluster: Mapping[str, Any], num_hosts: int,
                  makespan_s: float) -> dict[str, Any]:
    """run.json's facts of a run whose trials a cluster placed: the cluster, the GPU-busy
    share (GPU-seconds held by trials / the cluster's GPU-seconds from t = 0 to the run's
    end; None on an unlimited cluster), the trials' waits for GPUs (mean, max), and the
    share of trials that span several hosts (the only ones that use the network)."""
    gpus = np.array([t["gpus"] for t in trials], dtype=float)
    held = np.array([t["end_s"] - t["start_s"] for t in trials])
    wait = np.array([t["start_s"] - t["queued_s"] for t in trials])
    spans = np.array([t["hosts"].count(";") + 1 for t in trials])
    total = cluster["gpus_per_host"] * num_hosts * makespan_s
    return {"cluster": dict(cluster),
            "gpu_busy_share": float((gpus * held).sum() / total) if total > 0 else None,
            "trial_wait_mean_s": float(wait.mean()) if len(wait) else 0.0,
            "trial_wait_max_s": float(wait.max()) if len(wait) else 0.0,
            "multi_host_trial_share": float((spans > 1).mean()) if len(spans) else 0.0,
            "num_trials": len(trials)}


def write_records(outdir: str | Path, *, stages: list[dict], coflows: list[dict],
                  flows: Mapping[str, Any], run: dict[str, Any],
                  extra_columns: Mapping[str, list[str]] | None = None,
                  write_flows: bool = True,
                  trials: list[dict] | None = None,
                  decisions: list[dict] | None = None,
                  apps: list[dict] | None = None) -> dict[str, Any]:
    """Write the four record files into ``outdir`` (created); returns the run.json dict.
    ``extra_columns`` ({"stages"|"coflows"|"flows": [names]}) appends backend-specific
    columns after the shared ones (the Mininet backend's ``*_emulated_s``).
    ``write_flows=False``: no flows.csv (the per-flow rows; the analysis reads only
    stages.csv, coflows.csv and run.json). ``trials``: the rows of ``trials.csv``
    (``TRIAL_COLUMNS``) of a run whose trials a cluster placed; none: no file.
    ``decisions``: ASHA's decisions during the run (``decisions.csv``); ``apps``: the
    tuning jobs' completion times (``apps.csv``)."""
    extra = dict(extra_columns or {})
    unknown = set(extra) - {"stages", "coflows", "flows"}
    if unknown:
        raise ValueError(f"extra_columns: unknown record file(s) {sorted(unknown)}")
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(stages, columns=STAGE_COLUMNS + extra.get("stages", [])).to_csv(
        out / "stages.csv", index=False)
    pd.DataFrame(coflows, columns=COFLOW_COLUMNS + extra.get("coflows", [])).to_csv(
        out / "coflows.csv", index=False)
    if trials:
        pd.DataFrame(trials, columns=TRIAL_COLUMNS).to_csv(out / "trials.csv", index=False)
    if apps:
        pd.DataFrame(apps, columns=APP_COLUMNS).to_csv(out / "apps.csv", index=False)
    if decisions:
        pd.DataFrame(decisions, columns=DECISION_COLUMNS).to_csv(out / "decisions.csv",
                                                                 index=False)
    if write_flows:
        names = FLOW_COLUMNS + extra.get("flows", [])
        write_columns_csv(out / "flows.csv", columns={k: flows[k] for k in names})
    write_run_json(out / "run.json", run)
    return run


# characters that make the csv module quote a field (delimiter, quote, line ends)
_CSV_SPECIAL = (",", '"', "\n", "\r")
_CSV_CHUNK_ROWS = 65536


def write_columns_csv(path: str | Path, *, columns: Mapping[str, Any]) -> None:
    """Write ``columns`` (name -> numpy array or list of str, equal lengths) as CSV with
    the bytes of ``pd.DataFrame(columns).to_csv(path, index=False)``.

    pandas formats an integer or float column with numpy's ``astype(str)`` (NaN as the
    empty string) and writes the rows through ``csv.writer``. Here each column's distinct
    values (by bit pattern: -0.0 and 0.0 stay apart) go through the same ``astype(str)``
    once, and the rows are joined with commas when no string field needs quoting (else
    ``csv.writer`` writes them, quoting as pandas does). Any other column (objects, None,
    booleans, datetimes) leaves the whole file to pandas."""
    names = list(columns)
    fields = [_csv_fields(columns[k]) for k in names]
    if len(names) < 2 or any(f is None for f in fields):
        pd.DataFrame(dict(columns)).to_csv(path, index=False)
        return
    cols = [c for c, _ in fields]
    lengths = {len(c) for c in cols}
    if len(lengths) != 1:
        raise ValueError(f"columns of unequal lengths {sorted(lengths)}")
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh, lineterminator=os.linesep)
        writer.writerow(names)
        if any(quote for _, quote in fields):
            writer.writerows(zip(*cols))
        else:
            n = lengths.pop()
            for a in range(0, n, _CSV_CHUNK_ROWS):  # in chunks: a bounded extra memory
                rows = zip(*(c[a:a + _CSV_CHUNK_ROWS] for c in cols))
                fh.write(os.linesep.join(map(",".join, rows)) + os.linesep)


def _csv_fields(col: Any) -> tuple[list[str], bool] | None:
    """(the column's fields as pandas writes them, whether one needs quoting), or None if
    the column is not an integer or float array nor a list of str."""
    if isinstance(col, np.ndarray):
        if col.ndim != 1 or col.dtype.kind not in "iuf":
            return None
        if col.dtype.kind != "f":
            uniq, inverse = np.unique(col, return_inverse=True)
            text = uniq.astype(str).tolist()
        else:
            bits = np.ascontiguousarray(col).view(f"u{col.dtype.itemsize}")
            ubits, inverse = np.unique(bits, return_inverse=True)
            uniq = ubits.view(col.dtype)
            text = uniq.astype(str).tolist()
            for i in np.flatnonzero(np.isnan(uniq)).tolist():
                text[i] = ""  # pandas' na_rep
        return list(map(text.__getitem__, inverse.ravel().tolist())), False
    if not isinstance(col, (list, tuple)):
        return None
    try:
        joined = "".join(col)  # a TypeError names a field that is not a str
    except TypeError:
        return None
    return list(col), any(ch in joined for ch in _CSV_SPECIAL)


def run_json_text(run: dict[str, Any]) -> str:
    """run.json's text: sorted keys, two-space indents, numpy numbers and arrays as JSON
    numbers and lists (every run.json is written through here)."""
    return json.dumps(run, indent=2, sort_keys=True, default=_json) + "\n"


def write_run_json(path: Path, run: dict[str, Any]) -> None:
    """Write ``run`` as run.json at ``path`` (``run_json_text``)."""
    Path(path).write_text(run_json_text(run))


def _json(o: Any) -> Any:
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, tuple):
        return list(o)
    raise TypeError(f"not JSON-serialisable: {type(o).__name__}")


class FlowColumns(Mapping):
    """The flow records as columns, in ``flows.csv`` order. Numeric columns are arrays;
    the string columns (ids, hosts) are built on first access, as the FB trace alone has
    706,397 flows and its strings cost more time and memory than simulating it."""

    ORDER = tuple(FLOW_COLUMNS)

    def __init__(self, *, strings: dict[str, Callable[[], list[str]]],
                 numbers: dict[str, np.ndarray]):
        if set(strings) | set(numbers) != set(self.ORDER) or set(strings) & set(numbers):
            raise ValueError(f"flow columns must be exactly {self.ORDER}")
        self._strings = strings
        self._cols: dict[str, Any] = dict(numbers)
        self.num_rows = len(numbers["size_bytes"])

    def __getitem__(self, key: str) -> Any:
        if key not in self._cols:
            if key not in self._strings:
                raise KeyError(key)
            self._cols[key] = self._strings[key]()
        return self._cols[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.ORDER)

    def __len__(self) -> int:
        return len(self.ORDER)

    def to_frame(self) -> pd.DataFrame:
        """The columns as a pandas DataFrame (``pd.DataFrame(self)`` would not expand a
        Mapping that is not a dict)."""
        return pd.DataFrame({k: self[k] for k in self.ORDER})


@dataclass
class Records:
    """Plain rows/arrays of what happened; ``emulation.records`` writes them as CSV."""

    stages: list[dict[str, Any]]
    coflows: list[dict[str, Any]]
    flows: FlowColumns
    events: list[tuple[float, str, str]]
    facts: dict[str, Any] = field(default_factory=dict)
    trials: list[dict[str, Any]] = field(default_factory=list)  # placed during the run
    decisions: list[dict[str, Any]] = field(default_factory=list)  # ASHA's, during the run
