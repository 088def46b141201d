"""The summary's section on fluid experiments whose trials a cluster with GPUs placed
during the run (run.json has ``gpu_busy_share``; packet-level runs have the paired
comparison).

``cluster_verdict``: per family (a ``gpus-<tuner>`` experiment is its tuner's family,
``gpus-cong-*`` the congestion family, ``gpus-per-host-*`` the GPUs-per-server family,
any other experiment its own) and placement, ``beamer-sbssi``'s and the reference's avg
SCT over each baseline's on the same trace: the mean of the per-run ratios and the
half-width of its 95% t-interval, every run one sample, a configuration that several
experiments of a family share (``same_run_as``) counted once.

``cluster_table``: per experiment, sweep point (its swept values other than placement and
sync pattern) and placement, the same ratios for the reference, its avg SCT, what the
cluster did in its runs (mean wait of a trial for GPUs, share of trials spanning several
servers, GPU-busy share) and the tuning jobs' completion: the reference's mean JCT over
Sincronia's on the same trace and its mean normalised JCT (JCT / the same job alone on
the empty cluster). ``tables/cluster_verdict.csv`` and ``tables/cluster_placement.csv``
hold the rows."""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from emulation.backends import PACKET_LEVEL
from analysis.load import write_table
from analysis.metrics import mean_ci95
from analysis.text import cell
from emulation import store

VERDICT_BASELINES = ("beamer-sbssi", "sincronia", "fair", "fifo_lm", "varys")
BASELINES = ("beamer", *VERDICT_BASELINES)  # the per-experiment table's, but the reference
DESIGNS = ("beamer-sbssi", "beamer")
PLACEMENT = "param:cluster.placement"
TUNERS = ("random", "asha", "sha", "hyperband", "mix")  # gpus-<tuner>: the tuner's family
FAMILY_PREFIXES = (("gpus-cong-", "congestion"), ("gpus-per-host-", "gpus per server"))
NOT_A_POINT = ("placement=", "sync_pattern=")  # what a row averages over
# an experiment named <name>-packet-aware runs <name>'s traces in the packet-aware fluid
# model: its family is <name>'s, its verdict a column beside the ideal model's
PACKET_AWARE = "-packet-aware"
MODELS = ("ideal", "packet-aware")
HEADLINE = (("beamer", "sincronia"), ("beamer-sbssi", "sincronia"), ("beamer", "fair"))


def fluid_model(experiment: str) -> str:
    """"packet-aware" for a ``*-packet-aware`` experiment, else "ideal"."""
    return "packet-aware" if experiment.endswith(PACKET_AWARE) else "ideal"


def family(experiment: str) -> str:
    """The verdict family of a cluster experiment (see the module)."""
    experiment = experiment.removesuffix(PACKET_AWARE)
    for prefix, name in FAMILY_PREFIXES:
        if experiment.startswith(prefix):
            return name
    tuner = experiment.removeprefix("gpus-")
    return tuner if tuner in TUNERS else experiment


def point(scenario: str) -> str:
    """A scenario's swept values other than placement and sync pattern ("-" if none)."""
    parts = [p for p in str(scenario).split(",") if not p.startswith(NOT_A_POINT)]
    return ",".join(parts) or "-"


def _placement(run: pd.Series) -> str:
    """The placement a run used: its swept value, else its run.json's cluster."""
    swept = run.get(PLACEMENT)
    if isinstance(swept, str):
        return swept
    return store.read_json(Path(run["run_dir"]) / "run.json")["cluster"]["placement"]


def placed_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The fluid runs a cluster placed, with their placement, point and family."""
    if "gpu_busy_share" not in runs:
        return pd.DataFrame()
    fluid = ~runs["backend"].isin(PACKET_LEVEL) if "backend" in runs else True
    placed = runs[runs["gpu_busy_share"].notna() & fluid].copy()
    if placed.empty:
        return placed
    placed[PLACEMENT] = [_placement(r) for _, r in placed.iterrows()]
    placed["point"] = placed["scenario"].map(point)
    placed["family"] = placed["experiment"].map(family)
    placed["fluid_model"] = placed["experiment"].map(fluid_model)
    return placed


def _wide(g: pd.DataFrame, values: str) -> pd.DataFrame:
    """``values`` per trace (experiment, scenario, seed) and policy; ``source``: the
    records the trace's runs are, without the policy (the same for a configuration
    several experiments share)."""
    keys = ["experiment", "scenario", "workload_seed"]
    wide = g.pivot_table(index=keys, columns="policy", values=values)
    src = g.drop_duplicates(keys).set_index(keys)["run_dir"].map(
        lambda d: re.sub(r"(^|,)policy=[^,]*", "", str(d)))
    return wide.assign(source=src.reindex(wide.index))


def cluster_verdict(runs: pd.DataFrame, model: str = "ideal") -> pd.DataFrame:
    """One row per (family, placement, design, baseline) of the runs of fluid model
    ``model``: ``ratio_mean``, ``ci95``, ``n``."""
    placed = placed_runs(runs)
    rows = []
    if not placed.empty:
        placed = placed[placed["fluid_model"] == model]
    if placed.empty:
        return pd.DataFrame(rows)
    for (fam, placement), g in placed.groupby(["family", PLACEMENT], sort=False):
        wide = _wide(g, "avg_sct_s").drop_duplicates("source")
        for design in (d for d in DESIGNS if d in wide):
            for b in (b for b in VERDICT_BASELINES if b in wide and b != design):
                ratio = (wide[design] / wide[b]).dropna().to_numpy()
                m, h = mean_ci95(ratio)
                rows.append({"family": fam, "placement": placement, "design": design,
                             "baseline": b, "ratio_mean": m, "ci95": h, "n": len(ratio)})
    t = pd.DataFrame(rows)
    order = {f: i for i, f in enumerate(TUNERS)}
    return t.assign(_o=t["family"].map(lambda f: order.get(f, len(order)))).sort_values(
        ["_o", "family", "placement"], kind="stable").drop(columns="_o").reset_index(drop=True)


def _jct(g: pd.DataFrame, reference: str) -> dict:
    """The reference's JCT over Sincronia's (mean, ci95) and its mean normalised JCT."""
    if "avg_jct_s" not in g:
        return {}
    jct = g.pivot_table(index=["scenario", "workload_seed"], columns="policy",
                        values="avg_jct_s")
    row = {"normalised_jct": g.loc[g["policy"] == reference, "avg_normalised_jct"].mean()}
    if "sincronia" in jct and reference != "sincronia":
        row["jct / sincronia"], row["jct / sincronia ci95"] = mean_ci95(
            (jct[reference] / jct["sincronia"]).dropna().to_numpy())
    return row


def cluster_table(runs: pd.DataFrame, reference: str) -> pd.DataFrame:
    """One row per (experiment, point, placement) of the runs a cluster placed."""
    placed = placed_runs(runs)
    rows = []
    if placed.empty:
        return pd.DataFrame(rows)
    for (exp, pt, placement), g in placed.groupby(["experiment", "point", PLACEMENT],
                                                  sort=False):
        wide = g.pivot_table(index=["scenario", "workload_seed"], columns="policy",
                             values="avg_sct_s")
        if reference not in wide:
            continue
        ref = g[g["policy"] == reference]
        row = {"experiment": exp, "point": pt, "placement": placement,
               "reference": reference, "runs": len(wide),
               f"{reference}_avg_sct_s": ref["avg_sct_s"].mean(),
               "trial_wait_mean_s": ref["trial_wait_mean_s"].mean(),
               "multi_host_trial_share": ref["multi_host_trial_share"].mean(),
               "gpu_busy_share": ref["gpu_busy_share"].mean()}
        for b in BASELINES:
            if b in wide and b != reference:
                row[f"/ {b}"], row[f"/ {b} ci95"] = mean_ci95(
                    (wide[reference] / wide[b]).dropna().to_numpy())
        rows.append({**row, **_jct(g, reference)})
    return pd.DataFrame(rows).sort_values(["experiment"], kind="stable").reset_index(drop=True)


def models_side_by_side(runs: pd.DataFrame) -> pd.DataFrame:
    """The ``HEADLINE`` ratios per family and placement in both fluid models, where the
    packet-aware model has runs: one row per (family, placement, design, baseline)."""
    ideal, packet = cluster_verdict(runs), cluster_verdict(runs, "packet-aware")
    if packet.empty:
        return pd.DataFrame()
    keys = ["family", "placement", "design", "baseline"]
    both = ideal.merge(packet, on=keys, suffixes=("_ideal", "_packet_aware"))
    pick = pd.Series([(d, b) in HEADLINE for d, b in zip(both["design"], both["baseline"])],
                     index=both.index, dtype=bool)
    return both[pick].reset_index(drop=True)


def _side_by_side_lines(t: pd.DataFrame) -> list[str]:
    cols = [(d, b) for d, b in HEADLINE if ((t["design"] == d) & (t["baseline"] == b)).any()]
    lines = ["", "| family | placement | " + " | ".join(
        f"{d} / {b} ideal | packet-aware" for d, b in cols) + " |",
        "|" + "---|" * (2 * len(cols) + 2)]
    idx = t.set_index(["family", "placement", "design", "baseline"])
    for (fam, placement), _ in t.groupby(["family", "placement"], sort=False):
        cells = []
        for d, b in cols:
            r = idx.loc[(fam, placement, d, b)] if (fam, placement, d, b) in idx.index else None
            for m in ("ideal", "packet_aware"):
                cells.append("" if r is None else f"{cell(r[f'ratio_mean_{m}'], '.3f')} ± "
                             f"{cell(r[f'ci95_{m}'], '.3f')}")
        lines.append(f"| {fam} | {placement} | " + " | ".join(cells) + " |")
    return lines


def _verdict_lines(v: pd.DataFrame, reference: str) -> list[str]:
    """The verdict table: a row per family and placement, a column per design and
    baseline."""
    cols = [(d, b) for d in DESIGNS for b in VERDICT_BASELINES
            if d != b and ((v["design"] == d) & (v["baseline"] == b)).any()]
    lines = ["", "| family | placement | runs | " + " | ".join(f"{d} / {b}" for d, b in cols)
             + " |", "|" + "---|" * (len(cols) + 3)]
    idx = v.set_index(["family", "placement", "design", "baseline"])
    for (fam, placement), g in v.groupby(["family", "placement"], sort=False):
        n = int(g.loc[g["design"] == reference, "n"].max()) if (g["design"] == reference).any() \
            else int(g["n"].max())
        cells = []
        for d, b in cols:
            r = idx.loc[(fam, placement, d, b)] if (fam, placement, d, b) in idx.index else None
            cells.append("" if r is None else
                         f"{cell(r['ratio_mean'], '.3f')} ± {cell(r['ci95'], '.3f')}")
        lines.append(f"| {fam} | {placement} | {n} | " + " | ".join(cells) + " |")
    return lines


def _table_lines(t: pd.DataFrame, reference: str) -> list[str]:
    """The per-experiment table, one row per experiment, point and placement."""
    ratios = [c for c in t.columns if c.startswith("/ ") and not c.endswith(" ci95")]
    lines = ["", "| experiment | point | placement | runs | " + " | ".join(
        f"{reference} {c}" for c in ratios)
        + f" | {reference} avg SCT (s) | trial wait (s) | multi-server trials | GPU-busy"
        f" | {reference} JCT / sincronia | {reference} JCT / alone |",
        "|" + "---|" * (len(ratios) + 10)]
    for _, r in t.iterrows():
        lines.append(f"| {r['experiment']} | {r['point']} | {r['placement']} | {int(r['runs'])} | "
                     + " | ".join(f"{cell(r[c], '.3f')} ± {cell(r[c + ' ci95'], '.3f')}"
                                  for c in ratios)
                     + f" | {cell(r[f'{reference}_avg_sct_s'], '.1f')}"
                     f" | {cell(r['trial_wait_mean_s'], '.1f')}"
                     f" | {cell(r['multi_host_trial_share'], '.2f')}"
                     f" | {cell(r['gpu_busy_share'], '.2f')}"
                     f" | {cell(r.get('jct / sincronia'), '.3f')}"
                     f" ± {cell(r.get('jct / sincronia ci95'), '.3f')}"
                     f" | {cell(r.get('normalised_jct'), '.2f')} |")
    return lines


def cluster_section(runs: pd.DataFrame, tables: Path, reference: str) -> list[str]:
    """The summary's lines (empty without such runs)."""
    t = cluster_table(runs, reference)
    if t.empty:
        return []
    v = cluster_verdict(runs)
    write_table(v, tables / "cluster_verdict.csv")
    write_table(t, tables / "cluster_placement.csv")
    both = models_side_by_side(runs)
    side = []
    if not both.empty:
        write_table(both, tables / "cluster_verdict_models.csv")
        side = (["", "**Both fluid models** (`tables/cluster_verdict_models.csv`): the "
                 "families run again in the packet-aware fluid model (`*-packet-aware` "
                 "experiments: each flow with the costs the 30 Mbit/s packet testbed adds, "
                 "`data/packet_model.json`), the same traces; the ideal model's ratios "
                 "beside them."] + _side_by_side_lines(both))
    return (["", "## A cluster with GPUs", "",
             "Trials placed during the run on servers with GPUs (the default suite). "
             "Ratios: a policy's avg SCT / another's on the same trace, the mean of the "
             "per-run ratios ± the half-width of its 95% t-interval, every run one sample "
             "(< 1: the first is faster); SCT includes the trials' waits for GPUs.", "",
             "**Verdict by family and placement** (`tables/cluster_verdict.csv`): a "
             "`gpus-<tuner>` experiment is its tuner's family (over its sync patterns), "
             "`gpus-cong-*` the congestion family and `gpus-per-host-*` the GPUs-per-server "
             "family (over their sweep points, a configuration two of their experiments "
             "share counted once)."]
            + _verdict_lines(v, reference) + side
            + ["", f"**Per experiment, sweep point and placement** "
               "(`tables/cluster_placement.csv`; over the sync patterns and seeds): "
               f"`{reference}`'s ratios, its avg SCT, and in its runs the mean wait of a "
               "trial for GPUs, the share of trials that span several servers (the only "
               "ones that use the network) and the GPU-busy share (the cluster's load); "
               "last, its mean tuning-job completion time (JCT) over Sincronia's on the "
               "same trace, and its mean JCT over the same job's alone on the empty "
               "cluster."]
            + _table_lines(t, reference))
