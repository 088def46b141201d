"""The packet-aware fluid model's variants on a set of packet-level runs: each variant is
the calibrated costs (``data/packet_model.json``) with some of them left out, simulated
on the runs' own traces (same policy, same twin semantics) and compared with the
emulated avg SCT; prints per variant and policy the median and p90 |error|, beamer /
sincronia's mean absolute ratio error, and writes them to ``--out``.

    .venv/bin/python research/packet_model_variants.py EXPERIMENT [...] \\
        [--results results] [--out research/data/packet_model_variants.json]

The model's form (``emulation.packet_model.APPLIED``) was chosen on the committed
testbed runs (testbed-random, testbed-ring,
testbed-ps, testbed-gpus: looked at before), never on the validation set
(``validation-*`` experiments), which is evaluated once with the chosen form
(docs/testbed.md, "The fluid model's error").
"""
from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from emulation import store  # noqa: E402
from workloads.cli import ArgumentParser  # noqa: E402  (one-line usage errors)

# variant -> the costs it keeps (the others set to their ideal value)
VARIANTS = {
    "ideal": (),
    "latency": ("release_latency_s",),
    "latency+wait": ("release_latency_s", "wait_resume_s"),
    "latency+efficiency+wait (the model's form)": ("release_latency_s", "rate_efficiency",
                                                   "wait_resume_s"),
    "latency+preempt, any stop": ("release_latency_s", "preempt_resume_s", "stall_after_s=0"),
    "latency+wait+preempt, any stop": ("release_latency_s", "wait_resume_s", "preempt_resume_s",
                                       "stall_after_s=0"),
    "latency+wait+preempt, stops from the onset": ("release_latency_s", "wait_resume_s",
                                                   "preempt_resume_s", "stall_after_s"),
    "every cost": ("release_latency_s", "rate_efficiency", "wait_resume_s",
                   "preempt_resume_s", "stall_after_s"),
}


def variant_costs(full, keep: tuple[str, ...]):
    """The costs ``keep`` names taken from ``full``, the others ideal; ``name=value``
    sets one."""
    from emulation.packet_model import PacketCosts
    values = {}
    for k in keep:
        name, _, v = k.partition("=")
        values[name] = float(v) if v else getattr(full, name)
    return dataclasses.replace(PacketCosts(stall_after_s=0.0), **values)


def twin_avg_sct(run_dir: Path, costs) -> float:
    """The run's twin (its committed trace, policy and twin semantics) under ``costs``."""
    from emulation.fluid.simulator import FluidSimulator
    from emulation.scheduler import POLICIES, make_policy
    from emulation.topology import TopologyConfig, build_topology
    from runner.execute import prepare_trace
    from runner.verify import spec_from_record
    from workloads import coflow_benchmark
    from workloads.config import build
    spec = spec_from_record(run_dir)
    trace = coflow_benchmark.load_any(prepare_trace(spec, run_dir.parent.parent)[0])
    topo = build_topology(build(TopologyConfig, spec.topology, "topology"), trace.hosts)
    cfg = spec.experiment_cfg
    pol = make_policy(spec.policy)
    rec = FluidSimulator(trace, topo, pol, priority_classes=cfg["priority_classes"],
                         release_at_zero=cfg["release_at_zero"],
                         realloc=POLICIES[spec.policy].realloc_mode(),
                         packet_costs=costs).run()
    return float(np.mean([s["sct_s"] for s in rec.stages]))


def evaluate(results: Path, experiments: list[str]) -> pd.DataFrame:
    from emulation.packet_model import load_costs
    rows = []
    for exp in experiments:
        for d in [d for d in store.run_dirs(results) if d.parent.name == exp]:
            run = store.read_json(d / "run.json")
            cfg = store.read_json(d / "run_config.json")["experiment_cfg"]
            full = load_costs(rate_scale=cfg["rate_scale"], time_scale=cfg["time_scale"],
                              applied=None)
            if full is None:
                continue
            for name, keep in VARIANTS.items():
                twin = twin_avg_sct(d, variant_costs(full, keep))
                rows.append({"experiment": exp, "run": d.name, "policy": run["policy"],
                             "workload_seed": run["workload_seed"],
                             "repetition": run.get("repetition", 0), "variant": name,
                             "emulated": run["avg_sct_s"], "twin": twin,
                             "error": twin / run["avg_sct_s"] - 1})
            print(f"{exp}/{d.name}: done", flush=True)
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    out = []
    for (variant, pol), g in df.groupby(["variant", "policy"], sort=False):
        a = g["error"].abs()
        out.append({"variant": variant, "policy": pol, "runs": len(g),
                    "median_abs": a.median(), "p90_abs": a.quantile(0.9),
                    "mean": g["error"].mean()})
    for variant, g in df.groupby("variant", sort=False):
        a = g["error"].abs()
        out.append({"variant": variant, "policy": "(every run)", "runs": len(g),
                    "median_abs": a.median(), "p90_abs": a.quantile(0.9),
                    "mean": g["error"].mean(), "max_abs": a.max()})
    s = pd.DataFrame(out)
    bs = []
    for variant, g in df.groupby("variant", sort=False):
        w = g.pivot_table(index=["experiment", "workload_seed", "repetition"],
                          columns="policy", values=["emulated", "twin"])
        if ("emulated", "beamer") in w and ("emulated", "sincronia") in w:
            e = (w["twin"]["beamer"] / w["twin"]["sincronia"]
                 - w["emulated"]["beamer"] / w["emulated"]["sincronia"]).abs().dropna()
            bs.append({"variant": variant, "beamer_sincronia_mae": e.mean(), "traces": len(e)})
    return s.merge(pd.DataFrame(bs), on="variant", how="left") if bs else s


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("experiments", nargs="+")
    ap.add_argument("--results", type=Path, default=REPO / "results")
    ap.add_argument("--out", type=Path, default=REPO / "research" / "data" / "packet_model_variants.json")
    args = ap.parse_args(argv)
    if any(e.startswith("validation-") for e in args.experiments):
        ap.error("the validation set is not for choosing the model's form")
    df = evaluate(args.results, args.experiments)
    s = summary(df)
    with pd.option_context("display.width", 160, "display.max_rows", 200):
        print(s.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"experiments": args.experiments,
                                    "runs": df.to_dict(orient="records"),
                                    "summary": s.to_dict(orient="records")}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
