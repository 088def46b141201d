"""The summary's section on fluid experiments whose trials a cluster with GPUs placed
during the run (run.json has ``gpu_busy_share``; packet-level runs have the paired
comparison): per experiment and placement, the reference's avg
SCT over each baseline's on the same trace (the mean over sync patterns and seeds of the
per-run ratio, and the half-width of its 95% t-interval), the reference's avg SCT, and what the cluster did in the reference's runs
(mean wait of a trial for GPUs, share of trials spanning several hosts, GPU-busy share),
and the tuning jobs' completion: the reference's mean JCT over Sincronia's on the same
trace, and its mean normalised JCT (JCT / the same job alone on the empty cluster).
``tables/cluster_placement.csv`` holds the rows."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from analysis.load import write_table
from analysis.metrics import mean_ci95
from analysis.text import cell

BASELINES = ("beamer-sbssi", "sincronia", "fair", "fifo_lm", "varys")
PLACEMENT = "param:cluster.placement"


def _placement(run: pd.Series) -> str:
    """The placement a run used: its swept value, else its run.json's cluster."""
    swept = run.get(PLACEMENT)
    if isinstance(swept, str):
        return swept
    return json.loads((Path(run["run_dir"]) / "run.json").read_text())["cluster"]["placement"]


def cluster_table(runs: pd.DataFrame, reference: str) -> pd.DataFrame:
    """One row per (experiment, placement) of the runs a cluster placed (see the module)."""
    if "gpu_busy_share" not in runs:
        return pd.DataFrame()
    fluid = runs["backend"] == "fluid" if "backend" in runs else True
    placed = runs[runs["gpu_busy_share"].notna() & fluid].copy()  # packet level: paired
    placed[PLACEMENT] = [_placement(r) for _, r in placed.iterrows()]
    rows = []
    for (exp, placement), g in placed.groupby(["experiment", PLACEMENT], sort=True):
        wide = g.pivot_table(index=["scenario", "workload_seed"], columns="policy",
                             values="avg_sct_s")
        if reference not in wide:
            continue
        ref = g[g["policy"] == reference]
        row = {"experiment": exp, "placement": placement, "reference": reference,
               "runs": len(wide), f"{reference}_avg_sct_s": ref["avg_sct_s"].mean(),
               "trial_wait_mean_s": ref["trial_wait_mean_s"].mean(),
               "multi_host_trial_share": ref["multi_host_trial_share"].mean(),
               "gpu_busy_share": ref["gpu_busy_share"].mean()}
        for b in BASELINES:
            if b in wide and b != reference:
                row[f"/ {b}"], row[f"/ {b} ci95"] = mean_ci95(
                    (wide[reference] / wide[b]).dropna().to_numpy())
        if "avg_jct_s" in g:
            jct = g.pivot_table(index=["scenario", "workload_seed"], columns="policy",
                                values="avg_jct_s")
            if "sincronia" in jct and reference != "sincronia":
                row["jct / sincronia"], row["jct / sincronia ci95"] = mean_ci95(
                    (jct[reference] / jct["sincronia"]).dropna().to_numpy())
            row["normalised_jct"] = ref["avg_normalised_jct"].mean()
        rows.append(row)
    return pd.DataFrame(rows)


def cluster_section(runs: pd.DataFrame, tables: Path, reference: str) -> list[str]:
    """The summary's lines (empty without such runs)."""
    t = cluster_table(runs, reference)
    if t.empty:
        return []
    write_table(t, tables / "cluster_placement.csv")
    ratios = [c for c in t.columns if c.startswith("/ ") and not c.endswith(" ci95")]
    lines = ["", "## A cluster with GPUs", "",
             "Trials placed during the run on servers with GPUs. Per experiment and "
             f"placement, over its other scenarios and its seeds: `{reference}`'s avg SCT / "
             "each baseline's on the same trace (mean of the per-run ratios ± the "
             "half-width of its 95% t-interval, every run taken as one sample; < 1: "
             f"`{reference}` faster), "
             f"`{reference}`'s avg SCT (SCT "
             "includes the trials' waits for GPUs), and in its runs the mean wait of a trial "
             "for GPUs, the share of trials that span several servers (the only ones that "
             "use the network) and the GPU-busy share; last, its mean tuning-job completion "
             "time (JCT) over Sincronia's on the same trace, and its mean JCT over the same "
             "job's alone on the empty cluster. Rows: `tables/cluster_placement.csv`.",
             "", "| experiment | placement | runs | " + " | ".join(
                 f"{reference} {c}" for c in ratios)
             + f" | {reference} avg SCT (s) | trial wait (s) | multi-server trials | GPU-busy"
             f" | {reference} JCT / sincronia | {reference} JCT / alone |",
             "|" + "---|" * (len(ratios) + 9)]
    for _, r in t.iterrows():
        lines.append(f"| {r['experiment']} | {r['placement']} | {int(r['runs'])} | "
                     + " | ".join(f"{cell(r[c], '.3f')} ± {cell(r[c + ' ci95'], '.3f')}"
                                  for c in ratios)
                     + f" | {cell(r[f'{reference}_avg_sct_s'], '.1f')}"
                     f" | {cell(r['trial_wait_mean_s'], '.1f')}"
                     f" | {cell(r['multi_host_trial_share'], '.2f')}"
                     f" | {cell(r['gpu_busy_share'], '.2f')}"
                     f" | {cell(r.get('jct / sincronia'), '.3f')}"
                     f" ± {cell(r.get('jct / sincronia ci95'), '.3f')}"
                     f" | {cell(r.get('normalised_jct'), '.2f')} |")
    return lines
