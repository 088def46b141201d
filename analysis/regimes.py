"""The tuner-regime family (``regime-*`` experiments): its tables, figure and criteria.

Each ``regime-<tuner>`` experiment runs one kind of tuner (random search, ASHA, SHA,
Hyperband, a mix of tenants) at several scenarios (arrival rate, ring or parameter
server) and seeds. For every run the reference's avg SCT, p99 SCT and avg tuning-job
(app) completion time are divided by another policy's on the same trace (< 1: the
reference is faster); a regime's value is the mean of those per-run ratios over its
scenarios and seeds (each scenario has the same number of seeds, so this is also the mean
of the per-scenario means).

Writes ``tables/regimes.csv`` (per regime and policy) and ``tables/regime_scenarios.csv``
(per scenario), whose ratio columns say their direction (``RATIOS``:
``avg_sct_ratio_ref_over_policy`` ...), the figure ``regime_ratios`` (on the ratio axis
of ``analysis.plots``) and the summary section with the stated criteria for ``beamer``
and their verdicts.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis.load import seed_set_groups, write_table
from analysis.metrics import AVG_SCT_RATIO, mean_ci95, ratio_column, run_metrics
from analysis.plots import (CUT_NOTE, _interval_note, _save, _styles, draw_intervals,
                            interval_ends, ratio_axis, ratio_label)
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
# the per-run ratios (reference / policy) as ``per_run_ratios`` names them -> as the
# tables name them
RATIOS = {"avg": AVG_SCT_RATIO, "p99": ratio_column("p99_sct_s"),
          "job": ratio_column("avg_app_completion_s")}
AVG_MEAN, AVG_CI = f"{AVG_SCT_RATIO}_mean", f"{AVG_SCT_RATIO}_ci95"
P99_MEAN, JOB_MEAN = f"{RATIOS['p99']}_mean", f"{RATIOS['job']}_mean"


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


def regime_table(ratios: pd.DataFrame, reference: str = CRITERION_POLICY) -> pd.DataFrame:
    """Per regime and other policy, of the reference's metric / the policy's per run (< 1:
    the reference is faster): the mean avg SCT ratio with its 95% t-interval half-width,
    the mean p99 SCT and tuning-job completion ratios, the worst scenario's mean avg SCT
    ratio, and the number of runs."""
    rows = []
    for (reg, pol), g in ratios.groupby(["regime", "policy"], sort=False):
        m, h = mean_ci95(g["avg"].to_numpy())
        rows.append({"regime": reg, "reference": reference, "policy": pol, AVG_MEAN: m,
                     AVG_CI: h, P99_MEAN: g["p99"].mean(), JOB_MEAN: g["job"].mean(),
                     f"worst_scenario_{AVG_SCT_RATIO}":
                         g.groupby("scenario")["avg"].mean().max(),
                     "runs": len(g)})
    return pd.DataFrame(rows)


def regimes_figure(table: pd.DataFrame, reference: str, out: Path,
                   styles: dict[str, Style] | None = None, *, seed_set: str = "") -> list[Path]:
    """Points per regime: the reference's avg SCT / each other policy's, mean over runs
    (the policy's marker and colour), with its 95% t-interval over runs, on the ratio axis
    (``analysis.plots.ratio_axis``: log, centred on 1, the black dashed line at 1 parity);
    an interval reaching below the axis ends there in ``analysis.plots.CUT_MARKER``."""
    regimes = list(dict.fromkeys(table["regime"]))
    pols = policy_order(table["policy"])
    st = _styles(pols, styles)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(regimes) + 3), 4.0))
    step = 0.8 / max(len(pols), 1)
    rows, xs = [], {}
    for i, p in enumerate(pols):
        row = table[table["policy"] == p].set_index("regime").reindex(regimes)
        xs[p] = np.arange(len(regimes)) + (i - (len(pols) - 1) / 2) * step
        err = row[AVG_CI].where(row["runs"] >= 2)
        for r, m, e, n in zip(regimes, row[AVG_MEAN], err, row["runs"]):
            rows.append({"regime": r, "reference": reference, "policy": p, AVG_MEAN: m,
                         AVG_CI: e, "runs": n, "colour": st[p].colour})
    data = pd.DataFrame(rows)
    cut = np.zeros(0, dtype=bool)
    if len(data):
        means, half = data[AVG_MEAN].to_numpy(float), data[AVG_CI].to_numpy(float)
        bottom = ratio_axis(ax, means, means - half, means + half)
        low, high, cut = interval_ends(means, half, bottom)
        for p in pols:
            at = (data["policy"] == p).to_numpy()
            draw_intervals(ax, xs[p], means[at], low[at], high[at], cut[at],
                           colour=st[p].colour, capsize=2.5)
            ax.plot(xs[p], means[at], ls="none", marker=st[p].marker, color=st[p].colour,
                    markersize=6, label=f"/ {p}", zorder=4)
    for x in np.arange(len(regimes) - 1) + 0.5:  # regimes apart
        ax.axvline(x, color="0.85", lw=0.8, zorder=0)
    ax.set_xticks(np.arange(len(regimes)), regimes)
    ax.set_xlim(-0.5, len(regimes) - 0.5)
    ax.set_xlabel("tuner regime")
    ax.set_ylabel(ratio_label(reference))
    ax.legend(fontsize=8, ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(f"{reference} against each policy by tuner regime, avg SCT"
                 + (f" ({seed_set} seeds)" if seed_set else "") + "\n"
                 "points: mean of per-run ratios; "
                 + _interval_note(data["runs"], "runs (scenarios x seeds)")
                 + (f"\n{CUT_NOTE}" if cut.any() else ""), fontsize=9)
    return _save(fig, out, _figure_name(seed_set), data)


def _f(v, fmt=".3f") -> str:
    return "-" if v is None or pd.isna(v) else format(v, fmt)


def regime_section(runs: pd.DataFrame, stages: pd.DataFrame, tables: Path, figs: Path,
                   reference: str, styles: dict[str, Style] | None = None
                   ) -> tuple[list[str], list[Path]]:
    """Summary lines and figure paths of the regime family (empty without its runs), one
    block per seed set (``seed_set_groups``: validation and evaluation seeds apart); the
    tables hold every set with a ``seed_set`` column."""
    reg = stages[stages["experiment"].str.startswith(PREFIX)]
    if reg.empty:
        return [], []
    lines = ["", "## Pinned hosts (ablation): tuner regimes (`" + PREFIX + "*` experiments)"]
    tabs, scens, fig_paths = [], [], []
    for seed_set, sub in seed_set_groups(reg):
        ratios = per_run_ratios(sub, reference)
        if ratios.empty:
            return lines + ["", f"No runs of `{reference}` in these experiments: no ratios."], []
        table = regime_table(ratios, reference).assign(seed_set=seed_set)
        scen = ratios.groupby(["experiment", "scenario", "policy"], sort=False)[
            ["avg", "p99", "job"]].mean().reset_index()
        fig_paths += regimes_figure(table, reference, figs, styles, seed_set=seed_set)
        lines += _regime_block(runs, table, scen, reference, seed_set, sub)
        tabs.append(table)
        scens.append(scen.assign(seed_set=seed_set))
    write_table(pd.concat(tabs, ignore_index=True), tables / "regimes.csv")
    scen = pd.concat(scens, ignore_index=True)
    write_table(scen.rename(columns=RATIOS).assign(reference=reference)[
        ["seed_set", "experiment", "scenario", "reference", "policy", *RATIOS.values()]],
        tables / "regime_scenarios.csv")
    return lines, fig_paths


def seed_set_title(seed_set: str, stages: pd.DataFrame) -> str:
    """"Validation seeds 11, 12, 13" for a named set; "" for runs in no set."""
    if not seed_set:
        return ""
    seeds = sorted({int(s) for s in stages["workload_seed"].dropna()})
    return f"{seed_set.capitalize()} seeds {', '.join(map(str, seeds))}"


def _regime_block(runs: pd.DataFrame, table: pd.DataFrame, scen: pd.DataFrame,
                  reference: str, seed_set: str, stages: pd.DataFrame) -> list[str]:
    """The summary lines of one seed set's regime tables and criteria."""
    seeds = set(stages["workload_seed"].dropna())
    lb = runs[runs["experiment"].str.startswith(PREFIX) & (runs["policy"] == reference)
              & runs["workload_seed"].isin(seeds)] \
        .assign(regime=lambda d: d["experiment"].str[len(PREFIX):]) \
        .groupby("regime")["avg_sct_over_lb"].mean()
    others = policy_order(table["policy"])
    title = seed_set_title(seed_set, stages)
    lines = [""] + ([f"### {title}", ""] if title else []) + [
        f"{reference}'s avg SCT / each other policy's on the same trace, mean over the "
        "regime's runs (scenarios x seeds; < 1 = "
        f"{reference} faster); p99 / fair: {reference}'s p99 SCT / fair's; tuning job: "
        f"{reference}'s average tuning-job completion time / {BASELINE}'s. Per scenario: "
        "`tables/regime_scenarios.csv`; with 95% CIs: `tables/regimes.csv` and the figure "
        f"`{_figure_name(seed_set)}`.", "",
        "| regime | runs | " + " | ".join(f"/ {p}" for p in others)
        + f" | p99 / fair | tuning job / {BASELINE} | {reference} /LB |",
        "|---|---|" + "---|" * (len(others) + 3)]
    t = table.set_index(["regime", "policy"])
    for r in dict.fromkeys(table["regime"]):
        cells = [_f(t.loc[(r, p), AVG_MEAN]) if (r, p) in t.index else "-" for p in others]
        p99 = t.loc[(r, "fair"), P99_MEAN] if (r, "fair") in t.index else None
        job = t.loc[(r, BASELINE), JOB_MEAN] if (r, BASELINE) in t.index else None
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
    return lines


def _figure_name(seed_set: str) -> str:
    return "regime_ratios" + (f"_{seed_set}" if seed_set else "")


def criteria_lines(table: pd.DataFrame, scen: pd.DataFrame) -> list[str]:
    """The stated criteria for ``beamer`` on the regime family and whether they hold."""
    t = table.set_index(["regime", "policy"])
    parts = []
    for r, bound in CRITERIA.items():
        if (r, BASELINE) in t.index:
            m = t.loc[(r, BASELINE), AVG_MEAN]
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
        w = sb.loc[sb[AVG_MEAN].idxmax()]
        parts.append("no worse than beamer-sbssi on average in every regime: "
                     f"{'met' if w[AVG_MEAN] <= 1 else 'not met'} (worst "
                     f"{w[AVG_MEAN]:.3f}, {w['regime']})")
    fr = table[table["policy"] == "fair"]
    if len(fr):
        w = fr.loc[fr[P99_MEAN].idxmax()]
        parts.append(f"p99 SCT <= {P99_VS_FAIR:g} x fair's in every regime: "
                     f"{'met' if w[P99_MEAN] <= P99_VS_FAIR else 'not met'} (worst "
                     f"{w[P99_MEAN]:.2f}, {w['regime']})")
    if not parts:
        return []
    return ["", f"Criteria for `{CRITERION_POLICY}` (means of per-run ratios): "
            + "; ".join(parts) + "."]
