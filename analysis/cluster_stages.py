"""Why an order wins or loses on a cluster with GPUs, from the per-stage and per-trial
records: per cluster experiment, placement, kind of stage and policy (the reference and
Sincronia), the mean SCT of its stages, the mean wait of their trials for GPUs
(``start_s - queued_s`` in ``trials.csv``) and the mean time a trial holds its GPUs
(``end_s - start_s``: computing and waiting on the network). A stage is ``followed`` when
another stage of its tuning job depends on it (a rung that feeds the next, an ASHA segment
whose trial may go on) and ``last`` when none does (a whole random-search job, a final
rung). Writes ``tables/cluster_stages.csv``."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from analysis.cluster import PLACEMENT, placed_runs
from analysis.load import write_table
from analysis.text import cell
from emulation import store

OTHER = "sincronia"  # compared with the reference; beamer when Sincronia is the reference


def other_of(reference: str) -> str:
    """The policy the reference is compared with here."""
    return OTHER if reference != OTHER else "beamer"


def stage_kinds(trace: Path) -> dict[str, str]:
    """``followed`` or ``last`` per stage of a trace file (see the module)."""
    apps = json.loads(trace.read_text())["apps"]
    stages = [s for a in apps for s in a["stages"]]
    feeding = {d for s in stages for d in s["depends_on"]}
    return {s["stage_id"]: "followed" if s["stage_id"] in feeding else "last" for s in stages}


def _run_stages(run: pd.Series, results: Path, kinds: dict[str, dict[str, str]]
                ) -> pd.DataFrame:
    """One row per stage of a run: its SCT, kind, and its trials' mean wait and hold
    (``kinds``: ``stage_kinds`` by trace path, filled as traces are read)."""
    d = Path(run["run_dir"])
    info = store.read_json(d / "run.json")
    st = store.read_table(d / "stages.csv")
    tr = store.read_table(d / "trials.csv")
    tr = tr.assign(wait_s=tr["start_s"] - tr["queued_s"], held_s=tr["end_s"] - tr["start_s"])
    per = tr.groupby("stage_id")[["wait_s", "held_s"]].mean()
    st = st.join(per, on="stage_id")
    path = info["trace_path"]
    if path not in kinds:
        kinds[path] = stage_kinds(results / path)
    st["kind"] = st["stage_id"].map(kinds[path])
    return st[["kind", "sct_s", "wait_s", "held_s"]]


def cluster_stage_table(runs: pd.DataFrame, results: Path, reference: str) -> pd.DataFrame:
    """One row per (experiment, placement, kind, policy), the reference's and
    ``other_of(reference)``'s runs only: ``stages``, ``sct_s``, ``trial_wait_s``,
    ``trial_held_s`` (means over the
    stages of every run of the group)."""
    placed = placed_runs(runs)
    if placed.empty:
        return pd.DataFrame()
    placed = placed[placed["policy"].isin([reference, other_of(reference)])]
    rows, kinds = [], {}
    for (exp, placement, policy), g in placed.groupby(["experiment", PLACEMENT, "policy"]):
        st = pd.concat([_run_stages(r, results, kinds) for _, r in g.iterrows()])
        for kind, k in st.groupby("kind"):
            rows.append({"experiment": exp, "placement": placement, "kind": kind,
                         "policy": policy, "stages": len(k), "sct_s": k["sct_s"].mean(),
                         "trial_wait_s": k["wait_s"].mean(),
                         "trial_held_s": k["held_s"].mean()})
    return pd.DataFrame(rows)


def cluster_stage_lines(runs: pd.DataFrame, results: Path, tables: Path,
                        reference: str) -> list[str]:
    """The summary's paragraph on the table (empty without cluster runs)."""
    t = cluster_stage_table(runs, results, reference)
    if t.empty:
        return []
    write_table(t, tables / "cluster_stages.csv")
    other = other_of(reference)
    pols = [p for p in (reference, other) if p in set(t["policy"])]
    wide = t.pivot_table(index=["experiment", "placement", "kind"], columns="policy",
                         values=["stages", "sct_s", "trial_wait_s", "trial_held_s"],
                         sort=False)
    cols = [(m, p) for m in ("sct_s", "trial_wait_s", "trial_held_s") for p in pols]
    lines = ["", f"**Per stage and trial** (`tables/cluster_stages.csv`): for `{reference}` "
             f"and `{other}`, per experiment, placement and kind of stage (`followed`: "
             "another stage of its tuning job depends on it; `last`: none does), the mean "
             "SCT of its stages, the mean wait of their trials for GPUs and the mean time "
             "a trial holds its GPUs (computing and waiting on the network), in seconds.",
             "", "| experiment | placement | kind | stages | " + " | ".join(
                 f"{m.removesuffix('_s').replace('_', ' ')} {p}" for m, p in cols) + " |",
             "|" + "---|" * (len(cols) + 4)]
    for (exp, placement, kind), r in wide.iterrows():
        lines.append(f"| {exp} | {placement} | {kind} | {int(r[('stages', pols[0])])} | "
                     + " | ".join(cell(r[c], ".1f") for c in cols) + " |")
    return lines
