"""The fluid model's error against the packet level on the validation set: the
packet-level runs of the ``validation-*`` experiments (consecutive seeds fixed before any
run), each with its ideal fluid twin (``twin/``) and, where its emulated setting is
calibrated, its packet-aware twin (``twin_packet/``, ``emulation/packet_model.py``).

Owns the per-run table (``error_runs``), the per-policy errors (``policy_errors``), the
pairwise ratio errors (``pair_errors``), ``beamer``'s mean ratios per experiment
(``experiment_ratios``), the targets (``error_targets``), the two figures and the
summary section (``fluid_error_section``). Errors are relative:
twin avg SCT / emulated avg SCT - 1 (> 0: the model predicts slower than the emulation).
"""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.load import mininet_runs, note_written, write_table
from emulation import store
from analysis.policies import policy_order

VALIDATION_PREFIX = "validation-"
MODELS = (("ideal", "twin"), ("packet-aware", "twin_packet"))  # (label, twin directory)
SEPARATION = 0.10  # a pair the model separates by this much (slower / faster - 1)
TARGETS = {"median": 0.03, "p90": 0.08, "beamer_sincronia_mae": 0.02, "order": 0.90}


def _avg_sct(run_dir: Path, sub: str) -> float:
    p = run_dir / sub / "run.json"
    return float(store.read_json(p)["avg_sct_s"]) if store.has(p) else np.nan


def error_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per packet-level run of the validation set: its trace (experiment, seed),
    policy, emulated avg SCT and each model's twin avg SCT and relative error."""
    rows = []
    m = mininet_runs(runs)
    m = m[m["experiment"].str.startswith(VALIDATION_PREFIX)]
    for _, r in m.iterrows():
        d = Path(r["run_dir"])
        row = {"experiment": r["experiment"], "workload_seed": int(r["workload_seed"]),
               "repetition": int(r.get("repetition", 0)), "policy": r["policy"],
               "emulated_avg_sct_s": float(r["avg_sct_s"])}
        for label, sub in MODELS:
            twin = _avg_sct(d, sub)
            row[f"{label}_avg_sct_s"] = twin
            row[f"{label}_error"] = twin / row["emulated_avg_sct_s"] - 1.0
        rows.append(row)
    return pd.DataFrame(rows)


def policy_errors(er: pd.DataFrame) -> pd.DataFrame:
    """Per policy and model: median, p90 and max of |error| over the runs, and the mean
    signed error."""
    rows = []
    for pol in policy_order(er["policy"]):
        g = er[er["policy"] == pol]
        for label, _ in MODELS:
            e = g[f"{label}_error"].dropna()
            if e.empty:
                continue
            a = e.abs()
            rows.append({"policy": pol, "model": label, "runs": len(e),
                         "median_abs_error": float(a.median()),
                         "p90_abs_error": float(a.quantile(0.9)),
                         "max_abs_error": float(a.max()), "mean_error": float(e.mean())})
    return pd.DataFrame(rows)


def pair_errors(er: pd.DataFrame) -> pd.DataFrame:
    """Per trace (experiment, seed, repetition) and pair of policies a < b (registry
    order): emulated avg SCT a / b, each model's, and the model's ratio minus the
    emulated one."""
    rows = []
    for (exp, seed, rep), g in er.groupby(["experiment", "workload_seed", "repetition"]):
        g = g.set_index("policy")
        pols = [p for p in policy_order(g.index)]
        for a, b in itertools.combinations(pols, 2):
            row = {"experiment": exp, "workload_seed": seed, "repetition": rep,
                   "policy": a, "vs": b,
                   "emulated_ratio": g.at[a, "emulated_avg_sct_s"] / g.at[b, "emulated_avg_sct_s"]}
            for label, _ in MODELS:
                ratio = g.at[a, f"{label}_avg_sct_s"] / g.at[b, f"{label}_avg_sct_s"]
                row[f"{label}_ratio"] = ratio
                row[f"{label}_ratio_error"] = ratio - row["emulated_ratio"]
            rows.append(row)
    return pd.DataFrame(rows)


def pair_summary(pe: pd.DataFrame) -> pd.DataFrame:
    """Per pair and model: median, p90 and max of |model ratio - emulated ratio| over the
    traces, and the mean signed difference."""
    rows = []
    for (a, b), g in pe.groupby(["policy", "vs"], sort=False):
        for label, _ in MODELS:
            e = g[f"{label}_ratio_error"].dropna()
            if e.empty:
                continue
            rows.append({"policy": a, "vs": b, "model": label, "traces": len(e),
                         "median_abs": float(e.abs().median()),
                         "p90_abs": float(e.abs().quantile(0.9)),
                         "max_abs": float(e.abs().max()), "mean": float(e.mean())})
    return pd.DataFrame(rows)


def experiment_ratios(pe: pd.DataFrame, a: str = "beamer") -> pd.DataFrame:
    """Per validation experiment and policy b: the mean over its traces of a / b, emulated
    and in each model (what the packet level says of a comparison, beside the models)."""
    m = pe[pe["policy"] == a]
    cols = ["emulated_ratio"] + [f"{lab}_ratio" for lab, _ in MODELS]
    out = m.groupby(["experiment", "vs"], sort=False)[cols].agg(["mean", "count"])
    rows = []
    for (exp, vs), r in out.iterrows():
        rows.append({"experiment": exp, "policy": a, "vs": vs,
                     "traces": int(r[("emulated_ratio", "count")]),
                     **{c: float(r[(c, "mean")]) for c in cols}})
    return pd.DataFrame(rows)


def order_kept(pe: pd.DataFrame, label: str, separation: float = SEPARATION
               ) -> tuple[int, int]:
    """(pairs the model separates by >= ``separation``, of those the emulation orders the
    same way)."""
    r = pe[f"{label}_ratio"]
    sep = pe[(r >= 1 + separation) | (r <= 1 / (1 + separation))]
    same = np.sign(np.log(sep[f"{label}_ratio"])) == np.sign(np.log(sep["emulated_ratio"]))
    return len(sep), int(same.sum())


def _pair_mae(pe: pd.DataFrame, label: str, a: str = "beamer", b: str = "sincronia") -> float:
    m = pe[((pe["policy"] == a) & (pe["vs"] == b))]
    e = m[f"{label}_ratio_error"].dropna()
    return float(e.abs().mean()) if len(e) else np.nan


def error_targets(pol: pd.DataFrame, pe: pd.DataFrame) -> pd.DataFrame:
    """Each model against the targets: the worst policy's median and p90 |error|, the mean
    absolute error of beamer / sincronia, and the share of separated pairs in order."""
    rows = []
    for label, _ in MODELS:
        p = pol[pol["model"] == label]
        if p.empty:
            continue
        n, same = order_kept(pe, label)
        rows.append({"model": label,
                     "worst_median_abs_error": float(p["median_abs_error"].max()),
                     "worst_p90_abs_error": float(p["p90_abs_error"].max()),
                     "beamer_sincronia_mae": _pair_mae(pe, label),
                     "separated_pairs": n, "in_emulated_order": same,
                     "order_share": same / n if n else np.nan})
    return pd.DataFrame(rows)


def scatter_figure(er: pd.DataFrame, out: Path) -> list[Path]:
    """Predicted vs emulated avg SCT, one panel per model, one colour per policy, y = x."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns
    labels = [lab for lab, _ in MODELS if er[f"{lab}_avg_sct_s"].notna().any()]
    fig, axes = plt.subplots(1, len(labels), figsize=(5 * len(labels), 4.6), squeeze=False)
    lo = min(er["emulated_avg_sct_s"].min(), *(er[f"{lab}_avg_sct_s"].min() for lab in labels))
    hi = max(er["emulated_avg_sct_s"].max(), *(er[f"{lab}_avg_sct_s"].max() for lab in labels))
    for ax, lab in zip(axes[0], labels):
        sns.scatterplot(data=er, x="emulated_avg_sct_s", y=f"{lab}_avg_sct_s", hue="policy",
                        hue_order=policy_order(er["policy"]), style="experiment", ax=ax, s=28)
        ax.plot([lo, hi], [lo, hi], color="grey", lw=1, zorder=0)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("emulated avg SCT (trace s)")
        ax.set_ylabel(f"{lab} fluid model avg SCT (trace s)")
        ax.set_title(f"{lab} fluid model vs packet level")
        ax.legend(fontsize=6)
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    paths = [note_written(out / "fluid_error_scatter.png")]
    fig.savefig(paths[0], dpi=130)
    write_table(er, out / "fluid_error_scatter.csv")  # the figure's data beside it
    plt.close(fig)
    return paths


def pair_figure(pe: pd.DataFrame, out: Path) -> list[Path]:
    """The pairwise ratio errors (model ratio - emulated ratio), per pair and model."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns
    long = pd.concat([pe.assign(model=lab, error=pe[f"{lab}_ratio_error"])
                      for lab, _ in MODELS], ignore_index=True).dropna(subset=["error"])
    long["pair"] = long["policy"] + " / " + long["vs"]
    fig, ax = plt.subplots(figsize=(9, 4.6))
    sns.boxplot(data=long, x="pair", y="error", hue="model", ax=ax, fliersize=2)
    ax.axhline(0, color="grey", lw=1)
    ax.set_ylabel("model ratio - emulated ratio")
    ax.set_xlabel("")
    ax.tick_params(axis="x", rotation=40, labelsize=7)
    ax.set_title("Pairwise avg SCT ratio error over the validation traces")
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    paths = [note_written(out / "fluid_error_pairs.png")]
    fig.savefig(paths[0], dpi=130)
    write_table(long, out / "fluid_error_pairs.csv")  # the figure's data beside it
    plt.close(fig)
    return paths


def fluid_error_section(runs: pd.DataFrame, tables: Path, figs: Path
                        ) -> tuple[list[str], list[Path]]:
    """The summary's "Fluid model error" section and its figures (empty without the
    validation set)."""
    er = error_runs(runs)
    if er.empty:
        return [], []
    pol, pe = policy_errors(er), pair_errors(er)
    tg, ps, xr = error_targets(pol, pe), pair_summary(pe), experiment_ratios(pe)
    for df, name in ((er, "fluid_error_runs"), (pol, "fluid_error"),
                     (pe, "fluid_error_pairs"), (ps, "fluid_error_pair_summary"),
                     (tg, "fluid_error_targets"), (xr, "fluid_error_ratios")):
        write_table(df, tables / f"{name}.csv")
    paths = scatter_figure(er, figs) + pair_figure(pe, figs)
    traces = er.groupby("experiment")["workload_seed"].nunique()
    lines = ["", "## Fluid model error (validation set)", "",
             "Packet-level runs of consecutive seeds fixed before any run "
             f"({', '.join(f'{e} {n}' for e, n in traces.items())} traces; "
             f"{len(er)} runs), each against its ideal fluid twin and its packet-aware twin "
             "(costs calibrated on micro-benchmarks only, `data/packet_model.json`). Error: "
             "twin avg SCT / emulated - 1. `tables/fluid_error*.csv`, "
             "`figures/fluid_error_scatter.png`, `figures/fluid_error_pairs.png`.", "",
             "| policy | model | runs | median abs error | p90 | max | mean error |",
             "|---|---|---|---|---|---|---|"]
    for _, r in pol.iterrows():
        lines.append(f"| {r['policy']} | {r['model']} | {r['runs']} | "
                     f"{r['median_abs_error']:.1%} | {r['p90_abs_error']:.1%} | "
                     f"{r['max_abs_error']:.1%} | {r['mean_error']:+.1%} |")
    lines += ["", "Per pair of policies, model ratio - emulated ratio over the traces (abs):",
              "", "| pair | model | traces | median | p90 | max | mean (signed) |",
              "|---|---|---|---|---|---|---|"]
    for _, r in ps.iterrows():
        lines.append(f"| {r['policy']} / {r['vs']} | {r['model']} | {r['traces']} | "
                     f"{r['median_abs']:.3f} | {r['p90_abs']:.3f} | {r['max_abs']:.3f} | "
                     f"{r['mean']:+.3f} |")
    lines += ["", f"Criteria (packet-aware): every policy's median abs error <= "
              f"{TARGETS['median']:.0%} and p90 <= {TARGETS['p90']:.0%}; beamer / sincronia "
              f"mean abs ratio error <= {TARGETS['beamer_sincronia_mae']}; of the pairs a "
              f"model separates by >= {SEPARATION:.0%}, >= {TARGETS['order']:.0%} in the "
              "emulation's order.", "",
              "| model | worst median | worst p90 | beamer / sincronia MAE | "
              "separated pairs in emulated order |", "|---|---|---|---|---|"]
    for _, r in tg.iterrows():
        share = f"{r['in_emulated_order']}/{r['separated_pairs']}" + (
            f" ({r['order_share']:.0%})" if r["separated_pairs"] else "")
        lines.append(f"| {r['model']} | {r['worst_median_abs_error']:.1%} | "
                     f"{r['worst_p90_abs_error']:.1%} | {r['beamer_sincronia_mae']:.3f} | "
                     f"{share} |")
    lines += ["", "What the packet level says of `beamer`'s comparisons, per validation "
              "experiment (`tables/fluid_error_ratios.csv`): the mean over its traces of "
              "`beamer` / policy, emulated and in each fluid model.", "",
              "| experiment | beamer / | traces | emulated | "
              + " | ".join(lab for lab, _ in MODELS) + " |",
              "|---|---|---|---|" + "---|" * len(MODELS)]
    for _, r in xr.iterrows():
        lines.append(f"| {r['experiment']} | {r['vs']} | {r['traces']} | "
                     f"{r['emulated_ratio']:.3f} | "
                     + " | ".join(f"{r[f'{lab}_ratio']:.3f}" for lab, _ in MODELS) + " |")
    return lines, paths
