"""Seaborn figures from record tables; each saved as PNG and PDF. Policy names as in the registry."""
from __future__ import annotations

from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

POLICY_ORDER = ["beamer", "beamer-sbssi", "beamer-stage-only", "sincronia", "fifo_lm", "fair", "varys"]


def _save(fig, out: Path, stem: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext, meta in (("png", {"Software": None}), ("pdf", {"CreationDate": None, "Producer": None})):
        p = out / f"{stem}.{ext}"
        fig.savefig(p, dpi=150, bbox_inches="tight", metadata=meta)  # byte-stable reruns
        paths.append(p)
    plt.close(fig)
    return paths


def _order(policies) -> list[str]:
    present = list(dict.fromkeys(policies))
    return [p for p in POLICY_ORDER if p in present] + [p for p in present if p not in POLICY_ORDER]


def normalised_bars(norm: pd.DataFrame, experiment: str, title: str, out: Path) -> list[Path]:
    """Bars: avg SCT / Beamer's per policy and scenario, 95% CI error bars."""
    d = norm[norm["experiment"] == experiment]
    pols = _order(d["policy"])
    scen = list(dict.fromkeys(d["scenario"]))
    fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(scen) + 3), 3.6))
    width = 0.8 / len(pols)
    colors = sns.color_palette("colorblind", len(pols))
    for i, p in enumerate(pols):
        row = d[d["policy"] == p].set_index("scenario").reindex(scen)
        x = np.arange(len(scen)) + (i - (len(pols) - 1) / 2) * width
        ax.bar(x, row["ratio_mean"], width, yerr=row["ratio_ci95"], label=p, color=colors[i],
               capsize=2)
    ax.axhline(1.0, color="black", lw=0.8, ls="--")
    ax.set_xticks(np.arange(len(scen)), scen, rotation=0)
    ax.set_xlabel("scenario")
    ax.set_ylabel("avg SCT / Beamer's avg SCT (ratio)")
    ax.set_title(title)
    ax.legend(title="policy", fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(fig, out, f"{experiment}_normalised_avg_sct")


def sweep_lines(runs: pd.DataFrame, norm: pd.DataFrame, experiment: str, param: str,
                xlabel: str, out: Path, log_x: bool = False) -> list[Path]:
    """Left: mean avg SCT (s) vs a swept parameter per policy. Right: avg SCT / Beamer's on
    the same trace, mean over seeds with 95% CI (seeds differ in absolute SCT, so the
    ratio is where the spread is meaningful)."""
    d = runs[runs["experiment"] == experiment].copy()
    d["x"] = pd.to_numeric(d[f"param:{param}"])
    short = param.split(".")[-1]
    n = norm[norm["experiment"] == experiment].copy()
    n["x"] = pd.to_numeric(n["scenario"].str.split("=").str[-1])
    order = _order(d["policy"])
    colors = dict(zip(order, sns.color_palette("colorblind", len(order))))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for p in order:
        g = d[d["policy"] == p].groupby("x")["avg_sct_s"].mean()
        a1.plot(g.index, g.values, marker="o", color=colors[p], label=p)
        h = n[n["policy"] == p].sort_values("x")
        a2.errorbar(h["x"], h["ratio_mean"], yerr=h["ratio_ci95"], marker="o", color=colors[p],
                    capsize=2, label=p)
    for ax in (a1, a2):
        if log_x:
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
            ax.set_xticks(sorted(d["x"].unique()))
        ax.set_xlabel(xlabel)
    a1.set_ylabel("average stage completion time (s)")
    a1.set_title(f"{experiment}: avg SCT vs {short} (mean of seeds)")
    a2.axhline(1.0, color="black", lw=0.8, ls="--")
    a2.set_ylabel("avg SCT / Beamer's avg SCT (ratio)")
    a2.set_title("normalised to beamer (95% CI over seeds)")
    a2.legend(title="policy", fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return _save(fig, out, f"{experiment}_avg_sct_vs_{short}")


def sct_cdf(stages: pd.DataFrame, experiment: str, scenario: str, out: Path) -> list[Path]:
    """Empirical CDF of SCT per policy (all seeds of one scenario)."""
    d = stages[(stages["experiment"] == experiment) & (stages["scenario"] == scenario)]
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    sns.ecdfplot(data=d, x="sct_s", hue="policy", hue_order=_order(d["policy"]), ax=ax,
                 palette="colorblind")
    ax.set_xscale("log")
    ax.set_xlabel("stage completion time (s, log scale)")
    ax.set_ylabel("fraction of stages (CDF)")
    ax.set_title(f"SCT CDF: {experiment} {scenario}")
    sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1.0), title="policy", fontsize=8)
    return _save(fig, out, f"{experiment}_sct_cdf")


def lb_ratio(runs: pd.DataFrame, out: Path) -> list[Path]:
    """Bars: avg SCT / lower bound per policy and experiment (all scenarios and seeds)."""
    fig, ax = plt.subplots(figsize=(8, 3.6))
    sns.barplot(data=runs, x="experiment", y="avg_sct_over_lb", hue="policy",
                hue_order=_order(runs["policy"]), errorbar=("ci", 95), seed=0, ax=ax,
                palette="colorblind", capsize=0.05)
    ax.axhline(1.0, color="black", lw=0.8, ls="--")
    ax.set_xlabel("experiment")
    ax.set_ylabel("avg SCT / lower bound (ratio)")
    ax.set_title("Distance from the provable lower bound (1 = optimal)")
    ax.legend(title="policy", fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(fig, out, "ratio_to_lower_bound")


def emulation_vs_fluid(pairs: pd.DataFrame, out: Path) -> list[Path]:
    """Scatter: per-stage SCT in the packet-level run vs its fluid twin, y = x line."""
    fig, ax = plt.subplots(figsize=(5, 4))
    sns.scatterplot(data=pairs, x="sct_fluid_s", y="sct_mininet_s", hue="policy",
                    hue_order=_order(pairs["policy"]), style="policy", ax=ax, palette="colorblind")
    hi = float(max(pairs["sct_fluid_s"].max(), pairs["sct_mininet_s"].max())) * 1.05
    ax.plot([0, hi], [0, hi], color="black", lw=0.8, ls="--", label="y = x")
    ax.set_xlim(0, hi)
    ax.set_ylim(0, hi)
    ax.set_xlabel("stage completion time, fluid twin (trace s)")
    ax.set_ylabel("stage completion time, Mininet (trace s)")
    ax.set_title("Packet-level emulation vs fluid simulation")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(fig, out, "emulation_vs_fluid")


def reproduction(summary: pd.DataFrame, out: Path) -> list[Path]:
    """Per packet-level experiment (one panel each): emulated / fluid-twin ratio per policy of
    avg SCT and of the per-stage SCT ratio's median and p95, mean over repetitions with 95%
    CI error bars; the shaded band is the 15% target for the median."""
    panels = list(dict.fromkeys(zip(summary["experiment"], summary["scenario"])))
    metrics = [("avg_ratio", "avg SCT"), ("stage_ratio_median", "stage SCT, median"),
               ("stage_ratio_p95", "stage SCT, p95")]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.8), squeeze=False,
                             sharey=True)
    colors = sns.color_palette("colorblind", len(metrics))
    for ax, (exp, scen) in zip(axes[0], panels):
        d = summary[(summary["experiment"] == exp) & (summary["scenario"] == scen)]
        pols = _order(d["policy"])
        d = d.set_index("policy").reindex(pols)
        width = 0.8 / len(metrics)
        ax.axhspan(0.85, 1.15, color="0.9", zorder=0)
        for i, (col, label) in enumerate(metrics):
            x = np.arange(len(pols)) + (i - (len(metrics) - 1) / 2) * width
            ax.bar(x, d[col], width, yerr=d[f"{col}_ci95"], label=label, color=colors[i],
                   capsize=2, zorder=2)
        ax.axhline(1.0, color="black", lw=0.8, ls="--", zorder=3)
        ax.set_xticks(np.arange(len(pols)), pols, rotation=35, ha="right", fontsize=8)
        ax.set_title(f"{exp}" + ("" if scen == "all" else f" ({scen})"), fontsize=10)
    axes[0][0].set_ylabel("emulated / fluid twin (ratio)")
    axes[0][-1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle("Packet level vs fluid twin, mean over repetitions (95% CI); band: ±15%",
                 fontsize=10)
    return _save(fig, out, "reproduction_vs_fluid")
