"""Headroom of the ordering problem on small congested HPO instances (fluid backend).

For each seeded instance: every registered policy's avg SCT, the best *static* priority
order found by search (all permutations of the apps, then a local search over orders of
all stages, started from the best app order), and the lower bound. A policy's distance
to the best static order found is the measured headroom; the best found is itself only
an upper bound on the optimum, and the lower bound a lower one.

    python scripts/headroom.py --seeds 1 2 3 4 5 6 --evals 120 -o results/headroom.csv
    python scripts/headroom.py --tuner asha --seeds 1 2 3 4 5 6 --evals 120   # ASHA instances

Static orders are evaluated with unlimited priority classes (K = 0: each stage its own
class), the policies with the default K = 8. Prints a table and writes one CSV row per
(instance, candidate).
"""
from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workloads.cli import ArgumentParser  # noqa: E402  (one-line usage errors)

from emulation.fluid.simulator import FluidSimulator  # noqa: E402
from emulation.scheduler import POLICIES, make_policy  # noqa: E402
from emulation.scheduler.base import Decision, Policy  # noqa: E402
from emulation.scheduler.lower_bound import lower_bound  # noqa: E402
from emulation.topology import big_switch  # noqa: E402
from workloads.config import build  # noqa: E402
from workloads.generator import WorkloadConfig, generate  # noqa: E402

INSTANCE = dict(num_apps=4, arrival_rate_per_s=1.0, algorithm="hyperband", max_resource=3,
                eta=3, iterations_per_unit=2,
                models={"vgg16": 1.0, "resnet50": 1.0, "bert_base": 1.0},
                gpu_mix={"2": 1.0, "4": 1.0}, num_hosts=8)
# --tuner: the instance's tuner and its parameters (small enough for the search)
TUNERS = {"hyperband": {},
          "asha": {"algorithm": "asha", "asha_num_trials": 4, "eta": 2},
          "random": {"algorithm": "random", "random_num_trials": 3, "random_budget": 2.0}}
LINK_RATE_BPS = 10e9


class StaticStageOrder(Policy):
    """Search-only policy: coflows by a fixed rank of their stage, then release order."""

    name = "static-order"

    def __init__(self, *, rank: dict[str, int]):
        self.rank = rank

    def decide(self, view):
        key = np.array([self.rank[view.stage_ids[s]] for s in view.coflow_stage], dtype=np.int64)
        order = np.lexsort((view.coflow_seq, key))
        return Decision(order=order, classes=key)


def avg_sct_s(trace, topo, policy, *, priority_classes: int) -> float:
    """Mean SCT of one fluid run."""
    rec = FluidSimulator(trace, topo, policy, priority_classes=priority_classes).run()
    return float(np.mean([s["sct_s"] for s in rec.stages]))


def search(trace, topo, *, evals: int, seed: int) -> tuple[float, str, int]:
    """Best static order: all app permutations, then random pair swaps of stage ranks."""
    apps = [[s.stage_id for s in a.stages] for a in trace.apps]
    n = 0

    def cost(stage_seq):
        nonlocal n
        n += 1
        return avg_sct_s(trace, topo, StaticStageOrder(rank={s: i for i, s in enumerate(stage_seq)}),
                         priority_classes=0)

    best, best_seq = np.inf, None
    for perm in itertools.permutations(range(len(apps))):
        seq = [s for a in perm for s in apps[a]]
        c = cost(seq)
        if c < best:
            best, best_seq = c, seq
    rng = np.random.default_rng(seed)
    while n < evals:
        i, j = rng.choice(len(best_seq), size=2, replace=False)
        seq = list(best_seq)
        seq[i], seq[j] = seq[j], seq[i]
        c = cost(seq)
        if c < best:
            best, best_seq = c, seq
    return best, " ".join(best_seq), n


def main(argv=None) -> int:
    ap = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6])
    ap.add_argument("--evals", type=int, default=150, help="static orders evaluated per instance")
    ap.add_argument("--policies", nargs="+", choices=sorted(POLICIES), default=sorted(POLICIES))
    ap.add_argument("--tuner", choices=sorted(TUNERS), default="hyperband",
                    help="the instances' tuner (default: hyperband, R = 3)")
    ap.add_argument("-o", "--output", type=Path, help="CSV file for the rows")
    args = ap.parse_args(argv)
    if args.evals < 1:
        ap.error("--evals must be >= 1")
    rows = []
    for seed in args.seeds:
        t0 = time.time()
        trace = generate(build(WorkloadConfig, {**INSTANCE, **TUNERS[args.tuner], "seed": seed},
                               "workload"))
        topo = big_switch(INSTANCE["num_hosts"], LINK_RATE_BPS)
        lb = lower_bound(trace, topo).avg_sct_s
        best, seq, n = search(trace, topo, evals=args.evals, seed=seed)
        res = {p: avg_sct_s(trace, topo, make_policy(p), priority_classes=8) for p in args.policies}
        best = min(best, *res.values())
        rows.append({"seed": seed, "lower_bound_avg_sct_s": lb, "best_static_avg_sct_s": best,
                     "orders_evaluated": n, "best_static_order": seq,
                     **{f"{p}_avg_sct_s": v for p, v in res.items()}})
        print(f"seed {seed}: LB {lb:.2f} s, best static {best:.2f} s ({n} orders, "
              f"{time.time() - t0:.0f} s); " +
              ", ".join(f"{p} {v / best:.3f}" for p, v in res.items()), flush=True)
    import pandas as pd
    df = pd.DataFrame(rows)
    print("\nmean ratio to the best static order found (lower is better; 1.0 = as good):")
    for p in args.policies:
        print(f"  {p:18s} {np.mean(df[f'{p}_avg_sct_s'] / df['best_static_avg_sct_s']):.3f}")
    print(f"  best static / LB   {np.mean(df['best_static_avg_sct_s'] / df['lower_bound_avg_sct_s']):.3f}")
    if args.output:
        df.to_csv(args.output, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
