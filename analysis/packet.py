"""Packet-level analysis: what the captures say about each Mininet run (files only).

Owns the tables and summary sections that rest on the switch captures and the emulation's
own measurements, all in trace seconds like the records (emulated ones say so):

- ``capture_pairs``: per stage, the SCT derived from the packets (``stages_capture.csv``)
  beside the SCT the driver reported (``stages.csv``);
- ``capture_agreement``: per run, median and max |capture - reported| SCT difference;
- ``packet_level_table``: per packet-level experiment, each policy's avg SCT relative to
  the reference policy's, computed from the capture-derived SCTs, with the reported ones
  beside;
- ``scheduler_reaction``: per run, class latency median / p95 / max (ms, wall clock);
- ``isolation``: per run, the lower classes' share while a higher class was queued;
- ``capture_reader``: per run, packets read and the reader's packets/s;
  ``reader_totals``: the summary's totals and its largest run (most packets; a tie goes to
  the run whose reader took longest, then to the first run name);
- ``write_packet_tables``: writes the tables under ``tables/`` and returns the summary's
  markdown lines (the hook ``analysis/report.py`` calls).

Tables name runs by ``run`` (relative to the results directory), never by a path of the
machine the analysis ran on.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from emulation.backends import PACKET_LEVEL
from analysis.load import write_table
from analysis.metrics import ratio_column, reference_ratios
from analysis.policies import DEFAULT_REFERENCE, sort_by_policy
from analysis.text import units_by_experiment
from emulation import store


def _mininet_runs(runs: pd.DataFrame) -> pd.DataFrame:
    if "backend" not in runs:
        return runs.iloc[0:0]
    return runs[runs["backend"].isin(PACKET_LEVEL)]


def _run_json(run_dir: str) -> dict:
    return store.read_json(Path(run_dir) / "run.json")


def capture_pairs(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per stage of every Mininet run with capture records: ``sct_capture_s``,
    ``sct_reported_s`` (trace seconds) and their difference ``diff_s`` (capture - reported)."""
    parts = []
    for _, r in _mininet_runs(runs).iterrows():
        d = Path(r["run_dir"])
        if not store.has(d / "stages_capture.csv"):
            continue
        rep = store.read_table(d / "stages.csv")[["stage_id", "sct_s"]]
        cap = store.read_table(d / "stages_capture.csv")[["stage_id", "sct_s"]]
        m = cap.merge(rep, on="stage_id", suffixes=("_capture", "_reported"))
        m = m.rename(columns={"sct_s_capture": "sct_capture_s", "sct_s_reported": "sct_reported_s"})
        m["diff_s"] = m["sct_capture_s"] - m["sct_reported_s"]
        for k in ("experiment", "scenario", "policy", "workload_seed", "run_name"):
            m[k] = r.get(k)
        m["run"] = r.get("run", d.name)
        m["run_dir"] = str(d)
        parts.append(m)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def capture_agreement(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per run: stages compared, median and max |capture - reported| SCT (s) and the max
    relative difference."""
    if pairs.empty:
        return pd.DataFrame()
    p = pairs.assign(abs_diff_s=pairs["diff_s"].abs(),
                     rel_diff=pairs["diff_s"].abs() / pairs["sct_reported_s"])
    g = p.groupby(["experiment", "run", "run_dir", "policy"], sort=False)
    return pd.DataFrame({
        "stages": g.size(), "abs_diff_median_s": g["abs_diff_s"].median(),
        "abs_diff_max_s": g["abs_diff_s"].max(), "rel_diff_max": g["rel_diff"].max(),
        "avg_sct_capture_s": g["sct_capture_s"].mean(),
        "avg_sct_reported_s": g["sct_reported_s"].mean(),
    }).reset_index()


def packet_level_table(runs: pd.DataFrame, reference: str = DEFAULT_REFERENCE) -> pd.DataFrame:
    """Per packet-level experiment, scenario and policy: mean avg SCT from the captures and
    reported, and the ratio to the reference policy's (per seed, then averaged) for both."""
    mn = _mininet_runs(runs)
    if mn.empty or "avg_sct_capture_s" not in mn or mn["avg_sct_capture_s"].isna().all():
        return pd.DataFrame()
    cap = reference_ratios(mn, metric="avg_sct_capture_s", reference=reference)
    rep = reference_ratios(mn, metric="avg_sct_s", reference=reference)
    key = ["experiment", "scenario", "policy"]
    c, r = ratio_column("avg_sct_capture_s"), ratio_column("avg_sct_s")
    out = cap.merge(rep[key + [f"{r}_mean", f"{r}_ci95", "avg_sct_s_mean"]], on=key)
    return out


def scheduler_reaction(runs: pd.DataFrame) -> pd.DataFrame:
    """Per Mininet run: class latency (release -> class set on the sender sockets) median,
    p95 and max in milliseconds of wall clock, and how many coflows got a push."""
    rows = []
    for _, r in _mininet_runs(runs).iterrows():
        run = _run_json(r["run_dir"])
        lat = run.get("class_latency_emulated_s") or run.get("class_latency_s") or {}
        if lat.get("median") is None:
            continue
        rows.append({"experiment": r["experiment"], "policy": r["policy"], "run": r.get("run"),
                     "run_dir": r["run_dir"], "median_ms": lat["median"] * 1e3,
                     "p95_ms": lat["p95"] * 1e3, "max_ms": lat["max"] * 1e3,
                     "coflows": lat.get("coflows")})
    return pd.DataFrame(rows)


def isolation(runs: pd.DataFrame) -> pd.DataFrame:
    """Per Mininet run: ``priority_isolation`` of run.json (lower classes' share per class
    while a higher class was queued; strict priority with a guaranteed share per class
    predicts about that share)."""
    rows = []
    for _, r in _mininet_runs(runs).iterrows():
        iso = _run_json(r["run_dir"]).get("priority_isolation")
        if not iso:
            continue
        rows.append({"experiment": r["experiment"], "policy": r["policy"], "run": r.get("run"),
                     "run_dir": r["run_dir"], **iso})
    return pd.DataFrame(rows)


def capture_reader(runs: pd.DataFrame) -> pd.DataFrame:
    """Per Mininet run: packets read from the captures, the reader's time and packets/s,
    and the run's wall time (the reader must not dominate it)."""
    rows = []
    for _, r in _mininet_runs(runs).iterrows():
        run = _run_json(r["run_dir"])
        st = run.get("capture_reader")
        if st:
            rows.append({"experiment": r["experiment"], "policy": r["policy"], "run": r.get("run"),
                         "run_dir": r["run_dir"], **st, "run_wall_s": run.get("wall_s")})
    return pd.DataFrame(rows)


def reader_totals(reader: pd.DataFrame) -> dict:
    """The capture reader over all runs of ``capture_reader``'s table: ``packets``,
    ``read_wall_s`` (sums), ``packets_per_s`` (their ratio), and the largest run:
    ``largest`` (its row) and ``tied`` (the other runs with as many packets). Largest = most
    packets; among runs with as many, the one whose reader took longest (the worst case
    of the reader's share of a run), then the first by run name: the same run whatever
    order the records are read in."""
    top = reader.sort_values(["packets", "read_wall_s", "run"], ascending=[False, False, True],
                             kind="stable")
    largest = top.iloc[0]
    tied = top.iloc[1:][top.iloc[1:]["packets"] == largest["packets"]]
    packets, wall = int(reader["packets"].sum()), float(reader["read_wall_s"].sum())
    return {"packets": packets, "read_wall_s": wall, "packets_per_s": packets / wall,
            "largest": largest, "tied": list(tied["run"])}


def _unit_note(table: pd.DataFrame) -> str:
    """What the runs behind a ratio are, per experiment (``unit`` of ``reference_ratios``)."""
    return "; ".join(f"{w} ({', '.join(exps)})" for w, exps in units_by_experiment(table).items())


def write_packet_tables(runs: pd.DataFrame, tables: Path,
                        reference: str = DEFAULT_REFERENCE, latency_shown: bool = False
                        ) -> list[str]:
    """Write tables/capture_vs_reported.csv, packet_level_capture.csv,
    scheduler_reaction.csv, priority_isolation.csv and capture_reader.csv (those with
    data); return the summary's markdown lines (empty without capture-derived records).
    ``latency_shown``: the summary already has each run's class latency (the reproduction
    section's table, ``analysis.reproduction``), so the isolation table refers to it
    instead of repeating it."""
    tables = Path(tables)
    lines: list[str] = []
    pairs = capture_pairs(runs)
    agree = sort_by_policy(capture_agreement(pairs), ("experiment",))
    table = sort_by_policy(packet_level_table(runs, reference))
    react = sort_by_policy(scheduler_reaction(runs), ("experiment",))
    iso = sort_by_policy(isolation(runs), ("experiment",))
    reader = sort_by_policy(capture_reader(runs), ("experiment",))
    for name, df in (("capture_vs_reported", agree), ("packet_level_capture", table),
                     ("scheduler_reaction", react), ("priority_isolation", iso),
                     ("capture_reader", reader)):
        if not df.empty:
            write_table(df, tables / f"{name}.csv")
    if not table.empty:
        lines += _capture_ratio_lines(table, reference)
    if not agree.empty:
        lines += _agreement_lines(agree)
    lines += _reaction_lines(react, iso, latency_shown)
    if not reader.empty:
        lines += _reader_lines(reader)
    return lines


def _capture_ratio_lines(table: pd.DataFrame, reference: str) -> list[str]:
    """The summary's section of every policy's avg SCT and ratio to ``reference``, from
    the captures and as the driver reported them (``packet_level_table``)."""
    lines = ["", f"## Packet level: every policy relative to {reference}, from the captures", "",
             "Avg SCT (trace s) per policy from the switch captures (last payload byte "
             "at the receiver's port), the driver-reported value beside it; ratio = "
             f"{reference} / policy per run of the same trace, averaged over the runs "
             f"(< 1: {reference} faster): {_unit_note(table)}; ± is the 95% t-interval "
             "over the runs, shown only for two or more.", "",
             "| experiment | scenario | policy | runs | avg SCT capture | avg SCT reported | "
             "ratio capture | ratio reported |", "|---|---|---|---|---|---|---|---|"]
    cap, rep = ratio_column("avg_sct_capture_s"), ratio_column("avg_sct_s")
    for _, r in table.iterrows():
        lines.append(f"| {r['experiment']} | {r['scenario']} | {r['policy']} | {int(r['seeds'])} | "
                     f"{r['avg_sct_capture_s_mean']:.3f} | {r['avg_sct_s_mean']:.3f} | "
                     f"{_pm(r[f'{cap}_mean'], r[f'{cap}_ci95'])} | "
                     f"{_pm(r[f'{rep}_mean'], r[f'{rep}_ci95'])} |")
    return lines


def _agreement_lines(agree: pd.DataFrame) -> list[str]:
    """The summary's section of capture-derived against reported SCTs per run."""
    lines = ["", "## Packet level: capture-derived vs reported SCT per run", "",
             "| experiment | run | stages | median abs diff (s) | max abs diff (s) | max rel diff |",
             "|---|---|---|---|---|---|"]
    for _, r in agree.iterrows():
        lines.append(f"| {r['experiment']} | {Path(r['run_dir']).name} | {int(r['stages'])} | "
                     f"{r['abs_diff_median_s']:.4f} | {r['abs_diff_max_s']:.4f} | "
                     f"{r['rel_diff_max'] * 100:.1f}% |")
    return lines


def _reaction_lines(react: pd.DataFrame, iso: pd.DataFrame, latency_shown: bool) -> list[str]:
    """The summary's section of each run's priority isolation, with its class latency
    unless the summary already has it (``latency_shown``); empty without either."""
    iso_of = {r["run_dir"]: r["lower_share_per_class"] for _, r in iso.iterrows()} \
        if not iso.empty else {}

    def share_cell(run_dir) -> str:
        share = iso_of.get(run_dir)
        return "-" if share is None or (isinstance(share, float) and np.isnan(share)) \
            else f"{share:.4f}"

    share_text = ("Lower-class share: bytes the lower classes sent per class while a higher "
                  "class was queued on the port (strict priority predicts about the share "
                  "each class is guaranteed, `MIN_SHARE` of `emulation/mininet/qos.py`; '-': "
                  "a run without priority classes).")
    lines: list[str] = []
    if latency_shown and not iso.empty:
        lines += ["", "## Packet level: priority isolation per run", "",
                  share_text + " Each run's class latency (scheduler reaction) is in the "
                  "\"Scheduler reaction per run\" table of \"Packet level: reproduction of the "
                  "fluid twin\" above (`tables/scheduler_reaction.csv`).", "",
                  "| experiment | run | lower-class share |", "|---|---|---|"]
        for _, r in iso.iterrows():
            lines.append(f"| {r['experiment']} | {Path(r['run_dir']).name} | "
                         f"{share_cell(r['run_dir'])} |")
    elif not latency_shown and (not react.empty or not iso.empty):
        lines += ["", "## Packet level: scheduler reaction and priority isolation per run", "",
                  "Class latency: coflow release -> its class set on its senders' sockets "
                  "(wall-clock ms). " + share_text, "",
                  "| experiment | run | latency median (ms) | p95 (ms) | max (ms) | lower-class share |",
                  "|---|---|---|---|---|---|"]
        for _, r in react.iterrows():
            lines.append(f"| {r['experiment']} | {Path(r['run_dir']).name} | {r['median_ms']:.1f} | "
                         f"{r['p95_ms']:.1f} | {r['max_ms']:.1f} | {share_cell(r['run_dir'])} |")
    return lines


def _reader_lines(reader: pd.DataFrame) -> list[str]:
    """The summary's sentence on the capture reader's speed (``reader_totals``)."""
    tot = reader_totals(reader)
    big = tot["largest"]
    tied = reader.set_index("run").loc[tot["tied"], "read_wall_s"]
    tie = ("; tied with " + ", ".join(f"`{r}` ({w:.2f} s)" for r, w in tied.items())
           if len(tied) else "")
    return ["", f"Capture reader: {tot['packets']:,} packets in "
            f"{tot['read_wall_s']:.2f} s ({tot['packets_per_s']:,.0f} packets/s); the "
            f"largest run (most packets; a tie goes to the run whose reader took "
            f"longest) `{big['run']}`: {int(big['packets']):,} packets in "
            f"{big['read_wall_s']:.2f} s of its {big['run_wall_s']:.0f} s wall time{tie} "
            "(`tables/capture_reader.csv`)."]


def _pm(mean: float, ci: float, fmt: str = ".3f") -> str:
    """``mean ± ci``, or the mean alone when there is no interval (one run)."""
    if pd.isna(mean):
        return "-"
    return f"{mean:{fmt}}" + ("" if pd.isna(ci) else f" ± {ci:{fmt}}")


__all__ = ["capture_pairs", "capture_agreement", "packet_level_table",
           "scheduler_reaction", "isolation", "capture_reader", "reader_totals",
           "write_packet_tables"]
