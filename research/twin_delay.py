"""How each policy's fluid twin moves when every coflow starts a little late and every
transfer runs a little slow, deterministically (no draws).

    .venv/bin/python research/twin_delay.py [--trace FILE] [--delay-ms 0 3 6]
        [--slowdown 0 0.05] [--out research/data/twin_delay.json]

Runs the fluid twin of a packet-level experiment (each policy with the reallocation its
twin uses, ``Policy.realloc_mode``) on its trace with every job's ``compute_s`` raised by
``delay`` (on a ring all-reduce trace, one coflow per iteration: each coflow released
``delay`` later, the link free for others meanwhile, as while a packet-level flow waits
for its class) and every flow's bytes x (1 + ``slowdown``) (headers, acknowledgements and
the lower classes' guarantees take that share at packet level). Prints avg SCT per
policy and pair (delay, slowdown) and its ratio to the unperturbed twin, and writes them
to ``--out``.
"""
from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workloads.cli import ArgumentParser  # noqa: E402  (one-line usage errors)

DEFAULT_TRACE = REPO / "results" / "testbed-random" / "traces" / "6746e967cc0c6507.json"
POLICIES = ("beamer", "beamer-sbssi", "sincronia", "fair", "varys")


def perturbed(data: dict, *, delay_s: float, slowdown: float) -> dict:
    """A copy of the trace JSON ``data``: every job's compute_s + ``delay_s``, every
    flow's size_bytes x (1 + ``slowdown``), rounded to whole bytes."""
    out = copy.deepcopy(data)
    for app in out["apps"]:
        for stage in app["stages"]:
            for job in stage["jobs"]:
                job["compute_s"] += delay_s
                for cf in job["coflows"]:
                    for f in cf["flows"]:
                        f["size_bytes"] = int(round(f["size_bytes"] * (1.0 + slowdown)))
    return out


def avg_sct_s(trace, policy: str) -> float:
    from emulation.fluid.simulator import FluidSimulator
    from emulation.scheduler import make_policy
    from emulation.topology import big_switch
    topo = big_switch(len(trace.hosts), 10e9, host_names=trace.hosts)
    pol = make_policy(policy)
    rec = FluidSimulator(trace, topo, pol, priority_classes=8,
                         realloc=pol.realloc_mode()).run()
    return float(np.mean([s["sct_s"] for s in rec.stages]))


def main() -> int:
    ap = ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    ap.add_argument("--delay-ms", type=float, nargs="+", default=[0.0, 3.0, 6.0])
    ap.add_argument("--slowdown", type=float, nargs="+", default=[0.0, 0.05])
    ap.add_argument("--policies", nargs="+", default=list(POLICIES))
    ap.add_argument("--out", type=Path, default=REPO / "research" / "data" / "twin_delay.json")
    args = ap.parse_args()
    from workloads import trace as trace_mod
    data = json.loads(args.trace.read_text())
    rows, base = [], {}
    print(f"{'policy':14s} {'delay ms':>8s} {'slowdown':>8s} {'avg SCT s':>9s} {'x base':>7s}")
    for policy in args.policies:
        for slowdown in args.slowdown:
            for delay_ms in args.delay_ms:
                trace = trace_mod.validate_dict(perturbed(data, delay_s=delay_ms / 1000.0,
                                                      slowdown=slowdown))
                v = avg_sct_s(trace, policy)
                if delay_ms == 0 and slowdown == 0:
                    base[policy] = v
                ratio = v / base[policy] if policy in base else None
                rows.append({"policy": policy, "delay_ms": delay_ms, "slowdown": slowdown,
                             "avg_sct_s": v, "ratio": ratio})
                print(f"{policy:14s} {delay_ms:8.1f} {slowdown:8.2f} {v:9.3f} "
                      + (f"{ratio:7.3f}" if ratio is not None else "      -"), flush=True)
    args.out.write_text(json.dumps({"trace": str(args.trace.relative_to(REPO))
                                    if args.trace.is_relative_to(REPO) else str(args.trace),
                                    "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
