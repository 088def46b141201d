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
written holds (``analysis.tables_doc``: what a row is, the key columns and their units), and its
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

from emulation.backends import PACKET_LEVEL
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
from analysis.tables_doc import tables_lines
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
        summary = _write_report(results=results, runs=runs, pols=pols, ref=ref,
                                reference=reference, cdf_exps=cdf_exps, st=st, written=written,
                                command=command, step=step)
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


def _write_report(*, results: Path, runs: pd.DataFrame, pols: list[str], ref: str,
                  reference: str | None, cdf_exps: list[str], st: dict, written: list[Path],
                  command: str, step: Callable[..., None] = _quiet) -> Path:
    """Write the tables, figures and summary.md of ``runs`` under ``results`` (``ref``: the
    reference policy, ``reference`` the one asked for; ``st``: the policies' styles;
    ``written``: the files written so far, ``recording_files``); returns summary.md's path."""
    n = len(runs)
    stages = load_stages(runs, progress=lambda k: step("reading the runs' stages", k, n))
    step("reading the runs' stages", n, n)
    jobs = load_jobs(runs, progress=lambda k: step("reading the runs' coflows", k, n))
    step("reading the runs' coflows", n, n)
    norm = sort_by_policy(sort_scenarios(reference_ratios(runs, reference=ref)))
    step("tables")
    tables = results / "tables"
    tables.mkdir(exist_ok=True)
    figs = results / "figures"
    _write_run_tables(tables, runs, norm, stages, jobs, pols)
    figure_paths, figure_notes, without_ref = _experiment_figures(runs, norm, ref, figs, st,
                                                                  step)
    step("SCT CDFs")
    for exp in cdf_exps:
        scens = scenario_order(runs.loc[runs["experiment"] == exp, "scenario"])
        for scen in scens:
            figure_paths += plots.sct_cdf(stages, exp, scen, ref, figs, st,
                                          stem=cdf_stem(exp, scen, len(scens)))
    for n in figure_notes:
        print(f"note: {n}", file=sys.stderr)
    figure_notes.append(_cdf_note(runs, cdf_exps, analysis_command(_where(results), reference)))
    step("the other figures and sections: lower bounds")
    figure_paths += plots.lb_ratio(runs, figs, st)
    pairs = load_twin_pairs(runs)
    fidelity = None
    if not pairs.empty:
        write_table(pairs, tables / "emulation_vs_fluid.csv")
        figure_paths += plots.emulation_vs_fluid(pairs, figs, st)
        fidelity = pairs.assign(ratio=pairs["sct_mininet_s"] / pairs["sct_fluid_s"]).groupby(
            "policy")["ratio"].agg(["median", "min", "max", "count"]).reindex(
            policy_order(pairs["policy"]))
    packet_lines, packet_figs = _packet_sections(runs, tables, figs, ref, st, step=step)
    cong_lines, cong_figs = _cluster_sections(runs, stages, results, tables, figs, ref, st,
                                              step=step)
    figure_paths += packet_figs + cong_figs
    step("summary")
    summary = results / "summary.md"
    summary.write_text(_summary_md(runs, norm, figure_paths, results, ref, reference,
                                   without_ref, fidelity, cong_lines + packet_lines,
                                   figure_notes, [p.name for p in written if p.parent == tables],
                                   command))
    return summary


def _write_run_tables(tables: Path, runs: pd.DataFrame, norm: pd.DataFrame,
                      stages: pd.DataFrame, jobs: pd.DataFrame, pols: list[str]) -> None:
    """The general tables: runs.csv, normalised_avg_sct.csv, sct_stats.csv and, when the
    records have jobs, trial_times.csv."""
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


def _experiment_figures(runs: pd.DataFrame, norm: pd.DataFrame, ref: str, figs: Path,
                        st: dict, step: Callable[..., None]
                        ) -> tuple[list[Path], list[str], list[str]]:
    """Each experiment's normalised bars and, where it asks for one and can have it, its
    line figure: the figures drawn, the notes on line figures drawn as bars
    (``line_fallback``), and the experiments without runs of ``ref`` (not drawn)."""
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
            backend="packet level" if "backend" in er and er["backend"].isin(PACKET_LEVEL).all()
            else None,
            note=(None if not why else "runs disagree on figure: drawn as bars" if mixed
                  else f'figure = "line" is set: drawn as bars ({why})'))
        if (er["figure"] == "line").all() and not why:
            param = next(c[len("param:"):] for c in er.columns
                         if c.startswith("param:") and er[c].notna().all())
            label, logx = PARAM_LABELS.get(param, (param.split(".")[-1], False))
            figure_paths += plots.sweep_lines(runs, norm, exp, param, label, ref, figs, logx, st)
    step("figures", len(experiments), len(experiments))
    return figure_paths, figure_notes, without_ref


def _packet_sections(runs: pd.DataFrame, tables: Path, figs: Path, ref: str, st: dict, *,
                     step: Callable[..., None] = _quiet) -> tuple[list[str], list[Path]]:
    """The packet-level sections' summary lines and figures: reproduction of the twin
    (``analysis/reproduction.py``), paired repetitions and seeds, the fluid model's error,
    and the captures (``analysis/packet.py``)."""
    from analysis.fluid_error import fluid_error_section
    from analysis.packet import write_packet_tables
    from analysis.paired import paired_section, seeds_section
    from analysis.reproduction import run_ratios, write_reproduction
    step("the other figures and sections: packet level against its twins")
    repro_lines, figure_paths = write_reproduction(runs, tables, figs)
    paired_lines, paired_figs = paired_section(run_ratios(runs), tables, figs, ref, st)
    paired_lines += seeds_section(run_ratios(runs), tables, ref)
    figure_paths += paired_figs
    step("the other figures and sections: the fluid model's error")
    error_lines, error_figs = fluid_error_section(runs, tables, figs)
    figure_paths += error_figs
    step("the other figures and sections: packet captures")
    lines = repro_lines + paired_lines + error_lines + write_packet_tables(
        runs, tables, ref, latency_shown=bool(repro_lines))
    return lines, figure_paths


def _cluster_sections(runs: pd.DataFrame, stages: pd.DataFrame, results: Path, tables: Path,
                      figs: Path, ref: str, st: dict, *, step: Callable[..., None] = _quiet
                      ) -> tuple[list[str], list[Path]]:
    """The summary lines of the cluster, regime, congestion, verdict, shared-scenario,
    host-load, suite-check and headroom sections, and the regime figures (a progress
    ``step`` before each of the longer ones)."""
    step("the other figures and sections: regimes")
    regime_lines, regime_figs = regime_section(runs, stages, tables, figs, ref, st)
    step("the other figures and sections: the cluster")
    lines = cluster_section(runs, tables, ref)
    step("the other figures and sections: the cluster per stage and trial")
    lines += cluster_stage_lines(runs, results, tables, ref) + regime_lines
    step("the other figures and sections: congestion, verdict")
    lines += congestion_section(runs, stages, tables, ref) + verdict_section(runs, stages, tables) \
        + shared_scenario_lines(runs)
    step("the other figures and sections: load per host")
    lines += host_load_section(runs, results, tables, ref) \
        + suite_check_lines(runs, stages, ref) + headroom_lines(results)
    return lines, regime_figs


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


def realloc_lines(runs, pols) -> list[str]:
    """One line naming each policy's reallocation mode in the fluid runs (run.json
    ``realloc``; a policy run under several modes lists each with its count of runs)."""
    if "realloc" not in runs or "backend" not in runs:
        return []
    fluid = runs[~runs["backend"].isin(PACKET_LEVEL) & runs["realloc"].notna()]
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
