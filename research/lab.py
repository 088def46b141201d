"""Research harness behind docs/beamer.md: run candidate orderings on the training
scenarios (fluid, K = 8) and keep per-run and per-stage results as JSON.

Training scenarios are congested Hyperband workloads (8 apps, R = 9, eta = 3, 5 iterations
per unit, VGG-16 / ResNet-50 / BERT-base, 2/4/8-GPU rings, 16 hosts at 10 Gbit/s, apps
1 s apart) and variants of it, on **training seeds 1-3 only**. The suite's congestion
family (experiments/pinned_hosts/cong_*.toml) uses other sizes and seeds 11-13, never seen here.
"""
from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from emulation.fluid.simulator import FluidSimulator  # noqa: E402
from emulation.topology import TopologyConfig, build_topology  # noqa: E402
from workloads.config import build  # noqa: E402
from workloads.generator import WorkloadConfig, generate  # noqa: E402

BASE = dict(num_apps=8, arrival_rate_per_s=1.0, algorithm="hyperband", max_resource=9, eta=3,
            iterations_per_unit=5, models={"vgg16": 1.0, "resnet50": 1.0, "bert_base": 1.0},
            gpu_mix={"2": 1.0, "4": 1.0, "8": 1.0}, num_hosts=16)
SCENARIOS = {  # name -> (workload overrides, topology overrides)
    "base": ({}, {}),
    "ps": ({"sync_pattern": "ps", "gpu_mix": {"2": 1.0, "4": 1.0}}, {}),
    "slow": ({"arrival_rate_per_s": 0.1}, {}),
    "tiresias": ({"gpu_mix": {"1": 30.0, "2": 10.0, "4": 10.0, "8": 10.0}}, {}),
    "ls2": ({}, {"kind": "leaf_spine", "hosts_per_leaf": 4, "num_spines": 2,
                 "oversubscription": 2.0}),
    "rate25": ({}, {"link_rate_bps": 25e9}),
    # tuner regimes (random search, ASHA, chained SHA, mixed tenants): 8 apps of the base
    # mix, 1 s apart unless "burst" (100/s)
    "rs8": ({"algorithm": "random", "random_num_trials": 8, "random_budget": 1.0}, {}),
    "rs4": ({"algorithm": "random", "random_num_trials": 4, "random_budget": 1.0}, {}),
    "rs8burst": ({"algorithm": "random", "random_num_trials": 8, "random_budget": 1.0,
                  "arrival_rate_per_s": 100.0}, {}),
    "rs4long": ({"algorithm": "random", "random_num_trials": 4, "random_budget": 3.0}, {}),
    "asha": ({"algorithm": "asha", "asha_num_trials": 9, "eta": 9}, {}),
    "asha3": ({"algorithm": "asha", "asha_num_trials": 9, "eta": 3}, {}),
    "sha": ({"algorithm": "sha", "sha_num_configs": 9, "eta": 3}, {}),
    "mix": ({"num_apps": 16, "algorithm": "mix", "tenants": [
        {"algorithm": "random", "random_num_trials": 8, "random_budget": 1.0},
        {"algorithm": "sha", "sha_num_configs": 9, "eta": 3}]}, {}),
    "mix4": ({"num_apps": 12, "algorithm": "mix", "tenants": [
        {"algorithm": "random", "random_num_trials": 4, "random_budget": 3.0},
        {"algorithm": "sha", "sha_num_configs": 9, "eta": 3},
        {"algorithm": "asha", "asha_num_trials": 9, "eta": 3},
        {"algorithm": "hyperband"}]}, {}),
    "asha4ps": ({"algorithm": "asha", "asha_num_trials": 9, "eta": 4, "sync_pattern": "ps",
                 "gpu_mix": {"2": 1.0, "4": 1.0}}, {}),
    "asha4i2": ({"algorithm": "asha", "asha_num_trials": 9, "eta": 4, "iterations_per_unit": 2},
                {}),
    "rs8ps": ({"algorithm": "random", "random_num_trials": 8, "random_budget": 1.0,
               "sync_pattern": "ps", "gpu_mix": {"2": 1.0, "4": 1.0}}, {}),
}
REGIMES = ["rs8", "rs4", "rs8burst", "rs4long", "rs8ps", "asha", "asha3", "asha4i2", "asha4ps",
           "sha", "base", "ps", "mix", "mix4"]
TRAINING_SEEDS = (1, 2, 3)


def make(scenario: str, seed: int):
    """(trace, topology) of one training scenario and seed."""
    w, t = SCENARIOS[scenario]
    trace = generate(build(WorkloadConfig, {**BASE, **w, "seed": seed}, "workload"))
    topo = build_topology(build(TopologyConfig, {"link_rate_bps": 10e9, **t}, "topology"),
                          trace.hosts)
    return trace, topo


def run_one(task: tuple[str, int, str, dict]) -> dict:
    """One fluid run; ``params`` may ask for trace-derived inputs (``down``, ``dl``)."""
    scenario, seed, policy, params = task
    import variants
    trace, topo = make(scenario, seed)
    label = policy + json.dumps(params, sort_keys=True).replace("{}", "")
    params = dict(params)
    if "down" in params:
        params["downstream"] = variants.downstream_time(trace, topo, params.pop("down"))
    chain = params.pop("chain", False)
    if chain:
        params["chained"] = variants.chained_stages(trace, asha=chain == "asha")
    if params.pop("single", False):
        params["single"] = frozenset(s.stage_id for s in trace.stages() if len(s.jobs) == 1)
    if params.pop("dl", False):
        params["downloads"] = variants.downstream_loads(trace, topo)
    t0 = time.time()
    rec = FluidSimulator(trace, topo, variants.make(policy, **params)).run()
    sct = np.array([s["sct_s"] for s in rec.stages])
    ends: dict[str, float] = {}
    for s in rec.stages:
        ends[s["app_id"]] = max(ends.get(s["app_id"], 0.0), s["end_s"])
    arrival = {a.app_id: a.arrival_s for a in trace.apps}
    return {"scen": scenario, "seed": seed, "policy": label, "avg": float(sct.mean()),
            "p99": float(np.percentile(sct, 99)), "max": float(sct.max()),
            "act": float(np.mean([e - arrival[a] for a, e in ends.items()])),
            "wall": time.time() - t0, "stages": {s["stage_id"]: s["sct_s"] for s in rec.stages}}


def grid(policies, scenarios, seeds=TRAINING_SEEDS, jobs: int = 2) -> list[dict]:
    """Every (scenario, seed, (policy, params)) combination, ``jobs`` processes."""
    tasks = [(sc, sd, p, prm) for sc in scenarios for sd in seeds for (p, prm) in policies]
    with ProcessPoolExecutor(jobs) as ex:
        return list(ex.map(run_one, tasks))
