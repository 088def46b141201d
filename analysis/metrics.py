"""Metrics over runs: per-policy SCT statistics and ratios to a reference policy with 95%
t-intervals over seeds (no interval from a single value).

Two averages of SCT, named apart everywhere: a run's ``avg_sct_s`` is the mean over its
stages, and ``avg_sct_s_mean`` (``normalised``) the mean of those over a scenario's runs;
``pooled_avg_sct_s`` (``sct_table``) is the mean over every stage of every run of the
scenario pooled, where a run with more stages weighs more. Scenarios come out ordered by
``analysis.load.scenario_order`` (numbers as numbers)."""
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


def normalised(runs: pd.DataFrame, metric: str = "avg_sct_s",
               reference: str = DEFAULT_REFERENCE) -> pd.DataFrame:
    """Per (experiment, scenario, policy): mean of metric / reference's metric over seeds, with CI.

    The ratio is taken per seed (same trace) and repetition index (packet-level runs
    repeat; fluid runs are repetition 0), then averaged. ``reduction_mean``: the mean over
    those runs of ``1 - reference / metric`` (the reference's reduction vs this policy;
    positive = the reference is faster), with its CI. ``seeds``: how many runs the mean is
    over; ``unit``: what those runs are (``seeds``, ``repetitions`` of one seed, or
    ``runs`` of several seeds and repetitions).
    """
    key = ["experiment", "scenario", "workload_seed"] + (["repetition"] if "repetition" in runs else [])
    ref = runs[runs["policy"] == reference].set_index(key)[metric].rename("ref")
    df = runs.join(ref, on=key)
    df["ratio"] = df[metric] / df["ref"]
    df["reduction"] = 1.0 - df["ref"] / df[metric]
    rows = []
    for (exp, scen, pol), g in df.groupby(["experiment", "scenario", "policy"], sort=False):
        m, h = mean_ci95(g["ratio"].dropna())
        red, red_h = mean_ci95(g["reduction"].dropna())
        raw, _ = mean_ci95(g[metric])
        reps = g["repetition"].nunique() if "repetition" in g else 1
        unit = ("seeds" if reps == 1 else "repetitions" if g["workload_seed"].nunique() == 1
                else "runs")
        rows.append({"experiment": exp, "scenario": scen, "policy": pol, "ratio_mean": m,
                     "ratio_ci95": h, "reduction_mean": red, "reduction_ci95": red_h,
                     f"{metric}_mean": raw, "seeds": len(g), "unit": unit})
    return pd.DataFrame(rows)


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
