"""The summary's sections that hold the reference policy to its stated criteria on the
fluid experiments (the tuner regimes have their own module, ``analysis.regimes``).

``congestion_section``: the congestion family (``cong-*`` experiments): per scenario the
reference's avg SCT over each other policy's (mean of per-seed ratios) and its p99 over
fair's, per-policy avg / p99 / max SCT, avg app completion and avg SCT / LB
(``tables/congestion.csv``, ``tables/congestion_ratios.csv``), then the stated criteria
for ``beamer`` (``CRITERIA``, ``P99_VS_FAIR``) with their verdicts.
``shared_scenarios``, ``shared_scenario_lines``: scenarios of different experiments that
are one configuration (their runs shared, ``same_run_as``), counted once in family means.
``suite_check_lines``: over every fluid experiment with K >= 2, the scenarios where the
reference is more than ``SUITE_CHECK_SLACK`` above Sincronia or Varys, and the worst
ratio to each.
"""
from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import pandas as pd

from emulation.backends import PACKET_LEVEL
from analysis.load import seed_set_groups, sort_scenarios, write_table
from analysis.metrics import policy_ratios, run_metrics
from analysis.policies import policy_order, sort_by_policy
from analysis.text import cell, count

CONGESTION_PREFIX = "cong-"
# stated criteria for beamer on the congestion family (mean over its scenarios):
# beamer's avg SCT / the baseline's at most this
CRITERIA = MappingProxyType({"sincronia": 0.90, "fair": 0.80, "fifo_lm": 0.85})
CRITERION_POLICY = "beamer"
P99_VS_FAIR = 1.5  # and beamer's p99 SCT at most 1.5 x fair's in every scenario


def shared_scenarios(runs: pd.DataFrame) -> dict[tuple[str, str], tuple[str, str]]:
    """(experiment, scenario) -> the (experiment, scenario) whose runs it shares, for every
    scenario whose runs share another's records (``same_run_as``: the same configuration)."""
    if "same_run_as" not in runs:
        return {}
    where = dict(zip(runs["run"], zip(runs["experiment"], runs["scenario"])))
    out = {}
    for _, r in runs[runs["same_run_as"].fillna("") != ""].iterrows():
        src = where.get(r["same_run_as"])
        if src is not None:
            out.setdefault((r["experiment"], r["scenario"]), src)
    return out


def shared_scenario_lines(runs: pd.DataFrame) -> list[str]:
    """The summary's list of scenarios that are one configuration (their runs are shared,
    not repeated; family means count each once)."""
    same = shared_scenarios(runs)
    if not same:
        return []
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for scen, src in same.items():
        groups.setdefault(src, []).append(scen)
    lines = ["", "## Scenarios that are one configuration", "",
             "These scenarios of different experiments give the same trace, policy settings "
             "and topology: each configuration ran once, the later experiments' run "
             "directories name the run they share (`same_run_as` in run.json), and a "
             "family's means count it once.", ""]
    for src, dups in groups.items():
        lines.append("- " + " = ".join(f"{e} {s}" for e, s in [src, *dups]))
    return lines


def congestion_section(runs, stages, tables: Path, reference: str = "beamer") -> list[str]:
    """The congestion family's tables: per scenario the reference's avg SCT over each other
    policy's (mean of per-seed ratios), its p99 over fair's, and per policy avg / p99 / max
    SCT, avg app completion and avg SCT / LB (``tables/congestion.csv``); then the stated
    criteria for ``beamer`` (``CRITERIA``, ``P99_VS_FAIR``) with their verdicts. One block
    per seed set (``seed_set_groups``); family means count a scenario that shares another
    one's runs (``shared_scenarios``) once."""
    cong = stages[stages["experiment"].str.startswith(CONGESTION_PREFIX)]
    if cong.empty:
        return []
    cr = runs[runs["experiment"].str.startswith(CONGESTION_PREFIX)]
    ks = sorted({int(k) for k in cr.get("num_priority_classes", pd.Series(dtype=float)).dropna()})
    backends = sorted(set(cr["backend"].dropna())) if "backend" in cr else []
    lines = ["", "## Pinned hosts (ablation): congestion family (`" + CONGESTION_PREFIX + "*` experiments"
             + (f"; {', '.join(backends)}" if backends else "")
             + (f"; K = {', '.join(map(str, ks))}" if ks else "") + ")"]
    details, ratios = [], []
    for seed_set, sub in seed_set_groups(cong):
        block, detail, ratio = _congestion_block(runs, sub, reference, seed_set)
        lines += block
        details.append(detail.reset_index().assign(seed_set=seed_set))
        if ratio is not None:
            ratios.append(ratio.assign(seed_set=seed_set))
    write_table(sort_by_policy(sort_scenarios(pd.concat(details, ignore_index=True))),
                tables / "congestion.csv")
    if ratios:
        write_table(pd.concat(ratios, ignore_index=True), tables / "congestion_ratios.csv")
    return lines


def _congestion_block(runs, cong, reference: str, seed_set: str):
    """One seed set's congestion lines, per-policy detail and ratio table (None without
    the reference)."""
    per_run = run_metrics(cong)
    lb = runs.set_index(["experiment", "scenario", "policy", "workload_seed"])["avg_sct_over_lb"]
    per_run = per_run.join(lb, on=["experiment", "scenario", "policy", "workload_seed"])
    detail = per_run.groupby(["experiment", "scenario", "policy"], sort=False)[
        ["avg_sct_s", "p99_sct_s", "max_sct_s", "avg_app_completion_s", "avg_sct_over_lb"]].mean()
    pols = policy_order(per_run["policy"])
    seeds = sorted({int(s) for s in cong["workload_seed"].dropna()})
    head = [""] + ([f"### {seed_set.capitalize()} seeds {', '.join(map(str, seeds))}", ""]
                   if seed_set else [])
    if reference not in pols:
        return head + [f"No runs of `{reference}` in these experiments: no ratios "
                       "(per-policy numbers: `tables/congestion.csv`)."], detail, None
    baselines = [p for p in pols if p != reference]
    ratio = policy_ratios(per_run, policy=reference, baselines=baselines)
    has_fair = "fair" in pols and reference != "fair"
    p99 = policy_ratios(per_run, policy=reference, baselines=["fair"], metric="p99_sct_s") \
        if has_fair else None
    ratio["p99_vs_fair"] = p99["fair"].to_numpy() if p99 is not None and "fair" in p99 else float("nan")
    same = shared_scenarios(runs)
    ratio["same_runs_as"] = [" ".join(same.get((e, s), ())) for e, s in
                             zip(ratio["experiment"], ratio["scenario"])]
    lines = head + [
        f"{reference}'s avg SCT / each other policy's (mean of per-seed ratios; < 1 = "
        f"{reference} faster), and {reference}'s p99 SCT / fair's. Per-policy avg / p99 / max "
        "SCT, avg app completion and /LB: `tables/congestion.csv`.", "",
        "| experiment | scenario | seeds | " + " | ".join(f"/ {b}" for b in baselines)
        + f" | p99 / fair | {reference} /LB | same runs as |",
        "|---|---|---|" + "---|" * (len(baselines) + 3)]
    for _, r in ratio.iterrows():
        key = (r["experiment"], r["scenario"], reference)
        lbv = detail.loc[key, "avg_sct_over_lb"] if key in detail.index else float("nan")
        lines.append(f"| {r['experiment']} | {r['scenario']} | {int(r['seeds'])} | "
                     + " | ".join(cell(r.get(b), ".3f") for b in baselines)
                     + f" | {cell(r['p99_vs_fair'], '.2f')} | {cell(lbv, '.2f')} | "
                     + (r["same_runs_as"] or "-") + " |")
    distinct = ratio[ratio["same_runs_as"] == ""]
    mean = distinct[[b for b in baselines if b in distinct]].mean()
    lines += ["", f"Mean over the family's {len(distinct)} distinct scenarios (a scenario "
              "that shares another's runs counted once): " + ", ".join(
                  f"{reference} / {b} {cell(mean.get(b), '.3f')}" for b in baselines) + "."]
    lines += _criteria_lines(per_run, pols,
                             distinct if reference == CRITERION_POLICY else None)
    return lines, detail, ratio


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
    keep = ~runs["backend"].isin(PACKET_LEVEL) if "backend" in runs else runs["policy"].notna()
    if "num_priority_classes" in runs:
        keep &= runs["num_priority_classes"].fillna(0) != 1
    fluid = runs[keep]
    baselines = [b for b in SUITE_CHECK_BASELINES if b != reference and b in set(fluid["policy"])]
    if fluid.empty or reference not in set(fluid["policy"]):
        return []
    if not baselines:
        others = [b for b in SUITE_CHECK_BASELINES if b != reference]
        if reference in SUITE_CHECK_BASELINES:  # say why the check is missing
            return ["", f"(No check of {reference} against {' and '.join(others)} across the "
                    f"fluid experiments: the records have no fluid runs of "
                    f"{' and '.join(others)}; the check compares the reference with each of "
                    f"{' and '.join(SUITE_CHECK_BASELINES)} that is not the reference.)"]
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
             f"Whether {reference} falls behind {names} anywhere: per scenario of every fluid "
             f"experiment (K = the number of priority classes; runs with K = 1, where no "
             f"order can be enforced, left out) {reference}'s avg SCT / each one's, mean of "
             f"per-seed ratios; a scenario more than {SUITE_CHECK_SLACK:.0%} above is listed.",
             "",
             f"{count(len(ratio), 'scenario')}. " + "; ".join(
                 f"worst {reference} / {b}: {w[b]:.3f} ({w['experiment']}, {w['scenario']})"
                 for b, w in worst.items()) + "."]
    if over.empty:
        lines.append(f"No scenario has {reference} more than {SUITE_CHECK_SLACK:.0%} above "
                     + ("either." if len(baselines) > 1 else f"{baselines[0]}."))
    else:
        lines.append(f"More than {SUITE_CHECK_SLACK:.0%} above one of them in: " + ", ".join(
            f"{r['experiment']} {r['scenario']}" for _, r in over.iterrows()) + ".")
    return lines
