"""The verdict table: the published design's reconstruction (``beamer-sbssi``) and
``beamer`` against each baseline (and ``beamer`` against the reconstruction), per tuner
regime and for the congestion family, per seed set.

A cell is the mean of per-run ratios of the design's avg SCT to the baseline's on the same
trace (< 1: the design is faster): over a regime's runs (scenarios x seeds), or over the
congestion family's distinct scenarios (mean of per-seed ratios per scenario, a scenario
that shares another's runs counted once, ``analysis.criteria.shared_scenarios``).
Writes ``tables/verdict.csv`` and the summary section that prints it.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.criteria import CONGESTION_PREFIX, shared_scenarios
from analysis.load import seed_set_groups, write_table
from analysis.metrics import AVG_SCT_RATIO, policy_ratios, run_metrics
from analysis.regimes import AVG_MEAN, PREFIX, per_run_ratios, regime_table
from analysis.text import cell

DESIGNS = ("beamer-sbssi", "beamer")
BASELINES = ("sincronia", "varys", "varys-queues", "fair", "fifo_lm", "beamer-sbssi")


def verdict_table(runs: pd.DataFrame, stages: pd.DataFrame) -> pd.DataFrame:
    """One row per (seed set, family, design, baseline): ``ratio_mean`` (design's avg SCT /
    baseline's, mean of per-run ratios), ``worst`` (the largest scenario mean) and ``n``
    (runs of a regime, distinct scenarios of the congestion family)."""
    rows = []
    reg = stages[stages["experiment"].str.startswith(PREFIX)]
    cong = stages[stages["experiment"].str.startswith(CONGESTION_PREFIX)]
    same = shared_scenarios(runs)
    pols = set(stages["policy"])
    for design in (d for d in DESIGNS if d in pols):
        bases = [b for b in BASELINES if b in pols and b != design]
        for seed_set, sub in seed_set_groups(reg):
            ratios = per_run_ratios(sub, design)
            if ratios.empty:
                continue
            t = regime_table(ratios, design)
            for _, r in t[t["policy"].isin(bases)].iterrows():
                rows.append({"seed_set": seed_set, "family": r["regime"], "design": design,
                             "baseline": r["policy"], "ratio_mean": r[AVG_MEAN],
                             "worst": r[f"worst_scenario_{AVG_SCT_RATIO}"], "n": r["runs"]})
        for seed_set, sub in seed_set_groups(cong):
            r = policy_ratios(run_metrics(sub), policy=design, baselines=bases)
            r = r[[(e, s) not in same for e, s in zip(r["experiment"], r["scenario"])]]
            for b in bases:
                if b in r:
                    rows.append({"seed_set": seed_set, "family": "congestion",
                                 "design": design, "baseline": b, "ratio_mean": r[b].mean(),
                                 "worst": r[b].max(), "n": len(r)})
    return pd.DataFrame(rows)


def verdict_section(runs: pd.DataFrame, stages: pd.DataFrame, tables: Path) -> list[str]:
    """The summary's verdict section (empty without the regime or congestion runs of a
    design)."""
    t = verdict_table(runs, stages)
    if t.empty:
        return []
    write_table(t, tables / "verdict.csv")
    lines = ["", "## Pinned hosts (ablation): the published design and `beamer` against the baselines", "",
             "`beamer-sbssi` (the reconstruction of the published design: every stage ranked "
             "whole) and `beamer` (this artifact's ordering): avg SCT / each baseline's on the "
             "same trace, mean of per-run ratios per regime, mean over the distinct scenarios "
             "of the congestion family (< 1: the design is faster); `tables/verdict.csv`, "
             "with each cell's worst scenario.", ""]
    families = list(dict.fromkeys(t["family"]))
    bases = list(dict.fromkeys(t["baseline"]))
    lines += ["| seeds | design | baseline | " + " | ".join(families) + " |",
              "|---|---|---|" + "---|" * len(families)]
    v = t.set_index(["seed_set", "design", "baseline", "family"])["ratio_mean"]
    for seed_set in dict.fromkeys(t["seed_set"]):
        for design in dict.fromkeys(t["design"]):
            for b in (b for b in bases if b != design):
                lines.append(f"| {seed_set or '-'} | {design} | {b} | " + " | ".join(
                    cell(v.get((seed_set, design, b, f)), ".3f") for f in families) + " |")
    return lines
