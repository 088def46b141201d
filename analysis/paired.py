"""Paired statistics of packet-level repetitions: is one policy faster than another?

For every packet-level experiment (and scenario and seed) with repeated runs, and every
other policy P, the ratio reference avg SCT / P's avg SCT is taken per repetition (the
runs with the same repetition index run the same trace one after the other, so they see
alike conditions), then its mean and a 95% percentile-bootstrap confidence interval of
that mean (``BOOTSTRAP_RESAMPLES`` resamples of the repetitions, seeded, so reruns of the
analysis give the same interval), and its Student-t 95% interval, next to the fluid twin's
ratio on the same trace. No interval is drawn from fewer than ``MIN_REPS`` repetitions.
With few repetitions the percentile bootstrap cannot reach 95% coverage (from 3 values
its interval is their range), so the verdicts and the figure use the t-interval, the
wider of the two here; the bootstrap interval is reported beside it.

Writes ``tables/paired_ratios.csv`` (ratio columns named for their direction:
``RATIO_MEAN``, ``TWIN``, ``PER_REPETITION``; < 1: the reference is faster), the figure
``paired_ratios`` (on the ratio axis of ``analysis.plots``) and the summary section (with,
for ``beamer`` vs ``sincronia``, whether the interval excludes 1 and the mean is within
``TWIN_TOLERANCE`` of the twin's ratio).

Over seeds (``seed_ratios``, ``seeds_section``): an experiment that runs ``MIN_REPS`` or
more seeds (each its own trace) is compared trace by trace too: per seed the reference's
ratio to each other policy, emulated (mean over that seed's repetitions) and in its twin,
and over the seeds the mean of each, the mean of their difference (emulated - twin) with
its Student-t 95% interval, and in how many seeds the emulation puts the two policies in
the twin's order. This answers whether the packet level moves the comparison away from
the twin on traces in general, where one seed cannot. ``tables/paired_seeds.csv``.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
import numpy as np
import pandas as pd

from analysis.load import write_table
from analysis.metrics import AVG_SCT_RATIO
from analysis.plots import (CUT_NOTE, _save, _styles, draw_intervals, interval_ends,
                            ratio_axis, ratio_label)
from analysis.policies import Style, policy_order

BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0
MIN_REPS = 3
TWIN_TOLERANCE = 0.05  # |emulated mean ratio - twin ratio| for the beamer vs sincronia check
KEY = ["experiment", "scenario", "workload_seed"]
# the reference's avg SCT / the other policy's (< 1: the reference is faster): the mean over
# repetitions, the fluid twin's, each repetition's
RATIO_MEAN = f"{AVG_SCT_RATIO}_mean"
TWIN = f"twin_{AVG_SCT_RATIO}"
PER_REPETITION = f"{AVG_SCT_RATIO}_per_repetition"
EMULATED_SEEDS_MEAN = f"emulated_{AVG_SCT_RATIO}_mean"  # over seeds (``seed_ratios``)
TWIN_SEEDS_MEAN = f"twin_{AVG_SCT_RATIO}_mean"


def bootstrap_ci95(x: np.ndarray, *, resamples: int = BOOTSTRAP_RESAMPLES,
                   seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """95% percentile-bootstrap interval of the mean of ``x`` (NaNs for < 2 values)."""
    x = np.asarray(x, dtype=float)
    if len(x) < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), size=(resamples, len(x)))].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(lo), float(hi)


def t_ci95(x: np.ndarray) -> tuple[float, float]:
    """Student-t 95% interval of the mean of ``x``: mean -+ t(0.975, n - 1) x s / sqrt(n)
    (NaNs for < 2 values)."""
    from scipy.stats import t
    x = np.asarray(x, dtype=float)
    if len(x) < 2:
        return float("nan"), float("nan")
    half = float(t.ppf(0.975, len(x) - 1)) * float(x.std(ddof=1)) / np.sqrt(len(x))
    return float(x.mean() - half), float(x.mean() + half)


def paired_ratios(per_run: pd.DataFrame, reference: str) -> pd.DataFrame:
    """One row per (experiment, scenario, seed, other policy): repetitions paired, the
    per-repetition ratios, their mean, t and bootstrap 95% intervals (>= MIN_REPS
    repetitions) and the twin's ratio. ``per_run`` is ``analysis.reproduction.run_ratios``' table."""
    rows = []
    for key, g in per_run.groupby(KEY, sort=False):
        emu = g.pivot_table(index="repetition", columns="policy", values="avg_sct_emulated_s")
        twin = g.groupby("policy")["avg_sct_twin_s"].first()
        if reference not in emu:
            continue
        for other in policy_order(emu.columns):
            if other == reference:
                continue
            pair = emu[[reference, other]].dropna()
            r = (pair[reference] / pair[other]).to_numpy()
            if not len(r):
                continue
            nan = (float("nan"), float("nan"))
            lo, hi = bootstrap_ci95(r) if len(r) >= MIN_REPS else nan
            tlo, thi = t_ci95(r) if len(r) >= MIN_REPS else nan
            rows.append({**dict(zip(KEY, key)), "reference": reference, "policy": other,
                         "repetitions": len(r), RATIO_MEAN: float(r.mean()),
                         "t95_low": tlo, "t95_high": thi, "ci95_low": lo, "ci95_high": hi,
                         TWIN: float(twin[reference] / twin[other]),
                         PER_REPETITION: " ".join(f"{v:.4f}" for v in r)})
    return pd.DataFrame(rows)


def paired_figure(pr: pd.DataFrame, out: Path, styles: dict[str, Style] | None = None
                  ) -> list[Path]:
    """Per experiment, per other policy: the emulated mean ratio (the reference's avg SCT /
    the policy's) with its t-interval, and the twin's ratio as an open marker, both in the
    policy's colour and marker, on the ratio axis shared by the panels
    (``analysis.plots.ratio_axis``: log, centred on 1, the line at 1 black and dashed); the
    legend explains filled and open in black. An interval reaching below the axis is drawn
    down to it and ends there in ``analysis.plots.CUT_MARKER``."""
    exps = list(dict.fromkeys(pr["experiment"]))
    pols = policy_order(pr["policy"])
    st = _styles(pols, styles)
    fig, axes = plt.subplots(1, len(exps), figsize=(4.2 * len(exps) + 1, 3.8), squeeze=False,
                             sharey=True)
    rows = []
    values = np.concatenate([pr[RATIO_MEAN].to_numpy(float), pr[TWIN].to_numpy(float)])
    any_cut = False
    for ax, exp in zip(axes[0], exps):
        bottom = ratio_axis(ax, values, pr["t95_low"], pr["t95_high"])
        d = pr[pr["experiment"] == exp].set_index("policy").reindex(pols) \
            .dropna(subset=[RATIO_MEAN])
        for i, (p, r) in enumerate(d.iterrows()):
            low, high, cut = interval_ends([r[RATIO_MEAN]], [r[RATIO_MEAN] - r["t95_low"]], bottom)
            any_cut |= bool(cut.any())
            ax.plot(i, r[RATIO_MEAN], marker=st[p].marker, color=st[p].colour, markersize=7,
                    linestyle="none", zorder=4)
            draw_intervals(ax, [i], [r[RATIO_MEAN]], low, [r["t95_high"]], cut,
                           colour=st[p].colour, capsize=3)
            ax.plot(i + 0.22, r[TWIN], marker=st[p].marker, markerfacecolor="none",
                    color=st[p].colour, markersize=7, linestyle="none", zorder=4)
            rows.append({"experiment": exp, "reference": r["reference"], "policy": p,
                         RATIO_MEAN: r[RATIO_MEAN], "t95_low": r["t95_low"],
                         "t95_high": r["t95_high"], TWIN: r[TWIN],
                         "repetitions": r["repetitions"], "colour": st[p].colour})
        ax.set_xticks(np.arange(len(d)), [f"/ {p}" for p in d.index], rotation=30, ha="right",
                      fontsize=8)
        reps = int(d["repetitions"].min()) if len(d) else 0
        ax.set_title(f"{exp} ({reps} repetitions)", fontsize=9)
    ref = pr["reference"].iloc[0]
    axes[0][0].set_ylabel(ratio_label(ref))
    # the legend says what filled and open mean, in no policy's colour or marker (the
    # policy of each point is its tick label)
    axes[0][0].legend(handles=[
        Line2D([], [], marker="o", color="black", markersize=7, linestyle="none",
               label="emulated (mean, 95% t-interval)"),
        Line2D([], [], marker="o", color="black", markerfacecolor="none", markersize=7,
               linestyle="none", label="fluid twin")], fontsize=8, loc="best")
    fig.suptitle(f"{ref} against each policy at packet level, avg SCT\n"
                 f"filled: mean over repetitions, 95% t-interval (none below {MIN_REPS} "
                 "repetitions); open: the fluid twin; black dashed: 1"
                 + (f"\n{CUT_NOTE}" if any_cut else ""), fontsize=9)
    fig.tight_layout()
    return _save(fig, out, "paired_ratios", pd.DataFrame(rows))


def paired_section(per_run: pd.DataFrame, tables: Path, figs: Path, reference: str,
                   styles: dict[str, Style] | None = None) -> tuple[list[str], list[Path]]:
    """Summary lines and figure paths (empty without repeated packet-level runs)."""
    if per_run.empty or per_run["repetition"].nunique() < 2:
        return [], []
    pr = paired_ratios(per_run, reference)
    if pr.empty:
        return [], []
    write_table(pr, tables / "paired_ratios.csv")
    figs_out = paired_figure(pr[pr["repetitions"] >= 2], figs, styles) \
        if (pr["repetitions"] >= 2).any() else []
    lines = ["", "## Packet level: paired comparison over repetitions", "",
             f"Per repetition, {reference}'s avg SCT / the other policy's (same trace, same "
             f"repetition index; < 1: {reference} faster); mean over repetitions, its Student-t 95% interval and its "
             f"95% percentile-bootstrap interval ({BOOTSTRAP_RESAMPLES:,} resamples, seed "
             f"{BOOTSTRAP_SEED}); intervals only from {MIN_REPS} or more repetitions. With few "
             "repetitions the bootstrap interval is too narrow (from 3 values it is their "
             "range): the verdicts use the t-interval. The fluid twin's ratio beside them. "
             "`tables/paired_ratios.csv`.",
             "", "| experiment | seed | vs | reps | mean ratio | 95% CI (t) | 95% CI (bootstrap) "
             "| twin ratio |",
             "|---|---|---|---|---|---|---|---|"]

    def interval(lo: float, hi: float) -> str:
        return f"[{lo:.3f}, {hi:.3f}]" if np.isfinite(lo) else "-"

    for _, r in pr.iterrows():
        lines.append(f"| {r['experiment']} | {r['workload_seed']} | {r['policy']} | "
                     f"{int(r['repetitions'])} | {r[RATIO_MEAN]:.3f} | "
                     f"{interval(r['t95_low'], r['t95_high'])} | "
                     f"{interval(r['ci95_low'], r['ci95_high'])} | {r[TWIN]:.3f} |")
    bs = pr[(pr["policy"] == "sincronia") & np.isfinite(pr["t95_low"])]
    for _, r in bs.iterrows():
        excl = r["t95_high"] < 1 or r["t95_low"] > 1
        near = abs(r[RATIO_MEAN] - r[TWIN]) <= TWIN_TOLERANCE
        lines.append("")
        lines.append(f"{r['experiment']}: {reference} vs sincronia, the t-interval excludes 1: "
                     f"**{'yes' if excl else 'no'}**; mean within {TWIN_TOLERANCE} of the twin's "
                     f"ratio: **{'yes' if near else 'no'}** ({r[RATIO_MEAN]:.4f} vs "
                     f"{r[TWIN]:.4f}, {abs(r[RATIO_MEAN] - r[TWIN]):.4f} "
                     f"apart).")
    return lines, figs_out


def seed_ratios(per_run: pd.DataFrame, reference: str) -> pd.DataFrame:
    """One row per (experiment, scenario, other policy) with ``MIN_REPS`` or more seeds
    that ran both policies: per seed the emulated ratio reference / other (mean over the
    seed's paired repetitions) and the twin's (a seed without both, finite, is left out);
    their means over the seeds, the mean of (emulated - twin) with its Student-t 95%
    interval, the seeds whose emulated ratio is on the twin's side of 1, and the per-seed
    values as text."""
    rows = []
    for (exp, scen), g in per_run.groupby(["experiment", "scenario"], sort=False):
        if reference not in set(g["policy"]):
            continue
        for other in policy_order(g["policy"]):
            if other == reference:
                continue
            per_seed = []
            for seed, gs in g.groupby("workload_seed", sort=True):
                emu = gs.pivot_table(index="repetition", columns="policy",
                                     values="avg_sct_emulated_s")
                if reference not in emu or other not in emu:
                    continue
                pair = emu[[reference, other]].dropna()
                if pair.empty:
                    continue
                twin = gs.groupby("policy")["avg_sct_twin_s"].first()
                emu_ratio = float((pair[reference] / pair[other]).mean())
                twin_ratio = float(twin[reference] / twin[other]) if twin[other] else np.nan
                if np.isfinite(emu_ratio) and np.isfinite(twin_ratio):
                    per_seed.append((seed, emu_ratio, twin_ratio))
            if len(per_seed) < MIN_REPS:
                continue
            emu_r = np.array([e for _, e, _ in per_seed])
            twin_r = np.array([t for _, _, t in per_seed])
            lo, hi = t_ci95(emu_r - twin_r)
            rows.append({"experiment": exp, "scenario": scen, "reference": reference,
                         "policy": other, "seeds": len(per_seed),
                         EMULATED_SEEDS_MEAN: float(emu_r.mean()),
                         TWIN_SEEDS_MEAN: float(twin_r.mean()),
                         "difference_mean": float((emu_r - twin_r).mean()),
                         "difference_t95_low": lo, "difference_t95_high": hi,
                         "seeds_in_twin_order": int(((emu_r < 1) == (twin_r < 1)).sum()),
                         "per_seed": " ".join(f"{s}:{e:.4f}/{t:.4f}" for s, e, t in per_seed)})
    return pd.DataFrame(rows)


def seeds_section(per_run: pd.DataFrame, tables: Path, reference: str) -> list[str]:
    """Summary lines of the comparison over seeds (empty without an experiment of
    ``MIN_REPS`` or more seeds)."""
    if per_run.empty:
        return []
    sr = seed_ratios(per_run, reference)
    if sr.empty:
        return []
    write_table(sr, tables / "paired_seeds.csv")
    lines = ["", "## Packet level: comparison over seeds", "",
             f"Per seed (each its own trace), {reference}'s avg SCT / the other policy's "
             f"(< 1: {reference} faster), "
             "emulated (mean over the seed's repetitions) and in the fluid twin; over the "
             "seeds their means, the mean of (emulated - twin) with its Student-t 95% "
             "interval (does the packet level move the comparison away from the twin on "
             f"these traces?), and the seeds whose emulated ratio is on the twin's side of 1. "
             "Per-seed values: `tables/paired_seeds.csv`.", "",
             "| experiment | scenario | vs | seeds | emulated ratio, mean | twin ratio, mean | "
             "emulated - twin: mean [95% t] | seeds in the twin's order |",
             "|---|---|---|---|---|---|---|---|"]
    for _, r in sr.iterrows():
        lines.append(f"| {r['experiment']} | {r['scenario']} | {r['policy']} | {r['seeds']} | "
                     f"{r[EMULATED_SEEDS_MEAN]:.3f} | {r[TWIN_SEEDS_MEAN]:.3f} | "
                     f"{r['difference_mean']:+.3f} [{r['difference_t95_low']:+.3f}, "
                     f"{r['difference_t95_high']:+.3f}] | "
                     f"{r['seeds_in_twin_order']}/{r['seeds']} |")
    return lines
