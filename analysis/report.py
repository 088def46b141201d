"""Build ``summary.md``, ``tables/*.csv`` and ``figures/`` from a results directory (files only).

Everything is written under the directory analysed and nowhere else. The policies shown
are the policies of the records (``analysis.policies``: registry order, unknown names
after); the reference of every ratio is ``reference`` (``--reference``), by default
``beamer`` when the records have it, else the first policy in registry order. Tables name
runs relative to the results directory (no absolute paths).
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from analysis import plots
from analysis.load import load_jobs, load_runs, load_stages, load_twin_pairs, write_table
from analysis.metrics import normalised, policy_ratios, run_metrics, sct_table
from analysis.regimes import regime_section
from analysis.policies import (choose_reference, policy_order, reference_note, sort_by_policy,
                               styles as policy_styles)

# swept parameter -> (x label, log2 x axis) of the line figures (experiments with
# ``figure = "line"``); other parameters get their own name and a linear axis
PARAM_LABELS = {
    "workload.arrival_rate_per_s": ("app arrival rate (apps/s)", False),
    "experiment.priority_classes": ("priority classes K", True),
    "workload.num_hosts": ("hosts", True),
}
CDF_EXPERIMENT = "pattern"  # the SCT CDF figure's experiment when present (else the first)


def _cell(v, fmt: str) -> str:
    """A table cell: the formatted number, or '-' when there is none (no NaN in tables)."""
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) or pd.isna(v) else format(v, fmt)


def _where(results: Path) -> str:
    """How to name the results directory in the summary: relative to the repository when
    inside it, else ``DIR`` (never a machine-specific absolute path)."""
    repo = Path(__file__).resolve().parents[1]
    try:
        return Path(results).resolve().relative_to(repo).as_posix()
    except ValueError:
        return "DIR"


def make_report(results: Path, reference: str | None = None) -> Path:
    """Write tables, figures and summary.md under ``results``; returns summary.md's path.
    ValueError if ``reference`` names a policy without runs in the records."""
    results = Path(results)
    runs = load_runs(results)
    pols = policy_order(runs["policy"])
    ref = choose_reference(pols, reference)
    st = policy_styles(pols)
    stages = load_stages(runs)
    jobs = load_jobs(runs)
    norm = sort_by_policy(normalised(runs, reference=ref))
    tables = results / "tables"
    tables.mkdir(exist_ok=True)
    figs = results / "figures"
    write_table(norm, tables / "normalised_avg_sct.csv")
    sct = sort_by_policy(sct_table(stages))
    write_table(sct, tables / "sct_stats.csv")
    cols = ["experiment", "scenario", "policy", "workload_seed", "avg_sct_s", "p95_sct_s",
            "avg_cct_s", "lower_bound_avg_sct_s", "avg_sct_over_lb", "wall_s"]
    rank = {p: i for i, p in enumerate(pols)}
    runs_tab = runs[[c for c in cols if c in runs]].assign(_r=runs["policy"].map(rank)).sort_values(
        ["experiment", "scenario", "_r", "workload_seed"], kind="stable").drop(columns="_r")
    write_table(runs_tab, tables / "runs.csv")
    if not jobs.empty:
        write_table(sort_by_policy(jobs.groupby(["experiment", "scenario", "policy"])["jct_s"].mean()
                                   .reset_index()), tables / "avg_jct.csv")
    figure_paths: list[Path] = []
    without_ref = []
    for exp in dict.fromkeys(runs["experiment"]):
        if ref not in set(runs.loc[runs["experiment"] == exp, "policy"]):
            without_ref.append(exp)
            continue
        figure_paths += plots.normalised_bars(norm, exp, ref, figs, st)
        er = runs[runs["experiment"] == exp]
        swept = [c for c in er.columns if c.startswith("param:") and er[c].notna().all()]
        if (er["figure"] == "line").all() and len(swept) == 1:
            param = swept[0][len("param:"):]
            x = pd.to_numeric(er[swept[0]], errors="coerce")
            if x.notna().all() and x.nunique() > 1:
                label, logx = PARAM_LABELS.get(param, (param.split(".")[-1], False))
                figure_paths += plots.sweep_lines(runs, norm, exp, param, label, ref, figs,
                                                  logx, st)
    cdf_exp = CDF_EXPERIMENT if CDF_EXPERIMENT in set(runs["experiment"]) else runs["experiment"].iloc[0]
    cdf_scen = runs[runs["experiment"] == cdf_exp]["scenario"].iloc[0]
    figure_paths += plots.sct_cdf(stages, cdf_exp, cdf_scen, ref, figs, st)
    figure_paths += plots.lb_ratio(runs, figs, st)
    pairs = load_twin_pairs(runs)
    fidelity = None
    if not pairs.empty:
        write_table(pairs, tables / "emulation_vs_fluid.csv")
        figure_paths += plots.emulation_vs_fluid(pairs, figs, st)
        fidelity = pairs.assign(ratio=pairs["sct_mininet_s"] / pairs["sct_fluid_s"]).groupby(
            "policy")["ratio"].agg(["median", "min", "max", "count"]).reindex(
            policy_order(pairs["policy"]))
    # --- packet-level sections: captures (analysis/packet.py), reproduction of the twin
    # (analysis/reproduction.py) ---
    from analysis.packet import write_packet_tables
    from analysis.reproduction import write_reproduction
    repro_lines, repro_figs = write_reproduction(runs, tables, figs)
    figure_paths += repro_figs
    from analysis.paired import paired_section
    from analysis.reproduction import run_ratios
    paired_lines, paired_figs = paired_section(run_ratios(runs), tables, figs, ref, st)
    figure_paths += paired_figs
    packet_lines = repro_lines + paired_lines + write_packet_tables(runs, tables, ref)
    # ---
    regime_lines, regime_figs = regime_section(runs, stages, tables, figs, ref, st)
    figure_paths += regime_figs
    cong_lines = regime_lines + congestion_section(runs, stages, tables, ref) \
        + suite_check_lines(runs, stages, ref) + headroom_lines(results)
    summary = results / "summary.md"
    summary.write_text(_summary_md(runs, norm, figure_paths, results, ref, reference,
                                   without_ref, fidelity, cong_lines + packet_lines))
    return summary


def _summary_md(runs, norm, figure_paths, results: Path, ref: str, requested: str | None,
                without_ref: list[str], fidelity=None, more_lines: list[str] = ()) -> str:
    pols = policy_order(runs["policy"])
    where = _where(results)
    lines = ["# Results summary", "",
             f"Generated by `python -m analysis {where}` from the run records only"
             + (" (DIR: this results directory)." if where == "DIR" else "."),
             "", reference_note(ref, requested),
             f"Policies in the records (registry order): {', '.join(f'`{p}`' for p in pols)}.",
             "", f"## {ref}'s reduction of average SCT vs each other policy", "",
             f"Reduction = 1 - ({ref} avg SCT / the other policy's avg SCT), mean over runs "
             "(ratio taken per seed on the same trace, and per repetition for packet-level "
             f"runs); runs = seeds x repetitions; positive = {ref} is faster; '-': no runs of "
             "that policy in the scenario.", ""]
    others = [p for p in pols if p != ref]
    lines.append(f"| experiment | scenario | runs | {ref} avg SCT (s) | " +
                 " | ".join(f"vs {b}" for b in others) + " |")
    lines.append("|---|---|---|---|" + "---|" * len(others))
    for (exp, scen), g in norm.groupby(["experiment", "scenario"], sort=False):
        g = g.set_index("policy")
        if ref not in g.index:
            continue
        cells = [_cell(g.loc[b, "reduction_mean"] * 100, "+.1f") + "%" if b in g.index
                 and pd.notna(g.loc[b, "reduction_mean"]) else "-" for b in others]
        lines.append(f"| {exp} | {scen} | {int(g.loc[ref, 'seeds'])} | "
                     f"{_cell(g.loc[ref, 'avg_sct_s_mean'], '.2f')} | " + " | ".join(cells) + " |")
    if without_ref:
        lines += ["", f"No runs of `{ref}` (so no ratios, and no normalised figure) in: "
                  + ", ".join(without_ref) + "."]
    lines += ["", "## Distance from the lower bound (avg SCT / LB, mean over runs)", ""]
    lb = runs.groupby(["experiment", "policy"])["avg_sct_over_lb"].mean().unstack("policy")
    lb_pols = [p for p in pols if p in lb.columns]
    lines.append("| experiment | " + " | ".join(lb_pols) + " |")
    lines.append("|---|" + "---|" * len(lb_pols))
    for exp, row in lb.iterrows():
        lines.append(f"| {exp} | " + " | ".join(_cell(row[p], ".3f") for p in lb_pols) + " |")
    if fidelity is not None:
        lines += ["", "## Packet-level fidelity (Mininet stage SCT / fluid twin's)", "",
                  "| policy | median | min | max | stages |", "|---|---|---|---|---|"]
        for pol, row in fidelity.iterrows():
            lines.append(f"| {pol} | {row['median']:.3f} | {row['min']:.3f} | {row['max']:.3f} | "
                         f"{int(row['count'])} |")
    lines += list(more_lines)
    notes = results / "NOTES.md"
    if notes.exists():
        lines += ["", "## Notes", "", notes.read_text().strip()]
    lines += ["", "## Figures", "",
              "Each figure's numbers are in `figures/<name>.csv` beside it (one row per bar, "
              "point or line, with the policy and its colour).", ""]
    for p in figure_paths:
        if p.suffix == ".png":
            lines.append(f"![{p.stem}](figures/{p.name})")
    lines += ["", f"{len(runs)} runs; tables in `tables/` (runs.csv, normalised_avg_sct.csv, "
              "sct_stats.csv, avg_jct.csv, and the sections' own tables named above).", ""]
    return "\n".join(lines)


CONGESTION_PREFIX = "cong-"
# stated criteria for beamer on the congestion family (mean over its scenarios):
# beamer's avg SCT / the baseline's at most this
CRITERIA = {"sincronia": 0.90, "fair": 0.80, "fifo_lm": 0.85}
CRITERION_POLICY = "beamer"
P99_VS_FAIR = 1.5  # and beamer's p99 SCT at most 1.5 x fair's in every scenario


def congestion_section(runs, stages, tables: Path, reference: str = "beamer") -> list[str]:
    """The congestion family's tables: per scenario the reference's avg SCT over each other
    policy's (mean of per-seed ratios), its p99 over fair's, and per policy avg / p99 / max
    SCT, avg app completion and avg SCT / LB (``tables/congestion.csv``); then the stated
    criteria for ``beamer`` (``CRITERIA``, ``P99_VS_FAIR``) with their verdicts."""
    cong = stages[stages["experiment"].str.startswith(CONGESTION_PREFIX)]
    if cong.empty:
        return []
    per_run = run_metrics(cong)
    lb = runs.set_index(["experiment", "scenario", "policy", "workload_seed"])["avg_sct_over_lb"]
    per_run = per_run.join(lb, on=["experiment", "scenario", "policy", "workload_seed"])
    detail = per_run.groupby(["experiment", "scenario", "policy"], sort=False)[
        ["avg_sct_s", "p99_sct_s", "max_sct_s", "avg_app_completion_s", "avg_sct_over_lb"]].mean()
    write_table(sort_by_policy(detail.reset_index()), tables / "congestion.csv")
    pols = policy_order(per_run["policy"])
    cr = runs[runs["experiment"].str.startswith(CONGESTION_PREFIX)]
    ks = sorted({int(k) for k in cr.get("num_priority_classes", pd.Series(dtype=float)).dropna()})
    backends = sorted(set(cr["backend"].dropna())) if "backend" in cr else []
    head = ["", "## Congestion family (`" + CONGESTION_PREFIX + "*` experiments"
            + (f"; {', '.join(backends)}" if backends else "")
            + (f"; K = {', '.join(map(str, ks))}" if ks else "") + ")", ""]
    if reference not in pols:
        return head + [f"No runs of `{reference}` in these experiments: no ratios "
                       "(per-policy numbers: `tables/congestion.csv`)."]
    baselines = [p for p in pols if p != reference]
    ratio = policy_ratios(per_run, policy=reference, baselines=baselines)
    has_fair = "fair" in pols and reference != "fair"
    p99 = policy_ratios(per_run, policy=reference, baselines=["fair"], metric="p99_sct_s") \
        if has_fair else None
    ratio["p99_vs_fair"] = p99["fair"].to_numpy() if p99 is not None and "fair" in p99 else float("nan")
    write_table(ratio, tables / "congestion_ratios.csv")
    lines = head + [
        f"{reference}'s avg SCT / each other policy's (mean of per-seed ratios; < 1 = "
        f"{reference} faster), and {reference}'s p99 SCT / fair's. Per-policy avg / p99 / max "
        "SCT, avg app completion and /LB: `tables/congestion.csv`.", "",
        "| experiment | scenario | seeds | " + " | ".join(f"/ {b}" for b in baselines)
        + f" | p99 / fair | {reference} /LB |",
        "|---|---|---|" + "---|" * (len(baselines) + 2)]
    for _, r in ratio.iterrows():
        key = (r["experiment"], r["scenario"], reference)
        lbv = detail.loc[key, "avg_sct_over_lb"] if key in detail.index else float("nan")
        lines.append(f"| {r['experiment']} | {r['scenario']} | {int(r['seeds'])} | "
                     + " | ".join(_cell(r.get(b), ".3f") for b in baselines)
                     + f" | {_cell(r['p99_vs_fair'], '.2f')} | {_cell(lbv, '.2f')} |")
    mean = ratio[[b for b in baselines if b in ratio]].mean()
    lines += ["", "Mean over the family's scenarios: " + ", ".join(
        f"{reference} / {b} {_cell(mean.get(b), '.3f')}" for b in baselines) + "."]
    lines += _criteria_lines(per_run, pols, ratio if reference == CRITERION_POLICY else None)
    return lines


def _criteria_lines(per_run, pols: list[str], ratio=None) -> list[str]:
    """The stated criteria for ``beamer`` on the congestion family and whether they hold."""
    if CRITERION_POLICY not in pols:
        return []
    bs = [b for b in CRITERIA if b in pols]
    if ratio is None:
        ratio = policy_ratios(per_run, policy=CRITERION_POLICY, baselines=bs)
    parts = []
    for b in bs:
        m = ratio[b].mean()
        parts.append(f"avg SCT <= {CRITERIA[b]:.2f} x {b}'s: "
                     f"{'met' if m <= CRITERIA[b] else 'not met'} ({m:.3f})")
    if "fair" in pols:
        p99 = policy_ratios(per_run, policy=CRITERION_POLICY, baselines=["fair"], metric="p99_sct_s")
        worst = p99["fair"].max()
        parts.append(f"p99 SCT <= {P99_VS_FAIR:g} x fair's in every scenario: "
                     f"{'met' if worst <= P99_VS_FAIR else 'not met'} (worst {worst:.2f})")
    if not parts:
        return []
    return ["", f"Criteria for `{CRITERION_POLICY}` (avg SCT ratios: mean over the family's "
            "scenarios): " + "; ".join(parts) + "."]


SUITE_CHECK_BASELINES = ("sincronia", "varys")
SUITE_CHECK_SLACK = 0.01  # the reference more than 1% above a baseline is listed


def suite_check_lines(runs, stages, reference: str = "beamer") -> list[str]:
    """Over every fluid experiment of the directory with K >= 2: scenarios where the
    reference's avg SCT is more than 1% above Sincronia's or Varys's (mean of per-seed
    ratios), and the worst ratio to each."""
    keep = runs["backend"].fillna("fluid") == "fluid" if "backend" in runs else runs["policy"].notna()
    if "num_priority_classes" in runs:
        keep &= runs["num_priority_classes"].fillna(0) != 1
    fluid = runs[keep]
    baselines = [b for b in SUITE_CHECK_BASELINES if b != reference and b in set(fluid["policy"])]
    if fluid.empty or reference not in set(fluid["policy"]) or not baselines:
        return []
    key = ["experiment", "scenario", "policy", "workload_seed"]
    per_run = run_metrics(stages.merge(fluid[key].drop_duplicates(), on=key))
    ratio = policy_ratios(per_run, policy=reference, baselines=baselines)
    ratio = ratio.dropna(subset=baselines, how="all")
    if ratio.empty:
        return []
    worst = {b: ratio.loc[ratio[b].idxmax()] for b in baselines if ratio[b].notna().any()}
    over = ratio[(ratio[baselines] > 1 + SUITE_CHECK_SLACK).any(axis=1)]
    names = " and ".join(baselines)
    lines = ["", f"## {reference} vs {names} across the fluid experiments of this directory "
             "(K >= 2)", "",
             f"{len(ratio)} scenarios. " + "; ".join(
                 f"worst {reference} / {b}: {w[b]:.3f} ({w['experiment']}, {w['scenario']})"
                 for b, w in worst.items()) + "."]
    if over.empty:
        lines.append(f"No scenario has {reference} more than {SUITE_CHECK_SLACK:.0%} above "
                     + ("either." if len(baselines) > 1 else f"{baselines[0]}."))
    else:
        lines.append(f"More than {SUITE_CHECK_SLACK:.0%} above one of them in: " + ", ".join(
            f"{r['experiment']} {r['scenario']}" for _, r in over.iterrows()) + ".")
    return lines


def headroom_lines(results: Path) -> list[str]:
    """The small-instance headroom of ``scripts/headroom.py`` if its CSV is in the results."""
    path = Path(results) / "headroom.csv"
    if not path.exists():
        return []
    df = pd.read_csv(path)
    pols = policy_order(c[: -len("_avg_sct_s")] for c in df.columns if c.endswith("_avg_sct_s")
                        and c not in ("lower_bound_avg_sct_s", "best_static_avg_sct_s"))
    best = df["best_static_avg_sct_s"]
    lines = ["", "## Headroom on small instances (`scripts/headroom.py`, `headroom.csv`)", "",
             f"{len(df)} small congested Hyperband instances; per instance the best static priority "
             f"order found by search ({int(df['orders_evaluated'].mean())} orders on average). "
             "Each policy's avg SCT / that best order (mean over instances; 1 = as good):", "",
             "| " + " | ".join(pols) + " | best order / LB |", "|" + "---|" * (len(pols) + 1),
             "| " + " | ".join(f"{(df[p + '_avg_sct_s'] / best).mean():.3f}" for p in pols)
             + f" | {(best / df['lower_bound_avg_sct_s']).mean():.3f} |"]
    return lines
