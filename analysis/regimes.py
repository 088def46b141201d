"""The tuner-regime family (``regime-*`` experiments): its tables, figure and criteria.

Each ``regime-<tuner>`` experiment runs one kind of tuner (random search, ASHA, SHA,
Hyperband, a mix of tenants) at several scenarios (arrival rate, ring or parameter
server) and seeds. For every run the reference's avg SCT, p99 SCT and avg tuning-job
(app) completion time are divided by another policy's on the same trace; a regime's value
is the mean of those per-run ratios over its scenarios and seeds (each scenario has the
same number of seeds, so this is also the mean of the per-scenario means).

Writes ``tables/regimes.csv`` (per regime and policy) and ``tables/regime_scenarios.csv``
(per scenario), the figure ``regime_ratios`` and the summary section with the
stated criteria for ``beamer`` and their verdicts.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis.load import write_table
from analysis.metrics import mean_ci95, run_metrics
from analysis.plots import (CUT_NOTE_LINEAR, _interval_note, _save, _styles, draw_intervals,
                            interval_ends, linear_axis_bottom)
from analysis.policies import Style, policy_order

PREFIX = "regime-"
BASELINE = "sincronia"
# stated criteria for beamer: per regime, the mean of per-run avg SCT ratios to Sincronia
CRITERIA = {"random": 0.85, "asha": 0.92, "mix": 0.92, "sha": 0.975, "hyperband": 0.975}
SCENARIO_SLACK = 0.01  # in no scenario more than 1% above Sincronia
P99_VS_FAIR = 1.5      # p99 SCT at most 1.5 x fair's (per regime)
CRITERION_POLICY = "beamer"
KEY = ["experiment", "scenario", "workload_seed"]
ORDER = ("random", "asha", "sha", "hyperband", "mix")  # table order; other regimes after


def per_run_ratios(stages: pd.DataFrame, reference: str) -> pd.DataFrame:
    """One row per (regime run, other policy): the reference's avg SCT, p99 SCT and avg
    tuning-job completion over the other policy's on the same trace."""
    pr = run_metrics(stages)
    rows = []
    metrics = {"avg_sct_s": "avg", "p99_sct_s": "p99", "avg_app_completion_s": "job"}
    wide = {m: pr.pivot_table(index=KEY, columns="policy", values=m) for m in metrics}
    if reference not in wide["avg_sct_s"]:
        return pd.DataFrame()
    for other in policy_order(pr["policy"]):
        if other == reference:
            continue
        d = pd.DataFrame({metrics[m]: w[reference] / w[other] for m, w in wide.items()})
        d["policy"] = other
        rows.append(d.reset_index())
    out = pd.concat(rows, ignore_index=True)
    out["regime"] = out["experiment"].str[len(PREFIX):]
    out = out.dropna(subset=["avg"])
    rank = out["regime"].map(lambda r: ORDER.index(r) if r in ORDER else len(ORDER))
    return out.assign(_r=rank).sort_values(["_r", "regime"], kind="stable").drop(columns="_r")


def regime_table(ratios: pd.DataFrame) -> pd.DataFrame:
    """Per regime and other policy: mean and 95% CI of the per-run ratios, runs."""
    rows = []
    for (reg, pol), g in ratios.groupby(["regime", "policy"], sort=False):
        m, h = mean_ci95(g["avg"].to_numpy())
        rows.append({"regime": reg, "policy": pol, "avg_ratio_mean": m, "avg_ratio_ci95": h,
                     "p99_ratio_mean": g["p99"].mean(), "job_ratio_mean": g["job"].mean(),
                     "worst_scenario_avg_ratio": g.groupby("scenario")["avg"].mean().max(),
                     "runs": len(g)})
    return pd.DataFrame(rows)


def regimes_figure(table: pd.DataFrame, reference: str, out: Path,
                   styles: dict[str, Style] | None = None) -> list[Path]:
    """Points per regime: the reference's avg SCT / each other policy's, mean over runs
    (the policy's marker and colour), with its 95% t-interval over runs; the black dashed
    line at 1 is parity. Points, not bars: a ratio's length from 0 means nothing, so the
    linear axis is scaled to the points and intervals (it starts at 0 only when an interval
    reaches below 0, which then ends at the axis in ``analysis.plots.CUT_MARKER``)."""
    regimes = list(dict.fromkeys(table["regime"]))
    pols = policy_order(table["policy"])
    st = _styles(pols, styles)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(regimes) + 3), 4.0))
    step = 0.8 / max(len(pols), 1)
    rows, xs = [], {}
    for i, p in enumerate(pols):
        row = table[table["policy"] == p].set_index("regime").reindex(regimes)
        xs[p] = np.arange(len(regimes)) + (i - (len(pols) - 1) / 2) * step
        err = row["avg_ratio_ci95"].where(row["runs"] >= 2)
        for r, m, e, n in zip(regimes, row["avg_ratio_mean"], err, row["runs"]):
            rows.append({"regime": r, "policy": p, "ratio_mean": m, "ci95": e, "runs": n,
                         "colour": st[p].colour})
    data = pd.DataFrame(rows)
    cut = np.zeros(0, dtype=bool)
    bottom = None
    if len(data):
        means, half = data["ratio_mean"].to_numpy(float), data["ci95"].to_numpy(float)
        bottom = linear_axis_bottom(means - half)
        low, high, cut = interval_ends(means, half, bottom)
        for p in pols:
            at = (data["policy"] == p).to_numpy()
            draw_intervals(ax, xs[p], means[at], low[at], high[at], cut[at],
                           colour=st[p].colour, capsize=2.5)
            ax.plot(xs[p], means[at], ls="none", marker=st[p].marker, color=st[p].colour,
                    markersize=6, label=f"/ {p}", zorder=4)
    for x in np.arange(len(regimes) - 1) + 0.5:  # regimes apart
        ax.axvline(x, color="0.85", lw=0.8, zorder=0)
    ax.axhline(1.0, color="black", lw=0.8, ls="--", zorder=1)
    ax.set_xticks(np.arange(len(regimes)), regimes)
    ax.set_xlim(-0.5, len(regimes) - 0.5)
    ax.set_xlabel("tuner regime")
    ax.set_ylabel(f"{reference} avg SCT / policy's")
    if bottom is not None:
        ax.set_ylim(bottom=bottom)
    ax.grid(axis="y", alpha=0.3, zorder=0)
    ax.legend(fontsize=8, ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(f"{reference} against each policy by tuner regime (< 1: {reference} faster; "
                 "black dashed: 1)\npoints: mean of per-run ratios; "
                 + _interval_note(data["runs"], "runs (scenarios x seeds)")
                 + (f"\n{CUT_NOTE_LINEAR}" if cut.any() else ""), fontsize=9)
    return _save(fig, out, "regime_ratios", data)


def _f(v, fmt=".3f") -> str:
    return "-" if v is None or pd.isna(v) else format(v, fmt)


def regime_section(runs: pd.DataFrame, stages: pd.DataFrame, tables: Path, figs: Path,
                   reference: str, styles: dict[str, Style] | None = None
                   ) -> tuple[list[str], list[Path]]:
    """Summary lines and figure paths of the regime family (empty without its runs)."""
    reg = stages[stages["experiment"].str.startswith(PREFIX)]
    if reg.empty:
        return [], []
    head = ["", "## Tuner regimes (`" + PREFIX + "*` experiments)", ""]
    ratios = per_run_ratios(reg, reference)
    if ratios.empty:
        return head + [f"No runs of `{reference}` in these experiments: no ratios."], []
    table = regime_table(ratios)
    write_table(table, tables / "regimes.csv")
    scen = ratios.groupby(["experiment", "scenario", "policy"], sort=False)[
        ["avg", "p99", "job"]].mean().reset_index()
    write_table(scen, tables / "regime_scenarios.csv")
    fig_paths = regimes_figure(table, reference, figs, styles)
    lb = runs[runs["experiment"].str.startswith(PREFIX) & (runs["policy"] == reference)] \
        .assign(regime=lambda d: d["experiment"].str[len(PREFIX):]) \
        .groupby("regime")["avg_sct_over_lb"].mean()
    others = policy_order(table["policy"])
    lines = head + [
        f"{reference}'s avg SCT / each other policy's on the same trace, mean over the "
        "regime's runs (scenarios x seeds; < 1 = "
        f"{reference} faster); p99 / fair: {reference}'s p99 SCT / fair's; tuning job: "
        f"{reference}'s average tuning-job completion time / {BASELINE}'s. Per scenario: "
        "`tables/regime_scenarios.csv`; with 95% CIs: `tables/regimes.csv` and the figure "
        "`regime_ratios`.", "",
        "| regime | runs | " + " | ".join(f"/ {p}" for p in others)
        + f" | p99 / fair | tuning job / {BASELINE} | {reference} /LB |",
        "|---|---|" + "---|" * (len(others) + 3)]
    t = table.set_index(["regime", "policy"])
    for r in dict.fromkeys(table["regime"]):
        cells = [_f(t.loc[(r, p), "avg_ratio_mean"]) if (r, p) in t.index else "-" for p in others]
        p99 = t.loc[(r, "fair"), "p99_ratio_mean"] if (r, "fair") in t.index else None
        job = t.loc[(r, BASELINE), "job_ratio_mean"] if (r, BASELINE) in t.index else None
        runs_n = int(t.loc[(r, others[0]), "runs"]) if (r, others[0]) in t.index else 0
        lines.append(f"| {r} | {runs_n} | " + " | ".join(cells)
                     + f" | {_f(p99, '.2f')} | {_f(job)} | {_f(lb.get(r), '.2f')} |")
    lines += ["", "Per scenario (" + f"{reference} / {BASELINE}, mean over seeds):", "",
              "| experiment | scenario | / " + BASELINE + " | / beamer-coflow | / beamer-sbssi | / fair |",
              "|---|---|---|---|---|---|"]
    s = scen.set_index(["experiment", "scenario", "policy"])["avg"]
    for (e, sc), _g in scen.groupby(["experiment", "scenario"], sort=False):
        lines.append(f"| {e} | {sc} | " + " | ".join(
            _f(s.get((e, sc, p))) for p in (BASELINE, "beamer-coflow", "beamer-sbssi", "fair"))
            + " |")
    if reference == CRITERION_POLICY:
        lines += criteria_lines(table, scen)
    return lines, fig_paths


def criteria_lines(table: pd.DataFrame, scen: pd.DataFrame) -> list[str]:
    """The stated criteria for ``beamer`` on the regime family and whether they hold."""
    t = table.set_index(["regime", "policy"])
    parts = []
    for r, bound in CRITERIA.items():
        if (r, BASELINE) in t.index:
            m = t.loc[(r, BASELINE), "avg_ratio_mean"]
            parts.append(f"{r} <= {bound:g} x {BASELINE}: {'met' if m <= bound else 'not met'} "
                         f"({m:.3f})")
    sc = scen[scen["policy"] == BASELINE]
    if len(sc):
        worst = sc.loc[sc["avg"].idxmax()]
        parts.append(f"no scenario more than {SCENARIO_SLACK:.0%} above {BASELINE}: "
                     f"{'met' if worst['avg'] <= 1 + SCENARIO_SLACK else 'not met'} (worst "
                     f"{worst['avg']:.3f}, {worst['experiment']} {worst['scenario']})")
    sb = table[table["policy"] == "beamer-sbssi"]
    if len(sb):
        w = sb.loc[sb["avg_ratio_mean"].idxmax()]
        parts.append("no worse than beamer-sbssi on average in every regime: "
                     f"{'met' if w['avg_ratio_mean'] <= 1 else 'not met'} (worst "
                     f"{w['avg_ratio_mean']:.3f}, {w['regime']})")
    fr = table[table["policy"] == "fair"]
    if len(fr):
        w = fr.loc[fr["p99_ratio_mean"].idxmax()]
        parts.append(f"p99 SCT <= {P99_VS_FAIR:g} x fair's in every regime: "
                     f"{'met' if w['p99_ratio_mean'] <= P99_VS_FAIR else 'not met'} (worst "
                     f"{w['p99_ratio_mean']:.2f}, {w['regime']})")
    if not parts:
        return []
    return ["", f"Criteria for `{CRITERION_POLICY}` (means of per-run ratios): "
            + "; ".join(parts) + "."]
