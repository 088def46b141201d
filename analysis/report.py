"""Build ``summary.md``, ``tables/*.csv`` and ``figures/`` from a results directory (files only).

Everything is written under the directory analysed and nowhere else. The policies shown
are the policies of the records (``analysis.policies``: registry order, unknown names
after); the reference of every ratio is ``reference`` (``--reference``), by default
``beamer`` when the records have it, else the first policy in registry order, and every
ratio of policies is the reference's over the other's (< 1: the reference is faster; the
summary's first table, ``ratio_table_lines``, and its CSV columns ``*_ratio_ref_over_policy*``
say so). Tables name
runs relative to the results directory (no absolute paths); scenarios are in the order of
their values (numbers as numbers). The summary's "Tables" section says what every table
written holds (``TABLE_DOC``: what a row is, the key columns and their units), and its
first line is the command that regenerates it (the flags given included: each run of the
analysis starts from the defaults).

The analysis owns ``figures/`` and ``tables/`` of the directory it analyses: after a
successful run, every file there with a suffix the analysis writes (``.png``, ``.pdf``,
``.csv`` in ``figures/``; ``.csv`` in ``tables/``: ``analysis.load.OWNED``) that this run
did not write is removed (``analysis.load.remove_stale``; the removed names go to
stderr), so that a figure no longer drawn (another experiment's SCT CDFs, the line figure
of an experiment no longer ``figure = "line"``) does not linger. The rule is the folders'
content, not a manifest of earlier runs, so files left by any earlier version go too;
other files, subfolders and everything outside the two folders (the run records,
``summary.md``, ``NOTES.md``, ``headroom.csv``) are never deleted. Keep files of your own
elsewhere.

Figures: per experiment the normalised bars, and the line figure where the experiment
asks for it (``figure = "line"``) and has one swept numeric key; where it asks but
cannot have one, the bars' title and the summary say why (``line_fallback``, also on
stderr). SCT CDFs: one figure per scenario of ``CDF_EXPERIMENT`` (else the first
experiment) or of the experiments asked for (``cdf``, ``--cdf``); the summary names them
and says how to draw the others'.
"""
from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from analysis import plots
from analysis.load import (NO_SWEEP, load_jobs, load_runs, load_stages, load_twin_pairs,
                           recording_files, remove_stale, scenario_order, sort_scenarios,
                           write_table)
from analysis.criteria import congestion_section, shared_scenario_lines, suite_check_lines
from analysis.metrics import AVG_SCT_RATIO, reference_ratios, sct_table
from analysis.regimes import regime_section
from analysis.verdict import verdict_section
from analysis.cluster import cluster_section
from analysis.cluster_stages import cluster_stage_lines
from analysis.host_load import host_load_section
from analysis.text import cell, count, units_by_experiment
from analysis.policies import (choose_reference, policy_order, reference_note, sort_by_policy,
                               styles as policy_styles)

# swept parameter -> (x label, log2 x axis) of the line figures (experiments with
# ``figure = "line"``); other parameters get their own name and a linear axis
PARAM_LABELS = {
    "workload.arrival_rate_per_s": ("tuning-job arrival rate (jobs/s)", False),
    "experiment.priority_classes": ("priority classes K", True),
    "workload.num_hosts": ("hosts", True),
}
CDF_EXPERIMENT = "pattern"  # the SCT CDFs' experiment when present (else the first; --cdf)


def _where(results: Path) -> str:
    """How to name the results directory in the summary: relative to the repository when
    inside it, else ``DIR`` (never a machine-specific absolute path)."""
    repo = Path(__file__).resolve().parents[1]
    try:
        return Path(results).resolve().relative_to(repo).as_posix()
    except ValueError:
        return "DIR"


def cdf_stem(experiment: str, scenario: str, scenarios: int) -> str:
    """File name (no suffix) of an SCT CDF figure: ``<experiment>_sct_cdf``, with the
    scenario appended (characters other than letters, digits and ``._+-`` as ``-``) when
    the experiment has more than one."""
    if scenarios <= 1:
        return f"{experiment}_sct_cdf"
    return f"{experiment}_sct_cdf_" + re.sub(r"[^A-Za-z0-9._+-]+", "-", scenario)


def check_cdf_all(cdf: list[str]) -> None:
    """ValueError if ``cdf`` gives ``all`` (every experiment) beside other names."""
    if "all" in cdf and len(cdf) > 1:
        raise ValueError(f"--cdf {' '.join(cdf)}: 'all' draws every experiment; give it alone "
                         "or name the experiments")


def cdf_experiments(runs: pd.DataFrame, cdf: list[str] | None) -> list[str]:
    """The experiments whose SCT CDFs are drawn: ``cdf`` (``["all"]``: every one), by
    default ``CDF_EXPERIMENT`` when the records have it, else the first experiment.
    ValueError naming the experiments if ``cdf`` names one without runs, or if it gives
    ``all`` beside other names."""
    exps = list(dict.fromkeys(runs["experiment"]))
    if not cdf:
        return [CDF_EXPERIMENT if CDF_EXPERIMENT in exps else exps[0]]
    check_cdf_all(cdf)
    if "all" in cdf:
        return exps
    unknown = [e for e in cdf if e not in exps]
    if unknown:
        raise ValueError(f"--cdf {' '.join(unknown)}: no runs of that experiment in the records "
                         f"(experiments: {', '.join(exps)})")
    return list(dict.fromkeys(cdf))


def line_fallback(er: pd.DataFrame) -> str | None:
    """Why an experiment that asks for ``figure = "line"`` gets bars only (None: it gets the
    line figure, or does not ask for one)."""
    line = er["figure"] == "line"
    if not line.any():
        return None
    if not line.all():
        return (f'its runs disagree: {int(line.sum())} record figure = "line", '
                f'{int((~line).sum())} "bars"; runs the config no longer makes (the runner\'s '
                "note names them) are kept in this results directory: remove them for the "
                "figure the config asks for")
    plain = er["scenario"] == NO_SWEEP if "scenario" in er else pd.Series(False, index=er.index)
    if plain.any():
        return (f'{count(plain.sum(), "run")} without the sweep (scenario "{NO_SWEEP}", e.g. '
                "made before it was added): remove them for the line figure")
    swept = [c[len("param:"):] for c in er.columns if c.startswith("param:") and er[c].notna().all()]
    if len(swept) != 1:
        return f"{len(swept)} swept keys: {', '.join(swept)}" if swept else "no swept key"
    x = pd.to_numeric(er[f"param:{swept[0]}"], errors="coerce")
    if not x.notna().all():
        return f"values of {swept[0]} that are not numbers"
    if x.nunique() < 2:
        return f"one value of {swept[0]}"
    return None


def make_report(results: Path, reference: str | None = None, cdf: list[str] | None = None,
                progress: Callable[..., None] | None = None) -> Path:
    """Write tables, figures and summary.md under ``results``; returns summary.md's path.
    ``cdf``: the experiments whose SCT CDFs are drawn, one figure per scenario
    (``cdf_experiments``). ValueError if ``reference`` names a policy, or ``cdf`` an
    experiment, without runs in the records. Notes about figures (a line figure drawn as
    bars) go to the summary and to stderr. ``progress`` (``runner.progress.StepProgress``
    or None: nothing shown) is called as each step starts, ``progress(name)``, and as the
    figures of the experiments are drawn, ``progress("figures", done, total)``."""
    results = Path(results)
    step = progress or _quiet
    runs = load_runs(results)
    pols = policy_order(runs["policy"])
    ref = choose_reference(pols, reference)
    cdf_exps = cdf_experiments(runs, cdf)
    st = policy_styles(pols)
    command = analysis_command(_where(results), reference, cdf)
    with recording_files() as written:
        summary = _write_report(results, runs, pols, ref, reference, cdf_exps, st, written,
                                command, step=step)
    for gone in remove_stale(results, written):
        print(f"removed (no longer written): {gone.parent.name}/{gone.name}", file=sys.stderr)
    return summary


def analysis_command(where: str, reference: str | None = None,
                     cdf: list[str] | None = None) -> str:
    """The command that regenerates a summary: ``python -m analysis WHERE`` with the flags
    it was given (flags not given are at their defaults)."""
    cmd = f"python -m analysis {where}"
    if reference is not None:
        cmd += f" --reference {reference}"
    if cdf:
        cmd += " --cdf " + " ".join(dict.fromkeys(cdf))
    return cmd


def _quiet(*_args) -> None:
    """The progress of a report made without a ``progress`` callback: nothing shown."""


def _write_report(results: Path, runs, pols, ref, reference, cdf_exps, st, written,
                  command: str, step: Callable[..., None] = _quiet) -> Path:
    step(f"reading the records of {len(runs):,} runs")
    stages = load_stages(runs)
    jobs = load_jobs(runs)
    norm = sort_by_policy(sort_scenarios(reference_ratios(runs, reference=ref)))
    step("tables")
    tables = results / "tables"
    tables.mkdir(exist_ok=True)
    figs = results / "figures"
    cols = ["experiment", "scenario", "policy", "workload_seed", "avg_sct_s", "p95_sct_s",
            "avg_cct_s", "lower_bound_avg_sct_s", "avg_sct_over_lb", "wall_s"]
    rank = {p: i for i, p in enumerate(pols)}
    runs_tab = sort_scenarios(runs[[c for c in cols if c in runs]].assign(
        _r=runs["policy"].map(rank)).sort_values(["_r", "workload_seed"], kind="stable")
        .drop(columns="_r"))
    write_table(runs_tab, tables / "runs.csv")
    write_table(norm, tables / "normalised_avg_sct.csv")
    write_table(sort_by_policy(sct_table(stages)), tables / "sct_stats.csv")
    if not jobs.empty:
        trial = jobs.groupby(["experiment", "scenario", "policy"])["trial_time_s"].agg(
            ["mean", "size"]).reset_index().rename(
            columns={"mean": "avg_trial_time_s", "size": "trials"})
        write_table(sort_by_policy(sort_scenarios(trial)), tables / "trial_times.csv")
    figure_paths: list[Path] = []
    figure_notes: list[str] = []
    without_ref = []
    experiments = list(dict.fromkeys(runs["experiment"]))
    for k, exp in enumerate(experiments):
        step("figures", k, len(experiments))
        if ref not in set(runs.loc[runs["experiment"] == exp, "policy"]):
            without_ref.append(exp)
            continue
        er = runs[runs["experiment"] == exp]
        why = line_fallback(er)
        mixed = why is not None and why.startswith("its runs disagree")
        if why:
            figure_notes.append(
                f"{exp}: drawn as bars ({why})." if mixed else
                f'{exp}: `figure = "line"` is set, but the figure is bars ({why}; a line '
                "figure needs exactly one swept numeric key with two or more values).")
        figure_paths += plots.normalised_bars(
            norm, exp, ref, figs, st,
            backend="packet level" if "backend" in er and (er["backend"] == "mininet").all()
            else None,
            note=(None if not why else "runs disagree on figure: drawn as bars" if mixed
                  else f'figure = "line" is set: drawn as bars ({why})'))
        if (er["figure"] == "line").all() and not why:
            param = next(c[len("param:"):] for c in er.columns
                         if c.startswith("param:") and er[c].notna().all())
            label, logx = PARAM_LABELS.get(param, (param.split(".")[-1], False))
            figure_paths += plots.sweep_lines(runs, norm, exp, param, label, ref, figs, logx, st)
    step("figures", len(experiments), len(experiments))
    step("SCT CDFs")
    for exp in cdf_exps:
        scens = scenario_order(runs.loc[runs["experiment"] == exp, "scenario"])
        for scen in scens:
            figure_paths += plots.sct_cdf(stages, exp, scen, ref, figs, st,
                                          stem=cdf_stem(exp, scen, len(scens)))
    for n in figure_notes:
        print(f"note: {n}", file=sys.stderr)
    figure_notes.append(_cdf_note(runs, cdf_exps, analysis_command(_where(results), reference)))
    step("the other figures and sections")
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
    from analysis.paired import paired_section, seeds_section
    from analysis.reproduction import run_ratios
    paired_lines, paired_figs = paired_section(run_ratios(runs), tables, figs, ref, st)
    paired_lines += seeds_section(run_ratios(runs), tables, ref)
    figure_paths += paired_figs
    from analysis.fluid_error import fluid_error_section
    error_lines, error_figs = fluid_error_section(runs, tables, figs)
    figure_paths += error_figs
    packet_lines = repro_lines + paired_lines + error_lines + write_packet_tables(
        runs, tables, ref, latency_shown=bool(repro_lines))
    # ---
    regime_lines, regime_figs = regime_section(runs, stages, tables, figs, ref, st)
    figure_paths += regime_figs
    cong_lines = cluster_section(runs, tables, ref) \
        + cluster_stage_lines(runs, results, tables, ref) + regime_lines \
        + congestion_section(runs, stages, tables, ref) \
        + verdict_section(runs, stages, tables) \
        + shared_scenario_lines(runs) + host_load_section(runs, results, tables, ref) \
        + suite_check_lines(runs, stages, ref) \
        + headroom_lines(results)
    step("summary")
    summary = results / "summary.md"
    summary.write_text(_summary_md(runs, norm, figure_paths, results, ref, reference,
                                   without_ref, fidelity, cong_lines + packet_lines,
                                   figure_notes, [p.name for p in written if p.parent == tables],
                                   command))
    return summary


def _cdf_note(runs: pd.DataFrame, cdf_exps: list[str], command: str) -> str:
    """The summary's sentence on which experiments and scenarios the SCT CDFs show, and how
    to draw the others' (``command``: the analysis command without ``--cdf``)."""
    parts = []
    for exp in cdf_exps:
        scens = scenario_order(runs.loc[runs["experiment"] == exp, "scenario"])
        parts.append(f"`{exp}` ({'every scenario: ' + ', '.join(scens) if len(scens) > 1 else scens[0]})")
    others = [e for e in dict.fromkeys(runs["experiment"]) if e not in cdf_exps]
    text = (f"SCT CDFs (`*_sct_cdf*`, one figure per scenario) of {'; '.join(parts)}")
    if others:
        text += (f". Those of another experiment: `{command} --cdf EXPERIMENT` "
                 "(`--cdf all`: every experiment)")
    return text + "."


GENERAL_TABLES = ("runs.csv", "normalised_avg_sct.csv", "sct_stats.csv", "trial_times.csv")

# What every table of tables/ holds: what a row is, the key columns and their units
# ("{ref}": the reference policy). The summary lists the general tables first, then the
# others alphabetically; a table without an entry is named with a pointer to its writer.
TABLE_DOC = {
    "cluster_verdict_models.csv": "one row per family, placement, design and baseline compared "
                                  "in the headline: the ideal fluid model's ratio mean and "
                                  "ci95 and the packet-aware model's, same traces.",
    "fluid_error_runs.csv": "one row per packet-level run of the validation set: "
                            "`emulated_avg_sct_s`, each fluid model's twin `*_avg_sct_s` "
                            "(ideal, packet-aware; trace s) and `*_error` = twin / emulated - 1.",
    "fluid_error.csv": "one row per policy and fluid model over the validation set: median, p90 and "
                       "max of |twin / emulated - 1| and the mean signed error.",
    "fluid_error_pairs.csv": "one row per validation trace and pair of policies: avg SCT ratio "
                             "emulated and in each model, and model - emulated ratio.",
    "fluid_error_pair_summary.csv": "one row per pair of policies and model: median, p90, max of "
                                    "|model ratio - emulated ratio| over the traces.",
    "fluid_error_targets.csv": "one row per fluid model: the worst policy's median and p90 abs "
                              "error, beamer / sincronia mean abs ratio error, and the "
                              "separated pairs (>= 10%) the emulation orders the same way.",
    "fluid_error_ratios.csv": "one row per validation experiment and policy: the mean over its "
                              "traces of beamer / policy avg SCT, emulated (`emulated_ratio`) "
                              "and in each fluid model (`ideal_ratio`, `packet-aware_ratio`).",
    "runs.csv": "one row per run: `avg_sct_s` = the run's avg SCT (mean over its stages, s), "
                "`p95_sct_s`, `avg_cct_s`, `lower_bound_avg_sct_s` (s), `avg_sct_over_lb`, "
                "`wall_s` (the run's wall-clock time, s).",
    "normalised_avg_sct.csv": "one row per experiment, scenario and policy, over its runs: "
                              "`avg_sct_ratio_ref_over_policy_mean` +- "
                              "`avg_sct_ratio_ref_over_policy_ci95` (`reference` {ref}'s avg "
                              "SCT / the policy's, per run on the same trace, < 1: {ref} "
                              "faster; 95% t-interval), and "
                              "`avg_sct_s_mean` = the mean of the runs' avg SCTs (s; the "
                              "\"avg SCT, mean of runs\" column above); `seeds` = the number "
                              "of runs, `unit` = what they are (`seeds`, `repetitions` of one "
                              "seed, or `runs` of both).",
    "sct_stats.csv": "one row per experiment, scenario and policy, every stage of every run "
                     "pooled: `pooled_avg_sct_s` (a run with more stages weighs more, so it "
                     "differs from `avg_sct_s_mean` where runs have different numbers of "
                     "stages), `pooled_p50_sct_s` / `pooled_p95_sct_s` / `pooled_p99_sct_s` "
                     "(s), `stages`.",
    "trial_times.csv": "one row per experiment, scenario and policy: `avg_trial_time_s` = the "
                       "mean over the records' jobs (`job_id`: one trial's work inside one "
                       "stage) of the time from the stage's start to the end of the job's last "
                       "coflow (s); `trials` = the number of those jobs. Not a tuning job's "
                       "completion (a tuning job is an app; its completion is "
                       "`avg_app_completion_s` in `tables/congestion.csv` and the \"tuning "
                       "job\" column of the regime table, where those families ran).",
    "capture_reader.csv": "one row per packet-level run: `packets` read from its switch "
                          "captures, the reader's wall-clock time `read_wall_s` (s) and "
                          "`packets_per_s`, and the run's wall-clock time `run_wall_s` (s).",
    "capture_vs_reported.csv": "one row per packet-level run: `stages` compared, "
                               "`abs_diff_median_s` / `abs_diff_max_s` = median / max over its "
                               "stages of |SCT from the captures - SCT the driver reported| "
                               "(trace s), `rel_diff_max` (fraction of the reported SCT), and "
                               "the two avg SCTs `avg_sct_capture_s` / `avg_sct_reported_s` "
                               "(trace s).",
    "congestion.csv": "one row per seed set (`seed_set`), `cong-*` experiment, scenario and policy, mean over seeds: "
                      "`avg_sct_s`, `p99_sct_s`, `max_sct_s`, `avg_app_completion_s` (a tuning "
                      "job's completion; all s) and `avg_sct_over_lb`.",
    "congestion_ratios.csv": "one row per seed set (`seed_set`), `cong-*` experiment and "
                             "scenario: a column per other policy = {ref}'s avg SCT / that "
                             "policy's (mean of per-seed ratios; < 1: {ref} faster), "
                             "`p99_vs_fair` = {ref}'s p99 SCT / fair's, `seeds`, "
                             "`same_runs_as` (the scenario whose runs it shares, if any).",
    "emulation_vs_fluid.csv": "one row per stage of every packet-level run with a fluid twin: "
                              "`sct_mininet_s` (emulated) and `sct_fluid_s` (the twin's), "
                              "trace s; the points of the figure `emulation_vs_fluid`.",
    "packet_level_capture.csv": "one row per packet-level experiment, scenario and policy: "
                                "`avg_sct_capture_ratio_ref_over_policy_mean` +- `..._ci95` "
                                "= {ref}'s avg SCT from the captures / the policy's (per run "
                                "of the same trace, mean over `seeds` runs of kind `unit`; "
                                "95% t-interval; < 1: {ref} faster), "
                                "`avg_sct_ratio_ref_over_policy_mean` +- `..._ci95` the same "
                                "from the driver-reported SCTs, `avg_sct_capture_s_mean` / "
                                "`avg_sct_s_mean` (trace s).",
    "paired_ratios.csv": "one row per packet-level experiment, seed and other policy: "
                         "`avg_sct_ratio_ref_over_policy_mean` = mean over `repetitions` of "
                         "{ref}'s avg SCT / the policy's (same repetition index; < 1: {ref} "
                         "faster), its 95% intervals `t95_low` / `t95_high` (Student t) and "
                         "`ci95_low` / `ci95_high` (bootstrap; both from 3 or more "
                         "repetitions), `twin_avg_sct_ratio_ref_over_policy` (the fluid "
                         "twin's) and `avg_sct_ratio_ref_over_policy_per_repetition`.",
    "paired_seeds.csv": "one row per packet-level experiment, scenario and other policy run "
                        "on 3 or more seeds: `emulated_avg_sct_ratio_ref_over_policy_mean` / "
                        "`twin_avg_sct_ratio_ref_over_policy_mean` = mean over `seeds` of "
                        "{ref}'s avg SCT / the policy's (< 1: {ref} faster; emulated: mean "
                        "over the seed's repetitions), `difference_mean` of emulated - twin with "
                        "its Student-t 95% interval `difference_t95_low` / "
                        "`difference_t95_high`, `seeds_in_twin_order` (emulated ratio on the "
                        "twin's side of 1) and `per_seed` (seed:emulated/twin).",
    "priority_isolation.csv": "one row per packet-level run with priority classes: "
                              "`lower_share` = bytes leaving a switch port from classes below "
                              "the highest queued one / all bytes leaving while two or more "
                              "classes were queued, `lower_share_per_class` = the same per "
                              "lower class queued (strict priority predicts about the "
                              "guaranteed share, `MIN_SHARE` of `emulation/mininet/qos.py`); "
                              "`departures`, `departures_counted`, `departures_unmatched` "
                              "(packets).",
    "regime_scenarios.csv": "one row per seed set, `regime-*` experiment, scenario and other policy: "
                            "{ref}'s avg SCT (`avg_sct_ratio_ref_over_policy`), p99 SCT "
                            "(`p99_sct_ratio_ref_over_policy`) and average tuning-job "
                            "completion time (`avg_app_completion_ratio_ref_over_policy`) / "
                            "the policy's, mean of per-seed ratios (< 1: {ref} faster).",
    "host_load.csv": "one row per fluid run of {ref} with a JSON trace: `peak_per_host` (the "
                     "most trial processes, workers and parameter servers, active on one host "
                     "at once; a job active from its stage's start to its last coflow's end) "
                     "and `mean_per_busy_host` (per host, the time-weighted number while it "
                     "carries one, averaged over the hosts that do); for a run whose trials a "
                     "cluster placed, GPUs held instead (from `trials.csv`).",
    "cluster_verdict.csv": "one row per family (a `gpus-<tuner>` experiment's tuner, "
                           "`congestion`, `gpus per server`, or the experiment), placement, "
                           "design (`beamer-sbssi`, `beamer`) and baseline of the runs a "
                           "cluster placed: `ratio_mean` (the design's avg SCT / the "
                           "baseline's, mean of per-run ratios, < 1: the design faster), "
                           "`ci95` (its 95% t-interval half-width), `n` (runs, a "
                           "configuration two experiments share counted once).",
    "cluster_stages.csv": "one row per cluster experiment, placement, kind of stage "
                          "(`followed`: another stage of its tuning job depends on it; "
                          "`last`: none does) and policy ({ref}, and Sincronia or, with "
                          "Sincronia the reference, beamer): `stages`, "
                          "mean `sct_s`, mean `trial_wait_s` (a trial's wait for GPUs) and "
                          "`trial_held_s` (the time a trial holds its GPUs).",
    "cluster_placement.csv": "one row per experiment, sweep point (`point`: its swept "
                             "values other than placement and sync pattern) and placement of "
                             "the runs whose trials a cluster placed: `/ <policy>` ({ref}'s avg SCT / the policy's, "
                             "mean of per-run ratios) and `/ <policy> ci95` (its 95% "
                             "t-interval half-width), {ref}'s `{ref}_avg_sct_s`, "
                             "`trial_wait_mean_s`, `multi_host_trial_share`, "
                             "`gpu_busy_share`, `jct / sincronia` (with its `ci95`) and "
                             "`normalised_jct` "
                             "(JCT / the same tuning job alone).",
    "verdict.csv": "one row per seed set (`seed_set`), family (a pinned-hosts tuner regime or "
                   "`congestion`), design (`beamer-sbssi`, `beamer`) and baseline: "
                   "`ratio_mean` (the design's avg SCT / the baseline's, mean of per-run "
                   "ratios; congestion: over its distinct scenarios; < 1: the design faster), "
                   "`worst` (the largest scenario mean), `n` (runs, or distinct scenarios).",
    "regimes.csv": "one row per seed set (`seed_set`), pinned-hosts tuner regime "
                   "(`regime-*`) and other policy: "
                   "`avg_sct_ratio_ref_over_policy_mean` +- "
                   "`avg_sct_ratio_ref_over_policy_ci95` ({ref}'s avg SCT / the policy's, "
                   "< 1: {ref} faster; mean over the regime's `runs` = scenarios x seeds; "
                   "95% t-interval), `p99_sct_ratio_ref_over_policy_mean`, "
                   "`avg_app_completion_ratio_ref_over_policy_mean` (tuning-job completion), "
                   "`worst_scenario_avg_sct_ratio_ref_over_policy`.",
    "reproduction.csv": "one row per packet-level experiment, scenario and policy: emulated / "
                        "fluid-twin ratios, mean over `runs` (seeds x repetitions) with "
                        "`*_ci95` (95% t), `*_min`, `*_max`: `avg_ratio` (of avg SCT), "
                        "`stage_ratio_median` / `stage_ratio_p95` (over stages, of the "
                        "per-stage ratio); `avg_sct_emulated_s`, `avg_sct_twin_s` (trace s).",
    "reproduction_pairs.csv": "one row per pair of policies the fluid twin separates by 10% "
                              "or more (per experiment, scenario and seed): `faster`, "
                              "`slower`, `twin_gap` (slower / faster - 1), `emulated_gap_min` "
                              "(over repetitions), `same_order` of `repetitions`, `holds`.",
    "reproduction_ranking.csv": "one row per packet-level experiment and scenario: "
                                "`fluid_order` and `emulation_order` (policies by avg SCT, "
                                "fastest first, `=` between exactly equal ones; emulation: mean over "
                                "runs), `same` (no pair the twin orders strictly is reversed or "
                                "tied in the emulation).",
    "reproduction_runs.csv": "one row per packet-level run with a fluid twin: "
                             "`avg_sct_emulated_s` / `avg_sct_twin_s` (trace s), `avg_ratio`, "
                             "`stage_ratio_median` / `stage_ratio_p95`, the class latency "
                             "`class_latency_median_ms` / `class_latency_p95_ms` / "
                             "`class_latency_max_ms` (ms, wall clock), `loadavg_1min` at its "
                             "start and `wall_s` (s).",
    "scheduler_reaction.csv": "one row per packet-level run: the class latency (a coflow's "
                              "release -> its class set on its senders' sockets) `median_ms` / "
                              "`p95_ms` / `max_ms` (ms, wall clock) over its `coflows`.",
}


def tables_lines(ref: str, written: list[str], headroom: str | None = None) -> list[str]:
    """The summary's "Tables" section: one line per table written (``TABLE_DOC``), the
    general tables first, then ``headroom`` (the path of ``headroom.csv`` as the summary
    names it) when the directory has one."""
    names = list(dict.fromkeys(written))
    order = [n for n in GENERAL_TABLES if n in names] + sorted(
        n for n in names if n not in GENERAL_TABLES)
    lines = ["", "## Tables", "",
             "In `tables/` (written by the analysis; every number from the run records):", ""]
    for name in order:
        doc = TABLE_DOC.get(name)
        lines.append(f"- `{name}`: " + (doc.format(ref=ref) if doc else
                                        "written by a section above (no description)."))
    if headroom:
        lines += ["", f"Beside `tables/`, not written by the analysis (only read): `{headroom}` "
                  "(`scripts/headroom.py`): one row per small congested Hyperband instance "
                  "(`seed`): `lower_bound_avg_sct_s`, `best_static_avg_sct_s` (the best static "
                  "priority order found, `best_static_order`, over `orders_evaluated` orders) "
                  "and each policy's `<policy>_avg_sct_s` (s)."]
    return lines


def realloc_lines(runs, pols) -> list[str]:
    """One line naming each policy's reallocation mode in the fluid runs (run.json
    ``realloc``; a policy run under several modes lists each with its count of runs)."""
    if "realloc" not in runs or "backend" not in runs:
        return []
    fluid = runs[(runs["backend"] == "fluid") & runs["realloc"].notna()]
    parts = []
    for p in pols:
        counts = fluid.loc[fluid["policy"] == p, "realloc"].value_counts()
        if len(counts) == 1:
            parts.append(f"`{p}` {counts.index[0]}")
        elif len(counts) > 1:
            parts.append(f"`{p}` " + ", ".join(f"{m} ({n} run{'s' if n != 1 else ''})" for m, n in counts.items()))
    if not parts:
        return []
    return ["", "Reallocation mode of the fluid runs (run.json `realloc`; `queues`: decisions "
            "at coflow events, rates re-shared at every flow completion; `coflow`: both at "
            "coflow events; `flow`: both at every flow completion): " + "; ".join(parts) + "."]


def _summary_md(runs, norm, figure_paths, results: Path, ref: str, requested: str | None,
                without_ref: list[str], fidelity=None, more_lines: list[str] = (),
                figure_notes: list[str] = (), written: list[str] = (),
                command: str | None = None) -> str:
    pols = policy_order(runs["policy"])
    where = _where(results)
    command = command or analysis_command(where, requested)
    headroom = f"{where}/headroom.csv" if (results / "headroom.csv").exists() else None
    lines = ["# Results summary", "",
             f"Generated by `{command}` from the run records only"
             + (" (DIR: this results directory)" if where == "DIR" else "")
             + "; that command regenerates this summary as it is (each run of the analysis "
             "starts from the defaults: a flag not given again, `--reference` or `--cdf`, is "
             "back at its default).",
             "", reference_note(ref, requested),
             f"Policies in the records (registry order): {', '.join(f'`{p}`' for p in pols)}.",
             *realloc_lines(runs, pols),
             *ratio_table_lines(norm, ref, [p for p in pols if p != ref])]
    if without_ref:
        lines += ["", f"No runs of `{ref}` (so no ratios, and no normalised figure) in: "
                  + ", ".join(without_ref) + "."]
    lines += ["", "## Distance from the lower bound (avg SCT / LB, mean over runs)", "",
              "Per experiment, the mean over all its runs (every scenario and seed); each "
              "run's value: `avg_sct_over_lb` in `tables/runs.csv`.", ""]
    lb = runs.groupby(["experiment", "policy"])["avg_sct_over_lb"].mean().unstack("policy")
    lb_pols = [p for p in pols if p in lb.columns]
    lines.append("| experiment | " + " | ".join(lb_pols) + " |")
    lines.append("|---|" + "---|" * len(lb_pols))
    for exp, row in lb.iterrows():
        lines.append(f"| {exp} | " + " | ".join(cell(row[p], ".3f") for p in lb_pols) + " |")
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
    lines += tables_lines(ref, list(written), headroom)
    lines += ["", "## Figures", "",
              "Each figure's numbers are in `figures/<name>.csv` beside it (one row per bar, "
              "point or line, with the policy and its colour).", ""]
    lines += [f"- {n}" for n in figure_notes] + ([""] if figure_notes else [])
    for p in figure_paths:
        if p.suffix == ".png":
            lines.append(f"![{p.stem}](figures/{p.name})")
    names = sorted(dict.fromkeys(written))
    lines += ["", "The analysis owns `figures/` and `tables/`: every `.png`, `.pdf` or `.csv` "
              "there that it did not write in its last run (a figure no longer drawn) is "
              "removed; nothing outside those two folders is.",
              "", f"{count(len(runs), 'run')}; tables in `tables/`: "
              + (", ".join(names) if names else "none") + ".", ""]
    return "\n".join(lines)


def ratio_table_lines(norm: pd.DataFrame, ref: str, others: list[str]) -> list[str]:
    """The summary's first section: per experiment and scenario, ``ref``'s avg SCT / each
    other policy's (mean of per-run ratios, ``norm``: ``analysis.metrics.reference_ratios``;
    < 1: ``ref`` faster) +- the half-width of its 95% t-interval; '-' where the policy has
    no runs."""
    mean, ci = f"{AVG_SCT_RATIO}_mean", f"{AVG_SCT_RATIO}_ci95"
    lines = ["", f"## {ref}'s average SCT relative to each other policy", "",
             f"Each cell: {ref}'s avg SCT / that policy's (< 1: {ref} faster; 0.950 = {ref}'s "
             "avg SCT 5% shorter), the mean over runs of the ratio taken per run against "
             f"{ref}'s run of the same trace ({ratio_unit_note(norm)}), then `± x`: the "
             "half-width of that mean's 95% t-interval (from two or more runs); runs = seeds "
             "x repetitions; '-': no runs of that policy in the scenario "
             f"(`{mean}` and `{ci}` in `tables/normalised_avg_sct.csv`). A run's avg SCT is "
             f"the mean over its stages; \"{ref} avg SCT, mean of runs\" is the mean of those "
             "over the scenario's runs (`avg_sct_s_mean` in `tables/normalised_avg_sct.csv`), "
             "not the mean over all their stages pooled (`pooled_avg_sct_s` in "
             "`tables/sct_stats.csv`).", "",
             f"| experiment | scenario | runs | {ref} avg SCT, mean of runs (s) | "
             + " | ".join(f"{ref} / {b}" for b in others) + " |",
             "|---|---|---|---|" + "---|" * len(others)]
    for (exp, scen), g in norm.groupby(["experiment", "scenario"], sort=False):
        g = g.set_index("policy")
        if ref not in g.index:
            continue
        cells = [cell(g.loc[b, mean], ".3f")
                 + (f" ± {g.loc[b, ci]:.3f}" if pd.notna(g.loc[b, ci]) else "")
                 if b in g.index and pd.notna(g.loc[b, mean]) else "-" for b in others]
        lines.append(f"| {exp} | {scen} | {int(g.loc[ref, 'seeds'])} | "
                     f"{cell(g.loc[ref, 'avg_sct_s_mean'], '.2f')} | " + " | ".join(cells) + " |")
    return lines


def ratio_unit_note(norm: pd.DataFrame) -> str:
    """What the per-run ratios pair: ``per seed in every experiment``, or the experiments
    of the less common units named and the most common unit for every other one."""
    if norm.empty or "unit" not in norm:
        return "per seed"
    groups = units_by_experiment(norm)
    if len(groups) == 1:
        return f"{next(iter(groups))} in every experiment"
    main = max(groups, key=lambda w: len(groups[w]))
    return "; ".join(f"{w} in {', '.join(exps)}" for w, exps in groups.items() if w != main) \
        + f"; {main} in every other experiment"


def headroom_lines(results: Path) -> list[str]:
    """The small-instance headroom of ``scripts/headroom.py`` if its CSV is in the results."""
    path = Path(results) / "headroom.csv"
    if not path.exists():
        return []
    df = pd.read_csv(path)
    pols = policy_order(c[: -len("_avg_sct_s")] for c in df.columns if c.endswith("_avg_sct_s")
                        and c not in ("lower_bound_avg_sct_s", "best_static_avg_sct_s"))
    best = df["best_static_avg_sct_s"]
    lines = ["", "## Headroom on small instances (`scripts/headroom.py`, "
             f"`{_where(results)}/headroom.csv`: beside `tables/`, not in it)", "",
             f"{count(len(df), 'small congested Hyperband instance')}; per instance the best static priority "
             f"order found by search ({int(df['orders_evaluated'].mean())} orders on average). "
             "Each policy's avg SCT / that best order (mean over instances; 1 = as good):", "",
             "| " + " | ".join(pols) + " | best order / LB |", "|" + "---|" * (len(pols) + 1),
             "| " + " | ".join(f"{(df[p + '_avg_sct_s'] / best).mean():.3f}" for p in pols)
             + f" | {(best / df['lower_bound_avg_sct_s']).mean():.3f} |"]
    return lines
