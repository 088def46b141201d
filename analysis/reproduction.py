"""Reproduction check: does the packet-level emulation reproduce its fluid twin (files only)?

Every Mininet run directory holds the emulated records (``stages.csv``, trace seconds) and
its fluid twin's (``twin/stages.csv``, same trace, same policy, same time base). This
module owns:

- ``run_ratios``: per Mininet run (policy, seed, repetition), emulated / twin avg SCT and
  the median and p95 over stages of the per-stage ratio emulated SCT / twin SCT;
- ``ratio_summary``: per experiment, scenario and policy, the mean of those ratios over
  repetitions (and seeds) with 95% t-intervals;
- ``ranking``: per experiment and scenario, the policy order by avg SCT in the fluid twin
  and in the emulation (mean over runs; exact ties shown as ``=``);
- ``pair_check``: every pair of policies the fluid twin separates by >= 10% in avg SCT,
  and in how many repetitions the emulation orders them the same way;
- ``targets``: the three criteria of the check, each with its numbers and a verdict;
- ``write_reproduction``: tables under ``tables/``, the figure, and the summary's lines
  (the hook ``analysis/report.py`` calls).

Criteria (the thresholds below): median per-stage ratio within 15% of 1 for every
policy; wherever the twin separates two policies by >= 10%, the emulation ranks them the
same way in every repetition; scheduler reaction (class latency) p95 <= 20 ms in every
run. Tables name runs by ``run`` (relative to the results directory).
"""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.load import mininet_runs, twin_stage_pairs, write_table
from analysis.metrics import mean_ci95
from analysis.policies import policy_order, sort_by_policy
from analysis.text import count
from emulation import store

STAGE_RATIO_TOL = 0.15       # |median per-stage ratio - 1| allowed, every policy
SEPARATION = 0.10            # twin gap (slower / faster - 1) from which the order must hold
CLASS_LATENCY_P95_MS = 20.0  # scheduler reaction criterion, every run
KEY = ["experiment", "scenario", "policy"]


def run_ratios(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per Mininet run with a twin: avg SCT emulated and twin (trace s), their ratio,
    median / p95 over stages of emulated / twin stage SCT, and the run's class latency
    (median / p95 / max, ms of wall clock) and load average if recorded."""
    rows = []
    for _, r in mininet_runs(runs).iterrows():
        d = Path(r["run_dir"])
        m = twin_stage_pairs(d)
        if m is None:
            continue
        emu, twin = m["sct_mininet_s"], m["sct_fluid_s"]
        ratio = emu / twin
        run = store.read_json(d / "run.json")
        lat = run.get("class_latency_emulated_s") or run.get("class_latency_s") or {}
        rows.append({
            "experiment": r["experiment"], "scenario": r["scenario"], "policy": r["policy"],
            "workload_seed": r.get("workload_seed"), "repetition": int(run.get("repetition", 0)),
            "run": r.get("run", d.name), "run_dir": str(d), "stages": len(m),
            "avg_sct_emulated_s": float(emu.mean()),
            "avg_sct_twin_s": float(twin.mean()),
            "avg_ratio": float(emu.mean() / twin.mean()),
            "stage_ratio_median": float(ratio.median()),
            "stage_ratio_p95": float(ratio.quantile(0.95)),
            "class_latency_median_ms": lat["median"] * 1e3 if lat.get("median") is not None else np.nan,
            "class_latency_p95_ms": lat["p95"] * 1e3 if lat.get("p95") is not None else np.nan,
            "class_latency_max_ms": lat["max"] * 1e3 if lat.get("max") is not None else np.nan,
            "loadavg_1min": run.get("loadavg_1min_start", np.nan),
            "wall_s": run.get("wall_s", np.nan),
        })
    return pd.DataFrame(rows)


def ratio_summary(per_run: pd.DataFrame) -> pd.DataFrame:
    """Per experiment, scenario and policy: mean and 95% CI half-width over runs
    (repetitions x seeds) of avg_ratio, stage_ratio_median and stage_ratio_p95."""
    rows = []
    for key, g in per_run.groupby(KEY, sort=False):
        row = dict(zip(KEY, key), runs=len(g))
        for col in ("avg_ratio", "stage_ratio_median", "stage_ratio_p95"):
            m, h = mean_ci95(g[col].to_numpy())
            row[col] = m
            row[f"{col}_ci95"] = h
            row[f"{col}_min"] = float(g[col].min())
            row[f"{col}_max"] = float(g[col].max())
        row["avg_sct_emulated_s"] = float(g["avg_sct_emulated_s"].mean())
        row["avg_sct_twin_s"] = float(g["avg_sct_twin_s"].mean())
        rows.append(row)
    return pd.DataFrame(rows)


def _order(values: pd.Series) -> str:
    """Policies by value, smallest first, as ``a < b = c``: ``=`` joins exactly equal values
    (policies whose runs coincide), in the order of ``values``' index."""
    ordered = values.sort_values(kind="stable")
    text = ""
    for i, (policy, v) in enumerate(ordered.items()):
        if i:
            text += " = " if v == ordered.iloc[i - 1] else " < "
        text += str(policy)
    return text


def _consistent(twin: pd.Series, emu: pd.Series) -> bool:
    """No pair of policies the twin orders strictly (a < b) is reversed or tied in the
    emulation; a pair the twin ties constrains nothing."""
    for a, b in itertools.combinations(twin.index, 2):
        if twin[a] != twin[b] and np.sign(twin[a] - twin[b]) != np.sign(emu[a] - emu[b]):
            return False
    return True


def ranking(per_run: pd.DataFrame) -> pd.DataFrame:
    """Per experiment and scenario: policies ordered by avg SCT (fastest first) in the twin
    and in the emulation (mean over runs), as ``a < b = c`` strings (``=``: exactly equal),
    and ``same``: whether the emulation keeps every order the twin gives strictly."""
    rows = []
    for (exp, scen), g in per_run.groupby(["experiment", "scenario"], sort=False):
        mean = g.groupby("policy")[["avg_sct_twin_s", "avg_sct_emulated_s"]].mean()
        mean = mean.loc[policy_order(mean.index)]  # ties in registry order
        twin, emu = mean["avg_sct_twin_s"], mean["avg_sct_emulated_s"]
        rows.append({"experiment": exp, "scenario": scen, "fluid_order": _order(twin),
                     "emulation_order": _order(emu), "same": _consistent(twin, emu)})
    return pd.DataFrame(rows)


def pair_check(per_run: pd.DataFrame, separation: float = SEPARATION) -> pd.DataFrame:
    """Every pair (faster, slower) of policies whose twin avg SCTs differ by >= ``separation``
    (slower / faster - 1, per seed), with the repetitions compared (same seed and repetition
    index) and how many of them the emulation orders the same way."""
    rows = []
    for (exp, scen, seed), g in per_run.groupby(["experiment", "scenario", "workload_seed"], sort=False):
        twin = g.groupby("policy")["avg_sct_twin_s"].mean()
        emu = g.pivot_table(index="repetition", columns="policy", values="avg_sct_emulated_s")
        for a, b in itertools.combinations(sorted(twin.index), 2):
            fast, slow = (a, b) if twin[a] <= twin[b] else (b, a)
            gap = twin[slow] / twin[fast] - 1.0
            if gap < separation:
                continue
            both = emu[[fast, slow]].dropna()
            same = int((both[fast] < both[slow]).sum())
            rows.append({"experiment": exp, "scenario": scen, "workload_seed": seed,
                         "faster": fast, "slower": slow, "twin_gap": gap,
                         "emulated_gap_min": float((both[slow] / both[fast] - 1.0).min()),
                         "repetitions": len(both), "same_order": same,
                         "holds": same == len(both) and len(both) > 0})
    return pd.DataFrame(rows)


def targets(per_run: pd.DataFrame, summary: pd.DataFrame, pairs: pd.DataFrame) -> list[dict]:
    """The three criteria with their measured numbers and a verdict (``holds``)."""
    out = []
    dev = (summary["stage_ratio_median"] - 1.0).abs()
    worst = summary.loc[dev.idxmax()] if not summary.empty else None
    out.append({
        "target": f"median per-stage emulated/twin SCT within {STAGE_RATIO_TOL:.0%} of 1, every policy "
                  "(mean over runs)",
        "holds": bool((dev <= STAGE_RATIO_TOL).all()) if not summary.empty else False,
        "measured": (f"range {summary['stage_ratio_median'].min():.3f}-"
                     f"{summary['stage_ratio_median'].max():.3f}; worst {worst['experiment']} "
                     f"{worst['policy']} {worst['stage_ratio_median']:.3f}; single runs "
                     f"{per_run['stage_ratio_median'].min():.3f}-{per_run['stage_ratio_median'].max():.3f}")
        if worst is not None else "no runs"})
    if pairs.empty:
        out.append({"target": f"same order as the twin where it separates policies by >= {SEPARATION:.0%}, "
                              "every repetition", "holds": False,
                    "measured": "no pair of policies is separated that much by the twin"})
    else:
        bad = pairs[~pairs["holds"]]
        out.append({
            "target": f"same order as the twin where it separates policies by >= {SEPARATION:.0%}, "
                      "every repetition",
            "holds": bool(bad.empty),
            "measured": f"{len(pairs) - len(bad)} of {count(len(pairs), 'pair')} in every repetition "
                        f"({int(pairs['same_order'].sum())} of "
                        f"{count(pairs['repetitions'].sum(), 'comparison')})"
                        + ("" if bad.empty else "; reversed: " + ", ".join(
                            f"{r['experiment']} seed {r['workload_seed']} {r['faster']} vs {r['slower']} "
                            f"(twin +{r['twin_gap']:.0%}, "
                            f"{r['repetitions'] - r['same_order']}/{r['repetitions']} reps)"
                            for _, r in bad.iterrows()))})
    lat = per_run["class_latency_p95_ms"].dropna()
    over = per_run[per_run["class_latency_p95_ms"] > CLASS_LATENCY_P95_MS]
    out.append({
        "target": f"class latency p95 <= {CLASS_LATENCY_P95_MS:.0f} ms, every run",
        "holds": bool(len(lat) == len(per_run) and over.empty and len(lat) > 0),
        "measured": (f"p95 median {lat.median():.1f} ms, max {lat.max():.1f} ms over "
                     f"{count(len(lat), 'run')}; max {per_run['class_latency_max_ms'].max():.1f} ms"
                     + ("" if over.empty else f"; {count(len(over), 'run')} over"))
        if len(lat) else "not recorded"})
    return out


def _pm(mean: float, ci: float) -> str:
    """``mean ± ci``, or the mean alone when there is no interval (one run)."""
    return f"{mean:.3f}" + ("" if pd.isna(ci) else f" ± {ci:.3f}")


def write_reproduction(runs: pd.DataFrame, tables: Path, figs: Path) -> tuple[list[str], list[Path]]:
    """Write tables/reproduction_runs.csv, reproduction.csv, reproduction_pairs.csv and
    reproduction_ranking.csv and the figure; return (summary lines, figure paths)."""
    from analysis import plots
    per_run = run_ratios(runs)
    if per_run.empty:
        return [], []
    per_run = sort_by_policy(per_run)
    summary = sort_by_policy(ratio_summary(per_run))
    ranks = ranking(per_run)
    pairs = pair_check(per_run)
    checks = targets(per_run, summary, pairs)
    tables = Path(tables)
    write_table(per_run, tables / "reproduction_runs.csv")
    write_table(summary, tables / "reproduction.csv")
    write_table(ranks, tables / "reproduction_ranking.csv")
    write_table(pairs, tables / "reproduction_pairs.csv")
    fig_paths = plots.reproduction(summary, figs)
    lines = ["", "## Packet level: reproduction of the fluid twin", "",
             "Per policy, emulated / fluid-twin ratio (same trace, same policy, trace seconds) of "
             "avg SCT and the median and p95 over stages of the per-stage SCT ratio; mean over "
             "the row's runs (`runs`: seeds x repetitions), ± the 95% t-interval over them "
             "(shown for two or more runs), `tables/reproduction*.csv`.", "",
             "| experiment | scenario | policy | runs | avg SCT emulated (s) | avg SCT twin (s) | "
             "avg SCT ratio | stage ratio median | stage ratio p95 |",
             "|---|---|---|---|---|---|---|---|---|"]
    for _, r in summary.iterrows():
        lines.append(f"| {r['experiment']} | {r['scenario']} | {r['policy']} | {int(r['runs'])} | "
                     f"{r['avg_sct_emulated_s']:.3f} | {r['avg_sct_twin_s']:.3f} | "
                     f"{_pm(r['avg_ratio'], r['avg_ratio_ci95'])} | "
                     f"{_pm(r['stage_ratio_median'], r['stage_ratio_median_ci95'])} | "
                     f"{_pm(r['stage_ratio_p95'], r['stage_ratio_p95_ci95'])} |")
    lines += ["", "Policy order by avg SCT, fastest first (emulation: mean over runs; `=`: exactly "
              "equal, in registry order; same: no pair the twin orders is reversed or tied in "
              "the emulation, pairs the twin ties aside):", "",
              "| experiment | scenario | fluid twin | emulation | same |", "|---|---|---|---|---|"]
    for _, r in ranks.iterrows():
        lines.append(f"| {r['experiment']} | {r['scenario']} | {r['fluid_order']} | "
                     f"{r['emulation_order']} | {'yes' if r['same'] else 'no'} |")
    if not pairs.empty:
        lines += ["", f"Pairs the twin separates by >= {SEPARATION:.0%} on a seed's trace (twin gap = "
                  "slower / faster - 1): repetitions in which the emulation orders them the same way:", "",
                  "| experiment | scenario | seed | faster | slower | twin gap | emulated gap (min over reps) | "
                  "same order |", "|---|---|---|---|---|---|---|---|"]
        for _, r in pairs.iterrows():
            lines.append(f"| {r['experiment']} | {r['scenario']} | {r['workload_seed']} | "
                         f"{r['faster']} | {r['slower']} | "
                         f"{r['twin_gap'] * 100:+.1f}% | {r['emulated_gap_min'] * 100:+.1f}% | "
                         f"{r['same_order']}/{r['repetitions']} |")
    lines += ["", "Scheduler reaction per run (coflow release -> class on the senders' sockets, "
              "wall-clock ms) and the machine's 1-min load average when the run started:", "",
              "| experiment | run | latency median (ms) | p95 (ms) | max (ms) | load avg | wall (s) |",
              "|---|---|---|---|---|---|---|"]
    for _, r in per_run.iterrows():
        lines.append(f"| {r['experiment']} | {Path(r['run_dir']).name} | {r['class_latency_median_ms']:.1f} | "
                     f"{r['class_latency_p95_ms']:.1f} | {r['class_latency_max_ms']:.1f} | "
                     f"{'-' if pd.isna(r['loadavg_1min']) else format(r['loadavg_1min'], '.1f')} | "
                     f"{r['wall_s']:.0f} |")
    lines += ["", "Criteria, checked on the records above:", ""]
    for c in checks:
        lines.append(f"- {c['target']}: **{'holds' if c['holds'] else 'does not hold'}** ({c['measured']})")
    return lines, fig_paths


__all__ = ["run_ratios", "ratio_summary", "ranking", "pair_check", "targets", "write_reproduction",
           "STAGE_RATIO_TOL", "SEPARATION", "CLASS_LATENCY_P95_MS"]
