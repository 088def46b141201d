"""Metrics over runs: per-policy SCT statistics and ratios to a reference policy with 95%
t-intervals over seeds (no interval from a single value).

Ratios between policies are the reference's metric / the other policy's (< 1: the
reference is faster), per run of the same trace, then averaged (``reference_ratios``,
``policy_ratios``); their columns say so (``ratio_column``: ``avg_sct_ratio_ref_over_policy``).

Two averages of SCT, named apart everywhere: a run's ``avg_sct_s`` is the mean over its
stages, and ``avg_sct_s_mean`` (``reference_ratios``) the mean of those over a scenario's
runs; ``pooled_avg_sct_s`` (``sct_table``) is the mean over every stage of every run of
the scenario pooled, where a run with more stages weighs more. Scenarios come out ordered
by ``analysis.load.scenario_order`` (numbers as numbers)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from analysis.load import sort_scenarios
from analysis.policies import DEFAULT_REFERENCE


def mean_ci95(x: np.ndarray) -> tuple[float, float]:
    """Mean and the half-width of its 95% t-interval; the half-width is NaN for fewer than
    two values (one sample has no interval) and the mean NaN for none."""
    x = np.asarray(x, dtype=float)
    if len(x) == 0:
        return float("nan"), float("nan")
    if len(x) < 2:
        return float(x.mean()), float("nan")
    half = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x))
    return float(x.mean()), float(half)


def ratio_column(metric: str) -> str:
    """Name of the column holding the reference's ``metric`` / a policy's:
    ``avg_sct_s`` -> ``avg_sct_ratio_ref_over_policy`` (< 1: the reference is faster)."""
    return f"{metric.removesuffix('_s')}_ratio_ref_over_policy"


AVG_SCT_RATIO = ratio_column("avg_sct_s")


def _paired(runs: pd.DataFrame, metric: str, reference: str) -> pd.DataFrame:
    """``runs`` with the reference's ``metric`` of the same trace beside each run (``ref``):
    same experiment, scenario, seed and repetition index (fluid runs: repetition 0)."""
    key = ["experiment", "scenario", "workload_seed"] + (["repetition"] if "repetition" in runs else [])
    ref = runs[runs["policy"] == reference].set_index(key)[metric].rename("ref")
    return runs.join(ref, on=key)


def _per_scenario(df: pd.DataFrame, metric: str, columns: list[str]) -> list[dict]:
    """Per (experiment, scenario, policy) of ``df``: mean and 95% t-interval half-width
    (``<column>_mean``, ``<column>_ci95``) of each per-run column, the mean of ``metric``,
    ``seeds`` (how many runs) and ``unit`` (what those runs are: ``seeds``,
    ``repetitions`` of one seed, or ``runs`` of several seeds and repetitions)."""
    rows = []
    for (exp, scen, pol), g in df.groupby(["experiment", "scenario", "policy"], sort=False):
        row = {"experiment": exp, "scenario": scen, "policy": pol}
        for c in columns:
            row[f"{c}_mean"], row[f"{c}_ci95"] = mean_ci95(g[c].dropna())
        reps = g["repetition"].nunique() if "repetition" in g else 1
        unit = ("seeds" if reps == 1 else "repetitions" if g["workload_seed"].nunique() == 1
                else "runs")
        rows.append({**row, f"{metric}_mean": mean_ci95(g[metric])[0], "seeds": len(g),
                     "unit": unit})
    return rows


def reference_ratios(runs: pd.DataFrame, metric: str = "avg_sct_s",
                     reference: str = DEFAULT_REFERENCE) -> pd.DataFrame:
    """Per (experiment, scenario, policy): the reference's metric / the policy's, taken per
    run against the reference's run of the same trace (seed and repetition index), then
    averaged: ``<ratio_column(metric)>_mean`` with its 95% t-interval half-width
    ``<ratio_column(metric)>_ci95`` (NaN from one run); < 1 means the reference is faster,
    and the reference's own row is 1. ``reference`` names it in every row;
    ``<metric>_mean``, ``seeds`` and ``unit`` as in ``_per_scenario``."""
    df = _paired(runs, metric, reference)
    col = ratio_column(metric)
    df[col] = df["ref"] / df[metric]
    out = pd.DataFrame(_per_scenario(df, metric, [col]))
    if not out.empty:
        out.insert(2, "reference", reference)
    return out


def sct_table(stages: pd.DataFrame) -> pd.DataFrame:
    """Per experiment, scenario and policy, every stage of every run pooled: mean
    (``pooled_avg_sct_s``), p50 / p95 / p99 SCT (``pooled_p*_sct_s``) and the number of
    stages. The pooled mean differs from the mean of the runs' avg SCTs where runs have
    different numbers of stages."""
    g = stages.groupby(["experiment", "scenario", "policy"])["sct_s"]
    return sort_scenarios(pd.DataFrame({
        "pooled_avg_sct_s": g.mean(), "pooled_p50_sct_s": g.quantile(0.5),
        "pooled_p95_sct_s": g.quantile(0.95), "pooled_p99_sct_s": g.quantile(0.99),
        "stages": g.size(),
    }).reset_index())


def run_metrics(stages: pd.DataFrame) -> pd.DataFrame:
    """Per run (experiment, scenario, policy, seed): avg, p99 and max SCT and the average
    app (tuning job) completion time = an app's last stage end minus its first stage start
    (its arrival: an app's first stages have no dependencies)."""
    key = ["experiment", "scenario", "policy", "workload_seed"]
    g = stages.groupby(key)["sct_s"]
    out = pd.DataFrame({"avg_sct_s": g.mean(), "p99_sct_s": g.quantile(0.99),
                        "max_sct_s": g.max()})
    apps = stages.groupby(key + ["app_id"]).agg(first=("start_s", "min"), last=("end_s", "max"))
    out["avg_app_completion_s"] = (apps["last"] - apps["first"]).groupby(key).mean()
    return sort_scenarios(out.reset_index())


def policy_ratios(per_run: pd.DataFrame, *, policy: str, baselines: list[str],
                  metric: str = "avg_sct_s") -> pd.DataFrame:
    """Per (experiment, scenario): mean over seeds of ``policy``'s metric / each baseline's
    (ratio per seed, same trace), as columns ``<baseline>``; < 1 means ``policy`` is faster."""
    key = ["experiment", "scenario", "workload_seed"]
    wide = per_run.pivot_table(index=key, columns="policy", values=metric)
    rows = {}
    for b in baselines:
        if policy in wide and b in wide:
            rows[b] = (wide[policy] / wide[b]).groupby(level=[0, 1], sort=False).mean()
    out = pd.DataFrame(rows)
    out["seeds"] = wide[policy].groupby(level=[0, 1], sort=False).size() if policy in wide else 0
    return sort_scenarios(out.reset_index())
