"""How many trial processes each host of a run carries at once: the load that the
synthetic cluster, which gives every worker a host and never checks what else runs there,
puts on a host.

A job (one trial's work inside one stage) is active on each host of its trace entry
(``jobs[].hosts``: its workers, and its parameter servers under ``ps``) from its stage's
start (``stages.csv``) to its last coflow's end (``coflows.csv``). Per run: the peak
number of active jobs' processes on one host at any instant (``peak_per_host``) and, per
host, the time-weighted mean of that number over the time the host carries at least one,
averaged over the hosts that ever do (``mean_per_busy_host``). Written for one policy's
runs (the reference's) of every fluid experiment whose runs name a JSON trace:
``tables/host_load.csv`` and the summary section. A run whose trials a cluster placed
(``trials.csv``) counts GPUs held instead, from each trial's start to its end on the hosts
it was given; its ``gpus_per_host`` bounds them.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from emulation.backends import PACKET_LEVEL
from analysis.load import write_table
from analysis.text import cell
from emulation import store


def job_hosts(trace_path: Path) -> dict[str, list[str]]:
    """job_id -> the hosts of that job, from a trace JSON file."""
    trace = json.loads(Path(trace_path).read_text())
    return {j["job_id"]: list(j["hosts"]) for a in trace["apps"] for s in a["stages"]
            for j in s["jobs"]}


def host_intervals(run_dir: Path, hosts: dict[str, list[str]]) -> pd.DataFrame:
    """One row per (job, host): ``host``, ``start_s`` (the job's stage start) and
    ``end_s`` (the job's last coflow end); jobs without coflows are left out."""
    cf = store.read_table(run_dir / "coflows.csv")
    st = store.read_table(run_dir / "stages.csv")[["stage_id", "start_s"]]
    jobs = cf.groupby(["stage_id", "job_id"], as_index=False)["end_s"].max().merge(st, on="stage_id")
    rows = [(h, r.start_s, r.end_s) for r in jobs.itertuples() for h in hosts[r.job_id]]
    return pd.DataFrame(rows, columns=["host", "start_s", "end_s"])


def trial_intervals(run_dir: Path) -> pd.DataFrame:
    """One row per (trial, host) of ``trials.csv``: ``host``, ``start_s``, ``end_s`` and
    ``weight``, the GPUs it holds there."""
    tr = store.read_table(run_dir / "trials.csv")
    rows = [(host, r.start_s, r.end_s, int(g)) for r in tr.itertuples()
            for host, g in (pair.split(":") for pair in str(r.hosts).split(";"))]
    return pd.DataFrame(rows, columns=["host", "start_s", "end_s", "weight"])


def host_load(intervals: pd.DataFrame) -> tuple[int, float]:
    """(peak processes on one host at once, mean over busy hosts of the time-weighted
    number while busy); each interval counts ``weight`` (GPUs) if it has that column, else
    one. An interval ending when another starts does not overlap it."""
    peak, means = 0, []
    for _, g in intervals.groupby("host"):
        t = np.concatenate([g["start_s"].to_numpy(), g["end_s"].to_numpy()])
        w = g["weight"].to_numpy(dtype=float) if "weight" in g else np.ones(len(g))
        d = np.concatenate([w, -w])
        order = np.lexsort((d, t))  # at equal times ends (-1) before starts (+1)
        t, level = t[order], np.cumsum(d[order])
        peak = max(peak, int(level.max()))
        span = np.diff(t)
        busy = span[level[:-1] > 0].sum()
        if busy > 0:
            means.append(float((level[:-1] * span).sum() / busy))
    return peak, float(np.mean(means)) if means else 0.0


def host_load_table(runs: pd.DataFrame, results: Path, reference: str) -> pd.DataFrame:
    """Per fluid run of ``reference`` whose trace is a JSON file under ``results``: its
    experiment, scenario, seed, ``peak_per_host`` and ``mean_per_busy_host``."""
    simulated = ~runs["backend"].isin(PACKET_LEVEL) if "backend" in runs else True
    keep = (runs["policy"] == reference) & simulated
    rows, cache = [], {}
    for _, r in runs[keep].iterrows():
        tp = r.get("trace_path")
        if not isinstance(tp, str) or not tp.endswith(".json"):
            continue
        path = (Path(results) / tp).resolve()
        if not path.exists():
            continue
        run_dir = Path(r["run_dir"])
        if store.has(run_dir / "trials.csv"):
            peak, mean = host_load(trial_intervals(run_dir))
        else:
            if path not in cache:
                cache[path] = job_hosts(path)
            peak, mean = host_load(host_intervals(run_dir, cache[path]))
        rows.append({"experiment": r["experiment"], "scenario": r["scenario"],
                     "seed_set": r.get("seed_set", ""), "workload_seed": r["workload_seed"],
                     "policy": reference, "peak_per_host": peak, "mean_per_busy_host": mean})
    return pd.DataFrame(rows)


def host_load_section(runs: pd.DataFrame, results: Path, tables: Path,
                      reference: str) -> list[str]:
    """The summary's section: per experiment the largest peak and the mean of the runs'
    busy-host means (empty without such runs)."""
    t = host_load_table(runs, results, reference)
    if t.empty:
        return []
    write_table(t, tables / "host_load.csv")
    per = t.groupby("experiment", sort=True).agg(
        runs=("peak_per_host", "size"), peak=("peak_per_host", "max"),
        mean=("mean_per_busy_host", "mean"))
    lines = ["", "## Trial processes per host", "",
             "Experiments whose trials a cluster with GPUs placed during the run: GPUs held "
             "on one host (at most its `gpus_per_host`), from `trials.csv`. "
             "The others run pinned traces, whose synthetic cluster gives every worker of a "
             "trial a host and never checks what else runs there. Per experiment, over the "
             "runs of "
             f"`{reference}`: the largest number of trial processes (workers, and parameter "
             "servers under `ps`) active on one host at once (a job active from its stage's "
             "start to its last coflow's end), and the mean over runs of the time-weighted "
             "number per host while the host is busy. Per run: `tables/host_load.csv`.", "",
             "| experiment | runs | peak on one host | mean per busy host |", "|---|---|---|---|"]
    for exp, r in per.iterrows():
        lines.append(f"| {exp} | {int(r['runs'])} | {int(r['peak'])} | {cell(r['mean'], '.1f')} |")
    return lines
