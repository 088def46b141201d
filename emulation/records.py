"""Run records shared by both backends: ``flows.csv``, ``coflows.csv``, ``stages.csv``, ``run.json``.

Columns (TRACE seconds and bytes in both backends; every time is measured from the run's
t = 0; the Mininet backend appends its emulated values as ``*_emulated_s`` /
``size_emulated_bytes`` columns):

- ``stages.csv``: stage_id, app_id, weight, num_jobs, start_s, end_s, sct_s
- ``coflows.csv``: coflow_id, stage_id, job_id, app_id, iteration, index, release_s,
  end_s, cct_s, size_bytes, num_flows
- ``flows.csv``: flow_id, coflow_id, src, dst, size_bytes, release_s, start_s, end_s
- ``run.json``: policy, backend, seed, trace_sha256, num_priority_classes, avg_sct_s,
  p95_sct_s, lower_bound_avg_sct_s, avg_sct_over_lb, wall_s, versions, git_sha, plus
  backend facts (link rates, scale factors, ...).
"""
from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

STAGE_COLUMNS = ["stage_id", "app_id", "weight", "num_jobs", "start_s", "end_s", "sct_s"]
COFLOW_COLUMNS = ["coflow_id", "stage_id", "job_id", "app_id", "iteration", "index",
                  "release_s", "end_s", "cct_s", "size_bytes", "num_flows"]
FLOW_COLUMNS = ["flow_id", "coflow_id", "src", "dst", "size_bytes", "release_s", "start_s",
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


def write_records(outdir: str | Path, *, stages: list[dict], coflows: list[dict],
                  flows: Mapping[str, Any], run: dict[str, Any],
                  extra_columns: Mapping[str, list[str]] | None = None) -> dict[str, Any]:
    """Write the four record files into ``outdir`` (created); returns the run.json dict.
    ``extra_columns`` ({"stages"|"coflows"|"flows": [names]}) appends backend-specific
    columns after the shared ones (the Mininet backend's ``*_emulated_s``)."""
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
    pd.DataFrame({k: flows[k] for k in FLOW_COLUMNS + extra.get("flows", [])}).to_csv(
        out / "flows.csv", index=False)
    (out / "run.json").write_text(json.dumps(run, indent=2, sort_keys=True, default=_json) + "\n")
    return run


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
