"""What every table of a results directory's ``tables/`` holds, as the summary's "Tables"
section says it: ``TABLE_DOC`` (what a row is, the key columns and their units),
``GENERAL_TABLES`` (listed first) and ``tables_lines`` (the section's lines).
"""
from __future__ import annotations

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
